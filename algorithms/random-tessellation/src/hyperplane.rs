//! Drawing the hyperplane that cuts a cell (spec §3 and §5.1).
//!
//! **tess19 rejection sampler** (the default cut-rate scheme, D2), for a cell with diameter
//! `dist.max` and training items v_i:
//! 1. draw n ~ λ_d (the prior, spec §2.1);
//! 2. project: t_i = ⟨v_i, n⟩ over the training items, [t_min, t_max] their range,
//!    `len = t_max − t_min`;
//! 3. draw μ ~ U(0, dist.max); if μ < len accept the hyperplane ⟨x, n⟩ = t_min + μ (items with
//!    t_i <= t_min + μ go left);
//! 4. otherwise retry; after `max_rejections` (tess19: 1/0.05 = 20) rejections give up.
//!
//! Given n the acceptance probability is width_n / dist.max, so accepted directions have density
//! ∝ width_n · λ_d(n) and accepted offsets are uniform on the projected training range: the
//! restriction of Λ to the hyperplanes hitting the hull of the training items.
//!
//! **Ball proposals** (exact Poisson thinning, spec §5.1): a hyperplane from Λ restricted to
//! [B(c, r)] normalised by Λ([B(c, r)]) = r is n ~ λ_d with offset ⟨n, c⟩ + s, s ~ U(−r, r)
//! (by the symmetry of λ_d, (n, s) and (−n, −s) are the same hyperplane, so drawing s on
//! (−r, r) instead of (0, r) changes nothing). It is kept when it hits the cell,
//! t_min <= offset < t_max (the upper end strict so that both sides keep a training item).
//!
//! **Box proposals** (the enclosing-ball scheme for the Mondrian priors, whose Λ([a]) is exact):
//! Λ restricted to the hyperplanes hitting a box with extents e_j is the axis j with probability
//! ∝ ω_j e_j and an offset uniform on the box's side; kept, like a ball proposal, when it hits
//! the training items.

use ndarray::ArrayView2;
use rand::Rng;

use kernel_core::CoreError;

use crate::error::{invalid, RtfError};
use crate::input::check_columns;
use crate::points::{dot, Points};
use crate::prior::{Direction, Hyperplane, Prior, PriorKind};

/// Outcome of one tess19 cut attempt in a cell.
#[derive(Debug, Clone, PartialEq)]
pub struct HyperplaneSample {
    /// The accepted hyperplane, or `None` when every proposal was rejected.
    pub hyperplane: Option<Hyperplane>,
    /// Number of directions drawn (accepted or not), at most `max_rejections`.
    pub proposals: usize,
}

/// One tess19 cut attempt (spec §3 steps 1-4) in the cell holding the rows `items` of `x` (its
/// training items) with diameter `dist_max` (tess19 passes the diameter over all the cell's
/// items; [`crate::subset_diameter`] computes it).
///
/// Errors: columns ≠ the prior's dimension, no items, an index out of range, `dist_max` not
/// finite and >= 0, `max_rejections == 0`, non-finite data.
pub fn sample_cell_hyperplane<R: Rng + ?Sized>(
    x: ArrayView2<f64>,
    items: &[usize],
    dist_max: f64,
    prior: &Prior,
    max_rejections: usize,
    rng: &mut R,
) -> Result<HyperplaneSample, RtfError> {
    check_columns(
        "columns of the points vs the prior's dimension",
        prior.dim(),
        x,
    )?;
    let (points, ids) = Points::subset("the cell", x, items)?;
    if !(dist_max.is_finite() && dist_max >= 0.0) {
        return Err(invalid("dist_max", dist_max, "a finite number >= 0"));
    }
    if max_rejections == 0 {
        return Err(invalid("max_rejections", 0, "at least 1"));
    }
    let mut draw = DirectionBuffer::new(prior.dim());
    let mut projections = Vec::new();
    let mut proposals = 0;
    let offset = propose_rejection(
        &points,
        &ids,
        dist_max,
        prior,
        max_rejections,
        rng,
        &mut draw,
        &mut projections,
        &mut proposals,
    );
    Ok(HyperplaneSample {
        hyperplane: offset.map(|offset| draw.hyperplane(prior, offset)),
        proposals,
    })
}

/// A hyperplane drawn from Λ restricted to the hyperplanes hitting B(`centre`, `radius`),
/// normalised (spec §5.1 proposals; Λ([B(c, r)]) = r by [APP Lemma 3]).
pub fn sample_ball_hyperplane<R: Rng + ?Sized>(
    centre: &[f64],
    radius: f64,
    prior: &Prior,
    rng: &mut R,
) -> Result<Hyperplane, RtfError> {
    if centre.len() != prior.dim() {
        return Err(RtfError::Core(CoreError::ShapeMismatch {
            what: "length of the ball centre vs the prior's dimension",
            expected: prior.dim(),
            got: centre.len(),
        }));
    }
    if !(radius.is_finite() && radius >= 0.0) || centre.iter().any(|c| !c.is_finite()) {
        return Err(invalid("ball", radius, "a finite centre and radius >= 0"));
    }
    let mut draw = DirectionBuffer::new(prior.dim());
    draw.sample(prior, rng);
    let offset = draw.project_point(prior, centre) + (2.0 * rng.random::<f64>() - 1.0) * radius;
    Ok(draw.hyperplane(prior, offset))
}

/// The direction of the current proposal, without an allocation per draw.
#[derive(Debug, Clone)]
pub(crate) struct DirectionBuffer {
    axis: usize,
    normal: Vec<f64>,
}

impl DirectionBuffer {
    pub(crate) fn new(dim: usize) -> Self {
        Self {
            axis: 0,
            normal: vec![0.0; dim],
        }
    }

    pub(crate) fn sample<R: Rng + ?Sized>(&mut self, prior: &Prior, rng: &mut R) {
        match prior.kind() {
            PriorKind::Mondrian => self.axis = prior.sample_axis(rng),
            PriorKind::Uniform => prior.sample_unit_into(rng, &mut self.normal),
        }
    }

    /// Projections t_i = ⟨x_i, n⟩ of `items` into `out`; returns (t_min, t_max). Uses the same
    /// arithmetic as [`Direction::project`], so routing by the stored hyperplane agrees.
    pub(crate) fn project_items(
        &self,
        prior: &Prior,
        points: &Points,
        items: &[u32],
        out: &mut Vec<f64>,
    ) -> (f64, f64) {
        out.clear();
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        match prior.kind() {
            PriorKind::Mondrian => {
                for &i in items {
                    let t = points.row(i)[self.axis];
                    lo = lo.min(t);
                    hi = hi.max(t);
                    out.push(t);
                }
            }
            PriorKind::Uniform => {
                for &i in items {
                    let t = dot(&self.normal, points.row(i));
                    lo = lo.min(t);
                    hi = hi.max(t);
                    out.push(t);
                }
            }
        }
        (lo, hi)
    }

    pub(crate) fn project_point(&self, prior: &Prior, x: &[f64]) -> f64 {
        match prior.kind() {
            PriorKind::Mondrian => x[self.axis],
            PriorKind::Uniform => dot(&self.normal, x),
        }
    }

    pub(crate) fn hyperplane(&self, prior: &Prior, offset: f64) -> Hyperplane {
        let direction = match prior.kind() {
            PriorKind::Mondrian => Direction::Axis(self.axis),
            PriorKind::Uniform => Direction::Unit(self.normal.clone()),
        };
        Hyperplane { direction, offset }
    }
}

/// The tess19 rejection loop on the training `items` of a cell. On acceptance returns the offset
/// t_min + μ, with the direction in `draw` and the projections of `items` in `projections`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn propose_rejection<R: Rng + ?Sized>(
    points: &Points,
    items: &[u32],
    dist_max: f64,
    prior: &Prior,
    max_rejections: usize,
    rng: &mut R,
    draw: &mut DirectionBuffer,
    projections: &mut Vec<f64>,
    proposals: &mut usize,
) -> Option<f64> {
    for _ in 0..max_rejections {
        *proposals += 1;
        draw.sample(prior, rng);
        let (t_min, t_max) = draw.project_items(prior, points, items, projections);
        let mu = rng.random::<f64>() * dist_max;
        let offset = t_min + mu;
        // μ < len, and the rounded offset still below t_max so the right side is not empty.
        if mu < t_max - t_min && offset < t_max {
            return Some(offset);
        }
    }
    None
}

/// One thinning proposal in a cell with training `items` and enclosing ball (`centre`,
/// `radius`): the offset if the hyperplane hits the cell (t_min <= offset < t_max), with the
/// direction in `draw` and the projections in `projections`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn propose_ball<R: Rng + ?Sized>(
    points: &Points,
    items: &[u32],
    centre: &[f64],
    radius: f64,
    prior: &Prior,
    rng: &mut R,
    draw: &mut DirectionBuffer,
    projections: &mut Vec<f64>,
) -> Option<f64> {
    draw.sample(prior, rng);
    let offset = draw.project_point(prior, centre) + (2.0 * rng.random::<f64>() - 1.0) * radius;
    let (t_min, t_max) = draw.project_items(prior, points, items, projections);
    (t_min <= offset && offset < t_max).then_some(offset)
}

/// One proposal from Λ restricted to the box (`centre`, `extents`) of a cell with training
/// `items` (Mondrian priors; `rate` = Σ_j ω_j e_j / 2 > 0): the offset if the hyperplane hits the
/// training items (t_min <= offset < t_max), with the axis in `draw` and the projections in
/// `projections`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn propose_box<R: Rng + ?Sized>(
    points: &Points,
    items: &[u32],
    centre: &[f64],
    extents: &[f64],
    rate: f64,
    prior: &Prior,
    rng: &mut R,
    draw: &mut DirectionBuffer,
    projections: &mut Vec<f64>,
) -> Option<f64> {
    let u = rng.random::<f64>() * 2.0 * rate;
    let mut acc = 0.0;
    for (j, (e, w)) in extents.iter().zip(prior.weights()).enumerate() {
        if w * e > 0.0 {
            // The last axis of positive mass, should rounding leave u beyond the sum.
            draw.axis = j;
            acc += w * e;
            if u < acc {
                break;
            }
        }
    }
    let j = draw.axis;
    let offset = centre[j] + (rng.random::<f64>() - 0.5) * extents[j];
    let (t_min, t_max) = draw.project_items(prior, points, items, projections);
    (t_min <= offset && offset < t_max).then_some(offset)
}
