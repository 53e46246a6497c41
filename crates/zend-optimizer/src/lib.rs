//! OPcache's optimizer: the schedule of `zend_optimize_script` and its passes.
//!
//! Mirrors Zend/Optimizer/zend_optimizer.c (the optimization context, the pass bitmask, the
//! per-op_array schedule of `zend_optimize` and the whole-script one of
//! `zend_optimize_script`, the helpers every pass shares) and one module per pass file:
//! pass1.c, pass3.c, optimize_func_calls.c, block_pass.c, optimize_temp_vars_5.c,
//! nop_removal.c, compact_literals.c, compact_vars.c, and zend_opcode.c's live-range
//! computation.
//!
//! The op_arrays are in the model's "pass one" form (what `zend_revert_pass_two` leaves):
//! CONST operands are literal indices, jump targets op numbers. A pass takes one op_array
//! `&mut` and an [`OptimizerCtx`] through which it sees the rest of the script as PHP's pass
//! sees it at that moment (op_arrays optimized before it already changed).
//!
//! What PHP's optimizer reads from the running PHP (persistent constants, internal
//! functions, modules, INI_SYSTEM values) comes from tables of `php -n` ([`tables`]); a
//! caller optimizing for another process describes how it differs in an
//! [`environment::Process`].
//!
//! Guarantees: [`optimize_script`] visits op_arrays in `zend_foreach_op_array` order, runs
//! the passes the optimization level enables in PHP 8.2's order, prints each debug dump at
//! the point PHP prints it, and leaves every op_array consistent (jump targets, live ranges,
//! try/catch offsets, literals and variables in range) — checked after every pass by
//! [`verify`] when [`Options::verify`] is set. A pass that is not implemented yet is not run:
//! [`implemented`] says which, so callers never report an unimplemented stage as identical.

pub mod analysis;
pub mod bench;
mod byte_table;
pub mod ctx;
pub mod environment;
pub mod helpers;
pub mod level;
pub mod live_ranges;
pub mod may_throw;
pub mod php_bugs;
pub mod provenance;
pub mod renumber;
pub mod script;
pub mod tables;
pub mod verify;

pub mod block_pass;
pub mod compact_literals;
pub mod compact_vars;
pub mod dce;
pub mod dfa_pass;
pub mod nop_removal;
pub mod optimize_func_calls;
pub mod optimize_temp_vars_5;
pub mod pass1;
pub mod pass3;
pub mod sccp;
pub mod scdf;

pub use ctx::{OpArrayPath, OptimizerCtx, Workspace};
pub use level::*;
pub use php_bugs::PhpBugs;
pub use provenance::{Change, ChangeKind};
pub use script::{
    after_optimizer_dump_flags, implemented, optimize_script, optimize_script_in, CustomPass,
    Options, Outcome, PassTiming,
};
