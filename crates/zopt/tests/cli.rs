//! The command line as a new user meets it: `conformance` never reports success on nothing
//! (a syntax error, an empty directory, a PHP binary that is not PHP, a recording given as
//! source), `record` refuses an empty directory, error messages say each cause once, a
//! closed pipe ends zopt quietly, a recording pointing outside its op_array is refused, and
//! the analysis dumps say what they leave out.

mod common;

use common::{extension, workspace_root};

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn zopt(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zopt"))
        .args(args)
        .current_dir(dir)
        .env("ZOPT_PHP_EXTENSION", extension())
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.php"), "<?php\nfunction (\n").unwrap();
    std::fs::write(
        dir.path().join("ok.php"),
        "<?php\nfunction f(int $a) { return $a + 1; }\n\
         function g($x) { try { return f($x); } catch (Exception $e) { return 0; } }\n\
         echo f(2), g(3);\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    dir
}

#[test]
fn conformance_on_a_syntax_error_fails_and_says_why() {
    let dir = setup();
    let out = zopt(dir.path(), &["conformance", "bad.php"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("nothing was compared"), "{err}");
    assert!(err.contains("Parse error"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("100.00%"));
}

#[test]
fn conformance_on_an_empty_directory_fails_and_says_why() {
    let dir = setup();
    let out = zopt(dir.path(), &["conformance", "empty"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no .php files in empty"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn conformance_with_a_php_that_is_not_php_fails_and_says_why() {
    let dir = setup();
    let out = zopt(
        dir.path(),
        &["conformance", "--php", "/bin/false", "ok.php"],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("nothing was compared"), "{err}");
    assert!(err.contains("/bin/false"), "{err}");
}

#[test]
fn conformance_refuses_a_recording_as_source() {
    let dir = setup();
    let zop = workspace_root().join("fixtures/expected/ctl_ternary/recording.zop");
    let out = zopt(dir.path(), &["conformance", zop.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("not a .php file"), "{}", stderr(&out));
}

#[test]
fn record_of_an_empty_directory_fails() {
    let dir = setup();
    let out = zopt(dir.path(), &["record", "-o", "out", "empty"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no .php files in empty"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn error_messages_say_each_cause_once() {
    let dir = setup();
    let out = zopt(dir.path(), &["dump", "empty"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert_eq!(err.matches("Is a directory").count(), 1, "{err}");
    let out = zopt(dir.path(), &["dump", "ok.php.zop"]);
    let err = stderr(&out);
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
}

#[test]
fn a_recording_pointing_outside_its_op_array_is_refused() {
    let dir = setup();
    // Well-formed text whose ECHO reads TMP 3 of an op_array with one temporary.
    std::fs::write(
        dir.path().join("bad.zop"),
        "zop 1\nscript \"bad.php\"\n\nmain {\n  T 1\n0000 ECHO T3\n0001 RETURN _\n}\n",
    )
    .unwrap();
    for args in [
        &["opt", "bad.zop"][..],
        &["dump", "--level", "0", "bad.zop"],
    ] {
        let out = zopt(dir.path(), args);
        assert!(!out.status.success(), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains("bad.zop: $_main: op 0: op1 TMP/VAR 3 outside 0..1"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("must end in .php"), "{err}");
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let zop = workspace_root().join("fixtures/expected/app_bank_account/recording.zop");
    let mut child = Command::new(env!("CARGO_BIN_EXE_zopt"))
        .arg("cfg")
        .arg(zop)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before zopt writes (as `| head` does once it has its lines).
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn cfg_takes_php_files() {
    let dir = setup();
    let out = zopt(dir.path(), &["cfg", "--function", "f", "ok.php"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("BB0:"));
}

#[test]
fn types_dump_says_what_it_leaves_out() {
    let dir = setup();
    // PHP's DFA pass does not run at level 0: say which level has the analysis.
    let out = zopt(dir.path(), &["dump", "--level", "types", "ok.php"]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("0x60"), "{}", stderr(&out));
    // At 0x60, g (try/catch) is named with PHP's reason for skipping it.
    let out = zopt(
        dir.path(),
        &[
            "dump",
            "--level",
            "types",
            "--optimization-level",
            "0x60",
            "ok.php",
        ],
    );
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("SSA Variable for \"f\""), "{stdout}");
    assert!(!stdout.contains("SSA Variable for \"g\""), "{stdout}");
    let err = stderr(&out);
    assert!(
        err.contains("g is not analysed") && err.contains("try/catch"),
        "{err}"
    );
}

#[test]
fn a_redeclaration_is_reported_with_phps_message_only() {
    let dir = setup();
    std::fs::write(
        dir.path().join("redeclare.php"),
        "<?php\nfunction twice() {}\nfunction twice() {}\n",
    )
    .unwrap();
    let out = zopt(dir.path(), &["record", "-o", "out", "redeclare.php"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("Cannot redeclare twice()"), "{err}");
    assert!(!err.contains("Command line code"), "{err}");
}

/// `zopt opt` prints what PHP's own "after optimizer" dump prints at the default level
/// (the call-graph path dumps every op_array with its live ranges once all are optimized),
/// and says where the classic level's dump differs: there PHP dumps each op_array before
/// pass 12 sets its calls' stack sizes, which `zopt dump --level after` reproduces.
#[test]
fn opt_prints_phps_after_optimizer_dump() {
    let php = zopt::php::Php::locate(None, Some(extension())).unwrap();
    let fixtures = workspace_root().join("fixtures/php");
    // What zopt prints for `command` at `level`, with PHP 8.2's own deviations (app_matrix
    // merges two echos, fixtures/README.md), against PHP's after-optimizer dump.
    let compare = |file: &Path, command: &[&str], level: u32| {
        let theirs = php.compile(file, level, 0x20000, None).unwrap();
        let level = format!("{level:#X}");
        let mut args = command.to_vec();
        args.extend(["--php-bugs", "all", "--optimization-level", &level]);
        args.push(file.to_str().unwrap());
        let ours = zopt(&fixtures, &args);
        assert!(ours.status.success(), "{}", stderr(&ours));
        let theirs = String::from_utf8_lossy(&theirs.dump).into_owned();
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            theirs,
            "zopt {} on {}",
            args.join(" "),
            file.display()
        );
        theirs
    };
    for name in [
        "app_lru_cache.php",
        "app_matrix.php",
        "exec_big_switch_match.php",
    ] {
        let file = fixtures.join(name);
        let dump = compare(&file, &["opt"], 0x7FFE_BFFF);
        assert!(dump.contains("LIVE RANGES:"), "{name}");
        compare(&file, &["dump", "--level", "after"], 0x7FFE_9F1F);
    }
}
