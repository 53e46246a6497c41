//! DCE (PASS_14) against PHP: every fixture recording is analysed as the DFA pass does at
//! optimization level 0x2020 (PASS_6 + PASS_14: nothing runs before the DFA pass), DCE runs
//! on each op_array, and the ops are compared with PHP's own "after dce pass" dump
//! (opt_debug_level 0x2000) of the same fixture, produced here by running php. The SSA
//! verifier runs after every DCE.
//!
//! PHP's dump comes after `zend_dfa_optimize_jmps` too; this test runs DCE alone, so an
//! op_array whose jumps that step changes is compared on its non-jump ops only.

use std::path::{Path, PathBuf};
use std::process::Command;

use zend_ir::corpus;
use zend_optimizer::analysis::analyze_script;
use zend_optimizer::dce::dce_optimize_op_array;
use zend_optimizer::dfa_pass;

const LEVEL: u32 = 0x2020;

fn fixtures() -> Vec<(String, PathBuf, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let expected = root.join("fixtures/expected");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&expected).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let rec = e.path().join("recording.zop");
        let src = root.join("fixtures/php").join(format!("{name}.php"));
        if rec.exists() && src.exists() {
            out.push((name, rec, src));
        }
    }
    out.sort();
    out
}

/// PHP's "after dce pass" dump of `src` at [`LEVEL`].
fn php_dump(src: &Path) -> String {
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
            &format!("opcache.optimization_level={LEVEL:#x}"),
            "-d",
            "opcache.opt_debug_level=0x2000",
            "-r",
            "opcache_compile_file($argv[1]);",
            "--",
        ])
        .arg(src)
        .output()
        .expect("php runs");
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// One dump per op_array, without the file name line and with jump ops blanked when
/// `no_jumps` (see the module doc).
fn split(dump: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    for line in dump.lines() {
        if !line.starts_with(' ') && line.ends_with(':') && !line.starts_with("BB") {
            blocks.push(String::new());
        }
        if line.trim_start().starts_with("; /") {
            continue;
        }
        if let Some(b) = blocks.last_mut() {
            b.push_str(line);
            b.push('\n');
        }
    }
    blocks
}

fn is_jump_line(l: &str) -> bool {
    [
        "JMP", "BB", "; ", "COALESCE", "FE_RESET", "FE_FETCH", "SWITCH", "MATCH",
    ]
    .iter()
    .any(|k| l.contains(k))
}

fn strip_jumps(b: &str) -> String {
    b.lines()
        .filter(|l| !is_jump_line(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn fixtures_after_dce_are_php_s() {
    let fixtures = fixtures();
    assert!(fixtures.len() > 50, "fixtures missing");
    let (mut same, mut same_ops, mut total) = (0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    for (name, rec, src) in &fixtures {
        let script = corpus::read(rec).unwrap_or_else(|e| panic!("{e}"));
        let mut analysis = analyze_script(&script, LEVEL);
        let mut ours = Vec::new();
        for (index, fa) in analysis.functions.iter_mut().enumerate() {
            let Ok(fa) = fa else { continue };
            let mut op_array = analysis.info.op_arrays[index].clone();
            dce_optimize_op_array(
                &mut op_array,
                &script,
                &fa.cfg,
                &mut fa.ssa,
                &mut fa.inference.vars,
                false,
            );
            if let Err(e) = zend_ssa::verify(&op_array, &fa.cfg, &fa.ssa) {
                failures.push(format!(
                    "{name}: {}: SSA broken: {e:?}",
                    op_array.display_name()
                ));
            }
            dfa_pass::dump(&mut ours, &op_array, fa, None, "after dce pass");
        }
        let ours = String::from_utf8_lossy(&ours).to_string();
        let php = php_dump(src);
        let (a, b) = (split(&ours), split(&php));
        for pb in &b {
            total += 1;
            if a.contains(pb) {
                same += 1;
                same_ops += 1;
            } else if a.iter().any(|x| strip_jumps(x) == strip_jumps(pb)) {
                same_ops += 1;
            } else {
                let head = pb.lines().next().unwrap_or("");
                let mine = a
                    .iter()
                    .find(|x| x.lines().next() == Some(head))
                    .cloned()
                    .unwrap_or_default();
                failures.push(format!("{name}: php:\n{pb}\nours:\n{mine}"));
            }
        }
    }
    eprintln!("after dce pass: {same}/{total} op_arrays identical, {same_ops}/{total} identical but for jumps");
    if let Some(dir) = std::env::var_os("DCE_DIFF") {
        let _ = std::fs::write(Path::new(&dir), failures.join("\n=====\n"));
    }
    assert!(
        failures.is_empty(),
        "{} op_arrays differ:\n{}",
        failures.len(),
        failures.join("\n=====\n")
    );
}
