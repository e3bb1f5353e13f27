//! The harness under faults and hostile input: each test pins a defect found by trying it as a
//! new user would (issue 8).

mod common;

use common::{project_dir, temp_root, text, FIG5};

use std::path::Path;
use std::process::{Command, Output};

fn repro_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_repro"))
        .current_dir(cwd)
        .args(args)
        .env("REPRO_DATA_DIR", cwd.join("no-data"))
        .env_remove("REPRO_ROOT")
        .output()
        .unwrap()
}

fn repro(root: &Path, args: &[&str]) -> Output {
    let mut all = vec!["--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    repro_in(root, &all)
}

#[test]
fn report_fails_on_missing_runs_names_no_local_path_and_keeps_the_full_report() {
    let root = temp_root();
    let report_md = root.path().join("results/REPORT.md");
    let out = repro(root.path(), &["report"]);
    let all = text(&out);
    assert!(
        !out.status.success(),
        "a missing run must fail the report: {all}"
    );
    let written = std::fs::read_to_string(&report_md).unwrap();
    assert!(written.contains("No complete `full` run"), "{written}");
    assert!(
        !written.contains(root.path().to_str().unwrap()),
        "{written}"
    );

    let out = repro(root.path(), &["run", FIG5, "--no-plot"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = repro(root.path(), &["report"]);
    assert!(out.status.success(), "{}", text(&out));
    let full = std::fs::read_to_string(&report_md).unwrap();

    // A report of named configs is printed, not written over the full report.
    let out = repro(root.path(), &["report", FIG5]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&report_md).unwrap(), full);

    // A corrupt table fails the report.
    let table = root
        .path()
        .join("results/mondrian_fig5_kernel_error/full.parquet");
    std::fs::write(&table, b"not parquet").unwrap();
    let out = repro(root.path(), &["report", FIG5]);
    assert!(!out.status.success(), "{}", text(&out));
}

#[test]
fn profiles_are_validated_names_and_cannot_be_overridden() {
    let root = temp_root();
    for (args, expected) in [
        (
            vec!["run", FIG5, "--profile", "../../x"],
            "lowercase letters",
        ),
        (
            vec!["run", FIG5, "--set", "profile.quick.repeats=0"],
            "profiles cannot be overridden",
        ),
    ] {
        let out = repro(root.path(), &args);
        assert!(!out.status.success(), "{args:?}");
        assert!(text(&out).contains(expected), "{args:?}: {}", text(&out));
    }
    let config = root.path().join(FIG5);
    let original = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("{original}\n[profile.full]\nrepeats = 1\n"),
    )
    .unwrap();
    let out = repro(root.path(), &["run", FIG5]);
    assert!(text(&out).contains("[profile.full]"), "{}", text(&out));
    assert!(!out.status.success());
    // Nothing was written anywhere.
    assert!(!root.path().join("results").exists());
    assert!(!root.path().parent().unwrap().join("x.parquet").exists());
}

#[test]
fn relative_config_paths_are_relative_to_the_current_folder() {
    let root = temp_root();
    let folder = root.path().join("configs/mondrian");
    // From inside configs/mondrian, the config is just its file name.
    let out = repro_in(&folder, &["run", "fig5_kernel_error.toml", "--no-plot"]);
    assert!(out.status.success(), "{}", text(&out));
    let manifest = root
        .path()
        .join("results/_runs/mondrian_fig5_kernel_error/full.manifest.json");
    let manifest = std::fs::read_to_string(manifest).unwrap();
    assert!(
        manifest.contains(&format!("\"config\": \"{FIG5}\"")),
        "{manifest}"
    );
}

#[test]
fn outside_a_project_repro_refuses_to_write_results() {
    let elsewhere = tempfile::tempdir().unwrap();
    let config = project_dir().join(FIG5);
    let out = repro_in(elsewhere.path(), &["run", config.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("not inside a project"),
        "{}",
        text(&out)
    );
    assert!(!elsewhere.path().join("results").exists());
}

#[test]
fn a_forged_or_truncated_cached_cell_is_discarded_with_a_warning_and_recomputed() {
    let root = temp_root();
    let args = ["run", FIG5, "--no-plot"];
    let out = repro(root.path(), &args);
    assert!(out.status.success(), "{}", text(&out));
    let table = root
        .path()
        .join("results/mondrian_fig5_kernel_error/full.parquet");
    let original = std::fs::read(&table).unwrap();
    let cells = root
        .path()
        .join("results/_runs/mondrian_fig5_kernel_error/cells");
    let mut files: Vec<_> = std::fs::read_dir(&cells)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    // Forge a number in one cell (valid JSON), truncate another.
    let forged = std::fs::read_to_string(&files[0]).unwrap();
    let at = forged.find("\"max_abs_error\":").unwrap() + "\"max_abs_error\":".len();
    let forged = format!("{}0.0001234{}", &forged[..at], &forged[at..]);
    std::fs::write(&files[0], forged).unwrap();
    let truncated = std::fs::read(&files[1]).unwrap();
    std::fs::write(&files[1], &truncated[..truncated.len() / 2]).unwrap();

    let out = repro(root.path(), &args);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert_eq!(all.matches("discarded, recomputing").count(), 2, "{all}");
    assert!(all.contains("2 computed"), "{all}");
    // The recomputed table holds the original numbers.
    let frame = |bytes: Vec<u8>| {
        let path = root.path().join("t.parquet");
        std::fs::write(&path, bytes).unwrap();
        let rows =
            experiments::table::from_frame(&experiments::table::read_parquet(&path).unwrap())
                .unwrap();
        rows.into_iter()
            .map(|mut r| {
                r.remove("cell_seconds");
                r
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(frame(std::fs::read(&table).unwrap()), frame(original));
}

#[test]
fn concurrent_runs_of_one_config_wait_for_each_other_and_all_succeed() {
    let root = temp_root();
    let args = [
        "--root",
        root.path().to_str().unwrap(),
        "run",
        FIG5,
        "--no-plot",
        "--jobs",
        "1",
        "--set",
        "repeats=30",
        "--set",
        "data.n=200",
    ];
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_repro"))
                .current_dir(root.path())
                .args(args)
                .env("REPRO_DATA_DIR", root.path().join("no-data"))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let mut computed = 0;
    for out in &outputs {
        let all = text(out);
        assert!(out.status.success(), "{all}");
        let n: usize = all
            .split(" computed")
            .next()
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{all}"));
        computed += n;
    }
    // 3 methods x 30 repetitions, each computed once in all.
    assert_eq!(computed, 90);
    let runs = experiments::store::list_runs(root.path(), "mondrian_fig5_kernel_error");
    let paths =
        experiments::store::RunPaths::new(root.path(), "mondrian_fig5_kernel_error", &runs[0]);
    let (manifest, rows) = experiments::store::load_complete(&paths).unwrap();
    assert_eq!(manifest.cells.total, 90);
    assert_eq!(rows.len(), 90 * 50 - 30 * 25);
}

#[test]
fn absurd_sizes_are_config_errors_before_any_work() {
    let root = temp_root();
    let big_axis = |name: &str| {
        let values: Vec<String> = (1..=2000).map(|v| v.to_string()).collect();
        format!("params.{name}=[{}]", values.join(", "))
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--set".into(), "repeats=1000000000000".into()],
            "repeats",
        ),
        (vec!["--set".into(), "data.n=10000000".into()], "points"),
        (
            vec!["--set".into(), "data.dim=100000000".into()],
            "coordinates",
        ),
        (
            vec![
                "--set".into(),
                big_axis("lifetime"),
                "--set".into(),
                big_axis("max_nonzeros"),
            ],
            "grid",
        ),
        (vec!["--jobs".into(), "10000".into()], "--jobs"),
        (vec!["--jobs".into(), "0".into()], "--jobs"),
    ];
    // A complete run first: a refused run must leave it as it was.
    let out = repro(root.path(), &["run", FIG5, "--no-plot"]);
    assert!(out.status.success(), "{}", text(&out));
    let manifest = root
        .path()
        .join("results/_runs/mondrian_fig5_kernel_error/full.manifest.json");
    let before = std::fs::read(&manifest).unwrap();
    for (extra, expected) in cases {
        let started = std::time::Instant::now();
        let mut args = vec!["run", FIG5, "--no-plot"];
        args.extend(extra.iter().map(String::as_str));
        let out = repro(root.path(), &args);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{expected}: {all}");
        assert!(all.contains(expected), "{expected}: {all}");
        assert!(started.elapsed().as_secs_f64() < 10.0, "{expected}: slow");
    }
    assert_eq!(std::fs::read(&manifest).unwrap(), before);
}

#[test]
fn a_binary_refuses_a_checkout_whose_sources_differ_from_its_own() {
    let root = temp_root();
    // A checkout with exactly the sources this binary was built from: runs, and says so.
    for (path, _) in experiments::fingerprint::NUMERIC_SOURCES {
        let to = root.path().join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(project_dir().join(path), to).unwrap();
    }
    std::fs::write(root.path().join("experiments/Cargo.toml"), "").unwrap();
    std::fs::copy(
        project_dir().join("Cargo.toml"),
        root.path().join("Cargo.toml"),
    )
    .unwrap();
    let out = repro(root.path(), &["run", FIG5, "--no-plot"]);
    assert!(out.status.success(), "{}", text(&out));
    let manifest = std::fs::read_to_string(
        root.path()
            .join("results/_runs/mondrian_fig5_kernel_error/full.manifest.json"),
    )
    .unwrap();
    assert!(manifest.contains("\"sources\": \"match\""), "{manifest}");
    // Another source tree (one file edited): refused, naming the file.
    let edited = root.path().join("algorithms/mondrian/src/tree.rs");
    let content_before = std::fs::read_to_string(&edited).unwrap();
    let mut content = content_before.clone();
    content.push_str("\n// another commit\n");
    std::fs::write(&edited, content).unwrap();
    let out = repro(root.path(), &["run", FIG5, "--no-plot", "--force"]);
    assert!(!out.status.success());
    let all = text(&out);
    assert!(
        all.contains("built from other sources") && all.contains("algorithms/mondrian/src/tree.rs"),
        "{all}"
    );
    // A numeric source the binary does not embed (a new file): refused, naming it.
    std::fs::write(&edited, content_before).unwrap();
    std::fs::write(root.path().join("algorithms/mondrian/src/new.rs"), "").unwrap();
    let out = repro(root.path(), &["run", FIG5, "--no-plot", "--force"]);
    assert!(!out.status.success());
    let all = text(&out);
    assert!(
        all.contains("built from other sources") && all.contains("algorithms/mondrian/src/new.rs"),
        "{all}"
    );
}

#[test]
fn list_counts_planned_cells_and_tells_corrupt_interrupted_and_killed_figure_temporaries() {
    let root = temp_root();
    let out = repro(root.path(), &["run", FIG5, "--profile", "quick"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = repro(root.path(), &["list"]);
    let all = text(&out);
    // Fig. 5 full: 3 methods x 5 repetitions.
    assert!(all.contains("| 15 cells |"), "{all}");
    assert!(all.contains("quick: complete"), "{all}");

    let dir = root.path().join("results/mondrian_fig5_kernel_error");
    std::fs::write(dir.join("quick.parquet"), b"garbage").unwrap();
    // A run killed mid-way: manifest `running`, nobody holds its lock.
    let runs = root.path().join("results/_runs/mondrian_fig5_kernel_error");
    let manifest = std::fs::read_to_string(runs.join("quick.manifest.json")).unwrap();
    std::fs::write(
        runs.join("killed.manifest.json"),
        manifest.replace("\"status\": \"complete\"", "\"status\": \"running\""),
    )
    .unwrap();
    let all = text(&repro(root.path(), &["list"]));
    assert!(all.contains("quick: CORRUPT"), "{all}");
    assert!(all.contains("killed: interrupted"), "{all}");

    // A figure temporary of a process that no longer runs is removed by the next plot.
    let figures = root.path().join("figures/mondrian_fig5_kernel_error");
    let stale = figures.join(".quick.tmp-999999999.png");
    std::fs::write(&stale, b"half a png").unwrap();
    let out = repro(root.path(), &["run", FIG5, "--profile", "quick", "--force"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!stale.exists());
}

#[test]
fn numbers_that_are_not_numbers_are_refused_and_reproduce_all_can_skip_figures() {
    let root = temp_root();
    let out = repro(
        root.path(),
        &["run", FIG5, "--set", "params.lifetime=1e400"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("not a valid TOML number"),
        "{}",
        text(&out)
    );
    let out = repro(root.path(), &["reproduce-all", "--no-plot"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!root.path().join("figures").exists());
}

#[test]
fn type_errors_name_the_key() {
    let root = temp_root();
    for (set, key) in [
        ("params.lifetime=\"x\"", "params.lifetime"),
        ("params.max_nonzeros=2.5", "params.max_nonzeros"),
        ("params.method=3", "params.method"),
        ("data.n=\"x\"", "data.n"),
        ("data.nn=3", "data.nn"),
        ("data.source=\"xx\"", "data.source"),
        ("repeats=\"x\"", "repeats"),
    ] {
        let out = repro(root.path(), &["run", FIG5, "--set", set]);
        assert_eq!(out.status.code(), Some(2), "{set}");
        assert!(text(&out).contains(key), "{set}: {}", text(&out));
    }
}
