//! The helpers of zend_optimizer.c every pass shares: adding literals, putting a constant
//! into an operand (`zend_optimizer_update_op1_const`, `zend_optimizer_update_op2_const`),
//! replacing a TMP/VAR by a constant in the ops that read it
//! (`zend_optimizer_replace_by_const`), constant and function evaluation at compile time,
//! persistent constants, and `MAKE_NOP`.

use zend_ir::opcode::ZEND_NOP;
use zend_ir::{Literal, LiteralId, Op, OpArray, Operand};

/// `zend_optimizer_add_literal`: appends a literal (its `Z_EXTRA` is 0) and returns its index.
pub fn add_literal(op_array: &mut OpArray, value: Literal) -> LiteralId {
    let id = LiteralId::from(op_array.literals.len());
    op_array.literals.push(value);
    id
}

/// `MAKE_NOP`: the op becomes a NOP with unused operands (its line number stays).
pub fn make_nop(op: &mut Op) {
    op.opcode = ZEND_NOP;
    op.op1 = Operand::Unused(0);
    op.op2 = Operand::Unused(0);
    op.result = Operand::Unused(0);
    op.extended_value = 0;
    op.smart_branch = Default::default();
}
