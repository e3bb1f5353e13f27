//! `exp` of many arguments: the standard library one at a time against kernel-core's vectorised
//! `exp_in_place` (glibc's bits), on 4,096 arguments spread over a Gaussian kernel's exponents
//! (−745 ≤ x ≤ 0, where most StreaMRAK and OGD entries fall, 5 % of them giving subnormal
//! results) and over the main range only (−512 ≤ x ≤ 0). Throughput in exps, so ns per exp =
//! 1 / throughput. `cargo bench -p kernel-core --bench exp`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kernel_core::exp::exp_in_place;

fn exp(c: &mut Criterion) {
    let n = 4096;
    let mut group = c.benchmark_group("exp");
    group.throughput(Throughput::Elements(n as u64));
    for (name, low) in [("kernel_range", -745.0), ("main_range", -512.0)] {
        // A low-discrepancy sequence over [low, 0].
        let x: Vec<f64> = (0..n)
            .map(|i| low * (i as f64 * 0.618_033_988_749_895).fract())
            .collect();
        let mut y = x.clone();
        group.bench_function(format!("{name}/std"), |b| {
            b.iter(|| {
                for (y, &x) in y.iter_mut().zip(&x) {
                    *y = x.exp();
                }
                y[n / 2]
            })
        });
        group.bench_function(format!("{name}/vectorised"), |b| {
            b.iter(|| {
                y.copy_from_slice(&x);
                exp_in_place(&mut y);
                y[n / 2]
            })
        });
    }
    group.finish();
}

criterion_group!(benches, exp);
criterion_main!(benches);
