//! Online binary classifiers of the paper's §6 (IK-OGD and its variants) and §7.1 (kernel OGD
//! with the Laplacian L_ψ), for labels c ∈ {−1, +1} (spec §6, §7.1, D5, D6, D12).
//!
//! Every learner implements [`kernel_core::OnlineLearner`]: `predict_one` returns the raw score
//! g (or f), `update` returns the score made before the update and then applies the hinge-loss
//! step when the margin is violated, c·g < 1 (D6: violations, not only mistakes). The label is
//! [`label`]`(g)` = sign(g) with g = 0 → −1 (spec §6).
//!
//! Row types: the IK learners take the index vector φ(x) ∈ [0, ψ)^t as `[u32]` (from
//! [`IsolationKernel::index_into`]), so the mapping (CPU or GPU, spec §4) is separate from the
//! learner, as in the paper's pre-mapped input; [`KernelOgd`] takes a dense row `[f64]` through
//! the trait and dense or sparse [`Row`]s through [`KernelOgd::predict_row`] /
//! [`KernelOgd::update_row`].
//!
//! Counters are deterministic operation counts for the complexity claims (R2, R7, R10), not
//! timings: weight look-ups of the primal learners (t per prediction for IK-OGD, tψ for
//! IK-OGD(naive)), kernel evaluations of the dual learners (#SV per prediction), and the number
//! of support vectors (margin violations).
//!
//! A label outside {−1, +1} (convert at load, D12), an index vector of the wrong length or with
//! a cell index ≥ ψ, and a dense row of the wrong dimension or with a non-finite value are
//! errors of the call, which then changes nothing. Parameters are checked at construction.

use std::cell::Cell;

use kernel_core::OnlineLearner;

use kernel_core::error::positive;
use kernel_core::CoreError;

use crate::error::IsolationError;
use crate::input::{Row, Rows};
use crate::kernel::{check_t_psi, dot, dot_naive, sums_in_order, IsolationKernel};
pub use crate::ogd_kernel::OgdKernel;
use crate::store::RowStore;

/// The paper's step size η = 0.5 ([ARX] §7, Table 3).
pub const PAPER_ETA: f64 = 0.5;

/// sign(g) with g = 0 → −1 (spec §6).
pub fn label(g: f64) -> f64 {
    if g > 0.0 {
        1.0
    } else {
        -1.0
    }
}

/// η: a finite step size > 0 (the paper uses 0.5).
pub(crate) fn check_eta(eta: f64) -> Result<(), IsolationError> {
    positive("eta", eta)?;
    Ok(())
}

pub(crate) fn check_label(c: f64) -> Result<(), IsolationError> {
    if c == 1.0 || c == -1.0 {
        Ok(())
    } else {
        Err(
            CoreError::invalid_input("label", c, "-1 or +1 (convert labels at load, spec D12)")
                .into(),
        )
    }
}

fn check_phi(phi: &[u32], t: usize, psi: usize) -> Result<(), IsolationError> {
    if phi.len() != t {
        return Err(CoreError::shape("index vector phi(x) vs t", t, phi.len()).into());
    }
    check_cells(phi, psi)
}

/// Every cell index of `phi` (one or more index vectors) is below ψ.
fn check_cells(phi: &[u32], psi: usize) -> Result<(), IsolationError> {
    // No cell exceeds the bitwise OR of all of them, a fold the compiler vectorises into one
    // instruction per four cells (an unsigned maximum takes five on the baseline x86-64): when
    // the OR is below ψ (always, for ψ a power of two), so is every cell. Otherwise the largest
    // cell, then the culprit only when there is one (`find` stops to test every cell).
    if (phi.iter().fold(0, |m, &c| m | c) as usize) < psi {
        return Ok(());
    }
    if phi.iter().fold(0, |m, &c| m.max(c)) as usize >= psi {
        let bad = phi
            .iter()
            .copied()
            .find(|&c| c as usize >= psi)
            .unwrap_or_default();
        return Err(CoreError::invalid_input("cell index phi_i", bad, "an index below psi").into());
    }
    Ok(())
}

/// IK-OGD ([DMKD] Algorithm 2, spec §6), primal form: w ∈ R^{tψ}, w = 0 at start,
/// g = ⟨w, Φ(x)⟩ = `Σ_i w[i·ψ + φ_i(x)]` (t look-ups, no 1/t, D5), and when c·g < 1
/// `w[i·ψ + φ_i(x)] += η·c` for i = 1..t. Hinge loss, constant η, no regularisation or
/// averaging.
///
/// Every entry of w is a whole number k of steps η (the updates that added ±η to it), so while
/// [`IkOgd::exact`] holds each partial sum of g is a double and g does not depend on the order
/// of its t terms: the score is then summed in four independent chains (the same bits as the
/// sum in order, a quarter of its chain of dependent additions).
#[derive(Debug, Clone)]
pub struct IkOgd {
    t: usize,
    psi: usize,
    eta: f64,
    /// η's significand without its trailing zero bits (η = `eta_odd` · 2^E).
    eta_odd: u64,
    w: Vec<f64>,
    lookups: Cell<u64>,
    n_updates: usize,
}

impl IkOgd {
    /// A zero model for index vectors of t partitionings of ψ cells, step size η.
    pub fn new(t: usize, psi: usize, eta: f64) -> Result<Self, IsolationError> {
        check_t_psi(t, psi)?;
        check_eta(eta)?;
        Ok(Self {
            t,
            psi,
            eta,
            eta_odd: odd_significand(eta),
            w: vec![0.0; t * psi],
            lookups: Cell::new(0),
            n_updates: 0,
        })
    }

    /// A zero model for the index vectors of `kernel`.
    pub fn for_kernel(kernel: &IsolationKernel, eta: f64) -> Result<Self, IsolationError> {
        Self::new(kernel.t(), kernel.psi(), eta)
    }

    /// Whether every score is exact, whatever the order of its terms: with η = M·2^E (M odd)
    /// and n updates so far, each entry of w is k·η with |k| ≤ n and every partial sum of a
    /// score is K·η with |K| ≤ t·n; when M·t·n < 2^53, K·M fits a double's 53-bit significand
    /// (η > 0, so no K·η falls below the subnormals' range; and none is near overflow, also
    /// checked), every addition is exact and g = K·η in any order. Holds for the paper's
    /// η = 0.5 (M = 1) on any stream shorter than 2^53 / t; not for η = 0.37 (M of 52 bits)
    /// after one update.
    pub fn exact(&self) -> bool {
        let tn = self.t as u128 * self.n_updates as u128;
        // And no K·η near overflow (only a huge η could get there).
        u128::from(self.eta_odd) * tn < (1 << 53) && self.eta * (tn as f64 + 1.0) < 2f64.powi(1000)
    }

    /// The weight vector w (length tψ; entry i·ψ + j belongs to cell j of partitioning i).
    pub fn weights(&self) -> &[f64] {
        &self.w
    }

    /// The step size η.
    pub fn eta(&self) -> f64 {
        self.eta
    }

    /// Number of entries of w read so far by predictions (t per prediction).
    pub fn lookups(&self) -> u64 {
        self.lookups.get()
    }

    /// Number of updates (margin violations) so far: the support vectors of the dual view.
    pub fn support_vectors(&self) -> usize {
        self.n_updates
    }

    /// [`OnlineLearner::predict_one`] of every row of `phis` (rows of t indices, one after
    /// another) into `out`: each row's g summed in order, so the bits of `predict_one` (which
    /// sums in four chains only while that gives the same bits, [`Self::exact`]), but several
    /// rows at a time ([`sums_in_order`]), so that their chains of dependent additions overlap
    /// (a row's t additions alone wait on each other).
    pub fn predict_rows(&self, phis: &[u32], out: &mut [f64]) -> Result<(), IsolationError> {
        let (t, psi) = (self.t, self.psi);
        if phis.len() != out.len() * t {
            return Err(
                CoreError::shape("index vectors vs rows * t", out.len() * t, phis.len()).into(),
            );
        }
        check_cells(phis, psi)?;
        // SAFETY: every cell of `phis` is below ψ (check_cells above).
        unsafe { sums_in_order(&self.w, psi, phis, out) };
        self.lookups.set(self.lookups.get() + phis.len() as u64);
        Ok(())
    }

    /// [`Self::predict_rows`] of the rows `ids` of `rows`, mapped by `kernel` (the partitionings
    /// this model's cells belong to) by [`IsolationKernel::weighted_sums_of`], which sums each
    /// row's weights as the trees find its leaves where that is faster than writing φ(x) out:
    /// the same bits, the same look-ups counted.
    pub fn predict_rows_of(
        &self,
        kernel: &IsolationKernel,
        rows: Rows,
        ids: &[usize],
        out: &mut [f64],
    ) -> Result<(), IsolationError> {
        for (what, model, theirs) in [
            (
                "the kernel's partitionings vs the model's t",
                self.t,
                kernel.t(),
            ),
            (
                "the kernel's cells vs the model's psi",
                self.psi,
                kernel.psi(),
            ),
        ] {
            if theirs != model {
                return Err(CoreError::shape(what, model, theirs).into());
            }
        }
        kernel.weighted_sums_of(rows, ids, &self.w, out)?;
        self.lookups
            .set(self.lookups.get() + (ids.len() * self.t) as u64);
        Ok(())
    }

    fn score(&self, phi: &[u32], naive: bool) -> Result<f64, IsolationError> {
        check_phi(phi, self.t, self.psi)?;
        Ok(if naive {
            self.lookups
                .set(self.lookups.get() + (self.t * self.psi) as u64);
            dot_naive(&self.w, self.psi, phi)
        } else {
            self.lookups.set(self.lookups.get() + self.t as u64);
            if self.exact() {
                dot_reassociated(&self.w, self.psi, phi)
            } else {
                dot(&self.w, self.psi, phi)
            }
        })
    }

    fn learn(&mut self, phi: &[u32], c: f64, naive: bool) -> Result<f64, IsolationError> {
        check_label(c)?;
        let g = self.score(phi, naive)?;
        if c * g < 1.0 {
            let step = self.eta * c;
            for (i, &cell) in phi.iter().enumerate() {
                self.w[i * self.psi + cell as usize] += step;
            }
            self.n_updates += 1;
        }
        Ok(g)
    }
}

/// M of a positive finite `x` = M·2^E with M odd: its significand (with the implicit bit of a
/// normal number) without its trailing zero bits.
fn odd_significand(x: f64) -> u64 {
    let bits = x.to_bits();
    let fraction = bits & ((1 << 52) - 1);
    let significand = if (bits >> 52) & 0x7ff == 0 {
        fraction
    } else {
        fraction | (1 << 52)
    };
    significand >> significand.trailing_zeros().min(63)
}

/// [`dot`] in four independent partial sums, added pairwise at the end: the same value as
/// [`dot`] only where every partial sum is exact ([`IkOgd::exact`]).
fn dot_reassociated(w: &[f64], psi: usize, phi: &[u32]) -> f64 {
    let mut sums = [0.0; 4];
    let mut quads = phi.chunks_exact(4);
    let mut at = 0;
    for quad in &mut quads {
        for (j, (sum, &c)) in sums.iter_mut().zip(quad).enumerate() {
            *sum += w[at + j * psi + c as usize];
        }
        at += 4 * psi;
    }
    for (j, &c) in quads.remainder().iter().enumerate() {
        sums[j] += w[at + j * psi + c as usize];
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3])
}

impl OnlineLearner for IkOgd {
    /// φ(x) ∈ [0, ψ)^t.
    type Row = [u32];
    type Error = IsolationError;

    /// g = `Σ_i w[i·ψ + φ_i(x)]`.
    fn predict_one(&self, phi: &[u32]) -> Result<f64, IsolationError> {
        self.score(phi, false)
    }

    fn update(&mut self, phi: &[u32], c: f64) -> Result<f64, IsolationError> {
        self.learn(phi, c, false)
    }
}

/// IK-OGD(naive) ([ARX] §8.1.2, Fig. 4): the same model and rule as [`IkOgd`], but every
/// prediction takes all tψ products ⟨w, Φ(x)⟩ with Φ expanded ([`dot_naive`]); its numbers are
/// bit-identical to [`IkOgd`]'s, its cost is tψ look-ups per prediction.
#[derive(Debug, Clone)]
pub struct IkOgdNaive(IkOgd);

impl IkOgdNaive {
    /// A zero model, as [`IkOgd::new`].
    pub fn new(t: usize, psi: usize, eta: f64) -> Result<Self, IsolationError> {
        IkOgd::new(t, psi, eta).map(Self)
    }

    /// The weight vector w (length tψ).
    pub fn weights(&self) -> &[f64] {
        self.0.weights()
    }

    /// Number of entries of w read so far by predictions (tψ per prediction).
    pub fn lookups(&self) -> u64 {
        self.0.lookups()
    }

    /// Number of updates (margin violations) so far.
    pub fn support_vectors(&self) -> usize {
        self.0.support_vectors()
    }
}

impl OnlineLearner for IkOgdNaive {
    /// φ(x) ∈ [0, ψ)^t.
    type Row = [u32];
    type Error = IsolationError;

    fn predict_one(&self, phi: &[u32]) -> Result<f64, IsolationError> {
        self.0.score(phi, true)
    }

    fn update(&mut self, phi: &[u32], c: f64) -> Result<f64, IsolationError> {
        self.0.learn(phi, c, true)
    }
}

/// IK-OGD(dual) ([ARX]/[DMKD] §8.1.1, spec §6): keeps the support vectors (φ(x_j), α_j = η·c_j)
/// of every margin violation and predicts g = Σ_j α_j ⟨Φ(x_j), Φ(x)⟩ with the unnormalised
/// ⟨Φ(x_j), Φ(x)⟩ = #{i : φ_i(x_j) = φ_i(x)} = t·K̂(x_j, x), so that it is the same model as
/// [`IkOgd`] (its w = Σ_j α_j Φ(x_j)). With a dyadic η (the paper's 0.5) every partial sum is
/// exact in f64 and the two give bit-identical scores. Otherwise they agree up to rounding
/// only until c·g lands on the margin 1 (reachable: scores are sums of multiples of η), where
/// rounding can decide c·g < 1 differently and the two runs diverge.
/// Cost: #SV kernel evaluations (O(t) each) per prediction, so the stream costs O(n·#SV).
#[derive(Debug, Clone)]
pub struct IkOgdDual {
    t: usize,
    psi: usize,
    eta: f64,
    sv_phi: Vec<u32>,
    alpha: Vec<f64>,
    kernel_evaluations: Cell<u64>,
}

impl IkOgdDual {
    /// An empty model (no support vectors).
    pub fn new(t: usize, psi: usize, eta: f64) -> Result<Self, IsolationError> {
        check_t_psi(t, psi)?;
        check_eta(eta)?;
        Ok(Self {
            t,
            psi,
            eta,
            sv_phi: Vec::new(),
            alpha: Vec::new(),
            kernel_evaluations: Cell::new(0),
        })
    }

    /// An empty model for the index vectors of `kernel`.
    pub fn for_kernel(kernel: &IsolationKernel, eta: f64) -> Result<Self, IsolationError> {
        Self::new(kernel.t(), kernel.psi(), eta)
    }

    /// Number of support vectors.
    pub fn support_vectors(&self) -> usize {
        self.alpha.len()
    }

    /// φ(x_j) of support vector j.
    pub fn support_vector(&self, j: usize) -> &[u32] {
        &self.sv_phi[j * self.t..(j + 1) * self.t]
    }

    /// The coefficients α_j = η·c_j.
    pub fn alphas(&self) -> &[f64] {
        &self.alpha
    }

    /// Number of kernel evaluations ⟨Φ(x_j), Φ(x)⟩ so far (#SV per prediction).
    pub fn kernel_evaluations(&self) -> u64 {
        self.kernel_evaluations.get()
    }
}

impl OnlineLearner for IkOgdDual {
    /// φ(x) ∈ [0, ψ)^t.
    type Row = [u32];
    type Error = IsolationError;

    /// g = Σ_j α_j·#{i : φ_i(x_j) = φ_i(x)}.
    fn predict_one(&self, phi: &[u32]) -> Result<f64, IsolationError> {
        check_phi(phi, self.t, self.psi)?;
        self.kernel_evaluations
            .set(self.kernel_evaluations.get() + self.alpha.len() as u64);
        let mut g = 0.0;
        for (sv, &a) in self.sv_phi.chunks_exact(self.t).zip(&self.alpha) {
            let agreements = sv.iter().zip(phi).filter(|(u, v)| u == v).count();
            g += a * agreements as f64;
        }
        Ok(g)
    }

    fn update(&mut self, phi: &[u32], c: f64) -> Result<f64, IsolationError> {
        check_label(c)?;
        let g = self.predict_one(phi)?;
        if c * g < 1.0 {
            self.sv_phi.extend_from_slice(phi);
            self.alpha.push(self.eta * c);
        }
        Ok(g)
    }
}

/// Kernel OGD (Kivinen et al. 2001 as in [KOL]; spec §7.1): f(x) = Σ_{j∈S} α_j k(x_j, x);
/// when c·f < 1 append x to S with α = η·c. No budget (S grows with every violation, so the
/// stream costs O(n·|S|) kernel evaluations), no regularisation; test with the final S.
///
/// S is kept in dense blocks of 8 support vectors evaluated 8 at a time when d ≤ 4096,
/// sparse rows above; both give the same bits.
#[derive(Debug, Clone)]
pub struct KernelOgd {
    kernel: OgdKernel,
    dim: usize,
    eta: f64,
    svs: RowStore,
    alpha: Vec<f64>,
    kernel_evaluations: Cell<u64>,
}

impl KernelOgd {
    /// An empty model on d-dimensional rows.
    pub fn new(kernel: OgdKernel, dim: usize, eta: f64) -> Result<Self, IsolationError> {
        kernel.check()?;
        check_eta(eta)?;
        kernel_core::error::at_least_one("dimension", dim)?;
        Ok(Self {
            kernel,
            dim,
            eta,
            svs: RowStore::new(dim),
            alpha: Vec::new(),
            kernel_evaluations: Cell::new(0),
        })
    }

    /// The kernel k.
    pub fn kernel(&self) -> OgdKernel {
        self.kernel
    }

    /// Number of support vectors |S|.
    pub fn support_vectors(&self) -> usize {
        self.alpha.len()
    }

    /// The coefficients α_j = η·c_j.
    pub fn alphas(&self) -> &[f64] {
        &self.alpha
    }

    /// Number of kernel evaluations k(x_j, x) so far (|S| per prediction).
    pub fn kernel_evaluations(&self) -> u64 {
        self.kernel_evaluations.get()
    }

    /// f(x) = Σ_j α_j k(x_j, x) of a dense or sparse row, after checking its dimension (and,
    /// dense, finiteness).
    pub fn predict_row(&self, x: Row) -> Result<f64, IsolationError> {
        x.check(self.dim)?;
        Ok(self.score(x))
    }

    /// Learns (x, c) and returns f(x) before the update; as [`OnlineLearner::update`] for
    /// dense or sparse rows (an error if c ∉ {−1, +1}).
    pub fn update_row(&mut self, x: Row, c: f64) -> Result<f64, IsolationError> {
        check_label(c)?;
        x.check(self.dim)?;
        let f = self.score(x);
        if c * f < 1.0 {
            self.svs.push(x);
            self.alpha.push(self.eta * c);
        }
        Ok(f)
    }

    fn score(&self, x: Row) -> f64 {
        self.kernel_evaluations
            .set(self.kernel_evaluations.get() + self.alpha.len() as u64);
        // Σ_j α_j k(x_j, x) from +0.0 in j order.
        let mut f = 0.0;
        self.svs
            .for_each_kernel(self.kernel, x, |j, k| f += self.alpha[j] * k);
        f
    }
}

impl OnlineLearner for KernelOgd {
    /// A dense row of d values (sparse rows: [`KernelOgd::update_row`]).
    type Row = [f64];
    type Error = IsolationError;

    /// [`KernelOgd::predict_row`] of a dense row.
    fn predict_one(&self, x: &[f64]) -> Result<f64, IsolationError> {
        self.predict_row(Row::Dense(x.into()))
    }

    /// [`KernelOgd::update_row`] of a dense row.
    fn update(&mut self, x: &[f64], c: f64) -> Result<f64, IsolationError> {
        self.update_row(Row::Dense(x.into()), c)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::input::{Rows, SparseRow};
    use crate::kernel::Partitioner;
    use crate::store::LANES;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Two noisy classes in [-1, 1]^d split by a curved boundary, labels ±1.
    fn stream(n: usize, d: usize, rng: &mut ChaCha8Rng) -> (Array2<f64>, Vec<f64>) {
        let x = Array2::from_shape_fn((n, d), |_| rng.random_range(-1.0..1.0));
        let y = x
            .rows()
            .into_iter()
            .map(|r| {
                let s = r[0] * r[0] + r[1] - 0.3 + rng.random_range(-0.2..0.2);
                label(s)
            })
            .collect();
        (x, y)
    }

    fn indexed(t: usize, psi: usize, seed: u64) -> (Vec<u32>, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (x, y) = stream(1500, 4, &mut rng);
        let k = IsolationKernel::fit(
            Rows::Dense(x.view()),
            psi,
            t,
            Partitioner::IForest { height_limit: None },
            &mut rng,
        )
        .unwrap();
        (k.index_rows(Rows::Dense(x.view())).unwrap(), y)
    }

    #[test]
    fn cells_are_checked_against_psi_whatever_their_bitwise_or() {
        // psi = 100: 64 | 36 = 100 is not below psi, yet both cells are.
        assert!(check_cells(&[64, 36, 99, 0], 100).is_ok());
        assert!(check_cells(&[3, 96], 100).is_ok());
        assert!(check_cells(&[64, 100, 3], 100).is_err());
        assert!(check_cells(&[31, 7, 32], 32).is_err());
        assert!(check_cells(&[31, 7, 0], 32).is_ok());
        assert!(check_cells(&[], 1).is_ok());
        assert!(check_cells(&[u32::MAX], 1 << 20).is_err());
    }

    /// Independent replay of Algorithm 2 over the explicit one-hot Φ(x) ∈ {0,1}^{tψ}.
    #[test]
    fn ik_ogd_follows_algorithm_2_on_the_explicit_feature_map() {
        let (t, psi) = (30, 16);
        let (phi, y) = indexed(t, psi, 1);
        let mut learner = IkOgd::new(t, psi, PAPER_ETA).unwrap();
        let mut w = vec![0.0; t * psi];
        let mut violations = 0;
        for (row, &c) in phi.chunks(t).zip(&y) {
            let mut big_phi = vec![0.0; t * psi];
            for (i, &cell) in row.iter().enumerate() {
                big_phi[i * psi + cell as usize] = 1.0;
            }
            let g: f64 = w.iter().zip(&big_phi).map(|(a, b)| a * b).sum();
            assert_eq!(learner.predict_one(row).unwrap(), g);
            assert_eq!(learner.update(row, c).unwrap(), g);
            if c * g < 1.0 {
                violations += 1;
                for (wj, b) in w.iter_mut().zip(&big_phi) {
                    *wj += 0.5 * c * b;
                }
            }
            assert_eq!(learner.weights(), &w[..]);
        }
        assert_eq!(learner.support_vectors(), violations);
        // g = 0 → −1; the learner learns something on this easy stream.
        assert_eq!((label(0.0), label(-0.0), label(1e-300)), (-1.0, -1.0, 1.0));
        let correct = phi
            .chunks(t)
            .zip(&y)
            .filter(|(r, &c)| label(learner.predict_one(r).unwrap()) == c)
            .count();
        assert!(correct as f64 > 0.8 * y.len() as f64, "{correct}");
    }

    /// With a dyadic η the score summed in four chains is the sum in order, bit for bit, at
    /// every step of a stream (the exactness bound holds); with η = 0.37 the bound fails after
    /// the first update and the learner sums in order. η's odd significand is M of η = M·2^E.
    #[test]
    fn scores_summed_in_chains_are_the_sums_in_order_while_exact() {
        assert_eq!(
            [0.5, 0.375, 3.0, 1.0, 5e-324, 0.37].map(odd_significand)[..5],
            [1, 3, 3, 1, 1]
        );
        assert!(odd_significand(0.37) > 1 << 50);
        let (t, psi) = (30, 16);
        let (phi, y) = indexed(t, psi, 4);
        for (eta, dyadic) in [(PAPER_ETA, true), (0.375, true), (3.0, true), (0.37, false)] {
            let mut learner = IkOgd::new(t, psi, eta).unwrap();
            assert!(learner.exact());
            let mut chains = 0;
            for (row, &c) in phi.chunks(t).zip(&y) {
                let in_order = dot(learner.weights(), psi, row);
                chains += usize::from(learner.exact());
                assert_eq!(
                    learner.update(row, c).unwrap().to_bits(),
                    in_order.to_bits()
                );
            }
            assert!(learner.support_vectors() > 10);
            assert_eq!(learner.exact(), dyadic, "{eta}");
            // Every row of the stream scored in four chains (dyadic), or only before the first
            // update (0.37).
            assert_eq!(chains == y.len(), dyadic, "{eta}");
            // The reassociated sum differs from the sum in order somewhere when not exact: the
            // test above would catch a learner that took it.
            if !dyadic {
                let w = learner.weights();
                assert!(phi
                    .chunks(t)
                    .any(|r| dot(w, psi, r).to_bits() != dot_reassociated(w, psi, r).to_bits()));
            }
        }
    }

    /// The rows' scores at once are `predict_one`'s bits row by row (whole groups of four and a
    /// remainder), count the same look-ups, and a bad index or shape is an error.
    #[test]
    fn predict_rows_gives_the_bits_of_predict_one() {
        let (t, psi) = (30, 16);
        let (phi, y) = indexed(t, psi, 2);
        // 0.37: both sum in order; 0.5: predict_one sums in four chains (exact), predict_rows
        // in order.
        for eta in [0.37, PAPER_ETA] {
            predict_rows_matches(t, psi, &phi, &y, eta);
        }
    }

    fn predict_rows_matches(t: usize, psi: usize, phi: &[u32], y: &[f64], eta: f64) {
        let mut learner = IkOgd::new(t, psi, eta).unwrap();
        for (row, &c) in phi.chunks(t).zip(y).take(700) {
            learner.update(row, c).unwrap();
        }
        for rows in [0, 1, 4, 7, 800] {
            let phis = &phi[..rows * t];
            let before = learner.lookups();
            let mut got = vec![f64::NAN; rows];
            learner.predict_rows(phis, &mut got).unwrap();
            assert_eq!(learner.lookups() - before, (rows * t) as u64);
            let want: Vec<u64> = phis
                .chunks(t)
                .map(|r| learner.predict_one(r).unwrap().to_bits())
                .collect();
            let got: Vec<u64> = got.iter().map(|g| g.to_bits()).collect();
            assert_eq!(got, want, "{rows} rows");
        }
        let mut out = vec![0.0; 2];
        assert!(learner.predict_rows(&phi[..3 * t], &mut out).is_err());
        let mut bad = phi[..2 * t].to_vec();
        bad[t + 3] = psi as u32;
        assert!(learner.predict_rows(&bad, &mut out).is_err());
    }

    /// Predictions through the kernel are `predict_rows`'s bits on the rows' φ, with the same
    /// look-ups counted, by each of the kernel's routes (t = 20): a tree's weights in registers
    /// (ψ = 16, where the processor has AVX-512), φ written out (ψ = 64: 10 KiB of w) and summed
    /// as the trees go (ψ = 256: 40 KiB); η = 0.37 makes w's sums inexact, so that an order
    /// other than the trees' would show; mismatched shapes are errors.
    #[test]
    fn predictions_through_the_kernel_are_those_of_the_rows_phi() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let (x, y) = stream(3_000, 5, &mut rng);
        let ids: Vec<usize> = (0..3_000).rev().collect();
        for psi in [16, 64, 256] {
            let t = 20;
            let kernel = IsolationKernel::fit(
                Rows::Dense(x.view()),
                psi,
                t,
                Partitioner::IForest { height_limit: None },
                &mut ChaCha8Rng::seed_from_u64(2),
            )
            .unwrap();
            let phi = kernel.index_rows(Rows::Dense(x.view())).unwrap();
            let mut learner = IkOgd::for_kernel(&kernel, 0.37).unwrap();
            for (row, &c) in phi.chunks(t).zip(&y).take(2_000) {
                learner.update(row, c).unwrap();
            }
            let mut phis = vec![0; ids.len() * t];
            kernel
                .index_rows_of(Rows::Dense(x.view()), &ids, &mut phis)
                .unwrap();
            let mut want = vec![0.0; ids.len()];
            learner.predict_rows(&phis, &mut want).unwrap();
            let before = learner.lookups();
            let mut got = vec![f64::NAN; ids.len()];
            learner
                .predict_rows_of(&kernel, Rows::Dense(x.view()), &ids, &mut got)
                .unwrap();
            assert_eq!(learner.lookups() - before, (ids.len() * t) as u64);
            let bits = |v: &[f64]| v.iter().map(|g| g.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "psi {psi}");
            assert!(learner
                .predict_rows_of(&kernel, Rows::Dense(x.view()), &ids, &mut got[1..])
                .is_err());
            let other = IkOgd::new(t, psi / 2, 0.37).unwrap();
            assert!(other
                .predict_rows_of(&kernel, Rows::Dense(x.view()), &ids, &mut got)
                .is_err());
        }
    }

    #[test]
    fn naive_and_dual_give_the_bits_of_the_primal_with_their_own_costs() {
        let (t, psi) = (25, 32);
        for eta in [PAPER_ETA, 0.25, 3.0] {
            let (phi, y) = indexed(t, psi, 2);
            let mut primal = IkOgd::new(t, psi, eta).unwrap();
            let mut naive = IkOgdNaive::new(t, psi, eta).unwrap();
            let mut dual = IkOgdDual::new(t, psi, eta).unwrap();
            let stream = || phi.chunks(t).zip(y.iter().copied());
            let a = primal.run_stream(stream()).unwrap();
            let b = naive.run_stream(stream()).unwrap();
            let mut expected_evaluations = 0;
            let mut c_dual = Vec::new();
            for (row, c) in stream() {
                expected_evaluations += dual.support_vectors() as u64;
                c_dual.push(dual.update(row, c).unwrap());
            }
            let bits = |v: &[f64]| v.iter().map(|g| g.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a), bits(&b));
            assert_eq!(bits(&a), bits(&c_dual));
            assert_eq!(bits(primal.weights()), bits(naive.weights()));
            assert_eq!(primal.support_vectors(), naive.support_vectors());
            assert_eq!(primal.support_vectors(), dual.support_vectors());
            assert!(dual.support_vectors() > 10);
            // Costs: t look-ups (primal), tψ (naive), #SV kernel evaluations (dual).
            let n = y.len() as u64;
            assert_eq!(primal.lookups(), n * t as u64);
            assert_eq!(naive.lookups(), n * (t * psi) as u64);
            assert_eq!(dual.kernel_evaluations(), expected_evaluations);
            // w = Σ_j α_j Φ(x_j).
            let mut w = vec![0.0; t * psi];
            for j in 0..dual.support_vectors() {
                for (i, &cell) in dual.support_vector(j).iter().enumerate() {
                    w[i * psi + cell as usize] += dual.alphas()[j];
                }
            }
            assert_eq!(bits(&w), bits(primal.weights()));
        }
    }

    /// With η = 0.1 (not dyadic) the dual's score is t·Σ α_j K̂(x_j, x) with K̂ the normalised
    /// kernel of [`IsolationKernel::similarity`], and it equals the primal's up to rounding
    /// until the first step where c·g lands on the margin 1 (scores are sums of multiples of
    /// η, so ties are reachable) and rounding decides the test c·g < 1 differently; from then
    /// on the two runs may take different updates.
    #[test]
    fn dual_score_is_t_times_the_normalised_kernel_expansion() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (x, y) = stream(400, 3, &mut rng);
        let k = IsolationKernel::fit(Rows::Dense(x.view()), 8, 20, Partitioner::Anne, &mut rng)
            .unwrap();
        let mut primal = IkOgd::for_kernel(&k, 0.1).unwrap();
        let mut dual = IkOgdDual::for_kernel(&k, 0.1).unwrap();
        let mut svs: Vec<usize> = Vec::new();
        let mut diverged = false;
        for (i, &c) in y.iter().enumerate() {
            let phi = k.index(Row::Dense(x.row(i))).unwrap();
            let (gp, gd) = (
                primal.update(&phi, c).unwrap(),
                dual.update(&phi, c).unwrap(),
            );
            if !diverged {
                approx::assert_abs_diff_eq!(gp, gd, epsilon = 1e-9);
                if (c * gp < 1.0) != (c * gd < 1.0) {
                    approx::assert_abs_diff_eq!(c * gp, 1.0, epsilon = 1e-9);
                    diverged = true;
                }
            }
            let expansion: f64 = svs
                .iter()
                .map(|&j| {
                    let s = k.similarity(Row::Dense(x.row(j)), Row::Dense(x.row(i)));
                    0.1 * y[j] * s.unwrap()
                })
                .sum();
            approx::assert_abs_diff_eq!(gd, 20.0 * expansion, epsilon = 1e-9);
            if c * gd < 1.0 {
                svs.push(i);
            }
        }
        assert_eq!(svs.len(), dual.support_vectors());
    }

    fn brute_laplacian(a: &[f64], b: &[f64], gamma: f64) -> f64 {
        let l1: f64 = a.iter().zip(b).map(|(u, v)| (u - v).abs()).sum();
        (-gamma * l1).exp()
    }

    fn brute_gaussian(a: &[f64], b: &[f64], gamma: f64) -> f64 {
        let sq: f64 = a.iter().zip(b).map(|(u, v)| (u - v) * (u - v)).sum();
        (-gamma * sq).exp()
    }

    /// Every prediction of kernel OGD equals Σ α_j k(x_j, x) recomputed from scratch over the
    /// support vectors selected by an independent replay; dense and sparse rows give the same
    /// bits.
    #[test]
    fn kernel_ogd_matches_a_brute_force_replay_for_dense_and_sparse_rows() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let (n, d) = (300, 6);
        let (mut x, y) = stream(n, d, &mut rng);
        // Make the rows sparse-ish so the sparse path matters.
        x.mapv_inplace(|v| if v.abs() < 0.4 { 0.0 } else { v });
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for row in x.rows() {
            for (a, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    indices.push(a as u32);
                    values.push(v);
                }
            }
            indptr.push(indices.len());
        }
        let lap = OgdKernel::laplacian_psi(16, d).unwrap();
        assert_eq!(
            lap,
            OgdKernel::Laplacian {
                gamma: 16f64.ln() / 6.0
            }
        );
        for kernel in [lap, OgdKernel::gaussian(0.7).unwrap()] {
            let brute = |a: &[f64], b: &[f64]| match kernel {
                OgdKernel::Laplacian { gamma } => brute_laplacian(a, b, gamma),
                OgdKernel::Gaussian { gamma } => brute_gaussian(a, b, gamma),
            };
            let mut dense = KernelOgd::new(kernel, d, PAPER_ETA).unwrap();
            let mut sparse = KernelOgd::new(kernel, d, PAPER_ETA).unwrap();
            let mut svs: Vec<(usize, f64)> = Vec::new();
            let mut expected_evaluations = 0;
            for i in 0..n {
                let xi = x.row(i).to_vec();
                let f_brute: f64 = svs
                    .iter()
                    .map(|&(j, a)| a * brute(x.row(j).as_slice().unwrap(), &xi))
                    .sum();
                expected_evaluations += svs.len() as u64;
                let f = dense.update(&xi, y[i]).unwrap();
                approx::assert_relative_eq!(f, f_brute, epsilon = 1e-12, max_relative = 1e-12);
                let row = SparseRow::new(
                    &indices[indptr[i]..indptr[i + 1]],
                    &values[indptr[i]..indptr[i + 1]],
                    d,
                )
                .unwrap();
                let fs = sparse.update_row(Row::Sparse(row), y[i]).unwrap();
                assert_eq!(f.to_bits(), fs.to_bits());
                if y[i] * f_brute < 1.0 {
                    svs.push((i, PAPER_ETA * y[i]));
                }
            }
            assert_eq!(dense.support_vectors(), svs.len());
            assert_eq!(sparse.support_vectors(), svs.len());
            assert!(svs.len() > 20 && svs.len() < n);
            assert_eq!(dense.kernel_evaluations(), expected_evaluations);
            // predict_one does |S| more evaluations and changes nothing else.
            let before = dense.kernel_evaluations();
            let f = dense.predict_one(x.row(0).as_slice().unwrap()).unwrap();
            assert_eq!(dense.kernel_evaluations(), before + svs.len() as u64);
            let f_brute: f64 = svs
                .iter()
                .map(|&(j, a)| {
                    a * brute(x.row(j).as_slice().unwrap(), x.row(0).as_slice().unwrap())
                })
                .sum();
            approx::assert_relative_eq!(f, f_brute, epsilon = 1e-12, max_relative = 1e-12);
            assert_eq!(dense.alphas(), sparse.alphas());
        }
    }

    /// Random rows with about `density` non-zeros, as a dense matrix and its CSR form (which
    /// also stores a few explicit zeros); some values repeat so that differences vanish.
    pub(crate) fn random_rows(
        n: usize,
        d: usize,
        density: f64,
        rng: &mut ChaCha8Rng,
    ) -> (Array2<f64>, Vec<usize>, Vec<u32>, Vec<f64>) {
        let x = Array2::from_shape_fn((n, d), |_| {
            if rng.random_bool(density) {
                if rng.random_bool(0.3) {
                    1.0
                } else {
                    rng.random_range(-2.0..2.0)
                }
            } else {
                0.0
            }
        });
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for row in x.rows() {
            for (a, &v) in row.iter().enumerate() {
                if v != 0.0 || rng.random_bool(0.05) {
                    indices.push(a as u32);
                    values.push(v);
                }
            }
            indptr.push(indices.len());
        }
        (x, indptr, indices, values)
    }

    /// Kernel OGD over the dense blocks of [`RowStore`] gives the bits of the per-support-vector
    /// sparse merge (the store above the dense limit, the computation before the blocks) at
    /// every step, on dense (ijcnn1-like) and sparse (a9a-like) streams, for dense and sparse
    /// rows, both kernels, with the same counters.
    #[test]
    fn kernel_ogd_dense_store_gives_the_bits_of_the_sparse_merge() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for (n, d, density) in [(500, 22, 1.0), (500, 123, 0.11), (200, 5, 0.5)] {
            let (x, indptr, indices, values) = random_rows(n, d, density, &mut rng);
            let y: Vec<f64> = (0..n).map(|_| label(rng.random_range(-1.0..1.0))).collect();
            let sparse_row = |i: usize| {
                SparseRow::new(
                    &indices[indptr[i]..indptr[i + 1]],
                    &values[indptr[i]..indptr[i + 1]],
                    d,
                )
                .unwrap()
            };
            for kernel in [
                OgdKernel::laplacian_psi(16, d).unwrap(),
                OgdKernel::gaussian(0.3).unwrap(),
            ] {
                let mut blocks = KernelOgd::new(kernel, d, PAPER_ETA).unwrap();
                let mut sparse_in = KernelOgd::new(kernel, d, PAPER_ETA).unwrap();
                let mut reference = KernelOgd::new(kernel, d, PAPER_ETA).unwrap();
                reference.svs = RowStore::with_dense_limit(d, 0);
                assert!(blocks.svs.is_dense() && !reference.svs.is_dense());
                for (i, &c) in y.iter().enumerate() {
                    let f = reference.update_row(Row::Dense(x.row(i)), c).unwrap();
                    let g = blocks.update_row(Row::Dense(x.row(i)), c).unwrap();
                    let h = sparse_in.update_row(Row::Sparse(sparse_row(i)), c).unwrap();
                    assert_eq!(
                        (g.to_bits(), h.to_bits()),
                        (f.to_bits(), f.to_bits()),
                        "row {i}"
                    );
                }
                assert!(reference.support_vectors() > 2 * LANES + 1);
                for model in [&blocks, &sparse_in] {
                    assert_eq!(model.support_vectors(), reference.support_vectors());
                    assert_eq!(model.alphas(), reference.alphas());
                    assert_eq!(model.kernel_evaluations(), reference.kernel_evaluations());
                }
                // The final model on every row (the steps above saw every fill of the last block).
                for i in 0..n {
                    let f = reference.predict_row(Row::Sparse(sparse_row(i))).unwrap();
                    for row in [Row::Dense(x.row(i)), Row::Sparse(sparse_row(i))] {
                        assert_eq!(blocks.predict_row(row).unwrap().to_bits(), f.to_bits());
                    }
                }
            }
        }
    }

    #[test]
    fn laplacian_psi_is_psi_to_the_minus_mean_l1_distance() {
        let k = OgdKernel::laplacian_psi(64, 3).unwrap();
        let mut ogd = KernelOgd::new(k, 3, 1.0).unwrap();
        ogd.update(&[0.0, 0.5, -1.0], 1.0).unwrap();
        // α = 1, so f(y) = L_ψ(x, y) = 64^{−‖x−y‖₁/3} with ‖x−y‖₁ = 0.3 + 0.5 + 0.7 = 1.5.
        let f = ogd.predict_one(&[0.3, 0.0, -0.3]).unwrap();
        approx::assert_relative_eq!(f, 64f64.powf(-0.5), max_relative = 1e-12);
        approx::assert_relative_eq!(f, 0.125, max_relative = 1e-12);
        assert_eq!(ogd.predict_one(&[0.0, 0.5, -1.0]).unwrap(), 1.0);
    }

    #[test]
    fn parameter_errors_are_typed() {
        let eta = |r: Result<(), IsolationError>| {
            matches!(
                r,
                Err(IsolationError::Core(CoreError::InvalidParameter {
                    name: "eta",
                    ..
                }))
            )
        };
        for bad in [0.0, -0.5, f64::NAN, f64::INFINITY] {
            assert!(eta(IkOgd::new(4, 8, bad).map(|_| ())));
            assert!(eta(IkOgdNaive::new(4, 8, bad).map(|_| ())));
            assert!(eta(IkOgdDual::new(4, 8, bad).map(|_| ())));
            assert!(eta(KernelOgd::new(
                OgdKernel::Laplacian { gamma: 1.0 },
                2,
                bad
            )
            .map(|_| ())));
        }
        assert!(matches!(
            IkOgd::new(4, 1, 0.5),
            Err(IsolationError::Core(CoreError::InvalidParameter {
                name: "psi",
                ..
            }))
        ));
        assert!(matches!(
            IkOgdDual::new(0, 8, 0.5),
            Err(IsolationError::Core(CoreError::InvalidParameter {
                name: "t",
                ..
            }))
        ));
        assert!(matches!(
            IkOgdNaive::new(1 << 20, 1 << 20, 0.5),
            Err(IsolationError::Core(CoreError::InvalidParameter {
                name: "t * psi",
                ..
            }))
        ));
        assert!(matches!(
            OgdKernel::laplacian_psi(1, 5),
            Err(IsolationError::Core(CoreError::InvalidParameter {
                name: "psi",
                ..
            }))
        ));
        assert!(matches!(
            OgdKernel::laplacian_psi(4, 0),
            Err(IsolationError::Core(CoreError::InvalidParameter {
                name: "dimension",
                ..
            }))
        ));
        for bad in [0.0, -1.0, f64::NAN] {
            assert!(matches!(
                OgdKernel::gaussian(bad),
                Err(IsolationError::Core(CoreError::InvalidParameter {
                    name: "gamma",
                    ..
                }))
            ));
            assert!(matches!(
                KernelOgd::new(OgdKernel::Laplacian { gamma: bad }, 2, 0.5),
                Err(IsolationError::Core(CoreError::InvalidParameter {
                    name: "gamma",
                    ..
                }))
            ));
        }
        assert!(matches!(
            KernelOgd::new(OgdKernel::Gaussian { gamma: 1.0 }, 0, 0.5),
            Err(IsolationError::Core(CoreError::InvalidParameter {
                name: "dimension",
                ..
            }))
        ));
        let mut ogd = KernelOgd::new(OgdKernel::Gaussian { gamma: 1.0 }, 2, 0.5).unwrap();
        assert!(matches!(
            ogd.update_row(Row::Dense(ndarray::array![1.0, 2.0, 3.0].view()), 1.0),
            Err(IsolationError::Core(CoreError::ShapeMismatch {
                expected: 2,
                got: 3,
                ..
            }))
        ));
        assert_eq!(ogd.support_vectors(), 0);
    }

    #[test]
    fn invalid_samples_are_errors_that_change_nothing() {
        let mut l = IkOgd::new(2, 4, 0.5).unwrap();
        let e = l.update(&[0, 1], 0.0).unwrap_err();
        assert!(e.to_string().contains("label 0"), "{e}");
        assert!(matches!(
            l.update(&[0, 4], 1.0),
            Err(IsolationError::Core(CoreError::InvalidInput { .. }))
        ));
        assert_eq!((l.support_vectors(), l.lookups()), (0, 0));
        let d = IkOgdDual::new(3, 4, 0.5).unwrap();
        assert!(matches!(
            d.predict_one(&[0, 1]),
            Err(IsolationError::Core(CoreError::ShapeMismatch {
                expected: 3,
                got: 2,
                ..
            }))
        ));
        let mut ogd = KernelOgd::new(OgdKernel::Gaussian { gamma: 1.0 }, 2, 0.5).unwrap();
        assert!(ogd.update(&[0.0, f64::NAN], 1.0).is_err());
        assert!(ogd.update(&[0.0, 1.0], 2.0).is_err());
        assert_eq!(ogd.support_vectors(), 0);
    }
}
