//! The DFA pass (PASS_6): mirrors Zend/Optimizer/dfa_pass.c's `zend_dfa_optimize_op_array`
//! and `zend_optimize_dfa` as PHP 8.2 has them.
//!
//! The analyses come from [`crate::analysis`] (`zend_dfa_analyze_op_array`); this module
//! changes the op_array through them: the "before dfa pass" dump, SCCP (PASS_8) and DCE
//! (PASS_14) where they are implemented, with `zend_dfa_optimize_jmps` after each, the
//! `in_array()` rewrite of `zend_dfa_optimize_calls`, then one walk over the SSA variables
//! that rewrites by inferred types (long constants used as doubles, `ADD`/`SUB` of zero,
//! `CONCAT` to `FAST_CONCAT`, redundant `VERIFY_RETURN_TYPE`, a temporary copied into a CV
//! folded into the op that computed it, `ASSIGN` to `QM_ASSIGN`, `+= 1` to `++`, compound
//! assignments of scalars to plain operators, `$i++ < $n` to `++$i <= $n`), the NOP
//! compaction (`zend_ssa_remove_nops`) and the "after dfa pass" dump.
//!
//! Every edit keeps the SSA form consistent (use chains, definitions, phis, the CFG's
//! edges), so the dumps print PHP's bytes and what runs after (PASS_9..13, the live-range
//! predicate of the call-graph path, the handler types of the write-back) reads the same
//! facts PHP reads. Guarantees: nothing is changed for an op_array the analysis refused;
//! with [`crate::script::verify`] on, the SSA verifier runs after the pass.

// The rewrites keep dfa_pass.c's case-then-condition shape.
#![allow(clippy::collapsible_match)]

use zend_call_graph::CallSite;
use zend_cfg::{BlockId, Cfg};
use zend_inference::{const_type, mb, VarInfo};
use zend_ir::dump::{FuncInfoHeader, SsaRange};
use zend_ir::opcode::*;
use zend_ir::{
    ArrayKey, Literal, OpArray, OpNum, Operand, PhpDouble, Script, VarNum, IS_CV, IS_TMP_VAR,
    IS_UNUSED, IS_VAR,
};
use zend_ssa::edit::make_nop;
use zend_ssa::{Alias, SsaVar, VarTypes};

use crate::analysis::FuncAnalysis;
use crate::ctx::OptimizerCtx;
use crate::helpers::add_literal;
use crate::level::*;
use crate::may_throw::{may_throw, TypeView};
use crate::php_bugs::PhpBugs;
use crate::provenance::ChangeKind;

/// `ZEND_DUMP_BEFORE_DFA_PASS` / `ZEND_DUMP_AFTER_DFA_PASS` (opt_debug_level bits).
pub const DUMP_BEFORE_DFA_PASS: u32 = 0x200000;
pub const DUMP_AFTER_DFA_PASS: u32 = 0x400000;
/// `ZEND_DUMP_AFTER_PASS_8` / `_14`: "after sccp pass", "after dce pass".
const DUMP_AFTER_PASS_8: u32 = 1 << 7;
const DUMP_AFTER_PASS_14: u32 = 1 << 13;

/// Everything `MAY_BE_*` an operand without SSA information may be (`get_ssa_var_info`
/// with no variable).
const UNKNOWN_INFO: u32 = mb::UNDEF
    | mb::RC1
    | mb::RCN
    | mb::REF
    | mb::INDIRECT
    | mb::ANY
    | mb::ARRAY_KEY_ANY
    | mb::ARRAY_OF_ANY
    | mb::ARRAY_OF_REF;

/// Types that make a value refcounted (or a reference): what a copy or a free must care
/// about.
const REFCOUNTED: u32 = mb::STRING | mb::ARRAY | mb::OBJECT | mb::RESOURCE | mb::REF;

/// SCCP (PASS_8) and DCE (PASS_14) run inside the DFA pass only once their bit is in
/// [`crate::script::IMPLEMENTED_PASSES`].
const IMPLEMENTED_SSA_PASSES: u32 = crate::script::IMPLEMENTED_PASSES & (PASS_8 | PASS_14);

/// What one function's DFA pass works on: its analyses, and with the call graph its
/// function info (the header of its dumps and its call sites, PHP's `callee_info`).
pub struct DfaInput<'a> {
    pub analysis: &'a mut FuncAnalysis,
    /// `ZEND_FUNC_INFO(op_array)`: present on the call-graph path.
    pub func_info: Option<&'a mut FuncInfo>,
    /// When given, the op_array and SSA verifiers run after every step of the pass (SCCP,
    /// each `zend_dfa_optimize_jmps`, the call rewrite, DCE, the type rewrites; the driver
    /// checks what the NOP compaction leaves), as a debug build of PHP runs `ssa_verify_integrity` after each, and
    /// their failures are appended here.
    pub step_checks: Option<&'a mut Vec<String>>,
}

/// Runs the verifiers after `step` when [`DfaInput::step_checks`] asks for it. Inlined
/// into the pass, which calls it after every step of every op_array, where it rarely has
/// anything to do.
#[inline(always)]
fn check_step(
    op_array: &OpArray,
    fa: &FuncAnalysis,
    step: &str,
    errors: &mut Option<&mut Vec<String>>,
) {
    if let Some(errors) = errors.as_deref_mut() {
        verify_step(op_array, fa, step, errors);
    }
}

#[cold]
fn verify_step(op_array: &OpArray, fa: &FuncAnalysis, step: &str, errors: &mut Vec<String>) {
    if let Err(e) = crate::verify::operands(op_array) {
        errors.push(format!("after {step}: {}: {e}", op_array.display_name()));
    }
    if let Err(e) = crate::verify::ssa(op_array, &fa.cfg, &fa.ssa) {
        errors.push(format!("after {step} (ssa): {e}"));
    }
}

/// The parts of `zend_func_info` the DFA pass reads and keeps up to date.
#[derive(Clone, Debug, Default)]
pub struct FuncInfo {
    /// `func_info->flags` (`ZEND_FUNC_*`): the CFG's flags once analysed.
    pub flags: u32,
    /// The return info printed in dump headers.
    pub return_type: u32,
    pub return_ce: Option<(Vec<u8>, bool)>,
    pub return_range: SsaRange,
    /// `callee_info`: the calls this function makes whose function is known, in INIT order.
    pub callee_info: Vec<CallSite>,
}

impl FuncInfo {
    pub fn header(&self) -> FuncInfoHeader {
        FuncInfoHeader {
            flags: self.flags,
            return_type: self.return_type,
            return_ce: self.return_ce.clone(),
            return_range: self.return_range,
        }
    }
}

/// `zend_optimize_dfa`: PASS_6 on one op_array without the call graph. `info` describes
/// the script's functions and classes, which the analysis looks up by name only (their
/// signatures, properties and constants, which no pass changes), so one built before
/// optimizing serves every op_array. Returns the analysis the pass worked on (the handler
/// types and the live-range predicate read it), or `None` when
/// `zend_dfa_analyze_op_array` refused the op_array.
pub fn optimize_dfa(
    op_array: &mut OpArray,
    ctx: &mut OptimizerCtx,
    info: &zend_call_graph::ScriptInfo,
    step_checks: Option<&mut Vec<String>>,
) -> Option<FuncAnalysis> {
    let mut analysis = {
        let ictx = zend_inference::Context::new(info, ctx.optimization_level);
        let dumps = crate::analysis::AnalysisDumps {
            out: &mut ctx.state.dumps,
            debug_level: ctx.debug_level,
            header: None,
        };
        crate::analysis::analyze_detached(info, &ictx, op_array, Some(dumps)).ok()?
    };
    optimize_op_array(
        op_array,
        ctx,
        DfaInput {
            analysis: &mut analysis,
            func_info: None,
            step_checks,
        },
    );
    Some(analysis)
}

/// A view of the inferred types for [`Ssa::rename_var_uses`]'s phi widening.
pub struct Types<'a>(pub &'a mut [VarInfo]);

impl VarTypes for Types<'_> {
    fn type_mask(&self, var: SsaVar) -> u32 {
        self.0[var.index()].type_
    }

    fn set_type_mask(&mut self, var: SsaVar, mask: u32) {
        self.0[var.index()].type_ = mask;
    }
}

/// `zend_dump_op_array(op_array, ZEND_DUMP_SSA, msg, ssa)` with the variables' types.
pub fn dump(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    analysis: &FuncAnalysis,
    header: Option<&FuncInfoHeader>,
    msg: &str,
) {
    let ssa = &analysis.ssa;
    let vars = &analysis.inference.vars;
    let info = |out: &mut Vec<u8>, n: u32| {
        let n = n as usize;
        if let Some(var) = ssa.vars.get(n) {
            if var.no_val {
                out.extend_from_slice(b" NOVAL");
            }
            if var.escape_state == zend_ssa::EscapeState::NoEscape {
                out.extend_from_slice(b" NOESC");
            }
        }
        if let Some(v) = vars.get(n) {
            zend_ir::dump::dump_type_info(
                out,
                v.type_,
                v.ce.as_ref().map(|c| (c.name.as_slice(), v.is_instanceof)),
                0,
            );
            if v.has_range {
                zend_ir::dump::dump_range(out, &v.range);
            }
        }
    };
    zend_ssa::dump::dump_ssa_ex(
        out,
        op_array,
        &analysis.cfg,
        ssa,
        header,
        Some(msg),
        Some(&info),
    );
}

/// `zend_dfa_optimize_op_array`.
pub fn optimize_op_array(op_array: &mut OpArray, ctx: &mut OptimizerCtx, input: DfaInput) {
    let DfaInput {
        analysis: fa,
        func_info,
        mut step_checks,
    } = input;
    let header = func_info.as_ref().map(|f| f.header());
    if ctx.debug_level & DUMP_BEFORE_DFA_PASS != 0 {
        dump(
            &mut ctx.state.dumps,
            op_array,
            fa,
            header.as_ref(),
            "before dfa pass",
        );
    }
    let level = ctx.optimization_level;
    let mut remove_nops = false;

    if level & PASS_8 != 0 && IMPLEMENTED_SSA_PASSES & PASS_8 != 0 {
        let call_map = func_info
            .as_deref()
            .map(|fi| crate::sccp::CallMap::new(op_array, &fi.callee_info));
        if crate::sccp::sccp_optimize_op_array(
            ctx,
            op_array,
            &mut fa.ssa,
            &mut fa.cfg,
            &mut fa.inference.vars,
            call_map.as_ref(),
        ) > 0
        {
            remove_nops = true;
        }
        check_step(op_array, fa, "sccp", &mut step_checks);
        if optimize_jmps(op_array, ctx, fa) > 0 {
            remove_nops = true;
        }
        check_step(op_array, fa, "jmps after sccp", &mut step_checks);
        if let Some(fi) = func_info.as_deref() {
            if optimize_calls(op_array, ctx, fa, fi) > 0 {
                remove_nops = true;
            }
            check_step(op_array, fa, "calls", &mut step_checks);
        }
        if ctx.debug_level & DUMP_AFTER_PASS_8 != 0 {
            dump(
                &mut ctx.state.dumps,
                op_array,
                fa,
                header.as_ref(),
                "after sccp pass",
            );
        }
    }
    if level & PASS_14 != 0 && IMPLEMENTED_SSA_PASSES & PASS_14 != 0 {
        if crate::dce::run_in_dfa(op_array, ctx, fa) {
            remove_nops = true;
        }
        check_step(op_array, fa, "dce", &mut step_checks);
        if optimize_jmps(op_array, ctx, fa) > 0 {
            remove_nops = true;
        }
        check_step(op_array, fa, "jmps after dce", &mut step_checks);
        if ctx.debug_level & DUMP_AFTER_PASS_14 != 0 {
            dump(
                &mut ctx.state.dumps,
                op_array,
                fa,
                header.as_ref(),
                "after dce pass",
            );
        }
    }

    if rewrite_vars(op_array, ctx, fa) {
        remove_nops = true;
    }
    check_step(op_array, fa, "type rewrites", &mut step_checks);

    if remove_nops {
        // The driver's check after the pass verifies what the compaction left.
        remove_nops_and_calls(op_array, fa, func_info);
        if !ctx
            .php_bugs
            .contains(crate::PhpBugs::DANGLING_JUMP_TABLE_ENTRY)
        {
            retarget_dangling_jump_table_entries(op_array, &fa.cfg);
        }
    }

    if ctx.debug_level & DUMP_AFTER_DFA_PASS != 0 {
        dump(
            &mut ctx.state.dumps,
            op_array,
            fa,
            header.as_ref(),
            "after dfa pass",
        );
    }
}

/// Points the jump table entries that name no op (past the end of the op_array) at the
/// op's default target. PHP's compaction leaves the entry of a case that SCCP proved
/// infeasible naming its removed target, past the new end when that was the last code;
/// the entry is never taken, but a CFG built from the op_array reads past its end for it
/// (php-src GH-20733, GH-21404). The default target is as unreachable through it. A jump
/// table ends its block, so only the last op of each kept block (`cfg` as the compaction
/// left it) can have one.
fn retarget_dangling_jump_table_entries(op_array: &mut OpArray, cfg: &Cfg) {
    let last = op_array.opcodes.len() as i64;
    for block in &cfg.blocks {
        if !block.is_reachable() || block.len == 0 {
            continue;
        }
        let at = (block.start + block.len - 1) as usize;
        let Some(op) = op_array.opcodes.get(at) else {
            continue;
        };
        if !matches!(
            op.opcode,
            ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH
        ) {
            continue;
        }
        let default = i64::from(op.extended_value);
        let Operand::Const(table) = op.op2 else {
            continue;
        };
        if let Some(Literal::Array(entries)) = op_array.literals.get_mut(table.index()) {
            for target in entries.values_mut() {
                if matches!(target, Literal::Long(t) if *t >= last) {
                    *target = Literal::Long(default);
                }
            }
        }
    }
}

/// `zend_ssa_remove_nops` with the call-site bookkeeping PHP does around it: calls whose
/// INIT op became a NOP are dropped, the others follow their ops.
fn remove_nops_and_calls(
    op_array: &mut OpArray,
    fa: &mut FuncAnalysis,
    func_info: Option<&mut FuncInfo>,
) {
    let mut func_info = func_info;
    if let Some(fi) = func_info.as_deref_mut() {
        fi.callee_info.retain(|c| {
            op_array
                .opcodes
                .get(c.init.index())
                .is_some_and(|o| o.opcode != ZEND_NOP)
        });
    }
    let renumbering = fa.ssa.remove_nops(op_array, &mut fa.cfg);
    if let Some(fi) = func_info {
        if !renumbering.is_identity() {
            // A call op removed after the last kept op keeps its old number in PHP's
            // shift list, past the new end: no op is the call any more.
            let new_len = op_array.opcodes.len();
            for c in &mut fi.callee_info {
                c.init = renumbering.new_op(c.init);
                c.call = c
                    .call
                    .map(|op| renumbering.new_op(op))
                    .filter(|op| op.index() < new_len);
                for a in &mut c.args {
                    *a = renumbering.new_op(*a);
                }
            }
        }
    }
}

// ---- operand information -------------------------------------------------------------

fn var_type(fa: &FuncAnalysis, v: SsaVar) -> u32 {
    fa.inference
        .vars
        .get(v.index())
        .map_or(UNKNOWN_INFO, |i| i.type_)
}

fn literal(op_array: &OpArray, operand: Operand) -> Option<&Literal> {
    match operand {
        Operand::Const(l) => op_array.literals.get(l.index()),
        _ => None,
    }
}

/// `OP1_INFO()`: the type of op1 (a constant's own type, an SSA use's inferred type).
fn op1_info(op_array: &OpArray, fa: &FuncAnalysis, op: usize) -> u32 {
    operand_info(
        op_array,
        fa,
        op_array.opcodes[op].op1,
        fa.ssa.ops[op].op1_use,
        &var_type,
    )
}

fn op2_info(op_array: &OpArray, fa: &FuncAnalysis, op: usize) -> u32 {
    operand_info(
        op_array,
        fa,
        op_array.opcodes[op].op2,
        fa.ssa.ops[op].op2_use,
        &var_type,
    )
}

fn operand_info(
    op_array: &OpArray,
    fa: &FuncAnalysis,
    operand: Operand,
    used: Option<SsaVar>,
    vm_type: &impl Fn(&FuncAnalysis, SsaVar) -> u32,
) -> u32 {
    if let Some(lit) = literal(op_array, operand) {
        return const_type(lit);
    }
    match used {
        Some(v) => vm_type(fa, v),
        None => UNKNOWN_INFO,
    }
}

/// `zend_redo_pass_two_ex`'s handler selection as far as it changes the op_array, and the
/// `(op1_info, op2_info, res_info)` of every op as it hands them to
/// `zend_vm_set_opcode_handler_ex`: the operands' inferred types cut to the bits handler
/// selection looks at. As in PHP 8.2, op2's is 0 when *op1* is unused, and the result of an
/// increment or decrement is the type the variable gets (`OP1_DEF_INFO`, any value when
/// the op defines none). Unless `bugs` reproduces [`PhpBugs::NARROWED_LONG_HANDLERS`], a
/// variable's type includes what narrowing to doubles took out of it.
///
/// Handler selection swaps the operands of commutative ops so that the operand with the
/// larger type (CV > VAR > TMP > CONST) comes first, for `MUL`, the (non-)identity and
/// (non-)equality comparisons, the bitwise ops and `XOR` always, for `ADD` when both
/// operands are longs or both doubles; the swapped ops' entries are swapped too. One walk
/// over the ops does both.
pub fn redo_pass_two_ex(
    op_array: &mut OpArray,
    fa: &FuncAnalysis,
    bugs: PhpBugs,
) -> Vec<(u32, u32, u32)> {
    const MASK: u32 = mb::UNDEF | mb::ANY | mb::REF | mb::ARRAY_OF_ANY | mb::ARRAY_KEY_ANY;
    // The type of a variable as the VM may find it: the inferred type with what narrowing
    // to doubles took out of it, unless PHP 8.2's bug is reproduced.
    let narrowed = if bugs.contains(PhpBugs::NARROWED_LONG_HANDLERS) {
        0
    } else {
        u32::MAX
    };
    let vars = &fa.inference.vars[..];
    let var_type = |v: SsaVar| {
        vars.get(v.index())
            .map_or(UNKNOWN_INFO, |i| i.type_ | (i.narrowed_away & narrowed))
    };
    let OpArray {
        opcodes, literals, ..
    } = op_array;
    let info = |operand: Operand, used: Option<SsaVar>| -> u32 {
        match operand {
            Operand::Const(l) => literals.get(l.index()).map_or(UNKNOWN_INFO, const_type),
            _ => used.map_or(UNKNOWN_INFO, var_type),
        }
    };
    // One entry per op, written in place (the zip of two slices knows its length).
    let types = opcodes.iter_mut().zip(&fa.ssa.ops).map(|(op, s)| {
        let mut t = if op.op1.op_type() == IS_UNUSED {
            (0, 0, 0)
        } else {
            (
                info(op.op1, s.op1_use) & MASK,
                info(op.op2, s.op2_use) & MASK,
                0,
            )
        };
        t.2 = match op.opcode {
            ZEND_PRE_INC | ZEND_PRE_DEC | ZEND_POST_INC | ZEND_POST_DEC => {
                s.op1_def.map_or(mb::ANY, |v| var_type(v) & MASK)
            }
            _ if op.result.op_type() == IS_UNUSED => 0,
            _ => s.result_def.map_or(UNKNOWN_INFO, var_type) & MASK,
        };
        let swap = match op.opcode {
            ZEND_ADD => {
                let both = |m: u32| t.0 == m && t.1 == m;
                (both(mb::LONG) || both(mb::DOUBLE))
                    && !(op.op1.op_type() == zend_ir::IS_CONST
                        && op.op2.op_type() == zend_ir::IS_CONST)
            }
            opcode => crate::helpers::always_commutative(opcode),
        };
        if swap && op.op1.op_type() < op.op2.op_type() {
            std::mem::swap(&mut op.op1, &mut op.op2);
            std::mem::swap(&mut t.0, &mut t.1);
        }
        t
    });
    types.collect()
}

/// `needs_live_range` (zend_optimizer.c): whether the TMP/VAR defined at `def` may hold a
/// refcounted value, judged by its inferred type (or the type of the phi it flows into).
pub fn needs_live_range(fa: &FuncAnalysis, def: OpNum) -> bool {
    let Some(var) = fa.ssa.ops.get(def.index()).and_then(|o| o.result_def) else {
        return true;
    };
    let var = match fa.ssa.vars[var.index()].phi_use_chain {
        Some(p) => fa.ssa.phis[p.index()].ssa_var,
        None => var,
    };
    var_type(fa, var) & REFCOUNTED != 0
}

// ---- zend_dfa_optimize_jmps --------------------------------------------------------------

fn take_successor_0(fa: &mut FuncAnalysis, b: BlockId) {
    let succ = fa.cfg.successors(b).to_vec();
    if succ.len() == 2 {
        if succ[1] != succ[0] {
            fa.ssa.remove_predecessor(&mut fa.cfg, b, succ[1]);
        }
        fa.cfg.truncate_successors(b, 1);
    }
}

fn take_successor_1(fa: &mut FuncAnalysis, b: BlockId) {
    let succ = fa.cfg.successors(b).to_vec();
    if succ.len() == 2 {
        if succ[1] != succ[0] {
            fa.ssa.remove_predecessor(&mut fa.cfg, b, succ[0]);
            fa.cfg.set_successor(b, 0, succ[1]);
        }
        fa.cfg.truncate_successors(b, 1);
    }
}

fn take_successor_ex(fa: &mut FuncAnalysis, b: BlockId, target: BlockId) {
    let succ = fa.cfg.successors(b).to_vec();
    for s in succ {
        if s != target {
            fa.ssa.remove_predecessor(&mut fa.cfg, b, s);
        }
    }
    if !fa.cfg.successors(b).is_empty() {
        fa.cfg.set_successor(b, 0, target);
        fa.cfg.truncate_successors(b, 1);
    }
}

/// `compress_block`: trailing NOPs leave the block.
fn compress_block(op_array: &OpArray, cfg: &mut Cfg, b: BlockId) {
    let block = &mut cfg.blocks[b.index()];
    while block.len > 0 {
        let last = (block.start + block.len - 1) as usize;
        if op_array
            .opcodes
            .get(last)
            .is_some_and(|o| o.opcode == ZEND_NOP)
        {
            block.len -= 1;
        } else {
            break;
        }
    }
}

/// `replace_predecessor`: `new_pred` takes `old_pred`'s place among `block`'s predecessors,
/// or, when it is one already, `old_pred` goes with its phi sources.
fn replace_predecessor(
    fa: &mut FuncAnalysis,
    block: BlockId,
    old_pred: BlockId,
    new_pred: BlockId,
) {
    let preds = fa.cfg.predecessors(block).to_vec();
    let Some(old_idx) = preds.iter().position(|&p| p == old_pred) else {
        return;
    };
    if !preds.contains(&new_pred) {
        fa.cfg.set_predecessor(block, old_idx, new_pred);
        return;
    }
    // The phis lose their source for the old edge, the later ones moving down. PHP moves
    // the sources only, leaving the dropped variable's phi use chain naming the phi (and
    // the phi's use-chain slots unshifted); the source goes here with its chain link, as
    // zend_ssa_remove_predecessor drops one, so the chains stay exact. A pi on either
    // edge goes, its uses reading its source.
    for &p in &fa.ssa.blocks[block.index()].phis.clone() {
        let phi = &fa.ssa.phis[p.index()];
        match phi.pi {
            Some(pi) if pi == old_pred || pi == new_pred => fa.ssa.remove_pi_of_removed_edge(p),
            Some(_) => {}
            None if old_idx < phi.sources.len() => fa.ssa.remove_phi_source(p, old_idx),
            None => {}
        }
    }
    fa.cfg.remove_predecessor_at(block, old_idx);
}

/// `zend_ssa_replace_control_link`: the edge `from → to` goes to `new_to` instead, in
/// `from`'s successors and in the jump its last op makes.
fn replace_control_link(
    op_array: &mut OpArray,
    fa: &mut FuncAnalysis,
    from: BlockId,
    to: BlockId,
    new_to: BlockId,
) {
    let old_start = fa.cfg.blocks[to.index()].start;
    let new_start = fa.cfg.blocks[new_to.index()].start;
    for (i, s) in fa.cfg.successors(from).to_vec().into_iter().enumerate() {
        if s == to {
            fa.cfg.set_successor(from, i, new_to);
        }
    }
    let src = &fa.cfg.blocks[from.index()];
    if src.len > 0 {
        let at = (src.start + src.len - 1) as usize;
        let retarget = |operand: &mut Operand| {
            if *operand == Operand::JmpAddr(OpNum::new(old_start)) {
                *operand = Operand::JmpAddr(OpNum::new(new_start));
            }
        };
        let op = &mut op_array.opcodes[at];
        match op.opcode {
            ZEND_JMP | ZEND_FAST_CALL => retarget(&mut op.op1),
            ZEND_JMPZ | ZEND_JMPNZ | ZEND_JMPZ_EX | ZEND_JMPNZ_EX | ZEND_FE_RESET_R
            | ZEND_FE_RESET_RW | ZEND_JMP_SET | ZEND_COALESCE | ZEND_ASSERT_CHECK
            | ZEND_JMP_NULL => retarget(&mut op.op2),
            ZEND_CATCH => {
                if op.extended_value & 1 == 0 {
                    retarget(&mut op.op2);
                }
            }
            ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW => {
                if op.extended_value == old_start {
                    op.extended_value = new_start;
                }
            }
            ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH => {
                if let Operand::Const(l) = op.op2 {
                    if let Some(Literal::Array(table)) = op_array.literals.get_mut(l.index()) {
                        for t in table.values_mut() {
                            if *t == Literal::Long(i64::from(old_start)) {
                                *t = Literal::Long(i64::from(new_start));
                            }
                        }
                    }
                }
                let op = &mut op_array.opcodes[at];
                if op.extended_value == old_start {
                    op.extended_value = new_start;
                }
            }
            _ => {}
        }
    }
    replace_predecessor(fa, new_to, to, from);
}

/// `zend_ssa_unlink_block`: an emptied block with one predecessor and no phis is bypassed
/// and removed.
fn unlink_block(op_array: &mut OpArray, fa: &mut FuncAnalysis, b: BlockId) {
    if fa.cfg.predecessors(b).len() == 1 && fa.ssa.blocks[b.index()].phis.is_empty() {
        let succ = fa.cfg.successors(b).to_vec();
        if succ.len() != 1 {
            return;
        }
        for p in fa.cfg.predecessors(b).to_vec() {
            replace_control_link(op_array, fa, p, b, succ[0]);
        }
        fa.ssa.remove_block(op_array, &mut fa.cfg, b);
    }
}

fn is_true_const(op_array: &OpArray, operand: Operand) -> Option<bool> {
    literal(op_array, operand).map(zend_operators::is_true)
}

/// Whether op `at` (a conditional jump turned fall-through) may simply go: its operand
/// needs no check of definedness and no release.
enum FallThrough {
    CheckVar,
    Remove,
    Free,
}

fn fall_through_kind(op_array: &OpArray, fa: &FuncAnalysis, at: usize) -> FallThrough {
    let op = &op_array.opcodes[at];
    let info = op1_info(op_array, fa, at);
    if op.op1.op_type() == IS_CV && info & mb::UNDEF != 0 {
        FallThrough::CheckVar
    } else if op.op1.op_type() == IS_CV
        || info & (mb::STRING | mb::ARRAY | mb::OBJECT | mb::RESOURCE | mb::REF) == 0
    {
        FallThrough::Remove
    } else {
        FallThrough::Free
    }
}

/// Applies a [`FallThrough`] to op `at`; true when the op went.
fn apply_fall_through(op_array: &mut OpArray, fa: &mut FuncAnalysis, at: usize) -> bool {
    match fall_through_kind(op_array, fa, at) {
        FallThrough::CheckVar => {
            let op = &mut op_array.opcodes[at];
            op.opcode = ZEND_CHECK_VAR;
            op.op2 = Operand::Unused(0);
            false
        }
        FallThrough::Remove => {
            fa.ssa.remove_instr(op_array, OpNum::new(at as u32));
            true
        }
        FallThrough::Free => {
            let op = &mut op_array.opcodes[at];
            op.opcode = ZEND_FREE;
            op.op2 = Operand::Unused(0);
            false
        }
    }
}

fn result_unused(fa: &FuncAnalysis, at: usize) -> bool {
    match fa.ssa.ops[at].result_def {
        Some(v) => {
            let var = &fa.ssa.vars[v.index()];
            var.use_chain.is_none() && var.phi_use_chain.is_none()
        }
        None => true,
    }
}

fn jump_to(op: &mut zend_ir::Op) {
    op.opcode = ZEND_JMP;
    op.op1 = op.op2;
    op.op2 = Operand::Unused(0);
}

/// The last ops of a block [`optimize_jmps`] looks at (the cases of its dispatch).
static JUMP_ENDS: zend_ir::OpcodeSet = zend_ir::OpcodeSet::of(&[
    ZEND_JMP,
    ZEND_JMPZ,
    ZEND_JMPNZ,
    ZEND_NOP,
    ZEND_JMPZ_EX,
    ZEND_JMPNZ_EX,
    ZEND_JMP_SET,
    ZEND_COALESCE,
    ZEND_JMP_NULL,
    ZEND_SWITCH_LONG,
    ZEND_SWITCH_STRING,
    ZEND_MATCH,
]);

/// `zend_dfa_optimize_jmps`: empty blocks bypassed, jumps to the next block removed,
/// branches on constants resolved, `_EX`/`JMP_SET`/`??` whose result is unused simplified.
/// Returns the number of ops removed.
pub fn optimize_jmps(
    op_array: &mut OpArray,
    ctx: &mut OptimizerCtx,
    fa: &mut FuncAnalysis,
) -> usize {
    let mut removed = 0usize;
    let count = fa.cfg.blocks.len();
    // Only a block that is empty or ends in a NOP is changed here: the others are
    // passed over by a scan that reads the blocks and ops and nothing else.
    let mut from = 1;
    while let Some(n) = next_reachable_block_where(op_array, &fa.cfg, from, |last| {
        last.map_or(true, |o| o == ZEND_NOP)
    }) {
        let b = BlockId::new(n as u32);
        compress_block(op_array, &mut fa.cfg, b);
        if fa.cfg.blocks[n].len == 0 {
            unlink_block(op_array, fa, b);
        }
        from = n + 1;
    }

    let reachable = |cfg: &Cfg, n: usize| cfg.blocks[n].is_reachable();
    // Most blocks end in an op no case below handles: they are passed over.
    let mut from = 0;
    while let Some(mut n) = next_reachable_block_where(op_array, &fa.cfg, from, |last| {
        last.is_some_and(|o| JUMP_ENDS.contains(o))
    }) {
        let b = BlockId::new(n as u32);
        let mut next = n + 1;
        while next < count && !reachable(&fa.cfg, next) {
            next += 1;
        }
        let next_block = BlockId::new(next as u32);
        let at = (fa.cfg.blocks[n].start + fa.cfg.blocks[n].len - 1) as usize;
        // The op as it was, for the change log only.
        let before = ctx.logging().then(|| op_array.opcodes[at]);
        // Each state is one of dfa_pass.c's labels; `Done` leaves the block.
        #[derive(Clone, Copy)]
        enum Step {
            Dispatch,
            Jmp,
            Jmpz,
            Jmpnz,
            Nop,
            Done,
        }
        let mut step = Step::Dispatch;
        let mut backtracked = false;
        loop {
            match step {
                Step::Dispatch => {
                    step = match op_array.opcodes[at].opcode {
                        ZEND_JMP => Step::Jmp,
                        ZEND_JMPZ => Step::Jmpz,
                        ZEND_JMPNZ => Step::Jmpnz,
                        ZEND_NOP => Step::Nop,
                        ZEND_JMPZ_EX | ZEND_JMPNZ_EX => {
                            let jmpz = op_array.opcodes[at].opcode == ZEND_JMPZ_EX;
                            if result_unused(fa, at) {
                                let op = &mut op_array.opcodes[at];
                                op.opcode = if jmpz { ZEND_JMPZ } else { ZEND_JMPNZ };
                                op.result = Operand::Unused(0);
                                fa.ssa.remove_result_def(OpNum::new(at as u32));
                                if jmpz {
                                    Step::Jmpz
                                } else {
                                    Step::Jmpnz
                                }
                            } else {
                                let op1 = op_array.opcodes[at].op1;
                                if let Some(t) = is_true_const(op_array, op1) {
                                    // The value passes through: the branch falls through.
                                    if t == jmpz {
                                        // SET_UNUSED(op2): the jump target must not stay
                                        // behind as an operand of the QM_ASSIGN.
                                        let op = &mut op_array.opcodes[at];
                                        op.opcode = ZEND_QM_ASSIGN;
                                        op.op2 = Operand::Unused(0);
                                        take_successor_1(fa, b);
                                    }
                                }
                                Step::Done
                            }
                        }
                        ZEND_JMP_SET => {
                            if result_unused(fa, at) {
                                let op = &mut op_array.opcodes[at];
                                op.opcode = ZEND_JMPNZ;
                                op.result = Operand::Unused(0);
                                fa.ssa.remove_result_def(OpNum::new(at as u32));
                                Step::Jmpnz
                            } else {
                                let op1 = op_array.opcodes[at].op1;
                                if is_true_const(op_array, op1) == Some(false) {
                                    make_nop(&mut op_array.opcodes[at]);
                                    removed += 1;
                                    take_successor_1(fa, b);
                                    // PHP removes the (used) result's definition too.
                                    if let Some(v) = fa.ssa.ops[at].result_def.take() {
                                        fa.ssa.vars[v.index()].definition = None;
                                    }
                                    Step::Nop
                                } else {
                                    Step::Done
                                }
                            }
                        }
                        ZEND_COALESCE | ZEND_JMP_NULL => {
                            let coalesce = op_array.opcodes[at].opcode == ZEND_COALESCE;
                            let op1 = op_array.opcodes[at].op1;
                            match literal(op_array, op1).map(|l| matches!(l, Literal::Null)) {
                                Some(is_null) if result_unused(fa, at) => {
                                    fa.ssa.remove_result_def(OpNum::new(at as u32));
                                    // `??` on null and `?->` on non-null go on; the others jump.
                                    if is_null == coalesce {
                                        make_nop(&mut op_array.opcodes[at]);
                                        removed += 1;
                                        take_successor_1(fa, b);
                                        Step::Nop
                                    } else {
                                        let op = &mut op_array.opcodes[at];
                                        op.result = Operand::Unused(0);
                                        jump_to(op);
                                        take_successor_0(fa, b);
                                        Step::Jmp
                                    }
                                }
                                _ => Step::Done,
                            }
                        }
                        ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH => {
                            let op = op_array.opcodes[at];
                            match literal(op_array, op.op1).cloned() {
                                Some(value) => {
                                    let correct = matches!(
                                        (op.opcode, &value),
                                        (ZEND_SWITCH_LONG, Literal::Long(_))
                                            | (ZEND_SWITCH_STRING, Literal::String(_))
                                            | (ZEND_MATCH, Literal::Long(_) | Literal::String(_))
                                    );
                                    if !correct {
                                        removed += 1;
                                        let op = &mut op_array.opcodes[at];
                                        make_nop(op);
                                        op.extended_value = 0;
                                        let succ = fa.cfg.successors(b).to_vec();
                                        if let Some(&last) = succ.last() {
                                            take_successor_ex(fa, b, last);
                                        }
                                        Step::Nop
                                    } else {
                                        let key = match &value {
                                            Literal::Long(l) => ArrayKey::Long(*l),
                                            Literal::String(s) => ArrayKey::Str(s.clone()),
                                            _ => unreachable!(),
                                        };
                                        let table = literal(op_array, op.op2);
                                        let found = match table {
                                            Some(Literal::Array(items)) => items
                                                .iter()
                                                .find(|(k, _)| *k == key)
                                                .and_then(|(_, t)| match t {
                                                    Literal::Long(t) => u32::try_from(*t).ok(),
                                                    _ => None,
                                                }),
                                            _ => None,
                                        };
                                        let target = found.unwrap_or(op.extended_value);
                                        let op = &mut op_array.opcodes[at];
                                        op.opcode = ZEND_JMP;
                                        op.extended_value = 0;
                                        op.op1 = Operand::JmpAddr(OpNum::new(target));
                                        op.op2 = Operand::Unused(0);
                                        if let Some(&tb) = fa.cfg.map.get(target as usize) {
                                            take_successor_ex(fa, b, tb);
                                        }
                                        Step::Jmp
                                    }
                                }
                                None => Step::Done,
                            }
                        }
                        _ => Step::Done,
                    };
                }
                Step::Jmp => {
                    step = if fa.cfg.successors(b).first() == Some(&next_block) {
                        make_nop(&mut op_array.opcodes[at]);
                        removed += 1;
                        Step::Nop
                    } else {
                        Step::Done
                    };
                }
                Step::Jmpz | Step::Jmpnz => {
                    let jmpz = matches!(step, Step::Jmpz);
                    let op1 = op_array.opcodes[at].op1;
                    step = if let Some(t) = is_true_const(op_array, op1) {
                        // JMPZ on true and JMPNZ on false fall through.
                        if t == jmpz {
                            make_nop(&mut op_array.opcodes[at]);
                            removed += 1;
                            take_successor_1(fa, b);
                            Step::Nop
                        } else {
                            jump_to(&mut op_array.opcodes[at]);
                            take_successor_0(fa, b);
                            Step::Jmp
                        }
                    } else if (jmpz || fa.cfg.successors(b).len() == 2)
                        && fa.cfg.successors(b).first() == Some(&next_block)
                    {
                        take_successor_0(fa, b);
                        if apply_fall_through(op_array, fa, at) {
                            removed += 1;
                            Step::Nop
                        } else {
                            Step::Done
                        }
                    } else {
                        Step::Done
                    };
                }
                Step::Nop => {
                    compress_block(op_array, &mut fa.cfg, b);
                    if fa.cfg.blocks[n].len == 0 && n > 0 {
                        unlink_block(op_array, fa, b);
                        // Back to the previous reachable block: its jump may now lead
                        // to the next one.
                        let mut m = n as isize - 1;
                        while m >= 0 && !reachable(&fa.cfg, m as usize) {
                            m -= 1;
                        }
                        if m >= 0 {
                            n = m as usize;
                            backtracked = true;
                        }
                    }
                    step = Step::Done;
                }
                Step::Done => break,
            }
        }
        if let Some(before) = before.filter(|b| *b != op_array.opcodes[at]) {
            let after = op_array.opcodes[at].opcode;
            ctx.note(op_array, OpNum::new(at as u32), ChangeKind::Rewritten, || {
                format!(
                    "dfa: {} became {} (constant condition, unused result or jump to the next block)",
                    opcode_name(before.opcode),
                    opcode_name(after)
                )
            });
        }
        from = if backtracked { n } else { next };
    }
    removed
}

/// The first reachable block from block `from` on for whose last opcode (`None`: an empty
/// block) `wanted` holds.
#[inline(always)]
fn next_reachable_block_where(
    op_array: &OpArray,
    cfg: &Cfg,
    from: usize,
    wanted: impl Fn(Option<zend_ir::Opcode>) -> bool,
) -> Option<usize> {
    let ops = &op_array.opcodes;
    let blocks = cfg.blocks.get(from..)?;
    let k = blocks.iter().position(|block| {
        block.is_reachable()
            && match block.len {
                0 => wanted(None),
                len => ops
                    .get((block.start + len - 1) as usize)
                    .is_some_and(|o| wanted(Some(o.opcode))),
            }
    })?;
    Some(from + k)
}

fn opcode_name(op: zend_ir::Opcode) -> String {
    op.short_name()
        .map(str::to_string)
        .unwrap_or_else(|| format!("opcode {}", op.0))
}

// ---- zend_dfa_optimize_calls -------------------------------------------------------------

/// `zend_dfa_optimize_calls`: `in_array($x, [constant strings or ints])` with a constant
/// array becomes one `IN_ARRAY` op with a hash of the values. Returns the number of calls
/// rewritten.
pub fn optimize_calls(
    op_array: &mut OpArray,
    ctx: &mut OptimizerCtx,
    fa: &mut FuncAnalysis,
    func_info: &FuncInfo,
) -> usize {
    let mut removed = 0;
    for site in &func_info.callee_info {
        let Some(call) = site.call else { continue };
        let (init, call) = (site.init.index(), call.index());
        // A call SCCP evaluated (PHP clears its `callee_func`) is a NOP now.
        if op_array.opcodes[call].opcode != ZEND_DO_ICALL || call < 2 {
            continue;
        }
        let init_op = op_array.opcodes[init];
        if init_op.opcode != ZEND_INIT_FCALL
            || !matches!(literal(op_array, init_op.op2), Some(Literal::String(s)) if s.as_bytes() == b"in_array")
        {
            continue;
        }
        let args = init_op.extended_value;
        let strict_arg = &op_array.opcodes[call - 1];
        let three = args == 3
            && strict_arg.opcode == ZEND_SEND_VAL
            && strict_arg.op1.op_type() == zend_ir::IS_CONST;
        if args != 2 && !three {
            continue;
        }
        if three && call < 3 {
            continue;
        }
        let strict =
            three && literal(op_array, strict_arg.op1).is_some_and(zend_operators::is_true);
        let (send_array, send_needle) = if three {
            (call - 2, call - 3)
        } else {
            (call - 1, call - 2)
        };
        let array_op = &op_array.opcodes[send_array];
        let needle_op = &op_array.opcodes[send_needle];
        if array_op.opcode != ZEND_SEND_VAL
            || !matches!(needle_op.opcode, ZEND_SEND_VAL | ZEND_SEND_VAR)
        {
            continue;
        }
        let Some(Literal::Array(src)) = literal(op_array, array_op.op1) else {
            continue;
        };
        let mut dst: Vec<(ArrayKey, Literal)> = Vec::with_capacity(src.len());
        let mut ok = true;
        for (_, val) in src {
            let key = match val {
                Literal::String(s) if strict => ArrayKey::Str(s.clone()),
                Literal::Long(l) if strict => ArrayKey::Long(*l),
                Literal::String(s)
                    if zend_operators::handle_numeric_str(s.as_bytes()).is_none() =>
                {
                    ArrayKey::Str(s.clone())
                }
                _ => {
                    ok = false;
                    break;
                }
            };
            // zend_hash_add keeps the first of equal keys.
            if !dst.iter().any(|(k, _)| *k == key) {
                dst.push((key, Literal::True));
            }
        }
        if !ok {
            continue;
        }
        let needle_num = OpNum::new(send_needle as u32);
        let call_num = OpNum::new(call as u32);
        if let Some(var) = fa.ssa.ops[send_needle].op1_use {
            fa.ssa.unlink_use_chain(needle_num, var);
            let s = &mut fa.ssa.ops[send_needle];
            s.op1_use = None;
            s.op1_use_chain = None;
            let head = fa.ssa.vars[var.index()].use_chain;
            let s = &mut fa.ssa.ops[call];
            s.op1_use = Some(var);
            s.op1_use_chain = head;
            fa.ssa.vars[var.index()].use_chain = Some(call_num);
        }
        let needle = op_array.opcodes[send_needle].op1;
        let lit = add_literal(op_array, Literal::Array(dst.into()));
        let op = &mut op_array.opcodes[call];
        op.opcode = ZEND_IN_ARRAY;
        op.extended_value = u32::from(strict);
        op.op1 = needle;
        op.op2 = Operand::Const(lit);
        if three {
            make_nop(&mut op_array.opcodes[call - 1]);
        }
        make_nop(&mut op_array.opcodes[init]);
        make_nop(&mut op_array.opcodes[send_needle]);
        make_nop(&mut op_array.opcodes[send_array]);
        removed += 1;
        ctx.note(op_array, call_num, ChangeKind::Rewritten, || {
            "in_array() over a constant array became IN_ARRAY with a hash of its values".into()
        });
        // A result only branched on may be a TMP, which lets the branch be smart.
        if let Some(var) = fa.ssa.ops[call].result_def {
            let v = &fa.ssa.vars[var.index()];
            if let Some(use_) = v.use_chain {
                let u = fa.ssa.ops[use_.index()];
                if v.phi_use_chain.is_none()
                    && u.op1_use == Some(var)
                    && u.op1_use_chain.is_none()
                    && matches!(
                        op_array.opcodes[use_.index()].opcode,
                        ZEND_JMPZ | ZEND_JMPNZ
                    )
                {
                    if let Some(n) = op_array.opcodes[call].result.var() {
                        op_array.opcodes[call].result = Operand::TmpVar(n);
                        op_array.opcodes[use_.index()].op1 = Operand::TmpVar(n);
                    }
                }
            }
        }
    }
    removed
}

// ---- the per-variable rewrites -----------------------------------------------------------

fn long_const(op_array: &OpArray, operand: Operand) -> Option<i64> {
    match literal(op_array, operand) {
        Some(Literal::Long(l)) => Some(*l),
        _ => None,
    }
}

fn is_cv_var(operand: Operand, cv: u32) -> bool {
    operand == Operand::Cv(VarNum::new(cv))
}

/// `opline_supports_assign_contraction`: whether the op defining a temporary may write
/// straight into the CV `cv` the temporary is then assigned to.
fn supports_assign_contraction(
    op_array: &OpArray,
    script: &Script,
    fa: &FuncAnalysis,
    def: usize,
    src: SsaVar,
    cv: u32,
) -> bool {
    let op = &op_array.opcodes[def];
    match op.opcode {
        ZEND_NEW => false,
        ZEND_DO_ICALL | ZEND_DO_UCALL | ZEND_DO_FCALL | ZEND_DO_FCALL_BY_NAME => {
            let simple = mb::NULL | mb::FALSE | mb::TRUE | mb::LONG | mb::DOUBLE;
            var_type(fa, src) & mb::ANY & !simple == 0
        }
        ZEND_POST_INC | ZEND_POST_DEC => !is_cv_var(op.op1, cv),
        ZEND_INIT_ARRAY => !is_cv_var(op.op1, cv) && !is_cv_var(op.op2, cv),
        ZEND_CAST
            if op.extended_value == u32::from(zend_ir::types::IS_ARRAY)
                || op.extended_value == u32::from(zend_ir::types::IS_OBJECT) =>
        {
            !is_cv_var(op.op1, cv)
        }
        // An assignment into the variable itself that throws would leave the variable
        // overwritten by the result it never produced (`$a = $a->y = ''` of a string).
        ZEND_ASSIGN_OP | ZEND_ASSIGN_OBJ | ZEND_ASSIGN_DIM | ZEND_ASSIGN_OBJ_OP
        | ZEND_ASSIGN_DIM_OP
            if is_cv_var(op.op1, cv) =>
        {
            let view = TypeView {
                op_array,
                ssa: &fa.ssa,
                vars: &fa.inference.vars,
            };
            !may_throw(&view, script, def)
        }
        _ => true,
    }
}

/// `can_elide_return_type_check` as the PHP 8.2 binary has it: the checked value may only be
/// of types the declared return type allows (undefined counting as null), or, when objects
/// are its only other possibility, its known class satisfies the declared class names
/// ([`can_elide_list_type`]). The inferred type of the check's result plays no part (an
/// older form compared with it and its class, which 8.2 does not: a method declared to
/// return its own class by name and returning `$this` loses its check in PHP).
fn can_elide_return_type_check(
    ctx: &OptimizerCtx,
    op_array: &OpArray,
    fa: &FuncAnalysis,
    at: usize,
) -> bool {
    let Some(use_) = fa.ssa.ops[at].op1_use else {
        return false;
    };
    let use_info = &fa.inference.vars[use_.index()];
    let mut use_type = use_info.type_ & (mb::ANY | mb::UNDEF);
    if use_type & mb::REF != 0 {
        return false;
    }
    let Some(ret) = &op_array.return_info else {
        return false;
    };
    if use_type & mb::UNDEF != 0 {
        use_type = (use_type & !mb::UNDEF) | mb::NULL;
    }
    // ZEND_TYPE_PURE_MASK: the MAY_BE bits below the kind and list flags.
    const PURE_MASK: u32 = (1 << 18) - 1;
    let disallowed = use_type & !(ret.type_.type_mask & PURE_MASK);
    if disallowed == 0 {
        return true;
    }
    let complex =
        ret.type_.type_mask & (zend_ir::_ZEND_TYPE_NAME_BIT | zend_ir::_ZEND_TYPE_LIST_BIT) != 0;
    match &use_info.ce {
        Some(ce) if disallowed == mb::OBJECT && complex => {
            can_elide_list_type(ctx, op_array, &ce.name, &ret.type_)
        }
        _ => false,
    }
}

/// `can_elide_list_type`: whether an object of class `class` satisfies the class names of
/// `ty` (one of them for a union, all of them for an intersection; nested lists are DNF
/// parts). A name the optimizer cannot resolve to a class (`self`, `parent`, a class of
/// another file) satisfies nothing.
fn can_elide_list_type(
    ctx: &OptimizerCtx,
    op_array: &OpArray,
    class: &[u8],
    ty: &zend_ir::ZendType,
) -> bool {
    let is_intersection = ty.type_mask & zend_ir::_ZEND_TYPE_INTERSECTION_BIT != 0;
    let singles: Vec<&zend_ir::ZendType> = match &ty.names {
        zend_ir::TypeNames::List(list) if ty.type_mask & zend_ir::_ZEND_TYPE_LIST_BIT != 0 => {
            list.iter().collect()
        }
        _ => vec![ty],
    };
    for single in singles {
        if single.type_mask & zend_ir::_ZEND_TYPE_LIST_BIT != 0 {
            return can_elide_list_type(ctx, op_array, class, single);
        }
        if let zend_ir::TypeNames::Name(name) = &single.names {
            let lcname = name.as_bytes().to_ascii_lowercase();
            let result = match ctx.class_entry(op_array, &lcname) {
                Some(crate::ctx::ClassLookup::Script(ce)) => {
                    safe_instanceof(ctx.script, class, ce.name.as_bytes())
                }
                Some(crate::ctx::ClassLookup::Internal(of)) => {
                    safe_instanceof(ctx.script, class, of.as_bytes())
                }
                None => false,
            };
            if result != is_intersection {
                return result;
            }
        }
    }
    is_intersection
}

/// `ZEND_ACC_LINKED`: the class's parent and interfaces are resolved.
const ZEND_ACC_LINKED: u32 = 1 << 3;

/// `safe_instanceof`: `class` is `of` or, being linked (every internal class is), one of its
/// ancestors is.
fn safe_instanceof(script: &zend_ir::Script, class: &[u8], of: &[u8]) -> bool {
    if class.eq_ignore_ascii_case(of) {
        return true;
    }
    let of = of.to_ascii_lowercase();
    // Walk the ancestors (script classes through their declared names, internal classes
    // through the table), bounded by the number of classes.
    let mut todo = vec![class.to_ascii_lowercase()];
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut first = true;
    while let Some(name) = todo.pop() {
        if seen.contains(&name) || seen.len() > script.class_table.len() + 256 {
            continue;
        }
        seen.push(name.clone());
        if let Some(ce) = script
            .class_table
            .iter()
            .map(|(_, ce)| ce)
            .find(|ce| ce.name.as_bytes().eq_ignore_ascii_case(&name))
        {
            if first && ce.ce_flags & ZEND_ACC_LINKED == 0 {
                return false;
            }
            for parent in ce.parent_name.iter() {
                todo.push(parent.as_bytes().to_ascii_lowercase());
            }
            for i in &ce.interface_names {
                todo.push(i.name.as_bytes().to_ascii_lowercase());
            }
        } else if let Some(has) = zend_inference::func_infos::internal_has_ancestor(&name, &of) {
            if has {
                return true;
            }
        } else if first {
            return false;
        }
        if name == of {
            return true;
        }
        first = false;
    }
    false
}

/// `zend_dfa_try_to_replace_result`: the only use of the result of op `def` (which assigns
/// CV SSA variable `cv_var`) reads the CV instead, when the CV is not touched in between.
fn try_to_replace_result(
    op_array: &mut OpArray,
    fa: &mut FuncAnalysis,
    def: usize,
    cv_var: SsaVar,
) -> bool {
    let Some(result_var) = fa.ssa.ops[def].result_def else {
        return false;
    };
    let cv = fa.ssa.vars[cv_var.index()].var;
    let r = &fa.ssa.vars[result_var.index()];
    if var_type(fa, cv_var) & mb::REF != 0
        || fa.ssa.vars[cv_var.index()].alias != Alias::NoAlias
        || r.phi_use_chain.is_some()
        || r.sym_use_chain.is_some()
    {
        return false;
    }
    let Some(use_) = r.use_chain else {
        return false;
    };
    if fa.ssa.next_use(result_var, use_).is_some()
        || matches!(
            op_array.opcodes[use_.index()].opcode,
            // A by-reference generator yields a reference to a CV, but the value of a
            // temporary.
            ZEND_FREE | ZEND_SEND_VAL | ZEND_SEND_VAL_EX | ZEND_VERIFY_RETURN_TYPE | ZEND_YIELD
        )
    {
        return false;
    }
    let use_ = use_.index();
    if use_ <= def {
        return false;
    }
    for i in (def + 1..=use_).rev() {
        let op = &op_array.opcodes[i];
        if is_cv_var(op.op1, cv) || is_cv_var(op.op2, cv) || is_cv_var(op.result, cv) {
            return false;
        }
    }
    fa.ssa.vars[result_var.index()].definition = None;
    fa.ssa.vars[result_var.index()].use_chain = None;
    fa.ssa.ops[def].result_def = None;
    op_array.opcodes[def].result = Operand::Unused(0);

    let head = fa.ssa.vars[cv_var.index()].use_chain;
    let s = &mut fa.ssa.ops[use_];
    let new = Operand::Cv(VarNum::new(cv));
    if s.op1_use == Some(result_var) {
        s.op1_use = Some(cv_var);
        s.op1_use_chain = head;
        op_array.opcodes[use_].op1 = new;
    } else if s.op2_use == Some(result_var) {
        s.op2_use = Some(cv_var);
        s.op2_use_chain = head;
        op_array.opcodes[use_].op2 = new;
    } else if s.result_use == Some(result_var) {
        s.result_use = Some(cv_var);
        s.res_use_chain = head;
        op_array.opcodes[use_].result = new;
    } else {
        return true;
    }
    fa.ssa.vars[cv_var.index()].use_chain = Some(OpNum::new(use_ as u32));
    true
}

/// What `--$x` does not treat as `$x - 1` does: null (and an undefined variable) stays
/// null, where `null - 1` is -1. (`++$x` and `$x + 1` of null are both 1.)
const NOT_DECREMENTED_AS_SUBTRACTED: u32 = mb::UNDEF | mb::NULL;

/// After a temporary was folded into the CV assignment at `op_2`: `$x = $x - 1` and
/// `$x = $x + 1` (or `1 + $x`) on a value that is no bool, string, array, object, resource
/// or reference become `--$x` / `++$x`; `$x - 1` only on a value that is not null or
/// undefined either, unless PHP 8.2's [`PhpBugs::DECREMENTED_NULL`] is reproduced.
fn contract_to_inc_dec(
    op_array: &mut OpArray,
    fa: &mut FuncAnalysis,
    op_2: usize,
    v: SsaVar,
    php_bugs: PhpBugs,
) {
    const NOT_NUMERIC: u32 = mb::FALSE | mb::TRUE | REFCOUNTED;
    let op = op_array.opcodes[op_2];
    let s = fa.ssa.ops[op_2];
    let plain = |used: Option<SsaVar>| used.is_some_and(|u| var_type(fa, u) & NOT_NUMERIC == 0);
    let not_null = |used: Option<SsaVar>| {
        php_bugs.contains(PhpBugs::DECREMENTED_NULL)
            || used.is_some_and(|u| var_type(fa, u) & NOT_DECREMENTED_AS_SUBTRACTED == 0)
    };
    if op.opcode == ZEND_SUB
        && op.op1 == op.result
        && long_const(op_array, op.op2) == Some(1)
        && plain(s.op1_use)
        && not_null(s.op1_use)
    {
        let o = &mut op_array.opcodes[op_2];
        o.opcode = ZEND_PRE_DEC;
        o.op2 = Operand::Unused(0);
        o.result = Operand::Unused(0);
        fa.ssa.ops[op_2].result_def = None;
        fa.ssa.ops[op_2].op1_def = Some(v);
    } else if op.opcode == ZEND_ADD
        && op.op1 == op.result
        && long_const(op_array, op.op2) == Some(1)
        && plain(s.op1_use)
    {
        let o = &mut op_array.opcodes[op_2];
        o.opcode = ZEND_PRE_INC;
        o.op2 = Operand::Unused(0);
        o.result = Operand::Unused(0);
        fa.ssa.ops[op_2].result_def = None;
        fa.ssa.ops[op_2].op1_def = Some(v);
    } else if op.opcode == ZEND_ADD
        && op.op2 == op.result
        && long_const(op_array, op.op1) == Some(1)
        && plain(s.op2_use)
    {
        let o = &mut op_array.opcodes[op_2];
        o.opcode = ZEND_PRE_INC;
        o.op1 = o.op2;
        o.op2 = Operand::Unused(0);
        o.result = Operand::Unused(0);
        let so = &mut fa.ssa.ops[op_2];
        so.result_def = None;
        so.op1_def = Some(v);
        so.op1_use = so.op2_use;
        so.op1_use_chain = so.op2_use_chain;
        so.op2_use = None;
        so.op2_use_chain = None;
    }
}

/// Whether `src` is a temporary defined by another op, used once (by op `op_1`, in the
/// slot whose next link is `chain`) and never by a phi or a constraint: the shape that
/// lets the defining op write into the destination directly.
fn single_use_temp(
    fa: &FuncAnalysis,
    src: SsaVar,
    op_1: usize,
    chain: Option<OpNum>,
) -> Option<usize> {
    let var = &fa.ssa.vars[src.index()];
    let def = var.definition?.index();
    let d = &fa.ssa.ops[def];
    // A temporary with no type at all sits in code inference found unreachable: PHP
    // leaves it alone.
    (var_type(fa, src) & mb::REF == 0
        && var_type(fa, src) & (mb::UNDEF | mb::ANY) != 0
        && d.result_def == Some(src)
        && d.result_use.is_none()
        && var.use_chain == Some(OpNum::new(op_1 as u32))
        && chain.is_none()
        && var.phi_use_chain.is_none()
        && var.sym_use_chain.is_none())
    .then_some(def)
}

/// A factor 2 that `x * 2` may trade for `x + x`, given `x`'s type: a double 2 only when
/// `x` cannot be an integer (`$i * 2.0` is a double, `$i + $i` an integer), as PHP 8.2
/// decides (fuzz seed 53981).
fn is_two(lit: Option<&Literal>, other_info: u32) -> bool {
    match lit {
        Some(Literal::Long(2)) => true,
        Some(Literal::Double(d)) => d.get() == 2.0 && other_info & mb::LONG == 0,
        _ => false,
    }
}

/// Replaces the long constant operand of op `at` by its double value.
fn long_to_double(op_array: &mut OpArray, operand: Operand) -> Option<Operand> {
    let l = long_const(op_array, operand)?;
    let lit = add_literal(op_array, Literal::Double(PhpDouble::new(l as f64)));
    Some(Operand::Const(lit))
}

/// The opcodes of the definitions [`rewrite_vars`] rewrites (besides a long constant used
/// as a double): its walk over every SSA variable passes over the others.
static REWRITTEN_DEFS: zend_ir::OpcodeSet = zend_ir::OpcodeSet::of(&[
    ZEND_ADD,
    ZEND_SUB,
    ZEND_MUL,
    ZEND_IS_EQUAL,
    ZEND_IS_NOT_EQUAL,
    ZEND_IS_SMALLER,
    ZEND_IS_SMALLER_OR_EQUAL,
    ZEND_CONCAT,
    ZEND_VERIFY_RETURN_TYPE,
    ZEND_QM_ASSIGN,
    ZEND_ASSIGN,
    ZEND_ASSIGN_OP,
    ZEND_PRE_INC,
    ZEND_PRE_DEC,
    ZEND_POST_INC,
    ZEND_POST_DEC,
]);

/// The first variable from `from` (below `count`) that [`rewrite_vars`] may rewrite, with
/// its definition: one used as a double or defined by an op in [`REWRITTEN_DEFS`]. Most
/// are not, and this loop passes over them reading nothing else.
#[inline(always)]
fn next_rewritable(
    op_array: &OpArray,
    fa: &FuncAnalysis,
    from: usize,
    count: usize,
) -> Option<(usize, OpNum)> {
    let vars = &fa.ssa.vars[..count];
    let infos = &fa.inference.vars;
    (from..count).find_map(|vi| {
        let def = vars[vi].definition?;
        (infos.get(vi).is_some_and(|i| i.use_as_double)
            || REWRITTEN_DEFS.contains(op_array.opcodes[def.index()].opcode))
        .then_some((vi, def))
    })
}

/// The walk over SSA variables of `zend_dfa_optimize_op_array`. Returns whether ops were
/// turned into NOPs.
fn rewrite_vars(op_array: &mut OpArray, ctx: &mut OptimizerCtx, fa: &mut FuncAnalysis) -> bool {
    let mut remove_nops = false;
    let last_var = op_array.last_var() as usize;
    let count = fa.ssa.vars.len();
    let mut next = last_var;
    while let Some((vi, def)) = next_rewritable(op_array, fa, next, count) {
        next = vi + 1;
        let v = SsaVar::new(vi as u32);
        let op_1 = def.index();
        let use_as_double = fa.inference.vars.get(vi).is_some_and(|i| i.use_as_double);

        if use_as_double {
            let op = op_array.opcodes[op_1];
            if op.opcode == ZEND_ASSIGN
                && op.op2.op_type() == zend_ir::IS_CONST
                && fa.ssa.ops[op_1].op1_def == Some(v)
                && op.result.op_type() == IS_UNUSED
            {
                if let Some(new) = long_to_double(op_array, op.op2) {
                    op_array.opcodes[op_1].op2 = new;
                    ctx.note(op_array, def, ChangeKind::Folded, || {
                        "dfa: the integer assigned is used as a double".into()
                    });
                }
            } else if op.opcode == ZEND_QM_ASSIGN && op.op1.op_type() == zend_ir::IS_CONST {
                if let Some(new) = long_to_double(op_array, op.op1) {
                    op_array.opcodes[op_1].op1 = new;
                    ctx.note(op_array, def, ChangeKind::Folded, || {
                        "dfa: the integer copied is used as a double".into()
                    });
                }
            }
        } else {
            // The op is copied only where an arm needs it: this runs for every variable.
            match op_array.opcodes[op_1].opcode {
                ZEND_ADD
                | ZEND_SUB
                | ZEND_MUL
                | ZEND_IS_EQUAL
                | ZEND_IS_NOT_EQUAL
                | ZEND_IS_SMALLER
                | ZEND_IS_SMALLER_OR_EQUAL => {
                    let op = op_array.opcodes[op_1];
                    let c1 = op.op1.op_type() == zend_ir::IS_CONST;
                    let c2 = op.op2.op_type() == zend_ir::IS_CONST;
                    if c1 && !c2 {
                        let info2 = op2_info(op_array, fa, op_1);
                        if info2 & mb::ANY == mb::DOUBLE {
                            if let Some(new) = long_to_double(op_array, op.op1) {
                                op_array.opcodes[op_1].op1 = new;
                            }
                        }
                        if op.opcode == ZEND_ADD {
                            let zero = match literal(op_array, op_array.opcodes[op_1].op1) {
                                Some(Literal::Long(0)) => info2 & (mb::ANY | mb::UNDEF) == mb::LONG,
                                Some(Literal::Double(d)) => {
                                    is_neutral_zero(d.get(), false, ctx.php_bugs)
                                        && info2 & (mb::ANY | mb::UNDEF) == mb::DOUBLE
                                }
                                _ => false,
                            };
                            if zero {
                                let o = &mut op_array.opcodes[op_1];
                                o.opcode = ZEND_QM_ASSIGN;
                                o.op1 = o.op2;
                                o.op2 = Operand::Unused(0);
                                let s = &mut fa.ssa.ops[op_1];
                                s.op1_use = s.op2_use;
                                s.op1_use_chain = s.op2_use_chain;
                                s.op2_use = None;
                                s.op2_use_chain = None;
                                ctx.note(op_array, def, ChangeKind::Rewritten, || {
                                    "dfa: 0 + x of a number is a copy".into()
                                });
                            }
                        } else if op.opcode == ZEND_MUL
                            && info2 & ((mb::ANY | mb::UNDEF) & !(mb::LONG | mb::DOUBLE)) == 0
                            && is_two(literal(op_array, op_array.opcodes[op_1].op1), info2)
                        {
                            let o = &mut op_array.opcodes[op_1];
                            o.opcode = ZEND_ADD;
                            o.op1 = o.op2;
                            let s = &mut fa.ssa.ops[op_1];
                            s.op1_use = s.op2_use;
                            s.op1_use_chain = s.op2_use_chain;
                            ctx.note(op_array, def, ChangeKind::Rewritten, || {
                                "dfa: 2 * x of a number is x + x".into()
                            });
                        }
                    } else if !c1 && c2 {
                        let info1 = op1_info(op_array, fa, op_1);
                        if info1 & mb::ANY == mb::DOUBLE {
                            if let Some(new) = long_to_double(op_array, op.op2) {
                                op_array.opcodes[op_1].op2 = new;
                            }
                        }
                        if matches!(op.opcode, ZEND_ADD | ZEND_SUB) {
                            let zero = match literal(op_array, op_array.opcodes[op_1].op2) {
                                Some(Literal::Long(0)) => info1 & (mb::ANY | mb::UNDEF) == mb::LONG,
                                Some(Literal::Double(d)) => {
                                    is_neutral_zero(d.get(), op.opcode == ZEND_SUB, ctx.php_bugs)
                                        && info1 & (mb::ANY | mb::UNDEF) == mb::DOUBLE
                                }
                                _ => false,
                            };
                            if zero {
                                let o = &mut op_array.opcodes[op_1];
                                o.opcode = ZEND_QM_ASSIGN;
                                o.op2 = Operand::Unused(0);
                                ctx.note(op_array, def, ChangeKind::Rewritten, || {
                                    "dfa: x ± 0 of a number is a copy".into()
                                });
                            }
                        } else if op.opcode == ZEND_MUL
                            && info1 & ((mb::ANY | mb::UNDEF) & !(mb::LONG | mb::DOUBLE)) == 0
                            && is_two(literal(op_array, op_array.opcodes[op_1].op2), info1)
                        {
                            let o = &mut op_array.opcodes[op_1];
                            o.opcode = ZEND_ADD;
                            o.op2 = o.op1;
                            let s = &mut fa.ssa.ops[op_1];
                            s.op2_use = s.op1_use;
                            s.op2_use_chain = s.op1_use_chain;
                            ctx.note(op_array, def, ChangeKind::Rewritten, || {
                                "dfa: x * 2 of a number is x + x".into()
                            });
                        }
                    }
                }
                ZEND_CONCAT => {
                    if op1_info(op_array, fa, op_1) & mb::OBJECT == 0
                        && op2_info(op_array, fa, op_1) & mb::OBJECT == 0
                    {
                        op_array.opcodes[op_1].opcode = ZEND_FAST_CONCAT;
                        ctx.note(op_array, def, ChangeKind::Rewritten, || {
                            "dfa: no operand of the concatenation may be an object".into()
                        });
                    }
                }
                ZEND_VERIFY_RETURN_TYPE
                    if op_array.opcodes[op_1].op1.op_type() != zend_ir::IS_CONST
                        && fa.ssa.ops[op_1].op1_def == Some(v)
                        && fa.ssa.ops[op_1].op1_use.is_some()
                        && can_elide_return_type_check(ctx, op_array, fa, op_1) =>
                {
                    let orig = fa.ssa.ops[op_1].op1_use.unwrap_or(v);
                    if fa.ssa.unlink_use_chain(def, orig) {
                        if let Some(ret) = fa.ssa.vars[vi].use_chain {
                            let head = fa.ssa.vars[orig.index()].use_chain;
                            let s = &mut fa.ssa.ops[ret.index()];
                            s.op1_use = Some(orig);
                            s.op1_use_chain = head;
                            fa.ssa.vars[orig.index()].use_chain = Some(ret);
                        }
                        fa.ssa.vars[vi].definition = None;
                        fa.ssa.vars[vi].use_chain = None;
                        fa.ssa.ops[op_1].op1_def = None;
                        fa.ssa.ops[op_1].op1_use = None;
                        make_nop(&mut op_array.opcodes[op_1]);
                        remove_nops = true;
                        ctx.note(op_array, def, ChangeKind::Removed, || {
                            "dfa: the returned value always has the declared type".into()
                        });
                    }
                }
                _ => {}
            }
        }

        // A temporary computed only to be copied into this variable is computed into it.
        let op = &op_array.opcodes[op_1];
        if op.opcode == ZEND_QM_ASSIGN
            && fa.ssa.ops[op_1].result_def == Some(v)
            && op.op1.op_type() & (IS_TMP_VAR | IS_VAR) != 0
            && var_type(fa, v) & REFCOUNTED == 0
        {
            if let Some(src) = fa.ssa.ops[op_1].op1_use {
                let chain = fa.ssa.ops[op_1].op1_use_chain;
                if let Some(op_2) = single_use_temp(fa, src, op_1, chain).filter(|&op_2| {
                    op.result.var().is_some_and(|r| {
                        supports_assign_contraction(op_array, ctx.script, fa, op_2, src, r.as_u32())
                    })
                }) {
                    let orig = fa.ssa.ops[op_1].result_use;
                    if orig.map_or(true, |o| fa.ssa.unlink_use_chain(def, o)) {
                        fa.ssa.vars[vi].definition = Some(OpNum::new(op_2 as u32));
                        fa.ssa.ops[op_2].result_def = Some(v);
                        fa.ssa.vars[src.index()].definition = None;
                        fa.ssa.vars[src.index()].use_chain = None;
                        let s = &mut fa.ssa.ops[op_1];
                        s.op1_use = None;
                        s.op1_def = None;
                        s.op1_use_chain = None;
                        s.result_use = None;
                        s.result_def = None;
                        s.res_use_chain = None;
                        op_array.opcodes[op_2].result = op.result;
                        make_nop(&mut op_array.opcodes[op_1]);
                        remove_nops = true;
                        ctx.note(
                            op_array,
                            OpNum::new(op_2 as u32),
                            ChangeKind::Rewritten,
                            || "dfa: computes straight into the variable it was copied to".into(),
                        );
                        contract_to_inc_dec(op_array, fa, op_2, v, ctx.php_bugs);
                    }
                }
            }
        }

        if fa.ssa.vars[vi].var as usize >= last_var {
            continue; // TMP and VAR
        }

        let op = &op_array.opcodes[op_1];
        let result_used = op.result.op_type() != IS_UNUSED;
        if fa.ssa.ops[op_1].op1_def == Some(v) && result_used {
            match op.opcode {
                ZEND_ASSIGN | ZEND_ASSIGN_OP | ZEND_PRE_INC | ZEND_PRE_DEC => {
                    if try_to_replace_result(op_array, fa, op_1, v) {
                        ctx.note(op_array, def, ChangeKind::Rewritten, || {
                            "dfa: the result's only use reads the variable instead".into()
                        });
                    }
                }
                ZEND_POST_INC | ZEND_POST_DEC => {
                    let inc = op.opcode == ZEND_POST_INC;
                    if let Some(result_var) = fa.ssa.ops[op_1].result_def {
                        let t = var_type(fa, result_var);
                        let numeric =
                            t & ((mb::ANY | mb::REF | mb::UNDEF) & !(mb::LONG | mb::DOUBLE)) == 0;
                        if let (true, Some(use_)) =
                            (numeric, fa.ssa.vars[result_var.index()].use_chain)
                        {
                            let u = use_.index();
                            let side_ok = if inc {
                                fa.ssa.ops[u].op1_use == Some(result_var)
                            } else {
                                fa.ssa.ops[u].op2_use == Some(result_var)
                            };
                            if op_array.opcodes[u].opcode == ZEND_IS_SMALLER
                                && side_ok
                                && try_to_replace_result(op_array, fa, op_1, v)
                            {
                                op_array.opcodes[op_1].opcode =
                                    if inc { ZEND_PRE_INC } else { ZEND_PRE_DEC };
                                op_array.opcodes[u].opcode = ZEND_IS_SMALLER_OR_EQUAL;
                                ctx.note(op_array, def, ChangeKind::Rewritten, || {
                                    "dfa: post-increment compared becomes pre-increment and <="
                                        .into()
                                });
                            }
                        }
                    }
                }
                _ => {}
            }
        }

        // What follows rewrites assignments only.
        if !matches!(op_array.opcodes[op_1].opcode, ZEND_ASSIGN | ZEND_ASSIGN_OP) {
            continue;
        }
        let op = op_array.opcodes[op_1];
        let s = fa.ssa.ops[op_1];
        let result_used = op.result.op_type() != IS_UNUSED;
        let not_numeric = mb::FALSE | mb::TRUE | REFCOUNTED;
        if op.opcode == ZEND_ASSIGN && s.op1_def == Some(v) && !result_used {
            let Some(orig) = s.op1_use else { continue };
            if var_type(fa, orig) & REFCOUNTED != 0 {
                continue;
            }
            let src = s.op2_use;
            let contraction = (op.op2.op_type() & (IS_TMP_VAR | IS_VAR) != 0)
                .then_some(src)
                .flatten()
                .and_then(|src| {
                    single_use_temp(fa, src, op_1, s.op2_use_chain)
                        .filter(|&op_2| {
                            op.op1.var().is_some_and(|cv| {
                                supports_assign_contraction(
                                    op_array,
                                    ctx.script,
                                    fa,
                                    op_2,
                                    src,
                                    cv.as_u32(),
                                )
                            })
                        })
                        .map(|op_2| (src, op_2))
                });
            if let Some((src, op_2)) = contraction {
                if fa.ssa.unlink_use_chain(def, orig) {
                    fa.ssa.vars[vi].definition = Some(OpNum::new(op_2 as u32));
                    fa.ssa.ops[op_2].result_def = Some(v);
                    fa.ssa.vars[src.index()].definition = None;
                    fa.ssa.vars[src.index()].use_chain = None;
                    let so = &mut fa.ssa.ops[op_1];
                    so.op1_use = None;
                    so.op2_use = None;
                    so.op1_def = None;
                    so.op1_use_chain = None;
                    op_array.opcodes[op_2].result = op.op1;
                    make_nop(&mut op_array.opcodes[op_1]);
                    remove_nops = true;
                    ctx.note(
                        op_array,
                        OpNum::new(op_2 as u32),
                        ChangeKind::Rewritten,
                        || "dfa: computes straight into the variable it was assigned to".into(),
                    );
                    contract_to_inc_dec(op_array, fa, op_2, v, ctx.php_bugs);
                }
            } else if op.op2.op_type() == zend_ir::IS_CONST
                || (op.op2.op_type() & (IS_TMP_VAR | IS_VAR | IS_CV) != 0
                    && s.op2_use.is_some()
                    && s.op2_def.is_none())
            {
                if s.op1_use != s.op2_use {
                    fa.ssa.unlink_use_chain(def, orig);
                } else {
                    fa.ssa.ops[op_1].op2_use_chain = s.op1_use_chain;
                }
                let so = &mut fa.ssa.ops[op_1];
                so.result_def = Some(v);
                so.op1_def = None;
                so.op1_use = so.op2_use;
                so.op1_use_chain = so.op2_use_chain;
                so.op2_use = None;
                so.op2_use_chain = None;
                let o = &mut op_array.opcodes[op_1];
                o.result = o.op1;
                o.op1 = o.op2;
                o.op2 = Operand::Unused(0);
                o.opcode = ZEND_QM_ASSIGN;
                ctx.note(op_array, def, ChangeKind::Rewritten, || {
                    "dfa: the variable held no refcounted value: the assignment is a copy".into()
                });
            }
        } else if op.opcode == ZEND_ASSIGN_OP
            && matches!(op.extended_value, x if x == u32::from(ZEND_ADD.0) || x == u32::from(ZEND_SUB.0))
            && s.op1_def == Some(v)
            && long_const(op_array, op.op2) == Some(1)
            && s.op1_use.is_some_and(|u| {
                let dec_mask = if op.extended_value == u32::from(ZEND_SUB.0) {
                    NOT_DECREMENTED_AS_SUBTRACTED
                } else {
                    0
                };
                var_type(fa, u) & (not_numeric | dec_mask) == 0
            })
        {
            let inc = op.extended_value == u32::from(ZEND_ADD.0);
            let o = &mut op_array.opcodes[op_1];
            o.opcode = if inc { ZEND_PRE_INC } else { ZEND_PRE_DEC };
            o.extended_value = 0;
            o.op2 = Operand::Unused(0);
            ctx.note(op_array, def, ChangeKind::Rewritten, || {
                "dfa: adding or subtracting 1 to a number is an increment".into()
            });
        } else if s.op1_def == Some(v)
            && !result_used
            && s.op1_use.is_some_and(|u| var_type(fa, u) & REFCOUNTED == 0)
            && op.opcode == ZEND_ASSIGN_OP
            && op.extended_value != u32::from(ZEND_CONCAT.0)
        {
            let so = &mut fa.ssa.ops[op_1];
            so.result_def = so.op1_def;
            so.op1_def = None;
            let o = &mut op_array.opcodes[op_1];
            o.opcode = zend_ir::Opcode(o.extended_value as u8);
            o.extended_value = 0;
            o.result = o.op1;
            ctx.note(op_array, def, ChangeKind::Rewritten, || {
                "dfa: a compound assignment to a scalar is the plain operator".into()
            });
        }
    }
    remove_nops
}

/// Whether adding (`subtract`: subtracting) the double zero `d` gives back every double:
/// only -0.0 for an addition and +0.0 for a subtraction do (-0.0 + 0.0 is 0.0). PHP 8.2
/// takes either zero ([`PhpBugs::SIGNED_ZERO_ADDITION`]).
fn is_neutral_zero(d: f64, subtract: bool, php_bugs: crate::PhpBugs) -> bool {
    d == 0.0
        && (php_bugs.contains(crate::PhpBugs::SIGNED_ZERO_ADDITION)
            || d.is_sign_negative() != subtract)
}
