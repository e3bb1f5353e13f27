//! revrand (upstream `revrand`) on the same split: the methods `revrand_rbf`, `revrand_ard` and
//! `revrand_gm`. Not the A la Carte authors' code: they released none; revrand (which began as
//! "pyalacarte") is the nearest public implementation of Fastfood RBF, ARD and Gaussian-mixture
//! kernels learned by the marginal likelihood (no FSARD, FSGBARD, PWL or SSGPR).
//!
//! The cell's training rows (all, or the `max_train` subset the project's methods use) and test
//! rows are written as shipped (centred, unscaled) in the drivers' CSV; the kit's `driver.py`
//! standardises the inputs as this kind does, fits revrand's `StandardLinearModel` with its own
//! random starts and L-BFGS-B stopping rule, and returns one row in the kind's columns.

use ndarray::{Array1, Array2};

use crate::kinds::common::upstream_rows::kind_rows;
use crate::kinds::ColumnDoc;
use crate::table::Row;
use crate::upstream::{self, driver, toolchain, Unavailable};

/// The upstream's name in the registry.
pub const UPSTREAM: &str = "revrand";

/// Runs revrand's `family` (`rbf`, `ard` or `gm`) with the cell's `params`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    x_train: &Array2<f64>,
    y_train: &Array1<f64>,
    x_test: &Array2<f64>,
    y_test: &Array1<f64>,
    params: serde_json::Value,
    seed: u64,
    cell: &str,
    columns: &[ColumnDoc],
) -> Result<Vec<Row>, Unavailable> {
    let prepared = upstream::prepare(UPSTREAM)?;
    let dir = toolchain::cell_folder(&prepared, cell)?;
    let fail = |reason: String| Unavailable::new(UPSTREAM, reason);
    let flat = |x: &Array2<f64>| x.iter().copied().collect::<Vec<f64>>();
    driver::write_split(
        &dir,
        x_train.ncols(),
        (&flat(x_train), &y_train.to_vec()),
        (&flat(x_test), &y_test.to_vec()),
    )
    .map_err(&fail)?;
    let timeout = upstream::settings().timeout_seconds;
    let out = driver::run(
        &prepared,
        &dir,
        "fastfood_regression",
        &params,
        seed,
        timeout,
    )?;
    let rows = kind_rows(out.rows, columns);
    if rows.is_empty() {
        return Err(fail("the driver returned no rows".into()));
    }
    Ok(rows)
}
