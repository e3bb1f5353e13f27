use thiserror::Error;

/// Errors of the shared numerics: invalid parameters or inputs whose shapes do not agree.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CoreError {
    /// Two inputs whose sizes must agree do not.
    #[error("shape mismatch: {what} (expected {expected}, got {got})")]
    ShapeMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// A parameter outside its domain, e.g. a non-positive lifetime.
    #[error("invalid parameter {name} = {value}: {expected}")]
    InvalidParameter {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    /// An input point has a NaN or infinite coordinate.
    #[error("input row {row}, column {column} is not finite ({value}); remove or impute it")]
    NonFiniteInput {
        row: usize,
        column: usize,
        value: f64,
    },
    /// A linear system could not be solved (matrix not positive definite).
    #[error("linear solve failed: {0}")]
    Solve(String),
}

/// Checks that `value` is finite and strictly positive.
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64, CoreError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(CoreError::InvalidParameter {
            name,
            value: value.to_string(),
            expected: "a finite number > 0",
        })
    }
}

/// Checks that `value` is finite and non-negative.
pub(crate) fn non_negative(name: &'static str, value: f64) -> Result<f64, CoreError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(CoreError::InvalidParameter {
            name,
            value: value.to_string(),
            expected: "a finite number >= 0",
        })
    }
}
