//! `ct_eval_func_call`: the internal functions PHP 8.2's SCCP calls at compile time.
//!
//! PHP runs the real function (those flagged `@compile-time-eval` in the 8.2 stubs, plus
//! `dirname` and a bounded `str_repeat`) and keeps the result unless it warned or threw.
//! Here each one is written out in Rust for the argument types it accepts without any
//! diagnostic; every other case answers `None` (left for run time). The set is a subset of
//! PHP's: functions on the list and not implemented here simply stay calls (a dump
//! difference, never a wrong value). PHP makes the call from a dummy frame of the op_array
//! being optimized, so its strict_types decides how arguments are taken: without strict
//! types a `string` parameter takes ints, floats and booleans ([`str_arg`]), an `int`
//! parameter booleans, integral floats and numeric strings ([`int_arg`]), a `float` one
//! booleans and numeric strings ([`float_arg`]) and a `bool` one ints, floats and strings
//! ([`bool_arg`]); with them each takes only its own type (a `float` an int too). `null`
//! for a non-nullable parameter (a deprecation) and an array for a scalar one (a TypeError)
//! are never taken.

use crate::php_bugs::PhpBugs;
use zend_ir::opcode::*;
use zend_ir::{ArrayKey, Literal, PhpArray, PhpDouble, PhpStr};

fn s(v: &[u8]) -> Literal {
    Literal::String(PhpStr(v.to_vec()))
}

/// A `string` parameter as the call receives it. PHP makes the compile-time call from a
/// dummy frame of the op_array being optimized ("to get the correct strict_types
/// behavior"): without strict types, scalars are coerced without a diagnostic (ints and
/// floats to their string form, `true` to "1", `false` to ""); with them, only a string is
/// taken (anything else is a TypeError, which leaves the call for run time). `null`
/// (deprecated for internal parameters) and everything else leave the call for run time.
/// A float only with `floats` ([`PhpBugs::FLOAT_TO_STRING_FOLDED`]): its string form
/// depends on `precision`, which the script may change before the call.
fn str_arg(a: &Literal, strict_types: bool, floats: bool) -> Option<std::borrow::Cow<'_, [u8]>> {
    use std::borrow::Cow;
    match a {
        Literal::String(s) => Some(Cow::Borrowed(s.as_bytes())),
        _ if strict_types => None,
        Literal::Long(l) => Some(Cow::Owned(l.to_string().into_bytes())),
        Literal::True => Some(Cow::Borrowed(b"1")),
        Literal::False => Some(Cow::Borrowed(b"")),
        Literal::Double(_) if floats => zend_operators::get_string(a).map(|s| Cow::Owned(s.0)),
        _ => None,
    }
}

/// A double that becomes an int without "Implicit conversion ... loses precision": finite,
/// integral and in the long range (`zend_is_long_compatible`).
fn integral_double(d: f64) -> Option<i64> {
    // 2^63 as a double; -2^63 itself fits.
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    (d.is_finite() && d.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&d))
        .then_some(d as i64)
}

/// An `int` parameter as the call receives it (`zend_parse_arg_long_weak` without strict
/// types): an int, a bool, an integral float in range, or a string that is wholly such a
/// number. A fractional float or a number with trailing bytes would be a deprecation or a
/// warning, `null` a deprecation: those, and everything but an int under strict types, leave
/// the call for run time.
fn int_arg(a: &Literal, strict_types: bool) -> Option<i64> {
    match a {
        Literal::Long(l) => Some(*l),
        _ if strict_types => None,
        Literal::True => Some(1),
        Literal::False => Some(0),
        Literal::Double(d) => integral_double(d.get()),
        Literal::String(st) => match zend_operators::is_numeric_string(st.as_bytes(), false)? {
            Literal::Long(l) => Some(l),
            Literal::Double(d) => integral_double(d.get()),
            _ => None,
        },
        _ => None,
    }
}

/// A `bool` parameter as the call receives it (`zend_parse_arg_bool_weak` without strict
/// types): an int, float or string is silently its truth value (`zend_is_true`: NAN is true,
/// "0" and "" false, "0.0" true); `null` is a deprecation, an array a TypeError, and under
/// strict types anything but a bool is one.
fn bool_arg(a: &Literal, strict_types: bool) -> Option<bool> {
    match a {
        Literal::True => Some(true),
        Literal::False => Some(false),
        _ if strict_types => None,
        Literal::Long(_) | Literal::Double(_) | Literal::String(_) => {
            Some(zend_operators::is_true(a))
        }
        _ => None,
    }
}

/// A `float` parameter as the call receives it (`zend_parse_arg_double_weak` without strict
/// types): a float, an int (taken under strict types too), a bool, or a string that is wholly
/// a number (one beyond the double range is INF, as PHP reads it). A number with trailing
/// bytes warns or throws, `null` deprecates: those leave the call for run time.
fn float_arg(a: &Literal, strict_types: bool) -> Option<f64> {
    match a {
        Literal::Double(d) => Some(d.get()),
        Literal::Long(l) => Some(*l as f64),
        _ if strict_types => None,
        Literal::True => Some(1.0),
        Literal::False => Some(0.0),
        Literal::String(st) => match zend_operators::is_numeric_string(st.as_bytes(), false)? {
            Literal::Long(l) => Some(l as f64),
            Literal::Double(d) => Some(d.get()),
            _ => None,
        },
        _ => None,
    }
}

fn arr_arg(a: &Literal) -> Option<&PhpArray> {
    match a {
        Literal::Array(v) => Some(v),
        _ => None,
    }
}

fn boolean(b: bool) -> Literal {
    if b {
        Literal::True
    } else {
        Literal::False
    }
}

/// `(string)` of an array element without a diagnostic (no arrays; a float only with
/// `floats`, [`PhpBugs::FLOAT_TO_STRING_FOLDED`]: its conversion depends on `precision`,
/// which the script may change before the call).
fn elem_str(v: &Literal, floats: bool) -> Option<Vec<u8>> {
    match v {
        Literal::String(s) => Some(s.as_bytes().to_vec()),
        Literal::Long(l) => Some(l.to_string().into_bytes()),
        Literal::True => Some(b"1".to_vec()),
        Literal::False | Literal::Null => Some(Vec::new()),
        // PHP's compile-time call reads the compiling process's `precision`.
        Literal::Double(_) if floats => zend_operators::get_string(v).map(|s| s.0),
        _ => None,
    }
}

fn find(h: &[u8], n: &[u8], from: usize) -> Option<usize> {
    if n.is_empty() {
        return (from <= h.len()).then_some(from);
    }
    if from > h.len() || n.len() > h.len() - from {
        return None;
    }
    (from..=h.len() - n.len()).find(|&i| &h[i..i + n.len()] == n)
}

/// `strrpos` (`strripos` on lowercased operands): where the last `n` in `h` starts. A
/// non-negative `offset` is where the search starts; a negative one leaves the match only
/// up to `len + offset` to start at. `None` for an offset beyond the string (a ValueError),
/// `Some(None)` for no match (`false`).
fn last_pos(h: &[u8], n: &[u8], offset: i64) -> Option<Option<usize>> {
    let len = h.len() as u64;
    let (from, end) = if offset >= 0 {
        if offset as u64 > len {
            return None;
        }
        (offset as usize, h.len())
    } else {
        let back = offset.unsigned_abs();
        if back > len {
            return None;
        }
        // The match may end past `len + offset` when it starts at or before it.
        let end = if back < n.len() as u64 {
            h.len()
        } else {
            h.len() - back as usize + n.len()
        };
        (0, end)
    };
    if n.len() > end - from {
        return Some(None);
    }
    Some(
        (from..=end - n.len())
            .rev()
            .find(|&i| &h[i..i + n.len()] == n),
    )
}

/// `php_str_to_str_ex`, or with `fold_case` `php_str_to_str_i_ex` (`php_char_to_str_ex` for
/// a one-byte needle does the same): every occurrence of `needle` in `h`, left to right
/// without overlap, replaced by `rep`. With `fold_case` ASCII case is ignored in the search
/// (PHP 8.2's tolower is locale-independent) and the bytes between keep theirs.
fn replace_all(h: &[u8], needle: &[u8], rep: &[u8], fold_case: bool) -> Vec<u8> {
    use std::borrow::Cow;
    let (lh, ln) = if fold_case {
        (
            Cow::Owned(h.to_ascii_lowercase()),
            Cow::Owned(needle.to_ascii_lowercase()),
        )
    } else {
        (Cow::Borrowed(h), Cow::Borrowed(needle))
    };
    let mut out = Vec::with_capacity(h.len());
    let mut start = 0;
    while let Some(p) = find(&lh, &ln, start) {
        out.extend_from_slice(&h[start..p]);
        out.extend_from_slice(rep);
        start = p + ln.len();
    }
    out.extend_from_slice(&h[start..]);
    out
}

/// The `search` or `replace` argument of `str_replace`/`str_ireplace` (`array|string`).
enum StrsArg<'a> {
    One(std::borrow::Cow<'a, [u8]>),
    Many(&'a PhpArray),
}

impl<'a> StrsArg<'a> {
    fn new(a: &'a Literal, strict_types: bool, floats: bool) -> Option<Self> {
        match a {
            Literal::Array(v) => Some(StrsArg::Many(v)),
            _ => str_arg(a, strict_types, floats).map(StrsArg::One),
        }
    }
}

/// `php_str_replace_in_subject` (`fold_case` for `str_ireplace`). The entries of array
/// arguments become strings only here, once per non-empty subject (an array entry would
/// warn "Array to string conversion"): an empty subject, or one a replacement emptied, reads
/// no further. With an array search, each entry replaces in the previous result, paired
/// with the replace array's entries in order (keys ignored; "" once they run out); an empty
/// search entry is skipped, but still takes its replacement.
fn replace_in_subject(
    subject: &[u8],
    search: &StrsArg<'_>,
    replace: &StrsArg<'_>,
    fold_case: bool,
    floats: bool,
) -> Option<Vec<u8>> {
    if subject.is_empty() {
        return Some(Vec::new());
    }
    let many = match search {
        StrsArg::Many(a) => a,
        StrsArg::One(needle) => {
            let StrsArg::One(rep) = replace else {
                return None;
            };
            if needle.is_empty() {
                return Some(subject.to_vec());
            }
            return Some(replace_all(subject, needle, rep, fold_case));
        }
    };
    let mut reps = match replace {
        StrsArg::Many(r) => r.iter(),
        StrsArg::One(_) => [].iter(),
    };
    let mut cur = subject.to_vec();
    for (_, entry) in many.iter() {
        let needle = elem_str(entry, floats)?;
        let rep: std::borrow::Cow<'_, [u8]> = match replace {
            StrsArg::One(r) => std::borrow::Cow::Borrowed(r),
            StrsArg::Many(_) => match reps.next() {
                Some((_, r)) => std::borrow::Cow::Owned(elem_str(r, floats)?),
                None => std::borrow::Cow::Borrowed(b""),
            },
        };
        if needle.is_empty() {
            continue;
        }
        cur = replace_all(&cur, &needle, &rep, fold_case);
        if cur.is_empty() {
            return Some(cur);
        }
    }
    Some(cur)
}

/// `php_count_recursive`: the elements of `a` and of every array inside it.
fn count_recursive(a: &PhpArray) -> i64 {
    a.iter()
        .map(|(_, v)| match v {
            Literal::Array(inner) => 1 + count_recursive(inner),
            _ => 1,
        })
        .sum()
}

/// `convert_to_array` of a value `array_merge_recursive` merges into: an array stays, a
/// scalar (null too: `add_next_index_null`) becomes the first element of a new array.
fn into_array(v: Literal) -> Option<PhpArray> {
    match v {
        Literal::Array(a) => Some(a),
        Literal::Null
        | Literal::False
        | Literal::True
        | Literal::Long(_)
        | Literal::Double(_)
        | Literal::String(_) => {
            let mut a = PhpArray::new();
            a.add_new(ArrayKey::Long(0), v);
            Some(a)
        }
        _ => None,
    }
}

/// `php_array_merge_recursive`: `src` into `dest`. An integer key appends at `dest`'s next
/// index; a string key `dest` lacks is added; one it holds turns `dest`'s value into an array
/// and merges `src`'s value into it (an array recursively, anything else appended). `None`
/// when an append finds the next index taken (an Error).
fn merge_recursive(dest: &mut PhpArray, src: &PhpArray) -> Option<()> {
    for (k, v) in src {
        if let ArrayKey::Str(_) = k {
            let slot = dest.entries_mut().find(|(dk, _)| *dk == k).map(|(_, v)| v);
            if let Some(slot) = slot {
                let mut inner = into_array(std::mem::replace(slot, Literal::Null))?;
                match v {
                    Literal::Array(sv) => merge_recursive(&mut inner, sv)?,
                    _ => {
                        if !inner.next_index_insert(v.clone()) {
                            return None;
                        }
                    }
                }
                *slot = Literal::Array(inner);
            } else {
                dest.add_new(k.clone(), v.clone());
            }
        } else if !dest.next_index_insert(v.clone()) {
            return None;
        }
    }
    Some(())
}

/// `php_array_replace_recursive`: each element of `src` replaces `dest`'s under the same
/// key (or is added), except that an array replacing an array replaces into it
/// recursively.
fn replace_recursive(dest: &mut PhpArray, src: &PhpArray) {
    for (k, v) in src {
        if let Literal::Array(sv) = v {
            if let Some((_, Literal::Array(dv))) = dest.entries_mut().find(|(dk, _)| *dk == k) {
                replace_recursive(dv, sv);
                continue;
            }
        }
        dest.update(k.clone(), v.clone());
    }
}

/// Next free integer key of a packed result built from `keys` (PHP 8.2: never below 0).
fn push_next(out: &mut Vec<(ArrayKey, Literal)>, v: Literal) -> Option<()> {
    let mut next: i64 = 0;
    for (k, _) in out.iter() {
        if let ArrayKey::Long(l) = k {
            if *l >= next {
                next = l.checked_add(1)?;
            }
        }
    }
    out.push((ArrayKey::Long(next), v));
    Some(())
}

fn update(out: &mut Vec<(ArrayKey, Literal)>, k: ArrayKey, v: Literal) {
    if let Some(slot) = out.iter_mut().find(|(kk, _)| *kk == k) {
        slot.1 = v;
    } else {
        out.push((k, v));
    }
}

fn key_literal(k: &ArrayKey) -> Literal {
    match k {
        ArrayKey::Long(l) => Literal::Long(*l),
        ArrayKey::Str(s) => Literal::String(s.clone()),
    }
}

fn symtable_key(s: &[u8]) -> ArrayKey {
    match zend_operators::handle_numeric_str(s) {
        Some(l) => ArrayKey::Long(l),
        None => ArrayKey::Str(PhpStr(s.to_vec())),
    }
}

const TRIM_DEFAULT: &[u8] = b" \n\r\t\x0b\0";

/// `php_charmask`: the bytes `chars` lists, where "x..y" stands for the bytes from x to y
/// (y not below x). `None` when a ".." is left that is not such a range (PHP warns "Invalid
/// '..'-range").
fn charmask(chars: &[u8]) -> Option<[bool; 256]> {
    let mut mask = [false; 256];
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if i + 3 < chars.len() && &chars[i + 1..i + 3] == b".." && chars[i + 3] >= c {
            for b in c..=chars[i + 3] {
                mask[usize::from(b)] = true;
            }
            i += 4;
        } else if chars[i..].starts_with(b"..") {
            return None;
        } else {
            mask[usize::from(c)] = true;
            i += 1;
        }
    }
    Some(mask)
}

fn trim(v: &[u8], chars: &[u8], mode: u8) -> Option<Literal> {
    let mask = charmask(chars)?;
    let strip = |c: u8| mask[usize::from(c)];
    let mut start = 0;
    let mut end = v.len();
    if mode & 1 != 0 {
        while start < end && strip(v[start]) {
            start += 1;
        }
    }
    if mode & 2 != 0 {
        while end > start && strip(v[end - 1]) {
            end -= 1;
        }
    }
    Some(s(&v[start..end]))
}

/// `zend_dirname` on a non-Windows build.
fn dirname(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return Vec::new();
    }
    let mut end = path.len() as isize - 1;
    while end >= 0 && path[end as usize] == b'/' {
        end -= 1;
    }
    if end < 0 {
        return b"/".to_vec();
    }
    while end >= 0 && path[end as usize] != b'/' {
        end -= 1;
    }
    if end < 0 {
        return b".".to_vec();
    }
    while end >= 0 && path[end as usize] == b'/' {
        end -= 1;
    }
    if end < 0 {
        return b"/".to_vec();
    }
    path[..=end as usize].to_vec()
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc: u32 = 0xFFFF_FFFF;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(B64[(n >> 18) as usize & 63]);
        out.push(B64[(n >> 12) as usize & 63]);
        out.push(if chunk.len() > 1 {
            B64[(n >> 6) as usize & 63]
        } else {
            b'='
        });
        out.push(if chunk.len() > 2 {
            B64[n as usize & 63]
        } else {
            b'='
        });
    }
    out
}

/// `php_base64_decode_ex`: `=` is counted and otherwise ignored, and every other byte
/// outside the alphabet skipped, the alphabet's bytes taken six bits at a time (the bits of
/// an incomplete last byte dropped). With `strict`, only whitespace (`\t`, `\n`, `\r`,
/// space) may be skipped, nothing but whitespace may follow a `=`, and a last group of one
/// digit or padding that does not complete the last group (up to two `=`) fail: `None`
/// (base64_decode() is false, without a diagnostic).
fn base64_decode(data: &[u8], strict: bool) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() / 4 * 3);
    let (mut bits, mut nbits, mut digits, mut padding) = (0u32, 0u32, 0usize, 0usize);
    for &c in data {
        if c == b'=' {
            padding += 1;
            continue;
        }
        let Some(v) = B64.iter().position(|&x| x == c) else {
            if strict && !matches!(c, b'\t' | b'\n' | b'\r' | b' ') {
                return None;
            }
            continue;
        };
        if strict && padding > 0 {
            return None;
        }
        bits = (bits << 6) | v as u32;
        nbits += 6;
        digits += 1;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    if strict && (digits % 4 == 1 || (padding > 0 && (padding > 2 || (digits + padding) % 4 != 0)))
    {
        return None;
    }
    Some(out)
}

fn urlencode(data: &[u8], raw: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    for &c in data {
        if c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'_' || (raw && c == b'~') {
            out.push(c);
        } else if c == b' ' && !raw {
            out.push(b'+');
        } else {
            out.extend_from_slice(format!("%{c:02X}").as_bytes());
        }
    }
    out
}

/// `php_url_decode` (`urldecode`: `+` is a space too) and `php_raw_url_decode`: `%XX`
/// with two hex digits is the byte, anything else stays as it is.
fn urldecode(data: &[u8], raw: bool) -> Vec<u8> {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        let c = data[i];
        if c == b'+' && !raw {
            out.push(b' ');
        } else if c == b'%' && i + 2 < data.len() {
            match (hex(data[i + 1]), hex(data[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                    continue;
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// `zend_binary_strcmp` as PHP 8.2 runs it on this platform: the difference of the first
/// differing bytes (memcmp's value), or -1/0/1 by length when one is a prefix of the other.
fn php_strcmp(x: &[u8], y: &[u8]) -> i64 {
    match x.iter().zip(y).find(|(a, b)| a != b) {
        Some((a, b)) => i64::from(*a) - i64::from(*b),
        None => match x.len().cmp(&y.len()) {
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => 1,
        },
    }
}

/// `preg_quote`: PCRE's special characters (and the delimiter, when given) get a
/// backslash; NUL becomes `\000`.
fn preg_quote(data: &[u8], delimiter: Option<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    for &c in data {
        match c {
            b'.' | b'\\' | b'+' | b'*' | b'?' | b'[' | b'^' | b']' | b'$' | b'(' | b')' | b'{'
            | b'}' | b'=' | b'!' | b'>' | b'<' | b'|' | b':' | b'-' | b'#' => {
                out.push(b'\\');
                out.push(c);
            }
            0 => out.extend_from_slice(b"\\000"),
            _ if Some(c) == delimiter => {
                out.push(b'\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// `_php_math_basetozval` for valid digits only (invalid ones deprecate), after leading
/// and trailing whitespace (C's isspace) and then the base's prefix ("0x", "0o", "0b", any
/// case), which PHP skips silently.
fn base_to_number(v: &[u8], base: u32) -> Option<Literal> {
    let is_space = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
    let start = v.iter().position(|c| !is_space(c)).unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|c| !is_space(c))
        .map_or(start, |e| e + 1);
    let mut v = &v[start..end];
    let prefix = match base {
        16 => b'x',
        8 => b'o',
        _ => b'b',
    };
    if v.len() >= 2 && v[0] == b'0' && v[1].to_ascii_lowercase() == prefix {
        v = &v[2..];
    }
    let mut num: i64 = 0;
    let mut fnum: f64 = 0.0;
    let mut is_double = false;
    for &c in v {
        let d = (c as char).to_digit(base)?;
        if !is_double {
            match num
                .checked_mul(i64::from(base))
                .and_then(|x| x.checked_add(i64::from(d)))
            {
                Some(n) => {
                    num = n;
                    continue;
                }
                None => {
                    fnum = num as f64;
                    is_double = true;
                }
            }
        }
        fnum = fnum * f64::from(base) + f64::from(d);
    }
    Some(if is_double {
        Literal::Double(PhpDouble::new(fnum))
    } else {
        Literal::Long(num)
    })
}

fn number_to_base(v: i64, base: u32) -> Vec<u8> {
    let mut n = v as u64;
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(digits[(n % u64::from(base)) as usize]);
        n /= u64::from(base);
        if n == 0 {
            break;
        }
    }
    out.reverse();
    out
}

/// `php_var_serialize` of the values it writes the same way whatever the ini settings; a
/// float (written with `serialize_precision`) only with `floats`
/// ([`PhpBugs::FLOAT_TO_STRING_FOLDED`]), in the form of the default, -1, as PHP 8.2's SCCP
/// folds it under `php -n`.
fn serialize(out: &mut Vec<u8>, v: &Literal, floats: bool) -> Option<()> {
    match v {
        Literal::Null => out.extend_from_slice(b"N;"),
        Literal::True => out.extend_from_slice(b"b:1;"),
        Literal::False => out.extend_from_slice(b"b:0;"),
        Literal::Long(l) => out.extend_from_slice(format!("i:{l};").as_bytes()),
        Literal::Double(d) if floats => out
            .extend_from_slice(format!("d:{};", zend_operators::gcvt_shortest(d.get())).as_bytes()),
        Literal::String(st) => {
            out.extend_from_slice(format!("s:{}:\"", st.as_bytes().len()).as_bytes());
            out.extend_from_slice(st.as_bytes());
            out.extend_from_slice(b"\";");
        }
        Literal::Array(a) => {
            out.extend_from_slice(format!("a:{}:{{", a.len()).as_bytes());
            for (k, v) in a {
                serialize(out, &key_literal(k), floats)?;
                serialize(out, v, floats)?;
            }
            out.push(b'}');
        }
        _ => return None,
    }
    Some(())
}

/// Loose equality (`==`) as `array_search`/`array_keys` use it.
fn loose_eq(a: &Literal, b: &Literal) -> Option<bool> {
    zend_operators::eval_binary_op(ZEND_IS_EQUAL, a, b).map(|r| r == Literal::True)
}

/// `php_canonicalize_version` (ext/standard/versioning.c): `-`, `_`, `+` and other
/// non-alphanumerics become `.`, and a `.` separates digits from letters.
fn canonicalize_version(v: &[u8]) -> Vec<u8> {
    let Some((&first, rest)) = v.split_first() else {
        return Vec::new();
    };
    let isdig = |c: u8| c.is_ascii_digit();
    let isndig = |c: u8| !c.is_ascii_digit() && c != b'.';
    let mut q = vec![first];
    let mut lp = first;
    for &c in rest {
        let lq = q[q.len() - 1];
        if matches!(c, b'-' | b'_' | b'+') {
            if lq != b'.' {
                q.push(b'.');
            }
        } else if (isndig(lp) && isdig(c)) || (isdig(lp) && isndig(c)) {
            if lq != b'.' {
                q.push(b'.');
            }
            q.push(c);
        } else if !c.is_ascii_alphanumeric() {
            if lq != b'.' {
                q.push(b'.');
            }
        } else {
            q.push(c);
        }
        lp = c;
    }
    q
}

/// `compare_special_version_forms`: the rank of the first form each part starts with.
fn compare_special_version_forms(form1: &[u8], form2: &[u8]) -> i64 {
    const FORMS: [(&[u8], i64); 10] = [
        (b"dev", 0),
        (b"alpha", 1),
        (b"a", 1),
        (b"beta", 2),
        (b"b", 2),
        (b"RC", 3),
        (b"rc", 3),
        (b"#", 4),
        (b"pl", 5),
        (b"p", 5),
    ];
    let rank = |f: &[u8]| {
        FORMS
            .iter()
            .find(|(name, _)| f.starts_with(name))
            .map_or(-1, |&(_, order)| order)
    };
    (rank(form1) - rank(form2)).signum()
}

/// `strtol` of a part that starts with a digit (saturating as strtol does).
fn version_number(part: &[u8]) -> i64 {
    part.iter()
        .take_while(|c| c.is_ascii_digit())
        .fold(0i64, |n, &c| {
            n.saturating_mul(10).saturating_add(i64::from(c - b'0'))
        })
}

/// `php_version_compare`: -1, 0 or 1.
fn php_version_compare(v1: &[u8], v2: &[u8]) -> i64 {
    if v1.is_empty() || v2.is_empty() {
        return match (v1.is_empty(), v2.is_empty()) {
            (true, true) => 0,
            (false, _) => 1,
            _ => -1,
        };
    }
    let canon = |v: &[u8]| {
        if v[0] == b'#' {
            v.to_vec()
        } else {
            canonicalize_version(v)
        }
    };
    let (ver1, ver2) = (canon(v1), canon(v2));
    let digit_at = |v: &[u8], i: usize| v.get(i).is_some_and(|c| c.is_ascii_digit());
    // p: where the current part starts; n: the '.' ending it (C's n1/n2, "not NULL"
    // before the first part).
    let (mut p1, mut p2) = (0usize, 0usize);
    let (mut n1, mut n2) = (Some(0usize), Some(0usize));
    let mut compare = 0;
    while p1 < ver1.len() && p2 < ver2.len() && n1.is_some() && n2.is_some() {
        n1 = ver1[p1..].iter().position(|&c| c == b'.').map(|i| p1 + i);
        n2 = ver2[p2..].iter().position(|&c| c == b'.').map(|i| p2 + i);
        let part1 = &ver1[p1..n1.unwrap_or(ver1.len())];
        let part2 = &ver2[p2..n2.unwrap_or(ver2.len())];
        let (d1, d2) = (digit_at(part1, 0), digit_at(part2, 0));
        compare = if d1 && d2 {
            (version_number(part1) - version_number(part2)).signum()
        } else if !d1 && !d2 {
            compare_special_version_forms(part1, part2)
        } else if d1 {
            compare_special_version_forms(b"#N#", part2)
        } else {
            compare_special_version_forms(part1, b"#N#")
        };
        if compare != 0 {
            break;
        }
        if let Some(n) = n1 {
            p1 = n + 1;
        }
        if let Some(n) = n2 {
            p2 = n + 1;
        }
    }
    if compare == 0 {
        if n1.is_some() {
            compare = if digit_at(&ver1, p1) {
                1
            } else {
                php_version_compare(&ver1[p1..], b"#N#")
            };
        } else if n2.is_some() {
            compare = if digit_at(&ver2, p2) {
                -1
            } else {
                php_version_compare(b"#N#", &ver2[p2..])
            };
        }
    }
    compare
}

/// The value of `name(args...)` when PHP 8.2's SCCP evaluates the call (`ct_eval_func_call`),
/// `None` to leave it for run time. `with_file_cache`: the script may run in another process
/// ([`crate::Options::with_file_cache`]); `php_bugs`: PHP 8.2's wrong folds to reproduce
/// ([`PhpBugs::FLOAT_TO_STRING_FOLDED`]).
pub fn ct_eval_func_call(
    name: &[u8],
    args: &[Literal],
    strict_types: bool,
    with_file_cache: bool,
    php_bugs: PhpBugs,
) -> Option<Literal> {
    let floats = php_bugs.contains(PhpBugs::FLOAT_TO_STRING_FOLDED);
    let str_arg_s = |a| str_arg(a, strict_types, floats);
    let elem = |v| elem_str(v, floats);
    let int_arg_s = |a| int_arg(a, strict_types);
    let bool_arg_s = |a| bool_arg(a, strict_types);
    crate::helpers::internal_function(name)?;
    if let [Literal::String(a)] = args {
        if let Some(v) = crate::helpers::eval_special_func_call(name, a.as_bytes(), with_file_cache)
        {
            return Some(v);
        }
    }
    match (name, args) {
        (b"strtolower", [a]) => Some(s(&str_arg_s(a)?.to_ascii_lowercase())),
        (b"strtoupper", [a]) => Some(s(&str_arg_s(a)?.to_ascii_uppercase())),
        // ord(chr(300)) is folded by PHP (zopt fuzz: ~2% of generated programs).
        (b"ord", [a]) => Some(Literal::Long(
            str_arg_s(a)?.first().map_or(0, |&c| i64::from(c)),
        )),
        // chr() takes the code modulo 256 (`c &= 0xff`).
        (b"chr", [a]) => Some(s(&[(int_arg_s(a)? & 0xff) as u8])),
        (b"ucfirst", [a]) => {
            let mut v = str_arg_s(a)?.to_vec();
            if let Some(c) = v.first_mut() {
                *c = c.to_ascii_uppercase();
            }
            Some(s(&v))
        }
        (b"lcfirst", [a]) => {
            let mut v = str_arg_s(a)?.to_vec();
            if let Some(c) = v.first_mut() {
                *c = c.to_ascii_lowercase();
            }
            Some(s(&v))
        }
        (b"ucwords", [a, rest @ ..]) if rest.len() <= 1 => {
            let delims = match rest {
                [d] => str_arg_s(d)?,
                _ => std::borrow::Cow::Borrowed(&b" \t\r\n\x0c\x0b"[..]),
            };
            // The delimiters are a character mask, ranges included.
            let delims = charmask(&delims)?;
            let mut v = str_arg_s(a)?.to_vec();
            let mut up = true;
            for c in v.iter_mut() {
                if up {
                    *c = c.to_ascii_uppercase();
                }
                up = delims[usize::from(*c)];
            }
            Some(s(&v))
        }
        (b"trim" | b"ltrim" | b"rtrim", [a, rest @ ..]) if rest.len() <= 1 => {
            let chars = match rest {
                [c] => str_arg_s(c)?,
                _ => std::borrow::Cow::Borrowed(TRIM_DEFAULT),
            };
            let mode = match name {
                b"ltrim" => 1,
                b"rtrim" => 2,
                _ => 3,
            };
            trim(&str_arg_s(a)?, &chars, mode)
        }
        // Not @compile-time-eval: `can_ct_eval_func_call` lets PHP call it only with exactly
        // a string and an int whose result stays under 64 KiB, before any coercion (so
        // str_repeat(5, 3) or str_repeat("ab", "3") stay calls in either mode).
        (b"str_repeat", [Literal::String(v), Literal::Long(n)]) => {
            let (v, n) = (v.as_bytes(), *n);
            if n < 0 || (v.len() as u128) * (n as u128) >= 64 * 1024 {
                return None;
            }
            Some(s(&v.repeat(n as usize)))
        }
        (b"substr", [a, b, rest @ ..]) if rest.len() <= 1 => {
            let v = str_arg_s(a)?;
            let v = &*v;
            let len = v.len() as i64;
            let mut f = int_arg_s(b)?;
            if f > len {
                return Some(s(b""));
            }
            if f < 0 {
                f = if -(f as i128) > i128::from(len) {
                    0
                } else {
                    len + f
                };
            }
            let l = match rest {
                [] | [Literal::Null] => len - f,
                [l] => {
                    let l = int_arg_s(l)?;
                    if l < 0 {
                        if -(l as i128) > i128::from(len - f) {
                            0
                        } else {
                            len - f + l
                        }
                    } else if l > len - f {
                        len - f
                    } else {
                        l
                    }
                }
                _ => return None,
            };
            Some(s(&v[f as usize..(f + l) as usize]))
        }
        (b"strpos" | b"stripos", [a, b, rest @ ..]) if rest.len() <= 1 => {
            let (mut h, mut n) = (str_arg_s(a)?.to_vec(), str_arg_s(b)?.to_vec());
            let len = h.len() as i64;
            let mut off = match rest {
                [o] => int_arg_s(o)?,
                _ => 0,
            };
            if off < 0 {
                off += len;
            }
            if off < 0 || off > len {
                return None;
            }
            if name == b"stripos" {
                h.make_ascii_lowercase();
                n.make_ascii_lowercase();
            }
            Some(match find(&h, &n, off as usize) {
                Some(p) => Literal::Long(p as i64),
                None => Literal::False,
            })
        }
        (b"strrpos" | b"strripos", [a, b, rest @ ..]) if rest.len() <= 1 => {
            let (mut h, mut n) = (str_arg_s(a)?.into_owned(), str_arg_s(b)?.into_owned());
            let offset = match rest {
                [o] => int_arg_s(o)?,
                _ => 0,
            };
            if name == b"strripos" {
                h.make_ascii_lowercase();
                n.make_ascii_lowercase();
            }
            Some(match last_pos(&h, &n, offset)? {
                Some(p) => Literal::Long(p as i64),
                None => Literal::False,
            })
        }
        (b"str_contains", [a, b]) => {
            Some(boolean(find(&str_arg_s(a)?, &str_arg_s(b)?, 0).is_some()))
        }
        (b"str_starts_with", [a, b]) => Some(boolean(str_arg_s(a)?.starts_with(&str_arg_s(b)?))),
        (b"str_ends_with", [a, b]) => Some(boolean(str_arg_s(a)?.ends_with(&str_arg_s(b)?))),
        (b"strstr", [a, b, rest @ ..]) if rest.len() <= 1 => {
            let (h, n) = (str_arg_s(a)?, str_arg_s(b)?);
            let (h, n) = (&*h, &*n);
            let before = match rest {
                [x] => bool_arg_s(x)?,
                _ => false,
            };
            Some(match find(h, n, 0) {
                Some(p) if before => s(&h[..p]),
                Some(p) => s(&h[p..]),
                None => Literal::False,
            })
        }
        // With a fourth argument (the count, by reference) the call never reaches here.
        (b"str_replace" | b"str_ireplace", [search, replace, subject]) => {
            let fold_case = name == b"str_ireplace";
            let search = StrsArg::new(search, strict_types, floats)?;
            let replace = StrsArg::new(replace, strict_types, floats)?;
            // A string search with an array replace is a TypeError.
            if let (StrsArg::One(_), StrsArg::Many(_)) = (&search, &replace) {
                return None;
            }
            let in_subject = |v: &[u8]| replace_in_subject(v, &search, &replace, fold_case, floats);
            match subject {
                // Each entry is made a string before anything else (an array entry warns),
                // and its result, always a string, goes under its key into a new table.
                Literal::Array(subjects) => {
                    let mut out = PhpArray::new();
                    for (k, v) in subjects {
                        out.add_new(k.clone(), s(&in_subject(&elem(v)?)?));
                    }
                    Some(Literal::Array(out))
                }
                _ => Some(s(&in_subject(&str_arg_s(subject)?)?)),
            }
        }
        (b"implode", [a, rest @ ..]) if rest.len() <= 1 => {
            let (sep, arr) = match rest {
                // A null array (the parameter is ?array) is the one-argument form.
                [] | [Literal::Null] => (std::borrow::Cow::Borrowed(&b""[..]), arr_arg(a)?),
                [b] => (str_arg_s(a)?, arr_arg(b)?),
                _ => return None,
            };
            let mut out = Vec::new();
            for (i, (_, v)) in arr.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(&sep);
                }
                out.extend_from_slice(&elem(v)?);
            }
            Some(s(&out))
        }
        (b"explode", [a, b, rest @ ..]) if rest.len() <= 1 => {
            let (sep, v) = (str_arg_s(a)?, str_arg_s(b)?);
            let (sep, v) = (&*sep, &*v);
            if sep.is_empty() {
                return None;
            }
            let limit = match rest {
                [l] => int_arg_s(l)?,
                _ => i64::MAX,
            };
            let mut parts: Vec<&[u8]> = Vec::new();
            let mut start = 0;
            while let Some(p) = find(v, sep, start) {
                parts.push(&v[start..p]);
                start = p + sep.len();
            }
            parts.push(&v[start..]);
            let parts: Vec<Vec<u8>> = if limit > 0 {
                if parts.len() as i64 > limit {
                    let keep = (limit - 1) as usize;
                    let mut head: Vec<Vec<u8>> = parts[..keep].iter().map(|p| p.to_vec()).collect();
                    let offset: usize = parts[..keep].iter().map(|p| p.len() + sep.len()).sum();
                    head.push(v[offset..].to_vec());
                    head
                } else {
                    parts.iter().map(|p| p.to_vec()).collect()
                }
            } else if limit < 0 {
                let drop = (-(limit as i128)) as usize;
                if drop >= parts.len() {
                    Vec::new()
                } else {
                    parts[..parts.len() - drop]
                        .iter()
                        .map(|p| p.to_vec())
                        .collect()
                }
            } else {
                vec![v.to_vec()]
            };
            Some(Literal::Array(
                parts
                    .into_iter()
                    .enumerate()
                    .map(|(i, p)| (ArrayKey::Long(i as i64), s(&p)))
                    .collect(),
            ))
        }
        (b"bin2hex", [a]) => {
            let v = str_arg_s(a)?;
            let v = &*v;
            let mut out = Vec::with_capacity(v.len() * 2);
            for b in v {
                out.extend_from_slice(format!("{b:02x}").as_bytes());
            }
            Some(s(&out))
        }
        (b"hex2bin", [a]) => {
            let v = str_arg_s(a)?;
            let v = &*v;
            if v.len() % 2 != 0 {
                return None;
            }
            let mut out = Vec::with_capacity(v.len() / 2);
            for pair in v.chunks(2) {
                let hi = (pair[0] as char).to_digit(16)?;
                let lo = (pair[1] as char).to_digit(16)?;
                out.push((hi * 16 + lo) as u8);
            }
            Some(s(&out))
        }
        (b"strrev", [a]) => {
            let mut v = str_arg_s(a)?.to_vec();
            v.reverse();
            Some(s(&v))
        }
        (b"crc32", [a]) => Some(Literal::Long(i64::from(crc32(&str_arg_s(a)?)))),
        (b"base64_encode", [a]) => Some(s(&base64_encode(&str_arg_s(a)?))),
        (b"base64_decode", [a, rest @ ..]) if rest.len() <= 1 => {
            let strict = match rest {
                [st] => bool_arg_s(st)?,
                _ => false,
            };
            Some(base64_decode(&str_arg_s(a)?, strict).map_or(Literal::False, |v| s(&v)))
        }
        (b"urlencode", [a]) => Some(s(&urlencode(&str_arg_s(a)?, false))),
        (b"rawurlencode", [a]) => Some(s(&urlencode(&str_arg_s(a)?, true))),
        (b"dechex", [a]) => Some(s(&number_to_base(int_arg_s(a)?, 16))),
        (b"decbin", [a]) => Some(s(&number_to_base(int_arg_s(a)?, 2))),
        (b"decoct", [a]) => Some(s(&number_to_base(int_arg_s(a)?, 8))),
        (b"hexdec", [a]) => base_to_number(&str_arg_s(a)?, 16),
        (b"bindec", [a]) => base_to_number(&str_arg_s(a)?, 2),
        (b"octdec", [a]) => base_to_number(&str_arg_s(a)?, 8),
        (b"strcmp", [a, b]) => Some(Literal::Long(php_strcmp(&str_arg_s(a)?, &str_arg_s(b)?))),
        (b"strcasecmp", [a, b]) => Some(Literal::Long(php_strcmp(
            &str_arg_s(a)?.to_ascii_lowercase(),
            &str_arg_s(b)?.to_ascii_lowercase(),
        ))),
        (b"strncmp", [a, b, c]) => {
            let n = int_arg_s(c)?;
            if n < 0 {
                return None;
            }
            let n = n as usize;
            let (x, y) = (str_arg_s(a)?, str_arg_s(b)?);
            let (x, y) = (&*x, &*y);
            Some(Literal::Long(php_strcmp(
                &x[..n.min(x.len())],
                &y[..n.min(y.len())],
            )))
        }
        // zend_binary_strncasecmp: the first `n` bytes of each, ASCII case ignored, compared
        // as strcmp does. A negative length is a ValueError.
        (b"strncasecmp", [a, b, c]) => {
            let n = usize::try_from(int_arg_s(c)?).ok()?;
            let (x, y) = (
                str_arg_s(a)?.to_ascii_lowercase(),
                str_arg_s(b)?.to_ascii_lowercase(),
            );
            Some(Literal::Long(php_strcmp(
                &x[..n.min(x.len())],
                &y[..n.min(y.len())],
            )))
        }
        (b"str_split", [a, rest @ ..]) if rest.len() <= 1 => {
            let v = str_arg_s(a)?;
            let v = &*v;
            let n = match rest {
                [l] => int_arg_s(l)?,
                _ => 1,
            };
            if n < 1 {
                return None;
            }
            Some(Literal::Array(
                v.chunks(n as usize)
                    .enumerate()
                    .map(|(i, c)| (ArrayKey::Long(i as i64), s(c)))
                    .collect(),
            ))
        }
        (b"dirname", [a, rest @ ..]) if rest.len() <= 1 => {
            let levels = match rest {
                [l] => int_arg_s(l)?,
                _ => 1,
            };
            if levels < 1 {
                return None;
            }
            // Up `levels` times, stopping once a step no longer shortens the path.
            let mut cur = dirname(&str_arg_s(a)?);
            let mut left = levels - 1;
            while left > 0 {
                let next = dirname(&cur);
                let shrank = next.len() < cur.len();
                cur = next;
                if !shrank {
                    break;
                }
                left -= 1;
            }
            Some(s(&cur))
        }
        // PHP's own version, and the version of an extension of the tables (each is
        // built into the PHP binary, or is OPcache itself, and carries PHP_VERSION; a test
        // checks that against php). PHP folds any other extension to false when it is not
        // loaded at compile time; here that is known only when the caller said the run
        // loads exactly the tables' modules (crate::environment): otherwise the call stays,
        // as false would be wrong in a run that loads the extension from php.ini.
        // What the process compiling the script is and runs on: the one that runs it too,
        // unless the script goes to a file cache (then PHP 8.2 still folds both, and a
        // cache shared by two SAPIs or copied to another host answers wrongly).
        (b"php_sapi_name", []) => {
            crate::helpers::get_persistent_constant(b"PHP_SAPI", with_file_cache)
        }
        (b"php_uname", rest) if rest.len() <= 1 && !with_file_cache => {
            let [sysname, nodename, release, version, machine] = crate::environment::uname()?;
            // The mode's first byte picks the field; any other (or none) is all of them.
            let mode = match rest {
                [m] => str_arg_s(m)?.first().copied(),
                _ => None,
            };
            Some(match mode {
                Some(b's') => Literal::String(sysname.clone()),
                Some(b'n') => Literal::String(nodename.clone()),
                Some(b'r') => Literal::String(release.clone()),
                Some(b'v') => Literal::String(version.clone()),
                Some(b'm') => Literal::String(machine.clone()),
                _ => s(&[sysname, nodename, release, version, machine]
                    .map(|f| f.as_bytes())
                    .join(&b' ')),
            })
        }
        // `?string $extension`: null is PHP's own version, as no argument.
        (b"phpversion", [] | [Literal::Null]) => {
            crate::helpers::get_persistent_constant(b"PHP_VERSION", false)
        }
        (b"phpversion", [a]) => {
            let lc = str_arg_s(a)?.to_ascii_lowercase();
            crate::helpers::module_version(&lc)
                .or_else(|| crate::environment::modules_are_tables().then_some(Literal::False))
        }
        (b"version_compare", [a, b, rest @ ..]) if rest.len() <= 1 => {
            let (a, b) = (str_arg_s(a)?, str_arg_s(b)?);
            // PHP compares the C strings: a NUL byte would end them.
            if a.contains(&0) || b.contains(&0) {
                return None;
            }
            let c = php_version_compare(&a, &b);
            match rest {
                [] | [Literal::Null] => Some(Literal::Long(c)),
                [op] => {
                    let r = match &*str_arg_s(op)? {
                        b"<" | b"lt" => c == -1,
                        b"<=" | b"le" => c != 1,
                        b">" | b"gt" => c == 1,
                        b">=" | b"ge" => c != -1,
                        b"==" | b"=" | b"eq" => c == 0,
                        b"!=" | b"<>" | b"ne" => c != 0,
                        // An unknown operator throws a ValueError.
                        _ => return None,
                    };
                    Some(boolean(r))
                }
                _ => None,
            }
        }
        (b"serialize", [a]) => {
            let mut out = Vec::new();
            serialize(&mut out, a, floats)?;
            Some(s(&out))
        }
        (b"array_keys", [a, rest @ ..]) if rest.len() <= 2 => {
            let arr = arr_arg(a)?;
            let strict = match rest {
                [_, st] => bool_arg_s(st)?,
                _ => false,
            };
            let mut out = Vec::new();
            for (k, v) in arr {
                let keep = match rest.first() {
                    None => true,
                    Some(needle) if strict => zend_operators::is_identical(v, needle),
                    Some(needle) => loose_eq(v, needle)?,
                };
                if keep {
                    out.push((ArrayKey::Long(out.len() as i64), key_literal(k)));
                }
            }
            Some(Literal::Array(out.into()))
        }
        (b"array_values", [a]) => Some(Literal::Array(
            arr_arg(a)?
                .iter()
                .enumerate()
                .map(|(i, (_, v))| (ArrayKey::Long(i as i64), v.clone()))
                .collect(),
        )),
        (b"array_merge", arrays) => {
            let mut out: Vec<(ArrayKey, Literal)> = Vec::new();
            for a in arrays {
                for (k, v) in arr_arg(a)? {
                    match k {
                        ArrayKey::Long(_) => push_next(&mut out, v.clone())?,
                        ArrayKey::Str(_) => update(&mut out, k.clone(), v.clone()),
                    }
                }
            }
            Some(Literal::Array(out.into()))
        }
        (b"array_merge_recursive", arrays) => {
            // Every argument must be an array (a TypeError before anything is merged).
            let arrays: Vec<&PhpArray> = arrays.iter().map(arr_arg).collect::<Option<_>>()?;
            let Some((first, rest)) = arrays.split_first() else {
                // No argument: PHP's [] (zend_empty_array).
                return Some(Literal::Array(PhpArray::from(Vec::new())));
            };
            // Two arrays of which one is empty: the other is returned as it is when merging
            // would not change it (a list, or only string keys), nNextFreeElement included.
            if let [a, b] = arrays[..] {
                let other = if a.is_empty() {
                    Some(b)
                } else if b.is_empty() {
                    Some(a)
                } else {
                    None
                };
                if let Some(o) = other {
                    let list = o
                        .iter()
                        .enumerate()
                        .all(|(i, (k, _))| *k == ArrayKey::Long(i as i64));
                    let strings = o.iter().all(|(k, _)| matches!(k, ArrayKey::Str(_)));
                    if list || strings {
                        return Some(Literal::Array(o.clone()));
                    }
                }
            }
            // A new table holding the first array renumbered, the others merged into it.
            let mut out = PhpArray::new();
            for (k, v) in first.iter() {
                match k {
                    ArrayKey::Str(_) => out.add_new(k.clone(), v.clone()),
                    ArrayKey::Long(_) => {
                        if !out.next_index_insert(v.clone()) {
                            return None;
                        }
                    }
                }
            }
            for a in rest {
                merge_recursive(&mut out, a)?;
            }
            Some(Literal::Array(out))
        }
        (b"array_replace_recursive", [a, others @ ..]) => {
            let others: Vec<&PhpArray> = others.iter().map(arr_arg).collect::<Option<_>>()?;
            // A copy of the first array (its nNextFreeElement too), replaced into.
            let mut out = arr_arg(a)?.clone();
            for o in others {
                replace_recursive(&mut out, o);
            }
            Some(Literal::Array(out))
        }
        // count() of one positional argument and array_key_exists() of two compile to COUNT
        // and ARRAY_KEY_EXISTS (unless an unqualified name in a namespace leaves them to run
        // time resolution, which SCCP never sees); what reaches here is count() with a mode,
        // or either with named arguments in declaration order (positional for the call).
        (b"count", [a, rest @ ..]) if rest.len() <= 1 => {
            let mode = match rest {
                [m] => int_arg_s(m)?,
                _ => 0,
            };
            let arr = arr_arg(a)?;
            // COUNT_NORMAL (0) or COUNT_RECURSIVE (1); any other mode is a ValueError.
            match mode {
                0 => Some(Literal::Long(arr.len() as i64)),
                1 => Some(Literal::Long(count_recursive(arr))),
                _ => None,
            }
        }
        (b"array_key_exists", [k, a]) => {
            let arr = arr_arg(a)?;
            let key = match k {
                Literal::String(st) => symtable_key(st.as_bytes()),
                Literal::Long(l) => ArrayKey::Long(*l),
                Literal::Null => ArrayKey::Str(PhpStr(Vec::new())),
                Literal::False => ArrayKey::Long(0),
                Literal::True => ArrayKey::Long(1),
                // A fractional or out-of-range float deprecates (zend_dval_to_lval_safe).
                Literal::Double(d) => ArrayKey::Long(integral_double(d.get())?),
                _ => return None,
            };
            Some(boolean(arr.get(&key).is_some()))
        }
        (b"array_flip", [a]) => {
            let mut out = Vec::new();
            for (k, v) in arr_arg(a)? {
                let nk = match v {
                    Literal::Long(l) => ArrayKey::Long(*l),
                    Literal::String(st) => symtable_key(st.as_bytes()),
                    _ => return None,
                };
                update(&mut out, nk, key_literal(k));
            }
            Some(Literal::Array(out.into()))
        }
        (b"array_search", [n, h, rest @ ..]) if rest.len() <= 1 => {
            let strict = match rest {
                [st] => bool_arg_s(st)?,
                _ => false,
            };
            for (k, v) in arr_arg(h)? {
                let eq = if strict {
                    zend_operators::is_identical(v, n)
                } else {
                    loose_eq(v, n)?
                };
                if eq {
                    return Some(key_literal(k));
                }
            }
            Some(Literal::False)
        }
        (b"in_array", [n, h, rest @ ..]) if rest.len() <= 1 => {
            let strict = match rest {
                [st] => bool_arg_s(st)?,
                _ => false,
            };
            for (_, v) in arr_arg(h)? {
                let eq = if strict {
                    zend_operators::is_identical(v, n)
                } else {
                    loose_eq(v, n)?
                };
                if eq {
                    return Some(Literal::True);
                }
            }
            Some(Literal::False)
        }
        (b"array_key_first", [a]) => Some(
            arr_arg(a)?
                .first()
                .map_or(Literal::Null, |(k, _)| key_literal(k)),
        ),
        (b"array_key_last", [a]) => Some(
            arr_arg(a)?
                .last()
                .map_or(Literal::Null, |(k, _)| key_literal(k)),
        ),
        (b"array_is_list", [a]) => Some(boolean(
            arr_arg(a)?
                .iter()
                .enumerate()
                .all(|(i, (k, _))| *k == ArrayKey::Long(i as i64)),
        )),
        // Only the default flags, SORT_STRING (2), compare the entries' string forms.
        (b"array_unique", [a, rest @ ..])
            if rest.len() <= 1 && rest.iter().all(|f| int_arg_s(f) == Some(2)) =>
        {
            let mut seen: Vec<Vec<u8>> = Vec::new();
            let mut out = Vec::new();
            for (k, v) in arr_arg(a)? {
                let sv = elem(v)?;
                if !seen.contains(&sv) {
                    seen.push(sv);
                    out.push((k.clone(), v.clone()));
                }
            }
            Some(Literal::Array(out.into()))
        }
        // SORT_REGULAR (0) sorts with `zend_compare` and keeps, of each run of equal
        // entries, the first in the array: for integers, or strings none of which is
        // numeric, equality is identity and the order total, so that is the first
        // occurrence of each value whatever `zend_sort` does. Mixed or numeric strings
        // compare in ways whose result depends on the sort's order: left to run time.
        (b"array_unique", [a, flags]) if int_arg_s(flags) == Some(0) => {
            let entries = arr_arg(a)?;
            let plain = entries.iter().all(|(_, v)| matches!(v, Literal::Long(_)))
                || entries.iter().all(|(_, v)| {
                    matches!(v, Literal::String(s)
                        if zend_operators::is_numeric_string(s.as_bytes(), false).is_none())
                });
            if !plain {
                return None;
            }
            let mut out: Vec<(ArrayKey, Literal)> = Vec::new();
            for (k, v) in entries {
                if !out.iter().any(|(_, kept)| kept == v) {
                    out.push((k.clone(), v.clone()));
                }
            }
            Some(Literal::Array(out.into()))
        }
        (b"array_diff", [a, others @ ..]) => {
            let mut exclude: Vec<Vec<u8>> = Vec::new();
            for o in others {
                for (_, v) in arr_arg(o)? {
                    exclude.push(elem(v)?);
                }
            }
            let mut out = Vec::new();
            for (k, v) in arr_arg(a)? {
                if !exclude.contains(&elem(v)?) {
                    out.push((k.clone(), v.clone()));
                }
            }
            Some(Literal::Array(out.into()))
        }
        (b"array_diff_key", [a, others @ ..]) => {
            let mut exclude: Vec<&ArrayKey> = Vec::new();
            for o in others {
                exclude.extend(arr_arg(o)?.iter().map(|(k, _)| k));
            }
            let out: Vec<_> = arr_arg(a)?
                .iter()
                .filter(|(k, _)| !exclude.contains(&k))
                .cloned()
                .collect();
            Some(Literal::Array(out.into()))
        }
        // An entry goes when another array has its key with a value of the same string
        // form.
        (b"array_diff_assoc", [a, others @ ..]) => {
            let others: Vec<&PhpArray> = others.iter().map(arr_arg).collect::<Option<_>>()?;
            let mut out = Vec::new();
            for (k, v) in arr_arg(a)? {
                let mut gone = false;
                for o in &others {
                    if let Some((_, w)) = o.iter().find(|(kk, _)| kk == k) {
                        if elem(w)? == elem(v)? {
                            gone = true;
                            break;
                        }
                    }
                }
                if !gone {
                    out.push((k.clone(), v.clone()));
                }
            }
            Some(Literal::Array(out.into()))
        }
        (b"array_replace", [a, others @ ..]) => {
            // A copy of the first array (its nNextFreeElement too), updated.
            let mut out = arr_arg(a)?.clone();
            for o in others {
                for (k, v) in arr_arg(o)? {
                    out.update(k.clone(), v.clone());
                }
            }
            Some(Literal::Array(out))
        }
        (b"array_change_key_case", [a, rest @ ..]) if rest.len() <= 1 => {
            // CASE_LOWER (0) by default; any other mode is CASE_UPPER. A key the change
            // makes equal to an earlier one overwrites its value in place.
            let upper = match rest {
                [] => false,
                [m] => int_arg_s(m)? != 0,
                _ => return None,
            };
            let mut out = Vec::new();
            for (k, v) in arr_arg(a)? {
                let k = match k {
                    ArrayKey::Str(s) if upper => {
                        ArrayKey::Str(PhpStr(s.as_bytes().to_ascii_uppercase()))
                    }
                    ArrayKey::Str(s) => ArrayKey::Str(PhpStr(s.as_bytes().to_ascii_lowercase())),
                    ArrayKey::Long(_) => k.clone(),
                };
                update(&mut out, k, v.clone());
            }
            Some(Literal::Array(out.into()))
        }
        (b"urldecode", [a]) => Some(s(&urldecode(&str_arg_s(a)?, false))),
        (b"rawurldecode", [a]) => Some(s(&urldecode(&str_arg_s(a)?, true))),
        (b"preg_quote", [a, rest @ ..]) if rest.len() <= 1 => {
            let delimiter = match rest {
                [] | [Literal::Null] => None,
                [d] => str_arg_s(d)?.first().copied(),
                _ => None,
            };
            Some(s(&preg_quote(&str_arg_s(a)?, delimiter)))
        }
        (b"min" | b"max", args) if !args.is_empty() => {
            let list: Vec<Literal> = match args {
                [Literal::Array(a)] => a.iter().map(|(_, v)| v.clone()).collect(),
                [_] => return None,
                many => many.to_vec(),
            };
            let mut best = list.first()?.clone();
            for v in &list[1..] {
                if matches!(v, Literal::Ast(_)) || matches!(best, Literal::Ast(_)) {
                    return None;
                }
                let c = zend_operators::compare(v, &best);
                if (name == b"min" && c < 0) || (name == b"max" && c > 0) {
                    best = v.clone();
                }
            }
            Some(best)
        }
        (b"intdiv", [a, b]) => {
            let (x, y) = (int_arg_s(a)?, int_arg_s(b)?);
            if y == 0 || (y == -1 && x == i64::MIN) {
                return None;
            }
            Some(Literal::Long(x / y))
        }
        (b"pow", [a, b]) => zend_operators::eval_binary_op(ZEND_POW, a, b),
        (b"is_nan" | b"is_infinite" | b"is_finite", [a]) => {
            let d = float_arg(a, strict_types)?;
            Some(boolean(match name {
                b"is_nan" => d.is_nan(),
                b"is_infinite" => d.is_infinite(),
                _ => d.is_finite(),
            }))
        }
        (b"pi", []) => Some(Literal::Double(PhpDouble::new(std::f64::consts::PI))),
        // An extension's @compile-time-eval function (gd's imagetypes()): the process
        // answered the call.
        (_, []) => crate::environment::added_function(name)?.value.clone(),
        _ => None,
    }
}
