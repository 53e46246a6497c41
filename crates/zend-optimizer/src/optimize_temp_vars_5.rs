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

use zend_cfg::bitset;
use zend_ir::opcode::*;
use zend_ir::{OpArray, OpNum, Operand, VarNum};

use crate::ctx::OptimizerCtx;
use crate::live_ranges;
use crate::provenance::ChangeKind;

use crate::helpers::{Temporaries, ZEND_ACC_HAS_FINALLY_BLOCK};

/// The slots a rope of `n` strings takes (`zend_string*` pointers packed into zvals).
fn rope_slots(n: u32) -> usize {
    (n as usize * 8).div_ceil(16)
}

/// The pass's arrays, kept in the optimization context between op_arrays.
#[derive(Default)]
pub(crate) struct Scratch {
    temps: Vec<Temp>,
    taken: Vec<u64>,
}

/// What the walk knows of one TMP/VAR: the two are read together.
#[derive(Clone, Copy)]
struct Temp {
    /// The first op defining it, as a raw op number (`NONE`: none): the walk compares it
    /// with its own counter, no index type to build per op.
    start: u32,
    /// Its slot (`NONE`: none yet; PHP's `valid_T` and `map_T`).
    slot: u32,
}

/// The slots in use, one bit each (PHP's `taken_T` bitset): the lowest free slot is found
/// a word at a time. Ropes and `finally` values may take slots at or above `T`, so the set
/// grows on demand.
struct Slots<'a> {
    taken: &'a mut Vec<u64>,
    /// One past the highest slot ever taken (PHP's `max + 1`): the new `T`.
    top: usize,
}

impl Slots<'_> {
    fn is_taken(&self, i: usize) -> bool {
        bitset::contains(self.taken, i)
    }

    #[inline]
    fn take(&mut self, i: usize) {
        match self.taken.get_mut(i / 64) {
            Some(w) => *w |= 1 << (i % 64),
            None => self.grow_and_take(i),
        }
    }

    #[cold]
    fn grow_and_take(&mut self, i: usize) {
        self.taken.resize(i / 64 + 1, 0);
        bitset::insert(self.taken, i);
    }

    fn free(&mut self, i: usize) {
        if i / 64 < self.taken.len() {
            bitset::remove(self.taken, i);
        }
    }

    fn bump_max(&mut self, i: usize) {
        self.top = self.top.max(i + 1);
    }

    /// `GET_AVAILABLE_T`: the lowest free slot below `t` (`t` itself when all are taken),
    /// now taken.
    #[inline]
    fn take_lowest(&mut self, t: usize) -> usize {
        // Mostly fewer than 64 values are live at once: the first word has a free slot.
        if let Some(w) = self.taken.first_mut() {
            if *w != u64::MAX {
                let i = (w.trailing_ones() as usize).min(t);
                *w |= 1 << i;
                self.bump_max(i);
                return i;
            }
        }
        self.take_lowest_past_first_word(t)
    }

    #[cold]
    fn take_lowest_past_first_word(&mut self, t: usize) -> usize {
        let mut k = 0;
        let i = loop {
            match self.taken.get(k) {
                Some(&u64::MAX) => k += 1,
                Some(&w) => break k * 64 + w.trailing_ones() as usize,
                None => break k * 64,
            }
        }
        .min(t);
        self.take(i);
        self.bump_max(i);
        i
    }
}

/// No op defines the TMP/VAR, or it has no slot yet.
const NONE: u32 = u32::MAX;

/// `zend_optimize_temporary_variables`.
pub fn run(op_array: &mut OpArray, ctx: &mut OptimizerCtx) {
    let t = op_array.T as usize;
    let offset = op_array.last_var();
    let of = Temporaries::of(op_array);
    // Borrowed in place: the context is wanted again only for the change log, at the end.
    let Scratch { temps, taken } = &mut ctx.state.work.temp_vars;
    temps.clear();
    temps.resize(
        t,
        Temp {
            start: NONE,
            slot: NONE,
        },
    );
    // A slice: its pointer and length stay in registers, where the vector's would be
    // reloaded after each store of the walk.
    let temps = &mut temps[..];
    for (n, op) in op_array.opcodes.iter().enumerate().rev() {
        if let Some(v) = of.of_operand(op.result) {
            temps[v].start = n as u32;
        }
    }
    taken.clear();
    taken.resize(bitset::words_for(t), 0);
    let mut slots = Slots { taken, top: 0 };
    // In an op_array with `finally`, the reads that must outlive a `FAST_CALL` (rare: found
    // before the walk, which then edits ops in place).
    let mut relives = Vec::new();
    if op_array.fn_flags & ZEND_ACC_HAS_FINALLY_BLOCK != 0 {
        relives.resize(bitset::words_for(op_array.opcodes.len()), 0);
        for n in 0..op_array.opcodes.len() {
            if relives_fast_call(op_array, n) {
                bitset::insert(&mut relives, n);
            }
        }
    }
    // By index, each operand read where it is tested (most ops name no TMP/VAR at all):
    // the slice's pointer and length stay in registers (an iterator over it cost more).
    // A TMP/VAR operand is renamed by rewriting its number in place (the operand keeps its
    // kind): no second match to rebuild it.
    let ops = &mut op_array.opcodes[..];
    for n in (0..ops.len()).rev() {
        let op = &mut ops[n];
        if let Operand::TmpVar(v) | Operand::Var(v) = &mut op.op1 {
            if let Some(cur) = of.number(*v) {
                let slot = if op.opcode == ZEND_ROPE_END {
                    place_rope(&mut slots, &mut temps[cur], op.extended_value)
                } else if temps[cur].slot != NONE {
                    temps[cur].slot
                } else {
                    let slot = if bitset::contains(&relives, n) {
                        let i = slots.top;
                        slots.top = i + 1;
                        slots.take(i);
                        i
                    } else {
                        slots.take_lowest(t)
                    } as u32;
                    temps[cur].slot = slot;
                    slot
                };
                *v = VarNum::new(offset + slot);
            }
        }
        if let Operand::TmpVar(v) | Operand::Var(v) = &mut op.op2 {
            if let Some(cur) = of.number(*v) {
                let slot = slot_of(&mut temps[cur], &mut slots, t);
                *v = VarNum::new(offset + slot);
            }
        }
        if let Operand::TmpVar(v) | Operand::Var(v) = &mut op.result {
            if let Some(cur) = of.number(*v) {
                // A result nothing reads gets a slot too (PHP 8.2 frees it again right
                // away, like any first definition: the nullsafe JMP_NULL of an unused
                // chain).
                let temp = &mut temps[cur];
                let slot = slot_of(temp, &mut slots, t);
                if temp.start == n as u32 {
                    if op.opcode != ZEND_FAST_CALL {
                        slots.free(slot as usize);
                    }
                    if op.opcode == ZEND_ROPE_INIT {
                        for k in 1..rope_slots(op.extended_value) {
                            slots.free(slot as usize + k);
                        }
                    }
                }
                *v = VarNum::new(offset + slot);
            }
        }
    }
    let new_t = slots.top as u32;
    let old_t = op_array.T;
    op_array.T = new_t;
    // PHP leaves the live ranges naming the old slots until it recomputes them after the
    // last pass; renaming them keeps the op_array consistent in between at no cost. A range
    // of a value no op names (never the case for what PHP compiled) is recomputed instead.
    let renamed_all = op_array.live_range.iter_mut().all(|range| {
        match range
            .var
            .as_u32()
            .checked_sub(offset)
            .and_then(|n| temps.get(n as usize))
        {
            Some(&Temp { slot, .. }) if slot != NONE => {
                range.var = VarNum::new(offset + slot);
                true
            }
            _ => false,
        }
    });
    if !renamed_all {
        live_ranges::recalc(op_array);
    }
    if new_t != old_t {
        ctx.note(op_array, OpNum::new(0), ChangeKind::Renumbered, || {
            format!("TMP/VAR slots reused: {old_t} -> {new_t}")
        });
    }
}

/// The slot of a TMP/VAR: the one it has, or else the lowest free one, now its own.
#[inline(always)]
fn slot_of(temp: &mut Temp, slots: &mut Slots, t: usize) -> u32 {
    if temp.slot == NONE {
        temp.slot = slots.take_lowest(t) as u32;
    }
    temp.slot
}

/// The slots of the rope a `ROPE_END` (of `extended_value + 1` strings) reads as TMP
/// `temp`: right above the highest slot taken so far. Returns the first.
fn place_rope(slots: &mut Slots, temp: &mut Temp, extended_value: u32) -> u32 {
    let num = rope_slots(extended_value.saturating_add(1));
    let mut top = slots.top.checked_sub(1);
    while let Some(v) = top {
        if slots.is_taken(v) {
            break;
        }
        top = v.checked_sub(1);
    }
    let var = top.map_or(0, |v| v + 1);
    let highest = var + num - 1;
    slots.bump_max(highest);
    temp.slot = var as u32;
    for k in 0..num {
        slots.take(var + k);
    }
    var as u32
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
