//! The `[data]` table as written: where the data come from, checked before anything loads.

use anyhow::Result;
use datasets::{SplitSpec, Task};
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
}

/// A generator with the `source` name it registered.
#[derive(Debug)]
pub struct Synthetic {
    source: &'static str,
    generator: Box<dyn Generator>,
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
}

impl Clone for Synthetic {
    fn clone(&self) -> Self {
        Self {
            source: self.source,
            generator: self.generator.clone_box(),
        }
    }
}

impl PartialEq for Synthetic {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source && self.generator.to_json() == other.generator.to_json()
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
        };
        let serde_json::Value::Object(mut map) = fields else {
            return Err(serde::ser::Error::custom(format!(
                "data source {source}: its parameters do not serialise as a table"
            )));
        };
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
            let mut names = vec!["dataset"];
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
        let registration = synthetic::find(&source)
            .ok_or_else(|| format!("data.source = {source:?} is unknown; one of {}", sources()))?;
        Ok(DataSpec::Synthetic(Synthetic {
            source: registration.source,
            generator: (registration.parse)(table)?,
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

impl DataSpec {
    /// The synthetic generator, if the data are generated.
    pub fn generator(&self) -> Option<&dyn Generator> {
        match self {
            DataSpec::Synthetic(g) => Some(g.generator()),
            DataSpec::Dataset(_) => None,
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
            DataSpec::Synthetic(g) => g.generator().fixed_split(),
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
        }
    }

    /// What the data hold: `None` for points without targets, else the task.
    pub fn task(&self) -> Result<Option<Task>, String> {
        match self {
            DataSpec::Dataset(d) => Ok(registry_table(&d.name)?.map(|t| t.task)),
            DataSpec::Synthetic(g) => Ok(g.generator().task()),
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
