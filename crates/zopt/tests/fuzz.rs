//! `zopt fuzz` end to end on a fixed sample of seeds: every generated program runs cleanly
//! without OPcache, every stage we implement is byte-identical to PHP's dumps at every
//! default optimization level, every mode prints what PHP without OPcache prints, and the
//! SSA verifier and the crosscheck accept every op_array. Differences of PHP's own OPcache
//! are listed by the fuzzer and not counted.
//!
//! Needs `php` 8.2 with OPcache on PATH; the extension is built here
//! (`cargo build -p zopt-php`, a no-op when fresh).

mod common;

use common::extension;
use std::process::Command;

/// The seeds CI checks (the long runs are a command in README.md).
const FIRST_SEED: u64 = 1000;
const COUNT: u64 = 6;

#[test]
fn fuzz_sample_is_clean_at_every_level() {
    let out_dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_zopt"))
        .args(["fuzz", "--json", "--no-reduce", "-j", "2"])
        .args(["--seed", &FIRST_SEED.to_string()])
        .args(["--count", &COUNT.to_string()])
        .arg("--extension")
        .arg(extension())
        .arg("--out")
        .arg(out_dir.path())
        .output()
        .expect("running zopt fuzz");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "zopt fuzz printed no JSON summary ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_eq!(summary["programs"], COUNT);
    assert_eq!(
        summary["invalid_programs"].as_array().map(Vec::len),
        Some(0),
        "programs PHP itself cannot run: {}",
        summary["invalid_programs"]
    );
    assert!(summary["op_arrays"].as_u64().unwrap() >= COUNT * 3);
    assert!(summary["exec_runs"].as_u64().unwrap() > COUNT * 10);
    assert!(summary["crosschecked_op_arrays"].as_u64().unwrap() > 0);
    assert!(summary["verified_op_arrays"].as_u64().unwrap() > 0);
    assert!(summary["opcodes_reached"].as_array().unwrap().len() > 50);
    // Stages implemented at level 0x60 (the DFA analyses) were compared.
    let stages = summary["stages"].as_array().unwrap();
    let compared = |level: &str, stage: &str| {
        stages
            .iter()
            .find(|s| s[0] == level && s[1] == stage)
            .map(|s| {
                (
                    s[2]["implemented"].as_bool().unwrap(),
                    s[2]["compared"].as_u64().unwrap(),
                )
            })
    };
    assert_eq!(compared("0x0", "before").map(|c| c.0), Some(true));
    assert!(compared("0x0", "before").unwrap().1 >= COUNT * 3);
    assert!(compared("0x60", "ssa").unwrap().1 > 0);
    assert!(
        output.status.success() && summary["failure_details"].as_array().unwrap().is_empty(),
        "zopt fuzz found failures (reduced programs in the summary):\n{}",
        serde_json::to_string_pretty(&summary["failure_details"]).unwrap()
    );
}
