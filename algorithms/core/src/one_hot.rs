//! Sparse feature matrices with exactly one non-zero per (row, block).
//!
//! A Mondrian kernel feature map of order M has one block per tree: row `i` has a single 1 in
//! block `m`, at the column of the leaf of tree `m` that holds `x_i` (Balog et al. 2016, Sec. 3).
//! Random binning has one block per repetition. Scaling (`1/√M`) is applied by the consumer, so
//! the stored values are implicit ones. A row may lack a block ([`ABSENT`]): random-binning test
//! points that fall into a bin no training point created.

use ndarray::{Array1, Array2, ArrayView1};

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

    /// The same matrix with its used columns renumbered in the order rows first use them (row
    /// by row, block by block); unused columns are dropped. Row-wise computations that only
    /// gather and scatter by column (SGD) give the same numbers on either matrix, but
    /// consecutive rows' new columns are now adjacent in memory: when most entries are unique
    /// (random binning at large λ) a row's weights are one contiguous run, not M cache lines.
    pub fn renumbered_by_first_use(&self) -> Self {
        let mut new_id = vec![ABSENT; self.n_columns];
        let mut next = 0u32;
        let columns = self
            .columns
            .iter()
            .map(|&c| {
                if c == ABSENT {
                    return ABSENT;
                }
                let id = &mut new_id[c as usize];
                if *id == ABSENT {
                    *id = next;
                    next += 1;
                }
                *id
            })
            .collect();
        Self {
            n_rows: self.n_rows,
            n_blocks: self.n_blocks,
            n_columns: next as usize,
            columns,
        }
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

    /// All entries, row-major: `columns()[i * n_blocks + b]`.
    pub fn columns(&self) -> &[u32] {
        &self.columns
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

/// The columns that a set of rows uses, renumbered `0..n` in block order (columns of block 0
/// first), so that the first `block_ends[R - 1]` compact columns are exactly those of the first R
/// blocks. Columns no selected row uses (test-only bins, internal tree nodes) are dropped: their
/// ridge weight is exactly 0.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactColumns {
    /// Compact index of every original column, or [`ABSENT`].
    index: Vec<u32>,
    /// Original column of every compact index.
    original: Vec<u32>,
    /// `block_ends[b]` = number of compact columns in blocks `0..=b`.
    pub block_ends: Vec<usize>,
}

impl CompactColumns {
    /// Number of compact columns.
    pub fn len(&self) -> usize {
        self.block_ends.last().copied().unwrap_or(0)
    }

    /// Whether no column is used.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The original column of every compact index, in compact order.
    pub fn original_columns(&self) -> &[u32] {
        &self.original
    }

    /// Compact index of an original column, if a selected row uses it.
    pub fn get(&self, column: u32) -> Option<usize> {
        if column == ABSENT {
            return None;
        }
        let c = self.index[column as usize];
        (c != ABSENT).then_some(c as usize)
    }
}

impl OneHotFeatures {
    /// The columns used by `rows`, in block order. Requires every block's columns to form a
    /// contiguous id range in block order (true of the Mondrian and random-binning maps).
    pub fn compact_columns(
        &self,
        rows: std::ops::Range<usize>,
    ) -> Result<CompactColumns, CoreError> {
        let mut used_by_block: Vec<Vec<u32>> = vec![Vec::new(); self.n_blocks];
        for i in rows {
            for (b, &c) in self.row(i).iter().enumerate() {
                if c != ABSENT {
                    used_by_block[b].push(c);
                }
            }
        }
        let mut index = vec![ABSENT; self.n_columns];
        let mut original = Vec::new();
        let mut block_ends = Vec::with_capacity(self.n_blocks);
        let mut next = 0u32;
        let mut last_max: Option<u32> = None;
        for used in &mut used_by_block {
            used.sort_unstable();
            used.dedup();
            if let (Some(prev), Some(&first)) = (last_max, used.first()) {
                if first <= prev {
                    return Err(CoreError::InvalidParameter {
                        name: "feature columns",
                        value: format!("column {first} after {prev}"),
                        expected: "each block's columns after those of the previous block",
                    });
                }
            }
            for &c in used.iter() {
                index[c as usize] = next;
                original.push(c);
                next += 1;
            }
            if let Some(&m) = used.last() {
                last_max = Some(m);
            }
            block_ends.push(next as usize);
        }
        Ok(CompactColumns {
            index,
            original,
            block_ends,
        })
    }

    /// `AᵀA` over `rows` in compact columns: co-occurrence counts (`(AᵀA)_ab` = number of rows
    /// holding both columns). Cost: rows × blocks² / 2.
    pub fn gram(&self, rows: std::ops::Range<usize>, compact: &CompactColumns) -> Array2<f64> {
        let n = compact.len();
        let mut gram = Array2::<f64>::zeros((n, n));
        let mut cols = Vec::with_capacity(self.n_blocks);
        for i in rows {
            cols.clear();
            cols.extend(self.row(i).iter().filter_map(|&c| compact.get(c)));
            for (k, &a) in cols.iter().enumerate() {
                gram[[a, a]] += 1.0;
                for &b in &cols[k + 1..] {
                    gram[[a, b]] += 1.0;
                    gram[[b, a]] += 1.0;
                }
            }
        }
        gram
    }

    /// `Aᵀy` over `rows` in compact columns (`y[k]` belongs to row `rows.start + k`).
    pub fn transpose_times(
        &self,
        rows: std::ops::Range<usize>,
        y: ArrayView1<f64>,
        compact: &CompactColumns,
    ) -> Array1<f64> {
        let mut out = Array1::zeros(compact.len());
        for (k, i) in rows.enumerate() {
            for &c in self.row(i) {
                if let Some(a) = compact.get(c) {
                    out[a] += y[k];
                }
            }
        }
        out
    }

    /// `A_R v` for the first `prefix` blocks: for every row in `rows`, the sum of `v` over its
    /// columns (compact, absent ones count 0).
    pub fn times_prefix(
        &self,
        rows: std::ops::Range<usize>,
        v: ArrayView1<f64>,
        compact: &CompactColumns,
        prefix: usize,
    ) -> Array1<f64> {
        rows.map(|i| {
            self.row(i)[..prefix]
                .iter()
                .filter_map(|&c| compact.get(c))
                .filter(|&a| a < v.len())
                .map(|a| v[a])
                .sum()
        })
        .collect()
    }
}

impl OneHotFeatures {
    /// The operator `v ↦ (AᵀA + penalty·I) v` over `rows` in compact columns, with the compact
    /// indices resolved once (for the many products of an iterative solve).
    pub fn normal_operator(
        &self,
        rows: std::ops::Range<usize>,
        compact: &CompactColumns,
    ) -> NormalOperator {
        let n = rows.len();
        let b_count = self.n_blocks;
        let mut row_major = vec![ABSENT; n * b_count];
        let mut block_major = vec![ABSENT; n * b_count];
        for (k, i) in rows.enumerate() {
            for (b, &c) in self.row(i).iter().enumerate() {
                if let Some(a) = compact.get(c) {
                    row_major[k * b_count + b] = a as u32;
                    block_major[b * n + k] = a as u32;
                }
            }
        }
        NormalOperator {
            n_rows: n,
            block_ends: compact.block_ends.clone(),
            row_major,
            block_major,
        }
    }

    /// Column counts over `rows` (the diagonal of `AᵀA`), in compact columns.
    pub fn column_counts(
        &self,
        rows: std::ops::Range<usize>,
        compact: &CompactColumns,
    ) -> Vec<f64> {
        let mut counts = vec![0.0; compact.len()];
        for i in rows {
            for &c in self.row(i) {
                if let Some(a) = compact.get(c) {
                    counts[a] += 1.0;
                }
            }
        }
        counts
    }
}

/// `v ↦ (AᵀA + penalty·I) v` for one-hot features (see [`OneHotFeatures::normal_operator`]).
#[derive(Debug, Clone)]
pub struct NormalOperator {
    n_rows: usize,
    block_ends: Vec<usize>,
    /// Compact column of (row, block), row-major; [`ABSENT`] when none.
    row_major: Vec<u32>,
    /// The same, block-major.
    block_major: Vec<u32>,
}

impl NormalOperator {
    /// `out = (AᵀA + penalty·I) v`: `u = A v` row by row, then `Aᵀu` block by block (blocks own
    /// disjoint column ranges, so both passes run in parallel and every sum keeps a fixed order).
    pub fn apply(&self, v: &[f64], penalty: f64, out: &mut [f64]) {
        use rayon::prelude::*;
        let b_count = self.block_ends.len();
        let u: Vec<f64> = self
            .row_major
            .par_chunks(b_count.max(1))
            .map(|cols| {
                cols.iter()
                    .filter(|&&a| a != ABSENT)
                    .map(|&a| v[a as usize])
                    .sum()
            })
            .collect();
        let mut slices = Vec::with_capacity(b_count);
        let mut rest = out;
        let mut start = 0;
        for &end in &self.block_ends {
            let (head, tail) = rest.split_at_mut(end - start);
            slices.push((start, head));
            rest = tail;
            start = end;
        }
        slices
            .into_par_iter()
            .enumerate()
            .for_each(|(b, (start, slice))| {
                for (k, value) in slice.iter_mut().enumerate() {
                    *value = penalty * v[start + k];
                }
                let cols = &self.block_major[b * self.n_rows..(b + 1) * self.n_rows];
                for (k, &a) in cols.iter().enumerate() {
                    if a != ABSENT {
                        slice[a as usize - start] += u[k];
                    }
                }
            });
    }
}

impl NormalOperator {
    /// The symmetric block Gauss-Seidel preconditioner of `K = AᵀA + penalty·I` with the blocks
    /// as blocks: `out = P⁻¹ r`, `P = (D + L) D⁻¹ (D + U)`, `D` the block diagonal (diagonal
    /// itself, since a row has one column per block: `diag` = column counts + penalty), `L` and
    /// `U = Lᵀ` the cross-block parts. A forward then a backward sweep over the blocks, each
    /// keeping the running `A y` of the blocks done: about the cost of one product with `K`.
    /// For Mondrian features this is "backfitting" over the trees.
    pub fn symmetric_gauss_seidel(&self, r: &[f64], diag: &[f64], out: &mut [f64]) {
        let n = self.n_rows;
        let mut running = vec![0.0; n];
        let mut cross = vec![0.0; r.len()];
        let blocks = |b: usize| {
            let start = if b == 0 { 0 } else { self.block_ends[b - 1] };
            (
                start..self.block_ends[b],
                &self.block_major[b * n..(b + 1) * n],
            )
        };
        // Forward: (D + L) y = r, y in `out`.
        for b in 0..self.block_ends.len() {
            let (range, cols) = blocks(b);
            for (k, &a) in cols.iter().enumerate() {
                if a != ABSENT {
                    cross[a as usize] += running[k];
                }
            }
            for a in range {
                out[a] = (r[a] - cross[a]) / diag[a];
            }
            for (k, &a) in cols.iter().enumerate() {
                if a != ABSENT {
                    running[k] += out[a as usize];
                }
            }
        }
        // Backward: (D + U) z = D y, z overwriting y.
        running.fill(0.0);
        cross.fill(0.0);
        for b in (0..self.block_ends.len()).rev() {
            let (range, cols) = blocks(b);
            for (k, &a) in cols.iter().enumerate() {
                if a != ABSENT {
                    cross[a as usize] += running[k];
                }
            }
            for a in range {
                out[a] -= cross[a] / diag[a];
            }
            for (k, &a) in cols.iter().enumerate() {
                if a != ABSENT {
                    running[k] += out[a as usize];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renumbering_by_first_use_keeps_the_matrix_and_the_sgd_numbers() {
        use crate::sgd::{ScaledWeights, Sgd};
        use rand::{Rng, SeedableRng};
        use rand_chacha::ChaCha8Rng;
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let (n, blocks, per_block) = (40, 5, 6);
        let columns: Vec<u32> = (0..n * blocks)
            .map(|k| {
                if rng.random::<f64>() < 0.1 {
                    ABSENT
                } else {
                    ((k % blocks) * per_block + rng.random_range(0..per_block)) as u32
                }
            })
            .collect();
        // Two unused columns past the used ones.
        let f = OneHotFeatures::new(n, blocks, blocks * per_block + 2, columns).unwrap();
        let g = f.renumbered_by_first_use();
        let used: std::collections::BTreeSet<u32> = f
            .columns()
            .iter()
            .copied()
            .filter(|&c| c != ABSENT)
            .collect();
        assert_eq!(g.n_columns(), used.len());
        // The same matrix up to a relabelling: entries agree exactly where they agreed.
        for (a, b) in f.columns().iter().zip(g.columns()) {
            assert_eq!(*a == ABSENT, *b == ABSENT);
        }
        for (k, (&a, &b)) in f.columns().iter().zip(g.columns()).enumerate() {
            for (&c, &d) in f.columns()[..k].iter().zip(&g.columns()[..k]) {
                assert_eq!(a == c, b == d);
            }
        }
        // New ids appear in increasing order.
        let mut seen = 0;
        for &b in g.columns().iter().filter(|&&b| b != ABSENT) {
            assert!(b <= seen);
            seen = seen.max(b + 1);
        }
        // SGD on either gives the same predictions, bit for bit.
        let y = ndarray::Array1::from_shape_fn(n, |i| (i as f64).sin());
        let sgd = Sgd::sklearn_0_17(1e-3);
        let predictions = |h: &OneHotFeatures| {
            let rows = h.sgd_rows(n, 0.5);
            let mut w = ScaledWeights::zeros(h.n_columns());
            sgd.fit(
                &mut w,
                &rows,
                y.view(),
                3,
                Some(&mut ChaCha8Rng::seed_from_u64(8)),
            );
            (0..n)
                .map(|i| w.predict(&rows, i).to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(predictions(&f), predictions(&g));
    }

    #[test]
    fn symmetric_gauss_seidel_inverts_its_dense_preconditioner() {
        // 5 rows, 3 blocks (one absent entry), penalty 0.3: build K = AᵀA + 0.3 I densely,
        // split it into D (block diagonal), L, U, and check P z = r for z = P⁻¹ r.
        let f = OneHotFeatures::new(
            5,
            3,
            7,
            vec![0, 2, 5, 1, 2, 6, 0, 3, 5, 1, 3, ABSENT, 0, 2, 6],
        )
        .unwrap();
        let compact = f.compact_columns(0..5).unwrap();
        let op = f.normal_operator(0..5, &compact);
        let c = compact.len();
        let mut k = ndarray::Array2::<f64>::zeros((c, c));
        for j in 0..c {
            let mut e = vec![0.0; c];
            e[j] = 1.0;
            let mut col = vec![0.0; c];
            op.apply(&e, 0.3, &mut col);
            for i in 0..c {
                k[[i, j]] = col[i];
            }
        }
        let block_of = |a: usize| compact.block_ends.iter().position(|&e| a < e).unwrap();
        let mut d = ndarray::Array2::<f64>::zeros((c, c));
        let mut lower = ndarray::Array2::<f64>::zeros((c, c));
        for i in 0..c {
            for j in 0..c {
                match block_of(i).cmp(&block_of(j)) {
                    std::cmp::Ordering::Equal => d[[i, j]] = k[[i, j]],
                    std::cmp::Ordering::Greater => lower[[i, j]] = k[[i, j]],
                    std::cmp::Ordering::Less => {}
                }
            }
        }
        // D is diagonal: a row has one column per block.
        for i in 0..c {
            for j in 0..c {
                if i != j {
                    assert_eq!(d[[i, j]], 0.0);
                }
            }
        }
        let diag: Vec<f64> = d.diag().to_vec();
        let r: Vec<f64> = (0..c).map(|i| (i as f64 * 0.7).sin() + 0.2).collect();
        let mut z = vec![0.0; c];
        op.symmetric_gauss_seidel(&r, &diag, &mut z);
        let d_inv = ndarray::Array2::from_diag(&d.diag().mapv(|x| 1.0 / x));
        let p = (&d + &lower).dot(&d_inv).dot(&(&d + &lower.t()));
        let pz = p.dot(&ndarray::Array1::from(z));
        for (a, b) in pz.iter().zip(&r) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
    }

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

    #[test]
    fn compact_gram_and_products_match_the_dense_matrix() {
        // 4 rows, 2 blocks; block 0 uses columns 0..3, block 1 columns 3..6; column 2 is used
        // only by row 3 (left out of the selection), column 5 by nobody.
        let f = OneHotFeatures::new(4, 2, 6, vec![0, 3, 1, 4, 0, 4, 2, 3]).unwrap();
        let compact = f.compact_columns(0..3).unwrap();
        assert_eq!(compact.block_ends, vec![2, 4]);
        assert_eq!(compact.get(2), None);
        assert_eq!(compact.original_columns(), &[0, 1, 3, 4]);
        // Dense A over rows 0..3 in compact columns [0, 1 | 3, 4].
        let a = ndarray::array![
            [1.0, 0.0, 1.0, 0.0],
            [0.0, 1.0, 0.0, 1.0],
            [1.0, 0.0, 0.0, 1.0]
        ];
        assert_eq!(f.gram(0..3, &compact), a.t().dot(&a));
        let y = ndarray::array![1.0, 2.0, 4.0];
        assert_eq!(f.transpose_times(0..3, y.view(), &compact), a.t().dot(&y));
        let v = ndarray::array![1.0, 10.0, 100.0, 1000.0];
        assert_eq!(f.times_prefix(0..3, v.view(), &compact, 2), a.dot(&v));
        assert_eq!(
            f.times_prefix(0..3, v.slice(ndarray::s![..2]), &compact, 1),
            ndarray::array![1.0, 10.0, 1.0]
        );
        let mut out = vec![0.0; 4];
        f.normal_operator(0..3, &compact)
            .apply(v.as_slice().unwrap(), 0.5, &mut out);
        let expected = a.t().dot(&a.dot(&v)) + 0.5 * &v;
        assert_eq!(ndarray::Array1::from(out), expected);
        assert_eq!(f.column_counts(0..3, &compact), vec![2.0, 1.0, 1.0, 2.0]);
        // Row 3 uses an unselected column in block 0: it contributes 0 there.
        assert_eq!(
            f.times_prefix(3..4, v.view(), &compact, 2),
            ndarray::array![100.0]
        );
    }
}
