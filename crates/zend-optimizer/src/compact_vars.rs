//! Mirrors `zend_optimizer_compact_vars` (compact_vars.c, pass 13): drops the CVs and
//! TMP/VARs no op mentions and renumbers the rest in their order (CVs first, then
//! temporaries). Nothing is merged. A `ROPE_INIT` keeps all the slots its rope spans.
//!
//! Guarantees: when every variable is used the op_array is untouched; otherwise operands,
//! the CV name table, `T` and the live ranges (which PHP recomputes after the passes) all
//! use the new numbering. Operands outside `0..last_var + T` are left alone.

use zend_ir::opcode::ZEND_ROPE_INIT;
use zend_ir::{OpArray, OpNum, Operand, VarNum};

use crate::ctx::OptimizerCtx;
use crate::provenance::ChangeKind;

/// `zend_optimizer_compact_vars`.
pub fn run(op_array: &mut OpArray, ctx: &mut OptimizerCtx) {
    let last_var = op_array.vars.len();
    let total = last_var + op_array.T as usize;
    ctx.state.work.pass_arena.reset();
    let arena = &ctx.state.work.pass_arena;
    let used = arena.alloc_slice_fill_copy(total, false);
    let mut mark = |v: usize| {
        if let Some(u) = used.get_mut(v) {
            *u = true;
        }
    };
    for op in &op_array.opcodes {
        for operand in [op.op1, op.op2] {
            if let Some(v) = operand.var() {
                mark(v.index());
            }
        }
        if let Some(v) = op.result.var() {
            mark(v.index());
            if op.opcode == ZEND_ROPE_INIT {
                let num = (op.extended_value as usize * 8).div_ceil(16);
                for k in 1..num {
                    mark(v.index() + k);
                }
            }
        }
    }
    let map: &mut [Option<u32>] = arena.alloc_slice_fill_copy(total, None);
    let mut num_cvs = 0u32;
    for (v, slot) in map.iter_mut().enumerate().take(last_var) {
        if used[v] {
            *slot = Some(num_cvs);
            num_cvs += 1;
        }
    }
    let mut num_tmps = 0u32;
    for v in last_var..total {
        if used[v] {
            map[v] = Some(num_cvs + num_tmps);
            num_tmps += 1;
        }
    }
    if num_cvs as usize == last_var && num_tmps == op_array.T {
        return;
    }
    let (old_cvs, old_t) = (last_var, op_array.T);
    let remap = |operand: &mut Operand| {
        let new = |v: VarNum| map.get(v.index()).copied().flatten().map_or(v, VarNum::new);
        match operand {
            Operand::Cv(v) | Operand::TmpVar(v) | Operand::Var(v) => *v = new(*v),
            _ => {}
        }
    };
    for op in &mut op_array.opcodes {
        remap(&mut op.op1);
        remap(&mut op.op2);
        remap(&mut op.result);
    }
    for range in &mut op_array.live_range {
        if let Some(Some(new)) = map.get(range.var.index()) {
            range.var = VarNum::new(*new);
        }
    }
    if num_cvs as usize != last_var {
        let vars = std::mem::take(&mut op_array.vars);
        op_array.vars = vars
            .into_iter()
            .enumerate()
            .filter(|(v, _)| used[*v])
            .map(|(_, name)| name)
            .collect();
    }
    op_array.T = num_tmps;
    ctx.note(op_array, OpNum::new(0), ChangeKind::Renumbered, || {
        format!(
            "unused variables removed: CVs {old_cvs} -> {num_cvs}, TMP/VARs {old_t} -> {num_tmps}"
        )
    });
}
