//! The PHP process zopt optimizes for, as the optimizer sees it.
//!
//! zopt's optimizer folds what OPcache's reads from the running PHP (persistent constants,
//! internal functions, classes and methods, loaded modules, INI entries) from tables
//! generated with `php -n` (see `zend_ir::environment`). This process differs: another
//! SAPI (`PHP_CONFIG_FILE_PATH`, no pcntl under Debian's php-fpm), php.ini values,
//! `disable_functions`, `disable_classes`, `enable_dl`, and the extensions it loads. At the
//! end of PHP's startup (or when `dl()` loads zopt, later) every entry of the tables is
//! compared with this PHP, what only this PHP has is read from its tables the way OPcache's
//! optimizer reads them (arginfo, class entries, module entries), and the differences are
//! installed: the optimizer then folds what this process folds. By then PHP has applied
//! `disable_functions` (the functions are gone from the function table) and
//! `disable_classes` (`zend_disable_class` empties the class's method table): the tables
//! read here show both.

use std::collections::{HashMap, HashSet};
use std::ptr;

use std::ffi::{c_char, CStr};

use zend_ir::environment::{Class, Function, Ini};
use zend_ir::{InternalProperty, Literal, PhpDouble, PhpStr, TypeNames, ZendType};
use zend_optimizer::environment::Process;

use crate::php::{self, z_dval_bits, z_lval, z_type, z_u2, HashKey, Interfaces, Reader};

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
    // The description names every module this process loads beside the tables'.
    zend_optimizer::environment::set_modules_are_tables(true);
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
    // Each with its value when folded, and whether it is flagged CONST_NO_FILE_CACHE.
    let mut constants: HashMap<&[u8], (Option<Literal>, bool)> = HashMap::new();
    if let Some(table) = r.deref((*eg).zend_constants) {
        for (key, zv) in r.hash(table) {
            let (HashKey::Str(name), Some(c)) = (key, r.z_ptr_as::<php::zend_constant>(zv)) else {
                continue;
            };
            let flags = z_u2(&c.value) & 0xff;
            let folded = flags & php::CONST_PERSISTENT != 0 && flags & php::CONST_DEPRECATED == 0;
            let value = folded.then(|| scalar(r, &c.value)).flatten();
            constants.insert(name, (value, flags & php::CONST_NO_FILE_CACHE != 0));
        }
    }
    let mut of_tables = HashSet::new();
    for (name, value) in zend_optimizer::tables::constants() {
        of_tables.insert(name);
        match constants.get(name) {
            Some((Some(here), _)) if *here == value => {}
            Some((here, _)) => process.constant(name, here.clone()),
            None => process.constant(name, None),
        }
    }
    for (name, (value, no_file_cache)) in &constants {
        let Some(value) = value.as_ref().filter(|_| !of_tables.contains(name)) else {
            continue;
        };
        process.constant(name, Some(value.clone()));
        if *no_file_cache {
            process.no_file_cache(name);
        }
    }

    let mut functions: HashMap<&[u8], &php::zend_function> = HashMap::new();
    if let Some(table) = r.deref((*cg).function_table) {
        for (key, zv) in r.hash(table) {
            if let (HashKey::Str(name), Some(f)) = (key, r.z_ptr_as::<php::zend_function>(zv)) {
                functions.insert(name, f);
            }
        }
    }
    let of_tables: HashSet<&[u8]> = zend_optimizer::tables::functions().collect();
    for name in &of_tables {
        if !functions.contains_key(name) {
            process.missing_function(name);
        }
    }
    for (name, f) in &functions {
        if !of_tables.contains(name) && r.function(f).0 == php::ZEND_INTERNAL_FUNCTION as u8 {
            process.added_function(name, internal_function(r, f, None));
        }
    }

    // Each class's methods, for the tables' methods; the classes the tables lack, whole.
    let mut classes: HashMap<&[u8], HashSet<&[u8]>> = HashMap::new();
    let of_tables: HashSet<&[u8]> = zend_ir::table_internal_classes().collect();
    if let Some(table) = r.deref((*cg).class_table) {
        for (key, zv) in r.hash(table) {
            let (HashKey::Str(lc), Some(ce)) = (key, r.z_ptr_as::<php::zend_class_entry>(zv))
            else {
                continue;
            };
            classes.insert(lc, keys(r, &ce.function_table));
            if !of_tables.contains(lc) && ce.type_ == php::ZEND_INTERNAL_CLASS as c_char {
                process.added_class(lc, internal_class(r, ce));
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

    let mut modules: HashMap<&[u8], &[u8]> = HashMap::new();
    for (key, zv) in r.hash(&*ptr::addr_of!(php::module_registry)) {
        if let (HashKey::Str(name), Some(m)) = (key, r.z_ptr_as::<php::zend_module_entry>(zv)) {
            let version = if m.version.is_null() {
                &[][..]
            } else {
                CStr::from_ptr(m.version).to_bytes()
            };
            modules.insert(name, version);
        }
    }
    let of_tables: HashSet<&[u8]> = zend_optimizer::tables::modules().collect();
    for name in &of_tables {
        if !modules.contains_key(name) {
            process.missing_module(name);
        }
    }
    for (name, version) in &modules {
        if !of_tables.contains(name) {
            process.added_module(name, version);
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
    let mut of_tables = HashSet::new();
    for (name, value) in zend_optimizer::tables::ini_system() {
        of_tables.insert(name);
        match ini.get(name) {
            Some(Some(here)) if *here == value => {}
            Some(Some(here)) => process.ini(name, Ini::System(*here)),
            Some(None) => process.ini(name, Ini::Other),
            None => process.ini(name, Ini::Missing),
        }
    }
    // With dl() disabled PHP folds `ini_get()` of an entry it does not have to false: then
    // every entry that is not folded is listed, so that the optimizer knows the rest are
    // missing.
    let enable_dl = match ini.get(&b"enable_dl"[..]) {
        Some(Some(v)) => zend_optimizer::helpers::zend_ini_parse_bool(v.unwrap_or(b"")),
        _ => true,
    };
    for (name, value) in &ini {
        if of_tables.contains(name) {
            continue;
        }
        match value {
            Some(value) if !set_per_run(name) => process.ini(name, Ini::System(*value)),
            _ if !enable_dl => process.ini(name, Ini::Other),
            _ => {}
        }
    }
    process
}

/// Entries whose value a run sets for itself, so that `ini_get()` of them is not folded
/// (as tools/gen-optimizer-tables.php leaves them out of the tables): zopt's own, and
/// OPcache's optimization and debug levels, file cache and JIT buffer. A cache filled by
/// `zopt cache warm` serves a server whatever these are there.
fn set_per_run(name: &[u8]) -> bool {
    name.starts_with(b"zopt.")
        || matches!(
            name,
            b"opcache.optimization_level"
                | b"opcache.opt_debug_level"
                | b"opcache.file_cache"
                | b"opcache.jit_buffer_size"
        )
}

/// An internal function as the optimizer's tables describe one (see
/// `zend_ir::environment::Function`), from its arginfo as `zend_register_functions` left it
/// (class names as `zend_string`s).
/// `scope`: the class of a method (its flags are those of methods, a `self` return type
/// names it).
fn internal_function(r: Reader<'_>, f: &php::zend_function, scope: Option<&str>) -> Function {
    // SAFETY: every zend_function variant starts with the common header.
    let common = unsafe { &f.common };
    let flags = common.fn_flags;
    let variadic = flags & php::ZEND_ACC_VARIADIC != 0;
    let declared = common.num_args as usize + usize::from(variadic);
    let (args, ret) = if common.arg_info.is_null() {
        (&[][..], None)
    } else {
        // SAFETY: an internal function's arginfo is one element longer, before the
        // pointer: the return type (zend_register_functions).
        let ret = r.deref(unsafe { common.arg_info.sub(1) });
        (r.slice(common.arg_info, declared).unwrap_or(&[]), ret)
    };
    // ZEND_ARG_SEND_MODE: two bits above the type's.
    let modes: Box<[u8]> = args
        .iter()
        .map(|a| b'0' + ((a.type_.type_mask >> php::_ZEND_TYPE_EXTRA_FLAGS_SHIFT) & 3) as u8)
        .collect();
    let by_ref = flags & php::ZEND_ACC_RETURN_REFERENCE != 0;
    let mut returns = None;
    let mut return_class = None;
    let mut tentative = false;
    if let Some(ret) = ret.filter(|_| flags & php::ZEND_ACC_HAS_RETURN_TYPE != 0) {
        let t = &ret.type_;
        returns = Some(zend_ir::types::convert_type_mask(t.type_mask));
        // ZEND_ARG_TYPE_IS_TENTATIVE (_ZEND_IS_TENTATIVE_BIT, Zend/zend_compile.h).
        tentative = t.type_mask & (1 << (php::_ZEND_TYPE_EXTRA_FLAGS_SHIFT + 4)) != 0;
        if t.type_mask & php::_ZEND_TYPE_NAME_BIT != 0
            && t.type_mask & php::_ZEND_TYPE_LIST_BIT == 0
        {
            return_class = r.str(t.ptr.cast()).map(|n| match scope {
                Some(class) if n.eq_ignore_ascii_case(b"self") => class.into(),
                _ => String::from_utf8_lossy(n).into(),
            });
        }
    }
    if by_ref {
        // zend_get_return_info_from_signature_only: a reference of the declared type.
        // (An unset type converts to anything.)
        let declared = returns.unwrap_or(zend_ir::types::convert_type_mask(0));
        returns = Some(declared | zend_ir::MayBe::REF.bits());
        return_class = None;
    }
    // The flags the tables hold (tools/gen-optimizer-tables.php).
    let kept = if scope.is_some() {
        php::ZEND_ACC_PPP_MASK
            | php::ZEND_ACC_STATIC
            | php::ZEND_ACC_FINAL
            | php::ZEND_ACC_ABSTRACT
            | php::ZEND_ACC_DEPRECATED
            | php::ZEND_ACC_VARIADIC
    } else {
        php::ZEND_ACC_DEPRECATED | php::ZEND_ACC_VARIADIC | php::ZEND_ACC_RETURN_REFERENCE
    };
    let value = if scope.is_none() && flags & php::ZEND_ACC_COMPILE_TIME_EVAL != 0 {
        // SAFETY: `f` is an internal function (the caller checked its type).
        unsafe { compile_time_value(f, returns) }
    } else {
        None
    };
    Function {
        flags: flags & kept,
        num_args: common.num_args,
        modes,
        returns,
        return_class,
        tentative,
        value,
    }
}

/// What PHP's SCCP would compute for a call without arguments of `f`, a function that
/// lets it (`@compile-time-eval`): gd's `imagetypes()`, the only such function of PHP
/// 8.2's extensions outside the tables. Only for a function without parameters whose
/// declared return type holds no refcounted value: called here, at the end of startup, as
/// SCCP calls it, on a frame of no arguments, nothing it returns needs releasing.
///
/// # Safety
/// `f` is an internal function of this PHP, whose startup is complete.
unsafe fn compile_time_value(f: &php::zend_function, returns: Option<u32>) -> Option<Literal> {
    use zend_ir::MayBe;
    let refcounted =
        (MayBe::STRING | MayBe::ARRAY | MayBe::OBJECT | MayBe::RESOURCE | MayBe::REF).bits();
    let common = &f.common;
    if common.num_args != 0
        || common.fn_flags & php::ZEND_ACC_VARIADIC != 0
        || !returns.is_some_and(|t| t & refcounted == 0)
    {
        return None;
    }
    let handler = f.internal_function.handler?;
    // ZEND_PARSE_PARAMETERS_NONE reads the argument count (0 in a zeroed frame); `func`
    // lets an error name the function.
    let mut frame: php::zend_execute_data = std::mem::zeroed();
    frame.func = (f as *const php::zend_function).cast_mut();
    let mut result: php::zval = std::mem::zeroed();
    handler(&mut frame, &mut result);
    match u32::from(z_type(&result)) {
        php::IS_NULL | php::IS_FALSE | php::IS_TRUE | php::IS_LONG | php::IS_DOUBLE => {
            scalar(Reader::new(), &result)
        }
        _ => None,
    }
}

/// An internal class as the optimizer's tables describe one (see
/// `zend_ir::environment::Class`).
fn internal_class(r: Reader<'_>, ce: &php::zend_class_entry) -> Class {
    let text = |b: &[u8]| -> Box<str> { String::from_utf8_lossy(b).into() };
    let lc_name =
        |c: &php::zend_class_entry| text(&r.str(c.name).unwrap_or_default().to_ascii_lowercase());
    let name = text(r.str(ce.name).unwrap_or_default());
    let mut ancestors: Vec<Box<str>> = Vec::new();
    // An internal class is registered linked: its parent and interfaces are entries
    // (ZEND_ACC_RESOLVED_PARENT, ZEND_ACC_RESOLVED_INTERFACES), its interfaces the
    // inherited ones too.
    // SAFETY: both views of the union are pointers; internal classes use `parent`.
    let mut parent = r.deref(unsafe { ce.__bindgen_anon_1.parent });
    let parent_name = parent.and_then(|p| r.str(p.name)).map(text);
    while let Some(p) = parent {
        ancestors.push(lc_name(p));
        // SAFETY: as above.
        parent = r.deref(unsafe { p.__bindgen_anon_1.parent });
    }
    if let Some(Interfaces::Resolved(list)) = r.interfaces(ce) {
        for i in list.iter().filter_map(|&i| r.deref(i)) {
            ancestors.push(lc_name(i));
        }
    }
    ancestors.sort();
    ancestors.dedup();
    let mut class = Class {
        name,
        parent: parent_name,
        ancestors,
        ..Class::default()
    };
    for (key, zv) in r.hash(&ce.constants_table) {
        let (HashKey::Str(cname), Some(c)) = (key, r.z_ptr_as::<php::zend_class_constant>(zv))
        else {
            continue;
        };
        // ZEND_CLASS_CONST_FLAGS: public, and no enum case (ZEND_CLASS_CONST_IS_CASE).
        let flags = z_u2(&c.value);
        if flags & php::ZEND_ACC_PUBLIC != 0 && flags & (1 << 6) == 0 {
            if let Some(v) = scalar(r, &c.value) {
                class.constants.insert(cname.into(), v);
            }
        }
    }
    for (key, zv) in r.hash(&ce.function_table) {
        if let (HashKey::Str(lcm), Some(f)) = (key, r.z_ptr_as::<php::zend_function>(zv)) {
            let f = internal_function(r, f, Some(&class.name));
            class.methods.insert(lcm.into(), f);
        }
    }
    for (key, zv) in r.hash(&ce.properties_info) {
        let (HashKey::Str(pname), Some(p)) = (key, r.z_ptr_as::<php::zend_property_info>(zv))
        else {
            continue;
        };
        if p.flags & php::ZEND_ACC_PUBLIC == 0 {
            continue;
        }
        let mask = p.type_.type_mask;
        let named = mask & php::_ZEND_TYPE_NAME_BIT != 0;
        let names = match named.then(|| r.str(p.type_.ptr.cast())).flatten() {
            Some(n) => TypeNames::Name(PhpStr(n.to_vec())),
            None => TypeNames::None,
        };
        let type_mask = mask
            & (php::_ZEND_TYPE_MAY_BE_MASK | php::_ZEND_TYPE_NAME_BIT | php::_ZEND_TYPE_LIST_BIT);
        let flags =
            p.flags & (php::ZEND_ACC_PPP_MASK | php::ZEND_ACC_STATIC | php::ZEND_ACC_READONLY);
        let type_ = ZendType { type_mask, names };
        class
            .properties
            .insert(pname.into(), InternalProperty { flags, type_ });
    }
    class
}
