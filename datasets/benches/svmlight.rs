//! Throughput of the svmlight reader in MB/s of text, on synthetic ijcnn1-like data generated
//! in memory (22 features, about 13 non-zeros a row, labels -1/+1): values in the shortest
//! exponent form the harness writes for the authors' code (`-7.31854e-1`) and in the plain
//! decimals of the LIBSVM originals (`-0.731854`); from memory, from a plain file (whose size
//! lets the reader allocate the matrix at once) and from a gzip file (decompression included).
//! `cargo bench -p datasets --bench svmlight`.

use std::io::Write;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use datasets::loaders::{parse_svmlight_sparse, read_svmlight_sparse};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `rows` lines like ijcnn1's: a one-hot block among features 1..=10, then 12 real features
/// from 11..=22 (some left out), six significant digits.
fn ijcnn1_like(rows: usize, exponent_form: bool) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut text = String::new();
    for _ in 0..rows {
        text.push_str(if rng.random_bool(0.1) { "+1" } else { "-1" });
        let hot = rng.random_range(1..=10);
        text.push_str(&format!(" {hot}:1"));
        for j in 11..=22 {
            if rng.random_bool(0.05) {
                continue;
            }
            let v: f64 = rng.random_range(-1.0..1.0) * 10f64.powi(-rng.random_range(0..4));
            let v = format!("{v:.5e}").parse::<f64>().unwrap();
            if exponent_form {
                text.push_str(&format!(" {j}:{v:e}"));
            } else {
                text.push_str(&format!(" {j}:{v}"));
            }
        }
        text.push('\n');
    }
    text.into_bytes()
}

fn svmlight(c: &mut Criterion) {
    let rows = 50_000;
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("svmlight");
    group.sample_size(20);
    for (name, exponent_form) in [("exponent_form", true), ("plain_decimals", false)] {
        let text = ijcnn1_like(rows, exponent_form);
        group.throughput(Throughput::BytesDecimal(text.len() as u64));
        group.bench_function(format!("{name}/memory"), |b| {
            b.iter(|| parse_svmlight_sparse(&text[..], Path::new("bench.svm"), None).unwrap())
        });
        let plain = dir.path().join(format!("{name}.svm"));
        std::fs::write(&plain, &text).unwrap();
        group.bench_function(format!("{name}/file"), |b| {
            b.iter(|| read_svmlight_sparse(&plain, None).unwrap())
        });
        let packed = dir.path().join(format!("{name}.svm.gz"));
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&text).unwrap();
        std::fs::write(&packed, enc.finish().unwrap()).unwrap();
        group.bench_function(format!("{name}/gzip_file"), |b| {
            b.iter(|| read_svmlight_sparse(&packed, None).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, svmlight);
criterion_main!(benches);
