//! Loads the built extension into the real PHP 8.2 in record mode and checks the recordings
//! against PHP's own op_array dumps (`opcache.opt_debug_level`) of the same run.
//!
//! Needs `php` (8.2, with OPcache) on PATH; the tests fail, not skip, without it. The
//! extension is `$ZOPT_PHP_EXTENSION`, or `libzopt_php.so` of this build's target directory,
//! brought up to date with `cargo build -p zopt-php` first.

mod common;

use common::{check_against_dump, extension, parse_dump, php, recording, DumpBlock, Run};
use zend_ir::{Literal, Script};

/// Records `source` as `.zop` text and as binary in one run, checks both decode to the same
/// script, and returns it with PHP's dump of the same run.
fn record(source: &str, optimization_level: &str, debug_level: &str) -> (Script, Vec<DumpBlock>) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("t.php");
    std::fs::write(&file, source).unwrap();
    let rec = tmp.path().join("rec");
    let out = Run {
        format: "both",
        optimization_level,
        debug_level,
        ..Run::new(&file, &rec)
    }
    .output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "php failed: {stdout}\n{stderr}");
    assert!(!stdout.contains("zopt"), "zopt warned: {stdout}");
    let err = recording(&rec, &file, ".zop.err");
    assert!(
        !err.exists(),
        "conversion failed: {}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    let read = |ext: &str| {
        let path = recording(&rec, &file, ext);
        std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "no recording at {}: {e}\n{stdout}\n{stderr}",
                path.display()
            )
        })
    };
    let text = String::from_utf8(read(".zop")).expect(".zop text is UTF-8");
    let script = zend_ir::zop::parse(&text).unwrap_or_else(|e| panic!("parsing the .zop: {e}"));
    let binary = zend_ir::zop::from_binary(&read(".zopb")).expect("decoding the .zopb");
    assert!(script == binary, "the .zop and .zopb recordings differ");
    assert_eq!(
        script.filename.as_bytes(),
        file.canonicalize().unwrap().as_os_str().as_encoded_bytes()
    );
    (script, parse_dump(&stderr))
}

const CONTROL_FLOW: &str = r#"<?php
function sw_long($x) {
    switch ($x) {
        case 1: return 'one'; case 2: return 'two'; case 3: return 'three';
        case 4: return 'four'; case 5: return 'five'; case 6: return 'six';
        default: return 'many';
    }
}
function sw_string($x) {
    switch ($x) {
        case 'a': $r = 1; break; case 'b': $r = 2; break; case 'c': $r = 3; break;
        case 'd': $r = 4; break; case 'e': $r = 5; break; case 'f': $r = 6; break;
        default: $r = 0;
    }
    return $r;
}
function m($x) { return match($x) { 'a' => 1, 'b' => 2, 'c', 'd' => 3, 10 => 4, default => 5 }; }
function loops(array $a): int {
    $s = 0;
    for ($i = 0; $i < 10; $i++) { if ($i % 2) continue; $s += $i; }
    while ($s > 100) { $s--; }
    do { $s++; } while ($s < 5);
    foreach ($a as $k => &$v) { $v = $k . "x"; }
    foreach ($a as $v) { $s += strlen($v ?? '') ; }
    return $s <=> 3 ?: 7;
}
function exc() {
    try {
        try { throw new RuntimeException("a"); }
        catch (LogicException | RuntimeException $e) { echo $e->getMessage(); }
        finally { echo "inner"; }
    } catch (Exception) {
        return 1;
    } finally {
        echo "outer";
    }
    return @file_get_contents("/nonexistent") ?? null;
}
function gen() { $x = yield 1; yield from [2, 3]; return $x?->y; }
$f = function ($a) use (&$f) { static $n = 0; return fn($b) => $a + $b + $n; };
echo "a{$f(1)(2)}b" . sw_long(3) . sw_string('b') . m(10) . loops([1, 2]) . exc();
"#;

const CLASSES: &str = r#"<?php
namespace App\Model;

use Attribute;

#[Attribute(Attribute::TARGET_ALL)]
final class Tag { public function __construct(public string $name = "t", public array $opts = []) {} }

interface HasId { const PREFIX = "id_"; public function id(): int|string; }
trait Named {
    protected ?string $name = null;
    public function name(): string { return $this->name ?? static::class; }
    abstract public function label(): string;
}
trait Logged { public function log(string ...$m): void { echo implode(",", $m); } public function name(): string { return "log"; } }
interface A {} interface B {}

abstract class Base implements HasId {
    use Named, Logged { Named::name insteadof Logged; Logged::name as protected logName; log as public; }
    public const int_ = 1 << 3;
    final public const EXPR = self::PREFIX . "x" . \PHP_EOL;
    public static array $registry = ['a' => [1, 2.5, -0.0, true, null], 7 => 'seven'];
    private int $counter = 0;
    public readonly array $typed;
    /** doc */
    #[Tag("prop", opts: ['x' => 1])]
    protected (A&B)|null $dnf = null;
    abstract public function id(): int|string;
    #[Tag]
    public function label(): string { return static::EXPR . $this->counter++; }
    public static function make(int $n = self::int_ * 2, ?self ...$rest): static { return new static(); }
}
enum Suit: string implements HasId {
    case Hearts = 'H';
    case Spades = 'S';
    const Wild = self::Spades;
    public function id(): int|string { return $this->value; }
    public static function fromChar(string $c): self { return self::from($c); }
}
enum Unit { case One; }
class Leaf extends Base {
    public function id(): int|string { return 1; }
    public function __get($n) { return new class($n) { public function __construct(public $n) {} }; }
}
function f(Base|Suit|null $x = null, callable $c = null, iterable $i = [], mixed $m = M_PI, int $d = PHP_INT_MAX): never { throw new \Error(strlen(...)("x")); }
"#;

#[test]
fn records_control_flow_like_php_dumps_it() {
    let (script, dump) = record(CONTROL_FLOW, "0", "0x10000");
    let n = check_against_dump(&script, &dump);
    assert!(n >= 7, "{n} op_arrays");
    assert_eq!(script.function_table.len(), 6);
    let main = &script.main_op_array;
    assert_eq!(
        main.vars.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
        ["f"]
    );
    // The closure keeps its static variables (`use` bindings included) and nests the
    // arrow function.
    let closure = &main.dynamic_func_defs[0];
    let statics: Vec<String> = closure
        .static_variables
        .iter()
        .flatten()
        .map(|(name, _)| name.to_string())
        .collect();
    assert_eq!(statics, ["f", "n"]);
    assert_eq!(closure.dynamic_func_defs.len(), 1);
}

#[test]
fn records_optimized_code_like_php_dumps_it() {
    for source in [CONTROL_FLOW, CLASSES] {
        let (script, dump) = record(source, "0x7FFEBFFF", "0x20000");
        check_against_dump(&script, &dump);
    }
}

/// A property's name without the `\0Class\0` / `\0*\0` visibility prefix PHP stores.
fn unmangled(name: &zend_ir::PhpStr) -> String {
    let s = name.to_string();
    s.rsplit('\0').next().unwrap_or_default().to_string()
}

#[test]
fn records_classes_enums_traits_and_types() {
    let (script, dump) = record(CLASSES, "0", "0x10000");
    check_against_dump(&script, &dump);
    let class = |name: &str| {
        &script
            .class_table
            .iter()
            .find(|(_, ce)| ce.name.to_string() == name)
            .unwrap_or_else(|| panic!("class {name} not recorded"))
            .1
    };
    let base = class("App\\Model\\Base");
    assert_eq!(base.interface_names.len(), 1);
    assert_eq!(
        base.interface_names[0].lc_name.to_string(),
        "app\\model\\hasid"
    );
    assert_eq!(base.trait_names.len(), 2);
    assert_eq!(base.trait_aliases.len(), 2);
    assert_eq!(base.trait_precedences.len(), 1);
    assert_eq!(
        base.trait_precedences[0].exclude_class_names[0].to_string(),
        "App\\Model\\Logged"
    );
    // Abstract methods are recorded too.
    assert!(base
        .methods
        .iter()
        .any(|(k, m)| k.to_string() == "id" && m.fn_flags & zend_ir::ZEND_ACC_ABSTRACT != 0));
    let consts: Vec<String> = base.constants.iter().map(|c| c.name.to_string()).collect();
    assert_eq!(consts, ["int_", "EXPR"]);
    assert!(matches!(base.constants[1].value, Literal::Ast(_)));
    let registry = base
        .properties
        .iter()
        .find(|p| unmangled(&p.name) == "registry")
        .unwrap();
    let Some(Literal::Array(entries)) = &registry.default else {
        panic!("registry default: {:?}", registry.default);
    };
    let Literal::Array(inner) = &entries[0].1 else {
        panic!()
    };
    assert_eq!(inner[2].1, Literal::Double(zend_ir::PhpDouble::new(-0.0)));
    assert_eq!(entries[1].0, zend_ir::ArrayKey::Long(7));
    let typed = base
        .properties
        .iter()
        .find(|p| unmangled(&p.name) == "typed")
        .unwrap();
    assert_eq!(
        typed.default, None,
        "typed property without default is UNDEF"
    );
    let counter = base
        .properties
        .iter()
        .find(|p| unmangled(&p.name) == "counter")
        .unwrap();
    assert_eq!(
        counter.name.as_bytes(),
        b"\0App\\Model\\Base\0counter",
        "mangled name"
    );
    assert_eq!(counter.default, Some(Literal::Long(0)));
    let dnf = base
        .properties
        .iter()
        .find(|p| unmangled(&p.name) == "dnf")
        .unwrap();
    let zend_ir::TypeNames::List(members) = &dnf.type_.names else {
        panic!("DNF type: {:?}", dnf.type_);
    };
    assert!(matches!(&members[0].names, zend_ir::TypeNames::List(inner) if inner.len() == 2));
    assert_eq!(dnf.attributes.len(), 1);
    assert_eq!(dnf.doc_comment.as_ref().unwrap().to_string(), "/** doc */");

    let suit = class("App\\Model\\Suit");
    assert_eq!(suit.enum_backing_type, zend_ir::types::IS_STRING);
    let leaf = class("App\\Model\\Leaf");
    assert_eq!(
        leaf.parent_name.as_ref().unwrap().to_string(),
        "App\\Model\\Base"
    );

    let make = base
        .methods
        .iter()
        .find(|(k, _)| k.to_string() == "make")
        .unwrap();
    assert_eq!(make.1.arg_info.len(), 2, "num_args + variadic");
    assert!(make.1.return_info.is_some());
}

#[test]
fn text_recording_is_written_next_to_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("sub dir").join("t.php");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "<?php function hello() { return 'hi'; }\n").unwrap();
    let rec = tmp.path().join("rec");
    let out = Run {
        format: "text",
        ..Run::new(&file, &rec)
    }
    .output();
    assert!(out.status.success());
    let zop = recording(&rec, &file, ".zop");
    let text = std::fs::read_to_string(&zop)
        .unwrap_or_else(|e| panic!("no text recording at {}: {e}", zop.display()));
    let script = zend_ir::zop::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(script.function_table[0].0.to_string(), "hello");
    // Nothing else lands in the directory (temporary files are renamed away).
    let entries: Vec<_> = std::fs::read_dir(zop.parent().unwrap()).unwrap().collect();
    assert_eq!(entries.len(), 1);
}

#[test]
fn unwritable_record_dir_warns_and_php_carries_on() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("t.php");
    std::fs::write(&file, "<?php echo 'still ', 'running';\n").unwrap();
    // A regular file where the directory should be.
    let rec = tmp.path().join("not-a-dir");
    std::fs::write(&rec, "").unwrap();
    let out = Run {
        code: "require $argv[1];",
        ..Run::new(&file, &rec)
    }
    .output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("still running"), "{stdout}");
    assert!(
        stdout.contains("Warning: zopt: cannot record") && stdout.contains("t.php"),
        "{stdout}"
    );
}

#[test]
fn failed_recording_writes_err_file_and_warns() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("t.php");
    std::fs::write(&file, "<?php echo 'ok';\n").unwrap();
    let rec = tmp.path().join("rec");
    // A directory where the recording should go: the rename onto it fails.
    let zop = recording(&rec, &file, ".zop");
    std::fs::create_dir_all(zop.join("blocker")).unwrap();
    let out = Run {
        format: "text",
        code: "require $argv[1];",
        ..Run::new(&file, &rec)
    }
    .output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.ends_with("ok"), "the script still runs: {stdout}");
    let err = recording(&rec, &file, ".zop.err");
    let message = std::fs::read_to_string(&err)
        .unwrap_or_else(|e| panic!("no {}: {e}; stdout: {stdout}", err.display()));
    let canonical = file.canonicalize().unwrap();
    assert!(
        message.starts_with(&format!(
            "zopt: cannot record {}: cannot write",
            canonical.display()
        )),
        "{message}"
    );
    assert!(
        stdout.contains(&format!("(see {})", err.display())),
        "{stdout}"
    );
}

#[test]
fn module_and_ini_settings() {
    let ext = format!("extension={}", extension().display());
    let out = php().args(["-n", "-d", &ext, "-m"]).output().unwrap();
    let modules = String::from_utf8_lossy(&out.stdout);
    assert!(modules.lines().any(|l| l == "zopt"), "{modules}");

    let out = php()
        .args(["-n", "-d", &ext, "-d", "zopt.record_dir=/tmp/x", "-r"])
        .arg(
            r#"var_dump(ini_get("zopt.mode"), ini_get("zopt.record_dir"),
               ini_set("zopt.mode", "record"), ini_set("zopt.record_format", "yaml"));"#,
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        stdout.contains("string(3) \"off\"\nstring(6) \"/tmp/x\"\nbool(false)\nbool(false)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("invalid zopt.record_format value \"yaml\""),
        "{stdout}"
    );

    let out = php()
        .args(["-n", "-d", &ext, "-d", "zopt.mode=replay", "-r"])
        .arg(r#"var_dump(ini_get("zopt.mode"));"#)
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success());
    assert!(
        all.contains(
            "invalid zopt.mode value \"replay\"; expected one of: off, record, roundtrip, optimize"
        ),
        "{all}"
    );
    assert!(all.contains("string(3) \"off\""), "{all}");
}

/// Closures nested as deep as the .zop parser accepts are recorded and parse back; one level
/// more is a clean recording error (PHP still runs the script), never a recording that
/// cannot be read.
#[test]
fn closure_nesting_is_bounded_like_the_parser() {
    let limit = zend_ir::zop::MAX_FUNC_NESTING;
    for (levels, recordable) in [(limit - 1, true), (limit, false)] {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("t.php");
        let opening = "function() { return ".repeat(levels);
        let closing = "; }".repeat(levels);
        std::fs::write(
            &file,
            format!("<?php\n$f = {opening}1{closing};\necho 'ok';\n"),
        )
        .unwrap();
        let rec = tmp.path().join("rec");
        let out = Run {
            format: "text",
            code: "require $argv[1];",
            ..Run::new(&file, &rec)
        }
        .output();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.ends_with("ok"),
            "the script still runs: {stdout}"
        );
        let zop = recording(&rec, &file, ".zop");
        if recordable {
            let text = std::fs::read_to_string(&zop)
                .unwrap_or_else(|e| panic!("{levels} levels: {e}; {stdout}"));
            zend_ir::zop::parse(&text)
                .unwrap_or_else(|e| panic!("{levels} levels do not parse back: {e}"));
        } else {
            let err = std::fs::read_to_string(recording(&rec, &file, ".zop.err"))
                .unwrap_or_else(|e| panic!("{levels} levels: no .zop.err ({e}); {stdout}"));
            assert!(
                err.contains(&format!("op_arrays nested deeper than {limit} levels")),
                "{err}"
            );
            assert!(!zop.exists());
        }
    }
}
