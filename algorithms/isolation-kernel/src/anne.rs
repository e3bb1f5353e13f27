//! IK_a: a partitioning H_i is the Voronoi diagram of a subsample 𝒟_i = {z_i0 .. z_i(ψ−1)}
//! (ARX/DMKD §4.2; spec §4): θ(z) = {x : z = argmin_{z'∈𝒟_i} ‖x − z'‖₂}.
//!
//! φ_i(x) = argmin_j ‖x − z_ij‖², ties to the lowest j. Since ‖x‖² is the same for every j, the
//! arg-min is taken over `‖z_j‖² − 2⟨x, z_j⟩` with precomputed ‖z_j‖² (the sparse/GEMM form of
//! the spec): O(ψ·nnz) per point, and a sparse row gives the same bits as its densified form.
//! Centres are stored sparse (their non-zeros), so a sparse data set is never densified; when
//! ψ·d is at most [`DENSE_CENTRES_LIMIT`] they are also kept as a dense d × ψ matrix, so that a
//! point's ψ inner products are one pass of axpys over its non-zeros (vectorised across the
//! centres) instead of ψ sparse merges. Both forms add the same products in the same (increasing
//! attribute) order, so they pick the same cells.

use kernel_core::cache::{padded_stride, LineAligned};

use crate::input::Point;

/// ψ centres (a Voronoi partitioning), stored as CSR rows of their non-zeros.
#[derive(Debug, Clone, PartialEq)]
pub struct Voronoi {
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    /// ‖z_j‖².
    sq_norms: Vec<f64>,
    /// Centres as a dense d × ψ matrix (row a, at a · [`padded_stride`]`(ψ)`, holds attribute a
    /// of every centre), starting on a cache line, when small.
    dense_t: Option<LineAligned>,
    /// Row numbers (in the data the partitioning was built from) of the centres, in draw order.
    sample: Vec<usize>,
}

/// Largest ψ·d for which the centres are also stored densely (8 MiB of f64 per partitioning,
/// 9 with the rows' padding ([`padded_stride`]), 900 MiB for t = 100: a9a up to ψ = 8192,
/// ijcnn1 beyond 2^15). Above it, each point merges its non-zeros with every centre's: on a9a at ψ = 4096 (ψ·d = 503,808) that scalar path was more
/// than 10× slower than the dense one, which is why the limit was raised from 2^18.
pub const DENSE_CENTRES_LIMIT: usize = 1 << 20;

impl Voronoi {
    /// The partitioning whose centres are `points` (rows `sample` of the data), in that order.
    pub(crate) fn build<P: Point>(points: &[P], sample: Vec<usize>, dim: usize) -> Self {
        let mut indptr = vec![0];
        let (mut indices, mut values, mut sq_norms) = (Vec::new(), Vec::new(), Vec::new());
        for p in points {
            let mut sq = 0.0;
            for (a, v) in p.nonzeros() {
                indices.push(a);
                values.push(v);
                sq += v * v;
            }
            indptr.push(indices.len());
            sq_norms.push(sq);
        }
        let psi = sq_norms.len();
        let dense_t = (psi.saturating_mul(dim) <= DENSE_CENTRES_LIMIT).then(|| {
            let mut a = LineAligned::default();
            let ld = padded_stride(psi);
            let m = a.zeroed(dim * ld);
            for j in 0..psi {
                for k in indptr[j]..indptr[j + 1] {
                    m[indices[k] as usize * ld + j] = values[k];
                }
            }
            a
        });
        Self {
            indptr,
            indices,
            values,
            sq_norms,
            dense_t,
            sample,
        }
    }

    /// φ_i(x): the index j of the nearest centre (squared Euclidean distance over all
    /// coordinates, implicit zeros included), the lowest j among ties.
    pub(crate) fn cell_of<P: Point>(&self, x: &P) -> u32 {
        if self.dense_t.is_some() {
            return self.cell_of_nonzeros(&x.nonzeros());
        }
        self.cell_of_sparse(x)
    }

    /// Whether [`Self::cell_of_nonzeros`] applies (the centres are stored densely).
    pub(crate) fn has_dense_centres(&self) -> bool {
        self.dense_t.is_some()
    }

    fn cell_of_sparse<P: Point>(&self, x: &P) -> u32 {
        let mut best = (f64::INFINITY, 0u32);
        for j in 0..self.sq_norms.len() {
            let (lo, hi) = (self.indptr[j], self.indptr[j + 1]);
            let score =
                self.sq_norms[j] - 2.0 * x.dot_sparse(&self.indices[lo..hi], &self.values[lo..hi]);
            if score < best.0 {
                best = (score, j as u32);
            }
        }
        best.1
    }

    /// [`Self::cell_of`] with the dense centres: ⟨x, z_j⟩ for every j at once, accumulated over
    /// the non-zeros of x in increasing attribute order (the order of the sparse form; the extra
    /// `x_a · 0` terms add nothing).
    ///
    /// # Panics
    /// Without dense centres.
    pub(crate) fn cell_of_nonzeros(&self, nonzeros: &[(u32, f64)]) -> u32 {
        let m = self.dense_t.as_ref().expect("dense centres").values();
        let mut best = Vec::with_capacity(1);
        nearest_of_rows(
            m,
            &self.sq_norms,
            1,
            |_| nonzeros.iter().copied(),
            &mut best,
        );
        cell(best[0])
    }

    /// φ_i of every row of `block` into `out[r·stride]`: the cells of [`Self::cell_of`] (the
    /// same sums in the same order, so the same bits), a partitioning at a time over a block of
    /// rows so that its centres stay in cache. `best` is scratch space.
    pub(crate) fn cells_of_block(
        &self,
        block: &BlockNonzeros,
        best: &mut Vec<(f64, u32)>,
        out: &mut [u32],
        stride: usize,
    ) {
        match &self.dense_t {
            Some(m) => nearest_dense(m.values(), &self.sq_norms, block, best, out, stride),
            None => {
                for r in 0..block.len() {
                    let (indices, values) = block.row(r);
                    let row = crate::input::SparseRow::from_checked(indices, values);
                    out[r * stride] = self.cell_of_sparse(&row);
                }
            }
        }
    }

    /// Number of centres ψ (cells).
    pub fn n_cells(&self) -> usize {
        self.sq_norms.len()
    }

    /// Row numbers of the centres 𝒟_i in the data, in draw order (centre j is row
    /// `sample()[j]`).
    pub fn sample(&self) -> &[usize] {
        &self.sample
    }
}

/// The non-zeros of a block of rows, in increasing attribute order per row (what
/// [`Point::nonzeros`] gives), flattened: row r is `starts[r] .. starts[r + 1]`.
#[derive(Debug, Default)]
pub(crate) struct BlockNonzeros {
    starts: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl BlockNonzeros {
    /// Empties the block.
    pub(crate) fn clear(&mut self) {
        self.starts.clear();
        self.starts.push(0);
        self.indices.clear();
        self.values.clear();
    }

    /// Appends the non-zeros of `x`.
    pub(crate) fn push<P: Point>(&mut self, x: &P) {
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        for (a, v) in x.nonzeros() {
            self.indices.push(a);
            self.values.push(v);
        }
        self.starts.push(self.indices.len());
    }

    /// Rows held.
    pub(crate) fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Row r's attributes and values.
    fn row(&self, r: usize) -> (&[u32], &[f64]) {
        let (lo, hi) = (self.starts[r], self.starts[r + 1]);
        (&self.indices[lo..hi], &self.values[lo..hi])
    }
}

kernel_core::widest_vectors! {
    /// [`Voronoi::cells_of_block`] with dense centres `m` (d × ψ), compiled for the widest vector
    /// unit the processor has (the same operations in the same order at any width: no fused
    /// multiply-add, so the same bits).
    fn nearest_dense(
        m: &[f64],
        sq_norms: &[f64],
        block: &BlockNonzeros,
        best: &mut Vec<(f64, u32)>,
        out: &mut [u32],
        stride: usize,
    );
    body nearest_dense_generic;
    tier nearest_dense_avx512 = "avx512f" if "avx512f";
    tier nearest_dense_avx2 = "avx2" if "avx2";
    fallback nearest_dense_generic;
}

/// The cell of every row of `block` into `out[r·stride]` ([`nearest_of_rows`]).
#[inline(always)]
fn nearest_dense_generic(
    m: &[f64],
    sq_norms: &[f64],
    block: &BlockNonzeros,
    best: &mut Vec<(f64, u32)>,
    out: &mut [u32],
    stride: usize,
) {
    let row = |r: usize| {
        let (indices, values) = block.row(r);
        indices.iter().copied().zip(values.iter().copied())
    };
    nearest_of_rows(m, sq_norms, block.len(), row, best);
    for (r, &b) in best.iter().enumerate() {
        out[r * stride] = cell(b);
    }
}

/// No centre chosen yet (see [`nearest_of_rows`]).
const NONE: u32 = u32::MAX;

/// The cell of a [`nearest_of_rows`] result: its centre, 0 when every score was NaN.
fn cell((_, j): (f64, u32)) -> u32 {
    if j == NONE {
        0
    } else {
        j
    }
}

/// For each of `n` rows x (`row(r)`: its non-zeros in increasing attribute order), the nearest
/// of the dense centres `m` (attribute-major: row a, at a · [`padded_stride`]`(ψ)`, holds z_ja
/// for every j; starting on a cache line, so that no vector load straddles two) with squared
/// norms `sq_norms`: the arg-min of the score ‖z_j‖² − 2⟨x, z_j⟩, the lowest j on ties, into
/// `best[r] = (score, j)` ([`NONE`] when every score is NaN: a NaN score never wins).
///
/// ⟨x, z_j⟩ sums v·z_ja over the non-zeros in order, from 0 (the order of the sparse merge, so
/// the same bits; the centres' own zeros add nothing). The centres are taken 32 at a time (then
/// 16, 8, 4 and 1), and for each such tile every row of the block in turn: the tile's columns (d × 32
/// values) stay in L1 across the rows, the tile's 32 sums stay in registers across a row's
/// non-zeros, and a row's best so far is replaced only by a strictly lower score, so the lowest
/// j among equal minima is kept, as a scan of all ψ scores would (±0 compare equal in both).
#[inline(always)]
fn nearest_of_rows<I: Iterator<Item = (u32, f64)>>(
    m: &[f64],
    sq_norms: &[f64],
    n: usize,
    row: impl Fn(usize) -> I,
    best: &mut Vec<(f64, u32)>,
) {
    best.clear();
    best.resize(n, (f64::INFINITY, NONE));
    let (psi, ld) = (sq_norms.len(), padded_stride(sq_norms.len()));
    let mut scores = [0.0; 32];
    let mut j0 = 0;
    while j0 < psi {
        let width = [32, 16, 8, 4, 1]
            .into_iter()
            .find(|w| j0 + w <= psi)
            .expect("a width of 1 fits");
        for (r, b) in best.iter_mut().enumerate() {
            match width {
                32 => scores_tile::<32>(m, ld, sq_norms, row(r), j0, &mut scores),
                16 => scores_tile::<16>(m, ld, sq_norms, row(r), j0, &mut scores),
                8 => scores_tile::<8>(m, ld, sq_norms, row(r), j0, &mut scores),
                4 => scores_tile::<4>(m, ld, sq_norms, row(r), j0, &mut scores),
                _ => scores_tile::<1>(m, ld, sq_norms, row(r), j0, &mut scores),
            }
            keep_first_minimum(&scores[..width], j0, b);
        }
        j0 += width;
    }
}

/// `scores[k] = ‖z_j‖² − 2⟨x, z_j⟩` for the `T` centres j = j0 + k (see [`nearest_of_rows`];
/// `ld`: the centres' row stride).
#[inline(always)]
fn scores_tile<const T: usize>(
    m: &[f64],
    ld: usize,
    sq_norms: &[f64],
    nonzeros: impl Iterator<Item = (u32, f64)>,
    j0: usize,
    scores: &mut [f64; 32],
) {
    let mut acc = [0.0f64; T];
    for (a, v) in nonzeros {
        let start = a as usize * ld + j0;
        let column: &[f64; T] = m[start..start + T].try_into().expect("T centres");
        for (d, z) in acc.iter_mut().zip(column) {
            *d += v * z;
        }
    }
    let sq: &[f64; T] = sq_norms[j0..j0 + T].try_into().expect("T norms");
    let out: &mut [f64; T] = (&mut scores[..T]).try_into().expect("T scores");
    for k in 0..T {
        out[k] = sq[k] - 2.0 * acc[k];
    }
}

/// Replaces `best` by the tile's minimum and its first position (centre j0 + k) when that
/// minimum is strictly lower (or nothing was chosen yet). The minimum is taken over eight
/// independent lanes (min is exact, so any order gives the same value; NaN is passed over).
#[inline(always)]
fn keep_first_minimum(scores: &[f64], j0: usize, best: &mut (f64, u32)) {
    let mut lanes = [f64::INFINITY; 8];
    let mut chunks = scores.chunks_exact(8);
    for c in chunks.by_ref() {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l = l.min(v);
        }
    }
    let min = chunks
        .remainder()
        .iter()
        .chain(&lanes)
        .fold(f64::INFINITY, |m, &v| m.min(v));
    if best.1 == NONE || min < best.0 {
        if let Some(k) = scores.iter().position(|&v| v == min) {
            *best = (min, (j0 + k) as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::SparseRow;
    use ndarray::{array, Array2, ArrayView1};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn voronoi(z: &Array2<f64>) -> Voronoi {
        let points: Vec<ArrayView1<f64>> = z.rows().into_iter().collect();
        Voronoi::build(&points, (0..z.nrows()).collect(), z.ncols())
    }

    #[test]
    fn each_centre_is_its_own_cell_and_cells_are_nearest_centres() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let z = Array2::from_shape_fn((50, 6), |_| rng.random_range(-1.0..1.0));
        let v = voronoi(&z);
        assert_eq!(v.n_cells(), 50);
        for j in 0..50 {
            assert_eq!(v.cell_of(&z.row(j)), j as u32);
        }
        // New points against a brute-force arg-min of ‖x − z_j‖² by subtraction.
        for _ in 0..300 {
            let x = ndarray::Array1::from_shape_fn(6, |_| rng.random_range(-1.5..1.5));
            let brute = (0..50)
                .map(|j| (j, (&x - &z.row(j)).mapv(|d| d * d).sum()))
                .fold(
                    (0, f64::INFINITY),
                    |b, (j, d)| if d < b.1 { (j, d) } else { b },
                )
                .0;
            assert_eq!(v.cell_of(&x.view()), brute as u32);
        }
    }

    #[test]
    fn ties_go_to_the_lowest_index() {
        let z = array![[1.0, 0.0], [-1.0, 0.0], [1.0, 0.0]];
        let v = voronoi(&z);
        assert_eq!(v.cell_of(&array![0.0, 0.0].view()), 0);
        assert_eq!(v.cell_of(&array![0.0, 3.0].view()), 0);
        // The duplicate centre 2 is nobody's nearest.
        assert_eq!(v.cell_of(&z.row(2)), 0);
        assert_eq!(v.cell_of(&array![-0.5, 0.0].view()), 1);
    }

    #[test]
    fn sparse_rows_give_the_bits_of_their_dense_form() {
        let z = array![
            [0.0, 2.0, 0.0, 1.0],
            [3.0, 0.0, 0.0, 0.0],
            [0.5, 0.5, 0.5, 0.5]
        ];
        let v = voronoi(&z);
        let rows: [(&[u32], &[f64]); 4] = [
            (&[], &[]),
            (&[1, 3], &[2.0, 1.5]),
            (&[0], &[2.0]),
            (&[0, 2], &[0.1, 0.9]),
        ];
        for (indices, values) in rows {
            let sparse = SparseRow::new(indices, values, 4).unwrap();
            let mut dense = ndarray::Array1::zeros(4);
            for (&a, &x) in indices.iter().zip(values) {
                dense[a as usize] = x;
            }
            assert_eq!(v.cell_of(&sparse), v.cell_of(&dense.view()));
        }
    }

    #[test]
    fn dense_centres_pick_the_cells_of_the_sparse_merge() {
        // Sparse-ish random data with repeated values (ties) and negative entries.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let draw = |rng: &mut ChaCha8Rng| {
            if rng.random_bool(0.6) {
                0.0
            } else {
                f64::from(rng.random_range(-3i32..4)) * 0.5
            }
        };
        let z = Array2::from_shape_fn((40, 9), |_| draw(&mut rng));
        let v = voronoi(&z);
        assert!(v.has_dense_centres());
        for _ in 0..2000 {
            let x = ndarray::Array1::from_shape_fn(9, |_| draw(&mut rng));
            let (indices, values): (Vec<u32>, Vec<f64>) = x
                .iter()
                .enumerate()
                .filter(|(_, &v)| v != 0.0)
                .map(|(a, &v)| (a as u32, v))
                .unzip();
            let sparse = SparseRow::new(&indices, &values, 9).unwrap();
            let expected = v.cell_of_sparse(&x.view());
            assert_eq!(v.cell_of(&x.view()), expected);
            assert_eq!(v.cell_of(&sparse), expected);
            assert_eq!(v.cell_of_sparse(&sparse), expected);
        }
    }

    /// The block search (vectorised where the processor allows) picks the cells of the row by
    /// row search, for dense and stored-sparse centres, on rows with ties and explicit zeros.
    #[test]
    fn block_search_picks_the_cells_of_the_row_search() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let draw = |rng: &mut ChaCha8Rng| {
            if rng.random_bool(0.5) {
                0.0
            } else if rng.random_bool(0.5) {
                f64::from(rng.random_range(-3i32..4)) * 0.5
            } else {
                rng.random_range(-2.0..2.0)
            }
        };
        for (psi, d) in [(37, 11), (93, 11), (8, DENSE_CENTRES_LIMIT / 8 + 1)] {
            let z = Array2::from_shape_fn((psi, d), |_| draw(&mut rng));
            let v = voronoi(&z);
            assert_eq!(v.has_dense_centres(), d == 11);
            if d == 11 {
                assert_eq!(
                    v.dense_t.as_ref().unwrap().values().len(),
                    d * padded_stride(psi)
                );
            }
            let x = Array2::from_shape_fn((300, d), |_| draw(&mut rng));
            let mut block = BlockNonzeros::default();
            block.clear();
            for row in x.rows() {
                block.push(&row);
            }
            let (mut out, mut best) = (vec![u32::MAX; 2 * x.nrows()], Vec::new());
            v.cells_of_block(&block, &mut best, &mut out[1..], 2);
            for (i, row) in x.rows().into_iter().enumerate() {
                assert_eq!(out[2 * i + 1], v.cell_of(&row));
                // The sparse merge: an independent sum of the same terms (ψ = 37 takes the
                // search's tiles of 32, 4 and 1 centres, ψ = 93 those of 32, 16, 8, 4 and 1 with
                // padded rows).
                assert_eq!(out[2 * i + 1], v.cell_of_sparse(&row));
                assert_eq!(out[2 * i], u32::MAX);
            }
        }
    }

    /// The cell as the search chose it before the tiles: every score, their minimum with NaN
    /// passed over, the first position of it (0 when there is none).
    fn global_scan(v: &Voronoi, x: &[f64]) -> u32 {
        let psi = v.n_cells();
        let scores: Vec<f64> = (0..psi)
            .map(|j| {
                let (lo, hi) = (v.indptr[j], v.indptr[j + 1]);
                let mut dot = 0.0;
                for (a, &x_a) in x.iter().enumerate().filter(|(_, &x_a)| x_a != 0.0) {
                    let z = v.indices[lo..hi]
                        .iter()
                        .position(|&i| i as usize == a)
                        .map_or(0.0, |k| v.values[lo + k]);
                    dot += x_a * z;
                }
                v.sq_norms[j] - 2.0 * dot
            })
            .collect();
        let min = scores.iter().fold(f64::INFINITY, |m, &s| m.min(s));
        scores.iter().position(|&s| s == min).unwrap_or(0) as u32
    }

    #[test]
    fn ties_nan_and_infinities_follow_the_global_scan() {
        // Centres repeated across tiles (equal minima in different tiles), coordinates on a
        // coarse grid (many equal scores), and rows with NaN, ±∞ and −0.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let d = 5;
        let base = Array2::from_shape_fn((40, d), |_| f64::from(rng.random_range(-2i32..3)));
        for psi in [7, 37, 93] {
            let z = Array2::from_shape_fn((psi, d), |(j, a)| base[[j % 40, a]]);
            let v = voronoi(&z);
            for k in 0..400 {
                let mut x: Vec<f64> = (0..d)
                    .map(|_| f64::from(rng.random_range(-2i32..3)))
                    .collect();
                match k % 8 {
                    0 => x[k % d] = f64::NAN,
                    1 => x[k % d] = f64::INFINITY,
                    2 => x[k % d] = f64::NEG_INFINITY,
                    3 => x[k % d] = -0.0,
                    _ => {}
                }
                let nonzeros: Vec<(u32, f64)> = x
                    .iter()
                    .enumerate()
                    .filter(|(_, &x_a)| x_a != 0.0)
                    .map(|(a, &x_a)| (a as u32, x_a))
                    .collect();
                assert_eq!(
                    v.cell_of_nonzeros(&nonzeros),
                    global_scan(&v, &x),
                    "ψ {psi}, {x:?}"
                );
            }
        }
    }

    #[test]
    fn large_centre_sets_stay_sparse() {
        let z = Array2::from_elem((64, DENSE_CENTRES_LIMIT / 64 + 1), 1.0);
        assert!(!voronoi(&z).has_dense_centres());
    }
}
