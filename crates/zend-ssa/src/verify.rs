//! The SSA integrity verifier: every check of ssa_integrity.c's `ssa_verify_integrity`
//! (variables and their chains, instructions and their operands, phis, blocks), plus phi
//! arity, well-formed pi constraints and dominance of every use by its definition.

use crate::{Constraint, PhiId, Ssa, SsaVar};
use zend_cfg::dom::DomIntervals;
use zend_cfg::{BlockFlags, BlockId, Cfg};
use zend_ir::{OpArray, OpNum};

/// What the verifier found wrong, with the function's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SSA integrity of {function}: {}", failures.join("; "))]
pub struct VerifyError {
    pub function: String,
    pub failures: Vec<String>,
}

/// Floyd's cycle detection over a chain given by its start and successor function.
fn has_cycle<T: Copy + PartialEq>(start: Option<T>, next: impl Fn(T) -> Option<T>) -> bool {
    let (mut slow, mut fast) = (start, start);
    while let (Some(s), Some(f)) = (slow, fast) {
        slow = next(s);
        fast = next(f).and_then(&next);
        if fast.is_some() && slow == fast {
            return true;
        }
    }
    false
}

/// Checks `ssa` (built with use-def chains) against `op_array` and `cfg`.
pub fn verify(op_array: &OpArray, cfg: &Cfg, ssa: &Ssa) -> Result<(), VerifyError> {
    let mut failures: Vec<String> = Vec::new();
    let mut fail = |msg: String| failures.push(msg);
    let vars_count = ssa.vars.len();
    let last_var = op_array.last_var() as usize;
    let var_name = |i: usize| -> String {
        let var = ssa.vars.get(i).map_or(u32::MAX, |v| v.var);
        if (var as usize) < last_var {
            format!("{i} (CV ${})", op_array.vars[var as usize])
        } else {
            format!("{i} (TMP)")
        }
    };
    let instr = |i: usize| format!("{i} ({})", op_array.opcodes[i].opcode);
    let in_range = |v: SsaVar| v.index() < vars_count;
    let phi_in_range = |p: PhiId| p.index() < ssa.phis.len();

    if ssa.ops.len() != op_array.opcodes.len() || ssa.blocks.len() != cfg.blocks_count() {
        return Err(VerifyError {
            function: op_array.display_name(),
            failures: vec!["SSA ops or blocks do not match the op_array".into()],
        });
    }

    // Dominance from the blocks' idom links as they are now (not from a cache).
    let tree = DomIntervals::new(cfg);
    if let Some(b) = cfg
        .blocks
        .iter()
        .position(|b| b.is_reachable() && b.level.is_none())
    {
        fail(format!("Reachable block {b} has no dominator tree level"));
    }
    let dominates = |a: BlockId, b: BlockId| tree.dominates(a, b);

    let arena = bumpalo::Bump::new();
    let phi_uses = ssa.all_phi_uses(&arena);
    let phi_sources: std::collections::HashSet<(u32, u32)> = ssa
        .phis
        .iter()
        .enumerate()
        .flat_map(|(id, phi)| {
            phi.sources[..phi.num_sources()]
                .iter()
                .flatten()
                .map(move |s| (id as u32, s.as_u32()))
        })
        .collect();

    // Variables.
    for (i, var) in ssa.vars.iter().enumerate() {
        let v = SsaVar::new(i as u32);
        if var.definition.is_none() && var.definition_phi.is_none() && i > last_var {
            if var.use_chain.is_some() {
                fail(format!("var {} without def has op uses", var_name(i)));
            }
            if var.phi_use_chain.is_some() {
                fail(format!("var {} without def has phi uses", var_name(i)));
            }
        }
        if var.definition.is_some() && var.definition_phi.is_some() {
            fail(format!("var {} has both def and def_phi", var_name(i)));
        }
        if let Some(d) = var.definition {
            let op = ssa.ops.get(d.index());
            if !op.is_some_and(|o| [o.op1_def, o.op2_def, o.result_def].contains(&Some(v))) {
                fail(format!(
                    "var {} not defined by op {}",
                    var_name(i),
                    d.as_u32()
                ));
            }
        }
        if let Some(p) = var.definition_phi {
            if !phi_in_range(p) || ssa.phis[p.index()].ssa_var != v {
                fail(format!("var {} not defined by given phi", var_name(i)));
            }
        }
        let next_use = |u: OpNum| {
            if u.index() < ssa.ops.len() {
                ssa.next_use(v, u)
            } else {
                None
            }
        };
        if has_cycle(var.use_chain, next_use) {
            fail(format!("cycle in uses of {}", var_name(i)));
            continue;
        }
        for u in ssa.uses(v) {
            let o = &ssa.ops[u.index()];
            if ![o.op1_use, o.op2_use, o.result_use].contains(&Some(v)) {
                fail(format!(
                    "var {} not in uses of op {}",
                    var_name(i),
                    u.as_u32()
                ));
            }
        }
        // A chain longer than there are phis has a cycle (all_phi_uses stops there).
        if phi_uses[i].len() > ssa.phis.len() {
            fail(format!("cycle in phi uses of {}", var_name(i)));
            continue;
        }
        for &p in &phi_uses[i] {
            if !phi_in_range(p) {
                fail(format!(
                    "var {} has phi use {} out of range",
                    var_name(i),
                    p.as_u32()
                ));
                continue;
            }
            let phi = &ssa.phis[p.index()];
            // A phi that edits removed (no longer in its block) is on no chain.
            if ssa
                .blocks
                .get(phi.block.index())
                .map_or(true, |b| !b.phis.contains(&p))
            {
                fail(format!(
                    "var {} has phi use {} that is in no block",
                    var_name(i),
                    phi.ssa_var.as_u32()
                ));
            }
            if !phi_sources.contains(&(p.as_u32(), v.as_u32())) {
                fail(format!(
                    "var {} not in phi sources of {}",
                    var_name(i),
                    phi.ssa_var.as_u32()
                ));
            }
        }
    }

    // Which (op, var) and (phi, var) pairs the chains link, gathered in one walk.
    let mut chained_ops: std::collections::HashSet<(u32, u32)> = std::collections::HashSet::new();
    let mut chained_phis: std::collections::HashSet<(u32, u32)> = std::collections::HashSet::new();
    for (i, phi_use_list) in phi_uses.iter().enumerate() {
        let v = SsaVar::new(i as u32);
        if has_cycle(ssa.vars[i].use_chain, |u| {
            if u.index() < ssa.ops.len() {
                ssa.next_use(v, u)
            } else {
                None
            }
        }) {
            continue;
        }
        chained_ops.extend(ssa.uses(v).map(|u| (u.as_u32(), v.as_u32())));
        chained_phis.extend(phi_use_list.iter().map(|p| (p.as_u32(), v.as_u32())));
    }
    let is_defined = |v: SsaVar| {
        let var = &ssa.vars[v.index()];
        var.definition.is_some() || var.definition_phi.is_some() || v.index() < last_var
    };
    // Whether the definition of `v` is available at the end of block `b`, or just before
    // op `at` when given.
    let dominated = |v: SsaVar, b: BlockId, at: Option<usize>| -> bool {
        let var = &ssa.vars[v.index()];
        if let Some(d) = var.definition {
            let db = cfg.map[d.index()];
            if db == b {
                return at.map_or(true, |at| d.index() < at);
            }
            return dominates(db, b);
        }
        if let Some(p) = var.definition_phi {
            return dominates(ssa.phis[p.index()].block, b);
        }
        true
    };

    // Instructions of reachable blocks.
    for (bn, block) in cfg.blocks.iter().enumerate() {
        if !block.is_reachable() {
            continue;
        }
        for i in block.ops() {
            let i = i as usize;
            let o = &ssa.ops[i];
            let opline = &op_array.opcodes[i];
            let operands = [
                ("op1", opline.op1, o.op1_use, o.op1_def),
                ("op2", opline.op2, o.op2_use, o.op2_def),
                ("result", opline.result, o.result_use, o.result_def),
            ];
            for (name, operand, used, defined) in operands {
                if operand.var().is_some() {
                    if used.is_none() && defined.is_none() {
                        fail(format!(
                            "var {name} of {} does not use/def an ssa var",
                            instr(i)
                        ));
                    }
                } else if used.is_some() || defined.is_some() {
                    fail(format!(
                        "non-var {name} of {} uses or defs an ssa var",
                        instr(i)
                    ));
                }
                let var_num = operand.var().map_or(u32::MAX, |v| v.as_u32());
                if let Some(u) = used {
                    if !in_range(u) {
                        fail(format!("{name} use {} out of range", u.as_u32()));
                        continue;
                    }
                    if !is_defined(u) {
                        fail(format!(
                            "{name} use of {} in {} is not defined",
                            var_name(u.index()),
                            instr(i)
                        ));
                    }
                    if !chained_ops.contains(&(i as u32, u.as_u32())) {
                        fail(format!(
                            "{name} use of {} in {} not in use chain",
                            var_name(u.index()),
                            instr(i)
                        ));
                    }
                    if ssa.vars[u.index()].var != var_num {
                        fail(format!(
                            "{name} use of {} does not match op {var_num} of {}",
                            var_name(u.index()),
                            instr(i)
                        ));
                    }
                    if !dominated(u, BlockId::new(bn as u32), Some(i)) {
                        fail(format!(
                            "{name} use of {} in {} is not dominated by its definition",
                            var_name(u.index()),
                            instr(i)
                        ));
                    }
                }
                if let Some(d) = defined {
                    if !in_range(d) {
                        fail(format!("{name} def {} out of range", d.as_u32()));
                        continue;
                    }
                    if ssa.vars[d.index()].definition != Some(OpNum::new(i as u32)) {
                        fail(format!(
                            "{name} def of {} in {} invalid",
                            var_name(d.index()),
                            instr(i)
                        ));
                    }
                    if ssa.vars[d.index()].var != var_num {
                        fail(format!(
                            "{name} def of {} does not match op {var_num} of {}",
                            var_name(d.index()),
                            instr(i)
                        ));
                    }
                }
            }
        }
    }

    // PHP's zend_ssa_unlink_block gives the edge through an empty block that only jumps to
    // that block's predecessor; where the target does not have it as a predecessor yet,
    // zend_ssa_replace_predecessor rewires the edge without relabeling a pi on it, which
    // keeps naming the unlinked block. Its constraint still holds: the one path left is
    // the one that went through that block.
    let unlinked = |b: BlockId| {
        let block = cfg.block(b);
        !block.flags.contains(BlockFlags::REACHABLE)
            && block.len == 0
            && block.predecessors_count() == 0
            && cfg.successors(b).is_empty()
    };

    // Phis.
    for p in ssa.all_phis() {
        let phi = &ssa.phis[p.index()];
        let preds = cfg.block(phi.block).predecessors_count();
        if phi.sources.len() != preds || phi.use_chains.len() != preds {
            fail(format!(
                "phi {} has {} sources for {preds} predecessors",
                var_name(phi.ssa_var.index()),
                phi.sources.len()
            ));
            continue;
        }
        let num = phi.num_sources();
        let mut linked_sources: std::collections::HashMap<SsaVar, u32> =
            std::collections::HashMap::new();
        for i in 0..num {
            let Some(source) = phi.sources[i] else {
                fail(format!("{} negative source", var_name(phi.ssa_var.index())));
                continue;
            };
            if !in_range(source) {
                fail(format!(
                    "{} source {} out of range",
                    var_name(phi.ssa_var.index()),
                    source.as_u32()
                ));
                continue;
            }
            if !chained_phis.contains(&(p.as_u32(), source.as_u32())) {
                fail(format!(
                    "{} not in phi use chain of {}",
                    var_name(phi.ssa_var.index()),
                    source.as_u32()
                ));
            }
            if ssa.vars[source.index()].var != ssa.vars[phi.ssa_var.index()].var {
                fail(format!(
                    "{} source of phi for {}",
                    var_name(source.index()),
                    var_name(phi.ssa_var.index())
                ));
            }
            if phi.use_chains[i].is_some() {
                let linked = linked_sources.entry(source).or_insert(0u32);
                *linked += 1;
                if *linked == 2 {
                    fail(format!(
                        "use chain for source {} of phi {} despite earlier use",
                        var_name(source.index()),
                        var_name(phi.ssa_var.index())
                    ));
                }
            }
            // The source must be available at the end of the edge's predecessor.
            let from = match phi.pi {
                Some(from) => Some(from),
                None => cfg.predecessors(phi.block).get(i).copied(),
            };
            // A pi lives on its edge: it feeds the phis of its own block for that edge.
            let pi_on_edge = ssa.vars[source.index()].definition_phi.is_some_and(|q| {
                let q = &ssa.phis[q.index()];
                q.block == phi.block && q.pi.is_some() && q.pi == from
            });
            let stale_pi = phi.pi.is_some_and(unlinked);
            if let Some(from) = from.filter(|_| !pi_on_edge && !stale_pi) {
                if !dominated(source, from, None) {
                    fail(format!(
                        "source {} of phi {} is not dominated by its definition",
                        var_name(source.index()),
                        var_name(phi.ssa_var.index())
                    ));
                }
            }
        }
        if ssa
            .vars
            .get(phi.ssa_var.index())
            .and_then(|v| v.definition_phi)
            != Some(p)
        {
            fail(format!(
                "{} does not define this phi",
                var_name(phi.ssa_var.index())
            ));
        }
        match (&phi.pi, &phi.constraint) {
            (Some(from), Some(Constraint::Range(r))) => {
                if cfg.predecessor_index(phi.block, *from).is_none() && !unlinked(*from) {
                    fail(format!(
                        "pi {} is on a non-edge BB{}",
                        var_name(phi.ssa_var.index()),
                        from.as_u32()
                    ));
                }
                for (var, ssa_var) in [(r.min_var, r.min_ssa_var), (r.max_var, r.max_ssa_var)] {
                    match (var, ssa_var) {
                        (Some(var), Some(v)) if in_range(v) && ssa.vars[v.index()].var == var => {}
                        (None, None) => {}
                        _ => fail(format!(
                            "pi {} has a malformed range bound",
                            var_name(phi.ssa_var.index())
                        )),
                    }
                }
            }
            (Some(from), Some(Constraint::Type(t))) => {
                if cfg.predecessor_index(phi.block, *from).is_none() && !unlinked(*from) {
                    fail(format!(
                        "pi {} is on a non-edge BB{}",
                        var_name(phi.ssa_var.index()),
                        from.as_u32()
                    ));
                }
                if t.type_mask == 0 {
                    fail(format!(
                        "pi {} has an empty type constraint",
                        var_name(phi.ssa_var.index())
                    ));
                }
            }
            (Some(_), None) => fail(format!(
                "pi {} has no constraint",
                var_name(phi.ssa_var.index())
            )),
            (None, Some(_)) => fail(format!(
                "phi {} has a constraint",
                var_name(phi.ssa_var.index())
            )),
            (None, None) => {}
        }
    }

    // Blocks.
    let count = cfg.blocks_count();
    let edges: std::collections::HashSet<(u32, u32)> = (0..count)
        .flat_map(|b| {
            cfg.successors(BlockId::new(b as u32))
                .iter()
                .map(move |s| (b as u32, s.as_u32()))
        })
        .collect();
    for i in 0..count {
        let block = &cfg.blocks[i];
        if i != 0 {
            let prev = &cfg.blocks[i - 1];
            if block.start < prev.start + prev.len {
                fail(format!(
                    "Block {i} start {} smaller previous end {}",
                    block.start,
                    prev.start + prev.len
                ));
            }
        }
        if i + 1 != count && block.start + block.len > cfg.blocks[i + 1].start {
            fail(format!(
                "Block {i} end {} greater next start {}",
                block.start + block.len,
                cfg.blocks[i + 1].start
            ));
        }
        for j in block.ops() {
            if cfg.map[j as usize].index() != i {
                fail(format!(
                    "Instr {} not associated with block {i}",
                    instr(j as usize)
                ));
            }
        }
        let b = BlockId::new(i as u32);
        if !block.is_reachable() {
            if !ssa.blocks[i].phis.is_empty() {
                fail(format!("Unreachable block {i} has phis"));
            }
            continue;
        }
        for &s in cfg.successors(b) {
            let next = cfg.block(s);
            if !next.is_reachable() {
                fail(format!("Successor {} of {i} not reachable", s.as_u32()));
            }
            if cfg.predecessor_index(s, b).is_none() {
                fail(format!("Block {} predecessors missing {i}", s.as_u32()));
            }
        }
        let preds = cfg.predecessors(b);
        for (j, &p) in preds.iter().enumerate() {
            if !cfg.block(p).is_reachable() {
                fail(format!("Predecessor {} of {i} not reachable", p.as_u32()));
            }
            if !edges.contains(&(p.as_u32(), b.as_u32())) {
                fail(format!("Block {} successors missing {i}", p.as_u32()));
            }
            // No predecessor twice. (Built lists are in increasing order, but the DFA
            // pass's edge rewiring leaves PHP's lists unordered, and its dumps show them so:
            // order is not an invariant.)
            if preds[..j].contains(&p) {
                fail(format!(
                    "Block {i} has duplicate predecessor {}",
                    p.as_u32()
                ));
            }
        }
    }

    if failures.is_empty() {
        Ok(())
    } else {
        Err(VerifyError {
            function: op_array.display_name(),
            failures,
        })
    }
}
