//! Checks of parameters and data that several kinds share.

use crate::data::DataSpec;

/// `check_data` of kinds that need regression data (checked against the registry before any
/// work starts).
pub fn require_regression(kind: &str, data: &DataSpec) -> Result<(), String> {
    data.require_regression()
        .map_err(|e| format!("{kind} needs regression data: {e}"))
}

/// Checks that a lifetime-like parameter is finite and > 0.
pub fn positive(name: &str, value: f64) -> Result<(), String> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(format!("{name} = {value}: expected a finite number > 0"))
    }
}
