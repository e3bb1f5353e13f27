//! `[[reference]]` and `[[summary]]` entries of a config: the published numbers set beside a
//! run's rows, and the tables derived from them (means and standard deviations per value of a
//! column, sign-test matrices), rendered as Markdown for `repro report`.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::stats::{mean_sd, values_of};
use crate::table::Row;

/// A published or reference number.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// What the number is, e.g. "Mondrian kernel, M = 50".
    pub label: String,
    pub metric: String,
    #[serde(default)]
    pub select: toml::Table,
    /// The published or reference value.
    pub value: f64,
    /// Its spread or provenance, e.g. "seed means 0.183-0.209".
    #[serde(default)]
    pub note: String,
}

impl Reference {
    pub fn validate(&self, columns: &[String]) -> Result<(), String> {
        for c in std::iter::once(&self.metric).chain(self.select.keys()) {
            if !columns.iter().any(|k| k == c) {
                return Err(format!(
                    "unknown column `{c}`; columns: {}",
                    columns.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Mean, sample sd (ddof 1) and count of the metric over the selected rows.
    pub fn reproduced(&self, rows: &[Row]) -> Option<(f64, f64, usize)> {
        let v = values_of(rows, &self.metric, &self.select);
        (!v.is_empty()).then(|| mean_sd(&v))
    }
}

/// `[[side_by_side]]`: the project's method and the authors' code on the same splits, paired.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SideBySide {
    /// What is compared, e.g. "uRTF, % correct".
    pub label: String,
    pub metric: String,
    /// The project's rows, e.g. `{ method = "urtf" }`.
    pub ours: toml::Table,
    /// The authors' code's rows, e.g. `{ method = "authors_urtf" }`.
    pub upstream: toml::Table,
    /// The columns that pair a row of each (default `["rep"]`: the same split).
    #[serde(default = "default_pair_by")]
    pub pair_by: Vec<String>,
    /// The CPU seconds column of both (the speed ratio is upstream / ours).
    #[serde(default)]
    pub seconds: Option<String>,
    /// The paper's number, and how far from it the authors' code may be and still reproduce it.
    #[serde(default)]
    pub published: Option<f64>,
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// The paper's artefact it speaks for (an `id` of the paper's `artefacts.toml`): the
    /// dashboard shows the upstream's value beside it.
    #[serde(default)]
    pub artefact: Option<String>,
}

impl SideBySide {
    pub fn validate(&self, columns: &[String]) -> Result<(), String> {
        if self.tolerance.is_some() && self.published.is_none() {
            return Err("tolerance needs published".into());
        }
        for c in std::iter::once(&self.metric)
            .chain(self.ours.keys())
            .chain(self.upstream.keys())
            .chain(&self.pair_by)
            .chain(self.seconds.iter())
        {
            if !columns.iter().any(|k| k == c) {
                return Err(format!(
                    "unknown column `{c}`; columns: {}",
                    columns.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// The upstream's mean over its rows, if it ran.
    pub fn upstream_mean(&self, rows: &[Row]) -> Option<f64> {
        let theirs = values_of(rows, &self.metric, &self.upstream);
        (!theirs.is_empty()).then(|| mean_sd(&theirs).0)
    }

    /// The upstream's mean beside the paper's number, once both exist.
    pub fn upstream_vs_paper(&self, rows: &[Row]) -> Option<UpstreamVsPaper> {
        let published = self.published?;
        let theirs = values_of(rows, &self.metric, &self.upstream);
        if theirs.is_empty() {
            return None;
        }
        let (upstream, _, _) = mean_sd(&theirs);
        Some(UpstreamVsPaper {
            published,
            upstream,
            reproduces: self.tolerance.map(|t| (upstream - published).abs() <= t),
        })
    }

    /// The table's line: ours, upstream, the paired difference and its two-sided sign test, CPU
    /// seconds of each and their ratio, the published number and whether the authors' code
    /// reproduces it.
    fn line(&self, rows: &[Row]) -> String {
        let fmt = |v: &[f64]| match mean_sd(v) {
            (_, _, 0) => "—".to_string(),
            (m, _, 1) => significant(m),
            (m, sd, n) => format!("{} ± {} (n = {n})", significant(m), significant(sd)),
        };
        let ours = values_of(rows, &self.metric, &self.ours);
        let theirs = values_of(rows, &self.metric, &self.upstream);
        let a = crate::stats::by_pair(rows, &self.metric, &self.ours, &self.pair_by);
        let b = crate::stats::by_pair(rows, &self.metric, &self.upstream, &self.pair_by);
        let diffs: Vec<f64> = a.iter().filter_map(|(k, x)| Some(x - b.get(k)?)).collect();
        let (paired, test) = if diffs.is_empty() {
            ("no pairs".to_string(), "—".to_string())
        } else {
            let (m, sd, n) = mean_sd(&diffs);
            let signed = |v: f64| {
                let s = significant(v);
                if v > 0.0 {
                    format!("+{s}")
                } else {
                    s
                }
            };
            // A difference within the printed precision of the other side is a tie.
            let tie = |d: f64| d.abs() <= TIE;
            let wins = diffs.iter().filter(|d| **d > 0.0 && !tie(**d)).count();
            let losses = diffs.iter().filter(|d| **d < 0.0 && !tie(**d)).count();
            let p = crate::stats::sign_test_two_sided(wins, wins + losses);
            let spread = if n > 1 {
                format!(" ± {}", significant(sd))
            } else {
                String::new()
            };
            (
                format!(
                    "{}{spread} ({n} pair{})",
                    signed(m),
                    if n == 1 { "" } else { "s" }
                ),
                format!("{wins}/{losses}, p = {}", number(p)),
            )
        };
        let speed = match &self.seconds {
            Some(col) => {
                let s_ours = values_of(rows, col, &self.ours);
                let s_theirs = values_of(rows, col, &self.upstream);
                if s_ours.is_empty() || s_theirs.is_empty() {
                    "—".to_string()
                } else {
                    let (o, _, _) = mean_sd(&s_ours);
                    let (t, _, _) = mean_sd(&s_theirs);
                    format!(
                        "{} / {} s: {}x",
                        significant(o),
                        significant(t),
                        significant(t / o)
                    )
                }
            }
            None => "—".to_string(),
        };
        let published = match (self.published, self.upstream_vs_paper(rows)) {
            (None, _) => "—".to_string(),
            (Some(p), None) => significant(p),
            (Some(p), Some(v)) => {
                let verdict = match (v.reproduces, self.tolerance) {
                    (Some(true), Some(t)) => {
                        format!(": the upstream reproduces it (within ±{})", significant(t))
                    }
                    (_, Some(t)) => format!(
                        ": the upstream does NOT reproduce it (off by {}, tolerance ±{})",
                        significant(v.upstream - p),
                        significant(t)
                    ),
                    (_, None) => format!(" (the upstream off by {})", significant(v.upstream - p)),
                };
                format!("{}{verdict}", significant(p))
            }
        };
        format!(
            "| {} | {} | {} | {paired} | {test} | {speed} | {published} |\n",
            self.label.replace('|', "\\|"),
            fmt(&ours),
            fmt(&theirs)
        )
    }
}

/// Whether the upstream reproduces the paper's number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UpstreamVsPaper {
    pub published: f64,
    /// The upstream's mean over the rows.
    pub upstream: f64,
    /// Within the tolerance; `None` without one.
    pub reproduces: Option<bool>,
}

/// Paired differences at most this large are ties (the authors' programs print their numbers
/// rounded, e.g. an accuracy in percent to 6 decimals).
const TIE: f64 = 1e-6;

/// Four significant digits (e-notation below 1e-3 and from 1e5).
fn significant(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{v}");
    }
    if v.abs() < 1e-3 || v.abs() >= 1e5 {
        return format!("{v:.3e}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

/// The `[[side_by_side]]` table of a config: one line each (see [`SideBySide::line`]).
pub fn side_by_side_markdown(entries: &[SideBySide], rows: &[Row]) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "Side by side with the upstream on the same splits (the authors' code, or where the \
         config says so the nearest public code; mean ± sample sd; the paired difference is ours \
         minus theirs per split; sign test: splits where ours is higher / lower, differences \
         within 1e-6 are ties, two-sided p; CPU seconds per cell of each and theirs over \
         ours):\n\n\
         | quantity | ours | upstream | ours − upstream (paired) | sign test | CPU s ours / upstream: ratio | published |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for e in entries {
        out.push_str(&e.line(rows));
    }
    out.push('\n');
    let verdicts: Vec<_> = entries
        .iter()
        .filter_map(|e| e.upstream_vs_paper(rows))
        .collect();
    let with_published = entries.iter().filter(|e| e.published.is_some()).count();
    let count = |v: Option<bool>| verdicts.iter().filter(|x| x.reproduces == v).count();
    out.push_str(&match with_published {
        0 => "The upstream beside the paper: no published number for these quantities.\n\n"
            .to_string(),
        _ => format!(
            "The upstream beside the paper: of {with_published} published number(s), the \
             upstream ran on {}: it reproduces {} within the stated tolerance, does not reproduce \
             {}, and {} have no tolerance.\n\n",
            verdicts.len(),
            count(Some(true)),
            count(Some(false)),
            count(None)
        ),
    });
    out
}

/// What a `[[summary]]` table shows.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SummaryKind {
    /// One row per value of `by`: mean ± sample sd (ddof 1) and count of each of `metrics`.
    MeanSd,
    /// The matrix of one-tailed sign-test p-values between the values of `by` (paired by
    /// `pair_by`), each entry towards the better of the two by mean, so it is symmetric (as
    /// the Random Tessellation Forests paper's Supp. Table 1).
    SignTests,
}

/// A `[[summary]]`: a table derived from a run for the report.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub kind: SummaryKind,
    /// Its caption, e.g. "Table 1 form: % correct over the splits".
    pub label: String,
    /// The metrics (`sign_tests`: exactly one).
    pub metrics: Vec<String>,
    /// The column whose values are the rows (and columns) of the table, e.g. `method`.
    pub by: String,
    /// The order of those values (absent: as they first occur); values not listed are left out.
    #[serde(default)]
    pub order: Vec<String>,
    /// How the table names them, one per value of `order` (absent: the values themselves).
    #[serde(default)]
    pub labels: Vec<String>,
    /// Only these rows.
    #[serde(default)]
    pub select: toml::Table,
    /// `sign_tests`: the columns that pair rows (default `["rep"]`, the same split).
    #[serde(default = "default_pair_by")]
    pub pair_by: Vec<String>,
    /// `mean_sd`: metrics whose lowest mean is marked in bold (the best method, e.g. RMSE).
    #[serde(default)]
    pub lower_is_better: Vec<String>,
}

fn default_pair_by() -> Vec<String> {
    vec!["rep".into()]
}

impl Summary {
    pub fn validate(&self, columns: &[String]) -> Result<(), String> {
        if self.metrics.is_empty() {
            return Err("metrics: name at least one column".into());
        }
        if self.kind == SummaryKind::SignTests && self.metrics.len() != 1 {
            return Err("a sign_tests summary takes exactly one metric".into());
        }
        if let Some(m) = self
            .lower_is_better
            .iter()
            .find(|m| !self.metrics.contains(m))
        {
            return Err(format!(
                "lower_is_better: `{m}` is not one of the metrics ({})",
                self.metrics.join(", ")
            ));
        }
        if !self.labels.is_empty() && self.labels.len() != self.order.len() {
            return Err(format!(
                "labels: {} names for {} values of order; give one per value",
                self.labels.len(),
                self.order.len()
            ));
        }
        for c in self
            .metrics
            .iter()
            .chain(std::iter::once(&self.by))
            .chain(self.select.keys())
            .chain(&self.pair_by)
        {
            if !columns.iter().any(|k| k == c) {
                return Err(format!(
                    "unknown column `{c}`; columns: {}",
                    columns.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// The values of `by` in table order.
    fn values(&self, rows: &[Row]) -> Vec<String> {
        if !self.order.is_empty() {
            return self.order.clone();
        }
        let mut seen = Vec::new();
        for r in crate::stats::selected(rows, &self.select) {
            if let Some(v) = r.get(&self.by).map(|v| v.to_string()) {
                if !seen.contains(&v) {
                    seen.push(v);
                }
            }
        }
        seen
    }

    /// The name the table shows for a value of `by`.
    fn label<'a>(&'a self, value: &'a str) -> &'a str {
        self.order
            .iter()
            .position(|v| v == value)
            .and_then(|i| self.labels.get(i))
            .map_or(value, String::as_str)
    }

    /// The selection of the rows of one value of `by` (as [`Self::values`] writes it: a
    /// number's selector is that number, found among `rows`, not its text).
    fn of(&self, rows: &[Row], value: &str) -> toml::Table {
        let selector = crate::stats::selected(rows, &self.select)
            .filter_map(|r| r.get(&self.by))
            .find(|v| v.to_string() == value)
            .and_then(|v| v.selector())
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        let mut t = self.select.clone();
        t.insert(self.by.clone(), selector);
        t
    }

    /// The table as Markdown: one table per value of every parameter (of `parameters`) that
    /// takes several values within a row of the table (a swept `--set`), never averaged
    /// together.
    pub fn markdown(&self, rows: &[Row], parameters: &[String]) -> String {
        let selected: Vec<&Row> = crate::stats::selected(rows, &self.select).collect();
        let mut consumed: Vec<&str> = vec![self.by.as_str()];
        consumed.extend(self.select.keys().map(String::as_str));
        if self.kind == SummaryKind::SignTests {
            consumed.extend(self.pair_by.iter().map(String::as_str));
        }
        let axes = crate::stats::pooled_parameters(&selected, parameters, &consumed);
        let mut out = format!("{}\n\n", self.label);
        if axes.is_empty() {
            self.table(&mut out, rows);
        } else {
            let _ = writeln!(
                out,
                "_{} took several values in this run: one table per value._\n",
                axes.iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for (label, members) in crate::stats::strata(&selected, &axes) {
                let members: Vec<Row> = members.into_iter().cloned().collect();
                let _ = writeln!(out, "**{label}**\n");
                self.table(&mut out, &members);
            }
        }
        out
    }

    /// One table of `rows`, appended to `out`.
    fn table(&self, out: &mut String, rows: &[Row]) {
        let values = self.values(rows);
        let stats =
            |value: &str, metric: &str| mean_sd(&values_of(rows, metric, &self.of(rows, value)));
        match self.kind {
            SummaryKind::MeanSd => {
                let _ = writeln!(out, "| {} | {} |", self.by, self.metrics.join(" | "));
                let _ = writeln!(out, "|---|{}", "---|".repeat(self.metrics.len()));
                // The lowest mean of each `lower_is_better` metric, marked in bold.
                let best = |m: &str| {
                    values
                        .iter()
                        .map(|v| stats(v, m))
                        .filter(|s| s.2 > 0 && s.0.is_finite())
                        .map(|s| s.0)
                        .fold(f64::INFINITY, f64::min)
                };
                let bests: Vec<Option<f64>> = self
                    .metrics
                    .iter()
                    .map(|m| self.lower_is_better.contains(m).then(|| best(m)))
                    .collect();
                for value in &values {
                    let cells: Vec<String> = self
                        .metrics
                        .iter()
                        .zip(&bests)
                        .map(|(m, b)| match stats(value, m) {
                            (_, _, 0) => "no rows".into(),
                            (mean, sd, n) if *b == Some(mean) => {
                                format!("**{}** (n = {n})", mean_pm_sd(mean, sd))
                            }
                            (mean, sd, n) => format!("{} (n = {n})", mean_pm_sd(mean, sd)),
                        })
                        .collect();
                    let _ = writeln!(out, "| {} | {} |", self.label(value), cells.join(" | "));
                }
                let _ = writeln!(
                    out,
                    "\nmean ± sd over the rows (the repetitions); sd: the sample standard deviation \
                     (ddof 1)."
                );
            }
            SummaryKind::SignTests => {
                let metric = &self.metrics[0];
                let names: Vec<&str> = values.iter().map(|v| self.label(v)).collect();
                let _ = writeln!(out, "| | {} |", names.join(" | "));
                let _ = writeln!(out, "|---|{}", "---|".repeat(values.len()));
                for a in &values {
                    let cells: Vec<String> = values
                        .iter()
                        .map(|b| {
                            if a == b {
                                return "—".to_string();
                            }
                            let (ma, mb) = (stats(a, metric).0, stats(b, metric).0);
                            let (hi, lo) = if ma >= mb { (a, b) } else { (b, a) };
                            match crate::stats::sign_test(
                                rows,
                                metric,
                                &self.of(rows, hi),
                                &self.of(rows, lo),
                                &self.pair_by,
                            ) {
                                Ok(t) => paper_p(t.p_value),
                                Err(_) => "n/a".into(),
                            }
                        })
                        .collect();
                    let _ = writeln!(out, "| **{}** | {} |", self.label(a), cells.join(" | "));
                }
                let _ = writeln!(
                    out,
                    "\nEach entry: one-tailed sign test over the pairs ({}) towards the method with \
                     the higher mean, ties counted against it: P(Bin(n, 1/2) >= wins).",
                    self.pair_by.join(", ")
                );
            }
        }
        out.push('\n');
    }
}

/// A p-value as the paper prints them: `5.1e-10`, `1.0e+00`.
pub(crate) fn paper_p(p: f64) -> String {
    let s = format!("{p:.1e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let e: i32 = e.parse().unwrap_or(0);
            format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
        }
        None => s,
    }
}

/// `mean ± sd`, or the mean alone where the sample sd is undefined (one value).
pub(crate) fn mean_pm_sd(mean: f64, sd: f64) -> String {
    if sd.is_finite() {
        format!("{} ± {}", number(mean), number(sd))
    } else {
        number(mean)
    }
}

/// A number in a report table: three decimals, or three significant digits in e-notation.
pub(crate) fn number(v: f64) -> String {
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e5) {
        format!("{v:.3e}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{row, Value};

    #[test]
    fn summaries_show_means_and_a_symmetric_sign_test_matrix() {
        let mut rows = Vec::new();
        for rep in 0..12usize {
            // b beats a in every split; c ties a.
            for (m, v) in [("a", 50.0), ("b", 60.0 + rep as f64), ("c", 50.0)] {
                rows.push(row([
                    ("method", m.into()),
                    ("rep", rep.into()),
                    ("acc", Value::Float(v)),
                ]));
            }
        }
        let table: Summary = toml::from_str(
            "kind = 'sign_tests'\nlabel = 'L'\nmetrics = ['acc']\nby = 'method'\norder = ['a', 'b', 'c']",
        )
        .unwrap();
        table
            .validate(&["method", "rep", "acc"].map(String::from))
            .unwrap();
        let md = table.markdown(&rows, &[]);
        // P(Bin(12, 1/2) >= 12) = 2^-12 = 2.4e-4, both ways round; a vs c all ties: p = 1.
        assert!(md.contains("| **a** | — | 2.4e-04 | 1.0e+00 |"), "{md}");
        assert!(md.contains("| **b** | 2.4e-04 | — | 2.4e-04 |"), "{md}");
        assert_eq!(paper_p(5.1e-10), "5.1e-10");
        assert_eq!(paper_p(0.0), "0.0e+00");
        let means: Summary =
            toml::from_str("kind = 'mean_sd'\nlabel = 'M'\nmetrics = ['acc']\nby = 'method'")
                .unwrap();
        let md = means.markdown(&rows, &[]);
        assert!(md.contains("| a | 50.000 ± 0.000 (n = 12) |"), "{md}");
        assert!(md.contains("| b | 65.500 ± 3.606 (n = 12) |"), "{md}");
        let lowest: Summary = toml::from_str(
            "kind = 'mean_sd'\nlabel = 'M'\nmetrics = ['acc']\nby = 'method'\nlower_is_better = ['acc']",
        )
        .unwrap();
        let md = lowest.markdown(&rows, &[]);
        assert!(md.contains("| a | **50.000 ± 0.000** (n = 12) |"), "{md}");
        assert!(md.contains("| b | 65.500 ± 3.606 (n = 12) |"), "{md}");
        // A parameter swept within each method: one table per value, never pooled.
        let mut swept = rows.clone();
        for (i, r) in swept.iter_mut().enumerate() {
            r.insert(
                "trees".into(),
                Value::Int(if i % 2 == 0 { 10 } else { 100 }),
            );
        }
        let params = ["method", "trees"].map(String::from);
        let md = means.markdown(&swept, &params);
        assert!(md.contains("`trees` took several values"), "{md}");
        assert!(
            md.contains("**trees = 10**") && md.contains("**trees = 100**"),
            "{md}"
        );
        assert_eq!(
            md.matches("| a | 50.000 ± 0.000 (n = 6) |").count(),
            2,
            "{md}"
        );
        assert_eq!(means.markdown(&rows, &params), means.markdown(&rows, &[]));
        let wrong: Summary = toml::from_str(
            "kind = 'mean_sd'\nlabel = 'M'\nmetrics = ['acc']\nby = 'method'\nlower_is_better = ['rmse']",
        )
        .unwrap();
        assert!(wrong
            .validate(&["method", "rep", "acc"].map(String::from))
            .unwrap_err()
            .contains("lower_is_better"));
        let bad: Summary = toml::from_str(
            "kind = 'sign_tests'\nlabel = 'L'\nmetrics = ['acc', 'rep']\nby = 'method'",
        )
        .unwrap();
        assert!(bad
            .validate(&["method", "rep", "acc"].map(String::from))
            .is_err());
    }

    /// Rows grouped by a numeric column (integers, floats, booleans) find their rows: the
    /// value a table row shows is matched as that number, not as its text (which matched no
    /// row, so every cell read "no rows").
    #[test]
    fn numeric_by_columns_find_their_rows() {
        let mut rows = Vec::new();
        for rep in 0..3usize {
            for (psi, gamma, on) in [(4i64, 0.5, true), (64, 1.25, false)] {
                rows.push(row([
                    ("method", "ik_a".into()),
                    ("psi", Value::Int(psi)),
                    ("gamma", Value::Float(gamma)),
                    ("on", Value::Bool(on)),
                    ("rep", rep.into()),
                    ("acc", Value::Float(psi as f64 + rep as f64)),
                ]));
            }
        }
        for by in ["psi", "gamma", "on"] {
            let means: Summary = toml::from_str(&format!(
                "kind = 'mean_sd'\nlabel = 'M'\nmetrics = ['acc']\nby = '{by}'\nselect = {{ method = 'ik_a' }}"
            ))
            .unwrap();
            let md = means.markdown(&rows, &[]);
            assert!(!md.contains("no rows"), "{md}");
            assert!(md.contains(" | 5.000 ± 1.000 (n = 3) |"), "{md}");
            assert!(md.contains(" | 65.000 ± 1.000 (n = 3) |"), "{md}");
        }
        let ordered: Summary = toml::from_str(
            "kind = 'mean_sd'\nlabel = 'M'\nmetrics = ['acc']\nby = 'psi'\norder = ['64', '4', '16']",
        )
        .unwrap();
        let md = ordered.markdown(&rows, &[]);
        assert!(md.contains("| 64 | 65.000 ± 1.000 (n = 3) |"), "{md}");
        assert!(md.contains("| 16 | no rows |"), "{md}");
    }
}
