//! What the optimizer knows of the PHP process it optimizes for, beyond the script: PHP's
//! `module_registry`, which SCCP reads when it calls `phpversion()` at compile time.
//!
//! Like the registry it mirrors, this is process-wide. The optimizer's tables
//! (`internal_table`) hold the modules of `php -n` with OPcache, the PHP every zopt CLI
//! command runs; those modules are built into PHP (or are OPcache itself) and so are loaded
//! in every run. Whether a run loads other, shared extensions (php.ini, `dl()`) is known
//! only inside that run.
//!
//! Guarantees: by default only the tables' modules count as loaded, and nothing is decided
//! about any other one (a call that depends on it stays a call), so the optimizer's answer
//! holds whatever the run loads. A caller that knows the run loads exactly the tables'
//! modules says so with [`set_modules_are_tables`]; SCCP then folds `phpversion()` of any
//! other extension to `false`, as PHP's does.

use std::sync::atomic::{AtomicBool, Ordering};

static MODULES_ARE_TABLES: AtomicBool = AtomicBool::new(false);

/// Declares whether the PHP run loads exactly the modules of the optimizer's tables (as
/// `php -n -d zend_extension=opcache` does).
pub fn set_modules_are_tables(exact: bool) {
    MODULES_ARE_TABLES.store(exact, Ordering::Relaxed);
}

/// Whether a module outside the tables is known not to be loaded.
pub fn modules_are_tables() -> bool {
    MODULES_ARE_TABLES.load(Ordering::Relaxed)
}
