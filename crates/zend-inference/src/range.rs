//! Range inference (`zend_infer_ranges`): per SCC in order, warm-up passes, widening,
//! then narrowing with symbolic pi constraints.

use crate::mb::REF;
use crate::State;
use bumpalo::Bump;
use zend_ir::dump::SsaRange;
use zend_ir::opcode::*;
use zend_ir::Operand;
use zend_ssa::{Constraint, SsaVar};

const RANGE_WARMUP_PASSES: usize = 16;

const FULL: SsaRange = SsaRange {
    min: i64::MIN,
    max: i64::MAX,
    underflow: true,
    overflow: true,
};

fn calc_range(st: &State, var: usize, narrowing: bool) -> Option<SsaRange> {
    let v = &st.ssa.vars[var];
    if let Some(p) = v.definition_phi {
        let p = &st.ssa.phis[p.index()];
        let mut tmp = SsaRange {
            min: i64::MAX,
            max: i64::MIN,
            underflow: false,
            overflow: false,
        };
        match (&p.pi, &p.constraint) {
            (Some(_), Some(Constraint::Range(c))) => {
                let src1 = p.sources[0].unwrap().index();
                let si = &st.vars[src1];
                if c.negative != zend_ssa::NegativeLat::None {
                    if si.has_range {
                        tmp = si.range;
                        if c.range.min == c.range.max
                            && !c.range.underflow
                            && !c.range.overflow
                            && c.min_ssa_var.is_none()
                            && c.max_ssa_var.is_none()
                        {
                            if let Some(line) = st.ssa.vars[src1].definition {
                                let line = line.index();
                                let opc = st.op_array.opcodes[line].opcode;
                                let dec = matches!(opc, ZEND_PRE_DEC | ZEND_POST_DEC);
                                let inc = matches!(opc, ZEND_PRE_INC | ZEND_POST_INC);
                                if (dec && !tmp.underflow) || (inc && !tmp.overflow) {
                                    let u = st.ssa.ops[line].op1_use;
                                    let pp = u.and_then(|u| st.ssa.vars[u.index()].definition_phi);
                                    if let Some(pp) = pp {
                                        let pp = &st.ssa.phis[pp.index()];
                                        if !pp.is_pi()
                                            && st.cfg.blocks[pp.block.index()].predecessors_count()
                                                == 2
                                            && pp.sources[1] == Some(SsaVar::new(var as u32))
                                        {
                                            let s0 = &st.vars[pp.sources[0].unwrap().index()];
                                            if s0.has_range {
                                                if dec && s0.range.min > c.range.max {
                                                    tmp.min = c.range.max + 1;
                                                }
                                                if inc && s0.range.max < c.range.min {
                                                    tmp.max = c.range.min - 1;
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    } else if narrowing {
                        tmp = FULL;
                    }
                } else if si.has_range {
                    tmp = si.range;
                    match c.min_ssa_var {
                        None => {
                            tmp.underflow = c.range.underflow && tmp.underflow;
                            tmp.min = tmp.min.max(c.range.min);
                        }
                        Some(m) => {
                            let mi = &st.vars[m.index()];
                            if narrowing && mi.has_range {
                                tmp.underflow = mi.range.underflow && tmp.underflow;
                                if let Some(s) = mi.range.min.checked_add(c.range.min) {
                                    tmp.min = tmp.min.max(s);
                                }
                            }
                        }
                    }
                    match c.max_ssa_var {
                        None => {
                            tmp.max = tmp.max.min(c.range.max);
                            tmp.overflow = c.range.overflow && tmp.overflow;
                        }
                        Some(m) => {
                            let mi = &st.vars[m.index()];
                            if narrowing && mi.has_range {
                                if let Some(s) = mi.range.max.checked_add(c.range.max) {
                                    tmp.max = tmp.max.min(s);
                                }
                                tmp.overflow = mi.range.overflow && tmp.overflow;
                            }
                        }
                    }
                } else if narrowing {
                    match c.min_ssa_var {
                        None => {
                            tmp.underflow = c.range.underflow;
                            tmp.min = c.range.min;
                        }
                        Some(m) if st.vars[m.index()].has_range => {
                            let mi = &st.vars[m.index()];
                            match mi.range.min.checked_add(c.range.min) {
                                None => {
                                    tmp.underflow = true;
                                    tmp.min = i64::MIN;
                                }
                                Some(s) => {
                                    tmp.underflow = mi.range.underflow;
                                    tmp.min = s;
                                }
                            }
                        }
                        Some(_) => {
                            tmp.underflow = true;
                            tmp.min = i64::MIN;
                        }
                    }
                    match c.max_ssa_var {
                        None => {
                            tmp.max = c.range.max;
                            tmp.overflow = c.range.overflow;
                        }
                        Some(m) if st.vars[m.index()].has_range => {
                            let mi = &st.vars[m.index()];
                            match mi.range.max.checked_add(c.range.max) {
                                None => {
                                    tmp.overflow = true;
                                    tmp.max = i64::MAX;
                                }
                                Some(s) => {
                                    tmp.max = s;
                                    tmp.overflow = mi.range.overflow;
                                }
                            }
                        }
                        Some(_) => {
                            tmp.max = i64::MAX;
                            tmp.overflow = true;
                        }
                    }
                }
            }
            (Some(_), _) => {
                // Type-constraint pi: behaves as a phi with one source.
                union_sources(st, p, 1, narrowing, &mut tmp);
            }
            (None, _) => {
                let n = st.cfg.blocks[p.block.index()].predecessors_count();
                union_sources(st, p, n, narrowing, &mut tmp);
            }
        }
        return (tmp.min <= tmp.max).then_some(tmp);
    }
    let line = v.definition?.index();
    propagate_range(st, line, var)
}

fn union_sources(st: &State, p: &zend_ssa::Phi, n: usize, narrowing: bool, tmp: &mut SsaRange) {
    for s in p.sources.iter().take(n) {
        let Some(s) = s else { continue };
        let si = &st.vars[s.index()];
        if si.has_range {
            tmp.underflow |= si.range.underflow;
            tmp.min = tmp.min.min(si.range.min);
            tmp.max = tmp.max.max(si.range.max);
            tmp.overflow |= si.range.overflow;
        } else if narrowing {
            *tmp = FULL;
        }
    }
}

/// `zend_inference_propagate_range`.
fn propagate_range(st: &State, line: usize, var: usize) -> Option<SsaRange> {
    let op = &st.op_array.opcodes[line];
    let so = &st.ssa.ops[line];
    let is = |v: Option<SsaVar>| v.is_some_and(|v| v.index() == var);
    let op1 = || st.operand_range(op.op1, so.op1_use);
    let op2 = || st.operand_range(op.op2, so.op2_use);
    let mut tmp = SsaRange::default();
    match op.opcode {
        ZEND_ADD | ZEND_SUB | ZEND_MUL | ZEND_DIV | ZEND_MOD | ZEND_SL | ZEND_SR | ZEND_BW_OR
        | ZEND_BW_AND | ZEND_BW_XOR => {
            if is(so.result_def) {
                return binary_op_range(op.opcode, op1(), op2());
            }
        }
        ZEND_BW_NOT => {
            if is(so.result_def) {
                if let Some(r) = op1() {
                    if r.underflow || r.overflow {
                        tmp.min = i64::MIN;
                        tmp.max = i64::MAX;
                    } else {
                        tmp.min = !r.max;
                        tmp.max = !r.min;
                    }
                    return Some(tmp);
                }
            }
        }
        ZEND_CAST => {
            if is(so.op1_def) {
                return op1();
            } else if is(so.result_def) && op.extended_value == 4 {
                return Some(match op1() {
                    Some(r) => SsaRange {
                        min: r.min,
                        max: r.max,
                        underflow: false,
                        overflow: false,
                    },
                    None => SsaRange {
                        min: i64::MIN,
                        max: i64::MAX,
                        underflow: false,
                        overflow: false,
                    },
                });
            }
        }
        ZEND_QM_ASSIGN | ZEND_JMP_SET | ZEND_COALESCE | ZEND_COPY_TMP => {
            if is(so.op1_def) {
                if let Some(r) = op1() {
                    return Some(r);
                }
            }
            if is(so.result_def) {
                return op1();
            }
        }
        ZEND_SEND_VAR => {
            if is(so.op1_def) {
                return op1();
            }
        }
        ZEND_PRE_INC | ZEND_PRE_DEC | ZEND_POST_INC | ZEND_POST_DEC => {
            if is(so.op1_def) || is(so.result_def) {
                let mut r = op1()?;
                let post = matches!(op.opcode, ZEND_POST_INC | ZEND_POST_DEC);
                if post && is(so.result_def) {
                    return Some(r);
                }
                if matches!(op.opcode, ZEND_PRE_INC | ZEND_POST_INC) {
                    if r.max < i64::MAX {
                        r.max += 1;
                    } else {
                        r.overflow = true;
                    }
                    if r.min < i64::MAX && !r.underflow {
                        r.min += 1;
                    }
                } else {
                    if r.min > i64::MIN {
                        r.min -= 1;
                    } else {
                        r.underflow = true;
                    }
                    if r.max > i64::MIN && !r.overflow {
                        r.max -= 1;
                    }
                }
                return Some(r);
            }
        }
        ZEND_UNSET_DIM | ZEND_UNSET_OBJ => {
            if is(so.op1_def) {
                return op1();
            }
        }
        ZEND_ASSIGN => {
            if is(so.op1_def) || is(so.op2_def) || is(so.result_def) {
                return op2();
            }
        }
        ZEND_ASSIGN_DIM
        | ZEND_ASSIGN_OBJ
        | ZEND_ASSIGN_STATIC_PROP
        | ZEND_ASSIGN_DIM_OP
        | ZEND_ASSIGN_OBJ_OP
        | ZEND_ASSIGN_STATIC_PROP_OP => {
            if let Some(d) = st.ssa.ops.get(line + 1) {
                if is(d.op1_def) {
                    let data = &st.op_array.opcodes[line + 1];
                    return Some(st.operand_range(data.op1, d.op1_use).unwrap_or(SsaRange {
                        min: 0,
                        max: 0,
                        underflow: false,
                        overflow: false,
                    }));
                }
            }
        }
        ZEND_ASSIGN_OP => {
            let ext = op.extended_value as u8;
            if ext != ZEND_CONCAT.0 && ext != ZEND_POW.0 && (is(so.op1_def) || is(so.result_def)) {
                return binary_op_range(Opcode(ext), op1(), op2());
            }
        }
        ZEND_OP_DATA => {
            if is(so.op1_def) {
                let prev = st.op_array.opcodes[line - 1].opcode;
                if matches!(
                    prev,
                    ZEND_ASSIGN_DIM
                        | ZEND_ASSIGN_OBJ
                        | ZEND_ASSIGN_STATIC_PROP
                        | ZEND_ASSIGN_DIM_OP
                        | ZEND_ASSIGN_OBJ_OP
                        | ZEND_ASSIGN_STATIC_PROP_OP
                ) {
                    return op1();
                }
            }
        }
        ZEND_RECV | ZEND_RECV_INIT => {
            if is(so.result_def) {
                if let Operand::Unused(num) = op.op1 {
                    if num >= 1 && num <= st.op_array.num_args {
                        if let Some(ai) = st.op_array.arg_info.get(num as usize - 1) {
                            let mask = ai.type_.type_mask & 0x3fffe & !crate::mb::NULL;
                            if mask == crate::mb::LONG {
                                return Some(SsaRange {
                                    min: i64::MIN,
                                    max: i64::MAX,
                                    underflow: false,
                                    overflow: false,
                                });
                            }
                        }
                    }
                }
            }
        }
        ZEND_STRLEN => {
            if is(so.result_def) {
                return Some(SsaRange {
                    min: 0,
                    max: i64::MAX,
                    underflow: false,
                    overflow: false,
                });
            }
        }
        ZEND_FUNC_NUM_ARGS => {
            return Some(SsaRange {
                min: 0,
                max: i64::MAX,
                underflow: false,
                overflow: false,
            })
        }
        ZEND_COUNT => {
            return Some(SsaRange {
                min: i64::MIN,
                max: i64::MAX,
                underflow: false,
                overflow: false,
            })
        }
        ZEND_DO_FCALL | ZEND_DO_ICALL | ZEND_DO_UCALL | ZEND_DO_FCALL_BY_NAME => {
            if is(so.result_def) {
                let site = st.call_at_do(line)?;
                if site.is_prototype {
                    return None;
                }
                let callee = site.callee?;
                let ri = st.returns.get(callee.index())?.as_ref()?;
                if ri.has_range {
                    return Some(ri.range);
                }
            }
        }
        _ => {}
    }
    None
}

fn abs_range(min: i64, max: i64) -> Option<(i64, i64)> {
    if min == i64::MIN {
        return None;
    }
    Some(if min >= 0 {
        (min, max)
    } else if max <= 0 {
        (-max, -min)
    } else {
        (0, max.max(-min))
    })
}

/// `float_div`: the truncated quotient and the next integer away from zero when the
/// division is inexact.
fn float_div(a: i64, b: i64) -> (i64, i64) {
    let r1 = a.wrapping_div(b);
    let mut r2 = r1;
    if a.wrapping_rem(b) != 0 {
        if r2 < 0 {
            r2 -= 1;
        } else {
            r2 += 1;
        }
    }
    (r1, r2)
}

/// `zend_inference_calc_binary_op_range`.
fn binary_op_range(opcode: Opcode, r1: Option<SsaRange>, r2: Option<SsaRange>) -> Option<SsaRange> {
    let (a, b) = (r1?, r2?);
    let mut tmp = SsaRange::default();
    let any_flow = a.underflow || b.underflow || a.overflow || b.overflow;
    let full_noflags = SsaRange {
        min: i64::MIN,
        max: i64::MAX,
        underflow: false,
        overflow: false,
    };
    match opcode {
        ZEND_ADD => {
            match (a.underflow || b.underflow, a.min.checked_add(b.min)) {
                (false, Some(s)) => tmp.min = s,
                _ => {
                    tmp.underflow = true;
                    tmp.min = i64::MIN;
                }
            }
            match (a.overflow || b.overflow, a.max.checked_add(b.max)) {
                (false, Some(s)) => tmp.max = s,
                _ => {
                    tmp.overflow = true;
                    tmp.max = i64::MAX;
                }
            }
        }
        ZEND_SUB => {
            match (a.underflow || b.overflow, a.min.checked_sub(b.max)) {
                (false, Some(s)) => tmp.min = s,
                _ => {
                    tmp.underflow = true;
                    tmp.min = i64::MIN;
                }
            }
            match (a.overflow || b.underflow, a.max.checked_sub(b.min)) {
                (false, Some(s)) => tmp.max = s,
                _ => {
                    tmp.overflow = true;
                    tmp.max = i64::MAX;
                }
            }
        }
        ZEND_MUL => {
            let p = [
                a.min.checked_mul(b.min),
                a.min.checked_mul(b.max),
                a.max.checked_mul(b.min),
                a.max.checked_mul(b.max),
            ];
            if any_flow || p.iter().any(|x| x.is_none()) {
                tmp = FULL;
            } else {
                let p: Vec<i64> = p.iter().map(|x| x.unwrap()).collect();
                tmp.min = *p.iter().min().unwrap();
                tmp.max = *p.iter().max().unwrap();
            }
        }
        ZEND_DIV => {
            if any_flow || (b.min <= 0 && b.max >= 0) || (a.min == i64::MIN && b.max == -1) {
                tmp = FULL;
            } else {
                let q = [
                    float_div(a.min, b.min),
                    float_div(a.min, b.max),
                    float_div(a.max, b.min),
                    float_div(a.max, b.max),
                ];
                tmp.min = q.iter().map(|x| x.0.min(x.1)).min().unwrap();
                tmp.max = q.iter().map(|x| x.0.max(x.1)).max().unwrap();
            }
        }
        ZEND_MOD => {
            if any_flow {
                return Some(full_noflags);
            }
            let (mut amin, amax) = abs_range(b.min, b.max)?;
            if amax == 0 {
                return None;
            }
            if amin == 0 {
                amin += 1;
            }
            if a.min >= 0 {
                tmp.min = if a.max < amin { a.min } else { 0 };
                tmp.max = a.max.min(amax - 1);
            } else if a.max <= 0 {
                tmp.min = a.min.max(-amax + 1);
                tmp.max = if a.min > -amin { a.max } else { 0 };
            } else {
                tmp.min = a.min.max(-amax + 1);
                tmp.max = a.max.min(amax - 1);
            }
        }
        ZEND_SL => {
            if any_flow {
                return Some(full_noflags);
            }
            let (bmin, bmax) = (b.min.max(0), b.max.max(0));
            let shl = |n: i64, s: i64| -> i64 { (n as u64).wrapping_shl(s as u32) as i64 };
            // Mirrors shift_left_overflows: deliberately coarse, not an exact test. A shift that
            // could reach the sign bit counts as overflowing even for 0 (so `0 << ($n & 63)`
            // is MIN..MAX in PHP 8.2), and otherwise only "the result moved the wrong way" is
            // checked. Both short-circuit before a shift by 64 or more could happen.
            let overflows = |n: i64, s: i64| -> bool {
                if n >= 0 {
                    s >= 63 || shl(n, s) < n
                } else {
                    s >= 64 || shl(n, s) > n
                }
            };
            if overflows(a.min, bmax) || overflows(a.max, bmax) {
                return Some(full_noflags);
            }
            let t = [
                shl(a.min, bmin),
                shl(a.min, bmax),
                shl(a.max, bmin),
                shl(a.max, bmax),
            ];
            tmp.min = *t.iter().min().unwrap();
            tmp.max = *t.iter().max().unwrap();
        }
        ZEND_SR => {
            if any_flow {
                return Some(full_noflags);
            }
            let bmin = b.min.clamp(0, 63);
            let bmax = b.max.clamp(0, 63);
            let t = [a.min >> bmin, a.min >> bmax, a.max >> bmin, a.max >> bmax];
            tmp.min = *t.iter().min().unwrap();
            tmp.max = *t.iter().max().unwrap();
        }
        ZEND_BW_OR | ZEND_BW_AND => {
            if any_flow {
                return Some(full_noflags);
            }
            return Some(if opcode == ZEND_BW_OR {
                range_or(a.min, a.max, b.min, b.max)
            } else {
                range_and(a.min, a.max, b.min, b.max)
            });
        }
        _ => return None,
    }
    Some(tmp)
}

fn min_or(mut a: u64, b: u64, mut c: u64, d: u64) -> u64 {
    let mut m: u64 = 1 << 63;
    while m != 0 {
        if !a & c & m != 0 {
            let temp = (a | m) & m.wrapping_neg();
            if temp <= b {
                a = temp;
                break;
            }
        } else if a & !c & m != 0 {
            let temp = (c | m) & m.wrapping_neg();
            if temp <= d {
                c = temp;
                break;
            }
        }
        m >>= 1;
    }
    a | c
}

fn max_or(a: u64, mut b: u64, c: u64, mut d: u64) -> u64 {
    let mut m: u64 = 1 << 63;
    while m != 0 {
        if b & d & m != 0 {
            let temp = (b - m) | (m - 1);
            if temp >= a {
                b = temp;
                break;
            }
            let temp = (d - m) | (m - 1);
            if temp >= c {
                d = temp;
                break;
            }
        }
        m >>= 1;
    }
    b | d
}

fn min_and(mut a: u64, b: u64, mut c: u64, d: u64) -> u64 {
    let mut m: u64 = 1 << 63;
    while m != 0 {
        if !a & !c & m != 0 {
            let temp = (a | m) & m.wrapping_neg();
            if temp <= b {
                a = temp;
                break;
            }
            let temp = (c | m) & m.wrapping_neg();
            if temp <= d {
                c = temp;
                break;
            }
        }
        m >>= 1;
    }
    a & c
}

fn max_and(a: u64, mut b: u64, c: u64, mut d: u64) -> u64 {
    let mut m: u64 = 1 << 63;
    while m != 0 {
        if b & !d & m != 0 {
            let temp = (b | !m) | (m.wrapping_sub(1));
            if temp >= a {
                b = temp;
                break;
            }
        } else if !b & d & m != 0 {
            let temp = (d | !m) | (m.wrapping_sub(1));
            if temp >= c {
                d = temp;
                break;
            }
        }
        m >>= 1;
    }
    b & d
}

fn range_or(a: i64, b: i64, c: i64, d: i64) -> SsaRange {
    let x = ((a < 0) as u32) << 3 | ((b < 0) as u32) << 2 | ((c < 0) as u32) << 1 | (d < 0) as u32;
    let u = |v: i64| v as u64;
    let (min, max) = match x {
        0x2 => (
            min_or(u(a), u(b), u(c), u(-1)) as i64,
            max_or(u(a), u(b), 0, u(d)) as i64,
        ),
        0x8 => (
            min_or(u(a), u(-1), u(c), u(d)) as i64,
            max_or(0, u(b), u(c), u(d)) as i64,
        ),
        0xa => (a.min(c), max_or(0, u(b), 0, u(d)) as i64),
        0xb => (c, -1),
        0xe => (a, -1),
        _ => (
            min_or(u(a), u(b), u(c), u(d)) as i64,
            max_or(u(a), u(b), u(c), u(d)) as i64,
        ),
    };
    SsaRange {
        min,
        max,
        underflow: false,
        overflow: false,
    }
}

fn range_and(a: i64, b: i64, c: i64, d: i64) -> SsaRange {
    let x = ((a < 0) as u32) << 3 | ((b < 0) as u32) << 2 | ((c < 0) as u32) << 1 | (d < 0) as u32;
    let u = |v: i64| v as u64;
    let (min, max) = match x {
        0x2 => (0, b),
        0x8 => (0, d),
        0xa => (min_and(u(a), u(-1), u(c), u(-1)) as i64, b.max(d)),
        0xb => (
            min_and(u(a), u(-1), u(c), u(d)) as i64,
            max_and(0, u(b), u(c), u(d)) as i64,
        ),
        0xe => (
            min_and(u(a), u(b), u(c), u(-1)) as i64,
            max_and(u(a), u(b), 0, u(d)) as i64,
        ),
        _ => (
            min_and(u(a), u(b), u(c), u(d)) as i64,
            max_and(u(a), u(b), u(c), u(d)) as i64,
        ),
    };
    SsaRange {
        min,
        max,
        underflow: false,
        overflow: false,
    }
}

fn init_range(st: &mut State, var: usize, r: SsaRange) {
    let mut r = r;
    if r.underflow {
        r.min = i64::MIN;
    }
    if r.overflow {
        r.max = i64::MAX;
    }
    st.vars[var].has_range = true;
    st.vars[var].range = r;
}

fn widening_meet(st: &mut State, var: usize, mut r: SsaRange) -> bool {
    let vi = &mut st.vars[var];
    if !vi.has_range {
        vi.has_range = true;
    } else {
        if r.underflow || vi.range.underflow || r.min < vi.range.min {
            r.underflow = true;
            r.min = i64::MIN;
        }
        if r.overflow || vi.range.overflow || r.max > vi.range.max {
            r.overflow = true;
            r.max = i64::MAX;
        }
        if vi.range == r {
            return false;
        }
    }
    vi.range = r;
    true
}

fn narrowing_meet(st: &mut State, var: usize, mut r: SsaRange) -> bool {
    let vi = &mut st.vars[var];
    if !vi.has_range {
        vi.has_range = true;
    } else {
        if !r.underflow && !vi.range.underflow && vi.range.min < r.min {
            r.min = vi.range.min;
        }
        if !r.overflow && !vi.range.overflow && vi.range.max > r.max {
            r.max = vi.range.max;
        }
        if r.underflow {
            r.min = i64::MIN;
        }
        if r.overflow {
            r.max = i64::MAX;
        }
        if vi.range == r {
            return false;
        }
    }
    vi.range = r;
    true
}

/// A worklist bitset with a summary level (one bit per non-empty word), so that a sweep
/// finds the next non-empty word without walking the empty ones.
struct Bits<'b> {
    words: &'b mut [u64],
    summary: &'b mut [u64],
}

impl<'b> Bits<'b> {
    fn new_in(n: usize, scratch: &'b Bump) -> Self {
        let words = n.div_ceil(64);
        Bits {
            words: scratch.alloc_slice_fill_copy(words, 0),
            summary: scratch.alloc_slice_fill_copy(words.div_ceil(64), 0),
        }
    }
    fn incl(&mut self, i: usize) {
        let w = i / 64;
        self.words[w] |= 1 << (i % 64);
        self.summary[w / 64] |= 1 << (w % 64);
    }
    fn has(&self, i: usize) -> bool {
        self.words[i / 64] & (1 << (i % 64)) != 0
    }
    /// Takes bit `bit` of word `w` out.
    fn take(&mut self, w: usize, bit: usize) {
        self.words[w] &= !(1u64 << bit);
        if self.words[w] == 0 {
            self.summary[w / 64] &= !(1 << (w % 64));
        }
    }
    /// The first non-empty word at or after `from`.
    fn next_word(&self, from: usize) -> Option<usize> {
        let mut s = from / 64;
        let mut bits = *self.summary.get(s)? & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                return Some(s * 64 + bits.trailing_zeros() as usize);
            }
            s += 1;
            bits = *self.summary.get(s)?;
        }
    }
    /// Clears the bits of `members`, the only ones an SCC's solving sets.
    fn clear_members(&mut self, members: &[usize]) {
        for &i in members {
            let w = i / 64;
            self.words[w] = 0;
            self.summary[w / 64] &= !(1 << (w % 64));
        }
    }
}

/// `WHILE_WORKLIST`: sweeps over the bitset in increasing order, each 64-bit word read
/// once per sweep when reached (bits set behind the cursor, or later in the word being
/// walked, wait for the next sweep), until a sweep finds nothing. Empty words are skipped
/// through the summary: the order of visits is PHP's, and a sweep costs what it visits.
struct Sweep {
    word: usize,
    x: u64,
    progressed: bool,
    started: bool,
}

impl Sweep {
    fn new() -> Self {
        Sweep {
            word: 0,
            x: 0,
            progressed: false,
            started: false,
        }
    }

    fn next(&mut self, b: &mut Bits<'_>) -> Option<usize> {
        loop {
            if self.x != 0 {
                let t = self.x.trailing_zeros() as usize;
                self.x &= self.x - 1;
                b.take(self.word, t);
                self.progressed = true;
                return Some(self.word * 64 + t);
            }
            let from = if self.started { self.word + 1 } else { 0 };
            self.started = true;
            let word = match b.next_word(from) {
                Some(w) => w,
                None => {
                    // The end of a sweep: another one if this one found something.
                    if !self.progressed {
                        return None;
                    }
                    self.progressed = false;
                    b.next_word(0)?
                }
            };
            self.word = word;
            self.x = b.words[word];
        }
    }
}

fn add_scc_usages(st: &State, j: usize, scc: u32, wl: &mut Bits<'_>, visited: Option<&Bits<'_>>) {
    st.usages(j, |v| {
        if st.ssa.vars[v].scc == Some(scc)
            && st.vars[v].type_ & REF == 0
            && !visited.is_some_and(|vis| vis.has(v))
        {
            wl.incl(v);
        }
    });
}

/// `zend_infer_ranges`.
pub(crate) fn infer_ranges(st: &mut State) {
    let n = st.vars.len();
    let sccs = st.ssa.sccs as usize;
    // Each SCC's variables, SCC after SCC (a counting sort): PHP links them in reverse
    // order of their numbers.
    let scratch = st.scratch;
    let start: &mut [u32] = scratch.alloc_slice_fill_copy(sccs + 1, 0);
    for v in &st.ssa.vars[..n] {
        if let Some(s) = v.scc {
            if let Some(c) = start.get_mut(s as usize + 1) {
                *c += 1;
            }
        }
    }
    let mut sum = 0;
    for c in start.iter_mut() {
        sum += *c;
        *c = sum;
    }
    let members: &mut [usize] = scratch.alloc_slice_fill_copy(sum as usize, 0);
    let fill: &mut [u32] = scratch.alloc_slice_copy(start);
    for (j, v) in st.ssa.vars[..n].iter().enumerate().rev() {
        if let Some(s) = v.scc.filter(|&s| (s as usize) < sccs) {
            let f = &mut fill[s as usize];
            members[*f as usize] = j;
            *f += 1;
        }
    }
    // Only components of several variables need worklists; most functions have none.
    let mut sets = None;
    for scc in 0..sccs {
        let scc_u = scc as u32;
        let list = &members[start[scc] as usize..start[scc + 1] as usize];
        if list.is_empty() {
            continue;
        }

        if list.len() == 1 {
            let j = list[0];
            if st.vars[j].type_ & REF != 0 {
            } else if let Some(r) = calc_range(st, j, true) {
                init_range(st, j, r);
            } else {
                init_range(st, j, FULL);
            }
            continue;
        }
        let (wl, wwl, visited) = sets.get_or_insert_with(|| {
            (
                Bits::new_in(n, scratch),
                Bits::new_in(n, scratch),
                Bits::new_in(n, scratch),
            )
        });
        wl.clear_members(list);
        for &j in list {
            if st.ssa.vars[j].scc_entry && st.vars[j].type_ & REF == 0 {
                wl.incl(j);
            }
        }
        // Warm-up.
        {
            wwl.clear_members(list);
            for _ in 0..RANGE_WARMUP_PASSES {
                for &j in list {
                    if st.ssa.vars[j].scc_entry && st.vars[j].type_ & REF == 0 {
                        wwl.incl(j);
                    }
                }
                visited.clear_members(list);
                let mut sweep = Sweep::new();
                while let Some(j) = sweep.next(wwl) {
                    if let Some(r) = calc_range(st, j, false) {
                        if narrowing_meet(st, j, r) {
                            visited.incl(j);
                            add_scc_usages(st, j, scc_u, wwl, Some(visited));
                        }
                    }
                }
            }
        }
        for &j in list {
            if st.vars[j].type_ & REF == 0 {
                wl.incl(j);
            }
        }
        // Widening.
        let mut sweep = Sweep::new();
        while let Some(j) = sweep.next(wl) {
            if let Some(r) = calc_range(st, j, false) {
                if widening_meet(st, j, r) {
                    add_scc_usages(st, j, scc_u, wl, None);
                }
            }
        }
        for &j in list {
            if !st.vars[j].has_range && st.vars[j].type_ & REF == 0 {
                init_range(st, j, FULL);
                add_scc_usages(st, j, scc_u, wl, None);
            }
        }
        let mut sweep = Sweep::new();
        while let Some(j) = sweep.next(wl) {
            if let Some(r) = calc_range(st, j, false) {
                if widening_meet(st, j, r) {
                    add_scc_usages(st, j, scc_u, wl, None);
                }
            }
        }
        for &j in list {
            let is_phi = st.ssa.vars[j]
                .definition_phi
                .is_some_and(|p| !st.ssa.phis[p.index()].is_pi());
            if is_phi && st.vars[j].type_ & REF == 0 {
                if let Some(r) = calc_range(st, j, true) {
                    narrowing_meet(st, j, r);
                }
            }
            wl.incl(j);
        }
        // Narrowing.
        let mut sweep = Sweep::new();
        while let Some(j) = sweep.next(wl) {
            if let Some(r) = calc_range(st, j, true) {
                if narrowing_meet(st, j, r) {
                    add_scc_usages(st, j, scc_u, wl, None);
                    let mut p = st.ssa.vars[j].sym_use_chain;
                    while let Some(pid) = p {
                        let phi = &st.ssa.phis[pid.index()];
                        let v = phi.ssa_var.index();
                        if st.ssa.vars[v].scc == Some(scc_u) && st.vars[v].type_ & REF == 0 {
                            wl.incl(v);
                        }
                        p = phi.sym_use_chain;
                    }
                }
            }
        }
    }
}
