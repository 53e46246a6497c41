//! Type and range inference on small hand-made functions.

use zend_call_graph::ScriptInfo;
use zend_cfg::synthetic::{unused, OpArrayBuilder};
use zend_cfg::{BuildFlags, Cfg};
use zend_dfg::Dfg;
use zend_inference::{infer, mb, Context, Inference};
use zend_ir::opcode::*;
use zend_ir::{Literal, OpArray, PhpStr, Script};
use zend_ssa::{NoClasses, Ssa};

fn analyse(f: OpArray) -> (Script, Ssa, Inference) {
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
    let returns = ctx.initial_return_infos();
    let inf = infer(f, Some(1), &cfg, &ssa, &ctx, &returns);
    drop(info);
    (script, ssa, inf)
}

/// The SSA variable the op at `op` defines as its result.
fn result_of(ssa: &Ssa, op: u32) -> zend_ssa::SsaVar {
    ssa.ops[op as usize].result_def.unwrap()
}

#[test]
fn constants_and_arithmetic() {
    // T0 = ADD 2 3; T1 = CONCAT T0 "x"; RETURN T1
    let mut b = OpArrayBuilder::new("f", 0, 2);
    let two = b.long(2);
    let three = b.long(3);
    let add = b.op(ZEND_ADD, two, three, b.tmp(0));
    let x = b.literal(Literal::String(PhpStr::from("x")));
    let cat = b.op(ZEND_CONCAT, b.tmp(0), x, b.tmp(1));
    b.ret(b.tmp(1));
    let (_, ssa, inf) = analyse(b.finish());
    let (t, r) = inf.var(result_of(&ssa, add));
    assert_eq!(t, mb::LONG, "2 + 3 cannot overflow");
    let r = r.unwrap();
    assert_eq!(
        (r.min, r.max, r.underflow, r.overflow),
        (5, 5, false, false)
    );
    let (t, r) = inf.var(result_of(&ssa, cat));
    assert_eq!(t & mb::ANY, mb::STRING);
    assert!(r.is_none_or_unbounded());
}

trait Unbounded {
    fn is_none_or_unbounded(&self) -> bool;
}

impl Unbounded for Option<zend_ir::dump::SsaRange> {
    fn is_none_or_unbounded(&self) -> bool {
        self.map_or(true, |r| r.underflow && r.overflow)
    }
}

#[test]
fn counting_loop_range_is_narrowed() {
    // $v0 = 0; L1: T0 = IS_SMALLER $v0 10; JMPZ T0 L4; PRE_INC $v0; JMP L1; L4: RETURN $v0
    let mut b = OpArrayBuilder::new("f", 1, 1);
    let zero = b.long(0);
    b.assign(0, zero);
    let ten = b.long(10);
    let head = b.op(ZEND_IS_SMALLER, b.cv(0), ten, b.tmp(0));
    let exit = b.jmpz(b.tmp(0), 0);
    b.op(ZEND_PRE_INC, b.cv(0), unused(), unused());
    b.jmp(head);
    let ret = b.ret(b.cv(0));
    b.patch(exit, ret);
    let (_, ssa, inf) = analyse(b.finish());
    // The value returned is the exit pi of the loop phi (`$v0 >= 10` on [0..10]).
    let v = ssa.ops[ret as usize].op1_use.unwrap();
    let (t, r) = inf.var(v);
    assert_eq!(t & (mb::ANY | mb::UNDEF), mb::LONG);
    let r = r.unwrap();
    assert!(!r.underflow && !r.overflow, "{r:?}");
    assert_eq!((r.min, r.max), (10, 10));
    // Every variable got a type or is the CV's undefined entry value.
    for (n, v) in inf.vars.iter().enumerate() {
        assert!(v.type_ != 0 || n < 1, "#{n} untyped");
    }
}

#[test]
fn arrays_track_keys_and_values() {
    // T0 = INIT_ARRAY 1 (next); T1 = ADD_ARRAY_ELEMENT T0 "s" key "k"; RETURN T1
    let mut b = OpArrayBuilder::new("f", 0, 2);
    let one = b.long(1);
    let init = b.op_ext(ZEND_INIT_ARRAY, one, unused(), b.tmp(0), 2 << 2);
    let s = b.literal(Literal::String(PhpStr::from("s")));
    let k = b.literal(Literal::String(PhpStr::from("k")));
    let add = b.op(ZEND_ADD_ARRAY_ELEMENT, s, k, b.tmp(0));
    b.ret(b.tmp(0));
    let (_, ssa, inf) = analyse(b.finish());
    let (t, _) = inf.var(result_of(&ssa, init));
    assert_eq!(t & mb::ANY, mb::ARRAY);
    // An append to a fresh array: PHP keeps both long-key kinds (`[packed, hash]`).
    assert_eq!(t & mb::ARRAY_KEY_ANY, mb::ARRAY_KEY_LONG);
    assert_eq!(t & mb::ARRAY_OF_ANY, mb::ARRAY_OF_LONG);
    let (t, _) = inf.var(result_of(&ssa, add));
    assert_ne!(t & mb::ARRAY_STRING_HASH, 0);
    assert_ne!(t & mb::ARRAY_OF_STRING, 0);
}

#[test]
fn dump_prints_noval_types_ranges_and_sccs() {
    let mut b = OpArrayBuilder::new("f", 1, 0);
    let seven = b.long(7);
    b.assign(0, seven);
    b.ret(b.cv(0));
    let (script, ssa, inf) = analyse(b.finish());
    let mut out = Vec::new();
    zend_inference::dump::dump_ssa_variables(&mut out, &script.function_table[0].1, &ssa, &inf);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "\nSSA Variable for \"f\"\n    #0.CV0($v0) NOVAL [undef]\n    #1.CV0($v0) [long] RANGE[7..7] *SCC=0\n"
    );
}
