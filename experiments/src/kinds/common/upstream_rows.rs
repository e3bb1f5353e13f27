//! A Python upstream's driver ([`crate::upstream::driver`]) run on a split, and the rows it
//! returned as the kind's rows: the keys the kind declares, values as table values.

use ndarray::{Array1, Array2};

use crate::kinds::ColumnDoc;
use crate::table::{Row, Value};
use crate::upstream::process::Finished;
use crate::upstream::{self, driver, toolchain, Unavailable};

/// A split's rows for a driver: training and test inputs and targets.
pub struct DenseSplit<'a> {
    pub x_train: &'a Array2<f64>,
    pub y_train: &'a Array1<f64>,
    pub x_test: &'a Array2<f64>,
    pub y_test: &'a Array1<f64>,
}

/// What a driver run gave: its rows as the kind's, and what its process cost.
pub struct UpstreamRows {
    pub rows: Vec<Row>,
    pub process: Finished,
}

/// Runs the driver's `task` of the Python upstream `name` on a split, in the scratch folder
/// `cell`: its rows restricted to the kind's `columns` (at least one, or it is unavailable).
pub fn run_on_split(
    name: &str,
    task: &str,
    cell: &str,
    split: &DenseSplit,
    params: &serde_json::Value,
    seed: u64,
    columns: &[ColumnDoc],
) -> Result<UpstreamRows, Unavailable> {
    let prepared = upstream::prepare(name)?;
    let dir = toolchain::cell_folder(&prepared, cell)?;
    let fail = |reason: String| Unavailable::new(name, reason);
    let flat = |x: &Array2<f64>| x.iter().copied().collect::<Vec<f64>>();
    driver::write_split(
        &dir,
        split.x_train.ncols(),
        (&flat(split.x_train), &split.y_train.to_vec()),
        (&flat(split.x_test), &split.y_test.to_vec()),
    )
    .map_err(&fail)?;
    let timeout = upstream::settings().timeout_seconds;
    let out = driver::run(&prepared, &dir, task, params, seed, timeout)?;
    let rows = kind_rows(out.rows, columns);
    if rows.is_empty() {
        return Err(fail("the driver returned no rows".into()));
    }
    Ok(UpstreamRows {
        rows,
        process: out.process,
    })
}

/// The driver's rows restricted to the kind's `columns`.
pub fn kind_rows(
    objects: Vec<serde_json::Map<String, serde_json::Value>>,
    columns: &[ColumnDoc],
) -> Vec<Row> {
    objects
        .into_iter()
        .map(|object| {
            object
                .into_iter()
                .filter(|(k, _)| columns.iter().any(|c| c.name == k))
                .map(|(k, v)| (k, Value::from_json(&v)))
                .collect()
        })
        .collect()
}
