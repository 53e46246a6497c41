//! Sparse conditional data-flow propagation: the framework of Zend/Optimizer/scdf.c, on
//! which SCCP ([`crate::sccp`]) runs.
//!
//! Mirrors `scdf_init`, `scdf_solve`, `scdf_mark_edge_feasible`, `scdf_add_to_worklist`,
//! `scdf_add_def_to_worklist`, `scdf_is_edge_feasible` and `scdf_remove_unreachable_blocks`
//! (Wegman and Zadeck's algorithm, generalised as in chapter 8.3 of the SSA book). An
//! analysis plugs in through [`ScdfHandlers`] (in the way rustc_mir_dataflow's analyses plug
//! into its engine): it recomputes the lattice values an op or a phi defines, and picks the
//! feasible successors of a conditional branch; the engine owns the worklists (ops, phi
//! variables, blocks), the executable blocks and the feasible edges.
//!
//! Guarantees: the worklists are bitsets popped lowest first, as PHP's, so handlers run in
//! PHP's order; only the entry block is executable at the start; a handler is never called
//! for an op or phi of a block that is not executable (except the phis of a block whose new
//! edge just became feasible, which PHP revisits at once); the solve never recurses.

use zend_cfg::bitset::{BitSlice, Worklist};
use zend_cfg::{BlockFlags, BlockId, Cfg, FuncFlags};
use zend_ir::opcode::*;
use zend_ir::{OpArray, OpNum};
use zend_ssa::{PhiId, Ssa, SsaOp, SsaVar};

/// The callbacks of an analysis run by [`Scdf::solve`] (`scdf_ctx.handlers`).
pub trait ScdfHandlers {
    /// Recomputes the values of everything op `op` defines (never called on an OP_DATA:
    /// the op before it is visited instead). Calls [`Scdf::add_to_worklist`] for every
    /// variable whose value was lowered. `opcode` and `sop` are the op's opcode and SSA
    /// record (the solve has them at hand: most visits need nothing else of the op to
    /// lower its definitions).
    fn visit_instr(&mut self, scdf: &mut Scdf<'_>, op: OpNum, opcode: Opcode, sop: &SsaOp);
    /// Recomputes the value of phi `phi` from its sources on feasible edges
    /// ([`Scdf::is_edge_feasible`]).
    fn visit_phi(&mut self, scdf: &mut Scdf<'_>, phi: PhiId);
    /// Marks the feasible successors of `block`, which ends with the conditional branch
    /// `op` (more than one successor), through [`Scdf::mark_edge_feasible`].
    fn mark_feasible_successors(&mut self, scdf: &mut Scdf<'_>, block: BlockId, op: OpNum);
}

/// The state of one solve (`scdf_ctx` without the handlers).
pub struct Scdf<'a> {
    pub op_array: &'a OpArray,
    pub ssa: &'a Ssa,
    pub cfg: &'a Cfg,
    instr_worklist: Worklist<&'a mut [u64]>,
    phi_var_worklist: Worklist<&'a mut [u64]>,
    block_worklist: Worklist<&'a mut [u64]>,
    executable_blocks: BitSlice<'a>,
    /// By edge, numbered as PHP's: [`Cfg::predecessor_offset`] of the target plus the
    /// position of the source in its predecessor list.
    feasible_edges: BitSlice<'a>,
    /// The ops `from..to` the block being visited has yet to visit (none outside
    /// `solve`'s visit of a block's phis and ops): see [`Scdf::queues`].
    ahead: (u32, u32),
}

impl<'a> Scdf<'a> {
    /// `scdf_init`: nothing on the worklists but the entry block, which is executable.
    /// The worklists live in `scratch`.
    pub fn new_in(
        op_array: &'a OpArray,
        ssa: &'a Ssa,
        cfg: &'a Cfg,
        scratch: &'a bumpalo::Bump,
    ) -> Scdf<'a> {
        let blocks = cfg.blocks_count();
        let [instr_worklist, phi_var_worklist, block_worklist, executable_blocks, feasible_edges] =
            Worklist::many_new_in(
                [
                    op_array.opcodes.len(),
                    ssa.vars.len(),
                    blocks,
                    blocks,
                    cfg.predecessor_slots(),
                ],
                scratch,
            );
        let mut scdf = Scdf {
            op_array,
            ssa,
            cfg,
            instr_worklist,
            phi_var_worklist,
            block_worklist,
            executable_blocks: executable_blocks.into_bits(),
            feasible_edges: feasible_edges.into_bits(),
            ahead: (0, 0),
        };
        if blocks > 0 {
            scdf.block_worklist.insert(0);
            scdf.executable_blocks.insert(0);
        }
        scdf
    }

    /// `scdf_edge`: the number of the edge `from → to` (the first, when `from` is a
    /// predecessor of `to` twice), or `None` when there is no such edge.
    fn edge(&self, from: BlockId, to: BlockId) -> Option<usize> {
        let preds = self.cfg.predecessors(to);
        preds
            .iter()
            .position(|&p| p == from)
            .map(|i| self.cfg.predecessor_offset(to) + i)
    }

    /// `scdf_is_edge_feasible`.
    pub fn is_edge_feasible(&self, from: BlockId, to: BlockId) -> bool {
        self.edge(from, to)
            .is_some_and(|e| self.feasible_edges.contains(e))
    }

    /// [`Scdf::is_edge_feasible`] of the edge from `preds[i]` to `to`, `preds` being the
    /// predecessors of `to`, without searching for the edge: only the first of the edges
    /// from a predecessor listed twice is ever marked feasible ([`Scdf::edge`]), so edge
    /// `i`, when marked, is that first one; when not marked, an earlier listing of the same
    /// predecessor decides. (A phi visit asks this of every predecessor in turn.)
    #[inline]
    pub fn is_pred_edge_feasible(&self, to: BlockId, preds: &[BlockId], i: usize) -> bool {
        let offset = self.cfg.predecessor_offset(to);
        if self.feasible_edges.contains(offset + i) {
            return true;
        }
        let pred = preds[i];
        preds[..i]
            .iter()
            .position(|&p| p == pred)
            .is_some_and(|k| self.feasible_edges.contains(offset + k))
    }

    /// Whether block `b` was found executable.
    pub fn is_block_executable(&self, b: BlockId) -> bool {
        self.executable_blocks.contains(b.index())
    }

    /// `scdf_add_to_worklist`: the ops and phis using `var` are to be revisited. Kept out
    /// of line: inlined, its loops made every caller's frame large, and callers run for
    /// every op while a value changes far less often.
    #[inline(never)]
    pub fn add_to_worklist(&mut self, var: SsaVar) {
        self.add_to_worklist_inline(var);
    }

    /// [`Scdf::add_to_worklist`] inlined, for a caller that is itself out of line.
    #[inline(always)]
    pub fn add_to_worklist_inline(&mut self, var: SsaVar) {
        let ssa = self.ssa;
        let v = &ssa.vars[var.index()];
        // `Ssa::uses` walked by hand (`zend_ssa_next_use`): the iterator adaptor cost more
        // than the walk, and this runs for every variable whose value changes.
        let mut next = v.use_chain;
        let (ahead_from, ahead_to) = self.ahead;
        while let Some(op) = next {
            // Most uses are ops of the block being visited (see `queues`): the rest is
            // out of line, so the walk along the chain holds nothing else in registers.
            let i = op.as_u32();
            if !(ahead_from <= i && i < ahead_to) {
                self.queue_if_executable(op);
            }
            let o = &ssa.ops[op.index()];
            next = if o.op1_use == Some(var) {
                o.op1_use_chain
            } else if o.op2_use == Some(var) {
                o.op2_use_chain
            } else {
                o.res_use_chain
            };
        }
        if v.phi_use_chain.is_some() {
            for phi in ssa.phi_uses(var) {
                self.phi_var_worklist.insert(ssa.phi(phi).ssa_var.index());
            }
        }
    }

    /// [`Scdf::queues`]' test of the block, and the queuing, of an op the block being
    /// visited will not reach.
    #[inline(never)]
    fn queue_if_executable(&mut self, op: OpNum) {
        if self
            .executable_blocks
            .contains(self.cfg.map[op.index()].index())
        {
            self.instr_worklist.insert(op.index());
        }
    }

    /// Whether queuing op `op` for a visit can change anything. PHP queues every use,
    /// and its solve skips the queued ops of blocks not executable, and unqueues each
    /// op of a block it visits as a whole just before visiting it; so queuing an op
    /// changes nothing when its block is not executable yet (it is visited, and
    /// unqueued, with its block if ever) or when the block being visited will reach it
    /// (it is unqueued then). Queuing neither makes that unqueuing a no-op: `solve`
    /// skips it.
    #[inline]
    fn queues(&self, op: OpNum) -> bool {
        let i = op.as_u32();
        !(self.ahead.0 <= i && i < self.ahead.1)
            && self
                .executable_blocks
                .contains(self.cfg.map[op.index()].index())
    }

    /// `scdf_add_def_to_worklist`: the op or phi defining `var` is to be revisited.
    pub fn add_def_to_worklist(&mut self, var: SsaVar) {
        let v = &self.ssa.vars[var.index()];
        if let Some(def) = v.definition {
            // Under the same rule as the uses (`queues`), which `solve` relies on.
            if self.queues(def) {
                self.instr_worklist.insert(def.index());
            }
        } else if v.definition_phi.is_some() {
            self.phi_var_worklist.insert(var.index());
        }
    }

    /// `scdf_mark_edge_feasible`: a newly feasible edge makes its target executable (it
    /// goes on the block worklist) or, if it already is, makes its phis be revisited now.
    pub fn mark_edge_feasible<H: ScdfHandlers + ?Sized>(
        &mut self,
        handlers: &mut H,
        from: BlockId,
        to: BlockId,
    ) {
        let Some(edge) = self.edge(from, to) else {
            return;
        };
        if self.feasible_edges.contains(edge) {
            return;
        }
        self.feasible_edges.insert(edge);
        if !self.executable_blocks.contains(to.index()) {
            self.block_worklist.insert(to.index());
        } else {
            let ssa = self.ssa;
            for &phi in &ssa.blocks[to.index()].phis {
                self.phi_var_worklist.remove(ssa.phi(phi).ssa_var.index());
                handlers.visit_phi(self, phi);
            }
        }
    }

    /// `scdf_solve`: runs the worklists dry.
    #[inline(never)]
    pub fn solve<H: ScdfHandlers + ?Sized>(&mut self, handlers: &mut H) {
        let ssa = self.ssa;
        let cfg = self.cfg;
        let op_array = self.op_array;
        while !self.instr_worklist.is_empty()
            || !self.phi_var_worklist.is_empty()
            || !self.block_worklist.is_empty()
        {
            while let Some(v) = self.phi_var_worklist.pop_first() {
                let Some(phi) = ssa.vars[v].definition_phi else {
                    continue;
                };
                if self.executable_blocks.contains(ssa.phi(phi).block.index()) {
                    handlers.visit_phi(self, phi);
                }
            }

            while let Some(i) = self.instr_worklist.pop_first() {
                let b = cfg.map[i];
                if !self.executable_blocks.contains(b.index()) {
                    continue;
                }
                let mut op = OpNum::new(i as u32);
                let mut opcode = op_array.opcodes[i].opcode;
                if opcode == ZEND_OP_DATA && i > 0 {
                    op = OpNum::new(i as u32 - 1);
                    opcode = op_array.opcodes[i - 1].opcode;
                }
                handlers.visit_instr(self, op, opcode, &ssa.ops[op.index()]);
                let block = cfg.block(b);
                if block.len > 0 && i as u32 == block.start + block.len - 1 {
                    self.after_last_op(handlers, b, op);
                }
            }

            while let Some(i) = self.block_worklist.pop_first() {
                let b = BlockId::new(i as u32);
                let block = cfg.block(b);
                let end = block.start + block.len;
                self.executable_blocks.insert(i);
                // No op of the block is queued (it was not executable), and none is
                // queued before the loop below visits it (`queues`): PHP's
                // `zend_bitset_excl` of each op before its visit has nothing to do.
                self.ahead = (block.start, end);
                for &phi in &ssa.blocks[i].phis {
                    self.phi_var_worklist.remove(ssa.phi(phi).ssa_var.index());
                    handlers.visit_phi(self, phi);
                }
                if block.len == 0 {
                    self.ahead = (0, 0);
                    // An empty block has no last op to mark its edge.
                    if let Some(&s) = cfg.successors(b).first() {
                        self.mark_edge_feasible(handlers, b, s);
                    }
                    continue;
                }
                // The block's ops and their SSA records as slices: one bounds check for
                // the block, not one per op.
                let range = block.start as usize..end as usize;
                let ops = op_array.opcodes[range.clone()].iter().zip(&ssa.ops[range]);
                for (j, (o, sop)) in (block.start..).zip(ops) {
                    // The op itself may be queued by its own visit, as in PHP.
                    self.ahead.0 = j + 1;
                    if o.opcode != ZEND_OP_DATA {
                        handlers.visit_instr(self, OpNum::new(j), o.opcode, sop);
                    }
                }
                self.ahead = (0, 0);
                let mut last = end - 1;
                if op_array.opcodes[last as usize].opcode == ZEND_OP_DATA && last > block.start {
                    last -= 1;
                }
                self.after_last_op(handlers, b, OpNum::new(last));
            }
        }
    }

    /// The edges out of a block whose last op (`op`, the one before a trailing OP_DATA)
    /// was just visited.
    fn after_last_op<H: ScdfHandlers + ?Sized>(&mut self, handlers: &mut H, b: BlockId, op: OpNum) {
        let succs = self.cfg.successors(b);
        match succs.len() {
            0 => {}
            1 => {
                let s = succs[0];
                self.mark_edge_feasible(handlers, b, s);
            }
            _ => handlers.mark_feasible_successors(self, b, op),
        }
    }

    /// `is_live_loop_var_free`: op `i` is the FREE of a loop variable defined in an
    /// executable block.
    fn is_live_loop_var_free(&self, i: u32) -> bool {
        if !zend_cfg::cfg::is_loop_var_free(&self.op_array.opcodes[i as usize]) {
            return false;
        }
        let Some(v) = self.ssa.ops[i as usize].op1_use else {
            return false;
        };
        // A loop variable merged from several branches (a match arm's or a ternary's
        // result) is defined by a phi: its block is where the variable lives from.
        let var = &self.ssa.vars[v.index()];
        let def_block = match (var.definition, var.definition_phi) {
            (Some(def), _) => self.cfg.map[def.index()],
            (None, Some(phi)) => self.ssa.phis[phi.index()].block,
            (None, None) => return false,
        };
        self.executable_blocks.contains(def_block.index())
    }

    /// The reachable blocks the solve found unreachable, in block order, and what
    /// `scdf_remove_unreachable_blocks` does with each: a block holding a live loop
    /// variable FREE (`kept_alive_by_loop_var_free`) keeps those FREEs (temporary
    /// compaction needs them), every other is removed.
    #[inline(never)]
    pub fn unreachable_blocks(&self) -> Vec<Unreachable> {
        let mut out = Vec::new();
        for b in (0..self.cfg.blocks_count()).map(|b| BlockId::new(b as u32)) {
            if self.executable_blocks.contains(b.index())
                || !self.cfg.block(b).flags.contains(BlockFlags::REACHABLE)
            {
                continue;
            }
            let frees: Vec<OpNum> = if self.cfg.func_flags.contains(FuncFlags::FREE_LOOP_VAR) {
                self.cfg
                    .block(b)
                    .ops()
                    .filter(|&i| self.is_live_loop_var_free(i))
                    .map(OpNum::new)
                    .collect()
            } else {
                Vec::new()
            };
            out.push(if frees.is_empty() {
                Unreachable::Remove(b)
            } else {
                Unreachable::KeepLoopVarFrees(b, frees)
            });
        }
        out
    }
}

/// A block SCCP found unreachable ([`Scdf::unreachable_blocks`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unreachable {
    /// Removed: `zend_ssa_remove_block`.
    Remove(BlockId),
    /// Kept for these FREEs of loop variables defined in executable blocks:
    /// `cleanup_loop_var_free_block` removes its phis and its other ops, and its edges.
    KeepLoopVarFrees(BlockId, Vec<OpNum>),
}

impl Unreachable {
    pub fn block(&self) -> BlockId {
        match self {
            Unreachable::Remove(b) | Unreachable::KeepLoopVarFrees(b, _) => *b,
        }
    }
}

/// `scdf_remove_unreachable_blocks`: removes `blocks` (from [`Scdf::unreachable_blocks`])
/// through the SSA edit API; returns the number of ops removed.
#[inline(never)]
pub fn remove_unreachable_blocks(
    op_array: &mut OpArray,
    ssa: &mut Ssa,
    cfg: &mut Cfg,
    blocks: &[Unreachable],
) -> usize {
    let mut removed = 0;
    for u in blocks {
        match u {
            Unreachable::Remove(b) => {
                removed += cfg.block(*b).len as usize;
                ssa.remove_block(op_array, cfg, *b);
            }
            Unreachable::KeepLoopVarFrees(b, frees) => {
                removed += cleanup_loop_var_free_block(op_array, ssa, cfg, *b, frees);
            }
        }
    }
    removed
}

/// `cleanup_loop_var_free_block`: block `b` stays reachable with its loop variable FREEs;
/// its phis and every other op go, and so do its edges.
fn cleanup_loop_var_free_block(
    op_array: &mut OpArray,
    ssa: &mut Ssa,
    cfg: &mut Cfg,
    b: BlockId,
    frees: &[OpNum],
) -> usize {
    for p in ssa.blocks[b.index()].phis.clone() {
        let var = ssa.phis[p.index()].ssa_var;
        ssa.remove_uses_of_var(var);
        ssa.remove_phi(p);
    }
    let mut removed = 0;
    for i in cfg.block(b).ops() {
        let op = OpNum::new(i);
        if op_array.opcodes[op.index()].opcode == ZEND_NOP || frees.contains(&op) {
            continue;
        }
        ssa.remove_defs_of_instr(op);
        ssa.remove_instr(op_array, op);
        removed += 1;
    }
    ssa.remove_block_from_cfg(cfg, b);
    removed
}
