//! Split semantics on small in-memory sets (no data files needed).

use datasets::{
    shuffled_order, CsrMatrix, DatasetError, GivenSplits, Inputs, LabelledSet, Split, SplitSpec,
    Targets,
};
use ndarray::{Array1, Array2};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn regression(n: usize, given: GivenSplits) -> LabelledSet {
    LabelledSet {
        name: "toy/regression".into(),
        x: Inputs::Dense(Array2::from_shape_fn((n, 2), |(i, j)| (i * 2 + j) as f64)),
        y: Targets::Real(Array1::from_shape_fn(n, |i| i as f64)),
        feature_names: vec!["x1".into(), "x2".into()],
        given,
    }
}

/// 3 classes of sizes 50, 30, 7, interleaved (sparse inputs, to cover that form too).
fn classes() -> LabelledSet {
    let mut labels = Vec::new();
    for i in 0..87u32 {
        labels.push(
            if i % 3 == 0 && labels.iter().filter(|&&l| l == 2).count() < 7 {
                2
            } else if i % 2 == 0 && labels.iter().filter(|&&l| l == 1).count() < 30 {
                1
            } else {
                0
            },
        );
    }
    let x = Array2::from_shape_fn((87, 3), |(i, j)| if (i + j) % 4 == 0 { 1.0 } else { 0.0 });
    LabelledSet {
        name: "toy/classes".into(),
        x: Inputs::Sparse(CsrMatrix::from_dense(x.view())),
        y: Targets::Classes {
            labels,
            names: vec!["a".into(), "b".into(), "c".into()],
        },
        feature_names: vec!["x1".into(), "x2".into(), "x3".into()],
        given: GivenSplits::None,
    }
}

fn draw(spec: &SplitSpec, set: &LabelledSet, rep: usize, seed: u64) -> Split {
    spec.draw(set, rep, &mut ChaCha8Rng::seed_from_u64(seed))
        .unwrap()
}

fn assert_partition(split: &Split, n: usize) {
    assert!(split.train.windows(2).all(|w| w[0] < w[1]), "train sorted");
    assert!(split.test.windows(2).all(|w| w[0] < w[1]), "test sorted");
    let mut all: Vec<usize> = split.train.iter().chain(&split.test).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..n).collect::<Vec<_>>(), "disjoint and covering");
    assert!(!split.train.is_empty() && !split.test.is_empty());
}

#[test]
fn random_splits_are_reproducible_and_seed_dependent() {
    let set = regression(100, GivenSplits::None);
    let spec = SplitSpec::Random {
        test_fraction: 0.3,
        stratify: false,
    };
    let a = draw(&spec, &set, 0, 1);
    assert_eq!(a, draw(&spec, &set, 0, 1));
    // The repetition number does not enter: the caller's seed does.
    assert_eq!(a, draw(&spec, &set, 5, 1));
    assert_ne!(a, draw(&spec, &set, 0, 2));
    assert_partition(&a, 100);
    assert_eq!(a.test.len(), 30);
    // The test rows are the first 30 of the seeded order.
    let mut first: Vec<usize> =
        shuffled_order(100, &mut ChaCha8Rng::seed_from_u64(1))[..30].to_vec();
    first.sort_unstable();
    assert_eq!(a.test, first);
    // Same RNG state -> same split, also mid-stream.
    let mut r1 = ChaCha8Rng::seed_from_u64(9);
    let mut r2 = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..3 {
        assert_eq!(
            spec.draw(&set, 0, &mut r1).unwrap(),
            spec.draw(&set, 0, &mut r2).unwrap()
        );
    }
}

#[test]
fn test_count_is_rounded_with_one_row_each_side() {
    for (n, f, want) in [
        (10, 0.25, 3),
        (10, 0.01, 1),
        (10, 0.99, 9),
        (2, 0.5, 1),
        (7, 0.5, 4),
    ] {
        let set = regression(n, GivenSplits::None);
        let spec = SplitSpec::Random {
            test_fraction: f,
            stratify: false,
        };
        let s = draw(&spec, &set, 0, 3);
        assert_eq!(s.test.len(), want, "n = {n}, f = {f}");
        assert_partition(&s, n);
    }
    let one = regression(1, GivenSplits::None);
    let spec = SplitSpec::Random {
        test_fraction: 0.5,
        stratify: false,
    };
    assert!(spec
        .draw(&one, 0, &mut ChaCha8Rng::seed_from_u64(0))
        .is_err());
}

#[test]
fn stratified_splits_keep_class_proportions() {
    let set = classes();
    let counts = set.y.class_counts().unwrap();
    assert_eq!(counts, vec![50, 30, 7]);
    for (f, seed) in [(0.3, 1), (0.5, 2), (0.1, 3), (0.77, 4)] {
        let spec = SplitSpec::Random {
            test_fraction: f,
            stratify: true,
        };
        let s = draw(&spec, &set, 0, seed);
        assert_partition(&s, 87);
        let n_test = (f * 87.0_f64).round() as usize;
        assert_eq!(s.test.len(), n_test, "f = {f}");
        let test_counts = set.y.select(&s.test).class_counts().unwrap();
        for (c, (&t, &nc)) in test_counts.iter().zip(&counts).enumerate() {
            let share = n_test as f64 * nc as f64 / 87.0;
            assert!(
                (t as f64 - share).abs() < 1.0,
                "f = {f}, class {c}: {t} test rows, share {share}"
            );
        }
        assert_eq!(s, draw(&spec, &set, 0, seed));
        assert_ne!(s, draw(&spec, &set, 0, seed + 100));
    }
}

#[test]
fn predefined_uses_mask_column_rep() {
    let n = 12;
    let mask = Array2::from_shape_fn((n, 3), |(i, k)| i % 3 == k);
    let set = regression(n, GivenSplits::Masks(mask.clone()));
    for k in 0..3 {
        let s = draw(&SplitSpec::Predefined, &set, k, 0);
        let want: Vec<usize> = (0..n).filter(|&i| mask[[i, k]]).collect();
        assert_eq!(s.test, want);
        assert_partition(&s, n);
    }
    let err = SplitSpec::Predefined
        .draw(&set, 3, &mut ChaCha8Rng::seed_from_u64(0))
        .unwrap_err();
    assert!(matches!(err, DatasetError::Split { .. }), "{err}");
    assert!(err.to_string().contains("3 masks"), "{err}");
    assert!(SplitSpec::Predefined
        .check_set(&set.given, &set.y, 3)
        .is_ok());
    assert!(SplitSpec::Predefined
        .check_set(&set.given, &set.y, 4)
        .is_err());
    // An empty test mask is refused rather than giving an empty test set.
    let empty = regression(n, GivenSplits::Masks(Array2::from_elem((n, 1), false)));
    assert!(SplitSpec::Predefined
        .draw(&empty, 0, &mut ChaCha8Rng::seed_from_u64(0))
        .is_err());
}

#[test]
fn given_uses_the_published_boundary() {
    let set = regression(10, GivenSplits::TrainTest { n_train: 7 });
    let s = draw(&SplitSpec::Given, &set, 4, 0);
    assert_eq!(s.train, (0..7).collect::<Vec<_>>());
    assert_eq!(s.test, vec![7, 8, 9]);
}

#[test]
fn mismatched_specs_are_errors() {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let masks = regression(10, GivenSplits::Masks(Array2::from_elem((10, 2), true)));
    let err = SplitSpec::Given.draw(&masks, 0, &mut rng).unwrap_err();
    assert!(err.to_string().contains("predefined"), "{err}");
    let published = regression(10, GivenSplits::TrainTest { n_train: 7 });
    assert!(SplitSpec::Predefined.draw(&published, 0, &mut rng).is_err());
    let none = regression(10, GivenSplits::None);
    assert!(SplitSpec::Given.draw(&none, 0, &mut rng).is_err());
    // Stratify needs classes.
    let strat = SplitSpec::Random {
        test_fraction: 0.3,
        stratify: true,
    };
    let err = strat.draw(&none, 0, &mut rng).unwrap_err();
    assert!(err.to_string().contains("stratify"), "{err}");
    assert!(strat.check_set(&classes().given, &classes().y, 1).is_ok());
    // Bad fractions.
    for f in [0.0, 1.0, 1.5, -0.2, f64::NAN, f64::INFINITY] {
        let spec = SplitSpec::Random {
            test_fraction: f,
            stratify: false,
        };
        assert!(spec.validate().is_err(), "{f}");
        let err = spec.draw(&none, 0, &mut rng).unwrap_err();
        assert!(err.to_string().contains("test_fraction"), "{err}");
    }
}
