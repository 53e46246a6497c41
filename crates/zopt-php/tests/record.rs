//! Loads the built extension into the real PHP 8.2 in record mode and checks the recordings
//! against PHP's own op_array dumps (`opcache.opt_debug_level`) of the same run.
//!
//! Needs `php` (8.2, with OPcache) on PATH; the tests fail, not skip, without it. The
//! extension is `$ZOPT_PHP_EXTENSION`, or `libzopt_php.so` of this build's target directory,
//! brought up to date with `cargo build -p zopt-php` first.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use zend_ir::{Literal, OpArray, Operand, Script};

fn extension() -> &'static Path {
    static EXT: OnceLock<PathBuf> = OnceLock::new();
    EXT.get_or_init(|| {
        if let Some(path) = std::env::var_os("ZOPT_PHP_EXTENSION") {
            let path = PathBuf::from(path);
            assert!(
                path.is_file(),
                "ZOPT_PHP_EXTENSION={} does not exist",
                path.display()
            );
            return path;
        }
        // This test binary lives in <target>/<profile>/deps/. `cargo test` does not build
        // a cdylib for integration tests, so build it here (a no-op when it is fresh):
        // testing a stale extension would be worse than a missing one.
        let exe = std::env::current_exe().expect("current_exe");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("test binary in <target>/<profile>/deps");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let status = Command::new(cargo)
            .args(["build", "-p", "zopt-php", "--profile", profile])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("running cargo build -p zopt-php");
        assert!(status.success(), "cargo build -p zopt-php failed");
        let path = profile_dir.join("libzopt_php.so");
        assert!(
            path.is_file(),
            "the extension is missing at {} (set ZOPT_PHP_EXTENSION)",
            path.display()
        );
        path
    })
}

fn php() -> Command {
    static CHECKED: OnceLock<()> = OnceLock::new();
    CHECKED.get_or_init(|| {
        let out = Command::new("php").arg("-v").output().unwrap_or_else(|e| {
            panic!(
                "these tests need PHP 8.2 on PATH (apt-get install php8.2-cli php8.2-opcache): \
                 cannot run php: {e}"
            )
        });
        let version = String::from_utf8_lossy(&out.stdout);
        assert!(
            version.starts_with("PHP 8.2."),
            "these tests need PHP 8.2, found: {version}"
        );
    });
    Command::new("php")
}

/// One record run: `php -n` with OPcache (which `-n` does not load by itself) and the
/// extension, compiling `file` without running it.
struct Run<'a> {
    file: &'a Path,
    record_dir: &'a Path,
    format: &'a str,
    optimization_level: &'a str,
    debug_level: &'a str,
    code: &'a str,
}

impl Run<'_> {
    fn new<'a>(file: &'a Path, record_dir: &'a Path) -> Run<'a> {
        Run {
            file,
            record_dir,
            format: "both",
            optimization_level: "0",
            debug_level: "0x10000",
            code: "opcache_compile_file($argv[1]);",
        }
    }

    fn output(&self) -> Output {
        let out = php()
            .arg("-n")
            .args(["-d", "zend_extension=opcache"])
            .args(["-d", "opcache.enable_cli=1"])
            .args(["-d", "opcache.file_update_protection=0"])
            .arg("-d")
            .arg(format!(
                "opcache.optimization_level={}",
                self.optimization_level
            ))
            .arg("-d")
            .arg(format!("opcache.opt_debug_level={}", self.debug_level))
            .arg("-d")
            .arg(format!("extension={}", extension().display()))
            .args(["-d", "zopt.mode=record"])
            .arg("-d")
            .arg(format!("zopt.record_dir={}", self.record_dir.display()))
            .arg("-d")
            .arg(format!("zopt.record_format={}", self.format))
            .args(["-r", self.code, "--"])
            .arg(self.file)
            .output()
            .expect("running php");
        use std::os::unix::process::ExitStatusExt;
        assert!(
            out.status.signal().is_none(),
            "php crashed ({:?}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

/// `<record_dir>/<absolute path><ext>`.
fn recording(record_dir: &Path, file: &Path, ext: &str) -> PathBuf {
    let file = file.canonicalize().expect("canonical script path");
    let mut s = record_dir
        .join(file.strip_prefix("/").unwrap())
        .into_os_string();
    s.push(ext);
    PathBuf::from(s)
}

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

/// One op_array of PHP's dump.
#[derive(Debug)]
struct DumpBlock {
    name: String,
    lines: u32,
    args: u32,
    vars: u32,
    tmps: u32,
    ops: Vec<String>,
    live_ranges: Vec<String>,
    exceptions: Vec<String>,
}

fn header_field(header: &str, key: &str) -> u32 {
    let start = header.find(&format!("{key}=")).expect(key) + key.len() + 1;
    header[start..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Splits the dump (stderr) into op_arrays. Every block starts with its name line followed
/// by `     ; (lines=N, args=A, vars=V, tmps=T)`.
fn parse_dump(stderr: &str) -> Vec<DumpBlock> {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut blocks: Vec<DumpBlock> = Vec::new();
    let mut section = "";
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.ends_with(':')
            && lines
                .get(i + 1)
                .is_some_and(|next| next.starts_with("     ; (lines="))
        {
            let header = lines[i + 1];
            blocks.push(DumpBlock {
                name: line.trim_end_matches(':').to_string(),
                lines: header_field(header, "lines"),
                args: header_field(header, "args"),
                vars: header_field(header, "vars"),
                tmps: header_field(header, "tmps"),
                ops: Vec::new(),
                live_ranges: Vec::new(),
                exceptions: Vec::new(),
            });
            section = "ops";
            i += 2;
            continue;
        }
        i += 1;
        let Some(block) = blocks.last_mut() else {
            continue;
        };
        match line {
            "LIVE RANGES:" => section = "live",
            "EXCEPTION TABLE:" => section = "exceptions",
            _ if line.starts_with("     ;") || line.is_empty() => {}
            _ => match section {
                "ops" if line.len() > 4 && line[..4].bytes().all(|b| b.is_ascii_digit()) => {
                    block.ops.push(line.to_string())
                }
                "live" => block.live_ranges.push(line.trim().to_string()),
                // PHP omits the newline after an entry with a finally_end: entries can
                // share a line.
                "exceptions" => block.exceptions.extend(
                    line.split("     ")
                        .map(str::trim)
                        .filter(|e| !e.is_empty())
                        .map(str::to_string),
                ),
                _ => {}
            },
        }
    }
    blocks
}

fn printable(s: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(s).ok()?;
    s.bytes().all(|b| (0x20..0x7f).contains(&b)).then_some(s)
}

/// What the dump must show for an operand.
fn operand_text(op_array: &OpArray, operand: Operand) -> Option<String> {
    match operand {
        Operand::Cv(v) => Some(format!("CV{}(${})", v.0, op_array.vars[v.index()])),
        Operand::TmpVar(v) => Some(format!("T{}", v.0)),
        Operand::Var(v) => Some(format!("V{}", v.0)),
        Operand::JmpAddr(n) => Some(format!(" {:04}", n.0)),
        Operand::Const(lit) => match op_array.literal(lit) {
            Literal::String(s) => printable(s.as_bytes()).map(|s| format!("string(\"{s}\")")),
            Literal::Long(n) => Some(format!("int({n})")),
            Literal::Null => Some("null".to_string()),
            _ => None,
        },
        Operand::Unused(_) => None,
    }
}

/// Checks every op_array of the recording against its block of the dump.
fn check_against_dump(script: &Script, dump: &[DumpBlock]) -> usize {
    let op_arrays = script.op_arrays();
    // PHP prints names with %s: an anonymous class name stops at its NUL.
    let names: Vec<String> = op_arrays
        .iter()
        .map(|o| {
            let name = o.display_name();
            match name.split_once('\0') {
                Some((head, tail)) => {
                    format!("{head}{}", &tail[tail.find("::").unwrap_or(tail.len())..])
                }
                None => name,
            }
        })
        .collect();
    let dumped: Vec<&str> = dump.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, dumped, "op_arrays recorded vs dumped");
    for (op_array, block) in op_arrays.iter().zip(dump) {
        let name = &block.name;
        assert_eq!(op_array.opcodes.len() as u32, block.lines, "{name}: lines");
        assert_eq!(
            block.ops.len() as u32,
            block.lines,
            "{name}: op lines dumped"
        );
        assert_eq!(op_array.num_args, block.args, "{name}: args");
        assert_eq!(op_array.last_var(), block.vars, "{name}: vars");
        assert_eq!(op_array.T, block.tmps, "{name}: tmps");
        for (n, (op, line)) in op_array.opcodes.iter().zip(&block.ops).enumerate() {
            assert!(line.starts_with(&format!("{n:04} ")), "{name}: {line}");
            let opname = op.opcode.short_name().unwrap();
            assert!(
                line.split_whitespace().any(|w| w == opname),
                "{name}: op {n} is {opname}, dump says {line}"
            );
            for (what, operand) in [("op1", op.op1), ("op2", op.op2), ("result", op.result)] {
                let is_table =
                    what == "op2" && matches!(opname, "SWITCH_LONG" | "SWITCH_STRING" | "MATCH");
                if is_table {
                    continue;
                }
                if let Some(text) = operand_text(op_array, operand) {
                    assert!(
                        line.contains(&text),
                        "{name}: op {n} {what} {operand:?} should show {text:?}: {line}"
                    );
                }
            }
            if op.opcode.ext_is_jmp_addr() {
                let target = format!(" {:04}", op.extended_value);
                assert!(
                    line.ends_with(&target),
                    "{name}: op {n} target {target}: {line}"
                );
            }
            if let (Operand::Const(lit), "SWITCH_LONG" | "SWITCH_STRING" | "MATCH") =
                (op.op2, opname)
            {
                let Literal::Array(table) = op_array.literal(lit) else {
                    panic!("{name}: op {n}: jump table is not an array");
                };
                let mut text = String::new();
                for (key, target) in table {
                    let Literal::Long(target) = target else {
                        panic!("{name}: op {n}: jump table target {target:?}");
                    };
                    match key {
                        zend_ir::ArrayKey::Long(k) => text += &format!(" {k}: {target:04},"),
                        zend_ir::ArrayKey::Str(k) => text += &format!(" \"{}\": {target:04},", k),
                    }
                }
                text += &format!(" default: {:04}", op.extended_value);
                assert!(
                    line.contains(&text),
                    "{name}: op {n}: expected {text} in {line}"
                );
            }
        }
        let ranges: Vec<String> = op_array
            .live_range
            .iter()
            .map(|r| {
                let kind = ["(tmp/var)", "(loop)", "(silence)", "(rope)", "(new)"][r.kind as usize];
                format!("{}: {:04} - {:04} {kind}", r.var.0, r.start.0, r.end.0)
            })
            .collect();
        if !block.live_ranges.is_empty() {
            assert_eq!(ranges, block.live_ranges, "{name}: live ranges");
        }
        let exceptions: Vec<String> = op_array
            .try_catch_array
            .iter()
            .map(|t| {
                let opt = |o: Option<zend_ir::OpNum>| {
                    o.map_or("-".to_string(), |o| format!("{:04}", o.0))
                };
                format!(
                    "{:04}, {}, {}, {}",
                    t.try_op.0,
                    opt(t.catch_op),
                    opt(t.finally_op),
                    opt(t.finally_end)
                )
            })
            .collect();
        assert_eq!(exceptions, block.exceptions, "{name}: exception table");
    }
    op_arrays.len()
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
        all.contains("invalid zopt.mode value \"replay\"; expected one of: off, record"),
        "{all}"
    );
    assert!(all.contains("string(3) \"off\""), "{all}");
}
