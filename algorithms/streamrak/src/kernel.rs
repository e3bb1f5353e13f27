//! The Gaussian kernel of every level, FALKON and LP-KRR: k_r(a, b) = exp(−‖a − b‖² / (2r²)).

use kernel_core::exp::exp_in_place;
use ndarray::{Array2, ArrayView2};

/// Below this, exp(x) is exactly 0.0 in double precision (the statistics' banded accumulation
/// derives its reach from it).
pub(crate) const UNDERFLOW: f64 = -745.2;

/// The Gaussian kernel matrix exp(−‖a_i − b_j‖² / (2r²)) of the rows of `a` and `b`.
///
/// # Panics
/// If `a` and `b` have different numbers of columns (the crate's callers check the points'
/// dimension first).
pub fn gaussian_kernel(a: ArrayView2<f64>, b: ArrayView2<f64>, r: f64) -> Array2<f64> {
    let (n, m, d) = (a.nrows(), b.nrows(), a.ncols());
    assert_eq!(
        d,
        b.ncols(),
        "internal error: kernel of points of different dimensions"
    );
    let (a, b) = (a.as_standard_layout(), b.as_standard_layout());
    let (a, b) = (
        a.as_slice().expect("standard layout"),
        b.as_slice().expect("standard layout"),
    );
    let mut out = vec![0.0; n * m];
    if d == 0 {
        out.fill(1.0);
    } else {
        let scale = kernel_scale(r);
        for (ai, row) in a.chunks_exact(d).zip(out.chunks_exact_mut(m.max(1))) {
            kernel_row(ai, b, scale, row);
        }
    }
    Array2::from_shape_vec((n, m), out).expect("n x m values")
}

/// −1/(2r²), the factor of the squared distance in the exponent.
pub(crate) fn kernel_scale(r: f64) -> f64 {
    -0.5 / (r * r)
}

/// One kernel row: `out[j]` = exp(scale·‖x − b_j‖²) for the rows b_j (each `x.len()` > 0
/// values) of `b`, the values [`gaussian_kernel`] gives.
pub(crate) fn kernel_row(x: &[f64], b: &[f64], scale: f64, out: &mut [f64]) {
    scaled_squared_distances(x, b, scale, out);
    // glibc's exp a row at a time, vectorised (kernel-core's `exp`: 0.0 below UNDERFLOW without
    // evaluating, as exp would give).
    exp_in_place(out);
}

kernel_core::widest_vectors! {
    /// `out[j] = scale·‖x − b_j‖²`, the squares summed from 0 in coordinate order: the same
    /// operations at any vector width (no fused multiply-add), so the same bits.
    fn scaled_squared_distances(x: &[f64], b: &[f64], scale: f64, out: &mut [f64]);
    body scaled_squared_distances_generic;
    tier scaled_squared_distances_avx512 = "avx512f" if "avx512f";
    tier scaled_squared_distances_avx2 = "avx2" if "avx2";
    fallback scaled_squared_distances_generic;
}

/// [`scaled_squared_distances`], with the loop over the coordinates unrolled for one to four
/// of them (the rows then vectorise).
#[inline(always)]
fn scaled_squared_distances_generic(x: &[f64], b: &[f64], scale: f64, out: &mut [f64]) {
    match x.len() {
        1 => fixed_dimension::<1>(x, b, scale, out),
        2 => fixed_dimension::<2>(x, b, scale, out),
        3 => fixed_dimension::<3>(x, b, scale, out),
        4 => fixed_dimension::<4>(x, b, scale, out),
        d => {
            for (bj, o) in b.chunks_exact(d).zip(out.iter_mut()) {
                let mut d2 = 0.0;
                for (u, v) in x.iter().zip(bj) {
                    d2 += (u - v) * (u - v);
                }
                *o = scale * d2;
            }
        }
    }
}

#[inline(always)]
fn fixed_dimension<const D: usize>(x: &[f64], b: &[f64], scale: f64, out: &mut [f64]) {
    let x: [f64; D] = std::array::from_fn(|k| x[k]);
    for (bj, o) in b.chunks_exact(D).zip(out.iter_mut()) {
        let mut d2 = 0.0;
        for k in 0..D {
            d2 += (x[k] - bj[k]) * (x[k] - bj[k]);
        }
        *o = scale * d2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Skipping exp below the cutoff changes no entry: exp is already exactly 0 there.
    #[test]
    fn the_underflow_cutoff_changes_no_kernel_value() {
        assert_eq!(UNDERFLOW.exp(), 0.0);
        let a = ndarray::array![[0.0], [1.0]];
        let b = ndarray::array![[0.0], [0.5], [3.0]];
        let r = 0.05;
        let k = gaussian_kernel(a.view(), b.view(), r);
        for i in 0..2 {
            for j in 0..3 {
                let d: f64 = a[[i, 0]] - b[[j, 0]];
                assert_eq!(k[[i, j]], (-d * d / (2.0 * r * r)).exp());
            }
        }
    }
}
