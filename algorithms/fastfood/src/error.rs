//! The crate's errors are [`CoreError`]'s: settings outside their domain
//! ([`CoreError::InvalidParameter`]), empty or non-finite inputs and targets
//! ([`CoreError::EmptyInput`], [`CoreError::NonFiniteInput`]), lengths that differ
//! ([`CoreError::ShapeMismatch`]), and numerical failures of the marginal likelihood or the
//! optimiser ([`CoreError::Solve`]: a matrix not positive definite, a non-finite objective; the
//! optimiser steps back from such points).

use kernel_core::error::{check_columns, check_finite, check_non_empty};
use kernel_core::CoreError;

/// The error of every fallible function of the crate.
pub type FastfoodError = CoreError;

pub(crate) use kernel_core::error::{at_least_one, check_targets};

/// Checks that a matrix of inputs is non-empty, has `columns` columns (if given) and is finite.
pub(crate) fn check_inputs(
    what: &'static str,
    x: ndarray::ArrayView2<f64>,
    columns: Option<usize>,
) -> Result<(), FastfoodError> {
    check_non_empty(what, x)?;
    if let Some(c) = columns {
        check_columns("input columns vs the model's dimension", x, c)?;
    }
    check_finite(what, x)
}
