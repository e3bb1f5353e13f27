//! The RMSE table of A la Carte (spec §0 R1, §7, §8): one cell = one method on one shipped
//! train/test split of a UCI regression set (repetition k uses the set's test mask k).
//!
//! Per cell: the training rows fix the input standardisation (z-scores with training statistics,
//! constant columns dropped: decision D1); targets stay on the shipped (centred, transformed)
//! scale. The method is fitted by L-BFGS on the negative log marginal likelihood and predicts
//! the test rows: test RMSE and MNLP. RBF and ARD start from the spec's start (restarts with new
//! Fastfood draws); FSARD, FSGBARD, PWL, GM and SSGPR start from the fitted ARD solution of the
//! same split and seed (FSARD, FSGBARD and PWL reuse its Fastfood draw), which every cell of the
//! split computes once and shares (the ARD fit is deterministic, so a cell's numbers do not
//! depend on which cell computed it; its CPU time is the ARD cell's `fit_seconds` and the warm
//! starts' `init_seconds`; it reports progress but a `cell_budget_seconds` does not interrupt
//! it); `exact_ard` and `exact_rbf` are the exact ARD and RBF GPs (the SMALL sets' references). `revrand_rbf`,
//! `revrand_ard`, `revrand_gm`: revrand on the same split ([`super::revrand`]; not the authors'
//! code: they released none).
//!
//! Times: each cell runs on a thread of its own: `fit_seconds` is that thread's CPU time of the
//! optimisation, `evaluation_seconds` the mean per marginal-likelihood evaluation.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{bail, Result};
use fastfood::fit::{standardise, ExactFit};
use fastfood::{
    fit_ard_family, fit_exact_gp, fit_from_ard, Family, Fit, LbfgsSettings, Method, Protocol,
    RadiusSampling,
};
use kernel_core::metrics::{mnlp, rmse};
use kernel_core::Predictor;
use ndarray::{Array1, Array2, Axis};
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::common::clock::{on_own_thread, Clock};
use crate::kinds::common::params::require_regression;
use crate::kinds::common::upstream_rows::DenseSplit;
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct FastfoodRegression;

fn default_m() -> usize {
    256
}
fn default_components() -> usize {
    5
}
fn default_intervals() -> usize {
    10
}
fn default_iterations() -> usize {
    1000
}
fn default_restarts() -> usize {
    1
}
fn default_tol_cost() -> f64 {
    LbfgsSettings::default().tol_cost
}
fn default_tol_grad() -> f64 {
    LbfgsSettings::default().tol_grad
}
fn default_true() -> bool {
    true
}

/// revrand's kernels (upstream `revrand`: not the A la Carte authors' code, who released none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevrandFamily {
    Rbf,
    Ard,
    Gm,
}

impl RevrandFamily {
    fn name(self) -> &'static str {
        match self {
            RevrandFamily::Rbf => "rbf",
            RevrandFamily::Ard => "ard",
            RevrandFamily::Gm => "gm",
        }
    }
}

/// A method of the study: the project's (`rbf`, `ard`, ..., `exact_ard`, `exact_rbf`) or revrand's on the
/// same split (`revrand_rbf`, `revrand_ard`, `revrand_gm`: [`super::revrand`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StudyMethod {
    Ours(Method),
    Revrand(RevrandFamily),
}

impl Serialize for StudyMethod {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            StudyMethod::Ours(m) => m.serialize(s),
            StudyMethod::Revrand(f) => s.serialize_str(&format!("revrand_{}", f.name())),
        }
    }
}

impl<'de> Deserialize<'de> for StudyMethod {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, IntoDeserializer};
        let name = String::deserialize(d)?;
        Ok(match name.as_str() {
            "revrand_rbf" => StudyMethod::Revrand(RevrandFamily::Rbf),
            "revrand_ard" => StudyMethod::Revrand(RevrandFamily::Ard),
            "revrand_gm" => StudyMethod::Revrand(RevrandFamily::Gm),
            other => StudyMethod::Ours(Method::deserialize(other.into_deserializer()).map_err(
                |e: serde::de::value::Error| {
                    D::Error::custom(format!(
                        "{e}; or revrand_rbf, revrand_ard, revrand_gm (revrand, not the \
                             authors' code)"
                    ))
                },
            )?),
        })
    }
}

/// `[params]` of an RMSE-table config (defaults: spec §8).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegressionParams {
    pub method: StudyMethod,
    /// m, frequencies (D = 2m features).
    #[serde(default = "default_m")]
    pub m: usize,
    /// Q of GM.
    #[serde(default = "default_components")]
    pub components: usize,
    /// K of PWL (K + 1 heights on [0, √d + 4]).
    #[serde(default = "default_intervals")]
    pub intervals: usize,
    /// L-BFGS iterations at most, per start.
    #[serde(default = "default_iterations")]
    pub max_iterations: usize,
    /// Starts of RBF, ARD (and so of every warm start) and the exact GP.
    #[serde(default = "default_restarts")]
    pub restarts: usize,
    /// Stop when the negative log marginal likelihood per row changes by less.
    #[serde(default = "default_tol_cost")]
    pub tol_cost: f64,
    /// Stop when its gradient norm is below this.
    #[serde(default = "default_tol_grad")]
    pub tol_grad: f64,
    /// Train on at most this many of the split's training rows (a seeded subset, the same for
    /// every method of the repetition); absent: all (the paper's protocol).
    #[serde(default)]
    pub max_train: Option<usize>,
    /// z-score the inputs with training statistics, constant columns dropped (D1); false: the
    /// shipped centred inputs as they are.
    #[serde(default = "default_true")]
    pub standardise: bool,
    /// PWL's radii: `stratified` (the paper's i/m + ξ, default) or `iid` (PWL only).
    #[serde(default)]
    pub pwl_radii: RadiusSampling,
}

impl RegressionParams {
    fn protocol(&self) -> Protocol {
        Protocol {
            m: self.m,
            components: self.components,
            intervals: self.intervals,
            lbfgs: LbfgsSettings {
                max_iterations: self.max_iterations,
                tol_cost: self.tol_cost,
                tol_grad: self.tol_grad,
                ..LbfgsSettings::default()
            },
            restarts: self.restarts,
            pwl_radii: self.pwl_radii,
            ..Protocol::default()
        }
    }

    /// What decides the ARD fit every warm start shares.
    fn ard_key(&self) -> String {
        format!("m={} {}", self.m, self.fit_key())
    }

    /// The settings of an optimisation by marginal likelihood and of its training rows: what
    /// the exact GP reads (it has no features, so no m).
    fn fit_key(&self) -> String {
        format!(
            "it={} r={} tc={} tg={} mt={:?} s={}",
            self.max_iterations,
            self.restarts,
            self.tol_cost,
            self.tol_grad,
            self.max_train,
            self.standardise
        )
    }
}

impl Params for RegressionParams {
    fn check(&self) -> Result<(), String> {
        for (name, v, max) in [
            ("m", self.m, 16_384),
            ("components", self.components, 1000),
            ("intervals", self.intervals, 10_000),
            ("max_iterations", self.max_iterations, 1_000_000),
            ("restarts", self.restarts, 1000),
        ] {
            if v == 0 || v > max {
                return Err(format!("{name} = {v}: expected 1..={max}"));
            }
        }
        let gm = matches!(
            self.method,
            StudyMethod::Ours(Method::Features(Family::Gm))
                | StudyMethod::Revrand(RevrandFamily::Gm)
        );
        if gm && self.m < 2 * self.components {
            return Err(format!(
                "m = {} with components = {}: GM needs m >= 2 Q (a ± frequency pair per component)",
                self.m, self.components
            ));
        }
        if self.max_train == Some(0) {
            return Err("max_train = 0: keep at least one row (or leave it out)".into());
        }
        for (name, v) in [("tol_cost", self.tol_cost), ("tol_grad", self.tol_grad)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{name} = {v}: expected a finite number >= 0"));
            }
        }
        Ok(())
    }
}

/// The ARD fit of one (split, settings), computed once by whichever cell needs it first.
type ArdSlot = Arc<OnceLock<Result<(Fit, f64), String>>>;

/// One split (z-scored and as shipped) and the ARD fits its cells share.
pub struct Split {
    train: Array2<f64>,
    train_y: Array1<f64>,
    test: Array2<f64>,
    /// The shipped (centred) inputs, for `standardise = false`.
    raw_train: Array2<f64>,
    raw_test: Array2<f64>,
    test_y: Array1<f64>,
    ard: Mutex<HashMap<String, ArdSlot>>,
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "rmse",
        doc: "test RMSE on the shipped (centred, transformed) target scale",
    },
    ColumnDoc {
        name: "null_rmse",
        doc: "test RMSE of the training mean (the predictor without inputs)",
    },
    ColumnDoc {
        name: "relative_rmse",
        doc: "rmse / null_rmse: below 1 where the inputs help",
    },
    ColumnDoc {
        name: "mnlp",
        doc: "test mean negative log predictive density (Gaussian predictive, noise included)",
    },
    ColumnDoc {
        name: "train_nlml",
        doc: "negative log marginal likelihood per training row at the fitted parameters",
    },
    ColumnDoc {
        name: "n_train",
        doc: "training rows used",
    },
    ColumnDoc {
        name: "n_test",
        doc: "test rows",
    },
    ColumnDoc {
        name: "n_inputs",
        doc: "input columns after dropping those constant on the training rows (d)",
    },
    ColumnDoc {
        name: "n_features",
        doc: "features D (2m; 0 for the exact GP)",
    },
    ColumnDoc {
        name: "n_hyperparameters",
        doc: "parameters learned by marginal likelihood",
    },
    ColumnDoc {
        name: "model_values",
        doc: "numbers stored to evaluate the kernel: learned parameters plus the Fastfood structure (B, Π, G, u); SSGPR: its m·d frequencies (O(m) vs O(md))",
    },
    ColumnDoc {
        name: "iterations",
        doc: "L-BFGS iterations (over all starts)",
    },
    ColumnDoc {
        name: "evaluations",
        doc: "marginal-likelihood evaluations (over all starts)",
    },
    ColumnDoc {
        name: "stop",
        doc: "why the (best) run stopped: converged, max_iterations, line_search, interrupted",
    },
    ColumnDoc {
        name: "init_seconds",
        doc: "CPU seconds of the ARD fit the warm start began from (0 for RBF, ARD, exact)",
    },
    ColumnDoc {
        name: "fit_seconds",
        doc: "CPU seconds of the method's own optimisation",
    },
    ColumnDoc {
        name: "evaluation_seconds",
        doc: "fit_seconds / evaluations: CPU seconds per marginal-likelihood evaluation with gradient",
    },
    ColumnDoc {
        name: "predict_seconds",
        doc: "CPU seconds to predict the test rows",
    },
];

crate::register_kind!(FastfoodRegression);

impl Kind for FastfoodRegression {
    type Params = RegressionParams;
    type Shared = Split;
    const NAME: &'static str = "fastfood_regression";
    const SUMMARY: &'static str = "Fastfood kernels (RBF, ARD, FSARD, FSGBARD, GM, PWL), SSGPR and the exact ARD GP learned by marginal likelihood on shipped train/test splits: test RMSE, MNLP, time per evaluation (A la Carte RMSE table)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    fn check_data(data: &DataSpec) -> Result<(), String> {
        require_regression(Self::NAME, data)
    }

    /// Every feature model of a split shares the ARD draws (common random numbers, and the warm
    /// starts' ARD fit): their seeds depend on the ARD settings only. The exact GP reads no m
    /// (its restarts' starts are drawn without it), so its seeds leave m out. (Before, m seeded
    /// it too: with restarts > 1, m moved the exact GP's numbers.)
    fn stream(p: &RegressionParams) -> serde_json::Value {
        match p.method {
            StudyMethod::Ours(Method::ExactArd | Method::ExactRbf) => {
                serde_json::json!({ "exact": p.fit_key() })
            }
            StudyMethod::Revrand(_) => crate::kinds::common::params::read_by(
                p,
                &[
                    "method",
                    "m",
                    "components",
                    "max_iterations",
                    "restarts",
                    "standardise",
                    "max_train",
                ],
            ),
            _ => serde_json::json!({ "ard": p.ard_key() }),
        }
    }

    fn cost(p: &RegressionParams) -> f64 {
        let d = 2.0 * p.m as f64;
        let iters = p.max_iterations.min(300) as f64;
        let n = p.max_train.unwrap_or(2000) as f64;
        match p.method {
            StudyMethod::Ours(Method::ExactArd | Method::ExactRbf) => iters * n.powi(3) / 3e9,
            // revrand inverts the D x D posterior precision per evaluation, in Python.
            StudyMethod::Revrand(_) => 20.0 * iters * d.powi(3) / 1e9,
            _ => iters * n.min(d) * n.max(d) * d / 1e9,
        }
    }

    fn upstream(p: &RegressionParams) -> Option<&'static str> {
        matches!(p.method, StudyMethod::Revrand(_)).then_some(super::revrand::UPSTREAM)
    }

    fn prepare(data: &DataView) -> Result<Split> {
        let sets = data.regression()?;
        if sets.train.y.is_empty() || sets.test.y.is_empty() {
            bail!("the split has an empty training or test set");
        }
        let (train, test) = standardise(&sets.train.x, &sets.test.x, true);
        if train.ncols() == 0 {
            bail!("every input column is constant on the training rows");
        }
        Ok(Split {
            train,
            train_y: sets.train.y,
            test,
            raw_train: sets.train.x,
            raw_test: sets.test.x,
            test_y: sets.test.y,
            ard: Mutex::new(HashMap::new()),
        })
    }

    fn run_cell(d: &Split, params: &RegressionParams, ctx: &CellContext) -> Result<Vec<Row>> {
        match params.method {
            StudyMethod::Revrand(family) => by_revrand(d, params, family, ctx),
            StudyMethod::Ours(method) => on_own_thread(|| regression(d, params, method, ctx)),
        }
    }
}

/// One cell of revrand: the cell's training rows (the `max_train` subset too) and the test
/// rows as shipped; the driver standardises them as this kind does.
fn by_revrand(
    d: &Split,
    p: &RegressionParams,
    family: RevrandFamily,
    ctx: &CellContext,
) -> Result<Vec<Row>> {
    let rows = training_rows(d, p, ctx);
    let (x, y) = match &rows {
        Some(r) => (d.raw_train.select(Axis(0), r), d.train_y.select(Axis(0), r)),
        None => (d.raw_train.clone(), d.train_y.clone()),
    };
    let params = revrand_params(p, family)?;
    let seed: u64 = rand::Rng::random(&mut ctx.rng("revrand"));
    let cell = format!("revrand_{}-{seed:016x}", family.name());
    let split = DenseSplit {
        x_train: &x,
        y_train: &y,
        x_test: &d.raw_test,
        y_test: &d.test_y,
    };
    Ok(super::revrand::run(&split, &params, seed, &cell, COLUMNS)?)
}

/// The `params.json` of a revrand cell: the kind's parameters, the method named as revrand's
/// family, without `max_train` (the rows written are the subset already).
fn revrand_params(p: &RegressionParams, family: RevrandFamily) -> Result<serde_json::Value> {
    let mut params = serde_json::to_value(p)?;
    params["method"] = serde_json::json!(family.name());
    if let Some(o) = params.as_object_mut() {
        o.remove("max_train");
    }
    Ok(params)
}

/// The training rows a cell uses: all, or a seeded subset of `max_train` (the same for every
/// cell of the repetition).
fn training_rows(d: &Split, p: &RegressionParams, ctx: &CellContext) -> Option<Vec<usize>> {
    let cap = p.max_train?;
    if cap >= d.train.nrows() {
        return None;
    }
    // Positions 0..n of the training rows, in the repetition's order.
    let positions: Vec<usize> = (0..d.train.nrows()).collect();
    let mut take: Vec<usize> = ctx.shuffled(&positions)[..cap].to_vec();
    take.sort_unstable();
    Some(take)
}

fn regression(
    d: &Split,
    p: &RegressionParams,
    method: Method,
    ctx: &CellContext,
) -> Result<Vec<Row>> {
    let protocol = p.protocol();
    let rows = training_rows(d, p, ctx);
    let (train, test) = if p.standardise {
        (&d.train, &d.test)
    } else {
        (&d.raw_train, &d.raw_test)
    };
    let (x, y) = match &rows {
        Some(r) => (train.select(Axis(0), r), d.train_y.select(Axis(0), r)),
        None => (train.clone(), d.train_y.clone()),
    };
    let (xv, yv) = (x.view(), y.view());
    let budget = |evals: usize| {
        ctx.progress(evals.min(p.max_iterations), p.max_iterations);
        ctx.over_budget()
    };
    let ard_rng = |r: usize| ctx.rng(&format!("ard/{r}"));
    let clock = Clock::start();
    enum Fitted {
        Features(Box<Fit>),
        Exact(ExactFit),
    }
    let (fitted, init_seconds, fit_seconds) = match method {
        Method::ExactArd | Method::ExactRbf => {
            let f = fit_exact_gp(method, xv, yv, &protocol, &ard_rng, &budget)?;
            (Fitted::Exact(f), 0.0, clock.cpu())
        }
        Method::Features(Family::Rbf) => {
            let f = fit_ard_family(Family::Rbf, xv, yv, &protocol, &ard_rng, &budget)?;
            (Fitted::Features(Box::new(f)), 0.0, clock.cpu())
        }
        _ => {
            let slot = d
                .ard
                .lock()
                .map_err(|_| anyhow::anyhow!("ARD cache poisoned"))?
                .entry(p.ard_key())
                .or_default()
                .clone();
            let shared = slot.get_or_init(|| {
                let c = Clock::start();
                // The shared ARD fit reports progress but is not interrupted by this cell's
                // budget: other cells of the split reuse it.
                let progress = |evals: usize| {
                    ctx.progress(evals.min(p.max_iterations), p.max_iterations);
                    false
                };
                fit_ard_family(Family::Ard, xv, yv, &protocol, &ard_rng, &progress)
                    .map(|f| (f, c.cpu()))
                    .map_err(|e| e.to_string())
            });
            let (ard, ard_seconds) = match shared {
                Ok(v) => v,
                Err(e) => bail!("the ARD fit failed: {e}"),
            };
            if method == Method::Features(Family::Ard) {
                (Fitted::Features(Box::new(ard.clone())), 0.0, *ard_seconds)
            } else {
                let family = method.family().expect("a feature model");
                // This cell's own optimisation only (the shared ARD fit is `init_seconds`).
                let own = Clock::start();
                let mut rng = ctx.rng(&format!("{family:?}"));
                let fit = fit_from_ard(family, xv, yv, &protocol, ard, &mut rng, &budget)?;
                (Fitted::Features(Box::new(fit)), *ard_seconds, own.cpu())
            }
        }
    };
    let clock = Clock::start();
    let (mean, var, nlml, iterations, evaluations, stop, n_features, n_hyper, values) =
        match &fitted {
            Fitted::Features(f) => {
                let predicted = f.posterior(xv, yv)?.predict(test.view())?;
                let (mean, var) = (predicted.mean, predicted.variance);
                let hyper = f.model.n_params();
                (
                    mean,
                    var,
                    f.nlml,
                    f.iterations,
                    f.evaluations,
                    f.stop,
                    f.model.n_features(),
                    hyper,
                    hyper + f.model.structure_values(),
                )
            }
            Fitted::Exact(f) => {
                let predicted = f.posterior(xv, yv)?.predict(test.view())?;
                let (mean, var) = (predicted.mean, predicted.variance);
                let hyper = f.theta.len();
                (
                    mean,
                    var,
                    f.nlml,
                    f.iterations,
                    f.evaluations,
                    f.stop,
                    0,
                    hyper,
                    hyper + x.len(),
                )
            }
        };
    let predict_seconds = clock.cpu();
    let error = rmse(mean.view(), d.test_y.view())?;
    let null = rmse(
        Array1::from_elem(d.test_y.len(), y.mean().unwrap_or(0.0)).view(),
        d.test_y.view(),
    )?;
    Ok(vec![row([
        ("rmse", Value::from(error)),
        ("null_rmse", Value::from(null)),
        ("relative_rmse", Value::from(error / null)),
        (
            "mnlp",
            Value::from(mnlp(mean.view(), var.view(), d.test_y.view())?),
        ),
        ("train_nlml", Value::from(nlml)),
        ("n_train", x.nrows().into()),
        ("n_test", d.test_y.len().into()),
        ("n_inputs", x.ncols().into()),
        ("n_features", n_features.into()),
        ("n_hyperparameters", n_hyper.into()),
        ("model_values", values.into()),
        ("iterations", iterations.into()),
        ("evaluations", evaluations.into()),
        ("stop", Value::Str(stop.name().into())),
        ("init_seconds", Value::from(init_seconds)),
        ("fit_seconds", Value::from(fit_seconds)),
        (
            "evaluation_seconds",
            Value::from(fit_seconds / evaluations.max(1) as f64),
        ),
        ("predict_seconds", Value::from(predict_seconds)),
    ])])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> Result<RegressionParams, String> {
        let p: RegressionParams = toml::from_str(text).map_err(|e| e.to_string())?;
        p.check().map(|_| p)
    }

    #[test]
    fn parameters_are_checked_with_clear_errors() {
        let p = params("method = 'gm'").unwrap();
        assert_eq!(
            (p.m, p.components, p.intervals, p.restarts),
            (256, 5, 10, 1)
        );
        for (text, needle) in [
            ("method = 'xard'", "xard"),
            ("method = 'gm'\nm = 6", "2 Q"),
            ("method = 'ard'\nm = 0", "m = 0"),
            ("method = 'ard'\nmax_train = 0", "max_train"),
            ("method = 'ard'\ntol_cost = -1.0", "tol_cost"),
            ("method = 'ard'\nrestart = 3", "restart"),
        ] {
            let err = params(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    /// Every parameter a revrand cell passes is one the kit's `driver.py` reads (its
    /// `DEFAULTS`) or ignores by name (`IGNORED`): it refuses any other, and the cell then fails
    /// (exit status 3); until 2026-12-05 such a cell was skipped, as every revrand cell was from
    /// the addition of `pwl_radii`.
    #[test]
    fn revrand_driver_knows_every_parameter_a_cell_passes() {
        use crate::upstream::driver::unknown_to_driver;
        for family in [RevrandFamily::Rbf, RevrandFamily::Ard, RevrandFamily::Gm] {
            let p = params("method = 'rbf'\nmax_train = 50").unwrap();
            let v = revrand_params(&p, family).unwrap();
            assert!(
                v.get("method").is_some() && v.get("intervals").is_some(),
                "{v}"
            );
            let unknown = unknown_to_driver("revrand", &["DEFAULTS", "IGNORED"], &v);
            assert!(unknown.is_empty(), "driver.py does not know {unknown:?}");
        }
    }

    #[test]
    fn standardisation_uses_training_statistics_and_drops_constant_columns() {
        let train = ndarray::array![[1.0, 5.0, 2.0], [3.0, 5.0, 4.0]];
        let test = ndarray::array![[2.0, 7.0, 0.0]];
        let (a, b) = standardise(&train, &test, true);
        assert_eq!(a, ndarray::array![[-1.0, -1.0], [1.0, 1.0]]);
        assert_eq!(b, ndarray::array![[0.0, -3.0]]);
    }
}
