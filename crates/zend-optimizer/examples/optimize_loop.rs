//! Optimizes every recording under a directory N times in this process and prints the
//! time per round: a steady workload for `perf record` (the criterion bench measures the
//! same, with statistics; `zopt bench optimizer` compares with PHP's own optimizer).
//!
//! `cargo run --release -p zend-optimizer --example optimize_loop -- DIR [ROUNDS] [LEVEL]`
//! (LEVEL, here and in `--growth`, defaults to the classic level 0x7FFE9F1F, without the
//! SSA passes: give `0x7FFEBFFF` for OPcache's default level)
//!
//! `... -- --analyses DIR [ROUNDS]`: the analyses alone (`analysis::analyze_script` at
//! 0x60), the workload of `zopt bench analyses`.
//!
//! `ZOPT_PER_SCRIPT=N ... -- DIR [ROUNDS] [LEVEL]`: then the N scripts that take the
//! longest (best of the rounds each), with their ops and time per op: where the time of a
//! corpus goes, before a profile of one script.
//!
//! `... -- --growth [LEVEL]`: the whole pipeline on synthetic functions of 100 to 100k ops
//! of each shape zend-cfg generates, with the fitted exponent `k` of `time ~ ops^k`.
//!
//! `... -- --growth analyses`: the same for each stage of the analyses (CFG, DFG, SSA,
//! SCCs, inference, escape) at 0x60, one exponent per stage and shape.
//!
//! `... -- --growth functions [LEVEL]`: the whole pipeline on scripts of 100 to 10k small
//! functions calling each other in a ring (default level 0x7FFEBFFF): what a script's
//! number of functions costs, with its exponent (lookups by name, the call graph and its
//! recursion flags, the DFA pass without the call graph).

use std::path::{Path, PathBuf};
use std::time::Instant;

/// mimalloc, counting allocations, as in the `zopt` binary whose benches this loop
/// profiles.
#[global_allocator]
static GLOBAL: zopt_alloc::Counting = zopt_alloc::Counting;

fn counted() -> (u64, u64) {
    (zopt_alloc::allocations(), zopt_alloc::bytes())
}

fn zop_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            zop_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "zop") {
            out.push(path);
        }
    }
}

fn script_of(op_array: zend_ir::OpArray) -> zend_ir::Script {
    zend_ir::Script {
        filename: op_array.filename.clone(),
        main_op_array: Box::new(op_array),
        function_table: Vec::new(),
        class_table: Vec::new(),
        compiler_halt_offset: None,
        warnings: Vec::new(),
        early_bindings: Vec::new(),
    }
}

/// The best of `rounds` rounds of `runs` optimizations of `script`, in seconds per run.
fn best_time(
    script: &zend_ir::Script,
    rounds: usize,
    runs: usize,
    options: &zend_optimizer::Options,
) -> f64 {
    let mut best = f64::MAX;
    let mut work = zend_optimizer::Workspace::default();
    for _ in 0..rounds {
        let mut copies = vec![script.clone(); runs];
        let start = Instant::now();
        for copy in &mut copies {
            zend_optimizer::optimize_script_in(copy, options, &mut work);
        }
        best = best.min(start.elapsed().as_secs_f64() / runs as f64);
    }
    best
}

fn growth(level: u32) {
    use zend_cfg::synthetic::generate;
    let mut options = zend_optimizer::Options::new(level);
    options.verify = false;
    for shape in growth_shapes() {
        let mut points = Vec::new();
        for &size in &growth_sizes() {
            let script = script_of(generate(shape, size, 8));
            let ops = script.main_op_array.opcodes.len() as f64;
            let best = best_time(&script, 3, (300_000 / size).clamp(2, 1_000), &options);
            println!(
                "growth {shape:?}: {ops:>7} ops {:>12.1} us {:>8.2} Mops/s",
                best * 1e6,
                ops / best / 1e6
            );
            points.push((ops, best));
        }
        if let Some(k) = zend_cfg::synthetic::growth_exponent(&points) {
            println!("growth exponent {shape:?}: {k:.2}");
        }
    }
}

/// A script of `n` functions, each calling the next with its argument plus one, the last
/// calling the first (as PHP compiles `function fK($a) { return fK+1($a + 1); }`).
fn function_ring(n: usize) -> zend_ir::Script {
    use std::fmt::Write;
    let mut zop = String::from(
        "zop 1\nscript \"/ring.php\"\n\nmain {\n  T 0\n  #0 = int(1)\n  0000 RETURN #0:int(1)\n}\n",
    );
    for k in 0..n {
        let next = (k + 1) % n;
        write!(
            zop,
            "\nfunction \"f{k}\" {{\n  name \"f{k}\"\n  args 1 required 1\n  arg $a\n  T 2\n  \
             vars $a\n  #0 = string(\"f{next}\")\n  #1 = string(\"f{next}\")\n  #2 = int(1)\n  \
             #3 = null\n  0000 CV0($a) = RECV 1\n  \
             0001 INIT_FCALL_BY_NAME 4294967295 #0:string(\"f{next}\") ext=1\n  \
             0002 T1 = ADD CV0($a) #2:int(1)\n  0003 SEND_VAL_EX T1 1 result=80\n  \
             0004 V2 = DO_FCALL_BY_NAME\n  0005 RETURN V2\n  0006 RETURN #3:null\n}}\n"
        )
        .expect("writing to a String");
    }
    zend_ir::zop::parse(&zop).expect("the ring is valid .zop")
}

/// Growth with the number of functions in a script ([`function_ring`]).
fn growth_functions(level: u32) {
    let mut options = zend_optimizer::Options::new(level);
    options.verify = false;
    let sizes = std::env::var("ZOPT_GROWTH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![100, 1_000, 10_000]);
    let mut points = Vec::new();
    for &n in &sizes {
        let best = best_time(&function_ring(n), 3, (20_000 / n).clamp(2, 200), &options);
        println!("growth functions: {n:>6} functions {:>12.1} us", best * 1e6);
        points.push((n as f64, best));
    }
    if let Some(k) = zend_cfg::synthetic::growth_exponent(&points) {
        println!("growth exponent functions: {k:.2}");
    }
}

/// The shapes to time: all, or those `ZOPT_GROWTH_SHAPES` names (`IfChain,Switch`).
fn growth_shapes() -> Vec<zend_cfg::synthetic::Shape> {
    use zend_cfg::synthetic::Shape;
    let all = [Shape::IfChain, Shape::LoopNest, Shape::Switch];
    match std::env::var("ZOPT_GROWTH_SHAPES") {
        Ok(names) => all
            .into_iter()
            .filter(|s| names.split(',').any(|n| n == format!("{s:?}")))
            .collect(),
        Err(_) => all.to_vec(),
    }
}

fn growth_sizes() -> Vec<usize> {
    std::env::var("ZOPT_GROWTH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![100, 1_000, 10_000, 100_000])
}

/// Per-stage growth of the analyses: for each shape and size the best of three runs of
/// every stage, then one fitted exponent per stage.
fn growth_analyses() {
    use zend_cfg::synthetic::{generate, growth_exponent};
    use zend_optimizer::analysis::{analyze_script_timed, StageTimes};
    for shape in growth_shapes() {
        let mut points: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 7];
        for &size in &growth_sizes() {
            let script = script_of(generate(shape, size, 8));
            let ops = script.main_op_array.opcodes.len() as f64;
            let runs = (300_000 / size).clamp(2, 1_000);
            let mut best: Option<[f64; 7]> = None;
            for _ in 0..3 {
                let mut times = StageTimes::default();
                for _ in 0..runs {
                    std::hint::black_box(analyze_script_timed(&script, 0x60, &mut times));
                }
                let mut row = [0.0; 7];
                for (k, (_, d)) in times.stages().iter().enumerate() {
                    row[k] = d.as_secs_f64() / runs as f64;
                }
                row[6] = row[..6].iter().sum();
                best = Some(match best {
                    None => row,
                    Some(b) => std::array::from_fn(|k| b[k].min(row[k])),
                });
            }
            let best = best.expect("three rounds ran");
            let names = StageTimes::default().stages().map(|(n, _)| n);
            let cells: Vec<String> = names
                .iter()
                .zip(&best)
                .map(|(n, t)| format!("{n} {:.1} us", t * 1e6))
                .collect();
            println!(
                "growth {shape:?}: {ops:>7} ops, total {:>10.1} us; {}",
                best[6] * 1e6,
                cells.join(", ")
            );
            for (k, t) in best.iter().enumerate() {
                points[k].push((ops, *t));
            }
        }
        let names = StageTimes::default().stages().map(|(n, _)| n);
        let exps: Vec<String> = names
            .iter()
            .chain(&["total"])
            .zip(&points)
            .filter_map(|(n, p)| growth_exponent(p).map(|k| format!("{n} {k:.2}")))
            .collect();
        println!("growth exponents {shape:?}: {}", exps.join(", "));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a == "--growth") && args.get(2).is_some_and(|a| a == "analyses")
    {
        growth_analyses();
        return;
    }
    if args.get(1).is_some_and(|a| a == "--growth") && args.get(2).is_some_and(|a| a == "functions")
    {
        let level = args
            .get(3)
            .and_then(|l| u32::from_str_radix(l.trim_start_matches("0x"), 16).ok())
            .unwrap_or(0x7FFE_BFFF);
        growth_functions(level);
        return;
    }
    if args.get(1).is_some_and(|a| a == "--growth") {
        let level = args
            .get(2)
            .and_then(|l| u32::from_str_radix(l.trim_start_matches("0x"), 16).ok())
            .unwrap_or(zend_optimizer::CLASSIC_OPTIMIZATION_LEVEL);
        growth(level);
        return;
    }
    let analyses_only = args.get(1).is_some_and(|a| a == "--analyses");
    let args: Vec<String> = if analyses_only {
        args[..1].iter().chain(&args[2..]).cloned().collect()
    } else {
        args
    };
    let Some(dir) = args.get(1) else {
        eprintln!("usage: optimize_loop DIR [ROUNDS] [LEVEL]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(20);
    let level = args
        .get(3)
        .and_then(|l| u32::from_str_radix(l.trim_start_matches("0x"), 16).ok())
        .unwrap_or(zend_optimizer::CLASSIC_OPTIMIZATION_LEVEL);
    let mut files = Vec::new();
    zop_files(Path::new(dir), &mut files);
    files.sort();
    let scripts: Vec<zend_ir::Script> = files
        .iter()
        .filter_map(|f| zend_ir::corpus::read(f).ok())
        .collect();
    if scripts.is_empty() {
        eprintln!("no recordings under {dir}");
        std::process::exit(1);
    }
    let mut options = zend_optimizer::Options::new(level);
    options.verify = false;
    let ops: usize = scripts
        .iter()
        .flat_map(|s| s.op_arrays())
        .map(|o| o.opcodes.len())
        .sum();
    let mut best = f64::MAX;
    let (mut allocs, mut bytes) = (0, 0);
    // The passes' working memory, kept from one script to the next as the extension keeps it.
    let mut work = zend_optimizer::Workspace::default();
    for _ in 0..rounds {
        // Counted around the work only: the copies' allocations are not the optimizer's.
        (allocs, bytes) = (0, 0);
        let time = zend_optimizer::bench::time_on_fresh_copies(&scripts, |script| {
            let (a, b) = counted();
            if analyses_only {
                std::hint::black_box(zend_optimizer::analysis::analyze_script(script, 0x60));
            } else {
                zend_optimizer::optimize_script_in(script, &options, &mut work);
            }
            allocs += counted().0 - a;
            bytes += counted().1 - b;
        });
        best = best.min(time.as_secs_f64() * 1e3);
    }
    // The analyses run at 0x60 whatever LEVEL says.
    let what = if analyses_only {
        "the analyses (0x60)".to_string()
    } else {
        format!("level {level:#x}")
    };
    println!(
        "{} scripts, {ops} ops, {what}: best of {rounds} rounds {best:.2} ms; \
         {allocs} allocations ({:.2} per op), {:.1} MB",
        scripts.len(),
        allocs as f64 / ops as f64,
        bytes as f64 / 1e6
    );
    if let Some(top) = std::env::var("ZOPT_PER_SCRIPT")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        per_script(&files, &scripts, rounds, &options, top);
    }
}

/// The `top` scripts that take the longest to optimize, each timed alone.
fn per_script(
    files: &[PathBuf],
    scripts: &[zend_ir::Script],
    rounds: usize,
    options: &zend_optimizer::Options,
    top: usize,
) {
    let mut rows: Vec<(f64, usize, &Path)> = scripts
        .iter()
        .zip(files)
        .map(|(script, file)| {
            let ops = script.op_arrays().iter().map(|o| o.opcodes.len()).sum();
            (best_time(script, rounds, 1, options), ops, file.as_path())
        })
        .collect();
    let total: f64 = rows.iter().map(|r| r.0).sum();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (t, ops, file) in rows.iter().take(top) {
        println!(
            "{:>9.1} us {:>5.1}% {ops:>6} ops {:>7.0} ns/op  {}",
            t * 1e6,
            100.0 * t / total,
            t * 1e9 / *ops.max(&1) as f64,
            file.display()
        );
    }
}
