//! The paper's comparison methods (spec §6, §8): BL, LR, SVM and RF.
//!
//! The settings of the baselines are not stated in the available sources; spec §8 recommends
//! the ones used here, and [`Baseline::paper`] lists them:
//!
//! * **BL** ([`Baseline::ModeLabel`]): predict the most frequent training label (ties → the
//!   lowest label index).
//! * **LR** ([`Baseline::Logistic`]): L2-regularised logistic regression with C = 1.
//! * **SVM** ([`Baseline::Svm`]): RBF kernel `exp(−γ‖x − x'‖²)`, γ = 1/d, C = 1.
//! * **RF** ([`Baseline::RandomForest`]): 500 trees, mtry = ⌊√d⌋, bootstrap samples, Gini
//!   impurity, fully grown trees (split until pure), majority vote.
//!
//! # The crates: smartcore and linfa-svm
//!
//! LR and RF are those of [`smartcore`] 0.7 (pure Rust, no BLAS; built with
//! `default-features = false`, so without its ndarray bindings and serde); the SVM is that of
//! [`linfa_svm`] 0.8 (rust-ml/linfa), a port of LIBSVM's SMO solver. Data are copied into
//! smartcore's row-major `DenseMatrix` or linfa's ndarray-0.16 arrays; labels are mapped to
//! the classes present in the training split, and back.
//!
//! * **LR**: smartcore minimises `Σᵢ logloss(yᵢ, xᵢ·w + b) + ½·α·‖w‖²` by L-BFGS (intercept not
//!   penalised; binary: one weight vector with the sigmoid; more classes: the multinomial
//!   softmax with one weight vector per class, all of them penalised). scikit-learn's `C` (and
//!   LIBLINEAR's) weighs the data term instead, `C·Σᵢ logloss + ½‖w‖²`; dividing by C gives the
//!   same minimiser with **α = 1/C**, so C = 1 is α = 1, the objective *sum of log-losses +
//!   ½‖w‖²* (not the mean). This is scikit-learn's `LogisticRegression(C=1)` with its lbfgs
//!   solver (multinomial for more than two classes, unpenalised intercept). L-BFGS stops after
//!   1,000 iterations or when the gradient is below 1e-8; [`logistic_fit`] returns the fitted
//!   coefficients so that the optimum can be checked (the tests compare it with a Newton
//!   solution of the same objective).
//! * **SVM**: the C-SVM dual `min ½αᵀQα − eᵀα, yᵀα = 0, 0 ≤ αᵢ ≤ C` solved by linfa-svm's SMO
//!   (LIBSVM's working-set selection; stopping tolerance 1e-3 as in LIBSVM and scikit-learn;
//!   no shrinking; the dense kernel matrix of the training rows). Kernel `exp(−γ‖x − x'‖²)`,
//!   given to linfa as its Gaussian kernel `exp(−‖x − x'‖²/ε)` with **ε = 1/γ**; γ = 1/d with d
//!   the number of input columns (scikit-learn's `gamma = "auto"`, e1071's default). The
//!   solver is deterministic, so the SVM ignores the seed. Binary only in linfa: more than two
//!   classes are handled by **one-vs-one voting as in LIBSVM**, one binary SVM per pair of
//!   classes present in training, each fitted on the rows of its two classes (pairs in
//!   parallel); the class with most votes wins, ties → the lowest label index (LIBSVM's rule
//!   too). A decision value of exactly 0 votes for the lower label of the pair.
//!   smartcore's `SVC` was tried first and rejected: it is the approximate online LASVM
//!   solver, and its kernel cache (a `HashMap` that grows towards (support vectors)² entries
//!   and is swept in full after every step) made a fit take 29 s on a 3,000 × 57 two-class
//!   problem, against 0.9 s here with the same accuracy; its `MultiClassSVC` also breaks vote
//!   ties through a `HashMap`, not deterministically.
//! * **RF**: smartcore's `RandomForestClassifier`: Gini, `min_samples_leaf = 1`,
//!   `min_samples_split = 2`, no depth limit (fully grown), mtry features drawn afresh at each
//!   node, hard majority vote over the trees (ties → the lowest label index), as R's
//!   `randomForest` (scikit-learn averages probabilities instead). Its bootstrap is
//!   **stratified**: each class is resampled with replacement to its own training count
//!   (R's `randomForest(strata = y, sampsize = table(y))`), not a plain bootstrap of all rows;
//!   smartcore offers no other bootstrap for classification, and class proportions of the
//!   paper-sized sets are thereby kept exactly in every tree. The trees are fitted in parallel
//!   (rayon), each as a one-tree smartcore forest with its own seed derived from `(seed, tree
//!   index)`; the votes are integer counts, so the result does not depend on the number of
//!   threads.
//!
//! # Inputs
//!
//! [`Baseline`] is a [`Classifier`]: its `fit_predict` validates everything before either crate
//! sees it and returns a
//! [`RtfError`] for bad input (no rows, label count ≠ rows, a label ≥ `n_classes`, NaN or
//! infinite values, train and test widths differing, invalid settings). Degenerate but valid
//! problems still get an answer: with a **single class** in the training split, or with **no
//! feature columns**, every method predicts the training mode, which is what each model
//! reduces to there (no boundary to fit; with no features LR is intercept-only, whose argmax
//! is the mode, and an RF tree is a single leaf). The solver calls are also wrapped in
//! `catch_unwind`, so a panic inside either crate surfaces as [`CoreError::Solve`] (in [`RtfError::Core`]).
//!
//! Determinism: for a given seed the predictions are the same on every run and for every
//! number of threads (LR and SVM use no randomness; RF seeds each tree). smartcore draws from
//! rand's `SmallRng`, whose stream is fixed for the locked crate version, not promised across
//! rand releases.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use linfa::traits::Fit;
use linfa_svm::Svm;
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;
use smartcore::ensemble::random_forest_classifier::{
    RandomForestClassifier, RandomForestClassifierParameters,
};
use smartcore::linalg::basic::arrays::Array;
use smartcore::linalg::basic::matrix::DenseMatrix;
use smartcore::linear::logistic_regression::{LogisticRegression, LogisticRegressionParameters};

use kernel_core::{Classifier, CoreError, LabelledRows};

use crate::error::{invalid, RtfError};
use crate::input::{check_columns, check_finite, check_labelled, Columns};

/// A comparison method of the paper and its settings.
#[derive(Debug, Clone, PartialEq)]
pub enum Baseline {
    /// BL: the training mode label (ties → the lowest label index).
    ModeLabel,
    /// LR: L2-regularised logistic regression, `C·Σ logloss + ½‖w‖²` (see the module docs).
    Logistic {
        /// Inverse regularisation strength, finite and > 0 (the paper setting is 1).
        c: f64,
    },
    /// SVM: C-SVM with the RBF kernel `exp(−γ‖x − x'‖²)`, one-vs-one for more than two classes.
    Svm {
        /// Box constraint C, finite and > 0 (the paper setting is 1).
        c: f64,
        /// Kernel width γ, finite and > 0; `None`: 1/d.
        gamma: Option<f64>,
    },
    /// RF: bootstrap, Gini, fully grown trees, majority vote.
    RandomForest {
        /// Number of trees, at least 1 (the paper setting is 500).
        trees: usize,
        /// Features tried at each node, in 1..=d; `None`: ⌊√d⌋ (at least 1).
        mtry: Option<usize>,
    },
}

impl Baseline {
    /// The four baselines with the settings of spec §8, in the paper's column order:
    /// BL, LR (C = 1), SVM (RBF, γ = 1/d, C = 1), RF (500 trees, mtry = ⌊√d⌋).
    pub fn paper() -> [Baseline; 4] {
        [
            Baseline::ModeLabel,
            Baseline::Logistic { c: 1.0 },
            Baseline::Svm {
                c: 1.0,
                gamma: None,
            },
            Baseline::RandomForest {
                trees: 500,
                mtry: None,
            },
        ]
    }

    /// The method's name in the paper's tables: "BL", "LR", "SVM" or "RF".
    pub fn name(&self) -> &'static str {
        match self {
            Baseline::ModeLabel => "BL",
            Baseline::Logistic { .. } => "LR",
            Baseline::Svm { .. } => "SVM",
            Baseline::RandomForest { .. } => "RF",
        }
    }
}

impl Classifier for Baseline {
    type Output = Vec<u32>;
    type Error = RtfError;

    /// Fits the baseline on `train` (labels in `0..n_classes`) and predicts the rows of
    /// `test`. Deterministic for a given `seed` (only RF uses it). See the module docs for the
    /// settings, the degenerate cases (a single training class, no columns) and the errors.
    fn fit_predict(
        &self,
        train: LabelledRows<'_>,
        test: ArrayView2<f64>,
        seed: u64,
    ) -> Result<Vec<u32>, RtfError> {
        fit_predict(self, train.x, train.labels, train.n_classes, test, seed)
    }
}

fn fit_predict(
    baseline: &Baseline,
    train: ArrayView2<f64>,
    labels: &[u32],
    n_classes: usize,
    test: ArrayView2<f64>,
    seed: u64,
) -> Result<Vec<u32>, RtfError> {
    let d = train.ncols();
    validate_settings(baseline, d)?;
    let problem = Problem::new(train, labels, n_classes, Some(test), Columns::Any)?;
    if test.nrows() == 0 {
        return Ok(Vec::new());
    }
    if problem.classes.len() < 2 || d == 0 {
        return Ok(vec![problem.mode; test.nrows()]);
    }
    let predicted = match baseline {
        Baseline::ModeLabel => return Ok(vec![problem.mode; test.nrows()]),
        Baseline::Logistic { c } => {
            return Ok(fit_logistic_checked(&problem, train, *c)?.predict_unchecked(test));
        }
        Baseline::Svm { c, gamma } => {
            let gamma = gamma.unwrap_or(1.0 / d as f64);
            svm_one_vs_one(&problem, train, test, *c, gamma)?
        }
        Baseline::RandomForest { trees, mtry } => {
            let mtry = mtry.unwrap_or_else(|| default_mtry(d));
            random_forest(&problem, train, test, *trees, mtry, seed)?
        }
    };
    Ok(predicted.into_iter().map(|k| problem.classes[k]).collect())
}

/// ⌊√d⌋, at least 1: the default mtry of [`Baseline::RandomForest`].
pub fn default_mtry(d: usize) -> usize {
    let mut r = (d as f64).sqrt().floor() as usize;
    // Guard the float rounding at perfect squares.
    while r * r > d {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= d {
        r += 1;
    }
    r.max(1)
}

/// The training mode label of `labels` (values in `0..n_classes`; ties → the lowest label);
/// `None` for an empty slice or a label out of range.
pub fn mode_label(labels: &[u32], n_classes: usize) -> Option<u32> {
    let mut counts = BTreeMap::<u32, usize>::new();
    for &l in labels {
        if l as usize >= n_classes {
            return None;
        }
        *counts.entry(l).or_default() += 1;
    }
    let per_class: Vec<usize> = counts.values().copied().collect();
    argmax_lowest(&per_class).and_then(|k| counts.keys().nth(k).copied())
}

/// An L2-regularised logistic regression fitted by smartcore (objective in the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct LogisticFit {
    /// The labels present in training, ascending.
    pub classes: Vec<u32>,
    /// Binary: one row, the weights of the log-odds of `classes[1]` against `classes[0]`;
    /// more classes: one row of softmax weights per entry of `classes`.
    pub coefficients: Array2<f64>,
    /// One intercept per row of `coefficients` (not penalised).
    pub intercepts: Vec<f64>,
}

impl LogisticFit {
    /// The linear scores `X·Wᵀ + b` (one column per row of `coefficients`).
    pub fn decision_function(&self, x: ArrayView2<f64>) -> Result<Array2<f64>, RtfError> {
        self.check(x)?;
        Ok(self.scores(x))
    }

    /// Predicted labels: binary `classes[1]` where the score is > 0 (probability > ½), else
    /// `classes[0]`; more classes: the largest softmax score, ties → the lowest label.
    pub fn predict(&self, x: ArrayView2<f64>) -> Result<Vec<u32>, RtfError> {
        self.check(x)?;
        Ok(self.predict_unchecked(x))
    }

    fn check(&self, x: ArrayView2<f64>) -> Result<(), RtfError> {
        check_columns(
            "columns of the test split (as many as the training split)",
            self.coefficients.ncols(),
            x,
        )?;
        check_finite("test", x)
    }

    fn scores(&self, x: ArrayView2<f64>) -> Array2<f64> {
        let mut s = x.dot(&self.coefficients.t());
        for mut row in s.rows_mut() {
            for (v, b) in row.iter_mut().zip(&self.intercepts) {
                *v += b;
            }
        }
        s
    }

    fn predict_unchecked(&self, x: ArrayView2<f64>) -> Vec<u32> {
        let s = self.scores(x);
        s.rows()
            .into_iter()
            .map(|row| {
                if self.classes.len() == 2 {
                    self.classes[usize::from(row[0] > 0.0)]
                } else {
                    let mut best = 0;
                    for (k, &v) in row.iter().enumerate() {
                        if v > row[best] {
                            best = k;
                        }
                    }
                    self.classes[best]
                }
            })
            .collect()
    }
}

/// Fits the L2 logistic regression of [`Baseline::Logistic`] with inverse penalty `c` and
/// returns its coefficients (for inspection and tests; [`fit_predict`] uses the same fit).
/// Needs at least two classes present in `labels` and at least one column.
pub fn logistic_fit(
    train: ArrayView2<f64>,
    labels: &[u32],
    n_classes: usize,
    c: f64,
) -> Result<LogisticFit, RtfError> {
    let d = train.ncols();
    validate_settings(&Baseline::Logistic { c }, d)?;
    let problem = Problem::new(train, labels, n_classes, None, Columns::AtLeastOne)?;
    if problem.classes.len() < 2 {
        return Err(RtfError::TooFewClasses {
            present: problem.classes.len(),
        });
    }
    fit_logistic_checked(&problem, train, c)
}

/// Labels mapped to the classes present in training, after validation.
struct Problem {
    /// Labels present in training, ascending.
    classes: Vec<u32>,
    /// Per training row, the index of its label in `classes`.
    compact: Vec<i32>,
    /// The training mode label (ties → the lowest label).
    mode: u32,
}

impl Problem {
    fn new(
        train: ArrayView2<f64>,
        labels: &[u32],
        n_classes: usize,
        test: Option<ArrayView2<f64>>,
        columns: Columns,
    ) -> Result<Self, RtfError> {
        check_labelled(train, labels, n_classes, test, columns)?;

        // Counts of the labels present (a map, so that a huge `n_classes` costs nothing).
        let mut counts = BTreeMap::<u32, usize>::new();
        for &l in labels {
            *counts.entry(l).or_default() += 1;
        }
        let classes: Vec<u32> = counts.keys().copied().collect();
        let per_class: Vec<usize> = counts.values().copied().collect();
        let mode = classes[argmax_lowest(&per_class).unwrap_or(0)];
        let index: BTreeMap<u32, i32> = classes
            .iter()
            .enumerate()
            .map(|(k, &l)| (l, k as i32))
            .collect();
        let compact = labels.iter().map(|l| index[l]).collect();
        Ok(Problem {
            classes,
            compact,
            mode,
        })
    }
}

fn validate_settings(baseline: &Baseline, d: usize) -> Result<(), RtfError> {
    let positive = |name: &'static str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(invalid(name, v, "a finite number > 0"))
        }
    };
    match baseline {
        Baseline::ModeLabel => Ok(()),
        Baseline::Logistic { c } => positive("C", *c),
        Baseline::Svm { c, gamma } => {
            positive("C", *c)?;
            match gamma {
                Some(g) => positive("gamma", *g),
                None => Ok(()),
            }
        }
        Baseline::RandomForest { trees, mtry } => {
            if *trees == 0 {
                return Err(invalid("trees", 0, "at least 1"));
            }
            match mtry {
                Some(m) if *m == 0 || (d > 0 && *m > d) => {
                    Err(invalid("mtry", m, "between 1 and the number of columns"))
                }
                _ => Ok(()),
            }
        }
    }
}

/// Index of the largest count, ties → the lowest index; `None` when empty.
fn argmax_lowest(counts: &[usize]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (k, &c) in counts.iter().enumerate() {
        if best.is_none_or(|b| c > counts[b]) {
            best = Some(k);
        }
    }
    best
}

fn dense(x: ArrayView2<f64>, rows: Option<&[usize]>) -> Result<DenseMatrix<f64>, RtfError> {
    let (values, n) = match rows {
        None => (x.iter().copied().collect::<Vec<_>>(), x.nrows()),
        Some(rows) => (
            rows.iter().flat_map(|&r| x.row(r).to_vec()).collect(),
            rows.len(),
        ),
    };
    DenseMatrix::new(n, x.ncols(), values, false).map_err(|e| {
        RtfError::Core(CoreError::Solve {
            what: "smartcore matrix",
            message: e.to_string(),
        })
    })
}

/// Runs a smartcore call, turning both its errors and its panics into [`CoreError::Solve`].
fn guarded<T>(
    method: &'static str,
    f: impl FnOnce() -> Result<T, smartcore::error::Failed>,
) -> Result<T, RtfError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(RtfError::Core(CoreError::Solve {
            what: method,
            message: e.to_string(),
        })),
        Err(panic) => Err(solver_panic(method, panic)),
    }
}

fn solver_panic(method: &'static str, panic: Box<dyn std::any::Any + Send>) -> RtfError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    RtfError::Core(CoreError::Solve {
        what: method,
        message: format!("panicked: {message}"),
    })
}

/// Stopping tolerance of the SMO (LIBSVM's and scikit-learn's default).
const SVM_TOLERANCE: f64 = 1e-3;

fn fit_logistic_checked(
    problem: &Problem,
    train: ArrayView2<f64>,
    c: f64,
) -> Result<LogisticFit, RtfError> {
    let x = dense(train, None)?;
    let y = problem.compact.clone();
    let params = LogisticRegressionParameters::default().with_alpha(1.0 / c);
    let (coefficients, intercepts) = guarded("logistic regression", || {
        let lr = LogisticRegression::<f64, i32, DenseMatrix<f64>, Vec<i32>>::fit(&x, &y, params)?;
        let (rows, d) = lr.coefficients().shape();
        let mut w = Array2::zeros((rows, d));
        for ((r, j), v) in w.indexed_iter_mut() {
            *v = *lr.coefficients().get((r, j));
        }
        let b: Vec<f64> = (0..rows).map(|r| *lr.intercept().get((r, 0))).collect();
        Ok((w, b))
    })?;
    if coefficients
        .iter()
        .chain(&intercepts)
        .any(|v| !v.is_finite())
    {
        return Err(RtfError::Core(CoreError::Solve {
            what: "logistic regression",
            message: "L-BFGS returned non-finite coefficients".into(),
        }));
    }
    Ok(LogisticFit {
        classes: problem.classes.clone(),
        coefficients,
        intercepts,
    })
}

/// Class indices (into `problem.classes`) by one-vs-one voting of binary RBF C-SVMs.
fn svm_one_vs_one(
    problem: &Problem,
    train: ArrayView2<f64>,
    test: ArrayView2<f64>,
    c: f64,
    gamma: f64,
) -> Result<Vec<usize>, RtfError> {
    let k = problem.classes.len();
    let (n, d) = train.dim();
    let to_solver = |e: ndarray_016::ShapeError| {
        RtfError::Core(CoreError::Solve {
            what: "SVM",
            message: e.to_string(),
        })
    };
    let test_016 =
        ndarray_016::Array2::from_shape_vec((test.nrows(), d), test.iter().copied().collect())
            .map_err(to_solver)?;
    let pairs: Vec<(usize, usize)> = (0..k)
        .flat_map(|a| ((a + 1)..k).map(move |b| (a, b)))
        .collect();
    let decisions = pairs
        .par_iter()
        .map(|&(a, b)| {
            let members: Vec<usize> = (0..n)
                .filter(|&i| {
                    let y = problem.compact[i] as usize;
                    y == a || y == b
                })
                .collect();
            let values: Vec<f64> = members
                .iter()
                .flat_map(|&i| train.row(i).to_vec())
                .collect();
            let records = ndarray_016::Array2::from_shape_vec((members.len(), d), values)
                .map_err(to_solver)?;
            // `true` (the positive class of the decision function) is `b`.
            let targets: ndarray_016::Array1<bool> = members
                .iter()
                .map(|&i| problem.compact[i] as usize == b)
                .collect();
            let dataset = linfa::DatasetBase::new(records, targets);
            let model = catch_unwind(AssertUnwindSafe(|| {
                Svm::<f64, bool>::params()
                    .pos_neg_weights(c, c)
                    .gaussian_kernel(1.0 / gamma)
                    .eps(SVM_TOLERANCE)
                    .shrinking(false)
                    .fit(&dataset)
            }))
            .map_err(|panic| solver_panic("SVM", panic))?
            .map_err(|e| {
                RtfError::Core(CoreError::Solve {
                    what: "SVM",
                    message: e.to_string(),
                })
            })?;
            let decision: Vec<f64> = test_016
                .outer_iter()
                .map(|row| model.weighted_sum(&row) - model.rho)
                .collect();
            Ok(decision)
        })
        .collect::<Result<Vec<Vec<f64>>, RtfError>>()?;

    let mut votes = vec![0usize; test.nrows() * k];
    for (&(a, b), decision) in pairs.iter().zip(&decisions) {
        for (i, &f) in decision.iter().enumerate() {
            if !f.is_finite() {
                return Err(RtfError::Core(CoreError::Solve {
                    what: "SVM",
                    message: "non-finite decision value".into(),
                }));
            }
            votes[i * k + if f > 0.0 { b } else { a }] += 1;
        }
    }
    Ok(votes
        .chunks(k)
        .map(|v| argmax_lowest(v).unwrap_or(0))
        .collect())
}

/// Class indices (into `problem.classes`) by majority vote of independently seeded trees.
fn random_forest(
    problem: &Problem,
    train: ArrayView2<f64>,
    test: ArrayView2<f64>,
    trees: usize,
    mtry: usize,
    seed: u64,
) -> Result<Vec<usize>, RtfError> {
    let k = problem.classes.len();
    let x = dense(train, None)?;
    let test_matrix = dense(test, None)?;
    let y = &problem.compact;
    let n_test = test.nrows();
    let votes = (0..trees)
        .into_par_iter()
        .map(|t| {
            let params = RandomForestClassifierParameters::default()
                .with_n_trees(1)
                .with_m(mtry)
                .with_seed(derive_seed(seed, t as u64));
            guarded("random forest", || {
                let tree = RandomForestClassifier::<f64, i32, DenseMatrix<f64>, Vec<i32>>::fit(
                    &x, y, params,
                )?;
                tree.predict(&test_matrix)
            })
        })
        .try_fold(
            || vec![0usize; n_test * k],
            |mut votes, predicted| {
                for (i, &class) in predicted?.iter().enumerate() {
                    match usize::try_from(class).ok().filter(|&c| c < k) {
                        Some(c) => votes[i * k + c] += 1,
                        None => {
                            return Err(RtfError::Core(CoreError::Solve {
                                what: "random forest",
                                message: format!("predicted an unknown class index {class}"),
                            }))
                        }
                    }
                }
                Ok(votes)
            },
        )
        .try_reduce(
            || vec![0usize; n_test * k],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                Ok(a)
            },
        )?;
    Ok(votes
        .chunks(k)
        .map(|v| argmax_lowest(v).unwrap_or(0))
        .collect())
}

/// A per-(seed, stream) seed: SplitMix64 of the seed, mixed with the stream index.
fn derive_seed(seed: u64, stream: u64) -> u64 {
    fn splitmix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    splitmix(splitmix(seed) ^ stream.wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_mtry_is_floor_sqrt() {
        for d in 1..2000usize {
            let m = default_mtry(d);
            assert!(m * m <= d && (m + 1) * (m + 1) > d, "d = {d}, m = {m}");
        }
        assert_eq!(default_mtry(0), 1);
        assert_eq!(default_mtry(57), 7);
    }

    #[test]
    fn argmax_ties_go_low() {
        assert_eq!(argmax_lowest(&[1, 3, 3, 0]), Some(1));
        assert_eq!(argmax_lowest(&[]), None);
        assert_eq!(mode_label(&[2, 2, 0, 0, 1], 3), Some(0));
        assert_eq!(mode_label(&[], 3), None);
        assert_eq!(mode_label(&[5], 3), None);
    }

    #[test]
    fn derived_seeds_differ() {
        let mut seen = std::collections::HashSet::new();
        for s in 0..20 {
            for t in 0..50 {
                assert!(seen.insert(derive_seed(s, t)));
            }
        }
    }
}
