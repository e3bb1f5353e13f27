//! The E1 VarSinus stream and StreaMRAK settings shared by the examples (`peak_memory`,
//! `varsinus_levels`): the settings of configs/streamrak/e1_varsinus.toml, the stream drawn
//! point by point (x = Gamma(1, 2) / 28.6 capped at 1 with probability 3/4, else uniform on
//! [0, 1); y = sin(1/(x + 0.01)) + N(0, 1e-8)), so no data set is held in memory.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma, Normal};
use streamrak::falkon::FalkonParams;
use streamrak::model::StreamrakParams;
use streamrak::statistics::ConvergenceParams;
use streamrak::{CoverTreeParams, LevelParams};

/// Draws one VarSinus point (x, y).
pub struct VarSinus {
    gamma: Gamma<f64>,
    noise: Normal<f64>,
}

impl VarSinus {
    pub fn new() -> Self {
        Self {
            gamma: Gamma::new(1.0, 2.0).expect("valid Gamma parameters"),
            noise: Normal::new(0.0, 1e-4).expect("valid Normal parameters"),
        }
    }

    pub fn draw(&self, rng: &mut ChaCha8Rng) -> (f64, f64) {
        let x: f64 = if rng.random_bool(0.75) {
            (self.gamma.sample(rng) / 28.6_f64).min(1.0)
        } else {
            rng.random()
        };
        (x, (1.0_f64 / (x + 0.01)).sin() + self.noise.sample(rng))
    }
}

/// StreaMRAK with E1's settings (r0 = 1, delta0 = 10, thresholds 5e-3, interval 10,000, 30,000
/// to 150,000 rows per level) and levels up to `max_level`.
pub fn e1_params(max_level: usize) -> StreamrakParams {
    StreamrakParams {
        tree: CoverTreeParams::paper(1.0),
        levels: LevelParams {
            delta0: 10.0,
            ..LevelParams::default_config()
        },
        convergence: ConvergenceParams {
            k_threshold: 5e-3,
            z_threshold: 5e-3,
            track_length: 100,
            interval: 10_000,
            lower_limit: 30_000,
            upper_limit: 150_000,
        },
        falkon: FalkonParams::paper(),
        max_level,
    }
}
