//! The one error type of the crate: the RTP samplers, the SMC, the forests, the preprocessing
//! and the baselines.

use kernel_core::CoreError;
use thiserror::Error;

/// Invalid parameters or inputs of the random tessellation samplers, forests, preprocessing and
/// baselines, or a failure inside a solver crate.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RtfError {
    /// A failure every method shares ([`CoreError`]): a hyperparameter or setting outside its
    /// domain (see [`crate::ForestConfig::check`]), an empty input, two lengths that differ
    /// (columns of the data vs the prior's dimension, labels vs rows, ...), non-finite values
    /// (`what`: "training", "test", "points"), a solver crate (smartcore, linfa-svm, LAPACK)
    /// that returned an error or panicked.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// The prior weights ω cannot be normalised to a probability vector.
    #[error("invalid prior weights: {0}; give one finite weight >= 0 per dimension, not all 0")]
    InvalidWeights(String),
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
    /// A fit that needs two classes got fewer ([`crate::baselines::logistic_fit`];
    /// [`crate::Baseline`]'s `fit_predict` predicts the single class instead).
    #[error("{present} class(es) present in the training labels; this fit needs at least 2")]
    TooFewClasses { present: usize },
    /// [`crate::WeightRule::ExplainedVariance`] without `pca`.
    #[error("weights from explained variance need PCA (set `pca`)")]
    ExplainedVarianceWithoutPca,
    /// PCA needs at least two training rows.
    #[error("PCA needs at least 2 training rows, got {rows}")]
    PcaTooFewRows { rows: usize },
    /// The (selected) training data are constant: no principal component exists.
    #[error("the training data are constant after selection: PCA has no component")]
    PcaNoVariance,
    /// A value of the preprocessing overflowed (inputs near `f64::MAX` squared by PCA); nothing
    /// non-finite is returned.
    #[error("preprocessing overflowed: the output would contain non-finite values")]
    NonFiniteOutput,
}

/// [`CoreError::InvalidParameter`] as an [`RtfError`].
pub(crate) fn invalid(
    name: &'static str,
    value: impl ToString,
    expected: &'static str,
) -> RtfError {
    CoreError::invalid(name, value, expected).into()
}
