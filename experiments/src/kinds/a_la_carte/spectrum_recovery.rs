//! Kernel learning illustrations of A la Carte (spec §0 R3): data drawn from a Gaussian process
//! with a known spectrum, a Gaussian spectral mixture (Q = 2) or a piecewise-linear radial one;
//! Fastfood ARD, GM and PWL learned by marginal likelihood; the spectral density each implies
//! against the true one, and test RMSE against the oracle GP (the true kernel and noise).
//!
//! One cell = one method on the repetition's draw (the draw depends on the data parameters, not
//! on the method, so every method sees the same sample). Inputs uniform on [−2, 2]^d; the known
//! kernels (fixed here, signal variance 1):
//! * `spectral_mixture`: w = (0.5, 0.5), μ₁ = 1.5 e₁, μ₂ = 3 e₁ + 1.5 e₂, spectral sds 0.3 and 0.5
//!   in every input;
//! * `piecewise_radial`: the density of r = ‖ω‖ linear between knots 0, 0.5, …, 3 with heights
//!   (0, 1, 0.25, 0.25, 0.8, 0.8, 0): two bands of frequencies.
//!
//! The densities are compared in the view the truth is defined by: the marginal of ω₁ for the
//! mixture, the radius ‖ω‖ for the radial kernel; each from 200,000 draws of the model's
//! spectral distribution (its m → ∞ limit) on 60 bins; `l1_distance` = ∫|p − p_true|.

use anyhow::Result;
use fastfood::evidence::dual_from_gram;
use fastfood::radial::PiecewiseLinear;
use fastfood::spectra::{ModelSpectrum, RadialKernel, SpectralMixture};
use fastfood::{fit_ard_family, fit_from_ard, Family, LbfgsSettings, Protocol};
use kernel_core::metrics::{mnlp, rmse};
use kernel_core::Predictor;
use ndarray::{Array1, Array2, ArrayView2};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::common::clock::{on_own_thread, Clock};
use crate::kinds::common::params::positive;
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct SpectrumRecovery;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Truth {
    SpectralMixture,
    PiecewiseRadial,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryMethod {
    Ard,
    Gm,
    Pwl,
    /// The exact GP with the true kernel and noise.
    Oracle,
}

fn default_n_train() -> usize {
    4000
}
fn default_n_test() -> usize {
    1000
}
fn default_noise() -> f64 {
    0.1
}
fn default_m() -> usize {
    256
}
fn default_components() -> usize {
    5
}
fn default_intervals() -> usize {
    10
}
fn default_iterations() -> usize {
    300
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryParams {
    pub truth: Truth,
    pub dim: usize,
    pub method: RecoveryMethod,
    #[serde(default = "default_n_train")]
    pub n_train: usize,
    #[serde(default = "default_n_test")]
    pub n_test: usize,
    #[serde(default = "default_noise")]
    pub noise_sd: f64,
    #[serde(default = "default_m")]
    pub m: usize,
    #[serde(default = "default_components")]
    pub components: usize,
    #[serde(default = "default_intervals")]
    pub intervals: usize,
    #[serde(default = "default_iterations")]
    pub max_iterations: usize,
}

impl Params for RecoveryParams {
    fn check(&self) -> Result<(), String> {
        for (name, v, max) in [
            ("dim", self.dim, 64),
            ("n_train", self.n_train, 10_000),
            ("n_test", self.n_test, 10_000),
            ("m", self.m, 1 << 14),
            ("components", self.components, 100),
            ("intervals", self.intervals, 1000),
            ("max_iterations", self.max_iterations, 100_000),
        ] {
            if v == 0 || v > max {
                return Err(format!("{name} = {v}: expected 1..={max}"));
            }
        }
        if self.n_train + self.n_test > 12_000 {
            return Err(
                "n_train + n_test > 12000: the draw factorises a dense kernel matrix".into(),
            );
        }
        if self.truth == Truth::SpectralMixture && self.dim < 2 {
            return Err(
                "truth = \"spectral_mixture\" needs dim >= 2 (μ₂ has two coordinates)".into(),
            );
        }
        if self.m < 2 * self.components {
            return Err(format!("m = {} < 2 components", self.m));
        }
        positive("noise_sd", self.noise_sd)
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "omega",
        doc: "bin centre: ω₁ (spectral_mixture) or ‖ω‖ (piecewise_radial)",
    },
    ColumnDoc {
        name: "density",
        doc: "the method's normalised spectral density in that view (the oracle's is the truth)",
    },
    ColumnDoc {
        name: "true_density",
        doc: "the true normalised spectral density in that view",
    },
    ColumnDoc {
        name: "l1_distance",
        doc: "∫ |density − true_density| (the mass beyond the view's range included; 0: recovered, 2: disjoint)",
    },
    ColumnDoc {
        name: "rmse",
        doc: "test RMSE",
    },
    ColumnDoc {
        name: "mnlp",
        doc: "test mean negative log predictive density",
    },
    ColumnDoc {
        name: "calibration",
        doc: "rmse² / mean predictive variance (noise included): about 1 for a correctly specified model such as the oracle",
    },
    ColumnDoc {
        name: "train_nlml",
        doc: "negative log marginal likelihood per training row (learned methods)",
    },
    ColumnDoc {
        name: "fit_seconds",
        doc: "CPU seconds to fit (ARD fit included for GM and PWL) and predict",
    },
];

crate::register_kind!(SpectrumRecovery);

impl Kind for SpectrumRecovery {
    type Params = RecoveryParams;
    type Shared = ();
    const NAME: &'static str = "spectrum_recovery";
    const SUMMARY: &'static str = "GP data with a known spectral-mixture or piecewise-radial spectrum: learned vs true spectral densities and test RMSE vs the oracle GP (A la Carte kernel-learning illustrations)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    fn check_data(_data: &DataSpec) -> Result<(), String> {
        Ok(())
    }

    /// Every method of a repetition sees the same draw.
    fn stream(p: &RecoveryParams) -> serde_json::Value {
        serde_json::json!({
            "truth": p.truth, "dim": p.dim, "n_train": p.n_train, "n_test": p.n_test,
            "noise_sd": p.noise_sd,
        })
    }

    fn cost(p: &RecoveryParams) -> f64 {
        let n = (p.n_train + p.n_test) as f64;
        n.powi(3) / 1e10
            + if p.method == RecoveryMethod::Oracle {
                0.0
            } else {
                1.0
            }
    }

    fn prepare(_data: &DataView) -> Result<()> {
        Ok(())
    }

    fn run_cell(_: &(), params: &RecoveryParams, ctx: &CellContext) -> Result<Vec<Row>> {
        on_own_thread(|| recovery(params, ctx))
    }
}

enum Known {
    Mixture(SpectralMixture),
    Radial(RadialKernel),
}

impl Known {
    fn new(truth: Truth, dim: usize) -> Result<Self> {
        Ok(match truth {
            Truth::SpectralMixture => {
                let mut mu1 = vec![0.0; dim];
                mu1[0] = 1.5;
                let mut mu2 = vec![0.0; dim];
                mu2[0] = 3.0;
                mu2[1] = 1.5;
                Known::Mixture(SpectralMixture {
                    weights: vec![0.5, 0.5],
                    means: vec![mu1, mu2],
                    sds: vec![vec![0.3; dim], vec![0.5; dim]],
                })
            }
            Truth::PiecewiseRadial => Known::Radial(RadialKernel::new(
                PiecewiseLinear::new(3.0, 6)?,
                vec![0.0, 1.0, 0.25, 0.25, 0.8, 0.8, 0.0],
                dim,
                1.0,
                4.0 * (dim as f64).sqrt() + 1e-9,
            )),
        })
    }

    fn gram(&self, a: ArrayView2<f64>, b: ArrayView2<f64>) -> Array2<f64> {
        Array2::from_shape_fn((a.nrows(), b.nrows()), |(i, j)| {
            let tau: Vec<f64> = a.row(i).iter().zip(b.row(j)).map(|(p, q)| p - q).collect();
            match self {
                Known::Mixture(s) => s.kernel(&tau),
                Known::Radial(r) => {
                    r.kernel_at_distance(tau.iter().map(|v| v * v).sum::<f64>().sqrt())
                }
            }
        })
    }

    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<f64> {
        match self {
            Known::Mixture(s) => s.sample(rng),
            Known::Radial(r) => r.sample(rng),
        }
    }
}

/// Draws one frequency from a spectral distribution.
type Sampler<'a> = Box<dyn FnMut() -> Vec<f64> + 'a>;

const BINS: usize = 60;
const DRAWS: usize = 200_000;

/// The view's bin centres, the histogram density of `draw`, and the shares of the draws below
/// and above the view.
fn histogram(truth: Truth, mut draw: impl FnMut() -> Vec<f64>) -> (Vec<f64>, Vec<f64>, [f64; 2]) {
    let (lo, hi) = match truth {
        Truth::SpectralMixture => (-5.0, 5.0),
        Truth::PiecewiseRadial => (0.0, 4.0),
    };
    let w = (hi - lo) / BINS as f64;
    let mut counts = vec![0usize; BINS];
    let mut outside = [0usize; 2];
    for _ in 0..DRAWS {
        let omega = draw();
        let v = match truth {
            Truth::SpectralMixture => omega[0],
            Truth::PiecewiseRadial => omega.iter().map(|x| x * x).sum::<f64>().sqrt(),
        };
        let b = ((v - lo) / w).floor();
        if b < 0.0 {
            outside[0] += 1;
        } else if (b as usize) < BINS {
            counts[b as usize] += 1;
        } else {
            outside[1] += 1;
        }
    }
    let centres = (0..BINS).map(|b| lo + (b as f64 + 0.5) * w).collect();
    let density = counts
        .iter()
        .map(|&c| c as f64 / (DRAWS as f64 * w))
        .collect();
    let share = outside.map(|c| c as f64 / DRAWS as f64);
    (centres, density, share)
}

fn recovery(p: &RecoveryParams, ctx: &CellContext) -> Result<Vec<Row>> {
    let known = Known::new(p.truth, p.dim)?;
    // The draw: inputs, then the GP sample (same for every method of the repetition).
    let mut rng = ctx.rng("data");
    let n = p.n_train + p.n_test;
    let x = Array2::from_shape_fn((n, p.dim), |_| rng.random::<f64>() * 4.0 - 2.0);
    // y ~ N(0, K + σ²I) in one factorisation (f + ε in law): the noise keeps the tabulated
    // radial kernel's matrix safely positive definite.
    let mut gram = known.gram(x.view(), x.view());
    for i in 0..n {
        gram[[i, i]] += p.noise_sd * p.noise_sd;
    }
    let sample = kernel_core::gp::sample_gp(&gram, 0.0, &mut rng)?;
    drop(gram);
    let (xtr, xte) = (
        x.slice(ndarray::s![..p.n_train, ..]),
        x.slice(ndarray::s![p.n_train.., ..]),
    );
    let (ytr, yte) = (
        sample.y.slice(ndarray::s![..p.n_train]),
        sample.y.slice(ndarray::s![p.n_train..]),
    );
    let clock = Clock::start();
    let mut method_rng = ctx.rng("method");
    let (mean, var, nlml, mut draw): (Array1<f64>, Array1<f64>, f64, Sampler) = match p.method {
        RecoveryMethod::Oracle => {
            let noise = p.noise_sd * p.noise_sd;
            let dual = dual_from_gram(known.gram(xtr, xtr), ytr, noise)?;
            let ks = known.gram(xte, xtr);
            let mean = ks.dot(&dual.alpha);
            let kk = ks.dot(&dual.k_inv);
            // k(x, x) = k(0) for a stationary kernel.
            let first = xte.slice(ndarray::s![..1, ..]);
            let k0 = known.gram(first, first)[[0, 0]];
            let var = Array1::from_iter(
                (0..p.n_test).map(|i| (k0 - kk.row(i).dot(&ks.row(i))).max(0.0) + noise),
            );
            let mut r = ctx.rng("spectrum");
            let known = &known;
            (mean, var, f64::NAN, Box::new(move || known.sample(&mut r)))
        }
        method => {
            let protocol = Protocol {
                m: p.m,
                components: p.components,
                intervals: p.intervals,
                lbfgs: LbfgsSettings {
                    max_iterations: p.max_iterations,
                    ..LbfgsSettings::default()
                },
                ..Protocol::default()
            };
            let progress = |e: usize| {
                ctx.progress(e.min(p.max_iterations), p.max_iterations);
                ctx.over_budget()
            };
            let ard_rng = |r: usize| ctx.rng(&format!("ard/{r}"));
            let ard = fit_ard_family(Family::Ard, xtr, ytr, &protocol, &ard_rng, &progress)?;
            let family = match method {
                RecoveryMethod::Gm => Some(Family::Gm),
                RecoveryMethod::Pwl => Some(Family::Pwl),
                _ => None,
            };
            let fit = match family {
                None => ard,
                Some(f) => fit_from_ard(f, xtr, ytr, &protocol, &ard, &mut method_rng, &progress)?,
            };
            let predicted = fit.posterior(xtr, ytr)?.predict(xte)?;
            let (mean, var) = (predicted.mean, predicted.variance);
            let mut r = ctx.rng("spectrum");
            let nlml = fit.nlml;
            (mean, var, nlml, {
                let spectrum = ModelSpectrum::new(&fit.model, &fit.theta);
                Box::new(move || spectrum.sample(&mut r))
            })
        }
    };
    let fit_seconds = clock.cpu();
    let (centres, density, out) = histogram(p.truth, &mut draw);
    drop(draw);
    let mut rt = ctx.rng("truth");
    let (_, true_density, true_out) = histogram(p.truth, || known.sample(&mut rt));
    let w = centres.get(1).map_or(1.0, |c| c - centres[0]);
    let l1: f64 = density
        .iter()
        .zip(&true_density)
        .map(|(a, b)| (a - b).abs() * w)
        .sum::<f64>()
        + (out[0] - true_out[0]).abs()
        + (out[1] - true_out[1]).abs();
    let (error, nlp) = (rmse(mean.view(), yte)?, mnlp(mean.view(), var.view(), yte)?);
    let calibration = error * error / (var.sum() / var.len().max(1) as f64);
    Ok(centres
        .iter()
        .zip(density.iter().zip(&true_density))
        .map(|(c, (d, t))| {
            row([
                ("omega", Value::from(*c)),
                ("density", Value::from(*d)),
                ("true_density", Value::from(*t)),
                ("l1_distance", Value::from(l1)),
                ("rmse", Value::from(error)),
                ("mnlp", Value::from(nlp)),
                ("calibration", Value::from(calibration)),
                (
                    "train_nlml",
                    if nlml.is_finite() {
                        Value::from(nlml)
                    } else {
                        Value::Null
                    },
                ),
                ("fit_seconds", Value::from(fit_seconds)),
            ])
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_checked_and_the_known_kernels_are_kernels() {
        let p: RecoveryParams =
            toml::from_str("truth = 'spectral_mixture'\ndim = 2\nmethod = 'gm'").unwrap();
        assert!(p.check().is_ok());
        for (text, needle) in [
            (
                "truth = 'spectral_mixture'\ndim = 1\nmethod = 'gm'",
                "dim >= 2",
            ),
            (
                "truth = 'piecewise_radial'\ndim = 2\nmethod = 'gm'\nn_train = 20000",
                "n_train",
            ),
            (
                "truth = 'piecewise_radial'\ndim = 2\nmethod = 'gm'\nnoise_sd = 0.0",
                "noise_sd",
            ),
        ] {
            let p: RecoveryParams = toml::from_str(text).unwrap();
            let err = p.check().unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
        // k(0) = the signal variance 1, and |k| <= k(0).
        for truth in [Truth::SpectralMixture, Truth::PiecewiseRadial] {
            let known = Known::new(truth, 3).unwrap();
            let x = ndarray::array![[0.0, 0.0, 0.0], [0.5, -0.3, 1.0], [1.5, 1.0, -1.0]];
            let k = known.gram(x.view(), x.view());
            for i in 0..3 {
                assert!(
                    (k[[i, i]] - 1.0).abs() < 1e-3,
                    "{truth:?}: k(0) = {}",
                    k[[i, i]]
                );
                for j in 0..3 {
                    assert!(k[[i, j]].abs() <= 1.0 + 1e-3);
                }
            }
        }
    }
}
