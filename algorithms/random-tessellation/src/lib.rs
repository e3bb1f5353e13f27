//! Random Tessellation Forests (Ge, Wang, Teh, Wang, Elliott; *Random Tessellation Forests*,
//! NeurIPS 2019). Spec: `shared/specs/random-tessellation-forests.md`.
//!
//! * RTP priors, cells, cut rates, hyperplane sampling, the Dirichlet-multinomial likelihood,
//!   SMC per tree and forests (the method family of the paper);
//! * [`preprocess`]: gene-set preprocessing fitted on a training split (top-variance probes,
//!   PCA, min-max scaling, prior weights from explained variance);
//! * [`baselines`]: the paper's comparison methods (mode label, L2 logistic regression, RBF
//!   SVM, random forest).
//!
//! The forests ([`Forest`]) and the baselines ([`Baseline`]) are [`kernel_core::Classifier`]s
//! (fitted on [`kernel_core::LabelledRows`], predicting test rows from a seed). Every fallible
//! function returns [`RtfError`] (the shared [`kernel_core::CoreError`] beside the crate's own
//! failures); the forests, the preprocessing and the baselines check the inputs of a labelled
//! fit (train, labels, `n_classes`, test) with the same checks, in the same order. The `serde`
//! feature (de)serialises the named settings ([`PriorKind`], [`CutRate`], [`Routing`],
//! [`TreePrediction`], [`AlphaForm`], [`Scaling`], [`WeightRule`]) by their snake_case names.

pub mod baselines;
pub mod preprocess;
pub use baselines::Baseline;
pub use preprocess::{prepare, Prepared, Preprocessing, Scaling, WeightRule};

mod cell;
pub mod diameter;
mod error;
pub mod forest;
pub mod hyperplane;
mod input;
pub mod likelihood;
pub mod planar;
mod points;
pub mod prior;
mod settings;
mod smc;
pub mod tree;

pub use diameter::{bounding_sphere, subset_diameter, Diameter};
pub use error::RtfError;
pub use forest::{
    AlphaForm, Classification, CutRate, Forest, ForestConfig, ForestStats, Routing, TreeFit,
    TreePrediction, TreeReport, TreeStats,
};
pub use hyperplane::{sample_ball_hyperplane, sample_cell_hyperplane, HyperplaneSample};
pub use likelihood::{dirichlet_alpha, log_likelihood};
pub use planar::{tessellate_rectangle, MAX_PLANAR_CELLS};
pub use prior::{Direction, Hyperplane, Prior, PriorKind};
pub use smc::THINNING_MISSES;
pub use tree::{Leaf, Node, Tree, TreeSplit};
