//! The streamed sufficient statistics of one level (spec §5): with k(x) = (k_r(x, λ_j))_j over
//! the level's m landmarks, KᵀK = Σ k(x_i)k(x_i)ᵀ (m × m) and Z = Σ k(x_i)(y_i − f_{l−1}(x_i))ᵀ
//! (m × p) over the n rows seen; only these (and a bounded buffer upstream) are kept, so memory
//! does not grow with the stream. Adding one row at a time also gives the convergence measures
//! ΔK = ‖KᵀK_{n−1}/(n−1) − KᵀK_n/n‖_∞ (largest absolute row sum) and ΔZ = ‖Z_{n−1}/(n−1) −
//! Z_n/n‖₂ (spectral norm; the vector norm for one target; spec D7).
//!
//! **Banded accumulation.** At fine levels most kernel entries are exactly 0.0 in double
//! precision: k_r(x, λ) = exp(−‖x − λ‖²/(2r²)) underflows once ‖x − λ‖ > √1490.4·r ≈ 38.6 r
//! (the kernel returns 0.0 below an exponent of −745.2 without calling exp). The landmarks are
//! kept ordered along their widest coordinate a, and a row only meets the landmarks whose
//! coordinate a lies within that reach of its own (its window: a superset of the landmarks
//! with a non-zero entry, so every skipped entry is exactly 0.0; `crate::band`). Rows are
//! taken in the order of a, four at a time (neighbours touch the same part of KᵀK); each adds
//! its Z, and k kᵀ over the span of its non-zero entries (upper triangle; the touched band is
//! mirrored at the end of the block). Where windows would cover most landmarks (coarse
//! levels) a block takes the dense path: all kernel entries, one BLAS `dsyrk`.
//!
//! The banded sums are the dense path's up to their order (rounding), with one more
//! difference: kernel entries below 2^−511 ≈ 1.5e−154 are left out of the banded KᵀK
//! ([`AccumulationCounts::negligible_entries`]), which changes an entry of KᵀK by less than
//! 1.5e−154 per row (the products of such entries underflow below the smallest normal double,
//! and each underflow costs a microcode assist of about a hundred cycles: with them the banded
//! path was four times slower). The banded sums are plain multiplications and additions in a
//! fixed order, so they do not depend on the BLAS or the thread count. The one-row update
//! computes ΔK from the window's block and running row sums of KᵀK (entries are ≥ 0, so a
//! row's absolute sum is its sum). [`Accumulation`] chooses the path; [`AccumulationCounts`]
//! counts the work.

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};
use ndarray_linalg::{Eigh, UPLO};

use kernel_core::error::{at_least_one, check_finite, positive};

use crate::band::Order;
use crate::error::StreamError;
use crate::kernel::{gaussian_kernel, kernel_row, kernel_scale};

/// Rows per block when a batch is added (the authors' code: 10,000).
pub const CHUNK: usize = 10_000;

/// How a level's statistics are accumulated (the same sums either way, up to their order and
/// the negligible entries of the banded path; see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Accumulation {
    /// Per block of rows: banded where its estimated cost is below the dense one, else dense.
    #[default]
    Auto,
    /// Every kernel entry of every row, one `dsyrk` per block, ΔK over all m² entries, the
    /// landmarks in the order given (the accumulation before banding, kept as the reference).
    Dense,
    /// Banded for every block, however wide its windows.
    Banded,
}

/// The work of one level's accumulation, counted as it is done (deterministic: counts, not
/// times). "Dense" counts are what [`Accumulation::Dense`] spends on the same rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccumulationCounts {
    /// Rows added (in blocks and one at a time).
    pub rows: u64,
    /// Rows added one at a time (with the convergence measures).
    pub single_rows: u64,
    /// Kernel entries of the rows added: rows × landmarks.
    pub kernel_entries: u64,
    /// Of those, entries exactly 0.0 (evaluated, or skipped as out of reach, which makes them
    /// exactly 0.0): the same count whichever path accumulated them.
    pub zero_entries: u64,
    /// Kernel entries evaluated (distances computed).
    pub evaluated_entries: u64,
    /// Non-zero entries below 2^−511 ≈ 1.5e−154 that the banded path leaves out of KᵀK (each
    /// product with one changes an entry by less than 1.5e−154; they stay in Z).
    pub negligible_entries: u64,
    /// Flops spent on KᵀK: a `dsyrk` of b rows over m landmarks counts b·m·(m + 1); four
    /// banded rows whose entries (those not negligible) span s landmarks at most 4·s·(s + 1)
    /// (a product and a sum per entry of the span's upper triangle and row); a one-row update
    /// of w landmarks 2·w².
    pub gram_flops: u64,
    /// The same for the dense path: b·m·(m + 1) per block, 2·m² per single row.
    pub dense_gram_flops: u64,
    /// Entries of KᵀK read for the one-row ΔK (w² + m per row; dense: m²).
    pub delta_entries: u64,
    /// The dense path's: m² per single row after the first.
    pub dense_delta_entries: u64,
    /// Blocks of rows that took the banded path.
    pub banded_blocks: u64,
    /// Blocks that took the dense path.
    pub dense_blocks: u64,
}

impl AccumulationCounts {
    /// Share of the rows' kernel entries that are exactly 0.0 (0 before any row).
    pub fn zero_fraction(&self) -> f64 {
        ratio(self.zero_entries, self.kernel_entries)
    }

    /// Gram flops spent over the dense path's (1 before any row).
    pub fn flop_fraction(&self) -> f64 {
        if self.dense_gram_flops == 0 {
            1.0
        } else {
            ratio(self.gram_flops, self.dense_gram_flops)
        }
    }

    fn add_rows(&mut self, rows: usize, m: usize) {
        self.rows = self.rows.saturating_add(rows as u64);
        self.kernel_entries = self.kernel_entries.saturating_add(product(&[rows, m]));
    }

    fn add_syrk(&mut self, rows: usize, m: usize) {
        let flops = product(&[rows, m, m + 1]);
        self.gram_flops = self.gram_flops.saturating_add(flops);
        self.dense_gram_flops = self.dense_gram_flops.saturating_add(flops);
    }

    fn add_evaluated(&mut self, evaluated: &[f64], skipped: usize) {
        let zeros = evaluated.iter().filter(|&&v| v == 0.0).count() + skipped;
        self.evaluated_entries = self
            .evaluated_entries
            .saturating_add(evaluated.len() as u64);
        self.zero_entries = self.zero_entries.saturating_add(zeros as u64);
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn product(factors: &[usize]) -> u64 {
    factors
        .iter()
        .fold(1u64, |acc, &f| acc.saturating_mul(f as u64))
}

/// The cost model that picks a block's path, in nanoseconds, fitted to measurements on the AMD
/// EPYC Zen 4 with OpenBLAS's SkylakeX kernels, one thread, blocks of 10,000 uniform rows
/// (`cargo run --release -p streamrak --example accumulation_paths -- D M R`): the dense path
/// costs [`DENSE_NS_PER_FLOP`] per flop of its `dsyrk` (n·m·(m + 1); about 48 GFLOP/s) plus
/// [`DENSE_NS_PER_ENTRY`] per kernel entry (the entry, its exp, Z and the counts): measured
/// 0.11 ns per flop in all at m = 127, 0.047 at 488, 0.0245 at 3,000. The banded path costs
/// [`BANDED_NS_PER_PAIR`] per pair of a row's window (w² per row: its rank-4 updates run at
/// about a fifth of `dsyrk`'s rate, 8-11 against 41 GFLOP/s at m = 3,000 in 4-D) plus
/// [`BANDED_NS_PER_ENTRY`] per entry of the window (measured 1,300 ns a row at w ≈ 84).
/// The paths give the same sums up to their order, so the choice moves results only by
/// rounding; the constants are fixed, so the choice does not depend on the machine.
const DENSE_NS_PER_FLOP: f64 = 0.0207;
const DENSE_NS_PER_ENTRY: f64 = 11.3;
const BANDED_NS_PER_PAIR: f64 = 0.12;
const BANDED_NS_PER_ENTRY: f64 = 5.0;
/// Rows whose terms the banded path adds in one pass over their part of KᵀK (the inner loop is
/// written for four).
const FUSED: usize = 4;
/// Kernel entries below 2^−511 ≈ 1.5e−154 are left out of the banded KᵀK (they stay in Z): a
/// product with one is below 1.5e−154, and one of two of them underflows below the smallest
/// normal double (2^−1022), which costs a microcode assist. At E1's levels 6-15, 16-30 % of
/// the non-zero entries are that small (distances from 26.6 r to 38.6 r).
const NEGLIGIBLE: f64 = 1.4916681462400413e-154;

/// A block's banded plan: its rows in the order of the sort coordinate and their windows
/// (internal landmark positions `lo..hi`).
struct Plan {
    rows: Vec<usize>,
    windows: Vec<(usize, usize)>,
}

/// KᵀK, Z and n of one level.
///
/// Internally the landmarks, KᵀK and Z are kept in the order of [`Accumulation`]'s path (along
/// the widest coordinate unless [`Accumulation::Dense`]); every accessor answers in the order
/// the landmarks were given.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelStatistics {
    landmarks: Array2<f64>,
    bandwidth: f64,
    accumulation: Accumulation,
    /// `perm[s]`: the given index of the landmark at internal position s.
    perm: Vec<usize>,
    /// The landmarks in internal order.
    sorted: Array2<f64>,
    order: Option<Order>,
    ktk: Array2<f64>,
    z: Array2<f64>,
    /// Row sums of KᵀK (internal order), kept for the banded ΔK.
    row_sums: Array1<f64>,
    n: usize,
    counts: AccumulationCounts,
}

impl LevelStatistics {
    /// Empty statistics for the landmarks (one per row) and bandwidth r, with `targets` outputs
    /// ([`Accumulation::Auto`]).
    pub fn new(
        landmarks: Array2<f64>,
        bandwidth: f64,
        targets: usize,
    ) -> Result<Self, StreamError> {
        Self::with_accumulation(landmarks, bandwidth, targets, Accumulation::Auto)
    }

    /// [`LevelStatistics::new`] with the accumulation path chosen; an error for a bandwidth that
    /// is not finite and > 0 or landmarks that are not finite.
    pub fn with_accumulation(
        landmarks: Array2<f64>,
        bandwidth: f64,
        targets: usize,
        accumulation: Accumulation,
    ) -> Result<Self, StreamError> {
        if !(bandwidth.is_finite() && bandwidth > 0.0) {
            return Err(StreamError::InvalidParameter {
                name: "bandwidth",
                value: bandwidth.to_string(),
                expected: "a finite radius > 0",
            });
        }
        check_finite("landmarks", landmarks.view())?;
        let m = landmarks.nrows();
        let ordered = (accumulation != Accumulation::Dense)
            .then(|| Order::new(landmarks.view(), bandwidth))
            .flatten();
        let (perm, order) = match ordered {
            Some((perm, order)) => (perm, Some(order)),
            None => ((0..m).collect(), None),
        };
        let sorted = landmarks.select(Axis(0), &perm);
        Ok(Self {
            landmarks,
            bandwidth,
            accumulation,
            perm,
            sorted,
            order,
            ktk: Array2::zeros((m, m)),
            z: Array2::zeros((m, targets)),
            row_sums: Array1::zeros(m),
            n: 0,
            counts: AccumulationCounts::default(),
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
            let (xb, rb) = (
                x.slice(s![start..end, ..]),
                residual.slice(s![start..end, ..]),
            );
            match self.plan(xb) {
                Some(plan) => self.add_banded(xb, rb, &plan),
                None => self.add_dense(xb, rb),
            }
        }
        self.n += x.nrows();
        Ok(())
    }

    /// The banded plan of a block (its rows in the order of the sort coordinate and their
    /// windows), or `None` where the dense path is estimated cheaper or required.
    fn plan(&self, x: ArrayView2<f64>) -> Option<Plan> {
        let order = self.order.as_ref()?;
        let (n, m) = (x.nrows(), self.sorted.nrows());
        let key = |i: usize| x[[i, order.axis]];
        let mut rows: Vec<usize> = (0..n).collect();
        rows.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
        let windows: Vec<(usize, usize)> =
            rows.iter().map(|&i| self.window(key(i), key(i))).collect();
        let cost: f64 = windows
            .iter()
            .map(|&(lo, hi)| {
                let w = (hi - lo) as f64;
                BANDED_NS_PER_PAIR * w * w + BANDED_NS_PER_ENTRY * w
            })
            .sum();
        let m = m as f64;
        let dense = n as f64 * (DENSE_NS_PER_FLOP * m * (m + 1.0) + DENSE_NS_PER_ENTRY * m);
        (self.accumulation == Accumulation::Banded || cost < dense)
            .then_some(Plan { rows, windows })
    }

    /// The internal positions `lo..hi` of the landmarks within reach of rows whose sort
    /// coordinate lies in [`low`, `high`] ([`Order::window`]; all of them without an order).
    fn window(&self, low: f64, high: f64) -> (usize, usize) {
        match &self.order {
            Some(order) => order.window(low, high),
            None => (0, self.sorted.nrows()),
        }
    }

    /// One block on the dense path: all kernel entries, one `dsyrk`.
    fn add_dense(&mut self, x: ArrayView2<f64>, residual: ArrayView2<f64>) {
        let (n, m) = (x.nrows(), self.sorted.nrows());
        let k = gaussian_kernel(x, self.sorted.view(), self.bandwidth);
        self.counts.add_rows(n, m);
        self.counts
            .add_evaluated(k.as_slice().expect("standard layout"), 0);
        self.counts.add_syrk(n, m);
        self.counts.dense_blocks += 1;
        add_gram(&mut self.ktk, 0, &k);
        self.z += &k.t().dot(&residual);
        self.row_sums += &k.t().dot(&k.sum_axis(Axis(1)));
    }

    /// One block on the banded path: rows in the order of the sort coordinate, [`FUSED`] at a
    /// time; each one's kernel entries over the rows' joint window and its Z, then k kᵀ added
    /// to the upper triangle of KᵀK over the span of their non-zero entries with the row sums;
    /// at the end the touched band is mirrored. Every entry gets its rows' terms one after
    /// another in row order, each a product and a sum, so the values do not depend on
    /// [`FUSED`] (a term of a zero entry adds exactly 0.0). Entries below [`NEGLIGIBLE`] are
    /// left out of KᵀK (not Z).
    fn add_banded(&mut self, x: ArrayView2<f64>, residual: ArrayView2<f64>, plan: &Plan) {
        let (rows, windows) = (&plan.rows, &plan.windows);
        let (m, d, p) = (self.sorted.nrows(), x.ncols(), residual.ncols());
        self.counts.banded_blocks += 1;
        self.counts.add_rows(rows.len(), m);
        self.counts.dense_gram_flops =
            self.counts
                .dense_gram_flops
                .saturating_add(product(&[rows.len(), m, m + 1]));
        let scale = kernel_scale(self.bandwidth);
        let sorted = self.sorted.as_slice().expect("standard layout");
        let ktk = self.ktk.as_slice_mut().expect("standard layout");
        let z = self.z.as_slice_mut().expect("standard layout");
        // touched[a]: the last column updated in row a (upper triangle) in this block.
        let mut touched: Vec<usize> = (0..m).collect();
        let mut k: [Vec<f64>; FUSED] = std::array::from_fn(|_| vec![0.0; m]);
        let mut point = vec![0.0; d];
        let (mut evaluated, mut zeros, mut negligible, mut flops) = (0u64, 0u64, 0u64, 0u64);
        for (ids, wins) in rows.chunks(FUSED).zip(windows.chunks(FUSED)) {
            // The joint window (windows grow with the sort coordinate; min/max regardless).
            let lo = wins.iter().map(|w| w.0).min().expect("a row");
            let hi = wins.iter().map(|w| w.1).max().expect("a row");
            let w = hi - lo;
            // Entries outside each row's own window are exactly 0.0.
            for &(a, b) in wins {
                zeros += (m - (b - a)) as u64;
            }
            evaluated += (w * ids.len()) as u64;
            if w == 0 {
                continue;
            }
            let (mut first, mut last) = (w, 0);
            for (r, kr) in k.iter_mut().enumerate() {
                let kr = &mut kr[..w];
                let Some(&i) = ids.get(r) else {
                    kr.fill(0.0);
                    continue;
                };
                for (p, v) in point.iter_mut().zip(x.row(i)) {
                    *p = *v;
                }
                // The joint window's entries outside the row's own are exactly 0.0 too.
                kernel_row(&point, &sorted[lo * d..hi * d], scale, kr);
                let (own_lo, own_hi) = (wins[r].0 - lo, wins[r].1 - lo);
                zeros += kr[own_lo..own_hi].iter().filter(|&&v| v == 0.0).count() as u64;
                let res = residual.row(i);
                for (b, v) in kr.iter_mut().enumerate() {
                    if *v != 0.0 {
                        for (t, rt) in res.iter().enumerate() {
                            z[(lo + b) * p + t] += *v * rt;
                        }
                        if *v < NEGLIGIBLE {
                            *v = 0.0;
                            negligible += 1;
                        }
                    }
                }
                if let Some(f) = kr.iter().position(|&v| v != 0.0) {
                    first = first.min(f);
                    last = last.max(kr.iter().rposition(|&v| v != 0.0).expect("non-zero"));
                }
            }
            if first > last {
                continue; // no entry left for KᵀK
            }
            let span = first..last + 1;
            let ks: [&[f64]; FUSED] = std::array::from_fn(|r| &k[r][span.clone()]);
            let totals: [f64; FUSED] = std::array::from_fn(|r| ks[r].iter().sum());
            for a in 0..span.len() {
                let ka: [f64; FUSED] = std::array::from_fn(|r| ks[r][a]);
                if ka.iter().all(|&v| v == 0.0) {
                    continue; // adds exactly 0 to its row
                }
                let row = lo + first + a;
                let start = row * m + row;
                let len = span.len() - a;
                let entries = &mut ktk[start..start + len];
                let tails: [&[f64]; FUSED] = std::array::from_fn(|r| &ks[r][a..]);
                rank_update(entries, &ka, &tails);
                flops += (2 * FUSED * len) as u64;
                touched[row] = touched[row].max(lo + last);
                for (kr, total) in ka.iter().zip(totals) {
                    self.row_sums[row] += kr * total;
                }
            }
        }
        for (a, &end) in touched.iter().enumerate() {
            for j in a + 1..=end {
                ktk[j * m + a] = ktk[a * m + j];
            }
        }
        let c = &mut self.counts;
        c.evaluated_entries = c.evaluated_entries.saturating_add(evaluated);
        c.zero_entries = c.zero_entries.saturating_add(zeros);
        c.negligible_entries = c.negligible_entries.saturating_add(negligible);
        c.gram_flops = c.gram_flops.saturating_add(flops);
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
        let m = self.sorted.nrows();
        // The window of the row (all landmarks without an order, as on the dense path).
        let (lo, hi) = match &self.order {
            Some(order) => order.window(x[order.axis], x[order.axis]),
            None => (0, m),
        };
        let w = hi - lo;
        let k: Array1<f64> = gaussian_kernel(xr, self.sorted.slice(s![lo..hi, ..]), self.bandwidth)
            .row(0)
            .to_owned();
        let n_before = self.n as f64;
        let n = n_before + 1.0;
        let first = self.n == 0;
        self.counts.add_rows(1, m);
        self.counts.single_rows += 1;
        self.counts
            .add_evaluated(k.as_slice().expect("contiguous"), m - w);
        self.counts.gram_flops = self.counts.gram_flops.saturating_add(product(&[2, w, w]));
        self.counts.dense_gram_flops = self
            .counts
            .dense_gram_flops
            .saturating_add(product(&[2, m, m]));
        if !first {
            self.counts.dense_delta_entries = self
                .counts
                .dense_delta_entries
                .saturating_add(product(&[m, m]));
        }
        let dk = if self.accumulation == Accumulation::Dense {
            if !first {
                self.counts.delta_entries =
                    self.counts.delta_entries.saturating_add(product(&[m, m]));
            }
            self.update_dense(&k, first, n_before, n)
        } else {
            if !first {
                self.counts.delta_entries = self
                    .counts
                    .delta_entries
                    .saturating_add(product(&[w, w]).saturating_add(m as u64));
            }
            self.update_window(&k, lo, first, n_before, n)
        };
        let total = k.sum();
        for (a, &v) in k.iter().enumerate() {
            self.row_sums[lo + a] += v * total;
        }
        let mut kz = Array2::zeros((m, residual.len()));
        kz.slice_mut(s![lo..hi, ..])
            .assign(&outer(&k, &residual.to_owned()));
        let deltas = (!first).then(|| {
            let dz = (&kz - &(&self.z / n_before)) / n;
            (dk, spectral_norm(&dz))
        });
        self.z += &kz;
        self.n += 1;
        Ok(deltas)
    }

    /// KᵀK += k kᵀ over all m² entries and ΔK from every row (k of all landmarks).
    fn update_dense(&mut self, k: &Array1<f64>, first: bool, n_before: f64, n: f64) -> f64 {
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
        dk
    }

    /// KᵀK += k kᵀ on the window's block (k of the landmarks `lo..lo + k.len()`, every other
    /// entry of k is 0.0) and ΔK: a row i outside the window has the absolute row sum
    /// Σ_j S_ij / (n − 1) (entries of S = KᵀK are ≥ 0), its running row sum; a row inside has
    /// Σ_{j in window} |k_i k_j − S_ij/(n − 1)| plus the rest of its row sum.
    fn update_window(
        &mut self,
        k: &Array1<f64>,
        lo: usize,
        first: bool,
        n_before: f64,
        n: f64,
    ) -> f64 {
        let (m, w) = (self.ktk.nrows(), k.len());
        let mut dk = 0.0_f64;
        if !first {
            for i in (0..lo).chain(lo + w..m) {
                dk = dk.max(self.row_sums[i] / n_before);
            }
        }
        for a in 0..w {
            let i = lo + a;
            let mut row = self.ktk.slice_mut(s![i, lo..lo + w]);
            let (mut inside, mut covered) = (0.0, 0.0);
            for (b, entry) in row.iter_mut().enumerate() {
                let kk = k[a] * k[b];
                if !first {
                    inside += (kk - *entry / n_before).abs();
                    covered += *entry;
                }
                *entry += kk;
            }
            if !first {
                let outside = (self.row_sums[i] - covered).max(0.0) / n_before;
                dk = dk.max(inside + outside);
            }
        }
        dk / n
    }

    /// Rows seen n.
    pub fn rows(&self) -> usize {
        self.n
    }

    /// KᵀK (a copy, in the order the landmarks were given).
    pub fn ktk(&self) -> Array2<f64> {
        let mut out = Array2::zeros(self.ktk.dim());
        for (s, &i) in self.perm.iter().enumerate() {
            for (t, &j) in self.perm.iter().enumerate() {
                out[[i, j]] = self.ktk[[s, t]];
            }
        }
        out
    }

    /// Z (a copy, in the order the landmarks were given).
    pub fn z(&self) -> Array2<f64> {
        self.unpermute_rows(self.z.view())
    }

    /// Rows of a matrix in internal order, put back in the order the landmarks were given.
    pub(crate) fn unpermute_rows(&self, a: ArrayView2<f64>) -> Array2<f64> {
        let mut out = Array2::zeros(a.dim());
        for (s, &i) in self.perm.iter().enumerate() {
            out.row_mut(i).assign(&a.row(s));
        }
        out
    }

    /// The landmarks, KᵀK and Z in internal order (the level's solve is the same in any order
    /// of the landmarks; its coefficients are put back with [`Self::unpermute_rows`]).
    pub(crate) fn internal(
        &self,
    ) -> (
        ArrayView2<'_, f64>,
        ArrayView2<'_, f64>,
        ArrayView2<'_, f64>,
    ) {
        (self.sorted.view(), self.ktk.view(), self.z.view())
    }

    /// The landmarks, one per row.
    pub fn landmarks(&self) -> &Array2<f64> {
        &self.landmarks
    }

    /// The level's bandwidth r.
    pub fn bandwidth(&self) -> f64 {
        self.bandwidth
    }

    /// The accumulation path chosen.
    pub fn accumulation(&self) -> Accumulation {
        self.accumulation
    }

    /// The work of the accumulation so far.
    pub fn counts(&self) -> &AccumulationCounts {
        &self.counts
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
/// or one check fails (buffer again). Once converged, the rows up to `lower_limit` are
/// buffered and added in blocks too.
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
            // Converged but not yet above the lower limit: the remaining rows need no check, so
            // they are buffered and added in blocks (one at a time, a row of a dense level costs
            // m² memory-bound updates), the last block as the count passes the limit: the level
            // becomes ready at the same row.
            self.buffer_x.extend_from_slice(x);
            self.buffer_r.extend_from_slice(residual);
            let buffered = self.buffered();
            if self.stats.rows() + buffered > self.params.lower_limit
                || buffered > self.params.interval
            {
                self.flush()?;
            }
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

/// `ktk[o.., o..] += kᵀk` for a block `k` of kernel rows (n × w) over the landmarks
/// `o..o + w`: BLAS `dsyrk` on the upper triangle of that diagonal block (half the flops of a
/// product), then mirrored, so `ktk` stays a full symmetric matrix.
fn add_gram(ktk: &mut Array2<f64>, offset: usize, k: &Array2<f64>) {
    let (n, w) = k.dim();
    let m = ktk.nrows();
    if n == 0 || w == 0 {
        return;
    }
    assert!(
        ktk.dim() == (m, m)
            && offset + w <= m
            && ktk.is_standard_layout()
            && k.is_standard_layout(),
        "internal error: Gram block shapes"
    );
    let (n_i, w_i, m_i) = (
        i32::try_from(n).expect("block rows fit in a BLAS int"),
        i32::try_from(w).expect("landmarks fit in a BLAS int"),
        i32::try_from(m).expect("landmarks fit in a BLAS int"),
    );
    // SAFETY: both matrices are contiguous row-major: `k` is n × w (lda = w) and `ktk` is m × m
    // (ldc = m); the w × w block at (offset, offset) lies inside it (offset + w ≤ m); dsyrk
    // reads n·w values of `k` and writes the upper triangle of that block only.
    unsafe {
        cblas_sys::cblas_dsyrk(
            cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
            cblas_sys::CBLAS_UPLO::CblasUpper,
            cblas_sys::CBLAS_TRANSPOSE::CblasTrans,
            w_i,
            n_i,
            1.0,
            k.as_ptr(),
            w_i,
            1.0,
            ktk.as_mut_ptr().add(offset * m + offset),
            m_i,
        );
    }
    for i in offset..offset + w {
        for j in offset..i {
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

/// `e_j = e_j + ka₀·b₀[j] + ka₁·b₁[j] + ka₂·b₂[j] + ka₃·b₃[j]` over the row `entries` of KᵀK
/// (left to right, products and sums without fused multiply-adds: the same bits at every
/// vector width).
#[inline(always)]
fn rank_update_generic(entries: &mut [f64], ka: &[f64; FUSED], b: &[&[f64]; FUSED]) {
    let [b0, b1, b2, b3] = *b;
    for ((((e, &v0), &v1), &v2), &v3) in entries.iter_mut().zip(b0).zip(b1).zip(b2).zip(b3) {
        *e = *e + ka[0] * v0 + ka[1] * v1 + ka[2] * v2 + ka[3] * v3;
    }
}

kernel_core::widest_vectors! {
    /// [`rank_update_generic`] compiled for the widest vector unit the processor has.
    fn rank_update(entries: &mut [f64], ka: &[f64; FUSED], b: &[&[f64]; FUSED]);
    body rank_update_generic;
    tier rank_update_avx512 = "avx512f" if "avx512f";
    tier rank_update_avx2 = "avx2" if "avx2";
    fallback rank_update_generic;
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

    const PATHS: [Accumulation; 3] = [
        Accumulation::Dense,
        Accumulation::Banded,
        Accumulation::Auto,
    ];

    /// ΔK and ΔZ of one added row are the norms of the difference of the running means,
    /// computed here from two copies of the statistics (on every path, at a bandwidth where
    /// most entries are 0.0 and one where none is).
    #[test]
    fn one_row_deltas_are_the_norms_of_the_change_of_the_means() {
        let (x, y) = data(1_001, 5);
        for (path, r) in PATHS.iter().flat_map(|&a| [(a, 0.4), (a, 0.003)]) {
            let mut st =
                LevelStatistics::with_accumulation(x.slice(s![..30, ..]).to_owned(), r, 1, path)
                    .unwrap();
            st.add(x.slice(s![..1_000, ..]), y.slice(s![..1_000, ..]))
                .unwrap();
            let before = st.clone();
            let (dk, dz) = st.add_one(x.row(1_000), y.row(1_000)).unwrap().unwrap();
            let mean = |a: Array2<f64>, n: usize| a / n as f64;
            let want_k = infinity_norm(&(mean(st.ktk(), 1_001) - mean(before.ktk(), 1_000)));
            let want_z = spectral_norm(&(mean(st.z(), 1_001) - mean(before.z(), 1_000)));
            assert!(
                (dk - want_k).abs() < 1e-12 * want_k.max(1e-300) + 1e-15,
                "{path:?} r {r}: {dk} vs {want_k}"
            );
            assert!(
                (dz - want_z).abs() < 1e-9 * want_z,
                "{path:?} r {r}: {dz} vs {want_z}"
            );
        }
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
    /// recomputation (ndarray products of the whole kernel matrix), on every path.
    #[test]
    fn streamed_statistics_equal_a_batch_recomputation() {
        let (x, y) = data(23_000, 1);
        let lm = x.slice(s![..50, ..]).to_owned();
        for (path, r) in PATHS.iter().flat_map(|&a| [(a, 0.3), (a, 0.01)]) {
            let mut blocks = LevelStatistics::with_accumulation(lm.clone(), r, 1, path).unwrap();
            blocks
                .add(x.slice(s![..21_000, ..]), y.slice(s![..21_000, ..]))
                .unwrap();
            for i in 21_000..23_000 {
                blocks.add_one(x.row(i), y.row(i)).unwrap();
            }
            let k = gaussian_kernel(x.view(), lm.view(), r);
            let (ktk, z) = (k.t().dot(&k), k.t().dot(&y));
            let close = |a: &Array2<f64>, b: &Array2<f64>| {
                (a - b).iter().all(|d| d.abs() < 1e-9 * 23_000.0)
            };
            assert!(
                close(&blocks.ktk(), &ktk) && close(&blocks.z(), &z),
                "{path:?} r {r}"
            );
            assert_eq!(blocks.rows(), 23_000);
            let c = blocks.counts();
            assert_eq!((c.rows, c.single_rows), (23_000, 2_000));
            assert_eq!(c.kernel_entries, 23_000 * 50);
            assert_eq!(
                c.zero_entries,
                k.iter().filter(|&&v| v == 0.0).count() as u64,
                "{path:?} r {r}"
            );
        }
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

    /// Rows of dimension `d` in [0, 1)^d, dense near 0 along the first coordinate (like
    /// VarSinus), with two targets.
    fn skewed(n: usize, d: usize, seed: u64) -> (Array2<f64>, Array2<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x = Array2::from_shape_fn((n, d), |(_, j)| {
            let u: f64 = rng.random();
            if j == 0 {
                u * u * u
            } else {
                u
            }
        });
        let y = Array2::from_shape_fn((n, 2), |(i, t)| {
            (1.0 / (x[[i, 0]] + 0.01)).sin() + t as f64 * x.row(i).sum()
        });
        (x, y)
    }

    /// The banded window of a row is a superset of the landmarks with a non-zero kernel
    /// entry, also for rows at the edge of the reach (distances just below and above it).
    #[test]
    fn every_non_zero_kernel_entry_lies_in_its_window() {
        for (d, r) in [(1, 1e-3), (1, 0.02), (3, 0.01), (3, 0.2)] {
            let (lm, _) = skewed(300, d, 11);
            let st =
                LevelStatistics::with_accumulation(lm.clone(), r, 1, Accumulation::Banded).unwrap();
            let order = st.order.as_ref().expect("ordered");
            let (mut x, _) = skewed(2_000, d, 12);
            // Rows at the edge of the reach of landmark 0 along the sort coordinate.
            let edge = (-2.0 * crate::kernel::UNDERFLOW).sqrt() * r;
            for (i, f) in [1.0 - 1e-9, 1.0 - 1e-15, 1.0, 1.0 + 1e-15, 1.0 + 1e-9]
                .iter()
                .enumerate()
            {
                let mut row = lm.row(0).to_owned();
                row[order.axis] += edge * f;
                x.row_mut(2 * i).assign(&row);
                row[order.axis] -= 2.0 * edge * f;
                x.row_mut(2 * i + 1).assign(&row);
            }
            let k = gaussian_kernel(x.view(), st.sorted.view(), r);
            let mut inside = 0;
            for (row, krow) in x.rows().into_iter().zip(k.rows()) {
                let key = row[order.axis];
                let (lo, hi) = st.window(key, key);
                for (j, &v) in krow.iter().enumerate() {
                    assert!(
                        v == 0.0 || (lo..hi).contains(&j),
                        "d {d} r {r}: entry {v} of landmark {j} outside {lo}..{hi}"
                    );
                }
                inside += hi - lo;
            }
            // The windows are tight in 1-D: their entries are mostly non-zero.
            if d == 1 {
                let nonzero = k.iter().filter(|&&v| v != 0.0).count();
                assert!(
                    inside < nonzero + nonzero / 5 + 2_000,
                    "{inside} vs {nonzero}"
                );
            }
        }
    }

    /// The banded, automatic and dense accumulations give the same KᵀK, Z, convergence
    /// measures and decisions (to rounding: sums in another order), and count the same zero
    /// entries, at bandwidths from all entries non-zero to 99 % exactly zero, in 1-D and 3-D.
    #[test]
    fn banded_and_dense_accumulation_agree_at_every_bandwidth() {
        for (d, r) in [(1, 0.5), (1, 0.01), (1, 5e-4), (3, 0.3), (3, 0.02)] {
            let (x, y) = skewed(12_400, d, 13);
            let lm = x.slice(s![..400, ..]).to_owned();
            let run = |path| {
                let mut st = LevelStatistics::with_accumulation(lm.clone(), r, 2, path).unwrap();
                st.add(x.slice(s![..12_000, ..]), y.slice(s![..12_000, ..]))
                    .unwrap();
                let deltas: Vec<(f64, f64)> = (12_000..12_400)
                    .map(|i| st.add_one(x.row(i), y.row(i)).unwrap().unwrap())
                    .collect();
                (st, deltas)
            };
            let (dense, dense_deltas) = run(Accumulation::Dense);
            let scale = dense.ktk().iter().copied().fold(0.0, f64::max);
            let (dk_mid, dz_mid) = (
                median(dense_deltas.iter().map(|d| d.0).collect()),
                median(dense_deltas.iter().map(|d| d.1).collect()),
            );
            for path in [Accumulation::Banded, Accumulation::Auto] {
                let (st, deltas) = run(path);
                let gap = |a: Array2<f64>, b: Array2<f64>| {
                    (&a - &b).iter().fold(0.0_f64, |g, v| g.max(v.abs()))
                };
                let what = format!("{path:?} d {d} r {r}");
                assert!(gap(st.ktk(), dense.ktk()) <= 1e-12 * scale, "{what}");
                assert!(gap(st.z(), dense.z()) <= 1e-12 * 12_400.0, "{what}");
                for (a, b) in deltas.iter().zip(&dense_deltas) {
                    assert!(
                        (a.0 - b.0).abs() <= 1e-10 * b.0 + 1e-18,
                        "{what}: {a:?} {b:?}"
                    );
                    assert!(
                        (a.1 - b.1).abs() <= 1e-10 * b.1 + 1e-18,
                        "{what}: {a:?} {b:?}"
                    );
                    // The decisions of the stopping rule at thresholds amid the measures.
                    assert_eq!(
                        (a.0 <= dk_mid, a.1 <= dz_mid),
                        (b.0 <= dk_mid, b.1 <= dz_mid)
                    );
                }
                let (c, cd) = (st.counts(), dense.counts());
                assert_eq!(
                    (c.rows, c.kernel_entries, c.zero_entries),
                    (cd.rows, cd.kernel_entries, cd.zero_entries),
                    "{what}"
                );
                assert_eq!(c.dense_gram_flops, cd.gram_flops, "{what}");
                assert!(c.gram_flops <= cd.gram_flops || path == Accumulation::Banded);
                eprintln!(
                    "{what}: zeros {:.3}, gram flops {:.4} of dense, evaluated {:.3}, blocks {} banded / {} dense",
                    c.zero_fraction(),
                    c.flop_fraction(),
                    c.evaluated_entries as f64 / c.kernel_entries as f64,
                    c.banded_blocks,
                    c.dense_blocks
                );
            }
            // Where nearly every entry is exactly zero, the banded path does a small part of
            // the dense flops, and Auto takes it.
            if dense.counts().zero_fraction() > 0.9 {
                let (auto, _) = run(Accumulation::Auto);
                assert!(auto.counts().banded_blocks > 0);
                assert!(auto.counts().flop_fraction() < 0.25, "{:?}", auto.counts());
            }
            if r >= 0.3 {
                let (auto, _) = run(Accumulation::Auto);
                assert_eq!(
                    auto.counts().banded_blocks,
                    0,
                    "dense where nothing is zero"
                );
            }
        }
    }

    /// Midway between the two middle values (not one of them, so a threshold there is not
    /// crossed by rounding).
    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        0.5 * (v[v.len() / 2 - 1] + v[v.len() / 2])
    }

    /// Landmarks that are not finite, or a bandwidth whose square is not a normal number,
    /// are handled without a panic: an error, or the dense path.
    #[test]
    fn odd_landmarks_and_bandwidths_are_errors_or_dense() {
        let bad = ndarray::array![[0.0], [f64::NAN]];
        assert!(LevelStatistics::new(bad, 0.1, 1).is_err());
        let lm = ndarray::array![[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]];
        for r in [1e-200, 1e200] {
            let mut st = LevelStatistics::new(lm.clone(), r, 1).unwrap();
            assert!(st.order.is_none());
            st.add(lm.view(), ndarray::array![[1.0], [2.0], [3.0]].view())
                .unwrap();
            st.add_one(lm.row(0), ndarray::array![1.0].view()).unwrap();
        }
        // Zero-dimensional points: every kernel entry is 1.
        let mut st = LevelStatistics::new(Array2::zeros((3, 0)), 0.1, 1).unwrap();
        st.add(Array2::zeros((4, 0)).view(), Array2::ones((4, 1)).view())
            .unwrap();
        assert_eq!(st.ktk(), Array2::from_elem((3, 3), 4.0));
        // No landmarks.
        let mut st = LevelStatistics::new(Array2::zeros((0, 2)), 0.1, 1).unwrap();
        st.add(lm.view(), Array2::ones((3, 1)).view()).unwrap();
        assert_eq!(
            st.add_one(lm.row(0), ndarray::array![1.0].view()).unwrap(),
            Some((0.0, 0.0))
        );
    }
}
