//! `MAY_BE_*` bits as plain `u32` (zend_type_info.h), the form the transfer functions use.
#![allow(missing_docs)]

pub const UNDEF: u32 = 1 << 0;
pub const NULL: u32 = 1 << 1;
pub const FALSE: u32 = 1 << 2;
pub const TRUE: u32 = 1 << 3;
pub const BOOL: u32 = FALSE | TRUE;
pub const LONG: u32 = 1 << 4;
pub const DOUBLE: u32 = 1 << 5;
pub const STRING: u32 = 1 << 6;
pub const ARRAY: u32 = 1 << 7;
pub const OBJECT: u32 = 1 << 8;
pub const RESOURCE: u32 = 1 << 9;
pub const ANY: u32 = 0x3fe;
pub const REF: u32 = 1 << 10;
pub const SHIFT: u32 = 10;
pub const ARRAY_OF_NULL: u32 = NULL << SHIFT;
pub const ARRAY_OF_LONG: u32 = LONG << SHIFT;
pub const ARRAY_OF_DOUBLE: u32 = DOUBLE << SHIFT;
pub const ARRAY_OF_STRING: u32 = STRING << SHIFT;
pub const ARRAY_OF_ARRAY: u32 = ARRAY << SHIFT;
pub const ARRAY_OF_ANY: u32 = ANY << SHIFT;
pub const ARRAY_OF_REF: u32 = REF << SHIFT;
pub const ARRAY_PACKED: u32 = 1 << 21;
pub const ARRAY_NUMERIC_HASH: u32 = 1 << 22;
pub const ARRAY_STRING_HASH: u32 = 1 << 23;
pub const ARRAY_EMPTY: u32 = 1 << 29;
pub const ARRAY_KEY_LONG: u32 = ARRAY_PACKED | ARRAY_NUMERIC_HASH;
pub const ARRAY_KEY_STRING: u32 = ARRAY_STRING_HASH;
pub const ARRAY_KEY_ANY: u32 = ARRAY_KEY_LONG | ARRAY_KEY_STRING | ARRAY_EMPTY;
pub const CLASS: u32 = 1 << 24;
pub const INDIRECT: u32 = 1 << 25;
pub const GUARD: u32 = 1 << 28;
pub const RC1: u32 = 1 << 30;
pub const RCN: u32 = 1 << 31;

/// `MAY_BE_HASH_ONLY`.
pub fn hash_only(t: u32) -> bool {
    t & (ARRAY_NUMERIC_HASH | ARRAY_STRING_HASH) != 0 && t & (ARRAY_PACKED | ARRAY_EMPTY) == 0
}

/// Everything an unknown value may be.
pub const UNKNOWN: u32 = ANY | ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF;
