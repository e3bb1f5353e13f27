//! Experiment configs: TOML files under `configs/`, parsed with unknown keys rejected, resolved
//! against a profile and `--set` overrides, and validated in full before any work starts.
//!
//! Resolution order: the file, then `[profile.<name>]` deep-merged into it (tables merge,
//! everything else replaces), then each `--set key.path=value` in order. The resolved config is
//! what runs and what the manifest records.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::check::CheckSpec;
use crate::kinds::PointParams;
use crate::plot::PlotSpec;

/// The profile that runs when none is named: the paper's full protocol.
pub const FULL_PROFILE: &str = "full";

/// A config error: names the file, the key and what was expected.
#[derive(Debug, Error)]
#[error("{file}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub message: String,
}

/// Experiment metadata.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExperimentMeta {
    /// Unique name; results go to `results/<name>/`, figures to `figures/<name>/`.
    pub name: String,
    /// Which experiment runner executes the cells (see `repro list --kinds`).
    pub kind: String,
    /// The paper reproduced.
    pub paper: String,
    /// The figure or table of the paper.
    pub figure: String,
    /// One paragraph: what is measured and how.
    pub description: String,
}

use crate::data::DataSpec;

/// `[plot]` (one table) or `[[plot]]` (an array of tables), each validated on its own so that
/// an error names the field at fault.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<PlotSpec>, D::Error> {
    use serde::de::Error;
    let value = toml::Value::deserialize(d)?;
    let items = match value {
        toml::Value::Array(items) => items,
        table @ toml::Value::Table(_) => vec![table],
        other => {
            return Err(D::Error::custom(format!(
                "plot must be a table or an array of tables, not {}",
                other.type_str()
            )))
        }
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            v.try_into().map_err(|e: toml::de::Error| {
                D::Error::custom(format!("plot #{}: {}", i + 1, e.message()))
            })
        })
        .collect()
}

/// A config as written (after profile and overrides), with the parameter grid still raw.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub experiment: ExperimentMeta,
    /// Base seed; every cell's RNG is seeded from a hash of (seed, cell identity).
    pub seed: u64,
    /// Independent repetitions of every parameter point.
    pub repeats: usize,
    /// Wall-clock budget of one cell, seconds: a cell still running then stops at its next
    /// checkpoint and is recorded as `did_not_finish` (column `cell_status`). Not part of any
    /// cell's identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_budget_seconds: Option<f64>,
    pub data: DataSpec,
    /// Parameters of the experiment kind. An array value is a grid axis: the cells are the
    /// Cartesian product of all axes.
    pub params: toml::Table,
    /// `[[case]]`: parameters set on the grid points that match `when` (e.g. a smaller ψ grid
    /// for one method), applied in order after the grid is expanded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub case: Vec<Case>,
    /// Named overrides, e.g. `[profile.quick]` for `repro check`.
    #[serde(default)]
    pub profile: BTreeMap<String, toml::Table>,
    /// Figures: `[plot]` for one, `[[plot]]` for several (each with its own `name`).
    #[serde(
        default,
        deserialize_with = "one_or_many",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub plot: Vec<PlotSpec>,
    /// Scientific checks evaluated on the stored results.
    #[serde(default)]
    pub check: Vec<CheckSpec>,
    /// Published (or reference) numbers that `repro report` sets beside the reproduced ones.
    #[serde(default)]
    pub reference: Vec<crate::summary::Reference>,
    /// Hypotheses (of a paper or spec, with no published number to check): evaluated as
    /// checks are, reported as holding or not, and never a failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hypothesis: Vec<CheckSpec>,
    /// Tables `repro report` derives from the run: `mean_sd` per value of a column (a paper's
    /// table of means and standard deviations) or `sign_tests` (a pairwise p-value matrix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary: Vec<crate::summary::Summary>,
    /// The project's methods beside the authors' code on the same splits: paired differences,
    /// sign tests, CPU-second ratios, and whether the authors' code reproduces the paper.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub side_by_side: Vec<crate::summary::SideBySide>,
}

/// `[[case]] when = { method = "ik_a" }, params = { cv_psi_max = 256 }`: the grid points whose
/// parameters equal every value of `when` get the values of `params` (added or replaced); with
/// `skip = true` instead, they are left out of the grid (e.g. a budget one method cannot use).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub when: toml::Table,
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub params: toml::Table,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skip: bool,
    /// At most this many repetitions of the matching points (e.g. one for a baseline whose
    /// draws matter less than its cost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<usize>,
}

/// Applies the `[[case]]`s to the expanded grid, after profiles and `--set` overrides (a case
/// wins over them on the points it matches); a case that names no `[params]` key, matches an
/// array or sets a grid axis (an array) is an error. A case may match no point (a profile may
/// shrink the grid), but a grid left empty, or two points made equal, is an error. Returns, per
/// remaining point, the fewest `repeats` a matching case allows (`None`: no case limits it).
pub fn apply_cases(
    params: &toml::Table,
    cases: &[Case],
    grid: &mut Vec<toml::Table>,
) -> Result<Vec<Option<usize>>, String> {
    let mut caps: Vec<Option<usize>> = vec![None; grid.len()];
    for (i, case) in cases.iter().enumerate() {
        let at = |m: String| format!("case #{}: {m}", i + 1);
        let sets = !case.params.is_empty() || case.repeats.is_some();
        if case.when.is_empty() || sets == case.skip {
            return Err(at(
                "give `when` and either `params` and/or `repeats`, or `skip = true`, a value"
                    .into(),
            ));
        }
        if case.repeats == Some(0) {
            return Err(at("repeats = 0: at least one repetition".into()));
        }
        if let Some((k, _)) = case.when.iter().find(|(_, v)| v.is_array()) {
            return Err(at(format!(
                "when.{k} is an array; a case matches one value per key (write one case per value)"
            )));
        }
        if let Some(k) = case.when.keys().find(|k| !params.contains_key(*k)) {
            return Err(at(format!(
                "when.{k} is not a key of [params]; a case selects grid points by their parameters"
            )));
        }
        if let Some((k, _)) = case.params.iter().find(|(_, v)| v.is_array()) {
            return Err(at(format!(
                "params.{k} is an array; a case sets one value (grid axes belong in [params])"
            )));
        }
        let matches = |point: &toml::Table| case.when.iter().all(|(k, v)| point.get(k) == Some(v));
        if case.skip {
            let keep: Vec<bool> = grid.iter().map(|p| !matches(p)).collect();
            let mut k = keep.iter();
            grid.retain(|_| *k.next().expect("one flag per point"));
            let mut k = keep.iter();
            caps.retain(|_| *k.next().expect("one flag per point"));
        } else {
            for (point, cap) in grid.iter_mut().zip(caps.iter_mut()) {
                if !matches(point) {
                    continue;
                }
                for (k, v) in &case.params {
                    point.insert(k.clone(), v.clone());
                }
                if let Some(r) = case.repeats {
                    *cap = Some(cap.map_or(r, |c| c.min(r)));
                }
            }
        }
    }
    Ok(caps)
}

/// A config ready to run: resolved, validated, grid expanded.
#[derive(Debug, Clone)]
pub struct ResolvedConfig {
    /// Path relative to the project root, as given.
    pub path: PathBuf,
    pub profile: String,
    pub overrides: Vec<String>,
    pub config: Config,
    /// The resolved TOML text (what the manifest records).
    pub resolved_toml: String,
    /// The grid points, deserialised and checked by the experiment kind.
    pub grid: Vec<PointParams>,
    /// Repetitions of each grid point: `repeats`, or fewer where a `[[case]]` says so.
    pub repeats: Vec<usize>,
    /// The profiles the config defines (`[profile.NAME]`), besides `full`.
    pub profiles: Vec<String>,
    /// The run's name chosen by the user (`--name`), if any.
    pub name: Option<String>,
}

impl ResolvedConfig {
    /// The run's name: `--name` when given; else the profile, plus a digest of the overrides
    /// when there are any, so an ablation never overwrites the reference run.
    pub fn run_name(&self) -> String {
        if let Some(name) = &self.name {
            name.clone()
        } else if self.overrides.is_empty() {
            self.profile.clone()
        } else {
            let digest = crate::keys::sha256_hex(self.overrides.join("\n").as_bytes());
            format!("{}-set-{}", self.profile, &digest[..8])
        }
    }
}

impl ResolvedConfig {
    /// Names the run (`--name`): the name of its table, manifest and figures. A name is 1 to
    /// 64 lowercase letters, digits, `_` and `-`, and never a profile's name (`full` or one of
    /// the config's `[profile.NAME]`), so a named run never overwrites a profile's run.
    pub fn named(mut self, name: &str) -> Result<Self, ConfigError> {
        let err = |message: String| ConfigError {
            file: self.path.display().to_string(),
            message,
        };
        valid_profile_name(name)
            .map_err(|_| err(format!("--name {name:?}: use 1 to 64 lowercase letters, digits, '_' and '-' (it names files)")))?;
        if name == FULL_PROFILE || self.profiles.iter().any(|p| p == name) {
            return Err(err(format!(
                "--name {name}: that is the name of a profile's run; choose another name so the \
                 profile's results are kept"
            )));
        }
        if name.contains("-set-") {
            return Err(err(format!(
                "--name {name}: `-set-` is reserved for the names of unnamed override runs"
            )));
        }
        self.name = Some(name.to_string());
        Ok(self)
    }
}

/// Reads, resolves and validates a config file.
pub fn load(
    root: &Path,
    path: &Path,
    profile: &str,
    overrides: &[String],
) -> Result<ResolvedConfig, ConfigError> {
    let shown = path.display().to_string();
    let err = |message: String| ConfigError {
        file: shown.clone(),
        message,
    };
    let full_path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    };
    let text = std::fs::read_to_string(&full_path)
        .map_err(|e| err(format!("cannot read the config ({e})")))?;
    let raw: toml::Table = toml::from_str(&text).map_err(|e| err(format!("invalid TOML: {e}")))?;

    let profiles = raw
        .get("profile")
        .map(|p| {
            p.as_table()
                .ok_or_else(|| {
                    err("`profile` must be a table of tables, e.g. [profile.quick]".into())
                })
                .map(|t| t.keys().cloned().collect::<Vec<_>>())
        })
        .transpose()?
        .unwrap_or_default();
    for name in profiles.iter().map(String::as_str).chain([profile]) {
        valid_profile_name(name).map_err(err)?;
    }
    if profiles.iter().any(|p| p == FULL_PROFILE) {
        return Err(err(format!(
            "[profile.{FULL_PROFILE}]: the full profile is the file itself (the paper's \
             protocol); put its values at the top level"
        )));
    }
    if let Some(o) = overrides
        .iter()
        .find(|o| o.split(['=', '.']).next().map(str::trim) == Some("profile"))
    {
        return Err(err(format!(
            "--set {o}: profiles cannot be overridden; set the key itself (it applies to the \
             profile you run) or edit [profile.NAME]"
        )));
    }
    if profile != FULL_PROFILE && !profiles.iter().any(|p| p == profile) {
        return Err(err(format!(
            "no [profile.{profile}] section; profiles defined: {}",
            if profiles.is_empty() {
                "none".to_string()
            } else {
                profiles.join(", ")
            }
        )));
    }
    let (mut config, resolved_toml, (grid, repeats)) =
        resolve(&raw, profile, overrides).map_err(err)?;
    if let crate::data::DataSpec::File(f) = &mut config.data {
        // Files of one's own: paths relative to the config's folder, digests read now.
        f.locate(full_path.parent().unwrap_or(Path::new(".")));
    }
    // Every other profile must resolve too, so a typo in [profile.quick] fails a full run.
    for name in &profiles {
        if name != profile {
            resolve(&raw, name, &[]).map_err(|m| err(format!("[profile.{name}]: {m}")))?;
        }
    }
    if profile != FULL_PROFILE {
        resolve(&raw, FULL_PROFILE, &[]).map_err(|m| err(format!("full profile: {m}")))?;
    }
    Ok(ResolvedConfig {
        path: path.to_path_buf(),
        profile: profile.to_string(),
        overrides: overrides.to_vec(),
        config,
        resolved_toml,
        grid,
        repeats,
        profiles,
        name: None,
    })
}

type Resolved = (Config, String, Grid);

/// A profile name names files (`results/<experiment>/<profile>.parquet`): lowercase letters,
/// digits, `_` and `-` only.
fn valid_profile_name(name: &str) -> Result<(), String> {
    if !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
    {
        Ok(())
    } else {
        Err(format!(
            "profile {name:?}: use 1 to 64 lowercase letters, digits, '_' and '-' (it names files)"
        ))
    }
}

fn resolve(raw: &toml::Table, profile: &str, overrides: &[String]) -> Result<Resolved, String> {
    let mut table = raw.clone();
    if profile != FULL_PROFILE {
        let patch = raw
            .get("profile")
            .and_then(|p| p.get(profile))
            .and_then(|p| p.as_table())
            .ok_or_else(|| format!("[profile.{profile}] must be a table"))?
            .clone();
        if patch.contains_key("profile") {
            return Err(format!(
                "[profile.{profile}] must not define profiles itself"
            ));
        }
        merge(&mut table, patch);
    }
    for assignment in overrides {
        apply_override(&mut table, assignment)?;
    }
    let resolved_toml = toml::to_string(&table).map_err(|e| e.to_string())?;
    let config: Config =
        toml::from_str(&resolved_toml).map_err(|e| clean_toml_error(&e, &resolved_toml))?;
    let grid = validate(&config)?;
    Ok((config, resolved_toml, grid))
}

/// The message of a deserialisation error of the resolved text, with the offending line and its
/// table (the span refers to the re-serialised text, not to the user's file).
fn clean_toml_error(e: &toml::de::Error, text: &str) -> String {
    let Some(span) = e.span() else {
        return e.message().to_string();
    };
    let start = span.start.min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = text[line_start..line_end].trim();
    if line.starts_with('[') {
        return format!("{} (in {line})", e.message());
    }
    let table = text[..line_start]
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('['))
        .map(|h| format!(" in {}", h.trim()))
        .unwrap_or_default();
    if line.is_empty() {
        format!("{}{table}", e.message())
    } else {
        format!("{} (at `{line}`{table})", e.message())
    }
}

/// Deep merge: tables merge key by key, any other value replaces.
fn merge(base: &mut toml::Table, patch: toml::Table) {
    for (key, value) in patch {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(p)) => merge(b, p),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Applies `a.b.c=value`. The value is parsed as TOML (`3`, `1e-6`, `"x"`, `[1, 2]`); text that
/// is not valid TOML is taken as a string, so `--set params.method=mondrian` works.
pub fn apply_override(table: &mut toml::Table, assignment: &str) -> Result<(), String> {
    let (key, value) = assignment
        .split_once('=')
        .ok_or_else(|| format!("--set {assignment}: expected KEY=VALUE, e.g. params.lifetime=3"))?;
    let key = key.trim();
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!(
            "--set {assignment}: empty component in key `{key}`"
        ));
    }
    let value = value.trim();
    let parsed = match toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
    {
        Some(v) => v,
        // Text that starts like a number but is none (`1e400`, `3.`) is a mistake, not a word.
        None if value.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c)) => {
            return Err(format!(
                "--set {assignment}: `{value}` is not a valid TOML number (out of range, or \
                 malformed); quote it to mean text"
            ))
        }
        None => toml::Value::String(value.to_string()),
    };
    let mut cursor = table;
    for part in &parts[..parts.len() - 1] {
        let entry = cursor
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cursor = entry
            .as_table_mut()
            .ok_or_else(|| format!("--set {assignment}: `{part}` is not a table"))?;
    }
    cursor.insert(parts[parts.len() - 1].to_string(), parsed);
    Ok(())
}

/// Validates everything that can be checked before running and expands the grid.
/// The canonical grid points and the repetitions of each.
type Grid = (Vec<PointParams>, Vec<usize>);

fn validate(config: &Config) -> Result<Grid, String> {
    let name = &config.experiment.name;
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
    {
        return Err(format!(
            "experiment.name = {name:?}: use lowercase letters, digits, '_' and '-' (it names folders)"
        ));
    }
    let kind = crate::registry::find(&config.experiment.kind)?;
    if config.repeats == 0 {
        return Err("repeats = 0: need at least one repetition".into());
    }
    if let Some(b) = config.cell_budget_seconds {
        if !(b.is_finite() && (0.0..=1e9).contains(&b)) {
            return Err(format!(
                "cell_budget_seconds = {b}: expected seconds from 0 to 1e9 (leave it out for no \
                 budget)"
            ));
        }
    }
    config.data.validate()?;
    kind.check_data(&config.data)?;
    if config.repeats > MAX_REPEATS {
        return Err(format!(
            "repeats = {}: at most {MAX_REPEATS}",
            config.repeats
        ));
    }
    let mut grid = expand_grid(&config.params)?;
    let caps = apply_cases(&config.params, &config.case, &mut grid)?;
    let repeats: Vec<usize> = caps
        .iter()
        .map(|c| c.map_or(config.repeats, |c| c.min(config.repeats)))
        .collect();
    if grid.is_empty() {
        return Err("the [[case]]s skip every point of the grid".into());
    }
    if grid.len().saturating_mul(config.repeats) > MAX_CELLS {
        return Err(format!(
            "{} grid points x {} repeats = {} cells; at most {MAX_CELLS} in one run: split the \
             study into several configs",
            grid.len(),
            config.repeats,
            grid.len().saturating_mul(config.repeats)
        ));
    }
    let mut canonical = Vec::with_capacity(grid.len());
    let mut seen = std::collections::HashMap::new();
    for point in grid {
        let shown = toml::to_string(&point)
            .unwrap_or_default()
            .replace('\n', ", ");
        let value = kind
            .params(point)
            .map_err(|m| format!("params ({}): {m}", shown.trim_end_matches(", ")))?;
        if let Some(i) = seen.insert(value.canonical.to_string(), canonical.len()) {
            return Err(format!(
                "params: grid points {} and {} are the same ({}): a value repeated in a grid \
                 axis, or a [[case]] that makes two points equal",
                i + 1,
                canonical.len() + 1,
                shown.trim_end_matches(", ")
            ));
        }
        canonical.push(value);
    }
    let columns = crate::cell::all_columns(kind, &canonical, config.cell_budget_seconds.is_some());
    let mut names = std::collections::BTreeSet::new();
    for (i, plot) in config.plot.iter().enumerate() {
        plot.validate(&columns)
            .map_err(|m| format!("plot #{}: {m}", i + 1))?;
        if !names.insert(plot.name.clone()) {
            return Err(format!(
                "plot #{}: two plots named {:?}; give each [[plot]] its own name",
                i + 1,
                plot.name.as_deref().unwrap_or("(none)")
            ));
        }
    }
    crate::plot::check_consistent(&config.plot)?;
    for (i, reference) in config.reference.iter().enumerate() {
        reference
            .validate(&columns)
            .map_err(|m| format!("reference #{} ({}): {m}", i + 1, reference.label))?;
    }
    for (i, check) in config.check.iter().enumerate() {
        check
            .validate_basis()
            .and_then(|()| check.validate(&columns))
            .map_err(|m| format!("check #{} ({}): {m}", i + 1, check.name()))?;
    }
    for (i, hypothesis) in config.hypothesis.iter().enumerate() {
        hypothesis
            .validate_hypothesis()
            .and_then(|()| hypothesis.validate(&columns))
            .map_err(|m| format!("hypothesis #{} ({}): {m}", i + 1, hypothesis.name()))?;
    }
    for (i, entry) in config.side_by_side.iter().enumerate() {
        entry
            .validate(&columns)
            .map_err(|m| format!("side_by_side #{} ({}): {m}", i + 1, entry.label))?;
    }
    for (i, summary) in config.summary.iter().enumerate() {
        summary
            .validate(&columns)
            .map_err(|m| format!("summary #{} ({}): {m}", i + 1, summary.label))?;
    }
    Ok((canonical, repeats))
}

/// Most grid points a config may have.
pub const MAX_GRID_POINTS: usize = 100_000;
/// Most repetitions.
pub const MAX_REPEATS: usize = 100_000;
/// Most cells (grid points × repetitions) of one run.
pub const MAX_CELLS: usize = 1_000_000;

/// Cartesian product of the array-valued entries of `params` (in key order); more than
/// [`MAX_GRID_POINTS`] points is an error, found before any point is built.
pub fn expand_grid(params: &toml::Table) -> Result<Vec<toml::Table>, String> {
    let size = params.values().try_fold(1usize, |n, v| match v {
        toml::Value::Array(values) => n.checked_mul(values.len().max(1)),
        _ => Some(n),
    });
    if size.is_none_or(|n| n > MAX_GRID_POINTS) {
        let axes: Vec<String> = params
            .iter()
            .filter_map(|(k, v)| v.as_array().map(|a| format!("{k}: {}", a.len())))
            .collect();
        return Err(format!(
            "params: the grid has {} points ({}); at most {MAX_GRID_POINTS}: split the study \
             into several configs",
            size.map_or("too many".into(), |n| n.to_string()),
            axes.join(" x ")
        ));
    }
    let mut points = vec![toml::Table::new()];
    for (key, value) in params {
        let values = match value {
            toml::Value::Array(values) if values.is_empty() => {
                return Err(format!(
                    "params.{key} is an empty grid: give at least one value"
                ))
            }
            toml::Value::Array(values) => values.clone(),
            other => vec![other.clone()],
        };
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.insert(key.clone(), v.clone());
                    q
                })
            })
            .collect();
    }
    Ok(points)
}

/// Every `*.toml` file under `configs/`, sorted (numbers by value).
/// A paper folder's artefact list (`crate::artefacts`), beside its configs but not one.
pub const ARTEFACT_LIST: &str = "artefacts.toml";

/// Whether a path is a config (a `.toml` file other than an artefact list).
pub fn is_config(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "toml")
        && path.file_name().is_none_or(|f| f != ARTEFACT_LIST)
}

pub fn discover(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, out)?;
            } else if is_config(&path) {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    let dir = root.join("configs");
    if dir.is_dir() {
        walk(&dir, &mut out)?;
    }
    // fig5 ... fig9, fig10: numbers by value.
    out.sort_by_cached_key(|p| crate::keys::natural_key(&p.to_string_lossy()));
    Ok(out
        .into_iter()
        .map(|p| p.strip_prefix(root).map(Path::to_path_buf).unwrap_or(p))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_set_parameters_of_the_points_they_match() {
        let params: toml::Table = toml::from_str("method = ['a', 'b']\nx = [1, 2]\ny = 0").unwrap();
        let mut grid = expand_grid(&params).unwrap();
        let case = |text: &str| -> Case { toml::from_str(text).unwrap() };
        apply_cases(
            &params,
            &[case(
                "when = { method = 'b' }\nparams = { y = 5, z = 'new' }",
            )],
            &mut grid,
        )
        .unwrap();
        for p in &grid {
            let b = p["method"].as_str() == Some("b");
            assert_eq!(p["y"].as_integer(), Some(if b { 5 } else { 0 }));
            assert_eq!(p.contains_key("z"), b);
        }
        let err = |text: &str| {
            let mut grid = expand_grid(&params).unwrap();
            apply_cases(&params, &[case(text)], &mut grid).unwrap_err()
        };
        assert!(err("when = { methd = 'b' }\nparams = { y = 1 }").contains("when.methd"));
        assert!(err("when = { method = 'b' }\nparams = { y = [1, 2] }").contains("array"));
        assert!(err("when = { method = ['a', 'b'] }\nparams = { y = 1 }").contains("when.method"));
        assert!(err("when = { method = 'b' }\nparams = {}").contains("either"));
        assert!(err("when = { method = 'b' }\nparams = { y = 1 }\nskip = true").contains("either"));
        let mut grid = expand_grid(&params).unwrap();
        apply_cases(
            &params,
            &[case("when = { method = 'a', x = 2 }\nskip = true")],
            &mut grid,
        )
        .unwrap();
        assert_eq!(grid.len(), 3);
        assert!(!grid
            .iter()
            .any(|p| p["method"].as_str() == Some("a") && p["x"].as_integer() == Some(2)));
    }

    #[test]
    fn cases_cap_the_repetitions_of_the_points_they_match() {
        let params: toml::Table = toml::from_str("method = ['a', 'b']\nx = [1, 2]").unwrap();
        let case = |text: &str| -> Case { toml::from_str(text).unwrap() };
        let mut grid = expand_grid(&params).unwrap();
        let caps = apply_cases(
            &params,
            &[
                case("when = { method = 'a', x = 1 }\nskip = true"),
                case("when = { method = 'b' }\nrepeats = 2"),
                case("when = { x = 2 }\nrepeats = 1"),
            ],
            &mut grid,
        )
        .unwrap();
        let got: Vec<(String, i64, Option<usize>)> = grid
            .iter()
            .zip(caps)
            .map(|(p, c)| {
                (
                    p["method"].as_str().unwrap().to_string(),
                    p["x"].as_integer().unwrap(),
                    c,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a".to_string(), 2, Some(1)),
                ("b".to_string(), 1, Some(2)),
                ("b".to_string(), 2, Some(1)),
            ]
        );
        let mut grid = expand_grid(&params).unwrap();
        let err = apply_cases(
            &params,
            &[case("when = { method = 'b' }\nrepeats = 0")],
            &mut grid,
        )
        .unwrap_err();
        assert!(err.contains("repeats = 0"), "{err}");
        let mut grid = expand_grid(&params).unwrap();
        let err = apply_cases(
            &params,
            &[case("when = { method = 'b' }\nrepeats = 1\nskip = true")],
            &mut grid,
        )
        .unwrap_err();
        assert!(err.contains("either"), "{err}");
    }

    #[test]
    fn grid_is_the_cartesian_product() {
        let params: toml::Table =
            toml::from_str("a = [1, 2]\nb = \"x\"\nc = [true, false, true]").unwrap();
        let grid = expand_grid(&params).unwrap();
        assert_eq!(grid.len(), 6);
        assert!(grid.iter().all(|p| p["b"].as_str() == Some("x")));
        let empty: toml::Table = toml::from_str("a = []").unwrap();
        assert!(expand_grid(&empty).unwrap_err().contains("empty grid"));
    }

    #[test]
    fn overrides_parse_toml_values_and_fall_back_to_strings() {
        let mut t: toml::Table = toml::from_str("[params]\nlifetime = 10.0").unwrap();
        apply_override(&mut t, "params.lifetime=3").unwrap();
        apply_override(&mut t, "params.method=mondrian").unwrap();
        apply_override(&mut t, "repeats = 7").unwrap();
        apply_override(&mut t, "params.grid=[1, 2]").unwrap();
        assert_eq!(t["params"]["lifetime"].as_integer(), Some(3));
        assert_eq!(t["params"]["method"].as_str(), Some("mondrian"));
        assert_eq!(t["repeats"].as_integer(), Some(7));
        assert_eq!(t["params"]["grid"].as_array().unwrap().len(), 2);
        assert!(apply_override(&mut t, "novalue").is_err());
        assert!(apply_override(&mut t, "params..x=1").is_err());
        assert!(apply_override(&mut t, "repeats.x=1").is_err());
        let err = apply_override(&mut t, "params.lifetime=1e400").unwrap_err();
        assert!(err.contains("not a valid TOML number"), "{err}");
        assert!(apply_override(&mut t, "params.x=-").is_err());
    }

    #[test]
    fn merge_is_deep() {
        let mut base: toml::Table = toml::from_str("repeats = 5\n[params]\na = 1\nb = 2").unwrap();
        let patch: toml::Table = toml::from_str("repeats = 2\n[params]\nb = 3").unwrap();
        merge(&mut base, patch);
        assert_eq!(base["repeats"].as_integer(), Some(2));
        assert_eq!(base["params"]["a"].as_integer(), Some(1));
        assert_eq!(base["params"]["b"].as_integer(), Some(3));
    }
}
