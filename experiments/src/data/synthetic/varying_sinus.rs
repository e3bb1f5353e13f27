//! VarSinus, f(x) = sin(1/(x + 0.01)) + noise, dense near x = 0 (StreaMRAK, spec §8.1).

use anyhow::Result;
use ndarray::{concatenate, Array1, Axis};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma, Normal};
use serde::{Deserialize, Serialize};

use super::{Generated, Generator};

/// The paper's sizes: (Gamma draws, uniform draws, upper end of the uniform draws).
pub const TRAINING: (usize, usize, f64) = (1_650_000, 550_000, 1.0);
/// The test set: Gamma draws and uniform draws on [0, 0.8).
pub const TEST: (usize, usize, f64) = (130_000, 43_333, 0.8);
/// Standard deviation of the additive noise.
pub const NOISE_SD: f64 = 1e-4;

/// f(x) = sin(1/(x + 0.01)).
pub fn target(x: f64) -> f64 {
    (1.0 / (x + 0.01)).sin()
}

/// `n_gamma` draws of Gamma(shape 1, scale 2) divided by their maximum (so in (0, 1], dense
/// near 0) and `n_uniform` draws of U(0, `uniform_high`), shuffled, with targets
/// f(x) + N(0, `noise_sd`²).
pub fn sample<R: Rng + ?Sized>(
    n_gamma: usize,
    n_uniform: usize,
    uniform_high: f64,
    noise_sd: f64,
    rng: &mut R,
) -> Result<(Array1<f64>, Array1<f64>)> {
    if n_gamma + n_uniform == 0 {
        anyhow::bail!("varying sinus: no points to draw");
    }
    let valid =
        uniform_high.is_finite() && uniform_high > 0.0 && noise_sd.is_finite() && noise_sd >= 0.0;
    if !valid {
        anyhow::bail!(
            "varying sinus: uniform_high = {uniform_high}, noise_sd = {noise_sd}: expected a finite \
             bound > 0 and a finite sd >= 0"
        );
    }
    let gamma = Gamma::new(1.0, 2.0).expect("valid Gamma");
    let mut x: Vec<f64> = (0..n_gamma).map(|_| gamma.sample(rng)).collect();
    let max = x.iter().copied().fold(0.0, f64::max);
    if max > 0.0 {
        x.iter_mut().for_each(|v| *v /= max);
    }
    x.extend((0..n_uniform).map(|_| rng.random_range(0.0..uniform_high)));
    x.shuffle(rng);
    let noise = Normal::new(0.0, noise_sd).expect("finite sd");
    let y: Vec<f64> = x.iter().map(|&v| target(v) + noise.sample(rng)).collect();
    Ok((Array1::from(x), Array1::from(y)))
}

fn train_gamma() -> usize {
    TRAINING.0
}
fn train_uniform() -> usize {
    TRAINING.1
}
fn test_gamma() -> usize {
    TEST.0
}
fn test_uniform() -> usize {
    TEST.1
}
fn test_uniform_high() -> f64 {
    TEST.2
}
fn noise_sd() -> f64 {
    NOISE_SD
}

/// The training set (Gamma(1, 2) draws divided by their maximum plus uniform draws on [0, 1),
/// shuffled) followed by the test set (the same with uniform draws on [0, `test_uniform_high`)),
/// targets sin(1/(x + 0.01)) + N(0, noise_sd²). Defaults: the paper's sizes (2.2 M training and
/// 173,333 test points).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VaryingSinus {
    #[serde(default = "train_gamma")]
    pub train_gamma: usize,
    #[serde(default = "train_uniform")]
    pub train_uniform: usize,
    #[serde(default = "test_gamma")]
    pub test_gamma: usize,
    #[serde(default = "test_uniform")]
    pub test_uniform: usize,
    #[serde(default = "test_uniform_high")]
    pub test_uniform_high: f64,
    #[serde(default = "noise_sd")]
    pub noise_sd: f64,
}

/// More points than this are not what was meant (the paper's are 2.4 M).
const MAX_POINTS: usize = 20_000_000;

crate::register_generator!("varying_sinus", VaryingSinus);

impl Generator for VaryingSinus {
    fn task(&self) -> Option<datasets::Task> {
        Some(datasets::Task::Regression)
    }

    fn validate(&self) -> Result<(), String> {
        let train = self.train_gamma.saturating_add(self.train_uniform);
        let test = self.test_gamma.saturating_add(self.test_uniform);
        if train < 2 || test < 1 {
            return Err(format!(
                "data: {train} training and {test} test points; need at least 2 and 1"
            ));
        }
        if train.saturating_add(test) > MAX_POINTS {
            return Err(format!(
                "data: {} points in all; at most {MAX_POINTS}",
                train.saturating_add(test)
            ));
        }
        if !(self.test_uniform_high.is_finite() && self.test_uniform_high > 0.0) {
            return Err(format!(
                "data.test_uniform_high = {}: expected a finite bound > 0",
                self.test_uniform_high
            ));
        }
        if !(self.noise_sd.is_finite() && self.noise_sd >= 0.0) {
            return Err(format!(
                "data.noise_sd = {}: expected a finite number >= 0",
                self.noise_sd
            ));
        }
        Ok(())
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Result<Generated> {
        let (x_train, y_train) = sample(
            self.train_gamma,
            self.train_uniform,
            TRAINING.2,
            self.noise_sd,
            rng,
        )?;
        let (x_test, y_test) = sample(
            self.test_gamma,
            self.test_uniform,
            self.test_uniform_high,
            self.noise_sd,
            rng,
        )?;
        let n_train = x_train.len();
        Ok(Generated::Regression {
            x: concatenate![Axis(0), x_train, x_test].insert_axis(Axis(1)),
            y: concatenate![Axis(0), y_train, y_test],
            n_train,
            n_validation: 0,
            notes: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn inputs_are_in_the_unit_interval_dense_near_zero_with_noisy_targets() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (x, y) = sample(30_000, 10_000, 1.0, NOISE_SD, &mut rng).unwrap();
        assert_eq!((x.len(), y.len()), (40_000, 40_000));
        assert!(x.iter().all(|&v| (0.0..=1.0).contains(&v)));
        // The normalised Gamma draws reach 1 exactly once.
        assert_eq!(x.iter().filter(|&&v| v == 1.0).count(), 1);
        // Exp(mean 2) / max of 30,000 draws (about 2 ln 30000 = 20.6): most mass below 0.2.
        let near_zero = x.iter().filter(|&&v| v < 0.2).count() as f64 / 40_000.0;
        assert!(near_zero > 0.6, "share below 0.2: {near_zero}");
        let residual_sd = (x
            .iter()
            .zip(&y)
            .map(|(&a, &b)| (b - target(a)).powi(2))
            .sum::<f64>()
            / 40_000.0)
            .sqrt();
        assert!(
            (residual_sd / NOISE_SD - 1.0).abs() < 0.05,
            "noise sd {residual_sd}"
        );
    }

    #[test]
    fn the_test_set_keeps_its_uniform_part_below_its_bound_and_draws_are_seeded() {
        let draw = |seed| {
            sample(
                1000,
                500,
                0.8,
                NOISE_SD,
                &mut ChaCha8Rng::seed_from_u64(seed),
            )
            .unwrap()
        };
        let (x, _) = draw(3);
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3).0, draw(4).0);
        // 500 uniform draws below 0.8 and Gamma draws anywhere in (0, 1].
        assert!(x.iter().filter(|&&v| v >= 0.8).count() < 1000);
        assert!(sample(0, 0, 1.0, 0.0, &mut ChaCha8Rng::seed_from_u64(0)).is_err());
        assert!(sample(1, 0, 0.0, 0.0, &mut ChaCha8Rng::seed_from_u64(0)).is_err());
    }
}
