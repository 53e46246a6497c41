//! Mirrors optimize_func_calls.c (pass 4: call optimisation) and `zend_adjust_fcall_stack_size`
//! of zend_optimizer.c (pass 12).
//!
//! Not implemented yet: [`run`] and [`adjust_fcall_stack_size`] leave the op_array unchanged.

use zend_ir::OpArray;

use crate::ctx::OptimizerCtx;

/// `zend_optimize_func_calls`.
pub fn run(_op_array: &mut OpArray, _ctx: &mut OptimizerCtx) {}

/// `zend_adjust_fcall_stack_size`: each INIT_FCALL of a function of this script reserves the
/// stack the callee needs (`zend_vm_calc_used_stack`) with its final variable counts.
pub fn adjust_fcall_stack_size(_op_array: &mut OpArray, _ctx: &mut OptimizerCtx) {}
