//! zopt-php: the zopt PHP 8.2 extension.
//!
//! Load it with `php -d extension=libzopt_php.so` (it is a regular extension: `get_module`
//! returns its `zend_module_entry`, API 20220829, NTS) next to OPcache. Settings are in
//! [`ini`]; `zopt.mode` picks what it does:
//!
//! - `off` (default): nothing.
//! - `record`: registers an optimizer pass (`zend_optimizer_register_pass`) that OPcache
//!   calls for every script it compiles, after its own passes and at every
//!   `opcache.optimization_level` (0 included). The pass converts the whole `zend_script` —
//!   main op_array, functions, classes with their methods, constants and properties — into
//!   the lossless [`zend_ir::Script`] model, undoing what `pass_two()` did (see [`convert`]),
//!   and writes it under `zopt.record_dir` as `<dir>/<absolute script path>.zop`
//!   (`zopt.record_format`: `text`, `binary` `.zopb`, or `both`), see [`record`].
//!
//! - `roundtrip`: the same pass captures every script and writes it straight back into
//!   PHP's op_arrays ([`writeback`]): PHP must then behave exactly as without zopt. This is
//!   the proof that capture and write-back are exact (see [`transform`]).
//! - `optimize`: capture, run zopt's optimizer pipeline ([`pipeline`]) at
//!   `zopt.optimization_level` (OPcache's pass bitmask, default `0x7FFEBFFF`), write the
//!   result back. zopt's pipeline *replaces* OPcache's: run it with
//!   `opcache.optimization_level=0`, or OPcache optimizes first and zopt optimizes OPcache's
//!   output.
//!
//! Independently of the mode, `zopt.memory_consumption=MB` and/or `zopt.cache_dir=DIR` make
//! zopt the opcode cache ([`cache`]): with OPcache's caching off, a `zend_compile_file` hook
//! serves every script from the shared-memory segment mapped at the end of PHP's startup
//! (shared by php-fpm's forked workers), else from the validated entry in DIR (which then
//! fills shared memory), by building its op_arrays and classes directly ([`load`]) — PHP's
//! compiler is not called — and compiles, captures, optimizes and stores the others.
//! Without shared memory, the file cache also keeps each script's run-time image
//! ([`file_image`]: PHP's run-time structures with relative pointers), which later processes
//! load by a relocation instead of a build. The PHP functions `zopt_get_status()`,
//! `zopt_invalidate()`, `zopt_is_script_cached()`, `zopt_compile_file()`, `zopt_reset()` and
//! `zopt_get_configuration()` are in [`functions`].
//!
//! Recordings keep the raw value of every unused operand, as the model asks. PHP 8.2 leaves
//! some of them uninitialised (the `THIS`, `NEXT` and `CONSTRUCTOR` operand kinds, op2 of
//! `RECV_VARIADIC`, op1 of a value-less `EXIT`), so two recordings of the same file can
//! differ in those values only; they are recorded (and written back) as 0, which the VM
//! never reads. The non-zero `u2` of literals (`Z_EXTRA`: RECV_INIT's cache slot,
//! `ZEND_EXTRA_VALUE`) are in the model (`OpArray::literal_extra`), so recordings keep them.
//!
//! Guarantees: in record mode the extension only reads the script; no panic crosses into
//! PHP (every entry point catches unwinding); a script that cannot be converted gets a
//! `.zop.err` file naming the file, the op_array and the op or field at fault, plus an
//! `E_WARNING`, and PHP carries on normally. Unknown opcodes, zval types PHP cannot
//! produce at compile time, and offsets that do not land on an op, literal or variable are
//! such errors: nothing is silently approximated. In roundtrip / optimize mode nothing is
//! written unless the whole script passed every check; a script that fails keeps PHP's own
//! op_arrays, with a warning.
//!
//! All pointer reading lives in [`php::Reader`], allocation in [`engine`]; FFI entry points
//! are the small functions below, in [`ini`], [`record`] and [`transform`].

use std::cell::UnsafeCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::catch_unwind;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

mod cache;
mod convert;
mod engine;
mod environment;
mod file_image;
mod functions;
mod image;
mod inherit;
mod ini;
mod load;
mod php;
mod pipeline;
mod record;
mod transform;
mod writeback;

use php::{zend_module_entry, zend_result, FAILURE, SUCCESS};

/// A static PHP reads (and sometimes writes, like `module_number`) through raw pointers.
///
/// PHP touches it only on its one thread (NTS builds), during startup and shutdown.
pub struct FfiCell<T>(UnsafeCell<T>);

// SAFETY: only PHP's single engine thread accesses the contents (NTS build, checked by
// wrapper.h), so there is no concurrent access.
unsafe impl<T> Sync for FfiCell<T> {}

impl<T> FfiCell<T> {
    pub const fn new(value: T) -> Self {
        FfiCell(UnsafeCell::new(value))
    }

    pub const fn get(&self) -> *mut T {
        self.0.get()
    }
}

/// Emits a PHP `E_WARNING` with `message` (NULs shown as `\0`).
pub fn warning(message: &str) {
    raise(php::E_WARNING, message);
}

/// Emits a PHP `E_NOTICE` with `message` (NULs shown as `\0`).
pub fn notice(message: &str) {
    raise(php::E_NOTICE, message);
}

fn raise(level: u32, message: &str) {
    let message = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // SAFETY: called on PHP's thread while the engine runs (startup, INI changes, the
    // optimizer pass, a PHP function); "%s" consumes exactly the one C string passed.
    unsafe { php::zend_error(level as c_int, c"%s".as_ptr(), message.as_ptr()) };
}

/// Index `zend_optimizer_register_pass` returned (0: not registered).
static PASS_INDEX: AtomicI32 = AtomicI32::new(0);

const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// `ZEND_MODULE_BUILD_ID`: PHP refuses an extension whose build id differs from its own.
const BUILD_ID: &std::ffi::CStr = if php::ZEND_DEBUG != 0 {
    c"API20220829,NTS,debug"
} else {
    c"API20220829,NTS"
};

static MODULE: FfiCell<zend_module_entry> = FfiCell::new(zend_module_entry {
    size: std::mem::size_of::<zend_module_entry>() as u16,
    zend_api: php::ZEND_MODULE_API_NO,
    zend_debug: php::ZEND_DEBUG as u8,
    zts: 0,
    ini_entry: std::ptr::null(),
    deps: std::ptr::null(),
    name: c"zopt".as_ptr(),
    functions: functions::FUNCTIONS.get() as *const php::zend_function_entry,
    module_startup_func: Some(minit),
    module_shutdown_func: Some(mshutdown),
    request_startup_func: Some(rinit),
    request_shutdown_func: Some(rshutdown),
    info_func: Some(minfo),
    version: VERSION.as_ptr() as *const c_char,
    globals_size: 0,
    globals_ptr: std::ptr::null_mut(),
    globals_ctor: None,
    globals_dtor: None,
    post_deactivate_func: Some(post_deactivate),
    module_started: 0,
    type_: 0,
    handle: std::ptr::null_mut(),
    module_number: 0,
    build_id: BUILD_ID.as_ptr(),
});

/// The extension's entry point, looked up by PHP's `dl()` machinery.
#[no_mangle]
pub extern "C" fn get_module() -> *mut zend_module_entry {
    MODULE.get()
}

fn result(ok: bool) -> zend_result {
    if ok {
        SUCCESS
    } else {
        FAILURE
    }
}

/// MINIT: registers the INI entries and, in record mode, the optimizer pass.
unsafe extern "C" fn minit(type_: c_int, module_number: c_int) -> zend_result {
    let ok = catch_unwind(|| {
        // SAFETY: the entries are a static, NULL-terminated zend_ini_entry_def array.
        let registered = unsafe {
            php::zend_register_ini_entries_ex(ini::INI_ENTRIES.get().cast(), module_number, type_)
        };
        if registered != SUCCESS {
            return false;
        }
        let mode = ini::mode();
        if mode == ini::Mode::Record && ini::record_dir().is_none() {
            warning("zopt: zopt.mode=record needs zopt.record_dir; nothing is recorded");
        }
        if mode != ini::Mode::Off {
            // SAFETY: `pass` matches zend_optimizer_pass_t and never unwinds.
            let index = unsafe { php::zend_optimizer_register_pass(Some(pass)) };
            if index <= 0 {
                warning("zopt: zend_optimizer_register_pass failed; zopt does nothing");
            } else {
                PASS_INDEX.store(index, Ordering::Relaxed);
            }
        }
        if type_ == php::MODULE_PERSISTENT as c_int {
            // The rest waits for the end of PHP's startup (see `post_startup`).
            // SAFETY: MINIT runs once, on PHP's thread, before zend_post_startup.
            unsafe {
                let _ = ORIGINAL_POST_STARTUP.set(php::zend_post_startup_cb);
                php::zend_post_startup_cb = Some(post_startup);
            }
        } else {
            // Loaded by dl(): PHP's startup is over.
            // SAFETY: as above.
            unsafe { finish_startup() };
        }
        true
    });
    result(ok.unwrap_or(false))
}

/// `zend_post_startup_cb` before zopt's.
static ORIGINAL_POST_STARTUP: OnceLock<Option<unsafe extern "C" fn() -> zend_result>> =
    OnceLock::new();

/// The end of PHP's startup (`zend_post_startup`, as OPcache's `accel_post_startup`): only
/// now are the SAPI's functions registered, the Zend extensions (OPcache) started and
/// `disable_functions` / `disable_classes` applied, so only now is this process what it
/// will be when it compiles scripts.
unsafe extern "C" fn post_startup() -> zend_result {
    if let Some(Some(original)) = ORIGINAL_POST_STARTUP.get() {
        if original() != SUCCESS {
            return FAILURE;
        }
    }
    // SAFETY: called once, on PHP's thread, at the end of its startup.
    result(catch_unwind(|| unsafe { finish_startup() }).is_ok())
}

/// What the optimizer may fold in this process, then the caches (whose files are keyed by
/// it).
///
/// # Safety
/// Once, on PHP's thread, with PHP's global tables complete.
unsafe fn finish_startup() {
    let differences = environment::install(environment::this_process());
    cache::startup(differences);
}

/// The `zend_optimizer_pass_t` registered in MINIT: OPcache calls it once per compiled
/// script, after its own passes (at every `opcache.optimization_level`, 0 included), with
/// the whole script in "pass two" form. Whatever it leaves in the script is what OPcache
/// caches and PHP runs.
unsafe extern "C" fn pass(script: *mut php::zend_script, _context: *mut std::ffi::c_void) {
    // The mode is PHP_INI_SYSTEM: it cannot change after MINIT.
    match ini::mode() {
        ini::Mode::Off => {}
        ini::Mode::Record => record::run(script),
        mode @ (ini::Mode::Roundtrip | ini::Mode::Optimize) => transform::run(script, mode),
    }
}

/// RINIT: the segment's `map_ptr` slots are extended for the request (see
/// [`cache::request_startup`]).
#[link_section = ".text.hot.zopt"]
unsafe extern "C" fn rinit(_type: c_int, _module_number: c_int) -> zend_result {
    // SAFETY: RINIT runs on PHP's thread, before the request compiles anything.
    let _ = catch_unwind(|| unsafe { cache::request_startup() });
    SUCCESS
}

/// RSHUTDOWN: adds the shared-memory hits this request counted to the segment's counter
/// (counted locally during the request, see [`cache::flush_local_hits`]).
#[link_section = ".text.hot.zopt"]
unsafe extern "C" fn rshutdown(_type: c_int, _module_number: c_int) -> zend_result {
    let _ = catch_unwind(cache::flush_local_hits);
    SUCCESS
}

/// Post-deactivate (after the request's function and class tables are destroyed, as
/// OPcache's `accel_post_deactivate`): the memory of the run-time images loaded during the
/// request is reused by the next one, and the heap's free memory left by compiling goes
/// back to the system (see [`cache::end_of_request`]).
#[link_section = ".text.hot.zopt"]
unsafe extern "C" fn post_deactivate() -> zend_result {
    let _ = catch_unwind(file_image::end_of_request);
    let _ = catch_unwind(cache::end_of_request);
    SUCCESS
}

/// MSHUTDOWN: unregisters the pass and the INI entries.
unsafe extern "C" fn mshutdown(type_: c_int, module_number: c_int) -> zend_result {
    let ok = catch_unwind(|| {
        // SAFETY: MSHUTDOWN runs once, on PHP's thread.
        unsafe { cache::shutdown() };
        let index = PASS_INDEX.swap(0, Ordering::Relaxed);
        if index > 0 {
            // SAFETY: `index` is what zend_optimizer_register_pass returned.
            unsafe { php::zend_optimizer_unregister_pass(index) };
        }
        // SAFETY: unregisters what MINIT registered for this module.
        unsafe { php::zend_unregister_ini_entries_ex(module_number, type_) };
    });
    result(ok.is_ok())
}

/// MINFO: the `phpinfo()` / `php -i` section.
unsafe extern "C" fn minfo(module: *mut zend_module_entry) {
    let _ = catch_unwind(|| {
        let mode = match ini::mode() {
            ini::Mode::Off => c"off",
            ini::Mode::Record => c"record",
            ini::Mode::Roundtrip => c"roundtrip",
            ini::Mode::Optimize => c"optimize",
        };
        let names = pipeline::implemented_passes();
        let passes = if names.is_empty() {
            c"none implemented yet (optimize = round trip)".to_owned()
        } else {
            CString::new(names.join(", ")).unwrap_or_default()
        };
        let pass = if PASS_INDEX.load(Ordering::Relaxed) > 0 {
            c"registered"
        } else {
            c"not registered"
        };
        // SAFETY: phpinfo runs on PHP's thread; each row passes `num_cols` C strings.
        unsafe {
            php::php_info_print_table_start();
            php::php_info_print_table_row(2, c"zopt support".as_ptr(), c"enabled".as_ptr());
            php::php_info_print_table_row(
                2,
                c"Version".as_ptr(),
                VERSION.as_ptr() as *const c_char,
            );
            php::php_info_print_table_row(2, c"Mode".as_ptr(), mode.as_ptr());
            php::php_info_print_table_row(2, c"Optimizer pass".as_ptr(), pass.as_ptr());
            php::php_info_print_table_row(2, c"zopt optimizer passes".as_ptr(), passes.as_ptr());
            let cache = CString::new(cache::status()).unwrap_or_default();
            php::php_info_print_table_row(2, c"Opcode cache".as_ptr(), cache.as_ptr());
            php::php_info_print_table_end();
            php::display_ini_entries(module);
        }
    });
}
