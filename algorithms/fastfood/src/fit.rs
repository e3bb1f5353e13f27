//! The learning protocol (spec §5, §8): kernels fitted by L-BFGS on the negative log marginal
//! likelihood per training row, RBF and ARD from the spec's start with restarts (new Fastfood
//! draws, perturbed starts; the best marginal likelihood kept), the flexible kernels (FSARD,
//! FSGBARD, PWL, GM) and SSGPR from the fitted ARD solution, the exact ARD GP from the spec's
//! start; predictions, RMSE and MNLP.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::Rng;
use rand_distr::StandardNormal;

use kernel_core::{CoreError, DenseFeatures, FeatureMap, Features, Predictor};

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
    /// How PWL's radii are placed on its radial distribution.
    pub pwl_radii: RadiusSampling,
}

/// How the uniforms behind PWL's radii (inverse CDF, decision D5) are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum RadiusSampling {
    /// The paper's choice (§4, "i/m + ξ"): one uniform per m-quantile, a shared offset ξ.
    #[default]
    Stratified,
    /// Independent uniforms (the ARD draw's own, which PWL shared until 2026-12-04).
    Iid,
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
            pwl_radii: RadiusSampling::default(),
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
    let (phi, z) = model.features_and_projections(theta, x, true)?;
    let e = evidence(
        phi.view(),
        y,
        model.noise(theta),
        model.evidence_gradients(),
    )?;
    let g = model.gradient(theta, x, phi.view(), z.as_ref().map(|z| z.view()), &e)?;
    // The next evaluation reuses the n × D matrices' memory (crate::blas::scratch, spare).
    crate::blas::recycle(phi);
    crate::blas::recycle(e.d_phi);
    if let Some(z) = z {
        crate::blas::recycle(z);
    }
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
    let mut draw = ard.model.draws().first().cloned();
    if family == Family::Pwl && protocol.pwl_radii == RadiusSampling::Stratified {
        if let Some(d) = draw.as_mut() {
            d.stratify_uniforms(rng);
        }
    }
    let model = FeatureModel::new(protocol.spec(family), x.ncols(), floor, draw, rng)?;
    let start = model.start(&ard.ard_point(), rng);
    run(model, start, x, y, &protocol.lbfgs, stop)
}

/// A Gaussian predictive distribution per test row (noise included).
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianPrediction {
    pub mean: Array1<f64>,
    pub variance: Array1<f64>,
}

impl Fit {
    /// The posterior of the fitted feature model on its training data `(x, y)`: a
    /// [`Predictor`] of the Gaussian predictive at new rows.
    pub fn posterior(
        &self,
        x: ArrayView2<f64>,
        y: ArrayView1<f64>,
    ) -> Result<FeaturePosterior<'_>, FastfoodError> {
        let phi = self.model.features(&self.theta, x)?;
        let posterior = Posterior::new(phi.view(), y, self.model.noise(&self.theta))?;
        Ok(FeaturePosterior {
            fit: self,
            posterior,
        })
    }
}

/// A fitted feature model with the posterior of its training data ([`Fit::posterior`]).
#[derive(Debug, Clone)]
pub struct FeaturePosterior<'a> {
    fit: &'a Fit,
    posterior: Posterior,
}

impl Predictor for FeaturePosterior<'_> {
    type Output = GaussianPrediction;
    type Error = FastfoodError;

    /// Predictive means and variances at the rows of `test`.
    fn predict(&self, test: ArrayView2<f64>) -> Result<GaussianPrediction, FastfoodError> {
        let phi_test = self.fit.model.features(&self.fit.theta, test)?;
        let (mean, variance) = self.posterior.predict(phi_test.view());
        Ok(GaussianPrediction { mean, variance })
    }
}

impl FeatureMap for Fit {
    /// One block: the features at θ already carry their amplitudes (K ≈ ΦΦᵀ).
    fn n_blocks(&self) -> usize {
        1
    }

    /// Φ(x) at the fitted θ, one dense block of D = 2m columns.
    fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError> {
        let phi = self.model.features(&self.theta, x)?;
        let columns = phi.ncols();
        Ok(Features::Dense(DenseFeatures::new(phi, vec![columns])?))
    }
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

/// Fits the exact GP of `method` (`ExactArd`, or `ExactRbf`: one lengthscale shared by every
/// input, θ = `[log(σ² − σ²_min), log σ_f², log ℓ]`, its gradient in log ℓ the sum of the ARD
/// gradient's). The fit's θ is stored in the ARD form (ℓ repeated), so both predict alike.
pub fn fit_exact_gp<R: Rng>(
    method: Method,
    x: ArrayView2<f64>,
    y: ArrayView1<f64>,
    protocol: &Protocol,
    rng_for: &dyn Fn(usize) -> R,
    stop: &(dyn Fn(usize) -> bool + Sync),
) -> Result<ExactFit, FastfoodError> {
    let tied = match method {
        Method::ExactArd => false,
        Method::ExactRbf => true,
        Method::Features(_) => {
            return Err(FastfoodError::InvalidParameter {
                name: "method",
                value: format!("{method:?}"),
                expected: "exact_ard or exact_rbf",
            })
        }
    };
    check_data(x, y)?;
    let floor = noise_floor(protocol, y);
    let gp = ExactArd::new(x, y, floor)?;
    let (n, d) = (x.nrows() as f64, x.ncols());
    let ard_theta = |t: &[f64]| -> Vec<f64> {
        if tied {
            let mut full = t[..2].to_vec();
            full.extend(std::iter::repeat_n(t[2], d));
            full
        } else {
            t.to_vec()
        }
    };
    let f = |t: &[f64]| {
        gp.log_p(&ard_theta(t)).map(|(v, g)| {
            let g = if tied {
                vec![g[0], g[1], g[2..].iter().sum()]
            } else {
                g
            };
            (-v / n, g.into_iter().map(|v| -v / n).collect())
        })
    };
    let (mut best, iterations, evaluations) = best_of_restarts(protocol.restarts, |r| {
        let mut rng = rng_for(r);
        let at = perturbed(ArdPoint::default_start(d, variance(y)), r, &mut rng);
        let mut start = vec![(at.noise - floor).max(1e-3 * floor).ln(), at.signal.ln()];
        if tied {
            start.push(at.lengths.iter().map(|l| l.ln()).sum::<f64>() / d as f64);
        } else {
            start.extend(at.lengths.iter().map(|l| l.ln()));
        }
        let o = minimise(&f, start, &protocol.lbfgs, stop)?;
        let fit = ExactFit {
            theta: ard_theta(&o.theta),
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

impl ExactFit {
    /// The exact GP at the fitted θ on its training data `(x, y)`: a [`Predictor`] of the
    /// Gaussian predictive at new rows.
    pub fn posterior<'a>(
        &'a self,
        x: ArrayView2<'a, f64>,
        y: ArrayView1<'a, f64>,
    ) -> Result<ExactPosterior<'a>, FastfoodError> {
        Ok(ExactPosterior {
            gp: ExactArd::new(x, y, self.noise_floor)?,
            theta: &self.theta,
        })
    }
}

/// The exact ARD GP at a fitted θ ([`ExactFit::posterior`]).
pub struct ExactPosterior<'a> {
    gp: ExactArd<'a>,
    theta: &'a [f64],
}

impl Predictor for ExactPosterior<'_> {
    type Output = GaussianPrediction;
    type Error = FastfoodError;

    /// Predictive means and variances of the exact GP at the rows of `test`.
    fn predict(&self, test: ArrayView2<f64>) -> Result<GaussianPrediction, FastfoodError> {
        let (mean, variance) = self.gp.predict(self.theta, test)?;
        Ok(GaussianPrediction { mean, variance })
    }
}

/// A regression method of the crate, as a config names it: a feature family fitted by its
/// marginal likelihood (`rbf`, `ard`, `fsard`, `fsgbard`, `gm`, `pwl`, `ssgpr`), or the exact
/// ARD GP (`exact_ard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Features(Family),
    ExactArd,
    /// The exact GP with one lengthscale (the isotropic RBF kernel).
    ExactRbf,
}

impl Method {
    /// The feature family (`None` for the exact GP).
    pub fn family(self) -> Option<Family> {
        match self {
            Method::Features(f) => Some(f),
            Method::ExactArd | Method::ExactRbf => None,
        }
    }
}

#[cfg(feature = "serde")]
mod method_serde {
    use super::{Family, Method};
    use serde::de::{Error, IntoDeserializer};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    const EXACT: &str = "exact_ard";
    const EXACT_RBF: &str = "exact_rbf";

    impl Serialize for Method {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self {
                Method::Features(f) => f.serialize(s),
                Method::ExactArd => s.serialize_str(EXACT),
                Method::ExactRbf => s.serialize_str(EXACT_RBF),
            }
        }
    }

    impl<'de> Deserialize<'de> for Method {
        /// A family's name, `exact_ard` or `exact_rbf`.
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let name = String::deserialize(d)?;
            if name == EXACT {
                return Ok(Method::ExactArd);
            }
            if name == EXACT_RBF {
                return Ok(Method::ExactRbf);
            }
            Family::deserialize(name.as_str().into_deserializer())
                .map(Method::Features)
                .map_err(|e: serde::de::value::Error| {
                    D::Error::custom(format!("{e}, `{EXACT}` or `{EXACT_RBF}`"))
                })
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimise::LbfgsSettings;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The default protocol with L-BFGS capped at `max_iterations`.
    fn capped(max_iterations: usize) -> Protocol {
        Protocol {
            lbfgs: LbfgsSettings {
                max_iterations,
                ..LbfgsSettings::default()
            },
            ..Protocol::default()
        }
    }

    fn never(_: usize) -> bool {
        false
    }

    fn rng_for(r: usize) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(r as u64)
    }

    /// The posterior predicts as the evidence module's [`Posterior`] on the fitted features;
    /// the fitted model's feature map is those features in one block.
    #[test]
    fn a_fit_predicts_through_its_posterior_and_maps_points_to_its_features() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let x = Array2::from_shape_fn((40, 2), |_| rng.random::<f64>() * 2.0 - 1.0);
        let y = Array1::from_shape_fn(40, |i| (2.0 * x[[i, 0]]).sin() + 0.3 * x[[i, 1]]);
        let test = Array2::from_shape_fn((7, 2), |_| rng.random::<f64>());
        let protocol = capped(5);
        let fit =
            fit_ard_family(Family::Ard, x.view(), y.view(), &protocol, &rng_for, &never).unwrap();
        let got = fit
            .posterior(x.view(), y.view())
            .unwrap()
            .predict(test.view())
            .unwrap();
        let phi = fit.model.features(&fit.theta, x.view()).unwrap();
        let post = Posterior::new(phi.view(), y.view(), fit.model.noise(&fit.theta)).unwrap();
        let phi_test = fit.model.features(&fit.theta, test.view()).unwrap();
        let (mean, variance) = post.predict(phi_test.view());
        assert_eq!(got, GaussianPrediction { mean, variance });
        match FeatureMap::features(&fit, test.view()).unwrap() {
            Features::Dense(f) => assert_eq!(f.values(), phi_test.view()),
            Features::OneHot(_) => panic!("dense features"),
        }
        assert!(fit
            .posterior(x.view(), y.view())
            .unwrap()
            .predict(Array2::zeros((2, 3)).view())
            .is_err());
    }

    /// The exact RBF GP is the exact ARD GP with every lengthscale equal: the same NLML and
    /// predictions at its fitted θ (stored in the ARD form), a gradient in log ℓ that is zero at
    /// its optimum as central differences of the ARD objective along the tied direction say,
    /// and an optimum no better than ARD's (ARD nests it), on data with one irrelevant input.
    #[test]
    fn exact_rbf_is_exact_ard_with_tied_lengthscales() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let x = Array2::from_shape_fn((50, 3), |_| rng.random::<f64>() * 2.0 - 1.0);
        let y = Array1::from_shape_fn(50, |i| (2.0 * x[[i, 0]]).sin() + 0.05 * x[[i, 2]]);
        let protocol = capped(200);
        let fit = |m| fit_exact_gp(m, x.view(), y.view(), &protocol, &rng_for, &never).unwrap();
        let (rbf, ard) = (fit(Method::ExactRbf), fit(Method::ExactArd));
        assert_eq!(rbf.theta.len(), 5);
        assert!(rbf.theta[2] == rbf.theta[3] && rbf.theta[3] == rbf.theta[4]);
        let gp = ExactArd::new(x.view(), y.view(), rbf.noise_floor).unwrap();
        let (log_p, grad) = gp.log_p(&rbf.theta).unwrap();
        assert!(
            (-log_p / 50.0 - rbf.nlml).abs() < 1e-12,
            "{log_p} {}",
            rbf.nlml
        );
        // Along the tied direction the objective is flat at the optimum.
        let at = |h: f64| {
            let mut t = rbf.theta.clone();
            t[2..].iter_mut().for_each(|v| *v += h);
            gp.log_p(&t).unwrap().0
        };
        let fd = (at(1e-5) - at(-1e-5)) / 2e-5;
        let tied: f64 = grad[2..].iter().sum();
        assert!(
            (fd - tied).abs() < 1e-4 * (1.0 + tied.abs()),
            "{fd} vs {tied}"
        );
        assert!(
            tied.abs() < 1e-3 * 50.0,
            "not at a stationary point: {tied}"
        );
        // ARD nests RBF: its optimum is at least as good, and better with an irrelevant input.
        assert!(ard.nlml < rbf.nlml, "ard {} rbf {}", ard.nlml, rbf.nlml);
        let predicted = rbf
            .posterior(x.view(), y.view())
            .unwrap()
            .predict(x.view())
            .unwrap();
        let (mean, _) = gp.predict(&rbf.theta, x.view()).unwrap();
        assert_eq!(predicted.mean, mean);
        // A feature family is not an exact GP.
        let err = fit_exact_gp(
            Method::Features(Family::Rbf),
            x.view(),
            y.view(),
            &protocol,
            &rng_for,
            &never,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("exact_rbf"), "{err}");
    }

    #[cfg(feature = "serde")]
    #[test]
    fn methods_are_named_as_configs_write_them() {
        for (name, method) in [
            ("rbf", Method::Features(Family::Rbf)),
            ("fsgbard", Method::Features(Family::Fsgbard)),
            ("ssgpr", Method::Features(Family::Ssgpr)),
            ("exact_ard", Method::ExactArd),
            ("exact_rbf", Method::ExactRbf),
        ] {
            let json = format!("\"{name}\"");
            assert_eq!(serde_json::from_str::<Method>(&json).unwrap(), method);
            assert_eq!(serde_json::to_string(&method).unwrap(), json);
        }
        let e = serde_json::from_str::<Method>("\"svm\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("svm") && e.contains("exact_ard") && e.contains("rbf"),
            "{e}"
        );
    }

    /// The evaluation's scratch matrices (Φ and the Gram matrix, not zeroed) are written before
    /// they are read: with the thread's spare buffers replaced by NaN-filled ones of every size an
    /// evaluation takes (n × D, n × n, D × D), each family's value and gradient, features and
    /// posterior predictions keep the bits they have from fresh zeroed memory, in the dual form
    /// (n < D) and the primal one (n >= D). (This also checks that dsyrk, with beta = 0, does
    /// not read the matrix it writes.)
    #[test]
    fn scratch_memory_is_written_before_it_is_read() {
        let families = [
            Family::Rbf,
            Family::Ard,
            Family::Fsard,
            Family::Fsgbard,
            Family::Gm,
            Family::Pwl,
            Family::Ssgpr,
        ];
        std::thread::spawn(move || {
            let d = 3;
            // At least SPARE_MIN_LEN values in every matrix: n × D, and n × n or D × D.
            for (n, m) in [(150usize, 128usize), (400, 64)] {
                let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
                let x = Array2::from_shape_fn((n, d), |_| rng.random::<f64>() * 2.0 - 1.0);
                let y = Array1::from_shape_fn(n, |i| x[[i, 0]].sin() + 0.1 * x[[i, 1]]);
                for family in families {
                    let spec = KernelSpec {
                        family,
                        m,
                        components: 2,
                        intervals: 3,
                    };
                    let mut rng = ChaCha8Rng::seed_from_u64(5);
                    let model = FeatureModel::new(spec, d, 1e-6, None, &mut rng).unwrap();
                    let theta = model.start(&ArdPoint::default_start(d, 1.0), &mut rng);
                    let big = model.n_features();
                    // Φ, ∂Φ, K⁻¹ or A⁻¹ (and the Gram matrix), RBF's projections Z.
                    let stride = model.draws().first().map_or(0, |d| d.z_stride());
                    let sizes = [n * big, n * big, n * n, big * big, big * big, n * stride];
                    let bits = |v: &mut dyn Iterator<Item = f64>| -> Vec<u64> {
                        v.map(f64::to_bits).collect()
                    };
                    crate::blas::set_spare(&[], 0.0);
                    let phi = model.features(&theta, x.view()).unwrap();
                    type EntryPoint<'a> = (&'a str, Box<dyn Fn() -> Vec<u64> + 'a>);
                    let entry_points: [EntryPoint; 3] = [
                        (
                            "objective",
                            Box::new(|| {
                                let (v, g) = objective(&model, &theta, x.view(), y.view()).unwrap();
                                bits(&mut std::iter::once(v).chain(g))
                            }),
                        ),
                        (
                            "features",
                            Box::new(|| {
                                bits(&mut model.features(&theta, x.view()).unwrap().into_iter())
                            }),
                        ),
                        (
                            "posterior",
                            Box::new(|| {
                                let (mean, var) = Posterior::new(phi.view(), y.view(), 0.01)
                                    .unwrap()
                                    .predict(phi.slice(ndarray::s![..5, ..]));
                                bits(&mut mean.into_iter().chain(var))
                            }),
                        ),
                    ];
                    for (name, run) in &entry_points {
                        crate::blas::set_spare(&[], 0.0);
                        let clean = run();
                        crate::blas::set_spare(&sizes, f64::NAN);
                        assert_eq!(run(), clean, "{name}: {family:?}, n = {n}, m = {m}");
                    }
                }
            }
        })
        .join()
        .unwrap();
    }
}
