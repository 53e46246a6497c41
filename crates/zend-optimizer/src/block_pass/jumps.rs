//! `zend_jmp_optimization`: jump threading over the CFG. A jump to a block holding only a
//! JMP (or a conditional jump on the same value) goes straight to where that one leads; a
//! jump to the next block disappears; a JMP to a RETURN becomes the RETURN; conditional
//! jumps whose two successors meet become a FREE/CHECK_VAR of their operand.

use zend_cfg::{BlockFlags, BlockId};
use zend_ir::opcode::*;
use zend_ir::{OpArray, Operand};

use super::cfg::BlockCfg;
use super::{
    add_literal_copy, convert_to_free_op1, inv_cond, make_nop, ZEND_ACC_HAS_FINALLY_BLOCK,
};

/// `get_target_block` / `get_follow_block`: successor `n` of `b`, skipping empty
/// unprotected blocks (and retargeting `b` past them).
fn target_block(cfg: &mut BlockCfg, b: usize, n: usize, opt_count: &mut u32) -> usize {
    let mut t = cfg.succ(b, n);
    if cfg.blocks[t].len == 0 && !cfg.blocks[t].flags.intersects(BlockFlags::PROTECTED) {
        loop {
            t = cfg.succ(t, 0);
            if cfg.blocks[t].len != 0 || cfg.blocks[t].flags.intersects(BlockFlags::PROTECTED) {
                break;
            }
        }
        cfg.blocks[b].successors[n] = BlockId::from(t);
        *opt_count += 1;
    }
    t
}

/// `get_next_block`: the next reachable block after `b` in op order, past empty ones.
fn next_block(cfg: &BlockCfg, b: usize) -> Option<usize> {
    let mut n = b + 1;
    loop {
        if n >= cfg.blocks.len() {
            return None;
        }
        if cfg.blocks[n].reachable() {
            break;
        }
        n += 1;
    }
    while cfg.blocks[n].len == 0 && !cfg.blocks[n].flags.intersects(BlockFlags::PROTECTED) {
        n = cfg.succ(n, 0);
    }
    Some(n)
}

/// `SAME_VAR`: same operand type and number.
fn same_var(a: Operand, b: Operand) -> bool {
    a == b
}

fn inv_ex_cond(opcode: zend_ir::Opcode) -> zend_ir::Opcode {
    if opcode == ZEND_JMPZ_EX {
        ZEND_JMPNZ
    } else {
        ZEND_JMPZ
    }
}

fn inv_ex_cond_ex(opcode: zend_ir::Opcode) -> zend_ir::Opcode {
    if opcode == ZEND_JMPZ_EX {
        ZEND_JMPNZ_EX
    } else {
        ZEND_JMPZ_EX
    }
}

/// The plain conditional jump of an `_EX` one (`opcode - 3`).
fn plain_cond(opcode: zend_ir::Opcode) -> zend_ir::Opcode {
    if opcode == ZEND_JMPZ_EX {
        ZEND_JMPZ
    } else {
        ZEND_JMPNZ
    }
}

/// `zend_jmp_optimization` for block `b`: only blocks ending in a jump have anything to
/// thread, so the others cost a look at their last op.
pub(crate) fn jmp_optimization(
    op_array: &mut OpArray,
    cfg: &mut BlockCfg,
    b: usize,
    opt_count: &mut u32,
) {
    let Some(last) = cfg.blocks[b].last() else {
        return;
    };
    if matches!(
        op_array.opcodes[last].opcode,
        ZEND_JMP
            | ZEND_JMP_SET
            | ZEND_COALESCE
            | ZEND_JMP_NULL
            | ZEND_JMPZ
            | ZEND_JMPNZ
            | ZEND_JMPZ_EX
            | ZEND_JMPNZ_EX
    ) {
        optimize_jump(op_array, cfg, b, last, opt_count);
    }
}

/// [`jmp_optimization`] of block `b` ending in the jump `last` (the arms of its `switch`
/// are the opcodes it checks for).
fn optimize_jump(
    op_array: &mut OpArray,
    cfg: &mut BlockCfg,
    b: usize,
    last: usize,
    opt_count: &mut u32,
) {
    // The hit list stops threading when a chain comes back to a block it already went to.
    let mut hits: Vec<usize> = Vec::new();
    let check_loop = |hits: &mut Vec<usize>, next: usize| -> bool {
        if hits.contains(&next) {
            false
        } else {
            hits.push(next);
            true
        }
    };
    let opcode = op_array.opcodes[last].opcode;
    match opcode {
        ZEND_JMP => {
            let mut target = target_block(cfg, b, 0, opt_count);
            while cfg.blocks[target].len == 1 {
                let t = &op_array.opcodes[cfg.blocks[target].start as usize];
                if t.opcode != ZEND_JMP {
                    break;
                }
                // JMP L; L: JMP L1 => JMP L1
                let next = cfg.succ(target, 0);
                if !check_loop(&mut hits, next) {
                    break;
                }
                cfg.blocks[b].successors[0] = BlockId::from(next);
                *opt_count += 1;
                target = target_block(cfg, b, 0, opt_count);
            }
            if Some(target) == next_block(cfg, b) {
                // JMP to the next block.
                make_nop(&mut op_array.opcodes[last]);
                *opt_count += 1;
                cfg.blocks[b].len -= 1;
            } else if cfg.blocks[target].len == 1 {
                let t = op_array.opcodes[cfg.blocks[target].start as usize];
                if matches!(
                    t.opcode,
                    ZEND_RETURN | ZEND_RETURN_BY_REF | ZEND_GENERATOR_RETURN | ZEND_EXIT
                ) && op_array.fn_flags & ZEND_ACC_HAS_FINALLY_BLOCK == 0
                {
                    // JMP L; L: RETURN X => RETURN X
                    let mut copy = t;
                    if let Operand::Const(l) = copy.op1 {
                        copy.op1 = Operand::Const(add_literal_copy(op_array, l));
                    }
                    op_array.opcodes[last] = copy;
                    cfg.blocks[b].successors_count = 0;
                    *opt_count += 1;
                }
            }
        }
        ZEND_JMP_SET | ZEND_COALESCE | ZEND_JMP_NULL => {
            let mut target = target_block(cfg, b, 0, opt_count);
            while cfg.blocks[target].len == 1 {
                let t = &op_array.opcodes[cfg.blocks[target].start as usize];
                if t.opcode != ZEND_JMP {
                    break;
                }
                // JMP_SET X, L; L: JMP L2 => JMP_SET X, L2
                let next = cfg.succ(target, 0);
                if !check_loop(&mut hits, next) {
                    break;
                }
                cfg.blocks[b].successors[0] = BlockId::from(next);
                *opt_count += 1;
                target = target_block(cfg, b, 0, opt_count);
            }
        }
        ZEND_JMPZ | ZEND_JMPNZ => {
            let mut target = target_block(cfg, b, 0, opt_count);
            while cfg.blocks[target].len == 1 {
                let last_op = &op_array.opcodes[last];
                let t = &op_array.opcodes[cfg.blocks[target].start as usize];
                let next = if t.opcode == ZEND_JMP {
                    // JMPZ X, L; L: JMP L2 => JMPZ X, L2
                    cfg.succ(target, 0)
                } else if t.opcode == last_op.opcode && same_var(t.op1, last_op.op1) {
                    // JMPZ X, L; L: JMPZ X, L2 => JMPZ X, L2
                    cfg.succ(target, 0)
                } else if t.opcode == inv_cond(last_op.opcode) && same_var(t.op1, last_op.op1) {
                    // JMPZ X, L; L: JMPNZ X, L2 => JMPZ X, L+1
                    cfg.succ(target, 1)
                } else {
                    break;
                };
                if !check_loop(&mut hits, next) {
                    break;
                }
                cfg.blocks[b].successors[0] = BlockId::from(next);
                *opt_count += 1;
                target = target_block(cfg, b, 0, opt_count);
            }

            let follow = target_block(cfg, b, 1, opt_count);
            if target == follow {
                // Both ways lead to the same place: only the operand's free remains.
                convert_to_free_op1(op_array, last);
                if op_array.opcodes[last].opcode == ZEND_NOP {
                    cfg.blocks[b].len -= 1;
                }
                cfg.blocks[b].successors_count = 1;
                *opt_count += 1;
            } else if cfg.blocks[follow].len == 1 {
                let fstart = cfg.blocks[follow].start as usize;
                if op_array.opcodes[fstart].opcode == ZEND_JMP {
                    if cfg.succ(b, 0) == cfg.succ(follow, 0) {
                        // JMPZ X, L1; JMP L1 => FREE X; JMP L1
                        convert_to_free_op1(op_array, last);
                        if op_array.opcodes[last].opcode == ZEND_NOP {
                            cfg.blocks[b].len -= 1;
                        }
                        cfg.blocks[b].successors[0] = BlockId::from(follow);
                        cfg.blocks[b].successors_count = 1;
                        *opt_count += 1;
                    } else if !cfg.blocks[follow]
                        .flags
                        .intersects(BlockFlags::TARGET | BlockFlags::PROTECTED)
                    {
                        let next = next_block(cfg, follow);
                        if Some(target) == next {
                            // JMPZ X, L1; JMP L2; L1: => JMPNZ X, L2; L1:
                            let next = target;
                            let op = &mut op_array.opcodes[last];
                            op.opcode = inv_cond(op.opcode);
                            cfg.blocks[b].successors[0] = cfg.blocks[follow].successors[0];
                            cfg.blocks[b].successors[1] = BlockId::from(next);
                            cfg.blocks[follow].flags.remove(BlockFlags::REACHABLE);
                            make_nop(&mut op_array.opcodes[fstart]);
                            cfg.blocks[follow].len = 0;
                            cfg.blocks[next].flags |= BlockFlags::FOLLOW;
                        }
                    }
                }
            }
        }
        ZEND_JMPNZ_EX | ZEND_JMPZ_EX => {
            let mut target = target_block(cfg, b, 0, opt_count);
            while cfg.blocks[target].len == 1 {
                let last_op = &op_array.opcodes[last];
                let t = &op_array.opcodes[cfg.blocks[target].start as usize];
                let on_value = same_var(t.op1, last_op.result) || same_var(t.op1, last_op.op1);
                let same_result = raw_var(t.result) == raw_var(last_op.result);
                let next = if t.opcode == ZEND_JMP {
                    cfg.succ(target, 0)
                } else if t.opcode == plain_cond(last_op.opcode) && on_value {
                    // T = JMPZ_EX X, L1; L1: JMPZ {X|T}, L2 => T = JMPZ_EX X, L2
                    cfg.succ(target, 0)
                } else if t.opcode == last_op.opcode && same_result && on_value {
                    cfg.succ(target, 0)
                } else if t.opcode == inv_ex_cond(last_op.opcode) && on_value {
                    // T = JMPZ_EX X, L1; L1: JMPNZ {X|T}, L2 => T = JMPZ_EX X, L1+1
                    cfg.succ(target, 1)
                } else if t.opcode == inv_ex_cond_ex(last_op.opcode) && same_result && on_value {
                    cfg.succ(target, 1)
                } else if t.opcode == ZEND_BOOL && on_value {
                    // Y = JMPZ_EX X, L1; L1: Z = BOOL Y => Z = JMPZ_EX X, L1+1 (PHP relies on
                    // jumps being processed in op order for this to hold).
                    let result = t.result;
                    op_array.opcodes[last].result = retype(op_array.opcodes[last].result, result);
                    cfg.succ(target, 0)
                } else {
                    break;
                };
                if !check_loop(&mut hits, next) {
                    break;
                }
                cfg.blocks[b].successors[0] = BlockId::from(next);
                *opt_count += 1;
                target = target_block(cfg, b, 0, opt_count);
            }

            let follow = target_block(cfg, b, 1, opt_count);
            if target == follow {
                // T = JMPZ_EX X, L+1 => T = BOOL X
                let op = &mut op_array.opcodes[last];
                op.opcode = ZEND_BOOL;
                op.op2 = Operand::Unused(0);
                cfg.blocks[b].successors_count = 1;
                *opt_count += 1;
            }
        }
        _ => {}
    }
}

/// The variable number of a result (`result.var`), whatever its type.
fn raw_var(o: Operand) -> Option<u32> {
    o.var().map(|v| v.as_u32())
}

/// `last_op->result.var = target->result.var`: the number changes, the type stays.
fn retype(old: Operand, new: Operand) -> Operand {
    match (old, new.var()) {
        (Operand::TmpVar(_), Some(v)) => Operand::TmpVar(v),
        (Operand::Var(_), Some(v)) => Operand::Var(v),
        (Operand::Cv(_), Some(v)) => Operand::Cv(v),
        _ => old,
    }
}
