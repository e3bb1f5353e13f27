//! StreaMRAK and its two baselines trained on one stream of (x, y) pairs (spec §5, §7), with
//! what the StreaMRAK kind reports of the training: the fitted levels as kernel expansions, per
//! level the landmarks, rows and stream positions, and the cover tree's counts at checkpoints.

use anyhow::{bail, Result};
use kernel_core::{Predictor, StreamingRegressor};
use ndarray::{Array2, ArrayView2};
use rand::Rng;
use serde::{Deserialize, Serialize};
use streamrak::baselines::{choose_bandwidth, FalkonBaseline, LpKrr, MatrixFreeFalkon};
use streamrak::falkon::{Expansion, FalkonParams};
use streamrak::model::{Streamrak, StreamrakParams};
use streamrak::statistics::{ConvergenceParams, CHUNK};
use streamrak::{CoverTreeParams, LevelParams};

use super::multiresolution_regression::{FalkonSolver, LandmarkCount, RootFactor};
use crate::context::CellContext;
use crate::kinds::common::clock::Clock;

/// The method a cell trains.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The damped cover tree's landmarks per level, levels fitted as their statistics settle.
    Streamrak,
    /// The same pyramid on one fixed random landmark set, a fixed number of points per level.
    LpKrr,
    /// One bandwidth, one landmark set drawn with replacement, the whole stream.
    Falkon,
    /// The authors' Python StreaMRAK (upstream `streamrak`; `super::authors`).
    AuthorsStreamrak,
    /// The authors' Python LP-KRR (MRFALKON).
    AuthorsLpKrr,
}

impl Method {
    /// The driver task of the authors' code, for its methods.
    pub fn authors_task(self) -> Option<&'static str> {
        match self {
            Method::AuthorsStreamrak => Some("streamrak"),
            Method::AuthorsLpKrr => Some("lp_krr"),
            _ => None,
        }
    }
}

/// The authors' bandwidth search for FALKON (spec §7, `*_FALKON_choose_bw.py`): the training
/// pairs in `batches` equal batches of their source order (the pendulum: whole trajectories, as
/// the authors batch them; the regression sets: their rows, drawn iid), `train_batches` and
/// `validation_batches` of them drawn at random, `sqrt_factor`·√n_train landmarks drawn with
/// replacement from the training batches, and the bandwidths 10^a .. 10^b (`grid = [a, b]`,
/// `points` of them, numpy's logspace) scored by the validation MSE.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FalkonSearch {
    pub grid: [f64; 2],
    pub points: usize,
    pub batches: usize,
    pub train_batches: usize,
    pub validation_batches: usize,
    #[serde(default = "ten")]
    pub sqrt_factor: f64,
}

fn ten() -> f64 {
    10.0
}

impl FalkonSearch {
    /// Checks the search's settings: finite grid ends, at least one point, and at least one
    /// training and one validation batch among the batches.
    pub fn check(&self) -> Result<(), String> {
        if !self.grid.iter().all(|v| v.is_finite()) || self.points == 0 {
            return Err(format!(
                "falkon_search: grid = {:?} with {} points: expected finite log10 ends and at least one point",
                self.grid, self.points
            ));
        }
        if self.train_batches == 0
            || self.validation_batches == 0
            || self.train_batches + self.validation_batches > self.batches
        {
            return Err(format!(
                "falkon_search: {} training + {} validation batches of {}: expected at least one of each, {} at most together",
                self.train_batches, self.validation_batches, self.batches, self.batches
            ));
        }
        if !(self.sqrt_factor.is_finite() && self.sqrt_factor > 0.0) {
            return Err(format!(
                "falkon_search.sqrt_factor = {}: expected a finite number > 0",
                self.sqrt_factor
            ));
        }
        Ok(())
    }

    /// The bandwidths, numpy's `logspace(a, b, points)`.
    pub fn bandwidths(&self) -> Vec<f64> {
        let [a, b] = self.grid;
        let k = self.points;
        (0..k)
            .map(|i| {
                let t = if k == 1 {
                    0.0
                } else {
                    i as f64 / (k - 1) as f64
                };
                10f64.powf(a + (b - a) * t)
            })
            .collect()
    }
}

/// What the bandwidth search saw: per bandwidth its validation MSE, and its sizes.
pub struct SearchReport {
    pub errors: Vec<(f64, f64)>,
    pub landmarks: usize,
    pub train_rows: usize,
    pub validation_rows: usize,
}

/// Everything training needs besides the stream.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub method: Method,
    pub r0: f64,
    pub streamrak: StreamrakParams,
    pub falkon: FalkonParams,
    /// LP-KRR: points each level consumes and landmarks (m = factor·√n).
    pub points_per_level: usize,
    pub lp_landmark_factor: f64,
    /// FALKON: bandwidth and landmark count.
    pub falkon_bandwidth: f64,
    pub falkon_landmarks: LandmarkCount,
    pub falkon_solver: FalkonSolver,
    /// FALKON: choose the bandwidth by the authors' search (`falkon_bandwidth = "search"`).
    pub falkon_search: Option<FalkonSearch>,
    /// Cover-tree checkpoints over the stream.
    pub trace_points: usize,
}

impl Settings {
    /// StreaMRAK's constants for a root radius: the tree's (α, D_cf, h fixed by the paper), the
    /// levels', the stopping rule's and the solver's.
    pub fn streamrak_params(
        r0: f64,
        levels: LevelParams,
        convergence: ConvergenceParams,
        falkon: FalkonParams,
        max_level: usize,
    ) -> StreamrakParams {
        StreamrakParams {
            tree: CoverTreeParams::paper(r0),
            levels,
            convergence,
            falkon,
            max_level,
        }
    }
}

/// A stream of training pairs, read by position in the order they arrive.
pub trait PairStream: Sync {
    fn points(&self) -> usize;
    fn dim(&self) -> usize;
    fn targets(&self) -> usize;
    /// Writes pair `i` (in stream order) into `x` and `y`.
    fn pair(&self, i: usize, x: &mut [f64], y: &mut [f64]) {
        self.source_pair(self.order()[i], x, y)
    }
    /// The source index of each stream position (the stream is the source in this order).
    fn order(&self) -> &[usize];
    /// Writes the pair of source index `k` (the data's own order) into `x` and `y`.
    fn source_pair(&self, k: usize, x: &mut [f64], y: &mut [f64]);
}

/// One level of a trained model (FALKON: its one expansion).
pub struct Level {
    pub level: usize,
    pub expansion: Expansion,
    /// Rows its statistics were built from.
    pub rows: usize,
    /// StreaMRAK: points streamed when it became landmark-ready; nodes of its tree level and
    /// saturated ones (landmark candidates) then.
    pub ready_after: Option<u64>,
    pub nodes: Option<usize>,
    pub candidates: Option<usize>,
    /// Points streamed and wall seconds since the start when it was fitted.
    pub fitted_after: u64,
    pub fitted_seconds: f64,
    /// Wall seconds of its solve (StreaMRAK).
    pub solve_seconds: Option<f64>,
}

/// Cover-tree counts at one point of the stream.
pub struct TreeCounts {
    pub points_seen: usize,
    /// Per level: nodes, saturated nodes, level covering fraction.
    pub levels: Vec<(usize, usize, f64)>,
}

/// A trained model and how training went.
pub struct Trained {
    pub levels: Vec<Level>,
    pub trace: Vec<TreeCounts>,
    /// Points streamed into the model.
    pub stream_points: usize,
    pub train_seconds: f64,
    pub train_cpu_seconds: f64,
    /// FALKON with `falkon_search`: the search's validation errors.
    pub search: Option<SearchReport>,
    /// StreaMRAK: tree nodes and points rejected as occupied (separation) at the end.
    pub tree_nodes: Option<usize>,
    pub occupied: Option<u64>,
}

impl Trained {
    /// Predictions of the levels, shallowest first: `contributions[k]` is level k's part.
    pub fn contributions(&self, x: ArrayView2<f64>) -> Result<Vec<Array2<f64>>> {
        Ok(self
            .levels
            .iter()
            .map(|l| l.expansion.predict(x))
            .collect::<Result<_, _>>()?)
    }
}

/// Trains the cell's method on the stream.
pub fn train(stream: &dyn PairStream, s: &Settings, ctx: &CellContext) -> Result<Trained> {
    if stream.points() < 2 {
        bail!(
            "the training stream has {} points; need at least 2",
            stream.points()
        );
    }
    let clock = Clock::start();
    let mut trained = match s.method {
        Method::Streamrak => train_streamrak(stream, s, ctx, &clock)?,
        Method::LpKrr => train_lp_krr(stream, s, ctx, &clock)?,
        Method::Falkon => train_falkon(stream, s, ctx, &clock)?,
        Method::AuthorsStreamrak | Method::AuthorsLpKrr => {
            anyhow::bail!("the authors' code runs as a process of its own, not here")
        }
    };
    trained.train_seconds = clock.wall();
    trained.train_cpu_seconds = clock.cpu();
    Ok(trained)
}

/// How often a long loop reports progress and polls the budget.
const POLL: usize = 50_000;

fn train_streamrak(
    stream: &dyn PairStream,
    s: &Settings,
    ctx: &CellContext,
    clock: &Clock,
) -> Result<Trained> {
    let (d, p, n) = (stream.dim(), stream.targets(), stream.points());
    let (mut x, mut y) = (vec![0.0; d], vec![0.0; p]);
    stream.pair(0, &mut x, &mut y);
    let mut model = Streamrak::new(&x, &y, s.streamrak)?;
    let mut rng = ctx.rng("tree");
    let every = (n / s.trace_points.max(1)).max(1);
    let mut trace = Vec::new();
    let mut fitted_seconds = Vec::new();
    for i in 1..n {
        stream.pair(i, &mut x, &mut y);
        model.push(&x, &y, &mut rng)?;
        while fitted_seconds.len() < model.levels().len() {
            fitted_seconds.push(clock.wall());
        }
        if (i + 1) % every == 0 || i + 1 == n {
            trace.push(tree_counts(&model, i + 1));
        }
        if i % POLL == 0 {
            ctx.progress(i, n);
            if ctx.over_budget() {
                break;
            }
        }
    }
    model.finish(&mut rng)?;
    while fitted_seconds.len() < model.levels().len() {
        fitted_seconds.push(clock.wall());
    }
    let levels = model
        .levels()
        .iter()
        .zip(fitted_seconds)
        .map(|(l, t)| Level {
            level: l.level,
            expansion: l.expansion.clone(),
            rows: l.rows,
            ready_after: Some(l.ready_after),
            nodes: Some(l.nodes),
            candidates: Some(l.candidates),
            fitted_after: l.fitted_after,
            fitted_seconds: t,
            solve_seconds: Some(l.solve_seconds),
        })
        .collect();
    let tree = model.tree();
    Ok(Trained {
        levels,
        trace,
        stream_points: n,
        train_seconds: 0.0,
        train_cpu_seconds: 0.0,
        search: None,
        tree_nodes: Some(tree.len()),
        occupied: Some(tree.rejections().0),
    })
}

fn tree_counts(model: &Streamrak, seen: usize) -> TreeCounts {
    let tree = model.tree();
    let (nodes, saturated) = (tree.nodes_per_level(), tree.saturated_per_level());
    TreeCounts {
        points_seen: seen,
        levels: (0..nodes.len())
            .map(|l| {
                (
                    nodes[l],
                    saturated.get(l).copied().unwrap_or(0),
                    tree.levels().covering_fraction(l),
                )
            })
            .collect(),
    }
}

/// The authors' bandwidth search on batches of the stream's source ([`FalkonSearch`]); its own
/// random draws (`bandwidth search`), so the final fit's landmarks do not depend on it.
fn search_bandwidth(
    stream: &dyn PairStream,
    search: &FalkonSearch,
    falkon: streamrak::falkon::FalkonParams,
    ctx: &CellContext,
) -> Result<(f64, SearchReport)> {
    let (d, p, n) = (stream.dim(), stream.targets(), stream.points());
    let size = n / search.batches;
    if size == 0 {
        bail!(
            "falkon_search: {} batches of a stream of {n} pairs are empty",
            search.batches
        );
    }
    let mut rng = ctx.rng("bandwidth search");
    let mut ids: Vec<usize> = (0..search.batches).collect();
    rand::seq::SliceRandom::shuffle(ids.as_mut_slice(), &mut rng);
    let gather = |ids: &[usize]| -> (Array2<f64>, Array2<f64>) {
        let rows = ids.len() * size;
        let (mut x, mut y) = (Array2::zeros((rows, d)), Array2::zeros((rows, p)));
        let (mut xi, mut yi) = (vec![0.0; d], vec![0.0; p]);
        for (b, &id) in ids.iter().enumerate() {
            for k in 0..size {
                stream.source_pair(id * size + k, &mut xi, &mut yi);
                let row = b * size + k;
                x.row_mut(row).assign(&ndarray::ArrayView1::from(&xi));
                y.row_mut(row).assign(&ndarray::ArrayView1::from(&yi));
            }
        }
        (x, y)
    };
    let (tx, ty) = gather(&ids[..search.train_batches]);
    let (vx, vy) =
        gather(&ids[search.train_batches..search.train_batches + search.validation_batches]);
    let m = LandmarkCount::PerRootN(RootFactor {
        sqrt_factor: search.sqrt_factor,
    })
    .of(tx.nrows());
    let picks: Vec<usize> = (0..m).map(|_| rng.random_range(0..tx.nrows())).collect();
    let landmarks = tx.select(ndarray::Axis(0), &picks);
    let grid = search.bandwidths();
    let (bandwidth, errors) = choose_bandwidth(
        (tx.view(), ty.view()),
        (vx.view(), vy.view()),
        landmarks.view(),
        &grid,
        falkon,
        &|done, all| ctx.progress(done, all),
    )?;
    Ok((
        bandwidth,
        SearchReport {
            errors: grid.into_iter().zip(errors).collect(),
            landmarks: m,
            train_rows: tx.nrows(),
            validation_rows: vx.nrows(),
        },
    ))
}

/// The two forms of the FALKON baseline (`falkon_solver`).
enum Falkon {
    Statistics(Box<FalkonBaseline>),
    MatrixFree(Box<MatrixFreeFalkon>),
}

/// `m` stream positions drawn uniformly, with or without replacement, as landmark rows.
fn landmarks_from_stream<R: Rng>(
    stream: &dyn PairStream,
    m: usize,
    replacement: bool,
    rng: &mut R,
) -> Array2<f64> {
    let n = stream.points();
    let picks: Vec<usize> = if replacement {
        (0..m).map(|_| rng.random_range(0..n)).collect()
    } else {
        rand::seq::index::sample(rng, n, m.min(n)).into_vec()
    };
    let (d, p) = (stream.dim(), stream.targets());
    let mut out = Array2::zeros((picks.len(), d));
    let mut y = vec![0.0; p];
    for (row, &i) in picks.iter().enumerate() {
        let mut x = vec![0.0; d];
        stream.pair(i, &mut x, &mut y);
        out.row_mut(row).assign(&ndarray::ArrayView1::from(&x));
    }
    out
}

fn train_lp_krr(
    stream: &dyn PairStream,
    s: &Settings,
    ctx: &CellContext,
    clock: &Clock,
) -> Result<Trained> {
    let (d, p, n) = (stream.dim(), stream.targets(), stream.points());
    let m = ((s.lp_landmark_factor * (n as f64).sqrt()).round() as usize).clamp(1, n);
    // LP-KRR draws its landmarks from this stream, and nothing while streaming.
    let mut rng = ctx.rng("landmarks");
    let landmarks = landmarks_from_stream(stream, m, false, &mut rng);
    let mut model = LpKrr::new(
        landmarks,
        s.r0,
        s.points_per_level,
        s.streamrak.max_level,
        s.falkon,
    )?;
    let (mut x, mut y) = (vec![0.0; d], vec![0.0; p]);
    let mut fitted_seconds = Vec::new();
    let mut seen = 0;
    for i in 0..n {
        stream.pair(i, &mut x, &mut y);
        seen = i + 1;
        model.push(&x, &y, &mut rng)?;
        while fitted_seconds.len() < model.levels() {
            fitted_seconds.push(clock.wall());
        }
        if model.is_complete() {
            break;
        }
        if i % POLL == 0 {
            ctx.progress(i, n.min((s.streamrak.max_level + 1) * s.points_per_level));
            if ctx.over_budget() {
                break;
            }
        }
    }
    model.finish(&mut rng)?;
    while fitted_seconds.len() < model.levels() {
        fitted_seconds.push(clock.wall());
    }
    let levels = model
        .expansions()
        .iter()
        .zip(model.fitted_after())
        .zip(fitted_seconds)
        .enumerate()
        .map(|(level, ((e, &after), t))| Level {
            level,
            expansion: e.clone(),
            rows: s.points_per_level.min(n),
            ready_after: None,
            nodes: None,
            candidates: None,
            fitted_after: after,
            fitted_seconds: t,
            solve_seconds: None,
        })
        .collect();
    Ok(Trained {
        levels,
        trace: Vec::new(),
        stream_points: seen,
        train_seconds: 0.0,
        train_cpu_seconds: 0.0,
        search: None,
        tree_nodes: None,
        occupied: None,
    })
}

fn train_falkon(
    stream: &dyn PairStream,
    s: &Settings,
    ctx: &CellContext,
    clock: &Clock,
) -> Result<Trained> {
    let (d, p, n) = (stream.dim(), stream.targets(), stream.points());
    // FALKON draws its landmarks from this stream, and nothing while streaming.
    let (bandwidth, search) = match &s.falkon_search {
        Some(search) => {
            let (bandwidth, report) = search_bandwidth(stream, search, s.falkon, ctx)?;
            (bandwidth, Some(report))
        }
        None => (s.falkon_bandwidth, None),
    };
    let mut rng = ctx.rng("landmarks");
    let landmarks = landmarks_from_stream(stream, s.falkon_landmarks.of(n), true, &mut rng);
    let mut model = match s.falkon_solver {
        FalkonSolver::Statistics => Falkon::Statistics(Box::new(FalkonBaseline::new(
            landmarks, bandwidth, p, s.falkon,
        )?)),
        FalkonSolver::MatrixFree => Falkon::MatrixFree(Box::new(MatrixFreeFalkon::new(
            landmarks, bandwidth, p, s.falkon,
        )?)),
    };
    let (mut bx, mut by) = (Vec::with_capacity(CHUNK * d), Vec::with_capacity(CHUNK * p));
    let (mut x, mut y) = (vec![0.0; d], vec![0.0; p]);
    let mut seen = 0;
    for start in (0..n).step_by(CHUNK) {
        let end = (start + CHUNK).min(n);
        bx.clear();
        by.clear();
        for i in start..end {
            stream.pair(i, &mut x, &mut y);
            bx.extend_from_slice(&x);
            by.extend_from_slice(&y);
        }
        let rows = end - start;
        let (bx, by) = (
            ArrayView2::from_shape((rows, d), &bx)?,
            ArrayView2::from_shape((rows, p), &by)?,
        );
        match &mut model {
            Falkon::Statistics(f) => f.push_rows(bx, by, &mut rng)?,
            Falkon::MatrixFree(f) => f.push_rows(bx, by, &mut rng)?,
        }
        seen = end;
        ctx.progress(end, n);
        if ctx.over_budget() {
            break;
        }
    }
    let expansion = match &mut model {
        Falkon::Statistics(f) => {
            f.finish(&mut rng)?;
            f.expansion()
        }
        Falkon::MatrixFree(f) => {
            // One pass over the rows for Z and one per CG iteration: progress by pass.
            f.solve(&|pass, most| ctx.progress(pass, most))?;
            f.expansion()
        }
    }
    .expect("finished")
    .clone();
    // The level whose bandwidth r0·2^-l is nearest to FALKON's (where it sits on the level axis).
    let level = (s.r0 / bandwidth).log2().round().max(0.0) as usize;
    Ok(Trained {
        levels: vec![Level {
            level,
            expansion,
            rows: seen,
            ready_after: None,
            nodes: None,
            candidates: None,
            fitted_after: seen as u64,
            fitted_seconds: clock.wall(),
            solve_seconds: None,
        }],
        trace: Vec::new(),
        stream_points: seen,
        train_seconds: 0.0,
        train_cpu_seconds: 0.0,
        search,
        tree_nodes: None,
        occupied: None,
    })
}
