//! One owner of a function's analyses: what `zend_dfa_analyze_op_array` computes for an
//! op_array — the CFG, def/use sets and liveness, e-SSA with use-def chains, false
//! dependencies and SCCs, types and ranges, escape states — and the script-wide order in
//! which PHP computes them (callees' return types feed their callers).
//!
//! The CLI's dumps, the crosscheck, the after-pass check and the SSA passes all build their
//! analyses here, so every user gets PHP's exact sequence of steps and its reasons for
//! leaving an op_array alone ([`Refused`]).
//!
//! # For tool authors
//!
//! [`analyze_script`] is the entry point: give it a [`Script`] (PHP's compiled op_arrays,
//! read from a `.zop` recording that `zopt record` writes, with [`zend_ir::corpus::read`])
//! and an optimization level, and it returns a [`ScriptAnalysis`]: per op_array, in
//! `zend_foreach_op_array` order, either a [`FuncAnalysis`] (CFG with dominators and loops,
//! def/use sets and liveness, SSA with its SCCs and escape states, the type and range of
//! every SSA variable, the return info) or the [`Refused`] reason PHP's DFA pass gives for
//! leaving it alone; and the script's call graph with each op_array's call map.
//!
//! The results are PHP's own when the DFA pass sees the op_arrays as compiled: level `0x60`
//! (DFA pass + call graph: calls resolved, callees' return types known to callers) or
//! `0x20` (DFA pass alone). At other levels the analysis is of the op_arrays as given.
//!
//! ```
//! use zend_optimizer::analysis::{analyze_script, type_name};
//!
//! // What `zopt record` writes for `<?php function inc(int $a) { return $a + 1; }`.
//! let script = zend_ir::zop::parse(
//!     r#"zop 1
//! script "/tmp/inc.php"
//! main {
//!   T 0
//!   #0 = int(1)
//!   0000 RETURN #0:int(1)
//! }
//! function "inc" {
//!   name "inc"
//!   args 1 required 1
//!   arg $a type(0x00000010) ; int
//!   T 1
//!   vars $a
//!   #0 = int(1)
//!   #1 = null
//!   0000 CV0($a) = RECV 1 16
//!   0001 T1 = ADD CV0($a) #0:int(1)
//!   0002 RETURN T1
//!   0003 RETURN #1:null
//! }
//! "#,
//! )?;
//! let analysis = analyze_script(&script, 0x60);
//! for function in analysis.functions() {
//!     let f = function.analysis.map_err(|reason| reason.to_string())?;
//!     if function.name == "inc" {
//!         let ret = f.inference.return_info.as_ref().unwrap();
//!         // PHP: `inc` returns [long, double] (the addition may overflow).
//!         assert_eq!(type_name(ret.type_), "long, double");
//!         // SSA variable #1 is $a after RECV: an int.
//!         assert_eq!(type_name(f.inference.vars[1].type_), "long");
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::time::{Duration, Instant};

use bumpalo::Bump;
use zend_call_graph::{CallGraph, ScriptInfo};
use zend_cfg::{BuildFlags, Cfg, CfgBuffers, CfgError, FuncFlags};
use zend_dfg::Dfg;
use zend_inference::{Context, Inference, ReturnInfo};
use zend_ir::dump::{debug_level, FuncInfoHeader};
use zend_ir::{OpArray, Script, ZEND_EVAL_CODE};
use zend_ssa::{ClassLookup, Ssa, SsaBuffers, SsaError};

/// Resolves class names as `zend_optimizer_get_class_entry` does, for instanceof pis.
pub struct Classes<'a>(pub &'a ScriptInfo<'a>);

impl ClassLookup for Classes<'_> {
    fn class_entry(&self, op_array: &OpArray, lcname: &[u8]) -> Option<Vec<u8>> {
        self.0
            .class_entry(Some(op_array), lcname)
            .map(|c| c.name().to_vec())
    }
}

/// Why the DFA pass leaves an op_array alone (`zend_dfa_analyze_op_array` returning
/// FAILURE, or never called).
#[derive(Debug)]
pub enum Refused {
    /// Code compiled by `eval()`: the optimizer skips it.
    EvalCode,
    /// try/catch/finally: nothing is analysed or dumped.
    TryCatch,
    /// Malformed op_array.
    Cfg(CfgError),
    /// Indirect variable access (`$$name`, `extract()`, `compact()`...): nothing is dumped.
    IndirectVarAccess,
    /// SSA could not be built.
    Ssa(SsaError),
    /// Type inference failed ("Narrowing warning"): PHP drops the function's analysis.
    Inference,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::EvalCode => f.write_str("eval()'d code is not optimized"),
            Refused::TryCatch => f.write_str("the DFA pass skips functions with try/catch/finally"),
            Refused::Cfg(e) => write!(f, "no CFG: {e}"),
            Refused::IndirectVarAccess => {
                f.write_str("the DFA pass skips functions with indirect variable access")
            }
            Refused::Ssa(e) => write!(f, "no SSA: {e}"),
            Refused::Inference => f.write_str("type inference failed (narrowing)"),
        }
    }
}

impl std::error::Error for Refused {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Refused::Cfg(e) => Some(e),
            Refused::Ssa(e) => Some(e),
            _ => None,
        }
    }
}

/// A MAY_BE type mask as PHP's types dump names it, without the brackets: `long, double`,
/// `array of [long]`. An object's class is not part of the mask: it is in
/// [`zend_inference::VarInfo::ce`].
pub fn type_name(mask: u32) -> String {
    let mut out = Vec::new();
    zend_ir::dump::dump_type_info(&mut out, mask, None, 0);
    let text = String::from_utf8_lossy(&out);
    let text = text.trim();
    let text = text.strip_prefix('[').unwrap_or(text);
    text.strip_suffix(']').unwrap_or(text).to_string()
}

/// The CFG as the DFA pass builds it, or why it does not.
pub fn dfa_cfg(op_array: &OpArray) -> Result<Cfg, Refused> {
    dfa_cfg_in(op_array, &Bump::new(), CfgBuffers::default(), false)
}

/// [`dfa_cfg`], with the CFG's working arrays in `scratch`, into `buffers`; without the
/// operand check when `operands_checked` ([`BuildFlags::OPERANDS_CHECKED`]).
fn dfa_cfg_in(
    op_array: &OpArray,
    scratch: &Bump,
    buffers: CfgBuffers,
    operands_checked: bool,
) -> Result<Cfg, Refused> {
    if op_array.type_ == ZEND_EVAL_CODE {
        return Err(Refused::EvalCode);
    }
    if !op_array.try_catch_array.is_empty() {
        return Err(Refused::TryCatch);
    }
    let mut flags = BuildFlags::NO_ENTRY_PREDECESSORS;
    flags.set(BuildFlags::OPERANDS_CHECKED, operands_checked);
    let cfg = Cfg::build_reusing(op_array, flags, scratch, buffers).map_err(Refused::Cfg)?;
    if cfg.func_flags.contains(FuncFlags::INDIRECT_VAR_ACCESS) {
        return Err(Refused::IndirectVarAccess);
    }
    Ok(cfg)
}

/// The def/use sets and the SSA form the DFA pass builds (`cfg` from [`dfa_cfg`]).
pub fn dfa_ssa(op_array: &OpArray, cfg: &Cfg, info: &ScriptInfo) -> (Dfg, Result<Ssa, SsaError>) {
    let dfg = dfa_dfg(op_array, cfg);
    let ssa = dfa_ssa_from(op_array, cfg, &dfg, info);
    (dfg, ssa)
}

fn dfa_dfg(op_array: &OpArray, cfg: &Cfg) -> Dfg {
    Dfg::build(op_array, cfg, BuildFlags::empty())
}

fn dfa_ssa_from(
    op_array: &OpArray,
    cfg: &Cfg,
    dfg: &Dfg,
    info: &ScriptInfo,
) -> Result<Ssa, SsaError> {
    dfa_ssa_in(
        op_array,
        cfg,
        dfg,
        info,
        &Bump::new(),
        SsaBuffers::default(),
    )
}

fn dfa_ssa_in(
    op_array: &OpArray,
    cfg: &Cfg,
    dfg: &Dfg,
    info: &ScriptInfo,
    scratch: &Bump,
    buffers: SsaBuffers,
) -> Result<Ssa, SsaError> {
    Ssa::build_reusing(
        op_array,
        cfg,
        dfg,
        &Classes(info),
        BuildFlags::empty(),
        scratch,
        buffers,
    )
}

/// Everything the DFA pass knows about one op_array.
pub struct FuncAnalysis {
    /// Basic blocks, successors and predecessors, the dominator tree and loops.
    pub cfg: Cfg,
    /// Def/use sets and liveness per block.
    pub dfg: Dfg,
    /// With false dependencies, SCCs and escape states.
    pub ssa: Ssa,
    /// Types and ranges of every SSA variable, and the return info.
    pub inference: Inference,
}

/// The memory of analyses no longer needed, for the next ones: the vectors of their CFGs,
/// SSA forms and liveness sets. A driver analysing script after script keeps one, so that
/// analysing an op_array allocates none of these once they have grown. It holds at most
/// [`AnalysisPool::CAP`] of each, from functions of at most [`AnalysisPool::MAX_OPS`] ops,
/// since it lives as long as its owner: what is given back past that is freed.
#[derive(Default)]
pub struct AnalysisPool {
    cfg: Vec<CfgBuffers>,
    ssa: Vec<SsaBuffers>,
    dfg: Vec<Vec<u64>>,
}

impl AnalysisPool {
    /// Most scripts analyse fewer op_arrays than this (the Debian corpus: 9084 op_arrays
    /// in 1097 files, 8 on average). The driver gives a script's analyses back only once
    /// all are done, so a script of more op_arrays than the pool holds allocates for the
    /// rest: at 16, those of the corpus's bigger scripts cost 0.5M instructions of 564M.
    pub const CAP: usize = 64;
    /// A pooled vector keeps the room of the largest function it served, for as long as
    /// the pool lives (a php-fpm worker's life): with 64 of each kind, functions above
    /// this size would keep megabytes. Their allocations are few for their ops (4096 here
    /// saved 0.03M instructions of 543M).
    pub const MAX_OPS: usize = 1024;

    /// Takes the memory of `analysis` (which is left without it), within the bounds.
    pub fn give(&mut self, analysis: &mut FuncAnalysis) {
        if analysis.cfg.map.len() > Self::MAX_OPS || self.cfg.len() >= Self::CAP {
            return;
        }
        self.cfg.push(analysis.cfg.take_buffers());
        self.ssa.push(analysis.ssa.take_buffers());
        self.dfg.push(analysis.dfg.take_words());
    }
}

/// The analyses of every op_array of a script, in `zend_foreach_op_array` order
/// ([`ScriptInfo::op_arrays`]).
pub struct ScriptAnalysis<'s> {
    /// The script's op_arrays in order, its classes and functions by name.
    pub info: ScriptInfo<'s>,
    pub optimization_level: u32,
    /// Per op_array (same index as `info.op_arrays`), its analysis or why PHP has none.
    pub functions: Vec<Result<FuncAnalysis, Refused>>,
    /// Call sites, callers and callees, recursion flags (`zend_build_call_graph`).
    pub call_graph: CallGraph,
}

/// One op_array of a [`ScriptAnalysis`], as [`ScriptAnalysis::functions`] yields it.
pub struct Function<'a> {
    /// Index in [`ScriptInfo::op_arrays`] (and [`ScriptAnalysis::functions`]).
    pub index: usize,
    /// `$_main`, `name`, `Class::method` or `{closure}`, as PHP's dumps name it.
    pub name: String,
    pub op_array: &'a OpArray,
    /// The analysis, or the typed reason PHP's DFA pass does not analyse this op_array.
    pub analysis: Result<&'a FuncAnalysis, &'a Refused>,
    info: &'a ScriptInfo<'a>,
}

impl Function<'_> {
    /// Every call of this op_array (each `INIT_*` with its `SEND_*`s and `DO_*`), those
    /// whose function is not known included.
    pub fn calls(&self) -> Vec<zend_call_graph::CallSite> {
        zend_call_graph::call_sites(self.info, self.op_array)
    }
}

impl<'s> ScriptAnalysis<'s> {
    /// Every op_array with its name, analysis (or reason) and call sites.
    pub fn functions(&self) -> impl Iterator<Item = Function<'_>> + '_ {
        self.functions.iter().enumerate().map(|(index, analysis)| {
            let op_array = self.info.op_arrays[index];
            Function {
                index,
                name: op_array.display_name(),
                op_array,
                analysis: analysis.as_ref(),
                info: &self.info,
            }
        })
    }

    /// For op_array `index`, per op, the index of the call (in [`Function::calls`]) it
    /// belongs to. `None` when `index` is out of range.
    pub fn call_map(&self, index: usize) -> Option<Vec<Option<usize>>> {
        let op_array = self.info.op_arrays.get(index)?;
        let calls = zend_call_graph::call_sites(&self.info, op_array);
        Some(zend_call_graph::call_map(&calls, op_array.opcodes.len()))
    }
}

/// Analyses every op_array of `script` as the DFA pass does at `optimization_level`: with
/// the call graph (PASS_6 and PASS_7) calls are resolved and each function's return info,
/// once analysed, feeds the functions analysed after it.
// Never inlined: with LTO it would vanish into its callers, and profiles and benches
// (`callgrind --toggle-collect`) measure the analyses by this symbol.
#[inline(never)]
pub fn analyze_script(script: &Script, optimization_level: u32) -> ScriptAnalysis<'_> {
    script_analysis(script, optimization_level, &mut None)
}

fn script_analysis<'s>(
    script: &'s Script,
    optimization_level: u32,
    times: &mut Option<&mut StageTimes>,
) -> ScriptAnalysis<'s> {
    let info = ScriptInfo::new(script);
    let functions = {
        let ctx = Context::new(&info, optimization_level);
        let mut returns = ctx.initial_return_infos();
        // One arena for the working arrays of every op_array's analyses, emptied between
        // op_arrays: after the first few, analysing one allocates only its results.
        let mut scratch = Bump::new();
        (0..info.op_arrays.len())
            .map(|index| {
                scratch.reset();
                let op_array = info.op_arrays[index];
                analyze(
                    &info,
                    &ctx,
                    op_array,
                    Some(index),
                    &mut returns,
                    None,
                    times,
                    &scratch,
                    &mut AnalysisPool::default(),
                    false,
                )
                .map(|fa| *fa)
            })
            .collect()
    };
    let call_graph = CallGraph::build(&info);
    ScriptAnalysis {
        info,
        optimization_level,
        functions,
        call_graph,
    }
}

/// Where `zend_dfa_analyze_op_array` prints its dumps while it analyses: the debug bits
/// asked for (`ZEND_DUMP_DFA_*`) and the function-info header of the op_array when the
/// call graph gave it one.
pub struct AnalysisDumps<'o> {
    pub out: &'o mut Vec<u8>,
    pub debug_level: u32,
    pub header: Option<FuncInfoHeader>,
}

/// `zend_dfa_analyze_op_array` for op_array `index` of `ctx.info`; `returns` are the return
/// infos known so far, updated with this function's.
pub fn analyze_op_array(
    info: &ScriptInfo,
    ctx: &Context,
    index: usize,
    returns: &mut [Option<ReturnInfo>],
) -> Result<FuncAnalysis, Refused> {
    analyze_op_array_dumped(info, ctx, index, returns, None)
}

/// [`analyze_op_array`], printing the analysis dumps (`dfa cfg`, dominators, liveness,
/// phi placement, `dfa ssa`, SSA variables) at the points PHP prints them.
pub fn analyze_op_array_dumped(
    info: &ScriptInfo,
    ctx: &Context,
    index: usize,
    returns: &mut [Option<ReturnInfo>],
    dumps: Option<AnalysisDumps>,
) -> Result<FuncAnalysis, Refused> {
    let pool = &mut AnalysisPool::default();
    analyze_op_array_pooled(info, ctx, index, returns, dumps, &Bump::new(), pool, false)
        .map(|fa| *fa)
}

/// [`analyze_op_array_dumped`] for a driver analysing many op_arrays: the working arrays
/// in `scratch` (reset between op_arrays), the results' vectors taken from `pool` where it
/// has some; `operands_checked` when the driver has checked the op_array's operands
/// ([`zend_cfg::check_operands`]), which the CFG build then does not. Boxed: the driver
/// keeps every analysis of a script until its last pass, and moving the analysis (some
/// hundred bytes) from result to result cost a copy each time.
#[allow(clippy::too_many_arguments)]
pub fn analyze_op_array_pooled(
    info: &ScriptInfo,
    ctx: &Context,
    index: usize,
    returns: &mut [Option<ReturnInfo>],
    dumps: Option<AnalysisDumps>,
    scratch: &Bump,
    pool: &mut AnalysisPool,
    operands_checked: bool,
) -> Result<Box<FuncAnalysis>, Refused> {
    let op_array = info.op_arrays[index];
    analyze(
        info,
        ctx,
        op_array,
        Some(index),
        returns,
        dumps,
        &mut None,
        scratch,
        pool,
        operands_checked,
    )
}

/// `zend_dfa_analyze_op_array` without the call graph, for an op_array that is not one of
/// `info`'s (the optimizer's per-op_array DFA pass analyses the op_array it is changing,
/// against the script's function and class tables): nothing about it is looked up by its
/// position, so no call is resolved to it and no return info is kept.
pub fn analyze_detached(
    info: &ScriptInfo,
    ctx: &Context,
    op_array: &OpArray,
    dumps: Option<AnalysisDumps>,
) -> Result<FuncAnalysis, Refused> {
    analyze(
        info,
        ctx,
        op_array,
        None,
        &mut [],
        dumps,
        &mut None,
        &Bump::new(),
        &mut AnalysisPool::default(),
        false,
    )
    .map(|fa| *fa)
}

/// Time spent in each stage of the analysis, summed over the op_arrays analysed
/// ([`analyze_script_timed`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct StageTimes {
    /// The CFG with its dominator tree and loops.
    pub cfg: Duration,
    /// Def/use sets and liveness.
    pub dfg: Duration,
    /// e-SSA construction with use-def chains.
    pub ssa: Duration,
    /// False dependencies and SCCs.
    pub sccs: Duration,
    /// Types and ranges.
    pub inference: Duration,
    /// Escape analysis.
    pub escape: Duration,
}

impl StageTimes {
    /// The stages by name, in the order they run.
    pub fn stages(&self) -> [(&'static str, Duration); 6] {
        [
            ("cfg", self.cfg),
            ("dfg", self.dfg),
            ("ssa", self.ssa),
            ("sccs", self.sccs),
            ("inference", self.inference),
            ("escape", self.escape),
        ]
    }
}

/// [`analyze_script`], adding the time of each stage to `times` (the clock read around
/// every stage of every op_array: slower than [`analyze_script`]).
pub fn analyze_script_timed<'s>(
    script: &'s Script,
    optimization_level: u32,
    times: &mut StageTimes,
) -> ScriptAnalysis<'s> {
    script_analysis(script, optimization_level, &mut Some(times))
}

/// Adds the time since `*clock` to `slot` and restarts the clock, when timing.
fn lap(
    times: &mut Option<&mut StageTimes>,
    clock: &mut Option<Instant>,
    slot: fn(&mut StageTimes) -> &mut Duration,
) {
    if let (Some(t), Some(c)) = (times.as_deref_mut(), clock.as_mut()) {
        let now = Instant::now();
        *slot(t) += now - *c;
        *c = now;
    }
}

/// The analyses of `op_array`, which is `info.op_arrays[index]` when `index` is given.
#[allow(clippy::too_many_arguments)]
fn analyze(
    info: &ScriptInfo,
    ctx: &Context,
    op_array: &OpArray,
    index: Option<usize>,
    returns: &mut [Option<ReturnInfo>],
    mut dumps: Option<AnalysisDumps>,
    times: &mut Option<&mut StageTimes>,
    scratch: &Bump,
    pool: &mut AnalysisPool,
    operands_checked: bool,
) -> Result<Box<FuncAnalysis>, Refused> {
    let mut clock = times.is_some().then(Instant::now);
    let buffers = pool.cfg.pop().unwrap_or_default();
    let cfg = dfa_cfg_in(op_array, scratch, buffers, operands_checked)?;
    lap(times, &mut clock, |t| &mut t.cfg);
    if let Some(d) = dumps.as_mut() {
        if d.debug_level & debug_level::DFA_CFG != 0 {
            zend_cfg::dump::dump_cfg(
                d.out,
                op_array,
                &cfg,
                zend_cfg::dump::Detail::Blocks,
                d.header.as_ref(),
                Some("dfa cfg"),
            );
        }
        if d.debug_level & debug_level::DFA_DOMINATORS != 0 {
            zend_cfg::dump::dump_dominators(d.out, op_array, &cfg);
        }
    }
    // A function too big for SSA gets no liveness either (PHP refuses it first).
    Ssa::check_size(op_array, &cfg).map_err(Refused::Ssa)?;
    let dfg = Dfg::build_reusing(
        op_array,
        &cfg,
        BuildFlags::empty(),
        scratch,
        pool.dfg.pop().unwrap_or_default(),
    );
    lap(times, &mut clock, |t| &mut t.dfg);
    let ssa = dfa_ssa_in(
        op_array,
        &cfg,
        &dfg,
        info,
        scratch,
        pool.ssa.pop().unwrap_or_default(),
    );
    lap(times, &mut clock, |t| &mut t.ssa);
    if let Some(d) = dumps.as_mut() {
        if ssa.is_ok() && d.debug_level & debug_level::DFA_LIVENESS != 0 {
            zend_dfg::dump_dfg(d.out, op_array, &cfg, &dfg);
        }
    }
    let mut ssa = ssa.map_err(Refused::Ssa)?;
    if let Some(d) = dumps.as_mut() {
        if d.debug_level & debug_level::DFA_PHI != 0 {
            zend_ssa::dump::dump_phi_placement(d.out, op_array, &cfg, &ssa);
        }
        if d.debug_level & debug_level::DFA_SSA != 0 {
            zend_ssa::dump::dump_ssa(
                d.out,
                op_array,
                &cfg,
                &ssa,
                d.header.as_ref(),
                Some("dfa ssa"),
            );
        }
    }
    ssa.find_false_dependencies_in(op_array, scratch);
    let phi_uses = ssa.all_phi_uses(scratch);
    let usages = ssa.var_usages_in(op_array, &phi_uses, scratch);
    ssa.find_sccs_in(&usages, scratch);
    lap(times, &mut clock, |t| &mut t.sccs);
    let inference = zend_inference::infer_in(
        op_array, index, &cfg, &ssa, ctx, returns, &phi_uses, &usages, scratch,
    );
    lap(times, &mut clock, |t| &mut t.inference);
    if inference.failed {
        if let Some(index) = index {
            returns[index] = None;
        }
        return Err(Refused::Inference);
    }
    if let (Some(index), Some(ri)) = (index, &inference.return_info) {
        returns[index] = Some(ri.clone());
    }
    // Sized first: bumpalo's collect grows the vector from empty.
    let mut types = bumpalo::collections::Vec::with_capacity_in(inference.vars.len(), scratch);
    types.extend(inference.vars.iter().map(|v| v.type_));
    zend_escape::set_escape_states(op_array, &cfg, &mut ssa, &types, info);
    lap(times, &mut clock, |t| &mut t.escape);
    if let Some(d) = dumps.as_mut() {
        if d.debug_level & debug_level::DFA_SSA_VARS != 0 {
            zend_inference::dump::dump_ssa_variables(d.out, op_array, &ssa, &inference);
        }
    }
    Ok(Box::new(FuncAnalysis {
        cfg,
        dfg,
        ssa,
        inference,
    }))
}
