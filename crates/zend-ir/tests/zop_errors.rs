//! Malformed input: the text parser and the binary decoder report errors, never panic, never
//! recurse without bound and never allocate far beyond the input.

mod common;

use common::*;
use zend_ir::zop::{
    from_binary, parse, parse_named, print, to_binary, BinaryError, MAX_DEPTH, MAX_FUNC_NESTING,
};

const HEAD: &str = "zop 1\nscript \"f.php\"\n";

fn err(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("parsed"),
        Err(e) => e.to_string(),
    }
}

fn main_with(body: &str) -> String {
    format!("{HEAD}main {{\n{body}\n}}\n")
}

#[test]
fn truncation_at_every_byte_never_panics() {
    let text = print(&everything_script());
    let mut ok = 0;
    for i in 0..=text.len() {
        let prefix = String::from_utf8_lossy(&text.as_bytes()[..i]);
        if parse(&prefix).is_ok() {
            ok += 1;
        }
    }
    // Only the whole text (and the text minus its last newline) are complete.
    assert!(ok >= 1, "the whole text must parse");
}

#[test]
fn dropping_any_line_never_panics() {
    let text = print(&everything_script());
    let lines: Vec<&str> = text.lines().collect();
    for skip in 0..lines.len() {
        let mut t = String::new();
        for (i, l) in lines.iter().enumerate() {
            if i != skip {
                t.push_str(l);
                t.push('\n');
            }
        }
        let _ = parse(&t);
    }
}

#[test]
fn garbage_never_panics() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet = b"{}[]()#@$\"\\=:,;_ \n\t0123456789xTVCabcdefghijklmnopqrstuvwz-.\xc3\xa9";
    let sample = print(&everything_script());
    for _ in 0..2000 {
        let len = (next() % 200) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let _ = parse(&String::from_utf8_lossy(&bytes));
        // Garbage spliced into a valid text.
        let at = (next() as usize) % (sample.len() + 1);
        let mut spliced = sample.as_bytes()[..at].to_vec();
        spliced.extend_from_slice(&bytes);
        spliced.extend_from_slice(&sample.as_bytes()[at..]);
        let _ = parse(&String::from_utf8_lossy(&spliced));
    }
}

#[test]
fn error_positions_and_messages() {
    assert_eq!(
        err(&main_with("0000 ADD T1 foo")),
        "4:13: expected operand, found \"foo\""
    );
    let e = parse_named("x.zop", &main_with("0000 FROB T1"))
        .err()
        .unwrap();
    assert_eq!(e.to_string(), "x.zop:4:6: unknown opcode `FROB`");
    assert_eq!((e.line, e.column), (4, 6));
    assert_eq!(
        err(&main_with("0001 NOP")),
        "4:1: expected op number 0000, found \"0001\""
    );
    assert_eq!(
        err(&main_with("vars $a\n0000 ECHO CV0($b)")),
        "5:14: CV0 is $a in `vars`, not $b"
    );
    assert_eq!(
        err(&main_with("#0 = int(1)\n0000 ECHO #0:int(2)")),
        "5:14: literal #0 is int(1) in the literal table"
    );
    assert_eq!(
        err(&main_with("0000 ECHO #3:null")),
        "4:12: literal #3 is not in the literal table (0 entries)"
    );
    assert_eq!(
        err(&main_with("#0 = string(\"abc")),
        "4:13: unterminated string"
    );
    assert_eq!(
        err(&main_with("#0 = string(\"\\xZZ\")")),
        "4:14: expected two hex digits after `\\x`"
    );
    assert_eq!(
        err(&main_with("#0 = float(1.5:0x0000000000000001)")),
        "4:16: bits 0x0000000000000001 are not the double 1.5"
    );
    assert_eq!(
        err(&main_with("#0 = int(9223372036854775808)")),
        "4:10: integer out of range"
    );
    assert_eq!(
        err(&main_with("T 4294967296")),
        "4:3: number of temporaries out of range"
    );
    assert_eq!(
        err(&main_with("flags 1\nflags 2")),
        "5:1: duplicate `flags`"
    );
    assert_eq!(
        err(&format!("{HEAD}main {{\n")),
        "4:1: expected `}` closing the op_array, found end of file"
    );
    assert_eq!(
        err("zop 2\n"),
        "1:5: unsupported .zop version 2 (this reader knows 1)"
    );
    assert_eq!(
        err(""),
        "1:1: expected a `main { ... }` block, found end of file"
    );
    assert_eq!(
        err(&main_with("0000 NOP ext=1 ext=2")),
        "4:16: unexpected key `ext`"
    );
    assert_eq!(
        err(&main_with("#0 = ast(NOPE = null)")),
        "4:10: unknown AST kind `NOPE`"
    );
    // Columns count characters, not bytes.
    assert_eq!(
        err(&main_with("doc \"é\" x")),
        "4:9: expected end of line, found \"x\""
    );
}

#[test]
fn halt_offset_errors() {
    let block = "main {\n}\n";
    assert_eq!(
        err(&format!("{HEAD}halt_offset 1\nhalt_offset 2\n{block}")),
        "4:1: duplicate `halt_offset`"
    );
    assert_eq!(
        err(&format!("{HEAD}{block}halt_offset 1\n")),
        "5:1: `halt_offset` must come before every block"
    );
    assert_eq!(
        err(&format!("{HEAD}halt_offset 18446744073709551616\n{block}")),
        "3:13: halt offset out of range"
    );
    assert_eq!(
        err(&format!("{HEAD}halt_offset -1\n{block}")),
        "3:13: expected halt offset, found \"-\""
    );
    assert_eq!(
        err(&format!("{HEAD}halt_offset 1 2\n{block}")),
        "3:15: expected end of line, found \"2\""
    );
    let ok = parse(&format!("{HEAD}halt_offset 0x1A5\n{block}")).unwrap();
    assert_eq!(ok.compiler_halt_offset, Some(421));
}

#[test]
fn warning_errors() {
    let block = "main {\n}\n";
    assert_eq!(
        err(&format!("{HEAD}{block}warning 8192 3 \"a.php\" \"m\"\n")),
        "5:1: `warning` must come before every block"
    );
    assert_eq!(
        err(&format!(
            "{HEAD}warning 8192 4294967296 \"a.php\" \"m\"\n{block}"
        )),
        "3:14: line number out of range"
    );
    assert!(err(&format!("{HEAD}warning 8192 3 \"a.php\"\n{block}")).starts_with("3:"));
    let ok = parse(&format!(
        "{HEAD}warning 8192 3 \"a.php\" \"x\\n\"\nwarning 2 4 \"b.php\" \"y\"\n{block}"
    ))
    .unwrap();
    assert_eq!(ok.warnings.len(), 2);
    assert_eq!(
        (
            ok.warnings[0].type_,
            ok.warnings[0].lineno,
            &ok.warnings[0].message.0[..]
        ),
        (8192, 3, &b"x\n"[..])
    );
    assert_eq!(parse(&print(&ok)).unwrap(), ok);
}

#[test]
fn hand_written_text_normalizes() {
    let text = "; a comment\nscript \"a.php\"\nmain {\n  lines 3 9\n  vars $x\n  #0 = float(2)\n\
                0000 T1 = MUL CV0 #0 ; no annotations\n  0001   RETURN   T1   line=9\n  0002 JMP 0001\n}\n";
    let script = parse(text).unwrap();
    let oa = &script.main_op_array;
    assert_eq!(oa.opcodes[0].lineno, 3);
    assert_eq!(oa.opcodes[1].lineno, 9);
    assert_eq!(oa.opcodes[2].op1, jmp(1));
    let full = parse(&text.replace("RETURN", "ZEND_RETURN")).unwrap();
    assert_eq!(full, script);
    let numbered = parse(&text.replace("RETURN", "OP_62")).unwrap();
    assert_eq!(numbered, script);
    let printed = print(&script);
    assert!(
        printed.contains("0000 T1 = MUL CV0($x) #0:float(2.0)\n"),
        "{printed}"
    );
    assert_eq!(print(&parse(&printed).unwrap()), printed);
}

fn nested_array(depth: usize) -> String {
    format!("{}int(1){}", "array(0 => ".repeat(depth), ")".repeat(depth))
}

fn nested_ast(depth: usize) -> String {
    format!(
        "{}ast(ZVAL = null){}",
        "ast(BINARY_OP [".repeat(depth),
        "])".repeat(depth)
    )
}

fn nested_type(depth: usize) -> String {
    format!(
        "{}type(0x0){}",
        "type(0x0 [".repeat(depth),
        "])".repeat(depth)
    )
}

#[test]
fn nesting_is_capped() {
    // At the cap: accepted, and the result survives print, parse and the binary form.
    for text in [
        main_with(&format!("#0 = {}", nested_array(MAX_DEPTH))),
        main_with(&format!("#0 = {}", nested_ast(MAX_DEPTH - 2))),
        main_with(&format!("arg {}", nested_type(MAX_DEPTH))),
    ] {
        let script = parse(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parse(&print(&script)).unwrap(), script);
        assert_eq!(from_binary(&to_binary(&script)).unwrap(), script);
    }
    // Past the cap, and far past it: an error, not a stack overflow.
    for depth in [MAX_DEPTH + 1, 100_000] {
        for text in [
            main_with(&format!("#0 = {}", nested_array(depth))),
            main_with(&format!("#0 = {}", nested_ast(depth))),
            main_with(&format!("arg {}", nested_type(depth))),
        ] {
            let e = err(&text);
            assert!(e.contains("nesting deeper than 256 levels"), "{e}");
        }
    }
    // dynamic_func_defs nest too, and have their own, lower cap.
    let defs = |n: usize| {
        format!(
            "{HEAD}main {{\n{}{}}}\n",
            "dynamic_func_def 0 {\n".repeat(n),
            "}\n".repeat(n)
        )
    };
    let script = parse(&defs(MAX_FUNC_NESTING - 1)).unwrap();
    assert_eq!(from_binary(&to_binary(&script)).unwrap(), script);
    for n in [MAX_FUNC_NESTING, 100_000] {
        let e = err(&defs(n));
        assert!(e.contains("op_arrays nested deeper than 64 levels"), "{e}");
    }
}

/// The deepest script the text form accepts: a method holding dynamic_func_defs as deep
/// as allowed, the innermost holding the deepest constant AST allowed.
fn deepest_script_text() -> String {
    let defs = MAX_FUNC_NESTING - 1;
    let mut body = format!("#0 = {}\n", nested_ast(MAX_DEPTH - defs - 3));
    for _ in 0..defs {
        body = format!("dynamic_func_def 0 {{\n{body}}}\n");
    }
    format!("{HEAD}class \"c\" {{\nmethod \"m\" {{\n{body}}}\n}}\nmain {{\n}}\n")
}

#[test]
fn deepest_text_nesting_fits_the_binary_limits() {
    let text = deepest_script_text();
    let script = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parse(&print(&script)).unwrap(), script);
    assert_eq!(from_binary(&to_binary(&script)).unwrap(), script);
    // One level more in the AST is too deep for both forms.
    let deeper = text.replace("ast(ZVAL = null)", "ast(BINARY_OP [ast(ZVAL = null)])");
    assert!(err(&deeper).contains("nesting deeper than 256 levels"));
    // The binary form counts a method's own level where the text form does not, so it
    // takes one AST level more there; two more are too deep for it as well.
    let mut deep_script = script.clone();
    let mut oa = &mut deep_script.class_table[0].1.methods[0].1;
    while !oa.dynamic_func_defs.is_empty() {
        oa = &mut oa.dynamic_func_defs[0];
    }
    for _ in 0..2 {
        let zend_ir::Literal::Ast(ast) = &oa.literals[0] else {
            panic!("not an AST")
        };
        oa.literals[0] = zend_ir::Literal::Ast(Box::new(zend_ir::Ast {
            kind: 521,
            attr: 0,
            lineno: 0,
            body: zend_ir::AstBody::Children(vec![Some((**ast).clone())]),
        }));
    }
    let e = from_binary(&to_binary(&deep_script))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("nesting deeper than 256 levels"), "{e}");
}

#[test]
fn binary_rejects_bad_magic_and_trailing_bytes() {
    let bytes = to_binary(&loop_script());
    assert!(matches!(from_binary(b"nope"), Err(BinaryError::BadMagic)));
    assert!(matches!(
        from_binary(&bytes[1..]),
        Err(BinaryError::BadMagic)
    ));
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert!(matches!(
        from_binary(&trailing),
        Err(BinaryError::Decode(_))
    ));
    for n in 0..bytes.len() {
        assert!(
            from_binary(&bytes[..n]).is_err(),
            "prefix of {n} bytes decoded"
        );
    }
}

#[test]
fn binary_corruption_never_panics() {
    let bytes = to_binary(&everything_script());
    for i in 8..bytes.len() {
        for b in [0x00, 0x01, 0x7f, 0x80, 0xff] {
            let mut c = bytes.clone();
            c[i] = b;
            let _ = from_binary(&c);
        }
    }
}

#[test]
fn binary_huge_claimed_lengths_do_not_allocate() {
    // A Script whose filename claims u64::MAX bytes, and one whose vectors claim 2^40
    // elements: tiny inputs, errors, no huge allocation.
    let mut a = b"ZOPBIN\x00\x02".to_vec();
    a.extend_from_slice(&u64::MAX.to_le_bytes());
    assert!(from_binary(&a).is_err());
    let mut b = b"ZOPBIN\x00\x02".to_vec();
    b.extend_from_slice(&0u64.to_le_bytes()); // filename ""
    b.extend_from_slice(&[2]); // type_
    b.extend_from_slice(&0u32.to_le_bytes()); // fn_flags
    b.extend_from_slice(&[0, 0]); // function_name, scope: None
    b.extend_from_slice(&0u32.to_le_bytes()); // num_args
    b.extend_from_slice(&0u32.to_le_bytes()); // required_num_args
    b.extend_from_slice(&(1u64 << 40).to_le_bytes()); // arg_info: 2^40 entries
    assert!(from_binary(&b).is_err());
}

#[test]
fn binary_deep_nesting_is_an_error() {
    // main op_array whose first literal is Array([(Long(0), Array([(Long(0), ...)]))]) a
    // million levels deep: an error, not a stack overflow.
    let script = loop_script();
    let bytes = to_binary(&script);
    // Find where the literal table starts by encoding a script with a marker literal.
    let mut marked = script.clone();
    marked.main_op_array.literals = vec![zend_ir::Literal::Long(0x5a5a_5a5a_5a5a_5a5a)];
    let m = to_binary(&marked);
    let marker = 0x5a5a_5a5a_5a5a_5a5au64.to_le_bytes();
    let pos = m.windows(8).position(|w| w == marker).unwrap();
    // pos - 4 (Long tag) - 8 (vec len) is where the literal vector starts.
    let vec_start = pos - 4 - 8;
    let mut deep = m[..vec_start].to_vec();
    deep.extend_from_slice(&1u64.to_le_bytes());
    for _ in 0..1_000_000 {
        deep.extend_from_slice(&6u32.to_le_bytes()); // Literal::Array
        deep.extend_from_slice(&1u64.to_le_bytes()); // one element
        deep.extend_from_slice(&0u32.to_le_bytes()); // ArrayKey::Long
        deep.extend_from_slice(&0u64.to_le_bytes());
    }
    let e = from_binary(&deep).err().unwrap().to_string();
    assert!(e.contains("nesting deeper"), "{e}");
    drop(bytes);
}

/// The index types reserve `u32::MAX`: a text naming it is refused where it is, not
/// accepted into an op_array.
#[test]
fn max_index_numbers_are_errors() {
    assert_eq!(
        err(&main_with("0000 JMP @4294967295")),
        "4:11: op number out of range"
    );
    assert_eq!(
        err(&main_with("0000 ECHO #4294967295:null")),
        "4:12: literal number out of range"
    );
    assert_eq!(
        err(&main_with("0000 ECHO CV4294967295($a)")),
        "4:13: variable number out of range"
    );
    assert_eq!(
        err(&main_with("0000 ECHO T4294967295")),
        "4:12: variable number out of range"
    );
}

/// Every number of a text that uses every construct, replaced in turn by each boundary value:
/// parsing and decoding refuse what they cannot hold (a variable numbered u32::MAX once
/// panicked in the index type's constructor) and never panic.
#[test]
fn boundary_numbers_anywhere_never_panic() {
    let text = print(&everything_script());
    let path = std::path::Path::new("boundary.zop");
    let bytes = text.as_bytes();
    let mut numbers = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let end = (i..bytes.len())
            .find(|&j| !bytes[j].is_ascii_digit())
            .unwrap_or(bytes.len());
        for value in ["4294967295", "4294967294", "4294967296", "2147483648", "0"] {
            let mutated = format!("{}{value}{}", &text[..i], &text[end..]);
            let _ = zend_ir::corpus::decode(path, mutated.as_bytes());
        }
        numbers += 1;
        i = end;
    }
    assert!(numbers > 100, "only {numbers} numbers in the sample text");
}

/// Text that parses but points outside its op_array: decoding it as a recording fails, naming
/// the file, the function and the op; `parse` alone (the format) accepts it.
#[test]
fn out_of_bounds_numbers_are_read_errors() {
    let cases = [
        (
            "T 1\n0000 ECHO T3",
            "$_main: op 0: op1 TMP/VAR 3 outside 0..1",
        ),
        ("0000 ECHO #2", "$_main: op 0: op1 literal 2 of 0"),
        ("vars $a\n0000 ECHO CV1", "$_main: op 0: op1 CV 1 of 1"),
        ("0000 JMP 0007", "$_main: op 0: op1 jumps to op 7 of 1"),
    ];
    let path = std::path::Path::new("bad.zop");
    for (body, expected) in cases {
        let text = main_with(body);
        assert!(parse(&text).is_ok(), "the format itself is fine: {body}");
        let e = zend_ir::corpus::decode(path, text.as_bytes()).unwrap_err();
        assert_eq!(e.to_string(), format!("bad.zop: {expected}"), "{body}");
    }
    // Every op_array is checked, a closure's too.
    let mut script = loop_script();
    assert_eq!(zend_ir::corpus::check_bounds(&script), Ok(()));
    let mut closure = (*script.main_op_array).clone();
    closure.function_name = Some(s("{closure}"));
    closure.opcodes[0].op2 = zend_ir::Operand::Const(zend_ir::LiteralId::new(9999));
    let name = closure.display_name();
    script
        .main_op_array
        .dynamic_func_defs
        .push(Box::new(closure));
    let (function, e) = zend_ir::corpus::check_bounds(&script).unwrap_err();
    assert_eq!((function, e.op), (name, Some(zend_ir::OpNum::new(0))));
    assert!(e.message.starts_with("op2 literal 9999 of "), "{e}");
}
