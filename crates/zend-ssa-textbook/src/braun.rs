//! Braun et al. (2013): SSA built on the fly while blocks are filled.
//!
//! [`Builder`] is the incremental API: a front end creates blocks, adds predecessor edges,
//! writes and reads variables as it emits each block's code, marks blocks filled, and seals
//! a block once all its predecessors are known. Reads in unsealed blocks create incomplete
//! phis, completed on sealing; a phi whose operands are only itself and one other value is
//! trivial and replaced by that value, and the phis using it are re-examined (a worklist,
//! not recursion). `readVariableRecursive` too runs on an explicit stack, so a chain of
//! 100k blocks is fine. Replaced phis are forwarded lazily (union-find), so values handed
//! out earlier stay valid: [`Builder::resolve`] gives their current meaning.
//!
//! [`build`] drives the builder over an op_array's CFG in block order, sealing each block
//! as soon as all its predecessors are filled.
//!
//! Known limit (as in the paper's basic algorithm): on irreducible control flow, redundant
//! SCCs of phis (not individually trivial) can remain, where minimal SSA has none.

use crate::cytron::all_effects;
use crate::{PhiId, PhiNode, SsaForm, Use, Value};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Multiplicative hashing of the `u32` variable numbers (SipHash is needlessly slow for
/// them, and the keys are not attacker-chosen).
#[derive(Default)]
struct VarHasher(u64);

impl Hasher for VarHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(i)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type VarMap = HashMap<u32, Value, BuildHasherDefault<VarHasher>>;
use zend_cfg::{BlockId, Cfg};
use zend_ir::OpArray;

#[derive(Clone, Debug, Default)]
struct Block {
    preds: Vec<BlockId>,
    sealed: bool,
    filled: bool,
    current_def: VarMap,
    incomplete: Vec<(u32, PhiId)>,
    /// Edge-specific values: on the edge to `.0`, variable `.1` has the value `.2`
    /// (`None`: what reaches the block's entry).
    edge_values: Vec<(BlockId, u32, Option<Value>)>,
}

#[derive(Clone, Debug)]
struct Phi {
    block: BlockId,
    var: u32,
    operands: Vec<Value>,
    /// Phis using this one as an operand.
    users: Vec<PhiId>,
    replaced_by: Option<Value>,
}

/// Incremental SSA construction. Variables are `u32`s; a front end's definitions are
/// [`Value::Def`]s (any numbering it likes).
pub struct Builder {
    blocks: Vec<Block>,
    phis: Vec<Phi>,
    /// Value of a variable read where nothing defines it (entry block or no predecessors).
    entry: Box<dyn Fn(u32) -> Value>,
    scratch: (Vec<Task>, Vec<Value>),
}

enum Task {
    Read(BlockId),
    /// The value on top of the stack is what `var` is in this block: record it.
    WriteBack(BlockId),
    /// Add operand `i` (the value on top of the stack, if `i > 0`) and read the next.
    Operands(PhiId, usize),
    /// Read at the end of the predecessor for an edge override.
    ReadEdge(BlockId, BlockId),
}

impl Builder {
    /// A builder where a variable nothing defines has value `entry(var)`.
    pub fn new(entry: impl Fn(u32) -> Value + 'static) -> Builder {
        Builder {
            blocks: Vec::new(),
            phis: Vec::new(),
            entry: Box::new(entry),
            scratch: (Vec::new(), Vec::new()),
        }
    }

    /// A new, empty, unsealed block.
    pub fn new_block(&mut self) -> BlockId {
        self.blocks.push(Block::default());
        BlockId::new(self.blocks.len() as u32 - 1)
    }

    /// Adds the edge `pred → block` (before `block` is sealed). Phi operands follow the
    /// order edges are added in.
    pub fn add_predecessor(&mut self, block: BlockId, pred: BlockId) {
        assert!(!self.blocks[block.index()].sealed, "{block:?} is sealed");
        self.blocks[block.index()].preds.push(pred);
    }

    /// `writeVariable`.
    pub fn write_variable(&mut self, block: BlockId, var: u32, value: Value) {
        self.blocks[block.index()].current_def.insert(var, value);
    }

    /// Like [`Builder::write_variable`], except on the edge to `to`, where `var` keeps the
    /// value it had before this write (PHP's FE_FETCH, which assigns only when it does
    /// not leave the loop). Must be the block's last write of `var`.
    pub fn write_variable_except_on_edge(
        &mut self,
        block: BlockId,
        var: u32,
        value: Value,
        to: BlockId,
    ) {
        let before = self.blocks[block.index()].current_def.get(&var).copied();
        self.blocks[block.index()]
            .edge_values
            .push((to, var, before));
        self.write_variable(block, var, value);
    }

    /// Marks `block` filled: no more writes will come.
    pub fn fill_block(&mut self, block: BlockId) {
        self.blocks[block.index()].filled = true;
    }

    pub fn is_filled(&self, block: BlockId) -> bool {
        self.blocks[block.index()].filled
    }

    pub fn is_sealed(&self, block: BlockId) -> bool {
        self.blocks[block.index()].sealed
    }

    /// `sealBlock`: all predecessors are known; completes the incomplete phis.
    pub fn seal_block(&mut self, block: BlockId) {
        let incomplete = std::mem::take(&mut self.blocks[block.index()].incomplete);
        for (var, phi) in incomplete {
            self.run(var, Task::Operands(phi, 0));
        }
        self.blocks[block.index()].sealed = true;
    }

    /// `readVariable`: the value of `var` at the current end of `block`.
    pub fn read_variable(&mut self, block: BlockId, var: u32) -> Value {
        // Local value numbering: no machinery when the block defines it.
        if let Some(&v) = self.blocks[block.index()].current_def.get(&var) {
            return self.resolve(v);
        }
        let v = self.run(var, Task::Read(block));
        self.resolve(v)
    }

    /// What a value handed out earlier stands for now (trivial phis replaced).
    pub fn resolve(&mut self, v: Value) -> Value {
        let mut cur = v;
        while let Value::Phi(p) = cur {
            match self.phis[p.0 as usize].replaced_by {
                Some(next) => cur = next,
                None => break,
            }
        }
        // Path compression.
        let mut fix = v;
        while let Value::Phi(p) = fix {
            match self.phis[p.0 as usize].replaced_by {
                Some(next) if next != cur => {
                    self.phis[p.0 as usize].replaced_by = Some(cur);
                    fix = next;
                }
                _ => break,
            }
        }
        cur
    }

    fn new_phi(&mut self, block: BlockId, var: u32) -> PhiId {
        self.phis.push(Phi {
            block,
            var,
            operands: Vec::new(),
            users: Vec::new(),
            replaced_by: None,
        });
        PhiId(self.phis.len() as u32 - 1)
    }

    /// The read machine: `readVariable`/`readVariableRecursive`/`addPhiOperands` on an
    /// explicit stack. Returns the value the first task produces.
    fn run(&mut self, var: u32, first: Task) -> Value {
        // Buffers reused across reads (a nested read gets fresh ones).
        let (mut tasks, mut values) = std::mem::take(&mut self.scratch);
        tasks.clear();
        values.clear();
        tasks.push(first);
        while let Some(task) = tasks.pop() {
            match task {
                Task::Read(b) => {
                    let block = &self.blocks[b.index()];
                    if let Some(&v) = block.current_def.get(&var) {
                        values.push(v);
                    } else if !block.sealed {
                        let phi = self.new_phi(b, var);
                        self.blocks[b.index()].incomplete.push((var, phi));
                        self.write_variable(b, var, Value::Phi(phi));
                        values.push(Value::Phi(phi));
                    } else if block.preds.is_empty() {
                        let v = (self.entry)(var);
                        self.write_variable(b, var, v);
                        values.push(v);
                    } else if block.preds.len() == 1 {
                        let p = block.preds[0];
                        tasks.push(Task::WriteBack(b));
                        tasks.push(Task::ReadEdge(p, b));
                    } else {
                        let phi = self.new_phi(b, var);
                        self.write_variable(b, var, Value::Phi(phi));
                        tasks.push(Task::Operands(phi, 0));
                    }
                }
                Task::ReadEdge(p, to) => {
                    let edge = self.blocks[p.index()]
                        .edge_values
                        .iter()
                        .find(|&&(t, v, _)| t == to && v == var)
                        .map(|&(_, _, before)| before);
                    match edge {
                        Some(Some(v)) => values.push(v),
                        Some(None) => {
                            // The value reaching p's entry: read as if p had no write.
                            let saved = self.blocks[p.index()].current_def.remove(&var);
                            let v = self.run(var, Task::Read(p));
                            // Reading cached the entry value under var: restore the write.
                            if let Some(s) = saved {
                                self.blocks[p.index()].current_def.insert(var, s);
                            }
                            values.push(v);
                        }
                        None => tasks.push(Task::Read(p)),
                    }
                }
                Task::WriteBack(b) => {
                    let v = *values.last().expect("a read value");
                    self.write_variable(b, var, v);
                }
                Task::Operands(phi, i) => {
                    if i > 0 {
                        // Resolved now, so a later replacement of that phi finds this
                        // user.
                        let v = values.pop().expect("an operand");
                        let v = self.resolve(v);
                        self.phis[phi.0 as usize].operands.push(v);
                        if let Value::Phi(q) = v {
                            self.phis[q.0 as usize].users.push(phi);
                        }
                    }
                    let b = self.phis[phi.0 as usize].block;
                    let preds = &self.blocks[b.index()].preds;
                    if i < preds.len() {
                        let p = preds[i];
                        tasks.push(Task::Operands(phi, i + 1));
                        tasks.push(Task::ReadEdge(p, b));
                    } else {
                        let v = self.try_remove_trivial_phi(phi);
                        values.push(v);
                    }
                }
            }
        }
        let v = values.pop().expect("the read's value");
        self.scratch = (tasks, values);
        v
    }

    /// `tryRemoveTrivialPhi`, with the re-examination of users on a worklist. Returns what
    /// `phi` stands for afterwards.
    fn try_remove_trivial_phi(&mut self, phi: PhiId) -> Value {
        let mut work = vec![phi];
        while let Some(p) = work.pop() {
            if self.phis[p.0 as usize].replaced_by.is_some() {
                continue;
            }
            let b = self.phis[p.0 as usize].block;
            if self.phis[p.0 as usize].operands.len() < self.blocks[b.index()].preds.len() {
                continue; // incomplete: not yet decidable
            }
            let mut same: Option<Value> = None;
            let mut trivial = true;
            for i in 0..self.phis[p.0 as usize].operands.len() {
                let op = self.phis[p.0 as usize].operands[i];
                let op = self.resolve(op);
                if Some(op) == same || op == Value::Phi(p) {
                    continue;
                }
                if same.is_some() {
                    trivial = false;
                    break;
                }
                same = Some(op);
            }
            if !trivial {
                continue;
            }
            // Unreachable or in the entry block: no value.
            let same = same.unwrap_or(Value::Undef);
            self.phis[p.0 as usize].replaced_by = Some(same);
            if let Value::Phi(q) = same {
                let users = self.phis[p.0 as usize].users.clone();
                self.phis[q.0 as usize].users.extend(users);
            }
            for &u in &self.phis[p.0 as usize].users {
                if u != p {
                    work.push(u);
                }
            }
        }
        self.resolve(Value::Phi(phi))
    }

    /// The phis still standing (operands resolved, renumbered densely) and a map from this
    /// builder's phi ids to values in that numbering.
    pub fn finish(mut self) -> (Vec<PhiNode>, impl Fn(Value) -> Value) {
        let n = self.phis.len();
        let mut final_of: Vec<Value> = Vec::with_capacity(n);
        for i in 0..n {
            let v = self.resolve(Value::Phi(PhiId(i as u32)));
            final_of.push(v);
        }
        let mut new_id = vec![u32::MAX; n];
        let mut out = Vec::new();
        for (i, phi) in self.phis.iter().enumerate() {
            if phi.replaced_by.is_none() {
                new_id[i] = out.len() as u32;
                out.push(PhiNode {
                    block: phi.block,
                    var: phi.var,
                    sources: phi.operands.clone(),
                });
            }
        }
        let map = move |v: Value| match v {
            Value::Phi(p) => match final_of[p.0 as usize] {
                Value::Phi(q) => Value::Phi(PhiId(new_id[q.0 as usize])),
                other => other,
            },
            other => other,
        };
        for phi in &mut out {
            for s in &mut phi.sources {
                *s = map(*s);
            }
        }
        (out, map)
    }
}

/// Braun's construction over an op_array's CFG: blocks in number order, each sealed as
/// soon as all its predecessors are filled; phi operands in [`Cfg::predecessors`] order.
pub fn build(op_array: &OpArray, cfg: &Cfg) -> SsaForm {
    let (effects, ranges) = all_effects(op_array, cfg);
    let last_var = op_array.last_var();
    let mut b = Builder::new(move |v| {
        if v < last_var {
            Value::Entry(v)
        } else {
            Value::Undef
        }
    });
    let n = cfg.blocks_count();
    for _ in 0..n {
        b.new_block();
    }
    let mut unfilled_preds = vec![0usize; n];
    for (j, count) in unfilled_preds.iter_mut().enumerate() {
        if !cfg.blocks[j].is_reachable() {
            continue;
        }
        for &p in cfg.predecessors(BlockId::new(j as u32)) {
            b.add_predecessor(BlockId::new(j as u32), p);
            *count += 1;
        }
    }
    for (j, &count) in unfilled_preds.iter().enumerate() {
        if count == 0 && cfg.blocks[j].is_reachable() {
            b.seal_block(BlockId::new(j as u32));
        }
    }
    let mut uses: Vec<Use> = Vec::new();
    for (j, &(s, e)) in ranges.iter().enumerate() {
        if !cfg.blocks[j].is_reachable() {
            continue;
        }
        let block = BlockId::new(j as u32);
        for eff in &effects[s..e] {
            for &u in eff.uses.iter() {
                let value = b.read_variable(block, u);
                uses.push(Use {
                    op: eff.op,
                    var: u,
                    value,
                });
            }
            for &d in eff.defs.iter() {
                let value = Value::Def { op: eff.op, var: d };
                match (eff.kept_on_exit, cfg.successors(block).first()) {
                    (Some(v), Some(&exit)) if v == d => {
                        b.write_variable_except_on_edge(block, d, value, exit)
                    }
                    _ => b.write_variable(block, d, value),
                }
            }
        }
        b.fill_block(block);
        let mut succs = cfg.successors(block).to_vec();
        succs.sort_unstable();
        succs.dedup();
        for succ in succs {
            let si = succ.index();
            unfilled_preds[si] -= 1;
            if unfilled_preds[si] == 0 && !b.is_sealed(succ) {
                b.seal_block(succ);
            }
        }
    }
    let (phis, map) = b.finish();
    for u in &mut uses {
        u.value = map(u.value);
    }
    SsaForm { phis, uses }
}
