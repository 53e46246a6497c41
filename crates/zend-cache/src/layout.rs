//! The persisted form of a [`zend_ir::Script`]: record layouts shared by the writer
//! ([`mod@crate::persist`]) and the loader ([`mod@crate::load`]).
//!
//! # Body layout
//!
//! A body is one contiguous byte buffer. Every number is little-endian and fixed-width.
//! Nothing in it is a pointer: a reference to another record is a `u32` byte offset from the
//! start of the body, an array is a *span* (`u32` offset, `u32` element count) of fixed-size
//! records, and a string is a `u32` index into the string table (`NONE` = `u32::MAX` for an
//! absent optional string).
//!
//! ```text
//! 0                 BodyHeader (80 bytes) + main OpArray record
//! HEADER_END..      records, allocated depth first in one canonical order (below)
//! strings_index     string_count × { offset u32, len u32 }   (4-aligned)
//! string_bytes      the bytes of every distinct string, back to back
//! ```
//!
//! Records are placed by a bump allocator that starts right after the header: an array of
//! `count` records of size `S` and alignment `A` goes at the cursor rounded up to `A` (the
//! gap is zero), and the cursor moves past it. The children of a record (its arrays) are
//! allocated when the record is visited, in field order, depth first; an empty array has
//! offset 0 and takes no space. The loader replays the same allocation order and requires
//! every span to sit exactly where the allocator would have put it, so records never
//! overlap or share children, decoding work is bounded by the body's size, and an entry has
//! one encoding (padding and unused fields must be zero too).
//!
//! Hot arrays are aligned for zero-copy reads: op records (24 bytes, 4-aligned, the layout
//! of `zend_op` without its handler pointer), literal records (16 bytes, 8-aligned, the
//! layout of a `zval`: value, type, u2), array buckets (32 bytes, 8-aligned, the layout of a
//! `Bucket`), and the string index (4-aligned). A body is always stored at an offset that is
//! a multiple of 16 (see [`crate::entry`]), so these alignments hold in memory too.

/// Magic at the start of a body.
pub const BODY_MAGIC: [u8; 4] = *b"ZSC1";

/// Absent optional string.
pub const NONE: u32 = u32::MAX;

/// Deepest nesting of values: arrays, constant-expression ASTs and type lists, counted from
/// each value's root. At least what the `.zop` text format accepts.
pub const MAX_VALUE_DEPTH: usize = 256;

/// Deepest nesting of op_arrays (main script, function or method = 1, each
/// dynamic_func_def one more). At least what the `.zop` text format accepts.
pub const MAX_FUNC_NESTING: usize = 64;

/// Largest body: offsets are `u32`.
pub const MAX_BODY_LEN: usize = u32::MAX as usize - 16;

/// A loaded script's strings may add up to at most this many bytes per body byte (plus
/// [`STRING_EXPANSION_SLACK`]): deduplication lets one stored string be referenced many
/// times, and this bounds what decoding into owned strings can allocate. Real recordings
/// stay far below it (about 2x).
pub const MAX_STRING_EXPANSION: u64 = 64;
pub const STRING_EXPANSION_SLACK: u64 = 16 << 20;

pub const fn align_up(n: usize, align: usize) -> usize {
    (n + align - 1) & !(align - 1)
}

/// Span: offset u32, count u32.
pub const SPAN: usize = 8;

pub mod header {
    pub const MAGIC: usize = 0;
    pub const BODY_LEN: usize = 4;
    pub const STRINGS_INDEX: usize = 8;
    pub const STRING_COUNT: usize = 12;
    pub const STRING_BYTES: usize = 16;
    pub const STRING_BYTES_LEN: usize = 20;
    pub const FILENAME: usize = 24;
    pub const OP_ARRAY_COUNT: usize = 28;
    pub const OP_COUNT: usize = 32;
    pub const FUNCTION_TABLE: usize = 36; // span of FUNC records
    pub const CLASS_TABLE: usize = 44; // span of CLASS records
    /// `Script::compiler_halt_offset`: presence u32 (0 None, 1 Some), then the offset u64
    /// (0 when absent).
    pub const HAS_HALT_OFFSET: usize = 52;
    pub const HALT_OFFSET: usize = 56;
    pub const WARNINGS: usize = 64; // span of WARNING records (`Script::warnings`)
    /// Span of EARLY_BINDING records (`Script::early_bindings`).
    pub const EARLY_BINDINGS: usize = 72;
    pub const MAIN_OP_ARRAY: usize = 80; // inline OP_ARRAY record
    pub const SIZE: usize = MAIN_OP_ARRAY + super::op_array::SIZE;
}

/// `zend_op` without the handler: op1, op2, result, extended_value, lineno, opcode, op
/// types.
pub mod op {
    pub const OP1: usize = 0;
    pub const OP2: usize = 4;
    pub const RESULT: usize = 8;
    pub const EXTENDED_VALUE: usize = 12;
    pub const LINENO: usize = 16;
    pub const OPCODE: usize = 20;
    pub const OP1_TYPE: usize = 21;
    pub const OP2_TYPE: usize = 22;
    pub const RESULT_TYPE: usize = 23;
    pub const SIZE: usize = 24;
    pub const ALIGN: usize = 4;
    /// Operand type byte of an unused operand that holds a jump target (`JmpAddr`): not a
    /// Zend type, a marker so every [`zend_ir::Operand`] survives.
    pub const JMP_ADDR: u8 = 0x40;
}

/// `zval`: value u64, type u32 (Zend type code in the low byte), u2 u32.
pub mod lit {
    pub const VALUE: usize = 0;
    pub const TYPE: usize = 8;
    pub const AUX: usize = 12;
    pub const SIZE: usize = 16;
    pub const ALIGN: usize = 8;
}

/// An array literal's table (the zval's value points here, its u2 holds the element count):
/// `nNextFreeElement` i64, the buckets' offset u32 (0 when there is none), pad.
pub mod ht {
    pub const NEXT_FREE: usize = 0;
    pub const BUCKETS: usize = 8;
    pub const PAD: usize = 12;
    pub const SIZE: usize = 16;
    pub const ALIGN: usize = 8;
}

/// `Bucket`: value zval (16), h u64 (long key), key u32 string (NONE for a long key), pad.
pub mod bucket {
    pub const VALUE: usize = 0;
    pub const H: usize = 16;
    pub const KEY: usize = 24;
    pub const PAD: usize = 28;
    pub const SIZE: usize = 32;
    pub const ALIGN: usize = 8;
}

/// Constant-expression AST node: kind u16, attr u16, lineno u32, body kind u32 (0 zval,
/// 1 children), child count u32, then a zval or (children offset u32, pad u32, pad u64).
/// Children are an array of u32 node offsets, 0 for an absent child.
pub mod ast {
    pub const KIND: usize = 0;
    pub const ATTR: usize = 2;
    pub const LINENO: usize = 4;
    pub const BODY: usize = 8;
    pub const COUNT: usize = 12;
    pub const ZVAL: usize = 16;
    pub const CHILDREN: usize = 16;
    pub const SIZE: usize = 32;
    pub const ALIGN: usize = 8;
    pub const BODY_ZVAL: u32 = 0;
    pub const BODY_CHILDREN: u32 = 1;
}

/// `zend_type`: type_mask u32, names kind u32 (0 none, 1 name, 2 list), name string or list
/// offset u32, list count u32.
pub mod ztype {
    pub const MASK: usize = 0;
    pub const KIND: usize = 4;
    pub const A: usize = 8;
    pub const B: usize = 12;
    pub const SIZE: usize = 16;
    pub const ALIGN: usize = 4;
    pub const NAMES_NONE: u32 = 0;
    pub const NAMES_NAME: u32 = 1;
    pub const NAMES_LIST: u32 = 2;
}

/// `zend_arg_info`: name, type, default_value.
pub mod arg_info {
    pub const NAME: usize = 0;
    pub const TYPE: usize = 4;
    pub const DEFAULT: usize = 20;
    pub const SIZE: usize = 24;
    pub const ALIGN: usize = 4;
}

/// `zend_attribute`: name, lcname, flags, lineno, offset, args span.
pub mod attribute {
    pub const NAME: usize = 0;
    pub const LCNAME: usize = 4;
    pub const FLAGS: usize = 8;
    pub const LINENO: usize = 12;
    pub const OFFSET: usize = 16;
    pub const ARGS: usize = 20;
    pub const SIZE: usize = 28;
    pub const ALIGN: usize = 4;
}

/// Attribute argument and static variable: name string, pad, value zval.
pub mod named_value {
    pub const NAME: usize = 0;
    pub const PAD: usize = 4;
    pub const VALUE: usize = 8;
    pub const SIZE: usize = 24;
    pub const ALIGN: usize = 8;
}

/// `zend_live_range`: var, kind, start, end.
pub mod live_range {
    pub const VAR: usize = 0;
    pub const KIND: usize = 4;
    pub const START: usize = 8;
    pub const END: usize = 12;
    pub const SIZE: usize = 16;
    pub const ALIGN: usize = 4;
}

/// `zend_try_catch_element`: presence bits (1 catch, 2 finally, 4 finally_end), try, catch,
/// finally, finally_end (0 when absent).
pub mod try_catch {
    pub const PRESENT: usize = 0;
    pub const TRY: usize = 4;
    pub const CATCH: usize = 8;
    pub const FINALLY: usize = 12;
    pub const FINALLY_END: usize = 16;
    pub const SIZE: usize = 20;
    pub const ALIGN: usize = 4;
}

/// `zend_op_array`.
pub mod op_array {
    pub const TYPE: usize = 0;
    pub const FN_FLAGS: usize = 4;
    pub const FUNCTION_NAME: usize = 8;
    pub const SCOPE: usize = 12;
    pub const NUM_ARGS: usize = 16;
    pub const REQUIRED_NUM_ARGS: usize = 20;
    pub const ARG_INFO: usize = 24;
    pub const RETURN_INFO: usize = 32; // span of 0 or 1 ARG_INFO
    pub const ATTRIBUTES: usize = 40;
    pub const T: usize = 48;
    pub const CACHE_SIZE: usize = 52;
    pub const VARS: usize = 56; // span of u32 strings
    pub const OPCODES: usize = 64;
    pub const LITERALS: usize = 72;
    pub const HAS_STATIC_VARIABLES: usize = 80;
    pub const STATIC_VARIABLES: usize = 84;
    pub const LIVE_RANGE: usize = 92;
    pub const TRY_CATCH: usize = 100;
    pub const FILENAME: usize = 108;
    pub const LINE_START: usize = 112;
    pub const LINE_END: usize = 116;
    pub const DOC_COMMENT: usize = 120;
    pub const DYNAMIC_FUNC_DEFS: usize = 124; // span of OP_ARRAY records
    pub const LITERAL_EXTRA: usize = 132; // span of LITERAL_EXTRA records
    pub const SIZE: usize = 140;
    pub const ALIGN: usize = 4;
}

/// One `OpArray::literal_extra` entry: literal index, non-zero `u2` value. Entries are in
/// strictly increasing literal order, each index below the op_array's literal count.
pub mod literal_extra {
    pub const LITERAL: usize = 0;
    pub const VALUE: usize = 4;
    pub const SIZE: usize = 8;
    pub const ALIGN: usize = 4;
}

/// Function table and method table entry: key string, then an inline op_array record.
/// `zend_error_info`: type, line, file, message (allocated after the class table).
pub mod warning {
    pub const TYPE: usize = 0;
    pub const LINENO: usize = 4;
    pub const FILENAME: usize = 8;
    pub const MESSAGE: usize = 12;
    pub const SIZE: usize = 16;
    pub const ALIGN: usize = 4;
}

/// `zend_early_binding` without its cache slot: three strings.
pub mod early_binding {
    pub const LCNAME: usize = 0;
    pub const RTD_KEY: usize = 4;
    pub const LC_PARENT_NAME: usize = 8;
    pub const SIZE: usize = 12;
    pub const ALIGN: usize = 4;
}

pub mod func {
    pub const KEY: usize = 0;
    pub const OP_ARRAY: usize = 4;
    pub const SIZE: usize = 4 + super::op_array::SIZE;
    pub const ALIGN: usize = 4;
}

/// `zend_class_constant`: name, flags, doc_comment, ce, attributes span, value zval.
pub mod class_constant {
    pub const NAME: usize = 0;
    pub const FLAGS: usize = 4;
    pub const DOC_COMMENT: usize = 8;
    pub const CE: usize = 12;
    pub const ATTRIBUTES: usize = 16;
    pub const VALUE: usize = 24;
    pub const SIZE: usize = 40;
    pub const ALIGN: usize = 8;
}

/// `zend_property_info` with its default: name, flags, offset, doc_comment, ce, has_default,
/// attributes span, type, default zval.
pub mod property {
    pub const NAME: usize = 0;
    pub const FLAGS: usize = 4;
    pub const OFFSET: usize = 8;
    pub const DOC_COMMENT: usize = 12;
    pub const CE: usize = 16;
    pub const HAS_DEFAULT: usize = 20;
    pub const ATTRIBUTES: usize = 24;
    pub const TYPE: usize = 32;
    pub const DEFAULT: usize = 48;
    pub const SIZE: usize = 64;
    pub const ALIGN: usize = 8;
}

/// Class name with its lowercased key.
pub mod class_name {
    pub const NAME: usize = 0;
    pub const LC_NAME: usize = 4;
    pub const SIZE: usize = 8;
    pub const ALIGN: usize = 4;
}

/// Trait alias: method_name, class_name, alias, modifiers.
pub mod trait_alias {
    pub const METHOD_NAME: usize = 0;
    pub const CLASS_NAME: usize = 4;
    pub const ALIAS: usize = 8;
    pub const MODIFIERS: usize = 12;
    pub const SIZE: usize = 16;
    pub const ALIGN: usize = 4;
}

/// Trait precedence: method_name, class_name, exclude_class_names span of u32 strings.
pub mod trait_precedence {
    pub const METHOD_NAME: usize = 0;
    pub const CLASS_NAME: usize = 4;
    pub const EXCLUDE: usize = 8;
    pub const SIZE: usize = 16;
    pub const ALIGN: usize = 4;
}

/// Class table entry: key, then the `zend_class_entry`.
pub mod class {
    pub const KEY: usize = 0;
    pub const NAME: usize = 4;
    pub const PARENT_NAME: usize = 8;
    pub const CE_FLAGS: usize = 12;
    pub const REFCOUNT: usize = 16;
    pub const INTERFACE_NAMES: usize = 20;
    pub const TRAIT_NAMES: usize = 28;
    pub const TRAIT_ALIASES: usize = 36;
    pub const TRAIT_PRECEDENCES: usize = 44;
    pub const CONSTANTS: usize = 52;
    pub const PROPERTIES: usize = 60;
    pub const METHODS: usize = 68; // span of FUNC records
    pub const ATTRIBUTES: usize = 76;
    pub const FILENAME: usize = 84;
    pub const LINE_START: usize = 88;
    pub const LINE_END: usize = 92;
    pub const DOC_COMMENT: usize = 96;
    pub const ENUM_BACKING_TYPE: usize = 100;
    pub const SIZE: usize = 104;
    pub const ALIGN: usize = 4;
}

/// String index entry: offset into the string bytes, length.
pub mod string {
    pub const OFFSET: usize = 0;
    pub const LEN: usize = 4;
    pub const SIZE: usize = 8;
    pub const ALIGN: usize = 4;
}

/// Zend type codes of literal records (`Z_TYPE`).
pub mod ty {
    pub use zend_ir::types::{
        IS_ARRAY, IS_CONSTANT_AST, IS_DOUBLE, IS_FALSE, IS_LONG, IS_NULL, IS_STRING, IS_TRUE,
    };
}
