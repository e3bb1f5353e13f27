//! The error vocabulary every algorithm crate shares ([`CoreError`]) and the checks that raise
//! its variants. A crate with failures of its own (isolation-kernel's malformed sparse rows,
//! random-tessellation's degenerate priors, ...) wraps `CoreError` in its own enum beside those
//! extras; a crate without extras returns `CoreError` itself.

use ndarray::ArrayView2;
use thiserror::Error;

/// The failures every method shares: shapes that do not agree, a parameter or input value
/// outside its domain, non-finite or empty inputs, a numerical solve that failed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CoreError {
    /// Two inputs whose sizes must agree do not (columns of new points vs the model's
    /// dimension, targets vs rows, ...).
    #[error("shape mismatch: {what} (expected {expected}, got {got})")]
    ShapeMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// A parameter outside its domain, e.g. a negative lifetime; `name` is the parameter's name
    /// (as a config writes it, where a config names it).
    #[error("invalid parameter {name} = {value}: expected {expected}")]
    InvalidParameter {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    /// An input value outside its domain that is not a parameter (a label outside {-1, +1}, a
    /// point that is not in the model's domain, a call out of order).
    #[error("invalid {what} {value}: expected {expected}")]
    InvalidInput {
        what: &'static str,
        value: String,
        expected: &'static str,
    },
    /// An input value is NaN or infinite (`what`: "input", "training", "test", "targets", ...).
    #[error("{what} row {row}, column {column} is not finite ({value}); remove or impute it")]
    NonFiniteInput {
        what: &'static str,
        row: usize,
        column: usize,
        value: f64,
    },
    /// No rows, or no columns where columns are needed.
    #[error("{what} has {rows} rows and {columns} columns; need {needed}")]
    EmptyInput {
        what: &'static str,
        rows: usize,
        columns: usize,
        /// What is needed, e.g. "at least one row and one column".
        needed: &'static str,
    },
    /// A numerical solve failed: a matrix not (numerically) positive definite, a factorisation
    /// or eigensolver that did not converge, a solver crate that returned an error.
    #[error("{what} failed: {message}")]
    Solve { what: &'static str, message: String },
}

impl CoreError {
    /// [`CoreError::InvalidParameter`] of `value`.
    pub fn invalid(name: &'static str, value: impl ToString, expected: &'static str) -> Self {
        CoreError::InvalidParameter {
            name,
            value: value.to_string(),
            expected,
        }
    }

    /// [`CoreError::InvalidInput`] of `value`.
    pub fn invalid_input(what: &'static str, value: impl ToString, expected: &'static str) -> Self {
        CoreError::InvalidInput {
            what,
            value: value.to_string(),
            expected,
        }
    }

    /// [`CoreError::ShapeMismatch`].
    pub fn shape(what: &'static str, expected: usize, got: usize) -> Self {
        CoreError::ShapeMismatch {
            what,
            expected,
            got,
        }
    }

    /// [`CoreError::Solve`] with the failure's message.
    pub fn solve(what: &'static str, message: impl ToString) -> Self {
        CoreError::Solve {
            what,
            message: message.to_string(),
        }
    }
}

/// Checks that `value` is finite and strictly positive.
pub fn positive(name: &'static str, value: f64) -> Result<f64, CoreError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(CoreError::invalid(name, value, "a finite number > 0"))
    }
}

/// Checks that `value` is finite and non-negative.
pub fn non_negative(name: &'static str, value: f64) -> Result<f64, CoreError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(CoreError::invalid(name, value, "a finite number >= 0"))
    }
}

/// Checks that a count is at least 1.
pub fn at_least_one(name: &'static str, value: usize) -> Result<usize, CoreError> {
    if value == 0 {
        Err(CoreError::invalid(name, value, "at least 1"))
    } else {
        Ok(value)
    }
}

/// Checks that `x` has `columns` columns.
pub fn check_columns(
    what: &'static str,
    x: ArrayView2<f64>,
    columns: usize,
) -> Result<(), CoreError> {
    if x.ncols() != columns {
        return Err(CoreError::shape(what, columns, x.ncols()));
    }
    Ok(())
}

/// Checks that every value of `x` is finite; the first one that is not (row-major order) is
/// the error, named `what` ("input", "training", ...).
pub fn check_finite(what: &'static str, x: ArrayView2<f64>) -> Result<(), CoreError> {
    for ((row, column), &value) in x.indexed_iter() {
        if !value.is_finite() {
            return Err(CoreError::NonFiniteInput {
                what,
                row,
                column,
                value,
            });
        }
    }
    Ok(())
}

/// Checks that `x` has at least one row and one column.
pub fn check_non_empty(what: &'static str, x: ArrayView2<f64>) -> Result<(), CoreError> {
    if x.nrows() == 0 || x.ncols() == 0 {
        return Err(CoreError::EmptyInput {
            what,
            rows: x.nrows(),
            columns: x.ncols(),
            needed: "at least one row and one column",
        });
    }
    Ok(())
}

/// Checks targets: one per row (`rows`), all finite.
pub fn check_targets(y: &[f64], rows: usize) -> Result<(), CoreError> {
    if y.len() != rows {
        return Err(CoreError::shape("targets vs training rows", rows, y.len()));
    }
    if let Some((row, &value)) = y.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(CoreError::NonFiniteInput {
            what: "targets",
            row,
            column: 0,
            value,
        });
    }
    Ok(())
}
