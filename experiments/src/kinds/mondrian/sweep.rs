//! The Mondrian lifetime sweep as the kinds run it: M trees sampled to the terminal lifetime on
//! the stacked points of a split (from the cell's `trees` stream), walked in time order, with a
//! kernel learner updated at each checkpoint; and the checkpoint lifetimes.

use anyhow::Result;
use mondrian::{
    KernelRidgeSweep, KernelSgdSweep, MondrianForest, Preconditioner, SweepLearner, SweepState,
};
use ndarray::Array1;
use serde::{Deserialize, Serialize};

use super::transductive::TransductiveSplit;
use crate::context::CellContext;
use crate::kinds::common::params::positive;

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
    /// Also evaluate after every split of every tree (the authors' per-event records: the
    /// curves as step functions, spec §11.9); the grid and `include` are kept. Left out of the
    /// stored parameters when false, so configs without it keep their cell keys.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub every_split: bool,
}

impl Checkpoints {
    /// Checks the grid against the terminal lifetime.
    pub fn check(&self, terminal_lifetime: f64) -> Result<(), String> {
        positive("checkpoints.first", self.first)?;
        if self.first > terminal_lifetime {
            return Err("checkpoints.first must not exceed terminal_lifetime".into());
        }
        if !(1..=100_000).contains(&self.count) {
            return Err("checkpoints.count: need 1 to 100000".into());
        }
        Ok(())
    }

    /// The sorted checkpoint lifetimes up to `terminal`, plus `extra`.
    pub fn lifetimes(&self, terminal: f64, extra: Option<f64>) -> Vec<f64> {
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
pub struct Solver {
    pub delta: f64,
    pub cg_tolerance: f64,
    pub cg_max_iterations: usize,
    pub cg_preconditioner: Preconditioner,
    pub dense_below: usize,
}

impl Solver {
    /// Checks the penalty and CG settings (the learner's own check).
    pub fn check(&self) -> Result<(), String> {
        KernelRidgeSweep::check_settings(self.delta, self.cg_tolerance, self.cg_max_iterations)
            .map_err(|e| e.to_string())
    }
}

impl Learner {
    /// A fresh learner for a sweep over `n_columns` global columns (SGD: α = δ as the authors,
    /// rows shuffled from the cell's `sgd_shuffle` stream).
    pub fn sweep_learner(
        self,
        n_columns: usize,
        solver: Solver,
        ctx: &CellContext,
    ) -> Result<SweepLearner> {
        Ok(match self {
            Learner::Ridge => SweepLearner::Ridge(
                KernelRidgeSweep::new(
                    n_columns,
                    solver.delta,
                    solver.cg_tolerance,
                    solver.cg_max_iterations,
                )?
                .with_preconditioner(solver.cg_preconditioner)
                .with_dense_below(solver.dense_below),
            ),
            Learner::Sgd => SweepLearner::Sgd(
                KernelSgdSweep::new(n_columns, solver.delta),
                Box::new(ctx.rng("sgd_shuffle")),
            ),
        })
    }
}

pub fn default_tolerance() -> f64 {
    1e-6
}
pub fn default_dense_below() -> usize {
    mondrian::DENSE_BELOW
}
pub fn default_max_iterations() -> usize {
    1000
}

/// A Mondrian lifetime sweep over the stacked points of a split, with its kernel learner.
pub struct Sweep {
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
    pub fn start(
        d: &TransductiveSplit,
        terminal_lifetime: f64,
        n_mondrians: usize,
        learner: Learner,
        solver: Solver,
        ctx: &CellContext,
    ) -> Result<Self> {
        let forest = MondrianForest::sample(
            d.x_all.view(),
            terminal_lifetime,
            n_mondrians,
            &mut ctx.rng("trees"),
        )?;
        let events = forest.sweep_events();
        let state = SweepState::new(&forest);
        let learner = learner.sweep_learner(forest.n_columns(), solver, ctx)?;
        let (mean, centred) = d.centred_targets();
        Ok(Self {
            forest,
            events,
            state,
            learner,
            mean,
            centred,
        })
    }

    /// The checkpoint lifetimes of this sweep: the grid to `terminal` plus `extra`, and with
    /// `every_split` the time of every split.
    pub fn checkpoint_lifetimes(
        &self,
        checkpoints: &Checkpoints,
        terminal: f64,
        extra: Option<f64>,
    ) -> Vec<f64> {
        let mut lifetimes = checkpoints.lifetimes(terminal, extra);
        if checkpoints.every_split {
            lifetimes.extend(self.events.iter().map(|e| e.time));
            lifetimes.sort_by(f64::total_cmp);
            lifetimes.dedup();
        }
        lifetimes
    }

    /// Applies every split with time `<= lifetime` and updates the kernel model.
    pub fn advance(&mut self, lifetime: f64) -> mondrian::SweepFit {
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
