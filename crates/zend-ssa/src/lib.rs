//! The e-SSA form of a PHP 8.2 op_array, as Zend/Optimizer/zend_ssa.c builds it, and the
//! integrity checks of ssa_integrity.c.
//!
//! Mirrors `zend_build_ssa`: liveness-pruned phi placement (def propagation at merge
//! points, explicit phis for irreducible loops), e-SSA pi placement on conditional branches
//! (range constraints from `==`/`!=`/`<`/`<=` on CVs and CV±constant temporaries and from
//! increments/decrements, type constraints from `is_*()`/TYPE_CHECK, `=== null/true/false`,
//! `instanceof` and `??`/`?->`), renaming along the dominator tree; then
//! `zend_ssa_compute_use_def_chains` (use_chain, phi_use_chain, sym_use_chain, alias),
//! `zend_ssa_find_false_dependencies` (no_val) and `zend_ssa_find_sccs` (Pearce's
//! algorithm, iterative as PHP's). The `SSA Phi() Placement` and `dfa ssa` dumps print
//! PHP's bytes. [`edit`] holds zend_ssa.c's mutation helpers (unlink/replace use chains,
//! remove instructions, phis, uses, definitions, predecessors and blocks, rename uses)
//! and dfa_pass.c's NOP compaction with the renumbering of everything that names ops.
//!
//! Guarantees: SSA variable numbers, phi and pi order, constraints and chains are PHP's
//! for the same CFG, so the dumps are byte-identical; construction never recurses (a
//! 100k-op function is built with explicit stacks); [`verify`] checks every invariant
//! ssa_integrity.c checks, plus that every use is dominated by its definition (from the
//! blocks' dominator links as they are, never from a cache); edits through [`edit`]
//! leave use chains in the order PHP's edits leave them.

pub mod build;
pub mod chains;
pub mod dump;
pub mod edit;
pub mod verify;

pub use build::{ClassLookup, NoClasses, SsaError};
pub use edit::{OpRenumbering, VarTypes};
pub use verify::verify;

use bumpalo::collections::Vec as BVec;
use bumpalo::Bump;
use smallvec::SmallVec;
use zend_cfg::BlockId;
use zend_ir::dump::SsaRange;
use zend_ir::OpNum;

zend_ir::index_type!(
    /// An SSA variable number (`#n` in dumps): index into [`Ssa::vars`]. The first
    /// `last_var` are the CVs' values on entry.
    SsaVar, "#"
);
zend_ir::index_type!(
    /// Index into [`Ssa::phis`]: a phi or an e-SSA pi.
    PhiId, "phi"
);

/// `zend_ssa_negative_lat`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum NegativeLat {
    #[default]
    None,
    Init,
    Invariant,
    UseLt,
    UseGt,
    Unknown,
}

/// `zend_ssa_range_constraint`: `var ∈ [min_var + min, max_var + max]`, or its negation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeConstraint {
    pub range: SsaRange,
    /// The variables the bounds are relative to (`min_var`/`max_var`).
    pub min_var: Option<u32>,
    pub max_var: Option<u32>,
    /// Their SSA values at the branch, set by renaming.
    pub min_ssa_var: Option<SsaVar>,
    pub max_ssa_var: Option<SsaVar>,
    pub negative: NegativeLat,
}

/// `zend_ssa_type_constraint`: intersect with `type_mask` (and with class `ce` for
/// `instanceof`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeConstraint {
    pub type_mask: u32,
    /// Name of the class the value is an instance of.
    pub ce: Option<Vec<u8>>,
}

/// The constraint of an e-SSA pi.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Constraint {
    Range(RangeConstraint),
    Type(TypeConstraint),
}

/// A `zend_ssa_phi`: `ssa_var = Phi(sources...)`, one source per predecessor of `block`;
/// or, with `pi` set, an e-SSA pi `ssa_var = Pi<pi>(sources[0] & constraint)` placed on
/// the edge from block `pi`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phi {
    pub pi: Option<BlockId>,
    pub constraint: Option<Constraint>,
    /// The original CV/TMP/VAR number.
    pub var: u32,
    pub ssa_var: SsaVar,
    pub block: BlockId,
    /// As many as `block` has predecessors (a pi repeats its one source); inline up to
    /// two, the common case.
    pub sources: SmallVec<[Option<SsaVar>; 2]>,
    /// Next phi using the same source, per source (`use_chains`).
    pub use_chains: SmallVec<[Option<PhiId>; 2]>,
    /// Next pi whose constraint refers to the same variable.
    pub sym_use_chain: Option<PhiId>,
}

impl Phi {
    pub fn is_pi(&self) -> bool {
        self.pi.is_some()
    }

    /// `NUM_PHI_SOURCES`.
    pub fn num_sources(&self) -> usize {
        if self.is_pi() {
            1
        } else {
            self.sources.len()
        }
    }

    pub fn has_range_constraint(&self) -> bool {
        matches!(self.constraint, Some(Constraint::Range(_)))
    }
}

/// `zend_ssa_block`: its phis, pis first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SsaBlock {
    pub phis: Vec<PhiId>,
}

/// A `zend_ssa_op`: the SSA variables one op uses and defines, and the next use of each
/// used variable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SsaOp {
    pub op1_use: Option<SsaVar>,
    pub op2_use: Option<SsaVar>,
    pub result_use: Option<SsaVar>,
    pub op1_def: Option<SsaVar>,
    pub op2_def: Option<SsaVar>,
    pub result_def: Option<SsaVar>,
    pub op1_use_chain: Option<OpNum>,
    pub op2_use_chain: Option<OpNum>,
    pub res_use_chain: Option<OpNum>,
}

// The index types' niche keeps an SSA op as small as PHP's (nine `int`s): the SSA passes
// walk these records op by op.
const _: () = assert!(std::mem::size_of::<SsaOp>() == 36);

impl SsaOp {
    pub fn operands(&self) -> zend_ir::dump::SsaOperands {
        let n = |v: Option<SsaVar>| v.map(|v| v.as_u32());
        zend_ir::dump::SsaOperands {
            op1_use: n(self.op1_use),
            op2_use: n(self.op2_use),
            result_use: n(self.result_use),
            op1_def: n(self.op1_def),
            op2_def: n(self.op2_def),
            result_def: n(self.result_def),
        }
    }

    /// `zend_ssa_is_no_val_use` on an op already at hand (its `opcode` and SSA operands):
    /// whether it reads `var` only to overwrite it. [`Ssa::is_no_val_use`] looks the op up.
    #[inline]
    pub fn is_no_val_use(&self, opcode: zend_ir::Opcode, var: SsaVar) -> bool {
        use zend_ir::opcode::*;
        let var = Some(var);
        match opcode {
            ZEND_ASSIGN | ZEND_UNSET_CV | ZEND_BIND_GLOBAL | ZEND_BIND_STATIC => {
                return self.op1_use == var && self.op2_use != var;
            }
            ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW => {
                return self.op2_use == var && self.op1_use != var
            }
            _ => {}
        }
        self.result_use == var
            && opcode != ZEND_ADD_ARRAY_ELEMENT
            && opcode != ZEND_ADD_ARRAY_UNPACK
            && self.op1_use != var
            && self.op2_use != var
    }
}

/// `zend_ssa_alias_kind`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Alias {
    #[default]
    NoAlias,
    Symtable,
    HttpResponseHeader,
}

/// `zend_ssa_escape_state`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum EscapeState {
    #[default]
    Unknown,
    NoEscape,
    FunctionEscape,
    GlobalEscape,
}

/// A `zend_ssa_var`: where an SSA value is defined and used.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SsaVariable {
    /// The original CV/TMP/VAR number.
    pub var: u32,
    /// Strongly connected component (`None`: none computed, or a no_val variable).
    pub scc: Option<u32>,
    pub definition: Option<OpNum>,
    pub definition_phi: Option<PhiId>,
    /// First op using the value (continued through the ops' `*_use_chain`).
    pub use_chain: Option<OpNum>,
    /// First phi using the value (continued through the phis' `use_chains`).
    pub phi_use_chain: Option<PhiId>,
    /// First pi whose range constraint refers to the value.
    pub sym_use_chain: Option<PhiId>,
    /// The value is never read (only, e.g., overwritten by ASSIGN).
    pub no_val: bool,
    pub scc_entry: bool,
    pub alias: Alias,
    pub escape_state: EscapeState,
}

/// A `zend_ssa` (without the CFG, which it is built on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ssa {
    pub blocks: Vec<SsaBlock>,
    pub ops: Vec<SsaOp>,
    pub vars: Vec<SsaVariable>,
    pub phis: Vec<Phi>,
    /// Number of SCCs, once [`Ssa::find_sccs`] ran.
    pub sccs: u32,
}

/// The vectors of an SSA form no longer needed, kept for [`Ssa::build_reusing`].
#[derive(Debug, Default)]
pub struct SsaBuffers {
    blocks: Vec<SsaBlock>,
    ops: Vec<SsaOp>,
    vars_buffer: Vec<SsaVariable>,
    phis: Vec<Phi>,
}

impl Ssa {
    /// Gives up the SSA form for its vectors' memory (see [`Ssa::build_reusing`]).
    pub fn into_buffers(mut self) -> SsaBuffers {
        self.take_buffers()
    }

    /// [`Ssa::into_buffers`] of an SSA form not owned: it is left empty.
    pub fn take_buffers(&mut self) -> SsaBuffers {
        SsaBuffers {
            blocks: std::mem::take(&mut self.blocks),
            ops: std::mem::take(&mut self.ops),
            vars_buffer: std::mem::take(&mut self.vars),
            phis: std::mem::take(&mut self.phis),
        }
    }

    pub fn vars_count(&self) -> usize {
        self.vars.len()
    }

    pub fn phi(&self, id: PhiId) -> &Phi {
        &self.phis[id.index()]
    }

    /// `zend_ssa_next_use`: the next op using `var` after op `use_`.
    #[inline]
    pub fn next_use(&self, var: SsaVar, use_: OpNum) -> Option<OpNum> {
        let op = &self.ops[use_.index()];
        if op.op1_use == Some(var) {
            op.op1_use_chain
        } else if op.op2_use == Some(var) {
            op.op2_use_chain
        } else {
            op.res_use_chain
        }
    }

    /// `zend_ssa_next_use_phi`: the next phi using `var` after `p`.
    pub fn next_use_phi(&self, var: SsaVar, p: PhiId) -> Option<PhiId> {
        let phi = &self.phis[p.index()];
        if phi.is_pi() {
            return phi.use_chains[0];
        }
        phi.sources
            .iter()
            .position(|&s| s == Some(var))
            .and_then(|j| phi.use_chains[j])
    }

    /// [`Ssa::phi_uses`] for every variable at once, in the same chain order, in time
    /// linear in the number of phi sources (walking the chains of a phi with many sources
    /// one `next_use_phi` at a time is quadratic).
    pub fn all_phi_uses<'a>(&self, scratch: &'a Bump) -> PhiUses<'a> {
        // Where each (phi, source) pair's chain link lives: the first position of the source;
        // found by a scan for phis with few sources, through this map for the others.
        const SCAN: usize = 16;
        let mut first: std::collections::HashMap<(u32, u32), usize> =
            std::collections::HashMap::new();
        for (id, phi) in self.phis.iter().enumerate() {
            if phi.num_sources() <= SCAN {
                continue;
            }
            for (j, source) in phi.sources[..phi.num_sources()].iter().enumerate() {
                if let Some(s) = source {
                    first.entry((id as u32, s.as_u32())).or_insert(j);
                }
            }
        }
        let position = |id: PhiId, v: u32| -> Option<usize> {
            let phi = self.phis.get(id.index())?;
            if phi.num_sources() <= SCAN {
                phi.sources[..phi.num_sources()]
                    .iter()
                    .position(|&s| s == Some(SsaVar::new(v)))
            } else {
                first.get(&(id.as_u32(), v)).copied()
            }
        };
        let sources = self.phis.iter().map(Phi::num_sources).sum();
        let mut uses = PhiUses {
            start: BVec::with_capacity_in(self.vars.len() + 1, scratch),
            list: BVec::with_capacity_in(sources, scratch),
        };
        uses.start.push(0);
        for v in 0..self.vars.len() {
            let mut p = self.vars[v].phi_use_chain;
            let mut steps = 0usize;
            while let Some(id) = p {
                uses.list.push(id);
                steps += 1;
                if steps > self.phis.len() {
                    break; // a cycle: the verifier reports it
                }
                p = position(id, v as u32)
                    .and_then(|j| self.phis[id.index()].use_chains.get(j).copied().flatten());
            }
            uses.start.push(uses.list.len() as u32);
        }
        uses
    }

    /// The ops using `var`, in chain order.
    #[inline]
    pub fn uses(&self, var: SsaVar) -> impl Iterator<Item = OpNum> + '_ {
        std::iter::successors(self.vars[var.index()].use_chain, move |&u| {
            self.next_use(var, u)
        })
    }

    /// The phis using `var`, in chain order.
    pub fn phi_uses(&self, var: SsaVar) -> impl Iterator<Item = PhiId> + '_ {
        std::iter::successors(self.vars[var.index()].phi_use_chain, move |&p| {
            self.next_use_phi(var, p)
        })
    }
}

/// The phis using each SSA variable, in chain order ([`Ssa::all_phi_uses`]): one flat list,
/// `phi_uses[v]` is variable `v`'s slice of it, in the analysis' arena.
#[derive(Debug, Clone)]
pub struct PhiUses<'a> {
    start: BVec<'a, u32>,
    list: BVec<'a, PhiId>,
}

impl PhiUses<'_> {
    /// Number of variables.
    pub fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each variable's phi uses, in variable order.
    pub fn iter(&self) -> impl Iterator<Item = &[PhiId]> + '_ {
        (0..self.len()).map(move |v| &self[v])
    }
}

impl std::ops::Index<usize> for PhiUses<'_> {
    type Output = [PhiId];

    #[inline]
    fn index(&self, v: usize) -> &[PhiId] {
        &self.list[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

/// `FOR_EACH_VAR_USAGE` of every SSA variable ([`Ssa::var_usages_in`]): one flat list,
/// `usages[v]` is variable `v`'s slice of it, in the analysis' arena.
#[derive(Debug, Clone, Copy)]
pub struct VarUsages<'a> {
    start: &'a [u32],
    edges: &'a [SsaVar],
}

impl std::ops::Index<usize> for VarUsages<'_> {
    type Output = [SsaVar];

    #[inline]
    fn index(&self, v: usize) -> &[SsaVar] {
        &self.edges[self.start[v] as usize..self.start[v + 1] as usize]
    }
}
