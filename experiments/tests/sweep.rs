//! End-to-end tests of the lifetime sweep on synthetic Gaussian-process data (the Fig. 7 set-up,
//! small): validation selection, the exact-kernel oracle, weights, shared trees across terminal
//! lifetimes and learners, and the figure kinds it uses.

use std::path::Path;
use std::process::{Command, Output};

use experiments::store::{load_complete, RunPaths};
use experiments::table::Row;

const CONFIG: &str = "configs/sweep.toml";

const TEXT: &str = r#"
seed = 7
repeats = 1

[experiment]
name = "sweep_test"
kind = "lifetime_sweep"
paper = "test"
figure = "test"
description = "small Fig. 7"

[data]
source = "laplace_gp"
n_train = 150
n_validation = 100
n_test = 100
dim = 2
lifetime = 5.0
noise_sd = 0.1

[params]
n_mondrians = 8
terminal_lifetime = [3.0, 6.0]
delta = 1e-2
learner = ["sgd", "ridge"]
checkpoints = { first = 0.1, count = 12, include = [1.0, 2.0, 3.0, 6.0] }
exact_kernel = { lifetimes = [1.0, 5.0] }
weights_at = 2.0

[[plot]]
name = "curves"
filter = { point = "sweep", learner = "ridge", terminal_lifetime = 6.0 }
x = "lifetime"
y = "error"
series = "curve"
x_label = "lifetime"
y_label = "error"
log_x = true
x_marks = [{ value = 5.0, label = "true lifetime" }]

[[plot.styles]]
value = "kernel (validation)"
label = "validation"
color = [255, 127, 14]
step = true

[[plot]]
name = "histogram"
kind = "histogram"
filter = { point = "weights", learner = "sgd", terminal_lifetime = 6.0 }
x = "weight"
series = "model"
bins = [-3.0, 3.0, 25.0]
x_label = "weight"
y_label = "density"

[[plot]]
name = "pairs"
kind = "pairs"
filter = { point = "weights", learner = "sgd", terminal_lifetime = 6.0 }
x = "weight"
y = "weight"
series = "model"
pair_by = "leaf"
pair = ["forest", "kernel"]
x_label = "forest"
y_label = "kernel"
"#;

fn repro(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_repro"))
        .arg("--root")
        .arg(root)
        .args(args)
        .env("REPRO_DATA_DIR", root.join("no-data"))
        .output()
        .unwrap()
}

fn root_with(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(CONFIG);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    dir
}

fn text(r: &Row, k: &str) -> String {
    r.get(k).map(|v| v.to_string()).unwrap_or_default()
}

fn num(r: &Row, k: &str) -> f64 {
    r.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
}

fn run(text: &str) -> (tempfile::TempDir, Vec<Row>) {
    let root = root_with(text);
    let out = repro(root.path(), &["run", CONFIG]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, rows) = load_complete(&RunPaths::new(root.path(), "sweep_test", "full")).unwrap();
    (root, rows)
}

#[test]
fn sweep_selects_by_validation_shares_trees_and_draws_every_figure() {
    let (root, rows) = run(TEXT);
    for learner in ["sgd", "ridge"] {
        for terminal in [3.0, 6.0] {
            let cell: Vec<&Row> = rows
                .iter()
                .filter(|r| {
                    text(r, "learner") == learner && num(r, "terminal_lifetime") == terminal
                })
                .collect();
            // λ̂ is the first checkpoint of least validation error, recomputed here.
            let validation: Vec<&&Row> = cell
                .iter()
                .filter(|r| text(r, "point") == "sweep" && text(r, "model") == "kernel")
                .filter(|r| text(r, "set") == "validation")
                .collect();
            let best = validation.iter().fold(validation[0], |b, r| {
                if num(r, "error") < num(b, "error") {
                    r
                } else {
                    b
                }
            });
            let selected: Vec<&&Row> = cell
                .iter()
                .filter(|r| text(r, "point") == "selected" && text(r, "model") == "kernel")
                .collect();
            assert_eq!(selected.len(), 3, "train, validation and test at λ̂");
            for s in &selected {
                assert_eq!(num(s, "lifetime"), num(best, "lifetime"));
            }
            assert!(num(best, "lifetime") <= terminal);
            // The oracle: one row per set and lifetime.
            let exact = cell.iter().filter(|r| text(r, "point") == "exact").count();
            assert_eq!(exact, 2 * 3);
            // Weights: one per leaf for each model, the same leaves.
            let leaves = |model: &str| -> Vec<i64> {
                let mut v: Vec<i64> = cell
                    .iter()
                    .filter(|r| text(r, "point") == "weights" && text(r, "model") == model)
                    .map(|r| num(r, "leaf") as i64)
                    .collect();
                v.sort();
                v
            };
            let (forest, kernel) = (leaves("forest"), leaves("kernel"));
            assert!(!forest.is_empty());
            assert_eq!(forest, kernel);
            // Positions in the authors' arrays: a permutation of 0..leaves for each model.
            for model in ["forest", "kernel"] {
                let mut positions: Vec<i64> = cell
                    .iter()
                    .filter(|r| text(r, "point") == "weights" && text(r, "model") == model)
                    .map(|r| num(r, "position") as i64)
                    .collect();
                positions.sort();
                assert_eq!(positions, (0..forest.len() as i64).collect::<Vec<_>>());
            }
            assert_eq!(leaves("targets").len(), 150);
        }
    }
    // The trees depend on M only: the sweep to 3 is the beginning of the sweep to 6, for both
    // learners (same splits, same shuffles), so every shared checkpoint has the same numbers.
    let key = |r: &Row| {
        (
            text(r, "learner"),
            text(r, "model"),
            text(r, "set"),
            num(r, "lifetime").to_bits(),
        )
    };
    let short: std::collections::BTreeMap<_, f64> = rows
        .iter()
        .filter(|r| text(r, "point") == "sweep" && num(r, "terminal_lifetime") == 3.0)
        .map(|r| (key(r), num(r, "error")))
        .collect();
    let mut shared = 0;
    for r in rows
        .iter()
        .filter(|r| text(r, "point") == "sweep" && num(r, "terminal_lifetime") == 6.0)
    {
        if let Some(e) = short.get(&key(r)) {
            if text(r, "learner") == "sgd" {
                assert_eq!(*e, num(r, "error"), "{:?}", key(r));
            } else {
                // Ridge solves agree to the CG tolerance (their warm starts come from different
                // checkpoint grids).
                assert!((e - num(r, "error")).abs() <= 1e-5 * e, "{:?}", key(r));
            }
            shared += 1;
        }
    }
    assert!(shared >= 2 * 2 * 3 * 3, "shared checkpoints: {shared}");
    for name in ["full-curves", "full-histogram", "full-pairs"] {
        for ext in ["png", "svg"] {
            let f = root.path().join(format!("figures/sweep_test/{name}.{ext}"));
            assert!(f.exists(), "{} missing", f.display());
        }
    }
    // The exact kernel's error is smallest near the GP's own lifetime on held-out data.
    let exact = |lifetime: f64| {
        rows.iter()
            .find(|r| {
                text(r, "point") == "exact"
                    && text(r, "set") == "validation"
                    && num(r, "lifetime") == lifetime
            })
            .map(|r| num(r, "error"))
            .unwrap()
    };
    assert!(exact(5.0) < exact(1.0), "{} vs {}", exact(5.0), exact(1.0));
}

#[test]
fn bad_sweep_and_plot_configs_are_rejected_before_running() {
    for (edit, expected) in [
        (("n_train = 150", "n_train = 1"), "n_train"),
        (("noise_sd = 0.1", "noise_sd = -0.1"), "noise_sd"),
        (
            ("n_validation = 100", "n_validation = 100000"),
            "at most 20000",
        ),
        (("weights_at = 2.0", "weights_at = 7.0"), "weights_at"),
        (
            ("learner = [\"sgd\", \"ridge\"]", "learner = \"adam\""),
            "adam",
        ),
        (
            ("bins = [-3.0, 3.0, 25.0]", "bins = [3.0, -3.0, 25.0]"),
            "histogram",
        ),
        (("pair_by = \"leaf\"", "pair_by = \"leef\""), "leef"),
        (("name = \"pairs\"", "name = \"curves\""), "two plots named"),
        (
            (
                "exact_kernel = { lifetimes = [1.0, 5.0] }",
                "exact_kernel = { lifetimes = [-1.0] }",
            ),
            "exact_kernel",
        ),
    ] {
        let root = root_with(&TEXT.replace(edit.0, edit.1));
        let out = repro(root.path(), &["run", CONFIG]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{edit:?} must fail");
        assert!(
            err.contains(expected),
            "{edit:?}: error should mention {expected:?}: {err}"
        );
        assert!(
            !root.path().join("results").exists(),
            "{edit:?} wrote results"
        );
    }
}

const WIDTH: &str = r#"
seed = 3
repeats = 1

[experiment]
name = "width_test"
kind = "width_selection"
paper = "test"
figure = "test"
description = "small Fig. 8"

[data]
source = "laplace_gp"
n_train = 200
n_test = 100
dim = 2
lifetime = 5.0
noise_sd = 0.1

[params]
method = ["mondrian", "random_fourier", "random_binning"]
n_features = 10
delta = 1e-3
learner = "sgd"
evaluations = { random_fourier = 6, random_binning = 4 }
terminal_lifetime = 8.0
checkpoints = { first = 0.5, count = 5 }
selection = ["test", "holdout"]
holdout_rows = 50
"#;

#[test]
fn width_search_selects_on_test_or_on_held_out_training_rows() {
    let root = root_with(&WIDTH.replace("sweep_test", "width_test"));
    let out = repro(root.path(), &["run", CONFIG, "--no-plot"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, rows) = load_complete(&RunPaths::new(root.path(), "width_test", "full")).unwrap();
    for method in ["mondrian", "random_fourier", "random_binning"] {
        for selection in ["test", "holdout"] {
            let cell: Vec<&Row> = rows
                .iter()
                .filter(|r| text(r, "curve") == method && text(r, "selection") == selection)
                .collect();
            let expected = match method {
                "mondrian" => 5,
                "random_fourier" => 6,
                _ => 4,
            };
            assert_eq!(cell.len(), expected, "{method} {selection}");
            for r in &cell {
                let chosen = if selection == "holdout" {
                    num(r, "holdout_error")
                } else {
                    assert!(r.get("holdout_error").is_none_or(|v| v.as_f64().is_none()));
                    num(r, "error")
                };
                assert_eq!(num(r, "selection_error"), chosen);
                assert!(num(r, "cpu_seconds") >= 0.0);
            }
            if method != "mondrian" {
                // The search starts at λ = 1 and then steps by ±1 in log2 λ.
                assert_eq!(num(cell[0], "lg"), 0.0);
                assert_eq!(num(cell[1], "lg").abs(), 1.0);
            }
        }
    }
}
