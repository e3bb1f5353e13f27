//! The rows a driver of the authors' code returned ([`crate::upstream::driver`]), as the kind's
//! rows: the keys the kind declares, values as table values.

use crate::kinds::ColumnDoc;
use crate::table::{Row, Value};

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
