//! Loading a config's data: synthetic points from the run's data seed, or a registered dataset
//! verified by sha256.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Result};
use ndarray::Array2;

use crate::cell::data_seeds;
use crate::config::DataSpec;

/// The data of a run.
#[derive(Debug, Clone)]
pub enum Data {
    /// Points (synthetic), one per row.
    Points(Array2<f64>),
    /// A regression train/test split.
    Regression(datasets::RegressionSplit),
}

/// The data of a run, with the digests of every file read.
#[derive(Debug, Clone)]
pub struct LoadedData {
    pub data: Data,
    /// sha256 by dataset, then by file path (empty for synthetic data).
    pub digests: BTreeMap<String, BTreeMap<String, String>>,
}

impl LoadedData {
    /// The points: synthetic points, or the training inputs of a dataset.
    pub fn points(&self) -> Result<&Array2<f64>> {
        match &self.data {
            Data::Points(x) => Ok(x),
            Data::Regression(split) => Ok(&split.x_train),
        }
    }

    /// The regression split of a dataset.
    pub fn regression(&self) -> Result<&datasets::RegressionSplit> {
        match &self.data {
            Data::Regression(s) => Ok(s),
            Data::Points(_) => bail!("this experiment needs a regression dataset"),
        }
    }
}

/// Why a run's data cannot be used.
#[derive(Debug, Clone)]
pub struct DataProblem {
    /// The files are absent (as opposed to present but corrupt or unreadable).
    pub missing: bool,
    /// What is wrong and how to get the data.
    pub message: String,
}

impl std::fmt::Display for DataProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Whether the data can be had without downloading: `Err` says what is missing or corrupt and
/// how to get it.
pub fn check_available(root: &Path, spec: &DataSpec) -> Result<(), DataProblem> {
    match spec {
        DataSpec::UniformBox { .. } => Ok(()),
        DataSpec::Dataset { name, .. } => datasets::DataDirs::from_root(root)
            .locate_name(name)
            .map(|_| ())
            .map_err(|e| DataProblem {
                missing: matches!(e, datasets::DatasetError::Missing { .. }),
                message: e.to_string(),
            }),
    }
}

/// Loads (or generates) the data of a run.
pub fn load(root: &Path, spec: &DataSpec, base_seed: u64) -> Result<LoadedData> {
    match spec {
        DataSpec::UniformBox { n, dim, low, high } => {
            let mut rng = data_seeds(base_seed, spec).rng("data");
            let x = datasets::uniform_box(*n, *dim, *low, *high, &mut rng)?;
            Ok(LoadedData {
                data: Data::Points(x),
                digests: BTreeMap::new(),
            })
        }
        DataSpec::Dataset { name, max_rows } => {
            let dirs = datasets::DataDirs::from_root(root);
            let registry = datasets::Registry::embedded()?;
            let dataset = registry.get(name)?;
            let located = dirs.locate(dataset)?;
            let digests = located
                .files
                .iter()
                .map(|f| {
                    let entry = dataset.file(&f.role).map(|e| e.sha256.clone());
                    (f.rel_path.clone(), entry.unwrap_or_default())
                })
                .collect();
            let data = match name.as_str() {
                "cpu_rr" => {
                    let mut split = datasets::cpu_rr(&dirs)?;
                    if let Some(n) = *max_rows {
                        let n_train = n.min(split.x_train.nrows());
                        let n_test = n.min(split.x_test.nrows());
                        split.x_train = split.x_train.slice(ndarray::s![..n_train, ..]).to_owned();
                        split.y_train = split.y_train.slice(ndarray::s![..n_train]).to_owned();
                        split.x_test = split.x_test.slice(ndarray::s![..n_test, ..]).to_owned();
                        split.y_test = split.y_test.slice(ndarray::s![..n_test]).to_owned();
                    }
                    Data::Regression(split)
                }
                other => {
                    bail!("dataset {other} is registered but no experiment loader reads it yet")
                }
            };
            Ok(LoadedData {
                data,
                digests: BTreeMap::from([(name.clone(), digests)]),
            })
        }
    }
}
