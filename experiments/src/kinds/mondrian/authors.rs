//! The authors' Python scripts (upstream `mondrian_kernel`, patched for Python 3) on the same
//! split: Fig. 5's kernel errors of nested prefixes (`experiment_1`), Fig. 8's `authors_mondrian`
//! sweep and `authors_random_fourier` / `authors_random_binning` width searches (`experiment_2`,
//! `utils.select_width`).
//!
//! The split's training and test rows are written as the drivers' CSV; the kit's `driver.py`
//! runs the authors' functions with the cell's `[params]` (their own names) and a seed derived
//! from the cell, and returns one row per checkpoint or evaluation with the test error and the
//! scripts' own cumulative CPU clock (`time.process_time`, after the imports and the reading).

use crate::kinds::common::upstream_rows::{run_on_split, DenseSplit};
use crate::kinds::ColumnDoc;
use crate::table::Row;
use crate::upstream::Unavailable;

/// The upstream's name in the registry.
pub const UPSTREAM: &str = "mondrian_kernel";

/// Runs the driver's `task` on a split; its rows keep the kind's `columns`.
pub fn run(
    task: &str,
    split: &DenseSplit,
    params: &serde_json::Value,
    seed: u64,
    columns: &[ColumnDoc],
) -> Result<Vec<Row>, Unavailable> {
    let cell = format!("{task}-{seed:016x}");
    run_on_split(UPSTREAM, task, &cell, split, params, seed, columns).map(|r| r.rows)
}
