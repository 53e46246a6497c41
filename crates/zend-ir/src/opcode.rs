//! Opcodes and their VM operand flags (zend_vm_opcodes.h).
//!
//! The table itself lives in `opcode_table.rs`, generated from the PHP 8.2 binary by
//! `tools/gen-opcodes.php`; this module gives it a typed face.

use serde::{Deserialize, Serialize};
use std::fmt;

pub use crate::opcode_table::*;

/// A Zend opcode number (`zend_uchar opcode` in `zend_op`).
///
/// Any `u8` is representable so that an unknown opcode in input can be carried and reported
/// instead of being lost; [`Opcode::is_defined`] says whether PHP 8.2 defines it.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Opcode(pub u8);

/// A set of opcodes as a table by opcode number, built at compile time: a pass whose
/// `match` handles a few opcodes tests an op against the set first, one load where the
/// match is an indirect jump, for the majority of ops it leaves alone.
#[derive(Copy, Clone)]
pub struct OpcodeSet([bool; 256]);

impl OpcodeSet {
    pub const fn of(opcodes: &[Opcode]) -> OpcodeSet {
        let mut table = [false; 256];
        let mut k = 0;
        while k < opcodes.len() {
            table[opcodes[k].0 as usize] = true;
            k += 1;
        }
        OpcodeSet(table)
    }

    /// The set of a table by opcode number (see [`opcode_set_where!`](crate::opcode_set_where)).
    pub const fn from_table(table: [bool; 256]) -> OpcodeSet {
        OpcodeSet(table)
    }

    #[inline(always)]
    pub fn contains(&self, opcode: Opcode) -> bool {
        self.0[opcode.0 as usize]
    }
}

/// The [`OpcodeSet`] of the opcodes a `const fn(Opcode) -> bool` accepts, built at compile
/// time: a pass keeps its opcodes as one pattern (the `const fn`, which its `match` arms can
/// mirror) and tests ops against the table.
#[macro_export]
macro_rules! opcode_set_where {
    ($predicate:path) => {{
        let mut table = [false; 256];
        let mut i = 0;
        while i < 256 {
            table[i] = $predicate($crate::Opcode(i as u8));
            i += 1;
        }
        $crate::OpcodeSet::from_table(table)
    }};
}

// VM operand flags, exactly as zend_vm_opcodes.h defines them.
pub const ZEND_VM_OP_SPEC: u32 = 0x0000_0001;
pub const ZEND_VM_OP_CONST: u32 = 0x0000_0002;
pub const ZEND_VM_OP_TMPVAR: u32 = 0x0000_0004;
pub const ZEND_VM_OP_TMPVARCV: u32 = 0x0000_0008;
pub const ZEND_VM_OP_MASK: u32 = 0x0000_00f0;
pub const ZEND_VM_OP_NUM: u32 = 0x0000_0010;
pub const ZEND_VM_OP_JMP_ADDR: u32 = 0x0000_0020;
pub const ZEND_VM_OP_TRY_CATCH: u32 = 0x0000_0030;
pub const ZEND_VM_OP_THIS: u32 = 0x0000_0050;
pub const ZEND_VM_OP_NEXT: u32 = 0x0000_0060;
pub const ZEND_VM_OP_CLASS_FETCH: u32 = 0x0000_0070;
pub const ZEND_VM_OP_CONSTRUCTOR: u32 = 0x0000_0080;
pub const ZEND_VM_OP_CONST_FETCH: u32 = 0x0000_0090;
pub const ZEND_VM_OP_CACHE_SLOT: u32 = 0x0000_00a0;
pub const ZEND_VM_EXT_VAR_FETCH: u32 = 0x0001_0000;
pub const ZEND_VM_EXT_ISSET: u32 = 0x0002_0000;
pub const ZEND_VM_EXT_CACHE_SLOT: u32 = 0x0004_0000;
pub const ZEND_VM_EXT_ARRAY_INIT: u32 = 0x0008_0000;
pub const ZEND_VM_EXT_REF: u32 = 0x0010_0000;
pub const ZEND_VM_EXT_FETCH_REF: u32 = 0x0020_0000;
pub const ZEND_VM_EXT_DIM_WRITE: u32 = 0x0040_0000;
pub const ZEND_VM_EXT_MASK: u32 = 0x0f00_0000;
pub const ZEND_VM_EXT_NUM: u32 = 0x0100_0000;
pub const ZEND_VM_EXT_LAST_CATCH: u32 = 0x0200_0000;
pub const ZEND_VM_EXT_JMP_ADDR: u32 = 0x0300_0000;
pub const ZEND_VM_EXT_OP: u32 = 0x0400_0000;
pub const ZEND_VM_EXT_TYPE: u32 = 0x0700_0000;
pub const ZEND_VM_EXT_EVAL: u32 = 0x0800_0000;
pub const ZEND_VM_EXT_TYPE_MASK: u32 = 0x0900_0000;
pub const ZEND_VM_EXT_SRC: u32 = 0x0b00_0000;
pub const ZEND_VM_NO_CONST_CONST: u32 = 0x4000_0000;
pub const ZEND_VM_COMMUTATIVE: u32 = 0x8000_0000;

/// `ZEND_VM_OP1_FLAGS(flags)`.
pub const fn zend_vm_op1_flags(flags: u32) -> u32 {
    flags & 0xff
}

/// `ZEND_VM_OP2_FLAGS(flags)`.
pub const fn zend_vm_op2_flags(flags: u32) -> u32 {
    (flags >> 8) & 0xff
}

impl Opcode {
    #[inline]
    fn info(self) -> Option<(&'static str, u32)> {
        OPCODE_INFO.get(self.0 as usize).copied().flatten()
    }

    #[inline]
    /// Whether PHP 8.2's VM defines this opcode number.
    pub fn is_defined(self) -> bool {
        self.info().is_some()
    }

    /// `zend_get_opcode_name()`: the full name, e.g. `ZEND_ADD`.
    pub fn name(self) -> Option<&'static str> {
        self.info().map(|(name, _)| name)
    }

    /// The name as dumps print it, without the `ZEND_` prefix.
    pub fn short_name(self) -> Option<&'static str> {
        self.name().map(|n| &n[5..])
    }

    #[inline]
    /// `zend_get_opcode_flags()`; 0 for an undefined opcode, as PHP returns.
    pub fn flags(self) -> u32 {
        self.info().map_or(0, |(_, flags)| flags)
    }

    #[inline]
    pub fn op1_flags(self) -> u32 {
        zend_vm_op1_flags(self.flags())
    }

    #[inline]
    pub fn op2_flags(self) -> u32 {
        zend_vm_op2_flags(self.flags())
    }

    #[inline]
    pub fn ext_flags(self) -> u32 {
        self.flags() & ZEND_VM_EXT_MASK
    }

    #[inline]
    /// op1 holds a jump target when unused as a value.
    pub fn op1_is_jmp_addr(self) -> bool {
        self.op1_flags() & ZEND_VM_OP_MASK == ZEND_VM_OP_JMP_ADDR
    }

    #[inline]
    /// op2 holds a jump target when unused as a value.
    pub fn op2_is_jmp_addr(self) -> bool {
        self.op2_flags() & ZEND_VM_OP_MASK == ZEND_VM_OP_JMP_ADDR
    }

    #[inline]
    /// extended_value holds a jump target (FE_FETCH_R/RW).
    pub fn ext_is_jmp_addr(self) -> bool {
        self.ext_flags() == ZEND_VM_EXT_JMP_ADDR
    }

    /// Looks an opcode up by its name, with or without the `ZEND_` prefix.
    pub fn from_name(name: &str) -> Option<Opcode> {
        let short = name.strip_prefix("ZEND_").unwrap_or(name);
        OPCODE_INFO
            .iter()
            .position(|info| matches!(info, Some((n, _)) if &n[5..] == short))
            .map(|i| Opcode(i as u8))
    }

    /// Every opcode PHP 8.2 defines, in numeric order.
    pub fn all() -> impl Iterator<Item = Opcode> {
        (0..OPCODE_INFO.len())
            .map(|i| Opcode(i as u8))
            .filter(|op| op.is_defined())
    }
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.short_name() {
            Some(name) => f.write_str(name),
            None => write!(f, "OP_{}", self.0),
        }
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_php_82_shape() {
        assert_eq!(ZEND_VM_LAST_OPCODE, 202);
        assert!(!Opcode(45).is_defined());
        assert_eq!(Opcode::all().count(), 202);
        assert_eq!(ZEND_JMPZ.short_name(), Some("JMPZ"));
        assert!(ZEND_JMPZ.op2_is_jmp_addr());
        assert!(ZEND_FE_FETCH_R.ext_is_jmp_addr());
        assert_eq!(Opcode::from_name("ASSIGN"), Some(ZEND_ASSIGN));
        assert_eq!(Opcode::from_name("ZEND_ASSIGN"), Some(ZEND_ASSIGN));
        assert!(Opcode(250).name().is_none());
    }
}
