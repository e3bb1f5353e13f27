//! Criterion benchmarks of `classify` (T = 10 trees, M = 100 particles, tess19 defaults
//! otherwise) on a synthetic two-class set in d = 10 with a noisy oblique boundary, at
//! n_train = 60, 500 and 2000, for uRTP and MRTP. Throughput is in accepted cuts per second
//! (over all particles and trees), the count taken from a first run with the same seed (the
//! fit is deterministic, so every iteration makes the same cuts). Compare results as ratios
//! between commits on one machine.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kernel_core::{Classifier, LabelledRows};
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use random_tessellation::{Forest, ForestConfig, Prior, PriorKind};

const D: usize = 10;

/// Gaussian rows; label 1 when x_0 + x_1 + noise > 0 (classes overlap, so trees keep cutting).
fn data(n: usize, seed: u64) -> (Array2<f64>, Vec<u32>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Array2::from_shape_fn((n, D), |_| rng.sample::<f64, _>(StandardNormal));
    let labels = (0..n)
        .map(|i| {
            let noise: f64 = rng.sample(StandardNormal);
            u32::from(x[[i, 0]] + x[[i, 1]] + 0.5 * noise > 0.0)
        })
        .collect();
    (x, labels)
}

fn forest(c: &mut Criterion) {
    let mut group = c.benchmark_group("classify");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    let config = ForestConfig {
        trees: 10,
        particles: 100,
        ..ForestConfig::default()
    };
    for &n_train in &[60usize, 500, 2000] {
        let (train, labels) = data(n_train, 1);
        let (test, _) = data(200, 2);
        for kind in [PriorKind::Uniform, PriorKind::Mondrian] {
            let prior = Prior::new(kind, D, None).unwrap();
            let run = || {
                Forest::new(prior.clone(), config.clone())
                    .and_then(|f| {
                        f.fit_predict(LabelledRows::new(train.view(), &labels, 2), test.view(), 3)
                    })
                    .unwrap()
            };
            group.throughput(Throughput::Elements(run().stats.cuts));
            let name = match kind {
                PriorKind::Uniform => "uRTP",
                PriorKind::Mondrian => "MRTP",
            };
            group.bench_function(
                BenchmarkId::new(name, format!("n{n_train}_d{D}_T10_M100")),
                |b| b.iter(run),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, forest);
criterion_main!(benches);
