//! CFG + DFG + SSA throughput, in zend_ops per second, and how time grows with function size.
//!
//! Input: every `*.zop` under `$ZOPT_BENCH_CORPUS` (default `bench-data/recordings` at the
//! workspace root; see benches/README.md for producing it). Every op_array the DFA pass
//! analyses (no try/catch, no indirect variable access) is built and verified once before
//! timing; the bench then times CFG (blocks, dominators, loops) + liveness + SSA (with
//! use-def chains) over all of them.
//!
//! Growth: synthetic functions of 10 to 100k ops (if-chains, loop nests, switches) are
//! timed, and the exponent `k` of `time ~ ops^k` is fitted by least squares on log-log
//! scale and printed (`growth exponent` lines).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use zend_cfg::synthetic::{generate, growth_exponent, Shape};
use zend_cfg::{BuildFlags, Cfg, FuncFlags};
use zend_dfg::Dfg;
use zend_ir::OpArray;
use zend_ssa::{NoClasses, Ssa};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The op_arrays of the corpus the DFA pass analyses.
fn corpus() -> Vec<OpArray> {
    let dir = std::env::var_os("ZOPT_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("bench-data/recordings"));
    let files = zend_ir::corpus::zop_files(&dir);
    let mut op_arrays = Vec::new();
    let mut unreadable = 0;
    for file in &files {
        let Ok(script) = zend_ir::corpus::read(file) else {
            unreadable += 1;
            continue;
        };
        for op_array in script.op_arrays() {
            if op_array.try_catch_array.is_empty() {
                op_arrays.push(op_array.clone());
            }
        }
    }
    eprintln!(
        "corpus {}: {} files ({unreadable} unreadable), {} op_arrays without try/catch",
        dir.display(),
        files.len(),
        op_arrays.len()
    );
    op_arrays
}

/// CFG + DFG + SSA with use-def chains, as the DFA pass builds them; `None` where the DFA
/// pass refuses the op_array.
fn analyse(op_array: &OpArray) -> Option<(Cfg, Ssa)> {
    let cfg = Cfg::build(op_array, BuildFlags::NO_ENTRY_PREDECESSORS).ok()?;
    if cfg.func_flags.contains(FuncFlags::INDIRECT_VAR_ACCESS) {
        return None;
    }
    let dfg = Dfg::build(op_array, &cfg, BuildFlags::empty());
    let ssa = Ssa::build(op_array, &cfg, &dfg, &NoClasses, BuildFlags::empty()).ok()?;
    Some((cfg, ssa))
}

fn bench_corpus(c: &mut Criterion) {
    let all = corpus();
    // Verify every SSA form once, and keep what the DFA pass analyses.
    let mut analysed = Vec::new();
    let mut failures = 0;
    for op_array in all {
        if let Some((cfg, mut ssa)) = analyse(&op_array) {
            ssa.find_false_dependencies(&op_array);
            ssa.find_sccs(&op_array);
            if let Err(e) = zend_ssa::verify(&op_array, &cfg, &ssa) {
                failures += 1;
                eprintln!("{e}");
            }
            analysed.push(op_array);
        }
    }
    let ops: usize = analysed.iter().map(|o| o.opcodes.len()).sum();
    eprintln!(
        "verified {} op_arrays ({ops} ops): {failures} verifier failures",
        analysed.len()
    );
    if analysed.is_empty() {
        eprintln!("no corpus: run tools/record-corpus.sh (see benches/README.md)");
        return;
    }
    let mut group = c.benchmark_group("corpus");
    group.throughput(Throughput::Elements(ops as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("cfg+dfg+ssa", |b| {
        b.iter(|| {
            for op_array in &analysed {
                std::hint::black_box(analyse(op_array));
            }
        })
    });
    group.finish();
}

const SIZES: [usize; 5] = [10, 100, 1_000, 10_000, 100_000];
const SHAPES: [Shape; 3] = [Shape::IfChain, Shape::LoopNest, Shape::Switch];

fn bench_growth(c: &mut Criterion) {
    let mut group = c.benchmark_group("growth");
    group.sample_size(10);
    for shape in SHAPES {
        for size in SIZES {
            let op_array = generate(shape, size, 8);
            group.throughput(Throughput::Elements(op_array.opcodes.len() as u64));
            group.bench_with_input(
                BenchmarkId::new(format!("{shape:?}"), size),
                &op_array,
                |b, o| b.iter(|| std::hint::black_box(analyse(o))),
            );
        }
    }
    group.finish();

    // The fitted exponent of time against size, from the best of several timings each.
    for shape in SHAPES {
        let mut points = Vec::new();
        for size in SIZES {
            let op_array = generate(shape, size, 8);
            let runs = (200_000 / size).clamp(3, 2_000);
            let mut best = f64::MAX;
            for _ in 0..5 {
                let start = Instant::now();
                for _ in 0..runs {
                    std::hint::black_box(analyse(&op_array));
                }
                best = best.min(start.elapsed().as_secs_f64() / runs as f64);
            }
            let ops = op_array.opcodes.len() as f64;
            println!(
                "growth {shape:?}: {ops:>7} ops {:>12.1} us {:>10.2} Mops/s",
                best * 1e6,
                ops / best / 1e6
            );
            points.push((ops, best));
        }
        if let Some(k) = growth_exponent(&points) {
            println!("growth exponent {shape:?}: {k:.3} (time ~ ops^k, 10..100k ops)");
        }
    }
}

criterion_group!(benches, bench_corpus, bench_growth);
criterion_main!(benches);
