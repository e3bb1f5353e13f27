//! Kernel-width selection against computation time (The Mondrian Kernel, Fig. 8; spec §6.4).
//!
//! One cell per method on CPU, M = 350:
//! * `mondrian`: one lifetime sweep to Λ; the test error at each checkpoint lifetime, with the
//!   CPU time spent so far (tree sampling, every model update and every evaluation);
//! * `random_fourier`, `random_binning`: the authors' search over `log₂ λ`
//!   ([`kernel_core::width_search::select_width`]), each evaluation drawing fresh features and
//!   training from scratch; the test error and cumulative CPU time after each evaluation.
//!
//! As in the authors' code the errors are on the CPU **test** set (the figure's "validation
//! set" label is a misnomer, decision D2). Each cell runs on a thread of its own (a one-thread
//! pool), and its time is that thread's CPU time, so cells running side by side do not distort
//! each other's clocks.

use anyhow::Result;
use kernel_core::metrics::relative_error_percent;
use kernel_core::one_hot::OneHotFeatures;
use kernel_core::ridge::ridge_weights;
use kernel_core::sgd::{Rows, ScaledWeights, Sgd};
use kernel_core::width_search::select_width;
use kernel_core::Lifetime;
use mondrian::KernelRidgeSweep;
use ndarray::{s, Array1, ArrayView1};
use random_features::{FourierBuffers, RandomBinning, RandomFourierFeatures};
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::common::clock::{on_own_thread, Clock};
use crate::kinds::common::params::require_regression;
use crate::kinds::common::upstream_rows::DenseSplit;
use crate::kinds::mondrian::sweep::{
    default_dense_below, default_max_iterations, default_tolerance, Checkpoints, Learner, Solver,
    Sweep,
};
use crate::kinds::mondrian::transductive::TransductiveSplit;
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct WidthSelection;

/// The kernel approximation whose width is selected.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    Mondrian,
    RandomFourier,
    RandomBinning,
    /// The authors' scripts (upstream `mondrian_kernel`, [`super::authors`]).
    AuthorsMondrian,
    AuthorsRandomFourier,
    AuthorsRandomBinning,
}

impl Method {
    /// The authors' method of the same name, for their methods (`mondrian`, ...).
    fn authors(self) -> Option<&'static str> {
        match self {
            Method::AuthorsMondrian => Some("mondrian"),
            Method::AuthorsRandomFourier => Some("random_fourier"),
            Method::AuthorsRandomBinning => Some("random_binning"),
            _ => None,
        }
    }
}

/// Evaluations of the width search (the authors: 101 for Fourier features, 51 for binning).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evaluations {
    pub random_fourier: usize,
    pub random_binning: usize,
}

/// `[params]` of a width-selection config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WidthSelectionParams {
    pub method: Method,
    /// M: Mondrian trees, binning repetitions, or Fourier frequencies (2M features).
    pub n_features: usize,
    /// Ridge penalty δ (SGD: α = δ, as the authors).
    pub delta: f64,
    /// `sgd` (the authors: one epoch per sweep event; `epochs` from w = 0 per random-feature
    /// evaluation, Fourier features unscaled) or `ridge` (exact; features scaled 1/√M).
    #[serde(default)]
    pub learner: Learner,
    /// SGD epochs per random-feature evaluation.
    #[serde(default = "ten")]
    pub epochs: usize,
    pub evaluations: Evaluations,
    /// The search steps by ±1 in log₂ λ while the best error is above this (percent).
    #[serde(default = "twenty")]
    pub search_threshold: f64,
    /// Mondrian: the lifetime the sweep runs to (checked when read).
    pub terminal_lifetime: Lifetime,
    /// Mondrian: where the sweep's model is evaluated.
    pub checkpoints: Checkpoints,
    #[serde(default = "default_tolerance")]
    pub cg_tolerance: f64,
    #[serde(default = "default_max_iterations")]
    pub cg_max_iterations: usize,
    /// Ridge learner: Cholesky while at most this many columns are active, CG above.
    #[serde(default = "default_dense_below")]
    pub dense_below: usize,
    /// What the width search minimises: `test` (the authors' code: the test error, decision
    /// D2) or `holdout` (the last `holdout_rows` training rows are held out of training and
    /// the search minimises their error; the test error is still reported).
    #[serde(default)]
    pub selection: Selection,
    #[serde(default = "default_holdout_rows")]
    pub holdout_rows: usize,
}

/// The set the width is selected on.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    #[default]
    Test,
    Holdout,
}

fn default_holdout_rows() -> usize {
    819
}

fn ten() -> usize {
    10
}
fn twenty() -> f64 {
    20.0
}

impl WidthSelectionParams {
    fn solver(&self) -> Solver {
        Solver {
            delta: self.delta,
            cg_tolerance: self.cg_tolerance,
            cg_max_iterations: self.cg_max_iterations,
            cg_preconditioner: Default::default(),
            dense_below: self.dense_below,
        }
    }
}

impl Params for WidthSelectionParams {
    fn check(&self) -> Result<(), String> {
        self.solver().check()?;
        if !(1..=10_000).contains(&self.n_features) {
            return Err(format!("n_features = {}: need 1 to 10000", self.n_features));
        }
        if self.epochs == 0 {
            return Err("epochs must be at least 1".into());
        }
        for (name, n) in [
            (
                "evaluations.random_fourier",
                self.evaluations.random_fourier,
            ),
            (
                "evaluations.random_binning",
                self.evaluations.random_binning,
            ),
        ] {
            if !(1..=10_000).contains(&n) {
                return Err(format!("{name} = {n}: need 1 to 10000"));
            }
        }
        if !self.search_threshold.is_finite() {
            return Err("search_threshold must be finite".into());
        }
        self.checkpoints.check(self.terminal_lifetime.get())?;
        if self.selection == Selection::Holdout && self.holdout_rows == 0 {
            return Err("holdout_rows must be at least 1 with selection = \"holdout\"".into());
        }
        Ok(())
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "evaluation",
        doc: "random features: index of the evaluation in the search (0 = λ = 1); Mondrian: \
              index of the checkpoint",
    },
    ColumnDoc {
        name: "lifetime",
        doc: "λ (inverse kernel width) of this evaluation or checkpoint",
    },
    ColumnDoc {
        name: "lg",
        doc: "log2 λ",
    },
    ColumnDoc {
        name: "events",
        doc: "Mondrian: splits applied so far (all trees)",
    },
    ColumnDoc {
        name: "error",
        doc: "relative test error 100 * ||y_hat - y|| / ||y|| in percent",
    },
    ColumnDoc {
        name: "train_error",
        doc: "relative training error in percent",
    },
    ColumnDoc {
        name: "holdout_error",
        doc: "selection = holdout: relative error on the held-out training rows in percent",
    },
    ColumnDoc {
        name: "selection_error",
        doc: "the error the width search minimises: holdout_error, or the test error",
    },
    ColumnDoc {
        name: "cpu_seconds",
        doc: "CPU seconds of the cell's thread since the method started (features, fitting and \
              evaluation included)",
    },
    ColumnDoc {
        name: "curve",
        doc: "the method: mondrian, random_fourier or random_binning (the authors' scripts: authors_mondrian, ...)",
    },
    ColumnDoc {
        name: "wall_seconds",
        doc: "wall seconds since the method started",
    },
];

crate::register_kind!(WidthSelection);

impl Kind for WidthSelection {
    type Params = WidthSelectionParams;
    type Shared = TransductiveSplit;
    const NAME: &'static str = "width_selection";
    const SUMMARY: &'static str = "kernel-width selection vs CPU time: one Mondrian sweep vs retraining random features per width (Mondrian kernel Fig. 8)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    fn check_data(data: &DataSpec) -> Result<(), String> {
        require_regression(Self::NAME, data)
    }

    fn stream(p: &WidthSelectionParams) -> serde_json::Value {
        // Draws depend on the method and M only: the selection set, the learner and the solver
        // settings see the same trees and features (common random numbers).
        serde_json::json!({ "method": p.method, "n_features": p.n_features })
    }

    fn upstream(p: &WidthSelectionParams) -> Option<&'static str> {
        p.method.authors().map(|_| super::authors::UPSTREAM)
    }

    fn prepare(data: &DataView) -> Result<TransductiveSplit> {
        TransductiveSplit::prepare(data)
    }

    fn run_cell(
        d: &TransductiveSplit,
        p: &WidthSelectionParams,
        ctx: &CellContext,
    ) -> Result<Vec<Row>> {
        if let Some(name) = p.method.authors() {
            // The driver makes the authors' holdout split itself (from the whole split).
            let mut params = serde_json::to_value(p)?;
            params["method"] = serde_json::json!(name);
            let seed: u64 = rand::Rng::random(&mut ctx.rng("authors"));
            let curve = format!("authors_{name}");
            let split = DenseSplit {
                x_train: &d.x_train,
                y_train: &d.y_train,
                x_test: &d.x_test,
                y_test: &d.y_test,
            };
            let mut rows = super::authors::run("width_selection", &split, &params, seed, COLUMNS)?;
            // The authors' curves are told from the project's.
            for row in &mut rows {
                row.insert("curve".into(), curve.as_str().into());
            }
            return Ok(rows);
        }
        let holdout = match p.selection {
            Selection::Test => None,
            Selection::Holdout => Some(d.with_holdout(p.holdout_rows)?),
        };
        let d = holdout.as_ref().unwrap_or(d);
        // One thread of its own for the whole method, so its CPU clock holds all the work.
        on_own_thread(|| match p.method {
            Method::Mondrian => mondrian_sweep(d, p, ctx),
            _ => random_feature_search(d, p, ctx),
        })
    }
}

fn method_row(
    method: Method,
    evaluation: usize,
    lifetime: f64,
    errors: &Errors,
    clock: &Clock,
) -> Row {
    let name = match method {
        Method::Mondrian => "mondrian",
        Method::RandomFourier => "random_fourier",
        _ => "random_binning",
    };
    let mut r = row([
        ("evaluation", evaluation.into()),
        ("lifetime", Value::from(lifetime)),
        ("lg", Value::from(lifetime.log2())),
        ("error", Value::from(errors.test)),
        ("train_error", Value::from(errors.train)),
        ("selection_error", Value::from(errors.selection())),
        ("cpu_seconds", Value::from(clock.cpu())),
        ("wall_seconds", Value::from(clock.wall())),
        ("curve", name.into()),
    ]);
    if let Some(h) = errors.holdout {
        r.insert("holdout_error".into(), Value::from(h));
    }
    r
}

/// Relative errors (percent) of one model.
struct Errors {
    test: f64,
    train: f64,
    /// On the holdout rows, when the widths are selected on them.
    holdout: Option<f64>,
}

impl Errors {
    /// The error the width search minimises: holdout if there is one, else test (as the authors).
    fn selection(&self) -> f64 {
        self.holdout.unwrap_or(self.test)
    }
}

/// The errors of centred predictions of every row of `x_all` (train; holdout; test).
fn errors(d: &TransductiveSplit, pred: ArrayView1<f64>) -> Result<Errors> {
    let mean = d.y_train.mean().unwrap_or(0.0);
    let err = |range: std::ops::Range<usize>, y: ArrayView1<f64>| {
        relative_error_percent((&pred.slice(s![range]) + mean).view(), y)
    };
    Ok(Errors {
        test: err(d.test_start..pred.len(), d.y_test.view())?,
        train: err(0..d.n_train, d.y_train.view())?,
        holdout: d
            .validation
            .as_ref()
            .map(|v| err(d.n_train..d.test_start, v.y.view()))
            .transpose()?,
    })
}

fn mondrian_sweep(
    d: &TransductiveSplit,
    p: &WidthSelectionParams,
    ctx: &CellContext,
) -> Result<Vec<Row>> {
    let clock = Clock::start();
    let mut sweep = Sweep::start(
        d,
        p.terminal_lifetime.get(),
        p.n_features,
        p.learner,
        p.solver(),
        ctx,
    )?;
    let mut rows = Vec::new();
    let lifetimes = sweep.checkpoint_lifetimes(&p.checkpoints, p.terminal_lifetime.get(), None);
    for (k, &lifetime) in lifetimes.iter().enumerate() {
        if ctx.over_budget() {
            break;
        }
        ctx.progress(k, lifetimes.len());
        let fit = sweep.advance(lifetime);
        let e = errors(d, fit.centred_predictions.view())?;
        let mut r = method_row(Method::Mondrian, k, lifetime, &e, &clock);
        r.insert("events".into(), sweep.state.applied().into());
        rows.push(r);
    }
    Ok(rows)
}

fn random_feature_search(
    d: &TransductiveSplit,
    p: &WidthSelectionParams,
    ctx: &CellContext,
) -> Result<Vec<Row>> {
    let clock = Clock::start();
    let (_, centred) = d.centred_targets();
    let mut feature_rng = ctx.rng("features");
    let mut shuffle = ctx.rng("sgd_shuffle");
    let sgd = Sgd::sklearn_0_17(p.delta);
    let m = p.n_features;
    let scale = 1.0 / (m as f64).sqrt();
    let evaluations = match p.method {
        Method::RandomFourier => p.evaluations.random_fourier,
        _ => p.evaluations.random_binning,
    };
    let mut rows = Vec::new();
    // The Fourier features' memory, reused by every evaluation.
    let mut fourier_buffers = FourierBuffers::default();
    let searched = select_width(evaluations - 1, p.search_threshold, |lg| -> Result<f64> {
        if ctx.over_budget() {
            anyhow::bail!("out of budget");
        }
        ctx.progress(rows.len(), evaluations);
        let lifetime = lg.exp2();
        let n_train = d.n_train;
        let train_x = d.x_all.slice(s![..n_train, ..]);
        let rest_x = d.x_all.slice(s![n_train.., ..]);
        // Centred predictions for every row of `x_all` (train; holdout; test).
        let pred: Array1<f64> = match p.method {
            Method::RandomFourier => {
                let map =
                    RandomFourierFeatures::sample(d.x_all.ncols(), m, lifetime, &mut feature_rng)?;
                map.transform_into(d.x_all.view(), &mut fourier_buffers)?;
                let z = &mut fourier_buffers.z;
                let w: Array1<f64> = match p.learner {
                    // The authors' features are unscaled under SGD (decision D3).
                    Learner::Sgd => {
                        let mut w = ScaledWeights::zeros(2 * m);
                        sgd.fit(
                            &mut w,
                            &z.slice(s![..n_train, ..]),
                            centred.view(),
                            p.epochs,
                            Some(&mut shuffle),
                        );
                        Array1::from(w.to_vec())
                    }
                    Learner::Ridge => {
                        *z *= scale;
                        ridge_weights(z.slice(s![..n_train, ..]), centred.view(), p.delta)?
                    }
                };
                z.dot(&w)
            }
            Method::RandomBinning => {
                let mut map =
                    RandomBinning::sample(d.x_all.ncols(), m, lifetime, &mut feature_rng)?;
                // Bins come from the training points; held-out points in unseen bins get no
                // feature for that repetition.
                let f_train = map.fit_transform(train_x)?;
                let f_rest = map.transform(rest_x)?;
                let n_columns = f_train.n_columns().max(f_rest.n_columns());
                let all = OneHotFeatures::new(
                    d.x_all.nrows(),
                    m,
                    n_columns,
                    [f_train.columns(), f_rest.columns()].concat(),
                )?;
                match p.learner {
                    Learner::Sgd => {
                        // SGD gathers and scatters by column only: the same numbers with the
                        // columns renumbered by first use, and each repetition owns its bins'
                        // columns, so consecutive steps interleave repetition by repetition.
                        let all = all.renumbered_by_first_use();
                        let train_rows = all.sgd_rows(n_train, scale).with_disjoint_blocks();
                        let mut w = ScaledWeights::zeros(all.n_columns());
                        sgd.fit(
                            &mut w,
                            &train_rows,
                            centred.view(),
                            p.epochs,
                            Some(&mut shuffle),
                        );
                        let w = w.to_vec();
                        let rows = all.sgd_rows(all.n_rows(), scale);
                        (0..all.n_rows()).map(|i| rows.dot(i, &w)).collect()
                    }
                    Learner::Ridge => {
                        KernelRidgeSweep::new(
                            n_columns,
                            p.delta,
                            p.cg_tolerance,
                            p.cg_max_iterations,
                        )?
                        .with_dense_below(p.dense_below)
                        .fit(&all, n_train, centred.view())
                        .centred_predictions
                    }
                }
            }
            _ => unreachable!("the Mondrian kernel sweeps; the authors' code runs elsewhere"),
        };
        let e = errors(d, pred.view())?;
        rows.push(method_row(p.method, rows.len(), lifetime, &e, &clock));
        Ok(e.selection())
    });
    match searched {
        // A search stopped by the budget keeps the evaluations it made.
        Err(_) if ctx.did_not_finish() => {}
        other => {
            other?;
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every parameter an authors' cell passes (all of the params: none is skipped when
    /// serialised) is a key of the kit's `driver.py`'s `WIDTH_PARAMS`: it refuses any other,
    /// and the cell then fails.
    #[test]
    fn the_authors_driver_knows_every_parameter_a_cell_passes() {
        let p: WidthSelectionParams = toml::from_str(
            "method = \"authors_mondrian\"\nn_features = 350\ndelta = 1e-4\n\
             evaluations = { random_fourier = 101, random_binning = 51 }\n\
             terminal_lifetime = 1e-6\ncheckpoints = { first = 1e-9, count = 120 }\n\
             selection = \"holdout\"",
        )
        .unwrap();
        let v = serde_json::to_value(&p).unwrap();
        assert!(v.as_object().unwrap().len() >= 14, "{v}");
        let unknown =
            crate::upstream::driver::unknown_to_driver("mondrian_kernel", &["WIDTH_PARAMS"], &v);
        assert!(unknown.is_empty(), "driver.py does not know {unknown:?}");
    }
}
