//! What OPcache's pass 1 really folds: a CONCAT whose operand became a double only in the
//! optimizer (a CAST folded by pass 1) is folded too, with `precision` (14) digits, as
//! `zend_optimizer_eval_binary_op` converts doubles with `zend_double_to_str`. The dump after
//! pass 1 is compared with eval_cast + eval_binary_op for each double.

mod common;

use std::process::Command;

use common::*;
use zend_ir::opcode::ZEND_CONCAT;
use zend_ir::types::IS_DOUBLE;
use zend_operators::{eval_binary_op, eval_cast};

#[test]
fn pass1_folds_concat_with_doubles_as_we_do() {
    let mut doubles: Vec<f64> = vec![
        0.1,
        1.5,
        -0.0,
        0.0,
        1e15,
        1e14,
        99999999999999.0,
        1e-5,
        1e-4,
        0.30000000000000004,
        123456789012345.0,
        123456789012365.0,
        1.0 / 3.0,
        -2.0 / 3.0,
        1e100,
        5e-324,
        1.7976931348623157e308,
        f64::INFINITY,
        f64::NEG_INFINITY,
        2f64.powi(63),
        255.0,
        0.5e-3,
    ];
    doubles.extend((1..40).map(|i| (i as f64).powf(7.3) / 1000.0));
    let mut src = String::from("<?php\n");
    let mut expected = Vec::new();
    for d in &doubles {
        let text = if d.is_infinite() {
            if *d > 0.0 {
                "1e400".to_owned()
            } else {
                "-1e400".to_owned()
            }
        } else {
            format!("{d:e}")
        };
        src.push_str(&format!("echo \"x\" . (float)\"{text}\";\n"));
        let cast = eval_cast(u32::from(IS_DOUBLE), &s(text.as_bytes())).expect("cast folds");
        let v = eval_binary_op(ZEND_CONCAT, &s(b"x"), &cast).expect("concat folds");
        match v {
            zend_ir::Literal::String(t) => expected.push(String::from_utf8(t.0).unwrap()),
            other => panic!("{other:?}"),
        }
    }
    let dir = std::env::temp_dir().join(format!("zend-operators-pass1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("concat.php");
    std::fs::write(&file, src).unwrap();
    let out = Command::new("php")
        .args([
            "-n",
            "-d",
            "zend_extension=opcache",
            "-d",
            "opcache.enable_cli=1",
            "-d",
            "opcache.file_update_protection=0",
            "-d",
            "opcache.optimization_level=0x1",
            "-d",
            "opcache.opt_debug_level=0x1",
            "-r",
            "opcache_compile_file($argv[1]);",
        ])
        .arg(&file)
        .output()
        .expect("run php with OPcache");
    let _ = std::fs::remove_dir_all(&dir);
    let dump = String::from_utf8_lossy(&out.stderr);
    let folded: Vec<String> = dump
        .lines()
        .filter_map(|l| {
            l.split_once(" ECHO string(\"")
                .map(|(_, r)| r.trim_end_matches("\")").to_owned())
        })
        .collect();
    assert_eq!(folded, expected, "pass 1 output:\n{dump}");
    eprintln!(
        "pass 1 CONCAT with a double: {} cases, all equal",
        folded.len()
    );
}
