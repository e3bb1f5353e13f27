use kernel_core::CoreError;
use thiserror::Error;

/// Errors of the Isolation Kernel maps and learners: the shared ones of [`CoreError`] (a
/// parameter outside its domain, `psi < 2`, `t = 0`, a label outside {-1, +1}; rows of the wrong
/// dimension or index vectors of the wrong length; non-finite values), and the crate's own.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum IsolationError {
    /// A failure every method shares.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// The subsample size ψ exceeds the number of points it is drawn from (without replacement).
    #[error("psi = {psi} exceeds the {n} points the subsamples are drawn from; lower psi or pass more points")]
    PsiExceedsData { psi: usize, n: usize },
    /// A sparse row or CSR matrix breaks its invariants.
    #[error("malformed sparse input (row {row}): {reason}")]
    MalformedSparse { row: usize, reason: String },
}

impl From<IsolationError> for CoreError {
    /// For callers behind kernel-core's [`kernel_core::FeatureMap`], whose error is
    /// [`CoreError`].
    fn from(e: IsolationError) -> Self {
        match e {
            IsolationError::Core(e) => e,
            IsolationError::PsiExceedsData { psi, n } => CoreError::InvalidParameter {
                name: "psi",
                value: format!("{psi} (data has {n} points)"),
                expected: "at most the number of points",
            },
            IsolationError::MalformedSparse { row, reason } => CoreError::InvalidInput {
                what: "sparse input",
                value: format!("row {row}: {reason}"),
                expected: "strictly increasing column indices below the dimension",
            },
        }
    }
}
