//! Property tests: arbitrary (bounded) scripts survive the text and binary forms exactly.

use proptest::prelude::*;
use zend_ir::zop::{from_binary, parse, print, to_binary};
use zend_ir::*;
use zend_ir_arbitrary::*;

proptest! {
    // 256 cases per property by default; PROPTEST_CASES=N asks for more.
    #[test]
    fn text_roundtrip(s in script()) {
        let text = print(&s);
        let parsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&parsed, &s, "text:\n{}", text);
        prop_assert_eq!(print(&parsed), text);
    }

    #[test]
    fn binary_roundtrip(s in script()) {
        let bytes = to_binary(&s);
        let decoded = from_binary(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&decoded, &s);
    }

    #[test]
    fn literal_roundtrip(l in literal()) {
        let mut main = OpArray {
            type_: ZEND_USER_FUNCTION, fn_flags: 0, function_name: None, scope: None,
            num_args: 0, required_num_args: 0, arg_info: vec![], return_info: None,
            attributes: vec![], T: 0, cache_size: 0, vars: vec![], opcodes: vec![],
            literals: vec![l.clone()], literal_extra: vec![], static_variables: None, live_range: vec![],
            try_catch_array: vec![], filename: PhpStr::default(), line_start: 0, line_end: 0,
            doc_comment: None, dynamic_func_defs: vec![],
        };
        main.opcodes.push(Op {
            opcode: opcode::ZEND_ECHO, op1: Operand::Const(LiteralId::new(0)), op2: Operand::Unused(0),
            result: Operand::Unused(0), extended_value: 0, lineno: 0, smart_branch: SmartBranch::None,
        });
        let s = Script { filename: PhpStr::default(), main_op_array: Box::new(main), function_table: vec![], class_table: vec![], compiler_halt_offset: None, warnings: vec![], early_bindings: vec![] };
        let text = print(&s);
        prop_assert_eq!(parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?, s);
    }

    /// Cutting a printed script anywhere gives an error or a script, never a panic.
    #[test]
    fn truncated_text_never_panics(s in script(), cut in any::<prop::sample::Index>()) {
        let text = print(&s);
        let at = cut.index(text.len() + 1);
        let bytes = &text.as_bytes()[..at];
        let _ = parse(&String::from_utf8_lossy(bytes));
    }

    /// Corrupting a binary script anywhere gives an error or a script, never a panic.
    #[test]
    fn corrupt_binary_never_panics(s in script(), at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let mut bytes = to_binary(&s);
        let i = at.index(bytes.len());
        bytes[i] = byte;
        let _ = from_binary(&bytes);
        let n = cut.index(bytes.len() + 1);
        let _ = from_binary(&bytes[..n]);
    }

    #[test]
    fn garbage_text_never_panics(text in "\\PC{0,200}") {
        let _ = parse(&text);
    }
}
