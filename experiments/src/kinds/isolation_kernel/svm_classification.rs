//! The Isolation Kernel paper's SVM tables ([ARX] Tables 7-8, here the spec's R4 and R5:
//! Tables 8 and 9): batch SVMs trained once on the training set and tested once.
//!
//! Methods (`method`):
//! * `ik_a_linear`: LIBLINEAR's default linear SVM on IK_a's one-hot features, t = 100
//!   partitionings of ψ Voronoi cells (Table 8 "IK_a-SVM", Table 9 "LIBLINEAR IK_a");
//! * `ik_a_svm`: the kernel SVM (LIBSVM's C-SVC by SMO) with the IK_a kernel
//!   `K(x, y) = (1/t)·#{i : φ_i(x) = φ_i(y)}` (Table 9 "LIBSVM IK_a");
//! * `laplacian_svm`: the kernel SVM with the Laplacian `L_ψ(x, y) = exp(−(ln ψ / d)‖x − y‖₁)`,
//!   the paper's Laplacian family with its ψ (Table 8 "SVM"; the paper does not print the
//!   Laplacian's width it gave LIBSVM);
//! * `chi2_linear`: the linear SVM on the χ² explicit map (Vedaldi-Zisserman, `chi2_steps`
//!   sample steps; the paper's b = 0 is one step) (Table 9 "LIBLINEAR χ²");
//! * `chi2_svm`: the kernel SVM with the exact χ² additive kernel (Table 9 "LIBSVM χ²").
//!
//! χ² methods need non-negative inputs: `scaling = "min_max"` scales every attribute to [0, 1]
//! with the training minimum and maximum first (test values clipped), the spec's
//! recommendation for sets with negative values (ijcnn1); `"none"` takes the inputs as they are.
//!
//! Times (the cell runs on a thread of its own, parallel loops inside on its pool):
//! `map_seconds` is the CPU time of the IK_a map or χ² map of training and test rows (the
//! paper's SVM times exclude the IK mapping), `train_seconds` the solver's and
//! `test_seconds` the predictions' CPU time.

use anyhow::{bail, Result};
use isolation_kernel::chi2::{chi2_kernel, Chi2Map, UnitScaling};
use isolation_kernel::{IsolationKernel, Partitioner, Rows};
use kernel_core::kernel_svm::{fit_svc, KernelRows, SvcParams};
use kernel_core::linear_svm::{fit_linear_svc, LinearSvcParams};
use kernel_core::Features;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::{DataSpec, DataView};
use crate::kinds::common::clock::{on_own_thread, Clock};
use crate::kinds::common::params::read_by;
use crate::kinds::isolation_kernel::binary::{require_classification, BinarySplit, Examples};
use crate::kinds::isolation_kernel::online_classifiers::{
    cross_validate, powers_of_two, Psi, PsiChoice, MAX_PSI,
};
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct SvmClassification;

/// The methods, by their config names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    IkALinear,
    IkASvm,
    LaplacianSvm,
    Chi2Linear,
    Chi2Svm,
}

impl Method {
    fn kernel_svm(self) -> bool {
        matches!(
            self,
            Method::IkASvm | Method::LaplacianSvm | Method::Chi2Svm
        )
    }

    fn isolation(self) -> bool {
        matches!(self, Method::IkALinear | Method::IkASvm)
    }

    fn chi2(self) -> bool {
        matches!(self, Method::Chi2Linear | Method::Chi2Svm)
    }
}

/// Scaling of the inputs before a χ² method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Scaling {
    /// The inputs as they are (an error if one is negative).
    #[default]
    None,
    /// Every attribute to [0, 1] by the training minimum and maximum.
    MinMax,
}

fn default_t() -> usize {
    100
}

fn default_c() -> f64 {
    1.0
}

fn default_steps() -> usize {
    1
}

fn default_cache_mb() -> usize {
    100
}

fn default_psi_min() -> usize {
    4
}

fn default_psi_max() -> usize {
    4096
}

fn default_folds() -> usize {
    5
}

/// `[params]` of an SVM config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvmParams {
    pub method: Method,
    /// ψ of IK_a and of the Laplacian L_ψ, or `"cv"`: by k-fold cross-validation over the
    /// powers of two from `cv_psi_min` to `cv_psi_max` on the first `cv_examples` training
    /// examples (IK_a: with the linear SVM, for both IK_a methods; Laplacian: with the kernel
    /// SVM).
    #[serde(default)]
    pub psi: Option<Psi>,
    #[serde(default = "default_psi_min")]
    pub cv_psi_min: usize,
    #[serde(default = "default_psi_max")]
    pub cv_psi_max: usize,
    #[serde(default = "default_folds")]
    pub cv_folds: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv_examples: Option<usize>,
    /// IK_a partitionings.
    #[serde(default = "default_t")]
    pub t: usize,
    /// The SVM's cost C (LIBSVM's and LIBLINEAR's default 1).
    #[serde(default = "default_c")]
    pub c: f64,
    /// The solver's stopping tolerance; default LIBLINEAR's 0.1 (linear), LIBSVM's 0.001
    /// (kernel).
    #[serde(default)]
    pub eps: Option<f64>,
    /// Sample steps of the χ² map (one feature per attribute at 1, the paper's b = 0).
    #[serde(default = "default_steps")]
    pub chi2_steps: usize,
    #[serde(default)]
    pub scaling: Scaling,
    /// The kernel SVM's row cache in MiB (LIBSVM's -m; speed only, not the numbers).
    #[serde(default = "default_cache_mb")]
    pub cache_mb: usize,
}

impl SvmParams {
    /// The keys this method reads (and so the ones its numbers may depend on).
    fn reads(&self) -> Vec<&'static str> {
        let mut keys = vec!["method", "c", "eps"];
        if self.method.isolation() {
            keys.push("t");
        }
        if self.needs_psi() {
            keys.push("psi");
            if matches!(self.psi, Some(Psi::Select(_))) {
                keys.extend(["cv_psi_min", "cv_psi_max", "cv_folds", "cv_examples"]);
            }
        }
        if self.method.chi2() {
            keys.push("scaling");
        }
        if self.method == Method::Chi2Linear {
            keys.push("chi2_steps");
        }
        keys
    }

    fn eps(&self) -> f64 {
        self.eps
            .unwrap_or(if self.method.kernel_svm() { 1e-3 } else { 0.1 })
    }

    fn needs_psi(&self) -> bool {
        self.method.isolation() || self.method == Method::LaplacianSvm
    }
}

impl Params for SvmParams {
    fn check(&self) -> Result<(), String> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(format!("c = {}: a finite number > 0", self.c));
        }
        if let Some(eps) = self.eps {
            if !(eps.is_finite() && eps > 0.0) {
                return Err(format!("eps = {eps}: a finite number > 0"));
            }
        }
        let check_psi = |name, psi| {
            isolation_kernel::check_psi(name, psi).map_err(|e| e.to_string())?;
            if psi > MAX_PSI {
                return Err(format!("{name} = {psi}: at most {MAX_PSI} (memory)"));
            }
            Ok(())
        };
        match &self.psi {
            _ if !self.needs_psi() => {}
            None => return Err(format!("method = {:?} needs psi", self.method)),
            Some(Psi::Fixed(psi)) => check_psi("psi", *psi)?,
            Some(Psi::Select(s)) if s == "cv" => {
                check_psi("cv_psi_min", self.cv_psi_min)?;
                check_psi("cv_psi_max", self.cv_psi_max)?;
                if !self.cv_psi_min.is_power_of_two() || self.cv_psi_min > self.cv_psi_max {
                    return Err(format!(
                        "cv_psi_min = {}, cv_psi_max = {}: a power of two, at most cv_psi_max",
                        self.cv_psi_min, self.cv_psi_max
                    ));
                }
                if self.cv_folds < 2 {
                    return Err(format!("cv_folds = {}: at least 2", self.cv_folds));
                }
            }
            Some(Psi::Select(s)) => {
                return Err(format!("psi = {s:?}: expected an integer or \"cv\""))
            }
        }
        if self.method.isolation() && !(1..=10_000).contains(&self.t) {
            return Err(format!("t = {}: expected 1 ..= 10000", self.t));
        }
        if self.method == Method::Chi2Linear {
            Chi2Map::new(self.chi2_steps).map_err(|e| e.to_string())?;
        }
        if self.cache_mb == 0 {
            return Err("cache_mb = 0: at least 1".into());
        }
        Ok(())
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "psi_used",
        doc: "psi of IK_a or of the Laplacian L_psi (the cross-validated choice when psi = \"cv\"; null for chi2)",
    },
    ColumnDoc {
        name: "cv_accuracy",
        doc: "mean held-out accuracy of the chosen psi (null when psi is fixed or not read)",
    },
    ColumnDoc {
        name: "cv_seconds",
        doc: "wall seconds of the cross-validation (0 when psi is fixed or not read)",
    },
    ColumnDoc {
        name: "accuracy",
        doc: "test accuracy",
    },
    ColumnDoc {
        name: "train_accuracy",
        doc: "accuracy of the trained SVM on its training set",
    },
    ColumnDoc {
        name: "test_positive_rate",
        doc: "share of +1 labels in the test set (the accuracy of a constant predictor is max(rate, 1 - rate))",
    },
    ColumnDoc {
        name: "map_seconds",
        doc: "CPU seconds of the feature map of training and test rows (IK_a or chi2; 0 for the Laplacian; the paper's SVM times exclude the IK mapping)",
    },
    ColumnDoc {
        name: "train_seconds",
        doc: "CPU seconds of the solver",
    },
    ColumnDoc {
        name: "test_seconds",
        doc: "CPU seconds of the test predictions",
    },
    ColumnDoc {
        name: "iterations",
        doc: "solver iterations (outer passes of the linear solver; SMO steps of the kernel SVM)",
    },
    ColumnDoc {
        name: "reached_cap",
        doc: "whether the solver stopped at its iteration cap before its tolerance (1) or not (0)",
    },
    ColumnDoc {
        name: "support_vectors",
        doc: "training examples with alpha > 0",
    },
    ColumnDoc {
        name: "n_train",
        doc: "training examples",
    },
    ColumnDoc {
        name: "n_test",
        doc: "test examples",
    },
];

crate::register_kind!(SvmClassification);

impl Kind for SvmClassification {
    type Params = SvmParams;
    type Shared = BinarySplit;
    const NAME: &'static str = "svm_classification";
    const SUMMARY: &'static str = "Kernel (SMO) and linear (dual coordinate descent) SVMs on IK_a, Laplacian and chi2 kernels and maps, trained and tested once (Isolation Kernel Tables 8-9)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    fn check_data(data: &DataSpec) -> Result<(), String> {
        require_classification(Self::NAME, data)
    }

    fn stream(p: &SvmParams) -> serde_json::Value {
        read_by(p, &p.reads())
    }

    fn deterministic(p: &SvmParams) -> bool {
        // The kernel SVMs on fixed kernels draw nothing; IK_a draws its partitionings and the
        // linear solver its coordinate order.
        matches!(p.method, Method::LaplacianSvm | Method::Chi2Svm)
    }

    fn cost(p: &SvmParams) -> f64 {
        if p.method.kernel_svm() {
            100.0
        } else {
            1.0
        }
    }

    fn prepare(data: &DataView) -> Result<BinarySplit> {
        BinarySplit::prepare(data)
    }

    fn run_cell(d: &BinarySplit, p: &SvmParams, ctx: &CellContext) -> Result<Vec<Row>> {
        on_own_thread(|| cell(d, p, ctx))
    }
}

/// What a trained SVM gives: decision values on each set asked for, its times and counters.
struct Outcome {
    /// Per set asked for, in order.
    decisions: Vec<Vec<f64>>,
    map_seconds: f64,
    train_seconds: f64,
    /// CPU seconds of the decisions on the first set.
    test_seconds: f64,
    iterations: usize,
    reached_cap: bool,
    support_vectors: usize,
}

/// ψ: fixed, or by cross-validation on the first `cv_examples` training examples (IK_a: the
/// linear SVM on IK_a features for both IK_a methods; the Laplacian: its kernel SVM); `None`
/// for the χ² methods.
fn choose(d: &BinarySplit, p: &SvmParams, ctx: &CellContext) -> Result<Option<PsiChoice>> {
    let search = match &p.psi {
        _ if !p.needs_psi() => return Ok(None),
        Some(Psi::Fixed(psi)) => {
            return Ok(Some(PsiChoice {
                lambda: None,
                psi: *psi,
                cv_accuracy: None,
                cv_seconds: 0.0,
            }))
        }
        Some(Psi::Select(_)) => powers_of_two(p.cv_psi_min, p.cv_psi_max),
        None => bail!("method = {:?} needs psi", p.method),
    };
    let n = p.cv_examples.unwrap_or(d.train.len()).min(d.train.len());
    let ids: Vec<usize> = (0..n).collect();
    let scored = SvmParams {
        method: if p.method.isolation() {
            Method::IkALinear
        } else {
            p.method
        },
        ..p.clone()
    };
    let choice = cross_validate(
        &search,
        &ids,
        p.cv_folds,
        p.method.isolation(),
        &mut ctx.rng("cv"),
        |psi, kept, held, seed| {
            let (kept, held) = (d.train.subset(kept), d.train.subset(held));
            let mut rng = ChaCha8Rng::from_seed(seed);
            let out = train_and_decide(&kept, &[&held], Some(psi), &scored, &mut rng)?;
            Ok(accuracy(&out.decisions[0], &held))
        },
    )?;
    Ok(Some(choice))
}

/// Share of examples whose label has the sign of the decision value (LIBSVM and LIBLINEAR
/// label +1 where it is > 0).
fn accuracy(f: &[f64], ex: &Examples) -> f64 {
    let right = f
        .iter()
        .enumerate()
        .filter(|&(i, &v)| (v > 0.0) == (ex.label(i) > 0.0))
        .count();
    right as f64 / ex.len().max(1) as f64
}

fn cell(d: &BinarySplit, p: &SvmParams, ctx: &CellContext) -> Result<Vec<Row>> {
    if d.train.is_empty() || d.test.is_empty() {
        bail!("an SVM needs training and test examples");
    }
    ctx.progress(0, 3);
    let choice = choose(d, p, ctx)?;
    ctx.progress(1, 3);
    // A kernel SVM's decisions on its own training set cost as much as another test set:
    // its training accuracy is left out.
    let sets: Vec<&Examples> = if p.method.kernel_svm() {
        vec![&d.test]
    } else {
        vec![&d.test, &d.train]
    };
    let out = train_and_decide(
        &d.train,
        &sets,
        choice.as_ref().map(|c| c.psi),
        p,
        &mut ctx.rng("partitionings"),
    )?;
    ctx.progress(3, 3);
    let num = |v: Option<f64>| v.map_or(Value::Null, Value::from);
    Ok(vec![row([
        (
            "psi_used",
            choice.as_ref().map_or(Value::Null, |c| c.psi.into()),
        ),
        (
            "cv_accuracy",
            num(choice.as_ref().and_then(|c| c.cv_accuracy)),
        ),
        (
            "cv_seconds",
            Value::from(choice.as_ref().map_or(0.0, |c| c.cv_seconds)),
        ),
        (
            "accuracy",
            Value::from(accuracy(&out.decisions[0], &d.test)),
        ),
        (
            "train_accuracy",
            num(out.decisions.get(1).map(|f| accuracy(f, &d.train))),
        ),
        ("test_positive_rate", Value::from(d.test.positive_rate())),
        ("map_seconds", Value::from(out.map_seconds)),
        ("train_seconds", Value::from(out.train_seconds)),
        ("test_seconds", Value::from(out.test_seconds)),
        ("iterations", Value::from(out.iterations as i64)),
        ("reached_cap", Value::from(i64::from(out.reached_cap))),
        ("support_vectors", Value::from(out.support_vectors as i64)),
        ("n_train", d.train.len().into()),
        ("n_test", d.test.len().into()),
    ])])
}

/// The training labels.
fn labels(ex: &Examples) -> Vec<f64> {
    (0..ex.len()).map(|i| ex.label(i)).collect()
}

/// The χ² scaling of these parameters, fitted on the training rows.
fn scaling(p: &SvmParams, train: Rows) -> Result<Option<UnitScaling>> {
    Ok(match p.scaling {
        Scaling::None => None,
        Scaling::MinMax => Some(UnitScaling::fit(train)?),
    })
}

/// Trains the method on `train` (with ψ where it reads one) and decides every set of `sets`.
/// `rng` draws the IK_a partitionings, then the linear solver's coordinate order.
fn train_and_decide(
    train: &Examples,
    sets: &[&Examples],
    psi: Option<usize>,
    p: &SvmParams,
    rng: &mut ChaCha8Rng,
) -> Result<Outcome> {
    let psi = || psi.ok_or_else(|| anyhow::anyhow!("method = {:?} needs psi", p.method));
    if p.method.kernel_svm() {
        kernel_method(train, sets, p, psi, rng)
    } else {
        linear_method(train, sets, p, psi, rng)
    }
}

fn linear_method(
    train: &Examples,
    sets: &[&Examples],
    p: &SvmParams,
    psi: impl Fn() -> Result<usize>,
    rng: &mut ChaCha8Rng,
) -> Result<Outcome> {
    let rows = train.rows()?;
    let clock = Clock::start();
    let (features, mapped): (Features, Vec<Features>) = match p.method {
        Method::IkALinear => {
            let map = IsolationKernel::fit(rows, psi()?, p.t, Partitioner::Anne, rng)?;
            let mapped = sets
                .iter()
                .map(|ex| Ok(Features::OneHot(map.one_hot(ex.rows()?)?)))
                .collect::<Result<_>>()?;
            (Features::OneHot(map.one_hot(rows)?), mapped)
        }
        Method::Chi2Linear => {
            let map = Chi2Map::new(p.chi2_steps)?;
            let s = scaling(p, rows)?;
            let mapped = sets
                .iter()
                .map(|ex| Ok(Features::Dense(map.features(ex.rows()?, s.as_ref())?)))
                .collect::<Result<_>>()?;
            (Features::Dense(map.features(rows, s.as_ref())?), mapped)
        }
        _ => unreachable!("a linear method"),
    };
    let map_seconds = clock.cpu();
    let params = LinearSvcParams {
        c: p.c,
        eps: p.eps(),
        ..LinearSvcParams::default()
    };
    let clock = Clock::start();
    let svc = fit_linear_svc(&features, &labels(train), &params, rng)?;
    let train_seconds = clock.cpu();
    let clock = Clock::start();
    let mut decisions = Vec::with_capacity(sets.len());
    let mut test_seconds = 0.0;
    for f in &mapped {
        decisions.push(svc.decision(f)?);
        if decisions.len() == 1 {
            test_seconds = clock.cpu();
        }
    }
    Ok(Outcome {
        decisions,
        map_seconds,
        train_seconds,
        test_seconds,
        iterations: svc.iterations(),
        reached_cap: svc.reached_cap(),
        support_vectors: svc.support_vectors(),
    })
}

/// A kernel between rows: of inputs (Laplacian, χ²), kept as their non-zeros, or of IK_a cell
/// indices.
enum Points {
    /// The non-zeros of each row (CSR: row i's columns `indices[indptr[i]..indptr[i + 1]]`,
    /// increasing) and the kernel of two rows.
    Inputs {
        indptr: Vec<usize>,
        indices: Vec<u32>,
        values: Vec<f64>,
        kernel: InputKernel,
    },
    /// φ(x) ∈ [0, ψ)^t per row (n × t, row-major).
    Cells { phi: Vec<u32>, t: usize },
}

/// A kernel of two input rows, evaluated on their non-zeros.
#[derive(Debug, Clone, Copy)]
enum InputKernel {
    /// `exp(−γ ‖x − y‖₁)`: the L1 distance over the union of the non-zeros.
    Laplacian { gamma: f64 },
    /// `Σ_a 2 x_a y_a / (x_a + y_a)`: the terms of the common non-zeros (the others are 0).
    Chi2,
}

impl InputKernel {
    fn eval(self, (ai, av): (&[u32], &[f64]), (bi, bv): (&[u32], &[f64])) -> f64 {
        let (mut p, mut q) = (0, 0);
        match self {
            InputKernel::Laplacian { gamma } => {
                let mut l1 = 0.0;
                while p < ai.len() && q < bi.len() {
                    if ai[p] == bi[q] {
                        l1 += (av[p] - bv[q]).abs();
                        p += 1;
                        q += 1;
                    } else if ai[p] < bi[q] {
                        l1 += av[p].abs();
                        p += 1;
                    } else {
                        l1 += bv[q].abs();
                        q += 1;
                    }
                }
                l1 += av[p..].iter().chain(&bv[q..]).map(|v| v.abs()).sum::<f64>();
                (-gamma * l1).exp()
            }
            InputKernel::Chi2 => {
                let mut k = 0.0;
                while p < ai.len() && q < bi.len() {
                    if ai[p] == bi[q] {
                        k += chi2_kernel(&av[p..=p], &bv[q..=q]);
                        p += 1;
                        q += 1;
                    } else if ai[p] < bi[q] {
                        p += 1;
                    } else {
                        q += 1;
                    }
                }
                k
            }
        }
    }
}

impl Points {
    /// The non-zeros of `rows` (scaled first, when given), with their kernel.
    fn inputs(rows: Rows, scaling: Option<&UnitScaling>, kernel: InputKernel) -> Points {
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        let mut x = vec![0.0; rows.dim()];
        for i in 0..rows.n_rows() {
            rows.dense_row(i, &mut x);
            if let Some(s) = scaling {
                s.apply(&mut x);
            }
            for (a, &v) in x.iter().enumerate() {
                if v != 0.0 {
                    indices.push(a as u32);
                    values.push(v);
                }
            }
            indptr.push(indices.len());
        }
        Points::Inputs {
            indptr,
            indices,
            values,
            kernel,
        }
    }

    fn n(&self) -> usize {
        match self {
            Points::Inputs { indptr, .. } => indptr.len() - 1,
            Points::Cells { phi, t } => phi.len() / t,
        }
    }

    /// K(row i of self, row j of other) (the same kernel on both).
    fn between(&self, i: usize, other: &Points, j: usize) -> f64 {
        match (self, other) {
            (
                Points::Inputs {
                    indptr,
                    indices,
                    values,
                    kernel,
                },
                Points::Inputs {
                    indptr: jp,
                    indices: ji,
                    values: jv,
                    ..
                },
            ) => {
                let (a, b) = (indptr[i]..indptr[i + 1], jp[j]..jp[j + 1]);
                kernel.eval((&indices[a.clone()], &values[a]), (&ji[b.clone()], &jv[b]))
            }
            (Points::Cells { phi, t }, Points::Cells { phi: psi, .. }) => {
                let (a, b) = (&phi[i * t..(i + 1) * t], &psi[j * t..(j + 1) * t]);
                a.iter().zip(b).filter(|(u, v)| u == v).count() as f64 / *t as f64
            }
            _ => unreachable!("one kernel on both sides"),
        }
    }
}

impl KernelRows for Points {
    fn n(&self) -> usize {
        Points::n(self)
    }

    fn row(&self, i: usize, out: &mut [f64]) {
        out.par_iter_mut()
            .with_min_len(256)
            .enumerate()
            .for_each(|(j, o)| *o = self.between(i, self, j));
    }

    fn diagonal(&self, i: usize) -> f64 {
        self.between(i, self, i)
    }
}

fn kernel_method(
    train: &Examples,
    sets: &[&Examples],
    p: &SvmParams,
    psi: impl Fn() -> Result<usize>,
    rng: &mut ChaCha8Rng,
) -> Result<Outcome> {
    let rows = train.rows()?;
    let clock = Clock::start();
    let (points, others): (Points, Vec<Points>) = match p.method {
        Method::IkASvm => {
            let map = IsolationKernel::fit(rows, psi()?, p.t, Partitioner::Anne, rng)?;
            let t = map.t();
            let cells = |rows| -> Result<Points> {
                Ok(Points::Cells {
                    phi: map.index_rows(rows)?,
                    t,
                })
            };
            let others = sets
                .iter()
                .map(|ex| cells(ex.rows()?))
                .collect::<Result<_>>()?;
            (cells(rows)?, others)
        }
        Method::LaplacianSvm => {
            let kernel = InputKernel::Laplacian {
                gamma: (psi()? as f64).ln() / rows.dim().max(1) as f64,
            };
            let others = sets
                .iter()
                .map(|ex| Ok(Points::inputs(ex.rows()?, None, kernel)))
                .collect::<Result<_>>()?;
            (Points::inputs(rows, None, kernel), others)
        }
        Method::Chi2Svm => {
            let s = scaling(p, rows)?;
            let inputs = |rows| -> Result<Points> {
                let points = Points::inputs(rows, s.as_ref(), InputKernel::Chi2);
                if let Points::Inputs { values, .. } = &points {
                    if let Some(v) = values.iter().find(|v| **v < 0.0) {
                        bail!("chi2_svm needs inputs >= 0 (found {v}): set scaling = \"min_max\"");
                    }
                }
                Ok(points)
            };
            let others = sets
                .iter()
                .map(|ex| inputs(ex.rows()?))
                .collect::<Result<_>>()?;
            (inputs(rows)?, others)
        }
        _ => unreachable!("a kernel method"),
    };
    let map_seconds = if p.method.isolation() {
        clock.cpu()
    } else {
        0.0
    };
    let params = SvcParams {
        c: p.c,
        eps: p.eps(),
        cache_bytes: p.cache_mb << 20,
        ..SvcParams::default()
    };
    let clock = Clock::start();
    let svc = fit_svc(&points, &labels(train), &params)?;
    let train_seconds = clock.cpu();
    let clock = Clock::start();
    let mut decisions = Vec::with_capacity(sets.len());
    let mut test_seconds = 0.0;
    for other in &others {
        let f = (0..other.n())
            .into_par_iter()
            .with_min_len(64)
            .map(|i| {
                let k: Vec<f64> = svc
                    .support()
                    .iter()
                    .map(|&s| other.between(i, &points, s))
                    .collect();
                svc.decision(&k)
            })
            .collect::<Result<Vec<f64>, _>>()?;
        decisions.push(f);
        if decisions.len() == 1 {
            test_seconds = clock.cpu();
        }
    }
    Ok(Outcome {
        decisions,
        map_seconds,
        train_seconds,
        test_seconds,
        iterations: svc.iterations(),
        reached_cap: svc.reached_cap(),
        support_vectors: svc.support().len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// The non-zeros of a dense row.
    fn sparse(x: &[f64]) -> (Vec<u32>, Vec<f64>) {
        x.iter()
            .enumerate()
            .filter(|(_, v)| **v != 0.0)
            .map(|(a, v)| (a as u32, *v))
            .unzip()
    }

    /// The merge over non-zeros equals the dense formulas on rows with zeros in different
    /// places (the chi2 terms of a zero and a non-zero vanish; the L1 distance counts them).
    #[test]
    fn input_kernels_on_non_zeros_equal_the_dense_formulas() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200 {
            let d = rng.random_range(1..12);
            let mut row = || -> Vec<f64> {
                (0..d)
                    .map(|_| {
                        if rng.random_bool(0.4) {
                            0.0
                        } else {
                            rng.random_range(0.0..2.0)
                        }
                    })
                    .collect()
            };
            let (x, y) = (row(), row());
            let (xs, ys) = (sparse(&x), sparse(&y));
            let (a, b) = ((&xs.0[..], &xs.1[..]), (&ys.0[..], &ys.1[..]));
            let chi2 = InputKernel::Chi2.eval(a, b);
            assert!((chi2 - chi2_kernel(&x, &y)).abs() <= 1e-12 * (1.0 + chi2.abs()));
            let gamma = 0.3;
            let l1: f64 = x.iter().zip(&y).map(|(u, v)| (u - v).abs()).sum();
            let laplacian = InputKernel::Laplacian { gamma }.eval(a, b);
            assert!((laplacian - (-gamma * l1).exp()).abs() <= 1e-12);
            assert_eq!(InputKernel::Chi2.eval(a, b), InputKernel::Chi2.eval(b, a));
        }
    }
}
