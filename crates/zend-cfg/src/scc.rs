//! Strongly connected components of a small directed graph given as successor lists:
//! Tarjan's algorithm with an explicit stack, so that a chain thousands of nodes deep (a
//! call graph, a web of phis) cannot overflow the thread's stack. Shared by the call
//! graph's recursion flags and the SSA cross-check; the SSA form's own SCCs follow PHP's
//! `zend_ssa_find_sccs` in zend-ssa instead, since their numbering is part of its dumps.

/// Tarjan's search over the graph whose node `v` has the successors `succ[v]`: calls
/// `component` with each strongly connected component as it completes (a component after
/// every component it reaches), its nodes in the order the search reached them.
pub fn for_each_component(succ: &[Vec<usize>], mut component: impl FnMut(&[usize])) {
    const UNVISITED: u32 = u32::MAX;
    let n = succ.len();
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    // Where a node stands on `stack` while it is there, `UNVISITED` once it has left.
    let mut position = vec![UNVISITED; n];
    let mut stack: Vec<usize> = Vec::new();
    // (node, position of the next successor to look at)
    let mut walk: Vec<(usize, usize)> = Vec::new();
    let mut next_index = 0;
    for root in 0..n {
        if index[root] != UNVISITED {
            continue;
        }
        walk.push((root, 0));
        while let Some(&mut (v, ref mut k)) = walk.last_mut() {
            if *k == 0 && index[v] == UNVISITED {
                index[v] = next_index;
                low[v] = next_index;
                next_index += 1;
                position[v] = stack.len() as u32;
                stack.push(v);
            }
            if let Some(&w) = succ[v].get(*k) {
                *k += 1;
                if index[w] == UNVISITED {
                    walk.push((w, 0));
                } else if position[w] != UNVISITED {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            walk.pop();
            if let Some(&(parent, _)) = walk.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let from = position[v] as usize;
                component(&stack[from..]);
                for &w in &stack[from..] {
                    position[w] = UNVISITED;
                }
                stack.truncate(from);
            }
        }
    }
}

/// The components of `succ` in completion order (see [`for_each_component`]), each
/// listing its nodes in the order they leave Tarjan's stack.
pub fn strongly_connected_components(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut components = Vec::new();
    for_each_component(succ, |nodes| {
        components.push(nodes.iter().rev().copied().collect())
    });
    components
}

/// The number of the component (in completion order) of every node.
pub fn component_of_each(succ: &[Vec<usize>]) -> Vec<usize> {
    let mut of = vec![0; succ.len()];
    let mut count = 0;
    for_each_component(succ, |nodes| {
        for &v in nodes {
            of[v] = count;
        }
        count += 1;
    });
    of
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `to` is reachable from `from` through at least one edge.
    fn reaches(succ: &[Vec<usize>], from: usize, to: usize) -> bool {
        let mut seen = vec![false; succ.len()];
        let mut stack = succ[from].clone();
        while let Some(x) = stack.pop() {
            if x == to {
                return true;
            }
            if !std::mem::replace(&mut seen[x], true) {
                stack.extend(succ[x].iter().copied());
            }
        }
        false
    }

    #[test]
    fn components_are_mutual_reachability_in_completion_order() {
        // A small deterministic generator: graphs of 1..24 nodes, sparse to dense.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..500 {
            let n = (next() % 24 + 1) as usize;
            let density = next() % 4 + 1;
            let succ: Vec<Vec<usize>> = (0..n)
                .map(|_| {
                    (0..n)
                        .filter(|_| next() % (2 * n as u64) < density)
                        .collect()
                })
                .collect();
            let of = component_of_each(&succ);
            for a in 0..n {
                for b in 0..n {
                    if a != b {
                        let mutual = reaches(&succ, a, b) && reaches(&succ, b, a);
                        assert_eq!(of[a] == of[b], mutual, "{succ:?} {a} {b}");
                    }
                    // A component comes after every component it reaches.
                    if succ[a].contains(&b) {
                        assert!(of[b] <= of[a], "{succ:?} {a} -> {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_chain_deeper_than_any_stack() {
        let n = 200_000;
        let succ: Vec<Vec<usize>> = (0..n).map(|i| vec![(i + 1) % n]).collect();
        assert_eq!(strongly_connected_components(&succ).len(), 1);
    }
}
