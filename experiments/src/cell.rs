//! Cells: the unit of work, one (parameter point, repetition) of an experiment.
//!
//! A cell's identity is a canonical JSON string of (kind, data, parameters, repetition): keys
//! sorted, numbers typed by the experiment kind, so it does not depend on the order of the grid or
//! on how a number was written. Its random streams are ChaCha8 generators seeded from a hash of
//! (base seed, identity, purpose), never from a counter: adding cells or changing the thread count
//! leaves every other cell's numbers unchanged. A kind may seed from part of the identity
//! ([`ExperimentKind::stream_params`]) so that cells differing only in non-random parameters
//! share their draws.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::config::ResolvedConfig;
use crate::data::DataSpec;
use crate::kinds::ExperimentKind;

/// Columns every result table starts with.
pub const IDENTITY_COLUMNS: [&str; 3] = ["experiment", "cell", "rep"];
/// Column of runs with a cell budget: `finished` or `did_not_finish`.
pub const STATUS_COLUMN: &str = "cell_status";
/// Timing column every result table ends with (wall seconds of the whole cell).
pub const TIMING_COLUMNS: [&str; 1] = ["cell_seconds"];

/// One unit of work.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Canonical parameters of the grid point (a JSON object).
    pub params: serde_json::Value,
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

/// Seed material from which a cell draws independent streams per purpose.
#[derive(Debug, Clone, Copy)]
pub struct Seeds([u8; 32]);

impl Seeds {
    /// An independent ChaCha8 stream for one purpose (`"trees"`, `"features"`, ...).
    pub fn rng(&self, purpose: &str) -> ChaCha8Rng {
        ChaCha8Rng::from_seed(self.derive(purpose).0)
    }

    /// Seed material from raw bytes (tests, tools).
    pub fn from_bytes(bytes: [u8; 32]) -> Seeds {
        Seeds(bytes)
    }

    /// Independent seed material for one purpose (e.g. the streams of one repetition).
    pub fn derive(&self, purpose: &str) -> Seeds {
        let mut h = Sha256::new();
        h.update(self.0);
        h.update(purpose.as_bytes());
        Seeds(h.finalize().into())
    }
}

fn seeds_from(base_seed: u64, domain: &str, identity: &str) -> Seeds {
    let mut h = Sha256::new();
    h.update(domain.as_bytes());
    h.update(base_seed.to_le_bytes());
    h.update(identity.as_bytes());
    Seeds(h.finalize().into())
}

/// Seeds of a run's data (synthetic data, splits, streams), from (base seed, data spec): the
/// same for every cell of the run.
pub fn data_seeds(base_seed: u64, data: &DataSpec) -> Seeds {
    let spec = serde_json::to_string(&serde_json::to_value(data).expect("data spec serialises"))
        .expect("json");
    seeds_from(base_seed, "repro-data-v1", &spec)
}

/// All cells of a resolved config, in grid order then repetition order.
pub fn plan(resolved: &ResolvedConfig, kind: &dyn ExperimentKind) -> Result<Vec<Cell>, String> {
    let config = &resolved.config;
    let fingerprint = crate::fingerprint::run_fingerprint(kind, &config.data)?;
    let data = serde_json::to_value(&config.data).expect("data spec serialises");
    let mut cells = Vec::new();
    for (params, &point_repeats) in resolved.grid.iter().zip(&resolved.repeats) {
        // A deterministic method gives the same numbers in every repetition only when the
        // repetitions share their split.
        let repeats = if kind.deterministic(params)? && config.data.fixed_split() {
            1
        } else {
            point_repeats
        };
        for rep in 0..repeats {
            let identity = serde_json::to_string(&json!({
                "kind": kind.name(),
                "data": data,
                "params": params,
                "rep": rep,
            }))
            .expect("json");
            let key = crate::store::sha256_hex(
                format!(
                    "{identity}|seed={}|code={}|sources={}",
                    config.seed,
                    kind.code_version(),
                    fingerprint
                )
                .as_bytes(),
            );
            let stream = serde_json::to_string(&json!({
                "kind": kind.name(),
                "data": data,
                "params": kind.stream_params(params)?,
                "rep": rep,
            }))
            .expect("json");
            cells.push(Cell {
                params: params.clone(),
                rep,
                seeds: seeds_from(config.seed, "repro-cell-v1", &stream),
                identity,
                key,
            });
        }
    }
    Ok(cells)
}

/// Column names of the result table: identity, parameters (sorted), the kind's measurements,
/// the cell status (runs with a cell budget only), timing.
pub fn all_columns(
    kind: &dyn ExperimentKind,
    grid: &[serde_json::Value],
    budgeted: bool,
) -> Vec<String> {
    let mut columns: Vec<String> = IDENTITY_COLUMNS.iter().map(|s| s.to_string()).collect();
    let mut params: Vec<String> = grid
        .iter()
        .filter_map(|p| p.as_object())
        .flat_map(|o| o.keys().cloned())
        .collect();
    params.sort();
    params.dedup();
    columns.extend(params);
    columns.extend(kind.columns().iter().map(|c| c.name.to_string()));
    if budgeted {
        columns.push(STATUS_COLUMN.to_string());
    }
    columns.extend(TIMING_COLUMNS.iter().map(|s| s.to_string()));
    columns
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn purposes_give_independent_reproducible_streams() {
        let s = seeds_from(1, "d", "x");
        let a: u64 = s.rng("trees").random();
        let b: u64 = s.rng("features").random();
        assert_ne!(a, b);
        assert_eq!(a, seeds_from(1, "d", "x").rng("trees").random::<u64>());
        assert_ne!(a, seeds_from(2, "d", "x").rng("trees").random::<u64>());
    }
}
