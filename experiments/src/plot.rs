//! Figures rendered from stored result tables only (never by rerunning), as PNG and SVG.
//!
//! The `[plot]` section of a config says which columns to draw, how to group rows into series
//! and how each series looks; every (series, x) point shows the mean over repetitions with an
//! error bar of ± one standard deviation (ddof 0, as the authors' scripts).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{anyhow, Context, Result};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use crate::table::Row;

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
    #[serde(default = "default_marker")]
    pub marker: Marker,
    /// Draw the series as one horizontal line at the mean of its rows (e.g. an exact-kernel
    /// error level that does not depend on x).
    #[serde(default)]
    pub hline: bool,
    /// Draw the series as a line through its means (no markers, no error bars).
    #[serde(default)]
    pub line: bool,
}

fn default_marker() -> Marker {
    Marker::Circle
}

/// The `[plot]` section of a config.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Column on the x axis.
    pub x: String,
    /// Column on the y axis (mean ± sd over the rows of each (series, x)).
    pub y: String,
    /// Column whose values name the series.
    pub series: String,
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
    #[serde(default)]
    pub styles: Vec<SeriesStyle>,
}

fn default_size() -> [f64; 2] {
    [5.0, 3.0]
}

const DPI: f64 = 160.0;
const PALETTE: [[u8; 3]; 6] = [
    [31, 119, 180],
    [214, 39, 40],
    [44, 160, 44],
    [255, 127, 14],
    [148, 103, 189],
    [140, 86, 75],
];

impl PlotSpec {
    /// Checks the spec against the columns the run will produce.
    pub fn validate(&self, columns: &[String]) -> Result<(), String> {
        for c in [&self.x, &self.y, &self.series] {
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

/// One series' aggregated points: (x, mean, sd).
struct Series {
    label: String,
    color: RGBColor,
    marker: Marker,
    hline: bool,
    line: bool,
    points: Vec<(f64, f64, f64)>,
}

fn aggregate(spec: &PlotSpec, rows: &[Row]) -> Vec<Series> {
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
    let mut order: Vec<String> = spec
        .styles
        .iter()
        .map(|s| s.value.clone())
        .filter(|v| groups.contains_key(v))
        .collect();
    order.extend(
        groups
            .keys()
            .filter(|k| !order.contains(k))
            .cloned()
            .collect::<Vec<_>>(),
    );
    order
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            let style = spec.styles.iter().find(|s| s.value == value);
            let [r, g, b] = style.map_or(PALETTE[i % PALETTE.len()], |s| s.color);
            let mut points: Vec<(f64, f64, f64)> = groups[&value]
                .values()
                .map(|(x, ys)| {
                    let n = ys.len() as f64;
                    let mean = ys.iter().sum::<f64>() / n;
                    let sd = (ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / n).sqrt();
                    (*x, mean, sd)
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                label: style.map_or(value.clone(), |s| s.label.clone()),
                color: RGBColor(r, g, b),
                marker: style.map_or(Marker::Circle, |s| s.marker),
                hline: style.is_some_and(|s| s.hline),
                line: style.is_some_and(|s| s.line),
                points,
            }
        })
        .collect()
}

fn register_fonts() {
    static FONTS: Once = Once::new();
    FONTS.call_once(|| {
        // The embedded DejaVu Sans makes figures identical on every machine (no system fonts).
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}

/// Renders `rows` to `<stem>.png` and `<stem>.svg`; returns both paths.
pub fn render(spec: &PlotSpec, title: &str, rows: &[Row], stem: &Path) -> Result<Vec<PathBuf>> {
    register_fonts();
    let series = aggregate(spec, rows);
    if series
        .iter()
        .all(|s| s.hline || s.points.iter().all(|p| !p.0.is_finite()))
    {
        return Err(anyhow!(
            "no rows with numeric `{}` and `{}` to plot",
            spec.x,
            spec.y
        ));
    }
    let range = |values: Vec<f64>, given: Option<[f64; 2]>, log: bool| -> (f64, f64) {
        if let Some([lo, hi]) = given {
            return (lo, hi);
        }
        let values: Vec<f64> = values
            .into_iter()
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if log {
            (lo / 1.5, hi * 1.5)
        } else {
            let pad = ((hi - lo) * 0.05).max(1e-12);
            (lo - pad, hi + pad)
        }
    };
    let xs = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let ys = series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| [p.1 - p.2, p.1 + p.2]))
        .collect();
    let (x0, x1) = range(xs, spec.x_range, spec.log_x);
    let (y0, y1) = range(ys, spec.y_range, spec.log_y);
    let size = (
        (spec.size_inches[0] * DPI).round() as u32,
        (spec.size_inches[1] * DPI).round() as u32,
    );
    let dir = stem.parent().context("figure path has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    for ext in ["png", "svg"] {
        let final_path = stem.with_extension(ext);
        let tmp = dir.join(format!(
            ".{}.tmp-{}.{ext}",
            stem.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
            std::process::id()
        ));
        let result = if ext == "png" {
            let area = BitMapBackend::new(&tmp, size).into_drawing_area();
            draw_any(area, spec, title, &series, (x0, x1), (y0, y1))
        } else {
            let area = SVGBackend::new(&tmp, size).into_drawing_area();
            draw_any(area, spec, title, &series, (x0, x1), (y0, y1))
        };
        if let Err(e) = result.and_then(|_| Ok(std::fs::rename(&tmp, &final_path)?)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.context(format!("cannot render {}", final_path.display())));
        }
        written.push(final_path);
    }
    Ok(written)
}

fn draw_any<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    spec: &PlotSpec,
    title: &str,
    series: &[Series],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    match (spec.log_x, spec.log_y) {
        (false, false) => draw(area, spec, title, series, x0..x1, y0..y1, (y0, y1)),
        (true, false) => draw(
            area,
            spec,
            title,
            series,
            (x0..x1).log_scale(),
            y0..y1,
            (y0, y1),
        ),
        (false, true) => draw(
            area,
            spec,
            title,
            series,
            x0..x1,
            (y0..y1).log_scale(),
            (y0, y1),
        ),
        (true, true) => draw(
            area,
            spec,
            title,
            series,
            (x0..x1).log_scale(),
            (y0..y1).log_scale(),
            (y0, y1),
        ),
    }
}

/// Tick text: integers without a decimal point, small or large values in scientific notation.
fn tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e4 || v.abs() < 1e-3 {
        format!("{v:.0e}")
    } else if (v - v.round()).abs() < 1e-9 * v.abs().max(1.0) {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_string()
    }
}

fn plot_err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plotting failed: {e:?}")
}

fn draw<DB, X, Y>(
    area: DrawingArea<DB, Shift>,
    spec: &PlotSpec,
    title: &str,
    series: &[Series],
    x_range: X,
    y_range: Y,
    (y0, y1): (f64, f64),
) -> Result<()>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    area.fill(&WHITE).map_err(plot_err)?;
    let caption = spec.title.clone().unwrap_or_else(|| title.to_string());
    let mut chart = ChartBuilder::on(&area)
        .caption(caption, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x_range, y_range)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc(spec.x_label.as_str())
        .y_desc(spec.y_label.as_str())
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(plot_err)?;
    let (x_lo, x_hi) = series
        .iter()
        .filter(|s| !s.hline)
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    for s in series.iter().filter(|s| s.hline && !s.points.is_empty()) {
        let color = s.color;
        let level = s.points.iter().map(|p| p.1).sum::<f64>() / s.points.len() as f64;
        chart
            .draw_series(LineSeries::new(
                [(x_lo, level), (x_hi, level)],
                color.stroke_width(2),
            ))
            .map_err(plot_err)?
            .label(s.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new([(x - 8, y), (x + 8, y)], color.stroke_width(2))
            });
    }
    for s in series.iter().filter(|s| !s.hline) {
        let color = s.color;
        let visible: Vec<(f64, f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1 >= y0 && p.1 <= y1)
            .collect();
        if s.line {
            chart
                .draw_series(LineSeries::new(
                    visible.iter().map(|&(x, m, _)| (x, m)),
                    color.stroke_width(2),
                ))
                .map_err(plot_err)?
                .label(s.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new([(x - 8, y), (x + 8, y)], color.stroke_width(2))
                });
            continue;
        }
        chart
            .draw_series(visible.iter().map(|&(x, m, sd)| {
                ErrorBar::new_vertical(
                    x,
                    (m - sd).max(y0),
                    m,
                    (m + sd).min(y1),
                    color.stroke_width(1),
                    5,
                )
            }))
            .map_err(plot_err)?;
        let outline = marker_outline(s.marker);
        let legend_outline = outline.clone();
        chart
            .draw_series(visible.iter().map(|&(x, m, _)| {
                EmptyElement::at((x, m)) + Polygon::new(outline.clone(), color.filled())
            }))
            .map_err(plot_err)?
            .label(s.label.as_str())
            .legend(move |(x, y)| {
                Polygon::new(
                    legend_outline
                        .iter()
                        .map(|(dx, dy)| (x + dx, y + dy))
                        .collect::<Vec<_>>(),
                    color.filled(),
                )
            });
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 12))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(plot_err)?;
    area.present().map_err(plot_err)?;
    Ok(())
}

/// Pixel offsets of a marker's outline (a circle is a 12-gon), so its shape does not depend on
/// the axes and one element type serves every marker.
fn marker_outline(marker: Marker) -> Vec<(i32, i32)> {
    let polygon = |r: f64, n: usize| -> Vec<(i32, i32)> {
        (0..n)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / n as f64;
                ((r * a.cos()).round() as i32, (r * a.sin()).round() as i32)
            })
            .collect()
    };
    match marker {
        Marker::Circle => polygon(4.0, 12),
        Marker::Dot => polygon(2.0, 8),
        Marker::Square => vec![(-4, -4), (4, -4), (4, 4), (-4, 4)],
        Marker::TriangleUp => vec![(0, -5), (-5, 4), (5, 4)],
        Marker::TriangleDown => vec![(0, 5), (-5, -4), (5, -4)],
    }
}
