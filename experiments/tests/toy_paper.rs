//! "Adding a paper", worked and proved: a toy paper defined in this one file, with its
//! algorithm (a module), its own synthetic data, one experiment kind and one config, run by the
//! harness end to end. It edits no central file of the project: the kind and the generator
//! register themselves where they are defined (`experiments::register_kind!`,
//! `experiments::register_generator!`), and the config lives in a project root of its own.
//!
//! The toy paper: "the mean of a sample shrunk towards zero", `μ̂_λ = Σ x_i / (n + λ)` (the
//! ridge estimate of a constant with penalty λ). Its claims, checked below: `μ̂_0` is the sample
//! mean (1/2 for the toy paper's evenly spaced points on [0, 1]), and `μ̂_λ / μ̂_0 = n / (n + λ)`
//! exactly.

use serde::{Deserialize, Serialize};

use experiments::context::CellContext;
use experiments::data::synthetic::{Generated, Generator};
use experiments::data::DataView;
use experiments::kinds::{ColumnDoc, Kind, Params};
use experiments::table::{row, Row};

/// The toy paper's algorithm, free of harness code.
mod shrinkage {
    /// `Σ values / (n + λ)`; λ must be finite and >= 0, the sample not empty.
    pub fn shrunk_mean(values: &[f64], lambda: f64) -> Result<f64, String> {
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(format!("lambda = {lambda}: expected a finite number >= 0"));
        }
        if values.is_empty() {
            return Err("an empty sample has no mean".into());
        }
        Ok(values.iter().sum::<f64>() / (values.len() as f64 + lambda))
    }
}

/// The toy paper's data: `n` evenly spaced points `i / (n − 1)` on [0, 1] (one coordinate).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EvenlySpaced {
    n: usize,
}

experiments::register_generator!("toy_evenly_spaced", EvenlySpaced);

impl Generator for EvenlySpaced {
    fn task(&self) -> Option<datasets::Task> {
        None
    }

    fn validate(&self) -> Result<(), String> {
        if self.n < 2 {
            return Err(format!("data.n = {}: need at least 2 points", self.n));
        }
        Ok(())
    }

    fn generate(&self, _rng: &mut rand_chacha::ChaCha8Rng) -> anyhow::Result<Generated> {
        let step = 1.0 / (self.n - 1) as f64;
        Ok(Generated::Points(ndarray::Array2::from_shape_fn(
            (self.n, 1),
            |(i, _)| i as f64 * step,
        )))
    }
}

/// The toy paper's one experiment kind.
struct ToyShrinkage;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToyParams {
    lambda: f64,
}

impl Params for ToyParams {
    fn check(&self) -> Result<(), String> {
        // The range is the algorithm's: ask it, on a sample it accepts.
        shrinkage::shrunk_mean(&[1.0], self.lambda)
            .map(|_| ())
            .map_err(|e| format!("params.{e}"))
    }
}

impl Kind for ToyShrinkage {
    type Params = ToyParams;
    type Shared = Vec<f64>;
    const NAME: &'static str = "toy_shrinkage";
    const SUMMARY: &'static str = "toy paper: the shrunk mean of the first coordinate";
    const COLUMNS: &'static [ColumnDoc] = &[
        ColumnDoc {
            name: "estimate",
            doc: "the shrunk mean of the first coordinate",
        },
        ColumnDoc {
            name: "n",
            doc: "sample size",
        },
    ];
    const CODE_VERSION: u32 = 1;

    fn deterministic(_params: &ToyParams) -> bool {
        true
    }

    fn prepare(data: &DataView) -> anyhow::Result<Vec<f64>> {
        match data {
            DataView::Points(x) => Ok(x.column(0).to_vec()),
            _ => anyhow::bail!("toy_shrinkage needs points (e.g. data source = \"uniform_box\")"),
        }
    }

    fn run_cell(
        shared: &Vec<f64>,
        params: &ToyParams,
        _ctx: &CellContext,
    ) -> anyhow::Result<Vec<Row>> {
        let estimate = shrinkage::shrunk_mean(shared, params.lambda).map_err(anyhow::Error::msg)?;
        Ok(vec![row([
            ("estimate", estimate.into()),
            ("n", shared.len().into()),
        ])])
    }
}

experiments::register_kind!(ToyShrinkage);

const CONFIG: &str = r#"
seed = 7
repeats = 1

[experiment]
name = "toy_shrinkage"
kind = "toy_shrinkage"
paper = "A toy paper"
figure = "Claim 1"
description = "The shrunk mean against the penalty."

[data]
source = "toy_evenly_spaced"
n = 401

[params]
lambda = [0.0, 4.0, 400.0]

[[check]]
name = "the unshrunk estimate is the sample mean of the evenly spaced points (1/2)"
basis = "invariant"
metric = "estimate"
kind = "mean"
select = { lambda = 0.0 }
min = 0.45
max = 0.55

[profile.quick]
data = { n = 101 }
"#;

fn table(root: &std::path::Path, run: &str) -> Vec<Row> {
    let path = root.join(format!("results/toy_shrinkage/{run}.parquet"));
    let frame = experiments::table::read_parquet(&path).unwrap();
    experiments::table::from_frame(&frame).unwrap()
}

#[test]
fn a_toy_paper_runs_without_touching_a_central_file() {
    assert!(experiments::registry::find("toy_shrinkage").is_ok());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("configs/toy")).unwrap();
    std::fs::write(root.join("configs/toy/shrinkage.toml"), CONFIG).unwrap();
    std::fs::write(root.join("Cargo.toml"), "[workspace]\n").unwrap();
    let common = experiments::commands::Common::new(Some(root.to_path_buf())).unwrap();
    let config = std::path::PathBuf::from("configs/toy/shrinkage.toml");
    for profile in ["quick", "full"] {
        let ok = experiments::commands::run(
            &common,
            std::slice::from_ref(&config),
            profile,
            &[],
            None,
            &Default::default(),
            false,
        )
        .unwrap();
        assert!(ok, "the {profile} run or its check failed");
        let rows = table(root, profile);
        assert_eq!(
            rows.len(),
            3,
            "one row per λ (a deterministic kind runs once)"
        );
        let at = |lambda: f64| -> (f64, f64) {
            let r = rows
                .iter()
                .find(|r| r["lambda"].as_f64() == Some(lambda))
                .unwrap();
            (r["estimate"].as_f64().unwrap(), r["n"].as_f64().unwrap())
        };
        let (mean, n) = at(0.0);
        assert_eq!(n, if profile == "quick" { 101.0 } else { 401.0 });
        assert!((mean - 0.5).abs() <= 1e-12, "the sample mean {mean}");
        for lambda in [4.0, 400.0] {
            let (shrunk, _) = at(lambda);
            let expected = n / (n + lambda);
            assert!(
                ((shrunk / mean) - expected).abs() <= 1e-12,
                "λ = {lambda}: ratio {} vs n/(n+λ) = {expected}",
                shrunk / mean
            );
        }
    }
    // A parameter outside the algorithm's range is refused before anything runs, naming it.
    let err = experiments::commands::run(
        &common,
        std::slice::from_ref(&config),
        "quick",
        &["params.lambda=-1".to_string()],
        None,
        &Default::default(),
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("lambda = -1"), "{err}");
    // So are the generator's parameters, by the generator, and unknown keys, by name.
    for (set, expected) in [
        ("data.n=1", "data.n = 1: need at least 2 points"),
        ("data.m=3", "data.m"),
    ] {
        let err = experiments::commands::run(
            &common,
            std::slice::from_ref(&config),
            "quick",
            &[set.to_string()],
            None,
            &Default::default(),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(expected), "{set}: {err}");
    }
}

#[test]
fn the_toy_algorithm_matches_its_closed_form() {
    // Brute force: the minimiser of Σ (x_i − μ)² + λ μ² over a fine grid.
    let xs = [0.2, 0.9, 0.4, 0.7];
    for lambda in [0.0, 1.0, 10.0] {
        let loss = |mu: f64| xs.iter().map(|x| (x - mu).powi(2)).sum::<f64>() + lambda * mu * mu;
        let best = (0..=100_000)
            .map(|i| i as f64 / 100_000.0)
            .min_by(|a, b| loss(*a).total_cmp(&loss(*b)))
            .unwrap();
        let closed = shrinkage::shrunk_mean(&xs, lambda).unwrap();
        assert!(
            (best - closed).abs() <= 1e-5,
            "λ {lambda}: {best} vs {closed}"
        );
    }
    assert!(shrinkage::shrunk_mean(&xs, -1.0).is_err());
    assert!(shrinkage::shrunk_mean(&[], 1.0).is_err());
}
