//! `zopt dump --format json`: on every fixture recording the document has exactly the
//! fields of the `zopt-analysis` schema, version 1 (crates/zopt/src/json.rs; strict
//! structs, unknown fields refused), and every analysed function's SSA variables, rebuilt
//! from the JSON (name, NOVAL/NOESC, type mask and class, range), are PHP's own types dump
//! at optimization level 0x60 (the fixture goldens); the functions PHP prints no types for
//! are those the JSON marks refused. The command line, on a .php file, gives the same form.

mod common;

use common::{extension, workspace_root};

use serde::Deserialize;
use std::collections::BTreeMap;
use std::process::Command;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Document {
    format: String,
    version: u32,
    optimization_level: String,
    functions: Vec<Function>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Function {
    index: usize,
    name: String,
    refused: Option<String>,
    blocks: Option<Vec<Block>>,
    vars: Option<Vec<Var>>,
    phis: Option<Vec<Phi>>,
    #[serde(rename = "return")]
    return_: Option<Option<Return>>,
    calls: Option<Vec<Call>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Block {
    id: u32,
    start: u32,
    len: u32,
    reachable: bool,
    successors: Vec<u32>,
    predecessors: Vec<u32>,
    idom: Option<u32>,
    loop_header: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Class {
    name: String,
    instanceof: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Range {
    min: i64,
    max: i64,
    underflow: bool,
    overflow: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Var {
    id: usize,
    name: String,
    definition: Option<u32>,
    phi: bool,
    #[serde(rename = "type")]
    type_: String,
    mask: u32,
    class: Option<Class>,
    range: Option<Range>,
    no_val: bool,
    escape: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Phi {
    var: u32,
    block: u32,
    pi: Option<u32>,
    sources: Vec<Option<u32>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Return {
    #[serde(rename = "type")]
    type_: String,
    mask: u32,
    class: Option<Class>,
    range: Option<Range>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Call {
    init: u32,
    args: Vec<u32>,
    call: Option<u32>,
    callee: Option<u32>,
}

/// PHP's line for one SSA variable, as rebuilt from the JSON.
fn php_line(var: &Var) -> String {
    let mut out = format!("#{}.{}", var.id, var.name).into_bytes();
    if var.no_val {
        out.extend_from_slice(b" NOVAL");
    }
    if var.escape == "no_escape" {
        out.extend_from_slice(b" NOESC");
    }
    let class = var
        .class
        .as_ref()
        .map(|c| (c.name.as_bytes(), c.instanceof));
    zend_ir::dump::dump_type_info(&mut out, var.mask, class, 0);
    if let Some(r) = &var.range {
        let range = zend_ir::dump::SsaRange {
            min: r.min,
            max: r.max,
            underflow: r.underflow,
            overflow: r.overflow,
        };
        zend_ir::dump::dump_range(&mut out, &range);
    }
    String::from_utf8(out).unwrap()
}

/// PHP's types dump as `function -> lines`, the SCC numbers cut off.
fn php_types(text: &str) -> Vec<(String, Vec<String>)> {
    let mut functions: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("SSA Variable for \"") {
            functions.push((name.trim_end_matches('"').to_string(), Vec::new()));
        } else if let Some(var) = line.strip_prefix("    #") {
            let var = var.split(" *SCC=").next().unwrap();
            let var = var.split("  SCC=").next().unwrap();
            functions.last_mut().unwrap().1.push(format!("#{var}"));
        }
    }
    functions
}

/// The name as PHP's dump prints it (`%s`: each part up to its first NUL, as in
/// `class@anonymous\0/path:12$0::__construct`). The JSON keeps the whole name.
fn c_name(name: &str) -> String {
    let parts: Vec<&str> = name
        .split("::")
        .map(|p| p.split('\0').next().unwrap())
        .collect();
    parts.join("::")
}

fn check(doc: &Document) -> Vec<(String, Vec<String>)> {
    assert_eq!(doc.format, "zopt-analysis");
    assert_eq!(doc.version, 1);
    let mut ours = Vec::new();
    for (i, f) in doc.functions.iter().enumerate() {
        assert_eq!(f.index, i);
        match (&f.refused, &f.vars) {
            (Some(reason), None) => {
                assert!(!reason.is_empty());
                assert!(f.blocks.is_none() && f.phis.is_none() && f.calls.is_none());
            }
            (None, Some(vars)) => {
                assert!(f.blocks.as_ref().is_some_and(|b| !b.is_empty()));
                assert!(f.return_.is_some() && f.phis.is_some() && f.calls.is_some());
                for v in vars {
                    if v.class.is_none() {
                        let mut text = Vec::new();
                        zend_ir::dump::dump_type_info(&mut text, v.mask, None, 0);
                        assert_eq!(format!(" [{}]", v.type_).as_bytes(), text.as_slice());
                    }
                }
                ours.push((c_name(&f.name), vars.iter().map(php_line).collect()));
            }
            _ => panic!("{}: either refused or analysed", f.name),
        }
    }
    ours
}

#[test]
fn every_fixture_matches_the_schema_and_phps_types() {
    let expected = workspace_root().join("fixtures/expected");
    let mut checked = BTreeMap::new();
    for zop in zend_ir::corpus::zop_files(&expected) {
        let golden = zop.parent().unwrap().join("opt-0x60/types.txt");
        let Ok(php) = std::fs::read(&golden) else {
            continue;
        };
        let script = zend_ir::corpus::read(&zop).unwrap();
        let value = zopt::json::analysis(&script, 0x60);
        let doc: Document = serde_json::from_value(value)
            .unwrap_or_else(|e| panic!("{}: not the schema: {e}", zop.display()));
        let ours = check(&doc);
        let php = php_types(&String::from_utf8_lossy(&php));
        assert_eq!(ours, php, "{}", zop.display());
        checked.insert(zop, ours.len());
    }
    assert!(checked.len() > 150, "only {} fixtures", checked.len());
}

#[test]
fn the_command_line_prints_the_schema_for_a_php_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.php");
    std::fs::write(
        &file,
        "<?php\nfunction f(int $a) { return $a + 1; }\n\
         function g($x) { try { return f($x); } catch (Exception $e) { return 0; } }\n\
         echo f(2), g(3);\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_zopt"))
        .args(["dump", "--format", "json", "--level", "types"])
        .args(["--optimization-level", "0x60"])
        .arg(&file)
        .env("ZOPT_PHP_EXTENSION", extension())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Document = serde_json::from_slice(&out.stdout).unwrap();
    check(&doc);
    let names: Vec<&str> = doc.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["$_main", "f", "g"]);
    assert!(doc.functions[2]
        .refused
        .as_deref()
        .unwrap()
        .contains("try/catch"));
    // f's call site in $_main resolves to f (op_array 1).
    let calls = doc.functions[0].calls.as_ref().unwrap();
    assert!(calls.iter().any(|c| c.callee == Some(1)));
}
