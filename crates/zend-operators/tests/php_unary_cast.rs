//! Differential tests of the unary operators, casts, string conversion, numeric strings and
//! numeric array keys against the `php` binary.

mod common;

use common::*;
use zend_ir::opcode::*;
use zend_ir::types::{_IS_BOOL, IS_ARRAY, IS_DOUBLE, IS_LONG, IS_NULL, IS_STRING};
use zend_ir::{Literal, Opcode};
use zend_operators::{
    eval_cast, eval_strlen, eval_unary_op, get_string, handle_numeric_str, is_numeric_string,
    is_numeric_string_ex,
};

/// Checks one folded value against PHP's outcome.
fn check(what: String, ours: Option<&Literal>, php: &Outcome, failures: &mut Vec<String>) -> bool {
    match ours {
        Some(v) => {
            let e = enc(v);
            if *php != Outcome::Ok(e.clone()) {
                failures.push(format!("{what}: we fold to {e}, PHP: {php:?}"));
            }
            true
        }
        None => false,
    }
}

const UNARY: &[(Opcode, &str)] = &[
    (ZEND_BW_NOT, "~"),
    (ZEND_BOOL_NOT, "!"),
    (ZEND_BOOL, "(bool)"),
];

#[test]
fn unary_ops_agree_with_php() {
    let values = values();
    let mut sources = Vec::new();
    let mut cases = Vec::new();
    for &(op, sym) in UNARY {
        for v in &values {
            sources.push(format!("return {sym}({});", php_expr(v)));
            cases.push((op, sym, v.clone()));
        }
    }
    let outcomes = run_php_cases("unary", &sources);
    let mut failures = Vec::new();
    let mut folded = 0;
    for ((op, sym, v), php) in cases.iter().zip(&outcomes) {
        let ours = eval_unary_op(*op, v);
        folded += usize::from(check(
            format!("{sym}({})", php_expr(v)),
            ours.as_ref(),
            php,
            &mut failures,
        ));
    }

    // The compiler folds `~` and `!` exactly where zend_unary_op_produces_error allows.
    let mut decisions = 0;
    for &(op, sym) in &UNARY[..2] {
        let exprs: Vec<String> = values
            .iter()
            .map(|v| format!("{sym}({})", php_expr(v)))
            .collect();
        let php = php_folds(&format!("unary_{}", op.0), &exprs);
        for ((v, e), php_folded) in values.iter().zip(&exprs).zip(php) {
            decisions += 1;
            if eval_unary_op(op, v).is_some() != php_folded {
                failures.push(format!("{e}: PHP folds it: {php_folded}, we differ"));
            }
        }
    }
    eprintln!(
        "unary ops: {} cases, {folded} folded and checked, {decisions} fold decisions, {} \
         disagreements",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn casts_and_string_conversion_agree_with_php() {
    let values = values();
    let casts: &[(u8, &str)] = &[
        (_IS_BOOL, "(bool)"),
        (IS_LONG, "(int)"),
        (IS_DOUBLE, "(float)"),
        (IS_STRING, "(string)"),
        (IS_ARRAY, "(array)"),
    ];
    let mut sources = Vec::new();
    for &(_, sym) in casts {
        for v in &values {
            sources.push(format!("return {sym}({});", php_expr(v)));
        }
    }
    let outcomes = run_php_cases("casts", &sources);
    let mut failures = Vec::new();
    let mut folded = 0;
    let mut refused = 0;
    let mut i = 0;
    for &(t, sym) in casts {
        for v in &values {
            let php = &outcomes[i];
            i += 1;
            let what = format!("{sym}({})", php_expr(v));
            let ours = eval_cast(u32::from(t), v);
            if check(what.clone(), ours.as_ref(), php, &mut failures) {
                folded += 1;
            } else {
                refused += 1;
            }
            // zval_get_string converts doubles too (with precision 14), where the cast
            // refuses to fold them.
            if t == IS_STRING {
                let s = get_string(v).map(Literal::String);
                check(format!("get_string {what}"), s.as_ref(), php, &mut failures);
                if s.is_none() && !matches!(v, Literal::Array(_)) {
                    failures.push(format!("get_string {what}: no string"));
                }
            }
        }
    }
    // (unset) casts are gone from PHP 8's syntax; the optimizer still folds IS_NULL.
    assert_eq!(eval_cast(u32::from(IS_NULL), &long(5)), Some(Literal::Null));
    eprintln!(
        "casts: {} cases, {folded} folded and checked, {refused} refused, {} disagreements",
        sources.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn key_strings() -> Vec<&'static [u8]> {
    vec![
        b"123",
        b"0123",
        b"0",
        b"00",
        b"-0",
        b"-1",
        b"-",
        b"",
        b"9223372036854775807",
        b"9223372036854775808",
        b"-9223372036854775808",
        b"-9223372036854775809",
        b"12345678901234567890",
        b"1234567890123456789",
        b" 1",
        b"1 ",
        b"+1",
        b"1.0",
        b"1e3",
        b"0x1",
        b"1\x00",
        b"a1",
    ]
}

#[test]
fn numeric_strings_agree_with_php() {
    let mut strs: Vec<Vec<u8>> = strings()
        .into_iter()
        .filter_map(|v| match v {
            Literal::String(s) => Some(s.0),
            _ => None,
        })
        .collect();
    strs.extend(key_strings().into_iter().map(<[u8]>::to_vec));
    strs.extend(
        [
            &b"1.5abc"[..],
            b"  7 x",
            b"\n\n",
            b".",
            b"-.",
            b"1e-400",
            b"0000000000000000000000000001",
            b"-00009223372036854775808",
            b"9223372036854775807.0",
            b"1e+5",
            b"1.e3",
            b"5e-324",
            b"2.5e-324",
            b"1e99999999999999999999",
        ]
        .iter()
        .map(|b| b.to_vec()),
    );
    // `$s * 1` converts with _is_numeric_string_ex (allow_errors): a value without a
    // diagnostic for a numeric string, "A non-numeric value" for a leading-numeric one, a
    // TypeError otherwise. strlen() gives the length.
    let lit = |b: &[u8]| php_expr(&s(b));
    let mut sources = Vec::new();
    for b in &strs {
        sources.push(format!("$s = {}; return $s * 1;", lit(b)));
        sources.push(format!(
            "$k = {}; return array_key_first([$k => 1]);",
            lit(b)
        ));
        sources.push(format!("return strlen({});", lit(b)));
    }
    let outcomes = run_php_cases("numeric", &sources);
    let mut failures = Vec::new();
    for (b, php) in strs.iter().zip(outcomes.chunks(3)) {
        let shown = lit(b);
        let strict = is_numeric_string(b, false);
        let lax = is_numeric_string_ex(b, true);
        match &php[0] {
            Outcome::Ok(v) => {
                if strict.as_ref().map(enc) != Some(v.clone()) {
                    failures.push(format!(
                        "is_numeric_string({shown}, false) = {strict:?}, PHP {v}"
                    ));
                }
                if lax.as_ref().map(|(v, t)| (enc(v), *t)) != Some((v.clone(), false)) {
                    failures.push(format!(
                        "is_numeric_string_ex({shown}, true) = {lax:?}, PHP {v}"
                    ));
                }
            }
            Outcome::Warned(v) => {
                if strict.is_some() {
                    failures.push(format!(
                        "is_numeric_string({shown}, false) = {strict:?}, PHP warns"
                    ));
                }
                if lax.as_ref().map(|(v, t)| (enc(v), *t)) != Some((v.clone(), true)) {
                    failures.push(format!(
                        "is_numeric_string_ex({shown}, true) = {lax:?}, PHP {v} with a warning"
                    ));
                }
            }
            Outcome::Threw(_) => {
                if strict.is_some() || lax.is_some() {
                    failures.push(format!(
                        "is_numeric_string({shown}): {strict:?} / {lax:?}, PHP throws"
                    ));
                }
            }
        }
        let key = handle_numeric_str(b);
        let ours = match key {
            Some(i) => format!("i{i}"),
            None => enc(&s(b)),
        };
        if php[1] != Outcome::Ok(ours.clone()) {
            failures.push(format!(
                "handle_numeric_str({shown}) = {key:?}, PHP key {:?}",
                php[1]
            ));
        }
        let len = eval_strlen(&s(b)).map(|v| enc(&v));
        if Some(&php[2]) != len.map(Outcome::Ok).as_ref() {
            failures.push(format!("strlen({shown}): PHP {:?}", php[2]));
        }
    }
    assert_eq!(eval_strlen(&long(5)), None);
    eprintln!(
        "numeric strings: {} strings, {} disagreements",
        strs.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
