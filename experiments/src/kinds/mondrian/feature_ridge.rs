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
use kernel_core::{DenseFeatures, Features, Lifetime};
use ndarray::{s, Array1};
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::common::params::{positive, read_by, require_regression};
use crate::kinds::mondrian::feature_maps::{self, MapMethod};
use crate::kinds::mondrian::transductive::TransductiveSplit;
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct FeatureRidge;

/// The method that is not a feature map: exact Laplace kernel ridge regression
/// (deterministic: one repetition while the split is fixed).
pub const EXACT_LAPLACE: &str = "exact_laplace";

/// `[params]` of a feature-ridge config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeatureRidgeParams {
    /// A feature map (`mondrian`, `random_binning`, `random_fourier`: see
    /// [`crate::kinds::mondrian::feature_maps`]) or `exact_laplace`.
    pub method: String,
    /// λ of the Laplace kernel (the Mondrian lifetime).
    pub lifetime: Lifetime,
    /// Ridge penalty δ on the scaled features (and on the kernel matrix).
    pub delta: f64,
    /// Largest number of non-zero features per point (orders as in kernel_approximation).
    pub max_nonzeros: usize,
}

impl Params for FeatureRidgeParams {
    fn check(&self) -> Result<(), String> {
        positive("delta", self.delta)?;
        if self.method != EXACT_LAPLACE {
            let method =
                feature_maps::find(&self.method).map_err(|e| format!("{e}, {EXACT_LAPLACE}"))?;
            method.blocks(self.max_nonzeros)?;
        }
        if self.max_nonzeros > 5000 {
            return Err(format!(
                "max_nonzeros = {}: at most 5000",
                self.max_nonzeros
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

crate::register_kind!(FeatureRidge);

impl Kind for FeatureRidge {
    type Params = FeatureRidgeParams;
    type Shared = TransductiveSplit;
    const NAME: &'static str = "feature_ridge";
    const SUMMARY: &'static str = "ridge on nested prefixes of Mondrian / binning / Fourier features, and exact Laplace KRR (Mondrian kernel Fig. 6)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    fn check_data(data: &DataSpec) -> Result<(), String> {
        require_regression(Self::NAME, data)
    }

    fn deterministic(p: &FeatureRidgeParams) -> bool {
        p.method == EXACT_LAPLACE
    }

    /// A feature map reads every parameter (δ after its draw); exact kernel ridge reads the
    /// lifetime and δ only, so `max_nonzeros` is not in its stream. (It draws nothing, so its
    /// numbers never moved with it: the stream now says what it reads.)
    fn stream(p: &FeatureRidgeParams) -> serde_json::Value {
        if p.method == EXACT_LAPLACE {
            read_by(p, &["method", "lifetime", "delta"])
        } else {
            serde_json::to_value(p).expect("parameters serialise")
        }
    }

    fn prepare(data: &DataView) -> Result<TransductiveSplit> {
        TransductiveSplit::prepare(data)
    }

    fn run_cell(
        d: &TransductiveSplit,
        p: &FeatureRidgeParams,
        ctx: &CellContext,
    ) -> Result<Vec<Row>> {
        if p.method == EXACT_LAPLACE {
            return exact(d, p);
        }
        let method = feature_maps::find(&p.method).map_err(anyhow::Error::msg)?;
        let blocks = method.blocks(p.max_nonzeros).map_err(anyhow::Error::msg)?;
        let features = method.sample(d.x_all.view(), p.lifetime.get(), blocks, ctx)?;
        match &features {
            Features::OneHot(f) => one_hot(d, p, method, f),
            Features::Dense(f) => dense(d, p, method, f),
        }
    }
}

fn errors(d: &TransductiveSplit, train: &Array1<f64>, test: &Array1<f64>) -> Result<(f64, f64)> {
    Ok((
        relative_error_percent(train.view(), d.y_train.view())?,
        relative_error_percent(test.view(), d.y_test.view())?,
    ))
}

fn prefix_row(method: &MapMethod, order: usize, train: f64, test: f64, active: usize) -> Row {
    row([
        ("order", order.into()),
        ("nonzeros", method.nonzeros(order).into()),
        ("m_axis", method.m_axis(order).into()),
        ("test_error", Value::from(test)),
        ("train_error", Value::from(train)),
        ("active_columns", active.into()),
    ])
}

fn exact(d: &TransductiveSplit, p: &FeatureRidgeParams) -> Result<Vec<Row>> {
    let gram = laplace_gram(d.x_train.view(), d.x_train.view(), p.lifetime.get())?;
    let cross = laplace_gram(d.x_test.view(), d.x_train.view(), p.lifetime.get())?;
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
    method: &MapMethod,
    features: &OneHotFeatures,
) -> Result<Vec<Row>> {
    let n_all = d.x_all.nrows();
    let train_rows = 0..d.n_train;
    let compact = features.compact_columns(train_rows.clone())?;
    let (mean, centred) = d.centred_targets();
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
            Ok(prefix_row(method, order, train_error, test_error, v.len()))
        })
        .collect()
}

/// Nested ridge on dense features whose blocks are the map's orders (a Fourier frequency's
/// cosine and sine columns side by side, so prefix R is the first block_ends[R - 1] columns).
fn dense(
    d: &TransductiveSplit,
    p: &FeatureRidgeParams,
    method: &MapMethod,
    features: &DenseFeatures,
) -> Result<Vec<Row>> {
    let f = features.values();
    let train = f.slice(s![..d.n_train, ..]);
    let test = f.slice(s![d.test_start.., ..]);
    let (mean, centred) = d.centred_targets();
    let gram = train.t().dot(&train);
    let rhs = train.t().dot(&centred);
    let ends = features.block_ends();
    let penalties: Vec<f64> = (1..=ends.len()).map(|r| r as f64 * p.delta).collect();
    let solutions = nested_ridge(gram.view(), rhs.view(), ends, &penalties)?;
    solutions
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let order = k + 1;
            let e = ends[k];
            let train_pred = train.slice(s![.., ..e]).dot(v) + mean;
            let test_pred = test.slice(s![.., ..e]).dot(v) + mean;
            let (train_error, test_error) = errors(d, &train_pred, &test_pred)?;
            Ok(prefix_row(method, order, train_error, test_error, e))
        })
        .collect()
}
