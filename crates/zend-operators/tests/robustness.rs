//! No input makes the crate panic, and constant-expression ASTs are never folded.

mod common;

use common::*;
use zend_ir::{Ast, AstBody, Literal, Opcode, PhpStr};
use zend_operators::*;

fn ast() -> Literal {
    Literal::Ast(Box::new(Ast {
        kind: zend_ir::ZEND_AST_CONSTANT,
        attr: 0,
        lineno: 1,
        body: AstBody::Zval(Literal::String(PhpStr::from("FOO"))),
    }))
}

#[test]
fn every_opcode_on_every_value_including_asts() {
    let mut vals = values();
    vals.push(ast());
    vals.push(Literal::Array(
        vec![(zend_ir::ArrayKey::Long(0), ast())].into(),
    ));
    let sample: Vec<Literal> = vals.iter().step_by(7).cloned().collect();
    for op in 0..=255u8 {
        let op = Opcode(op);
        for a in &vals {
            let has_ast = |v: &Literal| format!("{v:?}").contains("Ast");
            if has_ast(a) {
                assert_eq!(eval_unary_op(op, a), None);
            } else {
                let _ = eval_unary_op(op, a);
            }
            let _ = unary_op_produces_error(op, a);
            for b in &sample {
                let r = eval_binary_op(op, a, b);
                if has_ast(a) || has_ast(b) {
                    assert_eq!(r, None);
                }
            }
        }
    }
    for t in 0..40u32 {
        for a in &vals {
            let _ = eval_cast(t, a);
        }
        assert_eq!(eval_cast(t, &ast()), None);
    }
    for a in &vals {
        let _ = (
            is_true(a),
            get_long(a),
            get_double(a),
            get_string(a),
            eval_strlen(a),
        );
        for b in &vals {
            assert!((-1..=1).contains(&compare(a, b)));
            let _ = is_identical(a, b);
        }
    }
}

/// ZEND_HANDLE_NUMERIC_STR accepts exactly the canonical decimal spelling of a long.
#[test]
fn numeric_keys_are_canonical_longs() {
    let mut state = 0x1234_5678_9abc_def1u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet = b"0123456789-+ .e\x00x";
    for _ in 0..200_000 {
        let len = (next() % 22) as usize;
        let s: Vec<u8> = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let canonical = std::str::from_utf8(&s)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            .filter(|i| i.to_string().as_bytes() == s.as_slice());
        assert_eq!(
            handle_numeric_str(&s),
            canonical,
            "{:?}",
            String::from_utf8_lossy(&s)
        );
        let _ = is_numeric_string(&s, true);
        let _ = is_numeric_string(&s, false);
    }
    for i in [0, 1, -1, i64::MAX, i64::MIN, 10, -10] {
        assert_eq!(handle_numeric_str(i.to_string().as_bytes()), Some(i));
    }
}
