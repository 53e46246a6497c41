//! Recordings on disk: finding `.zop` files under a directory and decoding either form
//! (binary, recognised by its magic, or text), with errors that name the file.

use crate::model::{OpArray, OpArrayError, Script};
use crate::zop::{self, BinaryError, ParseError};
use std::path::{Path, PathBuf};

/// Why a recording could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Binary { path: PathBuf, source: BinaryError },
    #[error("{path}: not a binary .zop and not UTF-8 text ({source})")]
    NotText {
        path: PathBuf,
        source: std::str::Utf8Error,
    },
    #[error("{path}:{source}")]
    Text { path: PathBuf, source: ParseError },
    /// Well formed, but an op_array holds a number pointing outside it.
    #[error("{path}: {function}: {source}")]
    Bounds {
        path: PathBuf,
        function: String,
        source: OpArrayError,
    },
}

/// Decodes a recording in either form, and checks that the numbers of its op_arrays
/// point inside them ([`OpArray::check_bounds`]); `path` only names it in errors.
pub fn decode(path: &Path, bytes: &[u8]) -> Result<Script, ReadError> {
    let script = decode_unchecked(path, bytes)?;
    check_bounds(&script).map_err(|(function, source)| ReadError::Bounds {
        path: path.to_path_buf(),
        function,
        source,
    })?;
    Ok(script)
}

/// [`OpArray::check_bounds`] for every op_array of `script`: main, functions and every
/// method of every class, each with its closures; the first failure, with the op_array's
/// name.
pub fn check_bounds(script: &Script) -> Result<(), (String, OpArrayError)> {
    fn with_dynamic(op_array: &OpArray) -> Result<(), (String, OpArrayError)> {
        op_array
            .check_bounds()
            .map_err(|e| (op_array.display_name(), e))?;
        op_array
            .dynamic_func_defs
            .iter()
            .try_for_each(|d| with_dynamic(d))
    }
    with_dynamic(&script.main_op_array)?;
    for (_, func) in &script.function_table {
        with_dynamic(func)?;
    }
    for (_, ce) in &script.class_table {
        for (_, method) in &ce.methods {
            with_dynamic(method)?;
        }
    }
    Ok(())
}

fn decode_unchecked(path: &Path, bytes: &[u8]) -> Result<Script, ReadError> {
    let path = || path.to_path_buf();
    match zop::from_binary(bytes) {
        Ok(script) => return Ok(script),
        Err(BinaryError::BadMagic) => {}
        Err(source) => {
            return Err(ReadError::Binary {
                path: path(),
                source,
            })
        }
    }
    let text = std::str::from_utf8(bytes).map_err(|source| ReadError::NotText {
        path: path(),
        source,
    })?;
    zop::parse(text).map_err(|source| ReadError::Text {
        path: path(),
        source,
    })
}

/// Reads and decodes one recording.
pub fn read(path: &Path) -> Result<Script, ReadError> {
    let bytes = std::fs::read(path).map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    decode(path, &bytes)
}

/// Every `*.zop` file under `dir`, recursively, in sorted order; unreadable directories
/// are passed over.
pub fn zop_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        // Reverse so that popping visits subdirectories in sorted order.
        for path in paths.into_iter().rev() {
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "zop") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The directory of recordings the benches read: `$ZOPT_BENCH_CORPUS`, else `default`
/// (the workspace's `bench-data/recordings`, which tools/record-corpus.sh fills).
pub fn bench_corpus_dir(default: &Path) -> PathBuf {
    std::env::var_os("ZOPT_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| default.to_path_buf())
}
