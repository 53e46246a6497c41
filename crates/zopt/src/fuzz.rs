//! `zopt fuzz`: differential fuzzing with programs from `zopt-progen`. Every generated
//! program goes through
//!
//! 1. conformance ([`crate::conformance`]) of every stage we implement, at each
//!    optimization level (0, 0x60, 0xE0, 0x20E0, 0x7FFE9F1F, 0x7FFEBFFF by default): our
//!    dump must be byte-identical to PHP's; a stage we do not implement at a level is
//!    counted as *not implemented*, never as identical. PHP compiles the program once per
//!    level with the debug bits of every stage checked there (`opcache.opt_debug_level` is
//!    a bit mask) and [`crate::stages::split_stages`] splits its output by stage; level 0's
//!    compilation is also the recording every level's dumps of ours start from. An output
//!    that does not split into the stages asked for is a failure, and so is an op_array
//!    only one of the two dumps has;
//! 2. differential execution ([`crate::exec_diff`]): the output and exit status under
//!    OPcache's optimizer, zopt's round trip, zopt's optimizer (at each level) and zopt's
//!    opcode cache must be those of PHP without OPcache; a difference of OPcache's own
//!    optimizer is PHP's, listed and not counted;
//! 3. the SSA verifier on every op_array the DFA pass builds SSA for, and the
//!    Cytron/Braun/PHP-style SSA crosscheck ([`crate::crosscheck`]) on every op_array.
//!
//! A failing program is reduced (delta debugging over the generator's statements, then
//! its expressions, keeping the failure) and written to the output directory with the
//! command that reproduces it. Panics of our code are failures too.

use crate::conformance::{self, Level};
use crate::corpus::load_recording;
use crate::exec_diff::{self, first_diff, Mode, PhpIni, Program as ExecProgram, RunOutput};
use crate::php::{CompileAs, Php};
use crate::stages::{our_dump, split_stages, BugReproductions};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use zend_ir::dump::debug_level;
use zend_ir::Opcode;
use zopt_progen::{EditKind, Edits};

/// The optimization levels checked by default.
pub const DEFAULT_LEVELS: [u32; 6] = [0, 0x60, 0xE0, 0x20E0, 0x7FFE_9F1F, 0x7FFE_BFFF];

/// The command line of `zopt fuzz` (besides PHP and the extension).
#[derive(clap::Args, Clone, Debug)]
pub struct FuzzArgs {
    /// First seed; program i is generated from seed S+i.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Programs to generate and check.
    #[arg(long, default_value_t = 100)]
    pub count: u64,
    /// Programs checked in parallel (default: every core).
    #[arg(long, short = 'j', default_value_t = 0)]
    pub jobs: usize,
    /// Comma-separated optimization levels (hex or decimal).
    #[arg(long, default_value = "0,0x60,0xE0,0x20E0,0x7FFE9F1F,0x7FFEBFFF")]
    pub levels: String,
    /// Comma-separated stages to compare (default: every stage; those we do not implement
    /// at a level are reported as such).
    #[arg(long)]
    pub stages: Option<String>,
    /// Where failing programs, their reductions and the summary go.
    #[arg(long, default_value = "fuzz-out")]
    pub out: PathBuf,
    /// Do not reduce failing programs.
    #[arg(long)]
    pub no_reduce: bool,
    /// At most this many failures are reduced (one per kind of failure).
    #[arg(long, default_value_t = 10)]
    pub max_reductions: usize,
    /// Seconds one PHP run may take.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Everything one fuzzing run needs.
#[derive(Clone, Debug)]
pub struct Options {
    pub php: Php,
    pub extension: PathBuf,
    pub seed: u64,
    pub count: u64,
    pub jobs: usize,
    pub levels: Vec<u32>,
    pub stages: Vec<Level>,
    pub out: PathBuf,
    pub reduce: bool,
    pub max_reductions: usize,
    pub timeout: Duration,
    pub generator: zopt_progen::Config,
    pub progress: bool,
}

impl Options {
    pub fn from_args(php: Php, args: &FuzzArgs) -> Result<Options> {
        let extension = php.extension()?.canonicalize()?;
        let levels = args
            .levels
            .split(',')
            .map(|l| {
                zend_ir::dump::parse_number(l)
                    .with_context(|| format!("{l:?} is not an optimization level"))
            })
            .collect::<Result<Vec<_>>>()?;
        let stages = match &args.stages {
            Some(s) => s
                .split(',')
                .map(|l| Level::parse(l.trim()))
                .collect::<Result<Vec<_>>>()?,
            None => all_stages(),
        };
        Ok(Options {
            php,
            extension,
            seed: args.seed,
            count: args.count,
            jobs: args.jobs,
            levels,
            stages,
            out: args.out.clone(),
            reduce: !args.no_reduce,
            max_reductions: args.max_reductions,
            timeout: Duration::from_secs(args.timeout),
            generator: zopt_progen::Config::default(),
            progress: !args.json,
        })
    }
}

/// Every stage PHP can dump.
pub fn all_stages() -> Vec<Level> {
    debug_level::NAMED
        .iter()
        .map(|&(name, bits)| Level {
            name: name.to_string(),
            bits,
        })
        .collect()
}

/// Whether PHP can print `stage` at `level` at all: each pass's dump is inside the pass
/// (`ZEND_DUMP_AFTER_PASS_N` only when pass N runs), the block pass's dumps need PASS_5,
/// the DFA dumps PASS_6 and SCCP's PASS_8. Where it cannot, PHP is not asked, and our
/// dump must be empty too.
pub fn php_may_print(stage_bits: u32, level: u32) -> bool {
    const PASS_5: u32 = 1 << 4;
    const PASS_6: u32 = 1 << 5;
    const PASS_8: u32 = 1 << 7;
    if stage_bits < debug_level::BEFORE_OPTIMIZER {
        return stage_bits & level != 0;
    }
    match stage_bits {
        debug_level::BEFORE_BLOCK_PASS
        | debug_level::AFTER_BLOCK_PASS
        | debug_level::BLOCK_PASS_VARS => level & PASS_5 != 0,
        debug_level::SCCP => level & PASS_8 != 0,
        debug_level::BEFORE_OPTIMIZER | debug_level::AFTER_OPTIMIZER => true,
        _ => level & PASS_6 != 0,
    }
}

/// What went wrong, as the reducer must keep it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FailureKind {
    /// Our dump of a stage differs from PHP's.
    Conformance { level: u32, stage: String },
    /// Output or exit status differs from PHP without OPcache.
    Exec { mode: String, level: u32 },
    /// A mode could not run (e.g. the warm cache run was not served, or differed from
    /// the cold one).
    ExecError { mode: String, level: u32 },
    /// The SSA verifier rejected PHP-style SSA.
    Verify,
    /// Cytron, Braun and PHP-style SSA disagree.
    Crosscheck,
    /// PHP's output of several stages at once did not split into the stages asked for (a
    /// chunk of no known stage, or of a stage not asked for).
    Split { level: u32 },
    /// Our code panicked.
    Panic { during: String },
    /// The extension could not record the program, or we could not read the recording.
    Record,
}

impl FailureKind {
    /// A file-name-friendly name.
    pub fn slug(&self) -> String {
        match self {
            FailureKind::Conformance { level, stage } => format!("conformance-{stage}-{level:#x}"),
            FailureKind::Exec { mode, level } => format!("exec-{mode}-{level:#x}"),
            FailureKind::ExecError { mode, level } => format!("exec-error-{mode}-{level:#x}"),
            FailureKind::Split { level } => format!("split-{level:#x}"),
            FailureKind::Verify => "verify".into(),
            FailureKind::Crosscheck => "crosscheck".into(),
            FailureKind::Panic { during } => format!(
                "panic-{}",
                during
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect::<String>()
            ),
            FailureKind::Record => "record".into(),
        }
    }

    /// The command that shows the failure on FILE, for the PHP `php` describes (its
    /// configuration and how it compiles).
    pub fn reproduce(&self, file: &str, php: &Php) -> String {
        let ini = ini_flag(php);
        let target = target_flags(php);
        match self {
            FailureKind::Conformance { level, stage } => format!(
                "zopt conformance{target} --optimization-level {level:#x} --levels {stage} {file}"
            ),
            FailureKind::Exec { level, .. } | FailureKind::ExecError { level, .. } => {
                format!("zopt exec-diff{ini} --optimization-level {level:#x} {file}")
            }
            FailureKind::Split { level } => {
                // Exactly what the fuzzer ran, every stage's bit set.
                match php.compile_command(Path::new(file), *level, 0x3fff_ffff, None) {
                    Ok(cmd) => shell_words(&cmd),
                    Err(e) => format!("({e:#})"),
                }
            }
            FailureKind::Verify => format!(
                "zopt conformance{target} --optimization-level 0x60 --levels ssa {file}   # debug build: the verifier runs and panics"
            ),
            FailureKind::Crosscheck => format!("zopt crosscheck {file}"),
            FailureKind::Panic { .. } | FailureKind::Record => format!(
                "zopt conformance{target} --optimization-level 0x60 --levels before,cfg,dom,liveness,phi,ssa,types {file}; zopt crosscheck {file}"
            ),
        }
    }
}

/// `cmd` as a shell command line: its words, each quoted unless it is plain.
fn shell_words(cmd: &std::process::Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|w| {
            let w = w.to_string_lossy();
            if !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
            {
                w.into_owned()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `--php-ini` option for `php`'s configuration (none for the default, `-n`).
fn ini_flag(php: &Php) -> &'static str {
    match php.ini {
        PhpIni::None => "",
        PhpIni::Default => " --php-ini default",
    }
}

/// The options of `zopt fuzz` and `zopt conformance` that select the PHP `php` describes.
fn target_flags(php: &Php) -> String {
    match php.compile_as {
        CompileAs::Include => ini_flag(php).to_string(),
        CompileAs::Run => format!("{} --compile-as run", ini_flag(php)),
    }
}

/// One failure of one program.
#[derive(Clone, Debug, Serialize)]
pub struct Failure {
    #[serde(flatten)]
    pub kind: FailureKind,
    pub detail: String,
}

/// Counts of one (level, stage).
#[derive(Clone, Debug, Default, Serialize)]
pub struct StageTally {
    pub implemented: bool,
    pub compared: usize,
    pub identical: usize,
    /// Not identical only where PHP 8.2's optimizer is wrong (see `conformance::Deviation`).
    pub deviating: usize,
}

/// What checking one program found.
#[derive(Debug, Default)]
struct Outcome {
    op_arrays: usize,
    opcodes: BTreeSet<u8>,
    stages: BTreeMap<(u32, String), StageTally>,
    exec_runs: usize,
    verified: usize,
    crosschecked: usize,
    failures: Vec<Failure>,
    /// Differences of PHP's own OPcache (listed, not counted).
    php_differences: Vec<Failure>,
    /// The program itself fails without OPcache (a generator bug).
    invalid: Option<String>,
}

/// A reduced failure written to the output directory.
#[derive(Clone, Debug, Serialize)]
pub struct Reduction {
    pub seed: u64,
    pub kind: FailureKind,
    pub detail: String,
    pub file: String,
    pub original_lines: usize,
    pub reduced_lines: usize,
    pub tests: usize,
    pub reproduce: String,
}

/// The result of a fuzzing run.
#[derive(Debug, Default, Serialize)]
pub struct Summary {
    /// The PHP configuration the programs compiled and ran under.
    pub php_ini: PhpIni,
    /// How PHP compiled them for the dumps compared.
    pub compile_as: CompileAs,
    pub first_seed: u64,
    pub programs: u64,
    pub invalid_programs: Vec<(u64, String)>,
    pub op_arrays: usize,
    pub seconds: f64,
    pub programs_per_minute: f64,
    /// (level, stage) → tally.
    pub stages: Vec<(String, String, StageTally)>,
    pub exec_runs: usize,
    pub verified_op_arrays: usize,
    pub crosschecked_op_arrays: usize,
    /// Failure kind → seeds.
    pub failures: BTreeMap<String, Vec<u64>>,
    pub failure_details: Vec<(u64, Failure)>,
    /// PHP's own OPcache differences (not counted as failures).
    pub php_differences: Vec<(u64, Failure)>,
    pub opcodes_reached: Vec<String>,
    pub opcodes_defined: usize,
    pub reductions: Vec<Reduction>,
}

impl Summary {
    pub fn failure_count(&self) -> usize {
        self.failure_details.len()
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// The program's file in a fresh directory (named after its seed, so that failures of
/// the same seed read alike in every report).
fn write_program(seed: u64, source: &str) -> Result<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let path = dir.path().join(format!("seed{seed}.php"));
    std::fs::write(&path, source)?;
    Ok((dir, path))
}

/// Which checks to run: all of them, or only the one a reduction keeps.
#[derive(Clone, Debug)]
enum Which {
    All,
    Only(FailureKind),
}

impl Which {
    fn conformance(&self, level: u32, stage: &str) -> bool {
        match self {
            Which::All => true,
            Which::Only(FailureKind::Conformance { level: l, stage: s }) => {
                *l == level && s == stage
            }
            Which::Only(FailureKind::Split { level: l }) => *l == level,
            Which::Only(FailureKind::Panic { during }) => during.starts_with("conformance"),
            _ => false,
        }
    }

    fn exec(&self, mode: Mode, level: u32) -> bool {
        match self {
            Which::All => true,
            Which::Only(FailureKind::Exec { mode: m, level: l })
            | Which::Only(FailureKind::ExecError { mode: m, level: l }) => {
                m == mode.name() && (*l == level || matches!(mode, Mode::Roundtrip | Mode::Cache))
            }
            _ => false,
        }
    }

    fn analyses(&self) -> bool {
        matches!(
            self,
            Which::All
                | Which::Only(FailureKind::Verify)
                | Which::Only(FailureKind::Crosscheck)
                | Which::Only(FailureKind::Record)
                | Which::Only(FailureKind::Panic { .. })
        )
    }
}

/// Checks one program.
fn check(opts: &Options, seed: u64, source: &str, which: &Which) -> Outcome {
    let mut outcome = Outcome::default();
    let (_dir, path) = match write_program(seed, source) {
        Ok(x) => x,
        Err(e) => {
            outcome.invalid = Some(format!("{e:#}"));
            return outcome;
        }
    };
    let exec_config = exec_diff::Config {
        php: opts.php.binary.clone(),
        extension: opts.extension.clone(),
        optimization_level: 0,
        timeout: opts.timeout,
        jobs: 1,
        jit: None,
    };
    let program = match ExecProgram::file(&path, format!("seed{seed}.php"), opts.php.ini) {
        Ok(p) => p,
        Err(e) => {
            outcome.invalid = Some(format!("{e:#}"));
            return outcome;
        }
    };
    // The reference run: a program PHP itself cannot run is the generator's failure.
    let reference = match exec_config.run(&program, Mode::Off) {
        Ok(r) => r,
        Err(e) => {
            outcome.invalid = Some(format!("cannot run PHP: {e:#}"));
            return outcome;
        }
    };
    outcome.exec_runs += 1;
    if reference.timed_out
        || reference.status != Some(0)
        || contains(&reference.stdout, b"Fatal error")
        || contains(&reference.stdout, b"Parse error")
    {
        let first = String::from_utf8_lossy(&reference.stdout)
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("")
            .to_string();
        outcome.invalid = Some(format!(
            "without OPcache: {:?}{}, {first}",
            reference.status,
            if reference.timed_out {
                " (timed out)"
            } else {
                ""
            }
        ));
        return outcome;
    }

    // The stages asked of PHP at each level: those it can print there (opt_debug_level is a
    // bit mask: one compilation per level prints them all, split by stage below).
    let asked = |level: u32| -> u32 {
        opts.stages
            .iter()
            .filter(|s| which.conformance(level, &s.name) && php_may_print(s.bits, level))
            .fold(0, |bits, s| bits | s.bits)
    };

    // Recording at level 0: op_arrays, opcodes, verifier and crosscheck, and our input at
    // every level (the extension records what the optimizer left, so only level 0 records
    // the script as compiled). The same compilation prints PHP's dumps of level 0.
    let record_dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            outcome.invalid = Some(format!("{e:#}"));
            return outcome;
        }
    };
    let level0_bits = if opts.levels.contains(&0) {
        asked(0)
    } else {
        0
    };
    let recorded = opts
        .php
        .compile(&path, 0, level0_bits, Some(record_dir.path()))
        .and_then(|c| {
            let recording = c.recording.context("no recording")?;
            Ok((load_recording(&recording)?, c.dump))
        });
    let (script, mut level0_dump) = match recorded {
        Ok((s, dump)) => (Some(s), Some(dump)),
        Err(e) => {
            outcome.failures.push(Failure {
                kind: FailureKind::Record,
                detail: format!("{e:#}"),
            });
            (None, None)
        }
    };
    if let Some(script) = &script {
        for op_array in script.op_arrays() {
            outcome.op_arrays += 1;
            outcome
                .opcodes
                .extend(op_array.opcodes.iter().map(|op| op.opcode.0));
        }
        if which.analyses() {
            analyses(script, seed, &mut outcome);
        }
    }

    // Conformance of every implemented stage at every level.
    let name = format!("seed{seed}.php");
    for &level in &opts.levels {
        let Some(script) = &script else { break };
        // Our dumps first: PHP is not asked for a stage we do not implement.
        let mut ours: Vec<(&Level, Vec<u8>)> = Vec::new();
        for stage in &opts.stages {
            if !which.conformance(level, &stage.name) {
                continue;
            }
            let php_prints = php_may_print(stage.bits, level);
            let implemented =
                match catch_unwind(AssertUnwindSafe(|| our_dump(script, stage.bits, level))) {
                    Ok(Ok(dump)) if !php_prints => {
                        if !dump.is_empty() {
                            outcome.failures.push(Failure {
                                kind: FailureKind::Conformance {
                                    level,
                                    stage: stage.name.clone(),
                                },
                                detail: format!(
                                    "PHP prints no {} dump at this level, ours has {} bytes",
                                    stage.name,
                                    dump.len()
                                ),
                            });
                        }
                        true
                    }
                    Ok(Ok(dump)) => {
                        ours.push((stage, dump));
                        true
                    }
                    Ok(Err(_)) => false,
                    Err(p) => {
                        outcome.failures.push(Failure {
                            kind: FailureKind::Panic {
                                during: format!("conformance {} {level:#x}", stage.name),
                            },
                            detail: panic_message(p.as_ref()),
                        });
                        false
                    }
                };
            outcome
                .stages
                .entry((level, stage.name.clone()))
                .or_default()
                .implemented = implemented;
        }
        if ours.is_empty() {
            continue;
        }
        // PHP's dumps of every stage at once. Level 0's came with the recording (which asked
        // for every stage PHP prints there; those we do not implement are left out below).
        let bits = if level == 0 && level0_bits != 0 {
            level0_bits
        } else {
            ours.iter().fold(0, |b, (s, _)| b | s.bits)
        };
        let level0 = if level == 0 { level0_dump.take() } else { None };
        let php_dump = match level0 {
            Some(dump) => dump,
            None => match opts.php.compile(&path, level, bits, None) {
                Ok(c) => c.dump,
                Err(e) => {
                    outcome.failures.push(Failure {
                        kind: FailureKind::Record,
                        detail: format!("{name} at {level:#x}: {e:#}"),
                    });
                    continue;
                }
            },
        };
        let mut php_stages = match split_stages(&php_dump) {
            Ok(stages) => stages,
            Err(e) => {
                outcome.failures.push(Failure {
                    kind: FailureKind::Split { level },
                    detail: format!("opt_debug_level {bits:#x}: {e}"),
                });
                continue;
            }
        };
        // A dump of a stage PHP was not asked for means the split went wrong.
        if let Some((&other, _)) = php_stages.iter().find(|(&b, _)| b & bits == 0) {
            outcome.failures.push(Failure {
                kind: FailureKind::Split { level },
                detail: format!(
                    "opt_debug_level {bits:#x}: a dump of {} ({other:#x}), which was not asked for",
                    debug_level::name(other).unwrap_or("?")
                ),
            });
            continue;
        }
        for (stage, our) in &ours {
            let php = php_stages.remove(&stage.bits).unwrap_or_default();
            let mut bugs = BugReproductions::new(script, stage.bits, level);
            let comparison = conformance::compare_dumps(&name, &php, our, &mut bugs);
            let tally = outcome
                .stages
                .entry((level, stage.name.clone()))
                .or_default();
            tally.compared += comparison.compared;
            tally.identical += comparison.identical;
            tally.deviating += comparison.deviations.len();
            if let Some(m) = comparison.mismatches.first() {
                outcome.failures.push(Failure {
                    kind: FailureKind::Conformance {
                        level,
                        stage: stage.name.clone(),
                    },
                    detail: format!(
                        "{} line {} ({} of {} op_arrays differ):\n    php:  {}\n    ours: {}",
                        m.function,
                        m.line,
                        comparison.mismatches.len(),
                        comparison.compared,
                        m.php,
                        m.ours
                    ),
                });
            }
        }
    }

    // Execution under every mode.
    let run = |mode: Mode, level: u32, outcome: &mut Outcome| -> Option<RunOutput> {
        let config = exec_diff::Config {
            optimization_level: level,
            ..exec_config.clone()
        };
        outcome.exec_runs += 1;
        match config.run(&program, mode) {
            Ok(out) => Some(out),
            Err(e) => {
                outcome.failures.push(Failure {
                    kind: FailureKind::ExecError {
                        mode: mode.name().into(),
                        level,
                    },
                    detail: format!("{e:#}"),
                });
                None
            }
        }
    };
    // A difference of a zopt mode is PHP's own when OPcache's output has it too and it is
    // not the optimizer's: the round trip (OPcache on, no optimizer) has it as well, as
    // OPcache's early binding of classes gives. An optimizer that reproduced a wrong-code bug
    // of PHP's would print what OPcache prints, and that is ours.
    let compare = |mode: Mode,
                   level: u32,
                   out: &RunOutput,
                   opcache: Option<&RunOutput>,
                   roundtrip_differs: &mut dyn FnMut(&mut Outcome) -> bool,
                   outcome: &mut Outcome| {
        if let Some(diff) = first_diff(&reference, out) {
            let failure = Failure {
                kind: FailureKind::Exec {
                    mode: mode.name().into(),
                    level,
                },
                detail: diff,
            };
            let same_as_opcache = opcache.is_some_and(|o| first_diff(o, out).is_none());
            let php_s = match mode {
                Mode::Opcache => true,
                Mode::Roundtrip => same_as_opcache,
                _ => same_as_opcache && roundtrip_differs(outcome),
            };
            if php_s {
                outcome.php_differences.push(failure);
            } else {
                outcome.failures.push(failure);
            }
        }
    };
    let first_level = opts.levels.first().copied().unwrap_or(0);
    let mut roundtrip: Option<Option<RunOutput>> = None;
    for (i, &level) in opts.levels.iter().enumerate() {
        let opcache = if which.exec(Mode::Opcache, level) || which.exec(Mode::Optimize, level) {
            run(Mode::Opcache, level, &mut outcome)
        } else {
            None
        };
        if let Some(o) = &opcache {
            if which.exec(Mode::Opcache, level) {
                compare(Mode::Opcache, level, o, None, &mut |_| false, &mut outcome);
            }
        }
        let mut modes = vec![Mode::Optimize];
        // The round trip and the cache do not depend on the level: once is enough.
        if i == 0 {
            modes.extend([Mode::Roundtrip, Mode::Cache]);
        }
        for mode in modes {
            if !which.exec(mode, level) {
                continue;
            }
            let out = if mode == Mode::Roundtrip {
                roundtrip
                    .get_or_insert_with(|| run(Mode::Roundtrip, first_level, &mut outcome))
                    .clone()
            } else {
                run(mode, level, &mut outcome)
            };
            if let Some(out) = out {
                let mut roundtrip_differs = |outcome: &mut Outcome| {
                    roundtrip
                        .get_or_insert_with(|| run(Mode::Roundtrip, first_level, outcome))
                        .as_ref()
                        .is_some_and(|r| first_diff(&reference, r).is_some())
                };
                compare(
                    mode,
                    level,
                    &out,
                    opcache.as_ref(),
                    &mut roundtrip_differs,
                    &mut outcome,
                );
            }
        }
    }
    outcome
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The SSA verifier and the crosscheck on a recording.
fn analyses(script: &zend_ir::Script, seed: u64, outcome: &mut Outcome) {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let info = zend_call_graph::ScriptInfo::new(script);
        let mut verified = 0;
        let mut failures = Vec::new();
        for op_array in info.op_arrays.iter() {
            let Ok(cfg) = crate::dfa::dfa_cfg(op_array) else {
                continue;
            };
            let (_, ssa) = crate::dfa::dfa_ssa(op_array, &cfg, &info);
            let Ok(ssa) = ssa else { continue };
            verified += 1;
            if let Err(e) = zend_ssa::verify(op_array, &cfg, &ssa) {
                failures.push(Failure {
                    kind: FailureKind::Verify,
                    detail: format!("{e}"),
                });
            }
        }
        let report = crate::crosscheck::check_script(&format!("seed{seed}.php"), script);
        (verified, failures, report)
    }));
    match result {
        Ok((verified, failures, report)) => {
            outcome.verified += verified;
            outcome.failures.extend(failures);
            outcome.crosschecked += report.checked();
            if let Some((_, d)) = report.disagreements.first() {
                outcome.failures.push(Failure {
                    kind: FailureKind::Crosscheck,
                    detail: format!("{} disagreement(s), first: {d}", report.disagreements.len()),
                });
            }
        }
        Err(p) => outcome.failures.push(Failure {
            kind: FailureKind::Panic {
                during: "verify/crosscheck".into(),
            },
            detail: panic_message(p.as_ref()),
        }),
    }
}

/// How much a reduction may cost.
const REDUCE_MAX_TESTS: usize = 200;
const REDUCE_MAX_TIME: Duration = Duration::from_secs(150);

/// Reduces `program` while `kind` still shows.
fn reduce(
    opts: &Options,
    seed: u64,
    program: &zopt_progen::Program,
    kind: &FailureKind,
) -> (Edits, usize) {
    let which = Which::Only(kind.clone());
    reduce_with(
        program,
        |source| {
            let outcome = check(opts, seed, source, &which);
            outcome.invalid.is_none() && outcome.failures.iter().any(|f| &f.kind == kind)
        },
        REDUCE_MAX_TESTS,
        REDUCE_MAX_TIME,
    )
}

/// Delta debugging over the program's marked places: cut statements in chunks of
/// halving size (ddmin's complement steps), then replace expressions by literals, then
/// cut once more; a candidate is kept when `fails` still holds for its source. Returns
/// the edits and the number of candidates tried (at most `max_tests`, within `max_time`).
pub fn reduce_with(
    program: &zopt_progen::Program,
    mut fails: impl FnMut(&str) -> bool,
    max_tests: usize,
    max_time: Duration,
) -> (Edits, usize) {
    let start = Instant::now();
    let mut tests = 0usize;
    let mut edits = Edits::default();
    let exhausted = |tests: usize| tests >= max_tests || start.elapsed() > max_time;
    for phase in [EditKind::Cut, EditKind::Simplify, EditKind::Cut] {
        let count = program
            .places(&edits)
            .iter()
            .filter(|(_, k)| *k == phase)
            .count();
        let mut chunk = (count / 2).max(1);
        loop {
            let places: Vec<u32> = program
                .places(&edits)
                .into_iter()
                .filter(|(_, k)| *k == phase)
                .map(|(id, _)| id)
                .collect();
            let mut changed = false;
            for group in places.chunks(chunk) {
                if exhausted(tests) {
                    break;
                }
                let mut trial = edits.clone();
                for &id in group {
                    if phase == EditKind::Cut {
                        trial.cut.insert(id);
                    } else {
                        trial.simplified.insert(id);
                    }
                }
                tests += 1;
                if fails(&program.source_with(&trial)) {
                    edits = trial;
                    changed = true;
                }
            }
            if (chunk == 1 && !changed) || exhausted(tests) {
                break;
            }
            chunk = (chunk / 2).max(1);
        }
    }
    (edits, tests)
}

/// Runs the fuzzer.
pub fn run(opts: &Options) -> Result<Summary> {
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("cannot create {}", opts.out.display()))?;
    let start = Instant::now();
    let jobs = if opts.jobs == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        opts.jobs
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("thread pool")?;
    let bar = if opts.progress {
        ProgressBar::new(opts.count)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} programs {elapsed_precise} eta {eta} {msg}",
        )
        .expect("static template"),
    );
    // Our panics are reported as failures; keep their messages off the progress bar.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let failing = Mutex::new(0usize);
    let outcomes: Vec<(u64, Outcome)> = pool.install(|| {
        (0..opts.count)
            .into_par_iter()
            .map(|i| {
                let seed = opts.seed.wrapping_add(i);
                let program = zopt_progen::generate(seed, &opts.generator);
                let outcome = check(opts, seed, &program.source(), &Which::All);
                if !outcome.failures.is_empty() {
                    let mut n = failing.lock().expect("not poisoned");
                    *n += 1;
                    bar.set_message(format!("{n} failing"));
                    // Long runs (often logged to a file, where the bar is not drawn) name
                    // each failing seed as it is found.
                    if opts.progress {
                        let kinds: BTreeSet<String> =
                            outcome.failures.iter().map(|f| f.kind.slug()).collect();
                        let kinds: Vec<String> = kinds.into_iter().collect();
                        bar.suspend(|| eprintln!("seed {seed}: {}", kinds.join(" ")));
                    }
                }
                bar.inc(1);
                (seed, outcome)
            })
            .collect()
    });
    bar.finish_and_clear();

    let mut summary = Summary {
        php_ini: opts.php.ini,
        compile_as: opts.php.compile_as,
        first_seed: opts.seed,
        programs: opts.count,
        ..Default::default()
    };
    let mut stages: BTreeMap<(u32, String), StageTally> = BTreeMap::new();
    let mut opcodes = BTreeSet::new();
    for (seed, outcome) in &outcomes {
        if let Some(why) = &outcome.invalid {
            summary.invalid_programs.push((*seed, why.clone()));
            continue;
        }
        summary.op_arrays += outcome.op_arrays;
        summary.exec_runs += outcome.exec_runs;
        summary.verified_op_arrays += outcome.verified;
        summary.crosschecked_op_arrays += outcome.crosschecked;
        opcodes.extend(outcome.opcodes.iter().copied());
        for (key, t) in &outcome.stages {
            let total = stages.entry(key.clone()).or_insert_with(|| StageTally {
                implemented: true,
                ..Default::default()
            });
            total.implemented &= t.implemented;
            total.compared += t.compared;
            total.identical += t.identical;
            total.deviating += t.deviating;
        }
        for f in &outcome.failures {
            let seeds = summary.failures.entry(f.kind.slug()).or_default();
            if !seeds.contains(seed) {
                seeds.push(*seed);
            }
            summary.failure_details.push((*seed, f.clone()));
        }
        for f in &outcome.php_differences {
            summary.php_differences.push((*seed, f.clone()));
        }
    }
    // Stage order: levels as given, stages in PHP's dump order.
    for &level in &opts.levels {
        for stage in &opts.stages {
            if let Some(t) = stages.remove(&(level, stage.name.clone())) {
                summary
                    .stages
                    .push((format!("{level:#x}"), stage.name.clone(), t));
            }
        }
    }
    summary.opcodes_reached = opcodes
        .iter()
        .filter_map(|&o| Opcode(o).short_name().map(str::to_string))
        .collect();
    summary.opcodes_defined = (0..=255u8).filter(|&o| Opcode(o).is_defined()).count();

    // Write every failing program, and reduce one of each kind.
    let mut reduced_kinds = BTreeSet::new();
    for (seed, outcome) in &outcomes {
        if outcome.failures.is_empty() {
            continue;
        }
        let program = zopt_progen::generate(*seed, &opts.generator);
        let source = program.source();
        std::fs::write(opts.out.join(format!("seed{seed}.php")), &source)?;
        if !opts.reduce {
            continue;
        }
        for failure in &outcome.failures {
            if reduced_kinds.len() >= opts.max_reductions
                || !reduced_kinds.insert(failure.kind.clone())
            {
                continue;
            }
            if opts.progress {
                eprintln!("reducing seed {seed}: {}", failure.kind.slug());
            }
            let (edits, tests) = reduce(opts, *seed, &program, &failure.kind);
            let reduced = program.source_with(&edits);
            let name = format!("{}-seed{seed}.php", failure.kind.slug());
            let path = opts.out.join(&name);
            std::fs::write(&path, &reduced)?;
            let reproduce = failure
                .kind
                .reproduce(&path.display().to_string(), &opts.php);
            let reduction = Reduction {
                seed: *seed,
                kind: failure.kind.clone(),
                detail: failure.detail.clone(),
                file: path.display().to_string(),
                original_lines: source.lines().count(),
                reduced_lines: reduced.lines().count(),
                tests,
                reproduce: reproduce.clone(),
            };
            std::fs::write(
                path.with_extension("txt"),
                format!(
                    "seed {seed} ({}), {}\n\n{}\n\nreproduce:\n  {reproduce}\n  zopt fuzz{} --seed {seed} --count 1   # the original program\n",
                    failure.kind.slug(),
                    target_flags(&opts.php),
                    if tests > 0 { format!("reduced from {} to {} lines in {tests} tests", reduction.original_lines, reduction.reduced_lines) } else { String::new() },
                    failure.detail
                ),
            )?;
            summary.reductions.push(reduction);
        }
    }
    std::panic::set_hook(hook);
    summary.seconds = start.elapsed().as_secs_f64();
    summary.programs_per_minute = opts.count as f64 * 60.0 / summary.seconds.max(1e-9);
    std::fs::write(
        opts.out.join("summary.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    Ok(summary)
}

impl Summary {
    pub fn print(&self) {
        println!(
            "programs: {} (seeds {}..{}), invalid: {}, op_arrays: {}, {:.0} s, {:.1} programs/minute",
            self.programs,
            self.first_seed,
            self.first_seed + self.programs,
            self.invalid_programs.len(),
            self.op_arrays,
            self.seconds,
            self.programs_per_minute
        );
        println!(
            "PHP configuration: {}, compiled {}",
            match self.php_ini {
                PhpIni::None => "-n (the binary's extensions)",
                PhpIni::Default => "its php.ini and conf.d",
            },
            match self.compile_as {
                CompileAs::Include => "as included files (opcache_compile_file)",
                CompileAs::Run => "as scripts about to run (php -l)",
            }
        );
        // "PHP bug": differs from PHP's dump only where PHP 8.2's optimizer is wrong; "%"
        // counts those with the identical ones.
        println!(
            "\n{:<12} {:<10} {:>10} {:>10} {:>8} {:>9}",
            "level", "stage", "compared", "identical", "PHP bug", "%"
        );
        let mut not_implemented: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (level, stage, t) in &self.stages {
            if !t.implemented {
                not_implemented.entry(level).or_default().push(stage);
                continue;
            }
            if t.compared == 0 {
                // PHP prints no such dump at this level (and neither do we).
                continue;
            }
            let pct = 100.0 * (t.identical + t.deviating) as f64 / t.compared as f64;
            println!(
                "{:<12} {:<10} {:>10} {:>10} {:>8} {:>8.2}%",
                level, stage, t.compared, t.identical, t.deviating, pct
            );
        }
        for (level, stages) in &not_implemented {
            println!("{level:<12} not implemented: {}", stages.join(" "));
        }
        println!(
            "\nexec-diff runs: {}  SSA verified op_arrays: {}  crosschecked op_arrays: {}",
            self.exec_runs, self.verified_op_arrays, self.crosschecked_op_arrays
        );
        println!(
            "opcodes reached: {} of {}",
            self.opcodes_reached.len(),
            self.opcodes_defined
        );
        if self.failures.is_empty() {
            println!("\nfailures: none");
        } else {
            println!("\nfailures by kind ({} in all):", self.failure_count());
            for (kind, seeds) in &self.failures {
                let shown: Vec<String> = seeds.iter().take(8).map(|s| s.to_string()).collect();
                println!(
                    "  {kind:<40} {:>4} program(s), seeds {}{}",
                    seeds.len(),
                    shown.join(" "),
                    if seeds.len() > 8 { " ..." } else { "" }
                );
            }
        }
        if !self.php_differences.is_empty() {
            println!(
                "\nPHP's own OPcache differs from PHP without it ({}, not counted):",
                self.php_differences.len()
            );
            for (seed, f) in self.php_differences.iter().take(10) {
                println!("  seed {seed} {}: {}", f.kind.slug(), f.detail);
            }
        }
        for (seed, why) in self.invalid_programs.iter().take(10) {
            println!("invalid program (generator bug) seed {seed}: {why}");
        }
        for r in &self.reductions {
            println!(
                "\nreduced seed {} {} ({} -> {} lines, {} tests): {}\n  {}\n  {}",
                r.seed,
                r.kind.slug(),
                r.original_lines,
                r.reduced_lines,
                r.tests,
                r.file,
                r.detail.lines().next().unwrap_or(""),
                r.reproduce
            );
        }
    }
}

/// Creates the options from the command line and prints the summary; the exit status is
/// non-zero when anything failed.
pub fn command(php: Php, args: &FuzzArgs) -> Result<bool> {
    let opts = Options::from_args(php, args)?;
    let summary = run(&opts)?;
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        summary.print();
        println!(
            "\n(summary.json and failing programs in {})",
            opts.out.display()
        );
    }
    Ok(summary.failure_details.is_empty() && summary.invalid_programs.is_empty())
}

/// Used by tests: the opcodes of a recording (names as dumps print them).
pub fn opcode_names(script: &zend_ir::Script) -> BTreeSet<String> {
    script
        .op_arrays()
        .iter()
        .flat_map(|o| o.opcodes.iter())
        .filter_map(|op| op.opcode.short_name().map(str::to_string))
        .collect()
}

/// Where a seed's program is written when it fails.
pub fn failing_program_path(out: &Path, seed: u64) -> PathBuf {
    out.join(format!("seed{seed}.php"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduction_commands_quote_what_the_shell_would_split() {
        let mut cmd = std::process::Command::new("php");
        cmd.args(["-d", "opcache.opt_debug_level=0x3fffffff", "-r"])
            .args(["exit(opcache_compile_file($argv[1]) ? 0 : 1);", "--"])
            .args(["/tmp/it's here.php", ""]);
        assert_eq!(
            shell_words(&cmd),
            r#"php -d opcache.opt_debug_level=0x3fffffff -r 'exit(opcache_compile_file($argv[1]) ? 0 : 1);' -- '/tmp/it'\''s here.php' ''"#
        );
    }

    #[test]
    fn reduction_keeps_the_failure_and_shrinks() {
        let program = zopt_progen::generate(7, &zopt_progen::Config::default());
        let source = program.source();
        // A stand-in failure: the program declares a generator or a goto label.
        let needle = if source.contains("yield from") {
            "yield from"
        } else {
            "function"
        };
        let (edits, tests) = reduce_with(
            &program,
            |s| s.contains(needle),
            1000,
            Duration::from_secs(60),
        );
        let reduced = program.source_with(&edits);
        assert!(reduced.contains(needle));
        assert!(tests > 0);
        // A declaration keeps its whole body, so the stand-in cannot shrink to nothing: a
        // third off is the floor that shows the reducer works.
        assert!(
            reduced.len() * 3 < source.len() * 2,
            "{} bytes reduced only to {}",
            source.len(),
            reduced.len()
        );
    }
}
