//! Whether an op may throw, judged by the inferred types of its operands: mirrors
//! Zend/Optimizer/zend_inference.c's `zend_may_throw_ex` / `zend_may_throw` as PHP 8.2 has
//! them.
//!
//! "Throw" covers every run-time diagnostic an op can raise (undefined-variable warnings,
//! type errors, division by zero), a destructor it may run, and a magic method it may call:
//! an op for which this answers `false` can be removed when its result is unused. DCE
//! (PASS_14) and SCCP's `try_remove_definition` ask it.
//!
//! Guarantees: never panics on a malformed op (a missing SSA use or literal reads as "may
//! be anything"), and answers `true` for every opcode it does not know.

use zend_inference::{const_type, mb, VarInfo};
use zend_ir::dump::SsaRange;
use zend_ir::opcode::*;
use zend_ir::{Literal, OpArray, Operand, Script, IS_CV, IS_TMP_VAR, IS_UNUSED, IS_VAR};
use zend_ssa::{Ssa, SsaOp, SsaVar};

/// `get_ssa_var_info` for an operand without SSA information.
pub const UNKNOWN_INFO: u32 = mb::UNDEF
    | mb::RC1
    | mb::RCN
    | mb::REF
    | mb::INDIRECT
    | mb::ANY
    | mb::ARRAY_KEY_ANY
    | mb::ARRAY_OF_ANY
    | mb::ARRAY_OF_REF;

/// Values whose release may run a destructor (zend_inference.h's condition on
/// `MAY_BE_OBJECT|MAY_BE_RESOURCE|MAY_BE_ARRAY_OF_*`).
const DTOR: u32 = mb::OBJECT
    | mb::RESOURCE
    | (mb::OBJECT << mb::SHIFT)
    | (mb::RESOURCE << mb::SHIFT)
    | mb::ARRAY_OF_ARRAY;

/// `ZEND_BIND_REF`, `ZEND_BIND_IMPLICIT`, `ZEND_BIND_EXPLICIT` (BIND_STATIC's
/// `extended_value` flags; the rest is the byte offset of the static variable's bucket).
pub const ZEND_BIND_REF: u32 = 1;
pub const ZEND_BIND_IMPLICIT: u32 = 2;
pub const ZEND_BIND_EXPLICIT: u32 = 4;
/// `sizeof(Bucket)`: BIND_STATIC's offset unit.
const BUCKET_SIZE: u32 = 32;

const ZEND_ACC_PUBLIC: u32 = 1;
const ZEND_ACC_HAS_TYPE_HINTS: u32 = 1 << 8;
/// Class flag `ZEND_ACC_ALLOW_DYNAMIC_PROPERTIES` (PHP 8.2).
const ZEND_ACC_ALLOW_DYNAMIC_PROPERTIES: u32 = 1 << 15;
/// `_ZEND_TYPE_MASK` (8.2): the type bits of a `zend_type`, without the arg_info flags.
const ZEND_TYPE_MASK: u32 = (1 << 25) - 1;

/// Reads the inferred types of one op_array.
pub struct TypeView<'a> {
    pub op_array: &'a OpArray,
    pub ssa: &'a Ssa,
    pub vars: &'a [VarInfo],
}

impl TypeView<'_> {
    fn literal(&self, o: Operand) -> Option<&Literal> {
        match o {
            Operand::Const(l) => self.op_array.literals.get(l.index()),
            _ => None,
        }
    }

    /// `get_ssa_var_info`.
    pub fn var_type(&self, v: Option<SsaVar>) -> u32 {
        v.and_then(|v| self.vars.get(v.index()))
            .map_or(UNKNOWN_INFO, |i| i.type_)
    }

    /// `_ssa_op1_info` / `_ssa_op2_info`: a constant's type, or the used variable's.
    pub fn operand_info(&self, o: Operand, used: Option<SsaVar>) -> u32 {
        if let Operand::Const(_) = o {
            return self.literal(o).map_or(UNKNOWN_INFO, const_type);
        }
        self.var_type(used)
    }

    /// `OP1_INFO()` of op `n`.
    pub fn op1_info(&self, n: usize) -> u32 {
        match (self.op_array.opcodes.get(n), self.ssa.ops.get(n)) {
            (Some(o), Some(s)) => self.operand_info(o.op1, s.op1_use),
            _ => UNKNOWN_INFO,
        }
    }

    /// `OP2_INFO()` of op `n`.
    pub fn op2_info(&self, n: usize) -> u32 {
        match (self.op_array.opcodes.get(n), self.ssa.ops.get(n)) {
            (Some(o), Some(s)) => self.operand_info(o.op2, s.op2_use),
            _ => UNKNOWN_INFO,
        }
    }

    /// `OPn_HAS_RANGE()` with `OPn_MIN_RANGE()`/`OPn_MAX_RANGE()` (8.2: a constant has a
    /// range only when it is an integer).
    fn operand_range(&self, o: Operand, used: Option<SsaVar>) -> Option<SsaRange> {
        match o {
            Operand::Const(_) => match self.literal(o) {
                Some(Literal::Long(v)) => Some(SsaRange {
                    min: *v,
                    max: *v,
                    underflow: false,
                    overflow: false,
                }),
                _ => None,
            },
            Operand::Unused(_) | Operand::JmpAddr(_) => None,
            _ => {
                let info = self.vars.get(used?.index())?;
                info.has_range.then_some(info.range)
            }
        }
    }
}

/// `zend_may_throw`: op `n` of the view's op_array, with its operands' inferred types.
/// `script` resolves the classes `ASSIGN_OBJ` looks into.
pub fn may_throw(view: &TypeView, script: &Script, n: usize) -> bool {
    let t1 = view.op1_info(n);
    let t2 = view.op2_info(n);
    may_throw_ex(view, script, n, t1, t2)
}

/// `zend_may_throw_ex`: [`may_throw`] with the operand types given.
pub fn may_throw_ex(view: &TypeView, script: &Script, n: usize, t1: u32, t2: u32) -> bool {
    let (Some(opline), Some(ssa_op)) = (view.op_array.opcodes.get(n), view.ssa.ops.get(n)) else {
        return true;
    };
    let op1_type = opline.op1.op_type();
    let op2_type = opline.op2.op_type();
    let opcode = opline.opcode;

    if op1_type == IS_CV {
        if t1 & mb::UNDEF != 0 {
            match opcode {
                ZEND_UNSET_VAR | ZEND_ISSET_ISEMPTY_VAR => return true,
                ZEND_ISSET_ISEMPTY_DIM_OBJ
                | ZEND_ISSET_ISEMPTY_PROP_OBJ
                | ZEND_ASSIGN
                | ZEND_ASSIGN_DIM
                | ZEND_ASSIGN_REF
                | ZEND_BIND_GLOBAL
                | ZEND_BIND_STATIC
                | ZEND_FETCH_DIM_IS
                | ZEND_FETCH_OBJ_IS
                | ZEND_SEND_REF
                | ZEND_UNSET_CV
                | ZEND_ISSET_ISEMPTY_CV
                | ZEND_MAKE_REF
                | ZEND_FETCH_DIM_W => {}
                // An undefined-variable warning.
                _ => return true,
            }
        }
    } else if op1_type & (IS_TMP_VAR | IS_VAR) != 0 && t1 & mb::RC1 != 0 && t1 & DTOR != 0 {
        match opcode {
            ZEND_CASE
            | ZEND_CASE_STRICT
            | ZEND_FE_FETCH_R
            | ZEND_FE_FETCH_RW
            | ZEND_FETCH_LIST_R
            | ZEND_QM_ASSIGN
            | ZEND_SEND_VAL
            | ZEND_SEND_VAL_EX
            | ZEND_SEND_VAR
            | ZEND_SEND_VAR_EX
            | ZEND_SEND_FUNC_ARG
            | ZEND_SEND_VAR_NO_REF
            | ZEND_SEND_VAR_NO_REF_EX
            | ZEND_SEND_REF
            | ZEND_SEPARATE
            | ZEND_END_SILENCE
            | ZEND_MAKE_REF => {}
            // Freeing the operand may run a destructor.
            _ => return true,
        }
    }

    if op2_type == IS_CV {
        if t2 & mb::UNDEF != 0
            && !matches!(opcode, ZEND_ASSIGN_REF | ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW)
        {
            return true;
        }
    } else if op2_type & (IS_TMP_VAR | IS_VAR) != 0
        && t2 & mb::RC1 != 0
        && t2 & DTOR != 0
        && !matches!(opcode, ZEND_ASSIGN | ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW)
    {
        return true;
    }

    let op2_range = || view.operand_range(opline.op2, ssa_op.op2_use);
    // Division or modulo by a divisor whose range may contain 0.
    let div_by_zero = || op2_range().map_or(true, |r| r.min <= 0 && r.max >= 0);
    let shift_may_fail = || op2_range().map_or(true, |r| r.min < 0);
    let scalar_ops = mb::STRING | mb::ARRAY | mb::OBJECT | mb::RESOURCE;
    let int_ops = mb::STRING | mb::DOUBLE | mb::ARRAY | mb::OBJECT | mb::RESOURCE;
    let any_of = |mask: u32| t1 & mask != 0 || t2 & mask != 0;
    let only = |t: u32, m: u32| t & mb::ANY == m;

    match opcode {
        ZEND_NOP
        | ZEND_IS_IDENTICAL
        | ZEND_IS_NOT_IDENTICAL
        | ZEND_QM_ASSIGN
        | ZEND_JMP
        | ZEND_CHECK_VAR
        | ZEND_MAKE_REF
        | ZEND_BEGIN_SILENCE
        | ZEND_END_SILENCE
        | ZEND_FREE
        | ZEND_FE_FREE
        | ZEND_SEPARATE
        | ZEND_TYPE_CHECK
        | ZEND_DEFINED
        | ZEND_ISSET_ISEMPTY_THIS
        | ZEND_COALESCE
        | ZEND_SWITCH_LONG
        | ZEND_SWITCH_STRING
        | ZEND_MATCH
        | ZEND_ISSET_ISEMPTY_VAR
        | ZEND_ISSET_ISEMPTY_CV
        | ZEND_FUNC_NUM_ARGS
        | ZEND_FUNC_GET_ARGS
        | ZEND_COPY_TMP
        | ZEND_CASE_STRICT
        | ZEND_JMP_NULL => false,
        // Named arguments may be unknown.
        ZEND_SEND_VAR | ZEND_SEND_VAL | ZEND_SEND_REF | ZEND_SEND_VAR_EX | ZEND_SEND_FUNC_ARG
        | ZEND_CHECK_FUNC_ARG => op2_type == zend_ir::IS_CONST,
        // Resolved at compile time.
        ZEND_INIT_FCALL => false,
        ZEND_BIND_GLOBAL => {
            if view
                .op_array
                .opcodes
                .get(n + 1)
                .is_some_and(|o| o.opcode == ZEND_BIND_GLOBAL)
            {
                may_throw(view, script, n + 1)
            } else {
                false
            }
        }
        ZEND_ADD => {
            if only(t1, mb::ARRAY) && only(t2, mb::ARRAY) {
                return false;
            }
            any_of(scalar_ops)
        }
        ZEND_DIV => div_by_zero() || any_of(scalar_ops),
        ZEND_SUB | ZEND_MUL | ZEND_POW => any_of(scalar_ops),
        ZEND_MOD => div_by_zero() || any_of(int_ops) || shift_may_fail(),
        ZEND_SL | ZEND_SR => any_of(int_ops) || shift_may_fail(),
        ZEND_CONCAT | ZEND_FAST_CONCAT => any_of(mb::ARRAY | mb::OBJECT),
        ZEND_BW_OR | ZEND_BW_AND | ZEND_BW_XOR => {
            if only(t1, mb::STRING) && only(t2, mb::STRING) {
                return false;
            }
            any_of(int_ops)
        }
        ZEND_BW_NOT => {
            t1 & (mb::NULL
                | mb::FALSE
                | mb::TRUE
                | mb::DOUBLE
                | mb::ARRAY
                | mb::OBJECT
                | mb::RESOURCE)
                != 0
        }
        ZEND_PRE_INC | ZEND_POST_INC | ZEND_PRE_DEC | ZEND_POST_DEC => {
            t1 & (mb::ARRAY | mb::OBJECT | mb::RESOURCE) != 0
        }
        ZEND_BOOL_NOT | ZEND_JMPZ | ZEND_JMPNZ | ZEND_JMPZ_EX | ZEND_JMPNZ_EX | ZEND_BOOL
        | ZEND_JMP_SET => t1 & mb::OBJECT != 0,
        ZEND_BOOL_XOR => any_of(mb::OBJECT),
        ZEND_IS_EQUAL
        | ZEND_IS_NOT_EQUAL
        | ZEND_IS_SMALLER
        | ZEND_IS_SMALLER_OR_EQUAL
        | ZEND_CASE
        | ZEND_SPACESHIP => {
            if only(t1, mb::NULL) || only(t2, mb::NULL) {
                return false;
            }
            any_of(mb::OBJECT | mb::ARRAY_OF_ARRAY | (mb::OBJECT << mb::SHIFT))
        }
        ZEND_ASSIGN_OP => {
            let ext = opline.extended_value;
            let is = |op: zend_ir::Opcode| ext == u32::from(op.0);
            if is(ZEND_ADD) {
                if only(t1, mb::ARRAY) && only(t2, mb::ARRAY) {
                    return false;
                }
                any_of(scalar_ops)
            } else if is(ZEND_DIV) || is(ZEND_MOD) {
                div_by_zero() || any_of(scalar_ops)
            } else if is(ZEND_SUB) || is(ZEND_MUL) || is(ZEND_POW) {
                any_of(scalar_ops)
            } else if is(ZEND_SL) || is(ZEND_SR) {
                any_of(scalar_ops) || shift_may_fail()
            } else if is(ZEND_CONCAT) {
                any_of(mb::ARRAY | mb::OBJECT)
            } else if is(ZEND_BW_OR) || is(ZEND_BW_AND) || is(ZEND_BW_XOR) {
                if only(t1, mb::STRING) && only(t2, mb::STRING) {
                    return false;
                }
                any_of(scalar_ops)
            } else {
                true
            }
        }
        ZEND_ASSIGN | ZEND_UNSET_VAR => {
            if opcode == ZEND_ASSIGN && t1 & mb::REF != 0 {
                return true;
            }
            t1 & DTOR != 0
        }
        ZEND_BIND_STATIC => {
            if t1 & DTOR != 0 {
                // The old value's destructor may throw.
                return true;
            }
            // A constant-expression initializer may throw when evaluated.
            let offset =
                opline.extended_value & !(ZEND_BIND_REF | ZEND_BIND_IMPLICIT | ZEND_BIND_EXPLICIT);
            let index = (offset / BUCKET_SIZE) as usize;
            view.op_array
                .static_variables
                .as_ref()
                .and_then(|s| s.get(index))
                .map_or(true, |(_, v)| matches!(v, Literal::Ast(_)))
        }
        ZEND_ASSIGN_DIM => {
            if next_op1_may_be_undef(view, n) {
                return true;
            }
            t1 & (mb::OBJECT
                | mb::RESOURCE
                | mb::TRUE
                | mb::FALSE
                | mb::STRING
                | mb::LONG
                | mb::DOUBLE)
                != 0
                || op2_type == IS_UNUSED
                || t2 & (mb::UNDEF | mb::ARRAY | mb::OBJECT | mb::RESOURCE) != 0
        }
        ZEND_ASSIGN_OBJ => assign_obj_may_throw(view, script, n, ssa_op, t1),
        ZEND_ROPE_INIT | ZEND_ROPE_ADD | ZEND_ROPE_END => t2 & (mb::ARRAY | mb::OBJECT) != 0,
        ZEND_INIT_ARRAY => {
            op2_type != IS_UNUSED && t2 & (mb::ARRAY | mb::OBJECT | mb::RESOURCE) != 0
        }
        ZEND_ADD_ARRAY_ELEMENT => {
            op2_type == IS_UNUSED || t2 & (mb::ARRAY | mb::OBJECT | mb::RESOURCE) != 0
        }
        ZEND_STRLEN => t1 & mb::ANY != mb::STRING,
        ZEND_COUNT => t1 & mb::ANY != mb::ARRAY,
        ZEND_RECV_INIT => {
            if matches!(view.literal(opline.op2), Some(Literal::Ast(_)) | None) {
                return true;
            }
            let op_array = view.op_array;
            if op_array.fn_flags & ZEND_ACC_HAS_TYPE_HINTS == 0 {
                return false;
            }
            let arg_num = match opline.op1 {
                Operand::Unused(n) => n,
                _ => return true,
            };
            let info = if arg_num >= 1 && arg_num <= op_array.num_args {
                op_array.arg_info.get(arg_num as usize - 1)
            } else if op_array.fn_flags & zend_ir::ZEND_ACC_VARIADIC != 0 {
                op_array.arg_info.get(op_array.num_args as usize)
            } else {
                return false;
            };
            info.map_or(true, |a| type_is_set(&a.type_))
        }
        ZEND_FETCH_IS => t2 & (mb::ARRAY | mb::OBJECT) != 0,
        // A float key may throw too: PHP 8.2's binary (8.2.36) keeps a dead isset($a[$f]) or
        // [][$f] ?? x with a float $f (the "Implicit conversion from float" deprecation), though
        // the zend_inference.c of other branches tests only ARRAY|OBJECT(|RESOURCE); found by
        // zopt fuzz (seed 237), fixture fz_dim_is_float_key.
        ZEND_ISSET_ISEMPTY_DIM_OBJ => {
            t1 & mb::OBJECT != 0 || t2 & (mb::DOUBLE | mb::ARRAY | mb::OBJECT) != 0
        }
        ZEND_FETCH_DIM_IS => {
            t1 & mb::OBJECT != 0 || t2 & (mb::DOUBLE | mb::ARRAY | mb::OBJECT | mb::RESOURCE) != 0
        }
        ZEND_CAST => match opline.extended_value as u8 {
            zend_ir::types::IS_LONG | zend_ir::types::IS_DOUBLE | zend_ir::types::IS_ARRAY => {
                t1 & mb::OBJECT != 0
            }
            zend_ir::types::IS_STRING => t1 & (mb::ARRAY | mb::OBJECT) != 0,
            _ => false,
        },
        ZEND_ARRAY_KEY_EXISTS => {
            t2 & mb::ANY != mb::ARRAY || t1 & (mb::ARRAY | mb::OBJECT | mb::RESOURCE) != 0
        }
        ZEND_FE_RESET_R | ZEND_FE_RESET_RW => t1 & (mb::ANY | mb::REF) != mb::ARRAY,
        ZEND_FE_FETCH_R => {
            t1 & (mb::ANY | mb::REF) != mb::ARRAY
                || (op2_type == IS_CV && t2 & mb::RC1 != 0 && t2 & DTOR != 0)
        }
        ZEND_FETCH_DIM_W | ZEND_FETCH_LIST_W => {
            t1 & (mb::FALSE
                | mb::TRUE
                | mb::LONG
                | mb::DOUBLE
                | mb::STRING
                | mb::OBJECT
                | mb::RESOURCE
                | mb::REF)
                != 0
                || t2 & (mb::RESOURCE | mb::ARRAY | mb::OBJECT) != 0
                || op2_type == IS_UNUSED
        }
        _ => true,
    }
}

/// `ZEND_TYPE_IS_SET`.
fn type_is_set(t: &zend_ir::ZendType) -> bool {
    t.type_mask & ZEND_TYPE_MASK != 0 || !matches!(t.names, zend_ir::TypeNames::None)
}

/// Whether the OP_DATA after op `n` reads a CV that may be undefined.
fn next_op1_may_be_undef(view: &TypeView, n: usize) -> bool {
    match view.op_array.opcodes.get(n + 1) {
        Some(next) if next.op1.op_type() == IS_CV => view.op1_info(n + 1) & mb::UNDEF != 0,
        _ => false,
    }
}

/// The `ZEND_ASSIGN_OBJ` case: a write to a declared, untyped, accessible property (or a
/// dynamic one where allowed) of an object of a known plain class cannot throw.
fn assign_obj_may_throw(
    view: &TypeView,
    script: &Script,
    n: usize,
    ssa_op: &SsaOp,
    t1: u32,
) -> bool {
    if t1 & (mb::ANY & !mb::OBJECT) != 0 {
        return true;
    }
    if next_op1_may_be_undef(view, n) {
        return true;
    }
    // PHP tests `ssa_op->op1_use` for being non-zero: variable #0 reads as "no use".
    let Some(used) = ssa_op.op1_use.filter(|v| v.as_u32() != 0) else {
        return true;
    };
    let Some(info) = view.vars.get(used.index()) else {
        return true;
    };
    let Some(class) = info.ce.as_ref() else {
        return true;
    };
    if info.is_instanceof {
        return true;
    }
    let lcname = class.name.to_ascii_lowercase();
    let ce = script
        .class_table
        .iter()
        .find(|(k, _)| k.as_bytes() == lcname)
        .map(|(_, ce)| ce);
    // An internal class: only stdClass has no create_object handler.
    if ce.is_none() && !lcname.eq_ignore_ascii_case(b"stdclass") {
        return true;
    }
    if let Some(ce) = ce {
        let has_method = |m: &[u8]| ce.methods.iter().any(|(k, _)| k.as_bytes() == m);
        if ce.parent_name.is_some() || has_method(b"__get") || has_method(b"__set") {
            return true;
        }
    }
    // A name known only at run time may be invalid (empty, or starting with NUL).
    let Some(Literal::String(prop)) = view.literal(view.op_array.opcodes[n].op2) else {
        return true;
    };
    if prop.as_bytes().first() == Some(&0) {
        return true;
    }
    // stdClass has no declared properties and allows dynamic ones.
    let Some(ce) = ce else {
        return false;
    };
    match ce
        .properties
        .iter()
        .find(|p| p.name.as_bytes() == prop.as_bytes())
    {
        Some(p) => {
            if type_is_set(&p.type_) {
                return true;
            }
            p.flags & ZEND_ACC_PUBLIC == 0
                && !view
                    .op_array
                    .scope
                    .as_ref()
                    .is_some_and(|s| s.as_bytes().eq_ignore_ascii_case(p.ce.as_bytes()))
        }
        None => ce.ce_flags & ZEND_ACC_ALLOW_DYNAMIC_PROPERTIES == 0,
    }
}
