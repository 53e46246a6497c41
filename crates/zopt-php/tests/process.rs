//! The optimizer folds only what the process running the script would give: zopt's tables
//! describe `php -n` (the CLI), and a process of another SAPI (php-cgi here), or with
//! `disable_functions` or INI_SYSTEM values set, differs from them. Each script's output
//! under zopt (optimize mode, and a file cache filled by the CLI) must be the same
//! process's output without any optimizer.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

const CGI: &str = "/usr/bin/php-cgi8.2";

/// php-cgi, installed with apt (as .ci/run does) when missing.
fn cgi() -> Command {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| common::apt_install(&["php8.2-cgi"], &[CGI]));
    let mut cmd = Command::new(CGI);
    cmd.args(["-n", "-q"]);
    cmd
}

/// Everything here is folded by OPcache's optimizer (and zopt's) from the process that
/// compiles: constants, `defined`, `function_exists`, `extension_loaded`, `ini_get` of an
/// INI_SYSTEM entry, `php_sapi_name()`, `php_uname()`.
const SCRIPT: &str = r#"<?php
function title() { return defined('PHP_CLI_PROCESS_TITLE') ? 'title' : 'no title'; }
function exec_exists() { return function_exists('exec') ? 'exec' : 'no exec'; }
function url_fopen() { return 'allow_url_fopen=' . ini_get('allow_url_fopen'); }
function opcache_loaded() { return extension_loaded('Zend OPcache') ? 'opcache' : 'no opcache'; }
function sapi() { return PHP_SAPI . ' ' . php_sapi_name(); }
function paths() { return PHP_BINARY . ' ' . PHP_CONFIG_FILE_PATH; }
function host() { return php_uname('n') === gethostname() ? 'this host' : 'another host'; }
echo implode("\n", [title(), exec_exists(), url_fopen(), opcache_loaded(), sapi(), paths(), host()]), "\n";
"#;

fn run(mut cmd: Command, ini: &[&str], script: &Path) -> String {
    let out = cmd
        .args(ini.iter().flat_map(|a| ["-d", a]))
        .arg(script)
        .output()
        .expect("running php");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{cmd:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn php() -> Command {
    let mut cmd = common::php();
    cmd.arg("-n");
    cmd
}

fn script(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("process.php");
    std::fs::write(&path, SCRIPT).unwrap();
    path
}

#[test]
fn optimize_mode_folds_what_this_process_gives() {
    let dir = tempfile::tempdir().unwrap();
    let script = script(dir.path());
    let ext = format!("extension={}", common::extension().display());
    let optimize = [
        "zend_extension=opcache",
        "opcache.enable=1",
        "opcache.enable_cli=1",
        "opcache.optimization_level=0",
        "opcache.file_update_protection=0",
        &ext,
        "zopt.mode=optimize",
        "zopt.verify=1",
    ];
    let settings: [&[&str]; 2] = [&[], &["disable_functions=exec", "allow_url_fopen=0"]];
    for settings in settings {
        for sapi in [php as fn() -> Command, cgi] {
            let plain = run(
                sapi(),
                &[&["zend_extension=opcache"], settings].concat(),
                &script,
            );
            let zopt = run(sapi(), &[&optimize, settings].concat(), &script);
            assert_eq!(zopt, plain, "{:?} {settings:?}", sapi());
        }
    }
    // The optimizer did run, and asked this process: `function_exists('exec')` is folded
    // where exec exists and stays a call where it is disabled (the script as recorded after
    // the write-back).
    for (settings, folded) in [(&[][..], true), (&["disable_functions=exec"][..], false)] {
        let record = tempfile::tempdir().unwrap();
        let record_dir = format!("zopt.record_dir={}", record.path().display());
        run(
            php(),
            &[&optimize[..], &[&record_dir], settings].concat(),
            &script,
        );
        let text = std::fs::read_to_string(common::recording(record.path(), &script, ".zop"))
            .expect("the optimized script is recorded");
        assert_eq!(
            !text.contains("\"function_exists\""),
            folded,
            "{settings:?}: {text}"
        );
    }
}

#[test]
fn a_file_cache_filled_by_the_cli_serves_another_sapi_its_own_answers() {
    let dir = tempfile::tempdir().unwrap();
    let script = script(dir.path());
    let cache = dir.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let ext = format!("extension={}", common::extension().display());
    let cache_dir = format!("zopt.cache_dir={}", cache.display());
    let cached = [ext.as_str(), cache_dir.as_str()];
    // Filled by the CLI, then used by php-cgi, then by the CLI again.
    let cli_plain = run(php(), &[], &script);
    assert_eq!(run(php(), &cached, &script), cli_plain);
    let cgi_plain = run(cgi(), &[], &script);
    assert_ne!(
        cli_plain, cgi_plain,
        "the two SAPIs should answer differently"
    );
    assert_eq!(run(cgi(), &cached, &script), cgi_plain);
    assert_eq!(run(cgi(), &cached, &script), cgi_plain);
    assert_eq!(run(php(), &cached, &script), cli_plain);
}

/// The extension's view of the differences: none in the process the tables describe
/// (`php -n` with OPcache on for the CLI, as `zopt conformance` runs PHP) but zopt's own
/// module and functions, OPcache's settings where it is off or not loaded, the SAPI's
/// constants under php-cgi, what an extension adds.
#[test]
fn the_tables_process_differs_only_by_zopt_itself() {
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("env.php");
    std::fs::write(
        &probe,
        "<?php echo implode(\"\\n\", zopt_get_configuration()['environment']), \"\\n\";",
    )
    .unwrap();
    let ext = format!("extension={}", common::extension().display());
    let cli = run(
        php(),
        &["zend_extension=opcache", "opcache.enable_cli=1", &ext],
        &probe,
    );
    assert!(
        cli.lines()
            .all(|l| l.starts_with("module zopt ") || l.starts_with("function zopt_")),
        "differences from the tables: {cli}"
    );
    assert!(
        cli.lines()
            .any(|l| l.starts_with("function zopt_get_status ")),
        "{cli}"
    );
    // ini_get() of OPcache's INI_SYSTEM settings folds to what the process holds, or not
    // at all without OPcache.
    let off = run(php(), &["zend_extension=opcache", &ext], &probe);
    assert!(
        off.lines().any(|l| l == r#"ini opcache.enable_cli = "0""#),
        "{off}"
    );
    let alone = run(php(), &[&ext], &probe);
    assert!(
        alone
            .lines()
            .any(|l| l == "ini opcache.restrict_api missing"),
        "{alone}"
    );
    let disabled = run(
        php(),
        &["zend_extension=opcache", &ext, "disable_functions=exec"],
        &probe,
    );
    assert!(
        disabled.lines().any(|l| l == "no function exec"),
        "{disabled}"
    );
    let cgi_differences = run(cgi(), &["zend_extension=opcache", &ext], &probe);
    assert!(
        cgi_differences
            .lines()
            .any(|l| l == r#"constant PHP_SAPI = string "cgi-fcgi""#),
        "{cgi_differences}"
    );
    // An extension's functions, constants and module, as PHP registered them; with dl()
    // off, every entry that is not folded is listed.
    let ctype = run(
        php(),
        &[
            "zend_extension=opcache",
            "opcache.enable_cli=1",
            "extension=ctype",
            "enable_dl=0",
            &ext,
        ],
        &probe,
    );
    for line in [
        "function ctype_digit flags=0x0 args=1 modes=0 returns=0xc",
        "ini enable_dl = \"0\"",
        "ini display_errors not INI_SYSTEM",
    ] {
        assert!(ctype.lines().any(|l| l == line), "{line}: {ctype}");
    }
    assert!(
        ctype.lines().any(|l| l.starts_with("module ctype ")),
        "{ctype}"
    );
}
