//! svmlight / LIBSVM text format (optionally gzip, detected by magic bytes).
//!
//! One sample per line: `label idx:val idx:val ...` with 1-based feature indices. Labels are
//! any number (`-1`, `+1`, `-1.0`, `1.0`, ...); `qid:` tokens are ignored; `#` starts a
//! comment; explicit zeros (`13:0.0`), blank lines and trailing spaces are accepted. The result
//! is dense (the harness's svmlight sets have at most 123 features).

use std::io::BufRead;
use std::path::Path;

use ndarray::{Array1, Array2};

use crate::error::DatasetError;
use crate::gz::open_maybe_gz;

/// Reads an svmlight file into dense `(x, y)`.
///
/// `n_features` fixes the width of `x` (so a test file whose largest index is smaller than the
/// training file's gets the same width); an index above it is an error. Without it the width
/// is the largest index seen.
pub fn read_svmlight(
    path: &Path,
    n_features: Option<usize>,
) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
    parse_svmlight(open_maybe_gz(path)?, path, n_features)
}

/// Parses svmlight text from `reader`; `source` names it in error messages.
pub fn parse_svmlight(
    mut reader: impl BufRead,
    source: &Path,
    n_features: Option<usize>,
) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
    let err = |line: usize, column: usize, message: String| DatasetError::Parse {
        path: source.to_path_buf(),
        line,
        column,
        message,
    };
    let mut labels = Vec::new();
    // (row, 0-based column, value)
    let mut entries: Vec<(usize, usize, f64)> = Vec::new();
    let mut max_index = 0usize;
    let mut buf = String::new();
    let mut line_no = 0usize;
    let mut seen: Vec<usize> = Vec::new();
    loop {
        buf.clear();
        let n = reader.read_line(&mut buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                err(line_no + 1, 1, "not valid UTF-8".into())
            } else {
                DatasetError::io(source, e)
            }
        })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let content = buf.split('#').next().unwrap_or("");
        let mut tokens = content.split_ascii_whitespace();
        let Some(label) = tokens.next() else {
            continue;
        };
        let label: f64 = label
            .parse()
            .map_err(|_| err(line_no, 1, format!("label `{label}` is not a number")))?;
        let row = labels.len();
        labels.push(label);
        seen.clear();
        let mut row_max = 0usize;
        for (k, token) in tokens.enumerate() {
            let column = k + 2;
            if token.starts_with("qid:") {
                continue;
            }
            let Some((idx, val)) = token.split_once(':') else {
                return Err(err(
                    line_no,
                    column,
                    format!("expected `index:value`, found `{token}`"),
                ));
            };
            let idx: usize = idx.parse().map_err(|_| {
                err(
                    line_no,
                    column,
                    format!("feature index `{idx}` is not a positive integer"),
                )
            })?;
            if idx == 0 {
                return Err(err(
                    line_no,
                    column,
                    "feature index 0: svmlight indices are 1-based".into(),
                ));
            }
            if let Some(n) = n_features {
                if idx > n {
                    return Err(err(
                        line_no,
                        column,
                        format!("feature index {idx} exceeds n_features = {n}; pass a larger n_features"),
                    ));
                }
            }
            // Indices are usually increasing; only a step back needs the full duplicate scan.
            if idx <= row_max && seen.contains(&idx) {
                return Err(err(
                    line_no,
                    column,
                    format!("feature index {idx} appears twice in one row"),
                ));
            }
            seen.push(idx);
            row_max = row_max.max(idx);
            let val: f64 = val.parse().map_err(|_| {
                err(
                    line_no,
                    column,
                    format!("value `{val}` of feature {idx} is not a number"),
                )
            })?;
            max_index = max_index.max(idx);
            entries.push((row, idx - 1, val));
        }
    }
    let width = n_features.unwrap_or(max_index);
    let rows = labels.len();
    let too_big = || DatasetError::Format {
        path: source.to_path_buf(),
        message: format!("{rows} x {width} dense matrix is too large"),
    };
    rows.checked_mul(width).ok_or_else(too_big)?;
    let mut x = Array2::<f64>::zeros((rows, width));
    for (r, c, v) in entries {
        x[[r, c]] = v;
    }
    Ok((x, Array1::from(labels)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn parse(text: &str, n: Option<usize>) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
        parse_svmlight(Cursor::new(text.as_bytes().to_vec()), Path::new("t.svm"), n)
    }

    #[test]
    fn hand_written_file() {
        let text = "-1.0 1:0.5 3:0.0 4:-2   \n\
                    1.0 2:1 qid:7 4:1e-1 # comment\n\
                    \n\
                    +1 \n\
                    -1 3:0.0\n";
        let (x, y) = parse(text, None).unwrap();
        assert_eq!(y, ndarray::array![-1.0, 1.0, 1.0, -1.0]);
        assert_eq!(
            x,
            ndarray::array![
                [0.5, 0.0, 0.0, -2.0],
                [0.0, 1.0, 0.0, 0.1],
                [0.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 0.0]
            ]
        );
        let (x, _) = parse(text, Some(6)).unwrap();
        assert_eq!(x.dim(), (4, 6));
    }

    #[test]
    fn errors_name_line_and_token() {
        let e = parse("1 1:1\n1 0:1\n", None).unwrap_err();
        assert!(
            matches!(
                e,
                DatasetError::Parse {
                    line: 2,
                    column: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("1-based"), "{e}");
        let e = parse("x 1:1\n", None).unwrap_err();
        assert!(
            matches!(
                e,
                DatasetError::Parse {
                    line: 1,
                    column: 1,
                    ..
                }
            ),
            "{e}"
        );
        let e = parse("1 1:1 2:abc\n", None).unwrap_err();
        assert!(matches!(e, DatasetError::Parse { column: 3, .. }), "{e}");
        let e = parse("1 5:1\n", Some(4)).unwrap_err();
        assert!(e.to_string().contains("n_features = 4"), "{e}");
        let e = parse("1 3:1 1:1 3:3\n", None).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let e = parse("1 2\n", None).unwrap_err();
        assert!(e.to_string().contains("index:value"), "{e}");
    }
}
