//! The registered experiment kinds, by `experiment.kind` name. Each kind registers itself where
//! it is defined (`crate::register_kind!`); this module only collects them, so registering a
//! kind edits no central file and changes no other kind's cache keys.

use std::sync::OnceLock;

use crate::kinds::{ExperimentKind, Registration};

/// Every registered kind, by name.
pub fn all() -> &'static [&'static dyn ExperimentKind] {
    static KINDS: OnceLock<Vec<&'static dyn ExperimentKind>> = OnceLock::new();
    KINDS.get_or_init(|| {
        let mut kinds: Vec<&'static dyn ExperimentKind> = inventory::iter::<Registration>
            .into_iter()
            .map(|r| r.kind)
            .collect();
        kinds.sort_by_key(|k| k.name());
        kinds
    })
}

/// The kind named `name`.
pub fn find(name: &str) -> Result<&'static dyn ExperimentKind, String> {
    all()
        .iter()
        .copied()
        .find(|k| k.name() == name)
        .ok_or_else(|| {
            let known: Vec<_> = all().iter().map(|k| k.name()).collect();
            format!(
                "experiment.kind = {name:?} is unknown; known kinds: {}",
                known.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_kind_is_registered_once_under_its_name() {
        let names: Vec<&str> = super::all().iter().map(|k| k.name()).collect();
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(names, unique, "a kind name registered twice");
        for name in [
            "kernel_approximation",
            "lifetime_sweep",
            "batch_classification",
            "multiresolution_regression",
            "tessellation_classification",
            "fastfood_regression",
        ] {
            assert!(super::find(name).is_ok(), "{name}");
        }
        assert!(matches!(super::find("nope"), Err(e) if e.contains("known kinds")));
    }
}
