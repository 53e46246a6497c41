//! Synthetic op_arrays for tests and benchmarks: an [`OpArrayBuilder`] for hand-written
//! control flow, and generators of functions of any size with the shapes compilers find
//! hard (long if-chains, deep loop nests, big switches).

use zend_ir::opcode::*;
use zend_ir::{
    Literal, Op, OpArray, OpNum, Operand, PhpStr, SmartBranch, VarNum, ZEND_USER_FUNCTION,
};

/// Builds an op_array op by op. CVs are named `$v0`, `$v1`...; TMPs are numbered from 0
/// (their slot is `cvs + n`).
pub struct OpArrayBuilder {
    op_array: OpArray,
}

impl OpArrayBuilder {
    pub fn new(name: &str, cvs: u32, tmps: u32) -> Self {
        OpArrayBuilder {
            op_array: OpArray {
                type_: ZEND_USER_FUNCTION,
                fn_flags: 0,
                function_name: Some(PhpStr::from(name)),
                scope: None,
                num_args: 0,
                required_num_args: 0,
                arg_info: Vec::new(),
                return_info: None,
                attributes: Vec::new(),
                T: tmps,
                cache_size: 0,
                vars: (0..cvs)
                    .map(|i| PhpStr::from(format!("v{i}").as_str()))
                    .collect(),
                opcodes: Vec::new(),
                literals: Vec::new(),
                literal_extra: Vec::new(),
                static_variables: None,
                live_range: Vec::new(),
                try_catch_array: Vec::new(),
                filename: PhpStr::from("synthetic.php"),
                line_start: 1,
                line_end: 1,
                doc_comment: None,
                dynamic_func_defs: Vec::new(),
            },
        }
    }

    /// The number of the next op.
    pub fn next(&self) -> u32 {
        self.op_array.opcodes.len() as u32
    }

    pub fn cv(&self, n: u32) -> Operand {
        Operand::Cv(VarNum::new(n))
    }

    pub fn tmp(&self, n: u32) -> Operand {
        Operand::TmpVar(VarNum::new(self.op_array.last_var() + n))
    }

    pub fn literal(&mut self, value: Literal) -> Operand {
        self.op_array.literals.push(value);
        Operand::Const(zend_ir::LiteralId::new(
            self.op_array.literals.len() as u32 - 1,
        ))
    }

    pub fn long(&mut self, value: i64) -> Operand {
        self.literal(Literal::Long(value))
    }

    /// Appends an op; returns its number.
    pub fn op(&mut self, opcode: Opcode, op1: Operand, op2: Operand, result: Operand) -> u32 {
        self.op_ext(opcode, op1, op2, result, 0)
    }

    pub fn op_ext(
        &mut self,
        opcode: Opcode,
        op1: Operand,
        op2: Operand,
        result: Operand,
        extended_value: u32,
    ) -> u32 {
        self.op_array.opcodes.push(Op {
            opcode,
            op1,
            op2,
            result,
            extended_value,
            lineno: 1,
            smart_branch: SmartBranch::None,
        });
        self.next() - 1
    }

    /// Points the jump of op `at` (op1 for JMP, op2 for conditional jumps) at `target`.
    pub fn patch(&mut self, at: u32, target: u32) {
        let op = &mut self.op_array.opcodes[at as usize];
        let addr = Operand::JmpAddr(OpNum::new(target));
        if op.opcode == ZEND_JMP || op.opcode == ZEND_FAST_CALL {
            op.op1 = addr;
        } else {
            op.op2 = addr;
        }
    }

    pub fn jmp(&mut self, target: u32) -> u32 {
        self.op(
            ZEND_JMP,
            Operand::JmpAddr(OpNum::new(target)),
            unused(),
            unused(),
        )
    }

    pub fn jmpz(&mut self, cond: Operand, target: u32) -> u32 {
        self.op(
            ZEND_JMPZ,
            cond,
            Operand::JmpAddr(OpNum::new(target)),
            unused(),
        )
    }

    pub fn jmpnz(&mut self, cond: Operand, target: u32) -> u32 {
        self.op(
            ZEND_JMPNZ,
            cond,
            Operand::JmpAddr(OpNum::new(target)),
            unused(),
        )
    }

    pub fn assign(&mut self, cv: u32, value: Operand) -> u32 {
        self.op(ZEND_ASSIGN, Operand::Cv(VarNum::new(cv)), value, unused())
    }

    pub fn ret(&mut self, value: Operand) -> u32 {
        self.op(ZEND_RETURN, value, unused(), unused())
    }

    pub fn finish(self) -> OpArray {
        self.op_array
    }
}

/// An unused operand.
pub fn unused() -> Operand {
    Operand::Unused(u32::MAX)
}

/// The shapes of [`generate`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `if ($vK < N) { $vJ = $vK + 1; } else { $vJ--; }` repeated: a long chain of diamonds.
    IfChain,
    /// `for` loops nested inside each other as deep as the size allows, each with a body.
    LoopNest,
    /// One `switch` with as many cases as the size allows.
    Switch,
}

/// A function of about `ops` ops with the given shape, over `cvs` CVs (at least 2).
pub fn generate(shape: Shape, ops: usize, cvs: u32) -> OpArray {
    let cvs = cvs.max(2);
    let mut b = OpArrayBuilder::new("synthetic", cvs, 4);
    for i in 0..cvs {
        b.op(ZEND_RECV, unused(), unused(), Operand::Cv(VarNum::new(i)));
    }
    match shape {
        Shape::IfChain => {
            let mut k = 0u32;
            while (b.next() as usize) + 8 < ops {
                let (x, y) = (k % cvs, (k + 1) % cvs);
                let limit = b.long(i64::from(k));
                let t0 = b.tmp(0);
                b.op(ZEND_IS_SMALLER, b.cv(x), limit, t0);
                let jz = b.jmpz(t0, 0);
                let one = b.long(1);
                let t1 = b.tmp(1);
                b.op(ZEND_ADD, b.cv(x), one, t1);
                b.assign(y, t1);
                let j = b.jmp(0);
                let else_ = b.next();
                b.op(ZEND_PRE_DEC, b.cv(y), unused(), unused());
                let join = b.next();
                b.patch(jz, else_);
                b.patch(j, join);
                k += 1;
            }
        }
        Shape::LoopNest => {
            // Each level: init; jmp cond; body...; inc; cond: cmp; jmpnz body.
            let levels = (ops.saturating_sub(cvs as usize + 2) / 5).max(1);
            let mut pending = Vec::with_capacity(levels);
            for level in 0..levels {
                let v = level as u32 % cvs;
                let zero = b.long(0);
                b.assign(v, zero);
                let j = b.jmp(0);
                let body = b.next();
                pending.push((v, j, body));
            }
            while let Some((v, j, body)) = pending.pop() {
                b.op(ZEND_PRE_INC, b.cv(v), unused(), unused());
                let cond = b.next();
                b.patch(j, cond);
                let limit = b.long(10);
                let t0 = b.tmp(0);
                b.op(ZEND_IS_SMALLER, b.cv(v), limit, t0);
                b.jmpnz(t0, body);
            }
        }
        Shape::Switch => {
            let cases = (ops.saturating_sub(cvs as usize + 4) / 2).max(1);
            let table_at = b.next();
            b.op_ext(ZEND_SWITCH_LONG, b.cv(0), unused(), unused(), 0);
            let mut table = Vec::with_capacity(cases);
            let mut exits = Vec::with_capacity(cases);
            for case in 0..cases {
                let start = b.next();
                table.push((
                    zend_ir::ArrayKey::Long(case as i64),
                    Literal::Long(i64::from(start)),
                ));
                let value = b.long(case as i64);
                b.assign(1, value);
                exits.push(b.jmp(0));
            }
            let default = b.next();
            let end = b.next();
            for e in exits {
                b.patch(e, end);
            }
            let table = b.literal(Literal::Array(table.into()));
            let mut op_array_ops = std::mem::take(&mut b.op_array.opcodes);
            op_array_ops[table_at as usize].op2 = table;
            op_array_ops[table_at as usize].extended_value = default;
            b.op_array.opcodes = op_array_ops;
        }
    }
    b.ret(Operand::Cv(VarNum::new(1)));
    b.finish()
}

/// The exponent `k` of `time ~ ops^k` fitted by least squares on log-log scale, from
/// `(ops, seconds)` measurements of the functions [`generate`] builds: what the growth
/// benches report. `None` with fewer than two distinct sizes.
pub fn growth_exponent(points: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .map(|&(ops, secs)| (ops.ln(), secs.max(1e-12).ln()))
        .collect();
    let n = logs.len() as f64;
    let mx = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let my = logs.iter().map(|p| p.1).sum::<f64>() / n;
    let (num, den) = logs.iter().fold((0.0, 0.0), |(a, b), &(x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    (den > 0.0).then(|| num / den)
}

#[cfg(test)]
mod growth_tests {
    #[test]
    fn fits_power_laws() {
        let linear = [(10.0, 1.0), (100.0, 10.0), (1000.0, 100.0)];
        assert!((super::growth_exponent(&linear).unwrap() - 1.0).abs() < 1e-9);
        let quadratic = [(10.0, 1.0), (100.0, 100.0)];
        assert!((super::growth_exponent(&quadratic).unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(super::growth_exponent(&[(10.0, 1.0)]), None);
    }
}
