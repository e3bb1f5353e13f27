//! Stochastic gradient descent for least squares with an L2 penalty, as scikit-learn 0.17's
//! `SGDRegressor` (squared loss, `penalty = "l2"`, `learning_rate = "invscaling"`, no
//! intercept, no averaging): the learner of the Mondrian kernel authors' Figs. 7-9 and of their
//! random-feature baselines in Fig. 8 (The Mondrian Kernel spec §4.2).
//!
//! Per sample, with `t` counting samples from 1 at every call of [`Sgd::fit`]:
//! ```text
//! η = η0 / t^power_t;  p = w·z_i;  w ← max(0, 1 − η α) w;  w ← w − η (p − y_i) z_i
//! ```
//! The shrink is applied lazily, as scikit-learn does: `w = scale · v`, so a step costs the
//! non-zeros of the row, not the length of `w`. The objective is
//! `(1/N) Σ ½ (y_i − w·z_i)² + (α/2) ‖w‖²`, i.e. ridge with penalty `N α`.
//!
//! [`OnlineSgd`] is the same per-sample step ([`Sgd::step`]) as an [`crate::OnlineLearner`]: a
//! stream in order, predicted then learnt, is one `fit` epoch without shuffling.

use ndarray::{ArrayView1, ArrayView2};
use rand::seq::SliceRandom;
use rand::Rng;

use crate::model::OnlineLearner;
use crate::one_hot::{OneHotFeatures, ABSENT};
use crate::CoreError;

/// Rows of a feature matrix as SGD reads them.
pub trait Rows {
    fn n_rows(&self) -> usize;
    /// `z_i · v`.
    fn dot(&self, i: usize, v: &[f64]) -> f64;
    /// `v += a z_i`.
    fn add_to(&self, i: usize, a: f64, v: &mut [f64]);
    /// `v += a z_i`, then `z_j · v`: the two halves of consecutive SGD steps, which rows may
    /// interleave (same bits as [`Self::add_to`] then [`Self::dot`]).
    fn add_then_dot(&self, i: usize, a: f64, j: usize, v: &mut [f64]) -> f64 {
        self.add_to(i, a, v);
        self.dot(j, v)
    }
}

/// One-hot rows with one value for every present entry (Mondrian features `1/√M`, random
/// binning `1/√M`): `columns[i * n_blocks + b]` is row i's column in block b, or [`ABSENT`].
#[derive(Debug, Clone, Copy)]
pub struct OneHotRows<'a> {
    columns: &'a [u32],
    n_blocks: usize,
    value: f64,
    n_rows: usize,
    /// Every entry present (no [`ABSENT`]): the inner loops skip the test.
    complete: bool,
    /// Every present entry is below this bound, checked once (at construction or by the type
    /// that built the array): a weight vector at least this long is read and written without a
    /// bounds check per entry. `None`: each entry is checked.
    bound: Option<usize>,
    /// Different blocks never share a column (Mondrian trees: each tree's node ids are offset
    /// past the previous tree's), so a step's scatter into block b can be interleaved with the
    /// next row's gather from block b without changing any result.
    disjoint_blocks: bool,
}

impl<'a> OneHotRows<'a> {
    /// The first `n_rows` rows of a row-major column array.
    pub fn new(columns: &'a [u32], n_blocks: usize, n_rows: usize, value: f64) -> Self {
        assert!(n_rows * n_blocks <= columns.len(), "rows beyond the array");
        Self {
            columns,
            n_blocks,
            value,
            n_rows,
            complete: false,
            bound: None,
            disjoint_blocks: false,
        }
    }

    /// As [`Self::new`] for arrays without [`ABSENT`] entries (e.g. Mondrian features: every
    /// point lies in one leaf of every tree). An [`ABSENT`] entry would then index out of
    /// bounds and panic.
    pub fn complete(columns: &'a [u32], n_blocks: usize, n_rows: usize, value: f64) -> Self {
        Self {
            complete: true,
            ..Self::new(columns, n_blocks, n_rows, value)
        }
    }

    /// As [`Self::complete`] (`complete`) or [`Self::new`], for an array whose entries in the
    /// first `n_rows` rows are all below `n_columns` (or [`ABSENT`] unless `complete`): the
    /// weight vector is checked once per call to be at least `n_columns` long, not once per
    /// entry. The same arithmetic in the same order as the checked rows, so the same bits.
    ///
    /// # Safety
    /// Every entry of `columns[..n_rows * n_blocks]` is `< n_columns`, or [`ABSENT`] when
    /// `complete` is false. [`OneHotFeatures::sgd_rows`] is the safe way in for
    /// validated matrices.
    pub unsafe fn bounded(
        columns: &'a [u32],
        n_blocks: usize,
        n_rows: usize,
        value: f64,
        n_columns: usize,
        complete: bool,
    ) -> Self {
        Self {
            complete,
            bound: Some(n_columns),
            ..Self::new(columns, n_blocks, n_rows, value)
        }
    }

    /// The same rows, declared to have disjoint column sets per block (see the field): then
    /// consecutive SGD steps are interleaved block by block ([`Rows::add_then_dot`]). Declaring
    /// it falsely changes results, never memory safety.
    pub fn with_disjoint_blocks(self) -> Self {
        Self {
            disjoint_blocks: true,
            ..self
        }
    }

    fn row(&self, i: usize) -> &[u32] {
        &self.columns[i * self.n_blocks..(i + 1) * self.n_blocks]
    }
}

impl OneHotFeatures {
    /// The first `n_rows` rows as SGD reads them, every present entry with value `value`:
    /// validated at construction, so read without a bounds check per entry
    /// ([`OneHotRows::bounded`]).
    pub fn sgd_rows(&self, n_rows: usize, value: f64) -> OneHotRows<'_> {
        assert!(n_rows <= self.n_rows(), "rows beyond the matrix");
        // SAFETY: `OneHotFeatures::new` checked every entry to be ABSENT or below n_columns.
        unsafe {
            OneHotRows::bounded(
                self.columns(),
                self.n_blocks(),
                n_rows,
                value,
                self.n_columns(),
                false,
            )
        }
    }
}

/// `Σ_k v[row_k]` with four partial sums over the entries in turn (the additions no longer wait
/// on each other; a fixed order, so deterministic), skipping [`ABSENT`] entries unless
/// `complete`. `get` reads one weight.
#[inline(always)]
fn gather_sum(row: &[u32], complete: bool, get: impl Fn(u32) -> f64) -> f64 {
    if complete {
        let mut acc = [0.0f64; 4];
        let chunks = row.chunks_exact(4);
        let tail: f64 = chunks.remainder().iter().map(|&c| get(c)).sum();
        for c in chunks {
            acc[0] += get(c[0]);
            acc[1] += get(c[1]);
            acc[2] += get(c[2]);
            acc[3] += get(c[3]);
        }
        (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
    } else {
        row.iter().filter(|&&c| c != ABSENT).map(|&c| get(c)).sum()
    }
}

impl Rows for OneHotRows<'_> {
    fn n_rows(&self) -> usize {
        self.n_rows
    }
    fn dot(&self, i: usize, v: &[f64]) -> f64 {
        let row = self.row(i);
        let sum = match self.bound {
            Some(bound) => {
                assert!(v.len() >= bound, "weights shorter than the column bound");
                // SAFETY: every entry is below `bound <= v.len()` (the contract of `bounded`).
                gather_sum(row, self.complete, |c| unsafe {
                    *v.get_unchecked(c as usize)
                })
            }
            None => gather_sum(row, self.complete, |c| v[c as usize]),
        };
        self.value * sum
    }
    fn add_to(&self, i: usize, a: f64, v: &mut [f64]) {
        let step = a * self.value;
        let row = self.row(i);
        match (self.bound, self.complete) {
            (Some(bound), complete) => {
                assert!(v.len() >= bound, "weights shorter than the column bound");
                for &c in row {
                    if complete || c != ABSENT {
                        // SAFETY: every entry is below `bound <= v.len()` (contract of `bounded`).
                        unsafe { *v.get_unchecked_mut(c as usize) += step };
                    }
                }
            }
            (None, true) => {
                for &c in row {
                    v[c as usize] += step;
                }
            }
            (None, false) => {
                for &c in row.iter().filter(|&&c| c != ABSENT) {
                    v[c as usize] += step;
                }
            }
        }
    }
    fn add_then_dot(&self, i: usize, a: f64, j: usize, v: &mut [f64]) -> f64 {
        let (Some(bound), true) = (self.bound, self.disjoint_blocks) else {
            self.add_to(i, a, v);
            return self.dot(j, v);
        };
        assert!(v.len() >= bound, "weights shorter than the column bound");
        let step = a * self.value;
        let (from, to) = (self.row(i), self.row(j));
        if !self.complete {
            // The sequential sum over present entries of `gather_sum`, block by block.
            let mut sum: f64 = std::iter::empty::<f64>().sum();
            for (&c, &d) in from.iter().zip(to) {
                if c != ABSENT {
                    // SAFETY: present entries are below `bound <= v.len()` (contract of
                    // `bounded`).
                    unsafe { *v.get_unchecked_mut(c as usize) += step };
                }
                if d != ABSENT {
                    // SAFETY: as above.
                    sum += unsafe { *v.get_unchecked(d as usize) };
                }
            }
            return self.value * sum;
        }
        let full = from.len() / 4 * 4;
        // Block b of row i is written before block b of row j is read; other blocks cannot
        // alias it. The partial sums are those of `gather_sum`, in its order.
        let mut acc = [0.0f64; 4];
        for (a4, b4) in from[..full].chunks_exact(4).zip(to[..full].chunks_exact(4)) {
            for k in 0..4 {
                // SAFETY: every entry is below `bound <= v.len()` (contract of `bounded`).
                unsafe {
                    *v.get_unchecked_mut(a4[k] as usize) += step;
                    acc[k] += *v.get_unchecked(b4[k] as usize);
                }
            }
        }
        for &c in &from[full..] {
            // SAFETY: as above.
            unsafe { *v.get_unchecked_mut(c as usize) += step };
        }
        // SAFETY: as above.
        let tail: f64 = to[full..]
            .iter()
            .map(|&c| unsafe { *v.get_unchecked(c as usize) })
            .sum();
        self.value * ((acc[0] + acc[1]) + (acc[2] + acc[3]) + tail)
    }
}

impl Rows for ArrayView2<'_, f64> {
    fn n_rows(&self) -> usize {
        self.nrows()
    }
    fn dot(&self, i: usize, v: &[f64]) -> f64 {
        let row = self.row(i);
        match row.as_slice() {
            Some(z) => dot4(z, v),
            None => row.iter().zip(v).map(|(z, w)| z * w).sum(),
        }
    }
    fn add_then_dot(&self, i: usize, a: f64, j: usize, v: &mut [f64]) -> f64 {
        let (from, to) = (self.row(i), self.row(j));
        let (Some(zi), Some(zj)) = (from.as_slice(), to.as_slice()) else {
            self.add_to(i, a, v);
            return self.dot(j, v);
        };
        // One pass over v: element k is updated by row i, then read for row j's dot, in the
        // additions and order of the axpy and `dot4`.
        let n = zj.len().min(v.len());
        let full = n / 4 * 4;
        let mut acc = [0.0f64; 4];
        for ((w4, a4), b4) in v[..full]
            .chunks_exact_mut(4)
            .zip(zi[..full].chunks_exact(4))
            .zip(zj[..full].chunks_exact(4))
        {
            for k in 0..4 {
                w4[k] += a * a4[k];
                acc[k] += b4[k] * w4[k];
            }
        }
        for (w, z) in v[full..].iter_mut().zip(&zi[full..]) {
            *w += a * z;
        }
        let tail: f64 = zj[full..n]
            .iter()
            .zip(&v[full..n])
            .map(|(a, b)| a * b)
            .sum();
        (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
    }
    fn add_to(&self, i: usize, a: f64, v: &mut [f64]) {
        let row = self.row(i);
        match row.as_slice() {
            Some(z) => {
                for (w, z) in v.iter_mut().zip(z) {
                    *w += a * z;
                }
            }
            None => {
                for (w, z) in v.iter_mut().zip(row) {
                    *w += a * z;
                }
            }
        }
    }
}

/// `z · v` with four partial sums (independent additions; fixed order, so deterministic).
fn dot4(z: &[f64], v: &[f64]) -> f64 {
    let n = z.len().min(v.len());
    let (z, v) = (&z[..n], &v[..n]);
    let mut acc = [0.0f64; 4];
    let (zc, vc) = (z.chunks_exact(4), v.chunks_exact(4));
    let tail: f64 = zc
        .remainder()
        .iter()
        .zip(vc.remainder())
        .map(|(a, b)| a * b)
        .sum();
    for (a, b) in zc.zip(vc) {
        acc[0] += a[0] * b[0];
        acc[1] += a[1] * b[1];
        acc[2] += a[2] * b[2];
        acc[3] += a[3] * b[3];
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Weights stored as `scale · v` (the lazy L2 shrink).
#[derive(Debug, Clone, PartialEq)]
pub struct ScaledWeights {
    v: Vec<f64>,
    scale: f64,
}

impl ScaledWeights {
    pub fn zeros(n: usize) -> Self {
        Self {
            v: vec![0.0; n],
            scale: 1.0,
        }
    }
    pub fn len(&self) -> usize {
        self.v.len()
    }
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }
    /// `w_j`.
    pub fn get(&self, j: usize) -> f64 {
        self.scale * self.v[j]
    }
    /// Sets `w_j`.
    pub fn set(&mut self, j: usize, w: f64) {
        self.v[j] = w / self.scale;
    }
    /// `w_to = w_from`, exactly (the stored value is copied, so predictions through either
    /// column are bit-identical).
    pub fn copy(&mut self, from: usize, to: usize) {
        self.v[to] = self.v[from];
    }
    /// `z_i · w`.
    pub fn predict(&self, rows: &impl Rows, i: usize) -> f64 {
        self.scale * rows.dot(i, &self.v)
    }
    /// All weights.
    pub fn to_vec(&self) -> Vec<f64> {
        self.v.iter().map(|v| self.scale * v).collect()
    }
    fn renormalise(&mut self) {
        for v in &mut self.v {
            *v *= self.scale;
        }
        self.scale = 1.0;
    }
}

/// The SGD schedule and penalty.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sgd {
    /// L2 penalty α.
    pub alpha: f64,
    /// Initial learning rate η0.
    pub eta0: f64,
    /// `η = η0 / t^power_t`.
    pub power_t: f64,
}

/// Clip of the loss derivative (scikit-learn's `SquaredLoss` in `sgd_fast.pyx`).
const MAX_DLOSS: f64 = 1e12;

impl Sgd {
    /// scikit-learn 0.17 defaults (`eta0 = 0.01`, `power_t = 0.25`) with penalty α.
    pub fn sklearn_0_17(alpha: f64) -> Self {
        Self {
            alpha,
            eta0: 0.01,
            power_t: 0.25,
        }
    }

    /// The learning rates `η0 / t^power_t` of samples `t = 1..=n` of one `fit` call.
    pub fn schedule(&self, n: usize) -> Vec<f64> {
        (1..=n).map(|t| self.learning_rate(t)).collect()
    }

    /// One call of `fit` with a warm start: `epochs` passes over `rows` with targets `y`, the
    /// sample counter restarting at 1. Each epoch visits the rows in a fresh random order from
    /// `shuffle`, or in row order when it is `None`.
    pub fn fit<R: Rng>(
        &self,
        w: &mut ScaledWeights,
        rows: &impl Rows,
        y: ArrayView1<f64>,
        epochs: usize,
        shuffle: Option<&mut R>,
    ) {
        let etas = self.schedule(rows.n_rows() * epochs);
        self.fit_scheduled(w, rows, y, &etas, shuffle);
    }

    /// [`Self::fit`] with the learning rates precomputed by [`Self::schedule`] (the same for
    /// every call on the same number of rows): `etas.len() / rows` epochs.
    pub fn fit_scheduled<R: Rng>(
        &self,
        w: &mut ScaledWeights,
        rows: &impl Rows,
        y: ArrayView1<f64>,
        etas: &[f64],
        mut shuffle: Option<&mut R>,
    ) {
        let n = rows.n_rows();
        assert_eq!(n, y.len(), "one target per row");
        if n == 0 {
            return;
        }
        let mut order: Vec<usize> = (0..n).collect();
        for epoch_etas in etas.chunks(n) {
            if let Some(rng) = shuffle.as_deref_mut() {
                order.shuffle(rng);
            }
            // Each step's scatter is fused with the next step's gather (the same operations
            // in the same order as `step` after `step`).
            let order = &order[..epoch_etas.len()];
            let mut dot = rows.dot(order[0], &w.v);
            for (k, (&i, &eta)) in order.iter().zip(epoch_etas).enumerate() {
                let a = self.shrink(w, w.scale * dot, y[i], eta);
                match order.get(k + 1) {
                    Some(&j) => dot = rows.add_then_dot(i, a, j, &mut w.v),
                    None => rows.add_to(i, a, &mut w.v),
                }
            }
        }
    }

    /// The part of a step between the prediction `p` and the scatter: the lazy shrink of the
    /// weights; returns the step `a` of `v += a z_i`.
    #[inline]
    fn shrink(&self, w: &mut ScaledWeights, p: f64, y: f64, eta: f64) -> f64 {
        let dloss = (p - y).clamp(-MAX_DLOSS, MAX_DLOSS);
        w.scale *= (1.0 - eta * self.alpha).max(0.0);
        if w.scale < 1e-9 {
            // scikit-learn resets the scale the same way (before the update).
            w.renormalise();
        }
        if w.scale == 0.0 {
            w.v.fill(0.0);
            w.scale = 1.0;
        }
        -eta * dloss / w.scale
    }

    /// One sample of [`Self::fit`]: with learning rate `η`, `p = w·z_i`, then
    /// `w ← max(0, 1 − η α) w − η (p − y_i) z_i`. Returns `p`, the prediction before the step.
    #[inline]
    pub fn step(&self, w: &mut ScaledWeights, rows: &impl Rows, i: usize, y: f64, eta: f64) -> f64 {
        let p = w.predict(rows, i);
        let a = self.shrink(w, p, y, eta);
        rows.add_to(i, a, &mut w.v);
        p
    }

    /// The learning rate `η0 / t^power_t` of sample `t` (from 1), as in [`Self::schedule`].
    pub fn learning_rate(&self, t: usize) -> f64 {
        self.eta0 / (t as f64).powf(self.power_t)
    }
}

/// How [`OnlineSgd`] reads one row of a stream: as the one-row [`Rows`] view that [`Sgd::fit`]
/// reads for the same data, so that an online pass rounds exactly as a `fit` epoch does.
pub trait RowFormat {
    /// One row of the stream.
    type Row: ?Sized;
    /// The one-row view of a row.
    type View<'a>: Rows
    where
        Self: 'a;
    /// `row` as a [`Rows`] of one row (index 0).
    fn view<'a>(&'a self, row: &'a Self::Row) -> Self::View<'a>;
    /// Checks that `row` can be read against `n_columns` weights.
    fn check(&self, row: &Self::Row, n_columns: usize) -> Result<(), CoreError>;
}

/// Dense rows `z ∈ ℝ^C` as `&[f64]`; read as a contiguous `ArrayView2` row, the form in which
/// [`Sgd::fit`] reads a standard-layout matrix.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DenseFormat;

impl RowFormat for DenseFormat {
    type Row = [f64];
    type View<'a> = ArrayView2<'a, f64>;
    fn view<'a>(&'a self, row: &'a [f64]) -> ArrayView2<'a, f64> {
        ArrayView2::from_shape((1, row.len()), row).expect("one contiguous row")
    }
    fn check(&self, row: &[f64], n_columns: usize) -> Result<(), CoreError> {
        if row.len() != n_columns {
            return Err(CoreError::shape(
                "row length vs SGD weights",
                n_columns,
                row.len(),
            ));
        }
        Ok(())
    }
}

/// One-hot rows as their column ids `&[u32]` (one per block, [`ABSENT`] allowed unless
/// `complete`), every present entry with value `value` (`1/√M` for Mondrian or binning
/// features); read as [`OneHotRows::new`] or, when `complete`, [`OneHotRows::complete`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OneHotFormat {
    /// The value of every present entry (`1/√M`).
    pub value: f64,
    /// Rows have no [`ABSENT`] entry (read as [`OneHotRows::complete`]: same numbers as a `fit`
    /// on `OneHotRows::complete` rows).
    pub complete: bool,
}

impl RowFormat for OneHotFormat {
    type Row = [u32];
    type View<'a> = OneHotRows<'a>;
    fn view<'a>(&'a self, row: &'a [u32]) -> OneHotRows<'a> {
        if self.complete {
            OneHotRows::complete(row, row.len(), 1, self.value)
        } else {
            OneHotRows::new(row, row.len(), 1, self.value)
        }
    }
    fn check(&self, row: &[u32], n_columns: usize) -> Result<(), CoreError> {
        match row
            .iter()
            .find(|&&c| (c == ABSENT && self.complete) || (c != ABSENT && c as usize >= n_columns))
        {
            Some(&c) => Err(CoreError::invalid_input(
                "one-hot column id",
                c,
                "a column below the number of SGD weights (ABSENT only in incomplete rows)",
            )),
            None => Ok(()),
        }
    }
}

/// scikit-learn 0.17's SGD as an online learner: sample `t` (from 1) of the stream is predicted
/// with the current weights, then learnt with one [`Sgd::step`] at rate `η0 / t^power_t`. A pass
/// over rows in order is exactly one epoch of [`Sgd::fit`] without shuffling.
#[derive(Debug, Clone, PartialEq)]
pub struct OnlineSgd<F> {
    sgd: Sgd,
    format: F,
    weights: ScaledWeights,
    /// Samples learnt so far.
    t: usize,
}

impl<F: RowFormat> OnlineSgd<F> {
    /// `n_columns` weights, all 0, rows read as `format`.
    pub fn new(sgd: Sgd, format: F, n_columns: usize) -> Self {
        Self {
            sgd,
            format,
            weights: ScaledWeights::zeros(n_columns),
            t: 0,
        }
    }

    /// The current weights `w`.
    pub fn weights(&self) -> &ScaledWeights {
        &self.weights
    }

    /// Number of samples learnt (the next sample is `t + 1` of the schedule).
    pub fn samples_seen(&self) -> usize {
        self.t
    }
}

impl<F: RowFormat> OnlineLearner for OnlineSgd<F> {
    type Row = F::Row;
    type Error = CoreError;

    fn predict_one(&self, x: &F::Row) -> Result<f64, CoreError> {
        self.format.check(x, self.weights.len())?;
        Ok(self.weights.predict(&self.format.view(x), 0))
    }

    fn update(&mut self, x: &F::Row, y: f64) -> Result<f64, CoreError> {
        self.format.check(x, self.weights.len())?;
        self.t += 1;
        let eta = self.sgd.learning_rate(self.t);
        Ok(self
            .sgd
            .step(&mut self.weights, &self.format.view(x), 0, y, eta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ridge::ridge_weights;
    use ndarray::{array, Array1};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The per-sample rule written out directly (no lazy scale).
    fn by_hand(z: &ndarray::Array2<f64>, y: &Array1<f64>, alpha: f64, epochs: usize) -> Vec<f64> {
        let mut w = vec![0.0; z.ncols()];
        let mut t = 1.0f64;
        for _ in 0..epochs {
            for i in 0..z.nrows() {
                let eta = 0.01 / t.powf(0.25);
                let p: f64 = z.row(i).iter().zip(&w).map(|(a, b)| a * b).sum();
                for wj in &mut w {
                    *wj *= 1.0 - eta * alpha;
                }
                for (wj, zj) in w.iter_mut().zip(z.row(i)) {
                    *wj -= eta * (p - y[i]) * zj;
                }
                t += 1.0;
            }
        }
        w
    }

    #[test]
    fn two_epochs_on_three_rows_match_the_rule_written_out() {
        let z = array![[1.0, 0.5], [0.0, 2.0], [-1.0, 1.0]];
        let y = array![1.0, -2.0, 0.5];
        let alpha = 0.3;
        let mut w = ScaledWeights::zeros(2);
        Sgd::sklearn_0_17(alpha).fit::<ChaCha8Rng>(&mut w, &z.view(), y.view(), 2, None);
        let expected = by_hand(&z, &y, alpha, 2);
        for (a, b) in w.to_vec().iter().zip(&expected) {
            assert!((a - b).abs() < 1e-14, "{a} vs {b}");
        }
        // First step by hand: t = 1, η = 0.01, p = 0, shrink of 0 is 0, w = 0.01 · 1 · z_0.
        let mut first = ScaledWeights::zeros(2);
        let one = z.slice(ndarray::s![..1, ..]);
        Sgd::sklearn_0_17(alpha).fit::<ChaCha8Rng>(
            &mut first,
            &one,
            y.slice(ndarray::s![..1]),
            1,
            None,
        );
        assert_eq!(first.to_vec(), vec![0.01, 0.005]);
    }

    #[test]
    fn a_warm_started_second_fit_restarts_the_schedule() {
        let z = array![[1.0, 0.5], [0.0, 2.0], [-1.0, 1.0]];
        let y = array![1.0, -2.0, 0.5];
        let sgd = Sgd::sklearn_0_17(0.1);
        let mut twice = ScaledWeights::zeros(2);
        sgd.fit::<ChaCha8Rng>(&mut twice, &z.view(), y.view(), 1, None);
        sgd.fit::<ChaCha8Rng>(&mut twice, &z.view(), y.view(), 1, None);
        let mut once = ScaledWeights::zeros(2);
        sgd.fit::<ChaCha8Rng>(&mut once, &z.view(), y.view(), 2, None);
        // Same samples, but the second call's steps are larger (t restarted at 1).
        assert!(twice.to_vec() != once.to_vec());
    }

    #[test]
    fn one_hot_rows_equal_their_dense_matrix() {
        let columns = [0u32, 2, 1, 2, 0, ABSENT];
        let rows = OneHotRows::new(&columns, 2, 3, 0.5);
        let dense = array![[0.5, 0.0, 0.5], [0.0, 0.5, 0.5], [0.5, 0.0, 0.0]];
        let y = array![1.0, 2.0, -1.0];
        let sgd = Sgd::sklearn_0_17(0.01);
        let (mut a, mut b) = (ScaledWeights::zeros(3), ScaledWeights::zeros(3));
        let mut r1 = ChaCha8Rng::seed_from_u64(3);
        let mut r2 = ChaCha8Rng::seed_from_u64(3);
        sgd.fit(&mut a, &rows, y.view(), 5, Some(&mut r1));
        sgd.fit(&mut b, &dense.view(), y.view(), 5, Some(&mut r2));
        for (x, z) in a.to_vec().iter().zip(b.to_vec()) {
            assert!((x - z).abs() < 1e-14);
        }
    }

    /// The predictions made before each sample of one epoch in row order, by the rule written
    /// out directly (no lazy scale).
    fn predictions_by_hand(z: &ndarray::Array2<f64>, y: &Array1<f64>, alpha: f64) -> Vec<f64> {
        let mut w = vec![0.0; z.ncols()];
        let mut predictions = Vec::new();
        for i in 0..z.nrows() {
            let eta = 0.01 / ((i + 1) as f64).powf(0.25);
            let p: f64 = z.row(i).iter().zip(&w).map(|(a, b)| a * b).sum();
            predictions.push(p);
            for (wj, zj) in w.iter_mut().zip(z.row(i)) {
                *wj = *wj * (1.0 - eta * alpha) - eta * (p - y[i]) * zj;
            }
        }
        predictions
    }

    #[test]
    fn an_online_pass_over_dense_rows_is_one_fit_epoch() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (n, c) = (40, 7);
        let z = ndarray::Array2::from_shape_fn((n, c), |_| rng.random_range(-1.0..1.0));
        let y = Array1::from_shape_fn(n, |i| z[[i, 1]] - 0.5 * z[[i, 4]] + 0.3);
        let sgd = Sgd::sklearn_0_17(0.2);
        let mut fitted = ScaledWeights::zeros(c);
        sgd.fit::<ChaCha8Rng>(&mut fitted, &z.view(), y.view(), 1, None);

        let mut online = OnlineSgd::new(sgd, DenseFormat, c);
        let stream = (0..n).map(|i| (z.row(i).to_slice().unwrap(), y[i]));
        let predictions = online.run_stream(stream).unwrap();
        assert_eq!(online.weights(), &fitted);
        assert_eq!(online.samples_seen(), n);

        let by_hand = predictions_by_hand(&z, &y, 0.2);
        for (k, (&p, &q)) in predictions.iter().zip(&by_hand).enumerate() {
            assert!((p - q).abs() < 1e-13, "sample {k}: {p} vs {q}");
            // Exactly the prediction of the model fitted on the rows before it.
            let mut before = ScaledWeights::zeros(c);
            let head = z.slice(ndarray::s![..k, ..]);
            sgd.fit::<ChaCha8Rng>(&mut before, &head, y.slice(ndarray::s![..k]), 1, None);
            assert_eq!(p.to_bits(), before.predict(&z.view(), k).to_bits());
        }
        assert_eq!(
            online.predict_one(z.row(0).to_slice().unwrap()),
            Ok(fitted.predict(&z.view(), 0))
        );
        // A row of the wrong length is an error, not a panic, and learns nothing.
        assert!(online.update(&[1.0], 0.0).is_err());
        assert_eq!(online.samples_seen(), n);
    }

    #[test]
    fn an_online_pass_over_one_hot_rows_is_one_fit_epoch() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let (n, blocks, per_block) = (30, 6, 4);
        let value = 1.0 / (blocks as f64).sqrt();
        let draw = |rng: &mut ChaCha8Rng, absent: bool| -> Vec<u32> {
            (0..n * blocks)
                .map(|k| {
                    if absent && rng.random::<f64>() < 0.2 {
                        ABSENT
                    } else {
                        ((k % blocks) * per_block + rng.random_range(0..per_block)) as u32
                    }
                })
                .collect()
        };
        let y = Array1::from_shape_fn(n, |i| (i as f64 * 0.37).sin());
        let sgd = Sgd::sklearn_0_17(0.05);
        for complete in [false, true] {
            let columns = draw(&mut rng, !complete);
            let rows = if complete {
                OneHotRows::complete(&columns, blocks, n, value)
            } else {
                OneHotRows::new(&columns, blocks, n, value)
            };
            let mut fitted = ScaledWeights::zeros(blocks * per_block);
            sgd.fit::<ChaCha8Rng>(&mut fitted, &rows, y.view(), 1, None);
            let format = OneHotFormat { value, complete };
            let mut online = OnlineSgd::new(sgd, format, blocks * per_block);
            let predictions = online
                .run_stream(columns.chunks(blocks).zip(y.iter().copied()))
                .unwrap();
            assert_eq!(online.weights(), &fitted);
            // A column beyond the weights is an error; so is an absent entry in complete rows.
            let beyond = [(blocks * per_block) as u32; 6];
            assert!(online.predict_one(&beyond).is_err());
            let absent = [ABSENT; 6];
            assert_eq!(online.predict_one(&absent).is_err(), complete);

            // Independently: the dense matrix of the same rows, the rule written out.
            let mut dense = ndarray::Array2::<f64>::zeros((n, blocks * per_block));
            for (i, row) in columns.chunks(blocks).enumerate() {
                for &c in row.iter().filter(|&&c| c != ABSENT) {
                    dense[[i, c as usize]] = value;
                }
            }
            for (p, q) in predictions
                .iter()
                .zip(predictions_by_hand(&dense, &y, 0.05))
            {
                assert!((p - q).abs() < 1e-13, "{p} vs {q}");
            }
        }
    }

    #[test]
    fn interleaved_steps_give_the_bits_of_separate_steps() {
        // Block-disjoint one-hot rows (7 blocks of 3 columns, 7 = 4 + 3 exercises the tail),
        // fitted with the fused scatter-gather and with plain rows: the same weights, bit for
        // bit, with and without shrink resets.
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let (n, blocks, per_block) = (50, 7, 3);
        let complete: Vec<u32> = (0..n * blocks)
            .map(|k| ((k % blocks) * per_block + rng.random_range(0..per_block)) as u32)
            .collect();
        let with_absent: Vec<u32> = complete
            .iter()
            .map(|&c| if rng.random::<f64>() < 0.2 { ABSENT } else { c })
            .collect();
        let y = Array1::from_shape_fn(n, |i| (i as f64 * 0.7).cos());
        for (alpha, all_present) in [(1e-3, true), (150.0, true), (1e-3, false), (150.0, false)] {
            let columns = if all_present { &complete } else { &with_absent };
            let sgd = Sgd::sklearn_0_17(alpha);
            let plain = if all_present {
                OneHotRows::complete(columns, blocks, n, 0.4)
            } else {
                OneHotRows::new(columns, blocks, n, 0.4)
            };
            // SAFETY: every entry is below blocks * per_block (or ABSENT when not complete).
            let fused = unsafe {
                OneHotRows::bounded(columns, blocks, n, 0.4, blocks * per_block, all_present)
            }
            .with_disjoint_blocks();
            let (mut a, mut b) = (
                ScaledWeights::zeros(blocks * per_block),
                ScaledWeights::zeros(blocks * per_block),
            );
            let (mut r1, mut r2) = (ChaCha8Rng::seed_from_u64(3), ChaCha8Rng::seed_from_u64(3));
            sgd.fit(&mut a, &plain, y.view(), 4, Some(&mut r1));
            sgd.fit(&mut b, &fused, y.view(), 4, Some(&mut r2));
            let bits =
                |w: &ScaledWeights| w.to_vec().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a), bits(&b), "alpha {alpha}, complete {all_present}");
            // And both are the rule written out (no lazy scale, no interleaving).
            let mut dense = ndarray::Array2::<f64>::zeros((n, blocks * per_block));
            for (i, row) in columns.chunks(blocks).enumerate() {
                for &c in row.iter().filter(|&&c| c != ABSENT) {
                    dense[[i, c as usize]] = 0.4;
                }
            }
            let mut c = ScaledWeights::zeros(blocks * per_block);
            let mut r3 = ChaCha8Rng::seed_from_u64(3);
            sgd.fit(&mut c, &dense.view(), y.view(), 4, Some(&mut r3));
            for (x, z) in b.to_vec().iter().zip(c.to_vec()) {
                assert!((x - z).abs() < 1e-12, "{x} vs {z}");
            }
        }
    }

    #[test]
    fn many_epochs_approach_the_ridge_solution_with_penalty_n_alpha() {
        // The objective's minimiser is ridge with δ' = N α (spec §4.2).
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let n = 40;
        let z = ndarray::Array2::from_shape_fn((n, 3), |_| rng.random_range(-1.0..1.0));
        let y = Array1::from_shape_fn(n, |i| z[[i, 0]] - 2.0 * z[[i, 2]] + 0.1 * (i as f64).sin());
        let alpha = 0.05;
        let sgd = Sgd {
            alpha,
            eta0: 0.05,
            power_t: 0.5,
        };
        let mut w = ScaledWeights::zeros(3);
        sgd.fit(&mut w, &z.view(), y.view(), 20_000, Some(&mut rng));
        let exact = ridge_weights(z.view(), y.view(), n as f64 * alpha).unwrap();
        for (a, b) in w.to_vec().iter().zip(exact.iter()) {
            assert!((a - b).abs() < 2e-3, "{a} vs {b}");
        }
    }
}
