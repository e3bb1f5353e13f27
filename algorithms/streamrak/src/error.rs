//! The crate's errors are [`CoreError`]'s: parameters outside their domain
//! ([`CoreError::InvalidParameter`]), points or targets of the wrong length
//! ([`CoreError::ShapeMismatch`]), non-finite values ([`CoreError::NonFiniteInput`]) and failed
//! factorisations of a level's solve ([`CoreError::Solve`]).

use kernel_core::CoreError;

/// The error of every fallible function of the crate.
pub type StreamError = CoreError;

/// Checks that the point `x` and its targets `y`, row `row` of the stream, are finite.
pub(crate) fn check_finite_point(x: &[f64], y: &[f64], row: u64) -> Result<(), StreamError> {
    for (what, values) in [("streamed point", x), ("streamed target", y)] {
        if let Some((column, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(CoreError::NonFiniteInput {
                what,
                row: row as usize,
                column,
                value,
            });
        }
    }
    Ok(())
}
