//! Differential tests of the binary operators against the `php` binary.
//!
//! Every pair of the value matrix goes through every operator of `get_binary_op`:
//! - in `php -n` through `eval` (PHP's compiler folds what it can with the very functions
//!   OPcache uses; the rest runs in the VM), recording value, warnings and exceptions;
//! - through PHP's compiler with OPcache's dump, recording whether PHP folds it.
//!
//! Whatever we fold must be PHP's exact value, obtained without any diagnostic, and we must
//! fold exactly the cases PHP folds.

mod common;

use common::*;
use zend_ir::opcode::*;
use zend_ir::{Literal, Opcode};
use zend_operators::{compare, eval_binary_op, is_identical};

/// The operators with their PHP spelling. FAST_CONCAT has no syntax: it is checked against
/// the results of `.`.
const OPS: &[(Opcode, &str)] = &[
    (ZEND_ADD, "+"),
    (ZEND_SUB, "-"),
    (ZEND_MUL, "*"),
    (ZEND_DIV, "/"),
    (ZEND_MOD, "%"),
    (ZEND_SL, "<<"),
    (ZEND_SR, ">>"),
    (ZEND_CONCAT, "."),
    (ZEND_BW_OR, "|"),
    (ZEND_BW_AND, "&"),
    (ZEND_BW_XOR, "^"),
    (ZEND_POW, "**"),
    (ZEND_BOOL_XOR, "xor"),
    (ZEND_IS_IDENTICAL, "==="),
    (ZEND_IS_NOT_IDENTICAL, "!=="),
    (ZEND_IS_EQUAL, "=="),
    (ZEND_IS_NOT_EQUAL, "!="),
    (ZEND_IS_SMALLER, "<"),
    (ZEND_IS_SMALLER_OR_EQUAL, "<="),
    (ZEND_SPACESHIP, "<=>"),
];

fn cases() -> Vec<(Opcode, &'static str, Literal, Literal)> {
    let values = values();
    let mut out = Vec::new();
    for &(op, sym) in OPS {
        for a in &values {
            for b in &values {
                out.push((op, sym, a.clone(), b.clone()));
            }
        }
    }
    out
}

fn expr(sym: &str, a: &Literal, b: &Literal) -> String {
    format!("({}) {sym} ({})", php_expr(a), php_expr(b))
}

#[test]
fn binary_ops_agree_with_php_values() {
    let cases = cases();
    let sources: Vec<String> = cases
        .iter()
        .map(|(_, sym, a, b)| format!("return {};", expr(sym, a, b)))
        .collect();
    let outcomes = run_php_cases("binary", &sources);

    let mut folded = 0usize;
    let mut refused = 0usize;
    let mut refused_clean = 0usize;
    let mut failures = Vec::new();
    for ((op, sym, a, b), outcome) in cases.iter().zip(&outcomes) {
        let mut ops = vec![*op];
        if *op == ZEND_CONCAT {
            ops.push(ZEND_FAST_CONCAT);
        }
        for op in ops {
            match eval_binary_op(op, a, b) {
                Some(v) => {
                    folded += 1;
                    let ours = enc(&v);
                    if *outcome != Outcome::Ok(ours.clone()) {
                        failures.push(format!(
                            "{} [{op:?}]: we fold to {ours}, PHP: {outcome:?}",
                            expr(sym, a, b)
                        ));
                    }
                }
                None => {
                    refused += 1;
                    if matches!(outcome, Outcome::Ok(_)) {
                        refused_clean += 1;
                        if std::env::var_os("ZOPS_SHOW").is_some() {
                            eprintln!(
                                "refused but clean: {} [{op:?}] -> {outcome:?}",
                                expr(sym, a, b)
                            );
                        }
                    }
                }
            }
        }
        // compare() is SPACESHIP and is_identical() is IS_IDENTICAL, for every value pair.
        if *op == ZEND_SPACESHIP {
            let ours = format!("i{}", compare(a, b));
            if *outcome != Outcome::Ok(ours.clone()) {
                failures.push(format!(
                    "compare({}): ours {ours}, PHP {outcome:?}",
                    expr(sym, a, b)
                ));
            }
        }
        if *op == ZEND_IS_IDENTICAL {
            let ours = if is_identical(a, b) { "T" } else { "F" };
            if *outcome != Outcome::Ok(ours.to_owned()) {
                failures.push(format!(
                    "is_identical({}): ours {ours}, PHP {outcome:?}",
                    expr(sym, a, b)
                ));
            }
        }
    }
    eprintln!(
        "binary ops: {} cases, {folded} folded (all checked against PHP), {refused} refused \
         ({refused_clean} of them ran without diagnostic in PHP), {} disagreements",
        cases.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn binary_ops_fold_exactly_where_php_folds() {
    let cases = cases();
    let mut failures = Vec::new();
    let mut total = 0usize;
    let mut folds = 0usize;
    for &(op, sym) in OPS {
        let mine: Vec<&(Opcode, &str, Literal, Literal)> =
            cases.iter().filter(|c| c.0 == op).collect();
        let exprs: Vec<String> = mine.iter().map(|(_, _, a, b)| expr(sym, a, b)).collect();
        let php = php_folds(&format!("fold_{}", op.0), &exprs);
        for ((_, _, a, b), php_folded) in mine.iter().zip(php) {
            total += 1;
            let ours = eval_binary_op(op, a, b).is_some();
            folds += usize::from(php_folded);
            if ours != php_folded {
                failures.push(format!(
                    "{}: PHP {} it, we {}",
                    expr(sym, a, b),
                    if php_folded { "folds" } else { "leaves" },
                    if ours { "fold" } else { "refuse" }
                ));
            }
        }
    }
    eprintln!(
        "fold decisions: {total} cases, PHP folds {folds}, {} disagreements",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
