//! Round trips of the `.zop` text and binary forms over hand-built scripts.

mod common;

use common::*;
use zend_ir::zop::{from_binary, parse, print, to_binary};

fn roundtrip(script: &zend_ir::Script) {
    let text = print(script);
    let parsed = match parse(&text) {
        Ok(p) => p,
        Err(e) => panic!("{e}\n--- text ---\n{text}"),
    };
    assert_eq!(&parsed, script, "text:\n{text}");
    assert_eq!(print(&parsed), text, "not canonical");
    assert_eq!(&from_binary(&to_binary(script)).unwrap(), script);
}

#[test]
fn loop_roundtrips() {
    roundtrip(&loop_script());
}

#[test]
fn everything_roundtrips() {
    roundtrip(&everything_script());
}

#[test]
fn halt_offset_roundtrips() {
    let mut script = loop_script();
    assert!(
        !print(&script).contains("halt_offset"),
        "None prints no line"
    );
    for offset in [0, 421, u64::MAX] {
        script.compiler_halt_offset = Some(offset);
        let text = print(&script);
        assert!(
            text.contains(&format!("\nhalt_offset {offset}\n")),
            "{text}"
        );
        roundtrip(&script);
    }
}

/// `ZOP_WRITE_SEEDS=<dir> cargo test --test zop_roundtrip write_fuzz_seeds` writes the fuzz
/// seed corpus (`<dir>/zop_parse/*.zop`, `<dir>/zop_binary/*.bin`, the latter without the
/// magic the fuzz target prepends).
#[test]
fn write_fuzz_seeds() {
    let Some(dir) = std::env::var_os("ZOP_WRITE_SEEDS") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(dir.join("zop_parse")).unwrap();
    std::fs::create_dir_all(dir.join("zop_binary")).unwrap();
    for (name, script) in [("loop", loop_script()), ("everything", everything_script())] {
        std::fs::write(dir.join(format!("zop_parse/{name}.zop")), print(&script)).unwrap();
        std::fs::write(
            dir.join(format!("zop_binary/{name}.bin")),
            &to_binary(&script)[8..],
        )
        .unwrap();
    }
}

/// The example in the module documentation is printer output.
#[test]
fn doc_example_is_canonical() {
    let text = include_str!("../src/zop/example.zop");
    let script = parse(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(print(&script), text);
    assert_eq!(script.class_table[0].1.methods[0].1.opcodes.len(), 2);
}
