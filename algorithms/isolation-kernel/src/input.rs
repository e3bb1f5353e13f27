//! Input rows: dense (`ArrayView2`) or sparse (CSR slices, as a9a and ijcnn1 are loaded).
//!
//! A sparse data set is never densified: a tree walk reads one attribute per level and finds it
//! by binary search in the row's sorted indices (absent = 0), or, when d ≤ `DENSIFY_LIMIT`
//! (4096), in the one row being mapped, densified once for its t walks (the same values, so the
//! same leaves); a Voronoi look-up takes inner products by merging the row with the (sparse) centre.
//! Both give bit-identical results to the densified row (adding the products of the implicit
//! zeros changes no floating-point sum).

use ndarray::{ArrayView1, ArrayView2};

use kernel_core::CoreError;

use crate::error::IsolationError;

/// One sparse row: strictly increasing column `indices` with their `values` (absent = 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SparseRow<'a> {
    indices: &'a [u32],
    values: &'a [f64],
}

impl<'a> SparseRow<'a> {
    /// A row from entries already known to be valid (strictly increasing indices, finite
    /// values), e.g. the non-zeros of a checked row.
    pub(crate) fn from_checked(indices: &'a [u32], values: &'a [f64]) -> Self {
        Self { indices, values }
    }

    /// Checks that the slices have equal length, the indices are strictly increasing and below
    /// `dim`, and the values are finite.
    pub fn new(indices: &'a [u32], values: &'a [f64], dim: usize) -> Result<Self, IsolationError> {
        check_sparse(0, indices, values, dim)?;
        Ok(Self { indices, values })
    }

    /// The column indices of the stored entries.
    pub fn indices(&self) -> &'a [u32] {
        self.indices
    }

    /// The stored values.
    pub fn values(&self) -> &'a [f64] {
        self.values
    }

    /// `x_a` (0 when `a` is not stored), by binary search.
    pub fn get(&self, a: u32) -> f64 {
        match self.indices.binary_search(&a) {
            Ok(k) => self.values[k],
            Err(_) => 0.0,
        }
    }
}

fn check_sparse(
    row: usize,
    indices: &[u32],
    values: &[f64],
    dim: usize,
) -> Result<(), IsolationError> {
    let bad = |reason: String| Err(IsolationError::MalformedSparse { row, reason });
    if indices.len() != values.len() {
        return bad(format!(
            "{} indices but {} values",
            indices.len(),
            values.len()
        ));
    }
    if indices.windows(2).any(|w| w[0] >= w[1]) {
        return bad("column indices are not strictly increasing".into());
    }
    if let Some(&last) = indices.last() {
        if last as usize >= dim {
            return Err(IsolationError::Core(CoreError::ShapeMismatch {
                what: "input columns vs the dimension of the model",
                expected: dim,
                got: last as usize + 1,
            }));
        }
    }
    if let Some((k, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(IsolationError::Core(CoreError::NonFiniteInput {
            what: "input",
            row,
            column: indices[k] as usize,
            value,
        }));
    }
    Ok(())
}

/// Whether every row of a CSR matrix whose `indptr` runs from 0 to nnz is valid as
/// [`check_sparse`] says: `indptr` non-decreasing, indices strictly increasing within each row and
/// below `dim`, values finite. The same verdict as the row-by-row checks, from passes over whole
/// arrays that the compiler vectorises, and one look per row: an index that does not exceed the
/// one before it is allowed only at the first entry of a row, so the rows are increasing iff the
/// whole array has as many such drops as the row starts have; and every index is below `dim` iff
/// the largest is. (ijcnn1's 141,691 rows, 1.9 M entries: about a third of the row-by-row time.)
fn valid_rows(dim: usize, indptr: &[usize], indices: &[u32], values: &[f64]) -> bool {
    // Passes without an early exit, over chunks: vectorised.
    const CHUNK: usize = 1024;
    let finite = values
        .chunks(CHUNK)
        .all(|c| c.iter().fold(true, |ok, v| ok & v.is_finite()));
    let below = indices.iter().fold(0, |m, &a| m.max(a)) as usize;
    let drops: usize = indices.windows(2).map(|w| usize::from(w[0] >= w[1])).sum();
    let mut ordered = true;
    let mut drops_at_starts = 0;
    for w in indptr.windows(2) {
        let (start, end) = (w[0], w[1]);
        ordered &= start <= end;
        // A non-empty row after the first entry: is its first index a drop?
        if start > 0 && start < end && end <= indices.len() {
            drops_at_starts += usize::from(indices[start - 1] >= indices[start]);
        }
    }
    finite && ordered && drops == drops_at_starts && (indices.is_empty() || below < dim)
}

/// A borrowed CSR matrix: row `i` holds entries `indptr[i]..indptr[i + 1]` of `indices` and
/// `values` (the layout of `datasets::sparse::CsrMatrix`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CsrRows<'a> {
    dim: usize,
    indptr: &'a [usize],
    indices: &'a [u32],
    values: &'a [f64],
}

impl<'a> CsrRows<'a> {
    /// Checks the CSR invariants (indptr from 0 to nnz, non-decreasing; every row a valid
    /// [`SparseRow`] of dimension `dim`).
    pub fn new(
        dim: usize,
        indptr: &'a [usize],
        indices: &'a [u32],
        values: &'a [f64],
    ) -> Result<Self, IsolationError> {
        let bad = |row: usize, reason: String| Err(IsolationError::MalformedSparse { row, reason });
        if indices.len() != values.len() {
            return bad(
                0,
                format!("{} indices but {} values", indices.len(), values.len()),
            );
        }
        if indptr.first() != Some(&0) || indptr.last() != Some(&indices.len()) {
            return bad(
                0,
                format!("indptr must run from 0 to nnz = {}", indices.len()),
            );
        }
        if !valid_rows(dim, indptr, indices, values) {
            // Which row is wrong, and how, by the checks of one row.
            for (i, w) in indptr.windows(2).enumerate() {
                if w[0] > w[1] || w[1] > indices.len() {
                    return bad(i, "indptr decreases or exceeds nnz".into());
                }
                check_sparse(i, &indices[w[0]..w[1]], &values[w[0]..w[1]], dim)?;
            }
        }
        Ok(Self {
            dim,
            indptr,
            indices,
            values,
        })
    }

    /// The matrix of [`Self::new`] without its checks, for arrays already known to pass them
    /// (checked once, then mapped many times).
    ///
    /// # Safety
    /// `CsrRows::new` must accept these very arguments: the maps read rows without bounds
    /// checks on that promise.
    pub unsafe fn new_unchecked(
        dim: usize,
        indptr: &'a [usize],
        indices: &'a [u32],
        values: &'a [f64],
    ) -> Self {
        debug_assert!(Self::new(dim, indptr, indices, values).is_ok());
        Self {
            dim,
            indptr,
            indices,
            values,
        }
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Number of columns d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Row `i` (valid by construction).
    pub fn row(&self, i: usize) -> SparseRow<'a> {
        let (lo, hi) = (self.indptr[i], self.indptr[i + 1]);
        SparseRow {
            indices: &self.indices[lo..hi],
            values: &self.values[lo..hi],
        }
    }
}

/// A set of input rows, dense or sparse.
#[derive(Debug, Clone, Copy)]
pub enum Rows<'a> {
    Dense(ArrayView2<'a, f64>),
    Sparse(CsrRows<'a>),
}

impl Rows<'_> {
    /// Number of rows n.
    pub fn n_rows(&self) -> usize {
        match self {
            Rows::Dense(x) => x.nrows(),
            Rows::Sparse(x) => x.n_rows(),
        }
    }

    /// Number of columns d.
    pub fn dim(&self) -> usize {
        match self {
            Rows::Dense(x) => x.ncols(),
            Rows::Sparse(x) => x.dim(),
        }
    }

    /// Row i written densely into `out` (length d; absent sparse entries 0).
    pub fn dense_row(&self, i: usize, out: &mut [f64]) {
        match self {
            Rows::Dense(x) => out.iter_mut().zip(x.row(i)).for_each(|(o, &v)| *o = v),
            Rows::Sparse(x) => {
                out.fill(0.0);
                let r = x.row(i);
                for (&a, &v) in r.indices().iter().zip(r.values()) {
                    out[a as usize] = v;
                }
            }
        }
    }

    /// Checks the dimension against `dim` and (dense) that every value is finite; sparse rows
    /// were checked by [`CsrRows::new`].
    pub(crate) fn check(&self, dim: usize) -> Result<(), IsolationError> {
        if self.dim() != dim {
            return Err(IsolationError::Core(CoreError::ShapeMismatch {
                what: "input columns vs the dimension of the model",
                expected: dim,
                got: self.dim(),
            }));
        }
        if let Rows::Dense(x) = self {
            check_dense_values(*x)?;
        }
        Ok(())
    }
}

pub(crate) fn check_dense_values(x: ArrayView2<f64>) -> Result<(), IsolationError> {
    Ok(kernel_core::error::check_finite("input", x)?)
}

/// One input row, dense or sparse.
#[derive(Debug, Clone, Copy)]
pub enum Row<'a> {
    Dense(ArrayView1<'a, f64>),
    Sparse(SparseRow<'a>),
}

impl Row<'_> {
    /// Checks the dimension and (dense) finiteness; a [`SparseRow`] was checked when built
    /// except for its dimension bound, which is checked here again.
    pub(crate) fn check(&self, dim: usize) -> Result<(), IsolationError> {
        match self {
            Row::Dense(x) => {
                if x.len() != dim {
                    return Err(IsolationError::Core(CoreError::ShapeMismatch {
                        what: "input columns vs the dimension of the model",
                        expected: dim,
                        got: x.len(),
                    }));
                }
                if let Some((column, &value)) = x.indexed_iter().find(|(_, v)| !v.is_finite()) {
                    return Err(IsolationError::Core(CoreError::NonFiniteInput {
                        what: "input",
                        row: 0,
                        column,
                        value,
                    }));
                }
                Ok(())
            }
            Row::Sparse(x) => match x.indices.last() {
                Some(&last) if last as usize >= dim => {
                    Err(IsolationError::Core(CoreError::ShapeMismatch {
                        what: "input columns vs the dimension of the model",
                        expected: dim,
                        got: last as usize + 1,
                    }))
                }
                _ => Ok(()),
            },
        }
    }
}

/// Largest dimension d for which a sparse row is densified for the t tree walks of one point
/// ([`Point::densified`]): d zeroed values (32 KiB at the limit) against ~t·log ψ binary
/// searches.
pub(crate) const DENSIFY_LIMIT: usize = 4096;

/// What the partitionings read from a (validated) point.
pub(crate) trait Point: Sync {
    /// `x_a`.
    fn value(&self, a: u32) -> f64;

    /// `⟨x, z⟩` with a sparse `z` (strictly increasing `indices`), summed in increasing index
    /// order over the entries both store, so that dense and sparse rows give the same bits.
    fn dot_sparse(&self, indices: &[u32], values: &[f64]) -> f64;

    /// The non-zero entries `(a, x_a)` in increasing `a`.
    fn nonzeros(&self) -> Vec<(u32, f64)>;

    /// The attributes that are non-constant on the points `ids` (absent = 0), in increasing
    /// order. `candidates` (sorted; `None` = all) must contain every non-constant attribute.
    fn non_constant(points: &[Self], ids: &[u32], candidates: Option<&[u32]>) -> Vec<u32>
    where
        Self: Sized;

    /// A sparse row of dimension `dim` ≤ [`DENSIFY_LIMIT`] as its d values (absent = 0, a
    /// stored value as stored), for a run of look-ups that would each binary-search the row;
    /// `None` for a dense row (already O(1) per look-up) or a larger d.
    fn densified(&self, _dim: usize) -> Option<Vec<f64>> {
        None
    }
}

/// [`Point`] for a dense row type (indexable by attribute, with `iter` and `len`): ndarray's
/// row views (any stride) and plain slices (a contiguous row: one load fewer per value than a
/// view, which the isolation trees' build reads at every node).
macro_rules! dense_point {
    ($row:ty) => {
        impl Point for $row {
            #[inline]
            fn value(&self, a: u32) -> f64 {
                self[a as usize]
            }

            fn dot_sparse(&self, indices: &[u32], values: &[f64]) -> f64 {
                let mut s = 0.0;
                for (&a, &v) in indices.iter().zip(values) {
                    s += self[a as usize] * v;
                }
                s
            }

            fn nonzeros(&self) -> Vec<(u32, f64)> {
                self.iter()
                    .enumerate()
                    .filter(|(_, &v)| v != 0.0)
                    .map(|(a, &v)| (a as u32, v))
                    .collect()
            }

            fn non_constant(points: &[Self], ids: &[u32], candidates: Option<&[u32]>) -> Vec<u32> {
                let Some(&first_id) = ids.first() else {
                    return Vec::new();
                };
                let first = &points[first_id as usize];
                let varies = |a: u32| {
                    ids[1..]
                        .iter()
                        .any(|&p| points[p as usize][a as usize] != first[a as usize])
                };
                match candidates {
                    Some(c) => c.iter().copied().filter(|&a| varies(a)).collect(),
                    None => (0..first.len() as u32).filter(|&a| varies(a)).collect(),
                }
            }
        }
    };
}

dense_point!(ArrayView1<'_, f64>);
dense_point!(&[f64]);

impl Point for SparseRow<'_> {
    fn value(&self, a: u32) -> f64 {
        self.get(a)
    }

    fn densified(&self, dim: usize) -> Option<Vec<f64>> {
        (dim <= DENSIFY_LIMIT).then(|| {
            let mut v = vec![0.0; dim];
            for (&a, &x) in self.indices.iter().zip(self.values) {
                v[a as usize] = x;
            }
            v
        })
    }

    fn dot_sparse(&self, indices: &[u32], values: &[f64]) -> f64 {
        let (mut i, mut j, mut s) = (0, 0, 0.0);
        while i < self.indices.len() && j < indices.len() {
            match self.indices[i].cmp(&indices[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    s += self.values[i] * values[j];
                    i += 1;
                    j += 1;
                }
            }
        }
        s
    }

    fn nonzeros(&self) -> Vec<(u32, f64)> {
        self.indices
            .iter()
            .zip(self.values)
            .filter(|(_, &v)| v != 0.0)
            .map(|(&a, &v)| (a, v))
            .collect()
    }

    /// Gathers the stored non-zeros of the points, sorted by attribute: an attribute is
    /// non-constant when its stored values differ, or when some but not all points store a
    /// non-zero (the others are 0). Cost O(nnz log nnz), independent of d.
    fn non_constant(points: &[Self], ids: &[u32], _candidates: Option<&[u32]>) -> Vec<u32> {
        let mut entries: Vec<(u32, f64)> = ids
            .iter()
            .flat_map(|&p| points[p as usize].nonzeros())
            .collect();
        entries.sort_unstable_by_key(|e| e.0);
        let mut out = Vec::new();
        for group in entries.chunk_by(|a, b| a.0 == b.0) {
            let first = group[0].1;
            if group.len() < ids.len() || group.iter().any(|e| e.1 != first) {
                out.push(group[0].0);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// The verdict of the checks of one row, row by row (what `valid_rows` must agree with).
    fn row_by_row(dim: usize, indptr: &[usize], indices: &[u32], values: &[f64]) -> bool {
        indptr.windows(2).all(|w| {
            w[0] <= w[1]
                && w[1] <= indices.len()
                && check_sparse(0, &indices[w[0]..w[1]], &values[w[0]..w[1]], dim).is_ok()
        })
    }

    #[test]
    fn whole_array_checks_agree_with_the_row_by_row_checks() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (mut valid, mut invalid) = (0, 0);
        for case in 0..20_000 {
            let dim = rng.random_range(1..8);
            let n = rng.random_range(0..6);
            let mut indptr = vec![0];
            let (mut indices, mut values) = (Vec::new(), Vec::new());
            for _ in 0..n {
                for a in 0..dim as u32 {
                    if rng.random_bool(0.5) {
                        indices.push(a);
                        values.push(rng.random_range(-1.0..1.0));
                    }
                }
                indptr.push(indices.len());
            }
            // One fault at most, of each kind the checks look for.
            let nnz = indices.len();
            match case % 7 {
                1 if nnz > 0 => indices[rng.random_range(0..nnz)] = rng.random_range(0..9),
                2 if nnz > 0 => values[rng.random_range(0..nnz)] = f64::NAN,
                3 if nnz > 0 => values[rng.random_range(0..nnz)] = f64::NEG_INFINITY,
                4 if n > 1 => {
                    let k = rng.random_range(1..n);
                    indptr[k] = rng.random_range(0..=nnz);
                }
                5 if nnz > 1 => {
                    let k = rng.random_range(1..nnz);
                    indices.swap(k - 1, k);
                }
                _ => {}
            }
            let want = row_by_row(dim, &indptr, &indices, &values);
            assert_eq!(
                valid_rows(dim, &indptr, &indices, &values),
                want,
                "dim {dim}, indptr {indptr:?}, indices {indices:?}, values {values:?}"
            );
            assert_eq!(CsrRows::new(dim, &indptr, &indices, &values).is_ok(), want);
            if want {
                valid += 1;
            } else {
                invalid += 1;
            }
        }
        // Both verdicts were exercised, often.
        assert!(
            valid > 5_000 && invalid > 5_000,
            "{valid} valid, {invalid} invalid"
        );
    }
}
