//! The global allocator of the `zopt` binary and of the optimizer's benches and profiling
//! loop: mimalloc, counting allocations (and bytes asked for) per thread.
//!
//! mimalloc because the optimizer's results (the CFG, SSA and inference vectors of every
//! op_array) are many small, short-lived allocations: glibc's malloc and free took about 9%
//! of the default pipeline's instructions on the Debian corpus, and with mimalloc the
//! pipeline runs 6.6% fewer instructions in all (callgrind, 904.9M -> 845.2M). Layouts
//! aligned to a word at most, which is nearly all of them, go to mimalloc's plain entry
//! points: `mimalloc::MiMalloc` always takes the aligned ones, whose checks cost another 1%
//! of the pipeline's instructions (791.5M -> 783.9M). The PHP extension keeps the allocator
//! of the PHP process it runs in.
//!
//! Each thread counts in plain thread-local cells: an atomic add is a locked instruction,
//! and at one per allocation it slowed the very code the benches time. In processes that do
//! not install [`Counting`] (tests, library users) [`allocations`] stays 0, and the benches
//! say the count is unavailable.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

use mimalloc::MiMalloc;

thread_local! {
    // No destructor and a const initializer: reading them never allocates, so the
    // allocator may use them.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

fn count(bytes: usize) {
    ALLOCATIONS.with(|n| n.set(n.get() + 1));
    BYTES.with(|n| n.set(n.get() + bytes as u64));
}

/// Whether mimalloc's plain entry points give `layout` its alignment: every mimalloc block
/// is aligned to a word.
fn plain(layout: Layout) -> bool {
    layout.align() <= std::mem::size_of::<usize>()
}

/// mimalloc, counting allocations.
pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        if plain(layout) {
            return libmimalloc_sys::mi_malloc(layout.size()).cast();
        }
        MiMalloc.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        if plain(layout) {
            return libmimalloc_sys::mi_zalloc(layout.size()).cast();
        }
        MiMalloc.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        if plain(layout) {
            return libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast();
        }
        MiMalloc.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        MiMalloc.dealloc(ptr, layout)
    }
}

/// Allocations (and reallocations) so far on this thread, when [`Counting`] is installed.
pub fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Bytes asked for by those allocations (a reallocation counts its new size).
pub fn bytes() -> u64 {
    BYTES.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_gets_its_alignment_and_keeps_its_bytes() {
        for align in [1, 2, 4, 8, 16, 32, 4096] {
            for size in [1, 7, 8, 24, 40, 100, 1000, 70_000] {
                let layout = Layout::from_size_align(size, align).expect("a valid layout");
                unsafe {
                    let p = Counting.alloc(layout);
                    assert!(!p.is_null() && p as usize % align == 0, "{size}/{align}");
                    p.write_bytes(0xA5, size);
                    let q = Counting.realloc(p, layout, size * 3);
                    assert!(!q.is_null() && q as usize % align == 0, "{size}/{align}");
                    assert!((0..size).all(|i| *q.add(i) == 0xA5), "{size}/{align}");
                    Counting.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                    let z = Counting.alloc_zeroed(layout);
                    assert!(!z.is_null() && z as usize % align == 0, "{size}/{align}");
                    assert!((0..size).all(|i| *z.add(i) == 0), "{size}/{align}");
                    Counting.dealloc(z, layout);
                }
            }
        }
    }
}
