//! The dataset registry: `datasets/registry.toml`, embedded at compile time.
//!
//! Each `[[dataset]]` names a logical dataset (e.g. `cpu_rr`, `uci/airfoil`) and lists its
//! files (`[[dataset.file]]`) with their sha256. Names of dataset families are
//! `<family>/<member>` (`uci/airfoil`, `gene/all`, `classification/sonar`), mirroring the
//! folder their files live in; single sets have flat names (`cpu_rr`, `a9a`, `mnist_test`).

use std::collections::HashSet;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::error::{DatasetError, RegistryError};
use crate::table::{DerivedTask, LabelRule, NaPolicy, TableSpec, Task};

/// The registry text compiled into the crate.
pub const REGISTRY_TOML: &str = include_str!("../registry.toml");

/// On-disk format of a data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Comma-separated values.
    Csv,
    /// Gzip-compressed CSV.
    CsvGz,
    /// svmlight / LIBSVM text (`label idx:val ...`).
    Svmlight,
    /// Gzip-compressed svmlight.
    SvmlightGz,
    /// IDX binary tensor (MNIST).
    Idx,
    /// Gzip-compressed IDX.
    IdxGz,
}

impl Format {
    /// Whether files of this format are gzip-compressed.
    pub fn is_gzip(self) -> bool {
        matches!(self, Format::CsvGz | Format::SvmlightGz | Format::IdxGz)
    }
}

/// One file of a dataset.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataFile {
    /// What the file is within its dataset (`train`, `test`, `data`, `test_mask`, `labels`, ...);
    /// unique within the dataset.
    pub role: String,
    /// Path relative to a data directory, `/`-separated (e.g. `cpu/cpu_rr_train.csv`).
    pub path: String,
    /// sha256 of the file's bytes (lower-case hex).
    pub sha256: String,
    /// sha256 of the decompressed bytes; required for `.gz` paths, so that any gzip of the
    /// same content (a re-compressed download) is accepted.
    #[serde(default)]
    pub content_sha256: Option<String>,
    /// Direct download URL, if one exists. An uncompressed body is gzipped on fetch when
    /// `path` ends in `.gz`.
    #[serde(default)]
    pub url: Option<String>,
    /// Format of this file when it differs from the dataset's.
    #[serde(default)]
    pub format: Option<Format>,
}

/// A logical dataset and its files.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    /// Unique name (`cpu_rr`, `uci/airfoil`, ...).
    pub name: String,
    /// What the data is: rows, columns, target, preprocessing already applied.
    pub description: String,
    /// Papers that use it: slugs of `../shared/specs/<slug>.md` (plus `rahimi-recht-2007`).
    pub papers: Vec<String>,
    /// Default format of the files.
    pub format: Format,
    /// License, when known.
    #[serde(default)]
    pub license: Option<String>,
    /// Where the data comes from and how to obtain it by hand.
    pub upstream: String,
    /// The files (at least one).
    #[serde(rename = "file")]
    pub files: Vec<DataFile>,
    /// How the files become a typed [`LabelledSet`](crate::LabelledSet) (the
    /// `[dataset.table]` section; see [`crate::table`]). A dataset without one can be located
    /// and verified but not loaded with [`crate::load`].
    #[serde(default)]
    pub table: Option<TableSpec>,
}

impl Dataset {
    /// The file with the given role.
    pub fn file(&self, role: &str) -> Result<&DataFile, DatasetError> {
        self.files
            .iter()
            .find(|f| f.role == role)
            .ok_or_else(|| DatasetError::UnknownRole {
                dataset: self.name.clone(),
                role: role.to_string(),
                roles: self.roles().join(", "),
            })
    }

    /// Roles of the files, in registry order.
    pub fn roles(&self) -> Vec<&str> {
        self.files.iter().map(|f| f.role.as_str()).collect()
    }

    /// Format of `file` (its own override, else the dataset's).
    pub fn format_of(&self, file: &DataFile) -> Format {
        file.format.unwrap_or(self.format)
    }

    /// Whether `repro datasets fetch` can download every file.
    pub fn fetchable(&self) -> bool {
        self.files.iter().all(|f| f.url.is_some())
    }

    /// One line telling a user how to obtain the files.
    pub fn how_to_get(&self) -> String {
        if self.fetchable() {
            format!(
                "run `repro datasets fetch {}` (downloads into datasets/cache); upstream: {}",
                self.name, self.upstream
            )
        } else {
            self.upstream.clone()
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegistryToml {
    dataset: Vec<Dataset>,
}

/// A validated set of datasets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registry {
    datasets: Vec<Dataset>,
}

impl Registry {
    /// Parses and validates a registry TOML text.
    ///
    /// Rules: unique dataset names; at least one file per dataset; unique roles within a
    /// dataset; unique paths across the registry; relative `/`-separated paths without `..`;
    /// 64-hex lower-case digests; `content_sha256` present exactly on `.gz` paths; urls are
    /// `http://` or `https://`; a `[dataset.table]` section follows the rules of
    /// [`TableSpec::validate`].
    pub fn parse(text: &str) -> Result<Registry, RegistryError> {
        let raw: RegistryToml =
            toml::from_str(text).map_err(|e| RegistryError::Toml(e.to_string()))?;
        let registry = Registry {
            datasets: raw.dataset,
        };
        registry.validate()?;
        Ok(registry)
    }

    /// The registry compiled into the crate (`datasets/registry.toml`), parsed once.
    pub fn embedded() -> Result<&'static Registry, RegistryError> {
        static EMBEDDED: OnceLock<Result<Registry, RegistryError>> = OnceLock::new();
        EMBEDDED
            .get_or_init(|| Registry::parse(REGISTRY_TOML))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// All datasets, in registry order.
    pub fn datasets(&self) -> &[Dataset] {
        &self.datasets
    }

    /// The dataset called `name`.
    pub fn get(&self, name: &str) -> Result<&Dataset, DatasetError> {
        self.datasets
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| DatasetError::UnknownDataset {
                name: name.to_string(),
                known: self
                    .datasets
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    fn validate(&self) -> Result<(), RegistryError> {
        let mut names = HashSet::new();
        let mut paths = HashSet::new();
        for ds in &self.datasets {
            let bad = |message: String| RegistryError::Invalid {
                dataset: ds.name.clone(),
                message,
            };
            if ds.name.is_empty()
                || !ds
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-/.".contains(c))
            {
                return Err(bad(
                    "name must be non-empty and use only ASCII letters, digits, _ - / .".into(),
                ));
            }
            if !names.insert(ds.name.as_str()) {
                return Err(bad("duplicate dataset name; names must be unique".into()));
            }
            if ds.upstream.trim().is_empty() {
                return Err(bad("upstream must say where the data comes from".into()));
            }
            if ds.files.is_empty() {
                return Err(bad("has no [[dataset.file]] entries".into()));
            }
            let mut roles = HashSet::new();
            for f in &ds.files {
                if f.role.is_empty() || !roles.insert(f.role.as_str()) {
                    return Err(bad(format!(
                        "file `{}`: role `{}` is empty or not unique within the dataset",
                        f.path, f.role
                    )));
                }
                validate_path(&f.path).map_err(|m| bad(format!("file `{}`: {m}", f.path)))?;
                if !paths.insert(f.path.as_str()) {
                    return Err(bad(format!(
                        "file `{}` is listed by more than one dataset",
                        f.path
                    )));
                }
                if !is_hex_digest(&f.sha256) {
                    return Err(bad(format!(
                        "file `{}`: sha256 `{}` is not 64 lower-case hex digits",
                        f.path, f.sha256
                    )));
                }
                let gz = f.path.ends_with(".gz");
                match (&f.content_sha256, gz) {
                    (Some(c), true) if !is_hex_digest(c) => {
                        return Err(bad(format!(
                            "file `{}`: content_sha256 `{c}` is not 64 lower-case hex digits",
                            f.path
                        )))
                    }
                    (None, true) => {
                        return Err(bad(format!(
                            "file `{}`: .gz files need content_sha256 (sha256 of the \
                             decompressed bytes, e.g. `zcat FILE | sha256sum`)",
                            f.path
                        )))
                    }
                    (Some(_), false) => {
                        return Err(bad(format!(
                            "file `{}`: content_sha256 is only meaningful for .gz paths",
                            f.path
                        )))
                    }
                    _ => {}
                }
                if ds.format_of(f).is_gzip() != gz {
                    return Err(bad(format!(
                        "file `{}`: format {:?} does not match the .gz-ness of the path",
                        f.path,
                        ds.format_of(f)
                    )));
                }
                if let Some(url) = &f.url {
                    if !(url.starts_with("http://") || url.starts_with("https://")) {
                        return Err(bad(format!(
                            "file `{}`: url `{url}` must start with http:// or https://",
                            f.path
                        )));
                    }
                }
            }
            if let Some(table) = &ds.table {
                table.validate(ds).map_err(bad)?;
            }
        }
        Ok(())
    }
}

/// Shorthand for [`Registry::embedded`].
pub fn registry() -> Result<&'static Registry, RegistryError> {
    Registry::embedded()
}

/// Whether `s` is 64 lower-case hex digits.
pub fn is_hex_digest(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn validate_path(path: &str) -> Result<(), String> {
    if path.is_empty() || path.starts_with('/') || path.contains('\\') {
        return Err("path must be relative and `/`-separated".into());
    }
    if path
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return Err("path must not contain empty, `.` or `..` components".into());
    }
    Ok(())
}

// Checks of a `[dataset.table]` against its dataset's files (the rules are in the docs of
// [`crate::table`]); here, with the files' types, so that the table module needs none of them.

/// The file family of a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// CSV, plain or gzip.
    Csv,
    /// svmlight, plain or gzip.
    Svmlight,
    /// IDX, plain or gzip.
    Idx,
}

impl Family {
    /// The family of `format`.
    pub fn of(format: Format) -> Family {
        match format {
            Format::Csv | Format::CsvGz => Family::Csv,
            Format::Svmlight | Format::SvmlightGz => Family::Svmlight,
            Format::Idx | Format::IdxGz => Family::Idx,
        }
    }
}

impl TableSpec {
    /// The family of the rows files (valid specs only).
    pub fn family(&self, ds: &Dataset) -> Option<Family> {
        let f = ds
            .files
            .iter()
            .find(|f| Some(&f.role) == self.rows.first())?;
        Some(Family::of(ds.format_of(f)))
    }

    /// Checks the rules of the module docs against the dataset's files; the message says what
    /// to change.
    pub fn validate(&self, ds: &Dataset) -> Result<(), String> {
        let family_of = |role: &str, field: &str| -> Result<Family, String> {
            let f = ds.files.iter().find(|f| f.role == role).ok_or_else(|| {
                format!(
                    "[dataset.table] {field} names role `{role}`, but the dataset's files have \
                     roles {:?}",
                    ds.roles()
                )
            })?;
            Ok(Family::of(ds.format_of(f)))
        };
        if self.rows.is_empty() || self.rows.len() > 2 {
            return Err(format!(
                "[dataset.table] rows must name one or two file roles (training then test), \
                 got {:?}",
                self.rows
            ));
        }
        let mut used = HashSet::new();
        let mut families = Vec::new();
        for role in &self.rows {
            families.push(family_of(role, "rows")?);
            if !used.insert(role.as_str()) {
                return Err(format!("[dataset.table] rows lists `{role}` twice"));
            }
        }
        if families.iter().any(|&f| f != families[0]) {
            return Err("[dataset.table] rows files must share one format family \
                        (csv, svmlight or idx)"
                .into());
        }
        let family = families[0];
        let target_family = match &self.target_file {
            Some(role) => {
                if !used.insert(role.as_str()) {
                    return Err(format!(
                        "[dataset.table] target_file `{role}` is also a rows role"
                    ));
                }
                Some(family_of(role, "target_file")?)
            }
            None => None,
        };
        if let Some(role) = &self.test_mask {
            if !used.insert(role.as_str()) {
                return Err(format!(
                    "[dataset.table] test_mask `{role}` is also a rows or target_file role"
                ));
            }
            if family_of(role, "test_mask")? != Family::Csv {
                return Err(format!(
                    "[dataset.table] test_mask `{role}` must be a CSV file"
                ));
            }
            if self.rows.len() != 1 {
                return Err(
                    "[dataset.table] test_mask needs a single rows role (two rows roles \
                            already give the published train/test split)"
                        .into(),
                );
            }
        }
        let refuse = |present: bool, field: &str, why: &str| -> Result<(), String> {
            if present {
                Err(format!(
                    "[dataset.table] {field} is not used {why}; remove it"
                ))
            } else {
                Ok(())
            }
        };
        match family {
            Family::Csv => {
                let Some(header) = self.header else {
                    return Err("[dataset.table] CSV rows need `header = true` or \
                                `header = false`"
                        .into());
                };
                if let Some(tf) = target_family {
                    if tf != Family::Csv {
                        return Err("[dataset.table] target_file of CSV rows must be CSV".into());
                    }
                }
                refuse(self.n_features.is_some(), "n_features", "for CSV files")?;
                if !header
                    && (self.target.is_some() || !self.drop.is_empty() || self.row_id.is_some())
                {
                    return Err(
                        "[dataset.table] target, drop and row_id name columns, which \
                                needs `header = true`"
                            .into(),
                    );
                }
                if self.row_id.is_some() != self.target_row_id.is_some()
                    || (self.row_id.is_some() && self.target_file.is_none())
                {
                    return Err(
                        "[dataset.table] row_id and target_row_id go together, with a \
                                target_file (they check the join by row order)"
                            .into(),
                    );
                }
                let mut names = HashSet::new();
                for name in &self.drop {
                    if !names.insert(name) {
                        return Err(format!("[dataset.table] drop lists `{name}` twice"));
                    }
                    if self.row_id.as_ref() == Some(name) {
                        return Err(format!(
                            "[dataset.table] drop lists the row_id `{name}`, which is never an \
                             input anyway; remove it from drop"
                        ));
                    }
                    if self.target_file.is_none() && self.target.as_ref() == Some(name) {
                        return Err(format!(
                            "[dataset.table] drop lists the target column `{name}`"
                        ));
                    }
                }
            }
            Family::Svmlight => {
                let why = "for svmlight files (the label of each line is the target)";
                refuse(self.header.is_some(), "header", why)?;
                refuse(self.target.is_some(), "target", why)?;
                refuse(self.target_file.is_some(), "target_file", why)?;
                refuse(!self.drop.is_empty(), "drop", why)?;
                refuse(self.row_id.is_some(), "row_id", why)?;
                refuse(self.target_row_id.is_some(), "target_row_id", why)?;
                refuse(self.na != NaPolicy::Error, "na", why)?;
                match self.n_features {
                    None | Some(0) => {
                        return Err("[dataset.table] svmlight rows need n_features (>= 1), so \
                                    train and test files get the same width"
                            .into())
                    }
                    Some(n) if n > u32::MAX as usize + 1 => {
                        return Err(format!("[dataset.table] n_features = {n} is too large"))
                    }
                    Some(_) => {}
                }
            }
            Family::Idx => {
                let why = "for IDX files";
                refuse(self.header.is_some(), "header", why)?;
                refuse(self.target.is_some(), "target", why)?;
                refuse(!self.drop.is_empty(), "drop", why)?;
                refuse(self.row_id.is_some(), "row_id", why)?;
                refuse(self.target_row_id.is_some(), "target_row_id", why)?;
                refuse(self.n_features.is_some(), "n_features", why)?;
                refuse(self.na != NaPolicy::Error, "na", why)?;
                if self.rows.len() != 1 || target_family != Some(Family::Idx) {
                    return Err(
                        "[dataset.table] IDX rows need one rows role (the images) and \
                                an IDX target_file (the labels)"
                            .into(),
                    );
                }
            }
        }
        match self.task {
            Task::Regression => {
                refuse(self.labels.is_some(), "labels", "for a regression task")?;
                refuse(self.classes.is_some(), "classes", "for a regression task")?;
            }
            Task::Classification => {
                let numeric = matches!(family, Family::Svmlight | Family::Idx);
                if numeric && !matches!(self.labels, Some(LabelRule::Sign | LabelRule::Integer)) {
                    return Err("[dataset.table] svmlight and IDX labels are numbers: set \
                                labels = \"sign\" or labels = \"integer\""
                        .into());
                }
                if let Some(classes) = &self.classes {
                    let mut seen = HashSet::new();
                    if classes.is_empty() || classes.iter().any(|c| c.is_empty() || !seen.insert(c))
                    {
                        return Err("[dataset.table] classes must be non-empty, distinct, \
                                    non-empty names"
                            .into());
                    }
                    if u32::try_from(classes.len()).is_err() {
                        return Err("[dataset.table] too many classes".into());
                    }
                }
            }
        }
        Ok(())
    }
}

impl DerivedTask {
    /// Checks the rules of the type docs against the dataset; the message says what to change.
    pub fn validate(&self, ds: &Dataset, table: &TableSpec) -> Result<(), String> {
        if table.task != Task::Classification {
            return Err(format!(
                "data.task derives a classification task; {} is a regression set",
                ds.name
            ));
        }
        if table.family(ds) != Some(Family::Csv) || table.header != Some(true) {
            return Err(format!(
                "data.task names columns, which needs CSV files with a header; {} has none",
                ds.name
            ));
        }
        if let Some(target) = &self.target {
            if target.is_empty() {
                return Err("data.task.target: name a column".into());
            }
            if table.target_file.is_none() && !table.drop.contains(target) {
                return Err(format!(
                    "data.task.target = {target:?}: {} has no target_file, so the column is an \
                     input of its rows files; a task cannot turn an input into the target",
                    ds.name
                ));
            }
        }
        if let Some(classes) = &self.classes {
            let mut seen = HashSet::new();
            if classes.len() < 2 || classes.iter().any(|c| c.is_empty() || !seen.insert(c)) {
                return Err(
                    "data.task.classes: name at least two distinct, non-empty classes".into(),
                );
            }
        }
        for (i, f) in self.filters.iter().enumerate() {
            if f.column.is_empty() || f.keep.is_empty() {
                return Err(format!(
                    "data.task.where[{i}]: name a column and at least one value to keep"
                ));
            }
        }
        self.table(table).validate(ds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"
[[dataset]]
name = "toy"
description = "d"
papers = []
format = "csv"
upstream = "u"
[[dataset.file]]
role = "data"
path = "toy/a.csv"
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
"#;

    #[test]
    fn parses_minimal_registry() {
        let r = Registry::parse(ONE).unwrap();
        assert_eq!(r.datasets().len(), 1);
        assert_eq!(
            r.get("toy").unwrap().file("data").unwrap().path,
            "toy/a.csv"
        );
        assert!(matches!(
            r.get("nope"),
            Err(DatasetError::UnknownDataset { .. })
        ));
        assert!(matches!(
            r.get("toy").unwrap().file("x"),
            Err(DatasetError::UnknownRole { .. })
        ));
    }

    #[test]
    fn rejects_unknown_fields() {
        let text = ONE.replace("upstream = \"u\"", "upstream = \"u\"\nhomepage = \"x\"");
        assert!(matches!(
            Registry::parse(&text),
            Err(RegistryError::Toml(_))
        ));
    }

    #[test]
    fn rejects_duplicate_names_and_bad_digests() {
        let dup = format!("{ONE}\n{}", ONE.replace("toy/a.csv", "toy/b.csv"));
        let err = Registry::parse(&dup).unwrap_err();
        assert!(err.to_string().contains("duplicate"), "{err}");

        let bad = ONE.replace(&"0".repeat(64), &"0".repeat(63));
        let err = Registry::parse(&bad).unwrap_err();
        assert!(err.to_string().contains("64 lower-case hex"), "{err}");

        let upper = ONE.replace(&"0".repeat(64), &"A".repeat(64));
        assert!(Registry::parse(&upper).is_err());
    }

    #[test]
    fn rejects_bad_paths_and_missing_content_digest() {
        for p in ["/abs.csv", "../x.csv", "a//b.csv", "a/./b.csv"] {
            let text = ONE.replace("toy/a.csv", p);
            assert!(Registry::parse(&text).is_err(), "{p} accepted");
        }
        let gz = ONE
            .replace("toy/a.csv", "toy/a.csv.gz")
            .replace("\"csv\"", "\"csv_gz\"");
        let err = Registry::parse(&gz).unwrap_err();
        assert!(err.to_string().contains("content_sha256"), "{err}");
        // A gzip format on a plain path is inconsistent.
        let fmt = ONE.replace("\"csv\"", "\"csv_gz\"");
        assert!(Registry::parse(&fmt).is_err());
    }

    #[test]
    fn embedded_registry_is_valid() {
        let r = Registry::embedded().unwrap();
        assert!(r.get("cpu_rr").is_ok());
        assert!(r.get("uci/airfoil").is_ok());
        assert!(!r.get("cpu_rr").unwrap().fetchable());
        assert!(r.get("a9a").unwrap().fetchable());
        let gene = r.get("gene/all").unwrap();
        assert_eq!(gene.format_of(gene.file("pheno").unwrap()), Format::Csv);
        assert_eq!(gene.format_of(gene.file("exprs").unwrap()), Format::CsvGz);
    }
}
