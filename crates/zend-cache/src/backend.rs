//! The cache backend API: what an embedder (the zopt PHP extension, the `zopt` command
//! line, a server) programs against, with two implementations, [`crate::FileCache`] and
//! [`crate::MemoryCache`].

use crate::entry::{Reject, RejectKind};
use crate::load::{BodyInfo, ScriptView};
use crate::persist::PersistError;
use crate::system::CacheKey;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use zend_ir::Script;

/// An opcode cache keyed by script path and validation data, for one system id (fixed when
/// the backend is created).
///
/// Every method is safe to call from several threads; the file cache is also safe across
/// processes sharing one directory. A lookup never returns anything it has not validated
/// completely, and never panics on what it reads.
pub trait CacheBackend: Send + Sync {
    /// Finds the entry for `key.path` and checks it against `key.validation` and the
    /// backend's system id. A hit is a fully validated entry; anything else is a [`Miss`]
    /// that says why.
    fn lookup(&self, key: &CacheKey) -> Result<CachedScript, Miss>;

    /// Persists `script` under `key` (replacing any entry for the same path). Readers see
    /// either the old entry or the new one, never a mix.
    fn store(&self, key: &CacheKey, script: &Script) -> Result<StoreInfo, StoreError>;

    /// Removes the entry for `path`, if any. Returns whether one was removed.
    fn invalidate(&self, path: &[u8]) -> Result<bool, StoreError>;

    /// Counters since the backend was created (this process only).
    fn stats(&self) -> Stats;
}

/// Why a lookup did not hit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Miss {
    /// No entry for the path.
    #[error("not cached")]
    NotFound,
    /// There is an entry, and it was rejected.
    #[error("rejected: {0}")]
    Rejected(Reject),
}

/// Why a store or an invalidation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot persist the script: {0}")]
    Persist(#[from] PersistError),
    #[error("cache I/O: {0}")]
    Io(#[from] std::io::Error),
}

/// What a store wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreInfo {
    /// Bytes of the entry (header, path and body).
    pub entry_bytes: u64,
    /// Bytes of the persisted body.
    pub body_bytes: u64,
    /// Entries evicted to stay under the size limit.
    pub evicted: u64,
}

/// Counters of a backend.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub hits: u64,
    /// Lookups that found no entry.
    pub misses: u64,
    /// Lookups that found an entry and rejected it, by reason ([`RejectKind::ALL`] order).
    pub rejects: [u64; RejectKind::ALL.len()],
    pub stores: u64,
    pub store_failures: u64,
    pub bytes_stored: u64,
    pub invalidations: u64,
    pub evictions: u64,
}

impl Stats {
    pub fn rejects(&self, kind: RejectKind) -> u64 {
        self.rejects[kind as usize]
    }

    pub fn rejects_total(&self) -> u64 {
        self.rejects.iter().sum()
    }

    pub fn lookups(&self) -> u64 {
        self.hits + self.misses + self.rejects_total()
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "hits {}, misses {}, rejects {}, stores {} ({} bytes), store failures {}, invalidations {}, evictions {}",
            self.hits,
            self.misses,
            self.rejects_total(),
            self.stores,
            self.bytes_stored,
            self.store_failures,
            self.invalidations,
            self.evictions
        )?;
        for kind in RejectKind::ALL {
            let n = self.rejects(kind);
            if n > 0 {
                write!(f, "\n  rejected {kind}: {n}")?;
            }
        }
        Ok(())
    }
}

/// Lock-free counters behind [`Stats`].
#[derive(Default)]
pub(crate) struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    rejects: [AtomicU64; RejectKind::ALL.len()],
    stores: AtomicU64,
    store_failures: AtomicU64,
    bytes_stored: AtomicU64,
    invalidations: AtomicU64,
    evictions: AtomicU64,
}

impl Counters {
    pub(crate) fn lookup<T>(&self, r: &Result<T, Miss>) {
        match r {
            Ok(_) => self.hits.fetch_add(1, Ordering::Relaxed),
            Err(Miss::NotFound) => self.misses.fetch_add(1, Ordering::Relaxed),
            Err(Miss::Rejected(reject)) => {
                self.rejects[reject.kind() as usize].fetch_add(1, Ordering::Relaxed)
            }
        };
    }

    pub(crate) fn store(&self, r: &Result<StoreInfo, StoreError>) {
        match r {
            Ok(info) => {
                self.stores.fetch_add(1, Ordering::Relaxed);
                self.bytes_stored
                    .fetch_add(info.entry_bytes, Ordering::Relaxed);
                self.evictions.fetch_add(info.evicted, Ordering::Relaxed);
            }
            Err(_) => {
                self.store_failures.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn invalidated(&self) {
        self.invalidations.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn evicted(&self, n: u64) {
        self.evictions.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> Stats {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Stats {
            hits: get(&self.hits),
            misses: get(&self.misses),
            rejects: std::array::from_fn(|i| get(&self.rejects[i])),
            stores: get(&self.stores),
            store_failures: get(&self.store_failures),
            bytes_stored: get(&self.bytes_stored),
            invalidations: get(&self.invalidations),
            evictions: get(&self.evictions),
        }
    }
}

pub(crate) enum Backing {
    Mapped(memmap2::Mmap),
    /// An entry inside a mapped pack: the mapping is shared by every hit from the pack.
    Shared(Arc<memmap2::Mmap>, Range<usize>),
    Heap(Arc<[u8]>),
    Owned(Vec<u8>),
    /// A small loose file read into the thread's read buffer, which goes back to the thread
    /// when this is dropped (see `file_cache::ScratchRead`).
    Scratch(crate::file_cache::ScratchRead),
}

impl Backing {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Shared(m, r) => &m[r.clone()],
            Backing::Heap(h) => h,
            Backing::Owned(v) => v,
            Backing::Scratch(s) => s.bytes(),
        }
    }
}

/// A validated cache entry: the persisted body, readable in place ([`Self::view`]) or
/// decoded ([`Self::to_script`]). Holds the mapping (or the shared buffer) alive.
pub struct CachedScript {
    pub(crate) data: Backing,
    pub(crate) body: Range<usize>,
    pub(crate) info: BodyInfo,
}

impl fmt::Debug for CachedScript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedScript")
            .field("body_len", &self.body.len())
            .field("info", &self.info)
            .finish()
    }
}

impl CachedScript {
    /// The persisted body (see [`crate::layout`]).
    pub fn body(&self) -> &[u8] {
        &self.data.bytes()[self.body.clone()]
    }

    /// Zero-copy access to the validated body.
    pub fn view(&self) -> ScriptView<'_> {
        ScriptView::trusted(self.body())
    }

    /// Decodes the owned [`Script`].
    pub fn to_script(&self) -> Script {
        self.view().to_script()
    }

    /// What validation counted.
    pub fn info(&self) -> BodyInfo {
        self.info
    }

    /// Whether the entry is read through a memory map.
    pub fn is_mapped(&self) -> bool {
        matches!(self.data, Backing::Mapped(_) | Backing::Shared(..))
    }

    /// Whether the entry was served from the system directory's pack (see
    /// [`crate::pack`]).
    pub fn is_packed(&self) -> bool {
        matches!(self.data, Backing::Shared(..))
    }
}
