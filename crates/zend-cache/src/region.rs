//! Private anonymous memory for the extension's run-time images.
//!
//! [`Region`] is a bump region in 2 MiB-aligned chunks that the kernel may back with
//! transparent huge pages (`MADV_HUGEPAGE`), rewound rather than freed. The extension
//! loads run-time images into it: a script's image lives exactly as long as
//! the request, and loading a few hundred scripts touches tens of megabytes of fresh
//! memory. Taken from PHP's allocator, that memory faults in 4 KiB at a time (each fault
//! a trap, a page clear and a cgroup charge: a quarter of the CLI's load time, measured);
//! here a chunk faults in once per 2 MiB where the kernel has huge pages, and a process
//! serving many requests (php-fpm) reuses its chunks, already faulted in, on the next
//! request, as PHP's allocator reuses its own.
//!
//! [`ZeroedMap`] is the scratch space images are made in: zero-filled, touched only where
//! written, and given back to the kernel (not memset) when reset.

use std::ptr::NonNull;

/// The chunk size and alignment (the x86-64 and arm64 huge page size).
pub const CHUNK: usize = 2 << 20;

/// See the module documentation.
pub struct Region {
    chunks: Vec<ZeroedMap>,
    /// The chunk being filled and the offset of its free space.
    current: usize,
    used: usize,
    /// Chunks kept mapped by [`Region::rewind`] (the rest are unmapped).
    keep: usize,
}

// SAFETY: a Region owns its mappings; nothing else refers to them unless the owner hands
// out pointers, whose use the owner answers for.
unsafe impl Send for Region {}

impl Region {
    /// An empty region that keeps at most `keep_bytes` mapped across [`Region::rewind`].
    pub const fn new(keep_bytes: usize) -> Region {
        Region {
            chunks: Vec::new(),
            current: 0,
            used: 0,
            keep: keep_bytes / CHUNK,
        }
    }

    /// `len` bytes aligned to `align` (a power of two, at most 4096), not zeroed beyond
    /// what fresh pages are; `None` when the kernel has no memory to give.
    pub fn alloc(&mut self, len: usize, align: usize) -> Option<NonNull<u8>> {
        debug_assert!(align.is_power_of_two() && align <= 4096);
        loop {
            if let Some(chunk) = self.chunks.get(self.current) {
                let start = self.used.checked_add(align - 1)? & !(align - 1);
                if start.checked_add(len)? <= chunk.len {
                    self.used = start + len;
                    // SAFETY: start + len is within the chunk.
                    return Some(unsafe { chunk.base.add(start) });
                }
                if self.current + 1 < self.chunks.len() && len <= self.chunks[self.current + 1].len
                {
                    self.current += 1;
                    self.used = 0;
                    continue;
                }
            }
            let chunk = map_chunk(len.checked_add(align)?)?;
            // The new chunk goes after the current one: a larger-than-usual chunk for a
            // large image does not strand the kept chunks after it.
            let at = if self.chunks.is_empty() {
                0
            } else {
                self.current + 1
            };
            self.chunks.insert(at, chunk);
            self.current = at;
            self.used = 0;
        }
    }

    /// Forgets every allocation (their memory is reused by the next ones) and unmaps the
    /// chunks beyond what the region keeps.
    pub fn rewind(&mut self) {
        let mut kept = 0;
        self.chunks.retain(|c| {
            kept += c.len / CHUNK;
            kept <= self.keep
        });
        self.current = 0;
        self.used = 0;
    }

    /// Bytes mapped.
    pub fn mapped(&self) -> usize {
        self.chunks.iter().map(|c| c.len).sum()
    }
}

/// Maps a chunk of at least `min` bytes (a multiple of [`CHUNK`], aligned to it) and asks
/// for huge pages; the advice is only a hint, so its failure is ignored.
fn map_chunk(min: usize) -> Option<ZeroedMap> {
    let len = min.max(1).checked_next_multiple_of(CHUNK)?;
    let over = len.checked_add(CHUNK)?;
    let raw = map_anonymous(over, 0)? as usize;
    let base = raw.next_multiple_of(CHUNK);
    // SAFETY: the parts of the fresh mapping outside the aligned range are unmapped right
    // away; the rest is owned by the returned value.
    unsafe {
        if base > raw {
            libc::munmap(raw as *mut libc::c_void, base - raw);
        }
        let tail = raw + over - (base + len);
        if tail > 0 {
            libc::munmap((base + len) as *mut libc::c_void, tail);
        }
        libc::madvise(base as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    Some(ZeroedMap {
        base: NonNull::new(base as *mut u8)?,
        len,
    })
}

/// A fresh private anonymous mapping of `len` bytes (with `flags` beyond
/// `MAP_PRIVATE | MAP_ANONYMOUS`), or `None` when the kernel refuses it.
fn map_anonymous(len: usize, flags: libc::c_int) -> Option<*mut libc::c_void> {
    // SAFETY: asks for new memory at an address of the kernel's choosing; nothing else
    // refers to it.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    (raw != libc::MAP_FAILED).then_some(raw)
}

/// A private anonymous mapping, unmapped when dropped: page-aligned, zero-filled, its
/// pages touched only when written (the [`Region`]'s chunks are ones too). [`ZeroedMap::clear`] hands written pages back to the kernel, which reads them
/// as zeros again: resetting costs no memset and leaves nothing resident.
pub struct ZeroedMap {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: as for Region: the owner answers for the pointers it hands out.
unsafe impl Send for ZeroedMap {}

impl ZeroedMap {
    /// `len` zero bytes (`None` when the kernel has no address space to give).
    pub fn new(len: usize) -> Option<ZeroedMap> {
        let len = len.max(1);
        let raw = map_anonymous(len, libc::MAP_NORESERVE)?;
        Some(ZeroedMap {
            base: NonNull::new(raw.cast())?,
            len,
        })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    /// Zeroes the first `len` bytes (rounded up to whole pages) by discarding their pages.
    pub fn clear(&mut self, len: usize) {
        let len = len.min(self.len);
        if len == 0 {
            return;
        }
        // SAFETY: discards pages of this mapping only; MADV_DONTNEED on private anonymous
        // memory makes later reads see zero-filled pages.
        let done = unsafe { libc::madvise(self.base.as_ptr().cast(), len, libc::MADV_DONTNEED) };
        if done != 0 {
            // SAFETY: [base, base + len) is inside the mapping.
            unsafe { std::ptr::write_bytes(self.base.as_ptr(), 0, len) };
        }
    }
}

impl Drop for ZeroedMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the range this value owns.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_disjoint_and_writable() {
        let mut r = Region::new(4 * CHUNK);
        let mut spans = Vec::new();
        for (i, len) in [100usize, 64 << 10, 1 << 20, 3 << 20, 7, CHUNK]
            .into_iter()
            .enumerate()
        {
            let p = r.alloc(len, 64).expect("memory");
            assert_eq!(p.as_ptr() as usize % 64, 0);
            // SAFETY: the region gave len bytes at p.
            unsafe { std::ptr::write_bytes(p.as_ptr(), i as u8, len) };
            spans.push((p.as_ptr() as usize, len, i as u8));
        }
        for &(a, la, va) in &spans {
            for &(b, lb, _) in &spans {
                assert!(a == b || a + la <= b || b + lb <= a, "overlap");
            }
            // SAFETY: still allocated.
            let bytes = unsafe { std::slice::from_raw_parts(a as *const u8, la) };
            assert!(bytes.iter().all(|&x| x == va));
        }
    }

    #[test]
    fn a_cleared_map_reads_as_zeros() {
        let mut m = ZeroedMap::new(1 << 20).unwrap();
        assert_eq!(m.as_ptr() as usize % 4096, 0);
        // SAFETY: inside the mapping.
        let bytes = unsafe { std::slice::from_raw_parts_mut(m.as_ptr(), m.len) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes[..10_000].fill(7);
        bytes[50_000] = 1;
        m.clear(10_001);
        // SAFETY: inside the mapping.
        let bytes = unsafe { std::slice::from_raw_parts(m.as_ptr(), m.len) };
        assert!(bytes[..10_001].iter().all(|&b| b == 0));
        // Only whole pages are discarded: what lies beyond the cleared pages stays.
        assert_eq!(bytes[50_000], 1);
    }

    #[test]
    fn rewind_reuses_kept_chunks_and_unmaps_the_rest() {
        let mut r = Region::new(2 * CHUNK);
        let first = r.alloc(1000, 64).unwrap();
        for _ in 0..5 {
            r.alloc(CHUNK / 2 + 1, 64).unwrap();
        }
        assert!(r.mapped() >= 4 * CHUNK);
        r.rewind();
        assert!(r.mapped() <= 2 * CHUNK);
        assert_eq!(r.alloc(1000, 64).unwrap(), first);
        // A chunk bigger than usual, then small allocations again.
        let big = r.alloc(5 * CHUNK, 4096).unwrap();
        assert_eq!(big.as_ptr() as usize % 4096, 0);
        r.alloc(10, 8).unwrap();
    }
}
