//! Ridge regression on random features vs the number of features, and exact kernel ridge
//! (The Mondrian Kernel, Fig. 6; spec §6.2, §4.1).
//!
//! One cell = one method, one repetition: a single draw of the map of the largest order on all
//! points (training and test: transductive Mondrian boxes and binning grids, as the authors'
//! code), then ridge `w = (ZᵀZ + δI)⁻¹Zᵀ(y − ȳ)` for every nested prefix with `Z = A/√R`,
//! solved as `(AᵀA + RδI) v = Aᵀ(y − ȳ)` on the unscaled features (the same predictions). Columns
//! that no training row uses get weight exactly 0. `exact_laplace` is kernel ridge with the exact
//! Laplace kernel (a Cholesky solve of the N × N system), the black line of the figure.

use anyhow::Result;
use kernel_core::kernel::laplace_gram;
use kernel_core::metrics::relative_error_percent;
use kernel_core::one_hot::OneHotFeatures;
use kernel_core::ridge::{kernel_ridge, nested_ridge};
use mondrian::MondrianForest;
use ndarray::{s, Array1, Array2};
use random_features::{RandomBinning, RandomFourierFeatures};
use serde::{Deserialize, Serialize};

use super::{ColumnDoc, ExperimentKind, Params, Shared, TransductiveSplit};
use crate::cell::Cell;
use crate::config::DataSpec;
use crate::data::LoadedData;
use crate::table::{row, Row, Value};

pub struct FeatureRidge;

/// The regressor.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RidgeMethod {
    /// Mondrian kernel features, M = 1..=max_nonzeros trees.
    Mondrian,
    /// Random binning features, M = 1..=max_nonzeros grids.
    RandomBinning,
    /// Random Fourier features, R = 1..=max_nonzeros/2 frequencies.
    RandomFourier,
    /// Exact Laplace kernel ridge regression (deterministic: one repetition).
    ExactLaplace,
}

/// `[params]` of a feature-ridge config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeatureRidgeParams {
    pub method: RidgeMethod,
    /// λ of the Laplace kernel (the Mondrian lifetime).
    pub lifetime: f64,
    /// Ridge penalty δ on the scaled features (and on the kernel matrix).
    pub delta: f64,
    /// Largest number of non-zero features per point (orders as in kernel_approximation).
    pub max_nonzeros: usize,
}

impl Params for FeatureRidgeParams {
    fn check(&self) -> Result<(), String> {
        super::positive("lifetime", self.lifetime)?;
        super::positive("delta", self.delta)?;
        let min = if self.method == RidgeMethod::RandomFourier {
            2
        } else {
            1
        };
        if !(min..=5000).contains(&self.max_nonzeros) {
            return Err(format!(
                "max_nonzeros = {}: need {min} to 5000 for {:?}",
                self.max_nonzeros, self.method
            ));
        }
        Ok(())
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "order",
        doc: "R: trees, grids or frequencies in the prefix (null for exact_laplace)",
    },
    ColumnDoc {
        name: "nonzeros",
        doc: "non-zero features per point: R, or 2R for Fourier features",
    },
    ColumnDoc {
        name: "m_axis",
        doc: "position on the paper's x axis: R, or 2R - 1 for Fourier features",
    },
    ColumnDoc {
        name: "test_error",
        doc: "relative test error 100 * ||y_hat - y|| / ||y|| in percent, raw targets",
    },
    ColumnDoc {
        name: "train_error",
        doc: "relative training error in percent",
    },
    ColumnDoc {
        name: "active_columns",
        doc: "feature columns used by training rows in this prefix (the size of the ridge system)",
    },
];

impl ExperimentKind for FeatureRidge {
    fn name(&self) -> &'static str {
        "feature_ridge"
    }

    fn summary(&self) -> &'static str {
        "ridge on nested prefixes of Mondrian / binning / Fourier features, and exact Laplace KRR (Mondrian kernel Fig. 6)"
    }

    fn code_version(&self) -> u32 {
        1
    }

    fn columns(&self) -> &'static [ColumnDoc] {
        COLUMNS
    }

    fn check_data(&self, data: &DataSpec) -> Result<(), String> {
        super::require_dataset(self.name(), data)
    }

    fn canonical_params(&self, point: toml::Table) -> Result<serde_json::Value, String> {
        super::canonical::<FeatureRidgeParams>(point)
    }

    fn deterministic(&self, params: &serde_json::Value) -> bool {
        params.get("method").and_then(|m| m.as_str()) == Some("exact_laplace")
    }

    fn prepare(&self, data: &LoadedData) -> Result<Shared> {
        TransductiveSplit::prepare(data)
    }

    fn run_cell(&self, shared: &Shared, cell: &Cell) -> Result<Vec<Row>> {
        let d: &TransductiveSplit = super::shared(shared)?;
        let p: FeatureRidgeParams = super::typed(cell)?;
        match p.method {
            RidgeMethod::ExactLaplace => exact(d, &p),
            RidgeMethod::Mondrian => {
                let forest = MondrianForest::sample(
                    d.x_all.view(),
                    p.lifetime,
                    p.max_nonzeros,
                    &mut cell.seeds.rng("trees"),
                )?;
                one_hot(d, &p, &forest.features())
            }
            RidgeMethod::RandomBinning => {
                let mut map = RandomBinning::sample(
                    d.x_all.ncols(),
                    p.max_nonzeros,
                    p.lifetime,
                    &mut cell.seeds.rng("features"),
                )?;
                one_hot(d, &p, &map.fit_transform(d.x_all.view())?)
            }
            RidgeMethod::RandomFourier => fourier(d, &p, cell),
        }
    }
}

fn errors(d: &TransductiveSplit, train: &Array1<f64>, test: &Array1<f64>) -> Result<(f64, f64)> {
    Ok((
        relative_error_percent(train.view(), d.y_train.view())?,
        relative_error_percent(test.view(), d.y_test.view())?,
    ))
}

fn prefix_row(order: usize, fourier: bool, train: f64, test: f64, active: usize) -> Row {
    row([
        ("order", order.into()),
        ("nonzeros", (if fourier { 2 * order } else { order }).into()),
        (
            "m_axis",
            (if fourier { 2 * order - 1 } else { order }).into(),
        ),
        ("test_error", Value::from(test)),
        ("train_error", Value::from(train)),
        ("active_columns", active.into()),
    ])
}

fn exact(d: &TransductiveSplit, p: &FeatureRidgeParams) -> Result<Vec<Row>> {
    let gram = laplace_gram(d.x_train.view(), d.x_train.view(), p.lifetime)?;
    let cross = laplace_gram(d.x_test.view(), d.x_train.view(), p.lifetime)?;
    let fit = kernel_ridge(gram, d.y_train.view(), p.delta, &[cross.view()])?;
    let train = fit.training_predictions(d.y_train.view(), p.delta);
    let (train_error, test_error) = errors(d, &train, &fit.predictions[0])?;
    Ok(vec![row([
        ("test_error", Value::from(test_error)),
        ("train_error", Value::from(train_error)),
        ("active_columns", d.n_train.into()),
    ])])
}

fn one_hot(
    d: &TransductiveSplit,
    p: &FeatureRidgeParams,
    features: &OneHotFeatures,
) -> Result<Vec<Row>> {
    let n_all = d.x_all.nrows();
    let train_rows = 0..d.n_train;
    let compact = features.compact_columns(train_rows.clone())?;
    let mean = d.y_train.mean().unwrap_or(0.0);
    let centred = d.y_train.mapv(|v| v - mean);
    let gram = features.gram(train_rows.clone(), &compact);
    let rhs = features.transpose_times(train_rows.clone(), centred.view(), &compact);
    let penalties: Vec<f64> = (1..=features.n_blocks())
        .map(|r| r as f64 * p.delta)
        .collect();
    let solutions = nested_ridge(gram.view(), rhs.view(), &compact.block_ends, &penalties)?;
    solutions
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let order = k + 1;
            let train = features.times_prefix(train_rows.clone(), v.view(), &compact, order) + mean;
            let test = features.times_prefix(d.test_start..n_all, v.view(), &compact, order) + mean;
            let (train_error, test_error) = errors(d, &train, &test)?;
            Ok(prefix_row(order, false, train_error, test_error, v.len()))
        })
        .collect()
}

fn fourier(d: &TransductiveSplit, p: &FeatureRidgeParams, cell: &Cell) -> Result<Vec<Row>> {
    let r_max = p.max_nonzeros / 2;
    let map = RandomFourierFeatures::sample(
        d.x_all.ncols(),
        r_max,
        p.lifetime,
        &mut cell.seeds.rng("features"),
    )?;
    // Columns interleaved [cos_1, sin_1, cos_2, sin_2, ...] so prefix R is the first 2R.
    let z = map.transform(d.x_all.view())?;
    let mut f = Array2::zeros(z.dim());
    for r in 0..r_max {
        f.column_mut(2 * r).assign(&z.column(r));
        f.column_mut(2 * r + 1).assign(&z.column(r_max + r));
    }
    let train = f.slice(s![..d.n_train, ..]);
    let test = f.slice(s![d.test_start.., ..]);
    let mean = d.y_train.mean().unwrap_or(0.0);
    let centred = d.y_train.mapv(|v| v - mean);
    let gram = train.t().dot(&train);
    let rhs = train.t().dot(&centred);
    let ends: Vec<usize> = (1..=r_max).map(|r| 2 * r).collect();
    let penalties: Vec<f64> = (1..=r_max).map(|r| r as f64 * p.delta).collect();
    let solutions = nested_ridge(gram.view(), rhs.view(), &ends, &penalties)?;
    solutions
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let order = k + 1;
            let e = 2 * order;
            let train_pred = train.slice(s![.., ..e]).dot(v) + mean;
            let test_pred = test.slice(s![.., ..e]).dot(v) + mean;
            let (train_error, test_error) = errors(d, &train_pred, &test_pred)?;
            Ok(prefix_row(order, true, train_error, test_error, e))
        })
        .collect()
}
