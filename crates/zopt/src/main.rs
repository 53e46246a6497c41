//! The `zopt` command line: record PHP's compiled op_arrays, print our dumps of them, and
//! measure how often our dumps are byte-identical to PHP's.

use zopt::{conformance, corpus, exec_diff, php, stages};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use zend_ir::dump::{debug_level, parse_number};
use zend_optimizer::PhpBugs;

#[derive(Parser)]
#[command(
    name = "zopt",
    version,
    about = "PHP 8.2 optimizer and opcode cache, in Rust"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
struct PhpArgs {
    /// PHP 8.2 binary (default: $ZOPT_PHP or `php` on PATH).
    #[arg(long)]
    php: Option<PathBuf>,
    /// The zopt extension (default: $ZOPT_PHP_EXTENSION or libzopt_php.so beside zopt).
    #[arg(long)]
    extension: Option<PathBuf>,
}

/// The PHP that zopt's optimizer optimizes for, and how PHP compiles the files it is given.
#[derive(clap::Args, Clone)]
struct TargetArgs {
    /// PHP's configuration: `none` (-n: the extensions built into the binary) or
    /// `default` (its php.ini and conf.d, every extension installed); zopt optimizes for
    /// the same PHP, as the extension does inside it.
    #[arg(long, default_value = "none")]
    php_ini: php::PhpIni,
    /// How PHP compiles each .php file: `include` (`opcache_compile_file()`, as a file that
    /// will not run) or `run` (`php -l`, as a script about to run: top-level classes bound
    /// at compile time).
    #[arg(long, default_value = "include")]
    compile_as: php::CompileAs,
}

/// PHP as `php` and `target` say, its description installed for the optimizer when it is
/// not the tables' (`--php-ini default`).
fn target_php(php: &PhpArgs, target: &TargetArgs) -> Result<php::Php> {
    let mut p = php::Php::locate(php.php.as_deref(), php.extension.as_deref())?;
    p.ini = target.php_ini;
    p.compile_as = target.compile_as;
    if p.ini != php::PhpIni::None {
        zend_optimizer::environment::install(p.environment()?);
    }
    Ok(p)
}

#[derive(Subcommand)]
enum Command {
    /// Compile PHP files in real PHP (without running them) and record them as .zop,
    /// with PHP's own dump text for the given debug level.
    Record {
        #[command(flatten)]
        php: PhpArgs,
        /// opcache.optimization_level PHP compiles with.
        #[arg(long, default_value = "0", value_parser = parse_hex)]
        optimization_level: u32,
        /// opcache.opt_debug_level: PHP's dump is written beside each recording as .dump.
        #[arg(long, default_value = "0x10000", value_parser = parse_level)]
        debug_level: u32,
        /// Output directory.
        #[arg(short = 'o', long)]
        out: PathBuf,
        /// Files or directories of PHP code.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Print our dump of a PHP file or a recording, as PHP prints it at opt_debug_level
    /// (a .php file is compiled by PHP and recorded first).
    Dump {
        #[command(flatten)]
        php: PhpArgs,
        #[command(flatten)]
        target: TargetArgs,
        /// Stage name (before, after, cfg, ...) or debug-level bits.
        #[arg(long, default_value = "before", value_parser = parse_level)]
        level: u32,
        /// Optimization level the dump is for.
        #[arg(long, default_value = "0", value_parser = parse_hex)]
        optimization_level: u32,
        /// PHP 8.2 optimizer bugs to reproduce, for PHP's exact dumps: `all` or a
        /// comma-separated list of their names (fixtures/README.md describes each; an
        /// unknown name lists them). By default zopt's optimizer is correct there.
        #[arg(long, default_value = "none", value_parser = parse_php_bugs)]
        php_bugs: PhpBugs,
        /// `text` (PHP's dump) or `json`: every op_array's CFG, SSA, types, return info and
        /// call sites, or the reason PHP does not analyse it (the `zopt-analysis` schema,
        /// version 1, documented in crates/zopt/src/json.rs), for the analysis stages.
        #[arg(long, default_value = "text")]
        format: DumpFormat,
        /// FILE.php or FILE.zop.
        file: PathBuf,
    },
    /// Optimize a PHP file or a recording with zopt's optimizer and print it as PHP's
    /// "after optimizer" dump, or write it as a recording. What it prints is the script as
    /// optimized, the form PHP runs: at levels with the call graph (PASS_7, as the default)
    /// that is PHP's dump; without it PHP dumps each op_array before pass 12 sets its calls'
    /// stack sizes (`zopt dump --level after` prints that form).
    Opt {
        #[command(flatten)]
        php: PhpArgs,
        #[command(flatten)]
        target: TargetArgs,
        /// opcache.optimization_level (OPcache's pass bitmask).
        #[arg(long, default_value = "0x7FFEBFFF", value_parser = parse_hex)]
        optimization_level: u32,
        /// After each op_array, what each pass changed and why.
        #[arg(long)]
        explain: bool,
        /// PHP 8.2 optimizer bugs to reproduce, for PHP's exact op_arrays (as `zopt dump
        /// --php-bugs`).
        #[arg(long, default_value = "none", value_parser = parse_php_bugs)]
        php_bugs: PhpBugs,
        /// Write the optimized script as a .zop recording instead of printing it.
        #[arg(short = 'o', long)]
        out: Option<PathBuf>,
        /// FILE.php or FILE.zop.
        file: PathBuf,
    },
    /// Measure: `serve` times loading every class of PHP libraries from zopt's cache, against
    /// compiling them and against OPcache's file cache, in the same run.
    Bench {
        #[command(subcommand)]
        command: BenchCommand,
    },
    /// The opcode cache: warm, stat, verify, clear.
    Cache {
        #[command(subcommand)]
        command: zopt::cache::CacheCommand,
    },
    /// The control flow graph of each op_array of a recording (or of a .php file, recorded
    /// first), as the DFA pass builds it: PHP's CFG dump with dominators, or Graphviz with
    /// --dot.
    Cfg {
        #[command(flatten)]
        php: PhpArgs,
        /// Print Graphviz (one digraph per op_array): control-flow edges solid (back edges
        /// green), dominator-tree edges dashed blue, loop headers doubled.
        #[arg(long)]
        dot: bool,
        /// Only op_arrays with this name (`foo`, `Class::method`, `$_main`).
        #[arg(long)]
        function: Option<String>,
        file: PathBuf,
    },
    /// Compare our dumps with PHP's, op_array by op_array, byte for byte.
    Conformance {
        #[command(flatten)]
        php: PhpArgs,
        #[arg(long, default_value = "0", value_parser = parse_hex)]
        optimization_level: u32,
        /// Comma-separated stages: before, after, cfg, dom, liveness, phi, ssa, types, sccp,
        /// pass1 ... pass14.
        #[arg(long, default_value = "before,after")]
        levels: String,
        /// Print one JSON object instead of the table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Cross-check SSA: pruned Cytron, Braun et al. and PHP-style SSA must agree on every
    /// use's reaching definition and on the phis (.php files are recorded at level 0).
    Crosscheck {
        #[command(flatten)]
        php: PhpArgs,
        /// .php files, .zop recordings, or directories of either.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Run PHP programs under (a) OPcache off, (b) OPcache's optimizer, (c) zopt's round
    /// trip, (d) zopt's optimizer, (e) zopt's opcode cache (cold, then warm without
    /// compiling), and compare stdout and exit status with (a).
    ExecDiff {
        #[command(flatten)]
        php: PhpArgs,
        /// Optimization level of (b) OPcache and (d) zopt.
        #[arg(long, default_value = "0x7FFEBFFF", value_parser = parse_hex)]
        optimization_level: u32,
        /// Print one JSON object instead of the text report.
        #[arg(long)]
        json: bool,
        /// Seconds a run may take before it is killed and reported.
        #[arg(long, default_value_t = 60)]
        timeout: u64,
        /// Parallel runs (default: every core).
        #[arg(long, short = 'j', default_value_t = 0)]
        jobs: usize,
        /// PHP configuration of every mode: `none` (-n, OPcache loaded explicitly) or
        /// `default` (PHP's php.ini, for real programs that need Debian's extensions).
        #[arg(long, default_value = "none")]
        php_ini: exec_diff::PhpIni,
        /// A PHP command to run as a program, e.g. 'composer validate' (words split on
        /// spaces; the first is a PHP script path or a name on PATH). Repeatable.
        #[arg(long)]
        command: Vec<String>,
        /// Directory the --command programs run in.
        #[arg(long, default_value = ".")]
        cwd: PathBuf,
        /// JSON manifest of commands (see zopt::exec_diff::Manifest). Repeatable.
        #[arg(long)]
        manifest: Vec<PathBuf>,
        /// Also time each program: median wall time of N runs under (a), (b) and (d), one
        /// run at a time, reported with their ratios.
        #[arg(long, value_name = "N")]
        timing: Option<usize>,
        /// Run (b), (c) and (d) with OPcache's JIT (`opcache.jit` = this, e.g. `tracing` or
        /// `function`, with a 64 MB buffer); (a) stays without OPcache.
        #[arg(long)]
        jit: Option<String>,
        /// PHP files or directories of them (each runs from its own directory).
        paths: Vec<PathBuf>,
    },
    /// Differential fuzzing: generated programs through conformance of every implemented
    /// stage at each optimization level, exec-diff of every mode, the SSA verifier and the
    /// crosscheck; failures are reduced and written to --out.
    Fuzz {
        #[command(flatten)]
        php: PhpArgs,
        #[command(flatten)]
        target: TargetArgs,
        #[command(flatten)]
        args: zopt::fuzz::FuzzArgs,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// zopt's optimizer against PHP's own on the same files, in the same run: per pass and in
    /// total, medians, the ratio and peak memory.
    Optimizer {
        #[command(flatten)]
        php: PhpArgs,
        /// opcache.optimization_level of both.
        #[arg(long, default_value = "0x7FFEBFFF", value_parser = parse_hex)]
        optimization_level: u32,
        /// Rounds (each: PHP at level 0, PHP at the level, zopt).
        #[arg(long, default_value_t = 9)]
        rounds: usize,
        /// Print one JSON object instead of the text report.
        #[arg(long)]
        json: bool,
        /// PHP files or directories of them.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// The analysis chain of PHP's DFA pass (CFG, DFG, SSA, SCCs, types and ranges, escape)
    /// against PHP's DFA path (compile time at 0x60 minus level 0) on the same files, in the
    /// same run: per stage and in total, medians, the ratio, allocations and peak memory.
    Analyses {
        #[command(flatten)]
        php: PhpArgs,
        /// Rounds (each: PHP at level 0, PHP at 0x60, zopt).
        #[arg(long, default_value_t = 9)]
        rounds: usize,
        /// Print one JSON object instead of the text report.
        #[arg(long)]
        json: bool,
        /// PHP files or directories of them.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Load every class of the libraries under PATHs (one declaration per file) under
    /// `compile` (OPcache off), `zopt` (warm zopt.cache_dir) and `opcache-file` (warm
    /// opcache.file_cache_only), interleaved rounds; medians and ratios.
    Serve {
        #[command(flatten)]
        php: PhpArgs,
        /// Rounds (one run of each mode per round).
        #[arg(long, default_value_t = 10)]
        rounds: usize,
        /// Print one JSON object instead of the text report.
        #[arg(long)]
        json: bool,
        /// Directories of PHP libraries, e.g. /usr/share/php.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DumpFormat {
    Text,
    Json,
}

#[global_allocator]
static ALLOCATOR: zopt_alloc::Counting = zopt_alloc::Counting;

fn parse_hex(s: &str) -> Result<u32, String> {
    parse_number(s).ok_or_else(|| format!("{s:?} is not a number (use 0x... for hex)"))
}

fn parse_php_bugs(s: &str) -> Result<PhpBugs, String> {
    s.split(',').try_fold(PhpBugs::NONE, |set, name| {
        PhpBugs::parse(name.trim())
            .map(|bug| set | bug)
            .ok_or_else(|| {
                let names: Vec<&str> = PhpBugs::EACH.iter().map(|&(_, n)| n).collect();
                format!(
                    "{name:?} is not a PHP bug zopt knows (all, none, {})",
                    names.join(", ")
                )
            })
    })
}

fn parse_level(s: &str) -> Result<u32, String> {
    debug_level::parse(s).ok_or_else(|| format!("{s:?} is not a dump level name or number"))
}

fn main() {
    // A closed pipe (`zopt cfg FILE | head`) ends zopt quietly, as it ends other Unix
    // tools, instead of an error message or a panic in `println!`.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    if let Err(e) = run(Cli::parse()) {
        eprintln!("zopt: {}", error_message(&e));
        std::process::exit(1);
    }
}

/// The error and its causes, each said once: a cause whose text its parent's message
/// already contains (`Is a directory (os error 21)` inside `cannot read x: Is a directory
/// (os error 21)`) is not repeated.
fn error_message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// What an analysis dump (`cfg` ... `types`) leaves out, said on stderr: that PHP's DFA pass
/// does not run at this optimization level, or which op_arrays it does not analyse and why.
fn dump_notes(script: &zend_ir::Script, level: u32, optimization_level: u32) {
    const PASS_6_DFA: u32 = 1 << 5;
    if level & zopt::dfa::DFA_DUMPS == 0 || level & !zopt::dfa::DFA_DUMPS != 0 {
        return;
    }
    if optimization_level & PASS_6_DFA == 0 {
        eprintln!(
            "zopt: note: PHP's DFA pass does not run at optimization level \
             {optimization_level:#x}, so it prints no analysis; the op_arrays as compiled are \
             analysed at --optimization-level 0x60 (or 0x20)"
        );
        return;
    }
    if !zopt::dfa::sees_compiled_op_arrays(optimization_level) {
        return;
    }
    let analysis = zend_optimizer::analysis::analyze_script(script, optimization_level);
    for function in analysis.functions() {
        if let Err(reason) = function.analysis {
            eprintln!("zopt: note: {} is not analysed: {reason}", function.name);
        }
    }
}

/// `paths` hold no .php file: an error saying so, not a report on nothing.
fn require_php_files(files: &[corpus::SourceFile], paths: &[PathBuf]) -> Result<()> {
    if files.is_empty() {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        bail!("no .php files in {}", names.join(", "));
    }
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Cache { command } => zopt::cache::run(command),
        Command::Fuzz { php, target, args } => {
            let php = target_php(&php, &target)?;
            if !zopt::fuzz::command(php, &args)? {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Bench {
            command:
                BenchCommand::Optimizer {
                    php,
                    optimization_level,
                    rounds,
                    json,
                    paths,
                },
        } => {
            let php = php::Php::locate(php.php.as_deref(), php.extension.as_deref())?;
            let report = zopt::bench_optimizer::run(&php, &paths, optimization_level, rounds)?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                report.print();
            }
            Ok(())
        }
        Command::Bench {
            command:
                BenchCommand::Analyses {
                    php,
                    rounds,
                    json,
                    paths,
                },
        } => {
            let php = php::Php::locate(php.php.as_deref(), php.extension.as_deref())?;
            let report = zopt::bench_analyses::run(&php, &paths, rounds)?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                report.print();
            }
            Ok(())
        }
        Command::Bench {
            command:
                BenchCommand::Serve {
                    php,
                    rounds,
                    json,
                    paths,
                },
        } => {
            let php = php::Php::locate(php.php.as_deref(), php.extension.as_deref())?;
            let extension = php.extension()?.canonicalize()?;
            let report = zopt::bench::serve(&php.binary, &extension, &paths, rounds)?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                report.print();
            }
            Ok(())
        }
        Command::Cfg {
            php,
            dot,
            function,
            file,
        } => {
            let php = php::Php::locate(php.php.as_deref(), php.extension.as_deref())?;
            cfg(&php, &file, dot, function.as_deref())
        }
        Command::Record {
            php,
            optimization_level,
            debug_level,
            out,
            paths,
        } => {
            let php = php::Php::locate(php.php.as_deref(), php.extension.as_deref())?;
            record(&php, optimization_level, debug_level, &out, &paths)
        }
        Command::Dump {
            php,
            target,
            level,
            optimization_level,
            php_bugs,
            format,
            file,
        } => {
            let php = target_php(&php, &target)?;
            let script = zopt::opt::load_script(&php, &file)?;
            if format == DumpFormat::Json {
                if level & !zopt::dfa::DFA_DUMPS != 0 || level == 0 {
                    bail!(
                        "--format json is for the analysis stages (cfg, dom, liveness, phi, \
                         ssa, types); give one with --level"
                    );
                }
                if optimization_level & (1 << 5) == 0 {
                    bail!(
                        "PHP's DFA pass does not run at optimization level \
                         {optimization_level:#x}: the analysis of the op_arrays as compiled is \
                         at --optimization-level 0x60 (or 0x20)"
                    );
                }
                let doc = zopt::json::analysis(&script, optimization_level);
                println!("{doc}");
                return Ok(());
            }
            let dump = stages::our_dump_with(&script, level, optimization_level, php_bugs)?;
            std::io::stdout().write_all(&dump)?;
            dump_notes(&script, level, optimization_level);
            Ok(())
        }
        Command::Opt {
            php,
            target,
            optimization_level,
            explain,
            php_bugs,
            out,
            file,
        } => {
            let php = target_php(&php, &target)?;
            let mut script = zopt::opt::load_script(&php, &file)?;
            if !zopt::opt::complete(optimization_level) {
                eprintln!(
                    "zopt: note: not every pass of level {optimization_level:#x} is implemented \
                     yet; those passes were skipped"
                );
            }
            let outcome = zopt::opt::optimize(&mut script, optimization_level, explain, php_bugs);
            for e in &outcome.verify_errors {
                eprintln!("zopt: check after pass failed: {e}");
            }
            match out {
                Some(path) => std::fs::write(&path, zend_ir::zop::print(&script))
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => zopt::opt::print(
                    &mut std::io::stdout().lock(),
                    &script,
                    optimization_level,
                    explain.then_some(outcome.changes.as_slice()),
                )?,
            }
            Ok(())
        }
        Command::Crosscheck { php, paths } => {
            let php = php::Php::locate(php.php.as_deref(), php.extension.as_deref()).ok();
            let report = zopt::crosscheck::run(php.as_ref(), &paths)?;
            report.print();
            if !report.disagreements.is_empty() || !report.errors.is_empty() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Conformance {
            php,
            optimization_level,
            levels,
            json,
            target,
            paths,
        } => {
            let php = target_php(&php, &target)?;
            let levels = levels
                .split(',')
                .map(|l| conformance::Level::parse(l.trim()))
                .collect::<Result<Vec<_>>>()?;
            let files = corpus::php_files(&paths)?;
            require_php_files(&files, &paths)?;
            let report = conformance::run(&php, &files, optimization_level, &levels, !json);
            if json {
                println!("{}", report.to_json());
            } else {
                report.print_table();
            }
            if report.measured_nothing() {
                let mut why = Vec::new();
                if report.uncompilable.len() == files.len() {
                    let (file, message) = &report.uncompilable[0];
                    why.push(format!(
                        "PHP ({}) compiled none of the {} file(s) ({file}: {message})",
                        php.binary.display(),
                        files.len()
                    ));
                } else if !report.uncompilable.is_empty() {
                    why.push(format!(
                        "PHP could not compile {} of {} file(s)",
                        report.uncompilable.len(),
                        files.len()
                    ));
                }
                if !report.errors.is_empty() {
                    why.push(format!("{} recording error(s)", report.errors.len()));
                }
                if why.is_empty() {
                    why.push(format!(
                        "no requested stage is implemented at level {optimization_level:#x} \
                         with anything to compare"
                    ));
                }
                bail!("nothing was compared: {}", why.join("; "));
            }
            Ok(())
        }
        Command::ExecDiff {
            php,
            optimization_level,
            json,
            timeout,
            jobs,
            php_ini,
            command,
            cwd,
            manifest,
            timing,
            jit,
            paths,
        } => {
            let php = php::Php::locate(php.php.as_deref(), php.extension.as_deref())?;
            let extension = php.extension()?.canonicalize()?;
            let config = exec_diff::Config {
                php: php.binary.clone(),
                extension,
                optimization_level,
                timeout: std::time::Duration::from_secs(timeout),
                jobs,
                jit,
            };
            exec_diff_command(
                config, json, php_ini, &command, &cwd, &manifest, timing, &paths,
            )
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn exec_diff_command(
    config: exec_diff::Config,
    json: bool,
    php_ini: exec_diff::PhpIni,
    commands: &[String],
    cwd: &std::path::Path,
    manifests: &[PathBuf],
    timing: Option<usize>,
    paths: &[PathBuf],
) -> Result<()> {
    let mut programs = Vec::new();
    for file in corpus::php_files(paths)? {
        let name = file.path.display().to_string();
        programs.push(exec_diff::Program::file(&file.path, name, php_ini)?);
    }
    for command in commands {
        let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        programs.push(exec_diff::Program::command(&words, cwd, php_ini)?);
    }
    for manifest in manifests {
        programs.extend(exec_diff::Manifest::load(manifest)?);
    }
    if programs.is_empty() {
        bail!("no programs: give PHP files or directories, --command or --manifest");
    }
    let report = exec_diff::run(&config, &programs, !json);
    let mut timings = Vec::new();
    if let Some(runs) = timing {
        for program in &programs {
            timings.push(exec_diff::timing(&config, program, runs)?);
        }
    }
    if json {
        #[derive(serde::Serialize)]
        struct Output<'a> {
            #[serde(flatten)]
            report: &'a exec_diff::Report,
            #[serde(skip_serializing_if = "Option::is_none")]
            timing: Option<&'a [exec_diff::Timing]>,
        }
        let output = Output {
            report: &report,
            timing: timing.map(|_| timings.as_slice()),
        };
        println!("{}", serde_json::to_string(&output)?);
    } else {
        report.print();
        for t in &timings {
            t.print();
        }
    }
    let clean =
        report.mismatches.is_empty() && report.errors.is_empty() && report.timeouts.is_empty();
    if !clean {
        std::process::exit(1);
    }
    Ok(())
}

fn record(
    php: &php::Php,
    optimization_level: u32,
    debug_level: u32,
    out: &std::path::Path,
    paths: &[PathBuf],
) -> Result<()> {
    use rayon::prelude::*;
    let files = corpus::php_files(paths)?;
    require_php_files(&files, paths)?;
    let bar = indicatif::ProgressBar::new(files.len() as u64);
    let failures: Vec<String> = files
        .par_iter()
        .filter_map(|file| {
            let result = record_one(php, file, optimization_level, debug_level, out);
            bar.inc(1);
            result
                .err()
                .map(|e| format!("{}: {}", file.path.display(), error_message(&e)))
        })
        .collect();
    bar.finish_and_clear();
    println!(
        "recorded {} of {} files into {}",
        files.len() - failures.len(),
        files.len(),
        out.display()
    );
    for failure in &failures {
        eprintln!("  {failure}");
    }
    if !failures.is_empty() {
        bail!("{} file(s) could not be recorded", failures.len());
    }
    Ok(())
}

fn record_one(
    php: &php::Php,
    file: &corpus::SourceFile,
    optimization_level: u32,
    debug_level: u32,
    out: &std::path::Path,
) -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let compiled = php.compile(
        &file.path,
        optimization_level,
        debug_level,
        Some(tmp.path()),
    )?;
    let recording = compiled.recording.context("no recording written")?;
    let target = out.join(&file.relative);
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut zop = target.clone().into_os_string();
    zop.push(".zop");
    std::fs::copy(&recording, &zop)
        .with_context(|| format!("cannot write {}", PathBuf::from(&zop).display()))?;
    if debug_level != 0 {
        let mut dump = target.into_os_string();
        dump.push(".dump");
        std::fs::write(&dump, &compiled.dump)?;
    }
    Ok(())
}

/// `zopt cfg`: each op_array's CFG as the DFA pass builds it.
fn cfg(php: &php::Php, file: &std::path::Path, dot: bool, function: Option<&str>) -> Result<()> {
    let script = zopt::opt::load_script(php, file)?;
    let mut out = std::io::stdout().lock();
    let mut found = false;
    for op_array in script.op_arrays() {
        if function.is_some_and(|f| f != op_array.display_name()) {
            continue;
        }
        found = true;
        let cfg = zend_cfg::Cfg::build(op_array, zend_cfg::BuildFlags::NO_ENTRY_PREDECESSORS)?;
        if dot {
            out.write_all(zend_cfg::dump::dot(op_array, &cfg).as_bytes())?;
        } else {
            let mut text = Vec::new();
            let detail = zend_cfg::dump::Detail::Dominators;
            zend_cfg::dump::dump_cfg(&mut text, op_array, &cfg, detail, None, None);
            out.write_all(&text)?;
        }
    }
    if !found {
        bail!(
            "no op_array named {:?} in {}",
            function.unwrap_or_default(),
            file.display()
        );
    }
    Ok(())
}
