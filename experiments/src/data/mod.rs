//! A config's data: the `[data]` table ([`DataSpec`]), loading it (a registered dataset
//! verified by sha256 and typed by the registry, or synthetic data from the run's data seed),
//! and the split of each repetition.
//!
//! Splits (`[data] split`) are drawn per repetition from the run's data seeds, never from a
//! cell's: every method and parameter point of a run sees the same split in repetition `r`
//! (paired comparisons), and the split does not depend on the thread count. A fixed split (the
//! published files, or the rows of generated data) is one split shared by every repetition.

pub mod synthetic;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Result};
use datasets::{GivenSplits, Inputs, LabelledSet, SplitSpec, Targets, Task};
use ndarray::{Array1, Array2, Axis};
use serde::{Deserialize, Serialize};

use crate::cell::{data_seeds, Seeds};
use crate::fingerprint::DataSources;
use synthetic::double_pendulum::{DoublePendulumData, PendulumTrajectories};
use synthetic::dumbbell::Dumbbell;
use synthetic::laplace_gp::LaplaceGp;
use synthetic::oblique_boundary::ObliqueBoundary;
use synthetic::uniform_box::UniformBox;
use synthetic::varying_sinus::VaryingSinus;
use synthetic::{Generated, Generator};

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
        use crate::config::typed_table as typed;
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
    /// `data/mod.rs` itself is part of every key.
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

/// Inputs (one per row) and their targets.
#[derive(Debug, Clone)]
pub struct Labelled {
    pub x: Array2<f64>,
    pub y: Array1<f64>,
}

/// The sets of a regression experiment.
#[derive(Debug, Clone)]
pub struct RegressionSets {
    pub train: Labelled,
    /// A validation set (model selection), when the data define one.
    pub validation: Option<Labelled>,
    pub test: Labelled,
}

/// Rows of one repetition's sets (indices into the labelled set).
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    pub train: Vec<usize>,
    /// Empty when the data define no validation set.
    pub validation: Vec<usize>,
    pub test: Vec<usize>,
}

enum Splitting {
    /// One split for every repetition.
    Fixed(Arc<Parts>),
    /// Drawn per repetition.
    PerRepetition(SplitSpec),
}

enum Source {
    Points(Arc<Array2<f64>>),
    Trajectories(Arc<PendulumTrajectories>),
    Sets {
        set: Arc<LabelledSet>,
        splitting: Splitting,
        max_rows: Option<usize>,
    },
}

/// The data of a run, with the digests of every file read.
pub struct LoadedData {
    source: Source,
    seeds: Seeds,
    /// sha256 by dataset, then by file path (empty for synthetic data).
    pub digests: BTreeMap<String, BTreeMap<String, String>>,
    /// What generating the data had to do beyond the spec (recorded in the manifest), e.g. a
    /// jitter added to a kernel matrix.
    pub notes: Vec<String>,
}

/// The data one repetition sees.
pub enum DataView {
    /// Points (synthetic), one per row.
    Points(Arc<Array2<f64>>),
    /// Simulated pendulum trajectories.
    Trajectories(Arc<PendulumTrajectories>),
    /// A labelled set and this repetition's split of it.
    Sets(SplitSets),
}

/// A labelled set and one repetition's split.
pub struct SplitSets {
    pub set: Arc<LabelledSet>,
    pub parts: Arc<Parts>,
}

impl SplitSets {
    /// Inputs and targets of the given rows.
    pub fn rows(&self, rows: &[usize]) -> (Inputs, Targets) {
        self.set.select(rows)
    }
}

impl DataView {
    /// The points: synthetic points, or the (dense) training inputs of a labelled set.
    pub fn points(&self) -> Result<Array2<f64>> {
        match self {
            DataView::Points(x) => Ok(x.as_ref().clone()),
            DataView::Sets(s) => Ok(dense(&s.set, &s.parts.train)?),
            DataView::Trajectories(_) => bail!("these data are trajectories, not points"),
        }
    }

    /// The labelled set and this repetition's split.
    pub fn sets(&self) -> Result<&SplitSets> {
        match self {
            DataView::Sets(s) => Ok(s),
            DataView::Points(_) => bail!("this experiment needs a labelled dataset, not points"),
            DataView::Trajectories(_) => {
                bail!("this experiment needs a labelled dataset, not trajectories")
            }
        }
    }

    /// The simulated trajectories.
    pub fn trajectories(&self) -> Result<Arc<PendulumTrajectories>> {
        match self {
            DataView::Trajectories(t) => Ok(t.clone()),
            _ => bail!(
                "this experiment needs simulated trajectories (data.source = \"double_pendulum\")"
            ),
        }
    }

    /// The regression sets of this repetition (dense inputs, real targets).
    pub fn regression(&self) -> Result<RegressionSets> {
        let DataView::Sets(s) = self else {
            bail!("this experiment needs a regression dataset");
        };
        let Targets::Real(y) = &s.set.y else {
            bail!(
                "{} is a classification set; this experiment needs regression targets",
                s.set.name
            );
        };
        let part = |rows: &[usize]| -> Result<Labelled> {
            Ok(Labelled {
                x: dense(&s.set, rows)?,
                y: y.select(Axis(0), rows),
            })
        };
        Ok(RegressionSets {
            train: part(&s.parts.train)?,
            validation: (!s.parts.validation.is_empty())
                .then(|| part(&s.parts.validation))
                .transpose()?,
            test: part(&s.parts.test)?,
        })
    }
}

fn dense(set: &LabelledSet, rows: &[usize]) -> Result<Array2<f64>> {
    match &set.x {
        Inputs::Dense(x) => Ok(x.select(Axis(0), rows)),
        Inputs::Sparse(_) => bail!(
            "{} has sparse inputs; this experiment needs dense ones",
            set.name
        ),
    }
}

impl LoadedData {
    /// Repetitions with equal groups see the same split (0 for a fixed split, else `rep`).
    pub fn split_group(&self, rep: usize) -> usize {
        match &self.source {
            Source::Sets {
                splitting: Splitting::PerRepetition(_),
                ..
            } => rep,
            _ => 0,
        }
    }

    /// The data repetition `rep` sees.
    pub fn view(&self, rep: usize) -> Result<DataView> {
        let (set, splitting, max_rows) = match &self.source {
            Source::Points(x) => return Ok(DataView::Points(x.clone())),
            Source::Trajectories(t) => return Ok(DataView::Trajectories(t.clone())),
            Source::Sets {
                set,
                splitting,
                max_rows,
            } => (set, splitting, max_rows),
        };
        let parts = match splitting {
            Splitting::Fixed(parts) => parts.clone(),
            Splitting::PerRepetition(spec) => {
                let split = spec.draw(set, rep, &mut self.seeds.rng(&format!("split/{rep}")))?;
                Arc::new(Parts {
                    train: split.train,
                    validation: Vec::new(),
                    test: split.test,
                })
            }
        };
        let parts = match max_rows {
            Some(n) => Arc::new(Parts {
                train: parts.train.iter().take(*n).copied().collect(),
                validation: parts.validation.clone(),
                test: parts.test.iter().take(*n).copied().collect(),
            }),
            None => parts,
        };
        Ok(DataView::Sets(SplitSets {
            set: set.clone(),
            parts,
        }))
    }

    /// Seeds of repetition `rep`'s data streams: the same for every cell of the repetition
    /// (whatever its method), another in every repetition.
    pub fn stream_seeds(&self, rep: usize) -> Seeds {
        self.seeds.derive(&format!("stream/{rep}"))
    }
}

/// Why a run's data cannot be used.
#[derive(Debug, Clone)]
pub struct DataProblem {
    /// The files are absent (as opposed to present but corrupt or unreadable).
    pub missing: bool,
    /// What is wrong and how to get the data.
    pub message: String,
}

impl std::fmt::Display for DataProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Whether the data can be had without downloading: `Err` says what is missing or corrupt and
/// how to get it.
pub fn check_available(root: &Path, spec: &DataSpec) -> Result<(), DataProblem> {
    match spec {
        DataSpec::Dataset(d) => datasets::DataDirs::from_root(root)
            .locate_name(&d.name)
            .map(|_| ())
            .map_err(|e| DataProblem {
                missing: matches!(e, datasets::DatasetError::Missing { .. }),
                message: e.to_string(),
            }),
        _ => Ok(()),
    }
}

/// Rows of the `positive` classes become class `+1` (label 1), the others `-1` (label 0).
fn binarise(set: &mut LabelledSet, positive: &[String]) -> Result<()> {
    let Targets::Classes { labels, names } = &set.y else {
        bail!("data.positive_classes: {} has real targets", set.name);
    };
    if let Some(bad) = positive.iter().find(|c| !names.contains(c)) {
        bail!(
            "data.positive_classes: {bad:?} is not a class of {} (classes: {})",
            set.name,
            names.join(", ")
        );
    }
    let is_positive: Vec<bool> = names.iter().map(|n| positive.contains(n)).collect();
    set.y = Targets::Classes {
        labels: labels
            .iter()
            .map(|&l| u32::from(is_positive[l as usize]))
            .collect(),
        names: vec!["-1".into(), "+1".into()],
    };
    Ok(())
}

/// Every input value times `scale`.
fn scale_inputs(set: &mut LabelledSet, scale: f64) {
    set.x = match std::mem::replace(&mut set.x, Inputs::Dense(Array2::zeros((0, 0)))) {
        Inputs::Dense(x) => Inputs::Dense(x * scale),
        Inputs::Sparse(x) => {
            let n_cols = x.n_cols();
            let (_, indptr, indices, values) = x.into_parts();
            let values = values.into_iter().map(|v| v * scale).collect();
            Inputs::Sparse(
                datasets::CsrMatrix::from_parts(n_cols, indptr, indices, values)
                    .expect("scaling keeps a valid CSR matrix"),
            )
        }
    };
}

fn range(r: Range<usize>) -> Vec<usize> {
    r.collect()
}

/// A generated sample as a labelled set (columns `x1`, `x2`, ...; no shipped splits).
fn generated_set(x: Array2<f64>, y: Targets) -> LabelledSet {
    LabelledSet {
        name: "generated".into(),
        feature_names: (1..=x.ncols()).map(|j| format!("x{j}")).collect(),
        x: Inputs::Dense(x),
        y,
        given: GivenSplits::None,
    }
}

/// Loads (or generates) the data of a run of `repeats` repetitions.
pub fn load(root: &Path, spec: &DataSpec, base_seed: u64, repeats: usize) -> Result<LoadedData> {
    spec.validate().map_err(anyhow::Error::msg)?;
    let seeds = data_seeds(base_seed, spec);
    let mut notes = Vec::new();
    let mut digests = BTreeMap::new();
    let source = match spec {
        DataSpec::Dataset(d) => {
            let dirs = datasets::DataDirs::from_root(root);
            let dataset = datasets::Registry::embedded()?.get(&d.name)?;
            let located = dirs.locate(dataset)?;
            let files = located
                .files
                .iter()
                .map(|f| {
                    let entry = dataset.file(&f.role).map(|e| e.sha256.clone());
                    (f.rel_path.clone(), entry.unwrap_or_default())
                })
                .collect();
            digests.insert(d.name.clone(), files);
            let mut set = datasets::load_task(&dirs, dataset, d.task.as_ref())?;
            if let Some(positive) = &d.positive_classes {
                binarise(&mut set, positive)?;
            }
            if let Some(scale) = d.input_scale {
                scale_inputs(&mut set, scale);
            }
            let split = match (&d.split, &set.given) {
                (Some(s), _) => s.clone(),
                (None, GivenSplits::TrainTest { .. }) => SplitSpec::Given,
                (None, _) => bail!("data.split: {} ships no published train/test files", d.name),
            };
            split
                .check_set(&set.given, &set.y, repeats)
                .map_err(|e| anyhow::anyhow!("data.split: {}: {e}", d.name))?;
            let splitting = if split == SplitSpec::Given {
                // The published files: one split for every repetition (it draws nothing).
                let fixed = split.draw(&set, 0, &mut seeds.rng("split/given"))?;
                Splitting::Fixed(Arc::new(Parts {
                    train: fixed.train,
                    validation: Vec::new(),
                    test: fixed.test,
                }))
            } else {
                Splitting::PerRepetition(split)
            };
            Source::Sets {
                set: Arc::new(set),
                splitting,
                max_rows: d.max_rows,
            }
        }
        _ => {
            let generator = spec.generator().expect("synthetic data have a generator");
            match generator.generate(&mut seeds.rng("data"))? {
                Generated::Points(x) => Source::Points(Arc::new(x)),
                Generated::Trajectories(t) => Source::Trajectories(Arc::new(t)),
                Generated::Classification {
                    x,
                    labels,
                    names,
                    split,
                } => {
                    let set = generated_set(x, Targets::Classes { labels, names });
                    split
                        .check_set(&set.given, &set.y, repeats)
                        .map_err(|e| anyhow::anyhow!("data: {e}"))?;
                    Source::Sets {
                        set: Arc::new(set),
                        splitting: Splitting::PerRepetition(split),
                        max_rows: None,
                    }
                }
                Generated::Regression {
                    x,
                    y,
                    n_train,
                    n_validation,
                    notes: generated_notes,
                } => {
                    notes.extend(generated_notes);
                    let n = y.len();
                    let b = n_train + n_validation;
                    let parts = Parts {
                        train: range(0..n_train),
                        validation: range(n_train..b),
                        test: range(b..n),
                    };
                    let set = generated_set(x, Targets::Real(y));
                    Source::Sets {
                        set: Arc::new(set),
                        splitting: Splitting::Fixed(Arc::new(parts)),
                        max_rows: None,
                    }
                }
            }
        }
    };
    Ok(LoadedData {
        source,
        seeds,
        digests,
        notes,
    })
}

#[cfg(test)]
mod tests {
    //! On the real registered data (`../shared/datasets`); each test says so and returns when
    //! the data are absent.
    use super::*;

    fn root() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_path_buf()
    }

    fn spec(text: &str) -> DataSpec {
        toml::from_str(text).unwrap()
    }

    /// The data, or `None` (with a note) when the dataset is not present.
    fn loaded(text: &str, seed: u64, repeats: usize) -> Option<Result<LoadedData>> {
        let spec = spec(text);
        if let Err(e) = check_available(&root(), &spec) {
            eprintln!("skipped: {e}");
            return None;
        }
        Some(load(&root(), &spec, seed, repeats))
    }

    fn parts(data: &LoadedData, rep: usize) -> Parts {
        data.view(rep)
            .unwrap()
            .sets()
            .unwrap()
            .parts
            .as_ref()
            .clone()
    }

    const YACHT_RANDOM: &str =
        "source = 'dataset'\nname = 'uci/yacht'\nsplit = { kind = 'random', test_fraction = 0.3 }";

    #[test]
    fn random_splits_are_reproducible_per_repetition_and_differ_across_repetitions() {
        let Some(a) = loaded(YACHT_RANDOM, 7, 3) else {
            return;
        };
        let a = a.unwrap();
        let b = loaded(YACHT_RANDOM, 7, 3).unwrap().unwrap();
        let other_seed = loaded(YACHT_RANDOM, 8, 3).unwrap().unwrap();
        for rep in 0..3 {
            let p = parts(&a, rep);
            // The same (seed, data, repetition) gives the same split: every method and
            // parameter point of a run sees it, whatever the thread count.
            assert_eq!(p, parts(&b, rep));
            assert_ne!(p, parts(&other_seed, rep));
            assert_eq!(a.split_group(rep), rep);
            assert_eq!(p.test.len(), 92, "round(0.3 * 308)");
            let mut all: Vec<usize> = p.train.iter().chain(&p.test).copied().collect();
            all.sort();
            assert_eq!(all, (0..308).collect::<Vec<_>>());
        }
        assert_ne!(parts(&a, 0), parts(&a, 1));
        assert_ne!(parts(&a, 1), parts(&a, 2));
        let sets = a.view(1).unwrap().regression().unwrap();
        assert_eq!((sets.train.x.dim(), sets.test.y.len()), ((216, 6), 92));
    }

    #[test]
    fn predefined_splits_are_the_shipped_masks_one_per_repetition() {
        let text = "source = 'dataset'\nname = 'uci/yacht'\nsplit = { kind = 'predefined' }";
        let Some(data) = loaded(text, 1, 10) else {
            return;
        };
        let data = data.unwrap();
        let set = datasets::load(&datasets::DataDirs::from_root(root()), "uci/yacht").unwrap();
        let GivenSplits::Masks(masks) = &set.given else {
            panic!("uci/yacht ships test masks");
        };
        for k in 0..10 {
            let expected: Vec<usize> = (0..308).filter(|&i| masks[[i, k]]).collect();
            assert_eq!(parts(&data, k).test, expected, "mask {k}");
        }
        // More repetitions than masks, or no split at all, is a clear error.
        let err = loaded(text, 1, 11).unwrap().err().unwrap().to_string();
        assert!(err.contains("10 masks"), "{err}");
        let err = loaded("source = 'dataset'\nname = 'uci/yacht'", 1, 1)
            .unwrap()
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("predefined") && err.contains("random"),
            "{err}"
        );
    }

    #[test]
    fn the_given_split_is_the_published_files_in_every_repetition() {
        let Some(data) = loaded("source = 'dataset'\nname = 'cpu_rr'", 1, 5) else {
            return;
        };
        let data = data.unwrap();
        assert_eq!(data.split_group(4), 0);
        assert_eq!(parts(&data, 0), parts(&data, 4));
        let sets = data.view(3).unwrap().regression().unwrap();
        // The published files, read on their own.
        let located = datasets::DataDirs::from_root(root())
            .locate_name("cpu_rr")
            .unwrap();
        let (x_train, _) = datasets::load_xy(located.path("train").unwrap(), true).unwrap();
        let (_, y_test) = datasets::load_xy(located.path("test").unwrap(), true).unwrap();
        assert_eq!(sets.train.x, x_train);
        assert_eq!(sets.test.y, y_test);
        assert!(sets.validation.is_none());
        assert!(spec("source = 'dataset'\nname = 'cpu_rr'").fixed_split());
        assert!(!spec(YACHT_RANDOM).fixed_split());
    }

    #[test]
    fn stratified_splits_keep_class_proportions_and_streams_are_shared_per_repetition() {
        let text = "source = 'dataset'\nname = 'classification/sonar'\nsplit = { kind = 'random', test_fraction = 0.25, stratify = true }";
        let Some(data) = loaded(text, 3, 2) else {
            return;
        };
        let data = data.unwrap();
        let view = data.view(0).unwrap();
        let sets = view.sets().unwrap();
        let counts = |rows: &[usize]| sets.rows(rows).1.class_counts().unwrap();
        let (all, test) = (
            counts(&(0..208).collect::<Vec<_>>()),
            counts(&sets.parts.test),
        );
        for (c, t) in all.iter().zip(&test) {
            assert!(
                (*t as f64 - 0.25 * *c as f64).abs() <= 1.0,
                "{all:?} {test:?}"
            );
        }
        // A shuffled stream is a permutation, the same for every cell of the repetition, and
        // another one in the next repetition.
        let tick = |_: f64| {};
        let cell = crate::cell::Seeds::from_bytes([1; 32]);
        let other_cell = crate::cell::Seeds::from_bytes([2; 32]);
        let stream = |cell, rep| {
            crate::context::CellContext::new(cell, data.stream_seeds(rep), &tick, None)
                .shuffled(&(0..208).collect::<Vec<_>>())
        };
        let rows: Vec<usize> = (0..208).collect();
        assert_ne!(stream(cell, 0), rows);
        let mut sorted = stream(cell, 0);
        sorted.sort();
        assert_eq!(sorted, rows);
        assert_eq!(stream(cell, 0), stream(other_cell, 0));
        assert_ne!(stream(cell, 0), stream(cell, 1));
        // Classification data are not regression data.
        let err = view.regression().err().unwrap().to_string();
        assert!(err.contains("classification"), "{err}");
    }

    #[test]
    fn sparse_sets_load_sparse() {
        let text = "source = 'dataset'\nname = 'a8a'\nsplit = { kind = 'random', test_fraction = 0.3, stratify = true }";
        let Some(data) = loaded(text, 1, 1) else {
            return;
        };
        let data = data.unwrap();
        let view = data.view(0).unwrap();
        let sets = view.sets().unwrap();
        assert!(matches!(sets.set.x, Inputs::Sparse(_)));
        assert_eq!(sets.set.n_rows(), 22696);
        let err = view.points().err().unwrap().to_string();
        assert!(err.contains("sparse"), "{err}");
    }
}
