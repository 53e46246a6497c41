//! The opcode cache on real recordings: every fixture, recorded by the zopt extension in
//! real PHP, survives persist → load and a file-cache store → lookup exactly; and the
//! `zopt cache` machinery (warm, stat, verify, clear) works end to end. PHP and the
//! extension are required (CI installs PHP; the extension is built here if missing).

mod common;

use common::{extension, workspace_root};

use rayon::prelude::*;
use std::path::PathBuf;
use zend_cache::{
    file_cache, CacheBackend, CacheKey, FileCache, FileCacheConfig, SystemId, ValidationMode,
};
use zopt::corpus::{load_recording, php_files};
use zopt::php::Php;

#[test]
fn every_fixture_recording_roundtrips_through_the_cache() {
    let php = Php::locate(None, Some(extension())).unwrap();
    let files = php_files(&[workspace_root().join("fixtures/php")]).unwrap();
    assert!(files.len() > 50);
    let cache_dir = tempfile::tempdir().unwrap();
    let system = SystemId::new(&zopt::cache::php_version(&php).unwrap(), 0);
    let cache = FileCache::open(
        cache_dir.path(),
        system,
        FileCacheConfig {
            sync: false,
            ..Default::default()
        },
    )
    .unwrap();
    let checked: Vec<String> = files
        .par_iter()
        .filter_map(|file| {
            let tmp = tempfile::tempdir().unwrap();
            // Fixtures PHP cannot compile (deliberate compile errors) have no recording.
            let compiled = php.compile(&file.path, 0, 0, Some(tmp.path())).ok()?;
            let script = load_recording(&compiled.recording.unwrap()).unwrap();
            let body = zend_cache::persist(&script).unwrap();
            assert_eq!(
                body.len(),
                zend_cache::persist_calc(&script).unwrap().size()
            );
            assert_eq!(
                zend_cache::load(&body).unwrap(),
                script,
                "{}",
                file.path.display()
            );
            let real = std::fs::canonicalize(&file.path).unwrap();
            let key = CacheKey::for_file(&real, ValidationMode::MtimeSize).unwrap();
            cache.store(&key, &script).unwrap();
            let hit = cache.lookup(&key).unwrap();
            assert_eq!(hit.to_script(), script, "{}", file.path.display());
            let ops: usize = script.op_arrays().iter().map(|oa| oa.opcodes.len()).sum();
            assert!(ops as u32 <= hit.view().op_count());
            Some(file.relative.display().to_string())
        })
        .collect();
    eprintln!(
        "{} of {} fixtures round-tripped",
        checked.len(),
        files.len()
    );
    assert!(
        checked.len() * 10 >= files.len() * 9,
        "too few fixtures compiled: {}",
        checked.len()
    );
    assert_eq!(cache.stats().hits as usize, checked.len());
}

#[test]
fn warm_stat_verify_clear() {
    let php = Php::locate(None, Some(extension())).unwrap();
    let root = workspace_root();
    let dir = tempfile::tempdir().unwrap();
    let cache_dir = dir.path().join("cache");
    let inputs: Vec<PathBuf> = [
        "app_bank_account.php",
        "oop_traits.php",
        "fn_closures.php",
        "gen_basic.php",
        "oop_extends_later.php",
        "oop_conditional_class.php",
    ]
    .iter()
    .map(|f| root.join("fixtures/php").join(f))
    .collect();
    let config = FileCacheConfig {
        sync: false,
        ..Default::default()
    };
    let r = zopt::cache::warm(
        &php,
        &cache_dir,
        0x7FFEBFFF,
        ValidationMode::MtimeSize,
        config.clone(),
        false,
        &inputs,
    )
    .unwrap();
    assert_eq!((r.stored, r.fresh), (6, 0));
    let again = zopt::cache::warm(
        &php,
        &cache_dir,
        0x7FFEBFFF,
        ValidationMode::MtimeSize,
        config,
        false,
        &inputs,
    )
    .unwrap();
    assert_eq!((again.stored, again.fresh), (0, 6));

    // What warm stored is what the extension stores itself: it serves every warmed program
    // without compiling, and the programs print what PHP prints (the hoisting fixtures
    // fail if a script was compiled as opcache_compile_file compiles, without binding
    // classes at compile time).
    for input in &inputs {
        let run = |settings: &[String]| {
            let mut cmd = std::process::Command::new(&php.binary);
            cmd.arg("-n");
            for s in settings {
                cmd.args(["-d", s]);
            }
            cmd.arg(input.file_name().unwrap())
                .current_dir(input.parent().unwrap())
                .output()
                .unwrap()
        };
        let stats = dir.path().join("served.json");
        let served = run(&[
            format!("extension={}", extension().display()),
            format!("zopt.cache_dir={}", cache_dir.display()),
            "zopt.optimization_level=0x7FFEBFFF".into(),
            format!("zopt.cache_stats={}", stats.display()),
        ]);
        let plain = run(&[
            "zend_extension=opcache".into(),
            "opcache.enable_cli=1".into(),
        ]);
        assert_eq!(
            String::from_utf8_lossy(&served.stdout),
            String::from_utf8_lossy(&plain.stdout),
            "{}",
            input.display()
        );
        let line = std::fs::read_to_string(&stats).unwrap();
        let counters: serde_json::Value =
            serde_json::from_str(line.lines().last().unwrap()).unwrap();
        assert_eq!(counters["compiles"], 0, "{}: {line}", input.display());
        std::fs::remove_file(&stats).unwrap();
    }

    let stat = zopt::cache::stat(&cache_dir).unwrap();
    assert!(stat.contains("6 entries"), "{stat}");
    assert!(stat.contains("optimization_level 0x7ffebfff"), "{stat}");
    // Serving each program from its entry stored its run-time image beside it; verify
    // checks those too.
    let ok = zopt::cache::verify(&cache_dir, true).unwrap();
    assert_eq!((ok.good, ok.bad, ok.stale), (12, 0, 0), "{}", ok.text);
    assert!(
        ok.text.contains("6 entries and 6 run-time images"),
        "{}",
        ok.text
    );

    // Damage two entries: verify names both, with their reasons.
    let entries = file_cache::scan(&cache_dir).unwrap().entries;
    let mut bytes = std::fs::read(&entries[0].path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&entries[0].path, &bytes).unwrap();
    let len = std::fs::metadata(&entries[1].path).unwrap().len();
    std::fs::File::options()
        .write(true)
        .open(&entries[1].path)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    let bad = zopt::cache::verify(&cache_dir, false).unwrap();
    assert_eq!((bad.good, bad.bad), (10, 2), "{}", bad.text);
    assert!(
        bad.text
            .contains(&format!("bad {}: checksum", entries[0].path.display())),
        "{}",
        bad.text
    );
    assert!(
        bad.text
            .contains(&format!("bad {}: truncated", entries[1].path.display())),
        "{}",
        bad.text
    );

    // The command line exits non-zero on them.
    let zopt = env!("CARGO_BIN_EXE_zopt");
    let out = std::process::Command::new(zopt)
        .args(["cache", "verify", "--cache-dir"])
        .arg(&cache_dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 bad"));

    let out = std::process::Command::new(zopt)
        .args(["cache", "clear", "--cache-dir"])
        .arg(&cache_dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(file_cache::scan(&cache_dir).unwrap().entries.is_empty());
    let out = std::process::Command::new(zopt)
        .args(["cache", "verify", "--cache-dir"])
        .arg(&cache_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn pack_stat_verify_from_the_command_line() {
    let php = Php::locate(None, Some(extension())).unwrap();
    let root = workspace_root();
    let dir = tempfile::tempdir().unwrap();
    let cache_dir = dir.path().join("cache");
    let inputs: Vec<PathBuf> = ["app_bank_account.php", "oop_traits.php", "gen_basic.php"]
        .iter()
        .map(|f| root.join("fixtures/php").join(f))
        .collect();
    let config = FileCacheConfig {
        sync: false,
        ..Default::default()
    };
    let warmed = zopt::cache::warm(
        &php,
        &cache_dir,
        0x7FFEBFFF,
        ValidationMode::MtimeSize,
        config,
        false,
        &inputs,
    )
    .unwrap();
    assert_eq!(warmed.stored, 3);
    let zopt = env!("CARGO_BIN_EXE_zopt");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(zopt)
            .arg("cache")
            .args(args)
            .arg("--cache-dir")
            .arg(&cache_dir)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (ok, text) = run(&["pack", "--prune"]);
    assert!(ok, "{text}");
    assert!(
        text.contains("packed 3 entries (3 loose, 0 from the previous pack)"),
        "{text}"
    );
    assert!(text.contains("3 loose entries pruned"), "{text}");
    assert!(file_cache::scan(&cache_dir).unwrap().entries.is_empty());
    let (_, stat) = run(&["stat"]);
    assert!(stat.contains("pack: 3 entries"), "{stat}");
    let (ok, text) = run(&["verify", "--check-sources"]);
    assert!(
        ok && text.contains("3 entries (3 in packs): 3 good, 0 bad, 0 stale"),
        "{text}"
    );

    // Served from the pack.
    let system = zopt::cache::system_id(&php, 0x7FFEBFFF).unwrap();
    let cache = FileCache::open(&cache_dir, system, FileCacheConfig::default()).unwrap();
    for input in &inputs {
        let real = std::fs::canonicalize(input).unwrap();
        let key = CacheKey::for_file(&real, ValidationMode::MtimeSize).unwrap();
        assert!(cache.lookup(&key).unwrap().is_packed());
    }

    // A damaged index: verify names the pack and fails.
    let pack = cache.dir().join(zend_cache::pack::PACK_FILE);
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[50] ^= 1;
    std::fs::write(&pack, &bytes).unwrap();
    let (ok, text) = run(&["verify"]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!("bad {}: index checksum mismatch", pack.display())),
        "{text}"
    );
    let (ok, text) = run(&["clear"]);
    assert!(ok && text.contains("removed 3 entries"), "{text}");
    assert!(!pack.exists());
}
