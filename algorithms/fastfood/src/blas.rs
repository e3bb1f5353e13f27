//! The two BLAS-3 products of the marginal likelihood, through the OpenBLAS that
//! ndarray-linalg links (single-threaded under `repro`, which fixes the thread count).

use std::cell::RefCell;

use ndarray::{Array2, ArrayView2};

thread_local! {
    /// Large matrices given back by [`recycle`] on this thread, for [`zeros`] to reuse.
    static SPARE: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
}

/// Buffers kept per thread (an evaluation gives back four: Φ, ∂Φ, and two D × D or n × n).
const SPARE_BUFFERS: usize = 6;
/// Smaller matrices are left to the allocator.
const SPARE_MIN_LEN: usize = 1 << 14;

/// A `rows × cols` matrix of zeros, in memory given back earlier on this thread when a buffer
/// fits (the smallest of at least the size and at most twice it): an evaluation's matrices are
/// megabytes, and fresh ones cost a page fault per 4 KiB on first write.
pub(crate) fn zeros(rows: usize, cols: usize) -> Array2<f64> {
    let len = rows * cols;
    let reused = if len >= SPARE_MIN_LEN {
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            let best = spare
                .iter()
                .enumerate()
                .filter(|(_, v)| v.capacity() >= len && v.capacity() <= 2 * len)
                .min_by_key(|(_, v)| v.capacity())
                .map(|(i, _)| i);
            best.map(|i| spare.swap_remove(i))
        })
    } else {
        None
    };
    let v = match reused {
        Some(mut v) => {
            v.clear();
            v.resize(len, 0.0);
            v
        }
        None => vec![0.0; len],
    };
    Array2::from_shape_vec((rows, cols), v).expect("rows × cols values")
}

/// Gives a matrix's memory back for [`zeros`] to reuse on this thread.
pub(crate) fn recycle(a: Array2<f64>) {
    if a.len() < SPARE_MIN_LEN {
        return;
    }
    let (v, _) = a.into_raw_vec_and_offset();
    SPARE.with(|spare| {
        let mut spare = spare.borrow_mut();
        if spare.len() < SPARE_BUFFERS {
            spare.push(v);
        }
    });
}

fn blas_int(n: usize) -> i32 {
    i32::try_from(n).expect("matrix dimension fits in a BLAS int")
}

/// `ΦᵀΦ` (`transpose = true`, D × D) or `ΦΦᵀ` (n × n), both triangles filled (dsyrk).
pub fn gram(phi: ArrayView2<f64>, transpose: bool) -> Array2<f64> {
    let phi = phi.as_standard_layout();
    let (n, d) = phi.dim();
    let size = if transpose { d } else { n };
    let mut out = zeros(size, size);
    if n == 0 || d == 0 {
        return out;
    }
    let k = if transpose { n } else { d };
    // SAFETY: `phi` is contiguous row-major n × d (lda = d); `out` is contiguous size × size
    // (ldc = size); dsyrk reads n·d values and writes the upper triangle of `out`.
    unsafe {
        cblas_sys::cblas_dsyrk(
            cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
            cblas_sys::CBLAS_UPLO::CblasUpper,
            if transpose {
                cblas_sys::CBLAS_TRANSPOSE::CblasTrans
            } else {
                cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans
            },
            blas_int(size),
            blas_int(k),
            1.0,
            phi.as_ptr(),
            blas_int(d),
            0.0,
            out.as_mut_ptr(),
            blas_int(size),
        );
    }
    for i in 0..size {
        for j in 0..i {
            out[[i, j]] = out[[j, i]];
        }
    }
    out
}

/// `alpha · A B + beta · C` into `c` (dgemm; all row-major).
pub fn gemm(alpha: f64, a: ArrayView2<f64>, b: ArrayView2<f64>, beta: f64, c: &mut Array2<f64>) {
    let a = a.as_standard_layout();
    let b = b.as_standard_layout();
    let (m, k) = a.dim();
    let n = b.ncols();
    assert!(
        b.nrows() == k && c.dim() == (m, n) && c.is_standard_layout(),
        "internal error: gemm shapes"
    );
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: contiguous row-major A (m × k, lda = k), B (k × n, ldb = n), C (m × n, ldc = n).
    unsafe {
        cblas_sys::cblas_dgemm(
            cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
            cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
            cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
            blas_int(m),
            blas_int(n),
            blas_int(k),
            alpha,
            a.as_ptr(),
            blas_int(k.max(1)),
            b.as_ptr(),
            blas_int(n),
            beta,
            c.as_mut_ptr(),
            blas_int(n),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn gram_and_gemm_match_ndarray() {
        let p = array![[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]];
        assert_eq!(gram(p.view(), true), p.t().dot(&p));
        assert_eq!(gram(p.view(), false), p.dot(&p.t()));
        let mut c = Array2::ones((2, 2));
        gemm(2.0, p.view(), p.t(), 1.0, &mut c);
        assert_eq!(c, p.dot(&p.t()) * 2.0 + 1.0);
    }
}
