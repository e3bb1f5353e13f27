//! Features of a set of points in blocks (block r = tree, grid or frequency r), as random
//! feature maps return them: one-hot (Mondrian kernel, random binning) or dense (random Fourier
//! features).
//!
//! Every random feature map of the papers is a sum of independent blocks: a Mondrian tree, a
//! random-binning grid, a Fourier frequency `ω_r`. The map of order R is the prefix of its first
//! R blocks, and `(1/R) Σ_{r<R} φ_r(x)·φ_r(x')` estimates the kernel (The Mondrian Kernel,
//! Sec. 3; Rahimi & Recht 2007). [`Features`] keeps that block structure so that nested prefixes
//! (Fig. 5) and scalings `1/√R` need no knowledge of the method.

use std::ops::Range;

use ndarray::{Array2, ArrayView2};

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

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, ShapeBuilder};

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
