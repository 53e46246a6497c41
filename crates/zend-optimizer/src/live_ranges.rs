//! Mirrors `zend_recalc_live_ranges` / `zend_calc_live_ranges` (zend_opcode.c): the live
//! ranges of TMP/VAR values that must be freed when an exception unwinds through them,
//! recomputed after the passes moved or removed ops.
//!
//! Not implemented yet: [`recalc`] leaves the live ranges as they are.

use zend_ir::OpArray;

/// `zend_recalc_live_ranges(op_array, NULL)`.
pub fn recalc(_op_array: &mut OpArray) {}
