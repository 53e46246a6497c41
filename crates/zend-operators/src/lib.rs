//! PHP 8.2's compile-time value semantics over [`zend_ir::Literal`].
//!
//! Mirrors the parts of Zend/zend_operators.c that OPcache's optimizer runs while folding
//! constants, and the `zend_optimizer_eval_*` helpers of Zend/Optimizer/zend_optimizer.c.
#![forbid(unsafe_code)]

use zend_ir::{Literal, Opcode, PhpStr};

/// Mirrors zend_optimizer_eval_binary_op.
pub fn eval_binary_op(_opcode: Opcode, _op1: &Literal, _op2: &Literal) -> Option<Literal> {
    None
}

/// Mirrors zend_optimizer_eval_unary_op.
pub fn eval_unary_op(_opcode: Opcode, _op1: &Literal) -> Option<Literal> {
    None
}

/// Mirrors zend_optimizer_eval_cast.
pub fn eval_cast(_type_: u32, _op1: &Literal) -> Option<Literal> {
    None
}

/// Mirrors zend_optimizer_eval_strlen.
pub fn eval_strlen(_op1: &Literal) -> Option<Literal> {
    None
}

/// Mirrors zend_binary_op_produces_error.
pub fn binary_op_produces_error(_opcode: Opcode, _op1: &Literal, _op2: &Literal) -> bool {
    true
}

/// Mirrors zend_unary_op_produces_error.
pub fn unary_op_produces_error(_opcode: Opcode, _op1: &Literal) -> bool {
    true
}

/// Mirrors zend_is_true.
pub fn is_true(_v: &Literal) -> bool {
    false
}

/// Mirrors zend_is_identical.
pub fn is_identical(a: &Literal, b: &Literal) -> bool {
    a == b
}

/// Mirrors zend_compare.
pub fn compare(_a: &Literal, _b: &Literal) -> i32 {
    0
}

/// Mirrors zval_get_long.
pub fn get_long(_v: &Literal) -> i64 {
    0
}

/// Mirrors zval_get_double.
pub fn get_double(_v: &Literal) -> f64 {
    0.0
}

/// Mirrors zval_get_string.
pub fn get_string(_v: &Literal) -> Option<PhpStr> {
    None
}

/// Mirrors ZEND_HANDLE_NUMERIC_STR.
pub fn handle_numeric_str(_s: &[u8]) -> Option<i64> {
    None
}

/// Mirrors _is_numeric_string_ex.
pub fn is_numeric_string(_s: &[u8], _allow_errors: bool) -> Option<Literal> {
    None
}
