//! Basic blocks and edges: `zend_build_cfg`, `zend_cfg_build_predecessors` and the
//! reachability marking of zend_cfg.c.

use crate::bitset;
use crate::reuse::emptied;
use crate::BlockId;
use bitflags::bitflags;
use bumpalo::collections::Vec as BVec;
use bumpalo::Bump;
use zend_ir::opcode::*;
use zend_ir::{Literal, LiteralId, OpArray, OpNum, Operand, TryCatchElement, VarNum};

bitflags! {
    /// `zend_basic_block.flags` (`ZEND_BB_*`), with PHP's bit values.
    #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct BlockFlags: u32 {
        /// First block.
        const START = 1 << 0;
        /// Reached by falling through from the previous block.
        const FOLLOW = 1 << 1;
        /// Jump target.
        const TARGET = 1 << 2;
        /// Without successors.
        const EXIT = 1 << 3;
        /// Stackless entry (after calls, includes, yields when `STACKLESS`).
        const ENTRY = 1 << 4;
        /// Start of a try block.
        const TRY = 1 << 5;
        const CATCH = 1 << 6;
        const FINALLY = 1 << 7;
        const FINALLY_END = 1 << 8;
        /// Unreachable, but frees a loop variable created in a reachable block.
        const UNREACHABLE_FREE = 1 << 11;
        /// Entry after RECV/RECV_INIT (when `RECV_ENTRY`).
        const RECV_ENTRY = 1 << 12;
        const LOOP_HEADER = 1 << 16;
        const IRREDUCIBLE_LOOP = 1 << 17;
        const REACHABLE = 1 << 31;
        /// `ZEND_BB_PROTECTED`: blocks optimizations must keep.
        const PROTECTED = Self::ENTRY.bits() | Self::RECV_ENTRY.bits() | Self::TRY.bits()
            | Self::CATCH.bits() | Self::FINALLY.bits() | Self::FINALLY_END.bits()
            | Self::UNREACHABLE_FREE.bits();
    }
}

bitflags! {
    /// Build flags of `zend_build_cfg` / `zend_build_ssa` (zend_cfg.h), PHP's bit values.
    #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct BuildFlags: u32 {
        const STACKLESS = 1 << 30;
        const SSA_DEBUG_LIVENESS = 1 << 29;
        const SSA_DEBUG_PHI_PLACEMENT = 1 << 28;
        const SSA_RC_INFERENCE = 1 << 27;
        /// Split off an empty entry block when something jumps to op 0.
        const NO_ENTRY_PREDECESSORS = 1 << 25;
        const RECV_ENTRY = 1 << 24;
        const CALL_TREE = 1 << 23;
        const SSA_USE_CV_RESULTS = 1 << 22;
        /// zopt's own, no PHP counterpart: the caller has checked the op_array's operands
        /// ([`check_operands`]) and changed none since, so the build does not check them
        /// again (a driver checks once what it builds several CFGs of).
        const OPERANDS_CHECKED = 1 << 0;
    }
}

bitflags! {
    /// `ZEND_FUNC_*` flags (zend_func_info.h) the CFG and loop analysis find.
    #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct FuncFlags: u32 {
        /// Accesses variables by name (`$$x`, `extract()`, `compact()`, include...).
        const INDIRECT_VAR_ACCESS = 1 << 0;
        const HAS_CALLS = 1 << 1;
        /// Uses `func_get_args()` and friends.
        const VARARG = 1 << 2;
        const NO_LOOPS = 1 << 3;
        const IRREDUCIBLE = 1 << 4;
        const FREE_LOOP_VAR = 1 << 5;
        const RECURSIVE = 1 << 7;
        const RECURSIVE_DIRECTLY = 1 << 8;
        const RECURSIVE_INDIRECTLY = 1 << 9;
        const HAS_EXTENDED_FCALL = 1 << 10;
        const HAS_EXTENDED_STMT = 1 << 11;
    }
}

/// A `zend_basic_block`. Successors and predecessors live in the [`Cfg`]'s flat arrays
/// (see [`Cfg::successors`], [`Cfg::predecessors`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BasicBlock {
    pub flags: BlockFlags,
    /// First op.
    pub start: u32,
    /// Number of ops (0 only for the extra entry block).
    pub len: u32,
    successor_offset: u32,
    successors_count: u32,
    /// Successors found from the last op, kept for unreachable blocks too (whose
    /// `successors_count` is 0): the dump prints their jump operands from them.
    stored_successors: u32,
    predecessor_offset: u32,
    predecessors_count: u32,
    /// Immediate dominator (`None` for the entry and for blocks not reached from it).
    pub idom: Option<BlockId>,
    /// Closest enclosing loop header.
    pub loop_header: Option<BlockId>,
    /// Depth in the dominator tree (`None` until computed, and for unreachable blocks).
    pub level: Option<u32>,
    /// First block immediately dominated by this one.
    pub children: Option<BlockId>,
    /// Next block with the same immediate dominator (children are in block order).
    pub next_child: Option<BlockId>,
}

impl BasicBlock {
    fn new(start: u32) -> Self {
        BasicBlock {
            flags: BlockFlags::empty(),
            start,
            len: 0,
            successor_offset: 0,
            successors_count: 0,
            stored_successors: 0,
            predecessor_offset: 0,
            predecessors_count: 0,
            idom: None,
            loop_header: None,
            level: None,
            children: None,
            next_child: None,
        }
    }

    pub fn is_reachable(&self) -> bool {
        self.flags.contains(BlockFlags::REACHABLE)
    }

    /// Op numbers of the block.
    pub fn ops(&self) -> std::ops::Range<u32> {
        self.start..self.start + self.len
    }

    pub fn successors_count(&self) -> usize {
        self.successors_count as usize
    }

    pub fn predecessors_count(&self) -> usize {
        self.predecessors_count as usize
    }

    /// The last op, if the block has any.
    pub fn last_op(&self) -> Option<OpNum> {
        (self.len > 0).then(|| OpNum::new(self.start + self.len - 1))
    }
}

/// What is wrong with an op_array that has no valid CFG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    JumpOutOfRange {
        target: u32,
    },
    /// A jump operand that is not a jump address.
    NotAJump,
    BadJumpTable,
    /// The last op falls through (or branches) past the end.
    FallsOffEnd,
    VarOutOfRange {
        var: u32,
    },
    LiteralOutOfRange {
        literal: u32,
    },
    /// An op that needs a following OP_DATA is last.
    MissingOpData,
    /// A try/catch element names an op past the end.
    TryCatchOutOfRange {
        element: usize,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::JumpOutOfRange { target } => write!(f, "jump target {target} is out of range"),
            Problem::NotAJump => f.write_str("jump operand holds no jump address"),
            Problem::BadJumpTable => f.write_str("jump table is not an array of op numbers"),
            Problem::FallsOffEnd => f.write_str("control falls off the end of the op_array"),
            Problem::VarOutOfRange { var } => write!(f, "variable {var} is out of range"),
            Problem::LiteralOutOfRange { literal } => {
                write!(f, "literal {literal} is out of range")
            }
            Problem::MissingOpData => f.write_str("missing OP_DATA after this op"),
            Problem::TryCatchOutOfRange { element } => {
                write!(f, "try/catch element {element} points past the last op")
            }
        }
    }
}

/// A malformed op_array: which function, which op, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{function}: op {op:04} ({opcode}): {problem}")]
pub struct CfgError {
    pub function: String,
    pub op: u32,
    pub opcode: String,
    pub problem: Problem,
}

/// A `zend_cfg`: blocks in op order, their edges, the op → block map, and the function
/// flags found on the way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    pub blocks: Vec<BasicBlock>,
    /// Every block's successors, then (from `predecessors_start` on, once built) every
    /// block's predecessors: one allocation for both lists.
    edges: Vec<BlockId>,
    predecessors_start: u32,
    /// Block of every op (`cfg->map`).
    pub map: Vec<BlockId>,
    pub build_flags: BuildFlags,
    /// `ZEND_FUNC_*` flags: those the op scan finds, plus `NO_LOOPS`/`IRREDUCIBLE` once
    /// loops are identified.
    pub func_flags: FuncFlags,
    /// Number of edges, duplicates of SWITCH tables included (`edges_count`).
    pub edges_count: usize,
    /// The op_array's try/catch table as reachability marking leaves it (PHP moves the
    /// `try_op` of an element whose first blocks are unreachable).
    pub try_catch: Vec<TryCatchElement>,
}

/// The vectors of a CFG no longer needed, kept for [`Cfg::build_successors_reusing`].
#[derive(Debug, Default)]
pub struct CfgBuffers {
    blocks: Vec<BasicBlock>,
    edges: Vec<BlockId>,
    map: Vec<BlockId>,
    try_catch: Vec<TryCatchElement>,
}

/// Whether `operand` names a variable or literal the op_array does not have.
#[inline(always)]
fn out_of_range(operand: Operand, vars: u32, literals: usize) -> bool {
    match operand {
        Operand::TmpVar(v) | Operand::Var(v) | Operand::Cv(v) => v.as_u32() >= vars,
        Operand::Const(lit) => lit.index() >= literals,
        Operand::Unused(_) | Operand::JmpAddr(_) => false,
    }
}

/// The number an operand holds, plus one (the raw `u32` for `Unused`). Index types hold
/// the number plus one, so every arm reads the operand's second word unchanged: the match
/// compiles to no branch.
#[inline(always)]
fn raw_number(operand: Operand) -> u32 {
    match operand {
        Operand::Unused(n) => n,
        Operand::JmpAddr(t) => t.as_u32().wrapping_add(1),
        Operand::Const(lit) => lit.as_u32().wrapping_add(1),
        Operand::TmpVar(v) | Operand::Var(v) | Operand::Cv(v) => v.as_u32().wrapping_add(1),
    }
}

/// The integer `Discriminant::hash` writes: the discriminant of an [`Operand`] (its
/// `repr(u32)` tag). Read this way it is the operand's tag word as stored, where every
/// `match` on the operand compiles to a jump per operand kind. What `hash` writes is not
/// promised by std: `operand_limits_agree_with_out_of_range` checks it.
#[derive(Default)]
struct DiscriminantOf(u64);

impl std::hash::Hasher for DiscriminantOf {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut word = [0u8; 8];
        let n = bytes.len().min(8);
        word[..n].copy_from_slice(&bytes[..n]);
        self.0 = u64::from_ne_bytes(word);
    }

    fn write_isize(&mut self, i: isize) {
        self.0 = i as u64;
    }
}

/// The kind of `operand`: its discriminant (see [`Operand`]'s numbering: 0 to 2 for
/// `Unused`, `JmpAddr` and `Const`, the top of the u32 range for CV, TMP and VAR).
#[inline(always)]
fn operand_kind(operand: &Operand) -> usize {
    use std::hash::{Hash, Hasher};
    let mut kind = DiscriminantOf::default();
    std::mem::discriminant(operand).hash(&mut kind);
    kind.finish() as usize
}

/// Where `operand`'s kind sits in a table of [`operand_limits`]: the low three bits of its
/// discriminant, which differ for the six kinds (`operand_limits_agree_with_out_of_range`
/// checks it).
#[inline(always)]
fn kind_slot(operand: &Operand) -> usize {
    operand_kind(operand) & 7
}

/// The operand limits of [`validate_operands`]: by [`kind_slot`], the greatest number plus
/// one an operand of that kind may hold. `Unused` and `JmpAddr` may hold anything (jump
/// targets are checked by [`jump_targets`]), and so may the two slots no kind uses. The
/// slots are found from the kinds themselves, so a renumbering of [`Operand`] moves them.
fn operand_limits(vars: u32, literals: usize) -> [u32; 8] {
    // More literals than a u32 counts: every literal number is then in range.
    let literals = u32::try_from(literals).unwrap_or(u32::MAX);
    let mut limits = [u32::MAX; 8];
    limits[kind_slot(&Operand::Const(LiteralId::new(0)))] = literals;
    let v = VarNum::new(0);
    for var in [Operand::TmpVar(v), Operand::Var(v), Operand::Cv(v)] {
        limits[kind_slot(&var)] = vars;
    }
    limits
}

/// How far `operand` is past its kind's limit (0 when in range: [`out_of_range`] is
/// false), by one table load: a number `n` of kind `k` is out of range when
/// `n + 1 > limits[k]`, i.e. `n >= limits[k]`.
#[inline(always)]
fn excess(limits: &[u32; 8], operand: Operand) -> u32 {
    raw_number(operand).saturating_sub(limits[kind_slot(&operand)])
}

/// Checks the operands of op `i` that later analyses rely on: every variable below
/// `vars` (`last_var + T`), every literal present. ([`missing_op_data`] checks that an op
/// needing OP_DATA has one.)
#[inline(always)]
fn validate_operands(
    op_array: &OpArray,
    i: u32,
    op: &zend_ir::Op,
    vars: u32,
    limits: &[u32; 8],
) -> Result<(), CfgError> {
    // One test of the three (`|`, not `||`): every op of every CFG build passes here, and
    // which operand is wrong matters only once one is.
    if excess(limits, op.op1) | excess(limits, op.op2) | excess(limits, op.result) != 0 {
        if let Some(e) = operand_error(op_array, i, op, vars) {
            return Err(e);
        }
    }
    Ok(())
}

/// The operand check of a CFG build on its own: every variable below `last_var + T`,
/// every literal present; the first operand out of range is the error the build would
/// give. Passing it lets the op_array's builds take [`BuildFlags::OPERANDS_CHECKED`].
pub fn check_operands(op_array: &OpArray) -> Result<(), CfgError> {
    let vars = op_array.last_var() + op_array.T;
    let limits = operand_limits(vars, op_array.literals.len());
    // Opaque for the reason `scan_ops` gives.
    let limits = std::hint::black_box(&limits);
    for (i, op) in op_array.opcodes.iter().enumerate() {
        validate_operands(op_array, i as u32, op, vars, limits)?;
    }
    Ok(())
}

/// The error for a last op that needs an OP_DATA after it (any other op has one).
fn missing_op_data(op_array: &OpArray) -> Result<(), CfgError> {
    match op_array.opcodes.last() {
        Some(op) if needs_op_data(op.opcode) => Err(error(
            op_array,
            op_array.opcodes.len() as u32 - 1,
            Problem::MissingOpData,
        )),
        _ => Ok(()),
    }
}

/// The error for the first operand of op `i` that is [`out_of_range`], if one is.
#[cold]
fn operand_error(op_array: &OpArray, i: u32, op: &zend_ir::Op, vars: u32) -> Option<CfgError> {
    let literals = op_array.literals.len();
    let problem = [op.op1, op.op2, op.result]
        .into_iter()
        .find_map(|o| match o {
            _ if !out_of_range(o, vars, literals) => None,
            Operand::Const(lit) => Some(Problem::LiteralOutOfRange {
                literal: lit.as_u32(),
            }),
            o => o.var().map(|v| Problem::VarOutOfRange { var: v.as_u32() }),
        })?;
    Some(error(op_array, i, problem))
}

/// Ops whose value operand lives in the following OP_DATA.
pub fn needs_op_data(opcode: Opcode) -> bool {
    matches!(
        opcode,
        ZEND_ASSIGN_DIM
            | ZEND_ASSIGN_OBJ
            | ZEND_ASSIGN_OBJ_REF
            | ZEND_ASSIGN_STATIC_PROP
            | ZEND_ASSIGN_STATIC_PROP_REF
            | ZEND_ASSIGN_STATIC_PROP_OP
            | ZEND_ASSIGN_DIM_OP
            | ZEND_ASSIGN_OBJ_OP
    )
}

fn error(op_array: &OpArray, op: u32, problem: Problem) -> CfgError {
    let opcode = op_array
        .opcodes
        .get(op as usize)
        .map(|o| o.opcode.to_string())
        .unwrap_or_else(|| "-".to_string());
    CfgError {
        function: op_array.display_name(),
        op,
        opcode,
        problem,
    }
}

const ZEND_LAST_CATCH: u32 = 1;
const ZEND_THROW_IS_EXPR: u32 = 1;
const ZEND_FREE_ON_RETURN: u32 = 1;
const ZEND_FREE_SWITCH: u32 = 2;
const ZEND_FETCH_GLOBAL: u32 = 1 << 1;
const ZEND_FETCH_LOCAL: u32 = 1 << 2;
const ZEND_FETCH_GLOBAL_LOCK: u32 = 1 << 3;

/// What the block scan of [`Cfg::build_successors_reusing`] does with an op, by opcode.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ScanKind {
    /// Nothing: neither a block boundary nor a function flag.
    Plain,
    /// RECV, RECV_INIT: a block boundary with `RECV_ENTRY`.
    Recv,
    /// Ends its block. FAST_RET too: after the optimizer's jump passes, what follows it
    /// need not be a jump target.
    Return,
    /// MATCH_ERROR, EXIT, THROW: end their block unless used as an expression.
    Throw,
    /// Include, generator creation, yields: a boundary with `STACKLESS`.
    Suspend,
    /// A call the VM may run stackless: `HAS_CALLS`, a boundary with `STACKLESS`.
    Call,
    /// DO_ICALL: `HAS_CALLS`.
    InternalCall,
    /// INIT_FCALL, INIT_NS_FCALL_BY_NAME: the callee may access variables indirectly.
    InitCall,
    /// Fetches of variables by name: local or (in the main script) global symbol tables.
    FetchVar,
    FuncGetArgs,
    ExtStmt,
    ExtFcall,
    /// FREE, FE_FREE: the free of a loop variable starts a block.
    Free,
    /// A jump ([`is_branch`]).
    Branch,
}

const fn scan_kind(opcode: Opcode) -> ScanKind {
    match opcode {
        ZEND_RECV | ZEND_RECV_INIT => ScanKind::Recv,
        ZEND_RETURN
        | ZEND_RETURN_BY_REF
        | ZEND_GENERATOR_RETURN
        | ZEND_VERIFY_NEVER_TYPE
        | ZEND_FAST_RET => ScanKind::Return,
        ZEND_MATCH_ERROR | ZEND_EXIT | ZEND_THROW => ScanKind::Throw,
        ZEND_INCLUDE_OR_EVAL | ZEND_GENERATOR_CREATE | ZEND_YIELD | ZEND_YIELD_FROM => {
            ScanKind::Suspend
        }
        ZEND_DO_FCALL | ZEND_DO_UCALL | ZEND_DO_FCALL_BY_NAME => ScanKind::Call,
        ZEND_DO_ICALL => ScanKind::InternalCall,
        ZEND_INIT_FCALL | ZEND_INIT_NS_FCALL_BY_NAME => ScanKind::InitCall,
        ZEND_FETCH_R
        | ZEND_FETCH_W
        | ZEND_FETCH_RW
        | ZEND_FETCH_FUNC_ARG
        | ZEND_FETCH_IS
        | ZEND_FETCH_UNSET
        | ZEND_UNSET_VAR
        | ZEND_ISSET_ISEMPTY_VAR => ScanKind::FetchVar,
        ZEND_FUNC_GET_ARGS => ScanKind::FuncGetArgs,
        ZEND_EXT_STMT => ScanKind::ExtStmt,
        ZEND_EXT_FCALL_BEGIN | ZEND_EXT_FCALL_END => ScanKind::ExtFcall,
        ZEND_FREE | ZEND_FE_FREE => ScanKind::Free,
        _ if is_branch(opcode) => ScanKind::Branch,
        _ => ScanKind::Plain,
    }
}

/// [`scan_kind`] of every opcode number.
static SCAN_KINDS: [ScanKind; 256] = {
    let mut kinds = [ScanKind::Plain; 256];
    let mut n = 0;
    while n < 256 {
        kinds[n] = scan_kind(Opcode(n as u8));
        n += 1;
    }
    kinds
};

/// `zend_optimizer_is_loop_var_free`: a FE_FREE or switch FREE of a loop variable.
pub fn is_loop_var_free(op: &zend_ir::Op) -> bool {
    (op.opcode == ZEND_FE_FREE && op.extended_value != ZEND_FREE_ON_RETURN)
        || (op.opcode == ZEND_FREE && op.extended_value == ZEND_FREE_SWITCH)
}

/// `zend_optimizer_get_loop_var_def`: the op before `free` defining its operand.
pub fn loop_var_def(op_array: &OpArray, free: OpNum) -> Option<OpNum> {
    let var = op_array.opcodes[free.index()].op1.var()?;
    (0..free.as_u32()).rev().map(OpNum::new).find(|&n| {
        let op = &op_array.opcodes[n.index()];
        matches!(op.result, Operand::TmpVar(v) | Operand::Var(v) if v == var)
    })
}

/// `zend_optimizer_classify_function`: what calling an internal function implies.
fn classify_function(name: &[u8]) -> FuncFlags {
    match name {
        b"extract" | b"compact" | b"get_defined_vars" | b"db2_execute" => {
            FuncFlags::INDIRECT_VAR_ACCESS
        }
        b"func_num_args" | b"func_get_arg" | b"func_get_args" => FuncFlags::VARARG,
        _ => FuncFlags::empty(),
    }
}

/// What the op scan of [`Cfg::build_successors_reusing`] finds besides the block starts.
struct Scan {
    /// How many times op 0 is a block start.
    entry_starts: u32,
    func_flags: FuncFlags,
}

/// The op scan of [`Cfg::build_successors_reusing`]: marks the ops that start a block in
/// `starts` (op 0 already is) and collects the function flags; with `CHECK_OPERANDS`,
/// checks each op's operands before its jump. Two copies, so that a build whose caller
/// checked the operands ([`BuildFlags::OPERANDS_CHECKED`]) pays no test per op. Each
/// jump's targets go through `targets`.
fn scan_ops<const CHECK_OPERANDS: bool>(
    op_array: &OpArray,
    flags: BuildFlags,
    starts: &mut [u64],
    targets: &mut BVec<u32>,
) -> Result<Scan, CfgError> {
    let last = op_array.opcodes.len() as u32;
    let vars = op_array.last_var() + op_array.T;
    let mut entry_starts = 1u32;
    let mut func_flags = FuncFlags::empty();
    let limits = operand_limits(vars, op_array.literals.len());
    // Read through an opaque reference: with the table's values known, LLVM turns the
    // lookup back into a jump per operand kind (an indirect jump per operand).
    let limits = std::hint::black_box(&limits);
    for (i, op) in op_array.opcodes.iter().enumerate() {
        let i = i as u32;
        // Operands first: an op's jump is only looked at once its operands are valid.
        if CHECK_OPERANDS {
            validate_operands(op_array, i, op, vars, limits)?;
        }
        let kind = SCAN_KINDS[usize::from(op.opcode.0)];
        // Most ops neither end a block nor tell anything about the function: one
        // well-predicted test skips them, where the dispatch below is an indirect jump.
        if kind == ScanKind::Plain {
            continue;
        }
        let mut start = |n: u32| {
            entry_starts += u32::from(n == 0);
            bitset::insert(starts, n as usize);
        };
        match kind {
            ScanKind::Plain => {}
            ScanKind::Recv => {
                if flags.contains(BuildFlags::RECV_ENTRY) {
                    start(i + 1);
                }
            }
            ScanKind::Return => {
                if i + 1 < last {
                    start(i + 1);
                }
            }
            ScanKind::Throw => {
                // A THROW used as an expression does not end its block: live ranges
                // would be lost when unreachable code is removed.
                if op.extended_value != ZEND_THROW_IS_EXPR && i + 1 < last {
                    start(i + 1);
                }
            }
            ScanKind::Suspend => {
                if op.opcode == ZEND_INCLUDE_OR_EVAL {
                    func_flags |= FuncFlags::INDIRECT_VAR_ACCESS;
                }
                if flags.contains(BuildFlags::STACKLESS) {
                    start(i + 1);
                }
            }
            ScanKind::Call => {
                func_flags |= FuncFlags::HAS_CALLS;
                if flags.contains(BuildFlags::STACKLESS) {
                    start(i + 1);
                }
            }
            ScanKind::InternalCall => func_flags |= FuncFlags::HAS_CALLS,
            ScanKind::InitCall => {
                if let Operand::Const(lit) = op.op2 {
                    // INIT_NS_FCALL_BY_NAME: the third literal is the lowercased
                    // unqualified name.
                    let index = lit.index()
                        + if op.opcode == ZEND_INIT_NS_FCALL_BY_NAME {
                            2
                        } else {
                            0
                        };
                    if let Some(Literal::String(name)) = op_array.literals.get(index) {
                        func_flags |= classify_function(name.as_bytes());
                    }
                }
            }
            ScanKind::FetchVar => {
                if op.extended_value & ZEND_FETCH_LOCAL != 0
                    || (op.extended_value & (ZEND_FETCH_GLOBAL | ZEND_FETCH_GLOBAL_LOCK) != 0
                        && op_array.function_name.is_none())
                {
                    func_flags |= FuncFlags::INDIRECT_VAR_ACCESS;
                }
            }
            ScanKind::FuncGetArgs => func_flags |= FuncFlags::VARARG,
            ScanKind::ExtStmt => func_flags |= FuncFlags::HAS_EXTENDED_STMT,
            ScanKind::ExtFcall => func_flags |= FuncFlags::HAS_EXTENDED_FCALL,
            ScanKind::Free => {
                let after_match_error_expr = i > 0 && {
                    let prev = &op_array.opcodes[i as usize - 1];
                    prev.opcode == ZEND_MATCH_ERROR && prev.extended_value == ZEND_THROW_IS_EXPR
                };
                if is_loop_var_free(op) && !after_match_error_expr {
                    start(i);
                    func_flags |= FuncFlags::FREE_LOOP_VAR;
                }
            }
            ScanKind::Branch => {
                if let Some(falls_through) = jump_targets(op_array, i, targets)? {
                    for &target in targets.iter() {
                        start(target);
                    }
                    if falls_through {
                        start(i + 1);
                    } else if i + 1 < last {
                        // JMP ends its block too.
                        start(i + 1);
                    }
                }
            }
        }
    }
    Ok(Scan {
        entry_starts,
        func_flags,
    })
}

impl Cfg {
    /// Gives up the CFG for its vectors' memory (see [`Cfg::build_successors_reusing`]).
    pub fn into_buffers(mut self) -> CfgBuffers {
        self.take_buffers()
    }

    /// [`Cfg::into_buffers`] of a CFG not owned: it is left without blocks or edges.
    pub fn take_buffers(&mut self) -> CfgBuffers {
        CfgBuffers {
            blocks: std::mem::take(&mut self.blocks),
            edges: std::mem::take(&mut self.edges),
            map: std::mem::take(&mut self.map),
            try_catch: std::mem::take(&mut self.try_catch),
        }
    }

    /// Builds the CFG the DFA pass uses: blocks, edges, reachability, predecessors, the
    /// dominator tree and loops (`zend_build_cfg` + `zend_cfg_build_predecessors` +
    /// `zend_cfg_compute_dominators_tree` + `zend_cfg_identify_loops`).
    pub fn build(op_array: &OpArray, build_flags: BuildFlags) -> Result<Cfg, CfgError> {
        Cfg::build_in(op_array, build_flags, &Bump::new())
    }

    /// [`Cfg::build`], with its working arrays in `scratch` (an analysis reuses one arena
    /// for every op_array).
    pub fn build_in(
        op_array: &OpArray,
        build_flags: BuildFlags,
        scratch: &Bump,
    ) -> Result<Cfg, CfgError> {
        Cfg::build_reusing(op_array, build_flags, scratch, CfgBuffers::default())
    }

    /// [`Cfg::build_in`] into the vectors of a CFG built before (see [`Cfg::into_buffers`]).
    pub fn build_reusing(
        op_array: &OpArray,
        build_flags: BuildFlags,
        scratch: &Bump,
        buffers: CfgBuffers,
    ) -> Result<Cfg, CfgError> {
        let mut cfg = Cfg::build_successors_reusing(op_array, build_flags, scratch, buffers)?;
        let forward = cfg.build_predecessors(scratch);
        cfg.compute_new_dominators_tree(forward, scratch);
        cfg.identify_new_loops(forward, scratch);
        Ok(cfg)
    }

    /// `zend_build_cfg` followed by `zend_cfg_build_predecessors`: no dominators yet.
    pub fn build_blocks(op_array: &OpArray, build_flags: BuildFlags) -> Result<Cfg, CfgError> {
        Cfg::build_blocks_in(op_array, build_flags, &Bump::new())
    }

    fn build_blocks_in(
        op_array: &OpArray,
        build_flags: BuildFlags,
        scratch: &Bump,
    ) -> Result<Cfg, CfgError> {
        let mut cfg = Cfg::build_successors_in(op_array, build_flags, scratch)?;
        cfg.build_predecessors(scratch);
        Ok(cfg)
    }

    /// `zend_build_cfg` alone: blocks, successors and reachability, no predecessors (every
    /// `predecessors` list is empty), as block_pass.c uses it.
    pub fn build_successors(op_array: &OpArray, build_flags: BuildFlags) -> Result<Cfg, CfgError> {
        Cfg::build_successors_in(op_array, build_flags, &Bump::new())
    }

    /// [`Cfg::build_successors`], with its working arrays in `scratch`.
    pub fn build_successors_in(
        op_array: &OpArray,
        build_flags: BuildFlags,
        scratch: &Bump,
    ) -> Result<Cfg, CfgError> {
        Cfg::build_successors_reusing(op_array, build_flags, scratch, CfgBuffers::default())
    }

    /// [`Cfg::build_successors_in`] into the vectors of a CFG built before (see
    /// [`Cfg::into_buffers`]): a pass that builds a CFG per op_array allocates none once
    /// they have grown.
    pub fn build_successors_reusing(
        op_array: &OpArray,
        build_flags: BuildFlags,
        scratch: &Bump,
        buffers: CfgBuffers,
    ) -> Result<Cfg, CfgError> {
        let last = op_array.opcodes.len() as u32;
        let flags = build_flags & (BuildFlags::STACKLESS | BuildFlags::RECV_ENTRY);
        // The ops that start a block (BB_START), one bit each (one extra bit absorbs a
        // start past the last op): the blocks are then found a word at a time. How many
        // times op 0 is a start matters (an entry that is also a jump target gets a block
        // of its own), so that one is counted.
        let starts = scratch.alloc_slice_fill_copy(bitset::words_for(last as usize + 1), 0u64);
        // The targets of one jump at a time, for the op scan and then the successors; room
        // for the usual jump's, as a vector grown from empty pays a reallocation.
        let mut targets = BVec::with_capacity_in(2, scratch);
        bitset::insert(starts, 0);
        let scan = if build_flags.contains(BuildFlags::OPERANDS_CHECKED) {
            scan_ops::<false>(op_array, flags, starts, &mut targets)?
        } else {
            scan_ops::<true>(op_array, flags, starts, &mut targets)?
        };
        let (entry_starts, func_flags) = (scan.entry_starts, scan.func_flags);

        // After the last op's operands, as if checked with them.
        missing_op_data(op_array)?;

        let extra_entry_block =
            build_flags.contains(BuildFlags::NO_ENTRY_PREDECESSORS) && last > 0 && entry_starts > 1;

        for (k, tc) in op_array.try_catch_array.iter().enumerate() {
            let parts = [Some(tc.try_op), tc.catch_op, tc.finally_op, tc.finally_end];
            for op in parts.into_iter().flatten() {
                if op.as_u32() >= last {
                    return Err(error(
                        op_array,
                        op.as_u32(),
                        Problem::TryCatchOutOfRange { element: k },
                    ));
                }
                bitset::insert(starts, op.index());
            }
        }
        // A start past the last op starts no block.
        bitset::remove(starts, last as usize);

        // Step 2: the blocks.
        let block_count = starts
            .iter()
            .map(|w| w.count_ones() as usize)
            .sum::<usize>()
            + 2;
        let CfgBuffers {
            blocks,
            edges,
            map,
            mut try_catch,
        } = buffers;
        let mut blocks = emptied(blocks, block_count);
        let mut map = emptied(map, last as usize);
        if extra_entry_block {
            blocks.push(BasicBlock::new(0));
        }
        // Op 0 is always among the starts.
        for i in bitset::iter(starts) {
            let i = i as u32;
            let count = blocks.len() as u32;
            if let Some(prev) = blocks.last_mut() {
                prev.len = i - prev.start;
                let id = BlockId::new(count - 1);
                map.extend(std::iter::repeat(id).take(prev.len as usize));
            }
            blocks.push(BasicBlock::new(i));
        }
        let count = blocks.len() as u32;
        if let Some(prev) = blocks.last_mut() {
            prev.len = last - prev.start;
            let id = BlockId::new(count - 1);
            map.extend(std::iter::repeat(id).take(prev.len as usize));
        }
        if blocks.is_empty() {
            // An op_array always has at least one op; keep one empty block regardless.
            blocks.push(BasicBlock::new(0));
        }

        // Step 3: successors. A block that would fall off the end gets none: that is an
        // error only if the block is reachable (PHP's own optimized op_arrays can end with
        // the FREE of an unreachable block, which PHP gives a successor past the end).
        let blocks_count = blocks.len() as u32;
        // Room for the predecessors too, which usually number about the successors.
        let mut edges = emptied(edges, blocks.len() * 4);
        let mut falls_off = BVec::new_in(scratch);
        for j in 0..blocks_count {
            let block = &blocks[j as usize];
            let offset = edges.len() as u32;
            if block.len == 0 {
                if j + 1 < blocks_count {
                    edges.push(BlockId::new(j + 1));
                }
            } else {
                let last_op = block.start + block.len - 1;
                let mut next = |list: &mut Vec<BlockId>| {
                    if j + 1 >= blocks_count {
                        falls_off.push((j as usize, last_op));
                    } else {
                        list.push(BlockId::new(j + 1));
                    }
                };
                let op = &op_array.opcodes[last_op as usize];
                match SCAN_KINDS[usize::from(op.opcode.0)] {
                    // Returns, FAST_RET, EXIT, THROW and MATCH_ERROR (even as an
                    // expression) have no successor.
                    ScanKind::Return | ScanKind::Throw => {}
                    ScanKind::Branch => match jump_targets(op_array, last_op, &mut targets)? {
                        Some(falls_through) => {
                            for &target in &targets {
                                edges.push(map[target as usize]);
                            }
                            if falls_through {
                                next(&mut edges);
                            }
                        }
                        None => next(&mut edges),
                    },
                    _ => next(&mut edges),
                }
            }
            let block = &mut blocks[j as usize];
            block.successor_offset = offset;
            block.successors_count = edges.len() as u32 - offset;
            block.stored_successors = block.successors_count;
        }

        try_catch.clear();
        try_catch.extend_from_slice(&op_array.try_catch_array);
        let predecessors_start = edges.len() as u32;
        let mut cfg = Cfg {
            blocks,
            edges,
            predecessors_start,
            map,
            build_flags: flags,
            func_flags,
            edges_count: 0,
            try_catch,
        };
        // Step 4: reachability.
        cfg.mark_reachable_blocks(op_array, BlockId::new(0), scratch);
        if let Some(&(_, last_op)) = falls_off
            .iter()
            .find(|(b, _)| cfg.blocks[*b].is_reachable())
        {
            return Err(error(op_array, last_op, Problem::FallsOffEnd));
        }
        Ok(cfg)
    }

    pub fn blocks_count(&self) -> usize {
        self.blocks.len()
    }

    pub fn block(&self, b: BlockId) -> &BasicBlock {
        &self.blocks[b.index()]
    }

    /// `b->successors`, in PHP's order (jump targets first, then the fall-through).
    pub fn successors(&self, b: BlockId) -> &[BlockId] {
        let block = &self.blocks[b.index()];
        let start = block.successor_offset as usize;
        &self.edges[start..start + block.successors_count as usize]
    }

    /// The successors the block's last op names, even for an unreachable block, which has
    /// no [`Cfg::successors`] (PHP's `successors` array outlives `successors_count`).
    pub fn stored_successors(&self, b: BlockId) -> &[BlockId] {
        let block = &self.blocks[b.index()];
        let start = block.successor_offset as usize;
        &self.edges[start..start + block.stored_successors as usize]
    }

    /// The distinct predecessors of `b`, in the order PHP lists them (by predecessor
    /// block number, then successor position).
    pub fn predecessors(&self, b: BlockId) -> &[BlockId] {
        let block = &self.blocks[b.index()];
        let start = block.predecessor_offset as usize;
        &self.edges[start..start + block.predecessors_count as usize]
    }

    /// Where the predecessors of `b` start in one numbering of every block's predecessor
    /// slots, `0..predecessor_slots()` (PHP's `predecessor_offset`, by which scdf numbers
    /// the edges): predecessor `i` of `b` is slot `predecessor_offset(b) + i`.
    #[inline]
    pub fn predecessor_offset(&self, b: BlockId) -> usize {
        (self.blocks[b.index()].predecessor_offset - self.predecessors_start) as usize
    }

    /// The number of slots [`Cfg::predecessor_offset`] numbers.
    pub fn predecessor_slots(&self) -> usize {
        self.edges.len() - self.predecessors_start as usize
    }

    /// Position of `pred` among the predecessors of `b`. They are in increasing order as
    /// built; the DFA pass's `replace_predecessor` puts a new predecessor in the old one's
    /// place (PHP's lists, and so its dumps and phi source order, are then unordered), so
    /// a miss of the binary search is confirmed by a scan.
    pub fn predecessor_index(&self, b: BlockId, pred: BlockId) -> Option<usize> {
        let preds = self.predecessors(b);
        preds
            .binary_search(&pred)
            .ok()
            .or_else(|| preds.iter().position(|&p| p == pred))
    }

    /// Whether `a` dominates `b` in the current dominator tree ([`crate::dom::dominates`]).
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        crate::dom::dominates(self, a, b)
    }

    /// Removes the predecessor at `index` of `b`'s list, keeping the others in order: the
    /// CFG half of `zend_ssa_remove_predecessor` (the SSA half lives in zend-ssa's edit
    /// module, which callers should use so the phis lose their matching sources).
    pub fn remove_predecessor_at(&mut self, b: BlockId, index: usize) {
        let block = &self.blocks[b.index()];
        let count = block.predecessors_count as usize;
        debug_assert!(index < count, "{b} has no predecessor #{index}");
        if index >= count {
            return;
        }
        let start = block.predecessor_offset as usize;
        self.edges[start + index..start + count].rotate_left(1);
        self.blocks[b.index()].predecessors_count -= 1;
    }

    /// Removes every edge to `to` from the successors of `from`, keeping the others in
    /// order (what `zend_ssa_remove_block` does to the predecessors of a removed block).
    /// Returns how many edges went.
    pub fn remove_successor(&mut self, from: BlockId, to: BlockId) -> usize {
        let block = &self.blocks[from.index()];
        let start = block.successor_offset as usize;
        let old_count = block.successors_count as usize;
        // PHP's memmove per occurrence: the slots past the new count keep what the moves
        // left in them, and the dump of a jump table reads them (an entry whose target
        // block was removed prints the successor that slid into its slot).
        let mut count = old_count;
        let mut s = 0;
        while s < count {
            if self.edges[start + s] == to {
                self.edges
                    .copy_within(start + s + 1..start + count, start + s);
                count -= 1;
            } else {
                s += 1;
            }
        }
        self.blocks[from.index()].successors_count = count as u32;
        old_count - count
    }

    /// `b->successors[index] = to` (dfa_pass.c rewires edges in place; the predecessor
    /// lists are the caller's business).
    pub fn set_successor(&mut self, b: BlockId, index: usize, to: BlockId) {
        let block = &self.blocks[b.index()];
        if index < block.successors_count as usize {
            let at = block.successor_offset as usize + index;
            self.edges[at] = to;
        }
    }

    /// `b->successors_count = count` when that shrinks the list (a branch that became a
    /// jump or a fall-through keeps its first `count` successors).
    pub fn truncate_successors(&mut self, b: BlockId, count: usize) {
        let block = &mut self.blocks[b.index()];
        if count < block.successors_count as usize {
            block.successors_count = count as u32;
            block.stored_successors = count as u32;
        }
    }

    /// `predecessors[index] = pred` in `b`'s list (dfa_pass.c's `replace_predecessor` when
    /// the new predecessor is not in the list yet).
    pub fn set_predecessor(&mut self, b: BlockId, index: usize, pred: BlockId) {
        let block = &self.blocks[b.index()];
        if index < block.predecessors_count as usize {
            let at = block.predecessor_offset as usize + index;
            self.edges[at] = pred;
        }
    }

    /// Forgets all edges into and out of `b` (its counts drop to 0; the other blocks'
    /// lists are the caller's business), as `zend_ssa_remove_block` ends.
    pub fn clear_edges(&mut self, b: BlockId) {
        let block = &mut self.blocks[b.index()];
        block.successors_count = 0;
        block.predecessors_count = 0;
    }

    /// Takes `b` out of the dominator tree: unlinks it from its immediate dominator's
    /// children and clears its `idom`, `level`, `children` and `next_child`, as
    /// `zend_ssa_remove_block` does. Blocks it dominated keep their links (PHP's too):
    /// removing a block is for unreachable code, whose dominated blocks go as well.
    pub fn unlink_from_dominator_tree(&mut self, b: BlockId) {
        let block = &self.blocks[b.index()];
        let next = block.next_child;
        if let Some(idom) = block.idom {
            match self.blocks[idom.index()].children {
                Some(first) if first == b => self.blocks[idom.index()].children = next,
                Some(first) => {
                    let mut j = first;
                    while let Some(after) = self.blocks[j.index()].next_child {
                        if after == b {
                            self.blocks[j.index()].next_child = next;
                            break;
                        }
                        j = after;
                    }
                }
                None => {}
            }
        }
        let block = &mut self.blocks[b.index()];
        block.idom = None;
        block.level = None;
        block.children = None;
        block.next_child = None;
    }

    /// Marks one block and everything reachable from it (`zend_mark_reachable`), setting
    /// the FOLLOW/TARGET/EXIT/ENTRY flags along the way. Iterative: the order blocks are
    /// visited in does not change the flags, each reachable block being visited once.
    fn mark_reachable(&mut self, op_array: &OpArray, from: BlockId, stack: &mut BVec<BlockId>) {
        stack.clear();
        stack.push(from);
        while let Some(b) = stack.pop() {
            if self.blocks[b.index()].is_reachable() {
                continue;
            }
            let block = &mut self.blocks[b.index()];
            block.flags |= BlockFlags::REACHABLE;
            let count = block.successors_count as usize;
            if count == 0 {
                block.flags |= BlockFlags::EXIT;
                continue;
            }
            let last_opcode = block.last_op().map(|n| op_array.opcodes[n.index()].opcode);
            let offset = block.successor_offset as usize;
            for i in 0..count {
                let succ = self.edges[offset + i];
                let add = match last_opcode {
                    None => BlockFlags::FOLLOW,
                    Some(ZEND_MATCH) => BlockFlags::TARGET,
                    Some(ZEND_SWITCH_LONG | ZEND_SWITCH_STRING) => {
                        if i == count - 1 {
                            BlockFlags::FOLLOW | BlockFlags::TARGET
                        } else {
                            BlockFlags::TARGET
                        }
                    }
                    Some(opcode) if count == 1 => {
                        if opcode == ZEND_JMP {
                            BlockFlags::TARGET
                        } else {
                            let mut add = BlockFlags::FOLLOW;
                            if self.build_flags.contains(BuildFlags::STACKLESS)
                                && matches!(
                                    opcode,
                                    ZEND_INCLUDE_OR_EVAL
                                        | ZEND_GENERATOR_CREATE
                                        | ZEND_YIELD
                                        | ZEND_YIELD_FROM
                                        | ZEND_DO_FCALL
                                        | ZEND_DO_UCALL
                                        | ZEND_DO_FCALL_BY_NAME
                                )
                            {
                                add |= BlockFlags::ENTRY;
                            }
                            if self.build_flags.contains(BuildFlags::RECV_ENTRY)
                                && matches!(opcode, ZEND_RECV | ZEND_RECV_INIT)
                            {
                                add |= BlockFlags::RECV_ENTRY;
                            }
                            add
                        }
                    }
                    Some(_) => {
                        if i == 0 {
                            BlockFlags::TARGET
                        } else {
                            BlockFlags::FOLLOW
                        }
                    }
                };
                self.blocks[succ.index()].flags |= add;
            }
            for i in (0..count).rev() {
                let succ = self.edges[offset + i];
                if !self.blocks[succ.index()].is_reachable() {
                    stack.push(succ);
                }
            }
        }
    }

    /// `zend_mark_reachable_blocks`: reachability from `start`, then through the exception
    /// table, then the unreachable blocks that free a live loop variable.
    fn mark_reachable_blocks(&mut self, op_array: &OpArray, start: BlockId, scratch: &Bump) {
        self.blocks[start.index()].flags = BlockFlags::START;
        let mut stack = BVec::with_capacity_in(self.blocks.len(), scratch);
        self.mark_reachable(op_array, start, &mut stack);

        if !self.try_catch.is_empty() {
            let count = self.blocks.len();
            loop {
                let mut changed = false;
                for j in 0..self.try_catch.len() {
                    let tc = self.try_catch[j].clone();
                    let mut b = self.map[tc.try_op.index()].index();
                    // A jump into the middle of a try block: move the try start.
                    if !self.blocks[b].is_reachable() {
                        if let Some(catch_op) = tc.catch_op {
                            let end = self.map[catch_op.index()].index();
                            while b != end && b < count {
                                if self.blocks[b].is_reachable() {
                                    self.try_catch[j].try_op = OpNum::new(self.blocks[b].start);
                                    break;
                                }
                                b += 1;
                            }
                        }
                        b = self.map[self.try_catch[j].try_op.index()].index();
                        if !self.blocks[b].is_reachable() {
                            if let Some(finally_op) = tc.finally_op {
                                let end = self.map[finally_op.index()].index();
                                while b != end && b < count {
                                    if self.blocks[b].is_reachable() {
                                        // PHP moves try_op to catch_op (0 when absent).
                                        self.try_catch[j].try_op =
                                            tc.catch_op.unwrap_or(OpNum::new(0));
                                        changed = true;
                                        let target = self.map[self.try_catch[j].try_op.index()];
                                        self.mark_reachable(op_array, target, &mut stack);
                                        break;
                                    }
                                    b += 1;
                                }
                            }
                        }
                    }

                    let b = self.map[self.try_catch[j].try_op.index()].index();
                    if self.blocks[b].is_reachable() {
                        self.blocks[b].flags |= BlockFlags::TRY;
                        let parts = [
                            (tc.catch_op, BlockFlags::CATCH),
                            (tc.finally_op, BlockFlags::FINALLY),
                            (tc.finally_end, BlockFlags::FINALLY_END),
                        ];
                        for (op, flag) in parts {
                            if let Some(op) = op {
                                let b = self.map[op.index()];
                                self.blocks[b.index()].flags |= flag;
                                if !self.blocks[b.index()].is_reachable() {
                                    changed = true;
                                    self.mark_reachable(op_array, b, &mut stack);
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
                if self.blocks[b].is_reachable() {
                    continue;
                }
                for j in self.blocks[b].ops() {
                    let op = &op_array.opcodes[j as usize];
                    if is_loop_var_free(op) {
                        if let Some(def) = loop_var_def(op_array, OpNum::new(j)) {
                            if self.blocks[self.map[def.index()].index()].is_reachable() {
                                self.blocks[b].flags |= BlockFlags::UNREACHABLE_FREE;
                                break;
                            }
                        }
                    }
                }
            }
        }
    }

    /// `zend_cfg_build_predecessors`: unreachable blocks lose their successors; every
    /// reachable block lists its distinct predecessors. Returns whether every edge left
    /// goes to a later block ([`Cfg::edges_go_forward`], found on the way).
    fn build_predecessors(&mut self, scratch: &Bump) -> bool {
        let n = self.blocks.len();
        let counts = scratch.alloc_slice_fill_copy(n, 0u32);
        // SWITCH tables may name a block several times; `seen[s] == j + 1` marks a
        // successor block `j` already counted.
        let seen = scratch.alloc_slice_fill_copy(n, 0u32);
        let mut edges = 0;
        let mut forward = true;
        for b in 0..n {
            if !self.blocks[b].is_reachable() {
                self.blocks[b].successors_count = 0;
                continue;
            }
            let block = &self.blocks[b];
            let start = block.successor_offset as usize;
            for &succ in &self.edges[start..start + block.successors_count as usize] {
                edges += 1;
                forward &= succ.index() > b;
                if seen[succ.index()] != b as u32 + 1 {
                    seen[succ.index()] = b as u32 + 1;
                    counts[succ.index()] += 1;
                }
            }
        }
        self.edges_count = edges;
        let start = self.predecessors_start;
        let mut offset = start;
        for (block, count) in self.blocks.iter_mut().zip(counts.iter()) {
            block.predecessor_offset = offset;
            block.predecessors_count = 0;
            offset += count;
        }
        self.edges.truncate(start as usize);
        self.edges.resize(offset as usize, BlockId::new(0));
        seen.fill(0);
        for j in 0..n {
            if !self.blocks[j].is_reachable() {
                continue;
            }
            let start = self.blocks[j].successor_offset as usize;
            let count = self.blocks[j].successors_count as usize;
            for s in 0..count {
                let succ = self.edges[start + s];
                if seen[succ.index()] == j as u32 + 1 {
                    continue;
                }
                seen[succ.index()] = j as u32 + 1;
                let target = &mut self.blocks[succ.index()];
                let at = (target.predecessor_offset + target.predecessors_count) as usize;
                target.predecessors_count += 1;
                self.edges[at] = BlockId::new(j as u32);
            }
        }
        forward
    }
}

/// Whether [`jump_targets`] has targets for `opcode`: a cheap test that spares the scan
/// of every other op the call.
#[inline(always)]
const fn is_branch(opcode: Opcode) -> bool {
    matches!(
        opcode,
        ZEND_JMP
            | ZEND_FAST_CALL
            | ZEND_JMPZ
            | ZEND_JMPNZ
            | ZEND_JMPZ_EX
            | ZEND_JMPNZ_EX
            | ZEND_JMP_SET
            | ZEND_COALESCE
            | ZEND_ASSERT_CHECK
            | ZEND_JMP_NULL
            | ZEND_FE_RESET_R
            | ZEND_FE_RESET_RW
            | ZEND_CATCH
            | ZEND_FE_FETCH_R
            | ZEND_FE_FETCH_RW
            | ZEND_SWITCH_LONG
            | ZEND_SWITCH_STRING
            | ZEND_MATCH
    )
}

/// The jump targets of op `i` (op numbers, into `targets`, which is cleared first) and
/// whether it also falls through, for the opcodes that branch; `None` for the others.
/// Inlined into the CFG build's two loops (each op that ends a block comes here, some
/// 70k times over the corpus): out of line, each call paid for passing the result
/// through memory. The jump tables, rarer and longer, stay out of line.
#[inline(always)]
fn jump_targets(
    op_array: &OpArray,
    i: u32,
    targets: &mut BVec<u32>,
) -> Result<Option<bool>, CfgError> {
    targets.clear();
    let op = &op_array.opcodes[i as usize];
    let last = op_array.opcodes.len() as u32;
    let check = |target: u32| jump_in_range(op_array, i, last, target);
    let addr = |operand: Operand| -> Result<u32, CfgError> {
        match operand {
            Operand::JmpAddr(target) => check(target.as_u32()),
            _ => Err(error(op_array, i, Problem::NotAJump)),
        }
    };
    let falls_through = match op.opcode {
        ZEND_JMP => {
            targets.push(addr(op.op1)?);
            false
        }
        ZEND_FAST_CALL => {
            targets.push(addr(op.op1)?);
            true
        }
        ZEND_JMPZ | ZEND_JMPNZ | ZEND_JMPZ_EX | ZEND_JMPNZ_EX | ZEND_JMP_SET | ZEND_COALESCE
        | ZEND_ASSERT_CHECK | ZEND_JMP_NULL | ZEND_FE_RESET_R | ZEND_FE_RESET_RW => {
            targets.push(addr(op.op2)?);
            true
        }
        ZEND_CATCH => {
            if op.extended_value & ZEND_LAST_CATCH == 0 {
                targets.push(addr(op.op2)?);
            }
            true
        }
        ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW => {
            targets.push(check(op.extended_value)?);
            true
        }
        ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH => {
            table_targets(op_array, i, targets)?;
            op.opcode != ZEND_MATCH
        }
        _ => {
            debug_assert!(!is_branch(op.opcode), "is_branch and jump_targets disagree");
            return Ok(None);
        }
    };
    debug_assert!(is_branch(op.opcode), "is_branch and jump_targets disagree");
    Ok(Some(falls_through))
}

/// `target`, when it is an op of `op_array` (of `last` ops): else the error of jump op `i`.
#[inline(always)]
fn jump_in_range(op_array: &OpArray, i: u32, last: u32, target: u32) -> Result<u32, CfgError> {
    if target < last {
        Ok(target)
    } else {
        Err(error(op_array, i, Problem::JumpOutOfRange { target }))
    }
}

/// The targets of the jump table of SWITCH_LONG, SWITCH_STRING or MATCH op `i`, then its
/// default target, into `targets`.
#[inline(never)]
fn table_targets(op_array: &OpArray, i: u32, targets: &mut BVec<u32>) -> Result<(), CfgError> {
    let op = &op_array.opcodes[i as usize];
    let last = op_array.opcodes.len() as u32;
    let check = |target: u32| jump_in_range(op_array, i, last, target);
    let table = match op.op2 {
        Operand::Const(lit) => match op_array.literals.get(lit.index()) {
            Some(Literal::Array(table)) => table,
            _ => return Err(error(op_array, i, Problem::BadJumpTable)),
        },
        _ => return Err(error(op_array, i, Problem::BadJumpTable)),
    };
    for (_, target) in table {
        match target {
            Literal::Long(t) if *t >= 0 && *t < i64::from(last) => targets.push(*t as u32),
            Literal::Long(t) => {
                return Err(error(
                    op_array,
                    i,
                    Problem::JumpOutOfRange { target: *t as u32 },
                ))
            }
            _ => return Err(error(op_array, i, Problem::BadJumpTable)),
        }
    }
    targets.push(check(op.extended_value)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use zend_ir::{LiteralId, VarNum};

    /// The table test agrees with the match it stands for, at and around every limit, for
    /// every operand kind, and the six kinds have slots of their own ([`operand_kind`]
    /// relies on what `Discriminant::hash` writes, [`kind_slot`] on the numbering).
    #[test]
    fn operand_limits_agree_with_out_of_range() {
        let kinds = [
            Operand::Unused(0),
            Operand::JmpAddr(OpNum::new(0)),
            Operand::Const(LiteralId::new(0)),
            Operand::TmpVar(VarNum::new(0)),
            Operand::Var(VarNum::new(0)),
            Operand::Cv(VarNum::new(0)),
        ];
        let mut slots: Vec<usize> = kinds.iter().map(kind_slot).collect();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), kinds.len(), "two kinds share a slot");
        let numbers = [0, 1, 2, 6, 7, 8, 1000, u32::MAX - 2, u32::MAX - 1];
        for (vars, literals) in [(0, 0), (7, 3), (1, 1000), (u32::MAX - 1, 5)] {
            let limits = operand_limits(vars, literals);
            for n in numbers {
                let operands = [
                    Operand::Unused(n),
                    Operand::Unused(u32::MAX),
                    Operand::JmpAddr(OpNum::new(n)),
                    Operand::Const(LiteralId::new(n)),
                    Operand::TmpVar(VarNum::new(n)),
                    Operand::Var(VarNum::new(n)),
                    Operand::Cv(VarNum::new(n)),
                ];
                for operand in operands {
                    assert_eq!(
                        excess(&limits, operand) != 0,
                        out_of_range(operand, vars, literals),
                        "{operand:?} with {vars} vars, {literals} literals"
                    );
                }
            }
        }
    }
}
