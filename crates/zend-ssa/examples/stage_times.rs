//! Times each analysis stage on 100k-op synthetic functions (a profiling aid).
use std::time::Instant;
use zend_cfg::synthetic::{generate, Shape};
use zend_cfg::{BuildFlags, Cfg};
use zend_dfg::Dfg;
use zend_ssa::{NoClasses, Ssa};

fn main() {
    let ops: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    for shape in [Shape::IfChain, Shape::LoopNest, Shape::Switch] {
        let op_array = generate(shape, ops, 8);
        let t = Instant::now();
        let cfg = Cfg::build_blocks(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS).unwrap();
        let t_blocks = t.elapsed();
        let mut cfg2 = cfg.clone();
        let t = Instant::now();
        cfg2.compute_dominators_tree();
        let t_dom = t.elapsed();
        let t = Instant::now();
        cfg2.identify_loops();
        let t_loops = t.elapsed();
        let cfg = cfg2;
        let t = Instant::now();
        let dfg = Dfg::build(&op_array, &cfg, BuildFlags::empty());
        let t_dfg = t.elapsed();
        let t = Instant::now();
        let mut ssa = Ssa::build(&op_array, &cfg, &dfg, &NoClasses, BuildFlags::empty()).unwrap();
        let t_ssa = t.elapsed();
        let t = Instant::now();
        ssa.find_false_dependencies(&op_array);
        ssa.find_sccs(&op_array);
        let t_scc = t.elapsed();
        let t = Instant::now();
        zend_ssa::verify(&op_array, &cfg, &ssa).unwrap();
        let t_verify = t.elapsed();
        println!(
            "{shape:?} {} ops {} blocks: blocks {t_blocks:?} dom {t_dom:?} loops {t_loops:?} dfg {t_dfg:?} ssa {t_ssa:?} scc {t_scc:?} verify {t_verify:?}",
            op_array.opcodes.len(),
            cfg.blocks_count()
        );
    }
}
