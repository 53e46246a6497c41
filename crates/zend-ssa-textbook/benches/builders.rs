//! Throughput (zend_ops per second) of the three SSA builders on a recorded real corpus:
//! PHP-style SSA (`zend_ssa::Ssa::build`, with pis and use-def chains), Cytron et al.
//! (minimal, semi-pruned, pruned) and Braun et al.
//!
//! Input: every `*.zop` under `$ZOPT_BENCH_CORPUS` (default `bench-data/recordings` at the
//! workspace root; `tools/record-corpus.sh` produces it). The op_arrays the DFA pass
//! analyses are used; CFG and liveness are built once, outside the timing, so each
//! measurement is the SSA construction alone.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::{Path, PathBuf};
use std::time::Duration;
use zend_cfg::{BuildFlags, Cfg, FuncFlags};
use zend_dfg::Dfg;
use zend_ir::{OpArray, Script};
use zend_ssa::{NoClasses, Ssa};
use zend_ssa_textbook::{braun, cytron};

fn zop_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            zop_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "zop") {
            out.push(path);
        }
    }
}

fn load(path: &Path) -> Option<Script> {
    let bytes = std::fs::read(path).ok()?;
    match zend_ir::zop::from_binary(&bytes) {
        Ok(script) => Some(script),
        Err(_) => zend_ir::zop::parse(std::str::from_utf8(&bytes).ok()?).ok(),
    }
}

struct Prepared {
    op_array: OpArray,
    cfg: Cfg,
    dfg: Dfg,
}

fn corpus() -> Vec<Prepared> {
    let dir = std::env::var_os("ZOPT_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-data/recordings")
        });
    let mut files = Vec::new();
    zop_files(&dir, &mut files);
    let mut out = Vec::new();
    for file in &files {
        let Some(script) = load(file) else { continue };
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
