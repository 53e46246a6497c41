//! `zend_optimize_block`: block-local rewrites driven by `Tsource` (the op defining each
//! TMP/VAR within the current extended basic block): constants moved from `T = QM_ASSIGN
//! const` into their users, constant folding, BOOL/BOOL_NOT chains folded into
//! comparisons and conditional jumps, consecutive ECHOs and CONCATs of constants merged,
//! dead FREEs dropped with their producers' results, constant SWITCH/MATCH and conditional
//! jumps resolved, and TMP copies (`T2 = QM_ASSIGN T1`) removed.

use zend_cfg::{BlockFlags, BlockId};
use zend_ir::opcode::*;
use zend_ir::types::IS_STRING;
use zend_ir::{ArrayKey, Literal, OpArray, Operand, PhpStr};

use super::cfg::BlockCfg;
use super::{
    inv_cond, is_tmp, is_tmp_or_var, lit, literal_dtor, make_nop, set_lit, Pass, VarSources,
};
use crate::helpers::{update_op1_const, update_op2_const};
use crate::php_bugs::PhpBugs;
use crate::ChangeKind;

/// The labels of PHP's gotos: where a rewritten op continues.
#[derive(PartialEq)]
enum Next {
    Done,
    Bool,
    ConstUnary,
    ConstBinary,
}

/// `get_const_switch_target`: the block a SWITCH/MATCH on a constant goes to.
fn const_switch_target(
    cfg: &BlockCfg,
    op_array: &OpArray,
    b: usize,
    op: usize,
    val: &Literal,
) -> usize {
    let block = &cfg.blocks[b];
    let count = block.successors_count;
    let opline = &op_array.opcodes[op];
    let last = || block.successors[count.saturating_sub(1)].index();
    match (opline.opcode, val) {
        (ZEND_SWITCH_LONG, v) if !matches!(v, Literal::Long(_)) => return last(),
        (ZEND_SWITCH_STRING, v) if !matches!(v, Literal::String(_)) => return last(),
        (ZEND_MATCH, v) if !matches!(v, Literal::Long(_) | Literal::String(_)) => return last(),
        _ => {}
    }
    let table = match opline.op2 {
        Operand::Const(l) => match op_array.literals.get(l.index()) {
            Some(Literal::Array(t)) => t,
            _ => return last(),
        },
        _ => return last(),
    };
    let key = match val {
        Literal::Long(l) => ArrayKey::Long(*l),
        Literal::String(s) => ArrayKey::Str(s.clone()),
        _ => return last(),
    };
    match table.iter().find(|(k, _)| *k == key) {
        Some((_, Literal::Long(target))) => cfg
            .map
            .get(*target as usize)
            .map_or_else(last, |b| b.index()),
        Some(_) => last(),
        None => {
            let back = if opline.opcode == ZEND_MATCH { 1 } else { 2 };
            block.successors[count.saturating_sub(back)].index()
        }
    }
}

/// A constant as a string (`convert_to_string`), for the ECHO and CONCAT merges.
fn to_string(v: &Literal) -> Option<PhpStr> {
    match v {
        Literal::String(s) => Some(s.clone()),
        other => zend_operators::get_string(other),
    }
}

/// Slot of a TMP/VAR operand.
fn slot(o: Operand) -> Option<usize> {
    match o {
        Operand::TmpVar(v) | Operand::Var(v) => Some(v.index()),
        _ => None,
    }
}

/// The opcodes [`optimize_block`] rewrites by themselves (the arms of its `switch`): an op
/// with another opcode and no TMP operand is left as it is. RETURN and EXIT are not here:
/// their arm rewrites a TMP op1 only (every op_array has a RETURN of a CV or constant).
static REWRITTEN: zend_ir::OpcodeSet = zend_ir::OpcodeSet::of(&[
    ZEND_ECHO,
    ZEND_MATCH_ERROR,
    ZEND_FREE,
    ZEND_FETCH_LIST_R,
    ZEND_FETCH_LIST_W,
    ZEND_SWITCH_LONG,
    ZEND_SWITCH_STRING,
    ZEND_MATCH,
    ZEND_CASE,
    ZEND_CASE_STRICT,
    ZEND_COPY_TMP,
    ZEND_IS_EQUAL,
    ZEND_IS_NOT_EQUAL,
    ZEND_BOOL,
    ZEND_BOOL_NOT,
    ZEND_JMPZ,
    ZEND_JMPNZ,
    ZEND_JMPZ_EX,
    ZEND_JMPNZ_EX,
    ZEND_CONCAT,
    ZEND_FAST_CONCAT,
    ZEND_ADD,
    ZEND_SUB,
    ZEND_MUL,
    ZEND_DIV,
    ZEND_MOD,
    ZEND_SL,
    ZEND_SR,
    ZEND_IS_SMALLER,
    ZEND_IS_SMALLER_OR_EQUAL,
    ZEND_IS_IDENTICAL,
    ZEND_IS_NOT_IDENTICAL,
    ZEND_BOOL_XOR,
    ZEND_BW_OR,
    ZEND_BW_AND,
    ZEND_BW_XOR,
    ZEND_BW_NOT,
    ZEND_CAST,
    ZEND_STRLEN,
    ZEND_QM_ASSIGN,
]);

/// `zend_optimize_block`. Inlined into its one caller's loop over the blocks, which then
/// sets up its tables once per round rather than once per block.
#[inline(always)]
pub(crate) fn optimize_block(pass: &mut Pass, b: usize) {
    let Pass {
        op_array,
        cfg,
        used_ext,
        tsource,
        opt_count,
        ctx,
        ..
    } = pass;
    if cfg.blocks[b].len == 0 {
        return;
    }
    if op_array.opcodes[cfg.blocks[b].start as usize].opcode == ZEND_NOP {
        super::strip_leading_nops(op_array, &mut cfg.blocks[b]);
    }
    let used = |slot: usize| used_ext.get(slot).copied().unwrap_or(false);

    let mut last_echo: Option<usize> = None;
    let mut i = cfg.blocks[b].start as usize;
    let end = (cfg.blocks[b].start + cfg.blocks[b].len) as usize;
    while i < end {
        let op = &op_array.opcodes[i];
        if !is_tmp(op.op1) && !is_tmp(op.op2) && !REWRITTEN.contains(op.opcode) {
            // Nothing to propagate and no rewrite of its own (most ops): it only defines
            // its result.
            if let Some(r) = slot(op.result) {
                tsource.set(r, Some(i));
            }
            i += 1;
            continue;
        }
        // Constant propagation into op1: T = QM_ASSIGN const; OP T => OP const.
        let op1 = op.op1;
        if is_tmp(op1) && op.opcode != ZEND_FREE {
            let s1 = slot(op1).unwrap_or(0);
            if let Some(src) = tsource.get(s1) {
                if op_array.opcodes[src].opcode == ZEND_QM_ASSIGN {
                    if let Operand::Const(src_lit) = op_array.opcodes[src].op1 {
                        if op_array.opcodes[i].opcode == ZEND_VERIFY_RETURN_TYPE {
                            op_array.opcodes[i].result = op1;
                            op_array.opcodes[i].op1 = Operand::Const(src_lit);
                            tsource.set(s1, None);
                            make_nop(&mut op_array.opcodes[src]);
                            *opt_count += 1;
                        } else {
                            let opcode = op_array.opcodes[i].opcode;
                            let excluded = matches!(
                                opcode,
                                ZEND_CASE
                                    | ZEND_CASE_STRICT
                                    | ZEND_FETCH_LIST_R
                                    | ZEND_SWITCH_LONG
                                    | ZEND_SWITCH_STRING
                                    | ZEND_MATCH
                                    // The FREE after the match still frees the subject.
                                    | ZEND_MATCH_ERROR
                            );
                            let mut c = lit(op_array, src_lit).clone();
                            if !excluded && update_op1_const(op_array, i, &mut c, ctx.php_bugs) {
                                tsource.set(s1, None);
                                let src_res = slot(op_array.opcodes[src].result);
                                if opcode != ZEND_JMP_NULL && !src_res.is_some_and(used) {
                                    literal_dtor(op_array, src_lit);
                                    make_nop(&mut op_array.opcodes[src]);
                                }
                                ctx.note(
                                    op_array,
                                    zend_ir::OpNum::from(i),
                                    ChangeKind::Folded,
                                    || format!("op1 is the constant T{s1} was assigned"),
                                );
                                *opt_count += 1;
                            }
                        }
                    }
                }
            }
        }

        // Constant propagation into op2.
        let op2 = op_array.opcodes[i].op2;
        if is_tmp(op2) {
            let s2 = slot(op2).unwrap_or(0);
            if let Some(src) = tsource.get(s2) {
                if op_array.opcodes[src].opcode == ZEND_QM_ASSIGN {
                    if let Operand::Const(src_lit) = op_array.opcodes[src].op1 {
                        let mut c = lit(op_array, src_lit).clone();
                        if update_op2_const(op_array, i, &mut c, ctx.php_bugs) {
                            tsource.set(s2, None);
                            let src_res = slot(op_array.opcodes[src].result);
                            if !src_res.is_some_and(used) {
                                literal_dtor(op_array, src_lit);
                                make_nop(&mut op_array.opcodes[src]);
                            }
                            *opt_count += 1;
                        }
                    }
                }
            }
        }

        let mut opcode = op_array.opcodes[i].opcode;
        let mut next = Next::Done;
        // Every opcode with an arm here is in REWRITTEN, but RETURN and EXIT, whose arm
        // needs a TMP op1.
        match opcode {
            ZEND_ECHO => {
                let o = op_array.opcodes[i].op1;
                if is_tmp_or_var(o) {
                    let s = slot(o).unwrap_or(0);
                    if let Some(src) = tsource.get(s) {
                        let sop = &op_array.opcodes[src];
                        if sop.opcode == ZEND_CAST && sop.extended_value == u32::from(IS_STRING) {
                            // T = CAST(X, string); ECHO T => ECHO X
                            tsource.set(s, None);
                            op_array.opcodes[i].op1 = op_array.opcodes[src].op1;
                            make_nop(&mut op_array.opcodes[src]);
                            *opt_count += 1;
                        }
                    }
                } else if let Operand::Const(l) = o {
                    // PHP 8.2 merges two ECHOs of constants in a row into one write, which
                    // an output buffer with a chunk size sees (it flushes after a write that
                    // fills a chunk): ob_start($handler, 3); echo "yes!\n"; echo "no";
                    // flushes "yes!\n" and keeps "no" without OPcache, flushes both with.
                    let merge = ctx.php_bugs.contains(PhpBugs::MERGED_ECHOS);
                    if merge && !matches!(lit(op_array, l), Literal::Double(_)) {
                        if let Some(prev) = last_echo.filter(|&p| p + 1 == i) {
                            // Two ECHOs of constants in a row become one.
                            if let Operand::Const(pl) = op_array.opcodes[prev].op1 {
                                let a = to_string(lit(op_array, pl));
                                let c = to_string(lit(op_array, l));
                                if let (Some(mut a), Some(c)) = (a, c) {
                                    a.0.extend_from_slice(&c.0);
                                    set_lit(op_array, l, Literal::String(a));
                                    set_lit(op_array, pl, Literal::Null);
                                    make_nop(&mut op_array.opcodes[prev]);
                                    *opt_count += 1;
                                }
                            }
                        }
                        last_echo = Some(i);
                    }
                }
            }
            ZEND_MATCH_ERROR => {
                let o = op_array.opcodes[i].op1;
                if let Some(s) = slot(o) {
                    tsource.set(s, None);
                }
            }
            ZEND_FREE => {
                let o = op_array.opcodes[i].op1;
                let block_start = cfg.blocks[b].start as usize;
                if let Operand::TmpVar(v) = o {
                    if let Some(src) = tsource.get(v.index()) {
                        match op_array.opcodes[src].opcode {
                            ZEND_BOOL | ZEND_BOOL_NOT => {
                                // T = BOOL(X); FREE T => T = BOOL(X) (removed later as unused)
                                tsource.set(v.index(), None);
                                make_nop(&mut op_array.opcodes[i]);
                                *opt_count += 1;
                            }
                            ZEND_ASSIGN
                            | ZEND_ASSIGN_DIM
                            | ZEND_ASSIGN_OBJ
                            | ZEND_ASSIGN_STATIC_PROP
                            | ZEND_ASSIGN_OP
                            | ZEND_ASSIGN_DIM_OP
                            | ZEND_ASSIGN_OBJ_OP
                            | ZEND_ASSIGN_STATIC_PROP_OP
                            | ZEND_PRE_INC
                            | ZEND_PRE_DEC
                            | ZEND_PRE_INC_OBJ
                            | ZEND_PRE_DEC_OBJ
                            | ZEND_PRE_INC_STATIC_PROP
                            | ZEND_PRE_DEC_STATIC_PROP
                                if src >= block_start =>
                            {
                                op_array.opcodes[src].result = Operand::Unused(0);
                                tsource.set(v.index(), None);
                                make_nop(&mut op_array.opcodes[i]);
                                *opt_count += 1;
                            }
                            _ => {}
                        }
                    }
                } else if let Operand::Var(v) = o {
                    // V = OP; FREE V => OP
                    if let Some(src) = tsource.get(v.index()) {
                        let sop = op_array.opcodes[src].opcode;
                        if src >= block_start
                            && !matches!(
                                sop,
                                ZEND_FETCH_R
                                    | ZEND_FETCH_STATIC_PROP_R
                                    | ZEND_FETCH_DIM_R
                                    | ZEND_FETCH_OBJ_R
                                    | ZEND_NEW
                                    | ZEND_FETCH_THIS
                            )
                        {
                            op_array.opcodes[src].result = Operand::Unused(0);
                            make_nop(&mut op_array.opcodes[i]);
                            *opt_count += 1;
                            if sop == ZEND_QM_ASSIGN {
                                if is_tmp_or_var(op_array.opcodes[src].op1) {
                                    op_array.opcodes[src].opcode = ZEND_FREE;
                                } else {
                                    make_nop(&mut op_array.opcodes[src]);
                                }
                            }
                        }
                    }
                }
            }
            ZEND_FETCH_LIST_R | ZEND_FETCH_LIST_W => {
                // The list source is freed later: keep it.
                if let Some(s) = slot(op_array.opcodes[i].op1) {
                    tsource.set(s, None);
                }
            }
            ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH => {
                let o = op_array.opcodes[i].op1;
                if let Some(s) = slot(o) {
                    // The switch subject is freed later: keep it.
                    tsource.set(s, None);
                } else if let Operand::Const(l) = o {
                    let val = lit(op_array, l).clone();
                    let target = const_switch_target(cfg, op_array, b, i, &val);
                    literal_dtor(op_array, l);
                    if let Operand::Const(table) = op_array.opcodes[i].op2 {
                        literal_dtor(op_array, table);
                        op_array.opcodes[i].op2 = Operand::Unused(table.as_u32());
                    }
                    let opline = &mut op_array.opcodes[i];
                    opline.opcode = ZEND_JMP;
                    opline.op1 = Operand::JmpAddr(zend_ir::OpNum::new(0));
                    cfg.blocks[b].successors_count = 1;
                    cfg.blocks[b].successors[0] = BlockId::from(target);
                    ctx.note(
                        op_array,
                        zend_ir::OpNum::from(i),
                        ChangeKind::Rewritten,
                        || "switch on a constant became a JMP".to_string(),
                    );
                }
            }
            ZEND_CASE | ZEND_CASE_STRICT | ZEND_COPY_TMP | ZEND_IS_EQUAL | ZEND_IS_NOT_EQUAL => {
                let o = op_array.opcodes[i].op1;
                if matches!(opcode, ZEND_CASE | ZEND_CASE_STRICT | ZEND_COPY_TMP)
                    && is_tmp_or_var(o)
                {
                    // The subject is freed later: keep it.
                    if let Some(s) = slot(o) {
                        tsource.set(s, None);
                    }
                } else {
                    let op = &op_array.opcodes[i];
                    let bool_const = |o: Operand| match o {
                        Operand::Const(l) => match lit(op_array, l) {
                            Literal::True => Some(true),
                            Literal::False => Some(false),
                            _ => None,
                        },
                        _ => None,
                    };
                    if matches!(op.op1, Operand::Const(_)) && matches!(op.op2, Operand::Const(_)) {
                        next = Next::ConstBinary;
                    } else if let Some(t) = bool_const(op.op1) {
                        // ==/!= true/false is BOOL or BOOL_NOT (not null: "0" == null).
                        let new = if (opcode != ZEND_IS_NOT_EQUAL) == t {
                            ZEND_BOOL
                        } else {
                            ZEND_BOOL_NOT
                        };
                        let op = &mut op_array.opcodes[i];
                        op.opcode = new;
                        op.op1 = op.op2;
                        op.op2 = Operand::Unused(0);
                        *opt_count += 1;
                        next = Next::Bool;
                    } else if let Some(t) = bool_const(op.op2) {
                        let new = if (opcode != ZEND_IS_NOT_EQUAL) == t {
                            ZEND_BOOL
                        } else {
                            ZEND_BOOL_NOT
                        };
                        let op = &mut op_array.opcodes[i];
                        op.opcode = new;
                        op.op2 = Operand::Unused(0);
                        *opt_count += 1;
                        next = Next::Bool;
                    }
                }
            }
            ZEND_BOOL | ZEND_BOOL_NOT => next = Next::Bool,
            ZEND_JMPZ | ZEND_JMPNZ => loop {
                let o = op_array.opcodes[i].op1;
                if let Operand::Const(l) = o {
                    *opt_count += 1;
                    cfg.blocks[b].successors_count = 1;
                    let truth = zend_operators::is_true(lit(op_array, l));
                    if truth == (op_array.opcodes[i].opcode == ZEND_JMPZ) {
                        // Never jumps: gone.
                        make_nop(&mut op_array.opcodes[i]);
                        let follow = cfg.blocks[b].successors[1];
                        cfg.blocks[b].successors[0] = follow;
                        cfg.blocks[b].len -= 1;
                        cfg.blocks[follow.index()].flags |= BlockFlags::FOLLOW;
                    } else {
                        // Always jumps: a JMP.
                        let next_b = cfg.succ(b, 1);
                        let nb = &mut cfg.blocks[next_b];
                        nb.flags.remove(BlockFlags::FOLLOW);
                        if !nb
                            .flags
                            .intersects(BlockFlags::TARGET | BlockFlags::PROTECTED)
                        {
                            nb.flags.remove(BlockFlags::REACHABLE);
                        }
                        let op = &mut op_array.opcodes[i];
                        op.opcode = ZEND_JMP;
                        op.op1 = op.op2;
                    }
                    break;
                } else if let Operand::TmpVar(v) = o {
                    if used(v.index()) {
                        break;
                    }
                    let Some(src) = tsource.get(v.index()) else {
                        break;
                    };
                    match op_array.opcodes[src].opcode {
                        ZEND_BOOL_NOT => {
                            // T = BOOL_NOT(X); JMPZ T => JMPNZ X
                            tsource.set(v.index(), None);
                            op_array.opcodes[i].op1 = op_array.opcodes[src].op1;
                            let op = &mut op_array.opcodes[i];
                            op.opcode = inv_cond(op.opcode);
                            make_nop(&mut op_array.opcodes[src]);
                            *opt_count += 1;
                        }
                        ZEND_BOOL | ZEND_QM_ASSIGN => {
                            tsource.set(v.index(), None);
                            op_array.opcodes[i].op1 = op_array.opcodes[src].op1;
                            make_nop(&mut op_array.opcodes[src]);
                            *opt_count += 1;
                        }
                        _ => break,
                    }
                } else {
                    break;
                }
            },
            ZEND_JMPZ_EX | ZEND_JMPNZ_EX => loop {
                let o = op_array.opcodes[i].op1;
                if let Operand::Const(l) = o {
                    let is_jmpz_ex = op_array.opcodes[i].opcode == ZEND_JMPZ_EX;
                    if zend_operators::is_true(lit(op_array, l)) == is_jmpz_ex {
                        // Never jumps: T = QM_ASSIGN bool.
                        *opt_count += 1;
                        let op = &mut op_array.opcodes[i];
                        op.opcode = ZEND_QM_ASSIGN;
                        set_lit(
                            op_array,
                            l,
                            if is_jmpz_ex {
                                Literal::True
                            } else {
                                Literal::False
                            },
                        );
                        op_array.opcodes[i].op2 = Operand::Unused(0);
                        cfg.blocks[b].successors_count = 1;
                        let follow = cfg.blocks[b].successors[1];
                        cfg.blocks[b].successors[0] = follow;
                        cfg.blocks[follow.index()].flags |= BlockFlags::FOLLOW;
                    }
                    break;
                } else if let Operand::TmpVar(v) = o {
                    let same_result = op_array.opcodes[i].result == o;
                    if used(v.index()) && !same_result {
                        break;
                    }
                    let Some(src) = tsource.get(v.index()) else {
                        break;
                    };
                    if matches!(op_array.opcodes[src].opcode, ZEND_BOOL | ZEND_QM_ASSIGN) {
                        tsource.set(v.index(), None);
                        op_array.opcodes[i].op1 = op_array.opcodes[src].op1;
                        make_nop(&mut op_array.opcodes[src]);
                        *opt_count += 1;
                    } else {
                        break;
                    }
                } else {
                    break;
                }
            },
            ZEND_CONCAT | ZEND_FAST_CONCAT => {
                concat(op_array, tsource, i, opt_count, &mut next);
            }
            ZEND_ADD
            | ZEND_SUB
            | ZEND_MUL
            | ZEND_DIV
            | ZEND_MOD
            | ZEND_SL
            | ZEND_SR
            | ZEND_IS_SMALLER
            | ZEND_IS_SMALLER_OR_EQUAL
            | ZEND_IS_IDENTICAL
            | ZEND_IS_NOT_IDENTICAL
            | ZEND_BOOL_XOR
            | ZEND_BW_OR
            | ZEND_BW_AND
            | ZEND_BW_XOR => {
                let op = &op_array.opcodes[i];
                if matches!(op.op1, Operand::Const(_)) && matches!(op.op2, Operand::Const(_)) {
                    next = Next::ConstBinary;
                }
            }
            ZEND_BW_NOT => {
                if matches!(op_array.opcodes[i].op1, Operand::Const(_)) {
                    next = Next::ConstUnary;
                }
            }
            ZEND_CAST => {
                if let Operand::Const(l) = op_array.opcodes[i].op1 {
                    let ext = op_array.opcodes[i].extended_value;
                    if let Some(mut result) = zend_operators::eval_cast(ext, lit(op_array, l)) {
                        literal_dtor(op_array, l);
                        let op = &mut op_array.opcodes[i];
                        op.opcode = ZEND_QM_ASSIGN;
                        op.extended_value = 0;
                        update_op1_const(op_array, i, &mut result, ctx.php_bugs);
                        *opt_count += 1;
                    }
                }
            }
            ZEND_STRLEN => {
                if let Operand::Const(l) = op_array.opcodes[i].op1 {
                    if let Some(mut result) = zend_operators::eval_strlen(lit(op_array, l)) {
                        literal_dtor(op_array, l);
                        op_array.opcodes[i].opcode = ZEND_QM_ASSIGN;
                        update_op1_const(op_array, i, &mut result, ctx.php_bugs);
                        *opt_count += 1;
                    }
                }
            }
            ZEND_RETURN | ZEND_EXIT => {
                let o = op_array.opcodes[i].op1;
                if let Operand::TmpVar(v) = o {
                    if let Some(src) = tsource.get(v.index()) {
                        if op_array.opcodes[src].opcode == ZEND_QM_ASSIGN {
                            // Only when nothing between reads T.
                            let reads = (src + 1..i).any(|k| {
                                let op = &op_array.opcodes[k];
                                same_raw(op.op1, o) || same_raw(op.op2, o)
                            });
                            if !reads {
                                // T = QM_ASSIGN X; RETURN T => RETURN X
                                tsource.set(v.index(), None);
                                op_array.opcodes[i].op1 = op_array.opcodes[src].op1;
                                make_nop(&mut op_array.opcodes[src]);
                                *opt_count += 1;
                            }
                        }
                    }
                }
            }
            ZEND_QM_ASSIGN => {
                let op = &op_array.opcodes[i];
                if op.op1 == op.result {
                    // T = QM_ASSIGN T
                    make_nop(&mut op_array.opcodes[i]);
                    *opt_count += 1;
                } else if let (Operand::TmpVar(v), Operand::TmpVar(_)) = (op.op1, op.result) {
                    if !used(v.index()) {
                        if let Some(src) = tsource.get(v.index()) {
                            let sop = op_array.opcodes[src].opcode;
                            if sop != ZEND_COPY_TMP
                                && sop != ZEND_ADD_ARRAY_ELEMENT
                                && sop != ZEND_ADD_ARRAY_UNPACK
                                && (sop != ZEND_DECLARE_LAMBDA_FUNCTION || src + 1 == i)
                            {
                                // T1 = ...; T2 = QM_ASSIGN T1 => T2 = ...
                                let result = op_array.opcodes[i].result;
                                op_array.opcodes[src].result = result;
                                tsource.set(v.index(), None);
                                if let Some(r) = slot(result) {
                                    tsource.set(r, Some(src));
                                }
                                make_nop(&mut op_array.opcodes[i]);
                                *opt_count += 1;
                            }
                        }
                    }
                }
            }
            _ => {}
        }

        // PHP's goto chain: optimize_bool may loop, and end in the constant folders.
        loop {
            match next {
                Next::Done => break,
                Next::Bool => {
                    next = Next::Done;
                    opcode = op_array.opcodes[i].opcode;
                    let o = op_array.opcodes[i].op1;
                    if matches!(o, Operand::Const(_)) {
                        next = Next::ConstUnary;
                        continue;
                    }
                    let Operand::TmpVar(v) = o else { break };
                    if used(v.index()) {
                        break;
                    }
                    let Some(src) = tsource.get(v.index()) else {
                        break;
                    };
                    let sop = op_array.opcodes[src].opcode;
                    let not = opcode == ZEND_BOOL_NOT;
                    match sop {
                        ZEND_BOOL_NOT | ZEND_BOOL => {
                            // T = BOOL_NOT(X); BOOL T => BOOL_NOT X (and the like)
                            tsource.set(v.index(), None);
                            op_array.opcodes[i].op1 = op_array.opcodes[src].op1;
                            if sop == ZEND_BOOL_NOT {
                                op_array.opcodes[i].opcode = if opcode == ZEND_BOOL {
                                    ZEND_BOOL_NOT
                                } else {
                                    ZEND_BOOL
                                };
                            }
                            make_nop(&mut op_array.opcodes[src]);
                            *opt_count += 1;
                            next = Next::Bool;
                        }
                        // PHP 8.2 folds these too, as the swapped opposite comparison:
                        // !(a < b) into b <= a, false where !(a < b) is true for a NAN.
                        // A JMPZ/JMPNZ of the BOOL_NOT still drops it (inverting the jump).
                        ZEND_IS_SMALLER | ZEND_IS_SMALLER_OR_EQUAL
                            if not
                                && !ctx.php_bugs.contains(PhpBugs::NEGATED_ORDERED_COMPARISON) => {}
                        ZEND_IS_EQUAL
                        | ZEND_IS_NOT_EQUAL
                        | ZEND_IS_IDENTICAL
                        | ZEND_IS_NOT_IDENTICAL
                        | ZEND_IS_SMALLER
                        | ZEND_IS_SMALLER_OR_EQUAL => {
                            if not {
                                let s = &mut op_array.opcodes[src];
                                s.opcode = match sop {
                                    ZEND_IS_EQUAL => ZEND_IS_NOT_EQUAL,
                                    ZEND_IS_NOT_EQUAL => ZEND_IS_EQUAL,
                                    ZEND_IS_IDENTICAL => ZEND_IS_NOT_IDENTICAL,
                                    ZEND_IS_NOT_IDENTICAL => ZEND_IS_IDENTICAL,
                                    // !(a < b) is b <= a, !(a <= b) is b < a.
                                    ZEND_IS_SMALLER => ZEND_IS_SMALLER_OR_EQUAL,
                                    _ => ZEND_IS_SMALLER,
                                };
                                if matches!(sop, ZEND_IS_SMALLER | ZEND_IS_SMALLER_OR_EQUAL) {
                                    std::mem::swap(&mut s.op1, &mut s.op2);
                                }
                            }
                            fold_into_source(op_array, tsource, i, src);
                            *opt_count += 1;
                        }
                        ZEND_ISSET_ISEMPTY_CV
                        | ZEND_ISSET_ISEMPTY_VAR
                        | ZEND_ISSET_ISEMPTY_DIM_OBJ
                        | ZEND_ISSET_ISEMPTY_PROP_OBJ
                        | ZEND_ISSET_ISEMPTY_STATIC_PROP
                        | ZEND_INSTANCEOF
                        | ZEND_TYPE_CHECK
                        | ZEND_DEFINED
                        | ZEND_IN_ARRAY
                        | ZEND_ARRAY_KEY_EXISTS
                            if !not =>
                        {
                            fold_into_source(op_array, tsource, i, src);
                            *opt_count += 1;
                        }
                        _ => {}
                    }
                }
                Next::ConstUnary => {
                    next = Next::Done;
                    let op = &op_array.opcodes[i];
                    if let Operand::Const(l) = op.op1 {
                        if let Some(mut result) =
                            zend_operators::eval_unary_op(op.opcode, lit(op_array, l))
                        {
                            literal_dtor(op_array, l);
                            op_array.opcodes[i].opcode = ZEND_QM_ASSIGN;
                            update_op1_const(op_array, i, &mut result, ctx.php_bugs);
                            *opt_count += 1;
                        }
                    }
                }
                Next::ConstBinary => {
                    next = Next::Done;
                    let op = &op_array.opcodes[i];
                    if let (Operand::Const(l1), Operand::Const(l2)) = (op.op1, op.op2) {
                        let result = zend_operators::eval_binary_op(
                            op.opcode,
                            lit(op_array, l1),
                            lit(op_array, l2),
                        );
                        if let Some(mut result) = result {
                            literal_dtor(op_array, l1);
                            literal_dtor(op_array, l2);
                            let op = &mut op_array.opcodes[i];
                            op.opcode = ZEND_QM_ASSIGN;
                            op.op2 = Operand::Unused(0);
                            update_op1_const(op_array, i, &mut result, ctx.php_bugs);
                            *opt_count += 1;
                        }
                    }
                }
            }
        }

        // The op now defines its result here.
        if let Some(r) = slot(op_array.opcodes[i].result) {
            tsource.set(r, Some(i));
        }
        i += 1;
    }
}

/// `COPY_NODE(src->result, opline->result); SET_VAR_SOURCE(src); MAKE_NOP(opline)`: the
/// source writes the BOOL's result directly.
fn fold_into_source(op_array: &mut OpArray, tsource: &mut VarSources, i: usize, src: usize) {
    let result = op_array.opcodes[i].result;
    op_array.opcodes[src].result = result;
    if let Some(r) = slot(result) {
        tsource.set(r, Some(src));
    }
    make_nop(&mut op_array.opcodes[i]);
}

/// Equal type and raw value (`op->op1_type == t && op->op1.var == v`).
fn same_raw(a: Operand, b: Operand) -> bool {
    a.op_type() == b.op_type() && raw(a) == raw(b)
}

fn raw(o: Operand) -> u32 {
    match o {
        Operand::Unused(n) => n,
        Operand::JmpAddr(t) => t.as_u32(),
        Operand::Const(l) => l.as_u32(),
        Operand::TmpVar(v) | Operand::Var(v) | Operand::Cv(v) => v.as_u32(),
    }
}

/// The CONCAT/FAST_CONCAT case of `zend_optimize_block`.
fn concat(
    op_array: &mut OpArray,
    tsource: &mut VarSources,
    i: usize,
    opt_count: &mut u32,
    next: &mut Next,
) {
    let op = &op_array.opcodes[i];
    if matches!(op.op1, Operand::Const(_)) && matches!(op.op2, Operand::Const(_)) {
        *next = Next::ConstBinary;
        return;
    }
    if let (Operand::TmpVar(v), Operand::Const(l2)) = (op.op1, op.op2) {
        if let Some(src) = tsource.get(v.index()) {
            let sop = &op_array.opcodes[src];
            if matches!(sop.opcode, ZEND_CONCAT | ZEND_FAST_CONCAT) {
                if let Operand::Const(sl2) = sop.op2 {
                    // T1 = CONCAT X, "a"; T2 = CONCAT T1, "b" => T2 = CONCAT X, "ab"
                    let a = to_string(lit(op_array, sl2));
                    let c = to_string(lit(op_array, l2));
                    if let (Some(mut a), Some(c)) = (a, c) {
                        tsource.set(v.index(), None);
                        op_array.opcodes[i].op1 = op_array.opcodes[src].op1;
                        a.0.extend_from_slice(&c.0);
                        set_lit(op_array, l2, Literal::String(a));
                        set_lit(op_array, sl2, Literal::Null);
                        make_nop(&mut op_array.opcodes[src]);
                        *opt_count += 1;
                    }
                }
            }
        }
    }
    for which in [1, 2] {
        let o = if which == 1 {
            op_array.opcodes[i].op1
        } else {
            op_array.opcodes[i].op2
        };
        let Some(s) = slot(o) else { continue };
        let Some(src) = tsource.get(s) else { continue };
        let sop = &op_array.opcodes[src];
        if sop.opcode == ZEND_CAST
            && sop.extended_value == u32::from(IS_STRING)
            && !matches!(sop.op1, Operand::Const(_))
        {
            // T1 = CAST(string, X); CONCAT T1, Y => CONCAT X, Y
            tsource.set(s, None);
            let x = sop.op1;
            if which == 1 {
                op_array.opcodes[i].op1 = x;
            } else {
                op_array.opcodes[i].op2 = x;
            }
            make_nop(&mut op_array.opcodes[src]);
            *opt_count += 1;
        }
    }
    let empty = |op_array: &OpArray, o: Operand| match o {
        Operand::Const(l) => matches!(lit(op_array, l), Literal::String(s) if s.0.is_empty()),
        _ => false,
    };
    let op = &op_array.opcodes[i];
    let fast_source = |o: Operand| match o {
        Operand::Const(_) => true,
        Operand::TmpVar(v) => tsource.get(v.index()).is_some_and(|s| {
            matches!(
                op_array.opcodes[s].opcode,
                ZEND_FAST_CONCAT | ZEND_ROPE_END | ZEND_FETCH_CONSTANT | ZEND_FETCH_CLASS_CONSTANT
            )
        }),
        _ => false,
    };
    if empty(op_array, op.op1) {
        // CONCAT "", X => CAST(string, X)
        if let Operand::Const(l) = op.op1 {
            literal_dtor(op_array, l);
        }
        let op = &mut op_array.opcodes[i];
        op.opcode = ZEND_CAST;
        op.extended_value = u32::from(IS_STRING);
        op.op1 = op.op2;
        op.op2 = Operand::Unused(0);
        *opt_count += 1;
    } else if empty(op_array, op.op2) {
        // CONCAT X, "" => CAST(string, X)
        if let Operand::Const(l) = op.op2 {
            literal_dtor(op_array, l);
        }
        let op = &mut op_array.opcodes[i];
        op.opcode = ZEND_CAST;
        op.extended_value = u32::from(IS_STRING);
        op.op2 = Operand::Unused(0);
        *opt_count += 1;
    } else if op.opcode == ZEND_CONCAT && fast_source(op.op1) && fast_source(op.op2) {
        // Both sides are strings already.
        op_array.opcodes[i].opcode = ZEND_FAST_CONCAT;
        *opt_count += 1;
    }
}
