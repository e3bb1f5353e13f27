//! Peak resident memory of StreaMRAK against stream length (the memory claim: per
//! level only the m_l × m_l statistics and a bounded buffer are kept). The VarSinus stream is
//! drawn point by point (x = Gamma(1, 2) / 28.6 capped at 1 with probability 3/4, else uniform
//! on [0, 1); y = sin(1/(x + 0.01)) + N(0, 1e-8)), so no data set is held in memory: what grows
//! is the model.
//!
//! `cargo run --release -p streamrak --example peak_memory -- 500000 [MAX_LEVEL]` prints the
//! points, the fitted levels, the tree's nodes and the process's peak resident set (VmHWM) in
//! MiB (MAX_LEVEL: deepest level fitted, default 16).

mod varsinus;

use kernel_core::StreamingRegressor;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use streamrak::model::Streamrak;
use varsinus::{e1_params, VarSinus};

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(500_000);
    let max_level: usize = std::env::args()
        .nth(2)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(16);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let varsinus = VarSinus::new();
    let draw = |rng: &mut ChaCha8Rng| varsinus.draw(rng);
    let params = e1_params(max_level);
    let (x0, y0) = draw(&mut rng);
    let mut model = Streamrak::new(&[x0], &[y0], params)?;
    let before = peak_rss_mib().unwrap_or(f64::NAN);
    let started = std::time::Instant::now();
    for _ in 1..n {
        let (x, y) = draw(&mut rng);
        model.push(&[x], &[y], &mut rng)?;
    }
    model.finish(&mut rng)?;
    let landmarks: usize = model
        .levels()
        .iter()
        .map(|l| l.expansion.landmarks.nrows())
        .sum();
    println!(
        "points {n}  max level {max_level}  levels {}  landmarks {landmarks}  tree nodes {}  seconds {:.1}  peak RSS {:.1} MiB (before streaming {:.1} MiB)",
        model.levels().len(),
        model.tree().len(),
        started.elapsed().as_secs_f64(),
        peak_rss_mib().unwrap_or(f64::NAN),
        before
    );
    Ok(())
}
