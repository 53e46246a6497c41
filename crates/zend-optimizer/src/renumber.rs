//! Shifting ops: removing ops from an op_array and renumbering everything that names an op
//! by its number — jump targets (`zend_optimizer_shift_jump`), `SWITCH`/`MATCH` jump tables,
//! try/catch offsets and live ranges — so passes that delete ops (NOP removal, the block
//! pass, the DFA pass) share one implementation.
//!
//! Mirrors the shift-list technique of nop_removal.c and dfa_pass.c
//! (`zend_ssa_remove_nops`): `shift[i]` counts the removed ops before old op `i`, and an op
//! number `i` becomes `i - shift[i]`. A target that named a removed op lands on the next op
//! that is kept.
//!
//! Guarantees: no panic on malformed input (out-of-range targets are left as they are);
//! with [`ShiftList`] a caller can renumber its own op maps (CFG, SSA, call sites) the same
//! way.

use zend_ir::opcode::*;
use zend_ir::{Literal, OpArray, OpNum, Operand};

/// `ZEND_LAST_CATCH`: a CATCH that is the last of its try, with no jump.
use crate::helpers::ZEND_LAST_CATCH;

/// For each old op number (and one past the last op), how many removed ops precede it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShiftList(Vec<u32>);

impl ShiftList {
    /// From a removal mask: `removed[i]` says old op `i` goes.
    pub fn from_removed(removed: &[bool]) -> ShiftList {
        let mut shift = Vec::with_capacity(removed.len() + 1);
        let mut n = 0;
        for &r in removed {
            shift.push(n);
            n += u32::from(r);
        }
        shift.push(n);
        ShiftList(shift)
    }

    /// How many ops are removed in total.
    pub fn removed(&self) -> u32 {
        self.0.last().copied().unwrap_or(0)
    }

    /// The new number of old op `old` (of the next kept op if `old` was removed); out of
    /// range numbers are returned unchanged.
    pub fn map(&self, old: OpNum) -> OpNum {
        match self.0.get(old.index()) {
            Some(&s) => OpNum::new(old.as_u32() - s),
            None => old,
        }
    }

    fn map_u32(&self, old: u32) -> u32 {
        self.map(OpNum::new(old)).as_u32()
    }
}

/// Removes the ops `removed` marks (its length is the number of ops), moving the others
/// down, and renumbers jump targets, jump tables, try/catch offsets and live ranges.
/// Returns the shift list, or `None` (op_array untouched) when nothing is removed or the
/// mask does not fit.
pub fn remove_ops(op_array: &mut OpArray, removed: &[bool]) -> Option<ShiftList> {
    if removed.len() != op_array.opcodes.len() || !removed.contains(&true) {
        return None;
    }
    let shift = ShiftList::from_removed(removed);
    let mut i = 0;
    op_array.opcodes.retain(|_| {
        let keep = !removed[i];
        i += 1;
        keep
    });
    apply(op_array, &shift);
    Some(shift)
}

/// Renumbers everything in `op_array` that names an op by the old numbering `shift`
/// describes (the ops themselves already moved).
pub fn apply(op_array: &mut OpArray, shift: &ShiftList) {
    for n in 0..op_array.opcodes.len() {
        shift_jump(op_array, n, shift);
    }
    for tc in &mut op_array.try_catch_array {
        tc.try_op = shift.map(tc.try_op);
        tc.catch_op = tc.catch_op.map(|c| shift.map(c));
        if tc.finally_op.is_some() {
            tc.finally_op = tc.finally_op.map(|f| shift.map(f));
            tc.finally_end = tc.finally_end.map(|f| shift.map(f));
        }
    }
    // PHP recomputes live ranges after the passes; shifting them keeps the op_array
    // consistent in between.
    for range in &mut op_array.live_range {
        range.start = shift.map(range.start);
        range.end = shift.map(range.end);
    }
}

fn shift_operand(operand: &mut Operand, shift: &ShiftList) {
    if let Operand::JmpAddr(target) = operand {
        *target = shift.map(*target);
    }
}

/// `zend_optimizer_shift_jump` for op `n`: its targets, by opcode.
pub fn shift_jump(op_array: &mut OpArray, n: usize, shift: &ShiftList) {
    let Some(op) = op_array.opcodes.get_mut(n) else {
        return;
    };
    match op.opcode {
        ZEND_JMP | ZEND_FAST_CALL => shift_operand(&mut op.op1, shift),
        ZEND_JMPZ | ZEND_JMPNZ | ZEND_JMPZ_EX | ZEND_JMPNZ_EX | ZEND_FE_RESET_R
        | ZEND_FE_RESET_RW | ZEND_JMP_SET | ZEND_COALESCE | ZEND_ASSERT_CHECK | ZEND_JMP_NULL => {
            shift_operand(&mut op.op2, shift)
        }
        ZEND_CATCH if op.extended_value & ZEND_LAST_CATCH == 0 => shift_operand(&mut op.op2, shift),
        ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW => op.extended_value = shift.map_u32(op.extended_value),
        ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH => {
            op.extended_value = shift.map_u32(op.extended_value);
            let table = op.op2;
            if let Operand::Const(lit) = table {
                if let Some(Literal::Array(entries)) = op_array.literals.get_mut(lit.index()) {
                    for target in entries.values_mut() {
                        if let Literal::Long(t) = target {
                            if let Ok(old) = u32::try_from(*t) {
                                *t = i64::from(shift.map_u32(old));
                            }
                        }
                    }
                }
            }
        }
        _ => {}
    }
}
