//! DCE (PASS_14) against PHP: the "after dce pass" dump (opt_debug_level 0x2000) of every
//! fixture recording, optimized by our DFA pass, against PHP's own dump of the same fixture:
//! at 0x2020 (PASS_6 + PASS_14 alone: DCE sees the op_arrays as compiled) PHP is run here;
//! at 0x20E0 (SCCP and the call graph before DCE) and 0x7FFEBFFF (every pass) the goldens
//! written by tools/gen-fixtures.sh from PHP 8.2 are used. A separate check runs DCE alone
//! on the analyses and verifies the SSA form after it.

use std::path::{Path, PathBuf};
use std::process::Command;

use zend_ir::corpus;
use zend_optimizer::analysis::analyze_script;
use zend_optimizer::dce::dce_optimize_op_array;
use zend_optimizer::script::{optimize_script, Options};

const PASS14: u32 = 0x2000;

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

/// PHP's "after dce pass" dump of `src` at `level`, with the fixture directory named as
/// in the recordings (tools/gen-fixtures.sh compiles them from /tmp/zopt-fixtures).
fn php_dump(src: &Path, level: u32) -> Vec<u8> {
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
            &format!("opcache.opt_debug_level={PASS14:#x}"),
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

/// Our "after dce pass" dump of the recording at `level`.
fn our_dump(rec: &Path, level: u32) -> (Vec<u8>, Vec<String>) {
    let mut script = corpus::read(rec).unwrap_or_else(|e| panic!("{e}"));
    // PHP runs with `-n` and OPcache: exactly the modules of the optimizer's tables.
    zend_optimizer::environment::set_modules_are_tables(true);
    let mut options = Options::new(level);
    options.debug_level = PASS14;
    // The goldens are PHP 8.2's dumps, its optimizer's bugs included.
    options.php_bugs = zend_optimizer::PhpBugs::PHP_8_2;
    let outcome = optimize_script(&mut script, &options);
    (outcome.dumps, outcome.verify_errors)
}

fn check_level(level: u32, golden: Option<&str>) {
    let fixtures = fixtures();
    assert!(fixtures.len() > 50, "fixtures missing");
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut verifier = 0;
    for (name, rec, src) in &fixtures {
        let php = match golden {
            // No golden file: PHP printed nothing at this stage.
            Some(dir) => std::fs::read(rec.parent().unwrap().join(dir).join("pass14.txt"))
                .unwrap_or_default(),
            None => php_dump(src, level),
        };
        let (ours, errors) = our_dump(rec, level);
        compared += 1;
        if ours != php {
            failures.push(name.clone());
            if let Some(d) = std::env::var_os("DCE_DIFF") {
                let d = Path::new(&d);
                let _ = std::fs::create_dir_all(d);
                let _ = std::fs::write(d.join(format!("{name}.{level:#x}.ours")), &ours);
                let _ = std::fs::write(d.join(format!("{name}.{level:#x}.php")), &php);
            }
        }
        if !errors.is_empty() {
            // The verifier's findings after the whole pipeline belong to the stages after
            // DCE (jump optimisation, live ranges); DCE's own are checked by
            // `dce_keeps_ssa_valid`.
            verifier += 1;
        }
    }
    eprintln!(
        "after dce pass at {level:#x}: {}/{compared} fixtures identical \
         ({verifier} with verifier findings after the pipeline)",
        compared - failures.len()
    );
    assert!(failures.is_empty(), "differ at {level:#x}: {failures:?}");
}

#[test]
fn after_dce_at_0x2020_is_php_s() {
    check_level(0x2020, None);
}

#[test]
fn after_dce_at_0x20e0_is_php_s() {
    check_level(0x20E0, Some("opt-0x20E0"));
}

#[test]
fn after_dce_at_default_level_is_php_s() {
    check_level(0x7FFEBFFF, Some("opt-0x7FFEBFFF"));
}

/// DCE alone on the DFA pass's analyses leaves a valid SSA form (use chains, definitions,
/// phis), for every op_array of every fixture.
#[test]
fn dce_keeps_ssa_valid() {
    let mut failures = Vec::new();
    let mut removed = 0;
    for (name, rec, _) in fixtures() {
        let script = corpus::read(&rec).unwrap_or_else(|e| panic!("{e}"));
        let mut analysis = analyze_script(&script, 0x2020);
        for (index, fa) in analysis.functions.iter_mut().enumerate() {
            let Ok(fa) = fa else { continue };
            let mut op_array = analysis.info.op_arrays[index].clone();
            removed += dce_optimize_op_array(
                &mut op_array,
                &script,
                &fa.cfg,
                &mut fa.ssa,
                &mut fa.inference.vars,
                false,
                zend_optimizer::PhpBugs::NONE,
            );
            if let Err(e) = zend_ssa::verify(&op_array, &fa.cfg, &fa.ssa) {
                failures.push(format!("{name}: {}: {e:?}", op_array.display_name()));
            }
        }
    }
    assert!(
        removed > 40,
        "DCE removed only {removed} ops over the fixtures"
    );
    assert!(
        failures.is_empty(),
        "SSA broken after DCE:\n{}",
        failures.join("\n")
    );
}
