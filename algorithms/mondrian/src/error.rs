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
    /// New points whose number of coordinates differs from that of the sampling data.
    #[error("input has {got} columns but the trees were sampled on {expected}-dimensional points")]
    DimensionMismatch { expected: usize, got: usize },
    /// No points, or points without dimensions.
    #[error("input has {rows} rows and {columns} columns; need at least one of each")]
    EmptyInput { rows: usize, columns: usize },
}

impl From<MondrianError> for kernel_core::CoreError {
    /// For callers behind kernel-core's model traits ([`kernel_core::FeatureMap`]).
    fn from(e: MondrianError) -> Self {
        use kernel_core::CoreError;
        match e {
            MondrianError::InvalidLifetime(value) => CoreError::InvalidParameter {
                name: "lifetime",
                value: value.to_string(),
                expected: "a finite number >= 0",
            },
            MondrianError::NoTrees => CoreError::InvalidParameter {
                name: "n_mondrians",
                value: "0".into(),
                expected: "at least 1",
            },
            MondrianError::InvalidBox(value) => CoreError::InvalidParameter {
                name: "box",
                value,
                expected: "finite lower <= upper in each of at least one dimension",
            },
            MondrianError::NonFiniteInput { row, column, value } => {
                CoreError::NonFiniteInput { row, column, value }
            }
            MondrianError::DimensionMismatch { expected, got } => CoreError::ShapeMismatch {
                what: "input columns vs the dimension the trees were sampled on",
                expected,
                got,
            },
            MondrianError::EmptyInput { rows, columns } => CoreError::InvalidParameter {
                name: "input shape",
                value: format!("{rows} x {columns}"),
                expected: "at least one row and one column",
            },
        }
    }
}

pub(crate) fn check_lifetime(lifetime: f64) -> Result<f64, MondrianError> {
    if lifetime.is_finite() && lifetime >= 0.0 {
        Ok(lifetime)
    } else {
        Err(MondrianError::InvalidLifetime(lifetime))
    }
}
