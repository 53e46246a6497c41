//! proptest strategies that generate arbitrary, bounded [`zend_ir::Script`]s covering every
//! field and enum of the model, raw and out-of-range values included. Shared by the property
//! tests of every crate that consumes the model (the .zop formats, the cache layout), so
//! they all exercise the same inputs.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use zend_ir::*;

pub fn php_str() -> BoxedStrategy<PhpStr> {
    prop_oneof![
        "[a-zA-Z_][a-zA-Z0-9_]{0,8}".prop_map(|s| PhpStr::from(s.as_str())),
        "[ -~]{0,10}".prop_map(|s| PhpStr::from(s.as_str())),
        vec(any::<u8>(), 0..10).prop_map(PhpStr),
        vec(
            prop_oneof![
                Just(b'\\'),
                Just(b'x'),
                Just(b'"'),
                Just(b'n'),
                Just(b'0'),
                Just(b'\n')
            ],
            0..8
        )
        .prop_map(PhpStr),
    ]
    .boxed()
}

pub fn small_u32() -> BoxedStrategy<u32> {
    prop_oneof![0..16u32, any::<u32>()].boxed()
}

pub fn double() -> BoxedStrategy<PhpDouble> {
    prop_oneof![
        any::<f64>().prop_map(PhpDouble::new),
        any::<u64>().prop_map(PhpDouble),
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(f64::NAN),
            Just(-f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::MIN_POSITIVE),
            Just(f64::MAX),
            Just(0.1),
        ]
        .prop_map(PhpDouble::new),
        (
            0x7ff0_0000_0000_0001u64..=0x7fff_ffff_ffff_ffff,
            any::<bool>()
        )
            .prop_map(|(b, neg)| PhpDouble(b | if neg { 1 << 63 } else { 0 })),
    ]
    .boxed()
}

pub fn array_key() -> BoxedStrategy<ArrayKey> {
    prop_oneof![
        any::<i64>().prop_map(ArrayKey::Long),
        (-3..10i64).prop_map(ArrayKey::Long),
        php_str().prop_map(ArrayKey::Str),
    ]
    .boxed()
}

pub fn scalar_literal() -> BoxedStrategy<Literal> {
    prop_oneof![
        Just(Literal::Null),
        Just(Literal::False),
        Just(Literal::True),
        any::<i64>().prop_map(Literal::Long),
        double().prop_map(Literal::Double),
        php_str().prop_map(Literal::String),
    ]
    .boxed()
}

pub fn ast_leaf() -> BoxedStrategy<Ast> {
    (any::<u16>(), any::<u16>(), small_u32(), scalar_literal())
        .prop_map(|(kind, attr, lineno, lit)| Ast {
            kind,
            attr,
            lineno,
            body: AstBody::Zval(lit),
        })
        .boxed()
}

pub fn literal() -> BoxedStrategy<Literal> {
    scalar_literal()
        .prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                // Mostly the usual nNextFreeElement, sometimes any other.
                (
                    vec((array_key(), inner.clone()), 0..4),
                    option::weighted(0.2, any::<i64>())
                )
                    .prop_map(|(elements, next_free)| Literal::Array(
                        match next_free {
                            Some(n) => PhpArray::with_next_free(elements, n),
                            None => elements.into(),
                        }
                    )),
                ast_with(inner).prop_map(|a| Literal::Ast(Box::new(a))),
            ]
        })
        .boxed()
}

pub fn ast_with(lit: impl Strategy<Value = Literal> + Clone + 'static) -> BoxedStrategy<Ast> {
    let leaf = prop_oneof![
        ast_leaf(),
        (any::<u16>(), any::<u16>(), small_u32(), lit).prop_map(|(kind, attr, lineno, lit)| Ast {
            kind,
            attr,
            lineno,
            body: AstBody::Zval(lit),
        }),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        (
            prop_oneof![Just(521u16), Just(65u16), any::<u16>()],
            any::<u16>(),
            small_u32(),
            vec(option::of(inner), 0..4),
        )
            .prop_map(|(kind, attr, lineno, children)| Ast {
                kind,
                attr,
                lineno,
                body: AstBody::Children(children),
            })
    })
    .boxed()
}

pub fn zend_type() -> BoxedStrategy<ZendType> {
    let leaf = prop_oneof![
        any::<u32>().prop_map(|type_mask| ZendType {
            type_mask,
            names: TypeNames::None
        }),
        (any::<u32>(), php_str()).prop_map(|(type_mask, n)| ZendType {
            type_mask,
            names: TypeNames::Name(n)
        }),
    ];
    leaf.prop_recursive(3, 10, 3, |inner| {
        (any::<u32>(), vec(inner, 0..3)).prop_map(|(type_mask, l)| ZendType {
            type_mask,
            names: TypeNames::List(l),
        })
    })
    .boxed()
}

pub fn arg_info() -> BoxedStrategy<ArgInfo> {
    (option::of(php_str()), zend_type(), option::of(php_str()))
        .prop_map(|(name, type_, default_value)| ArgInfo {
            name,
            type_,
            default_value,
        })
        .boxed()
}

pub fn attribute() -> BoxedStrategy<Attribute> {
    (
        php_str(),
        php_str(),
        small_u32(),
        small_u32(),
        small_u32(),
        vec((option::of(php_str()), literal()), 0..3),
        any::<bool>(),
    )
        .prop_map(
            |(name, lcname, flags, lineno, offset, args, lc_is_lower)| Attribute {
                lcname: if lc_is_lower {
                    name.to_lowercase()
                } else {
                    lcname
                },
                name,
                flags,
                lineno,
                offset,
                args: args
                    .into_iter()
                    .map(|(name, value)| AttributeArg { name, value })
                    .collect(),
            },
        )
        .boxed()
}

pub fn operand() -> BoxedStrategy<Operand> {
    prop_oneof![
        Just(Operand::Unused(0)),
        small_u32().prop_map(Operand::Unused),
        small_u32().prop_map(|n| Operand::JmpAddr(OpNum::new(n))),
        (0..12u32).prop_map(|n| Operand::Const(LiteralId::new(n))),
        any::<u32>().prop_map(|n| Operand::Const(LiteralId::new(n))),
        small_u32().prop_map(|n| Operand::TmpVar(VarNum::new(n))),
        small_u32().prop_map(|n| Operand::Var(VarNum::new(n))),
        (0..8u32).prop_map(|n| Operand::Cv(VarNum::new(n))),
    ]
    .boxed()
}

pub fn opcode() -> BoxedStrategy<Opcode> {
    prop_oneof![
        any::<u8>().prop_map(Opcode),
        Just(opcode::ZEND_JMP),
        Just(opcode::ZEND_JMPZ),
        Just(opcode::ZEND_FE_FETCH_R),
        Just(opcode::ZEND_FE_FETCH_RW),
        Just(opcode::ZEND_RECV),
    ]
    .boxed()
}

pub fn op() -> BoxedStrategy<Op> {
    (
        opcode(),
        operand(),
        operand(),
        operand(),
        small_u32(),
        small_u32(),
        prop_oneof![
            Just(SmartBranch::None),
            Just(SmartBranch::Jmpz),
            Just(SmartBranch::Jmpnz)
        ],
    )
        .prop_map(
            |(opcode, op1, op2, result, extended_value, lineno, smart_branch)| Op {
                opcode,
                op1,
                op2,
                result,
                extended_value,
                lineno,
                smart_branch,
            },
        )
        .boxed()
}

pub fn live_range() -> BoxedStrategy<LiveRange> {
    (
        small_u32(),
        prop_oneof![0..5u32, any::<u32>()],
        small_u32(),
        small_u32(),
    )
        .prop_map(|(v, kind, s, e)| LiveRange {
            var: VarNum::new(v),
            kind,
            start: OpNum::new(s),
            end: OpNum::new(e),
        })
        .boxed()
}

pub fn try_catch() -> BoxedStrategy<TryCatchElement> {
    (
        small_u32(),
        option::of(small_u32()),
        option::of(small_u32()),
        option::of(small_u32()),
    )
        .prop_map(|(t, c, f, e)| TryCatchElement {
            try_op: OpNum::new(t),
            catch_op: c.map(OpNum::new),
            finally_op: f.map(OpNum::new),
            finally_end: e.map(OpNum::new),
        })
        .boxed()
}

pub fn op_array_leaf() -> BoxedStrategy<OpArray> {
    let head = (
        prop_oneof![Just(ZEND_USER_FUNCTION), Just(ZEND_EVAL_CODE), any::<u8>()],
        any::<u32>(),
        option::of(php_str()),
        option::of(php_str()),
        small_u32(),
        small_u32(),
        vec(arg_info(), 0..3),
        option::of(arg_info()),
        vec(attribute(), 0..2),
        small_u32(),
        small_u32(),
    );
    let body = (
        vec(php_str(), 0..5),
        vec(op(), 0..12),
        vec(literal(), 0..8),
        option::of(vec((php_str(), literal()), 0..3)),
        vec(live_range(), 0..3),
        vec(try_catch(), 0..2),
        prop_oneof![Just(PhpStr::from("/f.php")), php_str()],
        small_u32(),
        small_u32(),
        option::of(php_str()),
        vec((any::<u32>(), 1..=u32::MAX), 0..3),
    );
    (head, body)
        .prop_map(
            |(
                (
                    type_,
                    fn_flags,
                    function_name,
                    scope,
                    num_args,
                    required_num_args,
                    arg_info,
                    return_info,
                    attributes,
                    t,
                    cache_size,
                ),
                (
                    vars,
                    opcodes,
                    literals,
                    static_variables,
                    live_range,
                    try_catch_array,
                    filename,
                    line_start,
                    line_end,
                    doc_comment,
                    extra,
                ),
            )| OpArray {
                type_,
                fn_flags,
                function_name,
                scope,
                num_args,
                required_num_args,
                arg_info,
                return_info,
                attributes,
                T: t,
                cache_size,
                vars,
                opcodes,
                literal_extra: literal_extra(literals.len(), extra),
                literals,
                static_variables,
                live_range,
                try_catch_array,
                filename,
                line_start,
                line_end,
                doc_comment,
                dynamic_func_defs: vec![],
            },
        )
        .boxed()
}

/// `OpArray::literal_extra` for `len` literals from `(index seed, non-zero value)` pairs:
/// sorted, one entry per literal at most.
fn literal_extra(len: usize, raw: Vec<(u32, u32)>) -> Vec<(LiteralId, u32)> {
    if len == 0 {
        return vec![];
    }
    let mut out: Vec<(LiteralId, u32)> = raw
        .into_iter()
        .map(|(seed, v)| (LiteralId::new(seed % len as u32), v))
        .collect();
    out.sort_by_key(|&(l, _)| l.as_u32());
    out.dedup_by_key(|&mut (l, _)| l.as_u32());
    out
}

pub fn op_array() -> BoxedStrategy<OpArray> {
    (
        op_array_leaf(),
        vec((op_array_leaf(), vec(op_array_leaf(), 0..2)), 0..2),
    )
        .prop_map(|(mut oa, defs)| {
            oa.dynamic_func_defs = defs
                .into_iter()
                .map(|(mut d, inner)| {
                    d.dynamic_func_defs = inner.into_iter().map(Box::new).collect();
                    Box::new(d)
                })
                .collect();
            oa
        })
        .boxed()
}

pub fn class_name() -> BoxedStrategy<ClassName> {
    (php_str(), php_str(), any::<bool>())
        .prop_map(|(name, lc, lower)| ClassName {
            lc_name: if lower { name.to_lowercase() } else { lc },
            name,
        })
        .boxed()
}

pub fn method_ref() -> BoxedStrategy<TraitMethodRef> {
    (php_str(), option::of(php_str()))
        .prop_map(|(method_name, class_name)| TraitMethodRef {
            method_name,
            class_name,
        })
        .boxed()
}

pub fn class_entry() -> BoxedStrategy<ClassEntry> {
    let head = (
        php_str(),
        option::of(php_str()),
        any::<u32>(),
        prop_oneof![Just(1u32), any::<u32>()],
        vec(class_name(), 0..3),
        vec(class_name(), 0..2),
        vec(
            (method_ref(), option::of(php_str()), small_u32()).prop_map(
                |(method, alias, modifiers)| TraitAlias {
                    method,
                    alias,
                    modifiers,
                },
            ),
            0..2,
        ),
        vec(
            (method_ref(), vec(php_str(), 0..3)).prop_map(|(method, exclude_class_names)| {
                TraitPrecedence {
                    method,
                    exclude_class_names,
                }
            }),
            0..2,
        ),
    );
    let members = (
        vec(
            (
                php_str(),
                literal(),
                small_u32(),
                option::of(php_str()),
                vec(attribute(), 0..2),
                option::of(php_str()),
            ),
            0..3,
        ),
        vec(
            (
                php_str(),
                small_u32(),
                small_u32(),
                zend_type(),
                option::of(literal()),
                option::of(php_str()),
                vec(attribute(), 0..2),
                option::of(php_str()),
            ),
            0..3,
        ),
        // A method is an op_array (Ok) or, in a linked class, an internal function of the
        // class named (Err).
        vec(
            (
                php_str(),
                prop_oneof![
                    3 => op_array_leaf().prop_map(Ok),
                    1 => (php_str(), any::<u32>()).prop_map(Err)
                ],
            ),
            0..4,
        ),
        vec(attribute(), 0..2),
        prop_oneof![Just(PhpStr::from("/f.php")), php_str()],
        small_u32(),
        small_u32(),
        option::of(php_str()),
        any::<u8>(),
    );
    (head, members)
        .prop_map(
            |(
                (
                    name,
                    parent_name,
                    ce_flags,
                    refcount,
                    interface_names,
                    trait_names,
                    trait_aliases,
                    trait_precedences,
                ),
                (
                    constants,
                    properties,
                    methods,
                    attributes,
                    filename,
                    line_start,
                    line_end,
                    doc_comment,
                    enum_backing_type,
                ),
            )| {
                let constants = constants
                    .into_iter()
                    .map(
                        |(cname, value, flags, doc_comment, attributes, ce)| ClassConstant {
                            name: cname,
                            value,
                            flags,
                            doc_comment,
                            attributes,
                            ce: ce.unwrap_or_else(|| name.clone()),
                        },
                    )
                    .collect();
                let properties = properties
                    .into_iter()
                    .map(
                        |(pname, flags, offset, type_, default, doc_comment, attributes, ce)| {
                            PropertyInfo {
                                name: pname,
                                flags,
                                offset,
                                type_,
                                default,
                                doc_comment,
                                attributes,
                                ce: ce.unwrap_or_else(|| name.clone()),
                            }
                        },
                    )
                    .collect();
                ClassEntry {
                    name,
                    parent_name,
                    ce_flags,
                    refcount,
                    interface_names,
                    trait_names,
                    trait_aliases,
                    trait_precedences,
                    constants,
                    properties,
                    methods: methods
                        .iter()
                        .filter_map(|(k, m)| Some((k.clone(), Box::new(m.as_ref().ok()?.clone()))))
                        .collect(),
                    method_stubs: methods
                        .iter()
                        .enumerate()
                        .filter_map(|(position, (key, m))| {
                            Some(MethodStub {
                                position: position as u32,
                                key: key.clone(),
                                scope: m.as_ref().err()?.0.clone(),
                                fn_flags: m.as_ref().err()?.1,
                            })
                        })
                        .collect(),
                    attributes,
                    filename,
                    line_start,
                    line_end,
                    doc_comment,
                    enum_backing_type,
                }
            },
        )
        .boxed()
}

pub fn script() -> BoxedStrategy<Script> {
    (
        prop_oneof![Just(PhpStr::from("/f.php")), php_str()],
        op_array(),
        vec((php_str(), op_array_leaf()), 0..3),
        vec((php_str(), class_entry()), 0..2),
        option::of(prop_oneof![
            Just(0u64),
            1u64..100_000,
            Just(u64::MAX),
            any::<u64>()
        ]),
        vec(error_info(), 0..3),
        vec(early_binding(), 0..3),
    )
        .prop_map(
            |(
                filename,
                main_op_array,
                function_table,
                class_table,
                compiler_halt_offset,
                warnings,
                early_bindings,
            )| Script {
                filename,
                main_op_array: Box::new(main_op_array),
                function_table: function_table
                    .into_iter()
                    .map(|(k, f)| (k, Box::new(f)))
                    .collect(),
                class_table,
                compiler_halt_offset,
                warnings,
                early_bindings,
            },
        )
        .boxed()
}

/// A delayed early binding: any strings (a real runtime definition key holds a NUL).
pub fn early_binding() -> BoxedStrategy<EarlyBinding> {
    (php_str(), php_str(), php_str())
        .prop_map(|(lcname, rtd_key, lc_parent_name)| EarlyBinding {
            lcname,
            rtd_key,
            lc_parent_name,
        })
        .boxed()
}

/// A diagnostic recorded while compiling: a real error type or any number, any strings.
pub fn error_info() -> BoxedStrategy<ErrorInfo> {
    (
        prop_oneof![Just(2u32), Just(8), Just(8192), any::<u32>()],
        any::<u32>(),
        php_str(),
        php_str(),
    )
        .prop_map(|(type_, lineno, filename, message)| ErrorInfo {
            type_,
            lineno,
            filename,
            message,
        })
        .boxed()
}
