//! `zopt fuzz` end to end on a fixed sample of seeds, at every default level (0, 0x60,
//! 0xE0, 0x20E0, 0x7FFE9F1F, 0x7FFEBFFF): nothing may fail. Every generated program runs
//! cleanly without OPcache, every stage we implement is byte-identical to PHP's dump,
//! every mode prints what PHP without OPcache prints, and the SSA verifier and the
//! crosscheck accept every op_array. Differences of PHP's own OPcache are listed by the
//! fuzzer and never counted. The sample (170 programs) is what fits in about four minutes
//! of a debug build on two cores: a program costs about 2.2 CPU seconds there, half of it
//! PHP's (22 PHP processes), half zopt's debug build (the long runs are a command in
//! README.md).
//!
//! Needs `php` 8.2 with OPcache on PATH; the extension is built here
//! (`cargo build -p zopt-php`, a no-op when fresh).

mod common;

use common::extension;
use std::process::Command;
use zopt::fuzz::DEFAULT_LEVELS;
use zopt::php::Php;
use zopt::stages::split_stages;

/// The seeds CI checks.
const FIRST_SEED: u64 = 1000;
const COUNT: u64 = 170;

/// `zopt fuzz` on `count` programs from `first_seed` at `levels`, with `target`'s options
/// (the PHP configuration and how it compiles), and the checks every run must pass.
fn fuzz(first_seed: u64, count: u64, levels: &str, target: &[&str]) -> serde_json::Value {
    let out_dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_zopt"))
        .args(["fuzz", "--json", "--no-reduce", "-j", "2"])
        .args(["--seed", &first_seed.to_string()])
        .args(["--count", &count.to_string()])
        .args(["--levels", levels])
        .args(target)
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
    assert_eq!(summary["programs"], count);
    assert_eq!(
        summary["invalid_programs"].as_array().map(Vec::len),
        Some(0),
        "programs PHP itself cannot run: {}",
        summary["invalid_programs"]
    );
    assert!(summary["op_arrays"].as_u64().unwrap() >= count * 3);
    assert!(summary["crosschecked_op_arrays"].as_u64().unwrap() > 0);
    assert!(summary["verified_op_arrays"].as_u64().unwrap() > 0);
    summary
}

/// The summary's tally of `stage` at `level`: whether we implement it, the op_arrays
/// compared, and those identical or differing only where PHP 8.2's optimizer is wrong.
fn stage_tally(summary: &serde_json::Value, level: &str, stage: &str) -> (bool, u64, u64) {
    summary["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s[0] == level && s[1] == stage)
        .map(|s| {
            (
                s[2]["implemented"].as_bool().unwrap(),
                s[2]["compared"].as_u64().unwrap(),
                s[2]["identical"].as_u64().unwrap() + s[2]["deviating"].as_u64().unwrap(),
            )
        })
        .unwrap_or_else(|| panic!("no {stage} at {level} in {}", summary["stages"]))
}

/// Every stage compared is identical to PHP's dump, or differs only where PHP 8.2's
/// optimizer is wrong, and nothing failed.
fn assert_clean(summary: &serde_json::Value) {
    let stages = summary["stages"].as_array().unwrap();
    for s in stages {
        let right = s[2]["identical"].as_u64().unwrap() + s[2]["deviating"].as_u64().unwrap();
        assert_eq!(
            s[2]["compared"].as_u64().unwrap(),
            right,
            "{} at {}",
            s[1],
            s[0]
        );
    }
    let failures: Vec<&serde_json::Value> = summary["failure_details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f[1])
        .collect();
    assert!(
        failures.is_empty(),
        "zopt fuzz found failures:\n{}",
        serde_json::to_string_pretty(&failures).unwrap()
    );
    if let Some(php) = summary["php_differences"]
        .as_array()
        .filter(|d| !d.is_empty())
    {
        eprintln!(
            "PHP's own OPcache differs from PHP without it (not counted):\n{}",
            serde_json::to_string_pretty(php).unwrap()
        );
    }
}

#[test]
fn fuzz_sample_is_clean_at_every_level() {
    let summary = fuzz(
        FIRST_SEED,
        COUNT,
        "0,0x60,0xE0,0x20E0,0x7FFE9F1F,0x7FFEBFFF",
        &[],
    );
    assert!(summary["opcodes_reached"].as_array().unwrap().len() > 150);
    // The reference, OPcache and zopt's optimizer at each level, the round trip, the cache.
    assert!(summary["exec_runs"].as_u64().unwrap() >= COUNT * 15);
    let tally = |level: &str, stage: &str| stage_tally(&summary, level, stage);
    let op_arrays = summary["op_arrays"].as_u64().unwrap();
    // Every op_array is compared before and after the optimizer at every level, and the
    // stages of each level's passes are compared on something.
    let levels: [(&str, &[&str]); 6] = [
        ("0x0", &[]),
        (
            "0x60",
            &[
                "cfg",
                "dom",
                "liveness",
                "phi",
                "ssa",
                "types",
                "before_dfa",
                "after_dfa",
                "pass7",
            ],
        ),
        (
            "0xe0",
            &["sccp", "pass8", "before_dfa", "after_dfa", "pass7"],
        ),
        ("0x20e0", &["sccp", "pass8", "pass14", "after_dfa", "pass7"]),
        (
            "0x7ffe9f1f",
            &[
                "pass1",
                "pass3",
                "pass4",
                "pass5",
                "before_block",
                "after_block",
                "block_vars",
                "pass9",
                "pass11",
                "pass13",
            ],
        ),
        (
            "0x7ffebfff",
            &[
                "pass1",
                "pass5",
                "block_vars",
                "before_dfa",
                "after_dfa",
                "sccp",
                "pass8",
                "pass14",
                "pass7",
                "pass9",
                "pass13",
            ],
        ),
    ];
    for (level, passes) in levels {
        for stage in ["before", "after"] {
            assert_eq!(
                tally(level, stage),
                (true, op_arrays, op_arrays),
                "{stage} at {level}"
            );
        }
        for stage in passes {
            let (implemented, compared, identical) = tally(level, stage);
            assert!(
                implemented && compared > 0,
                "nothing compared at {stage} {level}"
            );
            assert_eq!(compared, identical, "{stage} at {level}");
        }
    }
    assert_clean(&summary);
}

/// The same under PHP as it serves a request: its own php.ini and conf.d (Debian's
/// extensions, `dl()` off), which zopt's optimizer is told about, and each program compiled
/// as a script about to run (`php -l`: its classes bound at compile time, their constants
/// folded) for the dumps. A smaller sample, at the default level.
#[test]
fn fuzz_sample_is_clean_under_php_ini_compiled_to_run() {
    let summary = fuzz(
        1200,
        12,
        "0x7FFEBFFF",
        &["--php-ini", "default", "--compile-as", "run"],
    );
    assert_eq!(summary["php_ini"], "default");
    assert_eq!(summary["compile_as"], "run");
    let op_arrays = summary["op_arrays"].as_u64().unwrap();
    for stage in ["before", "after", "after_dfa", "sccp"] {
        let (implemented, compared, _) = stage_tally(&summary, "0x7ffebfff", stage);
        assert!(implemented && compared > 0, "nothing compared at {stage}");
        if stage == "before" || stage == "after" {
            assert_eq!(compared, op_arrays, "{stage}");
        }
    }
    assert_clean(&summary);
}

/// `zopt fuzz` asks PHP for every stage of a level in one compilation (opt_debug_level is a
/// bit mask) and splits the output by stage: for each debug-level bit, the split must give
/// exactly the bytes PHP prints when that bit alone is set, at every default level, on
/// generated programs (`ZOPT_FUZZ_SPLIT_COUNT` of them, 2 by default, from seed 1000).
#[test]
fn one_compilation_of_every_stage_splits_into_each_stage_alone() {
    let count: u64 = std::env::var("ZOPT_FUZZ_SPLIT_COUNT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2);
    let php = Php::locate(None, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut stages_seen = 0;
    for seed in FIRST_SEED..FIRST_SEED + count {
        let path = dir.path().join(format!("seed{seed}.php"));
        let program = zopt_progen::generate(seed, &zopt_progen::Config::default());
        std::fs::write(&path, program.source()).unwrap();
        for level in DEFAULT_LEVELS {
            let all = php.compile(&path, level, 0x3fff_ffff, None).unwrap().dump;
            let mut split = split_stages(&all).unwrap_or_else(|e| {
                panic!("seed {seed} at {level:#x}: {e}");
            });
            for bit in (0..30).map(|b| 1u32 << b) {
                let alone = php.compile(&path, level, bit, None).unwrap().dump;
                let ours = split.remove(&bit).unwrap_or_default();
                assert!(
                    ours == alone,
                    "seed {seed} at {level:#x}, opt_debug_level {bit:#x}: the split gives {} \
                     bytes, PHP alone prints {}",
                    ours.len(),
                    alone.len()
                );
                stages_seen += usize::from(!alone.is_empty());
            }
            assert!(split.is_empty(), "stages left over: {:?}", split.keys());
        }
    }
    // Levels 0, 0x60, 0xE0, 0x20E0, 0x7FFE9F1F and 0x7FFEBFFF print 2, 8, 14, 15, 19 and 20
    // stages of a program with functions.
    assert!(
        stages_seen as u64 >= 60 * count,
        "only {stages_seen} stage dumps printed"
    );
}
