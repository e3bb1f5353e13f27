//! The dumbbell: two unit 4-spheres in R^5 joined by a bar, target a function of x₁ (StreaMRAK,
//! spec §8.2).

use anyhow::Result;
use datasets::dumbbell::{sample, PAPER_SIZES};
use ndarray::s;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Generated, Generator};

fn n_sphere() -> usize {
    PAPER_SIZES.0
}
fn n_bar() -> usize {
    PAPER_SIZES.1
}
fn test_fraction() -> f64 {
    0.25
}
fn max_test() -> usize {
    100_000
}

/// `n_sphere` points on each sphere and the points of `n_bar` uniform bar draws outside both
/// balls, shuffled; the first `1 − test_fraction` of them train, the first `max_test` of the rest
/// test (the paper: 10⁶, 10⁶, 25 %, 100,000).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    #[serde(default = "n_sphere")]
    pub n_sphere: usize,
    #[serde(default = "n_bar")]
    pub n_bar: usize,
    #[serde(default = "test_fraction")]
    pub test_fraction: f64,
    #[serde(default = "max_test")]
    pub max_test: usize,
}

impl Generator for Dumbbell {
    fn task(&self) -> Option<datasets::Task> {
        Some(datasets::Task::Regression)
    }

    fn validate(&self) -> Result<(), String> {
        let total = self.n_sphere.saturating_mul(2).saturating_add(self.n_bar);
        if self.n_sphere < 2 {
            return Err(format!(
                "data.n_sphere = {}: need at least 2",
                self.n_sphere
            ));
        }
        if total > 10_000_000 {
            return Err(format!(
                "data: {total} points drawn (5 coordinates each); at most 10000000"
            ));
        }
        if !(self.test_fraction > 0.0 && self.test_fraction < 1.0) {
            return Err(format!(
                "data.test_fraction = {}: expected a number in (0, 1)",
                self.test_fraction
            ));
        }
        if self.max_test == 0 {
            return Err("data.max_test = 0: need at least 1 test point".into());
        }
        Ok(())
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Result<Generated> {
        let (x, y) = sample(self.n_sphere, self.n_bar, rng)?;
        let n = y.len();
        let n_train = ((1.0 - self.test_fraction) * n as f64).round() as usize;
        let n_test = (n - n_train).min(self.max_test);
        if n_train < 2 || n_test == 0 {
            anyhow::bail!("data: {n} points give {n_train} training and {n_test} test points");
        }
        let keep = n_train + n_test;
        Ok(Generated::Regression {
            x: x.slice(s![..keep, ..]).to_owned(),
            y: y.slice(s![..keep]).to_owned(),
            n_train,
            n_validation: 0,
            notes: vec![format!(
                "dumbbell: {n} points ({} on the bar outside the balls); {n_train} train, {n_test} test",
                n - 2 * self.n_sphere
            )],
        })
    }
}
