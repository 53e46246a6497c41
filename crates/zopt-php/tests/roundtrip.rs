//! The write-back is exact: in `zopt.mode=roundtrip`, what PHP holds after the write-back is
//! exactly what it compiled.
//!
//! Three independent witnesses, over every fixture and over code with the shapes the
//! write-back handles specially (jump tables, constant-expression defaults, numeric-string
//! offsets, closures in methods, traits, enums):
//!
//! 1. recording the written-back script (roundtrip mode with `zopt.record_dir`) gives the
//!    same [`zend_ir::Script`] as record mode gives for PHP's own compilation, at
//!    optimization levels 0 and 0x7FFEBFFF;
//! 2. `zopt.verify=1` (capture again inside the same pass, literal `u2` values included)
//!    never warns;
//! 3. PHP's own "after optimizer" dump, which OPcache prints after the registered passes
//!    when `ZEND_OPTIMIZER_PASS_7` is set, is byte-identical with and without the round trip.
//!
//! Needs `php` 8.2 with OPcache on PATH: fails, never skips, without it.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{extension, php, recording};

/// Runs `f` on every item, on every core (each call starts its own php process).
fn par_each<T: Sync>(items: &[T], f: impl Fn(&T) + Sync) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                f(item);
            });
        }
    });
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/php");
    let mut files = Vec::new();
    let mut dirs = vec![root.canonicalize().expect("fixtures/php")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "php") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 150, "only {} fixtures", files.len());
    files
}

/// Fixtures PHP 8.2's optimizer breaks at `level`: it leaves a `MATCH` jump table entry
/// naming an op the function does not have (php-src GH-21404), which zopt refuses to record
/// or write back ([`php_s_dangling_jump_table_entry_is_refused`]).
fn broken_by_php(file: &Path, level: &str) -> bool {
    level == "0x7FFEBFFF" && file.ends_with("fz_dfa_dangling_jump_table.php")
}

fn fixtures_at(level: &str) -> Vec<PathBuf> {
    let mut files = fixtures();
    files.retain(|f| !broken_by_php(f, level));
    files
}

/// Compiles `files` (without running them) in one php process with zopt in `mode`; fails
/// if zopt warns. Every file gets its own process in these tests: compiling declares
/// top-level functions, so two fixtures defining the same function cannot share one.
fn compile(
    files: &[PathBuf],
    mode: &str,
    level: &str,
    debug: &str,
    record_dir: Option<&Path>,
) -> Output {
    let out = compile_warning(files, mode, level, debug, record_dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("zopt"),
        "zopt warned in {mode} mode: {stdout}"
    );
    out
}

/// [`compile`], letting zopt warn.
fn compile_warning(
    files: &[PathBuf],
    mode: &str,
    level: &str,
    debug: &str,
    record_dir: Option<&Path>,
) -> Output {
    let mut cmd = php();
    cmd.arg("-n")
        .args(["-d", "zend_extension=opcache"])
        .args(["-d", "opcache.enable_cli=1"])
        .args(["-d", "opcache.file_update_protection=0"])
        .args(["-d", "opcache.jit=0"])
        .args(["-d", "memory_limit=1G"])
        .arg("-d")
        .arg(format!("opcache.optimization_level={level}"))
        .arg("-d")
        .arg(format!("opcache.opt_debug_level={debug}"))
        .arg("-d")
        .arg(format!("extension={}", extension().display()))
        .arg("-d")
        .arg(format!("zopt.mode={mode}"))
        .args(["-d", "zopt.verify=1", "-d", "zopt.record_format=text"]);
    if let Some(dir) = record_dir {
        cmd.arg("-d")
            .arg(format!("zopt.record_dir={}", dir.display()));
    }
    let out = cmd
        .args([
            "-r",
            "foreach (array_slice($argv, 1) as $f) { opcache_compile_file($f); }",
            "--",
        ])
        .args(files)
        .output()
        .expect("running php");
    assert!(
        out.status.signal().is_none(),
        "php crashed ({:?}) compiling {files:?} in {mode} mode: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "php failed in {mode} mode on {files:?}: {stdout}"
    );
    out
}

fn load(dir: &Path, file: &Path) -> zend_ir::Script {
    let path = recording(dir, file, ".zop");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no recording {}: {e}", path.display()));
    zend_ir::zop::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Witnesses 1 and 2 on `files` at `level`.
fn recordings_agree(files: &[PathBuf], level: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let compiled = tmp.path().join("compiled");
    let written = tmp.path().join("written");
    par_each(files, |file| {
        let one = std::slice::from_ref(file);
        compile(one, "record", level, "0", Some(&compiled));
        compile(one, "roundtrip", level, "0", Some(&written));
    });
    let mut op_arrays = 0;
    for file in files {
        let before = load(&compiled, file);
        let after = load(&written, file);
        op_arrays += before.op_arrays().len();
        if before != after {
            let a = before.op_arrays();
            let b = after.op_arrays();
            let first =
                a.iter().zip(&b).find(|(x, y)| x != y).map(|(x, y)| {
                    format!("{}:\n{x:#?}\nafter write-back:\n{y:#?}", x.display_name())
                });
            panic!(
                "{} at level {level}: the written-back script differs from PHP's: {}",
                file.display(),
                first.unwrap_or_else(|| "outside the op_arrays".into())
            );
        }
    }
    assert!(op_arrays > files.len(), "{op_arrays} op_arrays compared");
}

#[test]
fn written_back_fixtures_record_identically_at_level_0() {
    recordings_agree(&fixtures_at("0"), "0");
}

#[test]
fn written_back_fixtures_record_identically_after_opcache_optimizer() {
    recordings_agree(&fixtures_at("0x7FFEBFFF"), "0x7FFEBFFF");
}

/// What PHP 8.2's optimizer makes of a fixture it breaks is refused with a warning that
/// names the function, the op and the entry; PHP keeps (and runs) its own op_array.
#[test]
fn php_s_dangling_jump_table_entry_is_refused() {
    let broken: Vec<PathBuf> = fixtures()
        .into_iter()
        .filter(|f| broken_by_php(f, "0x7FFEBFFF"))
        .collect();
    assert_eq!(broken.len(), 1, "the fixture is missing");
    let tmp = tempfile::tempdir().unwrap();
    for mode in ["record", "roundtrip"] {
        let out = compile_warning(&broken, mode, "0x7FFEBFFF", "0", Some(tmp.path()));
        let stdout = String::from_utf8_lossy(&out.stdout);
        for expected in [
            "function match_of_array",
            "(MATCH, line 17)",
            "jump table entry",
            "outside ops",
        ] {
            assert!(
                stdout.contains(expected),
                "{mode} mode: no {expected:?} in the warning: {stdout}"
            );
        }
    }
}

/// Witness 3: PHP prints its "after optimizer" dump after the registered passes when
/// PASS_7 is on, so the round trip's output is dumped by PHP itself.
#[test]
fn php_dumps_the_written_back_script_identically() {
    for level in ["0x40", "0x7FFEBFFF"] {
        par_each(&fixtures_at(level), |file| {
            let batch = std::slice::from_ref(file);
            let plain = compile(batch, "off", level, "0x20000", None);
            let round = compile(batch, "roundtrip", level, "0x20000", None);
            assert!(
                !plain.stderr.is_empty(),
                "no dump at level {level}: {}",
                String::from_utf8_lossy(&plain.stderr)
            );
            if plain.stderr != round.stderr {
                let a = String::from_utf8_lossy(&plain.stderr);
                let b = String::from_utf8_lossy(&round.stderr);
                let (n, (x, y)) = a
                    .lines()
                    .zip(b.lines())
                    .enumerate()
                    .find(|(_, (x, y))| x != y)
                    .unwrap_or((0, ("<length>", "<length>")));
                panic!(
                    "level {level}, {batch:?}: dumps differ at line {}: {x:?} vs {y:?}",
                    n + 1
                );
            }
        });
    }
}

const SHAPES: &str = r#"<?php
namespace Shapes;

const LIMIT = 3;

interface HasArea { public function area(): float; }
trait Named {
    public function name(string $prefix = self::class . '#', int $n = LIMIT * 2): string {
        $f = fn($x) => "$prefix$x:$n";
        return $f(static::class);
    }
}
abstract class Shape implements HasArea {
    use Named;
    public static int $made = 0;
    public function __construct(protected array $dims = ['w' => 1.5, 'h' => -0.0, 7 => [true, null]]) { self::$made++; }
    abstract public function area(): float;
    public function scaled(float $k = M_PI / LIMIT): static {
        $c = clone $this;
        array_walk($c->dims, function (&$v) use ($k) { if (is_float($v)) { $v *= $k; } });
        return $c;
    }
}
final class Rect extends Shape {
    public function area(): float { return $this->dims['w'] * $this->dims['h']; }
    public function kind(int|string $k): string {
        switch ($k) { case 1: case 2: return 'small'; case 3: return 'mid'; case 10: return 'big'; default: return 'other'; }
    }
    public function label(string $s): string {
        return match ($s) { 'a', 'b' => 'ab', 'c' => 'c', default => throw new \ValueError($s) };
    }
}
enum Suit: string { case H = 'h'; case S = 's'; public function color(): string { return match ($this) { self::H => 'red', self::S => 'black' }; } }

function offsets(\ArrayAccess $a) { return [$a["1"], $a["01"], isset($a["2"])]; }
function gen(iterable $xs) { try { foreach ($xs as $k => $v) { yield $k => "{$v}!"; } } finally { echo "done"; } }
$r = new Rect(['w' => 2.0, 'h' => 3.0]);
echo $r->area(), $r->scaled()->area(), $r->name(), $r->kind(3), $r->label('a'), Suit::from('h')->color();
echo implode(',', iterator_to_array(gen(['x' => 1, 'y' => 2])));
static function () { static $n = [1, 2]; return $n; };
"#;

#[test]
fn special_shapes_round_trip_and_run() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("shapes.php");
    std::fs::write(&file, SHAPES).unwrap();
    let file = file.canonicalize().unwrap();
    for level in ["0", "0x7FFEBFFF"] {
        recordings_agree(std::slice::from_ref(&file), level);
    }
    // And it runs the same.
    let run = |mode: &str| {
        php()
            .args([
                "-n",
                "-d",
                "zend_extension=opcache",
                "-d",
                "opcache.enable_cli=1",
            ])
            .args(["-d", "opcache.optimization_level=0"])
            .arg("-d")
            .arg(format!("extension={}", extension().display()))
            .arg("-d")
            .arg(format!("zopt.mode={mode}"))
            .args(["-d", "zopt.verify=1"])
            .arg(&file)
            .output()
            .unwrap()
    };
    let plain = run("off");
    let round = run("roundtrip");
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stdout)
    );
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout),
        String::from_utf8_lossy(&round.stdout)
    );
    assert!(String::from_utf8_lossy(&round.stdout).contains("midab"));
}

/// Optimize mode writes back what zopt's optimizer made of the script (at the default level,
/// `zopt.verify=1` checking each write-back), and phpinfo lists the passes.
#[test]
fn optimize_mode_writes_back_the_optimized_script() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("shapes.php");
    std::fs::write(&file, SHAPES).unwrap();
    let file = file.canonicalize().unwrap();
    let round = tmp.path().join("round");
    let opt = tmp.path().join("opt");
    compile(
        std::slice::from_ref(&file),
        "roundtrip",
        "0",
        "0",
        Some(&round),
    );
    let out = compile(
        std::slice::from_ref(&file),
        "optimize",
        "0",
        "0",
        Some(&opt),
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("zopt:")
            && !String::from_utf8_lossy(&out.stderr).contains("zopt:"),
        "optimize mode warned: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (compiled, optimized) = (load(&round, &file), load(&opt, &file));
    assert!(compiled != optimized, "optimize mode changed nothing");
    let ops = |s: &zend_ir::Script| s.op_arrays().iter().map(|o| o.opcodes.len()).sum::<usize>();
    assert!(ops(&optimized) <= ops(&compiled));
    let out = php()
        .args(["-n", "-d"])
        .arg(format!("extension={}", extension().display()))
        .args([
            "-d",
            "zopt.mode=optimize",
            "-d",
            "zopt.optimization_level=0x20",
            "-i",
        ])
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&out.stdout);
    assert!(info.contains("zopt optimizer passes => pass1"), "{info}");
    assert!(
        info.contains("zopt.optimization_level => 0x20 => 0x20"),
        "{info}"
    );
    assert!(info.contains("Mode => optimize"), "{info}");
}

/// Witness 2 over real code: every file of a corpus (default /usr/share/php, as Debian
/// installs php-parser, twig, composer, phpunit, symfony...) round-trips with
/// `zopt.verify=1` and no warning, at levels 0 and 0x7FFEBFFF. Ignored by default:
/// `cargo test -p zopt-php --test roundtrip -- --ignored` (`ZOPT_CORPUS` names another dir).
#[test]
#[ignore = "compiles a whole corpus; run with --ignored"]
fn round_trips_the_corpus() {
    let dir = std::env::var("ZOPT_CORPUS").unwrap_or_else(|_| "/usr/share/php".to_string());
    let mut files = Vec::new();
    let mut dirs = vec![PathBuf::from(&dir)];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "php") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no .php files under {dir}");
    let failures = std::sync::Mutex::new(Vec::new());
    for level in ["0", "0x7FFEBFFF"] {
        par_each(&files, |file| {
            let out = php()
                .arg("-n")
                .args(["-d", "zend_extension=opcache", "-d", "opcache.enable_cli=1"])
                .args([
                    "-d",
                    "opcache.file_update_protection=0",
                    "-d",
                    "memory_limit=1G",
                ])
                .arg("-d")
                .arg(format!("opcache.optimization_level={level}"))
                .arg("-d")
                .arg(format!("extension={}", extension().display()))
                .args(["-d", "zopt.mode=roundtrip", "-d", "zopt.verify=1"])
                .args(["-r", "opcache_compile_file($argv[1]);", "--"])
                .arg(file)
                .output()
                .expect("running php");
            let stdout = String::from_utf8_lossy(&out.stdout);
            if out.status.signal().is_some() || stdout.contains("zopt") {
                failures.lock().unwrap().push(format!(
                    "{} at {level}: {:?} {stdout}",
                    file.display(),
                    out.status
                ));
            }
        });
    }
    let failures = failures.into_inner().unwrap();
    eprintln!("{} files, {} failures", files.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
