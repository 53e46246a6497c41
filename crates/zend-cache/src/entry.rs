//! One cache entry as bytes: a fixed header, the script path, and the persisted body, as
//! `zend_file_cache.c` stores a `zend_file_cache_metainfo` before the script.
//!
//! ```text
//!  0  magic            8  "ZOPTCACH"
//!  8  checksum         8  xxh3-64 of every byte from offset 16 to the end of the entry
//! 16  format_version   4  FORMAT_VERSION
//! 20  header_len       4  HEADER_LEN (96)
//! 24  system_id       16  SystemId::digest()
//! 40  validation_kind  4  1 = mtime+size, 2 = content hash
//! 44  path_len         4
//! 48  validation      24  mtime_sec i64, mtime_nsec u64, size u64 | size u64, hash u128
//! 72  body_len         8
//! 80  stored_at        8  seconds since the epoch (informational)
//! 88  reserved         8  zero
//! 96  path bytes, then zero padding to a multiple of 16
//!     body (body_len bytes): see crate::layout
//! ```
//!
//! The entry ends exactly where the body does. The body starts at a multiple of 16 from the
//! start of the entry, so an mmap (page-aligned) keeps the layout's alignments.

use crate::layout::align_up;
use crate::load::{self, BodyError, BodyInfo};
use crate::persist::{persist_calc, persist_into, PersistError};
use crate::system::{CacheKey, Validation};
use std::fmt;
use xxhash_rust::xxh3::xxh3_64;
use zend_ir::Script;

pub const MAGIC: [u8; 8] = *b"ZOPTCACH";
/// 3: the body header holds `compiler_halt_offset`. 4: array literals keep
/// `nNextFreeElement`. 5: the diagnostics recorded while compiling (`Script::warnings`).
/// 6: the body header holds the main op_array's delayed early bindings as compiled
/// (`Script::early_bindings`), and constant-expression nodes other than values and lists
/// keep their line (before, every node was at line 0, and a class constant's error named
/// line 0 on a hit).
pub const FORMAT_VERSION: u32 = 6;
pub const HEADER_LEN: usize = 96;
/// Entries larger than this are refused (by the writer) and rejected (by the reader).
pub const MAX_ENTRY_LEN: u64 = 1 << 31;

/// Magic of a run-time image file: the same header as an entry (system id, path,
/// validation data, checksum over everything after it), whose body is the embedder's
/// script in PHP's run-time form with its pointers made relative (see
/// [`encode_image`]); a lookup checks the framing only, [`crate::file_cache::verify_entry`]
/// also the body's structure ([`crate::image_body`]).
pub const IMAGE_MAGIC: [u8; 8] = *b"ZOPTRTIM";
/// Format version of run-time image files (the header; the body carries its own).
pub const IMAGE_FORMAT_VERSION: u32 = 1;

const CHECKSUM: usize = 8;
const CHECKED_FROM: usize = 16;
const VERSION: usize = 16;
const HEADER_LEN_AT: usize = 20;
const SYSTEM_ID: usize = 24;
const VALIDATION_KIND: usize = 40;
const PATH_LEN: usize = 44;
const VALIDATION: usize = 48;
const BODY_LEN: usize = 72;
const STORED_AT: usize = 80;
const RESERVED: usize = 88;

/// Why an entry was not used. Every reason is a clean miss: nothing of a rejected entry is
/// used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Reject {
    #[error("I/O error: {0}")]
    Io(std::io::ErrorKind),
    #[error("truncated: {len} bytes where the header needs {expected}")]
    Truncated { len: u64, expected: u64 },
    #[error("not a zopt cache entry (bad magic)")]
    BadMagic,
    #[error("entry format version {0}, this zopt reads {FORMAT_VERSION}")]
    ForeignFormat(u32),
    #[error("inconsistent header ({0})")]
    BadHeader(&'static str),
    #[error("checksum mismatch (stored {stored:016x}, computed {computed:016x})")]
    Checksum { stored: u64, computed: u64 },
    #[error("made by another system (zopt/PHP version, opcode table or optimization level)")]
    ForeignSystem,
    #[error("entry belongs to another script path")]
    PathMismatch,
    #[error("stale: the source file changed since the entry was stored")]
    Stale,
    #[error("invalid body: {0}")]
    Body(BodyError),
    /// A run-time image file whose body [`crate::image_body::check`] refuses.
    #[error("invalid run-time image: {0}")]
    ImageBody(String),
}

/// [`Reject`] without its details, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RejectKind {
    Io,
    Truncated,
    BadMagic,
    ForeignFormat,
    BadHeader,
    Checksum,
    ForeignSystem,
    PathMismatch,
    Stale,
    Body,
}

impl RejectKind {
    pub const ALL: [RejectKind; 10] = [
        RejectKind::Io,
        RejectKind::Truncated,
        RejectKind::BadMagic,
        RejectKind::ForeignFormat,
        RejectKind::BadHeader,
        RejectKind::Checksum,
        RejectKind::ForeignSystem,
        RejectKind::PathMismatch,
        RejectKind::Stale,
        RejectKind::Body,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RejectKind::Io => "io",
            RejectKind::Truncated => "truncated",
            RejectKind::BadMagic => "bad_magic",
            RejectKind::ForeignFormat => "foreign_format",
            RejectKind::BadHeader => "bad_header",
            RejectKind::Checksum => "checksum",
            RejectKind::ForeignSystem => "foreign_system",
            RejectKind::PathMismatch => "path_mismatch",
            RejectKind::Stale => "stale",
            RejectKind::Body => "invalid_body",
        }
    }
}

impl fmt::Display for RejectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Reject {
    pub fn kind(&self) -> RejectKind {
        match self {
            Reject::Io(_) => RejectKind::Io,
            Reject::Truncated { .. } => RejectKind::Truncated,
            Reject::BadMagic => RejectKind::BadMagic,
            Reject::ForeignFormat(_) => RejectKind::ForeignFormat,
            Reject::BadHeader(_) => RejectKind::BadHeader,
            Reject::Checksum { .. } => RejectKind::Checksum,
            Reject::ForeignSystem => RejectKind::ForeignSystem,
            Reject::PathMismatch => RejectKind::PathMismatch,
            Reject::Stale => RejectKind::Stale,
            Reject::Body(_) | Reject::ImageBody(_) => RejectKind::Body,
        }
    }
}

/// The parsed, checksum-verified header of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryHeader<'a> {
    pub system_id: [u8; 16],
    pub path: &'a [u8],
    pub validation: Validation,
    pub stored_at: u64,
    pub body_offset: usize,
    pub body_len: usize,
}

fn r32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn r64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Parses and verifies an entry's framing: magic, format version, lengths (truncation and
/// trailing bytes), checksum, validation kind. The body is not looked at beyond the
/// checksum; see [`parse_and_validate`].
pub fn parse(bytes: &[u8]) -> Result<EntryHeader<'_>, Reject> {
    parse_as(bytes, &MAGIC, FORMAT_VERSION)
}

/// [`parse`] for a file with the given magic and header format version.
fn parse_as<'a>(
    bytes: &'a [u8],
    magic: &[u8; 8],
    format_version: u32,
) -> Result<EntryHeader<'a>, Reject> {
    let len = bytes.len() as u64;
    if bytes.len() < 8 || bytes[..8] != *magic {
        // A file cut inside the magic is a truncated entry, anything else is not ours.
        if bytes.len() < 8 && magic.starts_with(bytes) {
            return Err(Reject::Truncated {
                len,
                expected: HEADER_LEN as u64,
            });
        }
        return Err(Reject::BadMagic);
    }
    if bytes.len() < HEADER_LEN {
        if bytes.len() >= VERSION + 4 && r32(bytes, VERSION) != format_version {
            return Err(Reject::ForeignFormat(r32(bytes, VERSION)));
        }
        return Err(Reject::Truncated {
            len,
            expected: HEADER_LEN as u64,
        });
    }
    let version = r32(bytes, VERSION);
    if version != format_version {
        return Err(Reject::ForeignFormat(version));
    }
    if r32(bytes, HEADER_LEN_AT) as usize != HEADER_LEN {
        return Err(Reject::BadHeader("header length"));
    }
    let path_len = r32(bytes, PATH_LEN) as u64;
    let body_len = r64(bytes, BODY_LEN);
    if path_len > MAX_ENTRY_LEN || body_len > MAX_ENTRY_LEN {
        return Err(Reject::BadHeader("length out of range"));
    }
    let body_offset = align_up(HEADER_LEN + path_len as usize, 16);
    let expected = body_offset as u64 + body_len;
    if len < expected {
        return Err(Reject::Truncated { len, expected });
    }
    if len > expected {
        return Err(Reject::BadHeader("trailing bytes after the body"));
    }
    let stored = r64(bytes, CHECKSUM);
    let computed = xxh3_64(&bytes[CHECKED_FROM..]);
    if stored != computed {
        return Err(Reject::Checksum { stored, computed });
    }
    // Covered by the checksum from here on: a mismatch is a writer bug or a foreign writer.
    if r64(bytes, RESERVED) != 0
        || bytes[HEADER_LEN + path_len as usize..body_offset]
            .iter()
            .any(|&b| b != 0)
    {
        return Err(Reject::BadHeader("non-zero padding"));
    }
    let validation = match r32(bytes, VALIDATION_KIND) {
        1 => {
            let nsec = r64(bytes, VALIDATION + 8);
            if nsec >= 1_000_000_000 {
                return Err(Reject::BadHeader("mtime nanoseconds"));
            }
            Validation::MtimeSize {
                mtime_sec: r64(bytes, VALIDATION) as i64,
                mtime_nsec: nsec as u32,
                size: r64(bytes, VALIDATION + 16),
            }
        }
        2 => Validation::ContentHash {
            size: r64(bytes, VALIDATION),
            hash: r64(bytes, VALIDATION + 8) as u128 | (r64(bytes, VALIDATION + 16) as u128) << 64,
        },
        _ => return Err(Reject::BadHeader("validation kind")),
    };
    Ok(EntryHeader {
        system_id: bytes[SYSTEM_ID..SYSTEM_ID + 16].try_into().unwrap(),
        path: &bytes[HEADER_LEN..HEADER_LEN + path_len as usize],
        validation,
        stored_at: r64(bytes, STORED_AT),
        body_offset,
        body_len: body_len as usize,
    })
}

/// Everything a lookup checks, in order: framing and checksum ([`parse`]), the system id,
/// the path, the validation data, then the whole body ([`load::validate`]).
pub fn parse_and_validate<'a>(
    bytes: &'a [u8],
    system_id: &[u8; 16],
    key: &CacheKey,
) -> Result<(EntryHeader<'a>, BodyInfo), Reject> {
    let header = parse(bytes)?;
    if &header.system_id != system_id {
        return Err(Reject::ForeignSystem);
    }
    if header.path != key.path.as_slice() {
        return Err(Reject::PathMismatch);
    }
    if header.validation != key.validation {
        return Err(Reject::Stale);
    }
    let info = validate_body(bytes, &header)?;
    Ok((header, info))
}

/// Checks a run-time image file against a key as [`parse_and_validate`] checks an entry
/// (framing, checksum, system id, path, validation data) and returns its header; its body
/// is the embedder's to check.
pub fn parse_image<'a>(
    bytes: &'a [u8],
    system_id: &[u8; 16],
    key: &CacheKey,
) -> Result<EntryHeader<'a>, Reject> {
    let header = parse_as(bytes, &IMAGE_MAGIC, IMAGE_FORMAT_VERSION)?;
    if &header.system_id != system_id {
        return Err(Reject::ForeignSystem);
    }
    if header.path != key.path.as_slice() {
        return Err(Reject::PathMismatch);
    }
    if header.validation != key.validation {
        return Err(Reject::Stale);
    }
    Ok(header)
}

/// The header of a run-time image file, checked as [`parse`] checks an entry's.
pub fn parse_image_header(bytes: &[u8]) -> Result<EntryHeader<'_>, Reject> {
    parse_as(bytes, &IMAGE_MAGIC, IMAGE_FORMAT_VERSION)
}

/// Whether `bytes` start as a run-time image file (not an entry).
pub fn is_image(bytes: &[u8]) -> bool {
    bytes.starts_with(&IMAGE_MAGIC)
}

/// Frames the embedder's run-time image `body` for `key` as a run-time image file.
pub fn encode_image(
    body: &[u8],
    system_id: &[u8; 16],
    key: &CacheKey,
    stored_at: u64,
) -> Result<Vec<u8>, PersistError> {
    let (mut buf, body_offset) = frame(body.len(), system_id, key, stored_at)?;
    buf[..8].copy_from_slice(&IMAGE_MAGIC);
    buf[VERSION..VERSION + 4].copy_from_slice(&IMAGE_FORMAT_VERSION.to_le_bytes());
    buf[body_offset..].copy_from_slice(body);
    seal(&mut buf);
    Ok(buf)
}

/// Validates the body of an entry whose header [`parse`] accepted.
pub fn validate_body(bytes: &[u8], header: &EntryHeader<'_>) -> Result<BodyInfo, Reject> {
    load::validate(&bytes[header.body_offset..]).map_err(Reject::Body)
}

/// Encodes a whole entry for `script` into one buffer allocated once at its exact size
/// (header, path, padding and the body written in place by [`persist_into`]).
pub fn encode(
    script: &Script,
    system_id: &[u8; 16],
    key: &CacheKey,
    stored_at: u64,
) -> Result<Vec<u8>, PersistError> {
    let plan = persist_calc(script)?;
    let (mut buf, body_offset) = frame(plan.size(), system_id, key, stored_at)?;
    persist_into(script, &plan, &mut buf[body_offset..])?;
    seal(&mut buf);
    Ok(buf)
}

/// Frames an already persisted body as an entry (for tools and fuzzing; the body is not
/// checked here, the loader checks it).
pub fn encode_body(
    body: &[u8],
    system_id: &[u8; 16],
    key: &CacheKey,
    stored_at: u64,
) -> Result<Vec<u8>, PersistError> {
    let (mut buf, body_offset) = frame(body.len(), system_id, key, stored_at)?;
    buf[body_offset..].copy_from_slice(body);
    seal(&mut buf);
    Ok(buf)
}

/// The whole entry buffer, zeroed, with its header and path written; the body goes at the
/// returned offset.
fn frame(
    body_len: usize,
    system_id: &[u8; 16],
    key: &CacheKey,
    stored_at: u64,
) -> Result<(Vec<u8>, usize), PersistError> {
    let body_offset = align_up(HEADER_LEN + key.path.len(), 16);
    let total = body_offset as u64 + body_len as u64;
    if total > MAX_ENTRY_LEN {
        return Err(PersistError::TooLarge);
    }
    let mut buf = vec![0u8; total as usize];
    buf[..8].copy_from_slice(&MAGIC);
    buf[VERSION..VERSION + 4].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    buf[HEADER_LEN_AT..HEADER_LEN_AT + 4].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
    buf[SYSTEM_ID..SYSTEM_ID + 16].copy_from_slice(system_id);
    let (kind, a, b, c) = validation_words(&key.validation);
    buf[VALIDATION_KIND..VALIDATION_KIND + 4].copy_from_slice(&kind.to_le_bytes());
    buf[PATH_LEN..PATH_LEN + 4].copy_from_slice(&(key.path.len() as u32).to_le_bytes());
    buf[VALIDATION..VALIDATION + 8].copy_from_slice(&a.to_le_bytes());
    buf[VALIDATION + 8..VALIDATION + 16].copy_from_slice(&b.to_le_bytes());
    buf[VALIDATION + 16..VALIDATION + 24].copy_from_slice(&c.to_le_bytes());
    buf[BODY_LEN..BODY_LEN + 8].copy_from_slice(&(body_len as u64).to_le_bytes());
    buf[STORED_AT..STORED_AT + 8].copy_from_slice(&stored_at.to_le_bytes());
    buf[HEADER_LEN..HEADER_LEN + key.path.len()].copy_from_slice(&key.path);
    Ok((buf, body_offset))
}

/// How the header stores validation data: (kind, three words).
fn validation_words(v: &Validation) -> (u32, u64, u64, u64) {
    match *v {
        Validation::MtimeSize {
            mtime_sec,
            mtime_nsec,
            size,
        } => (1u32, mtime_sec as u64, mtime_nsec as u64, size),
        Validation::ContentHash { size, hash } => (2, size, hash as u64, (hash >> 64) as u64),
    }
}

/// A cheap look at an entry's header, before it is verified, against a key: the path and
/// the validation data. A pack entry for an older version of a script is then skipped
/// without checksumming it. `Err` is what the full check ([`parse_and_validate`]) would
/// give an intact entry (`PathMismatch`, `Stale`); `Ok` only means "check it fully".
pub fn prefilter(bytes: &[u8], key: &CacheKey) -> Result<(), Reject> {
    if bytes.len() < HEADER_LEN {
        return Ok(());
    }
    let path_len = r32(bytes, PATH_LEN) as usize;
    if path_len != key.path.len()
        || bytes.get(HEADER_LEN..HEADER_LEN + path_len) != Some(key.path.as_slice())
    {
        return Err(Reject::PathMismatch);
    }
    let (kind, a, b, c) = validation_words(&key.validation);
    if r32(bytes, VALIDATION_KIND) != kind
        || r64(bytes, VALIDATION) != a
        || r64(bytes, VALIDATION + 8) != b
        || r64(bytes, VALIDATION + 16) != c
    {
        return Err(Reject::Stale);
    }
    Ok(())
}

/// Writes the checksum of a complete entry.
fn seal(buf: &mut [u8]) {
    let checksum = xxh3_64(&buf[CHECKED_FROM..]);
    buf[CHECKSUM..CHECKSUM + 8].copy_from_slice(&checksum.to_le_bytes());
}
