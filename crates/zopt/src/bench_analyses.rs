//! `zopt bench analyses`: the analysis chain PHP's DFA pass runs (CFG with dominators and
//! loops, def/use sets and liveness, e-SSA, false dependencies and SCCs, types and ranges,
//! escape analysis — [`zend_optimizer::analysis::analyze_script`] at level 0x60, callees'
//! return types feeding their callers) against PHP's DFA path on the same files, in the
//! same run.
//!
//! Ours: every file is recorded once as compiled (level 0); each round analyses every
//! script in this process, once untimed per stage (the total) and once with the clock read
//! around every stage of every op_array (the split).
//!
//! PHP's: the timing driver of `zopt bench optimizer` compiles every file with
//! `opcache_compile_file` at level 0 and at 0x60 (PASS_6 + PASS_7: the DFA pass with the
//! call graph), one PHP process per round and level. The difference is PHP's whole DFA
//! path — the same analyses plus the DFA transformations and their bookkeeping — so the
//! ratio is conservative for us.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;
use zend_optimizer::analysis::{analyze_script, analyze_script_timed, StageTimes};
use zend_optimizer::bench::time_on_fresh_copies;

use crate::bench_optimizer::{
    median, php_round, prepare, status_kb, Comparison, PassReport, Prepared,
};
use crate::php::Php;

/// PHP's level with the DFA pass and the call graph, nothing else.
const DFA_LEVEL: u32 = 0x60;

#[derive(Debug, Clone, Serialize)]
pub struct AnalysesReport {
    pub files: usize,
    pub op_arrays: usize,
    /// Op_arrays PHP's DFA pass analyses (the others: try/catch, `$$var`, ...).
    pub analysed: usize,
    pub ops: usize,
    pub rounds: usize,
    /// Median per stage over the rounds, ms (from the timed run).
    pub stages: Vec<PassReport>,
    /// Median of the whole chain, untimed per stage, ms.
    pub zopt_ms: f64,
    pub zopt_best_ms: f64,
    pub zopt_mops_per_s: f64,
    /// PHP's in-process compile time at level 0 and at 0x60, medians, ms.
    pub php_level0_ms: f64,
    pub php_dfa_level_ms: f64,
    /// `php_dfa_level_ms - php_level0_ms`: PHP's DFA path.
    pub php_dfa_ms: f64,
    pub php_dfa_best_ms: f64,
    /// `php_dfa_ms / zopt_ms`: above 1, zopt is faster; 0 when not `measurable`.
    pub speedup: f64,
    pub speedup_best: f64,
    /// False when PHP's time at 0x60 was not above level 0's in this run.
    pub measurable: bool,
    /// Allocations per op of one analysis of every script (0 when the counting allocator is
    /// not installed: only the `zopt` binary installs it).
    pub allocations_per_op: f64,
    pub peak_rss_added_kb: u64,
    pub peak_rss_kb: u64,
}

impl AnalysesReport {
    pub fn print(&self) {
        println!(
            "{} files, {} op_arrays ({} analysed by PHP's DFA pass), {} ops, median of {} \
             rounds:",
            self.files, self.op_arrays, self.analysed, self.ops, self.rounds
        );
        for s in &self.stages {
            println!("  {:<14} {:9.2} ms", s.name, s.ms);
        }
        println!(
            "  zopt total     {:9.2} ms   ({:.2} M ops/s; best round {:.2} ms)",
            self.zopt_ms, self.zopt_mops_per_s, self.zopt_best_ms
        );
        println!(
            "  PHP compile    {:9.2} ms at level 0, {:.2} ms at 0x60: DFA path {:.2} ms",
            self.php_level0_ms, self.php_dfa_level_ms, self.php_dfa_ms
        );
        if self.measurable {
            println!(
                "  PHP DFA path / zopt analyses: {:.2}x (medians), {:.2}x (best rounds: PHP \
                 {:.2} ms, zopt {:.2} ms)",
                self.speedup, self.speedup_best, self.php_dfa_best_ms, self.zopt_best_ms
            );
        } else {
            println!(
                "  PHP's DFA path time is below this run's noise: no ratio; run again on a \
                 quieter machine or with more --rounds"
            );
        }
        if self.allocations_per_op > 0.0 {
            println!("  allocations     {:.2} per op", self.allocations_per_op);
        }
        println!(
            "  peak memory +{} kB (process peak {} kB)",
            self.peak_rss_added_kb, self.peak_rss_kb
        );
    }
}

/// Runs the benchmark over the PHP files under `paths`.
pub fn run(php: &Php, paths: &[PathBuf], rounds: usize) -> Result<AnalysesReport> {
    let Prepared {
        scripts,
        op_arrays,
        ops,
        list,
        driver,
        _dir,
    } = prepare(php, paths)?;

    let rss_before = status_kb("VmRSS:");
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    // One untimed pass first: how many op_arrays PHP analyses, and the allocations.
    let before = zopt_alloc::allocations();
    let analysed: usize = scripts
        .iter()
        .map(|(_, s)| {
            analyze_script(s, DFA_LEVEL)
                .functions
                .iter()
                .filter(|f| f.is_ok())
                .count()
        })
        .sum();
    let allocations = zopt_alloc::allocations() - before;

    let (mut ours, mut php0, mut php_dfa) = (Vec::new(), Vec::new(), Vec::new());
    let mut per_stage: Vec<Vec<f64>> = vec![Vec::new(); StageTimes::default().stages().len()];
    for _ in 0..rounds.max(1) {
        php0.push(php_round(php, &list, &driver, 0)?.0);
        php_dfa.push(php_round(php, &list, &driver, DFA_LEVEL)?.0);
        // Each script is analysed right after a copy of it is made, as PHP analyses what
        // its compiler has just written (see zend_optimizer::bench).
        let time = time_on_fresh_copies(scripts.iter().map(|(_, s)| s), |script| {
            std::hint::black_box(analyze_script(script, DFA_LEVEL));
        });
        ours.push(time.as_secs_f64() * 1e3);
        let mut times = StageTimes::default();
        time_on_fresh_copies(scripts.iter().map(|(_, s)| s), |script| {
            std::hint::black_box(analyze_script_timed(script, DFA_LEVEL, &mut times));
        });
        for (k, (_, t)) in times.stages().iter().enumerate() {
            per_stage[k].push(t.as_secs_f64() * 1e3);
        }
    }
    let peak = status_kb("VmHWM:");
    let c = Comparison::new(ours, php0, php_dfa);
    let names = StageTimes::default().stages().map(|(n, _)| n);
    Ok(AnalysesReport {
        files: scripts.len(),
        op_arrays,
        analysed,
        ops,
        rounds: rounds.max(1),
        stages: names
            .iter()
            .zip(per_stage)
            .map(|(name, v)| PassReport {
                name: name.to_string(),
                ms: median(v),
            })
            .collect(),
        zopt_ms: c.zopt_ms,
        zopt_best_ms: c.zopt_best_ms,
        zopt_mops_per_s: c.mops_per_s(ops),
        php_level0_ms: c.php_level0_ms,
        php_dfa_level_ms: c.php_level_ms,
        php_dfa_ms: c.php_ms,
        php_dfa_best_ms: c.php_best_ms,
        speedup: c.speedup,
        speedup_best: c.speedup_best,
        measurable: c.measurable,
        allocations_per_op: if ops > 0 {
            allocations as f64 / ops as f64
        } else {
            0.0
        },
        peak_rss_added_kb: peak.saturating_sub(rss_before),
        peak_rss_kb: peak,
    })
}
