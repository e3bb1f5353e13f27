//! The Mondrian kernel's lifetime sweep (The Mondrian Kernel, Sec. 4; spec §5), and the paper's
//! "Mondrian forest" on the same trees: Figs. 7, 9 and 10.
//!
//! One cell samples M trees to the terminal lifetime Λ on all points (training, validation and
//! test), walks through their splits in time order and, at each checkpoint lifetime, fits the
//! kernel model (ridge on the Mondrian features, warm-started CG) and the forest (closed-form
//! shrunk leaf means) and records their errors on every set. Rows are long: one per
//! (checkpoint, model, set), so every curve of a figure is a series. With a validation set the
//! cell also reports the selected lifetime λ̂ (minimum validation error, Fig. 7); it can add the
//! exact Laplace kernel ridge regression at given lifetimes (the oracle of Fig. 7) and the
//! learned weights of both models at one lifetime (Fig. 10).
//!
//! The trees are drawn from a stream that depends only on M (and the data, seed and
//! repetition): a sweep to Λ' < Λ is exactly the beginning of the sweep to Λ.

use std::time::Instant;

use kernel_core::kernel::laplace_gram;
use kernel_core::ridge::kernel_ridge;

use anyhow::Result;
use kernel_core::metrics::relative_error_percent;
use mondrian::{
    forest_fit, KernelRidgeSweep, KernelSgdSweep, MondrianForest, SweepLearner, SweepState,
};
use ndarray::{s, Array1, ArrayView1};
use serde::{Deserialize, Serialize};

use super::{ColumnDoc, ExperimentKind, Params, Shared, TransductiveSplit};
use crate::cell::Cell;
use crate::config::DataSpec;
use crate::data::LoadedData;
use crate::table::{row, Row, Value};

pub struct LifetimeSweep;

/// Lifetimes at which the models are fitted and evaluated.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoints {
    /// Smallest lifetime of the log-spaced grid.
    pub first: f64,
    /// Number of log-spaced lifetimes from `first` to the terminal lifetime.
    pub count: usize,
    /// Lifetimes added to the grid (e.g. those the paper reports); those above the terminal
    /// lifetime are ignored, so one list serves several terminal lifetimes.
    #[serde(default)]
    pub include: Vec<f64>,
}

/// `[params]` of a lifetime-sweep config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LifetimeSweepParams {
    /// M, the number of Mondrian trees.
    pub n_mondrians: usize,
    /// Λ, the lifetime the trees are sampled to.
    pub terminal_lifetime: f64,
    /// Ridge penalty δ (kernel) and leaf shrinkage (forest).
    pub delta: f64,
    pub checkpoints: Checkpoints,
    /// CG stops at `‖r‖ <= tol·‖Zᵀỹ‖`.
    #[serde(default = "default_tolerance")]
    pub cg_tolerance: f64,
    #[serde(default = "default_max_iterations")]
    pub cg_max_iterations: usize,
    /// CG preconditioner of the ridge learner: `jacobi` (default) or `gauss_seidel` (symmetric
    /// block Gauss-Seidel over the trees: more accurate at the iteration cap, slower).
    #[serde(default)]
    pub cg_preconditioner: CgPreconditioner,
    /// The ridge learner solves by Cholesky while at most this many leaves hold training points
    /// (exact, and cheaper than CG there), by CG above; 0: always CG.
    #[serde(default = "default_dense_below")]
    pub dense_below: usize,
    /// How the kernel model is fitted: `ridge` (exact ridge by warm-started CG at every
    /// checkpoint; default) or `sgd` (the authors' one epoch of scikit-learn 0.17 SGD per event,
    /// α = δ, warm-started; spec §4.2).
    #[serde(default)]
    pub learner: Learner,
    /// Fit the "Mondrian forest" too (Fig. 9); the kernel is always fitted.
    #[serde(default = "yes")]
    pub forest: bool,
    /// The exact Laplace kernel ridge regression (penalty δ) on the training set: the oracle of
    /// Fig. 7. (A table, since a top-level array in `[params]` is a grid axis.)
    pub exact_kernel: Option<ExactKernel>,
    /// A lifetime at which the learned weights of both models are recorded (Fig. 10); it is
    /// added to the checkpoints.
    pub weights_at: Option<f64>,
}

/// CG preconditioner of the ridge learner (see [`mondrian::Preconditioner`]).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CgPreconditioner {
    #[default]
    Jacobi,
    GaussSeidel,
}

impl From<CgPreconditioner> for mondrian::Preconditioner {
    fn from(p: CgPreconditioner) -> Self {
        match p {
            CgPreconditioner::Jacobi => mondrian::Preconditioner::Jacobi,
            CgPreconditioner::GaussSeidel => mondrian::Preconditioner::GaussSeidel,
        }
    }
}

/// The kernel model's learner.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Learner {
    #[default]
    Ridge,
    Sgd,
}

/// The penalty and CG settings of a sweep's learner.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Solver {
    pub delta: f64,
    pub cg_tolerance: f64,
    pub cg_max_iterations: usize,
    pub cg_preconditioner: CgPreconditioner,
    pub dense_below: usize,
}

impl Learner {
    /// A fresh learner for a sweep over `n_columns` global columns (SGD: α = δ as the authors,
    /// rows shuffled from the cell's `sgd_shuffle` stream).
    pub(crate) fn sweep_learner(
        self,
        n_columns: usize,
        solver: Solver,
        cell: &Cell,
    ) -> SweepLearner {
        match self {
            Learner::Ridge => SweepLearner::Ridge(
                KernelRidgeSweep::new(
                    n_columns,
                    solver.delta,
                    solver.cg_tolerance,
                    solver.cg_max_iterations,
                )
                .with_preconditioner(solver.cg_preconditioner.into())
                .with_dense_below(solver.dense_below),
            ),
            Learner::Sgd => SweepLearner::Sgd(
                KernelSgdSweep::new(n_columns, solver.delta),
                Box::new(cell.seeds.rng("sgd_shuffle")),
            ),
        }
    }
}

/// Lifetimes of the exact-kernel oracle.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExactKernel {
    /// One dense n_train x n_train Cholesky solve each.
    pub lifetimes: Vec<f64>,
}

fn yes() -> bool {
    true
}

pub(crate) fn default_tolerance() -> f64 {
    1e-6
}
pub(crate) fn default_dense_below() -> usize {
    mondrian::DENSE_BELOW
}
pub(crate) fn default_max_iterations() -> usize {
    1000
}

impl Params for LifetimeSweepParams {
    fn check(&self) -> Result<(), String> {
        super::positive("terminal_lifetime", self.terminal_lifetime)?;
        super::positive("delta", self.delta)?;
        super::positive("checkpoints.first", self.checkpoints.first)?;
        super::positive("cg_tolerance", self.cg_tolerance)?;
        if !(1..=10_000).contains(&self.n_mondrians) {
            return Err(format!(
                "n_mondrians = {}: need 1 to 10000",
                self.n_mondrians
            ));
        }
        if self.checkpoints.first > self.terminal_lifetime {
            return Err("checkpoints.first must not exceed terminal_lifetime".into());
        }
        if !(1..=100_000).contains(&self.checkpoints.count) {
            return Err("checkpoints.count: need 1 to 100000".into());
        }
        for &l in &self.checkpoints.include {
            super::positive("checkpoints.include", l)?;
        }
        for &l in self.exact_kernel.iter().flat_map(|e| &e.lifetimes) {
            super::positive("exact_kernel.lifetimes", l)?;
        }
        if let Some(l) = self.weights_at {
            if !(l > 0.0 && l <= self.terminal_lifetime) {
                return Err(format!("weights_at = {l} is not in (0, terminal_lifetime]"));
            }
        }
        if self.cg_max_iterations == 0 {
            return Err("cg_max_iterations must be at least 1".into());
        }
        Ok(())
    }
}

impl Checkpoints {
    pub(crate) fn lifetimes(&self, terminal: f64, extra: Option<f64>) -> Vec<f64> {
        let mut out: Vec<f64> = if self.count == 1 {
            vec![terminal]
        } else {
            let (a, b) = (self.first.ln(), terminal.ln());
            let last = self.count - 1;
            (0..self.count)
                .map(|k| match k {
                    0 => self.first,
                    k if k == last => terminal,
                    k => (a + (b - a) * k as f64 / last as f64).exp(),
                })
                .collect()
        };
        out.extend(self.include.iter().filter(|&&l| l <= terminal));
        out.extend(extra);
        out.sort_by(f64::total_cmp);
        // Grid points within rounding of an included lifetime are the same checkpoint; keep
        // the included (exactly written) value, which configs select on.
        let exact = |v: f64| self.include.contains(&v) || extra == Some(v);
        let mut merged: Vec<f64> = Vec::with_capacity(out.len());
        for v in out {
            match merged.last_mut() {
                Some(prev) if (v - *prev).abs() <= 1e-9 * v.abs() => {
                    if exact(v) {
                        *prev = v;
                    }
                }
                _ => merged.push(v),
            }
        }
        merged
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "point",
        doc:
            "sweep (a checkpoint of the sweep), selected (the kernel or forest at the lifetime of \
              least validation error), exact (exact Laplace kernel ridge), weights (one learned \
              weight or centred target)",
    },
    ColumnDoc {
        name: "lifetime",
        doc: "lifetime λ: sweep rows are models fitted on the partition after every split with \
              time <= λ; exact rows the kernel exp(-λ||x - x'||_1)",
    },
    ColumnDoc {
        name: "events",
        doc: "splits applied so far (all trees)",
    },
    ColumnDoc {
        name: "leaves_per_tree",
        doc: "mean number of leaves per tree at λ",
    },
    ColumnDoc {
        name: "model",
        doc: "kernel (ridge on the Mondrian features), forest (per-tree shrunk leaf means), exact \
              (exact Laplace kernel ridge) or targets (weights rows: y - mean)",
    },
    ColumnDoc {
        name: "set",
        doc: "train, validation or test",
    },
    ColumnDoc {
        name: "curve",
        doc: "'<model> (<set>)', one curve of the figure; 'selected <model> (<set>)' at λ̂",
    },
    ColumnDoc {
        name: "error",
        doc: "relative error 100 * ||y_hat - y|| / ||y|| in percent, raw targets",
    },
    ColumnDoc {
        name: "cg_iterations",
        doc: "ridge kernel rows: CG iterations of this checkpoint's solve (warm-started; 0 when solved by Cholesky)",
    },
    ColumnDoc {
        name: "cg_converged",
        doc: "kernel rows: 1 if CG reached its tolerance",
    },
    ColumnDoc {
        name: "cg_relative_residual",
        doc: "kernel rows: ||r|| / ||Z^T y|| at the end of the solve",
    },
    ColumnDoc {
        name: "active_columns",
        doc: "kernel rows: leaves holding training points (the ridge system size)",
    },
    ColumnDoc {
        name: "ridge_solver",
        doc: "ridge kernel rows: cholesky (at most dense_below active columns) or cg",
    },
    ColumnDoc {
        name: "leaf",
        doc: "weights rows: global leaf id (tree offset + node), the same leaf for both models; \
              targets: training row",
    },
    ColumnDoc {
        name: "position",
        doc: "weights rows: index in the authors' weight arrays (forest: tree by tree; kernel: \
              global creation order), which their scatter paired",
    },
    ColumnDoc {
        name: "weight",
        doc: "weights rows: forest leaf value S/(n + δ), kernel weight w (prediction \
              mean + Σ_m w/√M), or the centred target y - mean",
    },
    ColumnDoc {
        name: "elapsed_seconds",
        doc: "wall seconds since the cell started (tree sampling included)",
    },
];

impl ExperimentKind for LifetimeSweep {
    fn name(&self) -> &'static str {
        "lifetime_sweep"
    }

    fn summary(&self) -> &'static str {
        "one Mondrian lifetime sweep: kernel (exact ridge or the authors' SGD) vs per-tree forest, error vs λ, λ̂ by validation, weights (Mondrian kernel Figs. 7, 9, 10)"
    }

    fn code_version(&self) -> u32 {
        3
    }

    fn columns(&self) -> &'static [ColumnDoc] {
        COLUMNS
    }

    fn check_data(&self, data: &DataSpec) -> Result<(), String> {
        super::require_dataset(self.name(), data)
    }

    fn canonical_params(&self, point: toml::Table) -> Result<serde_json::Value, String> {
        super::canonical::<LifetimeSweepParams>(point)
    }

    fn stream_params(&self, params: &serde_json::Value) -> serde_json::Value {
        // The trees depend on M only: every terminal lifetime, checkpoint grid and learner
        // setting sees the same partitions (a shorter sweep is a prefix of a longer one).
        serde_json::json!({ "n_mondrians": params.get("n_mondrians") })
    }

    fn prepare(&self, data: &LoadedData) -> Result<Shared> {
        TransductiveSplit::prepare(data)
    }

    fn run_cell(&self, shared: &Shared, cell: &Cell) -> Result<Vec<Row>> {
        let d: &TransductiveSplit = super::shared(shared)?;
        let p: LifetimeSweepParams = super::typed(cell)?;
        let start = Instant::now();
        let n_train = d.y_train.len();
        let mut sweep = Sweep::start(
            d,
            p.terminal_lifetime,
            p.n_mondrians,
            p.learner,
            Solver {
                delta: p.delta,
                cg_tolerance: p.cg_tolerance,
                cg_max_iterations: p.cg_max_iterations,
                cg_preconditioner: p.cg_preconditioner,
                dense_below: p.dense_below,
            },
            cell,
        )?;
        let (mean, centred) = (sweep.mean, sweep.centred.clone());
        let sets = evaluation_sets(d);
        let mut rows = Vec::new();
        for lifetime in p.checkpoints.lifetimes(p.terminal_lifetime, p.weights_at) {
            let fit = sweep.advance(lifetime);
            let state = &sweep.state;
            let (kernel_pred, solve) = (fit.centred_predictions, fit.ridge);
            let weights_here = p.weights_at == Some(lifetime);
            // The forest's closed form is needed to plot it, and for the leaf list of weights.
            let forest_model = (p.forest || weights_here)
                .then(|| forest_fit(&state.features(), n_train, centred.view(), p.delta));
            let leaves = (p.n_mondrians + state.applied()) as f64 / p.n_mondrians as f64;
            let elapsed = start.elapsed().as_secs_f64();
            let mut models = vec![("kernel", &kernel_pred)];
            if let Some(f) = forest_model.as_ref().filter(|_| p.forest) {
                models.push(("forest", &f.centred_predictions));
            }
            for (model, centred_pred) in models {
                let pred = centred_pred + mean;
                for (set, range, y) in &sets {
                    let error = relative_error_percent(pred.slice(s![range.clone()]), y.view())?;
                    let mut r = row([
                        ("point", "sweep".into()),
                        ("lifetime", Value::from(lifetime)),
                        ("events", state.applied().into()),
                        ("leaves_per_tree", Value::from(leaves)),
                        ("model", model.into()),
                        ("set", (*set).into()),
                        ("curve", format!("{model} ({set})").into()),
                        ("error", Value::from(error)),
                        ("elapsed_seconds", Value::from(elapsed)),
                    ]);
                    if let (Some(fit), "kernel") = (&solve, model) {
                        r.insert("cg_iterations".into(), fit.cg.iterations.into());
                        r.insert("cg_converged".into(), usize::from(fit.cg.converged).into());
                        r.insert(
                            "cg_relative_residual".into(),
                            Value::from(fit.relative_residual),
                        );
                        r.insert("active_columns".into(), fit.active_columns.into());
                        r.insert(
                            "ridge_solver".into(),
                            if fit.direct { "cholesky" } else { "cg" }.into(),
                        );
                    }
                    rows.push(r);
                }
            }
            if let Some(f) = forest_model.filter(|_| weights_here) {
                let leaf_values = f.leaf_values;
                let leaves: Vec<u32> = leaf_values.iter().map(|&(c, _)| c).collect();
                let kernel_weights = sweep.learner.paper_weights(&leaves, p.n_mondrians);
                rows.extend(weight_rows(
                    lifetime,
                    &leaf_values,
                    &kernel_weights,
                    &sweep,
                    centred.view(),
                ));
            }
        }
        if d.validation.is_some() {
            let selected = selected_rows(&rows);
            rows.extend(selected);
        }
        for &lifetime in p.exact_kernel.iter().flat_map(|e| &e.lifetimes) {
            rows.extend(exact_rows(d, &sets, lifetime, p.delta)?);
        }
        Ok(rows)
    }
}

/// A Mondrian lifetime sweep over the stacked points of a split (trees from the cell's `trees`
/// stream), with its kernel learner.
pub(crate) struct Sweep {
    pub forest: MondrianForest,
    pub events: Vec<mondrian::SweepEvent>,
    pub state: SweepState,
    pub learner: SweepLearner,
    /// ȳ of the training targets.
    pub mean: f64,
    /// ỹ = y_train − ȳ.
    pub centred: Array1<f64>,
}

impl Sweep {
    /// Samples M trees to the terminal lifetime and starts the sweep at λ = 0.
    pub(crate) fn start(
        d: &TransductiveSplit,
        terminal_lifetime: f64,
        n_mondrians: usize,
        learner: Learner,
        solver: Solver,
        cell: &Cell,
    ) -> Result<Self> {
        let forest = MondrianForest::sample(
            d.x_all.view(),
            terminal_lifetime,
            n_mondrians,
            &mut cell.seeds.rng("trees"),
        )?;
        let events = forest.sweep_events();
        let state = SweepState::new(&forest);
        let learner = learner.sweep_learner(forest.n_columns(), solver, cell);
        let mean = d.y_train.mean().unwrap_or(0.0);
        Ok(Self {
            forest,
            events,
            state,
            learner,
            mean,
            centred: d.y_train.mapv(|v| v - mean),
        })
    }

    /// Applies every split with time `<= lifetime` and updates the kernel model.
    pub(crate) fn advance(&mut self, lifetime: f64) -> mondrian::SweepFit {
        self.learner.advance(
            &self.forest,
            &self.events,
            &mut self.state,
            lifetime,
            self.centred.len(),
            self.centred.view(),
        )
    }
}

/// The evaluated sets: name, rows of `x_all`, raw targets.
fn evaluation_sets(
    d: &TransductiveSplit,
) -> Vec<(&'static str, std::ops::Range<usize>, Array1<f64>)> {
    let n_all = d.x_all.nrows();
    let mut sets = vec![("train", 0..d.n_train, d.y_train.clone())];
    if let Some(v) = &d.validation {
        sets.push(("validation", d.n_train..d.test_start, v.y.clone()));
    }
    sets.push(("test", d.test_start..n_all, d.y_test.clone()));
    sets
}

/// Copies of the sweep rows of each model at its λ̂, the first checkpoint of least validation
/// error (spec §6.3), as `point = selected`.
fn selected_rows(rows: &[Row]) -> Vec<Row> {
    let text = |r: &Row, k: &str| r.get(k).map(|v| v.to_string()).unwrap_or_default();
    let number = |r: &Row, k: &str| r.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
    let mut out = Vec::new();
    for model in ["kernel", "forest"] {
        let best = rows
            .iter()
            .filter(|r| text(r, "point") == "sweep" && text(r, "model") == model)
            .filter(|r| text(r, "set") == "validation")
            .fold(None::<&Row>, |best, r| match best {
                Some(b) if number(b, "error") <= number(r, "error") => Some(b),
                _ => Some(r),
            });
        let Some(best) = best else { continue };
        let lifetime = number(best, "lifetime");
        for r in rows.iter().filter(|r| {
            text(r, "point") == "sweep"
                && text(r, "model") == model
                && number(r, "lifetime") == lifetime
        }) {
            let mut copy = r.clone();
            copy.insert("point".into(), "selected".into());
            copy.insert(
                "curve".into(),
                format!("selected {model} ({})", text(r, "set")).into(),
            );
            out.push(copy);
        }
    }
    out
}

/// Exact Laplace kernel ridge regression at one lifetime: errors on every set.
fn exact_rows(
    d: &TransductiveSplit,
    sets: &[(&'static str, std::ops::Range<usize>, Array1<f64>)],
    lifetime: f64,
    delta: f64,
) -> Result<Vec<Row>> {
    let started = Instant::now();
    let train = d.x_all.slice(s![..d.n_train, ..]);
    let gram = laplace_gram(train, train, lifetime)?;
    let held_out: Vec<_> = sets[1..]
        .iter()
        .map(|(_, range, _)| laplace_gram(d.x_all.slice(s![range.clone(), ..]), train, lifetime))
        .collect::<Result<_, _>>()?;
    let views: Vec<_> = held_out.iter().map(|k| k.view()).collect();
    let fit = kernel_ridge(gram, d.y_train.view(), delta, &views)?;
    let mut predictions = vec![fit.training_predictions(d.y_train.view(), delta)];
    predictions.extend(fit.predictions);
    let elapsed = started.elapsed().as_secs_f64();
    sets.iter()
        .zip(&predictions)
        .map(|((set, _, y), pred)| {
            Ok(row([
                ("point", "exact".into()),
                ("lifetime", Value::from(lifetime)),
                ("model", "exact".into()),
                ("set", (*set).into()),
                ("curve", format!("exact ({set})").into()),
                (
                    "error",
                    Value::from(relative_error_percent(pred.view(), y.view())?),
                ),
                ("elapsed_seconds", Value::from(elapsed)),
            ]))
        })
        .collect()
}

/// The learned weights of both models on every current leaf, and the centred training targets
/// (spec §6.6). `position` is a weight's index in the authors' arrays: forest weights tree by
/// tree (each tree's leaves in the order they were created), kernel weights in the global order
/// the leaves were created in the sweep; the authors' scatter paired equal positions, i.e.
/// unrelated leaves (decision D4), where `leaf` pairs the same leaf.
fn weight_rows(
    lifetime: f64,
    leaf_values: &[(u32, f64)],
    kernel_weights: &[f64],
    sweep: &Sweep,
    centred: ArrayView1<f64>,
) -> Vec<Row> {
    let weight_row = |model: &str, leaf: usize, position: usize, weight: f64| {
        row([
            ("point", "weights".into()),
            ("lifetime", Value::from(lifetime)),
            ("model", model.into()),
            ("leaf", leaf.into()),
            ("position", position.into()),
            ("weight", Value::from(weight)),
        ])
    };
    // Creation order over all trees: the roots, then both children of every split applied.
    let mut created = vec![usize::MAX; sweep.forest.n_columns()];
    let births = sweep.forest.column_offsets().into_iter().chain(
        sweep.events[..sweep.state.applied()]
            .iter()
            .flat_map(|e| [e.left, e.right]),
    );
    for (rank, column) in births.enumerate() {
        created[column as usize] = rank;
    }
    let mut global: Vec<usize> = (0..leaf_values.len()).collect();
    global.sort_by_key(|&k| created[leaf_values[k].0 as usize]);
    let mut kernel_position = vec![0; leaf_values.len()];
    for (position, &k) in global.iter().enumerate() {
        kernel_position[k] = position;
    }
    let forest = leaf_values
        .iter()
        .enumerate()
        .map(|(k, &(c, v))| weight_row("forest", c as usize, k, v));
    let kernel = leaf_values
        .iter()
        .zip(kernel_weights)
        .zip(&kernel_position)
        .map(|((&(c, _), &w), &k)| weight_row("kernel", c as usize, k, w));
    let targets = centred
        .iter()
        .enumerate()
        .map(|(i, &v)| weight_row("targets", i, i, v));
    forest.chain(kernel).chain(targets).collect()
}
