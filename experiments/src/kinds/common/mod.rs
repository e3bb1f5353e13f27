//! Helpers that several kinds use, one concept per module. A kind imports these, never another
//! kind.
//!
//! * [`transductive`]: a regression split with its inputs stacked `[train; validation; test]`
//!   (transductive feature maps are built on all of them);
//! * [`sweep`]: the Mondrian lifetime sweep with its kernel learner, and its checkpoints;
//! * [`clock`]: per-thread CPU time;
//! * [`feature_maps`]: random feature maps by their config name.

pub mod clock;
pub mod feature_maps;
pub mod sweep;
pub mod transductive;

use crate::config::DataSpec;

/// `check_data` of kinds that need a regression dataset.
pub fn require_regression(kind: &str, data: &DataSpec) -> Result<(), String> {
    match data {
        DataSpec::UniformBox(_) => Err(format!(
            "{kind} needs regression data (source = \"dataset\" or \"laplace_gp\")"
        )),
        _ => Ok(()),
    }
}

/// Checks that a lifetime-like parameter is finite and > 0.
pub fn positive(name: &str, value: f64) -> Result<(), String> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(format!("{name} = {value}: expected a finite number > 0"))
    }
}
