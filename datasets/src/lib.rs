//! Datasets for the reproduction harness.
//!
//! * [`registry`](mod@registry): the embedded `datasets/registry.toml` (names, files, sha256, formats,
//!   upstream sources) parsed with serde and validated.
//! * [`locate`]: [`DataDirs`] (search order `$REPRO_DATA_DIR`, `<root>/datasets/cache`,
//!   `<root>/../shared/datasets`), verified lookup, and [`verify_all`] for
//!   `repro datasets verify`.
//! * [`fetch`](mod@fetch): downloads into the cache (temp file + rename, digest-checked).
//! * [`loaders`]: CSV, svmlight and IDX readers; gzip is detected by magic bytes.
//! * [`sets`]: one-call loaders for registered sets ([`cpu_rr`], [`uci()`], [`mnist_test`]).
//! * [`synthetic`]: generators that need no download ([`uniform_box`]).
//!
//! ```no_run
//! let dirs = datasets::DataDirs::from_root(".");
//! let cpu = datasets::cpu_rr(&dirs)?;
//! assert_eq!(cpu.x_train.dim(), (6554, 21));
//! # Ok::<(), datasets::DatasetError>(())
//! ```

pub mod digest;
pub mod error;
pub mod fetch;
pub mod gz;
pub mod loaders;
pub mod locate;
pub mod registry;
pub mod sets;
pub mod synthetic;

pub use digest::{file_sha256, verify_file, Match};
pub use error::{DatasetError, ParamError, RegistryError};
pub use fetch::{fetch, fetch_from, rebase_url, FetchAction, FetchedFile, FETCH_BASE_ENV};
pub use gz::{is_gzip, is_gzip_bytes, open_maybe_gz, read_maybe_gz};
pub use loaders::{
    load_xy, read_csv, read_csv_text, read_idx, read_svmlight, CsvOptions, Idx, Table, TextTable,
};
pub use locate::{
    verify_all, DataDirs, FileStatus, Located, LocatedFile, VerifyReport, DATA_DIR_ENV,
};
pub use registry::{registry, DataFile, Dataset, Format, Registry, REGISTRY_TOML};
pub use sets::{cpu_rr, mnist_test, uci, MnistTest, RegressionSplit, UciData};
pub use synthetic::uniform_box;
