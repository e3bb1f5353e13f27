//! Random Fourier features for the Laplace kernel.
//!
//! The Laplace kernel factorises over dimensions, `Π_d e^{−λ|Δ_d|}`, and the Fourier transform of
//! `e^{−λ|Δ|}` is the Cauchy density with scale λ. With `Ω = λ·Γ`, `Γ` a `D × R` matrix of
//! standard Cauchy draws, `z(x) = [cos(xᵀΩ), sin(xᵀΩ)] ∈ ℝ^{2R}` (no random phase, no √2) gives
//! `z(x)·z(x')/R = (1/R) Σ_r cos(ω_rᵀ(x − x'))`, unbiased for the kernel with diagonal exactly 1.

use kernel_core::trig::sin_cos;
use kernel_core::{CoreError, DenseFeatures, FeatureMap, Features};
use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayView2};
use rand::Rng;
use rand_distr::{Cauchy, Distribution};

use crate::error::{check_count, check_input, FeatureError};
use kernel_core::Lifetime;

/// Reusable memory of [`RandomFourierFeatures::transform_into`]: the projection `XΩ` and the
/// features `z` (read them after the call).
#[derive(Debug, Clone)]
pub struct FourierBuffers {
    projection: Array2<f64>,
    /// The features of the last call (N × 2R).
    pub z: Array2<f64>,
}

impl Default for FourierBuffers {
    fn default() -> Self {
        Self {
            projection: Array2::zeros((0, 0)),
            z: Array2::zeros((0, 0)),
        }
    }
}

/// A draw of R random frequencies for the Laplace kernel with lifetime λ.
#[derive(Debug, Clone, PartialEq)]
pub struct RandomFourierFeatures {
    /// `Ω` (D × R), column r is frequency `ω_r`.
    omega: Array2<f64>,
}

impl RandomFourierFeatures {
    /// Draws `n_frequencies` (R) frequencies for `dim`-dimensional inputs. Draw order: row-major
    /// over `(d, r)`.
    pub fn sample<R: Rng + ?Sized>(
        dim: usize,
        n_frequencies: usize,
        lifetime: f64,
        rng: &mut R,
    ) -> Result<Self, FeatureError> {
        check_count("dimension", dim)?;
        check_count("n_frequencies", n_frequencies)?;
        let lifetime = Lifetime::new(lifetime)?.get();
        let cauchy = Cauchy::new(0.0, 1.0).expect("unit Cauchy is valid");
        let omega = Array2::from_shape_fn((dim, n_frequencies), |_| lifetime * cauchy.sample(rng));
        Ok(Self { omega })
    }

    /// Number of frequencies R (the map has 2R features).
    pub fn n_frequencies(&self) -> usize {
        self.omega.ncols()
    }

    /// The frequencies `Ω` (D × R).
    pub fn omega(&self) -> ArrayView2<'_, f64> {
        self.omega.view()
    }

    /// `Z = [cos(XΩ), sin(XΩ)]` (N × 2R), unscaled: frequency r owns columns r and R + r.
    /// The trigonometry is [`kernel_core::trig::sin_cos`] (vectorised, within 1 ulp of libm),
    /// row by row on the projection `XΩ`.
    pub fn transform(&self, x: ArrayView2<f64>) -> Result<Array2<f64>, FeatureError> {
        let mut buffers = FourierBuffers::default();
        self.transform_into(x, &mut buffers)?;
        Ok(buffers.z)
    }

    /// [`Self::transform`] into `buffers.z`, reusing the buffers' memory when the shapes are
    /// those of the previous call (a search drawing fresh features at every width allocates,
    /// and faults in, 60 MB per evaluation otherwise).
    pub fn transform_into(
        &self,
        x: ArrayView2<f64>,
        buffers: &mut FourierBuffers,
    ) -> Result<(), FeatureError> {
        check_input(x, self.omega.nrows())?;
        let (n, r) = (x.nrows(), self.n_frequencies());
        let FourierBuffers { projection, z } = buffers;
        if projection.dim() != (n, r) {
            *projection = Array2::zeros((n, r));
        }
        if z.dim() != (n, 2 * r) {
            *z = Array2::zeros((n, 2 * r));
        }
        general_mat_mul(1.0, &x, &self.omega, 0.0, projection);
        for (p, mut row) in projection.rows().into_iter().zip(z.rows_mut()) {
            let row = row.as_slice_mut().expect("a standard-layout buffer");
            let (cos, sin) = row.split_at_mut(r);
            sin_cos(p.as_slice().expect("a standard-layout buffer"), sin, cos);
        }
        Ok(())
    }

    /// The features of `x` in blocks, frequency r owning columns `2r` (`cos(ω_rᵀx)`) and
    /// `2r + 1` (`sin(ω_rᵀx)`): `block_ends = [2, 4, …, 2R]`. The same values as
    /// [`Self::transform`], columns interleaved so that a prefix of R blocks is the map of
    /// order R.
    pub fn dense_features(&self, x: ArrayView2<f64>) -> Result<DenseFeatures, FeatureError> {
        let r = self.n_frequencies();
        let blocked = self.transform(x)?;
        let mut z = Array2::zeros((x.nrows(), 2 * r));
        for (from, mut to) in blocked.rows().into_iter().zip(z.rows_mut()) {
            for k in 0..r {
                to[2 * k] = from[k];
                to[2 * k + 1] = from[r + k];
            }
        }
        DenseFeatures::uniform(z, 2)
    }

    /// `max_ij |K̂_R − K_ij|` for every prefix `R = 1..=n_frequencies` of this draw, where
    /// `K̂_R = (1/R) Σ_{r<R} cos(ω_rᵀ(x_i − x_j))` and `exact` is the kernel on the rows of `x`
    /// ([`Features::prefix_max_errors`] of [`Self::dense_features`]).
    pub fn prefix_max_errors(
        &self,
        x: ArrayView2<f64>,
        exact: ArrayView2<f64>,
    ) -> Result<Vec<f64>, FeatureError> {
        Features::Dense(self.dense_features(x)?).prefix_max_errors(exact)
    }
}

impl FeatureMap for RandomFourierFeatures {
    /// The R frequencies.
    fn n_blocks(&self) -> usize {
        self.n_frequencies()
    }

    /// [`RandomFourierFeatures::dense_features`].
    fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError> {
        Ok(Features::Dense(self.dense_features(x)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_core::kernel::laplace;
    use ndarray::array;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn estimate_converges_to_laplace_kernel() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let lifetime = 2.0;
        let n_frequencies = 40_000;
        let map = RandomFourierFeatures::sample(2, n_frequencies, lifetime, &mut rng).unwrap();
        let x = array![[0.0, 0.0], [0.05, 0.0], [0.2, 0.1], [0.5, 0.4], [1.0, 1.0]];
        let z = map.transform(x.view()).unwrap();
        let r = n_frequencies as f64;
        for j in 0..x.nrows() {
            let estimate = z.row(0).dot(&z.row(j)) / r;
            let exact = laplace(x.row(0), x.row(j), lifetime);
            // Each term cos(ωΔ) has variance (1 + k(2Δ))/2 − k(Δ)² <= 1/2.
            let standard_error = (0.5 / r).sqrt();
            assert!(
                (estimate - exact).abs() < 4.0 * standard_error,
                "pair {j}: estimate {estimate}, exact {exact}, se {standard_error}"
            );
        }
        assert!((z.row(3).dot(&z.row(3)) / r - 1.0).abs() < 1e-12);
    }

    #[test]
    fn prefix_errors_are_bit_identical_to_the_original_formula() {
        // The formula before the errors went through `Features`: on the [cos | sin] layout of
        // `transform`, block k adds `ci·z_j,k + si·z_j,R+k` to the running sum in one addition.
        let original = |map: &RandomFourierFeatures, x: ArrayView2<f64>, exact: ArrayView2<f64>| {
            let z = map.transform(x).unwrap();
            let r = map.n_frequencies();
            kernel_core::approximation::prefix_max_errors(exact, r, |k, i, row| {
                let (ci, si) = (z[[i, k]], z[[i, r + k]]);
                for (j, value) in row.iter_mut().enumerate() {
                    *value += ci * z[[j, k]] + si * z[[j, r + k]];
                }
            })
            .unwrap()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        for (n, dim, r, lifetime) in [(30, 3, 40, 1.5), (57, 5, 13, 0.3), (8, 1, 200, 7.0)] {
            let x = Array2::from_shape_fn((n, dim), |_| rng.random_range(-2.0..2.0));
            let exact =
                Array2::from_shape_fn((n, n), |(i, j)| laplace(x.row(i), x.row(j), lifetime));
            let map = RandomFourierFeatures::sample(dim, r, lifetime, &mut rng).unwrap();
            let new = map.prefix_max_errors(x.view(), exact.view()).unwrap();
            let old = original(&map, x.view(), exact.view());
            assert_eq!(new.len(), r);
            let bits = |v: &[f64]| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&new), bits(&old));
        }
    }

    #[test]
    fn feature_map_interleaves_cos_and_sin_per_frequency() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let map = RandomFourierFeatures::sample(3, 6, 1.0, &mut rng).unwrap();
        let x = Array2::from_shape_fn((5, 3), |_| rng.random_range(-1.0..1.0));
        let features = map.features(x.view()).unwrap();
        assert_eq!((features.n_rows(), features.n_blocks()), (5, 6));
        let Features::Dense(dense) = features else {
            panic!("Fourier features are dense")
        };
        assert_eq!(dense.block_ends(), &[2, 4, 6, 8, 10, 12]);
        for i in 0..5 {
            for r in 0..6 {
                let p: f64 = (0..3).map(|d| x[[i, d]] * map.omega()[[d, r]]).sum();
                assert!((dense.values()[[i, 2 * r]] - p.cos()).abs() < 1e-12);
                assert!((dense.values()[[i, 2 * r + 1]] - p.sin()).abs() < 1e-12);
            }
        }
        let boxed: Box<dyn FeatureMap> = Box::new(map);
        assert_eq!(boxed.n_blocks(), 6);
        assert!(boxed.features(ndarray::array![[1.0, 2.0]].view()).is_err());
    }

    #[test]
    fn rejects_bad_parameters() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert!(RandomFourierFeatures::sample(0, 5, 1.0, &mut rng).is_err());
        assert!(RandomFourierFeatures::sample(2, 0, 1.0, &mut rng).is_err());
        assert!(RandomFourierFeatures::sample(2, 5, -1.0, &mut rng).is_err());
        let map = RandomFourierFeatures::sample(2, 5, 1.0, &mut rng).unwrap();
        assert!(map.transform(array![[1.0]].view()).is_err());
        assert!(map.transform(array![[1.0, f64::NAN]].view()).is_err());
    }
}
