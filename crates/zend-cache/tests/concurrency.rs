//! Four processes warm and read one cache directory at the same time (4 s each, four paths
//! in three versions each, one store for every two lookups), with a size limit
//! small enough that eviction runs concurrently too. Every hit must be exactly the script
//! stored for that key; a miss may only be "not found" or "stale" (another version of the
//! same path is in place) — never a torn, truncated or corrupt entry.
//!
//! The test runs this test binary four more times as workers (`worker` below does nothing
//! unless the worker environment variables are set).

mod support;

use std::process::Command;
use std::time::{Duration, Instant};
use zend_cache::*;

const PATHS: u64 = 4;
const VERSIONS: u64 = 3;

fn key(p: u64, v: u64) -> CacheKey {
    CacheKey::new(
        format!("/srv/app/concurrent{p}.php").into_bytes(),
        Validation::MtimeSize {
            mtime_sec: 1_700_000_000 + v as i64,
            mtime_nsec: 0,
            size: 1000 + p,
        },
    )
}

/// The script stored under (p, v): distinct content and size per version.
fn script(p: u64, v: u64) -> zend_ir::Script {
    let mut s = support::rich_script(&format!("/srv/app/concurrent{p}.php"), (p * 10 + v) as u32);
    let op = s.main_op_array.opcodes[0];
    for i in 0..(v * 500 + p * 50) {
        let mut o = op;
        o.lineno = i as u32;
        s.main_op_array.opcodes.push(o);
    }
    s
}

fn open(dir: &str) -> FileCache {
    let config = FileCacheConfig {
        max_bytes: Some(60_000),
        read_mode: ReadMode::Mmap,
        sync: true,
    };
    FileCache::open(dir, SystemId::new("8.2.36", 0x7FFEBFFF), config).unwrap()
}

#[test]
fn worker() {
    let (Ok(dir), Ok(id)) = (
        std::env::var("ZC_WORKER_DIR"),
        std::env::var("ZC_WORKER_ID"),
    ) else {
        return;
    };
    let id: u64 = id.parse().unwrap();
    let cache = open(&dir);
    let expected: Vec<Vec<zend_ir::Script>> = (0..PATHS)
        .map(|p| (0..VERSIONS).map(|v| script(p, v)).collect())
        .collect();
    let bodies: Vec<Vec<Vec<u8>>> = expected
        .iter()
        .map(|vs| vs.iter().map(|s| persist(s).unwrap()).collect())
        .collect();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ (id + 1).wrapping_mul(0x2545_F491_4F6C_DD1D);
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let deadline = Instant::now() + Duration::from_secs(4);
    let (mut hits, mut misses, mut stale, mut stores, mut iterations) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    while Instant::now() < deadline {
        iterations += 1;
        let r = next();
        let (p, v) = (r % PATHS, (r >> 8) % VERSIONS);
        if (r >> 16) % 3 == 0 {
            cache
                .store(&key(p, v), &expected[p as usize][v as usize])
                .unwrap();
            stores += 1;
        } else {
            match cache.lookup(&key(p, v)) {
                Ok(hit) => {
                    // Byte-equal to the persisted form of the expected script (and every 16th
                    // hit also decoded and compared as a Script).
                    let want = &expected[p as usize][v as usize];
                    assert!(
                        hit.body() == &bodies[p as usize][v as usize][..],
                        "worker {id}: wrong entry for ({p}, {v})"
                    );
                    if hits % 16 == 0 {
                        assert_eq!(
                            &hit.to_script(),
                            want,
                            "worker {id}: wrong script for ({p}, {v})"
                        );
                    }
                    hits += 1;
                }
                Err(Miss::NotFound) => misses += 1,
                Err(Miss::Rejected(Reject::Stale)) => stale += 1,
                Err(other) => panic!("worker {id}: lookup of ({p}, {v}) gave {other}"),
            }
        }
    }
    let stats = cache.stats();
    assert_eq!(stats.hits, hits);
    println!("WORKER {id} iterations={iterations} hits={hits} misses={misses} stale={stale} stores={stores} evictions={}", stats.evictions);
}

#[test]
fn four_processes_share_one_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..4)
        .map(|id| {
            Command::new(&exe)
                .args(["--exact", "worker", "--nocapture", "--test-threads=1"])
                .env("ZC_WORKER_DIR", tmp.path())
                .env("ZC_WORKER_ID", id.to_string())
                .output_async()
        })
        .collect();
    let mut totals = [0u64; 5];
    for (id, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "worker {id} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = stdout
            .lines()
            .find_map(|l| l.find("WORKER ").map(|at| &l[at..]))
            .unwrap_or_else(|| panic!("worker {id} printed no summary:\n{stdout}"));
        eprintln!("{line}");
        for (i, name) in ["hits=", "misses=", "stale=", "stores=", "evictions="]
            .iter()
            .enumerate()
        {
            let v: u64 = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix(name))
                .unwrap()
                .parse()
                .unwrap();
            totals[i] += v;
        }
    }
    let [hits, misses, stale, stores, evictions] = totals;
    eprintln!("total: hits {hits}, misses {misses}, stale {stale}, stores {stores}, evictions {evictions}");
    assert!(
        hits > 100 && stores > 100,
        "too little concurrency exercised"
    );
    // Whatever is left on disk verifies.
    for e in file_cache::scan(tmp.path()).unwrap().entries {
        file_cache::verify_entry(&e, false).unwrap();
    }
}

trait SpawnOutput {
    fn output_async(&mut self) -> std::process::Child;
}

impl SpawnOutput for Command {
    fn output_async(&mut self) -> std::process::Child {
        self.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }
}
