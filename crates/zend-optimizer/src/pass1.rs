//! Mirrors `zend_optimizer_pass1` (pass1.c): constant substitution and folding, and the simple local rewrites.
//!
//! Not implemented yet: [`run`] leaves the op_array unchanged.

use zend_ir::OpArray;

use crate::ctx::OptimizerCtx;

/// `zend_optimizer_pass1`.
pub fn run(_op_array: &mut OpArray, _ctx: &mut OptimizerCtx) {}
