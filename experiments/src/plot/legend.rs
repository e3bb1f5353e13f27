//! A figure's legend: a box right of the plotting area, in a margin that the figure grows by,
//! so no entry ever covers a drawn point. Entries fill a column as tall as the plot and wrap
//! into further columns.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::element::ComposedElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::spec::Marker;
use super::{marker_outline, plot_err};

/// What an entry shows left of its label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Glyph {
    /// A line (lines, steps, horizontal levels).
    Line,
    /// A marker on a thin line (markers joined in x order).
    JoinedMarker(Marker),
    /// A marker alone (pairs).
    Marker(Marker),
    /// A filled box (histogram bars).
    Bar,
    /// A dashed grey line (x marks).
    Dashed,
}

/// One legend entry.
pub(super) struct Entry {
    pub(super) label: String,
    pub(super) color: RGBColor,
    pub(super) glyph: Glyph,
}

/// Label font size in pixels.
const FONT: u32 = 12;
/// Height of one entry.
const ROW: u32 = 18;
/// Width of the glyph left of a label.
const GLYPH: u32 = 24;
/// Space inside the box around the entries, and between a glyph and its label.
const PAD: u32 = 6;
/// Space right of the box, to the figure's edge.
const MARGIN: u32 = 10;

/// A laid-out legend.
pub(super) struct Legend {
    entries: Vec<Entry>,
    /// Entries per column.
    rows: usize,
    column_width: u32,
}

/// A label's width in pixels, as the renderer's font sets it (with a margin for SVG viewers'
/// fonts).
fn text_width(text: &str) -> u32 {
    let measured = ("sans-serif", FONT)
        .into_font()
        .box_size(text)
        .map(|(w, _)| w)
        .unwrap_or(0);
    // Without the font (never with the embedded one): a wide glyph per character.
    let estimate = 7 * text.chars().count() as u32;
    let width = if measured > 0 { measured } else { estimate };
    width + width / 10
}

impl Legend {
    /// The legend of `entries` beside a plotting area `height` pixels tall; `None` without
    /// entries.
    pub(super) fn new(entries: Vec<Entry>, height: u32) -> Option<Legend> {
        if entries.is_empty() {
            return None;
        }
        let rows = (height.saturating_sub(2 * PAD) / ROW).max(1) as usize;
        let text = entries
            .iter()
            .map(|e| text_width(&e.label))
            .max()
            .unwrap_or(0);
        Some(Legend {
            entries,
            rows,
            column_width: GLYPH + PAD + text + PAD,
        })
    }

    /// Width and height of the box.
    pub(super) fn size(&self) -> (u32, u32) {
        let columns = self.entries.len().div_ceil(self.rows) as u32;
        let rows = self.entries.len().min(self.rows) as u32;
        (PAD + columns * self.column_width, 2 * PAD + rows * ROW)
    }

    /// Width the figure grows by: the box and the margin right of it.
    pub(super) fn margin(&self) -> u32 {
        self.size().0 + MARGIN
    }

    /// Draws the box with its top left corner at `corner` (pixels of `area`); returns the box
    /// as [left, top, right, bottom].
    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        corner: (i32, i32),
    ) -> Result<[i32; 4]>
    where
        DB::ErrorType: 'static,
    {
        let (w, h) = self.size();
        let (x0, y0) = corner;
        let bounds = [x0, y0, x0 + w as i32, y0 + h as i32];
        area.draw(&Rectangle::new(
            [(bounds[0], bounds[1]), (bounds[2], bounds[3])],
            WHITE.filled(),
        ))
        .map_err(plot_err)?;
        area.draw(&Rectangle::new(
            [(bounds[0], bounds[1]), (bounds[2], bounds[3])],
            BLACK.mix(0.4).stroke_width(1),
        ))
        .map_err(plot_err)?;
        let font = ("sans-serif", FONT)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (k, entry) in self.entries.iter().enumerate() {
            let (column, row) = ((k / self.rows) as i32, (k % self.rows) as i32);
            let left = x0 + PAD as i32 + column * self.column_width as i32;
            let y = y0 + PAD as i32 + row * ROW as i32 + ROW as i32 / 2;
            let (a, b) = (left, left + GLYPH as i32);
            let mid = (a + b) / 2;
            let color = entry.color;
            match entry.glyph {
                Glyph::Line => {
                    area.draw(&PathElement::new([(a, y), (b, y)], color.stroke_width(2)))
                }
                Glyph::Dashed => {
                    let gray = color.stroke_width(1);
                    area.draw(&PathElement::new([(a, y), (a + 8, y)], gray))
                        .and_then(|_| area.draw(&PathElement::new([(b - 8, y), (b, y)], gray)))
                }
                Glyph::Bar => area.draw(&Rectangle::new(
                    [(a + 4, y - 5), (b - 4, y + 5)],
                    color.mix(0.5).filled(),
                )),
                Glyph::JoinedMarker(marker) => area
                    .draw(&PathElement::new([(a, y), (b, y)], color.stroke_width(1)))
                    .and_then(|_| draw_marker(area, (mid, y), marker, color)),
                Glyph::Marker(marker) => draw_marker(area, (mid, y), marker, color),
            }
            .map_err(plot_err)?;
            area.draw(&Text::new(
                entry.label.as_str(),
                (b + PAD as i32, y),
                font.clone(),
            ))
            .map_err(plot_err)?;
        }
        Ok(bounds)
    }
}

/// A marker centred on `at` (pixels of `area`): translucent inside, outlined, so two markers
/// on one point both stay visible.
pub(super) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    marker: Marker,
    color: RGBColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    area.draw(&marker_element(at, marker, color))
}

/// A marker at a point of a coordinate system `C`: its inside and its outline, in pixels.
type MarkerElement<C, DB> = ComposedElement<C, DB, Polygon<(i32, i32)>, PathElement<(i32, i32)>>;

/// A marker as one element at a point of any coordinate system (its shape in pixels).
pub(super) fn marker_element<C, DB: DrawingBackend>(
    at: C,
    marker: Marker,
    color: RGBColor,
) -> MarkerElement<C, DB> {
    let outline = marker_outline(marker);
    let mut closed = outline.clone();
    closed.extend(outline.first().copied());
    EmptyElement::at(at)
        + Polygon::new(outline, color.mix(0.45).filled())
        + PathElement::new(closed, color.stroke_width(1))
}
