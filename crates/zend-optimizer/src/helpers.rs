//! The helpers of zend_optimizer.c every pass shares: adding literals, putting a constant
//! into an operand (`zend_optimizer_update_op1_const`, `zend_optimizer_update_op2_const`),
//! replacing a TMP/VAR by a constant in the ops that read it
//! (`zend_optimizer_replace_by_const`), constant and function evaluation at compile time,
//! persistent constants, the called function of an `INIT_*` op, and `MAKE_NOP`.
//!
//! What PHP reads from the running engine (persistent constants, internal functions and
//! their argument send modes, internal class constants and methods, loaded modules, system
//! ini entries) comes from `internal_table.rs`, generated from the PHP 8.2 binary as
//! `zopt conformance` runs it (`php -n` with OPcache) by tools/gen-optimizer-tables.php.
//!
//! Guarantees: every function leaves the op_array consistent (operands in range, the
//! `literal_extra` of a numeric-string dim literal set) and, where it declines a change,
//! unchanged in the same way PHP's helper leaves it.

use zend_ir::opcode::*;
use zend_ir::types::*;
use zend_ir::{
    Ast, AstBody, Literal, LiteralId, Op, OpArray, Operand, PhpDouble, PhpStr, VarNum,
    _ZEND_SEND_MODE_SHIFT, ZEND_ACC_VARIADIC, ZEND_AST_CONSTANT, ZEND_USER_FUNCTION,
};

use crate::ctx::{ClassLookup, FuncRef, OptimizerCtx};
use crate::environment::{self, Ini};
use crate::PhpBugs;

// Generated: kept exactly as the tool prints it.
#[rustfmt::skip]
#[path = "internal_table.rs"]
pub(crate) mod internal_table;

/// The TMP/VAR slots of an op_array, `last_var .. last_var + T`, read once: a walk over
/// every op that asks which temporary an operand names keeps the two counts in registers
/// (read through the op_array, they were reloaded after every store of the walk).
#[derive(Clone, Copy)]
pub(crate) struct Temporaries {
    first: u32,
    count: u32,
}

impl Temporaries {
    pub(crate) fn of(op_array: &OpArray) -> Temporaries {
        let first = op_array.last_var();
        Temporaries {
            first,
            // No variable number reaches past u32::MAX: with the count cut there, a number
            // below `first` wraps to one at least `count` (one test instead of two).
            count: op_array.T.min(u32::MAX - first),
        }
    }

    /// The TMP/VAR number (0-based above the CVs) of variable `v`, if it is one.
    #[inline(always)]
    pub(crate) fn number(self, v: VarNum) -> Option<usize> {
        let n = v.as_u32().wrapping_sub(self.first);
        (n < self.count).then_some(n as usize)
    }

    /// [`Temporaries::number`] of an operand, if it is a TMP/VAR.
    #[inline(always)]
    pub(crate) fn of_operand(self, operand: Operand) -> Option<usize> {
        match operand {
            Operand::TmpVar(v) | Operand::Var(v) => self.number(v),
            _ => None,
        }
    }
}

pub const ZEND_ACC_PUBLIC: u32 = 1 << 0;
pub const ZEND_ACC_PRIVATE: u32 = 1 << 2;
pub const ZEND_ACC_PPP_MASK: u32 = 0b111;
pub const ZEND_ACC_STATIC: u32 = 1 << 4;
pub const ZEND_ACC_FINAL: u32 = 1 << 5;
pub const ZEND_ACC_HAS_TYPE_HINTS: u32 = 1 << 8;
/// `ce_flags` bit of a trait.
pub const ZEND_ACC_TRAIT: u32 = 1 << 1;
pub const ZEND_ACC_DEPRECATED: u32 = 1 << 11;
pub const ZEND_ACC_RETURN_REFERENCE: u32 = 1 << 12;
pub const ZEND_ACC_HAS_FINALLY_BLOCK: u32 = 1 << 15;
pub const ZEND_FETCH_CLASS_SELF: u32 = 1;
pub const ZEND_FETCH_CLASS_MASK: u32 = 0x0f;
pub const ZEND_LAST_CATCH: u32 = 1;
pub const ZEND_FREE_ON_RETURN: u32 = 1;
pub const ZEND_FREE_SWITCH: u32 = 2;
pub const ZEND_FETCH_OBJ_FLAGS: u32 = 3;
pub const ZEND_ISEMPTY: u32 = 1;
pub const ZEND_RETURNS_FUNCTION: u32 = 1;
pub const ZEND_EXTRA_VALUE: u32 = 1;
/// `ZEND_SEND_BY_REF` and `ZEND_SEND_PREFER_REF`.
pub const ZEND_SEND_BY_REF: u32 = 1;
pub const ZEND_SEND_PREFER_REF: u32 = 2;
/// `ZEND_FUNC_INDIRECT_VAR_ACCESS` and `ZEND_FUNC_VARARG` (zend_func_info.h).
pub const ZEND_FUNC_INDIRECT_VAR_ACCESS: u32 = 1 << 0;
pub const ZEND_FUNC_VARARG: u32 = 1 << 2;
/// `ZEND_CALL_FRAME_SLOT` on 64-bit PHP 8.2: `zend_execute_data` (80 bytes) in zvals.
pub const ZEND_CALL_FRAME_SLOT: u32 = 5;
const SIZEOF_ZVAL: u32 = 16;
const SIZEOF_POINTER: u32 = 8;

/// A value of the generated tables.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TableValue {
    Null,
    False,
    True,
    Long(i64),
    Double(u64),
    Str(&'static [u8]),
}

impl TableValue {
    pub(crate) fn literal(self) -> Literal {
        match self {
            TableValue::Null => Literal::Null,
            TableValue::False => Literal::False,
            TableValue::True => Literal::True,
            TableValue::Long(l) => Literal::Long(l),
            TableValue::Double(d) => Literal::Double(PhpDouble(d)),
            TableValue::Str(s) => Literal::String(PhpStr(s.to_vec())),
        }
    }
}

/// An internal function or method as the optimizer sees it: its flags, the number of its
/// declared (non-variadic) parameters and each parameter's send mode (`b'0'` by value,
/// `b'1'` by reference, `b'2'` prefer reference; the variadic one last).
#[derive(Clone, Copy, Debug)]
pub struct InternalFunc {
    pub flags: u32,
    pub num_args: u32,
    pub modes: &'static [u8],
}

impl InternalFunc {
    /// A function or method of the process that the tables do not have.
    fn added(f: &'static environment::Function) -> InternalFunc {
        InternalFunc {
            flags: f.flags,
            num_args: f.num_args,
            modes: &f.modes,
        }
    }
}

fn table_find<T: Copy>(table: &'static [(&'static [u8], T)], key: &[u8]) -> Option<T> {
    table
        .binary_search_by(|(k, _)| (*k).cmp(key))
        .ok()
        .map(|i| table[i].1)
}

/// The internal function `lcname` (`EG(function_table)`; every one is from a persistent module).
pub fn internal_function(lcname: &[u8]) -> Option<InternalFunc> {
    // Every call the passes look at asks: a hash index (built once) instead of a binary
    // search comparing names.
    static INDEX: std::sync::OnceLock<hashbrown::HashMap<&'static [u8], InternalFunc>> =
        std::sync::OnceLock::new();
    match INDEX
        .get_or_init(|| internal_table::FUNCTIONS.iter().copied().collect())
        .get(lcname)
    {
        Some(f) => Some(*f).filter(|_| !environment::lacks_function(lcname)),
        None => environment::added_function(lcname).map(InternalFunc::added),
    }
}

/// A method of internal class `lcclass`, inherited ones included.
pub fn internal_method(lcclass: &[u8], lcmethod: &[u8]) -> Option<InternalFunc> {
    let mut key = lcclass.to_vec();
    key.extend_from_slice(b"::");
    key.extend_from_slice(lcmethod);
    match table_find(internal_table::METHODS, &key) {
        Some(m) => Some(m).filter(|_| !environment::lacks_method(&key)),
        None => environment::added_class(lcclass)?
            .methods
            .get(lcmethod)
            .map(InternalFunc::added),
    }
}

/// What a linked class's method stub `lcname` calls (only the classes of OPcache's
/// preloading are linked when optimized): an internal method (an exception's
/// `getMessage`, a constructor inherited from an internal class, an enum's `cases`) or
/// the trait method a copy was made from; with the stub's own flags and scope, which PHP
/// checks.
pub fn stub_callee<'s>(
    ctx: &OptimizerCtx<'s>,
    ce: &'s zend_ir::ClassEntry,
    lcname: &[u8],
) -> Option<(CalleeRef<'s>, u32, &'s PhpStr)> {
    let m = ce.method_stub(lcname)?;
    if m.is_trait_clone() {
        let (t, key) = ctx.script.trait_method_of(m)?;
        let f = ctx.method_ref(t, key.as_bytes())?;
        return Some((CalleeRef::TraitCopy(f), m.fn_flags, &m.scope));
    }
    let class = m.internal_class(ce)?.to_ascii_lowercase();
    let f = internal_method(class.as_bytes(), lcname)?;
    Some((CalleeRef::Internal(f), m.fn_flags, &m.scope))
}

/// A public constant of internal class `lcclass`.
pub fn internal_class_constant(lcclass: &[u8], name: &[u8]) -> Option<Literal> {
    let mut key = lcclass.to_vec();
    key.extend_from_slice(b"::");
    key.extend_from_slice(name);
    match table_find(internal_table::CLASS_CONSTANTS, &key) {
        Some(v) => Some(v.literal()),
        None => environment::added_class(lcclass)?
            .constants
            .get(name)
            .cloned(),
    }
}

/// `zend_optimizer_eval_binary_op` through zend-operators, with `get_binary_op`'s mapping of
/// CASE and CASE_STRICT to `==` and `===` (zend-operators knows only the comparison opcodes).
pub fn eval_binary_op(opcode: zend_ir::Opcode, op1: &Literal, op2: &Literal) -> Option<Literal> {
    let opcode = match opcode {
        ZEND_CASE => ZEND_IS_EQUAL,
        ZEND_CASE_STRICT => ZEND_IS_IDENTICAL,
        other => other,
    };
    zend_operators::eval_binary_op(opcode, op1, op2)
}

/// `zend_optimizer_add_literal`: appends a literal (its `Z_EXTRA` is 0) and returns its index.
pub fn add_literal(op_array: &mut OpArray, value: Literal) -> LiteralId {
    let id = LiteralId::from(op_array.literals.len());
    op_array.literals.push(value);
    id
}

/// `zend_optimizer_add_literal_string` of the lowercased `s`.
fn add_lc_literal(op_array: &mut OpArray, s: &PhpStr) -> LiteralId {
    add_literal(op_array, Literal::String(s.to_lowercase()))
}

/// Sets the `Z_EXTRA` of literal `id` (kept sorted in `literal_extra`).
pub fn set_literal_extra(op_array: &mut OpArray, id: LiteralId, value: u32) {
    let extra = &mut op_array.literal_extra;
    match extra.binary_search_by_key(&id, |&(l, _)| l) {
        Ok(at) if value == 0 => {
            extra.remove(at);
        }
        Ok(at) => extra[at].1 = value,
        Err(_) if value == 0 => {}
        Err(at) => extra.insert(at, (id, value)),
    }
}

/// `literal_dtor`: the literal becomes NULL (compact_literals drops it later).
pub fn literal_dtor(op_array: &mut OpArray, id: LiteralId) {
    if let Some(lit) = op_array.literals.get_mut(id.index()) {
        *lit = Literal::Null;
    }
}

/// An operand after `SET_UNUSED`: PHP 8.2 stores `(uint32_t)-1` in it.
pub const UNUSED: Operand = Operand::Unused(u32::MAX);

pub use zend_ssa::edit::make_nop;

/// `alloc_cache_slots`: `num` run-time cache slots at the end of the op_array's cache.
pub fn alloc_cache_slots(op_array: &mut OpArray, num: u32) -> u32 {
    let at = op_array.cache_size;
    op_array.cache_size += num * SIZEOF_POINTER;
    at
}

/// `drop_leading_backslash` on a string value.
fn drop_leading_backslash(val: &mut Literal) {
    if let Literal::String(s) = val {
        if s.0.first() == Some(&b'\\') {
            s.0.remove(0);
        }
    }
}

/// `TO_STRING_NOWARN`: `false` for arrays and ASTs, otherwise the value becomes a string.
fn to_string_nowarn(val: &mut Literal, php_bugs: PhpBugs) -> bool {
    if matches!(val, Literal::Array(_) | Literal::Ast(_)) {
        return false;
    }
    if !php_bugs.converts_to_string(val) {
        return false;
    }
    if !matches!(val, Literal::String(_)) {
        match zend_operators::get_string(val) {
            Some(s) => *val = Literal::String(s),
            None => return false,
        }
    }
    true
}

fn lit_str(val: &Literal) -> Option<&PhpStr> {
    match val {
        Literal::String(s) => Some(s),
        _ => None,
    }
}

/// `zend_optimizer_convert_to_free_op1`: an op whose only remaining effect is to release
/// op1 becomes CHECK_VAR (CV), FREE (TMP/VAR) or a NOP (constant).
pub fn convert_to_free_op1(op_array: &mut OpArray, i: usize) {
    let op = &mut op_array.opcodes[i];
    match op.op1 {
        Operand::Cv(_) => {
            op.opcode = ZEND_CHECK_VAR;
            op.op2 = UNUSED;
            op.result = UNUSED;
            op.smart_branch = Default::default();
            op.extended_value = 0;
        }
        Operand::TmpVar(_) | Operand::Var(_) => {
            op.opcode = ZEND_FREE;
            op.op2 = UNUSED;
            op.result = UNUSED;
            op.smart_branch = Default::default();
            op.extended_value = 0;
        }
        Operand::Const(lit) => {
            literal_dtor(op_array, lit);
            make_nop(&mut op_array.opcodes[i]);
        }
        _ => make_nop(op),
    }
}

/// `zend_optimizer_update_op1_const`: puts `val` into op1 of op `i` as the opcode needs it
/// (a string where it must be one, a lowercased companion literal and a cache slot where
/// the VM looks a name up, SEND_VAR becoming SEND_VAL...). `false` when the op cannot take
/// a constant there; `val` may have been converted in place either way.
pub fn update_op1_const(
    op_array: &mut OpArray,
    i: usize,
    val: &mut Literal,
    php_bugs: PhpBugs,
) -> bool {
    let opcode = op_array.opcodes[i].opcode;
    let lit: LiteralId;
    match opcode {
        ZEND_OP_DATA => {
            if i > 0
                && matches!(
                    op_array.opcodes[i - 1].opcode,
                    ZEND_ASSIGN_OBJ_REF | ZEND_ASSIGN_STATIC_PROP_REF
                )
            {
                return false;
            }
            lit = add_literal(op_array, val.clone());
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
        | ZEND_SEND_VAR_NO_REF_EX => return false,
        ZEND_CATCH
        | ZEND_DEFINED
        | ZEND_NEW
        | ZEND_INIT_STATIC_METHOD_CALL
        | ZEND_FETCH_CLASS_CONSTANT => {
            if !matches!(val, Literal::String(_)) {
                return false;
            }
            drop_leading_backslash(val);
            lit = add_literal(op_array, val.clone());
            let op2_const = matches!(op_array.opcodes[i].op2, Operand::Const(_));
            match opcode {
                ZEND_CATCH => {
                    let slot = alloc_cache_slots(op_array, 1);
                    let op = &mut op_array.opcodes[i];
                    op.extended_value = slot | (op.extended_value & ZEND_LAST_CATCH);
                }
                ZEND_DEFINED => {
                    op_array.opcodes[i].extended_value = alloc_cache_slots(op_array, 1);
                }
                ZEND_NEW => {
                    op_array.opcodes[i].op2 = Operand::Unused(alloc_cache_slots(op_array, 1));
                }
                ZEND_INIT_STATIC_METHOD_CALL => {
                    if !op2_const {
                        op_array.opcodes[i].result =
                            Operand::Unused(alloc_cache_slots(op_array, 1));
                    }
                }
                _ => {
                    if !op2_const {
                        op_array.opcodes[i].extended_value = alloc_cache_slots(op_array, 1);
                    }
                }
            }
            if let Literal::String(s) = &*val {
                add_lc_literal(op_array, s);
            }
        }
        ZEND_ASSIGN_OP | ZEND_ASSIGN_DIM_OP | ZEND_ASSIGN_OBJ_OP => {
            lit = add_literal(op_array, val.clone());
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
            if !to_string_nowarn(val, php_bugs) {
                return false;
            }
            lit = add_literal(op_array, val.clone());
            let op = &op_array.opcodes[i];
            let ext = op.extended_value;
            if matches!(op.op2, Operand::Const(_))
                && (ext & !ZEND_FETCH_OBJ_FLAGS) + SIZEOF_POINTER == op_array.cache_size
            {
                op_array.cache_size += SIZEOF_POINTER;
            } else {
                let slot = alloc_cache_slots(op_array, 3);
                op_array.opcodes[i].extended_value = slot | (ext & ZEND_FETCH_OBJ_FLAGS);
            }
        }
        ZEND_SEND_VAR => {
            op_array.opcodes[i].opcode = ZEND_SEND_VAL;
            lit = add_literal(op_array, val.clone());
        }
        ZEND_CASE => {
            op_array.opcodes[i].opcode = ZEND_IS_EQUAL;
            lit = add_literal(op_array, val.clone());
        }
        ZEND_CASE_STRICT => {
            op_array.opcodes[i].opcode = ZEND_IS_IDENTICAL;
            lit = add_literal(op_array, val.clone());
        }
        // A non-local change: replace_by_const handles it.
        ZEND_VERIFY_RETURN_TYPE => return false,
        ZEND_COPY_TMP | ZEND_FETCH_CLASS_NAME => return false,
        ZEND_ECHO => {
            if !matches!(val, Literal::String(_)) {
                if let Some(s) = zend_operators::eval_cast(u32::from(IS_STRING), val) {
                    *val = s;
                }
            }
            lit = add_literal(op_array, val.clone());
            if matches!(val, Literal::String(s) if s.0.is_empty()) {
                op_array.opcodes[i].op1 = Operand::Const(lit);
                make_nop(&mut op_array.opcodes[i]);
                return true;
            }
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
            if !to_string_nowarn(val, php_bugs) {
                return false;
            }
            if opcode == ZEND_CONCAT && matches!(op_array.opcodes[i].op2, Operand::Const(_)) {
                op_array.opcodes[i].opcode = ZEND_FAST_CONCAT;
            }
            lit = add_literal(op_array, val.clone());
        }
        _ => {
            lit = add_literal(op_array, val.clone());
        }
    }
    op_array.opcodes[i].op1 = Operand::Const(lit);
    true
}

/// `zend_optimizer_update_op2_const`: as [`update_op1_const`] for op2 (numeric-string
/// dims become integer keys with the string kept next to them, class and function names
/// get their lowercased companion and cache slots, a dynamic call by constant name becomes
/// INIT_FCALL_BY_NAME...).
pub fn update_op2_const(
    op_array: &mut OpArray,
    i: usize,
    val: &mut Literal,
    php_bugs: PhpBugs,
) -> bool {
    let opcode = op_array.opcodes[i].opcode;
    let lit: LiteralId;
    match opcode {
        ZEND_ASSIGN_REF | ZEND_FAST_CALL => return false,
        ZEND_FETCH_CLASS | ZEND_INSTANCEOF => {
            if !matches!(val, Literal::String(_)) {
                return false;
            }
            drop_leading_backslash(val);
            lit = add_literal(op_array, val.clone());
            if let Literal::String(s) = &*val {
                add_lc_literal(op_array, s);
            }
            op_array.opcodes[i].extended_value = alloc_cache_slots(op_array, 1);
        }
        ZEND_INIT_FCALL_BY_NAME => {
            if !matches!(val, Literal::String(_)) {
                return false;
            }
            drop_leading_backslash(val);
            lit = add_literal(op_array, val.clone());
            if let Literal::String(s) = &*val {
                add_lc_literal(op_array, s);
            }
            op_array.opcodes[i].result = Operand::Unused(alloc_cache_slots(op_array, 1));
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
            if !matches!(val, Literal::String(_)) {
                return false;
            }
            drop_leading_backslash(val);
            lit = add_literal(op_array, val.clone());
            if let Literal::String(s) = &*val {
                add_lc_literal(op_array, s);
            }
            if !matches!(op_array.opcodes[i].op1, Operand::Const(_)) {
                let slot = alloc_cache_slots(op_array, 1);
                let op = &mut op_array.opcodes[i];
                op.extended_value = slot
                    | (op.extended_value
                        & (ZEND_RETURNS_FUNCTION | ZEND_ISEMPTY | ZEND_FETCH_OBJ_FLAGS));
            }
        }
        ZEND_INIT_FCALL => {
            let Literal::String(s) = &*val else {
                return false;
            };
            *val = Literal::String(s.to_lowercase());
            lit = add_literal(op_array, val.clone());
            op_array.opcodes[i].result = Operand::Unused(alloc_cache_slots(op_array, 1));
        }
        ZEND_INIT_DYNAMIC_CALL => {
            if let Literal::String(s) = &*val {
                if s.0.contains(&b':') {
                    return false;
                }
                if classify_function(s.as_bytes(), op_array.opcodes[i].extended_value) != 0 {
                    // A dynamic call of these must stay dynamic: it warns.
                    return false;
                }
                op_array.opcodes[i].opcode = ZEND_INIT_FCALL_BY_NAME;
                drop_leading_backslash(val);
                lit = add_literal(op_array, val.clone());
                if let Literal::String(s) = &*val {
                    add_lc_literal(op_array, s);
                }
                op_array.opcodes[i].result = Operand::Unused(alloc_cache_slots(op_array, 1));
            } else {
                lit = add_literal(op_array, val.clone());
            }
        }
        ZEND_INIT_METHOD_CALL => {
            if !matches!(val, Literal::String(_)) {
                return false;
            }
            lit = add_literal(op_array, val.clone());
            if let Literal::String(s) = &*val {
                add_lc_literal(op_array, s);
            }
            op_array.opcodes[i].result = Operand::Unused(alloc_cache_slots(op_array, 2));
        }
        ZEND_INIT_STATIC_METHOD_CALL => {
            if !matches!(val, Literal::String(_)) {
                return false;
            }
            lit = add_literal(op_array, val.clone());
            if let Literal::String(s) = &*val {
                add_lc_literal(op_array, s);
            }
            if !matches!(op_array.opcodes[i].op1, Operand::Const(_)) {
                op_array.opcodes[i].result = Operand::Unused(alloc_cache_slots(op_array, 2));
            }
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
        | ZEND_POST_DEC_OBJ => {
            if !to_string_nowarn(val, php_bugs) {
                return false;
            }
            lit = add_literal(op_array, val.clone());
            op_array.opcodes[i].extended_value = alloc_cache_slots(op_array, 3);
        }
        ZEND_ASSIGN_OBJ_OP => {
            if !to_string_nowarn(val, php_bugs) {
                return false;
            }
            lit = add_literal(op_array, val.clone());
            // The cache slot of ASSIGN_OBJ_OP lives in its OP_DATA.
            let slot = alloc_cache_slots(op_array, 3);
            if let Some(data) = op_array.opcodes.get_mut(i + 1) {
                if data.opcode == ZEND_OP_DATA {
                    data.extended_value = slot;
                }
            }
        }
        ZEND_ISSET_ISEMPTY_PROP_OBJ => {
            if !to_string_nowarn(val, php_bugs) {
                return false;
            }
            lit = add_literal(op_array, val.clone());
            let slot = alloc_cache_slots(op_array, 3);
            let op = &mut op_array.opcodes[i];
            op.extended_value = slot | (op.extended_value & ZEND_ISEMPTY);
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
            let numeric = lit_str(val).and_then(|s| zend_operators::handle_numeric_str(&s.0));
            if let Some(index) = numeric {
                lit = add_literal(op_array, Literal::Long(index));
                add_literal(op_array, val.clone());
                set_literal_extra(op_array, lit, ZEND_EXTRA_VALUE);
            } else {
                lit = add_literal(op_array, val.clone());
            }
        }
        ZEND_ADD_ARRAY_ELEMENT | ZEND_INIT_ARRAY => {
            if let Some(index) = lit_str(val).and_then(|s| zend_operators::handle_numeric_str(&s.0))
            {
                *val = Literal::Long(index);
            }
            lit = add_literal(op_array, val.clone());
        }
        ZEND_ROPE_INIT | ZEND_ROPE_ADD | ZEND_ROPE_END | ZEND_CONCAT | ZEND_FAST_CONCAT => {
            if !to_string_nowarn(val, php_bugs) {
                return false;
            }
            if opcode == ZEND_CONCAT && matches!(op_array.opcodes[i].op1, Operand::Const(_)) {
                op_array.opcodes[i].opcode = ZEND_FAST_CONCAT;
            }
            lit = add_literal(op_array, val.clone());
        }
        _ => {
            lit = add_literal(op_array, val.clone());
        }
    }
    op_array.opcodes[i].op2 = Operand::Const(lit);
    true
}

/// `ZEND_TYPE_CONTAINS_CODE` of the op_array's return type for the value's type.
fn return_type_contains(op_array: &OpArray, val: &Literal) -> bool {
    op_array
        .return_info
        .as_ref()
        .is_some_and(|ri| ri.type_.type_mask & (1u32 << val.type_code()) != 0)
}

/// `zend_optimizer_replace_by_const`: the TMP/VAR `var` (an operand as it appears in the
/// ops that read it) holds `val`; puts the constant into the ops from `start` on that read
/// it. Most TMP/VARs are read once; CASE, SWITCH, MATCH, FETCH_LIST_R and JMP_NULL keep
/// theirs alive, so every read up to the last one is replaced. `false` when a reader
/// cannot take a constant (the caller then keeps the value in a QM_ASSIGN).
pub fn replace_by_const(
    op_array: &mut OpArray,
    start: usize,
    var: Operand,
    val: Literal,
    php_bugs: PhpBugs,
) -> bool {
    let mut val = val;
    let n = op_array.opcodes.len();
    // MATCH_ERROR does not free the subject (the FREE after the match does, or exception
    // handling): PHP 8.2 takes it for the last use ([`PhpBugs::FREE_AFTER_MATCH_ERROR_KEPT`]).
    let keeps_alive = |opcode| {
        matches!(
            opcode,
            ZEND_FETCH_LIST_R
                | ZEND_CASE
                | ZEND_CASE_STRICT
                | ZEND_SWITCH_LONG
                | ZEND_SWITCH_STRING
                | ZEND_MATCH
                | ZEND_JMP_NULL
        ) || (opcode == ZEND_MATCH_ERROR
            && !php_bugs.contains(PhpBugs::FREE_AFTER_MATCH_ERROR_KEPT))
    };
    let mut i = start;
    while i < n {
        if op_array.opcodes[i].op1 == var {
            match op_array.opcodes[i].opcode {
                opcode if keeps_alive(opcode) => {
                    let mut j = i;
                    while j < n {
                        if op_array.opcodes[j].op1 == var {
                            let op = &op_array.opcodes[j];
                            let is_last = !keeps_alive(op.opcode)
                                && (op.opcode != ZEND_FREE
                                    || op.extended_value != ZEND_FREE_ON_RETURN);
                            if !update_op1_const(op_array, j, &mut val, php_bugs) {
                                return false;
                            }
                            if is_last {
                                break;
                            }
                        }
                        j += 1;
                    }
                    return true;
                }
                ZEND_VERIFY_RETURN_TYPE => {
                    if !return_type_contains(op_array, &val)
                        || op_array.fn_flags & ZEND_ACC_RETURN_REFERENCE != 0
                    {
                        return false;
                    }
                    // Loops and finally may put ops between the check and its RETURN.
                    let Some(ret) = (i + 1..n).find(|&j| {
                        matches!(op_array.opcodes[j].opcode, ZEND_RETURN | ZEND_RETURN_BY_REF)
                    }) else {
                        return false;
                    };
                    make_nop(&mut op_array.opcodes[i]);
                    return update_op1_const(op_array, ret, &mut val, php_bugs);
                }
                _ => {}
            }
            return update_op1_const(op_array, i, &mut val, php_bugs);
        }
        if op_array.opcodes[i].op2 == var {
            return update_op2_const(op_array, i, &mut val, php_bugs);
        }
        i += 1;
    }
    true
}

/// `zend_optimizer_get_persistent_constant`: the value of a persistent (internal) constant
/// or of `true`/`false`/`null` in any case. Compiling for a file cache
/// (`ZEND_COMPILE_WITH_FILE_CACHE`), the constants flagged `CONST_NO_FILE_CACHE`
/// (`PHP_SAPI`, `PHP_BINARY`: they depend on the process that runs the script) are not.
pub fn get_persistent_constant(name: &[u8], with_file_cache: bool) -> Option<Literal> {
    if with_file_cache
        && (internal_table::NO_FILE_CACHE_CONSTANTS.contains(&name)
            || environment::constant_is_no_file_cache(name))
    {
        return None;
    }
    if let Some(answer) = environment::constant(name) {
        return answer;
    }
    if let Some(v) = table_find(internal_table::CONSTANTS, name) {
        return Some(v.literal());
    }
    if name.eq_ignore_ascii_case(b"true") {
        Some(Literal::True)
    } else if name.eq_ignore_ascii_case(b"false") {
        Some(Literal::False)
    } else if name.eq_ignore_ascii_case(b"null") {
        Some(Literal::Null)
    } else {
        None
    }
}

/// `zend_optimizer_collect_constant`: remembers `define(name, value)` of the main script
/// (the first definition wins, as `zend_hash_add` does).
pub fn collect_constant(ctx: &mut OptimizerCtx, name: &PhpStr, value: &Literal) {
    ctx.state
        .constants
        .entry(name.clone())
        .or_insert_with(|| value.clone());
}

/// `zend_optimizer_get_collected_constant`.
pub fn get_collected_constant(ctx: &OptimizerCtx, name: &PhpStr) -> Option<Literal> {
    ctx.state.constants.get(name).cloned()
}

/// `zend_dirname` on a Unix path.
fn zend_dirname(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return Vec::new();
    }
    let mut end = path.len() - 1;
    // Strip trailing slashes.
    while end > 0 && path[end] == b'/' {
        end -= 1;
    }
    if end == 0 && path[0] == b'/' {
        return b"/".to_vec();
    }
    // Strip the file name.
    loop {
        if path[end] == b'/' {
            break;
        }
        if end == 0 {
            return b".".to_vec();
        }
        end -= 1;
    }
    // Strip the slashes before it.
    while end > 0 && path[end] == b'/' {
        end -= 1;
    }
    if end == 0 && path[0] == b'/' {
        return b"/".to_vec();
    }
    path[..=end].to_vec()
}

/// `zend_optimizer_eval_special_func_call`: the value of `name(arg)` for the functions
/// whose answer is fixed once PHP runs (function_exists and is_callable of an internal
/// function, extension_loaded, constant, dirname of an absolute path, ini_get of a system
/// ini entry). `with_file_cache` as for [`get_persistent_constant`].
pub fn eval_special_func_call(name: &[u8], arg: &[u8], with_file_cache: bool) -> Option<Literal> {
    match name {
        b"function_exists" | b"is_callable" => {
            internal_function(&arg.to_ascii_lowercase()).map(|_| Literal::True)
        }
        // An unknown module stays unless dl() is disabled: it may be loaded at run time.
        b"extension_loaded" => {
            if is_module_loaded(&arg.to_ascii_lowercase()) {
                Some(Literal::True)
            } else {
                (!enable_dl()).then_some(Literal::False)
            }
        }
        b"constant" => get_persistent_constant(arg, with_file_cache),
        b"dirname" => {
            if arg.first() != Some(&b'/') {
                return None;
            }
            let dir = zend_dirname(arg);
            (dir.first() == Some(&b'/')).then_some(Literal::String(PhpStr(dir)))
        }
        b"ini_get" => match ini_entry(arg) {
            Ini::System(v) => Some(Literal::String(PhpStr(v.unwrap_or(b"").to_vec()))),
            Ini::Other => None,
            // The entry may be registered at run time, by an extension dl() loads.
            Ini::Missing => (!enable_dl()).then_some(Literal::False),
        },
        _ => None,
    }
}

/// INI entry `name` of the process optimized for. An entry neither the tables (as an
/// INI_SYSTEM one) nor the installed process name is not INI_SYSTEM there, or, where
/// `enable_dl` is off (the process then lists every entry), does not exist.
fn ini_entry(name: &[u8]) -> Ini<&'static [u8]> {
    match known_ini_entry(name) {
        Some(entry) => entry,
        None if !enable_dl() => Ini::Missing,
        None => Ini::Other,
    }
}

/// INI entry `name` as the installed process or, failing that, the tables name it.
fn known_ini_entry(name: &[u8]) -> Option<Ini<&'static [u8]>> {
    environment::ini(name).or_else(|| table_find(internal_table::INI_SYSTEM, name).map(Ini::System))
}

/// `PG(enable_dl)`: whether `dl()` may load an extension at run time (OnUpdateBool of the
/// INI_SYSTEM entry `enable_dl`).
fn enable_dl() -> bool {
    match known_ini_entry(b"enable_dl") {
        Some(Ini::System(v)) => zend_ini_parse_bool(v.unwrap_or(b"")),
        _ => true,
    }
}

/// `zend_ini_parse_bool`: "true", "yes" and "on" in any case, else `atoi() != 0`.
pub fn zend_ini_parse_bool(v: &[u8]) -> bool {
    if [&b"true"[..], b"yes", b"on"]
        .iter()
        .any(|w| v.eq_ignore_ascii_case(w))
    {
        return true;
    }
    let v = v.trim_ascii_start();
    let v = v.strip_prefix(b"-").or(v.strip_prefix(b"+")).unwrap_or(v);
    v.iter()
        .take_while(|c| c.is_ascii_digit())
        .any(|&d| d != b'0')
}

/// Whether the module `lcname` (lowercased) is loaded in the process optimized for
/// (`zend_hash_find_ptr(&module_registry, lcname)`).
pub fn is_module_loaded(lcname: &[u8]) -> bool {
    module_version(lcname).is_some()
}

/// The version of loaded module `lcname` (lowercased): PHP's own for the modules of the
/// tables (all bundled with PHP).
pub fn module_version(lcname: &[u8]) -> Option<Literal> {
    if internal_table::MODULES.binary_search(&lcname).is_ok() {
        if environment::lacks_module(lcname) {
            return None;
        }
        return get_persistent_constant(b"PHP_VERSION", false);
    }
    let version = environment::added_module(lcname)?;
    Some(Literal::String(PhpStr(version.to_vec())))
}

/// `zend_optimizer_classify_function`: what calling `name` tells about the caller.
pub fn classify_function(name: &[u8], _num_args: u32) -> u32 {
    match name {
        b"extract" | b"compact" | b"get_defined_vars" | b"db2_execute" => {
            ZEND_FUNC_INDIRECT_VAR_ACCESS
        }
        b"func_num_args" | b"func_get_arg" | b"func_get_args" => ZEND_FUNC_VARARG,
        _ => 0,
    }
}

/// A function an `INIT_*` op calls, as `zend_optimizer_get_called_func` finds it.
#[derive(Clone, Copy, Debug)]
pub enum Callee<'a> {
    User(&'a OpArray),
    Internal(InternalFunc),
}

impl Callee<'_> {
    pub fn fn_flags(&self) -> u32 {
        match self {
            Callee::User(f) => f.fn_flags,
            Callee::Internal(f) => f.flags,
        }
    }

    pub fn num_args(&self) -> u32 {
        match self {
            Callee::User(f) => f.num_args,
            Callee::Internal(f) => f.num_args,
        }
    }

    fn send_mode(&self, i: usize) -> u32 {
        match self {
            Callee::User(f) => f
                .arg_info
                .get(i)
                .map_or(0, |a| (a.type_.type_mask >> _ZEND_SEND_MODE_SHIFT) & 3),
            Callee::Internal(f) => f.modes.get(i).map_or(0, |m| u32::from(m - b'0') & 3),
        }
    }

    /// `zend_check_arg_send_type`: whether argument `arg_num` (1-based) is sent with a mode
    /// in `mask`.
    pub fn check_arg_send_type(&self, arg_num: u32, mask: u32) -> bool {
        let mut i = arg_num.wrapping_sub(1);
        if i >= self.num_args() {
            if self.fn_flags() & ZEND_ACC_VARIADIC == 0 {
                return false;
            }
            i = self.num_args();
        }
        self.send_mode(i as usize) & mask != 0
    }

    /// `zend_vm_calc_used_stack`: the bytes a call with `num_args` arguments reserves.
    pub fn used_stack(&self, num_args: u32) -> u32 {
        let mut slots = ZEND_CALL_FRAME_SLOT + num_args;
        if let Callee::User(f) = self {
            slots = (slots + f.last_var() + f.T).saturating_sub(f.num_args.min(num_args));
        }
        slots * SIZEOF_ZVAL
    }

    /// `zend_get_call_op` for an INIT_FCALL of this function.
    pub fn call_op(&self) -> zend_ir::Opcode {
        if self.fn_flags() & ZEND_ACC_DEPRECATED != 0 {
            return ZEND_DO_FCALL_BY_NAME;
        }
        match self {
            Callee::Internal(_) => ZEND_DO_ICALL,
            Callee::User(_) => ZEND_DO_UCALL,
        }
    }
}

fn const_string(op_array: &OpArray, operand: Operand, offset: usize) -> Option<&PhpStr> {
    match operand {
        Operand::Const(l) => match op_array.literals.get(l.index() + offset)? {
            Literal::String(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// A class `zend_optimizer_get_class_entry_from_op1` finds for op1 of `op`: a constant
/// name (its lowercased companion literal), or `self` outside a trait.
pub fn class_entry_from_op1<'s>(
    ctx: &OptimizerCtx<'s>,
    op_array: &OpArray,
    op: &Op,
) -> Option<ClassLookup<'s>> {
    match op.op1 {
        Operand::Const(l) => {
            if !matches!(op_array.literals.get(l.index()), Some(Literal::String(_))) {
                return None;
            }
            let lc = const_string(op_array, op.op1, 1)?;
            ctx.class_entry(op_array, lc.as_bytes())
        }
        Operand::Unused(n) => {
            let scope = op_array.scope.as_ref()?;
            let ce = ctx.scope_class(scope)?;
            if ce.ce_flags & ZEND_ACC_TRAIT != 0
                || n & ZEND_FETCH_CLASS_MASK != ZEND_FETCH_CLASS_SELF
            {
                return None;
            }
            Some(ClassLookup::Script(ce))
        }
        _ => None,
    }
}

/// A function an `INIT_*` op calls, found but not read ([`Callee`] reads it): it borrows
/// neither the context nor the op_array being optimized, which may be the callee itself.
#[derive(Clone, Copy, Debug)]
pub enum CalleeRef<'s> {
    User(FuncRef<'s>),
    Internal(InternalFunc),
    /// A preloaded class's copy of a trait method, as the trait declares it: never inlined
    /// (its code may be stale while the optimizer runs).
    TraitCopy(FuncRef<'s>),
}

impl<'s> CalleeRef<'s> {
    /// The callee, `current` being the op_array being optimized.
    #[inline]
    pub fn get<'a>(self, current: &'a OpArray) -> Callee<'a>
    where
        's: 'a,
    {
        match self {
            CalleeRef::User(f) | CalleeRef::TraitCopy(f) => Callee::User(f.get(current)),
            CalleeRef::Internal(f) => Callee::Internal(f),
        }
    }
}

/// `zend_optimizer_get_called_func`: the function an INIT_FCALL, INIT_FCALL_BY_NAME,
/// INIT_NS_FCALL_BY_NAME, INIT_STATIC_METHOD_CALL, INIT_METHOD_CALL on `$this` or NEW (its
/// constructor) calls, when the script or PHP knows it; the flag says it is only a
/// prototype (an overridable method).
// Inlined into pass 4's walk, its one caller, where the callee found is used at once.
#[inline(always)]
pub fn get_called_func<'s>(
    ctx: &OptimizerCtx<'s>,
    op_array: &OpArray,
    op: &Op,
) -> Option<(CalleeRef<'s>, bool)> {
    match op.opcode {
        ZEND_INIT_FCALL | ZEND_INIT_FCALL_BY_NAME | ZEND_INIT_NS_FCALL_BY_NAME => {
            let offset = usize::from(op.opcode != ZEND_INIT_FCALL);
            if op.opcode != ZEND_INIT_FCALL && const_string(op_array, op.op2, 0).is_none() {
                return None;
            }
            let name = const_string(op_array, op.op2, offset)?;
            if let Some(f) = ctx.function_ref(name.as_bytes()) {
                return Some((CalleeRef::User(f), false));
            }
            // INIT_NS_FCALL_BY_NAME names the function with its namespace, and no internal
            // function has one: the name is not hashed for a lookup that cannot succeed.
            if op.opcode == ZEND_INIT_NS_FCALL_BY_NAME {
                return None;
            }
            internal_function(name.as_bytes()).map(|f| (CalleeRef::Internal(f), false))
        }
        ZEND_INIT_STATIC_METHOD_CALL => {
            const_string(op_array, op.op2, 0)?;
            let lcname = const_string(op_array, op.op2, 1)?;
            match class_entry_from_op1(ctx, op_array, op)? {
                ClassLookup::Script(ce) => {
                    let Some(f) = ctx.method_ref(ce, lcname.as_bytes()) else {
                        let (f, flags, scope) = stub_callee(ctx, ce, lcname.as_bytes())?;
                        let same_scope = op_array.scope.as_ref() == Some(scope);
                        return (flags & ZEND_ACC_PUBLIC != 0 || same_scope).then_some((f, false));
                    };
                    let func = f.get(op_array);
                    let same_scope = func.scope.is_some() && func.scope == op_array.scope;
                    (func.fn_flags & ZEND_ACC_PUBLIC != 0 || same_scope)
                        .then_some((CalleeRef::User(f), false))
                }
                ClassLookup::Internal(name) => {
                    let f =
                        internal_method(name.to_ascii_lowercase().as_bytes(), lcname.as_bytes())?;
                    (f.flags & ZEND_ACC_PUBLIC != 0).then_some((CalleeRef::Internal(f), false))
                }
            }
        }
        ZEND_INIT_METHOD_CALL => {
            if !matches!(op.op1, Operand::Unused(_))
                || const_string(op_array, op.op2, 0).is_none()
                || op_array.fn_flags & zend_ir::ZEND_ACC_TRAIT_CLONE != 0
            {
                return None;
            }
            let scope = op_array.scope.as_ref()?;
            let ce = ctx.scope_class(scope)?;
            if ce.ce_flags & ZEND_ACC_TRAIT != 0 {
                return None;
            }
            let lcname = const_string(op_array, op.op2, 1)?;
            let Some(f) = ctx.method_ref(ce, lcname.as_bytes()) else {
                let (f, flags, stub_scope) = stub_callee(ctx, ce, lcname.as_bytes())?;
                if flags & ZEND_ACC_PRIVATE != 0 {
                    return (stub_scope == scope).then_some((f, false));
                }
                return Some((f, flags & ZEND_ACC_FINAL == 0));
            };
            let func = f.get(op_array);
            if func.fn_flags & ZEND_ACC_PRIVATE != 0 {
                let same_scope = func.scope.as_ref() == Some(scope);
                return same_scope.then_some((CalleeRef::User(f), false));
            }
            Some((CalleeRef::User(f), func.fn_flags & ZEND_ACC_FINAL == 0))
        }
        ZEND_NEW => match class_entry_from_op1(ctx, op_array, op)? {
            ClassLookup::Script(ce) => match ctx.method_ref(ce, b"__construct") {
                Some(f) => (f.get(op_array).type_ == ZEND_USER_FUNCTION)
                    .then_some((CalleeRef::User(f), false)),
                // A linked class's constructor from an internal class or a trait.
                None => stub_callee(ctx, ce, b"__construct").map(|(f, _, _)| (f, false)),
            },
            ClassLookup::Internal(_) => None,
        },
        _ => None,
    }
}

/// Opcodes all of whose handlers are commutative (`zend_vm_set_opcode_handler` swaps their
/// operands so the constant or TMP comes second): MUL, the (non-)identity and (non-)equality
/// comparisons, the bitwise ops and BOOL_XOR. ADD is commutative only in its type-specialized
/// handlers.
pub fn always_commutative(opcode: zend_ir::Opcode) -> bool {
    matches!(
        opcode,
        ZEND_MUL
            | ZEND_IS_IDENTICAL
            | ZEND_IS_NOT_IDENTICAL
            | ZEND_IS_EQUAL
            | ZEND_IS_NOT_EQUAL
            | ZEND_BW_OR
            | ZEND_BW_AND
            | ZEND_BW_XOR
            | ZEND_BOOL_XOR
    )
}

/// `zend_vm_set_opcode_handler`'s operand swap, which `zend_redo_pass_two` applies to every
/// op_array it finishes without inferred types (the optimizer's per-op_array path, and on
/// the call-graph path the op_arrays the DFA analysis refused): an op whose VM handler is
/// declared commutative gets the operand of the larger type first (CV > VAR > TMP > CONST).
/// Those are MUL, the (non-)identity and (non-)equality comparisons, the bitwise ops and
/// BOOL_XOR; not ADD, whose commutative handlers are only its type-specialized ones (checked
/// against PHP 8.2's "after optimizer" dump of a function with `$$name`).
pub fn redo_pass_two_commutative_operands(op_array: &mut OpArray) {
    for op in &mut op_array.opcodes {
        if always_commutative(op.opcode) && op.op1.op_type() < op.op2.op_type() {
            std::mem::swap(&mut op.op1, &mut op.op2);
        }
    }
}

/// `zend_redo_pass_two`'s smart-branch rule, for an op_array the passes changed: a
/// comparison (or isset, instanceof, type check...) whose TMP result the next op tests with
/// JMPZ / JMPNZ feeds that branch; every other op loses the bits (`zend_revert_pass_two`
/// cleared them before the passes ran).
pub fn redo_pass_two_smart_branches(op_array: &mut OpArray) {
    use zend_ir::SmartBranch;
    let n = op_array.opcodes.len();
    for i in 0..n {
        let op = &op_array.opcodes[i];
        let smart = match (op.opcode, op.result, op_array.opcodes.get(i + 1)) {
            (
                ZEND_IS_IDENTICAL
                | ZEND_IS_NOT_IDENTICAL
                | ZEND_IS_EQUAL
                | ZEND_IS_NOT_EQUAL
                | ZEND_IS_SMALLER
                | ZEND_IS_SMALLER_OR_EQUAL
                | ZEND_CASE
                | ZEND_CASE_STRICT
                | ZEND_ISSET_ISEMPTY_CV
                | ZEND_ISSET_ISEMPTY_VAR
                | ZEND_ISSET_ISEMPTY_DIM_OBJ
                | ZEND_ISSET_ISEMPTY_PROP_OBJ
                | ZEND_ISSET_ISEMPTY_STATIC_PROP
                | ZEND_INSTANCEOF
                | ZEND_TYPE_CHECK
                | ZEND_DEFINED
                | ZEND_IN_ARRAY
                | ZEND_ARRAY_KEY_EXISTS,
                Operand::TmpVar(v),
                Some(next),
            ) if next.op1 == Operand::TmpVar(v) => match next.opcode {
                ZEND_JMPZ => SmartBranch::Jmpz,
                ZEND_JMPNZ => SmartBranch::Jmpnz,
                _ => SmartBranch::None,
            },
            _ => SmartBranch::None,
        };
        op_array.opcodes[i].smart_branch = smart;
    }
}

/// The name a constant-expression AST of kind `ZEND_AST_CONSTANT` names.
pub fn ast_constant_name(ast: &Ast) -> Option<&PhpStr> {
    if ast.kind != ZEND_AST_CONSTANT {
        return None;
    }
    match &ast.body {
        AstBody::Zval(Literal::String(s)) => Some(s),
        _ => None,
    }
}

/// A TMP/VAR operand's variable, for matching readers.
pub fn tmp_var(operand: Operand) -> Option<VarNum> {
    match operand {
        Operand::TmpVar(v) | Operand::Var(v) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    /// `get_called_func` does not look namespaced names up among the internal functions.
    #[test]
    fn no_internal_function_has_a_namespace() {
        assert!(internal_table::FUNCTIONS
            .iter()
            .all(|(name, _)| !name.contains(&b'\\')));
    }

    fn php(code: &str) -> Vec<u8> {
        let out = Command::new("php")
            .args(["-n", "-d", "zend_extension=opcache", "-r", code])
            .output()
            .expect("php 8.2 on PATH");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    #[test]
    fn dirname_as_php() {
        let paths = [
            "/a/b/c",
            "/a/b/",
            "/a",
            "/",
            "//a//b",
            "/a//",
            "/usr/share/php/x.php",
        ];
        for p in paths {
            let theirs = php(&format!("echo dirname('{p}');"));
            assert_eq!(zend_dirname(p.as_bytes()), theirs, "dirname({p})");
        }
    }

    #[test]
    fn special_calls_as_php() {
        for (name, arg) in [
            ("function_exists", "strlen"),
            ("function_exists", "STRLEN"),
            ("is_callable", "array_map"),
            ("extension_loaded", "standard"),
            ("extension_loaded", "SPL"),
            ("constant", "PHP_INT_MAX"),
            ("constant", "E_ALL"),
            ("ini_get", "enable_dl"),
        ] {
            let theirs = php(&format!("var_export({name}('{arg}'));"));
            let ours = match eval_special_func_call(name.as_bytes(), arg.as_bytes(), false) {
                Some(Literal::True) => b"true".to_vec(),
                Some(Literal::Long(l)) => l.to_string().into_bytes(),
                Some(Literal::String(s)) => [b"'".as_slice(), &s.0, b"'"].concat(),
                other => panic!("{name}({arg}): {other:?}"),
            };
            assert_eq!(ours, theirs, "{name}({arg})");
        }
        // Not fixed at compile time: unknown functions and modules, relative paths.
        assert!(eval_special_func_call(b"function_exists", b"no_such_fn", false).is_none());
        assert!(eval_special_func_call(b"extension_loaded", b"no_such_ext", false).is_none());
        assert!(eval_special_func_call(b"dirname", b"a/b", false).is_none());
    }

    /// SCCP folds `phpversion()` of the modules of the tables to PHP_VERSION: each of them
    /// (built into PHP, or OPcache) carries PHP's own version.
    #[test]
    fn table_modules_carry_php_version() {
        let php_version = match get_persistent_constant(b"PHP_VERSION", false) {
            Some(Literal::String(s)) => s.0,
            other => panic!("PHP_VERSION: {other:?}"),
        };
        let names = php("foreach (get_loaded_extensions() as $e) echo strtolower($e), '=', phpversion($e), \"\\n\";");
        let names = String::from_utf8(names).unwrap();
        for m in internal_table::MODULES {
            let m = std::str::from_utf8(m).unwrap();
            let line = names
                .lines()
                .find(|l| l.split_once('=').map(|(n, _)| n) == Some(m))
                .unwrap_or_else(|| panic!("module {m} not loaded in php"));
            assert_eq!(line.as_bytes(), [m.as_bytes(), b"=", &php_version].concat());
        }
    }

    /// The committed tables are what tools/gen-optimizer-tables.php prints for this PHP.
    #[test]
    fn tables_are_php_s() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let out = Command::new("php")
            .args(["-n", "-d", "zend_extension=opcache"])
            .arg(root.join("tools/gen-optimizer-tables.php"))
            .output()
            .expect("php 8.2 on PATH");
        assert!(out.status.success());
        let committed = std::fs::read(root.join("crates/zend-optimizer/src/internal_table.rs"))
            .expect("internal_table.rs");
        assert!(
            String::from_utf8_lossy(&out.stdout) == String::from_utf8_lossy(&committed),
            "internal_table.rs is stale: rerun tools/gen-optimizer-tables.php"
        );
    }

    #[test]
    fn tables_are_sorted() {
        let sorted = |keys: Vec<&[u8]>| keys.windows(2).all(|w| w[0] < w[1]);
        assert!(sorted(
            internal_table::CONSTANTS.iter().map(|e| e.0).collect()
        ));
        assert!(sorted(
            internal_table::FUNCTIONS.iter().map(|e| e.0).collect()
        ));
        assert!(sorted(
            internal_table::METHODS.iter().map(|e| e.0).collect()
        ));
        assert!(sorted(
            internal_table::CLASS_CONSTANTS
                .iter()
                .map(|e| e.0)
                .collect()
        ));
        assert!(sorted(internal_table::MODULES.to_vec()));
        assert!(sorted(
            internal_table::INI_SYSTEM.iter().map(|e| e.0).collect()
        ));
    }
}
