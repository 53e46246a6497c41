//! The PHP process zopt optimizes for, as the optimizer sees it.
//!
//! zopt's optimizer folds what OPcache's reads from the running PHP (persistent constants,
//! internal functions and methods, loaded modules, INI_SYSTEM entries) from tables
//! generated with `php -n` (see `zend_optimizer::environment`). This process may differ:
//! another SAPI (`PHP_CONFIG_FILE_PATH`, no pcntl under Debian's php-fpm), php.ini values,
//! `disable_functions`, `disable_classes`. At the end of PHP's startup (or when `dl()`
//! loads zopt, later) every entry of the tables is compared with this PHP and the
//! differences are installed, so that nothing is folded here that this process would not
//! give. By then PHP has applied `disable_functions` (the functions are gone from the
//! function table) and `disable_classes` (`zend_disable_class` empties the class's method
//! table): the tables read here show both.

use std::collections::{HashMap, HashSet};
use std::ptr;

use zend_ir::{Literal, PhpDouble, PhpStr};
use zend_optimizer::environment::Process;

use crate::php::{self, z_dval_bits, z_lval, z_type, z_u2, HashKey, Reader};

/// The string keys of a hash table.
fn keys<'a>(r: Reader<'a>, ht: &'a php::HashTable) -> HashSet<&'a [u8]> {
    r.hash(ht)
        .into_iter()
        .filter_map(|(k, _)| match k {
            HashKey::Str(s) => Some(s),
            HashKey::Long(_) => None,
        })
        .collect()
}

/// A constant's value as the optimizer folds it, if it is a scalar.
fn scalar(r: Reader<'_>, zv: &php::zval) -> Option<Literal> {
    Some(match u32::from(z_type(zv)) {
        php::IS_NULL => Literal::Null,
        php::IS_FALSE => Literal::False,
        php::IS_TRUE => Literal::True,
        php::IS_LONG => Literal::Long(z_lval(zv)),
        php::IS_DOUBLE => Literal::Double(PhpDouble(z_dval_bits(zv))),
        php::IS_STRING => Literal::String(PhpStr(r.z_str(zv)?.to_vec())),
        _ => return None,
    })
}

static DIFFERENCES: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Installs `process` for the optimizer; returns its differences, one per line (empty
/// when this process is the tables'), as [`differences`] will.
pub fn install(process: Process) -> &'static str {
    let described = process.describe();
    let _ = zend_optimizer::environment::install(process);
    DIFFERENCES.get_or_init(|| described)
}

/// How this process differs from the optimizer's tables, one difference per line, for
/// `zopt_get_configuration()`.
pub fn differences() -> &'static str {
    DIFFERENCES.get().map_or("", String::as_str)
}

/// How this process differs from the optimizer's tables.
///
/// # Safety
/// Called on PHP's thread once its startup is complete (the global tables are final) and
/// nothing changes them meanwhile.
pub unsafe fn this_process() -> Process {
    let r = Reader::new();
    let eg = ptr::addr_of!(php::executor_globals);
    let cg = ptr::addr_of!(php::compiler_globals);
    let mut process = Process::default();

    // Constants: `zend_optimizer_get_persistent_constant` folds a persistent one that is not
    // deprecated.
    let mut constants: HashMap<&[u8], Option<Literal>> = HashMap::new();
    if let Some(table) = r.deref((*eg).zend_constants) {
        for (key, zv) in r.hash(table) {
            let (HashKey::Str(name), Some(c)) = (key, r.z_ptr_as::<php::zend_constant>(zv)) else {
                continue;
            };
            let flags = z_u2(&c.value) & 0xff;
            let folded = flags & php::CONST_PERSISTENT != 0 && flags & php::CONST_DEPRECATED == 0;
            constants.insert(name, folded.then(|| scalar(r, &c.value)).flatten());
        }
    }
    for (name, value) in zend_optimizer::tables::constants() {
        match constants.get(name) {
            Some(Some(here)) if *here == value => {}
            Some(here) => process.constant(name, here.clone()),
            None => process.constant(name, None),
        }
    }

    let functions = r.deref((*cg).function_table).map(|t| keys(r, t));
    for name in zend_optimizer::tables::functions() {
        if !functions.as_ref().is_some_and(|f| f.contains(name)) {
            process.missing_function(name);
        }
    }

    let mut classes: HashMap<&[u8], HashSet<&[u8]>> = HashMap::new();
    if let Some(table) = r.deref((*cg).class_table) {
        for (key, zv) in r.hash(table) {
            if let (HashKey::Str(name), Some(ce)) = (key, r.z_ptr_as::<php::zend_class_entry>(zv)) {
                classes.insert(name, keys(r, &ce.function_table));
            }
        }
    }
    for key in zend_optimizer::tables::methods() {
        let Some(at) = key.windows(2).position(|w| w == b"::") else {
            continue;
        };
        let (class, method) = (&key[..at], &key[at + 2..]);
        if !classes.get(class).is_some_and(|m| m.contains(method)) {
            process.missing_method(key);
        }
    }

    let modules = keys(r, &*ptr::addr_of!(php::module_registry));
    for name in zend_optimizer::tables::modules() {
        if !modules.contains(name) {
            process.missing_module(name);
        }
    }

    // `ini_get` is folded for an INI_SYSTEM entry, to its value (empty when it has none).
    let mut ini: HashMap<&[u8], Option<Option<&[u8]>>> = HashMap::new();
    if let Some(table) = r.deref((*eg).ini_directives) {
        for (key, zv) in r.hash(table) {
            let (HashKey::Str(name), Some(entry)) = (key, r.z_ptr_as::<php::zend_ini_entry>(zv))
            else {
                continue;
            };
            let system = u32::from(entry.modifiable) == php::ZEND_INI_SYSTEM;
            ini.insert(name, system.then(|| r.str(entry.value)));
        }
    }
    for (name, value) in zend_optimizer::tables::ini_system() {
        match ini.get(name) {
            Some(Some(here)) if *here == value => {}
            Some(here) => process.ini_system(name, *here),
            None => process.ini_system(name, None),
        }
    }
    process
}
