//! Kernel approximation error of nested prefixes of random feature maps (The Mondrian Kernel,
//! Fig. 5; spec §6.1).
//!
//! One cell = one method, one repetition: a single draw of the map of the largest order, whose
//! prefixes give the estimates `K̂_R` for every R ("nested prefixes", as the authors' sweeps). The
//! error is `max_ij |K̂_R − K_ij|` over all pairs of the shared points, diagonal included, against
//! the exact Laplace kernel `exp(−λ‖x − x'‖₁)`.

use anyhow::Result;
use kernel_core::approximation::one_hot_prefix_max_errors;
use kernel_core::kernel::laplace_gram;
use mondrian::MondrianForest;
use ndarray::Array2;
use random_features::{RandomBinning, RandomFourierFeatures};
use serde::{Deserialize, Serialize};

use super::{ColumnDoc, ExperimentKind, Params, Shared};
use crate::cell::Cell;
use crate::config::DataSpec;
use crate::data::LoadedData;
use crate::table::{row, Row, Value};

pub struct KernelApproximation;

/// The feature map whose kernel estimate is measured.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Mondrian kernel: M trees, one non-zero per tree.
    Mondrian,
    /// Random binning (Rahimi & Recht 2007): M grids, one non-zero per grid.
    RandomBinning,
    /// Random Fourier features with Cauchy frequencies: R frequencies, 2R non-zeros.
    RandomFourier,
}

/// `[params]` of a kernel-approximation config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelApproximationParams {
    pub method: Method,
    /// λ of the Laplace kernel `exp(−λ‖x − x'‖₁)` (the Mondrian lifetime).
    pub lifetime: f64,
    /// Largest number of non-zero features per point: orders M = 1..=max_nonzeros for the
    /// Mondrian kernel and random binning, R = 1..=max_nonzeros/2 frequencies for Fourier
    /// features (2R non-zeros).
    pub max_nonzeros: usize,
}

impl Params for KernelApproximationParams {
    fn check(&self) -> Result<(), String> {
        super::positive("lifetime", self.lifetime)?;
        let min = if self.method == Method::RandomFourier {
            2
        } else {
            1
        };
        if self.max_nonzeros < min {
            return Err(format!(
                "max_nonzeros = {}: need at least {min} for {:?}",
                self.max_nonzeros, self.method
            ));
        }
        if self.max_nonzeros > 100_000 {
            return Err(format!(
                "max_nonzeros = {}: at most 100000",
                self.max_nonzeros
            ));
        }
        Ok(())
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "order",
        doc: "R, the prefix of the draw: trees (mondrian), grids (random_binning) or frequencies (random_fourier)",
    },
    ColumnDoc {
        name: "nonzeros",
        doc: "non-zero features per data point: R, or 2R for random Fourier features",
    },
    ColumnDoc {
        name: "m_axis",
        doc: "position on the paper's x axis 'M (non-zero features per data point)': R, or 2R - 1 for Fourier features (as the authors plot them)",
    },
    ColumnDoc {
        name: "max_abs_error",
        doc: "max over all pairs (i, j), diagonal included, of |K_hat_R(x_i, x_j) - exp(-lifetime * ||x_i - x_j||_1)|",
    },
    ColumnDoc {
        name: "feature_columns",
        doc: "distinct feature ids created by the whole draw (Mondrian: node ids incl. internal; binning: bins seen; Fourier: 2R)",
    },
];

impl ExperimentKind for KernelApproximation {
    fn name(&self) -> &'static str {
        "kernel_approximation"
    }

    fn summary(&self) -> &'static str {
        "max |K_hat - K| of nested prefixes of Mondrian / random binning / random Fourier maps (Mondrian kernel Fig. 5)"
    }

    fn code_version(&self) -> u32 {
        1
    }

    fn columns(&self) -> &'static [ColumnDoc] {
        COLUMNS
    }

    fn check_data(&self, _data: &DataSpec) -> Result<(), String> {
        // Synthetic points, or the training inputs of regression data (an ablation on real
        // inputs): every data source has points.
        Ok(())
    }

    fn canonical_params(&self, point: toml::Table) -> Result<serde_json::Value, String> {
        super::canonical::<KernelApproximationParams>(point)
    }

    fn prepare(&self, data: &LoadedData) -> Result<Shared> {
        Ok(Box::new(data.points()?.clone()))
    }

    fn run_cell(&self, shared: &Shared, cell: &Cell) -> Result<Vec<Row>> {
        let x: &Array2<f64> = super::shared(shared)?;
        let p: KernelApproximationParams = super::typed(cell)?;
        let exact = laplace_gram(x.view(), x.view(), p.lifetime)?;
        let (errors, feature_columns) = match p.method {
            Method::Mondrian => {
                let forest = MondrianForest::sample(
                    x.view(),
                    p.lifetime,
                    p.max_nonzeros,
                    &mut cell.seeds.rng("trees"),
                )?;
                let features = forest.features();
                (
                    one_hot_prefix_max_errors(&features, exact.view())?,
                    features.n_columns(),
                )
            }
            Method::RandomBinning => {
                let mut map = RandomBinning::sample(
                    x.ncols(),
                    p.max_nonzeros,
                    p.lifetime,
                    &mut cell.seeds.rng("features"),
                )?;
                let features = map.fit_transform(x.view())?;
                (
                    one_hot_prefix_max_errors(&features, exact.view())?,
                    features.n_columns(),
                )
            }
            Method::RandomFourier => {
                let r = p.max_nonzeros / 2;
                let map = RandomFourierFeatures::sample(
                    x.ncols(),
                    r,
                    p.lifetime,
                    &mut cell.seeds.rng("features"),
                )?;
                (map.prefix_max_errors(x.view(), exact.view())?, 2 * r)
            }
        };
        let fourier = p.method == Method::RandomFourier;
        Ok(errors
            .iter()
            .enumerate()
            .map(|(k, &error)| {
                let order = k + 1;
                row([
                    ("order", order.into()),
                    ("nonzeros", (if fourier { 2 * order } else { order }).into()),
                    (
                        "m_axis",
                        (if fourier { 2 * order - 1 } else { order }).into(),
                    ),
                    ("max_abs_error", Value::from(error)),
                    ("feature_columns", feature_columns.into()),
                ])
            })
            .collect())
    }
}
