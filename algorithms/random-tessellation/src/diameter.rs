//! Cell geometry: the exact diameter `dist.max` of a point subset (the tess19 cut rate is
//! Λ_a = dist.max / 2, spec §3) and an enclosing ball (the exact-thinning rate Λ([B(r_a)]) = r_a,
//! spec §5.1 / D2).
//!
//! tess19 reads `dist.max` from a precomputed n × n distance matrix. Here nothing quadratic is
//! stored; the diameter is computed exactly with pruning:
//!
//! 1. a lower bound `D` from farthest-point sweeps (from a start point, repeatedly jump to the
//!    farthest point until the distance stops growing: a "double normal" pair);
//! 2. upper bounds per pair from two centres c, the centroid and the midpoint of that pair: by
//!    the triangle inequality ‖x_i − x_j‖ <= r_i + r_j with r_i = ‖x_i − c‖, so only points
//!    with r_i + max r > D (for both centres) can be an endpoint of a longer pair;
//! 3. brute force over the surviving candidates in decreasing order of the centroid distance,
//!    each inner loop stopping at the first partner with r_i + r_j <= D (later partners are
//!    closer to the centroid) and skipping partners that the midpoint bound excludes.
//!
//! The centroid matters on skewed data (min-max scaled counts such as spam: a bulk near one
//! corner and a few far points): there the midpoint of the extreme pair is about D/2 from
//! everything and prunes nothing, while the centroid sits in the bulk (3000 × 57 spam rows:
//! 2.5 million surviving pairs with the midpoint alone, 2,656 with the centroid).
//!
//! The pruning tests are conservative by a relative 1e-12, so the result equals the brute-force
//! maximum up to floating-point rounding. A child cell whose parent's diameter pair lies wholly
//! in it inherits the parent's diameter (it is a subset, and contains the pair); the other child
//! starts its sweeps from the parent's endpoint it holds and stops as soon as the lower bound
//! reaches the parent's diameter.

use ndarray::ArrayView2;

use crate::error::RtfError;
use crate::points::{squared_distance, Points};

/// Below this many points the diameter is brute force (the sweeps would cost as much).
const BRUTE_FORCE_BELOW: usize = 24;
/// At most this many farthest-point sweeps: they only seed the lower bound (the candidate pairs
/// make the result exact), and a third sweep rarely improves it.
const MAX_SWEEPS: usize = 3;
/// Relative slack of the pruning bounds against rounding.
const SLACK: f64 = 1e-12;

/// The diameter max_{i,j} ‖x_i − x_j‖ of a point set and a pair attaining it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Diameter {
    pub value: f64,
    /// Row indices of two points at distance `value` (equal for a single point).
    pub pair: (usize, usize),
}

/// Exact diameter of the rows `items` of `x` (spec §3 `dist.max`), with the pruning described
/// in the module docs. Errors: no items, an index out of range, non-finite values.
pub fn subset_diameter(x: ArrayView2<f64>, items: &[usize]) -> Result<Diameter, RtfError> {
    let (points, ids) = Points::subset("the point subset", x, items)?;
    let (value, p, q) = diameter(&points, &ids, None, f64::INFINITY, &mut Scratch::default());
    Ok(Diameter {
        value,
        pair: (p as usize, q as usize),
    })
}

/// A ball enclosing the rows `items` of `x` by Ritter's algorithm (centre, radius): at most
/// about 5 % larger than the smallest enclosing ball in practice, never smaller than it.
pub fn bounding_sphere(x: ArrayView2<f64>, items: &[usize]) -> Result<(Vec<f64>, f64), RtfError> {
    let (points, ids) = Points::subset("the point subset", x, items)?;
    let mut centre = Vec::new();
    let radius = enclosing_ball(&points, &ids, &mut centre);
    Ok((centre, radius))
}

/// Reusable buffers of [`diameter`].
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    candidates: Vec<Candidate>,
    centroid: Vec<f64>,
    midpoint: Vec<f64>,
}

/// A point that may be an endpoint of a longer pair, with its distances to the two centres.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    rc: f64,
    rm: f64,
    id: u32,
}

/// The point of `items` farthest from `from`, with its squared distance.
fn farthest(points: &Points, items: &[u32], from: &[f64]) -> (u32, f64) {
    let mut best = (items[0], -1.0);
    for &i in items {
        let d = squared_distance(from, points.row(i));
        if d > best.1 {
            best = (i, d);
        }
    }
    best
}

/// [`farthest`] from the row `from`, writing the centroid of `items` into `centroid`.
fn farthest_and_centroid(
    points: &Points,
    items: &[u32],
    from: u32,
    centroid: &mut Vec<f64>,
) -> (u32, f64) {
    centroid.clear();
    centroid.resize(points.dim(), 0.0);
    let origin = points.row(from);
    let mut best = (items[0], -1.0);
    for &i in items {
        let x = points.row(i);
        for (c, v) in centroid.iter_mut().zip(x) {
            *c += v;
        }
        let d = squared_distance(origin, x);
        if d > best.1 {
            best = (i, d);
        }
    }
    let inv = 1.0 / items.len() as f64;
    centroid.iter_mut().for_each(|c| *c *= inv);
    best
}

/// Exact diameter of `items` (non-empty) as (value, endpoint, endpoint).
///
/// `start`: a point of `items` likely to be extreme (the sweeps begin there); `upper`: a known
/// upper bound (the parent's diameter), reached = done.
pub(crate) fn diameter(
    points: &Points,
    items: &[u32],
    start: Option<u32>,
    upper: f64,
    scratch: &mut Scratch,
) -> (f64, u32, u32) {
    let m = items.len();
    if m < 2 {
        return (0.0, items[0], items[0]);
    }
    if m < BRUTE_FORCE_BELOW {
        let mut best = (0.0, items[0], items[0]);
        for (k, &i) in items.iter().enumerate() {
            let xi = points.row(i);
            for &j in &items[k + 1..] {
                let d = squared_distance(xi, points.row(j));
                if d > best.0 {
                    best = (d, i, j);
                }
            }
        }
        return (best.0.sqrt(), best.1, best.2);
    }
    let upper_sq = upper * upper;
    let Scratch {
        candidates,
        centroid,
        midpoint,
    } = scratch;
    let mut a = start.unwrap_or(items[0]);
    let (mut best_sq, mut p, mut q) = (0.0, a, a);
    for sweep in 0..MAX_SWEEPS {
        // The first sweep also sums the points for the centroid (one pass over the rows).
        let (b, d) = if sweep == 0 {
            farthest_and_centroid(points, items, a, centroid)
        } else {
            farthest(points, items, points.row(a))
        };
        if d <= best_sq {
            break;
        }
        (best_sq, p, q) = (d, a, b);
        if best_sq >= upper_sq {
            return (best_sq.sqrt(), p, q);
        }
        a = b;
    }
    if best_sq == 0.0 {
        // Every point coincides with the start.
        return (0.0, p, p);
    }
    let mut best = best_sq.sqrt();
    midpoint.clear();
    midpoint.extend(
        points
            .row(p)
            .iter()
            .zip(points.row(q))
            .map(|(x, y)| 0.5 * (x + y)),
    );
    candidates.clear();
    let (mut max_c, mut max_m): (f64, f64) = (0.0, 0.0);
    for &i in items {
        let x = points.row(i);
        let rc = squared_distance(x, centroid).sqrt();
        let rm = squared_distance(x, midpoint).sqrt();
        max_c = max_c.max(rc);
        max_m = max_m.max(rm);
        candidates.push(Candidate { rc, rm, id: i });
    }
    let keep = |a: f64, b: f64, best: f64| (a + b) * (1.0 + SLACK) > best;
    candidates.retain(|c| keep(c.rc, max_c, best) && keep(c.rm, max_m, best));
    candidates.sort_unstable_by(|x, y| y.rc.total_cmp(&x.rc).then(x.id.cmp(&y.id)));
    for k in 0..candidates.len() {
        let ci = candidates[k];
        match candidates.get(k + 1) {
            Some(next) if keep(ci.rc, next.rc, best) => {}
            _ => break,
        }
        let xi = points.row(ci.id);
        for cj in &candidates[k + 1..] {
            if !keep(ci.rc, cj.rc, best) {
                break;
            }
            if !keep(ci.rm, cj.rm, best) {
                continue;
            }
            let d = squared_distance(xi, points.row(cj.id));
            if d > best_sq {
                (best_sq, p, q) = (d, ci.id, cj.id);
                best = d.sqrt();
                if best_sq >= upper_sq {
                    return (best, p, q);
                }
            }
        }
    }
    (best, p, q)
}

/// Ritter's bounding sphere of `items` (non-empty): the ball on the farthest pair found from an
/// arbitrary start, grown to take in every point outside it. Writes the centre into `centre`,
/// returns the radius (inflated by a relative 1e-9 against rounding, so it encloses every point).
pub(crate) fn enclosing_ball(points: &Points, items: &[u32], centre: &mut Vec<f64>) -> f64 {
    centre.clear();
    centre.extend_from_slice(points.row(items[0]));
    if items.len() == 1 {
        return 0.0;
    }
    let (b, _) = farthest(points, items, points.row(items[0]));
    let (c, d_bc) = farthest(points, items, points.row(b));
    centre.clear();
    centre.extend(
        points
            .row(b)
            .iter()
            .zip(points.row(c))
            .map(|(x, y)| 0.5 * (x + y)),
    );
    let mut radius = 0.5 * d_bc.sqrt();
    for &i in items {
        let x = points.row(i);
        let d = squared_distance(x, centre).sqrt();
        if d > radius {
            let grown = 0.5 * (radius + d);
            let shift = (grown - radius) / d;
            for (cj, xj) in centre.iter_mut().zip(x) {
                *cj += shift * (xj - *cj);
            }
            radius = grown;
        }
    }
    radius * (1.0 + 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn brute_force(x: &Array2<f64>, items: &[usize]) -> f64 {
        let mut best: f64 = 0.0;
        for &i in items {
            for &j in items {
                let d: f64 = x
                    .row(i)
                    .iter()
                    .zip(x.row(j))
                    .map(|(a, b)| (a - b).powi(2))
                    .sum();
                best = best.max(d.sqrt());
            }
        }
        best
    }

    #[test]
    fn upper_bound_and_start_hints_do_not_change_the_value() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let x = Array2::from_shape_fn((300, 5), |_| rng.random::<f64>());
        let points = Points::stack(&[("x", x.view())]).unwrap();
        let all: Vec<u32> = (0..300).collect();
        let mut scratch = Scratch::default();
        let (full, p, q) = diameter(&points, &all, None, f64::INFINITY, &mut scratch);
        let half: Vec<u32> = (0..150).collect();
        let (plain, ..) = diameter(&points, &half, None, f64::INFINITY, &mut scratch);
        let (hinted, ..) = diameter(&points, &half, Some(7), full, &mut scratch);
        assert_eq!(plain, hinted);
        let expect = brute_force(&x, &(0..150).collect::<Vec<_>>());
        assert!((plain - expect).abs() <= 1e-12 * expect);
        // The pair attains the value.
        let d = squared_distance(points.row(p), points.row(q)).sqrt();
        assert_eq!(d, full);
    }

    #[test]
    fn ritter_ball_encloses_and_is_within_a_quarter_of_jungs_bound() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for d in [1usize, 2, 7] {
            let x = Array2::from_shape_fn((200, d), |_| rng.random::<f64>());
            let items: Vec<usize> = (0..200).collect();
            let (c, r) = bounding_sphere(x.view(), &items).unwrap();
            for row in x.rows() {
                let dist: f64 = row
                    .iter()
                    .zip(&c)
                    .map(|(a, b)| (a - b).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(dist <= r, "point at {dist} outside radius {r}");
            }
            // Any enclosing ball has radius >= diameter / 2; Ritter's is within ~1.2 of optimal,
            // and the optimum is at most diameter · sqrt(d / (2 (d + 1))) (Jung's theorem).
            let diam = brute_force(&x, &items);
            assert!(r >= diam / 2.0);
            let jung = diam * (d as f64 / (2.0 * (d as f64 + 1.0))).sqrt();
            assert!(r <= 1.25 * jung.max(diam / 2.0), "r {r}, jung {jung}");
        }
    }
}
