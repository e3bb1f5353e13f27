//! The crate's errors are [`CoreError`]'s: a negative or non-finite lifetime and no trees are
//! [`CoreError::InvalidParameter`] (`lifetime`, `n_mondrians`), a bad box `box`, new points of
//! another dimension [`CoreError::ShapeMismatch`], and empty or non-finite data
//! [`CoreError::EmptyInput`] / [`CoreError::NonFiniteInput`].

use kernel_core::{CoreError, Lifetime};

/// The error of every fallible function of the crate.
pub type MondrianError = CoreError;

/// λ checked as a [`Lifetime`] (finite, ≥ 0).
pub(crate) fn check_lifetime(lifetime: f64) -> Result<f64, MondrianError> {
    Lifetime::new(lifetime).map(Lifetime::get)
}
