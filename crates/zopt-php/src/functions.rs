//! The PHP functions of the extension, named after OPcache's:
//!
//! - `zopt_get_status(bool $include_scripts = true): array` — this process's counters (hits
//!   served, compiles, ...), the shared-memory segment's (all workers together: memory,
//!   wasted bytes, scripts, hits, misses, full, writer deaths) under `"shm"`, and with
//!   `$include_scripts` each script in shared memory with its hits and size under
//!   `"scripts"`;
//! - `zopt_invalidate(string $file, bool $force = false): bool` — retires the script's
//!   shared-memory entry and file cache entry: with `$force` always, otherwise only when
//!   its source changed (OPcache's rule); true when the cache is on and the file exists,
//!   retired or not, false otherwise (as `opcache_invalidate`);
//! - `zopt_is_script_cached(string $file): bool` — whether the script is in shared memory
//!   (in the file cache when there is no segment);
//! - `zopt_compile_file(string $file): bool` — compiles the script as an include without
//!   running it, so that the cache stores it (or binds its cached functions), as
//!   `opcache_compile_file` does: to prime the cache;
//! - `zopt_reset(): bool` — retires every script in shared memory (each is compiled and
//!   stored again on its next use; false without a segment);
//! - `zopt_get_configuration(): array` — the `zopt.*` settings under `"directives"` and the
//!   versions under `"version"`, as `opcache_get_configuration` lays them out.
//!
//! Arguments are read straight from the call frame (no `zend_parse_parameters`); a missing
//! or mistyped required argument makes the function return `false`.

use std::ffi::{c_char, CStr};
use std::os::unix::ffi::OsStrExt;
use std::panic::catch_unwind;
use std::path::PathBuf;

use zend_ir::model::{ArrayKey, Literal, PhpStr};

use crate::engine::Engine;
use crate::php::{self, zend_execute_data, zend_function_entry, zend_internal_arg_info, zval};
use crate::{cache, FfiCell};

// zend_type_info.h masks for the arginfo.
const MAY_BE_BOOL: u32 = (1 << 2) | (1 << 3);
const MAY_BE_STRING: u32 = 1 << 6;
const MAY_BE_ARRAY: u32 = 1 << 7;

const fn arg(
    name: &'static CStr,
    mask: u32,
    default: Option<&'static CStr>,
) -> zend_internal_arg_info {
    zend_internal_arg_info {
        name: name.as_ptr(),
        type_: php::zend_type {
            ptr: std::ptr::null_mut(),
            type_mask: mask,
        },
        default_value: match default {
            Some(d) => d.as_ptr(),
            None => std::ptr::null(),
        },
    }
}

/// The first arginfo element: the number of required arguments and the return type.
const fn returns(required: usize, mask: u32) -> zend_internal_arg_info {
    zend_internal_arg_info {
        name: required as *const c_char,
        type_: php::zend_type {
            ptr: std::ptr::null_mut(),
            type_mask: mask,
        },
        default_value: std::ptr::null(),
    }
}

static STATUS_ARGS: FfiCell<[zend_internal_arg_info; 2]> = FfiCell::new([
    returns(0, MAY_BE_ARRAY),
    arg(c"include_scripts", MAY_BE_BOOL, Some(c"true")),
]);
static INVALIDATE_ARGS: FfiCell<[zend_internal_arg_info; 3]> = FfiCell::new([
    returns(1, MAY_BE_BOOL),
    arg(c"file", MAY_BE_STRING, None),
    arg(c"force", MAY_BE_BOOL, Some(c"false")),
]);
static IS_CACHED_ARGS: FfiCell<[zend_internal_arg_info; 2]> =
    FfiCell::new([returns(1, MAY_BE_BOOL), arg(c"file", MAY_BE_STRING, None)]);

static COMPILE_FILE_ARGS: FfiCell<[zend_internal_arg_info; 2]> =
    FfiCell::new([returns(1, MAY_BE_BOOL), arg(c"file", MAY_BE_STRING, None)]);
static RESET_ARGS: FfiCell<[zend_internal_arg_info; 1]> = FfiCell::new([returns(0, MAY_BE_BOOL)]);
static CONFIGURATION_ARGS: FfiCell<[zend_internal_arg_info; 1]> =
    FfiCell::new([returns(0, MAY_BE_ARRAY)]);

type Handler = unsafe extern "C" fn(*mut zend_execute_data, *mut zval);

const fn function(
    name: &'static CStr,
    handler: Handler,
    args: *const zend_internal_arg_info,
    num_args: u32,
) -> zend_function_entry {
    zend_function_entry {
        fname: name.as_ptr(),
        handler: Some(handler),
        arg_info: args,
        num_args,
        flags: 0,
    }
}

/// The module's function table, NULL-terminated.
pub static FUNCTIONS: FfiCell<[zend_function_entry; 7]> = FfiCell::new([
    function(
        c"zopt_get_status",
        zopt_get_status,
        STATUS_ARGS.get() as *const zend_internal_arg_info,
        1,
    ),
    function(
        c"zopt_invalidate",
        zopt_invalidate,
        INVALIDATE_ARGS.get() as *const zend_internal_arg_info,
        2,
    ),
    function(
        c"zopt_is_script_cached",
        zopt_is_script_cached,
        IS_CACHED_ARGS.get() as *const zend_internal_arg_info,
        1,
    ),
    function(
        c"zopt_compile_file",
        zopt_compile_file,
        COMPILE_FILE_ARGS.get() as *const zend_internal_arg_info,
        1,
    ),
    function(
        c"zopt_reset",
        zopt_reset,
        RESET_ARGS.get() as *const zend_internal_arg_info,
        0,
    ),
    function(
        c"zopt_get_configuration",
        zopt_get_configuration,
        CONFIGURATION_ARGS.get() as *const zend_internal_arg_info,
        0,
    ),
    zend_function_entry {
        fname: std::ptr::null(),
        handler: None,
        arg_info: std::ptr::null(),
        num_args: 0,
        flags: 0,
    },
]);

/// The arguments of an internal call (`ZEND_CALL_ARG`).
///
/// # Safety
/// `ex` is the frame of the running internal call.
unsafe fn args<'a>(ex: *mut zend_execute_data) -> &'a [zval] {
    let n = (*ex).This.u2.num_args as usize;
    let first = ex.cast::<zval>().add(php::ZEND_CALL_FRAME_SLOT as usize);
    std::slice::from_raw_parts(first, n)
}

fn bool_arg(args: &[zval], i: usize, default: bool) -> bool {
    match args.get(i).map(php::z_type) {
        Some(t) if t == php::IS_TRUE as u8 => true,
        Some(t) if t == php::IS_FALSE as u8 => false,
        Some(t) if t == php::IS_LONG as u8 => php::z_lval(&args[i]) != 0,
        _ => default,
    }
}

/// The string argument `i` (`None` when missing or not a string: arginfo types are not
/// enforced for internal functions, so an int must not be read as a string pointer).
unsafe fn str_arg(args: &[zval], i: usize) -> Option<&[u8]> {
    let zv = args.get(i)?;
    if php::z_type(zv) != php::IS_STRING as u8 {
        return None;
    }
    php::Reader::new().z_str(zv)
}

/// The resolved path of the string argument `i`, as the cache keys scripts.
unsafe fn path_arg(args: &[zval], i: usize) -> Option<Vec<u8>> {
    let bytes = str_arg(args, i)?;
    let path = PathBuf::from(std::ffi::OsStr::from_bytes(bytes));
    let resolved = std::fs::canonicalize(&path).unwrap_or(path);
    Some(resolved.as_os_str().as_bytes().to_vec())
}

unsafe fn set_return(return_value: *mut zval, value: &Literal) {
    *return_value = Engine::new().zval(value);
}

fn literal(v: &serde_json::Value) -> Literal {
    use serde_json::Value;
    match v {
        Value::Null => Literal::Null,
        Value::Bool(true) => Literal::True,
        Value::Bool(false) => Literal::False,
        Value::Number(n) => Literal::Long(n.as_i64().unwrap_or(i64::MAX)),
        Value::String(s) => Literal::String(PhpStr(s.clone().into_bytes())),
        Value::Array(items) => Literal::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| (ArrayKey::Long(i as i64), literal(v)))
                .collect(),
        ),
        Value::Object(map) => Literal::Array(
            map.iter()
                .map(|(k, v)| (ArrayKey::Str(PhpStr(k.clone().into_bytes())), literal(v)))
                .collect(),
        ),
    }
}

unsafe extern "C" fn zopt_get_status(ex: *mut zend_execute_data, return_value: *mut zval) {
    let status = catch_unwind(|| {
        // SAFETY: PHP calls the handler with the live frame of this call.
        let include_scripts = bool_arg(unsafe { args(ex) }, 0, true);
        let mut v = cache::stats_json();
        if include_scripts {
            if let Some(o) = v.as_object_mut() {
                o.insert("scripts".into(), cache::shm_scripts_json());
            }
        }
        literal(&v)
    });
    set_return(return_value, &status.unwrap_or(Literal::False));
}

unsafe extern "C" fn zopt_invalidate(ex: *mut zend_execute_data, return_value: *mut zval) {
    let done = catch_unwind(|| {
        // SAFETY: PHP calls the handler with the live frame of this call.
        let args = unsafe { args(ex) };
        // SAFETY: the string argument lives for the call.
        let Some(path) = (unsafe { path_arg(args, 0) }) else {
            return false;
        };
        cache::invalidate(&path, bool_arg(args, 1, false))
    });
    set_return(return_value, &bool_literal(done.unwrap_or(false)));
}

unsafe extern "C" fn zopt_is_script_cached(ex: *mut zend_execute_data, return_value: *mut zval) {
    let cached = catch_unwind(|| {
        // SAFETY: PHP calls the handler with the live frame; the argument lives for the call.
        let path = unsafe { path_arg(args(ex), 0) };
        path.is_some_and(|p| cache::is_cached(&p))
    });
    set_return(return_value, &bool_literal(cached.unwrap_or(false)));
}

unsafe extern "C" fn zopt_compile_file(ex: *mut zend_execute_data, return_value: *mut zval) {
    // SAFETY: PHP calls the handler with the live frame; the argument lives for the call.
    let name = unsafe { str_arg(args(ex), 0).map(<[u8]>::to_vec) };
    // Not under catch_unwind: the compile may run PHP's error handling, which longjmps
    // (the shim catches its bailouts); the Rust frames here own nothing.
    let compiled = match name {
        Some(name) => cache::compile_without_executing(&name),
        None => false,
    };
    set_return(return_value, &bool_literal(compiled));
}

unsafe extern "C" fn zopt_reset(_ex: *mut zend_execute_data, return_value: *mut zval) {
    let done = catch_unwind(cache::reset).unwrap_or(false);
    set_return(return_value, &bool_literal(done));
}

unsafe extern "C" fn zopt_get_configuration(_ex: *mut zend_execute_data, return_value: *mut zval) {
    let configuration = catch_unwind(|| {
        let php_version = std::ffi::CStr::from_bytes_with_nul(php::PHP_VERSION)
            .map(|v| v.to_string_lossy().into_owned())
            .unwrap_or_default();
        literal(&serde_json::json!({
            "directives": crate::ini::configuration_json(),
            // What this process folds differently from `php -n` (see environment.rs).
            "environment": crate::environment::differences().lines().collect::<Vec<_>>(),
            "version": {
                "version": env!("CARGO_PKG_VERSION"),
                "php_version": php_version,
                "zopt_product_name": "zopt",
            },
        }))
    });
    set_return(return_value, &configuration.unwrap_or(Literal::False));
}

fn bool_literal(b: bool) -> Literal {
    if b {
        Literal::True
    } else {
        Literal::False
    }
}
