//! The DFA pass against PHP: every fixture recording is optimized at level 0x60 (PASS_6 +
//! PASS_7: the call-graph path, nothing before the DFA pass) with the "before dfa pass",
//! "after dfa pass" and "after pass 7" dumps on, and each dump must be byte for byte PHP's
//! own (the fixture goldens, recorded from PHP by tools/gen-fixtures.sh). The DFA fixtures
//! are also run at 0x20 (the pass per op_array, without the call graph) against PHP live.
//! The optimizer's checks (op_array and SSA verifier after the pass) must stay silent.

use std::path::{Path, PathBuf};
use std::process::Command;

use zend_ir::corpus;
use zend_optimizer::dfa_pass::{DUMP_AFTER_DFA_PASS, DUMP_BEFORE_DFA_PASS};
use zend_optimizer::{optimize_script, Options, PhpBugs};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fixture names with a recording.
fn fixtures() -> Vec<String> {
    let expected = root().join("fixtures/expected");
    let mut out: Vec<String> = std::fs::read_dir(&expected)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("recording.zop").exists())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    out.sort();
    out
}

/// Our dumps at `debug` and the verifier's findings, reproducing `php_bugs`.
fn ours(name: &str, level: u32, debug: u32, php_bugs: PhpBugs) -> (String, Vec<String>) {
    let rec = root()
        .join("fixtures/expected")
        .join(name)
        .join("recording.zop");
    let mut script = corpus::read(&rec).unwrap_or_else(|e| panic!("{e}"));
    // PHP runs with `-n` and OPcache: exactly the modules of the optimizer's tables.
    zend_optimizer::environment::set_modules_are_tables(true);
    let mut options = Options::new(level);
    options.debug_level = debug;
    options.verify = true;
    options.php_bugs = php_bugs;
    let outcome = optimize_script(&mut script, &options);
    (
        String::from_utf8_lossy(&outcome.dumps).to_string(),
        outcome.verify_errors,
    )
}

#[test]
fn call_graph_path_matches_php_goldens() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for name in fixtures() {
        let dir = root()
            .join("fixtures/expected")
            .join(&name)
            .join("opt-0x60");
        for (file, bits) in [
            ("before_dfa.txt", DUMP_BEFORE_DFA_PASS),
            ("after_dfa.txt", DUMP_AFTER_DFA_PASS),
            ("pass7.txt", 1 << 6),
        ] {
            let Ok(php) = std::fs::read_to_string(dir.join(file)) else {
                continue;
            };
            // PHP's dumps, its optimizer's bugs included.
            let (dump, errors) = ours(&name, 0x60, bits, PhpBugs::PHP_8_2);
            compared += 1;
            if dump != php {
                failures.push(format!("{name}/{file}"));
            }
            if !errors.is_empty() {
                failures.push(format!("{name}: {}", errors.join("; ")));
            }
        }
    }
    assert!(compared > 300, "only {compared} dumps compared");
    assert!(failures.is_empty(), "differ from PHP: {failures:#?}");
}

/// PHP's dump of `src` at `level` for `debug` bits, compiled from the staged copy the
/// recordings were made from.
fn php_dump(src: &Path, level: u32, debug: u32) -> String {
    let out = Command::new("php")
        .args([
            "-n",
            "-d",
            "zend_extension=opcache",
            "-d",
            "opcache.enable=1",
            "-d",
            "opcache.enable_cli=1",
            "-d",
            "opcache.file_update_protection=0",
            "-d",
            "opcache.jit=0",
            "-d",
            &format!("opcache.optimization_level={level:#x}"),
            "-d",
            &format!("opcache.opt_debug_level={debug:#x}"),
            "-r",
            "opcache_compile_file($argv[1]);",
            "--",
        ])
        .arg(src)
        .output()
        .expect("php runs");
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// The dump without its `; /path:lines` lines (the recording and this run may see the
/// file at different paths).
fn without_paths(dump: &str) -> String {
    dump.lines()
        .filter(|l| !l.trim_start().starts_with("; /"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn per_op_array_path_matches_php_live() {
    let mut compared = 0;
    for name in fixtures().into_iter().filter(|n| n.starts_with("opt_dfa_")) {
        let src = root().join("fixtures/php").join(format!("{name}.php"));
        for bits in [DUMP_BEFORE_DFA_PASS, DUMP_AFTER_DFA_PASS] {
            let php = php_dump(&src, 0x20, bits);
            let (dump, errors) = ours(&name, 0x20, bits, PhpBugs::PHP_8_2);
            assert!(errors.is_empty(), "{name}: {errors:?}");
            assert_eq!(
                without_paths(&dump),
                without_paths(&php),
                "{name} at {bits:#x}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 4, "the opt_dfa_* fixtures have no recordings");
}

/// The op_array and SSA verifiers stay silent after every pass (and after each step of the
/// DFA pass: SCCP, DCE, each `zend_dfa_optimize_jmps`, the rewrites, the NOP compaction) on
/// every fixture at the levels the acceptance names.
#[test]
fn verifier_silent_on_every_fixture() {
    let mut failures = Vec::new();
    let mut runs = 0;
    for name in fixtures() {
        for level in [0x20, 0x60, 0xE0, 0x20E0, 0x7FFEBFFF] {
            let (_, errors) = ours(&name, level, 0, PhpBugs::NONE);
            runs += 1;
            for e in errors {
                failures.push(format!("{name} at {level:#x}: {e}"));
            }
        }
    }
    assert!(runs > 500, "only {runs} runs");
    assert!(failures.is_empty(), "verifier: {failures:#?}");
}

/// The same verifiers on the recorded Debian corpus (`$ZOPT_BENCH_CORPUS`, default
/// bench-data/recordings, made by tools/record-corpus.sh), when it is there.
#[test]
fn verifier_silent_on_the_corpus() {
    let dir = corpus::bench_corpus_dir(&root().join("bench-data/recordings"));
    let files = corpus::zop_files(&dir);
    if files.is_empty() {
        eprintln!(
            "no recordings under {}: the fixtures test covers the verifiers",
            dir.display()
        );
        return;
    }
    let mut failures = Vec::new();
    for file in &files {
        for level in [0x20, 0x60, 0xE0, 0x20E0, 0x7FFEBFFF] {
            let mut script = corpus::read(file).unwrap_or_else(|e| panic!("{e}"));
            // PHP runs with `-n` and OPcache: exactly the modules of the optimizer's tables.
            zend_optimizer::environment::set_modules_are_tables(true);
            let mut options = Options::new(level);
            options.verify = true;
            let outcome = optimize_script(&mut script, &options);
            for e in outcome.verify_errors {
                failures.push(format!("{} at {level:#x}: {e}", file.display()));
            }
        }
    }
    assert!(failures.is_empty(), "verifier: {failures:#?}");
}
