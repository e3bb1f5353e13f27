//! The χ² additive kernel, the comparator of the paper's Table 9 ([ARX] Table 8; spec §7.3,
//! R5): the exact kernel `k(x, y) = Σ_a 2 x_a y_a / (x_a + y_a)` (a term is 0 where
//! `x_a + y_a = 0`) for a kernel SVM, and its explicit feature map (Vedaldi & Zisserman,
//! *Efficient additive kernels via explicit feature maps*, PAMI 2012) for a linear SVM, as
//! scikit-learn's `AdditiveChi2Sampler` computes it (the paper's footnote 9): with `n` sample
//! steps and interval L, each attribute a of x ≥ 0 gives `2n − 1` features
//!
//! `√(x_a L)`, then for j = 1..n−1: `√(2 x_a L / cosh(π j L))·cos(j L ln x_a)` and `·sin(…)`,
//!
//! all 0 where `x_a = 0`. The paper's b = 0 (footnote 7) is n = 1: one feature per attribute,
//! `√(0.8 x_a)` (scikit-learn's interval for one step). Inputs must be non-negative; a set with
//! negative values (ijcnn1) is first scaled to [0, 1] per attribute with the training minimum
//! and maximum ([`UnitScaling`], the spec's recommendation; test values outside the training
//! range are clipped).

use ndarray::Array2;

use kernel_core::{CoreError, DenseFeatures};

use crate::error::IsolationError;
use crate::input::Rows;

/// `k(x, y) = Σ_a 2 x_a y_a / (x_a + y_a)` of two dense non-negative rows of one length.
pub fn chi2_kernel(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .zip(y)
        .map(|(&a, &b)| {
            let s = a + b;
            if s > 0.0 {
                2.0 * a * b / s
            } else {
                0.0
            }
        })
        .sum()
}

/// The explicit χ² map with `steps` sample steps and sampling interval `interval`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chi2Map {
    steps: usize,
    interval: f64,
}

impl Chi2Map {
    /// The map with scikit-learn's interval for 1, 2 or 3 steps (0.8, 0.5, 0.4); other step
    /// counts need [`Chi2Map::with_interval`].
    pub fn new(steps: usize) -> Result<Self, IsolationError> {
        let interval = match steps {
            1 => 0.8,
            2 => 0.5,
            3 => 0.4,
            _ => {
                return Err(CoreError::invalid(
                    "chi2_steps",
                    steps,
                    "1, 2 or 3 (other step counts need an explicit interval)",
                )
                .into())
            }
        };
        Self::with_interval(steps, interval)
    }

    /// The map with `steps` ≥ 1 sample steps and interval `interval` > 0.
    pub fn with_interval(steps: usize, interval: f64) -> Result<Self, IsolationError> {
        kernel_core::error::at_least_one("chi2_steps", steps)?;
        kernel_core::error::positive("chi2_interval", interval)?;
        Ok(Self { steps, interval })
    }

    /// Features per attribute, 2·steps − 1.
    pub fn features_per_attribute(&self) -> usize {
        2 * self.steps - 1
    }

    /// The features of one value `v` ≥ 0 into `out` (length 2·steps − 1).
    fn map_value(&self, v: f64, out: &mut [f64]) {
        if v == 0.0 {
            out.fill(0.0);
            return;
        }
        let l = self.interval;
        out[0] = (v * l).sqrt();
        let log = l * v.ln();
        for j in 1..self.steps {
            let factor = (2.0 * v * l / (std::f64::consts::PI * j as f64 * l).cosh()).sqrt();
            let (s, c) = (j as f64 * log).sin_cos();
            out[2 * j - 1] = factor * c;
            out[2 * j] = factor * s;
        }
    }

    /// The features of the rows (each value ≥ 0, after `scaling` when given): a dense matrix
    /// of d·(2·steps − 1) columns, attribute a's features at columns a·(2·steps − 1)...,
    /// one block.
    pub fn features(
        &self,
        rows: Rows,
        scaling: Option<&UnitScaling>,
    ) -> Result<DenseFeatures, IsolationError> {
        let (n, d, f) = (rows.n_rows(), rows.dim(), self.features_per_attribute());
        if let Some(s) = scaling {
            if s.min.len() != d {
                return Err(CoreError::shape("columns vs the scaling's", s.min.len(), d).into());
            }
        }
        let mut out = Array2::zeros((n, d * f));
        let mut x = vec![0.0; d];
        for (i, mut o) in out.rows_mut().into_iter().enumerate() {
            rows.dense_row(i, &mut x);
            if let Some(s) = scaling {
                s.apply(&mut x);
            }
            if let Some((a, &v)) = x
                .iter()
                .enumerate()
                .find(|(_, &v)| v < 0.0 || !v.is_finite())
            {
                return Err(IsolationError::Core(CoreError::invalid_input(
                    "chi2 map input",
                    format!("{v} (row {i}, column {a})"),
                    "finite values >= 0 (scale the data to [0, 1] first)",
                )));
            }
            let o = o.as_slice_mut().expect("rows of a standard-layout array");
            for (a, &v) in x.iter().enumerate() {
                self.map_value(v, &mut o[a * f..(a + 1) * f]);
            }
        }
        let cols = d * f;
        DenseFeatures::new(out, vec![cols.max(1)]).map_err(IsolationError::Core)
    }
}

/// Per-attribute scaling to [0, 1] with the training minimum and maximum (a constant
/// attribute maps to 0); values outside the training range are clipped.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitScaling {
    min: Vec<f64>,
    range: Vec<f64>,
}

impl UnitScaling {
    /// The minimum and maximum of each attribute over the rows (absent sparse entries are 0).
    pub fn fit(rows: Rows) -> Result<Self, IsolationError> {
        let d = rows.dim();
        if rows.n_rows() == 0 {
            return Err(CoreError::EmptyInput {
                what: "scaling statistics",
                rows: 0,
                columns: d,
                needed: "at least one row",
            }
            .into());
        }
        let (mut min, mut max) = (vec![f64::INFINITY; d], vec![f64::NEG_INFINITY; d]);
        let mut x = vec![0.0; d];
        for i in 0..rows.n_rows() {
            rows.dense_row(i, &mut x);
            for (a, &v) in x.iter().enumerate() {
                if !v.is_finite() {
                    return Err(IsolationError::Core(CoreError::NonFiniteInput {
                        what: "training",
                        row: i,
                        column: a,
                        value: v,
                    }));
                }
                min[a] = min[a].min(v);
                max[a] = max[a].max(v);
            }
        }
        let range = max.iter().zip(&min).map(|(hi, lo)| hi - lo).collect();
        Ok(Self { min, range })
    }

    /// Scales a dense row in place.
    pub fn apply(&self, x: &mut [f64]) {
        for ((x, &lo), &r) in x.iter_mut().zip(&self.min).zip(&self.range) {
            *x = if r > 0.0 {
                ((*x - lo) / r).clamp(0.0, 1.0)
            } else {
                0.0
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The map's inner products approach the exact χ² kernel as the steps grow (VZ's
    /// approximation), an independent computation of each: with 3 steps (interval 0.4) the
    /// relative error on random non-negative pairs is a few per cent, with one step (the
    /// paper's) `0.8 Σ √(x_a y_a)`, exactly.
    #[test]
    fn inner_products_approximate_the_exact_kernel() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let d = 6;
        let x = Array2::from_shape_fn((40, d), |_| {
            if rng.random_bool(0.2) {
                0.0
            } else {
                rng.random_range(0.05..1.0)
            }
        });
        let three = Chi2Map::new(3)
            .unwrap()
            .features(Rows::Dense(x.view()), None)
            .unwrap();
        let one = Chi2Map::new(1)
            .unwrap()
            .features(Rows::Dense(x.view()), None)
            .unwrap();
        let mut worst: f64 = 0.0;
        for i in 0..40 {
            for j in 0..40 {
                let (xi, xj) = (x.row(i).to_vec(), x.row(j).to_vec());
                let exact = chi2_kernel(&xi, &xj);
                let approx = three.values().row(i).dot(&three.values().row(j));
                if exact > 0.5 {
                    worst = worst.max((approx - exact).abs() / exact);
                }
                let hellinger: f64 =
                    0.8 * xi.iter().zip(&xj).map(|(a, b)| (a * b).sqrt()).sum::<f64>();
                let got = one.values().row(i).dot(&one.values().row(j));
                assert!((got - hellinger).abs() < 1e-12);
            }
        }
        assert!(worst < 0.05, "{worst}");
        // The kernel of a point with itself is the sum of its values.
        let x0 = x.row(0).to_vec();
        assert!((chi2_kernel(&x0, &x0) - x0.iter().sum::<f64>()).abs() < 1e-12);
    }

    #[test]
    fn scaling_maps_the_training_range_to_the_unit_interval_and_clips() {
        let x = ndarray::array![[-1.0, 5.0, 2.0], [1.0, 5.0, 4.0], [0.0, 5.0, 3.0]];
        let s = UnitScaling::fit(Rows::Dense(x.view())).unwrap();
        let mut r = vec![0.0, 5.0, 5.0];
        s.apply(&mut r);
        assert_eq!(r, vec![0.5, 0.0, 1.0]);
        let mut r = vec![-3.0, 1.0, 2.5];
        s.apply(&mut r);
        assert_eq!(r, vec![0.0, 0.0, 0.25]);
        // Negative inputs are an error without scaling, fine with it.
        let map = Chi2Map::new(1).unwrap();
        assert!(map.features(Rows::Dense(x.view()), None).is_err());
        let f = map.features(Rows::Dense(x.view()), Some(&s)).unwrap();
        assert_eq!(f.values().ncols(), 3);
        assert!((f.values()[[1, 0]] - 0.8f64.sqrt()).abs() < 1e-15);
    }

    #[test]
    fn bad_settings_are_errors() {
        assert!(Chi2Map::new(0).is_err());
        assert!(Chi2Map::new(4).is_err());
        assert!(Chi2Map::with_interval(4, 0.3).is_ok());
        assert!(Chi2Map::with_interval(2, 0.0).is_err());
        assert!(Chi2Map::with_interval(2, f64::NAN).is_err());
    }
}
