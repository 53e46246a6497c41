//! Cytron et al.'s construction: dominance frontiers, phi placement on iterated dominance
//! frontiers, renaming along the dominator tree.
//!
//! Dominators are computed here ([`immediate_dominators`]: a forest whose roots are the
//! blocks without predecessors, so try/catch op_arrays are handled too), dominance
//! frontiers from that tree (for each join block, walk up from each predecessor to the
//! join's immediate dominator: Cooper, Harvey and Kennedy's formulation of Cytron's
//! definition). Renaming is a preorder walk of
//! the dominator tree with an explicit stack and an undo log of the current value of each
//! variable (equivalent to Cytron's per-variable stacks), so a function of any size is
//! renamed without recursion. Unreachable blocks get nothing; blocks reached only through
//! the exception table (roots of the dominator forest) start from the entry values.

use crate::{block_effects, entry_value, OpEffects, PhiId, PhiNode, SsaForm, Use, Value};
use zend_cfg::bitset;
use zend_cfg::{BlockId, Cfg};
use zend_dfg::Dfg;
use zend_ir::OpArray;

/// Which phis the iterated dominance frontier placement keeps.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Pruning {
    /// Every block of the iterated dominance frontier of a variable's definitions.
    Minimal,
    /// Only for variables used in some block before being defined there (Briggs et al.'s
    /// "non-local" names).
    SemiPruned,
    /// Only where the variable is live on entry (liveness from `zend_dfg`).
    Pruned,
}

/// The dominator forest of the reachable blocks: every block without predecessors (the
/// entry, catch and finally blocks reached through the exception table) hangs from one
/// virtual root, so a block reached both from the entry and from a catch block has no
/// immediate dominator (PHP's own tree, which the DFA pass only needs without try/catch,
/// leaves everything reached from a catch block without one). Cooper, Harvey and Kennedy's
/// iterative algorithm over reverse postorder; `None` for roots and unreachable blocks.
pub fn immediate_dominators(cfg: &Cfg) -> Vec<Option<BlockId>> {
    let n = cfg.blocks_count();
    let virt = n;
    let reachable = |b: usize| cfg.blocks[b].is_reachable();
    let roots: Vec<usize> = (0..n)
        .filter(|&b| reachable(b) && cfg.predecessors(BlockId::new(b as u32)).is_empty())
        .collect();
    // Postorder by an iterative DFS from the virtual root.
    let mut post = Vec::with_capacity(n + 1);
    let mut seen = vec![false; n + 1];
    let succ = |b: usize| -> Vec<usize> {
        if b == virt {
            roots.clone()
        } else {
            cfg.successors(BlockId::new(b as u32))
                .iter()
                .map(|s| s.index())
                .collect()
        }
    };
    let mut stack: Vec<(usize, Vec<usize>, usize)> = vec![(virt, succ(virt), 0)];
    seen[virt] = true;
    while let Some((b, succs, i)) = stack.last_mut() {
        if *i < succs.len() {
            let s = succs[*i];
            *i += 1;
            if !seen[s] {
                seen[s] = true;
                let ss = succ(s);
                stack.push((s, ss, 0));
            }
            continue;
        }
        post.push(*b);
        stack.pop();
    }
    let mut order = vec![usize::MAX; n + 1];
    for (i, &b) in post.iter().enumerate() {
        order[b] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n + 1];
    idom[virt] = Some(virt);
    let preds = |b: usize| -> Vec<usize> {
        let p = cfg.predecessors(BlockId::new(b as u32));
        if p.is_empty() {
            vec![virt]
        } else {
            p.iter().map(|p| p.index()).collect()
        }
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in post.iter().rev() {
            if b == virt {
                continue;
            }
            let mut new: Option<usize> = None;
            for p in preds(b) {
                if order[p] == usize::MAX || idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(mut a) => {
                        let mut c = p;
                        while a != c {
                            while order[a] < order[c] {
                                a = idom[a].expect("processed");
                            }
                            while order[c] < order[a] {
                                c = idom[c].expect("processed");
                            }
                        }
                        a
                    }
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    (0..n)
        .map(|b| match idom[b] {
            Some(d) if d != virt && d != b => Some(BlockId::new(d as u32)),
            _ => None,
        })
        .collect()
}

/// The dominance frontier of every block (empty for unreachable blocks), each sorted,
/// over the dominator forest `idom` of [`immediate_dominators`].
pub fn dominance_frontiers(cfg: &Cfg, idom: &[Option<BlockId>]) -> Vec<Vec<BlockId>> {
    let n = cfg.blocks_count();
    let mut df: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    for j in 0..n {
        let block = &cfg.blocks[j];
        if !block.is_reachable() || block.predecessors_count() < 2 {
            continue;
        }
        let b = BlockId::new(j as u32);
        for &p in cfg.predecessors(b) {
            if !cfg.blocks[p.index()].is_reachable() {
                continue;
            }
            let mut runner = Some(p);
            while let Some(r) = runner {
                if Some(r) == idom[j] {
                    break;
                }
                if df[r.index()].last() != Some(&b) {
                    df[r.index()].push(b);
                }
                runner = idom[r.index()];
            }
        }
    }
    for d in &mut df {
        d.sort_unstable();
        d.dedup();
    }
    df
}

/// The effects of every reachable block's ops, flattened, with each block's range.
pub(crate) fn all_effects(op_array: &OpArray, cfg: &Cfg) -> (Vec<OpEffects>, Vec<(usize, usize)>) {
    let vars = (op_array.last_var() + op_array.T) as usize;
    let words = vars.div_ceil(64).max(1);
    let (mut u, mut d) = (vec![0u64; words], vec![0u64; words]);
    let mut effects = Vec::new();
    let mut ranges = vec![(0, 0); cfg.blocks_count()];
    for (j, range) in ranges.iter_mut().enumerate() {
        if !cfg.blocks[j].is_reachable() {
            continue;
        }
        let start = effects.len();
        block_effects(
            op_array,
            cfg,
            BlockId::new(j as u32),
            &mut u,
            &mut d,
            &mut effects,
        );
        *range = (start, effects.len());
    }
    (effects, ranges)
}

/// Builds the SSA form of a CFG with dominator tree (as [`Cfg::build`] returns it);
/// `dfg` supplies liveness (pruned) and upward-exposed uses (semi-pruned).
pub fn build(op_array: &OpArray, cfg: &Cfg, dfg: &Dfg, pruning: Pruning) -> SsaForm {
    let vars = (op_array.last_var() + op_array.T) as usize;
    let blocks = cfg.blocks_count();
    let (effects, ranges) = all_effects(op_array, cfg);

    // Definition sites of each variable.
    let mut defsites: Vec<Vec<u32>> = vec![Vec::new(); vars];
    for (j, &(s, e)) in ranges.iter().enumerate() {
        for eff in &effects[s..e] {
            for &d in eff.defs.iter() {
                let sites = &mut defsites[d as usize];
                if sites.last() != Some(&(j as u32)) {
                    sites.push(j as u32);
                }
            }
        }
    }
    let globals: Vec<u64> = if pruning == Pruning::SemiPruned {
        let mut g = vec![0u64; dfg.use_().row_words()];
        for j in 0..blocks {
            bitset::union_with(&mut g, dfg.use_().row(j));
        }
        g
    } else {
        Vec::new()
    };

    // Phi placement on the iterated dominance frontier of each variable's definitions.
    let idom = immediate_dominators(cfg);
    let df = dominance_frontiers(cfg, &idom);
    let mut children: Vec<Vec<BlockId>> = vec![Vec::new(); blocks];
    for (j, d) in idom.iter().enumerate() {
        if let Some(d) = d {
            children[d.index()].push(BlockId::new(j as u32));
        }
    }
    let mut form = SsaForm::default();
    let mut block_phis: Vec<Vec<PhiId>> = vec![Vec::new(); blocks];
    let mut placed = vec![u32::MAX; blocks];
    let mut queued = vec![u32::MAX; blocks];
    let mut work: Vec<u32> = Vec::new();
    for (var, sites) in defsites.iter().enumerate() {
        if sites.is_empty() {
            continue;
        }
        if pruning == Pruning::SemiPruned && !bitset::contains(&globals, var) {
            continue;
        }
        let stamp = var as u32;
        for &b in sites {
            queued[b as usize] = stamp;
            work.push(b);
        }
        while let Some(x) = work.pop() {
            for &y in &df[x as usize] {
                let yi = y.index();
                if placed[yi] == stamp {
                    continue;
                }
                placed[yi] = stamp;
                if pruning != Pruning::Pruned || dfg.in_().contains(yi, var) {
                    block_phis[yi].push(PhiId(form.phis.len() as u32));
                    form.phis.push(PhiNode {
                        block: y,
                        var: var as u32,
                        sources: vec![Value::Undef; cfg.blocks[yi].predecessors_count()],
                    });
                }
                if queued[yi] != stamp {
                    queued[yi] = stamp;
                    work.push(y.as_u32());
                }
            }
        }
    }

    // Renaming: preorder walk of the dominator forest.
    let mut current: Vec<Value> = (0..vars as u32).map(|v| entry_value(op_array, v)).collect();
    let mut undo: Vec<(u32, Value)> = Vec::new();
    enum Step {
        Enter(BlockId),
        Leave(usize),
    }
    let mut stack: Vec<Step> = Vec::new();
    for j in (0..blocks).rev() {
        if cfg.blocks[j].is_reachable() && idom[j].is_none() {
            stack.push(Step::Enter(BlockId::new(j as u32)));
        }
    }
    let set = |current: &mut Vec<Value>, undo: &mut Vec<(u32, Value)>, var: u32, v: Value| {
        undo.push((var, current[var as usize]));
        current[var as usize] = v;
    };
    while let Some(step) = stack.pop() {
        let n = match step {
            Step::Leave(mark) => {
                while undo.len() > mark {
                    let (var, old) = undo.pop().expect("above mark");
                    current[var as usize] = old;
                }
                continue;
            }
            Step::Enter(n) => n,
        };
        stack.push(Step::Leave(undo.len()));
        for &p in &block_phis[n.index()] {
            let var = form.phis[p.0 as usize].var;
            set(&mut current, &mut undo, var, Value::Phi(p));
        }
        let (s, e) = ranges[n.index()];
        let mut kept: Option<(u32, Value)> = None;
        for eff in &effects[s..e] {
            for &u in eff.uses.iter() {
                form.uses.push(Use {
                    op: eff.op,
                    var: u,
                    value: current[u as usize],
                });
            }
            kept = eff.kept_on_exit.map(|v| (v, current[v as usize]));
            for &d in eff.defs.iter() {
                set(
                    &mut current,
                    &mut undo,
                    d,
                    Value::Def { op: eff.op, var: d },
                );
            }
        }
        for (i, &succ) in cfg.successors(n).iter().enumerate() {
            let Some(j) = cfg.predecessor_index(succ, n) else {
                continue;
            };
            for &p in &block_phis[succ.index()] {
                let phi = &mut form.phis[p.0 as usize];
                let mut value = current[phi.var as usize];
                if let Some((v, before)) = kept {
                    if i == 0 && v == phi.var {
                        value = before;
                    }
                }
                phi.sources[j] = value;
            }
        }
        for &c in children[n.index()].iter().rev() {
            stack.push(Step::Enter(c));
        }
    }
    form.uses.sort_by_key(|u| (u.op, u.var));
    form
}
