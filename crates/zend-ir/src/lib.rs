//! The op_array model of PHP 8.2 (Zend Engine 4.2) and its text forms.
//!
//! Mirrors zend_compile.h (op_arrays, zend_op, operands, literals, classes), zend_vm_opcodes.h
//! (the opcode table, generated from the 8.2 binary), zend_type_info.h (MAY_BE_* masks) and
//! zend_dump.c (the dump text PHP prints at `opcache.opt_debug_level`).
//!
//! Guarantees: a [`Script`] recorded from PHP holds everything needed to rebuild its
//! op_arrays; the `.zop` text form round-trips it exactly (`parse(print(s)) == s`); the dump
//! printer produces PHP's own bytes for the same op_array.

pub mod corpus;
pub mod dump;
mod internal_classes;
pub mod model;
pub mod opcode;
mod opcode_table;
pub mod types;
pub mod zop;

pub use model::*;
pub use opcode::{Opcode, OpcodeSet};
pub use types::MayBe;

/// The name of the internal class (interface, trait) PHP 8.2 knows as `lcname` before any
/// script runs, as `php -n` with OPcache loads it: what `zend_optimizer_get_class_entry`
/// finds in `CG(class_table)`.
pub fn internal_class(lcname: &[u8]) -> Option<&'static str> {
    // Asked for every class name a script does not declare, often the same few: one hash
    // probe instead of a binary search's string comparisons.
    type Index = std::collections::HashMap<
        &'static [u8],
        &'static str,
        std::hash::BuildHasherDefault<rustc_hash::FxHasher>,
    >;
    static INDEX: std::sync::OnceLock<Index> = std::sync::OnceLock::new();
    INDEX
        .get_or_init(|| {
            internal_classes::INTERNAL_CLASSES
                .iter()
                .map(|&(lc, name)| (lc.as_bytes(), name))
                .collect()
        })
        .get(lcname)
        .copied()
}
