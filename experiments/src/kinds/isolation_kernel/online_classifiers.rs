//! The online binary classifiers of the Isolation Kernel paper by their config name, their
//! shared parameters, and ψ by k-fold cross-validation: the one place the harness names them.
//!
//! * `ik_i`, `ik_a`: IK-OGD (primal, t look-ups) on the IK_i (iForest) or IK_a (aNNE) map;
//! * `ik_i_naive`: the same model, every prediction over all tψ weights (Fig. 4);
//! * `ik_i_dual`: the same model kept as support vectors (§8.1.1);
//! * `ogd`: kernel OGD with L_ψ (or a Gaussian kernel, D1), unbounded support vectors;
//! * `nogd`: Nyström OGD, budget b, rank r (D7-D9);
//! * `adaraker`: AdaRaker (16 Gaussian kernels σ = 2^-10..2^5, `rf_features` orthogonal random
//!   features each, λ by cross-validation over {10^m, 10^m / 2 : m = -5..-2}; spec 7.3;
//!   `adaptive = false`: Raker, one instance over the whole stream).
//!
//! Every learner predicts, then updates (hinge, η = 0.5). An IK learner's partitionings are
//! drawn from the examples it is built on (the training set, or the initial block of a stream)
//! and stay fixed. Test predictions of NOGD use the averaged weights (D9).

use std::time::Instant;

use anyhow::{bail, Result};
use isolation_kernel::{
    label, IkOgd, IkOgdDual, IkOgdNaive, IsolationKernel, KernelOgd, Nogd, NogdParams, OgdKernel,
    Partitioner, Rows, Subsampling,
};
use kernel_core::OnlineLearner;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use random_features::{AdaRaker, OrthogonalGaussianFeatures, RakerParams};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::kinds::common::clock::Clock;
use crate::kinds::isolation_kernel::binary::{Checked, Examples};

/// A learner of the paper, as a config names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    IkI,
    IkA,
    IkINaive,
    IkIDual,
    Ogd,
    Nogd,
    AdaRaker,
}

/// Every method a config can name, with its name.
pub const METHODS: &[(&str, Method)] = &[
    ("ik_i", Method::IkI),
    ("ik_a", Method::IkA),
    ("ik_i_naive", Method::IkINaive),
    ("ik_i_dual", Method::IkIDual),
    ("ogd", Method::Ogd),
    ("nogd", Method::Nogd),
    ("adaraker", Method::AdaRaker),
];

impl Method {
    pub fn find(name: &str) -> Result<Method, String> {
        METHODS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m)
            .ok_or_else(|| {
                let known: Vec<_> = METHODS.iter().map(|(n, _)| *n).collect();
                format!("method = {name:?} is unknown; one of {}", known.join(", "))
            })
    }

    /// Whether it learns on an Isolation Kernel map (random: its partitionings).
    pub fn isolation(self) -> bool {
        matches!(
            self,
            Method::IkI | Method::IkA | Method::IkINaive | Method::IkIDual
        )
    }
}

/// ψ: a fixed value, or `"cv"` (k-fold cross-validation over the powers of two from
/// `cv_psi_min` to `cv_psi_max`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, expecting = "an integer psi >= 2 or the string \"cv\"")]
pub enum Psi {
    Fixed(usize),
    Select(String),
}

/// The height limit of IK_i trees (D2): `"none"` (full isolation, the paper), `"log2_psi"`
/// (⌈log₂ ψ⌉, the authors' code), or a depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "\"none\", \"log2_psi\" or a depth (an integer >= 1)"
)]
pub enum HeightLimit {
    Depth(usize),
    Named(String),
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
fn default_t() -> usize {
    100
}
fn default_height() -> HeightLimit {
    HeightLimit::Named("none".into())
}
fn default_kernel() -> String {
    "laplacian".into()
}
fn default_budget() -> usize {
    100
}
fn default_rank() -> usize {
    20
}
fn default_eta() -> f64 {
    isolation_kernel::PAPER_ETA
}
fn default_lambda() -> Lambda {
    Lambda::Select("cv".into())
}
fn default_rf_features() -> usize {
    50
}
fn default_adaptive() -> bool {
    true
}

/// AdaRaker's λ: a fixed value, or `"cv"` (k-fold cross-validation over [`LAMBDA_GRID`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, expecting = "a number lambda >= 0 or the string \"cv\"")]
pub enum Lambda {
    Fixed(f64),
    Select(String),
}

/// AdaRaker's λ grid (the Isolation Kernel paper, Table 3): {10^m, 10^m / 2 : m = -5..-2},
/// ascending (cross-validation's ties go to the smaller λ).
pub const LAMBDA_GRID: [f64; 8] = [5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2];

/// AdaRaker's Gaussian bandwidths σ = 2^m, m = -10..5 (16 kernels).
pub fn adaraker_sigmas() -> Vec<f64> {
    (-10..=5).map(|m| 2f64.powi(m)).collect()
}

/// The learner's parameters (the paper's settings are the defaults: t = 100, b = 100, r = 20,
/// η = 0.5, L_ψ, full isolation, ψ by 5-fold CV over 2^2..2^12 when `psi = "cv"`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearnerParams {
    /// `ik_i`, `ik_a`, `ik_i_naive`, `ik_i_dual`, `ogd` or `nogd`.
    pub method: String,
    /// ψ (IK subsample size; the Laplacian L_ψ's sharpness for OGD and NOGD) or `"cv"`.
    pub psi: Psi,
    /// Cross-validation tries the powers of two from `cv_psi_min` to `cv_psi_max` (2^2..2^12).
    #[serde(default = "default_psi_min")]
    pub cv_psi_min: usize,
    #[serde(default = "default_psi_max")]
    pub cv_psi_max: usize,
    /// k of the k-fold cross-validation.
    #[serde(default = "default_folds")]
    pub cv_folds: usize,
    /// Cross-validate on the first examples only (OGD's cost is quadratic in them; default:
    /// all of the training set or initial block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv_examples: Option<usize>,
    /// Number of partitionings t (IK methods).
    #[serde(default = "default_t")]
    pub t: usize,
    /// IK_i tree height limit: `"none"`, `"log2_psi"` or a depth (D2).
    #[serde(default = "default_height")]
    pub height_limit: HeightLimit,
    /// IK: all t·ψ subsample indices distinct while t·ψ ≤ n (the authors' code, D3) instead of
    /// independent subsamples (the paper).
    #[serde(default)]
    pub distinct_subsamples: bool,
    /// OGD/NOGD kernel: `"laplacian"` (L_ψ, γ = ln ψ / d on L1) or `"gaussian"` (γ = `gamma`).
    #[serde(default = "default_kernel")]
    pub kernel: String,
    /// γ of the Gaussian kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gamma: Option<f64>,
    /// NOGD budget b.
    #[serde(default = "default_budget")]
    pub budget: usize,
    /// NOGD rank r.
    #[serde(default = "default_rank")]
    pub rank: usize,
    /// Step size η.
    #[serde(default = "default_eta")]
    pub eta: f64,
    /// NOGD: keep the phase-1 model at the switch (D8; default w = 0).
    #[serde(default)]
    pub carry_over: bool,
    /// AdaRaker's regulariser λ or `"cv"`.
    #[serde(default = "default_lambda")]
    pub lambda: Lambda,
    /// AdaRaker's orthogonal random features per kernel (each a sine and a cosine).
    #[serde(default = "default_rf_features")]
    pub rf_features: usize,
    /// AdaRaker's instances on a geometric cover of intervals (`false`: one Raker over the
    /// whole stream).
    #[serde(default = "default_adaptive")]
    pub adaptive: bool,
}

/// The keys of [`LearnerParams`] (a kind's own keys are the others).
pub const LEARNER_KEYS: &[&str] = &[
    "method",
    "psi",
    "cv_psi_min",
    "cv_psi_max",
    "cv_folds",
    "cv_examples",
    "t",
    "height_limit",
    "distinct_subsamples",
    "kernel",
    "gamma",
    "budget",
    "rank",
    "eta",
    "carry_over",
    "lambda",
    "rf_features",
    "adaptive",
];

/// Largest ψ, t and b a config may ask for (memory: tψ weights; b² Gram entries).
pub const MAX_PSI: usize = 1 << 20;
pub const MAX_T: usize = 100_000;
pub const MAX_BUDGET: usize = 20_000;
/// Largest t·ψ (the IK weight vector: 2 GiB of f64).
pub const MAX_T_PSI: usize = 1 << 28;
/// Rows mapped at a time (their φ take MAP_CHUNK·t u32).
const MAP_CHUNK: usize = 1024;

/// What [`Classifier::map`] gives for some rows: the rows' ids and their φ(x), n × t
/// row-major (the IK learners), or nothing (the others read the examples themselves).
#[derive(Default)]
pub struct Mapped(Option<(Vec<usize>, Vec<u32>)>);

impl Mapped {
    /// The φ(x) of the rows `ids`, t values a row; an error where these are not the rows
    /// mapped, or they were not mapped by an IK learner with t partitionings.
    fn phi(&self, ids: &[usize], t: usize) -> Result<std::slice::ChunksExact<'_, u32>> {
        match &self.0 {
            Some((of, phi)) if of == ids && phi.len() == ids.len() * t => Ok(phi.chunks_exact(t)),
            _ => bail!("internal error: the rows were not mapped by this learner"),
        }
    }

    /// All the rows' φ(x) in one slice (empty where nothing was mapped).
    fn all(&self) -> &[u32] {
        self.0.as_ref().map_or(&[], |(_, phi)| phi)
    }
}

impl LearnerParams {
    pub fn method(&self) -> Method {
        Method::find(&self.method).expect("checked")
    }

    /// The ψ values cross-validation tries.
    pub fn psi_grid(&self) -> Vec<usize> {
        powers_of_two(self.cv_psi_min, self.cv_psi_max)
    }

    /// The same parameters with the method as it draws its random numbers: IK-OGD(naive) and
    /// IK-OGD(dual) draw the IK_i partitionings of IK-OGD, so the three forms of one grid point
    /// learn the same model (common random numbers; their predictions are identical).
    pub fn as_drawn(&self) -> LearnerParams {
        let mut p = self.clone();
        if matches!(self.method(), Method::IkINaive | Method::IkIDual) {
            p.method = "ik_i".into();
        }
        p
    }

    /// The parameters of the final model after `choice`: AdaRaker's λ fixed at the chosen one
    /// (ψ is passed to [`Classifier::build`] as it is).
    pub fn chosen(&self, choice: &PsiChoice) -> LearnerParams {
        let mut p = self.clone();
        if let Some(l) = choice.lambda {
            p.lambda = Lambda::Fixed(l);
        }
        p
    }

    /// Whether ψ (AdaRaker: λ) is chosen by cross-validation.
    pub fn selects_psi(&self) -> bool {
        if self.method() == Method::AdaRaker {
            return matches!(self.lambda, Lambda::Select(_));
        }
        matches!(self.psi, Psi::Select(_))
    }

    pub fn check(&self) -> Result<(), String> {
        let method = Method::find(&self.method)?;
        // ψ's domain is the crate's (isolation_kernel::check_psi); MAX_PSI is this harness's
        // memory limit.
        let check_psi = |name: &'static str, psi: usize| {
            isolation_kernel::check_psi(name, psi).map_err(|e| e.to_string())?;
            if psi > MAX_PSI {
                Err(format!("{name} = {psi}: at most {MAX_PSI} (memory)"))
            } else {
                Ok(())
            }
        };
        match &self.psi {
            Psi::Fixed(p) => check_psi("psi", *p)?,
            Psi::Select(s) if s == "cv" => {
                for (name, p) in [
                    ("cv_psi_min", self.cv_psi_min),
                    ("cv_psi_max", self.cv_psi_max),
                ] {
                    check_psi(name, p)?;
                    if !p.is_power_of_two() {
                        return Err(format!("{name} = {p}: expected a power of two"));
                    }
                }
                if self.cv_psi_min > self.cv_psi_max {
                    return Err(format!(
                        "cv_psi_min = {} exceeds cv_psi_max = {}",
                        self.cv_psi_min, self.cv_psi_max
                    ));
                }
                if !(2..=20).contains(&self.cv_folds) {
                    return Err(format!("cv_folds = {}: expected 2 ..= 20", self.cv_folds));
                }
                if let Some(n) = self.cv_examples {
                    if n < 2 * self.cv_folds {
                        return Err(format!(
                            "cv_examples = {n}: at least 2 per fold ({})",
                            2 * self.cv_folds
                        ));
                    }
                }
                if !method.isolation() && self.kernel == "gaussian" {
                    return Err(
                        "psi = \"cv\" selects L_psi; with kernel = \"gaussian\" fix psi".into(),
                    );
                }
            }
            Psi::Select(s) => return Err(format!("psi = {s:?}: expected an integer or \"cv\"")),
        }
        if !(1..=MAX_T).contains(&self.t) {
            return Err(format!("t = {}: expected 1 ..= {MAX_T}", self.t));
        }
        let largest_psi = match self.psi {
            Psi::Fixed(p) => p,
            Psi::Select(_) => self.cv_psi_max,
        };
        if method.isolation() && self.t.saturating_mul(largest_psi) > MAX_T_PSI {
            return Err(format!(
                "t x psi = {} x {largest_psi}: the weight vector would exceed {MAX_T_PSI} entries (2 GiB)",
                self.t
            ));
        }
        match &self.height_limit {
            HeightLimit::Depth(0) => return Err("height_limit = 0: at least 1, or \"none\"".into()),
            HeightLimit::Named(s) if s != "none" && s != "log2_psi" => {
                return Err(format!(
                    "height_limit = {s:?}: expected \"none\", \"log2_psi\" or a depth"
                ))
            }
            _ => {}
        }
        match (self.kernel.as_str(), self.gamma) {
            ("laplacian", None) => {}
            ("laplacian", Some(_)) => {
                return Err(
                    "gamma: only for kernel = \"gaussian\" (L_psi takes gamma = ln psi / d)".into(),
                )
            }
            ("gaussian", Some(g)) if g.is_finite() && g > 0.0 => {}
            ("gaussian", _) => return Err("gamma: kernel = \"gaussian\" needs gamma > 0".into()),
            (other, _) => {
                return Err(format!(
                    "kernel = {other:?}: expected \"laplacian\" or \"gaussian\""
                ))
            }
        }
        if !(1..=MAX_BUDGET).contains(&self.budget) {
            return Err(format!(
                "budget = {}: expected 1 ..= {MAX_BUDGET}",
                self.budget
            ));
        }
        if self.rank == 0 || self.rank > self.budget {
            return Err(format!(
                "rank = {}: expected 1 ..= budget ({})",
                self.rank, self.budget
            ));
        }
        if !(self.eta.is_finite() && self.eta > 0.0) {
            return Err(format!("eta = {}: expected a finite step > 0", self.eta));
        }
        match &self.lambda {
            Lambda::Fixed(l) if l.is_finite() && *l >= 0.0 && 2.0 * self.eta * l < 1.0 => {}
            Lambda::Fixed(l) => {
                return Err(format!(
                    "lambda = {l}: expected a finite number >= 0 with 2 eta lambda < 1"
                ))
            }
            Lambda::Select(s) if s == "cv" => {}
            Lambda::Select(s) => {
                return Err(format!("lambda = {s:?}: expected a number or \"cv\""))
            }
        }
        if !(1..=10_000).contains(&self.rf_features) {
            return Err(format!(
                "rf_features = {}: expected 1 ..= 10000",
                self.rf_features
            ));
        }
        Ok(())
    }

    fn partitioner(&self, psi: usize) -> Partitioner {
        match self.method() {
            Method::IkA => Partitioner::Anne,
            _ => Partitioner::IForest {
                height_limit: match &self.height_limit {
                    HeightLimit::Depth(h) => Some(*h),
                    HeightLimit::Named(s) if s == "log2_psi" => {
                        Some(isolation_kernel::paper_height_limit(psi).max(1))
                    }
                    HeightLimit::Named(_) => None,
                },
            },
        }
    }

    fn ogd_kernel(&self, psi: usize, dim: usize) -> Result<OgdKernel> {
        Ok(match self.gamma {
            Some(g) => OgdKernel::gaussian(g)?,
            None => OgdKernel::laplacian_psi(psi, dim)?,
        })
    }
}

pub enum IkModel {
    Primal(IkOgd),
    Naive(IkOgdNaive),
    Dual(IkOgdDual),
}

/// The three forms of IK-OGD answer one protocol: the stream loops dispatch here once.
impl OnlineLearner for IkModel {
    type Row = [u32];
    type Error = isolation_kernel::IsolationError;

    fn predict_one(&self, phi: &[u32]) -> Result<f64, Self::Error> {
        match self {
            IkModel::Primal(m) => m.predict_one(phi),
            IkModel::Naive(m) => m.predict_one(phi),
            IkModel::Dual(m) => m.predict_one(phi),
        }
    }

    fn update(&mut self, phi: &[u32], c: f64) -> Result<f64, Self::Error> {
        match self {
            IkModel::Primal(m) => m.update(phi, c),
            IkModel::Naive(m) => m.update(phi, c),
            IkModel::Dual(m) => m.update(phi, c),
        }
    }
}

impl IkModel {
    fn counters(&self) -> Counters {
        match self {
            IkModel::Primal(m) => Counters::looked_up(m.support_vectors(), m.lookups()),
            IkModel::Naive(m) => Counters::looked_up(m.support_vectors(), m.lookups()),
            IkModel::Dual(m) => Counters::evaluated(m.support_vectors(), m.kernel_evaluations()),
        }
    }
}

/// One learner, ready for a stream.
pub enum Classifier {
    Isolation {
        map: IsolationKernel,
        model: IkModel,
        /// CPU seconds of this thread spent mapping rows to φ(x) (train and test; IK-OGD's primal
        /// test predictions with their mapping, see [`Classifier::test`]).
        map_seconds: std::cell::Cell<f64>,
    },
    Ogd(KernelOgd),
    Nogd(Nogd),
    AdaRaker(Box<AdaRaker>),
}

/// Deterministic work counters (they make the complexity claims checkable without timing).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    /// Support vectors (OGD, IK dual), landmarks (NOGD) or updates (IK primal).
    pub support_vectors: usize,
    /// Kernel evaluations k(x_j, x) (OGD, NOGD; IK dual: ⟨Φ(x_j), Φ(x)⟩).
    pub kernel_evaluations: u64,
    /// Weight look-ups (IK primal: t per prediction; naive: tψ).
    pub lookups: u64,
}

impl Counters {
    /// A learner that looks weights up (IK primal and naive).
    fn looked_up(support_vectors: usize, lookups: u64) -> Self {
        Self {
            support_vectors,
            kernel_evaluations: 0,
            lookups,
        }
    }

    /// A learner that evaluates kernels (OGD, NOGD, IK dual).
    fn evaluated(support_vectors: usize, kernel_evaluations: u64) -> Self {
        Self {
            support_vectors,
            kernel_evaluations,
            lookups: 0,
        }
    }
}

impl Classifier {
    /// A fresh learner with ψ = `psi`; IK partitionings are drawn from `fit` with `rng`.
    pub fn build(
        p: &LearnerParams,
        psi: usize,
        fit: &Checked,
        rng: &mut ChaCha8Rng,
    ) -> Result<Self> {
        let method = p.method();
        let dim = fit.dim();
        if method.isolation() {
            let rows = fit.rows();
            if psi > fit.len() {
                bail!(
                    "psi = {psi} exceeds the {} examples the partitionings are drawn from",
                    fit.len()
                );
            }
            let subsampling = if p.distinct_subsamples {
                Subsampling::DistinctAcrossPartitionings
            } else {
                Subsampling::Independent
            };
            let map =
                IsolationKernel::fit_with(rows, psi, p.t, p.partitioner(psi), subsampling, rng)?;
            let model = match method {
                Method::IkINaive => IkModel::Naive(IkOgdNaive::new(map.t(), psi, p.eta)?),
                Method::IkIDual => IkModel::Dual(IkOgdDual::for_kernel(&map, p.eta)?),
                _ => IkModel::Primal(IkOgd::for_kernel(&map, p.eta)?),
            };
            return Ok(Classifier::Isolation {
                map,
                model,
                map_seconds: std::cell::Cell::new(0.0),
            });
        }
        if method == Method::AdaRaker {
            let lambda = match p.lambda {
                Lambda::Fixed(l) => l,
                Lambda::Select(_) => bail!("AdaRaker's lambda is chosen before it is built"),
            };
            let features =
                OrthogonalGaussianFeatures::sample(dim, p.rf_features, &adaraker_sigmas(), rng)?;
            let params = RakerParams { eta: p.eta, lambda };
            return Ok(Classifier::AdaRaker(Box::new(AdaRaker::new(
                features, params, p.adaptive,
            )?)));
        }
        let kernel = p.ogd_kernel(psi, dim)?;
        Ok(match method {
            Method::Ogd => Classifier::Ogd(KernelOgd::new(kernel, dim, p.eta)?),
            _ => Classifier::Nogd(Nogd::new(NogdParams {
                kernel,
                dim,
                budget: p.budget,
                rank: p.rank,
                eta: p.eta,
                carry_over: p.carry_over,
            })?),
        })
    }

    /// φ(x) of the rows `ids` (n × t, row-major) into `out`; aNNE maps in parallel (the same
    /// numbers for any thread count), trees walk the rows in blocks. `out` is resized to n × t
    /// (every entry is then written: a buffer of that length is reused as it is).
    fn phi(
        map: &IsolationKernel,
        rows: Rows,
        ids: &[usize],
        seconds: &std::cell::Cell<f64>,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        let clock = Clock::start();
        let t = map.t();
        out.resize(ids.len() * t, 0);
        if matches!(
            map.partitionings(),
            isolation_kernel::Partitionings::Voronoi(_)
        ) {
            out.par_chunks_mut(t * 64)
                .zip(ids.par_chunks(64))
                .try_for_each(|(o, ids)| map.index_rows_of(rows, ids, o))?;
        } else {
            map.index_rows_of(rows, ids, out)?;
        }
        seconds.set(seconds.get() + clock.cpu());
        Ok(())
    }

    /// What the learner reads of the rows `ids` besides the examples: their φ(x) for the IK
    /// learners (mapped once, for a test and the learning after it: the map does not depend on
    /// the weights), nothing for the others.
    pub fn map(&self, ex: &Checked, ids: &[usize]) -> Result<Mapped> {
        let mut mapped = Mapped::default();
        self.map_into(ex, ids, &mut mapped)?;
        Ok(mapped)
    }

    /// [`Self::map`] into `mapped`, reusing its buffers (a stream is mapped a chunk at a time:
    /// without them each chunk would allocate and clear its t values a row).
    pub fn map_into(&self, ex: &Checked, ids: &[usize], mapped: &mut Mapped) -> Result<()> {
        match self {
            Classifier::Isolation {
                map, map_seconds, ..
            } => {
                let (of, phi) = mapped.0.get_or_insert_with(Default::default);
                of.clear();
                of.extend_from_slice(ids);
                Self::phi(map, ex.rows(), ids, map_seconds, phi)?;
            }
            _ => mapped.0 = None,
        }
        Ok(())
    }

    /// Predicts then updates on the rows `ids` in order; returns the number of mistakes
    /// (sign of the pre-update prediction, 0 counted as −1, vs the label). Maps
    /// [`MAP_CHUNK`] rows at a time.
    pub fn train(&mut self, ex: &Checked, ids: &[usize]) -> Result<usize> {
        let (mut mistakes, mut mapped) = (0, Mapped::default());
        for ids in ids.chunks(MAP_CHUNK) {
            self.map_into(ex, ids, &mut mapped)?;
            mistakes += self.train_mapped(ex, ids, &mapped)?;
        }
        Ok(mistakes)
    }

    /// [`Self::train`] on rows already mapped by [`Self::map`].
    pub fn train_mapped(&mut self, ex: &Checked, ids: &[usize], mapped: &Mapped) -> Result<usize> {
        let mut mistakes = 0;
        match self {
            Classifier::Isolation { map, model, .. } => {
                for (row, &i) in mapped.phi(ids, map.t())?.zip(ids) {
                    let c = ex.label(i);
                    let g = model.update(row, c)?;
                    mistakes += usize::from(label(g) != c);
                }
            }
            Classifier::Ogd(m) => {
                for &i in ids {
                    let c = ex.label(i);
                    mistakes += usize::from(label(m.update_row(ex.row(i), c)?) != c);
                }
            }
            Classifier::Nogd(m) => {
                for &i in ids {
                    let c = ex.label(i);
                    mistakes += usize::from(label(m.update_row(ex.row(i), c)?) != c);
                }
            }
            Classifier::AdaRaker(m) => {
                let rows = ex.rows();
                let mut x = vec![0.0; rows.dim()];
                for &i in ids {
                    let c = ex.label(i);
                    rows.dense_row(i, &mut x);
                    mistakes += usize::from(label(m.update(&x, c)?) != c);
                }
            }
        }
        Ok(mistakes)
    }

    /// Test-mode predictions of the rows `ids` (no update; NOGD: averaged weights); returns
    /// the number of correct labels. Maps [`MAP_CHUNK`] rows at a time, except IK-OGD's primal
    /// form on trees, whose predictions [`IkOgd::predict_rows_of`] makes (the same scores; where
    /// w outgrows L1 it sums each row's weights as the trees find its leaves, never writing
    /// φ(x) out), all of its time counted as mapping.
    pub fn test(&self, ex: &Checked, ids: &[usize]) -> Result<usize> {
        if let Classifier::Isolation {
            map,
            model: IkModel::Primal(m),
            map_seconds,
        } = self
        {
            if matches!(
                map.partitionings(),
                isolation_kernel::Partitionings::Trees(_)
            ) {
                let clock = Clock::start();
                let mut scores = vec![0.0; ids.len()];
                m.predict_rows_of(map, ex.rows(), ids, &mut scores)?;
                map_seconds.set(map_seconds.get() + clock.cpu());
                return Ok(scores
                    .iter()
                    .zip(ids)
                    .filter(|&(&g, &i)| label(g) == ex.label(i))
                    .count());
            }
        }
        let (mut correct, mut mapped) = (0, Mapped::default());
        for ids in ids.chunks(MAP_CHUNK) {
            self.map_into(ex, ids, &mut mapped)?;
            correct += self.test_mapped(ex, ids, &mapped)?;
        }
        Ok(correct)
    }

    /// [`Self::test`] on rows already mapped by [`Self::map`].
    pub fn test_mapped(&self, ex: &Checked, ids: &[usize], mapped: &Mapped) -> Result<usize> {
        let mut correct = 0;
        match self {
            Classifier::Isolation { map, model, .. } => {
                let rows_of = mapped.phi(ids, map.t())?;
                let mut scores = vec![0.0; ids.len()];
                match model {
                    // The primal weights predict the rows at once; the others row by row.
                    IkModel::Primal(m) => m.predict_rows(mapped.all(), &mut scores)?,
                    _ => {
                        for (g, row) in scores.iter_mut().zip(rows_of) {
                            *g = model.predict_one(row)?;
                        }
                    }
                }
                for (&g, &i) in scores.iter().zip(ids) {
                    correct += usize::from(label(g) == ex.label(i));
                }
            }
            Classifier::Ogd(m) => {
                for &i in ids {
                    correct += usize::from(label(m.predict_row(ex.row(i))?) == ex.label(i));
                }
            }
            Classifier::Nogd(m) => {
                for &i in ids {
                    correct +=
                        usize::from(label(m.predict_averaged_row(ex.row(i))?) == ex.label(i));
                }
            }
            Classifier::AdaRaker(m) => {
                let rows = ex.rows();
                let mut x = vec![0.0; rows.dim()];
                for &i in ids {
                    rows.dense_row(i, &mut x);
                    correct += usize::from(label(m.predict_one(&x)?) == ex.label(i));
                }
            }
        }
        Ok(correct)
    }

    /// CPU seconds (of the calling thread) spent mapping rows to φ(x) so far; `None` for the
    /// learners on a kernel (OGD, NOGD).
    pub fn map_seconds(&self) -> Option<f64> {
        match self {
            Classifier::Isolation { map_seconds, .. } => Some(map_seconds.get()),
            _ => None,
        }
    }

    pub fn counters(&self) -> Counters {
        match self {
            Classifier::Isolation { model, .. } => model.counters(),
            Classifier::Ogd(m) => Counters::evaluated(m.support_vectors(), m.kernel_evaluations()),
            Classifier::Nogd(m) => Counters::evaluated(m.support_vectors(), m.kernel_evaluations()),
            Classifier::AdaRaker(_) => Counters::default(),
        }
    }
}

/// The powers of two from `min` (itself a power of two) to `max`: a cross-validation grid of ψ.
pub fn powers_of_two(min: usize, max: usize) -> Vec<usize> {
    std::iter::successors(Some(min), |p| p.checked_mul(2))
        .take_while(|&p| p <= max)
        .collect()
}

/// The outcome of choosing ψ.
#[derive(Debug, Clone)]
pub struct PsiChoice {
    pub psi: usize,
    /// AdaRaker's λ (chosen or fixed; `None` for the other methods, which read ψ).
    pub lambda: Option<f64>,
    /// Mean held-out accuracy of the chosen ψ (`None` when ψ was fixed).
    pub cv_accuracy: Option<f64>,
    /// Wall seconds the cross-validation took (0 when ψ was fixed).
    pub cv_seconds: f64,
}

/// ψ: the fixed value, or the one with the best mean held-out accuracy of a k-fold
/// cross-validation on the examples `ids` in their order (the first `cv_examples` of them;
/// ties: the smaller ψ). Fold f holds
/// out the contiguous positions `f·n/k .. (f+1)·n/k`; the learner is built on and trained over
/// the rest in order (one pass), then tested on the held-out fold. IK candidates larger than a
/// training fold are skipped. Every (ψ, fold) draws from its own seed (taken from `rng` in a
/// fixed order), so the choice does not depend on the thread count.
pub fn choose_psi(
    p: &LearnerParams,
    ex: &Examples,
    ids: &[usize],
    rng: &mut ChaCha8Rng,
) -> Result<PsiChoice> {
    if p.method() == Method::AdaRaker {
        return choose_lambda(p, ex, ids, rng);
    }
    let psi = match &p.psi {
        Psi::Fixed(psi) => {
            return Ok(PsiChoice {
                psi: *psi,
                lambda: None,
                cv_accuracy: None,
                cv_seconds: 0.0,
            })
        }
        Psi::Select(_) => p.psi_grid(),
    };
    let ids = &ids[..p.cv_examples.unwrap_or(ids.len()).min(ids.len())];
    cross_validate(
        &psi,
        ids,
        p.cv_folds,
        p.method().isolation(),
        rng,
        |s, kept, held, seed| held_out_accuracy(p, s, ex, kept, held, seed),
    )
}

/// One fold of a cross-validation: a learner with ψ = `psi` built from `seed`, trained over
/// the examples `kept` in order, and its accuracy on the examples `held`.
fn held_out_accuracy(
    p: &LearnerParams,
    psi: usize,
    ex: &Examples,
    kept: &[usize],
    held: &[usize],
    seed: [u8; 32],
) -> Result<f64> {
    let ex = ex.checked()?;
    // Only IK draws from the examples it is built on; the others need their dimension.
    let subset;
    let fit = if p.method().isolation() {
        subset = ex.subset(kept);
        subset.checked()?
    } else {
        ex
    };
    let mut learner = Classifier::build(p, psi, &fit, &mut ChaCha8Rng::from_seed(seed))?;
    learner.train(&ex, kept)?;
    Ok(learner.test(&ex, held)? as f64 / held.len() as f64)
}

/// AdaRaker's λ: the fixed value, or the one of [`LAMBDA_GRID`] with the best mean held-out
/// accuracy of the k-fold cross-validation of [`choose_psi`] (ties: the smaller λ). `psi` of
/// the choice is 0 (AdaRaker has none).
fn choose_lambda(
    p: &LearnerParams,
    ex: &Examples,
    ids: &[usize],
    rng: &mut ChaCha8Rng,
) -> Result<PsiChoice> {
    if let Lambda::Fixed(l) = p.lambda {
        return Ok(PsiChoice {
            psi: 0,
            lambda: Some(l),
            cv_accuracy: None,
            cv_seconds: 0.0,
        });
    }
    let ids = &ids[..p.cv_examples.unwrap_or(ids.len()).min(ids.len())];
    let grid: Vec<usize> = (0..LAMBDA_GRID.len()).collect();
    let with = |j: usize| {
        let mut q = p.clone();
        q.lambda = Lambda::Fixed(LAMBDA_GRID[j]);
        q
    };
    let choice = cross_validate(&grid, ids, p.cv_folds, false, rng, |j, kept, held, seed| {
        held_out_accuracy(&with(j), 0, ex, kept, held, seed)
    })?;
    Ok(PsiChoice {
        psi: 0,
        lambda: Some(LAMBDA_GRID[choice.psi]),
        ..choice
    })
}

/// The ψ of `grid` with the best mean held-out accuracy of a k-fold cross-validation over
/// `ids` in their order (ties: the smaller ψ). Fold f holds out the contiguous positions
/// `f·n/k .. (f+1)·n/k`; `score(ψ, kept, held, seed)` trains on the kept examples and returns
/// the accuracy on the held-out ones. With `partitions_kept`, candidates larger than a training
/// fold are skipped (IK subsamples ψ of the kept examples). Every (ψ, fold) draws from its own
/// seed (taken from `rng` in a fixed order) and the pairs run in parallel, so the choice does
/// not depend on the thread count.
pub fn cross_validate(
    grid: &[usize],
    ids: &[usize],
    k: usize,
    partitions_kept: bool,
    rng: &mut ChaCha8Rng,
    score: impl Fn(usize, &[usize], &[usize], [u8; 32]) -> Result<f64> + Sync,
) -> Result<PsiChoice> {
    let start = Instant::now();
    let n = ids.len();
    if n < 2 * k {
        bail!(
            "cross-validation needs at least {} examples, got {n}",
            2 * k
        );
    }
    let bounds: Vec<usize> = (0..=k).map(|f| f * n / k).collect();
    let smallest_fold_train = (0..k)
        .map(|f| n - (bounds[f + 1] - bounds[f]))
        .min()
        .unwrap_or(0);
    let candidates: Vec<usize> = grid
        .iter()
        .copied()
        .filter(|&s| !partitions_kept || s <= smallest_fold_train)
        .collect();
    if candidates.is_empty() {
        bail!(
            "no psi of the cross-validation grid fits a cross-validation training fold of {smallest_fold_train} examples"
        );
    }
    let jobs: Vec<(usize, usize, [u8; 32])> = candidates
        .iter()
        .flat_map(|&s| (0..k).map(move |f| (s, f)))
        .map(|(s, f)| (s, f, rng.random()))
        .collect();
    let accuracies: Vec<f64> = jobs
        .par_iter()
        .map(|&(s, f, seed)| -> Result<f64> {
            let held: &[usize] = &ids[bounds[f]..bounds[f + 1]];
            let kept: Vec<usize> = ids[..bounds[f]]
                .iter()
                .chain(&ids[bounds[f + 1]..])
                .copied()
                .collect();
            score(s, &kept, held, seed)
        })
        .collect::<Result<_>>()?;
    let mut best: Option<(usize, f64)> = None;
    for (j, &s) in candidates.iter().enumerate() {
        let mean = accuracies[j * k..(j + 1) * k].iter().sum::<f64>() / k as f64;
        if best.is_none_or(|(_, b)| mean > b) {
            best = Some((s, mean));
        }
    }
    let (psi, acc) = best.expect("at least one candidate");
    Ok(PsiChoice {
        psi,
        lambda: None,
        cv_accuracy: Some(acc),
        cv_seconds: start.elapsed().as_secs_f64(),
    })
}

/// Splits a kind's `[params]` point into the learner's keys and the kind's own.
pub fn split_keys(
    point: serde_json::Map<String, serde_json::Value>,
) -> (
    serde_json::Map<String, serde_json::Value>,
    serde_json::Map<String, serde_json::Value>,
) {
    point
        .into_iter()
        .partition(|(k, _)| LEARNER_KEYS.contains(&k.as_str()))
}

/// A kind's parameters: the learner's ([`LearnerParams`]) and the kind's own `P`, written side by
/// side in one `[params]` table; unknown keys are rejected by `P`.
#[derive(Debug, Clone, Serialize)]
pub struct WithLearner<P> {
    #[serde(flatten)]
    pub learner: LearnerParams,
    #[serde(flatten)]
    pub own: P,
}

impl LearnerParams {
    /// The learner keys the method reads: ψ, η and, when ψ is cross-validated, the
    /// cross-validation's keys for every method; t, the subsampling and (IK_i forms) the height
    /// limit for the Isolation Kernel; the kernel for OGD and NOGD, and NOGD's budget, rank and
    /// carry-over.
    pub fn reads(&self) -> Vec<&'static str> {
        if self.method() == Method::AdaRaker {
            let mut keys = vec!["method", "eta", "lambda", "rf_features", "adaptive"];
            if self.selects_psi() {
                keys.extend(["cv_folds", "cv_examples"]);
            }
            return keys;
        }
        let mut keys = vec!["method", "psi", "eta"];
        if self.selects_psi() {
            keys.extend(["cv_psi_min", "cv_psi_max", "cv_folds", "cv_examples"]);
        }
        match self.method() {
            Method::IkA => keys.extend(["t", "distinct_subsamples"]),
            Method::IkI | Method::IkINaive | Method::IkIDual => {
                keys.extend(["t", "distinct_subsamples", "height_limit"])
            }
            Method::Ogd => keys.extend(["kernel", "gamma"]),
            Method::Nogd => keys.extend(["kernel", "gamma", "budget", "rank", "carry_over"]),
            Method::AdaRaker => unreachable!("returned above"),
        }
        keys
    }
}

impl<P: Serialize + Clone> WithLearner<P> {
    /// The parameters that decide a cell's random draws ([`crate::kinds::Kind::stream`]): the
    /// kind's own and the learner keys the method reads ([`LearnerParams::reads`]), with the
    /// method as it draws ([`LearnerParams::as_drawn`]). A key only other methods read (NOGD's
    /// budget, OGD's kernel), or no method reads (the cross-validation's with ψ fixed), never
    /// moves this method's numbers.
    pub fn drawn(&self) -> serde_json::Value {
        let reads = self.learner.reads();
        let mut all = serde_json::to_value(WithLearner {
            learner: self.learner.as_drawn(),
            own: self.own.clone(),
        })
        .expect("parameters serialise");
        if let Some(o) = all.as_object_mut() {
            o.retain(|k, _| !LEARNER_KEYS.contains(&k.as_str()) || reads.contains(&k.as_str()));
        }
        all
    }

    /// [`Self::drawn`] without the kind's `read_text`: timing the reading too draws nothing, so
    /// the numbers are the same with or without it.
    pub fn drawn_untimed(&self) -> serde_json::Value {
        let mut drawn = self.drawn();
        if let Some(o) = drawn.as_object_mut() {
            o.remove("read_text");
        }
        drawn
    }
}

impl<'de, P: serde::de::DeserializeOwned> Deserialize<'de> for WithLearner<P> {
    /// Each half is read from its own TOML text ([`crate::toml_table::typed_table`]), so that an
    /// error names its key (`params.t: invalid type ...`); an unknown key lists the learner's
    /// keys besides the kind's.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let point = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let (learner, own) = split_keys(point);
        let table = |m: serde_json::Map<String, serde_json::Value>| {
            toml::Table::try_from(m).map_err(|e| D::Error::custom(format!("params: {e}")))
        };
        let learner =
            crate::toml_table::typed_table(table(learner)?, "params").map_err(D::Error::custom)?;
        let own = crate::toml_table::typed_table(table(own)?, "params").map_err(|e| {
            if e.contains("unknown field") {
                D::Error::custom(format!(
                    "{e}, or one of the learner's keys: {}",
                    LEARNER_KEYS.join(", ")
                ))
            } else {
                D::Error::custom(e)
            }
        })?;
        Ok(WithLearner { learner, own })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// n sparse examples of dimension 6, labels from the first two attributes.
    fn examples(n: usize) -> Examples {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let (mut indptr, mut indices, mut values, mut y) = (vec![0], vec![], vec![], vec![]);
        for _ in 0..n {
            let mut x = [0.0; 6];
            for (a, v) in x.iter_mut().enumerate() {
                if a < 2 || rng.random_bool(0.5) {
                    *v = rng.random_range(-1.0..1.0);
                    indices.push(a as u32);
                    values.push(*v);
                }
            }
            indptr.push(indices.len());
            y.push(if x[0] + x[1] > 0.0 { 1.0 } else { -1.0 });
        }
        let x = datasets::sparse::CsrMatrix::from_parts(6, indptr, indices, values).unwrap();
        Examples::from_parts(datasets::Inputs::Sparse(x), y)
    }

    /// The reference: each row mapped alone (`index_into`), predicted, then learnt, by the
    /// learner's model directly; returns (correct in test mode, mistakes while learning).
    fn row_by_row(learner: &mut Classifier, ex: &Examples, block: &[usize]) -> (usize, usize) {
        let Classifier::Isolation { map, model, .. } = learner else {
            unreachable!("IK learners only")
        };
        let mut phi = vec![0u32; map.t()];
        let mut correct = 0;
        for &i in block {
            map.index_into(ex.row(i), &mut phi).unwrap();
            correct += usize::from(label(model.predict_one(&phi).unwrap()) == ex.label(i));
        }
        let mut mistakes = 0;
        for &i in block {
            map.index_into(ex.row(i), &mut phi).unwrap();
            mistakes += usize::from(label(model.update(&phi, ex.label(i)).unwrap()) != ex.label(i));
        }
        (correct, mistakes)
    }

    #[test]
    fn a_block_mapped_once_is_tested_and_learnt_as_row_by_row() {
        let ex = examples(600);
        let all = ex.checked().unwrap();
        let ids: Vec<usize> = (0..600).rev().collect();
        for method in ["ik_i", "ik_a", "ik_i_naive", "ik_i_dual"] {
            let p: LearnerParams =
                serde_json::from_value(serde_json::json!({"method": method, "psi": 16, "t": 20}))
                    .unwrap();
            let build = || Classifier::build(&p, 16, &all, &mut ChaCha8Rng::seed_from_u64(4));
            let (mut once, mut twice) = (build().unwrap(), build().unwrap());
            let (mut correct, mut mistakes) = ([0; 2], [0; 2]);
            // One buffer reused for blocks of 70, 25 and 110 rows in turn (shrinking, growing).
            let mut mapped = Mapped::default();
            let mut rest = &ids[..];
            for size in [70, 25, 110].into_iter().cycle() {
                if rest.is_empty() {
                    break;
                }
                let (block, after) = rest.split_at(size.min(rest.len()));
                rest = after;
                once.map_into(&all, block, &mut mapped).unwrap();
                correct[0] += once.test_mapped(&all, block, &mapped).unwrap();
                mistakes[0] += once.train_mapped(&all, block, &mapped).unwrap();
                let (c, m) = row_by_row(&mut twice, &ex, block);
                correct[1] += c;
                mistakes[1] += m;
            }
            assert_eq!(correct[0], correct[1], "{method}");
            assert_eq!(mistakes[0], mistakes[1], "{method}");
            assert!(correct[0] > 300, "{method}: {correct:?} of 600 tested");
            assert_eq!(once.counters(), twice.counters(), "{method}");
        }
    }

    /// The wiring of `test` for IK-OGD's primal form (predictions through the kernel: the bits
    /// of each route are tested in the isolation-kernel crate): the same rows, labels and model
    /// as mapping the rows and `test_mapped`, so the same count of correct labels and of
    /// look-ups; after training with η = 0.37 at ψ = 16 and ψ = 512 (t = 20: 2.5 and 80 KiB of
    /// weights).
    #[test]
    fn testing_through_the_kernel_counts_what_testing_the_mapped_rows_does() {
        let ex = examples(2_000);
        let all = ex.checked().unwrap();
        let (train, test): (Vec<usize>, Vec<usize>) = (0..2_000).partition(|i| i % 3 != 0);
        for psi in [16, 512] {
            let p: LearnerParams = serde_json::from_value(
                serde_json::json!({"method": "ik_i", "psi": psi, "t": 20, "eta": 0.37}),
            )
            .unwrap();
            let mut learner =
                Classifier::build(&p, psi, &all, &mut ChaCha8Rng::seed_from_u64(4)).unwrap();
            learner.train(&all, &train).unwrap();
            let mapped = learner.map(&all, &test).unwrap();
            let before = learner.counters();
            let want = learner.test_mapped(&all, &test, &mapped).unwrap();
            let after_mapped = learner.counters();
            let got = learner.test(&all, &test).unwrap();
            assert_eq!(got, want, "psi {psi}");
            assert!(got > test.len() / 2, "psi {psi}: {got} of {}", test.len());
            assert_eq!(
                learner.counters().lookups - after_mapped.lookups,
                after_mapped.lookups - before.lookups
            );
        }
    }

    #[test]
    fn rows_mapped_for_other_rows_or_by_another_learner_are_an_error() {
        let ex = examples(100);
        let all = ex.checked().unwrap();
        let learner = |method: &str| {
            let p: LearnerParams =
                serde_json::from_value(serde_json::json!({"method": method, "psi": 8, "t": 5}))
                    .unwrap();
            Classifier::build(&p, 8, &all, &mut ChaCha8Rng::seed_from_u64(1)).unwrap()
        };
        let (mut ik, ogd) = (learner("ik_i"), learner("ogd"));
        let by_ogd = ogd.map(&all, &[0, 1]).unwrap();
        let err = ik.train_mapped(&all, &[0, 1], &by_ogd).unwrap_err();
        assert!(err.to_string().contains("not mapped"), "{err}");
        let two = ik.map(&all, &[0, 1]).unwrap();
        assert!(ik.test_mapped(&all, &[0, 1, 2], &two).is_err());
        assert!(ik.test_mapped(&all, &[2, 3], &two).is_err());
        assert!(ik.test_mapped(&all, &[0, 1], &two).is_ok());
        // The kernel learners map nothing.
        assert!(by_ogd.0.is_none());
    }

    #[test]
    fn learner_keys_are_the_fields_of_learner_params() {
        let p: LearnerParams = serde_json::from_value(serde_json::json!({
            "method": "nogd", "psi": 8, "kernel": "gaussian", "gamma": 0.5, "cv_examples": 100
        }))
        .unwrap();
        let v = serde_json::to_value(&p).unwrap();
        let mut keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        let mut expected: Vec<_> = LEARNER_KEYS.iter().map(|s| s.to_string()).collect();
        keys.sort();
        expected.sort();
        assert_eq!(keys, expected);
    }

    #[test]
    fn bad_parameters_are_named() {
        let parse = |v: serde_json::Value| {
            serde_json::from_value::<LearnerParams>(v)
                .map_err(|e| e.to_string())
                .and_then(|p| p.check().map(|_| p))
        };
        for (v, needle) in [
            (serde_json::json!({"method": "svm", "psi": 8}), "unknown"),
            (serde_json::json!({"method": "ik_i", "psi": 1}), "psi = 1"),
            (
                serde_json::json!({"method": "ik_i", "psi": "auto"}),
                "\"auto\"",
            ),
            (
                serde_json::json!({"method": "ik_i", "psi": 8, "t": 0}),
                "t = 0",
            ),
            (
                serde_json::json!({"method": "nogd", "psi": 8, "rank": 200}),
                "rank",
            ),
            (
                serde_json::json!({"method": "ogd", "psi": 8, "kernel": "gaussian"}),
                "gamma",
            ),
            (
                serde_json::json!({"method": "ik_i", "psi": 8, "height_limit": "half"}),
                "height_limit",
            ),
            (
                serde_json::json!({"method": "ik_i", "psi": 8, "eta": -1.0}),
                "eta",
            ),
            (
                serde_json::json!({"method": "ik_i", "psi": 8, "tt": 3}),
                "unknown field",
            ),
            (
                serde_json::json!({"method": "adaraker", "psi": 8, "lambda": -1.0}),
                "lambda = -1",
            ),
            (
                serde_json::json!({"method": "adaraker", "psi": 8, "lambda": "auto"}),
                "lambda = \"auto\"",
            ),
            (
                serde_json::json!({"method": "adaraker", "psi": 8, "rf_features": 0}),
                "rf_features = 0",
            ),
        ] {
            let e = parse(v).unwrap_err();
            assert!(e.contains(needle), "{e} lacks {needle}");
        }
    }

    /// AdaRaker reads neither ψ nor the Isolation Kernel's keys: its random draws (the
    /// stream) stay the same when they change, and IK's stay the same when AdaRaker's change.
    #[test]
    fn adaraker_and_ik_read_disjoint_keys() {
        let with = |v: serde_json::Value| -> serde_json::Value {
            let p: LearnerParams = serde_json::from_value(v).unwrap();
            p.check().unwrap();
            WithLearner {
                learner: p,
                own: (),
            }
            .drawn()
        };
        assert_eq!(
            with(serde_json::json!({"method": "adaraker", "psi": 8, "t": 10})),
            with(serde_json::json!({"method": "adaraker", "psi": "cv", "t": 100}))
        );
        assert_ne!(
            with(serde_json::json!({"method": "adaraker", "psi": 8, "lambda": 0.001})),
            with(serde_json::json!({"method": "adaraker", "psi": 8, "lambda": 0.01}))
        );
        assert_eq!(
            with(
                serde_json::json!({"method": "ik_i", "psi": 8, "lambda": 0.001, "adaptive": false})
            ),
            with(serde_json::json!({"method": "ik_i", "psi": 8, "rf_features": 7}))
        );
    }
}
