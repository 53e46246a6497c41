//! Shared test support: script generators and deterministic samples.
#![allow(dead_code)]

/// The model's generators, for scripts as PHP compiles them: the cache never stores a
/// linked class's method stubs (only OPcache's preloading links classes before
/// optimizing; `PersistError::LinkedClass`).
pub mod gen {
    use proptest::strategy::{BoxedStrategy, Strategy};

    pub fn script() -> BoxedStrategy<zend_ir::Script> {
        zend_ir_arbitrary::script()
            .prop_map(|mut s| {
                for (_, ce) in &mut s.class_table {
                    ce.method_stubs.clear();
                }
                s
            })
            .boxed()
    }
}

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use zend_ir::*;

/// `n` generated scripts, the same on every run.
pub fn sample_scripts(n: usize) -> Vec<Script> {
    let mut runner = TestRunner::deterministic();
    let strategy = gen::script();
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect()
}

fn op(opcode: Opcode, op1: Operand, op2: Operand, result: Operand, lineno: u32) -> Op {
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

fn empty_op_array(name: Option<&str>, scope: Option<&str>) -> OpArray {
    OpArray {
        type_: ZEND_USER_FUNCTION,
        fn_flags: 0,
        function_name: name.map(PhpStr::from),
        scope: scope.map(PhpStr::from),
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
        filename: PhpStr::from("/srv/app/src/Example.php"),
        line_start: 1,
        line_end: 40,
        doc_comment: None,
        dynamic_func_defs: vec![],
    }
}

/// A hand-written script that uses every part of the model: functions, a class with
/// constants, typed properties, methods, attributes, traits, a closure, arrays and constant
/// ASTs, try/catch, live ranges and static variables. `tag` varies its content.
pub fn rich_script(path: &str, tag: u32) -> Script {
    use zend_ir::opcode::*;
    let mut main = empty_op_array(None, None);
    main.filename = PhpStr::from(path);
    main.vars = vec![PhpStr::from("x"), PhpStr::from("obj")];
    main.T = 3;
    // A numeric-string offset mark on the long and a RECV_INIT cache slot on the AST.
    main.literal_extra = vec![(LiteralId::new(0), 1), (LiteralId::new(4), 8)];
    main.literals = vec![
        Literal::Long(tag as i64),
        Literal::String(PhpStr::from("hello")),
        Literal::Double(PhpDouble::new(-0.0)),
        Literal::Array(
            vec![
                (ArrayKey::Long(0), Literal::String(PhpStr::from("hello"))),
                (
                    ArrayKey::Str(PhpStr::from("k")),
                    Literal::Array(vec![(ArrayKey::Long(-7), Literal::True)].into()),
                ),
            ]
            .into(),
        ),
        Literal::Ast(Box::new(Ast {
            kind: 521,
            attr: 0,
            lineno: 3,
            body: AstBody::Children(vec![
                Some(Ast {
                    kind: ZEND_AST_CONSTANT,
                    attr: 0,
                    lineno: 3,
                    body: AstBody::Zval(Literal::String(PhpStr::from("PHP_EOL"))),
                }),
                None,
                Some(Ast {
                    kind: ZEND_AST_ZVAL,
                    attr: 0,
                    lineno: 3,
                    body: AstBody::Zval(Literal::Long(2)),
                }),
            ]),
        })),
        Literal::Null,
        Literal::False,
        // nNextFreeElement other than the keys give: after an unset, and `[]` given a
        // negative key.
        Literal::Array(PhpArray::with_next_free(
            vec![(ArrayKey::Long(0), Literal::True)],
            2,
        )),
        Literal::Array(PhpArray::with_next_free(
            vec![(ArrayKey::Long(-5), Literal::Null)],
            0,
        )),
        Literal::Array(PhpArray::with_next_free(vec![], 7)),
    ];
    main.opcodes = vec![
        op(
            ZEND_ASSIGN,
            Operand::Cv(VarNum::new(0)),
            Operand::Const(LiteralId::new(0)),
            Operand::Unused(0),
            2,
        ),
        op(
            ZEND_IS_SMALLER,
            Operand::Cv(VarNum::new(0)),
            Operand::Const(LiteralId::new(0)),
            Operand::TmpVar(VarNum::new(2)),
            3,
        ),
        op(
            ZEND_JMPZ,
            Operand::TmpVar(VarNum::new(2)),
            Operand::JmpAddr(OpNum::new(4)),
            Operand::Unused(0),
            3,
        ),
        op(
            ZEND_ECHO,
            Operand::Const(LiteralId::new(1)),
            Operand::Unused(0),
            Operand::Unused(0),
            4,
        ),
        op(
            ZEND_NEW,
            Operand::Const(LiteralId::new(1)),
            Operand::Unused(1),
            Operand::Var(VarNum::new(3)),
            5,
        ),
        op(
            ZEND_RETURN,
            Operand::Const(LiteralId::new(5)),
            Operand::Unused(0),
            Operand::Unused(0),
            6,
        ),
    ];
    main.opcodes[1].smart_branch = SmartBranch::Jmpz;
    main.opcodes[4].extended_value = 0xdead_beef;
    main.live_range = vec![LiveRange {
        var: VarNum::new(3),
        kind: ZEND_LIVE_NEW,
        start: OpNum::new(4),
        end: OpNum::new(5),
    }];
    main.try_catch_array = vec![TryCatchElement {
        try_op: OpNum::new(1),
        catch_op: Some(OpNum::new(3)),
        finally_op: None,
        finally_end: Some(OpNum::new(0)),
    }];

    let mut closure = empty_op_array(Some("{closure}"), None);
    closure.static_variables = Some(vec![(PhpStr::from("count"), Literal::Long(0))]);
    closure.opcodes = vec![op(
        ZEND_RETURN,
        Operand::Const(LiteralId::new(0)),
        Operand::Unused(0),
        Operand::Unused(0),
        9,
    )];
    closure.literals = vec![Literal::Null];
    main.dynamic_func_defs = vec![Box::new(closure)];

    let mut func = empty_op_array(Some("helper"), None);
    func.num_args = 1;
    func.required_num_args = 1;
    func.arg_info = vec![ArgInfo {
        name: Some(PhpStr::from("value")),
        type_: ZendType {
            type_mask: _ZEND_TYPE_LIST_BIT | _ZEND_TYPE_UNION_BIT,
            names: TypeNames::List(vec![
                ZendType {
                    type_mask: _ZEND_TYPE_NAME_BIT,
                    names: TypeNames::Name(PhpStr::from("Countable")),
                },
                ZendType {
                    type_mask: _ZEND_TYPE_NAME_BIT,
                    names: TypeNames::Name(PhpStr::from("Traversable")),
                },
            ]),
        },
        default_value: None,
    }];
    func.fn_flags = ZEND_ACC_HAS_RETURN_TYPE;
    func.return_info = Some(ArgInfo {
        name: None,
        type_: ZendType {
            type_mask: 1 << 4,
            names: TypeNames::None,
        },
        default_value: None,
    });
    func.vars = vec![PhpStr::from("value")];
    func.opcodes = vec![
        op(
            ZEND_RECV,
            Operand::Unused(1),
            Operand::Unused(0),
            Operand::Cv(VarNum::new(0)),
            11,
        ),
        op(
            ZEND_RETURN,
            Operand::Cv(VarNum::new(0)),
            Operand::Unused(0),
            Operand::Unused(0),
            12,
        ),
    ];
    func.doc_comment = Some(PhpStr::from("/** helper */"));
    func.attributes = vec![Attribute {
        name: PhpStr::from("Pure"),
        lcname: PhpStr::from("pure"),
        flags: 0,
        lineno: 10,
        offset: 0,
        args: vec![AttributeArg {
            name: Some(PhpStr::from("why")),
            value: Literal::String(PhpStr::from("fast")),
        }],
    }];

    let mut method = empty_op_array(Some("run"), Some("Example"));
    method.opcodes = vec![op(
        ZEND_RETURN,
        Operand::Const(LiteralId::new(0)),
        Operand::Unused(0),
        Operand::Unused(0),
        20,
    )];
    method.literals = vec![Literal::Long(tag as i64 * 3)];
    let class = ClassEntry {
        name: PhpStr::from("Example"),
        parent_name: Some(PhpStr::from("Base")),
        ce_flags: 0x10_0000,
        refcount: 1,
        interface_names: vec![ClassName {
            name: PhpStr::from("Countable"),
            lc_name: PhpStr::from("countable"),
        }],
        trait_names: vec![ClassName {
            name: PhpStr::from("Helps"),
            lc_name: PhpStr::from("helps"),
        }],
        trait_aliases: vec![TraitAlias {
            method: TraitMethodRef {
                method_name: PhpStr::from("help"),
                class_name: Some(PhpStr::from("Helps")),
            },
            alias: Some(PhpStr::from("assist")),
            modifiers: 1,
        }],
        trait_precedences: vec![TraitPrecedence {
            method: TraitMethodRef {
                method_name: PhpStr::from("help"),
                class_name: None,
            },
            exclude_class_names: vec![PhpStr::from("Other")],
        }],
        constants: vec![ClassConstant {
            name: PhpStr::from("LIMIT"),
            value: Literal::Long(10),
            flags: 1,
            doc_comment: None,
            attributes: vec![],
            ce: PhpStr::from("Example"),
        }],
        properties: vec![
            PropertyInfo {
                name: PhpStr::from("items"),
                flags: 1,
                offset: 40,
                type_: ZendType {
                    type_mask: 1 << 7,
                    names: TypeNames::None,
                },
                default: Some(Literal::Array(vec![].into())),
                doc_comment: Some(PhpStr::from("/** @var array */")),
                attributes: vec![],
                ce: PhpStr::from("Example"),
            },
            PropertyInfo {
                name: PhpStr::from("typed"),
                flags: 1,
                offset: 56,
                type_: ZendType {
                    type_mask: _ZEND_TYPE_NAME_BIT,
                    names: TypeNames::Name(PhpStr::from("Base")),
                },
                default: None,
                doc_comment: None,
                attributes: vec![],
                ce: PhpStr::from("Example"),
            },
        ],
        methods: vec![(PhpStr::from("run"), Box::new(method))],
        method_stubs: vec![],
        attributes: vec![],
        filename: PhpStr::from(path),
        line_start: 15,
        line_end: 30,
        doc_comment: None,
        enum_backing_type: 0,
    };
    Script {
        filename: PhpStr::from(path),
        main_op_array: Box::new(main),
        function_table: vec![(PhpStr::from("helper"), Box::new(func))],
        class_table: vec![(PhpStr::from("example"), class)],
        // Odd tags have a __halt_compiler(), even ones do not.
        compiler_halt_offset: (tag % 2 == 1).then_some(4096 + u64::from(tag)),
        // Tags divisible by 3 were warned about while compiling.
        warnings: if tag % 3 == 0 {
            vec![ErrorInfo {
                type_: 8192,
                lineno: 3 + tag,
                filename: PhpStr::from(path),
                message: PhpStr::from("Using ${var} in strings is deprecated, use {$var} instead"),
            }]
        } else {
            Vec::new()
        },
        // Tags divisible by 4 declared a class whose parent was not yet known.
        early_bindings: if tag % 4 == 0 {
            vec![EarlyBinding {
                lcname: PhpStr::from("example"),
                rtd_key: PhpStr(format!("\0example{path}:3$0").into_bytes()),
                lc_parent_name: PhpStr::from("base"),
            }]
        } else {
            Vec::new()
        },
    }
}
