//! The log marginal likelihood of Bayesian linear regression on features (spec §2, §5):
//! `y ~ N(0, K)`, `K = ΦΦᵀ + σ²I` (amplitudes absorbed in Φ, D6), with its gradients with
//! respect to Φ and σ², and the posterior predictive distribution.
//!
//! Two exact forms, chosen by cost: the primal one of spec §5 with the D × D matrix
//! `A = ΦᵀΦ + σ²I` (O(nD² + D³), when n >= D), and the dual one with the n × n matrix K itself
//! (O(n²D + n³), when n < D: the SMALL sets with D = 512). Both give the same numbers up to
//! rounding; the exact GP uses the dual form with its own Gram matrix.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use ndarray_linalg::{Lapack, MatrixLayout, UPLO};

use crate::blas::{blas_int, gemm, gram_upper, inverse_from_cholesky, recycle, spare, t_dot};
use crate::error::FastfoodError;

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// `(u, v)`: the rank-one matrix `u vᵀ`.
pub type RankOne = (Array1<f64>, Array1<f64>);

/// Which gradients [`evidence`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gradients {
    /// The value only.
    No,
    /// `∂ log p / ∂Φ` whole, in [`Evidence::d_phi`].
    Full,
    /// `∂ log p / ∂Φ` as a matrix and a rank-one term kept apart ([`Evidence::rank_one`]), for
    /// a caller that only contracts it (it saves writing the n × D outer product).
    RankOneApart,
}

/// The log marginal likelihood and, if asked for, its gradients.
#[derive(Debug, Clone)]
pub struct Evidence {
    /// log p(y).
    pub log_p: f64,
    /// `∂ log p / ∂Φ` (n × D), less [`Self::rank_one`] when that is kept apart; empty unless
    /// gradients were asked for.
    pub d_phi: Array2<f64>,
    /// `(u, v)` with `∂ log p / ∂Φ = d_phi + u vᵀ` ([`Gradients::RankOneApart`]).
    pub rank_one: Option<RankOne>,
    /// `∂ log p / ∂σ²`.
    pub d_noise: f64,
}

impl Evidence {
    /// `∂ log p / ∂Φ` whole (`d_phi` with the rank-one term added, if it was kept apart: the
    /// same bits as [`Gradients::Full`] only where dgemm sums in one pass).
    pub fn full_d_phi(&self) -> std::borrow::Cow<'_, Array2<f64>> {
        match &self.rank_one {
            None => std::borrow::Cow::Borrowed(&self.d_phi),
            Some((u, v)) => {
                let mut r = outer(u, v);
                r += &self.d_phi;
                std::borrow::Cow::Owned(r)
            }
        }
    }
}

/// `−g` (n × D) less a rank-one term: `u vᵀ − g` whole, or `−g` with `(u, v)` apart.
fn rank_one_less(
    gradients: Gradients,
    u: Array1<f64>,
    v: Array1<f64>,
    product: impl FnOnce(f64, &mut Array2<f64>),
) -> (Array2<f64>, Option<RankOne>) {
    if gradients == Gradients::RankOneApart {
        // Every value is written by dgemm with beta = 0.
        let mut r = crate::blas::scratch(u.len(), v.len());
        product(0.0, &mut r);
        (r, Some((u, v)))
    } else {
        let mut r = outer(&u, &v);
        product(1.0, &mut r);
        (r, None)
    }
}

fn not_pd(what: &str, e: impl std::fmt::Display) -> FastfoodError {
    FastfoodError::solve(
        "Cholesky factorisation of the marginal likelihood",
        format!("{what} is not positive definite ({e})"),
    )
}

/// The Cholesky factorisation `LLᵀ` of a symmetric positive definite matrix: L in the lower
/// triangle of a column-major matrix, where LAPACK factorises, solves (dpotrs) and inverts in
/// place. (ndarray-linalg would factorise and invert a row-major matrix by the same LAPACK calls
/// on its storage read column-major, and solve on a row-major copy of L. dpotrs on the
/// column-major L gave those solves' bits on every shape checked, 13 of them from n = 50 to
/// 4,000, dual and primal, with Debian's OpenBLAS 0.3.21: measured, not promised by LAPACK. It
/// saves the copy, about 2 % of an evaluation at yacht's shape.)
struct Cholesky {
    /// L in the lower triangle, column-major; above it arbitrary values (the scratch memory
    /// [`gram_upper`] wrote into), never read.
    columns: Array2<f64>,
}

impl Cholesky {
    fn layout(&self) -> MatrixLayout {
        let size = blas_int(self.columns.nrows());
        MatrixLayout::F {
            col: size,
            lda: size,
        }
    }

    /// `(LLᵀ)⁻¹ b` (`b` of any layout).
    fn solve(&self, b: &Array1<f64>, what: &str) -> Result<Array1<f64>, FastfoodError> {
        let mut x = Array1::from(b.to_vec());
        f64::solve_cholesky(
            self.layout(),
            UPLO::Lower,
            self.columns.as_slice_memory_order().expect("contiguous"),
            x.as_slice_mut().expect("contiguous"),
        )
        .map_err(|e| not_pd(what, e))?;
        Ok(x)
    }

    /// `ln det(LLᵀ)`, summed as ndarray-linalg's `ln_detc` sums it: `ln(L_ii²)` in order.
    fn ln_det(&self) -> f64 {
        self.columns.diag().iter().map(|d| (d * d).ln()).sum()
    }

    /// The inverse (both triangles, row-major).
    fn inverse(self, what: &str) -> Result<Array2<f64>, FastfoodError> {
        // Symmetric, so its column-major storage read row-major is the same matrix.
        Ok(inverse_from_cholesky(self.columns)
            .map_err(|e| not_pd(what, e))?
            .reversed_axes())
    }
}

/// The Cholesky factor of `m + σ²I` (`m` symmetric, row-major: only its upper triangle is read,
/// so [`gram_upper`]'s output serves; `what` names the matrix in errors).
fn factor_with_noise(
    mut m: Array2<f64>,
    noise: f64,
    what: &str,
) -> Result<Cholesky, FastfoodError> {
    let k = m.nrows();
    for i in 0..k {
        m[[i, i]] += noise;
    }
    // Symmetric: its row-major storage read column-major is the same matrix. dpotrf writes L
    // in the lower triangle and leaves the upper one (never read by the solves or the inverse).
    let mut chol = Cholesky {
        columns: m.reversed_axes(),
    };
    f64::cholesky(
        chol.layout(),
        UPLO::Lower,
        chol.columns
            .as_slice_memory_order_mut()
            .expect("contiguous"),
    )
    .map_err(|e| not_pd(what, e))?;
    Ok(chol)
}

/// Whether every value is finite (a NaN or an infinity times 0 is NaN; chunked so that it
/// vectorises).
fn all_finite(v: ArrayView2<f64>) -> bool {
    match v.as_slice_memory_order() {
        Some(s) => {
            let mut acc = [0.0f64; 8];
            let chunks = s.chunks_exact(8);
            let rest = chunks.remainder().iter().fold(0.0, |a, x| a + x * 0.0);
            for c in chunks {
                for (a, x) in acc.iter_mut().zip(c) {
                    *a += x * 0.0;
                }
            }
            !(acc.iter().sum::<f64>() + rest).is_nan()
        }
        None => v.iter().all(|x| x.is_finite()),
    }
}

/// log p(y) for features `phi` (n × D), targets `y` and noise variance `noise` > 0.
pub fn evidence(
    phi: ArrayView2<f64>,
    y: ArrayView1<f64>,
    noise: f64,
    gradients: Gradients,
) -> Result<Evidence, FastfoodError> {
    if !(noise.is_finite() && noise > 0.0 && all_finite(phi)) {
        return Err(FastfoodError::solve(
            "the marginal likelihood",
            format!("features or noise variance ({noise}) not finite"),
        ));
    }
    if phi.nrows() >= phi.ncols() {
        primal(phi, y, noise, gradients)
    } else {
        let Dual {
            log_p,
            alpha,
            k_inv,
        } = dual_from_gram(gram_upper(phi, false), y, noise)?;
        let d_noise = 0.5 * (alpha.dot(&alpha) - k_inv.diag().sum());
        let (d_phi, rank_one) = if gradients == Gradients::No {
            (Array2::zeros((0, 0)), None)
        } else {
            // ∂/∂Φ = (ααᵀ − K⁻¹) Φ = α (Φᵀα)ᵀ − K⁻¹Φ.
            let a = t_dot(phi, alpha.view());
            rank_one_less(gradients, alpha, a, |beta, r| {
                gemm(-1.0, k_inv.view(), phi, beta, r)
            })
        };
        recycle(k_inv);
        Ok(Evidence {
            log_p,
            d_phi,
            rank_one,
            d_noise,
        })
    }
}

/// `a bᵀ`, each value written once (no zeros first).
fn outer(a: &Array1<f64>, b: &Array1<f64>) -> Array2<f64> {
    let mut v = spare(a.len() * b.len());
    for &ai in a {
        v.extend(b.iter().map(|bj| ai * bj));
    }
    Array2::from_shape_vec((a.len(), b.len()), v).expect("len(a) × len(b) values")
}

fn primal(
    phi: ArrayView2<f64>,
    y: ArrayView1<f64>,
    noise: f64,
    gradients: Gradients,
) -> Result<Evidence, FastfoodError> {
    let (n, d) = phi.dim();
    let b = t_dot(phi, y);
    let chol = factor_with_noise(gram_upper(phi, true), noise, "ΦᵀΦ + σ²I")?;
    let w = chol.solve(&b, "ΦᵀΦ + σ²I")?;
    let log_det_a = chol.ln_det();
    let yy = y.dot(&y);
    let log_p = -0.5
        * ((yy - b.dot(&w)) / noise
            + log_det_a
            + (n as f64 - d as f64) * noise.ln()
            + n as f64 * LN_2PI);
    if gradients == Gradients::No {
        return Ok(Evidence {
            log_p,
            d_phi: Array2::zeros((0, 0)),
            rank_one: None,
            d_noise: 0.0,
        });
    }
    let a_inv = chol.inverse("ΦᵀΦ + σ²I")?;
    // α = (y − Φa)/σ²; ∂/∂Φ = α aᵀ − Φ A⁻¹; ∂/∂σ² = ½(‖α‖² − (n − D)/σ² − tr A⁻¹).
    let alpha = (&y - &phi.dot(&w)) / noise;
    let d_noise = 0.5 * (alpha.dot(&alpha) - (n as f64 - d as f64) / noise - a_inv.diag().sum());
    let (d_phi, rank_one) = rank_one_less(gradients, alpha, w, |beta, r| {
        gemm(-1.0, phi, a_inv.view(), beta, r)
    });
    recycle(a_inv);
    Ok(Evidence {
        log_p,
        d_phi,
        rank_one,
        d_noise,
    })
}

/// The dual form on a Gram matrix without noise: K = `gram` + σ²I.
#[derive(Debug, Clone)]
pub struct Dual {
    pub log_p: f64,
    /// α = K⁻¹y.
    pub alpha: Array1<f64>,
    /// K⁻¹.
    pub k_inv: Array2<f64>,
}

/// log N(y; 0, gram + σ²I), α and K⁻¹ (the Gram matrix is consumed; only its upper triangle,
/// row-major, is read).
pub fn dual_from_gram(
    gram: Array2<f64>,
    y: ArrayView1<f64>,
    noise: f64,
) -> Result<Dual, FastfoodError> {
    let n = gram.nrows();
    let chol = factor_with_noise(gram, noise, "K")?;
    let alpha = chol.solve(&y.to_owned(), "K")?;
    let log_p = -0.5 * (y.dot(&alpha) + chol.ln_det() + n as f64 * LN_2PI);
    let k_inv = chol.inverse("K")?;
    Ok(Dual {
        log_p,
        alpha,
        k_inv,
    })
}

/// The posterior of the weights: `w | y ~ N(A⁻¹Φᵀy, σ²A⁻¹)`.
#[derive(Debug, Clone)]
pub struct Posterior {
    mean: Array1<f64>,
    cov: Array2<f64>,
    noise: f64,
}

impl Posterior {
    pub fn new(
        phi: ArrayView2<f64>,
        y: ArrayView1<f64>,
        noise: f64,
    ) -> Result<Self, FastfoodError> {
        let chol = factor_with_noise(gram_upper(phi, true), noise, "ΦᵀΦ + σ²I")?;
        let mean = chol.solve(&t_dot(phi, y), "ΦᵀΦ + σ²I")?;
        let cov = chol.inverse("ΦᵀΦ + σ²I")? * noise;
        Ok(Self { mean, cov, noise })
    }

    /// Predictive means and variances of y* (noise included) for test features.
    pub fn predict(&self, phi: ArrayView2<f64>) -> (Array1<f64>, Array1<f64>) {
        let mean = phi.dot(&self.mean);
        let pc = phi.dot(&self.cov);
        let var = (&pc * &phi).sum_axis(Axis(1)) + self.noise;
        (mean, var)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray_linalg::{Determinant, Inverse};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random(n: usize, d: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let phi = Array2::from_shape_fn((n, d), |_| rng.random::<f64>() - 0.5);
        let y = Array1::from_shape_fn(n, |_| rng.random::<f64>() * 2.0 - 1.0);
        (phi, y)
    }

    /// log N(y; 0, ΦΦᵀ + σ²I) from the dense n × n matrix (spec §10.4).
    fn dense_log_p(phi: &Array2<f64>, y: &Array1<f64>, noise: f64) -> f64 {
        let n = y.len();
        let k = phi.dot(&phi.t()) + Array2::<f64>::eye(n) * noise;
        let (_, ln_det) = k.sln_det().unwrap();
        -0.5 * (y.dot(&k.inv().unwrap().dot(y)) + ln_det + n as f64 * LN_2PI)
    }

    #[test]
    fn both_forms_equal_the_dense_likelihood_and_each_other() {
        for (n, d) in [(30, 8), (8, 30), (20, 20)] {
            let (phi, y) = random(n, d, n as u64);
            let e = evidence(phi.view(), y.view(), 0.3, Gradients::Full).unwrap();
            assert!((e.log_p - dense_log_p(&phi, &y, 0.3)).abs() < 1e-9);
            let p = primal(phi.view(), y.view(), 0.3, Gradients::Full).unwrap();
            assert!((p.log_p - e.log_p).abs() < 1e-9);
            assert!((p.d_noise - e.d_noise).abs() < 1e-9);
            assert!((&p.d_phi - &e.d_phi).iter().all(|v| v.abs() < 1e-9));
        }
    }

    #[test]
    fn the_rank_one_term_kept_apart_adds_up_to_the_whole_gradient() {
        for (n, d) in [(30, 8), (8, 30)] {
            let (phi, y) = random(n, d, 11 + n as u64);
            let full = evidence(phi.view(), y.view(), 0.2, Gradients::Full).unwrap();
            let apart = evidence(phi.view(), y.view(), 0.2, Gradients::RankOneApart).unwrap();
            assert!(full.rank_one.is_none() && apart.rank_one.is_some());
            assert_eq!(full.log_p, apart.log_p);
            assert_eq!(full.d_noise, apart.d_noise);
            assert_eq!(full.full_d_phi().as_ref(), &full.d_phi);
            let whole = apart.full_d_phi();
            assert!((whole.as_ref() - &full.d_phi)
                .iter()
                .all(|v| v.abs() < 1e-12));
            assert!((&apart.d_phi - &full.d_phi).iter().any(|v| v.abs() > 1e-6));
        }
    }

    #[test]
    fn gradients_match_central_differences() {
        for (n, d) in [(30, 8), (8, 30)] {
            let (phi, y) = random(n, d, 7 + n as u64);
            let noise = 0.2;
            let e = evidence(phi.view(), y.view(), noise, Gradients::Full).unwrap();
            let eps = 1e-6;
            let f = |p: &Array2<f64>, s: f64| {
                evidence(p.view(), y.view(), s, Gradients::No)
                    .unwrap()
                    .log_p
            };
            let fd = (f(&phi, noise + eps) - f(&phi, noise - eps)) / (2.0 * eps);
            assert!((fd - e.d_noise).abs() < 1e-7, "σ²: {fd} vs {}", e.d_noise);
            for (i, j) in [(0, 0), (3, 5), (n - 1, d - 1)] {
                let (mut p, mut m) = (phi.clone(), phi.clone());
                p[[i, j]] += eps;
                m[[i, j]] -= eps;
                let fd = (f(&p, noise) - f(&m, noise)) / (2.0 * eps);
                assert!((fd - e.d_phi[[i, j]]).abs() < 1e-7, "Φ[{i},{j}]");
            }
        }
    }

    #[test]
    fn predictive_equals_the_gp_formula() {
        let (phi, y) = random(25, 6, 3);
        let (test, _) = random(4, 6, 4);
        let noise = 0.1;
        let post = Posterior::new(phi.view(), y.view(), noise).unwrap();
        let (mean, var) = post.predict(test.view());
        let k = phi.dot(&phi.t()) + Array2::<f64>::eye(25) * noise;
        let k_inv = k.inv().unwrap();
        let ks = test.dot(&phi.t());
        let gp_mean = ks.dot(&k_inv.dot(&y));
        for i in 0..4 {
            let kss = test.row(i).dot(&test.row(i));
            let v = kss - ks.row(i).dot(&k_inv.dot(&ks.row(i))) + noise;
            assert!((mean[i] - gp_mean[i]).abs() < 1e-9);
            assert!((var[i] - v).abs() < 1e-9);
        }
    }
}
