//! Fault tests: corrupted, truncated, foreign and mismatched entries are clean misses with a
//! reason, never a panic and never a wrong script.
//!
//! Coverage: for a sample of entries (the hand-written rich script and 6 generated
//! scripts, 7 entries of 1–4 KiB), *every* byte of the entry is corrupted in turn (three
//! ways: XOR 0xFF, XOR 0x01 and set to 0x00, skipping no-op writes) and the entry is
//! truncated at *every* length from 0 to its length − 1; each variant must be rejected by
//! the entry loader. A smaller sample goes through the real file cache (files on disk,
//! mmap): every 7th byte flipped and every 5th truncation length.

mod support;

use std::path::Path;
use zend_cache::entry::{self, Reject, RejectKind};
use zend_cache::*;

fn sys() -> [u8; 16] {
    SystemId::new("8.2.36", 0x7FFEBFFF).digest()
}

fn key(path: &str) -> CacheKey {
    CacheKey::new(
        path.as_bytes().to_vec(),
        Validation::MtimeSize {
            mtime_sec: 1_700_000_000,
            mtime_nsec: 123,
            size: 4096,
        },
    )
}

fn sample_entries() -> Vec<(CacheKey, zend_ir::Script, Vec<u8>)> {
    let mut scripts = vec![support::rich_script("/srv/app/rich.php", 1)];
    scripts.extend(support::sample_scripts(6));
    scripts
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let k = key(&format!("/srv/app/file{i}.php"));
            let bytes = entry::encode(&s, &sys(), &k, 42).unwrap();
            (k, s, bytes)
        })
        .collect()
}

#[test]
fn every_single_byte_corruption_is_rejected() {
    let mut by_kind = std::collections::BTreeMap::new();
    let mut variants = 0;
    for (k, s, bytes) in sample_entries() {
        let (_, _) = entry::parse_and_validate(&bytes, &sys(), &k).expect("the intact entry loads");
        assert_eq!(
            load(&bytes[entry::parse(&bytes).unwrap().body_offset..]).unwrap(),
            s
        );
        let mut bad = bytes.clone();
        for i in 0..bytes.len() {
            for change in [|b: u8| b ^ 0xff, |b: u8| b ^ 0x01, |_| 0u8] {
                let new = change(bytes[i]);
                if new == bytes[i] {
                    continue;
                }
                bad[i] = new;
                variants += 1;
                match entry::parse_and_validate(&bad, &sys(), &k) {
                    Ok(_) => panic!(
                        "corrupting byte {i} of {} ({:#04x} -> {new:#04x}) went undetected",
                        bytes.len(),
                        bytes[i]
                    ),
                    Err(r) => *by_kind.entry(r.kind()).or_insert(0u32) += 1,
                }
                bad[i] = bytes[i];
            }
        }
    }
    eprintln!("{variants} corrupted variants rejected: {by_kind:?}");
    // Each region of the entry is reported by what it is.
    for kind in [
        RejectKind::BadMagic,
        RejectKind::Checksum,
        RejectKind::ForeignFormat,
        RejectKind::BadHeader,
        RejectKind::Truncated,
    ] {
        assert!(
            by_kind.contains_key(&kind),
            "no corruption reported as {kind}"
        );
    }
}

#[test]
fn every_truncation_is_rejected() {
    let mut variants = 0;
    for (k, _, bytes) in sample_entries() {
        for n in 0..bytes.len() {
            variants += 1;
            match entry::parse_and_validate(&bytes[..n], &sys(), &k) {
                Ok(_) => panic!("truncation to {n} of {} bytes went undetected", bytes.len()),
                Err(Reject::Truncated { .. }) => {}
                Err(other) => panic!("truncation to {n} reported as {other}"),
            }
        }
        // And trailing garbage.
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            entry::parse_and_validate(&longer, &sys(), &k),
            Err(Reject::BadHeader(_))
        ));
    }
    eprintln!("{variants} truncations rejected");
}

#[test]
fn foreign_and_mismatched_entries_are_rejected() {
    let (k, s, bytes) = sample_entries().swap_remove(0);
    let other_sys = SystemId::new("8.2.37", 0x7FFEBFFF).digest();
    assert_eq!(
        entry::parse_and_validate(&bytes, &other_sys, &k).unwrap_err(),
        Reject::ForeignSystem
    );
    let other_level = SystemId::new("8.2.36", 0).digest();
    assert_eq!(
        entry::parse_and_validate(&bytes, &other_level, &k).unwrap_err(),
        Reject::ForeignSystem
    );
    let mut other_path = k.clone();
    other_path.path = b"/srv/app/other.php".to_vec();
    assert_eq!(
        entry::parse_and_validate(&bytes, &sys(), &other_path).unwrap_err(),
        Reject::PathMismatch
    );
    for v in [
        Validation::MtimeSize {
            mtime_sec: 1_700_000_000,
            mtime_nsec: 124,
            size: 4096,
        },
        Validation::MtimeSize {
            mtime_sec: 1_700_000_000,
            mtime_nsec: 123,
            size: 4097,
        },
        Validation::ContentHash {
            size: 4096,
            hash: 1,
        },
    ] {
        let stale = CacheKey::new(k.path.clone(), v);
        assert_eq!(
            entry::parse_and_validate(&bytes, &sys(), &stale).unwrap_err(),
            Reject::Stale
        );
    }
    // A future format version.
    let mut future = bytes.clone();
    let next = entry::FORMAT_VERSION + 1;
    future[16..20].copy_from_slice(&next.to_le_bytes());
    assert_eq!(
        entry::parse_and_validate(&future, &sys(), &k).unwrap_err(),
        Reject::ForeignFormat(next)
    );
    // Not an entry at all.
    assert_eq!(
        entry::parse_and_validate(b"<?php echo 1;", &sys(), &k).unwrap_err(),
        Reject::BadMagic
    );
    // A content-hash entry round-trips too.
    let kh = CacheKey::new(k.path.clone(), Validation::of_content(b"<?php echo 1;"));
    let bytes = entry::encode(&s, &sys(), &kh, 0).unwrap();
    assert!(entry::parse_and_validate(&bytes, &sys(), &kh).is_ok());
}

fn open(dir: &Path) -> FileCache {
    FileCache::open(
        dir,
        SystemId::new("8.2.36", 0x7FFEBFFF),
        FileCacheConfig {
            sync: false,
            ..Default::default()
        },
    )
    .unwrap()
}

/// The same faults through the real file cache: entry files on disk, read by mmap.
#[test]
fn file_cache_rejects_damaged_files() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = open(tmp.path());
    let mut expected_rejects = 0;
    for (k, s, _) in sample_entries().into_iter().take(3) {
        cache.store(&k, &s).unwrap();
        let file = cache.entry_path(&k.path);
        let good = std::fs::read(&file).unwrap();
        assert_eq!(cache.lookup(&k).unwrap().to_script(), s);
        for i in (0..good.len()).step_by(7) {
            let mut bad = good.clone();
            bad[i] ^= 0xff;
            std::fs::write(&file, &bad).unwrap();
            let miss = cache
                .lookup(&k)
                .expect_err("a flipped byte went undetected");
            assert!(matches!(miss, Miss::Rejected(_)), "{miss}");
            expected_rejects += 1;
        }
        for n in (0..good.len()).step_by(5) {
            std::fs::write(&file, &good[..n]).unwrap();
            match cache.lookup(&k) {
                Err(Miss::Rejected(Reject::Truncated { .. })) => {}
                other => panic!("truncation to {n}: {other:?}"),
            }
            expected_rejects += 1;
        }
        std::fs::write(&file, &good).unwrap();
        assert_eq!(cache.lookup(&k).unwrap().to_script(), s);
    }
    let stats = cache.stats();
    assert_eq!(stats.rejects_total(), expected_rejects);
    assert_eq!(stats.hits, 6);
}

#[test]
fn halt_offset_roundtrips_and_is_validated() {
    use zend_cache::layout::header;
    let cache = MemoryCache::new(None);
    for offset in [None, Some(0), Some(421), Some(u64::MAX)] {
        let mut s = support::rich_script("/srv/app/halt.php", 2);
        s.compiler_halt_offset = offset;
        let body = persist(&s).unwrap();
        assert_eq!(persist_calc(&s).unwrap().size(), body.len());
        assert_eq!(
            ScriptView::new(&body).unwrap().compiler_halt_offset(),
            offset
        );
        assert_eq!(load(&body).unwrap(), s);
        let k = key("/srv/app/halt.php");
        cache.store(&k, &s).unwrap();
        let hit = cache.lookup(&k).unwrap();
        assert_eq!(hit.view().compiler_halt_offset(), offset);
        assert_eq!(hit.to_script(), s);
    }
    // The presence field is 0 or 1, and an absent offset is stored as zero.
    let s = support::rich_script("/srv/app/halt.php", 2);
    assert_eq!(s.compiler_halt_offset, None);
    let body = persist(&s).unwrap();
    let mut bad = body.clone();
    bad[header::HAS_HALT_OFFSET] = 2;
    assert_eq!(load(&bad).unwrap_err().kind, BodyErrorKind::BadEnum);
    let mut bad = body.clone();
    bad[header::HALT_OFFSET + 3] = 1;
    assert_eq!(load(&bad).unwrap_err().kind, BodyErrorKind::NonZeroPadding);
    let mut present = body;
    present[header::HAS_HALT_OFFSET] = 1;
    assert_eq!(load(&present).unwrap().compiler_halt_offset, Some(0));
}

/// The model's index types (`OpNum`, `VarNum`, `LiteralId`) cannot hold `u32::MAX`: a body
/// with that number in any aligned word loads or is refused, it never panics, and in an
/// operand, live range or try/catch op it is refused as `BadIndex`.
#[test]
fn max_index_words_are_refused_not_panicked_on() {
    let s = support::rich_script("/srv/app/index.php", 2);
    let body = persist(&s).unwrap();
    let mut bad_index = 0;
    for at in (0..body.len() - 3).step_by(4) {
        let mut bad = body.clone();
        bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        if let Err(e) = load(&bad) {
            bad_index += usize::from(e.kind == BodyErrorKind::BadIndex);
        }
    }
    assert!(bad_index > 0, "no word of the body was read as an index");
}

/// A linked class's method stubs (OPcache's preloading) have no persisted form: such a
/// script is refused by name, never stored without them.
#[test]
fn linked_classes_are_refused() {
    let mut s = support::rich_script("/srv/app/index.php", 1);
    let ce = &mut s.class_table[0].1;
    ce.method_stubs.push(zend_ir::MethodStub {
        position: ce.methods.len() as u32,
        key: zend_ir::PhpStr::from("getmessage"),
        scope: zend_ir::PhpStr::from("Exception"),
        fn_flags: 0x0200_0021,
    });
    let err = persist(&s).unwrap_err();
    assert!(
        matches!(&err, PersistError::LinkedClass(name) if name == "Example"),
        "{err}"
    );
}
