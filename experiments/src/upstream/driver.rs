//! The one calling convention of the Python upstreams: the project's own `driver.py` in the
//! upstream's kit, run by the upstream's virtual environment from its extracted root:
//!
//! ```text
//! python driver.py --task T --train train.csv --test test.csv --params params.json \
//!                  --seed S --out out.json
//! ```
//!
//! `train.csv` and `test.csv` hold the cell's rows in the split's order (header
//! `x0,...,x{d-1},y`, shortest round-trip decimals); `out.json` is
//! `{"rows": [{column: value}], "fit_seconds": f, "predict_seconds": f}`.

use std::io::Write;
use std::path::Path;

use super::process::{self, Finished};
use super::{Prepared, Unavailable};

/// Writes rows of inputs `x` (row-major, `d` columns) with targets `y` as the drivers' CSV.
pub fn write_csv(path: &Path, x: &[f64], d: usize, y: &[f64]) -> Result<(), String> {
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let mut header: Vec<String> = (0..d).map(|j| format!("x{j}")).collect();
    header.push("y".into());
    let mut text = header.join(",");
    text.push('\n');
    for (i, target) in y.iter().enumerate() {
        for j in 0..d {
            text.push_str(&format!("{:?},", x[i * d + j]));
        }
        text.push_str(&format!("{target:?}\n"));
        if text.len() > 1 << 16 {
            out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
            text.clear();
        }
    }
    out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())
}

/// Writes a split as `train.csv` and `test.csv` in `dir`: inputs row-major with `d` columns.
pub fn write_split(
    dir: &Path,
    d: usize,
    train: (&[f64], &[f64]),
    test: (&[f64], &[f64]),
) -> Result<(), String> {
    write_csv(&dir.join("train.csv"), train.0, d, train.1)?;
    write_csv(&dir.join("test.csv"), test.0, d, test.1)
}

/// What a driver returned, with what its process cost.
#[derive(Debug, Clone)]
pub struct DriverOutput {
    pub rows: Vec<serde_json::Map<String, serde_json::Value>>,
    pub fit_seconds: f64,
    pub predict_seconds: f64,
    pub process: Finished,
}

/// Runs `driver.py --task task` of a prepared Python upstream in `cell_dir`, which holds
/// `train.csv` and `test.csv`; `params` are written to `params.json`. Any failure (a crash, a
/// timeout, output that does not parse) is [`Unavailable`] with the reason.
pub fn run(
    prepared: &Prepared,
    cell_dir: &Path,
    task: &str,
    params: &serde_json::Value,
    seed: u64,
    timeout_seconds: f64,
) -> Result<DriverOutput, Unavailable> {
    let fail = |reason: String| Unavailable::new(&prepared.name, reason);
    let python = prepared
        .python
        .as_ref()
        .ok_or_else(|| fail("not a Python upstream".into()))?;
    let driver = prepared
        .root
        .parent()
        .unwrap_or(&prepared.root)
        .join("kit/driver.py");
    std::fs::write(cell_dir.join("params.json"), params.to_string())
        .map_err(|e| fail(format!("cannot write params.json: {e}")))?;
    let path = |name: &str| cell_dir.join(name).display().to_string();
    let args = vec![
        driver.display().to_string(),
        "--task".into(),
        task.into(),
        "--train".into(),
        path("train.csv"),
        "--test".into(),
        path("test.csv"),
        "--params".into(),
        path("params.json"),
        "--seed".into(),
        seed.to_string(),
        "--out".into(),
        path("out.json"),
    ];
    let env = vec![
        ("PYTHONPATH".into(), prepared.root.display().to_string()),
        ("MPLBACKEND".into(), "Agg".into()),
        // One thread for BLAS, as the project's cells: the ratio compares like with like.
        ("OMP_NUM_THREADS".into(), "1".into()),
        ("OPENBLAS_NUM_THREADS".into(), "1".into()),
        ("MKL_NUM_THREADS".into(), "1".into()),
        ("PYTHONHASHSEED".into(), "0".into()),
    ];
    let finished = process::run(python, &args, &prepared.root, &env, timeout_seconds)
        .map_err(|e| fail(format!("driver task {task}: {e}")))?;
    let out = std::fs::read_to_string(cell_dir.join("out.json"))
        .map_err(|e| fail(format!("driver task {task} wrote no out.json: {e}")))?;
    parse(&out, finished).map_err(|e| fail(format!("driver task {task}: out.json: {e}")))
}

/// Parses a driver's `out.json`.
pub fn parse(text: &str, process: Finished) -> Result<DriverOutput, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let rows = value
        .get("rows")
        .and_then(|r| r.as_array())
        .ok_or("no \"rows\" array")?
        .iter()
        .map(|r| r.as_object().cloned().ok_or("a row is not an object"))
        .collect::<Result<Vec<_>, _>>()?;
    let seconds = |key: &str| value.get(key).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
    Ok(DriverOutput {
        rows,
        fit_seconds: seconds("fit_seconds"),
        predict_seconds: seconds("predict_seconds"),
        process,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_output_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        write_csv(&path, &[0.1, 2.0, -3.5, 1e-300], 2, &[1.0, -1.0]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "x0,x1,y\n0.1,2.0,1.0\n-3.5,1e-300,-1.0\n"
        );
        let finished = Finished {
            stdout: String::new(),
            stderr: String::new(),
            cpu_seconds: 1.0,
            wall_seconds: 1.0,
            max_rss_mb: 1.0,
        };
        let out = parse(
            r#"{"rows": [{"level": 0, "mse": 0.5}], "fit_seconds": 2.5, "predict_seconds": 0.1}"#,
            finished.clone(),
        )
        .unwrap();
        assert_eq!(out.rows.len(), 1);
        assert_eq!(out.fit_seconds, 2.5);
        assert!(parse(r#"{"rows": 3}"#, finished).is_err());
    }
}
