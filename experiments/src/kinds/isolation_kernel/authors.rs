//! The authors' C++ (upstream `ik_ogd`: the LIBOL/KOL toolbox with the IK maps) on one split:
//! the methods `authors_ik_i`, `authors_ik_a`, `authors_ogd` and `authors_nogd`.
//!
//! The split's training and test examples are written as svmlight files in split order (labels
//! `-1`/`+1`: its reader stops at `-1.0`; 1-based ascending indices, zeros left out; values
//! with at most 9 significant digits, as f32 in exponent form: its reader misreads longer ones),
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

use crate::kinds::isolation_kernel::binary::Examples;
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

/// What a run measured: what it printed, and its process's CPU and wall seconds (its own timers
/// are wall clocks of parts of the run, so they are not used).
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub printed: Printed,
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
}

/// The two files the authors' program reads, `train.svm` and `test.svm` ([`svmlight`]), written
/// into `dir`: their paths, or what could not be written.
pub fn write_split(dir: &Path, train: &Examples, test: &Examples) -> Result<[PathBuf; 2], String> {
    let write = |name: &str, examples: &Examples| {
        let path = dir.join(name);
        std::fs::write(&path, svmlight(examples))
            .map(|()| path)
            .map_err(|e| format!("cannot write {name}: {e}"))
    };
    Ok([write("train.svm", train)?, write("test.svm", test)?])
}

/// The examples as an svmlight file the authors' reader accepts (values as f32, the authors'
/// type, in shortest exponent form; labels -1/+1).
pub fn svmlight(examples: &Examples) -> String {
    let mut text = String::new();
    let mut line = |label: f64, pairs: &mut dyn Iterator<Item = (usize, f64)>| {
        text.push_str(if label > 0.0 { "+1" } else { "-1" });
        for (j, v) in pairs {
            if v != 0.0 {
                let _ = write!(text, " {}:{:e}", j + 1, v as f32);
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

/// The command-line arguments of one run.
fn arguments(s: &Settings, seed: u64) -> Vec<String> {
    let mut args: Vec<String> = ["-i", "train.svm", "-t", "test.svm"]
        .map(String::from)
        .to_vec();
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
    let prepared = upstream::prepare(UPSTREAM)?;
    let dir = toolchain::cell_folder(&prepared, cell)?;
    let fail = |reason: String| Unavailable::new(UPSTREAM, reason);
    write_split(&dir, train, test).map_err(&fail)?;
    let program = prepared.root.join("IK/IK_OGD/SOL");
    let timeout = upstream::settings().timeout_seconds;
    let done = process::run(
        Path::new(&program),
        &arguments(settings, seed),
        &dir,
        &[],
        timeout,
    )
    .map_err(|e| fail(e.message))?;
    let printed = parse(&done.stdout).map_err(|e| fail(format!("{e}; {}", dir.display())))?;
    Ok(Measured {
        printed,
        cpu_seconds: done.cpu_seconds,
        wall_seconds: done.wall_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
