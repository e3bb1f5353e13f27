//! Per-level timings of StreaMRAK on the E1 VarSinus stream (the settings of
//! configs/streamrak/e1_varsinus.toml, the stream drawn point by point as in `peak_memory`):
//! per fitted level its landmarks, rows, the wall seconds spent while it collected, and its
//! solve, and the work of accumulating its statistics: the shares of its kernel entries that
//! are exactly 0.0 and that were evaluated, the share of the non-zero ones below 2^−511 (left
//! out of the banded KᵀK), its Gram flops against the dense path's, and the blocks of rows
//! that took the banded and the dense path.
//!
//! `cargo run --release -p streamrak --example varsinus_levels -- 2200000 [MAX_LEVEL] [SEED]
//! [auto|dense|banded]`

mod varsinus;

use kernel_core::StreamingRegressor;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use streamrak::model::Streamrak;
use streamrak::statistics::Accumulation;
use varsinus::{e1_params, VarSinus};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = |i: usize, default: u64| -> Result<u64, Box<dyn std::error::Error>> {
        Ok(std::env::args()
            .nth(i)
            .map(|a| a.parse())
            .transpose()?
            .unwrap_or(default))
    };
    let n = arg(1, 2_200_000)? as usize;
    let max_level = arg(2, 16)? as usize;
    let seed = arg(3, 7)?;
    let accumulation = match std::env::args().nth(4).as_deref() {
        None | Some("auto") => Accumulation::Auto,
        Some("dense") => Accumulation::Dense,
        Some("banded") => Accumulation::Banded,
        Some(other) => return Err(format!("unknown accumulation {other}").into()),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let varsinus = VarSinus::new();
    let draw = |rng: &mut ChaCha8Rng| varsinus.draw(rng);
    let params = e1_params(max_level);
    let (x0, y0) = draw(&mut rng);
    let mut model = Streamrak::new(&[x0], &[y0], params)?.with_accumulation(accumulation);
    let started = std::time::Instant::now();
    let mut fitted_at = Vec::new();
    for _ in 1..n {
        let (x, y) = draw(&mut rng);
        model.push(&[x], &[y], &mut rng)?;
        while fitted_at.len() < model.levels().len() {
            fitted_at.push(started.elapsed().as_secs_f64());
        }
    }
    model.finish(&mut rng)?;
    while fitted_at.len() < model.levels().len() {
        fitted_at.push(started.elapsed().as_secs_f64());
    }
    let total = started.elapsed().as_secs_f64();
    println!(
        "level      m     rows  fitted_after  wall_at_fit  solve_s  zeros  evaluated  negligible  gram_flops  banded/dense"
    );
    for (l, at) in model.levels().iter().zip(&fitted_at) {
        let c = &l.accumulation;
        println!(
            "{:5} {:6} {:8} {:13} {:12.2} {:8.3} {:6.3} {:10.4} {:11.4} {:11.5} {:>6}/{}",
            l.level,
            l.expansion.landmarks.nrows(),
            l.rows,
            l.fitted_after,
            at,
            l.solve_seconds,
            c.zero_fraction(),
            c.evaluated_entries as f64 / c.kernel_entries.max(1) as f64,
            c.negligible_entries as f64 / (c.kernel_entries - c.zero_entries).max(1) as f64,
            c.flop_fraction(),
            c.banded_blocks,
            c.dense_blocks
        );
    }
    // A checksum of the fit: predictions on a fixed grid.
    let grid = ndarray::Array2::from_shape_fn((1000, 1), |(i, _)| i as f64 / 1000.0);
    let f = kernel_core::Predictor::predict(&model, grid.view())?;
    let mse = grid
        .iter()
        .zip(f.iter())
        .map(|(x, v)| ((1.0 / (x + 0.01)).sin() - v).powi(2))
        .sum::<f64>()
        / 1000.0;
    println!(
        "points {n}  levels {}  tree nodes {}  seconds {total:.1}  grid MSE {mse:.6e}  checksum {:.17e}",
        model.levels().len(),
        model.tree().len(),
        f.sum()
    );
    Ok(())
}
