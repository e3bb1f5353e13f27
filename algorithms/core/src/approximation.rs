//! Kernel-approximation error of nested prefixes of a random feature map.
//!
//! A random feature map of order R gives the estimate `K̂_R = (1/R) Σ_{r<R} C_r`, where block `r`
//! contributes `C_r[i, j]` (for one-hot maps: 1 when rows `i` and `j` share the block's column;
//! for Fourier features: `cos(ω_rᵀ(x_i − x_j))`). The Mondrian Kernel's Fig. 5 plots
//! `max_ij |K̂_R − K_ij|` for every prefix R of one draw ("nested prefixes").

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::features::{DenseFeatures, Features};
use crate::one_hot::{OneHotFeatures, ABSENT};
use crate::CoreError;

/// `max_ij |K̂_R − K_ij|` for `R = 1..=n_blocks`.
///
/// `contribute(r, i, row)` must add `C_r[i, j]` to `row[j]` for every `j`. Rows are processed in
/// parallel, each accumulating its blocks in order, so the result does not depend on the thread
/// count. Cost: `n² · n_blocks` contributions, memory `n · n_blocks`.
pub fn prefix_max_errors<F>(
    exact: ArrayView2<f64>,
    n_blocks: usize,
    contribute: F,
) -> Result<Vec<f64>, CoreError>
where
    F: Fn(usize, usize, &mut [f64]) + Sync,
{
    let n = exact.nrows();
    if exact.ncols() != n {
        return Err(CoreError::ShapeMismatch {
            what: "exact kernel matrix must be square: columns",
            expected: n,
            got: exact.ncols(),
        });
    }
    let per_row: Vec<Vec<f64>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let mut sum = vec![0.0; n];
            let exact_row = exact.row(i);
            (0..n_blocks)
                .map(|r| {
                    contribute(r, i, &mut sum);
                    let scale = 1.0 / (r + 1) as f64;
                    sum.iter()
                        .zip(exact_row.iter())
                        .map(|(s, k)| (s * scale - k).abs())
                        .fold(0.0, f64::max)
                })
                .collect()
        })
        .collect();
    Ok((0..n_blocks)
        .map(|r| per_row.iter().map(|row| row[r]).fold(0.0, f64::max))
        .collect())
}

impl Features {
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

/// The feature matrix must have a row per row of the exact kernel matrix.
fn check_rows(n_rows: usize, exact: ArrayView2<f64>) -> Result<(), CoreError> {
    if n_rows != exact.nrows() {
        return Err(CoreError::ShapeMismatch {
            what: "rows of the feature matrix vs the exact kernel",
            expected: exact.nrows(),
            got: n_rows,
        });
    }
    Ok(())
}

/// [`prefix_max_errors`] for a one-hot feature map (Mondrian kernel, random binning): block `r`
/// contributes 1 where two rows share its column.
pub fn one_hot_prefix_max_errors(
    features: &OneHotFeatures,
    exact: ArrayView2<f64>,
) -> Result<Vec<f64>, CoreError> {
    check_rows(features.n_rows(), exact)?;
    let n = features.n_rows();
    prefix_max_errors(exact, features.n_blocks(), |r, i, row| {
        let ci = features.row(i)[r];
        if ci == ABSENT {
            return;
        }
        for (j, value) in row.iter_mut().enumerate().take(n) {
            if features.row(j)[r] == ci {
                *value += 1.0;
            }
        }
    })
}

/// [`prefix_max_errors`] for a dense feature map in blocks (random Fourier features): block `r`
/// contributes the dot product of rows `i` and `j` over its columns, `C_r[i, j] = z_i,r · z_j,r`
/// (for a Fourier block `[cos, sin]`: `cos(ω_rᵀx_i)cos(ω_rᵀx_j) + sin(ω_rᵀx_i)sin(ω_rᵀx_j)`).
///
/// Each block's dot product is summed left to right into a local and then added to the running
/// sum once (`sum += c_0 + c_1`, never `(sum + c_0) + c_1`): for width-2 blocks this rounds
/// exactly as the Fourier path always has, so reproduced Fig. 5 numbers do not change.
pub fn dense_prefix_max_errors(
    features: &DenseFeatures,
    exact: ArrayView2<f64>,
) -> Result<Vec<f64>, CoreError> {
    check_rows(features.n_rows(), exact)?;
    let rows = features.rows();
    prefix_max_errors(exact, features.n_blocks(), |r, i, row| {
        let block = features.block(r);
        let zi = &features.row_slice(i)[block.clone()];
        for (value, zj) in row.iter_mut().zip(rows.clone()) {
            let zj = &zj[block.clone()];
            let mut dot = zi[0] * zj[0];
            for (a, b) in zi[1..].iter().zip(&zj[1..]) {
                dot += a * b;
            }
            *value += dot;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use ndarray::{array, Array2};

    #[test]
    fn one_hot_prefix_errors_match_brute_force() {
        // 3 rows, 3 blocks.
        let f = OneHotFeatures::new(3, 3, 6, vec![0, 2, 4, 0, 3, 4, 1, 3, 5]).unwrap();
        let exact = array![[1.0, 0.5, 0.2], [0.5, 1.0, 0.4], [0.2, 0.4, 1.0]];
        let errors = one_hot_prefix_max_errors(&f, exact.view()).unwrap();
        for (r, &err) in errors.iter().enumerate() {
            let mut brute = Array2::<f64>::zeros((3, 3));
            for i in 0..3 {
                for j in 0..3 {
                    brute[[i, j]] = f.agreements(i, j, r + 1) as f64 / (r + 1) as f64;
                }
            }
            let expected = crate::metrics::max_abs_error(brute.view(), exact.view()).unwrap();
            assert_relative_eq!(err, expected, epsilon = 1e-15);
        }
        // Prefix 1: rows 0 and 1 agree (1 vs 0.5), rows 1 and 2 differ (0 vs 0.4).
        assert_relative_eq!(errors[0], 0.5);
    }

    #[test]
    fn dense_prefix_errors_match_brute_force() {
        // 3 rows, blocks of widths 1, 2, 1.
        let z = array![
            [1.0, 0.5, -0.5, 2.0],
            [0.0, 1.0, 0.25, -1.0],
            [0.5, -1.0, 1.0, 0.5]
        ];
        let ends = [1, 3, 4];
        let f = DenseFeatures::new(z.clone(), ends.to_vec()).unwrap();
        let exact = array![[1.0, 0.5, 0.2], [0.5, 1.0, 0.4], [0.2, 0.4, 1.0]];
        let errors = dense_prefix_max_errors(&f, exact.view()).unwrap();
        for (r, &err) in errors.iter().enumerate() {
            let prefix = z.slice(ndarray::s![.., ..ends[r]]);
            let estimate = prefix.dot(&prefix.t()) / (r + 1) as f64;
            let expected = crate::metrics::max_abs_error(estimate.view(), exact.view()).unwrap();
            assert_relative_eq!(err, expected, epsilon = 1e-14);
        }
        assert!(dense_prefix_max_errors(&f, Array2::zeros((2, 2)).view()).is_err());
    }

    #[test]
    fn rejects_non_square_exact_matrix() {
        let f = OneHotFeatures::new(2, 1, 1, vec![0, 0]).unwrap();
        assert!(one_hot_prefix_max_errors(&f, Array2::zeros((2, 3)).view()).is_err());
        assert!(one_hot_prefix_max_errors(&f, Array2::zeros((3, 3)).view()).is_err());
    }
}
