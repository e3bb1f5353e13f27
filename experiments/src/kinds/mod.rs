//! Experiment kinds: what a config's cells compute, grouped by paper (`kinds/<paper>/`).
//!
//! A kind implements [`Kind`]: its own typed `Params` (one grid point of `[params]`, unknown keys
//! rejected, ranges checked) and `Shared` data (built once per data split), the columns of its
//! rows, the sources its numbers depend on (its cache key), which parameters decide its random
//! draws, and `run_cell` with a [`CellContext`] (seeds, progress, budget). One generic adapter
//! ([`Adapter`]) turns any `Kind` into the object-safe [`ExperimentKind`] that the runner uses, so
//! a kind holds no forwarding code and never sees `Any`.
//!
//! A kind registers itself where it is defined (`crate::register_kind!(MyKind);`, collected by
//! [`crate::registry`]); helpers that several kinds use live in
//! `kinds/common/`; a kind never imports another kind.

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
