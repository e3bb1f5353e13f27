//! Compressed sparse row (CSR) matrices: the form svmlight sets are loaded in.
//!
//! Row `i` holds the entries `indptr[i]..indptr[i + 1]` of `indices` (0-based column numbers)
//! and `values`. Invariants, checked by [`CsrMatrix::from_parts`] and kept by every method:
//! `indptr` starts at 0, never decreases and ends at `nnz`; within a row the column indices
//! are strictly increasing and below `n_cols`. Stored values may be any `f64`, but the
//! svmlight reader stores no zeros (see [`crate::loaders::svmlight`]).

use ndarray::{Array2, ArrayView2};

use crate::error::ParamError;

/// A sparse `n_rows x n_cols` matrix in CSR form (never densified unless asked).
#[derive(Debug, Clone, PartialEq)]
pub struct CsrMatrix {
    n_cols: usize,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl CsrMatrix {
    /// A matrix with `n_cols` columns and no rows.
    pub fn empty(n_cols: usize) -> CsrMatrix {
        CsrMatrix {
            n_cols,
            indptr: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
        }
    }

    /// [`Self::from_parts`] without its checks, for parts that hold the invariants by
    /// construction (the svmlight parser's: it checks each index as it reads it). Debug builds
    /// check them anyway.
    pub(crate) fn from_valid_parts(
        n_cols: usize,
        indptr: Vec<usize>,
        indices: Vec<u32>,
        values: Vec<f64>,
    ) -> CsrMatrix {
        debug_assert!(
            Self::from_parts(n_cols, indptr.clone(), indices.clone(), values.clone()).is_ok()
        );
        CsrMatrix {
            n_cols,
            indptr,
            indices,
            values,
        }
    }

    /// Builds a matrix from its parts, checking the invariants of the module docs.
    pub fn from_parts(
        n_cols: usize,
        indptr: Vec<usize>,
        indices: Vec<u32>,
        values: Vec<f64>,
    ) -> Result<CsrMatrix, ParamError> {
        let bad = |m: String| Err(ParamError::InvalidCsr(m));
        if indices.len() != values.len() {
            return bad(format!(
                "{} indices but {} values",
                indices.len(),
                values.len()
            ));
        }
        if indptr.first() != Some(&0) || indptr.last() != Some(&indices.len()) {
            return bad(format!(
                "indptr must start at 0 and end at nnz = {} (got {:?} .. {:?})",
                indices.len(),
                indptr.first(),
                indptr.last()
            ));
        }
        if u32::try_from(n_cols.saturating_sub(1)).is_err() {
            return bad(format!("n_cols = {n_cols} does not fit u32 column indices"));
        }
        for (i, w) in indptr.windows(2).enumerate() {
            if w[0] > w[1] {
                return bad(format!("indptr decreases at row {i}"));
            }
            let row = &indices[w[0]..w[1]];
            if row.windows(2).any(|p| p[0] >= p[1]) {
                return bad(format!(
                    "column indices of row {i} are not strictly increasing"
                ));
            }
            if let Some(&last) = row.last() {
                if last as usize >= n_cols {
                    return bad(format!("row {i} has column {last}, but n_cols = {n_cols}"));
                }
            }
        }
        Ok(CsrMatrix {
            n_cols,
            indptr,
            indices,
            values,
        })
    }

    /// The non-zero entries of a dense matrix (exact zeros are not stored).
    pub fn from_dense(x: ArrayView2<'_, f64>) -> CsrMatrix {
        let mut m = CsrMatrix::empty(x.ncols());
        for row in x.rows() {
            for (j, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    m.indices.push(j as u32);
                    m.values.push(v);
                }
            }
            m.indptr.push(m.indices.len());
        }
        m
    }

    /// Number of rows.
    #[inline]
    pub fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Number of columns.
    #[inline]
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Number of stored entries.
    #[inline]
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// Row `i`: its column indices (strictly increasing) and values. Panics if `i >= n_rows`.
    #[inline]
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let (a, b) = (self.indptr[i], self.indptr[i + 1]);
        (&self.indices[a..b], &self.values[a..b])
    }

    /// Row offsets (`n_rows + 1` entries).
    #[inline]
    pub fn indptr(&self) -> &[usize] {
        &self.indptr
    }

    /// Column index of every stored entry.
    #[inline]
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Value of every stored entry.
    #[inline]
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The parts `(n_cols, indptr, indices, values)`.
    pub fn into_parts(self) -> (usize, Vec<usize>, Vec<u32>, Vec<f64>) {
        (self.n_cols, self.indptr, self.indices, self.values)
    }

    /// The dense `n_rows x n_cols` matrix (unstored entries are 0).
    pub fn to_dense(&self) -> Array2<f64> {
        let mut x = Array2::<f64>::zeros((self.n_rows(), self.n_cols));
        for (i, mut out) in x.rows_mut().into_iter().enumerate() {
            let (cols, vals) = self.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                out[c as usize] = v;
            }
        }
        x
    }

    /// The rows `rows`, in the order given (repeats allowed). Panics on an index
    /// `>= n_rows`, as `ndarray`'s `select` does.
    pub fn select_rows(&self, rows: &[usize]) -> CsrMatrix {
        let nnz = rows
            .iter()
            .map(|&i| self.indptr[i + 1] - self.indptr[i])
            .sum();
        let mut out = CsrMatrix {
            n_cols: self.n_cols,
            indptr: Vec::with_capacity(rows.len() + 1),
            indices: Vec::with_capacity(nnz),
            values: Vec::with_capacity(nnz),
        };
        out.indptr.push(0);
        for &i in rows {
            let (cols, vals) = self.row(i);
            out.indices.extend_from_slice(cols);
            out.values.extend_from_slice(vals);
            out.indptr.push(out.indices.len());
        }
        out
    }

    /// The rows of `parts` stacked in order; every part needs the same `n_cols`.
    pub fn vstack(parts: &[CsrMatrix]) -> Result<CsrMatrix, ParamError> {
        let Some(first) = parts.first() else {
            return Err(ParamError::InvalidCsr("vstack of no matrices".into()));
        };
        let mut out = CsrMatrix::empty(first.n_cols);
        for p in parts {
            if p.n_cols != first.n_cols {
                return Err(ParamError::InvalidCsr(format!(
                    "vstack of matrices with {} and {} columns",
                    first.n_cols, p.n_cols
                )));
            }
            let base = out.indices.len();
            out.indices.extend_from_slice(&p.indices);
            out.values.extend_from_slice(&p.values);
            out.indptr.extend(p.indptr[1..].iter().map(|&o| o + base));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn example() -> CsrMatrix {
        // [[1, 0, 2], [0, 0, 0], [0, 3, 0], [4, 5, 6]]
        CsrMatrix::from_parts(
            3,
            vec![0, 2, 2, 3, 6],
            vec![0, 2, 1, 0, 1, 2],
            vec![1., 2., 3., 4., 5., 6.],
        )
        .unwrap()
    }

    #[test]
    fn shape_rows_and_dense() {
        let m = example();
        assert_eq!((m.n_rows(), m.n_cols(), m.nnz()), (4, 3, 6));
        assert_eq!(m.row(0), (&[0u32, 2][..], &[1.0, 2.0][..]));
        assert_eq!(m.row(1), (&[][..], &[][..]));
        let d = array![[1., 0., 2.], [0., 0., 0.], [0., 3., 0.], [4., 5., 6.]];
        assert_eq!(m.to_dense(), d);
        assert_eq!(CsrMatrix::from_dense(d.view()), m);
    }

    #[test]
    fn select_rows_matches_dense_select() {
        let m = example();
        let rows = [3, 1, 0, 3];
        let s = m.select_rows(&rows);
        assert_eq!(s.n_rows(), 4);
        assert_eq!(
            s.to_dense(),
            m.to_dense().select(ndarray::Axis(0), &rows),
            "select_rows"
        );
        assert_eq!(m.select_rows(&[]).to_dense().dim(), (0, 3));
    }

    #[test]
    fn vstack_concatenates() {
        let m = example();
        let top = m.select_rows(&[0, 1]);
        let bottom = m.select_rows(&[2, 3]);
        assert_eq!(CsrMatrix::vstack(&[top, bottom]).unwrap(), m);
        assert!(CsrMatrix::vstack(&[m.clone(), CsrMatrix::empty(4)]).is_err());
        assert!(CsrMatrix::vstack(&[]).is_err());
    }

    #[test]
    fn from_parts_checks_invariants() {
        let ok = |p: Vec<usize>, i: Vec<u32>, n: usize| {
            let v = vec![1.0; i.len()];
            CsrMatrix::from_parts(n, p, i, v)
        };
        assert!(ok(vec![0, 1], vec![0], 1).is_ok());
        assert!(ok(vec![1, 1], vec![0], 1).is_err()); // does not start at 0
        assert!(ok(vec![0, 2], vec![0], 1).is_err()); // does not end at nnz
        assert!(ok(vec![0, 2, 1, 2], vec![0, 1], 2).is_err()); // decreasing
        assert!(ok(vec![0, 2], vec![1, 0], 2).is_err()); // unsorted row
        assert!(ok(vec![0, 2], vec![1, 1], 2).is_err()); // duplicate column
        assert!(ok(vec![0, 1], vec![2], 2).is_err()); // column out of range
        assert!(CsrMatrix::from_parts(1, vec![0, 1], vec![0], vec![]).is_err());
        let e = ok(vec![0, 1], vec![2], 2).unwrap_err();
        assert!(e.to_string().contains("n_cols = 2"), "{e}");
    }
}
