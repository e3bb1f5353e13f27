//! Kernel approximation error of nested prefixes of random feature maps (The Mondrian Kernel,
//! Fig. 5; spec §6.1).
//!
//! One cell = one method, one repetition: a single draw of the map of the largest order, whose
//! prefixes give the estimates `K̂_R` for every R ("nested prefixes", as the authors' sweeps). The
//! error is `max_ij |K̂_R − K_ij|` over all pairs of the shared points, diagonal included, against
//! the exact Laplace kernel `exp(−λ‖x − x'‖₁)`.
//!
//! `authors_mondrian`, `authors_random_binning` and `authors_random_fourier` run the authors'
//! `experiment_1` (upstream `mondrian_kernel`, [`super::authors`]) on the very same points: one
//! sweep of nested prefixes of each map, seeded from the cell, errors against their own exact
//! kernel.

use anyhow::Result;
use kernel_core::kernel::laplace_gram;
use kernel_core::{Features, Lifetime};
use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::synthetic::uniform_box::UniformBox;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::common::upstream_rows::DenseSplit;
use crate::kinds::mondrian::feature_maps;
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct KernelApproximation;

/// The exact kernel matrix is n x n: 20000 points are 3.2 GB.
const MAX_POINTS: usize = 20_000;

fn too_many(n: usize) -> String {
    format!(
        "{n} points: the error is measured against the exact n x n kernel matrix ({:.0} GB); at \
         most {MAX_POINTS} points",
        (n as f64).powi(2) * 8e-9
    )
}

/// `[params]` of a kernel-approximation config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelApproximationParams {
    /// The feature map (`mondrian`, `random_binning`, `random_fourier`: see
    /// [`crate::kinds::mondrian::feature_maps`]), or the authors' of the same name
    /// (`authors_mondrian`, ...).
    pub method: String,
    /// λ of the Laplace kernel `exp(−λ‖x − x'‖₁)` (the Mondrian lifetime), checked when read.
    pub lifetime: Lifetime,
    /// Largest number of non-zero features per point: orders M = 1..=max_nonzeros for the
    /// Mondrian kernel and random binning, R = 1..=max_nonzeros/2 frequencies for Fourier
    /// features (2R non-zeros).
    pub max_nonzeros: usize,
}

impl KernelApproximationParams {
    /// The feature map's name without the `authors_` prefix, and whether it had one.
    fn map_name(&self) -> (&str, bool) {
        match self.method.strip_prefix(AUTHORS) {
            Some(name) => (name, true),
            None => (&self.method, false),
        }
    }
}

/// The prefix of the methods run by the authors' scripts.
const AUTHORS: &str = "authors_";

impl Params for KernelApproximationParams {
    fn check(&self) -> Result<(), String> {
        let (name, authors) = self.map_name();
        feature_maps::find(name)?.blocks(self.max_nonzeros)?;
        if authors && self.max_nonzeros % 2 == 1 {
            return Err(format!(
                "method {}: max_nonzeros = {} must be even (the authors' script gives Fourier \
                 features max_nonzeros / 2 frequencies for every map)",
                self.method, self.max_nonzeros
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

crate::register_kind!(KernelApproximation);

impl Kind for KernelApproximation {
    type Params = KernelApproximationParams;
    /// The points (synthetic points, or the training inputs of regression data).
    type Shared = Array2<f64>;
    const NAME: &'static str = "kernel_approximation";
    const SUMMARY: &'static str = "max |K_hat - K| of nested prefixes of Mondrian / random binning / random Fourier maps (Mondrian kernel Fig. 5)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    fn check_data(data: &DataSpec) -> Result<(), String> {
        match data.generated_by::<UniformBox>() {
            Some(b) if b.n > MAX_POINTS => Err(too_many(b.n)),
            _ => Ok(()),
        }
    }

    fn upstream(p: &KernelApproximationParams) -> Option<&'static str> {
        p.map_name().1.then_some(super::authors::UPSTREAM)
    }

    fn prepare(data: &DataView) -> Result<Array2<f64>> {
        let x = data.points()?;
        if x.nrows() > MAX_POINTS {
            anyhow::bail!(too_many(x.nrows()));
        }
        Ok(x)
    }

    fn run_cell(
        x: &Array2<f64>,
        p: &KernelApproximationParams,
        ctx: &CellContext,
    ) -> Result<Vec<Row>> {
        let (name, authors) = p.map_name();
        if authors {
            return authors_errors(x, p, name, ctx);
        }
        let method = feature_maps::find(name).map_err(anyhow::Error::msg)?;
        let exact = laplace_gram(x.view(), x.view(), p.lifetime.get())?;
        let blocks = method.blocks(p.max_nonzeros).map_err(anyhow::Error::msg)?;
        let features = method.sample(x.view(), p.lifetime.get(), blocks, ctx)?;
        let errors = features.prefix_max_errors(exact.view())?;
        let feature_columns = match &features {
            Features::OneHot(f) => f.n_columns(),
            Features::Dense(f) => f.values().ncols(),
        };
        Ok(errors
            .iter()
            .enumerate()
            .map(|(k, &error)| {
                let order = k + 1;
                row([
                    ("order", order.into()),
                    ("nonzeros", method.nonzeros(order).into()),
                    ("m_axis", method.m_axis(order).into()),
                    ("max_abs_error", Value::from(error)),
                    ("feature_columns", feature_columns.into()),
                ])
            })
            .collect())
    }
}

/// The authors' `experiment_1` on the points: one sweep of nested prefixes of the map `name`.
fn authors_errors(
    x: &Array2<f64>,
    p: &KernelApproximationParams,
    name: &str,
    ctx: &CellContext,
) -> Result<Vec<Row>> {
    let params = serde_json::json!({
        "method": name,
        "lifetime": p.lifetime.get(),
        "max_nonzeros": p.max_nonzeros,
        "sweeps": 1,
    });
    let seed: u64 = rand::Rng::random(&mut ctx.rng("authors"));
    // The script reads only the inputs; the targets and the test rows are placeholders.
    let y = ndarray::Array1::zeros(x.nrows());
    let split = DenseSplit {
        x_train: x,
        y_train: &y,
        x_test: x,
        y_test: &y,
    };
    let mut rows = super::authors::run("kernel_error", &split, &params, seed, COLUMNS)?;
    rows.retain(|r| r.contains_key("max_abs_error"));
    Ok(rows)
}
