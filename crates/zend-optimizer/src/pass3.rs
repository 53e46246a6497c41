//! Mirrors `zend_optimizer_pass3` (pass3.c, PHP 8.2: no JMPZNZ): jump optimisation in one
//! forward walk — a jump to a JMP or a NOP goes to the final target, a jump to the next op
//! disappears, `JMP` to a RETURN/EXIT becomes that RETURN (without finally blocks), a
//! conditional jump to a jump on the same condition skips it, and `JMPZ_EX` chains fold.
//!
//! Guarantees: the op count never changes; a jump only ever moves to an op that runs next
//! on its path anyway (cycles of jumps are followed once, as PHP's hit list does).

use zend_ir::opcode::*;
use zend_ir::{OpArray, OpNum, OpcodeSet, Operand};

use crate::ctx::OptimizerCtx;
use crate::helpers::{self, make_nop, ZEND_ACC_HAS_FINALLY_BLOCK};
use crate::provenance::ChangeKind;

fn jmp_target(operand: Operand) -> Option<usize> {
    match operand {
        Operand::JmpAddr(t) => Some(t.index()),
        _ => None,
    }
}

/// `INV_COND`.
fn inv_cond(opcode: zend_ir::Opcode) -> zend_ir::Opcode {
    if opcode == ZEND_JMPZ {
        ZEND_JMPNZ
    } else {
        ZEND_JMPZ
    }
}

/// `CHECK_LOOP`: records `target` in the hit list; `false` when it was there already.
fn check_loop(hitlist: &mut Vec<usize>, target: usize) -> bool {
    if hitlist.contains(&target) {
        return false;
    }
    hitlist.push(target);
    true
}

/// The opcodes [`run`] optimizes (its match's arms); the others are skipped by one table
/// test instead of the match's indirect jump.
static JUMPS: OpcodeSet = OpcodeSet::of(&[
    ZEND_JMP,
    ZEND_JMP_SET,
    ZEND_COALESCE,
    ZEND_JMPZ,
    ZEND_JMPNZ,
    ZEND_JMPZ_EX,
    ZEND_JMPNZ_EX,
]);

/// `zend_optimizer_pass3`.
pub fn run(op_array: &mut OpArray, ctx: &mut OptimizerCtx) {
    let n = op_array.opcodes.len();
    let mut hitlist: Vec<usize> = Vec::new();
    for i in 0..n {
        let opcode = op_array.opcodes[i].opcode;
        if !JUMPS.contains(opcode) {
            continue;
        }
        match opcode {
            ZEND_JMP => {
                hitlist.clear();
                let Some(mut target) = jmp_target(op_array.opcodes[i].op1) else {
                    continue;
                };
                let original = target;
                while target < n {
                    let t = &op_array.opcodes[target];
                    if t.opcode == ZEND_JMP {
                        let Some(next) = jmp_target(t.op1) else { break };
                        target = next;
                        if !check_loop(&mut hitlist, target) {
                            break;
                        }
                    } else if t.opcode == ZEND_NOP {
                        target += 1;
                    } else {
                        break;
                    }
                    op_array.opcodes[i].op1 = Operand::JmpAddr(OpNum::from(target));
                }
                if target != original {
                    ctx.note(op_array, OpNum::from(i), ChangeKind::Retargeted, || {
                        format!("JMP to op {original} goes on to op {target}")
                    });
                }
                if target == i + 1 {
                    ctx.note(op_array, OpNum::from(i), ChangeKind::Removed, || {
                        "JMP to the next op".into()
                    });
                    make_nop(&mut op_array.opcodes[i]);
                } else if target < n
                    && matches!(
                        op_array.opcodes[target].opcode,
                        ZEND_RETURN | ZEND_RETURN_BY_REF | ZEND_GENERATOR_RETURN | ZEND_EXIT
                    )
                    && op_array.fn_flags & ZEND_ACC_HAS_FINALLY_BLOCK == 0
                {
                    ctx.note(op_array, OpNum::from(i), ChangeKind::Rewritten, || {
                        format!("JMP to the return at op {target} returns here")
                    });
                    let mut copy = op_array.opcodes[target];
                    if let Operand::Const(l) = copy.op1 {
                        let value = op_array.literals[l.index()].clone();
                        copy.op1 = Operand::Const(helpers::add_literal(op_array, value));
                    }
                    op_array.opcodes[i] = copy;
                } else if i > 0
                    && matches!(op_array.opcodes[i - 1].opcode, ZEND_JMPZ | ZEND_JMPNZ)
                    && jmp_target(op_array.opcodes[i - 1].op2) == Some(target)
                {
                    ctx.note(op_array, OpNum::from(i - 1), ChangeKind::Removed, || {
                        "conditional jump to where the JMP after it goes".into()
                    });
                    helpers::convert_to_free_op1(op_array, i - 1);
                }
            }
            ZEND_JMP_SET | ZEND_COALESCE => {
                hitlist.clear();
                let Some(mut target) = jmp_target(op_array.opcodes[i].op2) else {
                    continue;
                };
                while target < n {
                    let t = &op_array.opcodes[target];
                    if t.opcode == ZEND_JMP {
                        let Some(next) = jmp_target(t.op1) else { break };
                        target = next;
                        if !check_loop(&mut hitlist, target) {
                            break;
                        }
                    } else if t.opcode == ZEND_NOP {
                        target += 1;
                    } else {
                        break;
                    }
                    op_array.opcodes[i].op2 = Operand::JmpAddr(OpNum::from(target));
                }
            }
            ZEND_JMPZ | ZEND_JMPNZ => {
                hitlist.clear();
                let Some(mut target) = jmp_target(op_array.opcodes[i].op2) else {
                    continue;
                };
                let op1 = op_array.opcodes[i].op1;
                while target < n {
                    let t = &op_array.opcodes[target];
                    if t.opcode == ZEND_JMP {
                        let Some(next) = jmp_target(t.op1) else { break };
                        target = next;
                        if !check_loop(&mut hitlist, target) {
                            break;
                        }
                    } else if t.opcode == opcode && t.op1 == op1 {
                        // Same condition, same sense: go where that jump goes.
                        let Some(next) = jmp_target(t.op2) else { break };
                        target = next;
                        if !check_loop(&mut hitlist, target) {
                            break;
                        }
                    } else if t.opcode == inv_cond(opcode) && t.op1 == op1 {
                        // Same condition, opposite sense: that jump never jumps.
                        target += 1;
                    } else if t.opcode == ZEND_NOP {
                        target += 1;
                    } else {
                        break;
                    }
                    op_array.opcodes[i].op2 = Operand::JmpAddr(OpNum::from(target));
                }
                if target == i + 1 {
                    ctx.note(op_array, OpNum::from(i), ChangeKind::Removed, || {
                        "conditional jump to the next op".into()
                    });
                    helpers::convert_to_free_op1(op_array, i);
                }
            }
            ZEND_JMPZ_EX | ZEND_JMPNZ_EX => {
                hitlist.clear();
                let Some(mut target) = jmp_target(op_array.opcodes[i].op2) else {
                    continue;
                };
                let (plain, inv_plain, inv_ex) = if opcode == ZEND_JMPZ_EX {
                    (ZEND_JMPZ, ZEND_JMPNZ, ZEND_JMPNZ_EX)
                } else {
                    (ZEND_JMPNZ, ZEND_JMPZ, ZEND_JMPZ_EX)
                };
                while target < n {
                    let me = &op_array.opcodes[i];
                    let t = &op_array.opcodes[target];
                    let same = t.op1 == me.result || t.op1 == me.op1;
                    let same_result = t.result.var() == me.result.var();
                    if t.opcode == ZEND_JMP {
                        let Some(next) = jmp_target(t.op1) else { break };
                        target = next;
                        if !check_loop(&mut hitlist, target) {
                            break;
                        }
                    } else if (t.opcode == plain || (t.opcode == opcode && same_result)) && same {
                        let Some(next) = jmp_target(t.op2) else { break };
                        target = next;
                        if !check_loop(&mut hitlist, target) {
                            break;
                        }
                    } else if (t.opcode == inv_plain || (t.opcode == inv_ex && same_result)) && same
                    {
                        target += 1;
                    } else if t.opcode == ZEND_BOOL && same {
                        // Y = JMPZ_EX(X, L1), L1: Z = BOOL(Y): Z = JMPZ_EX(X, L1+1). Unsafe in
                        // general, as PHP notes, but Y is only read on the branch path.
                        let result = t.result;
                        op_array.opcodes[i].result =
                            match (op_array.opcodes[i].result, result.var()) {
                                (Operand::TmpVar(_), Some(v)) => Operand::TmpVar(v),
                                (Operand::Var(_), Some(v)) => Operand::Var(v),
                                (r, _) => r,
                            };
                        target += 1;
                        if !check_loop(&mut hitlist, target) {
                            break;
                        }
                    } else if t.opcode == ZEND_NOP {
                        target += 1;
                    } else {
                        break;
                    }
                    op_array.opcodes[i].op2 = Operand::JmpAddr(OpNum::from(target));
                }
                if target == i + 1 {
                    ctx.note(op_array, OpNum::from(i), ChangeKind::Rewritten, || {
                        "JMPZ_EX to the next op is BOOL".into()
                    });
                    let o = &mut op_array.opcodes[i];
                    o.opcode = ZEND_BOOL;
                    o.op2 = Operand::Unused(0);
                }
            }
            _ => {}
        }
    }
}
