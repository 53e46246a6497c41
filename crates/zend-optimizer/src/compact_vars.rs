//! Mirrors `zend_optimizer_compact_vars` (compact_vars.c): removal of unused CV and TMP slots.
//!
//! Not implemented yet: [`run`] leaves the op_array unchanged.

use zend_ir::OpArray;

use crate::ctx::OptimizerCtx;

/// `zend_optimizer_compact_vars`.
pub fn run(_op_array: &mut OpArray, _ctx: &mut OptimizerCtx) {}
