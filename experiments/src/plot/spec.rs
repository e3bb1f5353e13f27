//! `[plot]` / `[[plot]]`: what a figure draws (rows, columns, series and their look), checked
//! against the columns a run will produce.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Marker shapes (the paper's matplotlib markers '^', 'v', 'o', 's', '.').
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Marker {
    TriangleUp,
    TriangleDown,
    Circle,
    Square,
    Dot,
}

impl Marker {
    /// Every shape, in the order strata of a split series and unstyled values take them.
    pub const ALL: [Marker; 5] = [
        Marker::Circle,
        Marker::TriangleUp,
        Marker::Square,
        Marker::TriangleDown,
        Marker::Dot,
    ];
}

/// How one series looks.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SeriesStyle {
    /// Value of the `series` column this style applies to.
    pub value: String,
    /// Legend text.
    pub label: String,
    /// RGB colour.
    pub color: [u8; 3],
    /// Without one, the value gets a shape that no other value of the config's plots uses
    /// where one is free (see `styles`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<Marker>,
    /// Draw the series as one horizontal line at the mean of its rows (e.g. an exact-kernel
    /// error level that does not depend on x).
    #[serde(default)]
    pub hline: bool,
    /// Draw the series as a line through its means (no markers, no error bars); without `line`,
    /// `step` or `hline` a series is drawn as markers with error bars joined by a thin line.
    #[serde(default)]
    pub line: bool,
    /// Draw the series as a post-step line (the value holds until the next x), as matplotlib's
    /// `drawstyle = "steps-post"`: right for curves that change at events.
    #[serde(default)]
    pub step: bool,
}

/// What a figure shows.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PlotKind {
    #[default]
    Lines,
    Histogram,
    Pairs,
    Boxes,
    Polygons,
}

/// A vertical marker line, e.g. the true lifetime λ0 of a synthetic experiment.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct XMark {
    pub value: f64,
    pub label: String,
}

/// One `[plot]` (or `[[plot]]`) section of a config: one figure.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Suffix of the figure file: `figures/<experiment>/<run>-<name>.png`; without a name the
    /// figure is `<run>.png` (at most one unnamed plot per config).
    pub name: Option<String>,
    #[serde(default)]
    pub kind: PlotKind,
    /// Only rows whose columns equal these values are drawn, e.g. `{ point = "sweep" }`.
    #[serde(default)]
    pub filter: toml::Table,
    /// Column on the x axis (`histogram`: the values binned).
    pub x: String,
    /// Column on the y axis (`lines`: mean ± sd over the rows of each (series, x); `pairs`:
    /// the value paired; unused by `histogram`).
    #[serde(default)]
    pub y: String,
    /// Column whose values name the series.
    pub series: String,
    /// `histogram`: `[low, high, count]`, `count` equal bins from low to high (as numpy's
    /// `linspace(low, high, count)` edges: count - 1 bins).
    pub bins: Option<[f64; 3]>,
    /// `pairs`: the column that identifies a pair (e.g. `leaf`).
    pub pair_by: Option<String>,
    /// `pairs`: the series on the x and y axes.
    pub pair: Option<[String; 2]>,
    pub x_label: String,
    pub y_label: String,
    pub title: Option<String>,
    #[serde(default)]
    pub log_x: bool,
    #[serde(default)]
    pub log_y: bool,
    pub x_range: Option<[f64; 2]>,
    /// Points outside the y range are not drawn (as matplotlib's `ylim`).
    pub y_range: Option<[f64; 2]>,
    /// Figure size in inches, as in the paper (rendered at 160 pixels per inch).
    #[serde(default = "default_size")]
    pub size_inches: [f64; 2],
    /// Dotted vertical lines with a legend entry.
    #[serde(default)]
    pub x_marks: Vec<XMark>,
    #[serde(default)]
    pub styles: Vec<SeriesStyle>,
}

fn default_size() -> [f64; 2] {
    [5.0, 3.0]
}

impl PlotSpec {
    /// Checks the spec against the columns the run will produce.
    pub fn validate(&self, columns: &[String]) -> Result<(), String> {
        let mut used = vec![&self.x, &self.series];
        used.extend(self.filter.keys());
        match self.kind {
            PlotKind::Lines => used.push(&self.y),
            PlotKind::Histogram => match self.bins {
                Some([lo, hi, n]) if lo < hi && (2.0..=10_000.0).contains(&n) && n.fract() == 0.0 => {}
                _ => {
                    return Err(
                        "a histogram needs bins = [low, high, count] with low < high and an integer count in 2..=10000".into(),
                    )
                }
            },
            PlotKind::Boxes | PlotKind::Polygons => used.push(&self.y),
            PlotKind::Pairs => {
                let (Some(key), Some(_)) = (&self.pair_by, &self.pair) else {
                    return Err("a pairs plot needs pair_by (a column) and pair = [x series, y series]".into());
                };
                used.push(key);
                used.push(&self.y);
            }
        }
        if let Some(name) = &self.name {
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(format!(
                    "plot.name = {name:?}: use letters, digits, '-' and '_' (it names a file)"
                ));
            }
        }
        for c in used {
            if !columns.iter().any(|k| k == c) {
                return Err(format!(
                    "plot refers to unknown column `{c}`; columns: {}",
                    columns.join(", ")
                ));
            }
        }
        for (axis, range, log) in [
            ("x", self.x_range, self.log_x),
            ("y", self.y_range, self.log_y),
        ] {
            if let Some([lo, hi]) = range {
                if lo >= hi || lo.is_nan() || hi.is_nan() || (log && lo <= 0.0) {
                    return Err(format!(
                        "plot.{axis}_range = [{lo}, {hi}]: need lo < hi (and lo > 0 on a log axis)"
                    ));
                }
            }
        }
        if !(self.size_inches[0] > 0.5
            && self.size_inches[1] > 0.5
            && self.size_inches[0] < 40.0
            && self.size_inches[1] < 40.0)
        {
            return Err("plot.size_inches: need two sizes between 0.5 and 40".into());
        }
        Ok(())
    }
}

impl PlotSpec {
    /// The figure's file stem, from the run's stem `figures/<experiment>/<run>`.
    pub fn stem(&self, run_stem: &Path) -> PathBuf {
        match &self.name {
            None => run_stem.to_path_buf(),
            Some(name) => {
                let run = run_stem
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                run_stem.with_file_name(format!("{run}-{name}"))
            }
        }
    }
}
