//! The extension's PHP functions in the CLI: `zopt_compile_file`, `zopt_invalidate` and
//! `zopt_is_script_cached` behave as OPcache's functions of the same names do under
//! OPcache (the same script, run under each, prints the same); `zopt_compile_file` primes
//! the cache for the next process; `zopt_reset` retires every script of the segment;
//! `zopt_get_configuration` reports the settings in force; wrong argument types are
//! refused, never read as strings.

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

fn write(dir: &Path, name: &str, code: &str) {
    std::fs::write(dir.join(name), code).expect("writing a test script");
}

/// Three scripts: functions and classes (one extending another), a plain class, and the
/// main script calling `{$p}_*` for the prefix given as its first argument.
fn scripts(dir: &Path) {
    write(
        dir,
        "lib.php",
        "<?php\nclass C {}\nclass D extends C {}\nfunction lib_f() { return 1; }\necho \"ran lib\\n\";\n",
    );
    write(
        dir,
        "plain.php",
        "<?php\nclass P {}\nfunction plain_f() {}\n",
    );
    write(
        dir,
        "main.php",
        r#"<?php
$p = $argv[1];
$d = __DIR__;
$call = fn($f, ...$a) => ($p . '_' . $f)(...$a);
var_dump($call('compile_file', "$d/lib.php"));
var_dump(function_exists('lib_f'), class_exists('C', false), class_exists('D', false));
var_dump($call('is_script_cached', "$d/lib.php"));
var_dump($call('invalidate', "$d/lib.php"));
var_dump($call('invalidate', "$d/lib.php", true));
var_dump($call('is_script_cached', "$d/lib.php"));
var_dump($call('compile_file', "$d/missing.php"));
require "$d/plain.php";
var_dump($call('compile_file', "$d/plain.php"));
echo "still running\n";
"#,
    );
}

fn run(args: &[&str], script: &Path, arg: &str) -> Output {
    common::php()
        .arg("-n")
        .args(args.iter().flat_map(|a| ["-d", a]))
        .arg(script)
        .arg(arg)
        .output()
        .expect("running php")
}

/// stdout and stderr together, with the product names and the prefixes made equal.
fn normalized(out: &Output) -> String {
    let text = format!(
        "{}{}exit {:?}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        out.status.code()
    );
    text.replace("Zend OPcache", "zopt")
        .replace("opcache_", "zopt_")
}

fn ext() -> String {
    format!("extension={}", common::extension().display())
}

#[test]
fn compile_file_invalidate_and_is_cached_behave_as_opcache_s() {
    let dir = tempfile::tempdir().unwrap();
    scripts(dir.path());
    let main = dir.path().join("main.php");
    let opcache = run(
        &[
            "zend_extension=opcache",
            "opcache.enable_cli=1",
            "opcache.file_update_protection=0",
            "opcache.jit=0",
        ],
        &main,
        "opcache",
    );
    let ext = ext();
    let zopt = run(&[&ext, "zopt.memory_consumption=32"], &main, "zopt");
    let expected = normalized(&opcache);
    // What OPcache prints is what the test means: functions bound, classes not declared,
    // the redeclaration reported as a warning (and exit status 255), a missing file.
    assert!(
        expected.contains("zopt could not compile file") && expected.contains("still running"),
        "unexpected OPcache output:\n{expected}"
    );
    assert_eq!(normalized(&zopt), expected);
}

#[test]
fn compile_file_primes_the_cache_for_the_next_process() {
    let dir = tempfile::tempdir().unwrap();
    scripts(dir.path());
    let cache = dir.path().join("cache");
    let stats = dir.path().join("stats.json");
    write(
        dir.path(),
        "prime.php",
        "<?php var_dump(zopt_compile_file(__DIR__ . '/lib.php'), zopt_compile_file(__DIR__ . '/plain.php'));\n",
    );
    write(
        dir.path(),
        "use.php",
        "<?php require __DIR__ . '/lib.php'; require __DIR__ . '/plain.php'; var_dump(lib_f(), new D instanceof C, new P);\n",
    );
    let ext = ext();
    let cache_dir = format!("zopt.cache_dir={}", cache.display());
    let cache_stats = format!("zopt.cache_stats={}", stats.display());
    let settings = [ext.as_str(), cache_dir.as_str(), cache_stats.as_str()];
    let primed = run(&settings, &dir.path().join("prime.php"), "");
    assert_eq!(
        String::from_utf8_lossy(&primed.stdout),
        "bool(true)\nbool(true)\n",
        "{primed:?}"
    );
    let used = run(&settings, &dir.path().join("use.php"), "");
    let plain = common::php()
        .arg("-n")
        .arg(dir.path().join("use.php"))
        .output()
        .unwrap();
    assert_eq!(used.stdout, plain.stdout, "{used:?}");
    assert!(used.status.success() && used.stderr.is_empty(), "{used:?}");
    // The second process compiled only use.php itself: lib.php and plain.php were served.
    let text = std::fs::read_to_string(&stats).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["compiles"], 1, "{last}");
    assert_eq!(last["served"], 2, "{last}");
}

#[test]
fn reset_retires_every_script_of_the_segment() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "class_only.php", "<?php\nclass Q {}\n");
    write(
        dir.path(),
        "reset.php",
        r#"<?php
$f = __DIR__ . '/class_only.php';
var_dump(zopt_compile_file($f), zopt_is_script_cached($f));
var_dump(zopt_reset(), zopt_is_script_cached($f));
require $f;
var_dump(class_exists('Q', false), zopt_is_script_cached($f));
$s = zopt_get_status(false)['shm'];
var_dump($s['invalidations'] >= 2, $s['scripts']);
"#,
    );
    let ext = ext();
    let out = run(
        &[&ext, "zopt.memory_consumption=32"],
        &dir.path().join("reset.php"),
        "",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "bool(true)\nbool(true)\nbool(true)\nbool(false)\nbool(true)\nbool(true)\nbool(true)\nint(1)\n",
        "{out:?}"
    );
    assert!(out.stderr.is_empty(), "{out:?}");
    // Without a segment there is nothing in memory to reset.
    write(
        dir.path(),
        "no_segment.php",
        "<?php var_dump(zopt_reset());\n",
    );
    let cache_dir = format!("zopt.cache_dir={}", dir.path().join("cache").display());
    let out = run(&[&ext, &cache_dir], &dir.path().join("no_segment.php"), "");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "bool(false)\n");
}

#[test]
fn configuration_reports_the_settings_in_force() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "conf.php",
        "<?php echo json_encode(zopt_get_configuration());\n",
    );
    let ext = ext();
    let out = run(
        &[
            &ext,
            "zopt.memory_consumption=16",
            "zopt.validate_timestamps=0",
            "zopt.revalidate_freq=7",
            "zopt.optimization_level=0x60",
        ],
        &dir.path().join("conf.php"),
        "",
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let d = &v["directives"];
    assert_eq!(d["zopt.memory_consumption"], 16 << 20, "{v}");
    assert_eq!(d["zopt.validate_timestamps"], false);
    assert_eq!(d["zopt.revalidate_freq"], 7);
    assert_eq!(d["zopt.optimization_level"], 0x60);
    assert_eq!(d["zopt.cache_dir"], "");
    assert_eq!(v["version"]["zopt_product_name"], "zopt");
    assert!(v["version"]["php_version"]
        .as_str()
        .is_some_and(|s| s.starts_with("8.2.")));
}

#[test]
fn arguments_of_the_wrong_type_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "types.php",
        "<?php var_dump(zopt_compile_file(42), zopt_invalidate(1 << 40), zopt_is_script_cached([1]), zopt_compile_file());\n",
    );
    let ext = ext();
    let out = run(
        &[&ext, "zopt.memory_consumption=16"],
        &dir.path().join("types.php"),
        "",
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "bool(false)\nbool(false)\nbool(false)\nbool(false)\n"
    );
}
