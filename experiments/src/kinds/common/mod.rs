//! Helpers that kinds of two or more papers use, one concept per module. A kind imports these,
//! never another paper's kind; helpers of one paper live in that paper's folder.
//!
//! * [`clock`]: per-thread CPU time;
//! * [`params`]: checks of parameters and data that several kinds share;
//! * [`upstream_rows`]: the rows the authors' code returned, as a kind's rows.

pub mod clock;
pub mod params;
pub mod upstream_rows;
