//! Figures rendered from stored result tables only (never by rerunning), as PNG and SVG.
//!
//! A config's `[plot]` (or several `[[plot]]`, one figure each) says which rows and columns to
//! draw, how to group rows into series and how each series looks. Kinds:
//! * `lines` (default): every (series, x) point shows the mean over repetitions with an error
//!   bar of ± one standard deviation (ddof 0, as the authors' scripts), the points of a series
//!   joined by a thin line in x order; or a line, a step line or a horizontal level;
//! * `histogram`: densities of the `x` column per series over fixed bins (translucent bars);
//! * `pairs`: a scatter of the `y` column of two series against each other, rows paired by a
//!   key column (e.g. the weight of one leaf in two models), with the diagonal y = x;
//! * `boxes`: a box plot of the `y` column per series (one box per value of the `series`
//!   column, in style order, labelled below the axis with its number of values): median,
//!   quartiles (linear interpolation), whiskers to the furthest value within 1.5 IQR, values
//!   beyond as dots;
//! * `polygons`: closed polygons with vertices (`x`, `y`) in row order, one per value of the
//!   `series` column (e.g. the cells of a tessellation), filled in cycling colours.
//!
//! A series value looks the same (label, colour, marker) in every figure of one config
//! ([`styles`]); the legend stands right of the plotting area and never covers a point
//! ([`legend`]); the title of a figure of any run other than the full one names the run.

mod legend;
mod series;
pub mod spec;
mod styles;

use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{anyhow, Context, Result};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::table::Row;
use legend::{marker_element, Entry, Glyph, Legend};
use series::{box_stats, build_series, Look, Series};
pub use spec::{Marker, PlotKind, PlotSpec, SeriesStyle, XMark};
pub use styles::check_consistent;
use styles::Styles;

/// Pixels per inch of the PNG figures.
const DPI: f64 = 160.0;

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

/// Renders every plot of a config from the rows of one run to `<stem>.png` and `<stem>.svg`
/// (`stem` from [`PlotSpec::stem`] of the run's stem); returns the paths written. `figure`: the
/// experiment's figure, the title of plots without their own. `run`: the run to name in the
/// titles (e.g. `quick`), `None` for the reference (full) run, so a quick figure is never taken
/// for one.
pub fn render_all(
    plots: &[PlotSpec],
    figure: &str,
    run: Option<&str>,
    rows: &[Row],
    parameters: &[String],
    run_stem: &Path,
) -> Result<Vec<PathBuf>> {
    let styles = Styles::new(plots, rows);
    let mut written = Vec::new();
    for spec in plots {
        let title = caption(spec, figure, run);
        written.extend(render(spec, &title, rows, parameters, &styles, run_stem)?);
    }
    Ok(written)
}

/// A figure's title: the plot's own or the experiment's figure, naming the run if given.
fn caption(spec: &PlotSpec, figure: &str, run: Option<&str>) -> String {
    let title = spec.title.as_deref().unwrap_or(figure);
    match run {
        None => title.to_string(),
        Some(run) => format!("{title} ({run} run)"),
    }
}

/// Renders one plot.
fn render(
    spec: &PlotSpec,
    title: &str,
    rows: &[Row],
    parameters: &[String],
    styles: &Styles,
    run_stem: &Path,
) -> Result<Vec<PathBuf>> {
    let stem = &spec.stem(run_stem);
    if crate::stats::selected(rows, &spec.filter).next().is_none() {
        // E.g. a figure of a grid point that this profile does not run.
        eprintln!(
            "note: figure {} skipped: no rows match its filter {}",
            stem.file_name().unwrap_or_default().to_string_lossy(),
            spec.filter
                .to_string()
                .replace('\n', ", ")
                .trim_end_matches(", ")
        );
        return Ok(Vec::new());
    }
    let name = stem.file_name().unwrap_or_default().to_string_lossy();
    let figure = Figure::new(spec, rows, parameters, styles, &name)?;
    let dir = stem.parent().context("figure path has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Figures half-written by killed processes.
    crate::files::remove_stale_temporaries(dir);
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
            let area = BitMapBackend::new(&tmp, figure.size).into_drawing_area();
            draw_any(area, spec, title, &figure)
        } else {
            let area = SVGBackend::new(&tmp, figure.size).into_drawing_area();
            draw_any(area, spec, title, &figure)
        }
        .and_then(|drawn| drawn.legend_clear());
        if let Err(e) = result.and_then(|_| Ok(std::fs::rename(&tmp, &final_path)?)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.context(format!("cannot render {}", final_path.display())));
        }
        written.push(final_path);
    }
    Ok(written)
}

/// One figure laid out: its series, axis ranges, legend and size in pixels.
struct Figure {
    series: Vec<Series>,
    x: (f64, f64),
    y: (f64, f64),
    legend: Option<Legend>,
    /// Width and height: the config's size, widened by the legend's margin.
    size: (u32, u32),
}

/// Where a figure put things, in pixels of its backend.
#[derive(Debug)]
struct Drawn {
    /// The plotting area: [left, top, right, bottom].
    plot: [i32; 4],
    /// The legend's box, if any.
    legend: Option<[i32; 4]>,
    /// The centre of every marker and every vertex of a line drawn.
    points: Vec<(i32, i32)>,
}

impl Drawn {
    /// Fails if the legend box overlaps the plotting area or covers a drawn point.
    fn legend_clear(&self) -> Result<()> {
        let Some([l, t, r, b]) = self.legend else {
            return Ok(());
        };
        let [x0, y0, x1, y1] = self.plot;
        let covered = self
            .points
            .iter()
            .filter(|&&(x, y)| x >= l && x <= r && y >= t && y <= b)
            .count();
        if covered > 0 || (l <= x1 && r >= x0 && t <= y1 && b >= y0) {
            return Err(anyhow!(
                "the legend {:?} overlaps the plotting area {:?} ({covered} point(s) under it)",
                [l, t, r, b],
                self.plot
            ));
        }
        Ok(())
    }
}

impl Figure {
    /// Lays out the figure of `spec` (`name`: the figure's file name, for notes).
    fn new(
        spec: &PlotSpec,
        rows: &[Row],
        parameters: &[String],
        styles: &Styles,
        name: &str,
    ) -> Result<Figure> {
        register_fonts();
        let series = build_series(spec, rows, parameters, styles);
        if series
            .iter()
            .all(|s| s.look == Look::HLine || s.points.iter().all(|p| !p.0.is_finite()))
        {
            return Err(anyhow!(
                "no rows with numeric `{}`{} to plot (filter {})",
                spec.x,
                if spec.kind == PlotKind::Histogram {
                    String::new()
                } else {
                    format!(" and `{}`", spec.y)
                },
                spec.filter
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
            .flat_map(|s| match s.look {
                Look::Bars => vec![],
                _ => s.points.iter().map(|p| p.0).collect(),
            })
            .chain(
                series
                    .iter()
                    .filter(|s| s.look == Look::Bars)
                    .flat_map(|s| s.points.iter().flat_map(|p| [p.0, p.1]).collect::<Vec<_>>()),
            )
            .collect();
        let ys = series
            .iter()
            .flat_map(|s| match s.look {
                Look::Bars => s.points.iter().flat_map(|p| [0.0, p.2]).collect::<Vec<_>>(),
                _ => s
                    .points
                    .iter()
                    .flat_map(|p| [p.1 - p.2, p.1 + p.2])
                    .collect(),
            })
            .collect();
        let x = match spec.kind {
            PlotKind::Boxes if spec.x_range.is_none() => (0.4, series.len() as f64 + 0.6),
            PlotKind::Boxes => spec.x_range.map_or((0.0, 1.0), |[a, b]| (a, b)),
            _ => {
                let points: Vec<f64> = series
                    .iter()
                    .filter(|s| !matches!(s.look, Look::Bars | Look::HLine))
                    .flat_map(|s| s.points.iter().map(|p| p.0))
                    .collect();
                let r = range(xs, spec.x_range, spec.log_x);
                grown(r, &points, spec.log_x, "x_range", name)
            }
        };
        let points: Vec<f64> = series
            .iter()
            .flat_map(|s| match s.look {
                Look::Bars => s.points.iter().map(|p| p.2).collect::<Vec<_>>(),
                _ => s.points.iter().map(|p| p.1).collect(),
            })
            .collect();
        let y = grown(
            range(ys, spec.y_range, spec.log_y),
            &points,
            spec.log_y,
            "y_range",
            name,
        );
        let (width, height) = (
            (spec.size_inches[0] * DPI).round() as u32,
            (spec.size_inches[1] * DPI).round() as u32,
        );
        let gray = RGBColor(90, 90, 90);
        let entries = spec
            .x_marks
            .iter()
            .map(|m| Entry {
                label: m.label.clone(),
                color: gray,
                glyph: Glyph::Dashed,
            })
            .chain(series.iter().filter_map(|s| {
                let glyph = match s.look {
                    Look::HLine | Look::Line | Look::Step => Glyph::Line,
                    Look::Markers(m) => Glyph::JoinedMarker(m),
                    Look::Dots => Glyph::Marker(Marker::Dot),
                    Look::Bars => Glyph::Bar,
                    // Boxes are named on the x axis; polygons are cells, not series.
                    Look::Box | Look::Polygon => return None,
                };
                Some(Entry {
                    label: s.label.clone(),
                    color: s.color,
                    glyph,
                })
            }))
            .collect();
        // The plotting area's height: the figure's less the title and the axis labels.
        let legend = Legend::new(entries, height.saturating_sub(90));
        let size = (width + legend.as_ref().map_or(0, Legend::margin), height);
        Ok(Figure {
            series,
            x,
            y,
            legend,
            size,
        })
    }
}

/// A fixed axis range grown to hold every plotted point (a mean, a bar, a box value), with a
/// log line naming the points that fell outside it: no point is dropped silently.
fn grown(range: (f64, f64), points: &[f64], log: bool, axis: &str, figure: &str) -> (f64, f64) {
    let (lo, hi) = range;
    let finite = points
        .iter()
        .copied()
        .filter(|v| v.is_finite() && (!log || *v > 0.0));
    let outside: Vec<f64> = finite.filter(|v| *v < lo || *v > hi).collect();
    if outside.is_empty() {
        return range;
    }
    let min = outside.iter().copied().fold(lo, f64::min);
    let max = outside.iter().copied().fold(hi, f64::max);
    let (new_lo, new_hi) = if log {
        (
            if min < lo { min / 1.2 } else { lo },
            if max > hi { max * 1.2 } else { hi },
        )
    } else {
        let pad = 0.03 * (max - min);
        (
            if min < lo { min - pad } else { lo },
            if max > hi { max + pad } else { hi },
        )
    };
    eprintln!(
        "note: figure {figure}: {} point(s) outside the config's {axis} [{}, {}] (from {} to {}): \
         the axis is grown to [{}, {}] to show them",
        outside.len(),
        tick(lo),
        tick(hi),
        tick(outside.iter().copied().fold(f64::INFINITY, f64::min)),
        tick(outside.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
        tick(new_lo),
        tick(new_hi)
    );
    (new_lo, new_hi)
}

fn draw_any<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    spec: &PlotSpec,
    title: &str,
    figure: &Figure,
) -> Result<Drawn>
where
    DB::ErrorType: 'static,
{
    let ((x0, x1), (y0, y1)) = (figure.x, figure.y);
    match (spec.log_x, spec.log_y) {
        (false, false) => draw(area, spec, title, figure, x0..x1, y0..y1),
        (true, false) => draw(area, spec, title, figure, (x0..x1).log_scale(), y0..y1),
        (false, true) => draw(area, spec, title, figure, x0..x1, (y0..y1).log_scale()),
        (true, true) => draw(
            area,
            spec,
            title,
            figure,
            (x0..x1).log_scale(),
            (y0..y1).log_scale(),
        ),
    }
}

/// Tick text: integers without a decimal point, small or large values in scientific notation.
fn tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e4 || v.abs() < 1e-3 {
        // The fewest digits (up to 3) that give the value back: 1e5, 1.2e5, 1.25e5.
        (0..3)
            .map(|p| format!("{v:.p$e}"))
            .find(|s| {
                s.parse::<f64>()
                    .is_ok_and(|back| (back - v).abs() <= 1e-9 * v.abs())
            })
            .unwrap_or_else(|| format!("{v:.2e}"))
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

/// Space between the plotting area and the legend; it also holds half of the last x tick label,
/// which is centred on the plot's right edge.
const RIGHT_MARGIN: u32 = 30;

fn draw<DB, X, Y>(
    area: DrawingArea<DB, Shift>,
    spec: &PlotSpec,
    title: &str,
    figure: &Figure,
    x_range: X,
    y_range: Y,
) -> Result<Drawn>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let series = &figure.series;
    let (y0, y1) = figure.y;
    area.fill(&WHITE).map_err(plot_err)?;
    let box_labels: Vec<String> = series
        .iter()
        .filter(|s| s.look == Look::Box)
        .map(|s| s.label.clone())
        .collect();
    let x_tick = |v: &f64| -> String {
        if box_labels.is_empty() {
            return tick(*v);
        }
        let k = v.round();
        if (v - k).abs() < 1e-6 && k >= 1.0 && (k as usize) <= box_labels.len() {
            box_labels[k as usize - 1].clone()
        } else {
            String::new()
        }
    };
    let mut chart = ChartBuilder::on(&area)
        .caption(title, ("sans-serif", 16))
        .margin(12)
        .margin_right(RIGHT_MARGIN + figure.legend.as_ref().map_or(0, Legend::margin))
        // Boxes: a second line under the tick labels for each box's count.
        .x_label_area_size(if box_labels.is_empty() { 40 } else { 58 })
        .y_label_area_size(56)
        .build_cartesian_2d(x_range, y_range)
        .map_err(plot_err)?;
    let mut mesh = chart.configure_mesh();
    if !box_labels.is_empty() {
        mesh.x_labels(4 * box_labels.len() + 1);
    }
    mesh.x_desc(spec.x_label.as_str())
        .y_desc(spec.y_label.as_str())
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .x_label_formatter(&x_tick)
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(plot_err)?;
    let (pixels_x, pixels_y) = chart.plotting_area().get_pixel_range();
    let mut drawn = Drawn {
        plot: [pixels_x.start, pixels_y.start, pixels_x.end, pixels_y.end],
        legend: None,
        points: Vec::new(),
    };
    let (x_lo, x_hi) = series
        .iter()
        .filter(|s| s.look != Look::HLine)
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    let gray = RGBColor(90, 90, 90);
    for mark in &spec.x_marks {
        chart
            .draw_series(DashedLineSeries::new(
                [(mark.value, y0), (mark.value, y1)],
                3,
                4,
                gray.stroke_width(1),
            ))
            .map_err(plot_err)?;
    }
    if spec.kind == PlotKind::Pairs {
        // The diagonal y = x over the visible range.
        let (lo, hi) = (x_lo.max(y0), x_hi.min(y1));
        if lo < hi {
            chart
                .draw_series(DashedLineSeries::new(
                    [(lo, lo), (hi, hi)],
                    6,
                    4,
                    gray.stroke_width(1),
                ))
                .map_err(plot_err)?;
        }
    }
    for s in series {
        let color = s.color;
        match s.look {
            Look::HLine => {
                if s.points.is_empty() {
                    continue;
                }
                let level = s.points.iter().map(|p| p.1).sum::<f64>() / s.points.len() as f64;
                let path = [(x_lo, level), (x_hi, level)];
                drawn
                    .points
                    .extend(path.iter().map(|p| chart.backend_coord(p)));
                chart
                    .draw_series(LineSeries::new(path, color.stroke_width(2)))
                    .map_err(plot_err)?;
            }
            Look::Line | Look::Step => {
                let visible: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .filter(|p| p.0.is_finite() && p.1.is_finite())
                    .map(|p| (p.0, p.1.clamp(y0, y1)))
                    .collect();
                drawn
                    .points
                    .extend(visible.iter().map(|p| chart.backend_coord(p)));
                let path: Vec<(f64, f64)> = if s.look == Look::Step {
                    visible
                        .windows(2)
                        .flat_map(|w| [w[0], (w[1].0, w[0].1)])
                        .chain(visible.last().copied())
                        .collect()
                } else {
                    visible
                };
                chart
                    .draw_series(LineSeries::new(path, color.stroke_width(2)))
                    .map_err(plot_err)?;
            }
            Look::Box => {
                let mut values: Vec<f64> = s
                    .points
                    .iter()
                    .map(|p| p.1)
                    .filter(|v| v.is_finite())
                    .collect();
                if values.is_empty() {
                    continue;
                }
                values.sort_by(f64::total_cmp);
                let x = s.points[0].0;
                let (lo, q1, med, q3, hi) = box_stats(&values);
                let (l, r) = (x - 0.3, x + 0.3);
                let clamp = |v: f64| v.clamp(y0, y1);
                chart
                    .draw_series([
                        Rectangle::new([(l, clamp(q1)), (r, clamp(q3))], color.mix(0.35).filled()),
                        Rectangle::new([(l, clamp(q1)), (r, clamp(q3))], color.stroke_width(1)),
                    ])
                    .map_err(plot_err)?;
                let black = BLACK.stroke_width(2);
                chart
                    .draw_series([
                        PathElement::new([(l, clamp(med)), (r, clamp(med))], black),
                        PathElement::new([(x, clamp(q3)), (x, clamp(hi))], color.stroke_width(1)),
                        PathElement::new([(x, clamp(q1)), (x, clamp(lo))], color.stroke_width(1)),
                        PathElement::new(
                            [(x - 0.12, clamp(hi)), (x + 0.12, clamp(hi))],
                            color.stroke_width(1),
                        ),
                        PathElement::new(
                            [(x - 0.12, clamp(lo)), (x + 0.12, clamp(lo))],
                            color.stroke_width(1),
                        ),
                    ])
                    .map_err(plot_err)?;
                let outline = marker_outline(Marker::Dot);
                chart
                    .draw_series(
                        values
                            .iter()
                            .filter(|&&v| (v < lo || v > hi) && v >= y0 && v <= y1)
                            .map(|&v| {
                                EmptyElement::at((x, v))
                                    + Polygon::new(outline.clone(), color.filled())
                            }),
                    )
                    .map_err(plot_err)?;
                // The box's count on a second line under its tick label.
                let (px, _) = chart.backend_coord(&(x, y0));
                area.draw(&Text::new(
                    format!("n = {}", values.len()),
                    (px, pixels_y.end + 24),
                    ("sans-serif", 11)
                        .into_font()
                        .color(&BLACK.mix(0.75))
                        .pos(Pos::new(HPos::Center, VPos::Top)),
                ))
                .map_err(plot_err)?;
            }
            Look::Polygon => {
                let vertices: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .filter(|p| p.0.is_finite() && p.1.is_finite())
                    .map(|p| (p.0, p.1))
                    .collect();
                if vertices.len() < 3 {
                    continue;
                }
                let mut closed = vertices.clone();
                closed.push(vertices[0]);
                chart
                    .draw_series([Polygon::new(vertices, color.mix(0.3).filled())])
                    .map_err(plot_err)?;
                chart
                    .draw_series([PathElement::new(closed, BLACK.stroke_width(1))])
                    .map_err(plot_err)?;
            }
            Look::Bars => {
                let fill = color.mix(0.5).filled();
                chart
                    .draw_series(
                        s.points.iter().filter(|p| p.2 > 0.0).map(|&(l, r, h)| {
                            Rectangle::new([(l, y0.max(0.0)), (r, h.min(y1))], fill)
                        }),
                    )
                    .map_err(plot_err)?;
            }
            Look::Dots | Look::Markers(_) => {
                let visible: Vec<(f64, f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| p.0.is_finite() && p.1 >= y0 && p.1 <= y1)
                    .collect();
                drawn.points.extend(
                    visible
                        .iter()
                        .map(|&(x, m, _)| chart.backend_coord(&(x, m))),
                );
                let Look::Markers(marker) = s.look else {
                    let outline = marker_outline(Marker::Dot);
                    chart
                        .draw_series(visible.iter().map(|&(x, m, _)| {
                            EmptyElement::at((x, m)) + Polygon::new(outline.clone(), color.filled())
                        }))
                        .map_err(plot_err)?;
                    continue;
                };
                // Points in x order (the x axis is numeric), joined so that a series hidden
                // under another's markers still shows where the two part.
                chart
                    .draw_series(LineSeries::new(
                        visible.iter().map(|&(x, m, _)| (x, m)),
                        color.mix(0.8).stroke_width(1),
                    ))
                    .map_err(plot_err)?;
                chart
                    .draw_series(visible.iter().filter(|p| p.2 > 0.0).map(|&(x, m, sd)| {
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
                chart
                    .draw_series(
                        visible
                            .iter()
                            .map(|&(x, m, _)| marker_element((x, m), marker, color)),
                    )
                    .map_err(plot_err)?;
            }
        }
    }
    if let Some(legend) = &figure.legend {
        let corner = (pixels_x.end + RIGHT_MARGIN as i32, pixels_y.start);
        drawn.legend = Some(legend.draw(&area, corner)?);
    }
    area.present().map_err(plot_err)?;
    Ok(drawn)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{row, Value};

    #[test]
    fn box_stats_are_tukeys_with_linear_quartiles() {
        // numpy.percentile([1..9, 100], [25, 50, 75]) = 3.25, 5.5, 7.75; 100 lies beyond
        // q3 + 1.5 IQR = 14.5, so the upper whisker stops at 9.
        let v: Vec<f64> = (1..=9).map(f64::from).chain([100.0]).collect();
        assert_eq!(box_stats(&v), (1.0, 3.25, 5.5, 7.75, 9.0));
        assert_eq!(box_stats(&[2.0]), (2.0, 2.0, 2.0, 2.0, 2.0));
    }

    fn spec(text: &str) -> PlotSpec {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_swept_parameter_splits_series_and_a_fixed_range_grows_to_show_every_point() {
        // Two lifetimes per (method, M): their errors must not be averaged into one series.
        let mut rows = Vec::new();
        for lifetime in [3.0, 30.0] {
            for m in [1i64, 2] {
                for rep in 0..2usize {
                    rows.push(row([
                        ("method", "mondrian".into()),
                        ("lifetime", Value::Float(lifetime)),
                        ("m", m.into()),
                        ("rep", rep.into()),
                        ("error", Value::Float(lifetime / 10.0 + rep as f64 * 0.01)),
                    ]));
                }
            }
        }
        let lines = spec(
            "x = 'm'\ny = 'error'\nseries = 'method'\nx_label = 'M'\ny_label = 'e'\ny_range = [0.0, 1.2]\n[[styles]]\nvalue = 'mondrian'\nlabel = 'Mondrian'\ncolor = [10, 20, 30]",
        );
        let parameters: Vec<String> = ["lifetime", "method", "m"].map(String::from).to_vec();
        let styles = Styles::new(std::slice::from_ref(&lines), &rows);
        let series = build_series(&lines, &rows, &parameters, &styles);
        let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            ["Mondrian (lifetime = 3)", "Mondrian (lifetime = 30)"]
        );
        assert!((series[0].points[0].1 - 0.305).abs() < 1e-12);
        assert!((series[1].points[0].1 - 3.005).abs() < 1e-12);
        assert_ne!(series[0].color, series[1].color);
        // Without the parameter list the two would pool (what the figure did before).
        assert_eq!(build_series(&lines, &rows, &[], &styles).len(), 1);
        // The fixed y_range [0, 1.2] grows to hold 3.005 (and says so on stderr).
        let (lo, hi) = grown((0.0, 1.2), &[0.305, 3.005], false, "y_range", "t");
        assert_eq!(lo, 0.0);
        assert!(hi >= 3.005);
        assert_eq!(
            grown((0.0, 1.2), &[0.3, 1.1], false, "y_range", "t"),
            (0.0, 1.2)
        );
        let (lo, _) = grown((1.0, 10.0), &[0.5, 2.0], true, "x_range", "t");
        assert!(lo > 0.0 && lo < 0.5);
    }

    #[test]
    fn boxes_and_polygons_render_from_rows() {
        let mut rows = Vec::new();
        for (rep, (a, b)) in [(50.0, 60.0), (55.0, 70.0), (52.0, 65.0)]
            .iter()
            .enumerate()
        {
            for (m, v) in [("a", *a), ("b", *b)] {
                rows.push(row([
                    ("method", m.into()),
                    ("rep", rep.into()),
                    ("acc", Value::Float(v)),
                ]));
            }
        }
        let boxes = spec("kind = 'boxes'\nx = 'method'\ny = 'acc'\nseries = 'method'\nx_label = 'm'\ny_label = 'acc'\n[[styles]]\nvalue = 'b'\nlabel = 'B'\ncolor = [1, 2, 3]");
        let columns: Vec<String> = ["method", "rep", "acc"].map(String::from).to_vec();
        boxes.validate(&columns).unwrap();
        let styles = Styles::new(std::slice::from_ref(&boxes), &rows);
        let series = build_series(&boxes, &rows, &[], &styles);
        // Styled series first, at position 1; the others follow.
        assert_eq!(series[0].label, "B");
        assert!(series[0].points.iter().all(|p| p.0 == 1.0));
        assert!(series[1].points.iter().all(|p| p.0 == 2.0));
        let mut square = Vec::new();
        for (k, (x, y)) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
            .iter()
            .enumerate()
        {
            square.push(row([
                ("polygon", 0usize.into()),
                ("vertex", k.into()),
                ("x", Value::Float(*x)),
                ("y", Value::Float(*y)),
            ]));
        }
        square.push(row([("cells", 1usize.into())]));
        let polygons = spec(
            "kind = 'polygons'\nx = 'x'\ny = 'y'\nseries = 'polygon'\nx_label = 'x'\ny_label = 'y'",
        );
        let styles = Styles::new(std::slice::from_ref(&polygons), &square);
        let series = build_series(&polygons, &square, &[], &styles);
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].points.len(), 4);
        let dir = tempfile::tempdir().unwrap();
        for (s, r, name) in [(&boxes, &rows, "boxes"), (&polygons, &square, "polygons")] {
            let plots = std::slice::from_ref(s);
            let written = render_all(plots, "t", None, r, &[], &dir.path().join(name)).unwrap();
            assert_eq!(written.len(), 2);
            assert!(written.iter().all(|p| p.metadata().unwrap().len() > 100));
        }
        // Each box says how many values it summarises.
        let svg = std::fs::read_to_string(dir.path().join("boxes.svg")).unwrap();
        assert_eq!(svg.matches("n = 3").count(), 2, "{svg}");
    }

    /// Renders `spec` over `rows` into memory, as `render` does into a file; returns where it
    /// drew things, the image (RGB) and its size.
    fn render_in_memory(spec: &PlotSpec, rows: &[Row]) -> (Drawn, Vec<u8>, (u32, u32)) {
        let styles = Styles::new(std::slice::from_ref(spec), rows);
        let figure = Figure::new(spec, rows, &[], &styles, "test").unwrap();
        let (w, h) = figure.size;
        let mut pixels = vec![0u8; (w * h * 3) as usize];
        let drawn = {
            let area = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
            draw_any(area, spec, "legend test", &figure).unwrap()
        };
        (drawn, pixels, (w, h))
    }

    #[test]
    fn histograms_and_pairs_have_their_legend_beside_the_plot_too() {
        let mut rows = Vec::new();
        for leaf in 0..20usize {
            for (model, w) in [("forest", leaf as f64), ("kernel", 20.0 - leaf as f64)] {
                rows.push(row([
                    ("model", model.into()),
                    ("leaf", leaf.into()),
                    ("weight", Value::Float(w)),
                ]));
            }
        }
        let histogram = spec(
            "kind = 'histogram'\nx = 'weight'\nseries = 'model'\nbins = [0.0, 20.0, 5.0]\nx_label = 'w'\ny_label = 'f'",
        );
        let pairs = spec(
            "kind = 'pairs'\nx = 'weight'\ny = 'weight'\nseries = 'model'\npair_by = 'leaf'\npair = ['forest', 'kernel']\nx_label = 'f'\ny_label = 'k'",
        );
        for (s, points) in [(&histogram, 0), (&pairs, 20)] {
            let (drawn, _, _) = render_in_memory(s, &rows);
            assert!(drawn.legend.is_some_and(|[l, ..]| l > drawn.plot[2]));
            assert_eq!(drawn.points.len(), points);
            drawn.legend_clear().unwrap();
        }
    }

    #[test]
    fn the_legend_covers_no_point_even_with_data_in_every_corner() {
        for (count, log_y) in [(3usize, false), (8, true), (40, false)] {
            // Series 0 runs along the bottom, series 1 along the top: points in all four
            // corners; the others fill the middle.
            let mut rows = Vec::new();
            for k in 0..count {
                for (x, y) in match k {
                    0 => vec![(0.0, 1.0), (1.0, 1.2)],
                    1 => vec![(0.0, 100.0), (1.0, 95.0)],
                    _ => vec![(0.3, 10.0 + k as f64), (0.7, 20.0 + k as f64)],
                } {
                    rows.push(row([
                        ("method", format!("method number {k:02}").into()),
                        ("x", Value::Float(x)),
                        ("y", Value::Float(y)),
                    ]));
                }
            }
            let mut lines = spec(&format!(
                "x = 'x'\ny = 'y'\nseries = 'method'\nx_label = 'x'\ny_label = 'y'\nlog_y = {log_y}\n\
                 x_marks = [{{ value = 1.0, label = 'a mark at the right edge' }}]"
            ));
            lines.size_inches = [4.0, 3.0];
            let (drawn, pixels, (w, h)) = render_in_memory(&lines, &rows);
            let [l, t, r, b] = drawn.legend.expect("a legend");
            let inside = |(x, y): (i32, i32), [x0, y0, x1, y1]: [i32; 4]| {
                x >= x0 && x <= x1 && y >= y0 && y <= y1
            };
            assert_eq!(drawn.points.len(), 2 * count);
            for &p in &drawn.points {
                assert!(
                    inside(p, drawn.plot),
                    "{p:?} outside the plot {:?}",
                    drawn.plot
                );
                assert!(
                    !inside(p, [l, t, r, b]),
                    "{count} series: point {p:?} under the legend {:?}",
                    [l, t, r, b]
                );
            }
            drawn.legend_clear().unwrap();
            // The whole box is in the figure and right of the plotting area.
            assert!(l > drawn.plot[2] && r < w as i32 && t >= 0 && b < h as i32);
            // Every corner holds a point.
            let [x0, y0, x1, y1] = drawn.plot;
            for corner in [(x0, y0), (x1, y0), (x0, y1), (x1, y1)] {
                let near = drawn.points.iter().any(|&(x, y)| {
                    (x - corner.0).abs() < (x1 - x0) / 8 && (y - corner.1).abs() < (y1 - y0) / 8
                });
                assert!(near, "no point near corner {corner:?}");
            }
            // Series 0's two points are joined: the middle of the segment is drawn on.
            let (a, c) = (drawn.points[0], drawn.points[1]);
            let mid = (((a.0 + c.0) / 2) as u32, ((a.1 + c.1) / 2) as u32);
            let at = ((mid.1 * w + mid.0) * 3) as usize;
            assert_ne!(&pixels[at..at + 3], &[255, 255, 255], "no line at {mid:?}");
        }
    }

    #[test]
    fn a_legend_over_a_point_is_refused() {
        let drawn = Drawn {
            plot: [50, 10, 400, 300],
            legend: Some([420, 10, 500, 60]),
            points: vec![(60, 20), (390, 290)],
        };
        drawn.legend_clear().unwrap();
        let over_point = Drawn {
            legend: Some([300, 250, 500, 300]),
            ..drawn
        };
        assert!(over_point.legend_clear().is_err());
    }

    #[test]
    fn titles_name_the_run_when_given() {
        let mut s = spec("x = 'x'\ny = 'y'\nseries = 's'\nx_label = 'x'\ny_label = 'y'");
        assert_eq!(caption(&s, "Fig. 3", None), "Fig. 3");
        assert_eq!(caption(&s, "Fig. 3", Some("quick")), "Fig. 3 (quick run)");
        s.title = Some("Own title".into());
        assert_eq!(
            caption(&s, "Fig. 3", Some("quick-set-0a1b2c3d")),
            "Own title (quick-set-0a1b2c3d run)"
        );
        assert_eq!(caption(&s, "Fig. 3", None), "Own title");
    }
}
