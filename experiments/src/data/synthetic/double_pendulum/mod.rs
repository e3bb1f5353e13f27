//! Double-pendulum trajectories (StreaMRAK, spec §8.3): training and test pendulums simulated
//! from perturbed initial conditions with an adaptive Dormand–Prince integrator.

pub mod dynamics;

use anyhow::Result;
use dynamics::{
    trajectories, DoublePendulum, InitialConditions, State, Tolerance, HIGH_ENERGY_DEGREES,
    LOW_ENERGY_DEGREES, TEST_PERTURBATION, TRAINING_PERTURBATION,
};
use ndarray::{Array2, Array3};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Generated, Generator};

/// Which initial-condition mean the pendulums start near.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Energy {
    /// (−120°, −20°, −7.57°/s, 7.68°/s): chaotic (the paper's main experiment).
    High,
    /// (−20°, −20°, 0, 0).
    Low,
}

fn n_train() -> usize {
    8_000
}
fn n_test() -> usize {
    100
}
fn train_steps() -> usize {
    501
}
fn test_steps() -> usize {
    500
}
fn dt() -> f64 {
    0.025
}
fn rtol() -> f64 {
    Tolerance::paper().rtol
}
fn test_noise() -> f64 {
    0.01
}

/// `n_train` training and `n_test` test pendulums (g = 10, unit masses and lengths), each
/// simulated for `train_steps` / `test_steps` steps of `dt` seconds; every recorded test state
/// of all but the first test pendulum is multiplied by (1 + u), u ~ U(−test_noise, test_noise),
/// one u per record. Defaults: the authors' code (8,000 and 100 pendulums, 501 and 500 steps).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DoublePendulumData {
    pub energy: Energy,
    #[serde(default = "n_train")]
    pub n_train: usize,
    #[serde(default = "n_test")]
    pub n_test: usize,
    #[serde(default = "train_steps")]
    pub train_steps: usize,
    #[serde(default = "test_steps")]
    pub test_steps: usize,
    #[serde(default = "dt")]
    pub dt: f64,
    /// Relative tolerance of the integrator (absolute tolerance rtol / 100).
    #[serde(default = "rtol")]
    pub rtol: f64,
    #[serde(default = "test_noise")]
    pub test_noise: f64,
}

/// The simulated pendulums.
#[derive(Debug, Clone)]
pub struct PendulumTrajectories {
    pub pendulum: DoublePendulum,
    /// Seconds between recorded states.
    pub dt: f64,
    /// Training states (pendulum, step, (θ₁, θ₂, ω₁, ω₂)), noise-free.
    pub train: Array3<f64>,
    /// Recorded test states (pendulum, step, state), with the record noise.
    pub test: Array3<f64>,
    /// The test pendulums' noise-free initial states (one per row).
    pub test_initial: Array2<f64>,
    /// maxDistance of spec §8.3 (from the energy of the first test state): the scale of the
    /// state space, r₀ is a multiple of it.
    pub max_distance: f64,
}

/// maxDistance = √((2θ₁max)² + (2θ₂max)² + (2ω₁max)² + (2ω₂max)²) with θ_max = π and the largest
/// angular velocities that energy E allows (spec §8.3, ω₁max as written there: D3).
pub fn max_distance(p: &DoublePendulum, energy: f64) -> f64 {
    let (m1, m2, l1, l2, g) = (p.m1, p.m2, p.l1, p.l2, p.g);
    let w1 = (2.0 * (energy + ((m1 + m2) * l1 + m2 * g) * g) / (l1 * l1 * (m1 + m2))).sqrt();
    let w2 = (2.0 * (energy + ((m1 + m2) * l1 + m2 * l2) * g) / (m2 * l2 * l2)).sqrt();
    let pi = std::f64::consts::PI;
    (2.0 * (2.0 * pi).powi(2) + (2.0 * w1).powi(2) + (2.0 * w2).powi(2)).sqrt()
}

fn stack(states: &[Vec<State>]) -> Array3<f64> {
    let steps = states.first().map_or(0, Vec::len);
    Array3::from_shape_fn((states.len(), steps, 4), |(i, t, c)| states[i][t][c])
}

impl DoublePendulumData {
    /// Simulates the pendulums.
    pub fn simulate(&self, rng: &mut ChaCha8Rng) -> Result<PendulumTrajectories> {
        let pendulum = DoublePendulum::paper();
        let mean_degrees = match self.energy {
            Energy::High => HIGH_ENERGY_DEGREES,
            Energy::Low => LOW_ENERGY_DEGREES,
        };
        let tolerance = Tolerance {
            rtol: self.rtol,
            atol: self.rtol / 100.0,
        };
        let train = trajectories(
            &pendulum,
            InitialConditions {
                mean_degrees,
                fractions: TRAINING_PERTURBATION,
            },
            self.n_train,
            (self.train_steps, self.dt),
            tolerance,
            rng,
        )?;
        let test = trajectories(
            &pendulum,
            InitialConditions {
                mean_degrees,
                fractions: TEST_PERTURBATION,
            },
            self.n_test,
            (self.test_steps, self.dt),
            tolerance,
            rng,
        )?;
        let test_initial = Array2::from_shape_fn((test.len(), 4), |(i, c)| test[i][0][c]);
        let mut recorded = stack(&test);
        for mut pendulum_records in recorded.outer_iter_mut().skip(1) {
            for mut record in pendulum_records.outer_iter_mut() {
                let u: f64 = rng.random_range(-self.test_noise..=self.test_noise);
                record.mapv_inplace(|v| v * (1.0 + u));
            }
        }
        let energy = pendulum.energy(&test[0][0]);
        Ok(PendulumTrajectories {
            pendulum,
            dt: self.dt,
            train: stack(&train),
            test: recorded,
            test_initial,
            max_distance: max_distance(&pendulum, energy),
        })
    }
}

crate::register_generator!("double_pendulum", DoublePendulumData);

impl Generator for DoublePendulumData {
    fn task(&self) -> Option<datasets::Task> {
        Some(datasets::Task::Regression)
    }

    fn validate(&self) -> Result<(), String> {
        if self.n_train == 0 || self.n_test == 0 {
            return Err(format!(
                "data.n_train = {}, data.n_test = {}: need at least one of each",
                self.n_train, self.n_test
            ));
        }
        if self.train_steps == 0 || self.test_steps == 0 {
            return Err("data.train_steps and data.test_steps must be at least 1".into());
        }
        let values = self
            .n_train
            .saturating_mul(self.train_steps + 1)
            .saturating_add(self.n_test.saturating_mul(self.test_steps + 1))
            .saturating_mul(4);
        if values > 200_000_000 {
            return Err(format!(
                "data: {values} recorded values (1.6 GB); at most 200000000"
            ));
        }
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return Err(format!("data.dt = {}: expected a finite step > 0", self.dt));
        }
        if !(self.rtol.is_finite() && self.rtol > 0.0 && self.rtol < 0.1) {
            return Err(format!(
                "data.rtol = {}: expected a number in (0, 0.1)",
                self.rtol
            ));
        }
        if !(self.test_noise.is_finite() && (0.0..1.0).contains(&self.test_noise)) {
            return Err(format!(
                "data.test_noise = {}: expected a number in [0, 1)",
                self.test_noise
            ));
        }
        Ok(())
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Result<Generated> {
        Ok(Generated::Trajectories(self.simulate(rng)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Spec §8.3: E ≈ 0.63 and maxDistance ≈ 28.4 at the high-energy mean, E ≈ −28.2 and
    /// maxDistance ≈ 21.5 at the low-energy one.
    #[test]
    fn max_distance_matches_the_spec_values() {
        let p = DoublePendulum::paper();
        for (mean, e_want, d_want) in [
            (HIGH_ENERGY_DEGREES, 0.63, 28.4),
            (LOW_ENERGY_DEGREES, -28.2, 21.5),
        ] {
            let e = p.energy(&dynamics::radians(mean));
            assert!((e - e_want).abs() < 0.05, "E {e} vs {e_want}");
            let d = max_distance(&p, e);
            assert!((d - d_want).abs() < 0.1, "maxDistance {d} vs {d_want}");
        }
    }

    #[test]
    fn test_records_are_noisy_except_the_first_pendulum_and_the_initial_states() {
        let spec = DoublePendulumData {
            energy: Energy::High,
            n_train: 3,
            n_test: 3,
            train_steps: 20,
            test_steps: 20,
            dt: dt(),
            rtol: 1e-8,
            test_noise: 0.01,
        };
        let a = spec.simulate(&mut ChaCha8Rng::seed_from_u64(1)).unwrap();
        assert_eq!(a.train.dim(), (3, 21, 4));
        assert_eq!(a.test.dim(), (3, 21, 4));
        let clean = DoublePendulumData {
            test_noise: 0.0,
            ..spec.clone()
        }
        .simulate(&mut ChaCha8Rng::seed_from_u64(1))
        .unwrap();
        assert_eq!(a.train, clean.train);
        // The first test pendulum is recorded without noise; the others within 1 %.
        assert_eq!(
            a.test.index_axis(ndarray::Axis(0), 0),
            clean.test.index_axis(ndarray::Axis(0), 0)
        );
        let rel = (&a.test - &clean.test).mapv(f64::abs) / clean.test.mapv(|v| v.abs().max(1e-300));
        assert!(rel.iter().all(|&r| r <= 0.01 + 1e-12));
        assert!(rel.iter().any(|&r| r > 1e-4));
        assert_eq!(
            a.test_initial.row(1),
            clean.test.slice(ndarray::s![1, 0, ..])
        );
    }
}
