//! The streamed sufficient statistics of one level (spec §5): with k(x) = (k_r(x, λ_j))_j over
//! the level's m landmarks, KᵀK = Σ k(x_i)k(x_i)ᵀ (m × m) and Z = Σ k(x_i)(y_i − f_{l−1}(x_i))ᵀ
//! (m × p) over the n rows seen; only these (and a bounded buffer upstream) are kept, so memory
//! does not grow with the stream. Adding one row at a time also gives the convergence measures
//! ΔK = ‖KᵀK_{n−1}/(n−1) − KᵀK_n/n‖_∞ (largest absolute row sum) and ΔZ = ‖Z_{n−1}/(n−1) −
//! Z_n/n‖₂ (spectral norm; the vector norm for one target; spec D7).

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};
use ndarray_linalg::{Eigh, UPLO};

use kernel_core::error::{at_least_one, check_finite, positive};

use crate::error::StreamError;
use crate::kernel::gaussian_kernel;

/// Rows per block when a batch is added (the authors' code: 10,000).
pub const CHUNK: usize = 10_000;

/// KᵀK, Z and n of one level.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelStatistics {
    landmarks: Array2<f64>,
    bandwidth: f64,
    ktk: Array2<f64>,
    z: Array2<f64>,
    n: usize,
}

impl LevelStatistics {
    /// Empty statistics for the landmarks (one per row) and bandwidth r, with `targets` outputs.
    pub fn new(
        landmarks: Array2<f64>,
        bandwidth: f64,
        targets: usize,
    ) -> Result<Self, StreamError> {
        if !(bandwidth.is_finite() && bandwidth > 0.0) {
            return Err(StreamError::InvalidParameter {
                name: "bandwidth",
                value: bandwidth.to_string(),
                expected: "a finite radius > 0",
            });
        }
        let m = landmarks.nrows();
        Ok(Self {
            landmarks,
            bandwidth,
            ktk: Array2::zeros((m, m)),
            z: Array2::zeros((m, targets)),
            n: 0,
        })
    }

    fn check(&self, x: ArrayView2<f64>, residual: ArrayView2<f64>) -> Result<(), StreamError> {
        if x.ncols() != self.landmarks.ncols() {
            return Err(StreamError::shape(
                "columns of the points vs the landmarks'",
                self.landmarks.ncols(),
                x.ncols(),
            ));
        }
        if residual.ncols() != self.z.ncols() {
            return Err(StreamError::shape(
                "targets per point vs the level's",
                self.z.ncols(),
                residual.ncols(),
            ));
        }
        if x.nrows() != residual.nrows() {
            return Err(StreamError::shape(
                "rows of the targets vs the points'",
                x.nrows(),
                residual.nrows(),
            ));
        }
        check_finite("points", x)?;
        check_finite("targets", residual)
    }

    /// Adds rows (x_i, y_i − f_{l−1}(x_i)) in blocks of [`CHUNK`].
    pub fn add(
        &mut self,
        x: ArrayView2<f64>,
        residual: ArrayView2<f64>,
    ) -> Result<(), StreamError> {
        self.check(x, residual)?;
        for start in (0..x.nrows()).step_by(CHUNK) {
            let end = (start + CHUNK).min(x.nrows());
            let k = gaussian_kernel(
                x.slice(s![start..end, ..]),
                self.landmarks.view(),
                self.bandwidth,
            );
            add_gram(&mut self.ktk, &k);
            self.z += &k.t().dot(&residual.slice(s![start..end, ..]));
        }
        self.n += x.nrows();
        Ok(())
    }

    /// Adds one row and returns (ΔK, ΔZ); `None` for the first row (no previous mean).
    pub fn add_one(
        &mut self,
        x: ArrayView1<f64>,
        residual: ArrayView1<f64>,
    ) -> Result<Option<(f64, f64)>, StreamError> {
        let xr = x.insert_axis(Axis(0));
        let rr = residual.insert_axis(Axis(0));
        self.check(xr, rr)?;
        let k: Array1<f64> = gaussian_kernel(xr, self.landmarks.view(), self.bandwidth)
            .row(0)
            .to_owned();
        let n_before = self.n as f64;
        let n = n_before + 1.0;
        let first = self.n == 0;
        // ΔK = ‖S_n − S_{n−1}‖_∞ with S = sum / count, S_n − S_{n−1} = (k kᵀ − S_{n−1}) / n: its
        // row sums are taken while k kᵀ is added in place (no m × m temporary).
        let m = k.len();
        let mut dk = 0.0_f64;
        for i in 0..m {
            let mut row_sum = 0.0;
            let mut row = self.ktk.row_mut(i);
            for j in 0..m {
                let kk = k[i] * k[j];
                if !first {
                    row_sum += (kk - row[j] / n_before).abs();
                }
                row[j] += kk;
            }
            dk = dk.max(row_sum / n);
        }
        let kz = outer(&k, &residual.to_owned());
        let deltas = (!first).then(|| {
            let dz = (&kz - &(&self.z / n_before)) / n;
            (dk, spectral_norm(&dz))
        });
        self.z += &kz;
        self.n += 1;
        Ok(deltas)
    }

    /// Rows seen n.
    pub fn rows(&self) -> usize {
        self.n
    }

    /// KᵀK.
    pub fn ktk(&self) -> &Array2<f64> {
        &self.ktk
    }

    /// Z.
    pub fn z(&self) -> &Array2<f64> {
        &self.z
    }

    /// The landmarks, one per row.
    pub fn landmarks(&self) -> &Array2<f64> {
        &self.landmarks
    }

    /// The level's bandwidth r.
    pub fn bandwidth(&self) -> f64 {
        self.bandwidth
    }
}

/// The stopping rule's constants (spec §5 table).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConvergenceParams {
    /// ΔK threshold (`conv_KnmTKnm_thr`).
    pub k_threshold: f64,
    /// ΔZ threshold (`conv_Zm_thr`).
    pub z_threshold: f64,
    /// Consecutive points under both thresholds (`track_length_conv_est`, 100).
    pub track_length: usize,
    /// Points buffered before checking (`interval_length_conv_est`).
    pub interval: usize,
    /// Fewest rows a level is fitted with (`lowlim_ntrp`, 30,000).
    pub lower_limit: usize,
    /// Rows after which a level is fitted even without convergence (`uplim_ntrp`, a count).
    pub upper_limit: usize,
}

impl ConvergenceParams {
    /// Checks every constant against its domain: thresholds > 0, `track_length` and `interval`
    /// at least 1, `upper_limit` not below `lower_limit`.
    pub fn check(&self) -> Result<(), StreamError> {
        positive("k_threshold", self.k_threshold)?;
        positive("z_threshold", self.z_threshold)?;
        at_least_one("track_length", self.track_length)?;
        at_least_one("interval", self.interval)?;
        if self.upper_limit < self.lower_limit {
            return Err(StreamError::invalid(
                "upper_limit",
                self.upper_limit,
                "at least lower_limit",
            ));
        }
        Ok(())
    }
}

/// A level collecting its statistics from the stream (spec §5 steps 3-4): points are buffered
/// (at most `interval` + 1 rows are held), then added in one block and checked one at a time
/// until ΔK and ΔZ stay under their thresholds for `track_length` points in a row (converged)
/// or one check fails (buffer again).
#[derive(Debug, Clone)]
pub struct LevelCollector {
    stats: LevelStatistics,
    params: ConvergenceParams,
    buffer_x: Vec<f64>,
    buffer_r: Vec<f64>,
    checking: bool,
    streak: usize,
    converged: bool,
}

impl LevelCollector {
    pub fn new(stats: LevelStatistics, params: ConvergenceParams) -> Self {
        Self {
            stats,
            params,
            buffer_x: Vec::new(),
            buffer_r: Vec::new(),
            checking: false,
            streak: 0,
            converged: false,
        }
    }

    /// Feeds one streamed (x, y − f_{l−1}(x)); returns whether the level is ready to be fitted:
    /// converged with more than `lower_limit` rows, or more than `upper_limit` rows.
    pub fn push(&mut self, x: &[f64], residual: &[f64]) -> Result<bool, StreamError> {
        let (d, p) = (self.stats.landmarks.ncols(), self.stats.z.ncols());
        if x.len() != d {
            return Err(StreamError::shape(
                "coordinates of a point vs the landmarks'",
                d,
                x.len(),
            ));
        }
        if residual.len() != p {
            return Err(StreamError::shape(
                "targets of a point vs the level's",
                p,
                residual.len(),
            ));
        }
        if self.converged {
            // Converged but not yet above the lower limit: keep adding.
            self.stats
                .add_one(ArrayView1::from(x), ArrayView1::from(residual))?;
        } else if self.checking {
            let deltas = self
                .stats
                .add_one(ArrayView1::from(x), ArrayView1::from(residual))?;
            let (dk, dz) = deltas.unwrap_or((f64::INFINITY, f64::INFINITY));
            if dk <= self.params.k_threshold && dz <= self.params.z_threshold {
                self.streak += 1;
                self.converged = self.streak >= self.params.track_length;
            } else {
                self.checking = false;
                self.streak = 0;
            }
        } else {
            self.buffer_x.extend_from_slice(x);
            self.buffer_r.extend_from_slice(residual);
            if self.buffer_x.len() / d > self.params.interval {
                self.flush()?;
                self.checking = true;
            }
        }
        Ok(self.ready())
    }

    /// Adds the buffered rows to the statistics (also at the end of the stream).
    pub fn flush(&mut self) -> Result<(), StreamError> {
        let (d, p) = (self.stats.landmarks.ncols(), self.stats.z.ncols());
        let rows = self.buffer_x.len() / d;
        let x = ArrayView2::from_shape((rows, d), &self.buffer_x).expect("rows of d values");
        let r = ArrayView2::from_shape((rows, p), &self.buffer_r).expect("rows of p values");
        self.stats.add(x, r)?;
        self.buffer_x.clear();
        self.buffer_r.clear();
        Ok(())
    }

    /// Whether the level may be fitted now.
    pub fn ready(&self) -> bool {
        let n = self.stats.rows();
        n > self.params.lower_limit && (self.converged || n > self.params.upper_limit)
    }

    /// Whether the convergence test has passed.
    pub fn converged(&self) -> bool {
        self.converged
    }

    /// Rows held in the buffer (at most `interval` + 1).
    pub fn buffered(&self) -> usize {
        self.buffer_x.len() / self.stats.landmarks.ncols()
    }

    /// The statistics so far.
    pub fn statistics(&self) -> &LevelStatistics {
        &self.stats
    }
}

/// `ktk += kᵀk` for a block `k` of kernel rows (n × m): BLAS `dsyrk` on the upper triangle
/// (half the flops of a product), then mirrored, so `ktk` stays a full symmetric matrix.
fn add_gram(ktk: &mut Array2<f64>, k: &Array2<f64>) {
    let (n, m) = k.dim();
    if n == 0 || m == 0 {
        return;
    }
    assert!(
        ktk.dim() == (m, m) && ktk.is_standard_layout() && k.is_standard_layout(),
        "internal error: Gram block shapes"
    );
    let (n_i, m_i) = (
        i32::try_from(n).expect("block rows fit in a BLAS int"),
        i32::try_from(m).expect("landmarks fit in a BLAS int"),
    );
    // SAFETY: both matrices are contiguous row-major: `k` is n × m (lda = m) and `ktk` is m × m
    // (ldc = m); dsyrk reads n·m values of `k` and writes the upper triangle of `ktk` only.
    unsafe {
        cblas_sys::cblas_dsyrk(
            cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
            cblas_sys::CBLAS_UPLO::CblasUpper,
            cblas_sys::CBLAS_TRANSPOSE::CblasTrans,
            m_i,
            n_i,
            1.0,
            k.as_ptr(),
            m_i,
            1.0,
            ktk.as_mut_ptr(),
            m_i,
        );
    }
    for i in 0..m {
        for j in 0..i {
            ktk[[i, j]] = ktk[[j, i]];
        }
    }
}

fn outer(a: &Array1<f64>, b: &Array1<f64>) -> Array2<f64> {
    Array2::from_shape_fn((a.len(), b.len()), |(i, j)| a[i] * b[j])
}

/// Largest singular value: √λ_max(AᵀA) (p × p, p = number of targets).
fn spectral_norm(a: &Array2<f64>) -> f64 {
    if a.ncols() == 1 {
        return a.iter().map(|v| v * v).sum::<f64>().sqrt();
    }
    let gram = a.t().dot(a);
    gram.eigh(UPLO::Lower)
        .map(|(values, _)| values.iter().copied().fold(0.0, f64::max).max(0.0).sqrt())
        .unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Largest absolute row sum.
    fn infinity_norm(a: &Array2<f64>) -> f64 {
        a.rows()
            .into_iter()
            .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0, f64::max)
    }

    /// ΔK and ΔZ of one added row are the norms of the difference of the running means,
    /// computed here from two copies of the statistics.
    #[test]
    fn one_row_deltas_are_the_norms_of_the_change_of_the_means() {
        let (x, y) = data(1_001, 5);
        let mut st = LevelStatistics::new(x.slice(s![..30, ..]).to_owned(), 0.4, 1).unwrap();
        st.add(x.slice(s![..1_000, ..]), y.slice(s![..1_000, ..]))
            .unwrap();
        let before = st.clone();
        let (dk, dz) = st.add_one(x.row(1_000), y.row(1_000)).unwrap().unwrap();
        let mean = |a: &Array2<f64>, n: usize| a / n as f64;
        let want_k = infinity_norm(&(mean(st.ktk(), 1_001) - mean(before.ktk(), 1_000)));
        let want_z = spectral_norm(&(mean(st.z(), 1_001) - mean(before.z(), 1_000)));
        assert!(
            (dk - want_k).abs() < 1e-12 * want_k.max(1e-300) + 1e-15,
            "{dk} vs {want_k}"
        );
        assert!((dz - want_z).abs() < 1e-9 * want_z, "{dz} vs {want_z}");
    }

    fn data(n: usize, seed: u64) -> (Array2<f64>, Array2<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x: Array2<f64> = Array2::from_shape_fn((n, 2), |_| rng.random_range(-1.0..1.0));
        let y = x
            .map_axis(Axis(1), |r| (3.0 * r[0]).sin() + r[1])
            .insert_axis(Axis(1));
        (x, y)
    }

    /// Spec §12.4: statistics accumulated in blocks and one row at a time equal a batch
    /// recomputation.
    #[test]
    fn streamed_statistics_equal_a_batch_recomputation() {
        let (x, y) = data(23_000, 1);
        let lm = x.slice(s![..50, ..]).to_owned();
        let mut blocks = LevelStatistics::new(lm.clone(), 0.3, 1).unwrap();
        blocks
            .add(x.slice(s![..21_000, ..]), y.slice(s![..21_000, ..]))
            .unwrap();
        for i in 21_000..23_000 {
            blocks.add_one(x.row(i), y.row(i)).unwrap();
        }
        let k = gaussian_kernel(x.view(), lm.view(), 0.3);
        let (ktk, z) = (k.t().dot(&k), k.t().dot(&y));
        let close =
            |a: &Array2<f64>, b: &Array2<f64>| (a - b).iter().all(|d| d.abs() < 1e-9 * 23_000.0);
        assert!(close(blocks.ktk(), &ktk) && close(blocks.z(), &z));
        assert_eq!(blocks.rows(), 23_000);
    }

    /// Spec §12.5: on i.i.d. data the convergence measures decay like 1/n.
    #[test]
    fn convergence_measures_decay_like_one_over_n() {
        let (x, y) = data(16_400, 2);
        let mut st = LevelStatistics::new(x.slice(s![..20, ..]).to_owned(), 0.5, 1).unwrap();
        st.add(x.slice(s![..2_000, ..]), y.slice(s![..2_000, ..]))
            .unwrap();
        let mean_delta = |st: &mut LevelStatistics, from: usize| {
            let (mut dk, mut dz) = (0.0, 0.0);
            for i in from..from + 200 {
                let (a, b) = st.add_one(x.row(i), y.row(i)).unwrap().unwrap();
                dk += a;
                dz += b;
            }
            (dk / 200.0, dz / 200.0)
        };
        let (k1, z1) = mean_delta(&mut st, 2_000);
        st.add(
            x.slice(s![2_200..16_000, ..]),
            y.slice(s![2_200..16_000, ..]),
        )
        .unwrap();
        let (k2, z2) = mean_delta(&mut st, 16_000);
        // n grows 2,100 -> 16,100 (x 7.7): the measures shrink by about as much.
        for ratio in [k1 / k2, z1 / z2] {
            assert!((5.5..11.0).contains(&ratio), "ratio {ratio}");
        }
    }

    /// Spec §12.5: the level converges after O(1/threshold) points; the buffer stays bounded.
    #[test]
    fn collectors_converge_after_about_one_over_threshold_points() {
        let (x, y) = data(60_000, 3);
        let lm = x.slice(s![..20, ..]).to_owned();
        let points_to_converge = |threshold: f64| {
            let params = ConvergenceParams {
                k_threshold: threshold,
                z_threshold: threshold,
                track_length: 100,
                interval: 500,
                lower_limit: 0,
                upper_limit: usize::MAX,
            };
            let mut c =
                LevelCollector::new(LevelStatistics::new(lm.clone(), 0.5, 1).unwrap(), params);
            for i in 0..60_000 {
                assert!(c.buffered() <= 501);
                if c.push(x.row(i).as_slice().unwrap(), y.row(i).as_slice().unwrap())
                    .unwrap()
                {
                    return c.statistics().rows();
                }
            }
            panic!("no convergence at threshold {threshold}");
        };
        let (a, b) = (points_to_converge(2e-3), points_to_converge(1e-3));
        assert!(
            (1.4..3.0).contains(&(b as f64 / a as f64)),
            "{a} -> {b} points"
        );
    }

    #[test]
    fn the_upper_limit_forces_a_fit_and_the_lower_limit_holds_it_back() {
        let (x, y) = data(3_000, 4);
        let params = ConvergenceParams {
            k_threshold: 0.0,
            z_threshold: 0.0,
            track_length: 100,
            interval: 100,
            lower_limit: 1_000,
            upper_limit: 1_500,
        };
        let mut c = LevelCollector::new(
            LevelStatistics::new(x.slice(s![..10, ..]).to_owned(), 0.5, 1).unwrap(),
            params,
        );
        let mut fitted_at = None;
        for i in 0..3_000 {
            if c.push(x.row(i).as_slice().unwrap(), y.row(i).as_slice().unwrap())
                .unwrap()
            {
                fitted_at = Some(c.statistics().rows());
                break;
            }
        }
        assert!(!c.converged());
        assert!(
            fitted_at.is_some_and(|n| n > 1_500 && n <= 1_602),
            "{fitted_at:?}"
        );
    }

    #[test]
    fn the_spectral_norm_is_the_largest_singular_value() {
        let a = ndarray::array![[3.0, 0.0], [0.0, -4.0], [0.0, 0.0]];
        assert!((spectral_norm(&a) - 4.0).abs() < 1e-12);
        let v = ndarray::array![[3.0], [4.0]];
        assert_eq!(spectral_norm(&v), 5.0);
        assert_eq!(
            infinity_norm(&ndarray::array![[1.0, -2.0], [0.5, 0.5]]),
            3.0
        );
    }
}
