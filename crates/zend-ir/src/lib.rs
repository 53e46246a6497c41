//! The op_array model of PHP 8.2 (Zend Engine 4.2) and its text forms.
//!
//! Mirrors zend_compile.h (op_arrays, zend_op, operands, literals, classes), zend_vm_opcodes.h
//! (the opcode table, generated from the 8.2 binary), zend_type_info.h (MAY_BE_* masks) and
//! zend_dump.c (the dump text PHP prints at `opcache.opt_debug_level`), and what the
//! optimizer knows of the PHP process beyond the script: the internal classes of `php -n`
//! and how another process differs ([`environment`]).
//!
//! Guarantees: a [`Script`] recorded from PHP holds everything needed to rebuild its
//! op_arrays; the `.zop` text form round-trips it exactly (`parse(print(s)) == s`); the dump
//! printer produces PHP's own bytes for the same op_array.

pub mod corpus;
pub mod dump;
pub mod environment;
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
#[inline]
pub fn internal_class(lcname: &[u8]) -> Option<&'static str> {
    // Most names asked are no internal class (the classes of the script's project): a bit
    // per (length, first and last byte) of the internal names, set at compile time, turns
    // most of them away here, where the caller inlines it, before the name is hashed.
    let bit = class_filter_bit(lcname);
    if INTERNAL_CLASS_FILTER[bit / 64] & (1 << (bit % 64)) == 0 {
        return added_class_name(lcname);
    }
    internal_class_by_hash(lcname).or_else(|| added_class_name(lcname))
}

/// A class of the process optimized for that the tables do not have (an extension's).
#[inline]
fn added_class_name(lcname: &[u8]) -> Option<&'static str> {
    environment::added_class(lcname).map(|c| &*c.name)
}

/// The lowercased names of the classes, interfaces and traits of the tables (`php -n`), for
/// a caller comparing them with the process it optimizes for.
pub fn table_internal_classes() -> impl Iterator<Item = &'static [u8]> {
    internal_classes::INTERNAL_CLASSES
        .iter()
        .map(|(lc, _)| lc.as_bytes())
}

const CLASS_FILTER_WORDS: usize = 64;

#[inline]
const fn class_filter_bit(lcname: &[u8]) -> usize {
    let (first, last) = match lcname {
        [] => (0, 0),
        [first, .., last] => (*first as usize, *last as usize),
        [only] => (*only as usize, *only as usize),
    };
    (lcname.len().wrapping_mul(257) ^ first.wrapping_mul(31) ^ last) % (CLASS_FILTER_WORDS * 64)
}

static INTERNAL_CLASS_FILTER: [u64; CLASS_FILTER_WORDS] = {
    let mut filter = [0; CLASS_FILTER_WORDS];
    let classes = internal_classes::INTERNAL_CLASSES;
    let mut i = 0;
    while i < classes.len() {
        let bit = class_filter_bit(classes[i].0.as_bytes());
        filter[bit / 64] |= 1 << (bit % 64);
        i += 1;
    }
    filter
};

/// [`internal_class`] past its filter. Asked for every class name a script does not
/// declare, often the same few: one hash probe instead of a binary search's string
/// comparisons.
#[inline(never)]
fn internal_class_by_hash(lcname: &[u8]) -> Option<&'static str> {
    type Names = std::collections::HashMap<
        &'static [u8],
        &'static str,
        std::hash::BuildHasherDefault<rustc_hash::FxHasher>,
    >;
    static NAMES: std::sync::OnceLock<Names> = std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| {
            internal_classes::INTERNAL_CLASSES
                .iter()
                .map(|&(lc, name)| (lc.as_bytes(), name))
                .collect()
        })
        .get(lcname)
        .copied()
}

/// Calls `f` with `name` lowercased (ASCII, as PHP's `zend_str_tolower`), on the stack when
/// it is short, as class names are: lookups by lowercased name make no allocation.
#[inline]
pub fn with_ascii_lowercase<R>(name: &[u8], f: impl FnOnce(&[u8]) -> R) -> R {
    let mut buf = [0u8; 64];
    match buf.get_mut(..name.len()) {
        Some(lc) => {
            lc.copy_from_slice(name);
            lc.make_ascii_lowercase();
            f(lc)
        }
        None => f(&name.to_ascii_lowercase()),
    }
}

/// A public property of an internal class, as `zend_fetch_prop_info` finds it in the
/// class's `properties_info`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalProperty {
    /// `ZEND_ACC_*` flags.
    pub flags: u32,
    /// The declared type (`type_mask` 0: untyped).
    pub type_: ZendType,
}

/// The public property `name` of the internal class `lcname` (lowercased), inherited ones
/// included, as PHP 8.2 declares it: what type inference reads for `$obj->name` when `$obj`
/// is known to be of that class. Only public properties: no script's code has an internal
/// class as its scope, so `lookup_prop_info` gives it no other.
pub fn internal_property(lcname: &[u8], name: &[u8]) -> Option<&'static InternalProperty> {
    type Properties = std::collections::HashMap<
        &'static [u8],
        Vec<(&'static [u8], InternalProperty)>,
        std::hash::BuildHasherDefault<rustc_hash::FxHasher>,
    >;
    static PROPERTIES: std::sync::OnceLock<Properties> = std::sync::OnceLock::new();
    let properties = PROPERTIES.get_or_init(|| {
        let mut by_class = Properties::default();
        for &(class, prop, flags, type_mask, type_name) in internal_classes::INTERNAL_PROPERTIES {
            let names = match type_name {
                Some(n) => TypeNames::Name(PhpStr(n.as_bytes().to_vec())),
                None => TypeNames::None,
            };
            let type_ = ZendType { type_mask, names };
            by_class
                .entry(class.as_bytes())
                .or_default()
                .push((prop.as_bytes(), InternalProperty { flags, type_ }));
        }
        by_class
    });
    match properties.get(lcname) {
        Some(of_class) => of_class.iter().find(|(n, _)| *n == name).map(|(_, p)| p),
        None => environment::added_class(lcname)?.properties.get(name),
    }
}
