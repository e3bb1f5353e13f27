//! Criterion benchmarks of the Fig. 8 width searches' hot loops (The Mondrian Kernel, CPU data:
//! 6554 training rows, 7373 rows in all, 21 dimensions, M = 350), each beside the bound it is
//! compared with:
//!
//! * `fourier/*`: the features `[cos(XΩ), sin(XΩ)]` of one evaluation, in values per second,
//!   beside the projection `XΩ` alone (matrixmultiply) — the rest is [`kernel_core::trig`]'s
//!   vectorised `sin` and `cos` and, without reused buffers, faulting in fresh memory;
//! * `dense_sgd/*`: one epoch of the authors' SGD over the 700 unscaled features, in row-feature
//!   entries per second, beside one pass reading the same rows in the same order
//!   (`read_rows`): the 36.7 MB of features do not fit in L2, so an epoch cannot beat that read;
//! * `binning/*`: one evaluation's bin assignment (`fit_transform` of the training rows and
//!   `transform` of the rest), in point-repetitions per second, beside the bin indices alone
//!   (one division and one rounding per coordinate).
//!
//! Compare results as ratios between commits on one machine.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kernel_core::sgd::{Rows, ScaledWeights, Sgd};
use ndarray::{s, Array1, Array2};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use random_features::{RandomBinning, RandomFourierFeatures};

const N_TRAIN: usize = 6554;
const N_ALL: usize = 7373;
const M: usize = 350;

/// CPU-like inputs: 21 coordinates on very different scales (raw CPU features span 1 to 1e5).
fn inputs() -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    Array2::from_shape_fn((N_ALL, 21), |(_, d)| {
        rng.random::<f64>() * 10f64.powi((d % 6) as i32)
    })
}

fn fourier(c: &mut Criterion) {
    let mut group = c.benchmark_group("fourier");
    group.sample_size(10);
    let x = inputs();
    // λ = 2^-17, where the authors' search spends most of its evaluations.
    let map =
        RandomFourierFeatures::sample(21, M, 2f64.powi(-17), &mut ChaCha8Rng::seed_from_u64(2))
            .unwrap();
    group.throughput(Throughput::Elements((N_ALL * 2 * M) as u64));
    group.bench_function("features", |b| b.iter(|| map.transform(x.view()).unwrap()));
    // As the width search calls it: the buffers of the previous evaluation reused.
    let mut buffers = random_features::FourierBuffers::default();
    group.bench_function("features_into_reused_buffers", |b| {
        b.iter(|| map.transform_into(x.view(), &mut buffers).unwrap())
    });
    group.bench_function("projection_only", |b| b.iter(|| x.dot(&map.omega())));
    group.finish();
}

fn dense_sgd(c: &mut Criterion) {
    let mut group = c.benchmark_group("dense_sgd");
    group.sample_size(10);
    let x = inputs();
    let map =
        RandomFourierFeatures::sample(21, M, 2f64.powi(-17), &mut ChaCha8Rng::seed_from_u64(2))
            .unwrap();
    let z = map.transform(x.view()).unwrap();
    let train = z.slice(s![..N_TRAIN, ..]);
    let y = Array1::from_shape_fn(N_TRAIN, |i| (i as f64 * 0.01).sin());
    let sgd = Sgd::sklearn_0_17(1e-4);
    group.throughput(Throughput::Elements((N_TRAIN * 2 * M) as u64));
    group.bench_function("epoch", |b| {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut w = ScaledWeights::zeros(2 * M);
        b.iter(|| sgd.fit(&mut w, &train, y.view(), 1, Some(&mut rng)))
    });
    let mut order: Vec<usize> = (0..N_TRAIN).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(4));
    group.bench_function("read_rows", |b| {
        b.iter(|| {
            let mut acc = [0.0f64; 8];
            for &i in &order {
                for chunk in train.row(i).as_slice().unwrap().chunks(8) {
                    for (a, &v) in acc.iter_mut().zip(chunk) {
                        *a += v;
                    }
                }
            }
            acc.iter().sum::<f64>()
        })
    });
    // The prediction pass of an evaluation (every row once, no update).
    let w = vec![0.1; 2 * M];
    group.bench_function("predict_all", |b| {
        b.iter(|| (0..N_TRAIN).map(|i| train.dot(i, &w)).sum::<f64>())
    });
    group.finish();
}

fn binning(c: &mut Criterion) {
    let mut group = c.benchmark_group("binning");
    group.sample_size(10);
    let x = inputs();
    group.throughput(Throughput::Elements((N_ALL * M) as u64));
    // Small λ: few bins, mostly hits; large λ: every training point in its own bins.
    for lg in [-20i32, -8] {
        let lifetime = 2f64.powi(lg);
        group.bench_function(format!("assign/lg{lg}"), |b| {
            b.iter(|| {
                let mut map =
                    RandomBinning::sample(21, M, lifetime, &mut ChaCha8Rng::seed_from_u64(5))
                        .unwrap();
                let train = map.fit_transform(x.slice(s![..N_TRAIN, ..])).unwrap();
                let rest = map.transform(x.slice(s![N_TRAIN.., ..])).unwrap();
                (train.n_columns(), rest.n_rows())
            })
        });
    }
    // The bin indices alone: ⌈(x − u)/δ⌉ for every point, repetition and coordinate.
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let widths: Vec<f64> = (0..M * 21).map(|_| 1.0 + rng.random::<f64>()).collect();
    let shifts: Vec<f64> = widths.iter().map(|w| w * rng.random::<f64>()).collect();
    let flat = x.as_slice().unwrap();
    group.bench_function("bin_indices_only", |b| {
        b.iter(|| {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor supports AVX2 (the product's path there).
                return unsafe { bin_indices_avx2(flat, &shifts, &widths) };
            }
            bin_indices(flat, &shifts, &widths)
        })
    });
    group.finish();
}

#[inline(always)]
fn bin_indices(flat: &[f64], shifts: &[f64], widths: &[f64]) -> u64 {
    let mut key = [0u64; 21];
    let mut total = 0u64;
    for m in 0..M {
        let (u, w) = (&shifts[m * 21..(m + 1) * 21], &widths[m * 21..(m + 1) * 21]);
        for row in flat.chunks_exact(21) {
            for (((k, &v), &u), &w) in key.iter_mut().zip(row).zip(u).zip(w) {
                *k = (((v - u) / w).ceil() + 0.0).to_bits();
            }
            total = total.wrapping_add(key.iter().fold(0, |a, &k| a ^ k));
        }
    }
    total
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn bin_indices_avx2(flat: &[f64], shifts: &[f64], widths: &[f64]) -> u64 {
    bin_indices(flat, shifts, widths)
}

criterion_group!(benches, fourier, dense_sgd, binning);
criterion_main!(benches);
