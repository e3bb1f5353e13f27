//! The paper's baselines (spec §7): FALKON with one bandwidth (m landmarks drawn uniformly with
//! replacement from the stream's first points, the whole stream accumulated into one level's
//! statistics) and LP-KRR (the same Laplacian pyramid with bandwidths r₀·2^{−l}, but one fixed
//! landmark set for every level, and each level consuming a fixed number of streamed points).
//!
//! FALKON comes in two forms with the same solve: [`FalkonBaseline`] accumulates KᵀK (m × m,
//! n·m² flops), [`MatrixFreeFalkon`] keeps the rows and computes KᵀK u as Kᵀ(K u) in one pass
//! over them per CG iteration (n·m kernel entries a pass), as Rudi et al.'s FALKON does. The
//! second is what makes the paper's m = 10·√n affordable: 19,800 landmarks on the pendulum's
//! 3.92 M pairs would be 1.5e15 flops of accumulation.

use kernel_core::{Predictor, StreamingRegressor};
use ndarray::linalg::general_mat_mul;
use ndarray::{s, Array1, Array2, ArrayView2};
use rand::Rng;
use rayon::prelude::*;

use crate::error::StreamError;
use crate::falkon::{solve_with, Expansion, FalkonParams};
use crate::kernel::{gaussian_kernel, kernel_row, kernel_scale};
use crate::statistics::{LevelStatistics, CHUNK};

/// FALKON with one bandwidth over a whole stream: a [`StreamingRegressor`] whose statistics
/// are sums over the blocks pushed ([`StreamingRegressor::push_rows`] adds a block at once) and
/// which solves once, when finished.
pub struct FalkonBaseline {
    stats: LevelStatistics,
    falkon: FalkonParams,
    /// The solve, once finished.
    fitted: Option<Expansion>,
}

impl FalkonBaseline {
    /// The landmarks (one per row, drawn by the caller: the paper draws m = 10·√n uniformly with
    /// replacement from the training points) and the bandwidth.
    pub fn new(
        landmarks: Array2<f64>,
        bandwidth: f64,
        targets: usize,
        falkon: FalkonParams,
    ) -> Result<Self, StreamError> {
        falkon.check()?;
        Ok(Self {
            stats: LevelStatistics::new(landmarks, bandwidth, targets)?,
            falkon,
            fitted: None,
        })
    }

    /// The solve of the whole stream, once [`StreamingRegressor::finish`]ed.
    pub fn expansion(&self) -> Option<&Expansion> {
        self.fitted.as_ref()
    }
}

/// f(x) of a FALKON solve; an error before it exists.
fn predict_fitted(
    fitted: Option<&Expansion>,
    x: ArrayView2<f64>,
) -> Result<Array2<f64>, StreamError> {
    match fitted {
        Some(e) => e.predict(x),
        None => Err(StreamError::invalid_input(
            "prediction",
            "before the solve",
            "finish() first",
        )),
    }
}

/// One point as a block of one row.
fn one_row(v: &[f64]) -> ArrayView2<'_, f64> {
    ArrayView2::from_shape((1, v.len()), v).expect("one row")
}

impl Predictor for FalkonBaseline {
    type Output = Array2<f64>;
    type Error = StreamError;

    /// f(x) of the finished solve; an error before [`StreamingRegressor::finish`].
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>, StreamError> {
        predict_fitted(self.fitted.as_ref(), x)
    }
}

impl StreamingRegressor for FalkonBaseline {
    /// Accumulates one point (a block of one row).
    fn push<R: Rng + ?Sized>(
        &mut self,
        x: &[f64],
        y: &[f64],
        rng: &mut R,
    ) -> Result<(), StreamError> {
        self.push_rows(one_row(x), one_row(y), rng)
    }

    /// Accumulates a block of the stream into the statistics at once.
    fn push_rows<R: Rng + ?Sized>(
        &mut self,
        x: ArrayView2<f64>,
        y: ArrayView2<f64>,
        _rng: &mut R,
    ) -> Result<(), StreamError> {
        self.fitted = None;
        self.stats.add(x, y)
    }

    /// Solves once the stream has been seen.
    fn finish<R: Rng + ?Sized>(&mut self, _rng: &mut R) -> Result<(), StreamError> {
        self.fitted = Some(Expansion::fit(&self.stats, self.falkon)?);
        Ok(())
    }
}

/// Rows a pass over the stored data gives one task (its partial sum); the partition, and the
/// order in which the partial sums are added, do not depend on the thread count.
const PASS_TASK: usize = 16_384;
/// Rows whose kernel block (rows × m) one product handles.
const PASS_BLOCK: usize = 32;

/// The right-hand factor of one block of a pass: f(K_b, the block's rows) (rows × columns).
type BlockFactor<'a> = dyn Fn(ArrayView2<f64>, std::ops::Range<usize>) -> Array2<f64> + Sync + 'a;

/// FALKON with one bandwidth on the stored rows (Rudi, Carratino, Rosasco 2017, the form in
/// which FALKON is usually run): the rows pushed are kept, and each CG iteration computes
/// KᵀK u = Σ_b K_bᵀ (K_b u) in one pass over them, blocks of rows at a time, the kernel blocks
/// recomputed (n·m entries a pass, none stored); Z = Kᵀ Y is one more pass. The solve is
/// [`FalkonBaseline`]'s (`falkon::solve_with`), the same up to rounding: KᵀK u is summed in
/// another order. Memory: the rows and a few m × m matrices (K_mm and its two Cholesky
/// factors), never n × m.
pub struct MatrixFreeFalkon {
    landmarks: Array2<f64>,
    bandwidth: f64,
    targets: usize,
    falkon: FalkonParams,
    x: Vec<f64>,
    y: Vec<f64>,
    passes: usize,
    fitted: Option<Expansion>,
}

impl MatrixFreeFalkon {
    /// The landmarks (one per row; the paper draws m = 10·√n uniformly with replacement from
    /// the training points), the bandwidth and the number of targets.
    pub fn new(
        landmarks: Array2<f64>,
        bandwidth: f64,
        targets: usize,
        falkon: FalkonParams,
    ) -> Result<Self, StreamError> {
        falkon.check()?;
        if !(bandwidth.is_finite() && bandwidth > 0.0) {
            return Err(StreamError::invalid_input(
                "bandwidth",
                bandwidth,
                "a finite number > 0",
            ));
        }
        if landmarks.nrows() == 0 || landmarks.ncols() == 0 || targets == 0 {
            return Err(StreamError::invalid_input(
                "landmarks x dimensions x targets",
                format!("{:?} x {targets}", landmarks.dim()),
                "at least one of each",
            ));
        }
        Ok(Self {
            landmarks: landmarks.as_standard_layout().to_owned(),
            bandwidth,
            targets,
            falkon,
            x: Vec::new(),
            y: Vec::new(),
            passes: 0,
            fitted: None,
        })
    }

    /// The solve, once finished.
    pub fn expansion(&self) -> Option<&Expansion> {
        self.fitted.as_ref()
    }

    /// Rows stored.
    pub fn rows(&self) -> usize {
        self.x.len() / self.landmarks.ncols()
    }

    /// Passes over the rows the last solve made (Z, then one per lockstep CG iteration).
    pub fn passes(&self) -> usize {
        self.passes
    }

    /// Stores a block of rows (points and their targets); an error, storing nothing, for
    /// rows of the wrong width or count.
    pub fn add_rows(&mut self, x: ArrayView2<f64>, y: ArrayView2<f64>) -> Result<(), StreamError> {
        kernel_core::error::check_columns(
            "columns of the points vs the landmarks'",
            x,
            self.landmarks.ncols(),
        )?;
        kernel_core::error::check_columns("columns of the targets", y, self.targets)?;
        if x.nrows() != y.nrows() {
            return Err(StreamError::shape(
                "rows of the targets",
                x.nrows(),
                y.nrows(),
            ));
        }
        self.fitted = None;
        self.x.extend(x.iter());
        self.y.extend(y.iter());
        Ok(())
    }

    /// Solves from the stored rows; `progress(pass, most)` is called before each pass (`most`:
    /// 1 + the CG iterations allowed; the solve may stop earlier).
    pub fn solve(&mut self, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<(), StreamError> {
        let n = self.rows();
        let most = 1 + self.falkon.cg_max_iterations;
        let passes = std::sync::atomic::AtomicUsize::new(0);
        let pass = |f: &BlockFactor, columns: usize| {
            let done = passes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            progress(done, most);
            self.pass(f, columns)
        };
        let p = self.targets;
        let z = pass(
            &|_, rows| {
                ArrayView2::from_shape((rows.len(), p), &self.y[rows.start * p..rows.end * p])
                    .expect("stored targets")
                    .to_owned()
            },
            p,
        );
        let k_mm = gaussian_kernel(self.landmarks.view(), self.landmarks.view(), self.bandwidth);
        let m = self.landmarks.nrows();
        let alpha = solve_with(
            k_mm,
            |us: &[Array1<f64>]| {
                let c = us.len();
                let mut u = Array2::zeros((m, c));
                for (j, v) in us.iter().enumerate() {
                    u.column_mut(j).assign(v);
                }
                let ktku = pass(&|kb, _| kb.dot(&u), c);
                Ok((0..c).map(|j| ktku.column(j).to_owned()).collect())
            },
            z.view(),
            n,
            self.falkon,
        )?;
        self.passes = passes.into_inner();
        self.fitted = Some(Expansion {
            landmarks: self.landmarks.clone(),
            bandwidth: self.bandwidth,
            alpha,
        });
        Ok(())
    }

    /// Σ over blocks b of the stored rows of K_bᵀ f(K_b, rows of b) (m × `columns`), with
    /// f(K_b, rows) a (rows × `columns`) matrix: tasks of [`PASS_TASK`] rows in parallel, each
    /// summing its blocks in order, the tasks' sums added in order.
    fn pass(&self, f: &BlockFactor, columns: usize) -> Array2<f64> {
        let (m, d) = self.landmarks.dim();
        let n = self.rows();
        let lm = self.landmarks.as_slice().expect("standard layout");
        let scale = kernel_scale(self.bandwidth);
        let partial: Vec<Array2<f64>> = (0..n.div_ceil(PASS_TASK))
            .into_par_iter()
            .map(|task| {
                let mut acc = Array2::zeros((m, columns));
                let mut kb = Array2::zeros((PASS_BLOCK, m));
                let end = ((task + 1) * PASS_TASK).min(n);
                let mut start = task * PASS_TASK;
                while start < end {
                    let rows = start..(start + PASS_BLOCK).min(end);
                    let b = rows.len();
                    for (i, out) in kb.outer_iter_mut().take(b).enumerate() {
                        let xi = &self.x[(start + i) * d..(start + i + 1) * d];
                        kernel_row(xi, lm, scale, out.into_slice().expect("row"));
                    }
                    let block = kb.slice(s![..b, ..]);
                    let v = f(block, rows);
                    general_mat_mul(1.0, &block.t(), &v, 1.0, &mut acc);
                    start += b;
                }
                acc
            })
            .collect();
        partial
            .into_iter()
            .reduce(|a, b| a + b)
            .unwrap_or_else(|| Array2::zeros((m, columns)))
    }
}

impl Predictor for MatrixFreeFalkon {
    type Output = Array2<f64>;
    type Error = StreamError;

    /// f(x) of the finished solve; an error before [`StreamingRegressor::finish`].
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>, StreamError> {
        predict_fitted(self.fitted.as_ref(), x)
    }
}

impl StreamingRegressor for MatrixFreeFalkon {
    /// Stores one point.
    fn push<R: Rng + ?Sized>(
        &mut self,
        x: &[f64],
        y: &[f64],
        rng: &mut R,
    ) -> Result<(), StreamError> {
        self.push_rows(one_row(x), one_row(y), rng)
    }

    /// Stores a block of rows ([`MatrixFreeFalkon::add_rows`]).
    fn push_rows<R: Rng + ?Sized>(
        &mut self,
        x: ArrayView2<f64>,
        y: ArrayView2<f64>,
        _rng: &mut R,
    ) -> Result<(), StreamError> {
        self.add_rows(x, y)
    }

    /// Solves once the stream has been seen (without progress reports; [`Self::solve`]).
    fn finish<R: Rng + ?Sized>(&mut self, _rng: &mut R) -> Result<(), StreamError> {
        if self.rows() == 0 {
            return Err(StreamError::invalid_input(
                "rows",
                0,
                "at least one row before the solve",
            ));
        }
        self.solve(&|_, _| {})
    }
}

/// The authors' choice of FALKON's bandwidth (spec §7, `*_FALKON_choose_bw.py`): for each
/// bandwidth of the grid, FALKON on the training rows with the given landmarks, scored by the
/// mean squared error over every target of the validation rows; the first bandwidth with the
/// smallest error wins. Returns it and the errors, in grid order. (The authors' scripts carry
/// KᵀK and Z over from one bandwidth of the grid to the next; each fit here starts afresh.)
/// `progress(done, grid)` is called before each fit.
pub fn choose_bandwidth(
    train: (ArrayView2<f64>, ArrayView2<f64>),
    validation: (ArrayView2<f64>, ArrayView2<f64>),
    landmarks: ArrayView2<f64>,
    grid: &[f64],
    falkon: FalkonParams,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(f64, Vec<f64>), StreamError> {
    if grid.is_empty() || validation.0.nrows() == 0 {
        return Err(StreamError::invalid_input(
            "bandwidth grid x validation rows",
            format!("{} x {}", grid.len(), validation.0.nrows()),
            "at least one of each",
        ));
    }
    kernel_core::error::check_columns(
        "columns of the validation targets",
        validation.1,
        train.1.ncols(),
    )?;
    let mut errors = Vec::with_capacity(grid.len());
    for (done, &bandwidth) in grid.iter().enumerate() {
        progress(done, grid.len());
        let mut f =
            MatrixFreeFalkon::new(landmarks.to_owned(), bandwidth, train.1.ncols(), falkon)?;
        f.add_rows(train.0, train.1)?;
        f.solve(&|_, _| {})?;
        let residual = f.predict(validation.0)? - validation.1;
        errors.push(residual.mapv(|v| v * v).mean().unwrap_or(f64::NAN));
    }
    // The first smallest error (a NaN error never wins).
    let best = (0..grid.len())
        .filter(|&i| !errors[i].is_nan())
        .fold(None, |best: Option<usize>, i| match best {
            Some(b) if errors[b] <= errors[i] => Some(b),
            _ => Some(i),
        })
        .ok_or_else(|| {
            StreamError::invalid_input("validation errors", "all NaN", "a finite error")
        })?;
    Ok((grid[best], errors))
}

/// LP-KRR: level l (bandwidth r₀·2^{−l}, the fixed landmarks) is fitted to the residual of the
/// levels before it from the next `points_per_level` streamed points; levels up to `max_level`
/// (a [`StreamingRegressor`], complete once its last level is fitted).
/// Points are buffered in blocks of at most [`CHUNK`] rows (the residual of a block is one
/// prediction, its statistics one BLAS update): the same sums as point by point, since the fitted
/// levels do not change while a level collects.
pub struct LpKrr {
    landmarks: Array2<f64>,
    r0: f64,
    points_per_level: usize,
    max_level: usize,
    falkon: FalkonParams,
    current: Option<LevelStatistics>,
    buffer_x: Vec<f64>,
    buffer_y: Vec<f64>,
    fitted: Vec<Expansion>,
    /// Points streamed when each level was fitted.
    fitted_after: Vec<u64>,
    seen: u64,
}

impl LpKrr {
    pub fn new(
        landmarks: Array2<f64>,
        r0: f64,
        points_per_level: usize,
        max_level: usize,
        falkon: FalkonParams,
    ) -> Result<Self, StreamError> {
        falkon.check()?;
        if points_per_level == 0 {
            return Err(StreamError::InvalidParameter {
                name: "points_per_level",
                value: "0".into(),
                expected: "at least 1",
            });
        }
        if !(r0.is_finite() && r0 > 0.0) {
            return Err(StreamError::InvalidParameter {
                name: "r0",
                value: r0.to_string(),
                expected: "a finite radius > 0",
            });
        }
        Ok(Self {
            landmarks,
            r0,
            points_per_level,
            max_level,
            falkon,
            current: None,
            buffer_x: Vec::new(),
            buffer_y: Vec::new(),
            fitted: Vec::new(),
            fitted_after: Vec::new(),
            seen: 0,
        })
    }

    /// Prediction of the first `levels` fitted levels (all when `None`).
    pub fn predict_levels(
        &self,
        x: ArrayView2<f64>,
        levels: Option<usize>,
    ) -> Result<Array2<f64>, StreamError> {
        kernel_core::error::check_columns(
            "columns of the points vs the landmarks'",
            x,
            self.landmarks.ncols(),
        )?;
        let take = levels.unwrap_or(self.fitted.len()).min(self.fitted.len());
        let mut f: Option<Array2<f64>> = None;
        for e in &self.fitted[..take] {
            let p = e.predict(x)?;
            f = Some(match f {
                Some(acc) => acc + p,
                None => p,
            });
        }
        Ok(f.unwrap_or_else(|| {
            Array2::zeros((
                x.nrows(),
                self.fitted.first().map_or(1, |e| e.alpha.ncols()),
            ))
        }))
    }

    /// Streams one point ([`StreamingRegressor::push`]); returns whether every level up to
    /// `max_level` is fitted.
    pub fn push_point(&mut self, x: &[f64], y: &[f64]) -> Result<bool, StreamError> {
        if self.fitted.len() > self.max_level {
            return Ok(true);
        }
        let d = self.landmarks.ncols();
        let p = if self.buffer_x.is_empty() {
            y.len()
        } else {
            self.buffer_y.len() * d / self.buffer_x.len()
        };
        if x.len() != d {
            return Err(StreamError::shape(
                "coordinates of a streamed point vs the landmarks'",
                d,
                x.len(),
            ));
        }
        if y.len() != p || p == 0 {
            return Err(StreamError::shape(
                "targets of a streamed point vs the stream's (at least 1)",
                p.max(1),
                y.len(),
            ));
        }
        crate::error::check_finite_point(x, y, self.seen)?;
        self.seen += 1;
        self.buffer_x.extend_from_slice(x);
        self.buffer_y.extend_from_slice(y);
        let buffered = self.buffer_x.len() / d;
        let collected = self.current.as_ref().map_or(0, LevelStatistics::rows);
        if buffered >= CHUNK || collected + buffered >= self.points_per_level {
            self.flush()?;
        }
        Ok(self.fitted.len() > self.max_level)
    }

    /// Adds the buffered points to the collecting level and fits it once it has its points.
    fn flush(&mut self) -> Result<(), StreamError> {
        let d = self.landmarks.ncols();
        let rows = self.buffer_x.len() / d;
        if rows == 0 {
            return Ok(());
        }
        let p = self.buffer_y.len() / rows;
        let x = ArrayView2::from_shape((rows, d), &self.buffer_x).expect("rows of d values");
        let y = ArrayView2::from_shape((rows, p), &self.buffer_y).expect("rows of p values");
        let residual = &y - &self.predict_levels(x, None)?;
        let level = self.fitted.len();
        let stats = match &mut self.current {
            Some(s) => s,
            None => {
                let r = self.r0 / f64::powi(2.0, level as i32);
                self.current
                    .insert(LevelStatistics::new(self.landmarks.clone(), r, p)?)
            }
        };
        stats.add(x, residual.view())?;
        self.buffer_x.clear();
        self.buffer_y.clear();
        if stats.rows() >= self.points_per_level {
            self.fit()?;
        }
        Ok(())
    }

    fn fit(&mut self) -> Result<(), StreamError> {
        if let Some(stats) = self.current.take() {
            if stats.rows() > 0 {
                self.fitted.push(Expansion::fit(&stats, self.falkon)?);
                self.fitted_after.push(self.seen);
            }
        }
        Ok(())
    }

    /// Fitted levels so far.
    pub fn levels(&self) -> usize {
        self.fitted.len()
    }

    /// The fitted levels, shallowest first.
    pub fn expansions(&self) -> &[Expansion] {
        &self.fitted
    }

    /// Points streamed when each level was fitted.
    pub fn fitted_after(&self) -> &[u64] {
        &self.fitted_after
    }
}

impl Predictor for LpKrr {
    type Output = Array2<f64>;
    type Error = StreamError;

    /// The sum of the fitted levels ([`LpKrr::predict_levels`] of all).
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>, StreamError> {
        self.predict_levels(x, None)
    }
}

impl StreamingRegressor for LpKrr {
    /// [`LpKrr::push_point`]; LP-KRR draws nothing while streaming.
    fn push<R: Rng + ?Sized>(
        &mut self,
        x: &[f64],
        y: &[f64],
        _rng: &mut R,
    ) -> Result<(), StreamError> {
        self.push_point(x, y).map(|_| ())
    }

    /// End of the stream: fits the level collecting with the points it has.
    fn finish<R: Rng + ?Sized>(&mut self, _rng: &mut R) -> Result<(), StreamError> {
        if self.fitted.len() <= self.max_level {
            self.flush()?;
            self.fit()?;
        }
        Ok(())
    }

    /// Every level up to `max_level` is fitted.
    fn is_complete(&self) -> bool {
        self.fitted.len() > self.max_level
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Axis;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn f(x: f64) -> f64 {
        (1.0 / (x + 0.05)).sin()
    }

    /// The matrix-free FALKON is the accumulated one's solve: the same predictions up to the
    /// order of the sums (two targets, 2-D points over several pass tasks), one pass for Z and
    /// one per CG iteration, and the same bits whatever the thread count.
    #[test]
    fn matrix_free_falkon_is_the_accumulated_solve_in_another_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 2 * PASS_TASK + 1_000;
        let x: Array2<f64> = Array2::from_shape_fn((n, 2), |_| rng.random_range(-1.0..1.0));
        let y = Array2::from_shape_fn((n, 2), |(i, j)| {
            let (a, b) = (x[[i, 0]], x[[i, 1]]);
            if j == 0 {
                (3.0 * a).sin() * b
            } else {
                (a * a + b).cos()
            }
        });
        let idx: Vec<usize> = (0..150).map(|_| rng.random_range(0..n)).collect();
        let lm = x.select(Axis(0), &idx);
        let test: Array2<f64> = Array2::from_shape_fn((500, 2), |_| rng.random_range(-1.0..1.0));
        let params = FalkonParams::paper();
        let mut reference = FalkonBaseline::new(lm.clone(), 0.4, 2, params).unwrap();
        reference.push_rows(x.view(), y.view(), &mut rng).unwrap();
        reference.finish(&mut rng).unwrap();
        let want = reference.predict(test.view()).unwrap();
        let fit = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut rng = ChaCha8Rng::seed_from_u64(0);
                let mut falkon = MatrixFreeFalkon::new(lm.clone(), 0.4, 2, params).unwrap();
                assert!(falkon.predict(test.view()).is_err());
                // Pushed in two blocks, as a stream would.
                let half = n / 2;
                falkon
                    .push_rows(x.slice(s![..half, ..]), y.slice(s![..half, ..]), &mut rng)
                    .unwrap();
                falkon
                    .push_rows(x.slice(s![half.., ..]), y.slice(s![half.., ..]), &mut rng)
                    .unwrap();
                let reports = std::sync::Mutex::new(Vec::new());
                falkon
                    .solve(&|pass, most| reports.lock().unwrap().push((pass, most)))
                    .unwrap();
                let reports = reports.into_inner().unwrap();
                assert_eq!(falkon.passes(), reports.len());
                assert_eq!(reports.first(), Some(&(0, 1 + params.cg_max_iterations)));
                (falkon.predict(test.view()).unwrap(), falkon.passes())
            })
        };
        let (one, passes) = fit(1);
        let (two, _) = fit(2);
        assert_eq!(passes, 1 + params.cg_max_iterations);
        let bits = |a: &Array2<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&one), bits(&two), "thread count changed the numbers");
        // Ten CG steps on an ill-conditioned system carry the sums' rounding into the iterate:
        // the predictions agree to 1e-5 (measured 9e-7) ...
        let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let gap = (&one - &want).iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(gap < 1e-5 * scale, "largest gap {gap} (scale {scale})");
        // ... and the pass itself is KᵀK u and Kᵀ Y to rounding, against the dense products.
        let mut falkon = MatrixFreeFalkon::new(lm.clone(), 0.4, 2, params).unwrap();
        falkon.push_rows(x.view(), y.view(), &mut rng).unwrap();
        let k = gaussian_kernel(x.view(), lm.view(), 0.4);
        let u = Array2::from_shape_fn((150, 3), |(i, j)| ((i * 7 + j) as f64).sin());
        let close = |got: Array2<f64>, want: Array2<f64>| {
            let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            let gap = (&got - &want).iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(gap < 1e-12 * scale, "pass gap {gap} (scale {scale})");
        };
        close(falkon.pass(&|kb, _| kb.dot(&u), 3), k.t().dot(&k.dot(&u)));
        close(
            falkon.pass(&|_, rows| y.slice(s![rows, ..]).to_owned(), 2),
            k.t().dot(&y),
        );
        // Bad input is an error, and nothing is lost.
        let mut falkon = MatrixFreeFalkon::new(lm.clone(), 0.4, 2, params).unwrap();
        assert!(falkon
            .push_rows(x.view(), y.slice(s![.., ..1]), &mut rng)
            .is_err());
        assert!(falkon.finish(&mut rng).is_err());
        assert_eq!(falkon.rows(), 0);
        assert!(MatrixFreeFalkon::new(lm, 0.0, 2, params).is_err());
    }

    /// The search scores every bandwidth as a separate FALKON fit would (the accumulated form,
    /// checked to rounding) and picks the first smallest validation error: on sin(1/(x + 0.05))
    /// neither end of a grid spanning 10 to 1e-4 wins.
    #[test]
    fn the_bandwidth_search_picks_the_best_validation_fit() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let x: Array2<f64> = Array2::from_shape_fn((6_000, 1), |_| rng.random_range(0.0..1.0));
        let y = x.mapv(f);
        let (train, val) = (s![..5_000, ..], s![5_000.., ..]);
        let idx: Vec<usize> = (0..300).map(|_| rng.random_range(0..5_000)).collect();
        let lm = x.select(Axis(0), &idx);
        let grid: Vec<f64> = (0..9).map(|i| 10f64.powf(1.0 - 0.625 * i as f64)).collect();
        let calls = std::sync::Mutex::new(0);
        let (chosen, errors) = choose_bandwidth(
            (x.slice(train), y.slice(train)),
            (x.slice(val), y.slice(val)),
            lm.view(),
            &grid,
            FalkonParams::paper(),
            &|_, _| *calls.lock().unwrap() += 1,
        )
        .unwrap();
        assert_eq!(*calls.lock().unwrap(), grid.len());
        for (&r, &e) in grid.iter().zip(&errors) {
            let mut one = FalkonBaseline::new(lm.clone(), r, 1, FalkonParams::paper()).unwrap();
            one.push_rows(x.slice(train), y.slice(train), &mut rng)
                .unwrap();
            one.finish(&mut rng).unwrap();
            let want = (one.predict(x.slice(val)).unwrap() - y.slice(val))
                .mapv(|v| v * v)
                .mean()
                .unwrap();
            assert!((e - want).abs() <= 1e-4 * want, "r = {r}: {e} vs {want}");
        }
        let best = errors.iter().cloned().fold(f64::INFINITY, f64::min);
        assert_eq!(
            chosen,
            grid[errors.iter().position(|&e| e == best).unwrap()]
        );
        assert!(chosen < grid[0] && chosen > grid[8], "{chosen}: {errors:?}");
        assert!(choose_bandwidth(
            (x.slice(train), y.slice(train)),
            (x.slice(val), y.slice(val)),
            lm.view(),
            &[],
            FalkonParams::paper(),
            &|_, _| {},
        )
        .is_err());
    }

    #[test]
    fn falkon_with_a_fitting_bandwidth_and_lp_krr_both_learn_the_stream() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let x: Array2<f64> = Array2::from_shape_fn((40_000, 1), |_| rng.random_range(0.0..1.0));
        let y = x.mapv(f);
        let test: Array2<f64> = Array2::from_shape_fn((2_000, 1), |_| rng.random_range(0.0..1.0));
        let truth = test.mapv(f);
        let mse = |p: Array2<f64>| (&p - &truth).mapv(|v| v * v).mean().unwrap();
        // 200 landmarks with replacement from the stream's first points.
        let idx: Vec<usize> = (0..200).map(|_| rng.random_range(0..40_000)).collect();
        let lm = x.select(Axis(0), &idx);
        let mut falkon = FalkonBaseline::new(lm.clone(), 0.01, 1, FalkonParams::paper()).unwrap();
        assert!(falkon.predict(test.view()).is_err());
        falkon.push_rows(x.view(), y.view(), &mut rng).unwrap();
        falkon.finish(&mut rng).unwrap();
        let one = mse(falkon.predict(test.view()).unwrap());
        assert!(one < 0.05, "FALKON MSE {one}");
        let mut lp = LpKrr::new(lm, 1.0, 4_000, 8, FalkonParams::paper()).unwrap();
        for i in 0..40_000 {
            lp.push(&[x[[i, 0]]], &[y[[i, 0]]], &mut rng).unwrap();
            if lp.is_complete() {
                break;
            }
        }
        assert_eq!(lp.levels(), 9);
        let errors: Vec<f64> = (1..=9)
            .map(|l| mse(lp.predict_levels(test.view(), Some(l)).unwrap()))
            .collect();
        eprintln!("FALKON (r = 0.01, m = 200): {one}; LP-KRR per level: {errors:?}");
        assert!(
            errors[8] < 0.3 * errors[0],
            "LP-KRR MSE per level {errors:?}"
        );
    }
}
