//! StreaMRAK (Oslandsbotn, Kereta, Naumova, Freund, Cloninger; 2022): streaming
//! multi-resolution adaptive kernel regression. Spec: `specs/streamrak.md`.
//!
//! * [`cover_tree`]: the damped cover tree built one streamed point at a time (§3): covering,
//!   separation with the Bernoulli relaxation, the saturation latch and damping;
//! * [`levels`]: level covering fractions, readiness and landmark selection (§4);
//! * [`statistics`]: a level's streamed sufficient statistics, convergence measures and the
//!   collector that decides when the level is fitted (§5);
//! * [`kernel`]: the Gaussian kernel of every level;
//! * [`falkon`]: the preconditioned CG solve of one level from its sufficient statistics (§6),
//!   kernel-core's CG;
//! * [`model`]: the streaming driver of the Laplacian pyramid (§2, §5);
//! * [`baselines`]: FALKON with one bandwidth and LP-KRR (§7).
//!
//! StreaMRAK, FALKON and LP-KRR are [`kernel_core::StreamingRegressor`]s, a fitted level a
//! [`kernel_core::Predictor`]; errors are [`kernel_core::CoreError`]'s ([`StreamError`]).

mod band;
pub mod baselines;
mod child_blocks;
pub mod cover_tree;
mod error;
pub mod falkon;
pub mod kernel;
pub mod levels;
pub mod model;
pub mod statistics;

pub use cover_tree::{CoverTreeParams, DampedCoverTree, Insertion};
pub use error::StreamError;
pub use levels::{LevelMonitor, LevelParams};
