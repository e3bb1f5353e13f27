//! Data of one's own, as a researcher uses it: each paper page's template config
//! (`configs/<paper>/README.md`, section "Template: your own data"), copied beside a CSV the
//! user wrote, outside the project, runs with the built binary (no rebuild, no registry entry);
//! the manifest records the CSV's sha256, an edited CSV gets new cell keys (nothing is reused
//! from the cache), an unchanged one reuses every cell.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use sha2::Digest;

/// The first TOML block of the page's "Template: your own data" section.
fn template(paper: &str) -> String {
    let page = common::project_dir().join(format!("configs/{paper}/README.md"));
    let text = std::fs::read_to_string(&page).unwrap();
    let section = text
        .split("## Template: your own data")
        .nth(1)
        .unwrap_or_else(|| panic!("{}: no template section", page.display()));
    let block = section
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap_or_else(|| panic!("{}: no TOML block in the template section", page.display()));
    block.to_string()
}

/// A deterministic stand-in for a user's measurements (no RNG crate needed).
fn value(i: usize, j: usize) -> f64 {
    ((i * 7 + j * 13) % 17) as f64 / 17.0 + 0.1 * ((i as f64) * 0.37 + j as f64).sin()
}

/// Two classes separated along the sum of the inputs, with a header.
fn classes_csv(n: usize, d: usize) -> String {
    named_classes_csv(n, d, ["no", "yes"])
}

/// As [`classes_csv`], with the given names of the two classes.
fn named_classes_csv(n: usize, d: usize, names: [&str; 2]) -> String {
    let mut s = (1..=d)
        .map(|j| format!("x{j}"))
        .collect::<Vec<_>>()
        .join(",");
    s += ",label\n";
    for i in 0..n {
        let x: Vec<f64> = (0..d).map(|j| value(i, j)).collect();
        let label = names[usize::from(x.iter().sum::<f64>() > d as f64 * 0.5)];
        let row: Vec<String> = x.iter().map(|v| format!("{v:.6}")).collect();
        s += &format!("{},{label}\n", row.join(","));
    }
    s
}

/// A smooth function of the inputs.
fn regression_csv(rows: std::ops::Range<usize>, d: usize) -> String {
    let mut s = (1..=d)
        .map(|j| format!("x{j}"))
        .collect::<Vec<_>>()
        .join(",");
    s += ",y\n";
    for i in rows {
        let x: Vec<f64> = (0..d).map(|j| value(i, j)).collect();
        let y = (3.0 * x[0]).sin() + x[1] * x[1] - 0.5 * x[d - 1];
        let row: Vec<String> = x.iter().map(|v| format!("{v:.6}")).collect();
        s += &format!("{},{y:.6}\n", row.join(","));
    }
    s
}

fn run(root: &Path, config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_repro"))
        .arg("--root")
        .arg(root)
        .arg("run")
        .arg(config)
        .args(["--profile", "quick", "--no-plot"])
        .output()
        .unwrap()
}

fn sha256(path: &Path) -> String {
    format!("{:x}", sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

/// Runs a template on the files written by `write`, then checks digests, keys and caching.
fn runs_on_own_files(paper: &str, files: &[(&str, String)], edited: &str) {
    let project = common::temp_root();
    let study = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(study.path().join(name), text).unwrap();
    }
    let config = study.path().join(format!("{paper}.toml"));
    std::fs::write(&config, template(paper)).unwrap();

    let first = run(project.path(), &config);
    let table = common::table_written(project.path(), &first);
    let rows =
        experiments::table::from_frame(&experiments::table::read_parquet(&table).unwrap()).unwrap();
    assert!(!rows.is_empty(), "{paper}: no rows");
    let experiment = table.parent().unwrap().file_name().unwrap().to_owned();
    let manifest = project
        .path()
        .join("results/_runs")
        .join(&experiment)
        .join("quick.manifest.json");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    let recorded = manifest["datasets"].to_string();
    for (name, _) in files {
        let digest = sha256(&study.path().join(name));
        assert!(
            recorded.contains(&digest),
            "{paper}: the manifest does not record {name}'s sha256 {digest}: {recorded}"
        );
    }
    let text = common::text(&first);
    assert!(text.contains("(0 cached,"), "{paper}: {text}");

    // The same files again: every cell from the cache.
    let again = common::text(&run(project.path(), &config));
    assert!(again.contains(", 0 computed,"), "{paper}: {again}");

    // One value edited: new digests, new keys, every cell computed again.
    let path = study.path().join(edited);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let last = lines.len() - 1;
    lines[last] = lines[last].replacen('0', "1", 1);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let edited_run = run(project.path(), &config);
    let out = common::text(&edited_run);
    assert!(edited_run.status.success(), "{paper}: {out}");
    assert!(out.contains("(0 cached,"), "{paper}: {out}");
}

#[test]
fn a_csv_of_ones_own_runs_through_the_rtf_template() {
    runs_on_own_files(
        "rtf",
        &[("my_classes.csv", classes_csv(60, 4))],
        "my_classes.csv",
    );
}

#[test]
fn a_csv_of_ones_own_runs_through_the_a_la_carte_template() {
    runs_on_own_files(
        "alacarte",
        &[("my_regression.csv", regression_csv(0..80, 3))],
        "my_regression.csv",
    );
}

#[test]
fn a_csv_of_ones_own_runs_through_the_isolation_kernel_template() {
    runs_on_own_files(
        "isolation_kernel",
        &[("my_classes.csv", named_classes_csv(120, 4, ["-1", "+1"]))],
        "my_classes.csv",
    );
}

#[test]
fn train_and_test_files_of_ones_own_run_through_the_mondrian_template() {
    runs_on_own_files(
        "mondrian",
        &[
            ("my_train.csv", regression_csv(0..150, 3)),
            ("my_test.csv", regression_csv(150..200, 3)),
        ],
        "my_test.csv",
    );
}

#[test]
fn train_and_test_files_of_ones_own_run_through_the_streamrak_template() {
    runs_on_own_files(
        "streamrak",
        &[
            ("my_train.csv", regression_csv(0..3000, 2)),
            ("my_test.csv", regression_csv(3000..3300, 2)),
        ],
        "my_test.csv",
    );
}

#[test]
fn a_bad_own_data_table_is_a_clear_error_that_runs_nothing() {
    let project = common::temp_root();
    let study = tempfile::tempdir().unwrap();
    let config = study.path().join("rtf.toml");
    let base = template("rtf");
    for (change, expected) in [
        // The file is not there: the error names it.
        (("my_classes.csv", "nope.csv"), "nope.csv"),
        // Neither a path nor train/test.
        (("path = \"my_classes.csv\"", "# no path"), "name the file"),
        // One file and no split.
        (
            ("split = { kind = \"random\", test_fraction = 0.3333333333333333, stratify = true }", ""),
            "say how to split it",
        ),
        // A format the name does not tell.
        (("my_classes.csv", "my_classes.dat"), "format"),
    ] {
        std::fs::write(study.path().join("my_classes.csv"), classes_csv(30, 2)).unwrap();
        std::fs::write(study.path().join("my_classes.dat"), classes_csv(30, 2)).unwrap();
        std::fs::write(&config, base.replace(change.0, change.1)).unwrap();
        let o = run(project.path(), &config);
        let text = common::text(&o);
        assert!(!o.status.success(), "{change:?}: {text}");
        assert!(text.contains(expected), "{change:?}: {text}");
        assert!(!text.contains("panicked"), "{text}");
        assert!(
            !project.path().join("results").join("my_rtf_study").exists(),
            "{change:?}: a table was written"
        );
    }
}
