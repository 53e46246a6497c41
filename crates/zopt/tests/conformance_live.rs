//! Conformance against the real PHP 8.2 binary, recorded afresh by the zopt extension: the
//! "before" and "after" dumps at optimization level 0 must be identical on every fixture.
//! PHP and the extension are required (CI installs PHP; the extension is built here if
//! missing) — this test fails rather than skips without them.

use std::path::{Path, PathBuf};
use zopt::conformance::{self, Level};
use zopt::corpus::php_files;
use zopt::php::Php;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The debug build of the extension, built on demand.
fn extension() -> PathBuf {
    let root = workspace_root();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let so = target.join("debug/libzopt_php.so");
    if !so.is_file() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "-p", "zopt-php"])
            .current_dir(&root)
            .status()
            .expect("cannot run cargo to build the extension");
        assert!(status.success(), "building the zopt extension failed");
    }
    so
}

#[test]
fn before_and_after_at_level_0_are_identical_on_fixtures() {
    let php = Php::locate(None, Some(&extension())).unwrap();
    let files = php_files(&[workspace_root().join("fixtures/php")]).unwrap();
    let levels = [
        Level::parse("before").unwrap(),
        Level::parse("after").unwrap(),
    ];
    let report = conformance::run(&php, &files, 0, &levels, false);
    report.print_table();
    assert!(
        report.uncompilable.is_empty(),
        "fixtures PHP cannot compile: {:?}",
        report.uncompilable
    );
    assert!(
        report.errors.is_empty(),
        "recording errors: {:?}",
        report.errors
    );
    for level in &report.levels {
        assert!(level.implemented, "level {} not implemented", level.level);
        assert!(
            level.compared >= files.len(),
            "level {}: only {} op_arrays compared",
            level.level,
            level.compared
        );
        assert_eq!(
            level.identical, level.compared,
            "level {} mismatches: {:#?}",
            level.level, level.mismatches
        );
    }
}
