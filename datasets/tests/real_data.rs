//! Tests against the real data in `<root>/../shared/datasets` (skipped with a note when absent).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use datasets::{
    cpu_rr, load, load_xy, read_csv, read_csv_text, read_idx, read_svmlight, CsvOptions, DataDirs,
    DatasetError, FileStatus, GivenSplits, Match, Registry,
};

#[test]
fn registry_covers_every_line_of_sha256sums() {
    let Some(shared) = common::shared_dir("registry_covers_every_line_of_sha256sums") else {
        return;
    };
    let sums = std::fs::read_to_string(shared.join("SHA256SUMS")).unwrap();
    let mut listed = BTreeMap::new();
    for line in sums.lines().filter(|l| !l.trim().is_empty()) {
        let (digest, path) = line.split_once(char::is_whitespace).unwrap();
        let path = path.trim().trim_start_matches("./");
        listed.insert(path.to_string(), digest.to_string());
    }
    let registry = Registry::embedded().unwrap();
    let mut registered = BTreeMap::new();
    for ds in registry.datasets() {
        for f in &ds.files {
            registered.insert(f.path.clone(), f.sha256.clone());
        }
    }
    assert_eq!(listed.len(), 84);
    assert_eq!(registered, listed, "registry and SHA256SUMS differ");
    // 31 UCI sets, named uci/<name>.
    let n_uci = registry
        .datasets()
        .iter()
        .filter(|d| d.name.starts_with("uci/"))
        .count();
    assert_eq!(n_uci, 31);
}

#[test]
fn every_real_file_verifies() {
    let Some(dirs) = common::shared_dirs("every_real_file_verifies") else {
        return;
    };
    let reports = dirs.verify_registry(Registry::embedded().unwrap());
    assert_eq!(reports.len(), 84);
    for r in &reports {
        assert!(
            matches!(
                r.status,
                FileStatus::Verified {
                    matched: Match::Exact,
                    ..
                }
            ),
            "{r}"
        );
    }
}

#[test]
fn real_gz_content_digests_match() {
    // content_sha256 was computed from the decompressed real files: check it independently.
    let Some(shared) = common::shared_dir("real_gz_content_digests_match") else {
        return;
    };
    for ds in Registry::embedded().unwrap().datasets() {
        for f in ds.files.iter().filter(|f| f.path.ends_with(".gz")) {
            let bytes = datasets::read_maybe_gz(&shared.join(&f.path)).unwrap();
            assert_eq!(
                Some(datasets::digest::sha256_bytes(&bytes)),
                f.content_sha256,
                "{}",
                f.path
            );
        }
    }
}

#[test]
fn locate_and_load_cpu_rr() {
    let Some(dirs) = common::shared_dirs("locate_and_load_cpu_rr") else {
        return;
    };
    let ds = Registry::embedded().unwrap().get("cpu_rr").unwrap();
    let located = dirs.locate(ds).unwrap();
    let train = located.path("train").unwrap();
    let test = located.path("test").unwrap();
    assert!(train.is_absolute() && train.ends_with("cpu/cpu_rr_train.csv"));
    assert!(test.is_absolute() && test.ends_with("cpu/cpu_rr_test.csv"));

    let (x, y) = load_xy(train, true).unwrap();
    assert_eq!(x.dim(), (6554, 21));
    assert_eq!(y.len(), 6554);
    assert!(y.iter().all(|&v| (1.0..=100.0).contains(&v)));
    let (x, y) = load_xy(test, true).unwrap();
    assert_eq!(x.dim(), (819, 21));
    assert!(y.iter().all(|&v| (1.0..=100.0).contains(&v)));

    let split = cpu_rr(&dirs).unwrap();
    assert_eq!(split.x_train.dim(), (6554, 21));
    assert_eq!(split.x_test.dim(), (819, 21));
    assert_eq!(split.feature_names.len(), 21);
    assert_eq!(split.feature_names[0], "lread");
    assert_eq!(split.feature_names[20], "freeswap");
    // First training row of the file.
    assert_eq!(split.x_train[[0, 0]], 6.0);
    assert_eq!(split.x_train[[0, 20]], 1851864.0);
    assert_eq!(split.y_train[0], 91.0);
}

#[test]
fn default_search_order_finds_shared_data() {
    // DataDirs::from_root(<root>) reaches <root>/../shared/datasets (unless REPRO_DATA_DIR or
    // the cache holds a copy, which must then also verify).
    if common::shared_dir("default_search_order_finds_shared_data").is_none() {
        return;
    }
    let dirs = DataDirs::from_root(common::project_root());
    let located = dirs.locate_name("cpu_rr").unwrap();
    assert!(located.path("train").unwrap().is_file());
    let last = dirs.search_dirs().last().unwrap();
    assert!(last.ends_with("shared/datasets"), "{}", last.display());
}

#[test]
fn corrupted_copy_is_refused_with_both_digests() {
    let Some(shared) = common::shared_dir("corrupted_copy_is_refused_with_both_digests") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("cpu")).unwrap();
    let mut bytes = std::fs::read(shared.join("cpu/cpu_rr_train.csv")).unwrap();
    bytes[1000] ^= 0x01;
    let bad = tmp.path().join("cpu/cpu_rr_train.csv");
    std::fs::write(&bad, &bytes).unwrap();
    std::fs::copy(
        shared.join("cpu/cpu_rr_test.csv"),
        tmp.path().join("cpu/cpu_rr_test.csv"),
    )
    .unwrap();
    let actual = datasets::digest::sha256_bytes(&bytes);
    let ds = Registry::embedded().unwrap().get("cpu_rr").unwrap();
    let expected = &ds.file("train").unwrap().sha256;

    // The corrupt copy comes first in the search order: it must be refused, not skipped.
    let dirs = DataDirs::custom(vec![tmp.path().to_path_buf(), shared.clone()], tmp.path());
    let err = dirs.locate(ds).unwrap_err();
    let msg = err.to_string();
    match &err {
        DatasetError::DigestMismatch {
            file,
            expected: e,
            actual: a,
            ..
        } => {
            assert_eq!(e, expected);
            assert_eq!(a, &actual);
            assert!(file.ends_with("cpu/cpu_rr_train.csv"), "{file}");
        }
        other => panic!("expected DigestMismatch, got {other}"),
    }
    assert!(
        msg.contains(expected.as_str()) && msg.contains(&actual),
        "{msg}"
    );
    assert!(msg.contains(&bad.display().to_string()), "{msg}");

    let reports = dirs.verify_registry(Registry::embedded().unwrap());
    let train = reports
        .iter()
        .find(|r| r.file == "cpu/cpu_rr_train.csv")
        .unwrap();
    assert!(
        matches!(train.status, FileStatus::Mismatch { .. }),
        "{train}"
    );
    assert!(train.to_string().contains("MISMATCH"));
}

#[test]
fn missing_file_lists_searched_dirs_and_how_to_get_it() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    let cache = tmp.path().join("cache");
    let dirs = DataDirs::custom(vec![a.clone(), b.clone()], &cache);
    let registry = Registry::embedded().unwrap();

    let err = dirs.locate(registry.get("cpu_rr").unwrap()).unwrap_err();
    let msg = err.to_string();
    match &err {
        DatasetError::Missing { searched, file, .. } => {
            assert_eq!(searched, &vec![a.clone(), b.clone(), cache.clone()]);
            assert_eq!(file, "cpu/cpu_rr_train.csv");
        }
        other => panic!("expected Missing, got {other}"),
    }
    for d in [&a, &b, &cache] {
        assert!(msg.contains(&d.display().to_string()), "{msg}");
    }
    assert!(msg.contains("cpu.tgz"), "upstream text missing: {msg}");

    // A dataset with urls points at the fetch command.
    let msg = dirs
        .locate(registry.get("a9a").unwrap())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("repro datasets fetch a9a"), "{msg}");

    let reports = dirs.verify_registry(registry);
    assert!(reports
        .iter()
        .all(|r| matches!(r.status, FileStatus::Missing { .. })));
}

#[test]
fn svmlight_real_a9a_first_row() {
    let Some(dirs) = common::shared_dirs("svmlight_real_a9a_first_row") else {
        return;
    };
    let located = dirs.locate_name("a9a").unwrap();
    let (x, y) = read_svmlight(located.path("train").unwrap(), None).unwrap();
    assert_eq!(x.dim(), (32561, 123));
    assert_eq!(y[0], -1.0);
    let ones = [3, 11, 14, 19, 39, 42, 55, 64, 67, 73, 75, 76, 80, 83];
    for j in 0..123 {
        let want = if ones.contains(&(j + 1)) { 1.0 } else { 0.0 };
        assert_eq!(x[[0, j]], want, "feature {}", j + 1);
    }
    assert!(y.iter().all(|&v| v == 1.0 || v == -1.0));
    // The test file's largest index is 122: n_features pins the width.
    let (xt, _) = read_svmlight(located.path("test").unwrap(), Some(123)).unwrap();
    assert_eq!(xt.dim(), (16281, 123));
    let (xt, _) = read_svmlight(located.path("test").unwrap(), None).unwrap();
    assert_eq!(xt.ncols(), 122);
}

#[test]
fn svmlight_real_ijcnn1() {
    let Some(dirs) = common::shared_dirs("svmlight_real_ijcnn1") else {
        return;
    };
    let located = dirs.locate_name("ijcnn1").unwrap();
    let (x, y) = read_svmlight(located.path("train").unwrap(), Some(22)).unwrap();
    assert_eq!(x.dim(), (49990, 22));
    assert!(y.iter().all(|&v| v == 1.0 || v == -1.0));
    assert_eq!(y[0], -1.0);
    assert_eq!(x[[0, 5]], 1.0);
    assert_eq!(x[[0, 10]], -0.731854);
}

#[test]
fn idx_real_mnist_labels() {
    let Some(dirs) = common::shared_dirs("idx_real_mnist_labels") else {
        return;
    };
    let located = dirs.locate_name("mnist_test").unwrap();
    let labels = read_idx(located.path("labels").unwrap()).unwrap();
    assert_eq!(labels.dims, vec![10000]);
    assert_eq!(labels.data.len(), 10000);
    assert!(labels.data.iter().all(|&v| v <= 9));
    for digit in 0..=9u8 {
        assert!(labels.data.contains(&digit), "digit {digit} absent");
    }
    let m = load(&dirs, "mnist_test").unwrap();
    assert_eq!((m.n_rows(), m.n_features()), (10000, 784));
    let (labels, names) = m.y.as_classes().unwrap();
    assert_eq!(names[labels[0] as usize], "7"); // the first MNIST test digit is a 7
}

#[test]
fn uci_airfoil_splits_partition_rows() {
    let Some(dirs) = common::shared_dirs("uci_airfoil_splits_partition_rows") else {
        return;
    };
    let d = load(&dirs, "uci/airfoil").unwrap();
    assert_eq!(d.x.as_dense().unwrap().dim(), (1503, 5));
    let GivenSplits::Masks(mask) = &d.given else {
        panic!("uci/airfoil ships masks");
    };
    assert_eq!(mask.ncols(), 10);
    for row in mask.rows() {
        assert_eq!(row.iter().filter(|&&t| t).count(), 1);
    }
    let n_test = mask.column(0).iter().filter(|&&t| t).count();
    assert!(n_test > 100 && n_test < 200);
    assert!(matches!(
        load(&dirs, "uci/nope"),
        Err(DatasetError::UnknownDataset { .. })
    ));
}

#[test]
fn text_and_row_named_tables() {
    let Some(dirs) = common::shared_dirs("text_and_row_named_tables") else {
        return;
    };
    let sonar = dirs.locate_name("classification/sonar").unwrap();
    let t = read_csv_text(sonar.path("data").unwrap(), &CsvOptions::with_header(true)).unwrap();
    assert_eq!(t.rows.len(), 208);
    assert_eq!(t.header.as_ref().unwrap().len(), 61);

    // BreastCancer has NA as empty fields: numeric read fails without empty_as_nan.
    let bc = dirs.locate_name("classification/breastcancer").unwrap();
    let path: PathBuf = bc.path("data").unwrap().to_path_buf();
    let t = read_csv_text(&path, &CsvOptions::with_header(true)).unwrap();
    assert_eq!(t.rows.len(), 699);
    assert!(t.rows.iter().any(|r| r.iter().any(String::is_empty)));

    let bladder = dirs.locate_name("gene/bladder").unwrap();
    let opts = CsvOptions {
        header: true,
        row_names: true,
        ..CsvOptions::default()
    };
    let t = read_csv(bladder.path("exprs").unwrap(), &opts).unwrap();
    assert_eq!(t.values.dim(), (57, 22283));
    assert_eq!(t.row_names.as_ref().unwrap().len(), 57);
}
