//! zopt's optimizer pipeline: what `zopt.mode=optimize` and the opcode cache's miss path run
//! in place of OPcache's optimizer (which the user turns off with
//! `opcache.optimization_level=0`).
//!
//! The pipeline takes the captured script and `zopt.optimization_level` (OPcache's pass
//! bitmask, `ZEND_OPTIMIZER_PASS_1` = bit 0 ...), runs [`zend_optimizer::optimize_script`]
//! and returns the script to write back, with, per op, the operand types handler selection
//! may use. The write-back owns what PHP redoes after its optimizer: smart branches (see
//! [`recompute_smart_branches`]) and the copies of inherited methods.

use zend_ir::model::{OpArray, Operand, Script, SmartBranch};
use zend_ir::opcode::*;

use crate::writeback::HandlerTypes;

/// The names of the passes zopt implements, for `phpinfo()`.
pub fn implemented_passes() -> Vec<&'static str> {
    const NAMES: [(u32, &str); 10] = [
        (zend_optimizer::PASS_1, "pass1"),
        (zend_optimizer::PASS_3, "pass3"),
        (zend_optimizer::PASS_4, "pass4 (calls)"),
        (zend_optimizer::PASS_5, "pass5 (block pass)"),
        (zend_optimizer::PASS_6, "pass6 (dfa)"),
        (zend_optimizer::PASS_7, "pass7 (call graph)"),
        (zend_optimizer::PASS_9, "pass9 (temporaries)"),
        (zend_optimizer::PASS_10, "pass10 (nops)"),
        (zend_optimizer::PASS_11, "pass11 (literals)"),
        (zend_optimizer::PASS_13, "pass13 (variables)"),
    ];
    NAMES
        .iter()
        .filter(|(bit, _)| zend_optimizer::script::IMPLEMENTED_PASSES & bit != 0)
        .map(|&(_, name)| name)
        .collect()
}

/// What [`optimize`] did.
pub struct Outcome {
    pub script: Script,
    /// Operand types for type-specialised handlers, where the call-graph DFA pass analysed
    /// the op_array (`zend_redo_pass_two_ex`).
    pub handler_types: HandlerTypes,
}

/// Runs every pass `level` enables over `script`.
pub fn optimize(mut script: Script, level: u32) -> Outcome {
    let mut options = zend_optimizer::Options::new(level);
    options.copy_inherited_methods = false;
    options.verify = false;
    let outcome = zend_optimizer::optimize_script(&mut script, &options);
    for_each_op_array(&mut script, &mut recompute_smart_branches);
    // The call-graph DFA pass's types, per op_array in zend_foreach_op_array order (the
    // order of OpArrayPath::all and of the write-back's jobs).
    let handler_types = HandlerTypes(
        outcome
            .handler_types
            .into_iter()
            .enumerate()
            .filter_map(|(k, types)| Some((k, types?.into_iter().map(Some).collect())))
            .collect(),
    );
    Outcome {
        script,
        handler_types,
    }
}

/// Calls `f` on every op_array `zend_foreach_op_array` visits.
pub fn for_each_op_array(script: &mut Script, f: &mut dyn FnMut(&mut OpArray)) {
    for path in zend_optimizer::OpArrayPath::all(script) {
        if let Some(op_array) = path.get_mut(script) {
            f(op_array);
        }
    }
}

/// `zend_redo_pass_two`'s smart-branch rule: a comparison whose TMP result the next op
/// tests with JMPZ / JMPNZ feeds that branch directly.
pub fn recompute_smart_branches(op_array: &mut OpArray) {
    const SMART: [Opcode; 18] = [
        ZEND_IS_IDENTICAL,
        ZEND_IS_NOT_IDENTICAL,
        ZEND_IS_EQUAL,
        ZEND_IS_NOT_EQUAL,
        ZEND_IS_SMALLER,
        ZEND_IS_SMALLER_OR_EQUAL,
        ZEND_CASE,
        ZEND_CASE_STRICT,
        ZEND_ISSET_ISEMPTY_CV,
        ZEND_ISSET_ISEMPTY_VAR,
        ZEND_ISSET_ISEMPTY_DIM_OBJ,
        ZEND_ISSET_ISEMPTY_PROP_OBJ,
        ZEND_ISSET_ISEMPTY_STATIC_PROP,
        ZEND_INSTANCEOF,
        ZEND_TYPE_CHECK,
        ZEND_DEFINED,
        ZEND_IN_ARRAY,
        ZEND_ARRAY_KEY_EXISTS,
    ];
    let n = op_array.opcodes.len();
    for i in 0..n {
        op_array.opcodes[i].smart_branch = SmartBranch::None;
        let op = &op_array.opcodes[i];
        let Operand::TmpVar(result) = op.result else {
            continue;
        };
        if !SMART.contains(&op.opcode) || i + 1 >= n {
            continue;
        }
        let next = &op_array.opcodes[i + 1];
        let branch = match next.opcode {
            ZEND_JMPZ => SmartBranch::Jmpz,
            ZEND_JMPNZ => SmartBranch::Jmpnz,
            _ => continue,
        };
        if next.op1 == Operand::TmpVar(result) {
            op_array.opcodes[i].smart_branch = branch;
        }
    }
}
