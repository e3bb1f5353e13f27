//! The learning protocol (spec §5, §8): kernels fitted by L-BFGS on the negative log marginal
//! likelihood per training row, RBF and ARD from the spec's start with restarts (new Fastfood
//! draws, perturbed starts; the best marginal likelihood kept), the flexible kernels (FSARD,
//! FSGBARD, PWL, GM) and SSGPR from the fitted ARD solution, the exact ARD GP from the spec's
//! start; predictions, RMSE and MNLP.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::Rng;
use rand_distr::StandardNormal;

use crate::error::{check_inputs, check_targets, FastfoodError};
use crate::evidence::{evidence, Posterior};
use crate::exact_gp::ExactArd;
use crate::fastfood::FastfoodDraw;
use crate::kernels::{ArdPoint, Family, FeatureModel, KernelSpec};
use crate::optimise::{minimise, LbfgsSettings, Optimum, Stop};

/// What the protocol needs beyond the data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Protocol {
    /// m, frequencies (features D = 2m).
    pub m: usize,
    /// Q of GM.
    pub components: usize,
    /// K of PWL.
    pub intervals: usize,
    pub lbfgs: LbfgsSettings,
    /// Starts of RBF, ARD and the exact GP (the first at the spec's start, the others
    /// perturbed with new Fastfood draws).
    pub restarts: usize,
    /// σ²_min = this × var(y_train).
    pub noise_floor_ratio: f64,
}

impl Default for Protocol {
    fn default() -> Self {
        Self {
            m: 256,
            components: 5,
            intervals: 10,
            lbfgs: LbfgsSettings::default(),
            restarts: 1,
            noise_floor_ratio: 1e-6,
        }
    }
}

impl Protocol {
    fn spec(&self, family: Family) -> KernelSpec {
        KernelSpec {
            family,
            m: self.m,
            components: self.components,
            intervals: self.intervals,
        }
    }
}

/// A fitted feature model.
#[derive(Debug, Clone)]
pub struct Fit {
    pub model: FeatureModel,
    pub theta: Vec<f64>,
    /// Negative log marginal likelihood per training row at θ.
    pub nlml: f64,
    /// Summed over restarts.
    pub iterations: usize,
    pub evaluations: usize,
    pub stop: Stop,
}

impl Fit {
    /// The ARD point of an RBF/ARD fit (the start of the flexible kernels).
    pub fn ard_point(&self) -> ArdPoint {
        ArdPoint {
            noise: self.model.noise(&self.theta),
            signal: self.theta[1].exp(),
            lengths: self.model.lengths(&self.theta),
        }
    }
}

fn variance(y: ArrayView1<f64>) -> f64 {
    let n = y.len().max(1) as f64;
    let mean = y.sum() / n;
    y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n
}

fn noise_floor(p: &Protocol, y: ArrayView1<f64>) -> f64 {
    let v = variance(y);
    p.noise_floor_ratio * if v > 0.0 { v } else { 1.0 }
}

fn check_data(x: ArrayView2<f64>, y: ArrayView1<f64>) -> Result<(), FastfoodError> {
    check_inputs("training inputs", x, None)?;
    check_targets(&y.to_vec(), x.nrows())
}

/// `(−log p(y)/n, −∂log p/∂θ / n)` of a feature model: one marginal-likelihood evaluation
/// (features, the primal or dual solve, the backward pass).
pub fn objective(
    model: &FeatureModel,
    theta: &[f64],
    x: ArrayView2<f64>,
    y: ArrayView1<f64>,
) -> Result<(f64, Vec<f64>), FastfoodError> {
    let n = x.nrows() as f64;
    let phi = model.features(theta, x)?;
    let e = evidence(phi.view(), y, model.noise(theta), true)?;
    let g = model.gradient(theta, x, phi.view(), e.d_phi.view(), e.d_noise)?;
    Ok((-e.log_p / n, g.into_iter().map(|v| -v / n).collect()))
}

fn run(
    model: FeatureModel,
    start: Vec<f64>,
    x: ArrayView2<f64>,
    y: ArrayView1<f64>,
    lbfgs: &LbfgsSettings,
    stop: &(dyn Fn(usize) -> bool + Sync),
) -> Result<Fit, FastfoodError> {
    let f = |t: &[f64]| objective(&model, t, x, y);
    let Optimum {
        theta,
        value,
        iterations,
        evaluations,
        stop,
    } = minimise(&f, start, lbfgs, stop)?;
    Ok(Fit {
        model,
        theta,
        nlml: value,
        iterations,
        evaluations,
        stop,
    })
}

/// The start of restart `r`: the spec's for r = 0, else ℓ, σ_f² and σ² each scaled by
/// exp(N(0, ½²)).
fn perturbed<R: Rng + ?Sized>(mut p: ArdPoint, r: usize, rng: &mut R) -> ArdPoint {
    if r > 0 {
        let mut f = || (0.5 * rng.sample::<f64, _>(StandardNormal)).exp();
        p.noise *= f();
        p.signal *= f();
        for l in &mut p.lengths {
            *l *= f();
        }
    }
    p
}

/// Fits RBF or ARD: `restarts` runs, run r with the Fastfood draw and start from `rng_for(r)`;
/// the lowest negative log marginal likelihood is kept (iterations summed).
pub fn fit_ard_family<R: Rng>(
    family: Family,
    x: ArrayView2<f64>,
    y: ArrayView1<f64>,
    protocol: &Protocol,
    rng_for: &dyn Fn(usize) -> R,
    stop: &(dyn Fn(usize) -> bool + Sync),
) -> Result<Fit, FastfoodError> {
    check_data(x, y)?;
    if !matches!(family, Family::Rbf | Family::Ard) {
        return Err(FastfoodError::InvalidParameter {
            name: "family",
            value: format!("{family:?}"),
            expected: "Rbf or Ard (the other kernels start from an ARD fit)",
        });
    }
    let floor = noise_floor(protocol, y);
    let dim = x.ncols();
    let (mut best, iterations, evaluations) = best_of_restarts(protocol.restarts, |r| {
        let mut rng = rng_for(r);
        let draw = FastfoodDraw::sample(dim, protocol.m, &mut rng);
        let model = FeatureModel::new(protocol.spec(family), dim, floor, Some(draw), &mut rng)?;
        let at = perturbed(ArdPoint::default_start(dim, variance(y)), r, &mut rng);
        let start = model.start(&at, &mut rng);
        let fit = run(model, start, x, y, &protocol.lbfgs, stop)?;
        let (value, iterations, evaluations, stop) =
            (fit.nlml, fit.iterations, fit.evaluations, fit.stop);
        Ok((fit, value, iterations, evaluations, stop))
    })?;
    best.iterations = iterations;
    best.evaluations = evaluations;
    Ok(best)
}

/// Runs restart `r` for r in `0..restarts` (stopping after an interrupted one) and keeps the
/// run of the lowest value (the first on ties); returns it with the iterations and evaluations
/// summed over all runs.
fn best_of_restarts<T>(
    restarts: usize,
    mut run: impl FnMut(usize) -> Result<(T, f64, usize, usize, Stop), FastfoodError>,
) -> Result<(T, usize, usize), FastfoodError> {
    crate::error::at_least_one("restarts", restarts)?;
    let mut best: Option<(T, f64)> = None;
    let (mut iterations, mut evaluations) = (0, 0);
    for r in 0..restarts {
        let (result, value, its, evals, stop) = run(r)?;
        iterations += its;
        evaluations += evals;
        if best.as_ref().is_none_or(|(_, b)| value < *b) {
            best = Some((result, value));
        }
        if stop == Stop::Interrupted {
            break;
        }
    }
    let (best, _) = best.expect("at least one restart");
    Ok((best, iterations, evaluations))
}

/// Fits FSARD, FSGBARD, PWL, GM or SSGPR from a fitted ARD model (FSARD, FSGBARD and PWL keep
/// its Fastfood draw).
pub fn fit_from_ard<R: Rng>(
    family: Family,
    x: ArrayView2<f64>,
    y: ArrayView1<f64>,
    protocol: &Protocol,
    ard: &Fit,
    rng: &mut R,
    stop: &(dyn Fn(usize) -> bool + Sync),
) -> Result<Fit, FastfoodError> {
    check_data(x, y)?;
    let floor = noise_floor(protocol, y);
    let draw = ard.model.draws().first().cloned();
    let model = FeatureModel::new(protocol.spec(family), x.ncols(), floor, draw, rng)?;
    let start = model.start(&ard.ard_point(), rng);
    run(model, start, x, y, &protocol.lbfgs, stop)
}

/// Predictive means and variances at `test` of a fitted feature model.
pub fn predict(
    fit: &Fit,
    x: ArrayView2<f64>,
    y: ArrayView1<f64>,
    test: ArrayView2<f64>,
) -> Result<(Array1<f64>, Array1<f64>), FastfoodError> {
    let phi = fit.model.features(&fit.theta, x)?;
    let post = Posterior::new(phi.view(), y, fit.model.noise(&fit.theta))?;
    let phi_test = fit.model.features(&fit.theta, test)?;
    Ok(post.predict(phi_test.view()))
}

/// A fitted exact ARD GP.
#[derive(Debug, Clone)]
pub struct ExactFit {
    pub theta: Vec<f64>,
    pub nlml: f64,
    pub iterations: usize,
    pub evaluations: usize,
    pub stop: Stop,
    pub noise_floor: f64,
}

/// Fits the exact ARD GP (restarts as [`fit_ard_family`]).
pub fn fit_exact<R: Rng>(
    x: ArrayView2<f64>,
    y: ArrayView1<f64>,
    protocol: &Protocol,
    rng_for: &dyn Fn(usize) -> R,
    stop: &(dyn Fn(usize) -> bool + Sync),
) -> Result<ExactFit, FastfoodError> {
    check_data(x, y)?;
    let floor = noise_floor(protocol, y);
    let gp = ExactArd::new(x, y, floor)?;
    let n = x.nrows() as f64;
    let f = |t: &[f64]| {
        gp.log_p(t)
            .map(|(v, g)| (-v / n, g.into_iter().map(|v| -v / n).collect()))
    };
    let (mut best, iterations, evaluations) = best_of_restarts(protocol.restarts, |r| {
        let mut rng = rng_for(r);
        let at = perturbed(ArdPoint::default_start(x.ncols(), variance(y)), r, &mut rng);
        let mut start = vec![(at.noise - floor).max(1e-3 * floor).ln(), at.signal.ln()];
        start.extend(at.lengths.iter().map(|l| l.ln()));
        let o = minimise(&f, start, &protocol.lbfgs, stop)?;
        let fit = ExactFit {
            theta: o.theta,
            nlml: o.value,
            iterations: 0,
            evaluations: 0,
            stop: o.stop,
            noise_floor: floor,
        };
        Ok((fit, o.value, o.iterations, o.evaluations, o.stop))
    })?;
    best.iterations = iterations;
    best.evaluations = evaluations;
    Ok(best)
}

/// Predictive means and variances of the exact GP.
pub fn predict_exact(
    fit: &ExactFit,
    x: ArrayView2<f64>,
    y: ArrayView1<f64>,
    test: ArrayView2<f64>,
) -> Result<(Array1<f64>, Array1<f64>), FastfoodError> {
    ExactArd::new(x, y, fit.noise_floor)?.predict(&fit.theta, test)
}

/// z-scores `train` and `test` with the training rows' statistics (decision D1). Columns
/// constant on the training rows are dropped (`drop_constant`) or only centred.
pub fn standardise(
    train: &Array2<f64>,
    test: &Array2<f64>,
    drop_constant: bool,
) -> (Array2<f64>, Array2<f64>) {
    let n = train.nrows().max(1) as f64;
    let mut keep = Vec::new();
    let mut stats = Vec::new();
    for (j, col) in train.axis_iter(Axis(1)).enumerate() {
        let mean = col.sum() / n;
        let sd = (col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
        if sd > 1e-12 * (1.0 + mean.abs()) {
            keep.push(j);
            stats.push((mean, sd));
        } else if !drop_constant {
            keep.push(j);
            stats.push((mean, 1.0));
        }
    }
    let z = |x: &Array2<f64>| {
        Array2::from_shape_fn((x.nrows(), keep.len()), |(i, k)| {
            (x[[i, keep[k]]] - stats[k].0) / stats[k].1
        })
    };
    (z(train), z(test))
}

/// Root mean squared error.
pub fn rmse(mean: &Array1<f64>, y: ArrayView1<f64>) -> f64 {
    (mean
        .iter()
        .zip(y)
        .map(|(m, t)| (m - t).powi(2))
        .sum::<f64>()
        / y.len().max(1) as f64)
        .sqrt()
}

/// Mean negative log predictive density of Gaussian predictions.
pub fn mnlp(mean: &Array1<f64>, var: &Array1<f64>, y: ArrayView1<f64>) -> f64 {
    let ln_2pi = (2.0 * std::f64::consts::PI).ln();
    mean.iter()
        .zip(var)
        .zip(y)
        .map(|((m, v), t)| 0.5 * (ln_2pi + v.ln() + (t - m).powi(2) / v))
        .sum::<f64>()
        / y.len().max(1) as f64
}
