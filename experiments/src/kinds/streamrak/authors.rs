//! The authors' Python StreaMRAK and LP-KRR (upstream `streamrak`) on one stream: the methods
//! `authors_streamrak` and `authors_lp_krr`.
//!
//! The training rows are written in the cell's stream order (the same order the project's
//! methods stream) and the test rows in split order, as the drivers' CSV; the kit's `driver.py`
//! streams them into the authors' model set as their VarSinus scripts set it, with the cell's
//! `[params]` and a seed derived from the cell, and returns one row per fitted level and a
//! summary under the kind's column names. StreaMRAK upstream has no deepest level: it fits every
//! level that becomes ready (`max_level` applies to LP-KRR only).

use ndarray::{Array1, Array2, Axis};

use crate::kinds::common::upstream_rows::{run_on_split, DenseSplit};
use crate::kinds::ColumnDoc;
use crate::table::{Row, Value};
use crate::upstream::Unavailable;

/// The upstream's name in the registry.
pub const UPSTREAM: &str = "streamrak";

/// Runs the driver's `task` (`streamrak` or `lp_krr`) on the rows `order` of the training set
/// (in that order) and the test set; returns its rows with the kind's columns (`columns`) and
/// the process's CPU seconds in the summary's `train_cpu_seconds`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    task: &str,
    train_x: &Array2<f64>,
    train_y: &Array2<f64>,
    order: &[usize],
    test_x: &Array2<f64>,
    test_y: &Array2<f64>,
    params: serde_json::Value,
    seed: u64,
    columns: &[ColumnDoc],
) -> Result<Vec<Row>, Unavailable> {
    if train_y.ncols() != 1 {
        return Err(Unavailable::new(
            UPSTREAM,
            "the driver takes one target column",
        ));
    }
    // The training rows in the stream's order.
    let x = train_x.select(Axis(0), order);
    let y: Array1<f64> = order.iter().map(|&i| train_y[[i, 0]]).collect();
    let ty = test_y.column(0).to_owned();
    let split = DenseSplit {
        x_train: &x,
        y_train: &y,
        x_test: test_x,
        y_test: &ty,
    };
    let cell = format!("{task}-{seed:016x}");
    let out = run_on_split(UPSTREAM, task, &cell, &split, &params, seed, columns)?;
    let mut rows = out.rows;
    for row in &mut rows {
        if row.get("record").map(|r| r.to_string()).as_deref() == Some("summary") {
            row.insert(
                "train_cpu_seconds".into(),
                Value::from(out.process.cpu_seconds),
            );
            row.insert(
                "train_seconds".into(),
                Value::from(out.process.wall_seconds),
            );
        }
    }
    Ok(rows)
}
