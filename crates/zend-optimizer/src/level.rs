//! The optimization level: OPcache's pass bitmask (`ZEND_OPTIMIZER_PASS_*` in
//! zend_optimizer.h), and the debug bits that choose which stages are dumped.

/// CSE, STRING and constant folding (pass1.c).
pub const PASS_1: u32 = 1 << 0;
/// Merged into pass 1 since PHP 7.x; the bit still exists.
pub const PASS_2: u32 = 1 << 1;
/// Jump optimisation (pass3.c).
pub const PASS_3: u32 = 1 << 2;
/// Call optimisation (optimize_func_calls.c).
pub const PASS_4: u32 = 1 << 3;
/// CFG-based optimisation (block_pass.c).
pub const PASS_5: u32 = 1 << 4;
/// DFA-based optimisation (dfa_pass.c).
pub const PASS_6: u32 = 1 << 5;
/// Call-graph optimisation: with PASS_6, the DFA pass runs over the whole script.
pub const PASS_7: u32 = 1 << 6;
/// SCCP (sccp.c), inside the DFA pass.
pub const PASS_8: u32 = 1 << 7;
/// TMP variable reuse (optimize_temp_vars_5.c).
pub const PASS_9: u32 = 1 << 8;
/// NOP removal (nop_removal.c).
pub const PASS_10: u32 = 1 << 9;
/// Literal merging (compact_literals.c).
pub const PASS_11: u32 = 1 << 10;
/// Call stack size adjustment (`zend_adjust_fcall_stack_size`).
pub const PASS_12: u32 = 1 << 11;
/// Unused variable removal (compact_vars.c).
pub const PASS_13: u32 = 1 << 12;
/// DCE (dce.c), inside the DFA pass.
pub const PASS_14: u32 = 1 << 13;
/// Constant collection (not used by PHP 8.2's schedule).
pub const PASS_15: u32 = 1 << 14;
/// Inline functions (not used by PHP 8.2's schedule).
pub const PASS_16: u32 = 1 << 15;

/// `opcache.optimization_level`'s default.
pub const DEFAULT_OPTIMIZATION_LEVEL: u32 = 0x7FFE_BFFF;

/// The default level without the SSA passes (PASS_6, PASS_7, PASS_8, PASS_14): the classic
/// pipeline alone.
pub const CLASSIC_OPTIMIZATION_LEVEL: u32 = 0x7FFE_9F1F;
