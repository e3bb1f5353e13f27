use thiserror::Error;

/// Invalid parameters or inputs of the Mondrian samplers.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum MondrianError {
    /// The lifetime λ must be finite and non-negative.
    #[error("lifetime must be a finite number >= 0, got {0}")]
    InvalidLifetime(f64),
    /// At least one tree is needed.
    #[error("the number of Mondrian trees (M) must be at least 1")]
    NoTrees,
    /// A box needs `lower <= upper` in every dimension, and at least one dimension.
    #[error("invalid box: {0}")]
    InvalidBox(String),
    /// The data contain NaN or infinite values.
    #[error("input row {row}, column {column} is not finite ({value})")]
    NonFiniteInput {
        row: usize,
        column: usize,
        value: f64,
    },
    /// No points, or points without dimensions.
    #[error("input has {rows} rows and {columns} columns; need at least one of each")]
    EmptyInput { rows: usize, columns: usize },
}

pub(crate) fn check_lifetime(lifetime: f64) -> Result<f64, MondrianError> {
    if lifetime.is_finite() && lifetime >= 0.0 {
        Ok(lifetime)
    } else {
        Err(MondrianError::InvalidLifetime(lifetime))
    }
}
