//! Speed and memory of A la Carte (spec §0 R2): the cost of one marginal-likelihood evaluation
//! and of the feature map, and the parameter memory, against m and d, Fastfood against dense
//! random features (SSGPR's frequencies: the same features with all m·d frequencies stored).
//!
//! One cell = one method at one (m, d): the first `n` training rows of the set's first shipped
//! split (z-scored), or, with `dim`, n standard normal inputs of that dimension (the d sweep).
//! Each phase is timed `repeats` times on the cell's own thread (CPU time) and the minimum kept:
//! the feature map Φ (Fastfood O(n m log d) vs dense O(n m d)), the likelihood solve with its
//! gradient in Φ (O(n m² + m³)), the backward pass to the parameters, and the whole evaluation.
//! The solve's flops are compared with a dgemm of the same inner size timed here (the machine's
//! measured BLAS throughput).

use anyhow::{bail, Result};
use fastfood::evidence::evidence;
use fastfood::fit::{objective, standardise};
use fastfood::{ArdPoint, Family, FeatureModel, KernelSpec};
use ndarray::{Array1, Array2};
use rand::Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::common::clock::{on_own_thread, Clock};
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct FastfoodScaling;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalingMethod {
    /// Fastfood ARD features (O(m) parameters).
    Fastfood,
    /// Dense frequencies Ω (m × d), as SSGPR stores and learns them.
    Dense,
}

fn default_repeats() -> usize {
    3
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalingParams {
    pub method: ScalingMethod,
    /// m, frequencies.
    pub m: usize,
    /// Rows used.
    pub n: usize,
    /// Synthetic standard normal inputs of this dimension instead of the dataset's.
    #[serde(default)]
    pub dim: Option<usize>,
    /// Timings per phase (the minimum is kept).
    #[serde(default = "default_repeats")]
    pub repeats: usize,
}

impl Params for ScalingParams {
    fn check(&self) -> Result<(), String> {
        for (name, v, max) in [
            ("m", self.m, 1 << 15),
            ("n", self.n, 1 << 20),
            ("repeats", self.repeats, 100),
            ("dim", self.dim.unwrap_or(1), 1 << 14),
        ] {
            if v == 0 || v > max {
                return Err(format!("{name} = {v}: expected 1..={max}"));
            }
        }
        if (self.n as f64) * 2.0 * (self.m as f64) > 2e8 {
            return Err(format!(
                "n = {}, m = {}: the features would hold {} values (> 2e8, 1.6 GB)",
                self.n,
                self.m,
                2 * self.n * self.m
            ));
        }
        Ok(())
    }
}

/// The inputs (z-scored) of the first split's training rows.
pub struct Inputs {
    x: Option<Array2<f64>>,
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "n_rows",
        doc: "rows used",
    },
    ColumnDoc {
        name: "n_inputs",
        doc: "input dimension d",
    },
    ColumnDoc {
        name: "n_features",
        doc: "features D = 2m",
    },
    ColumnDoc {
        name: "model_values",
        doc: "numbers stored to evaluate the features: Fastfood B, Π, G, u and hyperparameters (O(m)); dense: the m·d frequencies (O(md))",
    },
    ColumnDoc {
        name: "feature_seconds",
        doc: "CPU seconds of the feature map Φ (n × 2m)",
    },
    ColumnDoc {
        name: "solve_seconds",
        doc: "CPU seconds of the log marginal likelihood with its gradient in Φ and σ² (primal O(nD² + D³) or dual O(n²D + n³), the cheaper)",
    },
    ColumnDoc {
        name: "backward_seconds",
        doc: "CPU seconds of the backward pass from ∂/∂Φ to the parameters",
    },
    ColumnDoc {
        name: "evaluation_seconds",
        doc: "CPU seconds of one whole evaluation (value and gradient)",
    },
    ColumnDoc {
        name: "solve_gflops",
        doc: "the solve's flops (syrk + gemm + Cholesky and inverse) per second, in 1e9",
    },
    ColumnDoc {
        name: "gemm_gflops",
        doc: "measured dgemm throughput on this thread at the solve's sizes, in 1e9 flops per second",
    },
    ColumnDoc {
        name: "features_per_second",
        doc: "feature values (n·m frequencies) per second of the feature map",
    },
];

crate::register_kind!(FastfoodScaling);

impl Kind for FastfoodScaling {
    type Params = ScalingParams;
    type Shared = Inputs;
    const NAME: &'static str = "fastfood_scaling";
    const SUMMARY: &'static str = "time per marginal-likelihood evaluation, per feature map and parameter memory of Fastfood vs dense random features against m and d (A la Carte speed and memory)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    fn check_data(_data: &DataSpec) -> Result<(), String> {
        Ok(())
    }

    fn cost(p: &ScalingParams) -> f64 {
        let d = 2.0 * p.m as f64;
        let n = p.n as f64;
        p.repeats as f64 * n.min(d) * n.max(d) * d / 1e9
    }

    fn prepare(data: &DataView) -> Result<Inputs> {
        Ok(Inputs {
            x: match data {
                DataView::Sets(_) => {
                    let sets = data.regression()?;
                    let none = Array2::zeros((0, sets.train.x.ncols()));
                    Some(standardise(&sets.train.x, &none, false).0)
                }
                _ => None,
            },
        })
    }

    fn run_cell(d: &Inputs, p: &ScalingParams, ctx: &CellContext) -> Result<Vec<Row>> {
        on_own_thread(|| scaling(d, p, ctx))
    }
}

/// The minimum CPU time of `repeats` runs of `f`, and its last value.
fn timed<T>(repeats: usize, mut f: impl FnMut() -> Result<T>) -> Result<(f64, T)> {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..repeats {
        let c = Clock::start();
        let v = f()?;
        best = best.min(c.cpu());
        last = Some(v);
    }
    Ok((best, last.expect("repeats >= 1")))
}

fn scaling(d: &Inputs, p: &ScalingParams, ctx: &CellContext) -> Result<Vec<Row>> {
    let mut rng = ctx.rng("scaling");
    let x = match (p.dim, &d.x) {
        (Some(dim), _) => Array2::from_shape_fn((p.n, dim), |_| rng.sample(StandardNormal)),
        (None, Some(x)) => {
            if x.nrows() < p.n {
                bail!("n = {}: the set has only {} training rows", p.n, x.nrows());
            }
            x.slice(ndarray::s![..p.n, ..]).to_owned()
        }
        (None, None) => bail!("give `dim` (synthetic inputs) or a dataset"),
    };
    let dim = x.ncols();
    let y = Array1::from_shape_fn(p.n, |i| {
        x[[i, 0]].sin() + 0.1 * rng.sample::<f64, _>(StandardNormal)
    });
    let family = match p.method {
        ScalingMethod::Fastfood => Family::Ard,
        ScalingMethod::Dense => Family::Ssgpr,
    };
    let spec = KernelSpec {
        family,
        m: p.m,
        components: 1,
        intervals: 1,
    };
    let model = FeatureModel::new(spec, dim, 1e-6, None, &mut rng)?;
    let theta = model.start(&ArdPoint::default_start(dim, 1.0), &mut rng);
    let (xv, yv) = (x.view(), y.view());
    let (feature_seconds, (phi, z)) = timed(p.repeats, || {
        Ok(model.features_and_projections(&theta, xv, true)?)
    })?;
    let noise = model.noise(&theta);
    let wanted = model.evidence_gradients();
    let (solve_seconds, ev) = timed(p.repeats, || Ok(evidence(phi.view(), yv, noise, wanted)?))?;
    let (backward_seconds, _) = timed(p.repeats, || {
        Ok(model.gradient(&theta, xv, phi.view(), z.as_ref().map(|z| z.view()), &ev)?)
    })?;
    let (evaluation_seconds, _) = timed(p.repeats, || Ok(objective(&model, &theta, xv, yv)?))?;
    let (n, dd) = (p.n as f64, 2.0 * p.m as f64);
    // syrk (k·s² flops for an s × s result over k), gemm (2 k s²), Cholesky + inverse (s³).
    let (s, k) = if n >= dd { (dd, n) } else { (n, dd) };
    let flops = k * s * s + 2.0 * k * s * s + s * s * s;
    let a = Array2::from_shape_fn((k as usize, s as usize), |(i, j)| {
        ((i * 7 + j * 3) % 13) as f64
    });
    let b = Array2::from_shape_fn((s as usize, s as usize), |(i, j)| ((i + 2 * j) % 5) as f64);
    let (gemm_seconds, _) = timed(p.repeats, || {
        let mut c = Array2::<f64>::zeros((k as usize, s as usize));
        fastfood::blas::gemm(1.0, a.view(), b.view(), 0.0, &mut c);
        Ok(c[[0, 0]])
    })?;
    Ok(vec![row([
        ("n_rows", p.n.into()),
        ("n_inputs", dim.into()),
        ("n_features", model.n_features().into()),
        (
            "model_values",
            (model.n_params() + model.structure_values()).into(),
        ),
        ("feature_seconds", Value::from(feature_seconds)),
        ("solve_seconds", Value::from(solve_seconds)),
        ("backward_seconds", Value::from(backward_seconds)),
        ("evaluation_seconds", Value::from(evaluation_seconds)),
        ("solve_gflops", Value::from(flops / solve_seconds / 1e9)),
        (
            "gemm_gflops",
            Value::from(2.0 * k * s * s / gemm_seconds / 1e9),
        ),
        (
            "features_per_second",
            Value::from(n * p.m as f64 / feature_seconds),
        ),
    ])])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> Result<ScalingParams, String> {
        let p: ScalingParams = toml::from_str(text).map_err(|e| e.to_string())?;
        p.check().map(|_| p)
    }

    #[test]
    fn parameters_are_checked_with_clear_errors() {
        assert_eq!(
            params("method = 'dense'\nm = 64\nn = 100").unwrap().repeats,
            3
        );
        for (text, needle) in [
            ("method = 'sparse'\nm = 64\nn = 10", "sparse"),
            ("method = 'fastfood'\nm = 0\nn = 10", "m = 0"),
            ("method = 'fastfood'\nm = 30000\nn = 100000", "1.6 GB"),
            ("method = 'fastfood'\nm = 64\nn = 10\ndim = 0", "dim = 0"),
        ] {
            let err = params(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn inputs_are_centred_and_scaled_and_constant_columns_kept() {
        let x = ndarray::array![[1.0, 2.0], [3.0, 2.0]];
        assert_eq!(
            standardise(&x, &x, false).0,
            ndarray::array![[-1.0, 0.0], [1.0, 0.0]]
        );
    }
}
