//! A method's numbers depend only on the data, the seed, the repetition and the parameters it
//! reads: changing a parameter that only some methods read leaves every other method's rows
//! bit-identical (so paired comparisons, sign tests and differences, mean something). One test
//! per kind audited so far.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use experiments::table::Row;

/// The shared datasets (tests on real data skip when they are absent).
static DATA: std::sync::LazyLock<std::path::PathBuf> =
    std::sync::LazyLock::new(|| common::project_dir().join("../shared/datasets"));

/// The rows of a run of `config` (written into `root`) with `--set` overrides, keyed by method
/// and repetition, timing and run-naming columns dropped.
fn rows_by_method(root: &Path, config: &str, set: &[&str]) -> BTreeMap<(String, String), Vec<Row>> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_repro"));
    cmd.env("REPRO_DATA_DIR", &*DATA);
    cmd.arg("--root")
        .arg(root)
        .args(["run", config, "--no-plot"]);
    for s in set {
        cmd.args(["--set", s]);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let table = out
        .lines()
        .find_map(|l| l.strip_prefix("results").map(|p| p.trim().to_string()))
        .unwrap();
    let frame = experiments::table::read_parquet(&root.join(table)).unwrap();
    let mut by: BTreeMap<(String, String), Vec<Row>> = BTreeMap::new();
    for mut r in experiments::table::from_frame(&frame).unwrap() {
        r.retain(|k, _| !experiments::commands::is_timing_or_key(k));
        let key = (r["method"].to_string(), r["rep"].to_string());
        by.entry(key).or_default().push(r);
    }
    by
}

/// Runs `config` as is and with `set`, and asserts that every method outside `readers` gives
/// the same rows bit for bit (and that some reader's rows did change, so the test can fail).
fn assert_only_readers_move(text: &str, set: &str, readers: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("configs")).unwrap();
    std::fs::write(root.join("configs/t.toml"), text).unwrap();
    std::fs::write(root.join("Cargo.toml"), "[workspace]\n").unwrap();
    // The changed parameter's own column differs by construction.
    let column = set.trim_start_matches("params.").split('=').next().unwrap();
    let strip = |mut by: BTreeMap<(String, String), Vec<Row>>| {
        by.values_mut()
            .flatten()
            .for_each(|r| drop(r.remove(column)));
        by
    };
    let before = strip(rows_by_method(root, "configs/t.toml", &[]));
    let after = strip(rows_by_method(root, "configs/t.toml", &[set]));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    let mut moved = false;
    for (key, rows) in &before {
        if readers.contains(&key.0.as_str()) {
            moved |= &after[key] != rows;
        } else {
            assert_eq!(
                &after[key], rows,
                "{set} moved {key:?}, which does not read it"
            );
        }
    }
    assert!(
        moved,
        "{set} changed none of {readers:?}: not a test of anything"
    );
}

const RTF: &str = r#"
seed = 11
repeats = 2

[experiment]
name = "independence_rtf"
kind = "tessellation_classification"
paper = "test"
figure = "test"
description = "all ten methods, small"

[data]
source = "oblique_boundary"
n = 90
dim = 3
label_noise = 0.05

[params]
method = ["bl", "lr", "svm", "rf", "mrtf_i", "urtf_i", "mrtf", "urtf", "wmrtf", "wurtf"]
trees = 3
particles = 3
rf_trees = 15
"#;

/// The Random Tessellation Forests study: `rf_mtry` is read by RF alone (it moved uRTF.i, MRTF.i
/// and wMRTF before), `particles` by the four SMC forests alone.
#[test]
fn tessellation_classification_methods_move_only_with_their_own_parameters() {
    assert_only_readers_move(RTF, "params.rf_mtry=3", &["rf"]);
    assert_only_readers_move(
        RTF,
        "params.particles=5",
        &["mrtf", "urtf", "wmrtf", "wurtf"],
    );
}

const STREAMRAK: &str = r#"
seed = 5
repeats = 1

[experiment]
name = "independence_streamrak"
kind = "multiresolution_regression"
paper = "test"
figure = "test"
description = "the three methods on a short VarSinus stream"

[data]
source = "varying_sinus"
train_gamma = 3000
train_uniform = 1000
test_gamma = 400
test_uniform = 100

[params]
method = ["streamrak", "lp_krr", "falkon"]
r0 = 1.0
max_level = 5
delta0 = 10.0
k_threshold = 5e-3
z_threshold = 5e-3
interval = 500
lower_limit = 1000
upper_limit = 3000
points_per_level = 1500
falkon_bandwidth = 0.01
falkon_landmarks = 60
"#;

/// StreaMRAK, LP-KRR and FALKON: `falkon_landmarks` is FALKON's alone, `lp_landmark_factor`
/// LP-KRR's alone.
#[test]
fn multiresolution_regression_methods_move_only_with_their_own_parameters() {
    assert_only_readers_move(STREAMRAK, "params.falkon_landmarks=90", &["falkon"]);
    assert_only_readers_move(STREAMRAK, "params.lp_landmark_factor=2.0", &["lp_krr"]);
}

const ISOLATION: &str = r#"
seed = 3
repeats = 2

[experiment]
name = "independence_ik"
kind = "batch_classification"
paper = "test"
figure = "test"
description = "the four learners of Table 5, small"

[data]
source = "dataset"
name = "classification/sonar"
positive_classes = ["M"]
split = { kind = "random", test_fraction = 0.3 }

[params]
method = ["ogd", "ik_i", "ik_a", "nogd"]
psi = 8
t = 20
budget = 5
rank = 3
"#;

/// The Isolation Kernel learners: NOGD's budget is NOGD's alone; t is read by the IK learners
/// only.
#[test]
fn batch_classification_methods_move_only_with_their_own_parameters() {
    if !DATA.join("SHA256SUMS").is_file() {
        eprintln!("skipped: the shared datasets are absent");
        return;
    }
    assert_only_readers_move(ISOLATION, "params.budget=80", &["nogd"]);
    assert_only_readers_move(ISOLATION, "params.t=30", &["ik_i", "ik_a"]);
}

const ONLINE: &str = r#"
seed = 4
repeats = 1

[experiment]
name = "independence_online"
kind = "online_stream"
paper = "test"
figure = "test"
description = "the four learners of Fig. 3 on a short stream"

[data]
source = "dataset"
name = "classification/sonar"
positive_classes = ["M"]
split = { kind = "random", test_fraction = 0.3 }

[params]
method = ["ogd", "ik_i", "ik_a", "nogd"]
psi = 8
t = 20
budget = 5
rank = 3
initial_block = 60
block_size = 30
checkpoints = 3
"#;

/// The Isolation Kernel online stream (Fig. 3): the same learners, the same rule.
#[test]
fn online_stream_methods_move_only_with_their_own_parameters() {
    if !DATA.join("SHA256SUMS").is_file() {
        eprintln!("skipped: the shared datasets are absent");
        return;
    }
    assert_only_readers_move(ONLINE, "params.budget=40", &["nogd"]);
    assert_only_readers_move(ONLINE, "params.t=30", &["ik_i", "ik_a"]);
}
