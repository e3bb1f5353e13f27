//! VarSinus, f(x) = sin(1/(x + 0.01)) + noise, dense near x = 0 (StreaMRAK, spec §8.1).

use anyhow::Result;
use datasets::varying_sinus::{sample, NOISE_SD, TEST, TRAINING};
use ndarray::{concatenate, Axis};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Generated, Generator};

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
