//! svmlight / LIBSVM text format (optionally gzip, detected by magic bytes).
//!
//! One sample per line: `label idx:val idx:val ...` with 1-based feature indices. Labels are
//! any number (`-1`, `+1`, `-1.0`, `1.0`, ...); `qid:` tokens are ignored; `#` starts a
//! comment; blank lines and trailing spaces are accepted; indices may come in any order but
//! not twice in one row.
//!
//! [`read_svmlight_sparse`] is the reader: it returns a [`CsrMatrix`] whose rows hold their
//! entries in increasing column order. **Explicit zeros (`13:0.0`, `13:-0`) are dropped**:
//! they are parsed and checked like any entry (and count towards the inferred width), but not
//! stored, so `nnz` counts true non-zeros and a file with or without explicit zeros gives the
//! same matrix. [`read_svmlight`] is the dense view of the same parse.

use std::io::BufRead;
use std::path::Path;

use ndarray::{Array1, Array2};

use crate::error::DatasetError;
use crate::gz::open_maybe_gz;
use crate::sparse::CsrMatrix;

/// Reads an svmlight file into sparse `(x, y)` (explicit zeros dropped; see the module docs).
///
/// `n_features` fixes the number of columns of `x` (so a test file whose largest index is
/// smaller than the training file's gets the same width); an index above it is an error.
/// Without it the width is the largest index seen.
pub fn read_svmlight_sparse(
    path: &Path,
    n_features: Option<usize>,
) -> Result<(CsrMatrix, Array1<f64>), DatasetError> {
    parse_svmlight_sparse(open_maybe_gz(path)?, path, n_features)
}

/// Reads an svmlight file into dense `(x, y)`: [`read_svmlight_sparse`] then
/// [`CsrMatrix::to_dense`].
pub fn read_svmlight(
    path: &Path,
    n_features: Option<usize>,
) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
    parse_svmlight(open_maybe_gz(path)?, path, n_features)
}

/// Parses svmlight text from `reader` into dense `(x, y)`; `source` names it in error messages.
pub fn parse_svmlight(
    reader: impl BufRead,
    source: &Path,
    n_features: Option<usize>,
) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
    let (x, y) = parse_svmlight_sparse(reader, source, n_features)?;
    if x.n_rows().checked_mul(x.n_cols()).is_none() {
        return Err(DatasetError::Format {
            path: source.to_path_buf(),
            message: format!(
                "{} x {} dense matrix is too large; use read_svmlight_sparse",
                x.n_rows(),
                x.n_cols()
            ),
        });
    }
    Ok((x.to_dense(), y))
}

/// Parses svmlight text from `reader` into sparse `(x, y)`; `source` names it in error
/// messages.
pub fn parse_svmlight_sparse(
    mut reader: impl BufRead,
    source: &Path,
    n_features: Option<usize>,
) -> Result<(CsrMatrix, Array1<f64>), DatasetError> {
    let err = |line: usize, column: usize, message: String| DatasetError::Parse {
        path: source.to_path_buf(),
        line,
        column,
        message,
    };
    // Column indices are stored as u32.
    let max_allowed = u32::MAX as usize + 1;
    if let Some(n) = n_features {
        if n > max_allowed {
            return Err(DatasetError::Format {
                path: source.to_path_buf(),
                message: format!("n_features = {n} exceeds the supported {max_allowed}"),
            });
        }
    }
    let mut labels = Vec::new();
    let mut indptr = vec![0usize];
    let mut indices: Vec<u32> = Vec::new();
    let mut values: Vec<f64> = Vec::new();
    let mut max_index = 0usize;
    let mut buf = String::new();
    let mut line_no = 0usize;
    let mut seen: Vec<usize> = Vec::new();
    let mut row: Vec<(u32, f64)> = Vec::new();
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
        labels.push(label);
        seen.clear();
        row.clear();
        let mut row_max = 0usize;
        let mut sorted = true;
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
            } else if idx > max_allowed {
                return Err(err(
                    line_no,
                    column,
                    format!("feature index {idx} exceeds the supported {max_allowed}"),
                ));
            }
            // Indices are usually increasing; only a step back needs the full duplicate scan.
            if idx <= row_max {
                if seen.contains(&idx) {
                    return Err(err(
                        line_no,
                        column,
                        format!("feature index {idx} appears twice in one row"),
                    ));
                }
                sorted = false;
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
            if val != 0.0 {
                // idx <= max_allowed = u32::MAX + 1, so idx - 1 fits.
                row.push(((idx - 1) as u32, val));
            }
        }
        if !sorted {
            row.sort_unstable_by_key(|&(c, _)| c);
        }
        for &(c, v) in &row {
            indices.push(c);
            values.push(v);
        }
        indptr.push(indices.len());
    }
    let width = n_features.unwrap_or(max_index);
    let x = CsrMatrix::from_parts(width, indptr, indices, values).map_err(|e| {
        DatasetError::Format {
            path: source.to_path_buf(),
            message: e.to_string(),
        }
    })?;
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

    #[test]
    fn sparse_reader_drops_explicit_zeros_and_sorts_rows() {
        let text = "-1 4:2 1:0.5 3:0.0\n+1 2:-0\n1 5:1\n";
        let (x, y) = parse_svmlight_sparse(
            Cursor::new(text.as_bytes().to_vec()),
            Path::new("t.svm"),
            None,
        )
        .unwrap();
        assert_eq!(y, ndarray::array![-1.0, 1.0, 1.0]);
        assert_eq!((x.n_rows(), x.n_cols(), x.nnz()), (3, 5, 3));
        assert_eq!(x.row(0), (&[0u32, 3][..], &[0.5, 2.0][..]));
        assert_eq!(x.row(1), (&[][..], &[][..]));
        // The dense reader is the same parse.
        let (d, yd) = parse(text, None).unwrap();
        assert_eq!(d, x.to_dense());
        assert_eq!(yd, y);
        // Explicit zeros still count towards the inferred width.
        let (x, _) = parse_svmlight_sparse(
            Cursor::new(b"1 1:1 7:0\n".to_vec()),
            Path::new("t.svm"),
            None,
        )
        .unwrap();
        assert_eq!((x.n_cols(), x.nnz()), (7, 1));
    }
}
