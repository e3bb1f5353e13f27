//! Learners on the Mondrian features of a sweep (Balog et al. 2016, Sec. 4-5; spec §4.3-4.4).
//!
//! * [`KernelRidgeSweep`]: ridge regression on the Mondrian kernel features `Z = A/√M`,
//!   `(ZᵀZ + δI) w = Zᵀỹ`, solved as `(AᵀA + MδI) v = Aᵀỹ` (`w = √M v`, predictions `A v`) by
//!   Cholesky while at most [`DENSE_BELOW`] columns are active, then by preconditioned CG
//!   warm-started across lifetimes: a split copies the parent's weight
//!   to both children, which leaves every prediction unchanged. Leaves without training points
//!   have weight exactly 0.
//! * [`KernelSgdSweep`]: the authors' learner (spec §4.2): one epoch of scikit-learn 0.17's
//!   SGD on `Z` per sweep event, warm-started (children inherit the parent's weight), penalty
//!   α = δ (ridge-equivalent penalty N·α). Under-converged by design: it regularises like early
//!   stopping, which is what the published kernel curves of Figs. 7-10 show.
//! * [`forest_fit`]: the paper's "Mondrian forest": each tree fitted alone (ridge on its own
//!   leaf indicators with penalty δ/M on `1/√M` features), i.e. shrunk leaf means
//!   `T_m(x) = S_ℓ/(n_ℓ + δ)`, averaged over trees.

use kernel_core::cg::{jacobi, preconditioned_conjugate_gradient, CgReport};
use kernel_core::error::{at_least_one, positive};
use kernel_core::one_hot::OneHotFeatures;
use kernel_core::ridge::solve_positive_definite;
use kernel_core::sgd::{OneHotRows, Rows, ScaledWeights, Sgd};
use ndarray::{Array1, ArrayView1};
use rand::Rng;

use crate::error::MondrianError;
use crate::sweep::{SweepEvent, SweepState};

/// Preconditioner of the ridge CG solves.
///
/// Measured on the Fig. 9 sweep (CPU, M = 50, δ = 1e-4, 99 checkpoints, cap 1000): Jacobi
/// 51,169 iterations in all, 44 solves capped, worst relative residual 1.0e-4, 31 s on one
/// core; Gauss-Seidel 46,695 iterations, 35 capped, worst residual 8.3e-6, 83 s. The system is
/// ill-conditioned by near-collinearity across trees (δ tiny), which block Gauss-Seidel does not
/// cure: it buys accuracy, not speed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Preconditioner {
    /// The diagonal (leaf counts + penalty): the spec's suggestion.
    #[default]
    Jacobi,
    /// Symmetric block Gauss-Seidel over the trees (backfitting forward then backward), about
    /// twice the work of a Jacobi iteration.
    GaussSeidel,
}

/// Ridge on the Mondrian kernel features along a sweep, with warm starts.
#[derive(Debug, Clone)]
pub struct KernelRidgeSweep {
    /// `v` of every global column (unscaled parametrisation).
    weights: Vec<f64>,
    delta: f64,
    rel_tol: f64,
    max_iter: usize,
    preconditioner: Preconditioner,
    /// Systems with at most this many active columns are solved directly (Cholesky).
    dense_below: usize,
}

/// Active columns up to which [`KernelRidgeSweep`] solves by Cholesky (spec §4.4: below about
/// 3k columns a dense factorisation is cheaper than CG, and exact).
pub const DENSE_BELOW: usize = 3000;

/// One fit of [`KernelRidgeSweep`].
#[derive(Debug, Clone)]
pub struct KernelFit {
    /// `A v` for every row (add ȳ for predictions).
    pub centred_predictions: Array1<f64>,
    pub cg: CgReport,
    /// `‖r‖ / ‖Aᵀỹ‖` at the end of the solve.
    pub relative_residual: f64,
    /// Columns in the solve (leaves holding training points).
    pub active_columns: usize,
    /// Solved by Cholesky (`cg` then reports no iterations), not CG.
    pub direct: bool,
}

impl KernelRidgeSweep {
    /// `n_columns` global columns, ridge penalty δ > 0, CG tolerance `‖r‖ <= rel_tol·‖Aᵀỹ‖`
    /// (`rel_tol` > 0), at most `max_iter` ≥ 1 CG iterations per solve.
    pub fn new(
        n_columns: usize,
        delta: f64,
        rel_tol: f64,
        max_iter: usize,
    ) -> Result<Self, MondrianError> {
        Self::check_settings(delta, rel_tol, max_iter)?;
        Ok(Self {
            weights: vec![0.0; n_columns],
            delta,
            rel_tol,
            max_iter,
            preconditioner: Preconditioner::default(),
            dense_below: DENSE_BELOW,
        })
    }

    /// The domains of the settings of [`Self::new`], named as configs name them (`delta`,
    /// `cg_tolerance`, `cg_max_iterations`).
    pub fn check_settings(delta: f64, rel_tol: f64, max_iter: usize) -> Result<(), MondrianError> {
        positive("delta", delta)?;
        positive("cg_tolerance", rel_tol)?;
        at_least_one("cg_max_iterations", max_iter)?;
        Ok(())
    }

    /// The same learner solving systems of at most `columns` active columns by Cholesky
    /// (0: always CG).
    pub fn with_dense_below(mut self, columns: usize) -> Self {
        self.dense_below = columns;
        self
    }

    /// The same learner with another CG preconditioner.
    pub fn with_preconditioner(mut self, preconditioner: Preconditioner) -> Self {
        self.preconditioner = preconditioner;
        self
    }

    /// Children inherit their parent's weight (predictions unchanged).
    pub fn inherit(&mut self, events: &[SweepEvent]) {
        for e in events {
            let w = self.weights[e.parent as usize];
            self.weights[e.left as usize] = w;
            self.weights[e.right as usize] = w;
            self.weights[e.parent as usize] = 0.0;
        }
    }

    /// Solves the ridge system on the current features; rows `0..n_train` are training rows
    /// with centred targets `y_centred`.
    pub fn fit(
        &mut self,
        features: &OneHotFeatures,
        n_train: usize,
        y_centred: ArrayView1<f64>,
    ) -> KernelFit {
        let m = features.n_blocks() as f64;
        let penalty = m * self.delta;
        let compact = features
            .compact_columns(0..n_train)
            .expect("sweep columns are block-ordered");
        let n = compact.len();
        let rhs = features.transpose_times(0..n_train, y_centred, &compact);
        let diag: Vec<f64> = features
            .column_counts(0..n_train, &compact)
            .into_iter()
            .map(|c| c + penalty)
            .collect();
        // Warm start from the stored weights; leaves without training points are left out of
        // the solve (their weight is 0, and so is that of their descendants, which hold no
        // training points either).
        let global_of = compact.original_columns();
        let mut v: Vec<f64> = global_of
            .iter()
            .map(|&g| self.weights[g as usize])
            .collect();
        let operator = features.normal_operator(0..n_train, &compact);
        // Cholesky for small systems (the factorisation cannot fail for penalty > 0; if it did,
        // CG from the warm start takes over).
        let direct = n <= self.dense_below && {
            let mut gram = features.gram(0..n_train, &compact);
            gram.diag_mut().mapv_inplace(|d| d + penalty);
            solve_positive_definite(gram, rhs.clone())
                .map(|solution| v.copy_from_slice(solution.as_slice().expect("contiguous")))
                .is_ok()
        };
        let cg = if direct {
            let mut residual = vec![0.0; n];
            operator.apply(&v, penalty, &mut residual);
            let norm = residual
                .iter()
                .zip(rhs.iter())
                .map(|(a, b)| (b - a) * (b - a))
                .sum::<f64>()
                .sqrt();
            CgReport {
                iterations: 0,
                residual_norm: norm,
                converged: true,
            }
        } else {
            preconditioned_conjugate_gradient(
                |x, out| operator.apply(x, penalty, out),
                |r, z| match self.preconditioner {
                    Preconditioner::Jacobi => jacobi(r, &diag, z),
                    Preconditioner::GaussSeidel => operator.symmetric_gauss_seidel(r, &diag, z),
                },
                rhs.as_slice().expect("contiguous"),
                &mut v,
                self.rel_tol,
                self.max_iter,
            )
        };
        // Leaves without training points may hold a weight inherited from their parent: zero
        // every weight, then store the solution of the active ones.
        self.weights.fill(0.0);
        for (a, &g) in global_of.iter().enumerate() {
            self.weights[g as usize] = v[a];
        }
        let centred_predictions = features.times_prefix(
            0..features.n_rows(),
            ArrayView1::from(&v),
            &compact,
            features.n_blocks(),
        );
        let rhs_norm = rhs.dot(&rhs).sqrt();
        KernelFit {
            centred_predictions,
            cg,
            relative_residual: if rhs_norm > 0.0 {
                cg.residual_norm / rhs_norm
            } else {
                0.0
            },
            active_columns: n,
            direct,
        }
    }

    /// `w = √M v` of the given global columns after the last [`Self::fit`] (the paper's
    /// parametrisation: prediction `ȳ + Σ_m w_ℓm / √M`); 0 for leaves without training points.
    pub fn paper_weights(&self, columns: &[u32], n_mondrians: usize) -> Vec<f64> {
        let s = (n_mondrians as f64).sqrt();
        columns
            .iter()
            .map(|&c| s * self.weights[c as usize])
            .collect()
    }
}

/// The authors' sweep learner: one SGD epoch per event on the Mondrian features `Z = A/√M`.
#[derive(Debug, Clone)]
pub struct KernelSgdSweep {
    /// `w` of every global column (the paper's parametrisation: prediction `ȳ + Z w`).
    weights: ScaledWeights,
    sgd: Sgd,
    /// The learning rates of one epoch (the same at every event).
    etas: Vec<f64>,
}

impl KernelSgdSweep {
    /// `n_columns` global columns, all weights 0, L2 penalty α (the authors pass δ as α).
    pub fn new(n_columns: usize, alpha: f64) -> Self {
        Self {
            weights: ScaledWeights::zeros(n_columns),
            sgd: Sgd::sklearn_0_17(alpha),
            etas: Vec::new(),
        }
    }

    /// Children inherit their parent's weight, the parent is zeroed (predictions unchanged).
    pub fn inherit(&mut self, events: &[SweepEvent]) {
        for e in events {
            self.weights.copy(e.parent as usize, e.left as usize);
            self.weights.copy(e.parent as usize, e.right as usize);
            self.weights.set(e.parent as usize, 0.0);
        }
    }

    /// One `fit` call of one epoch over the training rows `0..n_train` (centred targets), rows
    /// shuffled by `rng`, the learning-rate schedule restarting.
    pub fn epoch(
        &mut self,
        state: &SweepState,
        n_train: usize,
        y_centred: ArrayView1<f64>,
        rng: &mut impl Rng,
    ) {
        let rows = Self::rows(state, n_train);
        if self.etas.len() != n_train {
            self.etas = self.sgd.schedule(n_train);
        }
        self.sgd
            .fit_scheduled(&mut self.weights, &rows, y_centred, &self.etas, Some(rng));
    }

    /// `Z w` for every point of the sweep (add ȳ for predictions).
    pub fn centred_predictions(&self, state: &SweepState) -> Array1<f64> {
        let rows = Self::rows(state, state.n_points());
        (0..rows.n_rows())
            .map(|i| self.weights.predict(&rows, i))
            .collect()
    }

    /// `w` of the given global columns (prediction `ȳ + Σ_m w_ℓm / √M`). Leaves without training
    /// points keep their inherited, shrinking weight, as in the authors' code.
    pub fn paper_weights(&self, columns: &[u32]) -> Vec<f64> {
        columns
            .iter()
            .map(|&c| self.weights.get(c as usize))
            .collect()
    }

    fn rows(state: &SweepState, n_rows: usize) -> OneHotRows<'_> {
        state.sgd_rows(n_rows, 1.0 / (state.n_trees() as f64).sqrt())
    }
}

/// The kernel model of a sweep, by either learner.
#[derive(Debug, Clone)]
pub enum SweepLearner {
    /// Exact ridge, solved at each lifetime asked for.
    Ridge(KernelRidgeSweep),
    /// The authors' SGD: one epoch after every event, rows shuffled by the generator.
    Sgd(KernelSgdSweep, Box<rand_chacha::ChaCha8Rng>),
}

/// The kernel model at one lifetime of a sweep.
#[derive(Debug, Clone)]
pub struct SweepFit {
    /// `Z w` for every point (add ȳ for predictions).
    pub centred_predictions: Array1<f64>,
    /// The ridge solve (learner `Ridge` only).
    pub ridge: Option<KernelFit>,
    /// Indices of the events this advance applied.
    pub events: std::ops::Range<usize>,
}

impl SweepLearner {
    /// Applies every event with time `<= lifetime` to `state` and updates the model: `Ridge`
    /// inherits the weights and solves once at `lifetime`; `Sgd` inherits and runs one epoch
    /// after each event. Rows `0..n_train` are the training rows, `y_centred` their targets.
    pub fn advance(
        &mut self,
        forest: &crate::MondrianForest,
        events: &[SweepEvent],
        state: &mut SweepState,
        lifetime: f64,
        n_train: usize,
        y_centred: ArrayView1<f64>,
    ) -> SweepFit {
        match self {
            SweepLearner::Ridge(ridge) => {
                let applied = state.advance_to(forest, events, lifetime);
                ridge.inherit(&events[applied.clone()]);
                let fit = ridge.fit(&state.features(), n_train, y_centred);
                SweepFit {
                    centred_predictions: fit.centred_predictions.clone(),
                    ridge: Some(fit),
                    events: applied,
                }
            }
            SweepLearner::Sgd(sgd, rng) => {
                let first = state.applied();
                while events
                    .get(state.applied())
                    .is_some_and(|e| e.time <= lifetime)
                {
                    let k = state.step(forest, events).expect("an event is pending");
                    sgd.inherit(&events[k..=k]);
                    sgd.epoch(state, n_train, y_centred, rng.as_mut());
                }
                SweepFit {
                    centred_predictions: sgd.centred_predictions(state),
                    ridge: None,
                    events: first..state.applied(),
                }
            }
        }
    }

    /// The weights of the given global columns in the paper's parametrisation (prediction
    /// `ȳ + Σ_m w_ℓm / √M`).
    pub fn paper_weights(&self, columns: &[u32], n_mondrians: usize) -> Vec<f64> {
        match self {
            SweepLearner::Ridge(ridge) => ridge.paper_weights(columns, n_mondrians),
            SweepLearner::Sgd(sgd, _) => sgd.paper_weights(columns),
        }
    }
}

/// The "Mondrian forest" of the paper at the current features.
#[derive(Debug, Clone)]
pub struct ForestFit {
    /// `(1/M) Σ_m T_m(x)` for every row (add ȳ for predictions).
    pub centred_predictions: Array1<f64>,
    /// `(global column, S_ℓ/(n_ℓ + δ))` for every current leaf of every tree, tree by tree.
    pub leaf_values: Vec<(u32, f64)>,
}

/// A leaf's value `S_ℓ/(n_ℓ + δ)` (0 for a leaf without training points).
fn leaf_value(sum: f64, count: f64, delta: f64) -> f64 {
    sum / (count + delta)
}

/// `(1/M) Σ_m T_m(x)` of a row of M leaf columns.
fn row_prediction(row: &[u32], values: &[f64]) -> f64 {
    row.iter().map(|&c| values[c as usize]).sum::<f64>() / row.len() as f64
}

/// Every column's `S_ℓ/(n_ℓ + δ)` from the training rows `0..n_train` (0 for columns without
/// training points), and every row's `(1/M) Σ_m T_m(x)`.
fn leaf_values_and_predictions(
    features: &OneHotFeatures,
    n_train: usize,
    y_centred: ArrayView1<f64>,
    delta: f64,
) -> (Vec<f64>, Array1<f64>) {
    let n_columns = features.n_columns();
    let (mut sums, mut counts) = (vec![0.0; n_columns], vec![0.0; n_columns]);
    for i in 0..n_train {
        for &c in features.row(i) {
            sums[c as usize] += y_centred[i];
            counts[c as usize] += 1.0;
        }
    }
    let values: Vec<f64> = sums
        .iter()
        .zip(&counts)
        .map(|(&s, &n)| leaf_value(s, n, delta))
        .collect();
    let predictions = (0..features.n_rows())
        .map(|i| row_prediction(features.row(i), &values))
        .collect();
    (values, predictions)
}

/// Fits every tree alone: leaf value `S_ℓ/(n_ℓ + δ)` from the training rows `0..n_train`;
/// leaves without training points predict 0.
pub fn forest_fit(
    features: &OneHotFeatures,
    n_train: usize,
    y_centred: ArrayView1<f64>,
    delta: f64,
) -> ForestFit {
    let (values, centred_predictions) =
        leaf_values_and_predictions(features, n_train, y_centred, delta);
    let mut leaves: Vec<(usize, u32)> = (0..features.n_rows())
        .flat_map(|i| features.row(i).iter().copied().enumerate())
        .collect();
    leaves.sort_unstable();
    leaves.dedup();
    ForestFit {
        centred_predictions,
        leaf_values: leaves
            .into_iter()
            .map(|(_, c)| (c, values[c as usize]))
            .collect(),
    }
}

/// The "Mondrian forest" along a sweep, updated split by split: a split of leaf ℓ into two
/// children computes the children's `S/(n + δ)` from their own points and recomputes the
/// prediction of the points of ℓ only, so an update costs `O(|ℓ| · M)`, not `O(N · M)`. At every
/// lifetime the predictions are bit-identical to [`forest_fit`] on the sweep's features (the same
/// additions in the same order: a leaf's training targets in increasing row order).
#[derive(Debug, Clone)]
pub struct SweepForest {
    delta: f64,
    n_train: usize,
    /// `S_ℓ/(n_ℓ + δ)` of every global column (0 for leaves without training points).
    values: Vec<f64>,
    /// `(1/M) Σ_m T_m(x_i)` for every point.
    predictions: Array1<f64>,
    /// Whether a point is in `moved` (scratch).
    dirty: Vec<bool>,
    /// The points whose prediction an update must recompute, each once (scratch).
    moved: Vec<u32>,
    /// The points of one child, sorted (scratch).
    points: Vec<u32>,
}

impl SweepForest {
    /// The forest at the sweep's current lifetime; rows `0..n_train` are the training rows with
    /// centred targets `y_centred`.
    pub fn new(state: &SweepState, n_train: usize, y_centred: ArrayView1<f64>, delta: f64) -> Self {
        let (values, predictions) =
            leaf_values_and_predictions(&state.features(), n_train, y_centred, delta);
        Self {
            delta,
            n_train,
            values,
            predictions,
            dirty: vec![false; state.n_points()],
            moved: Vec::new(),
            points: Vec::new(),
        }
    }

    /// Applies `events`, which `state` has just applied (in order), to the leaf values and
    /// recomputes the predictions of the points they moved.
    pub fn update(
        &mut self,
        forest: &crate::MondrianForest,
        events: &[SweepEvent],
        state: &SweepState,
        y_centred: ArrayView1<f64>,
    ) {
        for e in events {
            let tree = &forest.trees()[e.tree];
            for (node, column) in [(e.left_node, e.left), (e.right_node, e.right)] {
                // forest_fit adds in increasing row order; a node's points are in increasing
                // order only while it is a leaf of the terminal tree, so sort them.
                self.points.clear();
                self.points.extend_from_slice(tree.points_of(node));
                self.points.sort_unstable();
                let (mut sum, mut count) = (0.0, 0.0);
                for &i in &self.points {
                    if !std::mem::replace(&mut self.dirty[i as usize], true) {
                        self.moved.push(i);
                    }
                    let i = i as usize;
                    if i < self.n_train {
                        sum += y_centred[i];
                        count += 1.0;
                    }
                }
                self.values[column as usize] = leaf_value(sum, count, self.delta);
            }
        }
        let m = state.n_trees();
        let leaves = state.leaf_ids();
        for i in self.moved.drain(..) {
            let i = i as usize;
            self.dirty[i] = false;
            self.predictions[i] = row_prediction(&leaves[i * m..(i + 1) * m], &self.values);
        }
    }

    /// `(1/M) Σ_m T_m(x)` for every point (add ȳ for predictions).
    pub fn centred_predictions(&self) -> ArrayView1<'_, f64> {
        self.predictions.view()
    }
}
