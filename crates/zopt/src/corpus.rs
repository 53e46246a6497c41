//! Finding the PHP files of a corpus.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// A PHP file and the name it is reported and stored under: its path relative to the
/// directory given on the command line (or its file name, for a file given directly).
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub relative: PathBuf,
}

/// Every `.php` file under each path, in a stable (sorted) order.
pub fn php_files(paths: &[PathBuf]) -> Result<Vec<SourceFile>> {
    let mut files = Vec::new();
    for root in paths {
        if root.is_file() {
            if root.extension() != Some(std::ffi::OsStr::new("php")) {
                bail!(
                    "{}: not a .php file (give PHP source here; `zopt dump` and `zopt opt` read \
                     .zop recordings)",
                    root.display()
                );
            }
            let name = root
                .file_name()
                .map(PathBuf::from)
                .unwrap_or_else(|| root.clone());
            files.push(SourceFile {
                path: root.clone(),
                relative: name,
            });
            continue;
        }
        if !root.is_dir() {
            bail!("{}: no such file or directory", root.display());
        }
        let mut found: Vec<SourceFile> = walkdir::WalkDir::new(root)
            .follow_links(true)
            .into_iter()
            .filter_map(|entry| entry.ok())
            .filter(|entry| {
                entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "php")
            })
            .map(|entry| SourceFile {
                relative: entry
                    .path()
                    .strip_prefix(root)
                    .unwrap_or(entry.path())
                    .to_path_buf(),
                path: entry.into_path(),
            })
            .collect();
        found.sort_by(|a, b| a.path.cmp(&b.path));
        files.extend(found);
    }
    Ok(files)
}

/// Reads a recording in either form (binary or text), naming the file in errors.
pub fn load_recording(path: &Path) -> Result<zend_ir::Script> {
    Ok(zend_ir::corpus::read(path)?)
}
