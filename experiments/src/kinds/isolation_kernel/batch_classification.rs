//! The batch protocol of the Isolation Kernel paper (Tables 5-6, Figs. 5-7; spec §10.1): ψ by
//! k-fold cross-validation on the training set (or fixed), the learner built on the training
//! set (IK partitionings, NOGD landmarks), one pass over the training examples in file order
//! (or, with `shuffle = true`, in the repetition's random order, the same for every method),
//! then the final model tested once.
//!
//! ψ by cross-validation: the folds are contiguous runs of the training order (file order, or
//! the repetition's order with `shuffle`), over its first `cv_examples` examples.
//!
//! Times: the cell runs on a thread of its own (parallel loops inside stay on it), so
//! `train_seconds` and `test_seconds` are that thread's CPU time for all of the work, mapping
//! included; `total_seconds` = train + test (Table 6); `build_seconds` and `cv_seconds` are wall
//! times. Work counters are deterministic.
//!
//! The authors' C++ on the same split ([`super::authors`]): `authors_ik_i`, `authors_ik_a`,
//! `authors_ogd`, `authors_nogd` (ψ fixed; OGD and NOGD with its Gaussian kernel, `kernel =
//! "gaussian"` and `gamma`). Its `total_seconds` and `wall_seconds` are its process's (reading
//! the svmlight files included); it reports no CPU split between training and test, no build
//! time and no work counters (null).

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::common::clock::{on_own_thread, Clock};
use crate::kinds::common::params::read_by;
use crate::kinds::isolation_kernel::authors::{self, Learner};
use crate::kinds::isolation_kernel::binary::{require_classification, BinarySplit};
use crate::kinds::isolation_kernel::online_classifiers::{choose_psi, Classifier, WithLearner};
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct BatchClassification;

/// The kind's own keys of `[params]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Batch {
    /// Train in the repetition's random order instead of file order (a fixed split's
    /// repetitions then differ in their order as well as in their IK draws).
    #[serde(default)]
    pub shuffle: bool,
    /// Time reading too (`read_seconds`, part of `process_seconds`): the split's rows are
    /// written as the svmlight files the authors' code reads (untimed) and read back from them
    /// by this project's reader (timed), so that a side-by-side ratio compares whole processes'
    /// work.
    #[serde(default)]
    pub read_text: bool,
}

pub type BatchParams = WithLearner<Batch>;

/// The authors' learner a method names (`authors_ik_i`, ...), if it names one.
fn authors_learner(p: &BatchParams) -> Option<Learner> {
    Learner::named(&p.learner.method)
}

impl Params for BatchParams {
    fn check(&self) -> Result<(), String> {
        match authors_learner(self) {
            Some(learner) => learner.check(&self.learner),
            None => self.learner.check(),
        }
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "psi_used",
        doc: "psi of the final model (the cross-validated choice when psi = \"cv\")",
    },
    ColumnDoc {
        name: "lambda_used",
        doc: "AdaRaker's lambda (the cross-validated choice when lambda = \"cv\"; null for the other methods)",
    },
    ColumnDoc {
        name: "cv_accuracy",
        doc: "mean held-out accuracy of the chosen psi (null when psi is fixed)",
    },
    ColumnDoc {
        name: "accuracy",
        doc: "test accuracy of the final model",
    },
    ColumnDoc {
        name: "train_accuracy",
        doc: "1 - online mistake rate over the training pass (predict, then update)",
    },
    ColumnDoc {
        name: "test_positive_rate",
        doc: "share of +1 labels in the test set (the accuracy of a constant predictor is max(rate, 1 - rate))",
    },
    ColumnDoc {
        name: "build_seconds",
        doc: "wall seconds to build the learner (the IK partitionings; next to nothing for OGD and NOGD)",
    },
    ColumnDoc {
        name: "train_seconds",
        doc: "CPU seconds of the training pass (mapping included)",
    },
    ColumnDoc {
        name: "test_seconds",
        doc: "CPU seconds of testing (mapping included)",
    },
    ColumnDoc {
        name: "total_seconds",
        doc: "train_seconds + test_seconds (Table 6)",
    },
    ColumnDoc {
        name: "map_seconds",
        doc: "CPU seconds of train_seconds + test_seconds spent mapping rows to phi(x) (IK; the test predictions of IK-OGD's primal form on trees are made as the rows are mapped and counted here; null for OGD, NOGD and the authors' code)",
    },
    ColumnDoc {
        name: "read_seconds",
        doc: "CPU seconds to parse the split's rows from the svmlight text the authors' code reads (null unless read_text = true; the authors' code: null, its reading is in process_seconds)",
    },
    ColumnDoc {
        name: "process_seconds",
        doc: "CPU seconds of the whole work: read_seconds (when timed) + building + train + test; the authors' code: its process (reading the files included)",
    },
    ColumnDoc {
        name: "wall_seconds",
        doc: "wall seconds of training and testing",
    },
    ColumnDoc {
        name: "cv_seconds",
        doc: "wall seconds of the cross-validation (0 when psi is fixed)",
    },
    ColumnDoc {
        name: "support_vectors",
        doc: "support vectors (OGD, IK dual), landmarks (NOGD) or updates (IK primal) at the end",
    },
    ColumnDoc {
        name: "kernel_evaluations",
        doc: "kernel evaluations in training and testing (OGD, NOGD, IK dual)",
    },
    ColumnDoc {
        name: "lookups",
        doc: "weight look-ups in training and testing (IK primal: t per prediction; naive: t psi)",
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

crate::register_kind!(BatchClassification);

impl Kind for BatchClassification {
    type Params = BatchParams;
    type Shared = BinarySplit;
    const NAME: &'static str = "batch_classification";
    const SUMMARY: &'static str = "IK-OGD, OGD, NOGD and AdaRaker trained in one pass and tested once, psi (AdaRaker: lambda) by cross-validation (Isolation Kernel Tables 5-7, Figs. 5-7)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    fn check_data(data: &DataSpec) -> Result<(), String> {
        require_classification(Self::NAME, data)
    }

    fn stream(p: &BatchParams) -> serde_json::Value {
        match authors_learner(p) {
            Some(learner) => read_by(p, &[learner.reads(), &["shuffle"]].concat()),
            None => p.drawn_untimed(),
        }
    }

    fn deterministic(p: &BatchParams) -> bool {
        match authors_learner(p) {
            Some(learner) => matches!(learner, Learner::Ogd | Learner::Nogd) && !p.own.shuffle,
            None => !p.learner.method().isolation() && !p.own.shuffle,
        }
    }

    fn upstream(p: &BatchParams) -> Option<&'static str> {
        authors_learner(p).map(|_| authors::UPSTREAM)
    }

    fn cost(p: &BatchParams) -> f64 {
        use crate::kinds::isolation_kernel::online_classifiers::Method;
        match authors_learner(p) {
            Some(Learner::IkA) => return 1000.0,
            Some(Learner::Ogd) => return 200.0,
            Some(_) => return 2.0,
            None => {}
        }
        let cv = if p.learner.selects_psi() {
            (p.learner.psi_grid().len() * p.learner.cv_folds) as f64
        } else {
            1.0
        };
        cv * match p.learner.method() {
            Method::Ogd => 100.0,
            Method::IkIDual => 50.0,
            Method::IkA => 10.0,
            Method::AdaRaker => 5.0,
            _ => 1.0,
        }
    }

    fn prepare(data: &DataView) -> Result<BinarySplit> {
        BinarySplit::prepare(data)
    }

    fn run_cell(d: &BinarySplit, params: &BatchParams, ctx: &CellContext) -> Result<Vec<Row>> {
        match authors_learner(params) {
            Some(learner) => by_authors(d, params, learner, ctx),
            None => on_own_thread(|| batch(d, params, ctx)),
        }
    }
}

/// One cell of the authors' code: the split's examples in the training order, one run.
fn by_authors(
    d: &BinarySplit,
    params: &BatchParams,
    learner: Learner,
    ctx: &CellContext,
) -> Result<Vec<Row>> {
    let p = &params.learner;
    let all: Vec<usize> = (0..d.train.len()).collect();
    let train = if params.own.shuffle {
        d.train.subset(&ctx.shuffled(&all))
    } else {
        d.train.subset(&all)
    };
    let settings = authors::Settings::of(learner, p);
    let psi = settings.psi;
    let seed: u64 = rand::Rng::random(&mut ctx.rng("partitionings"));
    let cell = format!("{}-{seed:016x}", p.method);
    let m = authors::run(&train, &d.test, &settings, seed, &cell)?;
    let num = |v: Option<f64>| v.map_or(Value::Null, Value::from);
    Ok(vec![row([
        ("psi_used", psi.into()),
        ("lambda_used", Value::Null),
        ("cv_accuracy", Value::Null),
        ("accuracy", Value::from(m.printed.accuracy)),
        ("train_accuracy", num(m.printed.train_accuracy)),
        ("test_positive_rate", Value::from(d.test.positive_rate())),
        ("build_seconds", Value::Null),
        ("train_seconds", Value::Null),
        ("test_seconds", Value::Null),
        ("total_seconds", Value::from(m.cpu_seconds)),
        ("map_seconds", Value::Null),
        ("read_seconds", Value::Null),
        ("process_seconds", Value::from(m.cpu_seconds)),
        ("wall_seconds", Value::from(m.wall_seconds)),
        ("cv_seconds", Value::from(0.0)),
        ("support_vectors", num(m.printed.support_vectors)),
        ("kernel_evaluations", Value::Null),
        ("lookups", Value::Null),
        ("n_train", d.train.len().into()),
        ("n_test", d.test.len().into()),
    ])])
}

/// One cell, on a thread of its own (its CPU clock holds all the work, aNNE mapping included).
fn batch(d: &BinarySplit, params: &BatchParams, ctx: &CellContext) -> Result<Vec<Row>> {
    let p = &params.learner;
    let all: Vec<usize> = (0..d.train.len()).collect();
    let order = if params.own.shuffle {
        ctx.shuffled(&all)
    } else {
        all
    };
    ctx.progress(0, 3);
    let read_seconds = if params.own.read_text {
        Some(authors::read_back(&[&d.train, &d.test])?)
    } else {
        None
    };
    let choice = choose_psi(p, &d.train, &order, &mut ctx.rng("cv"))?;
    ctx.progress(1, 3);
    let built = Clock::start();
    // The training set checked once, for the build and the training.
    let train = d.train.checked()?;
    let mut learner = Classifier::build(
        &p.chosen(&choice),
        choice.psi,
        &train,
        &mut ctx.rng("partitionings"),
    )?;
    let build_seconds = built.wall();
    let build_cpu = built.cpu();
    let wall = Clock::start();
    let clock = Clock::start();
    let mistakes = learner.train(&train, &order)?;
    let train_seconds = clock.cpu();
    ctx.progress(2, 3);
    let clock = Clock::start();
    let test_ids: Vec<usize> = (0..d.test.len()).collect();
    let correct = learner.test(&d.test.checked()?, &test_ids)?;
    let test_seconds = clock.cpu();
    let wall_seconds = wall.wall();
    let counters = learner.counters();
    Ok(vec![row([
        (
            "psi_used",
            if choice.lambda.is_some() {
                Value::Null
            } else {
                choice.psi.into()
            },
        ),
        (
            "lambda_used",
            choice.lambda.map_or(Value::Null, Value::from),
        ),
        (
            "cv_accuracy",
            choice.cv_accuracy.map_or(Value::Null, Value::from),
        ),
        (
            "accuracy",
            Value::from(correct as f64 / d.test.len().max(1) as f64),
        ),
        (
            "train_accuracy",
            Value::from(1.0 - mistakes as f64 / d.train.len().max(1) as f64),
        ),
        ("test_positive_rate", Value::from(d.test.positive_rate())),
        ("build_seconds", Value::from(build_seconds)),
        ("train_seconds", Value::from(train_seconds)),
        ("test_seconds", Value::from(test_seconds)),
        ("total_seconds", Value::from(train_seconds + test_seconds)),
        (
            "map_seconds",
            learner.map_seconds().map_or(Value::Null, Value::from),
        ),
        (
            "read_seconds",
            read_seconds.map_or(Value::Null, Value::from),
        ),
        (
            "process_seconds",
            Value::from(read_seconds.unwrap_or(0.0) + build_cpu + train_seconds + test_seconds),
        ),
        ("wall_seconds", Value::from(wall_seconds)),
        ("cv_seconds", Value::from(choice.cv_seconds)),
        ("support_vectors", counters.support_vectors.into()),
        (
            "kernel_evaluations",
            Value::from(counters.kernel_evaluations as i64),
        ),
        ("lookups", Value::from(counters.lookups as i64)),
        ("n_train", d.train.len().into()),
        ("n_test", d.test.len().into()),
    ])])
}
