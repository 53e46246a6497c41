//! An in-memory cache backend: persisted bodies in shared buffers, for embedders that keep
//! one process alive (and for tests). Entries are the same persisted form the file cache
//! stores, so a hit is read in place exactly like a file cache hit.

use crate::backend::{
    Backing, CacheBackend, CachedScript, Counters, Miss, Stats, StoreError, StoreInfo,
};
use crate::entry::Reject;
use crate::load::{self, BodyInfo};
use crate::persist::persist;
use crate::system::{CacheKey, Validation};
use hashbrown::HashMap;
use std::sync::{Arc, RwLock};

struct Entry {
    validation: Validation,
    body: Arc<[u8]>,
    info: BodyInfo,
    seq: u64,
}

#[derive(Default)]
struct Inner {
    map: HashMap<Vec<u8>, Entry>,
    bytes: u64,
    seq: u64,
}

/// In-memory cache with an optional size limit (oldest stored evicted first).
#[derive(Default)]
pub struct MemoryCache {
    inner: RwLock<Inner>,
    max_bytes: Option<u64>,
    counters: Counters,
}

impl MemoryCache {
    pub fn new(max_bytes: Option<u64>) -> MemoryCache {
        MemoryCache {
            inner: RwLock::default(),
            max_bytes,
            counters: Counters::default(),
        }
    }

    /// Entries and their total body bytes.
    pub fn usage(&self) -> (usize, u64) {
        let inner = self.inner.read().unwrap_or_else(|e| e.into_inner());
        (inner.map.len(), inner.bytes)
    }
}

impl CacheBackend for MemoryCache {
    fn lookup(&self, key: &CacheKey) -> Result<CachedScript, Miss> {
        let r = {
            let inner = self.inner.read().unwrap_or_else(|e| e.into_inner());
            match inner.map.get(&key.path) {
                None => Err(Miss::NotFound),
                Some(e) if e.validation != key.validation => Err(Miss::Rejected(Reject::Stale)),
                Some(e) => Ok(CachedScript {
                    data: Backing::Heap(e.body.clone()),
                    body: 0..e.body.len(),
                    info: e.info,
                }),
            }
        };
        self.counters.lookup(&r);
        r
    }

    fn store(&self, key: &CacheKey, script: &zend_ir::Script) -> Result<StoreInfo, StoreError> {
        let r = (|| {
            let body: Arc<[u8]> = persist(script)?.into();
            // Validated once here; hits then hand the buffer out as it is.
            let info = load::validate(&body).expect("persist produced a body its loader rejects");
            let len = body.len() as u64;
            let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
            inner.seq += 1;
            let seq = inner.seq;
            if let Some(old) = inner.map.insert(
                key.path.clone(),
                Entry {
                    validation: key.validation,
                    body,
                    info,
                    seq,
                },
            ) {
                inner.bytes -= old.body.len() as u64;
            }
            inner.bytes += len;
            let mut evicted = 0;
            if let Some(max) = self.max_bytes {
                while inner.bytes > max && inner.map.len() > 1 {
                    let oldest = inner
                        .map
                        .iter()
                        .filter(|(_, e)| e.seq != seq)
                        .min_by_key(|(_, e)| e.seq)
                        .map(|(k, _)| k.clone());
                    let Some(oldest) = oldest else { break };
                    if let Some(e) = inner.map.remove(&oldest) {
                        inner.bytes -= e.body.len() as u64;
                        evicted += 1;
                    }
                }
            }
            Ok(StoreInfo {
                entry_bytes: len,
                body_bytes: len,
                evicted,
            })
        })();
        self.counters.store(&r);
        r
    }

    fn invalidate(&self, path: &[u8]) -> Result<bool, StoreError> {
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        match inner.map.remove(path) {
            Some(e) => {
                inner.bytes -= e.body.len() as u64;
                self.counters.invalidated();
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn stats(&self) -> Stats {
        self.counters.snapshot()
    }
}
