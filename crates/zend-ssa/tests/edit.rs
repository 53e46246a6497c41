//! The SSA edit API on real op_arrays: PHP 8.2 recordings of the fixtures, built into
//! SSA as the DFA pass builds it; each edit is checked with the verifier, against PHP's
//! chain order, and, where the edit leaves an op_array PHP would build the same SSA for,
//! against the SSA built afresh from the edited op_array.

use std::path::PathBuf;
use zend_cfg::{BlockId, BuildFlags, Cfg};
use zend_dfg::Dfg;
use zend_ir::opcode::*;
use zend_ir::{OpArray, OpNum, Script};
use zend_ssa::{verify, NoClasses, PhiId, Ssa, SsaVar};

fn fixture(name: &str) -> Script {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/expected")
        .join(name)
        .join("recording.zop");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    zend_ir::zop::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn function(script: &Script, name: &str) -> OpArray {
    script
        .op_arrays()
        .into_iter()
        .find(|o| o.display_name() == name)
        .unwrap_or_else(|| panic!("no function {name}"))
        .clone()
}

/// The DFA pass's analyses: CFG (no entry predecessors), SSA, chains, no_val, SCCs; for
/// the functions the DFA pass takes (no try/catch, no indirect variable access).
fn analyse(op_array: &OpArray) -> Option<(Cfg, Ssa)> {
    if !op_array.try_catch_array.is_empty() {
        return None;
    }
    let cfg = Cfg::build(op_array, BuildFlags::NO_ENTRY_PREDECESSORS).ok()?;
    let dfg = Dfg::build(op_array, &cfg, BuildFlags::empty());
    let mut ssa = Ssa::build(op_array, &cfg, &dfg, &NoClasses, BuildFlags::empty()).ok()?;
    ssa.find_false_dependencies(op_array);
    ssa.find_sccs(op_array);
    verify(op_array, &cfg, &ssa).unwrap();
    Some((cfg, ssa))
}

fn all_fixtures() -> Vec<(String, Script)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/expected");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("recording.zop").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let s = fixture(&n);
            (n, s)
        })
        .collect()
}

fn ops_of(ssa: &Ssa, var: u32) -> Vec<u32> {
    ssa.uses(SsaVar::new(var)).map(|o| o.as_u32()).collect()
}

fn phis_of(ssa: &Ssa, var: u32) -> Vec<u32> {
    ssa.phi_uses(SsaVar::new(var))
        .map(|p| ssa.phi(p).ssa_var.as_u32())
        .collect()
}

/// The phi or pi defining SSA variable `var`.
fn phi_defining(ssa: &Ssa, var: u32) -> PhiId {
    ssa.vars[var as usize].definition_phi.unwrap()
}

fn sources(ssa: &Ssa, var: u32) -> Vec<u32> {
    ssa.phi(phi_defining(ssa, var))
        .sources
        .iter()
        .map(|s| s.unwrap().as_u32())
        .collect()
}

fn check(op_array: &OpArray, cfg: &Cfg, ssa: &Ssa) {
    if let Err(e) = verify(op_array, cfg, ssa) {
        panic!("{e}\n{}", show(op_array, cfg, ssa));
    }
}

/// `is_prime_trial($n)` of app_sieve: `if ($n < 2) return false; if ($n % 2 == 0) return
/// $n == 2; for ($d = 3; $d * $d <= $n; $d += 2) if ($n % $d == 0) return false; return
/// true;` BB0 ends with JMPZ #3 (BB2, BB1); BB1 `return false`; BB2 holds the pi #4 of
/// $n; BB3 (ops 7-9) `return $n == 2`; the loop header BB8 has `#10 = Phi(#9, #15)`.
fn is_prime_trial() -> (OpArray, Cfg, Ssa) {
    let op_array = function(&fixture("app_sieve"), "is_prime_trial");
    let (cfg, ssa) = analyse(&op_array).unwrap();
    // The shape the tests below rely on.
    assert_eq!(ops_of(&ssa, 4), vec![4, 7, 12, 18]);
    assert_eq!(ops_of(&ssa, 10), vec![12, 16, 17]);
    assert_eq!(sources(&ssa, 10), vec![9, 15]);
    assert!(ssa.phi(phi_defining(&ssa, 4)).is_pi());
    (op_array, cfg, ssa)
}

#[test]
fn unlink_and_replace_use_chain() {
    let (_, _, mut ssa) = is_prime_trial();
    let v = SsaVar::new(4);
    // Unlinking keeps the order of the rest of the chain.
    assert!(ssa.unlink_use_chain(OpNum::new(12), v));
    assert_eq!(ops_of(&ssa, 4), vec![4, 7, 18]);
    assert!(ssa.unlink_use_chain(OpNum::new(4), v));
    assert_eq!(ops_of(&ssa, 4), vec![7, 18]);
    assert!(ssa.unlink_use_chain(OpNum::new(18), v));
    assert_eq!(ops_of(&ssa, 4), vec![7]);
    // Op 12 takes the place of op 7 (its own link continues the chain).
    ssa.ops[12].op1_use_chain = ssa.ops[7].op1_use_chain;
    assert!(ssa.replace_use_chain(OpNum::new(7), OpNum::new(12), v));
    assert_eq!(ops_of(&ssa, 4), vec![12]);
    // A use in the middle of a chain: op 16 between 12 and 17 in #10's chain.
    let (_, _, mut ssa) = is_prime_trial();
    ssa.ops[15].op1_use = Some(SsaVar::new(10));
    ssa.ops[15].op1_use_chain = ssa.ops[16].op1_use_chain;
    assert!(ssa.replace_use_chain(OpNum::new(16), OpNum::new(15), SsaVar::new(10)));
    assert_eq!(ops_of(&ssa, 10), vec![12, 15, 17]);
}

/// An op using the same variable in two operands (`$d * $d`) is linked once; removing it
/// unlinks it once.
#[test]
fn remove_instr_with_a_variable_in_both_operands() {
    let (mut op_array, cfg, mut ssa) = is_prime_trial();
    assert_eq!(ssa.ops[17].op1_use, ssa.ops[17].op2_use);
    // DCE's order: the result's uses go first (the compare at 18 reads it).
    ssa.remove_defs_of_instr(OpNum::new(17));
    assert_eq!(ssa.ops[18].op1_use, None);
    ssa.remove_instr(&mut op_array, OpNum::new(17));
    assert_eq!(op_array.opcodes[17].opcode, ZEND_NOP);
    assert_eq!(ops_of(&ssa, 10), vec![12, 16]);
    assert_eq!(ssa.vars[11].definition, None);
    // The compare lost its op1: remove it too, and the JMPNZ reading it.
    ssa.remove_defs_of_instr(OpNum::new(18));
    ssa.remove_instr(&mut op_array, OpNum::new(18));
    ssa.remove_instr(&mut op_array, OpNum::new(19));
    assert_eq!(ops_of(&ssa, 4), vec![4, 7, 12]);
    // The CFG still has BB8's edges; the verifier checks SSA against ops and blocks.
    check(&op_array, &cfg, &ssa);
}

/// What SCCP does when `$n < 2` is known false: BB1 (`return false`) is removed, the
/// JMPZ becomes a JMP, the dead compare goes; then the NOPs and the unreachable tail are
/// compacted away.
#[test]
fn remove_untaken_block_then_compact() {
    let (mut op_array, mut cfg, mut ssa) = is_prime_trial();
    let before = op_array.clone();
    ssa.remove_block(&mut op_array, &mut cfg, BlockId::new(1));
    assert!(!cfg.blocks[1].is_reachable());
    assert_eq!(op_array.opcodes[3].opcode, ZEND_NOP);
    assert_eq!(cfg.successors(BlockId::new(0)), &[BlockId::new(2)]);
    assert_eq!(cfg.predecessors(BlockId::new(1)), &[]);
    assert_eq!(cfg.blocks[0].children, Some(BlockId::new(2)));
    assert_eq!(cfg.blocks[1].idom, None);
    assert_eq!(cfg.blocks[1].level, None);
    // JMPZ #3 -> JMP BB2.
    assert!(ssa.unlink_use_chain(OpNum::new(2), SsaVar::new(3)));
    ssa.ops[2].op1_use = None;
    let target = op_array.opcodes[2].op2;
    op_array.opcodes[2].opcode = ZEND_JMP;
    op_array.opcodes[2].op1 = target;
    op_array.opcodes[2].op2 = zend_ir::Operand::Unused(0);
    // The compare is dead now.
    assert_eq!(ops_of(&ssa, 3), Vec::<u32>::new());
    ssa.remove_result_def(OpNum::new(1));
    ssa.remove_instr(&mut op_array, OpNum::new(1));
    assert_eq!(ops_of(&ssa, 2), Vec::<u32>::new());
    assert_eq!(phis_of(&ssa, 2), vec![4]);
    check(&op_array, &cfg, &ssa);

    let renumbering = ssa.remove_nops(&mut op_array, &mut cfg);
    check(&op_array, &cfg, &ssa);
    // Ops 1 and 3 were NOPs, 21-22 unreachable.
    assert_eq!(op_array.opcodes.len(), 19);
    assert_eq!(renumbering.new_len(), 19);
    assert_eq!(renumbering.new_op(OpNum::new(4)), OpNum::new(2));
    assert_eq!(renumbering.shift(OpNum::new(4)), 2);
    assert_eq!(renumbering.new_op(OpNum::new(3)), OpNum::new(2));
    for old in [0, 4, 7, 12, 16, 20] {
        let new = renumbering.new_op(OpNum::new(old)).index();
        assert_eq!(
            op_array.opcodes[new].opcode,
            before.opcodes[old as usize].opcode
        );
    }
    // Blocks: BB1 is empty where its successor starts; the unreachable tail is empty too.
    let spans: Vec<(u32, u32)> = cfg.blocks.iter().map(|b| (b.start, b.len)).collect();
    assert_eq!(
        spans,
        vec![
            (0, 2),
            (2, 0),
            (2, 3),
            (5, 3),
            (8, 2),
            (10, 3),
            (13, 1),
            (14, 1),
            (15, 3),
            (18, 1),
            (19, 0)
        ]
    );
    assert_eq!(cfg.map.len(), 19);
    // Jumps follow their targets: JMP BB2, JMPZ BB4 (old 10), JMP BB8 (old 17), JMPZ BB7
    // (old 16), JMPNZ BB5 (old 12).
    let jmp = |n: usize, operand: zend_ir::Operand| match operand {
        zend_ir::Operand::JmpAddr(t) => (n, t.as_u32()),
        other => panic!("op {n}: {other:?}"),
    };
    assert_eq!(jmp(1, op_array.opcodes[1].op1), (1, 2));
    assert_eq!(jmp(4, op_array.opcodes[4].op2), (4, 8));
    assert_eq!(jmp(9, op_array.opcodes[9].op1), (9, 15));
    assert_eq!(jmp(12, op_array.opcodes[12].op2), (12, 14));
    assert_eq!(jmp(17, op_array.opcodes[17].op2), (17, 10));
    // Chains and definitions moved with their ops.
    assert_eq!(ops_of(&ssa, 4), vec![2, 5, 10, 16]);
    assert_eq!(ops_of(&ssa, 10), vec![10, 14, 15]);
    assert_eq!(ssa.vars[5].definition, Some(OpNum::new(2)));
    // The compacted op_array builds the same blocks as the renumbered CFG.
    let fresh = Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS).unwrap();
    let reachable = |c: &Cfg| -> Vec<(u32, u32, Vec<u32>)> {
        c.blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.is_reachable())
            .map(|(i, b)| {
                let succ = c.successors(BlockId::new(i as u32));
                (
                    b.start,
                    b.len,
                    succ.iter().map(|s| c.blocks[s.index()].start).collect(),
                )
            })
            .collect()
    };
    assert_eq!(reachable(&cfg), reachable(&fresh));
}

/// Removing a block whose ops define values used elsewhere (`return $n == 2`, BB3): the
/// definitions lose their uses, then the ops become NOPs.
#[test]
fn remove_block_with_definitions() {
    let (mut op_array, mut cfg, mut ssa) = is_prime_trial();
    ssa.remove_block(&mut op_array, &mut cfg, BlockId::new(3));
    for op in 7..=9 {
        assert_eq!(op_array.opcodes[op].opcode, ZEND_NOP);
        assert_eq!(ssa.ops[op], Default::default());
    }
    assert_eq!(ssa.vars[7].definition, None);
    assert_eq!(ssa.vars[8].definition, None);
    assert_eq!(ops_of(&ssa, 4), vec![4, 12, 18]);
    assert_eq!(cfg.successors(BlockId::new(2)), &[BlockId::new(4)]);
    assert_eq!(cfg.blocks[2].children, Some(BlockId::new(4)));
    // JMPZ #6 BB4 -> JMP BB4.
    ssa.unlink_use_chain(OpNum::new(6), SsaVar::new(6));
    ssa.ops[6].op1_use = None;
    let target = op_array.opcodes[6].op2;
    op_array.opcodes[6].opcode = ZEND_JMP;
    op_array.opcodes[6].op1 = target;
    op_array.opcodes[6].op2 = zend_ir::Operand::Unused(0);
    check(&op_array, &cfg, &ssa);
}

/// The loop back edge BB7 -> BB8 goes: the phi `#10 = Phi(#9, #15)` keeps one source;
/// then, as a trivial phi, its uses are renamed to #9 — PHP pushes each renamed op to the
/// head of #9's chain, so they end up in reverse order — and it is removed.
#[test]
fn remove_predecessor_then_trivial_phi() {
    let (op_array, mut cfg, mut ssa) = is_prime_trial();
    ssa.remove_predecessor(&mut cfg, BlockId::new(7), BlockId::new(8));
    assert_eq!(cfg.predecessors(BlockId::new(8)), &[BlockId::new(4)]);
    assert_eq!(sources(&ssa, 10), vec![9]);
    assert_eq!(phis_of(&ssa, 15), Vec::<u32>::new());
    assert_eq!(phis_of(&ssa, 9), vec![10]);
    // Removing it again does nothing.
    ssa.remove_predecessor(&mut cfg, BlockId::new(7), BlockId::new(8));
    assert_eq!(cfg.predecessors(BlockId::new(8)), &[BlockId::new(4)]);
    cfg.remove_successor(BlockId::new(7), BlockId::new(8));
    check(&op_array, &cfg, &ssa);

    let phi = phi_defining(&ssa, 10);
    ssa.rename_var_uses(SsaVar::new(10), SsaVar::new(9), None);
    assert_eq!(ops_of(&ssa, 9), vec![17, 16, 12]);
    assert_eq!(ops_of(&ssa, 10), Vec::<u32>::new());
    ssa.remove_phi(phi);
    assert!(ssa.is_phi_removed(phi));
    assert!(ssa.blocks[8].phis.is_empty());
    assert_eq!(phis_of(&ssa, 9), Vec::<u32>::new());
    assert_eq!(ssa.vars[10].definition_phi, None);
    check(&op_array, &cfg, &ssa);
    // The verifier notices a removed phi put back on a chain.
    let mut broken = ssa.clone();
    broken.vars[9].phi_use_chain = Some(phi);
    let err = verify(&op_array, &cfg, &broken).unwrap_err();
    assert!(
        err.failures.iter().any(|f| f.contains("in no block")),
        "{err}"
    );
}

/// DCE removing `$d += 2` (op 16) by renaming its definition to its use: the loop phi
/// `#10 = Phi(#9, #15)` becomes `Phi(#9, #10)`, a use of itself added to #10's phi chain.
#[test]
fn rename_defs_of_instr_makes_a_self_referencing_phi() {
    let (mut op_array, cfg, mut ssa) = is_prime_trial();
    ssa.rename_defs_of_instr(OpNum::new(16), None);
    assert_eq!(ssa.vars[15].definition, None);
    assert_eq!(sources(&ssa, 10), vec![9, 10]);
    assert_eq!(phis_of(&ssa, 10), vec![10]);
    ssa.remove_instr(&mut op_array, OpNum::new(16));
    assert_eq!(ops_of(&ssa, 10), vec![12, 17]);
    check(&op_array, &cfg, &ssa);
}

/// `digits($n)` of ctl_do_while: the do-while back edge BB1 -> BB1 carries a pi
/// `#4 = Pi<BB1>(#10)` feeding `#5 = Phi(#2, #4)`. Removing the edge renames the pi's
/// uses to its source and removes it, then drops the phis' back-edge sources.
#[test]
fn remove_predecessor_removes_the_pi_on_the_edge() {
    let mut op_array = function(&fixture("ctl_do_while"), "digits");
    let (mut cfg, mut ssa) = analyse(&op_array).unwrap();
    let pi = phi_defining(&ssa, 4);
    assert_eq!(ssa.phi(pi).pi, Some(BlockId::new(1)));
    assert_eq!(sources(&ssa, 5), vec![2, 4]);
    assert_eq!(sources(&ssa, 6), vec![3, 8]);
    assert_eq!(phis_of(&ssa, 10), vec![4]);

    ssa.remove_predecessor(&mut cfg, BlockId::new(1), BlockId::new(1));
    assert!(ssa.is_phi_removed(pi));
    assert_eq!(ssa.blocks[1].phis.len(), 2);
    assert_eq!(sources(&ssa, 5), vec![2]);
    assert_eq!(sources(&ssa, 6), vec![3]);
    assert_eq!(phis_of(&ssa, 10), Vec::<u32>::new());
    assert_eq!(phis_of(&ssa, 8), Vec::<u32>::new());
    assert_eq!(cfg.predecessors(BlockId::new(1)), &[BlockId::new(0)]);
    cfg.remove_successor(BlockId::new(1), BlockId::new(1));
    // The JMPNZ goes (control falls through to BB2).
    ssa.remove_instr(&mut op_array, OpNum::new(11));
    assert_eq!(ops_of(&ssa, 11), Vec::<u32>::new());
    check(&op_array, &cfg, &ssa);

    // Both phis are trivial now.
    for (phi_var, source) in [(5, 2), (6, 3)] {
        let phi = phi_defining(&ssa, phi_var);
        ssa.rename_var_uses(SsaVar::new(phi_var), SsaVar::new(source), None);
        ssa.remove_phi(phi);
    }
    // #5 was used by ops 2, 6 and 9 (the ASSIGN's target): reversed onto #2.
    assert_eq!(ops_of(&ssa, 2), vec![9, 6, 2]);
    assert_eq!(ops_of(&ssa, 3), vec![3]);
    assert!(ssa.blocks[1].phis.is_empty());
    check(&op_array, &cfg, &ssa);
}

/// `forward($n)` of ctl_goto: `if ($n > 5) goto big; echo "small $n\n"; goto done; big:
/// echo "big $n\n"; done: return $n * 2;`. With `$n > 5` known false, SCCP removes BB1
/// (its pi #4 and JMP) and BB3 (the "big" branch): the join's `#11 = Phi(#3, #4)` keeps
/// #3 only.
#[test]
fn remove_blocks_of_a_dead_branch() {
    let mut op_array = function(&fixture("ctl_goto"), "forward");
    let (mut cfg, mut ssa) = analyse(&op_array).unwrap();
    assert_eq!(sources(&ssa, 11), vec![3, 4]);
    assert_eq!(ops_of(&ssa, 4), vec![10]);
    for b in [1, 3] {
        ssa.remove_block(&mut op_array, &mut cfg, BlockId::new(b));
    }
    assert_eq!(sources(&ssa, 11), vec![3]);
    assert_eq!(phis_of(&ssa, 3), vec![11]);
    assert_eq!(ssa.vars[4].definition_phi, None);
    assert_eq!(cfg.predecessors(BlockId::new(4)), &[BlockId::new(2)]);
    assert_eq!(cfg.predecessors(BlockId::new(3)), &[]);
    assert_eq!(cfg.successors(BlockId::new(0)), &[BlockId::new(2)]);
    assert_eq!(cfg.blocks[0].children, Some(BlockId::new(2)));
    assert_eq!(cfg.blocks[2].next_child, Some(BlockId::new(4)));
    for op in [3, 9, 10, 11, 12] {
        assert_eq!(op_array.opcodes[op].opcode, ZEND_NOP, "op {op}");
    }
    // JMPZ #2 BB2 -> JMP BB2, and the dead compare.
    ssa.unlink_use_chain(OpNum::new(2), SsaVar::new(2));
    ssa.ops[2].op1_use = None;
    let target = op_array.opcodes[2].op2;
    op_array.opcodes[2].opcode = ZEND_JMP;
    op_array.opcodes[2].op1 = target;
    op_array.opcodes[2].op2 = zend_ir::Operand::Unused(0);
    ssa.remove_result_def(OpNum::new(1));
    ssa.remove_instr(&mut op_array, OpNum::new(1));
    check(&op_array, &cfg, &ssa);

    ssa.remove_nops(&mut op_array, &mut cfg);
    check(&op_array, &cfg, &ssa);
    let names: Vec<String> = op_array
        .opcodes
        .iter()
        .map(|o| o.opcode.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "RECV",
            "JMP",
            "ROPE_INIT",
            "ROPE_ADD",
            "ROPE_END",
            "ECHO",
            "JMP",
            "MUL",
            "RETURN"
        ]
    );
    assert_eq!(
        op_array.opcodes[1].op1,
        zend_ir::Operand::JmpAddr(OpNum::new(2))
    );
    assert_eq!(
        op_array.opcodes[6].op1,
        zend_ir::Operand::JmpAddr(OpNum::new(7))
    );
    assert_eq!(
        ssa.vars[11].definition_phi.map(|p| ssa.phi(p).block),
        Some(BlockId::new(4))
    );
    assert_eq!(ops_of(&ssa, 11), vec![7]);
}

struct Types(Vec<u32>);

impl zend_ssa::VarTypes for Types {
    fn type_mask(&self, var: SsaVar) -> u32 {
        self.0[var.index()]
    }
    fn set_type_mask(&mut self, var: SsaVar, mask: u32) {
        self.0[var.index()] = mask;
    }
}

/// `update_types`: renaming a phi source to a variable of wider type widens the phi, and
/// the phis using it in turn (`propagate_phi_type_widening`).
#[test]
fn rename_var_uses_widens_phi_types() {
    const LONG: u32 = 1 << 4;
    const DOUBLE: u32 = 1 << 5;
    let op_array = function(&fixture("app_sieve"), "factorize");
    let (cfg, mut ssa) = analyse(&op_array).unwrap();
    // A phi whose result feeds another phi, and a source of the first defined by an op.
    let (phi, next) = ssa
        .all_phis()
        .filter(|&p| !ssa.phi(p).is_pi())
        .find_map(|p| {
            let next = ssa
                .phi_uses(ssa.phi(p).ssa_var)
                .find(|&q| !ssa.phi(q).is_pi())?;
            Some((p, next))
        })
        .expect("a phi of a phi");
    let old = ssa.phi(phi).sources[0].unwrap();
    // Another value of the same variable, defined before (the entry value).
    let new = SsaVar::new(ssa.phi(phi).var);
    assert_ne!(old, new);
    let mut types = Types(vec![LONG; ssa.vars.len()]);
    types.0[new.index()] = LONG | DOUBLE;
    let phi_var = ssa.phi(phi).ssa_var;
    let next_var = ssa.phi(next).ssa_var;
    let old_uses: Vec<u32> = ops_of(&ssa, old.as_u32());
    let new_uses: Vec<u32> = ops_of(&ssa, new.as_u32());
    ssa.rename_var_uses(old, new, Some(&mut types));
    assert_eq!(ssa.phi(phi).sources[0], Some(new));
    assert_eq!(types.0[phi_var.index()], LONG | DOUBLE);
    assert_eq!(types.0[next_var.index()], LONG | DOUBLE);
    let mut expected: Vec<u32> = old_uses.iter().rev().copied().collect();
    expected.extend(new_uses);
    assert_eq!(ops_of(&ssa, new.as_u32()), expected);
    assert!(phis_of(&ssa, new.as_u32()).contains(&phi_var.as_u32()));
    assert_eq!(phis_of(&ssa, old.as_u32()), Vec::<u32>::new());
    let _ = cfg;
}

fn show(op_array: &OpArray, cfg: &Cfg, ssa: &Ssa) -> String {
    let mut out = Vec::new();
    zend_ssa::dump::dump_ssa(&mut out, op_array, cfg, ssa, None, Some("edit"));
    String::from_utf8_lossy(&out).into_owned()
}

/// Why two analyses differ, or `None`. `ours` may have extra trailing blocks that are
/// unreachable and empty (what compaction leaves of an unreachable tail).
fn difference(ours: (&Cfg, &Ssa), fresh: (&Cfg, &Ssa)) -> Option<String> {
    let ((c1, s1), (c2, s2)) = (ours, fresh);
    let n = c2.blocks_count();
    if c1.blocks_count() < n
        || c1.blocks[n..]
            .iter()
            .any(|b| b.is_reachable() || b.len != 0)
    {
        return Some(format!("blocks: {} vs {n}", c1.blocks_count()));
    }
    for i in 0..n {
        let (a, b) = (&c1.blocks[i], &c2.blocks[i]);
        let id = BlockId::new(i as u32);
        if a != b
            && (
                a.flags,
                a.start,
                a.len,
                a.idom,
                a.level,
                a.children,
                a.next_child,
                a.loop_header,
            ) != (
                b.flags,
                b.start,
                b.len,
                b.idom,
                b.level,
                b.children,
                b.next_child,
                b.loop_header,
            )
        {
            return Some(format!("BB{i}: {a:?} vs {b:?}"));
        }
        if c1.successors(id) != c2.successors(id) || c1.predecessors(id) != c2.predecessors(id) {
            return Some(format!("BB{i}: edges"));
        }
    }
    if c1.map != c2.map {
        return Some("op -> block map".into());
    }
    if c1.try_catch != c2.try_catch {
        return Some(format!(
            "try/catch {:?} vs {:?}",
            c1.try_catch, c2.try_catch
        ));
    }
    if s1.ops != s2.ops {
        let i = (0..s1.ops.len().min(s2.ops.len())).find(|&i| s1.ops[i] != s2.ops[i]);
        return Some(format!(
            "ssa ops (first at {i:?}: {:?} vs {:?})",
            i.map(|i| s1.ops[i]),
            i.map(|i| s2.ops[i])
        ));
    }
    if s1.vars != s2.vars {
        let i = (0..s1.vars.len().min(s2.vars.len())).find(|&i| s1.vars[i] != s2.vars[i]);
        return Some(format!(
            "ssa vars (first at {i:?}: {:?} vs {:?})",
            i.map(|i| &s1.vars[i]),
            i.map(|i| &s2.vars[i])
        ));
    }
    if s1.phis != s2.phis || s1.blocks[..n] != s2.blocks[..] || s1.sccs != s2.sccs {
        return Some("phis".into());
    }
    None
}

/// Every fixture function: dropping the ops whose removal changes no SSA value (ECHO of
/// a constant, FREE of a temporary defined in the same block, SEND_VAL) with
/// `remove_instr`, then compacting with `remove_nops`, gives exactly the blocks, edges,
/// op -> block map, try/catch table and SSA form (numbering, phis, chains, SCCs) that PHP's
/// algorithms build from the compacted op_array — so jump targets, jump tables,
/// `extended_value` targets and try/catch offsets moved right — and the verifier accepts
/// the result. Kept live ranges and jump targets still name the same ops.
#[test]
fn remove_nops_matches_a_fresh_build() {
    let mut compared = 0;
    let mut removed_total = 0;
    let mut shifted_tables = 0;
    let mut failures = Vec::new();
    for (name, script) in all_fixtures() {
        for original in script.op_arrays() {
            let mut op_array = original.clone();
            let Some((mut cfg, mut ssa)) = analyse(&op_array) else {
                continue;
            };
            let fname = format!("{name}:{}", op_array.display_name());
            // Compact once first: the unreachable code goes.
            ssa.remove_nops(&mut op_array, &mut cfg);
            if let Err(e) = verify(&op_array, &cfg, &ssa) {
                failures.push(format!("{fname}: first compaction: {e}"));
                continue;
            }
            // Only layouts a fresh build reproduces: no empty block before a kept one.
            let last_kept = cfg.blocks.iter().rposition(|b| b.len != 0).unwrap_or(0);
            if cfg.blocks[..last_kept].iter().any(|b| b.len == 0) {
                continue;
            }
            let Some((cfg_a, ssa_a)) = analyse(&op_array) else {
                failures.push(format!("{fname}: compacted op_array does not build"));
                continue;
            };
            if let Some(d) = difference((&cfg, &ssa), (&cfg_a, &ssa_a)) {
                failures.push(format!("{fname}: first compaction: {d}"));
                continue;
            }

            // Remove what changes no SSA value, leaving every block one op at least.
            let before = op_array.clone();
            let mut removed = Vec::new();
            for b in 0..cfg.blocks_count() {
                let block = cfg.blocks[b].clone();
                if !block.is_reachable() {
                    continue;
                }
                let mut left = block.len;
                for i in block.ops() {
                    let op = &op_array.opcodes[i as usize];
                    let same_block_tmp = |operand: zend_ir::Operand| {
                        matches!(
                            operand,
                            zend_ir::Operand::TmpVar(_) | zend_ir::Operand::Var(_)
                        ) && ssa.ops[i as usize].op1_use.is_some_and(|v| {
                            ssa.vars[v.index()]
                                .definition
                                .is_some_and(|d| cfg.map[d.index()].index() == b)
                        })
                    };
                    let removable = match op.opcode {
                        ZEND_ECHO => matches!(op.op1, zend_ir::Operand::Const(_)),
                        ZEND_FREE => op.extended_value == 0 && same_block_tmp(op.op1),
                        ZEND_SEND_VAL => {
                            matches!(op.op1, zend_ir::Operand::Const(_)) || same_block_tmp(op.op1)
                        }
                        _ => false,
                    };
                    if removable && left > 1 {
                        ssa.remove_instr(&mut op_array, OpNum::new(i));
                        removed.push(i);
                        left -= 1;
                    }
                }
            }
            if removed.is_empty() {
                continue;
            }
            if let Err(e) = verify(&op_array, &cfg, &ssa) {
                failures.push(format!("{fname}: after remove_instr: {e}"));
                continue;
            }
            let renumbering = ssa.remove_nops(&mut op_array, &mut cfg);
            if let Err(e) = verify(&op_array, &cfg, &ssa) {
                failures.push(format!("{fname}: {e}"));
                continue;
            }
            // The values no longer read: PHP recomputes these analyses, edits do not.
            ssa.find_false_dependencies(&op_array);
            ssa.find_sccs(&op_array);
            let Some((cfg_b, ssa_b)) = analyse(&op_array) else {
                failures.push(format!("{fname}: compacted op_array does not build"));
                continue;
            };
            if let Some(d) = difference((&cfg, &ssa), (&cfg_b, &ssa_b)) {
                failures.push(format!("{fname}: {d}"));
                continue;
            }
            // The kept ops are the old ones, in order; ranges name the same ops.
            for (old, op) in before.opcodes.iter().enumerate() {
                if removed.contains(&(old as u32)) {
                    continue;
                }
                let new = renumbering.new_op(OpNum::new(old as u32)).index();
                if op.opcode != op_array.opcodes[new].opcode
                    || op.op1.var() != op_array.opcodes[new].op1.var()
                {
                    failures.push(format!("{fname}: op {old} is not at {new}"));
                }
                if matches!(
                    op.opcode,
                    ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH
                ) && renumbering.shift(OpNum::new(old as u32)) > 0
                {
                    shifted_tables += 1;
                }
            }
            for (r_old, r_new) in before.live_range.iter().zip(&op_array.live_range) {
                if r_old.var != r_new.var || renumbering.new_op(r_old.end) != r_new.end {
                    failures.push(format!("{fname}: live range {r_old:?} -> {r_new:?}"));
                }
            }
            compared += 1;
            removed_total += removed.len();
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!(
        "{compared} functions, {removed_total} ops removed, {shifted_tables} jump tables moved"
    );
    assert!(compared > 200, "only {compared} functions compared");
    assert!(shifted_tables > 0);
}

/// An SSA form with nothing in it, for renumbering functions the DFA pass does not take.
fn empty_ssa(op_array: &OpArray, cfg: &Cfg) -> Ssa {
    Ssa {
        blocks: vec![Default::default(); cfg.blocks_count()],
        ops: vec![Default::default(); op_array.opcodes.len()],
        vars: Vec::new(),
        phis: Vec::new(),
        sccs: 0,
    }
}

fn cfg_difference(ours: &Cfg, fresh: &Cfg) -> Option<String> {
    let n = fresh.blocks_count();
    if ours.blocks_count() < n
        || ours.blocks[n..]
            .iter()
            .any(|b| b.is_reachable() || b.len != 0)
    {
        return Some(format!("blocks: {} vs {n}", ours.blocks_count()));
    }
    for i in 0..n {
        let (a, b) = (&ours.blocks[i], &fresh.blocks[i]);
        let id = BlockId::new(i as u32);
        if (a.flags, a.start, a.len, a.idom, a.level, a.loop_header)
            != (b.flags, b.start, b.len, b.idom, b.level, b.loop_header)
            || ours.successors(id) != fresh.successors(id)
            || ours.predecessors(id) != fresh.predecessors(id)
        {
            return Some(format!("BB{i}: {a:?} vs {b:?}"));
        }
    }
    if ours.map != fresh.map {
        return Some("op -> block map".into());
    }
    if ours.try_catch != fresh.try_catch {
        return Some(format!(
            "try/catch {:?} vs {:?}",
            ours.try_catch, fresh.try_catch
        ));
    }
    None
}

/// Functions with try/catch/finally (which the DFA pass leaves alone, but whose op
/// numbers the renumbering must still get right): after removing ECHOs of constants and
/// compacting, the try/catch table (the op_array's and the CFG's), the live ranges and
/// the CFG are those a fresh build of the compacted op_array has.
#[test]
fn remove_nops_moves_try_catch_and_live_ranges() {
    let mut compared = 0;
    let mut moved = 0;
    let mut failures = Vec::new();
    for (name, script) in all_fixtures() {
        for original in script.op_arrays() {
            if original.try_catch_array.is_empty() {
                continue;
            }
            let fname = format!("{name}:{}", original.display_name());
            let mut op_array = original.clone();
            let Ok(mut cfg) = Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS) else {
                continue;
            };
            let mut ssa = empty_ssa(&op_array, &cfg);
            for b in 0..cfg.blocks_count() {
                let block = cfg.blocks[b].clone();
                if !block.is_reachable() || block.len < 2 {
                    continue;
                }
                let mut left = block.len;
                for i in block.ops() {
                    let op = &op_array.opcodes[i as usize];
                    if op.opcode == ZEND_ECHO
                        && matches!(op.op1, zend_ir::Operand::Const(_))
                        && left > 1
                    {
                        ssa.remove_instr(&mut op_array, OpNum::new(i));
                        left -= 1;
                    }
                }
            }
            let before = op_array.clone();
            let renumbering = ssa.remove_nops(&mut op_array, &mut cfg);
            let last_kept = cfg.blocks.iter().rposition(|b| b.len != 0).unwrap_or(0);
            if cfg.blocks[..last_kept].iter().any(|b| b.len == 0) {
                continue;
            }
            let fresh = match Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS) {
                Ok(fresh) => fresh,
                Err(e) => {
                    failures.push(format!("{fname}: {e}"));
                    continue;
                }
            };
            if let Some(d) = cfg_difference(&cfg, &fresh) {
                failures.push(format!("{fname}: {d}"));
                continue;
            }
            for (t_old, t_new) in before.try_catch_array.iter().zip(&op_array.try_catch_array) {
                for (o, n) in [
                    (Some(t_old.try_op), Some(t_new.try_op)),
                    (t_old.catch_op, t_new.catch_op),
                    (t_old.finally_op, t_new.finally_op),
                    (t_old.finally_end, t_new.finally_end),
                ] {
                    let (Some(o), Some(n)) = (o, n) else {
                        assert_eq!(o.is_some(), n.is_some(), "{fname}");
                        continue;
                    };
                    if renumbering.new_op(o) != n {
                        failures.push(format!("{fname}: try/catch {o:?} -> {n:?}"));
                    }
                    if n.index() < op_array.opcodes.len()
                        && before.opcodes[o.index()].opcode != ZEND_NOP
                        && before.opcodes[o.index()].opcode != op_array.opcodes[n.index()].opcode
                    {
                        failures.push(format!("{fname}: try/catch {o:?} names another op"));
                    }
                    moved += usize::from(o != n);
                }
            }
            for range in &op_array.live_range {
                if range.start >= range.end || range.end.index() >= op_array.opcodes.len() {
                    failures.push(format!("{fname}: live range {range:?}"));
                }
            }
            compared += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!("{compared} functions with try/catch, {moved} offsets moved");
    assert!(
        compared >= 10 && moved > 0,
        "{compared} functions, {moved} offsets moved"
    );
}

/// PHP's preconditions are debug assertions: removing a phi whose value is still used.
#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "is still used")]
fn remove_phi_of_a_used_value_is_refused() {
    let (_, _, mut ssa) = is_prime_trial();
    let phi = phi_defining(&ssa, 10);
    ssa.remove_phi(phi);
}

/// Unlinking an op from a chain it is not on.
#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "is not in the use chain")]
fn unlink_of_a_non_use_is_refused() {
    let (_, _, mut ssa) = is_prime_trial();
    ssa.unlink_use_chain(OpNum::new(0), SsaVar::new(4));
}

/// The op lines (`0003 T4 = CASE ...`) of each function of a dump, by function name.
fn dump_ops(dump: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in dump.lines() {
        if let Some(name) = line.strip_suffix(':').filter(|l| !l.starts_with(' ')) {
            out.push((name.to_string(), Vec::new()));
        } else if line.len() > 4 && line.as_bytes()[..4].iter().all(u8::is_ascii_digit) {
            if let Some((_, ops)) = out.last_mut() {
                ops.push(line.to_string());
            }
        }
    }
    out
}

/// PHP's own "after pass 6" ops of tests/data/dce_remove_nops.php with the DFA pass
/// (pass 6), SCCP (pass 8) and DCE (pass 14) on, and our recording of the same file as
/// PHP compiled it.
fn php_after_dfa() -> (Vec<(String, Vec<String>)>, Script) {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let php = std::env::var("ZOPT_PHP").unwrap_or_else(|_| "php".into());
    let source = data.join("dce_remove_nops.php");
    let output = std::process::Command::new(&php)
        .args([
            "-n",
            "-d",
            "zend_extension=opcache",
            "-d",
            "opcache.enable_cli=1",
        ])
        .args([
            "-d",
            "opcache.file_update_protection=0",
            "-d",
            "opcache.jit=0",
        ])
        .args(["-d", "opcache.optimization_level=0x20A0"])
        .args(["-d", "opcache.opt_debug_level=0x20"])
        .args(["-r", "opcache_compile_file($argv[1]);", "--"])
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("running {php}: {e}"));
    let theirs = dump_ops(&String::from_utf8_lossy(&output.stderr));
    assert!(
        theirs.iter().any(|(n, _)| n == "sw"),
        "no PHP dump: {output:?}"
    );
    let text = std::fs::read_to_string(data.join("dce_remove_nops.zop")).unwrap();
    (theirs, zend_ir::zop::parse(&text).unwrap())
}

/// Our op lines of `op_array`, printed as PHP prints them, beside PHP's for `name`.
fn compare_ops(theirs: &[(String, Vec<String>)], name: &str, op_array: &OpArray) {
    let mut out = Vec::new();
    zend_ir::dump::dump_op_array(&mut out, op_array, 0, Some("after pass 6"));
    let ours = dump_ops(&String::from_utf8_lossy(&out));
    let php_ops = &theirs.iter().find(|(n, _)| n == name).unwrap().1;
    assert!(!php_ops.is_empty(), "{name}");
    assert_eq!(&ours[0].1, php_ops, "{name}");
}

/// Against PHP itself: with DCE (pass 14) in the DFA pass (pass 6), PHP removes each dead
/// `$unused = ...;` and compacts the op_array with `zend_ssa_remove_nops`. The same
/// removal through this API (`rename_defs_of_instr` + `remove_instr`, as DCE does), then
/// `remove_nops`, prints exactly PHP's "after pass 6" ops: the unreachable code gone, the
/// switch value's FREE in an unreachable block kept, the foreach and JMPZ targets moved.
#[test]
fn remove_nops_prints_what_php_prints_after_dce() {
    let (theirs, script) = php_after_dfa();
    for name in ["sw", "first"] {
        let mut op_array = function(&script, name);
        let (mut cfg, mut ssa) = analyse(&op_array).unwrap();
        let frees = cfg
            .blocks
            .iter()
            .filter(|b| b.flags.contains(zend_cfg::BlockFlags::UNREACHABLE_FREE))
            .count();
        assert_eq!(frees, usize::from(name == "sw"), "{name}");
        let original_len = op_array.opcodes.len();
        let dead = op_array
            .opcodes
            .iter()
            .position(|op| {
                op.opcode == ZEND_ASSIGN
                    && matches!(op.op1, zend_ir::Operand::Cv(v)
                        if op_array.vars[v.index()].as_bytes() == b"unused")
            })
            .map(|i| OpNum::new(i as u32))
            .unwrap();
        let def = ssa.ops[dead.index()].op1_def.unwrap();
        assert_eq!(ops_of(&ssa, def.as_u32()), Vec::<u32>::new());
        ssa.rename_defs_of_instr(dead, None);
        ssa.remove_instr(&mut op_array, dead);
        check(&op_array, &cfg, &ssa);
        ssa.remove_nops(&mut op_array, &mut cfg);
        check(&op_array, &cfg, &ssa);

        assert!(op_array.opcodes.len() < original_len - 1, "{name}");
        compare_ops(&theirs, name, &op_array);
        // The result (for `sw`, ending with the unreachable FREE) builds a CFG again.
        Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS).unwrap();
    }
}

/// Against PHP itself: SCCP finds `$c` always 0 in `dead($n)` and removes the "never"
/// branch (`zend_ssa_remove_block`); the JMPZ, now jumping to the next op, becomes a NOP;
/// DCE removes `$c = 0`; the compaction leaves PHP's three ops.
#[test]
fn remove_block_and_compact_print_what_php_prints_after_sccp() {
    let (theirs, script) = php_after_dfa();
    let mut op_array = function(&script, "dead");
    let (mut cfg, mut ssa) = analyse(&op_array).unwrap();
    // BB0: RECV, ASSIGN $c, JMPZ $c; BB1: ECHO "never", JMP; BB2: ECHO "always"; BB3:
    // RETURN $n; BB4: the unreachable RETURN null.
    assert_eq!(cfg.blocks[1].ops(), 3..5);
    let c = ssa.ops[2].op1_use.unwrap();
    ssa.remove_block(&mut op_array, &mut cfg, BlockId::new(1));
    assert_eq!(cfg.successors(BlockId::new(0)), &[BlockId::new(2)]);
    assert_eq!(cfg.predecessors(BlockId::new(3)), &[BlockId::new(2)]);
    check(&op_array, &cfg, &ssa);
    // The JMPZ only reaches the next block now.
    ssa.remove_instr(&mut op_array, OpNum::new(2));
    assert_eq!(ops_of(&ssa, c.as_u32()), Vec::<u32>::new());
    ssa.rename_defs_of_instr(OpNum::new(1), None);
    ssa.remove_instr(&mut op_array, OpNum::new(1));
    check(&op_array, &cfg, &ssa);
    ssa.remove_nops(&mut op_array, &mut cfg);
    check(&op_array, &cfg, &ssa);
    compare_ops(&theirs, "dead", &op_array);
}

/// `remove_uses_of_var` and `remove_op2_def` on the loop variable of `foreach ($a as $v)`
/// (FE_FETCH_R defines it through op2): its uses and their links go, then its
/// definition; the ops still naming it are what the verifier reports until they go too.
#[test]
fn remove_uses_of_var_then_op2_def() {
    let (_, script) = php_after_dfa();
    let op_array = function(&script, "first");
    let (cfg, mut ssa) = analyse(&op_array).unwrap();
    let fetch = op_array
        .opcodes
        .iter()
        .position(|op| op.opcode == ZEND_FE_FETCH_R)
        .map(|i| OpNum::new(i as u32))
        .unwrap();
    let v = ssa.ops[fetch.index()].op2_def.unwrap();
    let users = ops_of(&ssa, v.as_u32());
    assert_eq!(users.len(), 2, "JMPZ $v and RETURN $v");
    ssa.remove_uses_of_var(v);
    assert_eq!(ssa.vars[v.index()].use_chain, None);
    for &u in &users {
        let o = &ssa.ops[u as usize];
        assert_eq!((o.op1_use, o.op1_use_chain), (None, None));
    }
    ssa.remove_op2_def(fetch);
    assert_eq!(ssa.ops[fetch.index()].op2_def, None);
    assert_eq!(ssa.vars[v.index()].definition, None);
    let err = verify(&op_array, &cfg, &ssa).unwrap_err();
    for &u in &users {
        let opcode = op_array.opcodes[u as usize].opcode;
        assert!(
            err.failures
                .iter()
                .any(|f| f.contains(&format!("op1 of {u} ({opcode}) does not use/def"))),
            "{err}"
        );
    }
}
