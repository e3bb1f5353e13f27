//! The paper's baselines (spec §7): FALKON with one bandwidth (m landmarks drawn uniformly with
//! replacement from the stream's first points, the whole stream accumulated into one level's
//! statistics) and LP-KRR (the same Laplacian pyramid with bandwidths r₀·2^{−l}, but one fixed
//! landmark set for every level, and each level consuming a fixed number of streamed points).

use kernel_core::{Predictor, StreamingRegressor};
use ndarray::{Array2, ArrayView2};
use rand::Rng;

use crate::error::StreamError;
use crate::falkon::{Expansion, FalkonParams};
use crate::statistics::{LevelStatistics, CHUNK};

/// FALKON with one bandwidth over a whole stream: a [`StreamingRegressor`] whose statistics
/// are sums over the blocks pushed ([`StreamingRegressor::push_rows`] adds a block at once) and
/// which solves once, when finished.
pub struct FalkonBaseline {
    stats: LevelStatistics,
    falkon: FalkonParams,
    /// The solve, once finished.
    fitted: Option<Expansion>,
}

impl FalkonBaseline {
    /// The landmarks (one per row, drawn by the caller: the paper draws m = 10·√n uniformly with
    /// replacement from the training points) and the bandwidth.
    pub fn new(
        landmarks: Array2<f64>,
        bandwidth: f64,
        targets: usize,
        falkon: FalkonParams,
    ) -> Result<Self, StreamError> {
        falkon.check()?;
        Ok(Self {
            stats: LevelStatistics::new(landmarks, bandwidth, targets)?,
            falkon,
            fitted: None,
        })
    }

    /// The solve of the whole stream, once [`StreamingRegressor::finish`]ed.
    pub fn expansion(&self) -> Option<&Expansion> {
        self.fitted.as_ref()
    }
}

impl Predictor for FalkonBaseline {
    type Output = Array2<f64>;
    type Error = StreamError;

    /// f(x) of the finished solve; an error before [`StreamingRegressor::finish`].
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>, StreamError> {
        match &self.fitted {
            Some(e) => e.predict(x),
            None => Err(StreamError::invalid_input(
                "prediction",
                "before the solve",
                "finish() first",
            )),
        }
    }
}

impl StreamingRegressor for FalkonBaseline {
    /// Accumulates one point (a block of one row).
    fn push<R: Rng + ?Sized>(
        &mut self,
        x: &[f64],
        y: &[f64],
        rng: &mut R,
    ) -> Result<(), StreamError> {
        let x = ArrayView2::from_shape((1, x.len()), x).expect("one row");
        let y = ArrayView2::from_shape((1, y.len()), y).expect("one row");
        self.push_rows(x, y, rng)
    }

    /// Accumulates a block of the stream into the statistics at once.
    fn push_rows<R: Rng + ?Sized>(
        &mut self,
        x: ArrayView2<f64>,
        y: ArrayView2<f64>,
        _rng: &mut R,
    ) -> Result<(), StreamError> {
        self.fitted = None;
        self.stats.add(x, y)
    }

    /// Solves once the stream has been seen.
    fn finish<R: Rng + ?Sized>(&mut self, _rng: &mut R) -> Result<(), StreamError> {
        self.fitted = Some(Expansion::fit(&self.stats, self.falkon)?);
        Ok(())
    }
}

/// LP-KRR: level l (bandwidth r₀·2^{−l}, the fixed landmarks) is fitted to the residual of the
/// levels before it from the next `points_per_level` streamed points; levels up to `max_level`
/// (a [`StreamingRegressor`], complete once its last level is fitted).
/// Points are buffered in blocks of at most [`CHUNK`] rows (the residual of a block is one
/// prediction, its statistics one BLAS update): the same sums as point by point, since the fitted
/// levels do not change while a level collects.
pub struct LpKrr {
    landmarks: Array2<f64>,
    r0: f64,
    points_per_level: usize,
    max_level: usize,
    falkon: FalkonParams,
    current: Option<LevelStatistics>,
    buffer_x: Vec<f64>,
    buffer_y: Vec<f64>,
    fitted: Vec<Expansion>,
    /// Points streamed when each level was fitted.
    fitted_after: Vec<u64>,
    seen: u64,
}

impl LpKrr {
    pub fn new(
        landmarks: Array2<f64>,
        r0: f64,
        points_per_level: usize,
        max_level: usize,
        falkon: FalkonParams,
    ) -> Result<Self, StreamError> {
        falkon.check()?;
        if points_per_level == 0 {
            return Err(StreamError::InvalidParameter {
                name: "points_per_level",
                value: "0".into(),
                expected: "at least 1",
            });
        }
        if !(r0.is_finite() && r0 > 0.0) {
            return Err(StreamError::InvalidParameter {
                name: "r0",
                value: r0.to_string(),
                expected: "a finite radius > 0",
            });
        }
        Ok(Self {
            landmarks,
            r0,
            points_per_level,
            max_level,
            falkon,
            current: None,
            buffer_x: Vec::new(),
            buffer_y: Vec::new(),
            fitted: Vec::new(),
            fitted_after: Vec::new(),
            seen: 0,
        })
    }

    /// Prediction of the first `levels` fitted levels (all when `None`).
    pub fn predict_levels(
        &self,
        x: ArrayView2<f64>,
        levels: Option<usize>,
    ) -> Result<Array2<f64>, StreamError> {
        kernel_core::error::check_columns(
            "columns of the points vs the landmarks'",
            x,
            self.landmarks.ncols(),
        )?;
        let take = levels.unwrap_or(self.fitted.len()).min(self.fitted.len());
        let mut f: Option<Array2<f64>> = None;
        for e in &self.fitted[..take] {
            let p = e.predict(x)?;
            f = Some(match f {
                Some(acc) => acc + p,
                None => p,
            });
        }
        Ok(f.unwrap_or_else(|| {
            Array2::zeros((
                x.nrows(),
                self.fitted.first().map_or(1, |e| e.alpha.ncols()),
            ))
        }))
    }

    /// Streams one point ([`StreamingRegressor::push`]); returns whether every level up to
    /// `max_level` is fitted.
    pub fn push_point(&mut self, x: &[f64], y: &[f64]) -> Result<bool, StreamError> {
        if self.fitted.len() > self.max_level {
            return Ok(true);
        }
        let d = self.landmarks.ncols();
        let p = if self.buffer_x.is_empty() {
            y.len()
        } else {
            self.buffer_y.len() * d / self.buffer_x.len()
        };
        if x.len() != d {
            return Err(StreamError::shape(
                "coordinates of a streamed point vs the landmarks'",
                d,
                x.len(),
            ));
        }
        if y.len() != p || p == 0 {
            return Err(StreamError::shape(
                "targets of a streamed point vs the stream's (at least 1)",
                p.max(1),
                y.len(),
            ));
        }
        crate::error::check_finite_point(x, y, self.seen)?;
        self.seen += 1;
        self.buffer_x.extend_from_slice(x);
        self.buffer_y.extend_from_slice(y);
        let buffered = self.buffer_x.len() / d;
        let collected = self.current.as_ref().map_or(0, LevelStatistics::rows);
        if buffered >= CHUNK || collected + buffered >= self.points_per_level {
            self.flush()?;
        }
        Ok(self.fitted.len() > self.max_level)
    }

    /// Adds the buffered points to the collecting level and fits it once it has its points.
    fn flush(&mut self) -> Result<(), StreamError> {
        let d = self.landmarks.ncols();
        let rows = self.buffer_x.len() / d;
        if rows == 0 {
            return Ok(());
        }
        let p = self.buffer_y.len() / rows;
        let x = ArrayView2::from_shape((rows, d), &self.buffer_x).expect("rows of d values");
        let y = ArrayView2::from_shape((rows, p), &self.buffer_y).expect("rows of p values");
        let residual = &y - &self.predict_levels(x, None)?;
        let level = self.fitted.len();
        let stats = match &mut self.current {
            Some(s) => s,
            None => {
                let r = self.r0 / f64::powi(2.0, level as i32);
                self.current
                    .insert(LevelStatistics::new(self.landmarks.clone(), r, p)?)
            }
        };
        stats.add(x, residual.view())?;
        self.buffer_x.clear();
        self.buffer_y.clear();
        if stats.rows() >= self.points_per_level {
            self.fit()?;
        }
        Ok(())
    }

    fn fit(&mut self) -> Result<(), StreamError> {
        if let Some(stats) = self.current.take() {
            if stats.rows() > 0 {
                self.fitted.push(Expansion::fit(&stats, self.falkon)?);
                self.fitted_after.push(self.seen);
            }
        }
        Ok(())
    }

    /// Fitted levels so far.
    pub fn levels(&self) -> usize {
        self.fitted.len()
    }

    /// The fitted levels, shallowest first.
    pub fn expansions(&self) -> &[Expansion] {
        &self.fitted
    }

    /// Points streamed when each level was fitted.
    pub fn fitted_after(&self) -> &[u64] {
        &self.fitted_after
    }
}

impl Predictor for LpKrr {
    type Output = Array2<f64>;
    type Error = StreamError;

    /// The sum of the fitted levels ([`LpKrr::predict_levels`] of all).
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>, StreamError> {
        self.predict_levels(x, None)
    }
}

impl StreamingRegressor for LpKrr {
    /// [`LpKrr::push_point`]; LP-KRR draws nothing while streaming.
    fn push<R: Rng + ?Sized>(
        &mut self,
        x: &[f64],
        y: &[f64],
        _rng: &mut R,
    ) -> Result<(), StreamError> {
        self.push_point(x, y).map(|_| ())
    }

    /// End of the stream: fits the level collecting with the points it has.
    fn finish<R: Rng + ?Sized>(&mut self, _rng: &mut R) -> Result<(), StreamError> {
        if self.fitted.len() <= self.max_level {
            self.flush()?;
            self.fit()?;
        }
        Ok(())
    }

    /// Every level up to `max_level` is fitted.
    fn is_complete(&self) -> bool {
        self.fitted.len() > self.max_level
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Axis;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn f(x: f64) -> f64 {
        (1.0 / (x + 0.05)).sin()
    }

    #[test]
    fn falkon_with_a_fitting_bandwidth_and_lp_krr_both_learn_the_stream() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let x: Array2<f64> = Array2::from_shape_fn((40_000, 1), |_| rng.random_range(0.0..1.0));
        let y = x.mapv(f);
        let test: Array2<f64> = Array2::from_shape_fn((2_000, 1), |_| rng.random_range(0.0..1.0));
        let truth = test.mapv(f);
        let mse = |p: Array2<f64>| (&p - &truth).mapv(|v| v * v).mean().unwrap();
        // 200 landmarks with replacement from the stream's first points.
        let idx: Vec<usize> = (0..200).map(|_| rng.random_range(0..40_000)).collect();
        let lm = x.select(Axis(0), &idx);
        let mut falkon = FalkonBaseline::new(lm.clone(), 0.01, 1, FalkonParams::paper()).unwrap();
        assert!(falkon.predict(test.view()).is_err());
        falkon.push_rows(x.view(), y.view(), &mut rng).unwrap();
        falkon.finish(&mut rng).unwrap();
        let one = mse(falkon.predict(test.view()).unwrap());
        assert!(one < 0.05, "FALKON MSE {one}");
        let mut lp = LpKrr::new(lm, 1.0, 4_000, 8, FalkonParams::paper()).unwrap();
        for i in 0..40_000 {
            lp.push(&[x[[i, 0]]], &[y[[i, 0]]], &mut rng).unwrap();
            if lp.is_complete() {
                break;
            }
        }
        assert_eq!(lp.levels(), 9);
        let errors: Vec<f64> = (1..=9)
            .map(|l| mse(lp.predict_levels(test.view(), Some(l)).unwrap()))
            .collect();
        eprintln!("FALKON (r = 0.01, m = 200): {one}; LP-KRR per level: {errors:?}");
        assert!(
            errors[8] < 0.3 * errors[0],
            "LP-KRR MSE per level {errors:?}"
        );
    }
}
