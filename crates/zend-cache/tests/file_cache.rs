//! File cache and memory cache behaviour: hits, misses by reason, invalidation, stats,
//! eviction, maintenance (scan, verify, clear).

mod support;

use std::path::Path;
use zend_cache::file_cache::{self, ReadMode};
use zend_cache::*;

fn system() -> SystemId {
    SystemId::new("8.2.36", 0x7FFEBFFF)
}

fn config() -> FileCacheConfig {
    FileCacheConfig {
        sync: false,
        ..Default::default()
    }
}

fn write_source(dir: &Path, name: &str, content: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p.canonicalize().unwrap()
}

fn exercise(cache: &dyn CacheBackend, src: &Path, mode: ValidationMode) {
    let key = CacheKey::for_file(src, mode).unwrap();
    let script = support::rich_script(&src.to_string_lossy(), 1);
    assert_eq!(cache.lookup(&key).unwrap_err(), Miss::NotFound);
    cache.store(&key, &script).unwrap();
    let hit = cache.lookup(&key).unwrap();
    assert_eq!(hit.to_script(), script);
    assert_eq!(
        hit.view().main_op_array().ops().count(),
        script.main_op_array.opcodes.len()
    );
    // The source changes: the entry is stale.
    std::thread::sleep(std::time::Duration::from_millis(10));
    std::fs::write(src, "<?php echo 'changed, and longer';").unwrap();
    let key2 = CacheKey::for_file(src, mode).unwrap();
    assert_ne!(key, key2);
    assert_eq!(
        cache.lookup(&key2).unwrap_err(),
        Miss::Rejected(Reject::Stale)
    );
    let script2 = support::rich_script(&src.to_string_lossy(), 2);
    cache.store(&key2, &script2).unwrap();
    assert_eq!(cache.lookup(&key2).unwrap().to_script(), script2);
    assert!(cache.invalidate(&key2.path).unwrap());
    assert!(!cache.invalidate(&key2.path).unwrap());
    assert_eq!(cache.lookup(&key2).unwrap_err(), Miss::NotFound);
    let stats = cache.stats();
    assert_eq!(
        (stats.hits, stats.misses, stats.rejects(RejectKind::Stale)),
        (2, 2, 1),
        "{stats}"
    );
    assert_eq!((stats.stores, stats.invalidations), (2, 1));
}

#[test]
fn file_cache_lifecycle() {
    for mode in [ValidationMode::MtimeSize, ValidationMode::ContentHash] {
        for read_mode in [ReadMode::Mmap, ReadMode::Read, ReadMode::Auto] {
            let tmp = tempfile::tempdir().unwrap();
            let src = write_source(tmp.path(), "a.php", "<?php echo 1;");
            let cache = FileCache::open(
                tmp.path().join("cache"),
                system(),
                FileCacheConfig {
                    read_mode,
                    ..config()
                },
            )
            .unwrap();
            exercise(&cache, &src, mode);
            let hit_mapped = {
                let key = CacheKey::for_file(&src, mode).unwrap();
                cache.store(&key, &support::rich_script("x", 0)).unwrap();
                cache.lookup(&key).unwrap().is_mapped()
            };
            assert_eq!(hit_mapped, read_mode == ReadMode::Mmap);
            // A large entry: Auto maps it, Read reads it whole.
            let key = CacheKey::for_file(&src, mode).unwrap();
            let mut big = support::rich_script("big", 0);
            let op = big.main_op_array.opcodes[0];
            big.main_op_array.opcodes.resize(20_000, op);
            let info = cache.store(&key, &big).unwrap();
            assert!(info.entry_bytes > file_cache::SMALL_ENTRY as u64);
            let hit = cache.lookup(&key).unwrap();
            assert_eq!(hit.is_mapped(), read_mode != ReadMode::Read);
            assert_eq!(hit.to_script(), big);
            // Exactly at the boundary sizes around SMALL_ENTRY, every mode agrees.
            for extra in [0i64, -1, 1] {
                let mut sized = support::rich_script("sized", 0);
                let base = cache.store(&key, &sized).unwrap().entry_bytes as i64;
                let target = file_cache::SMALL_ENTRY as i64 + extra;
                let ops = (target - base) / 24;
                sized
                    .main_op_array
                    .opcodes
                    .resize(sized.main_op_array.opcodes.len() + ops as usize, op);
                cache.store(&key, &sized).unwrap();
                assert_eq!(cache.lookup(&key).unwrap().to_script(), sized);
            }
        }
    }
}

#[test]
fn memory_cache_lifecycle() {
    let tmp = tempfile::tempdir().unwrap();
    let src = write_source(tmp.path(), "a.php", "<?php echo 1;");
    exercise(&MemoryCache::new(None), &src, ValidationMode::MtimeSize);
}

#[test]
fn foreign_system_entries_are_misses_and_verify_names_them() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("cache");
    let ours = FileCache::open(&root, system(), config()).unwrap();
    let theirs = FileCache::open(&root, SystemId::new("8.2.36", 0), config()).unwrap();
    assert_ne!(ours.dir(), theirs.dir());
    let key = CacheKey::new(b"/x.php".to_vec(), Validation::of_content(b"x"));
    theirs
        .store(&key, &support::rich_script("/x.php", 0))
        .unwrap();
    assert_eq!(ours.lookup(&key).unwrap_err(), Miss::NotFound);
    // An entry copied into the wrong system directory is rejected as foreign.
    std::fs::copy(theirs.entry_path(&key.path), ours.entry_path(&key.path)).unwrap();
    assert_eq!(
        ours.lookup(&key).unwrap_err(),
        Miss::Rejected(Reject::ForeignSystem)
    );
    // An entry under another path's name is a path mismatch.
    let other = CacheKey::new(b"/y.php".to_vec(), key.validation);
    std::fs::copy(theirs.entry_path(&key.path), theirs.entry_path(&other.path)).unwrap();
    assert_eq!(
        theirs.lookup(&other).unwrap_err(),
        Miss::Rejected(Reject::PathMismatch)
    );

    let scan = file_cache::scan(&root).unwrap();
    assert_eq!(scan.systems.len(), 2);
    assert_eq!(scan.entries.len(), 3);
    let bad: Vec<_> = scan
        .entries
        .iter()
        .filter_map(|e| file_cache::verify_entry(e, false).err().map(|r| r.kind()))
        .collect();
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad.contains(&RejectKind::ForeignSystem) && bad.contains(&RejectKind::PathMismatch));
    assert!(scan.systems.iter().all(|s| s
        .description
        .as_deref()
        .is_some_and(|d| d.starts_with("zopt "))));

    let (removed, _) = file_cache::clear(&root).unwrap();
    assert_eq!(removed, 3);
    assert!(file_cache::scan(&root).unwrap().entries.is_empty());
    assert_eq!(
        std::fs::read_dir(&root).unwrap().count(),
        0,
        "clear leaves an empty directory"
    );
}

#[test]
fn size_limit_evicts_oldest() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("cache");
    let script = support::rich_script("/srv/app/rich.php", 0);
    let entry_len = {
        let c = FileCache::open(tmp.path().join("probe"), system(), config()).unwrap();
        let k = CacheKey::new(b"/srv/app/p00.php".to_vec(), Validation::of_content(b""));
        c.store(&k, &script).unwrap().entry_bytes
    };
    let max = entry_len * 10;
    let cache = FileCache::open(
        &root,
        system(),
        FileCacheConfig {
            max_bytes: Some(max),
            ..config()
        },
    )
    .unwrap();
    let mut evicted = 0;
    for i in 0..40 {
        let k = CacheKey::new(
            format!("/srv/app/p{i:02}.php").into_bytes(),
            Validation::of_content(b""),
        );
        evicted += cache.store(&k, &script).unwrap().evicted;
        // Distinct mtimes, so "oldest" is well defined.
        let f = std::fs::File::options()
            .write(true)
            .open(cache.entry_path(&k.path))
            .unwrap();
        f.set_modified(
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i),
        )
        .unwrap();
        let total: u64 = file_cache::scan(&root)
            .unwrap()
            .entries
            .iter()
            .map(|e| e.len)
            .sum();
        assert!(
            total <= max,
            "over the limit after store {i}: {total} > {max}"
        );
    }
    assert!(evicted > 0);
    assert_eq!(cache.stats().evictions, evicted);
    // The newest entries survive, the oldest are gone.
    let newest = CacheKey::new(b"/srv/app/p39.php".to_vec(), Validation::of_content(b""));
    assert!(cache.lookup(&newest).is_ok());
    let oldest = CacheKey::new(b"/srv/app/p00.php".to_vec(), Validation::of_content(b""));
    assert_eq!(cache.lookup(&oldest).unwrap_err(), Miss::NotFound);
}

#[test]
fn memory_cache_size_limit() {
    let cache = MemoryCache::new(Some(20_000));
    let script = support::rich_script("/a.php", 0);
    for i in 0..100 {
        let k = CacheKey::new(
            format!("/p{i}.php").into_bytes(),
            Validation::of_content(b""),
        );
        cache.store(&k, &script).unwrap();
    }
    let (n, bytes) = cache.usage();
    assert!(bytes <= 20_000 && n > 1, "{n} entries, {bytes} bytes");
    assert!(cache.stats().evictions > 0);
}

#[test]
fn backend_is_object_safe_and_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<FileCache>();
    assert_send_sync::<MemoryCache>();
    assert_send_sync::<CachedScript>();
    let tmp = tempfile::tempdir().unwrap();
    let backends: Vec<Box<dyn CacheBackend>> = vec![
        Box::new(MemoryCache::new(None)),
        Box::new(FileCache::open(tmp.path(), system(), config()).unwrap()),
    ];
    for b in &backends {
        let k = CacheKey::new(b"/t.php".to_vec(), Validation::of_content(b"t"));
        b.store(&k, &support::rich_script("/t.php", 5)).unwrap();
        assert_eq!(
            b.lookup(&k).unwrap().to_script(),
            support::rich_script("/t.php", 5)
        );
    }
}

#[test]
fn store_recovers_after_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("cache");
    let cache = FileCache::open(&root, system(), config()).unwrap();
    let key = CacheKey::new(b"/c.php".to_vec(), Validation::of_content(b"c"));
    let script = support::rich_script("/c.php", 1);
    cache.store(&key, &script).unwrap();
    file_cache::clear(&root).unwrap();
    assert_eq!(cache.lookup(&key).unwrap_err(), Miss::NotFound);
    std::fs::remove_dir_all(&root).unwrap();
    cache.store(&key, &script).unwrap();
    assert_eq!(cache.lookup(&key).unwrap().to_script(), script);
    let scan = file_cache::scan(&root).unwrap();
    assert_eq!(scan.entries.len(), 1);
    assert!(scan.systems[0].description.is_some());
}
