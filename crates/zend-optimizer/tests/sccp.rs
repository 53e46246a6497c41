//! SCCP against PHP: the `sccp` dump ("SCCP Values for ...", opt_debug_level 0x20000000) of
//! every fixture recording at optimization level 0xE0 (DFA with the call graph, SCCP)
//! against PHP's own dump of the same fixture (fixtures/expected/*/opt-0xE0/sccp.txt,
//! written by tools/gen-fixtures.sh from PHP 8.2), and, when present, the recorded Debian
//! corpus against PHP run live.
//!
//! At 0xE0 no pass runs before the DFA pass, so SCCP sees each op_array as PHP compiled it
//! (the recording) with the analyses of `zend_dfa_analyze_op_array`.

use std::path::{Path, PathBuf};

use zend_call_graph::{CallGraph, FuncId};
use zend_ir::{corpus, Script};
use zend_optimizer::analysis::analyze_script;
use zend_optimizer::ctx::{OpArrayPath, OptimizerCtx, State};
use zend_optimizer::sccp::{self, CallMap};

/// Our `sccp` dump of every op_array of `script` at `level`, in PHP's order, and the names
/// of the op_arrays whose values differ from `expected` when given.
fn sccp_dump(script: &Script, level: u32) -> Vec<u8> {
    // PHP runs here with `-n` and OPcache: the modules of the optimizer's tables.
    zend_optimizer::environment::set_modules_are_tables(true);
    let analysis = analyze_script(script, level);
    let call_graph = (level & 0x40 != 0).then(|| CallGraph::build(&analysis.info));
    let paths = OpArrayPath::all(script);
    let mut state = State::default();
    let mut out = Vec::new();
    for (index, fa) in analysis.functions.iter().enumerate() {
        let Ok(fa) = fa else {
            continue;
        };
        let op_array = analysis.info.op_arrays[index];
        let map = call_graph
            .as_ref()
            .map(|cg| CallMap::new(op_array, &cg.calls[FuncId(index as u32).index()]));
        let path = paths
            .get(index)
            .cloned()
            .unwrap_or_else(|| paths[0].clone());
        let ctx = OptimizerCtx {
            optimization_level: level,
            debug_level: sccp::ZEND_DUMP_SCCP,
            // The goldens are PHP 8.2's, its bugs included.
            php_bugs: zend_optimizer::PhpBugs::PHP_8_2,
            with_file_cache: false,
            script,
            current: &path,
            state: &mut state,
            pass: "sccp",
        };
        let result = sccp::analyze(
            &ctx,
            op_array,
            &fa.ssa,
            &fa.cfg,
            &fa.inference.vars,
            map.as_ref(),
        );
        sccp::dump_values(&mut out, op_array, &fa.ssa, &result.values);
    }
    out
}

fn fixture_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/expected");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("opt-0xE0/sccp.txt").exists() && p.join("recording.zop").exists())
        .collect();
    dirs.sort();
    dirs
}

/// The blocks of a dump, one per op_array, so a failure names the function.
fn split(dump: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(dump)
        .split("\nSCCP Values for ")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn fixtures_sccp_values_are_php_s() {
    let dirs = fixture_dirs();
    assert!(dirs.len() > 50, "fixture goldens missing");
    let (mut same, mut failures) = (0, Vec::new());
    let (mut funcs_same, mut funcs_total) = (0usize, 0usize);
    for dir in &dirs {
        let script = corpus::read(&dir.join("recording.zop")).unwrap_or_else(|e| panic!("{e}"));
        let ours = sccp_dump(&script, 0xE0);
        let php = std::fs::read(dir.join("opt-0xE0/sccp.txt")).unwrap();
        let (a, b) = (split(&ours), split(&php));
        funcs_total += b.len().max(a.len());
        funcs_same += b.iter().filter(|x| a.contains(x)).count();
        if ours == php {
            same += 1;
        } else {
            let diff: Vec<String> = b
                .iter()
                .filter(|x| !a.contains(x))
                .map(|x| format!("  php:  {x}"))
                .chain(
                    a.iter()
                        .filter(|x| !b.contains(x))
                        .map(|x| format!("  ours: {x}")),
                )
                .collect();
            failures.push(format!("{}:\n{}", dir.display(), diff.join("")));
        }
    }
    eprintln!(
        "sccp dumps: {same}/{} fixtures identical, {funcs_same}/{funcs_total} op_arrays",
        dirs.len()
    );
    assert!(
        failures.is_empty(),
        "{} fixtures differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// PHP source for a literal (strings hex-escaped, floats exact).
fn php_literal(v: &zend_ir::Literal) -> String {
    use zend_ir::{ArrayKey, Literal};
    match v {
        Literal::Null => "null".into(),
        Literal::True => "true".into(),
        Literal::False => "false".into(),
        Literal::Long(l) if *l == i64::MIN => "PHP_INT_MIN".into(),
        Literal::Long(l) => l.to_string(),
        Literal::Double(d) => {
            let d = d.get();
            if d.is_nan() {
                "NAN".into()
            } else if d.is_infinite() {
                if d > 0.0 {
                    "INF".into()
                } else {
                    "-INF".into()
                }
            } else {
                format!("(float)'{d:?}'")
            }
        }
        Literal::String(s) => {
            let mut out = String::from("\"");
            for b in s.as_bytes() {
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
                        ArrayKey::Long(l) => php_literal(&Literal::Long(*l)),
                        ArrayKey::Str(s) => php_literal(&Literal::String(s.clone())),
                    };
                    format!("{k} => {}", php_literal(v))
                })
                .collect();
            format!("[{}]", items.join(", "))
        }
        Literal::Ast(_) => "null".into(),
    }
}

/// Every call SCCP evaluates at compile time gives, in PHP, the same value (`===`, same
/// key order) without any warning, notice, deprecation or exception; and PHP's optimizer
/// folds exactly the cases evaluated here, the others (each reason PHP has to leave a
/// call) included, without and with strict types ([`check_calls_against_php`]).
#[test]
fn compile_time_calls_are_php_s() {
    use zend_ir::{ArrayKey, Literal, PhpDouble, PhpStr};
    let s = |v: &str| Literal::String(PhpStr(v.as_bytes().to_vec()));
    let l = Literal::Long;
    let d = |v: f64| Literal::Double(PhpDouble::new(v));
    let arr = |items: Vec<Literal>| {
        Literal::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (ArrayKey::Long(i as i64), v))
                .collect(),
        )
    };
    let map = |items: Vec<(&str, Literal)>| {
        Literal::Array(
            items
                .into_iter()
                .map(|(k, v)| (ArrayKey::Str(PhpStr(k.as_bytes().to_vec())), v))
                .collect(),
        )
    };
    // Integer keys of any value, string keys as "s:name".
    let keyed = |items: Vec<(&str, Literal)>| {
        Literal::Array(
            items
                .into_iter()
                .map(|(k, v)| match k.strip_prefix("s:") {
                    Some(name) => (ArrayKey::Str(PhpStr(name.as_bytes().to_vec())), v),
                    None => (ArrayKey::Long(k.parse().unwrap()), v),
                })
                .collect(),
        )
    };
    let mut cases: Vec<(&str, Vec<Literal>)> = vec![
        ("strncasecmp", vec![s("Hello"), s("hELLo world"), l(5)]),
        ("strncasecmp", vec![s("Hello"), s("hELLo world"), l(20)]),
        ("strncasecmp", vec![s("B"), s("a"), l(1)]),
        ("strncasecmp", vec![s("a\u{c4}"), s("A\u{e4}"), l(9)]),
        ("strncasecmp", vec![s("abc"), s("abd"), l(0)]),
        ("strncasecmp", vec![s("abc"), s("abd"), l(-1)]),
        ("strncasecmp", vec![s("abc"), s("ABD"), s(" 2")]),
        ("strncasecmp", vec![s("abc"), s("ABD"), d(2.0)]),
        ("strncasecmp", vec![s("abc"), s("ABD"), d(2.5)]),
        ("strncasecmp", vec![s("abc"), s("ABD"), s("2x")]),
        ("strncasecmp", vec![s("abc"), s("ABD"), Literal::True]),
        ("strncasecmp", vec![s("abc"), s("ABD"), Literal::Null]),
        ("strripos", vec![s("aXbxc"), s("x")]),
        ("strripos", vec![s("aXbxc"), s("X"), l(-3)]),
        ("strripos", vec![s("aXbxc"), s("X"), l(10)]),
        ("strripos", vec![s("aXbxc"), s("X"), l(-6)]),
        ("strripos", vec![s("abcABC"), s("Bc"), l(2)]),
        ("strripos", vec![s("abcABC"), s("Bc"), l(-2)]),
        ("strripos", vec![s("abcABC"), s("Bc"), l(-3)]),
        ("strripos", vec![s("abcABC"), s("Bc"), l(-6)]),
        ("strripos", vec![s("abc"), s("")]),
        ("strripos", vec![s("abc"), s(""), l(-1)]),
        ("strripos", vec![s("abc"), s(""), l(3)]),
        ("strripos", vec![s(""), s("a")]),
        ("strripos", vec![s("abc"), s("ABCD")]),
        ("strripos", vec![s("\u{c4}"), s("\u{e4}")]),
        ("strrpos", vec![s("abcabc"), s("b"), l(-3)]),
        ("strrpos", vec![s("abcabc"), s("bc"), l(-2)]),
        ("strrpos", vec![s("abcabc"), s("bc"), l(5)]),
        ("str_ireplace", vec![s("L"), s("x"), s("Hello")]),
        ("str_ireplace", vec![s(""), s("x"), s("Hello")]),
        ("str_ireplace", vec![s("hello"), s("x"), s("HELLO")]),
        ("str_ireplace", vec![s("hello!"), s("x"), s("HELLO")]),
        ("str_ireplace", vec![s("\u{e4}"), s("x"), s("\u{c4}\u{e4}")]),
        ("str_ireplace", vec![s("aa"), s("b"), s("AAAAA")]),
        (
            "str_ireplace",
            vec![
                arr(vec![s("l"), s("O")]),
                arr(vec![s("1"), s("0")]),
                s("Hello World"),
            ],
        ),
        (
            "str_ireplace",
            vec![
                arr(vec![s("ab"), s("BA")]),
                arr(vec![s("ba"), s("Z")]),
                s("aBab"),
            ],
        ),
        (
            "str_ireplace",
            vec![
                arr(vec![s("a"), s(""), s("c")]),
                arr(vec![s("1"), s("2")]),
                s("abcABC"),
            ],
        ),
        (
            "str_ireplace",
            vec![
                arr(vec![s("a"), s("c")]),
                keyed(vec![("5", s("1")), ("2", s("2"))]),
                s("abcABC"),
            ],
        ),
        (
            "str_ireplace",
            vec![arr(vec![l(1), Literal::True, d(2.5)]), s("-"), s("1x2.5")],
        ),
        (
            "str_ireplace",
            vec![
                arr(vec![s("l"), s(""), s("O")]),
                s("_"),
                keyed(vec![("s:a", s("Hello")), ("5", s("World")), ("7", l(12))]),
            ],
        ),
        (
            "str_ireplace",
            vec![
                s("x"),
                s("y"),
                arr(vec![Literal::Null, d(1.5), Literal::True, s("X")]),
            ],
        ),
        ("str_ireplace", vec![s("a"), s("b"), arr(vec![])]),
        (
            "str_ireplace",
            vec![s("a"), s("b"), arr(vec![arr(vec![s("a")])])],
        ),
        ("str_ireplace", vec![s("a"), arr(vec![s("x")]), s("abc")]),
        (
            "str_ireplace",
            vec![arr(vec![s("a"), arr(vec![])]), s("c"), s("abc")],
        ),
        (
            "str_ireplace",
            vec![arr(vec![s("abc"), arr(vec![])]), s(""), s("ABC")],
        ),
        ("str_ireplace", vec![arr(vec![arr(vec![])]), s("x"), s("")]),
        (
            "str_ireplace",
            vec![s("a"), arr(vec![arr(vec![])]), s("abc")],
        ),
        (
            "str_ireplace",
            vec![arr(vec![s("a")]), arr(vec![arr(vec![])]), s("abc")],
        ),
        ("str_ireplace", vec![l(1), l(2), l(313)]),
        ("str_ireplace", vec![s("a"), s("b"), Literal::Null]),
        (
            "array_merge_recursive",
            vec![
                keyed(vec![("s:a", l(1)), ("5", s("x"))]),
                keyed(vec![("s:a", l(2)), ("s:b", arr(vec![l(1)]))]),
                keyed(vec![
                    ("s:a", keyed(vec![("0", l(3)), ("s:k", l(4))])),
                    ("9", s("y")),
                ]),
            ],
        ),
        (
            "array_merge_recursive",
            vec![
                keyed(vec![("s:a", keyed(vec![("5", s("p")), ("-3", s("q"))]))]),
                keyed(vec![("s:a", keyed(vec![("0", s("r")), ("s:k", s("s"))]))]),
            ],
        ),
        (
            "array_merge_recursive",
            vec![
                keyed(vec![("s:a", keyed(vec![("s:k", l(1))]))]),
                keyed(vec![("s:a", keyed(vec![("s:k", arr(vec![l(2)]))]))]),
                keyed(vec![(
                    "s:a",
                    keyed(vec![("s:k", keyed(vec![("s:z", l(3))]))]),
                )]),
            ],
        ),
        (
            "array_merge_recursive",
            vec![
                keyed(vec![("s:a", Literal::Null), ("s:b", s("x"))]),
                keyed(vec![("s:a", l(1)), ("s:b", Literal::Null)]),
            ],
        ),
        (
            "array_merge_recursive",
            vec![
                keyed(vec![("s:a", keyed(vec![("-5", l(1))]))]),
                keyed(vec![("s:a", l(2))]),
            ],
        ),
        (
            "array_merge_recursive",
            vec![keyed(vec![("3", l(1)), ("1", l(2))])],
        ),
        (
            "array_merge_recursive",
            vec![arr(vec![]), keyed(vec![("4", l(1))])],
        ),
        (
            "array_merge_recursive",
            vec![keyed(vec![("s:k", l(1))]), arr(vec![])],
        ),
        ("array_merge_recursive", vec![]),
        ("array_merge_recursive", vec![arr(vec![l(1)]), s("x")]),
        (
            "array_replace_recursive",
            vec![
                keyed(vec![
                    (
                        "s:a",
                        keyed(vec![("0", l(1)), ("1", l(2)), ("s:k", arr(vec![l(3)]))]),
                    ),
                    ("1", l(5)),
                ]),
                keyed(vec![
                    (
                        "s:a",
                        keyed(vec![("1", l(9)), ("s:k", keyed(vec![("1", l(4))]))]),
                    ),
                    ("1", arr(vec![l(7)])),
                ]),
            ],
        ),
        (
            "array_replace_recursive",
            vec![
                keyed(vec![("s:a", arr(vec![l(1)])), ("s:b", l(2))]),
                keyed(vec![("s:a", l(0)), ("s:b", arr(vec![l(3)]))]),
                keyed(vec![("s:b", arr(vec![l(4), l(5)])), ("3", s("z"))]),
            ],
        ),
        ("array_replace_recursive", vec![arr(vec![l(1)])]),
        ("array_replace_recursive", vec![arr(vec![l(1)]), l(2)]),
        ("count", vec![arr(vec![l(1), arr(vec![l(2), arr(vec![])])])]),
        (
            "count",
            vec![arr(vec![l(1), arr(vec![l(2), arr(vec![])])]), l(1)],
        ),
        ("count", vec![arr(vec![l(1), arr(vec![l(2)])]), l(0)]),
        ("count", vec![arr(vec![l(1)]), l(2)]),
        ("count", vec![arr(vec![l(1)]), d(1.0)]),
        ("count", vec![s("abc")]),
        ("array_key_exists", vec![s("a"), map(vec![("a", l(1))])]),
        ("array_key_exists", vec![s("1"), arr(vec![l(1), l(2)])]),
        ("array_key_exists", vec![s("01"), arr(vec![l(1), l(2)])]),
        ("array_key_exists", vec![l(2), arr(vec![l(1), l(2)])]),
        (
            "array_key_exists",
            vec![Literal::Null, map(vec![("", l(1))])],
        ),
        (
            "array_key_exists",
            vec![Literal::True, arr(vec![l(1), l(2)])],
        ),
        ("array_key_exists", vec![Literal::False, arr(vec![l(1)])]),
        ("array_key_exists", vec![d(1.0), arr(vec![l(1), l(2)])]),
        ("array_key_exists", vec![d(1.5), arr(vec![l(1), l(2)])]),
        ("array_key_exists", vec![arr(vec![]), arr(vec![l(1)])]),
        ("strtolower", vec![s("AbC\u{e9}")]),
        ("strtoupper", vec![s("abc")]),
        ("ucfirst", vec![s("")]),
        ("ucfirst", vec![s("élan")]),
        ("lcfirst", vec![s("ABC")]),
        ("ucwords", vec![s("hello world-x\tz")]),
        ("ucwords", vec![s("a-b c"), s("-")]),
        ("trim", vec![s(" \t\n\r\0\x0Bx \n")]),
        ("trim", vec![s("xxaxx"), s("x")]),
        ("trim", vec![s("abc"), s("a..c")]),
        ("ltrim", vec![s("  a ")]),
        ("rtrim", vec![s("  a ")]),
        ("str_repeat", vec![s("ab"), l(3)]),
        ("str_repeat", vec![s("ab"), l(0)]),
        ("str_repeat", vec![s("ab"), l(-1)]),
        ("str_repeat", vec![s("ab"), l(40000)]),
        ("substr", vec![s("abcdef"), l(1)]),
        ("substr", vec![s("abcdef"), l(-2)]),
        ("substr", vec![s("abcdef"), l(-10)]),
        ("substr", vec![s("abcdef"), l(10)]),
        ("substr", vec![s("abcdef"), l(6)]),
        ("substr", vec![s("abcdef"), l(1), l(-1)]),
        ("substr", vec![s("abcdef"), l(1), l(-10)]),
        ("substr", vec![s("abcdef"), l(2), l(100)]),
        ("substr", vec![s("abcdef"), l(0), Literal::Null]),
        ("strpos", vec![s("hello"), s("l")]),
        ("strpos", vec![s("hello"), s("")]),
        ("strpos", vec![s("hello"), s("l"), l(-2)]),
        ("strpos", vec![s("hello"), s("l"), l(10)]),
        ("stripos", vec![s("HeLLo"), s("ll")]),
        ("strrpos", vec![s("hello"), s("l")]),
        ("strrpos", vec![s("hello"), s("")]),
        ("str_contains", vec![s("abc"), s("")]),
        ("str_starts_with", vec![s("abc"), s("ab")]),
        ("str_ends_with", vec![s("abc"), s("bc")]),
        ("strstr", vec![s("user@host"), s("@")]),
        ("strstr", vec![s("user@host"), s("@"), Literal::True]),
        ("strstr", vec![s("user"), s("@")]),
        ("str_replace", vec![s("a"), s("o"), s("banana")]),
        ("str_replace", vec![s(""), s("o"), s("banana")]),
        ("str_replace", vec![s("aa"), s("a"), s("aaaaa")]),
        (
            "implode",
            vec![
                s(","),
                arr(vec![
                    l(1),
                    s("b"),
                    Literal::True,
                    Literal::Null,
                    Literal::False,
                ]),
            ],
        ),
        ("implode", vec![arr(vec![s("x"), s("y")])]),
        ("implode", vec![s(","), arr(vec![d(1.5)])]),
        ("implode", vec![s(","), arr(vec![arr(vec![])])]),
        ("explode", vec![s(","), s("a,b,,c")]),
        ("explode", vec![s(","), s("")]),
        ("explode", vec![s(","), s("a,b,c"), l(2)]),
        ("explode", vec![s(","), s("a,b,c"), l(-1)]),
        ("explode", vec![s(","), s("a,b,c"), l(-5)]),
        ("explode", vec![s(","), s("a,b,c"), l(0)]),
        ("explode", vec![s(""), s("a")]),
        ("bin2hex", vec![s("abc\0\u{ff}")]),
        ("hex2bin", vec![s("616263")]),
        ("hex2bin", vec![s("6g")]),
        ("hex2bin", vec![s("abc")]),
        ("strrev", vec![s("abc")]),
        ("crc32", vec![s("hello")]),
        ("base64_encode", vec![s("hello!?")]),
        ("base64_decode", vec![s("aGVsbG8=")]),
        ("base64_decode", vec![s("aGVsbG8")]),
        ("urlencode", vec![s("a b&c~é")]),
        ("rawurlencode", vec![s("a b&c~é")]),
        ("dechex", vec![l(255)]),
        ("dechex", vec![l(-1)]),
        ("decbin", vec![l(10)]),
        ("decoct", vec![l(8)]),
        ("hexdec", vec![s("ff")]),
        ("hexdec", vec![s("ffffffffffffffff")]),
        ("hexdec", vec![s("fg")]),
        ("bindec", vec![s("1010")]),
        ("octdec", vec![s("777")]),
        ("strcmp", vec![s("a"), s("b")]),
        ("strcmp", vec![s("b"), s("a")]),
        ("strcmp", vec![s("abc"), s("ab")]),
        ("strcasecmp", vec![s("HELLO"), s("hello")]),
        ("strncmp", vec![s("abcd"), s("abcf"), l(3)]),
        ("strncmp", vec![s("abcd"), s("abcf"), l(-1)]),
        ("str_split", vec![s("abcde"), l(2)]),
        ("str_split", vec![s("")]),
        ("str_split", vec![s("abc"), l(0)]),
        ("dirname", vec![s("/usr/local/lib")]),
        ("dirname", vec![s("file.txt")]),
        ("dirname", vec![s("/a/b/")]),
        ("dirname", vec![s("/")]),
        ("dirname", vec![s("a//b")]),
        ("dirname", vec![s("")]),
        ("dirname", vec![s("/a/b/c/d"), l(2)]),
        ("dirname", vec![s("/a/b"), l(5)]),
        ("dirname", vec![s("a/b"), l(0)]),
        ("phpversion", vec![s("xdebug")]),
        ("phpversion", vec![s("standard")]),
        ("phpversion", vec![s("SPL")]),
        ("phpversion", vec![]),
        ("version_compare", vec![s("8.2.36"), s("5.0.0")]),
        (
            "version_compare",
            vec![s("8.2.36"), s("8.1.0-dev"), s(">=")],
        ),
        ("version_compare", vec![s("5.5.0-dev"), s("5.5.0")]),
        ("version_compare", vec![s("1.0rc1"), s("1.0")]),
        ("version_compare", vec![s("1.0RC1"), s("1.0rc2")]),
        ("version_compare", vec![s("1.0"), s("1.0.0")]),
        ("version_compare", vec![s("1.0.0"), s("1.0")]),
        ("version_compare", vec![s("1.0a"), s("1.0b")]),
        ("version_compare", vec![s("1.0alpha"), s("1.0-dev")]),
        ("version_compare", vec![s("1.0pl1"), s("1.0")]),
        ("version_compare", vec![s("1.0p1"), s("1.0pl1")]),
        ("version_compare", vec![s("1.0"), s("1.0b")]),
        ("version_compare", vec![s("1.0"), s("1.0.b")]),
        ("version_compare", vec![s("1.10"), s("1.9")]),
        ("version_compare", vec![s("1..2"), s("1.2")]),
        ("version_compare", vec![s("1."), s("1")]),
        ("version_compare", vec![s("1"), s("1.")]),
        ("version_compare", vec![s(".5"), s("0.5")]),
        ("version_compare", vec![s("abc"), s("abd")]),
        ("version_compare", vec![s("x1"), s("1")]),
        ("version_compare", vec![s("#1"), s("1")]),
        ("version_compare", vec![s(""), s("1")]),
        ("version_compare", vec![s(""), s("")]),
        ("version_compare", vec![s("1_2+3"), s("1.2.3")]),
        ("version_compare", vec![s("1.2 3"), s("1.2.3")]),
        (
            "version_compare",
            vec![s("99999999999999999999"), s("9223372036854775807")],
        ),
        ("version_compare", vec![l(8), s("7.4")]),
        ("version_compare", vec![s("1.0"), s("1.1"), s("lt")]),
        ("version_compare", vec![s("1.0"), s("1.1"), s("ne")]),
        ("version_compare", vec![s("1.0"), s("1.0.0"), s("<>")]),
        ("version_compare", vec![s("1.0"), s("1.0"), s("=")]),
        ("version_compare", vec![s("1.0"), s("1.0"), s("le")]),
        ("version_compare", vec![s("1.0"), s("1.0"), Literal::Null]),
        ("version_compare", vec![s("1.0"), s("1.0"), s("bogus")]),
        (
            "serialize",
            vec![arr(vec![l(1), s("a\"b"), Literal::True, Literal::Null])],
        ),
        ("serialize", vec![map(vec![("k", l(-5))])]),
        ("array_keys", vec![map(vec![("a", l(1)), ("b", l(2))])]),
        ("array_keys", vec![arr(vec![l(1), s("1"), l(2)]), l(1)]),
        (
            "array_keys",
            vec![arr(vec![l(1), s("1"), l(2)]), l(1), Literal::True],
        ),
        ("array_values", vec![map(vec![("x", l(1)), ("y", l(2))])]),
        (
            "array_merge",
            vec![arr(vec![l(1)]), map(vec![("k", l(2))]), arr(vec![l(3)])],
        ),
        ("array_merge", vec![]),
        ("array_merge", vec![l(1)]),
        ("array_flip", vec![arr(vec![s("a"), s("5"), l(7)])]),
        ("array_flip", vec![arr(vec![d(1.5)])]),
        ("array_search", vec![l(2), arr(vec![l(1), l(2)])]),
        ("array_search", vec![s("1"), arr(vec![l(1)]), Literal::True]),
        ("array_key_first", vec![arr(vec![])]),
        ("in_array", vec![l(2), arr(vec![l(1), l(2)])]),
        ("in_array", vec![s("2"), arr(vec![l(1), l(2)])]),
        ("in_array", vec![s("abc"), arr(vec![l(0)])]),
        ("in_array", vec![s("1"), arr(vec![l(1)]), Literal::True]),
        (
            "array_unique",
            vec![arr(vec![l(1), s("1"), l(2), d(2.0), d(0.1), s("0.1")])],
        ),
        (
            "implode",
            vec![s(","), arr(vec![d(0.1), d(1e100), d(-0.0)])],
        ),
        ("array_key_last", vec![map(vec![("p", l(1)), ("q", l(2))])]),
        ("array_is_list", vec![arr(vec![l(1), l(2)])]),
        (
            "array_unique",
            vec![arr(vec![l(1), s("1"), l(2), Literal::True])],
        ),
        (
            "array_diff",
            vec![arr(vec![l(1), l(2), l(3)]), arr(vec![s("2")])],
        ),
        ("min", vec![l(3), l(1), l(2)]),
        ("min", vec![arr(vec![])]),
        ("min", vec![l(3)]),
        ("max", vec![s("apple"), s("banana")]),
        ("max", vec![arr(vec![l(1), l(2)]), arr(vec![l(1), l(3)])]),
        ("max", vec![l(0), s("a")]),
        ("max", vec![l(1), d(2.5), s("3")]),
        ("intdiv", vec![l(17), l(5)]),
        ("intdiv", vec![l(1), l(0)]),
        ("intdiv", vec![Literal::Long(i64::MIN), l(-1)]),
        ("pow", vec![l(2), l(10)]),
        ("pow", vec![l(2), l(-1)]),
        ("pow", vec![l(2), l(64)]),
        ("is_nan", vec![d(f64::NAN)]),
        ("is_infinite", vec![d(f64::INFINITY)]),
        ("is_finite", vec![l(1)]),
        ("pi", vec![]),
        ("function_exists", vec![s("strlen")]),
        ("extension_loaded", vec![s("standard")]),
        ("constant", vec![s("PHP_INT_SIZE")]),
        ("ini_get", vec![s("precision")]),
        // Without strict types an `int` parameter takes a bool, an integral float and a
        // string that is wholly a number (whitespace around it allowed); a fractional float
        // or float string deprecates, a leading-numeric or non-numeric string, a float out of
        // range or NAN is a TypeError, null deprecates: those stay calls.
        ("chr", vec![s("65")]),
        ("chr", vec![s(" 65\n")]),
        ("chr", vec![s("6.5e1")]),
        ("chr", vec![s("-191")]),
        ("chr", vec![s("-9223372036854775808")]),
        ("chr", vec![d(65.0)]),
        ("chr", vec![d(-0.0)]),
        ("chr", vec![Literal::True]),
        ("chr", vec![Literal::False]),
        ("chr", vec![d(65.5)]),
        ("chr", vec![s("65.5")]),
        ("chr", vec![s("65abc")]),
        ("chr", vec![s("0x41")]),
        ("chr", vec![s("")]),
        ("chr", vec![s("9223372036854775808")]),
        ("chr", vec![d(9.3e18)]),
        ("chr", vec![d(f64::NAN)]),
        ("chr", vec![Literal::Null]),
        ("chr", vec![arr(vec![])]),
        ("substr", vec![s("abcdef"), s("1")]),
        ("substr", vec![s("abcdef"), d(1.0), s(" 2")]),
        ("substr", vec![s("abcdef"), Literal::True, Literal::False]),
        ("substr", vec![s("abcdef"), l(1), d(2.5)]),
        ("substr", vec![s("abcdef"), Literal::Null]),
        ("strpos", vec![s("hello"), s("l"), s("2")]),
        ("strpos", vec![s("hello"), s("l"), d(2.0)]),
        ("strpos", vec![s("hello"), s("l"), Literal::True]),
        ("strpos", vec![s("hello"), s("l"), Literal::Null]),
        ("strpos", vec![s("hello"), s("l"), s("2x")]),
        ("stripos", vec![s("HELLO"), s("l"), s("-2")]),
        ("strncmp", vec![s("abc"), s("abd"), s("2")]),
        ("strncmp", vec![s("abc"), s("abd"), d(3.0)]),
        ("strncmp", vec![s("abc"), s("abd"), Literal::True]),
        ("strncmp", vec![s("abc"), s("abd"), s("-1")]),
        ("strncmp", vec![s("abc"), s("abd"), d(2.5)]),
        ("str_split", vec![s("abcdef"), s("4")]),
        ("str_split", vec![s("abcdef"), d(2.0)]),
        ("str_split", vec![s("abcdef"), Literal::True]),
        ("str_split", vec![s("abcdef"), Literal::False]),
        ("intdiv", vec![s("7"), s("2")]),
        ("intdiv", vec![d(7.0), l(2)]),
        ("intdiv", vec![Literal::True, Literal::True]),
        ("intdiv", vec![l(7), Literal::False]),
        ("intdiv", vec![d(7.5), l(2)]),
        ("intdiv", vec![s("7x"), l(2)]),
        ("decbin", vec![s("5")]),
        ("decbin", vec![d(-1.0)]),
        ("decbin", vec![Literal::True]),
        ("dechex", vec![s("-1")]),
        ("decoct", vec![s(" 8")]),
        ("dechex", vec![d(9.3e18)]),
        ("explode", vec![s(","), s("a,b,c"), s("2")]),
        ("explode", vec![s(","), s("a,b,c"), d(-1.0)]),
        ("explode", vec![s(","), s("a,b,c"), Literal::True]),
        ("explode", vec![s(","), s("a,b,c"), Literal::False]),
        ("explode", vec![s(","), s("a,b,c"), Literal::Null]),
        (
            "array_change_key_case",
            vec![map(vec![("a", l(1))]), s("1")],
        ),
        (
            "array_change_key_case",
            vec![map(vec![("a", l(1))]), Literal::True],
        ),
        (
            "array_change_key_case",
            vec![map(vec![("a", l(1))]), d(0.0)],
        ),
        (
            "array_change_key_case",
            vec![map(vec![("a", l(1))]), Literal::Null],
        ),
        ("array_unique", vec![arr(vec![l(1), s("1"), l(2)]), s("2")]),
        ("array_unique", vec![arr(vec![l(1), s("1"), l(2)]), d(2.0)]),
        (
            "array_unique",
            vec![arr(vec![l(1), s("1"), l(2)]), Literal::Null],
        ),
        ("dirname", vec![s("/a/b/c"), s("2")]),
        ("dirname", vec![s("/a/b/c"), Literal::True]),
        ("dirname", vec![s("/a/b/c"), d(2.0)]),
        ("dirname", vec![s("/a/b/c"), s("2x")]),
        ("count", vec![arr(vec![l(1), arr(vec![l(2)])]), s("1")]),
        // str_repeat is called only with exactly a string and an int (can_ct_eval_func_call),
        // whatever strict_types says.
        ("str_repeat", vec![s("ab"), s("3")]),
        ("str_repeat", vec![s("ab"), d(3.0)]),
        ("str_repeat", vec![l(5), l(3)]),
        ("str_repeat", vec![Literal::True, l(3)]),
        // A `bool` parameter takes an int, a float or a string as its truth value; null
        // deprecates, an array is a TypeError.
        ("array_search", vec![s("1"), arr(vec![l(1)]), l(1)]),
        ("array_search", vec![s("1"), arr(vec![l(1)]), l(0)]),
        ("array_search", vec![s("1"), arr(vec![l(1)]), s("abc")]),
        ("array_search", vec![s("1"), arr(vec![l(1)]), s("0")]),
        ("array_search", vec![s("1"), arr(vec![l(1)]), s("")]),
        ("array_search", vec![s("1"), arr(vec![l(1)]), s("0.0")]),
        ("array_search", vec![s("1"), arr(vec![l(1)]), d(-0.0)]),
        ("array_search", vec![s("1"), arr(vec![l(1)]), d(f64::NAN)]),
        ("array_search", vec![s("1"), arr(vec![l(1)]), Literal::Null]),
        ("array_search", vec![s("1"), arr(vec![l(1)]), arr(vec![])]),
        ("in_array", vec![s("1"), arr(vec![l(1)]), d(0.0)]),
        ("array_keys", vec![arr(vec![l(1), s("1")]), l(1), l(1)]),
        ("array_keys", vec![arr(vec![l(1), s("1")]), l(1), d(0.5)]),
        ("strstr", vec![s("user@host"), s("@"), l(1)]),
        ("strstr", vec![s("user@host"), s("@"), s("yes")]),
        ("strstr", vec![s("user@host"), s("@"), Literal::Null]),
        ("base64_decode", vec![s("aGVsbG8="), l(1)]),
        ("base64_decode", vec![s("aGVsbG8="), s("")]),
        ("base64_decode", vec![s("aGVsbG8="), Literal::Null]),
        // A `float` parameter takes an int in both modes, and without strict types a bool
        // or a numeric string (beyond the double range: INF).
        ("is_nan", vec![s("1")]),
        ("is_nan", vec![Literal::True]),
        ("is_finite", vec![s(" 1.5 ")]),
        ("is_finite", vec![Literal::False]),
        ("is_finite", vec![l(i64::MAX)]),
        ("is_infinite", vec![s("-1e400")]),
        ("is_nan", vec![s("NAN")]),
        ("is_nan", vec![s("1 x")]),
        ("is_nan", vec![Literal::Null]),
        ("is_nan", vec![arr(vec![])]),
        // Nullable parameters: null is the default.
        ("implode", vec![arr(vec![l(1), l(2)]), Literal::Null]),
        ("implode", vec![s(","), Literal::Null]),
        ("phpversion", vec![Literal::Null]),
        ("php_uname", vec![Literal::Null]),
        // str_replace on its own (every str_ireplace case is also run as str_replace below).
        (
            "str_replace",
            vec![
                arr(vec![s("ab"), s("1b")]),
                arr(vec![s("1"), s("Z")]),
                s("abb"),
            ],
        ),
        ("str_replace", vec![arr(vec![]), s("x"), s("abc")]),
        ("str_replace", vec![s("\u{c4}"), s("x"), s("\u{c4}\u{e4}")]),
        (
            "str_replace",
            vec![arr(vec![s("abc"), arr(vec![])]), s(""), s("abc")],
        ),
        (
            "str_replace",
            vec![arr(vec![s("a")]), arr(vec![arr(vec![])]), s("")],
        ),
        ("str_replace", vec![s("a"), s("b"), arr(vec![arr(vec![])])]),
        // Character masks: "x..y" is a range; a ".." that is not one warns.
        ("trim", vec![s("abcxd"), s("a..c")]),
        ("trim", vec![s("a.b"), s("....")]),
        ("trim", vec![s("abc"), s("c..a")]),
        ("trim", vec![s("abc"), s("a..")]),
        ("trim", vec![s("zab"), s("a..b..z")]),
        ("ucwords", vec![s("hello world"), s("a..f")]),
        ("ucwords", vec![s("hello world"), s("f..a")]),
        ("ucwords", vec![s("hello world"), s("..")]),
        // base64_decode skips what is not base64 (with `strict`, only whitespace, and then
        // it is false on bad input or padding).
        ("base64_decode", vec![s("aGVsbG8")]),
        ("base64_decode", vec![s("aGV sbG\n8=x")]),
        ("base64_decode", vec![s("=aGVs")]),
        ("base64_decode", vec![s("a")]),
        ("base64_decode", vec![s("YQ==YQ==")]),
        ("base64_decode", vec![s("aGV sbG\n8="), Literal::True]),
        ("base64_decode", vec![s("aGVsbG8= "), Literal::True]),
        ("base64_decode", vec![s("aGVsbA"), Literal::True]),
        ("base64_decode", vec![s("aGVsbG8=x"), Literal::True]),
        ("base64_decode", vec![s("aGV\x0bsbG8="), Literal::True]),
        ("base64_decode", vec![s("a"), Literal::True]),
        ("base64_decode", vec![s("aGVsbA="), Literal::True]),
        ("base64_decode", vec![s("aGVsbA==="), Literal::True]),
        ("base64_decode", vec![s("===="), Literal::True]),
        // hexdec/octdec/bindec skip surrounding whitespace and their base's prefix.
        ("hexdec", vec![s(" 0x1f\n")]),
        ("hexdec", vec![s("0X")]),
        ("octdec", vec![s("0o17")]),
        ("bindec", vec![s("0B11")]),
        ("bindec", vec![s("0x1")]),
        ("hexdec", vec![s(" 0 x1")]),
    ];
    // str_replace takes what str_ireplace takes (one code path, case-sensitive): every
    // str_ireplace case again as a str_replace one.
    let case_sensitive: Vec<_> = cases
        .iter()
        .filter(|(name, _)| *name == "str_ireplace")
        .map(|(_, args)| ("str_replace", args.clone()))
        .collect();
    cases.extend(case_sensitive);
    // Under strict types each parameter takes only its own type (a `float` one an int
    // too); nullable ones null.
    let strict_cases: Vec<(&str, Vec<Literal>)> = vec![
        ("chr", vec![l(65)]),
        ("chr", vec![s("65")]),
        ("chr", vec![d(65.0)]),
        ("chr", vec![Literal::True]),
        ("substr", vec![s("abcdef"), l(1), Literal::Null]),
        ("substr", vec![s("abcdef"), s("1")]),
        ("strpos", vec![s("hello"), s("l"), d(2.0)]),
        ("strncasecmp", vec![s("abc"), s("ABD"), s("2")]),
        ("str_split", vec![s("abc"), Literal::True]),
        ("intdiv", vec![l(7), l(2)]),
        ("intdiv", vec![d(7.0), l(2)]),
        ("explode", vec![s(","), s("a,b"), s("1")]),
        ("dirname", vec![s("/a/b/c"), l(2)]),
        ("dirname", vec![s("/a/b/c"), s("2")]),
        (
            "array_change_key_case",
            vec![map(vec![("a", l(1))]), Literal::True],
        ),
        ("array_unique", vec![arr(vec![l(1), s("1")]), s("2")]),
        ("count", vec![arr(vec![l(1)]), Literal::True]),
        ("str_repeat", vec![s("ab"), l(2)]),
        ("str_repeat", vec![l(5), l(2)]),
        (
            "array_search",
            vec![s("1"), arr(vec![l(1)]), Literal::False],
        ),
        ("array_search", vec![s("1"), arr(vec![l(1)]), l(0)]),
        ("array_keys", vec![arr(vec![l(1), s("1")]), l(1), s("1")]),
        ("strstr", vec![s("a@b"), s("@"), Literal::True]),
        ("strstr", vec![s("a@b"), s("@"), l(1)]),
        ("base64_decode", vec![s("aGVsbG8="), Literal::True]),
        ("base64_decode", vec![s("aGVsbG8="), l(1)]),
        ("is_nan", vec![l(1)]),
        ("is_finite", vec![d(1.5)]),
        ("is_nan", vec![s("1")]),
        ("is_nan", vec![Literal::True]),
        ("hexdec", vec![l(15)]),
        ("implode", vec![arr(vec![l(1), l(2)]), Literal::Null]),
        ("implode", vec![l(5), arr(vec![l(1), l(2)])]),
        ("phpversion", vec![Literal::Null]),
        (
            "str_replace",
            vec![arr(vec![l(1)]), arr(vec![s("b")]), s("11")],
        ),
        (
            "str_replace",
            vec![s("1"), s("b"), arr(vec![s("11"), l(1)])],
        ),
        ("str_replace", vec![l(1), s("b"), s("11")]),
        ("str_ireplace", vec![s("A"), s("b"), l(1)]),
    ];
    let folded = check_calls_against_php(&cases, false);
    assert!(folded > 80, "only {folded} cases folded");
    check_calls_against_php(&strict_cases, true);
}

/// PHP source of the call `name(args...)`.
fn php_call(name: &str, args: &[zend_ir::Literal]) -> String {
    let args: Vec<String> = args.iter().map(php_literal).collect();
    format!("{name}({})", args.join(", "))
}

/// The op_arrays of an OPcache dump by function name, each with whether it still calls a
/// function, for the dumps marked `stage` ("before optimizer" or "after optimizer").
fn calls_left(dump: &str, stage: &str) -> std::collections::HashMap<String, bool> {
    dump.split("\n\n")
        .filter(|block| block.contains(stage))
        .filter_map(|block| {
            let name = block.trim_start().lines().next()?.strip_suffix(':')?;
            Some((name.to_string(), block.contains("INIT_FCALL")))
        })
        .collect()
}

/// Checks `cases` against PHP 8.2 (with strict types when `strict`), returning how many are
/// evaluated here (with PHP 8.2's bugs reproduced). Each evaluated call, run by `php -n`,
/// must give the same value (`===`, same key order) without any warning, notice,
/// deprecation or exception; and each case
/// compiled by OPcache (as the `return` of its own function, at 0x7FFEBFFF) must be folded
/// exactly when it is evaluated here, unless PHP compiles it to something other than a call
/// (e.g. `count($a)` to COUNT).
fn check_calls_against_php(cases: &[(&str, Vec<zend_ir::Literal>)], strict: bool) -> usize {
    // PHP runs here with `-n` and OPcache: the modules of the optimizer's tables.
    zend_optimizer::environment::set_modules_are_tables(true);
    let header = if strict {
        "<?php\ndeclare(strict_types=1);\n"
    } else {
        "<?php\n"
    };
    let mut script = String::from(header);
    script.push_str(
        "$diag = 0; set_error_handler(function () use (&$diag) { $diag++; return true; });\n\
         function check($n, $expected, $f) { global $diag; $diag = 0;\n\
           try { $r = $f(); } catch (\\Throwable $e) { echo \"$n: threw \", get_class($e), \"\\n\"; return; }\n\
           if ($diag) { echo \"$n: diagnostic\\n\"; return; }\n\
           if ($r !== $expected) { echo \"$n: got \", var_export($r, true), \"\\n\"; return; }\n\
           echo \"$n: ok\\n\"; }\n",
    );
    let mut compiled = String::from(header);
    let mut ours = Vec::new();
    for (i, (name, args)) in cases.iter().enumerate() {
        let call = php_call(name, args);
        compiled.push_str(&format!("function f{i}() {{ return {call}; }}\n"));
        // PHP's folds are checked with its bugs reproduced (PHP_8_2 folds floats turned
        // into strings with the default precision, which the run below keeps); without
        // them zopt may only leave more calls to run time, never fold to another value.
        let eval = |bugs| sccp::ct_eval_func_call(name.as_bytes(), args, strict, false, bugs);
        let v = eval(zend_optimizer::PhpBugs::PHP_8_2);
        let fixed = eval(zend_optimizer::PhpBugs::NONE);
        assert!(
            fixed.is_none() || fixed == v,
            "{}: {fixed:?} without PHP's bugs, {v:?} with them",
            php_call(name, args)
        );
        if let Some(v) = &v {
            script.push_str(&format!(
                "check('{i} {name}', {}, function () {{ return {call}; }});\n",
                php_literal(v),
            ));
        }
        ours.push(v.is_some());
    }
    let folded = ours.iter().filter(|&&f| f).count();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calls.php");
    std::fs::write(&file, &script).unwrap();
    let out = std::process::Command::new("php")
        .arg("-n")
        .arg(&file)
        .output()
        .expect("php runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let bad: Vec<&str> = text.lines().filter(|l| !l.ends_with(": ok")).collect();
    assert_eq!(
        text.lines().count(),
        folded,
        "php output:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        bad.is_empty(),
        "folded differently from PHP (strict_types={strict}):\n{}",
        bad.join("\n")
    );

    let file = dir.path().join("compiled.php");
    std::fs::write(&file, &compiled).unwrap();
    let out = std::process::Command::new("php")
        .args([
            "-n",
            "-d",
            "zend_extension=opcache",
            "-d",
            "opcache.enable_cli=1",
            "-d",
            "opcache.file_update_protection=0",
            "-d",
            "opcache.jit=0",
            "-d",
            "opcache.optimization_level=0x7FFEBFFF",
            "-d",
            "opcache.opt_debug_level=0x30000",
            "-r",
            "opcache_compile_file($argv[1]);",
            "--",
        ])
        .arg(&file)
        .output()
        .expect("php runs");
    let dump = String::from_utf8_lossy(&out.stderr);
    let (before, after) = (
        calls_left(&dump, "(before optimizer)"),
        calls_left(&dump, "(after optimizer)"),
    );
    let mut differ = Vec::new();
    let mut calls = 0;
    for (i, (name, args)) in cases.iter().enumerate() {
        let f = format!("f{i}");
        if !before.get(&f).copied().unwrap_or(false) {
            continue;
        }
        calls += 1;
        let php_folds = !after.get(&f).copied().unwrap_or(true);
        if php_folds != ours[i] {
            differ.push(format!(
                "  {i} {}: PHP {}, zopt {}",
                php_call(name, args),
                if php_folds {
                    "folds"
                } else {
                    "leaves the call"
                },
                if ours[i] { "folds" } else { "leaves the call" },
            ));
        }
    }
    assert!(
        calls * 2 > cases.len(),
        "{calls} calls in PHP's dump:\n{dump}"
    );
    assert!(
        differ.is_empty(),
        "PHP's optimizer folds differently (strict_types={strict}):\n{}",
        differ.join("\n")
    );
    folded
}

/// PHP's `sccp` dump of `source` at `level` (PHP run live).
fn php_sccp_dump(source: &str, level: u32) -> Vec<u8> {
    let out = std::process::Command::new("php")
        .args([
            "-n",
            "-d",
            "zend_extension=opcache",
            "-d",
            "opcache.enable=1",
            "-d",
            "opcache.enable_cli=1",
            "-d",
            "opcache.file_update_protection=0",
            "-d",
            "opcache.jit=0",
            "-d",
            "opcache.memory_consumption=64",
            "-d",
            &format!("opcache.optimization_level={level:#x}"),
            "-d",
            "opcache.opt_debug_level=0x20000000",
            "-r",
            "opcache_compile_file($argv[1]);",
            "--",
            source,
        ])
        .output()
        .expect("php runs");
    out.stderr
}

/// The recorded Debian corpus (`$ZOPT_BENCH_CORPUS`, default bench-data/recordings, made
/// by tools/record-corpus.sh): our `sccp` dump of each op_array against PHP's, PHP run
/// live on each recording's source file. At least 99.5% of the op_arrays PHP prints
/// values for must be identical.
#[test]
fn corpus_sccp_values_are_php_s() {
    let dir = corpus::bench_corpus_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-data/recordings"),
    );
    let files = corpus::zop_files(&dir);
    if files.is_empty() {
        eprintln!(
            "no recordings under {}: the fixtures test covers SCCP (run tools/record-corpus.sh)",
            dir.display()
        );
        return;
    }
    let (mut same, mut total, mut files_same) = (0usize, 0usize, 0usize);
    let mut diffs = Vec::new();
    for file in &files {
        let script = corpus::read(file).unwrap_or_else(|e| panic!("{e}"));
        let source = script.main_op_array.filename.to_string();
        let php = php_sccp_dump(&source, 0xE0);
        let ours = sccp_dump(&script, 0xE0);
        let (a, b) = (split(&ours), split(&php));
        total += b.len().max(a.len());
        same += b.iter().filter(|x| a.contains(x)).count();
        if ours == php {
            files_same += 1;
        } else {
            for x in b.iter().filter(|x| !a.contains(x)) {
                diffs.push(format!("{source}: php:  {x}"));
            }
            for x in a.iter().filter(|x| !b.contains(x)) {
                diffs.push(format!("{source}: ours: {x}"));
            }
        }
    }
    eprintln!(
        "corpus sccp dumps: {files_same}/{} files, {same}/{total} op_arrays identical",
        files.len()
    );
    if let Some(out) = std::env::var_os("SCCP_CORPUS_DIFF") {
        let _ = std::fs::write(out, diffs.join("\n"));
    }
    assert!(
        same * 1000 >= total * 995,
        "{same}/{total} op_arrays identical:\n{}",
        diffs
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
