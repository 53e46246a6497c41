//! The system id and the cache key, as `ZendAccelerator.c`'s `zend_system_id` and the
//! file cache's full-path + timestamp validation.

use std::io;
use std::path::Path;
use xxhash_rust::xxh3::{xxh3_128, xxh3_64, Xxh3};

/// What an entry was made by and for. Two entries are interchangeable only when their
/// system ids are equal; any difference (another zopt, another PHP, another opcode table,
/// another optimization level, another entry format) makes a stored entry a foreign one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SystemId {
    /// zopt's version (`CARGO_PKG_VERSION` of this crate by default).
    pub zopt_version: String,
    /// PHP's `PHP_VERSION` (e.g. `8.2.36`), as the PHP that records and loads reports it.
    pub php_version: String,
    /// [`opcode_table_hash`] of the opcode table the ops were recorded with.
    pub opcode_table_hash: u64,
    /// `opcache.optimization_level` the script was compiled and optimized at.
    pub optimization_level: u32,
    /// xxh3-64 of how the PHP process differs from the optimizer's tables
    /// (`zend_optimizer::environment::Process::describe`), when it does: a script optimized
    /// for one process folds constants, functions and ini values another may not have.
    pub environment: Option<u64>,
}

impl SystemId {
    /// The system id of this zopt build for `php_version` at `optimization_level`.
    pub fn new(php_version: &str, optimization_level: u32) -> SystemId {
        SystemId {
            zopt_version: env!("CARGO_PKG_VERSION").to_string(),
            php_version: php_version.to_string(),
            opcode_table_hash: opcode_table_hash(),
            optimization_level,
            environment: None,
        }
    }

    /// This id for a process that differs from the optimizer's tables as `differences`
    /// says (nothing when it is empty).
    pub fn with_environment(mut self, differences: &str) -> SystemId {
        self.environment = (!differences.is_empty()).then(|| xxh3_64(differences.as_bytes()));
        self
    }

    /// Human-readable form, stored beside the entries (`SYSTEM` file) for `zopt cache stat`.
    pub fn describe(&self) -> String {
        let mut d = format!(
            "zopt {}; php {}; opcodes {:016x}; optimization_level {:#x}; entry format {}",
            self.zopt_version,
            self.php_version,
            self.opcode_table_hash,
            self.optimization_level,
            crate::entry::FORMAT_VERSION
        );
        if let Some(environment) = self.environment {
            d.push_str(&format!("; environment {environment:016x}"));
        }
        d
    }

    /// The 16-byte digest stored in every entry header (xxh3-128 of [`Self::describe`]).
    pub fn digest(&self) -> [u8; 16] {
        xxh3_128(self.describe().as_bytes()).to_le_bytes()
    }

    /// The digest in hex: the name of the directory holding this system's entries.
    pub fn hex(&self) -> String {
        hex(&self.digest())
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hash of zend_ir's opcode table: every opcode number with its name and VM flags. It
/// changes when the table is regenerated from another PHP build with different opcodes.
pub fn opcode_table_hash() -> u64 {
    let mut h = Xxh3::new();
    for n in 0..=255u8 {
        let op = zend_ir::Opcode(n);
        if let Some(name) = op.name() {
            h.update(&[n]);
            h.update(name.as_bytes());
            h.update(&op.flags().to_le_bytes());
        }
    }
    h.digest()
}

/// How a cached entry is checked against its source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ValidationMode {
    /// Modification time (ns) and size, from one `stat`: OPcache's `validate_timestamps`.
    #[default]
    MtimeSize,
    /// Size and xxh3-128 of the content: survives `touch` and checkouts, costs a read.
    ContentHash,
}

/// The validation data of one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Validation {
    MtimeSize {
        mtime_sec: i64,
        mtime_nsec: u32,
        size: u64,
    },
    ContentHash {
        size: u64,
        hash: u128,
    },
}

impl Validation {
    /// Stats (or reads) `path`; anything but a regular file is an error.
    pub fn of_file(path: &Path, mode: ValidationMode) -> io::Result<Validation> {
        use std::os::unix::fs::MetadataExt;
        match mode {
            ValidationMode::MtimeSize => {
                let m = std::fs::metadata(path)?;
                if !m.is_file() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{} is not a regular file", path.display()),
                    ));
                }
                Ok(Validation::MtimeSize {
                    mtime_sec: m.mtime(),
                    mtime_nsec: m.mtime_nsec() as u32,
                    size: m.size(),
                })
            }
            ValidationMode::ContentHash => Ok(Validation::of_content(&std::fs::read(path)?)),
        }
    }

    /// Validation data of content already in memory.
    pub fn of_content(content: &[u8]) -> Validation {
        Validation::ContentHash {
            size: content.len() as u64,
            hash: xxh3_128(content),
        }
    }

    pub fn mode(&self) -> ValidationMode {
        match self {
            Validation::MtimeSize { .. } => ValidationMode::MtimeSize,
            Validation::ContentHash { .. } => ValidationMode::ContentHash,
        }
    }
}

/// What an entry is looked up by: the script's path as PHP resolved it (`opened_path`,
/// i.e. the real path) and the validation data of that file now.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub path: Vec<u8>,
    pub validation: Validation,
}

impl CacheKey {
    pub fn new(path: impl Into<Vec<u8>>, validation: Validation) -> CacheKey {
        CacheKey {
            path: path.into(),
            validation,
        }
    }

    /// The key of the file at `path` (taken as given: pass the real path), validated by
    /// `mode`.
    pub fn for_file(path: &Path, mode: ValidationMode) -> io::Result<CacheKey> {
        use std::os::unix::ffi::OsStrExt;
        Ok(CacheKey {
            path: path.as_os_str().as_bytes().to_vec(),
            validation: Validation::of_file(path, mode)?,
        })
    }

    /// The hash that names the entry file.
    pub fn path_hash(&self) -> u64 {
        path_hash(&self.path)
    }
}

/// The hash of a script path (xxh3-64) that names its entry file and orders a pack's index.
pub fn path_hash(path: &[u8]) -> u64 {
    xxh3_64(path)
}
