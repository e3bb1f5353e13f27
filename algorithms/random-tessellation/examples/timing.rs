//! Times one `classify` call (T = 100, M = 100, tess19 defaults) on a synthetic 53 × 10 set
//! (two Gaussian classes) and, given a CSV path (numeric columns, label last, header line),
//! on its first 3000 rows min-max scaled (e.g. spam: 3000 × 57):
//!
//! ```sh
//! zcat shared/datasets/classification/spam.csv.gz > /tmp/spam.csv
//! cargo run --release -p random-tessellation --example timing -- /tmp/spam.csv [trees]
//! ```
//!
//! `RTF_CUT_RATE=thinning` times the exact-thinning variant instead of tess19's scheme.

use std::time::Instant;

use kernel_core::{Classifier, LabelledRows};
use ndarray::{s, Array2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use random_tessellation::{CutRate, Forest, ForestConfig, Prior, PriorKind};

fn synthetic(n: usize, d: usize, seed: u64) -> (Array2<f64>, Vec<u32>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let labels: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let x = Array2::from_shape_fn((n, d), |(i, j)| {
        let g: f64 = rng.sample(StandardNormal);
        g + if j < 2 { labels[i] as f64 } else { 0.0 }
    });
    (x, labels)
}

fn read_csv(path: &str, rows: usize) -> (Array2<f64>, Vec<u32>) {
    let text = std::fs::read_to_string(path).expect("readable CSV");
    let mut names: Vec<String> = Vec::new();
    let mut values = Vec::new();
    let mut labels = Vec::new();
    let mut d = 0;
    for line in text.lines().skip(1).take(rows) {
        let fields: Vec<&str> = line.split(',').collect();
        d = fields.len() - 1;
        values.extend(
            fields[..d]
                .iter()
                .map(|v| v.parse::<f64>().expect("numeric")),
        );
        let label = fields[d].to_string();
        let k = names.iter().position(|n| *n == label).unwrap_or_else(|| {
            names.push(label);
            names.len() - 1
        });
        labels.push(k as u32);
    }
    let mut x = Array2::from_shape_vec((labels.len(), d), values).unwrap();
    for mut col in x.columns_mut() {
        let (lo, hi) = col
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                (l.min(v), h.max(v))
            });
        let span = if hi > lo { hi - lo } else { 1.0 };
        col.mapv_inplace(|v| (v - lo) / span);
    }
    (x, labels)
}

fn time(name: &str, x: &Array2<f64>, labels: &[u32], n_train: usize, trees: usize) {
    let (train, test) = (x.slice(s![..n_train, ..]), x.slice(s![n_train.., ..]));
    let k = *labels.iter().max().unwrap() as usize + 1;
    let cut_rate = match std::env::var("RTF_CUT_RATE").as_deref() {
        Ok("thinning") => CutRate::ExactThinning,
        _ => CutRate::HalfDiameter,
    };
    let config = ForestConfig {
        trees,
        cut_rate,
        ..ForestConfig::default()
    };
    for kind in [PriorKind::Uniform, PriorKind::Mondrian] {
        let prior = Prior::new(kind, x.ncols(), None).unwrap();
        let start = Instant::now();
        let out = Forest::new(prior.clone(), config.clone())
            .and_then(|f| f.fit_predict(LabelledRows::new(train, &labels[..n_train], k), test, 1))
            .unwrap();
        let secs = start.elapsed().as_secs_f64();
        let correct = out
            .predictions
            .iter()
            .zip(&labels[n_train..])
            .filter(|(a, b)| a == b)
            .count();
        println!(
            "{name} {kind:?}: n_train {n_train}, d {}, T {trees}: {secs:.2} s, {} cuts ({:.3e} cuts/s), \
             mean cuts {:.1}, proposals {}, rejections {}, test accuracy {}/{}",
            x.ncols(),
            out.stats.cuts,
            out.stats.cuts as f64 / secs,
            out.stats.mean_cuts,
            out.stats.proposals,
            out.stats.rejections,
            correct,
            labels.len() - n_train
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trees = args.get(2).map_or(100, |t| t.parse().unwrap());
    let (x, labels) = synthetic(80, 10, 7);
    time("synthetic", &x, &labels, 53, trees);
    if let Some(path) = args.get(1) {
        let (x, labels) = read_csv(path, 4601);
        // Shuffle deterministically so both classes are in the training rows.
        let mut order: Vec<usize> = (0..labels.len()).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        let x = x.select(ndarray::Axis(0), &order);
        let labels: Vec<u32> = order.iter().map(|&i| labels[i]).collect();
        let n_train = 3000.min(labels.len() * 2 / 3);
        time("csv", &x, &labels, n_train, trees);
    }
}
