//! Escape analysis on small hand-made functions.

use zend_call_graph::ScriptInfo;
use zend_cfg::synthetic::{unused, OpArrayBuilder};
use zend_cfg::{BuildFlags, Cfg};
use zend_dfg::Dfg;
use zend_escape::escape_analysis;
use zend_inference::{infer, Context};
use zend_ir::opcode::*;
use zend_ir::{OpArray, PhpStr, Script};
use zend_ssa::{EscapeState, NoClasses, Ssa};

fn run(f: OpArray) -> (Ssa, Vec<EscapeState>) {
    let script = Script {
        filename: PhpStr::from("t.php"),
        main_op_array: Box::new(OpArrayBuilder::new("main", 0, 0).finish()),
        function_table: vec![(PhpStr::from("f"), Box::new(f))],
        class_table: Vec::new(),
        compiler_halt_offset: None,
        warnings: Vec::new(),
        early_bindings: Vec::new(),
    };
    let f = &script.function_table[0].1;
    let cfg = Cfg::build(f, BuildFlags::NO_ENTRY_PREDECESSORS).unwrap();
    let dfg = Dfg::build(f, &cfg, BuildFlags::empty());
    let mut ssa = Ssa::build(f, &cfg, &dfg, &NoClasses, BuildFlags::empty()).unwrap();
    ssa.find_false_dependencies(f);
    ssa.find_sccs(f);
    let info = ScriptInfo::new(&script);
    let ctx = Context::new(&info, 0x60);
    let inf = infer(f, Some(1), &cfg, &ssa, &ctx, &ctx.initial_return_infos());
    let types: Vec<u32> = inf.vars.iter().map(|v| v.type_).collect();
    let esc = escape_analysis(f, &cfg, &ssa, &types, &info);
    (ssa, esc)
}

/// `$v0 = [1]; return $v0[0];`: the array never leaves the function.
#[test]
fn local_array_does_not_escape() {
    let mut b = OpArrayBuilder::new("f", 1, 2);
    let one = b.long(1);
    let init = b.op_ext(ZEND_INIT_ARRAY, one, unused(), b.tmp(0), 1 << 2);
    let assign = b.assign(0, b.tmp(0));
    let zero = b.long(0);
    b.op(ZEND_FETCH_DIM_R, b.cv(0), zero, b.tmp(1));
    b.ret(b.tmp(1));
    let (ssa, esc) = run(b.finish());
    let arr = ssa.ops[init as usize].result_def.unwrap();
    let cv = ssa.ops[assign as usize].op1_def.unwrap();
    assert_eq!(esc[arr.index()], EscapeState::NoEscape);
    assert_eq!(esc[cv.index()], EscapeState::NoEscape);
}

/// `$v0 = [1]; return $v0;`: returning the array makes it escape.
#[test]
fn returned_array_escapes() {
    let mut b = OpArrayBuilder::new("f", 1, 1);
    let one = b.long(1);
    let init = b.op_ext(ZEND_INIT_ARRAY, one, unused(), b.tmp(0), 1 << 2);
    b.assign(0, b.tmp(0));
    b.ret(b.cv(0));
    let (ssa, esc) = run(b.finish());
    let arr = ssa.ops[init as usize].result_def.unwrap();
    assert_eq!(esc[arr.index()], EscapeState::GlobalEscape);
}
