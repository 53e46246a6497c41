//! zopt as PHP's opcode cache (`zopt.cache_dir`): every fixture program, run twice with the
//! extension and OPcache off, gives PHP's own output both times, and the second run is
//! served entirely from the cache — the extension's counters show that PHP's compiler was
//! never called. Each loaded script is captured again and compared with the entry it was
//! built from (`zopt.verify=1`: a difference would be a warning in the output). Stale and
//! damaged entries are recompiled, never served. PHP and the extension are required.

mod common;

use common::{extension, workspace_root};

use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use zopt::corpus::php_files;

/// The cache counters a run appended to its `zopt.cache_stats` file.
#[derive(Debug, Default)]
struct Counters {
    hits: u64,
    misses: u64,
    rejects: u64,
    compiles: u64,
    served: u64,
    uncacheable: u64,
    load_failures: u64,
    stores: u64,
}

fn counters(stats_file: &Path) -> Counters {
    let text = std::fs::read_to_string(stats_file)
        .unwrap_or_else(|e| panic!("no cache stats in {}: {e}", stats_file.display()));
    let v: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} missing in {text}"));
    Counters {
        hits: n("hits"),
        misses: n("misses"),
        rejects: n("rejects"),
        compiles: n("compiles"),
        served: n("served"),
        uncacheable: n("uncacheable"),
        load_failures: n("load_failures"),
        stores: n("stores"),
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Run {
    stdout: String,
    status: Option<i32>,
}

/// Runs `script` from its directory with `settings` (`-n`: no php.ini, nothing but what is
/// asked for).
fn php(script: &Path, settings: &[String]) -> Run {
    let mut cmd = Command::new(std::env::var_os("ZOPT_PHP").unwrap_or("php".into()));
    cmd.arg("-n");
    for s in settings {
        cmd.args(["-d", s]);
    }
    let out = cmd
        .arg(script.file_name().unwrap())
        .current_dir(script.parent().unwrap())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        status: out.status.code(),
    }
}

fn cached(script: &Path, cache_dir: &Path, stats: &Path) -> Run {
    php(
        script,
        &[
            format!("extension={}", extension().display()),
            format!("zopt.cache_dir={}", cache_dir.display()),
            format!("zopt.cache_stats={}", stats.display()),
            "zopt.verify=1".into(),
        ],
    )
}

fn opcache_reference(script: &Path) -> Run {
    php(
        script,
        &[
            "zend_extension=opcache".into(),
            "opcache.enable_cli=1".into(),
            "opcache.optimization_level=0".into(),
            "opcache.file_update_protection=0".into(),
            "opcache.jit=0".into(),
        ],
    )
}

#[test]
fn fixtures_run_identically_from_a_warm_cache_without_compiling() {
    let programs: Vec<PathBuf> = php_files(&[workspace_root().join("fixtures/php")])
        .unwrap()
        .into_iter()
        .filter(|f| f.relative.components().count() == 1)
        .map(|f| f.path)
        .collect();
    assert!(programs.len() > 150, "{} fixture programs", programs.len());

    let failures: Vec<String> = programs
        .par_iter()
        .filter_map(|script| {
            let name = script.file_name().unwrap().to_string_lossy().into_owned();
            let dir = tempfile::tempdir().unwrap();
            let cache_dir = dir.path().join("cache");
            let plain = php(script, &[]);
            let cold = cached(script, &cache_dir, &dir.path().join("cold.json"));
            let warm = cached(script, &cache_dir, &dir.path().join("warm.json"));
            let (c, w) = (
                counters(&dir.path().join("cold.json")),
                counters(&dir.path().join("warm.json")),
            );
            let mut problems = Vec::new();
            if cold != warm {
                problems.push("the warm run differs from the cold run".to_string());
            }
            if warm != plain {
                // Only where OPcache itself differs from plain PHP (its delayed early
                // binding makes classes that extend a later class exist sooner), and then
                // the cache must behave as OPcache does.
                let reference = opcache_reference(script);
                if warm != reference || reference == plain {
                    problems.push(format!(
                        "output differs from PHP's:\n--- php\n{}\n--- zopt cache\n{}",
                        plain.stdout, warm.stdout
                    ));
                }
            }
            if w.compiles != 0 || w.served == 0 || w.served != w.hits {
                problems.push(format!("warm run compiled: {w:?}"));
            }
            if c.compiles != c.misses || c.stores != c.misses || c.load_failures + w.load_failures != 0 {
                problems.push(format!("cold run: {c:?}"));
            }
            if c.uncacheable + w.uncacheable + c.rejects + w.rejects != 0 {
                problems.push(format!("uncacheable or rejected: {c:?} / {w:?}"));
            }
            (!problems.is_empty()).then(|| format!("{name}: {}", problems.join("; ")))
        })
        .collect();
    eprintln!(
        "{} of {} fixture programs served from the cache exactly",
        programs.len() - failures.len(),
        programs.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// An included file that changes is recompiled (a stale entry is rejected, never served);
/// a damaged entry is rejected and recompiled; both give the new, right output.
#[test]
fn stale_and_damaged_entries_are_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app");
    std::fs::create_dir(&app).unwrap();
    let main = app.join("main.php");
    let lib = app.join("lib.php");
    std::fs::write(
        &main,
        "<?php\nrequire __DIR__ . '/lib.php';\necho greet('cache'), \"\\n\";\n",
    )
    .unwrap();
    std::fs::write(&lib, "<?php\nfunction greet($w) { return \"hello $w\"; }\n").unwrap();
    let cache_dir = dir.path().join("cache");
    let stats = |n: &str| dir.path().join(format!("{n}.json"));

    let first = cached(&main, &cache_dir, &stats("1"));
    assert_eq!(first.stdout, "hello cache\n");
    assert_eq!(counters(&stats("1")).stores, 2);
    let second = cached(&main, &cache_dir, &stats("2"));
    assert_eq!(second, first);
    assert_eq!(counters(&stats("2")).compiles, 0);

    std::fs::write(
        &lib,
        "<?php\nfunction greet($w) { return \"bonjour $w!\"; }\n",
    )
    .unwrap();
    let third = cached(&main, &cache_dir, &stats("3"));
    assert_eq!(third.stdout, "bonjour cache!\n");
    let c = counters(&stats("3"));
    assert_eq!((c.hits, c.rejects, c.compiles), (1, 1, 1), "{c:?}");

    // Damage every entry in the middle: each is rejected (checksum) and recompiled.
    let mut damaged = 0;
    for entry in zend_cache::file_cache::scan(&cache_dir).unwrap().entries {
        let mut bytes = std::fs::read(&entry.path).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x5a;
        std::fs::write(&entry.path, bytes).unwrap();
        damaged += 1;
    }
    assert_eq!(damaged, 2);
    let fourth = cached(&main, &cache_dir, &stats("4"));
    assert_eq!(fourth, third);
    let c = counters(&stats("4"));
    assert_eq!((c.hits, c.rejects, c.compiles, c.stores), (0, 2, 2, 2), "{c:?}");
}
