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
pub mod width_selection;

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
    /// The parameters that decide a cell's random draws (default: all of them). Cells that
    /// agree on these, on the data, the seed and the repetition draw the same random numbers:
    /// e.g. a lifetime sweep's trees do not depend on its terminal lifetime, so a shorter sweep
    /// is exactly the beginning of a longer one.
    fn stream_params(&self, params: &serde_json::Value) -> serde_json::Value {
        params.clone()
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
    &width_selection::WidthSelection,
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

/// The data of a regression experiment on transductive features: the sets, and the inputs
/// stacked as `[train; validation; test]` (Mondrian boxes and binning grids are built on all of
/// them, as in the authors' code).
pub struct TransductiveSplit {
    pub x_all: ndarray::Array2<f64>,
    pub x_train: ndarray::Array2<f64>,
    pub x_test: ndarray::Array2<f64>,
    pub y_train: ndarray::Array1<f64>,
    pub y_test: ndarray::Array1<f64>,
    /// The validation set, when the data define one (rows `n_train..test_start` of `x_all`).
    pub validation: Option<crate::data::Labelled>,
    pub n_train: usize,
    /// First row of the test set in `x_all`.
    pub test_start: usize,
}

impl TransductiveSplit {
    /// Builds it from a run's regression data.
    pub fn prepare(data: &LoadedData) -> Result<Shared> {
        let sets = data.regression()?;
        let mut parts = vec![sets.train.x.view()];
        parts.extend(sets.validation.iter().map(|v| v.x.view()));
        parts.push(sets.test.x.view());
        let n_train = sets.train.y.len();
        Ok(Box::new(TransductiveSplit {
            x_all: ndarray::concatenate(ndarray::Axis(0), &parts)?,
            x_train: sets.train.x.clone(),
            x_test: sets.test.x.clone(),
            y_train: sets.train.y.clone(),
            y_test: sets.test.y.clone(),
            validation: sets.validation.clone(),
            n_train,
            test_start: n_train + sets.validation.as_ref().map_or(0, |v| v.y.len()),
        }))
    }
}

impl TransductiveSplit {
    /// The same points with the last `rows` training rows held out as a validation set (rows of
    /// `x_all` keep their order: `[train; holdout; test]`).
    pub fn with_holdout(&self, rows: usize) -> Result<TransductiveSplit> {
        if self.validation.is_some() {
            anyhow::bail!("the data already define a validation set");
        }
        if rows == 0 || rows + 2 > self.n_train {
            anyhow::bail!(
                "holdout_rows = {rows}: need at least 1 and at most {} (2 training rows must remain)",
                self.n_train.saturating_sub(2)
            );
        }
        let n_train = self.n_train - rows;
        let s = ndarray::s![..n_train, ..];
        Ok(TransductiveSplit {
            x_all: self.x_all.clone(),
            x_train: self.x_train.slice(s).to_owned(),
            x_test: self.x_test.clone(),
            y_train: self.y_train.slice(ndarray::s![..n_train]).to_owned(),
            y_test: self.y_test.clone(),
            validation: Some(crate::data::Labelled {
                x: self.x_train.slice(ndarray::s![n_train.., ..]).to_owned(),
                y: self.y_train.slice(ndarray::s![n_train..]).to_owned(),
            }),
            n_train,
            test_start: self.test_start,
        })
    }
}

/// `check_data` of kinds that need a regression dataset.
pub fn require_dataset(kind: &str, data: &DataSpec) -> Result<(), String> {
    match data {
        DataSpec::Dataset { .. } | DataSpec::LaplaceGp { .. } => Ok(()),
        DataSpec::UniformBox { .. } => Err(format!(
            "{kind} needs regression data (source = \"dataset\" or \"laplace_gp\")"
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
