use thiserror::Error;

/// Invalid parameters or inputs of the random feature maps.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum FeatureError {
    #[error("invalid parameter {name} = {value}: expected {expected}")]
    InvalidParameter {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("input has {got} columns but the feature map was drawn for {expected} dimensions")]
    DimensionMismatch { expected: usize, got: usize },
    #[error("input row {row}, column {column} is not finite ({value})")]
    NonFiniteInput {
        row: usize,
        column: usize,
        value: f64,
    },
    #[error(transparent)]
    Core(#[from] kernel_core::CoreError),
}

impl From<FeatureError> for kernel_core::CoreError {
    /// For callers behind kernel-core's model traits ([`kernel_core::FeatureMap`]).
    fn from(e: FeatureError) -> Self {
        use kernel_core::CoreError;
        match e {
            FeatureError::InvalidParameter {
                name,
                value,
                expected,
            } => CoreError::InvalidParameter {
                name,
                value,
                expected,
            },
            FeatureError::DimensionMismatch { expected, got } => CoreError::ShapeMismatch {
                what: "input columns vs the dimension the feature map was drawn for",
                expected,
                got,
            },
            FeatureError::NonFiniteInput { row, column, value } => {
                CoreError::NonFiniteInput { row, column, value }
            }
            FeatureError::Core(e) => e,
        }
    }
}

pub(crate) fn check_count(name: &'static str, value: usize) -> Result<usize, FeatureError> {
    if value == 0 {
        Err(FeatureError::InvalidParameter {
            name,
            value: value.to_string(),
            expected: "at least 1",
        })
    } else {
        Ok(value)
    }
}

pub(crate) fn check_input(x: ndarray::ArrayView2<f64>, dim: usize) -> Result<(), FeatureError> {
    if x.ncols() != dim {
        return Err(FeatureError::DimensionMismatch {
            expected: dim,
            got: x.ncols(),
        });
    }
    for ((row, column), &value) in x.indexed_iter() {
        if !value.is_finite() {
            return Err(FeatureError::NonFiniteInput { row, column, value });
        }
    }
    Ok(())
}
