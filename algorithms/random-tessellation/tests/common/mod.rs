//! Statistics shared by the integration tests: the Kolmogorov-Smirnov statistic, Pearson's
//! chi-square, brute-force distances, small data generators, and checks of the input errors.

#![allow(dead_code)]

use kernel_core::CoreError;
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use random_tessellation::RtfError;

/// KS statistic of `samples` against the continuous CDF `cdf`.
pub fn ks_statistic(mut samples: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    let n = samples.len() as f64;
    samples
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max((f - (i + 1) as f64 / n).abs())
        })
        .fold(0.0, f64::max)
}

/// Critical value of the KS statistic at level 0.1 %.
pub fn ks_critical(n: usize) -> f64 {
    1.95 / (n as f64).sqrt()
}

/// Pearson's chi-square of observed counts against expected probabilities.
pub fn chi_square(observed: &[u64], probabilities: &[f64]) -> f64 {
    let n: u64 = observed.iter().sum();
    observed
        .iter()
        .zip(probabilities)
        .map(|(&o, &p)| {
            let e = p * n as f64;
            (o as f64 - e).powi(2) / e
        })
        .sum()
}

/// Upper 0.1 % point of the chi-square distribution with `df` degrees of freedom
/// (Wilson-Hilferty approximation, accurate to about 1 % for df >= 3).
pub fn chi_square_critical(df: usize) -> f64 {
    let k = df as f64;
    let z = 3.090; // standard normal 0.999 quantile
    k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

pub fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

pub fn uniform(n: usize, d: usize, rng: &mut impl Rng) -> Array2<f64> {
    Array2::from_shape_fn((n, d), |_| rng.random::<f64>())
}

pub fn gaussian(n: usize, d: usize, rng: &mut impl Rng) -> Array2<f64> {
    Array2::from_shape_fn((n, d), |_| rng.sample::<f64, _>(StandardNormal))
}

/// Two well separated Gaussian blobs in 2-D (centres (0.25, 0.25) and (0.75, 0.75), sd 0.05),
/// labels 0 and 1 alternating.
pub fn blobs(n: usize, rng: &mut impl Rng) -> (Array2<f64>, Vec<u32>) {
    let labels: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let x = Array2::from_shape_fn((n, 2), |(i, _)| {
        let centre = if labels[i] == 0 { 0.25 } else { 0.75 };
        centre + 0.05 * rng.sample::<f64, _>(StandardNormal)
    });
    (x, labels)
}

/// Asserts that `result` is [`RtfError::NonFiniteInput`] at `what` (`"training"`, `"test"`)
/// row `row`, column `column`, and that its message names them.
pub fn assert_non_finite<T: std::fmt::Debug>(
    result: Result<T, RtfError>,
    what: &str,
    row: usize,
    column: usize,
) {
    match result {
        Err(
            e @ RtfError::Core(CoreError::NonFiniteInput {
                what: w,
                row: r,
                column: c,
                ..
            }),
        ) => {
            assert_eq!((w, r, c), (what, row, column), "{e}");
            let named = format!("{what} row {row}, column {column} is not finite");
            assert!(e.to_string().starts_with(&named), "{e}");
        }
        other => panic!("expected a non-finite {what} value at ({row}, {column}), got {other:?}"),
    }
}

/// Asserts that `result` is [`RtfError::ShapeMismatch`] with `expected` and `got`, and that its
/// message says both.
pub fn assert_shape_mismatch<T: std::fmt::Debug>(
    result: Result<T, RtfError>,
    expected: usize,
    got: usize,
) {
    match result {
        Err(
            e @ RtfError::Core(CoreError::ShapeMismatch {
                expected: x,
                got: g,
                ..
            }),
        ) => {
            assert_eq!((x, g), (expected, got), "{e}");
            let said = format!("(expected {expected}, got {got})");
            assert!(e.to_string().ends_with(&said), "{e}");
        }
        other => panic!("expected a shape mismatch ({expected} vs {got}), got {other:?}"),
    }
}
