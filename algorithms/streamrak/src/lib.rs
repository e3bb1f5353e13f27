//! StreaMRAK (Oslandsbotn, Kereta, Naumova, Freund, Cloninger; 2022): streaming
//! multi-resolution adaptive kernel regression. Spec: `specs/streamrak.md`.
//!
//! * [`cover_tree`]: the damped cover tree built one streamed point at a time (§3): covering,
//!   separation with the Bernoulli relaxation, the saturation latch and damping.

pub mod cover_tree;

pub use cover_tree::{CoverTreeParams, DampedCoverTree, Insertion, StreamError};
