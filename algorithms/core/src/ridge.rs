//! Ridge regression: `w = (ZᵀZ + δI)⁻¹ Zᵀ y` by Cholesky, on dense features, for nested
//! prefixes of a feature set, and in the dual (kernel ridge regression).

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2};
use ndarray_linalg::{FactorizeC, SolveC, UPLO};
use rayon::prelude::*;

use crate::error::positive;
use crate::CoreError;

/// Solves the ridge normal equations `(ZᵀZ + δI) w = Zᵀy` (no intercept) by a Cholesky
/// factorisation. `δ > 0` makes the system positive definite.
pub fn ridge_weights(
    z: ArrayView2<f64>,
    y: ArrayView1<f64>,
    delta: f64,
) -> Result<Array1<f64>, CoreError> {
    positive("delta", delta)?;
    if z.nrows() != y.len() {
        return Err(CoreError::ShapeMismatch {
            what: "number of targets vs rows of the feature matrix",
            expected: z.nrows(),
            got: y.len(),
        });
    }
    let mut gram: Array2<f64> = z.t().dot(&z);
    gram.diag_mut().mapv_inplace(|d| d + delta);
    let rhs = z.t().dot(&y);
    solve_positive_definite(gram, rhs)
}

/// Solves `A x = b` for symmetric positive definite `A` by Cholesky.
pub fn solve_positive_definite(a: Array2<f64>, b: Array1<f64>) -> Result<Array1<f64>, CoreError> {
    let factor = a
        .factorizec(UPLO::Lower)
        .map_err(|e| CoreError::Solve(e.to_string()))?;
    factor
        .solvec(&b)
        .map_err(|e| CoreError::Solve(e.to_string()))
}

/// Ridge solutions for nested prefixes of one feature set.
///
/// With the columns ordered so that prefix R uses the first `ends[R - 1]` of them, `gram = AᵀA`
/// and `rhs = Aᵀy` over all columns, returns for every R the solution of
/// `(G[..e, ..e] + p_R I) v = rhs[..e]`, `e = ends[R - 1]`, `p_R = penalties[R - 1]`. Each prefix
/// is an independent Cholesky solve (run in parallel, results in prefix order).
///
/// Ridge on features scaled by `1/√R` with penalty δ is this with `p_R = R·δ` on the unscaled
/// features: `(AᵀA/R + δI)⁻¹Aᵀy/√R` predicts `A (AᵀA + RδI)⁻¹ Aᵀ y`.
pub fn nested_ridge(
    gram: ArrayView2<f64>,
    rhs: ArrayView1<f64>,
    ends: &[usize],
    penalties: &[f64],
) -> Result<Vec<Array1<f64>>, CoreError> {
    if gram.nrows() != gram.ncols() || gram.nrows() != rhs.len() {
        return Err(CoreError::ShapeMismatch {
            what: "Gram matrix size vs right-hand side",
            expected: rhs.len(),
            got: gram.nrows(),
        });
    }
    if ends.len() != penalties.len() {
        return Err(CoreError::ShapeMismatch {
            what: "number of penalties vs prefixes",
            expected: ends.len(),
            got: penalties.len(),
        });
    }
    if ends.windows(2).any(|w| w[0] > w[1]) || ends.last().is_some_and(|&e| e > rhs.len()) {
        return Err(CoreError::InvalidParameter {
            name: "prefix ends",
            value: format!("{ends:?}"),
            expected: "non-decreasing column counts within the Gram matrix",
        });
    }
    for &p in penalties {
        positive("penalty", p)?;
    }
    ends.par_iter()
        .zip(penalties)
        .map(|(&e, &p)| {
            if e == 0 {
                return Ok(Array1::zeros(0));
            }
            let mut a = gram.slice(s![..e, ..e]).to_owned();
            a.diag_mut().mapv_inplace(|d| d + p);
            solve_positive_definite(a, rhs.slice(s![..e]).to_owned())
        })
        .collect()
}

/// Kernel ridge regression in the dual: `ŷ = ȳ + K_* (K + δI)⁻¹ (y − ȳ)` (The Mondrian Kernel,
/// spec §3.1; no intercept beyond the training mean).
///
/// `gram` is K over the training points; each matrix of `cross` is `K_*` between some evaluation
/// points (rows) and the training points (columns). Returns one prediction vector per `cross`.
pub fn kernel_ridge(
    gram: Array2<f64>,
    y: ArrayView1<f64>,
    delta: f64,
    cross: &[ArrayView2<f64>],
) -> Result<KernelRidge, CoreError> {
    positive("delta", delta)?;
    if gram.nrows() != gram.ncols() || gram.nrows() != y.len() {
        return Err(CoreError::ShapeMismatch {
            what: "kernel matrix size vs number of targets",
            expected: y.len(),
            got: gram.nrows(),
        });
    }
    if let Some(bad) = cross.iter().find(|k| k.ncols() != y.len()) {
        return Err(CoreError::ShapeMismatch {
            what: "columns of a cross-kernel matrix vs training points",
            expected: y.len(),
            got: bad.ncols(),
        });
    }
    let mean = y.mean().unwrap_or(0.0);
    let mut a = gram;
    a.diag_mut().mapv_inplace(|d| d + delta);
    let alpha = solve_positive_definite(a, y.mapv(|v| v - mean))?;
    let predictions = cross.iter().map(|k| k.dot(&alpha) + mean).collect();
    Ok(KernelRidge {
        mean,
        alpha,
        predictions,
    })
}

/// A fitted kernel ridge regression.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRidge {
    /// ȳ, the training mean.
    pub mean: f64,
    /// Dual weights `α = (K + δI)⁻¹ (y − ȳ)`.
    pub alpha: Array1<f64>,
    /// `ȳ + K_* α` for each cross-kernel matrix given.
    pub predictions: Vec<Array1<f64>>,
}

impl KernelRidge {
    /// Predictions at the training points without the kernel matrix: `Kα = y − ȳ − δα`.
    pub fn training_predictions(&self, y: ArrayView1<f64>, delta: f64) -> Array1<f64> {
        &y - &(delta * &self.alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use ndarray::array;

    #[test]
    fn ridge_matches_closed_form_2x2() {
        // Z = I (2x2), so w = y / (1 + δ).
        let z = array![[1.0, 0.0], [0.0, 1.0]];
        let y = array![2.0, -4.0];
        let w = ridge_weights(z.view(), y.view(), 1.0).unwrap();
        assert_relative_eq!(w[0], 1.0, epsilon = 1e-12);
        assert_relative_eq!(w[1], -2.0, epsilon = 1e-12);
    }

    #[test]
    fn ridge_satisfies_normal_equations() {
        let z = array![
            [1.0, 2.0, 0.5],
            [0.3, -1.0, 2.0],
            [2.0, 0.1, 0.0],
            [1.0, 1.0, 1.0]
        ];
        let y = array![1.0, -2.0, 0.5, 3.0];
        let delta = 0.1;
        let w = ridge_weights(z.view(), y.view(), delta).unwrap();
        let residual = z.t().dot(&(z.dot(&w) - &y)) + &(delta * &w);
        for r in residual.iter() {
            assert!(r.abs() < 1e-10, "normal-equation residual {r}");
        }
    }

    #[test]
    fn nested_prefixes_equal_separate_solves() {
        let z = array![
            [1.0, 0.0, 2.0],
            [0.5, 1.0, 0.0],
            [0.0, 1.0, 1.0],
            [2.0, 0.0, 0.5]
        ];
        let y = array![1.0, -1.0, 2.0, 0.5];
        let gram = z.t().dot(&z);
        let rhs = z.t().dot(&y);
        let ends = [1, 3];
        let penalties = [0.3, 0.7];
        let nested = nested_ridge(gram.view(), rhs.view(), &ends, &penalties).unwrap();
        for (k, (&e, &p)) in ends.iter().zip(&penalties).enumerate() {
            let direct = ridge_weights(z.slice(s![.., ..e]), y.view(), p).unwrap();
            for (a, b) in nested[k].iter().zip(direct.iter()) {
                assert_relative_eq!(a, b, epsilon = 1e-12);
            }
        }
        assert!(nested_ridge(gram.view(), rhs.view(), &[3, 1], &[1.0, 1.0]).is_err());
        assert!(nested_ridge(gram.view(), rhs.view(), &[4], &[1.0]).is_err());
    }

    #[test]
    fn kernel_ridge_with_a_linear_kernel_equals_primal_ridge() {
        // K = ZZᵀ: the dual solution predicts exactly what primal ridge on centred targets does.
        let z = array![[1.0, 2.0], [0.3, -1.0], [2.0, 0.1], [1.0, 1.0], [-0.5, 0.4]];
        let y = array![1.0, -2.0, 0.5, 3.0, 0.0];
        let test = array![[0.2, 0.2], [1.5, -0.3]];
        let delta = 0.25;
        let mean = y.mean().unwrap();
        let w = ridge_weights(z.view(), y.mapv(|v| v - mean).view(), delta).unwrap();
        let cross = test.dot(&z.t());
        let train_cross = z.dot(&z.t());
        let fit = kernel_ridge(
            z.dot(&z.t()),
            y.view(),
            delta,
            &[cross.view(), train_cross.view()],
        )
        .unwrap();
        let primal = test.dot(&w) + mean;
        for (a, b) in fit.predictions[0].iter().zip(primal.iter()) {
            assert_relative_eq!(a, b, epsilon = 1e-10);
        }
        let train = fit.training_predictions(y.view(), delta);
        for (a, b) in fit.predictions[1].iter().zip(train.iter()) {
            assert_relative_eq!(a, b, epsilon = 1e-10);
        }
        assert!(kernel_ridge(z.dot(&z.t()), y.view(), 0.0, &[]).is_err());
        assert!(kernel_ridge(z.dot(&z.t()), y.view(), 1.0, &[z.view()]).is_err());
    }

    #[test]
    fn ridge_rejects_bad_input() {
        let z = array![[1.0], [2.0]];
        assert!(ridge_weights(z.view(), array![1.0].view(), 1.0).is_err());
        assert!(ridge_weights(z.view(), array![1.0, 2.0].view(), 0.0).is_err());
    }
}
