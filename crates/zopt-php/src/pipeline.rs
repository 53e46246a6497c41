//! zopt's optimizer pipeline: what `zopt.mode=optimize` and the opcode cache's miss path run
//! in place of OPcache's optimizer (which the user turns off with
//! `opcache.optimization_level=0`).
//!
//! The pipeline takes the captured script and `zopt.optimization_level` (OPcache's pass
//! bitmask, `ZEND_OPTIMIZER_PASS_1` = bit 0 ...), runs [`zend_optimizer::optimize_script`]
//! and returns the script to write back, with, per op, the operand types handler selection
//! may use. `optimize_script` redoes the smart branches as `zend_redo_pass_two` does; the
//! write-back re-copies inherited methods.

use std::cell::RefCell;

use zend_ir::model::Script;

use crate::writeback::HandlerTypes;

thread_local! {
    /// The passes' working memory, kept from one compile to the next (a request that misses
    /// the cache compiles many scripts). The cache frees it with [`release_workspace`] at
    /// the end of a request that compiled; without the cache (`zopt.mode=optimize`) it
    /// lives as long as the process, as large as the largest op_array compiled.
    static WORKSPACE: RefCell<zend_optimizer::Workspace> = RefCell::default();
}

/// Frees the passes' working memory (see [`WORKSPACE`]).
pub fn release_workspace() {
    WORKSPACE.with(|w| drop(w.take()));
}

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

/// Runs every pass `level` enables over `script`, for a file cache when `with_file_cache`.
pub fn optimize(mut script: Script, level: u32, with_file_cache: bool) -> Outcome {
    let mut options = zend_optimizer::Options::new(level);
    options.with_file_cache = with_file_cache;
    options.copy_inherited_methods = false;
    options.verify = false;
    let outcome = WORKSPACE
        .with(|w| zend_optimizer::optimize_script_in(&mut script, &options, &mut w.borrow_mut()));
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
