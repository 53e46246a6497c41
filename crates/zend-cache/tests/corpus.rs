//! Every recording of the real corpus (`$ZOPT_BENCH_CORPUS`, default `bench-data/recordings`,
//! made by tools/record-corpus.sh) survives persist → load exactly, with phase 1's size equal
//! to phase 2's, and its views agree with the decoded script. Without a corpus (it is not
//! committed) the test says so and checks nothing; the fixtures are covered by
//! crates/zopt/tests/cache.rs, which records them afresh.

use std::path::{Path, PathBuf};
use zend_cache::*;

fn find_zop(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for p in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
        if p.is_dir() {
            find_zop(&p, out);
        } else if p.extension().is_some_and(|e| e == "zop") {
            out.push(p);
        }
    }
}

#[test]
fn corpus_recordings_roundtrip() {
    let dir = std::env::var_os("ZOPT_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-data/recordings")
        });
    let mut files = Vec::new();
    find_zop(&dir, &mut files);
    if files.is_empty() {
        eprintln!(
            "no recordings under {}: nothing to check (run tools/record-corpus.sh)",
            dir.display()
        );
        return;
    }
    let (mut scripts, mut bytes, mut ops) = (0, 0, 0u64);
    for f in &files {
        let text = std::fs::read(f).unwrap();
        let script = match zend_ir::zop::from_binary(&text) {
            Ok(s) => s,
            Err(_) => zend_ir::zop::parse(std::str::from_utf8(&text).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display())),
        };
        let plan = persist_calc(&script).unwrap();
        let body = persist(&script).unwrap();
        assert_eq!(body.len(), plan.size(), "{}", f.display());
        let view = ScriptView::new(&body).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(view.to_script(), script, "{}", f.display());
        let model_ops: usize = script.op_arrays().iter().map(|oa| oa.opcodes.len()).sum();
        let mut view_ops = 0;
        view.for_each_op_array(|oa| view_ops += oa.ops().count());
        // op_arrays() skips abstract methods and aliases; the view counts every op_array.
        assert!(view_ops >= model_ops);
        scripts += 1;
        bytes += body.len();
        ops += view_ops as u64;
    }
    eprintln!("{scripts} corpus recordings round-tripped ({ops} ops, {bytes} persisted bytes)");
}
