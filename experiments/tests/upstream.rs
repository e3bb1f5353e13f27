//! The authors' code, fetched from the mirror (`../shared/upstream`), verified, patched, built
//! and run by `repro run` on the same splits as the project's methods, its rows in the same
//! table; and what happens when it cannot run: a tampered archive, a missing toolchain, a crash
//! and a hang each skip its cells with the reason (a failure under `--require-upstream`) and
//! lose nothing else of the run.
//!
//! Uses the RTF side-by-side config (tess19, an R script: the cheapest upstream). Tests that
//! need R or the mirror print SKIPPED with the reason when they are absent.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use experiments::table::Row;

const CONFIG: &str = "configs/rtf/sonar_side_by_side.toml";
const EXPERIMENT: &str = "rtf_sonar_side_by_side";
const ARCHIVE: &str = "Tess19-330356f585239eedd771a42a68a0175c8d32a01c.tar.gz";

fn mirror() -> PathBuf {
    common::project_dir().join("../shared/upstream")
}

fn data() -> PathBuf {
    common::project_dir().join("../shared/datasets")
}

/// Why this machine cannot run tess19, if it cannot.
fn tess19_missing() -> Option<String> {
    if !mirror().join(ARCHIVE).is_file() {
        return Some(format!("no {} in {}", ARCHIVE, mirror().display()));
    }
    if !data().join("classification").is_dir() {
        return Some("no shared datasets".into());
    }
    let r = experiments::upstream::find("tess19").unwrap();
    let missing = experiments::upstream::toolchain::missing(&r.requires);
    (!missing.is_empty()).then(|| missing.join(", "))
}

/// A project root holding the side-by-side config.
fn root() -> tempfile::TempDir {
    root_with(CONFIG)
}

/// A project root holding `config`.
fn root_with(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(config);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(common::project_dir().join(config), &path).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[workspace]\n").unwrap();
    dir
}

/// `repro run` of the config's quick profile in `root`, with the mirror `mirror`, a cache of its
/// own, downloads pointed at nothing, and `extra` arguments and environment.
fn run(root: &Path, mirror: &Path, extra: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Output {
    run_config(CONFIG, root, mirror, extra, env)
}

fn run_config(
    config: &str,
    root: &Path,
    mirror: &Path,
    extra: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> Output {
    let mut cmd = repro(root, mirror, env);
    cmd.args(["run", config, "--profile", "quick", "--no-plot"])
        .args(extra);
    cmd.output().unwrap()
}

/// `repro --root root` with the mirror `mirror`, a cache of its own, downloads pointed at
/// nothing and the environment `env` (the subcommand to add).
fn repro(root: &Path, mirror: &Path, env: &[(&str, &std::ffi::OsStr)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_repro"));
    cmd.env("REPRO_DATA_DIR", data())
        .env("REPRO_UPSTREAM_DIR", mirror)
        .env("REPRO_UPSTREAM_CACHE", root.join("upstream-cache"))
        // No download reaches anything (the port is closed).
        .env("REPRO_FETCH_BASE", "http://127.0.0.1:9/")
        .arg("--root")
        .arg(root);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn rows(table: &Path) -> Vec<Row> {
    experiments::table::from_frame(&experiments::table::read_parquet(table).unwrap()).unwrap()
}

fn methods(rows: &[Row]) -> Vec<String> {
    let mut m: Vec<String> = rows.iter().map(|r| r["method"].to_string()).collect();
    m.sort();
    m.dedup();
    m
}

fn manifest(root: &Path) -> serde_json::Value {
    let path = root.join(format!("results/_runs/{EXPERIMENT}/quick.manifest.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn tess19_runs_beside_the_projects_forests_on_the_same_splits() {
    if let Some(why) = tess19_missing() {
        eprintln!("SKIPPED: tess19 cannot run here: {why}");
        return;
    }
    let dir = root();
    let out = run(dir.path(), &mirror(), &["--require-upstream"], &[]);
    let table = common::table_written(dir.path(), &out);
    let rows = rows(&table);
    assert_eq!(
        methods(&rows),
        [
            "authors_mrtf",
            "authors_urtf",
            "authors_wmrtf",
            "authors_wurtf",
            "mrtf",
            "urtf",
            "wmrtf",
            "wurtf"
        ]
    );
    let ours = rows
        .iter()
        .find(|r| r["method"].to_string() == "urtf")
        .unwrap();
    for r in rows
        .iter()
        .filter(|r| r["method"].to_string().starts_with("authors_"))
    {
        let pc = r["percent_correct"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&pc), "{r:?}");
        // The same split: as many test rows, a mode class scoring the same.
        assert_eq!(r["n_test"], ours["n_test"]);
        assert_eq!(r["mode_percent"], ours["mode_percent"]);
        assert!(r["fit_seconds"].as_f64().unwrap() > 0.0, "{r:?}");
    }
    assert!(manifest(dir.path()).get("unavailable").is_none());
    // Prepared once: a second run reuses the cache's build and every cell.
    let again = common::text(&run(dir.path(), &mirror(), &[], &[]));
    assert!(again.contains(", 0 computed,"), "{again}");
}

#[test]
fn a_tampered_archive_is_refused_and_loses_nothing_else() {
    let Ok(mut bytes) = std::fs::read(mirror().join(ARCHIVE)) else {
        eprintln!("SKIPPED: no {ARCHIVE} in {}", mirror().display());
        return;
    };
    if !data().join("classification").is_dir() {
        eprintln!("SKIPPED: no shared datasets");
        return;
    }
    let tampered = tempfile::tempdir().unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 1;
    std::fs::write(tampered.path().join(ARCHIVE), &bytes).unwrap();
    let dir = root();
    let out = run(dir.path(), tampered.path(), &[], &[]);
    let text = common::text(&out);
    let table = common::table_written(dir.path(), &out);
    assert!(
        text.contains("SKIPPED") && text.contains("tampered"),
        "{text}"
    );
    // The project's forests are all there; the authors' cells are left out, each with why.
    assert_eq!(methods(&rows(&table)), ["mrtf", "urtf", "wmrtf", "wurtf"]);
    let m = manifest(dir.path());
    assert_eq!(m["cells"]["upstream_unavailable"], 4);
    assert!(m["unavailable"][0]["error"].to_string().contains("sha256"));
    // Nothing was extracted from it.
    let cache = dir.path().join("upstream-cache");
    let extracted = std::fs::read_dir(&cache)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .count();
    assert_eq!(extracted, 0);

    // Required: the same is a failure, and says why.
    let out = run(dir.path(), tampered.path(), &["--require-upstream"], &[]);
    assert!(!out.status.success());
    assert!(common::text(&out).contains("tampered"));
}

/// A missing toolchain: the run says what to install, and `repro check` (what `make test` runs)
/// names the config whose cells of the authors' code were skipped, with the reason, in its
/// summary (a skip is tolerated there, never silent).
#[test]
fn a_missing_toolchain_says_what_to_install() {
    if !mirror().join(ARCHIVE).is_file() || !data().join("classification").is_dir() {
        eprintln!("SKIPPED: no mirror or shared datasets");
        return;
    }
    let dir = root();
    let empty = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        &mirror(),
        &[],
        &[("PATH", empty.path().as_os_str())],
    );
    let text = common::text(&out);
    common::table_written(dir.path(), &out);
    assert!(
        text.contains("missing program Rscript (Debian package r-base-core)")
            && text.contains("apt-get install -y"),
        "{text}"
    );
    let out = repro(dir.path(), &mirror(), &[("PATH", empty.path().as_os_str())])
        .args(["check", CONFIG])
        .output()
        .unwrap();
    let text = common::text(&out);
    let (_, summary) = text
        .split_once("NOT RUN (the authors' code")
        .unwrap_or_else(|| panic!("no NOT RUN line: {text}"));
    assert!(
        summary.contains(EXPERIMENT) && summary.contains("missing program Rscript"),
        "{summary}"
    );
}

/// A stand-in `Rscript` that loads any package but crashes (or hangs) on a script.
fn fake_rscript(behaviour: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("Rscript");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nif [ \"$1\" = -e ]; then exit 0; fi\n{behaviour}\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

#[test]
fn a_crashing_or_hanging_upstream_is_skipped_with_the_reason() {
    if !mirror().join(ARCHIVE).is_file() || !data().join("classification").is_dir() {
        eprintln!("SKIPPED: no mirror or shared datasets");
        return;
    }
    if !experiments::upstream::toolchain::on_path("patch") {
        eprintln!("SKIPPED: no `patch` program");
        return;
    }
    let crash = fake_rscript("echo 'Error in tess19: boom' >&2; exit 1");
    let dir = root();
    let out = run(
        dir.path(),
        &mirror(),
        &[],
        &[("PATH", &path_with(crash.path()))],
    );
    let text = common::text(&out);
    let table = common::table_written(dir.path(), &out);
    assert!(
        text.contains("exited with status 1") && text.contains("boom"),
        "{text}"
    );
    assert_eq!(methods(&rows(&table)), ["mrtf", "urtf", "wmrtf", "wurtf"]);

    let hang = fake_rscript("sleep 60");
    let dir = root();
    let started = std::time::Instant::now();
    let out = run(
        dir.path(),
        &mirror(),
        &["--upstream-timeout", "0.5"],
        &[("PATH", &path_with(hang.path()))],
    );
    let text = common::text(&out);
    let table = common::table_written(dir.path(), &out);
    assert!(text.contains("ran past its timeout of 0.5 s"), "{text}");
    assert_eq!(methods(&rows(&table)), ["mrtf", "urtf", "wmrtf", "wurtf"]);
    assert!(started.elapsed().as_secs() < 50);
}

/// Why this machine cannot run the Mondrian-kernel scripts (Python 3 and the mirror's archive;
/// the packages come from PyPI into the cache's virtual environment).
fn mondrian_kernel_missing() -> Option<String> {
    let r = experiments::upstream::find("mondrian_kernel").unwrap();
    if !mirror().join(&r.archive).is_file() {
        return Some(format!("no {} in {}", r.archive, mirror().display()));
    }
    let missing = experiments::upstream::toolchain::missing(&r.requires);
    (!missing.is_empty()).then(|| missing.join(", "))
}

/// A Python upstream through the harness: the authors' experiment_1 (Fig. 5) on the very points
/// of the project's maps. Both estimate the same exact Laplace kernel from draws of the same
/// maps, so each method's errors lie on the same grid of M, within [0, 1.5], and the authors'
/// Mondrian and binning errors fall with M as ours do (independent code, same property).
#[test]
fn the_authors_fig5_runs_on_the_same_points() {
    const FIG5: &str = "configs/mondrian/fig5_side_by_side.toml";
    if let Some(why) = mondrian_kernel_missing() {
        eprintln!("SKIPPED: the Mondrian-kernel scripts cannot run here: {why}");
        return;
    }
    let dir = root_with(FIG5);
    let out = run_config(FIG5, dir.path(), &mirror(), &["--require-upstream"], &[]);
    let table = common::table_written(dir.path(), &out);
    let rows = rows(&table);
    let curve = |method: &str| -> Vec<(i64, f64)> {
        let mut v: Vec<(i64, f64)> = rows
            .iter()
            .filter(|r| r["method"].to_string() == method && r["rep"].as_f64() == Some(0.0))
            .map(|r| {
                (
                    r["m_axis"].as_f64().unwrap() as i64,
                    r["max_abs_error"].as_f64().unwrap(),
                )
            })
            .collect();
        v.sort_by_key(|p| p.0);
        v
    };
    for method in ["mondrian", "random_binning", "random_fourier"] {
        let ours = curve(method);
        let theirs = curve(&format!("authors_{method}"));
        assert!(!ours.is_empty(), "{method}");
        let grid = |c: &[(i64, f64)]| c.iter().map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(grid(&ours), grid(&theirs), "{method}: the same M axis");
        for (_, e) in ours.iter().chain(&theirs) {
            assert!((0.0..=1.5).contains(e), "{method}: error {e}");
        }
        if method != "random_fourier" {
            let (first, last) = (theirs[0].1, theirs[theirs.len() - 1].1);
            assert!(
                last < first,
                "{method}: authors' error {first} at M = 1, {last} at M = 10"
            );
        }
    }
}
