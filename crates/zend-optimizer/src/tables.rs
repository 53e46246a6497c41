//! The optimizer's tables of the running PHP (`php -n` with OPcache, see
//! [`crate::environment`]), for a caller that compares them with the process it optimizes
//! for and describes the differences in an [`crate::environment::Process`].

use zend_ir::Literal;

use crate::helpers::internal_table as t;

/// The constants the optimizer folds, with their values.
pub fn constants() -> impl Iterator<Item = (&'static [u8], Literal)> {
    t::CONSTANTS.iter().map(|&(name, v)| (name, v.literal()))
}

/// The internal functions, lowercased.
pub fn functions() -> impl Iterator<Item = &'static [u8]> {
    t::FUNCTIONS.iter().map(|&(name, _)| name)
}

/// The methods of internal classes, as `lcclass::lcmethod`.
pub fn methods() -> impl Iterator<Item = &'static [u8]> {
    t::METHODS.iter().map(|&(key, _)| key)
}

/// The loaded modules, lowercased.
pub fn modules() -> impl Iterator<Item = &'static [u8]> {
    t::MODULES.iter().copied()
}

/// The INI_SYSTEM entries `ini_get()` folds, with their values.
pub fn ini_system() -> impl Iterator<Item = (&'static [u8], Option<&'static [u8]>)> {
    t::INI_SYSTEM.iter().copied()
}
