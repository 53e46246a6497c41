//! Run-time images in the file cache (zopt-php's file_image): without shared memory, the
//! second run of a script stores its run-time image beside its entry, later runs are
//! served from it (relocated, not rebuilt), loose or packed; an image that is truncated,
//! damaged, of another format version, made by another PHP build or with a relocation
//! outside itself is refused with its reason on stderr, the entry is served instead (same
//! output, nothing compiled) and a good image replaces it. The expected outputs are PHP's
//! own (`php -n` without zopt). PHP and the extension are required.

mod common;

use common::extension;

use std::path::{Path, PathBuf};
use std::process::Command;

use zend_cache::{entry, file_cache, CacheKey};

#[derive(Debug, PartialEq, Eq)]
struct Run {
    stdout: String,
    stderr: String,
    status: Option<i32>,
}

fn php(script: &Path, settings: &[String]) -> Run {
    let mut cmd = Command::new(std::env::var_os("ZOPT_PHP").unwrap_or("php".into()));
    cmd.arg("-n");
    for s in settings {
        cmd.args(["-d", s]);
    }
    let out = cmd
        .arg(script)
        .current_dir(script.parent().unwrap())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status.code(),
    }
}

fn cached(script: &Path, cache_dir: &Path, stats: &Path) -> Run {
    php(
        script,
        &[
            format!("extension={}", extension().display()),
            format!("zopt.cache_dir={}", cache_dir.display()),
            format!("zopt.cache_stats={}", stats.display()),
        ],
    )
}

/// The counters `k` of the last line a run appended to `stats`.
fn counters(stats: &Path, keys: &[&str]) -> Vec<u64> {
    let text = std::fs::read_to_string(stats).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    keys.iter()
        .map(|k| {
            v[*k]
                .as_u64()
                .unwrap_or_else(|| panic!("{k} missing in {text}"))
        })
        .collect()
}

fn images(cache_dir: &Path) -> Vec<PathBuf> {
    let images: Vec<PathBuf> = file_cache::scan(cache_dir)
        .unwrap()
        .images
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert!(images
        .iter()
        .all(|p| p.extension().is_some_and(|x| x == file_cache::IMAGE_EXT)));
    images
}

/// The image file `bytes` with its body changed by `change`, framed and sealed again (a
/// consistent file whose body is wrong).
fn rebody(bytes: &[u8], change: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let header = entry::parse_image_header(bytes).unwrap();
    let mut body = bytes[header.body_offset..].to_vec();
    change(&mut body);
    let key = CacheKey::new(header.path.to_vec(), header.validation);
    entry::encode_image(&body, &header.system_id, &key, header.stored_at).unwrap()
}

const LIB: &str = r#"<?php
namespace App;

interface Shape { function area(): float; }

abstract class Base implements Shape {
    const K = 2;
    public static $count = 0;
    protected array $tags = ['a', 'b'];
    public function __construct(public float $x = 1.5) { static::$count++; }
    function describe(): string {
        static $calls = 0;
        $calls++;
        return static::class . " " . $this->area() . " $calls " . implode("", $this->tags);
    }
}

final class Sq extends Base {
    function area(): float { return $this->x * $this->x * self::K; }
}

enum Suit: string { case H = 'h'; case S = 's'; }

function make(float $x): Shape { return new Sq($x); }
"#;

const LIB2: &str = r#"<?php
function lib2(int ...$xs) {
    $f = function ($y) use ($xs) { return $y + count($xs); };
    return __FUNCTION__ . ':' . __LINE__ . ':' . $f(40);
}
"#;

const MAIN: &str = r#"<?php
require_once __DIR__ . '/lib.php';
require __DIR__ . '/lib2.php';
$s = App\make(3);
echo $s->describe(), "\n", $s->describe(), "\n";
echo App\Base::$count, " ", App\Suit::from('s')->name, "\n";
$f = fn($y) => $y * 2;
echo implode(",", array_map($f, [1, 2, 3])), "\n";
echo lib2(1, 2), "\n";
"#;

#[test]
fn run_time_images_are_served_and_bad_ones_refused() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app");
    std::fs::create_dir(&app).unwrap();
    let main = app.join("main.php");
    std::fs::write(&main, MAIN).unwrap();
    std::fs::write(app.join("lib.php"), LIB).unwrap();
    std::fs::write(app.join("lib2.php"), LIB2).unwrap();
    let reference = php(&main, &[]);
    assert_eq!(reference.status, Some(0), "{reference:?}");
    assert!(
        reference.stdout.contains("App\\Sq 18 2 ab"),
        "{reference:?}"
    );

    let cache_dir = dir.path().join("cache");
    let stats = |n: &str| dir.path().join(format!("{n}.json"));
    const KEYS: [&str; 5] = [
        "compiles",
        "served",
        "image_hits",
        "image_stores",
        "image_rejects",
    ];

    // Compiled and stored; then served from the entries, which stores the images; then
    // served from the images.
    let first = cached(&main, &cache_dir, &stats("1"));
    assert_eq!(first.stdout, reference.stdout);
    assert_eq!(counters(&stats("1"), &KEYS), [3, 0, 0, 0, 0]);
    let second = cached(&main, &cache_dir, &stats("2"));
    assert_eq!(second.stdout, reference.stdout);
    assert_eq!(counters(&stats("2"), &KEYS), [0, 3, 0, 3, 0]);
    assert_eq!(images(&cache_dir).len(), 3);
    let third = cached(&main, &cache_dir, &stats("3"));
    assert_eq!(third.stdout, reference.stdout, "{third:?}");
    assert_eq!(third.stderr, "");
    assert_eq!(counters(&stats("3"), &KEYS), [0, 3, 3, 0, 0]);

    let good: Vec<(PathBuf, Vec<u8>)> = images(&cache_dir)
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    type Fault = (&'static str, fn(&[u8]) -> Vec<u8>, &'static str);
    let faults: [Fault; 5] = [
        ("truncated", |b| b[..b.len() / 2].to_vec(), "truncated"),
        (
            "damaged",
            |b| {
                let mut b = b.to_vec();
                let mid = b.len() / 2;
                b[mid] ^= 0x5a;
                b
            },
            "checksum mismatch",
        ),
        (
            "foreign format",
            |b| rebody(b, |body| body[0..4].copy_from_slice(&99u32.to_le_bytes())),
            "image format version 99",
        ),
        (
            "another PHP build",
            |b| rebody(b, |body| body[8] ^= 1),
            "made by another PHP build",
        ),
        (
            "relocation outside the image",
            |b| {
                rebody(b, |body| {
                    // The first internal relocation names the image's last bytes and beyond.
                    let len = u64::from_le_bytes(body[24..32].try_into().unwrap()) as usize;
                    let at = 56 + len;
                    body[at..at + 4].copy_from_slice(&(len as u32).to_le_bytes());
                })
            },
            "a relocation outside the image",
        ),
    ];
    for (i, (name, fault, reason)) in faults.iter().enumerate() {
        for (path, bytes) in &good {
            std::fs::write(path, fault(bytes)).unwrap();
        }
        let s = stats(&format!("fault{i}"));
        let run = cached(&main, &cache_dir, &s);
        assert_eq!(run.stdout, reference.stdout, "{name}: {run:?}");
        assert_eq!(run.status, Some(0), "{name}: {run:?}");
        assert_eq!(
            run.stderr.matches(reason).count(),
            3,
            "{name}: each image refused for its reason: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("serving its entry"),
            "{name}: {}",
            run.stderr
        );
        // Served from the entries (nothing compiled), the images stored again.
        assert_eq!(counters(&s, &KEYS), [0, 3, 0, 3, 3], "{name}");
        let s = stats(&format!("healed{i}"));
        let run = cached(&main, &cache_dir, &s);
        assert_eq!(run.stdout, reference.stdout, "{name}: {run:?}");
        assert_eq!(run.stderr, "", "{name}");
        assert_eq!(counters(&s, &KEYS), [0, 3, 3, 0, 0], "{name}");
    }

    // A changed source: its image is stale (not an error), the file is compiled again and
    // the next runs store and serve its new image.
    std::fs::write(app.join("lib2.php"), LIB2.replace("40", "41")).unwrap();
    let expected = reference.stdout.replace(":42", ":43");
    let run = cached(&main, &cache_dir, &stats("changed"));
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str()),
        (expected.as_str(), "")
    );
    assert_eq!(counters(&stats("changed"), &KEYS), [1, 2, 2, 0, 0]);
    cached(&main, &cache_dir, &stats("changed2"));
    let run = cached(&main, &cache_dir, &stats("changed3"));
    assert_eq!(run.stdout, expected);
    assert_eq!(counters(&stats("changed3"), &KEYS), [0, 3, 3, 0, 0]);

    // Packed with the entries (the loose files pruned): served from the pack.
    let report = file_cache::pack(&cache_dir, true).unwrap();
    assert_eq!(report.systems.iter().map(|s| s.entries).sum::<u64>(), 6);
    assert!(images(&cache_dir).is_empty());
    let run = cached(&main, &cache_dir, &stats("packed"));
    assert_eq!(run.stdout, expected);
    assert_eq!(counters(&stats("packed"), &KEYS), [0, 3, 3, 0, 0]);
}

/// `zopt cache verify` checks loose run-time images as it checks entries: a damaged file
/// (checksum), and files whose framing is intact but whose body the extension would refuse
/// (a foreign body version, a relocation outside the image), are each named with what is
/// wrong, and the command fails.
#[test]
fn cache_verify_names_bad_run_time_images() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app");
    std::fs::create_dir(&app).unwrap();
    let main = app.join("main.php");
    std::fs::write(&main, MAIN).unwrap();
    std::fs::write(app.join("lib.php"), LIB).unwrap();
    std::fs::write(app.join("lib2.php"), LIB2).unwrap();
    let cache_dir = dir.path().join("cache");
    let stats = dir.path().join("stats.json");
    // Compiled and stored, then served from the entries, which stores the images.
    for _ in 0..2 {
        let run = cached(&main, &cache_dir, &stats);
        assert_eq!(run.status, Some(0), "{run:?}");
    }
    let mut paths = images(&cache_dir);
    paths.sort();
    assert_eq!(paths.len(), 3);

    let verify = || {
        let out = Command::new(env!("CARGO_BIN_EXE_zopt"))
            .args(["cache", "verify", "--check-sources", "--cache-dir"])
            .arg(&cache_dir)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (ok, text) = verify();
    assert!(
        ok && text.contains("3 entries and 3 run-time images: 6 good, 0 bad, 0 stale"),
        "{text}"
    );

    let read = |p: &Path| std::fs::read(p).unwrap();
    let mut damaged = read(&paths[0]);
    let mid = damaged.len() / 2;
    damaged[mid] ^= 0x5a;
    std::fs::write(&paths[0], damaged).unwrap();
    let foreign = rebody(&read(&paths[1]), |body| {
        body[0..4].copy_from_slice(&99u32.to_le_bytes())
    });
    std::fs::write(&paths[1], foreign).unwrap();
    let outside = rebody(&read(&paths[2]), |body| {
        // The first internal relocation names the image's last bytes and beyond.
        let len = u64::from_le_bytes(body[24..32].try_into().unwrap()) as usize;
        let at = 56 + len;
        body[at..at + 4].copy_from_slice(&(len as u32).to_le_bytes());
    });
    std::fs::write(&paths[2], outside).unwrap();

    let (ok, text) = verify();
    assert!(!ok, "{text}");
    let named = |p: &Path, what: &str| {
        let line = format!("bad run-time image {}: {what}", p.display());
        assert!(text.contains(&line), "no line {line:?} in:\n{text}");
    };
    named(&paths[0], "checksum (checksum mismatch");
    named(
        &paths[1],
        &format!(
            "invalid_body (invalid run-time image: image format version 99, this zopt reads {})",
            zend_cache::image_body::BODY_VERSION
        ),
    );
    named(
        &paths[2],
        "invalid_body (invalid run-time image: a relocation outside the image)",
    );
    assert!(
        text.contains("3 entries and 3 run-time images: 3 good, 3 bad, 0 stale"),
        "{text}"
    );
}

/// Every class of php-parser (about 270 scripts) loads from run-time images, loose and
/// packed, exactly as PHP compiles it: the reflection digest of every class is identical.
#[test]
fn a_library_loads_identically_from_run_time_images() {
    let lib = Path::new("/usr/share/php/PhpParser");
    let dir = tempfile::tempdir().unwrap();
    let driver = zopt::bench::write_driver(dir.path()).unwrap();
    // What the extension said, with why a script got no run-time image
    // (`ZOPT_DEBUG_RUN_TIME_FORM`): shown when a counter is not what is expected.
    let mut said = String::new();
    let mut digest = |settings: &[String]| {
        let mut cmd = Command::new(std::env::var_os("ZOPT_PHP").unwrap_or("php".into()));
        cmd.args(["-n", "-d", "memory_limit=1G"]);
        for s in settings {
            cmd.args(["-d", s]);
        }
        cmd.env("ZOPT_DEBUG_RUN_TIME_FORM", "1");
        let out = cmd.arg(&driver).arg("digest").arg(lib).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        said.push_str(&String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let reference = digest(&[]);
    assert!(reference.lines().count() > 200);
    let cache_dir = dir.path().join("cache");
    let stats = dir.path().join("stats.json");
    let settings = vec![
        format!("extension={}", extension().display()),
        format!("zopt.cache_dir={}", cache_dir.display()),
        format!("zopt.cache_stats={}", stats.display()),
    ];
    for _ in 0..2 {
        assert_eq!(digest(&settings), reference);
    }
    let keys = ["compiles", "served", "image_hits", "image_rejects"];
    let served = counters(&stats, &keys)[1];
    assert!(served > 200);
    assert_eq!(digest(&settings), reference);
    assert_eq!(
        counters(&stats, &keys),
        [0, served, served, 0],
        "the extension said:\n{said}"
    );
    file_cache::pack(&cache_dir, true).unwrap();
    assert_eq!(digest(&settings), reference);
    assert_eq!(
        counters(&stats, &keys),
        [0, served, served, 0],
        "the extension said:\n{said}"
    );
}

/// Writes gen.php, whose two strings end in 6 bytes that read, with the NUL and padding
/// after them, as an address mapped in this process (one in the PHP binary, one in a file
/// mapped beside it), whose two integers are those addresses, and whose array has the
/// first as its key. Then includes it twice: compiled and stored, then served from its
/// entry, which makes its run-time image in this process.
const ADDRESSES: &str = r#"<?php
$bin = realpath(PHP_BINARY);
$in_php = $in_other = null;
foreach (file('/proc/self/maps', FILE_IGNORE_NEW_LINES) as $line) {
    $f = preg_split('/\s+/', trim($line));
    $name = $f[5] ?? '';
    $start = hexdec(explode('-', $f[0])[0]);
    if ($name === $bin) {
        $in_php ??= $start + 0x100;
    } elseif (str_starts_with($name, '/')) {
        $in_other ??= $start + 0x100;
    }
}
$text = fn(string $head, int $at) => $head . substr(pack('P', $at), 0, 6);
$literal = fn(string $s) => '"' . implode('', array_map(
    fn($c) => sprintf('\x%02x', ord($c)), str_split($s))) . '"';
file_put_contents(__DIR__ . '/gen.php', '<?php return [' . $literal($text('zopt-php', $in_php))
    . ', ' . $literal($text('zopt-lib', $in_other)) . ", $in_php, $in_other, [$in_php => 1]];\n");
foreach ([1, 2] as $_) {
    echo show(include __DIR__ . '/gen.php'), "\n";
}
"#;

/// What make.php and load.php print of gen.php's values (an element appended to its array
/// takes the key after the largest).
const SHOW: &str = r#"
function show(array $r): string {
    $r[4][] = 'next';
    return bin2hex(serialize($r));
}
"#;

/// A script with every kind of structure a run-time image holds: attributes with
/// arguments, traits with `insteadof` and aliases, union, intersection and nullable types,
/// typed, promoted and readonly properties, constants whose values are ASTs, arrays with
/// integer keys, a backed enum, static variables, closures, a generator and
/// `__halt_compiler`.
const KINDS: &str = r#"<?php
namespace Kinds;

#[\Attribute(\Attribute::TARGET_ALL | \Attribute::IS_REPEATABLE)]
final class Tag {
    public function __construct(public string $name, public array $with = []) {}
}

interface Named { const PREFIX = 'n:'; function name(): string; }
interface Sized { function size(): int; }

trait Greets {
    public function hello(): string { return 'hello ' . $this->name(); }
    public static function make(): static { return new static(); }
}
trait Waves {
    public function hello(): string { return 'wave'; }
    protected function wave(int $n = 2): string { return str_repeat('~', $n); }
}

#[Tag('box', with: ['x' => 1, 2 => [3.5, null]])]
#[Tag(name: 'again')]
class Box implements Named, Sized, \Countable {
    use Greets, Waves {
        Greets::hello insteadof Waves;
        Waves::hello as protected waveHello;
        wave as public;
    }
    public const LIMITS = [1 => 'one', 'k' => self::PREFIX . 'x', 100000 => PHP_INT_MAX];
    final public const FLAGS = \E_ALL & ~\E_NOTICE;
    #[Tag('prop')]
    public int|string|null $id = 7;
    public (Named&Sized)|null $peer = null;
    protected static array $seen = [];
    private ?\Closure $f = null;
    public function __construct(public readonly float $w = 2.5, int ...$rest) {
        static $made = 0;
        $made++;
        self::$seen[] = $made;
        $this->f = fn(int $x): int => $x + count($rest) + $made;
    }
    public function name(): string { return static::PREFIX . 'box'; }
    public function size(): int { return ($this->f)(40); }
    public function count(): int { return count(self::$seen); }
    public function both(): string { return $this->waveHello() . $this->wave(3); }
}

enum Suit: string implements Named {
    case Hearts = 'h';
    case Spades = 's';
    const Wild = self::Spades;
    public function name(): string { return self::PREFIX . $this->value; }
}

function describe(Named&Sized $b, int|float $scale = 1.0 * 2, string ...$tail): string {
    $r = new \ReflectionClass($b);
    $attrs = array_map(fn($a) => $a->newInstance()->name, $r->getAttributes());
    return implode(',', [$b->name(), $b->size() * $scale, count($b), implode('|', $attrs),
        json_encode(Box::LIMITS), Box::FLAGS, implode('', $tail)]);
}

$b = Box::make();
echo describe($b, 2, 'a', 'b'), "\n";
echo $b->hello(), ' ', $b->both(), ' ', Suit::Wild->name(), ' ', Suit::from('h')->name, "\n";
$g = function () { yield 1 => 'a'; yield 2 => 'b'; };
foreach ($g() as $k => $v) { echo "$k=$v "; }
echo __COMPILER_HALT_OFFSET__ > 0 ? "halt\n" : "no halt\n";
__halt_compiler(); trailing data that is not PHP
"#;

/// Every word of a run-time image is a pointer or data the persist marked as such (a line
/// number, a count, flags, a value): under `ZOPT_DEBUG_RUN_TIME_FORM` an image holding any
/// other word is refused with where it lies, so a number field the persist forgot to mark
/// fails here, rather than be taken for a pointer on the day ASLR maps something there.
#[test]
fn every_word_of_a_run_time_image_is_a_pointer_or_marked_data() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("kinds.php");
    std::fs::write(&script, KINDS).unwrap();
    let expected = php(&script, &[]);
    assert_eq!(expected.status, Some(0), "{expected:?}");
    assert!(expected.stdout.ends_with("halt\n"), "{expected:?}");
    let cache_dir = dir.path().join("cache");
    let stats = dir.path().join("stats.json");
    let settings = [
        format!("extension={}", extension().display()),
        format!("zopt.cache_dir={}", cache_dir.display()),
        format!("zopt.cache_stats={}", stats.display()),
    ];
    let strict = |settings: &[String]| {
        let mut cmd = Command::new(std::env::var_os("ZOPT_PHP").unwrap_or("php".into()));
        cmd.arg("-n");
        for s in settings {
            cmd.args(["-d", s]);
        }
        let out = cmd
            .env("ZOPT_DEBUG_RUN_TIME_FORM", "1")
            .arg(&script)
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Compiled and stored; served from its entry, which makes the image; served from it.
    for _ in 0..3 {
        let (stdout, stderr) = strict(&settings);
        assert_eq!(stdout, expected.stdout, "{stderr}");
        assert!(!stderr.contains("run-time image"), "{stderr}");
    }
    assert_eq!(
        counters(&stats, &["compiles", "image_hits", "image_rejects"]),
        [0, 1, 0]
    );
}

/// A string whose last word, an integer or an integer key that reads as an address in the
/// PHP binary or in another mapping of the process making the image is data, not a
/// pointer: the image is made, and the next process (mapped elsewhere) is served the same
/// values from it.
#[test]
fn strings_that_read_as_addresses_stay_text_in_run_time_images() {
    let dir = tempfile::tempdir().unwrap();
    let make = dir.path().join("make.php");
    let load = dir.path().join("load.php");
    std::fs::write(&make, format!("{ADDRESSES}{SHOW}")).unwrap();
    std::fs::write(
        &load,
        format!("<?php echo show(include __DIR__ . '/gen.php'), \"\\n\";\n{SHOW}"),
    )
    .unwrap();
    let cache_dir = dir.path().join("cache");
    let stats = dir.path().join("stats.json");
    let made = cached(&make, &cache_dir, &stats);
    assert_eq!(made.status, Some(0), "{made:?}");
    let lines: Vec<&str> = made.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{made:?}");
    assert_eq!(lines[0], lines[1], "{made:?}");
    assert_eq!(
        images(&cache_dir).len(),
        1,
        "gen.php's image was not stored"
    );
    let loaded = cached(&load, &cache_dir, &stats);
    assert_eq!(loaded.stdout, format!("{}\n", lines[0]), "{loaded:?}");
    // And what PHP itself prints of gen.php, without zopt.
    assert_eq!(loaded.stdout, php(&load, &[]).stdout, "{loaded:?}");
    assert_eq!(
        counters(&stats, &["image_hits", "image_rejects"]),
        [1, 0],
        "gen.php was not served from its image: {loaded:?}"
    );
}
