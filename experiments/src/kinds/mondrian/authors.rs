//! The authors' Python scripts (upstream `mondrian_kernel`, patched for Python 3) on the same
//! split: Fig. 8's `authors_mondrian` sweep and `authors_random_fourier` /
//! `authors_random_binning` width searches (`experiment_2`, `utils.select_width`).
//!
//! The split's training and test rows are written as the drivers' CSV; the kit's `driver.py`
//! runs the authors' functions with the cell's `[params]` (their own names) and a seed derived
//! from the cell, and returns one row per checkpoint or evaluation with the test error and the
//! scripts' own cumulative CPU clock (`time.process_time`, after the imports and the reading).

use ndarray::{Array1, Array2};

use crate::kinds::common::upstream_rows::kind_rows;
use crate::kinds::ColumnDoc;
use crate::table::Row;
use crate::upstream::{self, driver, toolchain, Unavailable};

/// The upstream's name in the registry.
pub const UPSTREAM: &str = "mondrian_kernel";

/// Runs the driver's `task` on a split; its rows keep the kind's `columns`, and `curve` is set
/// to `curve` (so the authors' curves are told from the project's).
#[allow(clippy::too_many_arguments)]
pub fn run(
    task: &str,
    x_train: &Array2<f64>,
    y_train: &Array1<f64>,
    x_test: &Array2<f64>,
    y_test: &Array1<f64>,
    params: serde_json::Value,
    seed: u64,
    curve: &str,
    columns: &[ColumnDoc],
) -> Result<Vec<Row>, Unavailable> {
    let prepared = upstream::prepare(UPSTREAM)?;
    let dir = toolchain::cell_folder(&prepared, &format!("{curve}-{seed:016x}"))?;
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
    let out = driver::run(&prepared, &dir, task, &params, seed, timeout)?;
    let mut rows = kind_rows(out.rows, columns);
    for row in &mut rows {
        row.insert("curve".into(), curve.into());
    }
    if rows.is_empty() {
        return Err(fail("the driver returned no rows".into()));
    }
    Ok(rows)
}
