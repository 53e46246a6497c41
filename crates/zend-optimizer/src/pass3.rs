//! Mirrors `zend_optimizer_pass3` (pass3.c): jump optimisation.
//!
//! Not implemented yet: [`run`] leaves the op_array unchanged.

use zend_ir::OpArray;

use crate::ctx::OptimizerCtx;

/// `zend_optimizer_pass3`.
pub fn run(_op_array: &mut OpArray, _ctx: &mut OptimizerCtx) {}
