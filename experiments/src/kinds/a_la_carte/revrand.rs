//! revrand (upstream `revrand`) on the same split: the methods `revrand_rbf`, `revrand_ard` and
//! `revrand_gm`. Not the A la Carte authors' code: they released none; revrand (which began as
//! "pyalacarte") is the nearest public implementation of Fastfood RBF, ARD and Gaussian-mixture
//! kernels learned by the marginal likelihood (no FSARD, FSGBARD, PWL or SSGPR).
//!
//! The cell's training rows (all, or the `max_train` subset the project's methods use) and test
//! rows are written as shipped (centred, unscaled) in the drivers' CSV; the kit's `driver.py`
//! standardises the inputs as this kind does, fits revrand's `StandardLinearModel` with its own
//! random starts and L-BFGS-B stopping rule, and returns one row in the kind's columns.

use crate::kinds::common::upstream_rows::{run_on_split, DenseSplit};
use crate::kinds::ColumnDoc;
use crate::table::Row;
use crate::upstream::Unavailable;

/// The upstream's name in the registry.
pub const UPSTREAM: &str = "revrand";

/// Runs revrand's `family` (in `params`) on a split, in the scratch folder `cell`.
pub fn run(
    split: &DenseSplit,
    params: &serde_json::Value,
    seed: u64,
    cell: &str,
    columns: &[ColumnDoc],
) -> Result<Vec<Row>, Unavailable> {
    run_on_split(
        UPSTREAM,
        "fastfood_regression",
        cell,
        split,
        params,
        seed,
        columns,
    )
    .map(|r| r.rows)
}
