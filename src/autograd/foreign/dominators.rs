//! Immediate dominators of a small graph, by the iterative algorithm of Cooper, Harvey
//! and Kennedy ("A Simple, Fast Dominance Algorithm", 2001): node `d` dominates `n` when
//! every path from the root to `n` passes through `d`.

/// No dominator (the node is not reachable from the root).
pub const NONE: usize = usize::MAX;

/// For a graph given as edge lists, the nodes reachable from `root` in reverse postorder
/// (root first; every node after its immediate dominator) and each node's immediate
/// dominator (`idom[root] == root`, `NONE` for nodes the root does not reach).
pub fn immediate_dominators(edges: &[Vec<usize>], root: usize) -> (Vec<usize>, Vec<usize>) {
    let n = edges.len();
    let rpo = reverse_postorder(edges, root);
    let mut order = vec![NONE; n];
    for (k, &v) in rpo.iter().enumerate() {
        order[v] = k;
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &v in &rpo {
        for &w in &edges[v] {
            preds[w].push(v);
        }
    }
    let mut idom = vec![NONE; n];
    if n == 0 {
        return (rpo, idom);
    }
    idom[root] = root;
    let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while order[a] > order[b] {
                a = idom[a];
            }
            while order[b] > order[a] {
                b = idom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in rpo.iter().skip(1) {
            let mut new = NONE;
            for &p in &preds[v] {
                if idom[p] == NONE {
                    continue;
                }
                new = if new == NONE {
                    p
                } else {
                    intersect(&idom, p, new)
                };
            }
            if new != idom[v] {
                idom[v] = new;
                changed = true;
            }
        }
    }
    (rpo, idom)
}

/// Depth-first from `root` without recursion; returns the nodes in reverse postorder.
fn reverse_postorder(edges: &[Vec<usize>], root: usize) -> Vec<usize> {
    let mut post = Vec::new();
    if root >= edges.len() {
        return post;
    }
    let mut seen = vec![false; edges.len()];
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some((v, next)) = stack.last_mut() {
        if let Some(&w) = edges[*v].get(*next) {
            *next += 1;
            if !seen[w] {
                seen[w] = true;
                stack.push((w, 0));
            }
        } else {
            post.push(*v);
            stack.pop();
        }
    }
    post.reverse();
    post
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diamond_is_dominated_by_its_top() {
        // 0 -> 1 -> 3, 0 -> 2 -> 3, 3 -> 4
        let edges = vec![vec![1, 2], vec![3], vec![3], vec![4], vec![]];
        let (rpo, idom) = immediate_dominators(&edges, 0);
        assert_eq!(rpo[0], 0);
        assert_eq!(idom, vec![0, 0, 0, 0, 3]);
    }

    #[test]
    fn a_cycle_back_to_an_earlier_node_keeps_the_first_entry() {
        // 0 -> 1 -> 2 -> 3 -> 1 (a cycle through 1), 0 -> 4 -> 2
        let edges = vec![vec![1, 4], vec![2], vec![3], vec![1], vec![2]];
        let (_, idom) = immediate_dominators(&edges, 0);
        assert_eq!(idom, vec![0, 0, 0, 2, 0]);
    }

    #[test]
    fn unreachable_nodes_have_no_dominator() {
        let edges = vec![vec![1], vec![], vec![1]];
        let (rpo, idom) = immediate_dominators(&edges, 0);
        assert_eq!(rpo, vec![0, 1]);
        assert_eq!(idom, vec![0, 0, NONE]);
    }

    #[test]
    fn a_long_chain_does_not_recurse() {
        let n = 200_000;
        let edges: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        let (rpo, idom) = immediate_dominators(&edges, 0);
        assert_eq!(rpo.len(), n);
        assert_eq!(idom[n - 1], n - 2);
    }
}
