//! M independent Mondrian trees and the Mondrian kernel feature map (Balog et al. 2016, Sec. 3).
//!
//! `φ(x)` has exactly M non-zeros, one per tree at the column of x's leaf, each `1/√M`, so
//! `φ(x)·φ(x') = (1/M) #{m : x and x' share a leaf of tree m}`, an unbiased estimate of the
//! Laplace kernel `exp(−λ‖x − x'‖₁)`. The feature map is transductive: the trees are sampled on
//! every point that will be featurised (training and test), as in the paper.

use kernel_core::one_hot::OneHotFeatures;
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
            return Err(MondrianError::NoTrees);
        }
        let seeds: Vec<[u8; 32]> = (0..n_mondrians).map(|_| rng.random()).collect();
        let trees = seeds
            .into_par_iter()
            .map(|seed| MondrianTree::sample(x, lifetime, &mut ChaCha8Rng::from_seed(seed)))
            .collect::<Result<Vec<_>, _>>()?;
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

    /// Mean number of leaves per tree.
    pub fn mean_leaves(&self) -> f64 {
        self.trees.iter().map(|t| t.n_leaves() as f64).sum::<f64>() / self.trees.len() as f64
    }
}
