//! Datasets for the reproduction harness.
//!
//! * [`registry`](mod@registry): the embedded `datasets/registry.toml` (names, files, sha256, formats,
//!   upstream sources, and a `[dataset.table]` section per dataset) parsed with serde and
//!   validated.
//! * [`table`]: the `[dataset.table]` schema: how a dataset's files become a typed set (task,
//!   rows files, target column or file, dropped columns, NA rows, class names, masks).
//! * [`labelled`]: the typed forms ([`LabelledSet`]: [`Inputs`] dense or CSR, [`Targets`] real
//!   or named classes, [`GivenSplits`]).
//! * [`loading`]: [`load()`], which builds them from the registry (locate, verify, assemble),
//!   so callers never match on a dataset name.
//! * [`split`]: [`SplitSpec`] (`given`, `predefined`, `random` with a test fraction, optionally
//!   stratified) and [`Split`] (sorted row indices), drawn per repetition from the caller's RNG.
//! * [`sparse`]: [`CsrMatrix`], the form svmlight sets load in.
//! * [`locate`]: [`DataDirs`] (search order `$REPRO_DATA_DIR`, `<root>/datasets/cache`,
//!   `<root>/../shared/datasets`), verified lookup, and [`verify_all`] for
//!   `repro datasets verify`.
//! * [`fetch`](mod@fetch): downloads into the cache (temp file + rename, digest-checked).
//! * [`loaders`]: CSV, svmlight (sparse and dense) and IDX readers; gzip is detected by magic
//!   bytes.
//! * [`sets`]: [`cpu_rr`], the named train/test view kept for existing callers.
//! * [`own`]: [`OwnFiles`], data of one's own named by path (no registry entry, no rebuild),
//!   read by the same table rules, their sha256 computed for the caller to record.
//!
//! ```no_run
//! use rand::SeedableRng;
//! let dirs = datasets::DataDirs::from_root(".");
//! let set = datasets::load(&dirs, "uci/airfoil")?;
//! let split = datasets::SplitSpec::Predefined.draw(&set, 0, &mut rand_chacha::ChaCha8Rng::seed_from_u64(0))?;
//! let (x_train, y_train) = set.select(&split.train);
//! assert_eq!(x_train.n_rows() + split.test.len(), 1503);
//! # let _ = y_train;
//! # Ok::<(), datasets::DatasetError>(())
//! ```

mod assemble;
pub mod digest;
pub mod error;
pub mod fetch;
pub mod gz;
pub mod labelled;
pub mod loaders;
pub mod loading;
pub mod locate;
pub mod own;
pub mod registry;
pub mod sets;
pub mod sparse;
pub mod split;
pub mod table;

pub use digest::{file_sha256, verify_file, Match};
pub use error::{DatasetError, ParamError, RegistryError};
pub use fetch::{fetch, fetch_from, rebase_url, FetchAction, FetchedFile, FETCH_BASE_ENV};
pub use gz::{is_gzip, is_gzip_bytes, open_maybe_gz, read_maybe_gz};
pub use labelled::{GivenSplits, Inputs, LabelledSet, Targets};
pub use loaders::{
    load_xy, read_csv, read_csv_text, read_idx, read_svmlight, read_svmlight_sparse, CsvOptions,
    Idx, Table, TextTable,
};
pub use loading::{load, load_dataset, load_from, load_task};
pub use locate::{
    verify_all, DataDirs, FileStatus, Located, LocatedFile, VerifyReport, DATA_DIR_ENV,
};
pub use own::{OwnFile, OwnFiles};
pub use registry::{registry, DataFile, Dataset, Format, Registry, REGISTRY_TOML};
pub use sets::{cpu_rr, RegressionSplit};
pub use sparse::CsrMatrix;
pub use split::{shuffled_order, Split, SplitSpec};
pub use table::{DerivedTask, LabelRule, NaPolicy, RowFilter, TableSpec, Task};
