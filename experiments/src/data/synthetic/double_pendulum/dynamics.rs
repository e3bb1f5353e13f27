//! The double pendulum of the StreaMRAK paper (spec `streamrak.md` §8.3): its equations of
//! motion, energy and mass positions, an adaptive Dormand–Prince 5(4) integrator, and seeded
//! trajectories from perturbed initial conditions (the physics behind the generator of
//! [`super`]).
//!
//! State s = (θ₁, θ₂, ω₁, ω₂) in rad and rad/s; a trajectory records the state after every step
//! of `dt`, each step integrated adaptively over [0, dt] (the system is chaotic: accuracy, not
//! bitwise agreement with the authors' LSODA, is the goal). Trajectories are drawn in parallel
//! from one seed each, taken from the caller's RNG in order, so the data do not depend on the
//! thread count.

use anyhow::{bail, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;

/// A state (θ₁, θ₂, ω₁, ω₂).
pub type State = [f64; 4];

/// The pendulum's constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DoublePendulum {
    pub g: f64,
    pub l1: f64,
    pub l2: f64,
    pub m1: f64,
    pub m2: f64,
}

/// Initial-condition means of the paper, (θ₁, θ₂, ω₁, ω₂) in degrees and degrees per second.
pub const HIGH_ENERGY_DEGREES: State = [-120.0, -20.0, -7.57, 7.68];
/// The low-energy option.
pub const LOW_ENERGY_DEGREES: State = [-20.0, -20.0, 0.0, 0.0];
/// Relative perturbations of the training initial conditions, per component.
pub const TRAINING_PERTURBATION: State = [0.025, 0.15, 0.3, 0.3];
/// Relative perturbation of the test initial conditions.
pub const TEST_PERTURBATION: State = [0.01; 4];

impl DoublePendulum {
    /// g = 10, unit lengths and masses (spec §8.3).
    pub fn paper() -> Self {
        Self {
            g: 10.0,
            l1: 1.0,
            l2: 1.0,
            m1: 1.0,
            m2: 1.0,
        }
    }

    /// ds/dt (the spec's equations, δ = θ₂ − θ₁).
    pub fn derivative(&self, s: &State) -> State {
        let Self { g, l1, l2, m1, m2 } = *self;
        let [t1, t2, w1, w2] = *s;
        let d = t2 - t1;
        let (sd, cd) = d.sin_cos();
        let den1 = (m1 + m2) * l1 - m2 * l1 * cd * cd;
        let a1 = (m2 * l1 * w1 * w1 * sd * cd + m2 * g * t2.sin() * cd + m2 * l2 * w2 * w2 * sd
            - (m1 + m2) * g * t1.sin())
            / den1;
        let den2 = (l2 / l1) * den1;
        let a2 = (-m2 * l2 * w2 * w2 * sd * cd + (m1 + m2) * g * t1.sin() * cd
            - (m1 + m2) * l1 * w1 * w1 * sd
            - (m1 + m2) * g * t2.sin())
            / den2;
        [w1, w2, a1, a2]
    }

    /// Total energy E (kinetic + potential, spec §8.3).
    pub fn energy(&self, s: &State) -> f64 {
        let Self { g, l1, l2, m1, m2 } = *self;
        let [t1, t2, w1, w2] = *s;
        0.5 * m1 * (l1 * w1).powi(2)
            + 0.5
                * m2
                * ((l1 * w1).powi(2)
                    + (l2 * w2).powi(2)
                    + 2.0 * l1 * l2 * w1 * w2 * (t2 - t1).cos())
            - m1 * g * l1 * t1.cos()
            - m2 * g * (l1 * t1.cos() + l2 * t2.cos())
    }

    /// Mass positions (x₁, y₁, x₂, y₂).
    pub fn positions(&self, s: &State) -> [f64; 4] {
        let x1 = self.l1 * s[0].sin();
        let y1 = -self.l1 * s[0].cos();
        [x1, y1, x1 + self.l2 * s[1].sin(), y1 - self.l2 * s[1].cos()]
    }

    /// The states after each of `steps` steps of `dt` from `s0` (`steps + 1` states, `s0` first).
    pub fn trajectory(
        &self,
        s0: State,
        dt: f64,
        steps: usize,
        tolerance: Tolerance,
    ) -> Result<Vec<State>> {
        if !(dt.is_finite() && dt > 0.0) {
            bail!("dt = {dt}: expected a finite step > 0");
        }
        if s0.iter().any(|v| !v.is_finite()) {
            bail!("initial state {s0:?} is not finite");
        }
        let mut states = Vec::with_capacity(steps + 1);
        states.push(s0);
        let mut s = s0;
        let mut h = dt;
        for _ in 0..steps {
            let (next, last_h) = dormand_prince(|y| self.derivative(y), s, dt, h, tolerance)?;
            s = next;
            h = last_h;
            states.push(s);
        }
        Ok(states)
    }
}

/// Error tolerances of the adaptive integrator: a step is accepted when every component's
/// error estimate is within `atol + rtol·|y|` (in the root-mean-square sense).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl Tolerance {
    /// rtol = 1e-10, atol = 1e-12 (spec §8.3: "Dormand–Prince with rtol ≈ 1e-10").
    pub fn paper() -> Self {
        Self {
            rtol: 1e-10,
            atol: 1e-12,
        }
    }
}

/// Most steps one call may take (a stiff or diverging system stops with an error instead).
const MAX_STEPS: usize = 1_000_000;

/// Integrates y' = f(y) from y0 over [0, span] with the Dormand–Prince 5(4) pair (the
/// fifth-order solution is propagated), starting with step `h0`; returns y(span) and the last
/// accepted step size proposal (a good start for the next call).
pub fn dormand_prince<const N: usize>(
    f: impl Fn(&[f64; N]) -> [f64; N],
    y0: [f64; N],
    span: f64,
    h0: f64,
    tol: Tolerance,
) -> Result<([f64; N], f64)> {
    // Stage times (0, 1/5, 3/10, 4/5, 8/9, 1, 1) are not needed: the system is autonomous.
    const A: [[f64; 6]; 7] = [
        [0.0; 6],
        [1.0 / 5.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0],
        [44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0],
        [
            19372.0 / 6561.0,
            -25360.0 / 2187.0,
            64448.0 / 6561.0,
            -212.0 / 729.0,
            0.0,
            0.0,
        ],
        [
            9017.0 / 3168.0,
            -355.0 / 33.0,
            46732.0 / 5247.0,
            49.0 / 176.0,
            -5103.0 / 18656.0,
            0.0,
        ],
        [
            35.0 / 384.0,
            0.0,
            500.0 / 1113.0,
            125.0 / 192.0,
            -2187.0 / 6784.0,
            11.0 / 84.0,
        ],
    ];
    // Fifth-order weights (the last row of A) minus the embedded fourth-order ones.
    const E: [f64; 7] = [
        35.0 / 384.0 - 5179.0 / 57600.0,
        0.0,
        500.0 / 1113.0 - 7571.0 / 16695.0,
        125.0 / 192.0 - 393.0 / 640.0,
        -2187.0 / 6784.0 + 92097.0 / 339200.0,
        11.0 / 84.0 - 187.0 / 2100.0,
        -1.0 / 40.0,
    ];
    if !(tol.rtol > 0.0 && tol.atol >= 0.0 && span > 0.0 && h0 > 0.0) {
        bail!(
            "integrator: rtol = {}, atol = {}, span = {span}, h0 = {h0}: expected positive values",
            tol.rtol,
            tol.atol
        );
    }
    let (mut t, mut y, mut h) = (0.0, y0, h0.min(span));
    let mut k = [[0.0; N]; 7];
    k[0] = f(&y);
    for _ in 0..MAX_STEPS {
        let last = t + h >= span;
        if last {
            h = span - t;
        }
        for stage in 1..7 {
            let mut ys = y;
            for (j, kj) in k.iter().enumerate().take(stage) {
                let a = A[stage][j];
                if a != 0.0 {
                    for i in 0..N {
                        ys[i] += h * a * kj[i];
                    }
                }
            }
            k[stage] = f(&ys);
        }
        // The fifth-order solution is the last stage's argument (FSAL): recompute it.
        let mut y_new = y;
        for (j, kj) in k.iter().enumerate().take(6) {
            for i in 0..N {
                y_new[i] += h * A[6][j] * kj[i];
            }
        }
        let mut err = 0.0;
        for i in 0..N {
            let e: f64 = (0..7).map(|j| E[j] * k[j][i]).sum::<f64>() * h;
            let scale = tol.atol + tol.rtol * y[i].abs().max(y_new[i].abs());
            err += (e / scale).powi(2);
        }
        let err = (err / N as f64).sqrt();
        if !err.is_finite() || y_new.iter().any(|v| !v.is_finite()) {
            bail!("integrator: the solution is not finite (diverging system?)");
        }
        let factor = if err == 0.0 {
            5.0
        } else {
            (0.9 * err.powf(-0.2)).clamp(0.2, 5.0)
        };
        if err <= 1.0 {
            t += h;
            y = y_new;
            k[0] = k[6];
            if last {
                return Ok((y, (h * factor).max(f64::MIN_POSITIVE)));
            }
        }
        h *= factor;
        if t + h <= t {
            bail!("integrator: the step size underflowed");
        }
    }
    Err(anyhow::anyhow!(
        "integrator: more than {MAX_STEPS} steps for one interval"
    ))
}

/// Degrees to radians, per component.
pub fn radians(s: State) -> State {
    s.map(f64::to_radians)
}

/// A perturbed initial condition: each component c of `mean_degrees` plus N(0, (f_c·|c|)²), in
/// degrees, then converted to radians (a zero component stays exactly zero).
pub fn perturbed_initial<R: Rng + ?Sized>(
    mean_degrees: State,
    fractions: State,
    rng: &mut R,
) -> State {
    let mut s = mean_degrees;
    for (c, f) in s.iter_mut().zip(fractions) {
        let sd = f * c.abs();
        if sd > 0.0 {
            *c += Normal::new(0.0, sd).expect("finite sd > 0").sample(rng);
        }
    }
    radians(s)
}

/// How initial conditions are drawn: a mean (degrees, degrees per second) and the relative
/// perturbation of each component.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InitialConditions {
    pub mean_degrees: State,
    pub fractions: State,
}

/// `n` trajectories of `steps` steps of `dt` from [`perturbed_initial`] conditions; trajectory i
/// draws from its own seed, taken from `rng` in order, and they are simulated in parallel (the
/// result does not depend on the thread count).
pub fn trajectories<R: Rng + ?Sized>(
    pendulum: &DoublePendulum,
    initial: InitialConditions,
    n: usize,
    (steps, dt): (usize, f64),
    tolerance: Tolerance,
    rng: &mut R,
) -> Result<Vec<Vec<State>>> {
    let InitialConditions {
        mean_degrees,
        fractions,
    } = initial;
    if n == 0 {
        bail!("trajectories: n = 0");
    }
    let seeds: Vec<[u8; 32]> = (0..n).map(|_| rng.random()).collect();
    seeds
        .into_par_iter()
        .map(|seed| {
            let mut r = ChaCha8Rng::from_seed(seed);
            let s0 = perturbed_initial(mean_degrees, fractions, &mut r);
            pendulum.trajectory(s0, dt, steps, tolerance)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dormand_prince_integrates_the_harmonic_oscillator_to_its_tolerance() {
        // y'' = -y, y(0) = 1, y'(0) = 0: y = cos t.
        let f = |y: &[f64; 2]| [y[1], -y[0]];
        let mut y = [1.0, 0.0];
        let mut h = 0.1;
        for step in 1..=100 {
            (y, h) = dormand_prince(f, y, 0.1, h, Tolerance::paper()).unwrap();
            let t = 0.1 * step as f64;
            assert!(
                (y[0] - t.cos()).abs() < 1e-8,
                "t {t}: {} vs {}",
                y[0],
                t.cos()
            );
            assert!((y[1] + t.sin()).abs() < 1e-8);
        }
    }

    #[test]
    fn the_high_energy_pendulum_conserves_its_energy_over_500_steps() {
        let p = DoublePendulum::paper();
        let s0 = radians(HIGH_ENERGY_DEGREES);
        let e0 = p.energy(&s0);
        // The spec's E of the first test state is about 0.63 (a 1 % perturbation of this mean).
        assert!((e0 - 0.63).abs() < 0.2, "E = {e0}");
        let states = p.trajectory(s0, 0.025, 500, Tolerance::paper()).unwrap();
        assert_eq!(states.len(), 501);
        let drift = states
            .iter()
            .map(|s| ((p.energy(s) - e0) / e0.abs().max(1.0)).abs())
            .fold(0.0, f64::max);
        assert!(drift < 1e-6, "relative energy drift {drift}");
        // It moves: the chaotic regime, not a resting state.
        assert!(states.iter().any(|s| (s[1] - s0[1]).abs() > 1.0));
    }

    #[test]
    fn derivative_is_the_one_of_the_lagrangian_energy() {
        // dE/dt = ∇E · s' must vanish for the equations of motion.
        let p = DoublePendulum::paper();
        for s in [
            [0.3, -1.2, 0.7, 2.1],
            [-2.0, 1.0, -3.0, 0.5],
            [1.5, 1.4, 0.0, 0.0],
        ] {
            let ds = p.derivative(&s);
            let h = 1e-6;
            let grad: Vec<f64> = (0..4)
                .map(|i| {
                    let (mut a, mut b) = (s, s);
                    a[i] += h;
                    b[i] -= h;
                    (p.energy(&a) - p.energy(&b)) / (2.0 * h)
                })
                .collect();
            let de: f64 = grad.iter().zip(ds).map(|(g, d)| g * d).sum();
            assert!(de.abs() < 1e-6, "dE/dt = {de} at {s:?}");
        }
    }

    #[test]
    fn positions_follow_the_angles() {
        let p = DoublePendulum::paper();
        assert_eq!(p.positions(&[0.0, 0.0, 0.0, 0.0]), [0.0, -1.0, 0.0, -2.0]);
        let [x1, y1, x2, y2] = p.positions(&[std::f64::consts::FRAC_PI_2, 0.0, 0.0, 0.0]);
        assert!((x1 - 1.0).abs() < 1e-15 && y1.abs() < 1e-15);
        assert!((x2 - 1.0).abs() < 1e-15 && (y2 + 1.0).abs() < 1e-15);
    }

    #[test]
    fn trajectories_are_seeded_and_independent_of_the_thread_count() {
        let p = DoublePendulum::paper();
        let draw = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    trajectories(
                        &p,
                        InitialConditions {
                            mean_degrees: HIGH_ENERGY_DEGREES,
                            fractions: TRAINING_PERTURBATION,
                        },
                        6,
                        (20, 0.025),
                        Tolerance::paper(),
                        &mut ChaCha8Rng::seed_from_u64(5),
                    )
                    .unwrap()
                })
        };
        let one = draw(1);
        assert_eq!(one, draw(3));
        assert_eq!(one.len(), 6);
        assert!(one.iter().all(|t| t.len() == 21));
        assert_ne!(one[0][0], one[1][0]);
        // Low energy: the angular velocities start exactly at 0.
        let s = perturbed_initial(
            LOW_ENERGY_DEGREES,
            TRAINING_PERTURBATION,
            &mut ChaCha8Rng::seed_from_u64(1),
        );
        assert_eq!((s[2], s[3]), (0.0, 0.0));
    }

    #[test]
    fn bad_parameters_are_errors() {
        let p = DoublePendulum::paper();
        assert!(p.trajectory([0.0; 4], 0.0, 5, Tolerance::paper()).is_err());
        assert!(p
            .trajectory([f64::NAN, 0.0, 0.0, 0.0], 0.025, 5, Tolerance::paper())
            .is_err());
        let bad = Tolerance {
            rtol: 0.0,
            atol: 0.0,
        };
        assert!(p.trajectory([0.1, 0.0, 0.0, 0.0], 0.025, 5, bad).is_err());
    }
}
