//! Running the real PHP 8.2: compiling a file without running it, with OPcache's dumps and,
//! optionally, the zopt extension recording the compiled script.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How to invoke PHP.
#[derive(Clone, Debug)]
pub struct Php {
    pub binary: PathBuf,
    /// The zopt extension (`libzopt_php.so`), needed to record.
    pub extension: Option<PathBuf>,
}

/// What one compilation printed.
pub struct Compiled {
    /// OPcache's dump output (stderr).
    pub dump: Vec<u8>,
    /// The recording, when the extension recorded one.
    pub recording: Option<PathBuf>,
}

/// Why PHP did not compile a file.
#[derive(Debug, thiserror::Error)]
#[error("PHP could not compile {file}: {message}")]
pub struct CompileError {
    pub file: String,
    pub message: String,
}

impl Php {
    /// Finds PHP and the extension from explicit paths, the environment, or defaults: `php`
    /// on PATH, and `libzopt_php.so` beside the running executable (cargo puts both in
    /// `target/<profile>/`).
    pub fn locate(php: Option<&Path>, extension: Option<&Path>) -> Result<Php> {
        let binary = match php {
            Some(p) => p.to_path_buf(),
            None => std::env::var_os("ZOPT_PHP")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("php")),
        };
        let extension = match extension {
            Some(e) => Some(e.to_path_buf()),
            None => std::env::var_os("ZOPT_PHP_EXTENSION")
                .map(PathBuf::from)
                .or_else(default_extension_path),
        };
        Ok(Php { binary, extension })
    }

    /// The zopt extension, which must exist (the error says how to build it).
    pub fn extension(&self) -> Result<&Path> {
        match &self.extension {
            Some(ext) if ext.is_file() => Ok(ext),
            Some(ext) => bail!(
                "the zopt extension {} does not exist; build it with `cargo build -p zopt-php` \
                 (and --release for a release zopt) or pass --extension",
                ext.display()
            ),
            None => bail!("the zopt extension was not found; build it with `cargo build -p zopt-php` or pass --extension"),
        }
    }

    /// Base command: no php.ini (so the user's configuration never changes the result),
    /// OPcache on for the CLI, JIT off.
    fn command(&self, optimization_level: u32, debug_level: u32) -> Command {
        let mut cmd = Command::new(&self.binary);
        cmd.arg("-n")
            .args(["-d", "zend_extension=opcache"])
            .args(["-d", "opcache.enable_cli=1"])
            .args(["-d", "opcache.file_update_protection=0"])
            .args(["-d", "opcache.jit=0"])
            .args([
                "-d",
                &format!("opcache.optimization_level={optimization_level:#x}"),
            ])
            .args(["-d", &format!("opcache.opt_debug_level={debug_level:#x}")]);
        cmd
    }

    /// Compiles `file` without running it, printing the dumps of `debug_level`; with
    /// `record_dir`, the extension also records the script there.
    pub fn compile(
        &self,
        file: &Path,
        optimization_level: u32,
        debug_level: u32,
        record_dir: Option<&Path>,
    ) -> Result<Compiled> {
        let file = std::fs::canonicalize(file)
            .with_context(|| format!("cannot resolve {}", file.display()))?;
        let mut cmd = self.command(optimization_level, debug_level);
        if let Some(dir) = record_dir {
            cmd.args(["-d", &format!("extension={}", self.extension()?.display())])
                .args(["-d", "zopt.mode=record"])
                .args(["-d", &format!("zopt.record_dir={}", dir.display())]);
        }
        cmd.args(["-d", "display_errors=stdout", "-d", "log_errors=0"]);
        cmd.args(["-r", "exit(opcache_compile_file($argv[1]) ? 0 : 1);", "--"])
            .arg(&file);
        let output = cmd
            .output()
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        // A recording failure is reported as such, not as a compile error: the extension's
        // warning about it is the only thing PHP printed.
        if let Some(dir) = record_dir {
            let err = recording_path(dir, &file).with_extension("zop.err");
            if err.exists() {
                bail!(
                    "the extension could not record {}: {}",
                    file.display(),
                    std::fs::read_to_string(&err).unwrap_or_default().trim()
                );
            }
        }
        if !output.status.success() || !output.stdout.is_empty() {
            let mut message = String::from_utf8_lossy(&output.stdout).trim().to_string();
            if message.is_empty() {
                message = format!("php exited with {}", output.status);
            }
            return Err(CompileError {
                file: file.display().to_string(),
                message,
            }
            .into());
        }
        let recording = match record_dir {
            Some(dir) => {
                let path = recording_path(dir, &file);
                if !path.is_file() {
                    bail!(
                        "the extension wrote no recording for {} (expected {})",
                        file.display(),
                        path.display()
                    );
                }
                Some(path)
            }
            None => None,
        };
        Ok(Compiled {
            dump: output.stderr,
            recording,
        })
    }
}

/// Where the extension writes the recording of `script` (an absolute path) under `dir`.
pub fn recording_path(dir: &Path, script: &Path) -> PathBuf {
    let mut name = script.as_os_str().to_owned();
    name.push(".zop");
    dir.join(
        Path::new(&name)
            .strip_prefix("/")
            .unwrap_or(Path::new(&name)),
    )
}

fn default_extension_path() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    // target/<profile>/zopt, or target/<profile>/deps/<test binary>.
    [
        dir.join("libzopt_php.so"),
        dir.parent()?.join("libzopt_php.so"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .or_else(|| Some(dir.join("libzopt_php.so")))
}
