//! The FALKON solve of one level (spec §6; Rudi, Carratino, Rosasco, NeurIPS 2017): given the
//! landmarks' Gram matrix K_mm and the streamed sufficient statistics KᵀK = Σ k(x_i)k(x_i)ᵀ and
//! Z = Σ k(x_i) y_iᵀ over n points, approximately solve (KᵀK + λn·K_mm) α = Z by conjugate
//! gradients preconditioned with the Cholesky factors T (K_mm = TᵀT) and A
//! (TTᵀ/m + λI = AᵀA).

use kernel_core::cg::{identity, try_conjugate_gradient_lockstep, CgOptions, CgStop};
use kernel_core::error::{at_least_one, non_negative, positive};
use kernel_core::{CoreError, Predictor};
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};
use ndarray_linalg::{CholeskyInto, UPLO};

use crate::band::BandedExpansion;
use crate::error::StreamError;
pub use crate::kernel::gaussian_kernel;
use crate::statistics::LevelStatistics;

/// The solver's constants; the paper's experiments use λ = 1e-3, 10 CG iterations, a CG
/// threshold of 1e-10 and a Cholesky jitter of 1e-10.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FalkonParams {
    pub lambda: f64,
    pub cg_max_iterations: usize,
    pub cg_threshold: f64,
    pub jitter: f64,
}

impl FalkonParams {
    /// Checks every constant against its domain: λ > 0, at least one CG iteration, a threshold
    /// and a jitter ≥ 0.
    pub fn check(&self) -> Result<(), StreamError> {
        positive("lambda", self.lambda)?;
        at_least_one("cg_max_iterations", self.cg_max_iterations)?;
        non_negative("cg_threshold", self.cg_threshold)?;
        non_negative("jitter", self.jitter)?;
        Ok(())
    }

    pub fn paper() -> Self {
        Self {
            lambda: 1e-3,
            cg_max_iterations: 10,
            cg_threshold: 1e-10,
            jitter: 1e-10,
        }
    }
}

/// A fitted kernel expansion f(x) = Σ_j α_j k_r(x, λ_j) (one pyramid level, or FALKON).
#[derive(Debug, Clone, PartialEq)]
pub struct Expansion {
    pub landmarks: Array2<f64>,
    pub bandwidth: f64,
    pub alpha: Array2<f64>,
}

impl Predictor for Expansion {
    type Output = Array2<f64>;
    type Error = StreamError;

    /// f(x), one row per point; an error if `x` has another number of columns than the
    /// landmarks. Each point sums only the landmarks within reach of it (every other kernel
    /// entry is exactly 0.0; `crate::band`), so the value is the dense sum up to its order.
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>, StreamError> {
        kernel_core::error::check_columns(
            "columns of the points vs the landmarks'",
            x,
            self.landmarks.ncols(),
        )?;
        Ok(
            BandedExpansion::new(self.landmarks.view(), self.alpha.view(), self.bandwidth)
                .predict(x),
        )
    }
}

impl Expansion {
    /// The FALKON solve of the statistics' level, in the statistics' internal order of the
    /// landmarks (the same solve up to rounding in any order); α is returned in the order the
    /// landmarks were given.
    pub fn fit(stats: &LevelStatistics, falkon: FalkonParams) -> Result<Self, StreamError> {
        let (lm, ktk, z) = stats.internal();
        let k_mm = gaussian_kernel(lm, lm, stats.bandwidth());
        let alpha = solve(k_mm.view(), ktk, z, stats.rows(), falkon)?;
        Ok(Self {
            landmarks: stats.landmarks().clone(),
            bandwidth: stats.bandwidth(),
            alpha: stats.unpermute_rows(alpha.view()),
        })
    }
}

fn linalg<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> StreamError {
    move |e| CoreError::solve(what, e)
}

/// α (m × p) of the level: the FALKON iterate after at most `cg_max_iterations` CG steps per
/// target column, from β = 0.
pub fn solve(
    k_mm: ArrayView2<f64>,
    ktk: ArrayView2<f64>,
    z: ArrayView2<f64>,
    n: usize,
    p: FalkonParams,
) -> Result<Array2<f64>, StreamError> {
    let m = k_mm.nrows();
    if ktk.dim() != (m, m) {
        return Err(StreamError::shape(
            "rows of K_m^T K_m and Z vs the landmarks",
            m,
            ktk.nrows().max(z.nrows()),
        ));
    }
    solve_with(
        k_mm.to_owned(),
        |us: &[Array1<f64>]| Ok(us.iter().map(|u| ktk.dot(u)).collect()),
        z,
        n,
        p,
    )
}

/// [`solve`] with KᵀK as an operator: `ktk` maps the vectors u (m values each) to KᵀK u, all
/// of one CG iteration at once (the target columns' CGs run in lockstep, so an operator that
/// passes over the data computes them in one pass: [`crate::baselines::MatrixFreeFalkon`]).
/// `k_mm` is taken by value and factorised in place: at m = 19,800 each m × m matrix is 3.1 GB,
/// and the solve holds two (T, and T Tᵀ factorised in place into A).
pub fn solve_with(
    k_mm: Array2<f64>,
    ktk: impl Fn(&[Array1<f64>]) -> Result<Vec<Array1<f64>>, StreamError>,
    z: ArrayView2<f64>,
    n: usize,
    p: FalkonParams,
) -> Result<Array2<f64>, StreamError> {
    p.check()?;
    let m = k_mm.nrows();
    if k_mm.ncols() != m || z.nrows() != m {
        return Err(StreamError::shape(
            "rows of K_m^T K_m and Z vs the landmarks",
            m,
            z.nrows(),
        ));
    }
    if n == 0 {
        return Err(StreamError::invalid_input(
            "number of rows of the statistics",
            0,
            "at least 1 row",
        ));
    }
    let nf = n as f64;
    let mut kj = k_mm;
    kj.diag_mut().mapv_inplace(|v| v + p.jitter);
    // K_mm + jitter = TᵀT (T upper).
    let t = kj
        .cholesky_into(UPLO::Upper)
        .map_err(linalg("Cholesky factorisation of K_mm + jitter"))?;
    // T Tᵀ by LAPACK's dlauum (a third of the flops of a product; its upper triangle only:
    // the factorisation below reads no other), then / m + λ I = AᵀA.
    let mut tt = t.clone();
    upper_times_transpose(&mut tt).map_err(linalg("T T^T (dlauum)"))?;
    tt.mapv_inplace(|v| v / m as f64);
    tt.diag_mut().mapv_inplace(|v| v + p.lambda);
    let a = tt
        .cholesky_into(UPLO::Upper)
        .map_err(linalg("Cholesky factorisation of T T^T / m + lambda I"))?;
    // Triangular solves x = U⁻¹ v and x = U⁻ᵀ v by BLAS dtrsv on the row-major factors
    // themselves (no copy of an m × m matrix: at m = 19,790 each is 3.1 GB).
    let (t, a) = (&t, &a);
    let inv = |u: &Array2<f64>, v: &Array1<f64>| triangular_solve(u, v, false);
    let inv_t = |u: &Array2<f64>, v: &Array1<f64>| triangular_solve(u, v, true);
    // W v = (1/n) A⁻ᵀ (T⁻ᵀ KᵀK T⁻¹ A⁻¹ v + nλ A⁻¹ v), for the directions of every running
    // column at once.
    let apply = |vs: &[&[f64]], outs: &mut [&mut [f64]]| -> Result<(), StreamError> {
        let mut avs = Vec::with_capacity(vs.len());
        let mut us = Vec::with_capacity(vs.len());
        for v in vs {
            let av = inv(a, &Array1::from(v.to_vec()));
            us.push(inv(t, &av));
            avs.push(av);
        }
        let ktk_us = ktk(&us)?;
        for ((av, ku), out) in avs.iter().zip(&ktk_us).zip(outs.iter_mut()) {
            let inner = inv_t(t, ku) + &(av * (nf * p.lambda));
            let wv = inv_t(a, &inner) / nf;
            out.copy_from_slice(wv.as_slice().expect("contiguous"));
        }
        Ok(())
    };
    // CG on W β = b from β = 0 per column: at most `cg_max_iterations` steps, stopping when
    // ‖r‖ < `cg_threshold`; kernel-core's CG without preconditioner (the FALKON preconditioner
    // is inside W), with ndarray's inner products, the sums this solve has always used.
    let mut bs = Vec::with_capacity(z.ncols());
    for zc in z.axis_iter(Axis(1)) {
        let zbar: Array1<f64> = zc.to_owned() / nf;
        bs.push(inv_t(a, &inv_t(t, &zbar)).to_vec());
    }
    let mut betas = vec![vec![0.0; m]; bs.len()];
    let options = CgOptions {
        stop: CgStop::Below(p.cg_threshold),
        max_iterations: p.cg_max_iterations,
        dot: |u, v| ArrayView1::from(u).dot(&ArrayView1::from(v)),
        zero_start: true,
    };
    let rhs: Vec<&[f64]> = bs.iter().map(|b| b.as_slice()).collect();
    try_conjugate_gradient_lockstep(
        apply,
        |r, z| {
            identity(r, z);
            Ok::<(), StreamError>(())
        },
        &rhs,
        &mut betas,
        &options,
    )?;
    let mut alpha = Array2::zeros((m, z.ncols()));
    for (col, beta) in betas.into_iter().enumerate() {
        let x = inv(t, &inv(a, &Array1::from(beta)));
        alpha.slice_mut(s![.., col]).assign(&x);
    }
    Ok(alpha)
}

/// The upper triangle of T Tᵀ over the upper triangle of `t` (row-major, upper triangular T),
/// by LAPACK's dlauum: the row-major T is the column-major L = Tᵀ, and dlauum writes LᵀL = T Tᵀ
/// over L's (column-major lower, row-major upper) triangle; the other triangle keeps T's zeros.
fn upper_times_transpose(t: &mut Array2<f64>) -> Result<(), String> {
    let m = t.nrows();
    if t.ncols() != m || !t.is_standard_layout() {
        return Err(format!("a square row-major matrix, got {:?}", t.dim()));
    }
    let n = i32::try_from(m).map_err(|_| format!("{m} landmarks exceed a LAPACK int"))?;
    let mut info = 0;
    // SAFETY: `t` is a contiguous m × m matrix (checked above), so lda = n = m; dlauum reads and
    // writes one triangle of it and reports through `info`.
    unsafe {
        lapack_sys::dlauum_(c"L".as_ptr(), &n, t.as_mut_ptr(), &n, &mut info);
    }
    if info != 0 {
        return Err(format!("dlauum returned info = {info}"));
    }
    Ok(())
}

/// x with U x = v (`transpose`: Uᵀ x = v) for the upper triangular row-major factor `u`
/// (m × m, contiguous), by BLAS dtrsv.
fn triangular_solve(u: &Array2<f64>, v: &Array1<f64>, transpose: bool) -> Array1<f64> {
    let m = u.nrows();
    assert!(
        u.ncols() == m && u.is_standard_layout() && v.len() == m,
        "internal error: triangular solve shapes"
    );
    let n = i32::try_from(m).expect("landmarks fit in a BLAS int");
    let mut x = v.as_standard_layout().into_owned();
    // SAFETY: `u` is a contiguous row-major m × m matrix (lda = m) and `x` a contiguous vector
    // of m values (incx = 1), checked above; dtrsv overwrites `x` only.
    unsafe {
        cblas_sys::cblas_dtrsv(
            cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
            cblas_sys::CBLAS_UPLO::CblasUpper,
            if transpose {
                cblas_sys::CBLAS_TRANSPOSE::CblasTrans
            } else {
                cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans
            },
            cblas_sys::CBLAS_DIAG::CblasNonUnit,
            n,
            u.as_ptr(),
            n,
            x.as_mut_ptr(),
            1,
        );
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::gaussian_kernel;
    use ndarray_linalg::Solve;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Spec §12.3: with many CG iterations FALKON reaches the exact Nyström KRR solution
    /// (KᵀK + λn K_mm)⁻¹ Z; compared through the predictions K α (α itself is ill-conditioned).
    #[test]
    fn many_cg_steps_reach_the_exact_nystrom_solution() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 200;
        let x: Array2<f64> = Array2::from_shape_fn((n, 1), |_| rng.random_range(0.0..1.0));
        let y = x.mapv(|v| (6.0 * v).sin() + 0.05 * (v * 97.0).cos());
        let landmarks = x.slice(s![..40, ..]).to_owned();
        let k = gaussian_kernel(x.view(), landmarks.view(), 0.2);
        let k_mm = gaussian_kernel(landmarks.view(), landmarks.view(), 0.2);
        let ktk = k.t().dot(&k);
        let z = k.t().dot(&y);
        let p = FalkonParams {
            lambda: 1e-4,
            cg_max_iterations: 400,
            cg_threshold: 1e-14,
            jitter: 1e-10,
        };
        let alpha = solve(k_mm.view(), ktk.view(), z.view(), n, p).unwrap();
        let mut system = &ktk + &(&k_mm * (p.lambda * n as f64));
        system
            .diag_mut()
            .mapv_inplace(|v| v + p.jitter * p.lambda * n as f64);
        let exact = system.solve(&z.column(0).to_owned()).unwrap();
        let (fit, want) = (k.dot(&alpha.column(0)), k.dot(&exact));
        let gap = (&fit - &want)
            .mapv(f64::abs)
            .fold(0.0, |a: f64, &b| a.max(b));
        assert!(gap < 1e-6, "largest prediction gap {gap}");
        // And the fit is good: the training error is small.
        let err = (&fit - &y.column(0)).mapv(|v| v * v).mean().unwrap();
        assert!(err < 1e-2, "training MSE {err}");
    }

    /// dlauum's T Tᵀ equals the product of the upper triangular factor with its transpose
    /// (ndarray's, an independent computation) to rounding, on its upper triangle, and the
    /// dtrsv solves invert U and Uᵀ (residuals at rounding level).
    #[test]
    fn lauum_and_triangular_solves_match_products() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for m in [1usize, 2, 7, 64, 129] {
            let u = Array2::from_shape_fn((m, m), |(i, j)| {
                if i <= j {
                    rng.random_range(0.5..1.5) * if i == j { 2.0 } else { 0.3 }
                } else {
                    0.0
                }
            });
            let want = u.dot(&u.t());
            let mut got = u.clone();
            upper_times_transpose(&mut got).unwrap();
            for i in 0..m {
                for j in i..m {
                    assert!(
                        (got[[i, j]] - want[[i, j]]).abs() <= 1e-13 * want[[i, j]].abs().max(1.0),
                        "m {m} ({i}, {j}): {} vs {}",
                        got[[i, j]],
                        want[[i, j]]
                    );
                }
            }
            let v = Array1::from_shape_fn(m, |_| rng.random_range(-1.0..1.0));
            let x = triangular_solve(&u, &v, false);
            let xt = triangular_solve(&u, &v, true);
            for (a, b) in u
                .dot(&x)
                .iter()
                .zip(&v)
                .chain(u.t().dot(&xt).iter().zip(&v))
            {
                assert!((a - b).abs() <= 1e-12, "m {m}: {a} vs {b}");
            }
        }
        assert!(upper_times_transpose(&mut Array2::zeros((2, 3))).is_err());
    }

    #[test]
    fn ten_cg_steps_already_fit_and_bad_shapes_are_errors() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let x: Array2<f64> = Array2::from_shape_fn((300, 2), |_| rng.random_range(-1.0..1.0));
        let y = x
            .map_axis(Axis(1), |r| (3.0 * r[0]).sin() * r[1])
            .insert_axis(Axis(1));
        let lm = x.slice(s![..30, ..]).to_owned();
        let k = gaussian_kernel(x.view(), lm.view(), 0.5);
        let k_mm = gaussian_kernel(lm.view(), lm.view(), 0.5);
        let alpha = solve(
            k_mm.view(),
            k.t().dot(&k).view(),
            k.t().dot(&y).view(),
            300,
            FalkonParams::paper(),
        )
        .unwrap();
        let mse = (&k.dot(&alpha) - &y).mapv(|v| v * v).mean().unwrap();
        let var = y.var(0.0);
        assert!(mse < 0.2 * var, "MSE {mse} vs variance {var}");
        assert!(solve(
            k_mm.view(),
            k_mm.view(),
            y.view(),
            300,
            FalkonParams::paper()
        )
        .is_err());
    }
}
