//! Mirrors `zend_optimize_temporary_variables` (optimize_temp_vars_5.c): TMP/VAR slot reuse.
//!
//! Not implemented yet: [`run`] leaves the op_array unchanged.

use zend_ir::OpArray;

use crate::ctx::OptimizerCtx;

/// `zend_optimize_temporary_variables`.
pub fn run(_op_array: &mut OpArray, _ctx: &mut OptimizerCtx) {}
