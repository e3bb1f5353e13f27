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
//!
//! A driver given a parameter it does not know exits with [`REFUSED_EXIT`]: the harness and the
//! driver disagree, a bug of the project and not a missing toolchain, so the cell fails
//! ([`Unavailable::refused`]) instead of being skipped. (A value the authors' code cannot run,
//! e.g. a learner it does not have, stays a skip: that upstream cannot run that cell.)

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

/// The exit status of a driver given a parameter it does not know (`sys.exit(3)` in every
/// `driver.py`).
pub const REFUSED_EXIT: i32 = 3;

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
    let finished =
        process::run(python, &args, &prepared.root, &env, timeout_seconds).map_err(|e| {
            let reason = format!("driver task {task}: {e}");
            if e.exit_status == Some(REFUSED_EXIT) {
                Unavailable::refused(&prepared.name, reason)
            } else {
                fail(reason)
            }
        })?;
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

/// The parameter names a kit's `driver.py` declares in `NAME = {...}` (a dict: its keys) or
/// `NAME = (...)` / `NAME = {...}` (a tuple or set of names), read from its text: for the tests
/// that check every parameter a kind passes against the names its driver knows.
#[cfg(test)]
pub(crate) fn driver_names(kit: &str, name: &str) -> Vec<String> {
    let path = format!("{}/upstream/{kit}/driver.py", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let start = text
        .find(&format!("\n{name} = "))
        .unwrap_or_else(|| panic!("{path}: no `{name} = `"));
    let body = &text[start + name.len() + 4..];
    // The quoted strings at the top level of the literal, each noted with whether a colon
    // follows it (a dict's key).
    let (mut depth, mut strings) = (0usize, Vec::new());
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            '#' => {
                // A comment to the end of its line.
                while chars.next_if(|&(_, c)| c != '\n').is_some() {}
            }
            '"' => {
                let end = body[i + 1..].find('"').expect("a closed string") + i + 1;
                while chars.next_if(|&(j, _)| j <= end).is_some() {}
                let key = body[end + 1..].trim_start().starts_with(':');
                if depth == 1 {
                    strings.push((body[i + 1..end].to_string(), key));
                }
            }
            _ => {}
        }
    }
    let keys: Vec<String> = strings
        .iter()
        .filter(|s| s.1)
        .map(|s| s.0.clone())
        .collect();
    if keys.is_empty() {
        strings.into_iter().map(|s| s.0).collect()
    } else {
        keys
    }
}

/// The keys of `params` (a cell's `params.json`) that none of the kit's declared `names` holds
/// ([`driver_names`]): what its driver would refuse.
#[cfg(test)]
pub(crate) fn unknown_to_driver(
    kit: &str,
    names: &[&str],
    params: &serde_json::Value,
) -> Vec<String> {
    let known: Vec<String> = names
        .iter()
        .flat_map(|name| driver_names(kit, name))
        .collect();
    params
        .as_object()
        .expect("params are an object")
        .keys()
        .filter(|k| !known.contains(k))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_names_reads_dict_keys_and_tuples() {
        let width = driver_names("mondrian_kernel", "WIDTH_PARAMS");
        assert!(width.contains(&"evaluations".to_string()), "{width:?}");
        assert!(width.contains(&"dense_below".to_string()), "{width:?}");
        // Not the nested dict's keys, nor the values.
        assert!(!width.contains(&"random_fourier".to_string()), "{width:?}");
        assert!(!width.contains(&"sgd".to_string()), "{width:?}");
        let ignored = driver_names("revrand", "IGNORED");
        assert!(ignored.contains(&"pwl_radii".to_string()), "{ignored:?}");
        let keys = driver_names("streamrak", "STREAMRAK_KEYS");
        assert!(keys.contains(&"delta0".to_string()), "{keys:?}");
        assert!(!keys.contains(&"monitor_conf".to_string()), "{keys:?}");
    }

    /// A prepared upstream whose "python" is /bin/sh and whose driver is `script`.
    fn fake(script: &str) -> (tempfile::TempDir, Prepared) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("src");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(dir.path().join("kit")).unwrap();
        std::fs::write(dir.path().join("kit/driver.py"), script).unwrap();
        let prepared = Prepared {
            name: "fake".into(),
            root,
            python: Some("/bin/sh".into()),
            scratch: dir.path().to_path_buf(),
        };
        (dir, prepared)
    }

    #[test]
    fn a_driver_that_refuses_a_parameter_fails_its_cell_and_a_crash_is_a_skip() {
        for (status, refused) in [(REFUSED_EXIT, true), (1, false)] {
            let (dir, prepared) = fake(&format!("echo 'no such key' >&2; exit {status}"));
            let e = run(&prepared, dir.path(), "t", &serde_json::json!({}), 1, 30.0).unwrap_err();
            assert_eq!(e.refused, refused, "exit {status}: {e}");
            assert!(e.to_string().contains("no such key"), "{e}");
        }
    }

    /// Every kit's `driver.py`, given a parameter it does not know, exits with
    /// [`REFUSED_EXIT`] before it reads its data (run by this machine's python3 with numpy,
    /// the drivers' only import outside the standard library at load time).
    #[test]
    fn every_driver_refuses_an_unknown_parameter_with_its_exit_status() {
        let python = std::process::Command::new("python3")
            .args(["-c", "import numpy"])
            .output();
        if !python.map(|o| o.status.success()).unwrap_or(false) {
            eprintln!("SKIPPED: no python3 with numpy on PATH to load the drivers");
            return;
        }
        let kits = concat!(env!("CARGO_MANIFEST_DIR"), "/upstream");
        let mut drivers = 0;
        for entry in std::fs::read_dir(kits).unwrap() {
            let driver = entry.unwrap().path().join("driver.py");
            if !driver.exists() {
                continue;
            }
            let text = std::fs::read_to_string(&driver).unwrap();
            // The task: the first of its --task choices, or the one every cell of it runs.
            let task = ["fastfood_regression", "kernel_error", "streamrak"]
                .into_iter()
                .find(|t| text.contains(&format!("\"{t}\"")))
                .unwrap_or_else(|| panic!("{}: which task?", driver.display()));
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(
                dir.path().join("params.json"),
                r#"{"no_such_parameter": 1}"#,
            )
            .unwrap();
            let path = |n: &str| dir.path().join(n).display().to_string();
            let out = std::process::Command::new("python3")
                .arg(&driver)
                .args(["--task", task, "--train", &path("train.csv"), "--test"])
                .args([path("test.csv"), "--params".into(), path("params.json")])
                .args(["--seed", "1", "--out", &path("out.json")])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(REFUSED_EXIT),
                "{}: {stderr}",
                driver.display()
            );
            assert!(stderr.contains("no_such_parameter"), "{stderr}");
            drivers += 1;
        }
        assert_eq!(drivers, 3, "the three Python kits");
    }

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
