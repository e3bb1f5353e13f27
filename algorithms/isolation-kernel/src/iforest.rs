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

use ndarray::ArrayView1;
use rand::Rng;

use crate::input::{Point, Rows, DENSIFY_LIMIT};

/// Attribute draws from the candidate list before the node's non-constant attributes are listed.
pub const REJECTION_TRIES: usize = 4;

/// Rows walked together by [`IsolationTree::leaves_of_block`]: independent walks interleaved,
/// so that their loads overlap instead of each level waiting for the one before.
pub(crate) const LANES: usize = 16;

/// One node of an [`IsolationTree`]: a split `x_attr < split` (left, node k + 1) with its right
/// child `next`, or a leaf: `split` NaN, `attr` 0 and `next` = k itself, so that one more step
/// of the walk (`x_0 < NaN` is false) stays on the leaf. 16 bytes, so a walk reads one cache
/// line per node and a left child (the next node) is usually on the same line.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Node {
    split: f64,
    attr: u32,
    next: u32,
}

impl Node {
    fn is_leaf(&self) -> bool {
        self.split.is_nan()
    }
}

impl PartialEq for Node {
    /// Bit equality (a leaf's NaN equals itself).
    fn eq(&self, other: &Self) -> bool {
        self.split.to_bits() == other.split.to_bits()
            && self.attr == other.attr
            && self.next == other.next
    }
}

/// One isolation tree, stored as one array of nodes in depth-first pre-order: node k's left
/// child is k + 1; `nodes[k].next` is its right child (or k itself when node k is a leaf), and
/// `leaf_ids[k]` the leaf id of a leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct IsolationTree {
    nodes: Vec<Node>,
    /// Per node: its leaf id (leaves), 0 (splits).
    leaf_ids: Vec<u32>,
    n_leaves: u32,
    /// The largest attribute a node reads (0 for a single leaf).
    max_attr: usize,
    /// Row numbers (in the data the tree was built from) of the subsample 𝒟_i, in draw order.
    sample: Vec<usize>,
}

/// The top of an [`IsolationTree`] above a depth ([`IsolationTree::top`]).
#[derive(Debug, Clone)]
pub(crate) struct Top {
    pub(crate) splits: Vec<TopSplit>,
    /// The node index of each exit, in pre-order.
    pub(crate) exits: Vec<u32>,
}

/// A split node of a [`Top`]: `x_attr < split` (left), its left subtree holding the exits
/// lo..hi.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TopSplit {
    pub(crate) attr: u32,
    pub(crate) split: f64,
    pub(crate) lo: u32,
    pub(crate) hi: u32,
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
            nodes: Vec::new(),
            leaf_ids: Vec::new(),
            n_leaves: 0,
            max_attr: 0,
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
            let k = tree.nodes.len();
            if let Some(parent) = task.right_of {
                tree.nodes[parent].next = k as u32;
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
                    tree.nodes.push(Node {
                        split: f64::NAN,
                        attr: 0,
                        next: k as u32,
                    });
                    tree.leaf_ids.push(tree.n_leaves);
                    tree.n_leaves += 1;
                }
                Some((a, s, candidates)) => {
                    tree.nodes.push(Node {
                        split: s,
                        attr: a,
                        next: 0, // patched when the right child is made
                    });
                    tree.leaf_ids.push(0);
                    tree.max_attr = tree.max_attr.max(a as usize);
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

    /// The top of the tree above depth `h`, for the bit vectors of [`crate::ranked`]
    /// (QuickScorer): its exits, the nodes at depth h and the leaves above it, by node index in
    /// pre-order; and its split nodes above depth h ([`TopSplit`]), each with the exits lo..hi
    /// its left subtree holds. With h above the tree's depth the exits are the
    /// leaves (exit i is leaf i). A point that does *not* go left at a node cannot reach the
    /// exits of its left subtree, and the point's exit is the lowest exit no such node clears
    /// (that exit is never cleared, since a node clearing it would have sent the point left,
    /// and any exit left of it is cleared by the nearest common ancestor of the two, where the
    /// point went right). The same comparisons as the walk, so the same exits.
    pub(crate) fn top(&self, h: usize) -> Top {
        // Depths in pre-order: the children of node k come after it.
        let mut depth = vec![0usize; self.nodes.len()];
        for (k, node) in self.nodes.iter().enumerate() {
            if !node.is_leaf() {
                depth[k + 1] = depth[k] + 1;
                depth[node.next as usize] = depth[k] + 1;
            }
        }
        let is_exit = |k: usize| depth[k] == h || (depth[k] < h && self.nodes[k].is_leaf());
        // exits_before[k]: the exits among nodes 0..k (an exit's subtree is a run of nodes).
        let mut exits_before = Vec::with_capacity(self.nodes.len() + 1);
        exits_before.push(0u32);
        let mut exits = Vec::new();
        for k in 0..self.nodes.len() {
            if is_exit(k) {
                exits.push(k as u32);
            }
            exits_before.push(exits.len() as u32);
        }
        let splits = self
            .nodes
            .iter()
            .enumerate()
            .filter(|&(k, n)| depth[k] < h && !n.is_leaf())
            .map(|(k, node)| TopSplit {
                attr: node.attr,
                split: node.split,
                // The left subtree is nodes k + 1 .. next.
                lo: exits_before[k + 1],
                hi: exits_before[node.next as usize],
            })
            .collect();
        Top { splits, exits }
    }

    /// The leaf id of node `k`, a leaf.
    pub(crate) fn leaf_id(&self, k: usize) -> u32 {
        self.leaf_ids[k]
    }

    /// φ_i(x): the leaf id of the cell holding `x` (descend left while `x_a < s`). `x` must have
    /// the tree's dimension.
    pub(crate) fn leaf_of<P: Point>(&self, x: &P) -> u32 {
        let mut k = 0;
        let mut node = self.nodes[0];
        while !node.is_leaf() {
            k = if x.value(node.attr) < node.split {
                k + 1
            } else {
                node.next as usize
            };
            node = self.nodes[k];
        }
        self.leaf_ids[k]
    }

    /// φ_i of a block of dense rows, in groups of [`LANES`] rows stored column by column:
    /// attribute a of row r is `block[g·LANES·dim + a·LANES + l]` with r = g·LANES + l (dim =
    /// the tree's dimension, the block a whole number of groups). The leaf id of each of its
    /// first `rows` rows goes to `out[r·stride]` (the others are padding). The same leaves as
    /// [`Self::leaf_of`] (the same comparisons): walked [`LANES`] rows at a time, each step
    /// moving every lane one level down with a conditional move instead of a branch (a lane on
    /// a leaf stays there), until a step moves none.
    pub(crate) fn leaves_of_block(
        &self,
        block: &[f64],
        dim: usize,
        rows: usize,
        out: &mut [u32],
        stride: usize,
    ) {
        assert!(
            self.max_attr < dim
                && block.len().is_multiple_of(LANES * dim)
                && rows * dim <= block.len(),
            "internal error: a block of rows narrower than the tree, or not whole groups"
        );
        for (g, group) in block.chunks_exact(LANES * dim).enumerate() {
            let first = g * LANES;
            if first >= rows {
                break;
            }
            let mut k = [0usize; LANES];
            self.walk_group(group, &mut k, None);
            for (lane, &k) in k.iter().enumerate().take(rows - first) {
                out[(first + lane) * stride] = self.leaf_ids[k];
            }
        }
    }

    /// Walks the [`LANES`] rows of `group` (their values attribute by attribute, as in
    /// [`Self::leaves_of_block`]; at least `max_attr + 1` attributes) from the nodes `k` down to
    /// their leaves, every step moving each lane one level down with a conditional move
    /// instead of a branch (a lane on a leaf stays there): `steps` steps when given (the
    /// leaves must be at most that far below every start), else until a step moves none.
    /// Every `k` must be a node of the tree.
    #[inline(always)]
    pub(crate) fn walk_group(&self, group: &[f64], k: &mut [usize; LANES], steps: Option<usize>) {
        assert!(
            group.len() > self.max_attr * LANES + LANES - 1
                && k.iter().all(|&k| k < self.nodes.len()),
            "internal error: a group narrower than the tree, or a start outside it"
        );
        let nodes = self.nodes.as_ptr();
        let group = group.as_ptr();
        let mut left = steps.unwrap_or(usize::MAX);
        while left > 0 {
            left -= 1;
            let mut moved = 0;
            for (lane, k) in k.iter_mut().enumerate() {
                // SAFETY: k is a node index (a start, checked above, or a `next` or k + 1 of a
                // split, which the build makes valid nodes; a leaf's `next` is itself), and
                // every attribute is at most `max_attr`, so both reads are inside `nodes` and
                // inside this group (checked above).
                let (node, x) = unsafe {
                    let node = *nodes.add(*k);
                    (node, *group.add(node.attr as usize * LANES + lane))
                };
                // A conditional move, not a jump that would mispredict half the time.
                let next =
                    std::hint::select_unpredictable(x < node.split, *k + 1, node.next as usize);
                moved |= next ^ *k;
                *k = next;
            }
            if steps.is_none() && moved == 0 {
                break;
            }
        }
    }

    /// Number of leaves (cells), at most ψ.
    pub fn n_leaves(&self) -> usize {
        self.n_leaves as usize
    }

    /// Number of nodes (2·leaves − 1).
    pub fn n_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Depth of the deepest leaf (root at depth 0).
    pub fn depth(&self) -> usize {
        let mut max = 0;
        let mut stack = vec![(0usize, 0usize)];
        while let Some((k, d)) = stack.pop() {
            if self.nodes[k].is_leaf() {
                max = max.max(d);
            } else {
                stack.push((k + 1, d + 1));
                stack.push((self.nodes[k].next as usize, d + 1));
            }
        }
        max
    }

    /// Row numbers of the subsample 𝒟_i the tree was built on, in draw order.
    pub fn sample(&self) -> &[usize] {
        &self.sample
    }
}

/// φ_i(x) of every tree i into `out` (spec §3 step 2). A sparse `x` of dimension `dim` ≤
/// [`DENSIFY_LIMIT`](crate::input::DENSIFY_LIMIT) is densified once for the t walks, which then
/// read an attribute by index instead of binary-searching the row at every level (the same
/// values, so the same leaves).
pub(crate) fn leaves_into<P: Point>(trees: &[IsolationTree], x: &P, dim: usize, out: &mut [u32]) {
    match x.densified(dim) {
        Some(dense) => {
            let dense = ArrayView1::from(&dense[..]);
            for (o, tree) in out.iter_mut().zip(trees) {
                *o = tree.leaf_of(&dense);
            }
        }
        None => {
            for (o, tree) in out.iter_mut().zip(trees) {
                *o = tree.leaf_of(x);
            }
        }
    }
}

/// Bytes of densified rows walked through each tree before the next tree: the block stays in
/// L2 beside a tree of up to ψ = 1024 leaves.
const BLOCK_BYTES: usize = 64 * 1024;

/// φ(x) of the rows `ids` of `rows` into `out` (`ids.len()` × t, row-major), for dimensions up
/// to [`DENSIFY_LIMIT`], by walks (where the processor has AVX2 the kernel takes the bit vectors
/// of [`crate::ranked`] instead): the rows are densified a block at a time and each tree walks
/// the whole block ([`IsolationTree::leaves_of_block`]) before the next tree, so a tree's nodes
/// are read from cache for every row of the block. The same leaves as [`leaves_into`] row by
/// row; above the limit, that is what it does. `rows` must be valid and of the trees'
/// dimension, every id below its row count, and `out` of the right length.
pub(crate) fn leaves_of_rows(trees: &[IsolationTree], rows: Rows, ids: &[usize], out: &mut [u32]) {
    let (t, dim) = (trees.len(), rows.dim());
    if dim > DENSIFY_LIMIT {
        for (o, &i) in out.chunks_exact_mut(t).zip(ids) {
            match rows {
                Rows::Dense(x) => leaves_into(trees, &x.row(i), dim, o),
                Rows::Sparse(x) => leaves_into(trees, &x.row(i), dim, o),
            }
        }
        return;
    }
    // Whole groups of LANES rows; the last block's padding rows hold finite values (walked,
    // not written).
    let per_block = (BLOCK_BYTES / (8 * dim * LANES)).max(1) * LANES;
    let mut block = vec![0.0; per_block * dim];
    for (ids, out) in ids.chunks(per_block).zip(out.chunks_mut(per_block * t)) {
        let block = &mut block[..ids.len().div_ceil(LANES) * LANES * dim];
        densify_block(rows, ids, block);
        for (b, tree) in trees.iter().enumerate() {
            tree.leaves_of_block(block, dim, ids.len(), &mut out[b..], t);
        }
    }
}

/// The rows `ids` of `rows` into `block` in groups of [`LANES`] rows stored column by column
/// (row p's attribute a at `p / LANES · LANES · dim + a · LANES + p % LANES`), `block` whole
/// groups of at least `ids.len()` rows (the padding rows keep finite values).
pub(crate) fn densify_block(rows: Rows, ids: &[usize], block: &mut [f64]) {
    let dim = rows.dim();
    let at = |p: usize| p / LANES * LANES * dim + p % LANES;
    match rows {
        Rows::Dense(x) => {
            for (p, &i) in ids.iter().enumerate() {
                for (a, &v) in x.row(i).iter().enumerate() {
                    block[at(p) + a * LANES] = v;
                }
            }
        }
        // Zeros first, then each row's non-zeros only (a9a: 14 of 123).
        Rows::Sparse(x) => {
            block.fill(0.0);
            for (p, &i) in ids.iter().enumerate() {
                let row = x.row(i);
                for (&a, &v) in row.indices().iter().zip(row.values()) {
                    block[at(p) + a as usize * LANES] = v;
                }
            }
        }
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

/// Moves the ids satisfying `left` to the front; returns their count. Without a branch on
/// `left` (a point's side is data, which a branch predicts badly): every step swaps ids k and
/// mid, and only a left id moves mid on (ids mid..k are right ones, so a right id's swap keeps
/// them right ones). The ids of each side come in another order than a branch's partition
/// would leave them, which no step of the build reads: ranges, candidates and draws depend on
/// the sets only, so the tree is the same.
fn partition(ids: &mut [u32], left: impl Fn(u32) -> bool) -> usize {
    let mut mid = 0;
    for k in 0..ids.len() {
        let id = ids[k];
        let goes_left = left(id);
        ids[k] = ids[mid];
        ids[mid] = id;
        mid += usize::from(goes_left);
    }
    mid
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2, ArrayView1};
    use rand::seq::SliceRandom;
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

    /// `partition` puts exactly the ids a filter keeps before the others (as sets; their
    /// order within each side is free), and returns their count.
    #[test]
    fn partition_splits_the_ids_as_a_filter_does() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for n in [0usize, 1, 2, 7, 64, 301] {
            let mut ids: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
            ids.shuffle(&mut rng);
            let threshold = rng.random_range(0..3 * n as u32 + 2);
            let left = |id: u32| id < threshold;
            let mut want_left: Vec<u32> = ids.iter().copied().filter(|&id| left(id)).collect();
            let mut want_right: Vec<u32> = ids.iter().copied().filter(|&id| !left(id)).collect();
            let mid = partition(&mut ids, left);
            assert_eq!(mid, want_left.len());
            let (mut got_left, mut got_right) = (ids[..mid].to_vec(), ids[mid..].to_vec());
            for v in [
                &mut want_left,
                &mut want_right,
                &mut got_left,
                &mut got_right,
            ] {
                v.sort_unstable();
            }
            assert_eq!((got_left, got_right), (want_left, want_right), "n = {n}");
        }
    }

    /// A cell as the half-spaces `(attribute, split, went_left)` on its leaf's path.
    type Cell = Vec<(u32, f64, bool)>;

    /// Every leaf with its cell.
    fn cells(tree: &IsolationTree) -> Vec<(u32, Cell)> {
        let mut out = Vec::new();
        let mut stack = vec![(0usize, Vec::new())];
        while let Some((k, path)) = stack.pop() {
            let node = tree.nodes[k];
            if node.is_leaf() {
                out.push((tree.leaf_ids[k], path));
            } else {
                let (a, s) = (node.attr, node.split);
                let mut left = path.clone();
                left.push((a, s, true));
                let mut right = path;
                right.push((a, s, false));
                stack.push((node.next as usize, right));
                stack.push((k + 1, left));
            }
        }
        out
    }

    /// The walk of the three-array layout before [`Node`] (attribute, split and next of node k),
    /// written as a recursion over the pre-order layout, on the dense values of x.
    fn reference_leaf(tree: &IsolationTree, k: usize, x: &[f64]) -> u32 {
        let attr: Vec<u32> = tree.nodes.iter().map(|n| n.attr).collect();
        let split: Vec<f64> = tree.nodes.iter().map(|n| n.split).collect();
        let next: Vec<u32> = tree.nodes.iter().map(|n| n.next).collect();
        if split[k].is_nan() {
            tree.leaf_ids[k]
        } else if x[attr[k] as usize] < split[k] {
            reference_leaf(tree, k + 1, x)
        } else {
            reference_leaf(tree, next[k] as usize, x)
        }
    }

    /// `leaf_of` on dense and sparse rows and `leaves_into` (which densifies a sparse row below
    /// the limit, and walks the binary searches above it) reach the leaf of the reference walk,
    /// on random trees built from dense and from sparse data, with and without height limit.
    #[test]
    fn walks_reach_the_leaf_of_the_reference_walk() {
        use crate::input::{CsrRows, SparseRow};
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let d = 12;
        let draw = |rng: &mut ChaCha8Rng| match rng.random_range(0..6) {
            0..=2 => 0.0,
            3 => 1.0,
            _ => rng.random_range(-1.0..1.0),
        };
        let x = Array2::from_shape_fn((400, d), |_| draw(&mut rng));
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for row in x.rows() {
            for (a, &v) in row.iter().enumerate() {
                // Some explicit zeros (+0 and −0) among the stored entries.
                if v != 0.0 || rng.random_bool(0.1) {
                    indices.push(a as u32);
                    values.push(if v == 0.0 && rng.random_bool(0.5) {
                        -0.0
                    } else {
                        v
                    });
                }
            }
            indptr.push(indices.len());
        }
        let csr = CsrRows::new(d, &indptr, &indices, &values).unwrap();
        let sparse: Vec<SparseRow> = (0..x.nrows()).map(|i| csr.row(i)).collect();
        let dense: Vec<ArrayView1<f64>> = x.rows().into_iter().collect();
        for (seed, height_limit) in [(1, None), (2, Some(4)), (3, None)] {
            let mut trees = Vec::new();
            for (t, psi) in [(0u64, 16usize), (1, 64), (2, 256)] {
                let sample: Vec<usize> = (0..psi).map(|_| rng.random_range(0..x.nrows())).collect();
                let mut r = ChaCha8Rng::seed_from_u64(seed * 10 + t);
                let dense_pts: Vec<_> = sample.iter().map(|&i| dense[i]).collect();
                let sparse_pts: Vec<_> = sample.iter().map(|&i| sparse[i]).collect();
                let built = IsolationTree::build(&dense_pts, sample.clone(), height_limit, &mut r);
                let mut r = ChaCha8Rng::seed_from_u64(seed * 10 + t);
                let from_sparse = IsolationTree::build(&sparse_pts, sample, height_limit, &mut r);
                assert_eq!(built, from_sparse);
                trees.push(built);
            }
            for i in 0..x.nrows() {
                let row = x.row(i).to_vec();
                let expected: Vec<u32> = trees.iter().map(|t| reference_leaf(t, 0, &row)).collect();
                let walked: Vec<u32> = trees.iter().map(|t| t.leaf_of(&dense[i])).collect();
                let searched: Vec<u32> = trees.iter().map(|t| t.leaf_of(&sparse[i])).collect();
                assert_eq!((&walked, &searched), (&expected, &expected));
                let mut out = vec![0; trees.len()];
                for dim in [d, crate::input::DENSIFY_LIMIT + 1] {
                    assert_eq!(sparse[i].densified(dim).is_some(), dim == d);
                    leaves_into(&trees, &sparse[i], dim, &mut out);
                    assert_eq!(out, expected);
                }
                leaves_into(&trees, &dense[i], d, &mut out);
                assert_eq!(out, expected);
            }
            // The block walk: rows in a scrambled order with repeats, a count that leaves a
            // partial group of lanes and a partial block, dense and sparse alike.
            let n_ids = 3 * (BLOCK_BYTES / (8 * d)) + LANES + 3;
            let ids: Vec<usize> = (0..n_ids).map(|_| rng.random_range(0..x.nrows())).collect();
            let expected: Vec<u32> = ids
                .iter()
                .flat_map(|&i| {
                    let row = x.row(i).to_vec();
                    trees
                        .iter()
                        .map(|t| reference_leaf(t, 0, &row))
                        .collect::<Vec<_>>()
                })
                .collect();
            for rows in [Rows::Dense(x.view()), Rows::Sparse(csr)] {
                let mut out = vec![u32::MAX; ids.len() * trees.len()];
                leaves_of_rows(&trees, rows, &ids, &mut out);
                assert_eq!(out, expected);
            }
        }
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
        for node in &tree.nodes {
            if !node.is_leaf() {
                assert_eq!(node.attr, 0);
                assert!(node.split > 0.0 && node.split <= 3.0);
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
