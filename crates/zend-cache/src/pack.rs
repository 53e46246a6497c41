//! The pack: many cache entries in one immutable, mapped file, beside the loose entry files
//! (as git keeps packfiles beside loose objects). A lookup in the pack is a binary search in
//! a mapped index, with no `open`/`read`/`close` per script.
//!
//! # Layout (little-endian)
//!
//! ```text
//!  0  magic            8  "ZCPACK01"
//!  8  checksum         8  xxh3-64 of bytes 16 .. index_end (version, count, system id,
//!                         reserved and the whole index)
//! 16  format_version   4  entry::FORMAT_VERSION
//! 20  count            4  number of entries
//! 24  system_id       16  SystemId::digest() (as in every entry, and the directory's name)
//! 40  reserved         8  zero
//! 48  index: count records of 24 bytes, sorted by (path_hash, offset):
//!       path_hash u64  xxh3-64 of the script path (as entry_file_name uses)
//!       offset    u64  where the entry starts in the file, a multiple of 16
//!       len       u64  its length
//!     index_end = 48 + 24 * count
//!     zero padding to a multiple of 16
//!     the entries, each exactly the bytes of a loose entry file (see crate::entry), laid out
//!     in index order: the first at align16(index_end), each next one at align16(end of the
//!     previous one), the last one ending exactly at the end of the file
//! ```
//!
//! An entry's body starts at a multiple of 16 within the entry, and the entry at a multiple
//! of 16 within the file, whose mapping is page-aligned: the body keeps the alignments the
//! layout needs (see crate::layout).
//!
//! # Validation
//!
//! [`PackIndex::parse`] checks the header and the whole index when a pack is opened: magic,
//! format version, system id, checksum, reserved bytes, the index within the file (no
//! overflow), every offset aligned and every record exactly where the canonical layout puts
//! it (no gap, no overlap, no trailing bytes), the order, and each length within
//! `HEADER_LEN ..= MAX_ENTRY_LEN`. A pack failing any of it is ignored as a whole. The
//! entries themselves are checked as loose entries are, completely, by each lookup that
//! uses one (`entry::parse_and_validate`); padding bytes between entries are never read.

use crate::entry::{FORMAT_VERSION, HEADER_LEN, MAX_ENTRY_LEN};
use crate::layout::align_up;
use std::fmt;
use std::ops::Range;
use xxhash_rust::xxh3::xxh3_64;

pub const PACK_MAGIC: [u8; 8] = *b"ZCPACK01";
/// Name of the pack file in a system id directory.
pub const PACK_FILE: &str = "pack.zcp";
pub const PACK_HEADER_LEN: usize = 48;
pub const RECORD_LEN: usize = 24;

const CHECKSUM: usize = 8;
const CHECKED_FROM: usize = 16;
const VERSION: usize = 16;
const COUNT: usize = 20;
const SYSTEM_ID: usize = 24;
const RESERVED: usize = 40;

/// Why a pack is ignored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackError {
    #[error("I/O error: {0}")]
    Io(std::io::ErrorKind),
    #[error("truncated: {len} bytes where the header and index need {expected}")]
    Truncated { len: u64, expected: u64 },
    #[error("not a zopt pack (bad magic)")]
    BadMagic,
    #[error("pack format version {0}, this zopt reads {FORMAT_VERSION}")]
    ForeignFormat(u32),
    #[error("made by another system (zopt/PHP version, opcode table or optimization level)")]
    ForeignSystem,
    #[error("index checksum mismatch (stored {stored:016x}, computed {computed:016x})")]
    Checksum { stored: u64, computed: u64 },
    #[error("bad index: {0}")]
    BadIndex(&'static str),
}

/// One index record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub path_hash: u64,
    pub offset: u64,
    pub len: u64,
}

impl Record {
    /// The entry's bytes within the pack (checked in range by [`PackIndex::parse`]).
    pub fn range(&self) -> Range<usize> {
        self.offset as usize..(self.offset + self.len) as usize
    }
}

/// The validated header and index of a pack (the index stays in the pack's bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct PackIndex {
    count: usize,
    data_len: u64,
}

impl fmt::Debug for PackIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PackIndex")
            .field("count", &self.count)
            .field("data_len", &self.data_len)
            .finish()
    }
}

fn r32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn r64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

impl PackIndex {
    /// Checks the header and the whole index of `bytes` (a whole pack file) for `system`
    /// (see the module documentation).
    pub fn parse(bytes: &[u8], system: &[u8; 16]) -> Result<PackIndex, PackError> {
        let len = bytes.len() as u64;
        if bytes.len() < 8 || bytes[..8] != PACK_MAGIC {
            if bytes.len() < 8 && PACK_MAGIC.starts_with(bytes) {
                return Err(PackError::Truncated {
                    len,
                    expected: PACK_HEADER_LEN as u64,
                });
            }
            return Err(PackError::BadMagic);
        }
        if bytes.len() >= VERSION + 4 && r32(bytes, VERSION) != FORMAT_VERSION {
            return Err(PackError::ForeignFormat(r32(bytes, VERSION)));
        }
        if bytes.len() < PACK_HEADER_LEN {
            return Err(PackError::Truncated {
                len,
                expected: PACK_HEADER_LEN as u64,
            });
        }
        let count = r32(bytes, COUNT) as u64;
        // At most 2^32 records of 24 bytes: no overflow in u64.
        let index_end = PACK_HEADER_LEN as u64 + count * RECORD_LEN as u64;
        if len < index_end {
            return Err(PackError::Truncated {
                len,
                expected: index_end,
            });
        }
        let index_end = index_end as usize;
        let stored = r64(bytes, CHECKSUM);
        let computed = xxh3_64(&bytes[CHECKED_FROM..index_end]);
        if stored != computed {
            return Err(PackError::Checksum { stored, computed });
        }
        // Covered by the checksum from here on.
        if bytes[SYSTEM_ID..SYSTEM_ID + 16] != system[..] {
            return Err(PackError::ForeignSystem);
        }
        if r64(bytes, RESERVED) != 0 {
            return Err(PackError::BadIndex("non-zero reserved bytes"));
        }
        let mut expected_offset = align_up(index_end, 16) as u64;
        if bytes[index_end..(expected_offset as usize).min(bytes.len())]
            .iter()
            .any(|&b| b != 0)
        {
            return Err(PackError::BadIndex("non-zero padding after the index"));
        }
        let mut prev: Option<(u64, u64)> = None;
        for i in 0..count as usize {
            let at = PACK_HEADER_LEN + i * RECORD_LEN;
            let (hash, offset, elen) = (r64(bytes, at), r64(bytes, at + 8), r64(bytes, at + 16));
            if offset % 16 != 0 {
                return Err(PackError::BadIndex("misaligned entry"));
            }
            if offset != expected_offset {
                return Err(PackError::BadIndex("entry not where the layout puts it"));
            }
            if elen < HEADER_LEN as u64 || elen > MAX_ENTRY_LEN {
                return Err(PackError::BadIndex("entry length out of range"));
            }
            // offset <= len (checked below for the previous end) and elen <= 2^31: no
            // overflow.
            let end = offset + elen;
            if end > len {
                return Err(PackError::BadIndex("entry past the end of the file"));
            }
            if prev.is_some_and(|p| p > (hash, offset)) {
                return Err(PackError::BadIndex("index not sorted"));
            }
            prev = Some((hash, offset));
            expected_offset = align_up(end as usize, 16) as u64;
            if i + 1 == count as usize && end != len {
                return Err(PackError::BadIndex("trailing bytes after the last entry"));
            }
        }
        if count == 0 && len != expected_offset {
            return Err(PackError::BadIndex("trailing bytes after the index"));
        }
        Ok(PackIndex {
            count: count as usize,
            data_len: len,
        })
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Record `i` of the validated pack `bytes`.
    pub fn record(&self, bytes: &[u8], i: usize) -> Record {
        let at = PACK_HEADER_LEN + i * RECORD_LEN;
        Record {
            path_hash: r64(bytes, at),
            offset: r64(bytes, at + 8),
            len: r64(bytes, at + 16),
        }
    }

    /// The records of every entry for a path hash (usually one), in index order.
    pub fn candidates<'a>(
        &'a self,
        bytes: &'a [u8],
        path_hash: u64,
    ) -> impl Iterator<Item = Record> + 'a {
        debug_assert_eq!(bytes.len() as u64, self.data_len);
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if r64(bytes, PACK_HEADER_LEN + mid * RECORD_LEN) < path_hash {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo..self.count)
            .map(move |i| self.record(bytes, i))
            .take_while(move |r| r.path_hash == path_hash)
    }

    /// Every record, in index order.
    pub fn records<'a>(&'a self, bytes: &'a [u8]) -> impl Iterator<Item = Record> + 'a {
        (0..self.count).map(move |i| self.record(bytes, i))
    }
}

/// The bytes of a pack's header and index for entries of the given lengths, which must be
/// sorted by path hash (the caller writes the entries after it, each at the offset its
/// record gives, zero-padded; see [`encode`]).
pub fn header_and_index(system: &[u8; 16], entries: &[(u64, u64)]) -> Vec<u8> {
    let index_end = PACK_HEADER_LEN + entries.len() * RECORD_LEN;
    let mut buf = vec![0u8; align_up(index_end, 16)];
    buf[..8].copy_from_slice(&PACK_MAGIC);
    buf[VERSION..VERSION + 4].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    buf[COUNT..COUNT + 4].copy_from_slice(&(entries.len() as u32).to_le_bytes());
    buf[SYSTEM_ID..SYSTEM_ID + 16].copy_from_slice(system);
    let mut offset = buf.len() as u64;
    for (i, &(hash, len)) in entries.iter().enumerate() {
        let at = PACK_HEADER_LEN + i * RECORD_LEN;
        buf[at..at + 8].copy_from_slice(&hash.to_le_bytes());
        buf[at + 8..at + 16].copy_from_slice(&offset.to_le_bytes());
        buf[at + 16..at + 24].copy_from_slice(&len.to_le_bytes());
        offset = align_up((offset + len) as usize, 16) as u64;
    }
    let checksum = xxh3_64(&buf[CHECKED_FROM..index_end]);
    buf[CHECKSUM..CHECKSUM + 8].copy_from_slice(&checksum.to_le_bytes());
    buf
}

/// Writes a whole pack of `entries` (whole entry bytes, each with the xxh3-64 of its script
/// path) to `out`, sorting them by path hash. Returns the bytes written.
pub fn write_pack(
    out: &mut impl std::io::Write,
    system: &[u8; 16],
    entries: &mut [(u64, &[u8])],
) -> std::io::Result<u64> {
    entries.sort_by_key(|&(hash, _)| hash);
    let lens: Vec<(u64, u64)> = entries.iter().map(|&(h, e)| (h, e.len() as u64)).collect();
    let head = header_and_index(system, &lens);
    out.write_all(&head)?;
    let mut written = head.len() as u64;
    for (i, (_, e)) in entries.iter().enumerate() {
        out.write_all(e)?;
        written += e.len() as u64;
        if i + 1 < entries.len() {
            let pad = align_up(written as usize, 16) as u64 - written;
            out.write_all(&[0u8; 16][..pad as usize])?;
            written += pad;
        }
    }
    Ok(written)
}

/// A whole pack in memory (for tests and tools).
pub fn encode(system: &[u8; 16], entries: &mut [(u64, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    write_pack(&mut out, system, entries).expect("writing to memory");
    out
}

/// The hash a pack indexes a script path by: the one that names its loose entry file.
pub use crate::system::path_hash;
