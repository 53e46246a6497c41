//! The CFG on hand-built op_arrays: blocks and flags, edges, dominators, loops, the extra
//! entry block, errors on malformed input, and size without stack growth.

use zend_cfg::synthetic::{generate, unused, OpArrayBuilder, Shape};
use zend_cfg::{BlockFlags, BlockId, BuildFlags, Cfg, FuncFlags, Problem};
use zend_ir::opcode::*;
use zend_ir::{Operand, VarNum};

fn ids(list: &[BlockId]) -> Vec<u32> {
    list.iter().map(|b| b.as_u32()).collect()
}

/// `if ($v0) { $v1 = 1; } else { $v1 = 2; } return $v1;`
fn diamond() -> zend_ir::OpArray {
    let mut b = OpArrayBuilder::new("diamond", 2, 0);
    let jz = b.jmpz(b.cv(0), 0);
    let one = b.long(1);
    b.assign(1, one);
    let j = b.jmp(0);
    let else_ = b.next();
    let two = b.long(2);
    b.assign(1, two);
    let end = b.next();
    b.ret(b.cv(1));
    b.patch(jz, else_);
    b.patch(j, end);
    b.finish()
}

#[test]
fn diamond_blocks_edges_and_dominators() {
    let cfg = Cfg::build(&diamond(), BuildFlags::NO_ENTRY_PREDECESSORS).unwrap();
    assert_eq!(cfg.blocks_count(), 4);
    assert_eq!(ids(cfg.successors(BlockId::new(0))), vec![2, 1]);
    assert_eq!(ids(cfg.predecessors(BlockId::new(3))), vec![1, 2]);
    assert_eq!(
        cfg.blocks[0].flags,
        BlockFlags::START | BlockFlags::REACHABLE
    );
    assert!(cfg.blocks[1].flags.contains(BlockFlags::FOLLOW));
    assert!(cfg.blocks[2].flags.contains(BlockFlags::TARGET));
    assert!(cfg.blocks[3]
        .flags
        .contains(BlockFlags::TARGET | BlockFlags::FOLLOW | BlockFlags::EXIT));
    assert_eq!(cfg.blocks[3].idom, Some(BlockId::new(0)));
    assert_eq!(cfg.blocks[0].children, Some(BlockId::new(1)));
    assert_eq!(cfg.blocks[1].next_child, Some(BlockId::new(2)));
    assert_eq!(cfg.blocks[2].next_child, Some(BlockId::new(3)));
    assert_eq!(cfg.blocks[3].level, Some(1));
    assert!(cfg.func_flags.contains(FuncFlags::NO_LOOPS));
}

#[test]
fn loop_header_and_jump_to_entry() {
    // 0: $v0++; 1: JMPNZ $v0 -> 0; 2: return
    let mut b = OpArrayBuilder::new("loop", 1, 0);
    b.op(ZEND_PRE_INC, b.cv(0), unused(), unused());
    b.jmpnz(b.cv(0), 0);
    b.ret(b.cv(0));
    let op_array = b.finish();

    // Without the flag the entry block loops to itself; with a single incoming edge it is
    // no loop header for PHP ("a loop header has at least two input edges").
    let cfg = Cfg::build(&op_array, BuildFlags::empty()).unwrap();
    assert_eq!(cfg.blocks_count(), 2);
    assert_eq!(ids(cfg.predecessors(BlockId::new(0))), vec![0]);
    assert!(!cfg.blocks[0].flags.contains(BlockFlags::LOOP_HEADER));

    // With NO_ENTRY_PREDECESSORS an empty entry block is split off.
    let cfg = Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS).unwrap();
    assert_eq!(cfg.blocks_count(), 3);
    assert_eq!(cfg.blocks[0].len, 0);
    assert_eq!(ids(cfg.successors(BlockId::new(0))), vec![1]);
    assert_eq!(ids(cfg.predecessors(BlockId::new(1))), vec![0, 1]);
    assert!(cfg.blocks[1].flags.contains(BlockFlags::LOOP_HEADER));
    assert_eq!(cfg.blocks[1].loop_header, None);
    assert!(!cfg.func_flags.contains(FuncFlags::NO_LOOPS));
}

#[test]
fn unreachable_code_keeps_its_jump_successors_for_the_dump() {
    let mut b = OpArrayBuilder::new("dead", 1, 0);
    b.ret(b.cv(0));
    b.jmp(0);
    let op_array = b.finish();
    let cfg = Cfg::build(&op_array, BuildFlags::empty()).unwrap();
    assert!(!cfg.blocks[1].is_reachable());
    assert!(cfg.successors(BlockId::new(1)).is_empty());
    assert_eq!(ids(cfg.stored_successors(BlockId::new(1))), vec![0]);
}

#[test]
fn irreducible_loop() {
    // Two entries into the cycle 2 <-> 3.
    let mut b = OpArrayBuilder::new("irreducible", 1, 0);
    let jz = b.jmpz(b.cv(0), 0); // 0: BB0 -> BB2 or BB1
    let j1 = b.jmp(0); // 1: BB1 -> BB3
    let bb2 = b.next();
    b.op(ZEND_PRE_INC, b.cv(0), unused(), unused()); // 2: BB2
    let bb3 = b.next();
    b.op(ZEND_PRE_DEC, b.cv(0), unused(), unused()); // 3: BB3
    let back = b.jmpnz(b.cv(0), 0); // 4: BB3 -> BB2 or BB4
    b.ret(b.cv(0));
    b.patch(jz, bb2);
    b.patch(j1, bb3);
    b.patch(back, bb2);
    let cfg = Cfg::build(&b.finish(), BuildFlags::empty()).unwrap();
    assert!(cfg.func_flags.contains(FuncFlags::IRREDUCIBLE));
    assert!(cfg
        .blocks
        .iter()
        .any(|b| b.flags.contains(BlockFlags::IRREDUCIBLE_LOOP)));
}

#[test]
fn malformed_op_arrays_are_errors_naming_function_and_op() {
    let mut b = OpArrayBuilder::new("broken", 1, 0);
    b.ret(b.cv(0));
    b.jmp(99);
    let err = Cfg::build(&b.finish(), BuildFlags::empty()).unwrap_err();
    assert_eq!(err.function, "broken");
    assert_eq!(err.op, 1);
    assert_eq!(err.problem, Problem::JumpOutOfRange { target: 99 });
    assert!(err.to_string().contains("broken: op 0001 (JMP)"), "{err}");

    let mut b = OpArrayBuilder::new("vars", 1, 0);
    b.ret(Operand::Cv(VarNum::new(7)));
    let op_array = b.finish();
    let err = Cfg::build(&op_array, BuildFlags::empty()).unwrap_err();
    assert_eq!(err.problem, Problem::VarOutOfRange { var: 7 });
    // The check on its own finds what the build finds.
    assert_eq!(zend_cfg::check_operands(&op_array), Err(err));

    let mut b = OpArrayBuilder::new("falls", 1, 0);
    b.jmpz(b.cv(0), 0);
    let err = Cfg::build(&b.finish(), BuildFlags::empty()).unwrap_err();
    assert_eq!(err.problem, Problem::FallsOffEnd);

    let mut b = OpArrayBuilder::new("opdata", 1, 0);
    b.op(ZEND_ASSIGN_DIM, b.cv(0), unused(), unused());
    let err = Cfg::build(&b.finish(), BuildFlags::empty()).unwrap_err();
    assert_eq!(err.problem, Problem::MissingOpData);
}

/// 100k-op functions of every shape build on a 256 KiB stack: nothing recurses with the
/// input's size.
#[test]
fn hundred_thousand_ops_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            for shape in [Shape::IfChain, Shape::LoopNest, Shape::Switch] {
                let op_array = generate(shape, 100_000, 8);
                assert!(op_array.opcodes.len() > 90_000);
                let cfg = Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS).unwrap();
                assert!(cfg.blocks.iter().all(|b| b.is_reachable()), "{shape:?}");
                if shape == Shape::LoopNest {
                    let deepest = cfg.blocks.iter().filter_map(|b| b.level).max().unwrap();
                    assert!(deepest > 10_000, "{shape:?}: depth {deepest}");
                }
            }
        })
        .unwrap();
    handle.join().unwrap();
}

/// PHP's optimized op_arrays may end with the FREE of a switch value in an unreachable
/// block (`UNREACHABLE_FREE`): `function sw($x) { switch ($x + 1) { case 1: return 1;
/// default: return 2; } }` is, after PHP's optimizer, RECV, ADD, CASE, JMPZ 0007, FREE,
/// RETURN 1, FREE, RETURN 2, FREE. Falling off the end is only an error where control
/// can get there.
#[test]
fn unreachable_last_block_may_fall_off_the_end() {
    const ZEND_FREE_SWITCH: u32 = 2;
    let mut b = OpArrayBuilder::new("sw", 1, 2);
    b.op(ZEND_RECV, unused(), unused(), b.cv(0));
    let one = b.long(1);
    b.op(ZEND_ADD, b.cv(0), one, b.tmp(0));
    b.op(ZEND_CASE, b.tmp(0), one, b.tmp(1));
    let jz = b.jmpz(b.tmp(1), 0);
    b.op(ZEND_FREE, b.tmp(0), unused(), unused());
    b.ret(one);
    let default = b.next();
    b.op(ZEND_FREE, b.tmp(0), unused(), unused());
    let two = b.long(2);
    b.ret(two);
    b.op_ext(ZEND_FREE, b.tmp(0), unused(), unused(), ZEND_FREE_SWITCH);
    b.patch(jz, default);
    let cfg = Cfg::build(&b.finish(), BuildFlags::NO_ENTRY_PREDECESSORS).unwrap();
    let last = cfg.blocks.last().unwrap();
    assert!(!last.is_reachable());
    assert!(last.flags.contains(BlockFlags::UNREACHABLE_FREE));
    assert_eq!(
        cfg.successors(BlockId::new(cfg.blocks_count() as u32 - 1)),
        &[]
    );

    // Reachable, the same fall is an error.
    let mut b = OpArrayBuilder::new("falls", 1, 1);
    b.op(ZEND_ADD, b.cv(0), b.cv(0), b.tmp(0));
    let err = Cfg::build(&b.finish(), BuildFlags::empty()).unwrap_err();
    assert_eq!(err.problem, Problem::FallsOffEnd);
    assert_eq!(err.op, 0);
}
