//! End-to-end tests of the harness features that the coming papers need, on real registered
//! data (each test returns with a note when `../shared/datasets` is absent): per-repetition
//! splits, cell budgets ("did not finish"), progress of long cells, and checks under ablations.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use experiments::store::{load_complete, Manifest, RunPaths};
use experiments::table::Row;

fn project_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The shared real data, or `None` with a note.
fn shared_data(test: &str) -> Option<PathBuf> {
    let dir = project_dir().join("../shared/datasets");
    if dir.join("SHA256SUMS").is_file() {
        Some(dir)
    } else {
        eprintln!("{test}: skipped, ../shared/datasets is absent");
        None
    }
}

fn repro(root: &Path, data: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_repro"));
    cmd.arg("--root").arg(root).args(args);
    cmd.env("REPRO_DATA_DIR", data);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn root_with(name: &str, text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("configs/{name}.toml"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    dir
}

fn text(r: &Row, k: &str) -> String {
    r.get(k).map(|v| v.to_string()).unwrap_or_default()
}

const SWEEP: &str = r#"
seed = 1
repeats = 1
cell_budget_seconds = 0.0

[experiment]
name = "budget_test"
kind = "lifetime_sweep"
paper = "test"
figure = "test"
description = "a lifetime sweep on 300 CPU rows"

[data]
source = "dataset"
name = "cpu_rr"
max_rows = 300

[params]
n_mondrians = [2, 3]
terminal_lifetime = 1e-5
delta = 1e-4
checkpoints = { first = 1e-7, count = 30 }
"#;

#[test]
fn a_cell_over_its_budget_is_recorded_as_did_not_finish_and_reruns_under_a_new_budget() {
    let Some(data) = shared_data("budget") else {
        return;
    };
    let root = root_with("budget", SWEEP);
    let args = ["run", "configs/budget.toml", "--no-plot"];
    let out = repro(root.path(), &data, &args, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let paths = RunPaths::new(root.path(), "budget_test", "full");
    let (m, rows) = load_complete(&paths).unwrap();
    assert_eq!(m.cells.did_not_finish, 2);
    // Each cell stopped before its first checkpoint: one bare row says so.
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .all(|r| text(r, "cell_status") == "did_not_finish"));

    // The same budget again: both cells come from the cache.
    let out = repro(root.path(), &data, &args, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let m = Manifest::read(&paths.manifest).unwrap();
    assert_eq!((m.cells.cached, m.cells.computed), (2, 0));

    // A larger budget recomputes them (a finished cell would be reused).
    let out = repro(
        root.path(),
        &data,
        &[&args[..], &["--set", "cell_budget_seconds=1000"]].concat(),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = experiments::store::list_runs(root.path(), "budget_test");
    let run = runs.iter().find(|r| r.starts_with("full-set-")).unwrap();
    let (m, rows) = load_complete(&RunPaths::new(root.path(), "budget_test", run)).unwrap();
    assert_eq!((m.cells.computed, m.cells.did_not_finish), (2, 0));
    assert!(rows.len() > 2 * 30 * 2, "{} rows", rows.len());
    assert!(rows.iter().all(|r| text(r, "cell_status") == "finished"));
}

#[test]
fn long_cells_report_progress_while_they_run() {
    let Some(data) = shared_data("progress") else {
        return;
    };
    let root = root_with(
        "progress",
        &SWEEP
            .replace("cell_budget_seconds = 0.0\n", "")
            .replace("n_mondrians = [2, 3]", "n_mondrians = 2"),
    );
    let out = repro(
        root.path(),
        &data,
        &["run", "configs/progress.toml", "--no-plot"],
        &[("REPRO_PROGRESS_SECONDS", "0")],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let lines: Vec<&str> = err
        .lines()
        // One grid point: the line names only the repetition (parameters that vary over the
        // grid would precede it), not every parameter.
        .filter(|l| l.contains("] running rep=0: ") && l.contains('%'))
        .collect();
    assert!(lines.len() >= 10, "{err}");
    // Without a budget the table has no status column.
    let (_, rows) = load_complete(&RunPaths::new(root.path(), "budget_test", "full")).unwrap();
    assert!(rows.iter().all(|r| !r.contains_key("cell_status")));
}

const RIDGE: &str = r#"
seed = 5
repeats = 2

[experiment]
name = "split_test"
kind = "feature_ridge"
paper = "test"
figure = "test"
description = "ridge on yacht, random splits"

[data]
source = "dataset"
name = "uci/yacht"
split = { kind = "random", test_fraction = 0.3 }

[params]
method = ["exact_laplace", "random_fourier"]
lifetime = 0.5
delta = 1e-3
max_nonzeros = 6
"#;

#[test]
fn random_splits_change_per_repetition_and_not_with_the_thread_count() {
    let Some(data) = shared_data("splits") else {
        return;
    };
    let one = root_with("ridge", RIDGE);
    let two = root_with("ridge", RIDGE);
    for (root, jobs) in [(&one, "1"), (&two, "2")] {
        let out = repro(
            root.path(),
            &data,
            &["run", "configs/ridge.toml", "--no-plot", "--jobs", jobs],
            &[],
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let paths = |root: &tempfile::TempDir| RunPaths::new(root.path(), "split_test", "full");
    let (m, rows) = load_complete(&paths(&one)).unwrap();
    // Exact kernel ridge is deterministic, but each repetition has its own split: it runs twice.
    assert_eq!(m.cells.total, 4);
    let exact: Vec<f64> = rows
        .iter()
        .filter(|r| text(r, "method") == "exact_laplace")
        .map(|r| r["test_error"].as_f64().unwrap())
        .collect();
    assert_eq!(exact.len(), 2);
    assert_ne!(exact[0], exact[1]);
    // The table does not depend on the thread count.
    let out = repro(
        one.path(),
        &data,
        &[
            "compare",
            paths(&one).table.to_str().unwrap(),
            paths(&two).table.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(stdout(&out).contains("SAME"));
}

#[test]
fn an_ablation_reports_checks_that_presume_the_papers_parameters_as_not_applicable() {
    let Some(data) = shared_data("ablation") else {
        return;
    };
    let text =
        std::fs::read_to_string(project_dir().join("configs/mondrian/fig5_kernel_error.toml"))
            .unwrap();
    let root = root_with("fig5", &text);
    let config = "configs/fig5.toml";
    let out = repro(
        root.path(),
        &data,
        &[
            "run",
            config,
            "--no-plot",
            "--profile",
            "quick",
            "--set",
            "params.lifetime=3",
        ],
        &[],
    );
    let report = stdout(&out);
    assert!(out.status.success(), "{report}{}", stderr(&out));
    assert!(
        report.contains("n/a") && report.contains("params.lifetime"),
        "{report}"
    );
    assert!(!report.contains("FAIL"), "{report}");
    // Another seed leaves the checks valid: they are evaluated.
    let out = repro(
        root.path(),
        &data,
        &[
            "run",
            config,
            "--no-plot",
            "--profile",
            "quick",
            "--set",
            "seed=3",
        ],
        &[],
    );
    let report = stdout(&out);
    assert!(!report.contains("n/a "), "{report}");
    assert!(
        ["reproduced", "pin holds", "holds", "FAILED"]
            .iter()
            .any(|v| report.contains(v)),
        "{report}"
    );
}
