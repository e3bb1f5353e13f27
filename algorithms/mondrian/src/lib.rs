//! The Mondrian process and the Mondrian kernel (Balog, Lakshminarayanan, Ghahramani, Roy, Teh;
//! *The Mondrian Kernel*, UAI 2016).
//!
//! * [`process`]: the Mondrian process MP(λ, box) of Roy & Teh (2009): competing exponential
//!   clocks, cut time `~ Exp(linear dimension)`, dimension chosen proportionally to side length,
//!   location uniform;
//! * [`tree`]: one Mondrian tree restricted to a finite point set (the construction of the paper
//!   and of the authors' code: every cell's box is the bounding box of its own points);
//! * [`forest`]: M independent trees and the Mondrian kernel feature map
//!   `φ(x) ∈ {0, 1/√M}^C` with exactly M non-zeros, whose inner products estimate the Laplace
//!   kernel `exp(−λ‖x − x'‖₁)`;
//! * [`sweep`]: the lifetime sweep, the features of every λ ≤ Λ from one sample to Λ;
//! * [`learners`]: ridge and SGD on the sweep's features, the forest's closed form.
//!
//! The forest is a [`kernel_core::FeatureMap`]; errors are [`kernel_core::CoreError`]'s
//! ([`MondrianError`]); the lifetime is checked as a [`kernel_core::Lifetime`] (finite, ≥ 0).
//! The `serde` feature serialises [`Preconditioner`] for configs.

pub mod forest;
pub mod learners;
pub mod process;
pub mod sweep;
pub mod tree;

mod error;
pub use error::MondrianError;
pub use forest::MondrianForest;
pub use kernel_core::Lifetime;
pub use learners::{
    forest_fit, ForestFit, KernelFit, KernelRidgeSweep, KernelSgdSweep, Preconditioner, SweepFit,
    SweepForest, SweepLearner, DENSE_BELOW,
};
pub use process::{sample_box_partition, sample_cut, AxisBox, Cut};
pub use sweep::{SweepEvent, SweepState};
pub use tree::{MondrianTree, Split};
