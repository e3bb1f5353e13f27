//! End-to-end tests of the `repro` binary in temporary project roots: bad input, overrides,
//! determinism across thread counts and cell orders, resume after interruption, re-plotting.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use experiments::store::{load_complete, Manifest, RunPaths, RunStatus};
use experiments::table::{Row, Value};

const FIG5: &str = "configs/mondrian/fig5_kernel_error.toml";
const EXPERIMENT: &str = "mondrian_fig5_kernel_error";

fn project_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A temporary project root holding the real Fig. 5 config (optionally edited).
fn temp_root(edit: impl FnOnce(String) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(project_dir().join(FIG5)).unwrap();
    let path = dir.path().join(FIG5);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, edit(text)).unwrap();
    dir
}

fn repro(root: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_repro"));
    cmd.arg("--root").arg(root).args(args);
    // Keep the shared datasets out of reach unless a test provides them.
    cmd.env("REPRO_DATA_DIR", root.join("no-data"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn run_paths(root: &Path, run: &str) -> RunPaths {
    RunPaths::new(root, EXPERIMENT, run)
}

/// Result values keyed by (method, rep, order), timing columns dropped.
fn values(rows: &[Row]) -> BTreeMap<(String, i64, i64), Row> {
    rows.iter()
        .map(|r| {
            let mut r = r.clone();
            r.remove("cell_seconds");
            let key = (
                r["method"].to_string(),
                r["rep"].as_f64().unwrap() as i64,
                r["order"].as_f64().unwrap() as i64,
            );
            (key, r)
        })
        .collect()
}

/// Asserts equal tables, reporting only the first difference.
fn assert_same(a: &BTreeMap<(String, i64, i64), Row>, b: &BTreeMap<(String, i64, i64), Row>) {
    assert_eq!(a.len(), b.len(), "row counts differ");
    for ((ka, ra), (kb, rb)) in a.iter().zip(b) {
        assert_eq!(ka, kb, "row keys differ");
        assert!(ra == rb, "row {ka:?} differs:\n{ra:?}\n{rb:?}");
    }
}

fn assert_bad_input(edit: impl FnOnce(String) -> String, expected: &[&str]) {
    let root = temp_root(edit);
    let out = repro(root.path(), &["run", FIG5], &[]);
    let err = stderr(&out);
    assert!(!out.status.success(), "bad input must fail: {err}");
    for e in expected {
        assert!(err.contains(e), "error should mention {e:?}: {err}");
    }
    assert!(
        !root.path().join("results").exists(),
        "nothing may be written: {err}"
    );
    assert!(!root.path().join("figures").exists());
}

#[test]
fn unknown_key_is_rejected() {
    assert_bad_input(
        |t| t.replace("lifetime = 10.0", "lifetime = 10.0\nlifetme = 3"),
        &["lifetme", FIG5],
    );
    assert_bad_input(
        |t| t.replace("repeats = 5", "repeats = 5\nrepeat = 2"),
        &["repeat"],
    );
}

#[test]
fn wrong_type_is_rejected() {
    assert_bad_input(
        |t| t.replace("repeats = 5", "repeats = \"five\""),
        &["repeats"],
    );
    assert_bad_input(
        |t| t.replace("max_nonzeros = 50", "max_nonzeros = 2.5"),
        &["max_nonzeros"],
    );
}

#[test]
fn negative_lifetime_is_rejected() {
    assert_bad_input(
        |t| t.replace("lifetime = 10.0", "lifetime = -1.0"),
        &["lifetime = -1"],
    );
}

#[test]
fn empty_grid_is_rejected() {
    assert_bad_input(
        |t| {
            t.replace(
                "method = [\"random_fourier\", \"random_binning\", \"mondrian\"]",
                "method = []",
            )
        },
        &["params.method", "empty grid"],
    );
}

#[test]
fn unknown_method_is_rejected() {
    assert_bad_input(
        |t| {
            t.replace(
                "\"random_binning\", \"mondrian\"",
                "\"random_binning\", \"mondrain\"",
            )
        },
        &["mondrain", "mondrian"],
    );
}

#[test]
fn bad_check_and_profile_are_rejected_before_running() {
    assert_bad_input(
        |t| t.replace("metric = \"max_abs_error\"", "metric = \"max_error\""),
        &["max_error"],
    );
    assert_bad_input(
        |t| {
            t.replace(
                "[profile.quick]\nrepeats = 3",
                "[profile.quick]\nrepeats = 0",
            )
        },
        &["profile.quick", "repeats"],
    );
    assert_bad_input(
        |t| {
            t.replace(
                "kind = \"kernel_approximation\"",
                "kind = \"kernel_aproximation\"",
            )
        },
        &["kernel_aproximation"],
    );
}

#[test]
fn bad_override_is_rejected() {
    let root = temp_root(|t| t);
    for set in [
        "params.lifetime=-3",
        "params.lifetme=3",
        "repeats=0",
        "nonsense",
        "cell_budget_seconds=-1",
        "cell_budget_seconds=1e30",
        "cell_budget_seconds=nan",
        "data.split={ kind = \"given\" }",
        "data.source=dataset",
        "experiment.kind=feature_ridge",
    ] {
        let out = repro(root.path(), &["run", FIG5, "--set", set], &[]);
        assert!(!out.status.success(), "--set {set} must fail");
        assert!(!root.path().join("results").exists());
    }
}

fn dataset_config(t: String) -> String {
    t.replace(
        "source = \"uniform_box\"\nn = 100\ndim = 2\nlow = 0.0\nhigh = 1.0",
        "source = \"dataset\"\nname = \"cpu_rr\"\nmax_rows = 40",
    )
    .replace("lifetime = 10.0", "lifetime = 1e-6")
}

#[test]
fn missing_dataset_is_a_clear_error() {
    let root = temp_root(dataset_config);
    let out = repro(root.path(), &["run", FIG5], &[]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("cpu_rr_train.csv") && err.contains("no-data"),
        "{err}"
    );
    assert!(!root.path().join("results").exists());
}

#[test]
fn corrupted_dataset_is_refused_with_both_digests() {
    let shared = project_dir().join("../shared/datasets/cpu");
    if !shared.exists() {
        eprintln!("skipped: ../shared/datasets is not present");
        return;
    }
    let root = temp_root(dataset_config);
    let data = root.path().join("data");
    std::fs::create_dir_all(data.join("cpu")).unwrap();
    let mut bytes = std::fs::read(shared.join("cpu_rr_train.csv")).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x01;
    std::fs::write(data.join("cpu/cpu_rr_train.csv"), bytes).unwrap();
    std::fs::copy(
        shared.join("cpu_rr_test.csv"),
        data.join("cpu/cpu_rr_test.csv"),
    )
    .unwrap();
    let out = repro(root.path(), &["run", FIG5], &[("REPRO_DATA_DIR", &data)]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("cb328c874c45280a7382460b01427de98aff4f95a938d6352bf0f5ca1598baed"),
        "{err}"
    );
    assert!(err.contains("cpu_rr_train.csv"), "{err}");
    assert!(!root.path().join("results").exists());

    // The intact file is accepted and its digest recorded.
    std::fs::copy(
        shared.join("cpu_rr_train.csv"),
        data.join("cpu/cpu_rr_train.csv"),
    )
    .unwrap();
    let out = repro(
        root.path(),
        &["run", FIG5, "--no-plot"],
        &[("REPRO_DATA_DIR", &data)],
    );
    assert!(
        out.status.success() || stderr(&out).contains("Complete"),
        "{}",
        stderr(&out)
    );
    let manifest = Manifest::read(&run_paths(root.path(), "full").manifest).unwrap();
    assert_eq!(
        manifest.datasets["cpu_rr"]["cpu/cpu_rr_train.csv"],
        "cb328c874c45280a7382460b01427de98aff4f95a938d6352bf0f5ca1598baed"
    );
}

#[test]
fn override_is_recorded_and_does_not_replace_the_reference_run() {
    let root = temp_root(|t| t);
    let out = repro(
        root.path(),
        &[
            "run",
            FIG5,
            "--set",
            "params.lifetime=3",
            "--set",
            "repeats=2",
            "--no-plot",
        ],
        &[],
    );
    assert!(
        out.status.success() || stderr(&out).contains("Complete"),
        "{}",
        stderr(&out)
    );
    let runs = experiments::store::list_runs(root.path(), EXPERIMENT);
    assert_eq!(runs.len(), 1);
    assert!(runs[0].starts_with("full-set-"), "{runs:?}");
    let (manifest, rows) = load_complete(&run_paths(root.path(), &runs[0])).unwrap();
    assert_eq!(manifest.overrides, vec!["params.lifetime=3", "repeats=2"]);
    assert!(manifest.resolved_config.contains("lifetime = 3"));
    assert!(manifest.resolved_config.contains("repeats = 2"));
    assert!(rows.iter().all(|r| r["lifetime"].as_f64() == Some(3.0)));
    assert_eq!(rows.len(), 3 * 2 * 50 - 2 * 25);
}

#[test]
fn same_numbers_with_one_or_two_threads_and_any_cell_order() {
    let one = temp_root(|t| t);
    let two = temp_root(|t| t);
    let reordered = temp_root(|t| {
        t.replace(
            "method = [\"random_fourier\", \"random_binning\", \"mondrian\"]",
            "method = [\"mondrian\", \"random_fourier\", \"random_binning\"]",
        )
    });
    assert!(
        repro(one.path(), &["run", FIG5, "--jobs", "1", "--no-plot"], &[])
            .status
            .code()
            .is_some()
    );
    repro(two.path(), &["run", FIG5, "--jobs", "2", "--no-plot"], &[]);
    repro(
        reordered.path(),
        &["run", FIG5, "--jobs", "2", "--no-plot"],
        &[],
    );
    let a = values(&load_complete(&run_paths(one.path(), "full")).unwrap().1);
    let b = values(&load_complete(&run_paths(two.path(), "full")).unwrap().1);
    let c = values(
        &load_complete(&run_paths(reordered.path(), "full"))
            .unwrap()
            .1,
    );
    assert_eq!(a.len(), 3 * 5 * 50 - 5 * 25);
    assert_same(&a, &b);
    assert_same(&a, &c);
}

#[test]
fn interrupted_run_resumes_and_gives_the_same_table() {
    let root = temp_root(|t| t);
    repro(root.path(), &["run", FIG5, "--no-plot"], &[]);
    let paths = run_paths(root.path(), "full");
    let reference = values(&load_complete(&paths).unwrap().1);
    // An interruption after some cells: the others never reached the cache, and the run never
    // wrote its table.
    let mut cached: Vec<_> = std::fs::read_dir(&paths.cells_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cached.sort();
    for p in cached.iter().step_by(3) {
        std::fs::remove_file(p).unwrap();
    }
    std::fs::remove_file(&paths.table).unwrap();
    let out = repro(root.path(), &["run", FIG5, "--no-plot"], &[]);
    assert!(out.status.code().is_some());
    let (manifest, rows) = load_complete(&paths).unwrap();
    assert_eq!(manifest.cells.computed, 5);
    assert_eq!(manifest.cells.cached, 10);
    assert_same(&values(&rows), &reference);
}

#[test]
fn killed_run_leaves_no_complete_looking_table_and_resumes() {
    // A slow variant: 600 points, 200 non-zeros, one thread.
    let heavy = |t: String| {
        t.replace("n = 100", "n = 600")
            .replace("max_nonzeros = 50", "max_nonzeros = 200")
            .replace("repeats = 5", "repeats = 4")
    };
    let root = temp_root(heavy);
    let paths = run_paths(root.path(), "full");
    let mut child = Command::new(env!("CARGO_BIN_EXE_repro"))
        .arg("--root")
        .arg(root.path())
        .args(["run", FIG5, "--jobs", "1", "--no-plot"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let n = std::fs::read_dir(&paths.cells_dir)
            .map(|d| {
                d.filter(|e| {
                    !e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .starts_with('.')
                })
                .count()
            })
            .unwrap_or(0);
        if n >= 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let finished_before_kill =
        Manifest::read(&paths.manifest).is_ok_and(|m| m.status == RunStatus::Complete);
    if !finished_before_kill {
        // Whatever is on disk must not pass for a complete result.
        assert!(load_complete(&paths).is_err());
        assert!(!paths.table.exists());
    }
    let out = repro(root.path(), &["run", FIG5, "--no-plot"], &[]);
    assert!(out.status.code().is_some());
    let (manifest, rows) = load_complete(&paths).unwrap();
    if !finished_before_kill {
        assert!(manifest.cells.cached >= 2, "{:?}", manifest.cells);
    }
    let fresh = temp_root(heavy);
    repro(fresh.path(), &["run", FIG5, "--no-plot"], &[]);
    let (_, fresh_rows) = load_complete(&run_paths(fresh.path(), "full")).unwrap();
    assert_same(&values(&rows), &values(&fresh_rows));
}

#[test]
fn plot_rerenders_from_stored_results_without_recomputing() {
    let root = temp_root(|t| t);
    let out = repro(root.path(), &["run", FIG5], &[]);
    assert!(out.status.code().is_some());
    let paths = run_paths(root.path(), "full");
    let png = paths.figure_stem.with_extension("png");
    let svg = paths.figure_stem.with_extension("svg");
    assert!(png.exists() && svg.exists());
    let manifest_before = std::fs::read(&paths.manifest).unwrap();
    std::fs::remove_file(&png).unwrap();
    std::fs::remove_file(&svg).unwrap();
    let out = repro(root.path(), &["plot"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(png.exists() && svg.exists());
    assert_eq!(
        std::fs::read(&paths.manifest).unwrap(),
        manifest_before,
        "plot must not rerun"
    );
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.contains("maximum absolute error"));
    assert!(svg_text.contains("Mondrian kernel"));
}

#[test]
fn manifest_records_provenance() {
    let root = temp_root(|t| t);
    repro(root.path(), &["run", FIG5, "--jobs", "2", "--no-plot"], &[]);
    let (m, rows) = load_complete(&run_paths(root.path(), "full")).unwrap();
    assert_eq!(m.status, RunStatus::Complete);
    assert_eq!(m.threads, 2);
    assert_eq!(m.base_seed, 20160605);
    assert_eq!(m.config, FIG5);
    assert_eq!(m.cells.total, 15);
    assert!(m.provenance.versions.contains_key("polars"));
    assert!(m.finished.is_some() && m.wall_seconds.is_some());
    let table = m.table.unwrap();
    assert_eq!(table.rows, rows.len());
    assert!(rows
        .iter()
        .all(|r| matches!(r.get("cell_seconds"), Some(Value::Float(_)))));
}

#[test]
fn reproduce_all_skips_missing_data_says_how_to_get_it_and_fails() {
    let root = temp_root(dataset_config);
    let out = repro(root.path(), &["reproduce-all"], &[]);
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "a skipped experiment must fail reproduce-all: {err}"
    );
    assert!(err.contains("SKIPPED") && err.contains("cpu_rr"), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 skipped"), "{stdout}");
    assert!(!root.path().join("results").join(EXPERIMENT).exists());
}

#[test]
fn check_fails_when_a_bound_is_violated() {
    // The same quick run, with the Mondrian bound moved where the paper's numbers are not.
    let root = temp_root(|t| t.replace("min = 0.14\nmax = 0.26", "min = 0.5\nmax = 0.6"));
    let out = repro(root.path(), &["check"], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("FAIL"), "{stdout}");
}

#[test]
fn check_skips_configs_whose_data_are_absent_unless_required() {
    let root = temp_root(dataset_config);
    let out = repro(root.path(), &["check"], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout.contains("NOT CHECKED") && stdout.contains(EXPERIMENT),
        "{stdout}"
    );
    let out = repro(root.path(), &["check", "--require-data"], &[]);
    assert!(!out.status.success());
}

/// The README's sweep example: `--set 'params.lifetime=[3, 30]'` draws one series per lifetime
/// and the report sets each lifetime apart, the paper's lambda = 10 numbers n/a beside them.
#[test]
fn a_swept_override_stays_apart_in_the_figure_and_the_report() {
    let dir = temp_root(|t| t);
    let root = dir.path();
    let o = repro(
        root,
        &[
            "run",
            FIG5,
            "--profile",
            "quick",
            "--set",
            "params.lifetime=[3, 30]",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The fixed y_range [0, 1.2] grows to show the Fourier points above it, and says so.
    assert!(
        stderr(&o).contains("outside the config's y_range"),
        "{}",
        stderr(&o)
    );
    let run = std::fs::read_dir(root.join("results/_runs").join(EXPERIMENT))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .find_map(|n| n.strip_suffix(".manifest.json").map(String::from))
        .unwrap();
    let svg = std::fs::read_to_string(
        root.join("figures")
            .join(EXPERIMENT)
            .join(format!("{run}.svg")),
    )
    .unwrap();
    for label in [
        "Mondrian kernel (lifetime = 3)",
        "Mondrian kernel (lifetime = 30)",
    ] {
        assert!(svg.contains(label), "legend lacks {label}");
    }
    let o = repro(root, &["report", FIG5, "--run", &run], &[]);
    let report = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        report.contains(
            "| Mondrian kernel, M = 50 (lifetime = 3) | n/a: published for lifetime = 10 |"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "| Mondrian kernel, M = 50 (lifetime = 30) | n/a: published for lifetime = 10 |"
        ),
        "{report}"
    );
    // No line pools the two lifetimes (n = 6 would be both lifetimes' 3 repetitions).
    assert!(!report.contains("n = 6"), "{report}");
}

/// `repro report` with no complete full run (a fresh clone) keeps the committed sections and
/// marks them, instead of replacing them with stubs.
#[test]
fn a_report_without_runs_keeps_the_sections_it_had() {
    let dir = temp_root(|t| t);
    let root = dir.path();
    std::fs::create_dir_all(root.join("results")).unwrap();
    let old = "# Reproduced vs published numbers\n\n## Paper\n\n### Fig. 5 — \
               `mondrian_fig5_kernel_error`\n\nA committed section.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    std::fs::write(root.join("results/REPORT.md"), old).unwrap();
    let o = repro(root, &["report"], &[]);
    assert!(
        !o.status.success(),
        "a missing run is still reported as missing"
    );
    assert!(stderr(&o).contains("1 section(s) kept"), "{}", stderr(&o));
    let new = std::fs::read_to_string(root.join("results/REPORT.md")).unwrap();
    assert!(
        new.contains("A committed section.\n\n| a | b |\n|---|---|\n| 1 | 2 |"),
        "{new}"
    );
    assert!(
        new.contains("_Kept from the previous report: no complete `full` run here"),
        "{new}"
    );
    assert!(!new.contains("_No complete"), "{new}");
}
