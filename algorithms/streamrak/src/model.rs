//! The StreaMRAK driver (spec §2, §5): a Laplacian pyramid of Gaussian-kernel ridge regressions
//! fitted level by level from one stream. Per streamed point: insert it into the damped cover
//! tree; queue the levels that became landmark-ready (with their landmarks); stage the lowest
//! queued level once its predecessor is fitted (its initial rows: the tree's level-(l+1) nodes);
//! feed the point's residual to the collecting level; fit it when its statistics settle. Only
//! the tree, one collector and the fitted levels' coefficients are kept.

use kernel_core::{Predictor, StreamingRegressor};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use rand::seq::index::sample;
use rand::Rng;

use crate::band::BandedExpansion;
use crate::cover_tree::{CoverTreeParams, DampedCoverTree};
use crate::error::StreamError;
use crate::falkon::{Expansion, FalkonParams};
use crate::levels::LevelParams;
use crate::statistics::{
    Accumulation, AccumulationCounts, ConvergenceParams, LevelCollector, LevelStatistics,
};

/// All of StreaMRAK's constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamrakParams {
    pub tree: CoverTreeParams,
    pub levels: LevelParams,
    pub convergence: ConvergenceParams,
    pub falkon: FalkonParams,
    /// Deepest level fitted (levels beyond are ignored).
    pub max_level: usize,
}

/// One fitted level: f_l(x) = Σ_j α_j k_{r_l}(x, λ_j).
#[derive(Debug, Clone, PartialEq)]
pub struct FittedLevel {
    pub level: usize,
    pub expansion: Expansion,
    /// Rows its statistics were built from.
    pub rows: usize,
    /// Points streamed when it became landmark-ready (its landmarks were drawn then).
    pub ready_after: u64,
    /// Points streamed when it was fitted.
    pub fitted_after: u64,
    /// Nodes of its tree level and how many of them were saturated (the landmark candidates)
    /// when its landmarks were drawn.
    pub nodes: usize,
    pub candidates: usize,
    /// Wall seconds of its FALKON solve (Gram matrix, factorisations, CG).
    pub solve_seconds: f64,
    /// The work of accumulating its statistics: its kernel entries and how many are exactly
    /// 0.0, its Gram flops against the dense path's (per level: the sparsity to report).
    pub accumulation: AccumulationCounts,
}

/// A landmark-ready level waiting to collect.
struct Queued {
    level: usize,
    landmarks: Vec<usize>,
    ready_after: u64,
    nodes: usize,
    candidates: usize,
}

/// The model being streamed: a [`StreamingRegressor`] (push the points after the root, then
/// finish) that predicts with the levels fitted so far.
pub struct Streamrak {
    params: StreamrakParams,
    tree: DampedCoverTree,
    /// Landmark-ready levels waiting to collect, shallowest first.
    queue: Vec<Queued>,
    collecting: Option<(Queued, LevelCollector)>,
    fitted: Vec<FittedLevel>,
    /// The fitted levels' expansions with their landmarks in order (for the residuals).
    bands: Vec<BandedExpansion>,
    seen: u64,
    accumulation: Accumulation,
}

impl StreamrakParams {
    /// Checks the constants of the tree, the levels, the stopping rule and the solver.
    pub fn check(&self) -> Result<(), StreamError> {
        self.tree.check()?;
        self.levels.check()?;
        self.convergence.check()?;
        self.falkon.check()
    }
}

impl Streamrak {
    /// A model whose tree is rooted at the first streamed point (x0, y0); an error if a
    /// constant is outside its domain ([`StreamrakParams::check`]).
    pub fn new(x0: &[f64], y0: &[f64], params: StreamrakParams) -> Result<Self, StreamError> {
        params.check()?;
        Ok(Self {
            params,
            tree: DampedCoverTree::new(x0, y0, params.tree)?.with_levels(params.levels),
            queue: Vec::new(),
            collecting: None,
            fitted: Vec::new(),
            bands: Vec::new(),
            seen: 0,
            accumulation: Accumulation::Auto,
        })
    }

    /// The same model with the levels' statistics accumulated on the given path (default
    /// [`Accumulation::Auto`]; the paths give the same sums up to their order and the
    /// negligible entries of the banded path, `crate::statistics`).
    pub fn with_accumulation(mut self, accumulation: Accumulation) -> Self {
        self.accumulation = accumulation;
        self
    }

    /// Prediction of the fitted levels up to `max_level` (all when `None`), one row per point.
    pub fn predict_levels(
        &self,
        x: ArrayView2<f64>,
        max_level: Option<usize>,
    ) -> Result<Array2<f64>, StreamError> {
        kernel_core::error::check_columns(
            "columns of the points vs the tree's",
            x,
            self.tree.centre(0).len(),
        )?;
        let p = self.tree.target(0).len();
        let mut f = Array2::zeros((x.nrows(), p));
        for lvl in self
            .fitted
            .iter()
            .filter(|l| max_level.is_none_or(|m| l.level <= m))
        {
            f += &lvl.expansion.predict(x)?;
        }
        Ok(f)
    }

    /// Starts collecting the lowest queued level if none is collecting and its predecessor is
    /// fitted (or it is level 0), with its initial rows (spec §5 step 1).
    fn stage<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<(), StreamError> {
        if self.collecting.is_some() || self.queue.is_empty() {
            return Ok(());
        }
        let level = self.queue[0].level;
        let predecessor_fitted = level == 0 || self.fitted.iter().any(|f| f.level + 1 == level);
        if !predecessor_fitted {
            return Ok(());
        }
        let queued = self.queue.remove(0);
        let landmark_ids = &queued.landmarks;
        let d = self.tree.centre(0).len();
        let landmarks = Array2::from_shape_fn((landmark_ids.len(), d), |(i, j)| {
            self.tree.centre(landmark_ids[i])[j]
        });
        let bandwidth = self.tree.radius(landmark_ids[0]);
        let p = self.tree.target(0).len();
        let mut stats =
            LevelStatistics::with_accumulation(landmarks, bandwidth, p, self.accumulation)?;
        // Initial rows: the nodes of level l + 1 (at most the lower limit, else topped up with
        // random nodes of the whole tree).
        let lower = self.params.convergence.lower_limit;
        let next: Vec<usize> = (0..self.tree.len())
            .filter(|&k| self.tree.level(k) == level + 1)
            .collect();
        let rows: Vec<usize> = if next.len() > lower {
            sample(rng, next.len(), lower)
                .into_iter()
                .map(|i| next[i])
                .collect()
        } else {
            let mut rows = next.clone();
            let others: Vec<usize> = (0..self.tree.len())
                .filter(|&k| self.tree.level(k) != level + 1)
                .collect();
            let extra = (lower + 1).saturating_sub(rows.len()).min(others.len());
            rows.extend(
                sample(rng, others.len(), extra)
                    .into_iter()
                    .map(|i| others[i]),
            );
            rows
        };
        if !rows.is_empty() {
            let x = Array2::from_shape_fn((rows.len(), d), |(i, j)| self.tree.centre(rows[i])[j]);
            let mut r = Array2::zeros((rows.len(), p));
            for (i, &k) in rows.iter().enumerate() {
                r.row_mut(i).assign(&residual(
                    &self.bands,
                    self.tree.centre(k),
                    self.tree.target(k),
                ));
            }
            stats.add(x.view(), r.view())?;
        }
        self.collecting = Some((queued, LevelCollector::new(stats, self.params.convergence)));
        Ok(())
    }

    fn fit(&mut self) -> Result<(), StreamError> {
        let Some((queued, mut collector)) = self.collecting.take() else {
            return Ok(());
        };
        collector.flush()?;
        let st = collector.statistics();
        if st.rows() == 0 {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let expansion = Expansion::fit(st, self.params.falkon)?;
        self.bands.push(BandedExpansion::new(
            expansion.landmarks.view(),
            expansion.alpha.view(),
            expansion.bandwidth,
        ));
        self.fitted.push(FittedLevel {
            level: queued.level,
            expansion,
            rows: st.rows(),
            ready_after: queued.ready_after,
            fitted_after: self.seen,
            nodes: queued.nodes,
            candidates: queued.candidates,
            solve_seconds: started.elapsed().as_secs_f64(),
            accumulation: *st.counts(),
        });
        Ok(())
    }

    /// The fitted levels, in the order they were fitted.
    pub fn levels(&self) -> &[FittedLevel] {
        &self.fitted
    }

    /// The damped cover tree.
    pub fn tree(&self) -> &DampedCoverTree {
        &self.tree
    }
}

impl Predictor for Streamrak {
    type Output = Array2<f64>;
    type Error = StreamError;

    /// The sum of every fitted level ([`Streamrak::predict_levels`] of all).
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>, StreamError> {
        self.predict_levels(x, None)
    }
}

impl StreamingRegressor for Streamrak {
    /// Streams one point: the tree, the levels that become ready, the collecting level; `rng`
    /// draws the tree's child order, the landmarks and the initial rows.
    fn push<R: Rng + ?Sized>(
        &mut self,
        x: &[f64],
        y: &[f64],
        rng: &mut R,
    ) -> Result<(), StreamError> {
        self.seen += 1;
        self.tree.insert(x, y, rng)?;
        for level in self.tree.take_ready() {
            if level <= self.params.max_level {
                let landmarks = self.tree.landmarks(level, rng);
                if !landmarks.is_empty() {
                    self.queue.push(Queued {
                        level,
                        landmarks,
                        ready_after: self.seen,
                        nodes: self.tree.nodes_per_level()[level],
                        candidates: self.tree.saturated_per_level()[level],
                    });
                }
            }
        }
        self.stage(rng)?;
        if let Some((_, collector)) = &mut self.collecting {
            let r = residual(&self.bands, x, y);
            if collector.push(x, r.as_slice().expect("contiguous"))? {
                self.fit()?;
            }
        }
        Ok(())
    }

    /// End of the stream (spec §5 step 5): fits the collecting level with what it has, then every
    /// queued level in order.
    fn finish<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<(), StreamError> {
        self.fit()?;
        while !self.queue.is_empty() {
            let before = self.queue.len();
            self.stage(rng)?;
            if self.queue.len() == before {
                break; // its predecessor was never fitted
            }
            self.fit()?;
        }
        Ok(())
    }
}

/// y − f(x) of the fitted levels for one point (the residual the next level learns), each
/// level summed over the landmarks within reach of x.
fn residual(bands: &[BandedExpansion], x: &[f64], y: &[f64]) -> Array1<f64> {
    let mut r = ArrayView1::from(y).to_owned();
    let (mut f, mut k) = (vec![0.0; y.len()], Vec::new());
    for band in bands {
        band.value(x, &mut k, &mut f);
        for (ri, fi) in r.iter_mut().zip(&f) {
            *ri -= fi;
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The constants of the small VarSinus-like streams below, levels up to `max_level`.
    fn small_stream_params(max_level: usize) -> StreamrakParams {
        StreamrakParams {
            tree: CoverTreeParams::paper(1.0),
            levels: LevelParams {
                delta0: 10.0,
                ..LevelParams::default_config()
            },
            convergence: ConvergenceParams {
                k_threshold: 5e-3,
                z_threshold: 5e-3,
                track_length: 100,
                interval: 2_000,
                lower_limit: 2_000,
                upper_limit: 20_000,
            },
            falkon: FalkonParams::paper(),
            max_level,
        }
    }

    /// A small VarSinus-like stream: the pyramid fits its levels in order and the test error
    /// falls as levels are added (the paper's hypothesis: MSE falls with level).
    #[test]
    fn the_pyramid_fits_levels_in_order_and_the_error_falls_with_depth() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let f = |x: f64| (1.0 / (x + 0.05)).sin();
        let params = small_stream_params(8);
        let x0 = rng.random::<f64>();
        let mut model = Streamrak::new(&[x0], &[f(x0)], params).unwrap();
        for _ in 0..150_000 {
            let x = rng.random::<f64>();
            model.push(&[x], &[f(x)], &mut rng).unwrap();
        }
        model.finish(&mut rng).unwrap();
        let levels: Vec<usize> = model.levels().iter().map(|l| l.level).collect();
        assert!(levels.len() >= 4, "fitted levels {levels:?}");
        assert!(levels.windows(2).all(|w| w[1] == w[0] + 1), "{levels:?}");
        let test = Array2::from_shape_fn((2_000, 1), |_| rng.random::<f64>());
        let truth = test.mapv(f);
        let mse = |l: usize| {
            (&model.predict_levels(test.view(), Some(l)).unwrap() - &truth)
                .mapv(|v| v * v)
                .mean()
                .unwrap()
        };
        let errors: Vec<f64> = levels.iter().map(|&l| mse(l)).collect();
        eprintln!(
            "levels {levels:?} mse {errors:?} landmarks {:?}",
            model
                .levels()
                .iter()
                .map(|l| l.expansion.landmarks.nrows())
                .collect::<Vec<_>>()
        );
        let (first, last) = (errors[0], *errors.last().unwrap());
        assert!(last < 0.2 * first, "MSE per level {errors:?}");
    }

    /// The banded accumulation (the default) and the dense one fit the same model on a small
    /// VarSinus-like stream: the same levels after the same rows (the stopping rule decided
    /// alike), the same landmarks and zero counts, and predictions equal to rounding (as
    /// amplified by the solves).
    #[test]
    fn banded_and_dense_accumulation_fit_the_same_model() {
        let f = |x: f64| (1.0 / (x + 0.01)).sin();
        let params = small_stream_params(12);
        let fit = |accumulation| {
            let mut rng = ChaCha8Rng::seed_from_u64(5);
            // Dense near 0, like E1's Gamma draws.
            let draw = |rng: &mut ChaCha8Rng| rng.random::<f64>().powi(3);
            let x0 = draw(&mut rng);
            let mut model = Streamrak::new(&[x0], &[f(x0)], params)
                .unwrap()
                .with_accumulation(accumulation);
            for _ in 0..120_000 {
                let x = draw(&mut rng);
                model.push(&[x], &[f(x)], &mut rng).unwrap();
            }
            model.finish(&mut rng).unwrap();
            model
        };
        let (dense, banded) = (fit(Accumulation::Dense), fit(Accumulation::Auto));
        let summary = |m: &Streamrak| {
            m.levels()
                .iter()
                .map(|l| {
                    (
                        l.level,
                        l.rows,
                        l.fitted_after,
                        l.expansion.landmarks.clone(),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(summary(&dense), summary(&banded));
        assert!(dense.levels().len() >= 10, "{}", dense.levels().len());
        for (a, b) in dense.levels().iter().zip(banded.levels()) {
            let (ca, cb) = (&a.accumulation, &b.accumulation);
            assert_eq!(
                (ca.rows, ca.kernel_entries, ca.zero_entries),
                (cb.rows, cb.kernel_entries, cb.zero_entries)
            );
            assert_eq!(ca.banded_blocks, 0);
        }
        let deepest = banded.levels().last().unwrap().accumulation;
        assert!(deepest.zero_fraction() > 0.5 && deepest.banded_blocks > 0);
        assert!(deepest.flop_fraction() < 0.2, "{deepest:?}");
        let test = Array2::from_shape_fn((2_000, 1), |(i, _)| (i as f64 / 2_000.0).powi(3));
        let (pd, pb) = (
            dense.predict(test.view()).unwrap(),
            banded.predict(test.view()).unwrap(),
        );
        let gap = (&pd - &pb).iter().fold(0.0_f64, |g, v| g.max(v.abs()));
        // Rounding is amplified by the levels' solves (10 CG steps on ill-conditioned systems,
        // coefficients up to 1e4 for values up to 1): on this stream the dense path alone moves
        // its predictions by up to 2.6e-4 when OpenBLAS's kernels change (OPENBLAS_CORETYPE
        // Prescott vs SkylakeX), and the banded path differs from it by as much.
        assert!(gap < 2e-3, "largest prediction gap {gap}");
        let mse = |p: &Array2<f64>| {
            p.iter()
                .zip(&test)
                .map(|(v, &x)| (v - f(x)).powi(2))
                .sum::<f64>()
                / 2_000.0
        };
        let (md, mb) = (mse(&pd), mse(&pb));
        assert!((md - mb).abs() < 0.01 * md, "test MSE {md} vs {mb}");
    }
}
