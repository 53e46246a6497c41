//! Mirrors `zend_optimize_temporary_variables` (optimize_temp_vars_5.c, pass 9): reuses
//! TMP/VAR slots whose values are dead, so the op_array needs fewer of them (`T`).
//!
//! The walk goes backwards: a TMP/VAR's last use (first seen) takes the lowest free slot,
//! and its definition frees that slot again. Ropes take consecutive slots (one per 16 bytes
//! of `zend_string*` pointers), placed just above the highest slot in use. In an op_array
//! with `finally`, a value returned or freed right after a `FAST_CALL` gets a fresh slot,
//! since the finally code may overwrite any slot it could share. A `FAST_CALL` result never
//! frees its slot (the exception handler may set it before the op).
//!
//! Guarantees: the same slot assignment as PHP; TMP/VAR operands outside
//! `last_var..last_var + T` are left alone. The live ranges, which PHP recomputes after
//! all passes, are recomputed here so the op_array stays consistent in between.

use zend_ir::opcode::*;
use zend_ir::{OpArray, OpNum, Operand, VarNum};

use crate::ctx::OptimizerCtx;
use crate::live_ranges;
use crate::provenance::ChangeKind;

use crate::helpers::ZEND_ACC_HAS_FINALLY_BLOCK;

/// The slots a rope of `n` strings takes (`zend_string*` pointers packed into zvals).
fn rope_slots(n: u32) -> usize {
    (n as usize * 8).div_ceil(16)
}

/// The pass's per-slot arrays, kept in the optimization context between op_arrays.
#[derive(Default)]
pub(crate) struct Scratch {
    start_of: Vec<Option<usize>>,
    map: Vec<Option<usize>>,
    taken: Vec<bool>,
}

struct Slots {
    taken: Vec<bool>,
    max: Option<usize>,
}

impl Slots {
    fn is_taken(&self, i: usize) -> bool {
        self.taken.get(i).copied().unwrap_or(false)
    }

    fn set(&mut self, i: usize, taken: bool) {
        if i >= self.taken.len() {
            self.taken.resize(i + 1, false);
        }
        self.taken[i] = taken;
    }

    fn bump_max(&mut self, i: usize) {
        if self.max.map_or(true, |m| i > m) {
            self.max = Some(i);
        }
    }

    /// `GET_AVAILABLE_T`: the lowest free slot, now taken.
    fn take_lowest(&mut self, t: usize) -> usize {
        let i = (0..t).find(|&i| !self.is_taken(i)).unwrap_or(t);
        self.set(i, true);
        self.bump_max(i);
        i
    }
}

/// `zend_optimize_temporary_variables`.
pub fn run(op_array: &mut OpArray, ctx: &mut OptimizerCtx) {
    let t = op_array.T as usize;
    let offset = op_array.last_var();
    let tmp = |operand: Operand| -> Option<usize> {
        match operand {
            Operand::TmpVar(v) | Operand::Var(v) => {
                let n = v.as_u32().checked_sub(offset)? as usize;
                (n < t).then_some(n)
            }
            _ => None,
        }
    };
    let renamed = |operand: Operand, slot: usize| -> Operand {
        let v = VarNum::new(offset + slot as u32);
        match operand {
            Operand::TmpVar(_) => Operand::TmpVar(v),
            Operand::Var(_) => Operand::Var(v),
            other => other,
        }
    };
    let Scratch {
        mut start_of,
        mut map,
        mut taken,
    } = std::mem::take(&mut ctx.state.temp_vars);
    // The first op defining each TMP/VAR.
    start_of.clear();
    start_of.resize(t, None);
    for (n, op) in op_array.opcodes.iter().enumerate().rev() {
        if let Some(v) = tmp(op.result) {
            start_of[v] = Some(n);
        }
    }
    map.clear();
    map.resize(t, None);
    taken.clear();
    taken.resize(t, false);
    let mut slots = Slots { taken, max: None };
    let has_finally = op_array.fn_flags & ZEND_ACC_HAS_FINALLY_BLOCK != 0;
    for n in (0..op_array.opcodes.len()).rev() {
        let op = op_array.opcodes[n];
        if let Some(cur) = tmp(op.op1) {
            let slot = if op.opcode == ZEND_ROPE_END {
                // The rope's slots go right above the highest slot taken so far.
                let num = rope_slots(op.extended_value.saturating_add(1));
                let mut top = slots.max;
                while let Some(v) = top {
                    if slots.is_taken(v) {
                        break;
                    }
                    top = v.checked_sub(1);
                }
                let var = top.map_or(0, |v| v + 1);
                let highest = var + num - 1;
                if slots.max.map_or(true, |m| highest > m) {
                    slots.max = Some(highest);
                }
                map[cur] = Some(var);
                for k in 0..num {
                    slots.set(var + k, true);
                }
                var
            } else {
                match map[cur] {
                    Some(slot) => slot,
                    None => {
                        let slot = if has_finally && relives_fast_call(op_array, n) {
                            let i = slots.max.map_or(0, |m| m + 1);
                            slots.max = Some(i);
                            slots.set(i, true);
                            i
                        } else {
                            slots.take_lowest(t)
                        };
                        map[cur] = Some(slot);
                        slot
                    }
                }
            };
            op_array.opcodes[n].op1 = renamed(op.op1, slot);
        }
        if let Some(cur) = tmp(op.op2) {
            let slot = match map[cur] {
                Some(slot) => slot,
                None => {
                    let slot = slots.take_lowest(t);
                    map[cur] = Some(slot);
                    slot
                }
            };
            op_array.opcodes[n].op2 = renamed(op.op2, slot);
        }
        if let Some(cur) = tmp(op.result) {
            // A result nothing reads gets a slot too (PHP 8.2 frees it again right away,
            // like any first definition: the nullsafe JMP_NULL of an unused chain).
            let slot = match map[cur] {
                Some(slot) => slot,
                None => {
                    let slot = slots.take_lowest(t);
                    map[cur] = Some(slot);
                    slot
                }
            };
            if start_of[cur] == Some(n) {
                if op.opcode != ZEND_FAST_CALL {
                    slots.set(slot, false);
                }
                if op.opcode == ZEND_ROPE_INIT {
                    for k in 1..rope_slots(op.extended_value) {
                        slots.set(slot + k, false);
                    }
                }
            }
            op_array.opcodes[n].result = renamed(op.result, slot);
        }
    }
    let new_t = slots.max.map_or(0, |m| m + 1) as u32;
    if new_t != op_array.T {
        let old = op_array.T;
        ctx.note(op_array, OpNum::new(0), ChangeKind::Renumbered, || {
            format!("TMP/VAR slots reused: {old} -> {new_t}")
        });
    }
    op_array.T = new_t;
    // PHP leaves the live ranges naming the old slots until it recomputes them after the
    // last pass; renaming them keeps the op_array consistent in between at no cost. A range
    // of a value no op names (never the case for what PHP compiled) is recomputed instead.
    let renamed_all = op_array.live_range.iter_mut().all(|range| {
        match range
            .var
            .as_u32()
            .checked_sub(offset)
            .and_then(|n| map.get(n as usize))
        {
            Some(&Some(slot)) => {
                range.var = VarNum::new(offset + slot as u32);
                true
            }
            _ => false,
        }
    });
    if !renamed_all {
        live_ranges::recalc(op_array);
    }
    ctx.state.temp_vars = Scratch {
        start_of,
        map,
        taken: slots.taken,
    };
}

/// Whether the value op `n` (a return or a free) reads must survive a `FAST_CALL` just
/// before it (only frees, return type checks and discarded exceptions in between).
fn relives_fast_call(op_array: &OpArray, n: usize) -> bool {
    let op = &op_array.opcodes[n];
    if !matches!(
        op.opcode,
        ZEND_RETURN | ZEND_GENERATOR_RETURN | ZEND_RETURN_BY_REF | ZEND_FREE | ZEND_FE_FREE
    ) {
        return false;
    }
    for prev in op_array.opcodes[..n].iter().rev() {
        match prev.opcode {
            ZEND_FAST_CALL => return true,
            ZEND_FREE | ZEND_FE_FREE | ZEND_VERIFY_RETURN_TYPE | ZEND_DISCARD_EXCEPTION => {}
            _ => return false,
        }
    }
    false
}
