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

use anyhow::Result;
use kernel_core::kernel::laplace_gram;
use kernel_core::metrics::relative_error_percent;
use kernel_core::ridge::kernel_ridge;
use kernel_core::Lifetime;
use mondrian::{forest_fit, SweepForest};
use ndarray::{s, Array1, ArrayView1};
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::common::params::{positive, require_regression};
use crate::kinds::mondrian::sweep::{
    default_dense_below, default_max_iterations, default_tolerance, Checkpoints, Learner, Solver,
    Sweep,
};
use crate::kinds::mondrian::transductive::TransductiveSplit;
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct LifetimeSweep;

/// `[params]` of a lifetime-sweep config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LifetimeSweepParams {
    /// M, the number of Mondrian trees.
    pub n_mondrians: usize,
    /// Λ, the lifetime the trees are sampled to (checked when read).
    pub terminal_lifetime: Lifetime,
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
    pub cg_preconditioner: mondrian::Preconditioner,
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

/// Lifetimes of the exact-kernel oracle.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExactKernel {
    /// One dense n_train x n_train Cholesky solve each (checked when read).
    pub lifetimes: Vec<Lifetime>,
}

fn yes() -> bool {
    true
}

impl LifetimeSweepParams {
    fn solver(&self) -> Solver {
        Solver {
            delta: self.delta,
            cg_tolerance: self.cg_tolerance,
            cg_max_iterations: self.cg_max_iterations,
            cg_preconditioner: self.cg_preconditioner,
            dense_below: self.dense_below,
        }
    }
}

impl Params for LifetimeSweepParams {
    fn check(&self) -> Result<(), String> {
        self.solver().check()?;
        if !(1..=10_000).contains(&self.n_mondrians) {
            return Err(format!(
                "n_mondrians = {}: need 1 to 10000",
                self.n_mondrians
            ));
        }
        self.checkpoints.check(self.terminal_lifetime.get())?;
        for &l in &self.checkpoints.include {
            positive("checkpoints.include", l)?;
        }
        if let Some(l) = self.weights_at {
            if !(l > 0.0 && l <= self.terminal_lifetime.get()) {
                return Err(format!("weights_at = {l} is not in (0, terminal_lifetime]"));
            }
        }
        Ok(())
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

crate::register_kind!(LifetimeSweep);

impl Kind for LifetimeSweep {
    type Params = LifetimeSweepParams;
    type Shared = TransductiveSplit;
    const NAME: &'static str = "lifetime_sweep";
    const SUMMARY: &'static str = "one Mondrian lifetime sweep: kernel (exact ridge or the authors' SGD) vs per-tree forest, error vs λ, λ̂ by validation, weights (Mondrian kernel Figs. 7, 9, 10)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 3;

    fn check_data(data: &DataSpec) -> Result<(), String> {
        require_regression(Self::NAME, data)
    }

    fn stream(p: &LifetimeSweepParams) -> serde_json::Value {
        // The trees depend on M only: every terminal lifetime, checkpoint grid and learner
        // setting sees the same partitions (a shorter sweep is a prefix of a longer one).
        serde_json::json!({ "n_mondrians": p.n_mondrians })
    }

    fn prepare(data: &DataView) -> Result<TransductiveSplit> {
        TransductiveSplit::prepare(data)
    }

    fn run_cell(
        d: &TransductiveSplit,
        p: &LifetimeSweepParams,
        ctx: &CellContext,
    ) -> Result<Vec<Row>> {
        let start = Instant::now();
        let n_train = d.y_train.len();
        let mut sweep = Sweep::start(
            d,
            p.terminal_lifetime.get(),
            p.n_mondrians,
            p.learner,
            p.solver(),
            ctx,
        )?;
        let (mean, centred) = (sweep.mean, sweep.centred.clone());
        let sets = evaluation_sets(d);
        let mut rows = Vec::new();
        let lifetimes =
            sweep.checkpoint_lifetimes(&p.checkpoints, p.terminal_lifetime.get(), p.weights_at);
        // The forest is updated split by split (the points of the split leaves only).
        let mut forest = p
            .forest
            .then(|| SweepForest::new(&sweep.state, n_train, centred.view(), p.delta));
        for (k, &lifetime) in lifetimes.iter().enumerate() {
            if ctx.over_budget() {
                break;
            }
            ctx.progress(k, lifetimes.len());
            let fit = sweep.advance(lifetime);
            let state = &sweep.state;
            if let Some(f) = forest.as_mut() {
                f.update(
                    &sweep.forest,
                    &sweep.events[fit.events.clone()],
                    state,
                    centred.view(),
                );
            }
            let (kernel_pred, solve) = (fit.centred_predictions, fit.ridge);
            let weights_here = p.weights_at == Some(lifetime);
            // The closed form once more for the leaf list of the weights rows.
            let weights_forest = weights_here
                .then(|| forest_fit(&state.features(), n_train, centred.view(), p.delta));
            let leaves = (p.n_mondrians + state.applied()) as f64 / p.n_mondrians as f64;
            let elapsed = start.elapsed().as_secs_f64();
            let mut models = vec![("kernel", kernel_pred.view())];
            if let Some(f) = forest.as_ref() {
                models.push(("forest", f.centred_predictions()));
            }
            for (model, centred_pred) in models {
                let pred = &centred_pred + mean;
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
            if let Some(f) = weights_forest {
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
            if ctx.over_budget() {
                break;
            }
            rows.extend(exact_rows(d, &sets, lifetime.get(), p.delta)?);
        }
        Ok(rows)
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
