//! The optimizer's throughput (ops/s) on a recorded corpus, per optimization level.
//!
//! Input: every `*.zop` under `$ZOPT_BENCH_CORPUS` (default `bench-data/recordings` at the
//! workspace root; tools/record-corpus.sh produces it). Each iteration optimizes a fresh
//! copy of every script, made right before it (copying is not timed: see
//! `zend_optimizer::bench`). `zopt bench optimizer` measures the same
//! against PHP's own optimizer in one run.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::path::{Path, PathBuf};
use zend_ir::Script;
use zend_optimizer::bench::time_on_fresh_copies;
use zend_optimizer::{
    optimize_script_in, Options, Workspace, CLASSIC_OPTIMIZATION_LEVEL, DEFAULT_OPTIMIZATION_LEVEL,
};

fn corpus_dir() -> PathBuf {
    std::env::var_os("ZOPT_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-data/recordings")
        })
}

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

fn corpus() -> Vec<Script> {
    let mut files = Vec::new();
    zop_files(&corpus_dir(), &mut files);
    files
        .iter()
        .filter_map(|f| zend_ir::corpus::read(f).ok())
        .collect()
}

fn bench(c: &mut Criterion) {
    let scripts = corpus();
    if scripts.is_empty() {
        eprintln!(
            "no recordings under {}: run tools/record-corpus.sh first",
            corpus_dir().display()
        );
        return;
    }
    let ops: usize = scripts
        .iter()
        .flat_map(|s| s.op_arrays())
        .map(|o| o.opcodes.len())
        .sum();
    let mut group = c.benchmark_group("optimizer");
    group.throughput(Throughput::Elements(ops as u64));
    group.sample_size(10);
    for level in [
        DEFAULT_OPTIMIZATION_LEVEL,
        CLASSIC_OPTIMIZATION_LEVEL,
        0x1,
        0x10,
    ] {
        let mut options = Options::new(level);
        options.verify = false;
        group.bench_with_input(
            BenchmarkId::new("optimize_script", format!("{level:#x}")),
            &level,
            |b, _| {
                let mut work = Workspace::default();
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| {
                            time_on_fresh_copies(&scripts, |script| {
                                optimize_script_in(script, &options, &mut work);
                            })
                        })
                        .sum()
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
