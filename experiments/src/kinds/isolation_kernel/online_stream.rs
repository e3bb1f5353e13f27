//! The online protocol of the Isolation Kernel paper (Fig. 3, Fig. 4, §8.1.1; spec §10.2):
//! training and test examples concatenated and shuffled (the repetition's order, the same for
//! every method), an initial block that chooses ψ (k-fold cross-validation, or fixed), draws
//! the IK partitionings and trains the first model in one pass; then blocks of `block_size`
//! examples, each first predicted by the current model (test mode) and then learnt example by
//! example. One row per checkpoint (`checkpoints` of them, evenly spaced over the blocks from
//! the first to the last): cumulative accuracy over every tested example, cumulative times since
//! the start of the stream (after the model's construction, the initial block's training
//! included), and the work counters.
//!
//! `stream_points` keeps the first examples of the shuffled stream (the quadratic learners:
//! OGD, IK-OGD(dual)). A cell over its time budget stops after its current block with the rows
//! it has (did not finish, as OGD on url in the paper).
//!
//! The authors' C++ on the same stream ([`super::authors`], its online mode): `authors_ik_i`,
//! `authors_ik_a`, `authors_ogd` (ψ fixed; OGD with its Gaussian kernel; not its NOGD, whose
//! switch to the Nyström features resets the example count the online mode counts blocks by).
//! Its blocks are its fixed data chunks of 256 rows, so these cells need `block_size = 256` and
//! an `initial_block` that is a multiple of 256. Its rows: the cumulative accuracy and wall
//! seconds it prints after each checkpoint block's test (before that block's learning; its
//! reading thread parses the text alongside);
//! `process_seconds` (last row) is its process's CPU time, reading and building included.
//! `read_text = true` times our side's reading of the same text (`read_seconds`), so that the
//! two `process_seconds` hold the same work.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::common::clock::{on_own_thread, Clock};
use crate::kinds::common::params::read_by;
use crate::kinds::isolation_kernel::authors::{self, Learner, ONLINE_BLOCK};
use crate::kinds::isolation_kernel::binary::{require_classification, BinarySplit, Examples};
use crate::kinds::isolation_kernel::online_classifiers::{
    choose_psi, Classifier, Mapped, Method, WithLearner,
};
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct OnlineStream;

fn default_initial() -> usize {
    30_000
}
fn default_block() -> usize {
    1_000
}
fn default_checkpoints() -> usize {
    11
}

/// The kind's own keys of `[params]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stream {
    /// Examples of the initial block (the paper's figures: 30,000).
    #[serde(default = "default_initial")]
    pub initial_block: usize,
    /// Examples per test-then-train block (the paper: 1,000).
    #[serde(default = "default_block")]
    pub block_size: usize,
    /// Rows per cell, evenly spaced over the blocks (the paper: 11).
    #[serde(default = "default_checkpoints")]
    pub checkpoints: usize,
    /// Keep only the first examples of the shuffled stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_points: Option<usize>,
    /// Time reading too (`read_seconds`, part of `process_seconds`): the stream is written as
    /// the svmlight file the authors' online mode reads (untimed) and read back from it by this
    /// project's reader (timed).
    #[serde(default)]
    pub read_text: bool,
}

pub type StreamParams = WithLearner<Stream>;

/// The authors' learner a method names (`authors_ik_i`, ...), if it names one.
fn authors_learner(p: &StreamParams) -> Option<Learner> {
    Learner::named(&p.learner.method)
}

impl Params for StreamParams {
    fn check(&self) -> Result<(), String> {
        let s = &self.own;
        match authors_learner(self) {
            Some(learner) => {
                learner.check(&self.learner)?;
                if learner == Learner::Nogd {
                    return Err(format!(
                        "method = {:?}: the authors' online mode cannot run NOGD's stream: \
                         NOGD sets the example count back to 1 when it switches to its Nyström \
                         features (kernel_nogd.h), and the online mode counts the initial block \
                         and its blocks by it, so it would test fewer blocks than the protocol",
                        self.learner.method
                    ));
                }
                if s.block_size != ONLINE_BLOCK || !s.initial_block.is_multiple_of(ONLINE_BLOCK) {
                    return Err(format!(
                        "method = {:?}: the authors' online mode tests its fixed chunks of \
                         {ONLINE_BLOCK} rows: set block_size = {ONLINE_BLOCK} and initial_block to \
                         a multiple of {ONLINE_BLOCK} (block_size = {}, initial_block = {})",
                        self.learner.method, s.block_size, s.initial_block
                    ));
                }
            }
            None => self.learner.check()?,
        }
        if s.initial_block < 10 {
            return Err(format!(
                "initial_block = {}: at least 10 examples",
                s.initial_block
            ));
        }
        if s.block_size == 0 {
            return Err("block_size = 0: at least 1".into());
        }
        if !(2..=1000).contains(&s.checkpoints) {
            return Err(format!(
                "checkpoints = {}: expected 2 ..= 1000",
                s.checkpoints
            ));
        }
        if let Some(n) = s.stream_points {
            if n <= s.initial_block {
                return Err(format!(
                    "stream_points = {n}: must exceed initial_block = {}",
                    s.initial_block
                ));
            }
        }
        Ok(())
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "checkpoint",
        doc: "0-based checkpoint index",
    },
    ColumnDoc {
        name: "points_seen",
        doc: "examples of the stream so far (initial block + tested blocks)",
    },
    ColumnDoc {
        name: "points_tested",
        doc: "examples predicted in test mode so far",
    },
    ColumnDoc {
        name: "cumulative_accuracy",
        doc: "share of tested examples predicted correctly so far",
    },
    ColumnDoc {
        name: "cumulative_seconds",
        doc: "wall seconds since the start of the stream (initial block's training included; the authors' code: as it prints them after the block's test, before its learning)",
    },
    ColumnDoc {
        name: "cpu_seconds",
        doc: "CPU seconds of the cell's thread since the start of the stream",
    },
    ColumnDoc {
        name: "test_seconds",
        doc: "CPU seconds spent predicting the blocks in test mode so far (IK: mapping each block once, for its test and its learning)",
    },
    ColumnDoc {
        name: "train_seconds",
        doc: "CPU seconds spent learning (initial block and blocks; each learnt example is predicted once more there; IK: on the block's map made for its test)",
    },
    ColumnDoc {
        name: "read_seconds",
        doc: "CPU seconds to parse the stream from the svmlight text the authors' code reads (last row; null unless read_text = true, and for the authors' code, whose reading is in process_seconds)",
    },
    ColumnDoc {
        name: "process_seconds",
        doc: "CPU seconds of the whole work (last row; null before): read_seconds (when timed) + building + the stream; the authors' code: its process (reading and building included)",
    },
    ColumnDoc {
        name: "psi_used",
        doc: "psi of the model (the cross-validated choice on the initial block when psi = \"cv\")",
    },
    ColumnDoc {
        name: "cv_accuracy",
        doc: "mean held-out accuracy of the chosen psi on the initial block (null when fixed)",
    },
    ColumnDoc {
        name: "cv_seconds",
        doc: "wall seconds of the cross-validation (not in cumulative_seconds)",
    },
    ColumnDoc {
        name: "build_seconds",
        doc: "wall seconds to draw the IK partitionings (not in cumulative_seconds)",
    },
    ColumnDoc {
        name: "support_vectors",
        doc: "support vectors (OGD, IK dual), landmarks (NOGD) or updates (IK primal) so far",
    },
    ColumnDoc {
        name: "kernel_evaluations",
        doc: "kernel evaluations so far (OGD, NOGD, IK dual)",
    },
    ColumnDoc {
        name: "lookups",
        doc: "weight look-ups so far (IK primal and naive)",
    },
];

/// Block indices (0-based) after which a checkpoint row is written: `checkpoints` values
/// evenly spaced from the first block to the last (fewer when there are fewer blocks).
pub fn checkpoint_blocks(blocks: usize, checkpoints: usize) -> Vec<usize> {
    if blocks == 0 {
        return Vec::new();
    }
    let mut at: Vec<usize> = (0..checkpoints)
        .map(|k| ((k as f64) * (blocks - 1) as f64 / (checkpoints - 1) as f64).round() as usize)
        .collect();
    at.dedup();
    at
}

crate::register_kind!(OnlineStream);

impl Kind for OnlineStream {
    type Params = StreamParams;
    type Shared = Examples;
    const NAME: &'static str = "online_stream";
    const SUMMARY: &'static str = "IK-OGD, OGD and NOGD on a shuffled stream of test-then-train blocks: cumulative accuracy and time (Isolation Kernel Figs. 3-4, §8.1.1)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 2;

    fn check_data(data: &DataSpec) -> Result<(), String> {
        require_classification(Self::NAME, data)
    }

    fn stream(p: &StreamParams) -> serde_json::Value {
        match authors_learner(p) {
            Some(learner) => read_by(
                p,
                &[
                    learner.reads(),
                    &[
                        "initial_block",
                        "block_size",
                        "checkpoints",
                        "stream_points",
                    ],
                ]
                .concat(),
            ),
            None => p.drawn_untimed(),
        }
    }

    fn upstream(p: &StreamParams) -> Option<&'static str> {
        authors_learner(p).map(|_| authors::UPSTREAM)
    }

    fn cost(p: &StreamParams) -> f64 {
        match authors_learner(p) {
            Some(Learner::IkA) => return 1000.0,
            Some(Learner::Ogd) => return 200.0,
            Some(_) => return 5.0,
            None => {}
        }
        match p.learner.method() {
            Method::Ogd => 100.0,
            Method::IkIDual | Method::IkINaive => 50.0,
            Method::IkA => 10.0,
            _ => 1.0,
        }
    }

    fn prepare(data: &DataView) -> Result<Examples> {
        BinarySplit::stream(data)
    }

    fn run_cell(all: &Examples, params: &StreamParams, ctx: &CellContext) -> Result<Vec<Row>> {
        match authors_learner(params) {
            Some(learner) => by_authors(all, params, learner, ctx),
            None => on_own_thread(|| run_stream(all, params, ctx)),
        }
    }
}

/// The repetition's stream, its examples in stream order (as they arrive, and as the authors'
/// program and our reader read them from the stream's text): the shuffled order, cut to
/// `stream_points`, with at least one example after the initial block.
fn stream_of(all: &Examples, s: &Stream, ctx: &CellContext) -> Result<Examples> {
    let mut order = ctx.shuffled(&(0..all.len()).collect::<Vec<_>>());
    if let Some(n) = s.stream_points {
        order.truncate(n);
    }
    if order.len() <= s.initial_block {
        bail!(
            "initial_block = {} leaves no examples to test: the stream has {}",
            s.initial_block,
            order.len()
        );
    }
    Ok(all.subset(&order))
}

/// One cell of the authors' online mode on the repetition's stream (its rows in stream order,
/// one run); rows at the same checkpoint blocks as ours.
fn by_authors(
    all: &Examples,
    params: &StreamParams,
    learner: Learner,
    ctx: &CellContext,
) -> Result<Vec<Row>> {
    let s = &params.own;
    let stream = stream_of(all, s, ctx)?;
    let settings = authors::Settings::of(learner, &params.learner);
    let seed: u64 = rand::Rng::random(&mut ctx.rng("partitionings"));
    let cell = format!("online-{}-{seed:016x}", params.learner.method);
    let m = authors::run_online(&stream, &settings, s.initial_block, seed, &cell)?;
    Ok(authors_rows(&m, s, stream.len(), settings.psi))
}

/// The rows of a run of the authors' online mode on a stream of `n` examples: one per
/// checkpoint block (the blocks as ours: `initial_block` learnt, then blocks of `block_size`,
/// the last maybe shorter); its process's CPU seconds on the last row only.
fn authors_rows(m: &authors::OnlineMeasured, s: &Stream, n: usize, psi: usize) -> Vec<Row> {
    let at = checkpoint_blocks(m.printed.blocks.len(), s.checkpoints);
    let last = at.last().copied();
    at.iter()
        .enumerate()
        .map(|(k, &j)| {
            let seen = (s.initial_block + (j + 1) * s.block_size).min(n);
            let (accuracy, seconds) = m.printed.blocks[j];
            let end = |v: f64| {
                if Some(j) == last {
                    Value::from(v)
                } else {
                    Value::Null
                }
            };
            row([
                ("checkpoint", k.into()),
                ("points_seen", seen.into()),
                ("points_tested", (seen - s.initial_block).into()),
                ("cumulative_accuracy", Value::from(accuracy)),
                ("cumulative_seconds", Value::from(seconds)),
                ("cpu_seconds", Value::Null),
                ("test_seconds", Value::Null),
                ("train_seconds", Value::Null),
                ("read_seconds", Value::Null),
                ("process_seconds", end(m.cpu_seconds)),
                ("psi_used", psi.into()),
                ("cv_accuracy", Value::Null),
                ("cv_seconds", Value::from(0.0)),
                ("build_seconds", Value::Null),
                ("support_vectors", Value::Null),
                ("kernel_evaluations", Value::Null),
                ("lookups", Value::Null),
            ])
        })
        .collect()
}

/// One cell, on a thread of its own (its CPU clock holds all the work, aNNE mapping included).
fn run_stream(all: &Examples, params: &StreamParams, ctx: &CellContext) -> Result<Vec<Row>> {
    let (p, s) = (&params.learner, &params.own);
    // The examples in stream order: the learners read them one after another, not scattered
    // over the data set's own order (the same examples in the same order, so the same numbers).
    let stream = stream_of(all, s, ctx)?;
    let all = &stream;
    let read_seconds = if s.read_text {
        Some(authors::read_back(&[all])?)
    } else {
        None
    };
    let order: Vec<usize> = (0..all.len()).collect();
    let (initial, rest) = order.split_at(s.initial_block);
    let choice = choose_psi(p, all, initial, &mut ctx.rng("cv"))?;
    let built = std::time::Instant::now();
    let build_clock = Clock::start();
    // The inputs checked once for the whole stream, not at every block.
    let all = all.checked()?;
    // IK draws its partitionings from the initial block only; OGD and NOGD need the dimension.
    let block;
    let fit = if p.method().isolation() {
        block = all.subset(initial);
        block.checked()?
    } else {
        all
    };
    let mut learner = Classifier::build(
        &p.chosen(&choice),
        choice.psi,
        &fit,
        &mut ctx.rng("partitionings"),
    )?;
    let build_seconds = built.elapsed().as_secs_f64();
    let build_cpu = build_clock.cpu();

    let clock = Clock::start();
    let mut train_seconds = 0.0;
    let mut test_seconds = 0.0;
    let part = Clock::start();
    learner.train(&all, initial)?;
    train_seconds += part.cpu();

    let blocks: Vec<&[usize]> = rest.chunks(s.block_size).collect();
    let at = checkpoint_blocks(blocks.len(), s.checkpoints);
    let (mut tested, mut correct) = (0usize, 0usize);
    let mut rows = Vec::with_capacity(at.len());
    let mut mapped = Mapped::default();
    for (j, block) in blocks.iter().enumerate() {
        // Each block's rows mapped once (IK), for the test and the learning after it.
        let part = Clock::start();
        learner.map_into(&all, block, &mut mapped)?;
        correct += learner.test_mapped(&all, block, &mapped)?;
        test_seconds += part.cpu();
        let part = Clock::start();
        learner.train_mapped(&all, block, &mapped)?;
        train_seconds += part.cpu();
        tested += block.len();
        ctx.progress(j + 1, blocks.len());
        // A cell over its budget ends with a row for the blocks it did.
        let stop = ctx.over_budget();
        let last = stop || j + 1 == blocks.len();
        if at.contains(&j) || stop {
            let c = learner.counters();
            rows.push(row([
                ("checkpoint", rows.len().into()),
                ("points_seen", (s.initial_block + tested).into()),
                ("points_tested", tested.into()),
                (
                    "cumulative_accuracy",
                    Value::from(correct as f64 / tested as f64),
                ),
                ("cumulative_seconds", Value::from(clock.wall())),
                ("cpu_seconds", Value::from(clock.cpu())),
                ("test_seconds", Value::from(test_seconds)),
                ("train_seconds", Value::from(train_seconds)),
                (
                    "read_seconds",
                    match read_seconds {
                        Some(r) if last => Value::from(r),
                        _ => Value::Null,
                    },
                ),
                (
                    "process_seconds",
                    if last {
                        Value::from(read_seconds.unwrap_or(0.0) + build_cpu + clock.cpu())
                    } else {
                        Value::Null
                    },
                ),
                ("psi_used", choice.psi.into()),
                (
                    "cv_accuracy",
                    choice.cv_accuracy.map_or(Value::Null, Value::from),
                ),
                ("cv_seconds", Value::from(choice.cv_seconds)),
                ("build_seconds", Value::from(build_seconds)),
                ("support_vectors", c.support_vectors.into()),
                (
                    "kernel_evaluations",
                    Value::from(c.kernel_evaluations as i64),
                ),
                ("lookups", Value::from(c.lookups as i64)),
            ]));
        }
        if stop {
            break;
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(v: serde_json::Value) -> Result<StreamParams, String> {
        serde_json::from_value::<StreamParams>(v)
            .map_err(|e| e.to_string())
            .and_then(|p| p.check().map(|_| p))
    }

    #[test]
    fn the_authors_online_mode_needs_its_chunks_and_refuses_nogd() {
        let ok = serde_json::json!({"method": "authors_ik_i", "psi": 32, "block_size": 256,
                                    "initial_block": 1024});
        let p = checked(ok.clone()).unwrap();
        assert_eq!(OnlineStream::stream(&p)["block_size"], 256);
        assert!(OnlineStream::upstream(&p).is_some());
        for (key, value, needle) in [
            ("block_size", serde_json::json!(1000), "block_size = 256"),
            ("initial_block", serde_json::json!(1000), "multiple of 256"),
            ("psi", serde_json::json!("cv"), "fixed psi"),
            (
                "method",
                serde_json::json!("authors_nogd"),
                "cannot run NOGD",
            ),
        ] {
            let mut v = ok.clone();
            v[key] = value;
            if key == "method" {
                v["kernel"] = "gaussian".into();
                v["gamma"] = 0.01.into();
            }
            let err = checked(v).unwrap_err();
            assert!(err.contains(needle), "{key}: {err}");
        }
        // Our learners keep any block size, and timing the reading draws nothing.
        let ours = serde_json::json!({"method": "ik_i", "psi": 32, "block_size": 1000});
        let mut timed = ours.clone();
        timed["read_text"] = true.into();
        assert_eq!(
            OnlineStream::stream(&checked(ours).unwrap()),
            OnlineStream::stream(&checked(timed).unwrap())
        );
    }

    #[test]
    fn the_authors_rows_are_our_checkpoints_with_its_cpu_on_the_last() {
        // 1,024 learnt, then 3 blocks of 256 and one of 17: four tested blocks.
        let n = 1024 + 3 * 256 + 17;
        let printed = authors::OnlinePrinted {
            blocks: vec![(0.9, 0.1), (0.91, 0.2), (0.92, 0.3), (0.93, 0.4)],
            learnt_before: vec![1024, 1280, 1536, 1792],
            final_accuracy: 0.93,
            final_seconds: 0.41,
        };
        let m = authors::OnlineMeasured {
            printed,
            cpu_seconds: 1.5,
        };
        let s: Stream = serde_json::from_value(serde_json::json!({
            "initial_block": 1024, "block_size": 256, "checkpoints": 3
        }))
        .unwrap();
        let rows = authors_rows(&m, &s, n, 32);
        let get = |r: &Row, c: &str| r[c].clone();
        let seen: Vec<Value> = rows.iter().map(|r| get(r, "points_seen")).collect();
        assert_eq!(
            seen,
            vec![
                Value::from(1280usize),
                Value::from(1792usize),
                Value::from(n)
            ]
        );
        let tested: Vec<Value> = rows.iter().map(|r| get(r, "points_tested")).collect();
        assert_eq!(tested[2], Value::from(3 * 256 + 17usize));
        let accuracy: Vec<Value> = rows.iter().map(|r| get(r, "cumulative_accuracy")).collect();
        assert_eq!(
            accuracy,
            vec![Value::from(0.9), Value::from(0.92), Value::from(0.93)]
        );
        let cpu: Vec<Value> = rows.iter().map(|r| get(r, "process_seconds")).collect();
        assert_eq!(cpu, vec![Value::Null, Value::Null, Value::from(1.5)]);
    }

    #[test]
    fn checkpoints_are_evenly_spaced_from_the_first_block_to_the_last() {
        assert_eq!(
            checkpoint_blocks(111, 11),
            (0..11).map(|k| k * 11).collect::<Vec<_>>()
        );
        assert_eq!(checkpoint_blocks(3, 11), vec![0, 1, 2]);
        assert_eq!(checkpoint_blocks(1, 11), vec![0]);
        assert_eq!(checkpoint_blocks(0, 11), Vec::<usize>::new());
        let at = checkpoint_blocks(112, 11);
        assert_eq!((at[0], at[10], at.len()), (0, 111, 11));
    }
}
