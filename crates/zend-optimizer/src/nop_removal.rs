//! Mirrors `zend_optimizer_nop_removal` (nop_removal.c): NOP removal with jump, try/catch and live-range fix-up.
//!
//! Not implemented yet: [`run`] leaves the op_array unchanged.

use zend_ir::OpArray;

use crate::ctx::OptimizerCtx;

/// `zend_optimizer_nop_removal`.
pub fn run(_op_array: &mut OpArray, _ctx: &mut OptimizerCtx) {}
