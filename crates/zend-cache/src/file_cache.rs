//! The file cache: one entry file per script under a cache directory, as
//! `zend_file_cache.c` keeps one `.bin` per script under `opcache.file_cache`.
//!
//! # Directory layout
//!
//! ```text
//! DIR/<system id hex>/SYSTEM                  what the system id stands for (text)
//! DIR/<system id hex>/<xxh3-64(path) hex>.zce one entry (see crate::entry)
//! DIR/<system id hex>/.tmp.*                  entries being written
//! ```
//!
//! # Concurrency
//!
//! An entry file is never modified in place. A store writes the whole entry to a new
//! temporary file in the same directory, `fsync`s it (unless [`FileCacheConfig::sync`] is
//! off) and renames it over the entry's name; eviction and invalidation unlink. A reader
//! therefore opens either the complete old entry or the complete new one, in any number of
//! processes, and a mapping it holds stays valid and unchanged after the file is replaced
//! or removed. (Truncating or rewriting entry files in place from outside the cache is not
//! supported: like any mmap reader, a lookup would then fault.)
//!
//! # Size limit and eviction
//!
//! With [`FileCacheConfig::max_bytes`], the total size of all entry files under `DIR` (all
//! system ids) is kept near the limit: each store adds its size to a running total (taken
//! from a directory scan the first time), and when the total passes the limit the directory
//! is scanned again and entries are deleted oldest first by modification time (the time they
//! were stored, as entries are never modified) until the total is at most 90% of the limit.
//! Entries other processes stored since the last scan are seen at the next scan, so the
//! directory can exceed the limit by what they wrote in between. Leftover temporary files
//! older than ten minutes (from a writer that died) are removed by the same scan.

use crate::backend::{
    Backing, CacheBackend, CachedScript, Counters, Miss, Stats, StoreError, StoreInfo,
};
use crate::entry::{self, EntryHeader, Reject};
use crate::load::BodyInfo;
use crate::system::{hex, CacheKey, SystemId, Validation};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Extension of entry files.
pub const ENTRY_EXT: &str = "zce";
/// Prefix of temporary files.
pub const TMP_PREFIX: &str = ".tmp.";
/// Name of the file describing a system id directory.
pub const SYSTEM_FILE: &str = "SYSTEM";

/// How lookups read entry files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadMode {
    /// Map every entry (memmap2): no copy; pages come from the page cache on first touch.
    Mmap,
    /// Read every entry into a heap buffer.
    Read,
    /// Read entries up to [`SMALL_ENTRY`] bytes (one `read()`, no `fstat`), map larger
    /// ones. Mapping costs a page fault per 4 KiB page touched and an unmap; reading costs a
    /// copy: for the typical entry (a few to tens of KiB) the read is cheaper (see the
    /// zend-cache bench, `load_view/read` vs `load_view/mmap`), for large entries the mapping.
    #[default]
    Auto,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCacheConfig {
    /// Size limit of the whole cache directory in bytes (`None`: unlimited).
    pub max_bytes: Option<u64>,
    pub read_mode: ReadMode,
    /// `fsync` each entry before renaming it into place (durability across a crash; atomicity
    /// for readers does not depend on it).
    pub sync: bool,
}

impl Default for FileCacheConfig {
    fn default() -> Self {
        FileCacheConfig {
            max_bytes: None,
            read_mode: ReadMode::default(),
            sync: true,
        }
    }
}

/// A file cache for one system id under a cache directory.
pub struct FileCache {
    root: PathBuf,
    dir: PathBuf,
    system: SystemId,
    digest: [u8; 16],
    config: FileCacheConfig,
    counters: Counters,
    /// Bytes under `root` as of the last scan plus what this process stored since.
    known_total: Mutex<Option<u64>>,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl FileCache {
    /// Opens (creating if needed) the cache under `root` for `system`.
    pub fn open(
        root: impl Into<PathBuf>,
        system: SystemId,
        config: FileCacheConfig,
    ) -> io::Result<FileCache> {
        let root = root.into();
        let digest = system.digest();
        let dir = root.join(hex(&digest));
        fs::create_dir_all(&dir)?;
        let system_file = dir.join(SYSTEM_FILE);
        if !system_file.exists() {
            write_atomic(
                &dir,
                &system_file,
                format!("{}\n", system.describe()).as_bytes(),
                false,
            )?;
        }
        Ok(FileCache {
            root,
            dir,
            system,
            digest,
            config,
            counters: Counters::default(),
            known_total: Mutex::new(None),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of this system id's entries.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn system(&self) -> &SystemId {
        &self.system
    }

    pub fn config(&self) -> &FileCacheConfig {
        &self.config
    }

    /// The entry file for a script path.
    pub fn entry_path(&self, path: &[u8]) -> PathBuf {
        self.dir.join(entry_file_name(path))
    }

    /// Reads an entry file as the configured read mode does.
    fn read(&self, file: &Path) -> Result<Backing, Miss> {
        let f = match File::open(file) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Miss::NotFound),
            Err(e) => return Err(Miss::Rejected(Reject::Io(e.kind()))),
        };
        read_backing(f, self.config.read_mode).map_err(|e| Miss::Rejected(Reject::Io(e.kind())))
    }

    /// Brings the directory under the size limit now (see the module documentation).
    /// Returns the number of entries removed.
    pub fn enforce_limit(&self) -> io::Result<u64> {
        let Some(max) = self.config.max_bytes else {
            return Ok(0);
        };
        let mut known = self.known_total.lock().unwrap_or_else(|e| e.into_inner());
        let (removed, remaining) = evict(&self.root, max, max / 10 * 9)?;
        *known = Some(remaining);
        self.counters.evicted(removed);
        Ok(removed)
    }

    fn account(&self, added: u64) -> io::Result<u64> {
        let Some(max) = self.config.max_bytes else {
            return Ok(0);
        };
        let mut known = self.known_total.lock().unwrap_or_else(|e| e.into_inner());
        let total = match *known {
            Some(t) => t + added,
            None => scan(&self.root)?.entries.iter().map(|e| e.len).sum(),
        };
        if total <= max {
            *known = Some(total);
            return Ok(0);
        }
        let (removed, remaining) = evict(&self.root, max, max / 10 * 9)?;
        *known = Some(remaining);
        Ok(removed)
    }

    fn store_inner(
        &self,
        key: &CacheKey,
        script: &zend_ir::Script,
    ) -> Result<StoreInfo, StoreError> {
        let stored_at = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let bytes = entry::encode(script, &self.digest, key, stored_at)?;
        let target = self.entry_path(&key.path);
        match write_atomic(&self.dir, &target, &bytes, self.config.sync) {
            // The directory was removed under us (`zopt cache clear`): make it again.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(&self.dir)?;
                let system_file = self.dir.join(SYSTEM_FILE);
                let text = format!("{}\n", self.system.describe());
                write_atomic(&self.dir, &system_file, text.as_bytes(), false)?;
                *self.known_total.lock().unwrap_or_else(|e| e.into_inner()) = None;
                write_atomic(&self.dir, &target, &bytes, self.config.sync)?;
            }
            r => r?,
        }
        let body_bytes = u64::from_le_bytes(bytes[72..80].try_into().unwrap());
        let evicted = self.account(bytes.len() as u64)?;
        Ok(StoreInfo {
            entry_bytes: bytes.len() as u64,
            body_bytes,
            evicted,
        })
    }
}

impl CacheBackend for FileCache {
    fn lookup(&self, key: &CacheKey) -> Result<CachedScript, Miss> {
        let r = (|| {
            let data = self.read(&self.entry_path(&key.path))?;
            let bytes = data.bytes();
            let (header, info) =
                entry::parse_and_validate(bytes, &self.digest, key).map_err(Miss::Rejected)?;
            let body = header.body_offset..bytes.len();
            Ok(CachedScript { data, body, info })
        })();
        self.counters.lookup(&r);
        r
    }

    fn store(&self, key: &CacheKey, script: &zend_ir::Script) -> Result<StoreInfo, StoreError> {
        let r = self.store_inner(key, script);
        self.counters.store(&r);
        r
    }

    fn invalidate(&self, path: &[u8]) -> Result<bool, StoreError> {
        match fs::remove_file(self.entry_path(path)) {
            Ok(()) => {
                self.counters.invalidated();
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    fn stats(&self) -> Stats {
        self.counters.snapshot()
    }
}

/// The entry file name of a script path.
pub fn entry_file_name(path: &[u8]) -> String {
    format!("{:016x}.{ENTRY_EXT}", xxhash_rust::xxh3::xxh3_64(path))
}

/// Entries up to this size are read with one `read()` into a per-thread buffer;
/// [`ReadMode::Auto`] maps larger ones.
pub const SMALL_ENTRY: usize = 256 << 10;

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn read_backing(mut f: File, mode: ReadMode) -> io::Result<Backing> {
    if mode != ReadMode::Mmap {
        // One read() into a per-thread buffer, then one copy into a buffer of the entry's
        // exact size: no fstat, no zeroing. A read of a regular file returns less than asked
        // only at its end; were it ever short otherwise, the entry would read as truncated
        // (a miss), never as something else.
        let small = SCRATCH.with(|scratch| -> io::Result<Option<Vec<u8>>> {
            let mut scratch = scratch.borrow_mut();
            if scratch.len() < SMALL_ENTRY + 1 {
                scratch.resize(SMALL_ENTRY + 1, 0);
            }
            let n = loop {
                match f.read(&mut scratch[..]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    r => break r?,
                }
            };
            Ok((n <= SMALL_ENTRY).then(|| scratch[..n].to_vec()))
        })?;
        if let Some(bytes) = small {
            return Ok(Backing::Owned(bytes));
        }
    }
    // A large entry (or mmap requested): its length, then a mapping or one whole read.
    let len = f.metadata()?.len();
    if len > entry::MAX_ENTRY_LEN {
        // Oversized: only the header is read; it then reports the entry.
        let mut buf = vec![0u8; entry::HEADER_LEN];
        let n = f.read_at(&mut buf, 0)?;
        buf.truncate(n);
        return Ok(Backing::Owned(buf));
    }
    if len == 0 || mode == ReadMode::Read {
        // An entry file never changes size while open (entries are replaced by rename,
        // never rewritten), so its length is known.
        let mut buf = vec![0u8; len as usize];
        f.read_exact_at(&mut buf, 0)?;
        return Ok(Backing::Owned(buf));
    }
    // SAFETY: entry files are never written in place (see the module documentation: they
    // are created under a temporary name, renamed into place, and only ever unlinked), so
    // the mapped bytes cannot change while the mapping lives. The mapping is only ever read
    // as a byte slice, which every reader validates before use.
    let map = unsafe { memmap2::Mmap::map(&f)? };
    Ok(Backing::Mapped(map))
}

/// Writes `bytes` to `target` atomically: a new temporary file in `dir` (which must be
/// `target`'s directory), optionally `fsync`ed, renamed over `target`.
pub fn write_atomic(dir: &Path, target: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
    let tmp = dir.join(format!(
        "{TMP_PREFIX}{}.{}.{}",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed),
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    let result = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        if sync {
            f.sync_data()?;
        }
        drop(f);
        fs::rename(&tmp, target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

// ---------------------------------------------------------------------------------------
// Maintenance: scanning, verifying, evicting, clearing (used by `zopt cache`)
// ---------------------------------------------------------------------------------------

/// One entry file found by [`scan`].
#[derive(Debug, Clone)]
pub struct EntryFile {
    pub path: PathBuf,
    /// Name of the system id directory it sits in.
    pub system_dir: String,
    pub len: u64,
    pub mtime: SystemTime,
}

/// A system id directory.
#[derive(Debug, Clone)]
pub struct SystemDir {
    pub name: String,
    /// Contents of its `SYSTEM` file.
    pub description: Option<String>,
    pub entries: u64,
    pub bytes: u64,
}

/// What a cache directory holds.
#[derive(Debug, Default)]
pub struct Scan {
    pub systems: Vec<SystemDir>,
    pub entries: Vec<EntryFile>,
    pub temp_files: Vec<EntryFile>,
}

fn is_system_dir_name(name: &str) -> bool {
    name.len() == 32
        && name
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Lists the entries under a cache directory (only what the cache itself creates: system id
/// directories, entry files and temporary files; anything else is ignored). A missing
/// directory is an empty cache.
pub fn scan(root: &Path) -> io::Result<Scan> {
    let mut out = Scan::default();
    let dirs = match fs::read_dir(root) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    let mut dir_names: Vec<String> = dirs
        .filter_map(|d| d.ok())
        .filter(|d| d.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|d| d.file_name().into_string().ok())
        .filter(|n| is_system_dir_name(n))
        .collect();
    dir_names.sort();
    for name in dir_names {
        let dir = root.join(&name);
        let mut sys = SystemDir {
            description: fs::read_to_string(dir.join(SYSTEM_FILE))
                .ok()
                .map(|s| s.trim().to_string()),
            name: name.clone(),
            entries: 0,
            bytes: 0,
        };
        let Ok(files) = fs::read_dir(&dir) else {
            continue;
        };
        let mut found = Vec::new();
        for f in files.filter_map(|f| f.ok()) {
            let Ok(fname) = f.file_name().into_string() else {
                continue;
            };
            let is_entry = fname
                .strip_suffix(&format!(".{ENTRY_EXT}"))
                .is_some_and(|stem| stem.len() == 16);
            let is_tmp = fname.starts_with(TMP_PREFIX);
            if !is_entry && !is_tmp {
                continue;
            }
            // A file another process removed meanwhile is simply not listed.
            let Ok(meta) = f.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let e = EntryFile {
                path: f.path(),
                system_dir: name.clone(),
                len: meta.len(),
                mtime: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            };
            if is_entry {
                sys.entries += 1;
                sys.bytes += e.len;
                found.push(e);
            } else {
                out.temp_files.push(e);
            }
        }
        found.sort_by(|a, b| a.path.cmp(&b.path));
        out.entries.extend(found);
        out.systems.push(sys);
    }
    Ok(out)
}

/// What [`verify_entry`] found in a good entry.
#[derive(Debug, Clone)]
pub struct EntrySummary {
    pub script_path: Vec<u8>,
    pub validation: Validation,
    pub stored_at: u64,
    pub body_len: usize,
    pub info: BodyInfo,
    /// With `check_sources`: whether the source file still matches (`None`: not checked).
    pub fresh: Option<bool>,
}

/// Checks one entry file completely: framing, checksum, that it sits in the directory of
/// its system id under the name of its path, and its whole body. With `check_sources`, also
/// whether its source file still has the validation data it was stored with.
pub fn verify_entry(file: &EntryFile, check_sources: bool) -> Result<EntrySummary, Reject> {
    let f = File::open(&file.path).map_err(|e| Reject::Io(e.kind()))?;
    let data = read_backing(f, ReadMode::Read).map_err(|e| Reject::Io(e.kind()))?;
    let bytes = data.bytes();
    let header: EntryHeader<'_> = entry::parse(bytes)?;
    if hex(&header.system_id) != file.system_dir {
        return Err(Reject::ForeignSystem);
    }
    if file.path.file_name().and_then(|n| n.to_str()) != Some(entry_file_name(header.path).as_str())
    {
        return Err(Reject::PathMismatch);
    }
    let info = entry::validate_body(bytes, &header)?;
    let fresh = check_sources.then(|| {
        use std::os::unix::ffi::OsStrExt;
        let source = Path::new(std::ffi::OsStr::from_bytes(header.path));
        Validation::of_file(source, header.validation.mode()).is_ok_and(|v| v == header.validation)
    });
    Ok(EntrySummary {
        script_path: header.path.to_vec(),
        validation: header.validation,
        stored_at: header.stored_at,
        body_len: header.body_len,
        info,
        fresh,
    })
}

/// Deletes entries, oldest modification time first, until the entries under `root` take at
/// most `target` bytes, if they take more than `max`. Also removes temporary files older
/// than ten minutes. Returns (entries removed, bytes remaining).
pub fn evict(root: &Path, max: u64, target: u64) -> io::Result<(u64, u64)> {
    let scan = scan(root)?;
    let now = SystemTime::now();
    for t in &scan.temp_files {
        if now.duration_since(t.mtime).unwrap_or_default() > Duration::from_secs(600) {
            let _ = fs::remove_file(&t.path);
        }
    }
    let mut total: u64 = scan.entries.iter().map(|e| e.len).sum();
    if total <= max {
        return Ok((0, total));
    }
    let mut entries = scan.entries;
    entries.sort_by(|a, b| a.mtime.cmp(&b.mtime).then_with(|| a.path.cmp(&b.path)));
    let mut removed = 0;
    for e in entries {
        if total <= target {
            break;
        }
        match fs::remove_file(&e.path) {
            Ok(()) => removed += 1,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
        // Gone either way (removed here or by another process).
        total -= e.len;
    }
    Ok((removed, total))
}

/// Removes every entry, temporary file, `SYSTEM` file and (then empty) system id directory
/// under `root`. Returns (entries removed, bytes freed).
pub fn clear(root: &Path) -> io::Result<(u64, u64)> {
    let scan = scan(root)?;
    let mut removed = 0;
    let mut bytes = 0;
    for e in scan.entries.iter().chain(&scan.temp_files) {
        match fs::remove_file(&e.path) {
            Ok(()) => {
                if e.path.extension().is_some_and(|x| x == ENTRY_EXT) {
                    removed += 1;
                    bytes += e.len;
                }
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
    }
    for s in &scan.systems {
        let dir = root.join(&s.name);
        let _ = fs::remove_file(dir.join(SYSTEM_FILE));
        let _ = fs::remove_dir(&dir);
    }
    Ok((removed, bytes))
}
