//! The schedule: `zend_optimize_script` over a whole script and `zend_optimize` over one
//! op_array, exactly in PHP 8.2's order, with its debug dumps at PHP's points.

use std::time::{Duration, Instant};

use zend_ir::dump::{self, debug_level};
use zend_ir::{OpArray, Script, ZEND_EVAL_CODE};

use crate::analysis::{AnalysisDumps, FuncAnalysis};
use crate::ctx::{
    is_own_user_method, is_primary_class_key, OpArrayPath, OptimizerCtx, State, Workspace,
};
use crate::dfa_pass::{self, DfaInput, FuncInfo};
use crate::level::*;
use crate::php_bugs::PhpBugs;
use crate::provenance::Change;
use crate::{
    block_pass, compact_literals, compact_vars, helpers, live_ranges, nop_removal,
    optimize_func_calls, optimize_temp_vars_5, pass1, pass3, verify,
};

/// A pass registered by a user of the library (`zend_optimizer_register_pass`): it runs
/// after the built-in passes, with the whole script.
pub struct CustomPass {
    pub name: String,
    pub run: Box<dyn Fn(&mut Script) + Send + Sync>,
}

/// How to optimize.
pub struct Options {
    /// `opcache.optimization_level`.
    pub optimization_level: u32,
    /// `opcache.opt_debug_level`: the dumps to produce (see [`Outcome::dumps`]).
    pub debug_level: u32,
    /// Check every op_array after every pass ([`verify`]); failures go to
    /// [`Outcome::verify_errors`].
    pub verify: bool,
    /// Keep the change log ([`Outcome::changes`]).
    pub explain: bool,
    /// Passes that run after the built-in ones.
    pub custom_passes: Vec<CustomPass>,
    /// Make each compile-time inherited method copy (`op_array->scope != ce`) a copy of its
    /// optimized original again, as `zend_optimize_script` does. A caller that writes the
    /// script back into PHP, where the copies share the original's code, turns it off and
    /// lets the write-back re-copy.
    pub copy_inherited_methods: bool,
    /// Time every pass ([`Outcome::timings`]). Off by default: reading the clock around
    /// each pass of each op_array costs a few percent of the whole optimization.
    pub timings: bool,
    /// The bugs of PHP 8.2's optimizer to reproduce ([`PhpBugs`]); none by default, so the
    /// optimized script behaves as PHP without OPcache runs it.
    pub php_bugs: PhpBugs,
    /// The script is compiled for a file cache (`ZEND_COMPILE_WITH_FILE_CACHE`), so it may
    /// run in another process: values that depend on the process (`PHP_SAPI`,
    /// `PHP_BINARY`, `php_sapi_name()`, `php_uname()`) are not folded.
    pub with_file_cache: bool,
}

impl Options {
    pub fn new(optimization_level: u32) -> Options {
        Options {
            optimization_level,
            debug_level: 0,
            verify: cfg!(debug_assertions),
            explain: false,
            custom_passes: Vec::new(),
            copy_inherited_methods: true,
            timings: false,
            php_bugs: PhpBugs::NONE,
            with_file_cache: false,
        }
    }
}

/// Time spent in one pass over the whole script.
#[derive(Clone, Debug, Default)]
pub struct PassTiming {
    pub name: &'static str,
    pub time: Duration,
    /// How many op_arrays it ran on.
    pub runs: u32,
}

/// What [`optimize_script`] did besides changing the script.
#[derive(Default)]
pub struct Outcome {
    /// The dumps PHP prints at the requested `opt_debug_level`, byte for byte.
    pub dumps: Vec<u8>,
    /// Every change with its reason, when [`Options::explain`] is set.
    pub changes: Vec<Change>,
    /// Per pass, in the order passes first ran.
    pub timings: Vec<PassTiming>,
    /// `pass: op_array: problem` for every failed check after a pass.
    pub verify_errors: Vec<String>,
    /// Per op_array, in [`OpArrayPath::all`] order: the `(op1, op2, result)` type masks
    /// `zend_redo_pass_two_ex` hands to `zend_vm_set_opcode_handler_ex` for each op, where
    /// the call-graph DFA pass analysed the op_array (`None`: handlers as `pass_two` picks
    /// them).
    pub handler_types: Vec<Option<Vec<(u32, u32, u32)>>>,
}

/// The passes this crate implements, as `PASS_*` bits. Passes outside it are skipped by the
/// schedule (their place is kept); [`implemented`] tells callers which dumps are therefore
/// not PHP's.
pub const IMPLEMENTED_PASSES: u32 = PASS_1
    | PASS_3
    | PASS_4
    | PASS_5
    | PASS_9
    | PASS_10
    | PASS_11
    | PASS_13
    | PASS_6
    | PASS_7
    | PASS_8
    | PASS_14;

/// Passes whose bit changes nothing in PHP 8.2's schedule.
const INERT_PASSES: u32 = PASS_2 | PASS_15 | PASS_16;

/// The flags of PHP's final "after optimizer" dump at `optimization_level`: the call-graph
/// path (PASS_7) prints each op_array with its live ranges once every function is
/// optimized, the per-op_array path prints the ops alone.
pub fn after_optimizer_dump_flags(optimization_level: u32) -> u32 {
    if optimization_level & PASS_7 != 0 {
        dump::ZEND_DUMP_LIVE_RANGES
    } else {
        0
    }
}

/// Whether the dump at `debug_bits` (one stage) is what PHP prints at `optimization_level`:
/// every pass that runs before that dump point is implemented.
pub fn implemented(optimization_level: u32, debug_bits: u32) -> bool {
    // Bits above PASS_16 are not passes (the default level sets them all); PASS_12, the
    // stack size adjustment, always runs when asked (optimize_func_calls).
    let level = optimization_level & 0xFFFF & !(INERT_PASSES | PASS_12);
    // The SSA passes only run inside the DFA pass.
    let level = if level & PASS_6 == 0 {
        level & !(PASS_7 | PASS_8 | PASS_14)
    } else {
        level
    };
    let needed = match debug_bits {
        debug_level::BEFORE_OPTIMIZER => 0,
        b if b == debug_level::after_pass(1) => PASS_1,
        b if b == debug_level::after_pass(3) => PASS_1 | PASS_3,
        b if b == debug_level::after_pass(4) => PASS_1 | PASS_3 | PASS_4,
        debug_level::BEFORE_BLOCK_PASS => PASS_1 | PASS_3 | PASS_4,
        debug_level::AFTER_BLOCK_PASS | debug_level::BLOCK_PASS_VARS => {
            PASS_1 | PASS_3 | PASS_4 | PASS_5
        }
        b if b == debug_level::after_pass(5) => PASS_1 | PASS_3 | PASS_4 | PASS_5,
        // The DFA pass's analysis dumps and its "before dfa pass" dump see the op_arrays
        // after the early passes (with the call graph, NOP removal too).
        b if b & DFA_ANALYSIS_DUMPS == b && b != 0 => dfa_prefix(level),
        dfa_pass::DUMP_BEFORE_DFA_PASS => dfa_prefix(level),
        // SCCP prints its values, and the "after sccp pass" dump follows it, inside the
        // DFA pass.
        debug_level::SCCP => dfa_prefix(level) | PASS_8,
        b if b == debug_level::after_pass(8) => dfa_prefix(level) | PASS_8,
        // DCE runs after SCCP inside the DFA pass.
        b if b == debug_level::after_pass(14) => dfa_prefix(level) | PASS_8 | PASS_14,
        dfa_pass::DUMP_AFTER_DFA_PASS => dfa_prefix(level) | PASS_8 | PASS_14,
        b if b == debug_level::after_pass(6) || b == debug_level::after_pass(7) => {
            dfa_prefix(level) | PASS_8 | PASS_14
        }
        b if b == debug_level::after_pass(9) => !(PASS_10 | PASS_11 | PASS_12 | PASS_13),
        b if b == debug_level::after_pass(10) => !(PASS_11 | PASS_12 | PASS_13),
        b if b == debug_level::after_pass(11) => !(PASS_12 | PASS_13),
        b if b == debug_level::after_pass(13) => !PASS_12,
        // PASS_12 runs after the per-op_array dumps, but with the call graph the final
        // dump comes after it.
        debug_level::AFTER_OPTIMIZER if level & PASS_7 == 0 || level & PASS_6 == 0 => !PASS_12,
        debug_level::AFTER_OPTIMIZER => !0,
        // PHP 8.2 has no dump point for these bits (pass 2 is part of pass 1, pass 12 and
        // the inert passes print nothing): both sides print nothing, at any level.
        b if b == debug_level::after_pass(2)
            || b == debug_level::after_pass(12)
            || b == debug_level::after_pass(15)
            || b == debug_level::after_pass(16) =>
        {
            0
        }
        _ => return false,
    };
    level & needed & !IMPLEMENTED_PASSES == 0
}

/// The debug bits of `zend_dfa_analyze_op_array`'s dumps (CFG, dominators, liveness, phi
/// placement, SSA, SSA variables).
const DFA_ANALYSIS_DUMPS: u32 = debug_level::DFA_CFG
    | debug_level::DFA_DOMINATORS
    | debug_level::DFA_LIVENESS
    | debug_level::DFA_PHI
    | debug_level::DFA_SSA
    | debug_level::DFA_SSA_VARS;

/// The passes that run before the DFA pass analyses an op_array, and the DFA pass itself.
fn dfa_prefix(level: u32) -> u32 {
    let call_graph = level & PASS_6 != 0 && level & PASS_7 != 0;
    PASS_1 | PASS_3 | PASS_4 | PASS_5 | PASS_6 | if call_graph { PASS_7 | PASS_10 } else { 0 }
}

/// `zend_optimize_script`: optimizes every op_array of `script` at
/// `options.optimization_level`.
pub fn optimize_script(script: &mut Script, options: &Options) -> Outcome {
    optimize_script_in(script, options, &mut Workspace::default())
}

/// [`optimize_script`], with the passes' working memory in `work`, which a caller optimizing
/// many scripts keeps from one to the next.
pub fn optimize_script_in(script: &mut Script, options: &Options, work: &mut Workspace) -> Outcome {
    let mut driver = Driver {
        options,
        state: Some(Box::new(State {
            changes: options.explain.then(Vec::new),
            index: zend_call_graph::script_index::ScriptIndex::new(script),
            work: std::mem::take(work),
            ..State::default()
        })),
        spare: None,
        timings: Vec::new(),
        verify_errors: Vec::new(),
    };
    let level = options.optimization_level;
    let paths = OpArrayPath::all(script);
    driver.state().operands_checked = paths.iter().all(|p| {
        p.get(script)
            .map_or(true, |oa| zend_cfg::check_operands(oa).is_ok())
    });
    // PHP recomputes the live ranges of the op_arrays that had any when compiled (passes
    // never drop the array, so this is the op_array's state before optimizing).
    let had_live_ranges: Vec<bool> = paths
        .iter()
        .map(|p| p.get(script).is_some_and(|oa| !oa.live_range.is_empty()))
        .collect();
    let mut handler_types = vec![None; paths.len()];
    if level & PASS_6 != 0 && level & PASS_7 != 0 {
        // The call-graph path: the early passes over every op_array, then the DFA pass over
        // the whole script, then literals and variables compacted, stack sizes adjusted
        // from the call graph, and the final dump with live ranges.
        for path in &paths {
            driver.with_op_array(script, path, |d, op_array, ctx| {
                d.optimize(op_array, ctx, None)
            });
        }
        let mut dfa = driver.dfa_call_graph(script, &paths);
        // After the DFA pass, 8.2 runs passes 9, 11 and 13 over the whole script, one pass
        // at a time; their dumps print the function info the DFA analysis left (none where
        // it refused the op_array).
        let late: [(u32, PassFn, &str); 3] = [
            (PASS_9, optimize_temp_vars_5::run, "after pass 9"),
            (PASS_11, compact_literals::run, "after pass 11"),
            (PASS_13, compact_vars::run, "after pass 13"),
        ];
        let late_dumps = late.iter().any(|&(bit, ..)| {
            options.debug_level & debug_level::after_pass(bit.trailing_zeros() + 1) != 0
        });
        if !late_dumps {
            // Each of these passes reads its own op_array only, so without their dumps
            // (which PHP prints pass by pass) they run one op_array at a time: the op_array
            // is taken out of the script once instead of three times.
            for path in &paths {
                driver.with_op_array(script, path, |d, op_array, ctx| {
                    for &(bit, pass, _) in &late {
                        if level & bit != 0 {
                            d.run(op_array, ctx, bit, pass);
                        }
                    }
                });
            }
        }
        for (bit, pass, msg) in late {
            if level & bit == 0 || !late_dumps {
                continue;
            }
            for (k, path) in paths.iter().enumerate() {
                let header = dfa[k].as_ref().map(|a| a.1.header());
                driver.with_op_array(script, path, |d, op_array, ctx| {
                    d.run(op_array, ctx, bit, pass);
                    let n = bit.trailing_zeros() + 1;
                    d.dump_with(
                        op_array,
                        ctx,
                        debug_level::after_pass(n),
                        msg,
                        header.as_ref(),
                    );
                });
            }
        }
        // PASS_12 needs every op_array's final variable counts, which pass 13 left; the
        // live ranges and handler types that follow read the op_array's own ops only, so
        // both run in one visit of each op_array.
        for (k, (path, &had)) in paths.iter().zip(&had_live_ranges).enumerate() {
            let analysed = dfa[k].take();
            driver.with_op_array(script, path, |d, op_array, ctx| {
                if level & PASS_12 != 0 {
                    if let Some((_, fi)) = analysed.as_ref() {
                        d.adjust_fcall_stack_size(op_array, ctx, Some(&fi.callee_info));
                    }
                }
                match analysed.as_ref() {
                    Some((fa, _)) => {
                        // zend_redo_pass_two_ex: handlers picked by the inferred types, live
                        // ranges only for values that may be refcounted.
                        handler_types[k] =
                            Some(dfa_pass::redo_pass_two_ex(op_array, fa, d.options.php_bugs));
                        if had && op_array.type_ != ZEND_EVAL_CODE {
                            let start = d.clock();
                            live_ranges::recalc_with(op_array, &|_, def| {
                                dfa_pass::needs_live_range(fa, def)
                            });
                            d.time("live_ranges", start);
                        }
                    }
                    None => d.recalc_live_ranges(op_array, had),
                }
            });
            // Its vectors serve the analyses of the next scripts.
            if let Some(mut analysed) = analysed {
                driver.state().work.analysis_pool.give(&mut analysed.0);
            }
        }
    } else {
        // Without the call graph, the DFA pass of each op_array looks the script's
        // functions and classes up by name: one view of the script as it was before
        // optimizing serves them all (one built per op_array made the pass quadratic in
        // the number of op_arrays: 170 s for a script of 5000 small functions).
        let snapshot = (level & PASS_6 != 0).then(|| script.clone());
        let info = snapshot.as_ref().map(zend_call_graph::ScriptInfo::new);
        for (path, &had) in paths.iter().zip(&had_live_ranges) {
            driver.with_op_array(script, path, |d, op_array, ctx| {
                d.optimize(op_array, ctx, info.as_ref());
                d.recalc_live_ranges(op_array, had);
            });
        }
        if level & PASS_12 != 0 {
            driver.adjust_fcall_stack_sizes(script, &paths);
        }
    }
    // zend_redo_pass_two: every visited op_array's smart branches, from its final ops.
    // Op_arrays without handler types get zend_vm_set_opcode_handler's commutative swap
    // (the typed ones had zend_vm_set_opcode_handler_ex's, in the DFA path above).
    for (k, path) in paths.iter().enumerate() {
        if let Some(op_array) = path.get_mut(script) {
            helpers::redo_pass_two_smart_branches(op_array);
            if handler_types[k].is_none() {
                helpers::redo_pass_two_commutative_operands(op_array);
            }
        }
    }
    if options.copy_inherited_methods {
        copy_inherited_methods(script);
    }
    for pass in &options.custom_passes {
        let start = driver.clock();
        (pass.run)(script);
        driver.time("custom", start);
        if options.verify {
            for path in &paths {
                if let Some(op_array) = path.get(script) {
                    if let Err(e) = verify::op_array(op_array) {
                        driver.verify_errors.push(format!(
                            "{}: {}: {e}",
                            pass.name,
                            op_array.display_name()
                        ));
                    }
                }
            }
        }
    }
    if options.debug_level & debug_level::AFTER_OPTIMIZER != 0 && level & PASS_7 != 0 {
        for path in &paths {
            if let Some(op_array) = path.get(script) {
                if op_array.type_ != ZEND_EVAL_CODE {
                    dump::dump_op_array(
                        &mut driver.state().dumps,
                        op_array,
                        after_optimizer_dump_flags(level),
                        Some("after optimizer"),
                    );
                }
            }
        }
    }
    let mut state = driver.state.take().map_or_else(Default::default, |s| *s);
    *work = std::mem::take(&mut state.work);
    Outcome {
        dumps: state.dumps,
        changes: state.changes.unwrap_or_default(),
        timings: driver.timings,
        verify_errors: driver.verify_errors,
        handler_types,
    }
}

struct Driver<'o> {
    options: &'o Options,
    /// Lent to each op_array's context (boxed, so that lending it moves a pointer, not the
    /// state); `None` only while lent.
    state: Option<Box<State>>,
    /// The empty op_array [`Driver::with_op_array`] leaves in a lent op_array's slot.
    spare: Option<Box<OpArray>>,
    timings: Vec<PassTiming>,
    verify_errors: Vec<String>,
}

type PassFn = fn(&mut OpArray, &mut OptimizerCtx);

/// An op_array the call-graph DFA pass analysed: its analyses, boxed as the analysis
/// returns them (handing them from step to step moves a pointer), and its function info.
type Analysed = (Box<FuncAnalysis>, FuncInfo);

impl Driver<'_> {
    /// Takes the op_array at `path` out of the script, runs `f` on it with a context that
    /// sees the rest of the script, and puts it back.
    fn with_op_array(
        &mut self,
        script: &mut Script,
        path: &OpArrayPath,
        f: impl FnOnce(&mut Self, &mut OpArray, &mut OptimizerCtx),
    ) {
        let Some(slot) = path.slot_mut(script) else {
            return;
        };
        // Boxes change places, the op_array does not move: an empty one stands in its
        // slot while it is lent, the same one every time.
        let placeholder = self.spare.take().unwrap_or_default();
        let mut op_array = std::mem::replace(slot, placeholder);
        // Its closures stay where lookups expect them only through the op_array itself.
        let mut state = self
            .state
            .take()
            .expect("the state is lent to one op_array at a time");
        {
            let mut ctx = OptimizerCtx {
                optimization_level: self.options.optimization_level,
                debug_level: self.options.debug_level,
                php_bugs: self.options.php_bugs,
                with_file_cache: self.options.with_file_cache,
                script,
                current: path,
                state: &mut state,
                pass: "",
            };
            f(self, &mut op_array, &mut ctx);
        }
        self.state = Some(state);
        if let Some(slot) = path.slot_mut(script) {
            self.spare = Some(std::mem::replace(slot, op_array));
        }
    }

    fn state(&mut self) -> &mut State {
        self.state
            .as_deref_mut()
            .expect("the state is lent to one op_array at a time")
    }

    /// `zend_optimize`: the per-op_array passes in PHP's order, with their dumps. `dfa_info`
    /// is the script's view for the DFA pass without the call graph.
    fn optimize(
        &mut self,
        op_array: &mut OpArray,
        ctx: &mut OptimizerCtx,
        dfa_info: Option<&zend_call_graph::ScriptInfo>,
    ) {
        if op_array.type_ == ZEND_EVAL_CODE {
            return;
        }
        let level = ctx.optimization_level;
        let call_graph = level & PASS_6 != 0 && level & PASS_7 != 0;
        if ctx.debug_level & debug_level::BEFORE_OPTIMIZER != 0 && !call_graph {
            self.dump(
                op_array,
                ctx,
                debug_level::BEFORE_OPTIMIZER,
                "before optimizer",
                dump::ZEND_DUMP_LIVE_RANGES,
            );
        }
        if level & PASS_1 != 0 {
            self.run(op_array, ctx, PASS_1, pass1::run);
            self.dump(op_array, ctx, debug_level::after_pass(1), "after pass 1", 0);
        }
        if level & PASS_3 != 0 {
            self.run(op_array, ctx, PASS_3, pass3::run);
            self.dump(op_array, ctx, debug_level::after_pass(3), "after pass 3", 0);
        }
        if level & PASS_4 != 0 {
            self.run(op_array, ctx, PASS_4, optimize_func_calls::run);
            self.dump(op_array, ctx, debug_level::after_pass(4), "after pass 4", 0);
        }
        if level & PASS_5 != 0 {
            self.run(op_array, ctx, PASS_5, block_pass::run);
            self.dump(op_array, ctx, debug_level::after_pass(5), "after pass 5", 0);
        }
        let dfa_alone = level & PASS_6 != 0 && level & PASS_7 == 0;
        if let Some(info) = dfa_info.filter(|_| dfa_alone && IMPLEMENTED_PASSES & PASS_6 != 0) {
            ctx.pass = "pass6";
            let start = self.clock();
            let mut steps = Vec::new();
            let analysis = dfa_pass::optimize_dfa(
                op_array,
                ctx,
                info,
                self.options.verify.then_some(&mut steps),
            );
            self.time("pass6", start);
            self.verify_errors.extend(steps);
            self.check("pass6", op_array, analysis.as_ref());
            self.dump(op_array, ctx, debug_level::after_pass(6), "after pass 6", 0);
        }
        if level & PASS_9 != 0 && !call_graph {
            self.run(op_array, ctx, PASS_9, optimize_temp_vars_5::run);
            self.dump(op_array, ctx, debug_level::after_pass(9), "after pass 9", 0);
        }
        if level & (PASS_10 | PASS_5) == PASS_10 {
            self.run(op_array, ctx, PASS_10, nop_removal::run);
            self.dump(
                op_array,
                ctx,
                debug_level::after_pass(10),
                "after pass 10",
                0,
            );
        }
        if level & PASS_11 != 0 && !call_graph {
            self.run(op_array, ctx, PASS_11, compact_literals::run);
            self.dump(
                op_array,
                ctx,
                debug_level::after_pass(11),
                "after pass 11",
                0,
            );
        }
        if level & PASS_13 != 0 && !call_graph {
            self.run(op_array, ctx, PASS_13, compact_vars::run);
            self.dump(
                op_array,
                ctx,
                debug_level::after_pass(13),
                "after pass 13",
                0,
            );
        }
        if level & PASS_7 != 0 {
            return;
        }
        self.dump(
            op_array,
            ctx,
            debug_level::AFTER_OPTIMIZER,
            "after optimizer",
            0,
        );
    }

    /// Runs pass `bit` (`PASS_N`) if it is implemented: timed, logged under its name, and
    /// checked after. Inlined: each call site knows its pass, so the name and the test fold
    /// away and the pass is called directly; out of line, the ~60k pass runs of the corpus
    /// each paid a call that saves and restores every register.
    #[inline(always)]
    fn run(&mut self, op_array: &mut OpArray, ctx: &mut OptimizerCtx, bit: u32, f: PassFn) {
        if IMPLEMENTED_PASSES & bit == 0 {
            return;
        }
        let name = pass_name(bit);
        ctx.pass = name;
        let start = self.clock();
        f(op_array, ctx);
        self.time(name, start);
        if self.options.verify {
            if let Err(e) = verify::op_array(op_array) {
                self.verify_errors
                    .push(format!("{name}: {}: {e}", op_array.display_name()));
            }
        }
    }

    /// The after-pass check, and with an analysis the SSA verifier on what the pass left.
    fn check(&mut self, name: &str, op_array: &OpArray, analysis: Option<&FuncAnalysis>) {
        if !self.options.verify {
            return;
        }
        if let Err(e) = verify::op_array(op_array) {
            self.verify_errors
                .push(format!("{name}: {}: {e}", op_array.display_name()));
        }
        if let Some(fa) = analysis {
            if let Err(e) = verify::ssa(op_array, &fa.cfg, &fa.ssa) {
                self.verify_errors
                    .push(format!("{name} (ssa): {}: {e}", op_array.display_name()));
            }
        }
    }

    /// The DFA pass over the whole script with the call graph: every op_array analysed in
    /// call-graph order (callees' return info feeding later callers), then each optimized.
    /// Returns, per path, the analysis the pass left and the function info, where
    /// `zend_dfa_analyze_op_array` succeeded.
    fn dfa_call_graph(
        &mut self,
        script: &mut Script,
        paths: &[OpArrayPath],
    ) -> Vec<Option<Analysed>> {
        let mut results: Vec<Option<Analysed>> = (0..paths.len()).map(|_| None).collect();
        if IMPLEMENTED_PASSES & (PASS_6 | PASS_7) != PASS_6 | PASS_7 {
            return results;
        }
        let level = self.options.optimization_level;
        let debug = self.options.debug_level;
        let start = self.clock();
        {
            let script: &Script = script;
            let mut info = zend_call_graph::ScriptInfo::new(script);
            // Both list the op_arrays in zend_foreach_op_array order, so op_array `i` of
            // `info` is path `i`; the paths are indexed by address only if that ever fails
            // (hashing every op_array of every script cost more than the check).
            let mut by_address: Option<hashbrown::HashMap<*const OpArray, usize>> = None;
            let mut path_of = |i: usize, op_array: &OpArray| -> Option<usize> {
                if paths
                    .get(i)
                    .and_then(|p| p.get(script))
                    .is_some_and(|o| std::ptr::eq(o, op_array))
                {
                    return Some(i);
                }
                let by_address = by_address.get_or_insert_with(|| {
                    paths
                        .iter()
                        .enumerate()
                        .filter_map(|(k, p)| p.get(script).map(|o| (o as *const OpArray, k)))
                        .collect()
                });
                by_address.get(&(op_array as *const OpArray)).copied()
            };
            // Which op_array of `info` each analysed path is: its call sites become the
            // function info's once every op_array is analysed.
            let mut analysed = Vec::new();
            {
                let ictx = zend_inference::Context::new(&info, level);
                let mut returns = ictx.initial_return_infos();
                // The workspace's arena, out of the state while the dumps borrow it.
                let mut scratch = std::mem::take(&mut self.state().work.analysis_arena);
                let mut pool = std::mem::take(&mut self.state().work.analysis_pool);
                let operands_checked = self.state().operands_checked;
                for (i, &op_array) in info.op_arrays.iter().enumerate() {
                    let Some(k) = path_of(i, op_array) else {
                        continue;
                    };
                    scratch.reset();
                    let dumps = (debug & DFA_ANALYSIS_DUMPS != 0).then(|| AnalysisDumps {
                        out: &mut self.state().dumps,
                        debug_level: debug,
                        header: Some(info.header(i)),
                    });
                    let Ok(fa) = crate::analysis::analyze_op_array_pooled(
                        &info,
                        &ictx,
                        i,
                        &mut returns,
                        dumps,
                        &scratch,
                        &mut pool,
                        operands_checked,
                    ) else {
                        continue;
                    };
                    let mut fi = FuncInfo {
                        flags: fa.cfg.func_flags.bits(),
                        ..FuncInfo::default()
                    };
                    if let Some(ri) = &returns[i] {
                        fi.return_type = ri.type_;
                        fi.return_ce = ri.ce.as_ref().map(|c| (c.name.clone(), ri.is_instanceof));
                        // Printed whether or not it is known, as PHP prints it.
                        fi.return_range = ri.range;
                    }
                    results[k] = Some((fa, fi));
                    analysed.push((k, i));
                }
                self.state().work.analysis_arena = scratch;
                self.state().work.analysis_pool = pool;
            }
            // The analyses are done with the call sites: move them, not copy them.
            let mut calls = std::sync::Arc::try_unwrap(std::mem::take(&mut info.calls))
                .unwrap_or_else(|shared| shared.as_ref().clone());
            for (k, i) in analysed {
                if let Some(a) = results[k].as_mut() {
                    a.1.callee_info = std::mem::take(&mut calls[i]);
                }
            }
        }
        self.time("pass6", start);
        for (k, path) in paths.iter().enumerate() {
            let Some((fa, fi)) = results[k].as_mut() else {
                continue;
            };
            self.with_op_array(script, path, |d, op_array, ctx| {
                ctx.pass = "pass6";
                let start = d.clock();
                let mut steps = Vec::new();
                let verify = d.options.verify;
                dfa_pass::optimize_op_array(
                    op_array,
                    ctx,
                    DfaInput {
                        analysis: fa,
                        func_info: Some(fi),
                        step_checks: verify.then_some(&mut steps),
                    },
                );
                d.time("pass6", start);
                d.verify_errors.extend(steps);
                d.check("pass6", op_array, Some(fa));
            });
        }
        if debug & debug_level::after_pass(7) != 0 {
            for (k, path) in paths.iter().enumerate() {
                if let Some(op_array) = path.get(script) {
                    let header = results[k].as_ref().map(|a| a.1.header());
                    dump::dump_op_array_ex(
                        &mut self.state().dumps,
                        op_array,
                        0,
                        Some("after pass 7"),
                        header.as_ref(),
                    );
                }
            }
        }
        results
    }

    /// The start of a timed stretch, when timings are asked for.
    #[inline]
    fn clock(&self) -> Option<Instant> {
        self.options.timings.then(Instant::now)
    }

    /// Adds the time since `start` (from [`Driver::clock`]) to pass `name`. Called around
    /// every pass of every op_array: without timings, the call itself is what costs.
    #[inline]
    fn time(&mut self, name: &'static str, start: Option<Instant>) {
        if let Some(start) = start {
            self.add_time(name, start);
        }
    }

    #[cold]
    fn add_time(&mut self, name: &'static str, start: Instant) {
        let time = start.elapsed();
        match self.timings.iter_mut().find(|t| t.name == name) {
            Some(t) => {
                t.time += time;
                t.runs += 1;
            }
            None => self.timings.push(PassTiming {
                name,
                time,
                runs: 1,
            }),
        }
    }

    fn dump(
        &mut self,
        op_array: &OpArray,
        ctx: &mut OptimizerCtx,
        bit: u32,
        msg: &str,
        flags: u32,
    ) {
        // Tested first: without the dump (the usual case) no header is made and dropped.
        if ctx.debug_level & bit == 0 {
            return;
        }
        // With the call graph every op_array has a zend_func_info from the start, still
        // zeroed while the passes before the DFA pass run: their dumps print it.
        let early = (1..=5).any(|n| bit == debug_level::after_pass(n));
        let call_graph = ctx.optimization_level & (PASS_6 | PASS_7) == PASS_6 | PASS_7;
        let header = (early && call_graph).then(dump::FuncInfoHeader::default);
        self.dump_ex(op_array, ctx, bit, msg, flags, header.as_ref());
    }

    /// A dump after a pass of the call-graph path, with the op_array's function info.
    fn dump_with(
        &mut self,
        op_array: &OpArray,
        ctx: &mut OptimizerCtx,
        bit: u32,
        msg: &str,
        header: Option<&dump::FuncInfoHeader>,
    ) {
        self.dump_ex(op_array, ctx, bit, msg, 0, header);
    }

    fn dump_ex(
        &mut self,
        op_array: &OpArray,
        ctx: &mut OptimizerCtx,
        bit: u32,
        msg: &str,
        flags: u32,
        header: Option<&dump::FuncInfoHeader>,
    ) {
        if ctx.debug_level & bit != 0 {
            dump::dump_op_array_ex(&mut ctx.state.dumps, op_array, flags, Some(msg), header);
        }
    }

    /// `zend_recalc_live_ranges` after `zend_redo_pass_two`, for op_arrays that had live
    /// ranges before optimizing (`had`).
    fn recalc_live_ranges(&mut self, op_array: &mut OpArray, had: bool) {
        if op_array.type_ == ZEND_EVAL_CODE || !had {
            return;
        }
        if IMPLEMENTED_PASSES & self.options.optimization_level == 0 {
            // Nothing changed the op_array: its live ranges are still PHP's.
            return;
        }
        let start = self.clock();
        live_ranges::recalc(op_array);
        self.time("live_ranges", start);
    }

    /// PASS_12: `zend_adjust_fcall_stack_size` over every op_array, once all are optimized
    /// (the stack a call needs depends on the callee's final variable counts). On the
    /// call-graph path, `zend_adjust_fcall_stack_size_graph` walks the call sites of the
    /// op_arrays that kept their function info only (one the DFA analysis refused keeps the
    /// stack sizes its INIT_FCALLs had): the driver does that op_array by op_array.
    fn adjust_fcall_stack_sizes(&mut self, script: &mut Script, paths: &[OpArrayPath]) {
        for path in paths {
            self.with_op_array(script, path, |d, op_array, ctx| {
                d.adjust_fcall_stack_size(op_array, ctx, None);
            });
        }
    }

    /// PASS_12 for one op_array: `zend_adjust_fcall_stack_size` over its ops, or, given the
    /// `callee_info` of its function info (the call-graph path),
    /// `zend_adjust_fcall_stack_size_graph` over those calls only.
    fn adjust_fcall_stack_size(
        &mut self,
        op_array: &mut OpArray,
        ctx: &mut OptimizerCtx,
        callee_info: Option<&[zend_call_graph::CallSite]>,
    ) {
        if op_array.type_ == ZEND_EVAL_CODE {
            return;
        }
        let start = self.clock();
        match callee_info {
            Some(calls) => optimize_func_calls::adjust_fcall_stack_size_graph(op_array, ctx, calls),
            None => optimize_func_calls::adjust_fcall_stack_size(op_array, ctx),
        }
        self.time("pass12", start);
    }
}

/// `"passN"`, the name timings, logs and checks give pass bit `PASS_N`.
fn pass_name(bit: u32) -> &'static str {
    const NAMES: [&str; 16] = [
        "pass1", "pass2", "pass3", "pass4", "pass5", "pass6", "pass7", "pass8", "pass9", "pass10",
        "pass11", "pass12", "pass13", "pass14", "pass15", "pass16",
    ];
    NAMES[bit.trailing_zeros() as usize % NAMES.len()]
}

/// After optimizing, a method a class inherited from a trait or parent at compile time
/// (`op_array->scope != ce`) becomes a copy of the optimized original, keeping its own
/// flags and static variables (what [`Options::copy_inherited_methods`] does, and what a
/// write-back into PHP does to PHP's copies).
pub fn copy_inherited_methods(script: &mut Script) {
    let mut copies = Vec::new();
    for (c, (key, ce)) in script.class_table.iter().enumerate() {
        if !is_primary_class_key(key, ce) {
            continue;
        }
        for (m, (mkey, method)) in ce.methods.iter().enumerate() {
            if method.type_ != zend_ir::ZEND_USER_FUNCTION || is_own_user_method(ce, method) {
                continue;
            }
            let Some(scope) = &method.scope else { continue };
            if scope == &ce.name {
                continue;
            }
            let original = script.class_table.iter().find_map(|(_, owner)| {
                (owner.name.as_bytes().eq_ignore_ascii_case(scope.as_bytes()))
                    .then(|| owner.methods.iter().find(|(k, _)| k == mkey))
                    .flatten()
                    .map(|(_, orig)| orig)
            });
            if let Some(original) = original {
                if original != method {
                    copies.push((c, m, original.clone()));
                }
            }
        }
    }
    for (c, m, original) in copies {
        let method = &mut script.class_table[c].1.methods[m].1;
        let fn_flags = method.fn_flags;
        let static_variables = method.static_variables.take();
        *method = original;
        method.fn_flags = fn_flags;
        method.static_variables = static_variables;
    }
}
