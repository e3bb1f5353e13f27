//! The baselines against independent computations: LR against a Newton solution of the same
//! objective and its first-order optimality condition, SVM on separable data and three blobs,
//! RF on XOR, BL's mode rule, determinism, degenerate and invalid inputs.

use kernel_core::{Classifier, CoreError, LabelledRows};
use ndarray::{array, s, Array1, Array2};
use ndarray_linalg::Solve;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use random_tessellation::baselines::{logistic_fit, mode_label, Baseline};
use random_tessellation::RtfError;

mod common;
use common::{assert_non_finite, assert_shape_mismatch};

fn gaussian(rng: &mut ChaCha8Rng, n: usize, d: usize) -> Array2<f64> {
    Array2::from_shape_fn((n, d), |_| rng.sample(StandardNormal))
}

/// Blobs centred at `centres` (one per class), `per` points each, spread `sd`.
fn blobs(seed: u64, centres: &[Vec<f64>], per: usize, sd: f64) -> (Array2<f64>, Vec<u32>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let d = centres[0].len();
    let mut x = Array2::zeros((per * centres.len(), d));
    let mut y = Vec::new();
    for (k, c) in centres.iter().enumerate() {
        for i in 0..per {
            let r = k * per + i;
            for j in 0..d {
                let z: f64 = rng.sample(StandardNormal);
                x[[r, j]] = c[j] + sd * z;
            }
            y.push(k as u32);
        }
    }
    (x, y)
}

fn accuracy(pred: &[u32], truth: &[u32]) -> f64 {
    assert_eq!(pred.len(), truth.len());
    pred.iter().zip(truth).filter(|(a, b)| a == b).count() as f64 / truth.len() as f64
}

/// Overlapping two-class data with a linear log-odds: P(y = 1 | x) = σ(x·β + β₀).
fn logistic_data(seed: u64, n: usize, beta: &[f64], b0: f64) -> (Array2<f64>, Vec<u32>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = gaussian(&mut rng, n, beta.len());
    let y = x
        .rows()
        .into_iter()
        .map(|r| {
            let z: f64 = r.iter().zip(beta).map(|(a, b)| a * b).sum::<f64>() + b0;
            u32::from(rng.random::<f64>() < 1.0 / (1.0 + (-z).exp()))
        })
        .collect();
    (x, y)
}

/// Newton's method on `Σ logloss + ½·λ·‖w‖²` (intercept unpenalised), written independently of
/// smartcore. Returns `(w, b)`.
fn newton_binary(x: &Array2<f64>, y: &[u32], lambda: f64) -> (Array1<f64>, f64) {
    let (n, d) = x.dim();
    let mut z = Array2::ones((n, d + 1));
    z.slice_mut(s![.., ..d]).assign(x);
    let mut theta = Array1::<f64>::zeros(d + 1);
    for _ in 0..100 {
        let eta = z.dot(&theta);
        let p = eta.mapv(|e| 1.0 / (1.0 + (-e).exp()));
        let mut grad = z
            .t()
            .dot(&(&p - &Array1::from_iter(y.iter().map(|&v| v as f64))));
        let mut hess = Array2::<f64>::zeros((d + 1, d + 1));
        for i in 0..n {
            let wgt = p[i] * (1.0 - p[i]);
            let zi = z.row(i);
            for a in 0..=d {
                for b in 0..=d {
                    hess[[a, b]] += wgt * zi[a] * zi[b];
                }
            }
        }
        for j in 0..d {
            grad[j] += lambda * theta[j];
            hess[[j, j]] += lambda;
        }
        let step = hess.solve(&grad).unwrap();
        theta -= &step;
        if step.iter().map(|v| v.abs()).fold(0.0, f64::max) < 1e-13 {
            break;
        }
    }
    (theta.slice(s![..d]).to_owned(), theta[d])
}

#[test]
fn logistic_matches_newton_on_the_same_objective() {
    for (seed, c) in [(1u64, 1.0), (2, 0.1), (3, 10.0)] {
        let (x, y) = logistic_data(seed, 300, &[1.5, -2.0, 0.5], 0.3);
        let fit = logistic_fit(x.view(), &y, 2, c).unwrap();
        assert_eq!(fit.classes, vec![0, 1]);
        assert_eq!(fit.coefficients.dim(), (1, 3));
        let (w, b) = newton_binary(&x, &y, 1.0 / c);
        for j in 0..3 {
            let got = fit.coefficients[[0, j]];
            assert!(
                (got - w[j]).abs() < 1e-5 * (1.0 + w[j].abs()),
                "C = {c}: w[{j}] smartcore {got} vs Newton {}",
                w[j]
            );
        }
        assert!(
            (fit.intercepts[0] - b).abs() < 1e-5 * (1.0 + b.abs()),
            "C = {c}: b smartcore {} vs Newton {b}",
            fit.intercepts[0]
        );

        // fit_predict agrees with the Newton decision rule wherever the margin is not tiny.
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 100);
        let test = gaussian(&mut rng, 500, 3);
        let pred = Baseline::Logistic { c }
            .fit_predict(LabelledRows::new(x.view(), &y, 2), test.view(), 0)
            .unwrap();
        for (i, row) in test.rows().into_iter().enumerate() {
            let score = row.dot(&w) + b;
            if score.abs() > 1e-6 {
                assert_eq!(pred[i], u32::from(score > 0.0), "row {i}, score {score}");
            }
        }
    }
}

#[test]
fn multinomial_logistic_satisfies_first_order_conditions() {
    let centres = vec![vec![0.0, 0.0], vec![1.5, 0.5], vec![0.0, 1.5]];
    let (x, y) = blobs(7, &centres, 60, 1.0);
    let c = 1.0;
    let lambda = 1.0 / c;
    let fit = logistic_fit(x.view(), &y, 3, c).unwrap();
    assert_eq!(fit.coefficients.dim(), (3, 2));
    // Gradient of Σ −log softmax(x·W_k + b_k)[y] + ½λ Σ_k ‖W_k‖², computed here.
    let scores = fit.decision_function(x.view()).unwrap();
    let mut gw = Array2::<f64>::zeros((3, 2));
    let mut gb = [0.0; 3];
    for (i, s) in scores.rows().into_iter().enumerate() {
        let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = s.iter().map(|v| (v - m).exp()).collect();
        let z: f64 = e.iter().sum();
        for k in 0..3 {
            let r = e[k] / z - f64::from(u8::from(y[i] as usize == k));
            for j in 0..2 {
                gw[[k, j]] += r * x[[i, j]];
            }
            gb[k] += r;
        }
    }
    gw.scaled_add(lambda, &fit.coefficients);
    let worst = gw.iter().chain(&gb).map(|v| v.abs()).fold(0.0, f64::max);
    assert!(worst < 1e-4, "largest gradient component {worst}");
    // Penalised softmax: the per-feature weights sum to zero over classes at the optimum.
    for j in 0..2 {
        let sum: f64 = fit.coefficients.column(j).sum();
        assert!(sum.abs() < 1e-4, "column {j} sums to {sum}");
    }
    let acc = accuracy(&fit.predict(x.view()).unwrap(), &y);
    assert!(acc > 0.6, "training accuracy {acc}");
}

#[test]
fn logistic_fails_on_xor_while_random_forest_succeeds() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let make = |rng: &mut ChaCha8Rng, n: usize| {
        let x = Array2::from_shape_fn((n, 2), |_| rng.random_range(-1.0..1.0));
        let y: Vec<u32> = x
            .rows()
            .into_iter()
            .map(|r| u32::from((r[0] > 0.0) != (r[1] > 0.0)))
            .collect();
        (x, y)
    };
    let (x, y) = make(&mut rng, 400);
    let (xt, yt) = make(&mut rng, 400);
    let rf = Baseline::RandomForest {
        trees: 100,
        mtry: None,
    };
    let acc_rf = accuracy(
        &rf.fit_predict(LabelledRows::new(x.view(), &y, 2), xt.view(), 5)
            .unwrap(),
        &yt,
    );
    let acc_lr = accuracy(
        &Baseline::Logistic { c: 1.0 }
            .fit_predict(LabelledRows::new(x.view(), &y, 2), xt.view(), 5)
            .unwrap(),
        &yt,
    );
    assert!(acc_rf > 0.93, "RF accuracy on XOR {acc_rf}");
    assert!(acc_lr < 0.7, "LR accuracy on XOR {acc_lr}");
    // The RBF SVM handles XOR too.
    let svm = Baseline::Svm {
        c: 10.0,
        gamma: Some(2.0),
    };
    let acc_svm = accuracy(
        &svm.fit_predict(LabelledRows::new(x.view(), &y, 2), xt.view(), 5)
            .unwrap(),
        &yt,
    );
    assert!(acc_svm > 0.9, "SVM accuracy on XOR {acc_svm}");
}

/// An exact C-SVM written here: SMO on the dual `min ½αᵀQα − eᵀα, yᵀα = 0, 0 ≤ α ≤ C`
/// (`Q_ij = y_i y_j K_ij`, K the RBF kernel), maximal-violating-pair selection, run to a gap of
/// 1e-10; bias from the free support vectors. Returns the decision function on `test`.
fn exact_svm(x: &Array2<f64>, y: &[u32], test: &Array2<f64>, c: f64, gamma: f64) -> Vec<f64> {
    let n = x.nrows();
    let rbf = |a: ndarray::ArrayView1<f64>, b: ndarray::ArrayView1<f64>| {
        (-gamma * a.iter().zip(b).map(|(u, v)| (u - v).powi(2)).sum::<f64>()).exp()
    };
    let k = Array2::from_shape_fn((n, n), |(i, j)| rbf(x.row(i), x.row(j)));
    let s: Vec<f64> = y.iter().map(|&l| if l == 1 { 1.0 } else { -1.0 }).collect();
    let mut alpha = vec![0.0; n];
    let mut grad = vec![-1.0; n];
    let up = |t: usize, a: &[f64]| (s[t] > 0.0 && a[t] < c) || (s[t] < 0.0 && a[t] > 0.0);
    let low = |t: usize, a: &[f64]| (s[t] > 0.0 && a[t] > 0.0) || (s[t] < 0.0 && a[t] < c);
    for _ in 0..1_000_000 {
        let (mut i, mut big) = (usize::MAX, f64::NEG_INFINITY);
        let (mut j, mut small) = (usize::MAX, f64::INFINITY);
        for t in 0..n {
            let v = -s[t] * grad[t];
            if up(t, &alpha) && v > big {
                (i, big) = (t, v);
            }
            if low(t, &alpha) && v < small {
                (j, small) = (t, v);
            }
        }
        if big - small < 1e-10 {
            break;
        }
        // Move α_i by s_i·t and α_j by −s_j·t (keeps yᵀα = 0).
        let curvature = (k[[i, i]] + k[[j, j]] - 2.0 * k[[i, j]]).max(1e-12);
        let mut t = (big - small) / curvature;
        t = t.min(if s[i] > 0.0 { c - alpha[i] } else { alpha[i] });
        t = t.min(if s[j] > 0.0 { alpha[j] } else { c - alpha[j] });
        alpha[i] += s[i] * t;
        alpha[j] -= s[j] * t;
        for r in 0..n {
            // ΔG = t·(y_i Q[:, i] − y_j Q[:, j]) with Q_ri = s_r s_i K_ri.
            grad[r] += t * s[r] * (k[[r, i]] - k[[r, j]]);
        }
    }
    let free: Vec<usize> = (0..n)
        .filter(|&t| alpha[t] > 1e-12 && alpha[t] < c - 1e-12)
        .collect();
    let rho = if free.is_empty() {
        let ub = (0..n)
            .filter(|&t| up(t, &alpha))
            .map(|t| -s[t] * grad[t])
            .fold(f64::NEG_INFINITY, f64::max);
        let lb = (0..n)
            .filter(|&t| low(t, &alpha))
            .map(|t| -s[t] * grad[t])
            .fold(f64::INFINITY, f64::min);
        -(ub + lb) / 2.0
    } else {
        free.iter().map(|&t| s[t] * grad[t]).sum::<f64>() / free.len() as f64
    };
    test.rows()
        .into_iter()
        .map(|row| {
            (0..n)
                .map(|t| alpha[t] * s[t] * rbf(x.row(t), row))
                .sum::<f64>()
                - rho
        })
        .collect()
}

#[test]
fn svm_matches_an_exact_dual_solution() {
    // Overlapping classes: a genuinely soft margin, many bounded support vectors.
    for (seed, c, gamma, d) in [
        (1u64, 1.0, None, 4usize),
        (2, 10.0, Some(3.0), 2),
        (3, 0.3, Some(0.1), 3),
    ] {
        let beta: Vec<f64> = (0..d).map(|j| 1.0 - 0.4 * j as f64).collect();
        let (x, y) = logistic_data(seed, 150, &beta, 0.2);
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 50);
        let test = gaussian(&mut rng, 400, d);
        let g = gamma.unwrap_or(1.0 / d as f64);
        let decision = exact_svm(&x, &y, &test, c, g);
        let pred = Baseline::Svm { c, gamma }
            .fit_predict(LabelledRows::new(x.view(), &y, 2), test.view(), 0)
            .unwrap();
        let mut agree = 0;
        for (p, f) in pred.iter().zip(&decision) {
            if *p == u32::from(*f > 0.0) {
                agree += 1;
            } else {
                // Disagreement only where the exact decision is near 0 (solver tolerance 1e-3).
                assert!(
                    f.abs() < 0.05,
                    "C = {c}, γ = {g}: decision {f}, predicted {p}"
                );
            }
        }
        assert!(agree >= 396, "C = {c}, γ = {g}: {agree} of 400 agree");
    }
}

#[test]
fn svm_separates_separable_data() {
    let centres = vec![vec![0.0; 5], vec![3.0; 5]];
    let (x, y) = blobs(3, &centres, 80, 0.5);
    let (xt, yt) = blobs(4, &centres, 80, 0.5);
    let svm = Baseline::Svm {
        c: 1.0,
        gamma: None,
    };
    for seed in [0, 1, 2] {
        let train_pred = svm
            .fit_predict(LabelledRows::new(x.view(), &y, 2), x.view(), seed)
            .unwrap();
        assert_eq!(train_pred, y, "training accuracy below 1 with seed {seed}");
        let pred = svm
            .fit_predict(LabelledRows::new(x.view(), &y, 2), xt.view(), seed)
            .unwrap();
        assert_eq!(accuracy(&pred, &yt), 1.0);
    }
}

#[test]
fn one_vs_one_svm_on_three_blobs() {
    let centres = vec![vec![0.0, 0.0], vec![4.0, 0.0], vec![2.0, 3.5]];
    let (x, y) = blobs(5, &centres, 50, 0.6);
    let (xt, yt) = blobs(6, &centres, 50, 0.6);
    let svm = Baseline::Svm {
        c: 1.0,
        gamma: None,
    };
    let pred = svm
        .fit_predict(LabelledRows::new(x.view(), &y, 3), xt.view(), 9)
        .unwrap();
    assert!(accuracy(&pred, &yt) >= 0.99, "{}", accuracy(&pred, &yt));
    for k in 0..3 {
        assert!(pred.contains(&k));
    }
    // Labels with a gap (classes 1, 3, 4 of 5) come back as the original labels.
    let relabel = [1u32, 3, 4];
    let y2: Vec<u32> = y.iter().map(|&l| relabel[l as usize]).collect();
    let yt2: Vec<u32> = yt.iter().map(|&l| relabel[l as usize]).collect();
    for b in Baseline::paper().iter().skip(1) {
        let pred = b
            .fit_predict(LabelledRows::new(x.view(), &y2, 5), xt.view(), 9)
            .unwrap();
        assert!(
            accuracy(&pred, &yt2) >= 0.97,
            "{} accuracy {}",
            b.name(),
            accuracy(&pred, &yt2)
        );
    }
}

#[test]
fn mode_label_baseline() {
    let x = Array2::<f64>::zeros((5, 2));
    let t = Array2::<f64>::ones((3, 2));
    let bl = Baseline::ModeLabel;
    // Counts 0:1, 1:2, 2:2 → the lowest of the tied labels.
    let pred = bl
        .fit_predict(
            LabelledRows::new(x.view(), &[2, 2, 1, 1, 0], 3),
            t.view(),
            0,
        )
        .unwrap();
    assert_eq!(pred, vec![1, 1, 1]);
    let pred = bl
        .fit_predict(
            LabelledRows::new(x.view(), &[3, 3, 3, 1, 0], 4),
            t.view(),
            0,
        )
        .unwrap();
    assert_eq!(pred, vec![3, 3, 3]);
    assert_eq!(mode_label(&[2, 2, 1, 1, 0], 3), Some(1));
    // Independent of the features.
    let xr = Array2::from_shape_fn((5, 2), |(i, j)| (i * 3 + j) as f64);
    let pred = bl
        .fit_predict(
            LabelledRows::new(xr.view(), &[0, 4, 4, 2, 2], 5),
            t.view(),
            0,
        )
        .unwrap();
    assert_eq!(pred, vec![2, 2, 2]);
}

#[test]
fn every_baseline_answers_with_a_single_class_or_no_columns() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let x = gaussian(&mut rng, 20, 3);
    let t = gaussian(&mut rng, 7, 3);
    let y = vec![2u32; 20];
    for b in Baseline::paper() {
        let pred = b
            .fit_predict(LabelledRows::new(x.view(), &y, 4), t.view(), 0)
            .unwrap();
        assert_eq!(pred, vec![2; 7], "{}", b.name());
    }
    // No feature columns: every model reduces to the mode.
    let x0 = Array2::<f64>::zeros((6, 0));
    let t0 = Array2::<f64>::zeros((2, 0));
    for b in Baseline::paper() {
        let pred = b
            .fit_predict(
                LabelledRows::new(x0.view(), &[0, 1, 1, 0, 1, 2], 3),
                t0.view(),
                0,
            )
            .unwrap();
        assert_eq!(pred, vec![1, 1], "{}", b.name());
    }
    // An empty test split gets an empty answer.
    let empty = Array2::<f64>::zeros((0, 3));
    for b in Baseline::paper() {
        let labels: Vec<u32> = (0..20).map(|i| i % 2).collect();
        assert!(b
            .fit_predict(LabelledRows::new(x.view(), &labels, 2), empty.view(), 0)
            .unwrap()
            .is_empty());
    }
    // A huge n_classes costs nothing: only the labels present matter.
    let labels: Vec<u32> = (0..20).map(|i| 7 * (i % 2)).collect();
    for b in Baseline::paper() {
        let pred = b
            .fit_predict(
                LabelledRows::new(x.view(), &labels, usize::MAX),
                t.view(),
                0,
            )
            .unwrap();
        assert!(pred.iter().all(|&l| l == 0 || l == 7), "{}", b.name());
    }
    assert_eq!(mode_label(&[4, 9, 9], usize::MAX), Some(9));
    // A single row.
    for b in Baseline::paper() {
        let pred = b
            .fit_predict(
                LabelledRows::new(x.slice(s![0..1, ..]), &[1], 2),
                t.view(),
                0,
            )
            .unwrap();
        assert_eq!(pred, vec![1; 7]);
    }
}

#[test]
fn predictions_are_deterministic_per_seed_and_thread_count() {
    // Noisy, overlapping classes so that randomness shows.
    let (x, y) = logistic_data(21, 200, &[0.7, -0.4, 0.2, 0.0], 0.0);
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let t = gaussian(&mut rng, 300, 4);
    let rf = Baseline::RandomForest {
        trees: 7,
        mtry: Some(2),
    };
    let svm = Baseline::Svm {
        c: 1.0,
        gamma: None,
    };
    for b in [&rf, &svm, &Baseline::Logistic { c: 1.0 }] {
        let a = b
            .fit_predict(LabelledRows::new(x.view(), &y, 2), t.view(), 42)
            .unwrap();
        let again = b
            .fit_predict(LabelledRows::new(x.view(), &y, 2), t.view(), 42)
            .unwrap();
        assert_eq!(a, again, "{}", b.name());
        let single = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| {
                b.fit_predict(LabelledRows::new(x.view(), &y, 2), t.view(), 42)
                    .unwrap()
            });
        assert_eq!(a, single, "{} with one thread", b.name());
    }
    let differ = (0..5u64).any(|s| {
        rf.fit_predict(LabelledRows::new(x.view(), &y, 2), t.view(), s)
            .unwrap()
            != rf
                .fit_predict(LabelledRows::new(x.view(), &y, 2), t.view(), s + 100)
                .unwrap()
    });
    assert!(differ, "RF predictions ignore the seed");
}

#[test]
fn random_forest_uses_mtry_and_grows_full_trees() {
    // Fully grown trees with bootstrap fit the training set almost perfectly (duplicates aside).
    let (x, y) = logistic_data(31, 200, &[1.0, -1.0, 0.5], 0.0);
    let rf = Baseline::RandomForest {
        trees: 50,
        mtry: Some(3),
    };
    let pred = rf
        .fit_predict(LabelledRows::new(x.view(), &y, 2), x.view(), 1)
        .unwrap();
    assert!(accuracy(&pred, &y) > 0.97, "{}", accuracy(&pred, &y));
    // mtry = d with one tree is a bootstrap CART; any 1..=d is accepted.
    for m in 1..=3 {
        let b = Baseline::RandomForest {
            trees: 3,
            mtry: Some(m),
        };
        assert!(b
            .fit_predict(LabelledRows::new(x.view(), &y, 2), x.view(), 1)
            .is_ok());
    }
}

#[test]
fn invalid_inputs_are_errors() {
    let x = array![[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]];
    let t = array![[0.5, 0.5]];
    let y = [0u32, 1, 1];
    for b in Baseline::paper() {
        let call =
            |x: ndarray::ArrayView2<f64>, y: &[u32], k: usize, t: ndarray::ArrayView2<f64>| {
                b.fit_predict(LabelledRows::new(x, y, k), t, 0)
            };
        assert_shape_mismatch(call(x.view(), &y[..2], 2, t.view()), 3, 2);
        assert_eq!(
            call(x.view(), &[0, 2, 1], 2, t.view()),
            Err(RtfError::LabelOutOfRange {
                row: 1,
                label: 2,
                n_classes: 2
            })
        );
        assert!(matches!(
            call(x.view(), &y, 0, t.view()),
            Err(RtfError::Core(CoreError::InvalidParameter {
                name: "n_classes",
                ..
            }))
        ));
        let empty = Array2::<f64>::zeros((0, 2));
        assert!(matches!(
            call(empty.view(), &[], 2, t.view()),
            Err(RtfError::Core(CoreError::EmptyInput {
                rows: 0,
                columns: 2,
                ..
            }))
        ));
        let wide = Array2::<f64>::zeros((1, 3));
        assert_shape_mismatch(call(x.view(), &y, 2, wide.view()), 2, 3);
        let mut bad = x.clone();
        bad[[2, 1]] = f64::NAN;
        assert_non_finite(call(bad.view(), &y, 2, t.view()), "training", 2, 1);
        let mut bad_t = t.clone();
        bad_t[[0, 0]] = f64::INFINITY;
        assert_non_finite(call(x.view(), &y, 2, bad_t.view()), "test", 0, 0);
    }
    let settings = [
        Baseline::Logistic { c: 0.0 },
        Baseline::Logistic { c: f64::NAN },
        Baseline::Svm {
            c: -1.0,
            gamma: None,
        },
        Baseline::Svm {
            c: 1.0,
            gamma: Some(0.0),
        },
        Baseline::Svm {
            c: 1.0,
            gamma: Some(f64::INFINITY),
        },
        Baseline::RandomForest {
            trees: 0,
            mtry: None,
        },
        Baseline::RandomForest {
            trees: 10,
            mtry: Some(0),
        },
        Baseline::RandomForest {
            trees: 10,
            mtry: Some(3),
        },
    ];
    for b in settings {
        assert!(
            matches!(
                b.fit_predict(LabelledRows::new(x.view(), &y, 2), t.view(), 0),
                Err(RtfError::Core(CoreError::InvalidParameter { .. }))
            ),
            "{b:?}"
        );
    }
    assert_eq!(
        logistic_fit(x.view(), &[1, 1, 1], 2, 1.0),
        Err(RtfError::TooFewClasses { present: 1 })
    );
    assert!(matches!(
        logistic_fit(Array2::<f64>::zeros((3, 0)).view(), &y, 2, 1.0),
        Err(RtfError::Core(CoreError::EmptyInput {
            rows: 3,
            columns: 0,
            ..
        }))
    ));
    let fit = logistic_fit(x.view(), &y, 2, 1.0).unwrap();
    assert_shape_mismatch(fit.predict(Array2::<f64>::zeros((1, 5)).view()), 2, 5);
}

#[test]
fn paper_settings() {
    let p = Baseline::paper();
    assert_eq!(
        p.iter().map(|b| b.name()).collect::<Vec<_>>(),
        ["BL", "LR", "SVM", "RF"]
    );
    assert_eq!(p[1], Baseline::Logistic { c: 1.0 });
    assert_eq!(
        p[3],
        Baseline::RandomForest {
            trees: 500,
            mtry: None
        }
    );
    assert_eq!(random_tessellation::baselines::default_mtry(57), 7);
    assert_eq!(random_tessellation::baselines::default_mtry(10), 3);
}

/// Timings on problems of the paper's and of spam's size (`cargo test --release --test
/// baselines -- --ignored --nocapture`).
#[test]
#[ignore]
fn timings() {
    for (n, d, n_test) in [(3067usize, 57usize, 1534usize), (53, 10, 26)] {
        let beta: Vec<f64> = (0..d)
            .map(|j| if j % 3 == 0 { 0.5 } else { -0.2 })
            .collect();
        let (x, y) = logistic_data(8, n + n_test, &beta, 0.0);
        // Min-max-like scale, as the baselines see after preprocessing.
        let x = x.mapv(|v| (v + 3.0) / 6.0);
        let (xt, yt) = (x.slice(s![n.., ..]), &y[n..]);
        let (x, y) = (x.slice(s![..n, ..]), &y[..n]);
        for b in Baseline::paper() {
            let start = std::time::Instant::now();
            let pred = b.fit_predict(LabelledRows::new(x, y, 2), xt, 1).unwrap();
            println!(
                "{n} x {d}: {:>3} {:>8.3} s  accuracy {:.3}",
                b.name(),
                start.elapsed().as_secs_f64(),
                accuracy(&pred, yt)
            );
        }
    }
}
