//! Exact kernels.

use ndarray::{Array2, ArrayView1, ArrayView2};
use rayon::prelude::*;

use crate::params::Lifetime;
use crate::CoreError;

/// L1 ("cityblock") distance `‖x − x'‖₁`.
pub fn l1_distance(x: ArrayView1<f64>, y: ArrayView1<f64>) -> f64 {
    x.iter().zip(y.iter()).map(|(a, b)| (a - b).abs()).sum()
}

/// The Laplace kernel `k_λ(x, x') = exp(−λ‖x − x'‖₁)` with lifetime (inverse width) `λ`.
///
/// This is the kernel whose random approximations are the Mondrian kernel (Balog et al. 2016,
/// Sec. 3), random binning and random Fourier features with Cauchy frequencies (Rahimi & Recht
/// 2007).
pub fn laplace(x: ArrayView1<f64>, y: ArrayView1<f64>, lifetime: f64) -> f64 {
    (-lifetime * l1_distance(x, y)).exp()
}

/// Gram matrix `K[i, j] = exp(−λ‖x_i − z_j‖₁)` between the rows of `x` and of `z`.
pub fn laplace_gram(
    x: ArrayView2<f64>,
    z: ArrayView2<f64>,
    lifetime: f64,
) -> Result<Array2<f64>, CoreError> {
    let lifetime = Lifetime::new(lifetime)?.get();
    if x.ncols() != z.ncols() {
        return Err(CoreError::ShapeMismatch {
            what: "number of input dimensions",
            expected: x.ncols(),
            got: z.ncols(),
        });
    }
    let mut gram = Array2::zeros((x.nrows(), z.nrows()));
    gram.axis_iter_mut(ndarray::Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(i, mut row)| {
            let xi = x.row(i);
            for (j, value) in row.iter_mut().enumerate() {
                *value = laplace(xi, z.row(j), lifetime);
            }
        });
    Ok(gram)
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use ndarray::array;

    #[test]
    fn laplace_matches_hand_computation() {
        let x = array![0.0, 0.0];
        let y = array![0.3, -0.1];
        assert_relative_eq!(
            laplace(x.view(), y.view(), 10.0),
            (-4.0f64).exp(),
            epsilon = 1e-15
        );
        assert_relative_eq!(laplace(x.view(), x.view(), 10.0), 1.0);
    }

    #[test]
    fn gram_is_symmetric_with_unit_diagonal() {
        let x = array![[0.0, 0.0], [0.5, 0.2], [1.0, 1.0]];
        let k = laplace_gram(x.view(), x.view(), 2.0).unwrap();
        for i in 0..3 {
            assert_eq!(k[[i, i]], 1.0);
            for j in 0..3 {
                assert_eq!(k[[i, j]], k[[j, i]]);
            }
        }
        assert_relative_eq!(k[[0, 1]], (-1.4f64).exp(), epsilon = 1e-15);
    }

    #[test]
    fn gram_rejects_bad_input() {
        let x = array![[0.0, 0.0]];
        let z = array![[0.0]];
        assert!(laplace_gram(x.view(), z.view(), 1.0).is_err());
        assert!(laplace_gram(x.view(), x.view(), -1.0).is_err());
        assert!(laplace_gram(x.view(), x.view(), f64::NAN).is_err());
    }
}
