//! Criterion benchmarks of the hot loops of A la Carte: the fast Walsh-Hadamard transform, the
//! feature map (Fastfood O(m log d) per point against dense frequencies O(m d)) and one whole
//! marginal-likelihood evaluation with its gradient (O(n m log d + n m²)). Throughput: values
//! transformed, feature values (n·m) per second, or rows per second. Compare as ratios between
//! commits on one machine; the README relates them to the measured dgemm throughput.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use fastfood::fit::objective;
use fastfood::fwht::fwht;
use fastfood::{ArdPoint, Family, FeatureModel, KernelSpec};
use ndarray::{Array1, Array2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

fn inputs(n: usize, d: usize) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    Array2::from_shape_fn((n, d), |_| rng.sample::<f64, _>(StandardNormal))
}

fn model(family: Family, m: usize, d: usize) -> (FeatureModel, Vec<f64>) {
    model_q(family, m, d, 1)
}

fn model_q(family: Family, m: usize, d: usize, components: usize) -> (FeatureModel, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let spec = KernelSpec {
        family,
        m,
        components,
        intervals: 1,
    };
    let model = FeatureModel::new(spec, d, 1e-6, None, &mut rng).expect("model");
    let theta = model.start(&ArdPoint::default_start(d, 1.0), &mut rng);
    (model, theta)
}

fn transform(c: &mut Criterion) {
    let mut group = c.benchmark_group("fwht");
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(2));
    for d in [64usize, 1024] {
        let mut v: Vec<f64> = (0..d).map(|i| i as f64).collect();
        group.throughput(Throughput::Elements(d as u64));
        group.bench_with_input(BenchmarkId::from_parameter(d), &d, |b, _| {
            b.iter(|| fwht(std::hint::black_box(&mut v)))
        });
    }
    group.finish();
}

fn features(c: &mut Criterion) {
    let mut group = c.benchmark_group("features_m1024");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(2));
    let (n, m) = (256, 1024);
    for d in [16usize, 64, 256, 1024] {
        let x = inputs(n, d);
        group.throughput(Throughput::Elements((n * m) as u64));
        for (name, family) in [("fastfood", Family::Ard), ("dense", Family::Ssgpr)] {
            let (mo, theta) = model(family, m, d);
            group.bench_with_input(BenchmarkId::new(name, d), &d, |b, _| {
                b.iter(|| mo.features(&theta, x.view()).expect("features"))
            });
        }
    }
    group.finish();
}

fn evaluation(c: &mut Criterion) {
    let mut group = c.benchmark_group("evaluation_n2048_d16");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(3));
    let (n, d) = (2048, 16);
    let x = inputs(n, d);
    let y = Array1::from_shape_fn(n, |i| x[[i, 0]].sin());
    for m in [128usize, 256, 512] {
        group.throughput(Throughput::Elements(n as u64));
        for (name, family) in [
            ("ard", Family::Ard),
            ("fsgbard", Family::Fsgbard),
            ("gm", Family::Gm),
        ] {
            let (mo, theta) = model(family, m, d);
            group.bench_with_input(BenchmarkId::new(name, m), &m, |b, _| {
                b.iter(|| objective(&mo, &theta, x.view(), y.view()).expect("evaluation"))
            });
        }
    }
    group.finish();
}

/// The shapes timed side by side with revrand (configs/alacarte/README.md, "One evaluation side
/// by side"): yacht-like (n = 278, d = 6) and larger (n = 2,048, d = 8), RBF and ARD at m
/// frequencies, GM with Q = 5 components at the m that gives revrand the same D (it rounds each
/// component's frequencies up to a multiple of the padded dimension). Wall time here; the
/// README's ratios are process CPU (`examples/evaluation_timing.rs`).
fn evaluation_side_by_side(c: &mut Criterion) {
    let mut group = c.benchmark_group("evaluation_side_by_side");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(3));
    for (n, d, m_ard, m_gm) in [(278usize, 6usize, 256usize, 320usize), (2048, 8, 512, 640)] {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let x = Array2::from_shape_fn((n, d), |_| rng.sample::<f64, _>(StandardNormal));
        let y = Array1::from_shape_fn(n, |i| {
            x[[i, 0]].sin() + 0.1 * rng.sample::<f64, _>(StandardNormal)
        });
        group.throughput(Throughput::Elements(n as u64));
        for (name, family, m) in [
            ("rbf", Family::Rbf, m_ard),
            ("ard", Family::Ard, m_ard),
            ("gm_q5", Family::Gm, m_gm),
        ] {
            let (mo, theta) = model_q(family, m, d, 5);
            let id = BenchmarkId::new(name, format!("n{n}_d{d}_m{m}"));
            group.bench_with_input(id, &m, |b, _| {
                b.iter(|| objective(&mo, &theta, x.view(), y.view()).expect("evaluation"))
            });
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    transform,
    features,
    evaluation,
    evaluation_side_by_side
);
criterion_main!(benches);
