//! OPcache's preloading under zopt's optimizer: the script of preloaded classes
//! (`$PRELOAD$`) is the one script an optimizer pass gets with its classes linked, members
//! inherited from internal classes (an exception's `getMessage`, a constructor of
//! `ArrayIterator`, the `cases`/`from`/`tryFrom` of an enum) and copies of trait methods
//! (aliased, inherited, from a trait using a trait) included. zopt records it, optimizes it
//! as PHP's optimizer does (its "after optimizer" dump, byte for byte), and PHP runs the
//! result as it runs its own.
//!
//! Needs `php` 8.2 with OPcache on PATH: fails, never skips, without it.

mod common;

use std::path::Path;
use std::process::Output;

use common::{extension, php};

const LIB: &str = r#"<?php
class MyEx extends RuntimeException {
    public function describe(): string {
        $m = $this->getMessage();
        $x = $m . "!" . $this->getCode();
        return strlen($x) > 3 ? $x . $this->getLine() : "short";
    }
    public static function make(string $s): static { return new static($s, 3); }
}
enum Suit: string {
    case H = 'h';
    case S = 's';
    public static function all(): int { $n = count(self::cases()); return $n + 1; }
    public function up(): string {
        $t = self::tryFrom('h');
        return strtoupper($this->value) . ($t === null ? 'n' : 'y');
    }
}
class Day extends DateTimeImmutable {
    public static function year(string $f): string {
        $d = self::createFromFormat('Y-m-d', $f);
        return $d === false ? 'bad' : $d->format('Y');
    }
}
class Sum extends ArrayIterator {
    public function total(): int {
        $s = 0;
        foreach ($this as $v) { $s += $v; }
        return $s + $this->count();
    }
}
class Shape {
    const SIDES = 0;
    public function __construct(protected float $size) {}
    public function area(): float { return 0.0; }
    public function describe(): string {
        return static::class . ' ' . static::SIDES . ' ' . round($this->area(), 2);
    }
}
class Square extends Shape {
    const SIDES = 4;
    public function area(): float { return $this->size ** 2; }
}
trait Greets {
    public function greet(string $who): string { return "hi $who"; }
    private function secret(int &$n): int { return $n += 7; }
}
trait Polite {
    use Greets;
    public function thank(string $who): string { return 'thanks ' . $this->greet($who); }
}
class Greeter {
    use Polite { greet as protected hello; }
    public function both(): string {
        $n = 1;
        return $this->greet('a') . $this->hello('b') . $this->secret($n) . $n . $this->thank('c');
    }
}
class LoudGreeter extends Greeter {
    public function loud(): string { return strtoupper($this->greet('d') . $this->both()); }
}
function use_all(): string {
    $e = MyEx::make("boom");
    $it = new Sum([1, 2, 3]);
    return $e->describe() . Suit::all() . Suit::H->up() . Day::year('2024-01-02')
        . $it->total() . (new Square(3))->describe() . (new LoudGreeter())->loud();
}
"#;

const MAIN: &str = r#"<?php
if (!function_exists('use_all')) {
    require __DIR__ . '/lib.php';
}
echo use_all(), "\n";
"#;

/// `php -n` with OPcache on and `main.php`'s directory preloaded, plus `settings`.
fn run(dir: &Path, settings: &[&str]) -> Output {
    let mut cmd = php();
    cmd.arg("-n")
        .args(["-d", "zend_extension=opcache", "-d", "opcache.enable_cli=1"])
        .args(["-d", "opcache.preload_user=root"])
        .arg("-d")
        .arg(format!(
            "opcache.preload={}",
            dir.join("preload.php").display()
        ));
    for s in settings {
        cmd.args(["-d", s]);
    }
    // `$PRELOAD$` has no directory: its recording goes under the working directory's.
    cmd.current_dir(dir)
        .arg(dir.join("main.php"))
        .output()
        .unwrap()
}

/// The op_array listings of a dump, each from its name line to the blank line after it.
fn listings(text: &str) -> Vec<String> {
    text.split("\n\n")
        .map(|b| b.trim_matches('\n').to_string())
        .filter(|b| !b.is_empty())
        .collect()
}

#[test]
fn preloaded_classes_are_optimized_as_php_optimizes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    std::fs::write(dir.join("lib.php"), LIB).unwrap();
    std::fs::write(dir.join("main.php"), MAIN).unwrap();
    std::fs::write(
        dir.join("preload.php"),
        "<?php\nopcache_compile_file(__DIR__ . '/lib.php');\n",
    )
    .unwrap();
    let ext = format!("extension={}", extension().display());

    let plain = php().arg("-n").arg(dir.join("main.php")).output().unwrap();
    let expected = String::from_utf8_lossy(&plain.stdout).into_owned();
    assert!(
        plain.status.success()
            && expected.starts_with("boom!")
            && expected.ends_with("Square 4 9HI DHI AHI B88THANKS HI C\n"),
        "PHP without OPcache: {expected}{}",
        String::from_utf8_lossy(&plain.stderr)
    );

    // PHP's optimizer on the preloaded script; its dump goes to stderr.
    let opcache = run(
        &dir,
        &[
            "opcache.optimization_level=0x7FFEBFFF",
            "opcache.opt_debug_level=0x20000",
        ],
    );
    assert_eq!(String::from_utf8_lossy(&opcache.stdout), expected);
    let php_dump = listings(&String::from_utf8_lossy(&opcache.stderr));

    // zopt's optimizer in PHP's place: the same output, nothing refused.
    let optimized = run(
        &dir,
        &[
            &ext,
            "opcache.optimization_level=0",
            "zopt.mode=optimize",
            "zopt.verify=1",
        ],
    );
    let stdout = String::from_utf8_lossy(&optimized.stdout);
    let stderr = String::from_utf8_lossy(&optimized.stderr);
    assert!(
        optimized.status.success() && !stdout.contains("zopt:") && !stderr.contains("zopt:"),
        "{stdout}{stderr}"
    );
    assert_eq!(stdout, expected);

    // The preloaded script as recorded, then optimized by zopt outside PHP: every listing
    // is one of PHP's.
    let rec = dir.join("rec");
    let recorded = run(
        &dir,
        &[
            &ext,
            "opcache.optimization_level=0",
            "zopt.mode=record",
            &format!("zopt.record_dir={}", rec.display()),
        ],
    );
    assert_eq!(String::from_utf8_lossy(&recorded.stdout), expected);
    let zop = rec
        .join(dir.strip_prefix("/").unwrap())
        .join("$PRELOAD$.zop");
    let mut script = zopt::corpus::load_recording(&zop).unwrap();
    let linked: Vec<_> = script
        .class_table
        .iter()
        .flat_map(|(_, ce)| ce.method_stubs.iter().map(|m| m.scope.to_string()))
        .collect();
    // Internal methods, then trait-method copies (Greeter's own, inherited by LoudGreeter;
    // Polite's from Greets).
    let stubs = [
        "Exception",
        "Suit",
        "DateTimeImmutable",
        "ArrayIterator",
        "Greeter",
        "Polite",
    ];
    for scope in stubs {
        assert!(
            linked.iter().any(|s| s == scope),
            "no method stub of {scope}: {linked:?}"
        );
    }
    zopt::opt::optimize(&mut script, 0x7FFE_BFFF, false, Default::default());
    let mut ours = Vec::new();
    zopt::opt::print(&mut ours, &script, 0x7FFE_BFFF, None).unwrap();
    let ours = listings(&String::from_utf8_lossy(&ours));
    assert!(ours.len() >= 12, "{ours:?}");
    for listing in &ours {
        assert!(
            php_dump.contains(listing),
            "not in PHP's dump:\n{listing}\n\nPHP's:\n{}",
            php_dump.join("\n\n")
        );
    }
}
