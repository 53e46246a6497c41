//! Use-def chains (`zend_ssa_compute_use_def_chains`), false dependencies
//! (`zend_ssa_find_false_dependencies`: `no_val`) and strongly connected components
//! (`zend_ssa_find_sccs`).

use crate::{Alias, PhiId, Ssa, SsaVar, SsaVariable};
use bumpalo::collections::Vec as BVec;
use bumpalo::Bump;
use zend_cfg::Cfg;
use zend_ir::opcode::*;
use zend_ir::{OpArray, OpNum};

/// `count` variables in `vars`' memory as use-def chains start them: no definition, no
/// use, the CVs' values on entry numbered by their CV (the first `last_var`), every other
/// variable's CV (`var`) unknown until its definition is found (`u32::MAX`).
pub(crate) fn unlinked_vars(
    vars: Vec<SsaVariable>,
    count: usize,
    last_var: u32,
) -> Vec<SsaVariable> {
    let unknown = SsaVariable {
        var: u32::MAX,
        ..SsaVariable::default()
    };
    let mut vars = zend_cfg::reuse::refilled(vars, count, unknown);
    for (j, v) in vars.iter_mut().take(last_var as usize).enumerate() {
        v.var = j as u32;
    }
    vars
}

impl Ssa {
    /// Links every use of every SSA variable: ops through `op1_use_chain`/`op2_use_chain`/
    /// `res_use_chain` (in op order), phis through `use_chains` (most recent first), pis'
    /// range bounds through `sym_use_chain`; records definitions and aliasing.
    pub fn compute_use_def_chains(&mut self, op_array: &OpArray, cfg: &Cfg) {
        let count = self.vars.len();
        self.vars = unlinked_vars(std::mem::take(&mut self.vars), count, op_array.last_var());
        self.link_use_def_chains(op_array, cfg);
    }

    /// [`Ssa::compute_use_def_chains`] on variables as it starts them ([`unlinked_vars`],
    /// as renaming leaves them).
    pub(crate) fn link_use_def_chains(&mut self, op_array: &OpArray, cfg: &Cfg) {
        let last_var = op_array.last_var();
        let Ssa { ops, vars, .. } = self;
        for (i, (op, opline)) in ops.iter_mut().zip(&op_array.opcodes).enumerate().rev() {
            let num = Some(OpNum::new(i as u32));
            if let Some(u) = op.op1_use {
                op.op1_use_chain = std::mem::replace(&mut vars[u.index()].use_chain, num);
            }
            // A variable used twice by the op is linked once, through its first use.
            if let Some(u) = op.op2_use {
                if op.op1_use != Some(u) {
                    op.op2_use_chain = std::mem::replace(&mut vars[u.index()].use_chain, num);
                }
            }
            if let Some(u) = op.result_use {
                if op.op1_use != Some(u) && op.op2_use != Some(u) {
                    op.res_use_chain = std::mem::replace(&mut vars[u.index()].use_chain, num);
                }
            }
            let mut define = |def: Option<SsaVar>, operand: zend_ir::Operand| {
                if let Some(d) = def {
                    let var = &mut vars[d.index()];
                    var.var = operand.var().map_or(u32::MAX, |v| v.as_u32());
                    var.definition = num;
                }
            };
            define(op.op1_def, opline.op1);
            define(op.op2_def, opline.op2);
            define(op.result_def, opline.result);
        }

        // Most functions have no phi: their blocks are not visited.
        let blocks = if self.phis.is_empty() {
            0
        } else {
            cfg.blocks_count()
        };
        for b in 0..blocks {
            for k in 0..self.blocks[b].phis.len() {
                let id = self.blocks[b].phis[k];
                let (ssa_var, var) = (self.phis[id.index()].ssa_var, self.phis[id.index()].var);
                self.vars[ssa_var.index()].var = var;
                self.vars[ssa_var.index()].definition_phi = Some(id);
                let sources = self.phis[id.index()].num_sources();
                for j in 0..sources {
                    let Some(source) = self.phis[id.index()].sources[j] else {
                        continue;
                    };
                    // Only the first occurrence of a source links the phi: a later equal
                    // source finds the phi already at the head of the chain.
                    if self.vars[source.index()].phi_use_chain == Some(id) {
                        continue;
                    }
                    self.phis[id.index()].use_chains[j] = self.vars[source.index()].phi_use_chain;
                    self.vars[source.index()].phi_use_chain = Some(id);
                }
                if let Some(crate::Constraint::Range(r)) = &self.phis[id.index()].constraint {
                    // The min and max bounds are never both variables.
                    if let Some(bound) = r.min_ssa_var.or(r.max_ssa_var) {
                        self.phis[id.index()].sym_use_chain =
                            self.vars[bound.index()].sym_use_chain;
                        self.vars[bound.index()].sym_use_chain = Some(id);
                    }
                }
            }
        }

        // Indirectly accessed variables.
        let indirect = cfg
            .func_flags
            .contains(zend_cfg::FuncFlags::INDIRECT_VAR_ACCESS);
        let mut aliased = false;
        for i in 0..last_var as usize {
            if indirect {
                self.vars[i].alias = Alias::Symtable;
                aliased = true;
            } else if op_array.vars[i].as_bytes() == b"http_response_header" {
                self.vars[i].alias = Alias::HttpResponseHeader;
                aliased = true;
            }
        }
        // Most functions alias no CV: their variables keep the default.
        if !aliased {
            return;
        }
        for i in last_var as usize..self.vars.len() {
            let var = self.vars[i].var;
            if var < last_var {
                self.vars[i].alias = self.vars[var as usize].alias;
            }
        }
    }

    /// `zend_ssa_is_no_val_use`: whether op `use_` reads `var` only to overwrite it.
    pub fn is_no_val_use(&self, op_array: &OpArray, use_: OpNum, var: SsaVar) -> bool {
        crate::SsaOp::is_no_val_use(
            &self.ops[use_.index()],
            op_array.opcodes[use_.index()].opcode,
            var,
        )
    }

    /// `zend_ssa_find_false_dependencies`: marks `no_val` the variables whose value is
    /// never read, directly or through phis. Only for functions (not the main script).
    pub fn find_false_dependencies(&mut self, op_array: &OpArray) {
        self.find_false_dependencies_in(op_array, &Bump::new())
    }

    /// [`Ssa::find_false_dependencies`], with its worklist in `scratch`.
    pub fn find_false_dependencies_in(&mut self, op_array: &OpArray, scratch: &Bump) {
        if op_array.function_name.is_none() {
            return;
        }
        let n = self.vars.len();
        // Only a phi passes the use of its value on (to its sources), so only phis go on
        // the worklist: each at most once, when its value is first found used.
        let mut worklist = BVec::with_capacity_in(self.phis.len(), scratch);
        for i in 0..n {
            let var = SsaVar::new(i as u32);
            let used = self
                .uses(var)
                .any(|u| !self.is_no_val_use(op_array, u, var));
            self.vars[i].no_val = !used;
            if let Some(p) = self.vars[i].definition_phi.filter(|_| used) {
                worklist.push(p);
            }
        }
        while let Some(p) = worklist.pop() {
            let phi = &self.phis[p.index()];
            for j in 0..phi.num_sources() {
                if let Some(source) = phi.sources[j] {
                    let source = &mut self.vars[source.index()];
                    if source.no_val {
                        source.no_val = false;
                        if let Some(q) = source.definition_phi {
                            worklist.push(q);
                        }
                    }
                }
            }
        }
    }

    /// `FOR_EACH_VAR_USAGE` of every variable, found once: the variables defined by the ops
    /// using it (and by their OP_DATA or the op an OP_DATA belongs to), in use-chain
    /// order, then by the phis using it. These are the edges of the SSA graph the SCC
    /// search walks and the worklists of type and range inference follow.
    pub fn var_usages_in<'a>(
        &self,
        op_array: &OpArray,
        phi_uses: &crate::PhiUses<'_>,
        scratch: &'a Bump,
    ) -> crate::VarUsages<'a> {
        let n = self.vars.len();
        assert!(
            phi_uses.len() >= n,
            "the phi uses of {} variables, the SSA form has {n}",
            phi_uses.len()
        );
        let ops = &self.ops;
        let opcodes = &op_array.opcodes[..];
        let last = opcodes.len();
        let mut start = BVec::with_capacity_in(n + 1, scratch);
        // Most variables have one or two successors: one reservation covers the common case.
        let mut edges: BVec<SsaVar> = BVec::with_capacity_in(2 * n + self.phis.len(), scratch);
        // Each variable's slice of the phi uses, as bounds into their flat list.
        let phi_bounds = phi_uses.start.windows(2);
        for ((v, info), bounds) in self.vars.iter().enumerate().zip(phi_bounds) {
            start.push(edges.len() as u32);
            // Spelled out: flattening an array of the three left a loop over its slots in
            // this, the hottest loop of the edge search.
            let mut push_defs = |op: &crate::SsaOp| {
                if let Some(d) = op.op1_def {
                    edges.push(d);
                }
                if let Some(d) = op.op2_def {
                    edges.push(d);
                }
                if let Some(d) = op.result_def {
                    edges.push(d);
                }
            };
            // The use chain walked here rather than through Ssa::uses: one load of the op
            // serves its defs and the next link (`zend_ssa_next_use`).
            let me = Some(SsaVar::new(v as u32));
            let mut next = info.use_chain;
            while let Some(u) = next {
                let u = u.index();
                let op = &ops[u];
                next = if op.op1_use == me {
                    op.op1_use_chain
                } else if op.op2_use == me {
                    op.op2_use_chain
                } else {
                    op.res_use_chain
                };
                push_defs(op);
                if opcodes[u].opcode == ZEND_OP_DATA && u > 0 {
                    push_defs(&ops[u - 1]);
                } else if u + 1 < last && opcodes[u + 1].opcode == ZEND_OP_DATA {
                    push_defs(&ops[u + 1]);
                }
            }
            // Most variables feed no phi.
            let (first, end) = (bounds[0] as usize, bounds[1] as usize);
            if first != end {
                let phis = &phi_uses.list[first..end];
                edges.extend(phis.iter().map(|p| self.phis[p.index()].ssa_var));
            }
        }
        start.push(edges.len() as u32);
        crate::VarUsages {
            start: start.into_bump_slice(),
            edges: edges.into_bump_slice(),
        }
    }

    /// `zend_ssa_find_sccs`: strongly connected components of the def-use graph (Pearce's
    /// algorithm, iterative as in PHP), numbered as PHP numbers them; `scc_entry` marks
    /// the variables reached from outside their component.
    pub fn find_sccs(&mut self, op_array: &OpArray) {
        let scratch = Bump::new();
        let phi_uses = self.all_phi_uses(&scratch);
        let usages = self.var_usages_in(op_array, &phi_uses, &scratch);
        self.find_sccs_in(&usages, &scratch);
    }

    /// [`Ssa::find_sccs`] given the variables' usages ([`Ssa::var_usages_in`], which type
    /// inference follows too), with its working arrays in `scratch`.
    pub fn find_sccs_in(&mut self, usages: &crate::VarUsages<'_>, scratch: &Bump) {
        let n = self.vars.len();
        let vars = &self.vars;
        let phis = &self.phis;
        let start = usages.start;
        let edges = usages.edges;

        // PHP's signed numbering: visit indices count up, component numbers count down
        // from `n`; -1 is "not visited". Every live component number is above every index
        // in use (the visited variables without a component number at most `n`), so an
        // edge to a finished variable never lowers the visiting one's.
        let scc = scratch.alloc_slice_fill_copy(n, -1i32);
        let entry = scratch.alloc_slice_fill_copy(n, false);
        let mut index: i32 = 0;
        let mut sccs: i32 = n as i32;
        // Both stacks hold each variable once at most: sized so up front, as growing
        // them from empty copied them several times per op_array.
        let mut stack: BVec<u32> = BVec::with_capacity_in(n, scratch);
        /// A variable being visited: the cursor into its successors, then into its chain
        /// of symbolic range constraints (`zend_scc_next` follows SYM_RANGE too, bounded as
        /// a cycle guard), and the successor being visited from it.
        #[derive(Clone, Copy)]
        struct Frame {
            var: u32,
            cursor: u32,
            end: u32,
            sym: Option<PhiId>,
            steps: u32,
            last: Option<u32>,
        }
        let mut vstack: BVec<Frame> = BVec::with_capacity_in(n, scratch);
        // Whether `var` has no usage at all: its visit is its own component, at once. Most
        // variables (a temporary read once by an op defining nothing) are such leaves.
        let leaf = |var: usize| start[var] == start[var + 1] && vars[var].sym_use_chain.is_none();

        for root in 0..n {
            if vars[root].no_val || scc[root] >= 0 {
                continue;
            }
            if leaf(root) {
                sccs -= 1;
                scc[root] = sccs;
                entry[root] = true;
                continue;
            }
            let mut begin = Some(root);
            loop {
                if let Some(var) = begin.take() {
                    vstack.push(Frame {
                        var: var as u32,
                        cursor: start[var],
                        end: start[var + 1],
                        sym: vars[var].sym_use_chain,
                        steps: 0,
                        last: None,
                    });
                    entry[var] = true;
                    scc[var] = index;
                    index += 1;
                }
                let Some(f) = vstack.last_mut() else { break };
                let var = f.var as usize;
                if let Some(var2) = f.last.take() {
                    // Back from visiting `var2`: finish that edge.
                    if scc[var2 as usize] < scc[var] {
                        scc[var] = scc[var2 as usize];
                        entry[var] = false;
                    }
                }
                loop {
                    let mut found = None;
                    while f.cursor < f.end {
                        let e = edges[f.cursor as usize].index();
                        f.cursor += 1;
                        if !vars[e].no_val {
                            found = Some(e);
                            break;
                        }
                    }
                    let var2 = if let Some(e) = found {
                        e
                    } else {
                        while let Some(id) = f.sym {
                            let e = phis[id.index()].ssa_var.index();
                            f.sym = phis[id.index()].sym_use_chain;
                            f.steps += 1;
                            if f.steps as usize > phis.len() {
                                f.sym = None;
                            }
                            if !vars[e].no_val {
                                found = Some(e);
                                break;
                            }
                        }
                        match found {
                            Some(e) => e,
                            None => break,
                        }
                    };
                    if scc[var2] < 0 {
                        if leaf(var2) {
                            // Visited and finished in place; the edge then changes nothing.
                            sccs -= 1;
                            scc[var2] = sccs;
                            entry[var2] = true;
                            continue;
                        }
                        f.last = Some(var2 as u32);
                        begin = Some(var2);
                        break;
                    }
                    if scc[var2] < scc[var] {
                        scc[var] = scc[var2];
                        entry[var] = false;
                    }
                }
                if begin.is_some() {
                    continue;
                }
                // Finish visiting `var`.
                vstack.pop();
                if entry[var] {
                    sccs -= 1;
                    while let Some(&var2) = stack.last() {
                        if scc[var2 as usize] < scc[var] {
                            break;
                        }
                        stack.pop();
                        scc[var2 as usize] = sccs;
                        index -= 1;
                    }
                    scc[var] = sccs;
                    index -= 1;
                } else {
                    stack.push(var as u32);
                }
            }
        }

        // PHP's entry marking: a successor in another component (or in none: a no_val
        // variable) is entered from outside.
        // Each variable's successors as bounds into `edges`, walked in step with `scc`.
        for (&scc_j, bounds) in scc.iter().zip(start.windows(2)) {
            let (first, end) = (bounds[0] as usize, bounds[1] as usize);
            // Most variables have no successor.
            if scc_j < 0 || first == end {
                continue;
            }
            for &var2 in &edges[first..end] {
                if scc[var2.index()] != scc_j {
                    entry[var2.index()] = true;
                }
            }
        }
        self.sccs = (n as i32 - sccs) as u32;
        for ((v, &s), &e) in self.vars.iter_mut().zip(scc.iter()).zip(entry.iter()) {
            v.scc = (s >= 0).then(|| (s - sccs) as u32);
            v.scc_entry = e;
        }
    }

    /// The phis and pis of the function, block by block.
    pub fn all_phis(&self) -> impl Iterator<Item = PhiId> + '_ {
        self.blocks.iter().flat_map(|b| b.phis.iter().copied())
    }
}
