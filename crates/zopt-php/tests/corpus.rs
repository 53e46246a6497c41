//! Records a corpus of real PHP code and checks every recording: no `.zop.err`, no crash,
//! `.zop` text and `.zopb` binary decode to the same script, and every op_array matches
//! PHP's own dump of the same run.
//!
//! Ignored by default (it takes minutes):
//! `cargo test -p zopt-php --test corpus -- --ignored --nocapture`.
//! `ZOPT_CORPUS` is the directory (default /usr/share/php), `ZOPT_CORPUS_LIMIT` caps the
//! number of files, `ZOPT_CORPUS_LEVEL` is `opcache.optimization_level` (default 0; other
//! levels are checked against the "after optimizer" dump).

mod common;

use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

use common::{check_op_arrays, extension, parse_dump, php, recording, DumpBlock};
use zend_ir::{OpArray, Script};

const BATCH: usize = 40;

fn php_files(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(ty) = entry.file_type() else { continue };
        if ty.is_dir() {
            php_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "php") {
            if let Ok(real) = path.canonicalize() {
                out.insert(real);
            }
        }
    }
}

/// Every op_array of a script: main, functions, all methods (abstract ones included) and
/// their dynamic_func_defs.
fn count_op_arrays(script: &Script) -> usize {
    fn walk(op_array: &OpArray) -> usize {
        1 + op_array
            .dynamic_func_defs
            .iter()
            .map(|d| walk(d))
            .sum::<usize>()
    }
    walk(&script.main_op_array)
        + script
            .function_table
            .iter()
            .map(|(_, f)| walk(f))
            .sum::<usize>()
        + script
            .class_table
            .iter()
            .flat_map(|(_, ce)| &ce.methods)
            .map(|(_, m)| walk(m))
            .sum::<usize>()
}

#[derive(Default)]
struct Tally {
    refused_by_php: Vec<PathBuf>,
    recorded: usize,
    op_arrays: usize,
    all_op_arrays: usize,
    failures: Vec<String>,
}

struct Corpus {
    record_dir: PathBuf,
    level: String,
    debug_level: &'static str,
}

impl Corpus {
    /// Compiles `files` in one php process; `None` when PHP itself failed (a compile error
    /// stops the process), with crashes reported.
    fn compile(&self, files: &[PathBuf], tally: &mut Tally) -> Option<Vec<DumpBlock>> {
        let out = php()
            .arg("-n")
            .args(["-d", "zend_extension=opcache"])
            .args(["-d", "opcache.enable_cli=1"])
            .args(["-d", "opcache.file_update_protection=0"])
            .args(["-d", "opcache.jit=0"])
            .args(["-d", "memory_limit=1G"])
            .arg("-d")
            .arg(format!("opcache.optimization_level={}", self.level))
            .arg("-d")
            .arg(format!("opcache.opt_debug_level={}", self.debug_level))
            .arg("-d")
            .arg(format!("extension={}", extension().display()))
            .args(["-d", "zopt.mode=record", "-d", "zopt.record_format=both"])
            .arg("-d")
            .arg(format!("zopt.record_dir={}", self.record_dir.display()))
            .args([
                "-r",
                "foreach (array_slice($argv, 1) as $f) { opcache_compile_file($f); }",
                "--",
            ])
            .args(files)
            .output()
            .expect("running php");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if let Some(signal) = out.status.signal() {
            tally.failures.push(format!(
                "php crashed with signal {signal} compiling {files:?}: {stdout}"
            ));
            return None;
        }
        if stdout.contains("zopt") {
            tally
                .failures
                .push(format!("zopt warned compiling {files:?}: {stdout}"));
        }
        out.status
            .success()
            .then(|| parse_dump(&String::from_utf8_lossy(&out.stderr)))
    }

    fn check(&self, files: &[PathBuf], dump: &[DumpBlock], tally: &mut Tally) {
        let mut blocks = dump;
        for file in files {
            let err = recording(&self.record_dir, file, ".zop.err");
            if err.exists() {
                tally.failures.push(
                    std::fs::read_to_string(&err).unwrap_or_else(|e| format!("{e}: {err:?}")),
                );
                return;
            }
            let script = match self.load(file) {
                Ok(script) => script,
                Err(e) => {
                    tally.failures.push(format!("{}: {e}", file.display()));
                    return;
                }
            };
            tally.recorded += 1;
            let op_arrays = script.op_arrays();
            tally.op_arrays += op_arrays.len();
            tally.all_op_arrays += count_op_arrays(&script);
            let n = op_arrays.len().min(blocks.len());
            if let Err(e) = check_op_arrays(&op_arrays, &blocks[..n]) {
                tally
                    .failures
                    .push(format!("{}: against the dump: {e}", file.display()));
                // The rest of the batch can no longer be aligned with the dump.
                return;
            }
            blocks = &blocks[n..];
        }
        if !blocks.is_empty() {
            tally.failures.push(format!(
                "{} dumped op_arrays left over after {files:?}",
                blocks.len()
            ));
        }
    }

    fn load(&self, file: &Path) -> Result<Script, String> {
        let read = |ext: &str| {
            let path = recording(&self.record_dir, file, ext);
            std::fs::read(&path).map_err(|e| format!("no recording {}: {e}", path.display()))
        };
        let text = String::from_utf8(read(".zop")?).map_err(|e| format!(".zop: {e}"))?;
        let script = zend_ir::zop::parse(&text).map_err(|e| format!("parsing .zop: {e}"))?;
        let binary =
            zend_ir::zop::from_binary(&read(".zopb")?).map_err(|e| format!(".zopb: {e}"))?;
        if script != binary {
            return Err("the .zop and .zopb recordings differ".to_string());
        }
        Ok(script)
    }
}

#[test]
#[ignore = "records a whole corpus; run with --ignored"]
fn records_the_corpus() {
    let dir = std::env::var("ZOPT_CORPUS").unwrap_or_else(|_| "/usr/share/php".to_string());
    let limit = std::env::var("ZOPT_CORPUS_LIMIT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX);
    let level = std::env::var("ZOPT_CORPUS_LEVEL").unwrap_or_else(|_| "0".to_string());
    let mut files = BTreeSet::new();
    php_files(Path::new(&dir), &mut files);
    let files: Vec<PathBuf> = files.into_iter().take(limit).collect();
    assert!(!files.is_empty(), "no .php files under {dir}");

    let tmp = tempfile::tempdir().unwrap();
    let corpus = Corpus {
        record_dir: tmp.path().join("rec"),
        debug_level: if level == "0" { "0x10000" } else { "0x20000" },
        level,
    };
    let mut tally = Tally::default();
    for batch in files.chunks(BATCH) {
        match corpus.compile(batch, &mut tally) {
            Some(dump) => corpus.check(batch, &dump, &mut tally),
            // A file PHP cannot compile stops the batch: go one by one.
            None => {
                for file in batch {
                    let one = std::slice::from_ref(file);
                    match corpus.compile(one, &mut tally) {
                        Some(dump) => corpus.check(one, &dump, &mut tally),
                        None => tally.refused_by_php.push(file.clone()),
                    }
                }
            }
        }
    }
    eprintln!(
        "corpus {dir}: {} files, {} compiled and recorded, {} refused by PHP itself, \
         {} op_arrays recorded ({} of them dumped by PHP and checked against the dump), \
         {} failures",
        files.len(),
        tally.recorded,
        tally.refused_by_php.len(),
        tally.all_op_arrays,
        tally.op_arrays,
        tally.failures.len()
    );
    for file in &tally.refused_by_php {
        eprintln!("refused by PHP: {}", file.display());
    }
    assert!(
        tally.failures.is_empty(),
        "{} failures:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
}
