//! The `[dataset.table]` section of a registry entry: how its files become a typed
//! [`LabelledSet`](crate::LabelledSet).
//!
//! ```toml
//! [dataset.table]
//! task = "classification"      # or "regression"
//! rows = ["train", "test"]     # file roles holding the rows, concatenated in this order
//! header = true                # CSV only: the first line of each CSV file names the columns
//! target = "BT"                # CSV only: target column name (absent: the last column)
//! target_file = "pheno"        # role of the file holding the target, joined by row order
//! row_id = "sample"            # id column of the row files (never an input) ...
//! target_row_id = "sample"     # ... that must equal this column of target_file, row by row
//! drop = ["Id"]                # CSV only: columns that are not inputs
//! na = "drop_rows"             # or "error" (default): rows with an empty field
//! n_features = 123             # svmlight only: the number of input columns
//! labels = "first_char"        # classification: how a raw label becomes a class name
//! classes = ["-1", "+1"]       # classification: the class names in label order (optional)
//! test_mask = "test_mask"      # role of a 0/1 CSV file with one column per shipped split
//! ```
//!
//! Rules, checked by [`TableSpec::validate`] when the registry is parsed:
//!
//! * `rows` names one or two file roles. Two roles (the published training file, then the test
//!   file) give [`GivenSplits::TrainTest`](crate::GivenSplits); `test_mask` gives
//!   [`GivenSplits::Masks`](crate::GivenSplits) and needs a single rows role; the two are
//!   exclusive.
//! * The rows files share a format: CSV (`csv`, `csv_gz`), svmlight or IDX.
//!   * CSV: `header` is required. The target is the `target` column (the last column when
//!     absent) of the rows files, or of `target_file` when that is given. Named columns
//!     (`target`, `drop`, `row_id`) need `header = true`. Inputs are every other column of the
//!     rows files, in file order. With two rows files their headers must be equal.
//!   * svmlight: `n_features` is required; the label of each line is the raw target.
//!     `header`, `target`, `target_file`, `drop`, `row_id` and `na = "drop_rows"` are refused.
//!   * IDX: exactly one rows role (the images, flattened row-major per item) and `target_file`
//!     (a 1-d IDX file of labels) are required; the CSV fields and `n_features` are refused.
//! * `na = "drop_rows"` drops every row that has an empty field among its used columns (inputs,
//!   target, row id; in the rows file or `target_file`), after the join and before the rows
//!   and masks are numbered; `na = "error"` makes such a field an error naming the line.
//! * `task = "regression"`: the target is parsed as a number; `labels` and `classes` are
//!   refused. `task = "classification"`: each raw label becomes a class name by `labels`:
//!   `text` (the field as written, trimmed; CSV default), `first_char` (its first character),
//!   `sign` (a number equal to -1 or +1, named `"-1"` / `"+1"`), `integer` (an integral
//!   number, named in decimal, e.g. `"7"`). svmlight and IDX labels are numbers, so they need
//!   `sign` or `integer`.
//! * Class order: `classes`, when given, fixes the names and their order (label `k` is
//!   `classes[k]`; a class may have no rows; a name outside the list is a load error).
//!   Otherwise the names that occur are **sorted**: numerically when every name parses as a
//!   number, else by bytes (so `Vowel`'s `hAd` comes before `had`). Either way a set's label
//!   numbering does not depend on its row order.

use serde::{Deserialize, Serialize};

/// What the target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    /// A real-valued target ([`Targets::Real`](crate::Targets)).
    Regression,
    /// Class labels with names ([`Targets::Classes`](crate::Targets)).
    Classification,
}

/// What to do with a row that has an empty field among its used columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NaPolicy {
    /// An empty field is an error naming the file, line and column.
    #[default]
    Error,
    /// The row is left out of the set (and of its masks).
    DropRows,
}

/// How a raw label becomes a class name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelRule {
    /// The field as written (trimmed).
    #[default]
    Text,
    /// The first character of the field (`B2` -> `B`).
    FirstChar,
    /// A number equal to -1 or +1, named `"-1"` or `"+1"` (`1.0`, `+1`, `-1.0` all accepted).
    Sign,
    /// An integral number, named in decimal (`7`, `7.0` -> `"7"`).
    Integer,
}

impl LabelRule {
    /// The class name of a raw text label.
    pub fn name_of_text(self, raw: &str) -> Result<String, String> {
        match self {
            LabelRule::Text => Ok(raw.to_string()),
            LabelRule::FirstChar => raw
                .chars()
                .next()
                .map(String::from)
                .ok_or_else(|| "empty label".to_string()),
            LabelRule::Sign | LabelRule::Integer => {
                let v: f64 = raw
                    .parse()
                    .map_err(|_| format!("label `{raw}` is not a number"))?;
                self.name_of_number(v)
            }
        }
    }

    /// The class name of a numeric label (`sign` and `integer` only).
    pub fn name_of_number(self, v: f64) -> Result<String, String> {
        match self {
            LabelRule::Sign if v == 1.0 => Ok("+1".into()),
            LabelRule::Sign if v == -1.0 => Ok("-1".into()),
            LabelRule::Sign => Err(format!(
                "label {v} is neither -1 nor +1 (labels = \"sign\")"
            )),
            // `+ 0.0` turns -0 into 0.
            LabelRule::Integer if v.fract() == 0.0 && v.abs() < 1e15 => {
                Ok(format!("{:.0}", v + 0.0))
            }
            LabelRule::Integer => Err(format!(
                "label {v} is not an integer (labels = \"integer\")"
            )),
            LabelRule::Text | LabelRule::FirstChar => Err(format!(
                "numeric label {v}: labels = \"{}\" applies to text; use \"sign\" or \"integer\"",
                self.name()
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            LabelRule::Text => "text",
            LabelRule::FirstChar => "first_char",
            LabelRule::Sign => "sign",
            LabelRule::Integer => "integer",
        }
    }
}

/// The `[dataset.table]` section (field docs in the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Regression or classification.
    pub task: Task,
    /// Roles of the files holding the rows, concatenated in order (one or two).
    pub rows: Vec<String>,
    /// CSV: the first line of each CSV file (rows and target file) names the columns.
    #[serde(default)]
    pub header: Option<bool>,
    /// CSV: the target column's name; `None` is the last column.
    #[serde(default)]
    pub target: Option<String>,
    /// Role of a file holding the target, joined to the rows by row order.
    #[serde(default)]
    pub target_file: Option<String>,
    /// CSV: an id column of the rows files (not an input), checked against `target_row_id`.
    #[serde(default)]
    pub row_id: Option<String>,
    /// CSV: the id column of `target_file` that must equal `row_id` row by row.
    #[serde(default)]
    pub target_row_id: Option<String>,
    /// CSV: names of columns that are not inputs.
    #[serde(default)]
    pub drop: Vec<String>,
    /// Rows with an empty field among their used columns.
    #[serde(default)]
    pub na: NaPolicy,
    /// svmlight: number of input columns.
    #[serde(default)]
    pub n_features: Option<usize>,
    /// Classification: raw label -> class name.
    #[serde(default)]
    pub labels: Option<LabelRule>,
    /// Classification: class names in label order.
    #[serde(default)]
    pub classes: Option<Vec<String>>,
    /// Role of the 0/1 test-mask file (no header, one column per shipped split).
    #[serde(default)]
    pub test_mask: Option<String>,
}

impl TableSpec {
    /// The label rule in effect (`text` when not given).
    pub fn label_rule(&self) -> LabelRule {
        self.labels.unwrap_or_default()
    }
}

/// A classification task an experiment derives from a registered dataset's CSV files
/// (`[data] task = { ... }` of a config): another target column, a subset of its classes, rows
/// filtered by other columns. E.g. the B-cell samples of ALL with `mol.biol` BCR/ABL or NEG:
///
/// ```toml
/// task = { target = "mol.biol", classes = ["BCR/ABL", "NEG"], where = [{ column = "BT", labels = "first_char", keep = ["B"] }] }
/// ```
///
/// Rules ([`DerivedTask::validate`]): the table must be a CSV classification table; `target`
/// names a column of `target_file` when the table has one, else of the rows files (it must not
/// be an input column: list it in the table's `drop`, or use a `target_file`); `classes`, when
/// given, keeps only the rows of these classes and numbers them in this order; each `where`
/// filter reads `column` from the same file as the target, maps it by its `labels` rule and
/// keeps the rows whose value is in `keep`. Rows are left out before masks and the train/test
/// boundary are counted, as NA rows are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivedTask {
    /// The target column (absent: the table's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// How its raw labels become class names (absent: the table's rule, or `text` with a new
    /// target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<LabelRule>,
    /// Keep only the rows of these classes, numbered in this order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<String>>,
    /// Keep only the rows that pass every filter.
    #[serde(default, rename = "where", skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<RowFilter>,
}

/// Keep the rows whose `column`, mapped by `labels`, is one of `keep`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowFilter {
    pub column: String,
    #[serde(default)]
    pub labels: LabelRule,
    pub keep: Vec<String>,
}

impl DerivedTask {
    /// The table this task reads: `table` with its target and label rule replaced (and no fixed
    /// class list: [`DerivedTask::classes`] numbers the kept classes).
    pub fn table(&self, table: &TableSpec) -> TableSpec {
        let mut t = table.clone();
        if let Some(target) = &self.target {
            t.target = Some(target.clone());
            // A new column is read as text unless the task says otherwise.
            t.labels = Some(self.labels.unwrap_or_default());
        } else if let Some(rule) = self.labels {
            t.labels = Some(rule);
        }
        if self.target.is_some() || self.labels.is_some() || self.classes.is_some() {
            t.classes = None;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_rules() {
        assert_eq!(LabelRule::Text.name_of_text("hId").unwrap(), "hId");
        assert_eq!(LabelRule::FirstChar.name_of_text("B2").unwrap(), "B");
        assert!(LabelRule::FirstChar.name_of_text("").is_err());
        for (raw, name) in [("1", "+1"), ("+1", "+1"), ("1.0", "+1"), ("-1.0", "-1")] {
            assert_eq!(LabelRule::Sign.name_of_text(raw).unwrap(), name, "{raw}");
        }
        assert!(LabelRule::Sign.name_of_number(0.0).is_err());
        assert!(LabelRule::Sign.name_of_text("x").is_err());
        assert_eq!(LabelRule::Integer.name_of_number(7.0).unwrap(), "7");
        assert_eq!(LabelRule::Integer.name_of_text("-3.0").unwrap(), "-3");
        assert!(LabelRule::Integer.name_of_number(0.5).is_err());
        assert!(LabelRule::Text.name_of_number(1.0).is_err());
    }
}
