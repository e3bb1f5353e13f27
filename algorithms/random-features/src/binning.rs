//! Random binning features for the Laplace kernel.
//!
//! Per repetition m and dimension d: width `δ_md ~ Gamma(shape 2, scale 1/λ)` (density
//! `λ² δ e^{−λδ} = δ·k''(δ)`) and shift `u_md ~ U[0, δ_md)`. A point's bin in repetition m is
//! `b_md(x) = ⌈(x_d − u_md)/δ_md⌉` for every d; the feature is the indicator of the D-dimensional
//! bin. Two points share a bin with probability `Π_d E[max(0, 1 − |Δ_d|/δ_d)] = exp(−λ‖Δ‖₁)`.

use std::collections::HashMap;

use kernel_core::one_hot::{OneHotFeatures, ABSENT};
use kernel_core::{CoreError, FeatureMap, Features};
use ndarray::{Array2, ArrayView2};
use rand::Rng;
use rand_distr::{Distribution, Gamma};

use crate::error::{check_count, check_input, FeatureError};

/// A draw of M random grids and the bins seen so far (the feature columns).
#[derive(Debug, Clone, PartialEq)]
pub struct RandomBinning {
    /// `δ` (M × D).
    widths: Array2<f64>,
    /// `u` (M × D).
    shifts: Array2<f64>,
    /// Column of each (repetition, bin) seen when the features were built.
    columns: Vec<HashMap<Vec<i64>, u32>>,
    n_columns: usize,
}

impl RandomBinning {
    /// Draws `n_repetitions` (M) grids for `dim`-dimensional inputs and lifetime λ > 0. Draw
    /// order: all M·D widths (m outer, d inner), then all shifts.
    pub fn sample<R: Rng + ?Sized>(
        dim: usize,
        n_repetitions: usize,
        lifetime: f64,
        rng: &mut R,
    ) -> Result<Self, FeatureError> {
        check_count("dimension", dim)?;
        check_count("n_repetitions", n_repetitions)?;
        if !(lifetime.is_finite() && lifetime > 0.0) {
            return Err(FeatureError::InvalidParameter {
                name: "lifetime",
                value: lifetime.to_string(),
                expected: "a finite number > 0",
            });
        }
        let gamma =
            Gamma::new(2.0, 1.0 / lifetime).map_err(|e| FeatureError::InvalidParameter {
                name: "lifetime",
                value: format!("{lifetime} ({e})"),
                expected: "a lifetime giving a valid Gamma(2, 1/λ)",
            })?;
        let widths = Array2::from_shape_fn((n_repetitions, dim), |_| gamma.sample(rng));
        let shifts = widths.mapv(|w| rng.random::<f64>() * w);
        Ok(Self {
            widths,
            shifts,
            columns: vec![HashMap::new(); n_repetitions],
            n_columns: 0,
        })
    }

    /// Number of repetitions M.
    pub fn n_repetitions(&self) -> usize {
        self.widths.nrows()
    }

    /// Number of feature columns created so far (distinct bins of the fitted points).
    pub fn n_columns(&self) -> usize {
        self.n_columns
    }

    /// The bin of row `x` in repetition `m`.
    fn bin(&self, m: usize, x: ndarray::ArrayView1<f64>) -> Vec<i64> {
        x.iter()
            .enumerate()
            .map(|(d, &v)| ((v - self.shifts[[m, d]]) / self.widths[[m, d]]).ceil() as i64)
            .collect()
    }

    /// Builds the features of `x`, creating a column for every new bin (ids on first sight,
    /// looping repetitions, then points). Use this on every point that may create bins.
    pub fn fit_transform(&mut self, x: ArrayView2<f64>) -> Result<OneHotFeatures, FeatureError> {
        check_input(x, self.widths.ncols())?;
        let (n, m_total) = (x.nrows(), self.n_repetitions());
        let mut out = vec![ABSENT; n * m_total];
        for m in 0..m_total {
            for i in 0..n {
                let key = self.bin(m, x.row(i));
                let next = self.n_columns as u32;
                let column = *self.columns[m].entry(key).or_insert(next);
                if column == next {
                    self.n_columns += 1;
                }
                out[i * m_total + m] = column;
            }
        }
        Ok(OneHotFeatures::new(n, m_total, self.n_columns, out)?)
    }

    /// Features of `x` using only bins seen by [`Self::fit_transform`]: a point in an unseen bin has
    /// no feature for that repetition (fewer than M ones).
    pub fn transform(&self, x: ArrayView2<f64>) -> Result<OneHotFeatures, FeatureError> {
        check_input(x, self.widths.ncols())?;
        let (n, m_total) = (x.nrows(), self.n_repetitions());
        let mut out = vec![ABSENT; n * m_total];
        for m in 0..m_total {
            for i in 0..n {
                if let Some(&c) = self.columns[m].get(&self.bin(m, x.row(i))) {
                    out[i * m_total + m] = c;
                }
            }
        }
        Ok(OneHotFeatures::new(n, m_total, self.n_columns, out)?)
    }
}

impl FeatureMap for RandomBinning {
    /// The M repetitions (grids).
    fn n_blocks(&self) -> usize {
        self.n_repetitions()
    }

    /// [`RandomBinning::transform`]: only bins seen by [`RandomBinning::fit_transform`] are
    /// features, so call that on the training points first.
    fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError> {
        Ok(Features::OneHot(self.transform(x)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn same_bin_probability_is_laplace_in_one_dimension() {
        // Monte Carlo over many independent grids: P(same bin) = exp(−λ|Δ|).
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let lifetime = 3.0;
        let n_repetitions = 50_000;
        let mut map = RandomBinning::sample(1, n_repetitions, lifetime, &mut rng).unwrap();
        let x = array![[0.1], [0.15], [0.3], [0.6], [1.2]];
        let f = map.fit_transform(x.view()).unwrap();
        for j in 1..x.nrows() {
            let p = f.agreements(0, j, n_repetitions) as f64 / n_repetitions as f64;
            let exact = (-lifetime * (x[[j, 0]] - x[[0, 0]]).abs()).exp();
            let se = (exact * (1.0 - exact) / n_repetitions as f64)
                .sqrt()
                .max(1e-4);
            assert!(
                (p - exact).abs() < 4.0 * se,
                "pair {j}: {p} vs {exact} (se {se})"
            );
        }
    }

    #[test]
    fn unseen_test_bins_give_no_feature() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut map = RandomBinning::sample(1, 20, 50.0, &mut rng).unwrap();
        map.fit_transform(array![[0.0], [0.01]].view()).unwrap();
        let test = map.transform(array![[0.0], [100.0]].view()).unwrap();
        assert_eq!((0..20).filter(|&m| test.column(0, m).is_some()).count(), 20);
        assert_eq!((0..20).filter(|&m| test.column(1, m).is_some()).count(), 0);
    }

    #[test]
    fn feature_map_gives_the_bins_seen_when_fitting() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut map = RandomBinning::sample(2, 7, 2.0, &mut rng).unwrap();
        let train = array![[0.0, 0.0], [0.3, -0.2], [1.0, 2.0]];
        let fitted = map.fit_transform(train.view()).unwrap();
        let map: Box<dyn FeatureMap> = Box::new(map);
        assert_eq!(map.n_blocks(), 7);
        // The training points again: the very columns fit_transform gave them.
        assert_eq!(
            map.features(train.view()).unwrap(),
            Features::OneHot(fitted.clone())
        );
        // A new point: by brute force, its bin in grid m is the bin of a training point exactly
        // when the ceilings agree in every dimension.
        let (widths, shifts) = {
            let mut rng = ChaCha8Rng::seed_from_u64(8);
            let again = RandomBinning::sample(2, 7, 2.0, &mut rng).unwrap();
            (again.widths.clone(), again.shifts.clone())
        };
        let new = array![[0.1, 0.05], [50.0, 50.0]];
        let Features::OneHot(f) = map.features(new.view()).unwrap() else {
            panic!("binning features are one-hot")
        };
        let bin = |m: usize, x: ndarray::ArrayView1<f64>| -> Vec<f64> {
            (0..2)
                .map(|d| ((x[d] - shifts[[m, d]]) / widths[[m, d]]).ceil())
                .collect()
        };
        for i in 0..new.nrows() {
            for m in 0..7 {
                let owner =
                    (0..train.nrows()).find(|&j| bin(m, train.row(j)) == bin(m, new.row(i)));
                assert_eq!(f.column(i, m), owner.map(|j| fitted.row(j)[m]));
            }
        }
        assert!(map.features(array![[1.0]].view()).is_err());
    }

    #[test]
    fn rejects_bad_parameters() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert!(RandomBinning::sample(2, 5, 0.0, &mut rng).is_err());
        assert!(RandomBinning::sample(2, 0, 1.0, &mut rng).is_err());
        assert!(RandomBinning::sample(0, 5, 1.0, &mut rng).is_err());
        let mut map = RandomBinning::sample(2, 5, 1.0, &mut rng).unwrap();
        assert!(map.fit_transform(array![[1.0]].view()).is_err());
    }
}
