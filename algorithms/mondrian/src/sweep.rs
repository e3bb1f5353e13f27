//! The lifetime sweep (Balog et al. 2016, Sec. 4): the Mondrian kernel features for every
//! lifetime λ ≤ Λ from one sample of M trees to Λ.
//!
//! The partition at λ refines every partition at λ' < λ, so the trees sampled to Λ hold the
//! features of all smaller lifetimes: walking through all splits of all trees in time order, each
//! split replaces one feature column (the parent leaf) by two (its children). [`SweepState`]
//! holds the leaf of every point in every tree at the current lifetime; models are refitted or
//! updated at the lifetimes the caller chooses.

use kernel_core::one_hot::OneHotFeatures;

use crate::forest::MondrianForest;

/// One split of the global sweep, in global column ids (tree offset + node id).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepEvent {
    pub time: f64,
    pub tree: usize,
    pub parent: u32,
    pub left: u32,
    pub right: u32,
    /// Node ids within the tree (for [`crate::MondrianTree::points_of`]).
    pub left_node: u32,
    pub right_node: u32,
}

impl MondrianForest {
    /// First global column id of each tree: tree m's node `k` is column `offsets[m] + k`.
    pub fn column_offsets(&self) -> Vec<u32> {
        let mut offsets = Vec::with_capacity(self.trees().len());
        let mut total = 0u32;
        for tree in self.trees() {
            offsets.push(total);
            total += tree.n_nodes();
        }
        offsets
    }

    /// Total number of global column ids (all nodes of all trees).
    pub fn n_columns(&self) -> usize {
        self.trees().iter().map(|t| t.n_nodes() as usize).sum()
    }

    /// Every split of every tree, in time order (ties, of probability zero, by tree then node).
    pub fn sweep_events(&self) -> Vec<SweepEvent> {
        let offsets = self.column_offsets();
        let mut events: Vec<SweepEvent> = self
            .trees()
            .iter()
            .enumerate()
            .flat_map(|(m, tree)| {
                let o = offsets[m];
                tree.splits().iter().map(move |s| SweepEvent {
                    time: s.time,
                    tree: m,
                    parent: o + s.node,
                    left: o + s.left,
                    right: o + s.right,
                    left_node: s.left,
                    right_node: s.right,
                })
            })
            .collect();
        events.sort_by(|a, b| {
            a.time
                .total_cmp(&b.time)
                .then(a.tree.cmp(&b.tree))
                .then(a.parent.cmp(&b.parent))
        });
        events
    }
}

/// The leaf of every point in every tree at the current lifetime of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepState {
    n_points: usize,
    n_trees: usize,
    n_columns: usize,
    /// `leaf[i * M + m]`: global column of point i's leaf in tree m.
    leaf: Vec<u32>,
    /// Number of events applied.
    applied: usize,
}

impl SweepState {
    /// The state at lifetime 0: every point in the root of every tree.
    pub fn new(forest: &MondrianForest) -> Self {
        let n_points = forest.trees()[0].leaf_of_point().len();
        let offsets = forest.column_offsets();
        let n_trees = offsets.len();
        let mut leaf = vec![0u32; n_points * n_trees];
        for i in 0..n_points {
            leaf[i * n_trees..(i + 1) * n_trees].copy_from_slice(&offsets);
        }
        Self {
            n_points,
            n_trees,
            n_columns: forest.n_columns(),
            leaf,
            applied: 0,
        }
    }

    /// Number of events applied so far.
    pub fn applied(&self) -> usize {
        self.applied
    }

    /// Applies the next events with `time <= lifetime`; returns the range of event indices applied.
    pub fn advance_to(
        &mut self,
        forest: &MondrianForest,
        events: &[SweepEvent],
        lifetime: f64,
    ) -> std::ops::Range<usize> {
        let start = self.applied;
        while self.applied < events.len() && events[self.applied].time <= lifetime {
            self.step(forest, events);
        }
        start..self.applied
    }

    /// Applies the next event, if any; returns its index.
    pub fn step(&mut self, forest: &MondrianForest, events: &[SweepEvent]) -> Option<usize> {
        let e = *events.get(self.applied)?;
        let tree = &forest.trees()[e.tree];
        // The leaf ids stay below n_columns (what `sgd_rows` relies on), whatever events the
        // caller passes.
        assert!(
            e.tree < self.n_trees
                && (e.left as usize) < self.n_columns
                && (e.right as usize) < self.n_columns,
            "an event of another forest"
        );
        for (node, column) in [(e.left_node, e.left), (e.right_node, e.right)] {
            for &i in tree.points_of(node) {
                self.leaf[i as usize * self.n_trees + e.tree] = column;
            }
        }
        self.applied += 1;
        Some(self.applied - 1)
    }

    /// Leaf ids, row-major: `leaf_ids()[i * M + m]` is point i's leaf in tree m.
    pub fn leaf_ids(&self) -> &[u32] {
        &self.leaf
    }

    /// Number of trees M.
    pub fn n_trees(&self) -> usize {
        self.n_trees
    }

    /// Number of global columns (all nodes of all trees): every leaf id is below it.
    pub fn n_columns(&self) -> usize {
        self.n_columns
    }

    /// Number of points.
    pub fn n_points(&self) -> usize {
        self.n_points
    }

    /// The global column of point `i`'s leaf in tree `m`.
    pub fn leaf(&self, i: usize, m: usize) -> u32 {
        self.leaf[i * self.n_trees + m]
    }

    /// The first `n_rows` points' leaves as SGD reads them, each entry with value `value`
    /// (`1/√M`), without a bounds check per entry; the trees' columns are disjoint (offset
    /// node ids), so SGD interleaves consecutive steps tree by tree.
    pub fn sgd_rows(&self, n_rows: usize, value: f64) -> kernel_core::sgd::OneHotRows<'_> {
        assert!(n_rows <= self.n_points, "rows beyond the sweep's points");
        // SAFETY: every leaf id is a global column below n_columns: the roots' offsets at the
        // start, and `step` checks every child column it writes.
        unsafe {
            kernel_core::sgd::OneHotRows::bounded(
                &self.leaf,
                self.n_trees,
                n_rows,
                value,
                self.n_columns,
                true,
            )
            .with_disjoint_blocks()
        }
    }

    /// The Mondrian feature matrix at the current lifetime (global column ids).
    pub fn features(&self) -> OneHotFeatures {
        OneHotFeatures::new(
            self.n_points,
            self.n_trees,
            self.n_columns,
            self.leaf.clone(),
        )
        .expect("leaf ids are global node ids")
    }
}
