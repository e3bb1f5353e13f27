//! SMC trees and forests (spec §3, §5, §11 item 5): the pausing rule, the clocks against their
//! exponential laws, routing, seeding, the four priors on an easy problem, and input errors.

mod common;

use std::ops::ControlFlow;

use kernel_core::{Classifier, CoreError, LabelledRows};

use common::{
    assert_non_finite, assert_shape_mismatch, blobs, chi_square, chi_square_critical, ks_critical,
    ks_statistic, rng, uniform,
};
use ndarray::{s, Array2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use random_tessellation::{
    subset_diameter, AlphaForm, CutRate, Forest, ForestConfig, Prior, PriorKind, Routing, RtfError,
    Tree, TreePrediction,
};

fn no_test(d: usize) -> Array2<f64> {
    Array2::zeros((0, d))
}

fn distinct_labels(counts: &[u32]) -> usize {
    counts.iter().filter(|&&c| c > 0).count()
}

fn priors(d: usize) -> Vec<(&'static str, Prior)> {
    let w: Vec<f64> = (0..d).map(|j| 1.0 + j as f64).collect();
    vec![
        ("uRTP", Prior::new(PriorKind::Uniform, d, None).unwrap()),
        (
            "wuRTP",
            Prior::new(PriorKind::Uniform, d, Some(&w)).unwrap(),
        ),
        ("MRTP", Prior::new(PriorKind::Mondrian, d, None).unwrap()),
        (
            "wMRTP",
            Prior::new(PriorKind::Mondrian, d, Some(&w)).unwrap(),
        ),
    ]
}

/// Every leaf is pure or holds only copies of one point; no cut was made in a pure cell; the
/// leaves partition the training rows; every training row routes to its own leaf.
fn check_paused(tree: &Tree, x: &Array2<f64>, what: &str) {
    let mut seen = vec![false; x.nrows()];
    for (l, leaf) in tree.leaves().iter().enumerate() {
        let items: Vec<usize> = leaf.train.iter().map(|&i| i as usize).collect();
        let pure = distinct_labels(&leaf.counts) <= 1;
        let single_point = subset_diameter(x.view(), &items).unwrap().value == 0.0;
        assert!(
            pure || single_point,
            "{what}: leaf {l} is mixed and cuttable: {:?}",
            leaf.counts
        );
        for &i in &items {
            assert!(!seen[i], "{what}: row {i} in two leaves");
            seen[i] = true;
            assert_eq!(
                tree.leaf_of(x.row(i).as_slice().unwrap()),
                l,
                "{what}: routing of {i}"
            );
        }
    }
    assert!(
        seen.iter().all(|&s| s),
        "{what}: a training row is in no leaf"
    );
    for counts in tree.split_counts() {
        assert!(
            distinct_labels(&counts) >= 2,
            "{what}: a pure cell was cut: {counts:?}"
        );
    }
}

#[test]
fn pure_cells_are_never_cut_and_unlimited_cuts_end_pure() {
    let mut rng = rng(21);
    let mut x = uniform(80, 2, &mut rng);
    let mut labels: Vec<u32> = (0..80).map(|_| rng.random_range(0..3)).collect();
    // Duplicated points with different labels cannot be separated: their leaf stays mixed but
    // has diameter 0, hence rate 0 (paused).
    for k in 0..4 {
        let row = x.row(2 * k).to_owned();
        x.row_mut(2 * k + 1).assign(&row);
        labels[2 * k + 1] = (labels[2 * k] + 1) % 3;
    }
    for (name, prior) in priors(2) {
        for (likelihood, particles) in [(false, 1), (true, 5)] {
            for cut_rate in [CutRate::HalfDiameter, CutRate::ExactThinning] {
                let config = ForestConfig {
                    particles,
                    likelihood,
                    cut_rate,
                    max_cuts: usize::MAX,
                    ..ForestConfig::default()
                };
                let fit = Forest::new(prior.clone(), config.clone())
                    .and_then(|f| {
                        f.fit_tree(
                            LabelledRows::new(x.view(), &labels, 3),
                            no_test(2).view(),
                            &mut rng,
                        )
                    })
                    .unwrap();
                for (m, tree) in fit.particles.iter().enumerate() {
                    check_paused(
                        tree,
                        &x,
                        &format!("{name} {cut_rate:?} L={likelihood} #{m}"),
                    );
                }
                assert_eq!(fit.stats.cuts + 1, fit.map_tree().leaves().len());
            }
        }
    }
}

/// P(at least one cut before the budget) over `runs` single-particle trees.
fn fraction_cut(
    x: &Array2<f64>,
    labels: &[u32],
    prior: &Prior,
    config: &ForestConfig,
    runs: usize,
    seed: u64,
) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cut = (0..runs)
        .filter(|_| {
            let fit = Forest::new(prior.clone(), config.clone())
                .and_then(|f| {
                    f.fit_tree(
                        LabelledRows::new(x.view(), labels, 2),
                        no_test(2).view(),
                        &mut rng,
                    )
                })
                .unwrap();
            fit.stats.cuts > 0
        })
        .count();
    cut as f64 / runs as f64
}

#[test]
fn first_cut_times_follow_their_exponential_laws() {
    // Rectangle [0, a] × [0, b] with its corners, mixed labels: the root is cuttable.
    let (a, b) = (1.0, 0.4);
    let mut rng = rng(22);
    let mut x = uniform(30, 2, &mut rng);
    for (i, corner) in [[0.0, 0.0], [a, 0.0], [a, b], [0.0, b]].iter().enumerate() {
        x.row_mut(i).assign(&ndarray::arr1(corner));
    }
    for i in 4..30 {
        x[[i, 0]] *= a;
        x[[i, 1]] *= b;
    }
    let labels: Vec<u32> = (0..30).map(|i| (i % 2) as u32).collect();
    let runs = 3000;
    let check = |p_expect: f64, got: f64, what: &str| {
        let se = (p_expect * (1.0 - p_expect) / runs as f64).sqrt();
        assert!(
            (got - p_expect).abs() < 4.5 * se,
            "{what}: {got} vs {p_expect}"
        );
    };
    let base = ForestConfig {
        likelihood: false,
        ..ForestConfig::default()
    };
    let uniform_prior = Prior::new(PriorKind::Uniform, 2, None).unwrap();
    let weights = [0.7, 0.3];
    let mondrian = Prior::new(PriorKind::Mondrian, 2, Some(&weights)).unwrap();
    // tess19: τ₁ ~ Exp(dist.max / 2).
    let diameter = (a * a + b * b).sqrt();
    let budget = 0.8;
    let config = ForestConfig {
        budget,
        ..base.clone()
    };
    let got = fraction_cut(&x, &labels, &uniform_prior, &config, runs, 1);
    check(1.0 - (-budget * diameter / 2.0).exp(), got, "tess19 clock");
    // Exact thinning: the first cut comes at rate Λ([hull]); uRTP in the plane:
    // Λ([K]) = perimeter / (2π) (Cauchy), here (a + b) / π.
    let config = ForestConfig {
        budget: 1.5,
        cut_rate: CutRate::ExactThinning,
        ..base.clone()
    };
    let got = fraction_cut(&x, &labels, &uniform_prior, &config, runs, 2);
    check(
        1.0 - (-1.5 * (a + b) / std::f64::consts::PI).exp(),
        got,
        "thinning uRTP",
    );
    // MRTP: lines x_j = s have intensity ω_j / 2, so Λ([box]) = (ω_1 a + ω_2 b) / 2.
    let config = ForestConfig {
        budget: 2.0,
        cut_rate: CutRate::ExactThinning,
        ..base
    };
    let got = fraction_cut(&x, &labels, &mondrian, &config, runs, 3);
    check(
        1.0 - (-2.0 * (weights[0] * a + weights[1] * b) / 2.0).exp(),
        got,
        "thinning MRTP",
    );
    // Enclosing ball (Algorithm 2): MRTP's clock runs at the exact Λ([box]); uRTP's at the
    // Ritter radius, here half the diagonal (the corners are the farthest pair).
    let config = ForestConfig {
        budget: 2.0,
        cut_rate: CutRate::EnclosingBall,
        ..base.clone()
    };
    let got = fraction_cut(&x, &labels, &mondrian, &config, runs, 4);
    check(
        1.0 - (-2.0 * (weights[0] * a + weights[1] * b) / 2.0).exp(),
        got,
        "enclosing ball MRTP",
    );
    let config = ForestConfig {
        budget,
        cut_rate: CutRate::EnclosingBall,
        ..base
    };
    let got = fraction_cut(&x, &labels, &uniform_prior, &config, runs, 5);
    check(
        1.0 - (-budget * diameter / 2.0).exp(),
        got,
        "enclosing ball uRTP",
    );
}

/// The first cut of one prior tree (one particle, no likelihood) under `config`.
fn first_cut(
    x: &Array2<f64>,
    labels: &[u32],
    test: &Array2<f64>,
    prior: &Prior,
    config: &ForestConfig,
    rng: &mut ChaCha8Rng,
) -> random_tessellation::Hyperplane {
    let config = ForestConfig {
        likelihood: false,
        max_cuts: 1,
        ..config.clone()
    };
    let fit = Forest::new(prior.clone(), config)
        .and_then(|f| f.fit_tree(LabelledRows::new(x.view(), labels, 2), test.view(), rng))
        .unwrap();
    fit.map_tree().splits()[0].hyperplane.clone()
}

#[test]
fn enclosing_ball_cuts_follow_lambda_restricted_to_the_training_items() {
    // A box [0, 1] x [0, 0.25] x [0, 0.5] of training items with its corners; MRTP with weights
    // (0.5, 0.3, 0.2): the cut axis has probability ∝ ω_j extent_j, its offset is uniform on the
    // training range (chi-square and KS at 0.1 %).
    let mut rng = rng(31);
    let ext = [1.0, 0.25, 0.5];
    let mut x = uniform(40, 3, &mut rng);
    for i in 0..40 {
        for j in 0..3 {
            x[[i, j]] = if i < 2 {
                i as f64 * ext[j]
            } else {
                x[[i, j]] * ext[j]
            };
        }
    }
    let labels: Vec<u32> = (0..40).map(|i| (i % 2) as u32).collect();
    let weights = [0.5, 0.3, 0.2];
    let prior = Prior::new(PriorKind::Mondrian, 3, Some(&weights)).unwrap();
    let config = ForestConfig {
        cut_rate: CutRate::EnclosingBall,
        ..ForestConfig::default()
    };
    let runs = 2000;
    let mut observed = [0u64; 3];
    let mut offsets = Vec::new();
    for _ in 0..runs {
        let h = first_cut(&x, &labels, &no_test(3), &prior, &config, &mut rng);
        let random_tessellation::Direction::Axis(j) = h.direction else {
            panic!("MRTP cuts along an axis");
        };
        observed[j] += 1;
        if j == 0 {
            offsets.push(h.offset);
        }
    }
    let mass: Vec<f64> = weights.iter().zip(ext).map(|(w, e)| w * e).collect();
    let total: f64 = mass.iter().sum();
    let expected: Vec<f64> = mass.iter().map(|m| m / total).collect();
    let chi2 = chi_square(&observed, &expected);
    assert!(chi2 < chi_square_critical(2), "{chi2}: {observed:?}");
    let n = offsets.len();
    let ks = ks_statistic(offsets, |t| t.clamp(0.0, 1.0));
    assert!(ks < ks_critical(n), "offsets on axis 0: KS {ks}");

    // Transductive: the box encloses the test items too, so an axis along which only the test
    // rows spread is proposed, yet every kept cut falls within the training items' range.
    let narrow =
        Array2::from_shape_fn((40, 3), |(i, j)| x[[i, j]] * if j == 1 { 0.1 } else { 1.0 });
    let test = Array2::from_shape_fn((10, 3), |(i, j)| if j == 1 { 2.0 + i as f64 } else { 0.5 });
    let config = ForestConfig {
        routing: Routing::Transductive,
        ..config
    };
    let mut rng = common::rng(32);
    let mut along_1 = 0;
    for _ in 0..300 {
        let h = first_cut(&narrow, &labels, &test, &prior, &config, &mut rng);
        if h.direction == random_tessellation::Direction::Axis(1) {
            along_1 += 1;
            assert!((0.0..0.025).contains(&h.offset), "{}", h.offset);
        }
    }
    // Axis 1's box side is 11.0 (test rows) against 0.025 of training range: proposals along it
    // nearly all miss, so kept cuts along it are rare but possible.
    assert!(along_1 < 30, "{along_1}");
}

fn accuracy(predictions: &[u32], truth: &[u32]) -> f64 {
    predictions
        .iter()
        .zip(truth)
        .filter(|(a, b)| a == b)
        .count() as f64
        / truth.len() as f64
}

#[test]
fn every_variant_separates_two_blobs() {
    let mut rng = rng(23);
    let (x, labels) = blobs(100, &mut rng);
    let (train, test) = (x.slice(s![..60, ..]), x.slice(s![60.., ..]));
    let base = ForestConfig {
        trees: 10,
        particles: 20,
        ..ForestConfig::default()
    };
    let mut variants = Vec::new();
    for likelihood in [true, false] {
        for routing in [Routing::Inductive, Routing::Transductive] {
            for cut_rate in [CutRate::HalfDiameter, CutRate::ExactThinning] {
                variants.push(ForestConfig {
                    likelihood,
                    routing,
                    cut_rate,
                    ..base.clone()
                });
            }
        }
    }
    variants.push(ForestConfig {
        prediction: TreePrediction::WeightedVote,
        ..base.clone()
    });
    variants.push(ForestConfig {
        alpha_form: AlphaForm::Code,
        ..base.clone()
    });
    variants.push(ForestConfig {
        budget: 50.0,
        ..base.clone()
    });
    for (name, prior) in priors(2) {
        for config in &variants {
            let out = Forest::new(prior.clone(), config.clone())
                .and_then(|f| f.fit_predict(LabelledRows::new(train, &labels[..60], 2), test, 7))
                .unwrap();
            let acc = accuracy(&out.predictions, &labels[60..]);
            assert!(acc >= 0.95, "{name} {config:?}: accuracy {acc}");
            let s = &out.stats;
            assert_eq!(s.trees, 10);
            assert_eq!(
                s.proposals,
                s.rejections + s.cuts,
                "{name}: every accepted proposal cuts"
            );
            assert!((s.mean_leaves - s.mean_cuts - 1.0).abs() < 1e-12);
            assert!(s.mean_cuts >= 1.0 && s.mean_cuts <= 100.0);
            assert!(s.mean_log_likelihood <= 0.0 && s.smc_iterations >= 1.0);
        }
    }
}

#[test]
fn classify_is_deterministic_and_tree_t_uses_stream_t_of_the_seed() {
    let mut rng = rng(24);
    let x = uniform(70, 3, &mut rng);
    let labels: Vec<u32> = (0..70)
        .map(|i| u32::from(x[[i, 0]] + x[[i, 1]] > 1.0))
        .collect();
    let (train, test) = (x.slice(s![..50, ..]), x.slice(s![50.., ..]));
    let prior = Prior::new(PriorKind::Uniform, 3, None).unwrap();
    let config = ForestConfig {
        trees: 5,
        particles: 10,
        ..ForestConfig::default()
    };
    let a = Forest::new(prior.clone(), config.clone())
        .and_then(|f| f.fit_predict(LabelledRows::new(train, &labels[..50], 2), test, 99))
        .unwrap();
    let b = Forest::new(prior.clone(), config.clone())
        .and_then(|f| f.fit_predict(LabelledRows::new(train, &labels[..50], 2), test, 99))
        .unwrap();
    assert_eq!(a, b);
    // One tree: the forest is the MAP tree of fit_tree on stream 0 of the seed.
    let one = ForestConfig { trees: 1, ..config };
    let forest = Forest::new(prior.clone(), one.clone())
        .and_then(|f| f.fit_predict(LabelledRows::new(train, &labels[..50], 2), test, 5))
        .unwrap();
    let mut stream = ChaCha8Rng::seed_from_u64(5);
    stream.set_stream(0);
    let fit = Forest::new(prior.clone(), one.clone())
        .and_then(|f| {
            f.fit_tree(
                LabelledRows::new(train, &labels[..50], 2),
                no_test(3).view(),
                &mut stream,
            )
        })
        .unwrap();
    let direct: Vec<u32> = test
        .rows()
        .into_iter()
        .map(|r| fit.map_tree().predict(r.as_slice().unwrap()))
        .collect();
    assert_eq!(forest.predictions, direct);
    assert_eq!(forest.stats.cuts, fit.stats.total_cuts);
}

#[test]
fn transductive_test_items_sit_in_the_leaves_they_route_to() {
    let mut rng = rng(25);
    let x = uniform(90, 4, &mut rng);
    let labels: Vec<u32> = (0..60).map(|i| u32::from(x[[i, 2]] > 0.5)).collect();
    let (train, test) = (x.slice(s![..60, ..]), x.slice(s![60.., ..]));
    for (name, prior) in priors(4) {
        let config = ForestConfig {
            particles: 8,
            routing: Routing::Transductive,
            ..ForestConfig::default()
        };
        let fit = Forest::new(prior.clone(), config.clone())
            .and_then(|f| f.fit_tree(LabelledRows::new(train, &labels, 2), test, &mut rng))
            .unwrap();
        for tree in &fit.particles {
            let mut held = 0;
            for (l, leaf) in tree.leaves().iter().enumerate() {
                for &t in &leaf.test {
                    assert_eq!(
                        tree.leaf_of(test.row(t as usize).as_slice().unwrap()),
                        l,
                        "{name}"
                    );
                    held += 1;
                }
            }
            assert_eq!(held, 30, "{name}: every test row is in one leaf");
        }
    }
}

#[test]
fn max_cuts_zero_predicts_the_training_mode_and_observers_can_stop() {
    let mut rng = rng(26);
    let x = uniform(40, 2, &mut rng);
    let labels: Vec<u32> = (0..30).map(|i| u32::from(i % 3 == 0) + 1).collect(); // mode 1
    let (train, test) = (x.slice(s![..30, ..]), x.slice(s![30.., ..]));
    let prior = Prior::new(PriorKind::Mondrian, 2, None).unwrap();
    let config = ForestConfig {
        trees: 4,
        particles: 5,
        max_cuts: 0,
        ..ForestConfig::default()
    };
    let out = Forest::new(prior.clone(), config.clone())
        .and_then(|f| f.fit_predict(LabelledRows::new(train, &labels, 3), test, 1))
        .unwrap();
    assert!(out.predictions.iter().all(|&p| p == 1));
    assert_eq!(out.stats.cuts, 0);
    let mut reports = Vec::new();
    let config = ForestConfig {
        trees: 10,
        particles: 5,
        ..ForestConfig::default()
    };
    let out = Forest::new(prior.clone(), config.clone())
        .and_then(|f| {
            f.fit_predict_observed(LabelledRows::new(train, &labels, 3), test, 1, |r| {
                reports.push(r.tree);
                if r.tree == 2 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
        })
        .unwrap();
    assert_eq!(reports, vec![0, 1, 2]);
    assert_eq!(out.stats.trees, 3);
    assert_eq!(out.predictions.len(), 10);
}

#[test]
fn defaults_are_tess19s() {
    let c = ForestConfig::default();
    assert_eq!((c.trees, c.particles, c.max_cuts), (100, 100, 100));
    assert_eq!(c.budget, f64::INFINITY);
    assert_eq!(c.alpha, 1e-3);
    assert_eq!((c.max_rejections, c.retries), (20, 10));
    assert!(c.likelihood);
    assert_eq!(c.alpha_form, AlphaForm::Manual);
    assert_eq!(c.cut_rate, CutRate::HalfDiameter);
    assert_eq!(c.prediction, TreePrediction::Map);
    assert_eq!(c.routing, Routing::Inductive);
    assert!(c.check().is_ok());
}

#[test]
fn bad_configs_and_inputs_are_errors() {
    let good = ForestConfig::default();
    for bad in [
        ForestConfig {
            trees: 0,
            ..good.clone()
        },
        ForestConfig {
            particles: 0,
            ..good.clone()
        },
        ForestConfig {
            budget: 0.0,
            ..good.clone()
        },
        ForestConfig {
            budget: -1.0,
            ..good.clone()
        },
        ForestConfig {
            budget: f64::NAN,
            ..good.clone()
        },
        ForestConfig {
            alpha: 0.0,
            ..good.clone()
        },
        ForestConfig {
            alpha: f64::INFINITY,
            ..good.clone()
        },
        ForestConfig {
            alpha: f64::NAN,
            ..good.clone()
        },
        ForestConfig {
            max_rejections: 0,
            ..good.clone()
        },
    ] {
        assert!(
            matches!(
                bad.check(),
                Err(RtfError::Core(CoreError::InvalidParameter { .. }))
            ),
            "{bad:?}"
        );
    }
    let x = Array2::from_shape_fn((6, 2), |(i, j)| (i + j) as f64);
    let labels = [0u32, 1, 0, 1, 0, 1];
    let test = Array2::from_elem((2, 2), 0.5);
    let prior = Prior::new(PriorKind::Uniform, 2, None).unwrap();
    let cfg = ForestConfig {
        trees: 2,
        particles: 2,
        ..good
    };
    let run = |x: &Array2<f64>, labels: &[u32], k: usize, test: &Array2<f64>, prior: &Prior| {
        Forest::new(prior.clone(), cfg.clone())
            .and_then(|f| f.fit_predict(LabelledRows::new(x.view(), labels, k), test.view(), 0))
    };
    assert!(run(&x, &labels, 2, &test, &prior).is_ok());
    assert_shape_mismatch(run(&x, &labels[..5], 2, &test, &prior), 6, 5);
    assert!(matches!(
        run(&x, &[0, 1, 2, 0, 1, 0], 2, &test, &prior),
        Err(RtfError::LabelOutOfRange {
            row: 2,
            label: 2,
            ..
        })
    ));
    assert!(matches!(
        run(&x, &labels, 0, &test, &prior),
        Err(RtfError::Core(CoreError::InvalidParameter {
            name: "n_classes",
            ..
        }))
    ));
    let mut nan = x.clone();
    nan[[4, 1]] = f64::NAN;
    assert_non_finite(run(&nan, &labels, 2, &test, &prior), "training", 4, 1);
    let mut inf_test = test.clone();
    inf_test[[1, 0]] = f64::INFINITY;
    assert_non_finite(run(&x, &labels, 2, &inf_test, &prior), "test", 1, 0);
    let empty = Array2::<f64>::zeros((0, 2));
    assert!(matches!(
        run(&empty, &[], 2, &test, &prior),
        Err(RtfError::Core(CoreError::EmptyInput {
            rows: 0,
            columns: 2,
            ..
        }))
    ));
    let no_cols = Array2::<f64>::zeros((6, 0));
    assert!(matches!(
        run(&no_cols, &labels, 2, &no_cols, &prior),
        Err(RtfError::Core(CoreError::EmptyInput {
            rows: 6,
            columns: 0,
            ..
        }))
    ));
    let wide_test = Array2::from_elem((2, 3), 0.5);
    assert_shape_mismatch(run(&x, &labels, 2, &wide_test, &prior), 2, 3);
    let prior3 = Prior::new(PriorKind::Uniform, 3, None).unwrap();
    assert_shape_mismatch(run(&x, &labels, 2, &test, &prior3), 3, 2);
    // One training class: the root is paused, no cut, every prediction is that class.
    let out = run(&x, &[1; 6], 3, &test, &prior).unwrap();
    assert_eq!((out.predictions, out.stats.cuts), (vec![1, 1], 0));
    // No test rows is fine: an empty prediction.
    let out = run(&x, &labels, 2, &empty, &prior).unwrap();
    assert!(out.predictions.is_empty());
}
