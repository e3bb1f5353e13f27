//! StreaMRAK's experiments (spec §8): one cell streams the training set once into one method
//! (StreaMRAK, LP-KRR or FALKON with one bandwidth) and reports, per level L, the test MSE of
//! the model of levels 0..L, the level's landmarks and where in the stream it became ready and
//! was fitted; the cover tree's counts at checkpoints (spec §9, E4); and a summary. On the
//! double pendulum the pairs are (s_t, s_{t+Δ}) of the training trajectories and the models are
//! also rolled out recursively from each test pendulum's initial state (spec §8.3): MSE per
//! forecast step for every L, and the paths of both masses for a few test pendulums.
//!
//! Rows carry a `record` column: `level`, `tree`, `rollout`, `path` or `summary`.

use std::sync::Arc;

use anyhow::{bail, Result};
use kernel_core::Predictor;
use ndarray::{Array1, Array2, Array3, ArrayView2, Axis};
use serde::{Deserialize, Serialize};
use streamrak::falkon::FalkonParams;
use streamrak::statistics::ConvergenceParams;
use streamrak::LevelParams;

use super::training::{train, FalkonSearch, Method, PairStream, Settings, Trained};
use crate::context::CellContext;
use crate::data::synthetic::double_pendulum::PendulumTrajectories;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{Row, Value};

pub struct Multiresolution;

/// A multiple of the data's maxDistance (spec §8.3).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scaled {
    pub max_distances: f64,
}

/// FALKON's landmark count: a number, or `{ sqrt_factor = c }` for m = ⌊c·√n⌋ of the n
/// training points (the paper: c = 10).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum LandmarkCount {
    Count(usize),
    PerRootN(RootFactor),
}

/// `{ sqrt_factor = c }`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RootFactor {
    pub sqrt_factor: f64,
}

impl LandmarkCount {
    /// m for n training points (at least 1).
    pub fn of(self, n: usize) -> usize {
        match self {
            LandmarkCount::Count(m) => m,
            LandmarkCount::PerRootN(RootFactor { sqrt_factor }) => {
                ((sqrt_factor * (n as f64).sqrt()).floor() as usize).max(1)
            }
        }
    }
}

/// FALKON's bandwidth: a number, or `"search"` for the authors' search (`falkon_search` holds
/// its settings).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum FalkonBandwidth {
    Value(f64),
    Chosen(SearchTag),
}

/// The word `"search"`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SearchTag {
    Search,
}

/// How FALKON forms KᵀK u: from the accumulated m × m statistics (`statistics`, n·m² flops,
/// m ≤ 20,000) or from the stored rows in one pass per CG iteration (`matrix_free`, n·m kernel
/// entries a pass; `streamrak::baselines::MatrixFreeFalkon`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FalkonSolver {
    #[default]
    Statistics,
    MatrixFree,
}

/// The root radius r₀: a number, or `{ max_distances = k }` (k × maxDistance of the pendulum
/// data).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Radius {
    Absolute(f64),
    MaxDistances(Scaled),
}

macro_rules! defaults {
    ($($name:ident: $t:ty = $v:expr;)*) => {
        $(fn $name() -> $t { $v })*
    };
}

defaults! {
    delta0: f64 = 10.0;
    high_rate: f64 = 0.01;
    low_rate: f64 = 1e-4;
    d_level: f64 = 0.9;
    k_threshold: f64 = 5e-4;
    z_threshold: f64 = 5e-5;
    track_length: usize = 100;
    interval: usize = 10_000;
    lower_limit: usize = 30_000;
    upper_limit: usize = 1_500_000;
    lambda: f64 = 1e-3;
    cg_iterations: usize = 10;
    points_per_level: usize = 110_000;
    lp_landmark_factor: f64 = 1.0;
    trace_points: usize = 40;
}

/// `[params]`: the method, the root radius and deepest level, StreaMRAK's constants (spec §4-§6
/// tables; defaults: the authors' defaults with δ₀ = 10 and an interval of 10,000 as in all
/// three experiments), LP-KRR's and FALKON's settings (spec §7), and for the pendulum the pair
/// offset and the roll-out.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiresolutionParams {
    pub method: Method,
    pub r0: Radius,
    /// Deepest level fitted (StreaMRAK, LP-KRR).
    pub max_level: usize,
    #[serde(default = "delta0")]
    pub delta0: f64,
    #[serde(default = "high_rate")]
    pub high_rate: f64,
    #[serde(default = "low_rate")]
    pub low_rate: f64,
    #[serde(default = "d_level")]
    pub d_level: f64,
    #[serde(default = "k_threshold")]
    pub k_threshold: f64,
    #[serde(default = "z_threshold")]
    pub z_threshold: f64,
    #[serde(default = "track_length")]
    pub track_length: usize,
    #[serde(default = "interval")]
    pub interval: usize,
    #[serde(default = "lower_limit")]
    pub lower_limit: usize,
    #[serde(default = "upper_limit")]
    pub upper_limit: usize,
    /// FALKON's λ and CG iterations (every level, every method).
    #[serde(default = "lambda")]
    pub lambda: f64,
    #[serde(default = "cg_iterations")]
    pub cg_iterations: usize,
    /// LP-KRR: streamed points per level, and landmarks m = factor·√n.
    #[serde(default = "points_per_level")]
    pub points_per_level: usize,
    #[serde(default = "lp_landmark_factor")]
    pub lp_landmark_factor: f64,
    /// FALKON: its one bandwidth and its landmark count (drawn with replacement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub falkon_bandwidth: Option<FalkonBandwidth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub falkon_landmarks: Option<LandmarkCount>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub falkon_solver: FalkonSolver,
    /// FALKON: the settings of the authors' bandwidth search, read when `falkon_bandwidth =
    /// "search"` (a fixed bandwidth ignores them, so a profile can switch between the two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub falkon_search: Option<FalkonSearch>,
    /// Cover-tree checkpoints over the stream (StreaMRAK).
    #[serde(default = "trace_points")]
    pub trace_points: usize,
    /// Pendulum: target = the state this many steps ahead (10 = 0.25 s); pairs come from the
    /// first `pair_states` states of each training trajectory (500); roll-out steps (49) and
    /// test pendulums whose paths are recorded (3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_steps: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_states: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_steps: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<usize>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn positive(name: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(format!("{name} = {v}: expected a finite number > 0"))
    }
}

impl MultiresolutionParams {
    fn level_params(&self) -> LevelParams {
        LevelParams {
            high_rate: self.high_rate,
            low_rate: self.low_rate,
            d_level: self.d_level,
            delta0: self.delta0,
        }
    }

    fn convergence_params(&self) -> ConvergenceParams {
        ConvergenceParams {
            k_threshold: self.k_threshold,
            z_threshold: self.z_threshold,
            track_length: self.track_length,
            interval: self.interval,
            lower_limit: self.lower_limit,
            upper_limit: self.upper_limit,
        }
    }

    /// FALKON's constants: the paper's, with λ and the CG iterations (`cg_iterations`) of the
    /// config.
    fn falkon_params(&self) -> FalkonParams {
        FalkonParams {
            lambda: self.lambda,
            cg_max_iterations: self.cg_iterations,
            ..FalkonParams::paper()
        }
    }
}

impl Params for MultiresolutionParams {
    fn check(&self) -> Result<(), String> {
        match self.r0 {
            Radius::Absolute(r) => positive("r0", r)?,
            Radius::MaxDistances(Scaled { max_distances }) => {
                positive("r0.max_distances", max_distances)?
            }
        }
        if self.max_level > 40 {
            return Err(format!(
                "max_level = {}: at most 40 (the radius r0·2^-l is below 1e-12·r0 beyond)",
                self.max_level
            ));
        }
        // The constants of the levels, the stopping rule and the solver are checked by
        // streamrak's own checks (their domains are defined there).
        let error = |e: streamrak::StreamError| e.to_string();
        self.level_params().check().map_err(error)?;
        self.convergence_params().check().map_err(error)?;
        self.falkon_params().check().map_err(error)?;
        positive("lp_landmark_factor", self.lp_landmark_factor)?;
        for (name, v) in [
            ("points_per_level", self.points_per_level),
            ("trace_points", self.trace_points),
        ] {
            if v == 0 {
                return Err(format!("{name} = 0: expected at least 1"));
            }
        }
        if self.method == Method::Falkon {
            let bandwidth = match (self.falkon_bandwidth, &self.falkon_search) {
                (Some(FalkonBandwidth::Chosen(_)), Some(search)) => {
                    search.check()?;
                    Some(1.0)
                }
                (Some(FalkonBandwidth::Chosen(_)), None) => {
                    return Err(
                        "falkon_bandwidth = \"search\" needs falkon_search = { grid, points, batches, train_batches, validation_batches }".into(),
                    )
                }
                (Some(FalkonBandwidth::Value(b)), _) => Some(b),
                (None, _) => None,
            };
            match (bandwidth, self.falkon_landmarks) {
                (Some(b), Some(m)) => {
                    positive("falkon_bandwidth", b)?;
                    match m {
                        LandmarkCount::Count(m) if !(1..=20_000).contains(&m) => {
                            return Err(format!(
                                "falkon_landmarks = {m}: expected 1 ..= 20000 (an m x m matrix of 3.2 GB at most)"
                            ));
                        }
                        LandmarkCount::PerRootN(RootFactor { sqrt_factor }) => {
                            positive("falkon_landmarks.sqrt_factor", sqrt_factor)?
                        }
                        LandmarkCount::Count(_) => {}
                    }
                }
                _ => {
                    return Err(
                        "method = \"falkon\" needs falkon_bandwidth (a number or \"search\") and falkon_landmarks".into(),
                    )
                }
            }
        }
        if self.target_steps == Some(0) || self.rollout_steps == Some(0) {
            return Err("target_steps and rollout_steps must be at least 1".into());
        }
        Ok(())
    }
}

macro_rules! columns {
    ($($name:literal: $doc:literal,)*) => {
        &[$(ColumnDoc { name: $name, doc: $doc }),*]
    };
}

const COLUMNS: &[ColumnDoc] = columns![
    "record": "level | tree | rollout | path | search | summary",
    "level": "level rows: L, the model is levels 0..L (FALKON: the level whose radius is nearest its bandwidth); tree rows: the tree level; rollout rows: L",
    "bandwidth": "the level's kernel radius r_l; search rows: the bandwidth scored",
    "landmarks": "landmarks m_l of the level (search rows: of the search's fits)",
    "cumulative_landmarks": "kernel terms of the model of levels 0..L",
    "candidates": "StreaMRAK: saturated nodes of the level (landmark candidates) when it became ready",
    "nodes": "StreaMRAK: nodes of the tree level when it became ready; tree rows: nodes at the checkpoint",
    "rows": "rows the level's statistics were built from (search rows: the search's training rows)",
    "validation_rows": "search rows: the rows the bandwidth is scored on",
    "ready_after": "StreaMRAK: points streamed when the level became landmark-ready",
    "fitted_after": "points streamed when the level was fitted",
    "fitted_seconds": "wall seconds from the start of training to the level's fit",
    "solve_seconds": "StreaMRAK: wall seconds of the level's FALKON solve",
    "mse": "test MSE of the model of levels 0..L (pendulum: of the state 0.25 s ahead, over all test pairs); search rows: the validation MSE of the bandwidth",
    "rollout_mse": "pendulum: roll-out MSE of levels 0..L averaged over the forecast steps",
    "landmark_x1_median": "median of the first coordinate of the level's landmarks",
    "landmark_x1_q90": "90 % quantile of the first coordinate of the level's landmarks",
    "points_seen": "tree rows: points streamed at the checkpoint",
    "saturated": "tree rows: saturated nodes of the level",
    "covering_fraction": "tree rows: the level covering fraction cf_l",
    "step": "rollout / path rows: forecast step k (k x 0.25 s ahead)",
    "horizon_seconds": "rollout / path rows: forecast horizon in seconds",
    "deepest": "rollout rows: whether L is the deepest fitted level",
    "path": "path rows: which pendulum and whether true or predicted",
    "mass1_x": "path rows: x of the first mass",
    "mass1_y": "path rows: y of the first mass",
    "mass2_x": "path rows: x of the second mass",
    "mass2_y": "path rows: y of the second mass",
    "levels_fitted": "summary: fitted levels",
    "deepest_level": "summary: deepest fitted level",
    "mse_first": "summary: test MSE of the shallowest model",
    "mse_deepest": "summary: test MSE of the deepest model",
    "mse_best": "summary: smallest test MSE over L",
    "mse_ratio_deepest_to_first": "summary: mse_deepest / mse_first",
    "rollout_mse_first": "summary (pendulum): mean roll-out MSE of the shallowest model",
    "rollout_mse_deepest": "summary (pendulum): mean roll-out MSE of the deepest model",
    "rollout_ratio_deepest_to_first": "summary (pendulum): rollout_mse_deepest / rollout_mse_first",
    "rollout_growth": "summary (pendulum): roll-out MSE at the last step / at step 1, deepest model",
    "deepest_x1_q90": "summary: 90 % quantile of the first coordinate of the deepest level's landmarks",
    "total_landmarks": "summary: kernel terms of the deepest model",
    "stream_points": "summary: training points streamed",
    "tree_nodes": "summary: cover-tree nodes at the end (StreaMRAK)",
    "occupied": "summary: points not inserted because the separation check found them occupied",
    "train_seconds": "summary: wall seconds of training (stream and fits)",
    "train_cpu_seconds": "summary: thread CPU seconds of training",
    "points_per_second": "summary: training points per CPU second",
    "eval_seconds": "summary: wall seconds of the evaluation",
];

/// The data of the cells of one split.
pub enum Prepared {
    Regression(Box<RegressionData>),
    Pendulum(Arc<PendulumTrajectories>),
}

/// Training and test sets, targets as one column.
pub struct RegressionData {
    train_x: Array2<f64>,
    train_y: Array2<f64>,
    test_x: Array2<f64>,
    test_y: Array2<f64>,
}

struct RegressionStream<'a> {
    x: &'a Array2<f64>,
    y: &'a Array2<f64>,
    order: Vec<usize>,
}

impl PairStream for RegressionStream<'_> {
    fn points(&self) -> usize {
        self.order.len()
    }
    fn dim(&self) -> usize {
        self.x.ncols()
    }
    fn targets(&self) -> usize {
        self.y.ncols()
    }
    fn order(&self) -> &[usize] {
        &self.order
    }
    fn source_pair(&self, r: usize, x: &mut [f64], y: &mut [f64]) {
        x.iter_mut().zip(self.x.row(r)).for_each(|(a, b)| *a = *b);
        y.iter_mut().zip(self.y.row(r)).for_each(|(a, b)| *a = *b);
    }
}

/// Pairs (s_t, s_{t+Δ}) of the training trajectories, t < pair_states − Δ.
struct PendulumStream<'a> {
    states: &'a Array3<f64>,
    per_trajectory: usize,
    offset: usize,
    order: Vec<usize>,
}

impl PairStream for PendulumStream<'_> {
    fn points(&self) -> usize {
        self.order.len()
    }
    fn dim(&self) -> usize {
        4
    }
    fn targets(&self) -> usize {
        4
    }
    fn order(&self) -> &[usize] {
        &self.order
    }
    fn source_pair(&self, k: usize, x: &mut [f64], y: &mut [f64]) {
        let (traj, t) = (k / self.per_trajectory, k % self.per_trajectory);
        for c in 0..4 {
            x[c] = self.states[[traj, t, c]];
            y[c] = self.states[[traj, t + self.offset, c]];
        }
    }
}

fn mse(prediction: &Array2<f64>, truth: ArrayView2<f64>) -> f64 {
    (prediction - &truth)
        .mapv(|v| v * v)
        .mean()
        .unwrap_or(f64::NAN)
}

fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * q).round() as usize]
}

/// Cumulative predictions: `out[k]` = Σ_{j ≤ k} contributions[j].
fn cumulative(contributions: Vec<Array2<f64>>) -> Vec<Array2<f64>> {
    let mut out: Vec<Array2<f64>> = Vec::with_capacity(contributions.len());
    for c in contributions {
        let next = match out.last() {
            Some(prev) => prev + &c,
            None => c,
        };
        out.push(next);
    }
    out
}

fn base_row(record: &str) -> Row {
    let mut r = Row::new();
    r.insert("record".into(), record.into());
    r
}

fn put(r: &mut Row, k: &str, v: impl Into<Value>) {
    r.insert(k.into(), v.into());
}

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map_or(Value::Null, Into::into)
}

crate::register_kind!(Multiresolution);

impl Kind for Multiresolution {
    type Params = MultiresolutionParams;
    type Shared = Prepared;
    const NAME: &'static str = "multiresolution_regression";
    const SUMMARY: &'static str = "StreaMRAK, LP-KRR or single-bandwidth FALKON on one stream: test MSE per level, landmarks, readiness, cover-tree counts; pendulum roll-outs (StreaMRAK spec §8)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    /// The draws (cover-tree and landmark streams) are seeded from the method alone: every
    /// setting of one method sees the same random numbers (common random numbers), and a
    /// setting only another method reads (`falkon_landmarks`, `lp_landmark_factor`, the
    /// StreaMRAK thresholds) never moves its numbers. (Before, every parameter seeded every
    /// method.)
    fn stream(p: &MultiresolutionParams) -> serde_json::Value {
        crate::kinds::common::params::read_by(p, &["method"])
    }

    fn check_data(data: &DataSpec) -> Result<(), String> {
        // The pendulum's trajectories are regression data too.
        data.require_regression()
    }

    fn upstream(p: &MultiresolutionParams) -> Option<&'static str> {
        p.method.authors_task().map(|_| super::authors::UPSTREAM)
    }

    fn cost(p: &MultiresolutionParams) -> f64 {
        match p.method {
            // The authors' Python: about 20x the project's.
            Method::AuthorsStreamrak => 20.0,
            Method::AuthorsLpKrr => 10.0,
            Method::Streamrak => 1.0,
            Method::LpKrr => 2.0,
            Method::Falkon => match p.falkon_landmarks {
                Some(LandmarkCount::Count(m)) => 1.0 + (m as f64 / 1000.0).powi(2),
                // About 10·√n landmarks: the costliest cell.
                _ => 30.0,
            },
        }
    }

    fn prepare(data: &DataView) -> Result<Prepared> {
        if let DataView::Trajectories(t) = data {
            return Ok(Prepared::Pendulum(t.clone()));
        }
        let sets = data.regression()?;
        let column = |y: Array1<f64>| y.insert_axis(Axis(1));
        Ok(Prepared::Regression(Box::new(RegressionData {
            train_x: sets.train.x,
            train_y: column(sets.train.y),
            test_x: sets.test.x,
            test_y: column(sets.test.y),
        })))
    }

    fn run_cell(data: &Prepared, p: &MultiresolutionParams, ctx: &CellContext) -> Result<Vec<Row>> {
        let r0 = match (p.r0, data) {
            (Radius::Absolute(r), _) => r,
            (Radius::MaxDistances(s), Prepared::Pendulum(t)) => s.max_distances * t.max_distance,
            (Radius::MaxDistances(_), _) => {
                bail!("r0 = {{ max_distances = ... }} needs the pendulum data (data.source = \"double_pendulum\")")
            }
        };
        let falkon = p.falkon_params();
        let settings = Settings {
            method: p.method,
            r0,
            streamrak: Settings::streamrak_params(
                r0,
                p.level_params(),
                p.convergence_params(),
                falkon,
                p.max_level,
            ),
            falkon,
            points_per_level: p.points_per_level,
            lp_landmark_factor: p.lp_landmark_factor,
            falkon_bandwidth: match p.falkon_bandwidth {
                Some(FalkonBandwidth::Value(b)) => b,
                _ => r0,
            },
            falkon_landmarks: p.falkon_landmarks.unwrap_or(LandmarkCount::Count(1)),
            falkon_solver: p.falkon_solver,
            falkon_search: match p.falkon_bandwidth {
                Some(FalkonBandwidth::Chosen(_)) => p.falkon_search,
                _ => None,
            },
            trace_points: p.trace_points,
        };
        match data {
            Prepared::Regression(data) => {
                let RegressionData {
                    train_x,
                    train_y,
                    test_x,
                    test_y,
                } = data.as_ref();
                if p.target_steps.is_some()
                    || p.pair_states.is_some()
                    || p.rollout_steps.is_some()
                    || p.paths.is_some()
                {
                    bail!("target_steps, pair_states, rollout_steps and paths apply to the pendulum data only");
                }
                let rows: Vec<usize> = (0..train_x.nrows()).collect();
                let order = ctx.shuffled(&rows);
                if let Some(task) = p.method.authors_task() {
                    let mut params = serde_json::to_value(p)?;
                    params["r0"] = serde_json::json!(r0);
                    let seed: u64 = rand::Rng::random(&mut ctx.rng("authors"));
                    return Ok(super::authors::run(
                        task, train_x, train_y, &order, test_x, test_y, params, seed, COLUMNS,
                    )?);
                }
                let stream = RegressionStream {
                    x: train_x,
                    y: train_y,
                    order,
                };
                let trained = train(&stream, &settings, ctx)?;
                let clock = std::time::Instant::now();
                let cumulative = cumulative(trained.contributions(test_x.view())?);
                let errors: Vec<f64> = cumulative.iter().map(|f| mse(f, test_y.view())).collect();
                let eval = clock.elapsed().as_secs_f64();
                Ok(report(&trained, &errors, None, eval))
            }
            Prepared::Pendulum(_) if p.method.authors_task().is_some() => {
                bail!("the authors' code runs side by side on regression streams (E1, E2) only")
            }
            Prepared::Pendulum(t) => pendulum(t, p, &settings, ctx),
        }
    }
}

/// Rows of every record but the pendulum's roll-outs and paths.
fn report(
    trained: &Trained,
    errors: &[f64],
    rollout: Option<&[Vec<f64>]>,
    eval_seconds: f64,
) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut cumulative_landmarks = 0;
    for (k, l) in trained.levels.iter().enumerate() {
        let lm = &l.expansion.landmarks;
        cumulative_landmarks += lm.nrows();
        let mut x1: Vec<f64> = lm.column(0).to_vec();
        let mut r = base_row("level");
        put(&mut r, "level", l.level);
        put(&mut r, "bandwidth", l.expansion.bandwidth);
        put(&mut r, "landmarks", lm.nrows());
        put(&mut r, "cumulative_landmarks", cumulative_landmarks);
        r.insert("candidates".into(), opt(l.candidates));
        r.insert("nodes".into(), opt(l.nodes));
        put(&mut r, "rows", l.rows);
        r.insert("ready_after".into(), opt(l.ready_after.map(|v| v as usize)));
        put(&mut r, "fitted_after", l.fitted_after as usize);
        put(&mut r, "fitted_seconds", l.fitted_seconds);
        r.insert("solve_seconds".into(), opt(l.solve_seconds));
        put(&mut r, "mse", errors[k]);
        if let Some(roll) = rollout {
            put(&mut r, "rollout_mse", mean(&roll[k]));
        }
        put(&mut r, "landmark_x1_median", quantile(&mut x1, 0.5));
        put(&mut r, "landmark_x1_q90", quantile(&mut x1, 0.9));
        rows.push(r);
    }
    if let Some(search) = &trained.search {
        for &(bandwidth, error) in &search.errors {
            let mut r = base_row("search");
            put(&mut r, "bandwidth", bandwidth);
            put(&mut r, "mse", error);
            put(&mut r, "landmarks", search.landmarks);
            put(&mut r, "rows", search.train_rows);
            put(&mut r, "validation_rows", search.validation_rows);
            rows.push(r);
        }
    }
    for counts in &trained.trace {
        for (level, &(nodes, saturated, cf)) in counts.levels.iter().enumerate() {
            let mut r = base_row("tree");
            put(&mut r, "points_seen", counts.points_seen);
            put(&mut r, "level", level);
            put(&mut r, "nodes", nodes);
            put(&mut r, "saturated", saturated);
            put(&mut r, "covering_fraction", cf);
            rows.push(r);
        }
    }
    let mut r = base_row("summary");
    let n = trained.levels.len();
    put(&mut r, "levels_fitted", n);
    r.insert(
        "deepest_level".into(),
        opt(trained.levels.last().map(|l| l.level)),
    );
    let first = errors.first().copied().unwrap_or(f64::NAN);
    let last = errors.last().copied().unwrap_or(f64::NAN);
    put(&mut r, "mse_first", first);
    put(&mut r, "mse_deepest", last);
    put(
        &mut r,
        "mse_best",
        errors.iter().copied().fold(f64::NAN, f64::min),
    );
    put(&mut r, "mse_ratio_deepest_to_first", last / first);
    if let Some(roll) = rollout {
        let (a, b) = (
            roll.first().map_or(f64::NAN, |v| mean(v)),
            roll.last().map_or(f64::NAN, |v| mean(v)),
        );
        put(&mut r, "rollout_mse_first", a);
        put(&mut r, "rollout_mse_deepest", b);
        put(&mut r, "rollout_ratio_deepest_to_first", b / a);
        let growth = roll.last().map_or(f64::NAN, |v| {
            v.last().copied().unwrap_or(f64::NAN) / v.first().copied().unwrap_or(f64::NAN)
        });
        put(&mut r, "rollout_growth", growth);
    }
    let mut deepest_x1: Vec<f64> = trained
        .levels
        .last()
        .map(|l| l.expansion.landmarks.column(0).to_vec())
        .unwrap_or_default();
    put(&mut r, "deepest_x1_q90", quantile(&mut deepest_x1, 0.9));
    put(&mut r, "total_landmarks", cumulative_landmarks);
    put(&mut r, "stream_points", trained.stream_points);
    r.insert("tree_nodes".into(), opt(trained.tree_nodes));
    r.insert("occupied".into(), opt(trained.occupied.map(|v| v as usize)));
    put(&mut r, "train_seconds", trained.train_seconds);
    put(&mut r, "train_cpu_seconds", trained.train_cpu_seconds);
    put(
        &mut r,
        "points_per_second",
        trained.stream_points as f64 / trained.train_cpu_seconds,
    );
    put(&mut r, "eval_seconds", eval_seconds);
    rows.push(r);
    rows
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The pendulum experiment (spec §8.3).
fn pendulum(
    t: &PendulumTrajectories,
    p: &MultiresolutionParams,
    settings: &Settings,
    ctx: &CellContext,
) -> Result<Vec<Row>> {
    let offset = p.target_steps.unwrap_or(10);
    let states = t.train.dim().1;
    let usable = p.pair_states.unwrap_or(500).min(states);
    if usable <= offset {
        bail!(
            "target_steps = {offset}: the training trajectories have {usable} usable states; need more than {offset}"
        );
    }
    let rollout_steps = p.rollout_steps.unwrap_or(49);
    let test_states = t.test.dim().1;
    if rollout_steps * offset >= test_states {
        bail!(
            "rollout_steps x target_steps = {} x {offset}: the test trajectories have only {test_states} states",
            rollout_steps
        );
    }
    let per_trajectory = usable - offset;
    let pairs: Vec<usize> = (0..t.train.dim().0 * per_trajectory).collect();
    let stream = PendulumStream {
        states: &t.train,
        per_trajectory,
        offset,
        order: ctx.shuffled(&pairs),
    };
    let trained = train(&stream, settings, ctx)?;
    let clock = std::time::Instant::now();
    // One-step test pairs (s_t, s_{t+Δ}) of the recorded test states.
    let n_test = t.test.dim().0;
    let test_pairs = n_test * (test_states - offset);
    let mut tx = Array2::zeros((test_pairs, 4));
    let mut ty = Array2::zeros((test_pairs, 4));
    for i in 0..n_test {
        for s in 0..test_states - offset {
            let row = i * (test_states - offset) + s;
            for c in 0..4 {
                tx[[row, c]] = t.test[[i, s, c]];
                ty[[row, c]] = t.test[[i, s + offset, c]];
            }
        }
    }
    let errors: Vec<f64> = cumulative(trained.contributions(tx.view())?)
        .iter()
        .map(|f| mse(f, ty.view()))
        .collect();
    // Roll-outs of every model 0..L from the true initial states; the deepest model's paths.
    let predict = |x: &Array2<f64>, upto: usize| -> Result<Array2<f64>> {
        let mut f = Array2::zeros((x.nrows(), 4));
        for l in &trained.levels[..=upto] {
            f += &l.expansion.predict(x.view())?;
        }
        Ok(f)
    };
    let mut rollout = Vec::new();
    let mut paths = Vec::new();
    let deepest = trained.levels.len().checked_sub(1);
    for upto in 0..trained.levels.len() {
        let mut s = t.test_initial.clone();
        let mut per_step = Vec::with_capacity(rollout_steps);
        let mut trajectory = vec![s.clone()];
        for k in 1..=rollout_steps {
            s = predict(&s, upto)?;
            let truth = t.test.index_axis(Axis(1), k * offset);
            per_step.push(mse(&s, truth));
            trajectory.push(s.clone());
        }
        rollout.push(per_step);
        if Some(upto) == deepest {
            paths = trajectory;
        }
    }
    let eval = clock.elapsed().as_secs_f64();
    let mut rows = report(&trained, &errors, Some(&rollout), eval);
    let step_seconds = offset as f64 * t.dt;
    for (k, per_step) in rollout.iter().enumerate() {
        for (step, &e) in per_step.iter().enumerate() {
            let mut r = base_row("rollout");
            put(&mut r, "level", trained.levels[k].level);
            put(&mut r, "step", step + 1);
            put(&mut r, "horizon_seconds", (step + 1) as f64 * step_seconds);
            put(&mut r, "mse", e);
            r.insert("deepest".into(), Value::Bool(Some(k) == deepest));
            rows.push(r);
        }
    }
    let shown = p.paths.unwrap_or(3).min(n_test);
    for i in 0..shown {
        for (label, state_at) in [("true", true), ("predicted", false)] {
            for (step, predicted) in paths.iter().enumerate() {
                let s: [f64; 4] = if state_at {
                    std::array::from_fn(|c| t.test[[i, step * offset, c]])
                } else {
                    std::array::from_fn(|c| predicted[[i, c]])
                };
                let pos = t.pendulum.positions(&s);
                let mut r = base_row("path");
                put(&mut r, "path", format!("pendulum {}, {label}", i + 1));
                put(&mut r, "step", step);
                put(&mut r, "horizon_seconds", step as f64 * step_seconds);
                put(&mut r, "mass1_x", pos[0]);
                put(&mut r, "mass1_y", pos[1]);
                put(&mut r, "mass2_x", pos[2]);
                put(&mut r, "mass2_y", pos[3]);
                rows.push(r);
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pendulum_pairs_are_states_target_steps_apart() {
        let states = Array3::from_shape_fn((2, 6, 4), |(i, t, c)| (100 * i + 10 * t + c) as f64);
        let stream = PendulumStream {
            states: &states,
            per_trajectory: 6 - 2,
            offset: 2,
            order: vec![5, 0],
        };
        let (mut x, mut y) = ([0.0; 4], [0.0; 4]);
        stream.pair(0, &mut x, &mut y);
        // Pair 5 = trajectory 1, t = 1: s_1 -> s_3.
        assert_eq!(x, [110.0, 111.0, 112.0, 113.0]);
        assert_eq!(y, [130.0, 131.0, 132.0, 133.0]);
        stream.pair(1, &mut x, &mut y);
        assert_eq!((x[0], y[0]), (0.0, 20.0));
    }

    #[test]
    fn cumulative_predictions_add_the_levels_in_order() {
        let parts = vec![
            Array2::from_elem((2, 1), 1.0),
            Array2::from_elem((2, 1), 0.5),
            Array2::from_elem((2, 1), 0.25),
        ];
        let c = cumulative(parts);
        assert_eq!(
            c.iter().map(|a| a[[0, 0]]).collect::<Vec<_>>(),
            [1.0, 1.5, 1.75]
        );
    }

    #[test]
    fn the_root_radius_is_a_number_or_a_multiple_of_max_distance() {
        let parse = |text: &str| -> Result<MultiresolutionParams, String> {
            let p: MultiresolutionParams =
                toml::from_str(&format!("method = \"streamrak\"\nmax_level = 3\n{text}"))
                    .map_err(|e| e.to_string())?;
            p.check().map(|_| p)
        };
        assert_eq!(parse("r0 = 2.0").unwrap().r0, Radius::Absolute(2.0));
        assert_eq!(
            parse("r0 = { max_distances = 3.0 }").unwrap().r0,
            Radius::MaxDistances(Scaled { max_distances: 3.0 })
        );
        assert!(parse("r0 = -1.0").unwrap_err().contains("r0 = -1"));
        assert!(parse("r0 = { max_distance = 3.0 }").is_err());
        let err =
            toml::from_str::<MultiresolutionParams>("method = \"falkon\"\nmax_level = 3\nr0 = 1.0")
                .unwrap()
                .check()
                .unwrap_err();
        assert!(err.contains("falkon_bandwidth"), "{err}");
    }

    /// Every parameter an authors' cell passes (the params with every optional field set, and
    /// the radius) is one the kit's `driver.py` maps, ignores by name or reads itself: it
    /// refuses any other, and the cell then fails.
    #[test]
    fn the_authors_driver_knows_every_parameter_a_cell_passes() {
        let p: MultiresolutionParams = toml::from_str(
            "method = \"authors_streamrak\"\nmax_level = 3\nr0 = 1.0\n\
             falkon_landmarks = 1000\nfalkon_solver = \"matrix_free\"\n\
             falkon_bandwidth = \"search\"\n\
             falkon_search = { grid = [1.0, -5.0], points = 20, batches = 200, train_batches = 5, validation_batches = 2 }\n\
             target_steps = 1\npair_states = 2\nrollout_steps = 3\npaths = 4",
        )
        .unwrap();
        let mut v = serde_json::to_value(&p).unwrap();
        v["r0"] = serde_json::json!(1.0);
        assert!(
            v.get("falkon_search").is_some() && v.get("delta0").is_some(),
            "{v}"
        );
        let own = crate::upstream::driver::driver_names("streamrak", "OWN_KEYS");
        assert!(own.iter().any(|k| k == "batches"), "{own:?}");
        let names = ["STREAMRAK_KEYS", "LP_KRR_KEYS", "IGNORED", "OWN_KEYS"];
        let unknown = crate::upstream::driver::unknown_to_driver("streamrak", &names, &v);
        assert!(unknown.is_empty(), "driver.py does not know {unknown:?}");
    }

    /// FALKON's landmarks are a count or c·√n; its bandwidth a number or "search" (then with
    /// the search's settings), and the grid is numpy's logspace (the authors' VarSinus bandwidth 0.000379 is its 15th
    /// point of logspace(1, -5, 20)).
    #[test]
    fn falkon_takes_a_landmark_count_or_factor_and_a_bandwidth_or_a_search() {
        let parse = |text: &str| -> Result<MultiresolutionParams, String> {
            let p: MultiresolutionParams = toml::from_str(&format!(
                "method = \"falkon\"\nmax_level = 3\nr0 = 1.0\n{text}"
            ))
            .map_err(|e| e.to_string())?;
            p.check().map(|_| p)
        };
        let p = parse("falkon_bandwidth = 0.5\nfalkon_landmarks = { sqrt_factor = 10.0 }").unwrap();
        assert_eq!(p.falkon_landmarks.unwrap().of(2_200_000), 14_832);
        assert_eq!(p.falkon_solver, FalkonSolver::Statistics);
        assert_eq!(LandmarkCount::Count(300).of(10), 300);
        let search = "falkon_search = { grid = [1.0, -5.0], points = 20, batches = 200, train_batches = 5, validation_batches = 2 }";
        let p = parse(&format!(
            "falkon_landmarks = 1000\nfalkon_solver = \"matrix_free\"\nfalkon_bandwidth = \"search\"\n{search}"
        ))
        .unwrap();
        let grid = p.falkon_search.unwrap().bandwidths();
        assert_eq!(grid.len(), 20);
        assert_eq!((grid[0], grid[19]), (10.0, 1e-5));
        assert!((grid[14] - 0.000379269).abs() < 1e-9, "{}", grid[14]);
        // A fixed bandwidth ignores the search's settings; "search" needs them.
        let fixed = parse(&format!(
            "falkon_landmarks = 1000\nfalkon_bandwidth = 0.5\n{search}"
        ))
        .unwrap();
        assert_eq!(fixed.falkon_bandwidth, Some(FalkonBandwidth::Value(0.5)));
        let bare = parse("falkon_landmarks = 1000\nfalkon_bandwidth = \"search\"").unwrap_err();
        assert!(bare.contains("needs falkon_search"), "{bare}");
        assert!(parse("falkon_landmarks = 1000\nfalkon_bandwidth = \"grid\"").is_err());
        let too_many = parse(
            "falkon_landmarks = 1000\nfalkon_bandwidth = \"search\"\nfalkon_search = { grid = [1.0, -1.0], points = 3, batches = 10, train_batches = 8, validation_batches = 3 }",
        )
        .unwrap_err();
        assert!(too_many.contains("10 at most"), "{too_many}");
        assert!(parse("falkon_bandwidth = 0.5\nfalkon_landmarks = { sqrt_factor = 0.0 }").is_err());
        assert!(parse("falkon_bandwidth = 0.5\nfalkon_landmarks = 20001").is_err());
    }
}
