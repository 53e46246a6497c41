//! `zopt conformance`: our dumps against PHP's, op_array by op_array, byte for byte.

use crate::corpus::{load_recording, SourceFile};
use crate::php::{CompileError, Php};
use crate::stages::{our_dump, split_dump, BugReproductions, Chunk};
use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;
use zend_ir::dump::debug_level;

/// A stage to compare: its name and debug-level bits.
#[derive(Clone, Debug)]
pub struct Level {
    pub name: String,
    pub bits: u32,
}

impl Level {
    pub fn parse(s: &str) -> Result<Level> {
        let bits =
            debug_level::parse(s).ok_or_else(|| anyhow::anyhow!("unknown dump level {s:?}"))?;
        if bits.count_ones() != 1 {
            anyhow::bail!("dump level {s:?} must name one stage (one debug-level bit)");
        }
        let name = debug_level::name(bits)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{bits:#x}"));
        Ok(Level { name, bits })
    }
}

/// The first difference found at a level.
#[derive(Clone, Debug, Serialize)]
pub struct Mismatch {
    pub file: String,
    pub function: String,
    /// 1-based line within the op_array's dump.
    pub line: usize,
    pub php: String,
    pub ours: String,
}

/// An op_array whose dump differs from PHP's only where PHP 8.2's optimizer is wrong and
/// ours is right: identical once zopt reproduces `bugs`.
#[derive(Clone, Debug, Serialize)]
pub struct Deviation {
    pub file: String,
    pub function: String,
    /// The bugs' names ([`PhpBugs`]'s display).
    pub bugs: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct LevelReport {
    pub level: String,
    pub implemented: bool,
    pub compared: usize,
    pub identical: usize,
    /// Compared op_arrays that are not identical for a PHP 8.2 bug's sake, every one.
    pub deviations: Vec<Deviation>,
    pub mismatches: Vec<Mismatch>,
}

impl LevelReport {
    /// Whether every compared op_array is identical or deviates for a listed PHP bug.
    pub fn all_right(&self) -> bool {
        self.identical + self.deviations.len() == self.compared
    }
}

#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub optimization_level: String,
    pub files: usize,
    pub levels: Vec<LevelReport>,
    /// Files PHP itself cannot compile, with its message.
    pub uncompilable: Vec<(String, String)>,
    /// Files whose recording failed or could not be read.
    pub errors: Vec<(String, String)>,
}

enum FileOutcome {
    Compared(Vec<LevelOutcome>),
    Uncompilable(String),
    /// Recording failed: every op_array PHP dumped counts as compared and not identical.
    Error(String, Vec<usize>),
}

struct LevelOutcome {
    implemented: bool,
    compared: usize,
    identical: usize,
    deviations: Vec<Deviation>,
    mismatches: Vec<Mismatch>,
}

/// How many mismatches to keep per level.
const KEEP_MISMATCHES: usize = 20;

pub fn run(
    php: &Php,
    files: &[SourceFile],
    optimization_level: u32,
    levels: &[Level],
    progress: bool,
) -> Report {
    let bar = if progress {
        ProgressBar::new(files.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed_precise} eta {eta}")
            .expect("static template"),
    );
    let outcomes: Vec<(String, FileOutcome)> = files
        .par_iter()
        .map(|file| {
            let outcome = compare_file(php, file, optimization_level, levels);
            bar.inc(1);
            (file.relative.display().to_string(), outcome)
        })
        .collect();
    bar.finish_and_clear();

    let mut report = Report {
        optimization_level: format!("{optimization_level:#x}"),
        files: files.len(),
        levels: levels
            .iter()
            .map(|l| LevelReport {
                level: l.name.clone(),
                implemented: true,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    for (name, outcome) in outcomes {
        match outcome {
            FileOutcome::Uncompilable(message) => report.uncompilable.push((name, message)),
            FileOutcome::Error(message, php_counts) => {
                for (level, count) in report.levels.iter_mut().zip(php_counts) {
                    level.compared += count;
                }
                report.errors.push((name, message));
            }
            FileOutcome::Compared(per_level) => {
                for (level, outcome) in report.levels.iter_mut().zip(per_level) {
                    level.implemented &= outcome.implemented;
                    level.compared += outcome.compared;
                    level.identical += outcome.identical;
                    level.deviations.extend(outcome.deviations);
                    let room = KEEP_MISMATCHES.saturating_sub(level.mismatches.len());
                    level
                        .mismatches
                        .extend(outcome.mismatches.into_iter().take(room));
                }
            }
        }
    }
    report
}

fn compare_file(
    php: &Php,
    file: &SourceFile,
    optimization_level: u32,
    levels: &[Level],
) -> FileOutcome {
    let tmp = match tempfile::tempdir() {
        Ok(t) => t,
        Err(e) => {
            return FileOutcome::Error(format!("cannot create a temporary directory: {e}"), vec![])
        }
    };
    let name = file.relative.display().to_string();
    let mut php_dumps = Vec::with_capacity(levels.len());
    let mut recording = None;
    // The recording is the script as PHP compiled it: the extension records after the
    // optimizer, so above level 0 it is recorded by a separate compilation at level 0.
    if optimization_level != 0 {
        match php.compile(&file.path, 0, 0, Some(tmp.path())) {
            Ok(compiled) => recording = compiled.recording,
            Err(e) => match e.downcast::<CompileError>() {
                Ok(compile) => return FileOutcome::Uncompilable(compile.message),
                Err(other) => return FileOutcome::Error(format!("{other:#}"), vec![]),
            },
        }
    }
    for (i, level) in levels.iter().enumerate() {
        let record_dir = (i == 0 && optimization_level == 0).then_some(tmp.path());
        match php.compile(&file.path, optimization_level, level.bits, record_dir) {
            Ok(compiled) => {
                if compiled.recording.is_some() {
                    recording = compiled.recording;
                }
                php_dumps.push(compiled.dump);
            }
            Err(e) => match e.downcast::<CompileError>() {
                Ok(compile) => return FileOutcome::Uncompilable(compile.message),
                Err(other) => return FileOutcome::Error(format!("{other:#}"), vec![]),
            },
        }
    }
    let script = match recording.as_deref().map(load_recording) {
        Some(Ok(script)) => script,
        Some(Err(e)) => {
            let counts = php_dumps.iter().map(|d| split_dump(d).len()).collect();
            return FileOutcome::Error(format!("{e:#}"), counts);
        }
        None => return FileOutcome::Error("no recording".into(), vec![]),
    };
    let outcomes = levels
        .iter()
        .zip(&php_dumps)
        .map(|(level, php_dump)| {
            let php_chunks = split_dump(php_dump);
            match our_dump(&script, level.bits, optimization_level) {
                Err(_) => LevelOutcome {
                    implemented: false,
                    compared: 0,
                    identical: 0,
                    deviations: vec![],
                    mismatches: vec![],
                },
                Ok(ours) => compare_chunks(
                    &name,
                    &php_chunks,
                    &split_dump(&ours),
                    &mut BugReproductions::new(&script, level.bits, optimization_level),
                ),
            }
        })
        .collect();
    FileOutcome::Compared(outcomes)
}

/// What comparing one stage's dumps of one file found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StageComparison {
    /// Op_arrays compared: those of the longer dump.
    pub compared: usize,
    pub identical: usize,
    pub deviations: Vec<Deviation>,
    pub mismatches: Vec<Mismatch>,
}

/// Compares PHP's dump of one stage of `file` with ours, op_array by op_array and byte for
/// byte. Unlike [`run`]'s tally (PHP's op_arrays only), an op_array only our dump has is a
/// mismatch too, so the two dumps are identical exactly when every op_array is: a stage PHP
/// printed nothing for never compares equal to a dump of ours with something in it.
/// `bugs` tells which differences are PHP 8.2's bugs (see [`BugReproductions`]).
pub fn compare_dumps(
    file: &str,
    php: &[u8],
    ours: &[u8],
    bugs: &mut BugReproductions,
) -> StageComparison {
    let php_chunks = split_dump(php);
    let our_chunks = split_dump(ours);
    let outcome = compare_chunks(file, &php_chunks, &our_chunks, bugs);
    let mut comparison = StageComparison {
        compared: outcome.compared,
        identical: outcome.identical,
        deviations: outcome.deviations,
        mismatches: outcome.mismatches,
    };
    for extra in our_chunks.iter().skip(php_chunks.len()) {
        comparison.compared += 1;
        let (line, _, ours) = first_difference(b"", extra.text);
        comparison.mismatches.push(Mismatch {
            file: file.to_string(),
            function: String::from_utf8_lossy(extra.name).into_owned(),
            line,
            php: "<no such op_array in PHP's dump>".to_string(),
            ours,
        });
    }
    comparison
}

fn compare_chunks(
    file: &str,
    php: &[Chunk],
    ours: &[Chunk],
    bugs: &mut BugReproductions,
) -> LevelOutcome {
    let mut outcome = LevelOutcome {
        implemented: true,
        compared: php.len(),
        identical: 0,
        deviations: vec![],
        mismatches: vec![],
    };
    for (i, theirs) in php.iter().enumerate() {
        let mine = ours.get(i);
        if mine.is_some_and(|m| m.text == theirs.text) {
            outcome.identical += 1;
            continue;
        }
        if let Some(found) = bugs.explain(i, theirs.text) {
            outcome.deviations.push(Deviation {
                file: file.to_string(),
                function: String::from_utf8_lossy(theirs.name).into_owned(),
                bugs: found.to_string(),
            });
            continue;
        }
        let mine_text: &[u8] = mine.map_or(b"", |m| m.text);
        let (line, php_line, our_line) = first_difference(theirs.text, mine_text);
        outcome.mismatches.push(Mismatch {
            file: file.to_string(),
            function: String::from_utf8_lossy(theirs.name).into_owned(),
            line,
            php: php_line,
            ours: our_line,
        });
    }
    outcome
}

/// The 1-based number of the first line that differs, and both versions of it.
fn first_difference(a: &[u8], b: &[u8]) -> (usize, String, String) {
    let mut la = a.split(|&c| c == b'\n');
    let mut lb = b.split(|&c| c == b'\n');
    let show = |l: Option<&[u8]>| match l {
        Some(l) => {
            let s = String::from_utf8_lossy(l);
            s.chars().take(200).collect()
        }
        None => "<end of dump>".to_string(),
    };
    let mut n = 1;
    loop {
        let (x, y) = (la.next(), lb.next());
        if x != y || (x.is_none() && y.is_none()) {
            return (n, show(x), show(y));
        }
        n += 1;
    }
}

impl Report {
    /// Whether no op_array was compared at any implemented stage: a measurement of nothing,
    /// which must never read as success.
    pub fn measured_nothing(&self) -> bool {
        !self.levels.iter().any(|l| l.implemented && l.compared > 0)
    }

    pub fn print_table(&self) {
        println!(
            "optimization level {}: {} files",
            self.optimization_level, self.files
        );
        // "PHP bug": differs from PHP's dump only where PHP 8.2's optimizer is wrong (listed
        // below); "%" counts those with the identical ones.
        println!(
            "{:<10} {:>10} {:>10} {:>8} {:>9}",
            "level", "compared", "identical", "PHP bug", "%"
        );
        for level in &self.levels {
            if !level.implemented {
                println!(
                    "{:<10} {:>10} {:>10} {:>8} {:>9}",
                    level.level, "-", "-", "-", "not implemented"
                );
                continue;
            }
            if level.compared == 0 {
                println!(
                    "{:<10} {:>10} {:>10} {:>8} {:>9}",
                    level.level, 0, 0, 0, "nothing compared"
                );
                continue;
            }
            let right = level.identical + level.deviations.len();
            let pct = 100.0 * right as f64 / level.compared as f64;
            println!(
                "{:<10} {:>10} {:>10} {:>8} {:>8.2}%",
                level.level,
                level.compared,
                level.identical,
                level.deviations.len(),
                pct
            );
        }
        let deviations: Vec<(&str, &Deviation)> = self
            .levels
            .iter()
            .flat_map(|l| l.deviations.iter().map(move |d| (l.level.as_str(), d)))
            .collect();
        if !deviations.is_empty() {
            println!(
                "\n{} op_array dump(s) differ from PHP's where PHP 8.2's optimizer is wrong \
                 (identical when zopt reproduces the bug; see fixtures/README.md):",
                deviations.len()
            );
            for (level, d) in deviations.iter().take(20) {
                println!("  {level} {} {}: {}", d.file, d.function, d.bugs);
            }
            if deviations.len() > 20 {
                println!(
                    "  ... and {} more (--json lists them all)",
                    deviations.len() - 20
                );
            }
        }
        if !self.uncompilable.is_empty() {
            println!("\n{} file(s) PHP cannot compile:", self.uncompilable.len());
            for (file, message) in self.uncompilable.iter().take(20) {
                println!("  {file}: {}", message.lines().next().unwrap_or(""));
            }
        }
        if !self.errors.is_empty() {
            println!("\n{} file(s) with recording errors:", self.errors.len());
            for (file, message) in self.errors.iter().take(20) {
                println!("  {file}: {message}");
            }
        }
        for level in &self.levels {
            if level.mismatches.is_empty() {
                continue;
            }
            println!("\nfirst mismatches at level {}:", level.level);
            for m in level.mismatches.iter().take(10) {
                println!(
                    "  {} {} line {}:\n    php:  {}\n    ours: {}",
                    m.file, m.function, m.line, m.php, m.ours
                );
            }
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "optimization_level": self.optimization_level,
            "files": self.files,
            "levels": self.levels.iter().map(|l| serde_json::json!({
                "level": l.level,
                "implemented": l.implemented,
                "compared": l.compared,
                "identical": l.identical,
                "deviations": l.deviations,
                "mismatches": l.mismatches,
            })).collect::<Vec<_>>(),
            "uncompilable": self.uncompilable,
            "errors": self.errors,
        })
    }
}
