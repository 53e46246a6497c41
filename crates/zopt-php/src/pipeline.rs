//! zopt's optimizer pipeline: what `zopt.mode=optimize` runs in place of OPcache's
//! optimizer (which the user turns off with `opcache.optimization_level=0`).
//!
//! The pipeline takes the captured script and `zopt.optimization_level` (OPcache's pass
//! bitmask, `ZEND_OPTIMIZER_PASS_1` = bit 0 ...) and returns the script to write back,
//! with, per op, the operand types handler selection may use.
//!
//! **No optimizer pass exists yet**: [`PASSES`] is empty, so `optimize` currently returns
//! its input unchanged and optimize mode equals the round trip. Passes land here, in
//! OPcache's order, as the optimizer crates implement them; each must keep every field the
//! write-back does not own unchanged (see [`crate::writeback::check_compatible`]) and leave
//! the op_arrays in the form `zend_redo_pass_two` expects: smart branches recomputed (see
//! [`recompute_smart_branches`]), live ranges and stack sizes recomputed.

use zend_ir::model::{OpArray, Operand, Script, SmartBranch};
use zend_ir::opcode::*;

use crate::writeback::HandlerTypes;

/// One optimizer pass: the level bit that enables it and the transform.
pub struct Pass {
    /// `ZEND_OPTIMIZER_PASS_N` bit of the optimization level.
    pub bit: u32,
    pub name: &'static str,
    pub run: fn(&mut Script),
}

/// The passes, in the order OPcache runs them. Empty: none is implemented yet.
pub const PASSES: &[Pass] = &[];

/// What [`optimize`] did.
pub struct Outcome {
    pub script: Script,
    /// Operand types for type-specialised handlers (none yet).
    pub handler_types: HandlerTypes,
}

/// Runs every pass `level` enables over `script`.
pub fn optimize(mut script: Script, level: u32) -> Outcome {
    let mut ran = 0;
    for pass in PASSES.iter().filter(|p| level & p.bit != 0) {
        (pass.run)(&mut script);
        ran += 1;
    }
    if ran > 0 {
        for_each_op_array(&mut script, &mut recompute_smart_branches);
    }
    Outcome {
        script,
        handler_types: HandlerTypes::default(),
    }
}

/// Calls `f` on every op_array `zend_foreach_op_array` visits.
pub fn for_each_op_array(script: &mut Script, f: &mut dyn FnMut(&mut OpArray)) {
    fn with_dynamic(op_array: &mut OpArray, f: &mut dyn FnMut(&mut OpArray)) {
        f(op_array);
        for def in &mut op_array.dynamic_func_defs {
            with_dynamic(def, f);
        }
    }
    with_dynamic(&mut script.main_op_array, f);
    for (_, func) in &mut script.function_table {
        with_dynamic(func, f);
    }
    for (key, ce) in &mut script.class_table {
        if ce.refcount > 1 && !key.0.eq_ignore_ascii_case(&ce.name.0) {
            continue;
        }
        let name = ce.name.clone();
        for (_, method) in &mut ce.methods {
            if method.scope.as_ref() == Some(&name)
                && method.type_ == zend_ir::ZEND_USER_FUNCTION
                && method.fn_flags & (zend_ir::ZEND_ACC_ABSTRACT | zend_ir::ZEND_ACC_TRAIT_CLONE)
                    == 0
            {
                with_dynamic(method, f);
            }
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
