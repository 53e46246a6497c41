//! The fixture harness, in the manner of php-src's .phpt and Cranelift's filetests: every
//! fixture under fixtures/php has its recording and PHP's own dumps under
//! fixtures/expected/<name>/ (written by tools/gen-fixtures.sh from the real PHP 8.2 binary).
//! Each implemented stage must print exactly PHP's bytes; stages not implemented yet are
//! counted and reported, never treated as passing.

mod common;

use common::workspace_root;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use zend_ir::dump::{debug_level, parse_number};
use zopt::corpus::load_recording;
use zopt::stages::{our_dump, split_dump, BugReproductions};

/// Every fixture directory (one holding a recording.zop), sorted.
fn fixture_dirs(expected: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = walkdir::WalkDir::new(expected)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "recording.zop")
        .map(|e| e.path().parent().unwrap().to_path_buf())
        .collect();
    dirs.sort();
    dirs
}

#[derive(Default)]
struct Tally {
    compared: usize,
    identical: usize,
    /// Not identical only where PHP 8.2's optimizer is wrong.
    deviating: usize,
    not_implemented: usize,
}

#[test]
fn fixtures_match_php_dumps() {
    let root = workspace_root();
    let expected = root.join("fixtures/expected");
    let dirs = fixture_dirs(&expected);
    let sources = walkdir::WalkDir::new(root.join("fixtures/php"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "php"))
        .count();
    assert!(
        sources >= 150,
        "expected at least 150 fixture programs, found {sources}"
    );
    assert_eq!(
        dirs.len(),
        sources,
        "every fixture needs its recording: run tools/gen-fixtures.sh"
    );

    let mut tallies: BTreeMap<(String, String), Tally> = BTreeMap::new();
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.strip_prefix(&expected).unwrap().display().to_string();
        let script =
            load_recording(&dir.join("recording.zop")).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        for opt_dir in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
            let opt_name = opt_dir.file_name().to_string_lossy().into_owned();
            let Some(opt) = opt_name.strip_prefix("opt-").and_then(parse_number) else {
                continue;
            };
            for golden in std::fs::read_dir(opt_dir.path())
                .unwrap()
                .filter_map(Result::ok)
            {
                let stage = golden
                    .path()
                    .file_stem()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let bits = debug_level::parse(&stage)
                    .unwrap_or_else(|| panic!("unknown stage file {}", golden.path().display()));
                let tally = tallies
                    .entry((opt_name.clone(), stage.clone()))
                    .or_default();
                let php = std::fs::read(golden.path()).unwrap();
                let php_chunks = split_dump(&php);
                match our_dump(&script, bits, opt) {
                    Err(_) => tally.not_implemented += php_chunks.len(),
                    Ok(ours) => {
                        let our_chunks = split_dump(&ours);
                        let mut bugs = BugReproductions::new(&script, bits, opt);
                        tally.compared += php_chunks.len();
                        for (i, chunk) in php_chunks.iter().enumerate() {
                            if our_chunks.get(i).is_some_and(|c| c.text == chunk.text) {
                                tally.identical += 1;
                            } else if bugs.explain(i, chunk.text).is_some() {
                                tally.deviating += 1;
                            } else if failures.len() < 30 {
                                failures.push(format!(
                                    "{name} {opt_name}/{stage} {}:\n--- php\n{}\n--- ours\n{}",
                                    String::from_utf8_lossy(chunk.name),
                                    String::from_utf8_lossy(chunk.text),
                                    our_chunks.get(i).map_or("<missing>".into(), |c| {
                                        String::from_utf8_lossy(c.text)
                                    }),
                                ));
                            }
                        }
                        if our_chunks.len() != php_chunks.len()
                            && !bugs.explains_count(php_chunks.len())
                            && failures.len() < 30
                        {
                            failures.push(format!(
                                "{name} {opt_name}/{stage}: PHP dumps {} op_arrays, we dump {}",
                                php_chunks.len(),
                                our_chunks.len()
                            ));
                        }
                    }
                }
            }
        }
    }

    println!(
        "{:<16} {:<12} {:>9} {:>9} {:>8} {:>15}",
        "opt", "stage", "compared", "identical", "PHP bug", "not implemented"
    );
    for ((opt, stage), t) in &tallies {
        println!(
            "{opt:<16} {stage:<12} {:>9} {:>9} {:>8} {:>15}",
            t.compared, t.identical, t.deviating, t.not_implemented
        );
    }
    // Both bug fixtures deviate at the default level, and are told apart as PHP's bugs.
    let after = &tallies[&("opt-0x7FFEBFFF".to_string(), "after".to_string())];
    assert!(after.deviating >= 2, "{} deviating", after.deviating);
    // The foundation stages must be implemented on every fixture.
    for stage in ["before", "after"] {
        let t = &tallies[&("opt-0".to_string(), stage.to_string())];
        assert_eq!(
            t.not_implemented, 0,
            "stage {stage} at opt-0 must be implemented"
        );
        assert!(t.compared > 0);
    }
    assert!(
        failures.is_empty(),
        "{} mismatch(es):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
