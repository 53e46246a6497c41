//! Conversions of one value: `zend_is_true`, `zval_get_long`, `zval_get_double`,
//! `zval_get_string`, `zend_dval_to_lval` and the `precision`-based double to string
//! conversion (`zend_double_to_str`, `zend_gcvt`).

use zend_ir::{Literal, PhpDouble, PhpStr};

use crate::numeric::{is_numeric_ex, is_numeric_ws, strtod_prefix, Num};

/// The `precision` ini setting PHP converts doubles to strings with (its default; OPcache
/// folds with the setting of the compiling process, which we take to be the default).
pub const PRECISION: usize = 14;

/// `2^63` as a double: the first double above every long.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// Mirrors `ZEND_DOUBLE_FITS_LONG`.
pub(crate) fn double_fits_long(d: f64) -> bool {
    (-TWO_POW_63..TWO_POW_63).contains(&d)
}

/// Mirrors `zend_dval_to_lval` of 64-bit PHP 8.2: truncation in range, modular arithmetic
/// (mod 2^64) outside it, 0 for infinities and NaN.
pub fn dval_to_lval(d: f64) -> i64 {
    if !d.is_finite() {
        return 0;
    }
    if double_fits_long(d) {
        return d as i64;
    }
    let two_pow_64 = 2.0 * TWO_POW_63;
    let mut dmod = d % two_pow_64;
    if dmod < 0.0 {
        // A multiple of 2^11 at least (|d| >= 2^63), so the sum is exact.
        dmod += two_pow_64;
    }
    if dmod > TWO_POW_63 {
        dmod -= two_pow_64;
    }
    if dmod >= TWO_POW_63 {
        // C's conversion of exactly 2^63 gives the x86 "integer indefinite", ZEND_LONG_MIN.
        i64::MIN
    } else {
        dmod as i64
    }
}

/// Mirrors `zend_dval_to_lval_cap`: saturating, 0 for infinities and NaN (numeric strings).
pub fn dval_to_lval_cap(d: f64) -> i64 {
    if !d.is_finite() {
        0
    } else if !double_fits_long(d) {
        if d > 0.0 {
            i64::MAX
        } else {
            i64::MIN
        }
    } else {
        d as i64
    }
}

/// Mirrors `zend_is_long_compatible(d, zend_dval_to_lval(d))`: the double survives the
/// conversion to a long unchanged.
pub(crate) fn is_long_compatible(d: f64) -> bool {
    dval_to_lval(d) as f64 == d
}

/// Mirrors `zend_is_true` (`i_zend_is_true`). An AST is not a value; it reads as false.
pub fn is_true(v: &Literal) -> bool {
    match v {
        Literal::Null | Literal::False | Literal::Ast(_) => false,
        Literal::True => true,
        Literal::Long(l) => *l != 0,
        // NaN is true: C tests `d ? 1 : 0`.
        Literal::Double(d) => d.get() != 0.0,
        Literal::String(s) => !(s.0.is_empty() || s.0 == b"0"),
        Literal::Array(a) => !a.is_empty(),
    }
}

/// Mirrors `zval_get_long` (silent, as at compile time): numeric strings saturate, doubles
/// wrap, arrays give 0 or 1, non-numeric strings 0. An AST gives 0.
pub fn get_long(v: &Literal) -> i64 {
    match v {
        Literal::Null | Literal::False | Literal::Ast(_) => 0,
        Literal::True => 1,
        Literal::Long(l) => *l,
        Literal::Double(d) => dval_to_lval(d.get()),
        Literal::String(s) => match is_numeric_ex(&s.0, true) {
            None => 0,
            Some(n) => match n.value {
                Num::Long(l) => l,
                Num::Double(d) => dval_to_lval_cap(d),
            },
        },
        Literal::Array(a) => i64::from(!a.is_empty()),
    }
}

/// Mirrors `zval_get_double`: strings go through `zend_strtod` after leading whitespace, so
/// "1.5abc" is 1.5 and "abc" is 0. An AST gives 0.
pub fn get_double(v: &Literal) -> f64 {
    match v {
        Literal::Null | Literal::False | Literal::Ast(_) => 0.0,
        Literal::True => 1.0,
        Literal::Long(l) => *l as f64,
        Literal::Double(d) => d.get(),
        Literal::String(s) => {
            let mut i = 0;
            while i < s.0.len() && is_numeric_ws(s.0[i]) {
                i += 1;
            }
            strtod_prefix(&s.0, i).0
        }
        Literal::Array(a) => {
            if a.is_empty() {
                0.0
            } else {
                1.0
            }
        }
    }
}

/// Mirrors `zval_get_string` where it cannot warn: `None` for arrays ("Array to string
/// conversion") and ASTs. Doubles use `precision` ([`double_to_str`]).
pub fn get_string(v: &Literal) -> Option<PhpStr> {
    Some(match v {
        Literal::Null | Literal::False => PhpStr::default(),
        Literal::True => PhpStr::from("1"),
        Literal::Long(l) => PhpStr(l.to_string().into_bytes()),
        Literal::Double(d) => PhpStr(double_to_str(d.get()).into_bytes()),
        Literal::String(s) => s.clone(),
        Literal::Array(_) | Literal::Ast(_) => return None,
    })
}

/// Mirrors `zend_double_to_str` at the default `precision` (14): `zend_gcvt(d, 14, '.', 'E')`.
pub fn double_to_str(d: f64) -> String {
    gcvt(d, PRECISION)
}

/// Mirrors `zend_gcvt` (`php_gcvt`): `precision` significant digits, correctly rounded (ties
/// to even, as zend_dtoa mode 2), trailing zeros dropped; exponential form ("1.0E+25",
/// "1.0E-5") when the exponent is below -4 or at least `precision`.
pub fn gcvt(d: f64, precision: usize) -> String {
    let precision = precision.max(1);
    if !d.is_finite() {
        return non_finite(d);
    }
    // Rust's `{:.Ne}` gives the exact decimal expansion rounded half to even.
    gcvt_format(&format!("{:.*e}", precision - 1, d), precision)
}

/// Mirrors `zend_gcvt` with a negative precision, as `serialize_precision=-1` (PHP's
/// default) gives it to `serialize()` and `var_export()`: zend_dtoa mode 0, the shortest
/// digits that read back as `d`, in exponential form when the exponent is below -4 or
/// above 17 digits.
pub fn gcvt_shortest(d: f64) -> String {
    if !d.is_finite() {
        return non_finite(d);
    }
    // Rust's `{:e}` finds how many digits are needed to read back as `d`; of the strings
    // of that length, zend_dtoa takes the nearest, and on an exact tie the even one, which
    // is `d` correctly rounded to that many digits (`{:.Ne}`: exact, ties to even), where
    // Rust's shortest form rounds ties up (713781394062739.25 -> ...39.2, not ...39.3).
    let shortest = format!("{d:e}");
    let digits = shortest
        .split('e')
        .next()
        .map_or(1, |m| m.bytes().filter(u8::is_ascii_digit).count());
    gcvt_format(&format!("{:.*e}", digits.max(1) - 1, d), 17)
}

fn non_finite(d: f64) -> String {
    if d.is_nan() {
        "NAN"
    } else if d < 0.0 {
        "-INF"
    } else {
        "INF"
    }
    .to_owned()
}

/// php_gcvt's layout of the digits of `sci` (Rust's `D.DDDe±X`), `precision` deciding
/// between the exponential and the positional form.
fn gcvt_format(sci: &str, precision: usize) -> String {
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    // zend_dtoa's decpt: the value is 0.DIGITS * 10^decpt.
    let decpt = if digits == b"0" { 1 } else { exp + 1 };

    let mut out = String::new();
    if negative {
        out.push('-');
    }
    let push_digits = |out: &mut String, ds: &[u8]| out.extend(ds.iter().map(|&b| b as char));
    if decpt < -3 || decpt > precision as i32 {
        let e = decpt - 1;
        out.push(digits[0] as char);
        out.push('.');
        if digits.len() == 1 {
            out.push('0');
        } else {
            push_digits(&mut out, &digits[1..]);
        }
        out.push('E');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&e.unsigned_abs().to_string());
    } else if decpt < 0 {
        out.push_str("0.");
        for _ in decpt..0 {
            out.push('0');
        }
        push_digits(&mut out, &digits);
    } else {
        let decpt = decpt as usize;
        for i in 0..decpt {
            out.push(digits.get(i).map_or('0', |&b| b as char));
        }
        if digits.len() > decpt {
            if decpt == 0 {
                out.push('0');
            }
            out.push('.');
            push_digits(&mut out, &digits[decpt..]);
        }
    }
    out
}

/// Mirrors `zendi_try_convert_scalar_to_number` for the operands the optimizer lets through
/// (`zend_binary_op_produces_error` said no error): null and false are 0, true is 1, numeric
/// strings their value. `None` for anything else.
pub(crate) fn to_number(v: &Literal) -> Option<Num> {
    Some(match v {
        Literal::Null | Literal::False => Num::Long(0),
        Literal::True => Num::Long(1),
        Literal::Long(l) => Num::Long(*l),
        Literal::Double(d) => Num::Double(d.get()),
        Literal::String(s) => {
            let n = is_numeric_ex(&s.0, false)?;
            n.value
        }
        Literal::Array(_) | Literal::Ast(_) => return None,
    })
}

impl From<Num> for Literal {
    fn from(n: Num) -> Literal {
        match n {
            Num::Long(l) => Literal::Long(l),
            Num::Double(d) => Literal::Double(PhpDouble::new(d)),
        }
    }
}
