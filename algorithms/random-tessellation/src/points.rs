//! Row-major point storage and the two inner kernels (dot product, squared distance) that every
//! projection and every diameter runs through.

use ndarray::ArrayView2;

use crate::error::RtfError;

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
            if block.ncols() != dim {
                return Err(RtfError::ShapeMismatch {
                    what: "columns of the test rows vs the training rows",
                    expected: dim,
                    got: block.ncols(),
                });
            }
            for (row, values) in block.rows().into_iter().enumerate() {
                for (column, &value) in values.iter().enumerate() {
                    if !value.is_finite() {
                        return Err(RtfError::NonFiniteInput {
                            what,
                            row,
                            column,
                            value,
                        });
                    }
                    data.push(value);
                }
            }
        }
        Ok(Self { data, dim })
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

/// `⟨a, b⟩` with four independent accumulators (so the compiler can keep them in vector lanes).
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let mut ca = a.chunks_exact(4);
    let mut cb = b.chunks_exact(4);
    for (x, y) in (&mut ca).zip(&mut cb) {
        acc[0] += x[0] * y[0];
        acc[1] += x[1] * y[1];
        acc[2] += x[2] * y[2];
        acc[3] += x[3] * y[3];
    }
    let mut tail = 0.0;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `‖a − b‖²` with four independent accumulators.
#[inline]
pub(crate) fn squared_distance(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let mut ca = a.chunks_exact(4);
    let mut cb = b.chunks_exact(4);
    for (x, y) in (&mut ca).zip(&mut cb) {
        let d0 = x[0] - y[0];
        let d1 = x[1] - y[1];
        let d2 = x[2] - y[2];
        let d3 = x[3] - y[3];
        acc[0] += d0 * d0;
        acc[1] += d1 * d1;
        acc[2] += d2 * d2;
        acc[3] += d3 * d3;
    }
    let mut tail = 0.0;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        let d = x - y;
        tail += d * d;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
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
            RtfError::NonFiniteInput {
                row: 1,
                column: 1,
                ..
            }
        ));
        let b = ndarray::array![[0.0, 1.0, 2.0]];
        let c = ndarray::array![[0.0, 1.0]];
        assert!(matches!(
            Points::stack(&[("train", c.view()), ("test", b.view())]),
            Err(RtfError::ShapeMismatch { .. })
        ));
        let t = ndarray::array![[1.0, 3.0], [2.0, 4.0]];
        let ok = Points::stack(&[("train", c.view()), ("test", t.t())]).unwrap();
        assert_eq!(ok.row(2), &[3.0, 4.0]);
    }
}
