//! Round-trip and optimize modes: the optimizer pass that captures every script OPcache
//! compiles, runs it through zopt (nothing in `roundtrip`, the [`pipeline`] in `optimize`)
//! and writes the result back into PHP's op_arrays ([`writeback`]), which OPcache then
//! caches and PHP executes.
//!
//! When anything fails (the capture, a check of the output, a panic), the script is left as
//! PHP compiled it and PHP gets an `E_WARNING` naming the file and the reason. With
//! `zopt.verify=1` the script is captured again after the write-back and must be exactly
//! what was written (literal `u2` values included); a difference is reported as a warning.
//! With `zopt.record_dir` set, that capture is recorded like record mode does: the
//! recording of what PHP will run.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::ini::{self, Mode};
use crate::php::{self, zend_script};
use crate::{convert, pipeline, record, writeback};

/// Runs roundtrip / optimize mode on `script` (see the module documentation).
///
/// # Safety
/// `script` is the live script OPcache handed to the optimizer pass.
pub unsafe fn run(script: *mut zend_script, mode: Mode) {
    let outcome = catch_unwind(AssertUnwindSafe(|| transform(script, mode)));
    let problem = match outcome {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e,
        Err(panic) => format!("internal error: {}", record::panic_message(&panic)),
    };
    let filename = {
        let r = php::Reader::new();
        r.deref(script.cast_const())
            .and_then(|s| r.str(s.filename))
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .unwrap_or_default()
    };
    let what = if mode == Mode::Optimize {
        "optimize"
    } else {
        "round-trip"
    };
    crate::warning(&format!("zopt: cannot {what} {filename}: {problem}"));
}

unsafe fn transform(live: *mut zend_script, mode: Mode) -> Result<(), String> {
    rewrite(live, mode, true, opcache_file_cache())?;
    if let Some(dir) = ini::record_dir() {
        let r = php::Reader::new();
        let s = r.deref(live.cast_const()).ok_or("NULL script")?;
        record::record(r, s, &dir);
    }
    Ok(())
}

/// Whether OPcache also stores the scripts it compiles in files (`opcache.file_cache`), from
/// which another process (another SAPI) may load them.
fn opcache_file_cache() -> bool {
    let name = b"opcache.file_cache";
    // SAFETY: the name is `name.len()` readable bytes; an unknown entry gives NULL.
    let value = unsafe {
        php::zend_ini_string_ex(name.as_ptr().cast(), name.len(), 0, std::ptr::null_mut())
    };
    // SAFETY: a non-NULL value is the entry's NUL-terminated string.
    !value.is_null() && unsafe { *value } != 0
}

/// Captures `live`, runs it through zopt — the [`pipeline`] in `Mode::Optimize`, nothing in
/// `Mode::Roundtrip` — and writes the result back into `live` (also when nothing changed,
/// with `write_unchanged`); with `zopt.verify`, what was written is captured again and must
/// be exactly the result. `with_file_cache`: the result may run in another process
/// (`zend_optimizer::Options::with_file_cache`). Returns the result.
///
/// # Safety
/// `live` is a compiled script nothing else touches meanwhile (the optimizer pass's, or
/// the cache's freshly compiled one).
pub unsafe fn rewrite(
    live: *mut zend_script,
    mode: Mode,
    write_unchanged: bool,
    with_file_cache: bool,
) -> Result<zend_ir::Script, String> {
    let captured = {
        let r = php::Reader::new();
        let s = r.deref(live.cast_const()).ok_or("NULL script")?;
        convert::script(r, s).map_err(|e| e.to_string())?
    };
    let (output, types) = match mode {
        Mode::Optimize => {
            let outcome =
                pipeline::optimize(captured.clone(), ini::optimization_level(), with_file_cache);
            (outcome.script, outcome.handler_types)
        }
        _ => (captured.clone(), writeback::HandlerTypes::default()),
    };
    if !write_unchanged && output == captured {
        return Ok(output);
    }
    writeback::script(live, &captured, &output, &types).map_err(|e| e.to_string())?;
    // The write-back made PHP's inherited method copies copies of the optimized originals
    // again (the optimizer leaves them to it): so is the result.
    let mut output = output;
    zend_optimizer::script::copy_inherited_methods(&mut output);
    if ini::verify() {
        let r = php::Reader::new();
        let s = r.deref(live.cast_const()).ok_or("NULL script")?;
        let mut again =
            convert::script(r, s).map_err(|e| format!("capture after write-back: {e}"))?;
        // The early bindings are listed as compiled, not as the optimizer left the ops.
        again.early_bindings.clone_from(&output.early_bindings);
        if let Some(diff) = first_difference(&output, &again) {
            return Err(format!("write-back is not exact: {diff}"));
        }
    }
    Ok(output)
}

/// Where two scripts first differ, for a readable message.
pub fn first_difference(a: &zend_ir::Script, b: &zend_ir::Script) -> Option<String> {
    if a == b {
        return None;
    }
    let (xs, ys) = (a.op_arrays(), b.op_arrays());
    if xs.len() != ys.len() {
        return Some(format!(
            "{} op_arrays written, {} found",
            xs.len(),
            ys.len()
        ));
    }
    for (x, y) in xs.iter().zip(&ys) {
        if x == y {
            continue;
        }
        let name = x.display_name();
        if x.opcodes.len() != y.opcodes.len() {
            return Some(format!(
                "{name}: {} ops written, {} found",
                x.opcodes.len(),
                y.opcodes.len()
            ));
        }
        if let Some(n) = (0..x.opcodes.len()).find(|&n| x.opcodes[n] != y.opcodes[n]) {
            return Some(format!(
                "{name}: op #{n} written as {:?}, found {:?}",
                x.opcodes[n], y.opcodes[n]
            ));
        }
        if let Some(n) =
            (0..x.literals.len().min(y.literals.len())).find(|&n| x.literals[n] != y.literals[n])
        {
            return Some(format!(
                "{name}: literal {n} written as {:?}, found {:?}",
                x.literals[n], y.literals[n]
            ));
        }
        return Some(format!(
            "{name}: literals, vars, T, live ranges or try/catch differ"
        ));
    }
    if a.compiler_halt_offset != b.compiler_halt_offset {
        return Some(format!(
            "__COMPILER_HALT_OFFSET__ {:?} written, {:?} found",
            a.compiler_halt_offset, b.compiler_halt_offset
        ));
    }
    if a.warnings != b.warnings {
        return Some(format!(
            "{} compile-time diagnostics written, {} found, or they differ",
            a.warnings.len(),
            b.warnings.len()
        ));
    }
    for ((ka, ca), (kb, cb)) in a.class_table.iter().zip(&b.class_table) {
        if ka != kb {
            return Some(format!("class table key {ka:?} written, {kb:?} found"));
        }
        if ca != cb {
            return Some(format!("class {ka:?} differs"));
        }
    }
    Some("function or class tables differ".into())
}
