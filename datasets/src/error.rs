//! Error types.
//!
//! Three enums, as in linfa: [`RegistryError`] (the registry text is malformed),
//! [`DatasetError`] (finding, verifying, downloading, parsing or assembling data files, and
//! drawing splits: runtime errors) and [`ParamError`] (invalid arguments to a constructor: caller
//! errors, raised before any work is done). Every message says what to
//! do next.

use std::fmt::Write as _;
use std::path::PathBuf;

/// The registry TOML is malformed or inconsistent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The TOML does not parse or does not match the schema (unknown or missing fields).
    #[error("dataset registry does not parse: {0}")]
    Toml(String),
    /// A field value breaks a rule (duplicate name, bad digest, absolute path, ...).
    #[error("dataset registry: dataset `{dataset}`: {message}")]
    Invalid {
        /// Name of the offending dataset (or `<registry>`).
        dataset: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// Finding, verifying, downloading or parsing a data file failed.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// The embedded or given registry is invalid.
    #[error(transparent)]
    Registry(#[from] RegistryError),

    /// No dataset of that name in the registry.
    #[error("unknown dataset `{name}`; known datasets: {known} (see datasets/registry.toml)")]
    UnknownDataset {
        /// The name asked for.
        name: String,
        /// Comma-separated list of registered names.
        known: String,
    },

    /// The dataset has no file with that role.
    #[error("dataset `{dataset}` has no file with role `{role}` (roles: {roles})")]
    UnknownRole {
        /// Dataset name.
        dataset: String,
        /// The role asked for.
        role: String,
        /// Comma-separated roles the dataset has.
        roles: String,
    },

    /// A registered file is in none of the data directories.
    #[error("{}", missing_message(.dataset, .file, .searched, .hint))]
    Missing {
        /// Dataset name.
        dataset: String,
        /// Registry-relative path of the file.
        file: String,
        /// Every directory that was searched, in order.
        searched: Vec<PathBuf>,
        /// How to obtain the file.
        hint: String,
    },

    /// A file was found (or downloaded) but its digest differs from the registry's.
    #[error("{}", mismatch_message(.file, .expected, .actual, .expected_content, .actual_content))]
    DigestMismatch {
        /// The file (absolute path) or URL whose bytes were checked.
        file: String,
        /// Expected sha256 of the file's bytes.
        expected: String,
        /// Actual sha256 of the file's bytes.
        actual: String,
        /// Expected sha256 of the decompressed bytes (gzip files only).
        expected_content: Option<String>,
        /// Actual sha256 of the decompressed bytes, when the file is gzip and decompressed.
        actual_content: Option<String>,
    },

    /// An I/O operation on a file failed.
    #[error("{path}: {source}", path = .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A text file has a malformed field (1-based line and column).
    #[error("{path}:{line}:{column}: {message}", path = .path.display())]
    Parse {
        /// The file (or a label such as `<memory>`).
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// 1-based column (field) number.
        column: usize,
        /// What is wrong.
        message: String,
    },

    /// A file's overall structure is wrong (bad IDX header, mismatched train/test headers, ...).
    #[error("{path}: {message}", path = .path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },

    /// `fetch` was asked for a dataset whose files have no direct download.
    #[error(
        "dataset `{dataset}` cannot be downloaded automatically (`{file}` has no url); {upstream}"
    )]
    NoUrl {
        /// Dataset name.
        dataset: String,
        /// Registry-relative path of the first file without a url.
        file: String,
        /// The registry's upstream text: how to obtain the data by hand.
        upstream: String,
    },

    /// The dataset has no `[dataset.table]` section, so [`crate::load`] cannot type it.
    #[error(
        "dataset `{dataset}` has no [dataset.table] section in datasets/registry.toml, so it \
         cannot be loaded as a typed set; add one (the file's header documents the fields)"
    )]
    NoTable {
        /// Dataset name.
        dataset: String,
    },

    /// The files do not fit together as the `[dataset.table]` section describes (row counts,
    /// row ids or classes disagree).
    #[error("dataset `{dataset}`: {message}")]
    Table {
        /// Dataset name.
        dataset: String,
        /// What is wrong and what to change.
        message: String,
    },

    /// A train/test split cannot be drawn for this set.
    #[error("dataset `{dataset}`: cannot draw the split: {message}")]
    Split {
        /// Dataset name.
        dataset: String,
        /// What is wrong and what to change.
        message: String,
    },

    /// An HTTP download failed.
    #[error("download of {url} failed: {message}; check the network (or REPRO_FETCH_BASE) and retry `repro datasets fetch`")]
    Download {
        /// The URL that was requested.
        url: String,
        /// The transport or HTTP error.
        message: String,
    },
}

impl DatasetError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        DatasetError::Io {
            path: path.into(),
            source,
        }
    }
}

fn missing_message(dataset: &str, file: &str, searched: &[PathBuf], hint: &str) -> String {
    let mut s = format!("dataset `{dataset}`: file `{file}` not found; searched:");
    for dir in searched {
        let _ = write!(s, "\n  {}", dir.display());
    }
    let _ = write!(s, "\nTo get it: {hint}");
    s
}

fn mismatch_message(
    file: &str,
    expected: &str,
    actual: &str,
    expected_content: &Option<String>,
    actual_content: &Option<String>,
) -> String {
    let mut s = format!("{file}: sha256 mismatch: expected {expected}, actual {actual}");
    if let Some(exp) = expected_content {
        match actual_content {
            Some(act) => {
                let _ = write!(s, "; decompressed sha256: expected {exp}, actual {act}");
            }
            None => {
                let _ = write!(
                    s,
                    "; not gzip, so its content could not be checked against {exp}"
                );
            }
        }
    }
    s.push_str(
        ". The file is corrupt or a different version: delete it and fetch or copy it again",
    );
    s
}

/// Invalid arguments to a constructor (a caller error, detected before any work is done).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// The parts given to [`crate::CsrMatrix::from_parts`] (or matrices stacked) break a CSR
    /// invariant.
    #[error("invalid CSR matrix: {0}")]
    InvalidCsr(String),
}
