//! The shared-memory level of the cache: one segment mapped before the server forks its
//! workers (`MAP_SHARED | MAP_ANONYMOUS`), so every php-fpm worker of one master sees the
//! same scripts. Mirrors OPcache's `zend_shared_alloc.c` (one segment, a bump allocator,
//! a writer lock, "out of memory" that stops caching without stopping serving) and
//! `zend_accelerator_hash.c` (a fixed table of scripts keyed by path).
//!
//! # Layout
//!
//! ```text
//! [Header | slots: [Slot; slot_count] | string slots: [u32; string_slot_count] |
//!  interned strings area (strings_size bytes) | entries ...]
//! ```
//!
//! - A **slot** (one cache line) holds the segment offset of the entry of one path (0:
//!   empty; bit 0 set: invalidated), the path's fingerprint (the two halves of its 128-bit
//!   xxh3 and its length), and what a hit of the current entry reads and writes: its run-time
//!   image, its revalidation time and its hit counter (the entry header keeps the
//!   authoritative copies). A lookup reads the slot alone, one cache miss: the path's bytes
//!   and the entry header lie elsewhere in the segment. Slots are claimed by a path for
//!   the life of the segment (open addressing, linear probing by the fingerprint's first
//!   half); a new version of the script replaces the offset.
//! - An **entry** is a header (path hash, validation data, lengths, hit counter,
//!   revalidation time, an invalidated flag), the path, the persisted body (the same bytes
//!   the file cache stores, validated before it was published) and the **string map**: for
//!   each string of the body, the segment offset of its copy in the interned strings area
//!   (0 when the area was full).
//! - The **interned strings area** holds each distinct string of every stored script once,
//!   in PHP 8.2's `zend_string` layout (refcount 1, `GC_STRING | IS_STR_INTERNED |
//!   IS_STR_PERMANENT`, the hash PHP's `zend_inline_hash_func` computes, the bytes and a
//!   NUL): an embedder can hand these strings to PHP as interned strings without
//!   allocating or hashing anything per request.
//!
//! # Guarantees
//!
//! - **Readers never lock**: a lookup is a probe of the table with acquire loads; an entry
//!   is immutable once published (except its atomic counters), and memory is never reused
//!   while the segment lives, so a reader holding an entry can never see it change.
//! - **Writers are serialised** by a process-shared, *robust* pthread mutex in the
//!   segment. A writer killed while holding it (SIGKILL mid-store) cannot leave it held:
//!   the next writer gets `EOWNERDEAD`, counts the half-written allocation as wasted and
//!   makes the mutex consistent. An entry is published (its offset stored with release
//!   ordering into its slot) only after it is completely written and its body validated,
//!   so no reader ever sees a half-written entry.
//! - **Full memory**: a store that does not fit (entries area, table or strings area) is
//!   refused and counted ([`ShmStats::full`]); lookups keep serving what is there.
//! - Everything read from the segment is bounds-checked against the mapping: a corrupt
//!   segment yields misses or panics in [`crate::ScriptView`]'s accessors, never reads
//!   outside the mapping.
//!
//! This is the one module of the crate that needs `unsafe` beyond mapping files: it
//! places atomics and a pthread mutex in memory shared between processes.

use crate::load::{self, ScriptView};
use crate::system::{CacheKey, SystemId, Validation};
use std::io;
use std::mem::{align_of, size_of};
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

const MAGIC: u64 = u64::from_le_bytes(*b"zoptshm2");
/// Smallest segment accepted: room for the header, a table and a few scripts.
pub const MIN_SIZE: usize = 1 << 20;

/// `sizeof(zend_string)` up to `val` in PHP 8.2 (x86_64/aarch64): refcount, type_info, h,
/// len.
pub const ZEND_STRING_HEADER: usize = 24;
/// `GC_STRING | (IS_STR_INTERNED | IS_STR_PERMANENT) << GC_FLAGS_SHIFT` in PHP 8.2.
pub const INTERNED_TYPE_INFO: u32 = 6 | (1 << 4) | (1 << 6) | (1 << 8);

/// PHP 8.2's `zend_inline_hash_func` (DJBX33A over signed chars, high bit set), the hash
/// PHP keeps in `ZSTR_H` of interned strings.
pub fn zend_string_hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 5381;
    for &b in bytes {
        hash = hash.wrapping_mul(33).wrapping_add(b as i8 as i64 as u64);
    }
    hash | 0x8000_0000_0000_0000
}

/// The segment's sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShmConfig {
    /// Bytes of the whole segment (`zopt.memory_consumption`).
    pub size: usize,
    /// Bytes of the interned strings area (`zopt.interned_strings_buffer`), inside `size`.
    pub strings_size: usize,
    /// Slots of the script table (`zopt.max_accelerated_files`).
    pub max_scripts: usize,
}

impl ShmConfig {
    /// OPcache's proportions: a quarter of the segment at most for strings, one slot per
    /// 2 KiB for scripts.
    pub fn with_size(size: usize) -> ShmConfig {
        ShmConfig {
            size,
            strings_size: size / 8,
            max_scripts: (size / 2048).clamp(256, 1 << 20),
        }
    }
}

#[repr(C)]
struct Header {
    magic: u64,
    size: u64,
    system: [u8; 16],
    mutex: libc::pthread_mutex_t,
    slots_off: u64,
    slot_count: u64,
    string_slots_off: u64,
    string_slot_count: u64,
    strings_off: u64,
    strings_size: u64,
    data_off: u64,
    /// Bump pointer of the entries area (segment offset); written under the lock.
    used: AtomicU64,
    /// Bump pointer of the strings area (segment offset); written under the lock.
    strings_used: AtomicU64,
    /// Offset and size of the allocation a writer is filling (0: none); under the lock.
    pending_off: AtomicU64,
    pending_size: AtomicU64,
    counters: [AtomicU64; COUNTERS],
    /// Bumped whenever a published entry stops being the one of its path (replaced by a
    /// newer store, invalidated): a process that remembers entries by path knows when to
    /// forget them ([`ShmCache::generation`]).
    generation: AtomicU64,
    /// Words the embedder keeps in the segment ([`ShmCache::embedder_word`]), written
    /// under the lock.
    embedder: [AtomicU64; EMBEDDER_WORDS],
}

/// How many [`ShmCache::embedder_word`]s the segment has.
pub const EMBEDDER_WORDS: usize = 4;

const HITS: usize = 0;
const MISSES: usize = 1;
const STALE: usize = 2;
const STORES: usize = 3;
const FULL: usize = 4;
const WASTED: usize = 5;
const WRITER_DEATHS: usize = 6;
const ENTRIES: usize = 7;
const INVALIDATIONS: usize = 8;
const STRINGS: usize = 9;
const STRINGS_FULL: usize = 10;
const COUNTERS: usize = 11;

#[repr(C)]
struct EntryHeader {
    path_hash: u64,
    path_len: u64,
    body_off: u64,
    body_len: u64,
    map_off: u64,
    string_count: u64,
    size: u64,
    validation: [u64; 5],
    hits: AtomicU64,
    /// Unix time (s) after which the source should be checked again.
    revalidate_at: AtomicI64,
    invalidated: AtomicU32,
    /// Set by the embedder once a hit built the entry successfully (see
    /// [`ShmEntry::mark_checked`]).
    checked: AtomicU32,
    /// Segment offset of the embedder's run-time image of the entry (0: none yet), see
    /// [`ShmCache::attach_image`]; published with release ordering once complete.
    image: AtomicU64,
    /// Bytes of the image's allocation.
    image_size: AtomicU64,
    /// Set when the embedder could not make an image of this entry (not retried).
    image_refused: AtomicU32,
}

/// One slot of the script table (see the module docs), a cache line of its own.
#[repr(C, align(64))]
struct Slot {
    /// Segment offset of the path's entry (0: empty); bit 0: the entry was invalidated.
    off: AtomicU64,
    /// The path's fingerprint, written once when a path claims the slot (before `off`).
    hash: AtomicU64,
    check: AtomicU64,
    len: AtomicU64,
    /// Of the entry at `off` (reset before a newer entry is published): its image's
    /// offset (0: none yet), next revalidation, hits.
    image: AtomicU64,
    revalidate_at: AtomicI64,
    hits: AtomicU64,
    /// PHP's hash of the path ([`zend_string_hash`]), written with the fingerprint: an
    /// embedder hands it to the path's `zend_string`, so that PHP's own table lookups of
    /// the path (`EG(included_files)`) do not hash it again on every hit.
    php_hash: AtomicU64,
}

// A lookup reads one cache line.
const _: () = assert!(size_of::<Slot>() == 64);

/// `off` of a slot whose entry was invalidated.
const INVALIDATED_BIT: u64 = 1;

/// A path's fingerprint in the table (with its length): the two halves of its 128-bit
/// xxh3, the first for probing, so that a lookup trusts 128 bits of hash instead of
/// reading the path's bytes from the entry; one pass over the path.
#[inline]
fn path_fingerprint(path: &[u8]) -> (u64, u64) {
    let h = xxhash_rust::xxh3::xxh3_128(path);
    (h as u64, (h >> 64) as u64)
}

const fn align8(n: usize) -> usize {
    (n + 7) & !7
}

fn encode_validation(v: &Validation) -> [u64; 5] {
    match *v {
        Validation::MtimeSize {
            mtime_sec,
            mtime_nsec,
            size,
        } => [1, mtime_sec as u64, mtime_nsec as u64, size, 0],
        Validation::ContentHash { size, hash } => [2, size, hash as u64, (hash >> 64) as u64, 0],
    }
}

fn decode_validation(v: &[u64; 5]) -> Option<Validation> {
    match v[0] {
        1 => Some(Validation::MtimeSize {
            mtime_sec: v[1] as i64,
            mtime_nsec: v[2] as u32,
            size: v[3],
        }),
        2 => Some(Validation::ContentHash {
            size: v[1],
            hash: u128::from(v[2]) | (u128::from(v[3]) << 64),
        }),
        _ => None,
    }
}

/// Counters of a segment, shared by every process using it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShmStats {
    pub hits: u64,
    /// Lookups that found no entry for the path.
    pub misses: u64,
    /// Lookups that found an entry whose source had changed.
    pub stale: u64,
    pub stores: u64,
    /// Stores refused because the segment (entries, table) was full.
    pub full: u64,
    /// Bytes no reader can reach any more: replaced or invalidated entries, allocations of
    /// writers that died mid-store.
    pub wasted: u64,
    /// Writers that died holding the lock (recovered by the next writer).
    pub writer_deaths: u64,
    /// Scripts in the table.
    pub entries: u64,
    pub invalidations: u64,
    /// Distinct strings in the interned strings area.
    pub strings: u64,
    /// Strings that did not fit the interned strings area.
    pub strings_full: u64,
    /// Bytes of the segment, of the entries area and of it in use.
    pub size: u64,
    pub data_size: u64,
    pub data_used: u64,
    pub strings_size: u64,
    pub strings_used: u64,
}

/// Why a store was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShmStoreError {
    #[error("the shared memory segment is full")]
    Full,
    #[error("the script table is full")]
    TableFull,
    #[error("the body is not a valid persisted script: {0}")]
    Invalid(String),
    #[error("cannot take the writer lock (error {0})")]
    Lock(i32),
}

/// One shared-memory segment. Create it before forking: children inherit the mapping.
pub struct ShmCache {
    base: *mut u8,
    len: usize,
}

// SAFETY: everything mutable in the segment is an atomic or is written under the
// process-shared mutex; published entries are immutable.
unsafe impl Send for ShmCache {}
unsafe impl Sync for ShmCache {}

impl Drop for ShmCache {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `create` mapped; no reference into it outlives self.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// A published entry, read in place.
#[derive(Clone, Copy)]
pub struct ShmEntry<'a> {
    shm: &'a ShmCache,
    off: usize,
    /// Index of the entry's slot.
    slot: usize,
    /// That slot (a hit reads it several times: its address is not computed each time).
    slot_ref: &'a Slot,
}

/// The same published entry (same segment, same offset).
impl PartialEq for ShmEntry<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.shm, other.shm) && self.off == other.off
    }
}

impl Eq for ShmEntry<'_> {}

impl std::fmt::Debug for ShmEntry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShmEntry")
            .field("offset", &self.off)
            .field("path", &String::from_utf8_lossy(self.path()))
            .finish()
    }
}

impl<'a> ShmEntry<'a> {
    #[inline]
    fn header(&self) -> &'a EntryHeader {
        // SAFETY: `off` was checked to leave room for a whole header inside the entries
        // area (`entry_at`, `find`); entries are 8-aligned.
        unsafe { &*(self.shm.base.add(self.off) as *const EntryHeader) }
    }

    /// The entry's slot, when it still holds this entry (else a newer entry or none: the
    /// header's own fields are used).
    #[inline]
    fn current_slot(&self) -> Option<&'a Slot> {
        let slot = self.slot_ref;
        (slot.off.load(Ordering::Acquire) & !INVALIDATED_BIT == self.off as u64).then_some(slot)
    }

    /// `len` bytes at segment offset `off` if they lie inside this entry's part of the
    /// entries area (empty otherwise: a damaged header yields an unusable entry, never a
    /// read outside the mapping).
    fn bytes(&self, off: u64, len: u64) -> &'a [u8] {
        let end_of_data = self.shm.header().used.load(Ordering::Acquire);
        let inside = off
            .checked_add(len)
            .is_some_and(|end| off >= self.off as u64 && end <= end_of_data);
        if !inside {
            return &[];
        }
        // SAFETY: checked just above to lie inside the mapping; published bytes are never
        // written again.
        unsafe { std::slice::from_raw_parts(self.shm.base.add(off as usize), len as usize) }
    }

    pub fn path(&self) -> &'a [u8] {
        let h = self.header();
        self.bytes(
            self.off as u64 + size_of::<EntryHeader>() as u64,
            h.path_len,
        )
    }

    /// The persisted body (validated before it was published).
    pub fn body(&self) -> &'a [u8] {
        let h = self.header();
        self.bytes(h.body_off, h.body_len)
    }

    /// Zero-copy view of the body.
    pub fn view(&self) -> ScriptView<'a> {
        ScriptView::trusted(self.body())
    }

    /// The validation data of the source the entry was made from.
    pub fn validation(&self) -> Option<Validation> {
        decode_validation(&self.header().validation)
    }

    /// For each string id of the body, the segment address of its interned copy (null when
    /// the strings area was full).
    pub fn interned_strings(&self) -> impl ExactSizeIterator<Item = *const u8> + 'a {
        let h = self.header();
        let map = self.bytes(h.map_off, h.string_count.saturating_mul(4));
        let base = self.shm.base;
        let strings =
            self.shm.header().strings_off..self.shm.header().strings_used.load(Ordering::Acquire);
        map.chunks_exact(4).map(move |c| {
            let off = u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            if off == 0 || !strings.contains(&off) {
                std::ptr::null()
            } else {
                // SAFETY: inside the strings area, checked just above.
                unsafe { base.add(off as usize) as *const u8 }
            }
        })
    }

    /// Hits of this entry, all processes together.
    pub fn hits(&self) -> u64 {
        match self.current_slot() {
            Some(slot) => slot.hits.load(Ordering::Relaxed),
            None => self.header().hits.load(Ordering::Relaxed),
        }
    }

    /// Bytes the entry occupies in the segment (with its run-time image, if any).
    pub fn size(&self) -> u64 {
        let h = self.header();
        h.size + h.image_size.load(Ordering::Relaxed)
    }

    /// PHP's hash of the entry's path ([`zend_string_hash`], `ZSTR_H` of a string holding
    /// it), kept in the slot the path claimed: one load from the cache line the lookup read.
    #[inline]
    pub fn path_php_hash(&self) -> u64 {
        self.slot_ref.php_hash.load(Ordering::Relaxed)
    }

    /// The embedder's run-time image of this entry (see [`ShmCache::attach_image`]): the
    /// address of its root, complete and immutable once seen here.
    #[inline]
    pub fn image(&self) -> Option<*const u8> {
        let off = match self.current_slot() {
            Some(slot) => {
                let image = slot.image.load(Ordering::Acquire);
                // The slot may have moved on to a newer entry meanwhile: then this
                // entry's own header says.
                if slot.off.load(Ordering::Acquire) & !INVALIDATED_BIT == self.off as u64 {
                    image
                } else {
                    self.header().image.load(Ordering::Acquire)
                }
            }
            None => self.header().image.load(Ordering::Acquire),
        };
        (off != 0).then(|| {
            // SAFETY: image offsets are written under the lock, inside the entries area.
            unsafe { self.shm.base.add(off as usize) as *const u8 }
        })
    }

    /// Whether making an image of this entry failed once (it is not tried again).
    pub fn image_refused(&self) -> bool {
        self.header().image_refused.load(Ordering::Relaxed) != 0
    }

    #[inline]
    fn revalidate_at(&self) -> &'a AtomicI64 {
        match self.current_slot() {
            Some(slot) => &slot.revalidate_at,
            None => &self.header().revalidate_at,
        }
    }

    /// Whether the source needs a fresh check at time `now` (unix seconds): true once
    /// `revalidate_freq` seconds passed since the last check.
    #[inline]
    pub fn needs_revalidation(&self, now: i64) -> bool {
        now >= self.revalidate_at().load(Ordering::Relaxed)
    }

    /// Records a check of the source at `now`: the next is due at `now + freq`.
    pub fn revalidated(&self, now: i64, freq: i64) {
        self.revalidate_at()
            .store(now.saturating_add(freq), Ordering::Relaxed);
    }

    /// Counts a hit (here and in the segment's counters).
    pub fn record_hit(&self) {
        self.count_hit();
        self.shm.count_hits(1);
    }

    /// Counts a hit of this entry only; the embedder adds it to the segment's counter with
    /// [`ShmCache::count_hits`] (it may batch those: the segment's counters share a cache
    /// line that every process writes).
    ///
    /// A relaxed load and store, not a locked increment (which costs tens of cycles per
    /// hit): two processes counting a hit of the same script at the same instant may count
    /// one, as OPcache's `persistent_script->dynamic_members.hits++` may. The count is a
    /// statistic; nothing depends on it.
    #[inline]
    pub fn count_hit(&self) {
        let hits = match self.current_slot() {
            Some(slot) => &slot.hits,
            None => &self.header().hits,
        };
        hits.store(hits.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Records that the embedder's checks of this entry's content passed (e.g. the operand
    /// checks before building op_arrays): the bytes never change, so later hits in any
    /// process may skip them.
    pub fn mark_checked(&self) {
        self.header().checked.store(1, Ordering::Release);
    }

    /// Whether [`Self::mark_checked`] was called for this entry.
    pub fn is_checked(&self) -> bool {
        self.header().checked.load(Ordering::Acquire) != 0
    }

    /// Whether [`ShmCache::invalidate`] retired the entry.
    pub fn is_invalidated(&self) -> bool {
        self.header().invalidated.load(Ordering::Acquire) != 0
    }
}

/// Allocation and interning in the segment for [`ShmCache::attach_image`], valid while its
/// writer lock is held. Memory comes from the entries area's bump pointer, zero-filled
/// (the segment never reuses memory), and is never written by anyone else.
pub struct ImageWriter<'a> {
    shm: &'a ShmCache,
    start: u64,
    end: u64,
}

impl ImageWriter<'_> {
    /// `size` bytes aligned to `align` (a power of two, at most 64), zero-filled; `None`
    /// when the segment is full.
    pub fn alloc(&mut self, size: usize, align: usize) -> Option<*mut u8> {
        let h = self.shm.header();
        let align = align.clamp(8, 64) as u64;
        let at = self.end.checked_add(align - 1)? & !(align - 1);
        let end = at.checked_add(size as u64)?;
        if end > h.size {
            self.shm.counter(FULL).fetch_add(1, Ordering::Relaxed);
            return None;
        }
        self.end = end;
        h.pending_size.store(end - self.start, Ordering::Relaxed);
        h.used.store(align16(end), Ordering::Release);
        // SAFETY: [at, end) lies in the entries area, reserved under the lock.
        Some(unsafe { self.shm.base.add(at as usize) })
    }

    /// The address of the segment's interned copy of `bytes` (a PHP `zend_string`, see the
    /// module docs); `None` when the strings area is full.
    pub fn intern(&mut self, bytes: &[u8]) -> Option<*mut u8> {
        let off = self.shm.intern(bytes);
        // SAFETY: `intern` returns offsets of strings inside the mapping.
        (off != 0).then(|| unsafe { self.shm.base.add(off as usize) })
    }

    /// Whether `p` points into the segment's interned strings area.
    pub fn is_interned_here(&self, p: *const u8) -> bool {
        let h = self.shm.header();
        let base = self.shm.base as usize;
        let p = p as usize;
        p >= base + h.strings_off as usize && p < base + (h.strings_off + h.strings_size) as usize
    }

    /// Whether `p` points into the segment at all.
    pub fn holds(&self, p: *const u8) -> bool {
        self.shm.contains(p)
    }

    /// The embedder's word `i` (see [`ShmCache::embedder_word`]); the lock is held.
    pub fn embedder_word(&self, i: usize) -> &AtomicU64 {
        self.shm.embedder_word(i)
    }
}

const fn align16(n: u64) -> u64 {
    (n + 15) & !15
}

/// The outcome of [`ShmCache::lookup_key`].
#[derive(Debug)]
pub enum ShmLookup<'a> {
    Hit(ShmEntry<'a>),
    /// An entry whose validation data differs from the key's.
    Stale,
    Miss,
}

/// Holds the writer lock; releases it on drop.
struct WriteLock<'a>(&'a ShmCache);

impl Drop for WriteLock<'_> {
    fn drop(&mut self) {
        // SAFETY: this process holds the mutex (taken by `lock`).
        unsafe { libc::pthread_mutex_unlock(self.0.mutex()) };
    }
}

impl ShmCache {
    /// Maps a new segment of `config.size` bytes (`MAP_SHARED | MAP_ANONYMOUS`) and lays it
    /// out. Processes forked afterwards share it.
    pub fn create(config: ShmConfig, system: &SystemId) -> io::Result<ShmCache> {
        let size = config.size;
        if size < MIN_SIZE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a shared memory segment needs at least {MIN_SIZE} bytes"),
            ));
        }
        let slot_count = config.max_scripts.max(16).next_power_of_two();
        let strings_size = align8(config.strings_size.min(size / 2));
        let string_slot_count = (strings_size / 64).max(16).next_power_of_two();
        let slots_off = (size_of::<Header>() + 63) & !63;
        let string_slots_off = slots_off + slot_count * size_of::<Slot>();
        let strings_off = align8(string_slots_off + string_slot_count * 4);
        let data_off = strings_off + strings_size;
        if data_off + MIN_SIZE / 2 > size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the segment is too small for its tables",
            ));
        }
        // SAFETY: a fresh anonymous shared mapping; checked for failure below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let shm = ShmCache {
            base: base.cast(),
            len: size,
        };
        // SAFETY: the mapping is zero-filled, page-aligned and at least MIN_SIZE bytes, so
        // the header fits; nobody else sees it yet.
        unsafe {
            let h = shm.base as *mut Header;
            (*h).magic = MAGIC;
            (*h).size = size as u64;
            (*h).system = system.digest();
            (*h).slots_off = slots_off as u64;
            (*h).slot_count = slot_count as u64;
            (*h).string_slots_off = string_slots_off as u64;
            (*h).string_slot_count = string_slot_count as u64;
            (*h).strings_off = strings_off as u64;
            (*h).strings_size = strings_size as u64;
            (*h).data_off = data_off as u64;
            (*h).used = AtomicU64::new(data_off as u64);
            (*h).strings_used = AtomicU64::new(strings_off as u64 + 8);
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            let mut rc = libc::pthread_mutexattr_init(&mut attr);
            if rc == 0 {
                rc = libc::pthread_mutexattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED);
            }
            if rc == 0 {
                rc = libc::pthread_mutexattr_setrobust(&mut attr, libc::PTHREAD_MUTEX_ROBUST);
            }
            if rc == 0 {
                rc = libc::pthread_mutex_init(std::ptr::addr_of_mut!((*h).mutex), &attr);
            }
            libc::pthread_mutexattr_destroy(&mut attr);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
        }
        Ok(shm)
    }

    #[inline]
    fn header(&self) -> &Header {
        // SAFETY: the header was written by `create` and is only mutated through atomics
        // and the mutex afterwards.
        unsafe { &*(self.base as *const Header) }
    }

    fn mutex(&self) -> *mut libc::pthread_mutex_t {
        // SAFETY: a field of the header inside the mapping.
        unsafe { std::ptr::addr_of_mut!((*(self.base as *mut Header)).mutex) }
    }

    fn counter(&self, i: usize) -> &AtomicU64 {
        &self.header().counters[i]
    }

    #[inline]
    fn slot(&self, i: usize) -> &Slot {
        let h = self.header();
        // `create` made the count a power of two: a mask, not a division, on every lookup.
        let i = i & (h.slot_count as usize - 1);
        // SAFETY: the slots array lies in the mapping (laid out by `create`), 64-aligned
        // (the mapping is page-aligned); its fields are atomics.
        unsafe { &*(self.base.add(h.slots_off as usize + i * size_of::<Slot>()) as *const Slot) }
    }

    fn string_slot(&self, i: usize) -> &AtomicU32 {
        let h = self.header();
        // SAFETY: the string slots lie in the mapping (laid out by `create`), 4-aligned.
        unsafe { &*(self.base.add(h.string_slots_off as usize + i * 4) as *const AtomicU32) }
    }

    /// The entry at segment offset `off`, if it lies wholly inside the entries area.
    fn entry_at(&self, off: u64, slot: usize) -> Option<ShmEntry<'_>> {
        let e = self.entry_header_at(off, slot, self.slot(slot))?;
        let off = e.off;
        let end_of_data = self.header().used.load(Ordering::Acquire) as usize;
        let eh = e.header();
        let inside = |start: u64, len: u64| {
            start
                .checked_add(len)
                .is_some_and(|end| start >= off as u64 && end <= end_of_data as u64)
        };
        let path_off = (off + size_of::<EntryHeader>()) as u64;
        if !inside(path_off, eh.path_len)
            || !inside(eh.body_off, eh.body_len)
            || !inside(eh.map_off, eh.string_count.checked_mul(4)?)
        {
            return None;
        }
        Some(e)
    }

    /// The entry at `off` if a whole header fits there inside the entries area; nothing of
    /// the entry is read (its accessors check the ranges they read).
    #[inline]
    fn entry_header_at<'s>(
        &'s self,
        off: u64,
        slot: usize,
        slot_ref: &'s Slot,
    ) -> Option<ShmEntry<'s>> {
        let h = self.header();
        let off = usize::try_from(off).ok()?;
        let end_of_data = h.used.load(Ordering::Acquire) as usize;
        if off < h.data_off as usize
            || off % align_of::<EntryHeader>() != 0
            || off.checked_add(size_of::<EntryHeader>())? > end_of_data
        {
            return None;
        }
        Some(ShmEntry {
            shm: self,
            off,
            slot,
            slot_ref,
        })
    }

    /// The entry of `path`, whatever its validation data (no lock, no counter). Reads the
    /// table's slots only: a slot whose fingerprint (two independent 64-bit hashes and the
    /// length) is the path's is the path's.
    #[inline(always)]
    pub fn find(&self, path: &[u8]) -> Option<ShmEntry<'_>> {
        let (hash, check) = path_fingerprint(path);
        let count = self.header().slot_count as usize;
        let mut i = hash as usize & (count - 1);
        for _ in 0..count {
            let slot = self.slot(i);
            let off = slot.off.load(Ordering::Acquire);
            if off == 0 {
                return None;
            }
            if slot.hash.load(Ordering::Relaxed) == hash
                && slot.len.load(Ordering::Relaxed) == path.len() as u64
                && slot.check.load(Ordering::Relaxed) == check
            {
                if off & INVALIDATED_BIT != 0 {
                    return None;
                }
                return self.entry_header_at(off, i, slot);
            }
            i = (i + 1) & (count - 1);
        }
        None
    }

    /// Looks `key` up and counts the outcome (a hit is counted by
    /// [`ShmEntry::record_hit`], once the caller used it).
    pub fn lookup_key(&self, key: &CacheKey) -> ShmLookup<'_> {
        match self.find(&key.path) {
            Some(e) if e.validation() == Some(key.validation) => ShmLookup::Hit(e),
            Some(_) => {
                self.counter(STALE).fetch_add(1, Ordering::Relaxed);
                ShmLookup::Stale
            }
            None => {
                self.count_miss();
                ShmLookup::Miss
            }
        }
    }

    /// Adds `n` hits to the segment's counter (see [`ShmEntry::count_hit`]).
    pub fn count_hits(&self, n: u64) {
        self.counter(HITS).fetch_add(n, Ordering::Relaxed);
    }

    /// Counts a lookup that found nothing usable.
    pub fn count_miss(&self) {
        self.counter(MISSES).fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a lookup that found an entry whose source had changed.
    pub fn count_stale(&self) {
        self.counter(STALE).fetch_add(1, Ordering::Relaxed);
    }

    fn lock(&self) -> Result<WriteLock<'_>, ShmStoreError> {
        // SAFETY: the mutex was initialised process-shared and robust by `create`.
        let rc = unsafe { libc::pthread_mutex_lock(self.mutex()) };
        match rc {
            0 => Ok(WriteLock(self)),
            libc::EOWNERDEAD => {
                self.recover();
                // SAFETY: we own the mutex in the inconsistent state; the state it guards
                // was just repaired.
                unsafe { libc::pthread_mutex_consistent(self.mutex()) };
                Ok(WriteLock(self))
            }
            rc => Err(ShmStoreError::Lock(rc)),
        }
    }

    /// The writer lock if it is free now (`None`: another writer holds it).
    fn try_lock(&self) -> Result<Option<WriteLock<'_>>, ShmStoreError> {
        // SAFETY: the mutex was initialised process-shared and robust by `create`.
        let rc = unsafe { libc::pthread_mutex_trylock(self.mutex()) };
        match rc {
            0 => Ok(Some(WriteLock(self))),
            libc::EBUSY => Ok(None),
            libc::EOWNERDEAD => {
                self.recover();
                // SAFETY: as in `lock`.
                unsafe { libc::pthread_mutex_consistent(self.mutex()) };
                Ok(Some(WriteLock(self)))
            }
            rc => Err(ShmStoreError::Lock(rc)),
        }
    }

    /// A writer died holding the lock: what it allocated and did not publish is wasted.
    /// (Entries are published last, so nothing half-written is reachable.)
    fn recover(&self) {
        let h = self.header();
        self.counter(WRITER_DEATHS).fetch_add(1, Ordering::Relaxed);
        let off = h.pending_off.swap(0, Ordering::Relaxed);
        let size = h.pending_size.swap(0, Ordering::Relaxed);
        if off != 0 {
            let published = (0..h.slot_count as usize).any(|i| {
                let slot = self.slot(i).off.load(Ordering::Relaxed) & !INVALIDATED_BIT;
                slot == off
                    || self
                        .entry_at(slot, i)
                        .is_some_and(|e| e.header().image.load(Ordering::Relaxed) == off)
            });
            if !published {
                self.counter(WASTED).fetch_add(size, Ordering::Relaxed);
            }
        }
    }

    /// Stores `body` (a persisted script; it is validated here) for `key`.
    pub fn store(&self, key: &CacheKey, body: &[u8]) -> Result<ShmEntry<'_>, ShmStoreError> {
        self.store_with(key, body.len(), |out| out.copy_from_slice(body))
    }

    /// Stores a body of exactly `len` bytes that `fill` writes into the allocation (the
    /// second phase of a two-phase persist), under the writer lock. The body is validated
    /// after `fill` and published only if valid.
    pub fn store_with(
        &self,
        key: &CacheKey,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<ShmEntry<'_>, ShmStoreError> {
        let r = self.store_locked(key, len, fill);
        match &r {
            Ok(_) => self.counter(STORES).fetch_add(1, Ordering::Relaxed),
            Err(ShmStoreError::Full | ShmStoreError::TableFull) => {
                self.counter(FULL).fetch_add(1, Ordering::Relaxed)
            }
            Err(_) => 0,
        };
        r
    }

    fn store_locked(
        &self,
        key: &CacheKey,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<ShmEntry<'_>, ShmStoreError> {
        let _lock = self.lock()?;
        let h = self.header();
        let (hash, check) = path_fingerprint(&key.path);
        // The slot of this path (an existing entry to replace) or the first free one.
        let count = h.slot_count as usize;
        let mut i = hash as usize & (count - 1);
        let mut slot = None;
        let mut old = None;
        for _ in 0..count {
            let rec = self.slot(i);
            let off = rec.off.load(Ordering::Relaxed) & !INVALIDATED_BIT;
            if off == 0 {
                slot = Some(i);
                break;
            }
            let same_print = rec.hash.load(Ordering::Relaxed) == hash
                && rec.len.load(Ordering::Relaxed) == key.path.len() as u64
                && rec.check.load(Ordering::Relaxed) == check;
            if same_print {
                // The writer compares the bytes too; a fingerprint collision (never seen,
                // 2^-128) would leave the later path without a slot rather than share one.
                match self.entry_at(off, i) {
                    Some(e) if e.path() == &key.path[..] => {
                        slot = Some(i);
                        old = Some(e);
                        break;
                    }
                    _ => return Err(ShmStoreError::TableFull),
                }
            }
            i = (i + 1) & (count - 1);
        }
        let slot = slot.ok_or(ShmStoreError::TableFull)?;

        let path_off = size_of::<EntryHeader>();
        let body_rel = align8(path_off + key.path.len());
        let map_rel = align8(body_rel + len);
        let start = h.used.load(Ordering::Relaxed);
        let reserve = |size: usize| {
            start
                .checked_add(size as u64)
                .filter(|&end| end <= h.size)
                .ok_or(ShmStoreError::Full)
        };
        // Phase one: header, path and body; the string map's size is known once the body
        // is validated.
        let end = reserve(map_rel)?;
        h.pending_off.store(start, Ordering::Relaxed);
        h.pending_size.store(map_rel as u64, Ordering::Relaxed);
        h.used.store(end, Ordering::Release);
        let start_us = start as usize;
        let waste = |size: usize, e: ShmStoreError| {
            self.counter(WASTED)
                .fetch_add(size as u64, Ordering::Relaxed);
            h.pending_off.store(0, Ordering::Relaxed);
            h.pending_size.store(0, Ordering::Relaxed);
            e
        };
        // SAFETY: [start, end) lies in the entries area, was just allocated under the lock
        // and is not reachable by any reader until published.
        let area = unsafe { std::slice::from_raw_parts_mut(self.base.add(start_us), map_rel) };
        area[path_off..path_off + key.path.len()].copy_from_slice(&key.path);
        fill(&mut area[body_rel..body_rel + len]);
        let info = match load::validate(&area[body_rel..body_rel + len]) {
            Ok(info) => info,
            Err(e) => return Err(waste(map_rel, ShmStoreError::Invalid(e.to_string()))),
        };
        let string_count = info.strings as usize;
        let size = align8(map_rel + string_count * 4);
        let end = match reserve(size) {
            Ok(end) => end,
            Err(e) => return Err(waste(map_rel, e)),
        };
        h.pending_size.store(size as u64, Ordering::Relaxed);
        h.used.store(end, Ordering::Release);
        // SAFETY: as above, now with the map.
        let area = unsafe { std::slice::from_raw_parts_mut(self.base.add(start_us), size) };
        let view = ScriptView::trusted(&area[body_rel..body_rel + len]);
        let map: Vec<u32> = (0..string_count as u32)
            .map(|id| self.intern(view.string(id)))
            .collect();
        for (k, off) in map.into_iter().enumerate() {
            let at = map_rel + k * 4;
            area[at..at + 4].copy_from_slice(&off.to_le_bytes());
        }
        let header = EntryHeader {
            path_hash: key.path_hash(),
            path_len: key.path.len() as u64,
            body_off: (start_us + body_rel) as u64,
            body_len: len as u64,
            map_off: (start_us + map_rel) as u64,
            string_count: string_count as u64,
            size: size as u64,
            validation: encode_validation(&key.validation),
            hits: AtomicU64::new(0),
            revalidate_at: AtomicI64::new(0),
            invalidated: AtomicU32::new(0),
            checked: AtomicU32::new(0),
            image: AtomicU64::new(0),
            image_size: AtomicU64::new(0),
            image_refused: AtomicU32::new(0),
        };
        // SAFETY: the allocation starts with room for the header, 8-aligned.
        unsafe { std::ptr::write(self.base.add(start_us) as *mut EntryHeader, header) };
        let rec = self.slot(slot);
        if old.is_none() {
            rec.hash.store(hash, Ordering::Relaxed);
            rec.check.store(check, Ordering::Relaxed);
            rec.len.store(key.path.len() as u64, Ordering::Relaxed);
            rec.php_hash
                .store(zend_string_hash(&key.path), Ordering::Relaxed);
        }
        // What the slot keeps of the entry it points to starts over with the new one.
        rec.image.store(0, Ordering::Relaxed);
        rec.revalidate_at.store(0, Ordering::Relaxed);
        rec.hits.store(0, Ordering::Relaxed);
        rec.off.store(start, Ordering::Release);
        if old.is_some() {
            h.generation.fetch_add(1, Ordering::Release);
        }
        h.pending_off.store(0, Ordering::Relaxed);
        h.pending_size.store(0, Ordering::Relaxed);
        match old {
            // An invalidated entry was counted as wasted (and no longer as a script) then.
            Some(old) if !old.is_invalidated() => {
                self.counter(WASTED)
                    .fetch_add(old.size(), Ordering::Relaxed);
            }
            _ => {
                self.counter(ENTRIES).fetch_add(1, Ordering::Relaxed);
            }
        }
        self.entry_at(start, slot).ok_or(ShmStoreError::Full)
    }

    /// The segment offset of the interned copy of `bytes` (0: the area is full). Called
    /// under the writer lock.
    fn intern(&self, bytes: &[u8]) -> u32 {
        let h = self.header();
        let hash = zend_string_hash(bytes);
        let count = h.string_slot_count as usize;
        let mut i = hash as usize & (count - 1);
        let mut free = None;
        for _ in 0..count {
            let off = self.string_slot(i).load(Ordering::Relaxed);
            if off == 0 {
                free = Some(i);
                break;
            }
            // SAFETY: slots hold offsets of strings this lock's holders wrote in the area.
            let (h2, s) = unsafe { self.string_at(off as usize) };
            if h2 == hash && s == bytes {
                return off;
            }
            i = (i + 1) & (count - 1);
        }
        let Some(free) = free else {
            self.counter(STRINGS_FULL).fetch_add(1, Ordering::Relaxed);
            return 0;
        };
        let size = align8(ZEND_STRING_HEADER + bytes.len() + 1) as u64;
        let start = h.strings_used.load(Ordering::Relaxed);
        let end = start + size;
        if end > h.strings_off + h.strings_size || end > u64::from(u32::MAX) {
            self.counter(STRINGS_FULL).fetch_add(1, Ordering::Relaxed);
            return 0;
        }
        // SAFETY: [start, end) is free space of the strings area, reserved under the lock.
        unsafe {
            let p = self.base.add(start as usize);
            (p as *mut u32).write(1);
            (p.add(4) as *mut u32).write(INTERNED_TYPE_INFO);
            (p.add(8) as *mut u64).write(hash);
            (p.add(16) as *mut u64).write(bytes.len() as u64);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(ZEND_STRING_HEADER), bytes.len());
            p.add(ZEND_STRING_HEADER + bytes.len()).write(0);
        }
        h.strings_used.store(end, Ordering::Release);
        self.string_slot(free)
            .store(start as u32, Ordering::Release);
        self.counter(STRINGS).fetch_add(1, Ordering::Relaxed);
        start as u32
    }

    /// The hash and bytes of the interned string at segment offset `off`.
    ///
    /// # Safety
    /// `off` is an offset `intern` returned.
    unsafe fn string_at(&self, off: usize) -> (u64, &[u8]) {
        let p = self.base.add(off);
        let hash = (p.add(8) as *const u64).read();
        let len = (p.add(16) as *const u64).read() as usize;
        (
            hash,
            std::slice::from_raw_parts(p.add(ZEND_STRING_HEADER), len),
        )
    }

    /// Gives `entry` a run-time image: under the writer lock, `build` persists the
    /// embedder's own structures for the entry into memory it takes from the segment with
    /// [`ImageWriter::alloc`] (strings through [`ImageWriter::intern`]) and returns the
    /// address of the image's root, which is then published (release ordering) for every
    /// process: [`ShmEntry::image`]. `None` from `build` refuses the image for good
    /// ([`ShmEntry::image_refused`]) and counts what it allocated as wasted.
    ///
    /// Nothing happens when another writer holds the lock (a hit never waits for a writer:
    /// the next hit tries again), when the entry got an image (or a refusal) meanwhile, or
    /// when it is no longer the published entry of its path. A writer killed inside `build`
    /// leaves its allocation unpublished and counted as wasted by the next writer, as a
    /// killed store does. Returns whether an image was published by this call.
    pub fn attach_image(
        &self,
        entry: ShmEntry<'_>,
        build: impl FnOnce(&mut ImageWriter<'_>) -> Option<*const u8>,
    ) -> Result<bool, ShmStoreError> {
        let Some(_lock) = self.try_lock()? else {
            return Ok(false);
        };
        let eh = entry.header();
        let current = self.find(entry.path()).is_some_and(|e| e.off == entry.off);
        if !current
            || eh.image.load(Ordering::Relaxed) != 0
            || eh.image_refused.load(Ordering::Relaxed) != 0
        {
            return Ok(false);
        }
        let h = self.header();
        let start = align16(h.used.load(Ordering::Relaxed));
        h.pending_off.store(start, Ordering::Relaxed);
        h.pending_size.store(0, Ordering::Relaxed);
        let mut w = ImageWriter {
            shm: self,
            start,
            end: start,
        };
        let root = build(&mut w);
        let size = w.end - start;
        let root_off = root
            .map(|p| p as u64 - self.base as u64)
            .filter(|&off| off >= start && off < w.end);
        match root_off {
            Some(off) => {
                eh.image_size.store(size, Ordering::Relaxed);
                eh.image.store(off, Ordering::Release);
                if let Some(slot) = entry.current_slot() {
                    slot.image.store(off, Ordering::Release);
                }
            }
            None => {
                eh.image_refused.store(1, Ordering::Relaxed);
                self.counter(WASTED).fetch_add(size, Ordering::Relaxed);
            }
        }
        h.pending_off.store(0, Ordering::Relaxed);
        h.pending_size.store(0, Ordering::Relaxed);
        Ok(root_off.is_some())
    }

    /// Persists structures of the embedder that belong to no entry (OPcache's inheritance
    /// cache entries) under the writer lock, as [`ShmCache::attach_image`] does for an
    /// entry's image: `build` allocates with [`ImageWriter::alloc`] and publishes what it
    /// wrote itself (release ordering), returning it; `None` counts what it allocated as
    /// wasted. `Ok(None)` without calling `build` when another writer holds the lock (the
    /// caller goes on without the cache). A writer killed inside `build` leaves its
    /// allocation counted as wasted by the next writer.
    pub fn write_detached<T>(
        &self,
        build: impl FnOnce(&mut ImageWriter<'_>) -> Option<T>,
    ) -> Result<Option<T>, ShmStoreError> {
        let Some(_lock) = self.try_lock()? else {
            return Ok(None);
        };
        let h = self.header();
        let start = align16(h.used.load(Ordering::Relaxed));
        h.pending_off.store(start, Ordering::Relaxed);
        h.pending_size.store(0, Ordering::Relaxed);
        let mut w = ImageWriter {
            shm: self,
            start,
            end: start,
        };
        let built = build(&mut w);
        if built.is_none() {
            self.counter(WASTED)
                .fetch_add(w.end - start, Ordering::Relaxed);
        }
        h.pending_off.store(0, Ordering::Relaxed);
        h.pending_size.store(0, Ordering::Relaxed);
        Ok(built)
    }

    /// A number that changes whenever an entry [`ShmCache::find`] returned may no longer
    /// be the published entry of its path (a newer store replaced it, or it was
    /// invalidated). Stores of new paths leave it unchanged.
    #[inline]
    pub fn generation(&self) -> u64 {
        self.header().generation.load(Ordering::Acquire)
    }

    /// The segment's first byte and length (fixed for the mapping's life).
    pub fn bounds(&self) -> (*const u8, usize) {
        (self.base as *const u8, self.len)
    }

    /// Whether `p` points into the segment.
    pub fn contains(&self, p: *const u8) -> bool {
        let base = self.base as usize;
        (p as usize) >= base && (p as usize) < base + self.len
    }

    /// A word of the segment the embedder owns (`i < EMBEDDER_WORDS`), zero in a new
    /// segment; shared by every process, to be changed only under the writer lock (inside
    /// [`ShmCache::attach_image`] or [`ShmCache::write_detached`]).
    pub fn embedder_word(&self, i: usize) -> &AtomicU64 {
        &self.header().embedder[i]
    }

    /// Retires the entry of `path` (readers holding it keep a valid entry; lookups miss).
    pub fn invalidate(&self, path: &[u8]) -> bool {
        let Ok(_lock) = self.lock() else {
            return false;
        };
        match self.find(path) {
            Some(e) => {
                self.retire(&e);
                true
            }
            None => false,
        }
    }

    /// Retires every entry (`zopt_reset`): each script is compiled and stored again on its
    /// next use. Their memory is counted as wasted, not reused: requests running now may
    /// still execute their run-time forms in place. Returns how many were retired.
    pub fn invalidate_all(&self) -> u64 {
        let Ok(_lock) = self.lock() else {
            return 0;
        };
        let entries: Vec<ShmEntry<'_>> = self.entries().collect();
        for e in &entries {
            self.retire(e);
        }
        entries.len() as u64
    }

    /// Marks `e` invalidated in its header and its slot, under the writer lock.
    fn retire(&self, e: &ShmEntry<'_>) {
        e.header().invalidated.store(1, Ordering::Release);
        self.slot(e.slot)
            .off
            .fetch_or(INVALIDATED_BIT, Ordering::Release);
        self.header().generation.fetch_add(1, Ordering::Release);
        self.counter(INVALIDATIONS).fetch_add(1, Ordering::Relaxed);
        self.counter(ENTRIES).fetch_sub(1, Ordering::Relaxed);
        self.counter(WASTED).fetch_add(e.size(), Ordering::Relaxed);
    }

    /// Every published entry, in table order.
    pub fn entries(&self) -> impl Iterator<Item = ShmEntry<'_>> + '_ {
        (0..self.header().slot_count as usize).filter_map(move |i| {
            let off = self.slot(i).off.load(Ordering::Acquire);
            (off != 0 && off & INVALIDATED_BIT == 0)
                .then(|| self.entry_at(off, i))
                .flatten()
        })
    }

    /// Whether the segment was made for `system`.
    pub fn is_for(&self, system: &SystemId) -> bool {
        let h = self.header();
        h.magic == MAGIC && h.system == system.digest()
    }

    pub fn stats(&self) -> ShmStats {
        let h = self.header();
        let c = |i: usize| self.counter(i).load(Ordering::Relaxed);
        ShmStats {
            hits: c(HITS),
            misses: c(MISSES),
            stale: c(STALE),
            stores: c(STORES),
            full: c(FULL),
            wasted: c(WASTED),
            writer_deaths: c(WRITER_DEATHS),
            entries: c(ENTRIES),
            invalidations: c(INVALIDATIONS),
            strings: c(STRINGS),
            strings_full: c(STRINGS_FULL),
            size: h.size,
            data_size: h.size - h.data_off,
            data_used: h.used.load(Ordering::Relaxed) - h.data_off,
            strings_size: h.strings_size,
            strings_used: h.strings_used.load(Ordering::Relaxed) - h.strings_off,
        }
    }
}
