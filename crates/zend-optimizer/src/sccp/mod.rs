//! Sparse conditional constant propagation: Zend/Optimizer/sccp.c on the [`crate::scdf`]
//! framework.
//!
//! Mirrors `sccp_optimize_op_array`: every SSA variable gets a value on PHP's lattice
//! ([`Value`]: TOP above the constants, partial arrays and partial objects — arrays and
//! non-escaping objects of which some elements are known — and BOT below), ops are
//! evaluated at compile time with PHP 8.2's semantics through zend-operators (nothing that
//! would throw, warn or depend on run-time state), calls of the internal functions PHP
//! evaluates at compile time are evaluated by [`funcs`], branches on known values make only
//! one successor feasible; then the blocks never found executable are removed, uses of
//! constant variables become literal operands (`zend_optimizer_update_op1_const` /
//! `update_op2_const` in [`crate::helpers`]) and the definitions that become dead are
//! removed or turned into QM_ASSIGN / ASSIGN of the constant (`try_remove_definition`).
//! The `sccp` dump (`ZEND_DUMP_SCCP`, 0x20000000) prints "SCCP Values for" each op_array
//! with a known value, byte for byte as PHP.
//!
//! Deviations from PHP 8.2.36, where 8.2 folds what it must not (fixed upstream, followed
//! here): array keys and offsets given as non-integral floats are not folded (8.2 drops
//! the "Implicit conversion" deprecation); `$a[$k] = v` on an undefined `$a` is folded as on
//! null.

mod funcs;

pub use funcs::ct_eval_func_call;

use smallvec::{smallvec, SmallVec};
use zend_cfg::{BlockId, Cfg};
use zend_inference::VarInfo;
use zend_ir::dump::{dump_const, dump_var};
use zend_ir::opcode::*;
use zend_ir::types::*;
use zend_ir::IS_CV;
use zend_ir::{ArrayKey, Literal, MayBe, OpArray, OpNum, Operand, PhpArray, PhpDouble, PhpStr};
use zend_ssa::{EscapeState, PhiId, Ssa, SsaVar, VarTypes};

use crate::ctx::{ClassLookup, OptimizerCtx};
use crate::helpers::{self, ZEND_ACC_HAS_TYPE_HINTS, ZEND_ACC_RETURN_REFERENCE, ZEND_ISEMPTY};
use crate::php_bugs::PhpBugs;
use crate::provenance::ChangeKind;
use crate::scdf::{self, Scdf, ScdfHandlers};

/// `ZEND_DUMP_SCCP`.
pub const ZEND_DUMP_SCCP: u32 = 1 << 29;
const ZEND_ARRAY_ELEMENT_REF: u32 = 1 << 0;
const ZEND_ACC_ALLOW_DYNAMIC_PROPERTIES: u32 = 1 << 15;
const ZEND_SHORT_CIRCUITING_CHAIN_MASK: u32 = 0x3;
const ZEND_SHORT_CIRCUITING_CHAIN_ISSET: u32 = 1;
const ZEND_SHORT_CIRCUITING_CHAIN_EMPTY: u32 = 2;

/// A hash table of a partial array or object: insertion order, keys as PHP stores them.
pub type Ht = PhpArray<Value>;

/// A point of SCCP's lattice (the `zval` of `sccp_ctx.values`).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Nothing known yet (unreached).
    Top,
    /// Not a constant.
    Bot,
    /// A constant; a `Literal::Array` is an array of which everything is known.
    Const(Literal),
    /// An array of which only the listed elements are known (others may exist).
    PartialArray(Ht),
    /// A non-escaping object of which only the listed properties are known.
    PartialObject(Ht),
}

/// The lattice's ends, for the transfer functions to pass by reference: constants, so that
/// passing one costs no drop of a local `Value` (whose drop glue is not trivial).
const BOT: &Value = &Value::Bot;
const TOP: &Value = &Value::Top;

/// Whether `set_value` of `new` (not BOT) changes `cur`: a value only goes down the
/// lattice from TOP, and partial values are replaced when their shape changed (joins
/// shrink them).
#[inline]
fn replaces(cur: &Value, new: &Value) -> bool {
    !cur.is_bot()
        && !new.is_top()
        && (cur.is_top()
            || ((new.is_partial_array() || new.is_partial_object())
                && (cur.type_code() != new.type_code()
                    || cur.num_elements() != new.num_elements())))
}

/// Drops `v`, skipping its drop glue (an out-of-line call) when it owns nothing: SCCP
/// overwrites and discards a lattice value per variable, almost all TOP, BOT or scalars.
#[inline]
fn discard(v: Value) {
    if owns_nothing(&v) {
        std::mem::forget(v);
    }
}

/// Whether `v` has nothing for its drop glue to free.
#[inline]
fn owns_nothing(v: &Value) -> bool {
    matches!(
        v,
        Value::Top
            | Value::Bot
            | Value::Const(
                Literal::Null
                    | Literal::False
                    | Literal::True
                    | Literal::Long(_)
                    | Literal::Double(_)
            )
    )
}

/// Drops SCCP's lattice values, running the drop glue only of those that own something,
/// where dropping the vector would call it for every value. Only the first `unchecked`
/// values are looked at: the replacement leaves none past them owning anything
/// ([`Replacer::replace_constant_operands`]). Returns the emptied vector, whose memory
/// serves the next op_array's values.
fn discard_all(mut values: Vec<Value>, unchecked: usize) -> Vec<Value> {
    let len = values.len();
    for v in &mut values[..unchecked.min(len)] {
        if !owns_nothing(v) {
            *v = Value::Bot;
        }
    }
    debug_assert!(values.iter().all(owns_nothing));
    // SAFETY: shortening is always sound (at worst it leaks), and nothing left owns
    // anything: the values are forgotten without a drop-glue call per value.
    unsafe { values.set_len(0) };
    values
}

impl Value {
    fn is_top(&self) -> bool {
        matches!(self, Value::Top)
    }
    fn is_bot(&self) -> bool {
        matches!(self, Value::Bot)
    }
    fn is_partial_array(&self) -> bool {
        matches!(self, Value::PartialArray(_))
    }
    fn is_partial_object(&self) -> bool {
        matches!(self, Value::PartialObject(_))
    }
    /// `value_known`: neither TOP nor BOT.
    fn known(&self) -> bool {
        !self.is_top() && !self.is_bot()
    }
    fn lit(&self) -> Option<&Literal> {
        match self {
            Value::Const(l) => Some(l),
            _ => None,
        }
    }
    /// `Z_TYPE_P` of the value (TOP, BOT and the partial kinds have PHP's private codes).
    fn type_code(&self) -> u8 {
        match self {
            Value::Top => 255,
            Value::Bot => 254,
            Value::PartialArray(_) => 253,
            Value::PartialObject(_) => 252,
            Value::Const(l) => l.type_code(),
        }
    }
    fn is_array(&self) -> bool {
        matches!(self, Value::Const(Literal::Array(_)))
    }
    /// The elements of an array value, constant or partial.
    fn elements(&self) -> Option<Ht> {
        match self {
            Value::Const(Literal::Array(a)) => Some(a.map(|v| Value::Const(v.clone()))),
            Value::PartialArray(h) | Value::PartialObject(h) => Some(h.clone()),
            _ => None,
        }
    }
    fn num_elements(&self) -> usize {
        match self {
            Value::Const(Literal::Array(a)) => a.len(),
            Value::PartialArray(h) | Value::PartialObject(h) => h.len(),
            _ => 0,
        }
    }
}

/// `zend_is_identical` on two values, as the joins meet them: partial ones are never
/// identical, and neither are values with opposite zeros, unless `zeros_joined`
/// reproduces PHP 8.2's [`PhpBugs::SIGNED_ZERO_PHI`].
fn identical(a: &Value, b: &Value, zeros_joined: bool) -> bool {
    match (a, b) {
        (Value::Const(x), Value::Const(y)) => {
            zend_operators::is_identical(x, y) && (zeros_joined || !opposite_zeros(x, y))
        }
        _ => false,
    }
}

/// Whether `x` and `y`, identical to `===`, hold `0.0` where the other holds `-0.0`, as
/// themselves or as elements of arrays at any depth: the two are identical, but not the
/// same value (`1 / -0.0` is `-INF`), so a phi (or a partial array's element) of them is
/// not a constant. PHP 8.2 makes it one of them (fuzz seeds 53246 and 61295; `[0.0]` and
/// `[-0.0]` as well).
fn opposite_zeros(x: &Literal, y: &Literal) -> bool {
    match (x, y) {
        (Literal::Double(x), Literal::Double(y)) => {
            let (x, y) = (f64::from_bits(x.0), f64::from_bits(y.0));
            x == 0.0 && y == 0.0 && x.is_sign_negative() != y.is_sign_negative()
        }
        (Literal::Array(x), Literal::Array(y)) => {
            x.iter().zip(y).any(|((_, v), (_, w))| opposite_zeros(v, w))
        }
        _ => false,
    }
}

/// Turns an element list back into a constant array when every element is constant.
fn ht_to_literal(h: &Ht) -> Option<PhpArray> {
    h.try_map(|v| v.lit().cloned())
}

/// `zend_symtable` key of a string: a canonical decimal integer string is an integer key.
fn str_key(s: &PhpStr) -> ArrayKey {
    match zend_operators::handle_numeric_str(s.as_bytes()) {
        Some(l) => ArrayKey::Long(l),
        None => ArrayKey::Str(s.clone()),
    }
}

/// The key PHP uses for `$a[$key]` (`fetch_array_elem`'s switch): `None` where SCCP does
/// not fold.
fn dim_key(key: &Value) -> Option<ArrayKey> {
    match key.lit()? {
        Literal::Null => Some(ArrayKey::Str(PhpStr(Vec::new()))),
        Literal::False => Some(ArrayKey::Long(0)),
        Literal::True => Some(ArrayKey::Long(1)),
        Literal::Long(l) => Some(ArrayKey::Long(*l)),
        Literal::Double(d) => {
            let d = d.get();
            let l = zend_operators::dval_to_lval(d);
            // zend_is_long_compatible: a fraction would raise a deprecation.
            ((l as f64) == d).then_some(ArrayKey::Long(l))
        }
        Literal::String(s) => Some(str_key(s)),
        _ => None,
    }
}

/// `fetch_array_elem`: `Err` where the key cannot be used, `Ok(None)` when absent.
fn fetch_array_elem(arr: &Value, key: &Value) -> Result<Option<Value>, ()> {
    let k = dim_key(key).ok_or(())?;
    Ok(match arr {
        Value::Const(Literal::Array(a)) => a
            .iter()
            .find(|(kk, _)| *kk == k)
            .map(|(_, v)| Value::Const(v.clone())),
        Value::PartialArray(h) => h.get(&k).cloned(),
        _ => None,
    })
}

/// `ct_eval_fetch_dim`.
fn ct_eval_fetch_dim(op1: &Value, op2: &Value, support_strings: bool) -> Option<Value> {
    if op1.is_array() || op1.is_partial_array() {
        if let Ok(Some(v)) = fetch_array_elem(op1, op2) {
            if !v.is_bot() {
                return Some(v);
            }
        }
    } else if support_strings {
        if let Some(Literal::String(s)) = op1.lit() {
            let index = match op2.lit()? {
                Literal::Long(l) => *l,
                Literal::String(k) => {
                    match zend_operators::is_numeric_string(k.as_bytes(), false) {
                        Some(Literal::Long(l)) => l,
                        _ => return None,
                    }
                }
                _ => return None,
            };
            if index >= 0 && (index as u64) < s.as_bytes().len() as u64 {
                let b = s.as_bytes()[index as usize];
                return Some(Value::Const(Literal::String(PhpStr(vec![b]))));
            }
        }
    }
    None
}

/// `ct_eval_bool_cast`.
fn ct_eval_bool_cast(op: &Value) -> Option<bool> {
    match op {
        Value::PartialArray(h) => (!h.is_empty()).then_some(true),
        Value::Const(l) => Some(zend_operators::is_true(l)),
        // A partial object is an object: true.
        Value::PartialObject(_) => Some(true),
        _ => None,
    }
}

fn boolean(b: bool) -> Value {
    Value::Const(if b { Literal::True } else { Literal::False })
}

/// `ct_eval_isset_isempty` (`op1` `None`: unset).
fn ct_eval_isset_isempty(extended_value: u32, op1: Option<&Value>) -> Option<Value> {
    if extended_value & ZEND_ISEMPTY == 0 {
        return Some(boolean(op1.is_some_and(|v| v.type_code() != IS_NULL)));
    }
    match op1 {
        None => Some(boolean(true)),
        Some(v) => ct_eval_bool_cast(v).map(|b| boolean(!b)),
    }
}

/// `ct_eval_isset_dim`.
fn ct_eval_isset_dim(extended_value: u32, op1: &Value, op2: &Value) -> Option<Value> {
    if op1.is_array() || op1.is_partial_array() {
        let v = fetch_array_elem(op1, op2).ok()?;
        if op1.is_partial_array() && v.as_ref().map_or(true, |v| v.is_bot()) {
            return None;
        }
        ct_eval_isset_isempty(extended_value, v.as_ref())
    } else if op1.type_code() == IS_STRING {
        None
    } else {
        Some(boolean(extended_value & ZEND_ISEMPTY != 0))
    }
}

/// `ct_eval_del_array_elem` on a partial array.
fn ct_eval_del_array_elem(h: &mut Ht, key: &Value) -> bool {
    match dim_key(key) {
        Some(k) => {
            h.remove(&k);
            true
        }
        None => false,
    }
}

/// `ct_eval_add_array_elem`: `result` is a constant or partial array.
fn ct_eval_add_array_elem(result: &mut Value, value: &Value, key: Option<&Value>) -> bool {
    let k = match key {
        None => None,
        Some(key) => match dim_key(key) {
            Some(k) => Some(k),
            None => return false,
        },
    };
    // A constant element into a constant array stays constant: insert it in place, where
    // going through the elements as lattice values would copy the array twice (arrays are
    // built one element at a time, so those copies made a long literal quadratic).
    if let (Value::Const(Literal::Array(a)), Value::Const(l)) = (&mut *result, value) {
        match k {
            Some(k) => a.update(k, l.clone()),
            None => return a.next_index_insert(l.clone()),
        }
        return true;
    }
    // Likewise any element into a partial array, which stays partial.
    if let Value::PartialArray(h) = result {
        match k {
            Some(k) => h.update(k, value.clone()),
            None => return h.next_index_insert(value.clone()),
        }
        return true;
    }
    let partial = result.is_partial_array();
    let Some(mut h) = result.elements() else {
        return false;
    };
    match k {
        Some(k) => h.update(k, value.clone()),
        None if h.next_index_insert(value.clone()) => {}
        None => return false,
    }
    *result = rebuild(h, partial);
    true
}

/// An array value from its elements: constant when it may be and every element is.
fn rebuild(h: Ht, partial: bool) -> Value {
    if !partial {
        if let Some(a) = ht_to_literal(&h) {
            return Value::Const(Literal::Array(a));
        }
    }
    Value::PartialArray(h)
}

/// [`Value::elements`] of a value no longer needed: a partial one's table moves out.
fn into_elements(v: Value) -> Option<Ht> {
    match v {
        Value::PartialArray(h) | Value::PartialObject(h) => Some(h),
        Value::Const(Literal::Array(a)) => {
            let next_free = a.next_free();
            let elements = a.into_elements().into_iter();
            Some(Ht::with_next_free(
                elements.map(|(k, l)| (k, Value::Const(l))).collect(),
                next_free,
            ))
        }
        _ => None,
    }
}

/// `MAKE_PARTIAL_ARRAY` on an array value.
fn make_partial(v: Value) -> Value {
    match v {
        Value::PartialArray(_) | Value::PartialObject(_) | Value::Const(Literal::Array(_)) => {
            Value::PartialArray(into_elements(v).unwrap_or_default())
        }
        v => v,
    }
}

/// `ct_eval_assign_dim`.
fn ct_eval_assign_dim(result: &mut Value, value: &Value, key: Option<&Value>) -> bool {
    match result.type_code() {
        IS_NULL | IS_FALSE => {
            *result = Value::Const(Literal::Array(PhpArray::new()));
            ct_eval_add_array_elem(result, value, key)
        }
        IS_ARRAY | 253 => ct_eval_add_array_elem(result, value, key),
        _ => false,
    }
}

/// `fetch_obj_prop`'s key: string names only.
fn prop_key(key: &Value) -> Option<ArrayKey> {
    match key.lit()? {
        Literal::String(s) => Some(str_key(s)),
        _ => None,
    }
}

/// `ct_eval_fetch_obj`.
fn ct_eval_fetch_obj(op1: &Value, op2: &Value) -> Option<Value> {
    if let Value::PartialObject(h) = op1 {
        let k = prop_key(op2)?;
        let v = h.get(&k)?;
        if !v.is_bot() {
            return Some(v.clone());
        }
    }
    None
}

/// `ct_eval_isset_obj`.
fn ct_eval_isset_obj(extended_value: u32, op1: &Value, op2: &Value) -> Option<Value> {
    if let Value::PartialObject(h) = op1 {
        let k = prop_key(op2)?;
        let v = h.get(&k)?;
        if v.is_bot() {
            return None;
        }
        ct_eval_isset_isempty(extended_value, Some(v))
    } else {
        Some(boolean(extended_value & ZEND_ISEMPTY != 0))
    }
}

/// `ct_eval_assign_obj`.
fn ct_eval_assign_obj(result: &mut Value, value: &Value, key: &Value) -> bool {
    let mut h = match result {
        Value::Const(Literal::Null) | Value::Const(Literal::False) => Ht::new(),
        Value::PartialObject(h) => std::mem::take(h),
        _ => return false,
    };
    let ok = match prop_key(key) {
        Some(k) => {
            h.update(k, value.clone());
            true
        }
        None => false,
    };
    *result = Value::PartialObject(h);
    ok
}

/// `increment_function` / `decrement_function` on the values PHP 8.2's SCCP folds them on.
fn ct_eval_incdec(opcode: Opcode, op1: &Value) -> Option<Value> {
    let inc = matches!(
        opcode,
        ZEND_PRE_INC | ZEND_POST_INC | ZEND_PRE_INC_OBJ | ZEND_POST_INC_OBJ
    );
    let l = op1.lit()?;
    let r = match l {
        Literal::Long(v) => {
            if inc {
                match v.checked_add(1) {
                    Some(n) => Literal::Long(n),
                    None => Literal::Double(PhpDouble::new(*v as f64 + 1.0)),
                }
            } else {
                match v.checked_sub(1) {
                    Some(n) => Literal::Long(n),
                    None => Literal::Double(PhpDouble::new(*v as f64 - 1.0)),
                }
            }
        }
        Literal::Double(d) => Literal::Double(PhpDouble::new(if inc {
            d.get() + 1.0
        } else {
            d.get() - 1.0
        })),
        Literal::Null => {
            if inc {
                Literal::Long(1)
            } else {
                Literal::Null
            }
        }
        Literal::False | Literal::True => l.clone(),
        Literal::String(s) => {
            match zend_operators::is_numeric_string(s.as_bytes(), false) {
                Some(Literal::Long(v)) => {
                    return ct_eval_incdec(opcode, &Value::Const(Literal::Long(v)));
                }
                Some(Literal::Double(d)) => {
                    return ct_eval_incdec(opcode, &Value::Const(Literal::Double(d)));
                }
                _ => {}
            }
            if s.as_bytes().is_empty() {
                // PHP 8.2: "" becomes "1" when incremented, -1 when decremented.
                if inc {
                    Literal::String(PhpStr(b"1".to_vec()))
                } else {
                    Literal::Long(-1)
                }
            } else if inc {
                Literal::String(PhpStr(increment_string(s.as_bytes())))
            } else {
                // Decrementing a non-numeric string leaves it unchanged.
                l.clone()
            }
        }
        _ => return None,
    };
    Some(Value::Const(r))
}

/// `increment_string`: Perl's alphanumeric increment ("a9" to "b0", "Zz" to "AAa").
fn increment_string(s: &[u8]) -> Vec<u8> {
    #[derive(Clone, Copy)]
    enum Kind {
        Lower,
        Upper,
        Numeric,
    }
    let mut v = s.to_vec();
    let mut carry = false;
    let mut last = Kind::Numeric;
    for pos in (0..v.len()).rev() {
        let ch = v[pos];
        let (first, end, kind) = match ch {
            b'a'..=b'z' => (b'a', b'z', Kind::Lower),
            b'A'..=b'Z' => (b'A', b'Z', Kind::Upper),
            b'0'..=b'9' => (b'0', b'9', Kind::Numeric),
            _ => {
                carry = false;
                break;
            }
        };
        last = kind;
        if ch == end {
            v[pos] = first;
            carry = true;
        } else {
            v[pos] = ch + 1;
            carry = false;
            break;
        }
    }
    if carry {
        let lead = match last {
            Kind::Numeric => b'1',
            Kind::Upper => b'A',
            Kind::Lower => b'a',
        };
        v.insert(0, lead);
    }
    v
}

/// `ct_eval_type_check`.
fn ct_eval_type_check(type_mask: u32, op1: &Value) -> Value {
    let t = match op1 {
        Value::PartialArray(_) => IS_ARRAY,
        Value::PartialObject(_) => IS_OBJECT,
        v => v.type_code(),
    };
    boolean((u64::from(type_mask) >> t) & 1 != 0)
}

/// `ct_eval_in_array` (IN_ARRAY: the haystack's keys are the values, as the compiler built it).
fn ct_eval_in_array(extended_value: u32, op1: &Value, op2: &Value) -> Option<Value> {
    let Some(Literal::Array(ht)) = op2.lit() else {
        return None;
    };
    let needle = op1.lit()?;
    let res = match needle {
        Literal::String(s) => ht.iter().any(|(k, _)| *k == ArrayKey::Str(s.clone())),
        _ if extended_value != 0 => match needle {
            Literal::Long(l) => ht.iter().any(|(k, _)| *k == ArrayKey::Long(*l)),
            _ => false,
        },
        Literal::Null | Literal::False => ht
            .iter()
            .any(|(k, _)| *k == ArrayKey::Str(PhpStr(Vec::new()))),
        _ => ht.iter().any(|(k, _)| match k {
            ArrayKey::Str(s) => zend_operators::compare(needle, &Literal::String(s.clone())) == 0,
            ArrayKey::Long(_) => false,
        }),
    };
    Some(boolean(res))
}

/// `ct_eval_array_key_exists`.
fn ct_eval_array_key_exists(op1: &Value, op2: &Value) -> Option<Value> {
    if !op2.is_array() && !op2.is_partial_array() {
        return None;
    }
    if !matches!(op1.type_code(), IS_STRING | IS_LONG | IS_NULL) {
        return None;
    }
    let v = fetch_array_elem(op2, op1).ok()?;
    if op2.is_partial_array() && v.as_ref().map_or(true, |v| v.is_bot()) {
        return None;
    }
    Some(boolean(v.is_some()))
}

/// `ct_eval_binary_op`. A concatenation with a float is left to run time unless PHP 8.2's
/// [`PhpBugs::FLOAT_TO_STRING_FOLDED`] is reproduced: the float's string form depends on
/// the `precision` the program runs with.
fn ct_eval_binary_op(opcode: Opcode, op1: &Value, op2: &Value, php_bugs: PhpBugs) -> Option<Value> {
    let (a, b) = (op1.lit()?, op2.lit()?);
    if matches!(opcode, ZEND_CONCAT | ZEND_FAST_CONCAT)
        && !(php_bugs.converts_to_string(a) && php_bugs.converts_to_string(b))
    {
        return None;
    }
    zend_operators::eval_binary_op(opcode, a, b).map(Value::Const)
}

/// A call to an internal function (`DO_ICALL`), as `zend_call_info` describes it to SCCP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallInfo {
    /// The `INIT_*` op.
    pub init: OpNum,
    /// The `DO_*` op.
    pub call: Option<OpNum>,
    /// `num_args`: the INIT's argument count.
    pub num_args: u32,
    /// The SEND of each argument position below `num_args` (`arg_info[i].opline`); inline
    /// up to four, as the call graph's call sites.
    pub args: SmallVec<[Option<OpNum>; 4]>,
    pub send_unpack: bool,
    pub named_args: bool,
    pub is_prototype: bool,
}

/// The `DO_ICALL` calls of an op_array and which of them each op belongs to
/// (`zend_call_info **call_map`). SCCP evaluates and removes only calls of internal
/// functions: an op of another call finds no call here, which SCCP treats as it treats
/// that call (a result it cannot know, a SEND that changes nothing), so those calls are
/// left out, and an op_array without `DO_ICALL` needs no map.
#[derive(Clone, Debug, Default)]
pub struct CallMap {
    pub calls: Vec<CallInfo>,
    /// Per op: index into `calls` (`NO_CALL`: none). Empty when there are no calls.
    map: Vec<u32>,
}

/// An op of no call in [`CallMap`]'s map.
const NO_CALL: u32 = u32::MAX;

impl CallMap {
    /// Builds the map from the call graph's call sites (`zend_analyze_calls` +
    /// `zend_build_call_map`).
    pub fn new(op_array: &OpArray, sites: &[zend_call_graph::CallSite]) -> CallMap {
        let mut map = Vec::new();
        let mut calls = Vec::new();
        for site in sites {
            let Some(call) = site.call else { continue };
            if op_array.opcodes[call.index()].opcode != ZEND_DO_ICALL {
                continue;
            }
            if map.is_empty() {
                map = vec![NO_CALL; op_array.opcodes.len()];
            }
            let k = calls.len() as u32;
            let init = &op_array.opcodes[site.init.index()];
            // NEW counts its constructor's arguments in extended_value too.
            let num_args = init.extended_value;
            let mut args = smallvec![None; num_args as usize];
            let mut send_unpack = false;
            let mut named_args = false;
            for &a in &site.args {
                let op = &op_array.opcodes[a.index()];
                match op.opcode {
                    ZEND_SEND_UNPACK | ZEND_SEND_ARRAY => send_unpack = true,
                    _ => {}
                }
                if matches!(op.op2, Operand::Const(_)) {
                    named_args = true;
                } else if let Operand::Unused(n) = op.op2 {
                    if n >= 1 && ((n - 1) as usize) < args.len() {
                        args[(n - 1) as usize] = Some(a);
                    }
                }
                map[a.index()] = k;
            }
            map[site.init.index()] = k;
            map[call.index()] = k;
            calls.push(CallInfo {
                init: site.init,
                call: Some(call),
                num_args,
                args,
                send_unpack,
                named_args,
                is_prototype: site.is_prototype,
            });
        }
        CallMap { calls, map }
    }

    /// The index in `calls` of the call op `op` belongs to.
    fn index_of(&self, op: OpNum) -> Option<usize> {
        self.map
            .get(op.index())
            .filter(|&&k| k != NO_CALL)
            .map(|&k| k as usize)
    }

    fn call_of(&self, op: OpNum) -> Option<&CallInfo> {
        self.index_of(op).and_then(|k| self.calls.get(k))
    }
}

/// Which HashTable an array constant is (see [`Sccp::array_origin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArrayOrigin {
    /// The op_array's literal.
    Literal(usize),
    /// Made by this variable's definition.
    Def(SsaVar),
}

/// The lattice state and the facts the transfer functions read (`sccp_ctx`).
struct Sccp<'c> {
    values: Vec<Value>,
    var_info: &'c [VarInfo],
    calls: Option<&'c CallMap>,
    /// Whether a class (by name) takes dynamic properties without typed ones
    /// (`ce_flags` checked by ASSIGN_OBJ).
    class_ok: &'c dyn Fn(&[u8]) -> bool,
    strict_types: bool,
    /// [`crate::Options::with_file_cache`].
    with_file_cache: bool,
    php_bugs: PhpBugs,
}

fn var_type(info: &[VarInfo], v: SsaVar) -> u32 {
    info.get(v.index()).map_or(u32::MAX, |i| i.type_)
}

impl Sccp<'_> {
    /// `set_value`: lowers `var` to `new` and queues its uses when it changed.
    fn set_value(&mut self, scdf: &mut Scdf<'_>, var: SsaVar, new: &Value) {
        if new.is_bot() {
            self.set_bot(scdf, var);
            return;
        }
        if replaces(&self.values[var.index()], new) {
            discard(std::mem::replace(
                &mut self.values[var.index()],
                new.clone(),
            ));
            scdf.add_to_worklist(var);
        }
    }

    /// [`Sccp::set_value`] of a value the caller no longer needs: the same tests, the
    /// value moved in instead of copied.
    fn set_value_owned(&mut self, scdf: &mut Scdf<'_>, var: SsaVar, new: Value) {
        if new.is_bot() {
            self.set_bot(scdf, var);
            return;
        }
        if replaces(&self.values[var.index()], &new) {
            discard(std::mem::replace(&mut self.values[var.index()], new));
            scdf.add_to_worklist(var);
        } else {
            discard(new);
        }
    }

    /// [`Sccp::set_value`] of the value of `src`, copied only when `var` changes.
    fn set_value_from(&mut self, scdf: &mut Scdf<'_>, var: SsaVar, src: SsaVar) {
        if src == var {
            // Lowering a value to itself changes nothing.
            return;
        }
        let (cur, new) = (&self.values[var.index()], &self.values[src.index()]);
        if new.is_bot() {
            self.set_bot(scdf, var);
            return;
        }
        if replaces(cur, new) {
            let new = new.clone();
            discard(std::mem::replace(&mut self.values[var.index()], new));
            scdf.add_to_worklist(var);
        }
    }

    /// `set_value` to BOT, the most common lowering (every op SCCP does not evaluate):
    /// nothing to copy, and the old value is TOP or a scalar but for partial values.
    #[inline]
    fn set_bot(&mut self, scdf: &mut Scdf<'_>, var: SsaVar) {
        if !self.values[var.index()].is_bot() {
            self.lower_to_bot(scdf, var);
        }
    }

    /// [`Sccp::set_bot`] of a variable that is not BOT yet. Out of line: the test before
    /// it is what most callers need inline.
    #[inline(never)]
    fn lower_to_bot(&mut self, scdf: &mut Scdf<'_>, var: SsaVar) {
        // The old value tested where it is: moving it out to test it copied all of it.
        let v = &mut self.values[var.index()];
        if owns_nothing(v) {
            std::mem::forget(std::mem::replace(v, Value::Bot));
        } else {
            drop(std::mem::replace(v, Value::Bot));
        }
        scdf.add_to_worklist_inline(var);
    }

    /// Every definition of the op BOT (the result, and op1's and op2's for ops that
    /// define them).
    #[inline]
    fn set_defs_bot(&mut self, scdf: &mut Scdf<'_>, sop: &zend_ssa::SsaOp) {
        // Three tests rather than a loop over an array: this runs for most ops.
        if let Some(d) = sop.result_def {
            self.set_bot(scdf, d);
        }
        if let Some(d) = sop.op1_def {
            self.set_bot(scdf, d);
        }
        if let Some(d) = sop.op2_def {
            self.set_bot(scdf, d);
        }
    }

    fn set(&mut self, scdf: &mut Scdf<'_>, def: Option<SsaVar>, v: &Value) {
        if let Some(d) = def {
            self.set_value(scdf, d, v);
        }
    }

    /// [`Sccp::set`] of a value the caller no longer needs: moved in, not copied.
    fn set_owned(&mut self, scdf: &mut Scdf<'_>, def: Option<SsaVar>, v: Value) {
        match def {
            Some(d) => self.set_value_owned(scdf, d, v),
            None => discard(v),
        }
    }

    fn operand_value(
        &self,
        op_array: &OpArray,
        operand: Operand,
        use_: Option<SsaVar>,
    ) -> Option<Value> {
        if let Operand::Const(l) = operand {
            return op_array.literals.get(l.index()).cloned().map(Value::Const);
        }
        use_.map(|v| self.values[v.index()].clone())
    }

    /// Where the HashTable of `v`'s array constant was made, as far as PHP's SCCP shares
    /// it: ASSIGN and QM_ASSIGN-like ops copy their operand's zval (the same HashTable, a
    /// literal's for a constant operand), a phi or pi keeps its sources' when they all
    /// share one, any other definition makes its own. `memo` holds the variables being
    /// or already traced (`None`: on the cycle being traced, no information).
    fn array_origin(
        &self,
        scdf: &Scdf<'_>,
        v: SsaVar,
        memo: &mut Vec<(SsaVar, Option<ArrayOrigin>)>,
    ) -> Option<ArrayOrigin> {
        if let Some(&(_, known)) = memo.iter().find(|(m, _)| *m == v) {
            return known;
        }
        memo.push((v, None));
        let ssa = scdf.ssa;
        let info = &ssa.vars[v.index()];
        let origin = if let Some(p) = info.definition_phi {
            let mut common = None;
            for &src in ssa.phi(p).sources.iter().flatten() {
                if !self.values[src.index()].is_array() {
                    continue;
                }
                match self.array_origin(scdf, src, memo) {
                    None => {}
                    Some(o) if common.map_or(true, |c| c == o) => common = Some(o),
                    Some(_) => {
                        common = Some(ArrayOrigin::Def(v));
                        break;
                    }
                }
            }
            common
        } else if let Some(d) = info.definition {
            let o = &scdf.op_array.opcodes[d.index()];
            let sop = &ssa.ops[d.index()];
            let source = match o.opcode {
                ZEND_ASSIGN if sop.op1_def == Some(v) || sop.result_def == Some(v) => {
                    Some((o.op2, sop.op2_use))
                }
                ZEND_QM_ASSIGN | ZEND_JMP_SET | ZEND_COALESCE | ZEND_COPY_TMP
                    if sop.result_def == Some(v) =>
                {
                    Some((o.op1, sop.op1_use))
                }
                _ => None,
            };
            match source {
                Some((Operand::Const(l), _)) => Some(ArrayOrigin::Literal(l.index())),
                Some((_, Some(u))) => self.array_origin(scdf, u, memo),
                _ => Some(ArrayOrigin::Def(v)),
            }
        } else {
            Some(ArrayOrigin::Def(v))
        };
        if let Some(slot) = memo.iter_mut().find(|(m, _)| *m == v) {
            slot.1 = origin;
        }
        origin
    }

    /// One source of a phi into its meet (`join_phi_values` on `visit_phi`'s result).
    #[inline]
    fn join(&self, scdf: &Scdf<'_>, meet: &mut PhiMeet, src: SsaVar) {
        let b = &self.values[src.index()];
        // The cases `join_phi_values` decides from TOP and BOT alone, without its operands.
        if b.is_top() {
            return;
        }
        match meet.result {
            Meet::Bot => return,
            Meet::Top => {
                meet.first = Some(src);
                meet.result = if b.is_bot() {
                    Meet::Bot
                } else {
                    Meet::Source(src)
                };
                return;
            }
            Meet::Source(_) | Meet::Made(_) => {}
        }
        if b.is_bot() {
            meet.result = Meet::Bot;
            return;
        }
        self.join_known(scdf, meet, src);
    }

    /// [`Sccp::join`] of a known source into a meet that has a known value: out of line,
    /// as the cases decided by TOP and BOT alone are most joins.
    #[inline(never)]
    fn join_known(&self, scdf: &Scdf<'_>, meet: &mut PhiMeet, src: SsaVar) {
        let b = &self.values[src.index()];
        let prev = meet.first;
        let var = meet.var;
        let same_table = || {
            prev.is_some_and(|f| {
                let mut memo = vec![(var, None)];
                let origin = self.array_origin(scdf, f, &mut memo);
                memo[0].1 = origin;
                origin.is_some() && self.array_origin(scdf, src, &mut memo) == origin
            })
        };
        let a = match &meet.result {
            Meet::Source(s) => &self.values[s.index()],
            Meet::Made(v) => v,
            Meet::Top | Meet::Bot => unreachable!("decided above"),
        };
        match join_phi_values(a, b, meet.escape, meet.zeros_joined, same_table) {
            Joined::Unchanged => {}
            Joined::Bot => meet.result = Meet::Bot,
            Joined::Other => meet.result = Meet::Source(src),
            Joined::Made(v) => meet.result = Meet::Made(v),
        }
    }

    /// Whether [`Sccp::operand_value`] gives a value.
    #[inline]
    fn operand_present(&self, op_array: &OpArray, operand: Operand, use_: Option<SsaVar>) -> bool {
        match operand {
            Operand::Const(l) => l.index() < op_array.literals.len(),
            _ => use_.is_some(),
        }
    }

    /// Whether `def` is a variable that does not escape.
    fn no_escape(&self, ssa: &Ssa, def: Option<SsaVar>) -> bool {
        def.is_some_and(|d| ssa.vars[d.index()].escape_state == EscapeState::NoEscape)
    }

    /// [`Sccp::set`] of the value [`Sccp::operand_value`] gives (nothing when it gives
    /// none), copied only when `def` changes.
    fn set_from_operand(
        &mut self,
        scdf: &mut Scdf<'_>,
        def: Option<SsaVar>,
        operand: Operand,
        use_: Option<SsaVar>,
    ) {
        let Some(d) = def else {
            return;
        };
        match operand {
            Operand::Const(l) => {
                // A constant changes only a TOP variable.
                let lit = scdf.op_array.literals.get(l.index());
                if let (Some(lit), true) = (lit, self.values[d.index()].is_top()) {
                    self.values[d.index()] = Value::Const(lit.clone());
                    scdf.add_to_worklist(d);
                }
            }
            _ => {
                if let Some(u) = use_ {
                    self.set_value_from(scdf, d, u);
                }
            }
        }
    }

    /// Whether the value [`Sccp::operand_value`] gives is BOT, without copying it.
    #[inline]
    fn operand_is_bot(&self, operand: Operand, use_: Option<SsaVar>) -> bool {
        !matches!(operand, Operand::Const(_))
            && use_.is_some_and(|v| self.values[v.index()].is_bot())
    }

    /// Whether op1's or op2's value is BOT ([`Sccp::operand_is_bot`]).
    #[inline]
    fn has_bot_operand(&self, o: &zend_ir::Op, sop: &zend_ssa::SsaOp) -> bool {
        self.operand_is_bot(o.op1, sop.op1_use) || self.operand_is_bot(o.op2, sop.op2_use)
    }

    fn op1_value(&self, scdf: &Scdf<'_>, op: OpNum) -> Option<Value> {
        let o = &scdf.op_array.opcodes[op.index()];
        self.operand_value(scdf.op_array, o.op1, scdf.ssa.ops[op.index()].op1_use)
    }

    fn op2_value(&self, scdf: &Scdf<'_>, op: OpNum) -> Option<Value> {
        let o = &scdf.op_array.opcodes[op.index()];
        self.operand_value(scdf.op_array, o.op2, scdf.ssa.ops[op.index()].op2_use)
    }

    fn value_from_type_and_range(
        &self,
        ssa: &Ssa,
        op_array: &OpArray,
        v: SsaVar,
    ) -> Option<Literal> {
        value_from_type_and_range(self.var_info, ssa, op_array, v)
    }
}

/// `value_from_type_and_range`: the constant a variable's inferred type and range pin it
/// to (null, false, true, or a one-value integer range).
#[inline(always)]
fn value_from_type_and_range(
    var_info: &[VarInfo],
    ssa: &Ssa,
    op_array: &OpArray,
    v: SsaVar,
) -> Option<Literal> {
    {
        let info = var_info.get(v.index())?;
        let t = info.type_;
        let any = MayBe::ANY.bits();
        let undef = MayBe::UNDEF.bits();
        // Only null, false, true or int alone pin a value (the tests below): one test
        // first, which most variables fail.
        let m = t & (any | undef);
        if m != MayBe::NULL.bits()
            && m != MayBe::FALSE.bits()
            && m != MayBe::TRUE.bits()
            && m != MayBe::LONG.bits()
        {
            return None;
        }
        if t & undef != 0 || t & any == 0 {
            return None;
        }
        let from_verify = || {
            ssa.vars[v.index()]
                .definition
                .is_some_and(|d| op_array.opcodes[d.index()].opcode == ZEND_VERIFY_RETURN_TYPE)
        };
        // One of null, false and true alone (t has a type bit and no UNDEF here).
        let singleton = match t & any {
            x if x == MayBe::NULL.bits() => Some(Literal::Null),
            x if x == MayBe::FALSE.bits() => Some(Literal::False),
            x if x == MayBe::TRUE.bits() => Some(Literal::True),
            _ => None,
        };
        if singleton.is_some() {
            return if from_verify() { None } else { singleton };
        }
        if t & ((any | undef) & !MayBe::LONG.bits()) == 0
            && info.has_range
            && !info.range.underflow
            && !info.range.overflow
            && info.range.min == info.range.max
        {
            return Some(Literal::Long(info.range.min));
        }
        None
    }
}

impl ScdfHandlers for Sccp<'_> {
    #[inline]
    fn visit_instr(
        &mut self,
        scdf: &mut Scdf<'_>,
        op: OpNum,
        opcode: Opcode,
        sop: &zend_ssa::SsaOp,
    ) {
        // What `visit` does for most ops, without its large frame.
        match VISITS[opcode.0 as usize] {
            Visit::DefsBot => self.set_defs_bot(scdf, sop),
            Visit::UnlessBotOperand => self.visit_unless_bot_operand(scdf, op, sop),
            Visit::Evaluate => self.visit(scdf, op),
        }
    }

    fn visit_phi(&mut self, scdf: &mut Scdf<'_>, p: PhiId) {
        let ssa = scdf.ssa;
        let phi = ssa.phi(p);
        let var = phi.ssa_var;
        if self.values[var.index()].is_bot() {
            return;
        }
        let escape = ssa.vars[var.index()].escape_state != EscapeState::NoEscape;
        let zeros_joined = self.php_bugs.contains(PhpBugs::SIGNED_ZERO_PHI);
        let mut meet = PhiMeet {
            var,
            escape,
            zeros_joined,
            result: Meet::Top,
            first: None,
        };
        if let Some(from) = phi.pi {
            if let Some(Some(src)) = phi.sources.first() {
                if scdf.is_edge_feasible(from, phi.block) {
                    self.join(scdf, &mut meet, *src);
                }
            }
        } else {
            let preds = scdf.cfg.predecessors(phi.block);
            for (i, src) in phi.sources.iter().take(preds.len()).enumerate() {
                let Some(src) = src else {
                    continue;
                };
                if scdf.is_pred_edge_feasible(phi.block, preds, i) {
                    self.join(scdf, &mut meet, *src);
                    if matches!(meet.result, Meet::Bot) {
                        // BOT meets everything to BOT: the other sources change nothing.
                        break;
                    }
                }
            }
        }
        let result = meet.result;
        match result {
            Meet::Top => {}
            Meet::Bot => self.set_bot(scdf, var),
            Meet::Source(src) => self.set_value_from(scdf, var, src),
            Meet::Made(v) => self.set_value_owned(scdf, var, v),
        }
    }

    fn mark_feasible_successors(&mut self, scdf: &mut Scdf<'_>, block: BlockId, op: OpNum) {
        // The CFG outlives the solver's borrow: its successor list needs no copy.
        let cfg = scdf.cfg;
        let succs = cfg.successors(block);
        match self.feasible_successors(scdf, block, op) {
            Feasible::All => {
                for &s in succs {
                    scdf.mark_edge_feasible(self, block, s);
                }
            }
            Feasible::FirstTwo => {
                scdf.mark_edge_feasible(self, block, succs[0]);
                scdf.mark_edge_feasible(self, block, succs[1]);
            }
            Feasible::Nth(s) => {
                if let Some(&t) = succs.get(s) {
                    scdf.mark_edge_feasible(self, block, t);
                }
            }
            Feasible::Block(b) => scdf.mark_edge_feasible(self, block, b),
            Feasible::None => {}
        }
    }
}

/// Which successors of a block ending with a conditional branch are feasible
/// ([`Sccp::feasible_successors`]).
enum Feasible {
    All,
    /// The first two (branches that take both whatever their operand).
    FirstTwo,
    /// The successor at this position, if any.
    Nth(usize),
    /// The successor that is this block (a switch's target).
    Block(BlockId),
    /// None yet: the operand is TOP.
    None,
}

impl Sccp<'_> {
    /// The decision of `sccp_mark_feasible_successors` for the branch `op` ending
    /// `block`, read from the lattice without copying its operand's value.
    fn feasible_successors(&self, scdf: &Scdf<'_>, block: BlockId, op: OpNum) -> Feasible {
        let opline = &scdf.op_array.opcodes[op.index()];
        match opline.opcode {
            ZEND_ASSERT_CHECK | ZEND_CATCH | ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW => {
                return Feasible::FirstTwo;
            }
            _ => {}
        }
        let from_range: Value;
        let op1: &Value = match opline.op1 {
            Operand::Const(l) => match scdf.op_array.literals.get(l.index()) {
                Some(lit) => {
                    from_range = Value::Const(lit.clone());
                    &from_range
                }
                None => return Feasible::All,
            },
            _ => {
                let Some(u) = scdf.ssa.ops[op.index()].op1_use else {
                    return Feasible::All;
                };
                let v = &self.values[u.index()];
                if v.is_bot() {
                    match self.value_from_type_and_range(scdf.ssa, scdf.op_array, u) {
                        Some(l) => {
                            from_range = Value::Const(l);
                            &from_range
                        }
                        None => return Feasible::All,
                    }
                } else {
                    v
                }
            }
        };
        if op1.is_top() {
            return Feasible::None;
        }
        let s: usize = match opline.opcode {
            ZEND_JMPZ | ZEND_JMPZ_EX => match ct_eval_bool_cast(op1) {
                Some(b) => usize::from(b),
                None => return Feasible::All,
            },
            ZEND_JMPNZ | ZEND_JMPNZ_EX | ZEND_JMP_SET => match ct_eval_bool_cast(op1) {
                Some(b) => usize::from(!b),
                None => return Feasible::All,
            },
            ZEND_COALESCE => usize::from(op1.type_code() == IS_NULL),
            ZEND_JMP_NULL => usize::from(op1.type_code() != IS_NULL),
            ZEND_FE_RESET_R | ZEND_FE_RESET_RW => {
                // A partial array counts as an array here only when non-empty (8.2's
                // IS_ARRAY test never sees a partial one: it falls to "both").
                if !op1.is_array() {
                    return Feasible::All;
                }
                usize::from(op1.num_elements() != 0)
            }
            ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH => {
                let strict = opline.opcode == ZEND_MATCH;
                let t = op1.type_code();
                let correct = (opline.opcode == ZEND_SWITCH_LONG && t == IS_LONG)
                    || (opline.opcode == ZEND_SWITCH_STRING && t == IS_STRING)
                    || (opline.opcode == ZEND_MATCH && (t == IS_LONG || t == IS_STRING));
                if correct || strict {
                    let mut target = opline.extended_value as usize;
                    if correct {
                        if let Operand::Const(l) = opline.op2 {
                            if let Some(Literal::Array(table)) =
                                scdf.op_array.literals.get(l.index())
                            {
                                let key = match op1.lit() {
                                    Some(Literal::Long(v)) => ArrayKey::Long(*v),
                                    Some(Literal::String(s)) => ArrayKey::Str(s.clone()),
                                    _ => ArrayKey::Long(i64::MIN),
                                };
                                if let Some((_, Literal::Long(t))) =
                                    table.iter().find(|(k, _)| *k == key)
                                {
                                    target = *t as usize;
                                }
                            }
                        }
                    }
                    return match scdf.cfg.map.get(target) {
                        Some(&b) => Feasible::Block(b),
                        None => Feasible::None,
                    };
                }
                scdf.cfg.successors(block).len() - 1
            }
            _ => return Feasible::All,
        };
        Feasible::Nth(s)
    }
}

/// `join_partial_arrays` / `join_partial_objects`: the elements both have, identical.
/// The binary operators [`Sccp::visit`] folds with `ct_eval_binary_op` (a pattern).
macro_rules! binary_ops {
    () => {
        ZEND_ADD
            | ZEND_SUB
            | ZEND_MUL
            | ZEND_DIV
            | ZEND_MOD
            | ZEND_POW
            | ZEND_SL
            | ZEND_SR
            | ZEND_CONCAT
            | ZEND_FAST_CONCAT
            | ZEND_IS_EQUAL
            | ZEND_IS_NOT_EQUAL
            | ZEND_IS_SMALLER
            | ZEND_IS_SMALLER_OR_EQUAL
            | ZEND_IS_IDENTICAL
            | ZEND_IS_NOT_IDENTICAL
            | ZEND_BW_OR
            | ZEND_BW_AND
            | ZEND_BW_XOR
            | ZEND_BOOL_XOR
            | ZEND_CASE
            | ZEND_CASE_STRICT
    };
}

/// How [`Sccp::visit_instr`] handles an op, by its opcode.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    /// Not evaluated: every definition BOT.
    DefsBot,
    /// Every definition BOT when an operand is (tested before [`Sccp::visit`], which
    /// copies the operands' values), else evaluated.
    UnlessBotOperand,
    /// Evaluated ([`Sccp::visit`]).
    Evaluate,
}

/// [`Visit`] by opcode: one load per visited op.
static VISITS: [Visit; 256] = {
    let mut table = [Visit::DefsBot; 256];
    let mut i = 0;
    while i < 256 {
        let opcode = Opcode(i as u8);
        table[i] = if !evaluated_opcode(opcode) {
            Visit::DefsBot
        } else if bot_operand_kept(opcode) || matches!(opcode, ZEND_SEND_VAL | ZEND_SEND_VAR) {
            // (A SEND's operands decide its call's value, not its own.)
            Visit::Evaluate
        } else {
            Visit::UnlessBotOperand
        };
        i += 1;
    }
    table
};

/// The evaluated opcodes whose definitions a BOT operand does not make BOT by itself:
/// writes into arrays and objects, and assignments (their operands' values are copied).
const fn bot_operand_kept(opcode: Opcode) -> bool {
    matches!(
        opcode,
        ZEND_ASSIGN
            | ZEND_ASSIGN_DIM
            | ZEND_ASSIGN_OBJ
            | ZEND_INIT_ARRAY
            | ZEND_ADD_ARRAY_ELEMENT
            | ZEND_ADD_ARRAY_UNPACK
            | ZEND_NEW
            | ZEND_ASSIGN_STATIC_PROP_REF
            | ZEND_ASSIGN_OBJ_REF
    )
}

/// The opcodes [`Sccp::visit`] evaluates: those of its two matches' arms. Every other op
/// gets BOT for each of its definitions, whatever its operands ([`VISITS`]). Keep this list
/// and the arms in step: an arm whose opcode is missing here is never reached. They are
/// those whose definitions keep a BOT operand's ([`bot_operand_kept`]), the SENDs, and the
/// rest of the arms.
const fn evaluated_opcode(opcode: Opcode) -> bool {
    bot_operand_kept(opcode)
        || matches!(
            opcode,
            ZEND_SEND_VAL
                | ZEND_SEND_VAR
                | binary_ops!()
                | ZEND_ASSIGN_OP
                | ZEND_ASSIGN_DIM_OP
                | ZEND_ASSIGN_OBJ_OP
                | ZEND_ASSIGN_STATIC_PROP_OP
                | ZEND_PRE_INC_OBJ
                | ZEND_PRE_DEC_OBJ
                | ZEND_POST_INC_OBJ
                | ZEND_POST_DEC_OBJ
                | ZEND_PRE_INC
                | ZEND_PRE_DEC
                | ZEND_POST_INC
                | ZEND_POST_DEC
                | ZEND_BW_NOT
                | ZEND_BOOL_NOT
                | ZEND_CAST
                | ZEND_BOOL
                | ZEND_JMPZ_EX
                | ZEND_JMPNZ_EX
                | ZEND_STRLEN
                | ZEND_YIELD_FROM
                | ZEND_COUNT
                | ZEND_IN_ARRAY
                | ZEND_ARRAY_KEY_EXISTS
                | ZEND_FETCH_DIM_R
                | ZEND_FETCH_DIM_IS
                | ZEND_FETCH_LIST_R
                | ZEND_ISSET_ISEMPTY_DIM_OBJ
                | ZEND_FETCH_OBJ_R
                | ZEND_FETCH_OBJ_IS
                | ZEND_ISSET_ISEMPTY_PROP_OBJ
                | ZEND_QM_ASSIGN
                | ZEND_JMP_SET
                | ZEND_COALESCE
                | ZEND_COPY_TMP
                | ZEND_JMP_NULL
                | ZEND_FETCH_CLASS
                | ZEND_ISSET_ISEMPTY_CV
                | ZEND_TYPE_CHECK
                | ZEND_INSTANCEOF
                | ZEND_ROPE_INIT
                | ZEND_ROPE_ADD
                | ZEND_ROPE_END
                | ZEND_DO_ICALL
        )
}

fn join_hash_tables(a: &Value, b: &Value, zeros_joined: bool) -> Ht {
    let (ha, hb) = (
        a.elements().unwrap_or_default(),
        b.elements().unwrap_or_default(),
    );
    let mut joined = Ht::new();
    for (k, v) in ha.into_elements() {
        if hb.get(&k).is_some_and(|w| identical(&v, w, zeros_joined)) {
            joined.add_new(k, v);
        }
    }
    joined
}

/// The meet of the sources a phi has joined so far (see [`join_phi_values`]), held
/// without a copy while it is one of them.
enum Meet {
    Top,
    Bot,
    /// Equal to this source's value.
    Source(SsaVar),
    /// A value no source holds (a join of partial arrays or objects).
    Made(Value),
}

/// A phi's meet in progress ([`Sccp::join`]).
struct PhiMeet {
    var: SsaVar,
    escape: bool,
    zeros_joined: bool,
    result: Meet,
    /// The source `result` was copied from (when an array constant: whose HashTable).
    first: Option<SsaVar>,
}

/// What [`join_phi_values`] makes of its first operand.
enum Joined {
    Unchanged,
    Bot,
    /// The second operand's value.
    Other,
    Made(Value),
}

/// `join_phi_values`: the meet of `a` and `b`, as a change to `a`. `same_table` says
/// whether two array constants are the same HashTable, which `zend_is_identical` takes as
/// identical before comparing elements (so an array holding NAN meets itself as a
/// constant). `zeros_joined` meets `0.0` and `-0.0` as PHP 8.2 does
/// ([`PhpBugs::SIGNED_ZERO_PHI`]).
fn join_phi_values(
    a: &Value,
    b: &Value,
    escape: bool,
    zeros_joined: bool,
    same_table: impl FnOnce() -> bool,
) -> Joined {
    if a.is_bot() || b.is_top() {
        return Joined::Unchanged;
    }
    if a.is_top() {
        return Joined::Other;
    }
    if b.is_bot() {
        return Joined::Bot;
    }
    let arrays = |x: &Value| x.is_array() || x.is_partial_array();
    let partial_arrays = || {
        if arrays(a) && arrays(b) {
            Joined::Made(Value::PartialArray(join_hash_tables(a, b, zeros_joined)))
        } else {
            Joined::Bot
        }
    };
    if a.is_partial_array() || b.is_partial_array() {
        partial_arrays()
    } else if a.is_partial_object() || b.is_partial_object() {
        if !escape && a.is_partial_object() && b.is_partial_object() {
            Joined::Made(Value::PartialObject(join_hash_tables(a, b, zeros_joined)))
        } else {
            Joined::Bot
        }
    } else if !(identical(a, b, zeros_joined) || (a.is_array() && b.is_array() && same_table())) {
        partial_arrays()
    } else {
        Joined::Unchanged
    }
}

impl Sccp<'_> {
    /// [`Visit::UnlessBotOperand`]: about half such ops have a BOT operand, and are done
    /// without [`Sccp::visit`]'s large frame.
    #[inline(never)]
    fn visit_unless_bot_operand(&mut self, scdf: &mut Scdf<'_>, op: OpNum, sop: &zend_ssa::SsaOp) {
        let o = &scdf.op_array.opcodes[op.index()];
        if self.has_bot_operand(o, sop) {
            self.set_defs_bot(scdf, sop);
        } else {
            self.visit(scdf, op);
        }
    }

    /// `sccp_visit_instr`.
    #[inline(never)]
    fn visit(&mut self, scdf: &mut Scdf<'_>, op: OpNum) {
        let op_array = scdf.op_array;
        let ssa = scdf.ssa;
        let mut cur = op;
        let mut opline = &op_array.opcodes[cur.index()];
        let mut sop = ssa.ops[cur.index()];
        debug_assert!(
            VISITS[opline.opcode.0 as usize] != Visit::DefsBot,
            "only evaluated ops reach visit"
        );
        if matches!(opline.opcode, ZEND_SEND_VAL | ZEND_SEND_VAR) {
            // A changed argument of an ICALL: the call's value is reconsidered (with this
            // SEND's operands: a BOT one makes the call's result BOT).
            let Some(c) = self
                .calls
                .and_then(|calls| calls.call_of(op))
                .and_then(|call| call.call)
            else {
                return;
            };
            let op1_top = !matches!(opline.op1, Operand::Const(_))
                && sop.op1_use.is_some_and(|u| self.values[u.index()].is_top());
            if op1_top || op_array.opcodes[c.index()].opcode != ZEND_DO_ICALL {
                return;
            }
            if self.has_bot_operand(opline, &sop) {
                // What the test after the first match below does, before copying the
                // operands' values (strings and arrays). The other ops that a BOT operand
                // makes BOT were tested by the caller ([`Visit::UnlessBotOperand`]).
                self.set_defs_bot(scdf, &ssa.ops[c.index()]);
                return;
            }
            cur = c;
            opline = &op_array.opcodes[cur.index()];
            sop = ssa.ops[cur.index()];
        }
        // The ops whose outcome needs no copy of an operand's value (strings and arrays
        // are deep copies): a copied operand, an operand that is missing, or none read.
        // Each arm does what the two matches below do for it.
        match opline.opcode {
            ZEND_ASSIGN => {
                let op1_bot = self.operand_is_bot(opline.op1, sop.op1_use);
                let may_ref = sop
                    .op1_use
                    .is_some_and(|u| var_type(self.var_info, u) & MayBe::REF.bits() != 0);
                if op1_bot && may_ref {
                    self.set(scdf, sop.op1_def, BOT);
                    self.set(scdf, sop.result_def, BOT);
                } else {
                    self.set_from_operand(scdf, sop.op1_def, opline.op2, sop.op2_use);
                    self.set_from_operand(scdf, sop.result_def, opline.op2, sop.op2_use);
                }
                return;
            }
            ZEND_ASSIGN_OBJ if !self.no_escape(ssa, sop.op1_def) => {
                self.set(scdf, sop.result_def, BOT);
                self.set(scdf, sop.op1_def, BOT);
                return;
            }
            ZEND_NEW => {
                if self.no_escape(ssa, sop.result_def) {
                    self.set_owned(scdf, sop.result_def, Value::PartialObject(Ht::new()));
                } else {
                    self.set(scdf, sop.result_def, BOT);
                }
                return;
            }
            // (Past the BOT test above.)
            ZEND_QM_ASSIGN | ZEND_JMP_SET | ZEND_COALESCE | ZEND_COPY_TMP => {
                self.set_from_operand(scdf, sop.result_def, opline.op1, sop.op1_use);
                return;
            }
            ZEND_FETCH_CLASS => {
                self.set_from_operand(scdf, sop.result_def, opline.op2, sop.op2_use);
                return;
            }
            ZEND_FETCH_OBJ_R | ZEND_FETCH_OBJ_IS | ZEND_ISSET_ISEMPTY_PROP_OBJ
                if !self.operand_present(op_array, opline.op1, sop.op1_use) =>
            {
                self.set(scdf, sop.result_def, BOT);
                return;
            }
            _ => {}
        }
        let op1 = self.op1_value(scdf, op);
        let op2 = self.op2_value(scdf, op);

        match opline.opcode {
            ZEND_ASSIGN_DIM => {
                self.visit_assign_dim(scdf, op, op1, op2);
                return;
            }
            ZEND_ASSIGN_OBJ => {
                self.visit_assign_obj(scdf, op, op1, op2);
                return;
            }
            ZEND_INIT_ARRAY | ZEND_ADD_ARRAY_ELEMENT => {
                self.visit_array_element(scdf, op, op1, op2);
                return;
            }
            ZEND_ADD_ARRAY_UNPACK => {
                let Some(ru) = sop.result_use else {
                    self.set(scdf, sop.result_def, BOT);
                    return;
                };
                let result = self.values[ru.index()].clone();
                let op1v = op1.unwrap_or(Value::Bot);
                if result.is_bot() || op1v.is_bot() {
                    self.set(scdf, sop.result_def, BOT);
                    return;
                }
                if result.is_top() || op1v.is_top() {
                    return;
                }
                if result.type_code() == IS_NULL {
                    self.set(scdf, sop.result_def, BOT);
                    return;
                }
                // The array moves on to the result; the operand keeps a null.
                self.values[ru.index()] = Value::Const(Literal::Null);
                let mut zv = result;
                let bug = self.php_bugs.contains(PhpBugs::UNPACK_INTO_PARTIAL_ARRAY);
                if ct_eval_add_array_unpack(&mut zv, &op1v, bug) {
                    self.set(scdf, sop.result_def, &zv);
                } else {
                    self.set(scdf, sop.result_def, BOT);
                }
                return;
            }
            ZEND_ASSIGN_STATIC_PROP_REF | ZEND_ASSIGN_OBJ_REF => {
                self.set_defs_bot(scdf, &sop);
                if cur.index() + 1 < op_array.opcodes.len() {
                    cur = OpNum::new(cur.as_u32() + 1);
                    opline = &op_array.opcodes[cur.index()];
                    sop = ssa.ops[cur.index()];
                    self.set(scdf, sop.op1_def, BOT);
                }
            }
            _ => {}
        }

        if op1.as_ref().is_some_and(|v| v.is_bot()) || op2.as_ref().is_some_and(|v| v.is_bot()) {
            self.set_defs_bot(scdf, &sop);
            return;
        }

        macro_rules! skip_if_top {
            ($v:expr) => {
                if $v.is_top() {
                    return;
                }
            };
        }
        let o1 = op1.as_ref().unwrap_or(TOP);
        let o2 = op2.as_ref().unwrap_or(TOP);
        let result = |this: &mut Self, scdf: &mut Scdf<'_>, v: Option<Value>| match v {
            Some(v) => this.set(scdf, sop.result_def, &v),
            None => this.set(scdf, sop.result_def, BOT),
        };

        match opline.opcode {
            binary_ops!() => {
                if op1.is_none() || op2.is_none() {
                    result(self, scdf, None);
                    return;
                }
                skip_if_top!(o1);
                skip_if_top!(o2);
                let code = match opline.opcode {
                    ZEND_CASE => ZEND_IS_EQUAL,
                    ZEND_CASE_STRICT => ZEND_IS_IDENTICAL,
                    c => c,
                };
                result(self, scdf, ct_eval_binary_op(code, o1, o2, self.php_bugs));
            }
            ZEND_ASSIGN_OP
            | ZEND_ASSIGN_DIM_OP
            | ZEND_ASSIGN_OBJ_OP
            | ZEND_ASSIGN_STATIC_PROP_OP => {
                if op1.is_some() {
                    skip_if_top!(o1);
                }
                if op2.is_some() {
                    skip_if_top!(o2);
                }
                if self.visit_assign_op(scdf, cur, op1.as_ref(), op2.as_ref()) {
                    return;
                }
                self.set(scdf, sop.result_def, BOT);
                self.set(scdf, sop.op1_def, BOT);
            }
            ZEND_PRE_INC_OBJ | ZEND_PRE_DEC_OBJ | ZEND_POST_INC_OBJ | ZEND_POST_DEC_OBJ => {
                if op1.is_some() {
                    skip_if_top!(o1);
                    skip_if_top!(o2);
                    let no_escape = sop
                        .op1_def
                        .is_some_and(|d| ssa.vars[d.index()].escape_state == EscapeState::NoEscape);
                    if o1.is_partial_object() && no_escape {
                        if let Some(t1) = ct_eval_fetch_obj(o1, o2) {
                            if let Some(t2) = ct_eval_incdec(opline.opcode, &t1) {
                                let mut zv = o1.clone();
                                ct_eval_assign_obj(&mut zv, &t2, o2);
                                let r =
                                    if matches!(opline.opcode, ZEND_PRE_INC_OBJ | ZEND_PRE_DEC_OBJ)
                                    {
                                        t2
                                    } else {
                                        t1
                                    };
                                self.set(scdf, sop.result_def, &r);
                                self.set(scdf, sop.op1_def, &zv);
                                return;
                            }
                        }
                    }
                }
                self.set(scdf, sop.op1_def, BOT);
                self.set(scdf, sop.result_def, BOT);
            }
            ZEND_PRE_INC | ZEND_PRE_DEC => {
                skip_if_top!(o1);
                match ct_eval_incdec(opline.opcode, o1) {
                    Some(v) => {
                        self.set(scdf, sop.op1_def, &v);
                        self.set(scdf, sop.result_def, &v);
                    }
                    None => {
                        self.set(scdf, sop.op1_def, BOT);
                        self.set(scdf, sop.result_def, BOT);
                    }
                }
            }
            ZEND_POST_INC | ZEND_POST_DEC => {
                skip_if_top!(o1);
                self.set(scdf, sop.result_def, o1);
                match ct_eval_incdec(opline.opcode, o1) {
                    Some(v) => self.set(scdf, sop.op1_def, &v),
                    None => self.set(scdf, sop.op1_def, BOT),
                }
            }
            ZEND_BW_NOT | ZEND_BOOL_NOT => {
                skip_if_top!(o1);
                let v = o1
                    .lit()
                    .and_then(|l| zend_operators::eval_unary_op(opline.opcode, l));
                result(self, scdf, v.map(Value::Const));
            }
            ZEND_CAST => {
                skip_if_top!(o1);
                let v = o1
                    .lit()
                    .and_then(|l| zend_operators::eval_cast(opline.extended_value, l));
                result(self, scdf, v.map(Value::Const));
            }
            ZEND_BOOL | ZEND_JMPZ_EX | ZEND_JMPNZ_EX => {
                skip_if_top!(o1);
                result(self, scdf, ct_eval_bool_cast(o1).map(boolean));
            }
            ZEND_STRLEN => {
                skip_if_top!(o1);
                let v = o1.lit().and_then(zend_operators::eval_strlen);
                result(self, scdf, v.map(Value::Const));
            }
            ZEND_YIELD_FROM => {
                skip_if_top!(o1);
                if matches!(o1, Value::Const(Literal::Array(a)) if a.is_empty()) {
                    self.set(scdf, sop.result_def, &Value::Const(Literal::Null));
                } else {
                    result(self, scdf, None);
                }
            }
            ZEND_COUNT => {
                skip_if_top!(o1);
                let v = match o1 {
                    Value::Const(Literal::Array(a)) => {
                        Some(Value::Const(Literal::Long(a.len() as i64)))
                    }
                    _ => None,
                };
                result(self, scdf, v);
            }
            ZEND_IN_ARRAY => {
                skip_if_top!(o1);
                skip_if_top!(o2);
                result(self, scdf, ct_eval_in_array(opline.extended_value, o1, o2));
            }
            ZEND_ARRAY_KEY_EXISTS => {
                skip_if_top!(o1);
                skip_if_top!(o2);
                result(self, scdf, ct_eval_array_key_exists(o1, o2));
            }
            ZEND_FETCH_DIM_R | ZEND_FETCH_DIM_IS | ZEND_FETCH_LIST_R => {
                skip_if_top!(o1);
                skip_if_top!(o2);
                if op2.is_none() {
                    result(self, scdf, None);
                    return;
                }
                let v = ct_eval_fetch_dim(o1, o2, opline.opcode != ZEND_FETCH_LIST_R);
                result(self, scdf, v);
            }
            ZEND_ISSET_ISEMPTY_DIM_OBJ => {
                skip_if_top!(o1);
                skip_if_top!(o2);
                if op1.is_none() || op2.is_none() {
                    result(self, scdf, None);
                    return;
                }
                result(self, scdf, ct_eval_isset_dim(opline.extended_value, o1, o2));
            }
            ZEND_FETCH_OBJ_R | ZEND_FETCH_OBJ_IS => {
                if op1.is_some() {
                    skip_if_top!(o1);
                    skip_if_top!(o2);
                    if let Some(v) = ct_eval_fetch_obj(o1, o2) {
                        self.set(scdf, sop.result_def, &v);
                        return;
                    }
                }
                result(self, scdf, None);
            }
            ZEND_ISSET_ISEMPTY_PROP_OBJ => {
                if op1.is_some() {
                    skip_if_top!(o1);
                    skip_if_top!(o2);
                    if let Some(v) = ct_eval_isset_obj(opline.extended_value, o1, o2) {
                        self.set(scdf, sop.result_def, &v);
                        return;
                    }
                }
                result(self, scdf, None);
            }
            ZEND_JMP_NULL => {
                let v = match opline.extended_value & ZEND_SHORT_CIRCUITING_CHAIN_MASK {
                    ZEND_SHORT_CIRCUITING_CHAIN_ISSET => Literal::False,
                    ZEND_SHORT_CIRCUITING_CHAIN_EMPTY => Literal::True,
                    _ => Literal::Null,
                };
                self.set(scdf, sop.result_def, &Value::Const(v));
            }
            ZEND_ISSET_ISEMPTY_CV => {
                skip_if_top!(o1);
                result(
                    self,
                    scdf,
                    ct_eval_isset_isempty(opline.extended_value, op1.as_ref()),
                );
            }
            ZEND_TYPE_CHECK => {
                skip_if_top!(o1);
                let v = ct_eval_type_check(opline.extended_value, o1);
                self.set(scdf, sop.result_def, &v);
            }
            ZEND_INSTANCEOF => {
                skip_if_top!(o1);
                self.set(scdf, sop.result_def, &boolean(false));
            }
            ZEND_ROPE_INIT => {
                skip_if_top!(o2);
                let v = o2
                    .lit()
                    .and_then(|l| zend_operators::eval_cast(u32::from(IS_STRING), l));
                result(self, scdf, v.map(Value::Const));
            }
            ZEND_ROPE_ADD | ZEND_ROPE_END => {
                skip_if_top!(o1);
                skip_if_top!(o2);
                if op1.is_none() || op2.is_none() {
                    result(self, scdf, None);
                    return;
                }
                result(
                    self,
                    scdf,
                    ct_eval_binary_op(ZEND_CONCAT, o1, o2, self.php_bugs),
                );
            }
            ZEND_DO_ICALL => self.visit_icall(scdf, cur),
            _ => {
                self.set_defs_bot(scdf, &sop);
            }
        }
    }

    fn visit_assign_dim(
        &mut self,
        scdf: &mut Scdf<'_>,
        op: OpNum,
        op1: Option<Value>,
        op2: Option<Value>,
    ) {
        let ssa = scdf.ssa;
        let sop = ssa.ops[op.index()];
        let data_op = OpNum::new(op.as_u32() + 1);
        let data = if data_op.index() < scdf.op_array.opcodes.len() {
            self.op1_value(scdf, data_op)
        } else {
            None
        };
        let Some(data) = data else {
            self.set(scdf, sop.result_def, BOT);
            self.set(scdf, sop.op1_def, BOT);
            return;
        };
        // An undefined `$a` in `$a[$b] = $c` behaves as null, without a warning.
        let mut op1 = op1;
        if let Some(u) = sop.op1_use {
            if var_type(self.var_info, u) & MayBe::ANY.bits() == 0 {
                op1 = Some(Value::Const(Literal::Null));
            }
        }
        let Some(op1) = op1 else {
            self.set(scdf, sop.result_def, BOT);
            self.set(scdf, sop.op1_def, BOT);
            return;
        };
        if op1.is_bot() {
            self.set(scdf, sop.result_def, BOT);
            self.set(scdf, sop.op1_def, BOT);
            return;
        }
        if op1.is_top() || data.is_top() || op2.as_ref().is_some_and(|v| v.is_top()) {
            return;
        }
        if op2.as_ref().is_some_and(|v| v.is_bot()) {
            // Update of an unknown index.
            self.set(scdf, sop.result_def, BOT);
            if sop.op1_def.is_some() {
                self.set(scdf, sop.op1_def, &Value::PartialArray(Ht::new()));
            } else {
                self.set(scdf, sop.op1_def, BOT);
            }
            return;
        }
        if data.is_bot() {
            self.set(scdf, sop.result_def, BOT);
            let t = op1.type_code();
            if (op1.is_partial_array() || t == IS_NULL || t == IS_FALSE || t == IS_ARRAY)
                && sop.op1_def.is_some()
            {
                let mut h = if t == IS_NULL || t == IS_FALSE {
                    Ht::new()
                } else {
                    op1.elements().unwrap_or_default()
                };
                match &op2 {
                    None => self.set(scdf, sop.op1_def, &Value::PartialArray(h)),
                    Some(k) => {
                        if ct_eval_del_array_elem(&mut h, k) {
                            self.set(scdf, sop.op1_def, &Value::PartialArray(h));
                        } else {
                            self.set(scdf, sop.op1_def, BOT);
                        }
                    }
                }
            } else {
                self.set(scdf, sop.op1_def, BOT);
            }
            return;
        }
        let mut zv = op1;
        if op2.is_none() && zv.is_partial_array() {
            // No next element can be added to a partial array.
            self.set_owned(scdf, sop.result_def, data);
            self.set_owned(scdf, sop.op1_def, zv);
        } else if ct_eval_assign_dim(&mut zv, &data, op2.as_ref()) {
            if data.is_partial_array() {
                zv = make_partial(zv);
            }
            self.set_owned(scdf, sop.result_def, data);
            self.set_owned(scdf, sop.op1_def, zv);
        } else {
            self.set(scdf, sop.result_def, BOT);
            self.set(scdf, sop.op1_def, BOT);
        }
    }

    fn visit_assign_obj(
        &mut self,
        scdf: &mut Scdf<'_>,
        op: OpNum,
        op1: Option<Value>,
        op2: Option<Value>,
    ) {
        let ssa = scdf.ssa;
        let sop = ssa.ops[op.index()];
        let no_escape = sop
            .op1_def
            .is_some_and(|d| ssa.vars[d.index()].escape_state == EscapeState::NoEscape);
        if !no_escape {
            self.set(scdf, sop.result_def, BOT);
            self.set(scdf, sop.op1_def, BOT);
            return;
        }
        let data_op = OpNum::new(op.as_u32() + 1);
        let data = if data_op.index() < scdf.op_array.opcodes.len() {
            self.op1_value(scdf, data_op)
        } else {
            None
        };
        // Typed or undeclared-dynamic properties would need coercions and errors.
        let class_ok = sop
            .op1_use
            .and_then(|u| self.var_info.get(u.index()))
            .and_then(|i| i.ce.as_ref())
            .is_some_and(|ce| (self.class_ok)(&ce.name));
        let (Some(data), Some(op1), Some(op2)) = (data, op1, op2) else {
            self.set(scdf, sop.result_def, BOT);
            self.set(scdf, sop.op1_def, BOT);
            return;
        };
        if !class_ok || op1.is_bot() {
            self.set(scdf, sop.result_def, BOT);
            self.set(scdf, sop.op1_def, BOT);
            return;
        }
        if op1.is_top() || data.is_top() || op2.is_top() {
            return;
        }
        if op2.is_bot() {
            self.set(scdf, sop.result_def, BOT);
            self.set(scdf, sop.op1_def, &Value::PartialObject(Ht::new()));
            return;
        }
        if data.is_bot() {
            self.set(scdf, sop.result_def, BOT);
            let t = op1.type_code();
            if op1.is_partial_object() || t == IS_NULL || t == IS_FALSE {
                let mut h = match &op1 {
                    Value::PartialObject(h) => h.clone(),
                    _ => Ht::new(),
                };
                match prop_key(&op2) {
                    Some(k) => {
                        h.remove(&k);
                        self.set(scdf, sop.op1_def, &Value::PartialObject(h));
                    }
                    None => self.set(scdf, sop.op1_def, BOT),
                }
            } else {
                self.set(scdf, sop.op1_def, BOT);
            }
            return;
        }
        let mut zv = op1;
        if ct_eval_assign_obj(&mut zv, &data, &op2) {
            self.set_owned(scdf, sop.result_def, data);
            self.set_owned(scdf, sop.op1_def, zv);
        } else {
            self.set(scdf, sop.result_def, BOT);
            self.set(scdf, sop.op1_def, BOT);
        }
    }

    /// The ASSIGN_*_OP cases that fold; `false` when the result is BOT.
    fn visit_assign_op(
        &mut self,
        scdf: &mut Scdf<'_>,
        op: OpNum,
        op1: Option<&Value>,
        op2: Option<&Value>,
    ) -> bool {
        let ssa = scdf.ssa;
        let opline = &scdf.op_array.opcodes[op.index()];
        let sop = ssa.ops[op.index()];
        let binop = Opcode(opline.extended_value as u8);
        let data = || {
            let d = OpNum::new(op.as_u32() + 1);
            if d.index() < scdf.op_array.opcodes.len() {
                self.op1_value(scdf, d)
            } else {
                None
            }
        };
        match opline.opcode {
            ZEND_ASSIGN_OP => {
                let (Some(a), Some(b)) = (op1, op2) else {
                    return false;
                };
                if let Some(v) = ct_eval_binary_op(binop, a, b, self.php_bugs) {
                    self.set(scdf, sop.op1_def, &v);
                    self.set(scdf, sop.result_def, &v);
                    return true;
                }
                false
            }
            ZEND_ASSIGN_DIM_OP => {
                let (Some(o1), Some(o2)) = (op1, op2) else {
                    return false;
                };
                if !(o1.is_partial_array() || o1.is_array()) || sop.op1_def.is_none() {
                    return false;
                }
                let Some(data) = data() else {
                    return false;
                };
                if data.is_top() {
                    return true;
                }
                let Some(tmp) = ct_eval_fetch_dim(o1, o2, false) else {
                    return false;
                };
                if data.is_bot() {
                    let mut h = o1.elements().unwrap_or_default();
                    ct_eval_del_array_elem(&mut h, o2);
                    self.set(scdf, sop.result_def, BOT);
                    self.set(scdf, sop.op1_def, &Value::PartialArray(h));
                    return true;
                }
                let Some(tmp) = ct_eval_binary_op(binop, &tmp, &data, self.php_bugs) else {
                    self.set(scdf, sop.result_def, BOT);
                    self.set(scdf, sop.op1_def, BOT);
                    return true;
                };
                let mut zv = o1.clone();
                if ct_eval_assign_dim(&mut zv, &tmp, Some(o2)) {
                    self.set(scdf, sop.result_def, &tmp);
                    self.set(scdf, sop.op1_def, &zv);
                    return true;
                }
                false
            }
            ZEND_ASSIGN_OBJ_OP => {
                let (Some(o1), Some(o2)) = (op1, op2) else {
                    return false;
                };
                let no_escape = sop
                    .op1_def
                    .is_some_and(|d| ssa.vars[d.index()].escape_state == EscapeState::NoEscape);
                if !o1.is_partial_object() || !no_escape {
                    return false;
                }
                let Some(data) = data() else {
                    return false;
                };
                if data.is_top() {
                    return true;
                }
                let Some(tmp) = ct_eval_fetch_obj(o1, o2) else {
                    return false;
                };
                if data.is_bot() {
                    let mut zv = o1.clone();
                    if let (Value::PartialObject(h), Some(k)) = (&mut zv, prop_key(o2)) {
                        h.remove(&k);
                    }
                    self.set(scdf, sop.result_def, BOT);
                    self.set(scdf, sop.op1_def, &zv);
                    return true;
                }
                let Some(tmp) = ct_eval_binary_op(binop, &tmp, &data, self.php_bugs) else {
                    self.set(scdf, sop.result_def, BOT);
                    self.set(scdf, sop.op1_def, BOT);
                    return true;
                };
                let mut zv = o1.clone();
                if ct_eval_assign_obj(&mut zv, &tmp, o2) {
                    self.set(scdf, sop.result_def, &tmp);
                    self.set(scdf, sop.op1_def, &zv);
                    return true;
                }
                false
            }
            _ => false,
        }
    }

    /// INIT_ARRAY / ADD_ARRAY_ELEMENT: the array under construction lives on the last op
    /// of the chain only (earlier results are left null), as PHP keeps it.
    fn visit_array_element(
        &mut self,
        scdf: &mut Scdf<'_>,
        op: OpNum,
        op1: Option<Value>,
        op2: Option<Value>,
    ) {
        let ssa = scdf.ssa;
        let opline = &scdf.op_array.opcodes[op.index()];
        let sop = ssa.ops[op.index()];
        // The array so far (ADD_ARRAY_ELEMENT): read in place, and moved out rather than
        // copied where PHP takes it over.
        let mut result: Option<SsaVar> = None;
        if opline.opcode == ZEND_ADD_ARRAY_ELEMENT {
            let Some(ru) = sop.result_use else {
                self.set(scdf, sop.result_def, BOT);
                self.set(scdf, sop.op1_def, BOT);
                return;
            };
            let r = &self.values[ru.index()];
            if r.is_bot() {
                self.set(scdf, sop.result_def, BOT);
                self.set(scdf, sop.op1_def, BOT);
                return;
            }
            if r.is_top() {
                return;
            }
            result = Some(ru);
        }
        if op1.as_ref().is_some_and(|v| v.is_top()) || op2.as_ref().is_some_and(|v| v.is_top()) {
            return;
        }
        if result.is_some_and(|ru| self.values[ru.index()].type_code() == IS_NULL) {
            self.set(scdf, sop.result_def, BOT);
            return;
        }
        // The array moves on to this op's result; the operand keeps a null.
        let take_result = |this: &mut Self, ru: SsaVar| {
            std::mem::replace(&mut this.values[ru.index()], Value::Const(Literal::Null))
        };
        if op2.as_ref().is_some_and(|v| v.is_bot()) {
            // Update of an unknown index.
            self.set(scdf, sop.op1_def, BOT);
            if sop.result_def.is_some() {
                self.set(scdf, sop.result_def, &Value::PartialArray(Ht::new()));
            } else {
                self.set(scdf, sop.result_def, BOT);
            }
            return;
        }
        if op1.as_ref().is_some_and(|v| v.is_bot())
            || opline.extended_value & ZEND_ARRAY_ELEMENT_REF != 0
        {
            self.set(scdf, sop.op1_def, BOT);
            if sop.result_def.is_some() {
                let mut h = match result {
                    None => Ht::new(),
                    Some(ru) => into_elements(take_result(self, ru)).unwrap_or_default(),
                };
                match &op2 {
                    None => self.set_owned(scdf, sop.result_def, Value::PartialArray(h)),
                    Some(k) => {
                        if ct_eval_del_array_elem(&mut h, k) {
                            self.set_owned(scdf, sop.result_def, Value::PartialArray(h));
                        } else {
                            self.set(scdf, sop.result_def, BOT);
                        }
                    }
                }
            } else {
                self.set(scdf, sop.result_def, BOT);
            }
            return;
        }
        let mut zv = match result {
            Some(ru) => take_result(self, ru),
            None => Value::Const(Literal::Array(PhpArray::new())),
        };
        match &op1 {
            Some(v) => {
                if op2.is_none() && zv.is_partial_array() {
                    self.set_owned(scdf, sop.result_def, zv);
                } else if ct_eval_add_array_elem(&mut zv, v, op2.as_ref()) {
                    if v.is_partial_array() {
                        zv = make_partial(zv);
                    }
                    self.set_owned(scdf, sop.result_def, zv);
                } else {
                    self.set(scdf, sop.result_def, BOT);
                }
            }
            None => self.set_owned(scdf, sop.result_def, zv),
        }
    }

    fn visit_icall(&mut self, scdf: &mut Scdf<'_>, op: OpNum) {
        let ssa = scdf.ssa;
        let op_array = scdf.op_array;
        let sop = ssa.ops[op.index()];
        let Some(calls) = self.calls else {
            self.set(scdf, sop.result_def, BOT);
            return;
        };
        let Some(rd) = sop.result_def else {
            return;
        };
        if self.values[rd.index()].is_bot() {
            return;
        }
        let Some(call) = calls.call_of(op) else {
            self.set(scdf, sop.result_def, BOT);
            return;
        };
        if call.num_args > 3 || call.send_unpack || call.is_prototype || call.named_args {
            self.set(scdf, sop.result_def, BOT);
            return;
        }
        let mut args: Vec<Literal> = Vec::with_capacity(call.num_args as usize);
        for i in 0..call.num_args as usize {
            let Some(Some(send)) = call.args.get(i) else {
                self.set(scdf, sop.result_def, BOT);
                return;
            };
            let send_op = &op_array.opcodes[send.index()];
            if send_op.opcode != ZEND_SEND_VAL && send_op.opcode != ZEND_SEND_VAR {
                self.set(scdf, sop.result_def, BOT);
                return;
            }
            match self.op1_value(scdf, *send) {
                Some(Value::Const(l)) => args.push(l),
                Some(Value::Top) => return,
                Some(_) => {
                    self.set(scdf, sop.result_def, BOT);
                    return;
                }
                None => {
                    self.set(scdf, sop.result_def, BOT);
                    return;
                }
            }
        }
        // No argument went BOT, so a value already found stays.
        if !self.values[rd.index()].is_top() {
            return;
        }
        let init = &op_array.opcodes[call.init.index()];
        let name = match init.op2 {
            Operand::Const(l) => match op_array.literals.get(l.index()) {
                Some(Literal::String(s)) => s.as_bytes().to_vec(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        match funcs::ct_eval_func_call(
            &name,
            &args,
            self.strict_types,
            self.with_file_cache,
            self.php_bugs,
        ) {
            Some(v) => self.set(scdf, sop.result_def, &Value::Const(v)),
            None => self.set(scdf, sop.result_def, BOT),
        }
    }
}

/// `ct_eval_add_array_unpack`: `...$array` into the array under construction.
///
/// The integer keys of the spread are appended at the array's next index, which a partial
/// array does not know (it lacks the elements SCCP skipped): there they are skipped, as
/// `sccp_visit_instr` skips a next-index element of a partial array. PHP 8.2 appends them
/// from the partial array's own next index ([`PhpBugs::UNPACK_INTO_PARTIAL_ARRAY`], with
/// `php_8_2_bug`).
fn ct_eval_add_array_unpack(result: &mut Value, array: &Value, php_8_2_bug: bool) -> bool {
    let Some(Literal::Array(src)) = array.lit() else {
        return false;
    };
    let partial = result.is_partial_array();
    let Some(mut h) = result.elements() else {
        return false;
    };
    for (k, v) in src {
        match k {
            ArrayKey::Str(_) => h.update(k.clone(), Value::Const(v.clone())),
            ArrayKey::Long(_) if partial && !php_8_2_bug => {}
            ArrayKey::Long(_) => {
                if !h.next_index_insert(Value::Const(v.clone())) {
                    return false;
                }
            }
        }
    }
    *result = rebuild(h, partial);
    true
}

/// `scp_dump_value`.
fn dump_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Top => out.extend_from_slice(b" top"),
        Value::Bot => out.extend_from_slice(b" bot"),
        Value::Const(Literal::Array(a)) => {
            out.extend_from_slice(b" [");
            dump_ht(out, &a.map(|v| Value::Const(v.clone())));
            out.push(b']');
        }
        Value::PartialArray(h) => {
            out.extend_from_slice(b" partial [");
            dump_ht(out, h);
            out.push(b']');
        }
        Value::PartialObject(h) => {
            out.extend_from_slice(b" {");
            dump_ht(out, h);
            out.push(b'}');
        }
        Value::Const(l) => dump_const(out, l),
    }
}

/// `zend_dump_ht`: `key => value` pairs, values as `zend_dump_const` prints them.
fn dump_ht(out: &mut Vec<u8>, h: &Ht) {
    for (i, (k, v)) in h.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        match k {
            ArrayKey::Str(s) => {
                out.push(b'"');
                out.extend_from_slice(zend_ir::dump::c_str(s.as_bytes()));
                out.push(b'"');
            }
            ArrayKey::Long(l) => out.extend_from_slice(l.to_string().as_bytes()),
        }
        out.extend_from_slice(b" =>");
        match v {
            Value::Const(l) => dump_const(out, l),
            other => {
                let t = other.type_code();
                out.extend_from_slice(format!(" zval(type={t})").as_bytes());
            }
        }
    }
}

/// The SCCP values dump of one op_array (empty when nothing is known).
pub fn dump_values(out: &mut Vec<u8>, op_array: &OpArray, ssa: &Ssa, values: &[Value]) {
    let mut first = true;
    let count = ssa.vars.len().min(values.len());
    for (i, v) in values
        .iter()
        .enumerate()
        .take(count)
        .skip(op_array.last_var() as usize)
    {
        if v.is_top() || v.is_bot() {
            continue;
        }
        if first {
            first = false;
            out.extend_from_slice(b"\nSCCP Values for \"");
            // `zend_dump_op_array_name`: `%s` stops at the NUL of an anonymous class's name.
            let c_str = zend_ir::dump::c_str;
            match (&op_array.function_name, &op_array.scope) {
                (None, _) => out.extend_from_slice(b"$_main"),
                (Some(f), Some(s)) => {
                    out.extend_from_slice(c_str(s.as_bytes()));
                    out.extend_from_slice(b"::");
                    out.extend_from_slice(c_str(f.as_bytes()));
                }
                (Some(f), None) => out.extend_from_slice(c_str(f.as_bytes())),
            }
            out.extend_from_slice(b"\":\n");
        }
        out.extend_from_slice(format!("    #{i}.").as_bytes());
        dump_var(out, op_array, IS_CV, ssa.vars[i].var);
        out.extend_from_slice(b" =");
        dump_value(out, v);
        out.push(b'\n');
    }
}

/// The types of [`VarInfo`] as the SSA edit API widens them.
struct InfoTypes<'a>(&'a mut [VarInfo]);

impl VarTypes for InfoTypes<'_> {
    fn type_mask(&self, var: SsaVar) -> u32 {
        self.0.get(var.index()).map_or(0, |i| i.type_)
    }
    fn set_type_mask(&mut self, var: SsaVar, mask: u32) {
        if let Some(i) = self.0.get_mut(var.index()) {
            i.type_ = mask;
        }
    }
}

/// Whether ASSIGN_OBJ may propagate into an object of class `name`: dynamic properties
/// allowed and no typed properties (`ce_flags`).
fn class_allows_propagation(ctx: &OptimizerCtx, op_array: &OpArray, name: &[u8]) -> bool {
    let lc = name.to_ascii_lowercase();
    match ctx.class_entry(op_array, &lc) {
        Some(ClassLookup::Script(ce)) => {
            ce.ce_flags & ZEND_ACC_HAS_TYPE_HINTS == 0
                && ce.ce_flags & ZEND_ACC_ALLOW_DYNAMIC_PROPERTIES != 0
        }
        Some(ClassLookup::Internal(_)) => lc == b"stdclass",
        None => false,
    }
}

/// The result of the analysis part of SCCP, for tests and tools.
pub struct Analysis {
    pub values: Vec<Value>,
    pub unreachable: Vec<scdf::Unreachable>,
}

/// Runs the SCCP solve alone (no change to the op_array).
pub fn analyze(
    ctx: &OptimizerCtx,
    op_array: &OpArray,
    ssa: &Ssa,
    cfg: &Cfg,
    var_info: &[VarInfo],
    call_map: Option<&CallMap>,
) -> Analysis {
    analyze_in(
        ctx,
        op_array,
        ssa,
        cfg,
        var_info,
        call_map,
        &bumpalo::Bump::new(),
        Vec::new(),
    )
}

/// [`analyze`], with the solver's worklists in `scratch` and the values in the memory of
/// `values` (an empty vector).
#[allow(clippy::too_many_arguments)]
pub fn analyze_in(
    ctx: &OptimizerCtx,
    op_array: &OpArray,
    ssa: &Ssa,
    cfg: &Cfg,
    var_info: &[VarInfo],
    call_map: Option<&CallMap>,
    scratch: &bumpalo::Bump,
    mut values: Vec<Value>,
) -> Analysis {
    let class_ok = |name: &[u8]| class_allows_propagation(ctx, op_array, name);
    let last_var = op_array.last_var() as usize;
    // Passes that know their length (no capacity test per value). CVs on entry are
    // undefined: BOT keeps the "undefined variable" warning.
    let (cvs, others) = ssa.vars.split_at(last_var.min(ssa.vars.len()));
    values.reserve(ssa.vars.len());
    values.extend(cvs.iter().map(|_| Value::Bot));
    values.extend(others.iter().map(|v| {
        if v.alias != zend_ssa::Alias::NoAlias {
            Value::Bot
        } else {
            Value::Top
        }
    }));
    let mut sccp = Sccp {
        values,
        var_info,
        calls: call_map,
        class_ok: &class_ok,
        strict_types: op_array.fn_flags & (1 << 31) != 0,
        with_file_cache: ctx.with_file_cache,
        php_bugs: ctx.php_bugs,
    };
    let mut scdf = Scdf::new_in(op_array, ssa, cfg, scratch);
    scdf.solve(&mut sccp);
    let unreachable = scdf.unreachable_blocks();
    Analysis {
        values: sccp.values,
        unreachable,
    }
}

/// `sccp_optimize_op_array`: SCCP over one op_array in SSA form. Called by the DFA pass
/// (`zend_dfa_optimize_op_array`, PASS_8) first thing, with the analyses of
/// [`crate::analysis::analyze_op_array`]: `var_info` is the inference's per-variable info
/// (types are widened in place where a removal renames uses), `call_map` the calls of the
/// op_array when the call graph was built (PASS_7; `None` otherwise, as PHP's NULL map).
/// Prints the `sccp` dump when `ctx.debug_level` has [`ZEND_DUMP_SCCP`]. Leaves `ssa` and
/// `cfg` consistent with the changed `op_array` (removed ops are NOPs; the caller compacts).
/// Returns the number of ops removed (PHP's `removed_ops`: the DFA pass compacts when it
/// is non-zero).
// Never inlined: called once per op_array, and profiles then show SCCP's cost as its own.
#[inline(never)]
pub fn sccp_optimize_op_array(
    ctx: &mut OptimizerCtx,
    op_array: &mut OpArray,
    ssa: &mut Ssa,
    cfg: &mut Cfg,
    var_info: &mut [VarInfo],
    call_map: Option<&CallMap>,
) -> usize {
    if ssa.vars.len() > var_info.len() || ssa.ops.len() != op_array.opcodes.len() {
        return 0;
    }
    ctx.state.work.pass_arena.reset();
    let values = std::mem::take(&mut ctx.state.work.sccp_values);
    let Analysis {
        values,
        unreachable,
    } = analyze_in(
        ctx,
        op_array,
        ssa,
        cfg,
        var_info,
        call_map,
        &ctx.state.work.pass_arena,
        values,
    );
    if ctx.debug_level & ZEND_DUMP_SCCP != 0 {
        dump_values(&mut ctx.state.dumps, op_array, ssa, &values);
    }
    let mut removed = 0;
    if ctx.logging() {
        for b in unreachable.iter().map(scdf::Unreachable::block) {
            let start = cfg.block(b).start;
            ctx.note(op_array, OpNum::new(start), ChangeKind::Removed, || {
                format!("block {} never executes (SCCP)", b.as_u32())
            });
        }
    }
    removed += scdf::remove_unreachable_blocks(op_array, ssa, cfg, &unreachable);
    let mut rep = Replacer {
        values,
        var_info,
        call_map,
        notes: ctx.logging().then(Vec::new),
        php_bugs: ctx.php_bugs,
    };
    removed += rep.replace_constant_operands(op_array, ssa);
    if let Some(notes) = rep.notes.take() {
        for (op, kind, why) in notes {
            ctx.note(op_array, op, kind, || why);
        }
    }
    ctx.state.work.sccp_values = discard_all(rep.values, op_array.last_var() as usize);
    removed
}

/// The rewriting half of SCCP: constant operands and dead definitions.
struct Replacer<'a> {
    values: Vec<Value>,
    var_info: &'a mut [VarInfo],
    call_map: Option<&'a CallMap>,
    notes: Option<Vec<(OpNum, ChangeKind, String)>>,
    php_bugs: PhpBugs,
}

/// `can_replace_op1`.
fn can_replace_op1(op_array: &OpArray, op: OpNum, sop: &zend_ssa::SsaOp) -> bool {
    let opline = &op_array.opcodes[op.index()];
    match opline.opcode {
        ZEND_PRE_INC
        | ZEND_PRE_DEC
        | ZEND_PRE_INC_OBJ
        | ZEND_PRE_DEC_OBJ
        | ZEND_POST_INC
        | ZEND_POST_DEC
        | ZEND_POST_INC_OBJ
        | ZEND_POST_DEC_OBJ
        | ZEND_ASSIGN
        | ZEND_ASSIGN_REF
        | ZEND_ASSIGN_DIM
        | ZEND_ASSIGN_OBJ
        | ZEND_ASSIGN_OBJ_REF
        | ZEND_ASSIGN_OP
        | ZEND_ASSIGN_DIM_OP
        | ZEND_ASSIGN_OBJ_OP
        | ZEND_ASSIGN_STATIC_PROP_OP
        | ZEND_FETCH_DIM_W
        | ZEND_FETCH_DIM_RW
        | ZEND_FETCH_DIM_UNSET
        | ZEND_FETCH_DIM_FUNC_ARG
        | ZEND_FETCH_OBJ_W
        | ZEND_FETCH_OBJ_RW
        | ZEND_FETCH_OBJ_UNSET
        | ZEND_FETCH_OBJ_FUNC_ARG
        | ZEND_FETCH_LIST_W
        | ZEND_UNSET_DIM
        | ZEND_UNSET_OBJ
        | ZEND_SEND_REF
        | ZEND_SEND_VAR_EX
        | ZEND_SEND_FUNC_ARG
        | ZEND_SEND_UNPACK
        | ZEND_SEND_ARRAY
        | ZEND_SEND_USER
        | ZEND_FE_RESET_RW => false,
        ZEND_ROPE_ADD
        | ZEND_ROPE_END
        | ZEND_BIND_STATIC
        | ZEND_BIND_GLOBAL
        | ZEND_MAKE_REF
        | ZEND_UNSET_CV
        | ZEND_ISSET_ISEMPTY_CV => false,
        ZEND_INIT_ARRAY | ZEND_ADD_ARRAY_ELEMENT => {
            opline.extended_value & ZEND_ARRAY_ELEMENT_REF == 0
        }
        ZEND_YIELD => op_array.fn_flags & ZEND_ACC_RETURN_REFERENCE == 0,
        ZEND_VERIFY_RETURN_TYPE => false,
        ZEND_OP_DATA => {
            op.as_u32() == 0
                || !matches!(
                    op_array.opcodes[op.index() - 1].opcode,
                    ZEND_ASSIGN_OBJ_REF | ZEND_ASSIGN_STATIC_PROP_REF
                )
        }
        _ => sop.op1_def.is_none(),
    }
}

/// `can_replace_op2`.
fn can_replace_op2(opcode: Opcode) -> bool {
    !matches!(
        opcode,
        ZEND_DECLARE_CLASS_DELAYED | ZEND_BIND_LEXICAL | ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW
    )
}

fn is_tmp_or_var(o: Operand) -> bool {
    matches!(o, Operand::TmpVar(_) | Operand::Var(_))
}

impl Replacer<'_> {
    fn note(&mut self, op: OpNum, kind: ChangeKind, why: impl FnOnce() -> String) {
        if let Some(n) = &mut self.notes {
            n.push((op, kind, why()));
        }
    }

    fn known(&self, v: Option<SsaVar>) -> bool {
        v.is_some_and(|v| self.values[v.index()].known())
    }

    /// `replace_constant_operands`: variables from the last down, so chains (ropes, array
    /// construction) fall from their end. Leaves no value past the CVs' owning anything:
    /// a constant is moved out, a partial value dropped (later steps only ask whether a
    /// value is known, and whether it is partial).
    #[inline(never)]
    fn replace_constant_operands(&mut self, op_array: &mut OpArray, ssa: &mut Ssa) -> usize {
        let mut removed = 0;
        let last_var = op_array.last_var() as usize;
        debug_assert_eq!(self.values.len(), ssa.vars.len());
        for i in (last_var..self.values.len()).rev() {
            let var = SsaVar::new(i as u32);
            // One look at the value's kind (known: a constant, not TOP or BOT).
            let (value, known) = match &mut self.values[i] {
                Value::PartialArray(_) | Value::PartialObject(_) => {
                    self.values[i] = Value::Bot;
                    let v = &ssa.vars[i];
                    if (v.use_chain.is_none() && v.phi_use_chain.is_none()) || v.no_val {
                        removed += self.try_remove_definition(op_array, ssa, var, None);
                    }
                    continue;
                }
                // Moved out, not copied: a NULL constant stays, as known as the value was.
                Value::Const(l) => (std::mem::replace(l, Literal::Null), true),
                Value::Top | Value::Bot => {
                    if ssa.vars[i].use_chain.is_none() {
                        // A value from the type and range would replace no operand, and
                        // only a known lattice value removes the definition: nothing to do.
                        continue;
                    }
                    match value_from_type_and_range(self.var_info, ssa, op_array, var) {
                        Some(l) => (l, false),
                        None => continue,
                    }
                }
            };
            let uses: SmallVec<[OpNum; 8]> = ssa.uses(var).collect();
            for u in uses {
                let sop = ssa.ops[u.index()];
                if sop.op1_use == Some(var) && can_replace_op1(op_array, u, &sop) {
                    let mut zv = value.clone();
                    if helpers::update_op1_const(op_array, u.index(), &mut zv, self.php_bugs) {
                        if op_array.opcodes[u.index()].opcode == ZEND_NOP {
                            removed += 1;
                        }
                        self.note(u, ChangeKind::Folded, || {
                            let mut s = Vec::new();
                            dump_const(&mut s, &value);
                            format!("op1 #{i} is constant:{}", String::from_utf8_lossy(&s))
                        });
                        let sop = &mut ssa.ops[u.index()];
                        if sop.op1_use != sop.op2_use {
                            ssa.unlink_use_chain(u, var);
                        } else {
                            sop.op2_use_chain = sop.op1_use_chain;
                        }
                        let sop = &mut ssa.ops[u.index()];
                        sop.op1_use = None;
                        sop.op1_use_chain = None;
                    }
                }
                let sop = ssa.ops[u.index()];
                if sop.op2_use == Some(var) && can_replace_op2(op_array.opcodes[u.index()].opcode) {
                    let mut zv = value.clone();
                    if helpers::update_op2_const(op_array, u.index(), &mut zv, self.php_bugs) {
                        self.note(u, ChangeKind::Folded, || {
                            let mut s = Vec::new();
                            dump_const(&mut s, &value);
                            format!("op2 #{i} is constant:{}", String::from_utf8_lossy(&s))
                        });
                        if sop.op2_use != sop.op1_use {
                            ssa.unlink_use_chain(u, var);
                        }
                        let sop = &mut ssa.ops[u.index()];
                        sop.op2_use = None;
                        sop.op2_use_chain = None;
                    }
                }
            }
            if known {
                removed += self.try_remove_definition(op_array, ssa, var, Some(&value));
            }
        }
        removed
    }

    /// `remove_call`: the ICALL, its INIT and its SENDs go; returns how many ops.
    fn remove_call(&mut self, op_array: &mut OpArray, ssa: &mut Ssa, op: OpNum) -> usize {
        let Some(map) = self.call_map else {
            ssa.remove_instr(op_array, op);
            return 1;
        };
        let Some(k) = map.index_of(op) else {
            ssa.remove_instr(op_array, op);
            return 1;
        };
        let call = &map.calls[k];
        ssa.remove_instr(op_array, op);
        ssa.remove_instr(op_array, call.init);
        for a in call.args.iter().take(call.num_args as usize).flatten() {
            ssa.remove_instr(op_array, *a);
        }
        call.num_args as usize + 2
    }

    /// `try_remove_definition`: SCCP's own small DCE on the definition of `var`, whose
    /// value is `value` (`None`: a partial array or object that is not used).
    fn try_remove_definition(
        &mut self,
        op_array: &mut OpArray,
        ssa: &mut Ssa,
        var: SsaVar,
        value: Option<&Literal>,
    ) -> usize {
        let v = ssa.vars[var.index()].clone();
        let unused = v.use_chain.is_none() && v.phi_use_chain.is_none();
        let mut removed = 0;
        let Some(def) = v.definition else {
            if let Some(phi) = v.definition_phi {
                if unused {
                    ssa.remove_phi(phi);
                }
            }
            return 0;
        };
        let sop = ssa.ops[def.index()];
        let opcode = op_array.opcodes[def.index()].opcode;
        if sop.result_def == Some(var) {
            if opcode == ZEND_ASSIGN {
                if unused {
                    op_array.opcodes[def.index()].result = Operand::Unused(0);
                    ssa.remove_result_def(def);
                }
                return 0;
            }
            if sop.op1_def.is_some() || sop.op2_def.is_some() {
                if unused
                    && matches!(
                        opcode,
                        ZEND_ASSIGN
                            | ZEND_ASSIGN_REF
                            | ZEND_ASSIGN_DIM
                            | ZEND_ASSIGN_OBJ
                            | ZEND_ASSIGN_OBJ_REF
                            | ZEND_ASSIGN_STATIC_PROP
                            | ZEND_ASSIGN_STATIC_PROP_REF
                            | ZEND_ASSIGN_OP
                            | ZEND_ASSIGN_DIM_OP
                            | ZEND_ASSIGN_OBJ_OP
                            | ZEND_ASSIGN_STATIC_PROP_OP
                            | ZEND_PRE_INC
                            | ZEND_PRE_DEC
                            | ZEND_PRE_INC_OBJ
                            | ZEND_PRE_DEC_OBJ
                            | ZEND_DO_ICALL
                            | ZEND_DO_UCALL
                            | ZEND_DO_FCALL_BY_NAME
                            | ZEND_DO_FCALL
                            | ZEND_INCLUDE_OR_EVAL
                            | ZEND_YIELD
                            | ZEND_YIELD_FROM
                            | ZEND_ASSERT_CHECK
                    )
                {
                    op_array.opcodes[def.index()].result = Operand::Unused(0);
                    ssa.remove_result_def(def);
                }
                return 0;
            }
            if matches!(
                opcode,
                ZEND_JMPZ_EX
                    | ZEND_JMPNZ_EX
                    | ZEND_JMP_SET
                    | ZEND_COALESCE
                    | ZEND_JMP_NULL
                    | ZEND_FE_RESET_R
                    | ZEND_FE_RESET_RW
                    | ZEND_FE_FETCH_R
                    | ZEND_FE_FETCH_RW
                    | ZEND_NEW
            ) {
                // Jumps cannot simply go.
                return 0;
            }
            let opline = &op_array.opcodes[def.index()];
            if !unused {
                if let Some(value) = value {
                    if is_tmp_or_var(opline.result)
                        && !matches!(
                            opcode,
                            ZEND_QM_ASSIGN
                                | ZEND_FETCH_CLASS
                                | ZEND_ROPE_INIT
                                | ZEND_ROPE_ADD
                                | ZEND_INIT_ARRAY
                                | ZEND_ADD_ARRAY_ELEMENT
                                | ZEND_ADD_ARRAY_UNPACK
                        )
                    {
                        // The computation becomes a QM_ASSIGN of its value.
                        let old_result = opline.result;
                        let old_smart_branch = opline.smart_branch;
                        ssa.ops[def.index()].result_def = None;
                        if opcode == ZEND_DO_ICALL {
                            // PHP counts the call's INIT and SENDs here, then returns 0
                            // from this branch: they are not counted (the DFA pass then
                            // compacts only if something else went; the NOPs stay).
                            self.remove_call(op_array, ssa, def);
                        } else {
                            ssa.remove_instr(op_array, def);
                        }
                        ssa.ops[def.index()].result_def = Some(var);
                        let o = &mut op_array.opcodes[def.index()];
                        o.opcode = ZEND_QM_ASSIGN;
                        o.result = old_result;
                        o.smart_branch = old_smart_branch;
                        let mut zv = value.clone();
                        helpers::update_op1_const(op_array, def.index(), &mut zv, self.php_bugs);
                        self.note(def, ChangeKind::Rewritten, || {
                            let mut s = Vec::new();
                            dump_const(&mut s, value);
                            format!(
                                "{} computes the constant{} (SCCP): QM_ASSIGN",
                                opcode_name(opcode),
                                String::from_utf8_lossy(&s)
                            )
                        });
                    }
                }
                return 0;
            }
            let op1_unknown = |o: Option<SsaVar>| {
                o.map_or(true, |u| {
                    let x = &self.values[u.index()];
                    !x.known() || x.is_partial_array() || x.is_partial_object()
                })
            };
            if is_tmp_or_var(opline.op2) && op1_unknown(sop.op2_use) {
                return 0;
            }
            if is_tmp_or_var(opline.op1) && op1_unknown(sop.op1_use) {
                if matches!(opcode, ZEND_TYPE_CHECK | ZEND_BOOL) {
                    // The value was found without the operand (from its type): keep
                    // freeing the operand, DCE does the rest.
                    ssa.remove_result_def(def);
                    let o = &mut op_array.opcodes[def.index()];
                    o.opcode = ZEND_FREE;
                    o.result = Operand::Unused(0);
                    o.smart_branch = Default::default();
                    removed += 1;
                    self.note(def, ChangeKind::Rewritten, || {
                        "result is known and unused (SCCP): FREE the operand".to_string()
                    });
                }
                return removed;
            }
            ssa.remove_result_def(def);
            if opcode == ZEND_DO_ICALL {
                removed = self.remove_call(op_array, ssa, def);
            } else {
                ssa.remove_instr(op_array, def);
                removed += 1;
            }
            self.note(def, ChangeKind::Removed, || {
                format!("{} computes an unused constant (SCCP)", opcode_name(opcode))
            });
        } else if sop.op1_def == Some(var) {
            if opcode == ZEND_ASSIGN {
                // Assignments are left to DCE (destructors).
                return 0;
            }
            if value.is_none() {
                match opcode {
                    ZEND_ASSIGN_DIM
                    | ZEND_ASSIGN_OBJ
                    | ZEND_ASSIGN_OP
                    | ZEND_ASSIGN_DIM_OP
                    | ZEND_ASSIGN_OBJ_OP
                    | ZEND_ASSIGN_STATIC_PROP_OP => {
                        let data_use = ssa.ops.get(def.index() + 1).and_then(|s| s.op1_use);
                        if (sop.op2_use.is_some() && !self.known(sop.op2_use))
                            || (data_use.is_some() && !self.known(data_use))
                        {
                            return 0;
                        }
                    }
                    ZEND_PRE_INC_OBJ | ZEND_PRE_DEC_OBJ | ZEND_POST_INC_OBJ | ZEND_POST_DEC_OBJ => {
                        if sop.op2_use.is_some() && !self.known(sop.op2_use) {
                            return 0;
                        }
                    }
                    // zend_may_throw() is not available here: keep the op.
                    _ => return 0,
                }
            }
            if let Some(rd) = sop.result_def {
                let r = &ssa.vars[rd.index()];
                if r.use_chain.is_none() && r.phi_use_chain.is_none() {
                    ssa.remove_result_def(def);
                    op_array.opcodes[def.index()].result = Operand::Unused(0);
                } else if opcode != ZEND_PRE_INC && opcode != ZEND_PRE_DEC {
                    return removed;
                }
            }
            // The old op2 goes.
            if let Operand::Const(l) = op_array.opcodes[def.index()].op2 {
                helpers::literal_dtor(op_array, l);
            } else if let Some(u2) = ssa.ops[def.index()].op2_use {
                if Some(u2) != ssa.ops[def.index()].op1_use {
                    ssa.unlink_use_chain(def, u2);
                }
                let s = &mut ssa.ops[def.index()];
                s.op2_use = None;
                s.op2_use_chain = None;
            }
            if matches!(
                opcode,
                ZEND_ASSIGN_DIM
                    | ZEND_ASSIGN_OBJ
                    | ZEND_ASSIGN_DIM_OP
                    | ZEND_ASSIGN_OBJ_OP
                    | ZEND_ASSIGN_STATIC_PROP_OP
            ) && def.index() + 1 < op_array.opcodes.len()
            {
                removed += 1;
                ssa.remove_instr(op_array, OpNum::new(def.as_u32() + 1));
            }
            match value {
                Some(value) => {
                    let lit = helpers::add_literal(op_array, value.clone());
                    let o = &mut op_array.opcodes[def.index()];
                    // extended_value stays, as PHP leaves it.
                    o.opcode = ZEND_ASSIGN;
                    o.op2 = Operand::Const(lit);
                    self.note(def, ChangeKind::Rewritten, || {
                        let mut s = Vec::new();
                        dump_const(&mut s, value);
                        format!(
                            "{} leaves the constant{} (SCCP): ASSIGN",
                            opcode_name(opcode),
                            String::from_utf8_lossy(&s)
                        )
                    });
                }
                None => {
                    // A dead array or object construction.
                    removed += 1;
                    let uses = {
                        let v = &ssa.vars[var.index()];
                        v.use_chain.is_some() || v.phi_use_chain.is_some()
                    };
                    if uses {
                        if let Some(u1) = ssa.ops[def.index()].op1_use {
                            let mut types = InfoTypes(self.var_info);
                            ssa.rename_var_uses(var, u1, Some(&mut types));
                        }
                    }
                    ssa.remove_op1_def(def);
                    ssa.remove_instr(op_array, def);
                    self.note(def, ChangeKind::Removed, || {
                        "builds an array or object nothing reads (SCCP)".to_string()
                    });
                }
            }
        }
        removed
    }
}

fn opcode_name(op: Opcode) -> String {
    op.short_name()
        .map(str::to_string)
        .unwrap_or_else(|| format!("opcode {}", op.0))
}

/// The DFA pass's call of SCCP (`dfa_pass.c`: `if (sccp_optimize_op_array(...))
/// remove_nops = 1;`) over the analyses of [`crate::analysis::FuncAnalysis`]: `calls` are
/// the op_array's call sites (`func_info->callee_info`) on the call-graph path, `None`
/// without the call graph (PHP passes a NULL call map there). True when ops were removed.
/// Calls SCCP removed have their INIT made a NOP, so the caller's call-site bookkeeping
/// drops them as PHP drops a call whose `callee_func` was cleared.
pub fn run_in_dfa(
    op_array: &mut OpArray,
    ctx: &mut OptimizerCtx,
    fa: &mut crate::analysis::FuncAnalysis,
    calls: Option<&[zend_call_graph::CallSite]>,
) -> bool {
    let map = calls.map(|c| CallMap::new(op_array, c));
    sccp_optimize_op_array(
        ctx,
        op_array,
        &mut fa.ssa,
        &mut fa.cfg,
        &mut fa.inference.vars,
        map.as_ref(),
    ) > 0
}
