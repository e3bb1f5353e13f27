//! Streaming throughput of StreaMRAK's parts: points per second into the damped cover tree, and
//! through the whole pyramid driver (tree, statistics and level fits) on a 1-D VarSinus-like
//! stream; one level's statistics and solve at m = 250 / 1000 / 2000 landmarks; and the
//! statistics of E1's fine levels (1-D VarSinus, most kernel entries exactly 0.0) on the dense
//! and the banded path. `cargo bench -p streamrak`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kernel_core::StreamingRegressor;
use ndarray::{s, Array2, Axis};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use streamrak::falkon::{Expansion, FalkonParams};
use streamrak::model::{Streamrak, StreamrakParams};
use streamrak::statistics::{Accumulation, ConvergenceParams, LevelStatistics};
use streamrak::{CoverTreeParams, DampedCoverTree, LevelParams};

fn tree(c: &mut Criterion) {
    let n = 20_000;
    let mut group = c.benchmark_group("cover_tree");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    for dim in [1usize, 5] {
        group.bench_function(format!("insert_{n}_points_{dim}d"), |b| {
            b.iter(|| {
                let mut rng = ChaCha8Rng::seed_from_u64(1);
                let root: Vec<f64> = (0..dim).map(|_| rng.random()).collect();
                let mut t =
                    DampedCoverTree::new(&root, &[0.0], CoverTreeParams::paper(2.0)).unwrap();
                for _ in 0..n {
                    let x: Vec<f64> = (0..dim).map(|_| rng.random()).collect();
                    t.insert(&x, &[0.0], &mut rng).unwrap();
                }
                t.len()
            })
        });
    }
    group.finish();
}

fn pyramid(c: &mut Criterion) {
    let n = 50_000;
    let mut group = c.benchmark_group("pyramid");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    let params = StreamrakParams {
        tree: CoverTreeParams::paper(1.0),
        levels: LevelParams {
            delta0: 10.0,
            ..LevelParams::default_config()
        },
        convergence: ConvergenceParams {
            k_threshold: 5e-3,
            z_threshold: 5e-3,
            track_length: 100,
            interval: 2_000,
            lower_limit: 2_000,
            upper_limit: 20_000,
        },
        falkon: FalkonParams::paper(),
        max_level: 8,
    };
    group.bench_function(format!("stream_{n}_points_1d"), |b| {
        b.iter(|| {
            let mut rng = ChaCha8Rng::seed_from_u64(2);
            let f = |x: f64| (1.0 / (x + 0.05)).sin();
            let x0: f64 = rng.random();
            let mut m = Streamrak::new(&[x0], &[f(x0)], params).unwrap();
            for _ in 0..n {
                let x: f64 = rng.random();
                m.push(&[x], &[f(x)], &mut rng).unwrap();
            }
            m.finish(&mut rng).unwrap();
            m.levels().len()
        })
    });
    group.finish();
}

/// One level's work at the paper's sizes: 10,000 streamed rows into the statistics of m
/// landmarks (the Gaussian kernel rows and the BLAS dsyrk of KᵀK: n·m² flops), and the FALKON
/// solve from them (Cholesky factors, 10 CG steps: O(m³)). Here every kernel entry is far from
/// 0 (4-D points in the unit cube, r = 0.3), so the dense path is taken.
///
/// Fraction of peak (measured on the project's 2-core machine, an Intel Xeon with AVX-512 at a
/// nominal 2.3 GHz, Debian's OpenBLAS 0.3.21): at m = 2000 the statistics run at ≈15 G
/// (rows·m²)/s, the dsyrk alone at ≈17 GFlop/s, about the 2-core peak of SSE2 at 2.3 GHz
/// (18.4 GFlop/s; OpenBLAS does not know this CPU and takes its generic Prescott kernels), an
/// eighth of the AVX-512 peak (147 GFlop/s); with `OPENBLAS_CORETYPE=SkylakeX` the same bench
/// runs at ≈40 G/s.
fn level(c: &mut Criterion) {
    let mut group = c.benchmark_group("level");
    group.sample_size(10);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let rows = 10_000;
    let x = Array2::from_shape_fn((rows, 4), |_| rng.random::<f64>());
    let y = x.map_axis(Axis(1), |r| r.sum().sin()).insert_axis(Axis(1));
    for m in [250usize, 1000, 2000] {
        let landmarks = x.slice(s![..m, ..]).to_owned();
        group.throughput(Throughput::Elements((rows * m * m) as u64));
        group.bench_function(format!("statistics_{rows}_rows_m{m}"), |b| {
            b.iter(|| {
                let mut st = LevelStatistics::new(landmarks.clone(), 0.3, 1).unwrap();
                st.add(x.view(), y.view()).unwrap();
                st.rows()
            })
        });
        let mut st = LevelStatistics::new(landmarks.clone(), 0.3, 1).unwrap();
        st.add(x.view(), y.view()).unwrap();
        group.throughput(Throughput::Elements((m * m * m) as u64));
        group.bench_function(format!("falkon_solve_m{m}"), |b| {
            b.iter(|| {
                Expansion::fit(&st, FalkonParams::paper())
                    .unwrap()
                    .alpha
                    .len()
            })
        });
    }
    group.finish();
}

/// E1's fine levels: 10,000 rows of the VarSinus x distribution (3/4 Gamma(1, 2)/28.6 capped at
/// 1, 1/4 uniform) into the statistics of level L (r = 2^−L) with E1's landmark counts, drawn
/// from the same distribution, on the dense path (every kernel entry, one BLAS dsyrk over the
/// block: n·m(m + 1) flops) and the banded path (the landmarks within reach of each row).
/// Throughput: dense flops, so the two paths read as the same work done. Measured (2 cores,
/// noisy: another build running): L8 212 → 59 ms, L10 549 → 40 ms, L12 579 → 21 ms, L15
/// 2.5 s → 20 ms. The dense path runs below its m = 2000 rate in `level` (4-17 GFlop/s):
/// products of kernel entries near the reach underflow, and each costs a microcode assist.
fn banded(c: &mut Criterion) {
    use rand_distr::{Distribution, Gamma};
    let mut group = c.benchmark_group("banded");
    group.sample_size(10);
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let gamma = Gamma::new(1.0_f64, 2.0).unwrap();
    let mut draw = |n: usize| {
        Array2::from_shape_fn((n, 1), |_| {
            if rng.random_bool(0.75) {
                (gamma.sample(&mut rng) / 28.6).min(1.0)
            } else {
                rng.random()
            }
        })
    };
    let rows = 10_000;
    let x = draw(rows);
    let y = x.mapv(|v| (1.0 / (v + 0.01)).sin());
    for (level, m) in [(8, 273), (10, 488), (12, 947), (15, 2061)] {
        let landmarks = draw(m);
        let r = 0.5_f64.powi(level);
        let dense_flops = (rows * m * (m + 1)) as u64;
        group.throughput(Throughput::Elements(dense_flops));
        for path in [Accumulation::Dense, Accumulation::Banded] {
            group.bench_function(format!("statistics_L{level}_m{m}_{path:?}"), |b| {
                b.iter(|| {
                    let mut st =
                        LevelStatistics::with_accumulation(landmarks.clone(), r, 1, path).unwrap();
                    st.add(x.view(), y.view()).unwrap();
                    st.rows()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, tree, pyramid, level, banded);
criterion_main!(benches);
