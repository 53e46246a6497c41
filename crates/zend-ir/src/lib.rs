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
    // probe instead of a binary search's string comparisons. Most names asked are no
    // internal class (the classes of the script's project): a bit per (length, first and
    // last byte) of the internal names turns most of them away before the name is hashed.
    type Names = std::collections::HashMap<
        &'static [u8],
        &'static str,
        std::hash::BuildHasherDefault<rustc_hash::FxHasher>,
    >;
    struct Index {
        names: Names,
        filter: [u64; FILTER_WORDS],
    }
    const FILTER_WORDS: usize = 64;
    fn filter_bit(lcname: &[u8]) -> usize {
        let first = lcname.first().map_or(0, |&b| usize::from(b));
        let last = lcname.last().map_or(0, |&b| usize::from(b));
        (lcname.len().wrapping_mul(257) ^ first.wrapping_mul(31) ^ last) % (FILTER_WORDS * 64)
    }
    static INDEX: std::sync::OnceLock<Index> = std::sync::OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut filter = [0; FILTER_WORDS];
        for (lc, _) in internal_classes::INTERNAL_CLASSES {
            let bit = filter_bit(lc.as_bytes());
            filter[bit / 64] |= 1 << (bit % 64);
        }
        Index {
            names: internal_classes::INTERNAL_CLASSES
                .iter()
                .map(|&(lc, name)| (lc.as_bytes(), name))
                .collect(),
            filter,
        }
    });
    let bit = filter_bit(lcname);
    if index.filter[bit / 64] & (1 << (bit % 64)) == 0 {
        return None;
    }
    index.names.get(lcname).copied()
}
