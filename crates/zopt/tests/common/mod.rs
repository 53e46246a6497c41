//! Helpers shared by zopt's integration tests: the workspace root, the zopt extension, and
//! what a conformance report must show.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The extension of this build's profile (or $ZOPT_PHP_EXTENSION), brought up to date
/// first: `cargo test` builds no cdylib for integration tests, and testing a stale extension
/// would be worse than a missing one.
pub fn extension() -> &'static Path {
    static EXT: OnceLock<PathBuf> = OnceLock::new();
    EXT.get_or_init(|| {
        if let Some(path) = std::env::var_os("ZOPT_PHP_EXTENSION") {
            return PathBuf::from(path);
        }
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("test binary in <target>/<profile>/deps");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "zopt-php", "--profile", profile])
            .current_dir(workspace_root())
            .status()
            .expect("running cargo build -p zopt-php");
        assert!(status.success(), "building the zopt extension failed");
        let so = profile_dir.join("libzopt_php.so");
        assert!(so.is_file(), "no extension at {}", so.display());
        so
    })
}

/// A conformance report that measured something at every stage and found every compared
/// op_array identical to PHP's, or different only for a listed PHP 8.2 bug.
pub fn assert_all_right(report: &zopt::conformance::Report) {
    assert!(report.uncompilable.is_empty(), "{:?}", report.uncompilable);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    for level in &report.levels {
        assert!(level.implemented, "stage {} not implemented", level.level);
        assert!(
            level.compared > 0,
            "stage {}: nothing compared",
            level.level
        );
        assert!(
            level.all_right(),
            "stage {} mismatches: {:#?}",
            level.level,
            level.mismatches
        );
    }
}

/// Conformance of every fixture at `optimization_level` for the stages `levels`, with PHP as
/// `php` runs it: printed, checked with [`assert_all_right`], and returned.
pub fn fixtures_conform(
    php: &zopt::php::Php,
    optimization_level: u32,
    levels: &[&str],
) -> zopt::conformance::Report {
    let files = zopt::corpus::php_files(&[workspace_root().join("fixtures/php")]).unwrap();
    let levels: Vec<zopt::conformance::Level> = levels
        .iter()
        .map(|l| zopt::conformance::Level::parse(l).unwrap())
        .collect();
    let report = zopt::conformance::run(php, &files, optimization_level, &levels, false);
    report.print_table();
    assert_all_right(&report);
    report
}
