//! `configs/<paper>/artefacts.toml`: every figure, table and quantitative claim of a paper, and
//! its verdict.
//!
//! An artefact either declares why it has no verdict (`status = "not_attempted"` or
//! `"no_published_number"`, with the `reason`), or is judged by the `[[check]]`s with
//! `basis = "published"` and `artefact = "<its id>"` in its paper's configs, on the stored full
//! runs: all reproduced → reproduced; some → partly; none, every miss a known deviation → not
//! reproduced (known); any unexplained miss → failed; no full run → not run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use crate::check::{Basis, CheckResult, Outcome};
use crate::config::ResolvedConfig;

/// The name of a paper folder's artefact list.
pub const FILE: &str = crate::config::ARTEFACT_LIST;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtefactList {
    /// The paper as cited.
    pub paper: String,
    #[serde(default, rename = "artefact")]
    pub artefacts: Vec<Artefact>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Artefact {
    /// Unique within the paper: `[a-z0-9-]`.
    pub id: String,
    /// E.g. "Table 5, a9a: accuracy of OGD, IK_i-OGD, IK_a-OGD, NOGD".
    pub title: String,
    /// What the paper states or shows, with its numbers.
    #[serde(default)]
    pub claim: String,
    /// The experiments (`[experiment] name`) that speak for it.
    #[serde(default)]
    pub configs: Vec<String>,
    /// Why it has no verdict from published checks, if it has none.
    #[serde(default)]
    pub status: Option<Declared>,
    #[serde(default)]
    pub reason: Option<String>,
}

/// An artefact's declared status (one without published checks).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Declared {
    /// Not run here (a GPU, data not available, cost): the reason says which.
    NotAttempted,
    /// The paper prints no number for it: the spec's hypotheses only.
    NoPublishedNumber,
}

/// An artefact's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Reproduced,
    Partly,
    NotReproducedKnown,
    Failed,
    NotRun,
    NoPublishedNumber,
    NotAttempted,
}

impl Status {
    pub const ALL: [Status; 7] = [
        Status::Reproduced,
        Status::Partly,
        Status::NotReproducedKnown,
        Status::Failed,
        Status::NotRun,
        Status::NoPublishedNumber,
        Status::NotAttempted,
    ];

    pub fn word(self) -> &'static str {
        match self {
            Status::Reproduced => "reproduced",
            Status::Partly => "partly reproduced",
            Status::NotReproducedKnown => "not reproduced (known)",
            Status::Failed => "FAILED",
            Status::NotRun => "not run",
            Status::NoPublishedNumber => "no published number",
            Status::NotAttempted => "not attempted",
        }
    }
}

/// A paper folder's artefact list.
#[derive(Debug, Clone)]
pub struct Paper {
    /// The folder under `configs/` (e.g. `mondrian`).
    pub folder: String,
    pub list: ArtefactList,
}

/// Every `configs/<paper>/artefacts.toml`, by folder name.
pub fn load(root: &Path) -> Result<Vec<Paper>, String> {
    let configs = root.join("configs");
    let mut papers = Vec::new();
    let entries = match std::fs::read_dir(&configs) {
        Ok(e) => e,
        Err(_) => return Ok(papers),
    };
    let mut folders: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    folders.sort();
    for folder in folders {
        let path = folder.join(FILE);
        if !path.is_file() {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let list: ArtefactList =
            toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        papers.push(Paper {
            folder: folder
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
            list,
        });
    }
    Ok(papers)
}

/// The paper folder a config lives in (`configs/<folder>/x.toml`).
pub fn folder_of(config: &ResolvedConfig) -> String {
    config
        .path
        .parent()
        .and_then(|p| p.file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What is wrong with the artefact lists against the configs (empty when nothing): unique ids,
/// reasons for declared statuses, experiments that exist in the folder, checks naming known
/// artefacts, and a published check for every artefact without a declared status.
pub fn validate(papers: &[Paper], configs: &[ResolvedConfig]) -> Vec<String> {
    let mut problems = Vec::new();
    let by_folder: BTreeMap<String, Vec<&ResolvedConfig>> =
        configs.iter().fold(BTreeMap::new(), |mut m, c| {
            m.entry(folder_of(c)).or_default().push(c);
            m
        });
    for paper in papers {
        let at = format!("configs/{}/{FILE}", paper.folder);
        let ours = by_folder.get(&paper.folder).cloned().unwrap_or_default();
        let experiments: BTreeSet<&str> = ours
            .iter()
            .map(|c| c.config.experiment.name.as_str())
            .collect();
        let mut ids = BTreeSet::new();
        for a in &paper.list.artefacts {
            if a.id.is_empty()
                || !a
                    .id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            {
                problems.push(format!("{at}: id `{}`: use [a-z0-9-]", a.id));
            }
            if !ids.insert(a.id.as_str()) {
                problems.push(format!("{at}: id `{}` twice", a.id));
            }
            if a.status.is_some() && a.reason.as_deref().is_none_or(|r| r.trim().is_empty()) {
                problems.push(format!(
                    "{at}: `{}` declares a status: give its reason",
                    a.id
                ));
            }
            for e in &a.configs {
                if !experiments.contains(e.as_str()) {
                    problems.push(format!(
                        "{at}: `{}` names experiment `{e}`, which no config of configs/{}/ has",
                        a.id, paper.folder
                    ));
                }
            }
            let published = ours.iter().any(|c| {
                c.config.check.iter().any(|k| {
                    k.basis == Some(Basis::Published) && k.artefact.as_deref() == Some(&a.id)
                })
            });
            if a.status.is_none() && !published {
                problems.push(format!(
                    "{at}: `{}` has no published check (`basis = \"published\"`, `artefact = \
                     \"{}\"`) in its paper's configs: add one or declare its status",
                    a.id, a.id
                ));
            }
        }
        for c in &ours {
            // Every entry that names an artefact: side-by-side tables and checks.
            let named = c
                .config
                .side_by_side
                .iter()
                .map(|e| ("side_by_side", &e.label, &e.artefact))
                .chain(
                    c.config
                        .check
                        .iter()
                        .map(|k| ("check", &k.name, &k.artefact)),
                );
            for (what, label, artefact) in named {
                if let Some(id) = artefact.as_ref().filter(|id| !ids.contains(id.as_str())) {
                    problems.push(format!(
                        "{}: {what} `{label}` names artefact `{id}`, not in {at}",
                        c.path.display()
                    ));
                }
            }
        }
    }
    problems
}

/// The verdict of an artefact from the results of its published checks on the full runs
/// (checks not applicable to a run left out).
pub fn status(artefact: &Artefact, published: &[&CheckResult]) -> Status {
    match artefact.status {
        Some(Declared::NotAttempted) => return Status::NotAttempted,
        Some(Declared::NoPublishedNumber) => return Status::NoPublishedNumber,
        None => {}
    }
    let judged: Vec<&&CheckResult> = published
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::NotApplicable(_)))
        .collect();
    if judged.is_empty() {
        return Status::NotRun;
    }
    let passed = judged
        .iter()
        .filter(|r| r.outcome == Outcome::Passed)
        .count();
    if judged.iter().any(|r| r.outcome == Outcome::Failed) {
        Status::Failed
    } else if passed == judged.len() {
        Status::Reproduced
    } else if passed > 0 {
        Status::Partly
    } else {
        Status::NotReproducedKnown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(outcome: Outcome) -> CheckResult {
        CheckResult {
            name: "c".into(),
            value: Some(1.0),
            min: None,
            max: None,
            outcome,
            detail: String::new(),
            basis: Some(Basis::Published),
            artefact: Some("a".into()),
            published: None,
        }
    }

    fn artefact(status: Option<Declared>) -> Artefact {
        Artefact {
            id: "a".into(),
            title: "A".into(),
            claim: String::new(),
            configs: vec![],
            status,
            reason: status.map(|_| "why".into()),
        }
    }

    #[test]
    fn verdicts_follow_the_published_checks() {
        let pass = result(Outcome::Passed);
        let known = result(Outcome::KnownDeviation("r".into()));
        let fail = result(Outcome::Failed);
        let na = result(Outcome::NotApplicable("o".into()));
        let a = artefact(None);
        assert_eq!(status(&a, &[&pass, &pass]), Status::Reproduced);
        assert_eq!(status(&a, &[&pass, &known]), Status::Partly);
        assert_eq!(status(&a, &[&known, &known]), Status::NotReproducedKnown);
        assert_eq!(status(&a, &[&pass, &fail]), Status::Failed);
        assert_eq!(status(&a, &[&pass, &na]), Status::Reproduced);
        assert_eq!(status(&a, &[&na]), Status::NotRun);
        assert_eq!(status(&a, &[]), Status::NotRun);
        assert_eq!(
            status(&artefact(Some(Declared::NotAttempted)), &[&pass]),
            Status::NotAttempted
        );
        assert_eq!(
            status(&artefact(Some(Declared::NoPublishedNumber)), &[]),
            Status::NoPublishedNumber
        );
    }
}
