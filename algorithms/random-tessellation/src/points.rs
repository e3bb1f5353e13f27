//! Row-major point storage and the two inner kernels (dot product, squared distance) that every
//! projection and every diameter runs through.

use ndarray::ArrayView2;

use kernel_core::CoreError;

use crate::error::RtfError;
use crate::input::{check_columns, check_finite};

/// The rows of one or two matrices stacked in one contiguous row-major buffer, so that a row is
/// a slice whatever the layout of the caller's arrays.
#[derive(Debug, Clone)]
pub(crate) struct Points {
    data: Vec<f64>,
    dim: usize,
}

impl Points {
    /// Stacks the rows of `blocks` (all with the same number of columns); checks finiteness.
    pub(crate) fn stack(blocks: &[(&'static str, ArrayView2<f64>)]) -> Result<Self, RtfError> {
        let dim = blocks.first().map_or(0, |(_, b)| b.ncols());
        let rows: usize = blocks.iter().map(|(_, b)| b.nrows()).sum();
        let mut data = Vec::with_capacity(rows * dim);
        for (what, block) in blocks {
            check_columns("columns of the test rows vs the training rows", dim, *block)?;
            check_finite(what, *block)?;
            for values in block.rows() {
                data.extend(values.iter());
            }
        }
        Ok(Self { data, dim })
    }

    /// The rows of `x` and the indices `items` into them (as `u32`), for the geometry of a
    /// point subset called `what`. Errors: no items or no columns, an index out of range,
    /// non-finite values.
    pub(crate) fn subset(
        what: &'static str,
        x: ArrayView2<f64>,
        items: &[usize],
    ) -> Result<(Self, Vec<u32>), RtfError> {
        if items.is_empty() || x.ncols() == 0 {
            return Err(RtfError::Core(CoreError::EmptyInput {
                what,
                rows: items.len(),
                columns: x.ncols(),
                needed: "at least one item and one column",
            }));
        }
        if let Some(&index) = items
            .iter()
            .find(|&&i| i >= x.nrows() || i > u32::MAX as usize)
        {
            return Err(RtfError::IndexOutOfRange {
                index,
                rows: x.nrows(),
            });
        }
        let points = Self::stack(&[("points", x)])?;
        Ok((points, items.iter().map(|&i| i as u32).collect()))
    }

    #[inline]
    pub(crate) fn row(&self, i: u32) -> &[f64] {
        let start = i as usize * self.dim;
        &self.data[start..start + self.dim]
    }

    #[inline]
    pub(crate) fn dim(&self) -> usize {
        self.dim
    }
}

/// `Σ_i term(a_i, b_i)` over the common length, with four independent accumulators (so the
/// compiler can keep them in vector lanes): lanes `i mod 4` of the chunks of four, summed as
/// `(acc₀ + acc₁) + (acc₂ + acc₃)`, plus the remainder summed in order.
#[inline(always)]
fn four_lane_sum(a: &[f64], b: &[f64], term: impl Fn(f64, f64) -> f64) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let mut ca = a.chunks_exact(4);
    let mut cb = b.chunks_exact(4);
    for (x, y) in (&mut ca).zip(&mut cb) {
        acc[0] += term(x[0], y[0]);
        acc[1] += term(x[1], y[1]);
        acc[2] += term(x[2], y[2]);
        acc[3] += term(x[3], y[3]);
    }
    let mut tail = 0.0;
    for (&x, &y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += term(x, y);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `⟨a, b⟩`.
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    four_lane_sum(a, b, |x, y| x * y)
}

/// `‖a − b‖²`.
#[inline]
pub(crate) fn squared_distance(a: &[f64], b: &[f64]) -> f64 {
    four_lane_sum(a, b, |x, y| {
        let d = x - y;
        d * d
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_match_plain_sums() {
        for n in 0..11 {
            let a: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 1.3).cos()).collect();
            let d: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let s: f64 = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum();
            assert!((dot(&a, &b) - d).abs() < 1e-12);
            assert!((squared_distance(&a, &b) - s).abs() < 1e-12);
        }
    }

    #[test]
    fn stack_rejects_non_finite_and_mismatched_columns() {
        let a = ndarray::array![[0.0, 1.0], [2.0, f64::NAN]];
        let err = Points::stack(&[("train", a.view())]).unwrap_err();
        assert!(matches!(
            err,
            RtfError::Core(CoreError::NonFiniteInput {
                row: 1,
                column: 1,
                ..
            })
        ));
        let b = ndarray::array![[0.0, 1.0, 2.0]];
        let c = ndarray::array![[0.0, 1.0]];
        assert!(matches!(
            Points::stack(&[("train", c.view()), ("test", b.view())]),
            Err(RtfError::Core(CoreError::ShapeMismatch { .. }))
        ));
        let t = ndarray::array![[1.0, 3.0], [2.0, 4.0]];
        let ok = Points::stack(&[("train", c.view()), ("test", t.t())]).unwrap();
        assert_eq!(ok.row(2), &[3.0, 4.0]);
    }
}
