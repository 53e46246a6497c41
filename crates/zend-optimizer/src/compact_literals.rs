//! Mirrors `zend_optimizer_compact_literals` (compact_literals.c): literal merging and run-time cache slot assignment.
//!
//! Not implemented yet: [`run`] leaves the op_array unchanged.

use zend_ir::OpArray;

use crate::ctx::OptimizerCtx;

/// `zend_optimizer_compact_literals`.
pub fn run(_op_array: &mut OpArray, _ctx: &mut OptimizerCtx) {}
