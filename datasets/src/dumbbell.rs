//! The Dumbbell, the five-dimensional benchmark of the StreaMRAK paper (spec `streamrak.md`
//! §8.2): two unit spheres S⁴ centred at 0 and at (4, 0, 0, 0, 0) joined by a bar
//! [0, 4] × [−½, ½] (other coordinates 0) with the points inside either unit ball removed; the
//! target depends on x₁ only: 1 on the left sphere, −1 on the right, an oscillating ramp on the
//! bar between x₁ = 1 and 3.

use std::f64::consts::PI;

use ndarray::{Array1, Array2};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::error::ParamError;

/// Dimension.
pub const DIM: usize = 5;
/// The paper's sizes: points per sphere, points drawn on the bar before the balls are cut out.
pub const PAPER_SIZES: (usize, usize) = (1_000_000, 1_000_000);

/// f(x₁) with a = −1, b = 2: 1 for x₁ ≤ 1, b + 3a = −1 for x₁ ≥ 3, else
/// A₁ sin(B₁x₁ + φ₁) cos(B₂x₁ + φ₂) + a x₁ + b with B₁ = 2π, φ₁ = −2π, A₁ = −a/B₁, B₂ = 7π,
/// φ₂ = −7π (continuous at 1 and 3).
pub fn target(x1: f64) -> f64 {
    let (a, b) = (-1.0, 2.0);
    if x1 <= 1.0 {
        1.0
    } else if x1 >= 3.0 {
        b + 3.0 * a
    } else {
        let (b1, b2) = (2.0 * PI, 7.0 * PI);
        (-a / b1) * (b1 * x1 - 2.0 * PI).sin() * (b2 * x1 - 7.0 * PI).cos() + a * x1 + b
    }
}

/// `n_sphere` points on each unit sphere (normalised Gaussians) and `n_bar` uniform points on
/// the bar of which those inside either unit ball are dropped; shuffled, one row per point, with
/// their targets (no noise, as the authors' code).
pub fn sample<R: Rng + ?Sized>(
    n_sphere: usize,
    n_bar: usize,
    rng: &mut R,
) -> Result<(Array2<f64>, Array1<f64>), ParamError> {
    if n_sphere + n_bar == 0 {
        return Err(ParamError::ZeroPoints);
    }
    let mut points: Vec<[f64; DIM]> = Vec::with_capacity(2 * n_sphere + n_bar);
    for centre in [0.0, 4.0] {
        for _ in 0..n_sphere {
            let mut p = [0.0; DIM];
            let mut norm = 0.0_f64;
            while norm == 0.0 {
                p = std::array::from_fn(|_| StandardNormal.sample(rng));
                norm = p.iter().map(|v| v * v).sum::<f64>().sqrt();
            }
            p.iter_mut().for_each(|v| *v /= norm);
            p[0] += centre;
            points.push(p);
        }
    }
    for _ in 0..n_bar {
        let (x1, x2) = (rng.random_range(0.0..4.0), rng.random_range(-0.5..0.5));
        let inside = |c: f64| (x1 - c).powi(2) + x2 * x2 < 1.0;
        if !inside(0.0) && !inside(4.0) {
            points.push([x1, x2, 0.0, 0.0, 0.0]);
        }
    }
    points.shuffle(rng);
    let y = points.iter().map(|p| target(p[0])).collect();
    let x = Array2::from_shape_fn((points.len(), DIM), |(i, j)| points[i][j]);
    Ok((x, Array1::from_vec(y)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn spheres_are_unit_spheres_the_bar_avoids_the_balls_and_about_half_of_it_is_kept() {
        let (x, y) = sample(20_000, 100_000, &mut ChaCha8Rng::seed_from_u64(2)).unwrap();
        let kept = x.nrows() - 40_000;
        // The bar [0, 4] x [-1/2, 1/2] minus two half-discs cut by |x2| < 1/2: about 48 % removed.
        let share = kept as f64 / 100_000.0;
        assert!((share - 0.52).abs() < 0.01, "kept {share}");
        let (mut spheres, mut bar) = (0, 0);
        for (row, &t) in x.rows().into_iter().zip(&y) {
            let r0 = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            let r4 =
                ((row[0] - 4.0).powi(2) + row.iter().skip(1).map(|v| v * v).sum::<f64>()).sqrt();
            if (r0 - 1.0).abs() < 1e-12 || (r4 - 1.0).abs() < 1e-12 {
                spheres += 1;
            } else {
                bar += 1;
                assert!(r0 >= 1.0 && r4 >= 1.0 && row[2] == 0.0 && row[3] == 0.0 && row[4] == 0.0);
            }
            assert_eq!(t, target(row[0]));
        }
        assert_eq!((spheres, bar), (40_000, kept));
    }

    #[test]
    fn the_target_is_continuous_at_the_ends_of_the_ramp() {
        for (x, expected) in [(1.0, 1.0), (3.0, -1.0)] {
            for dx in [-1e-9, 1e-9] {
                assert!((target(x + dx) - expected).abs() < 1e-7, "at {}", x + dx);
            }
        }
        assert_eq!(target(-0.5), 1.0);
        assert_eq!(target(4.7), -1.0);
        assert!(sample(0, 0, &mut ChaCha8Rng::seed_from_u64(0)).is_err());
    }
}
