//! Editing the SSA form in place: the mutation helpers of Zend/Optimizer/zend_ssa.c and
//! zend_ssa.h that the SSA passes (SCCP, DCE, the DFA pass) build on, and the NOP
//! compaction of dfa_pass.c.
//!
//! Mirrors `zend_ssa_unlink_use_chain`, `zend_ssa_replace_use_chain`,
//! `zend_ssa_remove_instr`, `zend_ssa_remove_phi`, `zend_ssa_remove_uses_of_var`,
//! `zend_ssa_remove_defs_of_instr`, `zend_ssa_remove_result_def`/`op1_def`/`op2_def`,
//! `zend_ssa_rename_defs_of_instr`, `zend_ssa_remove_predecessor`, `zend_ssa_remove_block`,
//! `zend_ssa_rename_var_uses` (with `propagate_phi_type_widening`) and dfa_pass.c's
//! `zend_ssa_remove_nops`, plus the static phi-chain helpers they share.
//!
//! How the pieces are passed: the [`Ssa`] does not own its CFG here (PHP's `ssa->cfg`),
//! so an edit that changes edges or blocks takes `&mut Cfg`, and one that turns ops into
//! NOPs (PHP's `MAKE_NOP` inside `zend_ssa_remove_instr`) takes `&mut OpArray`.
//!
//! Guarantees: every use chain keeps the order PHP's edit leaves (it shows in dumps and in
//! the order later passes visit uses): an unlinked op or phi leaves the rest of its chain
//! in place, renamed uses go to the head of the new variable's chains in the order PHP
//! walks the old ones. An op that uses a variable in several operands is linked once,
//! through the first of op1, op2, result that holds it — the slot [`Ssa::next_use`]
//! reads. PHP's preconditions are `debug_assert!`s; in release builds an edit whose
//! precondition fails does the least harmful thing (nothing, or the part that applies).
//! Phis are never deleted from [`Ssa::phis`]: a removed phi leaves its block's list and
//! its variable's `definition_phi` ([`Ssa::is_phi_removed`]).

use crate::{PhiId, Ssa, SsaVar};
use zend_cfg::{BlockFlags, BlockId, Cfg};
use zend_ir::opcode::*;
use zend_ir::{Literal, Op, OpArray, OpNum, Operand};

/// `ZEND_LAST_CATCH`: a CATCH without a jump to the next one.
const ZEND_LAST_CATCH: u32 = 1;

/// `MAKE_NOP` (zend_compile.h): the op becomes a NOP with unused operands, whose value PHP
/// 8.2's `SET_UNUSED` leaves at -1; its `extended_value` and line number stay. The one
/// definition every pass uses.
pub fn make_nop(op: &mut Op) {
    op.opcode = ZEND_NOP;
    op.op1 = Operand::Unused(u32::MAX);
    op.op2 = Operand::Unused(u32::MAX);
    op.result = Operand::Unused(u32::MAX);
    op.smart_branch = Default::default();
}

/// The inferred types (`ssa->var_info[v].type`, `MAY_BE_*` masks) that
/// [`Ssa::rename_var_uses`] widens along phis when asked to (`update_types`).
pub trait VarTypes {
    fn type_mask(&self, var: SsaVar) -> u32;
    fn set_type_mask(&mut self, var: SsaVar, mask: u32);
}

impl VarTypes for [u32] {
    fn type_mask(&self, var: SsaVar) -> u32 {
        self[var.index()]
    }

    fn set_type_mask(&mut self, var: SsaVar, mask: u32) {
        self[var.index()] = mask;
    }
}

impl VarTypes for Vec<u32> {
    fn type_mask(&self, var: SsaVar) -> u32 {
        self[var.index()]
    }

    fn set_type_mask(&mut self, var: SsaVar, mask: u32) {
        self[var.index()] = mask;
    }
}

/// Reborrows an optional type table for one call.
fn reborrow<'a>(types: &'a mut Option<&mut dyn VarTypes>) -> Option<&'a mut dyn VarTypes> {
    match types {
        Some(t) => Some(&mut **t),
        None => None,
    }
}

/// Which operand slot of an op holds a use (and so which `*_use_chain` links it).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Slot {
    Op1,
    Op2,
    Result,
}

/// Where a link of a phi use chain is stored: a variable's `phi_use_chain`, or one of a
/// phi's `use_chains` (PHP's `zend_ssa_phi **`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum PhiLink {
    Var(SsaVar),
    Source(PhiId, usize),
}

/// Where every op went when [`Ssa::remove_nops`] compacted the op_array (PHP's shift
/// list: `new = old - shiftlist[old]`). A removed op maps to where the next kept op went,
/// so a jump to a removed op lands on the op that now follows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpRenumbering {
    new_of: Vec<u32>,
    new_len: u32,
}

impl OpRenumbering {
    /// The new number of op `old` (of the next kept op if `old` was removed; `old` itself
    /// when it is past the end of the old op_array, and, after
    /// [`Ssa::remove_nops`](crate::Ssa::remove_nops), when it was removed after the last
    /// kept op, as PHP's shift list leaves it).
    pub fn new_op(&self, old: OpNum) -> OpNum {
        OpNum::new(
            self.new_of
                .get(old.index())
                .copied()
                .unwrap_or(old.as_u32()),
        )
    }

    /// PHP's `shiftlist[old]`: how far op `old` moved up.
    pub fn shift(&self, old: OpNum) -> u32 {
        old.as_u32() - self.new_op(old).as_u32().min(old.as_u32())
    }

    /// Number of ops before and after.
    pub fn old_len(&self) -> usize {
        self.new_of.len()
    }

    pub fn new_len(&self) -> usize {
        self.new_len as usize
    }

    /// Whether no op moved.
    pub fn is_identity(&self) -> bool {
        self.new_len() == self.old_len()
    }
}

impl Ssa {
    // ---- op use chains -------------------------------------------------------------

    /// The slot through which op `op` is linked into the chain of `var`: the first of
    /// op1, op2, result using it.
    fn use_slot(&self, op: OpNum, var: SsaVar) -> Option<Slot> {
        let o = &self.ops[op.index()];
        let var = Some(var);
        if o.op1_use == var {
            Some(Slot::Op1)
        } else if o.op2_use == var {
            Some(Slot::Op2)
        } else if o.result_use == var {
            Some(Slot::Result)
        } else {
            None
        }
    }

    fn chain_mut(&mut self, op: OpNum, slot: Slot) -> &mut Option<OpNum> {
        let o = &mut self.ops[op.index()];
        match slot {
            Slot::Op1 => &mut o.op1_use_chain,
            Slot::Op2 => &mut o.op2_use_chain,
            Slot::Result => &mut o.res_use_chain,
        }
    }

    /// Re-points the link that leads to `op` in the use chain of `var` to `to`. Returns
    /// false when `op` is not on the chain.
    fn relink_use(&mut self, op: OpNum, var: SsaVar, to: Option<OpNum>) -> bool {
        if self.vars[var.index()].use_chain == Some(op) {
            self.vars[var.index()].use_chain = to;
            return true;
        }
        let mut cur = self.vars[var.index()].use_chain;
        let mut steps = 0usize;
        while let Some(u) = cur {
            let Some(slot) = self.use_slot(u, var) else {
                break;
            };
            let next = *self.chain_mut(u, slot);
            if next == Some(op) {
                *self.chain_mut(u, slot) = to;
                return true;
            }
            cur = next;
            steps += 1;
            if steps > self.ops.len() {
                break; // a cycle
            }
        }
        false
    }

    /// `zend_ssa_unlink_use_chain`: takes op `op` out of the use chain of `var`, the rest
    /// of the chain keeping its order. The op's own operands and links are left as they
    /// are (callers clear them). Returns false, after a debug assertion, when `op` is not
    /// on the chain.
    pub fn unlink_use_chain(&mut self, op: OpNum, var: SsaVar) -> bool {
        let next = self.next_use(var, op);
        let found = self.relink_use(op, var, next);
        debug_assert!(found, "{op:?} is not in the use chain of {var:?}");
        found
    }

    /// `zend_ssa_replace_use_chain`: the link leading to `op` in the use chain of `var`
    /// leads to `new_op` instead (which takes over `op`'s place in the chain; its own link
    /// must continue the chain). Returns false, after a debug assertion, when `op` is not
    /// on the chain.
    pub fn replace_use_chain(&mut self, op: OpNum, new_op: OpNum, var: SsaVar) -> bool {
        let found = self.relink_use(op, var, Some(new_op));
        debug_assert!(found, "{op:?} is not in the use chain of {var:?}");
        found
    }

    /// `zend_ssa_remove_instr`: unlinks every use of op `op`, clears its uses and turns
    /// it into a NOP in `op_array` (`MAKE_NOP`). Its definitions must be gone already
    /// ([`Ssa::remove_defs_of_instr`] or [`Ssa::rename_defs_of_instr`]).
    pub fn remove_instr(&mut self, op_array: &mut OpArray, op: OpNum) {
        let o = self.ops[op.index()];
        debug_assert!(
            o.op1_def.is_none() && o.op2_def.is_none() && o.result_def.is_none(),
            "remove_instr({op:?}): its definitions must be removed first"
        );
        // Each used variable is linked once, whichever operands hold it.
        let mut unlinked: [Option<SsaVar>; 3] = [None; 3];
        for (k, used) in [o.result_use, o.op1_use, o.op2_use].into_iter().enumerate() {
            if let Some(var) = used {
                if !unlinked[..k].contains(&Some(var)) {
                    self.unlink_use_chain(op, var);
                }
                unlinked[k] = Some(var);
            }
        }
        let o = &mut self.ops[op.index()];
        o.op1_use = None;
        o.op2_use = None;
        o.result_use = None;
        o.op1_use_chain = None;
        o.op2_use_chain = None;
        o.res_use_chain = None;
        if let Some(opline) = op_array.opcodes.get_mut(op.index()) {
            make_nop(opline);
        }
    }

    // ---- definitions ---------------------------------------------------------------

    /// `_zend_ssa_remove_def`: `var` is no longer defined by an op. It must be unused.
    fn remove_def(&mut self, var: SsaVar) {
        let v = &mut self.vars[var.index()];
        debug_assert!(v.definition.is_some(), "{var:?} has no defining op");
        debug_assert!(
            v.use_chain.is_none() && v.phi_use_chain.is_none(),
            "{var:?} is still used"
        );
        v.definition = None;
    }

    /// `zend_ssa_remove_result_def`: op `op` no longer defines its (unused) result.
    pub fn remove_result_def(&mut self, op: OpNum) {
        if let Some(var) = self.ops[op.index()].result_def.take() {
            self.remove_def(var);
        }
    }

    /// `zend_ssa_remove_op1_def`.
    pub fn remove_op1_def(&mut self, op: OpNum) {
        if let Some(var) = self.ops[op.index()].op1_def.take() {
            self.remove_def(var);
        }
    }

    /// `zend_ssa_remove_op2_def`.
    pub fn remove_op2_def(&mut self, op: OpNum) {
        if let Some(var) = self.ops[op.index()].op2_def.take() {
            self.remove_def(var);
        }
    }

    /// `zend_ssa_remove_defs_of_instr`: every variable op `op` defines loses its uses
    /// ([`Ssa::remove_uses_of_var`]) and its definition; op1, op2, then result.
    pub fn remove_defs_of_instr(&mut self, op: OpNum) {
        if let Some(var) = self.ops[op.index()].op1_def {
            self.remove_uses_of_var(var);
            self.remove_op1_def(op);
        }
        if let Some(var) = self.ops[op.index()].op2_def {
            self.remove_uses_of_var(var);
            self.remove_op2_def(op);
        }
        if let Some(var) = self.ops[op.index()].result_def {
            self.remove_uses_of_var(var);
            self.remove_result_def(op);
        }
    }

    /// `zend_ssa_rename_defs_of_instr`: each variable op `op` defines is replaced, in all
    /// its uses, by the value the same operand used before the op, when there is one
    /// ([`Ssa::rename_var_uses`], widening phi types through `types`); then it is no
    /// longer defined. For removing an op whose definitions only pass a value through.
    pub fn rename_defs_of_instr(&mut self, op: OpNum, mut types: Option<&mut dyn VarTypes>) {
        let o = self.ops[op.index()];
        for (def, used) in [
            (o.op1_def, o.op1_use),
            (o.op2_def, o.op2_use),
            (o.result_def, o.result_use),
        ] {
            let Some(def) = def else { continue };
            if let Some(used) = used {
                self.rename_var_uses(def, used, reborrow(&mut types));
            }
            self.vars[def.index()].definition = None;
        }
        let o = &mut self.ops[op.index()];
        o.op1_def = None;
        o.op2_def = None;
        o.result_def = None;
    }

    // ---- phi use chains ------------------------------------------------------------

    fn phi_link(&self, link: PhiLink) -> Option<PhiId> {
        match link {
            PhiLink::Var(v) => self.vars[v.index()].phi_use_chain,
            PhiLink::Source(p, j) => self.phis[p.index()].use_chains[j],
        }
    }

    fn set_phi_link(&mut self, link: PhiLink, to: Option<PhiId>) {
        match link {
            PhiLink::Var(v) => self.vars[v.index()].phi_use_chain = to,
            PhiLink::Source(p, j) => self.phis[p.index()].use_chains[j] = to,
        }
    }

    /// `zend_ssa_next_use_phi_ptr`: where phi `p` stores its link in the phi use chain of
    /// `var` (a pi in its only source, a phi at the first source equal to `var`).
    fn next_use_phi_link(&self, var: SsaVar, p: PhiId) -> Option<PhiLink> {
        let phi = &self.phis[p.index()];
        if phi.is_pi() {
            return Some(PhiLink::Source(p, 0));
        }
        let j = phi.sources.iter().position(|&s| s == Some(var));
        debug_assert!(j.is_some(), "{p:?} does not use {var:?}");
        j.map(|j| PhiLink::Source(p, j))
    }

    /// `zend_ssa_remove_use_of_phi_source`: takes `phi` out of the phi use chain of
    /// `source`, continuing it with `next`. Does nothing when `phi` is not on the chain
    /// (a phi with the same source twice is unlinked on the first).
    fn remove_use_of_phi_source(&mut self, phi: PhiId, source: SsaVar, next: Option<PhiId>) {
        let mut link = PhiLink::Var(source);
        let mut steps = 0usize;
        while let Some(p) = self.phi_link(link) {
            if p == phi {
                self.set_phi_link(link, next);
                return;
            }
            let Some(l) = self.next_use_phi_link(source, p) else {
                return;
            };
            link = l;
            steps += 1;
            if steps > self.phis.len() {
                return; // a cycle
            }
        }
    }

    /// `zend_ssa_remove_uses_of_phi_sources`.
    fn remove_uses_of_phi_sources(&mut self, phi: PhiId) {
        for j in 0..self.phis[phi.index()].num_sources() {
            let Some(source) = self.phis[phi.index()].sources[j] else {
                debug_assert!(false, "{phi:?} has no source #{j}");
                continue;
            };
            let next = self.next_use_phi(source, phi);
            self.remove_use_of_phi_source(phi, source, next);
        }
    }

    /// `zend_ssa_remove_phi_from_block`.
    fn remove_phi_from_block(&mut self, phi: PhiId) {
        let block = self.phis[phi.index()].block;
        let list = &mut self.blocks[block.index()].phis;
        let at = list.iter().position(|&p| p == phi);
        debug_assert!(at.is_some(), "{phi:?} is not in the phis of {block}");
        if let Some(at) = at {
            list.remove(at);
        }
    }

    /// `zend_ssa_remove_phi_source`: drops the source of phi `phi` for predecessor
    /// position `pred_offset`, the later sources moving down, and fixes the phi use chain
    /// of the dropped variable (the phi stays on it if another source still uses it).
    pub fn remove_phi_source(&mut self, phi: PhiId, pred_offset: usize) {
        let p = &mut self.phis[phi.index()];
        if pred_offset >= p.sources.len() {
            debug_assert!(false, "{phi:?} has no source #{pred_offset}");
            return;
        }
        let var = p.sources.remove(pred_offset);
        let next = p.use_chains.remove(pred_offset);
        let Some(var) = var else {
            debug_assert!(false, "{phi:?} has no source #{pred_offset}");
            return;
        };
        if let Some(j) = p.sources.iter().position(|&s| s == Some(var)) {
            // Still used by another source: the link moves there if it was the dropped
            // source that held it (the first occurrence holds it).
            if j < pred_offset {
                debug_assert!(
                    next.is_none(),
                    "a later equal source of {phi:?} held a link"
                );
            } else {
                p.use_chains[j] = next;
            }
            return;
        }
        self.remove_use_of_phi_source(phi, var, next);
    }

    /// `zend_ssa_remove_phi`: takes the phi out of its sources' phi use chains and out of
    /// its block. Its variable must be unused; it is no longer defined.
    pub fn remove_phi(&mut self, phi: PhiId) {
        let var = self.phis[phi.index()].ssa_var;
        debug_assert!(
            self.vars[var.index()].use_chain.is_none()
                && self.vars[var.index()].phi_use_chain.is_none(),
            "remove_phi({phi:?}): {var:?} is still used"
        );
        debug_assert!(!self.is_phi_removed(phi), "{phi:?} was removed already");
        self.remove_uses_of_phi_sources(phi);
        self.remove_phi_from_block(phi);
        self.vars[var.index()].definition_phi = None;
    }

    /// A pi whose edge went: its uses read its source instead (`update_types` 0), and it is
    /// removed, as `zend_ssa_remove_predecessor` and `zend_ssa_replace_predecessor` do.
    pub fn remove_pi_of_removed_edge(&mut self, pi: PhiId) {
        let phi = &self.phis[pi.index()];
        let (var, source) = (phi.ssa_var, phi.sources[0]);
        if let Some(source) = source {
            self.rename_var_uses(var, source, None);
        }
        self.remove_phi(pi);
    }

    /// Whether [`Ssa::remove_phi`] removed phi `p` (PHP sets its `ssa_var` to -1).
    pub fn is_phi_removed(&self, p: PhiId) -> bool {
        let var = self.phis[p.index()].ssa_var;
        self.vars.get(var.index()).and_then(|v| v.definition_phi) != Some(p)
    }

    /// `zend_ssa_remove_uses_of_var`: every op and phi stops using `var` through the
    /// chains (the ops' `*_use` and their links are cleared, the phis' links for it are
    /// cleared; phi sources stay). The op_array still names the variable: callers remove
    /// or rewrite those ops.
    pub fn remove_uses_of_var(&mut self, var: SsaVar) {
        let phis: Vec<PhiId> = self.phi_uses(var).collect();
        for p in phis {
            let phi = &mut self.phis[p.index()];
            for j in 0..phi.num_sources() {
                if phi.sources[j] == Some(var) {
                    phi.use_chains[j] = None;
                }
            }
        }
        self.vars[var.index()].phi_use_chain = None;
        let uses: Vec<OpNum> = self.uses(var).collect();
        for u in uses {
            let o = &mut self.ops[u.index()];
            if o.op1_use == Some(var) {
                o.op1_use = None;
                o.op1_use_chain = None;
            }
            if o.op2_use == Some(var) {
                o.op2_use = None;
                o.op2_use_chain = None;
            }
            if o.result_use == Some(var) {
                o.result_use = None;
                o.res_use_chain = None;
            }
        }
        self.vars[var.index()].use_chain = None;
    }

    /// `zend_ssa_rename_var_uses`: every op and phi using `old` uses `new` instead.
    /// Ops and phis that already used `new` keep their place in its chains; the others
    /// are pushed to the chains' heads, in the order of `old`'s chains. `new` stays
    /// `no_val` only if both were. With `types` (PHP's `update_types`), a phi whose type
    /// lacks bits of `new`'s gets them, and the widening follows the phi uses onward
    /// (`propagate_phi_type_widening`). Range-constraint references (`sym_use_chain`) are
    /// not renamed, as in PHP.
    pub fn rename_var_uses(
        &mut self,
        old: SsaVar,
        new: SsaVar,
        mut types: Option<&mut dyn VarTypes>,
    ) {
        debug_assert!(old != new, "rename_var_uses({old:?}) onto itself");
        if old == new {
            return;
        }
        let no_val = self.vars[old.index()].no_val;
        self.vars[new.index()].no_val &= no_val;

        let uses: Vec<OpNum> = self.uses(old).collect();
        for u in uses {
            // The op's link in the chain of `new`, when it is on it already.
            let existing = self.use_slot(u, new).map(|slot| *self.chain_mut(u, slot));
            let o = &mut self.ops[u.index()];
            for (used, chain) in [
                (&mut o.op1_use, &mut o.op1_use_chain),
                (&mut o.op2_use, &mut o.op2_use_chain),
                (&mut o.result_use, &mut o.res_use_chain),
            ] {
                if *used == Some(old) {
                    *used = Some(new);
                }
                if *used == Some(new) {
                    *chain = None;
                }
            }
            let Some(slot) = self.use_slot(u, new) else {
                continue;
            };
            let link = match existing {
                Some(link) => link,
                None => {
                    let head = self.vars[new.index()].use_chain;
                    self.vars[new.index()].use_chain = Some(u);
                    head
                }
            };
            *self.chain_mut(u, slot) = link;
        }
        self.vars[old.index()].use_chain = None;

        let phis: Vec<PhiId> = self.phi_uses(old).collect();
        for p in phis {
            let phi = &self.phis[p.index()];
            let existing = phi.sources.iter().position(|&s| s == Some(new));
            let mut after_first_new = false;
            for j in 0..phi.sources.len() {
                let phi = &mut self.phis[p.index()];
                if phi.sources[j] == Some(new) {
                    after_first_new = true;
                } else if phi.sources[j] == Some(old) {
                    phi.sources[j] = Some(new);
                    if after_first_new {
                        phi.use_chains[j] = None;
                    } else {
                        // The first source of `new` holds the phi's link.
                        match existing {
                            Some(e) => {
                                phi.use_chains[j] = phi.use_chains[e].take();
                            }
                            None => {
                                phi.use_chains[j] = self.vars[new.index()].phi_use_chain;
                                self.vars[new.index()].phi_use_chain = Some(p);
                            }
                        }
                        after_first_new = true;
                    }
                }
            }
            if let Some(types) = reborrow(&mut types) {
                let result = self.phis[p.index()].ssa_var;
                let (from, to) = (types.type_mask(new), types.type_mask(result));
                if from & !to != 0 {
                    types.set_type_mask(result, to | from);
                    self.propagate_phi_type_widening(result, types);
                }
            }
        }
        self.vars[old.index()].phi_use_chain = None;
    }

    /// `propagate_phi_type_widening`: the phis using `var` take its type bits, and so on
    /// along their own phi uses (depth first, as PHP's recursion; with an explicit stack).
    fn propagate_phi_type_widening(&self, var: SsaVar, types: &mut dyn VarTypes) {
        let mut stack: Vec<(SsaVar, Option<PhiId>)> =
            vec![(var, self.vars[var.index()].phi_use_chain)];
        while let Some((v, cursor)) = stack.last_mut() {
            let v = *v;
            let Some(p) = *cursor else {
                stack.pop();
                continue;
            };
            *cursor = self.next_use_phi(v, p);
            let result = self.phis[p.index()].ssa_var;
            let (from, to) = (types.type_mask(v), types.type_mask(result));
            if from & !to != 0 {
                types.set_type_mask(result, to | from);
                stack.push((result, self.vars[result.index()].phi_use_chain));
            }
            if stack.len() > self.vars.len() + 1 {
                break; // cannot happen: each push adds bits
            }
        }
    }

    // ---- blocks and edges ----------------------------------------------------------

    /// `zend_ssa_remove_predecessor`: the edge `from → to` goes. The phis of `to` lose
    /// their source for it; a pi placed on it is removed, its uses renamed to its source;
    /// `from` leaves `to`'s predecessors. Nothing happens when `from` is not (or no
    /// longer) a predecessor of `to`. `from`'s successor list is the caller's business.
    pub fn remove_predecessor(&mut self, cfg: &mut Cfg, from: BlockId, to: BlockId) {
        let Some(pred_offset) = cfg.predecessors(to).iter().position(|&p| p == from) else {
            return;
        };
        let phis = self.blocks[to.index()].phis.clone();
        for p in phis {
            let phi = &self.phis[p.index()];
            match phi.pi {
                Some(pi) if pi == from => self.remove_pi_of_removed_edge(p),
                Some(_) => {
                    // A pi on another edge: PHP leaves its (unread) extra sources; they
                    // are kept as many as the predecessors. All equal, the last goes.
                    let phi = &mut self.phis[p.index()];
                    if phi.sources.len() > 1 {
                        phi.sources.pop();
                        phi.use_chains.pop();
                    }
                }
                None => {
                    debug_assert!(
                        phi.sources.get(pred_offset).copied().flatten().is_some(),
                        "{p:?} has no source for {from}"
                    );
                    self.remove_phi_source(p, pred_offset);
                }
            }
        }
        cfg.remove_predecessor_at(to, pred_offset);
    }

    /// `zend_ssa_remove_block`: block `b` becomes unreachable and empty of SSA: its phis
    /// and their uses go, every op that is not a NOP loses its definitions (and their uses
    /// everywhere) and becomes a NOP in `op_array`, its successors lose it as a
    /// predecessor, its predecessors lose it as a successor, and it leaves the dominator
    /// tree.
    pub fn remove_block(&mut self, op_array: &mut OpArray, cfg: &mut Cfg, b: BlockId) {
        cfg.blocks[b.index()].flags.remove(BlockFlags::REACHABLE);

        let phis = self.blocks[b.index()].phis.clone();
        for p in phis {
            let var = self.phis[p.index()].ssa_var;
            self.remove_uses_of_var(var);
            self.remove_phi(p);
        }

        for j in cfg.blocks[b.index()].ops() {
            let op = OpNum::new(j);
            if op_array
                .opcodes
                .get(op.index())
                .map_or(true, |o| o.opcode == ZEND_NOP)
            {
                continue;
            }
            self.remove_defs_of_instr(op);
            self.remove_instr(op_array, op);
        }

        self.remove_block_from_cfg(cfg, b);
    }

    /// `zend_ssa_remove_block_from_cfg`: block `b` keeps its ops but loses its edges (its
    /// successors lose it as a predecessor, with their phis' sources for it; its
    /// predecessors lose it as a successor) and leaves the dominator tree.
    pub fn remove_block_from_cfg(&mut self, cfg: &mut Cfg, b: BlockId) {
        for s in cfg.successors(b).to_vec() {
            self.remove_predecessor(cfg, b, s);
        }
        for p in cfg.predecessors(b).to_vec() {
            cfg.remove_successor(p, b);
        }
        cfg.clear_edges(b);
        cfg.unlink_from_dominator_tree(b);
    }

    // ---- renumbering ---------------------------------------------------------------

    /// dfa_pass.c's `zend_ssa_remove_nops`: compacts the op_array, dropping its NOPs and
    /// the ops of blocks that are neither reachable nor `UNREACHABLE_FREE` (of which only
    /// the leading FREE/FE_FREE stays), and renumbers together everything that names ops:
    /// the SSA ops, definitions and use chains; the CFG's block starts and lengths (an
    /// emptied or unreachable block starts where the next kept op goes, with length 0)
    /// and op → block map; the jump targets of the kept blocks' last ops (op1/op2 jump
    /// addresses, `extended_value` targets, SWITCH/MATCH jump tables); the try/catch
    /// table (the op_array's and the CFG's); the live ranges (a range left empty is
    /// dropped). Returns where each op went, for the structures outside: as PHP does,
    /// the caller drops the call sites whose INIT op became a NOP and moves the others
    /// (`func_info->callee_info`), and moves the main script's early binding list.
    pub fn remove_nops(&mut self, op_array: &mut OpArray, cfg: &mut Cfg) -> OpRenumbering {
        let last = op_array.opcodes.len();
        let mut new_of = vec![0u32; last];
        let mut i = 0usize;
        let mut target = 0usize;
        for bn in 0..cfg.blocks.len() {
            let block = &cfg.blocks[bn];
            let keep = block.is_reachable() || block.flags.contains(BlockFlags::UNREACHABLE_FREE);
            if !keep {
                let block = &mut cfg.blocks[bn];
                block.start = target as u32;
                block.len = 0;
                continue;
            }
            if block.len == 0 {
                cfg.blocks[bn].start = target as u32;
                continue;
            }
            let start = (block.start as usize).min(last);
            while i < start {
                new_of[i] = target as u32;
                i += 1;
            }
            let mut len = block.len as usize;
            if block.flags.contains(BlockFlags::UNREACHABLE_FREE) && !block.is_reachable() {
                // Only the FREE of the loop variable is kept.
                debug_assert!(matches!(
                    op_array.opcodes.get(start).map(|o| o.opcode),
                    Some(ZEND_FREE | ZEND_FE_FREE)
                ));
                len = 1;
            }
            let new_start = target;
            let old_end = (start + len).min(last);
            while i < old_end {
                new_of[i] = target as u32;
                if op_array.opcodes[i].opcode != ZEND_NOP {
                    if i != target {
                        // The op at `target` is a NOP or was moved already, and the op left
                        // at `i` is never read again (the tail goes below).
                        op_array.opcodes[target] = op_array.opcodes[i];
                        self.ops[target] = self.ops[i];
                        cfg.map[target] = BlockId::new(bn as u32);
                    }
                    target += 1;
                }
                i += 1;
            }
            let block = &mut cfg.blocks[bn];
            block.start = new_start as u32;
            block.len = (target - new_start) as u32;
        }
        // Past the last kept block PHP's shift list stays 0: an op there keeps its number,
        // which is past the new end. Only a jump table entry into a removed block can still
        // name one (SCCP leaves the entries of cases it proved infeasible), and PHP leaves
        // that entry dangling.
        while i < last {
            new_of[i] = i as u32;
            i += 1;
        }
        let renumbering = OpRenumbering {
            new_of,
            new_len: target as u32,
        };
        if target == last {
            return renumbering;
        }
        let new = |op: OpNum| renumbering.new_op(op);

        op_array.opcodes.truncate(target);
        self.ops.truncate(target);
        cfg.map.truncate(target);

        for var in &mut self.vars {
            var.definition = var.definition.map(new);
            var.use_chain = var.use_chain.map(new);
        }
        for o in &mut self.ops {
            o.op1_use_chain = o.op1_use_chain.map(new);
            o.op2_use_chain = o.op2_use_chain.map(new);
            o.res_use_chain = o.res_use_chain.map(new);
        }

        for block in &cfg.blocks {
            if block.is_reachable() && block.len != 0 {
                let at = (block.start + block.len - 1) as usize;
                shift_jump(op_array, at, &renumbering);
            }
        }

        for tc in op_array
            .try_catch_array
            .iter_mut()
            .chain(cfg.try_catch.iter_mut())
        {
            tc.try_op = new(tc.try_op);
            tc.catch_op = tc.catch_op.map(new);
            tc.finally_op = tc.finally_op.map(new);
            tc.finally_end = tc.finally_end.map(new);
        }

        // A range may end at the op_array's end, one past its last op, or in the removed
        // ops after the last kept block: those ends (and starts) move to the new end.
        let clamp = |op: OpNum| OpNum::new(new(op).as_u32().min(target as u32));
        op_array.live_range.retain_mut(|range| {
            range.start = clamp(range.start);
            range.end = clamp(range.end);
            range.start < range.end
        });
        renumbering
    }
}

/// `zend_optimizer_shift_jump`: moves the jump targets of op `at` to the ops' new
/// numbers. Targets outside the old op_array are left as they are.
fn shift_jump(op_array: &mut OpArray, at: usize, renumbering: &OpRenumbering) {
    let new = |t: u32| renumbering.new_op(OpNum::new(t)).as_u32();
    let op = &mut op_array.opcodes[at];
    let shift_operand = |operand: &mut Operand| {
        if let Operand::JmpAddr(t) = operand {
            *t = OpNum::new(new(t.as_u32()));
        }
    };
    match op.opcode {
        ZEND_JMP | ZEND_FAST_CALL => shift_operand(&mut op.op1),
        ZEND_JMPZ | ZEND_JMPNZ | ZEND_JMPZ_EX | ZEND_JMPNZ_EX | ZEND_FE_RESET_R
        | ZEND_FE_RESET_RW | ZEND_JMP_SET | ZEND_COALESCE | ZEND_ASSERT_CHECK | ZEND_JMP_NULL => {
            shift_operand(&mut op.op2)
        }
        ZEND_CATCH if op.extended_value & ZEND_LAST_CATCH == 0 => shift_operand(&mut op.op2),
        ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW => op.extended_value = new(op.extended_value),
        ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH => {
            op.extended_value = new(op.extended_value);
            if let Operand::Const(lit) = op.op2 {
                if let Some(Literal::Array(table)) = op_array.literals.get_mut(lit.index()) {
                    for target in table.values_mut() {
                        if let Literal::Long(t) = target {
                            if let Ok(old) = u32::try_from(*t) {
                                *t = i64::from(new(old));
                            }
                        }
                    }
                }
            }
        }
        _ => {}
    }
}
