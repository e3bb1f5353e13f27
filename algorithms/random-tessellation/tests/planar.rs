//! The planar RTP draw (Figs. 1-2 pictures): cells partition the rectangle into convex polygons,
//! and the mean number of cuts matches integral geometry: E[cuts] = τ·per/(2π) + τ²·area/(4π)
//! for uRTP (STIT sections are Poisson) and E[cells] = Π_j (1 + τ ω_j ext_j / 2) for MRTP.
//! Fixed seeds; tolerance 4.5 standard errors of the mean.

mod common;

use std::f64::consts::PI;

use common::rng;
use rand::Rng;
use random_tessellation::{tessellate_rectangle, Prior, PriorKind};

fn signed_area(poly: &[[f64; 2]]) -> f64 {
    (0..poly.len())
        .map(|k| {
            let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum::<f64>()
        / 2.0
}

fn cross(o: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
}

/// Strictly inside a counter-clockwise convex polygon (margin `eps`), or strictly outside.
fn inside(poly: &[[f64; 2]], p: [f64; 2], eps: f64) -> Option<bool> {
    let mut min: f64 = f64::INFINITY;
    for k in 0..poly.len() {
        let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
        let len = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
        if len > 0.0 {
            min = min.min(cross(a, b, p) / len);
        }
    }
    if min > eps {
        Some(true)
    } else if min < -eps {
        Some(false)
    } else {
        None
    }
}

#[test]
fn cells_are_convex_and_partition_the_rectangle() {
    let mut rng = rng(31);
    let (w, h) = (2.0, 1.0);
    for kind in [PriorKind::Uniform, PriorKind::Mondrian] {
        let prior = Prior::new(kind, 2, None).unwrap();
        for _ in 0..20 {
            let cells = tessellate_rectangle(w, h, &prior, 12.0, &mut rng).unwrap();
            let total: f64 = cells.iter().map(|c| signed_area(c)).sum();
            assert!(
                (total - w * h).abs() < 1e-9,
                "{kind:?}: areas sum to {total}"
            );
            for c in &cells {
                assert!(
                    c.len() >= 3 && signed_area(c) > 0.0,
                    "{kind:?}: counter-clockwise"
                );
                for k in 0..c.len() {
                    let turn = cross(c[k], c[(k + 1) % c.len()], c[(k + 2) % c.len()]);
                    assert!(turn >= -1e-12, "{kind:?}: a reflex vertex");
                    let v = c[k];
                    assert!((-1e-12..=w + 1e-12).contains(&v[0]));
                    assert!((-1e-12..=h + 1e-12).contains(&v[1]));
                }
                if kind == PriorKind::Mondrian {
                    for k in 0..c.len() {
                        let (a, b) = (c[k], c[(k + 1) % c.len()]);
                        assert!(a[0] == b[0] || a[1] == b[1], "MRTP edge {a:?} -> {b:?}");
                    }
                }
            }
            // Every point lies in exactly one cell.
            for _ in 0..100 {
                let p = [rng.random::<f64>() * w, rng.random::<f64>() * h];
                let mut count = 0;
                let mut ambiguous = false;
                for c in &cells {
                    match inside(c, p, 1e-9) {
                        Some(true) => count += 1,
                        None => ambiguous = true,
                        Some(false) => {}
                    }
                }
                assert!(ambiguous || count == 1, "{kind:?}: point in {count} cells");
            }
        }
    }
}

#[test]
fn a_tiny_budget_leaves_the_rectangle_whole() {
    let mut rng = rng(32);
    let prior = Prior::new(PriorKind::Uniform, 2, None).unwrap();
    let cells = tessellate_rectangle(3.0, 1.0, &prior, 1e-12, &mut rng).unwrap();
    assert_eq!(
        cells,
        vec![vec![[0.0, 0.0], [3.0, 0.0], [3.0, 1.0], [0.0, 1.0]]]
    );
    let cells = tessellate_rectangle(3.0, 1.0, &prior, 0.0, &mut rng).unwrap();
    assert_eq!(cells.len(), 1);
}

fn mean_and_se(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

#[test]
fn mean_number_of_cuts_matches_integral_geometry() {
    let mut rng = rng(33);
    let (w, h) = (1.0, 0.5);
    let runs = 4000;
    let uniform = Prior::new(PriorKind::Uniform, 2, None).unwrap();
    let mut previous = 0.0;
    for budget in [4.0, 10.0] {
        let cuts: Vec<f64> = (0..runs)
            .map(|_| {
                (tessellate_rectangle(w, h, &uniform, budget, &mut rng)
                    .unwrap()
                    .len()
                    - 1) as f64
            })
            .collect();
        let (mean, se) = mean_and_se(&cuts);
        let expect = budget * 2.0 * (w + h) / (2.0 * PI) + budget * budget * w * h / (4.0 * PI);
        assert!(
            (mean - expect).abs() < 4.5 * se,
            "uRTP τ={budget}: {mean} vs {expect} (se {se})"
        );
        assert!(mean > previous, "the number of cuts grows with the budget");
        previous = mean;
    }
    let weights = [0.7, 0.3];
    let mondrian = Prior::new(PriorKind::Mondrian, 2, Some(&weights)).unwrap();
    let budget = 10.0;
    let cells: Vec<f64> = (0..runs)
        .map(|_| {
            tessellate_rectangle(w, h, &mondrian, budget, &mut rng)
                .unwrap()
                .len() as f64
        })
        .collect();
    let (mean, se) = mean_and_se(&cells);
    let expect = (1.0 + budget * weights[0] * w / 2.0) * (1.0 + budget * weights[1] * h / 2.0);
    assert!(
        (mean - expect).abs() < 4.5 * se,
        "MRTP: {mean} vs {expect} (se {se})"
    );
}

#[test]
fn bad_arguments_are_errors() {
    let mut rng = rng(34);
    let prior = Prior::new(PriorKind::Uniform, 2, None).unwrap();
    let prior3 = Prior::new(PriorKind::Uniform, 3, None).unwrap();
    assert!(tessellate_rectangle(1.0, 1.0, &prior3, 1.0, &mut rng).is_err());
    assert!(tessellate_rectangle(0.0, 1.0, &prior, 1.0, &mut rng).is_err());
    assert!(tessellate_rectangle(1.0, f64::NAN, &prior, 1.0, &mut rng).is_err());
    assert!(tessellate_rectangle(1.0, 1.0, &prior, f64::INFINITY, &mut rng).is_err());
    assert!(tessellate_rectangle(1.0, 1.0, &prior, -1.0, &mut rng).is_err());
}
