//! Preprocessing against independent computations: PCA against the eigendecomposition of the
//! covariance, top-variance selection against a brute-force sort, ANOVA F against a hand
//! computation; training-only statistics, degenerate columns, weights and errors.

use kernel_core::CoreError;
use ndarray::{array, s, Array1, Array2, ArrayView2, Axis};
use ndarray_linalg::{Eigh, UPLO};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use random_tessellation::preprocess::{
    anova_f, prepare, top_variance_columns, Prepared, Preprocessing, Scaling, WeightRule,
};
use random_tessellation::RtfError;

mod common;
use common::{assert_non_finite, assert_shape_mismatch};

/// n × p data with decaying column scales and correlations (a random mixing of latent
/// factors), so the principal components are well separated.
fn correlated(seed: u64, n: usize, p: usize) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let latent = Array2::from_shape_fn((n, p), |(_, j)| {
        let z: f64 = rng.sample(StandardNormal);
        z * 3.0 / (1.0 + j as f64)
    });
    let mix = Array2::from_shape_fn((p, p), |_| rng.sample::<f64, _>(StandardNormal));
    latent.dot(&mix) + 5.0
}

fn pca_only(k: usize) -> Preprocessing {
    Preprocessing {
        top_variance: None,
        pca: Some(k),
        scaling: Scaling::None,
    }
}

fn run(
    train: ArrayView2<f64>,
    test: ArrayView2<f64>,
    pre: &Preprocessing,
    w: WeightRule,
) -> Prepared {
    let labels: Vec<u32> = (0..train.nrows()).map(|i| (i % 2) as u32).collect();
    prepare(train, &labels, 2, test, pre, w).unwrap()
}

/// Eigenvalues (descending) and eigenvectors (columns, same order) of the sample covariance,
/// each eigenvector sign-fixed by the module's rule (largest |loading| positive).
fn covariance_eigen(x: &Array2<f64>) -> (Vec<f64>, Array2<f64>) {
    let n = x.nrows() as f64;
    let mean = x.mean_axis(Axis(0)).unwrap();
    let c = x - &mean;
    let cov = c.t().dot(&c) / (n - 1.0);
    let (vals, vecs) = cov.eigh(UPLO::Upper).unwrap();
    let p = vals.len();
    let mut order: Vec<usize> = (0..p).collect();
    order.sort_by(|&a, &b| vals[b].total_cmp(&vals[a]));
    let mut v = Array2::zeros((p, p));
    for (new, &old) in order.iter().enumerate() {
        let mut col = vecs.column(old).to_owned();
        let big = col
            .iter()
            .enumerate()
            .fold(0, |b, (j, x)| if x.abs() > col[b].abs() { j } else { b });
        if col[big] < 0.0 {
            col.mapv_inplace(|x| -x);
        }
        v.column_mut(new).assign(&col);
    }
    (order.iter().map(|&i| vals[i]).collect(), v)
}

fn check_pca_against_eigh(n: usize, p: usize, k: usize, expect_k: usize, seed: u64) {
    let x = correlated(seed, n, p);
    let test = correlated(seed + 1, 7, p);
    let out = run(
        x.view(),
        test.view(),
        &pca_only(k),
        WeightRule::ExplainedVariance,
    );
    assert_eq!(out.train.dim(), (n, expect_k));
    assert_eq!(out.test.dim(), (7, expect_k));
    let (vals, vecs) = covariance_eigen(&x);
    let total: f64 = vals.iter().filter(|v| **v > 0.0).sum();
    let mean = x.mean_axis(Axis(0)).unwrap();
    let expect_train = (&x - &mean).dot(&vecs.slice(s![.., ..expect_k]));
    let expect_test = (&test - &mean).dot(&vecs.slice(s![.., ..expect_k]));
    let scale = expect_train.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for j in 0..expect_k {
        // Explained variance: the variance of the scores is the eigenvalue.
        let var = out.train.column(j).var(1.0);
        assert!(
            (var - vals[j]).abs() < 1e-8 * vals[0],
            "component {j}: score variance {var} vs eigenvalue {}",
            vals[j]
        );
        let ratio = out.explained_variance_ratio[j];
        assert!((ratio - vals[j] / total).abs() < 1e-9, "ratio {j}");
        // Same axis and the same sign: the scores agree.
        for (a, b) in out.train.column(j).iter().zip(expect_train.column(j)) {
            assert!((a - b).abs() < 1e-7 * scale, "train score {a} vs {b}");
        }
        for (a, b) in out.test.column(j).iter().zip(expect_test.column(j)) {
            assert!((a - b).abs() < 1e-7 * scale, "test score {a} vs {b}");
        }
    }
    // Weights ∝ explained variance.
    let sum: f64 = vals[..expect_k].iter().sum();
    for (w, v) in out.weights.iter().zip(&vals) {
        assert!((w - v / sum).abs() < 1e-9);
    }
}

#[test]
fn pca_matches_the_covariance_eigendecomposition() {
    check_pca_against_eigh(40, 6, 3, 3, 1);
    check_pca_against_eigh(40, 6, 6, 6, 2);
}

#[test]
fn pca_with_fewer_rows_than_columns_clamps_to_n_minus_one() {
    // n ≪ p as on the gene sets: rank of the centred data is n − 1.
    check_pca_against_eigh(10, 30, 15, 9, 3);
    check_pca_against_eigh(10, 30, 4, 4, 4);
}

#[test]
fn pca_clamps_to_the_numerical_rank() {
    // Rank-2 data in 5 columns: only two components exist.
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let f = Array2::from_shape_fn((30, 2), |_| rng.sample::<f64, _>(StandardNormal));
    let x = f.dot(&array![
        [1.0, 0.0, 2.0, -1.0, 0.5],
        [0.0, 1.0, 1.0, 3.0, -0.5]
    ]);
    let out = run(
        x.view(),
        x.view(),
        &pca_only(5),
        WeightRule::ExplainedVariance,
    );
    assert_eq!(out.train.ncols(), 2);
    let total: f64 = out.explained_variance_ratio.iter().sum();
    assert!((total - 1.0).abs() < 1e-12, "{total}");
}

#[test]
fn explained_ratios_are_sorted_and_sum_to_at_most_one() {
    for (n, p, k) in [(50, 8, 3), (20, 40, 10), (53, 100, 10)] {
        let x = correlated(n as u64, n, p);
        let out = run(
            x.view(),
            x.view(),
            &pca_only(k),
            WeightRule::ExplainedVariance,
        );
        let r = &out.explained_variance_ratio;
        assert_eq!(r.len(), k.min(n - 1).min(p));
        assert!(r.windows(2).all(|w| w[0] >= w[1]), "{r:?}");
        let sum: f64 = r.iter().sum();
        assert!(sum <= 1.0 + 1e-12 && sum > 0.0);
        assert!(r.iter().all(|v| *v > 0.0));
    }
    // All components: the ratios sum to one.
    let x = correlated(5, 30, 5);
    let out = run(x.view(), x.view(), &pca_only(5), WeightRule::Uniform);
    let sum: f64 = out.explained_variance_ratio.iter().sum();
    assert!((sum - 1.0).abs() < 1e-12);
}

#[test]
fn pca_scores_do_not_depend_on_column_order() {
    // The sign rule follows the loading, not its position.
    let x = correlated(12, 25, 6);
    let perm = [3usize, 0, 5, 1, 4, 2];
    let xp = x.select(Axis(1), &perm);
    let a = run(x.view(), x.view(), &pca_only(4), WeightRule::Uniform);
    let b = run(xp.view(), xp.view(), &pca_only(4), WeightRule::Uniform);
    for (u, v) in a.train.iter().zip(&b.train) {
        assert!((u - v).abs() < 1e-9, "{u} vs {v}");
    }
    // And repeated calls are identical.
    assert_eq!(
        a,
        run(x.view(), x.view(), &pca_only(4), WeightRule::Uniform)
    );
}

#[test]
fn top_variance_matches_a_brute_force_sort() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let (n, p) = (30, 50);
    let scales: Vec<f64> = (0..p).map(|_| rng.random_range(0.1..10.0)).collect();
    let x = Array2::from_shape_fn((n, p), |(_, j)| {
        scales[j] * rng.sample::<f64, _>(StandardNormal)
    });
    // Brute force: variances by the textbook formula, indices sorted by variance.
    let mut var: Vec<(f64, usize)> = (0..p)
        .map(|j| {
            let col: Vec<f64> = x.column(j).to_vec();
            let m = col.iter().sum::<f64>() / n as f64;
            (
                col.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n as f64 - 1.0),
                j,
            )
        })
        .collect();
    var.sort_by(|a, b| b.0.total_cmp(&a.0));
    for k in [1, 10, 49, 50, 80] {
        let mut expect: Vec<usize> = var.iter().take(k).map(|v| v.1).collect();
        expect.sort_unstable();
        assert_eq!(top_variance_columns(x.view(), k), expect);
        let pre = Preprocessing {
            top_variance: Some(k),
            pca: None,
            scaling: Scaling::None,
        };
        let out = run(x.view(), x.view(), &pre, WeightRule::Uniform);
        assert_eq!(out.selected, expect);
        assert_eq!(out.train, x.select(Axis(1), &expect));
        assert_eq!(out.weights.len(), expect.len());
    }
    // Ties go to the lower index.
    let tied = array![[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]];
    assert_eq!(top_variance_columns(tied.view(), 2), vec![0, 1]);
}

#[test]
fn selection_and_pca_use_training_rows_only() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let train = Array2::from_shape_fn((20, 4), |(_, j)| {
        (1.0 + j as f64) * rng.sample::<f64, _>(StandardNormal)
    });
    // Column 0 varies hugely in the test split only.
    let mut test = Array2::from_shape_fn((10, 4), |_| rng.sample::<f64, _>(StandardNormal));
    test.column_mut(0).mapv_inplace(|v| v * 1e3);
    let pre = Preprocessing {
        top_variance: Some(2),
        pca: None,
        scaling: Scaling::None,
    };
    let out = run(train.view(), test.view(), &pre, WeightRule::Uniform);
    assert_eq!(out.selected, vec![2, 3]);
    // PCA of train alone equals PCA fitted with any test split.
    let a = run(train.view(), test.view(), &pca_only(2), WeightRule::Uniform);
    let b = run(
        train.view(),
        train.view(),
        &pca_only(2),
        WeightRule::Uniform,
    );
    assert_eq!(a.train, b.train);
    assert_eq!(a.explained_variance_ratio, b.explained_variance_ratio);
}

#[test]
fn min_max_with_training_or_all_statistics() {
    let train = array![[0.0, 10.0], [2.0, 20.0], [4.0, 30.0]];
    let test = array![[6.0, 15.0], [-2.0, 40.0]];
    let pre = Preprocessing::default();
    assert_eq!(pre.scaling, Scaling::MinMaxTrain);
    let out = run(train.view(), test.view(), &pre, WeightRule::Uniform);
    assert_eq!(out.train, array![[0.0, 0.0], [0.5, 0.5], [1.0, 1.0]]);
    // Test values outside the training range leave [0, 1].
    assert_eq!(out.test, array![[1.5, 0.25], [-0.5, 1.5]]);

    let all = Preprocessing {
        scaling: Scaling::MinMaxAll,
        ..Preprocessing::default()
    };
    let out = run(train.view(), test.view(), &all, WeightRule::Uniform);
    // Column 0 over {−2, …, 6}, column 1 over {10, …, 40}.
    let expect_train = array![[0.25, 0.0], [0.5, 1.0 / 3.0], [0.75, 2.0 / 3.0]];
    let expect_test = array![[1.0, 1.0 / 6.0], [0.0, 1.0]];
    for (a, b) in out
        .train
        .iter()
        .chain(&out.test)
        .zip(expect_train.iter().chain(&expect_test))
    {
        assert!((a - b).abs() < 1e-15, "{a} vs {b}");
    }
    for j in 0..2 {
        let col: Vec<f64> = out
            .train
            .column(j)
            .iter()
            .chain(out.test.column(j))
            .copied()
            .collect();
        let lo = col.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!((lo, hi), (0.0, 1.0));
    }
    // Random data: MinMaxTrain puts train exactly in [0, 1], MinMaxAll everything.
    let x = correlated(3, 40, 5);
    let t = correlated(4, 40, 5) * 2.0;
    let a = run(
        x.view(),
        t.view(),
        &Preprocessing::default(),
        WeightRule::Uniform,
    );
    assert!(a.train.iter().all(|v| (0.0..=1.0).contains(v)));
    assert!(a.test.iter().any(|v| !(0.0..=1.0).contains(v)));
    let b = run(x.view(), t.view(), &all, WeightRule::Uniform);
    assert!(b
        .train
        .iter()
        .chain(&b.test)
        .all(|v| (0.0..=1.0).contains(v)));
}

#[test]
fn constant_columns_map_to_zero_without_nan() {
    let train = array![[1.0, 5.0, 0.0], [2.0, 5.0, 1.0], [3.0, 5.0, 0.0]];
    let test = array![[2.0, 7.0, 0.5]];
    for scaling in [Scaling::MinMaxTrain, Scaling::MinMaxAll] {
        let pre = Preprocessing {
            scaling,
            ..Preprocessing::default()
        };
        for w in [WeightRule::Uniform, WeightRule::AnovaF] {
            let labels = [0, 1, 1];
            let out = prepare(train.view(), &labels, 2, test.view(), &pre, w).unwrap();
            assert!(out.train.iter().chain(&out.test).all(|v| v.is_finite()));
            assert!(out.weights.iter().all(|v| v.is_finite() && *v >= 0.0));
            assert!((out.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(out.train.column(1).iter().all(|v| *v == 0.0));
            if scaling == Scaling::MinMaxTrain {
                // Constant on train: 0 on test as well.
                assert_eq!(out.test[[0, 1]], 0.0);
            }
        }
    }
    // Huge ranges do not overflow.
    let big = array![[-1e308, 0.0], [1e308, 1.0]];
    let out = run(
        big.view(),
        big.view(),
        &Preprocessing::default(),
        WeightRule::Uniform,
    );
    assert_eq!(out.train.column(0).to_vec(), vec![0.0, 1.0]);
}

#[test]
fn anova_f_matches_a_hand_computation() {
    // Column 0: groups {1, 2, 3} and {4, 5, 6}: means 2 and 5, grand mean 3.5;
    // SSB = 3·1.5² + 3·1.5² = 13.5, SSW = 2 + 2 = 4, F = (13.5/1)/(4/4) = 13.5.
    // Column 1: groups {1, 3, 2} and {2, 2, 3}: means 2 and 7/3, grand 13/6;
    // SSB = 3·(1/6)² + 3·(1/6)² = 1/6, SSW = 2 + 2/3 = 8/3, F = (1/6)/((8/3)/4) = 0.25.
    let x = array![
        [1.0, 1.0],
        [2.0, 3.0],
        [3.0, 2.0],
        [4.0, 2.0],
        [5.0, 2.0],
        [6.0, 3.0]
    ];
    let y = [0, 0, 0, 1, 1, 1];
    let f = anova_f(x.view(), &y, 2).unwrap();
    assert!((f[0] - 13.5).abs() < 1e-12, "{}", f[0]);
    assert!((f[1] - 0.25).abs() < 1e-12, "{}", f[1]);

    // Three classes (label 1 unused of 4): groups {0, 2} (mean 1), {4, 6, 8} (mean 6),
    // {1} (mean 1); grand mean 3.5; SSB = 2·6.25 + 3·6.25 + 6.25 = 37.5;
    // SSW = 2 + 8 + 0 = 10; K = 3, N = 6: F = (37.5/2)/(10/3) = 5.625.
    let x3 = array![[0.0], [2.0], [4.0], [6.0], [8.0], [1.0]];
    let y3 = [0, 0, 2, 2, 2, 3];
    let f3 = anova_f(x3.view(), &y3, 4).unwrap();
    assert!((f3[0] - 5.625).abs() < 1e-12, "{}", f3[0]);

    // Weights ∝ F; min-max scaling leaves F unchanged.
    let out = prepare(
        x.view(),
        &y,
        2,
        x.view(),
        &Preprocessing::default(),
        WeightRule::AnovaF,
    )
    .unwrap();
    assert!((out.weights[0] - 13.5 / 13.75).abs() < 1e-12);
    assert!((out.weights[1] - 0.25 / 13.75).abs() < 1e-12);
}

#[test]
fn anova_f_degenerate_cases() {
    // Column 0 separates the classes with no within-class spread: F = ∞, all the weight.
    // Column 1 is constant: F = 0. Column 2 is ordinary.
    let x = array![
        [1.0, 3.0, 0.1],
        [1.0, 3.0, 0.7],
        [2.0, 3.0, 0.4],
        [2.0, 3.0, 0.9]
    ];
    let y = [0, 0, 1, 1];
    let f = anova_f(x.view(), &y, 2).unwrap();
    assert_eq!(f[0], f64::INFINITY);
    assert_eq!(f[1], 0.0);
    assert!(f[2].is_finite() && f[2] > 0.0);
    let pre = Preprocessing {
        scaling: Scaling::None,
        ..Preprocessing::default()
    };
    let out = prepare(x.view(), &y, 2, x.view(), &pre, WeightRule::AnovaF).unwrap();
    assert_eq!(out.weights, vec![1.0, 0.0, 0.0]);
    // Two separating columns share the weight.
    let x2 = array![[1.0, 5.0], [1.0, 5.0], [2.0, 0.0], [2.0, 0.0]];
    let out = prepare(x2.view(), &y, 2, x2.view(), &pre, WeightRule::AnovaF).unwrap();
    assert_eq!(out.weights, vec![0.5, 0.5]);
    // A single class, or one row per class: F undefined → uniform weights.
    for (labels, k) in [(vec![1u32, 1, 1, 1], 2usize), (vec![0, 1, 2, 3], 4)] {
        assert_eq!(anova_f(x.view(), &labels, k).unwrap(), vec![0.0; 3]);
        let out = prepare(x.view(), &labels, k, x.view(), &pre, WeightRule::AnovaF).unwrap();
        assert_eq!(out.weights, vec![1.0 / 3.0; 3]);
    }
}

#[test]
fn weights_sum_to_one_under_every_rule() {
    let x = correlated(21, 30, 12);
    let labels: Vec<u32> = (0..30).map(|i| (i % 3) as u32).collect();
    let pres = [
        Preprocessing::default(),
        Preprocessing {
            top_variance: Some(5),
            pca: None,
            scaling: Scaling::MinMaxAll,
        },
        Preprocessing {
            top_variance: Some(8),
            pca: Some(4),
            scaling: Scaling::MinMaxTrain,
        },
    ];
    for pre in &pres {
        for w in [
            WeightRule::Uniform,
            WeightRule::ExplainedVariance,
            WeightRule::AnovaF,
        ] {
            if w == WeightRule::ExplainedVariance && pre.pca.is_none() {
                continue;
            }
            let out = prepare(x.view(), &labels, 3, x.view(), pre, w).unwrap();
            assert_eq!(out.weights.len(), out.train.ncols());
            assert!((out.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(out.weights.iter().all(|v| *v >= 0.0 && v.is_finite()));
            if pre.pca.is_none() {
                assert!(out.explained_variance_ratio.is_empty());
            }
        }
    }
}

#[test]
fn invalid_inputs_are_errors() {
    let x = array![[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]];
    let y = [0u32, 1, 1];
    let pre = Preprocessing::default();
    let call =
        |train: ArrayView2<f64>, labels: &[u32], test: ArrayView2<f64>, pre: &Preprocessing, w| {
            prepare(train, labels, 2, test, pre, w)
        };
    let mut bad = x.clone();
    bad[[1, 1]] = f64::NAN;
    assert_non_finite(
        call(bad.view(), &y, x.view(), &pre, WeightRule::Uniform),
        "training",
        1,
        1,
    );
    assert_non_finite(
        call(x.view(), &y, bad.view(), &pre, WeightRule::Uniform),
        "test",
        1,
        1,
    );
    for p in [
        Preprocessing {
            pca: Some(0),
            ..Preprocessing::default()
        },
        Preprocessing {
            top_variance: Some(0),
            ..Preprocessing::default()
        },
    ] {
        assert!(matches!(
            call(x.view(), &y, x.view(), &p, WeightRule::Uniform),
            Err(RtfError::Core(CoreError::InvalidParameter { .. }))
        ));
    }
    let wide = Array2::<f64>::zeros((2, 3));
    assert_shape_mismatch(
        call(x.view(), &y, wide.view(), &pre, WeightRule::Uniform),
        2,
        3,
    );
    assert_eq!(
        call(x.view(), &y, x.view(), &pre, WeightRule::ExplainedVariance),
        Err(RtfError::ExplainedVarianceWithoutPca)
    );
    assert_shape_mismatch(
        call(x.view(), &y[..2], x.view(), &pre, WeightRule::Uniform),
        3,
        2,
    );
    assert_eq!(
        call(x.view(), &[0, 5, 1], x.view(), &pre, WeightRule::Uniform),
        Err(RtfError::LabelOutOfRange {
            row: 1,
            label: 5,
            n_classes: 2
        })
    );
    assert!(matches!(
        prepare(x.view(), &y, 0, x.view(), &pre, WeightRule::Uniform),
        Err(RtfError::Core(CoreError::InvalidParameter {
            name: "n_classes",
            ..
        }))
    ));
    let empty = Array2::<f64>::zeros((0, 2));
    assert!(matches!(
        call(empty.view(), &[], x.view(), &pre, WeightRule::Uniform),
        Err(RtfError::Core(CoreError::EmptyInput {
            rows: 0,
            columns: 2,
            ..
        }))
    ));
    let no_cols = Array2::<f64>::zeros((3, 0));
    assert!(matches!(
        call(
            no_cols.view(),
            &y,
            no_cols.view(),
            &pre,
            WeightRule::Uniform
        ),
        Err(RtfError::Core(CoreError::EmptyInput {
            rows: 3,
            columns: 0,
            ..
        }))
    ));
    assert_eq!(
        call(
            x.slice(s![0..1, ..]),
            &[0],
            x.view(),
            &pca_only(1),
            WeightRule::Uniform
        ),
        Err(RtfError::PcaTooFewRows { rows: 1 })
    );
    let constant = Array2::<f64>::from_elem((4, 3), 2.5);
    assert_eq!(
        call(
            constant.view(),
            &[0, 1, 0, 1],
            Array2::<f64>::zeros((1, 3)).view(),
            &pca_only(2),
            WeightRule::Uniform
        ),
        Err(RtfError::PcaNoVariance)
    );
    // Overflow inside PCA is an error, not NaN output.
    let huge = array![[1e308, -1e308], [-1e308, 1e308], [1e308, 1e308]];
    assert_eq!(
        call(
            huge.view(),
            &y,
            huge.view(),
            &pca_only(2),
            WeightRule::Uniform
        ),
        Err(RtfError::NonFiniteOutput)
    );
    let huge_mean = array![[1e308, 0.0], [1e308, 1.0], [1e308, 2.0]];
    assert_eq!(
        call(
            huge_mean.view(),
            &y,
            huge_mean.view(),
            &pca_only(2),
            WeightRule::Uniform
        ),
        Err(RtfError::NonFiniteOutput)
    );
    // A huge n_classes costs nothing.
    let f = anova_f(x.view(), &[0, 9, 9], usize::MAX).unwrap();
    assert_eq!(f.len(), 2);
    // An empty test split is fine.
    let out = call(x.view(), &y, empty.view(), &pre, WeightRule::Uniform).unwrap();
    assert_eq!(out.test.dim(), (0, 2));
}

/// The recommended gene-set pipeline on the size of the ALL data (53 training rows of 12,625
/// probes): top 1,000 by variance, 10 principal components, min-max; with the time it takes.
#[test]
fn gene_set_sized_pipeline() {
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let (n, p) = (53, 12_625);
    let scales: Array1<f64> = (0..p).map(|_| rng.random_range(0.05..3.0)).collect();
    let factors = Array2::from_shape_fn((n + 26, 5), |_| rng.sample::<f64, _>(StandardNormal));
    let loadings = Array2::from_shape_fn((5, p), |_| rng.sample::<f64, _>(StandardNormal));
    let noise = Array2::from_shape_fn((n + 26, p), |_| rng.sample::<f64, _>(StandardNormal));
    let all = (factors.dot(&loadings) + noise) * &scales + 7.0;
    let (train, test) = (all.slice(s![..n, ..]), all.slice(s![n.., ..]));
    let labels: Vec<u32> = (0..n).map(|i| u32::from(i % 3 == 0)).collect();
    let pre = Preprocessing {
        top_variance: Some(1000),
        pca: Some(10),
        scaling: Scaling::MinMaxTrain,
    };
    let start = std::time::Instant::now();
    let out = prepare(train, &labels, 2, test, &pre, WeightRule::ExplainedVariance).unwrap();
    let seconds = start.elapsed().as_secs_f64();
    println!("prepare 53 x 12,625 (top 1,000, PCA 10): {seconds:.4} s");
    assert_eq!(out.train.dim(), (53, 10));
    assert_eq!(out.test.dim(), (26, 10));
    assert_eq!(out.selected.len(), 1000);
    assert!(out.weights.windows(2).all(|w| w[0] >= w[1]));
    assert!(out.train.iter().all(|v| (0.0..=1.0).contains(v)));
    // The five planted factors dominate the selected probes' variance.
    let five: f64 = out.explained_variance_ratio[..5].iter().sum();
    assert!(five > 0.5, "{five}");
}
