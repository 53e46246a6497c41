//! Putting a constant into an operand, as `zend_optimizer_update_op1_const` and
//! `zend_optimizer_update_op2_const` (zend_optimizer.c) do for the block pass: some ops
//! refuse a constant, some change opcode (SEND_VAR → SEND_VAL, CASE → IS_EQUAL), class and
//! function names gain their lowercased twin literal and a run-time cache slot, numeric
//! string dimensions become integer keys.
//!
//! Kept private to the block pass until the shared versions in [`crate::helpers`] land.

use zend_ir::opcode::*;
use zend_ir::{Literal, LiteralId, OpArray, Operand, PhpStr};

use super::make_nop;

const ZEND_EXTRA_VALUE: u32 = 1;
const ZEND_LAST_CATCH: u32 = 1;
const ZEND_ISEMPTY: u32 = 1;
/// `ZEND_FETCH_OBJ_FLAGS` of `extended_value`.
const ZEND_FETCH_OBJ_FLAGS: u32 = 3;

fn add_literal(op_array: &mut OpArray, value: Literal) -> LiteralId {
    crate::helpers::add_literal(op_array, value)
}

/// `alloc_cache_slots`: `count` pointers of run-time cache; returns the first offset.
fn alloc_cache_slots(op_array: &mut OpArray, count: u32) -> u32 {
    let offset = op_array.cache_size;
    op_array.cache_size += count * 8;
    offset
}

/// `drop_leading_backslash`.
fn drop_leading_backslash(s: &PhpStr) -> PhpStr {
    match s.0.first() {
        Some(b'\\') => PhpStr(s.0[1..].to_vec()),
        _ => s.clone(),
    }
}

/// `TO_STRING_NOWARN`: arrays and other non-scalars refuse.
fn to_string_nowarn(val: Literal) -> Option<Literal> {
    match val {
        Literal::String(_) => Some(val),
        Literal::Array(_) | Literal::Ast(_) => None,
        other => zend_operators::get_string(&other).map(Literal::String),
    }
}

/// A class or function name plus its lowercased twin, as the name-taking ops expect.
fn add_name(op_array: &mut OpArray, name: &PhpStr) -> LiteralId {
    let name = drop_leading_backslash(name);
    let lc = name.to_lowercase();
    let id = add_literal(op_array, Literal::String(name));
    add_literal(op_array, Literal::String(lc));
    id
}

/// `zend_optimizer_update_op1_const`.
pub(crate) fn update_op1_const(op_array: &mut OpArray, i: usize, val: Literal) -> bool {
    let opcode = op_array.opcodes[i].opcode;
    let string = |v: &Literal| match v {
        Literal::String(s) => Some(s.clone()),
        _ => None,
    };
    let id = match opcode {
        ZEND_OP_DATA => {
            if i > 0
                && matches!(
                    op_array.opcodes[i - 1].opcode,
                    ZEND_ASSIGN_OBJ_REF | ZEND_ASSIGN_STATIC_PROP_REF
                )
            {
                return false;
            }
            add_literal(op_array, val)
        }
        ZEND_FREE | ZEND_CHECK_VAR => {
            make_nop(&mut op_array.opcodes[i]);
            return true;
        }
        ZEND_SEND_VAR_EX
        | ZEND_SEND_FUNC_ARG
        | ZEND_FETCH_DIM_W
        | ZEND_FETCH_DIM_RW
        | ZEND_FETCH_DIM_FUNC_ARG
        | ZEND_FETCH_DIM_UNSET
        | ZEND_FETCH_LIST_W
        | ZEND_ASSIGN_DIM
        | ZEND_RETURN_BY_REF
        | ZEND_INSTANCEOF
        | ZEND_MAKE_REF
        | ZEND_SEPARATE
        | ZEND_SEND_VAR_NO_REF
        | ZEND_SEND_VAR_NO_REF_EX
        | ZEND_VERIFY_RETURN_TYPE
        | ZEND_COPY_TMP
        | ZEND_FETCH_CLASS_NAME => return false,
        ZEND_CATCH => {
            let Some(s) = string(&val) else { return false };
            let id = add_name(op_array, &s);
            let last = op_array.opcodes[i].extended_value & ZEND_LAST_CATCH;
            op_array.opcodes[i].extended_value = alloc_cache_slots(op_array, 1) | last;
            id
        }
        ZEND_DEFINED | ZEND_NEW | ZEND_INIT_STATIC_METHOD_CALL | ZEND_FETCH_CLASS_CONSTANT => {
            let Some(s) = string(&val) else { return false };
            let id = add_name(op_array, &s);
            let op2_const = matches!(op_array.opcodes[i].op2, Operand::Const(_));
            match opcode {
                ZEND_DEFINED => {
                    op_array.opcodes[i].extended_value = alloc_cache_slots(op_array, 1);
                }
                ZEND_NEW => {
                    op_array.opcodes[i].op2 = Operand::Unused(alloc_cache_slots(op_array, 1));
                }
                ZEND_INIT_STATIC_METHOD_CALL if !op2_const => {
                    op_array.opcodes[i].result = Operand::Unused(alloc_cache_slots(op_array, 1));
                }
                ZEND_FETCH_CLASS_CONSTANT if !op2_const => {
                    op_array.opcodes[i].extended_value = alloc_cache_slots(op_array, 1);
                }
                _ => {}
            }
            id
        }
        ZEND_ASSIGN_STATIC_PROP_OP
        | ZEND_ASSIGN_STATIC_PROP
        | ZEND_ASSIGN_STATIC_PROP_REF
        | ZEND_FETCH_STATIC_PROP_R
        | ZEND_FETCH_STATIC_PROP_W
        | ZEND_FETCH_STATIC_PROP_RW
        | ZEND_FETCH_STATIC_PROP_IS
        | ZEND_FETCH_STATIC_PROP_UNSET
        | ZEND_FETCH_STATIC_PROP_FUNC_ARG
        | ZEND_UNSET_STATIC_PROP
        | ZEND_ISSET_ISEMPTY_STATIC_PROP
        | ZEND_PRE_INC_STATIC_PROP
        | ZEND_PRE_DEC_STATIC_PROP
        | ZEND_POST_INC_STATIC_PROP
        | ZEND_POST_DEC_STATIC_PROP => {
            let Some(v) = to_string_nowarn(val) else {
                return false;
            };
            let id = add_literal(op_array, v);
            let ext = op_array.opcodes[i].extended_value;
            if matches!(op_array.opcodes[i].op2, Operand::Const(_))
                && (ext & !ZEND_FETCH_OBJ_FLAGS) + 8 == op_array.cache_size
            {
                op_array.cache_size += 8;
            } else {
                op_array.opcodes[i].extended_value =
                    alloc_cache_slots(op_array, 3) | (ext & ZEND_FETCH_OBJ_FLAGS);
            }
            id
        }
        ZEND_SEND_VAR => {
            op_array.opcodes[i].opcode = ZEND_SEND_VAL;
            add_literal(op_array, val)
        }
        ZEND_CASE => {
            op_array.opcodes[i].opcode = ZEND_IS_EQUAL;
            add_literal(op_array, val)
        }
        ZEND_CASE_STRICT => {
            op_array.opcodes[i].opcode = ZEND_IS_IDENTICAL;
            add_literal(op_array, val)
        }
        ZEND_ECHO => {
            let v = match val {
                Literal::String(_) => val,
                other => {
                    match zend_operators::eval_cast(u32::from(zend_ir::types::IS_STRING), &other) {
                        Some(s) => s,
                        None => other,
                    }
                }
            };
            let empty = matches!(&v, Literal::String(s) if s.0.is_empty());
            let id = add_literal(op_array, v);
            if empty {
                make_nop(&mut op_array.opcodes[i]);
                return true;
            }
            id
        }
        ZEND_CONCAT
        | ZEND_FAST_CONCAT
        | ZEND_FETCH_R
        | ZEND_FETCH_W
        | ZEND_FETCH_RW
        | ZEND_FETCH_IS
        | ZEND_FETCH_UNSET
        | ZEND_FETCH_FUNC_ARG
        | ZEND_ISSET_ISEMPTY_VAR
        | ZEND_UNSET_VAR => {
            let Some(v) = to_string_nowarn(val) else {
                return false;
            };
            if opcode == ZEND_CONCAT && matches!(op_array.opcodes[i].op2, Operand::Const(_)) {
                op_array.opcodes[i].opcode = ZEND_FAST_CONCAT;
            }
            add_literal(op_array, v)
        }
        _ => add_literal(op_array, val),
    };
    op_array.opcodes[i].op1 = Operand::Const(id);
    true
}

/// `zend_optimizer_update_op2_const`.
pub(crate) fn update_op2_const(op_array: &mut OpArray, i: usize, val: Literal) -> bool {
    let opcode = op_array.opcodes[i].opcode;
    let string = |v: &Literal| match v {
        Literal::String(s) => Some(s.clone()),
        _ => None,
    };
    let op1_const = matches!(op_array.opcodes[i].op1, Operand::Const(_));
    let id = match opcode {
        ZEND_ASSIGN_REF | ZEND_FAST_CALL => return false,
        ZEND_FETCH_CLASS | ZEND_INSTANCEOF => {
            let Some(s) = string(&val) else { return false };
            let id = add_name(op_array, &s);
            op_array.opcodes[i].extended_value = alloc_cache_slots(op_array, 1);
            id
        }
        ZEND_INIT_FCALL_BY_NAME => {
            let Some(s) = string(&val) else { return false };
            let id = add_name(op_array, &s);
            op_array.opcodes[i].result = Operand::Unused(alloc_cache_slots(op_array, 1));
            id
        }
        ZEND_ASSIGN_STATIC_PROP
        | ZEND_ASSIGN_STATIC_PROP_REF
        | ZEND_FETCH_STATIC_PROP_R
        | ZEND_FETCH_STATIC_PROP_W
        | ZEND_FETCH_STATIC_PROP_RW
        | ZEND_FETCH_STATIC_PROP_IS
        | ZEND_FETCH_STATIC_PROP_UNSET
        | ZEND_FETCH_STATIC_PROP_FUNC_ARG
        | ZEND_UNSET_STATIC_PROP
        | ZEND_ISSET_ISEMPTY_STATIC_PROP
        | ZEND_PRE_INC_STATIC_PROP
        | ZEND_PRE_DEC_STATIC_PROP
        | ZEND_POST_INC_STATIC_PROP
        | ZEND_POST_DEC_STATIC_PROP
        | ZEND_ASSIGN_STATIC_PROP_OP => {
            let Some(s) = string(&val) else { return false };
            let id = add_name(op_array, &s);
            if !op1_const {
                // ZEND_RETURNS_FUNCTION | ZEND_ISEMPTY | ZEND_FETCH_OBJ_FLAGS survive.
                let keep = op_array.opcodes[i].extended_value
                    & (1 << 3 | ZEND_ISEMPTY | ZEND_FETCH_OBJ_FLAGS);
                op_array.opcodes[i].extended_value = alloc_cache_slots(op_array, 1) | keep;
            }
            id
        }
        ZEND_INIT_DYNAMIC_CALL => match &val {
            Literal::String(s) => {
                if s.0.contains(&b':') {
                    return false;
                }
                let lc = drop_leading_backslash(s).to_lowercase();
                if matches!(
                    lc.as_bytes(),
                    b"extract"
                        | b"compact"
                        | b"get_defined_vars"
                        | b"func_num_args"
                        | b"func_get_arg"
                        | b"func_get_args"
                ) {
                    return false;
                }
                op_array.opcodes[i].opcode = ZEND_INIT_FCALL_BY_NAME;
                let id = add_name(op_array, s);
                op_array.opcodes[i].result = Operand::Unused(alloc_cache_slots(op_array, 1));
                id
            }
            _ => add_literal(op_array, val),
        },
        ZEND_INIT_METHOD_CALL | ZEND_INIT_STATIC_METHOD_CALL => {
            let Some(s) = string(&val) else { return false };
            let lc = s.to_lowercase();
            let id = add_literal(op_array, Literal::String(s));
            add_literal(op_array, Literal::String(lc));
            if opcode == ZEND_INIT_METHOD_CALL || !op1_const {
                op_array.opcodes[i].result = Operand::Unused(alloc_cache_slots(op_array, 2));
            }
            id
        }
        ZEND_ASSIGN_OBJ
        | ZEND_ASSIGN_OBJ_REF
        | ZEND_FETCH_OBJ_R
        | ZEND_FETCH_OBJ_W
        | ZEND_FETCH_OBJ_RW
        | ZEND_FETCH_OBJ_IS
        | ZEND_FETCH_OBJ_UNSET
        | ZEND_FETCH_OBJ_FUNC_ARG
        | ZEND_UNSET_OBJ
        | ZEND_PRE_INC_OBJ
        | ZEND_PRE_DEC_OBJ
        | ZEND_POST_INC_OBJ
        | ZEND_POST_DEC_OBJ
        | ZEND_ASSIGN_OBJ_OP
        | ZEND_ISSET_ISEMPTY_PROP_OBJ => {
            let Some(v) = to_string_nowarn(val) else {
                return false;
            };
            let id = add_literal(op_array, v);
            let slot = alloc_cache_slots(op_array, 3);
            match opcode {
                ZEND_ASSIGN_OBJ_OP => {
                    if let Some(data) = op_array.opcodes.get_mut(i + 1) {
                        data.extended_value = slot;
                    }
                }
                ZEND_ISSET_ISEMPTY_PROP_OBJ => {
                    let e = op_array.opcodes[i].extended_value & ZEND_ISEMPTY;
                    op_array.opcodes[i].extended_value = slot | e;
                }
                _ => op_array.opcodes[i].extended_value = slot,
            }
            id
        }
        ZEND_ASSIGN_DIM_OP
        | ZEND_ISSET_ISEMPTY_DIM_OBJ
        | ZEND_ASSIGN_DIM
        | ZEND_UNSET_DIM
        | ZEND_FETCH_DIM_R
        | ZEND_FETCH_DIM_W
        | ZEND_FETCH_DIM_RW
        | ZEND_FETCH_DIM_IS
        | ZEND_FETCH_DIM_FUNC_ARG
        | ZEND_FETCH_DIM_UNSET
        | ZEND_FETCH_LIST_R
        | ZEND_FETCH_LIST_W => {
            if let Literal::String(s) = &val {
                if let Some(index) = zend_operators::handle_numeric_str(&s.0) {
                    let id = add_literal(op_array, Literal::Long(index));
                    add_literal(op_array, val.clone());
                    op_array.literal_extra.push((id, ZEND_EXTRA_VALUE));
                    op_array.literal_extra.sort_by_key(|(l, _)| l.0);
                    op_array.opcodes[i].op2 = Operand::Const(id);
                    return true;
                }
            }
            add_literal(op_array, val)
        }
        ZEND_ADD_ARRAY_ELEMENT | ZEND_INIT_ARRAY => {
            let v = match &val {
                Literal::String(s) => match zend_operators::handle_numeric_str(&s.0) {
                    Some(index) => Literal::Long(index),
                    None => val,
                },
                _ => val,
            };
            add_literal(op_array, v)
        }
        ZEND_ROPE_INIT | ZEND_ROPE_ADD | ZEND_ROPE_END | ZEND_CONCAT | ZEND_FAST_CONCAT => {
            let Some(v) = to_string_nowarn(val) else {
                return false;
            };
            if opcode == ZEND_CONCAT && op1_const {
                op_array.opcodes[i].opcode = ZEND_FAST_CONCAT;
            }
            add_literal(op_array, v)
        }
        _ => add_literal(op_array, val),
    };
    op_array.opcodes[i].op2 = Operand::Const(id);
    true
}
