//! Ridge regression: `w = (ZᵀZ + δI)⁻¹ Zᵀ y` by Cholesky, on dense features, for nested
//! prefixes of a feature set, in the dual (kernel ridge regression), and as a fitted model on a
//! random feature map ([`FeatureRidge`]).

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2};
use ndarray_linalg::{FactorizeC, SolveC, UPLO};
use rayon::prelude::*;

use crate::error::positive;
use crate::features::Features;
use crate::model::{FeatureMap, Predictor};
use crate::one_hot::ABSENT;
use crate::CoreError;

/// Solves the ridge normal equations `(ZᵀZ + δI) w = Zᵀy` (no intercept) by a Cholesky
/// factorisation. `δ > 0` makes the system positive definite.
pub fn ridge_weights(
    z: ArrayView2<f64>,
    y: ArrayView1<f64>,
    delta: f64,
) -> Result<Array1<f64>, CoreError> {
    positive("delta", delta)?;
    if z.nrows() != y.len() {
        return Err(CoreError::ShapeMismatch {
            what: "number of targets vs rows of the feature matrix",
            expected: z.nrows(),
            got: y.len(),
        });
    }
    let mut gram: Array2<f64> = z.t().dot(&z);
    gram.diag_mut().mapv_inplace(|d| d + delta);
    let rhs = z.t().dot(&y);
    solve_positive_definite(gram, rhs)
}

/// Solves `A x = b` for symmetric positive definite `A` by Cholesky.
pub fn solve_positive_definite(a: Array2<f64>, b: Array1<f64>) -> Result<Array1<f64>, CoreError> {
    let factor = a
        .factorizec(UPLO::Lower)
        .map_err(|e| CoreError::solve("Cholesky factorisation", e))?;
    factor
        .solvec(&b)
        .map_err(|e| CoreError::solve("Cholesky solve", e))
}

/// Ridge solutions for nested prefixes of one feature set.
///
/// With the columns ordered so that prefix R uses the first `ends[R - 1]` of them, `gram = AᵀA`
/// and `rhs = Aᵀy` over all columns, returns for every R the solution of
/// `(G[..e, ..e] + p_R I) v = rhs[..e]`, `e = ends[R - 1]`, `p_R = penalties[R - 1]`. Each prefix
/// is an independent Cholesky solve (run in parallel, results in prefix order).
///
/// Ridge on features scaled by `1/√R` with penalty δ is this with `p_R = R·δ` on the unscaled
/// features: `(AᵀA/R + δI)⁻¹Aᵀy/√R` predicts `A (AᵀA + RδI)⁻¹ Aᵀ y`.
pub fn nested_ridge(
    gram: ArrayView2<f64>,
    rhs: ArrayView1<f64>,
    ends: &[usize],
    penalties: &[f64],
) -> Result<Vec<Array1<f64>>, CoreError> {
    if gram.nrows() != gram.ncols() || gram.nrows() != rhs.len() {
        return Err(CoreError::ShapeMismatch {
            what: "Gram matrix size vs right-hand side",
            expected: rhs.len(),
            got: gram.nrows(),
        });
    }
    if ends.len() != penalties.len() {
        return Err(CoreError::ShapeMismatch {
            what: "number of penalties vs prefixes",
            expected: ends.len(),
            got: penalties.len(),
        });
    }
    if ends.windows(2).any(|w| w[0] > w[1]) || ends.last().is_some_and(|&e| e > rhs.len()) {
        return Err(CoreError::InvalidParameter {
            name: "prefix ends",
            value: format!("{ends:?}"),
            expected: "non-decreasing column counts within the Gram matrix",
        });
    }
    for &p in penalties {
        positive("penalty", p)?;
    }
    ends.par_iter()
        .zip(penalties)
        .map(|(&e, &p)| {
            if e == 0 {
                return Ok(Array1::zeros(0));
            }
            let mut a = gram.slice(s![..e, ..e]).to_owned();
            a.diag_mut().mapv_inplace(|d| d + p);
            solve_positive_definite(a, rhs.slice(s![..e]).to_owned())
        })
        .collect()
}

/// Kernel ridge regression in the dual: `ŷ = ȳ + K_* (K + δI)⁻¹ (y − ȳ)` (The Mondrian Kernel,
/// spec §3.1; no intercept beyond the training mean).
///
/// `gram` is K over the training points; each matrix of `cross` is `K_*` between some evaluation
/// points (rows) and the training points (columns). Returns one prediction vector per `cross`.
pub fn kernel_ridge(
    gram: Array2<f64>,
    y: ArrayView1<f64>,
    delta: f64,
    cross: &[ArrayView2<f64>],
) -> Result<KernelRidge, CoreError> {
    positive("delta", delta)?;
    if gram.nrows() != gram.ncols() || gram.nrows() != y.len() {
        return Err(CoreError::ShapeMismatch {
            what: "kernel matrix size vs number of targets",
            expected: y.len(),
            got: gram.nrows(),
        });
    }
    if let Some(bad) = cross.iter().find(|k| k.ncols() != y.len()) {
        return Err(CoreError::ShapeMismatch {
            what: "columns of a cross-kernel matrix vs training points",
            expected: y.len(),
            got: bad.ncols(),
        });
    }
    let mean = y.mean().unwrap_or(0.0);
    let mut a = gram;
    a.diag_mut().mapv_inplace(|d| d + delta);
    let alpha = solve_positive_definite(a, y.mapv(|v| v - mean))?;
    let predictions = cross.iter().map(|k| k.dot(&alpha) + mean).collect();
    Ok(KernelRidge {
        mean,
        alpha,
        predictions,
    })
}

/// A fitted kernel ridge regression.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRidge {
    /// ȳ, the training mean.
    pub mean: f64,
    /// Dual weights `α = (K + δI)⁻¹ (y − ȳ)`.
    pub alpha: Array1<f64>,
    /// `ȳ + K_* α` for each cross-kernel matrix given.
    pub predictions: Vec<Array1<f64>>,
}

impl KernelRidge {
    /// Predictions at the training points without the kernel matrix: `Kα = y − ȳ − δα`.
    pub fn training_predictions(&self, y: ArrayView1<f64>, delta: f64) -> Array1<f64> {
        &y - &(delta * &self.alpha)
    }
}

/// Ridge regression on a random feature map, a fitted [`Predictor`]: with `φ(x)` the map's
/// features scaled by `1/√B` (B blocks, so that `φ(x)·φ(x')` is the kernel estimate),
/// `w = (ΦᵀΦ + δI)⁻¹ Φᵀ(y − ȳ)` and `ŷ(x) = ȳ + φ(x)·w` (The Mondrian Kernel, Sec. 3: the primal
/// form of kernel ridge regression with the approximate kernel).
#[derive(Debug, Clone)]
pub struct FeatureRidge<M> {
    map: M,
    /// `w`, one weight per feature column (0 for one-hot columns no training row uses).
    weights: Array1<f64>,
    /// ȳ, the training mean.
    mean: f64,
}

impl<M: FeatureMap> FeatureRidge<M> {
    /// Fits ridge with penalty `δ > 0` on `train`, the map's features of the training points
    /// (for the Mondrian kernel, from the forest itself; for random binning, from
    /// `fit_transform`), targets `y`. One-hot features need each block's column ids after those
    /// of the previous block (true of the Mondrian and random-binning maps).
    pub fn fit(
        map: M,
        train: &Features,
        y: ArrayView1<f64>,
        delta: f64,
    ) -> Result<Self, CoreError> {
        positive("delta", delta)?;
        if train.n_blocks() != map.n_blocks() {
            return Err(CoreError::ShapeMismatch {
                what: "blocks of the training features vs the feature map",
                expected: map.n_blocks(),
                got: train.n_blocks(),
            });
        }
        if train.n_rows() != y.len() {
            return Err(CoreError::ShapeMismatch {
                what: "number of targets vs rows of the training features",
                expected: train.n_rows(),
                got: y.len(),
            });
        }
        let mean = y.mean().unwrap_or(0.0);
        let centred = y.mapv(|v| v - mean);
        let scale = 1.0 / (train.n_blocks() as f64).sqrt();
        let weights = match train {
            Features::Dense(f) => {
                ridge_weights((&f.values() * scale).view(), centred.view(), delta)?
            }
            Features::OneHot(f) => {
                let n = f.n_rows();
                let compact = f.compact_columns(0..n)?;
                let mut gram = f.gram(0..n, &compact) * (scale * scale);
                gram.diag_mut().mapv_inplace(|d| d + delta);
                let rhs = f.transpose_times(0..n, centred.view(), &compact) * scale;
                let solution = solve_positive_definite(gram, rhs)?;
                let mut weights = Array1::zeros(f.n_columns());
                for (&c, &w) in compact.original_columns().iter().zip(solution.iter()) {
                    weights[c as usize] = w;
                }
                weights
            }
        };
        Ok(Self { map, weights, mean })
    }

    /// The feature map.
    pub fn map(&self) -> &M {
        &self.map
    }

    /// `w`, one per feature column, for the features scaled by `1/√B`.
    pub fn weights(&self) -> ArrayView1<'_, f64> {
        self.weights.view()
    }

    /// ȳ, the training mean.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// `ȳ + φ·w` for features already computed by the map (e.g. the training features).
    pub fn predict_features(&self, features: &Features) -> Result<Array1<f64>, CoreError> {
        let scale = 1.0 / (features.n_blocks() as f64).sqrt();
        let n_columns = match features {
            Features::Dense(f) => f.values().ncols(),
            Features::OneHot(f) => f.n_columns(),
        };
        if n_columns != self.weights.len() {
            return Err(CoreError::ShapeMismatch {
                what: "feature columns vs fitted weights",
                expected: self.weights.len(),
                got: n_columns,
            });
        }
        Ok(match features {
            Features::Dense(f) => f.values().dot(&self.weights) * scale + self.mean,
            Features::OneHot(f) => (0..f.n_rows())
                .map(|i| {
                    let sum: f64 = f
                        .row(i)
                        .iter()
                        .filter(|&&c| c != ABSENT)
                        .map(|&c| self.weights[c as usize])
                        .sum();
                    self.mean + scale * sum
                })
                .collect(),
        })
    }
}

impl<M: FeatureMap> Predictor for FeatureRidge<M> {
    type Output = Array1<f64>;
    type Error = CoreError;

    /// `ȳ + φ(x)·w` at new points, through the map's features of `x`.
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array1<f64>, CoreError> {
        self.predict_features(&self.map.features(x)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use ndarray::array;

    #[test]
    fn ridge_matches_closed_form_2x2() {
        // Z = I (2x2), so w = y / (1 + δ).
        let z = array![[1.0, 0.0], [0.0, 1.0]];
        let y = array![2.0, -4.0];
        let w = ridge_weights(z.view(), y.view(), 1.0).unwrap();
        assert_relative_eq!(w[0], 1.0, epsilon = 1e-12);
        assert_relative_eq!(w[1], -2.0, epsilon = 1e-12);
    }

    #[test]
    fn ridge_satisfies_normal_equations() {
        let z = array![
            [1.0, 2.0, 0.5],
            [0.3, -1.0, 2.0],
            [2.0, 0.1, 0.0],
            [1.0, 1.0, 1.0]
        ];
        let y = array![1.0, -2.0, 0.5, 3.0];
        let delta = 0.1;
        let w = ridge_weights(z.view(), y.view(), delta).unwrap();
        let residual = z.t().dot(&(z.dot(&w) - &y)) + &(delta * &w);
        for r in residual.iter() {
            assert!(r.abs() < 1e-10, "normal-equation residual {r}");
        }
    }

    #[test]
    fn nested_prefixes_equal_separate_solves() {
        let z = array![
            [1.0, 0.0, 2.0],
            [0.5, 1.0, 0.0],
            [0.0, 1.0, 1.0],
            [2.0, 0.0, 0.5]
        ];
        let y = array![1.0, -1.0, 2.0, 0.5];
        let gram = z.t().dot(&z);
        let rhs = z.t().dot(&y);
        let ends = [1, 3];
        let penalties = [0.3, 0.7];
        let nested = nested_ridge(gram.view(), rhs.view(), &ends, &penalties).unwrap();
        for (k, (&e, &p)) in ends.iter().zip(&penalties).enumerate() {
            let direct = ridge_weights(z.slice(s![.., ..e]), y.view(), p).unwrap();
            for (a, b) in nested[k].iter().zip(direct.iter()) {
                assert_relative_eq!(a, b, epsilon = 1e-12);
            }
        }
        assert!(nested_ridge(gram.view(), rhs.view(), &[3, 1], &[1.0, 1.0]).is_err());
        assert!(nested_ridge(gram.view(), rhs.view(), &[4], &[1.0]).is_err());
    }

    #[test]
    fn kernel_ridge_with_a_linear_kernel_equals_primal_ridge() {
        // K = ZZᵀ: the dual solution predicts exactly what primal ridge on centred targets does.
        let z = array![[1.0, 2.0], [0.3, -1.0], [2.0, 0.1], [1.0, 1.0], [-0.5, 0.4]];
        let y = array![1.0, -2.0, 0.5, 3.0, 0.0];
        let test = array![[0.2, 0.2], [1.5, -0.3]];
        let delta = 0.25;
        let mean = y.mean().unwrap();
        let w = ridge_weights(z.view(), y.mapv(|v| v - mean).view(), delta).unwrap();
        let cross = test.dot(&z.t());
        let train_cross = z.dot(&z.t());
        let fit = kernel_ridge(
            z.dot(&z.t()),
            y.view(),
            delta,
            &[cross.view(), train_cross.view()],
        )
        .unwrap();
        let primal = test.dot(&w) + mean;
        for (a, b) in fit.predictions[0].iter().zip(primal.iter()) {
            assert_relative_eq!(a, b, epsilon = 1e-10);
        }
        let train = fit.training_predictions(y.view(), delta);
        for (a, b) in fit.predictions[1].iter().zip(train.iter()) {
            assert_relative_eq!(a, b, epsilon = 1e-10);
        }
        assert!(kernel_ridge(z.dot(&z.t()), y.view(), 0.0, &[]).is_err());
        assert!(kernel_ridge(z.dot(&z.t()), y.view(), 1.0, &[z.view()]).is_err());
    }

    /// The identity map with one block per coordinate: `φ(x) = x/√D`.
    struct Identity(usize);
    impl FeatureMap for Identity {
        fn n_blocks(&self) -> usize {
            self.0
        }
        fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError> {
            Ok(Features::Dense(crate::DenseFeatures::uniform(
                x.to_owned(),
                1,
            )?))
        }
    }

    /// Signs in blocks: block d holds column `2d` when `x_d <= 0`, `2d + 1` otherwise; a point
    /// with `x_d` beyond ±10 has no feature in block d (an unseen bin).
    struct Signs(usize);
    impl FeatureMap for Signs {
        fn n_blocks(&self) -> usize {
            self.0
        }
        fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError> {
            let columns = x
                .rows()
                .into_iter()
                .flat_map(|row| {
                    row.iter()
                        .enumerate()
                        .map(|(d, &v)| match v {
                            v if v.abs() > 10.0 => ABSENT,
                            v if v <= 0.0 => 2 * d as u32,
                            _ => 2 * d as u32 + 1,
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            Ok(Features::OneHot(crate::one_hot::OneHotFeatures::new(
                x.nrows(),
                self.0,
                2 * self.0,
                columns,
            )?))
        }
    }

    #[test]
    fn feature_ridge_on_dense_features_is_the_closed_form() {
        // Φ = X/√2 (3 × 2): w = (ΦᵀΦ + δI)⁻¹ Φᵀ(y − ȳ) by the explicit 2 × 2 inverse.
        let x = array![[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]];
        let y = array![1.0, 4.0, 4.0];
        let delta = 0.5;
        let map = Identity(2);
        let train = map.features(x.view()).unwrap();
        let model = FeatureRidge::fit(map, &train, y.view(), delta).unwrap();
        assert_eq!(model.mean(), 3.0);
        // ΦᵀΦ = XᵀX/2 = [[1, 0.5], [0.5, 2.5]]; Φᵀỹ = Xᵀ[−2, 1, 1]/√2 = [−1, 3]/√2.
        let (a, b, d) = (1.0 + delta, 0.5, 2.5 + delta);
        let det = a * d - b * b;
        let r = [-1.0 / 2f64.sqrt(), 3.0 / 2f64.sqrt()];
        let w = [(d * r[0] - b * r[1]) / det, (a * r[1] - b * r[0]) / det];
        assert_relative_eq!(model.weights()[0], w[0], epsilon = 1e-12);
        assert_relative_eq!(model.weights()[1], w[1], epsilon = 1e-12);
        let new = array![[0.5, -1.0], [2.0, 3.0]];
        let predicted = model.predict(new.view()).unwrap();
        for (i, p) in predicted.iter().enumerate() {
            let expected = 3.0 + (new[[i, 0]] * w[0] + new[[i, 1]] * w[1]) / 2f64.sqrt();
            assert_relative_eq!(*p, expected, epsilon = 1e-12);
        }
        assert!(model.predict(array![[1.0, 2.0, 3.0]].view()).is_err());
    }

    #[test]
    fn feature_ridge_on_one_block_is_shrunk_cell_means() {
        // One block: the columns are disjoint cells and ridge decouples, w_c = S_c/(n_c + δ)
        // on centred targets, predictions ȳ + w_c.
        let x = array![[-1.0], [-2.0], [3.0], [-0.5]];
        let y = array![1.0, 2.0, 5.0, 0.0];
        let delta = 0.25;
        let map = Signs(1);
        let train = map.features(x.view()).unwrap();
        let model = FeatureRidge::fit(map, &train, y.view(), delta).unwrap();
        let mean = 2.0;
        let negative = ((1.0 - mean) + (2.0 - mean) + (0.0 - mean)) / (3.0 + delta);
        let positive = (5.0 - mean) / (1.0 + delta);
        let predicted = model
            .predict(array![[-7.0], [0.0], [1.0], [20.0]].view())
            .unwrap();
        let expected = [mean + negative, mean + negative, mean + positive, mean];
        for (p, e) in predicted.iter().zip(expected) {
            assert_relative_eq!(*p, e, epsilon = 1e-12);
        }
    }

    #[test]
    fn feature_ridge_on_one_hot_blocks_equals_dense_ridge() {
        let x = array![
            [-1.0, 1.0],
            [-2.0, -1.0],
            [3.0, 0.5],
            [-0.5, 2.0],
            [1.0, -3.0]
        ];
        let y = array![1.0, 2.0, 5.0, 0.0, -1.0];
        let delta = 0.3;
        let map = Signs(2);
        let train = map.features(x.view()).unwrap();
        let Features::OneHot(one_hot) = &train else {
            unreachable!()
        };
        let mut dense = Array2::<f64>::zeros((5, 4));
        for i in 0..5 {
            for &c in one_hot.row(i) {
                dense[[i, c as usize]] = 1.0 / 2f64.sqrt();
            }
        }
        let mean = y.mean().unwrap();
        let w = ridge_weights(dense.view(), y.mapv(|v| v - mean).view(), delta).unwrap();
        let model = FeatureRidge::fit(
            Box::new(map) as Box<dyn FeatureMap>,
            &train,
            y.view(),
            delta,
        )
        .unwrap();
        for (a, b) in model.weights().iter().zip(w.iter()) {
            assert_relative_eq!(a, b, epsilon = 1e-12);
        }
        let fitted = model.predict_features(&train).unwrap();
        for (a, b) in fitted.iter().zip((dense.dot(&w) + mean).iter()) {
            assert_relative_eq!(a, b, epsilon = 1e-12);
        }
        assert!(FeatureRidge::fit(Signs(3), &train, y.view(), delta).is_err());
        assert!(FeatureRidge::fit(Signs(2), &train, y.view(), 0.0).is_err());
    }

    #[test]
    fn ridge_rejects_bad_input() {
        let z = array![[1.0], [2.0]];
        assert!(ridge_weights(z.view(), array![1.0].view(), 1.0).is_err());
        assert!(ridge_weights(z.view(), array![1.0, 2.0].view(), 0.0).is_err());
    }
}
