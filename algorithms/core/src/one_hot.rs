//! Sparse feature matrices with exactly one non-zero per (row, block).
//!
//! A Mondrian kernel feature map of order M has one block per tree: row `i` has a single 1 in
//! block `m`, at the column of the leaf of tree `m` that holds `x_i` (Balog et al. 2016, Sec. 3).
//! Random binning has one block per repetition. Scaling (`1/√M`) is applied by the consumer, so
//! the stored values are implicit ones. A row may lack a block ([`ABSENT`]): random-binning test
//! points that fall into a bin no training point created.

use crate::CoreError;

/// Marker for "this row has no non-zero in this block".
pub const ABSENT: u32 = u32::MAX;

/// An `n_rows × n_columns` 0/1 matrix stored as `n_rows × n_blocks` column indices (implicit CSR
/// with `indptr = [0, B, 2B, ...]`).
#[derive(Debug, Clone, PartialEq)]
pub struct OneHotFeatures {
    n_rows: usize,
    n_blocks: usize,
    n_columns: usize,
    columns: Vec<u32>,
}

impl OneHotFeatures {
    /// Builds the matrix from row-major `columns` (`columns[i * n_blocks + b]`), each entry a
    /// column index `< n_columns` or [`ABSENT`].
    pub fn new(
        n_rows: usize,
        n_blocks: usize,
        n_columns: usize,
        columns: Vec<u32>,
    ) -> Result<Self, CoreError> {
        if columns.len() != n_rows * n_blocks {
            return Err(CoreError::ShapeMismatch {
                what: "number of stored column indices (rows * blocks)",
                expected: n_rows * n_blocks,
                got: columns.len(),
            });
        }
        if let Some(&bad) = columns
            .iter()
            .find(|&&c| c != ABSENT && c as usize >= n_columns)
        {
            return Err(CoreError::InvalidParameter {
                name: "column index",
                value: bad.to_string(),
                expected: "an index below n_columns",
            });
        }
        Ok(Self {
            n_rows,
            n_blocks,
            n_columns,
            columns,
        })
    }

    /// Number of rows (data points).
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of blocks (trees M, or binning repetitions).
    pub fn n_blocks(&self) -> usize {
        self.n_blocks
    }

    /// Number of columns (feature ids, including ids no row uses).
    pub fn n_columns(&self) -> usize {
        self.n_columns
    }

    /// The column indices of row `i`, one per block.
    pub fn row(&self, i: usize) -> &[u32] {
        &self.columns[i * self.n_blocks..(i + 1) * self.n_blocks]
    }

    /// The column of row `i` in block `b`, if present.
    pub fn column(&self, i: usize, b: usize) -> Option<u32> {
        let c = self.columns[i * self.n_blocks + b];
        (c != ABSENT).then_some(c)
    }

    /// Number of non-zeros (present entries).
    pub fn nnz(&self) -> usize {
        self.columns.iter().filter(|&&c| c != ABSENT).count()
    }

    /// `φ(x_i)·φ(x_j)` for the first `prefix` blocks with values 1: the number of blocks in which
    /// the two rows share a column.
    pub fn agreements(&self, i: usize, j: usize, prefix: usize) -> usize {
        self.row(i)[..prefix]
            .iter()
            .zip(&self.row(j)[..prefix])
            .filter(|(a, b)| a == b && **a != ABSENT)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn construction_checks_shapes_and_indices() {
        assert!(OneHotFeatures::new(2, 2, 3, vec![0, 1, 2]).is_err());
        assert!(OneHotFeatures::new(1, 2, 3, vec![0, 3]).is_err());
        let f = OneHotFeatures::new(2, 2, 3, vec![0, 1, 0, ABSENT]).unwrap();
        assert_eq!(f.nnz(), 3);
        assert_eq!(f.column(1, 1), None);
        assert_eq!(f.agreements(0, 1, 2), 1);
        assert_eq!(f.agreements(1, 1, 2), 1);
    }
}
