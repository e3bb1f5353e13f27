//! `n` points uniform on a box (The Mondrian Kernel, Fig. 5).

use anyhow::Result;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Generated, Generator};

fn one() -> f64 {
    1.0
}

/// `n` points uniform on `[low, high]^dim` (The Mondrian Kernel, Fig. 5).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UniformBox {
    pub n: usize,
    pub dim: usize,
    #[serde(default)]
    pub low: f64,
    #[serde(default = "one")]
    pub high: f64,
}

impl Generator for UniformBox {
    fn task(&self) -> Option<datasets::Task> {
        None
    }

    fn validate(&self) -> Result<(), String> {
        let UniformBox { n, dim, low, high } = self;
        if *n < 2 {
            return Err(format!("data.n = {n}: need at least 2 points"));
        }
        if *dim == 0 {
            return Err("data.dim = 0: need at least one dimension".into());
        }
        // 50 million coordinates are 400 MB: beyond that the draw cannot be what was meant.
        if n.saturating_mul(*dim) > 50_000_000 {
            return Err(format!(
                "data.n = {n}, data.dim = {dim}: {} coordinates; at most 50000000 (400 MB)",
                n.saturating_mul(*dim)
            ));
        }
        if !(low.is_finite() && high.is_finite() && low < high) {
            return Err(format!(
                "data.low = {low}, data.high = {high}: need finite low < high"
            ));
        }
        Ok(())
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Result<Generated> {
        Ok(Generated::Points(datasets::uniform_box(
            self.n, self.dim, self.low, self.high, rng,
        )?))
    }
}
