//! The `[data]` table as written: where the data come from, checked before anything loads.

use anyhow::Result;
use datasets::{SplitSpec, Task};
use serde::{Deserialize, Serialize};

use super::synthetic::double_pendulum::DoublePendulumData;
use super::synthetic::dumbbell::Dumbbell;
use super::synthetic::laplace_gp::LaplaceGp;
use super::synthetic::oblique_boundary::ObliqueBoundary;
use super::synthetic::uniform_box::UniformBox;
use super::synthetic::varying_sinus::VaryingSinus;
use super::synthetic::Generator;
use crate::fingerprint::DataSources;

/// Where the data come from (`[data] source = ...`). Deserialised through [`DataTable`] so
/// that an error names the key (`data.n: invalid type ...`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "source", rename_all = "snake_case", try_from = "DataTable")]
pub enum DataSpec {
    /// `n` points uniform on `[low, high]^dim`, drawn from the run's data seed (no download).
    UniformBox(UniformBox),
    /// A registered dataset (`datasets/registry.toml`), verified by sha256 and typed by the
    /// registry's `[dataset.table]`.
    Dataset(DatasetSpec),
    /// A Gaussian-process regression sample with the Laplace kernel.
    LaplaceGp(LaplaceGp),
    /// VarSinus, sin(1/(x + 0.01)) + noise (StreaMRAK).
    VaryingSinus(VaryingSinus),
    /// The 5-D dumbbell (StreaMRAK).
    Dumbbell(Dumbbell),
    /// Simulated double-pendulum trajectories (StreaMRAK).
    DoublePendulum(DoublePendulumData),
    /// Two classes split by an oblique hyperplane (Random Tessellation Forests simulation).
    ObliqueBoundary(ObliqueBoundary),
}

/// The `source` names, for error messages.
const SOURCES: &str =
    "uniform_box, dataset, laplace_gp, varying_sinus, dumbbell, double_pendulum, oblique_boundary";

/// The `[data]` table as written.
#[derive(Deserialize)]
#[serde(transparent)]
pub struct DataTable(toml::Table);

impl TryFrom<DataTable> for DataSpec {
    type Error = String;
    fn try_from(DataTable(mut table): DataTable) -> Result<Self, String> {
        let source = match table.remove("source") {
            Some(toml::Value::String(s)) => s,
            Some(other) => {
                return Err(format!(
                    "data.source: expected a string, got {}",
                    other.type_str()
                ))
            }
            None => return Err(format!("data.source: missing; one of {SOURCES}")),
        };
        use crate::toml_table::typed_table as typed;
        match source.as_str() {
            "uniform_box" => Ok(DataSpec::UniformBox(typed(table, "data")?)),
            "dataset" => Ok(DataSpec::Dataset(typed(table, "data")?)),
            "laplace_gp" => Ok(DataSpec::LaplaceGp(typed(table, "data")?)),
            "varying_sinus" => Ok(DataSpec::VaryingSinus(typed(table, "data")?)),
            "dumbbell" => Ok(DataSpec::Dumbbell(typed(table, "data")?)),
            "double_pendulum" => Ok(DataSpec::DoublePendulum(typed(table, "data")?)),
            "oblique_boundary" => Ok(DataSpec::ObliqueBoundary(typed(table, "data")?)),
            other => Err(format!(
                "data.source = {other:?} is unknown; one of {SOURCES}"
            )),
        }
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
            DataSpec::UniformBox(g) => Some(g),
            DataSpec::LaplaceGp(g) => Some(g),
            DataSpec::VaryingSinus(g) => Some(g),
            DataSpec::Dumbbell(g) => Some(g),
            DataSpec::DoublePendulum(g) => Some(g),
            DataSpec::ObliqueBoundary(g) => Some(g),
            DataSpec::Dataset(_) => None,
        }
    }

    /// Whether every repetition sees the same split (the published files, generated rows):
    /// only then do deterministic methods run once.
    pub fn fixed_split(&self) -> bool {
        match self {
            DataSpec::Dataset(d) => matches!(d.split, None | Some(SplitSpec::Given)),
            DataSpec::ObliqueBoundary(_) => false,
            _ => true,
        }
    }

    /// What the data's numbers depend on (part of every cell's cache key): the generator
    /// (its file, what it imports and the crates it names), or the datasets crate and the
    /// dataset's own registry entry (so registering another dataset changes no key).
    /// The data modules themselves are part of every key.
    pub fn sources(&self) -> DataSources<'_> {
        match self {
            DataSpec::Dataset(d) => DataSources::Dataset(&d.name),
            _ => DataSources::Generator(
                self.generator()
                    .expect("synthetic data have a generator")
                    .type_path(),
            ),
        }
    }

    /// What the data hold: `None` for points without targets, else the task.
    pub fn task(&self) -> Result<Option<Task>, String> {
        match (self, self.generator()) {
            (DataSpec::Dataset(d), _) => Ok(registry_table(&d.name)?.map(|t| t.task)),
            (_, Some(g)) => Ok(g.task()),
            (_, None) => Ok(None),
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
        if let Some(g) = self.generator() {
            return g.validate();
        }
        let DataSpec::Dataset(d) = self else {
            return Ok(());
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
                return Err(format!(
                    "data.split: {} ships no published train/test files; set split = {{ kind = \
                     \"{}\" }} or split = {{ kind = \"random\", test_fraction = 0.3 }}",
                    d.name,
                    if masks {
                        "predefined"
                    } else {
                        "random\", test_fraction = 0.3"
                    }
                ))
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
