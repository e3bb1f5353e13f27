//! Statistics over a run's rows (row selection, means, the paired sign test, log-log slopes,
//! the first x reaching a level), used by the checks, the figures and the report.

use crate::table::{Row, Value};

/// The rows matching every `key = value` of `select`.
pub fn selected<'a>(rows: &'a [Row], select: &'a toml::Table) -> impl Iterator<Item = &'a Row> {
    rows.iter().filter(move |r| {
        select
            .iter()
            .all(|(k, v)| r.get(k).is_some_and(|value| value.matches(v)))
    })
}

/// The values of `metric` in the rows matching `select`.
pub fn values_of(rows: &[Row], metric: &str, select: &toml::Table) -> Vec<f64> {
    selected(rows, select)
        .filter_map(|r| r.get(metric).and_then(|v| v.as_f64()))
        .collect()
}

/// Mean, sample standard deviation (ddof 1; NaN for fewer than two values) and count.
pub fn mean_sd(values: &[f64]) -> (f64, f64, usize) {
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let sd = if n < 2 {
        f64::NAN
    } else {
        (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    (mean, sd, n)
}

/// The parameter columns (of `parameters`, outside `consumed`) that take more than one value
/// among rows agreeing on every `consumed` column: what a view grouping the rows by `consumed`
/// (a figure's series and x, a table's rows) would average together. Such a view keeps them
/// apart ([`strata`]). A parameter set per group (a `[[case]]` per method) is constant within
/// each group and is not pooled.
pub fn pooled_parameters(rows: &[&Row], parameters: &[String], consumed: &[&str]) -> Vec<String> {
    // Each row's group, computed once for all parameters.
    let groups: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            consumed
                .iter()
                .map(|c| r.get(*c).map(|v| v.to_string()).unwrap_or_default())
                .collect()
        })
        .collect();
    parameters
        .iter()
        .filter(|p| !consumed.contains(&p.as_str()))
        .filter(|p| {
            let mut seen: std::collections::BTreeMap<&[String], String> = Default::default();
            rows.iter().zip(&groups).any(|(r, group)| {
                let v = r.get(p.as_str()).map(|v| v.to_string()).unwrap_or_default();
                seen.entry(group).or_insert_with(|| v.clone()) != &v
            })
        })
        .cloned()
        .collect()
}

/// The rows split by their values of `axes`, labelled `lifetime = 3, trees = 10`, in
/// increasing order of the values (numbers numerically); one unlabelled stratum of all rows
/// when `axes` is empty.
pub fn strata<'a>(rows: &[&'a Row], axes: &[String]) -> Vec<(String, Vec<&'a Row>)> {
    if axes.is_empty() {
        return vec![(String::new(), rows.to_vec())];
    }
    let mut groups: Vec<(Vec<Value>, Vec<&'a Row>)> = Vec::new();
    for &r in rows {
        let values: Vec<Value> = axes
            .iter()
            .map(|a| r.get(a).cloned().unwrap_or(Value::Null))
            .collect();
        match groups.iter_mut().find(|(v, _)| *v == values) {
            Some((_, members)) => members.push(r),
            None => groups.push((values, vec![r])),
        }
    }
    let order = |a: &Value, b: &Value| match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => a.to_string().cmp(&b.to_string()),
    };
    groups.sort_by(|(a, _), (b, _)| {
        a.iter()
            .zip(b)
            .map(|(x, y)| order(x, y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    groups
        .into_iter()
        .map(|(values, members)| (stratum_label(axes, &values), members))
        .collect()
}

/// `lifetime = 3, trees = 10`.
pub fn stratum_label(axes: &[String], values: &[Value]) -> String {
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{a} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A paired one-tailed sign test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignTest {
    /// Pairs where `better` is strictly higher.
    pub wins: usize,
    /// Pairs where `worse` is strictly higher.
    pub losses: usize,
    /// All pairs (ties included).
    pub pairs: usize,
    /// `P(Bin(pairs, 1/2) >= wins)`.
    pub p_value: f64,
}

/// `P(Bin(n, 1/2) >= w)`, summed in log space (accurate far into the tail: 1e-60 at n = 200).
pub fn binomial_upper_tail(w: usize, n: usize) -> f64 {
    if w == 0 {
        return 1.0;
    }
    if w > n {
        return 0.0;
    }
    // ln C(n, k) by running sums of logarithms.
    let ln_fact: Vec<f64> = std::iter::once(0.0)
        .chain((1..=n).scan(0.0, |acc, k| {
            *acc += (k as f64).ln();
            Some(*acc)
        }))
        .collect();
    let terms: Vec<f64> = (w..=n)
        .map(|k| ln_fact[n] - ln_fact[k] - ln_fact[n - k] - n as f64 * std::f64::consts::LN_2)
        .collect();
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = terms.iter().map(|t| (t - top).exp()).sum();
    (top + sum.ln()).exp().min(1.0)
}

/// The mean of `metric` per pairing key (the values of the `pair_by` columns) over the rows
/// matching `select`.
pub fn by_pair(
    rows: &[Row],
    metric: &str,
    select: &toml::Table,
    pair_by: &[String],
) -> std::collections::BTreeMap<Vec<String>, f64> {
    let mut sums: std::collections::BTreeMap<Vec<String>, (f64, usize)> = Default::default();
    for r in selected(rows, select) {
        let Some(v) = r.get(metric).and_then(|v| v.as_f64()) else {
            continue;
        };
        let Some(key) = pair_by
            .iter()
            .map(|c| r.get(c).map(|v| v.to_string()))
            .collect::<Option<Vec<String>>>()
        else {
            continue;
        };
        let e = sums.entry(key).or_insert((0.0, 0));
        e.0 += v;
        e.1 += 1;
    }
    sums.into_iter()
        .map(|(k, (s, n))| (k, s / n as f64))
        .collect()
}

/// The sign test that the `better` rows beat the `worse` rows on `metric`, paired by `pair_by`
/// (pairs present in both selections only).
pub fn sign_test(
    rows: &[Row],
    metric: &str,
    better: &toml::Table,
    worse: &toml::Table,
    pair_by: &[String],
) -> Result<SignTest, String> {
    let a = by_pair(rows, metric, better, pair_by);
    let b = by_pair(rows, metric, worse, pair_by);
    let (mut wins, mut losses, mut pairs) = (0, 0, 0);
    for (key, x) in &a {
        if let Some(y) = b.get(key) {
            pairs += 1;
            if x > y {
                wins += 1;
            } else if y > x {
                losses += 1;
            }
        }
    }
    if pairs == 0 {
        return Err(format!(
            "no pairs: rows with `{metric}` matching {better} and {worse} share no {pair_by:?}"
        ));
    }
    Ok(SignTest {
        wins,
        losses,
        pairs,
        p_value: binomial_upper_tail(wins, pairs),
    })
}

/// `P(|Bin(n, 1/2) - n/2| >= |w - n/2|)`: the two-sided sign test of `w` wins in `n` untied
/// pairs.
pub fn sign_test_two_sided(w: usize, n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let extreme = w.max(n - w);
    (2.0 * binomial_upper_tail(extreme, n)).min(1.0)
}

/// The least `x` over the selected rows whose `metric` is at most `below` (infinity if none).
pub fn reach(
    rows: &[Row],
    metric: &str,
    x: &str,
    below: f64,
    select: &toml::Table,
) -> Result<f64, String> {
    let mut any = false;
    let mut first = f64::INFINITY;
    for r in selected(rows, select) {
        let (Some(m), Some(t)) = (
            r.get(metric).and_then(|v| v.as_f64()),
            r.get(x).and_then(|v| v.as_f64()),
        ) else {
            continue;
        };
        any = true;
        if m <= below {
            first = first.min(t);
        }
    }
    if any {
        Ok(first)
    } else {
        Err(format!("no rows with `{metric}` and `{x}` match {select}"))
    }
}

/// The least-squares slope of `ln(mean metric)` against `ln(x)` over the selected rows with
/// `x_min <= x <= x_max` (means taken per x).
pub fn loglog_slope(
    rows: &[Row],
    metric: &str,
    x: &str,
    select: &toml::Table,
    x_min: f64,
    x_max: f64,
) -> Result<f64, String> {
    let mut by_x: std::collections::BTreeMap<u64, (f64, f64, usize)> = Default::default();
    for r in selected(rows, select) {
        let (Some(xv), Some(yv)) = (
            r.get(x).and_then(|v| v.as_f64()),
            r.get(metric).and_then(|v| v.as_f64()),
        ) else {
            continue;
        };
        if xv >= x_min && xv <= x_max {
            let e = by_x.entry(xv.to_bits()).or_insert((xv, 0.0, 0));
            e.1 += yv;
            e.2 += 1;
        }
    }
    let points: Vec<(f64, f64)> = by_x
        .values()
        .map(|(xv, sum, n)| (xv.ln(), (sum / *n as f64).ln()))
        .collect();
    if points.len() < 2 {
        return Err(format!(
            "need rows at two or more `{x}` values in [{x_min}, {x_max}]"
        ));
    }
    if points.iter().any(|(_, y)| !y.is_finite()) {
        return Err(format!("`{metric}` must be > 0 for a log-log slope"));
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = points.iter().map(|(a, _)| (a - mx) * (a - mx)).sum();
    Ok(sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::row;

    /// Rows of a sweep over `lifetime` (two values) per (method, m), with `psi` set per method.
    fn swept() -> Vec<Row> {
        let mut rows = Vec::new();
        for (method, psi) in [("a", 1i64), ("b", 2)] {
            for lifetime in [30.0, 3.0] {
                for m in [1i64, 2] {
                    for rep in 0..2i64 {
                        rows.push(row([
                            ("method", method.into()),
                            ("psi", psi.into()),
                            ("lifetime", Value::Float(lifetime)),
                            ("m", m.into()),
                            ("rep", rep.into()),
                            ("error", Value::Float(lifetime + rep as f64)),
                        ]));
                    }
                }
            }
        }
        rows
    }

    #[test]
    fn a_parameter_varying_within_a_group_is_pooled_one_set_per_group_is_not() {
        let rows = swept();
        let refs: Vec<&Row> = rows.iter().collect();
        let params = ["lifetime", "m", "method", "psi"].map(String::from);
        assert_eq!(
            pooled_parameters(&refs, &params, &["method", "m"]),
            vec!["lifetime".to_string()]
        );
        // Grouped by every swept column, nothing is pooled; `psi` is constant per method.
        assert!(pooled_parameters(&refs, &params, &["method", "m", "lifetime"]).is_empty());
        // Without `method` in the view, `psi` is pooled too (it takes two values).
        assert_eq!(
            pooled_parameters(&refs, &params, &["m"]),
            ["lifetime", "method", "psi"].map(String::from).to_vec()
        );
        let split = strata(&refs, &["lifetime".to_string()]);
        let labels: Vec<&str> = split.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["lifetime = 3", "lifetime = 30"]);
        assert!(split.iter().all(|(_, members)| members.len() == 8));
        assert_eq!(strata(&refs, &[]).len(), 1);
    }

    #[test]
    fn sample_standard_deviation() {
        let (mean, sd, n) = mean_sd(&[1.0, 2.0, 6.0]);
        assert_eq!((mean, n), (3.0, 3));
        // Sum of squares 14 over n - 1 = 2 (pandas' and duckdb's default, not numpy's).
        assert!((sd - 7f64.sqrt()).abs() < 1e-15);
        assert!(mean_sd(&[4.0]).1.is_nan());
    }
}
