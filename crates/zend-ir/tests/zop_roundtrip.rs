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
fn show() {
    println!("{}", print(&everything_script()));
}
