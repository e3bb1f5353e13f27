//! The one error type of the crate.

use thiserror::Error;

/// Invalid parameters or inputs of the Fastfood kernels, the marginal likelihood or the
/// optimiser, or a failure inside LAPACK.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum FastfoodError {
    /// A setting outside its domain.
    #[error("invalid {name} = {value}: expected {expected}")]
    InvalidParameter {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    /// No rows, or no columns.
    #[error("{what} has {rows} rows and {columns} columns; need at least one of each")]
    EmptyInput {
        what: &'static str,
        rows: usize,
        columns: usize,
    },
    /// Two lengths differ (targets vs rows, columns vs the model's dimension, parameters).
    #[error("{what}: expected {expected}, got {got}")]
    ShapeMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// NaN or infinite inputs or targets.
    #[error("{what} row {row}, column {column} is not finite ({value}); impute or drop it first")]
    NonFiniteInput {
        what: &'static str,
        row: usize,
        column: usize,
        value: f64,
    },
    /// The matrix of the marginal likelihood is numerically not positive definite, or a
    /// parameter overflowed (the optimiser steps back from such points).
    #[error("numerical failure: {0}")]
    Numerical(String),
}

/// Checks a count is at least 1.
pub(crate) fn at_least_one(name: &'static str, value: usize) -> Result<(), FastfoodError> {
    if value == 0 {
        return Err(FastfoodError::InvalidParameter {
            name,
            value: "0".into(),
            expected: "at least 1",
        });
    }
    Ok(())
}

/// Checks that a matrix of inputs is non-empty, has `columns` columns (if given) and is finite.
pub(crate) fn check_inputs(
    what: &'static str,
    x: ndarray::ArrayView2<f64>,
    columns: Option<usize>,
) -> Result<(), FastfoodError> {
    if x.nrows() == 0 || x.ncols() == 0 {
        return Err(FastfoodError::EmptyInput {
            what,
            rows: x.nrows(),
            columns: x.ncols(),
        });
    }
    if let Some(c) = columns {
        if x.ncols() != c {
            return Err(FastfoodError::ShapeMismatch {
                what: "input columns vs the model's dimension",
                expected: c,
                got: x.ncols(),
            });
        }
    }
    for ((row, column), &value) in x.indexed_iter() {
        if !value.is_finite() {
            return Err(FastfoodError::NonFiniteInput {
                what,
                row,
                column,
                value,
            });
        }
    }
    Ok(())
}

/// Checks that targets match the rows and are finite.
pub(crate) fn check_targets(y: &[f64], rows: usize) -> Result<(), FastfoodError> {
    if y.len() != rows {
        return Err(FastfoodError::ShapeMismatch {
            what: "targets vs training rows",
            expected: rows,
            got: y.len(),
        });
    }
    if let Some((row, &value)) = y.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(FastfoodError::NonFiniteInput {
            what: "targets",
            row,
            column: 0,
            value,
        });
    }
    Ok(())
}
