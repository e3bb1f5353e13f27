//! Tidy result rows and their Parquet form (through polars).
//!
//! A row is one measured point of one cell: identity columns, parameter columns, measurement
//! columns, timing columns. Columns keep one type each (Int64, Float64, Boolean or String;
//! integers mixed with floats become Float64); a value a row lacks is null, and a column no row
//! has a value in is a Float64 column of nulls (never Arrow's Null type, which no other table's
//! column casts to).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use polars::prelude::*;
use serde::{Deserialize, Serialize};

/// One cell value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Value {
    /// The value as a number, if it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Converts a scalar JSON value (a canonical parameter) into a cell value.
    pub fn from_json(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Number(n) => n
                .as_i64()
                .map(Value::Int)
                .unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN))),
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Null => Value::Null,
            other => Value::Str(other.to_string()),
        }
    }

    /// Whether this value equals a TOML selector value (numbers compare numerically); an array
    /// selector matches any of its items.
    /// The selector that [`Self::matches`] this value and no other (`None` for null).
    pub fn selector(&self) -> Option<toml::Value> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(b) => toml::Value::Boolean(*b),
            Value::Int(i) => toml::Value::Integer(*i),
            Value::Float(x) => toml::Value::Float(*x),
            Value::Str(s) => toml::Value::String(s.clone()),
        })
    }

    pub fn matches(&self, selector: &toml::Value) -> bool {
        match (self, selector) {
            (v, toml::Value::Array(items)) => items.iter().any(|i| v.matches(i)),
            (Value::Str(s), toml::Value::String(t)) => s == t,
            (v, toml::Value::Integer(i)) => v.as_f64() == Some(*i as f64),
            (v, toml::Value::Float(f)) => v.as_f64() == Some(*f),
            (Value::Bool(v), toml::Value::Boolean(b)) => v == b,
            _ => false,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Null => write!(f, "null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s}"),
        }
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        if v.is_nan() {
            Value::Null
        } else {
            Value::Float(v)
        }
    }
}
impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Int(v as i64)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_string())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Str(v)
    }
}

/// One row: column name to value.
pub type Row = BTreeMap<String, Value>;

/// Builds a row from `(column, value)` pairs.
pub fn row<const N: usize>(pairs: [(&str, Value); N]) -> Row {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Converts rows into a DataFrame with the given column order (extra columns are an error).
pub fn to_frame(columns: &[String], rows: &[Row]) -> Result<DataFrame> {
    for r in rows {
        if let Some(extra) = r.keys().find(|k| !columns.contains(k)) {
            bail!("row has a column `{extra}` that the table does not declare");
        }
    }
    let mut out = Vec::with_capacity(columns.len());
    for name in columns {
        let values: Vec<&Value> = rows
            .iter()
            .map(|r| r.get(name).unwrap_or(&Value::Null))
            .collect();
        let has = |f: fn(&Value) -> bool| values.iter().any(|v| f(v));
        let kinds = [
            has(|v| matches!(v, Value::Str(_))),
            has(|v| matches!(v, Value::Bool(_))),
            has(|v| matches!(v, Value::Int(_) | Value::Float(_))),
        ];
        if kinds.iter().filter(|&&k| k).count() > 1 {
            bail!("column `{name}` mixes text, booleans and numbers");
        }
        let column = if !has(|v| !matches!(v, Value::Null)) {
            // Typed, so that the tables of two runs concatenate (a Null-typed column casts to
            // nothing); a number, the type of most columns.
            Column::full_null(name.as_str().into(), rows.len(), &DataType::Float64)
        } else if has(|v| matches!(v, Value::Bool(_))) {
            let v: Vec<Option<bool>> = values
                .iter()
                .map(|v| match v {
                    Value::Bool(b) => Some(*b),
                    _ => None,
                })
                .collect();
            Column::new(name.as_str().into(), v)
        } else if has(|v| matches!(v, Value::Str(_))) {
            let v: Vec<Option<String>> = values
                .iter()
                .map(|v| match v {
                    Value::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .collect();
            Column::new(name.as_str().into(), v)
        } else if has(|v| matches!(v, Value::Float(_))) {
            let v: Vec<Option<f64>> = values.iter().map(|v| v.as_f64()).collect();
            Column::new(name.as_str().into(), v)
        } else {
            let v: Vec<Option<i64>> = values
                .iter()
                .map(|v| match v {
                    Value::Int(i) => Some(*i),
                    _ => None,
                })
                .collect();
            Column::new(name.as_str().into(), v)
        };
        out.push(column);
    }
    Ok(DataFrame::new(rows.len(), out)?)
}

/// Converts a DataFrame back into rows (nulls are left out of each row).
pub fn from_frame(df: &DataFrame) -> Result<Vec<Row>> {
    let mut rows = vec![Row::new(); df.height()];
    for column in df.columns() {
        let name = column.name().to_string();
        let series = column.as_materialized_series();
        match series.dtype() {
            DataType::Float64 => {
                for (r, v) in rows.iter_mut().zip(series.f64()?.iter()) {
                    if let Some(v) = v {
                        r.insert(name.clone(), Value::Float(v));
                    }
                }
            }
            DataType::Int64 => {
                for (r, v) in rows.iter_mut().zip(series.i64()?.iter()) {
                    if let Some(v) = v {
                        r.insert(name.clone(), Value::Int(v));
                    }
                }
            }
            DataType::Boolean => {
                for (r, v) in rows.iter_mut().zip(series.bool()?.iter()) {
                    if let Some(v) = v {
                        r.insert(name.clone(), Value::Bool(v));
                    }
                }
            }
            DataType::String => {
                for (r, v) in rows.iter_mut().zip(series.str()?.iter()) {
                    if let Some(v) = v {
                        r.insert(name.clone(), Value::Str(v.to_string()));
                    }
                }
            }
            DataType::Null => {}
            other => bail!("column `{name}` has unsupported type {other}"),
        }
    }
    Ok(rows)
}

/// Writes `df` as Parquet to `path` atomically (temporary file, then rename).
pub fn write_parquet(path: &Path, df: &mut DataFrame) -> Result<()> {
    crate::files::write_atomic_with(path, |file| {
        // The embedded Arrow schema at the oldest compatibility level: strings as
        // `large_string`, not the `string_view` polars declares by default (which pyarrow 14
        // and other older readers cannot read). The Parquet types are plain either way.
        let arrow = polars_parquet::arrow::write::schema_to_metadata_key(
            &df.schema().to_arrow(CompatLevel::oldest()),
        );
        ParquetWriter::new(file)
            .with_compression(ParquetCompression::Zstd(None))
            .with_key_value_metadata(Some(KeyValueMetadata::from_static(vec![(
                arrow.key,
                arrow.value.unwrap_or_default(),
            )])))
            .finish(df)
            .map(|_| ())
            .map_err(anyhow::Error::from)
    })
}

/// Reads a Parquet file.
pub fn read_parquet(path: &Path) -> Result<DataFrame> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    anyhow::Context::with_context(ParquetReader::new(file).finish(), || {
        format!("cannot read Parquet file {}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_through_parquet() {
        let columns: Vec<String> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let rows = vec![
            row([
                ("a", Value::Int(1)),
                ("b", 0.5.into()),
                ("c", "x".into()),
                ("d", Value::Bool(true)),
            ]),
            row([
                ("a", Value::Int(2)),
                ("c", "y".into()),
                ("d", Value::Bool(false)),
            ]),
        ];
        let mut df = to_frame(&columns, &rows).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        write_parquet(&path, &mut df).unwrap();
        let frame = read_parquet(&path).unwrap();
        assert_eq!(frame.column("d").unwrap().dtype(), &DataType::Boolean);
        // A column without values is a typed column of nulls (Float64), never the Null type.
        assert_eq!(frame.column("e").unwrap().dtype(), &DataType::Float64);
        assert_eq!(frame.column("c").unwrap().dtype(), &DataType::String);
        let back = from_frame(&frame).unwrap();
        assert_eq!(back, rows);
    }

    #[test]
    fn mixed_columns_are_rejected() {
        let columns = vec!["a".to_string()];
        let rows = vec![row([("a", Value::Int(1))]), row([("a", "x".into())])];
        assert!(to_frame(&columns, &rows).is_err());
        assert!(to_frame(&[], &rows).is_err());
    }
}
