//! The dominator tree (`zend_cfg_compute_dominators_tree`) and loop identification
//! (`zend_cfg_identify_loops`). Both are iterative: no recursion whose depth follows the
//! input.

use crate::cfg::{BlockFlags, Cfg, FuncFlags};
use crate::BlockId;
use bumpalo::collections::Vec as BVec;
use bumpalo::Bump;

/// `eval` of Lengauer and Tarjan (on preorder numbers), with iterative path compression.
/// Inlined for its common answers, a root or a child of one (nothing to compress); the
/// compression is out of line.
#[inline(always)]
fn eval(
    v: u32,
    ancestor: &mut [u32],
    label: &mut [u32],
    semi: &[u32],
    path: &mut BVec<u32>,
) -> u32 {
    let v = v as usize;
    let a = ancestor[v];
    if a == NONE {
        return v as u32;
    }
    if ancestor[a as usize] == NONE {
        return label[v];
    }
    compress(v, ancestor, label, semi, path)
}

/// The path compression of [`eval`], for a vertex at least two links below its root.
#[inline(never)]
fn compress(
    v: usize,
    ancestor: &mut [u32],
    label: &mut [u32],
    semi: &[u32],
    path: &mut BVec<u32>,
) -> u32 {
    path.clear();
    let mut x = v;
    while ancestor[ancestor[x] as usize] != NONE {
        path.push(x as u32);
        x = ancestor[x] as usize;
    }
    // `x`'s ancestor is a root of the forest; compress from the top down.
    while let Some(y) = path.pop() {
        let y = y as usize;
        let a = ancestor[y] as usize;
        if semi[label[a] as usize] < semi[label[y] as usize] {
            label[y] = label[a];
        }
        ancestor[y] = ancestor[a];
    }
    label[v]
}

/// Immediate dominators of the blocks reachable from the entry by successor edges, per
/// block (`NONE` for the entry and unreached blocks), of any CFG: Lengauer and Tarjan,
/// with path compression, iterative; near-linear even for deeply nested code. The
/// dominator tree is unique, so this is the tree PHP's Cooper-Harvey-Kennedy iteration
/// converges to, whichever way it is computed.
fn lengauer_tarjan<'b>(cfg: &Cfg, scratch: &'b Bump) -> (&'b mut [u32], &'b [u32]) {
    let n = cfg.blocks.len();
    // Preorder numbering by an iterative depth-first walk.
    let dfn = scratch.alloc_slice_fill_copy(n, NONE);
    let mut vertex = BVec::with_capacity_in(n, scratch);
    let parent = scratch.alloc_slice_fill_copy(n, NONE);
    let mut stack = BVec::with_capacity_in(n, scratch);
    stack.push((0u32, 0u32));
    dfn[0] = 0;
    vertex.push(0u32);
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        let succs = cfg.successors(BlockId::new(b));
        if let Some(&s) = succs.get(*next as usize) {
            *next += 1;
            if dfn[s.index()] == NONE {
                dfn[s.index()] = vertex.len() as u32;
                vertex.push(s.as_u32());
                parent[s.index()] = b;
                stack.push((s.as_u32(), 0));
            }
        } else {
            stack.pop();
        }
    }
    let count = vertex.len();
    // Work on preorder numbers from here on. Buckets are linked lists threaded through
    // `bucket_next`: the order their members are settled in does not change the result.
    let mut semi = BVec::from_iter_in(0..count as u32, scratch);
    let mut label = BVec::from_iter_in(0..count as u32, scratch);
    let ancestor = scratch.alloc_slice_fill_copy(count, NONE);
    let dom = scratch.alloc_slice_fill_copy(count, NONE);
    let bucket_head = scratch.alloc_slice_fill_copy(count, NONE);
    let bucket_next = scratch.alloc_slice_fill_copy(count, NONE);
    let mut path = BVec::with_capacity_in(count, scratch);

    for w in (1..count).rev() {
        let block = vertex[w];
        for &p in cfg.predecessors(BlockId::new(block)) {
            let v = dfn[p.index()];
            if v == NONE {
                continue;
            }
            let u = eval(v, ancestor, &mut label, &semi, &mut path);
            if semi[u as usize] < semi[w] {
                semi[w] = semi[u as usize];
            }
        }
        let s = semi[w] as usize;
        bucket_next[w] = bucket_head[s];
        bucket_head[s] = w as u32;
        let pw = dfn[parent[block as usize] as usize];
        ancestor[w] = pw;
        let mut v = std::mem::replace(&mut bucket_head[pw as usize], NONE);
        while v != NONE {
            let u = eval(v, ancestor, &mut label, &semi, &mut path);
            dom[v as usize] = if semi[u as usize] < semi[v as usize] {
                u
            } else {
                pw
            };
            v = bucket_next[v as usize];
        }
    }
    for w in 1..count {
        if dom[w] != semi[w] {
            dom[w] = dom[dom[w] as usize];
        }
    }
    let idom = scratch.alloc_slice_fill_copy(n, NONE);
    for w in 1..count {
        idom[vertex[w] as usize] = vertex[dom[w] as usize];
    }
    (idom, vertex.into_bump_slice())
}

/// [`lengauer_tarjan`]'s immediate dominators of a CFG whose edges all go to later blocks
/// (most functions: no loops). Block order is then a topological order, in which every
/// dominator comes before the blocks it dominates: one pass in that order, meeting the
/// predecessors' dominator chains as Cooper, Harvey and Kennedy's `intersect` does, is
/// exact.
fn forward_immediate_dominators<'b>(cfg: &Cfg, scratch: &'b Bump) -> &'b mut [u32] {
    let n = cfg.blocks.len();
    let idom = scratch.alloc_slice_fill_copy(n, NONE);
    // Reached from the entry by successor edges, as the depth-first walk would find.
    let reached = scratch.alloc_slice_fill_copy(n, false);
    reached[0] = true;
    for b in 1..n {
        let mut d = NONE;
        for &p in cfg.predecessors(BlockId::new(b as u32)) {
            let mut p = p.as_u32();
            if !reached[p as usize] {
                continue;
            }
            if d == NONE {
                d = p;
                continue;
            }
            while d != p {
                while d > p {
                    d = idom[d as usize];
                }
                while p > d {
                    p = idom[p as usize];
                }
            }
        }
        if d != NONE {
            idom[b] = d;
            reached[b] = true;
        }
    }
    idom
}

/// A set of blocks that can be emptied in time proportional to its size.
struct Visited<'b> {
    flags: &'b mut [bool],
    members: BVec<'b, usize>,
}

impl Visited<'_> {
    /// Adds `b`; false if it was a member.
    fn insert(&mut self, b: usize) -> bool {
        if std::mem::replace(&mut self.flags[b], true) {
            return false;
        }
        self.members.push(b);
        true
    }

    fn clear(&mut self) {
        for b in self.members.drain(..) {
            self.flags[b] = false;
        }
    }
}

/// "No block" in the scratch arrays of this module.
const NONE: u32 = u32::MAX;

/// `dominates(a, b)` of zend_ssa.c: whether `a` dominates `b` in the dominator tree the
/// blocks' `idom` and `level` describe now (every block dominates itself; a block outside
/// the tree is dominated only by itself). Walks up from `b` while it is deeper than `a`, as
/// PHP does, so it never answers from a cache an edit left stale.
///
/// The tree must have been computed ([`Cfg::compute_dominators_tree`]): a reachable block
/// without a level is a caller bug (asserted in debug builds). For many queries on a tree
/// that does not change meanwhile, take a [`DomIntervals`] snapshot.
pub fn dominates(cfg: &Cfg, a: BlockId, b: BlockId) -> bool {
    let blocks = &cfg.blocks;
    debug_assert!(
        [a, b]
            .iter()
            .all(|x| blocks[x.index()].level.is_some() || !blocks[x.index()].is_reachable()),
        "dominates({a}, {b}) before the dominator tree was computed"
    );
    let target = blocks[a.index()].level;
    let mut b = b;
    // `None` (outside the tree) orders below every level, as PHP's -1 does.
    while blocks[b.index()].level > target {
        match blocks[b.index()].idom {
            Some(up) => b = up,
            None => return false,
        }
    }
    a == b
}

/// Entry and exit times of every block in a walk of the dominator forest, for O(1)
/// dominance queries: a snapshot of the tree the blocks' `idom` links describe when it is
/// taken (children are derived from `idom`, not from `children`/`next_child`). Take it
/// after the last edit of the tree; it is not updated by later edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomIntervals {
    /// `(entry, exit)` per block; `u32::MAX` for blocks outside the tree.
    interval: Vec<(u32, u32)>,
}

impl DomIntervals {
    pub fn new(cfg: &Cfg) -> DomIntervals {
        DomIntervals::new_in(cfg, &Bump::new())
    }

    /// [`DomIntervals::new`], with its working arrays in `scratch`.
    pub fn new_in(cfg: &Cfg, scratch: &Bump) -> DomIntervals {
        let n = cfg.blocks.len();
        // Children lists from the idom links, in block order.
        let first_child = scratch.alloc_slice_fill_copy(n, NONE);
        let next_sibling = scratch.alloc_slice_fill_copy(n, NONE);
        for j in (0..n).rev() {
            let block = &cfg.blocks[j];
            if !block.is_reachable() {
                continue;
            }
            if let Some(d) = block.idom {
                next_sibling[j] = first_child[d.index()];
                first_child[d.index()] = j as u32;
            }
        }
        let mut interval = vec![(u32::MAX, u32::MAX); n];
        let mut time = 0u32;
        // A path of the tree at most: sized so, not grown from empty.
        let mut stack = BVec::with_capacity_in(n, scratch);
        for root in 0..n {
            let block = &cfg.blocks[root];
            if !block.is_reachable() || block.idom.is_some() {
                continue;
            }
            interval[root].0 = time;
            time += 1;
            stack.push((root as u32, first_child[root]));
            while let Some((b, child)) = stack.last_mut() {
                if *child != NONE {
                    let c = *child as usize;
                    *child = next_sibling[c];
                    interval[c].0 = time;
                    time += 1;
                    stack.push((c as u32, first_child[c]));
                } else {
                    interval[*b as usize].1 = time;
                    time += 1;
                    stack.pop();
                }
            }
        }
        DomIntervals { interval }
    }

    /// Whether `a` dominates `b` in the snapshot (same answers as [`dominates`] on the
    /// tree the snapshot was taken from).
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        if a == b {
            return true;
        }
        match (self.interval.get(a.index()), self.interval.get(b.index())) {
            (Some(&(a_in, a_out)), Some(&(b_in, b_out))) => {
                a_in != u32::MAX && a_in <= b_in && b_out <= a_out
            }
            _ => false,
        }
    }
}

impl Cfg {
    /// Whether every edge goes to a later block.
    fn edges_go_forward(&self) -> bool {
        (0..self.blocks.len()).all(|b| {
            self.successors(BlockId::new(b as u32))
                .iter()
                .all(|s| s.index() > b)
        })
    }

    /// Computes `idom`, `children`/`next_child` (children in block order) and `level`
    /// with Cooper, Harvey and Kennedy's "A Simple, Fast Dominance Algorithm", iterating
    /// blocks in number order as PHP does.
    pub fn compute_dominators_tree(&mut self) {
        self.compute_dominators_tree_in(&Bump::new())
    }

    /// [`Cfg::compute_dominators_tree`], with its working arrays in `scratch`.
    pub fn compute_dominators_tree_in(&mut self, scratch: &Bump) {
        for block in &mut self.blocks {
            block.idom = None;
            block.children = None;
            block.next_child = None;
            block.level = None;
        }
        let forward = self.edges_go_forward();
        self.compute_new_dominators_tree(forward, scratch);
    }

    /// [`Cfg::compute_dominators_tree_in`] of a CFG whose blocks have no dominator links
    /// yet (as built), `forward` being [`Cfg::edges_go_forward`]: the build knows both, and
    /// spares the blocks' reset and the edges' scan.
    pub(crate) fn compute_new_dominators_tree(&mut self, forward: bool, scratch: &Bump) {
        let n = self.blocks.len();
        if n == 1 {
            self.blocks[0].level = Some(0);
            return;
        }
        // With the blocks in an order where every block comes after its immediate
        // dominator, one walk gives the levels: block order when edges only go forward,
        // else the preorder of Lengauer and Tarjan's walk.
        let (idom, preorder) = if forward {
            (forward_immediate_dominators(self, scratch), None)
        } else {
            let (idom, preorder) = lengauer_tarjan(self, scratch);
            (idom, Some(preorder))
        };

        // Children lists sorted by block number: appending in increasing order. Levels:
        // depth in the tree; roots (the entry and blocks no walk from the entry reaches)
        // are at level 0, and only reachable blocks are in the tree.
        let last_child: &mut [Option<BlockId>] = scratch.alloc_slice_fill_copy(n, None);
        for (j, &d) in idom.iter().enumerate() {
            let reachable = self.blocks[j].is_reachable();
            if d == NONE {
                if reachable {
                    self.blocks[j].level = Some(0);
                }
                continue;
            }
            let d = d as usize;
            self.blocks[j].idom = Some(BlockId::new(d as u32));
            if !reachable {
                continue;
            }
            let child = BlockId::new(j as u32);
            match last_child[d] {
                None => self.blocks[d].children = Some(child),
                Some(prev) => self.blocks[prev.index()].next_child = Some(child),
            }
            last_child[d] = Some(child);
            if forward {
                self.blocks[j].level = self.blocks[d].level.map(|l| l + 1);
            }
        }
        for &b in preorder.unwrap_or_default() {
            let b = b as usize;
            if let (true, Some(d)) = (self.blocks[b].is_reachable(), self.blocks[b].idom) {
                self.blocks[b].level = self.blocks[d.index()].level.map(|l| l + 1);
            }
        }
    }

    /// Marks loop headers and irreducible loops and sets each block's `loop_header`
    /// (Sreedhar, Gao and Lee, "Identifying Loops Using DJ Graphs"), exactly as PHP walks
    /// them. Needs the dominator tree. Adds `NO_LOOPS` / `IRREDUCIBLE` to `func_flags`.
    pub fn identify_loops(&mut self) {
        self.identify_loops_in(&Bump::new())
    }

    /// [`Cfg::identify_loops`], with its working arrays in `scratch`.
    pub fn identify_loops_in(&mut self, scratch: &Bump) {
        for block in &mut self.blocks {
            block.loop_header = None;
            block
                .flags
                .remove(BlockFlags::LOOP_HEADER | BlockFlags::IRREDUCIBLE_LOOP);
        }
        let forward = self.edges_go_forward();
        self.identify_new_loops(forward, scratch);
    }

    /// [`Cfg::identify_loops_in`] of a CFG whose blocks have no loop marks yet (as built),
    /// `forward` being [`Cfg::edges_go_forward`].
    pub(crate) fn identify_new_loops(&mut self, forward: bool, scratch: &Bump) {
        let n = self.blocks.len();
        let mut flag = FuncFlags::NO_LOOPS;
        // Without an edge to an earlier block (or itself) the CFG has no cycle: no loop
        // header, reducible or not.
        if n == 1 || forward {
            self.func_flags |= flag;
            return;
        }

        // A worklist: a stack plus a "visited" set that popping does not clear. The set
        // remembers its members, so that clearing it (once per loop header found with an
        // empty stack) costs what was added since, not the number of blocks.
        let mut visited = Visited {
            flags: scratch.alloc_slice_fill_copy(n, false),
            members: BVec::with_capacity_in(n, scratch),
        };
        let mut stack = BVec::with_capacity_in(n, scratch);
        let push = |visited: &mut Visited<'_>, stack: &mut BVec<usize>, b: usize| -> bool {
            if !visited.insert(b) {
                return false;
            }
            stack.push(b);
            true
        };

        // DFS over the DJ graph (dominator-tree edges, then join edges) recording entry and
        // exit times, for ancestor queries on the DJ spanning tree. Each stacked block keeps
        // a cursor: PHP rescans from the start, but what it already pushed stays visited.
        let entry_times = scratch.alloc_slice_fill_copy(n, -1i64);
        let exit_times = scratch.alloc_slice_fill_copy(n, -1i64);
        // Cursor: (next child, successor index).
        let cursor: &mut [(Option<BlockId>, usize)] = scratch.alloc_slice_fill_copy(n, (None, 0));
        push(&mut visited, &mut stack, 0);
        cursor[0] = (self.blocks[0].children, 0);
        let mut time = 0i64;
        while let Some(&i) = stack.last() {
            if entry_times[i] == -1 {
                entry_times[i] = time;
                time += 1;
            }
            let mut pushed = false;
            while let Some(child) = cursor[i].0 {
                cursor[i].0 = self.blocks[child.index()].next_child;
                if push(&mut visited, &mut stack, child.index()) {
                    cursor[child.index()] = (self.blocks[child.index()].children, 0);
                    pushed = true;
                    break;
                }
            }
            if pushed {
                continue;
            }
            let succs = self.successors(BlockId::new(i as u32));
            while cursor[i].1 < succs.len() {
                let succ = succs[cursor[i].1];
                cursor[i].1 += 1;
                if self.blocks[succ.index()].idom == Some(BlockId::new(i as u32)) {
                    continue;
                }
                if push(&mut visited, &mut stack, succ.index()) {
                    cursor[succ.index()] = (self.blocks[succ.index()].children, 0);
                    pushed = true;
                    break;
                }
            }
            if pushed {
                continue;
            }
            exit_times[i] = time;
            time += 1;
            stack.pop();
        }

        // The tree does not change while loops are identified: one snapshot answers the
        // back-edge queries in O(1).
        let tree = DomIntervals::new_in(self, scratch);

        // Blocks by dominator-tree level (breadth first), processed deepest first.
        let mut sorted = BVec::with_capacity_in(n, scratch);
        sorted.push(0usize);
        let mut head = 0;
        while head < sorted.len() {
            let b = sorted[head];
            head += 1;
            let mut child = self.blocks[b].children;
            while let Some(c) = child {
                sorted.push(c.index());
                child = self.blocks[c.index()].next_child;
            }
        }

        // `root[j]`: a block on the path of loop_header links from `j` to its end.
        let mut root = BVec::from_iter_in(0..n, scratch);
        fn find_root(root: &mut [usize], j: usize) -> usize {
            let mut r = j;
            while root[r] != r {
                r = root[r];
            }
            let mut x = j;
            while root[x] != r {
                let next = root[x];
                root[x] = r;
                x = next;
            }
            r
        }
        while let Some(i) = sorted.pop() {
            let preds_count = self.blocks[i].predecessors_count();
            if preds_count < 2 {
                // A loop header has at least two incoming edges.
                continue;
            }
            for k in 0..preds_count {
                let pred = self.predecessors(BlockId::new(i as u32))[k];
                // A join edge: the predecessor does not immediately dominate the block.
                if self.blocks[i].idom == Some(pred) {
                    continue;
                }
                if tree.dominates(BlockId::new(i as u32), pred) {
                    // A back edge.
                    self.blocks[i].flags |= BlockFlags::LOOP_HEADER;
                    flag.remove(FuncFlags::NO_LOOPS);
                    if stack.is_empty() {
                        visited.clear();
                    }
                    push(&mut visited, &mut stack, pred.index());
                } else if entry_times[pred.index()] > entry_times[i]
                    && exit_times[pred.index()] < exit_times[i]
                {
                    // A cross-join edge to an ancestor on the DJ spanning tree.
                    self.blocks[i].flags |= BlockFlags::IRREDUCIBLE_LOOP;
                    flag |= FuncFlags::IRREDUCIBLE;
                    flag.remove(FuncFlags::NO_LOOPS);
                }
            }
            while let Some(j) = stack.pop() {
                // The outermost loop header found so far above `j` (PHP follows the
                // loop_header links; a compressed copy of them gives the same block).
                let j = find_root(&mut root, j);
                if j != i {
                    if self.blocks[j].idom.is_none() && j != 0 {
                        // Unreachable or only abnormally reachable.
                        continue;
                    }
                    self.blocks[j].loop_header = Some(BlockId::new(i as u32));
                    root[j] = i;
                    for k in 0..self.blocks[j].predecessors_count() {
                        let p = self.predecessors(BlockId::new(j as u32))[k];
                        push(&mut visited, &mut stack, p.index());
                    }
                }
            }
        }
        self.func_flags |= flag;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{generate, Shape};
    use crate::BuildFlags;

    /// Every reachable block's level is its depth in the `idom` tree, and its children are
    /// the blocks it immediately dominates, in block order, with loops and without.
    #[test]
    fn levels_and_children_follow_idom() {
        for shape in [Shape::IfChain, Shape::Switch, Shape::LoopNest] {
            for size in [1, 10, 200] {
                let op_array = generate(shape, size, 4);
                let cfg = Cfg::build(&op_array, BuildFlags::NO_ENTRY_PREDECESSORS).unwrap();
                let mut rebuilt = cfg.clone();
                rebuilt.compute_dominators_tree();
                assert_eq!(rebuilt, cfg, "{shape:?} {size}");
                for (j, block) in cfg.blocks.iter().enumerate() {
                    if !block.is_reachable() {
                        assert_eq!(block.level, None);
                        continue;
                    }
                    let mut depth = 0;
                    let mut up = block.idom;
                    while let Some(d) = up {
                        depth += 1;
                        up = cfg.blocks[d.index()].idom;
                    }
                    assert_eq!(block.level, Some(depth), "{shape:?} {size} BB{j}");
                    let mut children = Vec::new();
                    let mut child = block.children;
                    while let Some(c) = child {
                        children.push(c.index());
                        child = cfg.blocks[c.index()].next_child;
                    }
                    let expected: Vec<usize> = (0..cfg.blocks.len())
                        .filter(|&k| {
                            cfg.blocks[k].is_reachable()
                                && cfg.blocks[k].idom == Some(BlockId::new(j as u32))
                        })
                        .collect();
                    assert_eq!(children, expected, "{shape:?} {size} BB{j}");
                }
            }
        }
    }

    /// The one-pass dominators of forward-only CFGs equal Lengauer and Tarjan's.
    #[test]
    fn forward_dominators_match_lengauer_tarjan() {
        let mut forward_seen = 0;
        for shape in [Shape::IfChain, Shape::Switch, Shape::LoopNest] {
            for size in [10, 50, 200, 1000] {
                let op_array = generate(shape, size, 4);
                let cfg = Cfg::build_blocks(&op_array, BuildFlags::empty()).unwrap();
                let scratch = Bump::new();
                let (lt, _) = lengauer_tarjan(&cfg, &scratch);
                if cfg.edges_go_forward() {
                    forward_seen += 1;
                    let fwd = forward_immediate_dominators(&cfg, &scratch);
                    assert_eq!(&fwd[..], &lt[..], "{shape:?} {size}");
                }
            }
        }
        assert!(
            forward_seen >= 8,
            "the forward-only shapes were not forward-only"
        );
    }
}
