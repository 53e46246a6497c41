//! A hash table from `(kind, byte string)` keys to `u32` values whose keys live in one byte
//! arena: the string-keyed `HashTable`s compact_literals.c builds (literal merging,
//! `add_static_slot`) without an allocation per key. Cleared, it keeps its memory for the
//! next op_array.
//!
//! A key is the concatenation of its parts, as PHP builds its merge keys by concatenating a
//! literal group's strings: two groups whose strings concatenate to the same bytes are the
//! same key, exactly as in PHP.

use std::hash::{BuildHasher, BuildHasherDefault};

use hashbrown::HashTable;
use rustc_hash::FxHasher;

struct Entry {
    hash: u64,
    kind: u32,
    start: u32,
    len: u32,
    value: u32,
}

#[derive(Default)]
pub(crate) struct ByteKeyTable {
    table: HashTable<Entry>,
    arena: Vec<u8>,
    /// Fx, not a seeded hash: the keys are a script's own names and numbers, and the
    /// table is probed for most literals of every op_array.
    hasher: BuildHasherDefault<FxHasher>,
}

impl ByteKeyTable {
    pub fn clear(&mut self) {
        self.table.clear();
        self.arena.clear();
    }

    /// The value of key `(kind, parts concatenated)`, or `None` after inserting it with
    /// `value`.
    pub fn get_or_insert(&mut self, kind: u32, parts: &[&[u8]], value: u32) -> Option<u32> {
        let start = self.arena.len();
        for part in parts {
            self.arena.extend_from_slice(part);
        }
        let key = &self.arena[start..];
        let hash = self.hasher.hash_one((kind, key));
        let arena = &self.arena;
        let found = self
            .table
            .find(hash, |e| {
                e.kind == kind && &arena[e.start as usize..(e.start + e.len) as usize] == key
            })
            .map(|e| e.value);
        match found {
            Some(value) => {
                self.arena.truncate(start);
                Some(value)
            }
            None => {
                let entry = Entry {
                    hash,
                    kind,
                    start: start as u32,
                    len: (self.arena.len() - start) as u32,
                    value,
                };
                self.table.insert_unique(hash, entry, |e| e.hash);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_kind_and_concatenated_bytes() {
        let mut t = ByteKeyTable::default();
        assert_eq!(t.get_or_insert(0, &[b"ab", b"c"], 1), None);
        assert_eq!(t.get_or_insert(0, &[b"a", b"bc"], 2), Some(1));
        assert_eq!(t.get_or_insert(0, &[b"abc"], 7), Some(1));
        assert_eq!(t.get_or_insert(1, &[b"abc"], 3), None);
        assert_eq!(t.get_or_insert(1, &[b"abc"], 4), Some(3));
        assert_eq!(t.get_or_insert(0, &[b""], 5), None);
        t.clear();
        assert_eq!(t.get_or_insert(0, &[b"abc"], 6), None);
    }
}
