//! `[dataset.table]` rules on small files written to a temporary directory (no real data
//! needed): registry validation, NA rows, masks, joins, class numbering and their errors.

use std::path::Path;

use datasets::digest::sha256_bytes;
use datasets::{
    load_from, DataDirs, DatasetError, GivenSplits, Inputs, LabelledSet, Registry, RegistryError,
    Targets,
};

/// One file: role, registry path, format, content.
struct File<'a>(&'a str, &'a str, &'a str, &'a str);

fn entry(files: &[File<'_>], table: &str) -> String {
    let mut s = String::from(
        "[[dataset]]\nname = \"toy\"\ndescription = \"d\"\npapers = []\nformat = \"csv\"\n\
         upstream = \"u\"\n\n[dataset.table]\n",
    );
    s.push_str(table);
    for File(role, path, format, content) in files {
        s.push_str(&format!(
            "\n[[dataset.file]]\nrole = \"{role}\"\npath = \"{path}\"\nformat = \"{format}\"\n\
             sha256 = \"{}\"\n",
            sha256_bytes(content.as_bytes())
        ));
    }
    s
}

fn write(dir: &Path, files: &[File<'_>]) {
    for File(_, path, _, content) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

fn load_toy(files: &[File<'_>], table: &str) -> Result<LabelledSet, DatasetError> {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), files);
    let registry = Registry::parse(&entry(files, table)).map_err(DatasetError::from)?;
    let dirs = DataDirs::custom(vec![tmp.path().to_path_buf()], tmp.path());
    load_from(&dirs, &registry, "toy")
}

fn registry_error(files: &[File<'_>], table: &str) -> String {
    match Registry::parse(&entry(files, table)) {
        Err(e @ RegistryError::Invalid { .. }) | Err(e @ RegistryError::Toml(_)) => e.to_string(),
        Ok(_) => panic!("accepted:\n{table}"),
    }
}

const DATA: &str = "Id,a,b,Class\n1,1.5,2,yes\n2,,3,no\n3,4,5,no\n4,6,,yes\n5,7,8,maybe\n";
const MASK: &str = "1,0\n0,1\n1,0\n0,1\n0,1\n";

#[test]
fn na_rows_are_dropped_with_their_mask_rows() {
    let files = [
        File("data", "t/data.csv", "csv", DATA),
        File("test_mask", "t/mask.csv", "csv", MASK),
    ];
    let table = "task = \"classification\"\nrows = [\"data\"]\nheader = true\n\
                 drop = [\"Id\"]\nna = \"drop_rows\"\ntest_mask = \"test_mask\"\n";
    let set = load_toy(&files, table).unwrap();
    assert_eq!(set.feature_names, ["a", "b"]);
    assert_eq!(
        set.x,
        Inputs::Dense(ndarray::array![[1.5, 2.0], [4.0, 5.0], [7.0, 8.0]])
    );
    // Sorted by bytes: maybe, no, yes.
    assert_eq!(
        set.y,
        Targets::Classes {
            labels: vec![2, 1, 0],
            names: vec!["maybe".into(), "no".into(), "yes".into()]
        }
    );
    assert_eq!(
        set.given,
        GivenSplits::Masks(ndarray::array![[true, false], [true, false], [false, true]])
    );

    // na = "error" (default) names the line and column and says what to set.
    let err = load_toy(&files, &table.replace("na = \"drop_rows\"\n", "")).unwrap_err();
    assert!(
        matches!(
            err,
            DatasetError::Parse {
                line: 3,
                column: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("drop_rows") && err.to_string().contains("`a`"),
        "{err}"
    );

    // An empty field in a dropped column is not an NA of the set.
    let with_gap = "Id,a,b,Class\n,1,2,yes\n2,3,4,no\n";
    let set = load_toy(
        &[File("data", "t/data.csv", "csv", with_gap)],
        "task = \"classification\"\nrows = [\"data\"]\nheader = true\ndrop = [\"Id\"]\n",
    )
    .unwrap();
    assert_eq!(set.n_rows(), 2);

    // A class outside `classes` is an error; `classes` fixes the order.
    let err = load_toy(&files, &format!("{table}classes = [\"no\", \"yes\"]\n")).unwrap_err();
    assert!(matches!(err, DatasetError::Table { .. }), "{err}");
    assert!(err.to_string().contains("`maybe`"), "{err}");
    let set = load_toy(
        &files,
        &format!("{table}classes = [\"yes\", \"no\", \"maybe\", \"never\"]\n"),
    )
    .unwrap();
    assert_eq!(set.y.class_counts(), Some(vec![1, 1, 1, 0]));
}

#[test]
fn train_test_files_concatenate_and_numbers_sort_numerically() {
    let train = "x,y\n1,10\n2,2\n3,10\n";
    let test = "x,y\n4,9\n";
    let files = [
        File("train", "t/train.csv", "csv", train),
        File("test", "t/test.csv", "csv", test),
    ];
    let set = load_toy(
        &files,
        "task = \"classification\"\nrows = [\"train\", \"test\"]\nheader = true\n",
    )
    .unwrap();
    assert_eq!(set.given, GivenSplits::TrainTest { n_train: 3 });
    // 2 < 9 < 10 numerically (by bytes "10" would come first).
    assert_eq!(
        set.y,
        Targets::Classes {
            labels: vec![2, 0, 2, 1],
            names: vec!["2".into(), "9".into(), "10".into()]
        }
    );
    let set = load_toy(
        &files,
        "task = \"regression\"\nrows = [\"train\", \"test\"]\nheader = true\ntarget = \"x\"\n",
    )
    .unwrap();
    assert_eq!(set.y, Targets::Real(ndarray::array![1.0, 2.0, 3.0, 4.0]));
    assert_eq!(set.feature_names, ["y"]);

    // Different headers are refused.
    let files = [
        File("train", "t/train.csv", "csv", train),
        File("test", "t/test.csv", "csv", "x,z\n4,9\n"),
    ];
    let err = load_toy(
        &files,
        "task = \"regression\"\nrows = [\"train\", \"test\"]\nheader = true\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("header differs"), "{err}");
}

#[test]
fn target_file_is_joined_by_row_order_with_an_id_check() {
    let exprs = "sample,g1,g2\ns1,1,2\ns2,3,4\ns3,5,6\n";
    let pheno = ",sample,BT\ns1,1,B2\ns2,2,T1\ns3,3,B\n";
    let files = [
        File("exprs", "g/exprs.csv", "csv", exprs),
        File("pheno", "g/pheno.csv", "csv", pheno),
    ];
    let table = "task = \"classification\"\nrows = [\"exprs\"]\nheader = true\n\
                 target_file = \"pheno\"\ntarget = \"BT\"\nlabels = \"first_char\"\n\
                 row_id = \"sample\"\ntarget_row_id = \"\"\n";
    let set = load_toy(&files, table).unwrap();
    assert_eq!(set.feature_names, ["g1", "g2"]);
    assert_eq!(
        set.y,
        Targets::Classes {
            labels: vec![0, 1, 0],
            names: vec!["B".into(), "T".into()]
        }
    );
    // The wrong id column (the running number) fails the join check.
    let err = load_toy(
        &files,
        &table.replace("target_row_id = \"\"", "target_row_id = \"sample\""),
    )
    .unwrap_err();
    assert!(matches!(err, DatasetError::Table { .. }), "{err}");
    assert!(
        err.to_string().contains("`s1`") && err.to_string().contains("`1`"),
        "{err}"
    );
    // A target file with a different number of rows.
    let short = [
        File("exprs", "g/exprs.csv", "csv", exprs),
        File("pheno", "g/pheno.csv", "csv", ",sample,BT\ns1,1,B2\n"),
    ];
    let err = load_toy(&short, table).unwrap_err();
    assert!(err.to_string().contains("joined by row order"), "{err}");
    // An unknown target column names the columns there are.
    let err = load_toy(&files, &table.replace("\"BT\"", "\"bt\"")).unwrap_err();
    assert!(
        err.to_string().contains("no column named `bt`") && err.to_string().contains("BT"),
        "{err}"
    );
}

#[test]
fn headerless_regression_with_masks_and_svmlight() {
    let files = [
        File("data", "u/data.csv", "csv", "1,2,3\n4,5,6\n"),
        File("test_mask", "u/mask.csv", "csv", "1\n0\n"),
    ];
    let set = load_toy(
        &files,
        "task = \"regression\"\nrows = [\"data\"]\nheader = false\ntest_mask = \"test_mask\"\n",
    )
    .unwrap();
    assert_eq!(set.feature_names, ["x1", "x2"]);
    assert_eq!(set.y, Targets::Real(ndarray::array![3.0, 6.0]));
    let bad_mask = [
        File("data", "u/data.csv", "csv", "1,2,3\n4,5,6\n"),
        File("test_mask", "u/mask.csv", "csv", "1\n"),
    ];
    let err = load_toy(
        &bad_mask,
        "task = \"regression\"\nrows = [\"data\"]\nheader = false\ntest_mask = \"test_mask\"\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("mask rows"), "{err}");

    let files = [
        File("train", "s/a.svm", "svmlight", "1.0 1:1 3:0.0\n-1 2:2\n"),
        File("test", "s/a.t.svm", "svmlight", "+1 1:3\n"),
    ];
    let table = "task = \"classification\"\nrows = [\"train\", \"test\"]\nn_features = 4\n\
                 labels = \"sign\"\nclasses = [\"-1\", \"+1\"]\n";
    let set = load_toy(&files, table).unwrap();
    assert_eq!(set.given, GivenSplits::TrainTest { n_train: 2 });
    assert_eq!(
        set.x.to_dense(),
        ndarray::array![
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 2.0, 0.0, 0.0],
            [3.0, 0.0, 0.0, 0.0]
        ]
    );
    assert_eq!(set.x.as_sparse().unwrap().nnz(), 3); // the explicit 3:0.0 is not stored
    assert_eq!(set.y.as_classes().unwrap().0, &[1, 0, 1]);
    let files = [
        File("train", "s/a.svm", "svmlight", "2 1:1\n"),
        File("test", "s/a.t.svm", "svmlight", "+1 1:3\n"),
    ];
    let err = load_toy(&files, table).unwrap_err();
    assert!(err.to_string().contains("neither -1 nor +1"), "{err}");
}

#[test]
fn registry_refuses_inconsistent_tables() {
    let csv = [File("data", "t/d.csv", "csv", "a,b\n1,2\n")];
    let two = [
        File("train", "t/a.csv", "csv", "a,b\n1,2\n"),
        File("test", "t/b.csv", "csv", "a,b\n1,2\n"),
        File("test_mask", "t/m.csv", "csv", "1\n"),
    ];
    let svm = [File("train", "t/a.svm", "svmlight", "1 1:1\n")];
    let base = "task = \"regression\"\nrows = [\"data\"]\nheader = true\n";
    for (files, table, needle) in [
        (&csv[..], format!("{base}colour = 1\n"), "unknown field"),
        (&csv[..], "task = \"regression\"\nrows = [\"data\"]\n".into(), "header"),
        (&csv[..], base.replace("[\"data\"]", "[\"nope\"]"), "role `nope`"),
        (&csv[..], base.replace("[\"data\"]", "[]"), "one or two"),
        (&csv[..], format!("{base}labels = \"text\"\n"), "regression"),
        (&csv[..], format!("{base}n_features = 3\n"), "n_features"),
        (
            &csv[..],
            base.replace("header = true", "header = false\ntarget = \"b\""),
            "header = true",
        ),
        (&csv[..], format!("{base}row_id = \"a\"\n"), "target_file"),
        (&csv[..], format!("{base}drop = [\"a\", \"a\"]\n"), "twice"),
        (&csv[..], format!("{base}target = \"b\"\ndrop = [\"b\"]\n"), "target"),
        (
            &two[..],
            "task = \"regression\"\nrows = [\"train\", \"test\"]\nheader = true\n\
             test_mask = \"test_mask\"\n"
                .into(),
            "single rows role",
        ),
        (
            &svm[..],
            "task = \"classification\"\nrows = [\"train\"]\nlabels = \"sign\"\n".into(),
            "n_features",
        ),
        (
            &svm[..],
            "task = \"classification\"\nrows = [\"train\"]\nn_features = 2\n".into(),
            "sign",
        ),
        (
            &svm[..],
            "task = \"regression\"\nrows = [\"train\"]\nn_features = 2\nheader = true\n".into(),
            "header",
        ),
        (
            &csv[..],
            "task = \"classification\"\nrows = [\"data\"]\nheader = true\nclasses = [\"a\", \"a\"]\n"
                .into(),
            "distinct",
        ),
    ] {
        let msg = registry_error(files, &table);
        assert!(msg.contains(needle), "`{needle}` not in: {msg}\n{table}");
    }
    // A dataset without a table is valid but cannot be loaded.
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &csv);
    let text = entry(&csv, base).replace(&format!("[dataset.table]\n{base}"), "");
    let registry = Registry::parse(&text).unwrap();
    let dirs = DataDirs::custom(vec![tmp.path().to_path_buf()], tmp.path());
    let err = load_from(&dirs, &registry, "toy").unwrap_err();
    assert!(matches!(err, DatasetError::NoTable { .. }), "{err}");
}

#[test]
fn every_registered_dataset_has_a_table() {
    for ds in Registry::embedded().unwrap().datasets() {
        assert!(ds.table.is_some(), "{} has no [dataset.table]", ds.name);
    }
}
