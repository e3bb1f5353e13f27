//! The one error type of the RTP samplers, the SMC and the forests.

use thiserror::Error;

/// Invalid parameters or inputs of the random tessellation samplers and forests.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RtfError {
    /// A hyperparameter outside its domain (see [`crate::ForestConfig::check`]).
    #[error("invalid {name} = {value}: expected {expected}")]
    InvalidParameter {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    /// The prior weights ω cannot be normalised to a probability vector.
    #[error("invalid prior weights: {0}; give one finite weight >= 0 per dimension, not all 0")]
    InvalidWeights(String),
    /// No rows, or rows without columns, where at least one of each is needed.
    #[error("{what} has {rows} rows and {columns} columns; need at least one of each")]
    EmptyInput {
        what: &'static str,
        rows: usize,
        columns: usize,
    },
    /// Two lengths (columns of the data vs the prior's dimension, labels vs rows, ...) differ.
    #[error("{what}: expected {expected}, got {got}")]
    ShapeMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// The data contain NaN or infinite values.
    #[error("{what} row {row}, column {column} is not finite ({value}); impute or drop it first")]
    NonFiniteInput {
        what: &'static str,
        row: usize,
        column: usize,
        value: f64,
    },
    /// A training label outside `0..n_classes`.
    #[error("label {label} of training row {row} is not below n_classes = {n_classes}")]
    LabelOutOfRange {
        row: usize,
        label: u32,
        n_classes: usize,
    },
    /// An index into the rows of a data matrix that does not exist.
    #[error("row index {index} is out of range for {rows} rows")]
    IndexOutOfRange { index: usize, rows: usize },
    /// The tess19 form of α (`ALPHA · round(n_k / n_1, 2)`) rounds a present class to 0,
    /// which gives every partition likelihood 0.
    #[error(
        "the code form of alpha rounds class {class} (n_k = {count}, n_1 = {reference}) to 0; \
         use the manual form or a larger ALPHA"
    )]
    DegenerateAlpha {
        class: usize,
        count: u32,
        reference: u32,
    },
    /// A geometric draw that would exceed the cell limit (the budget is too large).
    #[error("the draw exceeds {limit} cells; lower the budget")]
    TooManyCells { limit: usize },
}

pub(crate) fn invalid(
    name: &'static str,
    value: impl ToString,
    expected: &'static str,
) -> RtfError {
    RtfError::InvalidParameter {
        name,
        value: value.to_string(),
        expected,
    }
}
