//! Call sites, callers/callees, call map and recursion on small hand-made scripts.

use zend_call_graph::{call_sites, CallGraph, FuncId, ScriptInfo};
use zend_cfg::synthetic::{unused, OpArrayBuilder};
use zend_ir::dump::func_flags::{RECURSIVE, RECURSIVE_DIRECTLY, RECURSIVE_INDIRECTLY};
use zend_ir::opcode::*;
use zend_ir::{Literal, OpArray, Operand, PhpStr, Script};

/// A function that calls each of `callees` (user functions) with one argument.
fn caller(name: &str, callees: &[&str]) -> OpArray {
    let mut b = OpArrayBuilder::new(name, 0, 1);
    for callee in callees {
        let lit = b.literal(Literal::String(PhpStr::from(*callee)));
        b.op_ext(ZEND_INIT_FCALL, Operand::Unused(1), lit, unused(), 1);
        let one = b.long(1);
        b.op(ZEND_SEND_VAL, one, Operand::Unused(1), unused());
        b.op(ZEND_DO_UCALL, unused(), unused(), unused());
    }
    let n = b.long(0);
    b.ret(n);
    b.finish()
}

fn script(functions: Vec<(&str, OpArray)>) -> Script {
    Script {
        filename: PhpStr::from("t.php"),
        main_op_array: Box::new(caller("main", &["a"])),
        function_table: functions
            .into_iter()
            .map(|(k, f)| (PhpStr::from(k), Box::new(f)))
            .collect(),
        class_table: Vec::new(),
        compiler_halt_offset: None,
        warnings: Vec::new(),
        early_bindings: Vec::new(),
    }
}

#[test]
fn init_pairs_with_do_and_sends() {
    let s = script(vec![
        ("a", caller("a", &["b", "strlen"])),
        ("b", caller("b", &[])),
    ]);
    let info = ScriptInfo::new(&s);
    let a = info.op_arrays[1];
    let sites = call_sites(&info, a);
    assert_eq!(sites.len(), 2);
    assert_eq!(sites[0].init.as_u32(), 0);
    assert_eq!(
        sites[0].args.iter().map(|o| o.as_u32()).collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(sites[0].call.map(|o| o.as_u32()), Some(2));
    assert_eq!(sites[0].callee, Some(FuncId(2)));
    // strlen is internal: resolved, but not one of the script's op_arrays.
    assert!(sites[1].resolved);
    assert_eq!(sites[1].callee, None);

    let graph = CallGraph::build(&info);
    assert_eq!(
        graph.callees(FuncId(1)).collect::<Vec<_>>(),
        vec![FuncId(2)]
    );
    assert_eq!(graph.callers[2], vec![(FuncId(1), 0)]);
    let map = graph.call_map(FuncId(1), a.opcodes.len());
    assert_eq!(
        &map[..6],
        &[Some(0), Some(0), Some(0), Some(1), Some(1), Some(1)]
    );
    assert_eq!(map[6], None);
}

#[test]
fn direct_and_indirect_recursion() {
    let s = script(vec![
        ("a", caller("a", &["a", "b"])),
        ("b", caller("b", &["c"])),
        ("c", caller("c", &["b"])),
    ]);
    let info = ScriptInfo::new(&s);
    let graph = CallGraph::build(&info);
    assert_eq!(graph.recursion[0], 0, "main");
    assert_eq!(graph.recursion[1], RECURSIVE | RECURSIVE_DIRECTLY, "a");
    assert_eq!(graph.recursion[2], RECURSIVE | RECURSIVE_INDIRECTLY, "b");
    assert_eq!(graph.recursion[3], RECURSIVE | RECURSIVE_INDIRECTLY, "c");
}
