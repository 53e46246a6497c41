//! Two textbook SSA constructions for PHP 8.2 op_arrays, independent of PHP's own builder
//! (`zend-ssa`), and a three-way cross-check of them against PHP-style SSA.
//!
//! - [`cytron`]: Cytron, Ferrante, Rosen, Wegman and Zadeck (1991). Dominance frontiers
//!   from the dominator tree, phi placement on iterated dominance frontiers in the
//!   [`cytron::Pruning::Minimal`], [`cytron::Pruning::SemiPruned`] and
//!   [`cytron::Pruning::Pruned`] variants, renaming along the dominator tree with an
//!   explicit stack.
//! - [`braun`]: Braun, Buchwald, Hack, Leißa, Mallon and Zwinkau (2013), "Simple and
//!   Efficient Construction of Static Single Assignment Form": `readVariable` /
//!   `writeVariable` per block, sealed and filled blocks, incomplete phis, trivial-phi
//!   removal (a worklist, no recursion). [`braun::Builder`] is the incremental API a front
//!   end drives block by block; [`braun::build`] drives it over an op_array's CFG.
//! - [`compare`]: pruned Cytron, Braun after trivial-phi removal and PHP-style SSA
//!   (`zend_ssa::Ssa`, pis mapped back to their sources) must give every use the same
//!   reaching definition and have the same phis up to renaming.
//!
//! Which operand of which op uses or defines a variable is *not* re-implemented here: it is
//! `zend_dfg::add_use_def_op`, the rule PHP's liveness and SSA use ([`op_effects`]). One
//! rule of PHP's renaming is modelled too: an `FE_FETCH_R/RW` into a CV does not assign
//! the CV on its exit edge (successor 0), so on that edge the value from before the fetch
//! flows on ([`OpEffects::kept_on_exit`]).
//!
//! Values are named canonically ([`Value`]): a definition is (op, variable), a phi is
//! (block, variable), so "up to renaming" comparisons are plain equality. Nothing recurses
//! to a depth that grows with the input.

pub mod braun;
pub mod compare;
pub mod cytron;

use std::fmt;
use zend_cfg::bitset;
use zend_cfg::{BlockId, BuildFlags, Cfg};
use zend_ir::opcode::*;
use zend_ir::{OpArray, Operand};

/// A phi of one construction: index into [`SsaForm::phis`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct PhiId(pub u32);

/// An SSA value, named independently of any numbering.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Value {
    /// No definition reaches (a TMP/VAR read on some path before it is written).
    Undef,
    /// The value a CV has on entry (argument or undefined), or in a block nothing reaches
    /// but the exception table (catch/finally).
    Entry(u32),
    /// Variable `var` as op `op` defines it (an OP_DATA's definition belongs to the op
    /// before it).
    Def { op: u32, var: u32 },
    /// A phi of the construction that produced the value.
    Phi(PhiId),
}

/// A phi: `var = phi(sources...)` at the start of `block`, one source per predecessor
/// in [`Cfg::predecessors`] order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhiNode {
    pub block: BlockId,
    pub var: u32,
    pub sources: Vec<Value>,
}

/// A use of variable `var` by op `op` and the value reaching it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Use {
    pub op: u32,
    pub var: u32,
    pub value: Value,
}

/// The result of a construction: phis and the reaching value of every use, uses in op
/// order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SsaForm {
    pub phis: Vec<PhiNode>,
    pub uses: Vec<Use>,
}

impl SsaForm {
    /// The phi a value names, if it is one.
    pub fn phi(&self, v: Value) -> Option<&PhiNode> {
        match v {
            Value::Phi(p) => self.phis.get(p.0 as usize),
            _ => None,
        }
    }
}

/// Up to four variables (an op has op1, op2, result and its OP_DATA's op1), inline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vars {
    len: u8,
    items: [u32; 4],
}

impl Vars {
    fn push(&mut self, v: u32) {
        self.items[self.len as usize] = v;
        self.len += 1;
    }
}

impl std::ops::Deref for Vars {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        &self.items[..self.len as usize]
    }
}

/// What one op (with its OP_DATA) uses and defines, by `zend_dfg::add_use_def_op`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpEffects {
    pub op: u32,
    /// Variables read (before any definition of the op takes effect), ascending.
    pub uses: Vars,
    /// Variables written, ascending.
    pub defs: Vars,
    /// `FE_FETCH_R/RW` into a CV: that CV keeps its previous value on the exit edge
    /// (successor 0), as PHP's renaming has it.
    pub kept_on_exit: Option<u32>,
}

/// The effects of every op of block `b` except OP_DATAs (which belong to the op before).
/// `scratch_use`/`scratch_def` are all-zero bit sets over `last_var + T` variables, and are
/// left all-zero.
pub fn block_effects(
    op_array: &OpArray,
    cfg: &Cfg,
    b: BlockId,
    scratch_use: &mut [u64],
    scratch_def: &mut [u64],
    out: &mut Vec<OpEffects>,
) {
    for k in cfg.blocks[b.index()].ops() {
        if op_array.opcodes[k as usize].opcode != ZEND_OP_DATA {
            out.push(op_effects(op_array, k as usize, scratch_use, scratch_def));
        }
    }
}

/// The effects of op `k` (see [`block_effects`] for the scratch sets).
pub fn op_effects(
    op_array: &OpArray,
    k: usize,
    scratch_use: &mut [u64],
    scratch_def: &mut [u64],
) -> OpEffects {
    zend_dfg::add_use_def_op(op_array, k, BuildFlags::empty(), scratch_use, scratch_def);
    // Only these operands can be touched: clear just them (the sets may be huge).
    let opline = &op_array.opcodes[k];
    let mut candidates = [u32::MAX; 4];
    let operands = [
        Some(opline.op1),
        Some(opline.op2),
        Some(opline.result),
        op_array.opcodes.get(k + 1).map(|n| n.op1),
    ];
    for (c, o) in candidates.iter_mut().zip(operands) {
        if let Some(v) = o.and_then(|o| o.var()) {
            *c = v.as_u32();
        }
    }
    candidates.sort_unstable();
    let mut effects = OpEffects {
        op: k as u32,
        ..Default::default()
    };
    for (n, &v) in candidates.iter().enumerate() {
        if v == u32::MAX || (n > 0 && candidates[n - 1] == v) {
            continue;
        }
        let i = v as usize;
        if bitset::contains(scratch_use, i) {
            effects.uses.push(v);
            scratch_use[i / 64] &= !(1u64 << (i % 64));
        }
        if bitset::contains(scratch_def, i) {
            effects.defs.push(v);
            scratch_def[i / 64] &= !(1u64 << (i % 64));
        }
    }
    if matches!(opline.opcode, ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW) {
        if let Operand::Cv(v) = opline.op2 {
            effects.kept_on_exit = Some(v.as_u32());
        }
    }
    effects
}

/// The value a variable has where no definition reaches: CVs their entry value, TMP/VARs
/// none.
pub fn entry_value(op_array: &OpArray, var: u32) -> Value {
    if var < op_array.last_var() {
        Value::Entry(var)
    } else {
        Value::Undef
    }
}

/// `$name` for a CV, `T<n>` for a TMP/VAR.
pub fn var_name(op_array: &OpArray, var: u32) -> String {
    match op_array.vars.get(var as usize) {
        Some(name) => format!("${name}"),
        None => format!("T{var}"),
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Undef => write!(f, "undef"),
            Value::Entry(v) => write!(f, "entry(X{v})"),
            Value::Def { op, var } => write!(f, "def(op {op}, X{var})"),
            Value::Phi(p) => write!(f, "phi#{}", p.0),
        }
    }
}
