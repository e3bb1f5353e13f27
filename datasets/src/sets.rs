//! High-level loaders for registered datasets: locate (verified), read, shape-check.

use std::path::Path;

use ndarray::{Array1, Array2, Axis};

use crate::error::DatasetError;
use crate::loaders::{read_csv, read_idx, CsvOptions};
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

fn format_err(path: &Path, message: String) -> DatasetError {
    DatasetError::Format {
        path: path.to_path_buf(),
        message,
    }
}

/// The CPU split of Rahimi & Recht (2007), as used by the Mondrian kernel paper: 6554 training
/// and 819 test rows, 21 raw (unscaled) features, target `y` (= `usr` + 1, in [1, 100]).
pub fn cpu_rr(dirs: &DataDirs) -> Result<RegressionSplit, DatasetError> {
    let located = dirs.locate_name("cpu_rr")?;
    let train_path = located.path("train")?;
    let test_path = located.path("test")?;
    let train = read_csv(train_path, &CsvOptions::with_header(true))?;
    let test = read_csv(test_path, &CsvOptions::with_header(true))?;
    let header = train.header.clone().unwrap_or_default();
    if test.header.as_ref() != Some(&header) {
        return Err(format_err(
            test_path,
            format!(
                "header differs from the training file's ({})",
                train_path.display()
            ),
        ));
    }
    let (x_train, y_train) = train.into_xy(train_path)?;
    let (x_test, y_test) = test.into_xy(test_path)?;
    let feature_names = header
        .split_last()
        .map(|(_, names)| names.to_vec())
        .unwrap_or_default();
    Ok(RegressionSplit {
        x_train,
        y_train,
        x_test,
        y_test,
        feature_names,
    })
}

/// A UCI regression set of the A la Carte suite with its 10 predefined splits.
#[derive(Debug, Clone, PartialEq)]
pub struct UciData {
    /// Inputs (mean-centred), n x d.
    pub x: Array2<f64>,
    /// Targets (mean-centred), n.
    pub y: Array1<f64>,
    /// n x 10: `test_mask[[i, k]]` is true when row i is a test row of split k.
    pub test_mask: Array2<bool>,
}

impl UciData {
    /// Number of predefined splits (10).
    pub fn n_splits(&self) -> usize {
        self.test_mask.ncols()
    }

    /// Split `k` (0-based): rows with `test_mask[[i, k]]` form the test set. Features are named
    /// `x1..xd`.
    pub fn split(&self, k: usize) -> Option<RegressionSplit> {
        if k >= self.n_splits() {
            return None;
        }
        let mask = self.test_mask.column(k);
        let test: Vec<usize> = (0..mask.len()).filter(|&i| mask[i]).collect();
        let train: Vec<usize> = (0..mask.len()).filter(|&i| !mask[i]).collect();
        Some(RegressionSplit {
            x_train: self.x.select(Axis(0), &train),
            y_train: self.y.select(Axis(0), &train),
            x_test: self.x.select(Axis(0), &test),
            y_test: self.y.select(Axis(0), &test),
            feature_names: (1..=self.x.ncols()).map(|j| format!("x{j}")).collect(),
        })
    }
}

/// Loads `uci/<name>` (e.g. `uci("airfoil")`): data (inputs then target, no header) and the
/// 0/1 test mask (one column per split).
pub fn uci(dirs: &DataDirs, name: &str) -> Result<UciData, DatasetError> {
    let located = dirs.locate_name(&format!("uci/{name}"))?;
    let data_path = located.path("data")?;
    let mask_path = located.path("test_mask")?;
    let (x, y) = read_csv(data_path, &CsvOptions::default())?.into_xy(data_path)?;
    let mask = read_csv(mask_path, &CsvOptions::default())?.values;
    if mask.nrows() != x.nrows() {
        return Err(format_err(
            mask_path,
            format!("{} rows, but the data file has {}", mask.nrows(), x.nrows()),
        ));
    }
    if let Some(bad) = mask.iter().find(|&&v| v != 0.0 && v != 1.0) {
        return Err(format_err(
            mask_path,
            format!("test mask values must be 0 or 1, found {bad}"),
        ));
    }
    Ok(UciData {
        x,
        y,
        test_mask: mask.mapv(|v| v == 1.0),
    })
}

/// The MNIST test set (10k).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MnistTest {
    /// Pixels, 10000 x 784 (row-major 28 x 28), 0..=255.
    pub images: Array2<u8>,
    /// Digits 0..=9.
    pub labels: Array1<u8>,
}

/// Loads `mnist_test` and checks that images and labels agree in number.
pub fn mnist_test(dirs: &DataDirs) -> Result<MnistTest, DatasetError> {
    let located = dirs.locate_name("mnist_test")?;
    let images_path = located.path("images")?;
    let labels_path = located.path("labels")?;
    let images = read_idx(images_path)?;
    let labels = read_idx(labels_path)?;
    if labels.dims.len() != 1 || images.n_items() != labels.n_items() {
        return Err(format_err(
            labels_path,
            format!(
                "labels {:?} do not match images {:?}",
                labels.dims, images.dims
            ),
        ));
    }
    let images = images
        .to_matrix()
        .map_err(|e| format_err(images_path, e.to_string()))?;
    Ok(MnistTest {
        images,
        labels: labels.to_vector(),
    })
}
