//! Mirrors `zend_optimize_cfg` (block_pass.c): the CFG-based pass: block-local propagation, jump threading, unreachable code, block reordering.
//!
//! Not implemented yet: [`run`] leaves the op_array unchanged.

use zend_ir::OpArray;

use crate::ctx::OptimizerCtx;

/// `zend_optimize_cfg`.
pub fn run(_op_array: &mut OpArray, _ctx: &mut OptimizerCtx) {}
