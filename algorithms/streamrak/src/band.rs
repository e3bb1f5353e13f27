//! Landmarks ordered along one coordinate, for the banded sums of the statistics and the
//! predictions: the Gaussian kernel k_r(x, λ) = exp(−‖x − λ‖²/(2r²)) is exactly 0.0 in double
//! precision once its exponent is below −745.2 (the kernel skips exp there), that is once
//! ‖x − λ‖ > √1490.4·r ≈ 38.6 r. With the landmarks sorted along their widest coordinate a, the
//! landmarks whose coordinate a lies within that reach of x's (its window, a contiguous range)
//! hold every non-zero entry of x's kernel row: |x_a − λ_a| ≤ ‖x − λ‖.

use ndarray::{Array2, ArrayView2, Axis};

use crate::kernel::{kernel_row, kernel_scale, UNDERFLOW};

/// Relative margin on the reach, far above the rounding of the distances (a few ulps).
const REACH_MARGIN: f64 = 1e-6;

/// The order of a set of landmarks along one coordinate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Order {
    /// The sort coordinate a: the landmarks' widest (ties: the first).
    pub axis: usize,
    /// Distance along a beyond which every kernel entry is exactly 0.0 (with a margin).
    pub reach: f64,
    /// Sorted landmark coordinates a (ascending).
    pub keys: Vec<f64>,
}

impl Order {
    /// The order of finite `landmarks` (one per row) for bandwidth r, with the permutation
    /// (`perm[s]`: the index of the landmark at sorted position s); `None` where banding does
    /// not apply: no coordinate, fewer than two landmarks, or r² not a normal number (where
    /// the reach would not be exact).
    pub fn new(landmarks: ArrayView2<f64>, bandwidth: f64) -> Option<(Vec<usize>, Self)> {
        let (m, d) = landmarks.dim();
        let reach = (-2.0 * UNDERFLOW).sqrt() * bandwidth * (1.0 + REACH_MARGIN);
        if d == 0 || m < 2 || !(bandwidth * bandwidth).is_normal() || !reach.is_finite() {
            return None;
        }
        let spread = |j: usize| {
            let (lo, hi) = landmarks
                .column(j)
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                });
            hi - lo
        };
        let axis = (1..d).fold(0, |best, j| if spread(j) > spread(best) { j } else { best });
        let mut perm: Vec<usize> = (0..m).collect();
        perm.sort_by(|&a, &b| {
            landmarks[[a, axis]]
                .total_cmp(&landmarks[[b, axis]])
                .then(a.cmp(&b))
        });
        let keys = perm.iter().map(|&i| landmarks[[i, axis]]).collect();
        Some((perm, Self { axis, reach, keys }))
    }

    /// The sorted positions `lo..hi` of the landmarks within reach of points whose coordinate
    /// a lies in [`low`, `high`]: every landmark outside has |fl(x_a − λ_a)| > reach for each
    /// such point (fl(λ_a − x_a) is monotone in both), so all its kernel entries are 0.0.
    pub fn window(&self, low: f64, high: f64) -> (usize, usize) {
        let lo = self.keys.partition_point(|&l| l - low < -self.reach);
        let hi = self.keys.partition_point(|&l| l - high <= self.reach);
        (lo, hi.max(lo))
    }
}

/// A kernel expansion f(x) = Σ_j α_j k_r(x, λ_j) with its landmarks in [`Order`]: a point's
/// value sums its window only (the other terms are exactly 0).
#[derive(Debug, Clone)]
pub(crate) struct BandedExpansion {
    sorted: Array2<f64>,
    alpha: Array2<f64>,
    order: Option<Order>,
    scale: f64,
}

impl BandedExpansion {
    /// The expansion with landmarks `landmarks` (m × d), coefficients `alpha` (m × p) and
    /// bandwidth r.
    pub fn new(landmarks: ArrayView2<f64>, alpha: ArrayView2<f64>, bandwidth: f64) -> Self {
        let (sorted, alpha, order) = match Order::new(landmarks, bandwidth) {
            Some((perm, order)) => (
                landmarks.select(Axis(0), &perm),
                alpha.select(Axis(0), &perm),
                Some(order),
            ),
            None => (
                landmarks.as_standard_layout().into_owned(),
                alpha.as_standard_layout().into_owned(),
                None,
            ),
        };
        Self {
            sorted,
            alpha,
            order,
            scale: kernel_scale(bandwidth),
        }
    }

    /// Writes f(x) into `out` (p values): the window's terms in order, from 0; `k` is scratch.
    pub fn value(&self, x: &[f64], k: &mut Vec<f64>, out: &mut [f64]) {
        let (m, d, p) = (self.sorted.nrows(), self.sorted.ncols(), self.alpha.ncols());
        let (lo, hi) = match &self.order {
            Some(order) => order.window(x[order.axis], x[order.axis]),
            None => (0, m),
        };
        k.clear();
        k.resize(hi - lo, 1.0);
        if d > 0 {
            let sorted = self.sorted.as_slice().expect("standard layout");
            kernel_row(x, &sorted[lo * d..hi * d], self.scale, k);
        }
        let alpha = &self.alpha.as_slice().expect("standard layout")[lo * p..hi * p];
        match p {
            1 => window_sum::<1>(k, alpha, out),
            2 => window_sum::<2>(k, alpha, out),
            3 => window_sum::<3>(k, alpha, out),
            4 => window_sum::<4>(k, alpha, out),
            _ => {
                out.fill(0.0);
                for (kj, a) in k.iter().zip(alpha.chunks_exact(p)) {
                    if *kj != 0.0 {
                        for (o, a) in out.iter_mut().zip(a) {
                            *o += kj * a;
                        }
                    }
                }
            }
        }
    }

    /// f(x), one row per point (the columns of `x` checked by the caller).
    pub fn predict(&self, x: ArrayView2<f64>) -> Array2<f64> {
        let p = self.alpha.ncols();
        let mut out = Array2::zeros((x.nrows(), p));
        let mut k = Vec::new();
        let mut point = Vec::with_capacity(x.ncols());
        for (row, mut o) in x.rows().into_iter().zip(out.rows_mut()) {
            point.clear();
            point.extend(row.iter().copied());
            self.value(&point, &mut k, o.as_slice_mut().expect("a contiguous row"));
        }
        out
    }
}

/// `out = Σ_j k_j α_j` over the window's rows of α (P values each), the terms in order from 0,
/// skipping the zero entries: the sums of P targets kept in registers (a sum kept in `out`
/// would pass through memory at every term: a store-to-load chain of about twice an add's
/// latency); the same additions in the same order, so the same bits.
fn window_sum<const P: usize>(k: &[f64], alpha: &[f64], out: &mut [f64]) {
    let mut sum = [0.0; P];
    for (kj, a) in k.iter().zip(alpha.chunks_exact(P)) {
        if *kj != 0.0 {
            for (s, a) in sum.iter_mut().zip(a) {
                *s += kj * a;
            }
        }
    }
    out.copy_from_slice(&sum);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::gaussian_kernel;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The banded value of an expansion is the dense product k(x)ᵀα (every kernel entry, an
    /// ndarray product) to rounding, in 1-D and 3-D, from all entries non-zero to almost none;
    /// also for a landmark set that cannot be ordered (one landmark).
    #[test]
    fn banded_values_equal_the_dense_product() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for (d, m, r) in [(1, 200, 0.3), (1, 200, 1e-3), (3, 150, 0.05), (2, 1, 0.01)] {
            let landmarks = Array2::from_shape_fn((m, d), |_| rng.random::<f64>());
            let alpha = Array2::from_shape_fn((m, 2), |_| rng.random_range(-50.0..50.0));
            let x = Array2::from_shape_fn((500, d), |_| rng.random::<f64>());
            let banded = BandedExpansion::new(landmarks.view(), alpha.view(), r);
            assert_eq!(banded.order.is_some(), m > 1);
            let want = gaussian_kernel(x.view(), landmarks.view(), r).dot(&alpha);
            let got = banded.predict(x.view());
            let scale = alpha.iter().fold(0.0_f64, |a, v| a.max(v.abs())) * m as f64;
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-13 * scale, "d {d} r {r}: {g} vs {w}");
            }
        }
    }
}
