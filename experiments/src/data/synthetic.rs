//! Synthetic data behind one dispatch: each generator is a struct of typed parameters (the
//! fields of its `[data]` table) implementing [`Generator`]; [`crate::data::DataSpec`] names it
//! by `source`. Data are drawn from the run's data seed, so every method and repetition of a
//! run sees the same points. Adding a generator (StreaMRAK's test functions, a spectral-mixture
//! GP) is a struct, its `Generator` impl and one variant of `DataSpec`.

use anyhow::{Context, Result};
use ndarray::{Array1, Array2};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// What a generator produced.
pub enum Generated {
    /// Points, one per row (no targets).
    Points(Array2<f64>),
    /// A regression sample with its rows split in order into train, validation and test.
    Regression {
        x: Array2<f64>,
        y: Array1<f64>,
        n_train: usize,
        n_validation: usize,
        /// What generating had to do beyond the spec (recorded in the manifest).
        notes: Vec<String>,
    },
}

/// A synthetic data source.
pub trait Generator {
    /// Checks the parameters (before any work starts).
    fn validate(&self) -> Result<(), String>;
    /// Draws the data.
    fn generate(&self, rng: &mut ChaCha8Rng) -> Result<Generated>;
}

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
    fn validate(&self) -> Result<(), String> {
        let UniformBox { n, dim, low, high } = self;
        if *n < 2 {
            return Err(format!("data.n = {n}: need at least 2 points"));
        }
        if *dim == 0 {
            return Err("data.dim = 0: need at least one dimension".into());
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

impl Generator for LaplaceGp {
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
        let x = datasets::uniform_box(n, self.dim, 0.0, 1.0, rng)?;
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
