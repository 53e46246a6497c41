//! Seeded random differential tests against the `php` binary: double to string conversion
//! (at `precision` 14, and `serialize()`'s shortest form at `serialize_precision` -1)
//! and double to long conversion over random bit patterns and decimals, integer arithmetic
//! around the overflow boundaries, and comparisons of doubles with numeric strings.

mod common;

use common::*;
use zend_ir::opcode::*;
use zend_ir::types::{IS_DOUBLE, IS_LONG};
use zend_ir::{Literal, Opcode};
use zend_operators::{eval_binary_op, eval_cast, gcvt_shortest, get_string};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_double(r: &mut Rng) -> f64 {
    loop {
        let d = match r.below(4) {
            0 => f64::from_bits(r.next()),
            1 => {
                // Few significant digits at any scale: where rounding to 14 digits shows.
                let mantissa = r.below(10_000_000) as f64;
                let exp = r.below(60) as i32 - 30;
                mantissa * 10f64.powi(exp)
            }
            2 => {
                // Integers around 2^53 .. 2^64, where doubles and longs part ways.
                let shift = 50 + r.below(14);
                let base = (1u64 << shift) as f64;
                base + (r.below(5000) as f64 - 2500.0) * if r.below(2) == 0 { 1.0 } else { 2048.0 }
            }
            _ => (r.next() >> 11) as f64 / (1u64 << r.below(53)) as f64,
        };
        let d = if r.below(3) == 0 { -d } else { d };
        if !d.is_nan() {
            return d;
        }
    }
}

fn random_long(r: &mut Rng) -> i64 {
    match r.below(5) {
        0 => r.next() as i64,
        1 => r.below(200) as i64 - 100,
        2 => {
            let p = 1i64.checked_shl(r.below(63) as u32).unwrap_or(1);
            p.wrapping_add(r.below(7) as i64 - 3)
        }
        3 => {
            if r.below(2) == 0 {
                i64::MAX - r.below(1000) as i64
            } else {
                i64::MIN + r.below(1000) as i64
            }
        }
        _ => (3_037_000_499 + r.below(3) as i64 - 1) * if r.below(2) == 0 { 1 } else { -1 },
    }
}

#[test]
fn random_values_agree_with_php() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut sources = Vec::new();
    // Each case: what we say, or None if we refuse.
    let mut ours: Vec<(String, Option<Literal>)> = Vec::new();

    for _ in 0..4000 {
        let d = random_double(&mut r);
        let lit = dbl(d);
        sources.push(format!("return (string)({});", php_expr(&lit)));
        ours.push((
            format!("(string) {d:e}"),
            get_string(&lit).map(Literal::String),
        ));
        sources.push(format!("return (int)({});", php_expr(&lit)));
        ours.push((format!("(int) {d:e}"), eval_cast(u32::from(IS_LONG), &lit)));
        // serialize_precision -1: the shortest digits that read back as the double.
        sources.push(format!("return serialize({});", php_expr(&lit)));
        ours.push((
            format!("serialize {d:e}"),
            Some(s(format!("d:{};", gcvt_shortest(d)).as_bytes())),
        ));
        // The string PHP would print, read back as a number, and compared with the double.
        if let Some(text) = get_string(&lit) {
            let sv = Literal::String(text.clone());
            sources.push(format!("return (float)({});", php_expr(&sv)));
            ours.push((
                format!("(float) {text:?}"),
                eval_cast(u32::from(IS_DOUBLE), &sv),
            ));
            for (op, sym) in [(ZEND_IS_EQUAL, "=="), (ZEND_SPACESHIP, "<=>")] {
                sources.push(format!(
                    "return ({}) {sym} ({});",
                    php_expr(&lit),
                    php_expr(&sv)
                ));
                ours.push((
                    format!("{d:e} {sym} {text:?}"),
                    eval_binary_op(op, &lit, &sv),
                ));
            }
        }
    }

    let long_ops: &[(Opcode, &str)] = &[
        (ZEND_ADD, "+"),
        (ZEND_SUB, "-"),
        (ZEND_MUL, "*"),
        (ZEND_DIV, "/"),
        (ZEND_MOD, "%"),
        (ZEND_POW, "**"),
        (ZEND_SL, "<<"),
        (ZEND_SR, ">>"),
        (ZEND_SPACESHIP, "<=>"),
    ];
    for _ in 0..6000 {
        let (op, sym) = long_ops[r.below(long_ops.len() as u64) as usize];
        let a = long(random_long(&mut r));
        let b = match op {
            ZEND_POW => long(r.below(70) as i64 - 3),
            ZEND_SL | ZEND_SR => long(r.below(70) as i64),
            _ => long(random_long(&mut r)),
        };
        // Mix in doubles on one side now and then.
        let (a, b) = match r.below(4) {
            0 => (dbl(random_double(&mut r)), b),
            1 if op != ZEND_POW => (a, dbl(random_double(&mut r))),
            _ => (a, b),
        };
        sources.push(format!(
            "return ({}) {sym} ({});",
            php_expr(&a),
            php_expr(&b)
        ));
        ours.push((format!("{a:?} {sym} {b:?}"), eval_binary_op(op, &a, &b)));
    }

    let outcomes = run_php_cases("random", &sources);
    let mut failures = Vec::new();
    let mut folded = 0;
    for ((what, mine), php) in ours.iter().zip(&outcomes) {
        if let Some(v) = mine {
            folded += 1;
            if *php != Outcome::Ok(enc(v)) {
                failures.push(format!("{what}: ours {}, PHP {php:?}", enc(v)));
            }
        }
    }
    eprintln!(
        "random: {} cases, {folded} folded and checked, {} disagreements",
        sources.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
