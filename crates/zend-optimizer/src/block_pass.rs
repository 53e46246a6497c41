//! Mirrors `zend_optimize_cfg` (block_pass.c): the CFG-based pass (PASS_5).
//!
//! The op_array is cut into basic blocks (`zend_build_cfg` with no flags), then up to three
//! rounds of: [`t_usage`] (which TMP/VARs live across blocks; results nobody reads are
//! dropped), [`optimize::optimize_block`] on every reachable block (block-local constant
//! propagation and peephole rewrites), NOP stripping, [`jumps::jmp_optimization`] (jump
//! threading), reachability marked again, and [`merge_blocks`]. A round that changes no
//! jump and merges no block ends the loop (PHP resets its counter after the block
//! rewrites, so those alone do not buy another round). [`assemble`] then lays the
//! reachable blocks out again without NOPs, with jump targets, the exception table and
//! FAST_RET indexes renumbered.
//!
//! Dumps: `before block pass` and `after block pass` (the op_array by blocks, as
//! `zend_dump_op_array` prints it with a CFG: no `from=` lines, since the pass never
//! builds predecessors) and the `NON-LOCAL-VARS` line of every round.
//!
//! Guarantees: jump targets, try/catch offsets and FAST_RET indexes are valid after the
//! pass; live ranges are only clamped into the new op count — like PHP, the driver
//! recomputes them once the optimizer is done. An op_array whose CFG cannot be built is
//! left unchanged.

mod cfg;
mod dump;
mod jumps;
mod optimize;

use zend_cfg::cfg::is_loop_var_free;
use zend_cfg::{BlockFlags, BlockId};
use zend_ir::dump::debug_level;
use zend_ir::opcode::*;
use zend_ir::{Literal, LiteralId, Op, OpArray, OpNum, Opcode, Operand};

use crate::ctx::OptimizerCtx;
use crate::php_bugs::PhpBugs;
use crate::ChangeKind;
use cfg::{Block, BlockCfg, Successors};

pub(crate) use crate::helpers::{ZEND_ACC_HAS_FINALLY_BLOCK, ZEND_LAST_CATCH};

/// PHP's `PASSES`: at most three rounds.
const PASSES: u32 = 3;

/// The pass's CFG and per-variable sets, kept in the optimization context so that
/// optimizing an op_array reuses the memory of the previous one. Boxed, so that taking it
/// out of the context for a run moves a pointer.
#[derive(Default)]
pub(crate) struct Scratch(Option<Box<Memory>>);

/// What [`Scratch`] keeps between runs.
#[derive(Default)]
struct Memory {
    used_ext: Vec<bool>,
    /// [`Pass::var_states`]' memory.
    var_states: Vec<VarState>,
    /// [`Pass::candidates`]' memory.
    candidates: Vec<Candidate>,
    tsource: VarSources,
    cfg: BlockCfg,
}

/// `Tsource`: the op defining each TMP/VAR slot in the current extended block, all reset
/// to none in O(1): each slot keeps the generation it was written in (and the op, `NONE`
/// for none), and [`VarSources::clear`] starts a new one. PHP resets `Tsource` with a
/// memset of every slot at the start of each extended block, which costs blocks x slots:
/// 40 million slot writes for a function of 2000 try/catch blocks.
#[derive(Default)]
pub(crate) struct VarSources {
    slots: Vec<(u32, u32)>,
    generation: u32,
}

impl VarSources {
    const NONE: u32 = u32::MAX;

    /// At least `len` slots, every one none: the slots of the previous op_array are reused
    /// as they are, a new generation making them none.
    fn reset(&mut self, len: usize) {
        if self.slots.len() < len {
            self.slots.resize(len, (0, Self::NONE));
        }
        self.clear();
    }

    /// Every slot back to none.
    pub fn clear(&mut self) {
        self.generation += 1;
        if self.generation == u32::MAX {
            self.slots.fill((0, Self::NONE));
            self.generation = 1;
        }
    }

    /// The op defining `slot`, if one did since the last clear.
    pub fn get(&self, slot: usize) -> Option<usize> {
        let (generation, op) = self.slots[slot];
        (generation == self.generation && op != Self::NONE).then_some(op as usize)
    }

    pub fn set(&mut self, slot: usize, op: Option<usize>) {
        self.slots[slot] = (self.generation, op.map_or(Self::NONE, |op| op as u32));
    }
}

/// The state of one run of the pass over one op_array: the op_array, and the CFG and
/// per-variable sets in the optimization context's [`Scratch`].
pub(crate) struct Pass<'a, 'c> {
    pub op_array: &'a mut OpArray,
    pub cfg: &'a mut BlockCfg,
    /// `used_ext`: TMP/VARs read outside the (extended) block defining them.
    pub used_ext: &'a mut Vec<bool>,
    /// `Tsource`: the op defining each TMP/VAR in the current extended block.
    pub tsource: &'a mut VarSources,
    /// [`t_usage`]'s state of each TMP/VAR slot.
    var_states: &'a mut Vec<VarState>,
    /// The ops whose results [`t_usage`] drops if nobody reads them.
    candidates: &'a mut Vec<Candidate>,
    pub opt_count: u32,
    pub ctx: &'a mut OptimizerCtx<'c>,
}

/// `zend_optimize_cfg`.
pub fn run(op_array: &mut OpArray, ctx: &mut OptimizerCtx) {
    if op_array.opcodes.is_empty() {
        return;
    }
    ctx.state.work.pass_arena.reset();
    // The CFG's vectors and the per-variable sets live in the optimization context
    // between op_arrays.
    let mut memory = ctx.state.work.block_pass.0.take().unwrap_or_default();
    optimize_cfg(op_array, ctx, &mut memory);
    ctx.state.work.block_pass.0 = Some(memory);
}

/// [`run`] with the pass's memory out of the context.
fn optimize_cfg(op_array: &mut OpArray, ctx: &mut OptimizerCtx, memory: &mut Memory) {
    let Memory {
        used_ext,
        var_states,
        candidates,
        tsource,
        cfg,
    } = memory;
    let original_try_catch = op_array.try_catch_array.clone();
    if cfg
        .rebuild(
            op_array,
            &ctx.state.work.pass_arena,
            ctx.state.operands_checked,
        )
        .is_err()
    {
        op_array.try_catch_array = original_try_catch;
        return;
    }
    let slots = (op_array.last_var() + op_array.T) as usize;
    if cfg.blocks.len() * slots > 64 * 1024 * 1024 {
        return;
    }
    if ctx.debug_level & debug_level::BEFORE_BLOCK_PASS != 0 {
        let info = func_info(ctx);
        dump::dump_cfg(
            &mut ctx.state.dumps,
            op_array,
            cfg,
            false,
            "before block pass",
            info.as_ref(),
        );
    }
    // t_usage sizes used_ext.
    tsource.reset(slots);
    let mut pass = Pass {
        op_array,
        cfg,
        used_ext,
        tsource,
        var_states,
        candidates,
        opt_count: 0,
        ctx,
    };
    let kept_whole = pass
        .ctx
        .php_bugs
        .contains(PhpBugs::UNREACHABLE_FREE_KEPT_WHOLE);
    for _ in 0..PASSES {
        pass.opt_count = 0;
        t_usage(&mut pass);

        for b in 0..pass.cfg.blocks.len() {
            let flags = pass.cfg.blocks[b].flags;
            if !flags.contains(BlockFlags::REACHABLE) {
                continue;
            }
            // Sources are tracked within an extended block only.
            if !flags.contains(BlockFlags::FOLLOW) || flags.contains(BlockFlags::TARGET) {
                pass.tsource.clear();
            }
            optimize::optimize_block(&mut pass, b);
        }

        for b in 0..pass.cfg.blocks.len() {
            let block = &mut pass.cfg.blocks[b];
            if kept_whole && block.flags.contains(BlockFlags::UNREACHABLE_FREE) {
                // PHP 8.2 drops the rest of an unreachable_free block here, in each round,
                // and assembles such blocks whole.
                let ops = block.start as usize..(block.start + block.len) as usize;
                for op in &mut pass.op_array.opcodes[ops] {
                    if !is_loop_var_free(op) {
                        make_nop(op);
                    }
                }
            }
            if block
                .flags
                .intersects(BlockFlags::REACHABLE | BlockFlags::UNREACHABLE_FREE)
            {
                strip_nops(pass.op_array, block);
            }
        }

        pass.opt_count = 0;
        for b in 0..pass.cfg.blocks.len() {
            if pass.cfg.blocks[b].reachable() {
                jumps::jmp_optimization(pass.op_array, pass.cfg, b, &mut pass.opt_count);
            }
        }

        pass.cfg.remark_reachable_blocks(pass.op_array);
        merge_blocks(pass.op_array, pass.cfg, &mut pass.opt_count);

        if pass.opt_count == 0 {
            break;
        }
    }

    assemble(&mut pass);
    if pass.ctx.debug_level & debug_level::AFTER_BLOCK_PASS != 0 {
        let info = func_info(pass.ctx);
        dump::dump_cfg(
            &mut pass.ctx.state.dumps,
            pass.op_array,
            pass.cfg,
            true,
            "after block pass",
            info.as_ref(),
        );
    }
}

/// The op_array's `zend_func_info` as the dumps see it during the block pass: with the call
/// graph (PASS_6 and PASS_7) every op_array has one, still zeroed.
fn func_info(ctx: &OptimizerCtx) -> Option<zend_ir::dump::FuncInfoHeader> {
    let call_graph = crate::PASS_6 | crate::PASS_7;
    (ctx.optimization_level & call_graph == call_graph).then(zend_ir::dump::FuncInfoHeader::default)
}

// ---- small shared helpers --------------------------------------------------------------

pub(crate) fn is_tmp(o: Operand) -> bool {
    matches!(o, Operand::TmpVar(_))
}

pub(crate) fn is_tmp_or_var(o: Operand) -> bool {
    matches!(o, Operand::TmpVar(_) | Operand::Var(_))
}

/// `INV_COND`: JMPZ ⇄ JMPNZ.
pub(crate) fn inv_cond(opcode: Opcode) -> Opcode {
    if opcode == ZEND_JMPZ {
        ZEND_JMPNZ
    } else {
        ZEND_JMPZ
    }
}

pub(crate) fn lit(op_array: &OpArray, l: LiteralId) -> &Literal {
    static NULL: Literal = Literal::Null;
    op_array.literals.get(l.index()).unwrap_or(&NULL)
}

pub(crate) fn set_lit(op_array: &mut OpArray, l: LiteralId, v: Literal) {
    if let Some(slot) = op_array.literals.get_mut(l.index()) {
        *slot = v;
    }
}

/// `literal_dtor`: the literal's slot stays, its value becomes null (pass 11 drops it).
pub(crate) fn literal_dtor(op_array: &mut OpArray, l: LiteralId) {
    set_lit(op_array, l, Literal::Null);
}

/// A copy of literal `l` appended to the literals (`ZVAL_COPY` + `add_literal`).
pub(crate) fn add_literal_copy(op_array: &mut OpArray, l: LiteralId) -> LiteralId {
    let v = lit(op_array, l).clone();
    crate::helpers::add_literal(op_array, v)
}

/// `MAKE_NOP`.
pub(crate) fn make_nop(op: &mut Op) {
    crate::helpers::make_nop(op);
}

/// PHP 8.2's jump operands of an op it moved from `old` to `at` without retargeting it:
/// PHP keeps a jump as an offset from the op, so the target moves with the op. A target
/// that would leave the op_array (PHP then points past its end) becomes the op itself.
fn keep_jump_offsets(op: &mut Op, at: usize, old: usize, len: u32) {
    let moved = |t: u32| {
        let t = (t as usize + at)
            .checked_sub(old)
            .filter(|&t| t < len as usize);
        t.unwrap_or(at) as u32
    };
    for operand in [&mut op.op1, &mut op.op2] {
        if let Operand::JmpAddr(t) = operand {
            *t = OpNum::new(moved(t.as_u32()));
        }
    }
    if matches!(op.opcode, ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW) {
        op.extended_value = moved(op.extended_value);
    }
}

/// `zend_optimizer_convert_to_free_op1`: an op whose only remaining effect is releasing
/// its op1 — CHECK_VAR for a CV, FREE for a TMP/VAR, nothing for a constant.
pub(crate) fn convert_to_free_op1(op_array: &mut OpArray, i: usize) {
    let op1 = op_array.opcodes[i].op1;
    match op1 {
        Operand::Cv(_) | Operand::TmpVar(_) | Operand::Var(_) => {
            let op = &mut op_array.opcodes[i];
            op.opcode = if matches!(op1, Operand::Cv(_)) {
                ZEND_CHECK_VAR
            } else {
                ZEND_FREE
            };
            op.op2 = Operand::Unused(0);
            op.result = Operand::Unused(0);
            op.smart_branch = Default::default();
            op.extended_value = 0;
        }
        _ => {
            if let Operand::Const(l) = op1 {
                literal_dtor(op_array, l);
            }
            make_nop(&mut op_array.opcodes[i]);
        }
    }
}

/// `strip_leading_nops`: the block starts after its leading NOPs (it has at least one).
pub(crate) fn strip_leading_nops(op_array: &OpArray, b: &mut Block) {
    loop {
        b.start += 1;
        b.len -= 1;
        if b.len == 0 || op_array.opcodes[b.start as usize].opcode != ZEND_NOP {
            break;
        }
    }
}

/// `strip_nops`: leading NOPs skipped, inner ones squeezed out (the freed tail becomes
/// NOPs).
fn strip_nops(op_array: &mut OpArray, b: &mut Block) {
    if b.len == 0 {
        return;
    }
    if op_array.opcodes[b.start as usize].opcode == ZEND_NOP {
        strip_leading_nops(op_array, b);
    }
    if b.len == 0 {
        return;
    }
    let ops = &mut op_array.opcodes[b.start as usize..(b.start + b.len) as usize];
    // The ops before the first inner NOP stay where they are (most blocks have none).
    let Some(first) = ops[1..].iter().position(|op| op.opcode == ZEND_NOP) else {
        return;
    };
    let mut j = first + 1;
    for i in j + 1..ops.len() {
        if ops[i].opcode != ZEND_NOP {
            ops[j] = ops[i];
            j += 1;
        }
    }
    b.len = j as u32;
    for op in &mut ops[j..] {
        make_nop(op);
    }
}

/// `zend_t_usage`: finds the TMP/VARs used outside the extended block that defines them
/// (`used_ext`), prints them when asked (`NON-LOCAL-VARS`), then drops the results nobody
/// reads.
///
/// PHP walks the blocks twice: forward for `used_ext` (a `defined_here` bitset cleared at
/// every extended block), then backward with a `usage` bitset (copied from `used_ext` at
/// the end of every extended block, and or-ed with it at the end of a block with two
/// successors inside one), dropping the result of an op whose result is not in `usage`.
/// Here one forward walk does both, each slot's `defined_here` kept as the epoch of its
/// last write (a clear is one increment). A droppable result is a [`Candidate`]: the
/// backward walk finds it unread when the next event on its slot in the extended block is
/// a write with no or-ed block end in between, read when it is a read, and `used_ext`
/// decides otherwise — which the forward walk sees in the same order, reversed. The drops
/// are applied after the walk, in the order PHP's backward walk makes them (the reverse
/// of the walk's).
fn t_usage(pass: &mut Pass) {
    let op_array = &mut *pass.op_array;
    let cfg = &*pass.cfg;
    let slots = (op_array.last_var() + op_array.T) as usize;
    let used_ext = &mut pass.used_ext;
    used_ext.clear();
    used_ext.resize(slots, false);
    if op_array.T == 0 {
        return;
    }
    pass.var_states.clear();
    pass.var_states.resize(
        slots,
        VarState {
            defined: 0,
            pending: NO_CANDIDATE,
        },
    );
    pass.candidates.clear();
    let mut walk = Walk {
        vars: &mut pass.var_states[..],
        used_ext: &mut used_ext[..],
        candidates: &mut *pass.candidates,
        here: 0,
        generation: 0,
        ext_start: 0,
    };
    // The successor count of the last reachable block with ops, for the backward walk's
    // extended blocks (which skip empty blocks, where the forward walk's do not).
    let mut prev_successors: Option<usize> = None;
    let ops = &op_array.opcodes[..];
    for (n, block) in cfg.blocks.iter().enumerate() {
        if !block.reachable() {
            continue;
        }
        let starts_ext =
            !block.flags.contains(BlockFlags::FOLLOW) || block.flags.contains(BlockFlags::TARGET);
        // PHP's forward walk starts at block 1.
        if n > 0 && (walk.here == 0 || starts_ext) {
            walk.here += 1;
        }
        if block.len == 0 {
            continue;
        }
        match prev_successors {
            // usage |= used_ext at the end of the previous block
            Some(count) if !starts_ext => walk.generation += u32::from(count > 1),
            // usage = used_ext at the end of the previous block
            _ => {
                walk.generation += 1;
                walk.ext_start = walk.generation;
            }
        }
        prev_successors = Some(block.successors_count);
        let start = block.start as usize;
        let block_ops = &ops[start..start + block.len as usize];
        if n == 0 {
            for (k, op) in block_ops.iter().enumerate() {
                walk.op::<false>(op, (start + k) as u32);
            }
        } else {
            for (k, op) in block_ops.iter().enumerate() {
                walk.op::<true>(op, (start + k) as u32);
            }
        }
    }

    if pass.ctx.debug_level & debug_level::BLOCK_PASS_VARS != 0 {
        dump::dump_non_local_vars(&mut pass.ctx.state.dumps, op_array, used_ext);
    }

    let candidates = &mut pass.candidates[..];
    for c in (0..candidates.len()).rev() {
        let candidate = candidates[c];
        let unread = match candidate.fate {
            Fate::Read => false,
            Fate::Unread => true,
            Fate::UsedExt => !used_ext[candidate.slot as usize],
        };
        if !unread {
            if let Some(earlier) = candidates.get_mut(candidate.then_read as usize) {
                // The op stays, and so does its op2's read.
                earlier.fate = Fate::Read;
            }
            continue;
        }
        let i = candidate.op as usize;
        let opcode = op_array.opcodes[i].opcode;
        let r = candidate.slot;
        match opcode {
            ZEND_POST_INC
            | ZEND_POST_DEC
            | ZEND_POST_INC_OBJ
            | ZEND_POST_DEC_OBJ
            | ZEND_POST_INC_STATIC_PROP
            | ZEND_POST_DEC_STATIC_PROP => {
                // The pre- form needs no copy of the old value.
                let o = &mut op_array.opcodes[i];
                o.opcode = Opcode(opcode.0 - 2);
                o.result = Operand::Unused(0);
            }
            ZEND_QM_ASSIGN | ZEND_BOOL | ZEND_BOOL_NOT => convert_to_free_op1(op_array, i),
            ZEND_JMPZ_EX | ZEND_JMPNZ_EX => {
                let o = &mut op_array.opcodes[i];
                o.opcode = if opcode == ZEND_JMPZ_EX {
                    ZEND_JMPZ
                } else {
                    ZEND_JMPNZ
                };
                o.result = Operand::Unused(0);
            }
            _ => op_array.opcodes[i].result = Operand::Unused(0),
        }
        pass.ctx.note(
            op_array,
            OpNum::new(i as u32),
            ChangeKind::Rewritten,
            || format!("result T{r} is never read"),
        );
    }
}

/// No [`Candidate`].
const NO_CANDIDATE: u32 = u32::MAX;

/// [`t_usage`]'s state of one TMP/VAR slot.
#[derive(Clone, Copy)]
pub(crate) struct VarState {
    /// The `defined_here` epoch of the slot's last write (0: none yet).
    defined: u32,
    /// The candidate whose result the slot holds, while its fate is open.
    pending: u32,
}

/// A result [`t_usage`] drops if nobody reads it.
#[derive(Clone, Copy)]
pub(crate) struct Candidate {
    op: u32,
    slot: u32,
    /// The walk's generation when the op ran (see [`Walk::generation`]).
    generation: u32,
    fate: Fate,
    /// The candidate an op2 read by this op (a QM_ASSIGN, BOOL or BOOL_NOT) reads first,
    /// or [`NO_CANDIDATE`]: the op drops its op2 if its own result goes, so that read
    /// counts only if it stays.
    then_read: u32,
}

/// What the backward walk finds of a [`Candidate`]'s result.
#[derive(Clone, Copy, PartialEq)]
enum Fate {
    Read,
    Unread,
    /// Read if and only if `used_ext` has it.
    UsedExt,
}

/// [`t_usage`]'s forward walk.
struct Walk<'a> {
    vars: &'a mut [VarState],
    used_ext: &'a mut [bool],
    candidates: &'a mut Vec<Candidate>,
    /// The current `defined_here` epoch; 0 before block 1.
    here: u32,
    /// Counts the backward walk's extended blocks and its `usage |= used_ext` points:
    /// a candidate whose slot is written again at its own generation is unread.
    generation: u32,
    /// The generation the current extended block (as the backward walk cuts them) started
    /// at: reads and writes before it do not decide a candidate's fate.
    ext_start: u32,
}

impl Walk<'_> {
    /// A read of slot `v`; `EXT`: counted for `used_ext` (blocks after the first).
    #[inline(always)]
    fn read<const EXT: bool>(&mut self, v: usize) {
        let var = &mut self.vars[v];
        if EXT && var.defined != self.here {
            self.used_ext[v] = true;
        }
        if var.pending != NO_CANDIDATE {
            let candidate = &mut self.candidates[var.pending as usize];
            if candidate.generation >= self.ext_start {
                candidate.fate = Fate::Read;
            }
            var.pending = NO_CANDIDATE;
        }
    }

    /// A write of slot `v` by op `op`, a candidate if `droppable`.
    #[inline(always)]
    fn write<const EXT: bool>(&mut self, v: usize, op: u32, droppable: bool) {
        let var = &mut self.vars[v];
        if EXT {
            var.defined = self.here;
        }
        if var.pending != NO_CANDIDATE {
            let candidate = &mut self.candidates[var.pending as usize];
            if candidate.generation == self.generation {
                candidate.fate = Fate::Unread;
            }
        }
        var.pending = if droppable {
            self.candidates.push(Candidate {
                op,
                slot: v as u32,
                generation: self.generation,
                fate: Fate::UsedExt,
                then_read: NO_CANDIDATE,
            });
            (self.candidates.len() - 1) as u32
        } else {
            NO_CANDIDATE
        };
    }

    /// The reads and writes of op `i`, in the order PHP's forward walk makes them (the
    /// reverse of its backward walk's).
    #[inline(always)]
    fn op<const EXT: bool>(&mut self, op: &Op, i: u32) {
        let usage = USAGE[usize::from(op.opcode.0)];
        if let Operand::TmpVar(v) | Operand::Var(v) = op.op1 {
            self.read::<EXT>(v.index());
        }
        let mut then_read = NO_CANDIDATE;
        if let Operand::TmpVar(v) | Operand::Var(v) = op.op2 {
            let v = v.index();
            if usage & OP2_WRITTEN != 0 && matches!(op.op2, Operand::Var(_)) {
                self.write::<EXT>(v, i, false);
            } else if usage & OP2_GOES_WITH_RESULT != 0
                && matches!(op.result, Operand::TmpVar(_) | Operand::Var(_))
            {
                // Dropping the result drops this read (see Candidate::then_read).
                let var = &mut self.vars[v];
                if EXT && var.defined != self.here {
                    self.used_ext[v] = true;
                }
                let pending = var.pending;
                if self
                    .candidates
                    .get(pending as usize)
                    .is_some_and(|c| c.generation >= self.ext_start)
                {
                    then_read = pending;
                }
            } else {
                self.read::<EXT>(v);
            }
        }
        if let Operand::TmpVar(v) | Operand::Var(v) = op.result {
            let r = v.index();
            if usage & RESULT_READ != 0 {
                // These read their result too (only a TMP one, in PHP's forward walk).
                if matches!(op.result, Operand::Var(_)) {
                    if EXT {
                        self.vars[r].defined = self.here;
                    }
                    self.read::<false>(r);
                } else {
                    self.read::<EXT>(r);
                }
            } else {
                self.write::<EXT>(r, i, usage & RESULT_DROPPED != 0);
                if then_read != NO_CANDIDATE {
                    if let Some(c) = self.candidates.last_mut() {
                        c.then_read = then_read;
                    }
                }
            }
        }
    }
}

/// What [`Walk::op`] does with an op's operands beyond reading op1 and op2 and writing the
/// result, by opcode: one table lookup per op. A VAR op2 is written (FE_FETCH).
const OP2_WRITTEN: u8 = 1;
/// The op2 read counts only if the result stays (QM_ASSIGN, BOOL, BOOL_NOT).
const OP2_GOES_WITH_RESULT: u8 = 2;
/// The result is read, not written (ADD_ARRAY_ELEMENT, ADD_ARRAY_UNPACK, ROPE_ADD).
const RESULT_READ: u8 = 4;
/// The result is dropped if nobody reads it ([`drops_unused_result`]).
const RESULT_DROPPED: u8 = 8;

static USAGE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut n = 0;
    while n < 256 {
        let opcode = Opcode(n as u8);
        let mut usage = 0;
        if matches!(opcode, ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW) {
            usage |= OP2_WRITTEN;
        }
        if matches!(opcode, ZEND_QM_ASSIGN | ZEND_BOOL | ZEND_BOOL_NOT) {
            usage |= OP2_GOES_WITH_RESULT;
        }
        if matches!(
            opcode,
            ZEND_ADD_ARRAY_ELEMENT | ZEND_ADD_ARRAY_UNPACK | ZEND_ROPE_ADD
        ) {
            usage |= RESULT_READ;
        }
        if drops_unused_result(opcode) {
            usage |= RESULT_DROPPED;
        }
        table[n] = usage;
        n += 1;
    }
    table
};

/// Whether `zend_t_usage` drops (or, for the post- increments, rewrites away) the result of
/// an op with `opcode` when nobody reads it.
const fn drops_unused_result(opcode: Opcode) -> bool {
    matches!(
        opcode,
        ZEND_ASSIGN_OP
            | ZEND_ASSIGN_DIM_OP
            | ZEND_ASSIGN_OBJ_OP
            | ZEND_ASSIGN_STATIC_PROP_OP
            | ZEND_PRE_INC
            | ZEND_PRE_DEC
            | ZEND_ASSIGN
            | ZEND_ASSIGN_REF
            | ZEND_DO_FCALL
            | ZEND_DO_ICALL
            | ZEND_DO_UCALL
            | ZEND_DO_FCALL_BY_NAME
            | ZEND_POST_INC
            | ZEND_POST_DEC
            | ZEND_POST_INC_OBJ
            | ZEND_POST_DEC_OBJ
            | ZEND_POST_INC_STATIC_PROP
            | ZEND_POST_DEC_STATIC_PROP
            | ZEND_QM_ASSIGN
            | ZEND_BOOL
            | ZEND_BOOL_NOT
            | ZEND_JMPZ_EX
            | ZEND_JMPNZ_EX
    )
}

/// `zend_merge_blocks`: a block entered only by falling through from a predecessor that
/// has it as its only successor joins that predecessor (the empty blocks in between are
/// cleared, a JMP between them dropped).
fn merge_blocks(op_array: &mut OpArray, cfg: &mut BlockCfg, opt_count: &mut u32) {
    let mut prev: Option<usize> = None;
    for i in 0..cfg.blocks.len() {
        if !cfg.blocks[i].reachable() {
            continue;
        }
        let f = cfg.blocks[i].flags;
        let mergeable = f.contains(BlockFlags::FOLLOW)
            && !f.intersects(BlockFlags::TARGET | BlockFlags::PROTECTED)
            && prev.is_some_and(|p| {
                cfg.blocks[p].successors_count == 1 && cfg.blocks[p].successors[0].index() == i
            });
        let Some(p) = prev.filter(|_| mergeable) else {
            prev = Some(i);
            continue;
        };
        if let Some(last) = cfg.blocks[p].last() {
            if op_array.opcodes[last].opcode == ZEND_JMP {
                make_nop(&mut op_array.opcodes[last]);
            }
        }
        for bb in p + 1..i {
            let (start, len) = (cfg.blocks[bb].start, cfg.blocks[bb].len);
            for k in start..start + len {
                let op = &mut op_array.opcodes[k as usize];
                let (o1, o2) = (op.op1, op.op2);
                make_nop(op);
                for o in [o1, o2] {
                    if let Operand::Const(l) = o {
                        literal_dtor(op_array, l);
                    }
                }
            }
            cfg.blocks[bb].len = 0;
        }
        let exit = cfg.blocks[i].flags & BlockFlags::EXIT;
        cfg.blocks[p].flags |= exit;
        cfg.blocks[p].len = cfg.blocks[i].start + cfg.blocks[i].len - cfg.blocks[p].start;
        let count = cfg.blocks[i].successors_count;
        cfg.blocks[p].successors_count = count;
        if !cfg.blocks[i].successors.is_inline() {
            // The merged block's own successor array moves over.
            let own = std::mem::replace(
                &mut cfg.blocks[i].successors,
                Successors::Inline([BlockId::new(0); 2]),
            );
            cfg.blocks[p].successors = own;
        } else {
            let moved = [cfg.blocks[i].successors[0], cfg.blocks[i].successors[1]];
            cfg.blocks[p].successors[..count].copy_from_slice(&moved[..count]);
        }
        let b = &mut cfg.blocks[i];
        b.flags = BlockFlags::empty();
        b.len = 0;
        b.successors_count = 0;
        *opt_count += 1;
    }
}

/// `assemble_code_blocks`: the reachable blocks (and the kept FREE of unreachable loop-var
/// frees) laid out in order without NOPs or jumps to the next block; jump targets,
/// SWITCH tables, the exception table and FAST_RET indexes renumbered. `cfg.map` stays the
/// map of the CFG as built (the exception table is renumbered through it).
fn assemble(pass: &mut Pass) {
    let kept_whole = pass
        .ctx
        .php_bugs
        .contains(PhpBugs::UNREACHABLE_FREE_KEPT_WHOLE);
    let op_array = &mut *pass.op_array;
    let cfg = &mut *pass.cfg;
    let n = cfg.blocks.len();
    let kept_block = |b: &Block| {
        b.flags
            .intersects(BlockFlags::REACHABLE | BlockFlags::UNREACHABLE_FREE)
    };
    // Blocks never overlap and stay in op order (merging and NOP stripping only move a
    // block's start forward), so the kept ops move down in place; should that ever not
    // hold, they are gathered into a new array instead.
    let mut in_order = true;
    let mut end = 0;
    for b in 0..n {
        'trim: {
            if cfg.blocks[b].len == 0 {
                break 'trim;
            }
            let flags = cfg.blocks[b].flags;
            if !flags.intersects(BlockFlags::REACHABLE | BlockFlags::UNREACHABLE_FREE) {
                // Unused code: its constants go.
                let (start, len) = (cfg.blocks[b].start, cfg.blocks[b].len);
                for k in start..start + len {
                    let op = &op_array.opcodes[k as usize];
                    let (o1, o2) = (op.op1, op.op2);
                    for o in [o1, o2] {
                        if let Operand::Const(l) = o {
                            literal_dtor(op_array, l);
                        }
                    }
                }
                break 'trim;
            }
            if flags.contains(BlockFlags::UNREACHABLE_FREE)
                && !flags.contains(BlockFlags::REACHABLE)
                && !kept_whole
            {
                // Only the loop variable's FREE is kept.
                cfg.blocks[b].len = 1;
                break 'trim;
            }
            let last = (cfg.blocks[b].start + cfg.blocks[b].len - 1) as usize;
            if op_array.opcodes[last].opcode == ZEND_JMP {
                let mut next = b + 1;
                while next < n && !cfg.blocks[next].reachable() {
                    next += 1;
                }
                if next < n && next == cfg.succ(b, 0) {
                    // JMP to the next block.
                    make_nop(&mut op_array.opcodes[last]);
                    cfg.blocks[b].len -= 1;
                }
            } else if cfg.blocks[b].len == 1 && op_array.opcodes[last].opcode == ZEND_NOP {
                cfg.blocks[b].len = 0;
            }
        }
        let block = &cfg.blocks[b];
        if kept_block(block) {
            in_order &= block.start >= end;
            end = block.start + block.len;
        }
    }
    // Where the kept unreachable blocks started (PHP 8.2 keeps their jumps' offsets).
    let unreachable_starts: Vec<(usize, u32)> = if kept_whole {
        (0..n)
            .filter(|&b| !cfg.blocks[b].reachable() && kept_block(&cfg.blocks[b]))
            .map(|b| (b, cfg.blocks[b].start))
            .collect()
    } else {
        Vec::new()
    };
    if in_order {
        let mut kept = 0;
        for b in cfg.blocks.iter_mut().filter(|b| kept_block(b)) {
            let (start, len) = (b.start as usize, b.len as usize);
            if start != kept {
                op_array.opcodes.copy_within(start..start + len, kept);
            }
            b.start = kept as u32;
            kept += len;
        }
        op_array.opcodes.truncate(kept);
    } else {
        let mut new_ops: Vec<Op> = Vec::with_capacity(op_array.opcodes.len());
        for b in cfg.blocks.iter_mut().filter(|b| kept_block(b)) {
            let (start, len) = (b.start as usize, b.len as usize);
            b.start = new_ops.len() as u32;
            new_ops.extend_from_slice(&op_array.opcodes[start..start + len]);
        }
        op_array.opcodes = new_ops;
    }
    let len = op_array.opcodes.len() as u32;

    let start_of = |cfg: &BlockCfg, s: BlockId| OpNum::new(cfg.blocks[s.index()].start);
    for b in 0..n {
        let block = &cfg.blocks[b];
        if !block.reachable() || block.len == 0 {
            continue;
        }
        let last = (block.start + block.len - 1) as usize;
        let s0 = start_of(cfg, block.successors[0]);
        let op = &mut op_array.opcodes[last];
        match op.opcode {
            ZEND_FAST_CALL | ZEND_JMP => op.op1 = Operand::JmpAddr(s0),
            ZEND_JMPZ | ZEND_JMPNZ | ZEND_JMPZ_EX | ZEND_JMPNZ_EX | ZEND_FE_RESET_R
            | ZEND_FE_RESET_RW | ZEND_JMP_SET | ZEND_COALESCE | ZEND_ASSERT_CHECK
            | ZEND_JMP_NULL => op.op2 = Operand::JmpAddr(s0),
            ZEND_CATCH if op.extended_value & ZEND_LAST_CATCH == 0 => op.op2 = Operand::JmpAddr(s0),
            ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW => op.extended_value = s0.as_u32(),
            ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH => {
                if let Operand::Const(table) = op.op2 {
                    let mut s = 0;
                    let successors: Vec<OpNum> =
                        block.successors.iter().map(|&x| start_of(cfg, x)).collect();
                    if let Some(Literal::Array(entries)) = op_array.literals.get_mut(table.index())
                    {
                        for target in entries.values_mut() {
                            if let Some(t) = successors.get(s) {
                                *target = Literal::Long(i64::from(t.as_u32()));
                            }
                            s += 1;
                        }
                    }
                    if let Some(t) = successors.get(s) {
                        op_array.opcodes[last].extended_value = t.as_u32();
                    }
                }
            }
            _ => {}
        }
    }
    for &(b, old_start) in &unreachable_starts {
        let block = &cfg.blocks[b];
        for k in 0..block.len {
            let at = (block.start + k) as usize;
            keep_jump_offsets(&mut op_array.opcodes[at], at, (old_start + k) as usize, len);
        }
    }
    // Operands that held jump addresses on ops that no longer jump through them (the
    // VM flags are read for the few ops with such an operand).
    for op in &mut op_array.opcodes {
        let op1_addr = matches!(op.op1, Operand::JmpAddr(_));
        let op2_addr = matches!(op.op2, Operand::JmpAddr(_));
        if !op1_addr && !op2_addr {
            continue;
        }
        let flags = op.opcode.flags();
        if op1_addr && zend_vm_op1_flags(flags) & ZEND_VM_OP_MASK != ZEND_VM_OP_JMP_ADDR {
            op.op1 = Operand::Unused(0);
        }
        if op2_addr && zend_vm_op2_flags(flags) & ZEND_VM_OP_MASK != ZEND_VM_OP_JMP_ADDR {
            op.op2 = Operand::Unused(0);
        }
    }

    // The exception table: entries whose try block is gone are dropped.
    if !op_array.try_catch_array.is_empty() {
        let block_of = |op: OpNum| cfg.map.get(op.index()).copied();
        let mut kept = Vec::new();
        let mut index_map = Vec::new();
        for tc in &op_array.try_catch_array {
            let Some(tb) = block_of(tc.try_op) else {
                index_map.push(None);
                continue;
            };
            if !cfg.blocks[tb.index()].reachable() {
                index_map.push(None);
                continue;
            }
            index_map.push(Some(kept.len() as u32));
            let at = |op: Option<OpNum>| {
                op.and_then(block_of)
                    .map(|b| OpNum::new(cfg.blocks[b.index()].start))
            };
            kept.push(zend_ir::TryCatchElement {
                try_op: OpNum::new(cfg.blocks[tb.index()].start),
                catch_op: at(tc.catch_op),
                finally_op: at(tc.finally_op),
                finally_end: at(tc.finally_end),
            });
        }
        let j = kept.len();
        if j != op_array.try_catch_array.len()
            && op_array.fn_flags & ZEND_ACC_HAS_FINALLY_BLOCK != 0
        {
            for op in &mut op_array.opcodes {
                if op.opcode == ZEND_FAST_RET {
                    if let Operand::Unused(num) = op.op2 {
                        // PHP remaps indexes below the new count only.
                        if num != u32::MAX && (num as usize) < j {
                            if let Some(Some(new)) = index_map.get(num as usize) {
                                op.op2 = Operand::Unused(*new);
                            }
                        }
                    }
                }
            }
        }
        op_array.try_catch_array = kept;
    }

    // Live ranges are recomputed by the driver after the optimizer, as PHP does; until
    // then they only have to stay inside the op_array.
    for lr in &mut op_array.live_range {
        lr.start = OpNum::new(lr.start.as_u32().min(len));
        lr.end = OpNum::new(lr.end.as_u32().min(len).max(lr.start.as_u32()));
    }
}
