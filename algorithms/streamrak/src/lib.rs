//! StreaMRAK (Oslandsbotn, Kereta, Naumova, Freund, Cloninger; 2022): streaming
//! multi-resolution adaptive kernel regression. Spec: `specs/streamrak.md`.
//!
//! * [`cover_tree`]: the damped cover tree built one streamed point at a time (§3): covering,
//!   separation with the Bernoulli relaxation, the saturation latch and damping;
//! * [`levels`]: level covering fractions, readiness and landmark selection (§4);
//! * [`statistics`]: a level's streamed sufficient statistics and convergence measures (§5);
//! * [`falkon`]: the preconditioned CG solve of one level from its sufficient statistics (§6).

pub mod cover_tree;
pub mod falkon;
pub mod levels;
pub mod statistics;

pub use cover_tree::{CoverTreeParams, DampedCoverTree, Insertion, StreamError};
pub use levels::{LevelMonitor, LevelParams};
