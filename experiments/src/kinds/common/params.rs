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

/// The serialised parameters restricted to `keys`: the stream of a method that reads only
/// those ([`crate::kinds::Kind::stream`]), so that a parameter only other methods read leaves
/// its random draws, and so its numbers, unchanged.
pub fn read_by<P: serde::Serialize>(params: &P, keys: &[&str]) -> serde_json::Value {
    let all = serde_json::to_value(params).expect("parameters serialise");
    serde_json::Value::Object(
        all.as_object()
            .map(|o| {
                o.iter()
                    .filter(|(k, _)| keys.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default(),
    )
}
