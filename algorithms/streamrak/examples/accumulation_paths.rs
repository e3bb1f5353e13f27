//! The time of one block of 10,000 rows added to a level's statistics on each accumulation path
//! (dense `dsyrk`, banded, and the one the cost model picks), uniform rows and landmarks in
//! [0, 1)^D: the measurements behind the cost model in `statistics.rs`.
//!
//! `OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 cargo run --release -p streamrak --example
//! accumulation_paths -- D M R` (D coordinates, M landmarks, bandwidth R), e.g. `4 3000 0.03`.

use ndarray::{Array2, Axis};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use streamrak::statistics::{Accumulation, LevelStatistics};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: accumulation_paths D M R (coordinates, landmarks, bandwidth), e.g. 4 3000 0.03";
    let [d, m, r] = args.as_slice() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let (Ok(d), Ok(m), Ok(r)) = (d.parse::<usize>(), m.parse::<usize>(), r.parse::<f64>()) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let rows = 10_000;
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let x = Array2::from_shape_fn((rows, d), |_| rng.random::<f64>());
    let y = x.column(0).to_owned().insert_axis(Axis(1));
    let landmarks = Array2::from_shape_fn((m, d), |_| rng.random::<f64>());
    for path in [
        Accumulation::Dense,
        Accumulation::Banded,
        Accumulation::Auto,
    ] {
        let mut stats = match LevelStatistics::with_accumulation(landmarks.clone(), r, 1, path) {
            Ok(stats) => stats,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        };
        let start = std::time::Instant::now();
        if let Err(e) = stats.add(x.view(), y.view()) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        let seconds = start.elapsed().as_secs_f64();
        let c = stats.counts();
        println!(
            "{path:?}: D {d} m {m} r {r}: {seconds:.3} s, {:.1} GFLOP/s of the dense flops, Gram flops / dense {:.3}, {:.0} ns a row",
            (rows * m * (m + 1)) as f64 / seconds / 1e9,
            c.gram_flops as f64 / c.dense_gram_flops as f64,
            seconds / rows as f64 * 1e9,
        );
    }
}
