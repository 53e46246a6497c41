//! Mirrors `zend_optimizer_nop_removal` (nop_removal.c, pass 10): removes NOPs, after
//! turning into a NOP every `JMP` that only jumps over NOPs (a jump to the next op
//! included), and renumbers jump targets, try/catch offsets and live ranges through
//! [`crate::renumber`].
//!
//! PHP also walks the main script's early-binding chain (`first_early_binding_opline`); the
//! model keeps no such chain (the extension finds `DECLARE_CLASS_DELAYED` ops by scanning),
//! so there is nothing to renumber there.
//!
//! Guarantees: the ops that remain keep their order; every jump lands where it landed
//! before (on the next kept op when its target was a NOP).

use zend_ir::opcode::{ZEND_JMP, ZEND_NOP};
use zend_ir::{OpArray, OpNum, Operand};

use crate::ctx::OptimizerCtx;
use crate::provenance::ChangeKind;
use crate::renumber;

/// `zend_optimizer_nop_removal`.
pub fn run(op_array: &mut OpArray, ctx: &mut OptimizerCtx) {
    let len = op_array.opcodes.len();
    let mut removed = vec![false; len];
    for (i, gone) in removed.iter_mut().enumerate() {
        let op = &op_array.opcodes[i];
        if op.opcode == ZEND_JMP {
            if let Operand::JmpAddr(target) = op.op1 {
                let target = target.index();
                // A forward jump over nothing but NOPs (or to the next op) does nothing.
                if target > i
                    && target <= len
                    && op_array.opcodes[i + 1..target]
                        .iter()
                        .all(|o| o.opcode == ZEND_NOP)
                {
                    ctx.note(op_array, OpNum::from(i), ChangeKind::Removed, || {
                        format!("JMP to op {target} skips only NOPs")
                    });
                    op_array.opcodes[i].opcode = ZEND_NOP;
                }
            }
        }
        *gone = op_array.opcodes[i].opcode == ZEND_NOP;
    }
    if ctx.logging() && removed.contains(&true) {
        let count = removed.iter().filter(|&&r| r).count();
        ctx.note(op_array, OpNum::new(0), ChangeKind::Renumbered, || {
            format!("{count} NOPs removed, ops renumbered")
        });
    }
    renumber::remove_ops(op_array, &removed);
}
