//! `zend_build_ssa`: pi placement, phi placement and renaming.

use crate::{
    Constraint, NegativeLat, Phi, PhiId, RangeConstraint, Ssa, SsaBlock, SsaBuffers, SsaOp, SsaVar,
    TypeConstraint,
};
use bumpalo::collections::Vec as BVec;
use bumpalo::Bump;
use zend_cfg::bitset::{self, BitMatrix};
use zend_cfg::dom::DomIntervals;
use zend_cfg::reuse::refilled;
use zend_cfg::{BlockFlags, BlockId, BuildFlags, Cfg};
use zend_dfg::Dfg;
use zend_ir::dump::SsaRange;
use zend_ir::opcode::*;
use zend_ir::{Literal, OpArray, OpNum, Operand};

/// How the optimizer resolves a class name (`zend_optimizer_get_class_entry`): the
/// script's classes, the internal ones, the op_array's own scope. Returns the class name.
pub trait ClassLookup {
    fn class_entry(&self, op_array: &OpArray, lcname: &[u8]) -> Option<Vec<u8>>;
}

/// A lookup that finds nothing.
pub struct NoClasses;

impl ClassLookup for NoClasses {
    fn class_entry(&self, _: &OpArray, _: &[u8]) -> Option<Vec<u8>> {
        None
    }
}

/// Why no SSA form was built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SsaError {
    /// `blocks * (last_var + T)` above 4M: PHP does not build SSA for it.
    #[error("{function}: too big for SSA ({blocks} blocks x {vars} variables)")]
    TooBig {
        function: String,
        blocks: usize,
        vars: u32,
    },
    /// The CFG has no dominator tree ([`Cfg::build_blocks`] without
    /// `compute_dominators_tree`): phi placement needs it.
    #[error(
        "{function}: the CFG has no dominator tree (build it with Cfg::build, or call \
         compute_dominators_tree before Ssa::build)"
    )]
    NoDominators { function: String },
    /// The CFG or the def/use sets were built for another op_array (or the DFG for another
    /// CFG).
    #[error("{function}: {what} (build the CFG and the DFG from this op_array)")]
    Mismatch { function: String, what: String },
}

mod may_be {
    pub const UNDEF: u32 = 1 << 0;
    pub const NULL: u32 = 1 << 1;
    pub const FALSE: u32 = 1 << 2;
    pub const TRUE: u32 = 1 << 3;
    pub const ARRAY: u32 = 1 << 7;
    pub const OBJECT: u32 = 1 << 8;
    pub const RESOURCE: u32 = 1 << 9;
    pub const ANY: u32 = 0x3fe;
    pub const REF: u32 = 1 << 10;
    pub const ARRAY_OF_ANY: u32 = ANY << 10;
    pub const ARRAY_OF_REF: u32 = 1 << 20;
    pub const ARRAY_KEY_ANY: u32 = (1 << 21) | (1 << 22) | (1 << 23) | (1 << 29);
    pub const RC1: u32 = 1 << 30;
    pub const RCN: u32 = 1 << 31;
}

const ZEND_ACC_RETURN_REFERENCE: u32 = 1 << 12;
const ZEND_BIND_REF: u32 = 1;
const ZEND_ARRAY_ELEMENT_REF: u32 = 1;

/// A placed phi that renaming has not reached yet (its SSA variable is assigned when it is).
const UNRENAMED: SsaVar = SsaVar::new(u32::MAX - 1);

/// The construction state: the growing SSA form and the DFG sets pi placement updates.
struct Builder<'a> {
    op_array: &'a OpArray,
    /// Working arrays that do not outlive construction.
    scratch: &'a Bump,
    cfg: &'a Cfg,
    ssa: Ssa,
    /// `dfg->in`.
    live_in: BitMatrix<&'a [u64]>,
    /// What phi placement works on; none for a CFG without a merge point (most functions
    /// are a few blocks of straight code), which needs no phi and no def set.
    merge: Option<Merge<'a>>,
    /// The dominator tree, which construction does not change; taken on the first
    /// dominance query (only pi placement at a join asks one).
    dom: std::cell::OnceCell<DomIntervals>,
}

/// The merge points and the sets phi placement propagates there.
struct Merge<'a> {
    /// The reachable blocks with several predecessors, in block order.
    joins: &'a [u32],
    /// `dfg->def`, extended by pis.
    def: BitMatrix<&'a mut [u64]>,
    /// Where phis go (PHP reuses `dfg->use` for it).
    phi: BitMatrix<&'a mut [u64]>,
}

impl<'a> Merge<'a> {
    /// `None` if the CFG has no merge point.
    fn new(cfg: &Cfg, dfg: &Dfg, vars: u32, scratch: &'a Bump) -> Option<Merge<'a>> {
        let blocks_count = cfg.blocks_count();
        let is_join =
            |block: &zend_cfg::BasicBlock| block.is_reachable() && block.predecessors_count() > 1;
        let first = cfg.blocks.iter().position(is_join)?;
        // Sized for every block from the first: collected from a filter, the vector grew
        // from empty.
        let mut joins = BVec::with_capacity_in(blocks_count - first, scratch);
        joins.extend(
            (first..blocks_count)
                .filter(|&j| is_join(&cfg.blocks[j]))
                .map(|j| j as u32),
        );
        Some(Merge {
            joins: joins.into_bump_slice(),
            def: dfg.def().copy_in(scratch),
            phi: BitMatrix::new_in(blocks_count, vars as usize, scratch),
        })
    }

    /// Step 1: propagate "def" sets into merge points until nothing changes. A merge point
    /// needs a phi for every live variable defined on a path from its immediate dominator;
    /// irreducible loop headers get phis for everything live.
    fn propagate_defs(&mut self, cfg: &Cfg, live_in: &BitMatrix<&[u64]>, scratch: &Bump) {
        let words = self.def.row_words();
        let row = scratch.alloc_slice_fill_copy(words, 0u64);
        let joins = self.joins;
        loop {
            let mut changed = false;
            // Whether a merge point read the def set of a block not yet updated in this
            // pass (at or after it: a loop's back edge). Without such a read, every block
            // read from was final when read, and another pass would change nothing: the
            // fixpoint is reached without it.
            let mut stale = false;
            for &j in joins {
                let j = j as usize;
                let block = &cfg.blocks[j];
                row.copy_from_slice(self.phi.row(j));
                if block.flags.contains(BlockFlags::IRREDUCIBLE_LOOP) {
                    bitset::union_with(row, live_in.row(j));
                } else {
                    for &pred in cfg.predecessors(BlockId::new(j as u32)) {
                        let mut i = Some(pred);
                        while let Some(b) = i {
                            if Some(b) == block.idom {
                                break;
                            }
                            stale |= b.index() >= j;
                            let (def_i, in_j) = (self.def.row(b.index()), live_in.row(j));
                            for w in 0..words {
                                row[w] |= def_i[w] & in_j[w];
                            }
                            i = cfg.blocks[b.index()].idom;
                        }
                    }
                }
                self.phi.row_mut(j).copy_from_slice(row);
                if !bitset::is_subset(row, self.def.row(j)) {
                    bitset::union_with(self.def.row_mut(j), row);
                    changed = true;
                }
            }
            if !changed || !stale {
                break;
            }
        }
    }
}

impl Ssa {
    /// `zend_build_ssa` followed by `zend_ssa_compute_use_def_chains`: the SSA form of a
    /// reachable CFG, from its liveness (`dfg` as [`Dfg::build`] returns it).
    pub fn build(
        op_array: &OpArray,
        cfg: &Cfg,
        dfg: &Dfg,
        classes: &dyn ClassLookup,
        build_flags: BuildFlags,
    ) -> Result<Ssa, SsaError> {
        Ssa::build_in(op_array, cfg, dfg, classes, build_flags, &Bump::new())
    }

    /// `zend_build_ssa`'s first test: no SSA for a function of more than 4M blocks x
    /// variables. PHP makes it before computing the liveness the SSA form needs, so a
    /// caller about to build a [`Dfg`] for this function asks first.
    pub fn check_size(op_array: &OpArray, cfg: &Cfg) -> Result<(), SsaError> {
        let vars = op_array.last_var() + op_array.T;
        let blocks = cfg.blocks_count();
        if blocks as u64 * u64::from(vars) > 4 * 1024 * 1024 {
            return Err(SsaError::TooBig {
                function: op_array.display_name(),
                blocks,
                vars,
            });
        }
        Ok(())
    }

    /// [`Ssa::build`], with its working arrays in `scratch` (an analysis reuses one arena
    /// for every op_array).
    pub fn build_in(
        op_array: &OpArray,
        cfg: &Cfg,
        dfg: &Dfg,
        classes: &dyn ClassLookup,
        build_flags: BuildFlags,
        scratch: &Bump,
    ) -> Result<Ssa, SsaError> {
        let buffers = SsaBuffers::default();
        Ssa::build_reusing(op_array, cfg, dfg, classes, build_flags, scratch, buffers)
    }

    /// [`Ssa::build_in`] into the vectors of an SSA form built before (see
    /// [`Ssa::into_buffers`]): a driver analysing op_array after op_array allocates none
    /// once they have grown.
    pub fn build_reusing(
        op_array: &OpArray,
        cfg: &Cfg,
        dfg: &Dfg,
        classes: &dyn ClassLookup,
        build_flags: BuildFlags,
        scratch: &Bump,
        buffers: SsaBuffers,
    ) -> Result<Ssa, SsaError> {
        let vars = op_array.last_var() + op_array.T;
        let blocks_count = cfg.blocks_count();
        check_inputs(op_array, cfg, dfg, vars)?;
        Ssa::check_size(op_array, cfg)?;
        let SsaBuffers {
            blocks,
            mut ops,
            mut vars_buffer,
            mut phis,
        } = buffers;
        let blocks = refilled(blocks, blocks_count, SsaBlock::default());
        ops.clear();
        vars_buffer.clear();
        phis.clear();
        let mut b = Builder {
            op_array,
            scratch,
            cfg,
            ssa: Ssa {
                blocks,
                ops,
                vars: vars_buffer,
                phis,
                sccs: 0,
            },
            live_in: dfg.in_(),
            merge: Merge::new(cfg, dfg, vars, scratch),
            dom: std::cell::OnceCell::new(),
        };
        // Pis add definitions, so they come before def propagation.
        b.place_essa_pis(classes);
        if let Some(mut merge) = b.merge.take() {
            merge.propagate_defs(cfg, &b.live_in, scratch);
            b.place_phis(&merge);
        }
        b.rename(build_flags);
        let mut ssa = b.ssa;
        // Renaming reaches every phi placed from a DFG of this CFG; one it never reached
        // was placed from the liveness of another CFG of the op_array.
        if let Some(phi) = ssa.phis.iter().find(|p| p.ssa_var == UNRENAMED) {
            return Err(SsaError::Mismatch {
                function: op_array.display_name(),
                what: format!(
                    "a phi of variable {} in block {} is never reached: the DFG was built \
                     from another CFG",
                    phi.var,
                    phi.block.as_u32()
                ),
            });
        }
        ssa.link_use_def_chains(op_array, cfg);
        Ok(ssa)
    }
}

/// Refuses inputs that would make construction index out of range or read a dominator tree
/// that was never computed.
fn check_inputs(op_array: &OpArray, cfg: &Cfg, dfg: &Dfg, vars: u32) -> Result<(), SsaError> {
    let mismatch = |what: String| SsaError::Mismatch {
        function: op_array.display_name(),
        what,
    };
    if cfg.map.len() != op_array.opcodes.len() {
        return Err(mismatch(format!(
            "the CFG maps {} ops, the op_array has {}",
            cfg.map.len(),
            op_array.opcodes.len()
        )));
    }
    let blocks = cfg.blocks_count();
    if dfg.vars != vars {
        return Err(mismatch(format!(
            "the DFG has {} variables, the op_array {vars}",
            dfg.vars
        )));
    }
    // The four sets are one allocation cut in four equal matrices: checking one checks
    // them all.
    if let Some(rows) = dfg.def().rows().filter(|&rows| rows != blocks) {
        return Err(mismatch(format!(
            "the DFG's def sets have {rows} blocks, the CFG {blocks}"
        )));
    }
    // One pass for both tests; a dominator link out of the CFG is reported first. Links
    // are compared by their number plus one (none: 0): one maximum tests the three.
    let link = |b: Option<BlockId>| b.map_or(0, |b| b.as_u32() as usize + 1);
    let mut max_link = 0;
    let mut levels = true;
    for block in &cfg.blocks {
        max_link = max_link
            .max(link(block.idom))
            .max(link(block.children))
            .max(link(block.next_child));
        // compute_dominators_tree gives every reachable block a level (the entry 0).
        levels &= !(block.is_reachable() && block.level.is_none());
    }
    if max_link > blocks {
        return Err(mismatch("a dominator link leaves the CFG".to_string()));
    }
    if !levels {
        return Err(SsaError::NoDominators {
            function: op_array.display_name(),
        });
    }
    Ok(())
}

/// `find_adjusted_tmp_var`: `$a + 5 == 0` read as `$a == 0 - 5`. Returns the CV behind
/// TMP `var` (defined by the nearest op before `op` writing it) and the adjustment.
fn find_adjusted_tmp_var(op_array: &OpArray, op: usize, var: u32) -> Option<(u32, i64)> {
    let long = |operand: Operand| match operand {
        Operand::Const(lit) => match op_array.literals.get(lit.index()) {
            Some(Literal::Long(l)) => Some(*l),
            _ => None,
        },
        _ => None,
    };
    let cv = |operand: Operand| match operand {
        Operand::Cv(v) => Some(v.as_u32()),
        _ => None,
    };
    for k in (0..op).rev() {
        let def = &op_array.opcodes[k];
        if !matches!(def.result, Operand::TmpVar(v) if v.as_u32() == var) {
            continue;
        }
        return match def.opcode {
            ZEND_POST_DEC => cv(def.op1).map(|v| (v, -1)),
            ZEND_POST_INC => cv(def.op1).map(|v| (v, 1)),
            ZEND_ADD => {
                if let (Some(v), true) = (cv(def.op1), matches!(def.op2, Operand::Const(_))) {
                    long(def.op2).filter(|&l| l != i64::MIN).map(|l| (v, -l))
                } else if let (Some(v), true) = (cv(def.op2), matches!(def.op1, Operand::Const(_)))
                {
                    long(def.op1).filter(|&l| l != i64::MIN).map(|l| (v, -l))
                } else {
                    None
                }
            }
            ZEND_SUB => match (cv(def.op1), long(def.op2)) {
                (Some(v), Some(l)) => Some((v, l)),
                _ => None,
            },
            _ => None,
        };
    }
    None
}

fn range(
    min_var: Option<u32>,
    max_var: Option<u32>,
    min: i64,
    max: i64,
    underflow: bool,
    overflow: bool,
    negative: bool,
) -> Constraint {
    Constraint::Range(RangeConstraint {
        range: SsaRange {
            min,
            max,
            underflow,
            overflow,
        },
        min_var,
        max_var,
        min_ssa_var: None,
        max_ssa_var: None,
        negative: if negative {
            NegativeLat::Init
        } else {
            NegativeLat::None
        },
    })
}

fn range_equals(var: Option<u32>, val: i64) -> Constraint {
    range(var, var, val, val, false, false, false)
}

fn range_not_equals(var: Option<u32>, val: i64) -> Constraint {
    range(var, var, val, val, false, false, true)
}

fn range_min(var: Option<u32>, val: i64) -> Constraint {
    range(var, None, val, i64::MAX, false, true, false)
}

fn range_max(var: Option<u32>, val: i64) -> Constraint {
    range(None, var, i64::MIN, val, true, false, false)
}

fn type_mask(mask: u32) -> Constraint {
    let mut type_mask = may_be::REF | may_be::RC1 | may_be::RCN | mask;
    if mask & may_be::NULL != 0 {
        type_mask |= may_be::UNDEF;
    }
    Constraint::Type(TypeConstraint {
        type_mask,
        ce: None,
    })
}

fn not_type_mask(mask: u32) -> Constraint {
    use may_be::*;
    let relevant = ANY | ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF;
    type_mask(!mask & relevant)
}

fn mask_for_type_check(t: u32) -> u32 {
    use may_be::*;
    if t & ARRAY != 0 {
        t | ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF
    } else {
        t
    }
}

impl<'a> Builder<'a> {
    /// `will_rejoin`: the value reaching `block` from another predecessor is the original
    /// one coming from `other_successor`, so a pi would change nothing.
    fn will_rejoin(
        &self,
        block: BlockId,
        other_successor: BlockId,
        exclude: BlockId,
        var: u32,
    ) -> bool {
        // `block` is a merge point.
        let Some(merge) = &self.merge else {
            return false;
        };
        self.cfg.predecessors(block).iter().any(|&pred| {
            pred != exclude
                && !merge.def.contains(pred.index(), var as usize)
                && self
                    .dom
                    .get_or_init(|| DomIntervals::new_in(self.cfg, self.scratch))
                    .dominates(other_successor, pred)
        })
    }

    /// `needs_pi`.
    fn needs_pi(&self, from: BlockId, to: BlockId, var: u32) -> bool {
        if !self.live_in.contains(to.index(), var as usize) {
            return false;
        }
        let succs = self.cfg.successors(from);
        if succs.len() < 2 || succs[0] == succs[1] {
            return false;
        }
        if self.cfg.block(to).predecessors_count() == 1 {
            return true;
        }
        let other = if succs[0] == to { succs[1] } else { succs[0] };
        !self.will_rejoin(to, other, from, var)
    }

    /// `add_pi`: a pi for `var` on the edge `from → to`, first in `to`'s list.
    fn add_pi(&mut self, from: BlockId, to: BlockId, var: u32, constraint: Constraint) {
        if !self.needs_pi(from, to, var) {
            return;
        }
        let preds = self.cfg.block(to).predecessors_count();
        let id = PhiId::new(self.ssa.phis.len() as u32);
        self.ssa.phis.push(Phi {
            pi: Some(from),
            constraint: Some(constraint),
            var,
            ssa_var: UNRENAMED,
            block: to,
            sources: smallvec::smallvec![None; preds],
            use_chains: smallvec::smallvec![None; preds],
            sym_use_chain: None,
        });
        self.ssa.blocks[to.index()].phis.insert(0, id);
        // Only phi placement reads the def sets: without a merge point there is none.
        if let Some(merge) = &mut self.merge {
            // The pi defines `var` in `to` (strictly, on the edge into it).
            merge.def.insert(to.index(), var as usize);
            // With several predecessors a phi must merge the pi with the other values;
            // that cannot be expressed through dominance frontiers, so it is placed
            // explicitly.
            if preds > 1 {
                merge.phi.insert(to.index(), var as usize);
            }
        }
    }

    /// `place_essa_pis`.
    fn place_essa_pis(&mut self, classes: &dyn ClassLookup) {
        let op_array = self.op_array;
        let cv = |operand: Operand| match operand {
            Operand::Cv(v) => Some(v.as_u32()),
            _ => None,
        };
        let literal = |operand: Operand, offset: usize| match operand {
            Operand::Const(lit) => op_array.literals.get(lit.index() + offset),
            _ => None,
        };
        let cfg = self.cfg;
        for (j, block) in cfg.blocks.iter().enumerate() {
            // A pi needs two distinct successors (`needs_pi`): most blocks have fewer.
            if !block.is_reachable() || block.successors_count() < 2 || block.len == 0 {
                continue;
            }
            let from = BlockId::new(j as u32);
            let last = (block.start + block.len - 1) as usize;
            let opline = &op_array.opcodes[last];
            // Most blocks end in no branch that places pis: the successors are not read.
            if !matches!(
                opline.opcode,
                ZEND_JMPZ | ZEND_JMPNZ | ZEND_COALESCE | ZEND_JMP_NULL
            ) {
                continue;
            }
            // Only the first two successors matter (a conditional jump's targets).
            let succs = match cfg.successors(from) {
                [a, b, ..] => [*a, *b],
                [a] => [*a, *a],
                [] => continue,
            };
            let (bt, bf) = match opline.opcode {
                ZEND_JMPZ => (succs[1], succs[0]),
                ZEND_JMPNZ => (succs[0], succs[1]),
                ZEND_COALESCE => {
                    if let Some(var) = cv(opline.op1) {
                        self.add_pi(from, succs[0], var, not_type_mask(may_be::NULL));
                    }
                    continue;
                }
                ZEND_JMP_NULL => {
                    if let Some(var) = cv(opline.op1) {
                        self.add_pi(from, succs[1], var, not_type_mask(may_be::NULL));
                    }
                    continue;
                }
                _ => continue,
            };
            // The patterns below look at the op before the jump; it must be in the same
            // block to be a dominating definition.
            if block.len == 1 {
                continue;
            }
            let prev = &op_array.opcodes[last - 1];
            let Operand::TmpVar(cond) = opline.op1 else {
                continue;
            };
            if prev.result.var() != Some(cond) {
                continue;
            }
            match prev.opcode {
                ZEND_IS_EQUAL | ZEND_IS_NOT_EQUAL | ZEND_IS_SMALLER | ZEND_IS_SMALLER_OR_EQUAL => {
                    self.comparison_pis(from, bt, bf, last, prev);
                }
                ZEND_POST_INC | ZEND_POST_DEC if cv(prev.op1).is_some() => {
                    let var = cv(prev.op1).unwrap_or_default();
                    let val = if prev.opcode == ZEND_POST_DEC { -1 } else { 1 };
                    self.add_pi(from, bf, var, range_equals(None, val));
                    self.add_pi(from, bt, var, range_not_equals(None, val));
                }
                ZEND_PRE_INC | ZEND_PRE_DEC if cv(prev.op1).is_some() => {
                    let var = cv(prev.op1).unwrap_or_default();
                    self.add_pi(from, bf, var, range_equals(None, 0));
                    // speculative
                    self.add_pi(from, bt, var, range_not_equals(None, 0));
                }
                ZEND_TYPE_CHECK if cv(prev.op1).is_some() => {
                    let var = cv(prev.op1).unwrap_or_default();
                    let t = prev.extended_value;
                    self.add_pi(from, bt, var, type_mask(mask_for_type_check(t)));
                    // is_resource() may be false for closed resources.
                    if t != may_be::RESOURCE {
                        self.add_pi(from, bf, var, not_type_mask(mask_for_type_check(t)));
                    }
                }
                ZEND_IS_IDENTICAL | ZEND_IS_NOT_IDENTICAL => {
                    let (var, val) = match (cv(prev.op1), cv(prev.op2)) {
                        (Some(v), _) if matches!(prev.op2, Operand::Const(_)) => {
                            (v, literal(prev.op2, 0))
                        }
                        (_, Some(v)) if matches!(prev.op1, Operand::Const(_)) => {
                            (v, literal(prev.op1, 0))
                        }
                        _ => continue,
                    };
                    // Only === null/true/false: they remove a type on the false branch.
                    let mask = match val {
                        Some(Literal::Null) => may_be::NULL,
                        Some(Literal::True) => may_be::TRUE,
                        Some(Literal::False) => may_be::FALSE,
                        _ => continue,
                    };
                    let (yes, no) = if prev.opcode == ZEND_IS_IDENTICAL {
                        (bt, bf)
                    } else {
                        (bf, bt)
                    };
                    self.add_pi(from, yes, var, type_mask(mask));
                    self.add_pi(from, no, var, not_type_mask(mask));
                }
                ZEND_INSTANCEOF
                    if cv(prev.op1).is_some() && matches!(prev.op2, Operand::Const(_)) =>
                {
                    let var = cv(prev.op1).unwrap_or_default();
                    let Some(Literal::String(lcname)) = literal(prev.op2, 1) else {
                        continue;
                    };
                    let Some(ce) = classes.class_entry(op_array, lcname.as_bytes()) else {
                        continue;
                    };
                    let mut constraint = type_mask(may_be::OBJECT);
                    if let Constraint::Type(t) = &mut constraint {
                        t.ce = Some(ce);
                    }
                    self.add_pi(from, bt, var, constraint);
                }
                _ => {}
            }
        }
    }

    /// Range pis of `a OP b` with OP one of `==`, `!=`, `<`, `<=`, where each side is a CV,
    /// a CV±constant temporary, or a long constant.
    fn comparison_pis(
        &mut self,
        from: BlockId,
        bt: BlockId,
        bf: BlockId,
        jump: usize,
        prev: &zend_ir::Op,
    ) {
        let op_array = self.op_array;
        let long = |operand: Operand| match operand {
            Operand::Const(lit) => match op_array.literals.get(lit.index()) {
                Some(Literal::Long(l)) => Some(*l),
                _ => None,
            },
            _ => None,
        };
        let mut var1: Option<u32> = None;
        let mut var2: Option<u32> = None;
        let mut val1: i64 = 0;
        let mut val2: i64 = 0;
        match prev.op1 {
            Operand::Cv(v) => var1 = Some(v.as_u32()),
            Operand::TmpVar(v) => {
                if let Some((cv, adj)) = find_adjusted_tmp_var(op_array, jump, v.as_u32()) {
                    var1 = Some(cv);
                    val2 = adj;
                }
            }
            _ => {}
        }
        match prev.op2 {
            Operand::Cv(v) => var2 = Some(v.as_u32()),
            Operand::TmpVar(v) => {
                if let Some((cv, adj)) = find_adjusted_tmp_var(op_array, jump, v.as_u32()) {
                    var2 = Some(cv);
                    val1 = adj;
                }
            }
            _ => {}
        }
        match (var1, var2) {
            (Some(_), Some(_)) => {
                if val1.checked_sub(val2).is_some() && val2.checked_sub(val1).is_some() {
                    let tmp = val1;
                    val1 -= val2;
                    val2 -= tmp;
                } else {
                    var1 = None;
                    var2 = None;
                }
            }
            (Some(_), None) => {
                let mut add = 0;
                match (prev.op2, long(prev.op2)) {
                    (Operand::Const(_), Some(l)) => add = l,
                    _ => var1 = None,
                }
                match val2.checked_add(add) {
                    Some(v) => val2 = v,
                    None => var1 = None,
                }
            }
            (None, Some(_)) => {
                let mut add = 0;
                match (prev.op1, long(prev.op1)) {
                    (Operand::Const(_), Some(l)) => add = l,
                    _ => var2 = None,
                }
                match val1.checked_add(add) {
                    Some(v) => val1 = v,
                    None => var2 = None,
                }
            }
            (None, None) => {}
        }

        if let Some(v1) = var1 {
            match prev.opcode {
                ZEND_IS_EQUAL => {
                    self.add_pi(from, bt, v1, range_equals(var2, val2));
                    self.add_pi(from, bf, v1, range_not_equals(var2, val2));
                }
                ZEND_IS_NOT_EQUAL => {
                    self.add_pi(from, bf, v1, range_equals(var2, val2));
                    self.add_pi(from, bt, v1, range_not_equals(var2, val2));
                }
                ZEND_IS_SMALLER => {
                    if val2 > i64::MIN {
                        self.add_pi(from, bt, v1, range_max(var2, val2 - 1));
                    }
                    self.add_pi(from, bf, v1, range_min(var2, val2));
                }
                _ => {
                    self.add_pi(from, bt, v1, range_max(var2, val2));
                    if val2 < i64::MAX {
                        self.add_pi(from, bf, v1, range_min(var2, val2 + 1));
                    }
                }
            }
        }
        if let Some(v2) = var2 {
            match prev.opcode {
                ZEND_IS_EQUAL => {
                    self.add_pi(from, bt, v2, range_equals(var1, val1));
                    self.add_pi(from, bf, v2, range_not_equals(var1, val1));
                }
                ZEND_IS_NOT_EQUAL => {
                    self.add_pi(from, bf, v2, range_equals(var1, val1));
                    self.add_pi(from, bt, v2, range_not_equals(var1, val1));
                }
                ZEND_IS_SMALLER => {
                    if val1 < i64::MAX {
                        self.add_pi(from, bt, v2, range_min(var1, val1 + 1));
                    }
                    self.add_pi(from, bf, v2, range_max(var1, val1));
                }
                _ => {
                    self.add_pi(from, bt, v2, range_min(var1, val1));
                    if val1 > i64::MIN {
                        self.add_pi(from, bf, v2, range_max(var1, val1 - 1));
                    }
                }
            }
        }
    }

    /// Step 2: one phi per variable of each merge point's phi set (no other block has
    /// one), after its pis, in variable order.
    fn place_phis(&mut self, merge: &Merge<'_>) {
        for &j in merge.joins {
            let j = j as usize;
            let preds = self.cfg.blocks[j].predecessors_count();
            if bitset::iter(merge.phi.row(j)).next().is_none() {
                continue;
            }
            // After the block's pis, which place_essa_pis put first.
            for var in bitset::iter(merge.phi.row(j)) {
                self.ssa.blocks[j]
                    .phis
                    .push(PhiId::new(self.ssa.phis.len() as u32));
                self.ssa.phis.push(Phi {
                    pi: None,
                    constraint: None,
                    var: var as u32,
                    ssa_var: UNRENAMED,
                    block: BlockId::new(j as u32),
                    sources: smallvec::smallvec![None; preds],
                    use_chains: smallvec::smallvec![None; preds],
                    sym_use_chain: None,
                });
            }
        }
    }

    /// Step 3: renaming, a preorder walk of the dominator tree. Each block sees the
    /// variable map its immediate dominator ended with; an undo log restores it after a
    /// subtree instead of PHP's copies.
    fn rename(&mut self, build_flags: BuildFlags) {
        let op_array = self.op_array;
        let cfg = self.cfg;
        let total = (op_array.last_var() + op_array.T) as usize;
        let ops = std::mem::take(&mut self.ssa.ops);
        self.ssa.ops = refilled(ops, op_array.opcodes.len(), SsaOp::default());
        let mut map = VarMap {
            var: self.scratch.alloc_slice_fill_copy(total, None),
            // Every definition and phi logs one entry at most once per dominator-tree path.
            undo: BVec::with_capacity_in(
                op_array.opcodes.len() + self.ssa.phis.len(),
                self.scratch,
            ),
            logging: false,
            count: op_array.last_var(),
        };
        // The CVs' values on entry are the first SSA variables.
        for (j, v) in map
            .var
            .iter_mut()
            .enumerate()
            .take(op_array.last_var() as usize)
        {
            *v = Some(SsaVar::new(j as u32));
        }

        // The walk follows the tree's links (first child, next sibling, parent). Only a
        // block with a next sibling must be undone when left (the sibling starts from the
        // parent's map; PHP copies the map for such a block): for each on the path from
        // the entry, where its undo entries start. Without one on the path, nothing is
        // logged, as nothing will be undone.
        let mut marks: BVec<usize> = BVec::with_capacity_in(cfg.blocks_count(), self.scratch);
        let mut depth = 0usize;
        let mut n = BlockId::new(0);
        'walk: loop {
            let block = &cfg.blocks[n.index()];
            if block.next_child.is_some() {
                marks.push(map.undo.len());
                map.logging = true;
            }
            for &p in &self.ssa.blocks[n.index()].phis {
                let phi = &mut self.ssa.phis[p.index()];
                if phi.ssa_var == UNRENAMED {
                    phi.ssa_var = map.fresh();
                }
                map.set(phi.var, phi.ssa_var);
            }
            for k in block.ops() {
                let k = k as usize;
                if op_array.opcodes[k].opcode != ZEND_OP_DATA {
                    rename_op(op_array, k, build_flags, &mut self.ssa.ops, &mut map);
                }
            }
            self.link_successors(n, &mut map);
            if let Some(child) = block.children {
                n = child;
                depth += 1;
                continue;
            }
            // Leave `n`, and its ancestors whose children are all done, up to the first
            // with a next sibling.
            loop {
                if depth == 0 {
                    break 'walk;
                }
                let leaving = &cfg.blocks[n.index()];
                if let Some(sibling) = leaving.next_child {
                    // Its mark, unless the tree's parent and child links disagree.
                    let Some(mark) = marks.pop() else {
                        break 'walk;
                    };
                    map.undo_to(mark);
                    map.logging = !marks.is_empty();
                    n = sibling;
                    break;
                }
                let Some(parent) = leaving.idom else {
                    break 'walk;
                };
                n = parent;
                depth -= 1;
            }
        }
        // What `zend_ssa_compute_use_def_chains` starts from (see `link_use_def_chains`).
        let vars = std::mem::take(&mut self.ssa.vars);
        self.ssa.vars = crate::chains::unlinked_vars(vars, map.count as usize, op_array.last_var());
    }

    /// Fills the sources of the successors' phis and pis for the edges out of `n` (the
    /// second half of PHP's `zend_ssa_rename` for one block).
    fn link_successors(&mut self, n: BlockId, map: &mut VarMap<'_>) {
        let op_array = self.op_array;
        let cfg = self.cfg;
        let Ssa {
            blocks, phis, ops, ..
        } = &mut self.ssa;
        for (i, &succ) in cfg.successors(n).iter().enumerate() {
            let succ_phis = &blocks[succ.index()].phis;
            // Most blocks have no phi: the edge's position is looked up only for one.
            if succ_phis.is_empty() {
                continue;
            }
            let edge = cfg.predecessor_index(succ, n);
            // On the exit edge (the first) of an FE_FETCH over a CV, the loop variable
            // keeps its value from before the fetch.
            let fe_fetch = cfg.blocks[n.index()]
                .last_op()
                .filter(|_| i == 0)
                .and_then(|last| {
                    let op = &op_array.opcodes[last.index()];
                    (matches!(op.opcode, ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW)
                        && matches!(op.op2, Operand::Cv(_)))
                    .then(|| ops[last.index()])
                });
            for &p in succ_phis {
                let phi = &mut phis[p.index()];
                if phi.pi == Some(n) {
                    if let Some(Constraint::Range(r)) = &mut phi.constraint {
                        if let Some(v) = r.min_var {
                            r.min_ssa_var = map.get(v);
                        }
                        if let Some(v) = r.max_var {
                            r.max_ssa_var = map.get(v);
                        }
                    }
                    let value = map.get(phi.var);
                    phi.sources.iter_mut().for_each(|s| *s = value);
                    if phi.ssa_var == UNRENAMED {
                        phi.ssa_var = map.fresh();
                    }
                } else if phi.pi.is_none() {
                    let Some(j) = edge else { continue };
                    let mut value = map.get(phi.var);
                    if let Some(fe) = fe_fetch {
                        if value.is_some() && value == fe.op2_def {
                            value = fe.op2_use;
                        }
                    }
                    phi.sources[j] = value;
                }
            }
            // A pi on this edge feeds the phi of the same variable in that block.
            for (pos, &p) in succ_phis.iter().enumerate() {
                let phi = &phis[p.index()];
                if !phi.is_pi() {
                    break;
                }
                if phi.pi != Some(n) {
                    continue;
                }
                let (var, value) = (phi.var, phi.ssa_var);
                let Some(j) = edge else { continue };
                for &q in &succ_phis[pos + 1..] {
                    let q = &mut phis[q.index()];
                    if !q.is_pi() && q.var == var {
                        q.sources[j] = Some(value);
                    }
                }
            }
        }
    }
}

/// The current SSA value of every CV/TMP/VAR during renaming, with an undo log.
struct VarMap<'b> {
    var: &'b mut [Option<SsaVar>],
    undo: BVec<'b, (u32, Option<SsaVar>)>,
    /// Whether a change must be logged: some block being walked will be undone.
    logging: bool,
    /// Next SSA variable number (`ssa_vars_count`).
    count: u32,
}

impl VarMap<'_> {
    fn get(&self, v: u32) -> Option<SsaVar> {
        self.var[v as usize]
    }

    fn set(&mut self, v: u32, value: SsaVar) {
        if self.logging {
            self.undo.push((v, self.var[v as usize]));
        }
        self.var[v as usize] = Some(value);
    }

    fn fresh(&mut self) -> SsaVar {
        self.count += 1;
        SsaVar::new(self.count - 1)
    }

    /// A new SSA variable that becomes the value of `v`.
    fn define(&mut self, v: u32) -> SsaVar {
        let value = self.fresh();
        self.set(v, value);
        value
    }

    fn undo_to(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let (v, old) = self.undo.pop().expect("undo entry above the mark");
            self.var[v as usize] = old;
        }
    }
}

/// `_zend_ssa_rename_op`: the uses and definitions of op `k` (and of its OP_DATA).
fn rename_op(
    op_array: &OpArray,
    k: usize,
    build_flags: BuildFlags,
    ops: &mut [SsaOp],
    map: &mut VarMap<'_>,
) {
    let opline = &op_array.opcodes[k];
    let rc = build_flags.contains(BuildFlags::SSA_RC_INFERENCE);
    let var_of = |operand: Operand| operand.var().map(|v| v.as_u32());
    let cv_of = |operand: Operand| match operand {
        Operand::Cv(v) => Some(v.as_u32()),
        _ => None,
    };
    if let Some(v) = var_of(opline.op1) {
        ops[k].op1_use = map.get(v);
    }
    if let Some(v) = var_of(opline.op2) {
        ops[k].op2_use = map.get(v);
    }
    if build_flags.contains(BuildFlags::SSA_USE_CV_RESULTS) && opline.opcode != ZEND_RECV {
        if let Some(v) = cv_of(opline.result) {
            ops[k].result_use = map.get(v);
        }
    }
    // The OP_DATA's operand: used, and maybe defined.
    let op_data = |ops: &mut [SsaOp], map: &mut VarMap<'_>, defines: bool| {
        if let Some(next) = op_array.opcodes.get(k + 1) {
            if let Some(v) = var_of(next.op1) {
                ops[k + 1].op1_use = map.get(v);
                if defines && matches!(next.op1, Operand::Cv(_)) {
                    ops[k + 1].op1_def = Some(map.define(v));
                }
            }
        }
    };
    let op1_def = |ops: &mut [SsaOp], map: &mut VarMap<'_>| {
        if let Some(v) = cv_of(opline.op1) {
            ops[k].op1_def = Some(map.define(v));
        }
    };
    match opline.opcode {
        ZEND_ASSIGN => {
            if rc {
                if let Some(v) = cv_of(opline.op2) {
                    ops[k].op2_def = Some(map.define(v));
                }
            }
            op1_def(ops, map);
        }
        ZEND_ASSIGN_REF => {
            if let Some(v) = cv_of(opline.op2) {
                ops[k].op2_def = Some(map.define(v));
            }
            op1_def(ops, map);
        }
        ZEND_ASSIGN_DIM | ZEND_ASSIGN_OBJ => {
            op_data(ops, map, rc);
            op1_def(ops, map);
        }
        ZEND_ASSIGN_OBJ_REF => {
            op1_def(ops, map);
            op_data(ops, map, true);
        }
        ZEND_ASSIGN_STATIC_PROP => op_data(ops, map, rc),
        ZEND_ASSIGN_STATIC_PROP_REF => op_data(ops, map, true),
        ZEND_ASSIGN_STATIC_PROP_OP => op_data(ops, map, false),
        ZEND_ASSIGN_DIM_OP | ZEND_ASSIGN_OBJ_OP => {
            op1_def(ops, map);
            op_data(ops, map, false);
        }
        ZEND_ASSIGN_OP
        | ZEND_PRE_INC
        | ZEND_PRE_DEC
        | ZEND_POST_INC
        | ZEND_POST_DEC
        | ZEND_BIND_GLOBAL
        | ZEND_BIND_STATIC
        | ZEND_SEND_VAR_NO_REF
        | ZEND_SEND_VAR_NO_REF_EX
        | ZEND_SEND_VAR_EX
        | ZEND_SEND_FUNC_ARG
        | ZEND_SEND_REF
        | ZEND_SEND_UNPACK
        | ZEND_FE_RESET_RW
        | ZEND_MAKE_REF
        | ZEND_PRE_INC_OBJ
        | ZEND_PRE_DEC_OBJ
        | ZEND_POST_INC_OBJ
        | ZEND_POST_DEC_OBJ
        | ZEND_UNSET_DIM
        | ZEND_UNSET_OBJ
        | ZEND_FETCH_DIM_W
        | ZEND_FETCH_DIM_RW
        | ZEND_FETCH_DIM_FUNC_ARG
        | ZEND_FETCH_DIM_UNSET
        | ZEND_FETCH_LIST_W => op1_def(ops, map),
        ZEND_SEND_VAR | ZEND_CAST | ZEND_QM_ASSIGN | ZEND_JMP_SET | ZEND_COALESCE
        | ZEND_FE_RESET_R
            if rc =>
        {
            op1_def(ops, map);
        }
        ZEND_ADD_ARRAY_UNPACK | ZEND_ADD_ARRAY_ELEMENT | ZEND_INIT_ARRAY => {
            if opline.opcode != ZEND_INIT_ARRAY {
                if let Some(v) = var_of(opline.result) {
                    ops[k].result_use = map.get(v);
                }
            }
            if opline.opcode != ZEND_ADD_ARRAY_UNPACK
                && (rc || opline.extended_value & ZEND_ARRAY_ELEMENT_REF != 0)
            {
                op1_def(ops, map);
            }
        }
        ZEND_YIELD if op_array.fn_flags & ZEND_ACC_RETURN_REFERENCE != 0 || rc => {
            op1_def(ops, map);
        }
        ZEND_UNSET_CV => op1_def(ops, map),
        ZEND_VERIFY_RETURN_TYPE if let Some(v) = var_of(opline.op1) => {
            ops[k].op1_def = Some(map.define(v));
        }
        ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW => {
            if !matches!(opline.op2, Operand::Cv(_)) {
                // Not used: the loop variable is only written.
                ops[k].op2_use = None;
            }
            if let Some(v) = var_of(opline.op2) {
                ops[k].op2_def = Some(map.define(v));
            }
        }
        ZEND_BIND_LEXICAL if opline.extended_value & ZEND_BIND_REF != 0 || rc => {
            if let Some(v) = var_of(opline.op2) {
                ops[k].op2_def = Some(map.define(v));
            }
        }
        ZEND_COPY_TMP if rc => {
            if let Some(v) = var_of(opline.op1) {
                ops[k].op1_def = Some(map.define(v));
            }
        }
        _ => {}
    }
    if let Some(v) = var_of(opline.result) {
        // `define` spelled out: the result is the most frequent definition, and through
        // `define` the compiler left it a call (1M instructions over the corpus).
        let value = map.fresh();
        map.set(v, value);
        ops[k].result_def = Some(value);
    }
}

/// The block an op belongs to, for callers that only have op numbers.
pub fn block_of(cfg: &Cfg, op: OpNum) -> BlockId {
    cfg.map[op.index()]
}
