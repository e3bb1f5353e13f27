//! Synthetic data behind one dispatch: each generator is a struct of typed parameters (the
//! fields of its `[data]` table) in a file of its own, implementing [`Generator`];
//! [`crate::data::DataSpec`] names it by `source`. Data are drawn from the run's data seed, so
//! every method and repetition of a run sees the same points. Adding a generator (StreaMRAK's
//! test functions, a spectral-mixture GP) is a file with the struct and its `Generator` impl,
//! and one variant of `DataSpec` with its arm in `DataSpec::generator`. A cell's cache key
//! covers its own generator's file, what that file imports and the crates it names only
//! (derived from the source: [`Generator::type_path`], `crate::fingerprint`).

pub mod double_pendulum;
pub mod dumbbell;
pub mod laplace_gp;
pub mod oblique_boundary;
pub mod uniform_box;
pub mod varying_sinus;

use anyhow::Result;
use ndarray::{Array1, Array2};
use rand_chacha::ChaCha8Rng;

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
    /// A classification sample, split at random per repetition.
    Classification {
        x: Array2<f64>,
        labels: Vec<u32>,
        names: Vec<String>,
        split: datasets::SplitSpec,
    },
    /// Simulated trajectories (the double pendulum).
    Trajectories(double_pendulum::PendulumTrajectories),
}

/// A synthetic data source.
pub trait Generator {
    /// The path of its type (`std::any::type_name`; not to be overridden): a run's
    /// fingerprint derives the generator's sources from the file that defines it.
    fn type_path(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
    /// What the data hold: `None` for points without targets, else the task.
    fn task(&self) -> Option<datasets::Task>;
    /// Checks the parameters (before any work starts).
    fn validate(&self) -> Result<(), String>;
    /// Draws the data.
    fn generate(&self, rng: &mut ChaCha8Rng) -> Result<Generated>;
}
