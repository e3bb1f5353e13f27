//! Cells: the unit of work, one (parameter point, repetition) of an experiment.
//!
//! A cell's identity is a canonical JSON string of (kind, data, parameters, repetition): keys
//! sorted, numbers typed by the experiment kind, so it does not depend on the order of the grid or
//! on how a number was written. Its random streams are ChaCha8 generators seeded from a hash of
//! (base seed, identity, purpose), never from a counter: adding cells or changing the thread count
//! leaves every other cell's numbers unchanged. A kind may seed from part of the identity
//! ([`crate::kinds::Kind::stream`]) so that cells differing only in non-random parameters
//! share their draws.

use crate::seeds::Seeds;

use crate::kinds::{ExperimentKind, PointParams};

/// Columns every result table starts with.
/// (`run` and `profile` name the stored run, so that tables of several runs concatenate into
/// one dataset and stay apart.)
pub const IDENTITY_COLUMNS: [&str; 5] = ["experiment", "run", "profile", "cell", "rep"];
/// Column of runs with a cell budget: `finished` or `did_not_finish`.
pub const STATUS_COLUMN: &str = "cell_status";
/// Timing column every result table ends with (wall seconds of the whole cell).
pub const TIMING_COLUMNS: [&str; 1] = ["cell_seconds"];

/// One unit of work.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The grid point's parameters, checked once when the config was planned.
    pub params: PointParams,
    /// Repetition index, `0..repeats`.
    pub rep: usize,
    /// Canonical identity string.
    pub identity: String,
    /// Cache key: sha256 of (identity, base seed, kind code version, the run's code
    /// fingerprint: [`crate::fingerprint::run_fingerprint`]), hex.
    pub key: String,
    /// Per-cell seed material.
    pub seeds: Seeds,
}

/// The parameter columns of a grid's table (every key of any point), sorted.
pub fn parameter_columns(grid: &[PointParams]) -> Vec<String> {
    let mut params: Vec<String> = grid
        .iter()
        .filter_map(|p| p.canonical.as_object())
        .flat_map(|o| o.keys().cloned())
        .collect();
    params.sort();
    params.dedup();
    params
}

/// Column names of the result table: identity, parameters (sorted), the kind's measurements,
/// the cell status (runs with a cell budget only), timing.
pub fn all_columns(kind: &dyn ExperimentKind, grid: &[PointParams], budgeted: bool) -> Vec<String> {
    let mut columns: Vec<String> = IDENTITY_COLUMNS.iter().map(|s| s.to_string()).collect();
    columns.extend(parameter_columns(grid));
    columns.extend(kind.columns().iter().map(|c| c.name.to_string()));
    if budgeted {
        columns.push(STATUS_COLUMN.to_string());
    }
    columns.extend(TIMING_COLUMNS.iter().map(|s| s.to_string()));
    columns
}
