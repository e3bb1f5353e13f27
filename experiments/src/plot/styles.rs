//! One look per series value across a config's plots: a method keeps its label, colour and
//! marker in every figure of one config, whichever of its plots styles it. Values no plot styles
//! get their raw value as label and a palette colour and marker, also the same in every figure.
//!
//! Plots share looks by their `series` column. A `pairs` plot is the exception: its one series
//! names a pairing of two values (e.g. "kernel vs forest weight of one leaf"), not a value, so
//! it keeps its own style and lends none.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use super::spec::{Marker, PlotKind, PlotSpec};
use crate::table::Row;

/// Colours of the values without a style, in order (matplotlib's tab10).
const PALETTE: [[u8; 3]; 10] = [
    [31, 119, 180],
    [214, 39, 40],
    [44, 160, 44],
    [255, 127, 14],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

/// How one series value looks in every plot of a config.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Identity {
    pub(super) label: String,
    pub(super) color: [u8; 3],
    pub(super) marker: Marker,
}

/// The looks of the series values of one config's plots, built from all its plots and the rows
/// they draw.
#[derive(Debug, Default)]
pub(super) struct Styles {
    /// Per `series` column: its values in legend order (styled values in the order the plots
    /// style them, then the others in natural order), each with its look.
    columns: BTreeMap<String, Vec<(String, Identity)>>,
}

/// What the plots give for one value: a style's label, colour and marker, or only the value.
struct Given {
    value: String,
    label: String,
    color: Option<[u8; 3]>,
    marker: Option<Marker>,
}

/// Whether a plot shares looks with the config's other plots.
fn shares(spec: &PlotSpec) -> bool {
    spec.kind != PlotKind::Pairs
}

/// Checks that no two plots of a config give one value of one `series` column two labels,
/// colours or markers.
pub fn check_consistent(plots: &[PlotSpec]) -> Result<(), String> {
    let shown = |m: Option<Marker>| m.map(|m| format!(" {m:?}")).unwrap_or_default();
    // The first style of each (column, value), and its first explicit marker.
    let mut first: BTreeMap<(&str, &str), (usize, &super::spec::SeriesStyle)> = BTreeMap::new();
    let mut first_marker: BTreeMap<(&str, &str), (usize, Marker)> = BTreeMap::new();
    for (i, plot) in plots.iter().enumerate().filter(|(_, p)| shares(p)) {
        for style in &plot.styles {
            let key = (plot.series.as_str(), style.value.as_str());
            let (j, earlier) = *first.entry(key).or_insert((i, style));
            let conflict = if style.label != earlier.label || style.color != earlier.color {
                Some((j, shown(earlier.marker)))
            } else {
                match (style.marker, first_marker.get(&key)) {
                    (Some(m), Some(&(k, other))) if m != other => Some((k, shown(Some(other)))),
                    _ => None,
                }
            };
            if let Some(marker) = style.marker {
                first_marker.entry(key).or_insert((i, marker));
            }
            let Some((j, earlier_marker)) = conflict else {
                continue;
            };
            let earlier = first[&key].1;
            return Err(format!(
                "plot #{}: `{} = {:?}` is styled as {:?} {:?}{}, but plot #{} styles it as \
                 {:?} {:?}{}: one value keeps one label, colour and marker in all the config's \
                 plots (style it alike, or in one plot only: the others reuse it)",
                i + 1,
                plot.series,
                style.value,
                style.label,
                style.color,
                shown(style.marker),
                j + 1,
                earlier.label,
                earlier.color,
                earlier_marker,
            ));
        }
    }
    Ok(())
}

/// Numbers by value before text in text order, so levels 2, 5, 11 keep their order.
fn natural(a: &str, b: &str) -> Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y).then_with(|| a.cmp(b)),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// The k-th of `all` outside `taken`, cycling (through all of them once none is free).
fn kth_free<T: Copy + PartialEq>(all: &[T], taken: &[T], k: usize) -> T {
    let free: Vec<T> = all.iter().copied().filter(|c| !taken.contains(c)).collect();
    let pool = if free.is_empty() { all } else { &free };
    pool[k % pool.len()]
}

impl Styles {
    /// The looks of every value of the plots' `series` columns: the styles any plot gives
    /// (checked alike by [`check_consistent`]; the first wins) and, for values that no plot
    /// styles among the rows a plot draws, their value as label with a palette colour and a
    /// marker that no styled value of the column uses.
    pub(super) fn new(plots: &[PlotSpec], rows: &[Row]) -> Styles {
        // Per column, the styled values first.
        let mut styled: BTreeMap<&str, Vec<Given>> = BTreeMap::new();
        for plot in plots.iter().filter(|p| shares(p)) {
            let column = styled.entry(plot.series.as_str()).or_default();
            for style in &plot.styles {
                match column.iter_mut().find(|v| v.value == style.value) {
                    Some(known) => known.marker = known.marker.or(style.marker),
                    None => column.push(Given {
                        value: style.value.clone(),
                        label: style.label.clone(),
                        color: Some(style.color),
                        marker: style.marker,
                    }),
                }
            }
        }
        let mut seen: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for plot in plots.iter().filter(|p| shares(p)) {
            let values = seen.entry(plot.series.as_str()).or_default();
            values.extend(
                crate::stats::selected(rows, &plot.filter)
                    .filter_map(|r| r.get(&plot.series))
                    .map(|v| v.to_string()),
            );
        }
        let mut columns = BTreeMap::new();
        for (name, mut values) in styled {
            let mut others: Vec<String> = seen
                .remove(name)
                .unwrap_or_default()
                .into_iter()
                .filter(|v| !values.iter().any(|s| &s.value == v))
                .collect();
            others.sort_by(|a, b| natural(a, b));
            values.extend(others.into_iter().map(|v| Given {
                value: v.clone(),
                label: v,
                color: None,
                marker: None,
            }));
            let colors: Vec<[u8; 3]> = values.iter().filter_map(|v| v.color).collect();
            let markers: Vec<Marker> = values.iter().filter_map(|v| v.marker).collect();
            let (mut next_color, mut next_marker) = (0, 0);
            let looks = values
                .into_iter()
                .map(|given| {
                    let color = given.color.unwrap_or_else(|| {
                        next_color += 1;
                        kth_free(&PALETTE, &colors, next_color - 1)
                    });
                    let marker = given.marker.unwrap_or_else(|| {
                        next_marker += 1;
                        // The small dot is kept for explicit styles: too faint for a series.
                        kth_free(&Marker::ALL[..4], &markers, next_marker - 1)
                    });
                    (
                        given.value,
                        Identity {
                            label: given.label,
                            color,
                            marker,
                        },
                    )
                })
                .collect();
            columns.insert(name.to_string(), looks);
        }
        Styles { columns }
    }

    /// The values among `present` in the order the plot draws them: its own styles first, then
    /// the config's order of its `series` column, then any other in natural order.
    pub(super) fn order<'a>(
        &self,
        spec: &PlotSpec,
        present: impl IntoIterator<Item = &'a String>,
    ) -> Vec<String> {
        let mut present: Vec<&String> = present.into_iter().collect();
        present.sort_by(|a, b| natural(a, b));
        let shared = self.shared(spec).into_iter().flatten().map(|(v, _)| v);
        let mut order: Vec<String> = Vec::new();
        for value in spec.styles.iter().map(|s| &s.value).chain(shared) {
            if present.contains(&value) && !order.contains(value) {
                order.push(value.clone());
            }
        }
        for value in present {
            if !order.contains(value) {
                order.push(value.clone());
            }
        }
        order
    }

    /// How `value` looks in the plot (a value the map has not seen, or one of a `pairs` plot
    /// without a style: its value as label in the first palette colour).
    pub(super) fn identity(&self, spec: &PlotSpec, value: &str) -> Identity {
        if let Some((_, identity)) = self
            .shared(spec)
            .and_then(|looks| looks.iter().find(|(v, _)| v == value))
        {
            return identity.clone();
        }
        match spec.styles.iter().find(|s| s.value == value) {
            Some(s) => Identity {
                label: s.label.clone(),
                color: s.color,
                marker: s.marker.unwrap_or(Marker::Circle),
            },
            None => Identity {
                label: value.to_string(),
                color: PALETTE[0],
                marker: Marker::Circle,
            },
        }
    }

    fn shared(&self, spec: &PlotSpec) -> Option<&Vec<(String, Identity)>> {
        if shares(spec) {
            self.columns.get(&spec.series)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{row, Value};

    fn spec(text: &str) -> PlotSpec {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_value_styled_in_one_plot_looks_alike_in_every_plot_and_unstyled_values_too() {
        let styled = spec(
            "name = 'mse'\nx = 'level'\ny = 'mse'\nseries = 'method'\nx_label = 'l'\ny_label = 'e'\n\
             filter = { record = 'level' }\n\
             [[styles]]\nvalue = 'streamrak'\nlabel = 'StreaMRAK'\ncolor = [214, 39, 40]\n\
             [[styles]]\nvalue = 'falkon'\nlabel = 'FALKON'\ncolor = [44, 160, 44]\nmarker = 'square'",
        );
        let bare = spec(
            "name = 'landmarks'\nx = 'level'\ny = 'm'\nseries = 'method'\nx_label = 'l'\ny_label = 'm'",
        );
        let other = spec(
            "name = 'only_c'\nx = 'level'\ny = 'm'\nseries = 'method'\nx_label = 'l'\ny_label = 'm'\n\
             filter = { record = 'tree' }",
        );
        let mut rows = Vec::new();
        for (record, method) in [
            ("level", "streamrak"),
            ("level", "falkon"),
            ("level", "lp_krr"),
            ("level", "exact"),
            ("tree", "lp_krr"),
        ] {
            rows.push(row([("record", record.into()), ("method", method.into())]));
        }
        let plots = [styled.clone(), bare.clone(), other.clone()];
        let styles = Styles::new(&plots, &rows);
        for value in ["streamrak", "falkon", "lp_krr", "exact"] {
            let looks: Vec<Identity> = plots.iter().map(|p| styles.identity(p, value)).collect();
            assert!(looks.iter().all(|l| l == &looks[0]), "{value}: {looks:?}");
        }
        let streamrak = styles.identity(&bare, "streamrak");
        assert_eq!(streamrak.label, "StreaMRAK");
        assert_eq!(streamrak.color, [214, 39, 40]);
        assert_eq!(styles.identity(&bare, "falkon").marker, Marker::Square);
        // Unstyled values: raw label, colours and markers unlike every other value's.
        let all: Vec<Identity> = ["streamrak", "falkon", "lp_krr", "exact"]
            .iter()
            .map(|v| styles.identity(&other, v))
            .collect();
        assert_eq!(all[2].label, "lp_krr");
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a.color, b.color);
                assert_ne!(a.marker, b.marker);
            }
        }
        // Order: the plot's own styles, then the config's order, then the rest.
        let present: Vec<String> = ["exact", "lp_krr", "falkon", "streamrak"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            styles.order(&bare, &present),
            ["streamrak", "falkon", "exact", "lp_krr"]
        );
    }

    #[test]
    fn two_plots_styling_one_value_apart_are_refused_and_pairs_plots_keep_their_own() {
        let a = spec(
            "x = 'x'\ny = 'y'\nseries = 'method'\nx_label = 'x'\ny_label = 'y'\n\
             [[styles]]\nvalue = 'falkon'\nlabel = 'FALKON'\ncolor = [1, 2, 3]",
        );
        let mut b = a.clone();
        b.name = Some("b".into());
        assert!(check_consistent(&[a.clone(), b.clone()]).is_ok());
        b.styles[0].label = "falkon".into();
        let e = check_consistent(&[a.clone(), b.clone()]).unwrap_err();
        assert!(e.contains("plot #2") && e.contains("plot #1"), "{e}");
        b.styles[0].label = "FALKON".into();
        b.styles[0].marker = Some(Marker::Square);
        assert!(check_consistent(&[a.clone(), b.clone()]).is_ok());
        let mut c = b.clone();
        c.styles[0].marker = Some(Marker::Circle);
        assert!(check_consistent(&[a.clone(), b.clone(), c]).is_err());
        // A pairs plot labels its pairing: neither checked against nor lent to the others.
        let mut pairs = a.clone();
        pairs.kind = PlotKind::Pairs;
        pairs.styles[0].label = "one leaf: kernel vs forest".into();
        assert!(check_consistent(&[a.clone(), pairs.clone()]).is_ok());
        let rows = vec![row([("method", Value::from("falkon"))])];
        let styles = Styles::new(&[a.clone(), pairs.clone()], &rows);
        assert_eq!(styles.identity(&a, "falkon").label, "FALKON");
        assert_eq!(
            styles.identity(&pairs, "falkon").label,
            "one leaf: kernel vs forest"
        );
    }

    /// Every committed config: each value of a `series` column (styled in any plot, or not
    /// styled at all) gets one label and colour in all the config's plots that draw that
    /// column.
    #[test]
    fn every_committed_config_gives_a_value_one_label_and_colour_in_all_its_plots() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap();
        let configs = crate::config::discover(root).unwrap();
        assert!(configs.len() > 50);
        let mut compared = 0;
        for path in configs {
            let resolved = crate::config::load(root, &path, crate::config::FULL_PROFILE, &[])
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let plots: Vec<&PlotSpec> = resolved.config.plot.iter().filter(|p| shares(p)).collect();
            // One row per plot passing its filter, with a value no plot styles.
            let rows: Vec<Row> = plots
                .iter()
                .map(|p| {
                    let mut r: Row = p
                        .filter
                        .iter()
                        .map(|(k, v)| {
                            let value = match v.as_array().and_then(|a| a.first()).unwrap_or(v) {
                                toml::Value::Integer(i) => Value::Int(*i),
                                toml::Value::Float(f) => Value::Float(*f),
                                toml::Value::Boolean(b) => Value::Bool(*b),
                                toml::Value::String(s) => Value::Str(s.clone()),
                                other => Value::Str(other.to_string()),
                            };
                            (k.clone(), value)
                        })
                        .collect();
                    // (Unless the filter names the values: it passes the first.)
                    if !p.filter.contains_key(&p.series) {
                        r.insert(p.series.clone(), Value::from("zz unstyled"));
                    }
                    r
                })
                .collect();
            let styles = Styles::new(&resolved.config.plot, &rows);
            for (p, r) in plots.iter().zip(&rows) {
                assert!(
                    p.filter.iter().all(|(k, v)| r[k].matches(v)),
                    "{}: the test row must pass plot {:?}'s filter",
                    path.display(),
                    p.name
                );
            }
            for a in &plots {
                let values = a
                    .styles
                    .iter()
                    .map(|s| s.value.as_str())
                    .chain(["zz unstyled"]);
                for value in values {
                    let look = styles.identity(a, value);
                    for b in plots.iter().filter(|b| b.series == a.series) {
                        let other = styles.identity(b, value);
                        assert_eq!(
                            (&look.label, look.color),
                            (&other.label, other.color),
                            "{}: `{} = {value}` in plots {:?} and {:?}",
                            path.display(),
                            a.series,
                            a.name,
                            b.name
                        );
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 100);
    }
}
