//! The control flow graph of a PHP 8.2 op_array, as Zend/Optimizer/zend_cfg.c builds it.
//!
//! Mirrors `zend_build_cfg` (basic blocks with PHP's `ZEND_BB_*` flags, successors in PHP's
//! order, reachability through the exception table, unreachable loop-variable frees),
//! `zend_cfg_build_predecessors`, `zend_cfg_compute_dominators_tree` (idom, level, children
//! in block order) and `zend_cfg_identify_loops` (loop headers, irreducible loops), plus
//! the `dfa cfg` and `DOMINATORS-TREE` dump printers. The edge and dominator-tree
//! mutators (`remove_predecessor_at`, `remove_successor`, `clear_edges`,
//! `unlink_from_dominator_tree`) are the CFG halves of zend_ssa.c's block removal; use
//! them through zend-ssa's edit module, which keeps the phis in step.
//!
//! Guarantees: for every op_array PHP produces, the blocks, edges, flags, dominator tree
//! and loop headers are PHP's own, so the dumps are byte-identical; a malformed op_array
//! (jump out of range, variable or literal out of range, missing OP_DATA) is a
//! [`CfgError`] naming the function and the op, never a panic; nothing recurses to a depth
//! that grows with the input; dominance queries ([`Cfg::dominates`]) read the blocks'
//! `idom`/`level` as they are, so an edit never leaves a stale answer behind (for many
//! queries on a fixed tree, [`dom::DomIntervals`] is an explicit O(1) snapshot).

pub mod bitset;
pub mod cfg;
pub mod dom;
pub mod dump;
pub mod reuse;
pub mod scc;
pub mod synthetic;

pub use cfg::{
    check_operands, BasicBlock, BlockFlags, BuildFlags, Cfg, CfgBuffers, CfgError, FuncFlags,
    Problem,
};

use std::fmt;

zend_ir::index_type!(
    /// A basic block number: index into [`Cfg::blocks`].
    BlockId, "BB"
);

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BB{}", self.as_u32())
    }
}
