//! The check that runs after every pass: the op_array is something PHP can run and the
//! optimizer's analyses can read — every operand in range (literals, CVs, TMP/VARs, jump
//! targets, try/catch and live-range offsets), and, where the DFA pass would build SSA, an
//! SSA form that passes the integrity verifier (zend_ssa::verify).

use zend_cfg::{BuildFlags, Cfg, FuncFlags};
use zend_dfg::Dfg;
use zend_ir::{OpArray, OpNum};
use zend_ssa::{NoClasses, Ssa};

/// A problem found after a pass, with the op it concerns.
pub type VerifyError = zend_ir::OpArrayError;

fn fail(op: Option<usize>, message: String) -> Result<(), VerifyError> {
    Err(VerifyError {
        op: op.map(OpNum::from),
        message,
    })
}

/// Checks `op_array` (see the module documentation).
pub fn op_array(op_array: &OpArray) -> Result<(), VerifyError> {
    operands(op_array)?;
    fresh_ssa(op_array)
}

/// The SSA integrity verifier ([`zend_ssa::verify`]) on the SSA form a pass edited, with
/// dominance judged on the CFG's edges as they are now.
///
/// The dominator tree stored in the blocks (`idom`, `children`, `level`) is the one the
/// analysis computed. SCCP and DCE cut edges and `zend_dfa_optimize_jmps` bypasses and
/// removes emptied blocks; PHP leaves the stored tree as it was (zend_ssa_remove_block
/// only unlinks the removed block, whose dominated blocks keep naming it), because nothing
/// after the analyses reads it: the DFA pass's steps, DCE, the type rewrites, the NOP
/// compaction and the passes after them never ask for dominance (neither do ours). So the
/// stored links are stale by design, and the dominance of every use by its definition is
/// checked on a tree recomputed from the current edges: a real dominance violation still
/// fails, a stale link alone does not.
pub fn ssa(op_array: &OpArray, cfg: &Cfg, ssa: &Ssa) -> Result<(), zend_ssa::verify::VerifyError> {
    let mut current = cfg.clone();
    current.compute_dominators_tree();
    zend_ssa::verify(op_array, &current, ssa)
}

/// The operand part of [`op_array`]: every operand, jump target, try/catch and live-range
/// offset in range. This is what holds in the middle of the DFA pass too, where ops the
/// pass removed are NOPs (possibly a NOP last, in a block no edge reaches any more) until
/// `zend_ssa_remove_nops` compacts them.
pub fn operands(op_array: &OpArray) -> Result<(), VerifyError> {
    op_array.check_bounds()
}

/// The SSA part of [`op_array`]: the SSA form the DFA pass would build for `op_array` as it
/// is now passes the integrity verifier.
fn fresh_ssa(op_array: &OpArray) -> Result<(), VerifyError> {
    if !op_array.try_catch_array.is_empty() {
        return Ok(());
    }
    let cfg = match Cfg::build(op_array, BuildFlags::NO_ENTRY_PREDECESSORS) {
        Ok(cfg) => cfg,
        Err(e) => return fail(None, format!("CFG: {e}")),
    };
    if cfg.func_flags.contains(FuncFlags::INDIRECT_VAR_ACCESS) {
        return Ok(());
    }
    let dfg = Dfg::build(op_array, &cfg, BuildFlags::empty());
    // Too big for SSA: PHP builds none either, so there is nothing more to check.
    let Ok(ssa) = Ssa::build(op_array, &cfg, &dfg, &NoClasses, BuildFlags::empty()) else {
        return Ok(());
    };
    zend_ssa::verify(op_array, &cfg, &ssa).or_else(|e| fail(None, format!("SSA: {e}")))
}
