//! The operators of `get_binary_op` / `get_unary_op` (zend_operators.c), the checks that keep
//! the compiler and the optimizer from folding what would warn or throw
//! (`zend_binary_op_produces_error`, `zend_unary_op_produces_error` in zend_compile.c), and
//! the `zend_optimizer_eval_*` helpers of zend_optimizer.c built on them.

use zend_ir::opcode::*;
use zend_ir::types::{_IS_BOOL, IS_ARRAY, IS_DOUBLE, IS_LONG, IS_NULL, IS_STRING};
use zend_ir::{ArrayKey, Literal, Opcode, PhpArray, PhpDouble, PhpStr};

use crate::compare::{compare, is_identical, KeyIndex};
use crate::convert::{get_double, get_long, get_string, is_long_compatible, is_true, to_number};
use crate::numeric::{is_numeric_ex, Num};

fn contains_ast(v: &Literal) -> bool {
    match v {
        Literal::Ast(_) => true,
        Literal::Array(a) => a.iter().any(|(_, v)| contains_ast(v)),
        _ => false,
    }
}

fn double(d: f64) -> Literal {
    Literal::Double(PhpDouble::new(d))
}

fn boolean(b: bool) -> Literal {
    if b {
        Literal::True
    } else {
        Literal::False
    }
}

/// Mirrors `zend_is_op_long_compatible`: the value converts to a long without the 8.1
/// "loses precision" deprecation (and is not an array).
pub fn is_op_long_compatible(v: &Literal) -> bool {
    match v {
        Literal::Array(_) => false,
        Literal::Double(d) => is_long_compatible(d.get()),
        Literal::String(s) => match is_numeric_ex(&s.0, true).map(|n| n.value) {
            None => false,
            Some(Num::Double(d)) => is_long_compatible(d),
            Some(Num::Long(_)) => true,
        },
        _ => true,
    }
}

fn is_numeric_literal_str(v: &Literal) -> bool {
    match v {
        Literal::String(s) => is_numeric_ex(&s.0, false).is_some(),
        _ => true,
    }
}

/// Mirrors `zend_binary_op_produces_error`: whether evaluating the operator on these
/// operands would raise an error, exception or warning (so it must be left to run time).
/// ASTs always count as errors: they are not values yet.
pub fn binary_op_produces_error(opcode: Opcode, op1: &Literal, op2: &Literal) -> bool {
    if contains_ast(op1) || contains_ast(op2) {
        return true;
    }
    let is_array = |v: &Literal| matches!(v, Literal::Array(_));
    if opcode == ZEND_CONCAT || opcode == ZEND_FAST_CONCAT {
        // "Array to string conversion".
        return is_array(op1) || is_array(op2);
    }
    let numeric = [
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
    ];
    if !numeric.contains(&opcode) {
        // Comparisons, BOOL_XOR and the rest never fail on these values.
        return false;
    }
    if is_array(op1) || is_array(op2) {
        // Only array + array is defined; every other arithmetic on an array throws.
        return !(opcode == ZEND_ADD && is_array(op1) && is_array(op2));
    }
    let bitwise = [ZEND_BW_OR, ZEND_BW_AND, ZEND_BW_XOR];
    if bitwise.contains(&opcode)
        && matches!(op1, Literal::String(_))
        && matches!(op2, Literal::String(_))
    {
        // Bitwise operators on two strings work byte by byte, without numbers.
        return false;
    }
    // A non-numeric string throws a TypeError; a leading-numeric one warns.
    if !is_numeric_literal_str(op1) || !is_numeric_literal_str(op2) {
        return true;
    }
    if (opcode == ZEND_MOD && get_long(op2) == 0) || (opcode == ZEND_DIV && get_double(op2) == 0.0)
    {
        return true;
    }
    if (opcode == ZEND_SL || opcode == ZEND_SR) && get_long(op2) < 0 {
        return true;
    }
    if [
        ZEND_SL,
        ZEND_SR,
        ZEND_BW_OR,
        ZEND_BW_AND,
        ZEND_BW_XOR,
        ZEND_MOD,
    ]
    .contains(&opcode)
    {
        // Fractional or out-of-range floats (and float strings) would raise the
        // "Implicit conversion ... loses precision" deprecation.
        return !is_op_long_compatible(op1) || !is_op_long_compatible(op2);
    }
    false
}

/// Mirrors `zend_unary_op_produces_error`: `~` on null, booleans, arrays or a float that is
/// not an integer in range. ASTs always count as errors.
pub fn unary_op_produces_error(opcode: Opcode, op1: &Literal) -> bool {
    if contains_ast(op1) {
        return true;
    }
    if opcode == ZEND_BW_NOT {
        return match op1 {
            Literal::String(_) => false,
            Literal::Null | Literal::False | Literal::True => true,
            v => !is_op_long_compatible(v),
        };
    }
    false
}

/// Mirrors `add_function` for two arrays: `op1` and then every key of `op2` that `op1` lacks.
/// The result is a copy of `op1`, so it keeps its `nNextFreeElement`.
fn array_union(a: &PhpArray, b: &[(ArrayKey, Literal)]) -> Literal {
    let mut out = a.clone();
    let a_index = KeyIndex::new(a);
    for (k, v) in b {
        if a_index.get(k).is_none() {
            out.add_new(k.clone(), v.clone());
        }
    }
    Literal::Array(out)
}

/// `ZEND_SIGNED_MULTIPLY_LONG`: the product, or on overflow the product of the doubles.
fn mul_long(a: i64, b: i64) -> Result<i64, f64> {
    a.checked_mul(b).ok_or(a as f64 * b as f64)
}

fn arith(opcode: Opcode, a: Num, b: Num) -> Option<Literal> {
    use Num::{Double as D, Long as L};
    let pair = |a: Num, b: Num| -> (f64, f64) {
        let f = |n: Num| match n {
            L(l) => l as f64,
            D(d) => d,
        };
        (f(a), f(b))
    };
    Some(match opcode {
        ZEND_ADD => match (a, b) {
            (L(x), L(y)) => x
                .checked_add(y)
                .map_or(double(x as f64 + y as f64), Literal::Long),
            _ => {
                let (x, y) = pair(a, b);
                double(x + y)
            }
        },
        ZEND_SUB => match (a, b) {
            (L(x), L(y)) => x
                .checked_sub(y)
                .map_or(double(x as f64 - y as f64), Literal::Long),
            _ => {
                let (x, y) = pair(a, b);
                double(x - y)
            }
        },
        ZEND_MUL => match (a, b) {
            (L(x), L(y)) => mul_long(x, y).map_or_else(double, Literal::Long),
            _ => {
                let (x, y) = pair(a, b);
                double(x * y)
            }
        },
        ZEND_DIV => match (a, b) {
            (L(_), L(0)) => return None,
            (L(i64::MIN), L(-1)) => double(i64::MIN as f64 / -1.0),
            (L(x), L(y)) if x % y == 0 => Literal::Long(x / y),
            (L(x), L(y)) => double(x as f64 / y as f64),
            _ => {
                let (x, y) = pair(a, b);
                if y == 0.0 {
                    return None;
                }
                double(x / y)
            }
        },
        ZEND_POW => match (a, b) {
            (L(base), L(exp)) if exp >= 0 => pow_long(base, exp),
            _ => {
                let (x, y) = pair(a, b);
                double(x.powf(y))
            }
        },
        _ => return None,
    })
}

/// Mirrors the integer branch of `pow_function_base`: square-and-multiply in longs, falling
/// back to doubles (with `pow`) at the first overflow, exactly where PHP does.
fn pow_long(base: i64, exp: i64) -> Literal {
    if exp == 0 {
        return Literal::Long(1);
    }
    if base == 0 {
        return Literal::Long(0);
    }
    let (mut l1, mut l2, mut i) = (1i64, base, exp);
    while i >= 1 {
        if i % 2 != 0 {
            i -= 1;
            match mul_long(l1, l2) {
                Ok(v) => l1 = v,
                Err(d) => return double(d * (l2 as f64).powf(i as f64)),
            }
        } else {
            i /= 2;
            match mul_long(l2, l2) {
                Ok(v) => l2 = v,
                Err(d) => return double(l1 as f64 * d.powf(i as f64)),
            }
        }
    }
    Literal::Long(l1)
}

/// Mirrors `bitwise_or_function` and friends on two strings: byte by byte; `|` keeps the
/// longer string's tail, `&` and `^` stop at the shorter.
fn bitwise_strings(opcode: Opcode, a: &[u8], b: &[u8]) -> Literal {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let bytes: Vec<u8> = match opcode {
        ZEND_BW_OR => {
            let mut v = long.to_vec();
            for (x, y) in v.iter_mut().zip(short) {
                *x |= *y;
            }
            v
        }
        ZEND_BW_AND => short.iter().zip(long).map(|(x, y)| x & y).collect(),
        _ => short.iter().zip(long).map(|(x, y)| x ^ y).collect(),
    };
    Literal::String(PhpStr(bytes))
}

fn binary_op(opcode: Opcode, op1: &Literal, op2: &Literal) -> Option<Literal> {
    match opcode {
        ZEND_ADD | ZEND_SUB | ZEND_MUL | ZEND_DIV | ZEND_POW => {
            if let (Literal::Array(a), Literal::Array(b)) = (op1, op2) {
                return if opcode == ZEND_ADD {
                    Some(array_union(a, b))
                } else {
                    None
                };
            }
            arith(opcode, to_number(op1)?, to_number(op2)?)
        }
        ZEND_MOD => {
            let (a, b) = (get_long(op1), get_long(op2));
            match b {
                0 => None,
                // PHP special-cases -1 so that ZEND_LONG_MIN % -1 does not trap.
                -1 => Some(Literal::Long(0)),
                _ => Some(Literal::Long(a % b)),
            }
        }
        ZEND_SL | ZEND_SR => {
            let (a, b) = (get_long(op1), get_long(op2));
            if b < 0 {
                return None;
            }
            Some(Literal::Long(if b >= 64 {
                if opcode == ZEND_SL || a >= 0 {
                    0
                } else {
                    -1
                }
            } else if opcode == ZEND_SL {
                ((a as u64) << b) as i64
            } else {
                a >> b
            }))
        }
        ZEND_BW_OR | ZEND_BW_AND | ZEND_BW_XOR => {
            if let (Literal::String(a), Literal::String(b)) = (op1, op2) {
                return Some(bitwise_strings(opcode, &a.0, &b.0));
            }
            let (a, b) = (get_long(op1), get_long(op2));
            Some(Literal::Long(match opcode {
                ZEND_BW_OR => a | b,
                ZEND_BW_AND => a & b,
                _ => a ^ b,
            }))
        }
        ZEND_CONCAT | ZEND_FAST_CONCAT => {
            let mut s = get_string(op1)?;
            s.0.extend_from_slice(&get_string(op2)?.0);
            Some(Literal::String(s))
        }
        ZEND_BOOL_XOR => Some(boolean(is_true(op1) != is_true(op2))),
        ZEND_IS_IDENTICAL => Some(boolean(is_identical(op1, op2))),
        ZEND_IS_NOT_IDENTICAL => Some(boolean(!is_identical(op1, op2))),
        ZEND_IS_EQUAL => Some(boolean(compare(op1, op2) == 0)),
        ZEND_IS_NOT_EQUAL => Some(boolean(compare(op1, op2) != 0)),
        ZEND_IS_SMALLER => Some(boolean(compare(op1, op2) < 0)),
        ZEND_IS_SMALLER_OR_EQUAL => Some(boolean(compare(op1, op2) <= 0)),
        ZEND_SPACESHIP => Some(Literal::Long(i64::from(compare(op1, op2)))),
        _ => None,
    }
}

/// Mirrors `zend_optimizer_eval_binary_op`: the value of `op1 <opcode> op2` as PHP 8.2
/// computes it, or `None` when [`binary_op_produces_error`] says it must stay for run time,
/// or the opcode is not one of `get_binary_op`'s.
pub fn eval_binary_op(opcode: Opcode, op1: &Literal, op2: &Literal) -> Option<Literal> {
    if binary_op_produces_error(opcode, op1, op2) {
        return None;
    }
    binary_op(opcode, op1, op2)
}

/// Mirrors `zend_optimizer_eval_unary_op`: `~` (BW_NOT), `!` (BOOL_NOT) and ZEND_BOOL.
pub fn eval_unary_op(opcode: Opcode, op1: &Literal) -> Option<Literal> {
    if unary_op_produces_error(opcode, op1) {
        return None;
    }
    match opcode {
        ZEND_BW_NOT => match op1 {
            Literal::Long(l) => Some(Literal::Long(!l)),
            Literal::Double(d) => Some(Literal::Long(!crate::convert::dval_to_lval(d.get()))),
            Literal::String(s) => Some(Literal::String(PhpStr(s.0.iter().map(|b| !b).collect()))),
            _ => None,
        },
        ZEND_BOOL_NOT => Some(boolean(!is_true(op1))),
        ZEND_BOOL => Some(boolean(is_true(op1))),
        _ => None,
    }
}

/// Mirrors `zend_optimizer_eval_cast` (`type_` is CAST's `extended_value`): no fold of a
/// double or an array to string (`precision` and "Array to string conversion" belong to run
/// time), nor of ASTs or to types the optimizer does not cast (objects).
pub fn eval_cast(type_: u32, op1: &Literal) -> Option<Literal> {
    if contains_ast(op1) {
        return None;
    }
    let t = u8::try_from(type_).ok()?;
    match t {
        IS_NULL => Some(Literal::Null),
        _IS_BOOL => Some(boolean(is_true(op1))),
        IS_LONG => Some(Literal::Long(get_long(op1))),
        IS_DOUBLE => Some(double(get_double(op1))),
        IS_STRING => match op1 {
            Literal::Double(_) | Literal::Array(_) => None,
            v => get_string(v).map(Literal::String),
        },
        IS_ARRAY => Some(match op1 {
            Literal::Array(_) => op1.clone(),
            // array_init: a new table, not the shared empty array.
            Literal::Null => Literal::Array(PhpArray::new()),
            v => Literal::Array(vec![(ArrayKey::Long(0), v.clone())].into()),
        }),
        _ => None,
    }
}

/// Mirrors `zend_optimizer_eval_strlen`: the length of a string constant.
pub fn eval_strlen(op1: &Literal) -> Option<Literal> {
    match op1 {
        Literal::String(s) => i64::try_from(s.0.len()).ok().map(Literal::Long),
        _ => None,
    }
}
