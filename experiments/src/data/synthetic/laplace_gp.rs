//! A Gaussian-process regression sample with the Laplace kernel (The Mondrian Kernel, Fig. 7).

use anyhow::{Context, Result};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Generated, Generator};

/// A regression sample from a zero-mean Gaussian process with the Laplace kernel
/// `exp(−lifetime·‖x − x'‖₁)` at points uniform on `[0, 1]^dim`, plus N(0, noise_sd²) noise
/// (The Mondrian Kernel, Fig. 7: spec §2.2). Rows are split in order: train, validation, test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LaplaceGp {
    pub n_train: usize,
    #[serde(default)]
    pub n_validation: usize,
    pub n_test: usize,
    pub dim: usize,
    pub lifetime: f64,
    pub noise_sd: f64,
}

crate::register_generator!("laplace_gp", LaplaceGp);

impl Generator for LaplaceGp {
    fn task(&self) -> Option<datasets::Task> {
        Some(datasets::Task::Regression)
    }

    fn validate(&self) -> Result<(), String> {
        let LaplaceGp {
            n_train,
            n_validation,
            n_test,
            dim,
            lifetime,
            noise_sd,
        } = self;
        if *n_train < 2 || *n_test < 1 {
            return Err(format!(
                "data.n_train = {n_train}, data.n_test = {n_test}: need at least 2 training and 1 test point"
            ));
        }
        let total = n_train
            .saturating_add(*n_validation)
            .saturating_add(*n_test);
        if total > 20_000 {
            return Err(format!(
                "data: {total} points in all; the GP draw factorises a dense n x n kernel matrix, so at most 20000"
            ));
        }
        if *dim == 0 {
            return Err("data.dim = 0: need at least one dimension".into());
        }
        if !(lifetime.is_finite() && *lifetime > 0.0) {
            return Err(format!(
                "data.lifetime = {lifetime}: expected a finite number > 0"
            ));
        }
        if !(noise_sd.is_finite() && *noise_sd >= 0.0) {
            return Err(format!(
                "data.noise_sd = {noise_sd}: expected a finite number >= 0"
            ));
        }
        Ok(())
    }

    fn generate(&self, rng: &mut ChaCha8Rng) -> Result<Generated> {
        let n = self.n_train + self.n_validation + self.n_test;
        let x =
            super::uniform_box::sample(n, self.dim, 0.0, 1.0, rng).map_err(anyhow::Error::msg)?;
        let gram = kernel_core::kernel::laplace_gram(x.view(), x.view(), self.lifetime)?;
        let sample = kernel_core::gp::sample_gp(&gram, self.noise_sd, rng)
            .context("cannot draw the Gaussian-process targets")?;
        let mut notes = Vec::new();
        if sample.jitter > 0.0 {
            notes.push(format!(
                "laplace_gp: the kernel matrix was numerically not positive definite; added {:e} to its diagonal",
                sample.jitter
            ));
        }
        Ok(Generated::Regression {
            x,
            y: sample.y,
            n_train: self.n_train,
            n_validation: self.n_validation,
            notes,
        })
    }
}
