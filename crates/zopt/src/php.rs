//! Running the real PHP 8.2: compiling a file without running it, with OPcache's dumps and,
//! optionally, the zopt extension recording the compiled script.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhpIni {
    /// `-n`: no php.ini; OPcache is loaded explicitly.
    #[default]
    None,
    /// PHP's default php.ini and conf.d (Debian loads OPcache and the common extensions).
    Default,
}

impl std::str::FromStr for PhpIni {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "none" | "n" => Ok(PhpIni::None),
            "default" | "keep" => Ok(PhpIni::Default),
            _ => Err(format!("{s:?}: expected none or default")),
        }
    }
}

/// The arguments that give PHP the configuration `ini` with OPcache loaded (once).
pub fn ini_args(php: &Path, ini: PhpIni) -> Vec<String> {
    match ini {
        PhpIni::None => vec!["-n".into(), "-d".into(), "zend_extension=opcache".into()],
        PhpIni::Default if !default_ini_loads_opcache(php) => {
            vec!["-d".into(), "zend_extension=opcache".into()]
        }
        PhpIni::Default => Vec::new(),
    }
}

/// Whether `php`'s default configuration already loads OPcache (then loading it again
/// would only warn).
fn default_ini_loads_opcache(php: &Path) -> bool {
    // Per binary: php and php-cgi read php.ini files of their own.
    static LOADED: std::sync::Mutex<std::collections::BTreeMap<PathBuf, bool>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    *loaded.entry(php.to_path_buf()).or_insert_with(|| {
        Command::new(php)
            .arg("-m")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("Zend OPcache"))
            .unwrap_or(false)
    })
}

/// How to invoke PHP.
#[derive(Clone, Debug)]
pub struct Php {
    pub binary: PathBuf,
    /// The zopt extension (`libzopt_php.so`), needed to record.
    pub extension: Option<PathBuf>,
    /// The configuration PHP runs with: `-n` (the optimizer's tables), or its own php.ini
    /// and conf.d with every extension installed (see [`Php::environment`]).
    pub ini: PhpIni,
    /// How PHP compiles the files it is given (see [`CompileAs`]).
    pub compile_as: CompileAs,
}

/// How [`Php::compile`] has PHP compile a file; neither runs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompileAs {
    /// `opcache_compile_file()`: compiled as a file that will not run
    /// (`ZEND_COMPILE_WITHOUT_EXECUTION`): no class is bound at compile time.
    #[default]
    Include,
    /// `php -l`: compiled as PHP compiles a script it is about to run, which binds a
    /// top-level class without parent, interface or trait at compile time (no
    /// DECLARE_CLASS, and the optimizer sees it linked: its constants fold).
    Run,
}

impl std::str::FromStr for CompileAs {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "include" => Ok(CompileAs::Include),
            "run" => Ok(CompileAs::Run),
            _ => Err(format!("{s:?}: expected include or run")),
        }
    }
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
        Ok(Php {
            binary,
            extension,
            ini: PhpIni::None,
            compile_as: CompileAs::Include,
        })
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

    /// Base command: no php.ini unless [`Php::ini`] says otherwise (so the user's
    /// configuration never changes the result), OPcache on for the CLI, JIT off.
    pub(crate) fn command(&self, optimization_level: u32, debug_level: u32) -> Command {
        let mut cmd = Command::new(&self.binary);
        cmd.args(ini_args(&self.binary, self.ini))
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

    /// The command [`Php::compile`] runs: PHP compiling `file` as [`Php::compile_as`] says,
    /// printing the dumps of `debug_level`, and with `record_dir` recording the script there.
    pub fn compile_command(
        &self,
        file: &Path,
        optimization_level: u32,
        debug_level: u32,
        record_dir: Option<&Path>,
    ) -> Result<Command> {
        let mut cmd = self.command(optimization_level, debug_level);
        if let Some(dir) = record_dir {
            cmd.args(["-d", &format!("extension={}", self.extension()?.display())])
                .args(["-d", "zopt.mode=record"])
                .args(["-d", &format!("zopt.record_dir={}", dir.display())]);
        }
        // Deprecations (`${var}` in strings...) are not shown: a failure's message is its
        // error. E_ALL without E_DEPRECATED and E_USER_DEPRECATED.
        cmd.args(["-d", "display_errors=stdout", "-d", "log_errors=0"])
            .args(["-d", "error_reporting=8191"]);
        match self.compile_as {
            CompileAs::Include => cmd
                .args(["-r", "exit(opcache_compile_file($argv[1]) ? 0 : 1);", "--"])
                .arg(file),
            CompileAs::Run => cmd.arg("-l").arg(file),
        };
        Ok(cmd)
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
        let mut output = self
            .compile_command(&file, optimization_level, debug_level, record_dir)?
            .output()
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        if self.compile_as == CompileAs::Run {
            // The lint's verdict on success is all it prints besides errors.
            let verdict = format!("No syntax errors detected in {}\n", file.display());
            if output.stdout.ends_with(verdict.as_bytes()) {
                output.stdout.truncate(output.stdout.len() - verdict.len());
            }
        }
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
        // PHP's exit status is the verdict: compile warnings (`continue` targeting a
        // `switch`, a `final private` method) are printed on stdout too, but PHP compiled
        // the file, and OPcache optimized and dumped it.
        if !output.status.success() {
            // OPcache's follow-up warning about our `-r` line ("could not compile file ...
            // in Command line code") repeats the failure with zopt's internals: PHP's own
            // message before it is the cause.
            let stdout = String::from_utf8_lossy(&output.stdout);
            let own: Vec<&str> = stdout
                .lines()
                .filter(|l| {
                    !(l.starts_with("Warning: Zend OPcache could not compile file")
                        && l.ends_with("in Command line code on line 1"))
                })
                .collect();
            let mut message = own.join("\n").trim().to_string();
            if message.is_empty() {
                message = stdout.trim().to_string();
            }
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

impl Php {
    /// How the PHP of [`Php::command`], with the zopt extension loaded as it records,
    /// differs from the optimizer's tables: the extension's description of its process
    /// (`zopt_get_configuration()['environment']`), for this process's optimizer to
    /// [`zend_optimizer::environment::install`] and so fold what that PHP folds.
    pub fn environment(&self) -> Result<zend_optimizer::environment::Process> {
        let out = self
            .command(0, 0)
            .args(["-d", &format!("extension={}", self.extension()?.display())])
            .args([
                "-r",
                "echo implode(\"\\n\", zopt_get_configuration()['environment']);",
            ])
            .output()
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        if !out.status.success() {
            // PHP's CLI prints its errors on stdout.
            let said = [&out.stderr, &out.stdout]
                .iter()
                .map(|o| String::from_utf8_lossy(o).trim().to_string())
                .find(|o| !o.is_empty())
                .unwrap_or_else(|| format!("it exited with {}", out.status));
            bail!(
                "{} could not describe its configuration (zopt_get_configuration() with the \
                 extension loaded): {said}",
                self.binary.display()
            );
        }
        let text = String::from_utf8(out.stdout).context("the description is not UTF-8")?;
        zend_optimizer::environment::Process::parse(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}'s description of its configuration, {e}",
                self.binary.display()
            )
        })
    }
}

/// What [`Php::cache_compile`] did with a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheCompiled {
    /// Compiled and stored.
    Stored,
    /// Already cached and fresh: served, nothing compiled.
    Fresh,
}

impl Php {
    /// The PHP process that fills a cache for the extension (`zopt cache warm`): `php -n`
    /// with the extension alone, as it serves its cache. What the optimizer folds depends
    /// on the process (see `zend_optimizer::environment`), and so does the cache's system id.
    fn cache_process(&self) -> Result<Command> {
        let mut cmd = Command::new(&self.binary);
        cmd.arg("-n")
            .args(["-d", &format!("extension={}", self.extension()?.display())]);
        Ok(cmd)
    }

    /// `PHP_VERSION` and how the process of [`Php::cache_compile`] differs from the
    /// optimizer's tables (`zopt_get_configuration()['environment']`, one per line): what
    /// the system id of the cache it fills is made of.
    pub fn cache_process_identity(&self) -> Result<(String, String)> {
        let out = self
            .cache_process()?
            .args([
                "-r",
                "echo PHP_VERSION, \"\\n\", implode(\"\\n\", zopt_get_configuration()['environment']);",
            ])
            .output()
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (version, environment) = text.split_once('\n').unwrap_or((text.as_str(), ""));
        if !out.status.success() || !version.starts_with("8.") {
            bail!(
                "{} with the zopt extension did not report its identity: {}{}",
                self.binary.display(),
                text,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok((version.to_string(), environment.to_string()))
    }

    /// Puts `file` (an absolute, resolved path) into the zopt cache under `cache_dir` exactly
    /// as the extension's cache mode does on a miss when the file is included — same
    /// compiler options, capture, optimizer, store — without running it: PHP lints the file
    /// (`php -l` compiles it and stops) with `zopt.cache_dir` set and OPcache's caching off.
    /// (`opcache_compile_file` would not do: it compiles with
    /// `ZEND_COMPILE_WITHOUT_EXECUTION`, which leaves out the compile-time binding of
    /// classes, so the script would not behave as when it is included.)
    pub fn cache_compile(
        &self,
        file: &Path,
        cache_dir: &Path,
        optimization_level: u32,
        validation: &str,
        max_bytes: Option<u64>,
    ) -> Result<CacheCompiled> {
        let stats = tempfile::NamedTempFile::new().context("cannot create a temporary file")?;
        let mut cmd = self.cache_process()?;
        cmd.args(["-d", &format!("zopt.cache_dir={}", cache_dir.display())])
            .args([
                "-d",
                &format!("zopt.optimization_level={optimization_level:#x}"),
            ])
            .args(["-d", &format!("zopt.cache_validation={validation}")])
            .args([
                "-d",
                &format!("zopt.cache_max_bytes={}", max_bytes.unwrap_or(0)),
            ])
            .args([
                "-d",
                &format!("zopt.cache_stats={}", stats.path().display()),
            ])
            .args(["-d", "display_errors=stdout", "-d", "log_errors=0", "-l"])
            .arg(file);
        let output = cmd
            .output()
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        if !output.status.success() {
            let printed = String::from_utf8_lossy(&output.stdout);
            let message: Vec<&str> = printed
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.starts_with("Errors parsing"))
                .collect();
            return Err(CompileError {
                file: file.display().to_string(),
                message: if message.is_empty() {
                    format!("php exited with {}", output.status)
                } else {
                    message.join("\n")
                },
            }
            .into());
        }
        let text = std::fs::read_to_string(stats.path()).unwrap_or_default();
        let counters: serde_json::Value =
            serde_json::from_str(text.trim_end()).with_context(|| {
                format!(
                    "the extension wrote no cache counters for {}",
                    file.display()
                )
            })?;
        let n = |k: &str| counters[k].as_u64().unwrap_or(0);
        match (n("hits"), n("stores")) {
            (1, 0) => Ok(CacheCompiled::Fresh),
            (0, 1) => Ok(CacheCompiled::Stored),
            _ => bail!("{} was not cached: {}", file.display(), text.trim()),
        }
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
