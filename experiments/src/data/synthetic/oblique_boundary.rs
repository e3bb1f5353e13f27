//! A two-class task with an oblique linear boundary (Random Tessellation Forests, the optional
//! simulation study of spec §8): `n` points uniform on `[0, 1]^dim`, class `1` when
//! `Σ_{j < informative} (x_j − 1/2) > 0` (a hyperplane at 45° to every informative axis, the
//! case where oblique cuts should beat axis-aligned ones), each label flipped with probability
//! `label_noise`. Drawn once from the run's data seed; repetition `r` splits the points at
//! random (`test_fraction`), the same split for every method.

use anyhow::Result;
use ndarray::Array2;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Generated, Generator};

fn one_third() -> f64 {
    1.0 / 3.0
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ObliqueBoundary {
    pub n: usize,
    pub dim: usize,
    /// Coordinates the boundary depends on (absent: all).
    #[serde(default)]
    pub informative: Option<usize>,
    #[serde(default)]
    pub label_noise: f64,
    #[serde(default = "one_third")]
    pub test_fraction: f64,
}

crate::register_generator!("oblique_boundary", ObliqueBoundary);

impl Generator for ObliqueBoundary {
    fn task(&self) -> Option<datasets::Task> {
        Some(datasets::Task::Classification)
    }

    /// A random split per repetition.
    fn fixed_split(&self) -> bool {
        false
    }

    fn validate(&self) -> Result<(), String> {
        if !(4..=10_000_000).contains(&self.n) {
            return Err(format!("data.n = {}: expected 4..=10000000", self.n));
        }
        if !(1..=10_000).contains(&self.dim) {
            return Err(format!("data.dim = {}: expected 1..=10000", self.dim));
        }
        if let Some(k) = self.informative {
            if k == 0 || k > self.dim {
                return Err(format!(
                    "data.informative = {k}: expected 1..=dim ({})",
                    self.dim
                ));
            }
        }
        if !(0.0..0.5).contains(&self.label_noise) {
            return Err(format!(
                "data.label_noise = {}: expected a probability in [0, 0.5)",
                self.label_noise
            ));
        }
        datasets::SplitSpec::Random {
            test_fraction: self.test_fraction,
            stratify: false,
        }
        .validate()
        .map_err(|e| format!("data.test_fraction: {e}"))
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Result<Generated> {
        let k = self.informative.unwrap_or(self.dim);
        let x = Array2::from_shape_fn((self.n, self.dim), |_| rng.random::<f64>());
        let labels = x
            .rows()
            .into_iter()
            .map(|r| {
                let side = r.iter().take(k).map(|v| v - 0.5).sum::<f64>() > 0.0;
                let flip = rng.random::<f64>() < self.label_noise;
                u32::from(side != flip)
            })
            .collect();
        Ok(Generated::Classification {
            x,
            labels,
            names: vec!["0".into(), "1".into()],
            split: datasets::SplitSpec::Random {
                test_fraction: self.test_fraction,
                stratify: false,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn draw(noise: f64, n: usize) -> (Array2<f64>, Vec<u32>) {
        let g = ObliqueBoundary {
            n,
            dim: 3,
            informative: Some(2),
            label_noise: noise,
            test_fraction: one_third(),
        };
        g.validate().unwrap();
        match g.generate(&mut ChaCha8Rng::seed_from_u64(5)).unwrap() {
            Generated::Classification { x, labels, .. } => (x, labels),
            _ => panic!("a classification sample"),
        }
    }

    #[test]
    fn labels_follow_the_oblique_boundary_up_to_the_flips() {
        let side = |r: ndarray::ArrayView1<f64>| u32::from(r[0] + r[1] > 1.0);
        let (x, labels) = draw(0.0, 2000);
        assert!(x
            .rows()
            .into_iter()
            .zip(&labels)
            .all(|(r, &l)| side(r) == l));
        let (x, labels) = draw(0.2, 20_000);
        let flipped = x
            .rows()
            .into_iter()
            .zip(&labels)
            .filter(|(r, &l)| side(*r) != l)
            .count() as f64
            / 20_000.0;
        // Binomial sd at p = 0.2, n = 20,000: 0.0028.
        assert!((flipped - 0.2).abs() < 0.012, "{flipped}");
        for bad in [
            ObliqueBoundary {
                n: 3,
                dim: 2,
                informative: None,
                label_noise: 0.0,
                test_fraction: 0.3,
            },
            ObliqueBoundary {
                n: 10,
                dim: 2,
                informative: Some(3),
                label_noise: 0.0,
                test_fraction: 0.3,
            },
            ObliqueBoundary {
                n: 10,
                dim: 2,
                informative: None,
                label_noise: 0.5,
                test_fraction: 0.3,
            },
            ObliqueBoundary {
                n: 10,
                dim: 2,
                informative: None,
                label_noise: 0.0,
                test_fraction: 1.0,
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
