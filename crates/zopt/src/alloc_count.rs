//! The `zopt` binary's global allocator: mimalloc, counting allocations for the benches
//! (`zopt bench analyses` reports allocations per op).
//!
//! mimalloc because the optimizer's results (the CFG, SSA and inference vectors of every
//! op_array) are many small, short-lived allocations: glibc's malloc and free took about 9%
//! of the default pipeline's instructions on the Debian corpus, and with mimalloc the
//! pipeline runs 6.6% fewer instructions in all (callgrind, 904.9M -> 845.2M). The
//! extension keeps the allocator of the PHP process it runs in.
//!
//! Each thread counts its own allocations in a plain thread-local cell: an atomic add is a
//! locked instruction, and at one per allocation it slowed the very code the benches time.
//! In processes that do not install [`Counting`] (tests, library users) [`allocations`]
//! stays 0 and the benches say the count is unavailable.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

use mimalloc::MiMalloc;

thread_local! {
    // No destructor and a const initializer: reading it never allocates, so the allocator
    // may use it.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    ALLOCATIONS.with(|n| n.set(n.get() + 1));
}

/// mimalloc, counting allocations.
pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        MiMalloc.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        MiMalloc.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
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
