//! `load` on the real data in `<root>/../shared/datasets` (skipped with a note when absent):
//! every registered set in its typed form, checked against the documented shapes and against
//! independent reads of the files.

mod common;

use std::collections::BTreeSet;
use std::time::Instant;

use datasets::{
    cpu_rr, load, read_csv, read_csv_text, read_idx, read_svmlight, CsvOptions, GivenSplits,
    Inputs, Registry, SplitSpec, Targets,
};
use ndarray::{concatenate, s, Axis};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// How a set ships its splits.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Given {
    Unsplit,
    TrainTest(usize),
    Masks(usize),
}

/// One row of the expected table: name, rows, input columns, class counts in label order
/// (None: regression), given splits.
type Expected = (&'static str, usize, usize, Option<Vec<usize>>, Given);

/// The expected shape of every registered set.
/// Sources: ../shared/datasets/README.md and the registry descriptions (UCI: rows x inputs; the
/// classification counts were counted independently from the files).
fn expected() -> Vec<Expected> {
    use Given::*;
    let uci = |name, n, d| (name, n, d, None, Masks(10));
    vec![
        ("cpu_rr", 7373, 21, None, TrainTest(6554)),
        ("cpu_act", 8192, 21, None, Unsplit),
        // -1 then +1.
        (
            "a9a",
            48842,
            123,
            Some(vec![37155, 11687]),
            TrainTest(32561),
        ),
        (
            "ijcnn1",
            141691,
            22,
            Some(vec![128126, 13565]),
            TrainTest(49990),
        ),
        ("a8a", 22696, 123, Some(vec![17190, 5506]), Unsplit),
        (
            "mnist_test",
            10000,
            784,
            Some(vec![980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]),
            Unsplit,
        ),
        uci("uci/airfoil", 1503, 5),
        uci("uci/autompg", 392, 7),
        uci("uci/autos", 159, 25),
        uci("uci/bike", 17379, 17),
        uci("uci/breastcancer", 194, 33),
        uci("uci/challenger", 23, 4),
        uci("uci/concrete", 1030, 8),
        uci("uci/concreteslump", 103, 7),
        uci("uci/elevators", 16599, 18),
        uci("uci/energy", 768, 8),
        uci("uci/fertility", 100, 9),
        uci("uci/forest", 517, 12),
        uci("uci/gas", 2565, 128),
        uci("uci/housing", 506, 13),
        uci("uci/keggdirected", 48827, 20),
        uci("uci/keggundirected", 63608, 27),
        uci("uci/kin40k", 40000, 8),
        uci("uci/machine", 209, 7),
        uci("uci/parkinsons", 5875, 20),
        uci("uci/pendulum", 630, 9),
        uci("uci/pol", 15000, 26),
        uci("uci/protein", 45730, 9),
        uci("uci/pumadyn32nm", 8192, 32),
        uci("uci/servo", 167, 4),
        uci("uci/skillcraft", 3338, 19),
        uci("uci/sml", 4137, 26),
        uci("uci/solar", 1066, 10),
        uci("uci/stock", 536, 11),
        uci("uci/tamielectric", 45781, 3),
        uci("uci/wine", 1599, 11),
        uci("uci/yacht", 308, 6),
        // B, T.
        ("gene/all", 128, 12625, Some(vec![95, 33]), Unsplit),
        // Biopsy, Normal, mTCC, sTCC+CIS, sTCC-CIS (sorted by bytes).
        (
            "gene/bladder",
            57,
            22283,
            Some(vec![9, 8, 12, 12, 16]),
            Unsplit,
        ),
        // M, R.
        (
            "classification/sonar",
            208,
            60,
            Some(vec![111, 97]),
            Unsplit,
        ),
        // bad, good.
        (
            "classification/ionosphere",
            351,
            34,
            Some(vec![126, 225]),
            Unsplit,
        ),
        // Types 1, 2, 3, 5, 6, 7 (numeric order).
        (
            "classification/glass",
            214,
            9,
            Some(vec![70, 76, 17, 13, 9, 29]),
            Unsplit,
        ),
        // bus, opel, saab, van.
        (
            "classification/vehicle",
            846,
            18,
            Some(vec![218, 212, 217, 199]),
            Unsplit,
        ),
        ("classification/vowel", 990, 10, Some(vec![90; 11]), Unsplit),
        // neg, pos.
        (
            "classification/pimaindiansdiabetes",
            768,
            8,
            Some(vec![500, 268]),
            Unsplit,
        ),
        // 699 rows, 16 with an NA (Bare.nuclei) dropped; benign, malignant; Id dropped.
        (
            "classification/breastcancer",
            683,
            9,
            Some(vec![444, 239]),
            Unsplit,
        ),
        // nonspam, spam.
        (
            "classification/spam",
            4601,
            57,
            Some(vec![2788, 1813]),
            Unsplit,
        ),
    ]
}

#[test]
fn expected_table_covers_the_registry() {
    let registered: BTreeSet<&str> = Registry::embedded()
        .unwrap()
        .datasets()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let listed: BTreeSet<&str> = expected().iter().map(|e| e.0).collect();
    assert_eq!(registered, listed);
    assert_eq!(listed.len(), 47);
}

#[test]
fn every_registered_dataset_loads_into_its_typed_form() {
    let Some(dirs) = common::shared_dirs("every_registered_dataset_loads_into_its_typed_form")
    else {
        return;
    };
    let start = Instant::now();
    for (name, n, d, counts, given) in expected() {
        let t = Instant::now();
        let set = load(&dirs, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("load {name}: {:.3} s", t.elapsed().as_secs_f64());
        assert_eq!(set.name, name);
        assert_eq!((set.n_rows(), set.n_features()), (n, d), "{name}");
        assert_eq!(set.feature_names.len(), d, "{name}");
        assert_eq!(set.y.class_counts(), counts, "{name}");
        let got = match &set.given {
            GivenSplits::None => Given::Unsplit,
            GivenSplits::TrainTest { n_train } => Given::TrainTest(*n_train),
            GivenSplits::Masks(m) => Given::Masks(m.ncols()),
        };
        assert_eq!(got, given, "{name}");
        let svmlight = ["a9a", "ijcnn1", "a8a"].contains(&name);
        assert_eq!(matches!(set.x, Inputs::Sparse(_)), svmlight, "{name}");
        if let Inputs::Dense(x) = &set.x {
            assert!(x.iter().all(|v| v.is_finite()), "{name}: non-finite input");
        }
        if let Targets::Real(y) = &set.y {
            assert!(y.iter().all(|v| v.is_finite()), "{name}: non-finite target");
        }
    }
    eprintln!(
        "every_registered_dataset_loads_into_its_typed_form: all 47 sets in {:.2} s",
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn cpu_rr_equals_the_csv_files_and_the_old_view() {
    let Some(dirs) = common::shared_dirs("cpu_rr_equals_the_csv_files_and_the_old_view") else {
        return;
    };
    let set = load(&dirs, "cpu_rr").unwrap();
    let located = dirs.locate_name("cpu_rr").unwrap();
    let train = read_csv(
        located.path("train").unwrap(),
        &CsvOptions::with_header(true),
    )
    .unwrap();
    let test = read_csv(
        located.path("test").unwrap(),
        &CsvOptions::with_header(true),
    )
    .unwrap();
    let both = concatenate(Axis(0), &[train.values.view(), test.values.view()]).unwrap();
    let x = set.x.as_dense().unwrap();
    let y = set.y.as_real().unwrap();
    assert_eq!(x, &both.slice(s![.., ..21]));
    assert_eq!(y, &both.column(21));
    assert_eq!(x[[0, 0]], 6.0);
    assert_eq!(x[[0, 20]], 1851864.0);
    assert_eq!(y[0], 91.0);
    assert_eq!(set.feature_names, train.header.unwrap()[..21].to_vec());

    // The old view: same f64s, same row order, split at the published boundary.
    let old = cpu_rr(&dirs).unwrap();
    assert_eq!(old.x_train, both.slice(s![..6554, ..21]));
    assert_eq!(old.x_test, both.slice(s![6554.., ..21]));
    assert_eq!(old.y_train, both.slice(s![..6554, 21]));
    assert_eq!(old.y_test, both.slice(s![6554.., 21]));
    assert_eq!(old.feature_names, set.feature_names);

    // `given` draws the same boundary.
    let split = SplitSpec::Given
        .draw(&set, 0, &mut ChaCha8Rng::seed_from_u64(0))
        .unwrap();
    assert_eq!(split.train, (0..6554).collect::<Vec<_>>());
    assert_eq!(split.test, (6554..7373).collect::<Vec<_>>());
}

#[test]
fn svmlight_sets_are_sparse_and_equal_the_dense_reader() {
    let Some(dirs) = common::shared_dirs("svmlight_sets_are_sparse_and_equal_the_dense_reader")
    else {
        return;
    };
    for (name, d) in [("a9a", 123), ("ijcnn1", 22)] {
        let set = load(&dirs, name).unwrap();
        let located = dirs.locate_name(name).unwrap();
        let (xa, ya) = read_svmlight(located.path("train").unwrap(), Some(d)).unwrap();
        let (xb, yb) = read_svmlight(located.path("test").unwrap(), Some(d)).unwrap();
        let x = set.x.as_sparse().unwrap();
        assert_eq!(
            x.to_dense(),
            concatenate(Axis(0), &[xa.view(), xb.view()]).unwrap(),
            "{name}"
        );
        // No explicit zeros are stored.
        assert!(x.values().iter().all(|&v| v != 0.0), "{name}");
        let (labels, names) = set.y.as_classes().unwrap();
        assert_eq!(names, ["-1", "+1"]);
        for (i, &v) in ya.iter().chain(yb.iter()).enumerate() {
            assert_eq!(labels[i], u32::from(v > 0.0), "{name} row {i}");
        }
        assert_eq!(set.feature_names[0], "x1");
    }
    // a9a's first row: the 14 ones of the file, as a sparse row.
    let set = load(&dirs, "a9a").unwrap();
    let (cols, vals) = set.x.as_sparse().unwrap().row(0);
    let ones: [u32; 14] = [3, 11, 14, 19, 39, 42, 55, 64, 67, 73, 75, 76, 80, 83];
    assert_eq!(cols, ones.map(|j| j - 1));
    assert!(vals.iter().all(|&v| v == 1.0));
}

#[test]
fn mnist_pixels_and_digits() {
    let Some(dirs) = common::shared_dirs("mnist_pixels_and_digits") else {
        return;
    };
    let set = load(&dirs, "mnist_test").unwrap();
    let x = set.x.as_dense().unwrap();
    assert_eq!(x.dim(), (10000, 28 * 28));
    assert!(x
        .iter()
        .all(|&v| (0.0..=255.0).contains(&v) && v.fract() == 0.0));
    let (labels, names) = set.y.as_classes().unwrap();
    let digits: Vec<String> = (0..10).map(|d| d.to_string()).collect();
    assert_eq!(names, digits);
    assert_eq!(names[labels[0] as usize], "7"); // the first MNIST test digit is a 7
    let located = dirs.locate_name("mnist_test").unwrap();
    let images = read_idx(located.path("images").unwrap()).unwrap();
    let raw = read_idx(located.path("labels").unwrap()).unwrap();
    assert_eq!(
        x.row(0).to_vec(),
        images.data[..784]
            .iter()
            .map(|&b| f64::from(b))
            .collect::<Vec<_>>()
    );
    assert!(labels
        .iter()
        .zip(&raw.data)
        .all(|(&l, &r)| l == u32::from(r)));
}

#[test]
fn gene_sets_join_the_pheno_files() {
    let Some(dirs) = common::shared_dirs("gene_sets_join_the_pheno_files") else {
        return;
    };
    let all = load(&dirs, "gene/all").unwrap();
    let located = dirs.locate_name("gene/all").unwrap();
    let pheno = read_csv_text(
        located.path("pheno").unwrap(),
        &CsvOptions::with_header(true),
    )
    .unwrap();
    let bt = pheno
        .header
        .as_ref()
        .unwrap()
        .iter()
        .position(|h| h == "BT")
        .unwrap();
    let (labels, names) = all.y.as_classes().unwrap();
    assert_eq!(names, ["B", "T"]);
    for (i, row) in pheno.rows.iter().enumerate() {
        assert_eq!(&row[bt][..1], names[labels[i] as usize], "row {i}");
    }
    assert_eq!(all.feature_names[0], "1000_at");
    assert_eq!(all.x.as_dense().unwrap()[[0, 0]], 7.59732);

    let bladder = load(&dirs, "gene/bladder").unwrap();
    let (_, names) = bladder.y.as_classes().unwrap();
    assert_eq!(names, ["Biopsy", "Normal", "mTCC", "sTCC+CIS", "sTCC-CIS"]);
    assert_eq!(bladder.x.as_dense().unwrap()[[0, 0]], 10.1152);
    assert_eq!(bladder.feature_names[0], "1007_s_at");
}

#[test]
fn derived_tasks_keep_the_rows_their_pheno_columns_select() {
    let Some(dirs) = common::shared_dirs("derived_tasks_keep_the_rows_their_pheno_columns_select")
    else {
        return;
    };
    let registry = Registry::embedded().unwrap();
    let all = registry.get("gene/all").unwrap();
    let task: datasets::DerivedTask = toml::from_str(
        "target = 'mol.biol'\nclasses = ['BCR/ABL', 'NEG']\n[[where]]\ncolumn = 'BT'\nlabels = 'first_char'\nkeep = ['B']",
    )
    .unwrap();
    let set = datasets::load_task(&dirs, all, Some(&task)).unwrap();
    // Independently: the pheno rows with BT = B* and mol.biol in {BCR/ABL, NEG}, in file order.
    let located = dirs.locate_name("gene/all").unwrap();
    let pheno = read_csv_text(
        located.path("pheno").unwrap(),
        &CsvOptions::with_header(true),
    )
    .unwrap();
    let col = |name: &str| {
        pheno
            .header
            .as_ref()
            .unwrap()
            .iter()
            .position(|h| h == name)
            .unwrap()
    };
    let (bt, mol) = (col("BT"), col("mol.biol"));
    let kept: Vec<(usize, &str)> = pheno
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r[bt].starts_with('B') && (r[mol] == "BCR/ABL" || r[mol] == "NEG"))
        .map(|(i, r)| (i, r[mol].as_str()))
        .collect();
    let (labels, names) = set.y.as_classes().unwrap();
    assert_eq!(names, ["BCR/ABL", "NEG"]);
    assert_eq!(set.y.class_counts().unwrap(), vec![37, 42]);
    assert_eq!(labels.len(), kept.len());
    let full = load(&dirs, "gene/all").unwrap();
    let (x, fx) = (set.x.as_dense().unwrap(), full.x.as_dense().unwrap());
    for (k, (i, m)) in kept.iter().enumerate() {
        assert_eq!(names[labels[k] as usize], *m);
        assert_eq!(x.row(k), fx.row(*i), "row {k} is pheno row {i}");
    }
    // Relapse: True / False, the 28 rows marked `--` left out.
    let relapse: datasets::DerivedTask =
        toml::from_str("target = 'relapse'\nclasses = ['False', 'True']").unwrap();
    let set = datasets::load_task(&dirs, all, Some(&relapse)).unwrap();
    assert_eq!(set.y.class_counts().unwrap(), vec![35, 65]);
    // Errors name the problem: an unknown column, one class, a regression set.
    let bad: datasets::DerivedTask = toml::from_str("target = 'no.such'").unwrap();
    let err = datasets::load_task(&dirs, all, Some(&bad))
        .unwrap_err()
        .to_string();
    assert!(err.contains("no.such"), "{err}");
    let misspelt: datasets::DerivedTask =
        toml::from_str("target = 'mol.biol'\nclasses = ['BCR/ABL', 'NGE']").unwrap();
    let err = datasets::load_task(&dirs, all, Some(&misspelt))
        .unwrap_err()
        .to_string();
    assert!(err.contains("`NGE`") && err.contains("NEG"), "{err}");
    let one: datasets::DerivedTask = toml::from_str("classes = ['B']").unwrap();
    let err = datasets::load_task(&dirs, all, Some(&one))
        .unwrap_err()
        .to_string();
    assert!(err.contains("at least two"), "{err}");
    let err = datasets::load_task(&dirs, registry.get("uci/yacht").unwrap(), Some(&relapse))
        .unwrap_err()
        .to_string();
    assert!(err.contains("regression"), "{err}");
}

#[test]
fn breastcancer_drops_id_and_na_rows() {
    let Some(dirs) = common::shared_dirs("breastcancer_drops_id_and_na_rows") else {
        return;
    };
    let set = load(&dirs, "classification/breastcancer").unwrap();
    assert_eq!(
        set.feature_names,
        [
            "Cl.thickness",
            "Cell.size",
            "Cell.shape",
            "Marg.adhesion",
            "Epith.c.size",
            "Bare.nuclei",
            "Bl.cromatin",
            "Normal.nucleoli",
            "Mitoses"
        ]
    );
    // The independent read: text rows without an empty field.
    let located = dirs.locate_name("classification/breastcancer").unwrap();
    let t = read_csv_text(
        located.path("data").unwrap(),
        &CsvOptions::with_header(true),
    )
    .unwrap();
    let complete: Vec<&Vec<String>> = t
        .rows
        .iter()
        .filter(|r| r.iter().all(|f| !f.is_empty()))
        .collect();
    assert_eq!((t.rows.len(), complete.len()), (699, 683));
    let x = set.x.as_dense().unwrap();
    let (labels, names) = set.y.as_classes().unwrap();
    for (i, row) in complete.iter().enumerate() {
        let want: Vec<f64> = row[1..10].iter().map(|f| f.parse().unwrap()).collect();
        assert_eq!(x.row(i).to_vec(), want, "row {i}");
        assert_eq!(names[labels[i] as usize], row[10]);
    }
}

#[test]
fn every_uci_row_is_a_test_row_of_exactly_one_shipped_split() {
    let Some(dirs) =
        common::shared_dirs("every_uci_row_is_a_test_row_of_exactly_one_shipped_split")
    else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for ds in Registry::embedded().unwrap().datasets() {
        if !ds.name.starts_with("uci/") {
            continue;
        }
        let set = load(&dirs, &ds.name).unwrap();
        let GivenSplits::Masks(m) = &set.given else {
            panic!("{}: no masks", ds.name);
        };
        assert_eq!(m.ncols(), 10, "{}", ds.name);
        for (i, row) in m.rows().into_iter().enumerate() {
            assert_eq!(row.iter().filter(|&&t| t).count(), 1, "{} row {i}", ds.name);
        }
        // Each split tests about a tenth of the rows (a 10-fold partition).
        let n = set.n_rows();
        for k in 0..10 {
            let split = SplitSpec::Predefined.draw(&set, k, &mut rng).unwrap();
            let want: Vec<usize> = (0..n).filter(|&i| m[[i, k]]).collect();
            assert_eq!(split.test, want, "{} split {k}", ds.name);
            assert_eq!(split.train.len() + split.test.len(), n);
            assert!(
                split.test.len() == n / 10 || split.test.len() == n.div_ceil(10),
                "{} split {k}: {} of {n}",
                ds.name,
                split.test.len()
            );
        }
        assert!(SplitSpec::Predefined.draw(&set, 10, &mut rng).is_err());
    }
}

#[test]
fn stratified_random_split_on_real_classes() {
    let Some(dirs) = common::shared_dirs("stratified_random_split_on_real_classes") else {
        return;
    };
    let set = load(&dirs, "gene/all").unwrap();
    let spec = SplitSpec::Random {
        test_fraction: 1.0 / 3.0,
        stratify: true,
    };
    let split = spec
        .draw(&set, 0, &mut ChaCha8Rng::seed_from_u64(7))
        .unwrap();
    // round(128 / 3) = 43 test rows: B 95 * 43 / 128 = 31.9 -> 32, T 33 * 43 / 128 = 11.1 -> 11.
    assert_eq!(split.test.len(), 43);
    let (_, y_test) = set.select(&split.test);
    assert_eq!(y_test.class_counts(), Some(vec![32, 11]));
    // Given needs published files; gene/all ships none.
    let err = SplitSpec::Given
        .draw(&set, 0, &mut ChaCha8Rng::seed_from_u64(7))
        .unwrap_err();
    assert!(err.to_string().contains("gene/all"), "{err}");
}
