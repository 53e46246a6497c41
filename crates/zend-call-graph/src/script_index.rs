//! Hash indexes over a script's function, class and method tables: the lookups by name
//! that PHP's optimizer makes in `HashTable`s (a call's callee, a class reference, a
//! method), at the cost of a hash whatever the script's size. Shared by the call graph's
//! [`crate::ScriptInfo`] and the optimizer's passes.

use std::hash::{BuildHasher, Hasher};

use hashbrown::{DefaultHashBuilder, HashTable};
use zend_ir::{ClassEntry, OpArray, PhpStr, Script};

/// Hash indexes over a script's function table, class table and each class's methods, as
/// PHP's `HashTable`s are: looking a name up costs the same in a script of five functions
/// as in one of five thousand. Each index holds positions in the script's tables, not
/// names: a lookup compares the bytes where the script keeps them, so the index borrows
/// nothing and outlives the op_arrays' comings and goings. Tables small enough to scan
/// get no index (scanning them is cheaper than hashing).
#[derive(Default)]
pub struct ScriptIndex {
    hasher: DefaultHashBuilder,
    /// Function key (lowercased name) to its position in `function_table`.
    functions: Option<HashTable<u32>>,
    /// Class key (lowercased name) to its position in `class_table`.
    classes: Option<HashTable<u32>>,
    /// Class name, ASCII case folded, to its position in `class_table`.
    scopes: Option<HashTable<u32>>,
    /// (class position, method key) to the method's position in that class's `methods`.
    methods: Option<HashTable<(u32, u32)>>,
    /// Whether two classes of the script share a name (declared in different branches).
    shared_class_names: bool,
}

/// Tables of at most this many entries are scanned.
const SCAN_LIMIT: usize = 32;

impl ScriptIndex {
    /// Indexes the tables of `script` that are too large to scan.
    pub fn new(script: &Script) -> ScriptIndex {
        let mut index = ScriptIndex::default();
        if script.function_table.len() > SCAN_LIMIT {
            index.functions = Some(index.by_key(&script.function_table));
        }
        let classes = &script.class_table;
        if classes.len() > SCAN_LIMIT {
            index.classes = Some(index.by_key(classes));
            let name = |j: u32| classes[j as usize].1.name.as_bytes();
            let mut by_name = HashTable::with_capacity(classes.len());
            for i in 0..classes.len() as u32 {
                let hash = index.hash_folded(name(i));
                let same = |&j: &u32| name(j).eq_ignore_ascii_case(name(i));
                insert_first(&mut by_name, hash, i, same, |&j| index.hash_folded(name(j)));
            }
            index.shared_class_names = by_name.len() < classes.len();
            index.scopes = Some(by_name);
        } else {
            let name = |j: usize| classes[j].1.name.as_bytes();
            index.shared_class_names =
                (1..classes.len()).any(|i| (0..i).any(|j| name(j).eq_ignore_ascii_case(name(i))));
        }
        if classes.iter().any(|(_, ce)| ce.methods.len() > SCAN_LIMIT) {
            let key = |(c, m): (u32, u32)| classes[c as usize].1.methods[m as usize].0.as_bytes();
            let count = script.method_count();
            let mut table = HashTable::with_capacity(count);
            for (c, (_, ce)) in classes.iter().enumerate() {
                for m in 0..ce.methods.len() {
                    let entry = (c as u32, m as u32);
                    let hash = index.hash_method(entry.0, key(entry));
                    let same = |&e: &(u32, u32)| e.0 == entry.0 && key(e) == key(entry);
                    insert_first(&mut table, hash, entry, same, |&e| {
                        index.hash_method(e.0, key(e))
                    });
                }
            }
            index.methods = Some(table);
        }
        index
    }

    // The lookups are `#[inline]`: in most scripts one is a few compares, which cost less
    // than a call's register saves and restores around them.

    /// The positions of `entries` by key.
    fn by_key<T>(&self, entries: &[(PhpStr, T)]) -> HashTable<u32> {
        let key = |j: u32| entries[j as usize].0.as_bytes();
        let mut table = HashTable::with_capacity(entries.len());
        for i in 0..entries.len() as u32 {
            let same = |&j: &u32| key(j) == key(i);
            insert_first(&mut table, self.hash(key(i)), i, same, |&j| {
                self.hash(key(j))
            });
        }
        table
    }

    /// The position of `key` in `entries`, through `table` when it has one.
    #[inline]
    fn find_by_key<T>(
        &self,
        table: &Option<HashTable<u32>>,
        entries: &[(PhpStr, T)],
        key: &[u8],
    ) -> Option<usize> {
        match table {
            Some(t) => t
                .find(self.hash(key), |&j| entries[j as usize].0.as_bytes() == key)
                .map(|&j| j as usize),
            None => entries.iter().position(|(k, _)| k.as_bytes() == key),
        }
    }

    fn hash(&self, bytes: &[u8]) -> u64 {
        self.hasher.hash_one(bytes)
    }

    fn hash_folded(&self, bytes: &[u8]) -> u64 {
        let mut h = self.hasher.build_hasher();
        for &b in bytes {
            h.write_u8(b.to_ascii_lowercase());
        }
        h.write_usize(bytes.len());
        h.finish()
    }

    fn hash_method(&self, class: u32, bytes: &[u8]) -> u64 {
        self.hasher.hash_one((class, bytes))
    }

    /// The position of function `lcname` in `script.function_table`.
    #[inline]
    pub fn function(&self, script: &Script, lcname: &[u8]) -> Option<usize> {
        self.find_by_key(&self.functions, &script.function_table, lcname)
    }

    /// The class of `script.class_table` whose key is `lcname`.
    #[inline]
    pub fn class<'s>(&self, script: &'s Script, lcname: &[u8]) -> Option<&'s ClassEntry> {
        let c = self.find_by_key(&self.classes, &script.class_table, lcname)?;
        Some(&script.class_table[c].1)
    }

    /// The first class of `script.class_table` named `name` in any case.
    #[inline]
    pub fn scope<'s>(&self, script: &'s Script, name: &[u8]) -> Option<&'s ClassEntry> {
        let classes = &script.class_table;
        // The name asked for is mostly a class's own name, spelled alike: a byte compare
        // settles it before the slower case-folding one.
        let same = |ce: &ClassEntry| {
            let n = ce.name.as_bytes();
            n == name || n.eq_ignore_ascii_case(name)
        };
        match &self.scopes {
            Some(t) => t
                .find(self.hash_folded(name), |&j| same(&classes[j as usize].1))
                .map(|&j| &classes[j as usize].1),
            None => classes.iter().map(|(_, ce)| ce).find(|ce| same(ce)),
        }
    }

    /// The class `op_array` (an op_array of `script`, in place) belongs to: PHP's
    /// `op_array->scope`. That is the first class named as its scope, unless several
    /// classes share the name (declared in different branches of the file): then the one
    /// whose methods hold `op_array` (by address, closures within them included).
    pub fn scope_of<'s>(&self, script: &'s Script, op_array: &OpArray) -> Option<&'s ClassEntry> {
        let name = op_array.scope.as_ref()?.as_bytes();
        let first = self.scope(script, name)?;
        if !self.shared_class_names {
            return Some(first);
        }
        fn holds(m: &OpArray, target: &OpArray) -> bool {
            std::ptr::eq(m, target) || m.dynamic_func_defs.iter().any(|d| holds(d, target))
        }
        script
            .class_table
            .iter()
            .map(|(_, ce)| ce)
            .filter(|ce| ce.name.as_bytes().eq_ignore_ascii_case(name))
            .find(|ce| ce.methods.iter().any(|(_, m)| holds(m, op_array)))
            .or(Some(first))
    }

    /// The position of method `lcname` in the `methods` of class `c` (a position in
    /// `script.class_table`).
    #[inline]
    pub fn method(&self, script: &Script, c: usize, lcname: &[u8]) -> Option<usize> {
        let methods = &script.class_table[c].1.methods;
        match &self.methods {
            Some(t) if methods.len() > SCAN_LIMIT => t
                .find(self.hash_method(c as u32, lcname), |&(k, n)| {
                    k as usize == c && methods[n as usize].0.as_bytes() == lcname
                })
                .map(|&(_, n)| n as usize),
            _ => methods.iter().position(|(key, _)| key.as_bytes() == lcname),
        }
    }
}

/// Adds `entry` under `hash` unless an entry `same` as it is there already: of several
/// entries with one name the first is found, as a scan in table order finds it.
fn insert_first<E>(
    table: &mut HashTable<E>,
    hash: u64,
    entry: E,
    same: impl Fn(&E) -> bool,
    rehash: impl Fn(&E) -> u64,
) {
    if table.find(hash, same).is_none() {
        table.insert_unique(hash, entry, rehash);
    }
}

/// Which entry of `script.class_table` `ce` is, when it is one: told by its address, since
/// the class entries passes see come from lookups in that table.
pub fn class_position(script: &Script, ce: &ClassEntry) -> Option<usize> {
    let table = &script.class_table;
    let base = &table.first()?.1 as *const ClassEntry as usize;
    let offset = (ce as *const ClassEntry as usize).checked_sub(base)?;
    let stride = std::mem::size_of::<(PhpStr, ClassEntry)>();
    let i = offset / stride;
    (offset % stride == 0 && i < table.len() && std::ptr::eq(&table[i].1, ce)).then_some(i)
}
