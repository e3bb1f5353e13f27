//! The crate's errors are [`CoreError`]'s: counts of 0 and lifetimes outside their domain are
//! [`CoreError::InvalidParameter`], new points of another dimension
//! [`CoreError::ShapeMismatch`], NaN or infinite inputs [`CoreError::NonFiniteInput`].

use kernel_core::error::{at_least_one, check_columns, check_finite};
use kernel_core::CoreError;

/// The error of every fallible function of the crate.
pub type FeatureError = CoreError;

pub(crate) fn check_count(name: &'static str, value: usize) -> Result<usize, FeatureError> {
    at_least_one(name, value)
}

pub(crate) fn check_input(x: ndarray::ArrayView2<f64>, dim: usize) -> Result<(), FeatureError> {
    check_columns(
        "input columns vs the dimension the feature map was drawn for",
        x,
        dim,
    )?;
    check_finite("input", x)
}
