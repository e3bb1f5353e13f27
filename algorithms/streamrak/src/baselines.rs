//! The paper's baselines (spec §7): FALKON with one bandwidth (m landmarks drawn uniformly with
//! replacement from the stream's first points, the whole stream accumulated into one level's
//! statistics) and LP-KRR (the same Laplacian pyramid with bandwidths r₀·2^{−l}, but one fixed
//! landmark set for every level, and each level consuming a fixed number of streamed points).

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};

use crate::cover_tree::StreamError;
use crate::falkon::{gaussian_kernel, solve, FalkonParams};
use crate::statistics::LevelStatistics;

/// A fitted kernel expansion f(x) = Σ_j α_j k_r(x, λ_j).
#[derive(Debug, Clone, PartialEq)]
pub struct Expansion {
    pub landmarks: Array2<f64>,
    pub bandwidth: f64,
    pub alpha: Array2<f64>,
}

impl Expansion {
    pub fn predict(&self, x: ArrayView2<f64>) -> Array2<f64> {
        gaussian_kernel(x, self.landmarks.view(), self.bandwidth).dot(&self.alpha)
    }

    fn fit(stats: &LevelStatistics, falkon: FalkonParams) -> Result<Self, StreamError> {
        let lm = stats.landmarks();
        let k_mm = gaussian_kernel(lm.view(), lm.view(), stats.bandwidth());
        Ok(Self {
            landmarks: lm.clone(),
            bandwidth: stats.bandwidth(),
            alpha: solve(
                k_mm.view(),
                stats.ktk().view(),
                stats.z().view(),
                stats.rows(),
                falkon,
            )?,
        })
    }
}

/// FALKON with one bandwidth over a whole stream.
pub struct FalkonBaseline {
    stats: LevelStatistics,
    falkon: FalkonParams,
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
        Ok(Self {
            stats: LevelStatistics::new(landmarks, bandwidth, targets)?,
            falkon,
        })
    }

    /// Accumulates a batch of the stream.
    pub fn push(&mut self, x: ArrayView2<f64>, y: ArrayView2<f64>) -> Result<(), StreamError> {
        self.stats.add(x, y)
    }

    /// Solves once the stream has been seen.
    pub fn fit(&self) -> Result<Expansion, StreamError> {
        Expansion::fit(&self.stats, self.falkon)
    }
}

/// LP-KRR: level l (bandwidth r₀·2^{−l}, the fixed landmarks) is fitted to the residual of the
/// levels before it from the next `points_per_level` streamed points; levels up to `max_level`.
pub struct LpKrr {
    landmarks: Array2<f64>,
    r0: f64,
    points_per_level: usize,
    max_level: usize,
    falkon: FalkonParams,
    current: Option<LevelStatistics>,
    fitted: Vec<Expansion>,
}

impl LpKrr {
    pub fn new(
        landmarks: Array2<f64>,
        r0: f64,
        points_per_level: usize,
        max_level: usize,
        falkon: FalkonParams,
    ) -> Result<Self, StreamError> {
        if points_per_level == 0 {
            return Err(StreamError::InvalidParameter {
                name: "points_per_level",
                value: "0".into(),
                expected: "at least 1",
            });
        }
        Ok(Self {
            landmarks,
            r0,
            points_per_level,
            max_level,
            falkon,
            current: None,
            fitted: Vec::new(),
        })
    }

    /// Prediction of the first `levels` fitted levels (all when `None`).
    pub fn predict(&self, x: ArrayView2<f64>, levels: Option<usize>) -> Array2<f64> {
        let take = levels.unwrap_or(self.fitted.len()).min(self.fitted.len());
        let mut f: Option<Array2<f64>> = None;
        for e in &self.fitted[..take] {
            let p = e.predict(x);
            f = Some(match f {
                Some(acc) => acc + p,
                None => p,
            });
        }
        f.unwrap_or_else(|| {
            Array2::zeros((
                x.nrows(),
                self.fitted.first().map_or(1, |e| e.alpha.ncols()),
            ))
        })
    }

    /// Streams one point; returns whether every level up to `max_level` is fitted.
    pub fn push(&mut self, x: &[f64], y: &[f64]) -> Result<bool, StreamError> {
        let level = self.fitted.len();
        if level > self.max_level {
            return Ok(true);
        }
        let xr = ArrayView1::from(x).insert_axis(Axis(0));
        let residual: Array1<f64> = ArrayView1::from(y).to_owned() - self.predict(xr, None).row(0);
        let stats = match &mut self.current {
            Some(s) => s,
            None => {
                let r = self.r0 / f64::powi(2.0, level as i32);
                self.current
                    .insert(LevelStatistics::new(self.landmarks.clone(), r, y.len())?)
            }
        };
        stats.add(xr, residual.view().insert_axis(Axis(0)))?;
        if stats.rows() >= self.points_per_level {
            let stats = self.current.take().expect("collecting");
            self.fitted.push(Expansion::fit(&stats, self.falkon)?);
        }
        Ok(self.fitted.len() > self.max_level)
    }

    /// Fitted levels so far.
    pub fn levels(&self) -> usize {
        self.fitted.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        falkon.push(x.view(), y.view()).unwrap();
        let one = mse(falkon.fit().unwrap().predict(test.view()));
        assert!(one < 0.05, "FALKON MSE {one}");
        let mut lp = LpKrr::new(lm, 1.0, 4_000, 8, FalkonParams::paper()).unwrap();
        for i in 0..40_000 {
            if lp.push(&[x[[i, 0]]], &[y[[i, 0]]]).unwrap() {
                break;
            }
        }
        assert_eq!(lp.levels(), 9);
        let errors: Vec<f64> = (1..=9)
            .map(|l| mse(lp.predict(test.view(), Some(l))))
            .collect();
        eprintln!("FALKON (r = 0.01, m = 200): {one}; LP-KRR per level: {errors:?}");
        assert!(
            errors[8] < 0.3 * errors[0],
            "LP-KRR MSE per level {errors:?}"
        );
    }
}
