//! `zopt opt`: a PHP file or a recording, optimized by zopt's optimizer, printed in PHP's dump
//! format ("after optimizer") or written as a recording, with `--explain` printing what each
//! pass changed and why.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use zend_ir::dump::{self, debug_level};
use zend_ir::Script;
use zend_optimizer::{
    after_optimizer_dump_flags, optimize_script, Change, Options, Outcome, PhpBugs,
};

use crate::php::Php;

/// A script from a `.php` file (compiled by PHP at optimization level 0 and recorded) or a
/// `.zop` recording (text or binary); `php` compiles and records a PHP file.
pub fn load_script(php: &Php, file: &Path) -> Result<Script> {
    let is_php = file.extension().is_some_and(|e| e == "php");
    if !is_php {
        let recording = crate::corpus::load_recording(file);
        // Only a file not named as a recording may have been meant as PHP source.
        if file.extension().is_some_and(|e| e == "zop") {
            return recording;
        }
        return recording.with_context(|| {
            format!(
                "{} is read as a recording (.zop); PHP source files must end in .php",
                file.display()
            )
        });
    }
    let tmp = tempfile::tempdir()?;
    let compiled = php.compile(file, 0, 0, Some(tmp.path()))?;
    let recording = compiled
        .recording
        .with_context(|| format!("PHP wrote no recording of {}", file.display()))?;
    crate::corpus::load_recording(&recording)
}

/// Optimizes `script` at `optimization_level`, keeping the change log when `explain`,
/// reproducing `php_bugs`.
pub fn optimize(
    script: &mut Script,
    optimization_level: u32,
    explain: bool,
    php_bugs: PhpBugs,
) -> Outcome {
    // Recordings come from `php -n` with OPcache: the optimizer's tables.
    zend_optimizer::environment::set_modules_are_tables(true);
    let mut options = Options::new(optimization_level);
    options.explain = explain;
    options.php_bugs = php_bugs;
    optimize_script(script, &options)
}

/// Prints every op_array as PHP's "after optimizer" dump at `optimization_level` does (with
/// live ranges where PHP prints them); with `changes`, each op_array's changes follow its
/// listing, one line each: pass, op (numbered as when the pass made the change), what
/// happened and why.
pub fn print(
    out: &mut dyn Write,
    script: &Script,
    optimization_level: u32,
    changes: Option<&[Change]>,
) -> Result<()> {
    let flags = after_optimizer_dump_flags(optimization_level);
    let mut text = Vec::new();
    for op_array in script.op_arrays() {
        if op_array.type_ == zend_ir::ZEND_EVAL_CODE {
            continue;
        }
        dump::dump_op_array(&mut text, op_array, flags, Some("after optimizer"));
        if let Some(changes) = changes {
            let name = op_array.display_name();
            for c in changes.iter().filter(|c| c.op_array == name) {
                writeln!(
                    text,
                    "     ; {} {:04} {}: {}",
                    c.pass,
                    c.op.as_u32(),
                    c.kind.as_str(),
                    c.why
                )?;
            }
        }
    }
    out.write_all(&text)?;
    Ok(())
}

/// Whether zopt produces PHP's "after optimizer" dump at this level (every pass it runs is
/// implemented).
pub fn complete(optimization_level: u32) -> bool {
    zend_optimizer::implemented(optimization_level, debug_level::AFTER_OPTIMIZER)
}
