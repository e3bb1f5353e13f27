//! The registered experiment kinds, by `experiment.kind` name. Registering a kind here changes
//! no other kind's cache keys (this file is not a numeric source).

use crate::kinds::{
    a_la_carte, isolation_kernel, mondrian, random_tessellation, streamrak, Adapter, ExperimentKind,
};

static KINDS: &[&dyn ExperimentKind] = &[
    &Adapter::<mondrian::kernel_approximation::KernelApproximation>::new(),
    &Adapter::<mondrian::feature_ridge::FeatureRidge>::new(),
    &Adapter::<mondrian::lifetime_sweep::LifetimeSweep>::new(),
    &Adapter::<mondrian::width_selection::WidthSelection>::new(),
    &Adapter::<isolation_kernel::batch_classification::BatchClassification>::new(),
    &Adapter::<isolation_kernel::online_stream::OnlineStream>::new(),
    &Adapter::<isolation_kernel::laplacian_agreement::LaplacianAgreement>::new(),
    &Adapter::<streamrak::multiresolution_regression::Multiresolution>::new(),
    &Adapter::<random_tessellation::tessellation_classification::TessellationClassification>::new(),
    &Adapter::<random_tessellation::tessellation_prior::TessellationPrior>::new(),
    &Adapter::<a_la_carte::fastfood_regression::FastfoodRegression>::new(),
    &Adapter::<a_la_carte::fastfood_scaling::FastfoodScaling>::new(),
    &Adapter::<a_la_carte::spectrum_recovery::SpectrumRecovery>::new(),
];

/// Every registered kind.
pub fn all() -> &'static [&'static dyn ExperimentKind] {
    KINDS
}

/// The kind named `name`.
pub fn find(name: &str) -> Result<&'static dyn ExperimentKind, String> {
    KINDS
        .iter()
        .copied()
        .find(|k| k.name() == name)
        .ok_or_else(|| {
            let known: Vec<_> = KINDS.iter().map(|k| k.name()).collect();
            format!(
                "experiment.kind = {name:?} is unknown; known kinds: {}",
                known.join(", ")
            )
        })
}
