//! Random feature maps by their config name: the one place the harness names them. A kind that
//! works on any feature map (kernel approximation, ridge on features) samples one here and then
//! sees only its [`Features`] (one-hot or dense, in blocks: a prefix of R blocks is the map of
//! order R), whatever the method.

use anyhow::Result;
use kernel_core::{FeatureMap, Features};
use mondrian::MondrianForest;
use ndarray::ArrayView2;
use rand_chacha::ChaCha8Rng;
use random_features::{RandomBinning, RandomFourierFeatures};

use crate::context::CellContext;

type Sampler = fn(ArrayView2<f64>, f64, usize, &mut ChaCha8Rng) -> Result<Features>;

/// A feature map of the Laplace kernel `exp(−λ‖x − x'‖₁)`, as a config names it.
pub struct MapMethod {
    /// The config's `method` value.
    pub name: &'static str,
    /// What one block is (a tree, a grid, a frequency).
    pub block: &'static str,
    /// Non-zero features per block and point (1 for one-hot maps; 2 for a Fourier frequency's
    /// cosine and sine).
    pub nonzeros_per_block: usize,
    /// The cell's random stream the map is drawn from.
    stream: &'static str,
    sample: Sampler,
}

/// Every feature map a config can name.
pub const FEATURE_MAPS: &[MapMethod] = &[
    MapMethod {
        name: "mondrian",
        block: "tree",
        nonzeros_per_block: 1,
        stream: "trees",
        sample: |x, lifetime, blocks, rng| {
            // Transductive: the trees are sampled on the points they featurise.
            let forest = MondrianForest::sample(x, lifetime, blocks, rng)?;
            Ok(Features::OneHot(forest.features()))
        },
    },
    MapMethod {
        name: "random_binning",
        block: "grid",
        nonzeros_per_block: 1,
        stream: "features",
        sample: |x, lifetime, blocks, rng| {
            // Bins are created for every point featurised.
            let mut map = RandomBinning::sample(x.ncols(), blocks, lifetime, rng)?;
            Ok(Features::OneHot(map.fit_transform(x)?))
        },
    },
    MapMethod {
        name: "random_fourier",
        block: "frequency",
        nonzeros_per_block: 2,
        stream: "features",
        sample: |x, lifetime, blocks, rng| {
            let map = RandomFourierFeatures::sample(x.ncols(), blocks, lifetime, rng)?;
            Ok(map.features(x)?)
        },
    },
];

/// The map called `name`.
pub fn find(name: &str) -> Result<&'static MapMethod, String> {
    FEATURE_MAPS.iter().find(|m| m.name == name).ok_or_else(|| {
        let known: Vec<_> = FEATURE_MAPS.iter().map(|m| m.name).collect();
        format!("method = {name:?} is unknown; known: {}", known.join(", "))
    })
}

impl MapMethod {
    /// Blocks of a map with at most `max_nonzeros` non-zeros per point; an error below one.
    pub fn blocks(&self, max_nonzeros: usize) -> Result<usize, String> {
        let blocks = max_nonzeros / self.nonzeros_per_block;
        if blocks == 0 {
            return Err(format!(
                "max_nonzeros = {max_nonzeros}: need at least {} for {} (one {})",
                self.nonzeros_per_block, self.name, self.block
            ));
        }
        Ok(blocks)
    }

    /// Non-zeros per point of the prefix of `order` blocks.
    pub fn nonzeros(&self, order: usize) -> usize {
        order * self.nonzeros_per_block
    }

    /// Position of the prefix of `order` blocks on the paper's x axis "M (non-zero features per
    /// data point)": M, or 2R − 1 for Fourier features, as the authors plot them.
    pub fn m_axis(&self, order: usize) -> usize {
        self.nonzeros(order) + 1 - self.nonzeros_per_block
    }

    /// Draws the map of `blocks` blocks on the points `x` (from the cell's stream for this
    /// map) and returns the features of those points.
    pub fn sample(
        &self,
        x: ArrayView2<f64>,
        lifetime: f64,
        blocks: usize,
        ctx: &CellContext,
    ) -> Result<Features> {
        (self.sample)(x, lifetime, blocks, &mut ctx.rng(self.stream))
    }
}
