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
//! `sgd_epoch_bound/*` runs, on the same leaf ids in the same shuffled row order, the two halves
//! of an epoch without the dependency that chains them (each row's step needs the previous
//! row's scatter): the gathers alone (`dot_only`) and the scatter-adds alone (`scatter_only`).
//! An epoch cannot beat the slower of the two; the ratio of `sgd_epoch` to it is how far the
//! learner is from this machine's limit for the access pattern. `sweep_forest/*` compares one
//! split's update of the incremental forest with the closed form recomputed from scratch.
//! Compare results as ratios between commits on one machine.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kernel_core::approximation::one_hot_prefix_max_errors;
use kernel_core::kernel::laplace_gram;
use mondrian::{forest_fit, KernelSgdSweep, MondrianForest, SweepForest, SweepState};
use ndarray::Array2;
use rand::seq::SliceRandom;
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

/// The Fig. 8 (M = 350, about 14 leaves per tree) and Fig. 9 (M = 50, about 400) sweep states
/// on CPU-sized data: 7373 points in 21 dimensions, 6554 training rows.
fn sweep_states() -> Vec<(usize, MondrianForest, Vec<mondrian::SweepEvent>, SweepState)> {
    let x = uniform(7373, 21, 7);
    [(350usize, 0.13), (50, 0.3)]
        .into_iter()
        .map(|(trees, lifetime)| {
            let forest = MondrianForest::sample(
                x.view(),
                lifetime,
                trees,
                &mut ChaCha8Rng::seed_from_u64(8),
            )
            .unwrap();
            let events = forest.sweep_events();
            let mut state = SweepState::new(&forest);
            state.advance_to(&forest, &events, lifetime);
            (trees, forest, events, state)
        })
        .collect()
}

fn sgd_epoch_bound(c: &mut Criterion) {
    let mut group = c.benchmark_group("sgd_epoch_bound");
    group.sample_size(20);
    let n_train = 6554;
    let y = ndarray::Array1::from_shape_fn(n_train, |i| (i as f64 * 0.1).sin());
    for (trees, forest, _, state) in sweep_states() {
        let leaves = forest.mean_leaves();
        let ids = &state.leaf_ids()[..n_train * trees];
        let mut order: Vec<usize> = (0..n_train).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(10));
        let name = |what: &str| format!("{what}/M{trees}_leaves{leaves:.0}");
        group.throughput(Throughput::Elements((n_train * trees) as u64));
        group.bench_function(name("epoch"), |b| {
            let mut learner = KernelSgdSweep::new(forest.n_columns(), 1e-4);
            let mut rng = ChaCha8Rng::seed_from_u64(9);
            b.iter(|| learner.epoch(&state, n_train, y.view(), &mut rng))
        });
        let mut v = vec![0.5f64; forest.n_columns()];
        group.bench_function(name("dot_only"), |b| {
            b.iter(|| {
                let mut total = 0.0;
                for &i in &order {
                    let row = &ids[i * trees..(i + 1) * trees];
                    let mut acc = [0.0f64; 8];
                    for chunk in row.chunks(8) {
                        for (a, &c) in acc.iter_mut().zip(chunk) {
                            *a += v[c as usize];
                        }
                    }
                    total += acc.iter().sum::<f64>();
                }
                total
            })
        });
        group.bench_function(name("scatter_only"), |b| {
            b.iter(|| {
                for &i in &order {
                    let step = 1e-9 * i as f64;
                    for &c in &ids[i * trees..(i + 1) * trees] {
                        v[c as usize] += step;
                    }
                }
            })
        });
    }
    group.finish();
}

fn sweep_forest(c: &mut Criterion) {
    let mut group = c.benchmark_group("sweep_forest");
    group.sample_size(10);
    let n_train = 6554;
    let y = ndarray::Array1::from_shape_fn(n_train, |i| (i as f64 * 0.1).sin());
    for (trees, forest, events, _) in sweep_states() {
        // The forest after every split of the sweep: incrementally, or by the closed form.
        group.throughput(Throughput::Elements(events.len() as u64));
        group.bench_function(format!("incremental_every_split/M{trees}"), |b| {
            b.iter(|| {
                let mut state = SweepState::new(&forest);
                let mut model = SweepForest::new(&state, n_train, y.view(), 1e-4);
                while let Some(k) = state.step(&forest, &events) {
                    model.update(&forest, &events[k..=k], &state, y.view());
                }
                model.centred_predictions()[0]
            })
        });
        // One closed form at the end state (multiply by the number of splits for every split).
        let mut end = SweepState::new(&forest);
        end.advance_to(&forest, &events, f64::INFINITY);
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("closed_form_once/M{trees}"), |b| {
            b.iter(|| forest_fit(&end.features(), n_train, y.view(), 1e-4).centred_predictions[0])
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    sgd_epoch,
    sgd_epoch_bound,
    sweep_forest,
    feature_map,
    prefix_max_errors,
    sweep_vs_single_build
);
criterion_main!(benches);
