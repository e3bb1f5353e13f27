//! The BLAS and LAPACK work of the marginal likelihood, through the OpenBLAS that ndarray-linalg
//! links (single-threaded under `repro`, which fixes the thread count): the Gram matrix (dsyrk),
//! the products (dgemm), Φᵀv, and K⁻¹ from a Cholesky factor (recursive triangular inverse by
//! dtrsm, then dlauum).

use std::cell::RefCell;

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

thread_local! {
    /// Large matrices given back by [`recycle`] on this thread, for [`spare`] and [`scratch`]
    /// to reuse.
    static SPARE: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
}

/// Buffers kept per thread (an evaluation gives back three: Φ, ∂Φ and K⁻¹ or A⁻¹).
const SPARE_BUFFERS: usize = 6;
/// Smaller matrices are left to the allocator.
const SPARE_MIN_LEN: usize = 1 << 14;

/// A buffer given back earlier on this thread with room for `len` values (the smallest of at
/// least the size and at most twice it), with the values it held: an evaluation's matrices are
/// megabytes, and fresh ones cost a page fault per 4 KiB on first write.
fn take_spare(len: usize) -> Option<Vec<f64>> {
    if len < SPARE_MIN_LEN {
        return None;
    }
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
}

/// An empty vector with room for `len` values, in [`take_spare`] memory when a buffer fits.
pub(crate) fn spare(len: usize) -> Vec<f64> {
    match take_spare(len) {
        Some(mut v) => {
            v.clear();
            v
        }
        None => Vec::with_capacity(len),
    }
}

/// A `rows × cols` matrix for a result written before it is read, in [`take_spare`] memory with
/// the values it held (zeros past them, or in fresh memory): the megabytes of an evaluation's
/// matrices are not zeroed first. What the caller leaves unwritten holds arbitrary values (the
/// tests poison the spare buffers with NaN to check that no such value is read).
pub(crate) fn scratch(rows: usize, cols: usize) -> Array2<f64> {
    let len = rows * cols;
    let mut v = take_spare(len).unwrap_or_default();
    v.truncate(len);
    v.resize(len, 0.0);
    Array2::from_shape_vec((rows, cols), v).expect("rows × cols values")
}

/// Replaces this thread's spare buffers by buffers of `lens` values, each filled with `value`
/// to its capacity (none: an empty pool, so that [`scratch`] gives fresh zeros): NaN shows any
/// value of [`scratch`] memory read before it is written.
#[cfg(test)]
pub(crate) fn set_spare(lens: &[usize], value: f64) {
    SPARE.with(|spare| {
        *spare.borrow_mut() = lens.iter().map(|&len| vec![value; len]).collect();
    });
}

/// Gives a matrix's memory back for [`spare`] to reuse on this thread.
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

pub(crate) fn blas_int(n: usize) -> i32 {
    i32::try_from(n).expect("matrix dimension fits in a BLAS int")
}

/// The upper triangle of `ΦᵀΦ` (`transpose = true`, D × D) or `ΦΦᵀ` (n × n) by dsyrk: all that
/// the Cholesky factorisations read (the lower triangle of the column-major matrix). Below the
/// diagonal the values are arbitrary ([`scratch`] memory, not zeroed).
pub(crate) fn gram_upper(phi: ArrayView2<f64>, transpose: bool) -> Array2<f64> {
    let phi = phi.as_standard_layout();
    let (n, d) = phi.dim();
    let size = if transpose { d } else { n };
    let mut out = scratch(size, size);
    if n == 0 || d == 0 {
        // No terms: the upper triangle is zero.
        for i in 0..size {
            out.row_mut(i).slice_mut(ndarray::s![i..]).fill(0.0);
        }
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
    out
}

/// `a[i·n + j] = a[j·n + i]` for `j < i`: the strict upper triangle of the row-major `n × n`
/// matrix `a` (its lower one, column-major) copied to the other side, in tiles.
pub(crate) fn symmetrise(a: &mut [f64], n: usize) {
    const TILE: usize = 32;
    for i0 in (0..n).step_by(TILE) {
        for j0 in (0..=i0).step_by(TILE) {
            for i in i0..(i0 + TILE).min(n) {
                for j in j0..(j0 + TILE).min(i) {
                    a[i * n + j] = a[j * n + i];
                }
            }
        }
    }
}

/// `Φᵀv` for a row-major Φ (n × D), as rows scaled and added in order: each entry the same
/// sum in the same order as ndarray's `phi.t().dot(&v)`, which walks Φ's columns with a stride
/// of D (a cache miss per term at the SMALL sets' shapes).
pub fn t_dot(phi: ArrayView2<f64>, v: ArrayView1<f64>) -> Array1<f64> {
    assert_eq!(phi.nrows(), v.len(), "internal error: t_dot shapes");
    let mut out = Array1::zeros(phi.ncols());
    let o = out.as_slice_mut().expect("a new vector");
    for (row, &vi) in phi.rows().into_iter().zip(v) {
        match row.as_slice() {
            Some(r) => o.iter_mut().zip(r).for_each(|(o, r)| *o += r * vi),
            None => o.iter_mut().zip(row).for_each(|(o, r)| *o += r * vi),
        }
    }
    out
}

/// Below this order a triangular inverse is LAPACK's dtrtri (OpenBLAS's unblocked one, whose
/// matrix-vector products are fast enough at this size; 32 measured faster than 48 and 64).
const TRTRI_LEAF: usize = 32;

/// Inverts in place the lower triangular `n × n` matrix stored column-major at `a` (leading
/// dimension `lda`), recursively: with `L = [[A, 0], [B, C]]`, `L⁻¹ = [[A⁻¹, 0], [−C⁻¹BA⁻¹,
/// C⁻¹]]`, A and C inverted first, then B overwritten by two BLAS-3 triangular products with
/// them (dtrmm). The same flops as LAPACK's dtrtri (n³/3), but as dtrmm calls: OpenBLAS's
/// dtrtri runs its diagonal blocks of up to 256 as matrix-vector products, and its dtrsm (B
/// solved against A and C before they are inverted, this function's form until 2026-12-06)
/// runs at 14 GFLOP/s at n = 278 where dtrmm runs at 33 (0.51 → 0.21 ms on a Zen 4; n = 1,024
/// 13.5 → 8.1 ms). Returns LAPACK's `info` (> 0: a zero on the diagonal).
///
/// # Safety
/// `a` points at `n` columns of `lda >= n` values each, writable.
unsafe fn lower_inverse(a: *mut f64, n: usize, lda: usize) -> i32 {
    if n <= TRTRI_LEAF {
        let (nn, ld) = (blas_int(n), blas_int(lda));
        let mut info = 0;
        lapack_sys::dtrtri_(c"L".as_ptr(), c"N".as_ptr(), &nn, a, &ld, &mut info);
        return info;
    }
    let n1 = n / 2;
    let n2 = n - n1;
    let b = a.add(n1);
    let c = a.add(n1 + n1 * lda);
    let info = lower_inverse(a, n1, lda);
    if info != 0 {
        return info;
    }
    let info = lower_inverse(c, n2, lda);
    if info != 0 {
        return info + blas_int(n1);
    }
    use cblas_sys::{CBLAS_DIAG, CBLAS_LAYOUT, CBLAS_SIDE, CBLAS_TRANSPOSE, CBLAS_UPLO};
    // B ← B A⁻¹, then B ← −C⁻¹ B.
    cblas_sys::cblas_dtrmm(
        CBLAS_LAYOUT::CblasColMajor,
        CBLAS_SIDE::CblasRight,
        CBLAS_UPLO::CblasLower,
        CBLAS_TRANSPOSE::CblasNoTrans,
        CBLAS_DIAG::CblasNonUnit,
        blas_int(n2),
        blas_int(n1),
        1.0,
        a,
        blas_int(lda),
        b,
        blas_int(lda),
    );
    cblas_sys::cblas_dtrmm(
        CBLAS_LAYOUT::CblasColMajor,
        CBLAS_SIDE::CblasLeft,
        CBLAS_UPLO::CblasLower,
        CBLAS_TRANSPOSE::CblasNoTrans,
        CBLAS_DIAG::CblasNonUnit,
        blas_int(n2),
        blas_int(n1),
        -1.0,
        c,
        blas_int(lda),
        b,
        blas_int(lda),
    );
    0
}

/// `K⁻¹` from the Cholesky factor `L` of K (`n × n`, column-major, L in the lower triangle,
/// the upper one ignored): `L⁻¹` by [`lower_inverse`], then `L⁻ᵀL⁻¹` by LAPACK's dlauum into
/// the lower triangle, copied to the upper one. Returns the symmetric inverse (both
/// triangles; its column-major storage read row-major is the same matrix).
pub(crate) fn inverse_from_cholesky(mut l: Array2<f64>) -> Result<Array2<f64>, String> {
    let n = l.nrows();
    assert!(l.ncols() == n, "internal error: inverse shapes");
    if n == 0 {
        return Ok(l);
    }
    let a = l
        .as_slice_memory_order_mut()
        .expect("internal error: a contiguous factor");
    // SAFETY: `a` holds the n × n matrix contiguously (lda = n); both routines read and write
    // its lower triangle only.
    let info = unsafe { lower_inverse(a.as_mut_ptr(), n, n) };
    if info != 0 {
        return Err(format!("the factor is singular (dtrtri info = {info})"));
    }
    let (nn, mut info) = (blas_int(n), 0);
    unsafe {
        lapack_sys::dlauum_(c"L".as_ptr(), &nn, a.as_mut_ptr(), &nn, &mut info);
    }
    if info != 0 {
        return Err(format!("dlauum returned info = {info}"));
    }
    // Column-major: (i, j) at i + j·n; the lower triangle (i > j) copied to (j, i).
    symmetrise(a, n);
    Ok(l)
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

    /// The recursive triangular inverse and dlauum give K⁻¹: K K⁻¹ = I to rounding, across the
    /// leaf size; a zero pivot is an error, not a panic.
    #[test]
    fn the_inverse_from_a_cholesky_factor_inverts_k() {
        use ndarray_linalg::Cholesky;
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for n in [1usize, 2, 5, 31, 32, 33, 47, 48, 49, 64, 65, 97, 278] {
            let b = ndarray::Array2::from_shape_fn((n, n + 3), |_| rng.random::<f64>() - 0.5);
            let k = b.dot(&b.t()) + ndarray::Array2::<f64>::eye(n) * 0.1;
            let l = k.cholesky(ndarray_linalg::UPLO::Lower).unwrap();
            // Column-major storage with junk in the (ignored) upper triangle.
            let mut columns = l.t().as_standard_layout().to_owned().reversed_axes();
            for j in 0..n {
                for i in 0..j {
                    columns[[i, j]] = 7.0;
                }
            }
            let inv = super::inverse_from_cholesky(columns).unwrap();
            let err = (k.dot(&inv) - ndarray::Array2::<f64>::eye(n))
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(err < 1e-10, "n = {n}: max |K K⁻¹ − I| = {err}");
            assert_eq!(inv, inv.t(), "n = {n}: symmetric");
        }
        let mut singular = ndarray::Array2::<f64>::eye(60);
        singular[[55, 55]] = 0.0;
        let e = super::inverse_from_cholesky(singular).unwrap_err();
        assert!(e.contains("info = 56"), "{e}");
    }

    #[test]
    fn t_dot_gives_ndarrays_bits() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for (n, d) in [(1, 1), (7, 3), (278, 512), (33, 17)] {
            let phi = ndarray::Array2::from_shape_fn((n, d), |_| rng.random::<f64>() - 0.5);
            let v = ndarray::Array1::from_shape_fn(n, |_| rng.random::<f64>() * 3.0 - 1.0);
            let ours = super::t_dot(phi.view(), v.view());
            let theirs = phi.t().dot(&v);
            let bits = |a: &ndarray::Array1<f64>| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&ours), bits(&theirs), "n = {n}, D = {d}");
            // A column-major Φ (rows not contiguous).
            let f = phi.t().as_standard_layout().to_owned();
            assert_eq!(bits(&super::t_dot(f.t(), v.view())), bits(&theirs));
        }
    }
    use ndarray::array;

    #[test]
    fn gram_and_gemm_match_ndarray() {
        let p = array![[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]];
        for (transpose, full) in [(true, p.t().dot(&p)), (false, p.dot(&p.t()))] {
            let mut g = gram_upper(p.view(), transpose);
            let size = g.nrows();
            symmetrise(g.as_slice_mut().unwrap(), size);
            assert_eq!(g, full);
        }
        let mut c = Array2::ones((2, 2));
        gemm(2.0, p.view(), p.t(), 1.0, &mut c);
        assert_eq!(c, p.dot(&p.t()) * 2.0 + 1.0);
    }
}
