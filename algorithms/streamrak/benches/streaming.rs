//! Streaming throughput of StreaMRAK's parts: points per second into the damped cover tree, and
//! through the whole pyramid driver (tree, statistics and level fits) on a 1-D VarSinus-like
//! stream. `cargo bench -p streamrak`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use streamrak::falkon::FalkonParams;
use streamrak::model::{Streamrak, StreamrakParams};
use streamrak::statistics::ConvergenceParams;
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

criterion_group!(benches, tree, pyramid);
criterion_main!(benches);
