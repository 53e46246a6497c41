//! Hand-made CFGs: the three constructions must agree, and the textbook forms must have the
//! expected phis.

use zend_cfg::synthetic::{generate, unused, OpArrayBuilder, Shape};
use zend_cfg::{BlockId, BuildFlags, Cfg};
use zend_dfg::Dfg;
use zend_ir::opcode::*;
use zend_ir::{OpArray, Operand};
use zend_ssa::{NoClasses, Ssa};
use zend_ssa_textbook::braun::Builder;
use zend_ssa_textbook::compare::check;
use zend_ssa_textbook::cytron::{self, Pruning};
use zend_ssa_textbook::{braun, PhiId, Value};

fn three_way(op_array: &OpArray) -> (Cfg, Dfg) {
    let cfg = Cfg::build(op_array, BuildFlags::NO_ENTRY_PREDECESSORS).expect("cfg");
    let dfg = Dfg::build(op_array, &cfg, BuildFlags::empty());
    let ssa = Ssa::build(op_array, &cfg, &dfg, &NoClasses, BuildFlags::empty()).expect("ssa");
    let outcome = check(op_array, &cfg, &dfg, Some(&ssa));
    for d in &outcome.disagreements {
        eprintln!("{d}");
    }
    assert!(outcome.disagreements.is_empty());
    (cfg, dfg)
}

fn phi_keys(form: &zend_ssa_textbook::SsaForm) -> Vec<(u32, u32)> {
    let mut k: Vec<_> = form
        .phis
        .iter()
        .map(|p| (p.block.as_u32(), p.var))
        .collect();
    k.sort();
    k
}

/// `$v0 = 1; if ($v1) { $v0 = 2; } return $v0;`
#[test]
fn diamond() {
    let mut b = OpArrayBuilder::new("diamond", 2, 0);
    b.op(ZEND_RECV, unused(), unused(), b.cv(1));
    let one = b.long(1);
    b.assign(0, one);
    let j = b.jmpz(b.cv(1), 0);
    let two = b.long(2);
    b.assign(0, two);
    let join = b.next();
    b.patch(j, join);
    b.ret(b.cv(0));
    let op_array = b.finish();
    let (cfg, dfg) = three_way(&op_array);
    let c = cytron::build(&op_array, &cfg, &dfg, Pruning::Pruned);
    assert_eq!(c.phis.len(), 1);
    assert_eq!(phi_keys(&c), phi_keys(&braun::build(&op_array, &cfg)));
}

/// `while ($v1) { $v0 = $v0 + 1; $v1 = $v1 - 1; } return $v0;` plus a temporary defined
/// in the loop and never read: minimal SSA has a phi for it, semi-pruned and pruned not.
#[test]
fn loop_and_pruning() {
    let mut b = OpArrayBuilder::new("loop", 2, 3);
    b.op(ZEND_RECV, unused(), unused(), b.cv(0));
    b.op(ZEND_RECV, unused(), unused(), b.cv(1));
    let head = b.next();
    let exit = b.jmpz(b.cv(1), 0);
    let one = b.long(1);
    b.op(ZEND_ADD, b.cv(0), one, b.tmp(0));
    b.assign(0, b.tmp(0));
    b.op(ZEND_SUB, b.cv(1), one, b.tmp(1));
    b.assign(1, b.tmp(1));
    b.op(ZEND_QM_ASSIGN, one, unused(), b.tmp(2)); // never read
    b.jmp(head);
    let out = b.next();
    b.patch(exit, out);
    b.ret(b.cv(0));
    let op_array = b.finish();
    let (cfg, dfg) = three_way(&op_array);
    let minimal = cytron::build(&op_array, &cfg, &dfg, Pruning::Minimal);
    let semi = cytron::build(&op_array, &cfg, &dfg, Pruning::SemiPruned);
    let pruned = cytron::build(&op_array, &cfg, &dfg, Pruning::Pruned);
    let dead = op_array.last_var() + 2;
    assert!(minimal.phis.iter().any(|p| p.var == dead));
    assert!(!semi.phis.iter().any(|p| p.var == dead));
    assert!(!pruned.phis.iter().any(|p| p.var == dead));
    assert_eq!(pruned.phis.len(), 2);
}

/// Code after a return nothing jumps to: no phis, no uses there.
#[test]
fn unreachable_block() {
    let mut b = OpArrayBuilder::new("unreachable", 2, 0);
    b.op(ZEND_RECV, unused(), unused(), b.cv(0));
    b.ret(b.cv(0));
    let one = b.long(1);
    b.assign(1, one);
    b.ret(b.cv(1));
    let op_array = b.finish();
    let (cfg, dfg) = three_way(&op_array);
    let c = cytron::build(&op_array, &cfg, &dfg, Pruning::Minimal);
    assert!(c.uses.iter().all(|u| u.op < 2));
}

/// Two entries into a loop (irreducible): `if ($v1) goto B; A: $v0++; B: if ($v0) goto A;`
#[test]
fn irreducible_loop() {
    let mut b = OpArrayBuilder::new("irreducible", 2, 1);
    b.op(ZEND_RECV, unused(), unused(), b.cv(0));
    b.op(ZEND_RECV, unused(), unused(), b.cv(1));
    let to_b = b.jmpnz(b.cv(1), 0);
    let a = b.next();
    b.op(ZEND_PRE_INC, b.cv(0), unused(), unused());
    let bb = b.next();
    b.patch(to_b, bb);
    b.op(ZEND_IS_SMALLER, b.cv(0), b.cv(1), b.tmp(0));
    b.jmpnz(b.tmp(0), a);
    b.ret(b.cv(0));
    let op_array = b.finish();
    three_way(&op_array);
}

/// 200 CVs each assigned on one side of its own diamond, all returned at the end.
#[test]
fn many_variables() {
    let n = 200;
    let mut b = OpArrayBuilder::new("many", n + 1, 0);
    b.op(ZEND_RECV, unused(), unused(), b.cv(n));
    for i in 0..n {
        let j = b.jmpz(b.cv(n), 0);
        let v = b.long(i as i64);
        b.assign(i, v);
        let next = b.next();
        b.patch(j, next);
    }
    for i in 0..n {
        b.op(ZEND_SEND_VAR, b.cv(i), unused(), unused());
    }
    b.ret(b.cv(0));
    let op_array = b.finish();
    let (cfg, dfg) = three_way(&op_array);
    assert_eq!(
        cytron::build(&op_array, &cfg, &dfg, Pruning::Pruned)
            .phis
            .len(),
        n as usize
    );
}

/// try/catch: PHP builds no SSA, Cytron and Braun still agree (the catch block is a root).
#[test]
fn try_catch() {
    let mut b = OpArrayBuilder::new("trycatch", 2, 0);
    b.op(ZEND_RECV, unused(), unused(), b.cv(0));
    let one = b.long(1);
    b.assign(1, one);
    let jmp = b.jmp(0);
    let catch = b.next();
    b.op(ZEND_CATCH, unused(), unused(), unused());
    b.assign(1, b.cv(0));
    let end = b.next();
    b.patch(jmp, end);
    b.ret(b.cv(1));
    let mut op_array = b.finish();
    op_array.try_catch_array.push(zend_ir::TryCatchElement {
        try_op: zend_ir::OpNum::new(1),
        catch_op: Some(zend_ir::OpNum::new(catch)),
        finally_op: None,
        finally_end: None,
    });
    let Ok(cfg) = Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS) else {
        return;
    };
    let dfg = Dfg::build(&op_array, &cfg, BuildFlags::empty());
    let outcome = check(&op_array, &cfg, &dfg, None);
    assert!(
        outcome.disagreements.is_empty(),
        "{:?}",
        outcome.disagreements
    );
}

/// 100k-op functions of every shape: no recursion that grows with the input.
#[test]
fn huge_functions() {
    for shape in [Shape::IfChain, Shape::LoopNest, Shape::Switch] {
        let op_array = generate(shape, 100_000, 8);
        let cfg = Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS).expect("cfg");
        let dfg = Dfg::build(&op_array, &cfg, BuildFlags::empty());
        let ssa = Ssa::build(&op_array, &cfg, &dfg, &NoClasses, BuildFlags::empty()).ok();
        let outcome = check(&op_array, &cfg, &dfg, ssa.as_ref());
        assert!(
            outcome.disagreements.is_empty(),
            "{:?}",
            &outcome.disagreements[..1]
        );
    }
}

/// The incremental API as a front end drives it: a loop whose header is sealed late.
#[test]
fn incremental_api() {
    let mut b = Builder::new(|_| Value::Undef);
    let entry = b.new_block();
    let head = b.new_block();
    let body = b.new_block();
    let exit = b.new_block();
    b.seal_block(entry);
    b.write_variable(entry, 0, Value::Def { op: 0, var: 0 });
    b.fill_block(entry);
    b.add_predecessor(head, entry);
    b.add_predecessor(head, body);
    let x = b.read_variable(head, 0); // incomplete phi: the back edge is not filled
    assert!(matches!(x, Value::Phi(_)));
    b.fill_block(head);
    b.add_predecessor(body, head);
    b.seal_block(body);
    let y = b.read_variable(body, 0);
    assert_eq!(b.resolve(y), b.resolve(x));
    b.fill_block(body); // no write: the loop does not change var 0
    b.seal_block(head); // the phi is trivial
    assert_eq!(b.resolve(x), Value::Def { op: 0, var: 0 });
    b.add_predecessor(exit, head);
    b.seal_block(exit);
    assert_eq!(b.read_variable(exit, 0), Value::Def { op: 0, var: 0 });
    let (phis, _) = b.finish();
    assert!(phis.is_empty());
    let _ = (PhiId(0), BlockId::new(0), Operand::Unused(0));
}

/// Minimal, semi-pruned and pruned placement give every use the same value (phis the
/// pruned form omits are dead), and pruned ⊆ semi-pruned ⊆ minimal.
#[test]
fn pruning_variants_agree_on_uses() {
    for shape in [Shape::IfChain, Shape::LoopNest, Shape::Switch] {
        let op_array = generate(shape, 2_000, 6);
        let cfg = Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS).expect("cfg");
        let dfg = Dfg::build(&op_array, &cfg, BuildFlags::empty());
        let forms: Vec<_> = [Pruning::Minimal, Pruning::SemiPruned, Pruning::Pruned]
            .into_iter()
            .map(|p| cytron::build(&op_array, &cfg, &dfg, p))
            .collect();
        let named = |f: &zend_ssa_textbook::SsaForm| -> Vec<(u32, u32, String)> {
            f.uses
                .iter()
                .map(|u| {
                    let v = match f.phi(u.value) {
                        Some(p) => format!("phi {:?} {}", p.block, p.var),
                        None => u.value.to_string(),
                    };
                    (u.op, u.var, v)
                })
                .collect()
        };
        assert_eq!(named(&forms[0]), named(&forms[2]), "{shape:?}");
        assert_eq!(named(&forms[1]), named(&forms[2]), "{shape:?}");
        let keys: Vec<_> = forms.iter().map(phi_keys).collect();
        assert!(keys[2].iter().all(|k| keys[1].contains(k)));
        assert!(keys[1].iter().all(|k| keys[0].contains(k)));
        assert!(keys[0].len() >= keys[2].len());
    }
}

/// A wrong answer is reported precisely: function, block, variable, every builder's value.
#[test]
fn disagreements_are_reported() {
    let mut b = OpArrayBuilder::new("diamond", 2, 0);
    b.op(ZEND_RECV, unused(), unused(), b.cv(1));
    let one = b.long(1);
    b.assign(0, one);
    let j = b.jmpz(b.cv(1), 0);
    let two = b.long(2);
    b.assign(0, two);
    let join = b.next();
    b.patch(j, join);
    let ret = b.ret(b.cv(0));
    let op_array = b.finish();
    let cfg = Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS).expect("cfg");
    let dfg = Dfg::build(&op_array, &cfg, BuildFlags::empty());
    let ssa = Ssa::build(&op_array, &cfg, &dfg, &NoClasses, BuildFlags::empty()).expect("ssa");
    let cytron = cytron::build(&op_array, &cfg, &dfg, Pruning::Pruned);
    let mut braun = braun::build(&op_array, &cfg);
    let u = braun
        .uses
        .iter_mut()
        .find(|u| u.op == ret)
        .expect("the return's use");
    u.value = Value::Def { op: 1, var: 0 };
    let outcome =
        zend_ssa_textbook::compare::compare_forms(&op_array, &cfg, &cytron, &braun, Some(&ssa));
    assert_eq!(outcome.disagreements.len(), 1);
    let d = &outcome.disagreements[0];
    assert_eq!(d.function, "diamond");
    assert_eq!(d.var, "$v0");
    assert_eq!(d.block, cfg.map[ret as usize].as_u32());
    assert!(d.braun.starts_with("def(op 1"), "{d}");
    assert!(d.cytron.starts_with("phi("), "{d}");
    assert_eq!(d.php.as_deref(), Some(d.cytron.as_str()));
}
