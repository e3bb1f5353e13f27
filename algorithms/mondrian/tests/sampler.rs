//! Statistical tests of the Mondrian samplers against the laws stated by Roy & Teh (2009) and
//! Balog et al. (2016). Every test uses a fixed seed; the tolerances are stated at each assert
//! (4 standard errors, or the 1 % critical value of the Kolmogorov-Smirnov statistic).

use kernel_core::kernel::laplace;
use mondrian::{
    sample_box_partition, sample_cut, AxisBox, MondrianError, MondrianForest, MondrianTree,
};
use ndarray::{array, Array2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Kolmogorov-Smirnov statistic of `samples` against the continuous CDF `cdf`.
fn ks_statistic(mut samples: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    let n = samples.len() as f64;
    samples
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max((f - (i + 1) as f64 / n).abs())
        })
        .fold(0.0, f64::max)
}

/// Critical value of the KS statistic at level 1 %.
fn ks_critical(n: usize) -> f64 {
    1.63 / (n as f64).sqrt()
}

fn mean_and_standard_error(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

#[test]
fn expected_number_of_cells_is_product_of_one_plus_lifetime_times_side() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let domain = AxisBox::new(vec![0.0, 0.0], vec![1.0, 2.0]).unwrap();
    let lifetime = 2.0;
    let counts: Vec<f64> = (0..4000)
        .map(|_| {
            sample_box_partition(&domain, lifetime, &mut rng)
                .unwrap()
                .len() as f64
        })
        .collect();
    let expected = (1.0 + lifetime * 1.0) * (1.0 + lifetime * 2.0);
    let (mean, se) = mean_and_standard_error(&counts);
    assert!(
        (mean - expected).abs() < 4.0 * se,
        "mean {mean} vs {expected} (se {se})"
    );
}

#[test]
fn cut_time_dimension_and_location_follow_their_laws() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let lower = [0.0, -1.0, 2.0];
    let upper = [1.0, 1.0, 2.5];
    let sides = [1.0, 2.0, 0.5];
    let rate: f64 = sides.iter().sum();
    let n = 20_000;
    let cuts: Vec<_> = (0..n)
        .map(|_| sample_cut(&lower, &upper, 0.3, &mut rng).unwrap())
        .collect();
    // Cut time - birth ~ Exp(linear dimension).
    let times: Vec<f64> = cuts.iter().map(|c| c.time - 0.3).collect();
    let d = ks_statistic(times, |t| 1.0 - (-rate * t).exp());
    assert!(d < ks_critical(n), "cut-time KS statistic {d}");
    // Dimension chosen with probability side / linear dimension.
    for (dim, side) in sides.iter().enumerate() {
        let p = side / rate;
        let count = cuts.iter().filter(|c| c.dimension == dim).count() as f64;
        let se = (n as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (count - n as f64 * p).abs() < 4.0 * se,
            "dimension {dim}: {count}"
        );
    }
    // Location uniform on the chosen side.
    let relative: Vec<f64> = cuts
        .iter()
        .map(|c| (c.location - lower[c.dimension]) / sides[c.dimension])
        .collect();
    let d = ks_statistic(relative, |u| u.clamp(0.0, 1.0));
    assert!(d < ks_critical(n), "location KS statistic {d}");
}

#[test]
fn degenerate_box_is_never_cut() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    assert!(sample_cut(&[0.5, 0.5], &[0.5, 0.5], 0.0, &mut rng).is_none());
}

#[test]
fn projectivity_restriction_to_sub_box_is_a_mondrian_of_the_sub_box() {
    // Cells of MP(λ, [0,1]²) meeting the sub-box S are the cells of MP(λ, S): their expected
    // number is Π_d (1 + λ |S_d|).
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let domain = AxisBox::new(vec![0.0, 0.0], vec![1.0, 1.0]).unwrap();
    let sub = AxisBox::new(vec![0.2, 0.1], vec![0.6, 0.4]).unwrap();
    let lifetime = 3.0;
    let counts: Vec<f64> = (0..4000)
        .map(|_| {
            sample_box_partition(&domain, lifetime, &mut rng)
                .unwrap()
                .iter()
                .filter(|cell| cell.intersects(&sub))
                .count() as f64
        })
        .collect();
    let expected = (1.0 + lifetime * 0.4) * (1.0 + lifetime * 0.3);
    let (mean, se) = mean_and_standard_error(&counts);
    assert!(
        (mean - expected).abs() < 4.0 * se,
        "mean {mean} vs {expected} (se {se})"
    );
}

#[test]
fn data_restricted_tree_has_the_law_of_the_full_mondrian_on_the_points() {
    // Number of leaves of a tree restricted to the points = number of non-empty cells of the
    // full-box Mondrian on the points' bounding box (same law, by projectivity).
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let x = Array2::from_shape_fn((60, 2), |_| rng.random::<f64>());
    let lower = vec![
        x.column(0).fold(1.0, |a: f64, &b| a.min(b)),
        x.column(1).fold(1.0, |a: f64, &b| a.min(b)),
    ];
    let upper = vec![
        x.column(0).fold(0.0, |a: f64, &b| a.max(b)),
        x.column(1).fold(0.0, |a: f64, &b| a.max(b)),
    ];
    let domain = AxisBox::new(lower, upper).unwrap();
    let lifetime = 4.0;
    let trials = 3000;
    let tree_leaves: Vec<f64> = (0..trials)
        .map(|_| {
            MondrianTree::sample(x.view(), lifetime, &mut rng)
                .unwrap()
                .n_leaves() as f64
        })
        .collect();
    let full_nonempty: Vec<f64> = (0..trials)
        .map(|_| {
            sample_box_partition(&domain, lifetime, &mut rng)
                .unwrap()
                .iter()
                .filter(|cell| {
                    x.rows()
                        .into_iter()
                        .any(|p| (0..2).all(|d| cell.lower[d] <= p[d] && p[d] <= cell.upper[d]))
                })
                .count() as f64
        })
        .collect();
    let (m1, se1) = mean_and_standard_error(&tree_leaves);
    let (m2, se2) = mean_and_standard_error(&full_nonempty);
    let se = (se1 * se1 + se2 * se2).sqrt();
    assert!(
        (m1 - m2).abs() < 4.0 * se,
        "tree {m1} vs full box {m2} (se {se})"
    );
}

#[test]
fn two_points_separate_at_an_exponential_time_with_rate_their_l1_distance() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let x = array![[0.1, 0.7], [0.4, 0.5]];
    let distance = 0.5;
    let n = 5000;
    let times: Vec<f64> = (0..n)
        .map(|_| {
            MondrianTree::sample(x.view(), 1e6, &mut rng)
                .unwrap()
                .splits()[0]
                .time
        })
        .collect();
    let d = ks_statistic(times, |t| 1.0 - (-distance * t).exp());
    assert!(d < ks_critical(n), "separation-time KS statistic {d}");
}

#[test]
fn mondrian_kernel_converges_to_the_laplace_kernel() {
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let x = array![
        [0.0, 0.0],
        [0.02, 0.01],
        [0.1, 0.0],
        [0.2, 0.15],
        [0.5, 0.3],
        [0.9, 1.0]
    ];
    let lifetime = 3.0;
    let m = 4000;
    let forest = MondrianForest::sample(x.view(), lifetime, m, &mut rng).unwrap();
    let features = forest.features();
    for i in 0..x.nrows() {
        for j in 0..x.nrows() {
            let estimate = features.agreements(i, j, m) as f64 / m as f64;
            let exact = laplace(x.row(i), x.row(j), lifetime);
            let se = (exact * (1.0 - exact) / m as f64).sqrt().max(1e-3);
            assert!(
                (estimate - exact).abs() < 4.0 * se,
                "pair ({i}, {j}): {estimate} vs {exact} (se {se})"
            );
        }
        assert_eq!(features.agreements(i, i, m), m, "diagonal is exactly 1");
    }
}

#[test]
fn feature_map_has_exactly_m_nonzeros_per_row() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let x = Array2::from_shape_fn((50, 3), |_| rng.random::<f64>());
    let forest = MondrianForest::sample(x.view(), 5.0, 7, &mut rng).unwrap();
    let features = forest.features();
    assert_eq!(features.nnz(), 50 * 7);
    for i in 0..50 {
        let row = features.row(i);
        for (b, &c) in row.iter().enumerate() {
            // Each block's column lies in the block's own id range.
            let offset: u32 = forest.trees()[..b].iter().map(|t| t.n_nodes()).sum();
            assert!(c >= offset && c < offset + forest.trees()[b].n_nodes());
        }
    }
}

#[test]
fn nesting_tree_stopped_at_a_smaller_lifetime_equals_a_direct_sample() {
    let mut base = ChaCha8Rng::seed_from_u64(18);
    let x = Array2::from_shape_fn((200, 2), |_| base.random::<f64>());
    let seed = [7u8; 32];
    let long = MondrianTree::sample(x.view(), 20.0, &mut ChaCha8Rng::from_seed(seed)).unwrap();
    for lifetime in [0.5, 2.0, 7.5] {
        let short =
            MondrianTree::sample(x.view(), lifetime, &mut ChaCha8Rng::from_seed(seed)).unwrap();
        assert_eq!(
            long.leaves_at(x.view(), lifetime).unwrap(),
            short.leaf_of_point()
        );
        let prefix: Vec<_> = long
            .splits()
            .iter()
            .take_while(|s| s.time <= lifetime)
            .copied()
            .collect();
        assert_eq!(prefix, short.splits());
        // The coarser partition is refined by the finer one: points sharing a leaf at the
        // larger lifetime share one at the smaller lifetime.
        let coarse = short.leaf_of_point();
        let fine = long.leaf_of_point();
        for i in 0..x.nrows() {
            for j in 0..x.nrows() {
                if fine[i] == fine[j] {
                    assert_eq!(coarse[i], coarse[j]);
                }
            }
        }
    }
}

#[test]
fn forest_does_not_depend_on_the_thread_count() {
    let mut base = ChaCha8Rng::seed_from_u64(19);
    let x = Array2::from_shape_fn((300, 3), |_| base.random::<f64>());
    let sample = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            MondrianForest::sample(x.view(), 6.0, 16, &mut ChaCha8Rng::seed_from_u64(5)).unwrap()
        })
    };
    assert_eq!(sample(1), sample(2));
}

#[test]
fn bad_parameters_are_typed_errors() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let x = array![[0.0, 1.0], [1.0, 0.0]];
    assert!(matches!(
        MondrianTree::sample(x.view(), -1.0, &mut rng).unwrap_err(),
        MondrianError::InvalidParameter {
            name: "lifetime",
            ..
        }
    ));
    assert!(MondrianTree::sample(x.view(), f64::INFINITY, &mut rng).is_err());
    assert!(matches!(
        MondrianForest::sample(x.view(), 1.0, 0, &mut rng).unwrap_err(),
        MondrianError::InvalidParameter {
            name: "n_mondrians",
            ..
        }
    ));
    let bad = array![[0.0, f64::NAN]];
    assert!(matches!(
        MondrianTree::sample(bad.view(), 1.0, &mut rng),
        Err(MondrianError::NonFiniteInput {
            row: 0,
            column: 1,
            ..
        })
    ));
    assert!(MondrianTree::sample(Array2::<f64>::zeros((0, 2)).view(), 1.0, &mut rng).is_err());
    assert!(AxisBox::new(vec![1.0], vec![0.0]).is_err());
    for (delta, tol, max_iter, name) in [
        (0.0, 1e-6, 10, "delta"),
        (1.0, -1e-6, 10, "cg_tolerance"),
        (1.0, 1e-6, 0, "cg_max_iterations"),
    ] {
        let e = mondrian::KernelRidgeSweep::new(4, delta, tol, max_iter).unwrap_err();
        assert!(matches!(e, MondrianError::InvalidParameter { name: n, .. } if n == name));
    }
    // Lifetime 0 is valid: no cuts, the kernel is constant 1.
    assert_eq!(
        MondrianTree::sample(x.view(), 0.0, &mut rng)
            .unwrap()
            .n_leaves(),
        1
    );
}

#[test]
fn sweep_state_at_a_lifetime_equals_trees_sampled_to_it() {
    let mut base = ChaCha8Rng::seed_from_u64(20);
    let x = Array2::from_shape_fn((150, 2), |_| base.random::<f64>());
    let long =
        MondrianForest::sample(x.view(), 30.0, 6, &mut ChaCha8Rng::seed_from_u64(9)).unwrap();
    let events = long.sweep_events();
    assert!(events.windows(2).all(|w| w[0].time <= w[1].time));
    assert_eq!(
        events.len(),
        long.trees().iter().map(|t| t.splits().len()).sum::<usize>()
    );
    let offsets = long.column_offsets();
    let mut state = mondrian::SweepState::new(&long);
    for lifetime in [0.0, 1.0, 4.0, 12.0, 30.0] {
        state.advance_to(&long, &events, lifetime);
        let short =
            MondrianForest::sample(x.view(), lifetime, 6, &mut ChaCha8Rng::seed_from_u64(9))
                .unwrap();
        for (m, tree) in short.trees().iter().enumerate() {
            for i in 0..x.nrows() {
                assert_eq!(
                    state.leaf(i, m) - offsets[m],
                    tree.leaf_of_point()[i],
                    "lifetime {lifetime}"
                );
            }
        }
    }
    assert_eq!(state.applied(), events.len());
}

#[test]
fn sweep_ridge_by_cg_equals_dense_cholesky_and_a_direct_fit() {
    use kernel_core::ridge::nested_ridge;
    let mut base = ChaCha8Rng::seed_from_u64(21);
    let n_train = 120;
    let x = Array2::from_shape_fn((160, 2), |_| base.random::<f64>());
    let y: Vec<f64> = (0..n_train)
        .map(|i| (x[[i, 0]] * 6.0).sin() + x[[i, 1]])
        .collect();
    let mean = y.iter().sum::<f64>() / n_train as f64;
    let centred = ndarray::Array1::from_iter(y.iter().map(|v| v - mean));
    let m = 8;
    let delta = 1e-2;
    let forest =
        MondrianForest::sample(x.view(), 12.0, m, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
    let events = forest.sweep_events();
    for (preconditioner, dense_below) in [
        (mondrian::Preconditioner::Jacobi, 0),
        (mondrian::Preconditioner::GaussSeidel, 0),
        (mondrian::Preconditioner::Jacobi, mondrian::DENSE_BELOW),
    ] {
        let mut state = mondrian::SweepState::new(&forest);
        let mut ridge = mondrian::KernelRidgeSweep::new(forest.n_columns(), delta, 1e-12, 10_000)
            .unwrap()
            .with_preconditioner(preconditioner)
            .with_dense_below(dense_below);
        for lifetime in [1.0, 3.0, 6.0, 12.0] {
            let applied = state.advance_to(&forest, &events, lifetime);
            ridge.inherit(&events[applied]);
            let features = state.features();
            let fit = ridge.fit(&features, n_train, centred.view());
            assert!(fit.cg.converged, "{:?}", fit.cg);
            assert_eq!(fit.direct, dense_below > 0);
            // Dense oracle: (AᵀA + MδI) v = Aᵀỹ by Cholesky.
            let compact = features.compact_columns(0..n_train).unwrap();
            let gram = features.gram(0..n_train, &compact);
            let rhs = features.transpose_times(0..n_train, centred.view(), &compact);
            let v = &nested_ridge(
                gram.view(),
                rhs.view(),
                &[compact.len()],
                &[m as f64 * delta],
            )
            .unwrap()[0];
            let dense = features.times_prefix(0..x.nrows(), v.view(), &compact, m);
            for (a, b) in fit.centred_predictions.iter().zip(dense.iter()) {
                assert!(
                    (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                    "lifetime {lifetime}: {a} vs {b}"
                );
            }
            // The paper's weights w = √M v of every current leaf; 0 where no training point falls
            // (including leaves that inherited a weight from a parent with training points).
            let mut leaves: Vec<u32> = (0..x.nrows())
                .flat_map(|i| features.row(i).to_vec())
                .collect();
            leaves.sort_unstable();
            leaves.dedup();
            let weights = ridge.paper_weights(&leaves, m);
            let mut empty = 0;
            for (&c, &w) in leaves.iter().zip(&weights) {
                match compact.original_columns().iter().position(|&g| g == c) {
                    Some(a) => assert!(
                        (w - (m as f64).sqrt() * v[a]).abs() <= 1e-6 * w.abs().max(1.0),
                        "leaf {c}: {w} vs {}",
                        (m as f64).sqrt() * v[a]
                    ),
                    None => {
                        assert_eq!(w, 0.0, "leaf {c} without training points");
                        empty += 1;
                    }
                }
            }
            if lifetime == 12.0 {
                assert!(
                    empty > 0,
                    "the test should cover leaves without training points"
                );
            }
        }
    }
}

#[test]
fn forest_closed_form_equals_per_tree_ridge() {
    use kernel_core::ridge::ridge_weights;
    let mut base = ChaCha8Rng::seed_from_u64(22);
    let n_train = 80;
    let x = Array2::from_shape_fn((100, 2), |_| base.random::<f64>());
    let centred = ndarray::Array1::from_iter((0..n_train).map(|i| x[[i, 0]] - 0.5));
    let m = 4;
    let delta = 0.3;
    let forest =
        MondrianForest::sample(x.view(), 5.0, m, &mut ChaCha8Rng::seed_from_u64(4)).unwrap();
    let features = forest.features();
    let fit = mondrian::forest_fit(&features, n_train, centred.view(), delta);
    // Per tree: ridge on its own leaf indicators scaled 1/√M with penalty δ/M; forest = mean.
    let mut expected = ndarray::Array1::<f64>::zeros(x.nrows());
    for b in 0..m {
        let cols: Vec<u32> = {
            let mut c: Vec<u32> = (0..x.nrows()).map(|i| features.row(i)[b]).collect();
            c.sort_unstable();
            c.dedup();
            c
        };
        let z = Array2::from_shape_fn((x.nrows(), cols.len()), |(i, k)| {
            if features.row(i)[b] == cols[k] {
                1.0 / (m as f64).sqrt()
            } else {
                0.0
            }
        });
        let w = ridge_weights(
            z.slice(ndarray::s![..n_train, ..]),
            centred.view(),
            delta / m as f64,
        )
        .unwrap();
        // The tree's own prediction z·w is its shrunk leaf mean T_m; the forest averages them.
        expected = expected + z.dot(&w) / m as f64;
    }
    for (a, b) in fit.centred_predictions.iter().zip(expected.iter()) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
    // Leaf values S/(n + δ) by brute force over the training rows, one entry per leaf.
    let n_leaves: usize = (0..m)
        .map(|b| {
            let mut c: Vec<u32> = (0..x.nrows()).map(|i| features.row(i)[b]).collect();
            c.sort_unstable();
            c.dedup();
            c.len()
        })
        .sum();
    assert_eq!(fit.leaf_values.len(), n_leaves);
    for &(c, value) in &fit.leaf_values {
        let rows: Vec<usize> = (0..n_train)
            .filter(|&i| features.row(i).contains(&c))
            .collect();
        let s: f64 = rows.iter().map(|&i| centred[i]).sum();
        assert!((value - s / (rows.len() as f64 + delta)).abs() < 1e-12);
    }
}

#[test]
fn sgd_sweep_inherits_exactly_and_runs_the_sklearn_rule_on_the_current_features() {
    use kernel_core::sgd::{ScaledWeights, Sgd};
    let mut base = ChaCha8Rng::seed_from_u64(23);
    let n_train = 60;
    let x = Array2::from_shape_fn((80, 2), |_| base.random::<f64>());
    let centred = ndarray::Array1::from_iter((0..n_train).map(|i| x[[i, 0]] - x[[i, 1]]));
    let m = 5;
    let forest =
        MondrianForest::sample(x.view(), 6.0, m, &mut ChaCha8Rng::seed_from_u64(5)).unwrap();
    let events = forest.sweep_events();
    assert!(events.len() > 10);
    let mut state = mondrian::SweepState::new(&forest);
    let mut learner = mondrian::KernelSgdSweep::new(forest.n_columns(), 1e-3);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    // Oracle: the same epochs on the dense feature matrix, weights carried by hand.
    let mut oracle = vec![0.0; forest.n_columns()];
    let mut oracle_rng = ChaCha8Rng::seed_from_u64(7);
    let scale = 1.0 / (m as f64).sqrt();
    loop {
        let before = learner.centred_predictions(&state);
        let Some(k) = state.step(&forest, &events) else {
            break;
        };
        learner.inherit(&events[k..=k]);
        // A split with inheritance leaves every prediction bit-identical (spec §10.5).
        assert_eq!(before, learner.centred_predictions(&state));
        learner.epoch(&state, n_train, centred.view(), &mut rng);

        let e = events[k];
        oracle[e.left as usize] = oracle[e.parent as usize];
        oracle[e.right as usize] = oracle[e.parent as usize];
        oracle[e.parent as usize] = 0.0;
        let features = state.features();
        let dense = Array2::from_shape_fn((n_train, forest.n_columns()), |(i, c)| {
            if features.row(i).contains(&(c as u32)) {
                scale
            } else {
                0.0
            }
        });
        let mut w = ScaledWeights::zeros(forest.n_columns());
        for (c, &v) in oracle.iter().enumerate() {
            w.set(c, v);
        }
        Sgd::sklearn_0_17(1e-3).fit(
            &mut w,
            &dense.view(),
            centred.view(),
            1,
            Some(&mut oracle_rng),
        );
        oracle = w.to_vec();
    }
    let all: Vec<u32> = (0..forest.n_columns() as u32).collect();
    for (a, b) in learner.paper_weights(&all).iter().zip(&oracle) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
}

#[test]
fn incremental_sweep_forest_is_bit_identical_to_the_closed_form_at_every_split() {
    let mut base = ChaCha8Rng::seed_from_u64(24);
    let (n, n_train, m, delta) = (90, 70, 6, 0.2);
    let x = Array2::from_shape_fn((n, 3), |_| base.random::<f64>());
    let centred = ndarray::Array1::from_iter((0..n_train).map(|i| (x[[i, 0]] * 7.0).sin()));
    let forest =
        MondrianForest::sample(x.view(), 8.0, m, &mut ChaCha8Rng::seed_from_u64(6)).unwrap();
    let events = forest.sweep_events();
    assert!(events.len() > 40);
    // One split at a time, and in batches of several splits (the checkpoints of a sweep).
    for batch in [1usize, 7] {
        let mut state = mondrian::SweepState::new(&forest);
        let mut incremental = mondrian::SweepForest::new(&state, n_train, centred.view(), delta);
        loop {
            let first = state.applied();
            for _ in 0..batch {
                state.step(&forest, &events);
            }
            let applied = first..state.applied();
            incremental.update(&forest, &events[applied.clone()], &state, centred.view());
            let closed = mondrian::forest_fit(&state.features(), n_train, centred.view(), delta);
            let bits =
                |v: ndarray::ArrayView1<f64>| v.iter().map(|p| p.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(incremental.centred_predictions()),
                bits(closed.centred_predictions.view()),
                "after {} events",
                state.applied()
            );
            if applied.is_empty() {
                break;
            }
        }
        assert_eq!(state.applied(), events.len());
    }
}
