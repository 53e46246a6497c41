//! Shared pieces of the differential tests: the value matrix, PHP source for a literal, one
//! exact text encoding of values (the same in PHP and in Rust), and the PHP runners.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use zend_ir::{ArrayKey, Literal, PhpDouble, PhpStr};

pub fn long(l: i64) -> Literal {
    Literal::Long(l)
}

pub fn dbl(d: f64) -> Literal {
    Literal::Double(PhpDouble::new(d))
}

pub fn s(b: &[u8]) -> Literal {
    Literal::String(PhpStr(b.to_vec()))
}

fn arr(entries: Vec<(ArrayKey, Literal)>) -> Literal {
    Literal::Array(entries.into())
}

fn list(items: Vec<Literal>) -> Literal {
    arr(items
        .into_iter()
        .enumerate()
        .map(|(i, v)| (ArrayKey::Long(i as i64), v))
        .collect())
}

fn skey(k: &str) -> ArrayKey {
    ArrayKey::Str(PhpStr::from(k))
}

/// The quiet NaN PHP's `NAN` constant holds, and the "default NaN" x86 arithmetic produces
/// (INF * 0): both reach op_arrays.
pub const NAN_POS: u64 = 0x7ff8_0000_0000_0000;
pub const NAN_NEG: u64 = 0xfff8_0000_0000_0000;

#[allow(clippy::excessive_precision)]
pub fn numbers() -> Vec<Literal> {
    let mut v: Vec<Literal> = [
        0,
        1,
        -1,
        2,
        3,
        7,
        -7,
        10,
        63,
        64,
        65,
        100,
        255,
        123456789,
        3037000499,
        3037000500,
        4294967296,
        i64::MAX,
        i64::MAX - 1,
        i64::MIN,
        i64::MIN + 1,
    ]
    .into_iter()
    .map(long)
    .collect();
    v.extend(
        [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            1.5,
            -1.5,
            2.0,
            3.0,
            7.0,
            64.0,
            100.0,
            0.1,
            0.2,
            0.30000000000000004,
            1e100,
            -1e100,
            1e15,
            1e14,
            1e-5,
            1e-4,
            123456789012345.0,
            123456789012365.0,
            9.223372036854775808e18, // 2^63
            -9.223372036854775808e18,
            1e19,
            -1e19,
            1.8446744073709552e19,
            5e-324,
            1.7976931348623157e308,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]
        .into_iter()
        .map(dbl),
    );
    v.push(Literal::Double(PhpDouble(NAN_POS)));
    v.push(Literal::Double(PhpDouble(NAN_NEG)));
    v
}

pub fn strings() -> Vec<Literal> {
    let raw: &[&[u8]] = &[
        b"",
        b"0",
        b"1",
        b"-1",
        b"2",
        b"64",
        b" 12",
        b"12 ",
        b" 12 ",
        b"\t12\n",
        b"\x0b12\x0c",
        b"\r-3\r",
        b"1e3",
        b"1E3",
        b"1e",
        b"1e+",
        b"1e+x",
        b"0x1A",
        b"abc",
        b"12abc",
        b"1.5",
        b"-1.5",
        b".5",
        b"5.",
        b"-.5e-3",
        b"  -0",
        b"-0.0",
        b"00012",
        b"9223372036854775807",
        b"9223372036854775808",
        b"-9223372036854775808",
        b"-9223372036854775809",
        b"-9223372036854775808 ",
        b" -9223372036854775808",
        b"99999999999999999999",
        b"100000000000000000000e-10",
        b"12345678901234567890123",
        b"1e400",
        b"-1e400",
        b"INF",
        b"NAN",
        b"1.0E+25",
        b"0.1",
        b"0.10",
        b"1_000",
        b"+5",
        b"++5",
        b"1 2",
        b"\x001",
        b"1\x00",
        b"a",
        b"A",
        b"Array",
        b"ab\xff",
        b"0.30000000000000004",
        b"9007199254740993",
        b"1e3 ",
    ];
    raw.iter().map(|b| s(b)).collect()
}

pub fn others() -> Vec<Literal> {
    vec![
        Literal::Null,
        Literal::True,
        Literal::False,
        arr(vec![]),
        list(vec![long(1)]),
        list(vec![long(1), long(2)]),
        arr(vec![
            (ArrayKey::Long(1), long(2)),
            (ArrayKey::Long(0), long(1)),
        ]),
        arr(vec![(skey("a"), long(1))]),
        arr(vec![(skey("a"), long(1)), (skey("b"), long(2))]),
        arr(vec![(skey("b"), long(2)), (skey("a"), long(1))]),
        list(vec![long(1), list(vec![long(2)])]),
        list(vec![Literal::Double(PhpDouble(NAN_POS))]),
        list(vec![s(b"1")]),
        list(vec![dbl(1.0)]),
        list(vec![Literal::Null]),
        arr(vec![
            (ArrayKey::Long(-5), s(b"x")),
            (skey("k"), Literal::True),
        ]),
    ]
}

/// Every value of the matrix.
pub fn values() -> Vec<Literal> {
    let mut v = numbers();
    v.extend(strings());
    v.extend(others());
    v
}

/// PHP source that the compiler turns into exactly this constant.
pub fn php_expr(v: &Literal) -> String {
    match v {
        Literal::Null => "null".into(),
        Literal::True => "true".into(),
        Literal::False => "false".into(),
        Literal::Long(l) => {
            if *l == i64::MIN {
                "(-9223372036854775807-1)".into()
            } else if *l < 0 {
                format!("(-{})", l.unsigned_abs())
            } else {
                l.to_string()
            }
        }
        Literal::Double(d) => {
            let bits = d.0;
            let x = d.get();
            if bits == NAN_POS {
                "NAN".into()
            } else if bits == NAN_NEG {
                "(1e1000*0)".into()
            } else if x.is_nan() {
                panic!("no PHP source for NaN {bits:#x}")
            } else if x.is_infinite() {
                if x > 0.0 { "1e1000" } else { "(-1e1000)" }.into()
            } else if x.is_sign_negative() {
                format!("(-{:e})", -x)
            } else {
                format!("{x:e}")
            }
        }
        Literal::String(s) => {
            let mut out = String::from("\"");
            for b in &s.0 {
                out.push_str(&format!("\\x{b:02x}"));
            }
            out.push('"');
            out
        }
        Literal::Array(a) => {
            let items: Vec<String> = a
                .iter()
                .map(|(k, v)| {
                    let k = match k {
                        ArrayKey::Long(l) => php_expr(&Literal::Long(*l)),
                        ArrayKey::Str(s) => php_expr(&Literal::String(s.clone())),
                    };
                    format!("{k} => {}", php_expr(v))
                })
                .collect();
            format!("[{}]", items.join(", "))
        }
        Literal::Ast(_) => panic!("no PHP source for an AST"),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// The exact encoding of a value, as [`PHP_ENC`] prints it.
pub fn enc(v: &Literal) -> String {
    match v {
        Literal::Null => "N".into(),
        Literal::True => "T".into(),
        Literal::False => "F".into(),
        Literal::Long(l) => format!("i{l}"),
        Literal::Double(d) => format!("d{:016x}", d.0),
        Literal::String(s) => format!("s{}", hex(&s.0)),
        Literal::Array(a) => {
            let mut out = String::from("a[");
            for (k, v) in a {
                match k {
                    ArrayKey::Long(l) => out.push_str(&format!("i{l}")),
                    ArrayKey::Str(s) => out.push_str(&format!("s{}", hex(&s.0))),
                }
                out.push('=');
                out.push_str(&enc(v));
                out.push(';');
            }
            out.push(']');
            out
        }
        Literal::Ast(_) => "?ast".into(),
    }
}

/// The PHP side of [`enc`].
pub const PHP_ENC: &str = r#"
function enc($v) {
    if ($v === null) return 'N';
    if ($v === true) return 'T';
    if ($v === false) return 'F';
    if (is_int($v)) return 'i' . $v;
    if (is_float($v)) return 'd' . bin2hex(pack('E', $v));
    if (is_string($v)) return 's' . bin2hex($v);
    if (is_array($v)) {
        $o = 'a[';
        foreach ($v as $k => $x) {
            $o .= (is_int($k) ? 'i' . $k : 's' . bin2hex($k)) . '=' . enc($x) . ';';
        }
        return $o . ']';
    }
    return '?' . gettype($v);
}
"#;

/// How PHP ran one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// No warning, notice, deprecation or exception; the encoded value.
    Ok(String),
    /// A value, but PHP reported something on the way.
    Warned(String),
    /// The class of the exception thrown.
    Threw(String),
}

/// A directory of its own for each run of each test (tests run in parallel threads).
fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zend-operators-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn write_file(path: &Path, text: &str) {
    let mut f = std::fs::File::create(path).expect("create file");
    f.write_all(text.as_bytes()).expect("write file");
}

/// Runs each PHP statement list in `sources` (one line each, e.g. `return 1 + 2;`) through
/// `eval` in one `php -n` process and reports what happened.
pub fn run_php_cases(tag: &str, sources: &[String]) -> Vec<Outcome> {
    let dir = scratch_dir(tag);
    let cases = dir.join(format!("{tag}.cases"));
    let script = dir.join(format!("{tag}.php"));
    let mut text = String::new();
    for src in sources {
        assert!(!src.contains('\n'));
        text.push_str(src);
        text.push('\n');
    }
    write_file(&cases, &text);
    let runner = format!(
        r#"<?php
error_reporting(E_ALL);
{PHP_ENC}
$out = fopen('php://stdout', 'w');
foreach (file($argv[1], FILE_IGNORE_NEW_LINES) as $src) {{
    error_clear_last();
    try {{
        $r = @eval($src);
        $e = error_get_last();
        fwrite($out, ($e === null ? 'ok ' : 'warn ') . enc($r) . "\n");
    }} catch (Throwable $t) {{
        fwrite($out, 'exc ' . get_class($t) . "\n");
    }}
}}
"#
    );
    write_file(&script, &runner);
    let out = Command::new("php")
        .args(["-n", "-d", "display_errors=stderr", "-d", "precision=14"])
        .arg(&script)
        .arg(&cases)
        .output()
        .expect("run php (PHP 8.2 must be installed)");
    assert!(
        out.status.success(),
        "php failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("ASCII output");
    let outcomes: Vec<Outcome> = stdout
        .lines()
        .map(|l| {
            let (kind, rest) = l.split_once(' ').unwrap_or((l, ""));
            match kind {
                "ok" => Outcome::Ok(rest.to_owned()),
                "warn" => Outcome::Warned(rest.to_owned()),
                "exc" => Outcome::Threw(rest.to_owned()),
                _ => panic!("unexpected line from php: {l}"),
            }
        })
        .collect();
    assert_eq!(outcomes.len(), sources.len(), "one result per case");
    let _ = std::fs::remove_dir_all(&dir);
    outcomes
}

/// Compiles `function f<i>() { return <expr_i>; }` for every expression with OPcache at
/// optimization level 0 and reports, from the "before optimizer" dump, whether PHP's
/// compiler folded each expression to a constant (it folds exactly where
/// `zend_binary_op_produces_error` / `zend_unary_op_produces_error` allow).
pub fn php_folds(tag: &str, exprs: &[String]) -> Vec<bool> {
    let dir = scratch_dir(tag);
    let file = dir.join(format!("{tag}.php"));
    let mut text = String::from("<?php\n");
    for (i, e) in exprs.iter().enumerate() {
        text.push_str(&format!("function f{i}() {{ return {e}; }}\n"));
    }
    write_file(&file, &text);
    let out = Command::new("php")
        .args([
            "-n",
            "-d",
            "zend_extension=opcache",
            "-d",
            "opcache.enable_cli=1",
            "-d",
            "opcache.file_update_protection=0",
            "-d",
            "opcache.memory_consumption=256",
            "-d",
            "opcache.optimization_level=0",
            "-d",
            "opcache.opt_debug_level=0x10000",
            "-r",
            "opcache_compile_file($argv[1]);",
        ])
        .arg(&file)
        .output()
        .expect("run php (PHP 8.2 with OPcache must be installed)");
    let _ = std::fs::remove_dir_all(&dir);
    let dump = String::from_utf8_lossy(&out.stderr);
    let mut folded: Vec<Option<bool>> = vec![None; exprs.len()];
    let mut current: Option<usize> = None;
    for line in dump.lines() {
        if let Some(name) = line.strip_suffix(':') {
            current = name.strip_prefix('f').and_then(|n| n.parse().ok());
            continue;
        }
        if let (Some(i), Some(op)) = (current, line.strip_prefix("0000 ")) {
            if i < folded.len() && folded[i].is_none() {
                let is_const = op
                    .strip_prefix("RETURN ")
                    .is_some_and(|v| !v.starts_with('T') && !v.starts_with("CV"));
                folded[i] = Some(is_const);
            }
        }
    }
    folded
        .into_iter()
        .enumerate()
        .map(|(i, f)| f.unwrap_or_else(|| panic!("no dump for f{i} ({})", exprs[i])))
        .collect()
}
