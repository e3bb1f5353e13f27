//! A method's numbers depend only on the data, the seed, the repetition and the parameters it
//! reads: changing a parameter that only some methods read leaves every other method's rows
//! bit-identical (so paired comparisons, sign tests and differences, mean something). One test
//! per kind. A kind whose methods all read the same parameters (or that has one method) is
//! tested on what it has: a method's rows do not depend on which other methods (or grid points)
//! run beside it, or on a parameter that does not decide its draws.

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use experiments::table::Row;

/// The shared datasets (tests on real data skip when they are absent).
static DATA: std::sync::LazyLock<std::path::PathBuf> =
    std::sync::LazyLock::new(|| common::project_dir().join("../shared/datasets"));

/// The rows of a run of the config `text` (in a root of its own, so no cell is read from an
/// earlier run's cache) with `--set` overrides, keyed by the value of `key` (the method, or the
/// swept parameter of a single-method kind) and the repetition. Timing and run-naming columns
/// are dropped, and so are the `overridden` parameters' columns (they differ by construction).
fn rows_by(
    text: &str,
    set: &[&str],
    key: &str,
    overridden: &[&str],
) -> BTreeMap<(String, String), Vec<Row>> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("configs")).unwrap();
    std::fs::write(root.join("configs/t.toml"), text).unwrap();
    std::fs::write(root.join("Cargo.toml"), "[workspace]\n").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_repro"));
    cmd.env("REPRO_DATA_DIR", &*DATA);
    cmd.arg("--root")
        .arg(root)
        .args(["run", "configs/t.toml", "--no-plot"]);
    for s in set {
        cmd.args(["--set", s]);
    }
    let table = common::table_written(root, &cmd.output().unwrap());
    let frame = experiments::table::read_parquet(&table).unwrap();
    let mut by: BTreeMap<(String, String), Vec<Row>> = BTreeMap::new();
    for mut r in experiments::table::from_frame(&frame).unwrap() {
        r.retain(|k, _| {
            k == key
                || !(experiments::commands::is_timing_or_key(k) || overridden.contains(&k.as_str()))
        });
        let group = (r[key].to_string(), r["rep"].to_string());
        by.entry(group).or_default().push(r);
    }
    by
}

/// The parameter columns that `--set` assignments override: `params.evaluations.random_fourier=7`
/// overrides the column `evaluations`.
fn overridden<'a>(set: &[&'a str]) -> Vec<&'a str> {
    set.iter()
        .filter_map(|s| s.strip_prefix("params."))
        .filter_map(|s| s.split(['=', '.']).next())
        .collect()
}

/// Runs `config` as is and with `set`, and asserts that every method outside `readers` gives
/// the same rows bit for bit (and that some reader's rows did change, so the test can fail).
fn assert_only_readers_move(text: &str, set: &str, readers: &[&str]) {
    assert_only_readers_move_by(text, set, "method", readers);
}

/// [`assert_only_readers_move`] with the rows grouped by `key` (e.g. a sweep's `model`).
fn assert_only_readers_move_by(text: &str, set: &str, key: &str, readers: &[&str]) {
    let columns = overridden(&[set]);
    let before = rows_by(text, &[], key, &columns);
    let after = rows_by(text, &[set], key, &columns);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    compare(&before, &after, set, readers);
}

/// Runs `before` as is and `after` with `set` (another text: a `[[case]]` changed, or a grid
/// shrunk by `set`), groups the rows by `key`, and asserts that every group of the second run
/// that no reader owns is the first run's, bit for bit; with readers named, that some reader's
/// rows moved.
fn assert_only_readers_move_between(
    before: &str,
    after: &str,
    set: &[&str],
    key: &str,
    readers: &[&str],
) {
    let columns = overridden(set);
    let first = rows_by(before, &[], key, &columns);
    let second = rows_by(after, set, key, &columns);
    compare(&first, &second, &format!("{set:?}"), readers);
}

/// The comparison of [`assert_only_readers_move`]: the groups of `after` are groups of `before`;
/// those no reader owns are equal; with readers named, some reader's group differs.
fn compare(
    before: &BTreeMap<(String, String), Vec<Row>>,
    after: &BTreeMap<(String, String), Vec<Row>>,
    change: &str,
    readers: &[&str],
) {
    let mut moved = false;
    let mut compared = 0;
    for (key, rows) in after {
        let Some(old) = before.get(key) else {
            panic!("{change}: {key:?} is not a group of the first run");
        };
        if readers.contains(&key.0.as_str()) {
            moved |= old != rows;
        } else {
            assert_eq!(rows, old, "{change} moved {key:?}, which does not read it");
            compared += 1;
        }
    }
    assert!(
        compared > 0,
        "{change}: no group outside {readers:?} to compare"
    );
    assert!(
        readers.is_empty() || moved,
        "{change} changed none of {readers:?}: not a test of anything"
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

/// With ψ fixed no learner reads the cross-validation keys: they move nobody.
#[test]
fn batch_classification_cross_validation_keys_move_nobody_when_psi_is_fixed() {
    if !DATA.join("SHA256SUMS").is_file() {
        eprintln!("skipped: the shared datasets are absent");
        return;
    }
    assert_only_readers_move(ISOLATION, "params.cv_psi_max=64", &[]);
}

const ONLINE: &str = r#"
seed = 4
repeats = 2

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
block_size = 20
checkpoints = 3
"#;

/// The online protocol's learners (the streams of `batch_classification`'s): NOGD's rank is
/// NOGD's alone, t the IK learners', and the cross-validation keys nobody's while ψ is fixed.
#[test]
fn online_stream_methods_move_only_with_their_own_parameters() {
    if !DATA.join("SHA256SUMS").is_file() {
        eprintln!("skipped: the shared datasets are absent");
        return;
    }
    assert_only_readers_move(ONLINE, "params.budget=40", &["nogd"]);
    assert_only_readers_move(ONLINE, "params.t=30", &["ik_i", "ik_a"]);
    assert_only_readers_move(ONLINE, "params.cv_folds=3", &[]);
}

/// A Gaussian-process regression sample, small (`[data]` of the regression kinds' tests).
const GP: &str = r#"
[data]
source = "laplace_gp"
n_train = 60
n_validation = 30
n_test = 30
dim = 2
lifetime = 5.0
noise_sd = 0.1
"#;

fn with_gp(head: &str, params: &str) -> String {
    format!("{head}\n{GP}\n{params}")
}

const RIDGE_HEAD: &str = r#"
seed = 13
repeats = 2

[experiment]
name = "independence_ridge"
kind = "feature_ridge"
paper = "test"
figure = "test"
description = "three feature maps and exact KRR, small"
"#;

const RIDGE_PARAMS: &str = r#"
[params]
method = ["mondrian", "random_binning", "random_fourier", "exact_laplace"]
lifetime = 5.0
delta = 0.01
max_nonzeros = 10
"#;

/// Ridge on random features: `max_nonzeros` is the feature maps' alone (exact kernel ridge
/// reads the lifetime and δ only).
#[test]
fn feature_ridge_methods_move_only_with_their_own_parameters() {
    let text = with_gp(RIDGE_HEAD, RIDGE_PARAMS);
    assert_only_readers_move(
        &text,
        "params.max_nonzeros=14",
        &["mondrian", "random_binning", "random_fourier"],
    );
}

const APPROXIMATION: &str = r#"
seed = 17
repeats = 2

[experiment]
name = "independence_approximation"
kind = "kernel_approximation"
paper = "test"
figure = "test"
description = "three feature maps, small"

[data]
source = "uniform_box"
n = 40
dim = 2
low = 0.0
high = 1.0

[params]
method = ["random_fourier", "random_binning", "mondrian"]
lifetime = 10.0
max_nonzeros = 8
"#;

/// Kernel approximation: every method reads every parameter (the lifetime and the order), so
/// what can be tested is that a method's rows do not depend on the methods beside it.
#[test]
fn kernel_approximation_methods_do_not_depend_on_the_methods_beside_them() {
    assert_only_readers_move_between(
        APPROXIMATION,
        APPROXIMATION,
        &["params.method=mondrian"],
        "method",
        &[],
    );
}

const WIDTH_HEAD: &str = r#"
seed = 19
repeats = 1

[experiment]
name = "independence_width"
kind = "width_selection"
paper = "test"
figure = "test"
description = "the Mondrian sweep and the two width searches, small"
"#;

const WIDTH_PARAMS: &str = r#"
[params]
method = ["mondrian", "random_fourier", "random_binning"]
n_features = 8
delta = 1e-3
learner = "ridge"
evaluations = { random_fourier = 4, random_binning = 3 }
search_threshold = 0.0
terminal_lifetime = 8.0
checkpoints = { first = 0.5, count = 4 }
"#;

/// Kernel-width selection: the search's evaluations are each random-feature method's own, the
/// terminal lifetime and the checkpoints the Mondrian sweep's.
#[test]
fn width_selection_methods_move_only_with_their_own_parameters() {
    let text = with_gp(WIDTH_HEAD, WIDTH_PARAMS);
    assert_only_readers_move(
        &text,
        "params.evaluations.random_fourier=6",
        &["random_fourier"],
    );
    assert_only_readers_move(&text, "params.terminal_lifetime=16.0", &["mondrian"]);
}

const SWEEP_HEAD: &str = r#"
seed = 23
repeats = 2

[experiment]
name = "independence_sweep"
kind = "lifetime_sweep"
paper = "test"
figure = "test"
description = "kernel, forest and exact models of one sweep, small"
"#;

const SWEEP_PARAMS: &str = r#"
[params]
n_mondrians = 5
terminal_lifetime = 6.0
delta = 0.01
checkpoints = { first = 0.2, count = 6 }
exact_kernel = { lifetimes = [2.0] }
weights_at = 2.0
"#;

/// The lifetime sweep (one cell fits every model on the same trees): the learner is the kernel
/// model's alone; the forest, the exact kernel and the targets keep their rows.
#[test]
fn lifetime_sweep_models_move_only_with_their_own_parameters() {
    let text = with_gp(SWEEP_HEAD, SWEEP_PARAMS);
    assert_only_readers_move_by(&text, "params.learner=sgd", "model", &["kernel"]);
}

const AGREEMENT: &str = r#"
seed = 29
repeats = 2

[experiment]
name = "independence_agreement"
kind = "laplacian_agreement"
paper = "test"
figure = "test"
description = "IK_i vs L_psi, small"

[data]
source = "uniform_box"
n = 300
dim = 3
low = -1.0
high = 1.0

[params]
dim = 2
psi = [4, 8]
t = 40
pairs = 50
height_limit = false
"#;

/// The Laplacian agreement has one method, and every parameter decides its draws: a grid
/// point's rows do not depend on the other points of the grid.
#[test]
fn laplacian_agreement_points_do_not_depend_on_the_points_beside_them() {
    assert_only_readers_move_between(AGREEMENT, AGREEMENT, &["params.psi=4"], "psi", &[]);
}

const FASTFOOD_HEAD: &str = r#"
seed = 31
repeats = 2

[experiment]
name = "independence_fastfood"
kind = "fastfood_regression"
paper = "test"
figure = "test"
description = "every method of the RMSE table, tiny"
"#;

const FASTFOOD_PARAMS: &str = r#"
[params]
method = ["rbf", "ard", "fsard", "fsgbard", "gm", "pwl", "ssgpr", "exact_ard"]
m = 8
components = 2
intervals = 4
max_iterations = 4
restarts = 2
"#;

/// The RMSE table: m is the feature models' (the exact GP draws its restarts' starts without
/// it), Q is GM's alone and the knot intervals PWL's.
#[test]
fn fastfood_regression_methods_move_only_with_their_own_parameters() {
    let text = with_gp(FASTFOOD_HEAD, FASTFOOD_PARAMS);
    assert_only_readers_move(
        &text,
        "params.m=12",
        &["rbf", "ard", "fsard", "fsgbard", "gm", "pwl", "ssgpr"],
    );
    assert_only_readers_move(&text, "params.components=3", &["gm"]);
    assert_only_readers_move(&text, "params.intervals=6", &["pwl"]);
}

const SPECTRUM: &str = r#"
seed = 37
repeats = 2

[experiment]
name = "independence_spectrum"
kind = "spectrum_recovery"
paper = "test"
figure = "test"
description = "the learned spectra and the oracle, tiny"

[data]
source = "uniform_box"
n = 2
dim = 1

[params]
truth = "spectral_mixture"
dim = 2
method = ["ard", "gm", "pwl", "oracle"]
n_train = 60
n_test = 20
m = 8
components = 2
intervals = 4
max_iterations = 4
"#;

/// Spectrum recovery: Q is GM's alone, the knot intervals PWL's, m the learned methods' (the
/// oracle reads none of them); the data draw is every method's.
#[test]
fn spectrum_recovery_methods_move_only_with_their_own_parameters() {
    assert_only_readers_move(SPECTRUM, "params.components=3", &["gm"]);
    assert_only_readers_move(SPECTRUM, "params.intervals=6", &["pwl"]);
    assert_only_readers_move(SPECTRUM, "params.m=12", &["ard", "gm", "pwl"]);
}

const SCALING: &str = r#"
seed = 41
repeats = 1

[experiment]
name = "independence_scaling"
kind = "fastfood_scaling"
paper = "test"
figure = "test"
description = "Fastfood vs dense features, tiny"

[data]
source = "uniform_box"
n = 2
dim = 1

[params]
method = ["fastfood", "dense"]
m = 16
n = 32
dim = [4, 8]
repeats = 1
"#;

/// Speed and memory: both methods read every parameter; a method's rows do not depend on the
/// method beside it, and the timing repetitions (`repeats`) move no number but the times.
#[test]
fn fastfood_scaling_methods_do_not_depend_on_the_method_beside_them_or_on_the_timing() {
    assert_only_readers_move_between(SCALING, SCALING, &["params.method=dense"], "method", &[]);
    assert_only_readers_move(SCALING, "params.repeats=2", &[]);
}

const PRIOR: &str = r#"
seed = 43
repeats = 3

[experiment]
name = "independence_prior"
kind = "tessellation_prior"
paper = "test"
figure = "test"
description = "the four priors, small"

[data]
source = "uniform_box"
n = 2
dim = 2

[params]
prior = ["urtp", "wurtp", "mrtp", "wmrtp"]
width = 2.0
height = 1.0
budget = 3.0

[[case]]
when = { prior = "wurtp" }
params = { weight_1 = 0.8 }

[[case]]
when = { prior = "wmrtp" }
params = { weight_1 = 0.8 }
"#;

/// The RTP priors: ω₁ of one weighted prior (set by its `[[case]]`) moves that prior alone.
#[test]
fn tessellation_prior_draws_move_only_with_their_own_parameters() {
    let after = PRIOR.replacen("weight_1 = 0.8", "weight_1 = 0.6", 1);
    assert_ne!(after, PRIOR);
    assert_only_readers_move_between(PRIOR, &after, &[], "prior", &["wurtp"]);
}
