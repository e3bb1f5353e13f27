//! The reproduction harness behind the `repro` binary.
//!
//! ```text
//! configs/x.toml --parse+validate--> ResolvedConfig --plan--> [Cell] --run (rayon)--> [Row]
//!   --> results/<experiment>/<run>.parquet + .manifest.json --> figures/<experiment>/<run>.{png,svg}
//!                                                          --> [[check]] bounds
//! ```

pub mod cell;
pub mod check;
pub mod commands;
pub mod config;
pub mod context;
pub mod data;
pub mod fingerprint;
pub mod kinds;
pub mod plot;
pub mod provenance;
pub mod registry;
pub mod report;
pub mod runner;
pub mod store;
pub mod table;
