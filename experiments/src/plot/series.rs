//! The series of a figure from a run's rows: means and standard deviations per x, histogram
//! densities, paired values, box statistics, polygon vertices.

use std::collections::BTreeMap;

use plotters::style::RGBColor;

use super::spec::{Marker, PlotKind, PlotSpec};
use super::styles::Styles;
use crate::table::Row;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Look {
    /// Markers with ± sd error bars, joined by a thin line in x order.
    Markers(Marker),
    Line,
    Step,
    HLine,
    /// Histogram bars: points are (left, right, density).
    Bars,
    /// Small dots without error bars (pairs).
    Dots,
    /// A box of the values: points are (position, value, 0).
    Box,
    /// A closed polygon: points are its vertices (x, y, 0).
    Polygon,
}

/// One series' drawable points: (x, mean, sd), or (left, right, height) for bars.
pub(super) struct Series {
    pub(super) label: String,
    pub(super) color: RGBColor,
    pub(super) look: Look,
    pub(super) points: Vec<(f64, f64, f64)>,
}

/// The series of a figure from the rows that pass its filter.
/// A parameter that takes several values within a series (a swept `--set`) splits it: one
/// series per value, named `Mondrian (lifetime = 3)`, never averaged together. `styles`: the
/// looks of the config's series values ([`Styles::new`] of all its plots).
pub(super) fn build_series(
    spec: &PlotSpec,
    rows: &[Row],
    parameters: &[String],
    styles: &Styles,
) -> Vec<Series> {
    let rows: Vec<&Row> = crate::stats::selected(rows, &spec.filter).collect();
    let mut consumed: Vec<&str> = vec![spec.series.as_str()];
    consumed.extend(spec.filter.keys().map(String::as_str));
    match spec.kind {
        PlotKind::Lines | PlotKind::Boxes | PlotKind::Polygons => consumed.push(&spec.x),
        PlotKind::Pairs => consumed.extend(spec.pair_by.as_deref()),
        PlotKind::Histogram => {}
    }
    let axes = crate::stats::pooled_parameters(&rows, parameters, &consumed);
    if !axes.is_empty() {
        return split_series(spec, &rows, &axes, styles);
    }
    series_of(spec, &rows, "", styles)
}

/// One set of series per stratum of the swept parameters, the stratum named in each label.
fn split_series(spec: &PlotSpec, rows: &[&Row], axes: &[String], styles: &Styles) -> Vec<Series> {
    let strata = crate::stats::strata(rows, axes);
    let count = strata.len();
    let mut all = Vec::new();
    for (k, (label, members)) in strata.into_iter().enumerate() {
        for mut s in series_of(spec, &members, &label, styles) {
            // Strata of one series: its colour, lightened towards white stratum by stratum.
            let t = if count > 1 {
                k as f64 / (count - 1) as f64
            } else {
                0.0
            };
            let shade = |c: u8| (c as f64 + 0.55 * t * (255.0 - c as f64)).round() as u8;
            s.color = RGBColor(shade(s.color.0), shade(s.color.1), shade(s.color.2));
            if let Look::Markers(_) = s.look {
                s.look = Look::Markers(Marker::ALL[k % Marker::ALL.len()]);
            }
            all.push(s);
        }
    }
    all
}

/// The series of the rows of one stratum (`stratum`: its label, empty for all rows).
fn series_of(spec: &PlotSpec, rows: &[&Row], stratum: &str, styles: &Styles) -> Vec<Series> {
    let rows = rows.to_vec();
    let groups = match spec.kind {
        PlotKind::Lines => line_groups(spec, &rows),
        PlotKind::Histogram => histogram_groups(spec, &rows),
        PlotKind::Pairs => pair_groups(spec, &rows),
        PlotKind::Boxes | PlotKind::Polygons => vertex_groups(spec, &rows),
    };
    styles
        .order(spec, groups.keys())
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            let identity = styles.identity(spec, &value);
            let style = spec.styles.iter().find(|s| s.value == value);
            let look = match (spec.kind, style) {
                (PlotKind::Histogram, _) => Look::Bars,
                (PlotKind::Pairs, _) => Look::Dots,
                (PlotKind::Boxes, _) => Look::Box,
                (PlotKind::Polygons, _) => Look::Polygon,
                (_, Some(s)) if s.hline => Look::HLine,
                (_, Some(s)) if s.step => Look::Step,
                (_, Some(s)) if s.line => Look::Line,
                _ => Look::Markers(identity.marker),
            };
            let mut points = groups[&value].clone();
            if look == Look::Box {
                // Boxes stand at 1, 2, ... in series order.
                points.iter_mut().for_each(|p| p.0 = (i + 1) as f64);
            }
            let [r, g, b] = identity.color;
            Series {
                label: if stratum.is_empty() {
                    identity.label
                } else {
                    format!("{} ({stratum})", identity.label)
                },
                color: RGBColor(r, g, b),
                look,
                points,
            }
        })
        .collect()
}

/// `boxes` (the values of y) and `polygons` (the vertices (x, y) in row order) per series.
fn vertex_groups(spec: &PlotSpec, rows: &[&Row]) -> BTreeMap<String, Vec<(f64, f64, f64)>> {
    let mut groups: BTreeMap<String, Vec<(f64, f64, f64)>> = BTreeMap::new();
    for r in rows {
        let (Some(s), Some(y)) = (r.get(&spec.series), r.get(&spec.y).and_then(|v| v.as_f64()))
        else {
            continue;
        };
        let x = match spec.kind {
            PlotKind::Polygons => match r.get(&spec.x).and_then(|v| v.as_f64()) {
                Some(x) => x,
                None => continue,
            },
            _ => 0.0,
        };
        groups.entry(s.to_string()).or_default().push((x, y, 0.0));
    }
    groups
}

/// Tukey's box of sorted values: (lower whisker, q1, median, q3, upper whisker).
pub(super) fn box_stats(sorted: &[f64]) -> (f64, f64, f64, f64, f64) {
    let q = |p: f64| {
        let h = p * (sorted.len() - 1) as f64;
        let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
        sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
    };
    let (q1, med, q3) = (q(0.25), q(0.5), q(0.75));
    let iqr = q3 - q1;
    let lo = sorted
        .iter()
        .copied()
        .find(|&v| v >= q1 - 1.5 * iqr)
        .unwrap_or(q1);
    let hi = sorted
        .iter()
        .rev()
        .copied()
        .find(|&v| v <= q3 + 1.5 * iqr)
        .unwrap_or(q3);
    (lo, q1, med, q3, hi)
}

/// `lines`: mean and sd (ddof 0) of y per (series, x), sorted by x.
fn line_groups(spec: &PlotSpec, rows: &[&Row]) -> BTreeMap<String, Vec<(f64, f64, f64)>> {
    let mut groups: BTreeMap<String, BTreeMap<u64, (f64, Vec<f64>)>> = BTreeMap::new();
    for r in rows {
        let (Some(s), Some(y)) = (r.get(&spec.series), r.get(&spec.y).and_then(|v| v.as_f64()))
        else {
            continue;
        };
        // Rows without x (an x-independent level) are kept for horizontal-line series.
        let x = r.get(&spec.x).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
        groups
            .entry(s.to_string())
            .or_default()
            .entry(x.to_bits())
            .or_insert((x, Vec::new()))
            .1
            .push(y);
    }
    groups
        .into_iter()
        .map(|(name, by_x)| {
            let mut points: Vec<(f64, f64, f64)> = by_x
                .into_values()
                .map(|(x, ys)| {
                    let n = ys.len() as f64;
                    let mean = ys.iter().sum::<f64>() / n;
                    let sd = (ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / n).sqrt();
                    (x, mean, sd)
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (name, points)
        })
        .collect()
}

/// `histogram`: per series, the density of x over the bins (numpy `density = True`: counts
/// over (values in range × bin width); the last bin includes its right edge).
fn histogram_groups(spec: &PlotSpec, rows: &[&Row]) -> BTreeMap<String, Vec<(f64, f64, f64)>> {
    let [lo, hi, count] = spec.bins.unwrap_or([0.0, 1.0, 2.0]);
    let n_bins = (count as usize).saturating_sub(1).max(1);
    let width = (hi - lo) / n_bins as f64;
    let mut counts: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in rows {
        let (Some(s), Some(x)) = (r.get(&spec.series), r.get(&spec.x).and_then(|v| v.as_f64()))
        else {
            continue;
        };
        let bins = counts
            .entry(s.to_string())
            .or_insert_with(|| vec![0.0; n_bins]);
        if x >= lo && x <= hi {
            let k = (((x - lo) / width) as usize).min(n_bins - 1);
            bins[k] += 1.0;
        }
    }
    counts
        .into_iter()
        .map(|(name, bins)| {
            let total: f64 = bins.iter().sum::<f64>().max(1.0);
            let points = bins
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let left = lo + k as f64 * width;
                    (left, left + width, c / (total * width))
                })
                .collect();
            (name, points)
        })
        .collect()
}

/// `pairs`: one point (value in series `pair[0]`, value in series `pair[1]`) per key present in
/// both; keys are (repetition, `pair_by`), so repetitions never pair with each other.
fn pair_groups(spec: &PlotSpec, rows: &[&Row]) -> BTreeMap<String, Vec<(f64, f64, f64)>> {
    let (Some(key), Some([sx, sy])) = (&spec.pair_by, &spec.pair) else {
        return BTreeMap::new();
    };
    let mut values: BTreeMap<(String, String), [Option<f64>; 2]> = BTreeMap::new();
    for r in rows {
        let (Some(s), Some(k), Some(v)) = (
            r.get(&spec.series).map(|v| v.to_string()),
            r.get(key).map(|v| v.to_string()),
            r.get(&spec.y).and_then(|v| v.as_f64()),
        ) else {
            continue;
        };
        let rep = r.get("rep").map(|v| v.to_string()).unwrap_or_default();
        let slot = if &s == sx {
            0
        } else if &s == sy {
            1
        } else {
            continue;
        };
        values.entry((rep, k)).or_default()[slot] = Some(v);
    }
    let points: Vec<(f64, f64, f64)> = values
        .into_values()
        .filter_map(|[x, y]| Some((x?, y?, 0.0)))
        .collect();
    if points.is_empty() {
        return BTreeMap::new();
    }
    BTreeMap::from([(sy.clone(), points)])
}
