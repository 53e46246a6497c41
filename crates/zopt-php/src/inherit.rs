//! The inheritance cache of the shared-memory level: mirrors OPcache's
//! `zend_accel_inheritance_cache_get` / `zend_accel_inheritance_cache_add`
//! (ZendAccelerator.c), which PHP 8.2 calls through its `zend_inheritance_cache_get` /
//! `zend_inheritance_cache_add` hooks.
//!
//! A class the segment keeps unlinked (it has a parent, interfaces or traits, see
//! [`crate::image`]) is immutable. When a script declares it, `zend_do_link_class` (or
//! `zend_try_early_bind`) first asks [`get`] for a class linked earlier — by any worker —
//! from this very class with the same parent, traits and interfaces (pointers: all of them
//! immutable in the segment or internal, else PHP does not ask) and the same classes behind
//! the names its variance checks looked up. A hit is that linked class, immutable in the
//! segment, bound without copying or linking anything. A miss links a request-private copy
//! (`zend_lazy_class_load`) and hands the result to [`add`], which persists it
//! ([`image::persist_linked`], under the segment's writer lock) and publishes it at the
//! head of the unlinked class's `inheritance_cache` list.
//!
//! Guarantees: an entry is published (release store of the list head) only once complete,
//! and never changes afterwards; readers take no lock. A class whose linking recorded
//! warnings or deprecations is not cached (OPcache replays them from the entry; here PHP
//! emits them on every link, as without a cache). Nothing is cached while another writer
//! holds the lock, or when the segment or its `map_ptr` slots are used up: PHP then keeps
//! the class it linked, for this request. Each entry is preceded by the count of the
//! segment's `map_ptr` slots handed out when it was complete: an entry whose slots this
//! process has not extended to yet ([`image::map_ptr_slots_usable`]) is not used before the
//! next request.

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use zend_cache::ShmCache;

use crate::image::{self, Arena};
use crate::php::{self, zend_class_entry, zend_inheritance_cache_entry, zend_string, HashTable};
use std::mem::size_of;

static SHM: OnceLock<&'static ShmCache> = OnceLock::new();
/// The segment's bounds, for [`get`]'s check that a class lives in it (a plain load each:
/// `get` runs for every class declared with a parent, interface or trait).
static SEGMENT: crate::FfiCell<(usize, usize)> = crate::FfiCell::new((0, 0));

/// Installs the hooks for the segment `shm`, unless another cache (OPcache) installed its
/// own.
///
/// # Safety
/// Called once from MINIT, on PHP's thread.
pub unsafe fn install(shm: &'static ShmCache) {
    let taken = ptr::addr_of!(php::zend_inheritance_cache_get)
        .read()
        .is_some()
        || ptr::addr_of!(php::zend_inheritance_cache_add)
            .read()
            .is_some();
    if taken {
        return;
    }
    let _ = SHM.set(shm);
    let (base, len) = shm.bounds();
    *SEGMENT.get() = (base as usize, base as usize + len);
    php::zend_inheritance_cache_get = Some(get);
    php::zend_inheritance_cache_add = Some(add);
}

/// The head of `ce`'s list, read as the other processes publish it.
unsafe fn head(ce: *mut zend_class_entry) -> &'static AtomicPtr<zend_inheritance_cache_entry> {
    // SAFETY: a pointer-sized, aligned field of a class in the shared segment, written only
    // with release stores under the writer lock.
    &*ptr::addr_of_mut!((*ce).inheritance_cache).cast::<AtomicPtr<zend_inheritance_cache_entry>>()
}

/// How many traits and interfaces `traits_and_interfaces` holds for `ce`.
unsafe fn arity(ce: *const zend_class_entry) -> usize {
    ((*ce).num_traits + (*ce).num_interfaces) as usize
}

/// The entry's traits and interfaces (a flexible array member).
unsafe fn entry_classes(e: *mut zend_inheritance_cache_entry) -> *mut *mut zend_class_entry {
    ptr::addr_of_mut!((*e).traits_and_interfaces).cast()
}

/// The word before an entry: the segment's `map_ptr` slots handed out when it was written.
unsafe fn map_ptr_end(e: *mut zend_inheritance_cache_entry) -> u64 {
    *e.cast::<u64>().sub(1)
}

/// Whether `e` was linked with `parent` and `traits_and_interfaces`.
unsafe fn same_inputs(
    e: *mut zend_inheritance_cache_entry,
    n: usize,
    parent: *mut zend_class_entry,
    traits_and_interfaces: *mut *mut zend_class_entry,
) -> bool {
    (*e).parent == parent
        && (0..n).all(|i| *entry_classes(e).add(i) == *traits_and_interfaces.add(i))
}

/// Whether every class the entry's linking depended on is still the one behind its name.
unsafe fn dependencies_hold(e: *mut zend_inheritance_cache_entry) -> bool {
    (0..(*e).dependencies_count as usize).all(|i| {
        // The name is stored lowercased (see `add`): it is its own lookup key, so nothing
        // is lowercased or hashed here.
        let d = &*(*e).dependencies.add(i);
        php::zend_lookup_class_ex(d.name, d.name, php::ZEND_FETCH_CLASS_NO_AUTOLOAD) == d.ce
    })
}

/// `zend_inheritance_cache_get`; shim.c's delayed early binding calls it directly under
/// this name when it is the installed hook.
#[link_section = ".text.hot.zopt"]
#[export_name = "zopt_inheritance_cache_get"]
unsafe extern "C" fn get(
    ce: *mut zend_class_entry,
    parent: *mut zend_class_entry,
    traits_and_interfaces: *mut *mut zend_class_entry,
) -> *mut zend_class_entry {
    // Without a segment the bounds are empty.
    let (start, end) = *SEGMENT.get();
    if (ce as usize) < start || (ce as usize) >= end {
        return ptr::null_mut();
    }
    let n = arity(ce);
    let mut e = head(ce).load(Ordering::Acquire);
    while !e.is_null() {
        if same_inputs(e, n, parent, traits_and_interfaces)
            && image::map_ptr_slots_usable(map_ptr_end(e))
            && dependencies_hold(e)
        {
            return (*e).ce;
        }
        e = (*e).next;
    }
    ptr::null_mut()
}

/// `zend_inheritance_cache_add`: persists `ce`, just linked from the immutable `proto`.
unsafe extern "C" fn add(
    ce: *mut zend_class_entry,
    proto: *mut zend_class_entry,
    parent: *mut zend_class_entry,
    traits_and_interfaces: *mut *mut zend_class_entry,
    dependencies: *mut HashTable,
) -> *mut zend_class_entry {
    let result = std::panic::catch_unwind(|| {
        add_guarded(ce, proto, parent, traits_and_interfaces, dependencies)
    });
    result.unwrap_or(ptr::null_mut())
}

unsafe fn add_guarded(
    ce: *mut zend_class_entry,
    proto: *mut zend_class_entry,
    parent: *mut zend_class_entry,
    traits_and_interfaces: *mut *mut zend_class_entry,
    dependencies: *mut HashTable,
) -> *mut zend_class_entry {
    let Some(shm) = SHM.get() else {
        return ptr::null_mut();
    };
    let eg = ptr::addr_of!(php::executor_globals);
    if !shm.contains(proto.cast()) || (*eg).num_errors > 0 {
        return ptr::null_mut();
    }
    let n = arity(proto);
    let deps: Vec<(*mut zend_string, *mut zend_class_entry)> = if dependencies.is_null() {
        Vec::new()
    } else {
        crate::load::entries(&*dependencies, 0)
            .into_iter()
            .map(|(name, zv)| (name, (*zv).value.ptr.cast()))
            .collect()
    };
    let written = shm.write_detached(|w| {
        // Another worker may have linked the same class meanwhile.
        let mut e = head(proto).load(Ordering::Acquire);
        while !e.is_null() {
            if same_inputs(e, n, parent, traits_and_interfaces) && dependencies_hold(e) {
                return Some(e);
            }
            e = (*e).next;
        }
        // The persist touches pages of the segment and of the library that hits do not.
        crate::cache::note_stored();
        let linked = match image::persist_linked(ce, w) {
            Ok(linked) => linked,
            Err(why) => {
                if std::env::var_os("ZOPT_DEBUG_RUN_TIME_FORM").is_some() {
                    let name = php::Reader::new().str((*ce).name).unwrap_or_default();
                    eprintln!(
                        "zopt: {} is not kept linked: {why}",
                        String::from_utf8_lossy(name)
                    );
                }
                return None;
            }
        };
        let size = size_of::<zend_inheritance_cache_entry>()
            + size_of::<*mut zend_class_entry>() * n.saturating_sub(1);
        let at = w.alloc(size_of::<u64>() + size, 8)?;
        at.cast::<u64>().write(w.map_ptr_end());
        let entry = at
            .add(size_of::<u64>())
            .cast::<zend_inheritance_cache_entry>();
        (*entry).ce = linked;
        (*entry).parent = parent;
        for i in 0..n {
            *entry_classes(entry).add(i) = *traits_and_interfaces.add(i);
        }
        if !deps.is_empty() {
            let size = size_of::<php::zend_class_dependency>() * deps.len();
            let list = w.alloc(size, 8)?.cast::<php::zend_class_dependency>();
            for (i, &(name, dep)) in deps.iter().enumerate() {
                let lc = php::Reader::new().str(name)?.to_ascii_lowercase();
                (*list.add(i)).name = w.intern(&lc)?.cast();
                (*list.add(i)).ce = dep;
            }
            (*entry).dependencies = list;
            (*entry).dependencies_count = deps.len() as u32;
        }
        (*entry).next = head(proto).load(Ordering::Relaxed);
        head(proto).store(entry, Ordering::Release);
        crate::cache::COUNTERS.linked_stores.bump();
        Some(entry)
    });
    // The class linked just now (or by another worker meanwhile) is used in this request
    // only when its slots are extended here (else PHP keeps its own copy, this once).
    match written {
        Ok(Some(e)) if image::map_ptr_slots_usable(map_ptr_end(e)) => (*e).ce,
        _ => ptr::null_mut(),
    }
}
