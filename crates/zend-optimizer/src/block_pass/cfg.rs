//! The block pass's own view of the CFG: `zend_build_cfg(..., 0, ...)` as block_pass.c
//! edits it — blocks whose start, length, flags and successor arrays the pass rewrites in
//! place — and `zend_cfg_remark_reachable_blocks`.
//!
//! Built from [`zend_cfg::Cfg::build_blocks`], then owned here: the pass moves block
//! starts (leading NOPs), shortens blocks, retargets and drops successors, hands a SWITCH
//! block's successor array to the block it merges into, and re-marks reachability, none
//! of which zend-cfg's shared, immutable-edge `Cfg` (used by the DFA analyses) offers.
//! Predecessors are never built: PHP's block pass does not build them, so its dumps have
//! no `from=` lines.

use zend_cfg::cfg::{is_loop_var_free, loop_var_def};
use zend_cfg::{BlockFlags, BlockId, BuildFlags, Cfg, CfgBuffers, CfgError, FuncFlags};
use zend_ir::opcode::*;
use zend_ir::{OpArray, OpNum, Opcode, TryCatchElement};

/// A `zend_basic_block` as the block pass uses it.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    pub flags: BlockFlags,
    pub start: u32,
    pub len: u32,
    /// `b->successors`: the array, whose entries past `successors_count` keep what they
    /// held (the dump prints jump operands from it). At least two entries.
    pub successors: Successors,
    pub successors_count: usize,
}

/// Where a block's successors live: its own two-entry storage (`successors_storage`), or
/// an array of their own (SWITCH/MATCH blocks), which merging moves to the merged block.
#[derive(Clone, Debug)]
pub(crate) enum Successors {
    Inline([BlockId; 2]),
    Table(Vec<BlockId>),
}

impl Successors {
    pub fn is_inline(&self) -> bool {
        matches!(self, Successors::Inline(_))
    }
}

impl std::ops::Deref for Successors {
    type Target = [BlockId];
    fn deref(&self) -> &[BlockId] {
        match self {
            Successors::Inline(s) => s,
            Successors::Table(s) => s,
        }
    }
}

impl std::ops::DerefMut for Successors {
    fn deref_mut(&mut self) -> &mut [BlockId] {
        match self {
            Successors::Inline(s) => s,
            Successors::Table(s) => s,
        }
    }
}

impl Block {
    pub fn reachable(&self) -> bool {
        self.flags.contains(BlockFlags::REACHABLE)
    }

    /// The last op, if the block has any.
    pub fn last(&self) -> Option<usize> {
        (self.len > 0).then(|| (self.start + self.len - 1) as usize)
    }
}

/// The CFG of one op_array during the block pass. It stays in the optimization context
/// between op_arrays (see [`BlockCfg::rebuild`]), so that building the next one allocates
/// nothing once its vectors have grown.
#[derive(Default)]
pub(crate) struct BlockCfg {
    pub blocks: Vec<Block>,
    /// `cfg->map`: the block of each op as the CFG was built (the pass does not update it).
    pub map: Vec<BlockId>,
    pub func_flags: FuncFlags,
    /// [`BlockCfg::mark_reachable`]'s worklist, reused by every marking.
    stack: Vec<usize>,
    /// The vectors of the zend-cfg CFG this one was made from, for the next build.
    spare: CfgBuffers,
}

impl BlockCfg {
    /// `zend_build_cfg` with no flags, replacing this CFG. PHP's build moves the `try_op`
    /// of a try block whose first blocks are unreachable; that move is written back into
    /// `op_array`. Without the operand check when `operands_checked`
    /// ([`BuildFlags::OPERANDS_CHECKED`]).
    pub fn rebuild(
        &mut self,
        op_array: &mut OpArray,
        scratch: &bumpalo::Bump,
        operands_checked: bool,
    ) -> Result<(), CfgError> {
        let spare = std::mem::take(&mut self.spare);
        let mut flags = BuildFlags::empty();
        flags.set(BuildFlags::OPERANDS_CHECKED, operands_checked);
        let mut cfg = Cfg::build_successors_reusing(op_array, flags, scratch, spare)?;
        std::mem::swap(&mut op_array.try_catch_array, &mut cfg.try_catch);
        // The map is taken as built; the next build gets this CFG's old one.
        std::mem::swap(&mut self.map, &mut cfg.map);
        self.blocks.clear();
        self.blocks.extend((0..cfg.blocks_count()).map(|n| {
            let b = BlockId::new(n as u32);
            let block = cfg.block(b);
            // zend_build_cfg keeps the successors of unreachable blocks (only
            // zend_cfg_build_predecessors drops them).
            let stored = cfg.stored_successors(b);
            let successors = match *stored {
                [] => Successors::Inline([BlockId::new(0); 2]),
                [a] => Successors::Inline([a, BlockId::new(0)]),
                [a, b] => Successors::Inline([a, b]),
                _ => Successors::Table(stored.to_vec()),
            };
            Block {
                flags: block.flags,
                start: block.start,
                len: block.len,
                successors_count: stored.len(),
                successors,
            }
        }));
        self.func_flags = cfg.func_flags;
        self.spare = cfg.into_buffers();
        Ok(())
    }

    pub fn succ(&self, b: usize, n: usize) -> usize {
        self.blocks[b].successors[n].index()
    }

    fn block_of(&self, op: OpNum) -> usize {
        self.map.get(op.index()).map_or(0, |b| b.index())
    }

    /// `zend_cfg_remark_reachable_blocks`: clears every block's flags and marks again from
    /// the first reachable block (the exception table and unreachable loop-variable frees
    /// included).
    pub fn remark_reachable_blocks(&mut self, op_array: &mut OpArray) {
        let start = self.blocks.iter().position(Block::reachable).unwrap_or(0);
        for b in &mut self.blocks {
            b.flags = BlockFlags::empty();
        }
        self.mark_reachable_blocks(op_array, start);
    }

    /// `zend_mark_reachable`: marks `from` and everything reachable from it, with the
    /// FOLLOW/TARGET/EXIT flags the edges imply (the order of the walk does not change
    /// them).
    fn mark_reachable(&mut self, op_array: &OpArray, from: usize) {
        // A block is marked reachable as it is queued, so that it is queued once: a
        // marking costs the blocks it reaches (the exception table marks from each catch
        // block in turn, and a set of every block cleared per marking made that quadratic).
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.push(from);
        self.blocks[from].flags |= BlockFlags::REACHABLE;
        while let Some(b) = stack.pop() {
            let count = self.blocks[b].successors_count;
            if count == 0 {
                self.blocks[b].flags |= BlockFlags::EXIT;
                continue;
            }
            let last_opcode = self.blocks[b].last().map(|i| op_array.opcodes[i].opcode);
            let (first, last) = edge_flags(last_opcode, count);
            if let Successors::Inline(succ) = self.blocks[b].successors {
                // One or two successors (all but SWITCH/MATCH blocks), read in place.
                for (succ, add) in succ.into_iter().zip([first, last]).take(count) {
                    let block = &mut self.blocks[succ.index()];
                    if !block.reachable() {
                        stack.push(succ.index());
                    }
                    block.flags |= add | BlockFlags::REACHABLE;
                }
                continue;
            }
            for i in 0..count {
                let succ = self.succ(b, i);
                let add = if i > 0 && i + 1 == count { last } else { first };
                if !self.blocks[succ].reachable() {
                    stack.push(succ);
                }
                self.blocks[succ].flags |= add | BlockFlags::REACHABLE;
            }
        }
        self.stack = stack;
    }

    /// `zend_mark_reachable_blocks`: from `start`, then through the exception table (moving
    /// the `try_op` of a try block entered in its middle, in `op_array`), then the
    /// unreachable blocks that free a loop variable defined in a reachable one.
    fn mark_reachable_blocks(&mut self, op_array: &mut OpArray, start: usize) {
        self.blocks[start].flags = BlockFlags::START;
        self.mark_reachable(op_array, start);

        if !op_array.try_catch_array.is_empty() {
            let count = self.blocks.len();
            loop {
                let mut changed = false;
                for j in 0..op_array.try_catch_array.len() {
                    let tc: TryCatchElement = op_array.try_catch_array[j].clone();
                    let mut b = self.block_of(tc.try_op);
                    if !self.blocks[b].reachable() {
                        if let Some(catch_op) = tc.catch_op {
                            let end = self.block_of(catch_op);
                            while b != end && b < count {
                                if self.blocks[b].reachable() {
                                    op_array.try_catch_array[j].try_op =
                                        OpNum::new(self.blocks[b].start);
                                    break;
                                }
                                b += 1;
                            }
                        }
                        b = self.block_of(op_array.try_catch_array[j].try_op);
                        if !self.blocks[b].reachable() {
                            if let Some(finally_op) = tc.finally_op {
                                let end = self.block_of(finally_op);
                                while b != end && b < count {
                                    if self.blocks[b].reachable() {
                                        // PHP moves try_op to catch_op (0 when absent) and
                                        // marks from there.
                                        op_array.try_catch_array[j].try_op =
                                            tc.catch_op.unwrap_or(OpNum::new(0));
                                        changed = true;
                                        let target =
                                            self.block_of(op_array.try_catch_array[j].try_op);
                                        self.mark_reachable(op_array, target);
                                        break;
                                    }
                                    b += 1;
                                }
                            }
                        }
                    }

                    let b = self.block_of(op_array.try_catch_array[j].try_op);
                    if self.blocks[b].reachable() {
                        self.blocks[b].flags |= BlockFlags::TRY;
                        let parts = [
                            (tc.catch_op, BlockFlags::CATCH),
                            (tc.finally_op, BlockFlags::FINALLY),
                            (tc.finally_end, BlockFlags::FINALLY_END),
                        ];
                        for (op, flag) in parts {
                            if let Some(op) = op {
                                let b = self.block_of(op);
                                self.blocks[b].flags |= flag;
                                if !self.blocks[b].reachable() {
                                    changed = true;
                                    self.mark_reachable(op_array, b);
                                }
                            }
                        }
                    }
                }
                if !changed {
                    break;
                }
            }
        }

        if self.func_flags.contains(FuncFlags::FREE_LOOP_VAR) {
            for b in 0..self.blocks.len() {
                if self.blocks[b].reachable() {
                    continue;
                }
                let ops = self.blocks[b].start..self.blocks[b].start + self.blocks[b].len;
                for j in ops {
                    let Some(op) = op_array.opcodes.get(j as usize) else {
                        break;
                    };
                    if is_loop_var_free(op) {
                        if let Some(def) = loop_var_def(op_array, OpNum::new(j)) {
                            if self.blocks[self.block_of(def)].reachable() {
                                self.blocks[b].flags |= BlockFlags::UNREACHABLE_FREE;
                                break;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The FOLLOW/TARGET flags `zend_mark_reachable` gives the edges out of a block ending in
/// `last_opcode` (`None`: an empty block) with `count` successors: those of the first edge,
/// and those of the last when there are several (every edge between has the first's).
#[inline(always)]
fn edge_flags(last_opcode: Option<Opcode>, count: usize) -> (BlockFlags, BlockFlags) {
    match (last_opcode, count) {
        (None, _) => (BlockFlags::FOLLOW, BlockFlags::FOLLOW),
        (Some(ZEND_MATCH), _) => (BlockFlags::TARGET, BlockFlags::TARGET),
        // The default target, last, is also where the switch falls through.
        (Some(ZEND_SWITCH_LONG | ZEND_SWITCH_STRING), 1) => {
            (BlockFlags::FOLLOW | BlockFlags::TARGET, BlockFlags::empty())
        }
        (Some(ZEND_SWITCH_LONG | ZEND_SWITCH_STRING), _) => {
            (BlockFlags::TARGET, BlockFlags::FOLLOW | BlockFlags::TARGET)
        }
        (Some(ZEND_JMP), 1) => (BlockFlags::TARGET, BlockFlags::empty()),
        (Some(_), 1) => (BlockFlags::FOLLOW, BlockFlags::empty()),
        // A conditional jump: its target, then the op after it.
        (Some(_), _) => (BlockFlags::TARGET, BlockFlags::FOLLOW),
    }
}
