//! The SCCP pass inside the DFA pass against PHP: at optimization level 0xE0 (DFA with the
//! call graph and SCCP, nothing before), the dumps after the SCCP pass (`pass8`: SCCP,
//! `zend_dfa_optimize_jmps` and the call rewrites), after the DFA pass and after the
//! optimizer must be PHP's own (fixtures/expected/*/opt-0xE0/, from PHP 8.2), and the
//! programs must run as without the optimizer (zopt exec-diff, outside these tests).

use std::path::{Path, PathBuf};

use zend_ir::corpus;
use zend_ir::dump::debug_level;
use zend_optimizer::script::{optimize_script, Options};

fn fixture_dirs(stage: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/expected");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.join(format!("opt-0xE0/{stage}.txt")).exists() && p.join("recording.zop").exists()
        })
        .collect();
    dirs.sort();
    dirs
}

fn check_stage(stage: &str, bits: u32) {
    let dirs = fixture_dirs(stage);
    assert!(dirs.len() > 50, "fixture goldens missing for {stage}");
    let mut failures = Vec::new();
    for dir in &dirs {
        let mut script = corpus::read(&dir.join("recording.zop")).unwrap_or_else(|e| panic!("{e}"));
        // PHP runs with `-n` and OPcache: exactly the modules of the optimizer's tables.
        zend_optimizer::environment::set_modules_are_tables(true);
        let mut options = Options::new(0xE0);
        options.debug_level = bits;
        // The goldens are PHP 8.2's dumps, its optimizer's bugs included.
        options.php_bugs = zend_optimizer::PhpBugs::PHP_8_2;
        let outcome = optimize_script(&mut script, &options);
        let php = std::fs::read(dir.join(format!("opt-0xE0/{stage}.txt"))).unwrap();
        if outcome.dumps != php {
            failures.push(dir.file_name().unwrap().to_string_lossy().to_string());
            if std::env::var_os("SCCP_DIFF").is_some() {
                let d = std::env::temp_dir().join("sccp-diff");
                let _ = std::fs::create_dir_all(&d);
                let name = dir.file_name().unwrap().to_string_lossy().to_string();
                let _ = std::fs::write(d.join(format!("{name}.{stage}.ours")), &outcome.dumps);
                let _ = std::fs::write(d.join(format!("{name}.{stage}.php")), &php);
            }
        }
        // The SSA verifier's findings are reported, not failed on: it also checks that every
        // use is dominated by its definition through the dominator links as they are, and
        // after `zend_dfa_optimize_jmps` PHP's own links (printed identical in these dumps)
        // can name an emptied block.
        for e in &outcome.verify_errors {
            eprintln!("{}: verifier: {e}", dir.display());
        }
    }
    eprintln!(
        "{stage}: {}/{} fixtures identical",
        dirs.len() - failures.len(),
        dirs.len()
    );
    assert!(
        failures.is_empty(),
        "{stage}: {} differ: {}",
        failures.len(),
        failures.join(" ")
    );
}

#[test]
fn fixtures_after_sccp_pass_are_php_s() {
    check_stage("pass8", debug_level::after_pass(8));
}

#[test]
fn fixtures_after_dfa_pass_are_php_s() {
    check_stage("after_dfa", 0x400000);
}

#[test]
fn fixtures_after_optimizer_are_php_s() {
    check_stage("after", debug_level::AFTER_OPTIMIZER);
}
