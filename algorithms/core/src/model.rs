//! The model traits the harness programs against, kept minimal: a random feature map (new points
//! to features), a fitted predictor, and an online learner (predict, then update).
//!
//! Every random feature map of the papers is a sum of independent blocks: a Mondrian tree, a
//! random-binning grid, a Fourier frequency `ω_r`. The map of order R is the prefix of its first
//! R blocks, and `(1/R) Σ_{r<R} φ_r(x)·φ_r(x')` estimates the kernel (The Mondrian Kernel,
//! Sec. 3; Rahimi & Recht 2007). [`Features`] keeps that block structure so that nested prefixes
//! (Fig. 5) and scalings `1/√R` need no knowledge of the method.

use std::ops::Range;

use ndarray::{Array1, Array2, ArrayView2};

use crate::approximation::{dense_prefix_max_errors, one_hot_prefix_max_errors};
use crate::one_hot::OneHotFeatures;
use crate::CoreError;

/// The features of a set of points, in blocks: block r (0-based) is tree, grid or frequency r,
/// and a prefix of R blocks is the feature map of order R. Values are unscaled (one-hot entries
/// are 1, Fourier entries `cos`/`sin`); the consumer scales by `1/√R`.
#[derive(Debug, Clone, PartialEq)]
pub enum Features {
    /// One non-zero per row and block (Mondrian kernel, random binning).
    OneHot(OneHotFeatures),
    /// Dense columns grouped into blocks (random Fourier features).
    Dense(DenseFeatures),
}

impl Features {
    /// Number of rows (points).
    pub fn n_rows(&self) -> usize {
        match self {
            Features::OneHot(f) => f.n_rows(),
            Features::Dense(f) => f.n_rows(),
        }
    }

    /// Number of blocks (trees M, grids M, or frequencies R).
    pub fn n_blocks(&self) -> usize {
        match self {
            Features::OneHot(f) => f.n_blocks(),
            Features::Dense(f) => f.n_blocks(),
        }
    }

    /// `max_ij |K̂_R − K_ij|` for every prefix `R = 1..=n_blocks`, with `K̂_R` the kernel
    /// estimate of the first R blocks and `exact` the kernel on these rows (The Mondrian Kernel,
    /// Fig. 5). One-hot features give exactly [`one_hot_prefix_max_errors`], dense features
    /// exactly [`dense_prefix_max_errors`].
    pub fn prefix_max_errors(&self, exact: ArrayView2<f64>) -> Result<Vec<f64>, CoreError> {
        match self {
            Features::OneHot(f) => one_hot_prefix_max_errors(f, exact),
            Features::Dense(f) => dense_prefix_max_errors(f, exact),
        }
    }
}

/// A dense feature matrix whose columns are grouped into blocks: columns
/// `block_ends[r − 1]..block_ends[r]` (from 0 for r = 0) belong to block r. Random Fourier
/// features have blocks `[cos(ω_rᵀx), sin(ω_rᵀx)]`, so `block_ends = [2, 4, …, 2R]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseFeatures {
    /// Row-major (standard layout), so that a row's block is a contiguous slice.
    values: Array2<f64>,
    block_ends: Vec<usize>,
}

impl DenseFeatures {
    /// Groups the columns of `values` into blocks ending at `block_ends`, which must be strictly
    /// increasing (every block has at least one column) and end at the number of columns.
    pub fn new(values: Array2<f64>, block_ends: Vec<usize>) -> Result<Self, CoreError> {
        if block_ends.last().copied().unwrap_or(0) != values.ncols() {
            return Err(CoreError::ShapeMismatch {
                what: "last block end vs number of feature columns",
                expected: values.ncols(),
                got: block_ends.last().copied().unwrap_or(0),
            });
        }
        if block_ends.first() == Some(&0) || block_ends.windows(2).any(|w| w[0] >= w[1]) {
            return Err(CoreError::InvalidParameter {
                name: "block_ends",
                value: format!("{block_ends:?}"),
                expected: "strictly increasing column counts (no empty block)",
            });
        }
        let values = if values.is_standard_layout() {
            values
        } else {
            values.as_standard_layout().into_owned()
        };
        Ok(Self { values, block_ends })
    }

    /// Blocks of `width` consecutive columns each (`block_ends = [w, 2w, …]`).
    pub fn uniform(values: Array2<f64>, width: usize) -> Result<Self, CoreError> {
        if values.ncols().checked_rem(width) != Some(0) {
            return Err(CoreError::InvalidParameter {
                name: "block width",
                value: width.to_string(),
                expected: "a positive divisor of the number of feature columns",
            });
        }
        let ends = (1..=values.ncols() / width).map(|r| r * width).collect();
        Self::new(values, ends)
    }

    /// The feature matrix (rows × columns), unscaled.
    pub fn values(&self) -> ArrayView2<'_, f64> {
        self.values.view()
    }

    /// The feature matrix, taken out.
    pub fn into_values(self) -> Array2<f64> {
        self.values
    }

    /// `block_ends[r]` = number of columns in blocks `0..=r`.
    pub fn block_ends(&self) -> &[usize] {
        &self.block_ends
    }

    /// The columns of block r.
    pub fn block(&self, r: usize) -> Range<usize> {
        let start = if r == 0 { 0 } else { self.block_ends[r - 1] };
        start..self.block_ends[r]
    }

    /// Number of rows (points).
    pub fn n_rows(&self) -> usize {
        self.values.nrows()
    }

    /// Number of blocks.
    pub fn n_blocks(&self) -> usize {
        self.block_ends.len()
    }

    /// Row i as a contiguous slice.
    pub(crate) fn row_slice(&self, i: usize) -> &[f64] {
        let n = self.values.ncols();
        &self.values.as_slice().expect("standard layout")[i * n..(i + 1) * n]
    }

    /// The rows in order, as contiguous slices (none when there are no columns).
    pub(crate) fn rows(&self) -> std::slice::ChunksExact<'_, f64> {
        let data = self.values.as_slice().expect("standard layout");
        data.chunks_exact(self.values.ncols().max(1))
    }
}

/// A sampled random feature map `x ↦ φ(x)`: the features of new points, block by block. Maps
/// that are transductive in the paper (the Mondrian kernel, whose trees are sampled on all
/// points) route new points through the sampled partition; random binning gives a point no
/// feature in a grid where its bin was never seen.
pub trait FeatureMap: Send + Sync {
    /// Number of blocks (M trees or grids, R frequencies).
    fn n_blocks(&self) -> usize;

    /// The features of the rows of `x` (N × D), in blocks.
    fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError>;
}

impl<M: FeatureMap + ?Sized> FeatureMap for Box<M> {
    fn n_blocks(&self) -> usize {
        (**self).n_blocks()
    }
    fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError> {
        (**self).features(x)
    }
}

/// A fitted regression model: predictions `ŷ(x)` for the rows of `x`.
pub trait Predictor {
    /// One prediction per row of `x` (N × D).
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array1<f64>, CoreError>;
}

/// An online learner in the predict-then-update protocol (progressive validation): each sample
/// `(x_t, y_t)` of a stream is first predicted with the model of samples `< t`, then learnt.
pub trait OnlineLearner {
    /// One input row (e.g. `[f64]` for dense features, `[u32]` for one-hot column ids).
    type Row: ?Sized;

    /// `ŷ(x)` from the current model.
    fn predict_one(&self, x: &Self::Row) -> f64;

    /// Learns the sample `(x, y)` and returns the prediction `ŷ(x)` the model made before it,
    /// the value [`Self::predict_one`] would have returned. (An update needs that prediction
    /// anyway, e.g. SGD's residual, so the protocol costs one evaluation per sample, not two,
    /// and the recorded prediction is by construction the one the step used.)
    fn update(&mut self, x: &Self::Row, y: f64) -> f64;

    /// Runs the learner over a stream in order and returns the prediction made before each
    /// update.
    fn run_stream<'a, I>(&mut self, stream: I) -> Vec<f64>
    where
        I: IntoIterator<Item = (&'a Self::Row, f64)>,
        Self::Row: 'a,
    {
        stream.into_iter().map(|(x, y)| self.update(x, y)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, ShapeBuilder};

    /// Scores of a running mean: the prediction is the mean of the targets seen so far.
    struct RunningMean {
        sum: f64,
        count: f64,
    }

    impl OnlineLearner for RunningMean {
        type Row = [f64];
        fn predict_one(&self, _x: &[f64]) -> f64 {
            if self.count == 0.0 {
                0.0
            } else {
                self.sum / self.count
            }
        }
        fn update(&mut self, x: &[f64], y: f64) -> f64 {
            let p = self.predict_one(x);
            self.sum += y;
            self.count += 1.0;
            p
        }
    }

    #[test]
    fn run_stream_records_the_prediction_before_each_update() {
        let mut learner = RunningMean {
            sum: 0.0,
            count: 0.0,
        };
        let row = [0.0];
        let ys = [2.0, 4.0, 9.0];
        let predictions = learner.run_stream(ys.iter().map(|&y| (&row[..], y)));
        assert_eq!(predictions, vec![0.0, 2.0, 3.0]);
        assert_eq!(learner.predict_one(&row), 5.0);
    }

    #[test]
    fn dense_blocks_are_validated_and_sliced() {
        let v = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        assert!(DenseFeatures::new(v.clone(), vec![1, 2]).is_err());
        assert!(DenseFeatures::new(v.clone(), vec![0, 3]).is_err());
        assert!(DenseFeatures::new(v.clone(), vec![2, 2, 3]).is_err());
        assert!(DenseFeatures::uniform(v.clone(), 2).is_err());
        assert!(DenseFeatures::uniform(v.clone(), 0).is_err());
        let f = DenseFeatures::new(v.clone(), vec![1, 3]).unwrap();
        assert_eq!((f.n_rows(), f.n_blocks()), (2, 2));
        assert_eq!(f.block(0), 0..1);
        assert_eq!(f.block(1), 1..3);
        assert_eq!(f.values(), v.view());
        // A transposed (column-major) input is stored row-major with the same values.
        let column_major =
            Array2::from_shape_vec((2, 3).f(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]).unwrap();
        assert!(!column_major.is_standard_layout());
        let t = DenseFeatures::uniform(column_major, 1).unwrap();
        assert_eq!(t.values(), v.view());
        assert_eq!(t.row_slice(1), &[4.0, 5.0, 6.0]);
        let features = Features::Dense(t);
        assert_eq!((features.n_rows(), features.n_blocks()), (2, 3));
    }
}
