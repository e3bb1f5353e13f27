//! The reproduction harness behind the `repro` binary.
//!
//! ```text
//! configs/x.toml --parse+validate--> ResolvedConfig --plan--> [Cell] --run (rayon)--> [Row]
//!   --> results/<experiment>/<run>.parquet + results/_runs/<experiment>/<run>.manifest.json --> figures/<experiment>/<run>.{png,svg}
//!                                                          --> [[check]] bounds
//! ```
//!
//! Layers, bottom first: a module imports only modules of lower layers (`tests/layers.rs` reads
//! the sources and this block, and fails otherwise). Inside `kinds`, a paper's folder imports
//! `kinds::common` and its own modules, never another paper's.
//!
//! ```text
//! 0  keys files seeds toml_table blas | leaves: digests, atomic writes, seed material, typed tables,
//!                                    | the BLAS kernels
//! 1  table fingerprint upstream      | result rows and Parquet; code fingerprints of cache keys;
//!                                    | the authors' code (fetch, verify, patch, build, run)
//! 2  provenance stats data context   | run provenance; row statistics; [data]; a cell's context
//! 3  store check summary plot kinds  | cell cache and manifests; [[check]]; [[reference]] and
//!                                    | [[summary]]; [[plot]]; the experiment kinds (data -> rows)
//! 4  registry cell                   | kinds by name; the unit of work
//! 5  config                          | load, resolve, validate, expand the grid
//! 6  plan artefacts                  | the cells of a config, their keys and seeds; the papers'
//!                                    | artefact lists and their verdicts
//! 7  report runner                   | REPORT.md and its dashboard; running the cells of a config
//! 8  html                            | the report as static HTML pages
//! 9  commands                        | the `repro` subcommands
//! ```

/// Re-exported for [`register_kind!`].
pub use inventory;

pub mod artefacts;
pub mod blas;
pub mod cell;
pub mod check;
pub mod commands;
pub mod config;
pub mod context;
pub mod data;
pub mod files;
pub mod fingerprint;
pub mod html;
pub mod keys;
pub mod kinds;
pub mod plan;
pub mod plot;
pub mod provenance;
pub mod registry;
pub mod report;
pub mod runner;
pub mod seeds;
pub mod stats;
pub mod store;
pub mod summary;
pub mod table;
pub mod toml_table;
pub mod upstream;
