//! `[[check]]` entries: scientific properties asserted on a run's stored table.
//!
//! * `mean`: the mean of `metric` over the rows matching `select` lies in `[min, max]`;
//! * `loglog_slope`: the least-squares slope of `ln(mean metric)` against `ln(x)`, over the rows
//!   matching `select` with `x_min <= x <= x_max` (means taken per x), lies in `[min, max]`
//!   (e.g. an error falling like `M^{-1/2}` has slope −1/2);
//! * `ratio`: mean of `metric` over `numerator` rows divided by its mean over `denominator` rows
//!   lies in `[min, max]`.
//!
//! * `reach_ratio`: the least `x` at which `metric` is at most `below`, over the `numerator`
//!   rows, divided by the same over the `denominator` rows (e.g. the CPU time one method needs
//!   to reach an error level relative to another's); a selection that never reaches the level
//!   counts as infinitely late.
//!
//! * `sign_test`: the one-tailed sign test that the `better` rows beat the `worse` rows, paired by
//!   `pair_by` (default `["rep"]`: the same split): with `w` the pairs where `better` is
//!   strictly higher and `n` all pairs (ties count for `worse`, as the Random Tessellation
//!   Forests paper), the value is the p-value `P(Bin(n, 1/2) >= w)` (1 when every pair ties).
//!   `max = 0.05` asserts a significant gain, `min = 0.05` that there is no evidence of one.
//!
//! `mean` and `ratio` take an optional `statistic` in place of the mean: `sd` (ddof 0),
//! `median`, `mean_abs`, `count`, `min` or `max` (e.g. the spread of learned weights).
//!
//! A check applies to the profiles it lists (all when `profiles` is absent), so a config can hold
//! tight bounds for the full run and looser ones for the quick profile.
//!
//! Every check declares its `basis` ([`Basis`]): `published` (a pass is a reproduction),
//! `upstream`, `regression` (a pin of our own output) or `invariant`; its verdict is worded by
//! it ([`CheckResult::verdict`]). A published check marked `known_deviation` that falls outside
//! its bounds is "not reproduced (known)": reported, not a failure.

mod spec;

pub use spec::{Basis, CheckSpec, CheckTest, KnownDeviation, Statistic, ALWAYS_VALID_UNDER};

use crate::stats::{loglog_slope, reach, sign_test, values_of};
use crate::table::Row;

/// How a check came out.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Passed,
    Failed,
    /// Outside published bounds the config marks as a known deviation (the reason).
    KnownDeviation(String),
    /// The run overrides parameters the check's bounds presume (the reason).
    NotApplicable(String),
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    pub name: String,
    pub value: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub outcome: Outcome,
    pub detail: String,
    /// What the bounds rest on (`None` for a hypothesis).
    pub basis: Option<Basis>,
    pub artefact: Option<String>,
    pub published: Option<f64>,
}

impl CheckResult {
    /// Passed, a known deviation or not applicable: nothing that fails a run.
    pub fn ok(&self) -> bool {
        self.outcome != Outcome::Failed
    }

    /// The verdict in words, by basis: only a published check's pass is "reproduced".
    pub fn verdict(&self) -> &'static str {
        match (&self.outcome, self.basis) {
            (Outcome::NotApplicable(_), _) => "n/a",
            (Outcome::KnownDeviation(_), _) => "not reproduced (known)",
            (Outcome::Passed, Some(Basis::Published)) => "reproduced",
            (Outcome::Passed, Some(Basis::Upstream)) => "agrees with upstream",
            (Outcome::Passed, Some(Basis::Regression)) => "pin holds",
            (Outcome::Passed, Some(Basis::Invariant)) => "holds",
            (Outcome::Passed, None) => "holds",
            (Outcome::Failed, Some(Basis::Published)) => "FAILED: not reproduced",
            (Outcome::Failed, Some(Basis::Upstream)) => "FAILED: differs from upstream",
            (Outcome::Failed, Some(Basis::Regression)) => "FAILED: pin moved",
            (Outcome::Failed, Some(Basis::Invariant)) => "FAILED: invariant broken",
            (Outcome::Failed, None) => "does not hold",
        }
    }
}

impl CheckSpec {
    /// Evaluates the check on the table of a run with the given overrides.
    pub fn evaluate_run(&self, rows: &[Row], overrides: &[String]) -> CheckResult {
        let invalid = self.invalidated_by(overrides);
        if invalid.is_empty() {
            return self.evaluate(rows);
        }
        CheckResult {
            name: self.name.clone(),
            value: None,
            min: self.min,
            max: self.max,
            outcome: Outcome::NotApplicable(format!(
                "its bounds presume the config's value of {} (add it to holds_under if they \
                 do not)",
                invalid.join(", ")
            )),
            detail: String::new(),
            basis: self.basis,
            artefact: self.artefact.clone(),
            published: self.published,
        }
    }

    /// Evaluates the check on a table.
    pub fn evaluate(&self, rows: &[Row]) -> CheckResult {
        let (min, max) = (self.min, self.max);
        let metric = self.metric.as_str();
        let value = match &self.test {
            CheckTest::Mean { select, statistic } => statistic_of(rows, metric, select, *statistic),
            CheckTest::LoglogSlope {
                x,
                select,
                x_min,
                x_max,
            } => loglog_slope(rows, metric, x, select, *x_min, *x_max),
            CheckTest::Ratio {
                numerator,
                denominator,
                statistic,
            } => statistic_of(rows, metric, numerator, *statistic)
                .and_then(|n| statistic_of(rows, metric, denominator, *statistic).map(|d| n / d)),
            CheckTest::ReachRatio {
                x,
                below,
                numerator,
                denominator,
            } => reach(rows, metric, x, *below, numerator).and_then(|n| {
                reach(rows, metric, x, *below, denominator).map(|d| {
                    if n.is_infinite() && d.is_infinite() {
                        f64::NAN
                    } else {
                        n / d
                    }
                })
            }),
            CheckTest::SignTest {
                better,
                worse,
                pair_by,
            } => sign_test(rows, metric, better, worse, pair_by).map(|t| t.p_value),
        };
        let (value, passed, detail) = match value {
            Ok(v) => {
                let ok =
                    v.is_finite() && min.is_none_or(|lo| v >= lo) && max.is_none_or(|hi| v <= hi);
                (Some(v), ok, String::new())
            }
            Err(e) => (None, false, e),
        };
        let (outcome, detail) = match (passed, &self.known_deviation) {
            (true, None) => (Outcome::Passed, detail),
            (true, Some(_)) => (
                Outcome::Passed,
                "marked as a known deviation, yet within the published bounds now: review the \
                 mark"
                    .to_string(),
            ),
            (false, Some(d)) if value.is_some() => (
                Outcome::KnownDeviation(d.reason.clone()),
                format!("{} (evidence: {})", d.reason, d.evidence),
            ),
            (false, _) => (Outcome::Failed, detail),
        };
        CheckResult {
            name: self.name.clone(),
            value,
            min,
            max,
            outcome,
            detail,
            basis: self.basis,
            artefact: self.artefact.clone(),
            published: self.published,
        }
    }
}
fn statistic_of(
    rows: &[Row],
    metric: &str,
    select: &toml::Table,
    statistic: Statistic,
) -> Result<f64, String> {
    let values = values_of(rows, metric, select);
    if values.is_empty() {
        return Err(format!("no rows with `{metric}` match {select}"));
    }
    Ok(statistic.of(&values))
}

/// Formats check results as an aligned text table: the verdict (worded by the check's basis),
/// the basis, the check, its value and bounds.
pub fn format_results(experiment: &str, results: &[CheckResult]) -> String {
    let mut out = String::new();
    for r in results {
        let detail = match &r.outcome {
            Outcome::NotApplicable(why) => why.as_str(),
            _ => r.detail.as_str(),
        };
        out.push_str(&format!(
            "  {:<29} {:<11} {:<60} {:>10} in {:<18} {detail}\n",
            r.verdict(),
            r.basis.map_or("", Basis::word),
            format!("{experiment}: {}", r.name),
            r.value.map_or("n/a".to_string(), |v| format!("{v:.4}")),
            bounds(r),
        ));
    }
    out
}

fn bounds(r: &CheckResult) -> String {
    format!(
        "[{}, {}]",
        r.min.map_or("-inf".into(), |v| format!("{v}")),
        r.max.map_or("+inf".into(), |v| format!("{v}"))
    )
}

/// The counts by basis and by verdict of a set of check results, one line each basis.
pub fn format_counts(results: &[&CheckResult]) -> String {
    let mut out = String::from("checks by basis and verdict:\n");
    for basis in Basis::ALL {
        let of: Vec<&&CheckResult> = results.iter().filter(|r| r.basis == Some(basis)).collect();
        if of.is_empty() {
            continue;
        }
        let mut verdicts: Vec<(&str, usize)> = Vec::new();
        for r in &of {
            match verdicts.iter_mut().find(|(v, _)| *v == r.verdict()) {
                Some((_, n)) => *n += 1,
                None => verdicts.push((r.verdict(), 1)),
            }
        }
        verdicts.sort();
        let words: Vec<String> = verdicts.iter().map(|(v, n)| format!("{n} {v}")).collect();
        out.push_str(&format!(
            "  {:<11} {:>4}: {}\n",
            basis.word(),
            of.len(),
            words.join(", ")
        ));
    }
    out
}

/// The results of the specs that apply to a run of `profile` with `overrides`.
pub fn evaluate_all(
    specs: &[CheckSpec],
    rows: &[Row],
    profile: &str,
    overrides: &[String],
) -> Vec<CheckResult> {
    specs
        .iter()
        .filter(|c| c.applies_to(profile))
        .map(|c| c.evaluate_run(rows, overrides))
        .collect()
}

/// Formats hypothesis results: `holds`, `does not hold` or `n/a`.
pub fn format_hypotheses(experiment: &str, results: &[CheckResult]) -> String {
    format_results(experiment, results)
}

#[cfg(test)]
mod tests {
    use super::spec::default_pair_by;
    use super::*;
    use crate::stats::binomial_upper_tail;
    use crate::table::{row, Value};

    #[test]
    fn sign_test_p_values_are_binomial_tails() {
        // Spec §11 test 6: every split tied gives p = 1; otherwise P(Bin(n, 1/2) >= w).
        assert_eq!(binomial_upper_tail(0, 200), 1.0);
        // Direct sums with exact binomial coefficients for small n.
        let choose = |n: u64, k: u64| (0..k).fold(1u64, |c, i| c * (n - i) / (i + 1));
        for n in [1u64, 5, 10, 30] {
            for w in 0..=n {
                let exact: f64 =
                    (w..=n).map(|k| choose(n, k) as f64).sum::<f64>() / 2f64.powi(n as i32);
                let got = binomial_upper_tail(w as usize, n as usize);
                assert!(
                    (got - exact).abs() <= 1e-12 * exact.max(1e-300),
                    "n {n} w {w}: {got} vs {exact}"
                );
            }
        }
        // Far tail at the paper's 200 splits: P(Bin(200, 1/2) = 200) = 2^-200.
        let p = binomial_upper_tail(200, 200);
        assert!((p / 2f64.powi(-200) - 1.0).abs() < 1e-9, "{p}");
        assert_eq!(binomial_upper_tail(201, 200), 0.0);
        // Symmetry: P(X >= 101) + P(X >= 100) = 1 for n = 200 (P(X <= 100) = P(X >= 100)).
        let s = binomial_upper_tail(101, 200) + binomial_upper_tail(100, 200);
        assert!((s - 1.0).abs() < 1e-12, "{s}");

        let mut rows = Vec::new();
        for rep in 0..10usize {
            // a beats b in 8 splits, ties in 1, loses in 1; c ties b everywhere.
            let b = 50.0;
            let a = match rep {
                0 => 50.0,
                1 => 40.0,
                _ => 60.0,
            };
            for (m, v) in [("a", a), ("b", b), ("c", b)] {
                rows.push(row([
                    ("method", m.into()),
                    ("rep", rep.into()),
                    ("acc", Value::Float(v)),
                ]));
            }
        }
        let sel = |m: &str| -> toml::Table { toml::from_str(&format!("method = '{m}'")).unwrap() };
        let t = sign_test(&rows, "acc", &sel("a"), &sel("b"), &default_pair_by()).unwrap();
        assert_eq!((t.wins, t.losses, t.pairs), (8, 1, 10));
        assert!((t.p_value - 56.0 / 1024.0).abs() < 1e-12, "{}", t.p_value);
        let t = sign_test(&rows, "acc", &sel("b"), &sel("c"), &default_pair_by()).unwrap();
        assert_eq!(t.p_value, 1.0);
        let check = parse("kind = 'sign_test'\nname = 's'\nmetric = 'acc'\nbetter = { method = 'a' }\nworse = { method = 'b' }\nmax = 0.06");
        assert_eq!(check.evaluate(&rows).outcome, Outcome::Passed);
        let none = parse("kind = 'sign_test'\nname = 's'\nmetric = 'acc'\nbetter = { method = 'a' }\nworse = { method = 'zzz' }\nmax = 0.06");
        let r = none.evaluate(&rows);
        assert_eq!(r.outcome, Outcome::Failed);
        assert!(r.detail.contains("no pairs"), "{}", r.detail);
    }

    fn rows() -> Vec<Row> {
        let mut out = Vec::new();
        for m in [1usize, 4, 16, 64] {
            for (rep, noise) in [(0usize, 0.9), (1, 1.1)] {
                out.push(row([
                    ("method", "a".into()),
                    ("m", m.into()),
                    ("rep", rep.into()),
                    ("err", Value::Float(noise / (m as f64).sqrt())),
                ]));
                out.push(row([
                    ("method", "b".into()),
                    ("m", m.into()),
                    ("rep", rep.into()),
                    ("err", Value::Float(2.0 * noise / (m as f64).sqrt())),
                ]));
            }
        }
        out
    }

    fn parse(text: &str) -> CheckSpec {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn slope_of_inverse_square_root_is_minus_one_half() {
        let c = parse("kind = 'loglog_slope'\nname = 's'\nmetric = 'err'\nx = 'm'\nselect = { method = 'a' }\nx_min = 1\nx_max = 64\nmin = -0.51\nmax = -0.49");
        let r = c.evaluate(&rows());
        assert!(r.ok(), "{r:?}");
        assert!((r.value.unwrap() + 0.5).abs() < 1e-12);
    }

    #[test]
    fn mean_and_ratio() {
        let mean = parse("kind = 'mean'\nname = 'm'\nmetric = 'err'\nselect = { method = 'a', m = 4 }\nmin = 0.49\nmax = 0.51");
        assert!(mean.evaluate(&rows()).ok());
        let ratio = parse("kind = 'ratio'\nname = 'r'\nmetric = 'err'\nnumerator = { method = 'b' }\ndenominator = { method = 'a' }\nmin = 1.99\nmax = 2.01");
        assert!(ratio.evaluate(&rows()).ok());
        let failing = parse("kind = 'mean'\nname = 'm'\nmetric = 'err'\nselect = { method = 'a', m = 4 }\nmax = 0.1");
        assert!(!failing.evaluate(&rows()).ok());
        let empty = parse(
            "kind = 'mean'\nname = 'm'\nmetric = 'err'\nselect = { method = 'zzz' }\nmax = 0.1",
        );
        let r = empty.evaluate(&rows());
        assert!(!r.ok() && r.detail.contains("no rows"));
    }

    #[test]
    fn validation_catches_unknown_columns_and_bad_bounds() {
        let columns: Vec<String> = ["method", "m", "err"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let bad = parse("kind = 'mean'\nname = 'm'\nmetric = 'errr'\nmin = 0");
        assert!(bad.validate(&columns).unwrap_err().contains("errr"));
        let no_bounds = parse("kind = 'mean'\nname = 'm'\nmetric = 'err'");
        assert!(no_bounds.validate(&columns).is_err());
        let inverted = parse("kind = 'mean'\nname = 'm'\nmetric = 'err'\nmin = 2\nmax = 1");
        assert!(inverted.validate(&columns).is_err());
        assert!(
            toml::from_str::<CheckSpec>("kind = 'mean'\nname = 'm'\nmetric = 'err'\nmni = 1")
                .is_err()
        );
    }
    #[test]
    fn statistics_and_array_selectors() {
        let r = rows();
        let sd = parse(
            "kind = \"mean\"\nname = \"s\"\nmetric = \"err\"\nselect = { method = \"a\", m = 1 }\nstatistic = \"sd\"\nmax = 1.0",
        )
        .evaluate(&r);
        assert!((sd.value.unwrap() - 0.1).abs() < 1e-12, "{sd:?}");
        let count = parse(
            "kind = \"mean\"\nname = \"c\"\nmetric = \"err\"\nselect = { method = [\"a\", \"b\"], m = 4 }\nstatistic = \"count\"\nmin = 4.0",
        )
        .evaluate(&r);
        assert_eq!(count.value, Some(4.0));
        let min = parse(
            "kind = \"ratio\"\nname = \"m\"\nmetric = \"err\"\nnumerator = { method = \"b\" }\ndenominator = { method = \"a\" }\nstatistic = \"min\"\nmax = 3.0",
        )
        .evaluate(&r);
        assert!((min.value.unwrap() - 2.0).abs() < 1e-12, "{min:?}");
    }

    #[test]
    fn reach_ratio_compares_first_times_below_a_level() {
        // err falls with m: a reaches 0.3 first at m = 16 (0.9/4 = 0.225), b at m = 64 (0.225).
        let r = rows();
        let spec = |below: f64| {
            parse(&format!(
                "kind = \"reach_ratio\"\nname = \"r\"\nmetric = \"err\"\nx = \"m\"\nbelow = {below}\nnumerator = {{ method = \"a\" }}\ndenominator = {{ method = \"b\" }}\nmax = 0.5"
            ))
        };
        let half = spec(0.3).evaluate(&r);
        assert_eq!(half.value, Some(0.25));
        assert!(half.ok());
        // Only a reaches 0.14: b never does, so the ratio is 0.
        assert_eq!(spec(0.14).evaluate(&r).value, Some(0.0));
        // Neither reaches 0.01: undefined, a failure.
        let none = spec(0.01).evaluate(&r);
        assert!(!none.ok());
    }

    #[test]
    fn checks_under_overrides_are_not_applicable_unless_they_hold() {
        let r = rows();
        let c = parse("kind = 'mean'\nname = 'm'\nmetric = 'err'\nselect = { method = 'a', m = 4 }\nmax = 0.1\nholds_under = ['params.learner']");
        // No overrides, or only seed / repeats / a declared key: evaluated (and failing here).
        for overrides in [
            vec![],
            vec!["seed=3".to_string(), "repeats = 2".into()],
            vec!["params.learner=sgd".into()],
        ] {
            assert_eq!(c.evaluate_run(&r, &overrides).outcome, Outcome::Failed);
        }
        // A parameter the bounds presume: not applicable, which is not a failure.
        let other = c.evaluate_run(&r, &["params.lifetime=3".to_string(), "seed=1".into()]);
        assert!(
            matches!(&other.outcome, Outcome::NotApplicable(why) if why.contains("params.lifetime"))
        );
        assert!(other.ok());
        // A table name covers its keys; a longer key with the same prefix is not covered.
        let t =
            parse("kind = 'mean'\nname = 'm'\nmetric = 'err'\nmax = 1.0\nholds_under = ['params']");
        assert!(t.invalidated_by(&["params.x=1".to_string()]).is_empty());
        assert_eq!(
            t.invalidated_by(&["paramsx=1".to_string()]),
            vec!["paramsx"]
        );
    }
}
