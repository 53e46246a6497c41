//! The liveness fixpoint against the definition: on random control flow (forward and
//! backward jumps, unreachable code, self loops), the in and out sets `Dfg::build` computes
//! are the least solution of out = ∪ in(successors), in = use ∪ (out − def) over the
//! reachable blocks, as PHP's round-robin evaluation finds it; unreachable blocks keep empty
//! sets.

use zend_cfg::synthetic::{unused, OpArrayBuilder};
use zend_cfg::{BlockId, BuildFlags, Cfg};
use zend_dfg::Dfg;
use zend_ir::opcode::*;

/// A deterministic generator (splitmix64), so a failure names a seed that reproduces it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
}

/// A function of `ops` ops over `cvs` CVs and two TMPs, with jumps to random targets
/// patched once every op exists.
fn random_function(seed: u64, ops: u32, cvs: u32) -> zend_ir::OpArray {
    let mut r = Rng(seed);
    let mut b = OpArrayBuilder::new("random", cvs, 2);
    let mut jumps = Vec::new();
    while b.next() + 1 < ops {
        let (x, y) = (r.below(cvs), r.below(cvs));
        match r.below(7) {
            0 | 1 => {
                b.assign(x, b.cv(y));
            }
            2 => {
                let t = b.tmp(r.below(2));
                b.op(ZEND_ADD, b.cv(x), b.cv(y), t);
            }
            3 => {
                b.op(ZEND_PRE_INC, b.cv(x), unused(), unused());
            }
            4 => jumps.push(b.jmpz(b.cv(x), 0)),
            5 => jumps.push(b.jmpnz(b.tmp(r.below(2)), 0)),
            _ => jumps.push(b.jmp(0)),
        }
    }
    b.ret(b.cv(r.below(cvs)));
    let last = b.next();
    for j in jumps {
        let target = r.below(last);
        b.patch(j, target);
    }
    b.finish()
}

/// The least fixpoint by round-robin evaluation of every reachable block until nothing
/// changes: (in, out) rows per block.
fn reference(cfg: &Cfg, dfg: &Dfg) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
    let n = cfg.blocks_count();
    let words = dfg.use_().row(0).len();
    let mut in_ = vec![vec![0u64; words]; n];
    let mut out = vec![vec![0u64; words]; n];
    let mut changed = true;
    while changed {
        changed = false;
        for j in (0..n).rev() {
            if !cfg.blocks[j].is_reachable() {
                continue;
            }
            let mut o = vec![0u64; words];
            for &s in cfg.successors(BlockId::new(j as u32)) {
                for (w, x) in o.iter_mut().zip(&in_[s.index()]) {
                    *w |= x;
                }
            }
            let i: Vec<u64> = (0..words)
                .map(|w| dfg.use_().row(j)[w] | (o[w] & !dfg.def().row(j)[w]))
                .collect();
            if i != in_[j] || o != out[j] {
                changed = true;
                in_[j] = i;
                out[j] = o;
            }
        }
    }
    (in_, out)
}

#[test]
fn liveness_is_the_least_fixpoint_on_random_control_flow() {
    let mut blocks_seen = 0;
    for seed in 0..400u64 {
        let ops = 8 + (seed % 60) as u32;
        // Past 64 CVs the rows take two words.
        let cvs = if seed % 5 == 0 {
            70
        } else {
            2 + (seed % 7) as u32
        };
        let op_array = random_function(seed, ops, cvs);
        let cfg = Cfg::build(&op_array, BuildFlags::empty()).expect("a valid CFG");
        let dfg = Dfg::build(&op_array, &cfg, BuildFlags::empty());
        let (in_, out) = reference(&cfg, &dfg);
        for j in 0..cfg.blocks_count() {
            assert_eq!(
                dfg.in_().row(j),
                in_[j].as_slice(),
                "seed {seed}: in of block {j}"
            );
            assert_eq!(
                dfg.out().row(j),
                out[j].as_slice(),
                "seed {seed}: out of block {j}"
            );
        }
        blocks_seen += cfg.blocks_count();
    }
    assert!(
        blocks_seen > 2000,
        "the functions have too few blocks: {blocks_seen}"
    );
}
