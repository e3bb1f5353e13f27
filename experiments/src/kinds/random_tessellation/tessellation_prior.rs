//! Draws of the four RTP priors on a rectangle (Random Tessellation Forests, Figs. 1-2 in form:
//! uRTP, wuRTP, MRTP, wMRTP tessellations of a rectangle; spec §2).
//!
//! One cell = one draw of one prior with budget τ on `[0, width] x [0, height]`, by the exact
//! generative process (`random_tessellation::tessellate_rectangle`). Rows: one per polygon
//! vertex (`polygon`, `vertex`, `x`, `y`; the figure draws them), then one summary row per draw
//! with the number of cells and the number of cell boundaries crossing the horizontal midline
//! `y = height/2`. The midline count tests a property of the process: an RTP restricted to a
//! line is a Poisson process (self-consistency, spec §2, Lemma 1), so the crossings of a segment
//! are Poisson with mean τ·Λ([segment]).

use anyhow::{bail, Result};
use random_tessellation::{tessellate_rectangle, Prior, PriorKind};
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::DataView;
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct TessellationPrior;

/// The four priors (spec §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorName {
    Urtp,
    Wurtp,
    Mrtp,
    Wmrtp,
}

/// `[params]` of a prior-draw config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorParams {
    pub prior: PriorName,
    /// ω_1 of the weighted priors, ω = (ω_1, 1 − ω_1); the unweighted ones use (1/2, 1/2).
    #[serde(default)]
    pub weight_1: Option<f64>,
    pub width: f64,
    pub height: f64,
    /// τ.
    pub budget: f64,
}

impl PriorParams {
    fn prior(&self) -> Result<Prior> {
        let (kind, weighted) = match self.prior {
            PriorName::Urtp => (PriorKind::Uniform, false),
            PriorName::Wurtp => (PriorKind::Uniform, true),
            PriorName::Mrtp => (PriorKind::Mondrian, false),
            PriorName::Wmrtp => (PriorKind::Mondrian, true),
        };
        let weights = match (weighted, self.weight_1) {
            (true, Some(w)) if w > 0.0 && w < 1.0 => Some([w, 1.0 - w]),
            (true, Some(w)) => bail!("weight_1 = {w}: expected ω_1 in (0, 1)"),
            (true, None) => bail!("the weighted priors need weight_1 (ω = (ω_1, 1 − ω_1))"),
            (false, Some(_)) => {
                bail!("weight_1 applies to the weighted priors (wurtp, wmrtp) only")
            }
            (false, None) => None,
        };
        Ok(Prior::new(kind, 2, weights.as_ref().map(|w| w.as_slice()))?)
    }
}

impl Params for PriorParams {
    fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("width", self.width),
            ("height", self.height),
            ("budget", self.budget),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} = {v}: expected a finite number > 0"));
            }
        }
        // Expected cells grow like (τ · size)^2: keep a draw to a few hundred thousand cells.
        let scale = self.budget * self.width.max(self.height);
        if scale > 1000.0 {
            return Err(format!(
                "budget x size = {scale}: at most 1000 (a draw would have millions of cells)"
            ));
        }
        self.prior().map(|_| ()).map_err(|e| e.to_string())
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "polygon",
        doc: "vertex rows: index of the polygon (a cell of the tessellation)",
    },
    ColumnDoc {
        name: "vertex",
        doc: "vertex rows: index of the vertex, counter-clockwise",
    },
    ColumnDoc {
        name: "x",
        doc: "vertex rows: x of the vertex",
    },
    ColumnDoc {
        name: "y",
        doc: "vertex rows: y of the vertex",
    },
    ColumnDoc {
        name: "cells",
        doc: "summary row: cells of the draw",
    },
    ColumnDoc {
        name: "midline_crossings",
        doc: "summary row: cell boundaries crossing the segment y = height/2 inside the rectangle",
    },
    ColumnDoc {
        name: "area_error",
        doc: "summary row: |sum of the cells' areas - width x height| (a partition has 0)",
    },
];

crate::register_kind!(TessellationPrior);

impl Kind for TessellationPrior {
    type Params = PriorParams;
    type Shared = ();
    const NAME: &'static str = "tessellation_prior";
    const SUMMARY: &'static str = "draws of the uRTP, wuRTP, MRTP and wMRTP priors on a rectangle: cells as polygons, cell counts and midline crossings (Random Tessellation Forests Figs. 1-2)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    fn prepare(_data: &DataView) -> Result<()> {
        Ok(())
    }

    fn run_cell(_: &(), p: &PriorParams, ctx: &CellContext) -> Result<Vec<Row>> {
        let prior = p.prior()?;
        let cells = tessellate_rectangle(
            p.width,
            p.height,
            &prior,
            p.budget,
            &mut ctx.rng("tessellation"),
        )?;
        let mut rows = Vec::new();
        let mut area = 0.0;
        let mut crossed = 0usize;
        let mid = p.height / 2.0;
        for (c, polygon) in cells.iter().enumerate() {
            area += polygon_area(polygon);
            if polygon_meets_line(polygon, mid) {
                crossed += 1;
            }
            for (k, v) in polygon.iter().enumerate() {
                rows.push(row([
                    ("polygon", c.into()),
                    ("vertex", k.into()),
                    ("x", Value::from(v[0])),
                    ("y", Value::from(v[1])),
                ]));
            }
        }
        rows.push(row([
            ("cells", cells.len().into()),
            // The midline meets `crossed` cells, so `crossed - 1` boundaries cross it.
            ("midline_crossings", crossed.saturating_sub(1).into()),
            ("area_error", Value::from((area - p.width * p.height).abs())),
        ]));
        Ok(rows)
    }
}

/// Shoelace area of a polygon.
fn polygon_area(v: &[[f64; 2]]) -> f64 {
    let n = v.len();
    let twice: f64 = (0..n)
        .map(|i| {
            let (a, b) = (v[i], v[(i + 1) % n]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum();
    twice.abs() / 2.0
}

/// Whether the line `y = level` passes through the polygon's interior.
fn polygon_meets_line(v: &[[f64; 2]], level: f64) -> bool {
    let lo = v.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
    let hi = v.iter().map(|p| p[1]).fold(f64::NEG_INFINITY, f64::max);
    lo < level && level < hi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shoelace_and_midline() {
        let square = [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]];
        assert_eq!(polygon_area(&square), 4.0);
        let triangle = [[0.0, 0.0], [3.0, 0.0], [0.0, 1.0]];
        assert_eq!(polygon_area(&triangle), 1.5);
        assert!(polygon_meets_line(&square, 1.0));
        assert!(!polygon_meets_line(&square, 2.5));
        assert!(!polygon_meets_line(&triangle, 1.0));
    }
}
