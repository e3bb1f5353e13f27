//! The kernel menu against independent computations (spec §10): finite differences of every
//! gradient, the exact kernels the random features approximate, and the reductions the spec
//! states (GM with one component at μ = 0 is ARD; PWL with χ_d heights is RBF).

use fastfood::fit::objective;
use fastfood::{ArdPoint, Family, FeatureModel, KernelSpec};
use ndarray::{Array1, Array2, ArrayView2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn spec(family: Family, m: usize) -> KernelSpec {
    KernelSpec {
        family,
        m,
        components: 2,
        intervals: 6,
    }
}

fn data(n: usize, d: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Array2::from_shape_fn((n, d), |_| rng.random::<f64>() * 2.0 - 1.0);
    let y = Array1::from_shape_fn(n, |i| (2.0 * x[[i, 0]]).sin() + 0.3 * rng.random::<f64>());
    (x, y)
}

/// A point away from the start, so that no gradient vanishes by symmetry.
fn jittered(model: &FeatureModel, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let at = ArdPoint {
        noise: 0.05,
        signal: 1.3,
        lengths: (0..model.dim()).map(|k| 0.7 + 0.2 * k as f64).collect(),
    };
    model
        .start(&at, rng)
        .into_iter()
        .map(|v| v + 0.05 * (rng.random::<f64>() - 0.5))
        .collect()
}

#[test]
fn every_gradient_matches_central_differences() {
    // Spec §10.5: random small problems, n = 30; D = 2m small; both likelihood forms (n < D and
    // n >= D) are crossed by the two sizes.
    for (family, m) in [
        (Family::Rbf, 6),
        (Family::Ard, 6),
        (Family::Fsard, 6),
        (Family::Fsgbard, 6),
        (Family::Pwl, 6),
        (Family::Gm, 8),
        (Family::Ssgpr, 6),
        (Family::Rbf, 40),
        (Family::Ard, 40),
        (Family::Fsgbard, 40),
        (Family::Gm, 40),
    ] {
        let (x, y) = data(30, 5, 11);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let model = FeatureModel::new(spec(family, m), 5, 1e-6, None, &mut rng).unwrap();
        let theta = jittered(&model, &mut rng);
        let (_, g) = objective(&model, &theta, x.view(), y.view()).unwrap();
        let mut worst: f64 = 0.0;
        for k in 0..theta.len() {
            let eps = 1e-6;
            let (mut p, mut q) = (theta.clone(), theta.clone());
            p[k] += eps;
            q[k] -= eps;
            let fp = objective(&model, &p, x.view(), y.view()).unwrap().0;
            let fq = objective(&model, &q, x.view(), y.view()).unwrap().0;
            let fd = (fp - fq) / (2.0 * eps);
            worst = worst.max((fd - g[k]).abs());
            assert!(
                (fd - g[k]).abs() < 1e-7,
                "{family:?} m = {m}: θ_{k} analytic {} vs central difference {fd}",
                g[k]
            );
        }
        assert!(worst.is_finite());
        let norm: f64 = g.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(
            norm > 1e-3,
            "{family:?}: a vanishing gradient checks nothing ({norm})"
        );
    }
}

/// RBF's gradient reads the projections Z and keeps ∂log p/∂Φ's rank-one term apart; given
/// neither (Z recomputed, ∂log p/∂Φ whole), and through the backward pass as ARD with every
/// lengthscale equal (the chain rule the other way round), it is the same to rounding.
#[test]
fn rbf_gradient_is_the_same_by_every_route() {
    use fastfood::evidence::{evidence, Gradients};
    // d = 70 pads to 128: two batches of rows per chunk (the others: one).
    for (n, d, m) in [(30, 5, 6), (30, 5, 40), (150, 5, 64), (100, 70, 40)] {
        let (x, y) = data(n, d, 7);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let rbf = FeatureModel::new(spec(Family::Rbf, m), d, 1e-6, None, &mut rng).unwrap();
        let theta = jittered(&rbf, &mut rng);
        let (_, g) = objective(&rbf, &theta, x.view(), y.view()).unwrap();
        let phi = rbf.features(&theta, x.view()).unwrap();
        let e = evidence(phi.view(), y.view(), rbf.noise(&theta), Gradients::Full).unwrap();
        let whole = rbf
            .gradient(&theta, x.view(), phi.view(), None, &e)
            .unwrap();
        // Z given in column-major order: the same.
        let (_, z) = rbf
            .features_and_projections(&theta, x.view(), true)
            .unwrap();
        let z_columns = z.unwrap().t().as_standard_layout().to_owned();
        let given = rbf
            .gradient(&theta, x.view(), phi.view(), Some(z_columns.t()), &e)
            .unwrap();
        assert_eq!(given, whole);
        // ARD on the same Fastfood draw (the seed), every log-lengthscale θ₂: its gradient's
        // lengthscale entries sum to RBF's.
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let ard = FeatureModel::new(spec(Family::Ard, m), d, 1e-6, None, &mut rng).unwrap();
        let mut theta_ard = theta[..2].to_vec();
        theta_ard.extend(std::iter::repeat_n(theta[2], d));
        assert_eq!(ard.features(&theta_ard, x.view()).unwrap(), phi);
        let (_, g_ard) = objective(&ard, &theta_ard, x.view(), y.view()).unwrap();
        let backward = [g_ard[0], g_ard[1], g_ard[2..].iter().sum::<f64>()];
        // Projections given to a family that does not read them are ignored.
        let e_ard = evidence(phi.view(), y.view(), ard.noise(&theta_ard), Gradients::Full).unwrap();
        assert_eq!(
            ard.gradient(
                &theta_ard,
                x.view(),
                phi.view(),
                Some(z_columns.t()),
                &e_ard
            )
            .unwrap(),
            ard.gradient(&theta_ard, x.view(), phi.view(), None, &e_ard)
                .unwrap()
        );
        let n = n as f64;
        for k in 0..3 {
            let scale = g[k].abs().max(1e-3);
            assert!(
                (g[k] + whole[k] / n).abs() < 1e-12 * scale,
                "θ_{k}, n = {n}, m = {m}"
            );
            assert!(
                (g[k] - backward[k]).abs() < 1e-11 * scale,
                "θ_{k}, n = {n}, m = {m}"
            );
        }
    }
}

/// The Monte Carlo mean over `draws` models of φ(a)ᵀφ(b) at the start from `at`.
fn mean_kernel(
    family: Family,
    m: usize,
    at: &ArdPoint,
    pairs: ArrayView2<f64>,
    draws: u64,
    components: usize,
) -> Vec<f64> {
    let d = pairs.ncols();
    let mut acc = vec![0.0; pairs.nrows() / 2];
    for s in 0..draws {
        let mut rng = ChaCha8Rng::seed_from_u64(100 + s);
        let sp = KernelSpec {
            family,
            m,
            components,
            intervals: 40,
        };
        let model = FeatureModel::new(sp, d, 1e-6, None, &mut rng).unwrap();
        let mut theta = model.start(at, &mut rng);
        if family == Family::Gm {
            // Every component at μ = 0 with the ARD lengthscales: the mixture is ARD.
            for c in model
                .gm_components(&theta)
                .iter()
                .enumerate()
                .map(|(c, _)| c)
            {
                let o = 1 + c * (1 + 2 * d);
                for k in 0..d {
                    theta[o + 1 + d + k] = 0.0;
                }
            }
        }
        let phi = model.features(&theta, pairs).unwrap();
        for (p, a) in acc.iter_mut().enumerate() {
            *a += phi.row(2 * p).dot(&phi.row(2 * p + 1)) / draws as f64;
        }
    }
    acc
}

fn ard_kernel(a: &[f64], b: &[f64], at: &ArdPoint) -> f64 {
    let r2: f64 = a
        .iter()
        .zip(b)
        .zip(&at.lengths)
        .map(|((p, q), l)| ((p - q) / l).powi(2))
        .sum();
    at.signal * (-0.5 * r2).exp()
}

fn pairs(d: usize) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    Array2::from_shape_fn((12, d), |(i, _)| {
        (rng.random::<f64>() - 0.5) * (0.3 + 0.25 * (i / 2) as f64)
    })
}

#[test]
fn fastfood_kernels_approximate_their_exact_kernels() {
    // Spec §10.3, 10.6, 10.7: the mean of φ(x)ᵀφ(x') over independent draws approaches the
    // exact kernel (Monte Carlo error ~ 1/√(m · draws)).
    let d = 6;
    let at = ArdPoint {
        noise: 0.1,
        signal: 1.0,
        lengths: vec![0.8, 1.0, 1.2, 0.9, 1.5, 1.1],
    };
    let p = pairs(d);
    for (family, components, tol) in [
        (Family::Ard, 1, 0.02),
        (Family::Gm, 1, 0.02),
        (Family::Gm, 3, 0.02),
        (Family::Pwl, 1, 0.03),
        (Family::Ssgpr, 1, 0.02),
    ] {
        let k = mean_kernel(family, 256, &at, p.view(), 60, components);
        for (i, kv) in k.iter().enumerate() {
            let exact = ard_kernel(
                p.row(2 * i).as_slice().unwrap(),
                p.row(2 * i + 1).as_slice().unwrap(),
                &at,
            );
            assert!(
                (kv - exact).abs() < tol,
                "{family:?} (Q = {components}), pair {i}: {kv} vs exact {exact}"
            );
        }
    }
    // RBF: one lengthscale, the geometric mean of the ARD ones.
    let g = at.lengths.iter().map(|l| l.ln()).sum::<f64>() / d as f64;
    let iso = ArdPoint {
        lengths: vec![g.exp(); d],
        ..at.clone()
    };
    let k = mean_kernel(Family::Rbf, 256, &at, p.view(), 60, 1);
    for (i, kv) in k.iter().enumerate() {
        let exact = ard_kernel(
            p.row(2 * i).as_slice().unwrap(),
            p.row(2 * i + 1).as_slice().unwrap(),
            &iso,
        );
        assert!((kv - exact).abs() < 0.02, "RBF pair {i}: {kv} vs {exact}");
    }
}

#[test]
fn flexible_kernels_start_at_the_ard_solution() {
    // FSARD and FSGBARD reuse the ARD draw and scales: same features at the start.
    let (x, _) = data(20, 4, 1);
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let ard = FeatureModel::new(spec(Family::Ard, 16), 4, 1e-6, None, &mut rng).unwrap();
    let at = ArdPoint::default_start(4, 1.0);
    let phi = ard.features(&ard.start(&at, &mut rng), x.view()).unwrap();
    for family in [Family::Fsard, Family::Fsgbard] {
        let draw = ard.draws()[0].clone();
        let f = FeatureModel::new(spec(family, 16), 4, 1e-6, Some(draw), &mut rng).unwrap();
        let other = f.features(&f.start(&at, &mut rng), x.view()).unwrap();
        assert!(
            (&other - &phi).iter().all(|v| v.abs() < 1e-12),
            "{family:?}"
        );
    }
}

#[test]
fn bad_inputs_get_clear_errors() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let model = FeatureModel::new(spec(Family::Ard, 8), 3, 1e-6, None, &mut rng).unwrap();
    let theta = model.start(&ArdPoint::default_start(3, 1.0), &mut rng);
    let wrong = Array2::<f64>::zeros((4, 2));
    assert!(model
        .features(&theta, wrong.view())
        .unwrap_err()
        .to_string()
        .contains("dimension"));
    let mut nan = Array2::<f64>::zeros((4, 3));
    nan[[1, 2]] = f64::NAN;
    assert!(model
        .features(&theta, nan.view())
        .unwrap_err()
        .to_string()
        .contains("not finite"));
    let bad = KernelSpec {
        family: Family::Gm,
        m: 4,
        components: 5,
        intervals: 10,
    };
    assert!(FeatureModel::new(bad, 3, 1e-6, None, &mut rng)
        .unwrap_err()
        .to_string()
        .contains("2 Q"));
}

/// The memory claim (A la Carte's O(m) Fastfood against the O(md) of free frequencies): the
/// values stored to evaluate the features, counted from the structure, stay within a small
/// multiple of m for Fastfood whatever d (up to the padding of d to a power of two below m),
/// while SSGPR stores every one of the m·d frequencies.
#[test]
fn fastfood_stores_o_m_values_where_free_frequencies_store_m_times_d() {
    let m = 1024;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for d in [8usize, 64, 512] {
        let ff = FeatureModel::new(spec(Family::Rbf, m), d, 1e-6, None, &mut rng).unwrap();
        let stored = ff.n_params() + ff.structure_values();
        assert!(
            (3 * m..=5 * m + 8).contains(&stored),
            "Fastfood RBF, d = {d}: {stored} values for m = {m}"
        );
        let ss = FeatureModel::new(spec(Family::Ssgpr, m), d, 1e-6, None, &mut rng).unwrap();
        assert!(
            ss.n_params() >= m * d,
            "SSGPR, d = {d}: {} parameters for m·d = {}",
            ss.n_params(),
            m * d
        );
    }
}
