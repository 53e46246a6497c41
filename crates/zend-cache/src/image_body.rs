//! The body of a run-time image file: the layout zopt-php's `file_image` writes (a script
//! in PHP's run-time form with its pointers made relative, see its module documentation),
//! and the checks of it that need no PHP process. `file_image::load` runs them before it
//! relocates an image, and adds what only the process can check: that the PHP build (and
//! zopt build) fingerprint is its own, and that every relocation into the PHP binary lands
//! inside the binary's mapping ([`check`]'s `php_value_ok`). `zopt cache verify` and
//! [`crate::file_cache::verify_entry`] run them on image files at rest, where any PHP
//! relocation value is accepted.
//!
//! # Layout (little-endian)
//!
//! ```text
//!  0  version       4  BODY_VERSION
//!  4  flags         4  REFUSED: the script has no image (the file records the refusal
//!                      so that later hits do not try again); nothing follows the header
//!  8  php build    16  fingerprint of the PHP binary, PHP_VERSION and the extension
//! 24  image_len     8  bytes of the image, a multiple of 8
//! 32  root          8  offset of the image's root in the image
//! 40  internal      4  relocations of pointers into the image
//! 44  php           4  relocations of pointers into the PHP binary
//! 48  slots         4  relocations of map_ptr slots
//! 52  slot_count    4  map_ptr slots the image numbers (0 .. slot_count)
//! 56  the image, then the three relocation lists (u32 offsets into the image, 8-aligned,
//!     strictly increasing), ending exactly at the end of the body
//! ```

/// Version of the body layout and of what the image holds (bump it with any change of
/// what zopt-php's `image::persist` writes).
pub const BODY_VERSION: u32 = 2;
/// Flag: the script has no image.
pub const REFUSED: u32 = 1;
/// Bytes of the body's header.
pub const HEADER: usize = 56;
/// An image larger than this is not made, and refused.
pub const MAX_IMAGE: usize = 64 << 20;
/// More slots than this in one image is refused.
pub const MAX_SLOTS: u32 = 1 << 20;

/// Relocation lists, in their order in the body.
pub const INTERNAL: usize = 0;
pub const PHP: usize = 1;
pub const SLOTS: usize = 2;

/// A body [`check`] accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// The file records that the script has no image.
    Refused { build: [u8; 16] },
    /// An image to relocate.
    Image(Layout),
}

impl Body {
    /// The PHP (and zopt) build fingerprint the body was made for.
    pub fn build(&self) -> &[u8; 16] {
        match self {
            Body::Refused { build } => build,
            Body::Image(l) => &l.build,
        }
    }
}

/// Where the parts of a checked image body are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub build: [u8; 16],
    /// Bytes of the image (it starts at [`HEADER`]).
    pub len: usize,
    /// Offset of the root in the image.
    pub root: usize,
    /// Relocations in each list ([`INTERNAL`], [`PHP`], [`SLOTS`]).
    pub counts: [usize; 3],
    /// Offset in the body where each list starts.
    pub lists: [usize; 3],
    pub slot_count: u32,
}

impl Layout {
    /// The image's bytes in `body`.
    pub fn image<'a>(&self, body: &'a [u8]) -> &'a [u8] {
        &body[HEADER..HEADER + self.len]
    }

    /// The offsets (into the image) of relocation list `k`.
    pub fn relocations<'a>(&self, body: &'a [u8], k: usize) -> impl Iterator<Item = usize> + 'a {
        body[self.lists[k]..self.lists[k] + 4 * self.counts[k]]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize)
    }
}

fn r32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn r64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Checks `body`: its length, version and flags, that the lengths in its header add up to
/// the body's, that the root (of `root_size` bytes) lies in the image, that every
/// relocation offset is 8-aligned, inside the image and strictly increasing in its list,
/// and that every relocated value is valid: an offset into the image (at most its length),
/// a `map_ptr` slot the image numbers, or (tested by `php_value_ok`, relative to the
/// anchor the persist used) a place in the PHP binary. Returns why not, in words, or where
/// the parts are. The PHP build fingerprint is returned, not checked.
pub fn check(
    body: &[u8],
    root_size: usize,
    php_value_ok: impl Fn(usize) -> bool,
) -> Result<Body, String> {
    if body.len() < HEADER {
        return Err(format!("a body of {} bytes", body.len()));
    }
    let version = r32(body, 0);
    if version != BODY_VERSION {
        return Err(format!(
            "image format version {version}, this zopt reads {BODY_VERSION}"
        ));
    }
    let build: [u8; 16] = body[8..24].try_into().expect("16 bytes");
    let flags = r32(body, 4);
    if flags == REFUSED {
        return Ok(Body::Refused { build });
    }
    if flags != 0 {
        return Err(format!("unknown flags {flags:#x}"));
    }
    let len = r64(body, 24);
    let root = r64(body, 32);
    let counts = [r32(body, 40), r32(body, 44), r32(body, 48)].map(|n| n as usize);
    let slot_count = r32(body, 52);
    let relocs = counts.iter().sum::<usize>();
    if len % 8 != 0
        || len > MAX_IMAGE as u64
        || slot_count > MAX_SLOTS
        || relocs as u64 > len / 8
        || HEADER as u64 + len + 4 * relocs as u64 != body.len() as u64
    {
        return Err("inconsistent lengths".into());
    }
    let (len, root) = (len as usize, root as usize);
    if root % 8 != 0 || root > len || root_size > len - root {
        return Err("the root outside the image".into());
    }
    let image = &body[HEADER..HEADER + len];
    let mut lists = [0usize; 3];
    let mut start = HEADER + len;
    for (k, &n) in counts.iter().enumerate() {
        lists[k] = start;
        let mut prev = None;
        for c in body[start..start + 4 * n].chunks_exact(4) {
            let at = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize;
            if at % 8 != 0 || at + 8 > len || prev.is_some_and(|p| at <= p) {
                return Err("a relocation outside the image".into());
            }
            prev = Some(at);
            let v = r64(image, at) as usize;
            let ok = match k {
                INTERNAL => v <= len,
                PHP => php_value_ok(v),
                _ => v % 8 == 1 && (v / 8) < slot_count as usize,
            };
            if !ok {
                return Err(format!("a bad relocated value at offset {at}"));
            }
        }
        start += 4 * n;
    }
    Ok(Body::Image(Layout {
        build,
        len,
        root,
        counts,
        lists,
        slot_count,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body of a 32-byte image with one relocation of each kind.
    fn body() -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&BODY_VERSION.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&[7; 16]);
        b.extend_from_slice(&32u64.to_le_bytes());
        b.extend_from_slice(&0u64.to_le_bytes());
        for n in [1u32, 1, 1, 2] {
            b.extend_from_slice(&n.to_le_bytes());
        }
        // The image: root word, a pointer to offset 16, a PHP word, a slot (1 = slot 0).
        for w in [0u64, 16, 0x1234, 8 + 1] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        for at in [8u32, 16, 24] {
            b.extend_from_slice(&at.to_le_bytes());
        }
        b
    }

    #[test]
    fn a_good_body_is_laid_out() {
        let b = body();
        let Ok(Body::Image(l)) = check(&b, 8, |v| v == 0x1234) else {
            panic!("{:?}", check(&b, 8, |v| v == 0x1234));
        };
        assert_eq!(
            (l.len, l.root, l.counts, l.slot_count),
            (32, 0, [1, 1, 1], 2)
        );
        assert_eq!(l.relocations(&b, PHP).collect::<Vec<_>>(), [16]);
        assert_eq!(l.image(&b).len(), 32);
    }

    #[test]
    fn every_fault_is_named() {
        type Fault = (&'static str, fn(&mut Vec<u8>));
        let cases: [Fault; 9] = [
            ("a body of 10 bytes", |b| b.truncate(10)),
            ("image format version 9,", |b| b[0] = 9),
            ("unknown flags 0x4", |b| b[4] = 4),
            ("inconsistent lengths", |b| b.truncate(b.len() - 4)),
            ("inconsistent lengths", |b| b[24] = 33),
            ("the root outside the image", |b| b[32] = 32),
            ("a relocation outside the image", |b| {
                let at = b.len() - 8;
                b[at] = 40;
            }),
            ("a bad relocated value at offset 8", |b| b[HEADER + 8] = 41),
            ("a bad relocated value at offset 24", |b| {
                b[HEADER + 24] = 17
            }),
        ];
        for (want, fault) in cases {
            let mut b = body();
            fault(&mut b);
            let got = check(&b, 8, |_| true).unwrap_err();
            assert!(got.starts_with(want), "{want}: {got}");
        }
        let mut b = body();
        assert_eq!(
            check(&b, 8, |_| false).unwrap_err(),
            "a bad relocated value at offset 16"
        );
        b.truncate(HEADER);
        b[4] = REFUSED as u8;
        assert_eq!(check(&b, 8, |_| true), Ok(Body::Refused { build: [7; 16] }));
    }
}
