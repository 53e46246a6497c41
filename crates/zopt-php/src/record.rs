//! Record mode: the optimizer pass that writes every script OPcache compiles as a `.zop`.
//!
//! The recording of `/a/b/c.php` goes to `<zopt.record_dir>/a/b/c.php.zop` (`.zopb` for the
//! binary format, both with `zopt.record_format=both`), written atomically (temporary file in the same directory, then rename).
//! When the script cannot be converted, `<...>/c.php.zop.err` says why and PHP gets an
//! `E_WARNING`; the script itself is never modified, so PHP goes on as if zopt were absent.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Component, Path, PathBuf};

use crate::convert;
use crate::ini::{self, Format};
use crate::php::{self, zend_script};

/// Record mode's part of the optimizer pass: OPcache calls it once per compiled script,
/// after its own passes, with the script in "pass two" form.
///
/// # Safety
/// `script` is the live script OPcache handed to the optimizer pass.
pub unsafe fn run(script: *mut zend_script) {
    // Nothing may unwind into PHP; a panic is reported like a conversion error.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let Some(dir) = ini::record_dir() else {
            return;
        };
        // SAFETY: OPcache hands the pass a live script that nobody else touches until the
        // pass returns, and this reader does not outlive the call.
        let reader = unsafe { php::Reader::new() };
        if let Some(script) = reader.deref(script.cast_const()) {
            record(reader, script, &dir);
        }
    }));
}

/// Writes the recording of `script` under `dir` (or the `.zop.err` and a warning).
pub fn record(reader: php::Reader<'_>, script: &zend_script, dir: &Path) {
    let filename = reader.str(script.filename).unwrap_or_default().to_vec();
    let stem = out_stem(dir, &filename);
    let (text, binary) = match ini::format() {
        Format::Text => (true, false),
        Format::Binary => (false, true),
        Format::Both => (true, true),
    };
    let text_path = with_suffix(&stem, ".zop");
    let binary_path = with_suffix(&stem, ".zopb");
    let err_path = with_suffix(&stem, ".zop.err");

    let converted = catch_unwind(AssertUnwindSafe(|| {
        convert::script(reader, script).map(|s| {
            let mut outputs = Vec::new();
            if text {
                outputs.push((&text_path, zend_ir::zop::print(&s).into_bytes()));
            }
            if binary {
                outputs.push((&binary_path, zend_ir::zop::to_binary(&s)));
            }
            outputs
        })
    }));
    let problem = match converted {
        Ok(Ok(outputs)) => {
            let written = outputs.iter().try_for_each(|(path, bytes)| {
                write_atomically(path, bytes)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))
            });
            match written {
                Ok(()) => {
                    let _ = fs::remove_file(&err_path);
                    return;
                }
                Err(e) => e,
            }
        }
        Ok(Err(e)) => e.to_string(),
        Err(panic) => format!("internal error: {}", panic_message(&panic)),
    };
    let shown = String::from_utf8_lossy(&filename);
    let message = format!("zopt: cannot record {shown}: {problem}");
    // A stale recording must not pass for this compilation's.
    let _ = fs::remove_file(&text_path);
    let _ = fs::remove_file(&binary_path);
    let note = match write_atomically(&err_path, format!("{message}\n").as_bytes()) {
        Ok(()) => format!(" (see {})", err_path.display()),
        Err(e) => format!(" (and cannot write {}: {e})", err_path.display()),
    };
    crate::warning(&format!("{message}{note}"));
}

pub fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// `is_stream_path`: a name with a stream wrapper's scheme (letters, digits, `+`, `-`, `.`
/// before `://`, as in `phar://` or `compress.zlib://`).
pub(crate) fn is_stream_path(name: &[u8]) -> bool {
    let scheme = name
        .iter()
        .take_while(|&&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
        .count();
    scheme > 0 && name[scheme..].starts_with(b"://")
}

/// `<dir>/<absolute script path>`, without the recording's extension. Relative paths are
/// taken from the current directory; stream wrapper paths (`phar://...`) keep their scheme
/// as the first directory; `..` components cannot leave `dir`.
fn out_stem(dir: &Path, script: &[u8]) -> PathBuf {
    let path = Path::new(OsStr::from_bytes(script));
    let path = if path.is_absolute() || is_stream_path(script) {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = dir.to_path_buf();
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => out.push("%2E%2E"),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Writes `bytes` to a temporary file next to `path` and renames it over `path`, creating
/// the directories on the way.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let tmp = with_suffix(path, &format!(".tmp{}", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.flush()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
