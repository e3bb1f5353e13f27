//! Named views kept for existing callers; new code uses [`crate::load`] and
//! [`crate::SplitSpec`] instead.

use ndarray::{s, Array1, Array2};

use crate::error::DatasetError;
use crate::labelled::{GivenSplits, Inputs, Targets};
use crate::loading::load;
use crate::locate::DataDirs;

/// A regression train/test split.
#[derive(Debug, Clone, PartialEq)]
pub struct RegressionSplit {
    /// Training inputs, n_train x d.
    pub x_train: Array2<f64>,
    /// Training targets, n_train.
    pub y_train: Array1<f64>,
    /// Test inputs, n_test x d.
    pub x_test: Array2<f64>,
    /// Test targets, n_test.
    pub y_test: Array1<f64>,
    /// Names of the d input columns.
    pub feature_names: Vec<String>,
}

/// The CPU split of Rahimi & Recht (2007), as used by the Mondrian kernel paper: 6554 training
/// and 819 test rows (in file order), 21 raw (unscaled) features, target `y` (= `usr` + 1, in
/// [1, 100]). The same values as `load(dirs, "cpu_rr")` split at its published boundary.
pub fn cpu_rr(dirs: &DataDirs) -> Result<RegressionSplit, DatasetError> {
    let set = load(dirs, "cpu_rr")?;
    let (Inputs::Dense(x), Targets::Real(y), GivenSplits::TrainTest { n_train }) =
        (set.x, set.y, set.given)
    else {
        return Err(DatasetError::Table {
            dataset: "cpu_rr".into(),
            message: "expected dense regression rows with published train/test files; check \
                      its [dataset.table] in datasets/registry.toml"
                .into(),
        });
    };
    Ok(RegressionSplit {
        x_train: x.slice(s![..n_train, ..]).to_owned(),
        y_train: y.slice(s![..n_train]).to_owned(),
        x_test: x.slice(s![n_train.., ..]).to_owned(),
        y_test: y.slice(s![n_train..]).to_owned(),
        feature_names: set.feature_names,
    })
}
