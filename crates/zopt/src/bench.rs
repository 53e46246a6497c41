//! `zopt bench serve`: how fast real PHP gets its scripts from zopt's opcode cache, compared
//! in the same run with compiling them (OPcache off) and with OPcache's own file cache.
//!
//! A small PHP driver loads every class, interface and trait of the given libraries through
//! an autoloader (one declaration per file, mapped once beforehand), timing the loading with
//! `hrtime`. It runs under
//!
//! - `compile`: OPcache off, every file compiled by PHP;
//! - `zopt`: OPcache off, the zopt extension serving every file from a warm
//!   `zopt.cache_dir` (its counters must show that nothing was compiled): the run-time
//!   images the warm-up stored, relocated rather than rebuilt;
//! - `zopt-pack`: the same with a cache of its own, warmed the same way and then packed
//!   (`zend_cache::file_cache::pack` with pruning: every script is served from the mapped
//!   pack, none from a loose entry file);
//! - `opcache-file`: OPcache's file cache alone (`opcache.file_cache_only=1`), warm, at
//!   optimization level 0 (zopt's entries are unoptimized too while no pass exists),
//!
//! one run of each mode per round, rounds interleaved so that drifting machine load hits every
//! mode alike; the medians and their ratios are reported. Every run must load the same number
//! of classes.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The PHP driver (bench_driver.php): `map`, `load` and `digest` (see its header).
pub const DRIVER: &str = include_str!("bench_driver.php");

/// Writes the driver into `dir` and returns its path.
pub fn write_driver(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("zopt-driver.php");
    std::fs::write(&path, DRIVER).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The modes, in the order each round runs them.
pub const MODES: [&str; 4] = ["compile", "zopt", "zopt-pack", "opcache-file"];

/// Medians of one mode.
#[derive(Debug, Clone, Serialize)]
pub struct ModeResult {
    /// Median time to load every class, as the driver measures it (ms).
    pub load_ms: f64,
    /// Median wall time of the whole php process (ms).
    pub wall_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServeReport {
    pub classes: u64,
    pub scripts: u64,
    pub rounds: usize,
    pub modes: BTreeMap<String, ModeResult>,
    /// Median nanoseconds zopt spent serving one script (lookup, validation, build, bind),
    /// from its counters.
    pub zopt_ns_per_script: f64,
    /// Scripts of a warm `zopt` run served from their run-time images (the others were
    /// rebuilt from their entries).
    pub image_hits: u64,
    /// `compile / zopt` and `opcache-file / zopt` of the load times: above 1, zopt is faster.
    pub speedup_vs_compile: f64,
    pub speedup_vs_opcache_file: f64,
}

impl ServeReport {
    pub fn print(&self) {
        println!(
            "loaded {} classes from {} scripts, median of {} rounds:",
            self.classes, self.scripts, self.rounds
        );
        for mode in MODES {
            let m = &self.modes[mode];
            println!(
                "  {mode:<13} load {:8.2} ms   process {:8.2} ms",
                m.load_ms, m.wall_ms
            );
        }
        println!(
            "  zopt serves one script in {:.1} µs ({} of {} from run-time images); load time compile/zopt {:.2}x, opcache-file/zopt {:.2}x",
            self.zopt_ns_per_script / 1000.0,
            self.image_hits,
            self.scripts,
            self.speedup_vs_compile,
            self.speedup_vs_opcache_file
        );
        let pack = self.modes["zopt-pack"].load_ms;
        println!(
            "  packed: load time compile/zopt-pack {:.2}x, opcache-file/zopt-pack {:.2}x, zopt/zopt-pack {:.2}x",
            self.modes["compile"].load_ms / pack,
            self.modes["opcache-file"].load_ms / pack,
            self.modes["zopt"].load_ms / pack
        );
    }
}

struct Run {
    classes: u64,
    load_ns: u64,
    wall_ns: u64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the benchmark on the libraries under `roots` (see the module documentation).
pub fn serve(
    php: &Path,
    extension: &Path,
    roots: &[PathBuf],
    rounds: usize,
) -> Result<ServeReport> {
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let driver = write_driver(dir.path())?;
    let map = dir.path().join("map.json");
    let zopt_cache = dir.path().join("zopt-cache");
    let opcache_dir = dir.path().join("opcache-file");
    std::fs::create_dir(&opcache_dir)?;
    let stats = dir.path().join("zopt-stats.json");
    let pack_cache = dir.path().join("zopt-pack-cache");
    let pack_stats = dir.path().join("zopt-pack-stats.json");

    let base = |enable: bool| {
        vec![
            "-n".to_string(),
            "-d".into(),
            "zend_extension=opcache".into(),
            "-d".into(),
            format!("opcache.enable_cli={}", u8::from(enable)),
            "-d".into(),
            "opcache.jit=0".into(),
            "-d".into(),
            "memory_limit=1G".into(),
        ]
    };
    let settings = |mode: &str| -> Vec<String> {
        let mut args = base(mode == "opcache-file");
        let extra: Vec<String> = match mode {
            "zopt" => vec![
                format!("extension={}", extension.display()),
                format!("zopt.cache_dir={}", zopt_cache.display()),
                format!("zopt.cache_stats={}", stats.display()),
            ],
            "zopt-pack" => vec![
                format!("extension={}", extension.display()),
                format!("zopt.cache_dir={}", pack_cache.display()),
                format!("zopt.cache_stats={}", pack_stats.display()),
            ],
            "opcache-file" => vec![
                format!("opcache.file_cache={}", opcache_dir.display()),
                "opcache.file_cache_only=1".into(),
                "opcache.file_update_protection=0".into(),
                "opcache.optimization_level=0".into(),
                "opcache.validate_timestamps=1".into(),
            ],
            _ => vec![],
        };
        for s in extra {
            args.push("-d".into());
            args.push(s);
        }
        args
    };

    let mut mapping = Command::new(php);
    mapping
        .args(base(false))
        .arg(&driver)
        .arg("map")
        .arg(&map)
        .args(roots);
    let out = mapping.output().context("cannot run php")?;
    if !out.status.success() {
        bail!(
            "mapping the libraries failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let run = |mode: &str| -> Result<Run> {
        let start = Instant::now();
        let out = Command::new(php)
            .args(settings(mode))
            .arg(&driver)
            .arg("load")
            .arg(&map)
            .output()
            .context("cannot run php")?;
        let wall_ns = start.elapsed().as_nanos() as u64;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout.lines().last().unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(line).with_context(|| {
            format!(
                "{mode}: unexpected output {stdout:?} {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
        Ok(Run {
            classes: v["classes"].as_u64().unwrap_or(0),
            load_ns: v["load_ns"].as_u64().unwrap_or(0),
            wall_ns,
        })
    };

    // Warm both caches: the cold zopt run stores every script's entry, the next one serves
    // the entries and stores each script's run-time image (see zopt-php's file_image), which
    // the timed runs load.
    let reference = run("compile")?;
    if reference.classes == 0 {
        bail!("no class found under the given directories");
    }
    run("zopt")?;
    run("zopt")?;
    run("zopt-pack")?;
    run("zopt-pack")?;
    let packed = zend_cache::file_cache::pack(&pack_cache, true)
        .with_context(|| format!("cannot pack {}", pack_cache.display()))?;
    let left = zend_cache::file_cache::scan(&pack_cache)?;
    if packed.systems.iter().map(|s| s.entries).sum::<u64>() == 0
        || !left.entries.is_empty()
        || !left.images.is_empty()
    {
        bail!("packing the warm zopt cache left loose entries or packed nothing: {packed:?}");
    }
    run("opcache-file")?;
    let _ = std::fs::remove_file(&stats);
    let _ = std::fs::remove_file(&pack_stats);

    let mut load: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut wall: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for _ in 0..rounds.max(1) {
        for mode in MODES {
            let r = run(mode)?;
            if r.classes != reference.classes {
                bail!(
                    "{mode} loaded {} classes, compiling loads {}",
                    r.classes,
                    reference.classes
                );
            }
            load.entry(mode).or_default().push(r.load_ns as f64 / 1e6);
            wall.entry(mode).or_default().push(r.wall_ns as f64 / 1e6);
        }
    }

    // Every warm zopt run (loose or packed) was served without compiling.
    let text = std::fs::read_to_string(&stats).context("zopt wrote no cache counters")?;
    let pack_text =
        std::fs::read_to_string(&pack_stats).context("zopt-pack wrote no cache counters")?;
    let mut per_script = Vec::new();
    let mut scripts = 0;
    let mut image_hits = 0;
    for (mode, text) in [("zopt", &text), ("zopt-pack", &pack_text)] {
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line)?;
            let n = |k: &str| v[k].as_u64().unwrap_or(0);
            if n("compiles") != 0 || n("load_failures") != 0 {
                bail!("a warm {mode} run compiled scripts: {line}");
            }
            if mode == "zopt" {
                scripts = n("served");
                image_hits = n("image_hits");
                per_script.push(n("served_ns") as f64 / n("served").max(1) as f64);
            }
        }
    }

    let modes: BTreeMap<String, ModeResult> = MODES
        .iter()
        .map(|&m| {
            (
                m.to_string(),
                ModeResult {
                    load_ms: median(load[m].clone()),
                    wall_ms: median(wall[m].clone()),
                },
            )
        })
        .collect();
    Ok(ServeReport {
        classes: reference.classes,
        scripts,
        rounds: rounds.max(1),
        zopt_ns_per_script: median(per_script),
        image_hits,
        speedup_vs_compile: modes["compile"].load_ms / modes["zopt"].load_ms,
        speedup_vs_opcache_file: modes["opcache-file"].load_ms / modes["zopt"].load_ms,
        modes,
    })
}
