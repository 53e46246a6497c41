//! The analysis half of OPcache's DFA pass (`zend_dfa_analyze_op_array` in dfa_pass.c) and
//! its dumps: CFG (`0x800000`), dominators (`0x1000000`), liveness (`0x2000000`), phi
//! placement (`0x4000000`) and SSA (`0x8000000`), for every op_array of a script in the
//! order OPcache visits them.

use crate::func_info::ScriptInfo;
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

use zend_optimizer::analysis::{analyze_op_array_dumped, AnalysisDumps};
pub use zend_optimizer::analysis::{dfa_cfg, dfa_ssa, Refused};

/// Our dump of the DFA analysis stages in `debug_bits` for the whole script, at an
/// optimization level where [`sees_compiled_op_arrays`] holds: the analysis owner
/// ([`zend_optimizer::analysis`]) prints them as it analyses, at PHP's points.
pub fn dump_script(script: &Script, debug_bits: u32, optimization_level: u32) -> Vec<u8> {
    let info = ScriptInfo::new(script);
    let with_func_info = optimization_level & PASS_7_CALL_GRAPH != 0;
    let ctx = zend_inference::Context::new(&info, optimization_level);
    let mut returns = ctx.initial_return_infos();
    let mut out = Vec::new();
    for index in 0..info.op_arrays.len() {
        let dumps = AnalysisDumps {
            out: &mut out,
            debug_level: debug_bits,
            header: with_func_info.then(|| info.header(index)),
        };
        let analysed = analyze_op_array_dumped(&info, &ctx, index, &mut returns, Some(dumps));
        if cfg!(debug_assertions) {
            if let Ok(f) = &analysed {
                if let Err(e) = zend_ssa::verify(info.op_arrays[index], &f.cfg, &f.ssa) {
                    panic!("{e}");
                }
            }
        }
    }
    out
}
