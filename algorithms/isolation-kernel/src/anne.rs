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

use crate::input::Point;

/// ψ centres (a Voronoi partitioning), stored as CSR rows of their non-zeros.
#[derive(Debug, Clone, PartialEq)]
pub struct Voronoi {
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    /// ‖z_j‖².
    sq_norms: Vec<f64>,
    /// Centres as a dense d × ψ matrix (row a holds attribute a of every centre), when small.
    dense_t: Option<Vec<f64>>,
    /// Row numbers (in the data the partitioning was built from) of the centres, in draw order.
    sample: Vec<usize>,
}

/// Largest ψ·d for which the centres are also stored densely (2 MiB of f64 per partitioning).
pub const DENSE_CENTRES_LIMIT: usize = 1 << 18;

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
            let mut m = vec![0.0; dim * psi];
            for j in 0..psi {
                for k in indptr[j]..indptr[j + 1] {
                    m[indices[k] as usize * psi + j] = values[k];
                }
            }
            m
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
        let m = self.dense_t.as_ref().expect("dense centres");
        let psi = self.sq_norms.len();
        let mut dots = vec![0.0; psi];
        for &(a, v) in nonzeros {
            let column = &m[a as usize * psi..(a as usize + 1) * psi];
            for (d, z) in dots.iter_mut().zip(column) {
                *d += v * z;
            }
        }
        let mut best = (f64::INFINITY, 0u32);
        for (j, (&sq, &dot)) in self.sq_norms.iter().zip(&dots).enumerate() {
            let score = sq - 2.0 * dot;
            if score < best.0 {
                best = (score, j as u32);
            }
        }
        best.1
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

    #[test]
    fn large_centre_sets_stay_sparse() {
        let z = Array2::from_elem((64, DENSE_CENTRES_LIMIT / 64 + 1), 1.0);
        assert!(!voronoi(&z).has_dense_centres());
    }
}
