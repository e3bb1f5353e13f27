//! One Mondrian tree restricted to a finite point set.
//!
//! As in the paper's construction (and the authors' code), a cell holds the indices of its points
//! and its box is the bounding box of *those points*: a cut outside the box separates none of
//! them, so the partition of the points has the law of MP(λ, ℝ^D) restricted to them
//! (projectivity). Cuts are processed in time order from a min-heap, so the tree sampled to a
//! lifetime Λ, stopped at λ < Λ, is exactly the tree sampled to λ from the same stream (nesting:
//! the draws for events up to λ happen in the same order in both).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use kernel_core::error::{check_finite, check_non_empty};
use ndarray::{ArrayView1, ArrayView2};
use rand::Rng;

use crate::error::{check_lifetime, MondrianError};
use crate::process::{sample_cut, Cut};

/// A cut that happened: node `node` was split at `time` into `left` (`x_d <= location`) and
/// `right`. Node ids are local to the tree: the root is 0 and each split creates the next two.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    pub time: f64,
    pub node: u32,
    pub dimension: usize,
    pub location: f64,
    pub left: u32,
    pub right: u32,
}

/// A Mondrian tree on the rows of a data matrix, sampled to a terminal lifetime.
#[derive(Debug, Clone, PartialEq)]
pub struct MondrianTree {
    lifetime: f64,
    /// Number of coordinates D of the points it was sampled on.
    dim: usize,
    splits: Vec<Split>,
    /// Index in `splits` of the split of every node, [`NO_SPLIT`] for leaves (routing).
    split_of_node: Vec<u32>,
    n_nodes: u32,
    leaf_of_point: Vec<u32>,
    /// A permutation of the points in which every node's points are contiguous.
    order: Vec<u32>,
    /// `order[range[node].0..range[node].1]` are the points of `node`.
    range: Vec<(u32, u32)>,
}

/// Marks a node without a split (a leaf at the terminal lifetime).
const NO_SPLIT: u32 = u32::MAX;

/// A scheduled cut of `node`, ordered by time (then node id) for a min-heap.
#[derive(Debug, Clone, Copy)]
struct Pending {
    cut: Cut,
    node: u32,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    /// Reversed so that `BinaryHeap` pops the earliest cut first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .cut
            .time
            .total_cmp(&self.cut.time)
            .then_with(|| other.node.cmp(&self.node))
    }
}

/// The points of every node as ranges of one permutation of the row indices.
struct Cells<'a> {
    /// The points, row-major (`dims` coordinates each).
    x: &'a [f64],
    dims: usize,
    order: Vec<u32>,
    range: Vec<(usize, usize)>,
    scratch: Vec<u32>,
}

impl<'a> Cells<'a> {
    /// `x`: `n_points × dims`, row-major.
    fn new(x: &'a [f64], dims: usize) -> Self {
        let n = x.len() / dims;
        Self {
            x,
            dims,
            order: (0..n as u32).collect(),
            range: vec![(0, n)],
            scratch: Vec::new(),
        }
    }

    fn point(&self, i: u32) -> &[f64] {
        &self.x[i as usize * self.dims..(i as usize + 1) * self.dims]
    }

    /// Bounding box of the points of `node` (finite points: plain comparisons, exact). Eight
    /// coordinates at a time, so that the running minima and maxima stay in registers.
    fn bounds(&self, node: u32) -> (Vec<f64>, Vec<f64>) {
        let (start, end) = self.range[node as usize];
        let points = &self.order[start..end];
        let mut lower = vec![f64::INFINITY; self.dims];
        let mut upper = vec![f64::NEG_INFINITY; self.dims];
        for d0 in (0..self.dims).step_by(8) {
            let width = (self.dims - d0).min(8);
            let mut lo = [f64::INFINITY; 8];
            let mut hi = [f64::NEG_INFINITY; 8];
            if width == 8 {
                for &i in points {
                    let p = &self.point(i)[d0..d0 + 8];
                    for k in 0..8 {
                        lo[k] = if p[k] < lo[k] { p[k] } else { lo[k] };
                        hi[k] = if p[k] > hi[k] { p[k] } else { hi[k] };
                    }
                }
            } else {
                for &i in points {
                    let p = &self.point(i)[d0..d0 + width];
                    for k in 0..width {
                        lo[k] = if p[k] < lo[k] { p[k] } else { lo[k] };
                        hi[k] = if p[k] > hi[k] { p[k] } else { hi[k] };
                    }
                }
            }
            lower[d0..d0 + width].copy_from_slice(&lo[..width]);
            upper[d0..d0 + width].copy_from_slice(&hi[..width]);
        }
        (lower, upper)
    }

    /// Stable partition of `node`'s points by `x_d <= location`; returns the number going left.
    /// Branch-free: every point is written to both sides' next slot, one counter advances.
    fn partition(&mut self, node: u32, dimension: usize, location: f64) -> usize {
        let (start, end) = self.range[node as usize];
        self.scratch.clear();
        self.scratch.resize(end - start, 0);
        let (mut n_left, mut n_right) = (0, 0);
        for k in start..end {
            let i = self.order[k];
            let left = self.x[i as usize * self.dims + dimension] <= location;
            // Slot start + n_left <= k has been read already.
            self.order[start + n_left] = i;
            self.scratch[n_right] = i;
            n_left += usize::from(left);
            n_right += usize::from(!left);
        }
        self.order[start + n_left..end].copy_from_slice(&self.scratch[..n_right]);
        n_left
    }

    /// Records the children of `node` (left first) given its partition.
    fn add_children(&mut self, node: u32, n_left: usize) -> (u32, u32) {
        let (start, end) = self.range[node as usize];
        let left = self.range.len() as u32;
        self.range.push((start, start + n_left));
        self.range.push((start + n_left, end));
        (left, left + 1)
    }
}

impl MondrianTree {
    /// Samples a Mondrian tree with lifetime λ on the rows of `x` (N × D), restricted to the data.
    pub fn sample<R: Rng + ?Sized>(
        x: ArrayView2<f64>,
        lifetime: f64,
        rng: &mut R,
    ) -> Result<Self, MondrianError> {
        check_lifetime(lifetime)?;
        check_data(x)?;
        Ok(Self::sample_checked(x, lifetime, rng))
    }

    /// [`Self::sample`] on a lifetime and data already checked.
    pub(crate) fn sample_checked<R: Rng + ?Sized>(
        x: ArrayView2<f64>,
        lifetime: f64,
        rng: &mut R,
    ) -> Self {
        let standard = x.as_standard_layout();
        let mut cells = Cells::new(standard.as_slice().expect("standard layout"), x.ncols());
        let mut heap = BinaryHeap::new();
        let mut splits = Vec::new();
        schedule(&cells, 0, 0.0, lifetime, rng, &mut heap);
        while let Some(Pending { cut, node }) = heap.pop() {
            let n_left = cells.partition(node, cut.dimension, cut.location);
            let (start, end) = cells.range[node as usize];
            if n_left == 0 || n_left == end - start {
                // Only floating-point rounding of the location to a box edge gets here; the cut
                // separates nothing, and by memorylessness the cell simply waits for its next cut.
                schedule(&cells, node, cut.time, lifetime, rng, &mut heap);
                continue;
            }
            let (left, right) = cells.add_children(node, n_left);
            splits.push(Split {
                time: cut.time,
                node,
                dimension: cut.dimension,
                location: cut.location,
                left,
                right,
            });
            schedule(&cells, left, cut.time, lifetime, rng, &mut heap);
            schedule(&cells, right, cut.time, lifetime, rng, &mut heap);
        }
        let n_nodes = cells.range.len() as u32;
        let leaf_of_point = leaves_from_cells(&cells, &splits);
        let mut split_of_node = vec![NO_SPLIT; n_nodes as usize];
        for (k, split) in splits.iter().enumerate() {
            split_of_node[split.node as usize] = k as u32;
        }
        // Children partition their parent's range in place, so at the end every node's points,
        // internal nodes included, are still contiguous in `order`.
        let range = cells
            .range
            .iter()
            .map(|&(a, b)| (a as u32, b as u32))
            .collect();
        Self {
            lifetime,
            dim: x.ncols(),
            splits,
            split_of_node,
            n_nodes,
            leaf_of_point,
            order: cells.order,
            range,
        }
    }

    /// The terminal lifetime the tree was sampled to.
    pub fn lifetime(&self) -> f64 {
        self.lifetime
    }

    /// Number of coordinates D of the points the tree was sampled on.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The leaf (node id) at the terminal lifetime of the cell holding `x`, a point of ℝ^D not
    /// necessarily among the sampled ones: from the root, each split sends `x` left when
    /// `x_d <= location`, as it sent the sampled points. For a sampled point this is its entry
    /// of [`Self::leaf_of_point`]. Cells are the restriction of the Mondrian to the data, so a
    /// point outside the data's bounding box lands in the leaf whose half-spaces contain it.
    ///
    /// Panics if `x` has fewer than D coordinates.
    pub fn leaf_of(&self, x: ArrayView1<f64>) -> u32 {
        let mut node = 0u32;
        loop {
            let k = self.split_of_node[node as usize];
            if k == NO_SPLIT {
                return node;
            }
            let split = &self.splits[k as usize];
            node = if x[split.dimension] <= split.location {
                split.left
            } else {
                split.right
            };
        }
    }

    /// The splits in time order.
    pub fn splits(&self) -> &[Split] {
        &self.splits
    }

    /// Number of node ids used (root, internal and leaves): `1 + 2 · #splits`.
    pub fn n_nodes(&self) -> u32 {
        self.n_nodes
    }

    /// Number of leaves at the terminal lifetime: `1 + #splits`.
    pub fn n_leaves(&self) -> usize {
        self.splits.len() + 1
    }

    /// The points (row indices) of a node, in a fixed order.
    pub fn points_of(&self, node: u32) -> &[u32] {
        let (a, b) = self.range[node as usize];
        &self.order[a as usize..b as usize]
    }

    /// The leaf (node id) of every point at the terminal lifetime.
    pub fn leaf_of_point(&self) -> &[u32] {
        &self.leaf_of_point
    }

    /// The leaf of every point at lifetime `λ <= Λ`: the partition after all splits with
    /// `time <= λ`. `x` must be the data the tree was sampled on.
    pub fn leaves_at(&self, x: ArrayView2<f64>, lifetime: f64) -> Result<Vec<u32>, MondrianError> {
        check_lifetime(lifetime)?;
        if x.nrows() != self.leaf_of_point.len() {
            return Err(MondrianError::shape(
                "rows vs the points the tree was sampled on",
                self.leaf_of_point.len(),
                x.nrows(),
            ));
        }
        let standard = x.as_standard_layout();
        let mut cells = Cells::new(standard.as_slice().expect("standard layout"), x.ncols());
        let mut applied = Vec::new();
        for split in self.splits.iter().take_while(|s| s.time <= lifetime) {
            // Ids are assigned in split order, so replaying a prefix reproduces them.
            let n_left = cells.partition(split.node, split.dimension, split.location);
            cells.add_children(split.node, n_left);
            applied.push(*split);
        }
        Ok(leaves_from_cells(&cells, &applied))
    }
}

fn schedule<R: Rng + ?Sized>(
    cells: &Cells,
    node: u32,
    birth: f64,
    lifetime: f64,
    rng: &mut R,
    heap: &mut BinaryHeap<Pending>,
) {
    let (lower, upper) = cells.bounds(node);
    if let Some(cut) = sample_cut(&lower, &upper, birth, rng) {
        if cut.time < lifetime {
            heap.push(Pending { cut, node });
        }
    }
}

fn leaves_from_cells(cells: &Cells, splits: &[Split]) -> Vec<u32> {
    let mut is_leaf = vec![true; cells.range.len()];
    for s in splits {
        is_leaf[s.node as usize] = false;
    }
    let mut leaf_of_point = vec![0u32; cells.order.len()];
    for (node, &(start, end)) in cells.range.iter().enumerate() {
        if is_leaf[node] {
            for &i in &cells.order[start..end] {
                leaf_of_point[i as usize] = node as u32;
            }
        }
    }
    leaf_of_point
}

pub(crate) fn check_data(x: ArrayView2<f64>) -> Result<(), MondrianError> {
    check_non_empty("input", x)?;
    if x.nrows() > u32::MAX as usize / 2 {
        return Err(MondrianError::invalid_input(
            "number of rows",
            x.nrows(),
            "at most 2^31 - 1 points (node ids are u32)",
        ));
    }
    check_finite("input", x)
}
