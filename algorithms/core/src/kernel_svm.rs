//! A kernel C-SVM (C-SVC) trained as LIBSVM 3.x trains it: SMO with the second-order
//! working-set selection of Fan, Chen & Lin (*Working set selection using second order
//! information for training SVM*, JMLR 6, 2005), LIBSVM's `Solver::Solve`,
//! `Solver::select_working_set` and `Solver::calculate_rho`, with kernel rows computed on demand
//! and kept in a bounded LRU cache (LIBSVM's `Cache`), so that no n × n matrix is ever stored.
//!
//! Dual, with labels `y_i ∈ {−1, +1}` and `Q_ij = y_i y_j K(x_i, x_j)`:
//! `min_α f(α) = ½ αᵀQα − eᵀα` s.t. `yᵀα = 0`, `0 ≤ α_i ≤ C`. Decision function
//! `f(x) = Σ_i α_i y_i K(x_i, x) − ρ`, label +1 where `f(x) > 0`.
//!
//! * Gradient `G = Qα − e`; start `α = 0`, `G = −e`.
//! * `I_up = {t : y_t = +1, α_t < C} ∪ {t : y_t = −1, α_t > 0}`, `I_low` the mirror set;
//!   `m(α) = max_{I_up} −y_t G_t`, `M(α) = min_{I_low} −y_t G_t`. Stop when `m − M < eps`.
//! * `i = argmax_{I_up} −y_t G_t`; `j = argmin_t −b_it²/a_it` over `t ∈ I_low` with
//!   `b_it = −y_i G_i + y_t G_t > 0`, `a_it = K_ii + K_tt − 2 K_it` (TAU = 1e-12 where
//!   `a_it ≤ 0`). Ties go to the last index, as in LIBSVM.
//! * Two-variable step: `y_i ≠ y_j`: `δ = (−G_i − G_j)/(Q_ii + Q_jj + 2Q_ij)`, `α_i += δ`,
//!   `α_j += δ`; `y_i = y_j`: `δ = (G_i − G_j)/(Q_ii + Q_jj − 2Q_ij)`, `α_i −= δ`, `α_j += δ`;
//!   then clipped back into the box along the line `y_iα_i + y_jα_j = const` (LIBSVM's four
//!   cases per branch). `G_k += Q_ik Δα_i + Q_jk Δα_j` for every k (rows i and j of Q).
//! * `ρ`: the mean of `y_i G_i` over the free α (`0 < α_i < C`); with none, the midpoint of
//!   `[max lower bound, min upper bound]` of `y_i G_i` given by the bounded α.
//! * Objective `f(α) = ½ Σ_i α_i (G_i − 1)`.
//!
//! At most `max(10⁷, 100 n)` updates (LIBSVM's cap); reaching it is not an error, the model is
//! returned with [`Svc::reached_cap`] set.
//!
//! Deviations from LIBSVM, all outside the iterates' arithmetic except the first:
//! * the cache holds `f64` rows of Q (LIBSVM's `Qfloat` is `float`), so iterates agree with
//!   LIBSVM's only to single precision;
//! * no shrinking (LIBSVM's `-h 1`): the caller's rows are full rows anyway, so shrinking would
//!   only save the O(n) selection and gradient loops, not kernel evaluations;
//! * the stopping test is checked before the cap: a solve that meets `eps` on its last allowed
//!   update is not flagged;
//! * labels are the caller's ±1 (LIBSVM gives +1 to the class of the first training row).
//!
//! The cache holds `max(2, cache_bytes / (8n))` rows (at most n), as LIBSVM's `-m` (MiB) with
//! its floor of two rows; a miss calls [`KernelRows::row`]. The solver is sequential: the result
//! is bit-for-bit the same for any cache size and any rayon thread count, provided `row` writes
//! each `out[j]` independently of the others.

use crate::error::positive;
use crate::CoreError;

/// The replacement of a non-positive curvature `a_it` (LIBSVM's TAU).
const TAU: f64 = 1e-12;
/// "No index" in the cache's tables and in the working-set selection.
const NONE: usize = usize::MAX;

/// Rows of a kernel matrix K over n training points, computed on demand.
pub trait KernelRows: Sync {
    /// The number of training points n.
    fn n(&self) -> usize;
    /// `K(x_i, x_j)` for every j into `out` (length n). May use rayon internally, but each
    /// `out[j]` must be computed independently (determinism).
    fn row(&self, i: usize, out: &mut [f64]);
    /// `K(x_i, x_i)`.
    fn diagonal(&self, i: usize) -> f64;
}

/// Settings of [`fit_svc`]; the default is LIBSVM's (`-c 1 -e 0.001 -m 100`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SvcParams {
    /// Box constraint C, finite and > 0.
    pub c: f64,
    /// Stopping tolerance on `m(α) − M(α)`, finite and > 0.
    pub eps: f64,
    /// Bytes of kernel rows kept (n·8 bytes a row; at least two rows are always kept).
    pub cache_bytes: usize,
    /// Updates at most, ≥ 1; `None`: LIBSVM's `max(10,000,000, 100 n)`.
    pub max_iterations: Option<usize>,
}

impl Default for SvcParams {
    fn default() -> Self {
        Self {
            c: 1.0,
            eps: 1e-3,
            cache_bytes: 100 << 20,
            max_iterations: None,
        }
    }
}

/// A trained C-SVM: `f(x) = Σ_{s ∈ support} coef_s K(x_s, x) − ρ`, `coef_s = α_s y_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct Svc {
    support: Vec<usize>,
    coefficients: Vec<f64>,
    rho: f64,
    iterations: usize,
    reached_cap: bool,
    objective: f64,
}

impl Svc {
    /// Indices (into the training rows, increasing) of the support vectors, those with α > 0.
    pub fn support(&self) -> &[usize] {
        &self.support
    }

    /// `α_s y_s` for each support vector, in [`Svc::support`] order (LIBSVM's `sv_coef`).
    pub fn coefficients(&self) -> &[f64] {
        &self.coefficients
    }

    /// The bias ρ subtracted in the decision function.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// SMO updates performed (LIBSVM's `#iter`).
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// Whether the iteration cap stopped the solver before the tolerance was met.
    pub fn reached_cap(&self) -> bool {
        self.reached_cap
    }

    /// The dual objective `½ αᵀQα − eᵀα` at the solution (LIBSVM's `obj`).
    pub fn objective(&self) -> f64 {
        self.objective
    }

    /// `f(x)` from the kernel values `K(x_s, x)` between x and the support vectors, in
    /// [`Svc::support`] order; an error if their number differs.
    pub fn decision(&self, k_support: &[f64]) -> Result<f64, CoreError> {
        if k_support.len() != self.support.len() {
            return Err(CoreError::shape(
                "kernel values vs support vectors",
                self.support.len(),
                k_support.len(),
            ));
        }
        let sum: f64 = self
            .coefficients
            .iter()
            .zip(k_support)
            .map(|(a, k)| a * k)
            .sum();
        Ok(sum - self.rho)
    }
}

/// An LRU cache of rows of Q (`Q_ij = y_i y_j K_ij`), at most `capacity` rows; slots are linked
/// from the most (`head`) to the least (`tail`) recently used.
struct RowCache<'a, K: KernelRows> {
    kernel: &'a K,
    y: &'a [f64],
    capacity: usize,
    rows: Vec<Vec<f64>>,
    /// The training row held by each slot.
    owner: Vec<usize>,
    /// The slot holding each training row, or NONE.
    slot_of: Vec<usize>,
    prev: Vec<usize>,
    next: Vec<usize>,
    head: usize,
    tail: usize,
}

impl<'a, K: KernelRows> RowCache<'a, K> {
    fn new(kernel: &'a K, y: &'a [f64], cache_bytes: usize) -> Self {
        let n = y.len();
        let row_bytes = n.saturating_mul(std::mem::size_of::<f64>()).max(1);
        let capacity = (cache_bytes / row_bytes).max(2).min(n.max(2));
        Self {
            kernel,
            y,
            capacity,
            rows: Vec::new(),
            owner: Vec::new(),
            slot_of: vec![NONE; n],
            prev: Vec::new(),
            next: Vec::new(),
            head: NONE,
            tail: NONE,
        }
    }

    fn unlink(&mut self, s: usize) {
        let (p, nx) = (self.prev[s], self.next[s]);
        if p == NONE {
            self.head = nx;
        } else {
            self.next[p] = nx;
        }
        if nx == NONE {
            self.tail = p;
        } else {
            self.prev[nx] = p;
        }
    }

    fn push_front(&mut self, s: usize) {
        self.prev[s] = NONE;
        self.next[s] = self.head;
        if self.head == NONE {
            self.tail = s;
        } else {
            self.prev[self.head] = s;
        }
        self.head = s;
    }

    /// The slot holding row i of Q, now the most recently used; computed on a miss, into a new
    /// slot or the least recently used one. The two most recent rows are never evicted by the
    /// next call (capacity ≥ 2), so a slot stays valid across one further call.
    fn slot(&mut self, i: usize) -> Result<usize, CoreError> {
        let s = self.slot_of[i];
        if s != NONE {
            if s != self.head {
                self.unlink(s);
                self.push_front(s);
            }
            return Ok(s);
        }
        let s = if self.rows.len() < self.capacity {
            self.rows.push(vec![0.0; self.y.len()]);
            self.owner.push(i);
            self.prev.push(NONE);
            self.next.push(NONE);
            self.rows.len() - 1
        } else {
            let s = self.tail;
            self.unlink(s);
            self.slot_of[self.owner[s]] = NONE;
            s
        };
        let row = &mut self.rows[s];
        self.kernel.row(i, row);
        let yi = self.y[i];
        for (j, (q, &yj)) in row.iter_mut().zip(self.y).enumerate() {
            if !q.is_finite() {
                return Err(CoreError::NonFiniteInput {
                    what: "kernel",
                    row: i,
                    column: j,
                    value: *q,
                });
            }
            *q *= yi * yj; // exact: a product of ±1
        }
        self.owner[s] = i;
        self.slot_of[i] = s;
        self.push_front(s);
        Ok(s)
    }

    fn row(&self, s: usize) -> &[f64] {
        &self.rows[s]
    }
}

/// LIBSVM's `select_working_set` (WSS 3 of Fan, Chen & Lin): the pair (i, j), or `None` when
/// `m(α) − M(α) < eps` (or no pair can improve).
fn select_working_set<K: KernelRows>(
    cache: &mut RowCache<'_, K>,
    alpha: &[f64],
    g: &[f64],
    qd: &[f64],
    c: f64,
    eps: f64,
) -> Result<Option<(usize, usize)>, CoreError> {
    let y = cache.y;
    // i = argmax_{t ∈ I_up} −y_t G_t.
    let (mut gmax, mut i) = (f64::NEG_INFINITY, NONE);
    for t in 0..y.len() {
        if y[t] > 0.0 {
            if alpha[t] < c && -g[t] >= gmax {
                (gmax, i) = (-g[t], t);
            }
        } else if alpha[t] > 0.0 && g[t] >= gmax {
            (gmax, i) = (g[t], t);
        }
    }
    if i == NONE {
        return Ok(None);
    }
    let s = cache.slot(i)?;
    let q_i = cache.row(s);
    let (yi, qd_i) = (y[i], qd[i]);
    // gmax2 = −M(α) = max_{t ∈ I_low} y_t G_t; j minimises −b²/a over t ∈ I_low with b > 0.
    let (mut gmax2, mut j, mut obj_min) = (f64::NEG_INFINITY, NONE, f64::INFINITY);
    for t in 0..y.len() {
        let (in_low, ytg) = if y[t] > 0.0 {
            (alpha[t] > 0.0, g[t])
        } else {
            (alpha[t] < c, -g[t])
        };
        if !in_low {
            continue;
        }
        if ytg >= gmax2 {
            gmax2 = ytg;
        }
        let grad_diff = gmax + ytg; // b_it = −y_i G_i + y_t G_t
        if grad_diff > 0.0 {
            // a_it = K_ii + K_tt − 2 K_it, with y_i Q_it = y_t K_it.
            let quad = qd_i + qd[t] - 2.0 * y[t] * yi * q_i[t];
            let obj = -(grad_diff * grad_diff) / if quad > 0.0 { quad } else { TAU };
            if obj <= obj_min {
                (j, obj_min) = (t, obj);
            }
        }
    }
    if gmax + gmax2 < eps || j == NONE {
        return Ok(None);
    }
    Ok(Some((i, j)))
}

/// Trains a C-SVM on the kernel rows of n training points with labels `y` (each −1 or +1, both
/// present). Errors: n = 0, `y.len() ≠ n`, a label not ±1, one class only, C or eps not finite
/// and > 0, `max_iterations = Some(0)`, a non-finite kernel value (diagonal or row).
pub fn fit_svc(kernel: &impl KernelRows, y: &[f64], params: &SvcParams) -> Result<Svc, CoreError> {
    let c = positive("c", params.c)?;
    let eps = positive("eps", params.eps)?;
    let n = kernel.n();
    if n == 0 {
        return Err(CoreError::EmptyInput {
            what: "kernel",
            rows: 0,
            columns: 0,
            needed: "at least one row of each class",
        });
    }
    if y.len() != n {
        return Err(CoreError::shape("labels vs kernel rows", n, y.len()));
    }
    if let Some((row, v)) = y.iter().enumerate().find(|&(_, &v)| v != 1.0 && v != -1.0) {
        return Err(CoreError::invalid_input(
            "label",
            format!("{v} (row {row})"),
            "-1 or +1",
        ));
    }
    if y.iter().all(|&v| v == y[0]) {
        return Err(CoreError::invalid_input(
            "labels",
            format!("all {}", y[0]),
            "both classes -1 and +1",
        ));
    }
    let max_iterations = match params.max_iterations {
        Some(0) => return Err(CoreError::invalid("max_iterations", 0, "at least 1")),
        Some(m) => m,
        None => n.saturating_mul(100).max(10_000_000),
    };
    let mut qd = Vec::with_capacity(n);
    for i in 0..n {
        let value = kernel.diagonal(i);
        if !value.is_finite() {
            return Err(CoreError::NonFiniteInput {
                what: "kernel diagonal",
                row: i,
                column: i,
                value,
            });
        }
        qd.push(value); // Q_ii = K_ii
    }

    let mut cache = RowCache::new(kernel, y, params.cache_bytes);
    let mut alpha = vec![0.0; n];
    let mut g = vec![-1.0; n];
    let mut iterations = 0;
    let mut reached_cap = false;
    while let Some((i, j)) = select_working_set(&mut cache, &alpha, &g, &qd, c, eps)? {
        if iterations >= max_iterations {
            reached_cap = true;
            break;
        }
        iterations += 1;
        // Slot i is the most recent, so fetching j cannot evict it.
        let si = cache.slot(i)?;
        let sj = cache.slot(j)?;
        let (q_i, q_j) = (cache.row(si), cache.row(sj));
        let (old_ai, old_aj) = (alpha[i], alpha[j]);
        if y[i] != y[j] {
            // y_iα_i + y_jα_j constant ⇒ α_i − α_j = diff constant.
            let quad = qd[i] + qd[j] + 2.0 * q_i[j];
            let delta = (-g[i] - g[j]) / if quad > 0.0 { quad } else { TAU };
            let diff = alpha[i] - alpha[j];
            alpha[i] += delta;
            alpha[j] += delta;
            if diff > 0.0 {
                if alpha[j] < 0.0 {
                    alpha[j] = 0.0;
                    alpha[i] = diff;
                }
            } else if alpha[i] < 0.0 {
                alpha[i] = 0.0;
                alpha[j] = -diff;
            }
            // C_i − C_j = 0 (one C for both classes).
            if diff > 0.0 {
                if alpha[i] > c {
                    alpha[i] = c;
                    alpha[j] = c - diff;
                }
            } else if alpha[j] > c {
                alpha[j] = c;
                alpha[i] = c + diff;
            }
        } else {
            // α_i + α_j = sum constant.
            let quad = qd[i] + qd[j] - 2.0 * q_i[j];
            let delta = (g[i] - g[j]) / if quad > 0.0 { quad } else { TAU };
            let sum = alpha[i] + alpha[j];
            alpha[i] -= delta;
            alpha[j] += delta;
            if sum > c {
                if alpha[i] > c {
                    alpha[i] = c;
                    alpha[j] = sum - c;
                }
            } else if alpha[j] < 0.0 {
                alpha[j] = 0.0;
                alpha[i] = sum;
            }
            if sum > c {
                if alpha[j] > c {
                    alpha[j] = c;
                    alpha[i] = sum - c;
                }
            } else if alpha[i] < 0.0 {
                alpha[i] = 0.0;
                alpha[j] = sum;
            }
        }
        let (dai, daj) = (alpha[i] - old_ai, alpha[j] - old_aj);
        for ((gk, &a), &b) in g.iter_mut().zip(q_i).zip(q_j) {
            *gk += a * dai + b * daj;
        }
    }

    // ρ (LIBSVM's calculate_rho) and the objective ½ Σ α_i (G_i − 1).
    let (mut ub, mut lb, mut sum_free, mut nr_free) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0);
    let mut objective = 0.0;
    for t in 0..n {
        let yg = y[t] * g[t];
        objective += alpha[t] * (g[t] - 1.0);
        if alpha[t] >= c {
            if y[t] < 0.0 {
                ub = ub.min(yg);
            } else {
                lb = lb.max(yg);
            }
        } else if alpha[t] <= 0.0 {
            if y[t] > 0.0 {
                ub = ub.min(yg);
            } else {
                lb = lb.max(yg);
            }
        } else {
            nr_free += 1;
            sum_free += yg;
        }
    }
    let rho = if nr_free > 0 {
        sum_free / nr_free as f64
    } else {
        (ub + lb) / 2.0
    };
    let support: Vec<usize> = (0..n).filter(|&t| alpha[t] > 0.0).collect();
    let coefficients = support.iter().map(|&t| alpha[t] * y[t]).collect();
    Ok(Svc {
        support,
        coefficients,
        rho,
        iterations,
        reached_cap,
        objective: objective / 2.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The Gaussian kernel `exp(−γ‖x − x'‖²)` over 2-d points; rows in parallel; counts rows.
    struct Gauss {
        x: Vec<[f64; 2]>,
        gamma: f64,
        rows: AtomicUsize,
    }

    impl Gauss {
        fn new(x: Vec<[f64; 2]>, gamma: f64) -> Self {
            Self {
                x,
                gamma,
                rows: AtomicUsize::new(0),
            }
        }
        fn k(&self, a: &[f64; 2], b: &[f64; 2]) -> f64 {
            let (d0, d1) = (a[0] - b[0], a[1] - b[1]);
            (-self.gamma * (d0 * d0 + d1 * d1)).exp()
        }
        /// f(x) of a model trained on these points.
        fn decision(&self, svc: &Svc, x: &[f64; 2]) -> f64 {
            let k: Vec<f64> = svc
                .support()
                .iter()
                .map(|&s| self.k(&self.x[s], x))
                .collect();
            svc.decision(&k).unwrap()
        }
    }

    impl KernelRows for Gauss {
        fn n(&self) -> usize {
            self.x.len()
        }
        fn row(&self, i: usize, out: &mut [f64]) {
            self.rows.fetch_add(1, Ordering::Relaxed);
            let xi = self.x[i];
            out.par_iter_mut()
                .zip(&self.x)
                .for_each(|(o, xj)| *o = self.k(&xi, xj));
        }
        fn diagonal(&self, _: usize) -> f64 {
            1.0
        }
    }

    /// LIBSVM's defaults with C and eps.
    fn params(c: f64, eps: f64) -> SvcParams {
        SvcParams {
            c,
            eps,
            ..SvcParams::default()
        }
    }

    /// n uniform points in [−1, 1]², labelled +1 inside the circle r² < 0.5, `flip` of the
    /// labels flipped.
    fn problem(n: usize, seed: u64, flip: f64) -> (Vec<[f64; 2]>, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x: Vec<[f64; 2]> = (0..n)
            .map(|_| [rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)])
            .collect();
        let y = x
            .iter()
            .map(|p| {
                let inside = p[0] * p[0] + p[1] * p[1] < 0.5;
                if inside ^ (rng.random::<f64>() < flip) {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        (x, y)
    }

    /// Gaussian elimination with partial pivoting; None if singular.
    fn solve_dense(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
        let m = b.len();
        for col in 0..m {
            let p = (col..m).max_by(|&r, &s| a[r][col].abs().total_cmp(&a[s][col].abs()))?;
            if a[p][col].abs() < 1e-13 {
                return None;
            }
            a.swap(col, p);
            b.swap(col, p);
            let (top, below) = a.split_at_mut(col + 1);
            let pivot = &top[col];
            let b_col = b[col];
            for (row, b_r) in below.iter_mut().zip(&mut b[col + 1..]) {
                let f = row[col] / pivot[col];
                for (v, p) in row[col..].iter_mut().zip(&pivot[col..]) {
                    *v -= f * p;
                }
                *b_r -= f * b_col;
            }
        }
        let mut x = vec![0.0; m];
        for r in (0..m).rev() {
            let s: f64 = (r + 1..m).map(|k| a[r][k] * x[k]).sum();
            x[r] = (b[r] - s) / a[r][r];
        }
        Some(x)
    }

    /// The dual's exact solution (α, ρ) for tiny n, independent of SMO: every assignment of each
    /// α_t to {0, C, free} is tried; the free ones and the multiplier b of yᵀα = 0 solve the
    /// KKT system `Q_FF α_F + b y_F = e − Q_FB α_B`, `y_Fᵀα_F = −y_Bᵀα_B`; the first assignment
    /// with `0 ≤ α_F ≤ C` and `G_t + b y_t ≥ 0` at α_t = 0, `≤ 0` at α_t = C is the optimum
    /// (convex problem), and ρ = −b. Needs one free α.
    fn exact_dual(q: &[Vec<f64>], y: &[f64], c: f64) -> (Vec<f64>, f64) {
        let n = y.len();
        for code in 0..3usize.pow(n as u32) {
            let state: Vec<usize> = (0..n).map(|t| code / 3usize.pow(t as u32) % 3).collect();
            let free: Vec<usize> = (0..n).filter(|&t| state[t] == 2).collect();
            if free.is_empty() {
                continue;
            }
            let mut alpha: Vec<f64> = state
                .iter()
                .map(|&s| if s == 1 { c } else { 0.0 })
                .collect();
            let m = free.len();
            let mut a = vec![vec![0.0; m + 1]; m + 1];
            let mut rhs = vec![0.0; m + 1];
            for (r, &fr) in free.iter().enumerate() {
                for (s, &fs) in free.iter().enumerate() {
                    a[r][s] = q[fr][fs];
                }
                a[r][m] = y[fr];
                a[m][r] = y[fr];
                rhs[r] = 1.0 - (0..n).map(|t| q[fr][t] * alpha[t]).sum::<f64>();
            }
            rhs[m] = -(0..n).map(|t| y[t] * alpha[t]).sum::<f64>();
            let Some(sol) = solve_dense(a, rhs) else {
                continue;
            };
            if sol[..m].iter().any(|&v| !(-1e-12..=c + 1e-12).contains(&v)) {
                continue;
            }
            for (r, &fr) in free.iter().enumerate() {
                alpha[fr] = sol[r];
            }
            let b = sol[m];
            let kkt = (0..n).all(|t| {
                let g = (0..n).map(|s| q[t][s] * alpha[s]).sum::<f64>() - 1.0;
                match state[t] {
                    0 => g + b * y[t] >= -1e-10,
                    1 => g + b * y[t] <= 1e-10,
                    _ => true,
                }
            });
            if kkt {
                return (alpha, -b);
            }
        }
        panic!("no KKT point with a free variable");
    }

    #[test]
    fn kernel_svm_matches_the_exact_dual_solution_on_tiny_problems() {
        let mut solved = 0;
        for (seed, n, c, gamma) in [
            (1, 8, 1.0, 1.0),
            (2, 8, 10.0, 2.0),
            (3, 6, 0.5, 1.0),
            (4, 7, 5.0, 4.0),
        ] {
            let (x, y) = problem(n, seed, 0.2);
            if y.iter().all(|&v| v == y[0]) {
                continue;
            }
            let kern = Gauss::new(x.clone(), gamma);
            let q: Vec<Vec<f64>> = (0..n)
                .map(|i| (0..n).map(|j| y[i] * y[j] * kern.k(&x[i], &x[j])).collect())
                .collect();
            let (alpha, rho) = exact_dual(&q, &y, c);
            let exact_obj = (0..n)
                .map(|i| {
                    0.5 * alpha[i] * (0..n).map(|j| q[i][j] * alpha[j]).sum::<f64>() - alpha[i]
                })
                .sum::<f64>();
            let svc = fit_svc(&kern, &y, &params(c, 1e-8)).unwrap();
            assert!(!svc.reached_cap());
            assert!(
                (svc.objective() - exact_obj).abs() < 1e-6,
                "{} vs {exact_obj}",
                svc.objective()
            );
            let test = problem(20, seed + 100, 0.0).0;
            for p in x.iter().chain(&test) {
                let exact = (0..n)
                    .map(|t| alpha[t] * y[t] * kern.k(&x[t], p))
                    .sum::<f64>()
                    - rho;
                let f = kern.decision(&svc, p);
                assert!(
                    (f - exact).abs() < 1e-4,
                    "seed {seed}: f = {f}, exact {exact}"
                );
            }
            solved += 1;
        }
        assert!(solved >= 3);
    }

    /// linfa-svm 0.8 (LIBSVM's SMO ported, dense kernel matrix, no shrinking): its decision
    /// values at `at` and its summary line ("Exited after N iterations with obj = ...").
    fn linfa_fit(
        x: &[[f64; 2]],
        y: &[f64],
        (c, gamma, eps): (f64, f64, f64),
        at: &[[f64; 2]],
    ) -> (Vec<f64>, String) {
        use linfa::traits::Fit;
        let records = ndarray_016::Array2::from_shape_fn((x.len(), 2), |(i, k)| x[i][k]);
        let targets: ndarray_016::Array1<bool> = y.iter().map(|&v| v > 0.0).collect();
        let model = linfa_svm::Svm::<f64, bool>::params()
            .pos_neg_weights(c, c)
            .gaussian_kernel(1.0 / gamma) // exp(−‖x − x'‖²/ε), ε = 1/γ
            .eps(eps)
            .shrinking(false)
            .fit(&linfa::DatasetBase::new(records, targets))
            .unwrap();
        let f = at
            .iter()
            .map(|p| model.weighted_sum(&ndarray_016::arr1(p)) - model.rho)
            .collect();
        (f, model.to_string())
    }

    #[test]
    fn kernel_svm_agrees_with_linfa_svm() {
        let (x, y) = problem(200, 7, 0.1);
        let test = problem(100, 8, 0.0).0;
        let at: Vec<[f64; 2]> = x.iter().chain(&test).copied().collect();
        for (c, eps) in [(1.0, 1e-3), (10.0, 1e-3), (1.0, 1e-6)] {
            let kern = Gauss::new(x.clone(), 2.0);
            let svc = fit_svc(&kern, &y, &params(c, eps)).unwrap();
            let (theirs, summary) = linfa_fit(&x, &y, (c, 2.0, eps), &at);
            let worst = at
                .iter()
                .zip(&theirs)
                .map(|(p, t)| (kern.decision(&svc, p) - t).abs())
                .fold(0.0, f64::max);
            // Both run the same iterates in f64 (observed: bit-identical), so far tighter than
            // the 1e-3 that two solvers stopping at eps = 1e-3 would need.
            assert!(worst < 1e-9, "C = {c}, eps = {eps}: max |Δf| = {worst}");
            let ours = format!("after {} iterations", svc.iterations());
            assert!(summary.contains(&ours), "linfa: {summary}; ours: {ours}");
        }
    }

    /// Training decision values f(x_i) (through [`Svc::decision`]) and the α of every row.
    fn train_decisions(kern: &Gauss, svc: &Svc) -> (Vec<f64>, Vec<f64>) {
        let mut alpha = vec![0.0; kern.n()];
        for (&s, &a) in svc.support().iter().zip(svc.coefficients()) {
            alpha[s] = a.abs();
        }
        (
            kern.x.iter().map(|p| kern.decision(svc, p)).collect(),
            alpha,
        )
    }

    #[test]
    fn kernel_svm_solution_meets_the_kkt_conditions_within_eps() {
        let (x, y) = problem(300, 11, 0.15);
        let kern = Gauss::new(x, 3.0);
        for eps in [1e-3, 1e-5] {
            let c = 2.0;
            let svc = fit_svc(&kern, &y, &params(c, eps)).unwrap();
            assert!(!svc.reached_cap());
            let (f, alpha) = train_decisions(&kern, &svc);
            let (mut free, mut at_c) = (0, 0);
            let tol = eps + 1e-9;
            for i in 0..y.len() {
                let margin = y[i] * f[i];
                assert!((0.0..=c).contains(&alpha[i]));
                if alpha[i] == 0.0 {
                    assert!(margin >= 1.0 - tol, "row {i}: α = 0, y f = {margin}");
                } else if alpha[i] == c {
                    at_c += 1;
                    assert!(margin <= 1.0 + tol, "row {i}: α = C, y f = {margin}");
                } else {
                    free += 1;
                    assert!((margin - 1.0).abs() <= tol, "row {i}: free, y f = {margin}");
                }
            }
            // yᵀα = 0.
            let balance: f64 = svc.coefficients().iter().sum();
            assert!(balance.abs() < 1e-9, "yᵀα = {balance}");
            assert!(free > 0 && at_c > 0, "free {free}, at C {at_c}");
        }
    }

    #[test]
    fn kernel_svm_small_cache_gives_identical_bits() {
        let (x, y) = problem(120, 21, 0.1);
        let n = x.len();
        let unbounded = Gauss::new(x.clone(), 2.0);
        let small = Gauss::new(x, 2.0);
        let unbounded_cache = SvcParams {
            cache_bytes: usize::MAX,
            ..params(5.0, 1e-3)
        };
        let three_rows = SvcParams {
            cache_bytes: 3 * 8 * n,
            ..unbounded_cache
        };
        let a = fit_svc(&unbounded, &y, &unbounded_cache).unwrap();
        let b = fit_svc(&small, &y, &three_rows).unwrap();
        let bits = |s: &Svc| {
            let mut v: Vec<u64> = s.coefficients().iter().map(|a| a.to_bits()).collect();
            v.extend([
                s.rho().to_bits(),
                s.objective().to_bits(),
                s.iterations() as u64,
            ]);
            v
        };
        assert_eq!(a.support(), b.support());
        assert_eq!(bits(&a), bits(&b));
        // The unbounded cache computes each row at most once; three rows must recompute.
        let (ra, rb) = (
            unbounded.rows.load(Ordering::Relaxed),
            small.rows.load(Ordering::Relaxed),
        );
        assert!(
            ra <= n && rb > ra,
            "rows computed: unbounded {ra}, small {rb}"
        );
    }

    #[test]
    fn kernel_svm_separates_separable_data() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..80 {
            let centre = if i % 2 == 0 { 1.0 } else { -1.0 };
            x.push([
                centre + rng.random_range(-0.8..0.8),
                centre + rng.random_range(-0.8..0.8),
            ]);
            y.push(centre);
        }
        let kern = Gauss::new(x, 0.5);
        let svc = fit_svc(&kern, &y, &params(1e6, 1e-3)).unwrap();
        assert!(!svc.reached_cap());
        let (f, _) = train_decisions(&kern, &svc);
        assert!(
            f.iter().zip(&y).all(|(f, y)| f * y > 0.0),
            "a training point misclassified"
        );
        // Hard margin: every y f ≥ 1 − eps.
        assert!(f.iter().zip(&y).all(|(f, y)| f * y >= 1.0 - 1e-3 - 1e-9));
    }

    #[test]
    fn kernel_svm_is_deterministic_across_thread_counts_and_caps_iterations() {
        let (x, y) = problem(150, 31, 0.1);
        let kern = Gauss::new(x, 2.0);
        let fit = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| fit_svc(&kern, &y, &SvcParams::default()).unwrap())
        };
        assert_eq!(fit(1), fit(4));
        let five = SvcParams {
            max_iterations: Some(5),
            ..SvcParams::default()
        };
        let capped = fit_svc(&kern, &y, &five).unwrap();
        assert!(capped.reached_cap());
        assert_eq!(capped.iterations(), 5);
        assert!(!fit(2).reached_cap());
    }

    /// A kernel with one non-finite entry, in the diagonal or off it.
    struct Broken {
        bad_diagonal: bool,
    }

    impl KernelRows for Broken {
        fn n(&self) -> usize {
            4
        }
        fn row(&self, i: usize, out: &mut [f64]) {
            for (j, o) in out.iter_mut().enumerate() {
                *o = [0.1, 1.0, f64::NAN][usize::from(i == j) + 2 * usize::from(i + j == 3)];
            }
        }
        fn diagonal(&self, i: usize) -> f64 {
            [1.0, f64::INFINITY][usize::from(self.bad_diagonal && i == 2)]
        }
    }

    /// Whether `result` is the error `variant`.
    macro_rules! is_err {
        ($result:expr, $variant:ident) => {
            matches!($result, Err(CoreError::$variant { .. }))
        };
    }

    #[test]
    fn kernel_svm_rejects_bad_input() {
        let (x, y) = problem(10, 41, 0.0);
        let kern = Gauss::new(x, 1.0);
        let ok = SvcParams::default();
        assert!(fit_svc(&kern, &y, &ok).is_ok());
        let capped_at_zero = SvcParams {
            max_iterations: Some(0),
            ..ok
        };
        let bad = [0.0, -1.0, f64::NAN, f64::INFINITY].map(|c| params(c, 1e-3));
        let bad = bad
            .into_iter()
            .chain([params(1.0, 0.0), params(1.0, -1e-3), capped_at_zero]);
        for p in bad {
            assert!(is_err!(fit_svc(&kern, &y, &p), InvalidParameter), "{p:?}");
        }
        // Labels: wrong length, not ±1, one class.
        assert!(is_err!(fit_svc(&kern, &y[..9], &ok), ShapeMismatch));
        for bad in [0.0, 2.0, f64::NAN] {
            let mut z = y.clone();
            z[3] = bad;
            assert!(is_err!(fit_svc(&kern, &z, &ok), InvalidInput));
        }
        assert!(is_err!(fit_svc(&kern, &[1.0; 10], &ok), InvalidInput));
        assert!(is_err!(fit_svc(&kern, &[-1.0; 10], &ok), InvalidInput));
        // n = 0.
        let empty = Gauss::new(Vec::new(), 1.0);
        assert!(is_err!(fit_svc(&empty, &[], &ok), EmptyInput));
        // Non-finite kernel values, on the diagonal or in a row.
        for bad_diagonal in [true, false] {
            let r = fit_svc(&Broken { bad_diagonal }, &[1.0, -1.0, 1.0, -1.0], &ok);
            assert!(is_err!(r, NonFiniteInput), "{r:?}");
        }
        // decision with the wrong number of kernel values.
        let svc = fit_svc(&kern, &y, &ok).unwrap();
        assert!(is_err!(
            svc.decision(&vec![0.5; svc.support().len() + 1]),
            ShapeMismatch
        ));
    }
}
