//! A hash table from `(kind, byte string)` keys to `u32` values for the string-keyed
//! `HashTable`s compact_literals.c builds (literal merging, `add_static_slot`), without an
//! allocation or a copy per key. Cleared, it keeps its memory for the next op_array.
//!
//! A key is the concatenation of its parts, as PHP builds its merge keys by concatenating a
//! literal group's strings: two groups whose strings concatenate to the same bytes are the
//! same key, exactly as in PHP. The table does not keep the bytes: its caller hashes a key
//! (`key_hash` of the concatenation), stores where its parts are (a [`StoredKey`], which
//! only the caller reads) and compares a stored key's parts with a probe's bytes
//! (`concat_eq`), so that a new key costs no copy.

use std::hash::Hasher;

use rustc_hash::FxHasher;

/// Where the caller keeps a key's parts (literal numbers, by the caller's convention), with
/// the key's kind, which the table compares itself.
#[derive(Clone, Copy)]
pub(crate) struct StoredKey {
    pub kind: u32,
    pub a: u32,
    pub b: u32,
}

struct Entry {
    hash: u64,
    key: StoredKey,
    value: u32,
}

/// Open addressing with linear probing, kept at most half full: keys are never removed
/// (only all at once), so there are no tombstones, and the probes stay short.
#[derive(Default)]
pub(crate) struct ByteKeyTable {
    /// Per slot, 0 (empty) or 1 + the index of its entry.
    slots: Vec<u32>,
    entries: Vec<Entry>,
}

/// The fewest slots a table has, so that it never needs a test for an empty slot array.
const MIN_SLOTS: usize = 16;

impl ByteKeyTable {
    /// Empties the table, sized for `expected` keys (more make it grow).
    pub fn clear(&mut self, expected: usize) {
        self.entries.clear();
        let slots = expected
            .saturating_mul(2)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX / 2 + 1)
            .max(MIN_SLOTS);
        self.slots.clear();
        self.slots.resize(slots, 0);
    }

    /// The value of the key of kind `key.kind` whose bytes hash to `hash` and for which
    /// `same_bytes` holds, or `None` after inserting `key` with `value`. `same_bytes` says
    /// whether a stored key has the probe's bytes; it sees only keys of the same kind and
    /// hash.
    pub fn get_or_insert(
        &mut self,
        hash: u64,
        key: StoredKey,
        value: u32,
        same_bytes: impl Fn(StoredKey) -> bool,
    ) -> Option<u32> {
        if self.slots.len() < MIN_SLOTS {
            self.clear(0);
        }
        let mask = self.slots.len() - 1;
        let mut pos = hash as usize & mask;
        while let Some(&slot) = self.slots.get(pos) {
            if slot == 0 {
                break;
            }
            if let Some(e) = self.entries.get(slot as usize - 1) {
                if e.hash == hash && e.key.kind == key.kind && same_bytes(e.key) {
                    return Some(e.value);
                }
            }
            pos = (pos + 1) & mask;
        }
        if (self.entries.len() + 1) * 2 > self.slots.len() {
            self.grow();
            pos = self.free_slot(hash);
        }
        self.entries.push(Entry { hash, key, value });
        if let Some(slot) = self.slots.get_mut(pos) {
            *slot = self.entries.len() as u32;
        }
        None
    }

    /// The first empty slot on `hash`'s probe sequence (there is one: the table is at most
    /// half full).
    fn free_slot(&self, hash: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut pos = hash as usize & mask;
        while self.slots.get(pos).is_some_and(|&s| s != 0) {
            pos = (pos + 1) & mask;
        }
        pos
    }

    /// Twice the slots, every entry placed again.
    fn grow(&mut self) {
        let slots = self.slots.len() * 2;
        self.slots.clear();
        self.slots.resize(slots, 0);
        for n in 0..self.entries.len() {
            let pos = self.free_slot(self.entries[n].hash);
            self.slots[pos] = n as u32 + 1;
        }
    }
}

/// The hash of key `(kind, bytes)`. Fx, not a seeded hash: the keys are a script's own
/// names and numbers, and the table is probed for most literals of every op_array. Fx's
/// finish rotates the product's high bits down, so the low bits index the slots.
#[inline]
pub(crate) fn key_hash(kind: u32, bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write_u32(kind);
    h.write(bytes);
    h.finish()
}

/// Whether `bytes` is the concatenation of `parts`.
#[inline]
pub(crate) fn concat_eq(bytes: &[u8], parts: &[&[u8]]) -> bool {
    let mut rest = bytes;
    for part in parts {
        match rest.split_at_checked(part.len()) {
            Some((head, tail)) if head == *part => rest = tail,
            _ => return false,
        }
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys kept as lists of byte strings, as a caller keeps them in its literals.
    fn get_or_insert(
        t: &mut ByteKeyTable,
        store: &mut Vec<Vec<&'static [u8]>>,
        kind: u32,
        parts: &[&'static [u8]],
        value: u32,
    ) -> Option<u32> {
        let bytes = parts.concat();
        let key = StoredKey {
            kind,
            a: store.len() as u32,
            b: 0,
        };
        let found = t.get_or_insert(key_hash(kind, &bytes), key, value, |k| {
            concat_eq(&bytes, &store[k.a as usize])
        });
        store.push(parts.to_vec());
        found
    }

    #[test]
    fn keys_are_kind_and_concatenated_bytes() {
        let mut t = ByteKeyTable::default();
        let s = &mut Vec::new();
        assert_eq!(get_or_insert(&mut t, s, 0, &[b"ab", b"c"], 1), None);
        assert_eq!(get_or_insert(&mut t, s, 0, &[b"a", b"bc"], 2), Some(1));
        assert_eq!(get_or_insert(&mut t, s, 0, &[b"abc"], 7), Some(1));
        assert_eq!(get_or_insert(&mut t, s, 1, &[b"abc"], 3), None);
        assert_eq!(get_or_insert(&mut t, s, 1, &[b"abc"], 4), Some(3));
        assert_eq!(get_or_insert(&mut t, s, 0, &[b""], 5), None);
        assert_eq!(get_or_insert(&mut t, s, 0, &[b"ab"], 8), None);
        assert_eq!(get_or_insert(&mut t, s, 0, &[b"abcd"], 9), None);
        t.clear(0);
        assert_eq!(get_or_insert(&mut t, s, 0, &[b"abc"], 6), None);
    }

    #[test]
    fn grows_past_its_expected_size() {
        let mut t = ByteKeyTable::default();
        t.clear(1);
        let names: Vec<&'static [u8]> = (0..100)
            .map(|n| &*Box::leak(format!("name{n}").into_bytes().into_boxed_slice()))
            .collect();
        let s = &mut Vec::new();
        for (n, name) in names.iter().enumerate() {
            assert_eq!(get_or_insert(&mut t, s, 0, &[name], n as u32), None);
        }
        for (n, name) in names.iter().enumerate() {
            assert_eq!(get_or_insert(&mut t, s, 0, &[name], 999), Some(n as u32));
        }
    }
}
