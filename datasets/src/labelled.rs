//! Typed labelled sets: inputs (dense or CSR), targets (real or named classes) and the splits
//! the data ship with, built by [`load`](crate::load) (in [`crate::loading`]) from a dataset's
//! `[dataset.table]` section (see [`crate::table`]), so callers never match on a dataset name.
//!
//! ```no_run
//! let dirs = datasets::DataDirs::from_root(".");
//! let set = datasets::load(&dirs, "gene/all")?;
//! assert_eq!(set.y.n_classes(), Some(2)); // B vs T cell
//! # Ok::<(), datasets::DatasetError>(())
//! ```

use ndarray::{Array1, Array2, Axis};

use crate::sparse::CsrMatrix;

/// The input matrix of a set, `n x d`.
#[derive(Debug, Clone, PartialEq)]
pub enum Inputs {
    /// A dense matrix (CSV and IDX sets).
    Dense(Array2<f64>),
    /// A CSR matrix (svmlight sets), never densified unless asked.
    Sparse(CsrMatrix),
}

impl Inputs {
    /// Number of rows `n`.
    pub fn n_rows(&self) -> usize {
        match self {
            Inputs::Dense(x) => x.nrows(),
            Inputs::Sparse(x) => x.n_rows(),
        }
    }

    /// Number of columns `d`.
    pub fn n_cols(&self) -> usize {
        match self {
            Inputs::Dense(x) => x.ncols(),
            Inputs::Sparse(x) => x.n_cols(),
        }
    }

    /// The rows `rows`, in the order given, in the same form. Panics on an index `>= n`.
    pub fn select_rows(&self, rows: &[usize]) -> Inputs {
        match self {
            Inputs::Dense(x) => Inputs::Dense(x.select(Axis(0), rows)),
            Inputs::Sparse(x) => Inputs::Sparse(x.select_rows(rows)),
        }
    }

    /// A dense copy.
    pub fn to_dense(&self) -> Array2<f64> {
        match self {
            Inputs::Dense(x) => x.clone(),
            Inputs::Sparse(x) => x.to_dense(),
        }
    }

    /// The dense matrix, if the inputs are dense.
    pub fn as_dense(&self) -> Option<&Array2<f64>> {
        match self {
            Inputs::Dense(x) => Some(x),
            Inputs::Sparse(_) => None,
        }
    }

    /// The CSR matrix, if the inputs are sparse.
    pub fn as_sparse(&self) -> Option<&CsrMatrix> {
        match self {
            Inputs::Dense(_) => None,
            Inputs::Sparse(x) => Some(x),
        }
    }
}

/// The targets of a set, one per row.
#[derive(Debug, Clone, PartialEq)]
pub enum Targets {
    /// Real values (regression).
    Real(Array1<f64>),
    /// Class labels: `labels[i]` is an index into `names` (the order rules are in
    /// [`crate::table`]: the registry's `classes`, else the names sorted).
    Classes {
        /// Label of each row, `< names.len()`.
        labels: Vec<u32>,
        /// Class names, in label order.
        names: Vec<String>,
    },
}

impl Targets {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Targets::Real(y) => y.len(),
            Targets::Classes { labels, .. } => labels.len(),
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of classes (including classes without rows); `None` for real targets.
    pub fn n_classes(&self) -> Option<usize> {
        match self {
            Targets::Real(_) => None,
            Targets::Classes { names, .. } => Some(names.len()),
        }
    }

    /// The rows `rows`, in the order given (class names kept). Panics on an index `>= len`.
    pub fn select(&self, rows: &[usize]) -> Targets {
        match self {
            Targets::Real(y) => Targets::Real(y.select(Axis(0), rows)),
            Targets::Classes { labels, names } => Targets::Classes {
                labels: rows.iter().map(|&i| labels[i]).collect(),
                names: names.clone(),
            },
        }
    }

    /// Rows per class, in label order; `None` for real targets.
    pub fn class_counts(&self) -> Option<Vec<usize>> {
        match self {
            Targets::Real(_) => None,
            Targets::Classes { labels, names } => {
                let mut counts = vec![0usize; names.len()];
                for &l in labels {
                    counts[l as usize] += 1;
                }
                Some(counts)
            }
        }
    }

    /// The real values, if the targets are real.
    pub fn as_real(&self) -> Option<&Array1<f64>> {
        match self {
            Targets::Real(y) => Some(y),
            Targets::Classes { .. } => None,
        }
    }

    /// `(labels, names)`, if the targets are classes.
    pub fn as_classes(&self) -> Option<(&[u32], &[String])> {
        match self {
            Targets::Real(_) => None,
            Targets::Classes { labels, names } => Some((labels, names)),
        }
    }
}

/// The train/test splits a set ships with.
#[derive(Debug, Clone, PartialEq)]
pub enum GivenSplits {
    /// None (draw random splits).
    None,
    /// Rows `0..n_train` are the published training file, the rest the test file.
    TrainTest {
        /// Number of training rows.
        n_train: usize,
    },
    /// `n x k`: column `k` marks the test rows of shipped split `k`.
    Masks(Array2<bool>),
}

impl GivenSplits {
    /// Number of shipped mask columns (0 unless [`GivenSplits::Masks`]).
    pub fn n_masks(&self) -> usize {
        match self {
            GivenSplits::Masks(m) => m.ncols(),
            _ => 0,
        }
    }
}

/// A labelled set as [`load`] builds it.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelledSet {
    /// Registry name (`uci/airfoil`, ...).
    pub name: String,
    /// Inputs, `n x d`.
    pub x: Inputs,
    /// Targets, `n`.
    pub y: Targets,
    /// Names of the `d` input columns: the header's, else `x1..xd` (for svmlight, `xj` is the
    /// file's feature index `j`).
    pub feature_names: Vec<String>,
    /// The splits the data ship with.
    pub given: GivenSplits,
}

impl LabelledSet {
    /// Number of rows `n`.
    pub fn n_rows(&self) -> usize {
        self.x.n_rows()
    }

    /// Number of input columns `d`.
    pub fn n_features(&self) -> usize {
        self.x.n_cols()
    }

    /// Inputs and targets of the rows `rows`, in the order given (e.g. a [`crate::Split`]'s
    /// `train`). Panics on an index `>= n`.
    pub fn select(&self, rows: &[usize]) -> (Inputs, Targets) {
        (self.x.select_rows(rows), self.y.select(rows))
    }

    /// Checks that the parts agree in shape (rows, names, labels, masks, n_train).
    pub fn check(&self) -> Result<(), String> {
        let n = self.n_rows();
        if self.y.len() != n {
            return Err(format!("{n} input rows but {} targets", self.y.len()));
        }
        if self.feature_names.len() != self.n_features() {
            return Err(format!(
                "{} input columns but {} feature names",
                self.n_features(),
                self.feature_names.len()
            ));
        }
        if let Targets::Classes { labels, names } = &self.y {
            if let Some(&l) = labels.iter().find(|&&l| l as usize >= names.len()) {
                return Err(format!("label {l} but only {} class names", names.len()));
            }
        }
        match &self.given {
            GivenSplits::None => {}
            GivenSplits::TrainTest { n_train } if *n_train > n => {
                return Err(format!("n_train = {n_train} exceeds the {n} rows"));
            }
            GivenSplits::TrainTest { .. } => {}
            GivenSplits::Masks(m) if m.nrows() != n => {
                return Err(format!("{} mask rows but {n} rows", m.nrows()));
            }
            GivenSplits::Masks(_) => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn targets_select_and_counts() {
        let y = Targets::Classes {
            labels: vec![0, 2, 2, 1],
            names: vec!["a".into(), "b".into(), "c".into(), "d".into()],
        };
        assert_eq!(y.len(), 4);
        assert_eq!(y.n_classes(), Some(4));
        assert_eq!(y.class_counts(), Some(vec![1, 1, 2, 0]));
        let s = y.select(&[3, 0]);
        assert_eq!(s.as_classes().unwrap().0, &[1, 0]);
        assert_eq!(s.n_classes(), Some(4));
        let r = Targets::Real(array![1.0, 2.0, 3.0]);
        assert_eq!(r.n_classes(), None);
        assert_eq!(r.class_counts(), None);
        assert_eq!(r.select(&[2, 2]).as_real().unwrap(), &array![3.0, 3.0]);
    }

    #[test]
    fn inputs_select_dense_and_sparse_agree() {
        let d = array![[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]];
        let dense = Inputs::Dense(d.clone());
        let sparse = Inputs::Sparse(CsrMatrix::from_dense(d.view()));
        assert_eq!((sparse.n_rows(), sparse.n_cols()), (3, 2));
        let rows = [2, 0];
        assert_eq!(
            dense.select_rows(&rows).to_dense(),
            sparse.select_rows(&rows).to_dense()
        );
        assert!(sparse.select_rows(&rows).as_sparse().is_some());
    }

    #[test]
    fn check_catches_shape_mismatches() {
        let set = LabelledSet {
            name: "t".into(),
            x: Inputs::Dense(Array2::zeros((3, 2))),
            y: Targets::Real(Array1::zeros(3)),
            feature_names: vec!["a".into(), "b".into()],
            given: GivenSplits::TrainTest { n_train: 2 },
        };
        assert!(set.check().is_ok());
        let mut bad = set.clone();
        bad.y = Targets::Real(Array1::zeros(2));
        assert!(bad.check().is_err());
        let mut bad = set.clone();
        bad.given = GivenSplits::Masks(Array2::from_elem((2, 10), false));
        assert!(bad.check().is_err());
        let mut bad = set;
        bad.y = Targets::Classes {
            labels: vec![0, 1, 2],
            names: vec!["a".into(), "b".into()],
        };
        assert!(bad.check().is_err());
    }
}
