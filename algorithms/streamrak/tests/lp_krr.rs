//! LP-KRR (spec §7) against a direct computation.

use kernel_core::{Predictor, StreamingRegressor};
use ndarray::{s, Array2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use streamrak::baselines::LpKrr;
use streamrak::falkon::{Expansion, FalkonParams};
use streamrak::statistics::LevelStatistics;

/// LP-KRR's level 1 equals a FALKON solve of its own 2,500 points against the residual of
/// level 0, computed here directly (the blocks of the stream change nothing).
#[test]
fn lp_krr_levels_fit_the_residual_of_the_levels_before() {
    let f = |x: f64| (1.0 / (x + 0.05)).sin();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let x: Array2<f64> = Array2::from_shape_fn((5_000, 1), |_| rng.random_range(0.0..1.0));
    let y = x.mapv(f);
    let lm = x.slice(s![..60, ..]).to_owned();
    let mut lp = LpKrr::new(lm.clone(), 1.0, 2_500, 1, FalkonParams::paper()).unwrap();
    for i in 0..5_000 {
        lp.push(&[x[[i, 0]]], &[y[[i, 0]]], &mut rng).unwrap();
    }
    assert_eq!(lp.levels(), 2);
    assert_eq!(lp.fitted_after(), [2_500, 5_000]);
    let rows = s![2_500..5_000, ..];
    let residual = &y.slice(rows) - &lp.expansions()[0].predict(x.slice(rows)).unwrap();
    let mut stats = LevelStatistics::new(lm, 0.5, 1).unwrap();
    stats.add(x.slice(rows), residual.view()).unwrap();
    let direct = Expansion::fit(&stats, FalkonParams::paper()).unwrap();
    assert_eq!(lp.expansions()[1], direct);
}
