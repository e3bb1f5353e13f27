//! CSV reader for numeric tables (optionally gzip, detected by magic bytes).
//!
//! Fields are separated by a one-byte delimiter (`,` by default); a field may be quoted with
//! `"` (a doubled `""` inside is a literal quote; quoted line breaks are not supported). Leading
//! and trailing spaces around a field are ignored, `\r\n` line ends and a UTF-8 BOM are
//! accepted, and blank lines are skipped.

use std::borrow::Cow;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use ndarray::{Array1, Array2, Axis};

use crate::error::DatasetError;
use crate::gz::open_maybe_gz;

/// How to read a CSV file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvOptions {
    /// The first (non-blank) line holds column names.
    pub header: bool,
    /// Field separator (default `b','`).
    pub delimiter: u8,
    /// Read empty fields as `NaN` instead of failing.
    pub empty_as_nan: bool,
    /// The first column holds row names (e.g. sample ids), kept as text, not parsed.
    pub row_names: bool,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            header: false,
            delimiter: b',',
            empty_as_nan: false,
            row_names: false,
        }
    }
}

impl CsvOptions {
    /// Default options with `header` set.
    pub fn with_header(header: bool) -> Self {
        CsvOptions {
            header,
            ..CsvOptions::default()
        }
    }
}

/// A numeric table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names, when the file has a header (without the row-name column's name).
    pub header: Option<Vec<String>>,
    /// Row names, when [`CsvOptions::row_names`] is set.
    pub row_names: Option<Vec<String>>,
    /// The values, rows x columns.
    pub values: Array2<f64>,
}

impl Table {
    /// Index of the column called `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.header.as_ref()?.iter().position(|h| h == name)
    }

    /// Splits into inputs (all columns but the last) and target (the last column).
    pub fn into_xy(self, source: &Path) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
        let cols = self.values.ncols();
        if cols < 2 {
            return Err(DatasetError::Format {
                path: source.to_path_buf(),
                message: format!(
                    "need at least 2 columns (inputs then target), found {cols}; \
                     check the delimiter and header options"
                ),
            });
        }
        let y = self.values.column(cols - 1).to_owned();
        let mut x = self.values;
        x.remove_index(Axis(1), cols - 1);
        Ok((x, y))
    }
}

/// A CSV file as text fields (for tables with string columns, e.g. class labels).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextTable {
    /// Column names, when the file has a header.
    pub header: Option<Vec<String>>,
    /// The rows, each with the same number of fields.
    pub rows: Vec<Vec<String>>,
}

/// Reads a numeric CSV file (gzip or not).
pub fn read_csv(path: &Path, opts: &CsvOptions) -> Result<Table, DatasetError> {
    parse_csv(open_maybe_gz(path)?, path, opts)
}

/// Reads a CSV file (gzip or not) with a header line when `header`, and splits it into inputs
/// `x` (every column but the last) and target `y` (the last column).
pub fn load_xy(path: &Path, header: bool) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
    read_csv(path, &CsvOptions::with_header(header))?.into_xy(path)
}

/// Reads a CSV file (gzip or not) as text fields; `row_names` and `empty_as_nan` are ignored.
pub fn read_csv_text(path: &Path, opts: &CsvOptions) -> Result<TextTable, DatasetError> {
    let mut header = None;
    let mut rows = Vec::new();
    for_each_record(open_maybe_gz(path)?, path, opts, |_, fields| {
        let fields: Vec<String> = fields.into_iter().map(Cow::into_owned).collect();
        if opts.header && header.is_none() {
            header = Some(fields);
        } else {
            rows.push(fields);
        }
        Ok(())
    })?;
    Ok(TextTable { header, rows })
}

/// Parses numeric CSV from `reader`; `source` names it in error messages.
pub fn parse_csv(
    reader: impl BufRead,
    source: &Path,
    opts: &CsvOptions,
) -> Result<Table, DatasetError> {
    let mut header: Option<Vec<String>> = None;
    let mut row_names = Vec::new();
    let mut values = Vec::new();
    let mut n_rows = 0usize;
    let mut n_cols: Option<usize> = None;
    let skip = usize::from(opts.row_names);
    for_each_record(reader, source, opts, |line, fields| {
        if opts.header && header.is_none() {
            header = Some(fields.iter().skip(skip).map(|f| f.to_string()).collect());
            return Ok(());
        }
        n_cols.get_or_insert(fields.len().saturating_sub(skip));
        if opts.row_names {
            row_names.push(fields.first().map(|f| f.to_string()).unwrap_or_default());
        }
        for (i, field) in fields.iter().enumerate().skip(skip) {
            let value = if field.is_empty() {
                if opts.empty_as_nan {
                    f64::NAN
                } else {
                    return Err(field_error(
                        source,
                        line,
                        i,
                        &header,
                        skip,
                        "empty field (pass empty_as_nan to read it as NaN)".into(),
                    ));
                }
            } else {
                field.parse::<f64>().map_err(|_| {
                    field_error(
                        source,
                        line,
                        i,
                        &header,
                        skip,
                        format!("cannot parse `{field}` as a number"),
                    )
                })?
            };
            values.push(value);
        }
        n_rows += 1;
        Ok(())
    })?;
    let n_cols = n_cols.unwrap_or_else(|| header.as_ref().map_or(0, Vec::len));
    let values =
        Array2::from_shape_vec((n_rows, n_cols), values).map_err(|e| DatasetError::Format {
            path: source.to_path_buf(),
            message: e.to_string(),
        })?;
    Ok(Table {
        header,
        row_names: opts.row_names.then_some(row_names),
        values,
    })
}

fn field_error(
    source: &Path,
    line: usize,
    index: usize,
    header: &Option<Vec<String>>,
    skip: usize,
    message: String,
) -> DatasetError {
    let name = header
        .as_ref()
        .and_then(|h| h.get(index.wrapping_sub(skip)))
        .map(|n| format!(" (column `{n}`)"))
        .unwrap_or_default();
    DatasetError::Parse {
        path: source.to_path_buf(),
        line,
        column: index + 1,
        message: format!("{message}{name}"),
    }
}

/// Calls `f(line_number, fields)` for every non-blank line; checks that every line has as many
/// fields as the first.
pub(crate) fn for_each_record<R: BufRead>(
    mut reader: R,
    source: &Path,
    opts: &CsvOptions,
    mut f: impl FnMut(usize, Vec<Cow<'_, str>>) -> Result<(), DatasetError>,
) -> Result<(), DatasetError> {
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    let mut width: Option<usize> = None;
    let parse_err = |line: usize, column: usize, message: String| DatasetError::Parse {
        path: PathBuf::from(source),
        line,
        column,
        message,
    };
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| DatasetError::io(source, e))?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        let mut bytes = buf.as_slice();
        if line_no == 1 {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        while let [rest @ .., b'\n' | b'\r'] = bytes {
            bytes = rest;
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            parse_err(
                line_no,
                1,
                format!("not valid UTF-8 at byte {}", e.valid_up_to()),
            )
        })?;
        if text.trim().is_empty() {
            continue;
        }
        let fields = split_record(text, opts.delimiter)
            .map_err(|(col, msg)| parse_err(line_no, col, msg))?;
        match width {
            None => width = Some(fields.len()),
            Some(w) if w != fields.len() => {
                return Err(parse_err(
                    line_no,
                    fields.len().min(w) + 1,
                    format!(
                        "ragged row: {} fields where the first line has {w}",
                        fields.len()
                    ),
                ))
            }
            Some(_) => {}
        }
        f(line_no, fields)?;
    }
}

/// Splits one line into trimmed fields; `Err((column, message))` on a malformed quote.
fn split_record(line: &str, delimiter: u8) -> Result<Vec<Cow<'_, str>>, (usize, String)> {
    let delim = delimiter as char;
    if !line.contains('"') {
        return Ok(line.split(delim).map(|f| Cow::Borrowed(f.trim())).collect());
    }
    let mut fields = Vec::new();
    let mut rest = line;
    loop {
        let column = fields.len() + 1;
        let trimmed = rest.trim_start();
        if let Some(quoted) = trimmed.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                if c == '"' {
                    if quoted[i + 1..].starts_with('"') {
                        value.push('"');
                        chars.next();
                    } else {
                        end = Some(i + 1);
                        break;
                    }
                } else {
                    value.push(c);
                }
            }
            let end = end.ok_or((
                column,
                "unterminated quoted field (quoted line breaks are not supported)".to_string(),
            ))?;
            let after = quoted[end..].trim_start();
            fields.push(Cow::Owned(value));
            if after.is_empty() {
                return Ok(fields);
            }
            match after.strip_prefix(delim) {
                Some(r) => rest = r,
                None => return Err((column, "text after a closing quote".to_string())),
            }
        } else {
            match rest.find(delim) {
                Some(i) => {
                    fields.push(Cow::Borrowed(rest[..i].trim()));
                    rest = &rest[i + 1..];
                }
                None => {
                    fields.push(Cow::Borrowed(rest.trim()));
                    return Ok(fields);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn parse(text: &str, opts: &CsvOptions) -> Result<Table, DatasetError> {
        parse_csv(
            Cursor::new(text.as_bytes().to_vec()),
            Path::new("t.csv"),
            opts,
        )
    }

    #[test]
    fn header_values_and_xy() {
        let t = parse(
            "\u{feff}a,b,y\r\n1,2,3\r\n\r\n4, 5e1 ,-6\n",
            &CsvOptions::with_header(true),
        )
        .unwrap();
        assert_eq!(
            t.header.as_deref(),
            Some(&["a".to_string(), "b".into(), "y".into()][..])
        );
        assert_eq!(t.values, ndarray::array![[1., 2., 3.], [4., 50., -6.]]);
        assert_eq!(t.column_index("y"), Some(2));
        let (x, y) = t.into_xy(Path::new("t.csv")).unwrap();
        assert_eq!(x, ndarray::array![[1., 2.], [4., 50.]]);
        assert_eq!(y, ndarray::array![3., -6.]);
    }

    #[test]
    fn bad_number_names_file_line_column() {
        let err = parse("a,b\n1,2\n3,x7\n", &CsvOptions::with_header(true)).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(
                err,
                DatasetError::Parse {
                    line: 3,
                    column: 2,
                    ..
                }
            ),
            "{msg}"
        );
        assert!(msg.starts_with("t.csv:3:2:"), "{msg}");
        assert!(msg.contains("`x7`") && msg.contains("column `b`"), "{msg}");
    }

    #[test]
    fn ragged_row_is_an_error() {
        let err = parse("1,2,3\n4,5\n", &CsvOptions::default()).unwrap_err();
        assert!(matches!(err, DatasetError::Parse { line: 2, .. }), "{err}");
        assert!(err.to_string().contains("ragged"), "{err}");
        let err = parse("1,2\n4,5,6\n", &CsvOptions::default()).unwrap_err();
        assert!(
            err.to_string()
                .contains("3 fields where the first line has 2"),
            "{err}"
        );
    }

    #[test]
    fn empty_field_error_or_nan() {
        let err = parse("1,,3\n", &CsvOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                DatasetError::Parse {
                    line: 1,
                    column: 2,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("empty_as_nan"), "{err}");
        let opts = CsvOptions {
            empty_as_nan: true,
            ..CsvOptions::default()
        };
        let t = parse("1,,3\n", &opts).unwrap();
        assert!(t.values[[0, 1]].is_nan());
    }

    #[test]
    fn quotes_and_row_names() {
        let opts = CsvOptions {
            header: true,
            row_names: true,
            ..CsvOptions::default()
        };
        let t = parse("\"\",\"a\"\n\"s,1\",\"2.5\"\nGSM2 , 3\n", &opts).unwrap();
        assert_eq!(t.header, Some(vec!["a".to_string()]));
        assert_eq!(t.row_names, Some(vec!["s,1".to_string(), "GSM2".into()]));
        assert_eq!(t.values, ndarray::array![[2.5], [3.0]]);

        assert_eq!(
            split_record(r#"a,"say ""hi""",c"#, b',').unwrap(),
            vec!["a", "say \"hi\"", "c"]
        );
        assert!(split_record(r#"a,"open"#, b',').is_err());
        assert!(split_record(r#""a"b,c"#, b',').is_err());
    }

    #[test]
    fn xy_needs_two_columns_and_empty_input_is_empty() {
        let t = parse("1\n2\n", &CsvOptions::default()).unwrap();
        assert!(t.into_xy(Path::new("t.csv")).is_err());
        let t = parse("", &CsvOptions::default()).unwrap();
        assert_eq!(t.values.dim(), (0, 0));
    }

    #[test]
    fn non_utf8_is_a_parse_error() {
        let err = parse_csv(
            Cursor::new(b"1,2\n\xff,3\n".to_vec()),
            Path::new("t.csv"),
            &CsvOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(err, DatasetError::Parse { line: 2, .. }), "{err}");
    }
}
