//! Criterion benchmarks of the hot loops of the Isolation Kernel experiments.
//!
//! `mapping/*`: φ(x) ∈ [0, ψ)^t of 10,000 points with t = 100 isolation trees (spec §3, §4),
//! one [`IsolationKernel::index_into`] per point on one thread, for dense 22-d points (shaped like
//! ijcnn1) and sparse 123-d binary points with ~14 non-zeros (shaped like a9a), ψ ∈ {16, 256};
//! throughput in points, so µs per point = 1 / throughput.
//! `kernel_ogd/*`: one pass of kernel OGD (spec §7.1) with the Laplacian L_ψ over a stream of
//! 3,000 such points with random labels (most become support vectors); `nogd/*`: predictions
//! of NOGD (b = 100, r = 20, spec §7.2) after the switch, trained on that stream, for the 3,000
//! points. Throughput in kernel evaluations, so ns per evaluation = 1 / throughput (NOGD's
//! includes z = M·k). `ik_ogd/*`: IK-OGD's primal learner on pre-mapped index vectors (t =
//! 100, ψ ∈ {32, 256}): one pass of updates over 10,000 rows, then their predictions at once;
//! throughput in rows.
//! Compare results as ratios between commits on one machine.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use isolation_kernel::{
    label, CsrRows, IsolationKernel, KernelOgd, Nogd, NogdParams, OgdKernel, Partitioner, Row,
    Rows, PAPER_ETA,
};
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// n dense points in [-1, 1]^22 (ijcnn1 is dense with 22 features scaled to [-1, 1]).
fn dense(n: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_fn((n, 22), |_| rng.random_range(-1.0..1.0))
}

/// n sparse binary points of dimension 123 with ~14 non-zeros each (a9a's shape), as CSR.
struct Csr {
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl Csr {
    fn new(n: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for _ in 0..n {
            // One of ~9 values for each of 14 groups of ~9 one-hot attributes.
            for g in 0..14u32 {
                let a = g * 9 + rng.random_range(0..9);
                if a < 123 {
                    indices.push(a);
                    values.push(1.0);
                }
            }
            indptr.push(indices.len());
        }
        Self {
            indptr,
            indices,
            values,
        }
    }

    fn rows(&self) -> CsrRows<'_> {
        CsrRows::new(123, &self.indptr, &self.indices, &self.values).unwrap()
    }
}

/// The rows of a dense and of a CSR data set as [`Row`]s.
fn dense_rows(x: &Array2<f64>) -> Vec<Row<'_>> {
    x.rows().into_iter().map(Row::Dense).collect()
}

fn sparse_rows<'a>(x: &CsrRows<'a>) -> Vec<Row<'a>> {
    (0..x.n_rows()).map(|i| Row::Sparse(x.row(i))).collect()
}

fn labels(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| label(rng.random_range(-1.0..1.0))).collect()
}

fn mapping(c: &mut Criterion) {
    let mut group = c.benchmark_group("mapping");
    group.sample_size(10);
    let n = 10_000;
    let t = 100;
    let x = dense(n, 1);
    let csr = Csr::new(n, 2);
    for psi in [16usize, 256] {
        group.throughput(Throughput::Elements(n as u64));
        for (name, rows, points) in [
            ("dense22", Rows::Dense(x.view()), dense_rows(&x)),
            (
                "sparse123",
                Rows::Sparse(csr.rows()),
                sparse_rows(&csr.rows()),
            ),
        ] {
            let partitioner = Partitioner::IForest { height_limit: None };
            let k =
                IsolationKernel::fit(rows, psi, t, partitioner, &mut ChaCha8Rng::seed_from_u64(3))
                    .unwrap();
            let mut out = vec![0u32; t];
            group.bench_function(BenchmarkId::new(name, format!("psi{psi}_t{t}")), |b| {
                b.iter(|| {
                    let mut acc = 0u64;
                    for (i, &row) in points.iter().enumerate() {
                        k.index_into(row, &mut out).unwrap();
                        acc += u64::from(out[i % t]);
                    }
                    acc
                })
            });
        }
    }
    group.finish();
}

/// `mapping_block/*`: the same maps through [`IsolationKernel::index_rows_of`], which maps
/// blocks of rows tree by tree (IK_i: bit vectors on the ranks of the splits, then walks below
/// the tops of larger trees) or searches a block's cells a partitioning at a time (IK_a), for
/// full isolation, the authors' ⌈log₂ ψ⌉ trees and aNNE; all 10,000 rows in one call, and
/// (`*_chunks`) 1,024 rows a call, as the experiments map a stream. The bound to compare with
/// is the dependent-load chain of a walk: node, then the row's attribute, then a conditional
/// move, per level; ns per point / (t × levels walked) gives ns per level to set beside it.
fn mapping_block(c: &mut Criterion) {
    let mut group = c.benchmark_group("mapping_block");
    group.sample_size(10);
    let n = 10_000;
    let t = 100;
    let x = dense(n, 1);
    let csr = Csr::new(n, 2);
    let ids: Vec<usize> = (0..n).collect();
    for psi in [32usize, 256, 1024] {
        group.throughput(Throughput::Elements(n as u64));
        for (name, rows) in [
            ("dense22", Rows::Dense(x.view())),
            ("sparse123", Rows::Sparse(csr.rows())),
        ] {
            for (label, partitioner) in [
                ("full", Partitioner::IForest { height_limit: None }),
                (
                    "log2psi",
                    Partitioner::IForest {
                        height_limit: Some(isolation_kernel::paper_height_limit(psi)),
                    },
                ),
                ("anne", Partitioner::Anne),
            ] {
                if label == "anne" && psi > 1024 {
                    continue;
                }
                let k = IsolationKernel::fit(
                    rows,
                    psi,
                    t,
                    partitioner,
                    &mut ChaCha8Rng::seed_from_u64(3),
                )
                .unwrap();
                let mut out = vec![0u32; n * t];
                group.bench_function(
                    BenchmarkId::new(format!("{name}_{label}_chunks"), format!("psi{psi}_t{t}")),
                    |b| {
                        b.iter(|| {
                            for (ids, out) in ids.chunks(1024).zip(out.chunks_mut(1024 * t)) {
                                k.index_rows_of(rows, ids, out).unwrap();
                            }
                            out[n * t / 2]
                        })
                    },
                );
                group.bench_function(
                    BenchmarkId::new(format!("{name}_{label}"), format!("psi{psi}_t{t}")),
                    |b| {
                        b.iter(|| {
                            k.index_rows_of(rows, &ids, &mut out).unwrap();
                            out[n * t / 2]
                        })
                    },
                );
            }
        }
    }
    group.finish();
}

/// `build/*`: drawing t = 100 partitionings of ψ points (the IK map's fit) from 10,000 rows.
fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    let n = 10_000;
    let t = 100;
    let x = dense(n, 1);
    let csr = Csr::new(n, 2);
    for psi in [256usize, 1024] {
        for (name, rows) in [
            ("dense22", Rows::Dense(x.view())),
            ("sparse123", Rows::Sparse(csr.rows())),
        ] {
            for (label, height_limit) in [
                ("full", None),
                ("log2psi", Some(isolation_kernel::paper_height_limit(psi))),
            ] {
                let partitioner = Partitioner::IForest { height_limit };
                group.bench_function(
                    BenchmarkId::new(format!("{name}_{label}"), format!("psi{psi}_t{t}")),
                    |b| {
                        b.iter(|| {
                            IsolationKernel::fit(
                                rows,
                                psi,
                                t,
                                partitioner,
                                &mut ChaCha8Rng::seed_from_u64(3),
                            )
                            .unwrap()
                            .n_columns()
                        })
                    },
                );
            }
        }
    }
    group.finish();
}

fn online(c: &mut Criterion) {
    let n = 3000;
    let x = dense(n, 4);
    let csr = Csr::new(n, 5);
    let y = labels(n, 6);
    for (name, points, d) in [
        ("dense22", dense_rows(&x), 22),
        ("sparse123", sparse_rows(&csr.rows()), 123),
    ] {
        let kernel = OgdKernel::laplacian_psi(16, d).unwrap();
        let ogd_pass = || {
            let mut ogd = KernelOgd::new(kernel, d, PAPER_ETA).unwrap();
            let mut acc = 0.0;
            for (i, &c) in y.iter().enumerate() {
                acc += ogd.update_row(points[i], c).unwrap();
            }
            (acc, ogd.kernel_evaluations())
        };
        // NOGD after the switch: the stream trains it once, then each prediction is b = 100
        // kernel evaluations and z = M·k.
        let mut nogd = Nogd::new(NogdParams::paper(kernel, d)).unwrap();
        for (&row, &c) in points.iter().zip(&y) {
            nogd.update_row(row, c).unwrap();
        }
        assert!(nogd.is_switched());
        let mut group = c.benchmark_group("kernel_ogd");
        group.sample_size(10);
        group.throughput(Throughput::Elements(ogd_pass().1));
        group.bench_function(BenchmarkId::new(name, format!("n{n}")), |b| {
            b.iter(ogd_pass)
        });
        group.finish();
        let mut group = c.benchmark_group("nogd");
        group.sample_size(10);
        group.throughput(Throughput::Elements((n * 100) as u64));
        group.bench_function(BenchmarkId::new(name, format!("n{n}_b100_predict")), |b| {
            b.iter(|| {
                points
                    .iter()
                    .map(|&row| nogd.predict_row(row).unwrap())
                    .sum::<f64>()
            })
        });
        group.finish();
    }
}

/// IK-OGD's primal learner (spec §6) on pre-mapped index vectors: one pass of updates over
/// 10,000 rows (`ik_ogd/train`), then the predictions of those rows at once (`ik_ogd/predict`),
/// t = 100, η = 0.5 (the paper's), ψ ∈ {32, 256}; cells uniform at random, labels random, so
/// most rows violate the margin. Throughput in rows.
fn ik_ogd(c: &mut Criterion) {
    use isolation_kernel::IkOgd;
    use kernel_core::OnlineLearner;
    let (n, t) = (10_000, 100);
    let mut group = c.benchmark_group("ik_ogd");
    group.sample_size(20);
    group.throughput(Throughput::Elements(n as u64));
    for psi in [32usize, 256] {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let phi: Vec<u32> = (0..n * t)
            .map(|_| rng.random_range(0..psi as u32))
            .collect();
        let y = labels(n, 6);
        let trained = || {
            let mut learner = IkOgd::new(t, psi, PAPER_ETA).unwrap();
            for (row, &c) in phi.chunks(t).zip(&y) {
                learner.update(row, c).unwrap();
            }
            learner
        };
        group.bench_function(BenchmarkId::new("train", format!("psi{psi}_t{t}")), |b| {
            b.iter(trained)
        });
        let learner = trained();
        let mut out = vec![0.0; n];
        group.bench_function(BenchmarkId::new("predict", format!("psi{psi}_t{t}")), |b| {
            b.iter(|| learner.predict_rows(&phi, &mut out).unwrap())
        });
    }
    group.finish();
}

/// `ik_ogd_rows/*`: IK-OGD's predictions of 10,000 rows through the kernel
/// ([`isolation_kernel::IkOgd::predict_rows_of`]: w over 32 KiB, each row's weights summed as
/// the trees find its leaves; below, φ written out 1,024 rows at a time and then summed) against
/// mapping 1,024 rows at a time and then `predict_rows` (`*_phi_then_sum`), the authors' ⌈log₂ ψ⌉
/// trees, t = 100, w trained on the rows' own φ. The bound beside it: t weight look-ups a row
/// from L1 (w's ψ entries of one tree), on top of `mapping_block`'s map.
fn ik_ogd_rows(c: &mut Criterion) {
    use isolation_kernel::IkOgd;
    use kernel_core::OnlineLearner;
    let (n, t) = (10_000, 100);
    let x = dense(n, 7);
    let csr = Csr::new(n, 8);
    let y = labels(n, 9);
    let ids: Vec<usize> = (0..n).collect();
    let mut group = c.benchmark_group("ik_ogd_rows");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    for psi in [32usize, 256, 1024] {
        for (name, rows) in [
            ("dense22", Rows::Dense(x.view())),
            ("sparse123", Rows::Sparse(csr.rows())),
        ] {
            let partitioner = Partitioner::IForest {
                height_limit: Some(isolation_kernel::paper_height_limit(psi)),
            };
            let k =
                IsolationKernel::fit(rows, psi, t, partitioner, &mut ChaCha8Rng::seed_from_u64(3))
                    .unwrap();
            let phi = k.index_rows(rows).unwrap();
            let mut learner = IkOgd::for_kernel(&k, PAPER_ETA).unwrap();
            for (row, &c) in phi.chunks(t).zip(&y) {
                learner.update(row, c).unwrap();
            }
            let mut out = vec![0.0; n];
            group.bench_function(BenchmarkId::new(name, format!("psi{psi}_t{t}")), |b| {
                b.iter(|| {
                    learner.predict_rows_of(&k, rows, &ids, &mut out).unwrap();
                    out[n / 2]
                })
            });
            let mut phi = vec![0u32; 1024 * t];
            group.bench_function(
                BenchmarkId::new(format!("{name}_phi_then_sum"), format!("psi{psi}_t{t}")),
                |b| {
                    b.iter(|| {
                        for (ids, out) in ids.chunks(1024).zip(out.chunks_mut(1024)) {
                            let phi = &mut phi[..ids.len() * t];
                            k.index_rows_of(rows, ids, phi).unwrap();
                            learner.predict_rows(phi, out).unwrap();
                        }
                        out[n / 2]
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    mapping,
    mapping_block,
    build,
    online,
    ik_ogd,
    ik_ogd_rows
);
criterion_main!(benches);
