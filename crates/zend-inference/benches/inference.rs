//! Inference throughput (ops/s) on a recorded corpus, and how inference scales on deep
//! loop nests (the iteration bound of range widening/narrowing and the type worklist).
//!
//! Input: every `*.zop` under `$ZOPT_BENCH_CORPUS` (default `bench-data/recordings` at the
//! workspace root; tools/record-corpus.sh produces it). CFG, SSA, false dependencies and
//! SCCs are built once before timing; the bench times `zend_inference::infer` (ranges,
//! types, return info) over every op_array the DFA pass analyses.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use zend_call_graph::ScriptInfo;
use zend_cfg::synthetic::{generate, Shape};
use zend_cfg::{BuildFlags, Cfg, FuncFlags};
use zend_dfg::Dfg;
use zend_inference::{infer, Context};
use zend_ir::{OpArray, PhpStr, Script};
use zend_ssa::{NoClasses, Ssa};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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

fn load(path: &Path) -> Option<Script> {
    let bytes = std::fs::read(path).ok()?;
    match zend_ir::zop::from_binary(&bytes) {
        Ok(script) => Some(script),
        Err(_) => zend_ir::zop::parse(std::str::from_utf8(&bytes).ok()?).ok(),
    }
}

/// One analysed op_array: its SSA, ready for inference.
struct Prepared {
    index: usize,
    cfg: Cfg,
    ssa: Ssa,
}

fn prepare(op_array: &OpArray, index: usize) -> Option<Prepared> {
    if !op_array.try_catch_array.is_empty() {
        return None;
    }
    let cfg = Cfg::build(op_array, BuildFlags::NO_ENTRY_PREDECESSORS).ok()?;
    if cfg.func_flags.contains(FuncFlags::INDIRECT_VAR_ACCESS) {
        return None;
    }
    let dfg = Dfg::build(op_array, &cfg, BuildFlags::empty());
    let mut ssa = Ssa::build(op_array, &cfg, &dfg, &NoClasses, BuildFlags::empty()).ok()?;
    ssa.find_false_dependencies(op_array);
    ssa.find_sccs(op_array);
    Some(Prepared { index, cfg, ssa })
}

fn run_script(script: &Script, prepared: &[Prepared]) -> usize {
    let info = ScriptInfo::new(script);
    let ctx = Context::new(&info, 0x60);
    let mut returns = ctx.initial_return_infos();
    let mut vars = 0;
    for p in prepared {
        let op_array = info.op_arrays[p.index];
        let inf = infer(op_array, Some(p.index), &p.cfg, &p.ssa, &ctx, &returns);
        vars += inf.vars.len();
        if let Some(ri) = inf.return_info {
            returns[p.index] = Some(ri);
        }
    }
    vars
}

fn corpus(c: &mut Criterion) {
    let dir = std::env::var_os("ZOPT_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("bench-data/recordings"));
    let mut files = Vec::new();
    zop_files(&dir, &mut files);
    let scripts: Vec<Script> = files.iter().filter_map(|f| load(f)).collect();
    let prepared: Vec<Vec<Prepared>> = scripts
        .iter()
        .map(|s| {
            let info = ScriptInfo::new(s);
            info.op_arrays
                .iter()
                .enumerate()
                .filter_map(|(i, o)| prepare(o, i))
                .collect()
        })
        .collect();
    let ops: usize = scripts
        .iter()
        .zip(&prepared)
        .map(|(s, p)| {
            let info = ScriptInfo::new(s);
            p.iter()
                .map(|p| info.op_arrays[p.index].opcodes.len())
                .sum::<usize>()
        })
        .sum();
    eprintln!(
        "corpus {}: {} scripts, {} op_arrays, {ops} ops",
        dir.display(),
        scripts.len(),
        prepared.iter().map(Vec::len).sum::<usize>()
    );
    if ops == 0 {
        return;
    }
    let mut g = c.benchmark_group("inference");
    g.throughput(Throughput::Elements(ops as u64));
    g.sample_size(10);
    g.bench_function("corpus", |b| {
        b.iter(|| {
            scripts
                .iter()
                .zip(&prepared)
                .map(|(s, p)| run_script(s, p))
                .sum::<usize>()
        })
    });
    g.finish();
}

/// Deep loop nests of growing size: time per op and the fitted growth exponent.
fn deep_loops(c: &mut Criterion) {
    let mut g = c.benchmark_group("inference_loop_nest");
    g.sample_size(10);
    let mut points = Vec::new();
    for &n in &[100usize, 1_000, 10_000] {
        let f = generate(Shape::LoopNest, n, 8);
        let ops = f.opcodes.len();
        let script = Script {
            filename: PhpStr::from("bench.php"),
            main_op_array: Box::new(f.clone()),
            function_table: vec![(PhpStr::from("f"), Box::new(f))],
            class_table: Vec::new(),
            compiler_halt_offset: None,
            warnings: Vec::new(),
            early_bindings: Vec::new(),
        };
        let info = ScriptInfo::new(&script);
        let Some(p) = prepare(info.op_arrays[1], 1) else {
            continue;
        };
        let prepared = vec![p];
        let start = Instant::now();
        run_script(&script, &prepared);
        points.push((ops as f64, start.elapsed().as_secs_f64()));
        g.throughput(Throughput::Elements(ops as u64));
        g.bench_with_input(BenchmarkId::from_parameter(ops), &ops, |b, _| {
            b.iter(|| run_script(&script, &prepared))
        });
    }
    g.finish();
    if let Some(k) = zend_cfg::synthetic::growth_exponent(&points) {
        eprintln!("growth exponent (loop nest): time ~ ops^{k:.2}");
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = corpus, deep_loops
}
criterion_main!(benches);
