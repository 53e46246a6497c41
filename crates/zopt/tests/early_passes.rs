//! The early passes (1, 3, 4 and 12 of zend-optimizer) against PHP's own optimized
//! op_arrays, field by field — more than the dumps show: literal tables and their
//! `Z_EXTRA`, run-time cache slots (`cache_size`, extended values, `result.num`), the stack
//! size INIT_FCALL reserves (op1), live ranges.
//!
//! Each fixture is recorded twice by the zopt extension (which records after OPcache's own
//! passes): at optimization level 0, the input, and at the level under test, the oracle.
//! zend_optimizer then optimizes the first at that level; every op_array must equal PHP's.
//! PHP and the extension are required (the extension is built here if missing).
//! `$ZOPT_EARLY_PASSES_EXTRA` (colon-separated directories) adds more PHP code, e.g. the
//! Debian corpus.

mod common;

use common::{extension, workspace_root};

use std::path::PathBuf;
use zend_ir::{corpus, OpArray, Script};
use zend_optimizer::helpers::redo_pass_two_smart_branches;
use zend_optimizer::{optimize_script, OpArrayPath, Options};
use zopt::corpus::php_files;
use zopt::php::Php;

/// Levels that isolate the early passes: pass 1, 1+3, 1+3+4, 1+12 and 1+3+4+12.
const LEVELS: [u32; 5] = [0x1, 0x5, 0xD, 0x801, 0x80D];

fn first_difference(ours: &OpArray, php: &OpArray) -> String {
    for (n, (a, b)) in ours.opcodes.iter().zip(&php.opcodes).enumerate() {
        if a != b {
            return format!("op {n}:\n    ours: {a:?}\n    php:  {b:?}");
        }
    }
    macro_rules! field {
        ($($f:ident),*) => {$(
            if ours.$f != php.$f {
                return format!("{}:\n    ours: {:?}\n    php:  {:?}", stringify!($f), ours.$f, php.$f);
            }
        )*};
    }
    field!(
        opcodes,
        literals,
        literal_extra,
        cache_size,
        T,
        vars,
        live_range,
        try_catch_array
    );
    "another field".to_string()
}

fn compare(
    name: &str,
    level: u32,
    ours: &Script,
    php: &Script,
    failures: &mut Vec<String>,
) -> usize {
    let (a, b) = (ours.op_arrays(), php.op_arrays());
    if a.len() != b.len() {
        failures.push(format!(
            "{name} @{level:#x}: {} op_arrays, PHP {}",
            a.len(),
            b.len()
        ));
        return 0;
    }
    for (x, y) in a.iter().zip(&b) {
        if x != y {
            failures.push(format!(
                "{name} @{level:#x} {}: {}",
                x.display_name(),
                first_difference(x, y)
            ));
        }
    }
    a.len()
}

#[test]
fn early_passes_give_php_s_op_arrays() {
    let php = Php::locate(None, Some(extension())).unwrap();
    let mut roots = vec![workspace_root().join("fixtures/php")];
    if let Some(extra) = std::env::var_os("ZOPT_EARLY_PASSES_EXTRA") {
        roots.extend(std::env::split_paths(&extra));
    }
    let files = php_files(&roots).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    for (i, file) in files.iter().enumerate() {
        let record = |level: u32, tag: &str| -> Option<Script> {
            let dir: PathBuf = tmp.path().join(format!("{i}-{tag}"));
            // Files PHP cannot compile (deliberate fatal errors) have nothing to compare.
            let compiled = php.compile(&file.path, level, 0, Some(&dir)).ok()?;
            Some(corpus::read(&compiled.recording?).unwrap())
        };
        let Some(input) = record(0, "input") else {
            continue;
        };
        for level in LEVELS {
            let Some(oracle) = record(level, &format!("{level:x}")) else {
                failures.push(format!(
                    "{}: PHP failed at {level:#x}",
                    file.relative.display()
                ));
                continue;
            };
            let mut ours = input.clone();
            // PHP runs with `-n` and OPcache: exactly the modules of the optimizer's tables.
            zend_optimizer::environment::set_modules_are_tables(true);
            let mut options = Options::new(level);
            // PHP's op_arrays, its optimizer's bugs included.
            options.php_bugs = zend_optimizer::PhpBugs::PHP_8_2;
            let outcome = optimize_script(&mut ours, &options);
            // zend_redo_pass_two sets the smart-branch bits again after the passes; the
            // driver leaves that to its callers (the extension's pipeline does it).
            for path in OpArrayPath::all(&ours) {
                if let Some(op_array) = path.get_mut(&mut ours) {
                    redo_pass_two_smart_branches(op_array);
                }
            }
            // PHP builds no SSA for functions this big either: nothing to verify there.
            let verify_errors: Vec<_> = outcome
                .verify_errors
                .iter()
                .filter(|e| !e.contains("too big for SSA"))
                .collect();
            assert!(
                verify_errors.is_empty(),
                "{}: {:?}",
                file.relative.display(),
                verify_errors
            );
            compared += compare(
                &file.relative.display().to_string(),
                level,
                &ours,
                &oracle,
                &mut failures,
            );
        }
    }
    eprintln!("{compared} op_arrays compared, {} differ", failures.len());
    assert!(compared > 1000, "only {compared} op_arrays compared");
    assert!(
        failures.is_empty(),
        "{} op_arrays differ from PHP's:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
