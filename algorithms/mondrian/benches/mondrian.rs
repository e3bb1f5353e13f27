//! Criterion benchmarks of the Mondrian kernel feature map and of the kernel-approximation error.
//!
//! `feature_map/*` reports throughput in (points × trees) per second; `prefix_max_errors/*`
//! evaluates `max_ij |K̂_R − K|` for every prefix R of an M = 50 map (the Fig. 5 metric);
//! `sweep_vs_single_build/*` compares building the features once at the terminal lifetime Λ
//! (sample the trees, one feature matrix) with the lifetime sweep (sample the trees, order all
//! splits in time, and walk through them, which yields the features of every λ <= Λ): the
//! paper's claim is that the sweep costs a small multiple of the single build;
//! `sgd_epoch/*` times one epoch of the authors' learner on the Mondrian features of 6554
//! training rows (the per-split cost of the Figs. 7-10 sweeps), throughput in row-tree entries.
//! Compare results as ratios between commits on one machine.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kernel_core::approximation::one_hot_prefix_max_errors;
use kernel_core::kernel::laplace_gram;
use mondrian::{KernelSgdSweep, MondrianForest, SweepState};
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn uniform(n: usize, d: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_fn((n, d), |_| rng.random::<f64>())
}

fn feature_map(c: &mut Criterion) {
    let mut group = c.benchmark_group("feature_map");
    group.sample_size(20);
    for &(n, d, lifetime, trees) in &[
        (100usize, 2usize, 10.0, 50usize),
        (2000, 2, 10.0, 50),
        (2000, 10, 5.0, 50),
    ] {
        let x = uniform(n, d, 1);
        group.throughput(Throughput::Elements((n * trees) as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("n{n}_d{d}_lifetime{lifetime}_M{trees}")),
            &x,
            |b, x| {
                let mut rng = ChaCha8Rng::seed_from_u64(2);
                b.iter(|| {
                    MondrianForest::sample(x.view(), lifetime, trees, &mut rng)
                        .unwrap()
                        .features()
                })
            },
        );
    }
    group.finish();
}

fn prefix_max_errors(c: &mut Criterion) {
    let mut group = c.benchmark_group("prefix_max_errors");
    group.sample_size(20);
    for &n in &[100usize, 400] {
        let x = uniform(n, 2, 3);
        let exact = laplace_gram(x.view(), x.view(), 10.0).unwrap();
        let features =
            MondrianForest::sample(x.view(), 10.0, 50, &mut ChaCha8Rng::seed_from_u64(4))
                .unwrap()
                .features();
        group.throughput(Throughput::Elements((n * n * 50) as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("n{n}_M50")),
            &n,
            |b, _| b.iter(|| one_hot_prefix_max_errors(&features, exact.view()).unwrap()),
        );
    }
    group.finish();
}

fn sweep_vs_single_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("sweep_vs_single_build");
    group.sample_size(10);
    // CPU-sized data (7373 points, 21 dimensions) and a lifetime giving about 23k splits
    // (~465 leaves per tree), as the Fig. 9 sweep to 1e-5 on CPU (20k splits).
    let x = uniform(7373, 21, 5);
    let (lifetime, trees) = (0.45, 50usize);
    group.bench_function("single_build", |b| {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        b.iter(|| {
            MondrianForest::sample(x.view(), lifetime, trees, &mut rng)
                .unwrap()
                .features()
        })
    });
    group.bench_function("sweep", |b| {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        b.iter(|| {
            let forest = MondrianForest::sample(x.view(), lifetime, trees, &mut rng).unwrap();
            let events = forest.sweep_events();
            let mut state = SweepState::new(&forest);
            state.advance_to(&forest, &events, lifetime);
            (events.len(), state.features())
        })
    });
    group.finish();
}

fn sgd_epoch(c: &mut Criterion) {
    let mut group = c.benchmark_group("sgd_epoch");
    group.sample_size(20);
    let n_train = 6554;
    let x = uniform(7373, 21, 7);
    let y = ndarray::Array1::from_shape_fn(n_train, |i| x[[i, 0]] - 0.5);
    for trees in [50usize, 350] {
        let forest =
            MondrianForest::sample(x.view(), 0.3, trees, &mut ChaCha8Rng::seed_from_u64(8))
                .unwrap();
        let events = forest.sweep_events();
        let mut state = SweepState::new(&forest);
        state.advance_to(&forest, &events, 0.3);
        group.throughput(Throughput::Elements((n_train * trees) as u64));
        group.bench_function(BenchmarkId::from_parameter(format!("M{trees}")), |b| {
            let mut learner = KernelSgdSweep::new(forest.n_columns(), 1e-4);
            let mut rng = ChaCha8Rng::seed_from_u64(9);
            b.iter(|| learner.epoch(&state, n_train, y.view(), &mut rng))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    sgd_epoch,
    feature_map,
    prefix_max_errors,
    sweep_vs_single_build
);
criterion_main!(benches);
