//! The data of a regression experiment on transductive features: the sets, and the inputs
//! stacked as `[train; validation; test]` (Mondrian boxes and binning grids are built on all of
//! them, as in the authors' code).

use anyhow::Result;
use ndarray::{s, Array1, Array2, Axis};

use crate::data::{DataView, Labelled};

/// A regression split with its inputs stacked.
pub struct TransductiveSplit {
    pub x_all: Array2<f64>,
    pub x_train: Array2<f64>,
    pub x_test: Array2<f64>,
    pub y_train: Array1<f64>,
    pub y_test: Array1<f64>,
    /// The validation set, when the data define one (rows `n_train..test_start` of `x_all`).
    pub validation: Option<Labelled>,
    pub n_train: usize,
    /// First row of the test set in `x_all`.
    pub test_start: usize,
}

impl TransductiveSplit {
    /// Builds it from one split of a run's regression data.
    pub fn prepare(data: &DataView) -> Result<TransductiveSplit> {
        let sets = data.regression()?;
        let mut parts = vec![sets.train.x.view()];
        parts.extend(sets.validation.iter().map(|v| v.x.view()));
        parts.push(sets.test.x.view());
        let n_train = sets.train.y.len();
        Ok(TransductiveSplit {
            x_all: ndarray::concatenate(Axis(0), &parts)?,
            test_start: n_train + sets.validation.as_ref().map_or(0, |v| v.y.len()),
            x_train: sets.train.x,
            x_test: sets.test.x,
            y_train: sets.train.y,
            y_test: sets.test.y,
            validation: sets.validation,
            n_train,
        })
    }

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
        Ok(TransductiveSplit {
            x_all: self.x_all.clone(),
            x_train: self.x_train.slice(s![..n_train, ..]).to_owned(),
            x_test: self.x_test.clone(),
            y_train: self.y_train.slice(s![..n_train]).to_owned(),
            y_test: self.y_test.clone(),
            validation: Some(Labelled {
                x: self.x_train.slice(s![n_train.., ..]).to_owned(),
                y: self.y_train.slice(s![n_train..]).to_owned(),
            }),
            n_train,
            test_start: self.test_start,
        })
    }

    /// ȳ of the training targets and the centred targets ỹ = y_train − ȳ.
    pub fn centred_targets(&self) -> (f64, Array1<f64>) {
        let mean = self.y_train.mean().unwrap_or(0.0);
        (mean, self.y_train.mapv(|v| v - mean))
    }
}
