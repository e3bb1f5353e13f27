//! Binary classification examples: inputs (dense or CSR, never densified) with labels ±1, and
//! the rows of one repetition's split. Labels come from a two-class set whose classes are named
//! `-1` and `+1` (LIBSVM files, or any set binarised by `[data] positive_classes`; spec D12).

use std::sync::OnceLock;

use anyhow::{bail, Result};
use datasets::{Inputs, Targets};
use isolation_kernel::{CsrRows, Row, Rows, SparseRow};

use crate::data::DataSpec;
use crate::data::{DataView, SplitSets};

/// `check_data` of kinds that need a classification set.
pub fn require_classification(kind: &str, data: &DataSpec) -> Result<(), String> {
    match data.task()? {
        Some(datasets::Task::Classification) => Ok(()),
        Some(datasets::Task::Regression) => Err(format!(
            "{kind} needs binary classification data; these data are a regression set"
        )),
        None => Err(format!(
            "{kind} needs binary classification data; these data are points without labels"
        )),
    }
}

/// Examples `(x_i, c_i)` with `c_i ∈ {−1, +1}`.
pub struct Examples {
    x: Inputs,
    y: Vec<f64>,
    /// Whether sparse inputs pass the isolation kernel's checks of a CSR matrix, found at the
    /// first [`Self::rows`] (the examples never change): each cell that maps them then skips
    /// the checks, which [`BinarySplit::prepare`] makes once, before any cell is timed.
    sparse_valid: OnceLock<bool>,
}

impl Examples {
    /// The given rows of a labelled set, in that order.
    pub fn select(sets: &SplitSets, rows: &[usize]) -> Result<Examples> {
        let labels = signs(&sets.set.name, &sets.set.y)?;
        let (x, _) = sets.rows(rows);
        Ok(Examples {
            x,
            y: rows.iter().map(|&i| labels[i]).collect(),
            sparse_valid: OnceLock::new(),
        })
    }

    /// Examples from their inputs and ±1 labels (tests).
    #[cfg(test)]
    pub fn from_parts(x: Inputs, y: Vec<f64>) -> Examples {
        assert_eq!(x.n_rows(), y.len());
        Examples {
            x,
            y,
            sparse_valid: OnceLock::new(),
        }
    }

    /// The rows `ids` of these examples, in that order.
    pub fn subset(&self, ids: &[usize]) -> Examples {
        Examples {
            x: self.x.select_rows(ids),
            y: ids.iter().map(|&i| self.y[i]).collect(),
            sparse_valid: OnceLock::new(),
        }
    }

    /// Number of examples.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Input dimension d.
    pub fn dim(&self) -> usize {
        self.x.n_cols()
    }

    /// The label c_i.
    pub fn label(&self, i: usize) -> f64 {
        self.y[i]
    }

    /// The inputs.
    pub fn inputs(&self) -> &Inputs {
        &self.x
    }

    /// The inputs as the isolation kernel's rows.
    pub fn rows(&self) -> Result<Rows<'_>> {
        Ok(match &self.x {
            Inputs::Dense(x) => Rows::Dense(x.view()),
            Inputs::Sparse(x) => {
                let parts = (x.n_cols(), x.indptr(), x.indices(), x.values());
                let checked = || CsrRows::new(parts.0, parts.1, parts.2, parts.3);
                if *self.sparse_valid.get_or_init(|| checked().is_ok()) {
                    // SAFETY: these very arrays passed `CsrRows::new` (the verdict cached
                    // above); `self.x` is never changed after construction.
                    Rows::Sparse(unsafe {
                        CsrRows::new_unchecked(parts.0, parts.1, parts.2, parts.3)
                    })
                } else {
                    Rows::Sparse(checked()?)
                }
            }
        })
    }

    /// These examples with their inputs as the isolation kernel's rows, for learners that read
    /// them many times (a stream's blocks): the rows made once ([`Self::rows`] checks a sparse
    /// matrix at its first call only, then reuses the verdict).
    pub fn checked(&self) -> Result<Checked<'_>> {
        Ok(Checked {
            examples: self,
            rows: self.rows()?,
        })
    }

    /// Input row i, dense or sparse.
    pub fn row(&self, i: usize) -> Row<'_> {
        match &self.x {
            Inputs::Dense(x) => Row::Dense(x.row(i)),
            Inputs::Sparse(x) => {
                let (indices, values) = x.row(i);
                Row::Sparse(
                    SparseRow::new(indices, values, x.n_cols())
                        .expect("a CSR matrix of the datasets crate holds valid rows"),
                )
            }
        }
    }

    /// Share of +1 labels.
    pub fn positive_rate(&self) -> f64 {
        self.y.iter().filter(|&&c| c > 0.0).count() as f64 / self.len().max(1) as f64
    }
}

/// [`Examples`] and their inputs as [`Rows`], checked once ([`Examples::checked`]).
#[derive(Clone, Copy)]
pub struct Checked<'a> {
    examples: &'a Examples,
    rows: Rows<'a>,
}

impl<'a> Checked<'a> {
    /// The inputs as the isolation kernel's rows (checked when these were made).
    pub fn rows(&self) -> Rows<'a> {
        self.rows
    }
}

impl std::ops::Deref for Checked<'_> {
    type Target = Examples;
    fn deref(&self) -> &Examples {
        self.examples
    }
}

/// The ±1 label of every row of a two-class set with classes `-1` and `+1`.
fn signs(name: &str, y: &Targets) -> Result<Vec<f64>> {
    let Some((labels, names)) = y.as_classes() else {
        bail!("{name} has real targets; this experiment needs classes -1 and +1");
    };
    let position = |n: &str| names.iter().position(|c| c == n);
    let (Some(neg), Some(pos), 2) = (position("-1"), position("+1"), names.len()) else {
        bail!(
            "{name} has classes {}; this experiment needs exactly the classes -1 and +1 \
             (binarise with [data] positive_classes = [...])",
            names.join(", ")
        );
    };
    Ok(labels
        .iter()
        .map(|&l| {
            if l as usize == pos {
                1.0
            } else {
                debug_assert_eq!(l as usize, neg);
                -1.0
            }
        })
        .collect())
}

/// The training and test examples of one repetition's split.
pub struct BinarySplit {
    pub train: Examples,
    pub test: Examples,
}

impl BinarySplit {
    pub fn prepare(data: &DataView) -> Result<BinarySplit> {
        let sets = data.sets()?;
        if !sets.parts.validation.is_empty() {
            bail!("this experiment uses a training and a test set only");
        }
        let split = BinarySplit {
            train: Examples::select(sets, &sets.parts.train)?,
            test: Examples::select(sets, &sets.parts.test)?,
        };
        // The inputs checked here, once, not in the cells' timed work (a bad matrix fails the
        // cells as before: `rows` checks it again to name the fault).
        let _ = (split.train.rows(), split.test.rows());
        Ok(split)
    }

    /// Training then test examples as one set (the online stream of spec §10.2).
    pub fn stream(data: &DataView) -> Result<Examples> {
        let sets = data.sets()?;
        let mut rows = sets.parts.train.clone();
        rows.extend(&sets.parts.validation);
        rows.extend(&sets.parts.test);
        let stream = Examples::select(sets, &rows)?;
        // As in `prepare`.
        let _ = stream.rows();
        Ok(stream)
    }
}

#[cfg(test)]
mod tests {
    use datasets::CsrMatrix;

    use super::*;

    #[test]
    fn sparse_inputs_are_checked_once_and_a_bad_matrix_fails_every_time() {
        let good =
            CsrMatrix::from_parts(3, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, -2.0, 0.5]).unwrap();
        let ex = Examples::from_parts(Inputs::Sparse(good), vec![1.0, -1.0]);
        for _ in 0..2 {
            let rows = ex.rows().unwrap();
            assert_eq!((rows.n_rows(), rows.dim()), (2, 3));
        }
        assert_eq!(ex.sparse_valid.get(), Some(&true));
        // A matrix the data sets accept (they do not look at the values) but the maps do not.
        let bad = CsrMatrix::from_parts(3, vec![0, 1], vec![1], vec![f64::NAN]).unwrap();
        let ex = Examples::from_parts(Inputs::Sparse(bad), vec![1.0]);
        for _ in 0..2 {
            assert!(ex.rows().is_err());
        }
        assert_eq!(ex.sparse_valid.get(), Some(&false));
    }
}
