//! IK_i: a partitioning H_i is an isolation tree built on a subsample 𝒟_i of ψ points
//! (ARX/DMKD §4.1; spec §3).
//!
//! A node is a leaf when it holds at most one point of 𝒟_i, when every attribute is constant on
//! its points (duplicates), or (option `height_limit` h, spec D2) at depth ≥ h with the root at
//! depth 0. Otherwise attribute a is uniform among the attributes that are non-constant on the
//! node's points (sparse rows: absent = 0) and the split s ~ U(min_a, max_a), redrawn while
//! s ≤ min_a, so that `x_a < s` (left) and `x_a ≥ s` (right) are both non-empty. A new point
//! descends with the same rule and reaches exactly one leaf. Leaf ids run over the leaves in
//! depth-first pre-order, left first, from 0; there are at most ψ of them, so φ_i(x) ∈ [0, ψ).
//!
//! The uniform draw over non-constant attributes is done by rejection from a candidate list (the
//! non-constant attributes of the nearest ancestor where they were listed), falling back to
//! listing the node's non-constant attributes after [`REJECTION_TRIES`] misses; both steps are
//! uniform over the same set, so the mixture is too, and listing costs O(nnz log nnz) on sparse
//! rows, independent of d (spec D4).

use std::rc::Rc;

use rand::Rng;

use crate::input::Point;

/// Attribute draws from the candidate list before the node's non-constant attributes are listed.
pub const REJECTION_TRIES: usize = 4;

/// Marks a leaf in [`IsolationTree`]'s attribute array.
const LEAF: u32 = u32::MAX;

/// One isolation tree, stored as flat arrays in depth-first pre-order: node k's left child is
/// k + 1; `next[k]` is its right child, or its leaf id when `attr[k]` marks a leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct IsolationTree {
    attr: Vec<u32>,
    split: Vec<f64>,
    next: Vec<u32>,
    n_leaves: u32,
    /// Row numbers (in the data the tree was built from) of the subsample 𝒟_i, in draw order.
    sample: Vec<usize>,
}

impl IsolationTree {
    /// Builds the tree on the points `points` (the subsample 𝒟_i, whose rows in the data are
    /// `sample`), with an optional height limit. `points` must be valid (finite, one dimension).
    pub(crate) fn build<P: Point, R: Rng + ?Sized>(
        points: &[P],
        sample: Vec<usize>,
        height_limit: Option<usize>,
        rng: &mut R,
    ) -> Self {
        struct Task {
            lo: usize,
            hi: usize,
            depth: usize,
            candidates: Rc<Vec<u32>>,
            right_of: Option<usize>,
        }
        let mut ids: Vec<u32> = (0..points.len() as u32).collect();
        let root_candidates = P::non_constant(points, &ids, None);
        let mut tree = Self {
            attr: Vec::new(),
            split: Vec::new(),
            next: Vec::new(),
            n_leaves: 0,
            sample,
        };
        let mut stack = vec![Task {
            lo: 0,
            hi: ids.len(),
            depth: 0,
            candidates: Rc::new(root_candidates),
            right_of: None,
        }];
        while let Some(task) = stack.pop() {
            let k = tree.attr.len();
            if let Some(parent) = task.right_of {
                tree.next[parent] = k as u32;
            }
            let node = &mut ids[task.lo..task.hi];
            let splittable = node.len() >= 2 && height_limit.is_none_or(|h| task.depth < h);
            let chosen = if splittable {
                choose_split(points, node, &task.candidates, rng)
            } else {
                None
            };
            match chosen {
                None => {
                    tree.attr.push(LEAF);
                    tree.split.push(0.0);
                    tree.next.push(tree.n_leaves);
                    tree.n_leaves += 1;
                }
                Some((a, s, candidates)) => {
                    tree.attr.push(a);
                    tree.split.push(s);
                    tree.next.push(0); // patched when the right child is made
                    let mid = task.lo + partition(node, |p| points[p as usize].value(a) < s);
                    stack.push(Task {
                        lo: mid,
                        hi: task.hi,
                        depth: task.depth + 1,
                        candidates: Rc::clone(&candidates),
                        right_of: Some(k),
                    });
                    stack.push(Task {
                        lo: task.lo,
                        hi: mid,
                        depth: task.depth + 1,
                        candidates,
                        right_of: None,
                    });
                }
            }
        }
        tree
    }

    /// φ_i(x): the leaf id of the cell holding `x` (descend left while `x_a < s`). `x` must have
    /// the tree's dimension.
    pub(crate) fn leaf_of<P: Point>(&self, x: &P) -> u32 {
        let mut k = 0;
        while self.attr[k] != LEAF {
            k = if x.value(self.attr[k]) < self.split[k] {
                k + 1
            } else {
                self.next[k] as usize
            };
        }
        self.next[k]
    }

    /// Number of leaves (cells), at most ψ.
    pub fn n_leaves(&self) -> usize {
        self.n_leaves as usize
    }

    /// Number of nodes (2·leaves − 1).
    pub fn n_nodes(&self) -> usize {
        self.attr.len()
    }

    /// Depth of the deepest leaf (root at depth 0).
    pub fn depth(&self) -> usize {
        let mut max = 0;
        let mut stack = vec![(0usize, 0usize)];
        while let Some((k, d)) = stack.pop() {
            if self.attr[k] == LEAF {
                max = max.max(d);
            } else {
                stack.push((k + 1, d + 1));
                stack.push((self.next[k] as usize, d + 1));
            }
        }
        max
    }

    /// Row numbers of the subsample 𝒟_i the tree was built on, in draw order.
    pub fn sample(&self) -> &[usize] {
        &self.sample
    }
}

/// (attribute, split, candidates for the children), or `None` when every attribute is constant.
fn choose_split<P: Point, R: Rng + ?Sized>(
    points: &[P],
    node: &[u32],
    candidates: &Rc<Vec<u32>>,
    rng: &mut R,
) -> Option<(u32, f64, Rc<Vec<u32>>)> {
    if candidates.is_empty() {
        return None;
    }
    for _ in 0..REJECTION_TRIES {
        let a = candidates[rng.random_range(0..candidates.len())];
        let (min, max) = range(points, node, a);
        if min < max {
            return Some((a, draw_split(min, max, rng), Rc::clone(candidates)));
        }
    }
    let listed = P::non_constant(points, node, Some(candidates.as_slice()));
    if listed.is_empty() {
        return None;
    }
    let a = listed[rng.random_range(0..listed.len())];
    let (min, max) = range(points, node, a);
    Some((a, draw_split(min, max, rng), Rc::new(listed)))
}

fn range<P: Point>(points: &[P], node: &[u32], a: u32) -> (f64, f64) {
    node.iter()
        .map(|&p| points[p as usize].value(a))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
}

/// s ~ U(min, max], redrawn while s ≤ min (needs min < max).
fn draw_split<R: Rng + ?Sized>(min: f64, max: f64, rng: &mut R) -> f64 {
    loop {
        let s = min + rng.random::<f64>() * (max - min);
        if s > min && s <= max {
            return s;
        }
    }
}

/// Moves the ids satisfying `left` to the front; returns their count.
fn partition(ids: &mut [u32], left: impl Fn(u32) -> bool) -> usize {
    let mut mid = 0;
    for k in 0..ids.len() {
        if left(ids[k]) {
            ids.swap(mid, k);
            mid += 1;
        }
    }
    mid
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2, ArrayView1};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn build(x: &Array2<f64>, height_limit: Option<usize>, seed: u64) -> IsolationTree {
        let points: Vec<ArrayView1<f64>> = x.rows().into_iter().collect();
        let sample = (0..x.nrows()).collect();
        IsolationTree::build(
            &points,
            sample,
            height_limit,
            &mut ChaCha8Rng::seed_from_u64(seed),
        )
    }

    /// A cell as the half-spaces `(attribute, split, went_left)` on its leaf's path.
    type Cell = Vec<(u32, f64, bool)>;

    /// Every leaf with its cell.
    fn cells(tree: &IsolationTree) -> Vec<(u32, Cell)> {
        let mut out = Vec::new();
        let mut stack = vec![(0usize, Vec::new())];
        while let Some((k, path)) = stack.pop() {
            if tree.attr[k] == LEAF {
                out.push((tree.next[k], path));
            } else {
                let (a, s) = (tree.attr[k], tree.split[k]);
                let mut left = path.clone();
                left.push((a, s, true));
                let mut right = path;
                right.push((a, s, false));
                stack.push((tree.next[k] as usize, right));
                stack.push((k + 1, left));
            }
        }
        out
    }

    #[test]
    fn full_isolation_puts_every_subsample_point_in_its_own_leaf() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let x = Array2::from_shape_fn((64, 3), |_| rng.random::<f64>());
        for seed in 0..5 {
            let tree = build(&x, None, seed);
            assert_eq!(tree.n_leaves(), 64);
            assert_eq!(tree.n_nodes(), 2 * 64 - 1);
            let mut leaves: Vec<u32> = x.rows().into_iter().map(|r| tree.leaf_of(&r)).collect();
            leaves.sort_unstable();
            assert_eq!(leaves, (0..64).collect::<Vec<u32>>());
        }
    }

    #[test]
    fn leaves_are_numbered_in_preorder_and_cells_partition_the_space() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let x = Array2::from_shape_fn((32, 4), |_| rng.random::<f64>());
        let tree = build(&x, None, 7);
        let cells = cells(&tree);
        // Pre-order, left first: the leaves come out as 0, 1, 2, ...
        let ids: Vec<u32> = cells.iter().map(|c| c.0).collect();
        assert_eq!(ids, (0..tree.n_leaves() as u32).collect::<Vec<_>>());
        // New points (also outside the data's box): exactly one cell holds each, by brute
        // force over the half-spaces, and it is the leaf the walk reaches.
        for _ in 0..500 {
            let p = ndarray::Array1::from_shape_fn(4, |_| rng.random_range(-0.5..1.5));
            let holding: Vec<u32> = cells
                .iter()
                .filter(|(_, path)| path.iter().all(|&(a, s, left)| (p[a as usize] < s) == left))
                .map(|c| c.0)
                .collect();
            assert_eq!(holding, vec![tree.leaf_of(&p.view())]);
        }
    }

    #[test]
    fn splits_lie_inside_the_node_range_and_split_it() {
        let x = array![[0.0, 5.0], [1.0, 5.0], [2.0, 5.0], [3.0, 5.0]];
        let tree = build(&x, None, 3);
        // Attribute 1 is constant: never chosen.
        for k in 0..tree.n_nodes() {
            if tree.attr[k] != LEAF {
                assert_eq!(tree.attr[k], 0);
                assert!(tree.split[k] > 0.0 && tree.split[k] <= 3.0);
            }
        }
        assert_eq!(tree.n_leaves(), 4);
    }

    #[test]
    fn duplicates_share_a_leaf_and_constant_data_is_one_leaf() {
        let x = array![[1.0, 2.0], [1.0, 2.0], [3.0, 2.0], [1.0, 2.0]];
        let tree = build(&x, None, 4);
        assert_eq!(tree.n_leaves(), 2);
        assert_eq!(tree.leaf_of(&x.row(0)), tree.leaf_of(&x.row(3)));
        let constant = array![[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]];
        let tree = build(&constant, None, 5);
        assert_eq!((tree.n_leaves(), tree.depth()), (1, 0));
    }

    #[test]
    fn height_limit_bounds_depth_and_leaves() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let x = Array2::from_shape_fn((256, 5), |_| rng.random::<f64>());
        let full = build(&x, None, 1);
        assert!(
            full.depth() > 8,
            "a full isolation tree is deeper than log2 psi"
        );
        for h in [1, 3, 8] {
            let tree = build(&x, Some(h), 1);
            assert!(tree.depth() <= h);
            assert!(tree.n_leaves() <= 1 << h);
        }
        assert_eq!(build(&x, Some(1), 1).n_leaves(), 2);
    }
}
