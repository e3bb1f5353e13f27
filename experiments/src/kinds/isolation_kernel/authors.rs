//! The authors' C++ (upstream `ik_ogd`: the LIBOL/KOL toolbox with the IK maps) on one split:
//! the methods `authors_ik_i`, `authors_ik_a`, `authors_ogd` and `authors_nogd`.
//!
//! The split's training and test examples are written as svmlight files in split order (labels
//! `-1`/`+1`: its reader stops at `-1.0`; 1-based ascending indices, zeros left out; values
//! with at most 9 significant digits (the f32 shortest: its reader misreads longer ones), each in
//! plain notation as LIBSVM distributes its sets, or in exponent notation where plain would
//! append zeros (`write_value`)),
//! then one run of `SOL -i train -t test ...`: one pass over the training file in file order,
//! then one test of the final model. Its OGD and NOGD have only the Gaussian kernel
//! exp(-gamma ||x - y||^2), so `authors_ogd`/`authors_nogd` need `kernel = "gaussian"` and a
//! `gamma`; its iTrees stop at depth ceil(log2 psi) and its subsamples are distinct across the
//! t partitionings (fixed in its code; the project's `height_limit = "log2_psi"` and
//! `distinct_subsamples = true`). It prints `Test acuracy: X %` (its spelling), `Learn
//! acuracy`, `#SV:` and wall times; the CPU seconds are its process's (file reading included).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use datasets::Inputs;

use crate::kinds::common::clock::Clock;
use crate::kinds::isolation_kernel::binary::Examples;
use crate::kinds::isolation_kernel::online_classifiers::{LearnerParams, Psi};
use crate::upstream::{self, process, toolchain, Unavailable};

/// The upstream's name in the registry.
pub const UPSTREAM: &str = "ik_ogd";

/// Which learner of the authors' code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Learner {
    IkI,
    IkA,
    Ogd,
    Nogd,
}

impl Learner {
    /// The authors' learner a method names (`authors_ik_i`, ...), if it names one.
    pub fn named(method: &str) -> Option<Learner> {
        match method {
            "authors_ik_i" => Some(Learner::IkI),
            "authors_ik_a" => Some(Learner::IkA),
            "authors_ogd" => Some(Learner::Ogd),
            "authors_nogd" => Some(Learner::Nogd),
            _ => None,
        }
    }

    /// The keys of the learner's parameters it reads.
    pub fn reads(self) -> &'static [&'static str] {
        match self {
            Learner::IkI | Learner::IkA => &["method", "psi", "eta", "t"],
            Learner::Ogd => &["method", "psi", "eta", "kernel", "gamma"],
            Learner::Nogd => &["method", "psi", "eta", "kernel", "gamma", "budget", "rank"],
        }
    }

    /// Whether the authors' code can run these settings: a fixed ψ (it has no
    /// cross-validation), its Gaussian kernel for OGD and NOGD.
    pub fn check(self, l: &LearnerParams) -> Result<(), String> {
        let name = &l.method;
        match (&l.psi, self) {
            (Psi::Fixed(psi), _) if *psi >= 2 => {}
            (_, Learner::IkI | Learner::IkA) => {
                return Err(format!(
                    "method = {name:?}: the authors' code takes a fixed psi >= 2 (no \
                     cross-validation)"
                ))
            }
            _ => {}
        }
        if matches!(self, Learner::Ogd | Learner::Nogd)
            && (l.kernel != "gaussian" || l.gamma.is_none())
        {
            return Err(format!(
                "method = {name:?}: the authors' OGD and NOGD have only the Gaussian kernel: \
                 set kernel = \"gaussian\" and gamma"
            ));
        }
        if !(l.eta > 0.0 && l.eta.is_finite()) || l.t == 0 || l.budget == 0 || l.rank == 0 {
            return Err(format!(
                "method = {name:?}: eta > 0, t, budget and rank >= 1"
            ));
        }
        Ok(())
    }
}

/// One run's settings.
pub struct Settings {
    pub learner: Learner,
    pub psi: usize,
    pub t: usize,
    pub eta: f64,
    pub gamma: f64,
    pub budget: usize,
    pub rank: usize,
}

impl Settings {
    /// The settings of the learner's parameters (checked by [`Learner::check`]).
    pub fn of(learner: Learner, p: &LearnerParams) -> Settings {
        Settings {
            learner,
            psi: match p.psi {
                Psi::Fixed(psi) => psi,
                Psi::Select(_) => 0,
            },
            t: p.t,
            eta: p.eta,
            gamma: p.gamma.unwrap_or(0.01),
            budget: p.budget,
            rank: p.rank,
        }
    }
}

/// What a run measured: what it printed, and its process's CPU and wall seconds (its own timers
/// are wall clocks of parts of the run, so they are not used).
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub printed: Printed,
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
}

/// The svmlight files the authors' program reads ([`svmlight`]), each `(name, examples)` of
/// `files` written into `dir`: their paths, or what could not be written.
fn write_files(dir: &Path, files: &[(&str, &Examples)]) -> Result<Vec<PathBuf>, String> {
    files
        .iter()
        .map(|&(name, examples)| {
            let path = dir.join(name);
            std::fs::write(&path, svmlight(examples))
                .map(|()| path)
                .map_err(|e| format!("cannot write {name}: {e}"))
        })
        .collect()
}

/// Runs the authors' program with `args` in a scratch folder named `cell`, after writing
/// `files` there ([`write_files`]): what it printed and cost, and the folder.
fn run_program(
    cell: &str,
    files: &[(&str, &Examples)],
    args: &[String],
) -> Result<(process::Finished, PathBuf), Unavailable> {
    let prepared = upstream::prepare(UPSTREAM)?;
    let dir = toolchain::cell_folder(&prepared, cell)?;
    let fail = |reason: String| Unavailable::new(UPSTREAM, reason);
    write_files(&dir, files).map_err(fail)?;
    let program = prepared.root.join("IK/IK_OGD/SOL");
    let done = process::run(
        Path::new(&program),
        args,
        &dir,
        &[],
        upstream::settings().timeout_seconds,
    )
    .map_err(|e| fail(e.message))?;
    Ok((done, dir))
}

/// CPU seconds of this thread to read `sets` back by this project's reader from the svmlight
/// files the authors' code reads ([`svmlight`], written beforehand into a scratch folder,
/// untimed, so in the page cache as theirs are when it starts): the read from the file system,
/// the parse and the matrices' allocation, as the authors' process does. The reader must give
/// back every row.
pub fn read_back(sets: &[&Examples]) -> anyhow::Result<f64> {
    use anyhow::Context;
    let dir = tempfile::tempdir().context("a scratch folder for the svmlight files")?;
    let names: Vec<String> = (0..sets.len()).map(|k| format!("set{k}.svm")).collect();
    let files: Vec<(&str, &Examples)> = names
        .iter()
        .map(String::as_str)
        .zip(sets.iter().copied())
        .collect();
    let paths = write_files(dir.path(), &files).map_err(anyhow::Error::msg)?;
    let dim = sets.first().map_or(0, |s| s.dim());
    let clock = Clock::start();
    let mut parsed = Vec::with_capacity(paths.len());
    for path in &paths {
        parsed.push(datasets::loaders::svmlight::read_svmlight_sparse(
            path,
            Some(dim),
        )?);
    }
    let seconds = clock.cpu();
    for ((path, set), (_, y)) in paths.iter().zip(sets).zip(&parsed) {
        anyhow::ensure!(
            y.len() == set.len(),
            "{}: {} rows read back from {} written",
            path.file_name().unwrap_or_default().to_string_lossy(),
            y.len(),
            set.len()
        );
    }
    Ok(seconds)
}

/// The examples as an svmlight file the authors' reader accepts (values as f32, the authors'
/// type, each in plain notation where that appends no zero, [`write_value`]; labels -1/+1).
pub fn svmlight(examples: &Examples) -> String {
    let mut text = String::new();
    let mut scratch = String::new();
    let mut line = |label: f64, pairs: &mut dyn Iterator<Item = (usize, f64)>| {
        text.push_str(if label > 0.0 { "+1" } else { "-1" });
        for (j, v) in pairs {
            if v != 0.0 {
                let _ = write!(text, " {}:", j + 1);
                write_value(&mut text, v as f32, &mut scratch);
            }
        }
        text.push('\n');
    };
    match examples.inputs() {
        Inputs::Dense(x) => {
            for (i, row) in x.rows().into_iter().enumerate() {
                line(examples.label(i), &mut row.iter().copied().enumerate());
            }
        }
        Inputs::Sparse(x) => {
            for i in 0..x.n_rows() {
                let (indices, values) = x.row(i);
                line(
                    examples.label(i),
                    &mut indices
                        .iter()
                        .map(|&j| j as usize)
                        .zip(values.iter().copied()),
                );
            }
        }
    }
    text
}

/// `v`'s shortest digits (at most 9, as the authors' reader needs) appended to `text`: in plain
/// decimal notation (`-0.731854`, `0.00027`, `1`, as LIBSVM distributes its sets, ijcnn1's
/// `0.00027` included) where that adds no zero after the last significant digit, else in
/// exponent notation (`1.5e3`, `1e20`). Both notations give the authors' reader the same integer
/// of digits and the same power of ten (leading zeros add nothing), so the same float, and this
/// project's reader the same double. ijcnn1's two files: 24.4 MB of text before the shortest
/// digits; 21.9 MB in the shorter of the two notations (the eighth session's rule, `2.7e-4`),
/// 22.0 MB in plain notation, which this project's reader reads in 24.2 ms instead of 28.3 (the
/// exponent's presence had been a branch it predicted badly) and the authors' in the same time
/// (0.492 against 0.499 CPU s at ψ = 32, medians of seven runs each, alternated; Zen 4).
fn write_value(text: &mut String, v: f32, scratch: &mut String) {
    scratch.clear();
    let _ = write!(scratch, "{v:e}");
    // `{:e}` always writes an `e` (a byte search: this runs for every value of a file).
    let e = scratch
        .bytes()
        .position(|b| b == b'e')
        .unwrap_or(scratch.len());
    let (mantissa, exponent) = (&scratch[..e], scratch.get(e + 1..).unwrap_or("0"));
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).count() as i64;
    // The power of ten of the last significant digit: above 0, plain notation would append
    // zeros (`1500` for 1.5e3).
    let last = exponent.parse::<i64>().unwrap_or(i64::MAX) - (digits - 1);
    if last > 0 {
        text.push_str(scratch);
    } else {
        let _ = write!(text, "{v}");
    }
}

/// The first number after `label` in `out`.
fn after(out: &str, label: &str) -> Option<f64> {
    let rest = &out[out.find(label)? + label.len()..];
    let token: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        .collect();
    token.parse().ok()
}

/// What the program prints: test and training accuracy, support vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct Printed {
    pub accuracy: f64,
    pub train_accuracy: Option<f64>,
    pub support_vectors: Option<f64>,
}

/// Parses the program's output.
fn parse(out: &str) -> Result<Printed, String> {
    let accuracy = after(out, "Test acuracy:").ok_or_else(|| {
        "no `Test acuracy` line in its output (the test file did not load?)".to_string()
    })?;
    Ok(Printed {
        accuracy: accuracy / 100.0,
        train_accuracy: after(out, "Learn acuracy:").map(|a| a / 100.0),
        support_vectors: after(out, "#SV:"),
    })
}

/// The command-line arguments of one run (Table 5's protocol: one pass over `train.svm`, then
/// one test on `test.svm`).
fn arguments(s: &Settings, seed: u64) -> Vec<String> {
    let mut args: Vec<String> = ["-i", "train.svm", "-t", "test.svm"]
        .map(String::from)
        .to_vec();
    args.extend(learner_arguments(s, seed));
    args
}

/// The learner's command-line arguments.
fn learner_arguments(s: &Settings, seed: u64) -> Vec<String> {
    let mut args = Vec::new();
    let eta = format!("{:?}", s.eta);
    let gamma = format!("{:?}", s.gamma);
    let mut push = |xs: &[&str]| args.extend(xs.iter().map(|x| x.to_string()));
    match s.learner {
        Learner::IkI | Learner::IkA => {
            let model = if s.learner == Learner::IkI {
                "iForest"
            } else {
                "aNNE"
            };
            push(&[
                "-opt",
                "KERNEL-IK_OGD",
                "-ik_model",
                model,
                "-ik_psi",
                &s.psi.to_string(),
                "-ik_sets",
                &s.t.to_string(),
                "-eta",
                &eta,
                "-loss",
                "Hinge",
                // Its -seed option (our patch) is read with atoi.
                "-seed",
                &(seed % 2_147_483_647).to_string(),
            ]);
        }
        Learner::Ogd => push(&[
            "-opt",
            "KERNEL-OGD",
            "-gamma",
            &gamma,
            "-eta",
            &eta,
            "-loss",
            "Hinge",
        ]),
        Learner::Nogd => push(&[
            "-opt",
            "KERNEL-NOGD",
            "-gamma",
            &gamma,
            "-B",
            &s.budget.to_string(),
            "-knogd",
            &s.rank.to_string(),
            "-eta",
            &eta,
            // The step size after the budget fills (NOGD's second phase): the same η.
            "-eta1",
            &eta,
            "-loss",
            "Hinge",
        ]),
    }
    args
}

/// Runs the authors' learner on a split, in a scratch folder named `cell`.
pub fn run(
    train: &Examples,
    test: &Examples,
    settings: &Settings,
    seed: u64,
    cell: &str,
) -> Result<Measured, Unavailable> {
    let (done, dir) = run_program(
        cell,
        &[("train.svm", train), ("test.svm", test)],
        &arguments(settings, seed),
    )?;
    let fail = |reason: String| Unavailable::new(UPSTREAM, reason);
    let printed = parse(&done.stdout).map_err(|e| fail(format!("{e}; {}", dir.display())))?;
    Ok(Measured {
        printed,
        cpu_seconds: done.cpu_seconds,
        wall_seconds: done.wall_seconds,
    })
}

/// Rows the authors' online mode reads and tests at a time: its data chunk (`init_chunk_size`
/// in its `common/init_param.h`, fixed when it is compiled), so its blocks.
pub const ONLINE_BLOCK: usize = 256;

/// What the authors' online mode (`-ik_mode_online true`, its Fig. 3 protocol) printed.
#[derive(Debug, Clone, PartialEq)]
pub struct OnlinePrinted {
    /// Per tested block, in order: the cumulative accuracy and the wall seconds since its
    /// stream began, as printed after the block's test (before its learning).
    pub blocks: Vec<(f64, f64)>,
    /// Per tested block: the examples learnt before it (`# Pts`).
    pub learnt_before: Vec<usize>,
    /// Its final cumulative accuracy and wall seconds (after the last block's learning).
    pub final_accuracy: f64,
    pub final_seconds: f64,
}

/// What one run of the online mode printed, and its process's CPU seconds (reading and
/// building included).
#[derive(Debug, Clone, PartialEq)]
pub struct OnlineMeasured {
    pub printed: OnlinePrinted,
    pub cpu_seconds: f64,
}

/// Parses the online mode's output: `Accuracy: A`, `Time : T` and `# Pts: n` per tested block
/// (with `-ik_ol_acc_bk 1`), then `Final Time: T` and `Final Accuracy: A` (a percentage).
fn parse_online(out: &str) -> Result<OnlinePrinted, String> {
    let value = |line: &str, label: &str| -> Result<f64, String> {
        line[label.len()..]
            .trim()
            .parse()
            .map_err(|_| format!("cannot read {line:?} of its output"))
    };
    let (mut blocks, mut learnt_before, mut accuracy) = (Vec::new(), Vec::new(), None);
    let (mut final_accuracy, mut final_seconds) = (None, None);
    for line in out.lines().map(str::trim) {
        if line.starts_with("Accuracy:") {
            accuracy = Some(value(line, "Accuracy:")?);
        } else if line.starts_with("Time :") {
            let a = accuracy
                .take()
                .ok_or_else(|| format!("{line:?} without an accuracy before it"))?;
            blocks.push((a, value(line, "Time :")?));
        } else if line.starts_with("# Pts:") {
            let n = value(line, "# Pts:")?;
            if !(n >= 0.0 && n.fract() == 0.0) {
                return Err(format!("{line:?}: not a count of examples"));
            }
            learnt_before.push(n as usize);
        } else if line.starts_with("Final Accuracy:") {
            final_accuracy = Some(value(line, "Final Accuracy:")? / 100.0);
        } else if line.starts_with("Final Time:") {
            final_seconds = Some(value(line, "Final Time:")?);
        }
    }
    match (final_accuracy, final_seconds) {
        (Some(final_accuracy), Some(final_seconds)) => Ok(OnlinePrinted {
            blocks,
            learnt_before,
            final_accuracy,
            final_seconds,
        }),
        _ => Err(
            "no `Final Accuracy` and `Final Time` in its output (the stream did not end?)".into(),
        ),
    }
}

/// Whether the online mode tested the blocks of our protocol: of a stream of `n` examples, the
/// first `initial_block` learnt only, then blocks of [`ONLINE_BLOCK`] (the last maybe shorter),
/// block j tested after `initial_block` + 256 j examples were learnt; its last block's accuracy
/// its final one (to the digits it prints).
fn check_online(p: &OnlinePrinted, n: usize, initial_block: usize) -> Result<(), String> {
    let expected = (n - initial_block).div_ceil(ONLINE_BLOCK);
    if p.blocks.len() != expected || p.learnt_before.len() != expected {
        return Err(format!(
            "it printed {} tested blocks ({} counts), expected {expected}",
            p.blocks.len(),
            p.learnt_before.len()
        ));
    }
    for (j, &learnt) in p.learnt_before.iter().enumerate() {
        let want = initial_block + j * ONLINE_BLOCK;
        if learnt != want {
            return Err(format!(
                "its tested block {j} came after {learnt} examples learnt, expected {want}"
            ));
        }
    }
    let last = p.blocks.last().map_or(f64::NAN, |b| b.0);
    let agree = (last - p.final_accuracy).abs() <= 1e-5;
    if !agree {
        return Err(format!(
            "its last block's accuracy {last} is not its final one {}",
            p.final_accuracy
        ));
    }
    Ok(())
}

/// The command-line arguments of one run of the online mode on `stream.svm`: the first
/// `initial_block` rows learnt only (the IK subsamples drawn from the first `initial_block` −
/// 1: it tests a chunk whose first row's index exceeds the size it is given), then every
/// chunk of [`ONLINE_BLOCK`] rows tested, then learnt; each test's cumulative accuracy printed.
fn online_arguments(s: &Settings, seed: u64, initial_block: usize) -> Vec<String> {
    let mut args: Vec<String> = vec!["-i".into(), "stream.svm".into()];
    args.extend(learner_arguments(s, seed));
    args.extend(
        [
            "-ik_mode_online",
            "true",
            "-ik_ol_init_bk_size",
            &(initial_block - 1).to_string(),
            "-ik_ol_acc_bk",
            "1",
        ]
        .map(String::from),
    );
    args
}

/// Runs the authors' online mode on `stream` (in stream order) in a scratch folder named
/// `cell`: `initial_block` rows (a positive multiple of [`ONLINE_BLOCK`]) learnt, then blocks
/// of [`ONLINE_BLOCK`] tested then learnt.
pub fn run_online(
    stream: &Examples,
    settings: &Settings,
    initial_block: usize,
    seed: u64,
    cell: &str,
) -> Result<OnlineMeasured, Unavailable> {
    let fail = |reason: String| Unavailable::new(UPSTREAM, reason);
    // The harness and the program disagree: a bug of the project, never a skip.
    let disagree = |reason: String| Unavailable::refused(UPSTREAM, reason);
    if initial_block == 0
        || !initial_block.is_multiple_of(ONLINE_BLOCK)
        || initial_block >= stream.len()
    {
        return Err(disagree(format!(
            "initial_block = {initial_block}: its online mode needs a positive multiple of \
             {ONLINE_BLOCK} below the stream's {} rows",
            stream.len()
        )));
    }
    let (done, dir) = run_program(
        cell,
        &[("stream.svm", stream)],
        &online_arguments(settings, seed, initial_block),
    )?;
    let printed =
        parse_online(&done.stdout).map_err(|e| fail(format!("{e}; {}", dir.display())))?;
    check_online(&printed, stream.len(), initial_block)
        .map_err(|e| disagree(format!("{e}; {}", dir.display())))?;
    Ok(OnlineMeasured {
        printed,
        cpu_seconds: done.cpu_seconds,
    })
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// What the authors' `parseFloat` takes from a number: its digits as one integer (leading
    /// zeros adding nothing) and the power of ten to scale it by.
    fn authors_digits(s: &str) -> (u64, i64) {
        let (mantissa, exponent) = s.split_once('e').unwrap_or((s, "0"));
        let (mut acc, mut decimals, mut after_point) = (0u64, 0i64, false);
        for c in mantissa.bytes() {
            match c {
                b'.' => after_point = true,
                b'0'..=b'9' => {
                    acc = acc * 10 + u64::from(c - b'0');
                    decimals += i64::from(after_point);
                }
                _ => {}
            }
        }
        (acc, exponent.parse::<i64>().unwrap() - decimals)
    }

    #[test]
    fn values_are_written_in_plain_notation_unless_it_appends_zeros() {
        let text = |v: f32| {
            let (mut text, mut scratch) = (String::new(), String::new());
            write_value(&mut text, v, &mut scratch);
            text
        };
        for (v, want) in [
            (-0.731854f32, "-0.731854"),
            (0.00027, "0.00027"),
            (0.0027, "0.0027"),
            (0.027, "0.027"),
            (1.0, "1"),
            (0.1, "0.1"),
            (12.5, "12.5"),
            (1.5e3, "1.5e3"),
            (1e-30, "0.000000000000000000000000000001"),
            (1e20, "1e20"),
            (1.2345679e10, "1.2345679e10"),
            (-7.5e-7, "-0.00000075"),
        ] {
            assert_eq!(text(v), want, "{v:e}");
        }
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for k in 0..20_000 {
            let v = if k % 2 == 0 {
                rng.random_range(-1.0f32..1.0) * 10f32.powi(rng.random_range(-12..12))
            } else {
                f32::from_bits(rng.random::<u32>())
            };
            if !v.is_finite() {
                continue;
            }
            let (got, exponent_form) = (text(v), format!("{v:e}"));
            // Plain notation exactly where the last significant digit lies at or after the
            // point (where plain would append no zero).
            let (_, power) = authors_digits(&exponent_form);
            assert_eq!(got == format!("{v}"), power <= 0, "{got}");
            // This project's reader: the same double; the authors': the same digits and power,
            // at most 9 digits (its int accumulator).
            assert_eq!(
                got.parse::<f64>().unwrap(),
                exponent_form.parse::<f64>().unwrap()
            );
            assert_eq!(
                authors_digits(&got),
                authors_digits(&exponent_form),
                "{got}"
            );
            assert!(authors_digits(&got).0 < 1_000_000_000, "{got}");
        }
    }

    #[test]
    fn its_output_is_parsed_and_a_missing_test_line_is_an_error() {
        let out = "Build iForest model time: 0.014838\n0\t10000\t...\nLearn acuracy: 79.567581%\n\
                   #SV:0\nLearning time: 1.497310 s\nTest acuracy: 78.613106 %\nTest time: \
                   0.777207 s\n";
        let p = parse(out).unwrap();
        assert!((p.accuracy - 0.78613106).abs() < 1e-12);
        assert!((p.train_accuracy.unwrap() - 0.79567581).abs() < 1e-12);
        assert_eq!(p.support_vectors, Some(0.0));
        assert!(parse("load test set failed!\n")
            .unwrap_err()
            .contains("Test acuracy"));
    }

    #[test]
    fn its_online_output_is_parsed_block_by_block() {
        let out =
            "Building iForest ... \n*****\n--------\nAlgorithm: kernel_ogd_ik (w)\n0\t10000\t\n\
                   Accuracy: 0.972656\nTime : 0.0180381\nBlock: 0\n# Pts: 29952\n30000\t\n\
                   Accuracy: 0.96875\nTime : 0.0301\nBlock: 1\n# Pts: 30208\n\n\
                   Final Time: 2.65368\nFinal Accuracy: 97.5201\n\nTraining Instances:141691\n";
        let p = parse_online(out).unwrap();
        assert_eq!(p.blocks, vec![(0.972656, 0.0180381), (0.96875, 0.0301)]);
        assert_eq!(p.learnt_before, vec![29952, 30208]);
        assert!((p.final_accuracy - 0.975201).abs() < 1e-12 && p.final_seconds == 2.65368);
        assert!(parse_online("# Pts: 1.5\n").unwrap_err().contains("count"));
        assert!(parse_online("Accuracy: 0.9\nTime : 0.1\n")
            .unwrap_err()
            .contains("Final"));
        assert!(parse_online("Time : 0.1\nFinal Time: 1\nFinal Accuracy: 90\n").is_err());
        assert!(parse_online("Accuracy: x\n")
            .unwrap_err()
            .contains("cannot read"));
    }

    #[test]
    fn the_online_blocks_must_be_those_of_the_protocol() {
        // 29,952 learnt, then two blocks of 256 and one of 17.
        let n = 29_952 + 2 * 256 + 17;
        let good = OnlinePrinted {
            blocks: vec![(0.97, 0.1), (0.96, 0.2), (0.965, 0.3)],
            learnt_before: vec![29_952, 30_208, 30_464],
            final_accuracy: 0.965,
            final_seconds: 0.31,
        };
        assert_eq!(check_online(&good, n, 29_952), Ok(()));
        // A block fewer (NOGD's reset count), each block tested one block late, a final
        // accuracy that is not the last block's.
        let mut fewer = good.clone();
        fewer.blocks.pop();
        fewer.learnt_before.pop();
        assert!(check_online(&fewer, n, 29_952)
            .unwrap_err()
            .contains("expected 3"));
        let mut late = good.clone();
        late.learnt_before = vec![30_208, 30_464, 30_720];
        assert!(check_online(&late, n, 29_952)
            .unwrap_err()
            .contains("expected 29952"));
        let mut other = good.clone();
        other.final_accuracy = 0.96;
        assert!(check_online(&other, n, 29_952)
            .unwrap_err()
            .contains("final"));
    }

    #[test]
    fn the_command_lines_are_the_authors_settings() {
        let mut s = Settings {
            learner: Learner::IkI,
            psi: 32,
            t: 100,
            eta: 0.5,
            gamma: 0.01,
            budget: 100,
            rank: 20,
        };
        assert_eq!(
            arguments(&s, (1 << 40) + 7).join(" "),
            format!(
                "-i train.svm -t test.svm -opt KERNEL-IK_OGD -ik_model iForest -ik_psi 32 \
                 -ik_sets 100 -eta 0.5 -loss Hinge -seed {}",
                ((1u64 << 40) + 7) % 2_147_483_647
            )
        );
        s.learner = Learner::Nogd;
        assert_eq!(
            arguments(&s, 1).join(" "),
            "-i train.svm -t test.svm -opt KERNEL-NOGD -gamma 0.01 -B 100 -knogd 20 -eta 0.5 \
             -eta1 0.5 -loss Hinge"
        );
        s.learner = Learner::IkI;
        assert_eq!(
            online_arguments(&s, 5, 29_952).join(" "),
            "-i stream.svm -opt KERNEL-IK_OGD -ik_model iForest -ik_psi 32 -ik_sets 100 -eta 0.5 \
             -loss Hinge -seed 5 -ik_mode_online true -ik_ol_init_bk_size 29951 -ik_ol_acc_bk 1"
        );
    }
}
