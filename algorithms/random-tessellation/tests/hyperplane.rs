//! The tess19 rejection sampler (spec §3, §11 items 2-3): accepted offsets are uniform on the
//! projected training range, accepted directions have density ∝ width_n · λ_d(n), and for MRTP
//! the cut dimension has probability ∝ ω_j × extent_j. Fixed seeds; KS at 0.1 %, chi-square at
//! its 0.1 % point.

mod common;

use kernel_core::CoreError;
use std::f64::consts::PI;

use common::{chi_square, chi_square_critical, ks_critical, ks_statistic, rng, uniform};
use ndarray::{Array2, ArrayView2};
use rand::Rng;
use random_tessellation::{
    sample_cell_hyperplane, subset_diameter, Direction, Hyperplane, Prior, PriorKind, RtfError,
};

/// Points filling the box Π [0, extent_j], its corners included (so the hull is the box).
fn box_points(extents: &[f64], n_inner: usize, rng: &mut impl Rng) -> Array2<f64> {
    let d = extents.len();
    let corners = 1usize << d;
    Array2::from_shape_fn((corners + n_inner, d), |(i, j)| {
        if i < corners {
            if (i >> j) & 1 == 1 {
                extents[j]
            } else {
                0.0
            }
        } else {
            rng.random::<f64>() * extents[j]
        }
    })
}

fn projected_range(x: ArrayView2<f64>, h: &Hyperplane) -> (f64, f64) {
    x.rows()
        .into_iter()
        .map(|r| h.project(r.as_slice().unwrap()))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, u), t| {
            (l.min(t), u.max(t))
        })
}

#[test]
fn accepted_offsets_are_uniform_on_the_projected_range() {
    let mut rng = rng(11);
    for (kind, d) in [
        (PriorKind::Uniform, 2),
        (PriorKind::Uniform, 5),
        (PriorKind::Mondrian, 3),
    ] {
        let x = uniform(60, d, &mut rng);
        let items: Vec<usize> = (0..60).collect();
        let dist_max = subset_diameter(x.view(), &items).unwrap().value;
        let prior = Prior::new(kind, d, None).unwrap();
        let mut u = Vec::new();
        while u.len() < 5000 {
            let s =
                sample_cell_hyperplane(x.view(), &items, dist_max, &prior, 20, &mut rng).unwrap();
            if let Some(h) = s.hyperplane {
                let (lo, hi) = projected_range(x.view(), &h);
                assert!(lo <= h.offset && h.offset < hi);
                u.push((h.offset - lo) / (hi - lo));
            }
        }
        let n = u.len();
        let ks = ks_statistic(u, |t| t.clamp(0.0, 1.0));
        assert!(ks < ks_critical(n), "{kind:?} d={d}: KS {ks}");
    }
}

#[test]
fn accepted_directions_have_density_proportional_to_the_width_on_a_thin_rectangle() {
    // Hull = [0, a] × [0, b]; width along n = (cos θ, sin θ) is a|cos θ| + b|sin θ|; λ_d is
    // uniform, so accepted θ (mod π) has density ∝ a|cos θ| + b|sin θ|.
    let (a, b) = (1.0, 0.1);
    let mut rng = rng(12);
    let x = box_points(&[a, b], 40, &mut rng);
    let items: Vec<usize> = (0..x.nrows()).collect();
    let dist_max = subset_diameter(x.view(), &items).unwrap().value;
    assert!((dist_max - (a * a + b * b).sqrt()).abs() < 1e-12);
    let prior = Prior::new(PriorKind::Uniform, 2, None).unwrap();
    let bins = 18;
    let mut observed = vec![0u64; bins];
    let (mut accepted, mut proposals) = (0usize, 0usize);
    while accepted < 20_000 {
        // One proposal per attempt, so the acceptance frequency is P(μ < width).
        let s = sample_cell_hyperplane(x.view(), &items, dist_max, &prior, 1, &mut rng).unwrap();
        proposals += s.proposals;
        let Some(h) = s.hyperplane else { continue };
        let Direction::Unit(n) = &h.direction else {
            panic!("uRTP gives unit normals")
        };
        let theta = n[1].atan2(n[0]).rem_euclid(PI);
        observed[((theta / PI * bins as f64) as usize).min(bins - 1)] += 1;
        accepted += 1;
    }
    // ∫ a|cos| + b|sin| over a bin of [0, π), normalised by its integral 2(a + b).
    let antiderivative = |t: f64| {
        let c = if t <= PI / 2.0 {
            a * t.sin()
        } else {
            a * (2.0 - t.sin())
        };
        c + b * (1.0 - t.cos())
    };
    let expected: Vec<f64> = (0..bins)
        .map(|k| {
            let (lo, hi) = (
                k as f64 * PI / bins as f64,
                (k + 1) as f64 * PI / bins as f64,
            );
            (antiderivative(hi) - antiderivative(lo)) / (2.0 * (a + b))
        })
        .collect();
    assert!((expected.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    let chi2 = chi_square(&observed, &expected);
    assert!(
        chi2 < chi_square_critical(bins - 1),
        "chi-square {chi2}: {observed:?}"
    );
    // P(accept) = E[width_n] / dist.max = (2/π)(a + b) / dist.max.
    let p = 2.0 / PI * (a + b) / dist_max;
    let got = accepted as f64 / proposals as f64;
    let se = (p * (1.0 - p) / proposals as f64).sqrt();
    assert!((got - p).abs() < 4.5 * se, "acceptance {got} vs {p}");
}

#[test]
fn mrtp_cut_dimensions_follow_weight_times_extent() {
    let extents = [1.0, 2.0, 0.5, 3.0];
    let weights = [0.4, 0.1, 0.3, 0.2];
    let mut rng = rng(13);
    let x = box_points(&extents, 50, &mut rng);
    let items: Vec<usize> = (0..x.nrows()).collect();
    let dist_max = subset_diameter(x.view(), &items).unwrap().value;
    let prior = Prior::new(PriorKind::Mondrian, 4, Some(&weights)).unwrap();
    let mut observed = [0u64; 4];
    let mut offsets: Vec<Vec<f64>> = vec![Vec::new(); 4];
    while observed.iter().sum::<u64>() < 20_000 {
        let s = sample_cell_hyperplane(x.view(), &items, dist_max, &prior, 20, &mut rng).unwrap();
        if let Some(Hyperplane {
            direction: Direction::Axis(j),
            offset,
        }) = s.hyperplane
        {
            observed[j] += 1;
            offsets[j].push(offset / extents[j]);
        }
    }
    let mass: Vec<f64> = weights.iter().zip(&extents).map(|(w, e)| w * e).collect();
    let total: f64 = mass.iter().sum();
    let expected: Vec<f64> = mass.iter().map(|m| m / total).collect();
    let chi2 = chi_square(&observed, &expected);
    assert!(
        chi2 < chi_square_critical(3),
        "chi-square {chi2}: {observed:?} vs {expected:?}"
    );
    // Given the dimension, the location is uniform on the extent (the Mondrian rule).
    for (j, u) in offsets.into_iter().enumerate() {
        let n = u.len();
        let ks = ks_statistic(u, |t| t.clamp(0.0, 1.0));
        assert!(ks < ks_critical(n), "dimension {j}: KS {ks}");
    }
}

#[test]
fn the_sampler_gives_up_after_max_rejections_and_checks_its_inputs() {
    let mut rng = rng(14);
    // Zero-width hull (all points on a vertical line) under an x-only Mondrian prior: every
    // proposal is rejected, so each attempt makes exactly max_rejections proposals.
    let x = Array2::from_shape_fn((10, 2), |(i, j)| if j == 0 { 0.5 } else { i as f64 });
    let items: Vec<usize> = (0..10).collect();
    let prior = Prior::new(PriorKind::Mondrian, 2, Some(&[1.0, 0.0])).unwrap();
    let s = sample_cell_hyperplane(x.view(), &items, 9.0, &prior, 7, &mut rng).unwrap();
    assert_eq!(s.hyperplane, None);
    assert_eq!(s.proposals, 7);
    let uniform2 = Prior::new(PriorKind::Uniform, 2, None).unwrap();
    let uniform3 = Prior::new(PriorKind::Uniform, 3, None).unwrap();
    assert!(matches!(
        sample_cell_hyperplane(x.view(), &items, 1.0, &uniform3, 20, &mut rng),
        Err(RtfError::Core(CoreError::ShapeMismatch { .. }))
    ));
    assert!(sample_cell_hyperplane(x.view(), &[], 1.0, &uniform2, 20, &mut rng).is_err());
    assert!(sample_cell_hyperplane(x.view(), &[10], 1.0, &uniform2, 20, &mut rng).is_err());
    assert!(sample_cell_hyperplane(x.view(), &items, f64::NAN, &uniform2, 20, &mut rng).is_err());
    assert!(sample_cell_hyperplane(x.view(), &items, 1.0, &uniform2, 0, &mut rng).is_err());
}
