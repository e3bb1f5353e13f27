//! Ridge regression on dense features: `w = (ZᵀZ + δI)⁻¹ Zᵀ y` by Cholesky.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use ndarray_linalg::{FactorizeC, SolveC, UPLO};

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
    fn ridge_rejects_bad_input() {
        let z = array![[1.0], [2.0]];
        assert!(ridge_weights(z.view(), array![1.0].view(), 1.0).is_err());
        assert!(ridge_weights(z.view(), array![1.0, 2.0].view(), 0.0).is_err());
    }
}
