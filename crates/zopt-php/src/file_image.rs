//! Run-time images in the file cache: a script in PHP's run-time form with its pointers
//! made relative, loaded by a relocation — what OPcache's `zend_file_cache.c` does
//! (`zend_file_cache_serialize` makes every pointer of the persisted script relative,
//! `zend_file_cache_unserialize` adds the buffer's address back) — instead of a rebuild op
//! by op from the entry ([`crate::load::build`]).
//!
//! # Making an image
//!
//! The first time an entry is served from the file cache without shared memory, the
//! script built from it is persisted exactly as a shared-memory hit persists it
//! ([`image::persist`]: op_arrays with handlers and literals in one block, classes
//! immutable, strings interned, values immutable), but into a private buffer, twice: into
//! two buffers at different addresses, with `map_ptr` slots numbered from two different
//! bases. The two images are compared word by word (every pointer field is 8-aligned),
//! except the words the persist knows hold no pointer ([`image::Arena::holds_no_pointer`]:
//! strings, integer and float values, zval types, array keys' hashes (an integer key
//! itself), table headers, hash parts, op operands, live ranges, try/catch entries, and
//! the number fields of every structure: line numbers, counts, flags). Those are data
//! whatever they read as: a number or a string's last word below 2^48 may fall where ASLR
//! happened to map something in this process. The others:
//!
//! - a word that differs by the distance between the buffers is a pointer into the image
//!   (stored as its offset in the image);
//! - a word that differs by the distance between the slot bases is a `map_ptr` slot
//!   (stored numbered from 0);
//! - an equal word that points into the PHP binary is an opcode handler or one of its
//!   static structures (`zend_empty_array`, the uninitialized bucket): stored relative to
//!   `zend_empty_array`, as `zend_serialize_opcode_handler` stores handlers relative to
//!   the handler table;
//! - an equal word that points into any other mapping (the heap, a library) would not be
//!   valid in another process: the script gets no image (it stays on the rebuild path);
//!   so does any other difference. Every other equal word is zero, or a number field
//!   the persist failed to mark: data, but under `ZOPT_DEBUG_RUN_TIME_FORM` the image is
//!   refused with where the word lies, so that the tests find such a field.
//!
//! The relocation lists, the image and a header make the body of a run-time image file
//! (`zend_cache::entry::encode_image`: the entry header with its system id, path,
//! validation data and checksum), stored beside the entry and packed with it.
//!
//! # Body layout
//!
//! `zend_cache::image_body` describes it (a header with the version, flags, the build
//! fingerprint, the image's length and root and the relocation counts; the image; three
//! relocation lists) and holds the checks that need no PHP process, shared with
//! `zopt cache verify`.
//!
//! # Loading
//!
//! [`load`] checks the header (version, the PHP build, every length), every relocation's
//! offset and the value it relocates (inside the image, inside the PHP binary, a slot the
//! image numbers) with `zend_cache::image_body::check`, copies the image into request
//! memory (a region of 2 MiB chunks, huge pages where the kernel has them, rewound when the
//! request ends; 64-aligned as the persist aligned it), adds the base addresses, takes
//! `slot_count` fresh `map_ptr` slots (`zend_map_ptr_extend`, zeroed) and returns the root, which [`image::bind`] binds as a
//! shared-memory hit does. The framing's checksum (xxh3-64 of the whole file) already
//! refused truncated and damaged files; anything failing these checks is refused with its
//! reason and the entry is served instead.

use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_int, c_void};
use std::ptr;
use std::sync::OnceLock;

use xxhash_rust::xxh3::xxh3_128;
use zend_cfg::bitset;

use crate::engine::Engine;
use crate::image::{self, Arena};
use crate::load::Built;
use crate::php;
// `BODY_VERSION` is the version of the body layout and of what the image holds: bump it
// (in zend_cache::image_body) with any change of [`image::persist`]'s output.
use zend_cache::image_body::{self, Body, BODY_VERSION, HEADER, MAX_IMAGE, REFUSED};

/// The second persist numbers its `map_ptr` slots from here: the slot words of the two
/// images then differ by 8 * SLOT_SHIFT, which is not a multiple of the page size, so
/// never the distance between the two (page-aligned) buffers.
const SLOT_SHIFT: usize = 1_000_003;

type R<T> = Result<T, String>;

/// `GC_STRING | (GC_NOT_COLLECTABLE | IS_STR_INTERNED) << GC_FLAGS_SHIFT`: the image's strings live as long as
/// the request's copy of the image, and are never counted or freed, as the strings of
/// OPcache's file-cache-only scripts.
const IMAGE_STRING_TYPE_INFO: u32 = php::IS_STRING | (1 << 4) | php::IS_STR_INTERNED;

/// A private, zero-filled, page-aligned buffer to persist into.
struct Buffer {
    map: zend_cache::region::ZeroedMap,
    used: usize,
    strings: HashMap<Vec<u8>, usize>,
    string_at: HashSet<usize>,
    slot_base: usize,
    slots: usize,
    /// Each allocation's start and size, for the diagnostics of a refusal.
    allocs: Vec<(usize, usize)>,
    /// The words that hold no pointer, one bit each ([`Arena::holds_no_pointer`] and the
    /// strings [`Arena::intern`] made): [`make_in`] does not read them as one.
    no_pointer: Vec<u64>,
}

impl Buffer {
    fn new(slot_base: usize) -> R<Buffer> {
        // Page-aligned and lazily zero-filled: only the pages a persist writes are touched.
        let map =
            zend_cache::region::ZeroedMap::new(MAX_IMAGE).ok_or("no memory for an image buffer")?;
        Ok(Buffer {
            map,
            used: 0,
            strings: HashMap::new(),
            string_at: HashSet::new(),
            slot_base,
            slots: 0,
            allocs: Vec::new(),
            no_pointer: Vec::new(),
        })
    }

    /// Empties the buffer for the next persist: the pages used go back to the kernel,
    /// which reads them as zeros again (a worker that made images keeps none resident).
    fn reset(&mut self) {
        self.map.clear(self.used);
        self.used = 0;
        self.strings.clear();
        self.string_at.clear();
        self.slots = 0;
        self.allocs.clear();
        self.no_pointer.clear();
    }

    fn base(&self) -> *mut u8 {
        self.map.as_ptr()
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: [base, base + used) is mapped and initialised (zeroed, then written).
        unsafe { std::slice::from_raw_parts(self.base(), self.used) }
    }
}

impl Arena for Buffer {
    fn alloc(&mut self, size: usize, align: usize) -> Option<*mut u8> {
        let align = align.clamp(8, 64);
        let at = self.used.checked_add(align - 1)? & !(align - 1);
        let end = at.checked_add(size)?;
        if end > MAX_IMAGE {
            return None;
        }
        self.used = end;
        self.allocs.push((at, size));
        // SAFETY: inside the buffer.
        Some(unsafe { self.base().add(at) })
    }

    fn intern(&mut self, bytes: &[u8]) -> Option<*mut u8> {
        if let Some(&at) = self.strings.get(bytes) {
            // SAFETY: an offset this buffer handed out.
            return Some(unsafe { self.base().add(at) });
        }
        let header = std::mem::offset_of!(php::zend_string, val);
        let p = self.alloc(header + bytes.len() + 1, 8)?;
        // SAFETY: `p` has room for the header, the bytes and the terminating NUL.
        unsafe {
            let s = p.cast::<php::zend_string>();
            (*s).gc.refcount = 1;
            (*s).gc.u.type_info = IMAGE_STRING_TYPE_INFO;
            (*s).h = zend_cache::shm::zend_string_hash(bytes);
            (*s).len = bytes.len();
            ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(header), bytes.len());
        }
        let at = p as usize - self.base() as usize;
        self.holds_no_pointer(p, header + bytes.len() + 1);
        self.strings.insert(bytes.to_vec(), at);
        self.string_at.insert(p as usize);
        Some(p)
    }

    fn is_interned_here(&self, p: *const u8) -> bool {
        self.string_at.contains(&(p as usize))
    }

    fn holds_no_pointer(&mut self, p: *const u8, len: usize) {
        if len == 0 || !self.holds(p) {
            return;
        }
        // Every word the bytes touch: a range ends in padding, never beside a pointer.
        let at = p as usize - self.base() as usize;
        let (first, end) = (at / 8, (at + len).div_ceil(8));
        if self.no_pointer.len() < bitset::words_for(end) {
            self.no_pointer.resize(bitset::words_for(end), 0);
        }
        for w in first..end {
            bitset::insert(&mut self.no_pointer, w);
        }
    }

    fn holds(&self, p: *const u8) -> bool {
        (p as usize) >= self.base() as usize && (p as usize) < self.base() as usize + self.used
    }

    fn map_ptr_slot(&mut self) -> R<*mut c_void> {
        let n = self.slot_base + self.slots;
        self.slots += 1;
        Ok((n * std::mem::size_of::<*mut c_void>() + 1) as *mut c_void)
    }
    /// An image's slots are the loading process's own (`load` extends for them).
    fn map_ptr_end(&self) -> u64 {
        0
    }
}

/// What this process knows of the PHP binary: the build an image must come from (xxh3-128
/// of PHP's GNU build id, PHP_VERSION and this extension's build id) and the addresses the
/// binary is loaded at.
struct PhpBinary {
    build: [u8; 16],
    start: usize,
    end: usize,
}

#[repr(C)]
struct DlPhdrInfo {
    addr: usize,
    name: *const c_char,
    phdr: *const Elf64Phdr,
    phnum: u16,
}

#[repr(C)]
struct Elf64Phdr {
    p_type: u32,
    p_flags: u32,
    p_offset: u64,
    p_vaddr: u64,
    p_paddr: u64,
    p_filesz: u64,
    p_memsz: u64,
    p_align: u64,
}

extern "C" {
    fn dl_iterate_phdr(
        callback: unsafe extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> c_int,
        data: *mut c_void,
    ) -> c_int;
}

const PT_LOAD: u32 = 1;
const PT_NOTE: u32 = 4;
const NT_GNU_BUILD_ID: u32 = 3;

/// A loaded object: its address range and GNU build id.
#[derive(Default)]
struct Object {
    start: usize,
    end: usize,
    build_id: Vec<u8>,
}

/// `dl_iterate_phdr` callback: every loaded object's range and GNU build id (the first is
/// the executable).
unsafe extern "C" fn each_object(info: *mut DlPhdrInfo, _size: usize, data: *mut c_void) -> c_int {
    let objects = &mut *data.cast::<Vec<Object>>();
    let mut out = Object::default();
    let info = &*info;
    let (mut start, mut end) = (usize::MAX, 0);
    for i in 0..info.phnum as usize {
        let ph = &*info.phdr.add(i);
        let at = info.addr + ph.p_vaddr as usize;
        if ph.p_type == PT_LOAD {
            start = start.min(at);
            end = end.max(at + ph.p_memsz as usize);
        } else if ph.p_type == PT_NOTE {
            let mut p = at;
            let stop = at + ph.p_memsz as usize;
            while p + 12 <= stop {
                let namesz = *(p as *const u32) as usize;
                let descsz = *((p + 4) as *const u32) as usize;
                let kind = *((p + 8) as *const u32);
                let name = p + 12;
                let desc = name + namesz.div_ceil(4) * 4;
                let next = desc + descsz.div_ceil(4) * 4;
                if next > stop {
                    break;
                }
                if kind == NT_GNU_BUILD_ID
                    && std::slice::from_raw_parts(name as *const u8, namesz) == b"GNU\0"
                {
                    out.build_id = std::slice::from_raw_parts(desc as *const u8, descsz).to_vec();
                }
                p = next;
            }
        }
    }
    out.start = start;
    out.end = end;
    objects.push(out);
    0
}

fn php_binary() -> &'static PhpBinary {
    static BINARY: OnceLock<PhpBinary> = OnceLock::new();
    BINARY.get_or_init(|| {
        let mut objects: Vec<Object> = Vec::new();
        // SAFETY: the callback only reads the program headers the loader passes.
        unsafe { dl_iterate_phdr(each_object, ptr::addr_of_mut!(objects).cast()) };
        let php = objects
            .first()
            .map_or((0, 0, &[][..]), |o| (o.start, o.end, o.build_id.as_slice()));
        // This extension's own build: an image holds its structures (the root, the
        // persist's layout), which another build of zopt may lay out otherwise.
        let here = php_binary as *const () as usize;
        let zopt = objects
            .iter()
            .find(|o| here >= o.start && here < o.end)
            .map_or(&[][..], |o| o.build_id.as_slice());
        let mut id = php.2.to_vec();
        id.extend_from_slice(b"\0");
        id.extend_from_slice(php::PHP_VERSION);
        // A binary without a build id is only known by its version and layout: the
        // anchor's place in it.
        id.extend_from_slice(&(anchor().wrapping_sub(php.0) as u64).to_le_bytes());
        id.extend_from_slice(zopt);
        id.extend_from_slice(env!("CARGO_PKG_VERSION").as_bytes());
        PhpBinary {
            build: xxh3_128(&id).to_le_bytes(),
            start: php.0,
            end: php.1,
        }
    })
}

/// What pointers into the PHP binary are stored relative to.
fn anchor() -> usize {
    ptr::addr_of!(php::zend_empty_array) as usize
}

/// The address ranges mapped in this process (`/proc/self/maps`).
fn mappings() -> R<Vec<(usize, usize, String)>> {
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for line in maps.lines() {
        let range = line.split(' ').next().unwrap_or_default();
        let (a, b) = range.split_once('-').ok_or("unreadable /proc/self/maps")?;
        let a = usize::from_str_radix(a, 16).map_err(|e| e.to_string())?;
        let b = usize::from_str_radix(b, 16).map_err(|e| e.to_string())?;
        let name = line.split_whitespace().nth(5).unwrap_or_default();
        out.push((a, b, name.to_string()));
    }
    Ok(out)
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn r32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn r64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Whether `body` may be an image to load: a version this zopt reads, of this PHP build,
/// not a refusal (what [`load`] checks first, without looking at the image).
pub fn is_loadable(body: &[u8]) -> bool {
    body.len() >= HEADER
        && r32(body, 0) == BODY_VERSION
        && r32(body, 4) == 0
        && body[8..24] == php_binary().build
}

/// The body of a run-time image file recording that the script has no image.
pub fn refused_body() -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER);
    put32(&mut out, BODY_VERSION);
    put32(&mut out, REFUSED);
    out.extend_from_slice(&php_binary().build);
    out.resize(HEADER, 0);
    out
}

/// The body of the run-time image file of `built` (see the module documentation), or why
/// it has none.
///
/// # Safety
/// As [`image::persist`]: `built` comes from [`crate::load::build`] in this request and was
/// not bound yet.
pub unsafe fn make(built: &Built, halt_offset: Option<u64>) -> R<Vec<u8>> {
    thread_local! {
        /// The two buffers, kept for the next script (each is zeroed again after use).
        static BUFFERS: std::cell::RefCell<Option<(Buffer, Buffer)>> =
            const { std::cell::RefCell::new(None) };
    }
    let buffers = BUFFERS.with(|b| b.borrow_mut().take());
    let (mut a, mut b) = match buffers {
        Some(pair) => pair,
        None => (Buffer::new(0)?, Buffer::new(SLOT_SHIFT)?),
    };
    let made = make_in(built, halt_offset, &mut a, &mut b);
    a.reset();
    b.reset();
    BUFFERS.with(|cell| *cell.borrow_mut() = Some((a, b)));
    made
}

/// Where offset `at` of the image lies, for a refusal's message.
fn allocation(a: &Buffer, at: usize) -> String {
    a.allocs
        .iter()
        .rev()
        .find(|&&(start, size)| at >= start && at < start + size)
        .map(|&(start, size)| format!("at {} of an allocation of {size} bytes", at - start))
        .unwrap_or_default()
}

unsafe fn make_in(
    built: &Built,
    halt_offset: Option<u64>,
    a: &mut Buffer,
    b: &mut Buffer,
) -> R<Vec<u8>> {
    let root_a = image::persist(built, halt_offset, None, a)?;
    let root_b = image::persist(built, halt_offset, None, b)?;
    let len = a.used.next_multiple_of(8);
    if a.used != b.used
        || a.slots != b.slots
        || root_a as usize - a.base() as usize != root_b as usize - b.base() as usize
    {
        return Err("two persists of the script differ in shape".into());
    }
    if len > u32::MAX as usize {
        return Err("an image over 4 GiB".into());
    }
    a.used = len;
    b.used = len;
    let delta = (b.base() as usize).wrapping_sub(a.base() as usize);
    let slot_delta = SLOT_SHIFT * std::mem::size_of::<*mut c_void>();
    let php = php_binary();
    let maps = mappings()?;
    let strict = std::env::var_os("ZOPT_DEBUG_RUN_TIME_FORM").is_some();
    let mut image = a.bytes().to_vec();
    let (ba, bb) = (a.bytes(), b.bytes());
    let (mut internal, mut php_relocs, mut slots) = (Vec::new(), Vec::new(), Vec::new());
    for at in (0..len).step_by(8) {
        // Numbers and text are passed over: the same in both persists, a number below
        // 2^48 (or the last word of a string: its last characters, then the NUL and zero
        // padding) may fall where ASLR happened to map something. Taken for a pointer into
        // the PHP binary, it would be relocated (changed when another process loads the
        // image); into another mapping, it refused the image.
        if bitset::contains(&a.no_pointer, at / 8) {
            continue;
        }
        let wa = r64(ba, at) as usize;
        let wb = r64(bb, at) as usize;
        let stored = if wa == wb {
            if wa >= php.start && wa < php.end {
                php_relocs.push(at as u32);
                wa.wrapping_sub(anchor())
            } else if let Some((s, _, name)) = maps.iter().find(|&&(s, e, _)| wa >= s && wa < e) {
                return Err(format!(
                    "a pointer outside the image and the PHP binary at offset {at} {} \
                     ({wa:#x}, {:#x} into {name:?})",
                    allocation(a, at),
                    wa - s
                ));
            } else if wa != 0 && strict {
                // Every number field is marked: a word no mark covers that is not a
                // pointer is a field the persist forgot, which ASLR may one day map.
                return Err(format!(
                    "a word at offset {at} {} is neither a pointer nor marked as data \
                     ({wa:#x})",
                    allocation(a, at)
                ));
            } else {
                continue;
            }
        } else if wb.wrapping_sub(wa) == delta
            && wa >= a.base() as usize
            && wa <= a.base() as usize + len
        {
            internal.push(at as u32);
            wa - a.base() as usize
        } else if wb.wrapping_sub(wa) == slot_delta {
            slots.push(at as u32);
            wa
        } else {
            return Err(format!("two persists of the script differ at offset {at}"));
        };
        image[at..at + 8].copy_from_slice(&(stored as u64).to_le_bytes());
    }
    let mut out =
        Vec::with_capacity(HEADER + len + 4 * (internal.len() + php_relocs.len() + slots.len()));
    put32(&mut out, BODY_VERSION);
    put32(&mut out, 0);
    out.extend_from_slice(&php.build);
    out.extend_from_slice(&(len as u64).to_le_bytes());
    out.extend_from_slice(&((root_a as usize - a.base() as usize) as u64).to_le_bytes());
    put32(&mut out, internal.len() as u32);
    put32(&mut out, php_relocs.len() as u32);
    put32(&mut out, slots.len() as u32);
    put32(&mut out, a.slots as u32);
    out.extend_from_slice(&image);
    for list in [&internal, &php_relocs, &slots] {
        for &at in list.iter() {
            put32(&mut out, at);
        }
    }
    Ok(out)
}

/// Why an image was not loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The file records that the script has no image (not an error).
    Refused,
    /// The image cannot be used, for this reason.
    Bad(String),
}

impl From<String> for LoadError {
    fn from(s: String) -> Self {
        LoadError::Bad(s)
    }
}

thread_local! {
    /// The memory images are loaded into during a request (see [`end_of_request`]). It keeps
    /// up to 64 MiB mapped between requests, so that a php-fpm worker's next request finds
    /// its pages already faulted in.
    static REGION: std::cell::RefCell<zend_cache::region::Region> =
        const { std::cell::RefCell::new(zend_cache::region::Region::new(64 << 20)) };
}

/// Called once the request's function and class tables are destroyed (the module's
/// post-deactivate hook, after `shutdown_executor`): nothing refers to the images loaded
/// during the request any more, so their memory is reused by the next one.
#[link_section = ".text.hot.zopt"]
pub fn end_of_request() {
    REGION.with(|r| r.borrow_mut().rewind());
}

/// Loads the run-time image `body` into request memory (see the module documentation);
/// returns its root for [`image::bind`].
///
/// # Safety
/// Runs on PHP's thread during a request, from the compile hook.
pub unsafe fn load(e: Engine, body: &[u8]) -> Result<*const u8, LoadError> {
    let php = php_binary();
    let (php_lo, php_hi) = (
        php.start.wrapping_sub(anchor()),
        php.end.wrapping_sub(anchor()),
    );
    let checked = image_body::check(body, image::ROOT_SIZE, |v| {
        v.wrapping_sub(php_lo) < php_hi.wrapping_sub(php_lo)
    })?;
    if checked.build() != &php.build {
        return Err(LoadError::Bad(
            "made by another PHP build (or another build of zopt)".into(),
        ));
    }
    let layout = match checked {
        Body::Refused { .. } => return Err(LoadError::Refused),
        Body::Image(layout) => layout,
    };
    let (len, slot_count) = (layout.len, layout.slot_count);
    let src = layout.image(body);

    // Request memory for the image, 64-aligned as the persist's allocations assume: the
    // image region's (huge pages where the kernel has them), or PHP's arena without it.
    let dst = match REGION.with(|r| r.borrow_mut().alloc(len, 64)) {
        Some(p) => p.as_ptr(),
        None => {
            let raw = e.arena_alloc(len + 64);
            raw.add(raw.align_offset(64))
        }
    };
    ptr::copy_nonoverlapping(src.as_ptr(), dst, len);
    let first_slot = if slot_count > 0 {
        let cg = ptr::addr_of_mut!(php::compiler_globals);
        let first = (*cg).map_ptr_last;
        php::zend_map_ptr_extend(first + slot_count as usize);
        first
    } else {
        0
    };
    let adds = [
        dst as usize,
        anchor(),
        first_slot * std::mem::size_of::<*mut c_void>(),
    ];
    for (k, add) in adds.into_iter().enumerate() {
        for at in layout.relocations(body, k) {
            let word = dst.add(at).cast::<usize>();
            *word = (*word).wrapping_add(add);
        }
    }
    Ok(dst.add(layout.root).cast_const())
}
