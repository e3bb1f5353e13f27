//! Experiment kinds: what a config's cells compute.
//!
//! A kind validates one grid point of `[params]` into canonical typed parameters, declares the
//! columns of its rows, prepares what all cells share (the data), and runs one cell from its
//! seeds. Adding an experiment to the harness means adding a kind here (or reusing one) and a
//! config under `configs/`.

use std::any::Any;

use anyhow::Result;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::cell::Cell;
use crate::config::DataSpec;
use crate::data::LoadedData;
use crate::table::Row;

pub mod feature_ridge;
pub mod kernel_approximation;
pub mod lifetime_sweep;

/// A documented result column.
#[derive(Debug, Clone, Copy)]
pub struct ColumnDoc {
    pub name: &'static str,
    pub doc: &'static str,
}

/// Data shared by all cells of a run.
pub type Shared = Box<dyn Any + Send + Sync>;

/// One kind of experiment.
pub trait ExperimentKind: Sync + Send {
    /// The `experiment.kind` value that selects it.
    fn name(&self) -> &'static str;
    /// One line for `repro list --kinds`.
    fn summary(&self) -> &'static str;
    /// Bumped whenever the kind's numbers change for the same inputs; part of the cache key.
    fn code_version(&self) -> u32;
    /// Columns of the rows [`Self::run_cell`] returns.
    fn columns(&self) -> &'static [ColumnDoc];
    /// Whether this kind can use the given data.
    fn check_data(&self, data: &DataSpec) -> Result<(), String>;
    /// Validates one grid point of `[params]` and returns its canonical JSON form.
    fn canonical_params(&self, point: toml::Table) -> Result<serde_json::Value, String>;
    /// Whether the cells of this grid point give the same numbers in every repetition (then
    /// only repetition 0 runs).
    fn deterministic(&self, _params: &serde_json::Value) -> bool {
        false
    }
    /// Builds what every cell of a run shares.
    fn prepare(&self, data: &LoadedData) -> Result<Shared>;
    /// Computes one cell.
    fn run_cell(&self, shared: &Shared, cell: &Cell) -> Result<Vec<Row>>;
}

static KINDS: &[&dyn ExperimentKind] = &[
    &kernel_approximation::KernelApproximation,
    &feature_ridge::FeatureRidge,
    &lifetime_sweep::LifetimeSweep,
];

/// Every registered kind.
pub fn all() -> &'static [&'static dyn ExperimentKind] {
    KINDS
}

/// The kind named `name`.
pub fn find(name: &str) -> Result<&'static dyn ExperimentKind, String> {
    KINDS
        .iter()
        .copied()
        .find(|k| k.name() == name)
        .ok_or_else(|| {
            let known: Vec<_> = KINDS.iter().map(|k| k.name()).collect();
            format!(
                "experiment.kind = {name:?} is unknown; known kinds: {}",
                known.join(", ")
            )
        })
}

/// Parameters typed by a kind: deserialised with unknown keys rejected, then range-checked.
pub trait Params: DeserializeOwned + Serialize {
    fn check(&self) -> Result<(), String>;
}

/// Typed parameters of one grid point, validated, in canonical JSON form.
pub fn canonical<P: Params>(point: toml::Table) -> Result<serde_json::Value, String> {
    let typed: P = toml::Value::Table(point)
        .try_into()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    typed.check()?;
    serde_json::to_value(&typed).map_err(|e| e.to_string())
}

/// Typed parameters of a planned cell.
pub fn typed<P: Params>(cell: &Cell) -> Result<P> {
    Ok(serde_json::from_value(cell.params.clone())?)
}

/// The shared data of a run, downcast to the kind's type.
pub fn shared<T: 'static>(shared: &Shared) -> Result<&T> {
    shared
        .downcast_ref::<T>()
        .ok_or_else(|| anyhow::anyhow!("internal error: shared data of the wrong type"))
}

/// The data of a regression experiment on transductive features: the split, and the inputs
/// stacked as `[train; test]` (Mondrian boxes and binning grids are built on all of them, as in
/// the authors' code).
pub struct TransductiveSplit {
    pub x_all: ndarray::Array2<f64>,
    pub x_train: ndarray::Array2<f64>,
    pub x_test: ndarray::Array2<f64>,
    pub y_train: ndarray::Array1<f64>,
    pub y_test: ndarray::Array1<f64>,
    pub n_train: usize,
}

impl TransductiveSplit {
    /// Builds it from a run's regression data.
    pub fn prepare(data: &LoadedData) -> Result<Shared> {
        let split = data.regression()?;
        Ok(Box::new(TransductiveSplit {
            x_all: ndarray::concatenate(
                ndarray::Axis(0),
                &[split.x_train.view(), split.x_test.view()],
            )?,
            x_train: split.x_train.clone(),
            x_test: split.x_test.clone(),
            y_train: split.y_train.clone(),
            y_test: split.y_test.clone(),
            n_train: split.x_train.nrows(),
        }))
    }
}

/// `check_data` of kinds that need a regression dataset.
pub fn require_dataset(kind: &str, data: &DataSpec) -> Result<(), String> {
    match data {
        DataSpec::Dataset { .. } => Ok(()),
        DataSpec::UniformBox { .. } => Err(format!(
            "{kind} needs a regression dataset (source = \"dataset\")"
        )),
    }
}

/// Checks that a lifetime-like parameter is finite and > 0.
pub fn positive(name: &str, value: f64) -> Result<(), String> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(format!("{name} = {value}: expected a finite number > 0"))
    }
}
