//! The analysis half of OPcache's DFA pass (`zend_dfa_analyze_op_array` in dfa_pass.c) and
//! its dumps: CFG (`0x800000`), dominators (`0x1000000`), liveness (`0x2000000`), phi
//! placement (`0x4000000`) and SSA (`0x8000000`), for every op_array of a script in the
//! order OPcache visits them.

use crate::func_info::ScriptInfo;
use zend_cfg::dump::{dump_cfg, dump_dominators, Detail};
use zend_ir::dump::debug_level;
use zend_ir::Script;

/// `ZEND_OPTIMIZER_PASS_*` bits that matter here.
const PASS_1_TO_5: u32 = 0x1f;
const PASS_6_DFA: u32 = 1 << 5;
const PASS_7_CALL_GRAPH: u32 = 1 << 6;
const PASS_10_NOP_REMOVAL: u32 = 1 << 9;

/// The debug bits of the analysis dumps.
pub const DFA_DUMPS: u32 = debug_level::DFA_CFG
    | debug_level::DFA_DOMINATORS
    | debug_level::DFA_LIVENESS
    | debug_level::DFA_PHI
    | debug_level::DFA_SSA
    | debug_level::DFA_SSA_VARS;

/// Whether the DFA pass sees every op_array as PHP compiled it at this optimization level:
/// it runs (PASS_6), no pass before it does (PASS_1..5), and with the call graph (PASS_7),
/// where every op_array goes through the early passes before any is analysed, NOP removal
/// (PASS_10) is off too.
pub fn sees_compiled_op_arrays(optimization_level: u32) -> bool {
    optimization_level & PASS_6_DFA != 0
        && optimization_level & PASS_1_TO_5 == 0
        && !(optimization_level & PASS_7_CALL_GRAPH != 0
            && optimization_level & PASS_10_NOP_REMOVAL != 0)
}

pub use zend_optimizer::analysis::{dfa_cfg, dfa_ssa, Refused};

/// Our dump of the DFA analysis stages in `debug_bits` for the whole script, at an
/// optimization level where [`sees_compiled_op_arrays`] holds.
pub fn dump_script(script: &Script, debug_bits: u32, optimization_level: u32) -> Vec<u8> {
    let info = ScriptInfo::new(script);
    let with_func_info = optimization_level & PASS_7_CALL_GRAPH != 0;
    let ctx = zend_inference::Context::new(&info, optimization_level);
    let mut returns = ctx.initial_return_infos();
    let mut out = Vec::new();
    for (index, op_array) in info.op_arrays.iter().enumerate() {
        if op_array.type_ == zend_ir::ZEND_EVAL_CODE {
            continue;
        }
        let header = with_func_info.then(|| info.header(index));
        let Ok(cfg) = dfa_cfg(op_array) else { continue };
        if debug_bits & debug_level::DFA_CFG != 0 {
            dump_cfg(
                &mut out,
                op_array,
                &cfg,
                Detail::Blocks,
                header.as_ref(),
                Some("dfa cfg"),
            );
        }
        if debug_bits & debug_level::DFA_DOMINATORS != 0 {
            dump_dominators(&mut out, op_array, &cfg);
        }
        if debug_bits
            & (debug_level::DFA_LIVENESS
                | debug_level::DFA_PHI
                | debug_level::DFA_SSA
                | debug_level::DFA_SSA_VARS)
            == 0
        {
            continue;
        }
        let (dfg, ssa) = dfa_ssa(op_array, &cfg, &info);
        let Ok(ssa) = ssa else { continue };
        if debug_bits & debug_level::DFA_LIVENESS != 0 {
            zend_dfg::dump_dfg(&mut out, op_array, &cfg, &dfg);
        }
        if debug_bits & debug_level::DFA_PHI != 0 {
            zend_ssa::dump::dump_phi_placement(&mut out, op_array, &cfg, &ssa);
        }
        if debug_bits & debug_level::DFA_SSA != 0 {
            zend_ssa::dump::dump_ssa(
                &mut out,
                op_array,
                &cfg,
                &ssa,
                header.as_ref(),
                Some("dfa ssa"),
            );
        }
        if cfg!(debug_assertions) {
            if let Err(e) = zend_ssa::verify(op_array, &cfg, &ssa) {
                panic!("{e}");
            }
        }
        if debug_bits & debug_level::DFA_SSA_VARS != 0 || with_func_info {
            let mut ssa = ssa;
            ssa.find_false_dependencies(op_array);
            ssa.find_sccs(op_array);
            let inf = zend_inference::infer(op_array, Some(index), &cfg, &ssa, &ctx, &returns);
            if inf.failed {
                // zend_dfa_analyze_op_array fails: no dump, no func_info for callers.
                returns[index] = None;
                continue;
            }
            if let Some(ri) = &inf.return_info {
                returns[index] = Some(ri.clone());
            }
            let types: Vec<u32> = inf.vars.iter().map(|v| v.type_).collect();
            let esc = zend_escape::escape_analysis(op_array, &cfg, &ssa, &types, &info);
            for (v, e) in ssa.vars.iter_mut().zip(esc) {
                v.escape_state = e;
            }
            if debug_bits & debug_level::DFA_SSA_VARS != 0 {
                zend_inference::dump::dump_ssa_variables(&mut out, op_array, &ssa, &inf);
            }
        }
    }
    out
}
