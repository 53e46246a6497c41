//! Scripts in PHP's run-time form in the shared-memory segment: what OPcache's
//! `zend_persist.c` keeps for a script, and what a hit binds without rebuilding anything.
//!
//! # What is persisted
//!
//! The first shared-memory hit of a script (in any worker) builds it as today ([`load`]:
//! op_arrays in `pass_two()` form, classes through the engine's declaration API), and
//! before binding it copies those engine structures into the segment
//! ([`zend_cache::ShmCache::attach_image`], under the writer lock), as `zend_persist.c`
//! copies a compiled script:
//!
//! - every op_array (main, functions, methods, closures): the `zend_op_array` itself, its
//!   opcodes with their handlers and literals in one block (constant operands and jump
//!   targets are relative in 64-bit PHP 8.2 builds, so the block is moved as it is), CV
//!   names, `arg_info` with types, live ranges, try/catch, the static variables' defaults,
//!   the dynamic function definitions; `refcount` NULL, so that `destroy_op_array` never
//!   frees any of it (OPcache's persisted op_arrays have no refcount either);
//! - every class: the `zend_class_entry` with its method, property and constant tables
//!   (buckets and values), default property and static member tables, the
//!   `properties_info_table`, interface and trait names, trait aliases and precedences;
//! - attributes (of functions, classes, properties, constants) as immutable tables;
//! - every value as PHP's immutable form: strings in the segment's interned strings area,
//!   arrays `IS_ARRAY_IMMUTABLE` (refcount 2, never released), constant-expression ASTs
//!   `GC_IMMUTABLE`, zvals holding them not refcounted.
//!
//! Classes and closures' definitions are immutable (`ZEND_ACC_IMMUTABLE`), as
//! `zend_persist_class_entry` and `zend_persist_op_array` leave them: what PHP writes per
//! request lives in `map_ptr` slots handed out by the segment ([`activate_map_ptr_slots`]) — the
//! run-time cache and static variables of each method of a linked class and of each
//! closure definition, a linked class's static members and mutable data (its constants
//! and default properties once evaluated). The methods of an unlinked class (one with a
//! parent, interfaces or traits) have none: PHP's `zend_lazy_class_load` copies them before
//! it links the class. All classes are `ZEND_ACC_CACHED` ("stored in opcache"): their
//! names, interface names and trait data are not theirs to free.
//!
//! # What a hit does
//!
//! [`bind`] (OPcache's `zend_accel_load_script`) copies no class and no code: each
//! function gets a request-private copy of its `zend_op_array` header (about 250 bytes;
//! its run-time cache and static variables land there), the main op_array is copied once
//! to be executed, and the classes are added to the class table as they are. A class with
//! a parent, interfaces or traits is linked when the script declares it
//! (`ZEND_DECLARE_CLASS`, delayed early binding, a compile-time early binding redone):
//! PHP first asks the inheritance cache ([`crate::inherit`]) for the class linked from this
//! very class with the same parent, interfaces and traits, by any worker, and takes it as
//! it is; only the first time (per combination) does it copy and link the class, which
//! [`persist_linked`] then adds to the cache. Redeclaration errors, delayed early binding,
//! `__COMPILER_HALT_OFFSET__` and auto globals are bound as [`load::bind`] binds them
//! (which, with `zopt.verify`, binds what [`instantiate`] yields, to compare it with the
//! entry's model).
//!
//! # What stays on the rebuild path
//!
//! A class the compiler early-bound to a parent of the same file is persisted unlinked, as
//! [`load::build`] declares it, and linked again on each hit (`zend_try_early_bind`, which
//! asks the inheritance cache too).
//!
//! A script is persisted only when all of it can be (else the entry is marked and every
//! hit rebuilds it, as before): no value that is not a scalar, string, array or constant
//! AST, every method the class's own user code, every structure in the shape
//! [`load::build`] leaves it (no run-time cache, prototype or extension slot set, no
//! backed-enum table yet), and enough `map_ptr` slots left.

use std::collections::HashMap;
use std::ffi::c_void;
use std::mem::size_of;
use std::ptr;
use std::sync::atomic::Ordering;

use zend_cache::ImageWriter;

use crate::engine::{self, Engine};
use crate::load::{self, Built};
use crate::php::{
    self, zend_arg_info, zend_class_constant, zend_class_entry, zend_class_name, zend_function,
    zend_op_array, zend_property_info, zend_script, zend_string, zval, Bucket, HashTable,
};

// zend_types.h: GC flags and type infos of immutable values.
const GC_NOT_COLLECTABLE: u32 = 1 << 4;
const GC_IMMUTABLE: u32 = 1 << 6;
/// `GC_ARRAY | ((IS_ARRAY_IMMUTABLE | GC_NOT_COLLECTABLE) << GC_FLAGS_SHIFT)`.
const IMMUTABLE_ARRAY_TYPE_INFO: u32 = php::IS_ARRAY | GC_NOT_COLLECTABLE | GC_IMMUTABLE;
/// `GC_CONSTANT_AST` with `GC_IMMUTABLE`.
const IMMUTABLE_AST_TYPE_INFO: u32 = php::IS_CONSTANT_AST | GC_NOT_COLLECTABLE | GC_IMMUTABLE;
const HT_MIN_MASK: u32 = (-2i32) as u32;

/// The root of a script's image.
#[repr(C)]
struct Root {
    main: *mut zend_op_array,
    functions: *mut Named,
    classes: *mut Named,
    /// Per class: the lowercased parent name of a class the compiler early-bound (linked
    /// again by [`load::bind`], as after a rebuild), NULL for the others.
    early_bound: *mut *mut zend_string,
    /// The main op_array's delayed early bindings (its `ZEND_DECLARE_CLASS_DELAYED` ops).
    early_bindings: *mut load::EarlyBinding,
    n_functions: u32,
    n_classes: u32,
    n_early_bindings: u32,
    auto_globals: [bool; load::JIT_GLOBAL_COUNT],
    /// `__COMPILER_HALT_OFFSET__` of the script, when it has one.
    /// 1 when the script has one (two plain words rather than an `Option`, whose padding
    /// byte would be whatever the copy left: see [`clear`]).
    has_halt_offset: u64,
    halt_offset: u64,
    /// The segment's `map_ptr` slots handed out when the image was complete: its own are
    /// below (0 in a file image, whose slots are the loading process's own).
    map_ptr_end: u64,
    /// The source's modification time and size its entry was stored for (the entry's
    /// `Validation::MtimeSize`), so that revalidating a hit compares a `stat` with the
    /// root, which the hit reads anyway, rather than with the entry's header, a page no
    /// hit reads otherwise (every worker mapped a page of entries per script revalidated).
    /// `source_size` `u64::MAX`: none (a file image, content validation).
    source_mtime_sec: i64,
    source_mtime_nsec: u64,
    source_size: u64,
}

impl Root {
    /// The main op_array's delayed early bindings.
    ///
    /// # Safety
    /// `self` is a published root: `early_bindings` holds `n_early_bindings` records.
    unsafe fn early_bindings(&self) -> &[load::EarlyBinding] {
        if self.n_early_bindings == 0 {
            return &[];
        }
        std::slice::from_raw_parts(self.early_bindings, self.n_early_bindings as usize)
    }
}

/// Bytes of an image's root (what [`crate::file_image::load`] checks lies in the image).
pub(crate) const ROOT_SIZE: usize = size_of::<Root>();

/// A table entry: its key (an interned string of the segment) and its value.
#[repr(C)]
#[derive(Clone, Copy)]
struct Named {
    key: *mut zend_string,
    ptr: *mut c_void,
}

type R<T> = Result<T, String>;

fn refuse<T>(why: impl Into<String>) -> R<T> {
    Err(why.into())
}

/// The segment's `map_ptr` slots, as OPcache's `ZCSG(map_ptr_last)`: slot `k` handed out
/// by the segment (for a run-time cache, static variables, static members or mutable
/// data of an immutable structure) is `CG(map_ptr_real_base)[base + k]` in every
/// process, `base` being the `map_ptr_last` a process starts its first request with
/// (where PHP's start-up left off, the same in every worker forked from the master; the
/// first process records it in the segment and a process that finds another one uses no
/// slot). Each request extends the process's table to the slots handed out so far
/// (`zend_map_ptr_extend`, which zeroes the new ones), so the engine clears at each
/// request start only what is used, where slots reserved at MINIT were all cleared on
/// every request. A slot handed out during a request lies where PHP may have put one of
/// this request's own slots (a class-name cache of a script it compiled): a structure
/// with such a slot is not used until the next request ([`map_ptr_slots_usable`]).
struct MapPtrSlots {
    /// `None` before the first request; `Some(None)` when this process's base is not the
    /// segment's.
    base: Option<Option<usize>>,
    /// Slots extended in this process (and usable in this request).
    extended: u64,
    /// Whether something else took `map_ptr` slots above ours in this process: the table
    /// is not extended any further.
    frozen: bool,
}

/// A plain cell, not a `RefCell`: every hit and every inheritance-cache lookup reads it,
/// and no reference to it outlives the function that takes it.
static MAP_PTR_SLOTS: crate::FfiCell<MapPtrSlots> = crate::FfiCell::new(MapPtrSlots {
    base: None,
    extended: 0,
    frozen: false,
});

/// At most this many slots are handed out (set at startup).
static MAP_PTR_SLOT_LIMIT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The segment's embedder words: the count of slots handed out (by any process), and the
/// base plus one (0 until a first request recorded it).
const SLOTS_USED_WORD: usize = 0;
const SLOTS_BASE_WORD: usize = 1;

/// Sets how many `map_ptr` slots the segment may hand out in all.
pub fn set_map_ptr_slot_limit(count: u64) {
    MAP_PTR_SLOT_LIMIT.store(count, Ordering::Relaxed);
}

/// RINIT: extends this process's `map_ptr` table to every slot the segment handed out.
///
/// # Safety
/// Called from RINIT, on PHP's thread, before anything of the request is compiled.
#[link_section = ".text.hot.zopt"]
pub unsafe fn activate_map_ptr_slots(shm: &zend_cache::ShmCache) {
    let cg = ptr::addr_of!(php::compiler_globals);
    let s = &mut *MAP_PTR_SLOTS.get();
    {
        let base = *s.base.get_or_insert_with(|| {
            let mine = (*cg).map_ptr_last as u64 + 1;
            // A compare-and-swap outside the writer lock: the word is written once, and a
            // half-done write cannot exist.
            let word = shm.embedder_word(SLOTS_BASE_WORD);
            match word.compare_exchange(0, mine, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => Some(mine as usize - 1),
                Err(theirs) => (theirs == mine).then_some(mine as usize - 1),
            }
        });
        let Some(base) = base else {
            return;
        };
        if (*cg).map_ptr_last > base + s.extended as usize {
            // Not PHP's own request-time slots (the engine drops those at the end of the
            // request that made them): the slots above ours are taken for good.
            s.frozen = true;
        }
        if !s.frozen {
            let used = shm.embedder_word(SLOTS_USED_WORD).load(Ordering::Acquire);
            php::zend_map_ptr_extend(base + used as usize);
            s.extended = used;
        }
    }
}

/// Whether structures whose segment slots all lie below `end` may be used in this
/// request.
///
/// # Safety
/// On PHP's thread.
#[inline(always)]
pub unsafe fn map_ptr_slots_usable(end: u64) -> bool {
    end <= (*MAP_PTR_SLOTS.get()).extended
}

/// Whether the run-time form at `root` may be bound in this request (its slots are
/// extended).
///
/// # Safety
/// `root` is a run-time form of the segment; on PHP's thread.
pub unsafe fn usable(root: *const u8) -> bool {
    map_ptr_slots_usable((*root.cast::<Root>()).map_ptr_end)
}

/// The source validation the image at `root` was persisted with (see
/// [`Root::source_size`]).
///
/// # Safety
/// `root` is the root of a complete image.
#[inline(always)]
pub unsafe fn source_validation(root: *const u8) -> Option<zend_cache::Validation> {
    let r = &*root.cast::<Root>();
    (r.source_size != u64::MAX).then_some(zend_cache::Validation::MtimeSize {
        mtime_sec: r.source_mtime_sec,
        mtime_nsec: r.source_mtime_nsec as u32,
        size: r.source_size,
    })
}

/// How many `map_ptr` slots the segment has handed out, and how many it may.
pub fn map_ptr_slots(shm: &zend_cache::ShmCache) -> (u64, u64) {
    (
        shm.embedder_word(SLOTS_USED_WORD).load(Ordering::Relaxed),
        MAP_PTR_SLOT_LIMIT.load(Ordering::Relaxed),
    )
}

/// Where a persist writes: the segment ([`ImageWriter`], under its writer lock) or a
/// private buffer that becomes a file-cache image ([`crate::file_image`]).
pub(crate) trait Arena {
    /// `size` bytes aligned to `align` (at most 64), zero-filled; `None` when full.
    fn alloc(&mut self, size: usize, align: usize) -> Option<*mut u8>;
    /// The arena's interned `zend_string` copy of `bytes`; `None` when full.
    fn intern(&mut self, bytes: &[u8]) -> Option<*mut u8>;
    /// Whether `p` is a string [`Arena::intern`] made.
    fn is_interned_here(&self, p: *const u8) -> bool;
    /// Whether `p` points into the arena.
    fn holds(&self, p: *const u8) -> bool;
    /// The `len` bytes at `p`, in the arena, hold no pointer (numbers, operands, text):
    /// an arena that finds its pointers by comparing two persists passes over them
    /// rather than take a number that happens to look like an address for one.
    fn holds_no_pointer(&mut self, _p: *const u8, _len: usize) {}
    /// A `map_ptr` slot for a persisted structure's per-request state, as the offset
    /// `ZEND_MAP_PTR_NEW` stores (`ZEND_MAP_PTR_PTR2OFFSET` of the slot, odd).
    fn map_ptr_slot(&mut self) -> R<*mut c_void>;
    /// The arena's slots handed out so far (see [`Root::map_ptr_end`]).
    fn map_ptr_end(&self) -> u64;
}

impl Arena for ImageWriter<'_> {
    fn alloc(&mut self, size: usize, align: usize) -> Option<*mut u8> {
        ImageWriter::alloc(self, size, align)
    }
    fn intern(&mut self, bytes: &[u8]) -> Option<*mut u8> {
        ImageWriter::intern(self, bytes)
    }
    fn is_interned_here(&self, p: *const u8) -> bool {
        ImageWriter::is_interned_here(self, p)
    }
    fn holds(&self, p: *const u8) -> bool {
        ImageWriter::holds(self, p)
    }
    /// The segment's next slot (see [`activate_map_ptr_slots`]).
    fn map_ptr_slot(&mut self) -> R<*mut c_void> {
        // SAFETY: persists run on PHP's thread.
        let base = unsafe { (*MAP_PTR_SLOTS.get()).base };
        let Some(Some(base)) = base else {
            return refuse("this process cannot use the segment's map_ptr slots");
        };
        let used = self.embedder_word(SLOTS_USED_WORD);
        let n = used.load(Ordering::Relaxed);
        if n >= MAP_PTR_SLOT_LIMIT.load(Ordering::Relaxed) {
            return refuse("the segment's map_ptr slots are used up");
        }
        used.store(n + 1, Ordering::Release);
        // CG(map_ptr_base) is CG(map_ptr_real_base) - 1 (ZEND_MAP_PTR_BIASED_BASE).
        Ok(((base + n as usize) * size_of::<*mut c_void>() + 1) as *mut c_void)
    }
    fn map_ptr_end(&self) -> u64 {
        self.embedder_word(SLOTS_USED_WORD).load(Ordering::Relaxed)
    }
}

/// Marks the words of the persisted structure at `$t` that hold the number fields named
/// ([`Arena::holds_no_pointer`]: line numbers, counts, flags). Every pointer field is
/// 8-aligned, so a word that holds a number holds no pointer, whatever shares it.
macro_rules! numbers {
    ($p:expr, $t:expr, $($($field:ident).+),+ $(,)?) => {
        $($p.w.holds_no_pointer(ptr::addr_of!((*$t).$($field).+).cast(), 1);)+
    };
}

/// Persists the built, not yet bound script `built` into `w` (the segment, or a private
/// buffer); returns the image's root, or why the script cannot be persisted. `source`:
/// the validation of the entry it was built from, if any.
///
/// # Safety
/// `built` comes from [`load::build`] in this request and was not bound yet.
pub(crate) unsafe fn persist(
    built: &Built,
    halt_offset: Option<u64>,
    source: Option<zend_cache::Validation>,
    w: &mut dyn Arena,
) -> R<*const u8> {
    let mut p = Persister { w };
    let root = p.alloc::<Root>(1)?;
    (*root).main = p.op_array(&built.script.main_op_array, ptr::null_mut())?;
    let functions = load::entries(&built.script.function_table, 0);
    (*root).functions = p.alloc::<Named>(functions.len())?;
    (*root).n_functions = functions.len() as u32;
    for (i, (key, value)) in functions.into_iter().enumerate() {
        let oa = (*value).value.ptr.cast::<zend_op_array>();
        if u32::from((*oa).type_) != u32::from(zend_ir::model::ZEND_USER_FUNCTION) {
            return refuse("a function that is not user code");
        }
        let t = p.op_array(oa, ptr::null_mut())?;
        (*root).functions.add(i).write(Named {
            key: p.string(key)?,
            ptr: t.cast(),
        });
    }
    let classes = load::entries(&built.script.class_table, 0);
    if built.early_bound.len() != classes.len() {
        return refuse("early bindings out of step with the classes");
    }
    (*root).classes = p.alloc::<Named>(classes.len())?;
    (*root).early_bound = p.alloc::<*mut zend_string>(classes.len())?;
    (*root).n_classes = classes.len() as u32;
    for (i, parent) in built.early_bound.iter().enumerate() {
        if let Some(parent) = parent {
            let s =
                p.w.intern(parent)
                    .ok_or("the interned strings area is full")?;
            *(*root).early_bound.add(i) = s.cast();
        }
    }
    for (i, (key, value)) in classes.into_iter().enumerate() {
        let t = p.class((*value).value.ptr.cast())?;
        (*root).classes.add(i).write(Named {
            key: p.string(key)?,
            ptr: t.cast(),
        });
    }
    let early = &built.early_bindings;
    (*root).early_bindings = p.copy(early.as_ptr(), early.len())?;
    for i in 0..early.len() {
        let b = (*root).early_bindings.add(i);
        (*b).lcname = p.string((*b).lcname)?;
        (*b).rtd_key = p.string((*b).rtd_key)?;
        (*b).lc_parent = p.string((*b).lc_parent)?;
        numbers!(p, b, cache_slot);
    }
    (*root).n_early_bindings = early.len() as u32;
    (*root).auto_globals = built.auto_globals;
    (*root).has_halt_offset = u64::from(halt_offset.is_some());
    (*root).halt_offset = halt_offset.unwrap_or(0);
    (*root).map_ptr_end = p.w.map_ptr_end();
    numbers!(
        p,
        root,
        n_functions,
        n_classes,
        n_early_bindings,
        auto_globals,
        has_halt_offset,
        halt_offset,
        map_ptr_end,
        source_mtime_sec,
        source_mtime_nsec,
        source_size,
    );
    (*root).source_mtime_sec = 0;
    (*root).source_mtime_nsec = 0;
    (*root).source_size = u64::MAX;
    if let Some(zend_cache::Validation::MtimeSize {
        mtime_sec,
        mtime_nsec,
        size,
    }) = source
    {
        (*root).source_mtime_sec = mtime_sec;
        (*root).source_mtime_nsec = u64::from(mtime_nsec);
        (*root).source_size = size;
    }
    Ok(root.cast_const().cast())
}

struct Persister<'w> {
    w: &'w mut dyn Arena,
}

impl Persister<'_> {
    /// A `map_ptr` slot from the arena (see [`Arena::map_ptr_slot`]).
    fn map_ptr_slot(&mut self) -> R<*mut c_void> {
        self.w.map_ptr_slot()
    }

    /// Marks the persisted op_array `t` immutable, as `zend_persist_op_array` and
    /// `zend_persist_class_method` do: with `slots`, its run-time cache and static
    /// variables live in `map_ptr` slots (it is executed where it is); without, they stay
    /// NULL (the method of an unlinked class, which `zend_lazy_class_load` copies first).
    unsafe fn make_immutable(&mut self, t: *mut zend_op_array, slots: bool) -> R<()> {
        (*t).fn_flags |= php::ZEND_ACC_IMMUTABLE;
        (*t).run_time_cache__ptr = ptr::null_mut();
        (*t).static_variables_ptr__ptr = ptr::null_mut();
        if slots {
            (*t).run_time_cache__ptr = self.map_ptr_slot()?.cast();
            if !(*t).static_variables.is_null() {
                (*t).static_variables_ptr__ptr = self.map_ptr_slot()?.cast();
            }
        }
        Ok(())
    }

    /// Room for `n` values of `T` in the segment (zero-filled); a non-null pointer even
    /// for `n == 0`.
    fn alloc<T>(&mut self, n: usize) -> R<*mut T> {
        let size = size_of::<T>().checked_mul(n).ok_or("size overflow")?;
        match self.w.alloc(size.max(1), std::mem::align_of::<T>().max(8)) {
            Some(p) => Ok(p.cast()),
            None => refuse("the shared memory segment is full"),
        }
    }

    /// A copy of `n` values at `src` in the segment (NULL for NULL or none).
    unsafe fn copy<T>(&mut self, src: *const T, n: usize) -> R<*mut T> {
        if src.is_null() || n == 0 {
            return Ok(ptr::null_mut());
        }
        let dst = self.alloc::<T>(n)?;
        ptr::copy_nonoverlapping(src, dst, n);
        Ok(dst)
    }

    /// [`Persister::copy`] of values that hold no pointer (op numbers, offsets).
    unsafe fn copy_numbers<T>(&mut self, src: *const T, n: usize) -> R<*mut T> {
        let dst = self.copy(src, n)?;
        self.w.holds_no_pointer(dst.cast(), size_of::<T>() * n);
        Ok(dst)
    }

    /// The segment's interned copy of `s` (NULL stays NULL).
    unsafe fn string(&mut self, s: *mut zend_string) -> R<*mut zend_string> {
        if s.is_null() || self.w.is_interned_here(s.cast()) {
            return Ok(s);
        }
        let bytes = php::Reader::new().str(s).ok_or("unreadable string")?;
        match self.w.intern(bytes) {
            Some(p) => Ok(p.cast()),
            None => refuse("the interned strings area is full"),
        }
    }

    /// Makes the zval at `zv` (already in the segment) immutable: its string, array or AST
    /// persisted, its type flags cleared (not refcounted). `u2` is kept.
    unsafe fn zval(&mut self, zv: *mut zval) -> R<()> {
        numbers!(self, zv, u1);
        match u32::from(php::z_type(&*zv)) {
            php::IS_UNDEF | php::IS_NULL | php::IS_FALSE | php::IS_TRUE => {
                // No value: whatever request memory held there is not kept (a file-cache
                // image must hold no stale pointer, see crate::file_image).
                (*zv).value.lval = 0;
                Ok(())
            }
            php::IS_LONG | php::IS_DOUBLE => {
                self.w
                    .holds_no_pointer(zv.cast(), size_of::<php::zend_value>());
                Ok(())
            }
            php::IS_STRING => {
                (*zv).value.str_ = self.string((*zv).value.str_)?;
                (*zv).u1.type_info = php::IS_STRING;
                Ok(())
            }
            php::IS_ARRAY => {
                let a = (*zv).value.arr;
                if !ptr::eq(a, ptr::addr_of!(php::zend_empty_array)) {
                    (*zv).value.arr = self.array(a)?;
                }
                (*zv).u1.type_info = php::IS_ARRAY;
                Ok(())
            }
            php::IS_CONSTANT_AST => {
                (*zv).value.ast = self.ast_ref((*zv).value.ast)?;
                (*zv).u1.type_info = php::IS_CONSTANT_AST;
                Ok(())
            }
            t => refuse(format!("a value of type {t}")),
        }
    }

    /// An immutable copy of the array `a` (zend_persist.c's `zend_hash_persist` of a zval).
    unsafe fn array(&mut self, a: *mut HashTable) -> R<*mut HashTable> {
        if self.w.holds(a.cast()) {
            return Ok(a); // persisted already (a value a linked class took from its parent)
        }
        let t = self.copy(a, 1)?;
        (*t).gc.refcount = 2;
        (*t).gc.u.type_info = IMMUTABLE_ARRAY_TYPE_INFO;
        (*t).u.v.nIteratorsCount = 0;
        self.table_data(t, |p, zv| p.zval(zv))?;
        Ok(t)
    }

    /// An immutable copy of an attributes table (`zend_add_attribute`'s table of
    /// `zend_attribute` pointers), each attribute with its arguments copied; NULL stays
    /// NULL. The engine releases attribute tables with `zend_hash_release`, which leaves
    /// immutable ones alone.
    unsafe fn attributes(&mut self, ht: *mut HashTable) -> R<*mut HashTable> {
        if ht.is_null() || self.w.holds(ht.cast()) {
            return Ok(ht);
        }
        let t = self.copy(ht, 1)?;
        (*t).gc.refcount = 2;
        (*t).gc.u.type_info = IMMUTABLE_ARRAY_TYPE_INFO;
        (*t).u.v.nIteratorsCount = 0;
        self.table_data(t, |p, zv| {
            if u32::from(php::z_type(&*zv)) != php::IS_PTR {
                return refuse("an attribute that is not a pointer");
            }
            let a = (*zv).value.ptr.cast::<php::zend_attribute>();
            let argc = (*a).argc as usize;
            // ZEND_ATTRIBUTE_SIZE(argc): an attribute without arguments is shorter than
            // the struct, which declares one.
            let size = std::mem::offset_of!(php::zend_attribute, args)
                + size_of::<php::zend_attribute_arg>() * argc;
            let ta = p.alloc::<u8>(size.max(size_of::<php::zend_attribute>()))?;
            ptr::copy_nonoverlapping(a.cast::<u8>(), ta, size);
            let ta = ta.cast::<php::zend_attribute>();
            numbers!(p, ta, flags, lineno, offset, argc);
            (*ta).name = p.string((*ta).name)?;
            (*ta).lcname = p.string((*ta).lcname)?;
            let args = ptr::addr_of_mut!((*ta).args).cast::<php::zend_attribute_arg>();
            for i in 0..argc {
                let arg = args.add(i);
                (*arg).name = p.string((*arg).name)?;
                p.zval(ptr::addr_of_mut!((*arg).value))?;
            }
            (*zv).value.ptr = ta.cast();
            Ok(())
        })?;
        Ok(t)
    }

    /// Copies the data block (hash part and buckets) of the table `t` (whose struct is
    /// already in the segment) into the segment, interning the keys and persisting each
    /// value with `value`.
    unsafe fn table_data(
        &mut self,
        t: *mut HashTable,
        mut value: impl FnMut(&mut Self, *mut zval) -> R<()>,
    ) -> R<()> {
        // The counts and the next free key (the largest integer key plus one) are numbers.
        numbers!(
            self,
            t,
            gc,
            u,
            nTableMask,
            nNumUsed,
            nTableSize,
            nNextFreeElement
        );
        let flags = (*t).u.flags;
        if flags & php::HASH_FLAG_UNINITIALIZED != 0 {
            return Ok(()); // arData is PHP's static uninitialized bucket
        }
        let packed = flags & php::HASH_FLAG_PACKED != 0;
        if packed && (*t).nTableMask != HT_MIN_MASK {
            return refuse("a packed array with a hash part");
        }
        let hash = hash_size((*t).nTableMask);
        let elem = if packed {
            size_of::<zval>()
        } else {
            size_of::<Bucket>()
        };
        let size = hash + elem * (*t).nTableSize as usize;
        let data = (*t).__bindgen_anon_1.arData.cast::<u8>().sub(hash);
        let copy = self.copy(data, size)?;
        // The hash part is bucket numbers.
        self.w.holds_no_pointer(copy, hash);
        let ar = copy.add(hash);
        (*t).__bindgen_anon_1.arData = ar.cast();
        // The slots past nNumUsed were never written (whatever request memory held): the
        // image keeps zeros instead, so that it holds no stale pointer (a file-cache image
        // must point only into itself and the PHP binary, see crate::file_image).
        let used = ((*t).nNumUsed as usize).min((*t).nTableSize as usize);
        ptr::write_bytes(
            ar.add(elem * used),
            0,
            elem * ((*t).nTableSize as usize - used),
        );
        for i in 0..used {
            // A hole or deleted element keeps its type and chain (u2) and loses its stale
            // value and key (no collision chain reaches a deleted bucket).
            if packed {
                let zv = ar.cast::<zval>().add(i);
                // A packed element's u2 is never written (PHP leaves it as it was).
                (*zv).u2.next = 0;
                numbers!(self, zv, u1);
                if u32::from(php::z_type(&*zv)) != php::IS_UNDEF {
                    value(self, zv)?;
                } else {
                    (*zv).value.lval = 0;
                }
            } else {
                let b = ar.cast::<Bucket>().add(i);
                // A key's hash, or an integer key itself; the value's type and chain.
                numbers!(self, b, h, val.u1);
                if u32::from(php::z_type(&(*b).val)) != php::IS_UNDEF {
                    (*b).key = self.string((*b).key)?;
                    value(self, ptr::addr_of_mut!((*b).val))?;
                } else {
                    (*b).val.value.lval = 0;
                    (*b).key = ptr::null_mut();
                }
            }
        }
        Ok(())
    }

    /// An immutable copy of a constant-expression AST (its root right after the
    /// `zend_ast_ref` header, as `GC_AST` expects).
    unsafe fn ast_ref(&mut self, r: *mut php::zend_ast_ref) -> R<*mut php::zend_ast_ref> {
        if self.w.holds(r.cast()) {
            return Ok(r);
        }
        let header = size_of::<php::zend_ast_ref>();
        let root = r.cast::<u8>().add(header).cast::<php::zend_ast>();
        let own = ast_node_size(root)?;
        let t = self.alloc::<u8>(header + own)?;
        let tr = t.cast::<php::zend_ast_ref>();
        (*tr).gc.refcount = 1;
        (*tr).gc.u.type_info = IMMUTABLE_AST_TYPE_INFO;
        numbers!(self, tr, gc);
        let troot = t.add(header).cast::<php::zend_ast>();
        ptr::copy_nonoverlapping(root.cast::<u8>(), troot.cast::<u8>(), own);
        clear_ast_padding(troot);
        self.ast_children(troot, 0)?;
        Ok(tr)
    }

    /// Persists what the node `t` (already copied into the segment) points to.
    unsafe fn ast_children(&mut self, t: *mut php::zend_ast, depth: u32) -> R<()> {
        if depth > 1000 {
            return refuse("an AST nested too deeply");
        }
        // The kind, attributes and line number (a value node's line number is in its
        // zval's u2; a list's child count follows).
        numbers!(self, t, kind);
        let kind = (*t).kind;
        if kind == zend_ir::model::ZEND_AST_ZVAL || kind == zend_ir::model::ZEND_AST_CONSTANT {
            return self.zval(ptr::addr_of_mut!((*t.cast::<php::zend_ast_zval>()).val));
        }
        if (kind >> zend_ir::model::ZEND_AST_IS_LIST_SHIFT) & 1 != 0 {
            numbers!(self, t.cast::<php::zend_ast_list>(), children);
        }
        let (slots, n) = ast_slots(t);
        for i in 0..n {
            let child = *slots.add(i);
            if child.is_null() {
                continue;
            }
            let own = ast_node_size(child)?;
            let tc = self.alloc::<u8>(own)?.cast::<php::zend_ast>();
            ptr::copy_nonoverlapping(child.cast::<u8>(), tc.cast::<u8>(), own);
            clear_ast_padding(tc);
            *slots.add(i) = tc;
            self.ast_children(tc, depth + 1)?;
        }
        Ok(())
    }

    /// Interns a type's class names; a type list is copied (it keeps the arena bit the
    /// compiler gave it, so nothing ever frees it).
    unsafe fn type_(&mut self, t: *mut php::zend_type) -> R<()> {
        clear(
            t.cast(),
            std::mem::offset_of!(php::zend_type, type_mask) + 4,
            size_of::<php::zend_type>(),
        );
        numbers!(self, t, type_mask);
        let mask = (*t).type_mask;
        if mask & php::_ZEND_TYPE_LIST_BIT != 0 {
            if mask & php::_ZEND_TYPE_ARENA_BIT == 0 {
                return refuse("a type list outside the arena");
            }
            let list = (*t).ptr.cast::<php::zend_type_list>();
            if self.w.holds(list.cast()) {
                return Ok(());
            }
            let n = (*list).num_types as usize;
            let size = type_list_size(n);
            let tl = self.alloc::<u8>(size)?.cast::<php::zend_type_list>();
            ptr::copy_nonoverlapping(list.cast::<u8>(), tl.cast::<u8>(), size);
            clear(
                tl.cast(),
                4,
                std::mem::offset_of!(php::zend_type_list, types),
            );
            numbers!(self, tl, num_types);
            let types = ptr::addr_of_mut!((*tl).types).cast::<php::zend_type>();
            for i in 0..n {
                self.type_(types.add(i))?;
            }
            (*t).ptr = tl.cast();
        } else if mask & php::_ZEND_TYPE_NAME_BIT != 0 {
            (*t).ptr = self.string((*t).ptr.cast())?.cast();
        }
        Ok(())
    }

    /// Persists the op_array `src` with `scope` (a class of the image, or NULL).
    unsafe fn op_array(
        &mut self,
        src: *const zend_op_array,
        scope: *mut zend_class_entry,
    ) -> R<*mut zend_op_array> {
        let t = self.alloc::<zend_op_array>(1)?;
        self.op_array_into(src, scope, t)?;
        Ok(t)
    }

    /// Persists the op_array `src` into the header `t` (room in the segment).
    unsafe fn op_array_into(
        &mut self,
        src: *const zend_op_array,
        scope: *mut zend_class_entry,
        t: *mut zend_op_array,
    ) -> R<()> {
        let s = &*src;
        if !s.prototype.is_null()
            || !s.run_time_cache__ptr.is_null()
            || !s.static_variables_ptr__ptr.is_null()
            || s.reserved.iter().any(|p| !p.is_null())
        {
            return refuse("an op_array with run-time state");
        }
        ptr::copy_nonoverlapping(src, t, 1);
        clear(
            t.cast(),
            std::mem::offset_of!(zend_op_array, T) + 4,
            std::mem::offset_of!(zend_op_array, run_time_cache__ptr),
        );
        clear(
            t.cast(),
            std::mem::offset_of!(zend_op_array, last) + 4,
            std::mem::offset_of!(zend_op_array, opcodes),
        );
        numbers!(
            self,
            t,
            type_,
            fn_flags,
            num_args,
            required_num_args,
            T,
            cache_size,
            last_var,
            last,
            last_live_range,
            last_try_catch,
            line_start,
            line_end,
            last_literal,
            num_dynamic_func_defs,
        );
        (*t).refcount = ptr::null_mut();
        (*t).scope = if s.scope.is_null() {
            ptr::null_mut()
        } else {
            scope
        };
        (*t).attributes = self.attributes(s.attributes)?;
        (*t).function_name = self.string(s.function_name)?;
        (*t).filename = self.string(s.filename)?;
        (*t).doc_comment = self.string(s.doc_comment)?;

        // Opcodes and literals: one block, literals right after the (16-aligned) ops, as
        // pass_two leaves them; operands are relative, so the block moves as it is.
        let ops_size = engine::aligned(size_of::<php::zend_op>() * s.last as usize, 16);
        let n_lits = s.last_literal.max(0) as usize;
        if !s.opcodes.is_null() {
            if n_lits > 0 && s.literals.cast::<u8>() != s.opcodes.cast::<u8>().add(ops_size) {
                return refuse("literals apart from the opcodes");
            }
            let size = ops_size + size_of::<zval>() * n_lits;
            let block = self.w.alloc(size.max(1), 16).ok_or("the segment is full")?;
            ptr::copy_nonoverlapping(s.opcodes.cast::<u8>(), block, size);
            (*t).opcodes = block.cast();
            // Past its handler, an op is numbers: relative operands and jump offsets.
            let operands = std::mem::offset_of!(php::zend_op, op1);
            for i in 0..s.last as usize {
                let op = block.add(i * size_of::<php::zend_op>());
                self.w
                    .holds_no_pointer(op.add(operands), size_of::<php::zend_op>() - operands);
            }
            (*t).literals = if n_lits > 0 {
                block.add(ops_size).cast()
            } else {
                ptr::null_mut()
            };
            for i in 0..n_lits {
                self.zval((*t).literals.add(i))?;
            }
        } else if n_lits > 0 {
            return refuse("literals without opcodes");
        }

        let n_vars = s.last_var.max(0) as usize;
        (*t).vars = self.copy(s.vars, n_vars)?;
        for i in 0..n_vars {
            *(*t).vars.add(i) = self.string(*(*t).vars.add(i))?;
        }

        if !s.arg_info.is_null() {
            let has_return = usize::from(s.fn_flags & php::ZEND_ACC_HAS_RETURN_TYPE != 0);
            let variadic = usize::from(s.fn_flags & php::ZEND_ACC_VARIADIC != 0);
            let n = s.num_args as usize + has_return + variadic;
            let infos: *mut zend_arg_info = self.copy(s.arg_info.sub(has_return), n)?;
            for i in 0..n {
                let a = infos.add(i);
                (*a).name = self.string((*a).name)?;
                (*a).default_value = self.string((*a).default_value)?;
                self.type_(ptr::addr_of_mut!((*a).type_))?;
            }
            (*t).arg_info = infos.add(has_return);
        }
        (*t).live_range = self.copy_numbers(s.live_range, s.last_live_range.max(0) as usize)?;
        (*t).try_catch_array =
            self.copy_numbers(s.try_catch_array, s.last_try_catch.max(0) as usize)?;
        if !s.static_variables.is_null() {
            (*t).static_variables = self.array(s.static_variables)?;
        }
        let n_defs = s.num_dynamic_func_defs as usize;
        if n_defs > 0 {
            let defs = self.alloc::<*mut zend_op_array>(n_defs)?;
            for i in 0..n_defs {
                // Closures are created from the definition where it is (a method's closures
                // too, since zend_lazy_class_load copies no definition): immutable, its
                // run-time cache in a slot, as zend_persist_op_array leaves it.
                let def = self.op_array(*s.dynamic_func_defs.add(i), scope)?;
                self.make_immutable(def, true)?;
                *defs.add(i) = def;
            }
            (*t).dynamic_func_defs = defs;
        }
        Ok(())
    }

    /// Persists the class `src` (declared by [`load::build`], not linked to a parent).
    unsafe fn class(&mut self, src: *mut zend_class_entry) -> R<*mut zend_class_entry> {
        let s = &*src;
        if s.ce_flags & (php::ZEND_ACC_RESOLVED_PARENT | php::ZEND_ACC_RESOLVED_INTERFACES) != 0 {
            return refuse("a class linked to a parent or interfaces");
        }
        if !s.backed_enum_table.is_null() {
            return refuse("a backed enum table");
        }
        if s.refcount != 1
            || !s.static_members_table__ptr.is_null()
            || !s.mutable_data__ptr.is_null()
            || !s.inheritance_cache.is_null()
            || !s.iterator_funcs_ptr.is_null()
            || !s.arrayaccess_funcs_ptr.is_null()
        {
            return refuse("a class with run-time state");
        }
        let t = self.copy(src, 1)?;
        clear_class_padding(t);
        self.class_numbers(t);
        // Immutable, as zend_persist_class_entry leaves a class: a hit binds this very
        // entry. A class linked when compiled (no parent, interface or trait) is used where
        // it is, its per-request state in map_ptr slots; an unlinked one is copied by
        // zend_lazy_class_load when the script declares it (or taken linked from the
        // inheritance cache, see [`persist_linked`]). ZEND_ACC_CACHED: its names are not
        // its own to free.
        (*t).ce_flags |= php::ZEND_ACC_IMMUTABLE | php::ZEND_ACC_CACHED;
        let linked = s.ce_flags & php::ZEND_ACC_LINKED != 0;
        if linked {
            if s.default_static_members_count > 0 {
                (*t).static_members_table__ptr = self.map_ptr_slot()?.cast();
            }
            if s.ce_flags & php::ZEND_ACC_CONSTANTS_UPDATED == 0 {
                (*t).mutable_data__ptr = self.map_ptr_slot()?.cast();
            }
        }
        (*t).attributes = self.attributes(s.attributes)?;
        (*t).name = self.string(s.name)?;
        (*t).__bindgen_anon_1.parent_name = self.string(s.__bindgen_anon_1.parent_name)?;
        (*t).info.user.filename = self.string(s.info.user.filename)?;
        (*t).info.user.doc_comment = self.string(s.info.user.doc_comment)?;

        let n_props = s.default_properties_count.max(0) as usize;
        (*t).default_properties_table = self.copy(s.default_properties_table, n_props)?;
        for i in 0..n_props {
            self.zval((*t).default_properties_table.add(i))?;
        }
        let n_statics = s.default_static_members_count.max(0) as usize;
        (*t).default_static_members_table = self.copy(s.default_static_members_table, n_statics)?;
        for i in 0..n_statics {
            let zv = (*t).default_static_members_table.add(i);
            // zend_declare_typed_property never writes a static member's u2 (nothing reads
            // it: Z_PROP_FLAG is for instance properties).
            (*zv).u2.next = 0;
            self.zval(zv)?;
        }

        // Methods, their headers side by side in table order (a hit copies them at once),
        // remembering each one's copy for the magic method pointers.
        let mut methods: Vec<(*mut zend_function, *mut zend_function)> = Vec::new();
        let n_methods = (*src).function_table.nNumOfElements as usize;
        let headers = self.alloc::<zend_op_array>(n_methods)?;
        self.table_data(ptr::addr_of_mut!((*t).function_table), |p, zv| {
            let oa = (*zv).value.ptr.cast::<zend_op_array>();
            if u32::from((*oa).type_) != u32::from(zend_ir::model::ZEND_USER_FUNCTION)
                || (*oa).scope != src
            {
                return refuse("a method that is not the class's own user code");
            }
            if methods.len() >= n_methods {
                return refuse("more methods than the table counts");
            }
            let m = headers.add(methods.len());
            p.op_array_into(oa, t, m)?;
            p.make_immutable(m, linked)?;
            methods.push((oa.cast(), m.cast()));
            (*zv).value.ptr = m.cast();
            Ok(())
        })?;
        let map_method = |f: *mut zend_function| -> R<*mut zend_function> {
            if f.is_null() {
                return Ok(f);
            }
            methods
                .iter()
                .find(|(from, _)| *from == f)
                .map(|&(_, to)| to)
                .ok_or_else(|| "a magic method outside the method table".to_string())
        };
        for slot in magic_methods(t) {
            *slot = map_method(*slot)?;
        }

        let mut props: Vec<(*mut zend_property_info, *mut zend_property_info)> = Vec::new();
        self.table_data(ptr::addr_of_mut!((*t).properties_info), |p, zv| {
            let info = (*zv).value.ptr.cast::<zend_property_info>();
            if (*info).ce != src {
                return refuse("an inherited property");
            }
            let c = p.copy(info, 1)?;
            numbers!(p, c, offset, flags);
            (*c).attributes = p.attributes((*c).attributes)?;
            (*c).name = p.string((*c).name)?;
            (*c).doc_comment = p.string((*c).doc_comment)?;
            p.type_(ptr::addr_of_mut!((*c).type_))?;
            (*c).ce = t;
            props.push((info, c));
            (*zv).value.ptr = c.cast();
            Ok(())
        })?;
        if !s.properties_info_table.is_null() {
            let table = self.copy(s.properties_info_table, n_props)?;
            for i in 0..n_props {
                let slot = table.add(i);
                if !(*slot).is_null() {
                    *slot = props
                        .iter()
                        .find(|(from, _)| *from == *slot)
                        .map(|&(_, to)| to)
                        .ok_or("a properties_info_table entry outside the class")?;
                }
            }
            (*t).properties_info_table = table;
        }

        self.table_data(ptr::addr_of_mut!((*t).constants_table), |p, zv| {
            let c = (*zv).value.ptr.cast::<zend_class_constant>();
            if (*c).ce != src {
                return refuse("an inherited constant");
            }
            let tc = p.copy(c, 1)?;
            (*tc).attributes = p.attributes((*tc).attributes)?;
            p.zval(ptr::addr_of_mut!((*tc).value))?;
            (*tc).doc_comment = p.string((*tc).doc_comment)?;
            (*tc).ce = t;
            (*zv).value.ptr = tc.cast();
            Ok(())
        })?;

        let names =
            |p: &mut Self, src: *mut zend_class_name, n: usize| -> R<*mut zend_class_name> {
                let t = p.copy(src, n)?;
                for i in 0..n {
                    let c = t.add(i);
                    (*c).name = p.string((*c).name)?;
                    (*c).lc_name = p.string((*c).lc_name)?;
                }
                Ok(t)
            };
        (*t).__bindgen_anon_3.interface_names = names(
            self,
            s.__bindgen_anon_3.interface_names,
            s.num_interfaces as usize,
        )?;
        (*t).trait_names = names(self, s.trait_names, s.num_traits as usize)?;
        if !s.trait_aliases.is_null() {
            let n = null_terminated(s.trait_aliases);
            let list = self.copy(s.trait_aliases, n + 1)?;
            for i in 0..n {
                let a = self.copy(*list.add(i), 1)?;
                clear(
                    a.cast(),
                    std::mem::offset_of!(php::zend_trait_alias, modifiers) + 4,
                    size_of::<php::zend_trait_alias>(),
                );
                numbers!(self, a, modifiers);
                self.method_ref(ptr::addr_of_mut!((*a).trait_method))?;
                (*a).alias = self.string((*a).alias)?;
                *list.add(i) = a;
            }
            (*t).trait_aliases = list;
        }
        if !s.trait_precedences.is_null() {
            let n = null_terminated(s.trait_precedences);
            let list = self.copy(s.trait_precedences, n + 1)?;
            for i in 0..n {
                let src_p = *list.add(i);
                let excludes = (*src_p).num_excludes as usize;
                let size = size_of::<php::zend_trait_precedence>()
                    + size_of::<*mut zend_string>() * excludes.saturating_sub(1);
                let q = self.alloc::<u8>(size)?;
                ptr::copy_nonoverlapping(src_p.cast::<u8>(), q, size);
                clear(
                    q,
                    std::mem::offset_of!(php::zend_trait_precedence, num_excludes) + 4,
                    std::mem::offset_of!(php::zend_trait_precedence, exclude_class_names),
                );
                let q = q.cast::<php::zend_trait_precedence>();
                numbers!(self, q, num_excludes);
                self.method_ref(ptr::addr_of_mut!((*q).trait_method))?;
                let names = ptr::addr_of_mut!((*q).exclude_class_names).cast::<*mut zend_string>();
                for k in 0..excludes {
                    *names.add(k) = self.string(*names.add(k))?;
                }
                *list.add(i) = q;
            }
            (*t).trait_precedences = list;
        }
        Ok(t)
    }

    unsafe fn method_ref(&mut self, r: *mut php::zend_trait_method_reference) -> R<()> {
        (*r).method_name = self.string((*r).method_name)?;
        (*r).class_name = self.string((*r).class_name)?;
        Ok(())
    }

    /// Marks the number fields of the class entry `t` (its tables' are marked with their
    /// data, see [`Persister::table_data`]).
    unsafe fn class_numbers(&mut self, t: *mut zend_class_entry) {
        numbers!(
            self,
            t,
            type_,
            refcount,
            ce_flags,
            default_properties_count,
            default_static_members_count,
            num_interfaces,
            num_traits,
            enum_backing_type,
            info.user.line_start,
            info.user.line_end,
        );
    }
}

/// Zeroes bytes `from..to` of the structure at `p` (nothing when `to <= from`): the padding
/// of a structure copied from request memory holds whatever was there, which a file-cache
/// image must not keep (it would read as a stale pointer, see crate::file_image).
unsafe fn clear(p: *mut u8, from: usize, to: usize) {
    if to > from {
        ptr::write_bytes(p.add(from), 0, to - from);
    }
}

/// Zeroes the padding of a copied class entry (after `type`, after `enum_backing_type`).
unsafe fn clear_class_padding(t: *mut zend_class_entry) {
    clear(t.cast(), 1, std::mem::offset_of!(zend_class_entry, name));
    clear(
        t.cast(),
        std::mem::offset_of!(zend_class_entry, enum_backing_type) + 4,
        std::mem::offset_of!(zend_class_entry, backed_enum_table),
    );
}

/// Zeroes the padding of a copied AST node: before a value node's zval, after a list's
/// child count.
unsafe fn clear_ast_padding(a: *mut php::zend_ast) {
    let kind = (*a).kind;
    if kind == zend_ir::model::ZEND_AST_ZVAL || kind == zend_ir::model::ZEND_AST_CONSTANT {
        clear(a.cast(), 4, std::mem::offset_of!(php::zend_ast_zval, val));
    } else if (kind >> zend_ir::model::ZEND_AST_IS_LIST_SHIFT) & 1 != 0 {
        clear(
            a.cast(),
            std::mem::offset_of!(php::zend_ast_list, children) + 4,
            std::mem::offset_of!(php::zend_ast_list, child),
        );
    }
}

/// `HT_HASH_SIZE(mask)`.
fn hash_size(mask: u32) -> usize {
    (mask as i32).wrapping_neg() as u32 as usize * size_of::<u32>()
}

/// `ZEND_TYPE_LIST_SIZE(n)`.
fn type_list_size(n: usize) -> usize {
    size_of::<php::zend_type_list>() - size_of::<php::zend_type>() + size_of::<php::zend_type>() * n
}

/// The child slots of an AST node that is not a value node, and how many there are.
unsafe fn ast_slots(a: *mut php::zend_ast) -> (*mut *mut php::zend_ast, usize) {
    let kind = (*a).kind;
    if (kind >> zend_ir::model::ZEND_AST_IS_LIST_SHIFT) & 1 != 0 {
        let l = a.cast::<php::zend_ast_list>();
        (ptr::addr_of_mut!((*l).child).cast(), (*l).children as usize)
    } else {
        (
            ptr::addr_of_mut!((*a).child).cast(),
            usize::from(kind >> zend_ir::model::ZEND_AST_NUM_CHILDREN_SHIFT),
        )
    }
}

/// Bytes of the node itself (`zend_ast_size`, `zend_ast_list_size`, or a value node).
unsafe fn ast_node_size(a: *mut php::zend_ast) -> R<usize> {
    let kind = (*a).kind;
    let ptr_size = size_of::<*mut php::zend_ast>();
    if kind == zend_ir::model::ZEND_AST_ZVAL || kind == zend_ir::model::ZEND_AST_CONSTANT {
        return Ok(size_of::<php::zend_ast_zval>());
    }
    if (kind >> 6) & 1 != 0 && (kind >> zend_ir::model::ZEND_AST_IS_LIST_SHIFT) & 1 == 0 {
        return refuse(format!("an AST node of kind {kind}"));
    }
    let (_, n) = ast_slots(a);
    Ok(
        if (kind >> zend_ir::model::ZEND_AST_IS_LIST_SHIFT) & 1 != 0 {
            size_of::<php::zend_ast_list>() - ptr_size + ptr_size * n
        } else {
            size_of::<php::zend_ast>() - ptr_size + ptr_size * n
        },
    )
}

unsafe fn null_terminated<T>(list: *mut *mut T) -> usize {
    let mut n = 0;
    while !(*list.add(n)).is_null() {
        n += 1;
    }
    n
}

/// The class entry's magic method pointers.
unsafe fn magic_methods(ce: *mut zend_class_entry) -> [*mut *mut zend_function; 13] {
    [
        ptr::addr_of_mut!((*ce).constructor),
        ptr::addr_of_mut!((*ce).destructor),
        ptr::addr_of_mut!((*ce).clone),
        ptr::addr_of_mut!((*ce).__get),
        ptr::addr_of_mut!((*ce).__set),
        ptr::addr_of_mut!((*ce).__unset),
        ptr::addr_of_mut!((*ce).__isset),
        ptr::addr_of_mut!((*ce).__call),
        ptr::addr_of_mut!((*ce).__callstatic),
        ptr::addr_of_mut!((*ce).__tostring),
        ptr::addr_of_mut!((*ce).__debugInfo),
        ptr::addr_of_mut!((*ce).__serialize),
        ptr::addr_of_mut!((*ce).__unserialize),
    ]
}

// ---------------------------------------------------------------------------------------
// A hit: the request's view of an image.
// ---------------------------------------------------------------------------------------

/// The script of the image at `root`, ready for [`load::bind`]: the classes are the
/// immutable ones of the segment, bound as they are (`zend_accel_load_script`'s
/// `zend_accel_class_hash_copy`); the main op_array and the functions are request-private
/// shallow copies of their headers (their code and values stay in the segment).
///
/// # Safety
/// Runs on PHP's thread during a request; `root` is an image [`persist`] published in the
/// segment mapped in this process.
pub unsafe fn instantiate(e: Engine, root: *const u8) -> Built {
    let root = &*root.cast::<Root>();
    let mut script = Box::new(zend_script::default());
    script.main_op_array = *root.main;
    script.filename = script.main_op_array.filename;
    load::init_table(&mut script.function_table, root.n_functions as usize);
    load::init_table(&mut script.class_table, root.n_classes as usize);
    for i in 0..root.n_functions as usize {
        let f = *root.functions.add(i);
        let oa = op_array(e, f.ptr.cast());
        load::add_ptr(&mut script.function_table, f.key, oa.cast());
    }
    for i in 0..root.n_classes as usize {
        let c = *root.classes.add(i);
        load::add_ptr(&mut script.class_table, c.key, c.ptr);
    }
    Built {
        script,
        early_bound: (0..root.n_classes as usize)
            .map(|i| {
                let parent = *root.early_bound.add(i);
                (!parent.is_null())
                    .then(|| php::Reader::new().str(parent).unwrap_or_default().to_vec())
            })
            .collect(),
        auto_globals: root.auto_globals,
        early_bindings: root.early_bindings().to_vec(),
    }
}

/// Asks the CPU to fetch the `len` bytes at `p` (capped at 8 cache lines) into its caches
/// (a hint: nothing is read, so any address is fine).
#[inline]
pub fn prefetch(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    for line in 0..len.div_ceil(64).min(8) {
        // SAFETY: a prefetch is a hint that never faults, whatever the address.
        unsafe {
            std::arch::x86_64::_mm_prefetch(
                p.wrapping_add(line * 64).cast::<i8>(),
                std::arch::x86_64::_MM_HINT_T0,
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// [`prefetch`] of `N` cache lines from `p`, unrolled (one instruction a line, where the
/// loop of `prefetch` costs four or five).
#[inline(always)]
fn prefetch_lines<const N: usize>(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    seq_prefetch::<N>(p, 0);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn seq_prefetch<const N: usize>(p: *const u8, line: usize) {
    if line < N.min(8) {
        // SAFETY: a prefetch is a hint that never faults, whatever the address.
        unsafe {
            std::arch::x86_64::_mm_prefetch(
                p.wrapping_add(line * 64).cast::<i8>(),
                std::arch::x86_64::_MM_HINT_T0,
            );
        }
        seq_prefetch::<N>(p, line + 1);
    }
}

/// A request-private copy of the function header `t` (PHP writes its run-time cache and
/// static variables into it; its closures' definitions are immutable in the segment).
unsafe fn op_array(e: Engine, t: *const zend_op_array) -> *mut zend_op_array {
    let oa = e
        .arena_alloc(size_of::<zend_op_array>())
        .cast::<zend_op_array>();
    ptr::copy_nonoverlapping(t, oa, 1);
    oa
}

// ---------------------------------------------------------------------------------------
// Linked classes: the inheritance cache's entries.
// ---------------------------------------------------------------------------------------

/// Persists the class `ce` that `zend_do_link_class` (or `zend_try_early_bind`) just linked
/// from an immutable class of the segment, as OPcache's `zend_accel_inheritance_cache_add`
/// persists it: an immutable, linked class whose per-request state is in `map_ptr` slots.
/// What it took from its parent, interfaces and traits stays where it is when that is in
/// the segment or belongs to an internal class (both outlive every request of every
/// worker); what linking made in request memory (its own method headers, property infos,
/// constants, tables, interned keys, internal methods duplicated into it) is copied.
/// Anything else in request memory refuses the class (PHP keeps the linked copy for the
/// request, as without a cache).
///
/// # Safety
/// `ce` is a class PHP linked in this request; the writer lock is held through `w`.
pub unsafe fn persist_linked(
    ce: *mut zend_class_entry,
    w: &mut ImageWriter<'_>,
) -> R<*mut zend_class_entry> {
    let mut p = Persister { w };
    p.linked_class(ce)
}

impl Persister<'_> {
    /// Whether the class `c` outlives every request of every worker: immutable in the
    /// segment, or internal (registered before the workers were forked).
    unsafe fn permanent_class(&self, c: *const zend_class_entry) -> bool {
        c.is_null()
            || (self.w.holds(c.cast()) && (*c).ce_flags & php::ZEND_ACC_IMMUTABLE != 0)
            || u32::from((*c).type_ as u8) == php::ZEND_INTERNAL_CLASS
    }

    /// Whether the function `f` outlives every request: in the segment, or an internal
    /// function that is not a request-time duplicate.
    unsafe fn permanent_function(&self, f: *const zend_function) -> bool {
        if f.is_null() || self.w.holds(f.cast()) {
            return true;
        }
        let internal = u32::from((*f).type_) == php::ZEND_INTERNAL_FUNCTION;
        internal && (*f).common.fn_flags & php::ZEND_ACC_ARENA_ALLOCATED == 0
    }

    /// `f` as the persisted class sees it: its copy when this persist made one, else `f`
    /// itself when it is permanent.
    unsafe fn function_ref(
        &self,
        xlat: &HashMap<usize, usize>,
        f: *mut zend_function,
    ) -> R<*mut zend_function> {
        if let Some(&to) = xlat.get(&(f as usize)) {
            return Ok(to as *mut zend_function);
        }
        if self.permanent_function(f) {
            return Ok(f);
        }
        refuse("a method in request memory outside the class")
    }

    unsafe fn linked_class(&mut self, src: *mut zend_class_entry) -> R<*mut zend_class_entry> {
        let s = &*src;
        if s.ce_flags & php::ZEND_ACC_LINKED == 0 {
            return refuse("a class that is not linked");
        }
        if s.ce_flags & php::ZEND_ACC_ENUM != 0 || !s.backed_enum_table.is_null() {
            return refuse("an enum");
        }
        let t = self.copy(src, 1)?;
        clear_class_padding(t);
        self.class_numbers(t);
        let mut xlat: HashMap<usize, usize> = HashMap::new();
        xlat.insert(src as usize, t as usize);
        (*t).ce_flags |= php::ZEND_ACC_IMMUTABLE | php::ZEND_ACC_CACHED;
        (*t).refcount = 1;
        (*t).inheritance_cache = ptr::null_mut();
        (*t).static_members_table__ptr = if s.default_static_members_count > 0 {
            self.map_ptr_slot()?.cast()
        } else {
            ptr::null_mut()
        };
        (*t).mutable_data__ptr = if s.ce_flags & php::ZEND_ACC_CONSTANTS_UPDATED == 0 {
            self.map_ptr_slot()?.cast()
        } else {
            ptr::null_mut()
        };
        (*t).name = self.string(s.name)?;
        if s.ce_flags & php::ZEND_ACC_RESOLVED_PARENT != 0 {
            if !self.permanent_class(s.__bindgen_anon_1.parent) {
                return refuse("a parent in request memory");
            }
        } else {
            (*t).__bindgen_anon_1.parent_name = self.string(s.__bindgen_anon_1.parent_name)?;
        }
        (*t).info.user.filename = self.string(s.info.user.filename)?;
        (*t).info.user.doc_comment = self.string(s.info.user.doc_comment)?;
        (*t).attributes = self.attributes(s.attributes)?;

        let n_props = s.default_properties_count.max(0) as usize;
        (*t).default_properties_table = self.copy(s.default_properties_table, n_props)?;
        for i in 0..n_props {
            self.zval((*t).default_properties_table.add(i))?;
        }
        // Inherited static members are IS_INDIRECT (zend_class_init_statics follows the
        // parent's run-time table, not the pointer): kept as they are.
        let n_statics = s.default_static_members_count.max(0) as usize;
        (*t).default_static_members_table = self.copy(s.default_static_members_table, n_statics)?;
        for i in 0..n_statics {
            let zv = (*t).default_static_members_table.add(i);
            if u32::from(php::z_type(&*zv)) != php::IS_INDIRECT {
                self.zval(zv)?;
            }
        }

        // Methods: its own (and trait copies) get immutable headers here; inherited ones
        // are the parent's, in the segment; internal ones duplicated into the class are
        // copied.
        let mut own: Vec<*mut zend_op_array> = Vec::new();
        self.table_data(ptr::addr_of_mut!((*t).function_table), |p, zv| {
            let f = (*zv).value.ptr.cast::<zend_function>();
            if let Some(&to) = xlat.get(&(f as usize)) {
                (*zv).value.ptr = to as *mut c_void;
                return Ok(());
            }
            if u32::from((*f).type_) == u32::from(zend_ir::model::ZEND_USER_FUNCTION) {
                let oa = f.cast::<zend_op_array>();
                if (*oa).scope != src {
                    if !p.w.holds(f.cast()) {
                        return refuse("an inherited method in request memory");
                    }
                    return Ok(());
                }
                let m = p.alloc::<zend_op_array>(1)?;
                ptr::copy_nonoverlapping(oa, m, 1);
                (*m).scope = t;
                (*m).function_name = p.string((*m).function_name)?;
                (*m).doc_comment = p.string((*m).doc_comment)?;
                (*m).filename = p.string((*m).filename)?;
                let code: [*const u8; 8] = [
                    (*m).opcodes.cast(),
                    (*m).vars.cast(),
                    (*m).arg_info.cast(),
                    (*m).live_range.cast(),
                    (*m).try_catch_array.cast(),
                    (*m).static_variables.cast(),
                    (*m).dynamic_func_defs.cast(),
                    (*m).attributes.cast(),
                ];
                if code.iter().any(|&c| !c.is_null() && !p.w.holds(c)) || !(*m).refcount.is_null() {
                    return refuse("a method whose code is not in the segment");
                }
                p.make_immutable(m, true)?;
                xlat.insert(f as usize, m as usize);
                own.push(m);
                (*zv).value.ptr = m.cast();
            } else if (*f).common.fn_flags & php::ZEND_ACC_ARENA_ALLOCATED != 0 {
                let size = size_of::<php::zend_internal_function>();
                let c = p.alloc::<u8>(size)?;
                ptr::copy_nonoverlapping(f.cast::<u8>(), c, size);
                xlat.insert(f as usize, c as usize);
                (*zv).value.ptr = c.cast();
            }
            Ok(())
        })?;
        for &m in &own {
            (*m).prototype = self.function_ref(&xlat, (*m).prototype)?;
        }
        for slot in magic_methods(t) {
            *slot = self.function_ref(&xlat, *slot)?;
        }
        if !s.iterator_funcs_ptr.is_null() {
            let f = self.copy(s.iterator_funcs_ptr, 1)?;
            for slot in [
                ptr::addr_of_mut!((*f).zf_new_iterator),
                ptr::addr_of_mut!((*f).zf_valid),
                ptr::addr_of_mut!((*f).zf_current),
                ptr::addr_of_mut!((*f).zf_key),
                ptr::addr_of_mut!((*f).zf_next),
                ptr::addr_of_mut!((*f).zf_rewind),
            ] {
                *slot = self.function_ref(&xlat, *slot)?;
            }
            (*t).iterator_funcs_ptr = f;
        }
        if !s.arrayaccess_funcs_ptr.is_null() {
            let f = self.copy(s.arrayaccess_funcs_ptr, 1)?;
            for slot in [
                ptr::addr_of_mut!((*f).zf_offsetget),
                ptr::addr_of_mut!((*f).zf_offsetexists),
                ptr::addr_of_mut!((*f).zf_offsetset),
                ptr::addr_of_mut!((*f).zf_offsetunset),
            ] {
                *slot = self.function_ref(&xlat, *slot)?;
            }
            (*t).arrayaccess_funcs_ptr = f;
        }

        // Property infos and constants are copied, inherited ones too (as
        // zend_persist_property_info and zend_persist_class_constant do); their `ce` stays
        // the declaring class.
        let mut infos: HashMap<usize, usize> = HashMap::new();
        self.table_data(ptr::addr_of_mut!((*t).properties_info), |p, zv| {
            let info = (*zv).value.ptr.cast::<zend_property_info>();
            let c = p.copy(info, 1)?;
            numbers!(p, c, offset, flags);
            if (*c).ce == src {
                (*c).ce = t;
            } else if !p.permanent_class((*c).ce) {
                return refuse("a property of a class in request memory");
            }
            (*c).attributes = p.attributes((*c).attributes)?;
            (*c).name = p.string((*c).name)?;
            (*c).doc_comment = p.string((*c).doc_comment)?;
            p.type_(ptr::addr_of_mut!((*c).type_))?;
            infos.insert(info as usize, c as usize);
            (*zv).value.ptr = c.cast();
            Ok(())
        })?;
        if !s.properties_info_table.is_null() {
            let table = self.copy(s.properties_info_table, n_props.max(1))?;
            for i in 0..n_props {
                let slot = table.add(i);
                let info = *slot;
                if info.is_null() {
                    continue;
                }
                if let Some(&to) = infos.get(&(info as usize)) {
                    *slot = to as *mut zend_property_info;
                } else if !(self.w.holds(info.cast()) || self.permanent_class((*info).ce)) {
                    return refuse("a properties_info_table entry in request memory");
                }
            }
            (*t).properties_info_table = table;
        }
        self.table_data(ptr::addr_of_mut!((*t).constants_table), |p, zv| {
            let c = (*zv).value.ptr.cast::<zend_class_constant>();
            let tc = p.copy(c, 1)?;
            if (*tc).ce == src {
                (*tc).ce = t;
            } else if !p.permanent_class((*tc).ce) {
                return refuse("a constant of a class in request memory");
            }
            (*tc).attributes = p.attributes((*tc).attributes)?;
            p.zval(ptr::addr_of_mut!((*tc).value))?;
            (*tc).doc_comment = p.string((*tc).doc_comment)?;
            (*zv).value.ptr = tc.cast();
            Ok(())
        })?;

        let n_interfaces = s.num_interfaces as usize;
        if n_interfaces > 0 {
            if s.ce_flags & php::ZEND_ACC_RESOLVED_INTERFACES == 0 {
                return refuse("interfaces not resolved");
            }
            let list = self.copy(s.__bindgen_anon_3.interfaces, n_interfaces)?;
            for i in 0..n_interfaces {
                if !self.permanent_class(*list.add(i)) {
                    return refuse("an interface in request memory");
                }
            }
            (*t).__bindgen_anon_3.interfaces = list;
        }
        // Trait names, aliases and precedences are the unlinked class's, in the segment.
        for p in [
            s.trait_names.cast::<u8>(),
            s.trait_aliases.cast(),
            s.trait_precedences.cast(),
        ] {
            if !p.is_null() && !self.w.holds(p) {
                return refuse("trait data in request memory");
            }
        }
        Ok(t)
    }
}

/// Binds the image at `root` into the request exactly as [`load::bind`] binds what
/// [`instantiate`] yields, without building a script in between (OPcache's
/// `zend_accel_load_script` on a shared-memory hit): functions get request-private header
/// copies, classes are bound as they are, early-bound classes are bound again by their
/// parent's name interned in the segment; returns the main op_array (`emalloc`ed, the
/// caller destroys and frees it).
///
/// # Safety
/// As [`instantiate`], from a `zend_compile_file` hook.
#[link_section = ".text.hot.zopt"]
pub unsafe fn bind(e: Engine, root: *const u8) -> Result<*mut zend_op_array, load::BindError> {
    let root = &*root.cast::<Root>();
    // What binding reads next lies in other cache lines of the segment, each a miss on a
    // hit: ask for all of them at once rather than one after the other.
    // The first line of each array (a script declares a class or two: the loop of a
    // longer prefetch would cost more than it saves).
    prefetch_lines::<1>(root.classes.cast());
    prefetch_lines::<1>(root.functions.cast());
    prefetch_lines::<1>(root.early_bound.cast());
    prefetch_lines::<2>((*root.main).opcodes.cast());
    for i in 0..root.n_classes as usize {
        let c = *root.classes.add(i);
        prefetch(c.key.cast(), 32);
        // The class entry: its flags, names, tables and inheritance cache head are read
        // when the script declares it.
        prefetch_lines::<{ size_of::<zend_class_entry>().div_ceil(64) }>(c.ptr.cast());
    }
    // Then the first linked class of each unlinked one (a miss that would otherwise come
    // only when the script declares the class), now that the entries are on their way.
    for i in 0..root.n_classes as usize {
        let ce = (*root.classes.add(i)).ptr.cast::<zend_class_entry>();
        if (*ce).ce_flags & php::ZEND_ACC_LINKED == 0 {
            let head =
                ptr::addr_of!((*ce).inheritance_cache).cast::<std::sync::atomic::AtomicPtr<u8>>();
            prefetch((*head).load(Ordering::Relaxed), 64);
        }
    }
    let filename = (*root.main).filename;
    if root.has_halt_offset != 0 {
        load::register_halt_offset(filename, root.halt_offset);
    }
    for i in 0..root.n_functions as usize {
        let f = *root.functions.add(i);
        load::bind_function(f.key, op_array(e, f.ptr.cast()), filename)?;
    }
    for i in 0..root.n_classes as usize {
        let c = *root.classes.add(i);
        load::bind_class(c.key, c.ptr.cast(), *root.early_bound.add(i), filename)?;
    }
    load::bind_main(e, root.main, root.early_bindings(), root.auto_globals, true)
}
