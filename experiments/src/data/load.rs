//! Loading a run's data: a registered dataset verified and typed by the registry, or synthetic
//! data from the run's data seeds; the split of each repetition.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Result};
use datasets::{GivenSplits, Inputs, LabelledSet, SplitSpec, Targets};
use ndarray::Array2;
use rand_chacha::ChaCha8Rng;

use super::spec::*;
use super::synthetic::double_pendulum::PendulumTrajectories;
use super::synthetic::{Generated, Generator};
use super::view::*;
use crate::seeds::{seeds_from, Seeds};

enum Splitting {
    /// One split for every repetition.
    Fixed(Arc<Parts>),
    /// Drawn per repetition.
    PerRepetition(SplitSpec),
}

enum Source {
    /// One draw of synthetic data per repetition (`data.draw = "per_repetition"`).
    Draws(Vec<Source>),
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

impl LoadedData {
    /// Repetitions with equal groups see the same split (0 for a fixed split, else `rep`).
    pub fn split_group(&self, rep: usize) -> usize {
        match &self.source {
            Source::Sets {
                splitting: Splitting::PerRepetition(_),
                ..
            }
            | Source::Draws(_) => rep,
            _ => 0,
        }
    }

    /// The data repetition `rep` sees.
    pub fn view(&self, rep: usize) -> Result<DataView> {
        self.view_of(&self.source, rep)
    }

    fn view_of(&self, source: &Source, rep: usize) -> Result<DataView> {
        let (set, splitting, max_rows) = match source {
            Source::Draws(draws) => {
                let draw = draws.get(rep).ok_or_else(|| {
                    anyhow::anyhow!(
                        "repetition {rep}: the data were drawn for {} repetitions",
                        draws.len()
                    )
                })?;
                return self.view_of(draw, rep);
            }
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
        DataSpec::File(f) => {
            let own = f.own_files().map_err(|message| DataProblem {
                missing: false,
                message,
            })?;
            own.digests().map(|_| ()).map_err(|e| DataProblem {
                missing: true,
                message: e.to_string(),
            })
        }
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

/// Seeds of a run's data (synthetic data, splits, streams), from (base seed, data spec): the
/// same for every cell of the run.
pub fn data_seeds(base_seed: u64, data: &DataSpec) -> Seeds {
    let mut value = serde_json::to_value(data).expect("data spec serialises");
    // How often synthetic data are drawn does not move the draws: repetition 0 of
    // `per_repetition` is the `once` draw.
    if let Some(map) = value.as_object_mut() {
        map.remove("draw");
    }
    let spec = serde_json::to_string(&value).expect("json");
    seeds_from(base_seed, "repro-data-v1", &spec)
}

/// A labelled set and how each repetition splits it (checked against the set: its shipped
/// splits, its classes, the repetitions).
fn split_sets(
    set: LabelledSet,
    split: SplitSpec,
    name: &str,
    seeds: &Seeds,
    repeats: usize,
    max_rows: Option<usize>,
) -> Result<Source> {
    split
        .check_set(&set.given, &set.y, repeats)
        .map_err(|e| anyhow::anyhow!("data.split: {name}: {e}"))?;
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
    Ok(Source::Sets {
        set: Arc::new(set),
        splitting,
        max_rows,
    })
}

/// The source of one draw of a synthetic generator.
fn generated_source(
    generator: &dyn Generator,
    rng: &mut ChaCha8Rng,
    repeats: usize,
    notes: &mut Vec<String>,
) -> Result<Source> {
    Ok(match generator.generate(rng)? {
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
    })
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
            split_sets(set, split, &d.name, &seeds, repeats, d.max_rows)?
        }
        DataSpec::File(f) => {
            let own = f.own_files().map_err(anyhow::Error::msg)?;
            let (set, files) = own.load()?;
            for file in &files {
                if f.sha256.get(&file.role).is_some_and(|d| *d != file.sha256) {
                    bail!(
                        "{} changed since the config was read (sha256 {}); run again",
                        file.path.display(),
                        file.sha256
                    );
                }
            }
            digests.insert(
                format!("file:{}", own.name),
                files
                    .iter()
                    .map(|file| (file.path.display().to_string(), file.sha256.clone()))
                    .collect(),
            );
            let split = f.split_spec().map_err(anyhow::Error::msg)?;
            split_sets(set, split, &own.name, &seeds, repeats, None)?
        }
        DataSpec::Synthetic(g) => {
            let mut draw = |purpose: &str| {
                generated_source(g.generator(), &mut seeds.rng(purpose), repeats, &mut notes)
            };
            match g.draw() {
                Draw::Once => draw("data")?,
                // Repetition 0 sees the `once` draw.
                Draw::PerRepetition => Source::Draws(
                    (0..repeats)
                        .map(|rep| match rep {
                            0 => draw("data"),
                            _ => draw(&format!("data/{rep}")),
                        })
                        .collect::<Result<_>>()?,
                ),
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
