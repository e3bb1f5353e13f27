//! Finding registered files in the data directories and verifying their digests.
//!
//! Search order (first directory holding the file wins): `$REPRO_DATA_DIR` (if set and
//! non-empty), `<root>/datasets/cache` (where `fetch` writes), `<root>/../shared/datasets`.
//! A file found with the wrong digest is an error, not skipped: a stale or corrupt copy must
//! never be hidden by a later directory.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::digest::{verify_file, Match};
use crate::error::{DatasetError, RegistryError};
use crate::registry::{DataFile, Dataset, Registry};

/// Environment variable naming an extra data directory, searched first.
pub const DATA_DIR_ENV: &str = "REPRO_DATA_DIR";

/// The ordered list of data directories and the cache directory that `fetch` writes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDirs {
    search: Vec<PathBuf>,
    cache: PathBuf,
}

impl DataDirs {
    /// Directories for the project at `root`: `$REPRO_DATA_DIR` (if set and non-empty), then
    /// `<root>/datasets/cache`, then `<root>/../shared/datasets`. A relative `$REPRO_DATA_DIR`
    /// is taken relative to the current directory; the variable is read once, here.
    pub fn from_root(root: impl AsRef<Path>) -> DataDirs {
        let env = std::env::var_os(DATA_DIR_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        DataDirs::with_env_dir(root, env)
    }

    /// As [`DataDirs::from_root`], with the value of `$REPRO_DATA_DIR` passed explicitly
    /// (tests, or callers that read their own configuration).
    pub fn with_env_dir(root: impl AsRef<Path>, env_dir: Option<PathBuf>) -> DataDirs {
        let root = absolute(root.as_ref());
        // Resolve `..` against the real root (symlinks included) when it exists.
        let real_root = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        let cache = real_root.join("datasets").join("cache");
        let shared = match real_root.parent() {
            Some(parent) => parent.join("shared").join("datasets"),
            None => real_root.join("..").join("shared").join("datasets"),
        };
        let mut search = Vec::new();
        if let Some(dir) = env_dir {
            search.push(absolute(&dir));
        }
        search.push(cache.clone());
        search.push(shared);
        DataDirs { search, cache }
    }

    /// Explicit directories: `search` in order, and `cache` for downloads. The cache is
    /// searched too (after `search`) if it is not already listed.
    pub fn custom(search: Vec<PathBuf>, cache: impl AsRef<Path>) -> DataDirs {
        let cache = absolute(cache.as_ref());
        let mut search: Vec<PathBuf> = search.iter().map(|d| absolute(d)).collect();
        if !search.contains(&cache) {
            search.push(cache.clone());
        }
        DataDirs { search, cache }
    }

    /// The directories searched, in order (absolute paths).
    pub fn search_dirs(&self) -> &[PathBuf] {
        &self.search
    }

    /// Where `fetch` writes (`<root>/datasets/cache` by default).
    pub fn cache_dir(&self) -> &Path {
        &self.cache
    }

    /// The first existing copy of `file` in the search order, without verifying it.
    pub fn find(&self, file: &DataFile) -> Option<PathBuf> {
        self.search
            .iter()
            .map(|dir| dir.join(&file.path))
            .find(|p| p.is_file())
    }

    /// Finds and verifies one file of `dataset`.
    pub fn locate_file(
        &self,
        dataset: &Dataset,
        file: &DataFile,
    ) -> Result<LocatedFile, DatasetError> {
        let path = self.find(file).ok_or_else(|| DatasetError::Missing {
            dataset: dataset.name.clone(),
            file: file.path.clone(),
            searched: self.search.clone(),
            hint: dataset.how_to_get(),
        })?;
        let matched = verify_file(&path, file)?;
        Ok(LocatedFile {
            role: file.role.clone(),
            rel_path: file.path.clone(),
            path,
            matched,
        })
    }

    /// Finds and verifies every file of `dataset`; returns their absolute paths.
    ///
    /// Errors: [`DatasetError::Missing`] (lists every directory searched and says how to get
    /// the file), [`DatasetError::DigestMismatch`] (names the file, expected and actual digest),
    /// [`DatasetError::Io`].
    pub fn locate(&self, dataset: &Dataset) -> Result<Located, DatasetError> {
        let files = dataset
            .files
            .iter()
            .map(|f| self.locate_file(dataset, f))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Located {
            dataset: dataset.name.clone(),
            files,
        })
    }

    /// [`DataDirs::locate`] for a dataset of the embedded registry, by name.
    pub fn locate_name(&self, name: &str) -> Result<Located, DatasetError> {
        self.locate(Registry::embedded()?.get(name)?)
    }

    /// Checks every file of `registry`; one report per file, never stopping early.
    pub fn verify_registry(&self, registry: &Registry) -> Vec<VerifyReport> {
        let mut out = Vec::new();
        for ds in registry.datasets() {
            for f in &ds.files {
                let status = match self.find(f) {
                    None => FileStatus::Missing {
                        searched: self.search.clone(),
                    },
                    Some(path) => match verify_file(&path, f) {
                        Ok(matched) => FileStatus::Verified { path, matched },
                        Err(DatasetError::DigestMismatch {
                            expected, actual, ..
                        }) => FileStatus::Mismatch {
                            path,
                            expected,
                            actual,
                        },
                        Err(e) => FileStatus::Unreadable {
                            path,
                            error: e.to_string(),
                        },
                    },
                };
                out.push(VerifyReport {
                    dataset: ds.name.clone(),
                    role: f.role.clone(),
                    file: f.path.clone(),
                    status,
                });
            }
        }
        out
    }
}

/// Checks every file of the embedded registry (for `repro datasets verify`).
pub fn verify_all(dirs: &DataDirs) -> Result<Vec<VerifyReport>, RegistryError> {
    Ok(dirs.verify_registry(Registry::embedded()?))
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// One verified file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedFile {
    /// The file's role in its dataset.
    pub role: String,
    /// The registry-relative path.
    pub rel_path: String,
    /// The absolute path where the verified file is.
    pub path: PathBuf,
    /// How it matched the registry (exact bytes or decompressed content).
    pub matched: Match,
}

/// Every file of a dataset, verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Dataset name.
    pub dataset: String,
    /// The files, in registry order.
    pub files: Vec<LocatedFile>,
}

impl Located {
    /// Absolute path of the file with the given role.
    pub fn path(&self, role: &str) -> Result<&Path, DatasetError> {
        self.files
            .iter()
            .find(|f| f.role == role)
            .map(|f| f.path.as_path())
            .ok_or_else(|| DatasetError::UnknownRole {
                dataset: self.dataset.clone(),
                role: role.to_string(),
                roles: self
                    .files
                    .iter()
                    .map(|f| f.role.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// Outcome of checking one registered file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// Found and verified.
    Verified {
        /// Where it was found.
        path: PathBuf,
        /// How it matched.
        matched: Match,
    },
    /// In none of the directories.
    Missing {
        /// The directories searched.
        searched: Vec<PathBuf>,
    },
    /// Found with the wrong digest.
    Mismatch {
        /// Where it was found.
        path: PathBuf,
        /// Registered sha256.
        expected: String,
        /// Actual sha256 of the bytes.
        actual: String,
    },
    /// Found but could not be read.
    Unreadable {
        /// Where it was found.
        path: PathBuf,
        /// The error message.
        error: String,
    },
}

/// One line of `repro datasets verify`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Dataset name.
    pub dataset: String,
    /// File role.
    pub role: String,
    /// Registry-relative path.
    pub file: String,
    /// What was found.
    pub status: FileStatus,
}

impl VerifyReport {
    /// Whether the file was found and verified.
    pub fn is_ok(&self) -> bool {
        matches!(self.status, FileStatus::Verified { .. })
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = format!("{} [{}] {}", self.dataset, self.role, self.file);
        match &self.status {
            FileStatus::Verified { path, matched } => {
                let how = match matched {
                    Match::Exact => "ok",
                    Match::Content => "ok (content)",
                };
                write!(f, "{how:<12} {name}  ({})", path.display())
            }
            FileStatus::Missing { .. } => write!(f, "{:<12} {name}", "MISSING"),
            FileStatus::Mismatch {
                path,
                expected,
                actual,
            } => write!(
                f,
                "{:<12} {name}  ({}: expected {expected}, actual {actual})",
                "MISMATCH",
                path.display()
            ),
            FileStatus::Unreadable { path, error } => {
                write!(
                    f,
                    "{:<12} {name}  ({}: {error})",
                    "UNREADABLE",
                    path.display()
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_order_from_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("main");
        std::fs::create_dir(&root).unwrap();
        let real = std::fs::canonicalize(&root).unwrap();
        let dirs = DataDirs::with_env_dir(&root, Some(PathBuf::from("/data/x")));
        assert_eq!(
            dirs.search_dirs(),
            &[
                PathBuf::from("/data/x"),
                real.join("datasets/cache"),
                real.parent().unwrap().join("shared/datasets"),
            ]
        );
        assert_eq!(dirs.cache_dir(), real.join("datasets/cache"));
        let dirs = DataDirs::with_env_dir(&root, None);
        assert_eq!(dirs.search_dirs().len(), 2);
    }

    #[test]
    fn custom_dirs_include_cache_once() {
        let d = DataDirs::custom(vec!["/a".into(), "/c".into()], "/c");
        assert_eq!(d.search_dirs(), &[PathBuf::from("/a"), PathBuf::from("/c")]);
        let d = DataDirs::custom(vec!["/a".into()], "/c");
        assert_eq!(d.search_dirs(), &[PathBuf::from("/a"), PathBuf::from("/c")]);
    }
}
