//! Dense bit sets (`zend_bitset`): one bit per element in `u64` words, and a matrix of
//! equally sized rows, the layout zend_dfg uses for its per-block sets.

/// Number of `u64` words needed for `n` bits (`zend_bitset_len`).
#[inline]
pub const fn words_for(n: usize) -> usize {
    n.div_ceil(64)
}

/// A fixed-size set of small integers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    /// An empty set able to hold `0..n`.
    pub fn new(n: usize) -> Self {
        BitSet {
            words: vec![0; words_for(n)],
        }
    }

    pub fn words(&self) -> &[u64] {
        &self.words
    }

    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        contains(&self.words, i)
    }

    #[inline]
    pub fn insert(&mut self, i: usize) -> bool {
        insert(&mut self.words, i)
    }

    #[inline]
    pub fn remove(&mut self, i: usize) {
        remove(&mut self.words, i)
    }

    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The elements in increasing order.
    pub fn iter(&self) -> Iter<'_> {
        iter(&self.words)
    }

    /// The largest element (`zend_bitset_last`).
    pub fn last(&self) -> Option<usize> {
        last(&self.words)
    }
}

#[inline]
pub fn contains(words: &[u64], i: usize) -> bool {
    words
        .get(i / 64)
        .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
}

/// Adds `i`; returns whether it was absent.
#[inline]
pub fn insert(words: &mut [u64], i: usize) -> bool {
    let w = &mut words[i / 64];
    let bit = 1u64 << (i % 64);
    let absent = *w & bit == 0;
    *w |= bit;
    absent
}

/// Removes `i`.
#[inline]
pub fn remove(words: &mut [u64], i: usize) {
    words[i / 64] &= !(1u64 << (i % 64));
}

/// The largest element of a set given as words.
pub fn last(words: &[u64]) -> Option<usize> {
    words
        .iter()
        .enumerate()
        .rev()
        .find(|(_, &w)| w != 0)
        .map(|(i, &w)| i * 64 + 63 - w.leading_zeros() as usize)
}

/// `a ⊆ b`.
pub fn is_subset(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).all(|(&x, &y)| x & !y == 0)
}

/// `dst |= src`.
pub fn union_with(dst: &mut [u64], src: &[u64]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d |= s;
    }
}

/// Iterator over the elements of a word slice, in increasing order.
pub fn iter(words: &[u64]) -> Iter<'_> {
    Iter {
        words,
        index: 0,
        current: words.first().copied().unwrap_or(0),
    }
}

pub struct Iter<'a> {
    words: &'a [u64],
    index: usize,
    current: u64,
}

impl Iterator for Iter<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        loop {
            if self.current != 0 {
                let bit = self.current.trailing_zeros() as usize;
                self.current &= self.current - 1;
                return Some(self.index * 64 + bit);
            }
            self.index += 1;
            self.current = *self.words.get(self.index)?;
        }
    }
}

/// `rows` bit sets of `bits` bits each in one allocation (`DFG_BITSET`): a `Vec` by
/// default, or a slice of an arena ([`BitMatrix::new_in`], [`BitMatrix::copy_in`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitMatrix<W = Vec<u64>> {
    row_words: usize,
    words: W,
}

impl BitMatrix {
    pub fn new(rows: usize, bits: usize) -> Self {
        let row_words = words_for(bits);
        BitMatrix {
            row_words,
            words: vec![0; row_words * rows],
        }
    }
}

impl<'b> BitMatrix<&'b mut [u64]> {
    /// A matrix over `words`, rows of `row_words` words.
    pub fn view_mut(words: &'b mut [u64], row_words: usize) -> Self {
        BitMatrix { row_words, words }
    }

    /// An empty matrix whose words live in `arena`.
    pub fn new_in(rows: usize, bits: usize, arena: &'b bumpalo::Bump) -> Self {
        let row_words = words_for(bits);
        BitMatrix {
            row_words,
            words: arena.alloc_slice_fill_copy(row_words * rows, 0),
        }
    }
}

impl<'a> BitMatrix<&'a [u64]> {
    /// A read-only view of `words`, rows of `row_words` words.
    pub fn view(words: &'a [u64], row_words: usize) -> Self {
        BitMatrix { row_words, words }
    }
}

impl<W: AsRef<[u64]>> BitMatrix<W> {
    /// A copy of this matrix in `arena`.
    pub fn copy_in<'b>(&self, arena: &'b bumpalo::Bump) -> BitMatrix<&'b mut [u64]> {
        BitMatrix {
            row_words: self.row_words,
            words: arena.alloc_slice_copy(self.words.as_ref()),
        }
    }

    /// Number of rows, unknown (`None`) when rows have no words (zero bits).
    pub fn rows(&self) -> Option<usize> {
        self.words.as_ref().len().checked_div(self.row_words)
    }

    /// Words per row (`dfg->size`).
    pub fn row_words(&self) -> usize {
        self.row_words
    }

    #[inline]
    pub fn row(&self, r: usize) -> &[u64] {
        &self.words.as_ref()[r * self.row_words..(r + 1) * self.row_words]
    }

    #[inline]
    pub fn contains(&self, r: usize, i: usize) -> bool {
        contains(self.row(r), i)
    }
}

impl<W: AsRef<[u64]> + AsMut<[u64]>> BitMatrix<W> {
    #[inline]
    pub fn row_mut(&mut self, r: usize) -> &mut [u64] {
        let n = self.row_words;
        &mut self.words.as_mut()[r * n..(r + 1) * n]
    }

    #[inline]
    pub fn insert(&mut self, r: usize, i: usize) -> bool {
        insert(self.row_mut(r), i)
    }

    pub fn clear(&mut self) {
        self.words.as_mut().fill(0);
    }
}

/// A set of small integers over words borrowed from elsewhere (an arena), for a set that
/// is only tested, added to, taken from and walked: plain bits, where a [`Worklist`] also
/// keeps its size and where its first member is at every change. Indices outside the
/// words are never members, and adding or removing one panics.
#[derive(Debug)]
pub struct BitSlice<'a>(pub &'a mut [u64]);

impl<'a> BitSlice<'a> {
    /// The set of all of `0..n`, its words in `arena`.
    pub fn full_in(n: usize, arena: &'a bumpalo::Bump) -> Self {
        let words = arena.alloc_slice_fill_copy(words_for(n), u64::MAX);
        clear_past(words, n);
        BitSlice(words)
    }

    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        contains(self.0, i)
    }

    /// Adds `i`; returns whether it was absent.
    #[inline]
    pub fn insert(&mut self, i: usize) -> bool {
        insert(self.0, i)
    }

    #[inline]
    pub fn remove(&mut self, i: usize) {
        remove(self.0, i)
    }

    /// The elements in increasing order.
    pub fn iter(&self) -> Iter<'_> {
        iter(self.0)
    }
}

/// A bit set used as a worklist: [`Worklist::pop_first`] takes the smallest member, as
/// `zend_bitset_pop_first` does, so the order of a fixpoint is PHP's; but it resumes at
/// the lowest word that can hold a member instead of rescanning from the start, and knows
/// its size. A large set (more than [`SUMMARY_FROM`] words) also keeps a summary, one bit
/// per word set when the word holds a member, and resumes at the lowest summary word that
/// can hold one: a fixpoint over a large function whose usages keep reaching back (a deep
/// loop nest) then rescans no empty words, where walking the words themselves made it
/// quadratic. A small set walks at most [`SUMMARY_FROM`] words and keeps no summary, which
/// would cost more than it saves. Indices outside the set are ignored (never members), as
/// in the worklists it replaces.
///
/// The words live in a `Vec` by default, or in a slice of an arena ([`Worklist::new_in`]).
#[derive(Clone, Debug, Default)]
pub struct Worklist<W = Vec<u64>> {
    words: W,
    /// Empty for a small set. Otherwise bit `k` is set exactly when word `k` holds a member.
    summary: W,
    /// Every word (with a summary: every summary word) below this one is empty.
    first: usize,
    len: usize,
}

/// Sets of more words than this keep a summary (see [`Worklist`]).
pub const SUMMARY_FROM: usize = 64;

/// The summary words a set of `words` words keeps.
fn summary_words(words: usize) -> usize {
    if words > SUMMARY_FROM {
        words_for(words)
    } else {
        0
    }
}

impl Worklist {
    /// An empty worklist for `0..n`.
    pub fn new(n: usize) -> Self {
        let words = words_for(n);
        Worklist {
            words: vec![0; words],
            summary: vec![0; summary_words(words)],
            first: 0,
            len: 0,
        }
    }

    /// A worklist holding every element of `0..n`.
    pub fn full(n: usize) -> Self {
        let mut words = vec![u64::MAX; words_for(n)];
        clear_past(&mut words, n);
        let mut summary = vec![u64::MAX; summary_words(words.len())];
        clear_past(&mut summary, words.len());
        Worklist {
            words,
            summary,
            first: 0,
            len: n,
        }
    }
}

/// Clears the bits of the last word at and above `n`, in a set of `0..n` filled with ones.
fn clear_past(words: &mut [u64], n: usize) {
    if n % 64 != 0 {
        if let Some(last) = words.last_mut() {
            *last = (1u64 << (n % 64)) - 1;
        }
    }
}

impl<'b> Worklist<&'b mut [u64]> {
    /// The words and the summary words of a set of `0..n`, filled with `fill`, in one
    /// allocation from `arena` (most worklists are made per op_array and are one word).
    fn words_in(n: usize, fill: u64, arena: &'b bumpalo::Bump) -> (&'b mut [u64], &'b mut [u64]) {
        let words = words_for(n);
        arena
            .alloc_slice_fill_copy(words + summary_words(words), fill)
            .split_at_mut(words)
    }

    /// An empty worklist for `0..n` whose words live in `arena`.
    pub fn new_in(n: usize, arena: &'b bumpalo::Bump) -> Self {
        let (words, summary) = Self::words_in(n, 0, arena);
        Worklist {
            words,
            summary,
            first: 0,
            len: 0,
        }
    }

    /// An empty worklist for `0..n` of each `n` of `sizes`, their words in one allocation
    /// from `arena`: a pass making several per op_array pays for one allocation and one
    /// clearing instead of one each. Inlined: each caller's sizes are then known in
    /// place, where a shared copy spent more on the general case than on the sets.
    #[inline(always)]
    pub fn many_new_in<const N: usize>(sizes: [usize; N], arena: &'b bumpalo::Bump) -> [Self; N] {
        let lens = sizes.map(|n| {
            let words = words_for(n);
            (words, summary_words(words))
        });
        let total = lens.iter().map(|&(words, summary)| words + summary).sum();
        let mut rest: &'b mut [u64] = arena.alloc_slice_fill_copy(total, 0);
        lens.map(|(words, summary)| {
            let (words, tail) = std::mem::take(&mut rest).split_at_mut(words);
            let (summary, tail) = tail.split_at_mut(summary);
            rest = tail;
            Worklist {
                words,
                summary,
                first: 0,
                len: 0,
            }
        })
    }

    /// The words of this worklist as a plain set ([`BitSlice`]), for a set made by
    /// [`Worklist::many_new_in`] with worklists but never used as one.
    pub fn into_bits(self) -> BitSlice<'b> {
        BitSlice(self.words)
    }

    /// [`Worklist::full`], its words in `arena`.
    pub fn full_in(n: usize, arena: &'b bumpalo::Bump) -> Self {
        let (words, summary) = Self::words_in(n, u64::MAX, arena);
        clear_past(words, n);
        clear_past(summary, words.len());
        Worklist {
            words,
            summary,
            first: 0,
            len: n,
        }
    }
}

impl<W: AsRef<[u64]> + AsMut<[u64]>> Worklist<W> {
    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        contains(self.words.as_ref(), i)
    }

    /// Adds `i`; true if it was not a member.
    #[inline]
    pub fn insert(&mut self, i: usize) -> bool {
        let k = i / 64;
        let Some(w) = self.words.as_mut().get_mut(k) else {
            return false;
        };
        let bit = 1u64 << (i % 64);
        if *w & bit != 0 {
            return false;
        }
        *w |= bit;
        self.len += 1;
        let summary = self.summary.as_mut();
        if summary.is_empty() {
            self.first = self.first.min(k);
        } else {
            summary[k / 64] |= 1u64 << (k % 64);
            self.first = self.first.min(k / 64);
        }
        true
    }

    #[inline]
    pub fn remove(&mut self, i: usize) {
        let k = i / 64;
        if let Some(w) = self.words.as_mut().get_mut(k) {
            let bit = 1u64 << (i % 64);
            if *w & bit != 0 {
                *w &= !bit;
                self.len -= 1;
                if *w == 0 {
                    if let Some(s) = self.summary.as_mut().get_mut(k / 64) {
                        *s &= !(1u64 << (k % 64));
                    }
                }
            }
        }
    }

    /// [`Worklist::insert`] without keeping the size, the resume point and the summary
    /// up to date: for a run of changes accounted for at once by [`Worklist::recount`]
    /// after it. Until then, only [`Worklist::contains`] and the other uncounted changes
    /// may be used.
    #[inline]
    pub fn insert_uncounted(&mut self, i: usize) {
        if let Some(w) = self.words.as_mut().get_mut(i / 64) {
            *w |= 1u64 << (i % 64);
        }
    }

    /// [`Worklist::remove`] without keeping the size and the summary up to date (see
    /// [`Worklist::insert_uncounted`]).
    #[inline]
    pub fn remove_uncounted(&mut self, i: usize) {
        if let Some(w) = self.words.as_mut().get_mut(i / 64) {
            *w &= !(1u64 << (i % 64));
        }
    }

    /// Accounts for the changes made by [`Worklist::insert_uncounted`] and
    /// [`Worklist::remove_uncounted`]: the size and the summary are read off the words.
    pub fn recount(&mut self) {
        let words = self.words.as_ref();
        self.len = words.iter().map(|w| w.count_ones() as usize).sum();
        let summary = self.summary.as_mut();
        if !summary.is_empty() {
            summary.fill(0);
            for (k, _) in words.iter().enumerate().filter(|(_, &w)| w != 0) {
                summary[k / 64] |= 1u64 << (k % 64);
            }
        }
        self.first = 0;
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Removes and returns the smallest member.
    #[inline(always)]
    pub fn pop_first(&mut self) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // A member exists, so some word (summary word) at or above `first` is set.
        if self.summary.as_ref().is_empty() {
            // Most worklists are a word or a few: no summary to keep.
            let words = self.words.as_mut();
            while words[self.first] == 0 {
                self.first += 1;
            }
            let w = &mut words[self.first];
            let bit = w.trailing_zeros() as usize;
            *w &= *w - 1;
            return Some(self.first * 64 + bit);
        }
        Some(self.pop_first_summarized())
    }

    /// [`Worklist::pop_first`] of a set with a summary (`len` already decremented).
    fn pop_first_summarized(&mut self) -> usize {
        let summary = self.summary.as_mut();
        let words = self.words.as_mut();
        while summary[self.first] == 0 {
            self.first += 1;
        }
        let k = self.first * 64 + summary[self.first].trailing_zeros() as usize;
        let w = &mut words[k];
        let bit = w.trailing_zeros() as usize;
        *w &= *w - 1;
        if *w == 0 {
            summary[k / 64] &= !(1u64 << (k % 64));
        }
        k * 64 + bit
    }

    /// The members in increasing order.
    pub fn iter(&self) -> Iter<'_> {
        iter(self.words.as_ref())
    }

    pub fn clear(&mut self) {
        self.words.as_mut().fill(0);
        self.summary.as_mut().fill(0);
        self.first = 0;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let mut s = BitSet::new(130);
        assert!(s.is_empty());
        assert!(s.insert(0));
        assert!(s.insert(64));
        assert!(s.insert(129));
        assert!(!s.insert(129));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 64, 129]);
        assert_eq!(s.last(), Some(129));
        s.remove(129);
        assert_eq!(s.last(), Some(64));
        assert!(!s.contains(200));
        let mut m = BitMatrix::new(3, 70);
        m.insert(2, 69);
        assert!(m.contains(2, 69));
        assert!(!m.contains(1, 69));
        assert_eq!(m.row_words(), 2);
    }

    #[test]
    fn worklist_pops_in_increasing_order() {
        let mut w = Worklist::new(200);
        for i in [150, 3, 64, 3, 199] {
            w.insert(i);
        }
        assert_eq!(w.len(), 4);
        assert_eq!(w.pop_first(), Some(3));
        assert_eq!(w.pop_first(), Some(64));
        // A member below the resume point is still found first.
        assert!(w.insert(1));
        assert!(!w.insert(500));
        assert_eq!(w.pop_first(), Some(1));
        w.remove(150);
        assert_eq!(w.pop_first(), Some(199));
        assert!(w.is_empty());
        assert_eq!(w.pop_first(), None);
        let f = Worklist::full(70);
        assert_eq!(f.len(), 70);
        assert_eq!(f.iter().last(), Some(69));
    }

    /// Worklists sharing one allocation: each holds its own range, summaries included.
    #[test]
    fn worklists_in_one_allocation() {
        let arena = bumpalo::Bump::new();
        let n = 64 * 70 + 3;
        let [mut a, mut b, mut c] = Worklist::many_new_in([5, n, 0], &arena);
        assert!(a.insert(4));
        // Past its one word: not a member, and the next worklist's words untouched.
        assert!(!a.insert(64));
        assert!(b.insert(n - 1));
        assert!(b.insert(0));
        assert!(!c.insert(0));
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![4]);
        assert_eq!(b.pop_first(), Some(0));
        assert_eq!(b.pop_first(), Some(n - 1));
        assert!(b.is_empty() && c.is_empty());
        assert_eq!(a.pop_first(), Some(4));
        let [d] = Worklist::many_new_in([130], &arena);
        let mut d = d.into_bits();
        assert!(d.insert(129) && !d.insert(129) && d.insert(3));
        assert!(d.contains(3) && !d.contains(4) && !d.contains(500));
        d.remove(3);
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![129]);
        // A full set holds exactly 0..n, the last word's bits past n clear.
        for n in [0, 1, 64, 70, 128] {
            let full = BitSlice::full_in(n, &arena);
            assert_eq!(full.iter().collect::<Vec<_>>(), (0..n).collect::<Vec<_>>());
        }
    }

    /// Uncounted changes, then one recount: the same worklist as counted changes make.
    #[test]
    fn worklist_recounted() {
        let n = 64 * 70 + 3;
        let mut w = Worklist::new(n);
        let mut model = Worklist::new(n);
        for i in [5, 4000, 64, 5, n - 1, 4470] {
            w.insert_uncounted(i);
            model.insert(i);
        }
        w.remove_uncounted(64);
        model.remove(64);
        w.remove_uncounted(65);
        // Past the words: ignored.
        w.insert_uncounted(64 * 71 + 5);
        assert!(w.contains(4000) && !w.contains(64));
        w.recount();
        assert_eq!(w.len(), model.len());
        while let Some(i) = model.pop_first() {
            assert_eq!(w.pop_first(), Some(i));
        }
        assert!(w.is_empty() && w.pop_first().is_none());
    }

    /// The summary level: members many words apart, words emptied by pops and by removals,
    /// members re-added below and above the resume point; drained in increasing order.
    #[test]
    fn worklist_across_summary_words() {
        let n = 64 * 64 * 3 + 5;
        assert!(n / 64 > SUMMARY_FROM);
        let mut w = Worklist::new(n);
        let mut model = std::collections::BTreeSet::new();
        let mut x = 12345u64;
        for step in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = (x >> 33) as usize % n;
            match step % 5 {
                0 | 1 => assert_eq!(w.insert(i), model.insert(i)),
                2 => {
                    w.remove(i);
                    model.remove(&i);
                }
                _ => assert_eq!(w.pop_first(), model.pop_first()),
            }
            assert_eq!(w.len(), model.len());
        }
        assert_eq!(
            w.iter().collect::<Vec<_>>(),
            model.iter().copied().collect::<Vec<_>>()
        );
        while let Some(i) = w.pop_first() {
            assert_eq!(Some(i), model.pop_first());
        }
        assert!(model.is_empty());
        let mut f = Worklist::full(n);
        for i in 0..n {
            assert_eq!(f.pop_first(), Some(i));
        }
        assert_eq!(f.pop_first(), None);
    }
}
