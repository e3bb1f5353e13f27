//! Draws of a zero-mean Gaussian process with a given kernel matrix, plus observation noise
//! (the synthetic regression data of The Mondrian Kernel, Fig. 7: spec §2.2).

use ndarray::{Array1, Array2};
use ndarray_linalg::{Cholesky, UPLO};
use rand::Rng;
use rand_distr::StandardNormal;

use crate::error::non_negative;
use crate::CoreError;

/// Largest diagonal jitter tried when the kernel matrix is numerically not positive definite.
pub const MAX_JITTER: f64 = 1e-6;

/// One draw `y = L ξ + σ ε` with `L Lᵀ = K (+ jitter·I)`, `ξ, ε ~ N(0, I)`.
#[derive(Debug, Clone, PartialEq)]
pub struct GpSample {
    /// The noisy targets.
    pub y: Array1<f64>,
    /// Diagonal jitter added to K before the Cholesky factorisation: 0 unless K was numerically
    /// not positive definite, then the first of 1e-10, 1e-9, ... that worked.
    pub jitter: f64,
}

/// Samples `y = chol(K) ξ + noise_sd · ε` as the authors' `utils.py` (no jitter; on a failed
/// factorisation 1e-10·I is added, then ten times more up to [`MAX_JITTER`], and the value used
/// is returned). ξ is drawn first (all n values), then ε, from `rng`.
pub fn sample_gp(
    gram: &Array2<f64>,
    noise_sd: f64,
    rng: &mut impl Rng,
) -> Result<GpSample, CoreError> {
    non_negative("noise_sd", noise_sd)?;
    let n = gram.nrows();
    if gram.ncols() != n {
        return Err(CoreError::ShapeMismatch {
            what: "kernel matrix columns vs rows",
            expected: n,
            got: gram.ncols(),
        });
    }
    let mut jitter = 0.0;
    let lower = loop {
        let attempt = if jitter == 0.0 {
            gram.cholesky(UPLO::Lower)
        } else {
            let mut k = gram.clone();
            k.diag_mut().mapv_inplace(|d| d + jitter);
            k.cholesky(UPLO::Lower)
        };
        match attempt {
            Ok(l) => break l,
            Err(e) if jitter >= MAX_JITTER => {
                return Err(CoreError::solve(
                    "Cholesky factorisation of the GP kernel matrix",
                    format!("not positive definite even with jitter {jitter:e}: {e}"),
                ))
            }
            Err(_) => jitter = if jitter == 0.0 { 1e-10 } else { jitter * 10.0 },
        }
    };
    let xi: Array1<f64> = (0..n).map(|_| rng.sample(StandardNormal)).collect();
    let eps: Array1<f64> = (0..n)
        .map(|_| rng.sample::<f64, _>(StandardNormal))
        .collect();
    let y = lower.dot(&xi) + noise_sd * eps;
    Ok(GpSample { y, jitter })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::laplace_gram;
    use ndarray::array;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn empirical_covariance_matches_the_kernel_plus_noise() {
        // Independent check: Cov(y) = K + σ²I, estimated from many draws.
        let x = array![[0.0, 0.0], [0.1, 0.05], [0.5, 0.9]];
        let k = laplace_gram(x.view(), x.view(), 2.0).unwrap();
        let sigma = 0.3;
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let draws = 40_000;
        let mut cov = Array2::<f64>::zeros((3, 3));
        for _ in 0..draws {
            let s = sample_gp(&k, sigma, &mut rng).unwrap();
            assert_eq!(s.jitter, 0.0);
            for i in 0..3 {
                for j in 0..3 {
                    cov[[i, j]] += s.y[i] * s.y[j] / draws as f64;
                }
            }
        }
        for i in 0..3 {
            for j in 0..3 {
                let expected = k[[i, j]] + if i == j { sigma * sigma } else { 0.0 };
                // sd of a product-moment estimate <= sqrt(2/draws) * max variance ~ 0.008.
                assert!(
                    (cov[[i, j]] - expected).abs() < 0.035,
                    "cov[{i},{j}] = {} vs {expected}",
                    cov[[i, j]]
                );
            }
        }
    }

    #[test]
    fn singular_kernel_gets_recorded_jitter() {
        // Two identical points: K is exactly singular, so the factorisation needs jitter.
        let k = array![[1.0, 1.0], [1.0, 1.0]];
        let s = sample_gp(&k, 0.0, &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
        assert!(s.jitter >= 1e-10 && s.jitter <= MAX_JITTER);
        assert!((s.y[0] - s.y[1]).abs() < 1e-3, "{:?}", s.y);
    }

    #[test]
    fn rejects_bad_input() {
        let k = array![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert!(sample_gp(&k, 0.1, &mut rng).is_err());
        assert!(sample_gp(&Array2::eye(2), -1.0, &mut rng).is_err());
        let indefinite = array![[1.0, 2.0], [2.0, 1.0]];
        assert!(sample_gp(&indefinite, 0.1, &mut rng).is_err());
    }
}
