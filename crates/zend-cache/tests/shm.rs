//! The shared-memory level ([`zend_cache::ShmCache`]) in one process: store, serve in
//! place, stale and replaced entries, invalidation, interned strings, full memory.

mod support;

use zend_cache::shm::{zend_string_hash, INTERNED_TYPE_INFO, MIN_SIZE};
use zend_cache::{
    persist, CacheKey, ShmCache, ShmConfig, ShmLookup, ShmStoreError, SystemId, Validation,
};

fn key(name: &str, mtime: i64) -> CacheKey {
    CacheKey::new(
        format!("/srv/{name}.php").into_bytes(),
        Validation::MtimeSize {
            mtime_sec: mtime,
            mtime_nsec: 0,
            size: 10,
        },
    )
}

fn shm(size: usize) -> ShmCache {
    ShmCache::create(ShmConfig::with_size(size), &SystemId::new("8.2.0", 0)).unwrap()
}

#[test]
fn stores_and_serves_in_place() {
    let c = shm(4 << 20);
    let script = support::rich_script("/srv/a.php", 1);
    let body = persist(&script).unwrap();
    assert!(matches!(c.lookup_key(&key("a", 1)), ShmLookup::Miss));
    c.store(&key("a", 1), &body).unwrap();
    let ShmLookup::Hit(e) = c.lookup_key(&key("a", 1)) else {
        panic!("miss after store")
    };
    assert_eq!(e.body(), &body[..]);
    assert_eq!(e.path(), b"/srv/a.php");
    assert_eq!(e.view().to_script(), script);
    e.record_hit();
    assert_eq!(e.hits(), 1);
    assert!(matches!(c.lookup_key(&key("a", 2)), ShmLookup::Stale));
    // Replaced: the new version serves, the old one's bytes are wasted.
    let script2 = support::rich_script("/srv/a.php", 2);
    c.store(&key("a", 2), &persist(&script2).unwrap()).unwrap();
    let ShmLookup::Hit(e2) = c.lookup_key(&key("a", 2)) else {
        panic!("replaced entry not served")
    };
    assert_eq!(e2.view().to_script(), script2);
    // PHP's hash of the path, for the embedder's `zend_string` of it, from the slot the
    // path keeps through replacements.
    assert_eq!(e.path_php_hash(), zend_string_hash(b"/srv/a.php"));
    assert_eq!(e2.path_php_hash(), zend_string_hash(b"/srv/a.php"));
    // A reader still holding the old entry reads it unchanged.
    assert_eq!(e.view().to_script(), script);
    let s = c.stats();
    assert_eq!(
        (s.entries, s.stores, s.stale, s.misses, s.hits),
        (1, 2, 1, 1, 1)
    );
    assert_eq!(s.wasted, e.size());
    assert!(c.invalidate(b"/srv/a.php"));
    assert!(matches!(c.lookup_key(&key("a", 2)), ShmLookup::Miss));
    assert_eq!(c.entries().count(), 0);
    let s = c.stats();
    assert_eq!((s.entries, s.invalidations), (0, 1));
    assert_eq!(s.wasted, e.size() + e2.size());
    // Stored again after the invalidation: one script, nothing wasted twice.
    c.store(&key("a", 3), &persist(&script).unwrap()).unwrap();
    let s = c.stats();
    assert_eq!(s.entries, 1);
    assert_eq!(s.wasted, e.size() + e2.size());
}

#[test]
fn a_reset_retires_every_entry_and_they_are_stored_again() {
    let c = shm(4 << 20);
    let names = ["a", "b", "c"];
    for (i, n) in names.iter().enumerate() {
        let script = support::rich_script(&format!("/srv/{n}.php"), i as u32);
        c.store(&key(n, 1), &persist(&script).unwrap()).unwrap();
    }
    let held = match c.lookup_key(&key("b", 1)) {
        ShmLookup::Hit(e) => e,
        _ => panic!("miss after store"),
    };
    let sizes: u64 = c.entries().map(|e| e.size()).sum();
    assert_eq!(c.invalidate_all(), 3);
    assert_eq!(c.entries().count(), 0);
    for n in names {
        assert!(matches!(c.lookup_key(&key(n, 1)), ShmLookup::Miss));
    }
    // A reader holding an entry keeps reading it unchanged.
    assert_eq!(held.path(), b"/srv/b.php");
    let s = c.stats();
    assert_eq!((s.entries, s.invalidations, s.wasted), (0, 3, sizes));
    assert_eq!(c.invalidate_all(), 0);
    let script = support::rich_script("/srv/a.php", 0);
    c.store(&key("a", 1), &persist(&script).unwrap()).unwrap();
    assert!(matches!(c.lookup_key(&key("a", 1)), ShmLookup::Hit(_)));
}

#[test]
fn interned_strings_are_deduplicated_zend_strings() {
    let c = shm(4 << 20);
    let body = persist(&support::rich_script("/srv/b.php", 1)).unwrap();
    let e = c.store(&key("b", 1), &body).unwrap();
    let e2 = c.store(&key("c", 1), &body).unwrap();
    let strings: Vec<_> = e.interned_strings().collect();
    assert_eq!(strings.len(), e.view().string_count() as usize);
    assert!(strings.len() > 5);
    assert_eq!(strings, e2.interned_strings().collect::<Vec<_>>());
    assert_eq!(c.stats().strings as usize, strings.len());
    for (id, p) in strings.into_iter().enumerate() {
        assert!(!p.is_null());
        // SAFETY: a zend_string record of the segment's strings area.
        let (rc, ti, h, len, val) = unsafe {
            (
                (p as *const u32).read(),
                (p.add(4) as *const u32).read(),
                (p.add(8) as *const u64).read(),
                (p.add(16) as *const u64).read() as usize,
                std::slice::from_raw_parts(
                    p.add(24),
                    (p.add(16) as *const u64).read() as usize + 1,
                ),
            )
        };
        let want = e.view().string(id as u32);
        assert_eq!((rc, ti, len), (1, INTERNED_TYPE_INFO, want.len()));
        assert_eq!(h, zend_string_hash(want));
        assert_eq!(&val[..len], want);
        assert_eq!(val[len], 0, "NUL-terminated");
    }
}

#[test]
fn a_full_segment_stops_storing_and_keeps_serving() {
    let c = shm(MIN_SIZE);
    let body = persist(&support::rich_script("/srv/x.php", 1)).unwrap();
    let mut stored = 0;
    for n in 0..100_000 {
        match c.store(&key(&format!("f{n}"), 1), &body) {
            Ok(_) => stored += 1,
            Err(ShmStoreError::Full | ShmStoreError::TableFull) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(stored > 10, "only {stored} stored");
    assert!(c.store(&key("late", 1), &body).is_err());
    assert_eq!(c.stats().full, 2);
    for n in 0..stored {
        assert!(matches!(
            c.lookup_key(&key(&format!("f{n}"), 1)),
            ShmLookup::Hit(_)
        ));
    }
}

#[test]
fn an_invalid_body_is_never_published() {
    let c = shm(4 << 20);
    let mut body = persist(&support::rich_script("/srv/a.php", 1)).unwrap();
    let n = body.len();
    body[n - 1] ^= 0x5a;
    body[8] ^= 0xff;
    assert!(matches!(
        c.store(&key("a", 1), &body),
        Err(ShmStoreError::Invalid(_))
    ));
    assert!(matches!(c.lookup_key(&key("a", 1)), ShmLookup::Miss));
    assert!(c.stats().wasted > 0);
}

#[test]
fn segments_know_their_system() {
    let c = shm(MIN_SIZE);
    assert!(c.is_for(&SystemId::new("8.2.0", 0)));
    assert!(!c.is_for(&SystemId::new("8.2.0", 1)));
    assert!(ShmCache::create(
        ShmConfig::with_size(MIN_SIZE / 2),
        &SystemId::new("8.2.0", 0)
    )
    .is_err());
}

/// An embedder's run-time image of an entry: allocated and interned under the writer lock,
/// published once complete, refused for good when the builder gives up, dropped with the
/// entry it belongs to.
#[test]
fn run_time_images_are_published_whole_or_refused() {
    let c = shm(4 << 20);
    let body = persist(&support::rich_script("/srv/a.php", 1)).unwrap();
    let e = c.store(&key("a", 1), &body).unwrap();
    assert!(e.image().is_none() && !e.image_refused());
    let used = c.stats().data_used;
    let mut interned = std::ptr::null_mut();
    let published = c
        .attach_image(e, |w| {
            let root = w.alloc(64, 16)?;
            assert_eq!(root as usize % 16, 0);
            // Zero-filled, as the segment never reuses memory.
            assert!(unsafe { std::slice::from_raw_parts(root, 64) }
                .iter()
                .all(|&b| b == 0));
            interned = w.intern(b"hello")?;
            assert!(w.is_interned_here(interned) && w.holds(root) && !w.is_interned_here(root));
            assert_eq!(w.intern(b"hello"), Some(interned), "one copy of a string");
            unsafe { root.write(7) };
            Some(root.cast_const())
        })
        .unwrap();
    assert!(published);
    let root = e.image().expect("published");
    assert_eq!(unsafe { *root }, 7);
    assert!(c.stats().data_used >= used + 64);
    // Every process sees the same image through its own lookup.
    let ShmLookup::Hit(again) = c.lookup_key(&key("a", 1)) else {
        panic!("miss")
    };
    assert_eq!(again.image(), Some(root));
    // A second image is never made.
    assert!(!c.attach_image(again, |_| panic!("built twice")).unwrap());
    // The entry's size counts its image: replacing the entry wastes both.
    let size = e.size();
    c.store(&key("a", 2), &body).unwrap();
    assert_eq!(c.stats().wasted, size);

    // A builder that gives up: what it took is wasted, the entry is marked and not retried.
    let b = c.store(&key("b", 1), &body).unwrap();
    let wasted = c.stats().wasted;
    assert!(!c
        .attach_image(b, |w| {
            w.alloc(100, 8)?;
            None
        })
        .unwrap());
    assert!(b.image().is_none() && b.image_refused());
    assert!(c.stats().wasted >= wasted + 100);
    assert!(!c.attach_image(b, |_| panic!("retried")).unwrap());

    // An entry that is no longer its path's published entry gets no image.
    let old = c.lookup_key(&key("b", 1));
    let ShmLookup::Hit(old) = old else { panic!() };
    c.store(&key("b", 2), &body).unwrap();
    assert!(!c.attach_image(old, |_| panic!("stale entry")).unwrap());

    // A full segment: the builder sees it as a failed allocation.
    let d = c.store(&key("d", 1), &body).unwrap();
    assert!(!c
        .attach_image(d, |w| w.alloc(64 << 20, 8).map(|p| p.cast_const()))
        .unwrap());
    assert!(d.image_refused());
}
