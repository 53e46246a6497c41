//! Numeric strings: `_is_numeric_string_ex`, `zend_strtod` and `ZEND_HANDLE_NUMERIC_STR`.
//!
//! PHP strings are byte strings with a NUL after the last byte; the C code reads that NUL as
//! the end of a number, so a byte index past the end reads as 0 here too ([`at`]). An embedded
//! NUL is trailing data for `is_numeric_string` and the end of the text for `strcmp`.

/// The byte at `i`, or 0 at and past the end (the terminating NUL of a `zend_string`).
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

/// The whitespace `_is_numeric_string_ex` skips before and after a number.
pub(crate) fn is_numeric_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// A number read from the start of a string.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Num {
    Long(i64),
    Double(f64),
}

/// What `_is_numeric_string_ex` reports besides the value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Numeric {
    pub value: Num,
    /// `oflow_info`: the text was an integer too large for a long (1 positive, -1 negative).
    pub oflow: i32,
    /// `trailing_data`: bytes other than whitespace follow the number (only with
    /// `allow_errors`).
    pub trailing: bool,
}

/// Mirrors `zend_strtod` from byte `start`: an optional sign, digits with an optional
/// fraction, an optional exponent. Returns the value and the index after the number; with no
/// digits at all, `(0.0, start)` as zend_strtod's `ret0`.
pub(crate) fn strtod_prefix(s: &[u8], start: usize) -> (f64, usize) {
    let mut i = start;
    let neg = match at(s, i) {
        b'-' => {
            i += 1;
            true
        }
        b'+' => {
            i += 1;
            false
        }
        _ => false,
    };
    let int_start = i;
    while at(s, i).is_ascii_digit() {
        i += 1;
    }
    let int_digits = &s[int_start..i];
    let mut frac_digits: &[u8] = &[];
    if at(s, i) == b'.' {
        let f = i + 1;
        let mut j = f;
        while at(s, j).is_ascii_digit() {
            j += 1;
        }
        if int_digits.is_empty() && j == f {
            return (0.0, start);
        }
        frac_digits = &s[f..j];
        i = j;
    } else if int_digits.is_empty() {
        return (0.0, start);
    }
    let mut exp: &[u8] = &[];
    let mut exp_neg = false;
    if matches!(at(s, i), b'e' | b'E') {
        let mut j = i + 1;
        let sign_neg = at(s, j) == b'-';
        if matches!(at(s, j), b'-' | b'+') {
            j += 1;
        }
        let e0 = j;
        while at(s, j).is_ascii_digit() {
            j += 1;
        }
        // An exponent without digits is not part of the number.
        if j > e0 {
            exp = &s[e0..j];
            exp_neg = sign_neg;
            i = j;
        }
    }
    // Rebuild the number in a form Rust's (correctly rounded, as zend_strtod is) parser reads.
    let mut text = String::with_capacity(int_digits.len() + frac_digits.len() + exp.len() + 4);
    if int_digits.is_empty() {
        text.push('0');
    } else {
        text.extend(int_digits.iter().map(|&b| b as char));
    }
    if !frac_digits.is_empty() {
        text.push('.');
        text.extend(frac_digits.iter().map(|&b| b as char));
    }
    if !exp.is_empty() {
        text.push('e');
        if exp_neg {
            text.push('-');
        }
        // Leading zeros of a huge exponent carry no meaning; keep the parser's input short.
        let trimmed: &[u8] = match exp.iter().position(|&b| b != b'0') {
            Some(p) => &exp[p..],
            None => b"0",
        };
        if trimmed.len() > 12 {
            // Far beyond any double's range: the value is 0 or infinite (or the digits say 0).
            let zero_mantissa = int_digits.iter().chain(frac_digits).all(|&b| b == b'0');
            let v = if exp_neg || zero_mantissa {
                0.0
            } else {
                f64::INFINITY
            };
            return (if neg { -v } else { v }, i);
        }
        text.extend(trimmed.iter().map(|&b| b as char));
    }
    let v: f64 = text.parse().unwrap_or(0.0);
    (if neg { -v } else { v }, i)
}

/// C `strcmp` of the NUL-terminated text starting at `s` against `lit` (which has no NUL).
fn c_strcmp(s: &[u8], lit: &[u8]) -> i32 {
    let mut i = 0;
    loop {
        let a = at(s, i);
        let b = at(lit, i);
        if a != b {
            return if a < b { -1 } else { 1 };
        }
        if a == 0 {
            return 0;
        }
        i += 1;
    }
}

/// `MAX_LENGTH_OF_LONG` on a 64-bit build.
const MAX_LENGTH_OF_LONG: usize = 20;

/// Mirrors `_is_numeric_string_ex` with a value wanted (`lval` and `dval` non-NULL): `None`
/// for a string that does not start with a number, or (without `allow_errors`) that has
/// anything but whitespace after it.
pub(crate) fn is_numeric_ex(s: &[u8], allow_errors: bool) -> Option<Numeric> {
    let mut str0 = 0;
    while str0 < s.len() && is_numeric_ws(s[str0]) {
        str0 += 1;
    }
    let mut ptr = str0;
    let neg = at(s, ptr) == b'-';
    if neg || at(s, ptr) == b'+' {
        ptr += 1;
    }
    let mut oflow = 0;
    let mut digits = 0usize;
    let mut lval: i64 = 0;
    let mut to_double = false;
    if at(s, ptr).is_ascii_digit() {
        while at(s, ptr) == b'0' {
            ptr += 1;
        }
        while digits < MAX_LENGTH_OF_LONG {
            let c = at(s, ptr);
            if c.is_ascii_digit() {
                lval = lval.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
                digits += 1;
                ptr += 1;
                continue;
            }
            if c == b'.' {
                to_double = true;
            } else if c == b'e' || c == b'E' {
                let mut e = ptr + 1;
                if matches!(at(s, e), b'-' | b'+') {
                    // PHP leaves its cursor on the exponent's sign here, even when no digit
                    // follows; the overflow check below reads from that cursor.
                    ptr = e;
                    e += 1;
                }
                if at(s, e).is_ascii_digit() {
                    to_double = true;
                }
            }
            break;
        }
        if !to_double && digits >= MAX_LENGTH_OF_LONG {
            oflow = if neg { -1 } else { 1 };
            to_double = true;
        }
    } else if at(s, ptr) == b'.' && at(s, ptr + 1).is_ascii_digit() {
        to_double = true;
    } else {
        return None;
    }

    let mut dval = 0.0;
    if to_double {
        let (v, end) = strtod_prefix(s, str0);
        dval = v;
        ptr = end;
    }

    let mut trailing = false;
    if ptr != s.len() {
        let mut e = ptr;
        while e < s.len() && is_numeric_ws(s[e]) {
            e += 1;
        }
        if e != s.len() {
            if !allow_errors {
                return None;
            }
            trailing = true;
        }
    }

    if !to_double {
        if digits == MAX_LENGTH_OF_LONG - 1 {
            // 19 digits may still exceed a long: PHP compares the text (up to the NUL, so
            // trailing bytes take part) with the magnitude of ZEND_LONG_MIN.
            let from = ptr - digits;
            let cmp = c_strcmp(&s[from.min(s.len())..], b"9223372036854775808");
            if !(cmp < 0 || (cmp == 0 && at(s, str0) == b'-')) {
                let (v, _) = strtod_prefix(s, str0);
                return Some(Numeric {
                    value: Num::Double(v),
                    oflow: if at(s, str0) == b'-' { -1 } else { 1 },
                    trailing,
                });
            }
        }
        let v = if neg { lval.wrapping_neg() } else { lval };
        Some(Numeric {
            value: Num::Long(v),
            oflow,
            trailing,
        })
    } else {
        Some(Numeric {
            value: Num::Double(dval),
            oflow,
            trailing,
        })
    }
}

/// Mirrors `ZEND_HANDLE_NUMERIC_STR`: the integer a string array key stands for ("123" → 123;
/// not "0123", "-0", "+1", " 1" or anything outside the long range).
pub fn handle_numeric_str(s: &[u8]) -> Option<i64> {
    let first = at(s, 0);
    if first > b'9' {
        return None;
    }
    let mut i = 0;
    if first < b'0' {
        if first != b'-' {
            return None;
        }
        i = 1;
        if !at(s, 1).is_ascii_digit() {
            return None;
        }
    }
    let digits = &s[i..];
    if (digits[0] == b'0' && s.len() > 1) || digits.len() > MAX_LENGTH_OF_LONG - 1 {
        return None;
    }
    let mut idx: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        idx = idx * 10 + u64::from(b - b'0');
    }
    if i == 1 {
        // The magnitude of ZEND_LONG_MIN is the one negative value without a positive twin.
        if idx.wrapping_sub(1) > i64::MAX as u64 {
            return None;
        }
        Some((idx as i64).wrapping_neg())
    } else if idx > i64::MAX as u64 {
        None
    } else {
        Some(idx as i64)
    }
}
