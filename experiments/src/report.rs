//! `repro report`: the reproduced numbers beside the published ones, per paper.
//!
//! A config lists `[[reference]]` entries (a metric, a selection of rows, the published or
//! reference value and where it comes from); the report takes the full run's table, computes the
//! mean ± sd over the selected rows (the repetitions) and writes one Markdown page with a section
//! per paper: figure, table, and the checks of the run.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::check::Outcome;
use crate::config::ResolvedConfig;
use crate::store::{self, RunPaths};
use crate::summary::{mean_pm_sd, number};
use crate::table::{Row, Value};

/// Appends a Markdown table of check (or hypothesis) results: the verdict worded by each
/// check's basis (only a published check's pass reads "reproduced"); returns how many failed.
fn results_table(out: &mut String, header: &str, results: &[crate::check::CheckResult]) -> usize {
    if results.is_empty() {
        return 0;
    }
    let _ = writeln!(out, "{header}\n|---|---|---|---|---|");
    let mut failed = 0;
    for c in results {
        let verdict = match &c.outcome {
            Outcome::Passed => c.verdict().to_string(),
            Outcome::Failed => {
                failed += 1;
                format!("**{}**", c.verdict())
            }
            Outcome::KnownDeviation(_) => format!("{}: {}", c.verdict(), c.detail),
            Outcome::NotApplicable(why) => format!("n/a: {why}"),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | [{}, {}] | {} |",
            c.name.replace('|', "\\|"),
            c.basis.map_or("hypothesis", crate::check::Basis::word),
            c.value.map_or("n/a".into(), number),
            c.min.map_or("-inf".into(), number),
            c.max.map_or("+inf".into(), number),
            verdict.replace('|', "\\|"),
        );
    }
    out.push('\n');
    failed
}

/// The `[[reference]]` numbers beside the run's. Where the run sweeps a parameter the
/// reference's selection does not fix (a `--set params.lifetime=[3, 30]`), each value gets its
/// own line, and the published number is set beside the values the config itself runs only
/// (n/a for the others: it presumes the config's value).
fn references_table(r: &ResolvedConfig, rows: &[Row], parameters: &[String]) -> String {
    let mut out = String::from(
        "| quantity | published / reference | reproduced (mean ± sd, n) | difference |\n|---|---|---|---|\n",
    );
    for reference in &r.config.reference {
        let note = if reference.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", reference.note)
        };
        let selected: Vec<&Row> = crate::stats::selected(rows, &reference.select).collect();
        let consumed: Vec<&str> = reference.select.keys().map(String::as_str).collect();
        let axes = crate::stats::pooled_parameters(&selected, parameters, &consumed);
        // The values of the swept parameters at the config's own grid points of this selection.
        let presumed: Vec<Vec<Value>> = r
            .grid
            .iter()
            .filter_map(|p| p.canonical.as_object())
            .filter(|point| {
                reference.select.iter().all(|(k, v)| {
                    point
                        .get(k)
                        .is_none_or(|value| Value::from_json(value).matches(v))
                })
            })
            .map(|point| {
                axes.iter()
                    .map(|a| point.get(a).map_or(Value::Null, Value::from_json))
                    .collect()
            })
            .collect();
        for (label, members) in crate::stats::strata(&selected, &axes) {
            let members: Vec<Row> = members.into_iter().cloned().collect();
            let values: Vec<Value> = axes
                .iter()
                .map(|a| members[0].get(a).cloned().unwrap_or(Value::Null))
                .collect();
            let applies = axes.is_empty() || presumed.contains(&values);
            let quantity = if label.is_empty() {
                reference.label.clone()
            } else {
                format!("{} ({label})", reference.label)
            };
            let (cell, diff) = match reference.reproduced(&members) {
                Some((mean, sd, n)) => (
                    format!("{} (n = {n})", mean_pm_sd(mean, sd)),
                    if applies {
                        format!("{:+.3}", mean - reference.value)
                    } else {
                        "n/a".into()
                    },
                ),
                None => ("no rows".into(), "".into()),
            };
            let published = if applies {
                format!("{}{note}", number(reference.value))
            } else {
                let config_values: Vec<String> = presumed
                    .iter()
                    .map(|v| crate::stats::stratum_label(&axes, v))
                    .collect();
                format!(
                    "n/a: published for {}",
                    if config_values.is_empty() {
                        "the config's values".to_string()
                    } else {
                        config_values.join("; ")
                    }
                )
            };
            let _ = writeln!(out, "| {quantity} | {published} | {cell} | {diff} |");
        }
    }
    out.push('\n');
    out
}

/// What a config's run says of its paper's artefacts.
struct Evidence {
    experiment: String,
    /// Its checks' results on the run.
    results: Vec<crate::check::CheckResult>,
    /// Per artefact, the run's value of its first published check (mean ± sd, n for a `mean`
    /// check) and the check's name, with the paper's number.
    headline: BTreeMap<String, (String, Option<f64>)>,
    /// Per artefact, the upstream's mean of its first side-by-side entry, with the entry's label.
    upstream: BTreeMap<String, String>,
}

impl Evidence {
    fn of(r: &ResolvedConfig, rows: &[Row], results: &[crate::check::CheckResult]) -> Self {
        let mut headline = BTreeMap::new();
        // The results are those of the checks that apply to the run's profile, in order.
        let applying = r
            .config
            .check
            .iter()
            .filter(|c| results.iter().any(|x| x.name == c.name));
        for spec in applying {
            let (Some(id), Some(crate::check::Basis::Published)) = (&spec.artefact, spec.basis)
            else {
                continue;
            };
            if headline.contains_key(id) {
                continue;
            }
            let value = match &spec.test {
                crate::check::CheckTest::Mean { select, statistic }
                    if *statistic == crate::check::Statistic::Mean =>
                {
                    let v = crate::stats::values_of(rows, &spec.metric, select);
                    (!v.is_empty()).then(|| {
                        let (m, sd, n) = crate::stats::mean_sd(&v);
                        if n > 1 {
                            format!("{} (n = {n})", mean_pm_sd(m, sd))
                        } else {
                            number(m)
                        }
                    })
                }
                _ => results
                    .iter()
                    .find(|x| x.name == spec.name)
                    .and_then(|x| x.value)
                    .map(number),
            };
            if let Some(v) = value {
                // The value with the check it comes from.
                let v = format!("{v} ({})", spec.name);
                headline.insert(id.clone(), (v, spec.published));
            }
        }
        let mut upstream = BTreeMap::new();
        for entry in &r.config.side_by_side {
            if let (Some(id), Some(v)) = (&entry.artefact, entry.upstream_mean(rows)) {
                upstream
                    .entry(id.clone())
                    .or_insert_with(|| format!("{} ({})", number(v), entry.label));
            }
        }
        Evidence {
            experiment: r.config.experiment.name.clone(),
            results: results.to_vec(),
            headline,
            upstream,
        }
    }

    /// What a section kept from an earlier report (no run stored here) says: its checks table
    /// read back (the verdicts that report gave, matched to the config's checks by name) and
    /// the upstream column of its side-by-side table, each headline marked as kept.
    fn kept(r: &ResolvedConfig, section: &str) -> Self {
        const KEPT: &str = "kept from the previous report";
        let mut results = Vec::new();
        for cells in rows_after(section, "Checks (basis:") {
            let [name, _, value, bounds, verdict] = cells.as_slice() else {
                continue;
            };
            let Some(spec) = r.config.check.iter().find(|c| &c.name == name) else {
                continue;
            };
            let outcome = if let Some(why) = verdict.strip_prefix("n/a") {
                Outcome::NotApplicable(why.trim_start_matches(':').trim().to_string())
            } else if verdict.starts_with("**") {
                Outcome::Failed
            } else if let Some(why) = verdict.strip_prefix("not reproduced (known)") {
                Outcome::KnownDeviation(why.trim_start_matches(':').trim().to_string())
            } else {
                Outcome::Passed
            };
            let (min, max) = bounds
                .trim_matches(|c| c == '[' || c == ']')
                .split_once(',')
                .map_or((None, None), |(a, b)| {
                    (a.trim().parse().ok(), b.trim().parse().ok())
                });
            let detail = match &outcome {
                Outcome::KnownDeviation(d) | Outcome::NotApplicable(d) => d.clone(),
                _ => String::new(),
            };
            results.push(crate::check::CheckResult {
                name: name.clone(),
                value: value.parse().ok(),
                min: min.filter(|v: &f64| v.is_finite()),
                max: max.filter(|v: &f64| v.is_finite()),
                outcome,
                detail,
                basis: spec.basis,
                artefact: spec.artefact.clone(),
                published: spec.published,
            });
        }
        let mut headline = BTreeMap::new();
        for c in &results {
            let (Some(id), Some(crate::check::Basis::Published), Some(v)) =
                (&c.artefact, c.basis, c.value)
            else {
                continue;
            };
            if !matches!(c.outcome, Outcome::NotApplicable(_)) && !headline.contains_key(id) {
                let text = format!("{} ({}; {KEPT})", number(v), c.name);
                headline.insert(id.clone(), (text, c.published));
            }
        }
        let side_rows = rows_after(section, "Side by side with the upstream");
        let mut upstream = BTreeMap::new();
        for entry in &r.config.side_by_side {
            let Some(id) = &entry.artefact else { continue };
            let value = side_rows
                .iter()
                .find(|cells| cells.first() == Some(&entry.label))
                .and_then(|cells| leading_number(cells.get(2)?));
            if let Some(v) = value {
                upstream
                    .entry(id.clone())
                    .or_insert_with(|| format!("{} ({}; {KEPT})", number(v), entry.label));
            }
        }
        Evidence {
            experiment: r.config.experiment.name.clone(),
            results,
            headline,
            upstream,
        }
    }
}

/// The cells of a Markdown table row (`| a | b \| c |` → `["a", "b | c"]`), unescaped; `None`
/// for a line that is not a row.
fn table_cells(line: &str) -> Option<Vec<String>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                cell.push('|');
            }
            '|' => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    cells.push(cell);
    Some(cells.into_iter().map(|s| s.trim().to_string()).collect())
}

/// The rows of the first table after the line starting with `caption` in `section`.
fn rows_after(section: &str, caption: &str) -> Vec<Vec<String>> {
    let Some(start) = section.find(caption) else {
        return Vec::new();
    };
    section[start..]
        .lines()
        .skip_while(|l| !l.trim_start().starts_with('|'))
        .take_while(|l| l.trim_start().starts_with('|'))
        .skip(2) // the header and its rule
        .filter_map(table_cells)
        .collect()
}

/// The first number of a printed cell (`0.938 ± 0.004 (n = 5)` → 0.938).
fn leading_number(cell: &str) -> Option<f64> {
    cell.split_whitespace().next()?.parse().ok()
}

/// The dashboard: per paper, the artefacts counted by verdict, and per artefact one line with
/// the published number, ours, the upstream's, the verdict and a link to its section. Returns
/// it with what is wrong with the artefact lists.
fn dashboard(
    root: &Path,
    configs: &[ResolvedConfig],
    evidence: &[Evidence],
) -> (String, Vec<String>) {
    use crate::artefacts::{self, Status};
    let papers = match artefacts::load(root) {
        Ok(p) => p,
        Err(e) => return (String::new(), vec![e]),
    };
    if papers.is_empty() {
        return (String::new(), vec![]);
    }
    let problems = artefacts::validate(&papers, configs);
    let mut out = String::from(
        "\n## Dashboard: which artefacts reproduce\n\nEvery figure, table and quantitative claim \
         of each paper (`configs/<paper>/artefacts.toml`), judged by its checks with a \
         published basis on the stored full runs: **reproduced** (all within the published \
         spread), **partly**, **not reproduced (known)** (the reason and evidence in its \
         section), **not attempted** (why), **no published number** (the spec's hypotheses \
         only), **not run** (no full run stored here and none in the previous report). A \
         config without a full run here keeps its section of the previous report, and its \
         artefacts the verdicts that report gave (marked *kept from the previous report*).\n\n",
    );
    let mut lines = String::new();
    let mut totals: BTreeMap<Status, usize> = BTreeMap::new();
    let mut counts_table = String::from("| paper |");
    for s in Status::ALL {
        let _ = write!(counts_table, " {} |", s.word());
    }
    counts_table.push_str("\n|---|");
    for _ in Status::ALL {
        counts_table.push_str("---|");
    }
    counts_table.push('\n');
    for paper in &papers {
        let mut counts: BTreeMap<Status, usize> = BTreeMap::new();
        let _ = write!(
            lines,
            "\n**{}** (`configs/{}/`)\n\n| artefact | published | ours | upstream | verdict |\n|---|---|---|---|---|\n",
            paper.list.paper, paper.folder
        );
        for a in &paper.list.artefacts {
            let ev: Vec<&Evidence> = evidence
                .iter()
                .filter(|e| a.configs.contains(&e.experiment))
                .collect();
            let published: Vec<&crate::check::CheckResult> = ev
                .iter()
                .flat_map(|e| &e.results)
                .filter(|r| {
                    r.basis == Some(crate::check::Basis::Published)
                        && r.artefact.as_deref() == Some(&a.id)
                })
                .collect();
            let status = artefacts::status(a, &published);
            *counts.entry(status).or_default() += 1;
            *totals.entry(status).or_default() += 1;
            let head = ev.iter().find_map(|e| e.headline.get(&a.id));
            let up = ev.iter().find_map(|e| e.upstream.get(&a.id));
            let title = match a.configs.first() {
                Some(e) => format!("[{}](#{e})", a.title.replace('|', "\\|")),
                None => a.title.replace('|', "\\|"),
            };
            let verdict = match (&a.reason, status) {
                (Some(r), Status::NotAttempted | Status::NoPublishedNumber) => {
                    format!("{}: {}", status.word(), r.replace('|', "\\|"))
                }
                _ if status == Status::Failed => format!("**{}**", status.word()),
                _ => status.word().to_string(),
            };
            let _ = writeln!(
                lines,
                "| {title} | {} | {} | {} | {verdict} |",
                head.and_then(|h| h.1).map_or("—".into(), number),
                head.map_or("—".to_string(), |h| h.0.replace('|', "\\|")),
                up.map_or("—".to_string(), |u| u.replace('|', "\\|")),
            );
        }
        let _ = write!(counts_table, "| {} |", paper.folder);
        for s in Status::ALL {
            let _ = write!(counts_table, " {} |", counts.get(&s).copied().unwrap_or(0));
        }
        counts_table.push('\n');
    }
    let _ = write!(counts_table, "| all |");
    for s in Status::ALL {
        let _ = write!(counts_table, " {} |", totals.get(&s).copied().unwrap_or(0));
    }
    counts_table.push('\n');
    out.push_str(&counts_table);
    out.push_str(&lines);
    if !problems.is_empty() {
        out.push_str("\nProblems with the artefact lists:\n\n");
        for p in &problems {
            let _ = writeln!(out, "- {p}");
        }
    }
    out.push('\n');
    (out, problems)
}

/// How a section's anchor line starts (`<a id="name"></a>`, before its `###` header), after
/// the line break that ends the section before it.
const ANCHOR: &str = "\n<a id=\"";

/// How a section kept from an earlier report begins.
const KEPT_MARK: &str = "_Kept from the previous report:";

/// A report and what it found wanting.
pub struct Report {
    /// Markdown.
    pub text: String,
    /// Configs without a complete (and intact) run.
    pub missing: usize,
    /// Of those, the sections kept from the previous report.
    pub kept: usize,
    /// Checks that failed.
    pub failed_checks: usize,
    /// What is wrong with the artefact lists (`configs/<paper>/artefacts.toml`).
    pub artefact_problems: Vec<String>,
}

impl Report {
    /// Every run present and intact, every applicable check passed.
    pub fn ok(&self) -> bool {
        self.missing == 0 && self.failed_checks == 0 && self.artefact_problems.is_empty()
    }
}

/// A config's `###` header line (without its line break).
fn header(figure: &str, name: &str) -> String {
    format!("### {figure} — `{name}`")
}

/// The start of a config's section: its anchor, then its [`header`] (what
/// [`previous_section`] finds again), then a blank line.
fn heading(figure: &str, name: &str) -> String {
    format!("{ANCHOR}{name}\"></a>\n\n{}\n\n", header(figure, name))
}

/// A config's section of a report written before (`### <figure> — `<name>``, up to the next
/// section, the next section's anchor or the next paper), if it has one.
fn previous_section<'a>(previous: &'a str, figure: &str, name: &str) -> Option<&'a str> {
    let header = format!("\n{}\n", header(figure, name));
    let start = previous.find(&header)? + 1;
    let rest = &previous[start + header.len() - 1..];
    let end = ["\n### ", "\n## ", ANCHOR]
        .iter()
        .filter_map(|h| rest.find(h))
        .min()
        .map_or(previous.len(), |i| start + header.len() - 1 + i + 1);
    Some(&previous[start..end])
}

/// Builds the report of the stored runs `run` of `configs` (paper → sections), as Markdown.
/// Paths in it are relative to the project root. A config without a complete run keeps its
/// section of `previous` (the report written before, e.g. the committed one), marked as kept,
/// rather than a stub; only a config no report has shown gets the line saying how to run it.
///
/// With `whole` (every config of the project), the dashboard of the papers' artefact lists
/// leads the report, and the lists are checked against the configs.
pub fn build(
    root: &Path,
    configs: &[ResolvedConfig],
    run: &str,
    previous: Option<&str>,
    whole: bool,
) -> Report {
    let mut evidence: Vec<Evidence> = Vec::new();
    let mut missing = 0;
    let mut failed_checks = 0;
    let mut by_paper: BTreeMap<&str, Vec<&ResolvedConfig>> = BTreeMap::new();
    for c in configs {
        by_paper
            .entry(c.config.experiment.paper.as_str())
            .or_default()
            .push(c);
    }
    let source = if run == crate::config::FULL_PROFILE {
        "the stored full runs (`make reproduce-all`)".to_string()
    } else {
        format!(
            "the stored `{run}` runs, not the papers' protocols (the full runs are): a smoke \
             test or an ablation, each section's run line gives its profile and overrides"
        )
    };
    let mut out = format!(
        "# Reproduced vs published numbers ({run} runs)\n\nGenerated by `repro report` from \
         {source}. Reproduced values are mean ± sd (the sample sd, ddof 1) over the repetitions \
         of the run.\n",
    );
    let mut kept = 0;
    for (paper, mut configs) in by_paper {
        // Figures in their paper's order ("Fig. 5" before "Fig. 10").
        configs.sort_by_key(|c| crate::keys::natural_key(&c.config.experiment.figure));
        let _ = write!(out, "\n## {paper}\n");
        for r in configs {
            let e = &r.config.experiment;
            let paths = RunPaths::new(root, &e.name, run);
            let (manifest, rows) = match store::load_complete(&paths) {
                Ok(x) => {
                    let _ = write!(
                        out,
                        "{}{}\n\n",
                        heading(&e.figure, &e.name),
                        e.description.trim()
                    );
                    x
                }
                Err(err) => {
                    missing += 1;
                    let why = format!("{err:#}").replace(&format!("{}/", root.display()), "");
                    // A stub is not worth keeping: only a section with a run's numbers.
                    let old = previous
                        .and_then(|p| previous_section(p, &e.figure, &e.name))
                        .filter(|text| !text.contains("_No complete `"));
                    match old {
                        Some(text) => {
                            kept += 1;
                            evidence.push(Evidence::kept(r, text));
                            // The old section's body, without its header and earlier marks.
                            let body: String = text
                                .lines()
                                .skip(1)
                                .filter(|l| !l.starts_with(KEPT_MARK))
                                .map(|l| format!("{l}\n"))
                                .collect();
                            let _ = write!(
                                out,
                                "{}{KEPT_MARK} no complete `{run}` run here ({why}); `repro run {}` \
                                 regenerates it._\n\n{}\n",
                                heading(&e.figure, &e.name),
                                r.path.display(),
                                body.trim_matches('\n'),
                            );
                        }
                        None => {
                            let _ = write!(
                                out,
                                "{}{}\n\n_No complete `{run}` run: {why}. Run `repro run {}`._\n",
                                heading(&e.figure, &e.name),
                                e.description.trim(),
                                r.path.display()
                            );
                        }
                    }
                    continue;
                }
            };
            let _ =
                writeln!(
                out,
                "Run `{}`: config `{}`, profile `{}`, overrides {:?}, seed {}, commit `{}`{}, {} cells in {:.2} s on {} threads.\n",
                manifest.run,
                manifest.config,
                manifest.profile,
                manifest.overrides,
                manifest.base_seed,
                &manifest.provenance.git_commit[..manifest.provenance.git_commit.len().min(10)],
                if manifest.provenance.git_dirty == Some(true) { " (dirty)" } else { "" },
                manifest.cells.total,
                manifest.wall_seconds.unwrap_or(0.0),
                manifest.threads
            );
            if !manifest.unavailable.is_empty() {
                let mut reasons: Vec<&str> = manifest
                    .unavailable
                    .iter()
                    .map(|f| f.error.as_str())
                    .collect();
                reasons.dedup();
                let _ = writeln!(
                    out,
                    "The authors' code did not run in {} cells (left out of the table): {}.\n",
                    manifest.unavailable.len(),
                    reasons.join("; ")
                );
            }
            for spec in &r.config.plot {
                let png = spec.stem(&paths.figure_stem).with_extension("png");
                if png.exists() {
                    let rel = png.strip_prefix(root).unwrap_or(&png);
                    let caption = match &spec.name {
                        Some(name) => format!("{} ({name})", e.figure),
                        None => e.figure.clone(),
                    };
                    let _ = writeln!(out, "![{caption}](../{})\n", rel.display());
                }
            }
            let parameters = crate::cell::parameter_columns(&r.grid);
            if !r.config.reference.is_empty() {
                out.push_str(&references_table(r, &rows, &parameters));
            }
            for summary in &r.config.summary {
                out.push_str(&summary.markdown(&rows, &parameters));
            }
            out.push_str(&crate::summary::side_by_side_markdown(
                &r.config.side_by_side,
                &rows,
            ));
            let checks = crate::check::evaluate_all(
                &r.config.check,
                &rows,
                &manifest.profile,
                &manifest.overrides,
            );
            evidence.push(Evidence::of(r, &rows, &checks));
            failed_checks += results_table(
                &mut out,
                "Checks (basis: `published` bounds from the paper's number, `upstream` from the \
                 authors' code, `regression` a pin of our own output, `invariant` true by \
                 construction):\n\n| check | basis | value | bounds | verdict |",
                &checks,
            );
            let hypotheses = crate::check::evaluate_all(
                &r.config.hypothesis,
                &rows,
                &manifest.profile,
                &manifest.overrides,
            );
            results_table(
                &mut out,
                "Hypotheses (the spec's expectations where the paper prints no number: reported, \
                 never a verdict):\n\n| hypothesis | basis | value | holds when in | holds? |",
                &hypotheses,
            );
        }
    }
    let (dashboard, artefact_problems) = if whole {
        dashboard(root, configs, &evidence)
    } else {
        (String::new(), Vec::new())
    };
    if let Some(i) = out.find("\n## ") {
        out.insert_str(i, &dashboard);
    } else {
        out.push_str(&dashboard);
    }
    Report {
        text: out,
        artefact_problems,
        missing,
        kept,
        failed_checks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept section's checks and side-by-side tables read back as the report wrote them: the
    /// verdicts, values (to the printed precision), bounds and the config's artefacts.
    #[test]
    fn a_kept_section_gives_back_the_verdicts_it_printed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let load = |path: &str| {
            crate::config::load(&root, Path::new(path), crate::config::FULL_PROFILE, &[]).unwrap()
        };
        let r = load("configs/mondrian/fig5_kernel_error.toml");
        assert!(r.config.check.len() >= 2, "the test needs two checks");
        let outcomes = [
            Outcome::Failed,
            Outcome::KnownDeviation("fewer trees | other seeds".into()),
            Outcome::NotApplicable("overridden".into()),
            Outcome::Passed,
        ];
        let written: Vec<crate::check::CheckResult> = r
            .config
            .check
            .iter()
            .zip(outcomes.iter().cycle())
            .enumerate()
            .map(|(i, (spec, outcome))| crate::check::CheckResult {
                name: spec.name.clone(),
                value: Some(0.123456 * (i + 1) as f64),
                min: (i % 2 == 0).then_some(0.05),
                max: Some(1.5e-4 * (i + 1) as f64),
                outcome: outcome.clone(),
                detail: match outcome {
                    Outcome::KnownDeviation(d) | Outcome::NotApplicable(d) => d.clone(),
                    _ => String::new(),
                },
                basis: spec.basis,
                artefact: spec.artefact.clone(),
                published: spec.published,
            })
            .collect();
        let mut section = format!(
            "### {} — `x`\n\nRun `full`.\n\n",
            r.config.experiment.figure
        );
        results_table(
            &mut section,
            "Checks (basis: ...):\n\n| check | basis | value | bounds | verdict |",
            &written,
        );
        let kept = Evidence::kept(&r, &section);
        assert_eq!(kept.results.len(), written.len());
        for (a, b) in kept.results.iter().zip(&written) {
            assert_eq!(a.name, b.name);
            assert_eq!(a.outcome, b.outcome, "{}", a.name);
            assert_eq!(
                (a.basis, &a.artefact, a.published),
                (b.basis, &b.artefact, b.published)
            );
            let printed = |v: Option<f64>| v.map(|v| number(v).parse::<f64>().unwrap());
            assert_eq!(
                (a.value, a.min, a.max),
                (printed(b.value), printed(b.min), printed(b.max))
            );
        }
        // The side-by-side table of a config with an upstream (a run without rows prints none
        // of its numbers: the first entry is given some).
        let sbs = load("configs/mondrian/fig5_side_by_side.toml");
        let rows = vec![];
        let table = crate::summary::side_by_side_markdown(&sbs.config.side_by_side, &rows);
        let label = sbs.config.side_by_side[0].label.replace('|', "\\|");
        let table = table.replacen(
            &format!("| {label} | — | — |"),
            &format!("| {label} | 0.2 | 0.191 ± 0.01 (n = 5) |"),
            1,
        );
        let up_id = sbs.config.side_by_side[0].artefact.clone().unwrap();
        let up = &Evidence::kept(&sbs, &table).upstream[&up_id];
        assert!(
            up.starts_with("0.191 (") && up.contains("kept from the previous report"),
            "{up}"
        );
        let id = written[0].artefact.clone().unwrap();
        // The dashboard's verdict of a kept artefact comes from the checks read back.
        let published: Vec<&crate::check::CheckResult> = kept
            .results
            .iter()
            .filter(|c| c.artefact.as_deref() == Some(id.as_str()))
            .collect();
        // written[0] failed, so the artefact's verdict must be FAILED.
        assert!(published.iter().any(|c| c.outcome == Outcome::Failed));
        let papers = crate::artefacts::load(&root).unwrap();
        let a = papers
            .iter()
            .flat_map(|p| &p.list.artefacts)
            .find(|a| a.id == id)
            .unwrap();
        assert_eq!(
            crate::artefacts::status(a, &published),
            crate::artefacts::Status::Failed
        );
    }

    #[test]
    fn a_previous_section_is_found_up_to_the_next_section_or_paper() {
        let text = "# R\n\n## P\n\n### Fig. 1 — `a`\n\nbody a\n\n### Fig. 2 — `b`\n\nbody b\n\n## Q\n\n### Fig. 3 — `c`\n\nbody c\n";
        assert_eq!(
            previous_section(text, "Fig. 1", "a"),
            Some("### Fig. 1 — `a`\n\nbody a\n\n")
        );
        assert_eq!(
            previous_section(text, "Fig. 2", "b"),
            Some("### Fig. 2 — `b`\n\nbody b\n\n")
        );
        assert_eq!(
            previous_section(text, "Fig. 3", "c"),
            Some("### Fig. 3 — `c`\n\nbody c\n")
        );
        assert_eq!(previous_section(text, "Fig. 4", "d"), None);
        // A section ends before the anchor of the next one.
        let text = "## P\n\n<a id=\"a\"></a>\n\n### Fig. 1 — `a`\n\nbody a\n\n<a id=\"b\"></a>\n\n### Fig. 2 — `b`\n\nbody b\n";
        assert_eq!(
            previous_section(text, "Fig. 1", "a"),
            Some("### Fig. 1 — `a`\n\nbody a\n\n")
        );
    }
}
