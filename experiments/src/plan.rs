//! Planning: the cells of a resolved config, their identities, cache keys and seeds (see
//! [`crate::cell`]).

use serde_json::json;

use crate::cell::Cell;
use crate::config::ResolvedConfig;
use crate::kinds::ExperimentKind;
use crate::seeds::seeds_from;

/// All cells of a resolved config, in grid order then repetition order.
pub fn plan(resolved: &ResolvedConfig, kind: &dyn ExperimentKind) -> Result<Vec<Cell>, String> {
    let config = &resolved.config;
    let fingerprint =
        crate::fingerprint::run_fingerprint(kind.name(), kind.type_path(), config.data.sources())?;
    let data = serde_json::to_value(&config.data).expect("data spec serialises");
    // Kernels for other instruction sets round differently (see crate::blas).
    let blas = crate::blas::kernels();
    let mut cells = Vec::new();
    for (params, &point_repeats) in resolved.grid.iter().zip(&resolved.repeats) {
        // A deterministic method gives the same numbers in every repetition only when the
        // repetitions share their split.
        let repeats = if params.deterministic && config.data.fixed_split() {
            1
        } else {
            point_repeats
        };
        // The authors' code a cell runs counts with its pin and kit (patches, driver).
        let upstream = match params.upstream {
            Some(name) => {
                let u = crate::upstream::find(name)?;
                format!("|upstream={name}:{}", u.kit_digest())
            }
            None => String::new(),
        };
        for rep in 0..repeats {
            let identity = serde_json::to_string(&json!({
                "kind": kind.name(),
                "data": data,
                "params": params.canonical,
                "rep": rep,
            }))
            .expect("json");
            let key = crate::keys::sha256_hex(
                format!(
                    "{identity}|seed={}|code={}|sources={}|blas={blas}{upstream}",
                    config.seed,
                    kind.code_version(),
                    fingerprint
                )
                .as_bytes(),
            );
            let stream = serde_json::to_string(&json!({
                "kind": kind.name(),
                "data": data,
                "params": params.stream,
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
