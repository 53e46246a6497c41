//! Cache mode (`zopt.memory_consumption`, `zopt.cache_dir`): zopt is the opcode cache. Its
//! `zend_compile_file` hook does what OPcache's `persistent_compile_file` does, with three
//! levels:
//!
//! 1. **shared memory** ([`zend_cache::ShmCache`], `zopt.memory_consumption` MB, mapped at
//!    MINIT so that php-fpm's workers, forked from the master afterwards, share it): looked
//!    up by the resolved path without any lock; the source is checked against the entry at
//!    most every `zopt.revalidate_freq` seconds (never with `zopt.validate_timestamps=0`),
//!    as OPcache's timestamp validation does. The first hit builds the script from the
//!    entry in place, its strings taken from the segment's interned strings area (nothing
//!    allocated or hashed for them), and persists it in PHP's run-time form next to the
//!    entry ([`image`]); later hits bind that form without rebuilding anything;
//! 2. **the file cache** ([`zend_cache::FileCache`], `zopt.cache_dir`, loose entries and
//!    packs): a hit is copied into shared memory and served from there;
//! 3. **PHP's compiler** with zopt's optimizer: the result is stored in both levels (into
//!    shared memory by a two-phase persist straight into one allocation of the segment).
//!
//! A full segment stops adding scripts (logged once, counted) and keeps serving. What
//! each level does:
//!
//! - **key before compiling**: the file is opened (`zend_stream_open`, which resolves the
//!   include path) and its [`CacheKey`] — resolved path and validation data — is taken
//!   before anything is compiled, so a file changed meanwhile yields a stale entry, never a
//!   wrong one;
//! - **hit**: the entry (validated completely by the cache) is built into engine structures
//!   and bound into the request by [`load`]; PHP's compiler is not called;
//! - **miss**: PHP's compiler runs with OPcache's compiler options (`opcache_compile_file`:
//!   delayed early binding, no constant substitution, other files ignored), the script is
//!   captured ([`convert`]), optimized by zopt's [`pipeline`] at `zopt.optimization_level`,
//!   written back when the pipeline changed it, stored, and its delayed early bindings are
//!   done as OPcache does when it loads a script.
//!
//! Files that are not plain files (stdin, `-r` code, stream wrappers) and scripts the
//! capture cannot represent are compiled as usual and counted as uncacheable. When OPcache
//! itself caches scripts it calls this hook with its own compiler options; the hook then only
//! passes through (OPcache is the cache), and says so once.
//!
//! Counters ([`Counters`]): lookups by outcome (the cache's [`zend_cache::Stats`]),
//! `compiles` — every call of PHP's compiler through this hook — and failures. With
//! `zopt.cache_stats=FILE` they are appended to FILE as one JSON line at shutdown; that is
//! how the tests prove a warm run never compiles.

use std::ffi::{c_char, c_int};
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::OnceLock;

use zend_cache::{
    CacheBackend, CacheKey, FileCache, FileCacheConfig, RejectKind, ScriptView, ShmCache,
    ShmConfig, ShmEntry, ShmStoreError, SystemId,
};

use crate::engine::Engine;
use crate::php::{self, zend_file_handle, zend_op_array, zend_script, HashTable};
use crate::{file_image, image, ini, load, transform};

// The segment's interned strings are PHP 8.2 zend_strings: the layout zend-cache writes
// (it has no PHP headers) must be the one these headers describe.
const _: () = assert!(
    std::mem::offset_of!(php::zend_string, val) == zend_cache::shm::ZEND_STRING_HEADER
        && zend_cache::shm::INTERNED_TYPE_INFO
            == php::IS_STRING | (1 << 4) | php::IS_STR_INTERNED | php::IS_STR_PERMANENT,
    "zend_string layout differs from zend_cache::shm's"
);

type CompileFile = unsafe extern "C" fn(*mut zend_file_handle, c_int) -> *mut zend_op_array;

/// The file cache, opened at the end of PHP's startup (`zopt.cache_dir`).
static CACHE: OnceLock<FileCache> = OnceLock::new();
/// The shared-memory segment, mapped at the end of PHP's startup
/// (`zopt.memory_consumption`): php-fpm's workers, forked from the master after it, all use
/// the same one.
static SHM: OnceLock<ShmCache> = OnceLock::new();
/// [`SHM`]'s segment once set (NULL before), read by the hooks of every include with one
/// load instead of the `OnceLock`'s state check.
static SHM_SET: crate::FfiCell<*const ShmCache> = crate::FfiCell::new(ptr::null());

/// The shared-memory cache, if there is one (see [`SHM_SET`]).
#[inline(always)]
fn shm() -> Option<&'static ShmCache> {
    // SAFETY: written once at startup, before any hook runs, to a segment that lives until
    // the process ends.
    unsafe { (*SHM_SET.get()).as_ref() }
}
/// The `zend_compile_file` the hook replaced.
static ORIGINAL: OnceLock<CompileFile> = OnceLock::new();
type StreamOpen = unsafe extern "C" fn(*mut zend_file_handle) -> php::zend_result;
/// The `zend_stream_open_function` the shared-memory level replaced.
static ORIGINAL_STREAM_OPEN: OnceLock<StreamOpen> = OnceLock::new();
/// Set while PHP's compiler runs under the hook: its own opening of the file must really
/// open it.
static COMPILING: AtomicBool = AtomicBool::new(false);
/// Set while PHP's compiler runs with the options [`compile_and_store`] gave it: a compile
/// nested in that one (a user error handler including a file while the compiler reports a
/// deprecation) sees them and must not take them for OPcache's.
static OWN_OPTIONS: AtomicBool = AtomicBool::new(false);
static WARNED_OPCACHE: AtomicBool = AtomicBool::new(false);

/// A count kept by this process, bumped by PHP's one thread (PHP is built without ZTS for
/// zopt): a relaxed load and store, not a locked read-modify-write, which costs tens of
/// cycles and was a tenth of a shared-memory hit's time. Readers (the status functions)
/// run on the same thread.
#[derive(Default)]
pub struct Counter(AtomicU64);

impl Counter {
    pub const fn new() -> Counter {
        Counter(AtomicU64::new(0))
    }

    /// Adds `n`; returns the count before.
    pub fn add(&self, n: u64) -> u64 {
        let before = self.0.load(Ordering::Relaxed);
        self.0.store(before.wrapping_add(n), Ordering::Relaxed);
        before
    }

    /// Adds one; returns the count before.
    pub fn bump(&self) -> u64 {
        self.add(1)
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// The count, reset to zero.
    pub fn take(&self) -> u64 {
        let n = self.get();
        self.0.store(0, Ordering::Relaxed);
        n
    }
}

/// What the hook did, beyond the cache's own lookup counters.
#[derive(Default)]
pub struct Counters {
    /// Calls of PHP's compiler made by the hook (misses, uncacheable files, fallbacks).
    pub compiles: Counter,
    /// Misses PHP's compiler could not compile (a parse error, a compile-time fatal error):
    /// nothing to store, as with OPcache, and the next run compiles them again.
    pub compile_failures: Counter,
    /// Hits served without compiling.
    pub served: Counter,
    /// Files compiled without caching (not a plain file, OPcache active, capture refused).
    pub uncacheable: Counter,
    /// Entries that validated but could not be built (compiled instead).
    pub load_failures: Counter,
    /// Nanoseconds spent serving hits (lookup, validation, build, bind), estimated from one
    /// call of the hook in [`TIMING_SAMPLE`].
    pub served_ns: Counter,
    /// Nanoseconds spent in the hook on everything else (PHP's compiler, capture, store),
    /// estimated the same way.
    pub other_ns: Counter,
    /// Hits served from shared memory (also counted in `served`).
    pub shm_hits: Counter,
    /// Shared-memory stores refused (full segment or table, invalid body).
    pub shm_store_failures: Counter,
    /// Shared-memory hits bound from the script's run-time form ([`image`]), without
    /// rebuilding anything (also counted in `shm_hits`).
    pub run_time_hits: Counter,
    /// Run-time forms this process persisted into the segment.
    pub run_time_stores: Counter,
    /// Scripts whose run-time form could not be persisted (they are rebuilt on each hit).
    pub run_time_refusals: Counter,
    /// Linked classes this process persisted into the inheritance cache ([`crate::inherit`]).
    pub linked_stores: Counter,
    /// File-cache hits bound from the script's run-time image ([`file_image`]): relocated,
    /// not rebuilt (also counted in `served`).
    pub image_hits: Counter,
    /// Run-time images this process stored in the file cache (refusals included).
    pub image_stores: Counter,
    /// Run-time images found but not used (damaged, truncated, from another PHP build...;
    /// the entry was served instead).
    pub image_rejects: Counter,
    /// File-cache hits of scripts that have no run-time image (the record that none could
    /// be made: a script PHP's compiler warned about, or one the image cannot represent),
    /// served from their entry.
    pub image_refusals: Counter,
}

pub static COUNTERS: Counters = Counters {
    compiles: Counter::new(),
    compile_failures: Counter::new(),
    served: Counter::new(),
    uncacheable: Counter::new(),
    load_failures: Counter::new(),
    served_ns: Counter::new(),
    other_ns: Counter::new(),
    shm_hits: Counter::new(),
    shm_store_failures: Counter::new(),
    run_time_hits: Counter::new(),
    run_time_stores: Counter::new(),
    run_time_refusals: Counter::new(),
    linked_stores: Counter::new(),
    image_hits: Counter::new(),
    image_stores: Counter::new(),
    image_rejects: Counter::new(),
    image_refusals: Counter::new(),
};

/// One call of the compile hook in this many is timed for `served_ns` / `other_ns`.
pub const TIMING_SAMPLE: u64 = 64;
/// Calls of the compile hook, for the timing sample.
static CALLS: Counter = Counter::new();

/// OPcache's compiler options for scripts it caches (`opcache_compile_file`).
const OPCACHE_COMPILER_OPTIONS: u32 = php::ZEND_COMPILE_HANDLE_OP_ARRAY
    | php::ZEND_COMPILE_IGNORE_INTERNAL_CLASSES
    | php::ZEND_COMPILE_DELAYED_BINDING
    | php::ZEND_COMPILE_NO_CONSTANT_SUBSTITUTION
    | php::ZEND_COMPILE_IGNORE_OTHER_FILES
    | php::ZEND_COMPILE_IGNORE_OBSERVER;

extern "C" {
    /// shim.c: `filename` compiled as an include through `zend_compile_file`, not run.
    fn zopt_compile_without_execution(filename: *const c_char) -> bool;
    /// shim.c: `compile(handle, type)` inside `zend_try`.
    fn zopt_guarded_compile_file(
        compile: CompileFile,
        handle: *mut zend_file_handle,
        type_: c_int,
        bailed_out: *mut bool,
    ) -> *mut zend_op_array;
}

/// Startup: maps the shared-memory segment (`zopt.memory_consumption`), opens the file cache
/// under `zopt.cache_dir`, and installs the hook when there is either. Problems are
/// warnings; PHP then compiles as usual.
///
/// # Safety
/// Called once, on PHP's thread, at the end of PHP's startup (or from MINIT under `dl()`).
/// `environment`: how this process differs from the optimizer's tables
/// (`Process::describe`), part of the cache's system id.
pub unsafe fn startup(environment: &str) {
    let version = std::ffi::CStr::from_bytes_with_nul(php::PHP_VERSION)
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    let system = SystemId::new(&version, ini::optimization_level()).with_environment(environment);
    let memory = ini::memory_consumption();
    if memory > 0 {
        let config = ShmConfig {
            size: memory,
            strings_size: ini::interned_strings_buffer(),
            max_scripts: ini::max_accelerated_files(),
        };
        match ShmCache::create(config, &system) {
            Ok(shm) => {
                let _ = SHM.set(shm);
                if let Some(shm) = SHM.get() {
                    *SHM_SET.get() = shm;
                }
                if ini::shm_run_time_form() {
                    // At most one slot per 8 KiB of segment: a method executed in place
                    // takes one (two with static variables), and hundreds of bytes of the
                    // segment.
                    image::set_map_ptr_slot_limit((memory as u64 / 8192).clamp(4096, 1 << 20));
                    if let Some(shm) = SHM.get() {
                        crate::inherit::install(shm);
                    }
                }
            }
            Err(e) => log(&format!(
                "cannot map {memory} bytes of shared memory: {e}; no shared-memory cache"
            )),
        }
    }
    if let Some(dir) = ini::cache_dir() {
        let config = FileCacheConfig {
            max_bytes: ini::cache_max_bytes(),
            ..FileCacheConfig::default()
        };
        match FileCache::open(&dir, system, config) {
            Ok(cache) => {
                let _ = CACHE.set(cache);
            }
            Err(e) => log(&format!(
                "cannot open the cache {}: {e}; scripts are not cached in files",
                dir.display()
            )),
        }
    }
    if CACHE.get().is_none() && SHM.get().is_none() {
        return;
    }
    if let Some(original) = php::zend_compile_file {
        let _ = ORIGINAL.set(original);
        php::zend_compile_file = Some(compile_file);
    }
    if SHM.get().is_some() || (CACHE.get().is_some() && images_enabled()) {
        if let Some(original) = php::zend_stream_open_function {
            let _ = ORIGINAL_STREAM_OPEN.set(original);
            php::zend_stream_open_function = Some(stream_open);
        }
        if let Some(original) = php::zend_resolve_path {
            let _ = ORIGINAL_RESOLVE_PATH.set(original);
            php::zend_resolve_path = Some(resolve_path);
        }
    }
}

// The functions of a shared-memory hit are placed together (`.text.hot.zopt`, an output
// section of their own, see build.rs): scattered over the library's code, they made
// callgrind's php-cgi run miss the instruction cache a third more often.
/// `zend_stream_open_function` while there is a segment: `include_once` / `require_once`
/// open the file before asking for its compilation (to learn its real path). For a script
/// whose shared-memory entry is fresh, the file is not opened at all — as OPcache's
/// `persistent_stream_open_function` does — and the compile hook serves the entry: no
/// open, fstat and close per included script and request.
#[link_section = ".text.hot.zopt"]
unsafe extern "C" fn stream_open(handle: *mut zend_file_handle) -> php::zend_result {
    let cached = catch_unwind(AssertUnwindSafe(|| cached_without_opening(handle)));
    if cached.unwrap_or(false) {
        return php::SUCCESS;
    }
    match ORIGINAL_STREAM_OPEN.get() {
        Some(original) => original(handle),
        None => php::FAILURE,
    }
}

/// Whether `handle` names a script served from shared memory by an `include_once` /
/// `require_once` being executed, or the request's primary script; if so its
/// `opened_path` is set (to its name, which the engine or the SAPI resolved already) and
/// the file stays unopened.
unsafe fn cached_without_opening(handle: *mut zend_file_handle) -> bool {
    let Some(shm) = shm() else {
        return image_without_opening(handle);
    };
    if COMPILING.load(Ordering::Relaxed)
        || u32::from((*handle).type_) != php::ZEND_HANDLE_FILENAME
        || !(*handle).opened_path.is_null()
    {
        return false;
    }
    let filename = (*handle).filename;
    // The include_once `resolve_path` just found (the kept lookup is for this very string
    // and opline, so this is that include): nothing else to check.
    if found_for(shm, filename) {
        leave_path(handle, filename);
        return true;
    }
    if !in_include_once() && !primary_script(handle) {
        return false;
    }
    leave_unopened(shm, handle)
}

/// Sets `handle`'s opened_path to its name `filename`, which stays unopened.
#[inline(always)]
unsafe fn leave_path(handle: *mut zend_file_handle, filename: *mut php::zend_string) {
    // zend_string_copy: interned strings are not counted.
    if !crate::engine::is_interned(filename) {
        (*filename).gc.refcount += 1;
    }
    (*handle).opened_path = filename;
}

/// Whether `handle` is the request's primary script, opened before anything executes
/// (FastCGI's `php_fopen_primary_script`, or `zend_execute_scripts` for a SAPI that hands
/// over a name): OPcache's stream_open leaves that one unopened too, and
/// `zend_execute_scripts` registers its opened_path in the included files.
unsafe fn primary_script(handle: *mut zend_file_handle) -> bool {
    let eg = ptr::addr_of!(php::executor_globals);
    (*handle).primary_script && (*eg).current_execute_data.is_null()
}

/// Whether the script `handle` names (absolute, not opened yet) is fresh in shared memory;
/// if so its `opened_path` is set to its name and the file stays unopened, for the compile
/// hook to serve the entry. (Once a request, for its primary script: in the hit's code.)
#[link_section = ".text.hot.zopt"]
unsafe fn leave_unopened(shm: &'static ShmCache, handle: *mut zend_file_handle) -> bool {
    let filename = (*handle).filename;
    let Some(path) = php::Reader::new().str(filename) else {
        return false;
    };
    if path.first() != Some(&b'/') {
        return false;
    }
    // Not found by `resolve_path` for this include (the caller checked): looked up, and
    // kept for the compile hook.
    let Fresh::Hit(entry) = fresh(shm, path) else {
        return false;
    };
    remember(shm, filename, entry);
    leave_path(handle, filename);
    true
}

/// The `ZEND_INCLUDE_OR_EVAL` op of user code PHP is executing, if it is executing one: the
/// op whose handler calls the compiler (`zend_include_or_eval`; whatever else runs code
/// meanwhile, an autoloader, a user stream wrapper, an error handler, pushes a frame of its
/// own).
///
/// # Safety
/// On PHP's thread, during a request.
#[inline(always)]
pub(crate) unsafe fn current_include_op() -> Option<&'static php::zend_op> {
    let eg = ptr::addr_of!(php::executor_globals);
    let ex = (*eg).current_execute_data;
    // ZEND_USER_CODE(type): user functions and eval'd code have the low bit clear. Only
    // their frames have an opline: an internal function's frame (`stream_resolve_include_path`
    // resolving a path) leaves the field as the VM stack held it, any bytes at all.
    if ex.is_null() || (*ex).func.is_null() || (*(*ex).func).type_ & 1 != 0 {
        return None;
    }
    let opline = (*ex).opline;
    if opline.is_null() {
        return None;
    }
    let opline = &*opline;
    (opline.opcode == zend_ir::opcode::ZEND_INCLUDE_OR_EVAL.0).then_some(opline)
}

/// Whether PHP is executing an `include_once` / `require_once` of user code.
unsafe fn in_include_once() -> bool {
    current_include_op()
        .is_some_and(|op| [ZEND_INCLUDE_ONCE, ZEND_REQUIRE_ONCE].contains(&op.extended_value))
}

type ResolvePath = unsafe extern "C" fn(*mut php::zend_string) -> *mut php::zend_string;
/// The `zend_resolve_path` the shared-memory level replaced.
static ORIGINAL_RESOLVE_PATH: OnceLock<ResolvePath> = OnceLock::new();

/// `zend_resolve_path` while there is a segment: `include_once` / `require_once` resolve
/// the name to a real path (`realpath`, one `lstat` per component on a cold realpath
/// cache, hashing on a warm one) to look it up in the included files. A name that is
/// exactly the path of a fresh shared-memory entry is a path that was resolved when the
/// script was stored, and is returned as it is — as OPcache's
/// `persistent_zend_resolve_path` does with `opcache.revalidate_path=0`, its default.
#[link_section = ".text.hot.zopt"]
unsafe extern "C" fn resolve_path(filename: *mut php::zend_string) -> *mut php::zend_string {
    let cached = catch_unwind(AssertUnwindSafe(|| cached_real_path(filename)));
    if cached.unwrap_or(false) {
        // zend_string_copy: interned strings are not counted.
        if !crate::engine::is_interned(filename) {
            (*filename).gc.refcount += 1;
        }
        return filename;
    }
    match ORIGINAL_RESOLVE_PATH.get() {
        Some(original) => original(filename),
        None => ptr::null_mut(),
    }
}

/// Whether `filename`, asked for by an `include_once` / `require_once`, names a fresh
/// shared-memory entry exactly (the lookup is kept for `stream_open` and the compile hook).
unsafe fn cached_real_path(filename: *mut php::zend_string) -> bool {
    let Some(shm) = shm() else {
        return image_real_path(filename);
    };
    if COMPILING.load(Ordering::Relaxed) || filename.is_null() || !in_include_once() {
        return false;
    }
    // Every include_once starts here: what an earlier include kept is forgotten, so the
    // hooks after this one find this include's lookup or none (see `LastFound`).
    forget_found();
    let Some(path) = php::Reader::new().str(filename) else {
        return false;
    };
    if path.first() != Some(&b'/') {
        return false;
    }
    let Fresh::Hit(entry) = fresh(shm, path) else {
        return false;
    };
    give_hash(filename, entry);
    remember(shm, filename, entry);
    true
}

/// Hands the entry's hash of its path to `s`, a string holding that path, if it has none
/// yet: PHP then finds the path in `EG(included_files)` (`zend_hash_exists`, then
/// `zend_hash_add_empty_element`) without hashing it, as it does with OPcache, whose
/// `resolve_path` returns the cached script's interned name.
///
/// # Safety
/// `s` is a live string with the entry's path as its bytes.
#[inline]
unsafe fn give_hash(s: *mut php::zend_string, entry: ShmEntry<'_>) {
    // `zend_string_hash_val` writes the same value into any string, shared or not.
    if (*s).h == 0 {
        (*s).h = entry.path_php_hash();
    }
}

/// Whether scripts are served from (and make) run-time images in the file cache: when
/// there is no segment (which keeps its own run-time form), unless
/// `zopt.shm_run_time_form=0` turns run-time forms off or `zopt.verify` compares rebuilt
/// scripts with their entries.
fn images_enabled() -> bool {
    SHM.get().is_none() && ini::shm_run_time_form() && !ini::verify()
}

/// A fresh run-time image found for an `include_once` / `require_once` by
/// `resolve_path`, kept for `stream_open` and the compile hook of the same include (as
/// `LAST_FOUND` is with a segment).
struct LastImage {
    /// The opline of the include it was found for.
    opline: usize,
    path: Vec<u8>,
    key: CacheKey,
    found: zend_cache::file_cache::CachedImage,
}

static LAST_IMAGE: php::PhpThreadCell<Option<LastImage>> = php::PhpThreadCell::new(None);

/// The opline being executed (0 outside user code).
unsafe fn current_opline() -> usize {
    let eg = ptr::addr_of!(php::executor_globals);
    let ex = (*eg).current_execute_data;
    if ex.is_null() {
        0
    } else {
        (*ex).opline as usize
    }
}

/// Without a segment: whether the absolute path `filename`, asked for by an
/// `include_once` / `require_once` being executed, has a fresh, usable run-time image in
/// the file cache (its source `stat`ed once); if so it is kept in `LAST_IMAGE`. Its name
/// is then a path that was resolved when the image was stored (images are keyed by real
/// paths), so resolving it again is skipped, as for shared-memory entries.
#[cold]
#[inline(never)]
unsafe fn image_real_path(filename: *mut php::zend_string) -> bool {
    LAST_IMAGE.with(|l| l.take());
    let Some(cache) = CACHE.get() else {
        return false;
    };
    if !images_enabled() || COMPILING.load(Ordering::Relaxed) || filename.is_null() {
        return false;
    }
    if !in_include_once() {
        return false;
    }
    let Some(path) = php::Reader::new().str(filename) else {
        return false;
    };
    if path.first() != Some(&b'/') {
        return false;
    }
    let Some(key) = key_of(path) else {
        return false;
    };
    let Ok(found) = cache.lookup_image(&key) else {
        return false;
    };
    if !file_image::is_loadable(found.body()) {
        return false;
    }
    let last = LastImage {
        opline: current_opline(),
        path: path.to_vec(),
        key,
        found,
    };
    LAST_IMAGE.with(|l| *l = Some(last));
    true
}

/// The image `image_real_path` kept for `path` during the include being executed.
fn last_image_for(path: &[u8]) -> Option<LastImage> {
    // SAFETY: reads the executor's current opline and the kept image, on PHP's thread.
    unsafe {
        let opline = current_opline();
        LAST_IMAGE
            .with(|l| l.take())
            .filter(|last| last.opline == opline && last.path == path)
    }
}

/// `stream_open` without a segment: the file of an include whose run-time image
/// `image_real_path` just found stays unopened (its `opened_path` is its name).
#[cold]
#[inline(never)]
unsafe fn image_without_opening(handle: *mut zend_file_handle) -> bool {
    if COMPILING.load(Ordering::Relaxed)
        || u32::from((*handle).type_) != php::ZEND_HANDLE_FILENAME
        || !(*handle).opened_path.is_null()
    {
        return false;
    }
    let filename = (*handle).filename;
    let Some(path) = php::Reader::new().str(filename) else {
        return false;
    };
    let opline = current_opline();
    let kept = LAST_IMAGE.with(|l| {
        l.as_ref()
            .is_some_and(|last| last.opline == opline && last.path == path)
    });
    if !kept {
        return false;
    }
    // zend_string_copy: interned strings are not counted.
    if !crate::engine::is_interned(filename) {
        (*filename).gc.refcount += 1;
    }
    (*handle).opened_path = filename;
    true
}

/// The entry the previous hook found fresh for an `include_once` / `require_once`
/// (`resolve_path`, then `stream_open`) or for the primary script (`stream_open`), with
/// the string of the path it was asked for: the next hook called for the same include
/// takes it instead of looking it up (and checking its source) again.
static LAST_FOUND: crate::FfiCell<LastFound> = crate::FfiCell::new(LastFound {
    entry: None,
    root: ptr::null(),
    path: 0,
    opline: 0,
    generation: 0,
});

/// The kept lookup (a plain cell, not a `RefCell`: it is read on every include, and no
/// borrow of it outlives the statement that takes it).
///
/// # Safety
/// On PHP's thread; the reference is not held across a call that may take it again.
#[inline(always)]
unsafe fn last_found() -> &'static mut LastFound {
    &mut *LAST_FOUND.get()
}

/// An entry found fresh for a path string, kept for the next hook of the same include
/// (see `LAST_FOUND`).
///
/// It is known by the path string's address and the include's opline, as OPcache knows
/// its `ZCG(cache_persistent_script)` by `ZCG(cache_opline)`, rather than by the path's
/// bytes: within one execution of an include the path string stays alive, so no other
/// string has its address; and every execution of an `include_once` begins with
/// `resolve_path`, which forgets what an earlier one kept (whose string may have been
/// freed and its address reused), as each request's start does for the primary script
/// (opline 0). The hooks reuse the entry only for that same string, so a file opened
/// under another name (its real path) is looked up under that name.
struct LastFound {
    /// Taken by the compile hook; `None` once taken.
    entry: Option<ShmEntry<'static>>,
    /// The entry's run-time form when it was found (NULL for none), so that the compile
    /// hook does not read the slot again.
    root: *const u8,
    /// The address of the path string it was found for.
    path: usize,
    /// The opline of the include it was found for (0 outside user code).
    opline: usize,
    /// The segment's generation when it was found: no entry was replaced or invalidated
    /// since.
    generation: u64,
}

/// Keeps `entry`, found fresh for the path string `path`, for the next hook of the same
/// include.
///
/// # Safety
/// On PHP's thread, from a hook.
unsafe fn remember(shm: &'static ShmCache, path: *mut php::zend_string, entry: ShmEntry<'static>) {
    // The compile hook binds this entry's run-time form next, after PHP checked its
    // included files and opened nothing: fetch the form's root and main op_array meanwhile.
    let root = entry.image().unwrap_or(ptr::null());
    if !root.is_null() {
        image::prefetch(root, 128);
    }
    let last = last_found();
    last.path = path as usize;
    last.opline = current_opline();
    last.generation = shm.generation();
    last.root = root;
    last.entry = Some(entry);
}

/// Forgets the kept lookup (see [`LastFound`]).
fn forget_found() {
    // SAFETY: on PHP's thread, from a hook or RINIT.
    unsafe { last_found().entry = None };
}

/// Whether the previous hook's lookup, still kept, was for the path string `path` in this
/// include, and still holds.
///
/// # Safety
/// On PHP's thread, from a hook.
unsafe fn found_for(shm: &'static ShmCache, path: *mut php::zend_string) -> bool {
    let opline = current_opline();
    let last = last_found();
    last.entry.is_some() && last.matches(shm, path, opline)
}

impl LastFound {
    fn matches(&self, shm: &ShmCache, path: *mut php::zend_string, opline: usize) -> bool {
        self.path == path as usize && self.opline == opline && self.generation == shm.generation()
    }
}

/// What shared memory holds for the path `bytes` (of the string `path`), reusing the
/// previous hook's lookup when it was for the same string in this include; with a hit,
/// its run-time form (NULL for none).
///
/// # Safety
/// On PHP's thread, from a hook; `bytes` are the bytes of `path`.
#[inline(always)]
unsafe fn fresh_for(
    shm: &'static ShmCache,
    path: *mut php::zend_string,
    bytes: &[u8],
) -> (Fresh<'static>, *const u8) {
    let opline = current_opline();
    let last = last_found();
    if let Some(entry) = last.entry.take() {
        if last.matches(shm, path, opline) {
            return (Fresh::Hit(entry), last.root);
        }
    }
    match fresh(shm, bytes) {
        Fresh::Hit(entry) => (Fresh::Hit(entry), entry.image().unwrap_or(ptr::null())),
        other => (other, ptr::null()),
    }
}

// zend_compile.h: include kinds in ZEND_INCLUDE_OR_EVAL's extended_value.
const ZEND_INCLUDE_ONCE: u32 = 1 << 2;
const ZEND_REQUIRE_ONCE: u32 = 1 << 4;

/// What shared memory holds for a path, its source checked as `zopt.validate_timestamps`
/// and `zopt.revalidate_freq` ask.
enum Fresh<'a> {
    Hit(ShmEntry<'a>),
    /// An entry whose source changed: the key taken to find that out.
    Stale(CacheKey),
    Missing,
    /// The source cannot be stat'ed.
    NoKey,
}

/// Hits of the segment counted by this process and not yet added to the segment's
/// counter: written at the end of each request (and before the status is read) rather
/// than on each hit, so that hits do not make the workers take turns on one cache line of
/// the segment's header.
static PENDING_HITS: Counter = Counter::new();

/// Run-time-form hits of the compile hook's common path ([`serve_run_time_form`]). Each is
/// also a script served, a shared-memory hit, a run-time-form hit and a hit of the segment
/// not yet added to its counter: counted once here (one increment a hit instead of four)
/// and added to those where they are read ([`stats_json`], [`flush_local_hits`]).
static FORM_HITS: Counter = Counter::new();
/// [`FORM_HITS`] when the segment's counter last received them.
static FORM_HITS_FLUSHED: Counter = Counter::new();

/// Scripts served by this process: [`Counters::served`] and the common path's hits.
fn served_total() -> u64 {
    COUNTERS.served.get() + FORM_HITS.get()
}

/// RINIT: no lookup is kept from the previous request, and this process's `map_ptr` table
/// covers the segment's slots (see [`image::activate_map_ptr_slots`]).
///
/// # Safety
/// Called from RINIT, on PHP's thread.
#[link_section = ".text.hot.zopt"]
pub unsafe fn request_startup() {
    // A lookup kept by the previous request's last include is not this request's.
    forget_found();
    REQUEST_TIME.store(0, Ordering::Relaxed);
    if let (Some(shm), true) = (SHM.get(), ini::shm_run_time_form()) {
        image::activate_map_ptr_slots(shm);
    }
}

/// Adds the hits this process counted to the segment's counter.
#[link_section = ".text.hot.zopt"]
pub fn flush_local_hits() {
    let form_hits = FORM_HITS.get();
    let n = PENDING_HITS.take() + form_hits - FORM_HITS_FLUSHED.take();
    FORM_HITS_FLUSHED.add(form_hits);
    if let (Some(shm), true) = (SHM.get(), n > 0) {
        shm.count_hits(n);
    }
}

/// [`request_time`] of this request once read, 0 before (RINIT resets it).
static REQUEST_TIME: AtomicI64 = AtomicI64::new(0);

/// The request's start time, as OPcache's `ZCG(request_time)`: read from SAPI once per
/// request (the call, about 17 instructions, was made for every script served), no clock
/// read per script.
#[inline(always)]
fn request_time() -> i64 {
    let kept = REQUEST_TIME.load(Ordering::Relaxed);
    if kept != 0 {
        return kept;
    }
    read_request_time()
}

/// [`request_time`]'s first call in a request.
#[link_section = ".text.hot.zopt"]
#[inline(never)]
fn read_request_time() -> i64 {
    // SAFETY: reads (and on first use sets) SAPI's request time, on PHP's thread.
    let now = unsafe { php::sapi_get_request_time() as i64 };
    REQUEST_TIME.store(now, Ordering::Relaxed);
    now
}

#[inline(always)]
fn fresh<'a>(shm: &'a ShmCache, path: &[u8]) -> Fresh<'a> {
    let Some(entry) = shm.find(path) else {
        return Fresh::Missing;
    };
    if !ini::validate_timestamps() {
        return Fresh::Hit(entry);
    }
    let now = request_time();
    if !entry.needs_revalidation(now) {
        return Fresh::Hit(entry);
    }
    revalidate(entry, path, now)
}

/// [`fresh`] when the entry's source is due for a check (every `zopt.revalidate_freq`
/// seconds per script, so on hits too): a `stat` of the source compared with the entry's
/// modification time and size, in the hit's code (std's `metadata` and the key's path
/// copy lie in the library's cold code, which a worker serving hits then maps again).
/// Anything else (content validation, a change, an error, a long path) is
/// [`revalidate_key`].
#[link_section = ".text.hot.zopt"]
#[inline(never)]
fn revalidate<'a>(entry: ShmEntry<'a>, path: &[u8], now: i64) -> Fresh<'a> {
    extern "C" {
        /// shim.c: `stat` of the NUL-terminated `path`; false unless a regular file.
        fn zopt_stat_mtime_size(
            path: *const c_char,
            mtime_sec: *mut i64,
            mtime_nsec: *mut u32,
            size: *mut u64,
        ) -> bool;
    }
    let mut z = [0u8; 512];
    if ini::cache_validation() == zend_cache::ValidationMode::MtimeSize && path.len() < z.len() {
        z[..path.len()].copy_from_slice(path);
        let (mut mtime_sec, mut mtime_nsec, mut size) = (0, 0, 0);
        // SAFETY: `z` holds the path and a NUL; the outputs are locals.
        let is_file = unsafe {
            zopt_stat_mtime_size(
                z.as_ptr().cast(),
                &mut mtime_sec,
                &mut mtime_nsec,
                &mut size,
            )
        };
        let v = zend_cache::Validation::MtimeSize {
            mtime_sec,
            mtime_nsec,
            size,
        };
        // The run-time form's copy of the entry's validation, in a line the hit reads.
        // SAFETY: an entry's image is complete once published.
        let expected = match entry.image() {
            Some(root) => unsafe { image::source_validation(root) },
            None => entry.validation(),
        };
        if is_file && expected == Some(v) {
            entry.revalidated(now, ini::revalidate_freq());
            return Fresh::Hit(entry);
        }
    }
    revalidate_key(entry, path, now)
}

/// [`revalidate`] through the cache key, as a miss computes it.
#[cold]
#[inline(never)]
fn revalidate_key<'a>(entry: ShmEntry<'a>, path: &[u8], now: i64) -> Fresh<'a> {
    let Some(key) = key_of(path) else {
        return Fresh::NoKey;
    };
    if entry.validation() == Some(key.validation) {
        entry.revalidated(now, ini::revalidate_freq());
        Fresh::Hit(entry)
    } else {
        Fresh::Stale(key)
    }
}

/// Set when the request ran zopt's optimizer or persisted a run-time form: both allocate
/// far more (several MB for a large generated parser) than a hit, which allocates nothing.
static HEAP_USED: AtomicBool = AtomicBool::new(false);

/// Set when the request stored something (a script, a run-time form, a linked class):
/// it touched pages of the segment and of the library that hits do not (see
/// [`end_of_request`]). Not set by a compile that stores nothing (a full segment), which
/// may come back on every request: dropping the pages would then cost every request their
/// faults.
static STORED: AtomicBool = AtomicBool::new(false);

/// Notes that this request stored into the cache (see [`STORED`]).
pub fn note_stored() {
    STORED.store(true, Ordering::Relaxed);
}

extern "C" {
    /// shim.c: glibc's `malloc_trim(0)` (nothing elsewhere).
    fn zopt_release_free_heap();
    /// shim.c: `madvise(MADV_DONTNEED)` of the segment `[seg, seg + len)` and of this
    /// library's read-only segments.
    fn zopt_release_mapped_pages(seg: *const u8, len: usize);
}

/// End of a request (post-deactivate): after a request that optimized or persisted
/// scripts, the C heap's free memory goes back to the system. Without it a php-fpm worker
/// kept what its first requests' compiles had used (about 6 MB of free heap after the
/// benchmark's ~420 scripts) mapped for the rest of its life.
///
/// After a request that stored something ([`STORED`]), the pages it touched and hits do
/// not need stop counting in the worker's resident set: the segment's (the entries it
/// wrote in zopt's own format, the string table it interned into, the run-time forms'
/// parts that no hit reads) and the library's code and read-only data (the optimizer's,
/// about 2 MB). Both are shared (the segment by
/// every worker, the library's file pages with the page cache), so this frees no memory
/// of the system; it makes a worker that compiled hold what a worker that only serves
/// hits holds, which maps again only the pages its hits read.
#[link_section = ".text.hot.zopt"]
pub fn end_of_request() {
    if HEAP_USED.swap(false, Ordering::Relaxed) {
        crate::pipeline::release_workspace();
        // SAFETY: malloc_trim only returns free pages; no allocation is in flight.
        unsafe { zopt_release_free_heap() };
    }
    if STORED.swap(false, Ordering::Relaxed) {
        let (seg, len) = shm().map_or((ptr::null(), 0), |shm| shm.bounds());
        // SAFETY: the segment is a shared mapping (dropping its page table entries keeps
        // its contents) and no lock of it is held between requests; the library's
        // read-only segments are never written.
        unsafe { zopt_release_mapped_pages(seg, len) };
    }
}

/// MSHUTDOWN: restores the hook and appends the counters to `zopt.cache_stats`.
///
/// # Safety
/// Called once from MSHUTDOWN, on PHP's thread.
pub unsafe fn shutdown() {
    flush_local_hits();
    let Some(&original) = ORIGINAL.get() else {
        return;
    };
    php::zend_compile_file = Some(original);
    if let Some(&original) = ORIGINAL_STREAM_OPEN.get() {
        php::zend_stream_open_function = Some(original);
    }
    if let Some(&original) = ORIGINAL_RESOLVE_PATH.get() {
        php::zend_resolve_path = Some(original);
    }
    if let Some(path) = ini::cache_stats() {
        let line = format!("{}\n", stats_json());
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            log(&format!(
                "cannot write cache stats to {}: {e}",
                path.display()
            ));
        }
    }
}

/// The cache's diagnostics go to stderr, as OPcache's own log does by default
/// (`opcache.error_log` unset): a program's output never changes because of the cache.
/// (`zopt.verify`'s findings are PHP warnings: verifying is for testing.)
fn log(message: &str) {
    eprintln!("zopt: {message}");
}

/// One line for `phpinfo()`: where the cache is and what it did in this process.
pub fn status() -> String {
    let mut parts = Vec::new();
    if let Some(shm) = SHM.get() {
        let s = shm.stats();
        parts.push(format!(
            "shared memory {} MB: {} scripts, {} of {} bytes used, {} wasted, {} hits, {} misses, {} full",
            s.size >> 20,
            s.entries,
            s.data_used,
            s.data_size,
            s.wasted,
            s.hits,
            s.misses,
            s.full
        ));
    }
    if let Some(cache) = CACHE.get() {
        let s = cache.stats();
        parts.push(format!(
            "{} ({}): {} hits, {} misses, {} rejected, {} stored",
            cache.dir().display(),
            cache.pack_status(),
            s.hits,
            s.misses,
            s.rejects_total(),
            s.stores
        ));
    }
    if parts.is_empty() {
        return "off (neither zopt.memory_consumption nor zopt.cache_dir set, or unusable)".into();
    }
    parts.push(format!(
        "{} compiled in this process",
        COUNTERS.compiles.get()
    ));
    parts.join("; ")
}

/// The shared-memory segment's counters (all processes) as JSON, `null` without one.
pub fn shm_json() -> serde_json::Value {
    flush_local_hits();
    let Some(shm) = SHM.get() else {
        return serde_json::Value::Null;
    };
    let s = shm.stats();
    let (slots_used, slots) = image::map_ptr_slots(shm);
    serde_json::json!({
        "map_ptr_slots": slots,
        "map_ptr_slots_used": slots_used,
        "size": s.size,
        "data_size": s.data_size,
        "data_used": s.data_used,
        "wasted": s.wasted,
        "strings_size": s.strings_size,
        "strings_used": s.strings_used,
        "strings": s.strings,
        "strings_full": s.strings_full,
        "scripts": s.entries,
        "hits": s.hits,
        "misses": s.misses,
        "stale": s.stale,
        "stores": s.stores,
        "full": s.full,
        "writer_deaths": s.writer_deaths,
        "invalidations": s.invalidations,
    })
}

/// The counters of this process (and the shared segment's) as one JSON object.
pub fn stats_json() -> serde_json::Value {
    flush_local_hits();
    let c = &COUNTERS;
    let mut line = serde_json::json!({
        "pid": std::process::id(),
        "compiles": c.compiles.get(),
        "compile_failures": c.compile_failures.get(),
        "served": served_total(),
        "shm_hits": c.shm_hits.get() + FORM_HITS.get(),
        "shm_store_failures": c.shm_store_failures.get(),
        "run_time_hits": c.run_time_hits.get() + FORM_HITS.get(),
        "run_time_stores": c.run_time_stores.get(),
        "run_time_refusals": c.run_time_refusals.get(),
        "linked_stores": c.linked_stores.get(),
        "image_hits": c.image_hits.get(),
        "image_stores": c.image_stores.get(),
        "image_rejects": c.image_rejects.get(),
        "image_refusals": c.image_refusals.get(),
        "uncacheable": c.uncacheable.get(),
        "load_failures": c.load_failures.get(),
        "served_ns": c.served_ns.get(),
        "other_ns": c.other_ns.get(),
        "shm": shm_json(),
    });
    let (hits, misses, rejects, stores, store_failures, rejected, pack) = match CACHE.get() {
        Some(cache) => {
            let s = cache.stats();
            let rejected: serde_json::Map<String, serde_json::Value> = RejectKind::ALL
                .iter()
                .filter(|&&kind| s.rejects(kind) > 0)
                .map(|&kind| (kind.name().to_string(), s.rejects(kind).into()))
                .collect();
            (
                s.hits,
                s.misses,
                s.rejects_total(),
                s.stores,
                s.store_failures,
                rejected,
                cache.pack_status().to_string(),
            )
        }
        None => Default::default(),
    };
    let o = line.as_object_mut().expect("an object");
    o.insert("hits".into(), hits.into());
    o.insert("misses".into(), misses.into());
    o.insert("rejects".into(), rejects.into());
    o.insert("stores".into(), stores.into());
    o.insert("store_failures".into(), store_failures.into());
    o.insert("rejected".into(), rejected.into());
    o.insert("pack".into(), pack.into());
    line
}

/// Each script in shared memory with its hits and size, keyed by path.
pub fn shm_scripts_json() -> serde_json::Value {
    flush_local_hits();
    let Some(shm) = SHM.get() else {
        return serde_json::Value::Null;
    };
    shm.entries()
        .map(|e| {
            (
                String::from_utf8_lossy(e.path()).into_owned(),
                serde_json::json!({ "hits": e.hits(), "size": e.size() }),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// `zopt_invalidate`: retires the script's entries (shared memory and file cache), with
/// `force` always, otherwise only when its source no longer matches (OPcache's rule).
/// True when the cache is on and the path names a file (one it can stat), whether or not
/// anything needed retiring, as `opcache_invalidate` answers.
pub fn invalidate(path: &[u8], force: bool) -> bool {
    if !enabled() {
        return false;
    }
    // The source's validation data, taken once for both levels.
    let Some(key) = key_of(path) else {
        return false;
    };
    if let Some(shm) = SHM.get() {
        if let Some(entry) = shm.find(path) {
            if force || entry.validation() != Some(key.validation) {
                shm.invalidate(path);
            }
        }
    }
    if let Some(cache) = CACHE.get() {
        if force || cache.lookup(&key).is_err() {
            // An I/O error leaves the entry, which a stale source makes a miss anyway.
            let _ = cache.invalidate(path);
        }
    }
    true
}

/// Whether zopt's cache is serving scripts in this process (a segment or a file cache,
/// the compile hook installed).
pub fn enabled() -> bool {
    ORIGINAL.get().is_some() && (SHM.get().is_some() || CACHE.get().is_some())
}

/// `zopt_reset`: retires every script of the shared-memory segment (all workers then
/// compile and store each one again on its next use). False without a segment: the file
/// cache validates each entry against its source and is cleared by `zopt cache clear`.
pub fn reset() -> bool {
    let Some(shm) = SHM.get() else {
        return false;
    };
    shm.invalidate_all();
    true
}

/// `zopt_compile_file`: compiles `filename` as an include without running it, so that
/// zopt's cache stores it (or, when cached already, binds its functions as an include
/// would), as `opcache_compile_file` does. False when it did not compile (a missing file
/// or a compile error, reported by PHP) or when zopt's cache is off (with a notice).
///
/// # Safety
/// Called from a PHP function's handler, on PHP's thread during a request.
pub unsafe fn compile_without_executing(filename: &[u8]) -> bool {
    if !enabled() {
        crate::notice("zopt's cache is off (neither zopt.memory_consumption nor zopt.cache_dir is set), can't compile file");
        return false;
    }
    let Ok(name) = std::ffi::CString::new(filename) else {
        crate::warning("zopt_compile_file(): the file name contains a NUL byte");
        return false;
    };
    zopt_compile_without_execution(name.as_ptr())
}

/// `zopt_is_script_cached`: in shared memory, or (without a segment) in the file cache.
pub fn is_cached(path: &[u8]) -> bool {
    match (SHM.get(), CACHE.get()) {
        (Some(shm), _) => shm.find(path).is_some(),
        (None, Some(cache)) => key_of(path).is_some_and(|k| cache.lookup(&k).is_ok()),
        (None, None) => false,
    }
}

/// What the hook decided; the fatal outcomes are raised by [`compile_file`] itself, whose
/// frame owns nothing when PHP's error handling longjmps out of it.
enum Outcome {
    Done(*mut zend_op_array),
    /// Boxed: an outcome fits in two registers.
    Fatal(Box<load::Fatal>),
    Bailout,
}

/// The address of [`compile_file`], the hook `zend_compile_file` points to unless another
/// extension wrapped it.
#[inline(always)]
pub(crate) fn compile_hook() -> *const std::ffi::c_void {
    compile_file as *const std::ffi::c_void
}

/// The `zend_compile_file` hook.
#[link_section = ".text.hot.zopt"]
unsafe extern "C" fn compile_file(
    handle: *mut zend_file_handle,
    type_: c_int,
) -> *mut zend_op_array {
    COMPILING.store(false, Ordering::Relaxed);
    // One call in TIMING_SAMPLE is timed (and counted TIMING_SAMPLE times): reading the
    // clock on every hit would cost a noticeable part of a hit.
    let timed = CALLS.bump() % TIMING_SAMPLE == 0;
    if !timed {
        // The common hit, untimed: nothing else on its way.
        match catch_unwind(AssertUnwindSafe(|| serve_run_time_form(handle))) {
            Ok(Some(Outcome::Done(op_array))) => return op_array,
            Ok(Some(outcome)) => return finish(handle, type_, Ok(outcome)),
            Ok(None) => {}
            Err(panic) => return finish(handle, type_, Err(panic)),
        }
    }
    compile_timed(handle, type_, timed)
}

/// [`compile_file`] but for an untimed hit of the run-time form: every other script (which
/// [`serve_run_time_form`] did not serve, `timed` false), and one call in
/// [`TIMING_SAMPLE`] (`timed`). In the hit's code (a sampled hit runs it): what a miss
/// needs is [`serve_any`], in the cold code.
#[link_section = ".text.hot.zopt"]
#[inline(never)]
unsafe fn compile_timed(
    handle: *mut zend_file_handle,
    type_: c_int,
    timed: bool,
) -> *mut zend_op_array {
    extern "C" {
        /// shim.c: CLOCK_MONOTONIC in nanoseconds (std's `Instant` is cold code).
        fn zopt_monotonic_ns() -> u64;
    }
    let start = if timed { zopt_monotonic_ns() } else { 0 };
    let served_before = served_total();
    // Untimed, the hit was tried already.
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if timed {
            serve(handle, type_)
        } else {
            serve_any(handle, type_)
        }
    }));
    if timed {
        let ns = zopt_monotonic_ns().saturating_sub(start) * TIMING_SAMPLE;
        if served_total() != served_before {
            COUNTERS.served_ns.add(ns);
        } else {
            COUNTERS.other_ns.add(ns);
        }
    }
    finish(handle, type_, outcome)
}

/// The hook's result from what it decided: a fatal outcome raised, a panic logged and the
/// file compiled as usual.
#[inline(always)]
unsafe fn finish(
    handle: *mut zend_file_handle,
    type_: c_int,
    outcome: std::thread::Result<Outcome>,
) -> *mut zend_op_array {
    match outcome {
        Ok(Outcome::Done(op_array)) => op_array,
        Ok(Outcome::Fatal(fatal)) => raise(fatal),
        Ok(Outcome::Bailout) => php::_zend_bailout(c"zopt cache.rs".as_ptr(), line!()),
        Err(panic) => compile_after_panic(handle, type_, &panic),
    }
}

/// A panic in the hook: logged, and the file compiled as usual.
#[cold]
#[inline(never)]
unsafe fn compile_after_panic(
    handle: *mut zend_file_handle,
    type_: c_int,
    panic: &Box<dyn std::any::Any + Send>,
) -> *mut zend_op_array {
    log(&format!(
        "internal error in the cache: {}; compiling as usual",
        crate::record::panic_message(panic)
    ));
    compile_plain(handle, type_)
}

/// `zend_error(E_ERROR)` with the file and line OPcache reports for the same error.
#[cold]
unsafe fn raise(fatal: Box<load::Fatal>) -> *mut zend_op_array {
    let cg = ptr::addr_of_mut!(php::compiler_globals);
    let e = Engine::new();
    (*cg).in_compilation = true;
    (*cg).compiled_filename = e.interned_string(fatal.filename.as_bytes());
    (*cg).zend_lineno = fatal.lineno as c_int;
    let message = std::ffi::CString::new(fatal.message.replace('\0', "\\0")).unwrap_or_default();
    drop(fatal);
    php::zend_error(php::E_ERROR as c_int, c"%s".as_ptr(), message.as_ptr());
    ptr::null_mut()
}

/// PHP's compiler as it would run without zopt (bailouts propagate: nothing of ours is
/// live).
unsafe fn compile_plain(handle: *mut zend_file_handle, type_: c_int) -> *mut zend_op_array {
    COUNTERS.compiles.bump();
    match ORIGINAL.get() {
        Some(original) => {
            // A bailout longjmps past the reset; `compile_file` clears the flag on entry
            // (it is never called from inside a compile), so the next include recovers.
            let was = COMPILING.swap(true, Ordering::Relaxed);
            let op_array = original(handle, type_);
            COMPILING.store(was, Ordering::Relaxed);
            op_array
        }
        None => ptr::null_mut(),
    }
}

unsafe fn serve(handle: *mut zend_file_handle, type_: c_int) -> Outcome {
    match serve_run_time_form(handle) {
        Some(outcome) => outcome,
        None => serve_any(handle, type_),
    }
}

/// The common hit, kept apart so that its code is small and contiguous (the whole hook is
/// several kilobytes, and a hit that runs through it misses the instruction cache on
/// every include): a file that is open or that `stream_open` left unopened, fresh in
/// shared memory, with a run-time form to bind. `None` for anything else, which
/// [`serve_any`] serves (looking the script up again if this found it without a form).
#[inline(always)]
unsafe fn serve_run_time_form(handle: *mut zend_file_handle) -> Option<Outcome> {
    let shm = shm()?;
    let opened = (*handle).opened_path;
    if opened.is_null() || !ini::shm_run_time_form() || ini::verify() || opcache_compiles() {
        return None;
    }
    let path = php::Reader::new().str(opened)?;
    if path.first() != Some(&b'/') {
        return None;
    }
    let (Fresh::Hit(entry), root) = fresh_for(shm, opened, path) else {
        return None;
    };
    // A plain include adds its opened path to the included files after this hook.
    give_hash(opened, entry);
    if root.is_null() || !image::usable(root) {
        return None;
    }
    replay_warnings(entry.view());
    let outcome = bind_form(root);
    entry.count_hit();
    FORM_HITS.bump();
    Some(outcome)
}

/// Binds the run-time form at `root` into the request, counted as a run-time-form hit.
unsafe fn bind_run_time_form(root: *const u8) -> Outcome {
    COUNTERS.run_time_hits.bump();
    bind_form(root)
}

/// Binds the run-time form at `root` into the request (see [`image::bind`]).
#[inline(always)]
unsafe fn bind_form(root: *const u8) -> Outcome {
    match image::bind(Engine::new(), root) {
        Ok(main) => Outcome::Done(main),
        Err(load::BindError::Fatal(f)) => Outcome::Fatal(f),
        Err(load::BindError::Bailout) => Outcome::Bailout,
    }
}

/// Counts a script served from shared memory.
#[inline(always)]
fn count_shm_hit(entry: ShmEntry<'_>) {
    entry.count_hit();
    PENDING_HITS.bump();
    COUNTERS.served.bump();
    COUNTERS.shm_hits.bump();
}

/// Every other compile: the other hits, the file cache, PHP's compiler.
#[cold]
#[inline(never)]
unsafe fn serve_any(handle: *mut zend_file_handle, type_: c_int) -> Outcome {
    let Some(&original) = ORIGINAL.get() else {
        return Outcome::Done(compile_plain(handle, type_));
    };
    if opcache_compiles() {
        if !WARNED_OPCACHE.swap(true, Ordering::Relaxed) {
            log("OPcache is caching scripts, so zopt's cache is not used \
                 (disable opcache.enable / opcache.enable_cli to use zopt's cache)");
        }
        COUNTERS.uncacheable.bump();
        return Outcome::Done(compile_plain(handle, type_));
    }
    let path = match open(handle, type_) {
        Opened::Path(path) => path,
        Opened::Failed => return Outcome::Done(ptr::null_mut()),
        Opened::Uncacheable => {
            COUNTERS.uncacheable.bump();
            return Outcome::Done(compile_plain(handle, type_));
        }
    };
    let shm = SHM.get();

    // Level 1: shared memory. The source is checked at most every revalidate_freq seconds
    // (never with validate_timestamps=0), as OPcache does.
    let mut key = None;
    if let Some(shm) = shm {
        match fresh_for(shm, path_string(handle), path).0 {
            Fresh::Hit(entry) => {
                if let Some(outcome) = serve_entry(path, entry) {
                    return outcome;
                }
            }
            Fresh::Stale(k) => {
                shm.count_stale();
                key = Some(k);
            }
            Fresh::Missing => shm.count_miss(),
            Fresh::NoKey => {
                COUNTERS.uncacheable.bump();
                return Outcome::Done(compile_plain(handle, type_));
            }
        }
    }
    // The run-time image found while the include resolved the path, if any.
    let last = if shm.is_none() {
        last_image_for(path)
    } else {
        None
    };
    let (key, kept) = match last {
        Some(last) => (Some(last.key), Some(last.found)),
        None => (key, None),
    };
    let Some(key) = key.or_else(|| key_of(path)) else {
        COUNTERS.uncacheable.bump();
        return Outcome::Done(compile_plain(handle, type_));
    };

    // Level 2: the file cache (loose entries and packs); a hit fills shared memory.
    if let Some(cache) = CACHE.get() {
        // Without a segment, the script's run-time image when it has one: relocated, not
        // rebuilt. With one, the segment persists its own run-time form.
        let mut make_image = false;
        if images_enabled() {
            match serve_image(cache, &key, kept) {
                Ok(outcome) => {
                    COUNTERS.served.bump();
                    COUNTERS.image_hits.bump();
                    return outcome;
                }
                Err(ImageMiss::Refused) => {
                    COUNTERS.image_refusals.bump();
                }
                Err(ImageMiss::Missing) => make_image = true,
                Err(ImageMiss::Bad(why)) => {
                    COUNTERS.image_rejects.bump();
                    log(&format!(
                        "the run-time image of {} is not used ({why}); serving its entry",
                        String::from_utf8_lossy(&key.path)
                    ));
                    make_image = true;
                }
            }
        }
        if let Ok(hit) = cache.lookup(&key) {
            if let Some(shm) = shm {
                match shm.store(&key, hit.body()) {
                    Ok(entry) => {
                        entry.revalidated(unix_now(), ini::revalidate_freq());
                        note_stored();
                        drop(hit);
                        if let Some(outcome) = serve_entry(path, entry) {
                            return outcome;
                        }
                        return compile_and_store(original, &key, handle, type_);
                    }
                    Err(e) => shm_store_failed(&key, &e),
                }
            }
            let image_for = make_image.then_some((cache, &key));
            let served = serve_hit(hit.view(), std::iter::empty(), false, image_for);
            drop(hit);
            match served {
                Ok(outcome) => {
                    COUNTERS.served.bump();
                    return outcome;
                }
                Err(e) => {
                    COUNTERS.load_failures.bump();
                    log(&format!(
                        "cannot serve {} from the cache ({e}); compiling it",
                        String::from_utf8_lossy(&key.path)
                    ));
                }
            }
        }
    }
    // Level 3: PHP's compiler and zopt's optimizer, stored in both levels.
    compile_and_store(original, &key, handle, type_)
}

/// Serves a shared-memory entry: its strings are the segment's interned copies. `None` when
/// it could not be built (counted and logged; the caller compiles).
unsafe fn serve_entry(path: &[u8], entry: ShmEntry<'_>) -> Option<Outcome> {
    match serve_shm(entry, entry.image()) {
        Ok(outcome) => {
            count_shm_hit(entry);
            Some(outcome)
        }
        Err(e) => {
            COUNTERS.load_failures.bump();
            log(&format!(
                "cannot serve {} from shared memory ({e}); compiling it",
                String::from_utf8_lossy(path)
            ));
            None
        }
    }
}

/// A full segment is normal operation (it stops caching, OPcache says so once); anything
/// else is logged.
fn shm_store_failed(key: &CacheKey, e: &ShmStoreError) {
    static WARNED_FULL: AtomicBool = AtomicBool::new(false);
    COUNTERS.shm_store_failures.bump();
    match e {
        ShmStoreError::Full | ShmStoreError::TableFull => {
            if !WARNED_FULL.swap(true, Ordering::Relaxed) {
                log(&format!(
                    "{e}: new scripts are not added to shared memory (raise \
                     zopt.memory_consumption or zopt.max_accelerated_files)"
                ));
            }
        }
        _ => log(&format!(
            "{} is not cached in shared memory: {e}",
            String::from_utf8_lossy(&key.path)
        )),
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The cache key of the file at `path` now (`None`: not a regular file we can stat).
fn key_of(path: &[u8]) -> Option<CacheKey> {
    CacheKey::for_file(
        Path::new(std::ffi::OsStr::from_bytes(path)),
        ini::cache_validation(),
    )
    .ok()
}

/// Whether OPcache caches scripts in this process: loaded, `opcache.enable` on and, under
/// the CLI, `opcache.enable_cli` on (what `accel_startup` checks). Decided at the first
/// compile, when every extension has started.
fn opcache_caches() -> bool {
    static ACTIVE: OnceLock<bool> = OnceLock::new();
    *ACTIVE.get_or_init(|| {
        let ini = |name: &std::ffi::CStr| {
            // SAFETY: reads a registered INI value (0 when the setting does not exist, i.e.
            // OPcache is not loaded), on PHP's thread.
            unsafe { php::zend_ini_long(name.as_ptr(), name.count_bytes(), 0) != 0 }
        };
        // SAFETY: sapi_module is set before any script is compiled; its name is a C string.
        let sapi = unsafe { std::ffi::CStr::from_ptr(php::sapi_module.name) };
        let cli = matches!(sapi.to_bytes(), b"cli" | b"phpdbg");
        ini(c"opcache.enable") && (!cli || ini(c"opcache.enable_cli"))
    })
}

/// Whether OPcache caches scripts itself (our hook may sit before or after its own), or
/// is compiling for its cache (or preloading): zopt's cache stays out of the way.
unsafe fn opcache_compiles() -> bool {
    let cg = ptr::addr_of!(php::compiler_globals);
    opcache_caches()
        || ((*cg).compiler_options & php::ZEND_COMPILE_DELAYED_BINDING != 0
            && !OWN_OPTIONS.load(Ordering::Relaxed))
}

/// Whether the file behind `handle` could be opened; like OPcache, a failure is reported
/// here (PHP's "Failed opening ... for inclusion") and nothing is compiled.
enum Opened<'a> {
    /// The resolved path of a plain file: the handle's own string, alive as long as the
    /// handle (the whole compile hook).
    Path(&'a [u8]),
    /// Open, but not a plain file we can validate (stdin, `-r` code, a stream wrapper).
    Uncacheable,
    Failed,
}

/// Opens the file behind `handle` as OPcache does (resolving the include path) and returns
/// its resolved path.
unsafe fn open<'a>(handle: *mut zend_file_handle, type_: c_int) -> Opened<'a> {
    // A name with its opened_path already set is one `stream_open` found in shared memory
    // and left unopened; PHP's compiler opens it itself if it must compile it after all.
    if u32::from((*handle).type_) == php::ZEND_HANDLE_FILENAME
        && (*handle).opened_path.is_null()
        && php::zend_stream_open(handle) != php::SUCCESS
    {
        let eg = ptr::addr_of!(php::executor_globals);
        if (*eg).exception.is_null() {
            let message = if type_ == php::ZEND_REQUIRE as c_int {
                php::ZMSG_FAILED_REQUIRE_FOPEN
            } else {
                php::ZMSG_FAILED_INCLUDE_FOPEN
            };
            let filename = php::Reader::new()
                .str((*handle).filename)
                .unwrap_or_default();
            let filename = std::ffi::CString::new(filename).unwrap_or_default();
            php::zend_message_dispatcher(message as php::zend_long, filename.as_ptr().cast());
        }
        return Opened::Failed;
    }
    // A stream wrapper's script (`php://filter/read=string.toupper/resource=a.php`) is not
    // the file its opened path names: compiled each time, as OPcache does (which caches
    // only `file://` and `phar://` ones).
    let name = php::Reader::new().str((*handle).filename);
    if name.is_some_and(|n| crate::record::is_stream_path(n) && !n.starts_with(b"file://")) {
        return Opened::Uncacheable;
    }
    let Some(path) = php::Reader::new().str(path_string(handle)) else {
        return Opened::Uncacheable;
    };
    if path.first() != Some(&b'/') {
        return Opened::Uncacheable; // "Standard input code", "-": not a file we can stat
    }
    Opened::Path(path)
}

/// The string of the path [`open`] takes for `handle`: its opened path, or its name.
///
/// # Safety
/// `handle` is the live handle [`open`] opened.
unsafe fn path_string(handle: *mut zend_file_handle) -> *mut php::zend_string {
    if (*handle).opened_path.is_null() {
        (*handle).filename
    } else {
        (*handle).opened_path
    }
}

/// Why a script was not served from its run-time image.
enum ImageMiss {
    /// There is none (or it is stale): the entry is served, and its image made.
    Missing,
    /// The script has no image (recorded when one could not be made).
    Refused,
    /// There is one, and it cannot be used.
    Bad(String),
}

/// Serves the script `key` names from its run-time image in the file cache
/// ([`file_image::load`], then bound as a shared-memory run-time form is).
unsafe fn serve_image(
    cache: &FileCache,
    key: &CacheKey,
    kept: Option<zend_cache::file_cache::CachedImage>,
) -> Result<Outcome, ImageMiss> {
    let found = match kept.map_or_else(|| cache.lookup_image(key), Ok) {
        Ok(found) => found,
        Err(zend_cache::Miss::NotFound)
        | Err(zend_cache::Miss::Rejected(zend_cache::Reject::Stale)) => {
            return Err(ImageMiss::Missing)
        }
        Err(zend_cache::Miss::Rejected(r)) => return Err(ImageMiss::Bad(r.to_string())),
    };
    let e = Engine::new();
    let root = match file_image::load(e, found.body()) {
        Ok(root) => root,
        Err(file_image::LoadError::Refused) => return Err(ImageMiss::Refused),
        Err(file_image::LoadError::Bad(why)) => return Err(ImageMiss::Bad(why)),
    };
    drop(found);
    Ok(match image::bind(e, root) {
        Ok(main) => Outcome::Done(main),
        Err(load::BindError::Fatal(f)) => Outcome::Fatal(f),
        Err(load::BindError::Bailout) => Outcome::Bailout,
    })
}

/// Makes and stores the run-time image of the built, not yet bound script of `view` (or the
/// record that it has none, with the reason logged under `ZOPT_DEBUG_RUN_TIME_FORM`).
/// A script PHP's compiler warned about has none: an image hit reads nothing of the entry,
/// and its hits replay what the entry recorded (`zopt.record_warnings`).
unsafe fn store_image(
    cache: &FileCache,
    key: &CacheKey,
    built: &load::Built,
    view: ScriptView<'_>,
) {
    let made = if view.warnings().len() != 0 {
        Err("PHP's compiler warned about it (its hits replay the entry's warnings)".to_string())
    } else {
        file_image::make(built, view.compiler_halt_offset())
    };
    let body = match made {
        Ok(body) => body,
        Err(why) => {
            if std::env::var_os("ZOPT_DEBUG_RUN_TIME_FORM").is_some() {
                log(&format!(
                    "{} gets no run-time image: {why}",
                    String::from_utf8_lossy(&key.path)
                ));
            }
            file_image::refused_body()
        }
    };
    match cache.store_image(key, &body) {
        Ok(_) => {
            COUNTERS.image_stores.bump();
        }
        Err(e) => log(&format!(
            "cannot store the run-time image of {}: {e}",
            String::from_utf8_lossy(&key.path)
        )),
    }
}

/// A validated entry: build, bind, and with `zopt.verify` check what was loaded against
/// the entry's model. With `image_for`, the built script's run-time image is stored in
/// that file cache before it is bound.
unsafe fn serve_hit(
    view: ScriptView<'_>,
    shared_strings: impl Iterator<Item = *const u8>,
    checked: bool,
    image_for: Option<(&FileCache, &CacheKey)>,
) -> Result<Outcome, String> {
    let e = Engine::new();
    let built = load::build(e, view, shared_strings, checked).map_err(|err| err.0)?;
    if let Some((cache, key)) = image_for {
        store_image(cache, key, &built, view);
    }
    let model = ini::verify().then(|| view.to_script());
    replay_warnings(view);
    match load::bind(e, built, view.compiler_halt_offset(), model.as_ref()) {
        Ok(main) => Ok(Outcome::Done(main)),
        Err(load::BindError::Fatal(f)) => Ok(Outcome::Fatal(f)),
        Err(load::BindError::Bailout) => Ok(Outcome::Bailout),
    }
}

/// A shared-memory hit: bound from the script's run-time form when the segment has it
/// ([`image::instantiate`]: nothing rebuilt), else built from the entry — and then, unless
/// `zopt.shm_run_time_form=0`, persisted in run-time form for every later hit of every
/// worker ([`image::persist`], under the segment's writer lock, before binding changes
/// anything).
unsafe fn serve_shm(entry: ShmEntry<'_>, image: Option<*const u8>) -> Result<Outcome, String> {
    let e = Engine::new();
    // A form whose map_ptr slots this process has not extended to yet is rebuilt instead,
    // this once.
    let image = image.filter(|&root| ini::shm_run_time_form() && image::usable(root));
    let verify = ini::verify();
    let view = entry.view();
    if let (Some(root), false) = (image, verify) {
        replay_warnings(view);
        return Ok(bind_run_time_form(root));
    }
    let built = match image {
        Some(root) => {
            COUNTERS.run_time_hits.bump();
            image::instantiate(e, root)
        }
        None => {
            let checked = entry.is_checked();
            let built =
                load::build(e, view, entry.interned_strings(), checked).map_err(|err| err.0)?;
            // The entry's bytes passed the write-back's checks: later builds skip them.
            if !checked {
                entry.mark_checked();
            }
            if ini::shm_run_time_form() && !entry.image_refused() {
                persist_run_time_form(entry, &built);
            }
            built
        }
    };
    let model = verify.then(|| view.to_script());
    replay_warnings(view);
    match load::bind(e, built, view.compiler_halt_offset(), model.as_ref()) {
        Ok(main) => Ok(Outcome::Done(main)),
        Err(load::BindError::Fatal(f)) => Ok(Outcome::Fatal(f)),
        Err(load::BindError::Bailout) => Ok(Outcome::Bailout),
    }
}

/// Persists `built` (the script of `entry`, not bound yet) in run-time form into the
/// segment. A script that cannot be is marked so (it stays on the rebuild path); with
/// `ZOPT_DEBUG_RUN_TIME_FORM` set in the environment the reason is logged.
unsafe fn persist_run_time_form(entry: ShmEntry<'_>, built: &load::Built) {
    let Some(shm) = SHM.get() else {
        return;
    };
    HEAP_USED.store(true, Ordering::Relaxed);
    let mut why = None;
    let stored = shm.attach_image(entry, |w| {
        let persisted = image::persist(
            built,
            entry.view().compiler_halt_offset(),
            entry.validation(),
            w,
        );
        pause_if_armed("ZOPT_TEST_PAUSE_RUN_TIME_FORM");
        match persisted {
            Ok(root) => Some(root),
            Err(e) => {
                why = Some(e);
                None
            }
        }
    });
    match stored {
        Ok(true) => {
            COUNTERS.run_time_stores.bump();
            note_stored();
        }
        Ok(false) => {
            if let Some(why) = why {
                COUNTERS.run_time_refusals.bump();
                if std::env::var_os("ZOPT_DEBUG_RUN_TIME_FORM").is_some() {
                    log(&format!(
                        "{} stays on the rebuild path: {why}",
                        String::from_utf8_lossy(entry.path())
                    ));
                }
            }
        }
        Err(e) => log(&format!("cannot persist a run-time form: {e}")),
    }
}

/// A miss: compile as OPcache does, capture, optimize, store.
unsafe fn compile_and_store(
    original: CompileFile,
    key: &CacheKey,
    handle: *mut zend_file_handle,
    type_: c_int,
) -> Outcome {
    let cg = ptr::addr_of_mut!(php::compiler_globals);
    let functions_before = (*(*cg).function_table).nNumUsed;
    let classes_before = (*(*cg).class_table).nNumUsed;
    let options = (*cg).compiler_options;
    // Compiled for the file cache as OPcache compiles for `opcache.file_cache`: the file
    // outlives this process, so neither the compiler nor the optimizer substitutes what
    // only the running process knows (`PHP_SAPI`, `PHP_BINARY`, `php_uname()`).
    (*cg).compiler_options |= OPCACHE_COMPILER_OPTIONS
        | if CACHE.get().is_some() {
            php::ZEND_COMPILE_WITH_FILE_CACHE
        } else {
            0
        };
    COUNTERS.compiles.bump();
    let mut bailed_out = false;
    let was = COMPILING.swap(true, Ordering::Relaxed);
    let own_options = OWN_OPTIONS.swap(true, Ordering::Relaxed);
    let recording = Recording::begin();
    // Guarded: a bailout comes back here, so the state above is always restored.
    let op_array = zopt_guarded_compile_file(original, handle, type_, &mut bailed_out);
    let warnings = recording.end();
    OWN_OPTIONS.store(own_options, Ordering::Relaxed);
    COMPILING.store(was, Ordering::Relaxed);
    (*cg).compiler_options = options;
    if bailed_out {
        COUNTERS.compile_failures.bump();
        return Outcome::Bailout;
    }
    if op_array.is_null() {
        COUNTERS.compile_failures.bump();
        return Outcome::Done(op_array); // a parse error: the exception is pending
    }

    // OPcache's zend_accel_move_user_functions / _classes, as a view: the entries stay in
    // the global tables, the script's tables only point at them. Only this file's: a file
    // compiled meanwhile (included by a user error handler the compiler called, or eval'd
    // code) declared the others, and they are not part of this script.
    let mut view = Box::new(zend_script::default());
    view.main_op_array = *op_array;
    view.filename = view.main_op_array.filename;
    let r = php::Reader::new();
    let file = r.str(view.filename);
    copy_new_entries(
        &mut view.function_table,
        (*cg).function_table,
        functions_before,
        |zv| {
            let func = r.deref((*zv).value.func);
            func.and_then(|f| r.function(f).1)
                .map(|oa| r.str(oa.filename))
                == Some(file)
        },
    );
    copy_new_entries(
        &mut view.class_table,
        (*cg).class_table,
        classes_before,
        |zv| match r.deref((*zv).value.ce) {
            Some(ce) if ce.type_ as u8 == php::ZEND_USER_CLASS as u8 => {
                r.str(r.class_info(ce).filename) == file
            }
            _ => false,
        },
    );

    // Listed as compiled, before the optimizer may remove a declaration it finds unreachable.
    let mut early = load::early_bindings(op_array);
    let stored = capture_optimize_store(key, &mut view, warnings);
    *op_array = view.main_op_array;
    load::release_table(&mut view.function_table);
    load::release_table(&mut view.class_table);
    if let Err(why) = stored {
        COUNTERS.uncacheable.bump();
        log(&format!(
            "{} is not cached: {why}",
            String::from_utf8_lossy(&key.path)
        ));
    }
    if !early.is_empty() {
        load::finalize_early_bindings(&mut early, op_array);
        if let Err(()) =
            load::do_delayed_early_binding((*op_array).filename, &early, ptr::null_mut())
        {
            return Outcome::Bailout;
        }
    }
    Outcome::Done(op_array)
}

/// PHP's error recording (`EG(record_errors)`) around one compile, as `opcache_compile_file`
/// does with `opcache.record_warnings`: every diagnostic is still emitted as usual, and also
/// kept for the entry. Always on (whatever `zopt.record_warnings` says, which only decides
/// whether hits replay them), so that an entry says the same in every process. The state of
/// an enclosing recording is set aside and restored: a user error handler that includes a
/// file while the compiler reports something compiles that file inside this compile.
struct Recording {
    record_errors: bool,
    num_errors: u32,
    errors: *mut *mut php::zend_error_info,
}

impl Recording {
    unsafe fn begin() -> Self {
        let eg = ptr::addr_of_mut!(php::executor_globals);
        let outer = Recording {
            record_errors: (*eg).record_errors,
            num_errors: (*eg).num_errors,
            errors: (*eg).errors,
        };
        (*eg).record_errors = true;
        (*eg).num_errors = 0;
        (*eg).errors = ptr::null_mut();
        outer
    }

    /// What was recorded since [`Recording::begin`] (freed in PHP), and the enclosing
    /// recording's state back.
    unsafe fn end(self) -> Vec<zend_ir::ErrorInfo> {
        let eg = ptr::addr_of_mut!(php::executor_globals);
        let r = php::Reader::new();
        let mut recorded = Vec::with_capacity((*eg).num_errors as usize);
        for i in 0..(*eg).num_errors as usize {
            let info = &**(*eg).errors.add(i);
            recorded.push(zend_ir::ErrorInfo {
                type_: info.type_ as u32,
                lineno: info.lineno,
                filename: zend_ir::PhpStr(r.str(info.filename).unwrap_or_default().to_vec()),
                message: zend_ir::PhpStr(r.str(info.message).unwrap_or_default().to_vec()),
            });
        }
        php::zend_free_recorded_errors();
        (*eg).record_errors = self.record_errors;
        (*eg).num_errors = self.num_errors;
        (*eg).errors = self.errors;
        recorded
    }
}

/// With `zopt.record_warnings`, emits again what PHP's compiler said when it compiled the
/// script an entry holds, as OPcache's `replay_warnings` does on a hit (through
/// `zend_error_at`, so `error_reporting`, handlers and display settings apply as they do
/// now). Called by every hit that binds a script, before it binds it.
#[inline(always)]
unsafe fn replay_warnings(view: ScriptView<'_>) {
    if ini::record_warnings() {
        emit_warnings(view);
    }
}

#[cold]
#[inline(never)]
unsafe fn emit_warnings(view: ScriptView<'_>) {
    let e = Engine::new();
    for w in view.warnings() {
        let filename = e.new_string(w.filename());
        // Up to a NUL byte, as OPcache's "%s" of the message reads it.
        let message = w.message();
        let message = &message[..message
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(message.len())];
        let message = std::ffi::CString::new(message).unwrap_or_default();
        php::zend_error_at(
            w.type_() as c_int,
            filename,
            w.lineno(),
            c"%s".as_ptr(),
            message.as_ptr(),
        );
        e.release_string(filename);
    }
}

/// Runs the freshly compiled script in `view` through zopt's optimizer (written back only
/// when it changed anything) and stores the result: in shared memory (two-phase: the exact
/// size, then the script persisted straight into one allocation of the segment) and in
/// the file cache.
unsafe fn capture_optimize_store(
    key: &CacheKey,
    view: &mut zend_script,
    warnings: Vec<zend_ir::ErrorInfo>,
) -> Result<(), String> {
    HEAP_USED.store(true, Ordering::Relaxed);
    let mut output = transform::rewrite(view, ini::Mode::Optimize, false, CACHE.get().is_some())?;
    output.warnings = warnings;
    if let Some(shm) = SHM.get() {
        let plan = zend_cache::persist_calc(&output).map_err(|e| e.to_string())?;
        let stored = shm.store_with(key, plan.size(), |out| {
            // A failure leaves the allocation invalid: store_with then refuses it.
            let _ = zend_cache::persist_into(&output, &plan, out);
            pause_if_armed("ZOPT_TEST_PAUSE_STORE");
        });
        match stored {
            Ok(entry) => {
                entry.revalidated(unix_now(), ini::revalidate_freq());
                note_stored();
            }
            Err(e) => shm_store_failed(key, &e),
        }
    }
    if let Some(cache) = CACHE.get() {
        cache.store(key, &output).map_err(|e| e.to_string())?;
        note_stored();
    }
    Ok(())
}

/// Fault injection for the tests: when the environment variable `var` names a file and that
/// file exists, the first writer that sees it removes it and sleeps for 60 s while it holds
/// the segment's writer lock, its allocation written but not published, so that a test can
/// kill the worker mid-store: `ZOPT_TEST_PAUSE_STORE` in a store,
/// `ZOPT_TEST_PAUSE_RUN_TIME_FORM` while persisting a run-time form.
fn pause_if_armed(var: &str) {
    let Some(marker) = std::env::var_os(var) else {
        return;
    };
    if std::fs::remove_file(&marker).is_ok() {
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

/// Makes `dst` a table lending every string-keyed entry of `src` from bucket `from` on that
/// `declared_here` accepts.
unsafe fn copy_new_entries(
    dst: *mut HashTable,
    src: *mut HashTable,
    from: u32,
    declared_here: impl Fn(*mut php::zval) -> bool,
) {
    load::init_table(dst, 8);
    for (key, value) in load::entries(&*src, from) {
        if !key.is_null() && declared_here(value) {
            php::zend_hash_add(dst, key, value);
        }
    }
}
