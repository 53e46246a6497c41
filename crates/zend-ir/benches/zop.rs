//! `.zop` parse and print throughput, in zend_ops per second.
//!
//! Input, first that exists: every `*.zop` under `$ZOPT_BENCH_CORPUS` (default
//! `bench-data/recordings` at the workspace root), the fixture recordings under
//! `fixtures/expected/**/*.zop`, or a synthetic script built here. See benches/README.md at
//! the workspace root for producing the real corpus.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::{Path, PathBuf};
use zend_ir::opcode::*;
use zend_ir::zop::{from_binary, parse, print, to_binary};
use zend_ir::*;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn count_ops(oa: &OpArray) -> usize {
    oa.opcodes.len()
        + oa.dynamic_func_defs
            .iter()
            .map(|d| count_ops(d))
            .sum::<usize>()
}

fn script_ops(s: &Script) -> usize {
    count_ops(&s.main_op_array)
        + s.function_table
            .iter()
            .map(|(_, f)| count_ops(f))
            .sum::<usize>()
        + s.class_table
            .iter()
            .flat_map(|(_, ce)| ce.methods.iter().map(|(_, m)| count_ops(m)))
            .sum::<usize>()
}

/// The texts to parse, and where they came from.
fn load_corpus() -> (Vec<String>, String) {
    let root = workspace_root();
    let recordings = zend_ir::corpus::bench_corpus_dir(&root.join("bench-data/recordings"));
    for (dir, what) in [
        (recordings, "recordings"),
        (root.join("fixtures/expected"), "fixture recordings"),
    ] {
        let files = zend_ir::corpus::zop_files(&dir);
        let mut texts = Vec::new();
        for f in &files {
            match std::fs::read_to_string(f) {
                Ok(t) => match parse(&t) {
                    Ok(_) => texts.push(t),
                    Err(e) => eprintln!("skipping {}: {e}", f.display()),
                },
                Err(e) => eprintln!("skipping {}: {e}", f.display()),
            }
        }
        if !texts.is_empty() {
            return (
                texts,
                format!("{} {what} under {}", files.len(), dir.display()),
            );
        }
    }
    (
        vec![print(&synthetic_script())],
        "no recordings found: a synthetic script (see benches/README.md)".into(),
    )
}

/// A script shaped like compiled PHP: 300 functions of 200 ops over typical opcodes.
fn synthetic_script() -> Script {
    let file = PhpStr::from("/synthetic/bench.php");
    let op = |opcode, result, op1, op2, lineno| Op {
        opcode,
        op1,
        op2,
        result,
        extended_value: 0,
        lineno,
        smart_branch: SmartBranch::None,
    };
    let func = |i: usize| {
        let mut literals = vec![
            Literal::String(PhpStr::from(format!("helper_{i}").as_str())),
            Literal::Long(i as i64),
            Literal::Double(PhpDouble::new(i as f64 * 0.5)),
            Literal::String(PhpStr::from("some \"quoted\" text\n")),
            Literal::Array(
                vec![
                    (ArrayKey::Long(0), Literal::Long(1)),
                    (ArrayKey::Str(PhpStr::from("k")), Literal::Null),
                ]
                .into(),
            ),
        ];
        literals.push(Literal::True);
        let mut opcodes = vec![
            op(
                ZEND_RECV,
                Operand::Cv(VarNum::new(0)),
                Operand::Unused(1),
                Operand::Unused(0),
                1,
            ),
            op(
                ZEND_RECV,
                Operand::Cv(VarNum::new(1)),
                Operand::Unused(2),
                Operand::Unused(0),
                1,
            ),
        ];
        let mut line = 2;
        while opcodes.len() < 198 {
            let n = opcodes.len() as u32;
            let t = VarNum::new(4 + n % 8);
            line += u32::from(n % 3 == 2);
            let mut cmp = op(
                ZEND_IS_SMALLER,
                Operand::TmpVar(t),
                Operand::Cv(VarNum::new(2)),
                Operand::Const(LiteralId::new(1)),
                line,
            );
            cmp.smart_branch = SmartBranch::Jmpz;
            let mut fcall = op(
                ZEND_INIT_FCALL,
                Operand::Unused(0),
                Operand::Unused(2),
                Operand::Const(LiteralId::new(0)),
                line,
            );
            fcall.extended_value = 96;
            opcodes.extend([
                op(
                    ZEND_ADD,
                    Operand::TmpVar(t),
                    Operand::Cv(VarNum::new(0)),
                    Operand::Const(LiteralId::new(2)),
                    line,
                ),
                op(
                    ZEND_ASSIGN,
                    Operand::Unused(0),
                    Operand::Cv(VarNum::new(2)),
                    Operand::TmpVar(t),
                    line,
                ),
                cmp,
                op(
                    ZEND_JMPZ,
                    Operand::Unused(0),
                    Operand::TmpVar(t),
                    Operand::JmpAddr(OpNum::new(n + 8)),
                    line,
                ),
                fcall,
                op(
                    ZEND_SEND_VAR,
                    Operand::Unused(0),
                    Operand::Cv(VarNum::new(1)),
                    Operand::Unused(1),
                    line,
                ),
                op(
                    ZEND_DO_UCALL,
                    Operand::Var(VarNum::new(12)),
                    Operand::Unused(0),
                    Operand::Unused(0),
                    line,
                ),
                op(
                    ZEND_CONCAT,
                    Operand::TmpVar(t),
                    Operand::Var(VarNum::new(12)),
                    Operand::Const(LiteralId::new(3)),
                    line,
                ),
            ]);
        }
        opcodes.push(op(
            ZEND_RETURN,
            Operand::Unused(0),
            Operand::Cv(VarNum::new(2)),
            Operand::Unused(0),
            line,
        ));
        opcodes.push(op(
            ZEND_RETURN,
            Operand::Unused(0),
            Operand::Const(LiteralId::new(5)),
            Operand::Unused(0),
            line,
        ));
        OpArray {
            type_: ZEND_USER_FUNCTION,
            fn_flags: 1 << 25,
            function_name: Some(PhpStr::from(format!("f{i}").as_str())),
            scope: None,
            num_args: 2,
            required_num_args: 2,
            arg_info: vec![
                ArgInfo {
                    name: Some(PhpStr::from("a")),
                    type_: ZendType {
                        type_mask: 1 << 4,
                        names: TypeNames::None,
                    },
                    default_value: None,
                },
                ArgInfo {
                    name: Some(PhpStr::from("b")),
                    type_: ZendType::default(),
                    default_value: None,
                },
            ],
            return_info: None,
            attributes: vec![],
            T: 13,
            cache_size: 16,
            vars: vec![
                PhpStr::from("a"),
                PhpStr::from("b"),
                PhpStr::from("acc"),
                PhpStr::from("i"),
            ],
            opcodes,
            literals,
            literal_extra: vec![],
            static_variables: None,
            live_range: vec![],
            try_catch_array: vec![],
            filename: file.clone(),
            line_start: 1,
            line_end: line,
            doc_comment: None,
            dynamic_func_defs: vec![],
        }
    };
    let mut main = func(0);
    main.function_name = None;
    Script {
        filename: file.clone(),
        main_op_array: Box::new(main),
        function_table: (1..300)
            .map(|i| (PhpStr::from(format!("f{i}").as_str()), Box::new(func(i))))
            .collect(),
        class_table: vec![],
        compiler_halt_offset: None,
        warnings: Vec::new(),
        early_bindings: Vec::new(),
    }
}

fn bench(c: &mut Criterion) {
    let (texts, source) = load_corpus();
    let scripts: Vec<Script> = texts.iter().map(|t| parse(t).expect("checked")).collect();
    let ops: usize = scripts.iter().map(script_ops).sum();
    let bytes: usize = texts.iter().map(String::len).sum();
    eprintln!(
        "zop bench input: {source}: {} scripts, {ops} ops, {bytes} bytes of text",
        scripts.len()
    );
    let binaries: Vec<Vec<u8>> = scripts.iter().map(to_binary).collect();

    let mut g = c.benchmark_group("zop");
    g.throughput(Throughput::Elements(ops as u64));
    g.bench_function("parse", |b| {
        b.iter(|| {
            for t in &texts {
                drop(parse(t).expect("parses"));
            }
        })
    });
    g.bench_function("print", |b| {
        b.iter(|| {
            for s in &scripts {
                std::hint::black_box(print(s));
            }
        })
    });
    g.bench_function("from_binary", |b| {
        b.iter(|| {
            for bin in &binaries {
                drop(from_binary(bin).expect("decodes"));
            }
        })
    });
    g.bench_function("to_binary", |b| {
        b.iter(|| {
            for s in &scripts {
                std::hint::black_box(to_binary(s));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
