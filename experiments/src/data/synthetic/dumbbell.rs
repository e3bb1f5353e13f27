//! The dumbbell: two unit 4-spheres in R^5 joined by a bar, target a function of x₁ (StreaMRAK,
//! spec §8.2).

use std::f64::consts::PI;

use anyhow::Result;
use ndarray::{s, Array1, Array2};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use super::{Generated, Generator};

/// Dimension.
pub const DIM: usize = 5;
/// The paper's sizes: points per sphere, points drawn on the bar before the balls are cut out.
pub const PAPER_SIZES: (usize, usize) = (1_000_000, 1_000_000);

/// f(x₁) with a = −1, b = 2: 1 for x₁ ≤ 1, b + 3a = −1 for x₁ ≥ 3, else
/// A₁ sin(B₁x₁ + φ₁) cos(B₂x₁ + φ₂) + a x₁ + b with B₁ = 2π, φ₁ = −2π, A₁ = −a/B₁, B₂ = 7π,
/// φ₂ = −7π (continuous at 1 and 3).
pub fn target(x1: f64) -> f64 {
    let (a, b) = (-1.0, 2.0);
    if x1 <= 1.0 {
        1.0
    } else if x1 >= 3.0 {
        b + 3.0 * a
    } else {
        let (b1, b2) = (2.0 * PI, 7.0 * PI);
        (-a / b1) * (b1 * x1 - 2.0 * PI).sin() * (b2 * x1 - 7.0 * PI).cos() + a * x1 + b
    }
}

/// `n_sphere` points on each unit sphere (normalised Gaussians) and `n_bar` uniform points on
/// the bar of which those inside either unit ball are dropped; shuffled, one row per point, with
/// their targets (no noise, as the authors' code).
pub fn sample<R: Rng + ?Sized>(
    n_sphere: usize,
    n_bar: usize,
    rng: &mut R,
) -> Result<(Array2<f64>, Array1<f64>)> {
    if n_sphere + n_bar == 0 {
        anyhow::bail!("dumbbell: no points to draw (n_sphere = n_bar = 0)");
    }
    let mut points: Vec<[f64; DIM]> = Vec::with_capacity(2 * n_sphere + n_bar);
    for centre in [0.0, 4.0] {
        for _ in 0..n_sphere {
            let mut p = [0.0; DIM];
            let mut norm = 0.0_f64;
            while norm == 0.0 {
                p = std::array::from_fn(|_| StandardNormal.sample(rng));
                norm = p.iter().map(|v| v * v).sum::<f64>().sqrt();
            }
            p.iter_mut().for_each(|v| *v /= norm);
            p[0] += centre;
            points.push(p);
        }
    }
    for _ in 0..n_bar {
        let (x1, x2) = (rng.random_range(0.0..4.0), rng.random_range(-0.5..0.5));
        let inside = |c: f64| (x1 - c).powi(2) + x2 * x2 < 1.0;
        if !inside(0.0) && !inside(4.0) {
            points.push([x1, x2, 0.0, 0.0, 0.0]);
        }
    }
    points.shuffle(rng);
    let y = points.iter().map(|p| target(p[0])).collect();
    let x = Array2::from_shape_fn((points.len(), DIM), |(i, j)| points[i][j]);
    Ok((x, Array1::from_vec(y)))
}

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

crate::register_generator!("dumbbell", Dumbbell);

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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn spheres_are_unit_spheres_the_bar_avoids_the_balls_and_about_half_of_it_is_kept() {
        let (x, y) = sample(20_000, 100_000, &mut ChaCha8Rng::seed_from_u64(2)).unwrap();
        let kept = x.nrows() - 40_000;
        // The bar [0, 4] x [-1/2, 1/2] minus two half-discs cut by |x2| < 1/2: about 48 % removed.
        let share = kept as f64 / 100_000.0;
        assert!((share - 0.52).abs() < 0.01, "kept {share}");
        let (mut spheres, mut bar) = (0, 0);
        for (row, &t) in x.rows().into_iter().zip(&y) {
            let r0 = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            let r4 =
                ((row[0] - 4.0).powi(2) + row.iter().skip(1).map(|v| v * v).sum::<f64>()).sqrt();
            if (r0 - 1.0).abs() < 1e-12 || (r4 - 1.0).abs() < 1e-12 {
                spheres += 1;
            } else {
                bar += 1;
                assert!(r0 >= 1.0 && r4 >= 1.0 && row[2] == 0.0 && row[3] == 0.0 && row[4] == 0.0);
            }
            assert_eq!(t, target(row[0]));
        }
        assert_eq!((spheres, bar), (40_000, kept));
    }

    #[test]
    fn the_target_is_continuous_at_the_ends_of_the_ramp() {
        for (x, expected) in [(1.0, 1.0), (3.0, -1.0)] {
            for dx in [-1e-9, 1e-9] {
                assert!((target(x + dx) - expected).abs() < 1e-7, "at {}", x + dx);
            }
        }
        assert_eq!(target(-0.5), 1.0);
        assert_eq!(target(4.7), -1.0);
        assert!(sample(0, 0, &mut ChaCha8Rng::seed_from_u64(0)).is_err());
    }
}
