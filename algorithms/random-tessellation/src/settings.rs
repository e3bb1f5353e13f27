//! The named settings of a forest ([`crate::ForestConfig`]) that the cells and the SMC read too:
//! the cut-rate scheme (D2), the tree's prediction (D5), the routing of test rows (D3). With the
//! `serde` feature they are (de)serialised by their snake_case names (`half_diameter`,
//! `weighted_vote`, `transductive`, ...).

/// The cut-rate scheme (D2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum CutRate {
    /// tess19: Λ_a = dist.max / 2, Algorithm-2 timing, rejection with `max_rejections` tries.
    #[default]
    HalfDiameter,
    /// Supp. Alg. 1: exact Poisson thinning from an enclosing ball (Ritter) of rate r_a.
    ExactThinning,
    /// The main text's Algorithm 2 with its spherical approximation: the cell's lifetime rate is
    /// Λ of its enclosing ball, r_a (Ritter), for the uniform priors, and the exact Λ([a]) =
    /// Σ_j ω_j extent_j / 2 of its box for the Mondrian priors ("for the MRTP and wMRTP, Λ([a])
    /// can be computed exactly"); the cut is drawn from Λ restricted to that ball or box and kept
    /// when it hits the cell's training items (up to `max_rejections` tries, as tess19).
    EnclosingBall,
}

/// Which particle(s) a tree predicts with (D5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum TreePrediction {
    /// The highest-weight particle only (tess19).
    #[default]
    Map,
    /// Every particle votes with its normalised weight.
    WeightedVote,
}

/// Which items the cells hold (D3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Routing {
    /// Training items only; test points are routed by the stored hyperplanes.
    #[default]
    Inductive,
    /// tess19: train and test items in the cells, dist.max over both, offsets from the training
    /// range only (no effect on the law under [`CutRate::ExactThinning`], whose balls enclose
    /// the training items that define the cell). Under [`CutRate::EnclosingBall`] the ball or
    /// box encloses the test items too (the paper augments the training set with the unlabelled
    /// test rows), and cuts are kept when they hit the training items.
    Transductive,
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;
    use crate::{AlphaForm, PriorKind, Scaling, WeightRule};

    /// The names configs write.
    #[test]
    fn settings_are_named_in_snake_case() {
        let name = |v: serde_json::Value| v.as_str().unwrap().to_string();
        assert_eq!(
            name(serde_json::to_value(CutRate::ExactThinning).unwrap()),
            "exact_thinning"
        );
        assert_eq!(
            name(serde_json::to_value(CutRate::EnclosingBall).unwrap()),
            "enclosing_ball"
        );
        assert_eq!(
            name(serde_json::to_value(TreePrediction::WeightedVote).unwrap()),
            "weighted_vote"
        );
        assert_eq!(
            name(serde_json::to_value(Routing::Transductive).unwrap()),
            "transductive"
        );
        assert_eq!(name(serde_json::to_value(AlphaForm::Code).unwrap()), "code");
        assert_eq!(
            name(serde_json::to_value(Scaling::MinMaxTrain).unwrap()),
            "min_max_train"
        );
        assert_eq!(
            name(serde_json::to_value(WeightRule::AnovaF).unwrap()),
            "anova_f"
        );
        assert_eq!(
            name(serde_json::to_value(PriorKind::Mondrian).unwrap()),
            "mondrian"
        );
        let r: Routing = serde_json::from_str("\"inductive\"").unwrap();
        assert_eq!(r, Routing::Inductive);
        assert!(serde_json::from_str::<CutRate>("\"half\"").is_err());
    }
}
