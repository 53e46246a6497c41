//! zopt's opcode cache: persisted op_arrays, a validated file cache, and the backend API
//! the zopt PHP extension serves scripts from.
//!
//! # What it mirrors
//!
//! - `ext/opcache/zend_persist_calc.c` and `zend_persist.c`: [`persist_calc`] computes the
//!   exact size of a script's persisted form (deduplicating its strings, as OPcache interns
//!   them), and [`persist_into`] writes the script into one buffer of exactly that size,
//!   with offsets instead of pointers. [`persist()`] does both.
//! - `zend_file_cache.c`: [`FileCache`] keeps one entry per script under a directory, with
//!   a header (magic, format version, system id, checksum, lengths) in front of the
//!   persisted script (see [`entry`]). Lookups read an entry with one `read()` when it is
//!   small and map it with memmap2 when it is large ([`ReadMode`]; both are measured by the
//!   bench), and validate it completely before use. `file_cache::pack` gathers a
//!   directory's entries into one immutable file (see [`pack`]) that each process maps
//!   once: lookups then find an entry by binary search in the mapped index, with no file
//!   opened per script, and serve it zero-copy from the mapping after the same checks.
//! - `zend_shared_alloc.c` and `zend_accelerator_hash.c`: [`ShmCache`] (module [`shm`]) is
//!   one shared-memory segment (`MAP_SHARED | MAP_ANONYMOUS`, mapped before a server forks
//!   its workers) holding a path-keyed table of validated bodies, read without locks, with
//!   a robust process-shared writer mutex, an interned strings area in PHP's `zend_string`
//!   layout, and full-memory refusal that keeps serving. It is the only module with
//!   `unsafe` beyond the mmap calls.
//! - [`region`]: the memory run-time images are loaded into, a bump region of 2 MiB chunks
//!   that may be huge pages, rewound at each request's end (`zend_arena` with large pages).
//! - `ZendAccelerator.c`'s system id and timestamp validation: [`SystemId`] (zopt version,
//!   PHP version, opcode-table hash, optimization level) and [`CacheKey`] (script path and
//!   mtime+size or content hash, [`ValidationMode`]).
//!
//! # Guarantees
//!
//! - **Exact two-phase persist**: the buffer phase 2 fills is exactly the size phase 1
//!   computed, allocated once; phase 2 checks it ended exactly at the end (and panics on a
//!   mismatch, which would be a bug: tests check every fixture, the corpus and generated
//!   scripts).
//! - **Lossless**: `load(&persist(s)?) == s` for every [`zend_ir::Script`] within the
//!   nesting limits ([`layout::MAX_VALUE_DEPTH`], [`layout::MAX_FUNC_NESTING`]; deeper
//!   scripts are refused by [`persist()`], never written).
//! - **Validated before use**: [`load::validate`] checks every offset, length, string
//!   reference, enum and padding byte of a body, without allocating and in time linear in
//!   its size, and accepts only the canonical layout (records cannot overlap or share, so
//!   decoding cannot blow up). Loading never panics and there is no `unsafe` except the
//!   two mmap calls (an entry file, a pack), the shared-memory segment ([`shm`]), the
//!   read into the thread's read buffer and the [`region`]'s mappings. A
//!   lookup returns an entry only after the header, checksum (xxh3-64), system id, path,
//!   validation data and the whole body have been checked; anything else is a miss with a
//!   [`Reject`] reason. Shared-memory entries are validated once, before they are
//!   published.
//! - **Zero-copy reads**: [`ScriptView`] reads a validated body in place (op records are
//!   `zend_op` without the handler, literal records are zvals, 4/8-aligned) — iterating the
//!   ops of a cached script allocates nothing.
//! - **Measured**: `cargo bench -p zend-cache` loads a real corpus from this cache and from
//!   OPcache's own file cache in the same run and prints the ratios (see
//!   `benches/cache.rs` for the method).
//! - **Atomic, multi-process**: entries and packs are written to a temporary file, fsynced
//!   and renamed into place, never modified in place; any number of processes can store and
//!   look up in one directory concurrently and never see a torn entry.
//! - **Bounded**: an optional size limit, enforced by evicting the oldest entries (see
//!   [`file_cache`]).
//!
//! # Serving scripts from PHP (the zopt extension)
//!
//! The zopt extension (crate `zopt-php`, `zopt.cache_dir=DIR`) owns one [`FileCache`] per
//! process, opened at startup with `SystemId::new(PHP_VERSION, zopt.optimization_level)`
//! and the process's differences from the optimizer's tables. Its `zend_compile_file` hook
//! opens the file as OPcache does, takes the [`CacheKey`] (the resolved path and the
//! file's validation data *before* compiling) and looks it up:
//!
//! - on a hit it builds PHP's op_arrays and classes from the entry — the code of each
//!   op_array read in place through [`OpArrayView`] (op records are `zend_op` minus the
//!   handler, literal records are zvals, each distinct string interned once), the rest from
//!   [`ScriptView::to_script_without_code`] — binds them as OPcache's
//!   `zend_accel_load_script` does, and returns the main op_array: PHP's compiler is not
//!   called;
//! - on a miss it compiles with OPcache's compiler options, captures and optimizes the
//!   script and calls [`CacheBackend::store`] with the key taken before compiling (a file
//!   changed meanwhile then yields a stale entry, never a wrong one).
//!
//! [`CacheBackend::stats`] (hits, misses, rejects by [`RejectKind`], stores) are part of the
//! extension's counters (`zopt.cache_stats`). `zopt cache warm` fills the same directory
//! ahead of time (same system id when run with the same PHP and `--optimization-level`).
//!
//! # Using it
//!
//! ```no_run
//! use zend_cache::{CacheBackend, CacheKey, FileCache, FileCacheConfig, SystemId, ValidationMode};
//! # fn run(script: &zend_ir::Script) -> std::io::Result<()> {
//! let cache = FileCache::open("/var/cache/zopt", SystemId::new("8.2.36", 0x7FFEBFFF), FileCacheConfig::default())?;
//! let key = CacheKey::for_file(std::path::Path::new("/srv/app/index.php"), ValidationMode::MtimeSize)?;
//! match cache.lookup(&key) {
//!     Ok(hit) => {
//!         for op in hit.view().main_op_array().ops() {
//!             let _ = op.opcode();
//!         }
//!     }
//!     Err(miss) => {
//!         eprintln!("miss: {miss}");
//!         cache.store(&key, script).expect("store");
//!     }
//! }
//! # Ok(()) }
//! ```

pub mod backend;
pub mod entry;
pub mod file_cache;
pub mod image_body;
pub mod layout;
pub mod load;
pub mod memory;
pub mod pack;
pub mod persist;
pub mod region;
pub mod shm;
pub mod system;

pub use backend::{CacheBackend, CachedScript, Miss, Stats, StoreError, StoreInfo};
pub use entry::{Reject, RejectKind};
pub use file_cache::{FileCache, FileCacheConfig, PackStatus, ReadMode};
pub use load::{
    load, validate, BodyError, BodyErrorKind, BodyInfo, OpArrayView, OpView, ScriptView,
    WarningView,
};
pub use memory::MemoryCache;
pub use persist::{persist, persist_calc, persist_into, PersistError, PersistPlan};
pub use shm::{ImageWriter, ShmCache, ShmConfig, ShmEntry, ShmLookup, ShmStats, ShmStoreError};
pub use system::{opcode_table_hash, CacheKey, SystemId, Validation, ValidationMode};
