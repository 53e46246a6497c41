//! PHP 8.2's compile-time value semantics over [`zend_ir::Literal`]: what OPcache's optimizer
//! calls when it folds constants.
//!
//! Mirrors the parts of Zend/zend_operators.c that run at compile time (the binary and unary
//! operators of `get_binary_op` / `get_unary_op`, `zend_compare`, `zend_is_identical`,
//! `zend_is_true`, `zval_get_long` / `_double` / `_string`, `_is_numeric_string_ex`), the
//! fold guards `zend_binary_op_produces_error` / `zend_unary_op_produces_error` of
//! zend_compile.c, `ZEND_HANDLE_NUMERIC_STR` of zend_hash.h, and the
//! `zend_optimizer_eval_*` helpers of Zend/Optimizer/zend_optimizer.c.
//!
//! Guarantees: every value an `eval_*` function returns is the one PHP 8.2 (64-bit, default
//! `precision` = 14) computes for the same operation, bit for bit (doubles keep -0.0, the
//! infinities and NaN payloads), and PHP raises no warning, deprecation or exception for it;
//! `None` means "leave it for run time", exactly where OPcache leaves it. The tests check
//! this against the `php` binary over a large matrix of values. Nothing here panics on any
//! input; an `IS_CONSTANT_AST` operand is never folded.
#![forbid(unsafe_code)]

mod compare;
mod convert;
mod numeric;
mod ops;

pub use compare::{compare, is_identical};
pub use convert::{
    double_to_str, dval_to_lval, dval_to_lval_cap, gcvt, gcvt_shortest, get_double, get_long,
    get_string, is_true, PRECISION,
};
pub use numeric::handle_numeric_str;
pub use ops::{
    binary_op_produces_error, eval_binary_op, eval_cast, eval_strlen, eval_unary_op,
    is_op_long_compatible, unary_op_produces_error,
};

use zend_ir::Literal;

/// Mirrors `_is_numeric_string_ex`: the long or double a string holds, after optional
/// leading and trailing whitespace (" \t\n\r\v\f"). With `allow_errors`, a leading number
/// followed by other bytes ("12abc") counts too (PHP would warn "A non-numeric value").
/// Integers beyond the long range are doubles.
pub fn is_numeric_string(s: &[u8], allow_errors: bool) -> Option<Literal> {
    numeric::is_numeric_ex(s, allow_errors).map(|n| n.value.into())
}

/// [`is_numeric_string`] with `_is_numeric_string_ex`'s `trailing_data`: whether bytes
/// other than whitespace follow the number (only possible with `allow_errors`).
pub fn is_numeric_string_ex(s: &[u8], allow_errors: bool) -> Option<(Literal, bool)> {
    numeric::is_numeric_ex(s, allow_errors).map(|n| (n.value.into(), n.trailing))
}
