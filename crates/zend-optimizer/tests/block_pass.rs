//! The block pass (PASS_5) against PHP: the "before block pass", "after block pass",
//! NON-LOCAL-VARS and "after pass 5" dumps of every fixture recording, optimized by our
//! pipeline, against PHP's own dumps of the same fixture — at 0x10 (the block pass alone,
//! on the op_arrays as compiled) PHP is run here; at 0x7FFEBFFF (passes 1, 3 and 4 before
//! it) the goldens written by tools/gen-fixtures.sh from PHP 8.2 are used. Every op_array
//! must also pass the optimizer's after-pass check.

use std::path::{Path, PathBuf};
use std::process::Command;

use zend_ir::corpus;
use zend_optimizer::script::{optimize_script, Options};

/// The block pass's stages with their `opt_debug_level` bits.
const STAGES: [(&str, u32); 4] = [
    ("before_block", 0x40000),
    ("after_block", 0x80000),
    ("block_vars", 0x100000),
    ("pass5", 0x10),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `(name, recording, source)` of every fixture with a recording.
fn fixtures() -> Vec<(String, PathBuf, PathBuf)> {
    let expected = root().join("fixtures/expected");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&expected).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let rec = e.path().join("recording.zop");
        let src = root().join("fixtures/php").join(format!("{name}.php"));
        if rec.exists() && src.exists() {
            out.push((name, rec, src));
        }
    }
    out.sort();
    out
}

/// PHP's dump of `src` at `level` and debug `bits`, with the fixture directory named as in
/// the recordings (tools/gen-fixtures.sh compiles them from /tmp/zopt-fixtures).
fn php_dump(src: &Path, level: u32, bits: u32) -> Vec<u8> {
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
            &format!("opcache.opt_debug_level={bits:#x}"),
            "-r",
            "opcache_compile_file($argv[1]);",
            "--",
        ])
        .arg(src)
        .output()
        .expect("php runs");
    let dir = src.parent().unwrap().canonicalize().unwrap();
    String::from_utf8_lossy(&out.stderr)
        .replace(&dir.to_string_lossy().to_string(), "/tmp/zopt-fixtures")
        .into_bytes()
}

/// Our dump of the recording at `level` and debug `bits`, and the after-pass check's
/// complaints.
fn our_dump(rec: &Path, level: u32, bits: u32) -> (Vec<u8>, Vec<String>) {
    let mut script = corpus::read(rec).unwrap_or_else(|e| panic!("{e}"));
    // PHP runs with `-n` and OPcache: exactly the modules of the optimizer's tables.
    zend_optimizer::environment::set_modules_are_tables(true);
    let mut options = Options::new(level);
    options.debug_level = bits;
    options.verify = true;
    // The goldens are PHP 8.2's dumps, its optimizer's bugs included.
    options.php_bugs = zend_optimizer::PhpBugs::PHP_8_2;
    let outcome = optimize_script(&mut script, &options);
    (outcome.dumps, outcome.verify_errors)
}

/// The first differing line, for the failure message.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    for (n, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}: php {x:?}, ours {y:?}", n + 1);
        }
    }
    format!("lengths {} and {}", a.len(), b.len())
}

fn check(level: u32, golden: Option<&str>, only: Option<&[&str]>, stages: &[(&str, u32)]) {
    let mut failures = Vec::new();
    let mut compared = 0;
    for (name, rec, src) in fixtures() {
        if only.is_some_and(|names| !names.contains(&name.as_str())) {
            continue;
        }
        for &(stage, bits) in stages {
            let php = match golden {
                Some(dir) => {
                    let path = root()
                        .join("fixtures/expected")
                        .join(&name)
                        .join(dir)
                        .join(format!("{stage}.txt"));
                    std::fs::read(&path).unwrap_or_default()
                }
                None => php_dump(&src, level, bits),
            };
            let (ours, errors) = our_dump(&rec, level, bits);
            compared += 1;
            if php != ours {
                failures.push(format!(
                    "{name} {stage} at {level:#x}: {}",
                    first_difference(&php, &ours)
                ));
            }
            // The block pass's own output must pass the check; later passes answer for theirs.
            // The check builds no SSA for functions too big for it (as PHP's DFA pass).
            for e in errors
                .into_iter()
                .filter(|e| e.starts_with("pass5:") && !e.contains("too big for SSA"))
            {
                failures.push(format!("{name} at {level:#x}: after-pass check: {e}"));
            }
        }
    }
    assert!(compared > 0, "no fixture compared");
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The block pass alone, on every fixture, against PHP run now.
#[test]
fn block_pass_alone_matches_php() {
    check(0x10, None, None, &STAGES);
}

/// After PHP's default passes 1, 3 and 4, against the goldens (the "after pass 5" dump is
/// the driver's, whose call-graph header is checked with the other pass dumps).
#[test]
fn block_pass_after_passes_1_3_4_matches_php_goldens() {
    check(0x7FFE_BFFF, Some("opt-0x7FFEBFFF"), None, &STAGES[..3]);
}

/// The fixtures written for the block pass, at the classic level, against PHP run now.
#[test]
fn block_pass_fixtures_match_php_at_classic_level() {
    check(
        0x7FFE_9F1F,
        None,
        Some(&["opt_block_jumps", "opt_block_rewrites", "opt_jump_chains"]),
        &STAGES,
    );
}
