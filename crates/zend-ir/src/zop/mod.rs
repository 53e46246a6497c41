//! The `.zop` format: a lossless, readable text form of a [`Script`](crate::Script), and a
//! binary form (bincode).
//!
//! # Guarantees
//!
//! - **Lossless**: `parse(&print(s)) == Ok(s)` for every [`Script`] within the nesting
//!   limits below: every field of the model survives, including raw values of unused
//!   operands, smart branches, line numbers, doubles bit for bit (NaN payloads, `-0.0`),
//!   byte strings that are not UTF-8, unused and duplicate literals.
//! - **Canonical**: `print(&parse(t)?) == t` for any text `print` produced. The parser
//!   accepts more than the printer writes (fields in any order, comments, blank lines, other
//!   indentation, `float(2)` for `float(2.0)`, missing fields that have defaults, operands
//!   without their `CV0($name)` / `#0:value` annotations), so hand-written text normalizes
//!   on the first round trip.
//! - **Robust**: [`parse`] never panics, whatever the input, and allocates only in
//!   proportion to the input (no capacity is taken from a number in the text).
//!   [`from_binary`] never panics either, rejects trailing bytes, and pre-allocates at most
//!   a few elements from any length it reads.
//! - **Bounded nesting**: both readers reject input nested deeper than they allow, instead
//!   of overflowing the stack. The text parser counts one level per op_array (main script
//!   and functions at 0, methods at 1, each dynamic_func_def one more), and from there one
//!   per array element, constant AST node, AST zval and type list entry; the deepest level
//!   is [`MAX_DEPTH`]. Op_arrays themselves nest at most [`MAX_FUNC_NESTING`] deep (main,
//!   function or method = 1). The binary reader applies the same limits (it may take one
//!   level more inside methods), so every script the text parser accepts also decodes from
//!   binary. At the limits, parsing needs about 0.75 MB of stack and binary decoding about
//!   1.7 MB in debug builds (so both fit a default 2 MB thread), under 0.3 MB in release
//!   builds.
//!
//! # The text form
//!
//! An example (`src/zop/example.zop`, exactly as the printer writes it):
//!
#![doc = concat!("```text\n", include_str!("example.zop"), "```")]
//!
//! The text is line oriented: one item per line, blocks open with `{` at the end of a line
//! and close with a line holding `}`. Blanks and indentation are free; `;` starts a comment
//! that runs to the end of the line (outside strings). Lexical forms:
//!
//! - numbers: decimal, or hexadecimal with `0x`; signed only where a value is an `i64`.
//! - STRING: `"..."` holding bytes. Escapes: `\\`, `\"`, `\n`, `\r`, `\t`, `\xHH`; any other
//!   backslash is a plain backslash (as in PHP, so `"Foo\Bar"` reads as written). The printer
//!   writes printable ASCII as is and every other byte as `\xHH`.
//! - NAME (variables, arguments, properties, static variables): `$ident`, or a STRING when
//!   the name is not an ASCII identifier.
//! - `key=value` pairs take no blanks around `=`; they may come in any order.
//!
//! Values:
//!
//! ```text
//! LITERAL := null | bool(true) | bool(false) | int(-5) | float(DOUBLE) | string(STRING)
//!          | array(KEY => LITERAL, ... [, next=N]) KEY := integer | STRING
//!            next=N: nNextFreeElement, printed only when it is not the usual one
//!            (0 when empty, else one past the greatest integer key, ZEND_LONG_MIN
//!            without one), as after an unset or when an empty array got negative keys
//!          | AST
//! DOUBLE  := what Rust's f64 parser reads (2.5, -0.0, 1e300, inf, NaN), optionally
//!            followed by :0x<16 hex digits> giving the exact bits (printed only when the
//!            decimal does not give them back: NaN payloads, negative NaN)
//! AST     := ast(KIND [attr=N] [line=N] = LITERAL)      zval / constant-name nodes
//!          | ast(KIND [attr=N] [line=N] [CHILD, ...])  CHILD := AST | _   (absent child)
//!            KIND := a zend_ast_kind name without ZEND_AST_ (ZVAL, CONST, BINARY_OP,
//!            CLASS_CONST, ...) or its number
//! TYPE    := type(MASK) | type(MASK STRING) | type(MASK [TYPE, ...])
//!            MASK is the raw zend_type type_mask (printed as 0x%08x); STRING is the class
//!            name (_ZEND_TYPE_NAME_BIT), the list a union/intersection list
//! ATTRIBUTE := #[STRING(ARG, ...) lc=STRING flags=N line=N offset=N]
//!            ARG := [IDENT: | STRING:] LITERAL; the argument list is left out when empty,
//!            lc when it is the ASCII-lowercased name, flags and offset when 0
//! ```
//!
//! The file:
//!
//! ```text
//! zop 1                      format version (optional; 1 is the only version)
//! script STRING              the script's filename; before any block
//! halt_offset N              compiler_halt_offset (__COMPILER_HALT_OFFSET__), once, before
//!                            any block (absent: None, no __halt_compiler())
//! warning TYPE LINE STRING STRING   a diagnostic recorded while compiling (error type,
//!                            line, file, message), in order, before any block
//! early_binding STRING STRING STRING   a delayed early binding of the main op_array as
//!                            compiled (class lcname, runtime definition key, parent
//!                            lcname), in order, before any block
//! main { OPARRAY }           the main op_array, once
//! function STRING { OPARRAY }   function_table entries in order (STRING is the key)
//! class STRING { CLASS }        class_table entries in order (STRING is the key)
//! ```
//!
//! OPARRAY lines (the printer writes them in this order; literals, `vars` and `lines` must
//! come before the ops that use them):
//!
//! ```text
//! name STRING                function_name (absent: None, the main script)
//! scope STRING               scope (absent: None)
//! kind user|eval|internal|N  type_ (absent: user)
//! flags N                    fn_flags; the comment names the ZEND_ACC_* bits
//! args N required M          num_args, required_num_args
//! arg [NAME] [TYPE] [default=STRING]      one per arg_info entry (the comment shows the
//!                                          type, send mode and variadic/promoted bits)
//! return [NAME] [TYPE] [default=STRING]   return_info (absent: None)
//! ATTRIBUTE                  one per attribute
//! T N                        number of TMP/VAR slots
//! cache_size N
//! vars NAME...               CV names, CV0 first (more `vars` lines append)
//! statics                    static_variables is Some (absent: None) ...
//! static NAME = LITERAL      ... and its entries in order
//! live_range N KIND START END   var (slot number), tmpvar|loop|silence|rope|new|N, ops
//! try_catch TRY [catch=N] [finally=N] [finally_end=N]   absent parts are None
//! file STRING                filename (absent: the script's filename)
//! lines START END            line_start, line_end
//! doc STRING                 doc_comment
//! #N = LITERAL [extra=U]     the literal table, N counting from 0; extra: the literal's
//!                            non-zero u2 (Z_EXTRA: ZEND_EXTRA_VALUE, RECV_INIT cache slot)
//! NNNN OP                    the ops, NNNN counting from 0
//! dynamic_func_def N { OPARRAY }   dynamic_func_defs, N counting from 0
//! ```
//!
//! An op line is `NNNN [RESULT =] OPCODE [OP1 [OP2 [EXT]]] [key=value...]`:
//!
//! - OPCODE is the name without `ZEND_` (`Opcode::short_name`; the parser also takes the
//!   full name). Opcode numbers PHP 8.2 does not define print as `OP_<n>` and parse back
//!   (any `OP_<n>` with n <= 255 is accepted, defined or not).
//! - Operands: `T5` (TMP_VAR, slot number), `V5` (VAR), `CV2($name)` (CV; the name is
//!   optional, checked against `vars` when given), `#3:LITERAL` (CONST: literal index; the
//!   value after `:` is optional, checked against the literal table when given, and
//!   `array(...)` / `ast(...)` stand for any array / AST; the printer abbreviates non-empty
//!   arrays and ASTs that way), `_` (UNUSED with raw value 0).
//! - Unused operands with a nonzero raw value and jump targets: in a slot the opcode's VM
//!   flags mark as a jump address (`ZEND_VM_OP_JMP_ADDR`), a bare number is a jump target
//!   (`JMPZ T6 0005`) and an unused raw value is written `num(N)`; in any other slot a bare
//!   number is the raw unused value (`RECV 1`) and a jump target is written `@0005`.
//! - Trailing `_` operands are left out. EXT is shown positionally only for opcodes whose
//!   extended_value is a jump target (FE_FETCH_R/RW: `FE_FETCH_R V2 CV1($v) 0009`).
//! - Keys: `ext=N` (extended_value, printed when nonzero and not positional), `result=N`
//!   (result unused with a nonzero raw value), `smart=jmpz|jmpnz` (smart branch bits of
//!   result_type), `line=N` (lineno; printed only when it differs from the previous op's
//!   line, or for the first op from `lines` START; absent means "same as before").
//!
//! CLASS lines:
//!
//! ```text
//! name STRING                parent STRING              flags N (ZEND_ACC_* comment)
//! refcount N (absent: 1)     file STRING (absent: the script's)    lines START END
//! doc STRING                 enum_backing_type N (absent: 0)       ATTRIBUTE
//! interface STRING [lc=STRING]        trait STRING [lc=STRING]  (lc absent: lowercased)
//! trait_alias STRING [class=STRING] [as=STRING] [modifiers=N]
//! trait_precedence STRING [class=STRING] [insteadof=[STRING, ...]]
//! const STRING = LITERAL [flags=N] [ce=STRING] [doc=STRING] [ATTRIBUTE...]
//! property NAME [flags=N] [offset=N] [TYPE] [default=LITERAL] [ce=STRING] [doc=STRING]
//!          [ATTRIBUTE...]      (no default: the slot is IS_UNDEF)
//! method STRING { OPARRAY }  the method table in order (STRING is the key)
//! ```
//!
//! `ce=` (declaring class) is absent when it is the class itself.
//!
//! # The binary form
//!
//! `ZOPBIN\0` and a format version byte (see `BINARY_MAGIC`), followed by the bincode
//! (fixint, little endian) encoding of the [`Script`]; see [`to_binary`] and
//! [`from_binary`].

mod binary;
mod names;
mod parse;
mod print;

pub use parse::{parse, parse_named, ParseError, MAX_DEPTH, MAX_FUNC_NESTING};
pub use print::print;

use crate::model::Script;
use bincode::Options;

/// Magic prefix of the binary form, followed by a format version.
/// Version 2: [`Script::compiler_halt_offset`]. Version 3: arrays' `nNextFreeElement`.
/// Version 4: [`Script::warnings`]. Version 5: [`Script::early_bindings`]. Version 6:
/// [`ClassEntry::method_stubs`](crate::model::ClassEntry::method_stubs).
const BINARY_MAGIC: &[u8; 8] = b"ZOPBIN\x00\x06";

/// Why a binary `.zop` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BinaryError {
    #[error("not a binary .zop file (bad magic)")]
    BadMagic,
    #[error("corrupt binary .zop: {0}")]
    Decode(#[from] bincode::Error),
}

fn bincode_options() -> impl Options {
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_little_endian()
}

/// Encodes a script in the binary form.
pub fn to_binary(script: &Script) -> Vec<u8> {
    let mut out = BINARY_MAGIC.to_vec();
    bincode_options()
        .serialize_into(&mut out, script)
        .expect("serializing to a Vec cannot fail");
    out
}

/// Decodes the binary form. Rejects a bad magic, trailing bytes, values nested deeper than
/// the text form allows ([`MAX_DEPTH`]) and any malformed body, without panicking and without allocating
/// far beyond the input's size.
pub fn from_binary(bytes: &[u8]) -> Result<Script, BinaryError> {
    let body = bytes
        .strip_prefix(BINARY_MAGIC)
        .ok_or(BinaryError::BadMagic)?;
    let seed = binary::LimitedSeed::<Script> {
        _marker: std::marker::PhantomData,
    };
    Ok(bincode_options()
        .reject_trailing_bytes()
        .with_limit(body.len() as u64)
        .deserialize_seed(seed, body)?)
}
