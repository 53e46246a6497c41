//! Throughput (zend_ops per second) of the three SSA builders on a recorded real corpus:
//! PHP-style SSA (`zend_ssa::Ssa::build`, with pis and use-def chains), Cytron et al.
//! (minimal, semi-pruned, pruned) and Braun et al.
//!
//! Input: every `*.zop` under `$ZOPT_BENCH_CORPUS` (default `bench-data/recordings` at the
//! workspace root; `tools/record-corpus.sh` produces it). The op_arrays the DFA pass
//! analyses are used; CFG and liveness are built once, outside the timing, so each
//! measurement is the SSA construction alone.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::Path;
use std::time::Duration;
use zend_cfg::{BuildFlags, Cfg, FuncFlags};
use zend_dfg::Dfg;
use zend_ir::OpArray;
use zend_ssa::{NoClasses, Ssa};
use zend_ssa_textbook::{braun, cytron};

struct Prepared {
    op_array: OpArray,
    cfg: Cfg,
    dfg: Dfg,
}

fn corpus() -> Vec<Prepared> {
    let dir = zend_ir::corpus::bench_corpus_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-data/recordings"),
    );
    let files = zend_ir::corpus::zop_files(&dir);
    let mut out = Vec::new();
    for file in &files {
        let Ok(script) = zend_ir::corpus::read(file) else {
            continue;
        };
        for op_array in script.op_arrays() {
            if !op_array.try_catch_array.is_empty() {
                continue;
            }
            let Ok(cfg) = Cfg::build(op_array, BuildFlags::NO_ENTRY_PREDECESSORS) else {
                continue;
            };
            if cfg.func_flags.contains(FuncFlags::INDIRECT_VAR_ACCESS) {
                continue;
            }
            let dfg = Dfg::build(op_array, &cfg, BuildFlags::empty());
            out.push(Prepared {
                op_array: op_array.clone(),
                cfg,
                dfg,
            });
        }
    }
    eprintln!(
        "corpus {}: {} files, {} op_arrays",
        dir.display(),
        files.len(),
        out.len()
    );
    out
}

fn bench(c: &mut Criterion) {
    let all = corpus();
    if all.is_empty() {
        eprintln!("no corpus: run tools/record-corpus.sh");
        return;
    }
    let ops: usize = all.iter().map(|p| p.op_array.opcodes.len()).sum();
    let mut group = c.benchmark_group("ssa-builders");
    group.throughput(Throughput::Elements(ops as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("php-style", |b| {
        b.iter(|| {
            for p in &all {
                std::hint::black_box(
                    Ssa::build(&p.op_array, &p.cfg, &p.dfg, &NoClasses, BuildFlags::empty()).ok(),
                );
            }
        })
    });
    for (name, pruning) in [
        ("cytron-minimal", cytron::Pruning::Minimal),
        ("cytron-semi-pruned", cytron::Pruning::SemiPruned),
        ("cytron-pruned", cytron::Pruning::Pruned),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                for p in &all {
                    std::hint::black_box(cytron::build(&p.op_array, &p.cfg, &p.dfg, pruning));
                }
            })
        });
    }
    group.bench_function("braun", |b| {
        b.iter(|| {
            for p in &all {
                std::hint::black_box(braun::build(&p.op_array, &p.cfg));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
