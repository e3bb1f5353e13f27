//! One fitted random tessellation tree: a particle's partition as a binary tree of hyperplane
//! cuts, whose leaves predict their training majority label (spec §5 step 3; ties → the lowest
//! label, D6). New points are routed by the stored hyperplanes, ⟨n, x⟩ <= offset going left as
//! the training items did (D3, inductive); under transductive routing the test items already
//! sit in the leaves, and routing them gives the same leaves.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cell::Cell;
use crate::prior::Hyperplane;

/// A child in a [`Tree`]: another cut or a leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node {
    Split(usize),
    Leaf(usize),
}

/// An internal node: the cut and the two sides (left: ⟨n, x⟩ <= offset).
#[derive(Debug, Clone, PartialEq)]
pub struct TreeSplit {
    pub hyperplane: Hyperplane,
    pub left: Node,
    pub right: Node,
}

/// A cell of the final partition.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    /// Training row indices in the cell.
    pub train: Vec<u32>,
    /// Test row indices in the cell (transductive routing only; empty otherwise).
    pub test: Vec<u32>,
    /// Training-label counts m_jk.
    pub counts: Vec<u32>,
    /// The predicted label: the majority of `counts`, ties to the lowest label.
    pub label: u32,
}

/// A partition of the training data as a binary tree of cuts.
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    root: Node,
    splits: Vec<TreeSplit>,
    leaves: Vec<Leaf>,
    dim: usize,
}

/// The label with the largest count, ties to the lowest label (D6).
pub(crate) fn majority(counts: &[u32]) -> u32 {
    let mut best = 0;
    for (k, &c) in counts.iter().enumerate() {
        if c > counts[best] {
            best = k;
        }
    }
    best as u32
}

impl Tree {
    /// The tree of a partition (cells in particle order become leaves in that order).
    pub(crate) fn from_cells(cells: &[Arc<Cell>], n_train: usize, dim: usize) -> Self {
        let leaves: Vec<Leaf> = cells
            .iter()
            .map(|c| Leaf {
                train: c.train().to_vec(),
                test: c.test().iter().map(|&i| i - n_train as u32).collect(),
                counts: c.counts.clone(),
                label: majority(&c.counts),
            })
            .collect();
        // Every leaf's route is the chain of (hyperplane, side) from itself up to the root; the
        // hyperplane objects are shared by the two sides of a cut, so their addresses identify
        // the internal nodes.
        let mut index: HashMap<*const Hyperplane, usize> = HashMap::new();
        let mut halves: Vec<(Arc<Hyperplane>, [Option<Node>; 2])> = Vec::new();
        let mut chain = Vec::new();
        let mut root = Node::Leaf(0);
        for (leaf, cell) in cells.iter().enumerate() {
            chain.clear();
            let mut route = cell.route.as_ref();
            while let Some(r) = route {
                chain.push((r.hyperplane.clone(), r.left));
                route = r.parent.as_ref();
            }
            chain.reverse();
            let mut node_of = |h: &Arc<Hyperplane>| {
                *index.entry(Arc::as_ptr(h)).or_insert_with(|| {
                    halves.push((h.clone(), [None, None]));
                    halves.len() - 1
                })
            };
            let ids: Vec<usize> = chain.iter().map(|(h, _)| node_of(h)).collect();
            if let Some(&first) = ids.first() {
                root = Node::Split(first);
            }
            for (k, (&id, (_, left))) in ids.iter().zip(&chain).enumerate() {
                let child = ids.get(k + 1).map_or(Node::Leaf(leaf), |&n| Node::Split(n));
                halves[id].1[usize::from(!*left)] = Some(child);
            }
        }
        let splits = halves
            .into_iter()
            .map(|(h, [left, right])| TreeSplit {
                hyperplane: (*h).clone(),
                // Cells never merge, so both sides of every cut still hold a leaf.
                left: left.expect("the left side of a cut holds a leaf"),
                right: right.expect("the right side of a cut holds a leaf"),
            })
            .collect();
        Self {
            root,
            splits,
            leaves,
            dim,
        }
    }

    /// The leaf index of the cell holding `x` (length d).
    ///
    /// Panics if `x` is shorter than the dimension the tree was fitted in.
    pub fn leaf_of(&self, x: &[f64]) -> usize {
        assert!(
            x.len() >= self.dim,
            "point has {} < {} coordinates",
            x.len(),
            self.dim
        );
        let mut node = self.root;
        loop {
            match node {
                Node::Leaf(l) => return l,
                Node::Split(s) => {
                    let split = &self.splits[s];
                    node = if split.hyperplane.is_left(x) {
                        split.left
                    } else {
                        split.right
                    };
                }
            }
        }
    }

    /// The label of the leaf holding `x`.
    pub fn predict(&self, x: &[f64]) -> u32 {
        self.leaves[self.leaf_of(x)].label
    }

    /// The root (a leaf when there are no cuts).
    pub fn root(&self) -> Node {
        self.root
    }

    /// The cuts (internal nodes); the root cut first.
    pub fn splits(&self) -> &[TreeSplit] {
        &self.splits
    }

    /// The cells of the partition.
    pub fn leaves(&self) -> &[Leaf] {
        &self.leaves
    }

    /// Number of cuts (leaves − 1).
    pub fn n_cuts(&self) -> usize {
        self.splits.len()
    }

    /// Training-label counts of the cell each cut split (the sums over the leaves below it), in
    /// the order of [`Self::splits`].
    pub fn split_counts(&self) -> Vec<Vec<u32>> {
        let mut memo: Vec<Option<Vec<u32>>> = vec![None; self.splits.len()];
        fn counts_of(tree: &Tree, node: Node, memo: &mut [Option<Vec<u32>>]) -> Vec<u32> {
            match node {
                Node::Leaf(l) => tree.leaves[l].counts.clone(),
                Node::Split(s) => {
                    if let Some(c) = &memo[s] {
                        return c.clone();
                    }
                    let a = counts_of(tree, tree.splits[s].left, memo);
                    let b = counts_of(tree, tree.splits[s].right, memo);
                    let sum: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
                    memo[s] = Some(sum.clone());
                    sum
                }
            }
        }
        (0..self.splits.len())
            .map(|s| counts_of(self, Node::Split(s), &mut memo))
            .collect()
    }
}
