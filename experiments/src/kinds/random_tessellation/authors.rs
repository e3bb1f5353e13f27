//! The authors' tess19 R script (upstream `tess19`) on one split: the methods `authors_urtf`,
//! `authors_mrtf`, `authors_wurtf` and `authors_wmrtf`.
//!
//! The split's preprocessed rows (the same rows the project's forests see) are written in
//! tess19's input format: one space between fields, header `V1 .. Vd Levels`, labels 1..K,
//! training rows in split order then the test rows with the label `NaN` (tess19 is
//! transductive: the test rows are in its cells and its min-max scaling, which also makes any
//! affine scaling done before it irrelevant). A column constant over training and test rows is
//! dropped (tess19 divides 0 by 0 on it). The weighted forests read one weight per kept column
//! (the project's prior weights; tess19 normalises them). One run per method: `Rscript tess19
//! [--Mondrian] [--weights weights.txt] --ntrees T --particles M --cuts L --tau TAU --alpha A
//! --seed S input.txt output.txt`; `output.txt` holds `NaN` for training rows and the predicted
//! label of each test row.

use std::fmt::Write as _;
use std::path::Path;

use ndarray::{ArrayView2, Axis};

use crate::upstream::{self, process, toolchain, Unavailable};

/// The upstream's name in the registry.
pub const UPSTREAM: &str = "tess19";

/// One tess19 run's settings.
pub struct Tess19 {
    pub mondrian: bool,
    /// One weight per input column for the weighted forests.
    pub weights: Option<Vec<f64>>,
    pub trees: usize,
    pub particles: usize,
    pub max_cuts: usize,
    pub budget: Option<f64>,
    pub alpha: f64,
}

/// What a run predicted and cost.
pub struct Run {
    pub predictions: Vec<u32>,
    /// Input columns tess19 saw (constant columns dropped).
    pub n_inputs: usize,
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
}

/// The columns that are not constant over the training and test rows together.
fn varying(train: ArrayView2<f64>, test: ArrayView2<f64>) -> Vec<usize> {
    (0..train.ncols())
        .filter(|&j| {
            let mut values = train.column(j).into_iter().chain(test.column(j));
            let first = values.next().copied();
            values.any(|v| Some(*v) != first)
        })
        .collect()
}

/// tess19's input file: training rows (labels 1..K), then test rows (label NaN).
fn input_file(
    train: ArrayView2<f64>,
    labels: &[u32],
    test: ArrayView2<f64>,
    columns: &[usize],
) -> String {
    let mut text = String::new();
    for k in 1..=columns.len() {
        let _ = write!(text, "V{k} ");
    }
    text.push_str("Levels\n");
    for (rows, labels) in [(train, Some(labels)), (test, None)] {
        for (i, row) in rows.axis_iter(Axis(0)).enumerate() {
            for &j in columns {
                let _ = write!(text, "{:?} ", row[j]);
            }
            match labels {
                Some(l) => {
                    let _ = writeln!(text, "{}", l[i] + 1);
                }
                None => text.push_str("NaN\n"),
            }
        }
    }
    text
}

/// The test rows' predictions (class indices) from tess19's output file.
fn predictions(
    output: &str,
    n_train: usize,
    n_test: usize,
    n_classes: usize,
) -> Result<Vec<u32>, String> {
    let lines: Vec<&str> = output.lines().skip(1).collect();
    if lines.len() != n_train + n_test {
        return Err(format!(
            "output.txt has {} rows, not {}",
            lines.len(),
            n_train + n_test
        ));
    }
    lines[n_train..]
        .iter()
        .map(|l| {
            let v: f64 = l
                .trim()
                .parse()
                .map_err(|_| format!("output.txt: {l:?} is not a label"))?;
            let k = v.round();
            if !(1.0..=n_classes as f64).contains(&k) {
                return Err(format!("output.txt: label {l} is not in 1..={n_classes}"));
            }
            Ok(k as u32 - 1)
        })
        .collect()
}

/// Runs tess19 on one split's rows in a scratch folder named `cell`.
pub fn fit_predict(
    train: ArrayView2<f64>,
    labels: &[u32],
    n_classes: usize,
    test: ArrayView2<f64>,
    settings: &Tess19,
    seed: u64,
    cell: &str,
) -> Result<Run, Unavailable> {
    let prepared = upstream::prepare(UPSTREAM)?;
    let dir = toolchain::cell_folder(&prepared, cell)?;
    let fail = |reason: String| Unavailable::new(UPSTREAM, reason);
    let columns = varying(train, test);
    if columns.is_empty() {
        return Err(fail("every input column is constant".into()));
    }
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| fail(format!("cannot write {name}: {e}")))
    };
    write("input.txt", &input_file(train, labels, test, &columns))?;
    let mut args = vec![prepared.root.join("tess19").display().to_string()];
    if settings.mondrian {
        args.push("--Mondrian".into());
    }
    if let Some(w) = &settings.weights {
        let kept: String = columns.iter().map(|&j| format!("{}\n", w[j])).collect();
        write("weights.txt", &kept)?;
        args.extend(["--weights".into(), "weights.txt".into()]);
    }
    let tau = settings
        .budget
        .map_or("Inf".to_string(), |b| format!("{b:?}"));
    args.extend([
        "--ntrees".into(),
        settings.trees.to_string(),
        "--particles".into(),
        settings.particles.to_string(),
        "--cuts".into(),
        settings.max_cuts.to_string(),
        "--tau".into(),
        tau,
        "--alpha".into(),
        format!("{:?}", settings.alpha),
        // R's set.seed takes a 31-bit integer.
        "--seed".into(),
        (seed % 2_147_483_647).to_string(),
        "input.txt".into(),
        "output.txt".into(),
    ]);
    let timeout = upstream::settings().timeout_seconds;
    let done = process::run(Path::new("Rscript"), &args, &dir, &[], timeout)
        .map_err(|e| fail(e.message))?;
    let output = std::fs::read_to_string(dir.join("output.txt"))
        .map_err(|e| fail(format!("tess19 wrote no output.txt: {e}")))?;
    let predictions =
        predictions(&output, train.nrows(), test.nrows(), n_classes).map_err(&fail)?;
    Ok(Run {
        predictions,
        n_inputs: columns.len(),
        cpu_seconds: done.cpu_seconds,
        wall_seconds: done.wall_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn the_input_file_is_tess19s_format_without_constant_columns() {
        let train = array![[0.5, 1.0, 2.0], [1.5, 1.0, -3.0]];
        let test = array![[2.5, 1.0, 1e-7]];
        let columns = varying(train.view(), test.view());
        assert_eq!(columns, vec![0, 2]);
        assert_eq!(
            input_file(train.view(), &[0, 1], test.view(), &columns),
            "V1 V2 Levels\n0.5 2.0 1\n1.5 -3.0 2\n2.5 1e-7 NaN\n"
        );
    }

    #[test]
    fn predictions_are_read_for_the_test_rows_only() {
        let out = "Level\nNaN\nNaN\n2\n1\n";
        assert_eq!(predictions(out, 2, 2, 2).unwrap(), vec![1, 0]);
        assert!(predictions(out, 2, 3, 2).unwrap_err().contains("rows"));
        assert!(predictions("Level\nNaN\n3\n", 1, 1, 2)
            .unwrap_err()
            .contains("not in 1..=2"));
    }
}
