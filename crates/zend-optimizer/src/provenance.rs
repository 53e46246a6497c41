//! The change log: what each pass changed and why, for `zopt opt --explain`.
//!
//! No other optimizer reports this. A pass records a [`Change`] through
//! [`crate::OptimizerCtx::note`]; the explanation is built only when the log is on, so an
//! optimization without `--explain` pays one branch per change.

use zend_ir::OpNum;

/// What happened to an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    /// Turned into a NOP or dropped.
    Removed,
    /// Opcode or operands changed.
    Rewritten,
    /// A new op was added.
    Inserted,
    /// A jump now goes elsewhere.
    Retargeted,
    /// An operand became a constant.
    Folded,
    /// Literals were merged or renumbered.
    LiteralMerged,
    /// Variables were renumbered or reused.
    Renumbered,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Removed => "removed",
            ChangeKind::Rewritten => "rewritten",
            ChangeKind::Inserted => "inserted",
            ChangeKind::Retargeted => "retargeted",
            ChangeKind::Folded => "folded",
            ChangeKind::LiteralMerged => "literals",
            ChangeKind::Renumbered => "renumbered",
        }
    }
}

/// One change made by a pass.
#[derive(Clone, Debug)]
pub struct Change {
    /// The op_array's display name (`$_main`, `f`, `A::m`).
    pub op_array: String,
    /// The pass that made it (`pass1`, `block_pass`, ...).
    pub pass: &'static str,
    /// The op, numbered as it was when the pass made the change.
    pub op: OpNum,
    pub kind: ChangeKind,
    /// The fact that allowed it (the constant, the jump chain, the dead result, ...).
    pub why: String,
}
