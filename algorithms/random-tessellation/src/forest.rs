//! Random tessellation forests (spec §5, §5.2, §7): T independent SMC runs, each giving one
//! tree; the forest label of a test point is the mode of the T tree labels (ties → the lowest
//! label, D6).
//!
//! The method family of the paper is a [`Prior`] × [`ForestConfig::likelihood`]:
//! uRTF / wuRTF / MRTF / wMRTF (SMC with the Dirichlet–multinomial likelihood) and
//! uRTF.i / MRTF.i (`likelihood: false`, §5.2). Decisions D1-D3 and D5 are
//! [`AlphaForm`], [`CutRate`], [`Routing`] and [`TreePrediction`]; D4 (scaling) belongs to the
//! caller ([`crate::preprocess`]).
//!
//! Seeding: tree t draws from its own ChaCha8 stream, `ChaCha8Rng::seed_from_u64(seed)` with
//! `set_stream(t)`, so a forest's output does not depend on how trees are scheduled. Trees run
//! sequentially (the harness parallelises across cells).
//!
//! Interpretations where the spec leaves room (see also the docs of the `smc` and `cell` modules):
//! * tess19's clock after a cut is Exp(Σ_a Λ_a) over **all** cells of the new partition, paused
//!   ones included (spec §3, and tess19 sums every cell's Λ); it matters only for a finite τ;
//! * a retry after a failed attempt chooses the cell again (∝ Λ_a) and draws new hyperplanes;
//! * the loop guard counts iterations per exact MAP cut count (tess19 lumps 0 and 1 cuts);
//! * `likelihood: false` runs one particle whatever `particles` says (§5.2);
//! * [`TreeStats`] / [`ForestStats`] describe the predicting (highest-weight) particle, also
//!   under [`TreePrediction::WeightedVote`];
//! * test rows never influence the fit under inductive routing; they are routed through the
//!   stored hyperplanes of the final partition, which is the same as carrying them in the cells.

use std::ops::ControlFlow;
use std::sync::Arc;

use kernel_core::{Classifier, LabelledRows};
use ndarray::ArrayView2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cell::{Cell, Context};
use crate::diameter::Scratch;
use crate::input::{check_columns, check_labelled, Columns};
pub use crate::likelihood::AlphaForm;
use crate::likelihood::{dirichlet_alpha, CellLikelihood};
use crate::points::Points;
use crate::prior::Prior;
pub use crate::settings::{CutRate, Routing, TreePrediction};
use crate::smc::{run_smc, SmcRun, SmcSettings, Workspace};
use crate::tree::Tree;
use crate::RtfError;

/// Hyperparameters of a random tessellation forest; [`Default`] gives tess19's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ForestConfig {
    /// T, the number of trees (default 100).
    pub trees: usize,
    /// M, particles per tree (default 100; ignored when `likelihood` is false).
    pub particles: usize,
    /// τ, the budget (default ∞).
    pub budget: f64,
    /// l.max, the largest number of cuts of the MAP particle (default 100; `usize::MAX` = ∞).
    pub max_cuts: usize,
    /// ALPHA, the scale of the Dirichlet concentration (default 1e-3).
    pub alpha: f64,
    pub alpha_form: AlphaForm,
    pub cut_rate: CutRate,
    /// SMC with the Dirichlet–multinomial likelihood (true) or the likelihood-free
    /// uRTF.i / MRTF.i (false: one particle per tree from the prior, pausing active).
    pub likelihood: bool,
    pub prediction: TreePrediction,
    pub routing: Routing,
    /// Proposals per tess19 cut attempt before giving up (1 / accept.rate.min = 20).
    pub max_rejections: usize,
    /// Further attempts of a step whose attempt gave up (10).
    pub retries: usize,
}

impl Default for ForestConfig {
    fn default() -> Self {
        Self {
            trees: 100,
            particles: 100,
            budget: f64::INFINITY,
            max_cuts: 100,
            alpha: 1e-3,
            alpha_form: AlphaForm::Manual,
            cut_rate: CutRate::HalfDiameter,
            likelihood: true,
            prediction: TreePrediction::Map,
            routing: Routing::Inductive,
            max_rejections: 20,
            retries: 10,
        }
    }
}

impl ForestConfig {
    /// Checks every field against its domain.
    pub fn check(&self) -> Result<(), RtfError> {
        use crate::error::invalid;
        if self.trees == 0 {
            return Err(invalid("trees", 0, "at least 1 tree"));
        }
        if self.particles == 0 {
            return Err(invalid("particles", 0, "at least 1 particle"));
        }
        if self.budget.is_nan() || self.budget <= 0.0 {
            return Err(invalid("budget", self.budget, "a number > 0 (or infinity)"));
        }
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(invalid("alpha", self.alpha, "a finite number > 0"));
        }
        if self.max_rejections == 0 {
            return Err(invalid(
                "max_rejections",
                0,
                "at least 1 proposal per cut attempt",
            ));
        }
        Ok(())
    }

    fn smc_settings(&self) -> SmcSettings {
        SmcSettings {
            particles: self.particles,
            budget: self.budget,
            max_cuts: self.max_cuts,
            max_rejections: self.max_rejections,
            retries: self.retries,
            likelihood: self.likelihood,
        }
    }
}

/// Statistics of one tree: of its predicting (highest-weight) particle, and totals of its run.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeStats {
    /// Cuts of the highest-weight particle.
    pub cuts: usize,
    /// Leaves of the highest-weight particle (cuts + 1).
    pub leaves: usize,
    /// log L of the highest-weight particle.
    pub log_likelihood: f64,
    /// SMC iterations.
    pub smc_iterations: usize,
    /// Hyperplane proposals over all particles (tess19 directions or thinning proposals).
    pub proposals: u64,
    /// Proposals rejected.
    pub rejections: u64,
    /// Accepted cuts over all particles.
    pub total_cuts: u64,
}

/// Statistics of a forest: means over trees of [`TreeStats`], and totals.
#[derive(Debug, Clone, PartialEq)]
pub struct ForestStats {
    /// Mean cuts of the predicting particle per tree.
    pub mean_cuts: f64,
    /// Mean leaves of the predicting particle per tree.
    pub mean_leaves: f64,
    /// Mean log-likelihood of the predicting particle per tree.
    pub mean_log_likelihood: f64,
    /// Mean SMC iterations per tree.
    pub smc_iterations: f64,
    /// Total hyperplane proposals.
    pub proposals: u64,
    /// Total rejected proposals.
    pub rejections: u64,
    /// Total accepted cuts over all particles and trees.
    pub cuts: u64,
    /// Trees that voted (`config.trees` unless an observer stopped the fit).
    pub trees: usize,
}

/// Forest predictions for the test rows and the fit's statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    pub predictions: Vec<u32>,
    pub stats: ForestStats,
}

/// What an observer of [`Forest::fit_predict_observed`] sees after each tree.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeReport {
    /// Index of the tree just fitted (0-based).
    pub tree: usize,
    /// Trees requested.
    pub trees: usize,
    pub stats: TreeStats,
}

/// All particles of one SMC run as trees, with their weights (spec §5).
#[derive(Debug, Clone, PartialEq)]
pub struct TreeFit {
    /// One tree per particle.
    pub particles: Vec<Tree>,
    /// Normalised weights W of the particles.
    pub weights: Vec<f64>,
    /// Index of the highest-weight particle (the first of equal ones): the tess19 tree.
    pub map: usize,
    pub stats: TreeStats,
}

impl TreeFit {
    /// The highest-weight particle's tree.
    pub fn map_tree(&self) -> &Tree {
        &self.particles[self.map]
    }
}

/// Everything one forest fit shares across trees.
struct Prepared<'a> {
    ctx: Context<'a>,
    root: Arc<Cell>,
    n_test: usize,
}

fn prepare<'a, 't: 'a>(
    train: LabelledRows<'t>,
    test: ArrayView2<f64>,
    prior: &'a Prior,
    config: &ForestConfig,
) -> Result<Prepared<'a>, RtfError> {
    let LabelledRows {
        x: train,
        labels,
        n_classes,
    } = train;
    check_labelled(train, labels, n_classes, Some(test), Columns::AtLeastOne)?;
    check_columns(
        "columns of the training split (as many as the prior's dimension)",
        prior.dim(),
        train,
    )?;
    if train.nrows() + test.nrows() > u32::MAX as usize {
        return Err(crate::error::invalid(
            "number of rows",
            train.nrows() + test.nrows(),
            "at most 2^32 - 1 rows in train and test together",
        ));
    }
    let points = Points::stack(&[("training", train), ("test", test)])?;
    let mut class_counts = vec![0u32; n_classes];
    for &l in labels {
        class_counts[l as usize] += 1;
    }
    let alpha = dirichlet_alpha(&class_counts, config.alpha, config.alpha_form)?;
    let likelihood = CellLikelihood::new(&alpha, &class_counts)?;
    let ctx = Context {
        points,
        n_train: train.nrows(),
        labels,
        n_classes,
        prior,
        cut_rate: config.cut_rate,
        likelihood,
        rate_paused_cells: config.cut_rate == CutRate::HalfDiameter && config.budget.is_finite(),
    };
    let n_test = test.nrows();
    let test_items = match config.routing {
        Routing::Inductive => 0,
        Routing::Transductive => n_test,
    };
    let root = Arc::new(ctx.root(test_items, &mut Scratch::default()));
    Ok(Prepared { ctx, root, n_test })
}

fn tree_rng(seed: u64, tree: usize) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(tree as u64);
    rng
}

fn tree_stats(run: &SmcRun, ws: &Workspace) -> TreeStats {
    let best = &run.particles[run.map];
    TreeStats {
        cuts: best.cuts,
        leaves: best.cells.len(),
        log_likelihood: best.log_l,
        smc_iterations: run.iterations,
        proposals: ws.proposals,
        rejections: ws.rejections,
        total_cuts: ws.cuts,
    }
}

/// A random tessellation forest: an RTP prior and a forest config, checked once when the
/// forest is made ([`Forest::new`]). A [`Classifier`]: [`Classifier::fit_predict`] fits the
/// forest on labelled rows and predicts the test rows ([`Classification`]: the labels and the
/// fit's statistics).
///
/// Labels are `0..n_classes`. Seeded: tree t draws from its own ChaCha stream derived from
/// (`seed`, t), so results do not depend on threads; trees run sequentially.
///
/// Errors of a fit: the checks of every labelled fit (`n_classes` = 0, a training matrix
/// without rows or columns, `labels.len()` ≠ training rows, a label `>= n_classes`, test
/// columns ≠ training columns, non-finite values); training columns ≠ the prior's dimension; a
/// degenerate code-form α.
#[derive(Debug, Clone, PartialEq)]
pub struct Forest {
    prior: Prior,
    config: ForestConfig,
}

impl Forest {
    /// The forest of `prior` with `config`, an error if the config is impossible
    /// ([`ForestConfig::check`]).
    pub fn new(prior: Prior, config: ForestConfig) -> Result<Self, RtfError> {
        config.check()?;
        Ok(Self { prior, config })
    }

    /// The prior.
    pub fn prior(&self) -> &Prior {
        &self.prior
    }

    /// The (checked) config.
    pub fn config(&self) -> &ForestConfig {
        &self.config
    }

    /// Fits one tree (one SMC run, spec §5) with the random stream `rng` and returns every
    /// particle as a [`Tree`]. `test` matters only under transductive routing (its rows join
    /// the cells); pass a `0 × d` view otherwise. Errors as a fit.
    pub fn fit_tree<R: Rng + ?Sized>(
        &self,
        train: LabelledRows<'_>,
        test: ArrayView2<f64>,
        rng: &mut R,
    ) -> Result<TreeFit, RtfError> {
        let prepared = prepare(train, test, &self.prior, &self.config)?;
        let ctx = &prepared.ctx;
        let mut ws = Workspace::new(ctx.points.dim());
        let run = run_smc(
            ctx,
            &prepared.root,
            &self.config.smc_settings(),
            rng,
            &mut ws,
        );
        let stats = tree_stats(&run, &ws);
        let particles = run
            .particles
            .iter()
            .map(|p| Tree::from_cells(&p.cells, ctx.n_train, ctx.points.dim()))
            .collect();
        Ok(TreeFit {
            particles,
            weights: run.weights,
            map: run.map,
            stats,
        })
    }

    /// [`Classifier::fit_predict`] calling `observer` after each tree; `ControlFlow::Break`
    /// stops the fit and the trees fitted so far vote (`stats.trees` says how many).
    pub fn fit_predict_observed(
        &self,
        train: LabelledRows<'_>,
        test: ArrayView2<f64>,
        seed: u64,
        mut observer: impl FnMut(&TreeReport) -> ControlFlow<()>,
    ) -> Result<Classification, RtfError> {
        let config = &self.config;
        let n_classes = train.n_classes;
        let prepared = prepare(train, test, &self.prior, config)?;
        let ctx = &prepared.ctx;
        let n_test = prepared.n_test;
        let dim = ctx.points.dim();
        let test_row = |i: usize| ctx.points.row((ctx.n_train + i) as u32);
        let settings = config.smc_settings();
        let mut votes = vec![0u32; n_test * n_classes];
        let mut particle_votes = vec![0.0f64; n_test * n_classes];
        let mut sums = (0.0, 0.0, 0.0, 0.0);
        let (mut proposals, mut rejections, mut cuts) = (0u64, 0u64, 0u64);
        let mut fitted = 0;
        for t in 0..config.trees {
            let mut rng = tree_rng(seed, t);
            let mut ws = Workspace::new(dim);
            let run = run_smc(ctx, &prepared.root, &settings, &mut rng, &mut ws);
            let stats = tree_stats(&run, &ws);
            match config.prediction {
                TreePrediction::Map => {
                    let tree = Tree::from_cells(&run.particles[run.map].cells, ctx.n_train, dim);
                    for i in 0..n_test {
                        votes[i * n_classes + tree.predict(test_row(i)) as usize] += 1;
                    }
                }
                TreePrediction::WeightedVote => {
                    particle_votes.fill(0.0);
                    for (p, &w) in run.particles.iter().zip(&run.weights) {
                        let tree = Tree::from_cells(&p.cells, ctx.n_train, dim);
                        for i in 0..n_test {
                            particle_votes[i * n_classes + tree.predict(test_row(i)) as usize] += w;
                        }
                    }
                    for i in 0..n_test {
                        let row = &particle_votes[i * n_classes..(i + 1) * n_classes];
                        votes[i * n_classes + argmax_f64(row)] += 1;
                    }
                }
            }
            sums.0 += stats.cuts as f64;
            sums.1 += stats.leaves as f64;
            sums.2 += stats.log_likelihood;
            sums.3 += stats.smc_iterations as f64;
            proposals += stats.proposals;
            rejections += stats.rejections;
            cuts += stats.total_cuts;
            fitted += 1;
            let report = TreeReport {
                tree: t,
                trees: config.trees,
                stats,
            };
            if observer(&report).is_break() {
                break;
            }
        }
        let predictions = (0..n_test)
            .map(|i| crate::tree::majority(&votes[i * n_classes..(i + 1) * n_classes]))
            .collect();
        let per_tree = fitted as f64;
        Ok(Classification {
            predictions,
            stats: ForestStats {
                mean_cuts: sums.0 / per_tree,
                mean_leaves: sums.1 / per_tree,
                mean_log_likelihood: sums.2 / per_tree,
                smc_iterations: sums.3 / per_tree,
                proposals,
                rejections,
                cuts,
                trees: fitted,
            },
        })
    }
}

impl Classifier for Forest {
    type Output = Classification;
    type Error = RtfError;

    /// Fits the forest on `train` and predicts the `test` rows; see [`Forest`].
    fn fit_predict(
        &self,
        train: LabelledRows<'_>,
        test: ArrayView2<f64>,
        seed: u64,
    ) -> Result<Classification, RtfError> {
        self.fit_predict_observed(train, test, seed, |_| ControlFlow::Continue(()))
    }
}

/// Index of the largest entry, the first of equal ones.
fn argmax_f64(values: &[f64]) -> usize {
    crate::smc::argmax(values)
}
