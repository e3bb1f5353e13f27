//! The classification study of the Random Tessellation Forests paper (Table 1, Supp. Tables
//! 1-3, Supp. Fig. 1; spec §6): one cell = one method on one random train/test split
//! (repetition `r` sees split `r`, the same for every method, so the sign tests are paired).
//!
//! Per cell: the split's training rows fix the preprocessing (top-variance probes, PCA and
//! min-max scaling fitted on the training rows only, spec §8 and D4; the prior weights of the
//! weighted RTFs from the explained variance), then the method is fitted on the training rows
//! and predicts the test rows. Methods (spec §6): `bl` (the training mode label), `lr` (L2
//! logistic regression), `svm` (RBF SVM), `rf` (random forest), and the random tessellation
//! forests `mrtf_i`, `urtf_i` (likelihood-free), `mrtf`, `urtf` (SMC, uniform weights), `wmrtf`,
//! `wurtf` (SMC, weights ω from `weights`); and the authors' tess19 R script on the same
//! preprocessed rows: `authors_urtf`, `authors_mrtf`, `authors_wurtf`, `authors_wmrtf` (see
//! [`super::authors`]; tess19 is transductive and scales train and test rows together, as
//! `routing = "transductive"`, `scaling = "min_max_all"` and `alpha_form = "code"` do here).
//!
//! Times: the cell runs on a thread of its own, so `fit_seconds` (fit and predict) and
//! `preprocess_seconds` are that thread's CPU time (Supp. Table 3 form).

use anyhow::{bail, Result};
use kernel_core::{Classifier, LabelledRows};
use ndarray::{Array2, ArrayView2, Axis};
use rand::Rng;
use random_tessellation::baselines::{mode_label, Baseline};
use random_tessellation::preprocess::{prepare, Preprocessing, Scaling, WeightRule};
use random_tessellation::{
    AlphaForm, CutRate, Forest, ForestConfig, Prior, PriorKind, Routing, TreePrediction,
};
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::common::clock::{on_own_thread, Clock};
use crate::kinds::common::params::{positive, read_by};
use crate::kinds::random_tessellation::authors::{self, Tess19};
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct TessellationClassification;

/// The ten methods of the paper's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    Bl,
    Lr,
    Svm,
    Rf,
    MrtfI,
    UrtfI,
    Mrtf,
    Urtf,
    Wmrtf,
    Wurtf,
    AuthorsUrtf,
    AuthorsMrtf,
    AuthorsWurtf,
    AuthorsWmrtf,
}

impl Method {
    /// The forest's prior kind, whether it weighs particles by the likelihood, and whether its
    /// prior has the data's weights (None for the baselines).
    fn forest(self) -> Option<(PriorKind, bool, bool)> {
        match self {
            Method::MrtfI => Some((PriorKind::Mondrian, false, false)),
            Method::UrtfI => Some((PriorKind::Uniform, false, false)),
            Method::Mrtf => Some((PriorKind::Mondrian, true, false)),
            Method::Urtf => Some((PriorKind::Uniform, true, false)),
            Method::Wmrtf => Some((PriorKind::Mondrian, true, true)),
            Method::Wurtf => Some((PriorKind::Uniform, true, true)),
            _ => None,
        }
    }

    /// The authors' tess19 forests: whether Mondrian, whether weighted.
    fn authors(self) -> Option<(bool, bool)> {
        match self {
            Method::AuthorsUrtf => Some((false, false)),
            Method::AuthorsMrtf => Some((true, false)),
            Method::AuthorsWurtf => Some((false, true)),
            Method::AuthorsWmrtf => Some((true, true)),
            _ => None,
        }
    }
}

fn default_trees() -> usize {
    100
}
fn default_particles() -> usize {
    100
}
fn default_max_cuts() -> usize {
    100
}
fn default_alpha() -> f64 {
    1e-3
}
fn default_c() -> f64 {
    1.0
}
fn default_rf_trees() -> usize {
    500
}

/// `[params]` of a classification-study config (defaults: tess19's and spec §8's).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyParams {
    pub method: Method,
    /// Keep the probes of largest training variance (gene sets: 1000).
    #[serde(default)]
    pub top_variance: Option<usize>,
    /// Project onto the first principal components of the training rows (gene sets: 10).
    #[serde(default)]
    pub pca: Option<usize>,
    /// `min_max_train` (default), `min_max_all` or `none` (spec D4).
    #[serde(default)]
    pub scaling: Scaling,
    /// Prior weights of `wmrtf` and `wurtf` (default: `explained_variance` with `pca`, else
    /// `anova_f`).
    #[serde(default)]
    pub weights: Option<WeightRule>,
    /// T.
    #[serde(default = "default_trees")]
    pub trees: usize,
    /// M, particles per tree (SMC methods).
    #[serde(default = "default_particles")]
    pub particles: usize,
    /// τ (absent: ∞).
    #[serde(default)]
    pub budget: Option<f64>,
    /// l.max.
    #[serde(default = "default_max_cuts")]
    pub max_cuts: usize,
    /// ALPHA of the Dirichlet prior.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// `manual` (α_k = alpha · n_k, default) or `code` (tess19's code).
    #[serde(default)]
    pub alpha_form: AlphaForm,
    /// `half_diameter` (default, D2: tess19), `enclosing_ball` (the paper's Algorithm 2; the
    /// configs' reference runs) or `exact_thinning`.
    #[serde(default)]
    pub cut_rate: CutRate,
    /// `inductive` (default, D3) or `transductive`.
    #[serde(default)]
    pub routing: Routing,
    /// `map` (default, D5) or `weighted_vote`.
    #[serde(default)]
    pub prediction: TreePrediction,
    /// C of the logistic regression.
    #[serde(default = "default_c")]
    pub lr_c: f64,
    /// C of the SVM.
    #[serde(default = "default_c")]
    pub svm_c: f64,
    /// γ of the SVM's RBF kernel (absent: 1/d).
    #[serde(default)]
    pub svm_gamma: Option<f64>,
    #[serde(default = "default_rf_trees")]
    pub rf_trees: usize,
    /// Features tried per split (absent: ⌊√d⌋).
    #[serde(default)]
    pub rf_mtry: Option<usize>,
}

impl StudyParams {
    fn weight_rule(&self) -> WeightRule {
        match self.weights {
            Some(rule) => rule,
            None if self.pca.is_some() => WeightRule::ExplainedVariance,
            None => WeightRule::AnovaF,
        }
    }

    fn forest_config(&self, likelihood: bool) -> ForestConfig {
        ForestConfig {
            trees: self.trees,
            particles: if likelihood { self.particles } else { 1 },
            budget: self.budget.unwrap_or(f64::INFINITY),
            max_cuts: self.max_cuts,
            alpha: self.alpha,
            alpha_form: self.alpha_form,
            cut_rate: self.cut_rate,
            likelihood,
            prediction: self.prediction,
            routing: self.routing,
            ..ForestConfig::default()
        }
    }

    fn baseline(&self) -> Option<Baseline> {
        match self.method {
            Method::Bl => Some(Baseline::ModeLabel),
            Method::Lr => Some(Baseline::Logistic { c: self.lr_c }),
            Method::Svm => Some(Baseline::Svm {
                c: self.svm_c,
                gamma: self.svm_gamma,
            }),
            Method::Rf => Some(Baseline::RandomForest {
                trees: self.rf_trees,
                mtry: self.rf_mtry,
            }),
            _ => None,
        }
    }
}

impl Params for StudyParams {
    fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("top_variance", self.top_variance),
            ("pca", self.pca),
            ("rf_mtry", self.rf_mtry),
        ] {
            if v == Some(0) {
                return Err(format!("{name} = 0: keep at least one (or leave it out)"));
            }
        }
        if self.weights == Some(WeightRule::ExplainedVariance) && self.pca.is_none() {
            return Err("weights = \"explained_variance\" needs pca (the variance explained by each principal component)".into());
        }
        positive("lr_c", self.lr_c)?;
        positive("svm_c", self.svm_c)?;
        if let Some(g) = self.svm_gamma {
            positive("svm_gamma", g)?;
        }
        for (name, v, max) in [
            ("trees", self.trees, 100_000),
            ("particles", self.particles, 100_000),
            ("max_cuts", self.max_cuts, 10_000_000),
            ("rf_trees", self.rf_trees, 100_000),
        ] {
            if v == 0 || v > max {
                return Err(format!("{name} = {v}: expected 1..={max}"));
            }
        }
        // The forest's settings (budget, alpha, ...) are checked by the forest's own config.
        if let Some((_, likelihood, _)) = self.method.forest() {
            self.forest_config(likelihood)
                .check()
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// One split: dense inputs and class labels of the training and test rows.
pub struct StudySplit {
    train: Array2<f64>,
    train_labels: Vec<u32>,
    test: Array2<f64>,
    test_labels: Vec<u32>,
    n_classes: usize,
}

impl StudySplit {
    fn prepare(data: &DataView) -> Result<StudySplit> {
        let sets = data.sets()?;
        let Some((labels, names)) = sets.set.y.as_classes() else {
            bail!(
                "{} has real targets; this study needs classes",
                sets.set.name
            );
        };
        let part = |rows: &[usize]| -> Result<(Array2<f64>, Vec<u32>)> {
            let (x, _) = sets.rows(rows);
            let Some(x) = x.as_dense() else {
                bail!(
                    "{} has sparse inputs; this study needs dense ones",
                    sets.set.name
                );
            };
            Ok((x.clone(), rows.iter().map(|&i| labels[i]).collect()))
        };
        let (train, train_labels) = part(&sets.parts.train)?;
        let (test, test_labels) = part(&sets.parts.test)?;
        if train_labels.is_empty() || test_labels.is_empty() {
            bail!("the split has an empty training or test set");
        }
        Ok(StudySplit {
            train,
            train_labels,
            test,
            test_labels,
            n_classes: names.len(),
        })
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "percent_correct",
        doc: "% of the test rows classified correctly",
    },
    ColumnDoc {
        name: "mode_percent",
        doc: "% of the test rows in the training mode class (what BL scores)",
    },
    ColumnDoc {
        name: "n_train",
        doc: "training rows",
    },
    ColumnDoc {
        name: "n_test",
        doc: "test rows",
    },
    ColumnDoc {
        name: "n_inputs",
        doc: "input columns after preprocessing (d of the methods; tess19 drops columns constant over training and test rows)",
    },
    ColumnDoc {
        name: "n_classes",
        doc: "classes of the set",
    },
    ColumnDoc {
        name: "explained_variance",
        doc: "share of the training variance the principal components keep (null without pca)",
    },
    ColumnDoc {
        name: "mean_cuts",
        doc: "RTFs: mean cuts of the predicting particle per tree",
    },
    ColumnDoc {
        name: "mean_leaves",
        doc: "RTFs: mean cells of the predicting particle per tree",
    },
    ColumnDoc {
        name: "smc_iterations",
        doc: "RTFs: mean SMC iterations per tree",
    },
    ColumnDoc {
        name: "cuts",
        doc: "RTFs: accepted cuts over all particles and trees",
    },
    ColumnDoc {
        name: "preprocess_seconds",
        doc: "CPU seconds of the preprocessing (top-variance probes, PCA, scaling, weights)",
    },
    ColumnDoc {
        name: "fit_seconds",
        doc: "CPU seconds to fit the method and predict the test rows (Supp. Table 3 form; the authors' code: its process's CPU seconds, start-up and file reading included)",
    },
    ColumnDoc {
        name: "fit_wall_seconds",
        doc: "wall seconds to fit the method and predict the test rows",
    },
];

crate::register_kind!(TessellationClassification);

impl Kind for TessellationClassification {
    type Params = StudyParams;
    type Shared = StudySplit;
    const NAME: &'static str = "tessellation_classification";
    const SUMMARY: &'static str = "random tessellation forests and baselines on random train/test splits: % correct, runtime (Random Tessellation Forests Table 1, Supp. Tables 1-3, Supp. Fig. 1)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 2;

    fn check_data(data: &DataSpec) -> Result<(), String> {
        match data.task()? {
            Some(datasets::Task::Classification) => Ok(()),
            _ => Err(format!("{} needs a classification set", Self::NAME)),
        }
    }

    /// The parameters each method reads: the preprocessing, then the forest's settings (the
    /// weights only for the weighted forests, the particles only with the likelihood) or the
    /// baseline's own. (Before, every parameter seeded every method: `rf_mtry` moved the
    /// forests' numbers.)
    fn stream(p: &StudyParams) -> serde_json::Value {
        let mut keys = vec!["method", "top_variance", "pca", "scaling"];
        keys.extend(match (p.method, p.method.forest()) {
            (_, Some((_, likelihood, weighted))) => {
                let mut k = vec![
                    "trees",
                    "budget",
                    "max_cuts",
                    "alpha",
                    "alpha_form",
                    "cut_rate",
                    "routing",
                    "prediction",
                ];
                if likelihood {
                    k.push("particles");
                }
                if weighted {
                    k.push("weights");
                }
                k
            }
            (m, None) if m.authors().is_some() => {
                let mut k = vec!["trees", "particles", "budget", "max_cuts", "alpha"];
                if m.authors().is_some_and(|(_, weighted)| weighted) {
                    k.push("weights");
                }
                k
            }
            (Method::Lr, None) => vec!["lr_c"],
            (Method::Svm, None) => vec!["svm_c", "svm_gamma"],
            (Method::Rf, None) => vec!["rf_trees", "rf_mtry"],
            (_, None) => vec![],
        });
        read_by(p, &keys)
    }

    fn upstream(p: &StudyParams) -> Option<&'static str> {
        p.method.authors().map(|_| authors::UPSTREAM)
    }

    fn cost(p: &StudyParams) -> f64 {
        if p.method.authors().is_some() {
            // tess19 in R: about 250x the project's forests per tree and particle.
            return (p.trees * p.particles) as f64 * 2.5;
        }
        match p.method.forest() {
            Some((_, true, _)) => (p.trees * p.particles) as f64 / 100.0,
            Some((_, false, _)) => p.trees as f64 / 100.0,
            None if p.method == Method::Rf => p.rf_trees as f64 / 500.0,
            None => 0.1,
        }
    }

    fn prepare(data: &DataView) -> Result<StudySplit> {
        StudySplit::prepare(data)
    }

    fn run_cell(d: &StudySplit, params: &StudyParams, ctx: &CellContext) -> Result<Vec<Row>> {
        on_own_thread(|| study(d, params, ctx))
    }
}

fn percent(predictions: &[u32], truth: &[u32]) -> f64 {
    let correct = predictions
        .iter()
        .zip(truth)
        .filter(|(a, b)| a == b)
        .count();
    100.0 * correct as f64 / truth.len().max(1) as f64
}

fn study(d: &StudySplit, p: &StudyParams, ctx: &CellContext) -> Result<Vec<Row>> {
    let clock = Clock::start();
    let pre = Preprocessing {
        top_variance: p.top_variance,
        pca: p.pca,
        scaling: p.scaling,
    };
    let weighted = matches!(p.method.forest(), Some((_, _, true)))
        || matches!(p.method.authors(), Some((_, true)));
    let rule = if weighted {
        p.weight_rule()
    } else {
        WeightRule::Uniform
    };
    let prepared = prepare(
        d.train.view(),
        &d.train_labels,
        d.n_classes,
        d.test.view(),
        &pre,
        rule,
    )?;
    let preprocess_seconds = clock.cpu();
    let train: ArrayView2<f64> = prepared.train.view();
    let test: ArrayView2<f64> = prepared.test.view();
    let seed: u64 = ctx.rng("method").random();
    let clock = Clock::start();
    let labelled = LabelledRows::new(train, &d.train_labels, d.n_classes);
    let mut process = None;
    let (predictions, stats) = match (p.baseline(), p.method.forest()) {
        (None, None) if p.method.authors().is_some() => {
            let (mondrian, weighted) = p.method.authors().expect("checked");
            let settings = Tess19 {
                mondrian,
                weights: weighted.then(|| prepared.weights.clone()),
                trees: p.trees,
                particles: p.particles,
                max_cuts: p.max_cuts,
                budget: p.budget,
                alpha: p.alpha,
            };
            let cell = format!("{:?}-{seed:016x}", p.method);
            let run = authors::fit_predict(
                train,
                &d.train_labels,
                d.n_classes,
                test,
                &settings,
                seed,
                &cell,
            )?;
            process = Some((run.cpu_seconds, run.wall_seconds, run.n_inputs));
            (run.predictions, None)
        }
        (Some(baseline), _) => (baseline.fit_predict(labelled, test, seed)?, None),
        (None, Some((kind, likelihood, weighted))) => {
            let prior = Prior::new(
                kind,
                train.len_of(Axis(1)),
                weighted.then_some(prepared.weights.as_slice()),
            )?;
            let forest = Forest::new(prior, p.forest_config(likelihood))?;
            let out = forest.fit_predict(labelled, test, seed)?;
            (out.predictions, Some(out.stats))
        }
        (None, None) => unreachable!("every method is a baseline or a forest"),
    };
    // The authors' code runs in a process of its own: its CPU and wall seconds are the
    // process's (R's start-up and file reading included).
    let (fit_seconds, fit_wall_seconds, n_inputs) =
        process.unwrap_or((clock.cpu(), clock.wall(), train.len_of(Axis(1))));
    let explained = (!prepared.explained_variance_ratio.is_empty())
        .then(|| prepared.explained_variance_ratio.iter().sum::<f64>());
    // The training mode label (ties: the lowest), as BL predicts.
    let m = mode_label(&d.train_labels, d.n_classes).unwrap_or(0);
    let mode_percent = percent(&vec![m; d.test_labels.len()], &d.test_labels);
    let num = |v: Option<f64>| v.map_or(Value::Null, Value::from);
    Ok(vec![row([
        (
            "percent_correct",
            Value::from(percent(&predictions, &d.test_labels)),
        ),
        ("mode_percent", Value::from(mode_percent)),
        ("n_train", d.train_labels.len().into()),
        ("n_test", d.test_labels.len().into()),
        ("n_inputs", n_inputs.into()),
        ("n_classes", d.n_classes.into()),
        ("explained_variance", num(explained)),
        ("mean_cuts", num(stats.as_ref().map(|s| s.mean_cuts))),
        ("mean_leaves", num(stats.as_ref().map(|s| s.mean_leaves))),
        (
            "smc_iterations",
            num(stats.as_ref().map(|s| s.smc_iterations)),
        ),
        (
            "cuts",
            stats
                .as_ref()
                .map_or(Value::Null, |s| Value::from(s.cuts as i64)),
        ),
        ("preprocess_seconds", Value::from(preprocess_seconds)),
        ("fit_seconds", Value::from(fit_seconds)),
        ("fit_wall_seconds", Value::from(fit_wall_seconds)),
    ])])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> Result<StudyParams, String> {
        let p: StudyParams = toml::from_str(text).map_err(|e| e.to_string())?;
        p.check().map(|_| p)
    }

    #[test]
    fn percent_of_correct_predictions() {
        assert_eq!(percent(&[0, 1, 1, 0], &[0, 1, 0, 0]), 75.0);
    }

    #[test]
    fn parameters_are_checked_with_clear_errors() {
        let p = params("method = 'wurtf'\npca = 10").unwrap();
        assert!(matches!(p.weight_rule(), WeightRule::ExplainedVariance));
        assert!(matches!(
            params("method = 'wurtf'").unwrap().weight_rule(),
            WeightRule::AnovaF
        ));
        let c = params("method = 'urtf_i'").unwrap().forest_config(false);
        assert_eq!((c.particles, c.trees, c.max_cuts), (1, 100, 100));
        assert!(c.budget.is_infinite());
        for (text, needle) in [
            ("method = 'xrtf'", "xrtf"),
            (
                "method = 'urtf'\nweights = 'explained_variance'",
                "needs pca",
            ),
            ("method = 'urtf'\nbudget = 0.0", "budget"),
            ("method = 'urtf'\ntrees = 0", "trees"),
            ("method = 'svm'\nsvm_gamma = -1.0", "svm_gamma"),
            ("method = 'rf'\npca = 0", "pca = 0"),
            ("method = 'rf'\nrf_tres = 5", "rf_tres"),
        ] {
            let err = params(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
