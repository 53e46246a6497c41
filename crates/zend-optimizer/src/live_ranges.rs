//! Mirrors `zend_calc_live_ranges` / `zend_recalc_live_ranges` (zend_opcode.c): the live
//! ranges of TMP/VAR values that must be freed when an exception unwinds through them,
//! computed from the ops alone, after the passes moved, removed or renumbered ops.
//!
//! The walk goes backwards: the last use of each TMP/VAR opens a pending range that its
//! definition closes. What a range is depends on the defining op: `FE_RESET_*` gives a loop
//! variable (`ZEND_LIVE_LOOP`), `BEGIN_SILENCE` the saved error reporting level
//! (`ZEND_LIVE_SILENCE`), `ROPE_INIT` a rope whose range includes its definition
//! (`ZEND_LIVE_ROPE`), `NEW` an object that is only `ZEND_LIVE_NEW` until its constructor
//! call returns, `COPY_TMP` a value live on two disjoint stretches (before the use in the
//! "null" branch of `??`, and from the start of the other branch to its `FREE`); booleans,
//! classes and `FAST_CALL` results need no freeing and get no range.
//!
//! Guarantees: for an op_array PHP compiled, [`calc`] gives exactly the ranges `pass_two`
//! stored (same order, kinds and bounds); malformed input (a TMP/VAR outside
//! `last_var..last_var + T`) never panics, the operand is passed over.

use zend_ir::opcode::*;
use zend_ir::{
    LiveRange, Op, OpArray, OpNum, VarNum, ZEND_LIVE_LOOP, ZEND_LIVE_NEW, ZEND_LIVE_ROPE,
    ZEND_LIVE_SILENCE, ZEND_LIVE_TMPVAR,
};

use crate::helpers::Temporaries;

/// `zend_needs_live_range_cb`: given the op that defines a TMP/VAR, whether it needs a
/// range at all (the DFA pass answers from type inference: a value that can never be
/// refcounted needs none).
pub type NeedsLiveRange<'a> = &'a dyn Fn(&OpArray, OpNum) -> bool;

/// `zend_recalc_live_ranges(op_array, NULL)`: replaces the op_array's live ranges by the
/// ones its ops imply.
pub fn recalc(op_array: &mut OpArray) {
    recalc_in_place(op_array, None);
}

/// `zend_recalc_live_ranges(op_array, needs_live_range)`.
pub fn recalc_with(op_array: &mut OpArray, needs_live_range: NeedsLiveRange) {
    recalc_in_place(op_array, Some(needs_live_range));
}

/// The new ranges go into the old array's memory.
fn recalc_in_place(op_array: &mut OpArray, needs_live_range: Option<NeedsLiveRange>) {
    let mut out = std::mem::take(&mut op_array.live_range);
    out.clear();
    calc_into(op_array, needs_live_range, &mut out);
    op_array.live_range = out;
}

/// Opcodes that only add to a value defined earlier (their result is not a new definition).
fn is_fake_def(op: &Op) -> bool {
    matches!(
        op.opcode,
        ZEND_ROPE_ADD | ZEND_ADD_ARRAY_ELEMENT | ZEND_ADD_ARRAY_UNPACK
    )
}

/// Opcodes that read op1 without consuming it: something later frees it, so that later op
/// is its last use.
fn keeps_op1_alive(op: &Op) -> bool {
    matches!(
        op.opcode,
        ZEND_CASE
            | ZEND_CASE_STRICT
            | ZEND_SWITCH_LONG
            | ZEND_SWITCH_STRING
            | ZEND_MATCH
            | ZEND_FETCH_LIST_R
            | ZEND_FETCH_LIST_W
            | ZEND_COPY_TMP
    )
}

/// `zend_calc_live_ranges`: the live ranges of `op_array`, sorted by start as PHP sorts
/// them.
pub fn calc(op_array: &OpArray, needs_live_range: Option<NeedsLiveRange>) -> Vec<LiveRange> {
    let mut out = Vec::new();
    calc_into(op_array, needs_live_range, &mut out);
    out
}

/// [`calc_into`]'s last use of a temporary its backward walk has not seen used (yet).
const NO_USE: u32 = u32::MAX;

/// [`calc`], appending to `out` (empty).
fn calc_into(
    op_array: &OpArray,
    needs_live_range: Option<NeedsLiveRange>,
    out: &mut Vec<LiveRange>,
) {
    let ops = &op_array.opcodes;
    // Most op_arrays have few temporaries: their last uses fit on the stack.
    let t = op_array.T as usize;
    // A plain sentinel rather than an Option: the array is filled on every call.
    let mut on_stack = [NO_USE; 64];
    let mut on_heap = Vec::new();
    let last_use: &mut [u32] = if t <= on_stack.len() {
        &mut on_stack[..t]
    } else {
        on_heap.resize(t, NO_USE);
        &mut on_heap
    };
    let temps = Temporaries::of(op_array);
    for opnum in (0..ops.len()).rev() {
        let op = &ops[opnum];
        let opnum = opnum as u32;
        if let Some(var) = temps.of_operand(op.result) {
            if !is_fake_def(op) {
                // A def without a use: a genuinely unused result, or one of several defs
                // of the same value (JMPZ_EX and QM_ASSIGN), where the last one opens the
                // range.
                close(op_array, last_use, var, opnum, needs_live_range, out);
            }
        }
        if let Some(var) = temps.of_operand(op.op1) {
            if last_use[var] == NO_USE && !keeps_op1_alive(op) {
                // OP_DATA belongs to the op before it.
                let at = if op.opcode == ZEND_OP_DATA {
                    opnum.saturating_sub(1)
                } else {
                    opnum
                };
                last_use[var] = at;
            }
        }
        if let Some(var) = temps.of_operand(op.op2) {
            if matches!(op.opcode, ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW) {
                // FE_FETCH's op2 is where it stores the value: a definition.
                close(op_array, last_use, var, opnum, needs_live_range, out);
            } else if last_use[var] == NO_USE {
                last_use[var] = opnum;
            }
        }
    }
    // Emitted from the end: mostly reversed order already.
    out.reverse();
    if let Some(first_unsorted) = out.windows(2).position(|w| w[0].start > w[1].start) {
        zend_sort_by_start(&mut out[first_unsorted..]);
    }
}

/// A definition of TMP/VAR `var` at `opnum`, met walking backwards: the range from it to
/// the last use found since, if any and not the very next op, is emitted; earlier ops
/// begin another one.
#[inline(always)]
fn close(
    op_array: &OpArray,
    last_use: &mut [u32],
    var: usize,
    opnum: u32,
    needs_live_range: Option<NeedsLiveRange>,
    out: &mut Vec<LiveRange>,
) {
    let used = std::mem::replace(&mut last_use[var], NO_USE);
    if used != NO_USE && opnum + 1 != used {
        emit(op_array, var, opnum, used, needs_live_range, out);
    }
}

fn push(op_array: &OpArray, out: &mut Vec<LiveRange>, var: usize, kind: u32, start: u32, end: u32) {
    out.push(LiveRange {
        var: VarNum::new(op_array.last_var() + var as u32),
        kind,
        start: OpNum::new(start),
        end: OpNum::new(end),
    });
}

/// `emit_live_range`: the range(s) of TMP/VAR `var` defined at `start` and last used at
/// `end`, by what defines it.
fn emit(
    op_array: &OpArray,
    var: usize,
    start: u32,
    end: u32,
    needs_live_range: Option<NeedsLiveRange>,
    out: &mut Vec<LiveRange>,
) {
    let ops = &op_array.opcodes;
    let def = start;
    let needed = || needs_live_range.map_or(true, |f| f(op_array, OpNum::new(def)));
    let mut start = start;
    let kind;
    match ops[def as usize].opcode {
        // Never a first definition; booleans, classes and FAST_CALL results need no
        // freeing.
        ZEND_ADD_ARRAY_ELEMENT
        | ZEND_ADD_ARRAY_UNPACK
        | ZEND_ROPE_ADD
        | ZEND_JMPZ_EX
        | ZEND_JMPNZ_EX
        | ZEND_BOOL
        | ZEND_BOOL_NOT
        | ZEND_FETCH_CLASS
        | ZEND_DECLARE_ANON_CLASS
        | ZEND_FAST_CALL => return,
        ZEND_BEGIN_SILENCE => {
            kind = ZEND_LIVE_SILENCE;
            start += 1;
        }
        // A rope's range includes the op that starts it.
        ZEND_ROPE_INIT => kind = ZEND_LIVE_ROPE,
        ZEND_FE_RESET_R | ZEND_FE_RESET_RW => {
            kind = ZEND_LIVE_LOOP;
            start += 1;
        }
        ZEND_COPY_TMP => {
            if !needed() {
                return;
            }
            kind = ZEND_LIVE_TMPVAR;
            if ops[end as usize].opcode != ZEND_FREE {
                // One branch of the `??` was optimized away: an ordinary range.
                start += 1;
            } else {
                // From the start of the non-null branch (its leading FREEs) to the FREE...
                let mut block_start = end;
                while block_start > def + 1 && ops[block_start as usize - 1].opcode == ZEND_FREE {
                    block_start -= 1;
                }
                if block_start != end {
                    push(op_array, out, var, kind, block_start, end);
                }
                // ...and from the definition to its use in the null branch.
                let temps = Temporaries::of(op_array);
                let mut use_at = end;
                loop {
                    use_at -= 1;
                    let op = &ops[use_at as usize];
                    if use_at == def
                        || (op.opcode == ZEND_COPY_TMP && temps.of_operand(op.result) == Some(var))
                    {
                        // The use was optimized away: we reached the definition.
                        push(op_array, out, var, kind, def + 1, end);
                        return;
                    }
                    if temps.of_operand(op.op1) == Some(var)
                        || temps.of_operand(op.op2) == Some(var)
                    {
                        break;
                    }
                }
                push(op_array, out, var, kind, def + 1, use_at);
                return;
            }
        }
        opcode => {
            if opcode == ZEND_NEW {
                // The object is fully built only once its constructor call returns: until
                // then it is ZEND_LIVE_NEW, then an ordinary value.
                let orig_start = start;
                let mut at = def;
                let mut level = 0u32;
                while at + 1 < end {
                    at += 1;
                    start += 1;
                    match ops[at as usize].opcode {
                        ZEND_INIT_FCALL
                        | ZEND_INIT_FCALL_BY_NAME
                        | ZEND_INIT_NS_FCALL_BY_NAME
                        | ZEND_INIT_DYNAMIC_CALL
                        | ZEND_INIT_USER_CALL
                        | ZEND_INIT_METHOD_CALL
                        | ZEND_INIT_STATIC_METHOD_CALL
                        | ZEND_NEW => level += 1,
                        ZEND_DO_FCALL | ZEND_DO_FCALL_BY_NAME | ZEND_DO_ICALL | ZEND_DO_UCALL => {
                            if level == 0 {
                                break;
                            }
                            level -= 1;
                        }
                        _ => {}
                    }
                }
                push(op_array, out, var, ZEND_LIVE_NEW, orig_start + 1, start + 1);
                if start + 1 == end {
                    return;
                }
            }
            start += 1;
            kind = ZEND_LIVE_TMPVAR;
            if !needed() {
                return;
            }
        }
    }
    push(op_array, out, var, kind, start, end);
}

/// `zend_sort(.., cmp_live_range, swap_live_range)`: PHP's hybrid insertion sort, whose
/// order among ranges with the same start is part of the result.
fn zend_sort_by_start(ranges: &mut [LiveRange]) {
    zend_sort(ranges, &|a: &LiveRange, b: &LiveRange| {
        a.start.as_u32() > b.start.as_u32()
    });
}

/// `zend_sort` (Zend/zend_sort.c) with `gt(a, b)` meaning `cmp(a, b) > 0`: insertion sort
/// up to 16 elements, else a quicksort partition around a median-of-3 (or 5) pivot.
fn zend_sort<T>(v: &mut [T], gt: &dyn Fn(&T, &T) -> bool) {
    let mut base = 0usize;
    let mut nmemb = v.len();
    loop {
        if nmemb <= 16 {
            zend_insert_sort(&mut v[base..base + nmemb], gt);
            return;
        }
        let start = base;
        let end = base + nmemb;
        let offset = nmemb >> 1;
        let pivot = start + offset;
        if nmemb >> 10 != 0 {
            let delta = offset >> 1;
            sort5(v, start, start + delta, pivot, pivot + delta, end - 1, gt);
        } else {
            sort3(v, start, pivot, end - 1, gt);
        }
        v.swap(start + 1, pivot);
        let pivot = start + 1;
        let mut i = pivot + 1;
        let mut j = end - 1;
        'partition: loop {
            while gt(&v[pivot], &v[i]) {
                i += 1;
                if i == j {
                    break 'partition;
                }
            }
            j -= 1;
            if j == i {
                break;
            }
            while gt(&v[j], &v[pivot]) {
                j -= 1;
                if j == i {
                    break 'partition;
                }
            }
            v.swap(i, j);
            i += 1;
            if i == j {
                break;
            }
        }
        v.swap(pivot, i - 1);
        if (i - 1) - start < end - i {
            zend_sort(&mut v[start..i - 1], gt);
            base = i;
            nmemb = end - i;
        } else {
            zend_sort(&mut v[i..end], gt);
            nmemb = i - start - 1;
        }
    }
}

fn sort2<T>(v: &mut [T], a: usize, b: usize, gt: &dyn Fn(&T, &T) -> bool) {
    if gt(&v[a], &v[b]) {
        v.swap(a, b);
    }
}

fn sort3<T>(v: &mut [T], a: usize, b: usize, c: usize, gt: &dyn Fn(&T, &T) -> bool) {
    if !gt(&v[a], &v[b]) {
        if !gt(&v[b], &v[c]) {
            return;
        }
        v.swap(b, c);
        if gt(&v[a], &v[b]) {
            v.swap(a, b);
        }
        return;
    }
    if !gt(&v[c], &v[b]) {
        v.swap(a, c);
        return;
    }
    v.swap(a, b);
    if gt(&v[b], &v[c]) {
        v.swap(b, c);
    }
}

fn sort4<T>(v: &mut [T], a: usize, b: usize, c: usize, d: usize, gt: &dyn Fn(&T, &T) -> bool) {
    sort3(v, a, b, c, gt);
    if gt(&v[c], &v[d]) {
        v.swap(c, d);
        if gt(&v[b], &v[c]) {
            v.swap(b, c);
            if gt(&v[a], &v[b]) {
                v.swap(a, b);
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn sort5<T>(
    v: &mut [T],
    a: usize,
    b: usize,
    c: usize,
    d: usize,
    e: usize,
    gt: &dyn Fn(&T, &T) -> bool,
) {
    sort4(v, a, b, c, d, gt);
    if gt(&v[d], &v[e]) {
        v.swap(d, e);
        if gt(&v[c], &v[d]) {
            v.swap(c, d);
            if gt(&v[b], &v[c]) {
                v.swap(b, c);
                if gt(&v[a], &v[b]) {
                    v.swap(a, b);
                }
            }
        }
    }
}

/// `zend_insert_sort`: sorting networks for 2..5 elements, else insertion sort (linear
/// probing for the first six elements, then probing two at a time).
fn zend_insert_sort<T>(v: &mut [T], gt: &dyn Fn(&T, &T) -> bool) {
    match v.len() {
        0 | 1 => {}
        2 => sort2(v, 0, 1, gt),
        3 => sort3(v, 0, 1, 2, gt),
        4 => sort4(v, 0, 1, 2, 3, gt),
        5 => sort5(v, 0, 1, 2, 3, 4, gt),
        n => {
            for i in 1..n.min(6) {
                let mut j = i - 1;
                if !gt(&v[j], &v[i]) {
                    continue;
                }
                while j != 0 {
                    j -= 1;
                    if !gt(&v[j], &v[i]) {
                        j += 1;
                        break;
                    }
                }
                v[j..=i].rotate_right(1);
            }
            for i in 6..n {
                let mut j = i - 1;
                if !gt(&v[j], &v[i]) {
                    continue;
                }
                loop {
                    j -= 2;
                    if !gt(&v[j], &v[i]) {
                        j += 1;
                        if !gt(&v[j], &v[i]) {
                            j += 1;
                        }
                        break;
                    }
                    if j == 0 {
                        break;
                    }
                    if j == 1 {
                        j -= 1;
                        if gt(&v[i], &v[j]) {
                            j += 1;
                        }
                        break;
                    }
                }
                v[j..=i].rotate_right(1);
            }
        }
    }
}
