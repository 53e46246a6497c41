//! `zopt cache`: warming, packing, inspecting, verifying and clearing a zopt opcode cache
//! directory (crates/zend-cache's file cache).

use crate::corpus;
use crate::php::{CacheCompiled, Php};
use anyhow::{bail, Context, Result};
use clap::Subcommand;
use std::path::{Path, PathBuf};
use std::process::Command;
use zend_cache::file_cache::{self, Scan};
use zend_cache::{CacheBackend, CacheKey, FileCache, FileCacheConfig, SystemId, ValidationMode};

#[derive(Subcommand, Debug)]
pub enum CacheCommand {
    /// Compile PHP files in real PHP as the zopt extension's cache mode compiles an included
    /// file (without running them) and store them in the cache. Files whose entry is already
    /// fresh are skipped. With --fastcgi, a running php-fpm compiles them into its own cache
    /// (shared memory, or its zopt.cache_dir), with its own configuration.
    Warm {
        #[arg(long, required_unless_present = "fastcgi")]
        cache_dir: Option<PathBuf>,
        /// A running php-fpm that loads the zopt extension, with its cache on: `unix:PATH`
        /// (or the socket's path) or `HOST:PORT`. Each file is compiled there by one
        /// request to a script zopt writes into --script-dir.
        #[arg(long, conflicts_with_all = ["cache_dir", "optimization_level", "validate", "max_size", "php", "extension"])]
        fastcgi: Option<crate::fastcgi::Address>,
        /// With --fastcgi: a directory php-fpm can read, for the script it runs (default:
        /// the temporary directory; systemd gives php-fpm a /tmp of its own).
        #[arg(long, requires = "fastcgi")]
        script_dir: Option<PathBuf>,
        /// zopt.optimization_level (zopt's optimizer passes, OPcache's bitmask); part of the
        /// cache's system id.
        #[arg(long, default_value = "0x7FFEBFFF", value_parser = parse_hex)]
        optimization_level: u32,
        /// How entries are checked against their source: `mtime` (mtime + size) or
        /// `content` (size + content hash).
        #[arg(long, default_value = "mtime", value_parser = parse_validation)]
        validate: ValidationMode,
        /// Size limit of the cache directory in bytes (oldest entries are evicted).
        #[arg(long)]
        max_size: Option<u64>,
        /// Compile and store even files whose entry is fresh.
        #[arg(long)]
        force: bool,
        /// PHP 8.2 binary (default: $ZOPT_PHP or `php` on PATH).
        #[arg(long)]
        php: Option<PathBuf>,
        /// The zopt extension (default: $ZOPT_PHP_EXTENSION or libzopt_php.so beside zopt).
        #[arg(long)]
        extension: Option<PathBuf>,
        /// Files or directories of PHP code.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Summarize what the cache directory holds, per system id.
    Stat {
        #[arg(long)]
        cache_dir: PathBuf,
    },
    /// Check every entry and run-time image completely (framing, checksum, placement, body:
    /// an image's header, lengths and relocations); name every bad one with its reason and
    /// exit non-zero if there is one.
    Verify {
        #[arg(long)]
        cache_dir: PathBuf,
        /// Also report entries whose source file changed or disappeared (stale entries are
        /// listed, but are not errors: a lookup treats them as a miss and warm replaces them).
        #[arg(long)]
        check_sources: bool,
    },
    /// Gather the good, fresh entries of each system id into one mapped pack file
    /// (`pack.zcp`, replacing the previous pack), which lookups serve from without opening a
    /// file per script. Stale and bad entries stay out (and stay loose).
    Pack {
        #[arg(long)]
        cache_dir: PathBuf,
        /// Delete the loose entries that went into the pack.
        #[arg(long)]
        prune: bool,
    },
    /// Remove every entry and pack (and the cache's own directories) under the cache
    /// directory.
    Clear {
        #[arg(long)]
        cache_dir: PathBuf,
    },
}

fn parse_hex(s: &str) -> Result<u32, String> {
    zend_ir::dump::parse_number(s)
        .ok_or_else(|| format!("{s:?} is not a number (use 0x... for hex)"))
}

fn parse_validation(s: &str) -> Result<ValidationMode, String> {
    match s {
        "mtime" => Ok(ValidationMode::MtimeSize),
        "content" => Ok(ValidationMode::ContentHash),
        _ => Err(format!("{s:?}: use `mtime` or `content`")),
    }
}

pub fn run(command: CacheCommand) -> Result<()> {
    match command {
        CacheCommand::Warm {
            cache_dir,
            fastcgi,
            script_dir,
            optimization_level,
            validate,
            max_size,
            force,
            php,
            extension,
            paths,
        } => {
            let Some(cache_dir) = cache_dir else {
                let address = fastcgi.expect("clap requires --cache-dir or --fastcgi");
                let script_dir = script_dir.unwrap_or_else(std::env::temp_dir);
                return warm_fastcgi(&address, &script_dir, force, &paths).map(|_| ());
            };
            let php = Php::locate(php.as_deref(), extension.as_deref())?;
            let config = FileCacheConfig {
                max_bytes: max_size,
                ..FileCacheConfig::default()
            };
            warm(
                &php,
                &cache_dir,
                optimization_level,
                validate,
                config,
                force,
                &paths,
            )
            .map(|_| ())
        }
        CacheCommand::Stat { cache_dir } => {
            print!("{}", stat(&cache_dir)?);
            Ok(())
        }
        CacheCommand::Verify {
            cache_dir,
            check_sources,
        } => {
            let report = verify(&cache_dir, check_sources)?;
            print!("{}", report.text);
            if report.bad > 0 {
                bail!(
                    "{} bad cache entr{}",
                    report.bad,
                    if report.bad == 1 { "y" } else { "ies" }
                );
            }
            Ok(())
        }
        CacheCommand::Pack { cache_dir, prune } => {
            print!("{}", pack(&cache_dir, prune)?);
            Ok(())
        }
        CacheCommand::Clear { cache_dir } => {
            let (removed, bytes) = file_cache::clear(&cache_dir)
                .with_context(|| format!("cannot clear {}", cache_dir.display()))?;
            println!(
                "removed {removed} entries ({bytes} bytes) from {}",
                cache_dir.display()
            );
            Ok(())
        }
    }
}

/// The system id of the cache [`warm`] fills at `optimization_level`: the one the
/// extension computes in the same process.
pub fn system_id(php: &Php, optimization_level: u32) -> Result<SystemId> {
    let (version, environment) = php.cache_process_identity()?;
    Ok(SystemId::new(&version, optimization_level).with_environment(&environment))
}

/// `PHP_VERSION` of the PHP binary: part of the system id.
pub fn php_version(php: &Php) -> Result<String> {
    let out = Command::new(&php.binary)
        .args(["-n", "-r", "echo PHP_VERSION;"])
        .output()
        .with_context(|| format!("cannot run {}", php.binary.display()))?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || v.is_empty() {
        bail!("{} did not report its PHP_VERSION", php.binary.display());
    }
    Ok(v)
}

/// What [`warm`] did.
#[derive(Debug, Default, Clone)]
pub struct WarmReport {
    pub stored: usize,
    pub fresh: usize,
    pub failed: Vec<String>,
    pub bytes: u64,
    pub evicted: u64,
    pub system_dir: PathBuf,
}

/// Puts every PHP file under `paths` into the cache under `cache_dir`, each compiled as the
/// extension's cache mode compiles an included file ([`Php::cache_compile`]), so that the
/// extension serves exactly what it would have stored itself.
pub fn warm(
    php: &Php,
    cache_dir: &Path,
    optimization_level: u32,
    mode: ValidationMode,
    config: FileCacheConfig,
    force: bool,
    paths: &[PathBuf],
) -> Result<WarmReport> {
    let system = system_id(php, optimization_level)?;
    let cache = FileCache::open(cache_dir, system, config)
        .with_context(|| format!("cannot open the cache {}", cache_dir.display()))?;
    let files = corpus::php_files(paths)?;
    enum Outcome {
        Stored(u64, u64),
        Fresh,
    }
    let results = each_file(&files, |real: &Path| {
        // Validation data taken before compiling: if the file changes meanwhile, the entry
        // is stale rather than wrong.
        let key = CacheKey::for_file(real, mode)?;
        if !force && cache.lookup(&key).is_ok() {
            return Ok(Outcome::Fresh);
        }
        if force {
            cache.invalidate(&key.path)?;
        }
        let validation = match mode {
            ValidationMode::MtimeSize => "mtime",
            ValidationMode::ContentHash => "content",
        };
        match php.cache_compile(
            real,
            cache_dir,
            optimization_level,
            validation,
            cache.config().max_bytes,
        )? {
            CacheCompiled::Fresh => Ok(Outcome::Fresh),
            CacheCompiled::Stored => {
                let len = std::fs::metadata(cache.entry_path(&key.path)).map_or(0, |m| m.len());
                Ok(Outcome::Stored(len, 0))
            }
        }
    });
    let mut report = WarmReport {
        system_dir: cache.dir().to_path_buf(),
        ..WarmReport::default()
    };
    for (path, r) in results {
        match r {
            Ok(Outcome::Stored(bytes, evicted)) => {
                report.stored += 1;
                report.bytes += bytes;
                report.evicted += evicted;
            }
            Ok(Outcome::Fresh) => report.fresh += 1,
            Err(e) => report.failed.push(format!("{}: {e:#}", path.display())),
        }
    }
    println!(
        "warmed {} of {} files into {} ({} bytes; {} already fresh; {} evicted)",
        report.stored,
        files.len(),
        report.system_dir.display(),
        report.bytes,
        report.fresh,
        report.evicted
    );
    fail_unless_all_cached(&report.failed)?;
    Ok(report)
}

/// The script `zopt cache warm --fastcgi` has php-fpm run: with an empty request body it
/// answers the extension's configuration; otherwise it compiles the file the body names
/// into the server's zopt cache without running it, and says whether it was compiled and
/// stored, served fresh from the cache, or failed (PHP's own message printed before). One
/// file per request: a cached file's functions are bound as an include binds them, and two
/// files may declare the same function.
const WARM_SCRIPT: &str = r#"<?php
// Written by `zopt cache warm --fastcgi`, removed when it ends.
ini_set('display_errors', '1');
ini_set('html_errors', '0');
header('Content-Type: text/plain');
if (!function_exists('zopt_compile_file')) {
    echo "\nzopt-warm: no extension\n";
    return;
}
if (isset($_GET['forget'])) {
    // The last request: this script is going away, so is its entry.
    echo "\nzopt-warm: forgotten ", json_encode(zopt_invalidate(__FILE__, true)), "\n";
    return;
}
$file = file_get_contents('php://input');
if ($file === '' || $file === false) {
    echo "\nzopt-warm: configuration ", json_encode(zopt_get_configuration()), "\n";
    return;
}
if (($_GET['force'] ?? '') === '1') {
    zopt_invalidate($file, true);
}
$before = zopt_get_status(false)['compiles'];
try {
    $ok = zopt_compile_file($file);
} catch (\Throwable $e) {
    echo get_class($e), ': ', $e->getMessage(), ' in ', $e->getFile(), ' on line ', $e->getLine(), "\n";
    $ok = false;
}
$compiled = zopt_get_status(false)['compiles'] - $before;
echo "\nzopt-warm: ", !$ok ? 'failed' : ($compiled === 0 ? 'fresh' : (zopt_is_script_cached($file) ? 'stored' : 'not stored')), "\n";
"#;

/// What [`warm_fastcgi`] did.
#[derive(Debug, Default, Clone)]
pub struct FastcgiWarmReport {
    pub stored: usize,
    pub fresh: usize,
    pub failed: Vec<String>,
    /// The server's `zopt_get_configuration()['directives']`.
    pub directives: serde_json::Value,
}

/// Has the php-fpm at `address` compile every PHP file under `paths` into its zopt cache
/// (`zopt_compile_file`, one request per file, a few in parallel), through a script
/// written into `script_dir`. Fails, naming the cause, when the server cannot run the
/// script, does not load zopt or has its cache off, and after the whole run when a file
/// could not be cached.
pub fn warm_fastcgi(
    address: &crate::fastcgi::Address,
    script_dir: &Path,
    force: bool,
    paths: &[PathBuf],
) -> Result<FastcgiWarmReport> {
    use crate::fastcgi;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    let files = corpus::php_files(paths)?;
    let mut script = tempfile::Builder::new()
        .prefix("zopt-warm-")
        .suffix(".php")
        .tempfile_in(script_dir)
        .with_context(|| format!("cannot write the warm script into {}", script_dir.display()))?;
    script.write_all(WARM_SCRIPT.as_bytes())?;
    script.flush()?;
    // php-fpm's workers run as another user.
    std::fs::set_permissions(script.path(), std::fs::Permissions::from_mode(0o644))?;
    let script_path = script.path().display().to_string();
    let script_name = format!(
        "/{}",
        script
            .path()
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
    );
    let document_root = script_dir.display().to_string();
    let send =
        |body: &[u8], query: &str| -> Result<(String, Option<String>)> {
            let request_uri = format!("{script_name}?{query}");
            let length = body.len().to_string();
            let params = [
                ("GATEWAY_INTERFACE", "CGI/1.1"),
                ("SERVER_SOFTWARE", "zopt"),
                ("SERVER_PROTOCOL", "HTTP/1.1"),
                ("SERVER_NAME", "localhost"),
                ("SERVER_ADDR", "127.0.0.1"),
                ("SERVER_PORT", "80"),
                ("REMOTE_ADDR", "127.0.0.1"),
                ("REQUEST_METHOD", "POST"),
                ("REQUEST_URI", request_uri.as_str()),
                ("QUERY_STRING", query),
                ("SCRIPT_FILENAME", script_path.as_str()),
                ("SCRIPT_NAME", script_name.as_str()),
                ("DOCUMENT_ROOT", document_root.as_str()),
                ("CONTENT_TYPE", "application/octet-stream"),
                ("CONTENT_LENGTH", length.as_str()),
            ];
            let r = fastcgi::request(address, &params, body, Duration::from_secs(120))?;
            let text = String::from_utf8_lossy(&r.body).into_owned();
            let stderr = String::from_utf8_lossy(&r.stderr).trim().to_string();
            if r.status() == 404 || stderr.contains("Primary script unknown") {
                bail!(
                "php-fpm at {address} cannot read the warm script {script_path} (status {}{}): \
                 give --script-dir a directory it can read (under systemd it has a /tmp of \
                 its own)",
                r.status(),
                if stderr.is_empty() { String::new() } else { format!(", {stderr}") }
            );
            }
            let (printed, last) = match text.trim_end().rsplit_once('\n') {
                Some((printed, last)) => (printed.trim().to_string(), last),
                None => (String::new(), text.trim_end()),
            };
            let outcome = last.strip_prefix("zopt-warm: ").map(str::to_string);
            let mut message = printed;
            if outcome.is_none() {
                message = text.trim().to_string();
                if !stderr.is_empty() {
                    message = format!("{message}\n{stderr}").trim().to_string();
                }
                if message.is_empty() {
                    message = format!(
                        "php-fpm answered status {} and nothing else (see its error log)",
                        r.status()
                    );
                }
            }
            Ok((message, outcome))
        };

    let (message, outcome) = send(b"", "")?;
    let configuration = match outcome.as_deref() {
        Some("no extension") => bail!("php-fpm at {address} does not load the zopt extension"),
        Some(o) if o.starts_with("configuration ") => o["configuration ".len()..].to_string(),
        _ => bail!("php-fpm at {address} did not run the warm script: {message}"),
    };
    let configuration: serde_json::Value = serde_json::from_str(&configuration)
        .with_context(|| format!("php-fpm at {address} sent a bad configuration"))?;
    let directives = configuration["directives"].clone();
    let memory = directives["zopt.memory_consumption"].as_u64().unwrap_or(0);
    let cache_dir = directives["zopt.cache_dir"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if memory == 0 && cache_dir.is_empty() {
        bail!(
            "php-fpm at {address} has zopt's cache off: set zopt.memory_consumption (shared \
             memory) or zopt.cache_dir in its configuration"
        );
    }

    enum Outcome {
        Stored,
        Fresh,
    }
    let results = each_file(&files, |real: &Path| {
        let query = if force { "force=1" } else { "" };
        let (message, outcome) = send(real.as_os_str().as_encoded_bytes(), query)?;
        match outcome.as_deref() {
            Some("stored") => Ok(Outcome::Stored),
            Some("fresh") => Ok(Outcome::Fresh),
            Some("not stored") => {
                bail!("compiled but not stored (uncacheable, or the cache is full)")
            }
            _ if message.is_empty() => bail!("not compiled"),
            _ => bail!("{message}"),
        }
    });
    // The server cached the script too; its entry goes with it.
    match send(b"", "forget=1") {
        Ok((_, Some(o))) if o.starts_with("forgotten") => {}
        Ok((message, _)) => eprintln!("zopt: the warm script's own cache entry stays: {message}"),
        Err(e) => eprintln!("zopt: the warm script's own cache entry stays: {e:#}"),
    }
    let mut report = FastcgiWarmReport {
        directives,
        ..FastcgiWarmReport::default()
    };
    for (path, r) in results {
        match r {
            Ok(Outcome::Stored) => report.stored += 1,
            Ok(Outcome::Fresh) => report.fresh += 1,
            Err(e) => report.failed.push(format!("{}: {e:#}", path.display())),
        }
    }
    let target = match (memory, cache_dir.as_str()) {
        (0, dir) => dir.to_string(),
        (m, "") => format!("{} MB of shared memory", m >> 20),
        (m, dir) => format!("{} MB of shared memory and {dir}", m >> 20),
    };
    println!(
        "warmed {} of {} files in php-fpm at {address} ({target}; {} already fresh)",
        report.stored,
        files.len(),
        report.fresh
    );
    fail_unless_all_cached(&report.failed)?;
    Ok(report)
}

/// `warm_one` on the real path of each file, in parallel, with a progress bar; each
/// result beside the file's path as given.
fn each_file<T: Send>(
    files: &[corpus::SourceFile],
    warm_one: impl Fn(&Path) -> Result<T> + Sync,
) -> Vec<(PathBuf, Result<T>)> {
    use rayon::prelude::*;
    let bar = indicatif::ProgressBar::new(files.len() as u64);
    let results = files
        .par_iter()
        .map(|file| {
            let r = std::fs::canonicalize(&file.path)
                .with_context(|| format!("cannot resolve {}", file.path.display()))
                .and_then(|real| warm_one(&real));
            bar.inc(1);
            (file.path.clone(), r)
        })
        .collect();
    bar.finish_and_clear();
    results
}

/// Lists the files a warm could not cache, and fails if there is one.
fn fail_unless_all_cached(failed: &[String]) -> Result<()> {
    for f in failed {
        eprintln!("  {f}");
    }
    if !failed.is_empty() {
        bail!("{} file(s) could not be cached", failed.len());
    }
    Ok(())
}

/// Packs the cache under `cache_dir` (see `zend_cache::file_cache::pack`); returns the
/// `zopt cache pack` text.
pub fn pack(cache_dir: &Path, prune: bool) -> Result<String> {
    use std::fmt::Write;
    let report = file_cache::pack(cache_dir, prune)
        .with_context(|| format!("cannot pack {}", cache_dir.display()))?;
    let mut out = String::new();
    if report.systems.is_empty() {
        writeln!(out, "nothing to pack in {}", cache_dir.display())?;
    }
    for r in &report.systems {
        if let Some(e) = &r.previous_pack_error {
            writeln!(out, "previous pack of system {} ignored: {e}", r.system_dir)?;
        }
        if r.entries == 0 {
            writeln!(out, "system {}: nothing to pack", r.system_dir)?;
        } else {
            writeln!(
                out,
                "packed {} entries ({} loose, {} from the previous pack) into {} ({} bytes)",
                r.entries,
                r.from_loose,
                r.from_pack,
                r.pack.display(),
                r.bytes
            )?;
        }
        writeln!(
            out,
            "  left out: {} stale, {} bad, {} superseded by a loose entry; {} loose entries pruned",
            r.stale, r.bad, r.superseded, r.pruned
        )?;
    }
    Ok(out)
}

/// The `zopt cache stat` text.
pub fn stat(cache_dir: &Path) -> Result<String> {
    use std::fmt::Write;
    let Scan {
        systems,
        entries,
        images,
        packs,
        temp_files,
    } = file_cache::scan(cache_dir)
        .with_context(|| format!("cannot read {}", cache_dir.display()))?;
    let mut out = String::new();
    let total: u64 = entries.iter().map(|e| e.len).sum();
    writeln!(
        out,
        "cache {}: {} entries, {} bytes",
        cache_dir.display(),
        entries.len(),
        total
    )?;
    if !images.is_empty() {
        writeln!(
            out,
            "  run-time images: {}, {} bytes",
            images.len(),
            images.iter().map(|e| e.len).sum::<u64>()
        )?;
    }
    if !packs.is_empty() {
        writeln!(
            out,
            "  packs: {} with {} entries, {} bytes",
            packs.len(),
            packs.iter().filter_map(|p| p.entries).sum::<u64>(),
            packs.iter().map(|p| p.len).sum::<u64>()
        )?;
    }
    for s in &systems {
        writeln!(
            out,
            "  system {}: {} entries, {} bytes",
            s.name, s.entries, s.bytes
        )?;
        if s.pack_bytes > 0 {
            writeln!(
                out,
                "    pack: {} entries, {} bytes",
                s.pack_entries, s.pack_bytes
            )?;
        }
        writeln!(
            out,
            "    {}",
            s.description.as_deref().unwrap_or("(no SYSTEM file)")
        )?;
    }
    if let (Some(oldest), Some(newest)) = (
        entries.iter().map(|e| e.mtime).min(),
        entries.iter().map(|e| e.mtime).max(),
    ) {
        let age = |t: std::time::SystemTime| t.elapsed().map_or(0, |d| d.as_secs());
        writeln!(
            out,
            "  oldest entry stored {} s ago, newest {} s ago",
            age(oldest),
            age(newest)
        )?;
    }
    if !temp_files.is_empty() {
        writeln!(
            out,
            "  {} temporary file(s) (stores in progress, or left by a writer that died)",
            temp_files.len()
        )?;
    }
    Ok(out)
}

/// What [`verify`] found.
pub struct VerifyReport {
    pub good: usize,
    pub bad: usize,
    pub stale: usize,
    pub text: String,
}

impl VerifyReport {
    /// Counts one checked entry (`what` names it) and describes it unless it is good and fresh.
    fn tally(&mut self, what: &str, result: Result<file_cache::EntrySummary, zend_cache::Reject>) {
        use std::fmt::Write;
        match result {
            Ok(summary) => {
                self.good += 1;
                if summary.fresh == Some(false) {
                    self.stale += 1;
                    let _ = writeln!(
                        self.text,
                        "stale {what}: source {} changed or is gone",
                        String::from_utf8_lossy(&summary.script_path)
                    );
                }
            }
            Err(reason) => {
                self.bad += 1;
                let _ = writeln!(self.text, "bad {what}: {} ({reason})", reason.kind());
            }
        }
    }
}

/// Checks every entry and run-time image under `cache_dir`, loose and packed. An image's
/// body is checked as far as it can be outside PHP (`zend_cache::image_body::check`: its
/// version, flags, lengths, root and every relocation; not the PHP build it was made for,
/// nor where its relocations into the PHP binary land, which the extension checks when it
/// loads it).
pub fn verify(cache_dir: &Path, check_sources: bool) -> Result<VerifyReport> {
    use std::fmt::Write;
    let scan = file_cache::scan(cache_dir)
        .with_context(|| format!("cannot read {}", cache_dir.display()))?;
    let mut report = VerifyReport {
        good: 0,
        bad: 0,
        stale: 0,
        text: String::new(),
    };
    for e in &scan.entries {
        report.tally(
            &e.path.display().to_string(),
            file_cache::verify_entry(e, check_sources),
        );
    }
    for e in &scan.images {
        report.tally(
            &format!("run-time image {}", e.path.display()),
            file_cache::verify_entry(e, check_sources),
        );
    }
    let mut packed = 0;
    for p in &scan.packs {
        match file_cache::verify_pack(p, check_sources) {
            Err(reason) => {
                report.bad += 1;
                writeln!(report.text, "bad {}: {reason}", p.path.display())?;
            }
            Ok(checks) => {
                for c in checks {
                    packed += 1;
                    report.tally(
                        &format!(
                            "{} entry {} (path hash {:016x})",
                            p.path.display(),
                            c.index,
                            c.path_hash
                        ),
                        c.result,
                    );
                }
            }
        }
    }
    writeln!(
        report.text,
        "{} entries{}{}: {} good, {} bad{}",
        scan.entries.len() + packed,
        if scan.packs.is_empty() {
            String::new()
        } else {
            format!(" ({packed} in packs)")
        },
        if scan.images.is_empty() {
            String::new()
        } else {
            format!(" and {} run-time images", scan.images.len())
        },
        report.good,
        report.bad,
        if check_sources {
            format!(", {} stale", report.stale)
        } else {
            String::new()
        }
    )?;
    Ok(report)
}
