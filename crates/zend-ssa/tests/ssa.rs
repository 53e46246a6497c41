//! SSA construction on hand-built and synthetic op_arrays: numbering, phis, pis and their
//! constraints, chains, the verifier, and 100k-op functions on a small stack.

use zend_cfg::synthetic::{generate, unused, OpArrayBuilder, Shape};
use zend_cfg::{BlockId, BuildFlags, Cfg};
use zend_dfg::Dfg;
use zend_ir::opcode::*;
use zend_ssa::{verify, Constraint, NoClasses, Ssa, SsaVar};

fn build(op_array: &zend_ir::OpArray) -> (Cfg, Ssa) {
    let cfg = Cfg::build(op_array, BuildFlags::NO_ENTRY_PREDECESSORS).unwrap();
    let dfg = Dfg::build(op_array, &cfg, BuildFlags::empty());
    let mut ssa = Ssa::build(op_array, &cfg, &dfg, &NoClasses, BuildFlags::empty()).unwrap();
    ssa.find_false_dependencies(op_array);
    ssa.find_sccs(op_array);
    verify(op_array, &cfg, &ssa).unwrap();
    (cfg, ssa)
}

/// `function f($v0, $v1) { if ($v0 < 10) { $v1 = 1; } return $v1 + $v0; }`
#[test]
fn if_with_range_pi_and_phi() {
    let mut b = OpArrayBuilder::new("f", 2, 2);
    b.op(ZEND_RECV, unused(), unused(), b.cv(0));
    b.op(ZEND_RECV, unused(), unused(), b.cv(1));
    let ten = b.long(10);
    let t0 = b.tmp(0);
    b.op(ZEND_IS_SMALLER, b.cv(0), ten, t0);
    let jz = b.jmpz(t0, 0);
    let one = b.long(1);
    b.assign(1, one);
    let join = b.next();
    let t1 = b.tmp(1);
    b.op(ZEND_ADD, b.cv(1), b.cv(0), t1);
    b.ret(t1);
    b.patch(jz, join);
    let op_array = b.finish();
    let (cfg, ssa) = build(&op_array);

    // BB0: RECVs, compare, JMPZ; BB1: assign; BB2: join.
    assert_eq!(cfg.blocks_count(), 3);
    assert_eq!(ssa.ops[0].result_def, Some(SsaVar::new(2)));
    assert_eq!(ssa.ops[1].result_def, Some(SsaVar::new(3)));
    // A pi for $v0 on each edge out of BB0: $v0 <= 9 into BB1, $v0 >= 10 into the join.
    let pis: Vec<_> = ssa.blocks[1].phis.iter().map(|&p| ssa.phi(p)).collect();
    assert_eq!(pis.len(), 1);
    assert_eq!(pis[0].pi, Some(BlockId::new(0)));
    assert_eq!(pis[0].var, 0);
    match &pis[0].constraint {
        Some(Constraint::Range(r)) => {
            assert_eq!((r.range.min, r.range.max), (i64::MIN, 9));
            assert!(r.range.underflow && !r.range.overflow);
        }
        other => panic!("unexpected constraint {other:?}"),
    }
    // The join: the pi of the false edge first, then phis for $v0 and $v1; the phi of $v0
    // takes the pi's value on that edge.
    let phis: Vec<_> = ssa.blocks[2].phis.iter().map(|&p| ssa.phi(p)).collect();
    assert_eq!(
        phis.iter().map(|p| (p.var, p.is_pi())).collect::<Vec<_>>(),
        vec![(0, true), (0, false), (1, false)]
    );
    assert!(phis.iter().all(|p| p.sources.iter().all(Option::is_some)));
    let edge = cfg
        .predecessor_index(BlockId::new(2), BlockId::new(0))
        .unwrap();
    assert_eq!(phis[1].sources[edge], Some(phis[0].ssa_var));
    // The ADD uses the phis' values.
    assert_eq!(ssa.ops[5].op1_use, Some(phis[2].ssa_var));
    assert_eq!(ssa.ops[5].op2_use, Some(phis[1].ssa_var));
    // ASSIGN reads its target only to overwrite it (a no_val use); the value still flows
    // into the join's phi, so the variable is not no_val.
    let assign_use = ssa.ops[4].op1_use.unwrap();
    assert!(ssa.is_no_val_use(&op_array, zend_ir::OpNum::new(4), assign_use));
    assert!(!ssa.vars[assign_use.index()].no_val);
    assert_eq!(phis[2].sources[edge], Some(assign_use));
}

#[test]
fn verifier_reports_broken_chains() {
    let mut b = OpArrayBuilder::new("g", 1, 1);
    b.op(ZEND_RECV, unused(), unused(), b.cv(0));
    let t0 = b.tmp(0);
    b.op(ZEND_BOOL_NOT, b.cv(0), unused(), t0);
    b.ret(t0);
    let op_array = b.finish();
    let (cfg, mut ssa) = build(&op_array);
    ssa.ops[2].op1_use = Some(SsaVar::new(0));
    let err = verify(&op_array, &cfg, &ssa).unwrap_err();
    assert_eq!(err.function, "g");
    assert!(
        err.failures.iter().any(|f| f.contains("not in use chain")),
        "{err}"
    );
}

/// 100k-op functions of every shape: SSA, chains, SCCs and the verifier on a 1 MiB stack.
#[test]
fn hundred_thousand_ops_on_a_small_stack() {
    std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(|| {
            for shape in [Shape::IfChain, Shape::LoopNest, Shape::Switch] {
                let op_array = generate(shape, 100_000, 8);
                let (_, ssa) = build(&op_array);
                assert!(ssa.vars_count() > 10_000, "{shape:?}");
            }
        })
        .unwrap()
        .join()
        .unwrap();
}
