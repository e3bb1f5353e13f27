//! `[[check]]` and `[[hypothesis]]` tables as written: parsed (unknown keys rejected, with the
//! test's own keys beside the common ones), and checked against the columns a run will produce.

use serde::{Deserialize, Serialize};

/// What `mean` and `ratio` checks compute over the selected values.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    #[default]
    Mean,
    Sd,
    Median,
    MeanAbs,
    Count,
    Min,
    Max,
}

impl Statistic {
    pub(super) fn of(self, values: &[f64]) -> f64 {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        match self {
            Statistic::Mean => mean,
            Statistic::Sd => (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt(),
            Statistic::Median => {
                let mut v = values.to_vec();
                v.sort_by(f64::total_cmp);
                let k = v.len() / 2;
                if v.len() % 2 == 1 {
                    v[k]
                } else {
                    (v[k - 1] + v[k]) / 2.0
                }
            }
            Statistic::MeanAbs => values.iter().map(|v| v.abs()).sum::<f64>() / n,
            Statistic::Count => n,
            Statistic::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
            Statistic::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// Override keys under which every check stays valid: they change the draws or their number,
/// not the parameters the bounds presume.
pub const ALWAYS_VALID_UNDER: &[&str] = &["seed", "repeats"];

/// What a check's bounds rest on (`basis = ...`): what its passing shows.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Bounds from the paper's number and its stated or measured spread: a pass is a
    /// reproduction.
    Published,
    /// Bounds from the authors' code run on the same splits: a pass is agreement with it.
    Upstream,
    /// A pin of the project's own output (for CI only): a pass says nothing moved, not that
    /// anything reproduces.
    Regression,
    /// A property true by construction, kept because it guards the run's output.
    Invariant,
}

impl Basis {
    pub const ALL: [Basis; 4] = [
        Basis::Published,
        Basis::Upstream,
        Basis::Regression,
        Basis::Invariant,
    ];

    pub fn word(self) -> &'static str {
        match self {
            Basis::Published => "published",
            Basis::Upstream => "upstream",
            Basis::Regression => "regression",
            Basis::Invariant => "invariant",
        }
    }
}

/// A published number this project does not reproduce, known and explained: the check keeps
/// its published bounds, and a run outside them is reported as "not reproduced (known)", never
/// as a pass and never as a failure.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KnownDeviation {
    /// Why it does not reproduce, as far as known.
    pub reason: String,
    /// What shows it (measurements, the authors' code on the same split, ...).
    pub evidence: String,
}

/// One `[[check]]`: the fields every check has, and its test.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CheckSpec {
    pub name: String,
    pub metric: String,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// What the bounds rest on (required of `[[check]]`; a `[[hypothesis]]` has none).
    pub basis: Option<Basis>,
    /// The paper's artefact it speaks for (an `id` of the paper's `artefacts.toml`).
    pub artefact: Option<String>,
    /// The paper's number the bounds are drawn around, when there is one.
    pub published: Option<f64>,
    pub known_deviation: Option<KnownDeviation>,
    /// Profiles it applies to (all when empty).
    pub profiles: Vec<String>,
    /// Config keys (as given to `--set`; a table name covers its keys) that may be overridden
    /// without invalidating the bounds, beyond `seed` and `repeats`. A run that overrides any
    /// other key reports the check as not applicable: its bounds presume the paper's
    /// parameters.
    pub holds_under: Vec<String>,
    #[serde(flatten)]
    pub test: CheckTest,
}

/// The common fields of a check, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Common {
    name: String,
    metric: String,
    min: Option<f64>,
    max: Option<f64>,
    basis: Option<Basis>,
    artefact: Option<String>,
    published: Option<f64>,
    known_deviation: Option<KnownDeviation>,
    #[serde(default)]
    profiles: Vec<String>,
    #[serde(default)]
    holds_under: Vec<String>,
}

const COMMON_KEYS: [&str; 10] = [
    "name",
    "metric",
    "min",
    "max",
    "basis",
    "artefact",
    "published",
    "known_deviation",
    "profiles",
    "holds_under",
];

impl<'de> Deserialize<'de> for CheckSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut rest = toml::Table::deserialize(d)?;
        let common: toml::Table = COMMON_KEYS
            .iter()
            .filter_map(|k| rest.remove(*k).map(|v| (k.to_string(), v)))
            .collect();
        let common: Common = toml::Value::Table(common)
            .try_into()
            .map_err(|e: toml::de::Error| D::Error::custom(e.message()))?;
        let test: CheckTest = toml::Value::Table(rest)
            .try_into()
            .map_err(|e: toml::de::Error| D::Error::custom(e.message()))?;
        Ok(CheckSpec {
            name: common.name,
            metric: common.metric,
            min: common.min,
            max: common.max,
            basis: common.basis,
            artefact: common.artefact,
            published: common.published,
            known_deviation: common.known_deviation,
            profiles: common.profiles,
            holds_under: common.holds_under,
            test,
        })
    }
}

/// What a check computes from the rows (`kind = ...`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CheckTest {
    Mean {
        #[serde(default)]
        select: toml::Table,
        #[serde(default)]
        statistic: Statistic,
    },
    LoglogSlope {
        x: String,
        #[serde(default)]
        select: toml::Table,
        x_min: f64,
        x_max: f64,
    },
    Ratio {
        numerator: toml::Table,
        denominator: toml::Table,
        #[serde(default)]
        statistic: Statistic,
    },
    ReachRatio {
        x: String,
        below: f64,
        numerator: toml::Table,
        denominator: toml::Table,
    },
    SignTest {
        better: toml::Table,
        worse: toml::Table,
        #[serde(default = "default_pair_by")]
        pair_by: Vec<String>,
    },
}

pub(super) fn default_pair_by() -> Vec<String> {
    vec!["rep".into()]
}

impl CheckSpec {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the check applies to runs of `profile`.
    pub fn applies_to(&self, profile: &str) -> bool {
        self.profiles.is_empty() || self.profiles.iter().any(|p| p == profile)
    }

    /// The overrides (`KEY=VALUE`) of a run that the check's bounds do not survive, if any.
    pub fn invalidated_by<'a>(&self, overrides: &'a [String]) -> Vec<&'a str> {
        let covers =
            |allowed: &str, key: &str| key == allowed || key.starts_with(&format!("{allowed}."));
        overrides
            .iter()
            .map(|o| o.split_once('=').map_or(o.as_str(), |(k, _)| k).trim())
            .filter(|key| {
                !ALWAYS_VALID_UNDER
                    .iter()
                    .copied()
                    .chain(self.holds_under.iter().map(String::as_str))
                    .any(|allowed| covers(allowed, key))
            })
            .collect()
    }

    /// Checks what a `[[check]]` must say of its basis: one of the four, a known deviation only
    /// of a published number.
    pub fn validate_basis(&self) -> Result<(), String> {
        match (self.basis, &self.known_deviation) {
            (None, _) => Err(
                "give `basis`: \"published\" (bounds from the paper's number and its spread), \
                 \"upstream\" (from the authors' code on the same splits), \"regression\" (a pin \
                 of our own output) or \"invariant\" (true by construction)"
                    .into(),
            ),
            (Some(b), Some(_)) if b != Basis::Published => Err(format!(
                "known_deviation marks a published number that does not reproduce; this check's \
                 basis is {}",
                b.word()
            )),
            (Some(_), Some(d)) if d.reason.trim().is_empty() || d.evidence.trim().is_empty() => {
                Err("known_deviation needs a reason and its evidence".into())
            }
            _ => Ok(()),
        }
    }

    /// What a `[[hypothesis]]` must not say: it is reported, never a verdict.
    pub fn validate_hypothesis(&self) -> Result<(), String> {
        if self.basis.is_some() || self.known_deviation.is_some() {
            return Err(
                "a hypothesis is reported, never a verdict: no `basis` or `known_deviation` \
                 (make it a [[check]] if it has a published basis)"
                    .into(),
            );
        }
        Ok(())
    }

    /// Checks the spec against the columns the run will produce.
    pub fn validate(&self, columns: &[String]) -> Result<(), String> {
        let known = |c: &str| {
            if columns.iter().any(|k| k == c) {
                Ok(())
            } else {
                Err(format!(
                    "unknown column `{c}`; columns: {}",
                    columns.join(", ")
                ))
            }
        };
        let (min, max) = (self.min, self.max);
        if min.is_none() && max.is_none() {
            return Err("give `min`, `max` or both".into());
        }
        if let (Some(lo), Some(hi)) = (min, max) {
            if lo > hi {
                return Err(format!("min = {lo} > max = {hi}"));
            }
        }
        known(&self.metric)?;
        match &self.test {
            CheckTest::Mean { select, .. } => select.keys().try_for_each(|k| known(k)),
            CheckTest::LoglogSlope {
                x,
                select,
                x_min,
                x_max,
            } => {
                known(x)?;
                if !(*x_min > 0.0 && x_min < x_max) {
                    return Err(format!("need 0 < x_min < x_max, got {x_min}, {x_max}"));
                }
                select.keys().try_for_each(|k| known(k))
            }
            CheckTest::Ratio {
                numerator,
                denominator,
                ..
            } => numerator
                .keys()
                .chain(denominator.keys())
                .try_for_each(|k| known(k)),
            CheckTest::ReachRatio {
                x,
                below,
                numerator,
                denominator,
            } => {
                known(x)?;
                if !below.is_finite() {
                    return Err(format!("below = {below}: need a finite level"));
                }
                numerator
                    .keys()
                    .chain(denominator.keys())
                    .try_for_each(|k| known(k))
            }
            CheckTest::SignTest {
                better,
                worse,
                pair_by,
            } => {
                if pair_by.is_empty() {
                    return Err("pair_by: name the columns that pair rows (e.g. [\"rep\"])".into());
                }
                better
                    .keys()
                    .chain(worse.keys())
                    .chain(pair_by)
                    .try_for_each(|k| known(k))
            }
        }
    }
}
