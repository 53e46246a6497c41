//! Mirrors `zend_optimizer_pass1` (pass1.c): simple local optimizations in one forward walk
//! — constant operands of CONCAT made strings, constant expressions evaluated (binary and
//! unary operators, casts, strlen), persistent, collected and class constants substituted,
//! `defined()` of a persistent constant, `define()` of a literal turned into DECLARE_CONST,
//! calls of functions whose answer is fixed (function_exists, extension_loaded, constant,
//! dirname, ini_get...) evaluated, and conditional jumps on a constant resolved.
//!
//! A folded value goes into the ops that read the result (`zend_optimizer_replace_by_const`);
//! when one of them cannot take a constant the op becomes a QM_ASSIGN of it.
//!
//! Guarantees: only ops whose value is known at compile time change; the op count never
//! changes (folded ops become NOPs), so jump targets stay valid.

use zend_ir::opcode::*;
use zend_ir::{Literal, OpArray, OpNum, OpcodeSet, Operand, PhpStr};

use crate::ctx::{ClassLookup, OptimizerCtx, Root};
use crate::helpers::{self, literal_dtor, make_nop};
use crate::level::PASS_15;
use crate::provenance::ChangeKind;
use crate::PhpBugs;

/// `replace_by_const_or_qm_assign`: op `i` computes `result`; its readers get the constant
/// and the op goes, or it stays as `QM_ASSIGN result`.
fn replace_by_const_or_qm_assign(
    op_array: &mut OpArray,
    i: usize,
    result: Literal,
    php_bugs: PhpBugs,
) {
    let op = op_array.opcodes[i];
    if let Operand::Const(l) = op.op1 {
        literal_dtor(op_array, l);
    }
    if let Operand::Const(l) = op.op2 {
        literal_dtor(op_array, l);
    }
    // PHP walks with the result's type and number even when the result is unused: ops
    // after it whose operand is unused with the same number (SET_UNUSED's -1: DO_* calls,
    // NOPs) get the constant, as in PHP 8.2.
    let replaced = helpers::replace_by_const(op_array, i + 1, op.result, result.clone(), php_bugs);
    if replaced {
        make_nop(&mut op_array.opcodes[i]);
    } else {
        let op = &mut op_array.opcodes[i];
        op.opcode = ZEND_QM_ASSIGN;
        op.extended_value = 0;
        op.op2 = helpers::UNUSED;
        let mut result = result;
        helpers::update_op1_const(op_array, i, &mut result, php_bugs);
    }
}

fn literal(op_array: &OpArray, operand: Operand) -> Option<&Literal> {
    match operand {
        Operand::Const(l) => op_array.literals.get(l.index()),
        _ => None,
    }
}

/// CONCAT and FAST_CONCAT read strings: a constant operand of another type becomes one
/// (an array becomes "Array", as `convert_to_string` makes it).
fn concat_operand_to_string(op_array: &mut OpArray, operand: Operand) {
    if let Operand::Const(l) = operand {
        let lit = &mut op_array.literals[l.index()];
        if !matches!(lit, Literal::String(_)) {
            let s = match &*lit {
                Literal::Array(_) => Some(PhpStr::from("Array")),
                other => zend_operators::get_string(other),
            };
            if let Some(s) = s {
                *lit = Literal::String(s);
            }
        }
    }
}

/// The op before `i`, skipping NOPs.
fn prev_non_nop(op_array: &OpArray, i: usize) -> Option<usize> {
    (0..i)
        .rev()
        .find(|&j| op_array.opcodes[j].opcode != ZEND_NOP)
}

/// The opcodes [`run`] looks at (its match's arms): the other ops, most of them, are
/// skipped by one table test instead of the match's indirect jump.
static HANDLED: OpcodeSet = OpcodeSet::of(&[
    ZEND_CONCAT,
    ZEND_FAST_CONCAT,
    ZEND_ADD,
    ZEND_SUB,
    ZEND_MUL,
    ZEND_DIV,
    ZEND_POW,
    ZEND_MOD,
    ZEND_SL,
    ZEND_SR,
    ZEND_BW_OR,
    ZEND_BW_AND,
    ZEND_BW_XOR,
    ZEND_IS_EQUAL,
    ZEND_IS_NOT_EQUAL,
    ZEND_IS_SMALLER,
    ZEND_IS_SMALLER_OR_EQUAL,
    ZEND_IS_IDENTICAL,
    ZEND_IS_NOT_IDENTICAL,
    ZEND_BOOL_XOR,
    ZEND_SPACESHIP,
    ZEND_CASE,
    ZEND_CASE_STRICT,
    ZEND_ASSIGN_OP,
    ZEND_CAST,
    ZEND_BW_NOT,
    ZEND_BOOL_NOT,
    ZEND_FETCH_CONSTANT,
    ZEND_FETCH_CLASS_CONSTANT,
    ZEND_DO_ICALL,
    ZEND_STRLEN,
    ZEND_DEFINED,
    ZEND_DECLARE_CONST,
    ZEND_JMPZ_EX,
    ZEND_JMPNZ_EX,
    ZEND_JMPZ,
    ZEND_JMPNZ,
    ZEND_RETURN,
    ZEND_RETURN_BY_REF,
    ZEND_GENERATOR_RETURN,
    ZEND_EXIT,
    ZEND_THROW,
    ZEND_MATCH_ERROR,
    ZEND_CATCH,
    ZEND_FAST_CALL,
    ZEND_FAST_RET,
    ZEND_JMP,
    ZEND_FE_RESET_R,
    ZEND_FE_RESET_RW,
    ZEND_FE_FETCH_R,
    ZEND_FE_FETCH_RW,
    ZEND_JMP_SET,
    ZEND_COALESCE,
    ZEND_ASSERT_CHECK,
    ZEND_JMP_NULL,
    ZEND_VERIFY_NEVER_TYPE,
]);

/// `zend_optimizer_pass1`.
pub fn run(op_array: &mut OpArray, ctx: &mut OptimizerCtx) {
    let mut collect_constants = ctx.optimization_level & PASS_15 != 0
        && ctx.current.root == Root::Main
        && ctx.current.dynamic.is_empty();
    let n = op_array.opcodes.len();
    let mut i = 0;
    while i < n {
        // Borrowed, not copied: most ops are none of those below. An arm that changes the
        // op_array and reads the op afterwards copies it first.
        let op = &op_array.opcodes[i];
        if !HANDLED.contains(op.opcode) {
            i += 1;
            continue;
        }
        match op.opcode {
            ZEND_CONCAT
            | ZEND_FAST_CONCAT
            | ZEND_ADD
            | ZEND_SUB
            | ZEND_MUL
            | ZEND_DIV
            | ZEND_POW
            | ZEND_MOD
            | ZEND_SL
            | ZEND_SR
            | ZEND_BW_OR
            | ZEND_BW_AND
            | ZEND_BW_XOR
            | ZEND_IS_EQUAL
            | ZEND_IS_NOT_EQUAL
            | ZEND_IS_SMALLER
            | ZEND_IS_SMALLER_OR_EQUAL
            | ZEND_IS_IDENTICAL
            | ZEND_IS_NOT_IDENTICAL
            | ZEND_BOOL_XOR
            | ZEND_SPACESHIP
            | ZEND_CASE
            | ZEND_CASE_STRICT => {
                let op = *op;
                if matches!(op.opcode, ZEND_CONCAT | ZEND_FAST_CONCAT) {
                    concat_operand_to_string(op_array, op.op1);
                    concat_operand_to_string(op_array, op.op2);
                }
                if let (Some(a), Some(b)) = (literal(op_array, op.op1), literal(op_array, op.op2)) {
                    if let Some(result) = helpers::eval_binary_op(op.opcode, a, b) {
                        ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
                            format!("{:?} of constants is {result:?}", op.opcode)
                        });
                        replace_by_const_or_qm_assign(op_array, i, result, ctx.php_bugs);
                    }
                }
            }
            ZEND_ASSIGN_OP if op.extended_value == u32::from(ZEND_CONCAT.0) => {
                // Unlike CONCAT's, which the compiler has already converted, `.=`'s
                // operand is converted when the op runs: a float with the `precision`
                // of that moment, an array with its warning then. Only what converts
                // the same way at any time, silently, is converted here.
                let op2 = op.op2;
                let invariant = literal(op_array, op2).is_some_and(|l| {
                    !matches!(l, Literal::Double(_) | Literal::Array(_))
                        || ctx.php_bugs.contains(PhpBugs::COMPOUND_CONCAT_CONVERTED)
                });
                if invariant {
                    concat_operand_to_string(op_array, op2);
                }
            }
            ZEND_CAST => {
                if let Some(a) = literal(op_array, op.op1) {
                    if let Some(result) = zend_operators::eval_cast(op.extended_value, a) {
                        ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
                            format!("cast of a constant is {result:?}")
                        });
                        replace_by_const_or_qm_assign(op_array, i, result, ctx.php_bugs);
                    }
                }
            }
            ZEND_BW_NOT | ZEND_BOOL_NOT => {
                if let Some(a) = literal(op_array, op.op1) {
                    if let Some(result) = zend_operators::eval_unary_op(op.opcode, a) {
                        ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
                            format!("{:?} of a constant is {result:?}", op.opcode)
                        });
                        replace_by_const_or_qm_assign(op_array, i, result, ctx.php_bugs);
                    }
                }
            }
            ZEND_FETCH_CONSTANT => fetch_constant(op_array, ctx, i),
            ZEND_FETCH_CLASS_CONSTANT => fetch_class_constant(op_array, ctx, i),
            ZEND_DO_ICALL => collect_constants &= do_icall(op_array, ctx, i, collect_constants),
            ZEND_STRLEN => {
                if let Some(result) =
                    literal(op_array, op.op1).and_then(zend_operators::eval_strlen)
                {
                    ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
                        format!("strlen of a constant is {result:?}")
                    });
                    replace_by_const_or_qm_assign(op_array, i, result, ctx.php_bugs);
                }
            }
            ZEND_DEFINED => {
                let known = match literal(op_array, op.op1) {
                    Some(Literal::String(name)) => {
                        helpers::get_persistent_constant(name.as_bytes(), ctx.with_file_cache)
                            .is_some()
                    }
                    _ => false,
                };
                if known {
                    ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
                        "defined() of a persistent constant".into()
                    });
                    replace_by_const_or_qm_assign(op_array, i, Literal::True, ctx.php_bugs);
                }
            }
            ZEND_DECLARE_CONST if collect_constants => {
                if let (Some(Literal::String(name)), Some(value)) =
                    (literal(op_array, op.op1), literal(op_array, op.op2))
                {
                    if !matches!(value, Literal::Ast(_)) {
                        let (name, value) = (name.clone(), value.clone());
                        helpers::collect_constant(ctx, &name, &value);
                    }
                }
            }
            ZEND_JMPZ_EX | ZEND_JMPNZ_EX => {
                if let Some(a) = literal(op_array, op.op1) {
                    let truth = zend_operators::is_true(a);
                    // Ti = JMPZ_EX(C, L) that never jumps is Ti = QM_ASSIGN(C).
                    if truth == (op.opcode == ZEND_JMPZ_EX) {
                        let Operand::Const(l) = op.op1 else {
                            unreachable!()
                        };
                        ctx.note(op_array, OpNum::from(i), ChangeKind::Rewritten, || {
                            "conditional jump on a constant never jumps".into()
                        });
                        op_array.literals[l.index()] =
                            if truth { Literal::True } else { Literal::False };
                        let o = &mut op_array.opcodes[i];
                        o.opcode = ZEND_QM_ASSIGN;
                        o.op2 = Operand::Unused(0);
                        i += 1;
                        continue;
                    }
                }
                collect_constants = false;
            }
            ZEND_JMPZ | ZEND_JMPNZ => {
                if let Some(a) = literal(op_array, op.op1) {
                    let truth = zend_operators::is_true(a);
                    let should_jmp = truth != (op.opcode == ZEND_JMPZ);
                    let Operand::Const(l) = op.op1 else {
                        unreachable!()
                    };
                    literal_dtor(op_array, l);
                    if should_jmp {
                        ctx.note(op_array, OpNum::from(i), ChangeKind::Rewritten, || {
                            "conditional jump on a constant always jumps".into()
                        });
                        let o = &mut op_array.opcodes[i];
                        o.opcode = ZEND_JMP;
                        o.op1 = o.op2;
                        o.op2 = Operand::Unused(0);
                    } else {
                        ctx.note(op_array, OpNum::from(i), ChangeKind::Removed, || {
                            "conditional jump on a constant never jumps".into()
                        });
                        make_nop(&mut op_array.opcodes[i]);
                        i += 1;
                        continue;
                    }
                }
                collect_constants = false;
            }
            ZEND_RETURN
            | ZEND_RETURN_BY_REF
            | ZEND_GENERATOR_RETURN
            | ZEND_EXIT
            | ZEND_THROW
            | ZEND_MATCH_ERROR
            | ZEND_CATCH
            | ZEND_FAST_CALL
            | ZEND_FAST_RET
            | ZEND_JMP
            | ZEND_FE_RESET_R
            | ZEND_FE_RESET_RW
            | ZEND_FE_FETCH_R
            | ZEND_FE_FETCH_RW
            | ZEND_JMP_SET
            | ZEND_COALESCE
            | ZEND_ASSERT_CHECK
            | ZEND_JMP_NULL
            | ZEND_VERIFY_NEVER_TYPE => collect_constants = false,
            _ => {}
        }
        i += 1;
    }
}

/// FETCH_CONSTANT of `__COMPILER_HALT_OFFSET__`, a persistent constant or (with PASS_15) a
/// constant the main script defined earlier.
fn fetch_constant(op_array: &mut OpArray, ctx: &mut OptimizerCtx, i: usize) {
    let op = op_array.opcodes[i];
    let Some(Literal::String(name)) = literal(op_array, op.op2) else {
        return;
    };
    let name = name.clone();
    if name.as_bytes() == b"__COMPILER_HALT_OFFSET__" {
        if let Some(offset) = ctx.script.compiler_halt_offset {
            if let Operand::Const(l) = op.op2 {
                literal_dtor(op_array, l);
            }
            ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
                format!("__COMPILER_HALT_OFFSET__ is {offset}")
            });
            replace_by_const_or_qm_assign(op_array, i, Literal::Long(offset as i64), ctx.php_bugs);
        }
        return;
    }
    let value = match helpers::get_persistent_constant(name.as_bytes(), ctx.with_file_cache) {
        Some(v) => v,
        None => match helpers::get_collected_constant(ctx, &name) {
            Some(v) => v,
            None => return,
        },
    };
    if matches!(value, Literal::Ast(_)) {
        return;
    }
    ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
        format!("constant {name} is {value:?}")
    });
    replace_by_const_or_qm_assign(op_array, i, value, ctx.php_bugs);
}

/// FETCH_CLASS_CONSTANT of a public constant of a class the optimizer sees (not a trait):
/// its value, or a persistent constant its constant expression names.
fn fetch_class_constant(op_array: &mut OpArray, ctx: &mut OptimizerCtx, i: usize) {
    let op = op_array.opcodes[i];
    let Some(Literal::String(name)) = literal(op_array, op.op2) else {
        return;
    };
    let name = name.clone();
    let value = match helpers::class_entry_from_op1(ctx, op_array, &op) {
        Some(ClassLookup::Script(ce)) => {
            let Some(cc) = ce.constants.iter().find(|c| c.name == name) else {
                return;
            };
            if cc.flags & helpers::ZEND_ACC_PPP_MASK != helpers::ZEND_ACC_PUBLIC
                || ce.ce_flags & helpers::ZEND_ACC_TRAIT != 0
            {
                return;
            }
            match &cc.value {
                Literal::Ast(ast) => {
                    let Some(c) = helpers::ast_constant_name(ast) else {
                        return;
                    };
                    match helpers::get_persistent_constant(c.as_bytes(), ctx.with_file_cache) {
                        Some(v) if !matches!(v, Literal::Ast(_)) => v,
                        _ => return,
                    }
                }
                v => v.clone(),
            }
        }
        Some(ClassLookup::Internal(class)) => {
            match helpers::internal_class_constant(
                class.to_ascii_lowercase().as_bytes(),
                name.as_bytes(),
            ) {
                Some(v) => v,
                None => return,
            }
        }
        None => return,
    };
    ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
        format!("class constant {name} is {value:?}")
    });
    replace_by_const_or_qm_assign(op_array, i, value, ctx.php_bugs);
}

/// DO_ICALL of `define("name", literal)` (collected; a DECLARE_CONST when its result is
/// unused) or of a function whose answer is fixed. `false` when the call was something
/// else: constants are no longer collected after an unknown call.
fn do_icall(op_array: &mut OpArray, ctx: &mut OptimizerCtx, i: usize, collect: bool) -> bool {
    let is_const_send = |op_array: &OpArray, j: usize| {
        let o = &op_array.opcodes[j];
        o.opcode == ZEND_SEND_VAL && matches!(o.op1, Operand::Const(_))
    };
    let Some(mut send1) = prev_non_nop(op_array, i) else {
        return false;
    };
    if !is_const_send(op_array, send1) {
        return false;
    }
    let mut send2 = None;
    if op_array.opcodes[send1].op2 == Operand::Unused(2) {
        send2 = Some(send1);
        match prev_non_nop(op_array, send1) {
            Some(s) if is_const_send(op_array, s) => send1 = s,
            _ => return false,
        }
    }
    let Some(init) = prev_non_nop(op_array, send1) else {
        return false;
    };
    let init_op = op_array.opcodes[init];
    let Some(Literal::String(fname)) = literal(op_array, init_op.op2) else {
        return false;
    };
    if init_op.opcode != ZEND_INIT_FCALL {
        return false;
    }
    let fname: PhpStr = fname.clone();
    let arg1 = literal(op_array, op_array.opcodes[send1].op1).cloned();
    if fname.as_bytes().eq_ignore_ascii_case(b"define") {
        if let (Some(Literal::String(cname)), Some(send2)) = (&arg1, send2) {
            if collect {
                if let Some(value) = literal(op_array, op_array.opcodes[send2].op1).cloned() {
                    helpers::collect_constant(ctx, cname, &value);
                }
            }
            let result_unused = op_array.opcodes[i].result.is_unused();
            if result_unused && !cname.0.windows(2).any(|w| w == b"::") {
                ctx.note(op_array, OpNum::from(i), ChangeKind::Rewritten, || {
                    format!("define({cname}, literal) is DECLARE_CONST")
                });
                let c1 = op_array.opcodes[send1].op1;
                let c2 = op_array.opcodes[send2].op1;
                let o = &mut op_array.opcodes[i];
                o.opcode = ZEND_DECLARE_CONST;
                o.op1 = c1;
                o.op2 = c2;
                o.result = Operand::Unused(0);
                if let Operand::Const(l) = init_op.op2 {
                    literal_dtor(op_array, l);
                }
                make_nop(&mut op_array.opcodes[init]);
                make_nop(&mut op_array.opcodes[send1]);
                make_nop(&mut op_array.opcodes[send2]);
            }
            // A define() keeps collecting.
            return true;
        }
    }
    if send2.is_none() {
        if let Some(Literal::String(arg)) = &arg1 {
            if let Some(result) = helpers::eval_special_func_call(
                fname.as_bytes(),
                arg.as_bytes(),
                ctx.with_file_cache,
            ) {
                ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
                    format!("{fname}({arg}) is {result:?}")
                });
                if let Operand::Const(l) = init_op.op2 {
                    literal_dtor(op_array, l);
                }
                make_nop(&mut op_array.opcodes[init]);
                if let Operand::Const(l) = op_array.opcodes[send1].op1 {
                    literal_dtor(op_array, l);
                }
                make_nop(&mut op_array.opcodes[send1]);
                replace_by_const_or_qm_assign(op_array, i, result, ctx.php_bugs);
                return true;
            }
        }
    }
    false
}
