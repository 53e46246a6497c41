//! zopt as PHP's opcode cache (`zopt.cache_dir`) when entries go bad: a stale or damaged
//! entry is rejected (the extension's counters say why) and the file recompiled, never
//! served. That every program runs identically from a warm cache without compiling is
//! exec-diff's mode (e), tested with the other modes in tests/exec_diff.rs. PHP and the
//! extension are required.

mod common;

use common::extension;

use std::path::Path;
use std::process::Command;

/// The cache counters a run appended to its `zopt.cache_stats` file.
#[derive(Debug, Default)]
struct Counters {
    hits: u64,
    rejects: u64,
    compiles: u64,
    stores: u64,
    image_hits: u64,
    shm_hits: u64,
}

fn counters(stats_file: &Path) -> Counters {
    let text = std::fs::read_to_string(stats_file)
        .unwrap_or_else(|e| panic!("no cache stats in {}: {e}", stats_file.display()));
    let v: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let n = |k: &str| {
        v[k].as_u64()
            .unwrap_or_else(|| panic!("{k} missing in {text}"))
    };
    Counters {
        hits: n("hits"),
        rejects: n("rejects"),
        compiles: n("compiles"),
        stores: n("stores"),
        image_hits: n("image_hits"),
        shm_hits: n("shm_hits"),
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Run {
    stdout: String,
    status: Option<i32>,
}

/// PHP running `script` from its directory with `settings` (`-n`: no php.ini, nothing but
/// what is asked for).
fn php_command(script: &Path, settings: &[String]) -> Command {
    let mut cmd = Command::new(std::env::var_os("ZOPT_PHP").unwrap_or("php".into()));
    cmd.arg("-n");
    for s in settings {
        cmd.args(["-d", s]);
    }
    cmd.arg(script.file_name().unwrap())
        .current_dir(script.parent().unwrap())
        .stdin(std::process::Stdio::null());
    cmd
}

/// Runs [`php_command`].
fn php(script: &Path, settings: &[String]) -> Run {
    let out = php_command(script, settings).output().unwrap();
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        status: out.status.code(),
    }
}

/// The extension as the cache in `cache_dir`, its counters appended to `stats`.
fn cache_settings(cache_dir: &Path, stats: &Path) -> Vec<String> {
    vec![
        format!("extension={}", extension().display()),
        format!("zopt.cache_dir={}", cache_dir.display()),
        format!("zopt.cache_stats={}", stats.display()),
    ]
}

fn cached(script: &Path, cache_dir: &Path, stats: &Path) -> Run {
    let mut settings = cache_settings(cache_dir, stats);
    settings.push("zopt.verify=1".into());
    php(script, &settings)
}

/// Runs `script` twice with the cache in `cache_dir` (verifying what it loads), the first
/// run filling it; both must print `expected`. The counters of the second.
fn cold_then_warm(script: &Path, cache_dir: &Path, expected: &Run) -> Counters {
    let stats = |name: &str| cache_dir.with_file_name(name);
    let cold = cached(script, cache_dir, &stats("cold.json"));
    let warm = cached(script, cache_dir, &stats("warm.json"));
    assert_eq!(&cold, expected, "cold run");
    assert_eq!(&warm, expected, "warm run");
    counters(&stats("warm.json"))
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
    assert_eq!(
        (c.hits, c.rejects, c.compiles, c.stores),
        (0, 2, 2, 2),
        "{c:?}"
    );
}

/// Every library installed under /usr/share/php (composer, phpunit, php-parser, twig, the
/// Laravel components and their dependencies that CI installs, and whatever else the machine
/// has: thousands of scripts) loads from a warm cache exactly as PHP compiles it: the
/// reflection digest of every class is identical, every script was served without
/// compiling, and each load was verified by capturing it again. A directory PHP itself
/// cannot load (a fatal error: php-icinga's classes use traits of icinga-php-library, which
/// lives elsewhere) is left out of every run, named; the ones CI installs never are.
#[test]
fn debian_libraries_load_identically_from_a_warm_cache() {
    const ROOT: &str = "/usr/share/php";
    let dir = tempfile::tempdir().unwrap();
    let driver = zopt::bench::write_driver(dir.path()).unwrap();
    let cache_dir = dir.path().join("cache");
    let attempt = |settings: &[String], skipped: &[String]| {
        let mut cmd = Command::new(std::env::var_os("ZOPT_PHP").unwrap_or("php".into()));
        // The compiler's diagnostics (`${var}` in strings is deprecated, in
        // dragonmantank/cron-expression) are part of the output: the cached runs replay them
        // (`zopt.record_warnings=1`).
        cmd.args(["-n", "-d", "memory_limit=1G"]);
        for s in settings {
            cmd.args(["-d", s]);
        }
        cmd.arg(&driver).arg("digest");
        for skip in skipped {
            cmd.args(["--skip", skip]);
        }
        cmd.arg(ROOT).output().unwrap()
    };
    // The directories left out: each fatal error of the reference run leaves out the
    // top-level directory of the file it happened in.
    let mut skipped: Vec<String> = Vec::new();
    loop {
        let out = attempt(&[], &skipped);
        if out.status.success() {
            break;
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let file = stderr
            .lines()
            .find_map(|l| l.strip_prefix("zopt-digest-fatal: "))
            .unwrap_or_else(|| panic!("PHP failed: {stderr}"));
        let top = Path::new(file)
            .strip_prefix(ROOT)
            .ok()
            .and_then(|rest| rest.components().next())
            .unwrap_or_else(|| panic!("a fatal error outside {ROOT}: {stderr}"));
        let top = Path::new(ROOT).join(top).display().to_string();
        assert!(!skipped.contains(&top), "{stderr}");
        eprintln!("left out: {top} ({})", stderr.trim());
        skipped.push(top);
        assert!(skipped.len() <= 16, "{skipped:?}");
    }
    for needed in [
        "Composer",
        "PHPUnit",
        "PhpParser",
        "Twig",
        "Illuminate",
        "Symfony",
    ] {
        assert!(
            !skipped.contains(&format!("{ROOT}/{needed}")),
            "{needed} cannot be loaded: {skipped:?}"
        );
    }
    let run = |settings: &[String]| {
        let out = attempt(settings, &skipped);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let verified_settings = |stats: &str| {
        let mut settings = cache_settings(&cache_dir, &dir.path().join(stats));
        settings.extend(["zopt.verify=1".into(), "zopt.record_warnings=1".into()]);
        settings
    };
    let reference = run(&[]);
    let classes = reference
        .lines()
        .filter(|l| !l.starts_with("error "))
        .count();
    assert!(
        classes >= 1000,
        "only {classes} classes: are php-parser, php-twig, composer and phpunit installed?"
    );
    let cold = run(&verified_settings("cold.json"));
    let warm = run(&verified_settings("warm.json"));
    assert!(cold == reference, "the cold run declared different classes");
    assert!(warm == reference, "the warm run declared different classes");
    let (c, w) = (
        counters(&dir.path().join("cold.json")),
        counters(&dir.path().join("warm.json")),
    );
    assert!(c.stores >= 1000, "{c:?}");
    assert_eq!((w.compiles, w.rejects, w.hits), (0, 0, c.stores), "{w:?}");

    // Packed (and the loose entries pruned): served from the pack alone, identically.
    zend_cache::file_cache::pack(&cache_dir, true).unwrap();
    let packed = run(&verified_settings("packed.json"));
    assert!(
        packed == reference,
        "the packed run declared different classes"
    );
    let p = counters(&dir.path().join("packed.json"));
    assert_eq!((p.compiles, p.rejects, p.hits), (0, 0, c.stores), "{p:?}");
    let text = std::fs::read_to_string(dir.path().join("packed.json")).unwrap();
    assert!(text.contains("\"pack\":\"pack of"), "{text}");
}

/// `zopt bench serve` runs end to end on a real library (its timings are not asserted: they
/// are measurements): every mode loads the same classes and the warm zopt runs compile
/// nothing (the bench itself fails otherwise).
#[test]
fn bench_serve_measures_a_real_library() {
    let php = std::env::var_os("ZOPT_PHP").unwrap_or("php".into());
    let report = zopt::bench::serve(
        Path::new(&php),
        extension(),
        &[Path::new("/usr/share/php/PhpParser").to_path_buf()],
        1,
    )
    .unwrap();
    assert!(report.classes >= 100, "{report:?}");
    assert!(report.scripts >= report.classes, "{report:?}");
    assert_eq!(report.modes.len(), zopt::bench::MODES.len());
    assert!(report.zopt_ns_per_script > 0.0);
}

/// Including a file twice redeclares its function or class: served from the cache, PHP
/// stops with the message it gives when it compiles the file itself.
#[test]
fn redeclarations_fail_as_when_compiling() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(app.join("f.php"), "<?php\nfunction f() { return 1; }\n").unwrap();
    std::fs::write(app.join("k.php"), "<?php\nclass K {}\n").unwrap();
    for lib in ["f.php", "k.php"] {
        let main = app.join(format!("main_{lib}"));
        std::fs::write(
            &main,
            format!("<?php\ninclude __DIR__ . '/{lib}';\necho \"once\\n\";\ninclude __DIR__ . '/{lib}';\necho \"twice\\n\";\n"),
        )
        .unwrap();
        let plain = php(&main, &[]);
        assert!(
            plain.stdout.contains("Fatal error: Cannot"),
            "{}",
            plain.stdout
        );
        let cache_dir = dir.path().join("cache");
        let cold = cached(&main, &cache_dir, &dir.path().join("cold.json"));
        let warm = cached(&main, &cache_dir, &dir.path().join("warm.json"));
        assert_eq!(cold, plain, "{lib}");
        assert_eq!(warm, plain, "{lib}");
    }
}

/// A script included through a stream wrapper (`php://filter/...resource=lib.php`) is not
/// the file its opened path names: it is compiled each time, not served as that file's
/// entry (php-src's ext/opcache/tests/bug64482.phpt).
#[test]
fn stream_wrapper_includes_are_not_served_as_their_file() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(app.join("lib.php"), "<?php\necho \"Dynamic include\";\n").unwrap();
    let main = app.join("main.php");
    std::fs::write(
        &main,
        "<?php\ninclude 'lib.php';\necho \"\\n\";\n\
         include 'php://filter/read=string.toupper/resource=lib.php';\necho \"\\n\";\n",
    )
    .unwrap();
    let plain = php(&main, &[]);
    assert_eq!(plain.stdout, "Dynamic include\nDYNAMIC INCLUDE\n");
    let c = cold_then_warm(&main, &dir.path().join("cache"), &plain);
    // main.php and lib.php from the cache; the filtered include compiled.
    assert_eq!((c.hits, c.compiles), (2, 1), "{c:?}");
}

/// What a script served from the cache keeps of its compilation beyond its code: a class
/// declared after an unconditional `return` is early-bound all the same (PHP binds it while
/// compiling; the optimizer removes its unreachable declaration, and the binding is kept as
/// compiled, as OPcache keeps it: php-src's Zend/tests/early_binding_unreachable.phpt); a
/// class the compiler linked to its parent is linked again as the compiler did, finding
/// itself by name (a `self` return type overriding its parent's:
/// Zend/tests/return_types/inheritance005.phpt); and the error of a class constant names
/// the constant expression's line (PHP reads it from the expression at run time). Cold,
/// warm, and served from run-time images.
#[test]
fn bindings_and_lines_are_as_compiled() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(
        app.join("lib.php"),
        "<?php\nvar_dump(new B);\nif (true) {\n    return;\n}\nclass B extends A {}\n",
    )
    .unwrap();
    let main = app.join("main.php");
    std::fs::write(
        &main,
        "<?php\nclass A {}\nrequire __DIR__ . '/lib.php';\nclass C\n{\n\
         \x20   const X = D::Y;\n}\n\ntry {\n    new C;\n} catch (Error $e) {\n\
         \x20   echo $e->getMessage(), ' on line ', $e->getLine(), \"\\n\";\n}\n\
         class Foo { public static function make(): self { return new Foo; } }\n\
         class Bar extends Foo { public static function make(): self { return new Bar; } }\n\
         echo get_class(Bar::make()), \"\\n\";\n",
    )
    .unwrap();
    let plain = php(&main, &[]);
    assert_eq!(
        plain.stdout,
        "object(B)#1 (0) {\n}\nClass \"D\" not found on line 6\nBar\n"
    );
    let cache_dir = dir.path().join("cache");
    assert_eq!(cold_then_warm(&main, &cache_dir, &plain).hits, 2);
    let imaging = php(
        &main,
        &cache_settings(&cache_dir, &dir.path().join("imaging.json")),
    );
    let imaged_stats = dir.path().join("imaged.json");
    let imaged = php(&main, &cache_settings(&cache_dir, &imaged_stats));
    assert_eq!(imaging, plain);
    assert_eq!(imaged, plain);
    assert_eq!(counters(&imaged_stats).image_hits, 2);
}

/// Four processes filling one empty cache at once, then four reading it: every run prints
/// PHP's own digest of every class of php-parser (entries are written atomically; a
/// process never sees another's half-written entry).
#[test]
fn concurrent_processes_share_one_cache() {
    let dir = tempfile::tempdir().unwrap();
    let driver = zopt::bench::write_driver(dir.path()).unwrap();
    let cache_dir = dir.path().join("cache");
    let digest = |settings: Vec<String>| {
        let mut cmd = Command::new(std::env::var_os("ZOPT_PHP").unwrap_or("php".into()));
        cmd.arg("-n");
        for s in settings {
            cmd.args(["-d", &s]);
        }
        cmd.arg(&driver)
            .args(["digest", "/usr/share/php/PhpParser"])
            .output()
            .unwrap()
    };
    let reference = digest(vec![]);
    assert!(reference.status.success());
    for round in ["fill", "read"] {
        std::thread::scope(|scope| {
            let runs: Vec<_> = (0..4)
                .map(|i| {
                    let settings = vec![
                        format!("extension={}", extension().display()),
                        format!("zopt.cache_dir={}", cache_dir.display()),
                        format!(
                            "zopt.cache_stats={}",
                            dir.path().join(format!("{round}{i}.json")).display()
                        ),
                        "zopt.verify=1".to_string(),
                    ];
                    let digest = &digest;
                    scope.spawn(move || digest(settings))
                })
                .collect();
            for run in runs {
                let out = run.join().unwrap();
                assert!(out.status.success());
                assert!(out.stdout == reference.stdout, "{round}: a digest differs");
            }
        });
    }
    for i in 0..4 {
        let c = counters(&dir.path().join(format!("read{i}.json")));
        assert_eq!(c.compiles, 0, "{c:?}");
    }
}

/// When OPcache caches scripts itself, zopt's cache stays out of the way: PHP behaves as
/// with OPcache alone, and zopt says so once, on stderr (the program's output is untouched).
#[test]
fn opcache_enabled_means_zopt_cache_passes_through() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.php");
    std::fs::write(&main, "<?php\necho 'hello', \"\\n\";\n").unwrap();
    let out = Command::new(std::env::var_os("ZOPT_PHP").unwrap_or("php".into()))
        .arg("-n")
        .args(["-d", "zend_extension=opcache", "-d", "opcache.enable_cli=1"])
        .args(["-d", &format!("extension={}", extension().display())])
        .args([
            "-d",
            &format!("zopt.cache_dir={}", dir.path().join("cache").display()),
        ])
        .args([
            "-d",
            &format!("zopt.cache_stats={}", dir.path().join("s.json").display()),
        ])
        .arg(&main)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("OPcache is caching scripts").count(),
        1,
        "{stderr}"
    );
    let c = counters(&dir.path().join("s.json"));
    assert_eq!((c.hits, c.stores), (0, 0), "{c:?}");
}

/// What PHP's compiler says while compiling a script (deprecations, compile warnings) is
/// kept in its entry: with `zopt.record_warnings=1` every hit says it again, in the file
/// cache (entry and run-time image paths) and in shared memory (entry and run-time form), so
/// the program prints exactly what it prints without a cache; with the default `0`, a hit
/// is silent, as OPcache's is without `opcache.record_warnings` (OPcache is run as the
/// oracle for both).
#[test]
fn compile_time_diagnostics_are_replayed_on_hits_with_record_warnings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("warned.php"),
        "<?php\n\
         declare(ticks_per_second=1);\n\
         $x = 1;\n\
         echo \"x=${x}\\n\";\n\
         $f = function ($a = 1, $b) { return \"${a}${b}\"; };\n\
         echo $f(2, 3), \"\\n\";\n",
    )
    .unwrap();
    let main = dir.path().join("main.php");
    std::fs::write(
        &main,
        "<?php\n\
         for ($i = 0; $i < 3; $i++) { include __DIR__ . '/warned.php'; }\n\
         set_error_handler(function ($no, $msg, $file, $line) {\n\
             echo \"handler: $no $msg \", basename($file), \":$line\\n\";\n\
             return true;\n\
         });\n\
         include __DIR__ . '/warned.php';\n\
         error_reporting(E_ALL & ~E_DEPRECATED);\n\
         include __DIR__ . '/warned.php';\n",
    )
    .unwrap();
    let reference = php(&main, &[]);
    assert_eq!(reference.status, Some(0), "{}", reference.stdout);
    assert_eq!(
        reference.stdout.matches("Deprecated: Using ${var}").count(),
        9,
        "{}",
        reference.stdout
    );
    assert!(reference.stdout.contains("Unsupported declare"));
    assert!(reference
        .stdout
        .contains("handler: 8192 Optional parameter $a"));

    // The files were just written: OPcache's protection of files changed in the last
    // seconds is off.
    let opcache = |record: u8, file_cache: &Path| {
        php(
            &main,
            &[
                "zend_extension=opcache".into(),
                "opcache.enable_cli=1".into(),
                format!("opcache.file_cache={}", file_cache.display()),
                "opcache.file_cache_only=1".into(),
                "opcache.file_update_protection=0".into(),
                format!("opcache.record_warnings={record}"),
            ],
        )
    };
    let zopt = |record: u8, shm: bool, cache_dir: &Path, stats: &Path| {
        let mut settings = cache_settings(cache_dir, stats);
        settings.push(format!("zopt.record_warnings={record}"));
        if shm {
            settings.push("zopt.memory_consumption=16".into());
        }
        php(&main, &settings)
    };

    for record in [0u8, 1] {
        // The oracle: OPcache's file cache, warm.
        let oc_dir = dir.path().join(format!("opcache-{record}"));
        std::fs::create_dir(&oc_dir).unwrap();
        // Cold, the second and later includes are hits already.
        let oc_cold = opcache(record, &oc_dir);
        let oc_warm = opcache(record, &oc_dir);
        if record == 1 {
            assert_eq!(oc_cold, reference, "OPcache replays what PHP says");
            assert_eq!(oc_warm, reference, "OPcache replays what PHP says");
        } else {
            assert!(
                oc_cold.stdout.matches("Deprecated").count() == 4,
                "{oc_cold:?}"
            );
            assert!(!oc_warm.stdout.contains("Deprecated"), "{oc_warm:?}");
        }
        for shm in [false, true] {
            let tag = format!("{record}-{}", if shm { "shm" } else { "file" });
            let cache_dir = dir.path().join(format!("cache-{tag}"));
            let stats = |run: &str| dir.path().join(format!("{tag}-{run}.json"));
            let cold = zopt(record, shm, &cache_dir, &stats("cold"));
            assert_eq!(cold, oc_cold, "{tag}: cold, as OPcache's");
            // The file cache's entry, then its run-time image (or the entry again: a
            // script with diagnostics has no image).
            for run in ["warm", "warmer"] {
                let warm = zopt(record, shm, &cache_dir, &stats(run));
                assert_eq!(warm, oc_warm, "{tag} {run}: a hit says what OPcache's says");
                let c = counters(&stats(run));
                assert_eq!(c.compiles, 0, "{tag} {run}");
                let file_hits = c.hits + c.image_hits;
                assert!(file_hits >= 2, "{tag} {run}: {file_hits} hits");
            }
            if shm {
                // Within one process, later includes are shared-memory hits.
                let shm_hits = counters(&stats("warm")).shm_hits;
                assert!(shm_hits >= 4, "{tag}: {shm_hits} shared-memory hits");
            }
        }
    }
}

/// A user error handler that includes a file while PHP's compiler reports a deprecation
/// compiles that file inside the compile of the first: each is cached as a script of its
/// own (the first's entry does not declare what the nested one declared), and both are
/// cached (the nested compile is not taken for OPcache's).
#[test]
fn a_file_included_by_an_error_handler_during_a_compile_is_a_script_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("outer.php"),
        "<?php\n$x = 1;\necho \"${x}\\n\";\nclass Outer {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("inner.php"),
        "<?php\nclass Inner {}\nfunction inner_f() { return 'inner_f'; }\n",
    )
    .unwrap();
    let main = dir.path().join("main.php");
    std::fs::write(
        &main,
        "<?php\n\
         set_error_handler(function ($no, $msg, $file, $line) {\n\
             if (!class_exists('Inner', false)) { include __DIR__ . '/inner.php'; }\n\
             echo \"handled $line\\n\";\n\
             return true;\n\
         });\n\
         include __DIR__ . '/outer.php';\n\
         echo class_exists('Inner', false) ? \"Inner\\n\" : \"no Inner\\n\";\n\
         echo function_exists('inner_f') ? inner_f() : 'no inner_f', \"\\n\";\n\
         echo class_exists('Outer', false) ? \"Outer\\n\" : \"no Outer\\n\";\n",
    )
    .unwrap();
    let reference = php(&main, &[]);
    assert_eq!(
        reference.stdout, "handled 3\n1\nInner\ninner_f\nOuter\n",
        "{reference:?}"
    );
    for record in [0u8, 1] {
        let cache_dir = dir.path().join(format!("cache-{record}"));
        let stats = |run: &str| dir.path().join(format!("{record}-{run}.json"));
        let run = |name: &str| {
            let mut settings = cache_settings(&cache_dir, &stats(name));
            settings.push(format!("zopt.record_warnings={record}"));
            let out = php_command(&main, &settings).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(!stderr.contains("OPcache"), "{stderr}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        assert_eq!(run("cold"), reference.stdout);
        assert_eq!(counters(&stats("cold")).stores, 3);
        let warm = run("warm");
        if record == 1 {
            // The handler runs again on the replayed deprecation and includes inner.php.
            assert_eq!(warm, reference.stdout);
        } else {
            // No deprecation, so no handler: nothing includes inner.php, and outer.php's
            // entry does not declare its class and function.
            assert_eq!(warm, "1\nno Inner\nno inner_f\nOuter\n");
        }
        assert_eq!(counters(&stats("warm")).compiles, 0);
    }
}
