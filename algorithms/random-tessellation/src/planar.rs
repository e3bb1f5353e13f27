//! A geometric draw of the RTP in the plane (the pictures of the paper's Figs. 1-2): the exact
//! generative process of spec §2 on a rectangle, with polygons for cells.
//!
//! Every cell a waits an Exp(Λ(\[a\])) time and is then cut by a line drawn from Λ restricted to
//! the lines hitting it. This is run as exact Poisson thinning (Supp. Alg. 1): each cell proposes
//! lines at rate Λ([B(r_a)]) = r_a from an enclosing disc B(c_a, r_a) (Lemma 3 normalisation;
//! the superposed proposals form one Poisson process of rate Σ_a r_a), and a proposal becomes a
//! cut when the line hits the open polygon. The cut polygon is replaced by its two halves; the
//! draw stops at the budget τ.
//!
//! Expected numbers of cuts, used by the tests as an independent check: for uRTP (lines of
//! measure Λ(\[K\]) = per(K) / (2π) by Cauchy's formula), the STIT property gives
//! E\[cuts\] = τ · per / (2π) + τ² · area / (4π); for MRTP with weights ω, lines x_j = s have
//! intensity ω_j / 2, so E\[cells\] = (1 + τ ω_1 w / 2)(1 + τ ω_2 h / 2) (the Mondrian process).

use rand::Rng;
use rand_distr::Exp1;

use kernel_core::CoreError;

use crate::error::{invalid, RtfError};
use crate::prior::{Direction, Prior};

/// The draw stops with [`RtfError::TooManyCells`] beyond this many cells.
pub const MAX_PLANAR_CELLS: usize = 50_000;

struct Polygon {
    vertices: Vec<[f64; 2]>,
    centre: [f64; 2],
    radius: f64,
}

impl Polygon {
    fn new(vertices: Vec<[f64; 2]>) -> Self {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for v in &vertices {
            for j in 0..2 {
                lo[j] = lo[j].min(v[j]);
                hi[j] = hi[j].max(v[j]);
            }
        }
        let centre = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])];
        let radius = vertices
            .iter()
            .map(|v| (v[0] - centre[0]).hypot(v[1] - centre[1]))
            .fold(0.0, f64::max)
            * (1.0 + 1e-12);
        Self {
            vertices,
            centre,
            radius,
        }
    }
}

/// Cells (convex polygons, vertex lists counter-clockwise) of an RTP draw on
/// [0, width] × [0, height] with budget `tau`, by the exact generative process (competing
/// exponential clocks with Poisson thinning from the enclosing disc: proposals at rate
/// Λ([B(r)]) = r, accepted when the line hits the polygon).
///
/// Errors: a prior not of dimension 2; width or height not finite and > 0; `budget` not finite
/// and >= 0; more than [`MAX_PLANAR_CELLS`] cells.
pub fn tessellate_rectangle<R: Rng + ?Sized>(
    width: f64,
    height: f64,
    prior: &Prior,
    budget: f64,
    rng: &mut R,
) -> Result<Vec<Vec<[f64; 2]>>, RtfError> {
    if prior.dim() != 2 {
        return Err(RtfError::Core(CoreError::ShapeMismatch {
            what: "the prior's dimension for a planar draw",
            expected: 2,
            got: prior.dim(),
        }));
    }
    for (name, v) in [("width", width), ("height", height)] {
        if !(v.is_finite() && v > 0.0) {
            return Err(invalid(name, v, "a finite number > 0"));
        }
    }
    if !(budget.is_finite() && budget >= 0.0) {
        return Err(invalid("budget", budget, "a finite number >= 0"));
    }
    let mut cells = vec![Polygon::new(vec![
        [0.0, 0.0],
        [width, 0.0],
        [width, height],
        [0.0, height],
    ])];
    let mut time = 0.0;
    loop {
        let total: f64 = cells.iter().map(|c| c.radius).sum();
        time += rng.sample::<f64, _>(Exp1) / total;
        if time >= budget {
            break;
        }
        let u = rng.random::<f64>() * total;
        let mut acc = 0.0;
        let mut a = cells.len() - 1;
        for (k, c) in cells.iter().enumerate() {
            acc += c.radius;
            if u < acc {
                a = k;
                break;
            }
        }
        let (n, axis) = match prior.sample_direction(rng) {
            Direction::Axis(j) => {
                let mut e = [0.0; 2];
                e[j] = 1.0;
                (e, Some(j))
            }
            Direction::Unit(v) => ([v[0], v[1]], None),
        };
        let cell = &cells[a];
        let offset = n[0] * cell.centre[0]
            + n[1] * cell.centre[1]
            + (2.0 * rng.random::<f64>() - 1.0) * cell.radius;
        let (lo, hi) = cell
            .vertices
            .iter()
            .map(|v| n[0] * v[0] + n[1] * v[1])
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), t| {
                (l.min(t), h.max(t))
            });
        if !(lo < offset && offset < hi) {
            continue;
        }
        if cells.len() >= MAX_PLANAR_CELLS {
            return Err(RtfError::TooManyCells {
                limit: MAX_PLANAR_CELLS,
            });
        }
        let (left, right) = clip(&cell.vertices, n, axis, offset);
        cells[a] = Polygon::new(left);
        cells.push(Polygon::new(right));
    }
    Ok(cells.into_iter().map(|c| c.vertices).collect())
}

/// The two halves ⟨n, x⟩ <= offset and >= offset of a convex polygon (orientation kept). For an
/// axis normal the new vertices get the cut coordinate exactly.
fn clip(
    vertices: &[[f64; 2]],
    n: [f64; 2],
    axis: Option<usize>,
    offset: f64,
) -> (Vec<[f64; 2]>, Vec<[f64; 2]>) {
    let side = |v: &[f64; 2]| n[0] * v[0] + n[1] * v[1] - offset;
    let mut left = Vec::with_capacity(vertices.len() + 1);
    let mut right = Vec::with_capacity(vertices.len() + 1);
    for (k, a) in vertices.iter().enumerate() {
        let b = &vertices[(k + 1) % vertices.len()];
        let (sa, sb) = (side(a), side(b));
        if sa <= 0.0 {
            left.push(*a);
        }
        if sa >= 0.0 {
            right.push(*a);
        }
        if (sa < 0.0 && sb > 0.0) || (sa > 0.0 && sb < 0.0) {
            let t = sa / (sa - sb);
            let mut p = [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
            if let Some(j) = axis {
                p[j] = offset;
            }
            left.push(p);
            right.push(p);
        }
    }
    (left, right)
}
