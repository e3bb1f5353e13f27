//! The Mondrian kernel's lifetime sweep vs the paper's "Mondrian forest" on the same trees
//! (The Mondrian Kernel, Fig. 9; spec §5, §6.5).
//!
//! One cell samples M trees to the terminal lifetime Λ on all points (training and test), walks
//! through their splits in time order and, at each checkpoint lifetime, fits the kernel model
//! (ridge on the Mondrian features, warm-started CG) and the forest (closed-form shrunk leaf
//! means) and records their training and test errors. Rows are long: one per (checkpoint,
//! model, set), so every curve of the figure is a series.

use std::time::Instant;

use anyhow::Result;
use kernel_core::metrics::relative_error_percent;
use mondrian::{forest_fit, KernelRidgeSweep, MondrianForest, SweepState};
use ndarray::s;
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
    /// Lifetimes added to the grid (e.g. those the paper reports).
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
}

fn default_tolerance() -> f64 {
    1e-6
}
fn default_max_iterations() -> usize {
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
            if !(l > 0.0 && l <= self.terminal_lifetime) {
                return Err(format!(
                    "checkpoints.include: {l} is not in (0, terminal_lifetime]"
                ));
            }
        }
        if self.cg_max_iterations == 0 {
            return Err("cg_max_iterations must be at least 1".into());
        }
        Ok(())
    }
}

impl Checkpoints {
    fn lifetimes(&self, terminal: f64) -> Vec<f64> {
        let mut out: Vec<f64> = if self.count == 1 {
            vec![terminal]
        } else {
            let (a, b) = (self.first.ln(), terminal.ln());
            (0..self.count)
                .map(|k| (a + (b - a) * k as f64 / (self.count - 1) as f64).exp())
                .collect()
        };
        out.extend(&self.include);
        out.sort_by(f64::total_cmp);
        out.dedup();
        out
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "lifetime",
        doc:
            "checkpoint lifetime λ: models fitted on the partition after every split with time <= λ",
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
        doc: "kernel (ridge on the Mondrian features) or forest (per-tree shrunk leaf means)",
    },
    ColumnDoc {
        name: "set",
        doc: "train or test",
    },
    ColumnDoc {
        name: "curve",
        doc: "'<model> (<set>)', one curve of the figure",
    },
    ColumnDoc {
        name: "error",
        doc: "relative error 100 * ||y_hat - y|| / ||y|| in percent, raw targets",
    },
    ColumnDoc {
        name: "cg_iterations",
        doc: "kernel rows: CG iterations of this checkpoint's solve (warm-started)",
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
        name: "elapsed_seconds",
        doc: "wall seconds since the cell started (tree sampling included)",
    },
];

impl ExperimentKind for LifetimeSweep {
    fn name(&self) -> &'static str {
        "lifetime_sweep"
    }

    fn summary(&self) -> &'static str {
        "one Mondrian lifetime sweep: kernel ridge vs per-tree forest, train/test error vs λ (Mondrian kernel Fig. 9)"
    }

    fn code_version(&self) -> u32 {
        1
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

    fn prepare(&self, data: &LoadedData) -> Result<Shared> {
        TransductiveSplit::prepare(data)
    }

    fn run_cell(&self, shared: &Shared, cell: &Cell) -> Result<Vec<Row>> {
        let d: &TransductiveSplit = super::shared(shared)?;
        let p: LifetimeSweepParams = super::typed(cell)?;
        let start = Instant::now();
        let n_train = d.y_train.len();
        let forest = MondrianForest::sample(
            d.x_all.view(),
            p.terminal_lifetime,
            p.n_mondrians,
            &mut cell.seeds.rng("trees"),
        )?;
        let events = forest.sweep_events();
        let mut state = SweepState::new(&forest);
        let mut kernel = KernelRidgeSweep::new(
            forest.n_columns(),
            p.delta,
            p.cg_tolerance,
            p.cg_max_iterations,
        );
        let mean = d.y_train.mean().unwrap_or(0.0);
        let centred = d.y_train.mapv(|v| v - mean);
        let mut rows = Vec::new();
        for lifetime in p.checkpoints.lifetimes(p.terminal_lifetime) {
            let applied = state.advance_to(&forest, &events, lifetime);
            kernel.inherit(&events[applied]);
            let features = state.features();
            let fit = kernel.fit(&features, n_train, centred.view());
            let forest_model = forest_fit(&features, n_train, centred.view(), p.delta);
            let leaves = (p.n_mondrians + state.applied()) as f64 / p.n_mondrians as f64;
            let elapsed = start.elapsed().as_secs_f64();
            for (model, centred_pred) in [
                ("kernel", &fit.centred_predictions),
                ("forest", &forest_model.centred_predictions),
            ] {
                let pred = centred_pred + mean;
                for (set, range, y) in [
                    ("train", 0..n_train, &d.y_train),
                    ("test", n_train..pred.len(), &d.y_test),
                ] {
                    let error = relative_error_percent(pred.slice(s![range]), y.view())?;
                    let mut r = row([
                        ("lifetime", Value::from(lifetime)),
                        ("events", state.applied().into()),
                        ("leaves_per_tree", Value::from(leaves)),
                        ("model", model.into()),
                        ("set", set.into()),
                        ("curve", format!("{model} ({set})").into()),
                        ("error", Value::from(error)),
                        ("elapsed_seconds", Value::from(elapsed)),
                    ]);
                    if model == "kernel" {
                        r.insert("cg_iterations".into(), fit.cg.iterations.into());
                        r.insert("cg_converged".into(), usize::from(fit.cg.converged).into());
                        r.insert(
                            "cg_relative_residual".into(),
                            Value::from(fit.relative_residual),
                        );
                        r.insert("active_columns".into(), fit.active_columns.into());
                    }
                    rows.push(r);
                }
            }
        }
        Ok(rows)
    }
}
