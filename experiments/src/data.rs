//! Loading a config's data: synthetic points from the run's data seed, or a registered dataset
//! verified by sha256.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use ndarray::{s, Array1, Array2};

use crate::cell::data_seeds;
use crate::config::DataSpec;

/// The data of a run.
#[derive(Debug, Clone)]
pub enum Data {
    /// Points (synthetic), one per row.
    Points(Array2<f64>),
    /// A regression split: train, optional validation, test.
    Regression(Box<RegressionSets>),
}

/// Inputs (one per row) and their targets.
#[derive(Debug, Clone)]
pub struct Labelled {
    pub x: Array2<f64>,
    pub y: Array1<f64>,
}

impl Labelled {
    fn rows(&self, range: std::ops::Range<usize>) -> Labelled {
        Labelled {
            x: self.x.slice(s![range.clone(), ..]).to_owned(),
            y: self.y.slice(s![range]).to_owned(),
        }
    }
}

/// The sets of a regression experiment.
#[derive(Debug, Clone)]
pub struct RegressionSets {
    pub train: Labelled,
    /// A validation set (model selection), when the data define one.
    pub validation: Option<Labelled>,
    pub test: Labelled,
}

/// The data of a run, with the digests of every file read.
#[derive(Debug, Clone)]
pub struct LoadedData {
    pub data: Data,
    /// sha256 by dataset, then by file path (empty for synthetic data).
    pub digests: BTreeMap<String, BTreeMap<String, String>>,
    /// What generating the data had to do beyond the spec (recorded in the manifest), e.g. a
    /// jitter added to a kernel matrix.
    pub notes: Vec<String>,
}

impl LoadedData {
    /// The points: synthetic points, or the training inputs of a dataset.
    pub fn points(&self) -> Result<&Array2<f64>> {
        match &self.data {
            Data::Points(x) => Ok(x),
            Data::Regression(sets) => Ok(&sets.train.x),
        }
    }

    /// The regression sets.
    pub fn regression(&self) -> Result<&RegressionSets> {
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
        DataSpec::UniformBox { .. } | DataSpec::LaplaceGp { .. } => Ok(()),
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
                notes: Vec::new(),
            })
        }
        DataSpec::LaplaceGp {
            n_train,
            n_validation,
            n_test,
            dim,
            lifetime,
            noise_sd,
        } => {
            let mut rng = data_seeds(base_seed, spec).rng("data");
            let n = n_train + n_validation + n_test;
            let x = datasets::uniform_box(n, *dim, 0.0, 1.0, &mut rng)?;
            let gram = kernel_core::kernel::laplace_gram(x.view(), x.view(), *lifetime)?;
            let sample = kernel_core::gp::sample_gp(&gram, *noise_sd, &mut rng)
                .context("cannot draw the Gaussian-process targets")?;
            let mut notes = Vec::new();
            if sample.jitter > 0.0 {
                notes.push(format!(
                    "laplace_gp: the kernel matrix was numerically not positive definite; added {:e} to its diagonal",
                    sample.jitter
                ));
            }
            let all = Labelled { x, y: sample.y };
            let (a, b) = (*n_train, n_train + n_validation);
            Ok(LoadedData {
                data: Data::Regression(Box::new(RegressionSets {
                    train: all.rows(0..a),
                    validation: (*n_validation > 0).then(|| all.rows(a..b)),
                    test: all.rows(b..n),
                })),
                digests: BTreeMap::new(),
                notes,
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
                    let split = datasets::cpu_rr(&dirs)?;
                    let train = Labelled {
                        x: split.x_train,
                        y: split.y_train,
                    };
                    let test = Labelled {
                        x: split.x_test,
                        y: split.y_test,
                    };
                    let cap = |set: Labelled| match *max_rows {
                        Some(n) if n < set.y.len() => set.rows(0..n),
                        _ => set,
                    };
                    Data::Regression(Box::new(RegressionSets {
                        train: cap(train),
                        validation: None,
                        test: cap(test),
                    }))
                }
                other => {
                    bail!("dataset {other} is registered but no experiment loader reads it yet")
                }
            };
            Ok(LoadedData {
                data,
                digests: BTreeMap::from([(name.clone(), digests)]),
                notes: Vec::new(),
            })
        }
    }
}
