//! `zopt bench optimizer`: zopt's optimizer against PHP's own on the same files, in the same
//! run.
//!
//! Ours: every file is recorded once (PHP compiles it at optimization level 0, the zopt
//! extension records it); then each round optimizes a fresh copy of every script with
//! [`zend_optimizer::optimize_script`] in this process, timing each pass and the whole.
//!
//! PHP's: a small driver compiles every file with `opcache_compile_file`, timing each call
//! with `hrtime`, in one PHP process per round and level — once at level 0 and once at the
//! measured level, interleaved with our rounds. PHP's optimizer time is the difference of
//! the two medians: compiling, persisting and everything else cancel out.
//!
//! Reported: medians over the rounds, per pass and in total, ops/s, the ratio PHP/zopt
//! (above 1: zopt is faster), and the peak memory the optimization added to this process.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use zend_ir::Script;

use crate::corpus::SourceFile;
use crate::php::Php;

/// The PHP side: compile every file listed in argv[1] once, print the total ns.
pub(crate) const PHP_DRIVER: &str = r#"<?php
$files = file($argv[1], FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES);
$total = 0; $failed = [];
foreach ($files as $f) {
    $t = hrtime(true);
    $r = @opcache_compile_file($f);
    $total += hrtime(true) - $t;
    if (!$r) $failed[] = $f;
}
echo json_encode(['ns' => $total, 'failed' => $failed]), "\n";
"#;

#[derive(Debug, Clone, Serialize)]
pub struct PassReport {
    pub name: String,
    /// Median over the rounds, milliseconds.
    pub ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct OptimizerReport {
    pub optimization_level: String,
    pub files: usize,
    pub op_arrays: usize,
    pub ops: usize,
    pub rounds: usize,
    /// Passes in the order they first ran.
    pub passes: Vec<PassReport>,
    /// Median of our whole optimization (all scripts), ms.
    pub zopt_ms: f64,
    pub zopt_mops_per_s: f64,
    /// Median in-process compile time of PHP at level 0 and at the measured level, ms.
    pub php_level0_ms: f64,
    pub php_level_ms: f64,
    /// `php_level_ms - php_level0_ms`: PHP's optimizer.
    pub php_optimizer_ms: f64,
    /// `php_optimizer_ms / zopt_ms`: above 1, zopt is faster. 0 when PHP's optimizer time
    /// was not measurable (see `measurable`).
    pub speedup: f64,
    /// The same from the best (fastest) round of each: less sensitive to a loaded machine.
    pub zopt_best_ms: f64,
    pub php_optimizer_best_ms: f64,
    pub speedup_best: f64,
    /// False when PHP's compile time at the level was not above its time at level 0 (the
    /// machine's noise exceeded the optimizer's cost): no ratio is reported then.
    pub measurable: bool,
    /// Peak resident memory the optimization rounds added (kB), and the process's peak.
    pub peak_rss_added_kb: u64,
    pub peak_rss_kb: u64,
    /// Passes the level enables that zopt does not implement yet (skipped, so the
    /// comparison is not of the same work).
    pub not_implemented: bool,
}

impl OptimizerReport {
    pub fn print(&self) {
        println!(
            "{} files, {} op_arrays, {} ops at optimization level {}, median of {} rounds:",
            self.files, self.op_arrays, self.ops, self.optimization_level, self.rounds
        );
        for p in &self.passes {
            println!("  {:<14} {:9.2} ms", p.name, p.ms);
        }
        println!(
            "  zopt total     {:9.2} ms   ({:.2} M ops/s)",
            self.zopt_ms, self.zopt_mops_per_s
        );
        println!(
            "  PHP compile    {:9.2} ms at level 0, {:.2} ms at {}: optimizer {:.2} ms",
            self.php_level0_ms, self.php_level_ms, self.optimization_level, self.php_optimizer_ms
        );
        if self.measurable {
            println!(
                "  PHP optimizer / zopt optimizer: {:.2}x (medians), {:.2}x (best rounds: PHP \
                 {:.2} ms, zopt {:.2} ms)",
                self.speedup, self.speedup_best, self.php_optimizer_best_ms, self.zopt_best_ms
            );
        } else {
            println!(
                "  PHP's optimizer time is below this run's noise (its compile time at the level \
                 is not above level 0's): no ratio; run again on a quieter machine or with more \
                 --rounds"
            );
        }
        println!(
            "  peak memory +{} kB (process peak {} kB)",
            self.peak_rss_added_kb, self.peak_rss_kb
        );
        if self.not_implemented {
            println!(
                "  note: some passes of this level are not implemented yet; zopt skipped them"
            );
        }
    }
}

pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Our times against PHP's, from the samples of every round: PHP's cost is its time at the
/// measured level minus its time at level 0 (ns), ours is measured directly (ms).
pub(crate) struct Comparison {
    pub zopt_ms: f64,
    pub zopt_best_ms: f64,
    pub php_level0_ms: f64,
    pub php_level_ms: f64,
    pub php_ms: f64,
    pub php_best_ms: f64,
    /// False when PHP's time at the level was not above level 0's: no ratio then.
    pub measurable: bool,
    pub speedup: f64,
    pub speedup_best: f64,
}

impl Comparison {
    pub fn new(ours_ms: Vec<f64>, php_level0_ns: Vec<f64>, php_level_ns: Vec<f64>) -> Self {
        let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let zopt_best_ms = best(&ours_ms);
        let php_best_ms = (best(&php_level_ns) - best(&php_level0_ns)) / 1e6;
        let zopt_ms = median(ours_ms);
        let php_level0_ms = median(php_level0_ns) / 1e6;
        let php_level_ms = median(php_level_ns) / 1e6;
        let php_ms = php_level_ms - php_level0_ms;
        let measurable = php_ms > 0.0 && php_best_ms > 0.0 && zopt_ms > 0.0;
        Comparison {
            zopt_ms,
            zopt_best_ms,
            php_level0_ms,
            php_level_ms,
            php_ms,
            php_best_ms,
            measurable,
            speedup: if measurable { php_ms / zopt_ms } else { 0.0 },
            speedup_best: if measurable {
                php_best_ms / zopt_best_ms
            } else {
                0.0
            },
        }
    }

    /// Millions of ops per second at the median.
    pub fn mops_per_s(&self, ops: usize) -> f64 {
        if self.zopt_ms > 0.0 {
            ops as f64 / self.zopt_ms / 1e3
        } else {
            0.0
        }
    }
}

/// `VmHWM` / `VmRSS` of this process, kB.
pub(crate) fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Records every file (PHP at level 0 with the zopt extension); files PHP cannot compile
/// are left out and counted.
fn record_all(php: &Php, files: &[SourceFile]) -> Result<(Vec<(PathBuf, Script)>, usize)> {
    let results: Vec<Option<(PathBuf, Script)>> = files
        .par_iter()
        .map(|file| {
            let tmp = tempfile::tempdir().ok()?;
            let compiled = php.compile(&file.path, 0, 0, Some(tmp.path())).ok()?;
            let script = crate::corpus::load_recording(&compiled.recording?).ok()?;
            Some((std::fs::canonicalize(&file.path).ok()?, script))
        })
        .collect();
    let skipped = results.iter().filter(|r| r.is_none()).count();
    Ok((results.into_iter().flatten().collect(), skipped))
}

/// One PHP process compiling every listed file at `level`: total ns inside PHP, and the
/// files it could not compile (in one process, a file redeclaring a function or class an
/// earlier file declared fails).
pub(crate) fn php_round(
    php: &Php,
    list: &Path,
    driver: &Path,
    level: u32,
) -> Result<(f64, Vec<String>)> {
    let output = php
        .command(level, 0)
        .args(["-d", "opcache.memory_consumption=512"])
        .args(["-d", "opcache.max_accelerated_files=100000"])
        .args(["-d", "display_errors=0", "-d", "log_errors=0"])
        .arg(driver)
        .arg(list)
        .output()
        .with_context(|| format!("cannot run {}", php.binary.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let v: serde_json::Value = serde_json::from_str(text.trim())
        .with_context(|| format!("PHP's timing driver printed {text:?}"))?;
    let ns = v["ns"]
        .as_f64()
        .context("PHP's timing driver printed no time")?;
    let failed = v["failed"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Ok((ns, failed))
}

/// The files both sides measure, recorded, with PHP's timing driver and the file list it
/// reads.
pub(crate) struct Prepared {
    pub scripts: Vec<(PathBuf, Script)>,
    /// Op_arrays and ops of `scripts`.
    pub op_arrays: usize,
    pub ops: usize,
    pub list: PathBuf,
    pub driver: PathBuf,
    pub _dir: tempfile::TempDir,
}

/// Records the PHP files under `paths` and keeps those one PHP process compiles in a row.
pub(crate) fn prepare(php: &Php, paths: &[PathBuf]) -> Result<Prepared> {
    let files = crate::corpus::php_files(paths)?;
    if files.is_empty() {
        bail!("no PHP files under the given paths");
    }
    let (mut scripts, skipped) = record_all(php, &files)?;
    if skipped > 0 {
        eprintln!("zopt: {skipped} file(s) PHP could not compile or record were left out");
    }
    let dir = tempfile::tempdir()?;
    let list = dir.path().join("files.txt");
    let driver = dir.path().join("compile.php");
    std::fs::write(&driver, PHP_DRIVER)?;
    let write_list = |scripts: &[(PathBuf, Script)]| -> Result<()> {
        let listing: String = scripts
            .iter()
            .map(|(p, _)| format!("{}\n", p.display()))
            .collect();
        Ok(std::fs::write(&list, listing)?)
    };
    // Both sides measure the same files: those one PHP process compiles in a row.
    write_list(&scripts)?;
    let (_, failed) = php_round(php, &list, &driver, 0)?;
    if !failed.is_empty() {
        eprintln!(
            "zopt: {} file(s) do not compile after the others in one PHP process \
             (redeclarations) and were left out",
            failed.len()
        );
        scripts.retain(|(p, _)| !failed.iter().any(|f| Path::new(f) == p));
        write_list(&scripts)?;
    }
    if scripts.is_empty() {
        bail!("none of the {} files could be measured", files.len());
    }
    let op_arrays = scripts.iter().map(|(_, s)| s.op_arrays().len()).sum();
    let ops = scripts
        .iter()
        .flat_map(|(_, s)| s.op_arrays())
        .map(|o| o.opcodes.len())
        .sum();
    Ok(Prepared {
        scripts,
        op_arrays,
        ops,
        list,
        driver,
        _dir: dir,
    })
}

/// Runs the benchmark over the PHP files under `paths`.
pub fn run(php: &Php, paths: &[PathBuf], level: u32, rounds: usize) -> Result<OptimizerReport> {
    let Prepared {
        scripts,
        op_arrays,
        ops,
        list,
        driver,
        _dir,
    } = prepare(php, paths)?;

    // The total is timed with per-pass timing off (reading the clock around every pass of
    // every op_array is not free); a second run of each round gives the per-pass split.
    let mut options = zend_optimizer::Options::new(level);
    options.verify = false;
    let mut timed = zend_optimizer::Options::new(level);
    timed.verify = false;
    timed.timings = true;
    let mut ours = Vec::new();
    let mut per_pass: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    let mut order: Vec<&'static str> = Vec::new();
    let (mut php0, mut php_l) = (Vec::new(), Vec::new());
    // The passes' working memory is kept from one script to the next, as the extension
    // keeps it from one compile to the next.
    let mut work = zend_optimizer::Workspace::default();
    let rss_before = status_kb("VmRSS:");
    // Reset the peak so it measures the rounds (Linux: clear_refs 5).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    for _ in 0..rounds.max(1) {
        php0.push(php_round(php, &list, &driver, 0)?.0);
        php_l.push(php_round(php, &list, &driver, level)?.0);
        // Each script is optimized right after its copy is made, as PHP's optimizer runs
        // right after its compiler (see zend_optimizer::bench).
        let time =
            zend_optimizer::bench::time_on_fresh_copies(scripts.iter().map(|(_, s)| s), |script| {
                zend_optimizer::optimize_script_in(script, &options, &mut work);
            });
        ours.push(time.as_secs_f64() * 1e3);

        let mut round: BTreeMap<&'static str, Duration> = BTreeMap::new();
        zend_optimizer::bench::time_on_fresh_copies(scripts.iter().map(|(_, s)| s), |script| {
            let outcome = zend_optimizer::optimize_script_in(script, &timed, &mut work);
            for t in outcome.timings {
                *round.entry(t.name).or_default() += t.time;
                if !order.contains(&t.name) {
                    order.push(t.name);
                }
            }
        });
        for name in &order {
            per_pass
                .entry(name)
                .or_default()
                .push(round.get(name).copied().unwrap_or_default().as_secs_f64() * 1e3);
        }
    }
    let peak = status_kb("VmHWM:");
    let c = Comparison::new(ours, php0, php_l);
    Ok(OptimizerReport {
        optimization_level: format!("{level:#x}"),
        files: scripts.len(),
        op_arrays,
        ops,
        rounds: rounds.max(1),
        passes: order
            .iter()
            .map(|name| PassReport {
                name: name.to_string(),
                ms: median(per_pass.remove(name).unwrap_or_default()),
            })
            .collect(),
        zopt_ms: c.zopt_ms,
        zopt_mops_per_s: c.mops_per_s(ops),
        php_level0_ms: c.php_level0_ms,
        php_level_ms: c.php_level_ms,
        php_optimizer_ms: c.php_ms,
        speedup: c.speedup,
        zopt_best_ms: c.zopt_best_ms,
        php_optimizer_best_ms: c.php_best_ms,
        speedup_best: c.speedup_best,
        measurable: c.measurable,
        peak_rss_added_kb: peak.saturating_sub(rss_before),
        peak_rss_kb: peak,
        not_implemented: !zend_optimizer::implemented(
            level,
            zend_ir::dump::debug_level::AFTER_OPTIMIZER,
        ),
    })
}
