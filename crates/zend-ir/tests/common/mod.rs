//! Hand-built scripts that use every feature of the model, shared by the `.zop` tests.

#![allow(dead_code)]

use zend_ir::opcode::*;
use zend_ir::*;

pub fn s(text: &str) -> PhpStr {
    PhpStr::from(text)
}

pub fn op(opcode: Opcode, result: Operand, op1: Operand, op2: Operand, lineno: u32) -> Op {
    Op {
        opcode,
        op1,
        op2,
        result,
        extended_value: 0,
        lineno,
        smart_branch: SmartBranch::None,
    }
}

pub const U: Operand = Operand::Unused(0);

pub fn t(n: u32) -> Operand {
    Operand::TmpVar(VarNum::new(n))
}
pub fn v(n: u32) -> Operand {
    Operand::Var(VarNum::new(n))
}
pub fn cv(n: u32) -> Operand {
    Operand::Cv(VarNum::new(n))
}
pub fn c(n: u32) -> Operand {
    Operand::Const(LiteralId::new(n))
}
pub fn jmp(n: u32) -> Operand {
    Operand::JmpAddr(OpNum::new(n))
}

pub fn empty_op_array(name: Option<&str>, file: &str) -> OpArray {
    OpArray {
        type_: ZEND_USER_FUNCTION,
        fn_flags: 0,
        function_name: name.map(s),
        scope: None,
        num_args: 0,
        required_num_args: 0,
        arg_info: vec![],
        return_info: None,
        attributes: vec![],
        T: 0,
        cache_size: 0,
        vars: vec![],
        opcodes: vec![],
        literals: vec![],
        literal_extra: vec![],
        static_variables: None,
        live_range: vec![],
        try_catch_array: vec![],
        filename: s(file),
        line_start: 1,
        line_end: 1,
        doc_comment: None,
        dynamic_func_defs: vec![],
    }
}

pub fn int_type() -> ZendType {
    ZendType {
        type_mask: 1 << 4,
        names: TypeNames::None,
    }
}

/// A loop with a smart branch, like `for ($i = 0; $i < 10;) $x = $i * 2.0;` (the op
/// stream need not be meaningful for the format).
pub fn loop_script() -> Script {
    let file = "/tmp/loop.php";
    let mut main = empty_op_array(None, file);
    main.vars = vec![s("i"), s("x")];
    main.T = 4;
    main.line_end = 6;
    main.literals = vec![
        Literal::Long(0),
        Literal::Double(PhpDouble::new(2.0)),
        Literal::Long(10),
        Literal::Long(1),
    ];
    let mut is_smaller = op(ZEND_IS_SMALLER, t(3), cv(0), c(2), 3);
    is_smaller.smart_branch = SmartBranch::Jmpnz;
    main.opcodes = vec![
        op(ZEND_ASSIGN, U, cv(0), c(0), 3),
        op(ZEND_JMP, U, jmp(4), U, 3),
        op(ZEND_MUL, t(2), cv(0), c(1), 4),
        op(ZEND_ASSIGN, U, cv(1), t(2), 4),
        is_smaller,
        op(ZEND_JMPNZ, U, t(3), jmp(2), 3),
        op(ZEND_RETURN, U, c(3), U, 6),
    ];
    Script {
        filename: s(file),
        main_op_array: Box::new(main),
        function_table: vec![],
        class_table: vec![],
        compiler_halt_offset: None,
        warnings: Vec::new(),
        early_bindings: Vec::new(),
    }
}

fn nested_ast() -> Ast {
    Ast {
        kind: 521, // BINARY_OP
        attr: 1,
        lineno: 7,
        body: AstBody::Children(vec![
            Some(Ast {
                kind: ZEND_AST_CONSTANT,
                attr: 0,
                lineno: 7,
                body: AstBody::Zval(Literal::String(s("Foo\\BAR"))),
            }),
            None,
            Some(Ast {
                kind: ZEND_AST_ZVAL,
                attr: 0,
                lineno: 7,
                body: AstBody::Zval(Literal::Array(
                    vec![(
                        ArrayKey::Long(-3),
                        Literal::Ast(Box::new(Ast {
                            kind: 999,
                            attr: 65535,
                            lineno: 0,
                            body: AstBody::Children(vec![]),
                        })),
                    )]
                    .into(),
                )),
            }),
        ]),
    }
}

fn attribute(name: &str, lc: &str, args: Vec<AttributeArg>) -> Attribute {
    Attribute {
        name: s(name),
        lcname: s(lc),
        flags: 0,
        lineno: 5,
        offset: 0,
        args,
    }
}

/// A script that uses every field and every variant of the model, with awkward values.
pub fn everything_script() -> Script {
    let file = "/srv/app/every thing.php";
    let mut script = loop_script();
    script.filename = s(file);
    script.main_op_array.filename = s(file);
    script.compiler_halt_offset = Some(u64::from(u32::MAX) + 7);
    script.warnings = vec![
        ErrorInfo {
            type_: 8192,
            lineno: 3,
            filename: s(file),
            message: s("Using ${var} in strings is deprecated, use {$var} instead"),
        },
        ErrorInfo {
            type_: u32::MAX,
            lineno: u32::MAX,
            filename: s(""),
            message: PhpStr(b"\0bytes \xff \"quoted\"\n".to_vec()),
        },
    ];
    let main = &mut script.main_op_array;
    main.fn_flags = ZEND_ACC_STRICT_TYPES | 1 << 9;
    main.doc_comment = Some(s("/** main */"));
    main.cache_size = 24;
    // Odd literals: unused, duplicate, awkward doubles and strings, nested arrays, ASTs.
    main.literals.extend([
        Literal::Long(0),
        Literal::Null,
        Literal::True,
        Literal::False,
        Literal::Long(i64::MIN),
        Literal::Long(i64::MAX),
        Literal::Double(PhpDouble::new(-0.0)),
        Literal::Double(PhpDouble::new(0.1)),
        Literal::Double(PhpDouble::new(f64::INFINITY)),
        Literal::Double(PhpDouble::new(f64::NEG_INFINITY)),
        Literal::Double(PhpDouble::new(f64::NAN)),
        Literal::Double(PhpDouble(0xfff8_0000_0000_0000)),
        Literal::Double(PhpDouble(0x7ff0_0000_dead_beef)),
        Literal::Double(PhpDouble(1)),
        Literal::Double(PhpDouble::new(1e300)),
        Literal::Double(PhpDouble::new(123456789.125)),
        Literal::String(s("")),
        Literal::String(PhpStr(
            b"quote\" backslash\\ nul\0 tab\t nl\n cr\r high\xff\x80 utf8 \xc3\xa9 ;comment \\x41 \\n end\\"
                .to_vec(),
        )),
        // nNextFreeElement other than the keys give: after an unset, and `[]` given a
        // negative key.
        Literal::Array(PhpArray::with_next_free(vec![(ArrayKey::Long(0), Literal::True)], 2)),
        Literal::Array(PhpArray::with_next_free(vec![(ArrayKey::Long(-5), Literal::Null)], 0)),
        Literal::Array(PhpArray::with_next_free(vec![], i64::MIN)),
        Literal::String(s("Foo\\Bar\\Baz")),
        Literal::Array(vec![].into()),
        Literal::Array(vec![
            (ArrayKey::Long(0), Literal::Long(1)),
            (ArrayKey::Long(-7), Literal::String(s("x"))),
            (ArrayKey::Str(s("key \"q\"")), Literal::Array(vec![(
                ArrayKey::Str(PhpStr(b"\x00bin".to_vec())),
                Literal::Null,
            )].into())),
            (ArrayKey::Long(i64::MIN), Literal::Ast(Box::new(nested_ast()))),
        ].into()),
        Literal::Ast(Box::new(nested_ast())),
    ]);
    let n = main.literals.len() as u32;
    let mut fe = op(ZEND_FE_FETCH_R, v(5), v(4), U, 5);
    fe.extended_value = 8;
    let mut fe_cv = op(ZEND_FE_FETCH_RW, U, v(4), cv(1), 5);
    fe_cv.extended_value = 3;
    let mut weird = op(Opcode(250), Operand::Unused(7), c(n - 1), jmp(1), 9);
    weird.extended_value = 0xffff_ffff;
    weird.smart_branch = SmartBranch::Jmpz;
    let mut init_fcall = op(ZEND_INIT_FCALL, U, Operand::Unused(2), c(n - 4), 8);
    init_fcall.extended_value = 96;
    main.opcodes.extend([
        op(ZEND_NOP, U, U, U, 8),
        init_fcall,
        fe,
        fe_cv,
        op(ZEND_JMP, U, Operand::Unused(5), U, 8),
        op(ZEND_JMPZ, U, t(3), Operand::Unused(0), 8),
        op(ZEND_NOP, U, U, jmp(3), 8),
        op(ZEND_ADD, c(0), cv(77), c(1000), 8),
        op(ZEND_ECHO, U, U, Operand::Unused(9), 8),
        weird,
        op(ZEND_RETURN, U, c(n - 2), U, 0),
    ]);
    main.live_range = vec![
        LiveRange {
            var: VarNum::new(4),
            kind: ZEND_LIVE_LOOP,
            start: OpNum::new(9),
            end: OpNum::new(11),
        },
        LiveRange {
            var: VarNum::new(5),
            kind: 6,
            start: OpNum::new(0),
            end: OpNum::new(0),
        },
    ];
    main.try_catch_array = vec![
        TryCatchElement {
            try_op: OpNum::new(1),
            catch_op: Some(OpNum::new(3)),
            finally_op: None,
            finally_end: None,
        },
        TryCatchElement {
            try_op: OpNum::new(0),
            catch_op: None,
            finally_op: Some(OpNum::new(4)),
            finally_end: Some(OpNum::new(6)),
        },
    ];
    main.static_variables = Some(vec![]);

    // A closure, with its own closure, as dynamic_func_defs.
    let mut closure = empty_op_array(Some("{closure}"), file);
    closure.fn_flags = 1 << 22;
    closure.vars = vec![s("a"), PhpStr(b"not an ident".to_vec()), s("this")];
    closure.static_variables = Some(vec![
        (s("a"), Literal::Null),
        (PhpStr(b"\xffweird".to_vec()), Literal::Long(3)),
    ]);
    closure.opcodes = vec![op(ZEND_BIND_STATIC, U, cv(0), U, 2)];
    let mut inner = empty_op_array(Some("{closure}"), "/other/file.php");
    inner.type_ = ZEND_EVAL_CODE;
    inner.line_start = 0;
    closure.dynamic_func_defs = vec![Box::new(inner)];
    let mut arrow = empty_op_array(Some("{closure}"), file);
    arrow.type_ = 9;
    main.dynamic_func_defs = vec![Box::new(closure), Box::new(arrow)];

    // A function with typed, by-ref, variadic and defaulted arguments.
    let mut func = empty_op_array(Some("Add"), file);
    func.fn_flags = ZEND_ACC_HAS_RETURN_TYPE | ZEND_ACC_VARIADIC;
    func.num_args = 2;
    func.required_num_args = 1;
    func.vars = vec![s("a"), s("b"), s("rest")];
    func.arg_info = vec![
        ArgInfo {
            name: Some(s("a")),
            type_: int_type(),
            default_value: None,
        },
        ArgInfo {
            name: Some(s("b")),
            type_: ZendType {
                type_mask: _ZEND_TYPE_NAME_BIT | 2 | (1 << _ZEND_SEND_MODE_SHIFT),
                names: TypeNames::Name(s("Foo\\Bar")),
            },
            default_value: Some(s("null")),
        },
        ArgInfo {
            name: Some(s("rest")),
            type_: ZendType {
                type_mask: _ZEND_TYPE_LIST_BIT | _ZEND_TYPE_UNION_BIT | _ZEND_IS_VARIADIC_BIT,
                names: TypeNames::List(vec![
                    ZendType {
                        type_mask: _ZEND_TYPE_NAME_BIT,
                        names: TypeNames::Name(s("A")),
                    },
                    ZendType {
                        type_mask: _ZEND_TYPE_LIST_BIT | _ZEND_TYPE_INTERSECTION_BIT,
                        names: TypeNames::List(vec![
                            ZendType {
                                type_mask: _ZEND_TYPE_NAME_BIT,
                                names: TypeNames::Name(s("B")),
                            },
                            ZendType {
                                type_mask: _ZEND_TYPE_NAME_BIT,
                                names: TypeNames::Name(s("C")),
                            },
                        ]),
                    },
                    ZendType::default(),
                    ZendType {
                        type_mask: _ZEND_TYPE_LIST_BIT,
                        names: TypeNames::List(vec![]),
                    },
                ]),
            },
            default_value: None,
        },
        ArgInfo {
            name: None,
            type_: ZendType::default(),
            default_value: None,
        },
    ];
    func.return_info = Some(ArgInfo {
        name: None,
        type_: ZendType {
            type_mask: 0x3fe | _ZEND_TYPE_NULLABLE_BIT,
            names: TypeNames::None,
        },
        default_value: Some(s("")),
    });
    func.attributes = vec![
        attribute(
            "Deprecated",
            "deprecated",
            vec![
                AttributeArg {
                    name: None,
                    value: Literal::String(s("use x")),
                },
                AttributeArg {
                    name: Some(s("since")),
                    value: Literal::Double(PhpDouble::new(8.2)),
                },
                AttributeArg {
                    name: Some(s("null")),
                    value: Literal::Null,
                },
                AttributeArg {
                    name: Some(PhpStr(b"odd name".to_vec())),
                    value: Literal::Ast(Box::new(nested_ast())),
                },
            ],
        ),
        Attribute {
            name: s("Param\\Attr"),
            lcname: s("WRONG-lc"),
            flags: 0x40,
            lineno: 0,
            offset: 2,
            args: vec![],
        },
    ];
    func.opcodes = vec![
        op(ZEND_RECV, cv(0), Operand::Unused(1), U, 3),
        op(ZEND_RECV_INIT, cv(1), Operand::Unused(2), c(0), 3),
        op(ZEND_RECV_VARIADIC, cv(2), Operand::Unused(3), U, 3),
        op(ZEND_RETURN, U, cv(0), U, 4),
    ];
    func.literals = vec![Literal::Null];
    func.T = 1;

    // A class with everything.
    let mut method = empty_op_array(Some("run"), file);
    method.scope = Some(s("App\\Thing"));
    method.fn_flags = 1 | 1 << 4;
    method.opcodes = vec![op(ZEND_RETURN, U, U, U, 12)];
    let mut abstract_method = empty_op_array(Some("abs"), file);
    abstract_method.scope = Some(s("App\\Base"));
    abstract_method.fn_flags = ZEND_ACC_ABSTRACT;
    let ce = ClassEntry {
        name: s("App\\Thing"),
        parent_name: Some(s("App\\Base")),
        ce_flags: 1 << 5 | 1 << 28 | 1 << 21,
        refcount: 2,
        interface_names: vec![
            ClassName {
                name: s("Countable"),
                lc_name: s("countable"),
            },
            ClassName {
                name: s("Weird"),
                lc_name: s("not-lower"),
            },
        ],
        trait_names: vec![ClassName {
            name: s("App\\T"),
            lc_name: s("app\\t"),
        }],
        trait_aliases: vec![
            TraitAlias {
                method: TraitMethodRef {
                    method_name: s("m"),
                    class_name: Some(s("App\\T")),
                },
                alias: Some(s("n")),
                modifiers: 4,
            },
            TraitAlias {
                method: TraitMethodRef {
                    method_name: s("m2"),
                    class_name: None,
                },
                alias: None,
                modifiers: 0,
            },
        ],
        trait_precedences: vec![
            TraitPrecedence {
                method: TraitMethodRef {
                    method_name: s("m"),
                    class_name: Some(s("App\\T")),
                },
                exclude_class_names: vec![s("App\\U"), s("V")],
            },
            TraitPrecedence {
                method: TraitMethodRef {
                    method_name: s("z"),
                    class_name: None,
                },
                exclude_class_names: vec![],
            },
        ],
        constants: vec![
            ClassConstant {
                name: s("A"),
                value: Literal::Long(1),
                flags: 1,
                doc_comment: None,
                attributes: vec![],
                ce: s("App\\Thing"),
            },
            ClassConstant {
                name: s("CASE"),
                value: Literal::Ast(Box::new(nested_ast())),
                flags: 1 | 1 << 6,
                doc_comment: Some(s("/** doc */")),
                attributes: vec![attribute("X", "x", vec![])],
                ce: s("App\\Base"),
            },
            ClassConstant {
                name: s(""),
                value: Literal::Null,
                flags: 0,
                doc_comment: None,
                attributes: vec![],
                ce: s("App\\Thing"),
            },
        ],
        properties: vec![
            PropertyInfo {
                name: s("x"),
                flags: 1,
                offset: 40,
                type_: int_type(),
                default: Some(Literal::Long(0)),
                doc_comment: None,
                attributes: vec![],
                ce: s("App\\Thing"),
            },
            PropertyInfo {
                name: PhpStr(b"\0App\\Thing\0secret".to_vec()),
                flags: 4 | 1 << 7,
                offset: 56,
                type_: ZendType::default(),
                default: None,
                doc_comment: Some(s("/** @var int */")),
                attributes: vec![attribute("A", "a", vec![]), attribute("B", "b", vec![])],
                ce: s("App\\Base"),
            },
        ],
        methods: vec![
            (s("run"), Box::new(method)),
            (s("abs"), Box::new(abstract_method)),
        ],
        // A preloaded (linked) class's inherited internal method, between the two.
        method_stubs: vec![MethodStub {
            position: 1,
            key: s("getmessage"),
            scope: s("Exception"),
            fn_flags: 0x0200_0021,
        }],
        attributes: vec![attribute("Attribute", "attribute", vec![])],
        filename: s("/elsewhere.php"),
        line_start: 10,
        line_end: 20,
        doc_comment: Some(s("/**\n * A thing.\n */")),
        enum_backing_type: 4,
    };
    let mut bare = ClassEntry {
        name: s(""),
        parent_name: None,
        ce_flags: 0,
        refcount: 0,
        interface_names: vec![],
        trait_names: vec![],
        trait_aliases: vec![],
        trait_precedences: vec![],
        constants: vec![],
        properties: vec![],
        methods: vec![],
        method_stubs: vec![],
        attributes: vec![],
        filename: s(file),
        line_start: 0,
        line_end: 0,
        doc_comment: None,
        enum_backing_type: 0,
    };
    bare.refcount = 1;
    script.function_table = vec![
        (s("add"), Box::new(func)),
        (
            PhpStr(b"\0rtd key".to_vec()),
            Box::new(empty_op_array(Some("x"), "")),
        ),
    ];
    script.class_table = vec![(s("app\\thing"), ce), (s("alias"), bare)];
    script
}
