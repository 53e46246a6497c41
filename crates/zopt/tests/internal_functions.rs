//! Internal functions checked against the PHP binary the tests run with: for every function
//! `get_defined_functions()['internal']` lists (under `php -n`, the oracle's configuration),
//! a call `return f($a0, ..., $aN)` with the function's required parameters is compiled by
//! PHP at optimization level 0x60 with the `types` dump, and zopt's `types` dump of the same
//! op_array must be byte-identical: the call's result type is PHP's func_info table entry
//! (zend_func_infos.h as the binary was compiled, `#if`s included) or its arginfo return type.
//!
//! What both know is compared: a function of the binary that zopt's generated table
//! (crates/zend-inference/src/func_infos_table.rs) lacks, e.g. one from an extension CI does
//! not install, is listed and not compared — zopt gives its calls the unknown type
//! (`any`, RC1|RCN), which is safe but not PHP's answer. A function the table has and the
//! binary lacks cannot matter: PHP compiles a call to it as INIT_FCALL_BY_NAME, which
//! neither PHP's call analysis nor zopt's resolves to an internal function.
//!
//! The optimizer's own tables (what `function_exists()`, `extension_loaded()`, persistent
//! constants and INI_SYSTEM entries fold to) are checked against the same binary by
//! `optimizer_tables_hold_for_this_binary`: there an entry the binary lacks does matter.

mod common;

use common::extension;

use std::process::Command;
use zopt::conformance::{self, Level};
use zopt::corpus::php_files;
use zopt::php::Php;

/// Functions per generated file: a few hundred keeps PHP's dump small and the number of PHP
/// runs low.
const BATCH: usize = 150;

#[test]
fn every_internal_function_call_has_phps_result_type_at_0x60() {
    let php = Php::locate(None, Some(extension())).unwrap();
    // name, required parameter count; `-n` as the conformance oracle runs PHP.
    let out = Command::new(&php.binary)
        .args([
            "-n",
            "-r",
            r#"foreach (get_defined_functions()['internal'] as $f) {
                   echo $f, ' ', (new ReflectionFunction($f))->getNumberOfRequiredParameters(), "\n";
               }"#,
        ])
        .output()
        .expect("running php");
    assert!(
        out.status.success(),
        "php -n failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Vec<(String, usize)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (name, n) = l.split_once(' ').unwrap();
            (name.to_ascii_lowercase(), n.parse().unwrap())
        })
        .collect();
    assert!(
        listed.len() > 500,
        "php -n lists only {} internal functions",
        listed.len()
    );
    let (known, unknown): (Vec<_>, Vec<_>) = listed
        .into_iter()
        .partition(|(name, _)| zend_inference::func_infos::lookup(name.as_bytes()).is_some());
    if !unknown.is_empty() {
        eprintln!(
            "{} internal functions of this binary are not in zopt's table (not compared): {}",
            unknown.len(),
            unknown
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }

    let dir = tempfile::tempdir().unwrap();
    for (b, chunk) in known.chunks(BATCH).enumerate() {
        let mut src = String::from("<?php\n");
        for (i, (name, required)) in chunk.iter().enumerate() {
            let params: Vec<String> = (0..*required).map(|k| format!("$a{k}")).collect();
            let params = params.join(", ");
            // `\name`: the global function, never a namespaced fallback.
            src.push_str(&format!(
                "function t{}_{i}({params}) {{ return \\{name}({params}); }}\n",
                b
            ));
        }
        let path = dir.path().join(format!("internal_{b:02}.php"));
        std::fs::write(&path, src).unwrap();
    }

    let files = php_files(&[dir.path().to_path_buf()]).unwrap();
    let levels = [Level::parse("types").unwrap()];
    let report = conformance::run(&php, &files, 0x60, &levels, false);
    report.print_table();
    assert!(
        report.uncompilable.is_empty(),
        "generated calls PHP cannot compile: {:?}",
        report.uncompilable
    );
    assert!(
        report.errors.is_empty(),
        "recording errors: {:?}",
        report.errors
    );
    let level = &report.levels[0];
    assert!(level.implemented, "the types stage is not implemented");
    assert!(
        level.compared >= known.len(),
        "only {} of {} calls compared",
        level.compared,
        known.len()
    );
    let mismatches: Vec<String> = level
        .mismatches
        .iter()
        .map(|m| {
            format!(
                "{} line {}:\n  php:  {}\n  zopt: {}",
                m.function, m.line, m.php, m.ours
            )
        })
        .collect();
    assert!(
        mismatches.is_empty(),
        "{} calls whose types differ from PHP's:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

/// The sections of a generated internal_table.rs: static name and its entry lines.
fn table_sections(text: &str) -> Vec<(String, Vec<String>)> {
    let mut sections = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("pub(crate) static ") {
            let name = rest.split(':').next().unwrap_or("").to_string();
            current = Some((name, Vec::new()));
        } else if line == "];" {
            sections.extend(current.take());
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line.to_string());
        }
    }
    sections
}

/// What zopt's optimizer folds from its generated tables (crates/zend-optimizer/src/
/// internal_table.rs: `function_exists()`/`is_callable()` of an internal function, the send
/// mode of its parameters, `extension_loaded()`, persistent constants such as PHP_VERSION,
/// class constants, static methods, `ini_get()` of INI_SYSTEM entries) must hold for the PHP
/// binary the tests run with, as `zopt conformance` runs it (`php -n` with OPcache): every
/// entry of the committed table must be in tools/gen-optimizer-tables.php's output for this
/// binary, with the same value. A binary with more (another extension) is fine: zopt only
/// folds less than PHP there. A binary with less or other values (another 8.2 release, an
/// extension built as a module that is not loaded) would make zopt fold wrongly: the table
/// must then be regenerated there.
#[test]
fn optimizer_tables_hold_for_this_binary() {
    let (php, out) = run_generator("gen-optimizer-tables.php");
    let fresh = table_sections(&out);
    let committed = table_sections(include_str!("../../zend-optimizer/src/internal_table.rs"));
    assert!(committed.len() >= 6, "sections: {committed:?}");
    let mut missing = Vec::new();
    for (name, lines) in &committed {
        let Some((_, now)) = fresh.iter().find(|(n, _)| n == name) else {
            missing.push(format!("{name}: the generator prints no such table"));
            continue;
        };
        let now: std::collections::HashSet<&str> = now.iter().map(String::as_str).collect();
        for line in lines {
            if !now.contains(line.as_str()) {
                missing.push(format!("{name}: {}", line.trim()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} entries of zopt's optimizer tables do not hold for {} (regenerate \
         crates/zend-optimizer/src/internal_table.rs with tools/gen-optimizer-tables.php):\n{}",
        missing.len(),
        php.binary.display(),
        missing.join("\n")
    );
}

/// Runs the table generator tools/`name` with the PHP binary of the tests, as `zopt
/// conformance` runs PHP (`php -n` with OPcache): the binary and what the tool printed.
fn run_generator(name: &str) -> (Php, String) {
    let php = Php::locate(None, None).unwrap();
    let out = Command::new(&php.binary)
        .args(["-n", "-d", "zend_extension=opcache"])
        .arg(common::workspace_root().join("tools").join(name))
        .output()
        .unwrap_or_else(|e| panic!("running tools/{name}: {e}"));
    assert!(
        out.status.success(),
        "{name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (php, String::from_utf8(out.stdout).unwrap())
}

/// The entries of `static NAME: ... = &[ ... ];` in generated Rust, whitespace removed (so
/// that rustfmt's layout of the committed file does not matter).
fn static_entries(text: &str, name: &str) -> Vec<String> {
    let start = text
        .find(&format!("static {name}:"))
        .unwrap_or_else(|| panic!("no table {name}"));
    let body = &text[start..];
    let body = &body[body.find("&[").unwrap() + 2..body.find("];").unwrap()];
    let flat: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    flat.trim_start_matches('(')
        .trim_end_matches(',')
        .trim_end_matches(')')
        .split("),(")
        // rustfmt ends a tuple it splits over lines with a comma.
        .map(|e| e.trim_end_matches(',').to_string())
        .collect()
}

/// The internal classes the optimizer resolves names against and the declared types of
/// their public properties, which type inference reads (crates/zend-ir/src/
/// internal_classes.rs), must hold for the PHP binary the tests run with: every committed
/// entry is in tools/gen-internal-classes.php's output for it. A property typed otherwise
/// there would make zopt infer a wrong type.
#[test]
fn internal_class_tables_hold_for_this_binary() {
    let (php, fresh) = run_generator("gen-internal-classes.php");
    let committed = include_str!("../../zend-ir/src/internal_classes.rs");
    for table in ["INTERNAL_CLASSES", "INTERNAL_PROPERTIES"] {
        let now: std::collections::HashSet<String> =
            static_entries(&fresh, table).into_iter().collect();
        let entries = static_entries(committed, table);
        assert!(entries.len() > 10, "{table}: {entries:?}");
        let missing: Vec<&String> = entries.iter().filter(|e| !now.contains(*e)).collect();
        assert!(
            missing.is_empty(),
            "{table}: {} entries do not hold for {} (regenerate crates/zend-ir/src/\
             internal_classes.rs with tools/gen-internal-classes.php): {missing:?}",
            missing.len(),
            php.binary.display()
        );
    }
}
