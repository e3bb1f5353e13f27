//! Streaming throughput of StreaMRAK's parts: points per second into the damped cover tree, and
//! through the whole pyramid driver (tree, statistics and level fits) on a 1-D VarSinus-like
//! stream; and one level's statistics and solve at m = 250 / 1000 / 2000 landmarks.
//! `cargo bench -p streamrak`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kernel_core::StreamingRegressor;
use ndarray::{s, Array2, Axis};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use streamrak::falkon::{Expansion, FalkonParams};
use streamrak::model::{Streamrak, StreamrakParams};
use streamrak::statistics::{ConvergenceParams, LevelStatistics};
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
/// solve from them (Cholesky factors, 10 CG steps: O(m³)).
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

criterion_group!(benches, tree, pyramid, level);
criterion_main!(benches);
