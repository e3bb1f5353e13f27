//! The exact diameter against brute force, the enclosing ball, and Lemma 3 (the uRTP cut rate
//! of a ball is its radius) for the direction samplers and the ball proposals. Fixed seeds;
//! statistical tolerances are 4.5 binomial standard errors or the 0.1 % KS critical value.

mod common;

use common::{distance, gaussian, ks_critical, ks_statistic, rng, uniform};
use kernel_core::CoreError;
use ndarray::Array2;
use rand::Rng;
use random_tessellation::{
    bounding_sphere, sample_ball_hyperplane, subset_diameter, Direction, Prior, PriorKind, RtfError,
};

fn brute_force(x: &Array2<f64>, items: &[usize]) -> f64 {
    let mut best: f64 = 0.0;
    for (k, &i) in items.iter().enumerate() {
        for &j in &items[k + 1..] {
            best = best.max(distance(
                x.row(i).as_slice().unwrap(),
                x.row(j).as_slice().unwrap(),
            ));
        }
    }
    best
}

fn check(x: &Array2<f64>, items: &[usize], what: &str) {
    let got = subset_diameter(x.view(), items).unwrap();
    let expect = brute_force(x, items);
    assert!(
        (got.value - expect).abs() <= 1e-12 * expect.max(1e-300),
        "{what}: {} vs brute force {expect}",
        got.value
    );
    let (p, q) = got.pair;
    assert!(
        items.contains(&p) && items.contains(&q),
        "{what}: pair not in the subset"
    );
    let pair = distance(x.row(p).as_slice().unwrap(), x.row(q).as_slice().unwrap());
    assert!(
        (pair - got.value).abs() <= 1e-12 * expect.max(1e-300),
        "{what}: pair distance"
    );
}

#[test]
fn diameter_equals_brute_force_on_random_sets() {
    let mut rng = rng(1);
    for &d in &[1usize, 2, 3, 10, 57] {
        for &n in &[1usize, 2, 5, 23, 24, 25, 100, 600] {
            let sets = [
                ("uniform", uniform(n, d, &mut rng)),
                ("gaussian", gaussian(n, d, &mut rng)),
                // Skewed and sparse, like min-max scaled counts: mostly zeros, a few large values.
                (
                    "sparse",
                    Array2::from_shape_fn((n, d), |_| {
                        if rng.random::<f64>() < 0.8 {
                            0.0
                        } else {
                            rng.random::<f64>().powi(4)
                        }
                    }),
                ),
                // Few distinct values: many duplicate points and tied pairs.
                (
                    "lattice",
                    Array2::from_shape_fn((n, d), |_| rng.random_range(0..3) as f64),
                ),
            ];
            for (name, x) in &sets {
                let all: Vec<usize> = (0..n).collect();
                check(x, &all, &format!("{name} n={n} d={d}"));
                // A random subset in random order.
                let subset: Vec<usize> = (0..n).filter(|_| rng.random::<f64>() < 0.6).collect();
                if !subset.is_empty() {
                    check(x, &subset, &format!("{name} subset n={n} d={d}"));
                }
            }
        }
    }
}

#[test]
fn diameter_of_duplicates_and_single_points_is_zero() {
    let x = Array2::from_elem((50, 4), 0.3);
    let all: Vec<usize> = (0..50).collect();
    assert_eq!(subset_diameter(x.view(), &all).unwrap().value, 0.0);
    assert_eq!(subset_diameter(x.view(), &[7]).unwrap().value, 0.0);
    // Two clusters of duplicates.
    let y = Array2::from_shape_fn((60, 3), |(i, j)| if i % 2 == 0 { j as f64 } else { 0.0 });
    let all: Vec<usize> = (0..60).collect();
    check(&y, &all, "two duplicated points");
    assert!(matches!(
        subset_diameter(x.view(), &[]),
        Err(RtfError::Core(CoreError::EmptyInput { .. }))
    ));
    assert!(matches!(
        subset_diameter(x.view(), &[50]),
        Err(RtfError::IndexOutOfRange { index: 50, .. })
    ));
    let mut bad = x.clone();
    bad[[3, 1]] = f64::NAN;
    assert!(matches!(
        subset_diameter(bad.view(), &[0, 3]),
        Err(RtfError::Core(CoreError::NonFiniteInput { .. }))
    ));
}

#[test]
fn bounding_sphere_encloses_every_point() {
    let mut rng = rng(2);
    for &(n, d) in &[(1usize, 3usize), (2, 1), (40, 2), (500, 10), (300, 57)] {
        let x = gaussian(n, d, &mut rng);
        let items: Vec<usize> = (0..n).collect();
        let (centre, radius) = bounding_sphere(x.view(), &items).unwrap();
        let diam = subset_diameter(x.view(), &items).unwrap().value;
        assert!(
            radius >= diam / 2.0 - 1e-12,
            "a ball holding a pair at distance D has r >= D/2"
        );
        for row in x.rows() {
            assert!(distance(row.as_slice().unwrap(), &centre) <= radius);
        }
    }
}

/// Whether the hyperplane {⟨n, x⟩ = offset} meets the closed ball B(centre, r).
fn hits(direction: &Direction, offset: f64, centre: &[f64], r: f64) -> bool {
    (direction.project(centre) - offset).abs() <= r
}

/// φ(n, u) = {⟨n, x⟩ = u} with u >= 0 needs an oriented normal: an MRTP draw `Axis(j)` stands
/// for ±e_j with equal probability (λ_d symmetric), so orient it with a fair sign.
fn oriented_hits(direction: &Direction, u: f64, centre: &[f64], r: f64, flip: bool) -> bool {
    match direction {
        Direction::Axis(_) if flip => hits(direction, -u, centre, r),
        _ => hits(direction, u, centre, r),
    }
}

#[test]
fn lemma3_fraction_of_hyperplanes_hitting_an_inner_ball_is_r_over_big_r() {
    // Hyperplanes φ(n, u) with n ~ λ_d and u ~ U[0, R] are Λ restricted to [B(0, R)]
    // normalised; for a ball B(x0, r) ⊂ B(0, R), Λ([B(x0, r)]) = r, so the fraction is r / R
    // wherever the ball sits (translation invariance needs a symmetric λ_d).
    let mut rng = rng(3);
    let big_r = 2.0;
    let n_draws = 100_000;
    for (kind, weights) in [
        (PriorKind::Uniform, None),
        (PriorKind::Uniform, Some(vec![3.0, 1.0, 0.5])),
        (PriorKind::Mondrian, None),
        (PriorKind::Mondrian, Some(vec![0.2, 0.5, 0.3])),
    ] {
        let prior = Prior::new(kind, 3, weights.as_deref()).unwrap();
        for (x0, r) in [
            (vec![0.0, 0.0, 0.0], 0.5),
            (vec![0.9, -0.6, 0.3], 0.6),
            (vec![0.0, 1.2, -0.5], 0.3),
        ] {
            let hit = (0..n_draws)
                .filter(|_| {
                    let n = prior.sample_direction(&mut rng);
                    let u = rng.random::<f64>() * big_r;
                    oriented_hits(&n, u, &x0, r, rng.random::<bool>())
                })
                .count();
            let p = r / big_r;
            let se = (p * (1.0 - p) / n_draws as f64).sqrt();
            let got = hit as f64 / n_draws as f64;
            assert!(
                (got - p).abs() < 4.5 * se,
                "{kind:?} {x0:?} r={r}: fraction {got} vs r/R = {p}"
            );
        }
    }
    // The same in d = 10 for uRTP.
    let prior = Prior::new(PriorKind::Uniform, 10, None).unwrap();
    let x0: Vec<f64> = (0..10).map(|j| 0.2 * (j as f64 - 4.5) / 4.5).collect();
    let hit = (0..n_draws)
        .filter(|_| {
            let n = prior.sample_direction(&mut rng);
            hits(&n, rng.random::<f64>() * big_r, &x0, 0.7)
        })
        .count();
    let p = 0.7 / big_r;
    let se = (p * (1.0 - p) / n_draws as f64).sqrt();
    assert!((hit as f64 / n_draws as f64 - p).abs() < 4.5 * se);
}

#[test]
fn ball_proposals_hit_an_inner_ball_with_probability_r_over_big_r() {
    let mut rng = rng(4);
    let n_draws = 100_000;
    for kind in [PriorKind::Uniform, PriorKind::Mondrian] {
        let prior = Prior::new(kind, 4, Some(&[1.0, 2.0, 3.0, 4.0])).unwrap();
        let centre = [1.0, -2.0, 0.5, 3.0];
        let big_r = 1.5;
        let inner = [1.3, -2.4, 0.2, 3.5];
        let r = 0.4; // |inner - centre| ≈ 0.71, so B(inner, r) ⊂ B(centre, R)
        assert!(distance(&inner, &centre) + r < big_r);
        let hit = (0..n_draws)
            .filter(|_| {
                let h = sample_ball_hyperplane(&centre, big_r, &prior, &mut rng).unwrap();
                hits(&h.direction, h.offset, &inner, r)
            })
            .count();
        let p = r / big_r;
        let se = (p * (1.0 - p) / n_draws as f64).sqrt();
        let got = hit as f64 / n_draws as f64;
        assert!((got - p).abs() < 4.5 * se, "{kind:?}: {got} vs {p}");
    }
    let prior = Prior::new(PriorKind::Uniform, 2, None).unwrap();
    assert!(sample_ball_hyperplane(&[0.0; 3], 1.0, &prior, &mut rng).is_err());
    assert!(sample_ball_hyperplane(&[0.0; 2], f64::NAN, &prior, &mut rng).is_err());
}

#[test]
fn urtp_directions_are_uniform_on_the_sphere() {
    // Archimedes: the last coordinate of a uniform point of S^2 is uniform on [-1, 1].
    let mut rng = rng(5);
    let prior = Prior::new(PriorKind::Uniform, 3, None).unwrap();
    let z: Vec<f64> = (0..20_000)
        .map(|_| match prior.sample_direction(&mut rng) {
            Direction::Unit(n) => n[2],
            Direction::Axis(_) => unreachable!("uRTP draws unit vectors"),
        })
        .collect();
    let n = z.len();
    let ks = ks_statistic(z, |t| ((t + 1.0) / 2.0).clamp(0.0, 1.0));
    assert!(ks < ks_critical(n), "KS {ks}");
}
