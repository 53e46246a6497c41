//! `live_ranges::calc` against PHP's own live ranges: every op_array of every fixture
//! recording (PHP's compiler output, whose live ranges `pass_two` computed) and of the
//! recorded Debian corpus when present (`$ZOPT_BENCH_CORPUS`, default
//! `bench-data/recordings`, made by tools/record-corpus.sh) gets exactly its recorded
//! ranges back — same order, kinds and bounds.

use std::path::{Path, PathBuf};

use zend_ir::{corpus, OpArray, Script};
use zend_optimizer::live_ranges;

fn all_op_arrays(script: &Script) -> Vec<&OpArray> {
    let mut out = Vec::new();
    let mut stack: Vec<&OpArray> = vec![&script.main_op_array];
    stack.extend(script.function_table.iter().map(|(_, f)| &**f));
    for (_, ce) in &script.class_table {
        stack.extend(ce.methods.iter().map(|(_, m)| &**m));
    }
    while let Some(op_array) = stack.pop() {
        stack.extend(op_array.dynamic_func_defs.iter().map(|d| &**d));
        out.push(op_array);
    }
    out
}

/// Checks every op_array of the recordings; returns (op_arrays, with ranges) checked.
fn check(files: &[PathBuf]) -> (usize, usize) {
    let (mut checked, mut with_ranges) = (0, 0);
    let mut failures = Vec::new();
    for file in files {
        let script = corpus::read(file).unwrap_or_else(|e| panic!("{e}"));
        for op_array in all_op_arrays(&script) {
            checked += 1;
            if !op_array.live_range.is_empty() {
                with_ranges += 1;
            }
            let ours = live_ranges::calc(op_array, None);
            if ours != op_array.live_range {
                failures.push(format!(
                    "{}: {}:\n  php:  {:?}\n  ours: {:?}",
                    file.display(),
                    op_array.display_name(),
                    op_array.live_range,
                    ours
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} op_arrays differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    (checked, with_ranges)
}

#[test]
fn fixtures_live_ranges_are_php_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/expected");
    let files: Vec<PathBuf> = corpus::zop_files(&root)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "recording.zop"))
        .collect();
    assert!(
        files.len() > 100,
        "fixture recordings missing under {}",
        root.display()
    );
    let (checked, with_ranges) = check(&files);
    assert!(
        with_ranges > 50,
        "{with_ranges} of {checked} op_arrays have live ranges"
    );
}

#[test]
fn corpus_live_ranges_are_php_s() {
    let dir = corpus::bench_corpus_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-data/recordings"),
    );
    let files = corpus::zop_files(&dir);
    if files.is_empty() {
        eprintln!(
            "no recordings under {}: the fixtures test covers live ranges (run tools/record-corpus.sh)",
            dir.display()
        );
        return;
    }
    let (checked, with_ranges) = check(&files);
    eprintln!("corpus: {checked} op_arrays, {with_ranges} with live ranges, all identical");
}
