//! M independent Mondrian trees and the Mondrian kernel feature map (Balog et al. 2016, Sec. 3).
//!
//! `φ(x)` has exactly M non-zeros, one per tree at the column of x's leaf, each `1/√M`, so
//! `φ(x)·φ(x') = (1/M) #{m : x and x' share a leaf of tree m}`, an unbiased estimate of the
//! Laplace kernel `exp(−λ‖x − x'‖₁)`. The feature map is transductive: the trees are sampled on
//! every point that will be featurised (training and test), as in the paper. New points can
//! still be featurised by routing them down the sampled splits ([`MondrianForest::features_of`],
//! the [`FeatureMap`] implementation); the law of their cells is then no longer the Mondrian's.

use kernel_core::error::{check_columns, check_finite};
use kernel_core::one_hot::OneHotFeatures;
use kernel_core::{CoreError, FeatureMap, Features};
use ndarray::ArrayView2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::error::{check_lifetime, MondrianError};
use crate::tree::{check_data, MondrianTree};

/// M Mondrian trees sampled on the same points.
#[derive(Debug, Clone, PartialEq)]
pub struct MondrianForest {
    trees: Vec<MondrianTree>,
}

impl MondrianForest {
    /// Samples `n_mondrians` (M) independent trees with lifetime λ on the rows of `x`.
    ///
    /// One ChaCha8 seed per tree is drawn from `rng` first; the trees are then sampled in parallel,
    /// so the result depends only on `rng`, never on the thread count.
    pub fn sample<R: Rng + ?Sized>(
        x: ArrayView2<f64>,
        lifetime: f64,
        n_mondrians: usize,
        rng: &mut R,
    ) -> Result<Self, MondrianError> {
        check_lifetime(lifetime)?;
        check_data(x)?;
        if n_mondrians == 0 {
            return Err(MondrianError::invalid("n_mondrians", 0, "at least 1 tree"));
        }
        let seeds: Vec<[u8; 32]> = (0..n_mondrians).map(|_| rng.random()).collect();
        // Checked once above; one row-major copy (if needed) for all trees.
        let x = x.as_standard_layout();
        let trees = seeds
            .into_par_iter()
            .map(|seed| {
                MondrianTree::sample_checked(x.view(), lifetime, &mut ChaCha8Rng::from_seed(seed))
            })
            .collect();
        Ok(Self { trees })
    }

    /// The trees, in sampling order (prefixes of this list are the nested maps of order R < M).
    pub fn trees(&self) -> &[MondrianTree] {
        &self.trees
    }

    /// Number of trees M.
    pub fn n_mondrians(&self) -> usize {
        self.trees.len()
    }

    /// The feature matrix: block m holds the leaf of tree m; tree m's node ids are offset by the
    /// node counts of the trees before it (internal nodes are unused, all-zero columns). Values
    /// are implicit ones; scale by `1/√M` (or `1/√R` for a prefix of R trees).
    pub fn features(&self) -> OneHotFeatures {
        let n = self.trees[0].leaf_of_point().len();
        let m = self.trees.len();
        let mut offsets = Vec::with_capacity(m);
        let mut total = 0usize;
        for tree in &self.trees {
            offsets.push(total as u32);
            total += tree.n_nodes() as usize;
        }
        let mut columns = vec![0u32; n * m];
        for (b, tree) in self.trees.iter().enumerate() {
            for (i, &leaf) in tree.leaf_of_point().iter().enumerate() {
                columns[i * m + b] = offsets[b] + leaf;
            }
        }
        OneHotFeatures::new(n, m, total, columns)
            .expect("leaf ids are below the node count of their tree")
    }

    /// The features of new points `x` (N × D), with the column ids of [`Self::features`]: block m
    /// holds the leaf of tree m whose cell contains the point ([`MondrianTree::leaf_of`]),
    /// offset by the node counts of the trees before it. On the sampling points this is
    /// [`Self::features`].
    pub fn features_of(&self, x: ArrayView2<f64>) -> Result<OneHotFeatures, MondrianError> {
        check_columns(
            "input columns vs the dimension the trees were sampled on",
            x,
            self.trees[0].dim(),
        )?;
        check_finite("input", x)?;
        let m = self.trees.len();
        let offsets = self.column_offsets();
        let mut columns = vec![0u32; x.nrows() * m];
        columns.par_chunks_mut(m).enumerate().for_each(|(i, row)| {
            for ((column, tree), offset) in row.iter_mut().zip(&self.trees).zip(&offsets) {
                *column = offset + tree.leaf_of(x.row(i));
            }
        });
        Ok(OneHotFeatures::new(x.nrows(), m, self.n_columns(), columns)
            .expect("leaf ids are below the node count of their tree"))
    }

    /// Mean number of leaves per tree.
    pub fn mean_leaves(&self) -> f64 {
        self.trees.iter().map(|t| t.n_leaves() as f64).sum::<f64>() / self.trees.len() as f64
    }
}

impl FeatureMap for MondrianForest {
    /// The M trees.
    fn n_blocks(&self) -> usize {
        self.n_mondrians()
    }

    /// [`MondrianForest::features_of`]; for the sampling points themselves
    /// [`MondrianForest::features`] gives the same matrix without routing.
    fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError> {
        Ok(Features::OneHot(self.features_of(x)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::Split;
    use ndarray::{array, Array2};

    /// A cell as the half-spaces of its ancestors' splits: `(dimension, location, went_left)`.
    type Cell = Vec<(usize, f64, bool)>;

    /// The cell of every leaf, read off the split list alone.
    fn leaf_cells(tree: &MondrianTree) -> Vec<(u32, Cell)> {
        let parent = |node: u32| -> Option<(&Split, bool)> {
            tree.splits()
                .iter()
                .find(|s| s.left == node || s.right == node)
                .map(|s| (s, s.left == node))
        };
        (0..tree.n_nodes())
            .filter(|&node| tree.splits().iter().all(|s| s.node != node))
            .map(|leaf| {
                let mut constraints = Vec::new();
                let mut node = leaf;
                while let Some((split, left)) = parent(node) {
                    constraints.push((split.dimension, split.location, left));
                    node = split.node;
                }
                (leaf, constraints)
            })
            .collect()
    }

    fn sample(seed: u64) -> (Array2<f64>, MondrianForest) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x = Array2::from_shape_fn((60, 3), |_| rng.random_range(-1.0..1.0));
        let forest = MondrianForest::sample(x.view(), 2.5, 8, &mut rng).unwrap();
        (x, forest)
    }

    #[test]
    fn routing_the_sampling_points_gives_the_forest_features() {
        let (x, forest) = sample(1);
        assert!(
            forest.mean_leaves() > 5.0,
            "trees with splits to route through"
        );
        let routed = forest.features_of(x.view()).unwrap();
        assert_eq!(routed, forest.features());
        let boxed: Box<dyn FeatureMap> = Box::new(forest.clone());
        assert_eq!(boxed.n_blocks(), 8);
        assert_eq!(
            boxed.features(x.view()).unwrap(),
            Features::OneHot(forest.features())
        );
    }

    #[test]
    fn new_points_land_in_the_leaf_whose_cell_contains_them() {
        let (_, forest) = sample(2);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Inside and well outside the data's box [-1, 1]^3, and on a split location.
        let mut new = Array2::from_shape_fn((40, 3), |_| rng.random_range(-1.5..1.5));
        let on_split = forest.trees()[0].splits()[0];
        new[[0, on_split.dimension]] = on_split.location;
        let features = forest.features_of(new.view()).unwrap();
        let offsets = forest.column_offsets();
        for (m, tree) in forest.trees().iter().enumerate() {
            let cells = leaf_cells(tree);
            assert_eq!(cells.len(), tree.n_leaves());
            for (i, point) in new.rows().into_iter().enumerate() {
                let containing: Vec<u32> = cells
                    .iter()
                    .filter(|(_, cell)| {
                        cell.iter()
                            .all(|&(d, location, left)| (point[d] <= location) == left)
                    })
                    .map(|(leaf, _)| *leaf)
                    .collect();
                assert_eq!(containing.len(), 1, "cells partition ℝ^D");
                assert_eq!(features.column(i, m), Some(offsets[m] + containing[0]));
            }
        }
    }

    #[test]
    fn new_points_are_checked() {
        let (_, forest) = sample(4);
        assert!(matches!(
            forest.features_of(array![[0.0, 1.0]].view()),
            Err(CoreError::ShapeMismatch {
                expected: 3,
                got: 2,
                ..
            })
        ));
        assert!(forest
            .features_of(array![[0.0, f64::INFINITY, 1.0]].view())
            .is_err());
        let none = forest.features_of(Array2::zeros((0, 3)).view()).unwrap();
        assert_eq!((none.n_rows(), none.n_blocks()), (0, 8));
    }
}
