//! The result tables as other tools read them: through the Apache Parquet reader (not polars),
//! every column has a plain Parquet type (UTF8 strings, INT64, DOUBLE, BOOLEAN), the file
//! embeds no Arrow schema (polars' declares strings as `string_view`, which pyarrow 14 cannot
//! read), no column is of the Null type, and two runs of one experiment have the same schema,
//! so they concatenate (each row naming its run and profile), and an experiment's folder holds
//! its tables only.

mod common;

use std::path::Path;
use std::process::Command;

use parquet::basic::{ConvertedType, Type as Physical};
use parquet::file::reader::{FileReader, SerializedFileReader};

/// (column, physical type, converted type) of a table, and its row count.
fn schema(path: &Path) -> (Vec<(String, Physical, ConvertedType)>, i64) {
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let meta = reader.metadata().file_metadata();
    // The embedded Arrow schema is the table's schema at Arrow's oldest compatibility level:
    // strings as `large_string`, never a view type (a reader older than the view types rejects
    // `string_view`: pyarrow 14's "Unrecognized type: 24"), and no Null type. (polars' own
    // reader maps strings back to views, so the stored key is compared, not re-read.)
    let frame = experiments::table::read_parquet(path).unwrap();
    let oldest = {
        use polars::prelude::*;
        frame.schema().to_arrow(CompatLevel::oldest())
    };
    for field in oldest.iter_values() {
        let name = format!("{:?}", field.dtype);
        assert!(
            !name.contains("View") && name != "Null",
            "{}: column {} is Arrow {name}",
            path.display(),
            field.name
        );
    }
    let expected = polars_parquet::arrow::write::schema_to_metadata_key(&oldest).value;
    let stored = meta
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == "ARROW:schema"))
        .and_then(|k| k.value.clone());
    assert_eq!(stored, expected, "{}: another Arrow schema", path.display());
    let columns = meta
        .schema_descr()
        .columns()
        .iter()
        .map(|c| (c.name().to_string(), c.physical_type(), c.converted_type()))
        .collect();
    (columns, meta.num_rows())
}

#[test]
fn tables_have_plain_parquet_types_and_two_runs_concatenate() {
    let dir = common::temp_root();
    let root = dir.path();
    let mut tables = Vec::new();
    for set in ["seed=1", "seed=2"] {
        let o = Command::new(env!("CARGO_BIN_EXE_repro"))
            .arg("--root")
            .arg(root)
            .args([
                "run",
                common::FIG5,
                "--profile",
                "quick",
                "--no-plot",
                "--set",
                set,
            ])
            .output()
            .unwrap();
        tables.push(common::table_written(root, &o));
    }
    let (first, n1) = schema(&tables[0]);
    let (second, n2) = schema(&tables[1]);
    assert!(n1 > 0 && n2 > 0);
    for (name, physical, converted) in &first {
        let plain = matches!(
            (physical, converted),
            (Physical::BYTE_ARRAY, ConvertedType::UTF8)
                | (Physical::INT64, ConvertedType::NONE)
                | (Physical::DOUBLE, ConvertedType::NONE)
                | (Physical::BOOLEAN, ConvertedType::NONE)
        );
        assert!(plain, "column {name}: {physical:?} / {converted:?}");
    }
    // Each table names its run and profile in every row.
    for path in &tables {
        let rows = experiments::table::from_frame(&experiments::table::read_parquet(path).unwrap())
            .unwrap();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        assert!(rows.iter().all(|r| r["run"].to_string() == stem));
        assert!(rows.iter().all(|r| r["profile"].to_string() == "quick"));
    }
    // Same names and types in both runs: the tables concatenate.
    assert_eq!(first, second);
    // The experiment's folder holds the tables and nothing else (manifests, locks and the cell
    // cache live in results/_runs/), so a reader takes the folder as one dataset.
    let folder = tables[0].parent().unwrap();
    let mut entries: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    entries.sort();
    let mut names: Vec<String> = tables
        .iter()
        .map(|t| t.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(entries, names, "{}", folder.display());
    // Every row reads back through the row API of the other reader.
    for (path, n) in [(&tables[0], n1), (&tables[1], n2)] {
        let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
        let rows = reader.get_row_iter(None).unwrap().count() as i64;
        assert_eq!(rows, n);
    }
}
