//! `zopt exec-diff`: differential execution. Every program runs under
//!
//! - (a) `off`: PHP with OPcache loaded but disabled (`opcache.enable=0`, `opcache.enable_cli=0`),
//! - (b) `opcache`: OPcache with its own optimizer at the given level,
//! - (c) `roundtrip`: OPcache at level 0 and zopt capturing and writing back every script,
//! - (d) `optimize`: OPcache at level 0 and zopt's optimizer at the given level,
//! - (e) `cache`: OPcache disabled and zopt as the opcode cache (`zopt.cache_dir`, with
//!   `zopt.verify=1`): the program runs twice from a fresh cache directory; the first run
//!   fills it, the second must give the same output and be served every script the first
//!   stored, without a reject and without calling PHP's compiler for any of them (the
//!   extension's counters say so; only files the first run never saw, such as PHP files a
//!   program writes into its temporary directory, are compiled), and is the one compared;
//!   then twice more without `zopt.verify`: the third run stores each served script's
//!   run-time image, the fourth is served from those images (relocated, not rebuilt) and
//!   both must give the same output again,
//!
//! and the stdout and exit status of (b)–(e) are compared with (a). Every mode gets the same
//! PHP configuration otherwise: by default `-n` plus explicit `zend_extension=opcache`, or
//! (for real programs that need the extensions Debian loads) PHP's default php.ini; the zopt
//! extension is loaded in every mode (`zopt.mode=off` in (a) and (b)), JIT is off (or, with
//! [`Config::jit`], on in (b) to (d), where OPcache runs), and each
//! program runs from its own directory with a timeout, its stdin from /dev/null or from the
//! file its manifest entry names.
//!
//! A program is a PHP file, or a PHP command (`composer validate`: a script found on PATH
//! plus arguments) run in a given directory; a JSON manifest lists commands (see
//! [`Manifest`]).

use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// How PHP is configured.
pub use crate::php::PhpIni;

/// One way of running PHP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// (a) OPcache off: the reference.
    Off,
    /// (b) OPcache with its optimizer.
    Opcache,
    /// (c) zopt's round trip (capture + write-back, no optimization).
    Roundtrip,
    /// (d) zopt's optimizer.
    Optimize,
    /// (e) zopt's opcode cache, warm (see the module documentation).
    Cache,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Off,
        Mode::Opcache,
        Mode::Roundtrip,
        Mode::Optimize,
        Mode::Cache,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Opcache => "opcache",
            Mode::Roundtrip => "roundtrip",
            Mode::Optimize => "optimize",
            Mode::Cache => "cache",
        }
    }

    /// The `-d` settings of this mode.
    fn settings(self, optimization_level: u32) -> Vec<String> {
        let level = format!("{optimization_level:#x}");
        let (enable, opcache_level, zopt_mode) = match self {
            Mode::Off => ("0", "0", "off"),
            Mode::Opcache => ("1", level.as_str(), "off"),
            Mode::Roundtrip => ("1", "0", "roundtrip"),
            Mode::Optimize => ("1", "0", "optimize"),
            Mode::Cache => ("0", "0", "off"),
        };
        // Both switches: `enable_cli` rules the CLI, `enable` every other SAPI (php-cgi).
        vec![
            format!("opcache.enable={enable}"),
            format!("opcache.enable_cli={enable}"),
            format!("opcache.optimization_level={opcache_level}"),
            format!("zopt.mode={zopt_mode}"),
            format!("zopt.optimization_level={level}"),
        ]
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Rewrites output lines that legitimately vary between runs (timings, memory) before they
/// are compared: every match of `pattern` is replaced by `replacement`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Normalize {
    pub pattern: String,
    pub replacement: String,
}

impl Normalize {
    /// `text` with every match of the pattern replaced. Panics on a bad pattern:
    /// [`Manifest::load`] refuses one, and a program built in code names a fixed one.
    pub fn apply(&self, text: &[u8]) -> Vec<u8> {
        regex::bytes::Regex::new(&self.pattern)
            .unwrap_or_else(|e| panic!("bad normalize pattern {:?}: {e}", self.pattern))
            .replace_all(text, self.replacement.as_bytes())
            .into_owned()
    }
}

/// A program to run under every mode.
#[derive(Clone, Debug)]
pub struct Program {
    /// How it is reported: a file path, or the command line.
    pub name: String,
    /// Directory it runs in.
    pub cwd: PathBuf,
    /// The PHP script PHP runs.
    pub script: PathBuf,
    pub args: Vec<String>,
    pub php_ini: PhpIni,
    pub env: BTreeMap<String, String>,
    pub normalize: Vec<Normalize>,
    /// File read as the program's stdin (every run reads it from the start); /dev/null if none.
    pub stdin: Option<PathBuf>,
}

impl Program {
    /// A PHP file, run from its own directory.
    pub fn file(path: &Path, name: String, php_ini: PhpIni) -> Result<Program> {
        let path = path
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", path.display()))?;
        let cwd = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(Program {
            name,
            script: PathBuf::from(path.file_name().unwrap_or_default()),
            cwd,
            args: Vec::new(),
            php_ini,
            env: BTreeMap::new(),
            normalize: Vec::new(),
            stdin: None,
        })
    }

    /// A command line whose first word is a PHP script (a path, or a name on PATH such as
    /// `composer`), run in `cwd`.
    pub fn command(words: &[String], cwd: &Path, php_ini: PhpIni) -> Result<Program> {
        let Some((first, args)) = words.split_first() else {
            bail!("empty command");
        };
        let cwd = cwd
            .canonicalize()
            .with_context(|| format!("cannot resolve directory {}", cwd.display()))?;
        let script = resolve_script(first, &cwd)?;
        Ok(Program {
            name: words.join(" "),
            cwd,
            script,
            args: args.to_vec(),
            php_ini,
            env: BTreeMap::new(),
            normalize: Vec::new(),
            stdin: None,
        })
    }
}

/// Finds the PHP script a command names and checks it is one.
fn resolve_script(word: &str, cwd: &Path) -> Result<PathBuf> {
    let candidate = if word.contains('/') {
        Some(cwd.join(word))
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(word))
                .find(|p| p.is_file())
        })
    };
    let Some(path) = candidate.filter(|p| p.is_file()) else {
        bail!("{word}: not found (give a path or a script on PATH)");
    };
    let mut head = [0u8; 256];
    let n = std::fs::File::open(&path)
        .and_then(|mut f| f.read(&mut head))
        .with_context(|| format!("cannot read {}", path.display()))?;
    let head = &head[..n];
    let is_php = head.starts_with(b"<?php")
        || (head.starts_with(b"#!")
            && head
                .split(|&b| b == b'\n')
                .next()
                .is_some_and(|l| l.windows(3).any(|w| w == b"php")));
    if !is_php {
        bail!(
            "{} is not a PHP script: exec-diff runs PHP programs only",
            path.display()
        );
    }
    Ok(path)
}

/// A list of commands to run (JSON), for real programs:
///
/// ```json
/// {"programs": [
///   {"name": "composer validate", "cwd": "sample", "command": ["composer", "validate"],
///    "php_ini": "default", "env": {"COMPOSER_DISABLE_NETWORK": "1"},
///    "normalize": [{"pattern": "Time: .*", "replacement": "Time: -"}]}
/// ]}
/// ```
///
/// `cwd` is relative to the manifest's directory; `command[0]` is a PHP script (a path
/// relative to `cwd`, or a name on PATH). In `env` values, `{cwd}` is the program's
/// directory and `{tmp}` a fresh empty directory for each run (removed afterwards), so
/// that concurrent runs never share state such as Composer's home. `php_ini` defaults to
/// `none`; `stdin` (a file relative to `cwd`) is what the program reads, /dev/null if absent.
#[derive(Debug, Deserialize)]
pub struct Manifest {
    pub programs: Vec<ManifestEntry>,
}

#[derive(Debug, Deserialize)]
pub struct ManifestEntry {
    pub name: Option<String>,
    pub cwd: PathBuf,
    pub command: Vec<String>,
    #[serde(default)]
    pub php_ini: PhpIni,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub normalize: Vec<Normalize>,
    /// File given to the program as stdin, relative to `cwd`.
    pub stdin: Option<PathBuf>,
}

impl Manifest {
    /// Reads a manifest and turns its entries into programs.
    pub fn load(path: &Path) -> Result<Vec<Program>> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let manifest: Manifest = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a valid exec-diff manifest", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        manifest
            .programs
            .into_iter()
            .map(|e| {
                let mut p = Program::command(&e.command, &base.join(&e.cwd), e.php_ini)
                    .with_context(|| format!("{}: {:?}", path.display(), e.command))?;
                if let Some(name) = e.name {
                    p.name = name;
                }
                let cwd = p.cwd.display().to_string();
                p.env = e
                    .env
                    .into_iter()
                    .map(|(k, v)| (k, v.replace("{cwd}", &cwd)))
                    .collect();
                for n in &e.normalize {
                    regex::bytes::Regex::new(&n.pattern)
                        .with_context(|| format!("bad normalize pattern {:?}", n.pattern))?;
                }
                p.normalize = e.normalize;
                if let Some(stdin) = e.stdin {
                    let stdin = p.cwd.join(stdin);
                    if !stdin.is_file() {
                        bail!(
                            "{}: {}: stdin {} is not a file",
                            path.display(),
                            p.name,
                            stdin.display()
                        );
                    }
                    p.stdin = Some(stdin);
                }
                Ok(p)
            })
            .collect()
    }
}

/// Where PHP and the extension are, and how to run.
#[derive(Clone, Debug)]
pub struct Config {
    pub php: PathBuf,
    pub extension: PathBuf,
    pub optimization_level: u32,
    pub timeout: Duration,
    /// Parallel runs (0: every core).
    pub jobs: usize,
    /// `opcache.jit` of the modes that run OPcache, (b) to (d) (`tracing`, `function`, ...);
    /// `None`: no JIT in any mode.
    pub jit: Option<String>,
}

impl Config {
    /// The php command line of `program` under `mode`, without the program itself.
    pub fn php_args(&self, mode: Mode, php_ini: PhpIni) -> Vec<String> {
        let mut args = crate::php::ini_args(&self.php, php_ini);
        let jit = match (&self.jit, mode) {
            (Some(jit), Mode::Opcache | Mode::Roundtrip | Mode::Optimize) => jit.as_str(),
            _ => "0",
        };
        let mut settings = vec![
            format!("opcache.jit={jit}"),
            "opcache.file_update_protection=0".to_string(),
            format!("extension={}", self.extension.display()),
        ];
        if jit != "0" {
            settings.push("opcache.jit_buffer_size=64M".to_string());
        }
        settings.extend(mode.settings(self.optimization_level));
        for s in settings {
            args.push("-d".into());
            args.push(s);
        }
        args
    }

    /// Runs `program` under `mode` (once; twice for [`Mode::Cache`], which returns the warm
    /// run and fails unless it equals the cold one and compiled nothing).
    pub fn run(&self, program: &Program, mode: Mode) -> Result<RunOutput> {
        if mode != Mode::Cache {
            return self.run_once(program, mode, &[]);
        }
        let dir = tempfile::tempdir().context("cannot create a cache directory")?;
        let plain = |stats: &str| {
            vec![
                format!("zopt.cache_dir={}", dir.path().join("cache").display()),
                format!("zopt.cache_stats={}", dir.path().join(stats).display()),
                // Hits say what PHP's compiler said (a deprecation, a warning), as the cold
                // run does: what is compared is the replay, not its absence.
                "zopt.record_warnings=1".to_string(),
            ]
        };
        let settings = |stats: &str| {
            let mut settings = plain(stats);
            settings.push("zopt.verify=1".to_string());
            settings
        };
        // Loose entries are named by the script's path: a store of a path the cache has
        // replaces its entry, one of a new path adds one.
        let cache_entries = || -> Result<usize> {
            let cache = dir.path().join("cache");
            Ok(zend_cache::file_cache::scan(&cache)
                .with_context(|| format!("cannot list the cache {}", cache.display()))?
                .entries
                .len())
        };
        let cold = self.run_once(program, mode, &settings("cold.json"))?;
        let entries_after_cold = cache_entries()?;
        let warm = self.run_once(program, mode, &settings("warm.json"))?;
        let entries_after_warm = cache_entries()?;
        if let Some(diff) = first_diff(&cold, &warm) {
            bail!("the warm cache run differs from the cold one: {diff}");
        }
        let counters = |name: &str| -> Result<(String, serde_json::Value)> {
            let text = std::fs::read_to_string(dir.path().join(name))
                .with_context(|| format!("the {name} run wrote no cache counters"))?;
            let value = serde_json::from_str(text.trim_end())
                .with_context(|| format!("bad cache counters {text:?}"))?;
            Ok((text, value))
        };
        let (_, cold) = counters("cold.json")?;
        let (text, warm_counters) = counters("warm.json")?;
        let count = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap_or(u64::MAX);
        // PHP's compiler ran for the misses and for files no cache keeps (included through
        // a stream wrapper, as Laravel's serializable closures do; or whose capture was
        // refused, after a miss), never for a script served.
        let compiled_only_misses = |v: &serde_json::Value| {
            let (compiles, misses) = (count(v, "compiles"), count(v, "misses"));
            misses <= compiles && compiles <= misses.saturating_add(count(v, "uncacheable"))
        };
        // The warm run may only compile files the cold run never saw (a program that writes
        // and includes new PHP files per run, in a temporary directory of the run's own, as
        // template engines do), never one it has an entry for: every entry it stored is a new
        // one. (A program may load fewer files on its second run: composer collects its
        // cache's garbage on one run in 51, at random, loading classes the other runs do
        // not.)
        let warm_stores = count(&warm_counters, "stores");
        // A program whose only scripts PHP's compiler cannot compile (a parse error, a
        // compile-time fatal error) leaves nothing to cache, with zopt as with OPcache: the
        // warm run compiled (and failed) exactly as the cold one did. Reported as such, not
        // as served.
        let failures = |v: &serde_json::Value| count(v, "compile_failures");
        if entries_after_cold == 0
            && entries_after_warm == 0
            && count(&cold, "stores") == 0
            && warm_stores == 0
            && failures(&cold) > 0
            && failures(&warm_counters) == failures(&cold)
            && count(&warm_counters, "compiles") == count(&cold, "compiles")
            && count(&warm_counters, "served") == 0
        {
            return Ok(RunOutput {
                nothing_cached: true,
                ..warm
            });
        }
        if entries_after_warm.saturating_sub(entries_after_cold) as u64 != warm_stores
            || count(&warm_counters, "rejects") != 0
            || count(&warm_counters, "load_failures") != 0
            || count(&warm_counters, "store_failures") != 0
            || !compiled_only_misses(&warm_counters)
            || count(&warm_counters, "served") == 0
        {
            bail!(
                "the warm cache run was not served from the cache ({entries_after_cold} entries \
                 after the cold run, {entries_after_warm} after the warm one): {text}"
            );
        }
        // Run-time images (which zopt.verify would not make): made by the third run,
        // served by the fourth.
        let making = self.run_once(program, mode, &plain("making.json"))?;
        if let Some(diff) = first_diff(&warm, &making) {
            bail!("the run storing run-time images differs from the warm one: {diff}");
        }
        let imaged = self.run_once(program, mode, &plain("imaged.json"))?;
        if let Some(diff) = first_diff(&warm, &imaged) {
            bail!("the run served from run-time images differs from the warm one: {diff}");
        }
        let (_, making_counters) = counters("making.json")?;
        let (text, imaged_counters) = counters("imaged.json")?;
        // At least as many scripts are served from images as the fewest of those the cold run
        // stored, those the third run made images of and those the fourth was served: runs may
        // load different files, as above (MediaWiki loads a few more classes in a run that
        // meets its SQLite database locked by another program). Files new to a run (its
        // stores: templates compiled into a directory of its own) may be imaged or served
        // later in that run, by an include after the first, but no other run sees them.
        let imaged_scripts = count(&cold, "stores")
            .min(
                count(&making_counters, "image_stores")
                    .saturating_sub(count(&making_counters, "stores")),
            )
            .min(
                count(&imaged_counters, "served").saturating_sub(count(&imaged_counters, "stores")),
            );
        // A script without an image (one PHP's compiler warned about) is served from its
        // entry, and counted so.
        let image_served =
            count(&imaged_counters, "image_hits") + count(&imaged_counters, "image_refusals");
        if image_served < imaged_scripts
            || count(&imaged_counters, "image_rejects") != 0
            || count(&imaged_counters, "load_failures") != 0
            || !compiled_only_misses(&imaged_counters)
        {
            bail!("the run-time image run was not served from images: {text}");
        }
        Ok(warm)
    }

    fn run_once(&self, program: &Program, mode: Mode, extra: &[String]) -> Result<RunOutput> {
        let tmp = if program.env.values().any(|v| v.contains("{tmp}")) {
            Some(tempfile::tempdir().context("cannot create a temporary directory")?)
        } else {
            None
        };
        let env = program.env.iter().map(|(k, v)| match &tmp {
            Some(dir) => (
                k.clone(),
                v.replace("{tmp}", &dir.path().display().to_string()),
            ),
            None => (k.clone(), v.clone()),
        });
        let mut cmd = Command::new(&self.php);
        cmd.args(self.php_args(mode, program.php_ini))
            .args(extra.iter().flat_map(|s| ["-d", s.as_str()]))
            .arg(&program.script)
            .args(&program.args)
            .current_dir(&program.cwd)
            .envs(env)
            .stdin(match &program.stdin {
                Some(path) => Stdio::from(
                    std::fs::File::open(path)
                        .with_context(|| format!("cannot open {}", path.display()))?,
                ),
                None => Stdio::null(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start = Instant::now();
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot run {}", self.php.display()))?;
        let mut out = child.stdout.take().expect("piped stdout");
        let mut err = child.stderr.take().expect("piped stderr");
        let out_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = out.read_to_end(&mut buf);
            buf
        });
        let err_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = err.read_to_end(&mut buf);
            buf
        });
        let (status, timed_out) = match child.wait_timeout(self.timeout)? {
            Some(status) => (status, false),
            None => {
                let _ = child.kill();
                (child.wait()?, true)
            }
        };
        let elapsed = start.elapsed();
        let mut stdout = out_reader.join().unwrap_or_default();
        let stderr = err_reader.join().unwrap_or_default();
        for n in &program.normalize {
            stdout = n.apply(&stdout);
        }
        use std::os::unix::process::ExitStatusExt;
        Ok(RunOutput {
            stdout,
            stderr,
            status: status.code(),
            signal: status.signal(),
            timed_out,
            elapsed,
            nothing_cached: false,
        })
    }
}

/// What one run produced.
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Exit status; `None` when killed by a signal.
    pub status: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub elapsed: Duration,
    /// Under [`Mode::Cache`]: the cache had nothing to store or serve, because PHP's compiler
    /// failed on every script the program compiled.
    pub nothing_cached: bool,
}

impl RunOutput {
    fn status_text(&self) -> String {
        if self.timed_out {
            return format!("timed out after {:.1}s", self.elapsed.as_secs_f64());
        }
        match (self.status, self.signal) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => "unknown exit".into(),
        }
    }
}

/// Where `got` first differs from `expected` (stdout lines, then exit status), or `None`.
pub fn first_diff(expected: &RunOutput, got: &RunOutput) -> Option<String> {
    if got.timed_out {
        return Some(got.status_text());
    }
    if expected.stdout != got.stdout {
        let a: Vec<&[u8]> = expected.stdout.split(|&b| b == b'\n').collect();
        let b: Vec<&[u8]> = got.stdout.split(|&b| b == b'\n').collect();
        let n = (0..a.len().max(b.len()))
            .find(|&i| a.get(i) != b.get(i))
            .unwrap_or(0);
        let show = |l: Option<&&[u8]>| match l {
            Some(l) => format!("{:?}", String::from_utf8_lossy(l)),
            None => "<end of output>".to_string(),
        };
        return Some(format!(
            "stdout line {}: expected {}, got {}",
            n + 1,
            show(a.get(n)),
            show(b.get(n))
        ));
    }
    if expected.status != got.status || expected.signal != got.signal {
        return Some(format!(
            "{}, expected {}",
            got.status_text(),
            expected.status_text()
        ));
    }
    None
}

/// One program whose output under `mode` differs from (a).
#[derive(Clone, Debug, Serialize)]
pub struct Mismatch {
    pub file: String,
    pub mode: Mode,
    pub first_diff: String,
    /// The output under this mode is exactly OPcache's (b): the difference is PHP's own
    /// OPcache behaviour (class hoisting...), not something zopt did.
    pub same_as_opcache: bool,
}

/// The result of an exec-diff run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub programs: usize,
    /// Programs identical to (a) under every mode.
    pub identical: usize,
    pub mismatches: Vec<Mismatch>,
    /// `(program, mode)` runs that hit the timeout (also listed as mismatches, or as the
    /// reference's failure).
    pub timeouts: Vec<(String, Mode)>,
    /// Programs that could not be run at all.
    pub errors: Vec<(String, String)>,
    /// Programs the cache mode could not cache: PHP's compiler failed on each script they
    /// compiled (their output is still compared).
    pub nothing_cached: Vec<String>,
}

impl Report {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("report serializes")
    }

    pub fn print(&self) {
        for m in &self.mismatches {
            let note = if m.same_as_opcache && m.mode != Mode::Opcache {
                " (same as under OPcache's optimizer)"
            } else {
                ""
            };
            println!("MISMATCH {} [{}]{note}: {}", m.file, m.mode, m.first_diff);
        }
        for (file, mode) in &self.timeouts {
            println!("TIMEOUT  {file} [{mode}]");
        }
        for (file, e) in &self.errors {
            println!("ERROR    {file}: {e}");
        }
        println!(
            "{} programs, {} identical under off/opcache/roundtrip/optimize/cache ({} of them \
             with nothing to cache: PHP's compiler failed), {} mismatches, {} timeouts, {} errors",
            self.programs,
            self.identical,
            self.nothing_cached.len(),
            self.mismatches.len(),
            self.timeouts.len(),
            self.errors.len()
        );
    }
}

fn pool(jobs: usize) -> rayon::ThreadPool {
    let jobs = if jobs == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        jobs
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .expect("thread pool")
}

/// Runs every program under every mode (in parallel) and compares with (a).
pub fn run(config: &Config, programs: &[Program], progress: bool) -> Report {
    let tasks: Vec<(usize, Mode)> = (0..programs.len())
        .flat_map(|i| Mode::ALL.into_iter().map(move |m| (i, m)))
        .collect();
    let bar = if progress {
        indicatif::ProgressBar::new(tasks.len() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let outputs: Vec<((usize, Mode), Result<RunOutput>)> = pool(config.jobs).install(|| {
        tasks
            .par_iter()
            .map(|&(i, mode)| {
                let out = config.run(&programs[i], mode);
                bar.inc(1);
                ((i, mode), out)
            })
            .collect()
    });
    bar.finish_and_clear();

    let mut by_program: Vec<BTreeMap<Mode, RunOutput>> = vec![BTreeMap::new(); programs.len()];
    let mut report = Report {
        programs: programs.len(),
        ..Report::default()
    };
    for ((i, mode), out) in outputs {
        match out {
            Ok(out) => {
                if out.timed_out {
                    report.timeouts.push((programs[i].name.clone(), mode));
                }
                by_program[i].insert(mode, out);
            }
            Err(e) => report
                .errors
                .push((format!("{} [{mode}]", programs[i].name), format!("{e:#}"))),
        }
    }
    for (program, outs) in programs.iter().zip(&by_program) {
        let Some(reference) = outs.get(&Mode::Off) else {
            continue;
        };
        if reference.timed_out {
            report.errors.push((
                program.name.clone(),
                "the reference run (off) timed out".into(),
            ));
            continue;
        }
        if outs.get(&Mode::Cache).is_some_and(|out| out.nothing_cached) {
            report.nothing_cached.push(program.name.clone());
        }
        let mut identical = outs.len() == Mode::ALL.len();
        for mode in [Mode::Opcache, Mode::Roundtrip, Mode::Optimize, Mode::Cache] {
            let Some(out) = outs.get(&mode) else { continue };
            if let Some(diff) = first_diff(reference, out) {
                identical = false;
                let same_as_opcache = mode != Mode::Opcache
                    && outs
                        .get(&Mode::Opcache)
                        .is_some_and(|b| !b.timed_out && first_diff(b, out).is_none());
                report.mismatches.push(Mismatch {
                    file: program.name.clone(),
                    mode,
                    first_diff: diff,
                    same_as_opcache,
                });
            }
        }
        if identical {
            report.identical += 1;
        }
    }
    report
}

/// Median wall and CPU times of one program per mode.
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    pub program: String,
    pub runs: usize,
    /// Median wall-clock seconds per mode.
    pub median: BTreeMap<Mode, f64>,
    /// Median CPU seconds (user + system of the php process) per mode: steadier than wall
    /// time on a loaded machine.
    pub median_cpu: BTreeMap<Mode, f64>,
}

impl Timing {
    /// `median[a] / median[b]` (wall time).
    pub fn ratio(&self, a: Mode, b: Mode) -> Option<f64> {
        Some(self.median.get(&a)? / self.median.get(&b)?)
    }

    /// `median_cpu[a] / median_cpu[b]`.
    pub fn cpu_ratio(&self, a: Mode, b: Mode) -> Option<f64> {
        Some(self.median_cpu.get(&a)? / self.median_cpu.get(&b)?)
    }

    pub fn print(&self) {
        let show = |times: &BTreeMap<Mode, f64>, ratio: &dyn Fn(Mode, Mode) -> Option<f64>| {
            let get = |m: Mode| times.get(&m).copied().unwrap_or(f64::NAN);
            format!(
                "off {:.3}s, opcache {:.3}s, optimize {:.3}s; opcache/off {:.3}, optimize/off {:.3}, optimize/opcache {:.3}",
                get(Mode::Off),
                get(Mode::Opcache),
                get(Mode::Optimize),
                ratio(Mode::Opcache, Mode::Off).unwrap_or(f64::NAN),
                ratio(Mode::Optimize, Mode::Off).unwrap_or(f64::NAN),
                ratio(Mode::Optimize, Mode::Opcache).unwrap_or(f64::NAN),
            )
        };
        println!("timing {} (median of {} runs)", self.program, self.runs);
        println!("  wall: {}", show(&self.median, &|a, b| self.ratio(a, b)));
        println!(
            "  cpu:  {}",
            show(&self.median_cpu, &|a, b| self.cpu_ratio(a, b))
        );
    }
}

/// CPU seconds (user + system) of the children this process has waited for.
fn children_cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_CHILDREN is always valid.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr());
        usage.assume_init()
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn medians(times: BTreeMap<Mode, Vec<f64>>) -> BTreeMap<Mode, f64> {
    times
        .into_iter()
        .map(|(mode, mut t)| {
            t.sort_by(f64::total_cmp);
            (mode, t[t.len() / 2])
        })
        .collect()
}

/// Runs `program` `runs` times under (a), (b) and (d), one run at a time (interleaved, so
/// that drifting machine load hits every mode alike), and takes the median wall and CPU
/// times. Must not run concurrently with other child processes of this process (the CPU
/// time is read from `RUSAGE_CHILDREN`).
pub fn timing(config: &Config, program: &Program, runs: usize) -> Result<Timing> {
    let modes = [Mode::Off, Mode::Opcache, Mode::Optimize];
    let mut wall: BTreeMap<Mode, Vec<f64>> = BTreeMap::new();
    let mut cpu: BTreeMap<Mode, Vec<f64>> = BTreeMap::new();
    for _ in 0..runs.max(1) {
        for mode in modes {
            let before = children_cpu_seconds();
            let out = config.run(program, mode)?;
            let used = children_cpu_seconds() - before;
            if out.timed_out || out.status != Some(0) {
                bail!("{} [{mode}]: {}", program.name, out.status_text());
            }
            wall.entry(mode)
                .or_default()
                .push(out.elapsed.as_secs_f64());
            cpu.entry(mode).or_default().push(used);
        }
    }
    Ok(Timing {
        program: program.name.clone(),
        runs: runs.max(1),
        median: medians(wall),
        median_cpu: medians(cpu),
    })
}
