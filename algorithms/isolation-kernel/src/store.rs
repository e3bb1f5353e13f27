//! The stored rows of the kernel baselines (support vectors of kernel OGD, spec §7.1; landmarks
//! of NOGD, spec §7.2) and their kernel evaluations k(x_j, x) = exp(−γ Σ_a h(x_ja − x_a)), the
//! cost of these learners (|S| evaluations per prediction, R7).
//!
//! When d ≤ [`DENSE_STORE_LIMIT`] the rows are kept dense in blocks of [`LANES`] rows,
//! column-interleaved (`block[a·LANES + k]` = attribute a of row k of the block), and a query
//! (densified once if sparse) is evaluated against a block with one accumulator per row,
//! `s_k += h(z_ak − x_a)` for a = 0..d, which vectorises across the rows. Above the limit (data
//! with millions of features) every row is a [`StoredRow`] (its non-zeros) and each evaluation is
//! a sparse merge.
//!
//! Both forms give the same bits. The merge adds h(x_ja − x_a) in increasing column order and
//! skips exactly the columns where both values are zero; the dense form adds the same terms in
//! the same order plus h(±0 − ±0) = h(+0) = +0 (both h(z) = |z| and h(z) = z·z) for the skipped
//! columns. Every term is ≥ +0 and the sum starts at +0, so it is never −0 (or NaN) and adding
//! +0 leaves it unchanged; a stored −0 (kept as +0 here, dropped by the merge) or a query −0
//! gives the same difference as +0 whenever the other value is non-zero. exp(−γ·s) is then
//! computed per row as before.

use kernel_core::exp::exp_in_place;

use crate::input::Row;
use crate::ogd_kernel::{OgdKernel, StoredRow};

/// Largest dimension d for which the stored rows are kept dense (8 rows × d values = 256 KiB per
/// block at the limit).
pub(crate) const DENSE_STORE_LIMIT: usize = 4096;

/// Rows per dense block.
pub(crate) const LANES: usize = 8;

/// Stored rows x_1, x_2, .. in insertion order.
#[derive(Debug, Clone)]
pub(crate) enum RowStore {
    /// Blocks of [`LANES`] rows, `blocks[(j / LANES)·d·LANES + a·LANES + j % LANES]` = x_ja; the
    /// lanes of the last block beyond `len` are zero and never read out.
    Dense {
        dim: usize,
        len: usize,
        blocks: Vec<f64>,
    },
    /// The non-zeros of each row.
    Sparse(Vec<StoredRow>),
}

impl RowStore {
    /// An empty store for d-dimensional rows (dense when d ≤ [`DENSE_STORE_LIMIT`]).
    pub(crate) fn new(dim: usize) -> Self {
        Self::with_dense_limit(dim, DENSE_STORE_LIMIT)
    }

    /// An empty store, dense when d ≤ `limit`.
    pub(crate) fn with_dense_limit(dim: usize, limit: usize) -> Self {
        if dim <= limit {
            RowStore::Dense {
                dim,
                len: 0,
                blocks: Vec::new(),
            }
        } else {
            RowStore::Sparse(Vec::new())
        }
    }

    /// Number of stored rows.
    pub(crate) fn len(&self) -> usize {
        match self {
            RowStore::Dense { len, .. } => *len,
            RowStore::Sparse(rows) => rows.len(),
        }
    }

    /// Whether the rows are kept dense.
    #[cfg(test)]
    pub(crate) fn is_dense(&self) -> bool {
        matches!(self, RowStore::Dense { .. })
    }

    /// Appends a (checked) row of dimension d.
    pub(crate) fn push(&mut self, x: Row) {
        match self {
            RowStore::Dense { dim, len, blocks } => {
                let lane = *len % LANES;
                if lane == 0 {
                    blocks.resize(blocks.len() + *dim * LANES, 0.0);
                }
                let block = blocks.len() - *dim * LANES;
                // Only the non-zeros (as StoredRow): a −0 stays +0.
                let mut set = |a: usize, v: f64| {
                    if v != 0.0 {
                        blocks[block + a * LANES + lane] = v;
                    }
                };
                match x {
                    Row::Dense(x) => x.iter().enumerate().for_each(|(a, &v)| set(a, v)),
                    Row::Sparse(x) => x
                        .indices()
                        .iter()
                        .zip(x.values())
                        .for_each(|(&a, &v)| set(a as usize, v)),
                }
                *len += 1;
            }
            RowStore::Sparse(rows) => rows.push(StoredRow::from_row(x)),
        }
    }

    /// Calls `f(j, k(x_j, x))` for every stored row j, in order, for a (checked) row x.
    pub(crate) fn for_each_kernel(&self, kernel: OgdKernel, x: Row, mut f: impl FnMut(usize, f64)) {
        match self {
            RowStore::Dense { dim, len, blocks } => {
                if *len == 0 {
                    return;
                }
                let owned: Vec<f64>;
                let xs: &[f64] = match x {
                    Row::Dense(x) => match x.to_slice() {
                        Some(s) => s,
                        None => {
                            owned = x.to_vec();
                            &owned
                        }
                    },
                    Row::Sparse(x) => {
                        let mut v = vec![0.0; *dim];
                        for (&a, &xa) in x.indices().iter().zip(x.values()) {
                            v[a as usize] = xa;
                        }
                        owned = v;
                        &owned
                    }
                };
                match kernel {
                    OgdKernel::Laplacian { gamma } => {
                        dense_kernels(blocks, *dim, *len, xs, gamma, f64::abs, f)
                    }
                    OgdKernel::Gaussian { gamma } => {
                        dense_kernels(blocks, *dim, *len, xs, gamma, |z| z * z, f)
                    }
                }
            }
            RowStore::Sparse(rows) => {
                for (j, row) in rows.iter().enumerate() {
                    f(j, kernel.eval(row, x));
                }
            }
        }
    }
}

/// exp(−γ·s_j) with s_j = Σ_a h(x_ja − x_a), block by block; the padded lanes of the last block
/// are computed but not passed to `f`.
fn dense_kernels(
    blocks: &[f64],
    dim: usize,
    len: usize,
    x: &[f64],
    gamma: f64,
    h: impl Fn(f64) -> f64 + Copy,
    mut f: impl FnMut(usize, f64),
) {
    debug_assert_eq!(x.len(), dim);
    // −γ·s_j of every row, then their exps at once (kernel-core's vectorised exp: glibc's bits).
    let mut k = Vec::with_capacity(len.next_multiple_of(LANES));
    for block in blocks.chunks_exact(dim * LANES) {
        k.extend(block_distances(block, x, h).map(|sk| -gamma * sk));
    }
    k.truncate(len);
    exp_in_place(&mut k);
    for (j, &kj) in k.iter().enumerate() {
        f(j, kj);
    }
}

/// (Σ_a h(z_ak − x_a))_k over the d columns of one block, in column order, one independent
/// accumulator per lane.
#[inline(always)]
fn block_distances(block: &[f64], x: &[f64], h: impl Fn(f64) -> f64) -> [f64; LANES] {
    let mut s = [0.0; LANES];
    for (column, &xa) in block.chunks_exact(LANES).zip(x) {
        for (sk, &z) in s.iter_mut().zip(column) {
            *sk += h(z - xa);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::SparseRow;
    use ndarray::Array1;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A value that is often zero (+0, −0), sometimes repeated, sometimes huge (differences
    /// that overflow to ∞) or tiny (subnormal).
    fn draw(rng: &mut ChaCha8Rng) -> f64 {
        match rng.random_range(0..20) {
            0..=7 => 0.0,
            8 => -0.0,
            9 => 1.0,
            10 => 1e308 * if rng.random_bool(0.5) { 1.0 } else { -1.0 },
            11 => 1e-310,
            _ => rng.random_range(-3.0..3.0),
        }
    }

    /// The sparse form of a dense row, also storing some explicit zeros (+0, −0).
    fn sparse_form(x: &Array1<f64>, rng: &mut ChaCha8Rng) -> (Vec<u32>, Vec<f64>) {
        x.iter()
            .enumerate()
            .filter(|(_, &v)| v != 0.0 || rng.random_bool(0.2))
            .map(|(a, &v)| (a as u32, v))
            .unzip()
    }

    /// The dense blocks give the bits of the per-row sparse merge ([`OgdKernel::eval`] on a
    /// [`StoredRow`], the computation before the blocks) for every stored count (partial last
    /// blocks included), both kernels, and dense, strided and sparse queries.
    #[test]
    fn dense_blocks_give_the_bits_of_the_sparse_merge() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for dim in [1, 3, 8, 22, 123] {
            let rows: Vec<Array1<f64>> = (0..2 * LANES + 3)
                .map(|_| Array1::from_shape_fn(dim, |_| draw(&mut rng)))
                .collect();
            let sparse: Vec<(Vec<u32>, Vec<f64>)> =
                rows.iter().map(|r| sparse_form(r, &mut rng)).collect();
            let queries: Vec<Array1<f64>> = (0..30)
                .map(|_| Array1::from_shape_fn(dim, |_| draw(&mut rng)))
                .collect();
            // Wider rows whose even columns are the query: a non-contiguous view.
            let strided: Vec<ndarray::Array2<f64>> = queries
                .iter()
                .map(|q| ndarray::Array2::from_shape_fn((1, 2 * dim), |(_, c)| q[c / 2]))
                .collect();
            for kernel in [
                OgdKernel::Laplacian { gamma: 0.37 },
                OgdKernel::Gaussian { gamma: 1.9 },
            ] {
                let mut dense = RowStore::new(dim);
                let mut reference = RowStore::with_dense_limit(dim, 0);
                assert!(dense.is_dense() && !reference.is_dense());
                for (j, (r, (i, v))) in rows.iter().zip(&sparse).enumerate() {
                    // Alternate dense and sparse inserts.
                    let row = if j % 2 == 0 {
                        Row::Dense(r.view())
                    } else {
                        Row::Sparse(SparseRow::new(i, v, dim).unwrap())
                    };
                    dense.push(row);
                    reference.push(row);
                    assert_eq!(dense.len(), j + 1);
                    for (q, wide) in queries.iter().zip(&strided) {
                        let (qi, qv) = sparse_form(q, &mut rng);
                        let forms = [
                            Row::Dense(q.view()),
                            Row::Dense(wide.row(0).slice_move(ndarray::s![..;2])),
                            Row::Sparse(SparseRow::new(&qi, &qv, dim).unwrap()),
                        ];
                        let mut expected = Vec::new();
                        reference.for_each_kernel(kernel, forms[0], |k, v| {
                            assert_eq!(k, expected.len());
                            expected.push(v.to_bits());
                        });
                        assert_eq!(expected.len(), j + 1);
                        for form in forms {
                            let mut got = Vec::new();
                            dense.for_each_kernel(kernel, form, |k, v| {
                                assert_eq!(k, got.len());
                                got.push(v.to_bits());
                            });
                            assert_eq!(got, expected, "d = {dim}, {} rows", j + 1);
                            // The sparse merge itself is form-independent.
                            let mut merged = Vec::new();
                            reference
                                .for_each_kernel(kernel, form, |_, v| merged.push(v.to_bits()));
                            assert_eq!(merged, expected);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_empty_store_evaluates_nothing_and_the_limit_picks_the_form() {
        let store = RowStore::new(DENSE_STORE_LIMIT);
        assert!(store.is_dense());
        assert!(!RowStore::new(DENSE_STORE_LIMIT + 1).is_dense());
        let x = Array1::from_elem(DENSE_STORE_LIMIT, 1.0);
        store.for_each_kernel(
            OgdKernel::Gaussian { gamma: 1.0 },
            Row::Dense(x.view()),
            |_, _| panic!("no rows"),
        );
        assert_eq!(store.len(), 0);
    }
}
