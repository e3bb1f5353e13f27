use thiserror::Error;

/// Invalid parameters or inputs of the Isolation Kernel maps.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum IsolationError {
    /// A parameter outside its domain (`psi < 2`, `t = 0`, a zero height limit, ...).
    #[error("invalid parameter {name} = {value}: expected {expected}")]
    InvalidParameter {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    /// The subsample size ψ exceeds the number of points it is drawn from (without replacement).
    #[error("psi = {psi} exceeds the {n} points the subsamples are drawn from; lower psi or pass more points")]
    PsiExceedsData { psi: usize, n: usize },
    /// An input row's dimension differs from the one the map was built for.
    #[error(
        "input has {got} columns but the isolation kernel was built for {expected} dimensions"
    )]
    DimensionMismatch { expected: usize, got: usize },
    /// An input value is NaN or infinite.
    #[error("input row {row}, column {column} is not finite ({value}); remove or impute it")]
    NonFiniteInput {
        row: usize,
        column: usize,
        value: f64,
    },
    /// A sparse row or CSR matrix breaks its invariants.
    #[error("malformed sparse input (row {row}): {reason}")]
    MalformedSparse { row: usize, reason: String },
    /// A weight vector or index vector of the wrong length for `t·ψ` / `t`.
    #[error("length mismatch: {what} (expected {expected}, got {got})")]
    LengthMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },
}

impl From<IsolationError> for kernel_core::CoreError {
    /// For callers behind kernel-core's model traits ([`kernel_core::FeatureMap`]).
    fn from(e: IsolationError) -> Self {
        use kernel_core::CoreError;
        match e {
            IsolationError::InvalidParameter {
                name,
                value,
                expected,
            } => CoreError::InvalidParameter {
                name,
                value,
                expected,
            },
            IsolationError::PsiExceedsData { psi, n } => CoreError::InvalidParameter {
                name: "psi",
                value: format!("{psi} (data has {n} points)"),
                expected: "at most the number of points",
            },
            IsolationError::DimensionMismatch { expected, got } => CoreError::ShapeMismatch {
                what: "input columns vs the dimension the isolation kernel was built for",
                expected,
                got,
            },
            IsolationError::NonFiniteInput { row, column, value } => {
                CoreError::NonFiniteInput { row, column, value }
            }
            IsolationError::MalformedSparse { row, reason } => CoreError::InvalidParameter {
                name: "sparse input",
                value: format!("row {row}: {reason}"),
                expected: "strictly increasing column indices below the dimension",
            },
            IsolationError::LengthMismatch {
                what,
                expected,
                got,
            } => CoreError::ShapeMismatch {
                what,
                expected,
                got,
            },
        }
    }
}
