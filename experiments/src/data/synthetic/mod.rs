//! Synthetic data behind one dispatch: each generator is a struct of typed parameters (the
//! fields of its `[data]` table) in a file of its own, with its sampler, implementing
//! [`Generator`] and registering its `source` name with [`crate::register_generator!`];
//! [`crate::data::DataSpec`] finds it by that name. Data are drawn from the run's data seed, so
//! every method and repetition of a run sees the same points. Adding a generator (a
//! spectral-mixture GP, another paper's test function) is a file with the struct, its
//! `Generator` impl and its registration: no central list names it (`tests/toy_paper.rs`
//! registers one from outside the crate). A cell's cache key covers its own generator's file,
//! what that file imports and the crates it names only (derived from the source:
//! [`Generator::type_path`], `crate::fingerprint`).

pub mod double_pendulum;
pub mod dumbbell;
pub mod laplace_gp;
pub mod oblique_boundary;
pub mod uniform_box;
pub mod varying_sinus;

use std::any::Any;
use std::sync::OnceLock;

use anyhow::Result;
use ndarray::{Array1, Array2};
use rand_chacha::ChaCha8Rng;
use serde::de::DeserializeOwned;
use serde::Serialize;

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

/// A synthetic data source. Its parameters are a plain serde struct (`deny_unknown_fields`);
/// [`GeneratorValue`] comes with `Serialize + Clone`.
pub trait Generator: GeneratorValue + std::fmt::Debug + Send + Sync {
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
    /// Whether every repetition sees the same rows split the same way (only then do
    /// deterministic methods run once): true unless the generator draws a split per repetition.
    fn fixed_split(&self) -> bool {
        true
    }
}

/// What a generator is as a value, for every `Serialize + Clone` generator: its parameters as
/// JSON (hashed into data seeds and cell identities), a copy, and its concrete type.
pub trait GeneratorValue {
    fn to_json(&self) -> serde_json::Value;
    fn clone_box(&self) -> Box<dyn Generator>;
    fn as_any(&self) -> &dyn Any;
}

impl<G: Generator + Serialize + Clone + 'static> GeneratorValue for G {
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("generator parameters serialise")
    }
    fn clone_box(&self) -> Box<dyn Generator> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A generator's entry in the registry: its `source` name and how its table is read.
pub struct GeneratorRegistration {
    pub source: &'static str,
    pub parse: fn(toml::Table) -> Result<Box<dyn Generator>, String>,
}

inventory::collect!(GeneratorRegistration);

/// Registers a generator under its `[data] source` name, beside its definition:
/// `crate::register_generator!("uniform_box", UniformBox);`.
#[macro_export]
macro_rules! register_generator {
    ($source:literal, $generator:ty) => {
        $crate::inventory::submit! {
            $crate::data::synthetic::GeneratorRegistration {
                source: $source,
                parse: $crate::data::synthetic::parse::<$generator>,
            }
        }
    };
}

/// Reads a generator's `[data]` table (less `source`) into its typed parameters; errors name
/// the key (`data.n: ...`).
pub fn parse<G: Generator + DeserializeOwned + 'static>(
    table: toml::Table,
) -> Result<Box<dyn Generator>, String> {
    Ok(Box::new(crate::toml_table::typed_table::<G>(
        table, "data",
    )?))
}

/// Every registered generator, sorted by `source`. That the names are unique, not `dataset`,
/// and lowercase words is checked by this module's unit test, not at run time: a second
/// registration of a name would be shadowed by the first in [`find`].
pub fn registered() -> &'static [&'static GeneratorRegistration] {
    static ALL: OnceLock<Vec<&'static GeneratorRegistration>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<_> = inventory::iter::<GeneratorRegistration>
            .into_iter()
            .collect();
        all.sort_by_key(|r| r.source);
        all
    })
}

/// The generator registered as `source`.
pub fn find(source: &str) -> Option<&'static GeneratorRegistration> {
    registered().iter().copied().find(|r| r.source == source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_unique_lowercase_words_and_not_dataset() {
        let names: Vec<&str> = registered().iter().map(|r| r.source).collect();
        assert!(names.len() >= 6, "{names:?}");
        for (i, name) in names.iter().enumerate() {
            assert_ne!(*name, "dataset");
            assert!(!names[..i].contains(name), "{name} registered twice");
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{name}"
            );
        }
        for name in [
            "uniform_box",
            "laplace_gp",
            "varying_sinus",
            "dumbbell",
            "double_pendulum",
            "oblique_boundary",
        ] {
            assert!(find(name).is_some(), "{name}");
        }
        assert!(find("dataset").is_none() && find("uniform").is_none());
    }
}
