//! The Mondrian process on an axis-aligned box (Roy & Teh, NIPS 2009).
//!
//! A cell with box `Π_d [l_d, u_d]` born at time `τ` is cut at time `τ + E`,
//! `E ~ Exp(Σ_d (u_d − l_d))` (the linear dimension), in dimension `d` with probability
//! `∝ u_d − l_d`, at a location uniform on `[l_d, u_d]`; both halves then evolve independently.
//! Cells whose cut time exceeds the lifetime λ are leaves. The number of leaves of MP(λ, box) has
//! expectation `Π_d (1 + λ L_d)` and the restriction of MP(λ, box) to a sub-box is MP(λ, sub-box)
//! (projectivity).

use rand::Rng;
use rand_distr::Exp1;

use crate::error::{check_lifetime, MondrianError};

/// One cut of a Mondrian cell: when, along which dimension, where.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cut {
    /// Absolute time of the cut (birth time of the cell plus the exponential clock).
    pub time: f64,
    /// Dimension `d` that is cut.
    pub dimension: usize,
    /// Location of the cut along dimension `d`; points with `x_d <= location` go left.
    pub location: f64,
}

/// An axis-aligned box `Π_d [lower_d, upper_d]`.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisBox {
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
}

impl AxisBox {
    /// A box with `lower_d <= upper_d` (finite) in each of at least one dimension.
    pub fn new(lower: Vec<f64>, upper: Vec<f64>) -> Result<Self, MondrianError> {
        if lower.is_empty() || lower.len() != upper.len() {
            return Err(MondrianError::invalid(
                "box",
                format!(
                    "lower has {} dimensions, upper has {}",
                    lower.len(),
                    upper.len()
                ),
                "finite lower <= upper in each of at least one dimension",
            ));
        }
        for (d, (l, u)) in lower.iter().zip(&upper).enumerate() {
            if !(l.is_finite() && u.is_finite() && l <= u) {
                return Err(MondrianError::invalid(
                    "box",
                    format!("dimension {d}: [{l}, {u}]"),
                    "finite lower <= upper in each of at least one dimension",
                ));
            }
        }
        Ok(Self { lower, upper })
    }

    /// Linear dimension `Σ_d (u_d − l_d)`, the rate of the cell's exponential clock.
    pub fn linear_dimension(&self) -> f64 {
        self.lower.iter().zip(&self.upper).map(|(l, u)| u - l).sum()
    }

    /// Whether the two boxes overlap with positive volume.
    pub fn intersects(&self, other: &AxisBox) -> bool {
        self.lower
            .iter()
            .zip(&self.upper)
            .zip(other.lower.iter().zip(&other.upper))
            .all(|((l1, u1), (l2, u2))| l1.max(*l2) < u1.min(*u2))
    }
}

/// Samples the next cut of a cell with box `[lower, upper]` born at `birth`.
///
/// Returns `None` when the box has zero linear dimension (a cell holding one distinct point is
/// never split). Draw order: exponential clock, dimension, location.
pub fn sample_cut<R: Rng + ?Sized>(
    lower: &[f64],
    upper: &[f64],
    birth: f64,
    rng: &mut R,
) -> Option<Cut> {
    let rate: f64 = lower.iter().zip(upper).map(|(l, u)| u - l).sum();
    if rate.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let clock: f64 = rng.sample(Exp1);
    let time = birth + clock / rate;
    let mut target = rng.random::<f64>() * rate;
    let mut dimension = None;
    for (d, (l, u)) in lower.iter().zip(upper).enumerate() {
        let side = u - l;
        if side > 0.0 {
            dimension = Some(d);
            if target < side {
                break;
            }
            target -= side;
        }
    }
    // `rate > 0` guarantees a dimension with positive side; rounding can only leave `target`
    // marginally past the last such side, which then takes it.
    let dimension = dimension?;
    let (l, u) = (lower[dimension], upper[dimension]);
    let location = l + rng.random::<f64>() * (u - l);
    Some(Cut {
        time,
        dimension,
        location,
    })
}

/// Samples MP(λ, box) on the whole box and returns the boxes of its leaves.
///
/// This is the generative process of Roy & Teh; the Mondrian kernel itself uses its restriction
/// to data ([`crate::MondrianTree`]).
pub fn sample_box_partition<R: Rng + ?Sized>(
    domain: &AxisBox,
    lifetime: f64,
    rng: &mut R,
) -> Result<Vec<AxisBox>, MondrianError> {
    check_lifetime(lifetime)?;
    let mut leaves = Vec::new();
    let mut pending = vec![(domain.clone(), 0.0)];
    while let Some((cell, birth)) = pending.pop() {
        match sample_cut(&cell.lower, &cell.upper, birth, rng) {
            Some(cut) if cut.time < lifetime => {
                let mut left = cell.clone();
                let mut right = cell;
                left.upper[cut.dimension] = cut.location;
                right.lower[cut.dimension] = cut.location;
                pending.push((right, cut.time));
                pending.push((left, cut.time));
            }
            _ => leaves.push(cell),
        }
    }
    Ok(leaves)
}
