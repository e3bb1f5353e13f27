//! NOGD, Nyström online gradient descent (Lu, Hoi, Wang, Zhao, Liu, JMLR 2016; the behaviour of
//! [KOL] `kernel_nogd.h`), the budgeted baseline of the paper (spec §7.2, D7–D9).
//!
//! 1. Phase 1, kernel OGD until the budget is full: f = Σ α_j k(x_j, x); a margin violation
//!    (c·f < 1) with |S| < b adds x as landmark with α = η·c and fills its row and column of
//!    the b×b Gram matrix K_b. The landmarks are the first b margin violators.
//! 2. Switch, at the first violation after |S| = b: K_b = V Λ Vᵀ (symmetric eigensolver, D7),
//!    keep the top r eigenpairs with λ_k > 10⁻¹²·λ_max (the guard against √ of non-positive
//!    values), M = Λ_r^{−1/2} V_rᵀ (r × b); w = 0 (D8; option `carry_over`: w = αᵀ pinv(M) =
//!    αᵀ V_r Λ_r^{1/2}), then the update for the current point.
//! 3. Phase 2: z(x) = M·(k(x_1, x) .. k(x_b, x))ᵀ, f = w·z; if c·f < 1: w += η·c·z, and the
//!    running sums w_sum += w, n_upd += 1 give the averaged w̄ = w_sum / n_upd.
//! 4. Test mode (D9): [`Nogd::predict_averaged_row`] uses w̄ (phase 1: the kernel expansion);
//!    [`OnlineLearner::predict_one`] is the running model the updates use.
//!    [`Nogd::overwrite_running_with_average`] mimics the C++ online mode, which overwrites
//!    the running w with w̄ before each test block.
//!
//! Counters: kernel evaluations (|S| per prediction in phase 1, b in phase 2; the K_b entries
//! reuse the evaluations of the prediction, so they cost nothing extra).

use std::cell::Cell;

use kernel_core::OnlineLearner;

use kernel_core::CoreError;

use crate::error::IsolationError;
use crate::input::Row;
use crate::learners::{check_eta, check_label, PAPER_ETA};
use crate::ogd_kernel::OgdKernel;
use crate::store::RowStore;

/// Eigenvalues below `EIGEN_GUARD · λ_max` are dropped at the switch (spec §7.2).
pub const EIGEN_GUARD: f64 = 1e-12;

/// Parameters of [`Nogd`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NogdParams {
    /// The kernel k (the paper: Laplacian L_ψ, D1).
    pub kernel: OgdKernel,
    /// Input dimension d.
    pub dim: usize,
    /// Budget b: number of landmarks (the paper: 100).
    pub budget: usize,
    /// Rank r of the Nyström map, 1 ≤ r ≤ b (the paper: 0.2·b = 20).
    pub rank: usize,
    /// Step size η (the paper: 0.5).
    pub eta: f64,
    /// D8: keep the phase-1 model at the switch (w = αᵀ pinv(M), the Matlab code) instead of
    /// w = 0 (the C++ code the paper used; default).
    pub carry_over: bool,
}

impl NogdParams {
    /// The paper's settings: b = 100, r = 20, η = 0.5, w = 0 at the switch.
    pub fn paper(kernel: OgdKernel, dim: usize) -> Self {
        Self {
            kernel,
            dim,
            budget: 100,
            rank: 20,
            eta: PAPER_ETA,
            carry_over: false,
        }
    }
}

/// The state after the switch.
#[derive(Debug, Clone)]
struct Nystrom {
    /// M = Λ_r^{−1/2} V_rᵀ, row-major `rank × b`.
    m: Vec<f64>,
    rank: usize,
    w: Vec<f64>,
    w_sum: Vec<f64>,
    n_updates: u64,
}

/// Nyström OGD with a budget of b landmarks and a rank-r map (spec §7.2).
#[derive(Debug, Clone)]
pub struct Nogd {
    params: NogdParams,
    /// The landmarks (dense blocks when d ≤ 4096, as the support vectors of
    /// [`KernelOgd`](crate::learners::KernelOgd)).
    landmarks: RowStore,
    alpha: Vec<f64>,
    /// K_b, row-major b × b (filled for the landmarks so far).
    gram: Vec<f64>,
    nystrom: Option<Nystrom>,
    kernel_evaluations: Cell<u64>,
}

impl Nogd {
    /// An empty model; errors on b = 0, r ∉ [1, b], η ≤ 0, γ ≤ 0 or d = 0.
    pub fn new(params: NogdParams) -> Result<Self, IsolationError> {
        params.kernel.check()?;
        check_eta(params.eta)?;
        if params.dim == 0 {
            return Err(IsolationError::Core(CoreError::InvalidParameter {
                name: "dimension",
                value: "0".into(),
                expected: "at least 1 column",
            }));
        }
        if params.budget == 0 {
            return Err(IsolationError::Core(CoreError::InvalidParameter {
                name: "budget",
                value: "0".into(),
                expected: "at least 1 landmark (the paper uses b = 100)",
            }));
        }
        if params.rank == 0 || params.rank > params.budget {
            return Err(IsolationError::Core(CoreError::InvalidParameter {
                name: "rank",
                value: params.rank.to_string(),
                expected: "between 1 and the budget b (the paper uses r = 0.2 b)",
            }));
        }
        let b = params.budget;
        Ok(Self {
            params,
            landmarks: RowStore::new(params.dim),
            alpha: Vec::with_capacity(b),
            gram: vec![0.0; b * b],
            nystrom: None,
            kernel_evaluations: Cell::new(0),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &NogdParams {
        &self.params
    }

    /// Number of landmarks (support vectors) so far, at most b.
    pub fn support_vectors(&self) -> usize {
        self.landmarks.len()
    }

    /// The phase-1 coefficients α_j = η·c_j of the landmarks.
    pub fn alphas(&self) -> &[f64] {
        &self.alpha
    }

    /// K_b, row-major b × b; rows and columns of landmarks not yet added are 0.
    pub fn landmark_gram(&self) -> &[f64] {
        &self.gram
    }

    /// Whether the budget was exceeded and the model switched to the Nyström map.
    pub fn is_switched(&self) -> bool {
        self.nystrom.is_some()
    }

    /// The number of eigenpairs kept at the switch (≤ r; fewer when the guard drops some).
    pub fn effective_rank(&self) -> Option<usize> {
        self.nystrom.as_ref().map(|n| n.rank)
    }

    /// M = Λ_r^{−1/2} V_rᵀ, row-major `effective_rank × b`, after the switch.
    pub fn projection(&self) -> Option<&[f64]> {
        self.nystrom.as_ref().map(|n| &n.m[..])
    }

    /// The running phase-2 weights w (length `effective_rank`).
    pub fn weights(&self) -> Option<&[f64]> {
        self.nystrom.as_ref().map(|n| &n.w[..])
    }

    /// The averaged phase-2 weights w̄ = w_sum / n_upd.
    pub fn averaged_weights(&self) -> Option<Vec<f64>> {
        self.nystrom.as_ref().map(|n| {
            n.w_sum
                .iter()
                .map(|s| s / n.n_updates as f64)
                .collect::<Vec<_>>()
        })
    }

    /// Number of kernel evaluations so far.
    pub fn kernel_evaluations(&self) -> u64 {
        self.kernel_evaluations.get()
    }

    /// D9 option: w ← w̄ (the C++ online mode does this before each test block). No-op in
    /// phase 1.
    pub fn overwrite_running_with_average(&mut self) {
        if let Some(avg) = self.averaged_weights() {
            self.nystrom.as_mut().expect("switched").w = avg;
        }
    }

    /// (k(x_1, x) .. k(x_|S|, x)).
    fn kernel_vector(&self, x: Row) -> Vec<f64> {
        self.kernel_evaluations
            .set(self.kernel_evaluations.get() + self.landmarks.len() as u64);
        let mut k = Vec::with_capacity(self.landmarks.len());
        self.landmarks
            .for_each_kernel(self.params.kernel, x, |_, kj| k.push(kj));
        k
    }

    /// z(x) = M·k.
    fn features(n: &Nystrom, k: &[f64]) -> Vec<f64> {
        n.m.chunks_exact(k.len())
            .map(|row| Self::dot(row, k))
            .collect()
    }

    /// Σ a_j b_j from +0.0 in index order (`Iterator::sum` starts at −0.0), the summation of
    /// [`KernelOgd`](crate::learners::KernelOgd), so that phase 1 gives its bits.
    fn dot(a: &[f64], b: &[f64]) -> f64 {
        let mut s = 0.0;
        for (u, v) in a.iter().zip(b) {
            s += u * v;
        }
        s
    }

    /// f(x) of the running model, with k (and z in phase 2).
    fn score(&self, x: Row) -> (f64, Vec<f64>, Option<Vec<f64>>) {
        let k = self.kernel_vector(x);
        match &self.nystrom {
            None => (Self::dot(&self.alpha, &k), k, None),
            Some(n) => {
                let z = Self::features(n, &k);
                (Self::dot(&n.w, &z), k, Some(z))
            }
        }
    }

    /// f(x) of the running model for a dense or sparse row.
    pub fn predict_row(&self, x: Row) -> Result<f64, IsolationError> {
        x.check(self.params.dim)?;
        Ok(self.score(x).0)
    }

    /// Test-mode f(x) (D9): w̄·z(x) after the switch, the kernel expansion before.
    pub fn predict_averaged_row(&self, x: Row) -> Result<f64, IsolationError> {
        x.check(self.params.dim)?;
        let k = self.kernel_vector(x);
        Ok(match &self.nystrom {
            None => Self::dot(&self.alpha, &k),
            Some(n) => {
                let z = Self::features(n, &k);
                Self::dot(&z, &n.w_sum) / n.n_updates as f64
            }
        })
    }

    /// Learns (x, c) and returns the running model's f(x) before the update (an error if
    /// c ∉ {−1, +1}, or if the eigensolver fails at the switch).
    pub fn update_row(&mut self, x: Row, c: f64) -> Result<f64, IsolationError> {
        check_label(c)?;
        x.check(self.params.dim)?;
        let (f, k, z) = self.score(x);
        if c * f >= 1.0 {
            return Ok(f);
        }
        let b = self.params.budget;
        match z {
            None if self.landmarks.len() < b => {
                let j = self.landmarks.len();
                for (i, &kij) in k.iter().enumerate() {
                    self.gram[i * b + j] = kij;
                    self.gram[j * b + i] = kij;
                }
                self.gram[j * b + j] = 1.0;
                self.landmarks.push(x);
                self.alpha.push(self.params.eta * c);
            }
            None => {
                let n = self.switch()?;
                let z = Self::features(&n, &k);
                self.nystrom = Some(n);
                self.step(&z, c);
            }
            Some(z) => self.step(&z, c),
        }
        Ok(f)
    }

    fn step(&mut self, z: &[f64], c: f64) {
        let eta = self.params.eta;
        let n = self.nystrom.as_mut().expect("switched");
        for ((w, s), zk) in n.w.iter_mut().zip(&mut n.w_sum).zip(z) {
            *w += eta * c * zk;
            *s += *w;
        }
        n.n_updates += 1;
    }

    /// Eigendecomposition of K_b and the Nyström map (D7, D8).
    fn switch(&self) -> Result<Nystrom, IsolationError> {
        let b = self.params.budget;
        let (values, vectors) = symmetric_eigen(&self.gram, b)?;
        let max = values.first().copied().unwrap_or(0.0);
        let kept: Vec<usize> = (0..self.params.rank.min(b))
            .filter(|&k| values[k] > EIGEN_GUARD * max && max > 0.0)
            .collect();
        let rank = kept.len();
        let mut m = vec![0.0; rank * b];
        let mut w = vec![0.0; rank];
        for (row, &k) in kept.iter().enumerate() {
            let s = values[k].sqrt();
            for j in 0..b {
                m[row * b + j] = vectors[j * b + k] / s;
            }
            if self.params.carry_over {
                w[row] = (0..b)
                    .map(|j| self.alpha[j] * vectors[j * b + k])
                    .sum::<f64>()
                    * s;
            }
        }
        Ok(Nystrom {
            m,
            rank,
            w,
            w_sum: vec![0.0; rank],
            n_updates: 0,
        })
    }
}

impl OnlineLearner for Nogd {
    /// A dense row of d values (sparse rows: [`Nogd::update_row`]).
    type Row = [f64];
    type Error = IsolationError;

    /// The running model's f(x) (test mode: [`Nogd::predict_averaged_row`]).
    fn predict_one(&self, x: &[f64]) -> Result<f64, IsolationError> {
        self.predict_row(Row::Dense(x.into()))
    }

    /// [`Nogd::update_row`] of a dense row.
    fn update(&mut self, x: &[f64], c: f64) -> Result<f64, IsolationError> {
        self.update_row(Row::Dense(x.into()), c)
    }
}

/// Eigenpairs of the symmetric n × n matrix `a` (row-major) by LAPACK's `dsyev` (through
/// ndarray-linalg): eigenvalues in decreasing order (ties: LAPACK's ascending order reversed)
/// and the eigenvectors as the columns of a row-major n × n matrix (`vectors[i·n + k]` =
/// component i of vector k). Deterministic for a given LAPACK and thread count (`repro` runs
/// OpenBLAS on one thread); O(n³), a fraction of a second for b = 1000.
/// An error if `a` is not n × n, or LAPACK fails to converge (it does not on a finite
/// symmetric matrix).
pub fn symmetric_eigen(a: &[f64], n: usize) -> Result<(Vec<f64>, Vec<f64>), CoreError> {
    use ndarray_linalg::{Eigh, UPLO};
    if a.len() != n * n {
        return Err(CoreError::shape(
            "entries of the n x n matrix",
            n * n,
            a.len(),
        ));
    }
    if n == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let m = ndarray::Array2::from_shape_vec((n, n), a.to_vec()).expect("n x n");
    // Row-major lower triangle = column-major upper triangle: ask for the side that is stored.
    let (ascending, v) = m
        .eigh(UPLO::Lower)
        .map_err(|e| CoreError::solve("symmetric eigendecomposition (dsyevd)", e))?;
    let mut order: Vec<usize> = (0..n).rev().collect();
    order.sort_by(|&i, &j| ascending[j].total_cmp(&ascending[i]));
    let values = order.iter().map(|&k| ascending[k]).collect();
    let mut vectors = vec![0.0; n * n];
    for (new, &old) in order.iter().enumerate() {
        for i in 0..n {
            vectors[i * n + new] = v[[i, old]];
        }
    }
    Ok((values, vectors))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::SparseRow;
    use crate::learners::tests::random_rows;
    use crate::learners::{label, KernelOgd};
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn stream(n: usize, d: usize, seed: u64) -> (Array2<f64>, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x = Array2::from_shape_fn((n, d), |_| rng.random_range(-1.0..1.0));
        let y = x
            .rows()
            .into_iter()
            .map(|r| label(r[0] - 0.5 * r[1] + rng.random_range(-0.3..0.3)))
            .collect();
        (x, y)
    }

    fn laplacian(a: &[f64], b: &[f64], gamma: f64) -> f64 {
        (-gamma * a.iter().zip(b).map(|(u, v)| (u - v).abs()).sum::<f64>()).exp()
    }

    #[test]
    fn eigenpairs_reconstruct_the_matrix() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 7;
        let g = Array2::from_shape_fn((n, n), |_| rng.random_range(-1.0..1.0));
        let a = g.dot(&g.t()) - Array2::<f64>::eye(n);
        let (values, vectors) = symmetric_eigen(a.as_slice().unwrap(), n).unwrap();
        let v = Array2::from_shape_vec((n, n), vectors).unwrap();
        assert!(values.windows(2).all(|w| w[0] >= w[1]));
        for ((i, j), &g) in v.t().dot(&v).indexed_iter() {
            approx::assert_abs_diff_eq!(g, if i == j { 1.0 } else { 0.0 }, epsilon = 1e-12);
        }
        let av = a.dot(&v);
        for k in 0..n {
            for i in 0..n {
                approx::assert_abs_diff_eq!(av[[i, k]], values[k] * v[[i, k]], epsilon = 1e-10);
            }
        }
        approx::assert_relative_eq!(values.iter().sum::<f64>(), a.diag().sum(), epsilon = 1e-10);
        // 2 × 2 closed form: [[1, k], [k, 1]] has 1 + k and 1 − k.
        let (values, _) = symmetric_eigen(&[1.0, 0.3, 0.3, 1.0], 2).unwrap();
        approx::assert_abs_diff_eq!(values[0], 1.3, epsilon = 1e-15);
        approx::assert_abs_diff_eq!(values[1], 0.7, epsilon = 1e-15);
    }

    /// Spec §15.4: a budget larger than the number of margin violations never switches and
    /// gives the bits of unbudgeted kernel OGD, with the same kernel evaluations.
    #[test]
    fn nogd_below_its_budget_is_kernel_ogd() {
        let (x, y) = stream(200, 3, 2);
        let kernel = OgdKernel::laplacian_psi(8, 3).unwrap();
        let mut ogd = KernelOgd::new(kernel, 3, PAPER_ETA).unwrap();
        let mut nogd = Nogd::new(NogdParams {
            budget: 200,
            ..NogdParams::paper(kernel, 3)
        })
        .unwrap();
        for (r, &c) in x.rows().into_iter().zip(&y) {
            let r = r.as_slice().unwrap();
            assert_eq!(
                ogd.update(r, c).unwrap().to_bits(),
                nogd.update(r, c).unwrap().to_bits()
            );
        }
        assert!(!nogd.is_switched());
        assert_eq!(nogd.support_vectors(), ogd.support_vectors());
        assert_eq!(nogd.alphas(), ogd.alphas());
        assert_eq!(nogd.kernel_evaluations(), ogd.kernel_evaluations());
    }

    /// b = 2, r = 1: K_b = [[1, κ], [κ, 1]] has top eigenpair (1 + κ, (1, 1)/√2), so
    /// z(x) = (k_1 + k_2)/√(2(1 + κ)); a direct replay of all three phases, with both D8 modes.
    #[test]
    fn nogd_matches_a_closed_form_replay_on_two_landmarks() {
        let (x, y) = stream(120, 2, 3);
        let gamma = 1.5;
        let kernel = OgdKernel::Laplacian { gamma };
        for carry_over in [false, true] {
            let mut nogd = Nogd::new(NogdParams {
                kernel,
                dim: 2,
                budget: 2,
                rank: 1,
                eta: PAPER_ETA,
                carry_over,
            })
            .unwrap();
            let rows: Vec<&[f64]> = x
                .rows()
                .into_iter()
                .map(|r| r.to_slice().unwrap())
                .collect();
            let mut landmarks: Vec<(usize, f64)> = Vec::new();
            let (mut w, mut w_sum, mut n_upd) = (None::<f64>, 0.0, 0u64);
            let mut evaluations = 0u64;
            let mut switched_at = None;
            for (i, &c) in y.iter().enumerate() {
                let k: Vec<f64> = landmarks
                    .iter()
                    .map(|&(j, _)| laplacian(rows[j], rows[i], gamma))
                    .collect();
                evaluations += landmarks.len() as u64;
                let z = |k: &[f64], kappa: f64| (k[0] + k[1]) / (2.0 * (1.0 + kappa)).sqrt();
                let f = match w {
                    None => landmarks.iter().zip(&k).map(|(&(_, a), kj)| a * kj).sum(),
                    Some(w) => {
                        let kappa = laplacian(rows[landmarks[0].0], rows[landmarks[1].0], gamma);
                        w * z(&k, kappa)
                    }
                };
                let got = nogd.update(rows[i], c).unwrap();
                approx::assert_abs_diff_eq!(got, f, epsilon = 1e-12);
                if c * f < 1.0 {
                    if landmarks.len() < 2 {
                        landmarks.push((i, 0.5 * c));
                        continue;
                    }
                    let kappa = laplacian(rows[landmarks[0].0], rows[landmarks[1].0], gamma);
                    let zi = z(&k, kappa);
                    let w_old = match w {
                        Some(w) => w,
                        None => {
                            switched_at = Some(i);
                            if carry_over {
                                // αᵀ V_r Λ_r^{1/2} with V_r = (1, 1)/√2 (sign-free: w·z is).
                                (landmarks[0].1 + landmarks[1].1) / 2f64.sqrt()
                                    * (1.0 + kappa).sqrt()
                            } else {
                                0.0
                            }
                        }
                    };
                    let new = w_old + 0.5 * c * zi;
                    w = Some(new);
                    w_sum += new;
                    n_upd += 1;
                }
            }
            let switched_at = switched_at.expect("the stream exceeds the budget");
            assert!(switched_at < 40 && n_upd > 5, "{switched_at} {n_upd}");
            assert_eq!(nogd.effective_rank(), Some(1));
            assert_eq!(nogd.kernel_evaluations(), evaluations);
            // Test mode: w̄·z with w̄ = w_sum / n_upd.
            let kappa = laplacian(rows[landmarks[0].0], rows[landmarks[1].0], gamma);
            for i in 0..5 {
                let k: Vec<f64> = landmarks
                    .iter()
                    .map(|&(j, _)| laplacian(rows[j], rows[i], gamma))
                    .collect();
                let z = (k[0] + k[1]) / (2.0 * (1.0 + kappa)).sqrt();
                let avg = nogd.predict_averaged_row(Row::Dense(x.row(i))).unwrap();
                approx::assert_abs_diff_eq!(avg, w_sum / n_upd as f64 * z, epsilon = 1e-12);
                approx::assert_abs_diff_eq!(
                    nogd.predict_one(rows[i]).unwrap(),
                    w.unwrap() * z,
                    epsilon = 1e-12
                );
            }
            nogd.overwrite_running_with_average();
            approx::assert_abs_diff_eq!(
                nogd.predict_one(rows[0]).unwrap(),
                nogd.predict_averaged_row(Row::Dense(x.row(0))).unwrap(),
                epsilon = 1e-12
            );
        }
    }

    /// The Nyström map whitens the landmarks (M K_b Mᵀ = I_r), and in phase 2 each prediction
    /// costs b kernel evaluations.
    #[test]
    fn nystrom_map_whitens_the_landmark_gram_and_costs_b_evaluations() {
        let (x, y) = stream(300, 4, 4);
        let kernel = OgdKernel::laplacian_psi(16, 4).unwrap();
        let (b, r) = (10, 4);
        let mut nogd = Nogd::new(NogdParams {
            budget: b,
            rank: r,
            ..NogdParams::paper(kernel, 4)
        })
        .unwrap();
        let rows: Vec<&[f64]> = x
            .rows()
            .into_iter()
            .map(|r| r.to_slice().unwrap())
            .collect();
        let mut i = 0;
        while !nogd.is_switched() {
            nogd.update(rows[i], y[i]).unwrap();
            i += 1;
        }
        let before = nogd.kernel_evaluations();
        for j in i..rows.len() {
            nogd.update(rows[j], y[j]).unwrap();
        }
        assert_eq!(
            nogd.kernel_evaluations() - before,
            ((rows.len() - i) * b) as u64
        );
        let m = Array2::from_shape_vec((r, b), nogd.projection().unwrap().to_vec()).unwrap();
        let k = Array2::from_shape_vec((b, b), nogd.landmark_gram().to_vec()).unwrap();
        let whitened = m.dot(&k).dot(&m.t());
        for ((i, j), &v) in whitened.indexed_iter() {
            let expected = if i == j { 1.0 } else { 0.0 };
            approx::assert_abs_diff_eq!(v, expected, epsilon = 1e-9);
        }
        assert_eq!(k, k.t());
        assert!(k.diag().iter().all(|&d| d == 1.0));
    }

    /// Duplicate landmarks make K_b singular: the guard drops the zero eigenvalue instead of
    /// dividing by its square root.
    #[test]
    fn singular_landmark_gram_drops_the_null_eigenpair() {
        let kernel = OgdKernel::Gaussian { gamma: 1.0 };
        let mut nogd = Nogd::new(NogdParams {
            kernel,
            dim: 1,
            budget: 3,
            rank: 3,
            eta: PAPER_ETA,
            carry_over: false,
        })
        .unwrap();
        // x = 0 with c = +1 violates twice (f = 0, then 0.5): two identical landmarks.
        for (x, c) in [(0.0, 1.0), (0.0, 1.0), (1.0, -1.0), (2.0, -1.0), (0.5, 1.0)] {
            let f = nogd.update(&[x], c).unwrap();
            assert!(f.is_finite());
        }
        assert!(nogd.is_switched());
        assert_eq!(nogd.effective_rank(), Some(2));
        assert!(nogd.projection().unwrap().iter().all(|v| v.is_finite()));
        assert!(nogd.predict_one(&[0.3]).unwrap().is_finite());
    }

    /// NOGD over the dense landmark blocks gives the bits of the per-landmark sparse merge (the
    /// computation before the blocks) in phase 1, in K_b, at the switch and in phase 2, on dense
    /// and sparse streams, for dense and sparse rows, both kernels.
    #[test]
    fn nogd_dense_landmarks_give_the_bits_of_the_sparse_merge() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let bits = |v: &[f64]| v.iter().map(|g| g.to_bits()).collect::<Vec<_>>();
        for (n, d, density, budget) in [(400, 22, 1.0, 21), (400, 123, 0.11, 100)] {
            let (x, indptr, indices, values) = random_rows(n, d, density, &mut rng);
            let y: Vec<f64> = (0..n).map(|_| label(rng.random_range(-1.0..1.0))).collect();
            let sparse_row = |i: usize| {
                let r = indptr[i]..indptr[i + 1];
                SparseRow::new(&indices[r.clone()], &values[r], d).unwrap()
            };
            for kernel in [
                OgdKernel::laplacian_psi(16, d).unwrap(),
                OgdKernel::gaussian(0.3).unwrap(),
            ] {
                for carry_over in [false, true] {
                    let params = NogdParams {
                        budget,
                        rank: 7,
                        carry_over,
                        ..NogdParams::paper(kernel, d)
                    };
                    let mut blocks = Nogd::new(params).unwrap();
                    let mut sparse_in = Nogd::new(params).unwrap();
                    let mut reference = Nogd::new(params).unwrap();
                    reference.landmarks = RowStore::with_dense_limit(d, 0);
                    assert!(blocks.landmarks.is_dense() && !reference.landmarks.is_dense());
                    for (i, &c) in y.iter().enumerate() {
                        let f = reference.update_row(Row::Dense(x.row(i)), c).unwrap();
                        let g = blocks.update_row(Row::Dense(x.row(i)), c).unwrap();
                        let h = sparse_in.update_row(Row::Sparse(sparse_row(i)), c).unwrap();
                        assert_eq!((g.to_bits(), h.to_bits()), (f.to_bits(), f.to_bits()));
                    }
                    assert!(reference.is_switched());
                    // (Before the test-mode predictions below, which count too.)
                    assert_eq!(blocks.kernel_evaluations(), reference.kernel_evaluations());
                    assert_eq!(
                        sparse_in.kernel_evaluations(),
                        reference.kernel_evaluations()
                    );
                    for model in [&blocks, &sparse_in] {
                        assert_eq!(bits(model.landmark_gram()), bits(reference.landmark_gram()));
                        assert_eq!(
                            bits(model.projection().unwrap()),
                            bits(reference.projection().unwrap())
                        );
                        assert_eq!(
                            bits(model.weights().unwrap()),
                            bits(reference.weights().unwrap())
                        );
                        for i in 0..50 {
                            let f = reference
                                .predict_averaged_row(Row::Dense(x.row(i)))
                                .unwrap();
                            let g = model
                                .predict_averaged_row(Row::Sparse(sparse_row(i)))
                                .unwrap();
                            assert_eq!(g.to_bits(), f.to_bits());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn parameter_errors_are_typed() {
        let kernel = OgdKernel::Laplacian { gamma: 1.0 };
        let p = NogdParams::paper(kernel, 5);
        let name = |p: NogdParams| match Nogd::new(p) {
            Err(IsolationError::Core(CoreError::InvalidParameter { name, .. })) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(name(NogdParams { budget: 0, ..p }), "budget");
        assert_eq!(name(NogdParams { rank: 0, ..p }), "rank");
        assert_eq!(name(NogdParams { rank: 101, ..p }), "rank");
        assert_eq!(name(NogdParams { eta: 0.0, ..p }), "eta");
        assert_eq!(name(NogdParams { dim: 0, ..p }), "dimension");
        assert_eq!(
            name(NogdParams {
                kernel: OgdKernel::Gaussian { gamma: -1.0 },
                ..p
            }),
            "gamma"
        );
        assert!(Nogd::new(p).is_ok());
    }
}
