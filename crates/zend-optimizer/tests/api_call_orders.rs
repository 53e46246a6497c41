//! The public analysis API called in random orders on the op_arrays of every fixture
//! recording: no call order panics. Steps PHP always runs in one order (CFG, dominators,
//! loops, DFG, SSA, false dependencies, SCCs, inference, escape analysis) are shuffled,
//! repeated and skipped; each either works or returns an error saying what is missing.
//! When the SSA was built at all, inference must give what the full analysis gives
//! (missing SCCs are computed, not silently skipped).

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use zend_call_graph::ScriptInfo;
use zend_cfg::{BuildFlags, Cfg};
use zend_dfg::Dfg;
use zend_ir::Script;
use zend_optimizer::analysis::{analyze_script, Classes};
use zend_ssa::{Ssa, SsaError};

fn fixtures() -> &'static [Script] {
    static SCRIPTS: OnceLock<Vec<Script>> = OnceLock::new();
    SCRIPTS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/expected");
        let scripts: Vec<Script> = zend_ir::corpus::zop_files(&dir)
            .iter()
            .map(|p| zend_ir::corpus::read(p).unwrap())
            .collect();
        assert!(scripts.len() > 50, "fixture recordings missing");
        scripts
    })
}

#[derive(Clone, Copy, Debug)]
enum Step {
    BuildBlocks,
    Build,
    Dominators,
    Loops,
    Dfg,
    Ssa,
    FalseDeps,
    Sccs,
    Infer,
    Escape,
    Verify,
    Dump,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        Just(Step::BuildBlocks),
        Just(Step::Build),
        Just(Step::Dominators),
        Just(Step::Loops),
        Just(Step::Dfg),
        Just(Step::Ssa),
        Just(Step::FalseDeps),
        Just(Step::Sccs),
        Just(Step::Infer),
        Just(Step::Escape),
        Just(Step::Verify),
        Just(Step::Dump),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_call_order_is_an_answer_or_an_error(
        script_pick in any::<prop::sample::Index>(),
        op_array_pick in any::<prop::sample::Index>(),
        steps in prop::collection::vec(step(), 0..24),
        level in prop::sample::select(vec![0x20u32, 0x60]),
    ) {
        let script = script_pick.get(fixtures());
        let info = ScriptInfo::new(script);
        let index = op_array_pick.index(info.op_arrays.len());
        let op_array = info.op_arrays[index];
        let ctx = zend_inference::Context::new(&info, level);
        let returns = ctx.initial_return_infos();
        let mut cfg: Option<Cfg> = None;
        let mut dfg: Option<Dfg> = None;
        let mut ssa: Option<Ssa> = None;
        let mut types: Option<Vec<u32>> = None;
        for step in steps {
            match step {
                Step::BuildBlocks => {
                    cfg = Cfg::build_blocks(op_array, BuildFlags::NO_ENTRY_PREDECESSORS).ok();
                }
                Step::Build => cfg = Cfg::build(op_array, BuildFlags::NO_ENTRY_PREDECESSORS).ok(),
                Step::Dominators => {
                    if let Some(c) = cfg.as_mut() {
                        c.compute_dominators_tree();
                    }
                }
                Step::Loops => {
                    if let Some(c) = cfg.as_mut() {
                        c.compute_dominators_tree();
                        c.identify_loops();
                    }
                }
                Step::Dfg => dfg = cfg.as_ref().map(|c| Dfg::build(op_array, c, BuildFlags::empty())),
                Step::Ssa => {
                    if let (Some(c), Some(d)) = (&cfg, &dfg) {
                        match Ssa::build(op_array, c, d, &Classes(&info), BuildFlags::empty()) {
                            Ok(s) => ssa = Some(s),
                            Err(SsaError::NoDominators { .. }) => {
                                prop_assert!(c.blocks.iter().any(|b| b.is_reachable() && b.level.is_none()));
                            }
                            Err(e) => prop_assert!(!e.to_string().is_empty()),
                        }
                    }
                }
                Step::FalseDeps => {
                    if let Some(s) = ssa.as_mut() {
                        s.find_false_dependencies(op_array);
                    }
                }
                Step::Sccs => {
                    if let Some(s) = ssa.as_mut() {
                        s.find_sccs(op_array);
                    }
                }
                Step::Infer => {
                    if let (Some(c), Some(s)) = (&cfg, &ssa) {
                        let inf = zend_inference::infer(op_array, Some(index), c, s, &ctx, &returns);
                        types = Some(inf.vars.iter().map(|v| v.type_).collect());
                    }
                }
                Step::Escape => {
                    if let (Some(c), Some(s), Some(t)) = (&cfg, &ssa, &types) {
                        if t.len() == s.vars.len() {
                            zend_escape::escape_analysis(op_array, c, s, t, &info);
                        }
                    }
                }
                Step::Verify => {
                    if let (Some(c), Some(s)) = (&cfg, &ssa) {
                        let _ = zend_ssa::verify(op_array, c, s);
                    }
                }
                Step::Dump => {
                    let mut out = Vec::new();
                    if let Some(c) = &cfg {
                        zend_cfg::dump::dump_cfg(&mut out, op_array, c, zend_cfg::dump::Detail::Dominators, None, None);
                        if let Some(s) = &ssa {
                            zend_ssa::dump::dump_ssa(&mut out, op_array, c, s, None, None);
                        }
                    }
                }
            }
        }
    }
}

/// Inference on an SSA without its SCCs gives what PHP's order of steps gives, on every
/// op_array the DFA pass analyses (the first function of each fixture, for time).
#[test]
fn inference_without_sccs_equals_inference_with_them() {
    let mut checked = 0;
    for script in fixtures() {
        let analysis = analyze_script(script, 0x20);
        let ctx = zend_inference::Context::new(&analysis.info, 0x20);
        let returns = ctx.initial_return_infos();
        for function in analysis.functions() {
            let Ok(full) = function.analysis else {
                continue;
            };
            let dfg = Dfg::build(function.op_array, &full.cfg, BuildFlags::empty());
            let bare = Ssa::build(
                function.op_array,
                &full.cfg,
                &dfg,
                &Classes(&analysis.info),
                BuildFlags::empty(),
            )
            .unwrap();
            let inf = zend_inference::infer(
                function.op_array,
                Some(function.index),
                &full.cfg,
                &bare,
                &ctx,
                &returns,
            );
            assert_eq!(inf.vars, full.inference.vars, "{}", function.name);
            checked += 1;
        }
    }
    assert!(checked > 100);
}

/// The case: an SSA asked of a CFG from `Cfg::build_blocks` (no dominators) is an
/// error naming what is missing, not a panic.
#[test]
fn ssa_of_a_cfg_without_dominators_is_an_error() {
    let mut refused = 0;
    for script in fixtures() {
        let info = ScriptInfo::new(script);
        for op_array in &info.op_arrays {
            let Ok(cfg) = Cfg::build_blocks(op_array, BuildFlags::NO_ENTRY_PREDECESSORS) else {
                continue;
            };
            let dfg = Dfg::build(op_array, &cfg, BuildFlags::empty());
            if let Err(e) = Ssa::build(op_array, &cfg, &dfg, &Classes(&info), BuildFlags::empty()) {
                assert!(matches!(e, SsaError::NoDominators { .. }), "{e}");
                assert!(e.to_string().contains("dominator"));
                refused += 1;
            }
        }
    }
    assert!(refused > 10);
}

/// Found by the property test (steps BuildBlocks, Dfg, Build, Ssa): liveness computed on
/// one CFG of an op_array (`Cfg::build_blocks`, every block taken as reachable) and SSA
/// built on another (`Cfg::build`) is an error when it shows, never a panic; on every
/// fixture op_array.
#[test]
fn ssa_from_the_liveness_of_another_cfg_is_not_a_panic() {
    let mut built = 0;
    for script in fixtures() {
        let info = ScriptInfo::new(script);
        for op_array in &info.op_arrays {
            let (Ok(blocks), Ok(cfg)) = (
                Cfg::build_blocks(op_array, BuildFlags::NO_ENTRY_PREDECESSORS),
                Cfg::build(op_array, BuildFlags::NO_ENTRY_PREDECESSORS),
            ) else {
                continue;
            };
            let dfg = Dfg::build(op_array, &blocks, BuildFlags::empty());
            match Ssa::build(op_array, &cfg, &dfg, &Classes(&info), BuildFlags::empty()) {
                Ok(_) => built += 1,
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    }
    assert!(built > 100);
}
