//! Packs (`pack.zcp`): what `file_cache::pack` makes and how lookups serve from it — hits
//! from the pack are exactly the stored scripts, a script changed after packing is stale in
//! the pack and served from a fresh loose entry, a damaged, truncated or foreign pack is
//! ignored with a reason (or the damaged entry rejected), never a panic or a wrong script,
//! and readers keep working while the pack is replaced.

mod support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use zend_cache::file_cache::{self, PackStatus};
use zend_cache::pack::{self, PackError, PackIndex, PACK_FILE};
use zend_cache::*;

fn system() -> SystemId {
    SystemId::new("8.2.36", 0x7FFEBFFF)
}

fn open(root: &Path) -> FileCache {
    FileCache::open(
        root,
        system(),
        FileCacheConfig {
            sync: false,
            ..Default::default()
        },
    )
    .unwrap()
}

/// `n` source files under `dir` with a script each (the rich script and generated ones),
/// keyed by the files' real validation data.
fn sources(dir: &Path, n: usize) -> Vec<(PathBuf, CacheKey, zend_ir::Script)> {
    let mut scripts = vec![support::rich_script("x", 1)];
    scripts.extend(support::sample_scripts(n - 1));
    scripts
        .into_iter()
        .enumerate()
        .map(|(i, mut s)| {
            let p = dir.join(format!("src{i}.php"));
            std::fs::write(&p, format!("<?php // source {i}\n")).unwrap();
            let p = p.canonicalize().unwrap();
            s.filename = zend_ir::PhpStr::from(p.to_str().unwrap());
            let k = CacheKey::for_file(&p, ValidationMode::MtimeSize).unwrap();
            (p, k, s)
        })
        .collect()
}

/// A cache under `dir`/cache holding `n` stored scripts (loose entries), with the cache.
fn stored(
    dir: &Path,
    n: usize,
) -> (
    PathBuf,
    Vec<(PathBuf, CacheKey, zend_ir::Script)>,
    FileCache,
) {
    let root = dir.join("cache");
    let files = sources(dir, n);
    let cache = open(&root);
    for (_, k, s) in &files {
        cache.store(k, s).unwrap();
    }
    (root, files, cache)
}

/// A sample pack for the corruption tests, with the cache directory it belongs to.
struct Sample {
    /// An opened (empty) cache lives here.
    tmp: tempfile::TempDir,
    digest: [u8; 16],
    entries: Vec<(CacheKey, zend_ir::Script)>,
    /// The pack's bytes.
    good: Vec<u8>,
}

fn sample() -> Sample {
    let tmp = tempfile::tempdir().unwrap();
    drop(open(tmp.path()));
    let digest = system().digest();
    let (entries, good) = sample_pack(&digest);
    Sample {
        tmp,
        digest,
        entries,
        good,
    }
}

fn loose_count(root: &Path) -> usize {
    file_cache::scan(root).unwrap().entries.len()
}

#[test]
fn pack_serves_exactly_the_stored_scripts() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("cache");
    let files = sources(tmp.path(), 8);
    let cache = open(&root);
    assert_eq!(cache.pack_status(), PackStatus::Absent);
    for (_, k, s) in &files {
        cache.store(k, s).unwrap();
    }
    let report = file_cache::pack(&root, true).unwrap();
    assert_eq!(report.systems.len(), 1);
    let r = &report.systems[0];
    assert_eq!(
        (
            r.entries,
            r.from_loose,
            r.from_pack,
            r.pruned,
            r.stale,
            r.bad
        ),
        (8, 8, 0, 8, 0, 0),
        "{r:?}"
    );
    assert_eq!(loose_count(&root), 0);
    assert_eq!(r.bytes, std::fs::metadata(&r.pack).unwrap().len());

    let cache = open(&root);
    assert_eq!(
        cache.pack_status(),
        PackStatus::Mapped {
            entries: 8,
            bytes: r.bytes
        }
    );
    for (_, k, s) in &files {
        let hit = cache.lookup(k).unwrap();
        assert!(hit.is_packed() && hit.is_mapped());
        assert_eq!(hit.to_script(), *s);
        assert_eq!(hit.body(), persist(s).unwrap().as_slice());
        // The body keeps the layout's alignment inside the mapping.
        assert_eq!(hit.body().as_ptr() as usize % 16, 0);
    }
    // A path that was never stored is a plain miss.
    let other = CacheKey::new(b"/nowhere.php".to_vec(), files[0].1.validation);
    assert_eq!(cache.lookup(&other).unwrap_err(), Miss::NotFound);
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.misses, stats.rejects_total()), (8, 1, 0));

    // Hits outlive the cache (and its mapping's other users).
    let hit = cache.lookup(&files[3].1).unwrap();
    drop(cache);
    assert_eq!(hit.to_script(), files[3].2);

    // stat, verify, clear know about the pack.
    let scan = file_cache::scan(&root).unwrap();
    assert_eq!(scan.packs.len(), 1);
    assert_eq!(scan.packs[0].entries, Some(8));
    assert_eq!(
        (scan.systems[0].pack_entries, scan.systems[0].pack_bytes),
        (8, r.bytes)
    );
    let checks = file_cache::verify_pack(&scan.packs[0], true).unwrap();
    assert_eq!(checks.len(), 8);
    assert!(checks
        .iter()
        .all(|c| c.result.as_ref().is_ok_and(|s| s.fresh == Some(true))));
    // Eviction leaves the pack alone.
    assert_eq!(file_cache::evict(&root, 0, 0).unwrap(), (0, 0));
    assert!(r.pack.exists());
    assert_eq!(file_cache::clear(&root).unwrap(), (8, r.bytes));
    assert!(!r.pack.exists());
}

#[test]
fn a_script_changed_after_packing_is_stale_in_the_pack_and_served_loose() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, files, _) = stored(tmp.path(), 5);
    file_cache::pack(&root, true).unwrap();
    let cache = open(&root);
    let (src, old_key, _) = &files[2];
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(src, "<?php // changed, and longer\n").unwrap();
    let key = CacheKey::for_file(src, ValidationMode::MtimeSize).unwrap();
    assert_ne!(&key, old_key);
    assert_eq!(
        cache.lookup(&key).unwrap_err(),
        Miss::Rejected(Reject::Stale)
    );
    assert_eq!(cache.stats().rejects(RejectKind::Stale), 1);
    let new_script = support::rich_script(&src.to_string_lossy(), 7);
    cache.store(&key, &new_script).unwrap();
    let hit = cache.lookup(&key).unwrap();
    assert!(!hit.is_packed());
    assert_eq!(hit.to_script(), new_script);
    // The others still come from the pack.
    for (_, k, s) in files.iter().filter(|f| f.0 != *src) {
        let hit = cache.lookup(k).unwrap();
        assert!(hit.is_packed());
        assert_eq!(hit.to_script(), *s);
    }

    // Repacking takes the loose entry instead of the stale packed one, and drops the
    // entry of a source that is gone.
    std::fs::remove_file(&files[4].0).unwrap();
    let r = &file_cache::pack(&root, false).unwrap().systems[0];
    assert_eq!(
        (r.entries, r.from_loose, r.from_pack, r.stale, r.pruned),
        (4, 1, 3, 2, 0),
        "{r:?}"
    );
    // The stale packed entry of files[2] was dropped as stale, not counted as superseded.
    assert_eq!(r.superseded, 0);
    assert_eq!(loose_count(&root), 1);
    let cache = open(&root);
    let hit = cache.lookup(&key).unwrap();
    assert!(hit.is_packed());
    assert_eq!(hit.to_script(), new_script);
    let gone = &files[4].1;
    assert!(matches!(cache.lookup(gone), Err(Miss::NotFound)));

    // Storing the same (fresh) script again supersedes the packed entry at the next pack
    // (as the loose entry of files[2], still there, supersedes its packed copy).
    cache.store(&files[0].1, &files[0].2).unwrap();
    let r = &file_cache::pack(&root, true).unwrap().systems[0];
    assert_eq!(
        (r.entries, r.from_loose, r.from_pack, r.superseded),
        (4, 2, 2, 2),
        "{r:?}"
    );
    assert_eq!(loose_count(&root), 0);

    // Invalidation stops serving the path from the pack in this process.
    let cache = open(&root);
    assert!(cache.lookup(&files[0].1).is_ok());
    assert!(cache.invalidate(&files[0].1.path).unwrap());
    assert_eq!(cache.lookup(&files[0].1).unwrap_err(), Miss::NotFound);
    cache.store(&files[0].1, &files[0].2).unwrap();
    assert!(!cache.lookup(&files[0].1).unwrap().is_packed());
}

/// A process that mapped no pack, or an older one, maps the new pack when a lookup finds
/// nothing (another process packed and pruned meanwhile).
#[test]
fn a_lookup_that_finds_nothing_maps_a_replaced_pack() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("cache");
    let files = sources(tmp.path(), 4);
    let early = open(&root);
    for (_, k, s) in &files[..2] {
        early.store(k, s).unwrap();
    }
    file_cache::pack(&root, true).unwrap();
    // `early` had no pack: its lookups find no loose entry, map the pack, hit.
    assert_eq!(early.pack_status(), PackStatus::Absent);
    let hit = early.lookup(&files[0].1).unwrap();
    assert!(hit.is_packed());
    assert!(matches!(
        early.pack_status(),
        PackStatus::Mapped { entries: 2, .. }
    ));
    // A second pack takes two more (pruned): `early` still has the first one mapped, and
    // maps the second at its first miss.
    let other = open(&root);
    for (_, k, s) in &files[2..] {
        other.store(k, s).unwrap();
    }
    file_cache::pack(&root, true).unwrap();
    for (_, k, s) in &files {
        let hit = early.lookup(k).unwrap();
        assert!(hit.is_packed());
        assert_eq!(hit.to_script(), *s);
    }
    assert!(matches!(
        early.pack_status(),
        PackStatus::Mapped { entries: 4, .. }
    ));
    // The hit taken from the first pack outlives its replacement.
    assert_eq!(hit.to_script(), files[0].2);
    assert_eq!(early.stats().hits, 5);
    assert_eq!(early.stats().misses, 0);
    // A removed pack still serves what it holds (its entries are valid) until a miss,
    // which drops it.
    file_cache::clear(&root).unwrap();
    assert!(early.lookup(&files[1].1).is_ok());
    let never = CacheKey::new(b"/never/stored.php".to_vec(), files[1].1.validation);
    assert_eq!(early.lookup(&never).unwrap_err(), Miss::NotFound);
    assert_eq!(early.pack_status(), PackStatus::Absent);
    assert_eq!(early.lookup(&files[1].1).unwrap_err(), Miss::NotFound);
}

/// Keys and scripts of a sample pack that needs no source files (the pack is written
/// directly, not by `file_cache::pack`).
fn sample_pack(digest: &[u8; 16]) -> (Vec<(CacheKey, zend_ir::Script)>, Vec<u8>) {
    let mut scripts = vec![support::rich_script("/srv/app/rich.php", 1)];
    scripts.extend(support::sample_scripts(5));
    let entries: Vec<(CacheKey, zend_ir::Script, Vec<u8>)> = scripts
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let k = CacheKey::new(
                format!("/srv/app/file{i}.php").into_bytes(),
                Validation::MtimeSize {
                    mtime_sec: 1_700_000_000,
                    mtime_nsec: 5,
                    size: 100 + i as u64,
                },
            );
            let bytes = entry::encode(&s, digest, &k, 42).unwrap();
            (k, s, bytes)
        })
        .collect();
    let mut refs: Vec<(u64, &[u8])> = entries
        .iter()
        .map(|(k, _, b)| (pack::path_hash(&k.path), b.as_slice()))
        .collect();
    let bytes = pack::encode(digest, &mut refs);
    (entries.into_iter().map(|(k, s, _)| (k, s)).collect(), bytes)
}

fn pack_path(root: &Path) -> PathBuf {
    root.join(hex(&system().digest())).join(PACK_FILE)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Opens the cache over `bytes` as its pack and looks every key up: each is a hit with
/// exactly its script, or a miss. Returns the pack status and the number of hits.
fn serve(
    root: &Path,
    bytes: &[u8],
    entries: &[(CacheKey, zend_ir::Script)],
) -> (PackStatus, usize) {
    std::fs::write(pack_path(root), bytes).unwrap();
    let cache = open(root);
    let mut hits = 0;
    for (k, s) in entries {
        match cache.lookup(k) {
            Ok(hit) => {
                assert_eq!(hit.to_script(), *s, "a damaged pack served a wrong script");
                hits += 1;
            }
            Err(Miss::NotFound | Miss::Rejected(_)) => {}
        }
    }
    (cache.pack_status(), hits)
}

#[test]
fn every_single_byte_corruption_of_the_header_and_index_ignores_the_pack() {
    let Sample {
        tmp,
        digest,
        entries,
        good,
    } = sample();
    let data_start = PackIndex::parse(&good, &digest)
        .unwrap()
        .record(&good, 0)
        .offset as usize;
    assert_eq!(serve(tmp.path(), &good, &entries).1, entries.len());
    let mut reasons = std::collections::BTreeMap::new();
    let mut bad = good.clone();
    for i in 0..data_start {
        for change in [|b: u8| b ^ 0xff, |b: u8| b ^ 0x01, |_| 0u8] {
            let new = change(good[i]);
            if new == good[i] {
                continue;
            }
            bad[i] = new;
            match serve(tmp.path(), &bad, &entries) {
                (PackStatus::Ignored(e), 0) => {
                    let name = format!("{e:?}");
                    *reasons
                        .entry(name.split(['(', ' ']).next().unwrap().to_string())
                        .or_insert(0) += 1;
                }
                other => panic!("corrupting byte {i} of the header/index: {other:?}"),
            }
            bad[i] = good[i];
        }
    }
    eprintln!("header/index corruptions: {reasons:?}");
    for r in ["BadMagic", "Checksum", "ForeignFormat"] {
        assert!(reasons.contains_key(r), "{r} never reported: {reasons:?}");
    }
}

#[test]
fn corrupted_entries_in_a_pack_are_rejected_alone() {
    let Sample {
        tmp,
        digest,
        entries,
        good,
    } = sample();
    let index = PackIndex::parse(&good, &digest).unwrap();
    let records: Vec<_> = index.records(&good).collect();
    let mut bad = good.clone();
    for i in (records[0].offset as usize..good.len()).step_by(11) {
        bad[i] ^= 0xff;
        let (status, hits) = serve(tmp.path(), &bad, &entries);
        assert!(matches!(status, PackStatus::Mapped { .. }), "{status:?}");
        let in_entry = records.iter().any(|r| r.range().contains(&i));
        assert_eq!(
            hits,
            entries.len() - usize::from(in_entry),
            "byte {i}: one entry damaged"
        );
        bad[i] = good[i];
    }
}

#[test]
fn every_truncation_ignores_the_pack() {
    let Sample {
        tmp,
        digest,
        entries,
        good,
    } = sample();
    let data_start = PackIndex::parse(&good, &digest)
        .unwrap()
        .record(&good, 0)
        .offset as usize;
    let lens = (0..data_start + 64).chain((data_start + 64..good.len()).step_by(13));
    for n in lens.chain([good.len() - 1]) {
        match serve(tmp.path(), &good[..n], &entries) {
            (PackStatus::Ignored(_), 0) => {}
            other => panic!("truncation to {n} of {}: {other:?}", good.len()),
        }
    }
    // Trailing bytes too.
    let mut longer = good.clone();
    longer.extend_from_slice(&[0; 16]);
    assert!(matches!(
        serve(tmp.path(), &longer, &entries),
        (PackStatus::Ignored(PackError::BadIndex(_)), 0)
    ));
}

#[test]
fn a_pack_of_another_system_or_format_is_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    drop(open(tmp.path()));
    let digest = system().digest();
    let other = SystemId::new("8.2.36", 0).digest();
    let (entries, foreign) = sample_pack(&other);
    assert_eq!(
        serve(tmp.path(), &foreign, &entries),
        (PackStatus::Ignored(PackError::ForeignSystem), 0)
    );
    let (entries, mut bytes) = sample_pack(&digest);
    bytes[16..20].copy_from_slice(&(entry::FORMAT_VERSION + 1).to_le_bytes());
    assert_eq!(
        serve(tmp.path(), &bytes, &entries),
        (
            PackStatus::Ignored(PackError::ForeignFormat(entry::FORMAT_VERSION + 1)),
            0
        )
    );
    // An empty file, a directory.
    assert!(matches!(
        serve(tmp.path(), &[], &entries),
        (PackStatus::Ignored(_), 0)
    ));
    std::fs::remove_file(pack_path(tmp.path())).unwrap();
    std::fs::create_dir(pack_path(tmp.path())).unwrap();
    assert!(matches!(
        open(tmp.path()).pack_status(),
        PackStatus::Ignored(_)
    ));
    std::fs::remove_dir(pack_path(tmp.path())).unwrap();

    // A bad pack is named by verify, and replaced by the next pack from loose entries.
    std::fs::write(pack_path(tmp.path()), &foreign).unwrap();
    let scan = file_cache::scan(tmp.path()).unwrap();
    assert_eq!(
        file_cache::verify_pack(&scan.packs[0], false).unwrap_err(),
        PackError::ForeignSystem
    );
    let r = &file_cache::pack(tmp.path(), true).unwrap().systems[0];
    assert_eq!(r.previous_pack_error, Some(PackError::ForeignSystem));
    assert_eq!(r.entries, 0);
    assert!(!pack_path(tmp.path()).exists());
}

/// Readers open the cache and look every script up while a writer keeps storing loose
/// entries and replacing the pack (with pruning): every lookup hits with exactly its
/// script — a reader's mapping of a replaced pack stays valid.
#[test]
fn readers_keep_working_while_the_pack_is_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, files, _) = stored(tmp.path(), 6);
    file_cache::pack(&root, true).unwrap();
    let stop = AtomicBool::new(false);
    let packs = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let readers: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| {
                    let mut lookups = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let cache = open(&root);
                        for _ in 0..3 {
                            for (_, k, s) in &files {
                                let hit = cache.lookup(k).unwrap_or_else(|m| {
                                    panic!("{:?}: {m}; {}", k.path, cache.pack_status())
                                });
                                assert_eq!(hit.body(), persist(s).unwrap().as_slice());
                                lookups += 1;
                            }
                        }
                    }
                    lookups
                })
            })
            .collect();
        let writer = scope.spawn(|| {
            let cache = open(&root);
            let start = std::time::Instant::now();
            let mut i = 0;
            while start.elapsed() < std::time::Duration::from_millis(1500) {
                let (_, k, s) = &files[i % files.len()];
                cache.store(k, s).unwrap();
                let r = file_cache::pack(&root, i % 2 == 0).unwrap();
                assert_eq!(r.systems[0].entries, files.len() as u64);
                packs.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
            stop.store(true, Ordering::Relaxed);
        });
        writer.join().unwrap();
        let lookups: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
        eprintln!(
            "{lookups} lookups during {} pack replacements",
            packs.load(Ordering::Relaxed)
        );
        assert!(packs.load(Ordering::Relaxed) > 1 && lookups > 0);
    });
}

/// Two entries under one path hash (a collision, or a misplaced entry): a lookup checks
/// every candidate and serves the one for its path; verify names the misplaced one.
#[test]
fn candidates_sharing_a_hash_are_each_checked() {
    let tmp = tempfile::tempdir().unwrap();
    drop(open(tmp.path()));
    let digest = system().digest();
    let (entries, _) = sample_pack(&digest);
    let encoded: Vec<Vec<u8>> = entries
        .iter()
        .map(|(k, s)| entry::encode(s, &digest, k, 42).unwrap())
        .collect();
    let shared = pack::path_hash(&entries[0].0.path);
    let mut refs: Vec<(u64, &[u8])> = vec![
        (shared, encoded[1].as_slice()),
        (shared, encoded[0].as_slice()),
        (pack::path_hash(&entries[2].0.path), encoded[2].as_slice()),
    ];
    let bytes = pack::encode(&digest, &mut refs);
    std::fs::write(pack_path(tmp.path()), &bytes).unwrap();
    let cache = open(tmp.path());
    assert_eq!(
        cache.lookup(&entries[0].0).unwrap().to_script(),
        entries[0].1
    );
    assert_eq!(
        cache.lookup(&entries[2].0).unwrap().to_script(),
        entries[2].1
    );
    // entries[1] sits under another path's hash: not found under its own.
    assert_eq!(cache.lookup(&entries[1].0).unwrap_err(), Miss::NotFound);
    let scan = file_cache::scan(tmp.path()).unwrap();
    let checks = file_cache::verify_pack(&scan.packs[0], false).unwrap();
    let misplaced: Vec<_> = checks
        .iter()
        .filter_map(|c| c.result.as_ref().err())
        .collect();
    assert_eq!(misplaced, [&Reject::PathMismatch]);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Any few bytes changed anywhere in a pack, and any cut or extension: the index
        /// parser and the entry checks never panic, and whatever is accepted is exactly the
        /// script stored under that key.
        #[test]
        fn no_mutation_of_a_pack_panics_or_serves_a_wrong_script(
            edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
            hot in any::<bool>(),
            cut in proptest::option::of(any::<usize>()),
            extra in 0usize..40,
        ) {
            let digest = system().digest();
            let (entries, good) = SAMPLE.with(|s| s.clone());
            let mut bad = good.clone();
            let data_start = 48 + 24 * entries.len() + 8;
            for (at, v) in edits {
                // Half the cases aim at the header and index.
                let at = if hot { at % data_start } else { at % bad.len() };
                bad[at] ^= v.max(1);
            }
            if let Some(c) = cut {
                bad.truncate(c % (good.len() + 1));
            }
            bad.extend(std::iter::repeat_n(0u8, extra));
            if let Ok(index) = PackIndex::parse(&bad, &digest) {
                for rec in index.records(&bad) {
                    let e = &bad[rec.range()];
                    for (k, s) in &entries {
                        if entry::prefilter(e, k).is_ok() {
                            if let Ok((h, _)) = entry::parse_and_validate(e, &digest, k) {
                                prop_assert_eq!(&load(&e[h.body_offset..]).unwrap(), s);
                            }
                        }
                    }
                }
            }
        }
    }

    thread_local! {
        static SAMPLE: (Vec<(CacheKey, zend_ir::Script)>, Vec<u8>) = sample_pack(&system().digest());
    }
}
