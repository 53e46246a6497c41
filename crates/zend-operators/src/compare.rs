//! Comparison: `zend_compare`, `zend_is_identical`, `zendi_smart_strcmp` and the array
//! comparisons of `zend_hash_compare`.
//!
//! Nested arrays are compared recursively, as PHP does; constant arrays are shallow in
//! practice and their depth is bounded by the literal that holds them.

use std::collections::HashMap;

use zend_ir::{ArrayKey, Literal};

use crate::convert::{double_to_str, is_true};
use crate::numeric::{is_numeric_ex, Num};

/// `ZEND_THREEWAY_COMPARE` for doubles: NaN compares as greater (1) on either side.
fn threeway_f64(a: f64, b: f64) -> i32 {
    if a == b {
        0
    } else if a < b {
        -1
    } else {
        1
    }
}

fn threeway_i64(a: i64, b: i64) -> i32 {
    a.cmp(&b) as i32
}

/// `ZEND_NORMALIZE_BOOL` of a double difference (NaN reads as 0).
fn normalize_f64(d: f64) -> i32 {
    if d > 0.0 {
        1
    } else if d < 0.0 {
        -1
    } else {
        0
    }
}

/// Mirrors `zend_binary_strcmp`, normalized to -1, 0, 1.
fn binary_strcmp(a: &[u8], b: &[u8]) -> i32 {
    a.cmp(b) as i32
}

/// Mirrors `zendi_smart_strcmp`: numeric strings compare as numbers, others byte-wise.
pub(crate) fn smart_strcmp(s1: &[u8], s2: &[u8]) -> i32 {
    let (Some(n1), Some(n2)) = (is_numeric_ex(s1, false), is_numeric_ex(s2, false)) else {
        return binary_strcmp(s1, s2);
    };
    let d1 = match n1.value {
        Num::Double(d) => d,
        Num::Long(_) => 0.0,
    };
    let d2 = match n2.value {
        Num::Double(d) => d,
        Num::Long(_) => 0.0,
    };
    if n1.oflow != 0 && n1.oflow == n2.oflow && d1 - d2 == 0.0 {
        // Both integers overflowed to the same side: their doubles say nothing, compare text.
        return binary_strcmp(s1, s2);
    }
    match (n1.value, n2.value) {
        (Num::Long(l1), Num::Long(l2)) => threeway_i64(l1, l2),
        (Num::Long(l1), Num::Double(_)) => {
            if n2.oflow != 0 {
                return -n2.oflow;
            }
            normalize_f64(l1 as f64 - d2)
        }
        (Num::Double(_), Num::Long(l2)) => {
            if n1.oflow != 0 {
                return n1.oflow;
            }
            normalize_f64(d1 - l2 as f64)
        }
        (Num::Double(_), Num::Double(_)) => {
            if d1 == d2 && !d1.is_finite() {
                // Both overflowed to the same infinity: numbers cannot order them.
                return binary_strcmp(s1, s2);
            }
            normalize_f64(d1 - d2)
        }
    }
}

/// Mirrors `compare_longs_to_string`.
fn compare_long_to_string(l: i64, s: &[u8]) -> i32 {
    match is_numeric_ex(s, false).map(|n| n.value) {
        Some(Num::Long(sl)) => threeway_i64(l, sl),
        Some(Num::Double(sd)) => normalize_f64(l as f64 - sd),
        None => binary_strcmp(l.to_string().as_bytes(), s),
    }
}

/// Mirrors `compare_doubles_to_string` (the caller has ruled out NaN).
fn compare_double_to_string(d: f64, s: &[u8]) -> i32 {
    match is_numeric_ex(s, false).map(|n| n.value) {
        Some(Num::Long(sl)) => normalize_f64(d - sl as f64),
        Some(Num::Double(sd)) => {
            if d == sd {
                0
            } else {
                normalize_f64(d - sd)
            }
        }
        None => binary_strcmp(double_to_str(d).as_bytes(), s),
    }
}

/// Mirrors `zend_compare_arrays` (`zend_hash_compare` unordered with `zend_compare`): the
/// smaller count is smaller; otherwise each element of `a` against the same key of `b`, a
/// missing key making `a` uncomparable (1).
fn compare_arrays(a: &[(ArrayKey, Literal)], b: &[(ArrayKey, Literal)]) -> i32 {
    if a.len() != b.len() {
        return if a.len() > b.len() { 1 } else { -1 };
    }
    let b_index = KeyIndex::new(b);
    for (k, v1) in a {
        let Some(v2) = b_index.get(k) else {
            return 1;
        };
        let r = compare(v1, v2);
        if r != 0 {
            return r;
        }
    }
    0
}

/// Lookup of an array's values by key, as a hash table would: a scan for the small arrays
/// constants usually are, a map for large ones.
pub(crate) struct KeyIndex<'a> {
    entries: &'a [(ArrayKey, Literal)],
    map: Option<HashMap<&'a ArrayKey, &'a Literal>>,
}

impl<'a> KeyIndex<'a> {
    pub(crate) fn new(entries: &'a [(ArrayKey, Literal)]) -> Self {
        let map = (entries.len() > 16).then(|| entries.iter().map(|(k, v)| (k, v)).collect());
        KeyIndex { entries, map }
    }

    pub(crate) fn get(&self, key: &ArrayKey) -> Option<&'a Literal> {
        match &self.map {
            Some(m) => m.get(key).copied(),
            None => self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
        }
    }
}

/// Mirrors `zend_compare` for non-object values: -1, 0 or 1. An AST compares as null.
pub fn compare(a: &Literal, b: &Literal) -> i32 {
    use Literal as L;
    match (a, b) {
        (L::Long(x), L::Long(y)) => threeway_i64(*x, *y),
        (L::Double(x), L::Long(y)) => threeway_f64(x.get(), *y as f64),
        (L::Long(x), L::Double(y)) => threeway_f64(*x as f64, y.get()),
        (L::Double(x), L::Double(y)) => threeway_f64(x.get(), y.get()),
        (L::Array(x), L::Array(y)) => compare_arrays(x, y),
        (L::Null | L::False, L::Null | L::False) | (L::True, L::True) => 0,
        (L::Null, L::True) => -1,
        (L::True, L::Null) => 1,
        (L::String(x), L::String(y)) => {
            if x == y {
                0
            } else {
                smart_strcmp(&x.0, &y.0)
            }
        }
        (L::Null, L::String(s)) => {
            if s.0.is_empty() {
                0
            } else {
                -1
            }
        }
        (L::String(s), L::Null) => i32::from(!s.0.is_empty()),
        (L::Long(l), L::String(s)) => compare_long_to_string(*l, &s.0),
        (L::String(s), L::Long(l)) => -compare_long_to_string(*l, &s.0),
        (L::Double(d), L::String(s)) => {
            if d.get().is_nan() {
                1
            } else {
                compare_double_to_string(d.get(), &s.0)
            }
        }
        (L::String(s), L::Double(d)) => {
            if d.get().is_nan() {
                1
            } else {
                -compare_double_to_string(d.get(), &s.0)
            }
        }
        _ => {
            let a_bool = matches!(a, L::Null | L::False | L::Ast(_));
            let b_bool = matches!(b, L::Null | L::False | L::Ast(_));
            if a_bool {
                -i32::from(is_true(b))
            } else if matches!(a, L::True) {
                i32::from(!is_true(b))
            } else if b_bool {
                i32::from(is_true(a))
            } else if matches!(b, L::True) {
                -i32::from(!is_true(a))
            } else if matches!(a, L::Array(_)) {
                // An array is greater than any scalar but null and booleans.
                1
            } else {
                -1
            }
        }
    }
}

/// Mirrors `zend_is_identical`: same type and value; doubles by `==` (so NaN is not
/// identical to itself and 0.0 is identical to -0.0); arrays with the same keys in the same
/// order and identical values. ASTs are never identical.
pub fn is_identical(a: &Literal, b: &Literal) -> bool {
    use Literal as L;
    match (a, b) {
        (L::Null, L::Null) | (L::False, L::False) | (L::True, L::True) => true,
        (L::Long(x), L::Long(y)) => x == y,
        (L::Double(x), L::Double(y)) => x.get() == y.get(),
        (L::String(x), L::String(y)) => x == y,
        (L::Array(x), L::Array(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && is_identical(v1, v2))
        }
        _ => false,
    }
}
