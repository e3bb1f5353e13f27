//! The `[data]` table as written: where the data come from, checked before anything loads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use datasets::{Format, LabelRule, NaPolicy, OwnFiles, SplitSpec, TableSpec, Task};
use serde::{Deserialize, Serialize};

use super::synthetic::{self, Generator};
use crate::fingerprint::DataSources;

/// Where the data come from (`[data] source = ...`): a registered dataset, or one of the
/// synthetic generators (each registers its `source` name itself: [`synthetic`]). Deserialised
/// through [`DataTable`] so that an error names the key (`data.n: invalid type ...`); serialised
/// as the table was written (`source` beside the generator's or dataset's fields), which is the
/// form that data seeds and cell identities hash.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "DataTable")]
pub enum DataSpec {
    /// A registered dataset (`datasets/registry.toml`), verified by sha256 and typed by the
    /// registry's `[dataset.table]`.
    Dataset(DatasetSpec),
    /// Generated data, drawn from the run's data seed (no download).
    Synthetic(Synthetic),
    /// Files of one's own, named by path (no registry entry, no rebuild).
    File(FileSpec),
}

/// A generator with the `source` name it registered, and how often it draws.
#[derive(Debug)]
pub struct Synthetic {
    source: &'static str,
    generator: Box<dyn Generator>,
    draw: Draw,
}

/// How often synthetic data are drawn (`[data] draw = ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Draw {
    /// One draw from the run's data seed, seen by every repetition (the default).
    #[default]
    Once,
    /// A draw per repetition (repetition 0 sees the `once` draw), so that the spread over the
    /// repetitions covers the data as well as the methods' own randomness.
    PerRepetition,
}

impl Draw {
    const KEY: &'static str = "draw";

    fn parse(value: Option<toml::Value>) -> Result<Self, String> {
        match value {
            None => Ok(Draw::Once),
            Some(toml::Value::String(s)) if s == "once" => Ok(Draw::Once),
            Some(toml::Value::String(s)) if s == "per_repetition" => Ok(Draw::PerRepetition),
            Some(other) => Err(format!(
                "data.draw: expected \"once\" (one draw for every repetition, the default) or \
                 \"per_repetition\", got {other}"
            )),
        }
    }
}

impl Synthetic {
    /// The registered `source` name.
    pub fn source(&self) -> &'static str {
        self.source
    }
    /// The generator's typed parameters.
    pub fn generator(&self) -> &dyn Generator {
        self.generator.as_ref()
    }
    /// How often the data are drawn.
    pub fn draw(&self) -> Draw {
        self.draw
    }
}

impl Clone for Synthetic {
    fn clone(&self) -> Self {
        Self {
            source: self.source,
            generator: self.generator.clone_box(),
            draw: self.draw,
        }
    }
}

impl PartialEq for Synthetic {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
            && self.draw == other.draw
            && self.generator.to_json() == other.generator.to_json()
    }
}

impl Serialize for DataSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (source, fields) = match self {
            DataSpec::Dataset(d) => (
                "dataset",
                serde_json::to_value(d).map_err(serde::ser::Error::custom)?,
            ),
            DataSpec::Synthetic(g) => (g.source, g.generator.to_json()),
            DataSpec::File(f) => (
                "file",
                serde_json::to_value(f).map_err(serde::ser::Error::custom)?,
            ),
        };
        let serde_json::Value::Object(mut map) = fields else {
            return Err(serde::ser::Error::custom(format!(
                "data source {source}: its parameters do not serialise as a table"
            )));
        };
        // Written only when not the default, so that `once` keeps the seeds and keys it had.
        if let DataSpec::Synthetic(g) = self {
            if g.draw == Draw::PerRepetition {
                map.insert(Draw::KEY.into(), "per_repetition".into());
            }
        }
        map.insert("source".into(), source.into());
        map.serialize(serializer)
    }
}

/// The `[data]` table as written.
#[derive(Deserialize)]
#[serde(transparent)]
pub struct DataTable(toml::Table);

impl TryFrom<DataTable> for DataSpec {
    type Error = String;
    fn try_from(DataTable(mut table): DataTable) -> Result<Self, String> {
        let sources = || {
            let mut names = vec!["dataset", "file"];
            names.extend(synthetic::registered().iter().map(|r| r.source));
            names.join(", ")
        };
        let source = match table.remove("source") {
            Some(toml::Value::String(s)) => s,
            Some(other) => {
                return Err(format!(
                    "data.source: expected a string, got {}",
                    other.type_str()
                ))
            }
            None => return Err(format!("data.source: missing; one of {}", sources())),
        };
        if source == "dataset" {
            return Ok(DataSpec::Dataset(crate::toml_table::typed_table(
                table, "data",
            )?));
        }
        if source == "file" {
            return Ok(DataSpec::File(crate::toml_table::typed_table(
                table, "data",
            )?));
        }
        let registration = synthetic::find(&source)
            .ok_or_else(|| format!("data.source = {source:?} is unknown; one of {}", sources()))?;
        let draw = Draw::parse(table.remove(Draw::KEY))?;
        let generator = (registration.parse)(table)?;
        if draw == Draw::PerRepetition && !generator.fixed_split() {
            return Err(format!(
                "data.draw = \"per_repetition\": {source} already draws a split per repetition; \
                 leave `draw` out"
            ));
        }
        Ok(DataSpec::Synthetic(Synthetic {
            source: registration.source,
            generator,
            draw,
        }))
    }
}

/// `[data] source = "dataset"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatasetSpec {
    pub name: String,
    /// Keep the first `max_rows` rows of each of train and test (and of the points).
    pub max_rows: Option<usize>,
    /// How train and test are drawn per repetition: `{ kind = "given" }` (the published files;
    /// the default where the set has them), `{ kind = "predefined" }` (shipped mask k in
    /// repetition k) or `{ kind = "random", test_fraction = 0.3, stratify = true }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitSpec>,
    /// Binarise a classification set: rows of these classes become class `+1`, all others
    /// `-1` (e.g. MNIST `["3", "4", "6", "7", "9"]` in the Isolation Kernel paper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positive_classes: Option<Vec<String>>,
    /// Multiply every input value by this factor (e.g. `1/255` for 8-bit pixels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_scale: Option<f64>,
    /// A classification task derived from the set's files: another target column, a subset of
    /// its classes, rows filtered by other columns (rules in `datasets::DerivedTask`), e.g.
    /// `task = { target = "relapse", classes = ["False", "True"] }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<datasets::DerivedTask>,
}

/// `[data] source = "file"`: data of one's own, read by the rules of a registry table
/// (`datasets::TableSpec`) with no registry entry and no rebuild. Paths are relative to the
/// config's folder (or absolute). The files' sha256 are computed when the config is read and
/// serialised with the spec, so they are part of every cell's key and of the data seeds (another
/// byte, other keys), and recorded in the manifest.
///
/// ```toml
/// [data]
/// source = "file"
/// path = "my_data.csv"                  # every row; or train = "...", test = "..." (given split)
/// task = "classification"               # or "regression"
/// target = "label"                      # the target column (default: the last column)
/// drop = ["id"]                         # columns that are not inputs
/// split = { kind = "random", test_fraction = 0.3, stratify = true }
/// ```
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// One file holding every row, split per repetition by `split` ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// ... or a training file and a test file: the given split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// `csv`, `csv_gz`, `svmlight` or `svmlight_gz` (default: from the file name: `.csv`,
    /// `.csv.gz`, `.svm`/`.svmlight`/`.libsvm` and their `.gz`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// `regression` or `classification`.
    pub task: Task,
    /// CSV: the target column's name (default: the last column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// CSV: whether the first line names the columns (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<bool>,
    /// CSV: columns that are not inputs (e.g. an id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<String>,
    /// `error` (default) or `drop_rows`: a row with an empty field.
    #[serde(default, skip_serializing_if = "is_default")]
    pub na: NaPolicy,
    /// Classification: how a raw label becomes a class name (`text`, `first_char`, `sign`,
    /// `integer`; svmlight labels need `sign` or `integer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<LabelRule>,
    /// Classification: the class names in label order (default: the names found, sorted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<String>>,
    /// svmlight: the number of input columns (required for svmlight files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_features: Option<usize>,
    /// How train and test are drawn per repetition: required with `path` (e.g. `{ kind =
    /// "random", test_fraction = 0.3 }`); with `train` and `test` the default is `given`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitSpec>,
    /// The files' sha256 by role, computed when the config is read (never written in a
    /// config).
    #[serde(
        default,
        skip_deserializing,
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub sha256: BTreeMap<String, String>,
    /// The config's folder, against which relative paths resolve.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl FileSpec {
    /// (role, path as written) of each file named.
    fn named(&self) -> Vec<(&'static str, &str)> {
        let mut out = Vec::new();
        for (role, path) in [
            ("data", &self.path),
            ("train", &self.train),
            ("test", &self.test),
        ] {
            if let Some(p) = path {
                out.push((role, p.as_str()));
            }
        }
        out
    }

    /// A path as written, resolved against the config's folder.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let p = Path::new(path);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    fn format_of(&self, path: &str) -> Result<Format, String> {
        if let Some(f) = self.format {
            return Ok(f);
        }
        let lower = path.to_ascii_lowercase();
        let (stem, gz) = match lower.strip_suffix(".gz") {
            Some(stem) => (stem, true),
            None => (lower.as_str(), false),
        };
        let ext = Path::new(stem)
            .extension()
            .map(|e| e.to_string_lossy().to_string())
            .unwrap_or_default();
        Ok(match (ext.as_str(), gz) {
            ("csv", false) => Format::Csv,
            ("csv", true) => Format::CsvGz,
            ("svm" | "svmlight" | "libsvm", false) => Format::Svmlight,
            ("svm" | "svmlight" | "libsvm", true) => Format::SvmlightGz,
            _ => {
                return Err(format!(
                    "data.format: cannot tell the format of {path:?} from its name; set format = \
                     \"csv\", \"csv_gz\", \"svmlight\" or \"svmlight_gz\""
                ))
            }
        })
    }

    /// The files and the table rules they are read by (checks everything that needs no read).
    pub fn own_files(&self) -> Result<OwnFiles, String> {
        let named = self.named();
        let roles: Vec<&str> = named.iter().map(|(r, _)| *r).collect();
        match roles.as_slice() {
            ["data"] | ["train", "test"] => {}
            [] => {
                return Err(
                    "data: name the file: path = \"my_data.csv\" (split per repetition), or \
                     train = \"...\" and test = \"...\" (the given split)"
                        .into(),
                )
            }
            _ => {
                return Err(format!(
                    "data: give either path, or both train and test (given: {})",
                    roles.join(", ")
                ))
            }
        }
        let formats = named
            .iter()
            .map(|(_, p)| self.format_of(p))
            .collect::<Result<Vec<_>, _>>()?;
        if formats.windows(2).any(|w| w[0] != w[1]) {
            return Err("data: train and test must have one format".into());
        }
        let format = formats[0];
        if matches!(format, Format::Idx | Format::IdxGz) {
            return Err("data.format: IDX files need a labels file; convert them to CSV".into());
        }
        let csv = matches!(format, Format::Csv | Format::CsvGz);
        let n_features = match (csv, self.n_features) {
            (false, None) => {
                return Err(
                    "data.n_features: svmlight files need the number of input columns".into(),
                )
            }
            (_, n) => n,
        };
        let table = TableSpec {
            task: self.task,
            rows: roles.iter().map(|r| r.to_string()).collect(),
            header: csv.then_some(self.header.unwrap_or(true)),
            target: self.target.clone(),
            target_file: None,
            row_id: None,
            target_row_id: None,
            drop: self.drop.clone(),
            na: self.na,
            n_features,
            labels: self.labels,
            classes: self.classes.clone(),
            test_mask: None,
        };
        let name = named
            .iter()
            .map(|(_, p)| *p)
            .collect::<Vec<_>>()
            .join(" + ");
        let own = OwnFiles {
            name,
            files: named
                .iter()
                .map(|(role, p)| (role.to_string(), self.resolve(p)))
                .collect(),
            format,
            table,
        };
        own.validate().map_err(|e| {
            format!(
                "data: {}",
                e.replace("[dataset.table] ", "")
                    .replace("role `data`", "`path`")
            )
        })?;
        Ok(own)
    }

    /// The split in effect: `split`, else `given` for a train and a test file.
    pub fn split_spec(&self) -> Result<SplitSpec, String> {
        match (&self.split, self.path.is_some()) {
            (Some(s), _) => Ok(s.clone()),
            (None, false) => Ok(SplitSpec::Given),
            (None, true) => Err(
                "data.split: one file holds every row; say how to split it, e.g. split = { kind \
                 = \"random\", test_fraction = 0.3 } (add stratify = true for classes)"
                    .into(),
            ),
        }
    }

    /// Fills in where relative paths resolve and the files' digests (those present; a missing
    /// file is reported when the data are checked or loaded).
    pub fn locate(&mut self, base_dir: &Path) {
        self.base_dir = base_dir.to_path_buf();
        self.sha256 = self
            .named()
            .into_iter()
            .filter_map(|(role, p)| {
                let path = self.resolve(p);
                datasets::file_sha256(&path)
                    .ok()
                    .map(|d| (role.to_string(), d))
            })
            .collect();
    }
}

impl DataSpec {
    /// The synthetic generator, if the data are generated.
    pub fn generator(&self) -> Option<&dyn Generator> {
        match self {
            DataSpec::Synthetic(g) => Some(g.generator()),
            DataSpec::Dataset(_) | DataSpec::File(_) => None,
        }
    }

    /// The generator's parameters when the data are generated by `G` (for a kind that needs
    /// one particular generator, e.g. points on a box).
    pub fn generated_by<G: Generator + 'static>(&self) -> Option<&G> {
        self.generator()?.as_any().downcast_ref()
    }

    /// Whether every repetition sees the same split (the published files, generated rows):
    /// only then do deterministic methods run once.
    pub fn fixed_split(&self) -> bool {
        match self {
            DataSpec::Dataset(d) => matches!(d.split, None | Some(SplitSpec::Given)),
            DataSpec::Synthetic(g) => g.draw == Draw::Once && g.generator().fixed_split(),
            DataSpec::File(f) => f.split_spec() == Ok(SplitSpec::Given),
        }
    }

    /// What the data's numbers depend on (part of every cell's cache key): the generator
    /// (its file, what it imports and the crates it names), or the datasets crate and the
    /// dataset's own registry entry (so registering another dataset changes no key).
    /// The data modules themselves are part of every key.
    pub fn sources(&self) -> DataSources<'_> {
        match self {
            DataSpec::Dataset(d) => DataSources::Dataset(&d.name),
            DataSpec::Synthetic(g) => DataSources::Generator(g.generator().type_path()),
            DataSpec::File(_) => DataSources::Files,
        }
    }

    /// What the data hold: `None` for points without targets, else the task.
    pub fn task(&self) -> Result<Option<Task>, String> {
        match self {
            DataSpec::Dataset(d) => Ok(registry_table(&d.name)?.map(|t| t.task)),
            DataSpec::Synthetic(g) => Ok(g.generator().task()),
            DataSpec::File(f) => Ok(Some(f.task)),
        }
    }

    /// `Ok` when the data are a regression set (a regression dataset, or generated regression
    /// data); else says what they are.
    pub fn require_regression(&self) -> Result<(), String> {
        match self.task()? {
            Some(Task::Regression) => Ok(()),
            Some(Task::Classification) => Err("these data are a classification set".into()),
            None => Err("these data are points without targets".into()),
        }
    }

    /// Checks everything that can be checked without reading data.
    pub fn validate(&self) -> Result<(), String> {
        let d = match self {
            DataSpec::Synthetic(g) => return g.generator().validate(),
            DataSpec::File(f) => {
                f.own_files()?;
                let split = f.split_spec()?;
                return split.validate().map_err(|e| format!("data.split: {e}"));
            }
            DataSpec::Dataset(d) => d,
        };
        if d.max_rows == Some(0) {
            return Err("data.max_rows = 0: need at least one row".into());
        }
        let table = registry_table(&d.name)?.ok_or_else(|| {
            format!(
                "data.name: {} has no [dataset.table] in the registry",
                d.name
            )
        })?;
        if let Some(task) = &d.task {
            let dataset = datasets::Registry::embedded()
                .map_err(|e| e.to_string())?
                .get(&d.name)
                .map_err(|e| format!("data.name: {e}"))?;
            task.validate(dataset, table)?;
        }
        if let Some(scale) = d.input_scale {
            if !(scale.is_finite() && scale > 0.0) {
                return Err(format!(
                    "data.input_scale = {scale}: must be a finite factor > 0"
                ));
            }
        }
        if let Some(positive) = &d.positive_classes {
            if table.task != Task::Classification {
                return Err(format!(
                    "data.positive_classes: {} is not a classification set",
                    d.name
                ));
            }
            if positive.is_empty() {
                return Err("data.positive_classes: name at least one class".into());
            }
            if let Some(twice) = positive
                .iter()
                .enumerate()
                .find(|(i, c)| positive[..*i].contains(c))
            {
                return Err(format!(
                    "data.positive_classes: {:?} is named twice",
                    twice.1
                ));
            }
            let classes = match &d.task {
                Some(task) if task.classes.is_some() => task.classes.as_ref(),
                Some(task) if task.target.is_some() || task.labels.is_some() => None,
                _ => table.classes.as_ref(),
            };
            if let Some(names) = classes {
                if let Some(bad) = positive.iter().find(|c| !names.contains(c)) {
                    return Err(format!(
                        "data.positive_classes: {bad:?} is not a class of {} (classes: {})",
                        d.name,
                        names.join(", ")
                    ));
                }
                if positive.len() >= names.len() {
                    return Err(format!(
                        "data.positive_classes: every class of {} is positive; leave at least one negative",
                        d.name
                    ));
                }
            }
        }
        let published = table.rows.len() == 2;
        let masks = table.test_mask.is_some();
        match &d.split {
            None | Some(SplitSpec::Given) if !published => {
                let random = "split = { kind = \"random\", test_fraction = 0.3 }";
                return Err(format!(
                    "data.split: {} ships no published train/test files; set {}",
                    d.name,
                    if masks {
                        format!("split = {{ kind = \"predefined\" }} or {random}")
                    } else {
                        random.to_string()
                    }
                ));
            }
            Some(SplitSpec::Predefined) if !masks => {
                return Err(format!(
                    "data.split: {} ships no test masks; use {{ kind = \"{}\" }}",
                    d.name,
                    if published {
                        "given"
                    } else {
                        "random\", test_fraction = 0.3"
                    }
                ))
            }
            Some(split) => split.validate().map_err(|e| format!("data.split: {e}"))?,
            None => {}
        }
        if d.max_rows.is_some() && !self.fixed_split() {
            return Err(
                "data.max_rows keeps the first rows of the published files; it cannot be \
                 combined with a predefined or random split"
                    .into(),
            );
        }
        Ok(())
    }
}

fn registry_table(name: &str) -> Result<Option<&'static datasets::TableSpec>, String> {
    Ok(datasets::Registry::embedded()
        .map_err(|e| e.to_string())?
        .get(name)
        .map_err(|e| format!("data.name: {e}"))?
        .table
        .as_ref())
}
