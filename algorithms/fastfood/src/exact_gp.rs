//! The exact ARD Gaussian process (spec §8: the reference on the SMALL sets): K = σ_f² exp(−½
//! Σ_k (x_k − x'_k)²/ℓ_k²) + σ²I, its log marginal likelihood with gradients in O(n² d + n³), and
//! its predictive distribution. θ = `[log(σ² − σ²_min), log σ_f², log ℓ (d)]`, as the ARD
//! feature model's.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use rayon::prelude::*;

use crate::error::{check_inputs, check_targets, FastfoodError};
use crate::evidence::dual_from_gram;

/// The exact ARD GP on one training set.
#[derive(Debug, Clone)]
pub struct ExactArd<'a> {
    x: ArrayView2<'a, f64>,
    y: ArrayView1<'a, f64>,
    noise_floor: f64,
}

fn kernel_matrix(
    a: ArrayView2<f64>,
    b: ArrayView2<f64>,
    signal: f64,
    lengths: &[f64],
) -> Array2<f64> {
    let inv: Vec<f64> = lengths.iter().map(|l| 1.0 / (l * l)).collect();
    let mut k = Array2::<f64>::zeros((a.nrows(), b.nrows()));
    k.outer_iter_mut()
        .into_par_iter()
        .zip(a.outer_iter().into_par_iter())
        .for_each(|(mut row, ai)| {
            for (kij, bj) in row.iter_mut().zip(b.outer_iter()) {
                let r2: f64 = ai
                    .iter()
                    .zip(bj)
                    .zip(&inv)
                    .map(|((p, q), w)| (p - q) * (p - q) * w)
                    .sum();
                *kij = signal * (-0.5 * r2).exp();
            }
        });
    k
}

impl<'a> ExactArd<'a> {
    pub fn new(
        x: ArrayView2<'a, f64>,
        y: ArrayView1<'a, f64>,
        noise_floor: f64,
    ) -> Result<Self, FastfoodError> {
        check_inputs("training inputs", x, None)?;
        check_targets(y.as_slice().unwrap_or(&y.to_vec()), x.nrows())?;
        Ok(Self { x, y, noise_floor })
    }

    pub fn n_params(&self) -> usize {
        2 + self.x.ncols()
    }

    fn unpack(&self, theta: &[f64]) -> (f64, f64, Vec<f64>) {
        (
            self.noise_floor + theta[0].exp(),
            theta[1].exp(),
            theta[2..].iter().map(|v| v.exp()).collect(),
        )
    }

    /// log p(y) and its gradient in θ.
    pub fn log_p(&self, theta: &[f64]) -> Result<(f64, Vec<f64>), FastfoodError> {
        let (noise, signal, lengths) = self.unpack(theta);
        let kf = kernel_matrix(self.x, self.x, signal, &lengths);
        let dual = dual_from_gram(kf.clone(), self.y, noise)?;
        let (n, d) = self.x.dim();
        // ∂log p/∂θ = ½ Σ_ij W_ij ∂K_ij/∂θ with W = ααᵀ − K⁻¹.
        let rows: Vec<Vec<f64>> = (0..n)
            .into_par_iter()
            .map(|i| {
                let mut g = vec![0.0; 2 + d];
                for j in 0..n {
                    let w = dual.alpha[i] * dual.alpha[j] - dual.k_inv[[i, j]];
                    let wk = w * kf[[i, j]];
                    g[1] += wk;
                    for k in 0..d {
                        let t = (self.x[[i, k]] - self.x[[j, k]]) / lengths[k];
                        g[2 + k] += wk * t * t;
                    }
                }
                g
            })
            .collect();
        let mut grad = vec![0.0; 2 + d];
        for g in rows {
            grad.iter_mut().zip(&g).for_each(|(a, b)| *a += 0.5 * b);
        }
        grad[0] = 0.5 * (dual.alpha.dot(&dual.alpha) - dual.k_inv.diag().sum()) * theta[0].exp();
        Ok((dual.log_p, grad))
    }

    /// Predictive means and variances (noise included) at `test`.
    pub fn predict(
        &self,
        theta: &[f64],
        test: ArrayView2<f64>,
    ) -> Result<(Array1<f64>, Array1<f64>), FastfoodError> {
        check_inputs("test inputs", test, Some(self.x.ncols()))?;
        let (noise, signal, lengths) = self.unpack(theta);
        let k = kernel_matrix(self.x, self.x, signal, &lengths);
        let dual = dual_from_gram(k, self.y, noise)?;
        let ks = kernel_matrix(test, self.x, signal, &lengths);
        let mean = ks.dot(&dual.alpha);
        let kk = ks.dot(&dual.k_inv);
        let var = Array1::from_iter(
            (0..test.nrows()).map(|i| (signal - kk.row(i).dot(&ks.row(i))).max(0.0) + noise),
        );
        Ok((mean, var))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn gradient_matches_central_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let x = Array2::from_shape_fn((25, 3), |_| rng.random::<f64>() * 2.0 - 1.0);
        let y = Array1::from_shape_fn(25, |i| (x[[i, 0]] * 2.0).sin() + 0.1 * rng.random::<f64>());
        let gp = ExactArd::new(x.view(), y.view(), 1e-6).unwrap();
        let theta = vec![-2.0, 0.3, -0.2, 0.1, 0.5];
        let (_, g) = gp.log_p(&theta).unwrap();
        for k in 0..theta.len() {
            let eps = 1e-6;
            let (mut p, mut m) = (theta.clone(), theta.clone());
            p[k] += eps;
            m[k] -= eps;
            let fd = (gp.log_p(&p).unwrap().0 - gp.log_p(&m).unwrap().0) / (2.0 * eps);
            assert!((fd - g[k]).abs() < 1e-6, "θ_{k}: {fd} vs {}", g[k]);
        }
    }
}
