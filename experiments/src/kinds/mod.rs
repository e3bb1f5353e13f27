//! Experiment kinds: what a config's cells compute, grouped by paper (`kinds/<paper>/`).
//!
//! A kind implements [`Kind`]: its own typed `Params` (one grid point of `[params]`, unknown keys
//! rejected, checked once when the config is planned), `Shared` data (built once per data split),
//! the columns of its rows, which parameters decide its random draws, and `run_cell` with the
//! typed parameters and a [`CellContext`] (seeds, progress, budget). What its numbers depend on
//! (its cache key) is read from its file and that file's imports ([`crate::fingerprint`]). One
//! generic adapter ([`Adapter`]) turns any `Kind` into the object-safe [`ExperimentKind`] that
//! the runner uses, so a kind holds no forwarding code and never sees `Any`.
//!
//! A kind registers itself where it is defined (`crate::register_kind!(MyKind);`, collected by
//! [`crate::registry`]); helpers that kinds of two or more papers use live in `kinds/common/`,
//! helpers of one paper in its folder; a paper's kinds never import another paper's.

pub mod a_la_carte;
pub mod common;
pub mod isolation_kernel;
pub mod kind;
pub mod mondrian;
pub mod random_tessellation;
pub mod streamrak;

pub use kind::{
    Adapter, ColumnDoc, ExperimentKind, Kind, Params, PointParams, Registration, Shared,
};
