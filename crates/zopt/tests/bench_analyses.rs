//! `zopt bench analyses`: on a few fixture programs it measures what it says — every stage
//! timed, the op_arrays PHP's DFA pass analyses counted, PHP's compile times at level 0 and
//! 0x60 taken in the same run, allocations counted — and it refuses to report on nothing.

mod common;

use common::{extension, workspace_root};
use std::process::Command;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_zopt"))
        .args(["bench", "analyses", "--rounds", "1"])
        .args(args)
        .env("ZOPT_PHP_EXTENSION", extension())
        .output()
        .unwrap()
}

#[test]
fn measures_every_stage_and_phps_dfa_path() {
    let php = workspace_root().join("fixtures/php");
    let files: Vec<String> = ["app_sieve.php", "app_matrix.php", "ctl_for.php"]
        .iter()
        .map(|f| php.join(f))
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    assert!(!files.is_empty(), "fixtures missing");
    let mut args = vec!["--json"];
    args.extend(files.iter().map(String::as_str));
    let out = bench(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["files"].as_u64(), Some(files.len() as u64));
    assert!(r["analysed"].as_u64().unwrap() > 0);
    assert!(r["analysed"].as_u64() <= r["op_arrays"].as_u64());
    let stages: Vec<&str> = r["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["cfg", "dfg", "ssa", "sccs", "inference", "escape"]);
    assert!(r["zopt_ms"].as_f64().unwrap() > 0.0);
    assert!(r["php_level0_ms"].as_f64().unwrap() > 0.0);
    assert!(r["php_dfa_level_ms"].as_f64().unwrap() > 0.0);
    // The zopt binary counts its allocations; the analyses make some.
    assert!(r["allocations_per_op"].as_f64().unwrap() > 0.0);
    // A ratio only when PHP's DFA path was measurable.
    if r["measurable"] == false {
        assert_eq!(r["speedup"].as_f64(), Some(0.0));
    }
}

#[test]
fn nothing_to_measure_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = bench(&[dir.path().to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no PHP files"));
}
