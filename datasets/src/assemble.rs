//! Building a [`LabelledSet`] from located files, as a `[dataset.table]` section says
//! (the rules are in [`crate::table`]).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use ndarray::{Array2, Axis};

use crate::error::DatasetError;
use crate::labelled::{GivenSplits, Inputs, LabelledSet, Targets};
use crate::loaders::csv::for_each_record;
use crate::loaders::{read_csv, read_idx, read_svmlight_sparse, CsvOptions};
use crate::locate::Located;
use crate::registry::{Dataset, Family};
use crate::sparse::CsrMatrix;
use crate::table::{DerivedTask, LabelRule, NaPolicy, RowFilter, TableSpec, Task};

/// Targets before class numbering: numbers (regression) or class names (classification).
enum RawTargets {
    Real(Vec<f64>),
    Names(Vec<String>),
}

impl RawTargets {
    fn new(task: Task) -> RawTargets {
        match task {
            Task::Regression => RawTargets::Real(Vec::new()),
            Task::Classification => RawTargets::Names(Vec::new()),
        }
    }

    fn extend(&mut self, other: RawTargets) {
        match (self, other) {
            (RawTargets::Real(a), RawTargets::Real(b)) => a.extend(b),
            (RawTargets::Names(a), RawTargets::Names(b)) => a.extend(b),
            _ => unreachable!("one task per table"),
        }
    }
}

/// All rows of the rows files (before NA rows are dropped).
struct Raw {
    x: Inputs,
    y: RawTargets,
    feature_names: Vec<String>,
    /// Rows of each rows file, in `spec.rows` order.
    file_rows: Vec<usize>,
    /// Rows with an empty used field (only with `na = "drop_rows"`).
    na: Vec<bool>,
}

pub(crate) fn assemble(
    ds: &Dataset,
    spec: &TableSpec,
    located: &Located,
    derived: Option<&DerivedTask>,
) -> Result<LabelledSet, DatasetError> {
    let family = spec.family(ds).ok_or_else(|| DatasetError::Table {
        dataset: ds.name.clone(),
        message: "[dataset.table] rows names no file of the dataset".into(),
    })?;
    let raw = match family {
        Family::Csv => read_csv_table(ds, spec, located)?,
        Family::Svmlight => read_svmlight_table(spec, located)?,
        Family::Idx => read_idx_table(spec, located)?,
    };
    let n_all = raw.na.len();
    let mut left_out = raw.na.clone();
    let classes = derived.and_then(|d| d.classes.as_deref());
    if let Some(derived) = derived {
        for filter in &derived.filters {
            let values = read_filter_column(spec, located, filter, n_all)?;
            for (out, v) in left_out.iter_mut().zip(values) {
                *out |= !filter.keep.contains(&v);
            }
        }
        if let (Some(classes), RawTargets::Names(names)) = (classes, &raw.y) {
            for (out, n) in left_out.iter_mut().zip(names) {
                *out |= !classes.contains(n);
            }
        }
    }
    let keep: Vec<usize> = (0..n_all).filter(|&i| !left_out[i]).collect();
    let dropped = keep.len() < n_all;

    let given = if spec.rows.len() == 2 {
        let n_train = keep.iter().filter(|&&i| i < raw.file_rows[0]).count();
        GivenSplits::TrainTest { n_train }
    } else if let Some(role) = &spec.test_mask {
        let masks = read_mask(located.path(role)?, n_all)?;
        GivenSplits::Masks(if dropped {
            masks.select(Axis(0), &keep)
        } else {
            masks
        })
    } else {
        GivenSplits::None
    };

    let x = if dropped {
        raw.x.select_rows(&keep)
    } else {
        raw.x
    };
    let y = match raw.y {
        RawTargets::Real(v) => {
            let y = ndarray::Array1::from(v);
            Targets::Real(if dropped { y.select(Axis(0), &keep) } else { y })
        }
        RawTargets::Names(names) => {
            if let Some(classes) = classes {
                // A derived task's classes must all occur (a misspelt class would be empty).
                if let Some(empty) = classes
                    .iter()
                    .find(|c| !keep.iter().any(|&i| &names[i] == *c))
                {
                    let present: BTreeSet<&String> = names.iter().collect();
                    return Err(DatasetError::Table {
                        dataset: ds.name.clone(),
                        message: format!(
                            "data.task.classes: no row of class `{empty}` (after the filters); \
                             the target's classes are {present:?}"
                        ),
                    });
                }
            }
            let kept: Vec<String> = if dropped {
                keep.iter().map(|&i| names[i].clone()).collect()
            } else {
                names
            };
            number_classes(&ds.name, kept, classes.or(spec.classes.as_deref()))?
        }
    };
    Ok(LabelledSet {
        name: ds.name.clone(),
        x,
        y,
        feature_names: raw.feature_names,
        given,
    })
}

/// Numbers class names: by `classes` when given, else sorted (numerically when every name is
/// a number, else by bytes).
fn number_classes(
    dataset: &str,
    row_names: Vec<String>,
    classes: Option<&[String]>,
) -> Result<Targets, DatasetError> {
    let names: Vec<String> = match classes {
        Some(c) => c.to_vec(),
        None => {
            let set: BTreeSet<&str> = row_names.iter().map(String::as_str).collect();
            let mut names: Vec<String> = set.into_iter().map(String::from).collect();
            let numbers: Option<Vec<f64>> = names.iter().map(|n| n.parse().ok()).collect();
            if let Some(numbers) = numbers {
                let mut pairs: Vec<(f64, String)> = numbers.into_iter().zip(names).collect();
                pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
                names = pairs.into_iter().map(|(_, n)| n).collect();
            }
            names
        }
    };
    let index: HashMap<&str, u32> = names
        .iter()
        .enumerate()
        .map(|(k, n)| (n.as_str(), k as u32))
        .collect();
    let labels = row_names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            index
                .get(n.as_str())
                .copied()
                .ok_or_else(|| DatasetError::Table {
                    dataset: dataset.to_string(),
                    message: format!(
                        "row {i}: class `{n}` is not in the table's classes {names:?}; add it \
                         to `classes` in [dataset.table] or fix the `labels` rule"
                    ),
                })
        })
        .collect::<Result<Vec<u32>, _>>()?;
    Ok(Targets::Classes { labels, names })
}

fn format_err(path: &Path, message: String) -> DatasetError {
    DatasetError::Format {
        path: path.to_path_buf(),
        message,
    }
}

/// What a CSV column is used for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Col {
    Skip,
    Input,
    Target,
    Id,
}

/// One CSV file read by a column plan.
struct CsvPart {
    /// The header line as read.
    columns: Option<Vec<String>>,
    /// Names of the input columns (from the header).
    header: Option<Vec<String>>,
    width: usize,
    inputs: Vec<f64>,
    n_inputs: usize,
    targets: RawTargets,
    ids: Vec<String>,
    na: Vec<bool>,
}

/// Which columns a CSV file contributes.
struct CsvPlanSpec<'a> {
    header: bool,
    /// The target column: `Some(None)` the last, `Some(Some(name))` a named one.
    target: Option<Option<&'a str>>,
    /// Whether the other (non-target, non-id, non-dropped) columns are inputs.
    inputs: bool,
    id: Option<&'a str>,
    drop: &'a [String],
    task: Task,
    rule: LabelRule,
    na: NaPolicy,
}

fn column_index(
    path: &Path,
    header: &[String],
    name: &str,
    field: &str,
) -> Result<usize, DatasetError> {
    header.iter().position(|h| h == name).ok_or_else(|| {
        let shown: Vec<&str> = header.iter().take(12).map(String::as_str).collect();
        let more = if header.len() > 12 { ", ..." } else { "" };
        format_err(
            path,
            format!(
                "no column named `{name}` (columns: {}{more}); fix `{field}` in the dataset's \
                 [dataset.table]",
                shown.join(", ")
            ),
        )
    })
}

fn plan_columns(
    path: &Path,
    plan: &CsvPlanSpec<'_>,
    header: Option<&[String]>,
    width: usize,
) -> Result<Vec<Col>, DatasetError> {
    let mut cols = vec![if plan.inputs { Col::Input } else { Col::Skip }; width];
    if let Some(h) = header {
        for name in plan.drop {
            cols[column_index(path, h, name, "drop")?] = Col::Skip;
        }
        if let Some(id) = plan.id {
            let field = if plan.inputs {
                "row_id"
            } else {
                "target_row_id"
            };
            cols[column_index(path, h, id, field)?] = Col::Id;
        }
    }
    match plan.target {
        None => {}
        Some(None) => {
            if width == 0 {
                return Err(format_err(
                    path,
                    "no columns: cannot take the last as target".into(),
                ));
            }
            cols[width - 1] = Col::Target;
        }
        Some(Some(name)) => {
            let h = header.expect("validated: named columns need a header");
            let j = column_index(path, h, name, "target")?;
            if cols[j] == Col::Id {
                return Err(format_err(
                    path,
                    format!("column `{name}` is both target and id"),
                ));
            }
            cols[j] = Col::Target;
        }
    }
    Ok(cols)
}

fn read_csv_part(path: &Path, plan: &CsvPlanSpec<'_>) -> Result<CsvPart, DatasetError> {
    let opts = CsvOptions::with_header(plan.header);
    let reader = crate::gz::open_maybe_gz(path)?;
    let mut part = CsvPart {
        columns: None,
        header: None,
        width: 0,
        inputs: Vec::new(),
        n_inputs: 0,
        targets: RawTargets::new(plan.task),
        ids: Vec::new(),
        na: Vec::new(),
    };
    let mut cols: Option<Vec<Col>> = None;
    let mut header_done = !plan.header;
    let parse_err = |line: usize, j: usize, header: &Option<Vec<String>>, message: String| {
        let name = header
            .as_ref()
            .and_then(|h| h.get(j))
            .map(|n| format!(" (column `{n}`)"))
            .unwrap_or_default();
        DatasetError::Parse {
            path: path.to_path_buf(),
            line,
            column: j + 1,
            message: format!("{message}{name}"),
        }
    };
    for_each_record(reader, path, &opts, |line, fields| {
        if !header_done {
            part.header = Some(fields.iter().map(|f| f.to_string()).collect());
            header_done = true;
            return Ok(());
        }
        let cols = match &mut cols {
            Some(c) => c,
            None => {
                part.width = fields.len();
                let c = plan_columns(path, plan, part.header.as_deref(), part.width)?;
                part.n_inputs = c.iter().filter(|&&c| c == Col::Input).count();
                cols.insert(c)
            }
        };
        let mut na = false;
        for (j, (field, &col)) in fields.iter().zip(cols.iter()).enumerate() {
            if col == Col::Skip {
                continue;
            }
            if field.is_empty() {
                if plan.na == NaPolicy::Error {
                    return Err(parse_err(
                        line,
                        j,
                        &part.header,
                        "empty field (NA); set na = \"drop_rows\" in the dataset's \
                         [dataset.table] to leave such rows out"
                            .into(),
                    ));
                }
                na = true;
            }
            match col {
                Col::Skip => {}
                Col::Input => {
                    let v = number(field).map_err(|_| {
                        parse_err(
                            line,
                            j,
                            &part.header,
                            format!(
                                "cannot parse `{field}` as a number; list non-numeric \
                                 columns in `drop` of the dataset's [dataset.table]"
                            ),
                        )
                    })?;
                    part.inputs.push(v);
                }
                Col::Target => match &mut part.targets {
                    RawTargets::Real(v) => v.push(number(field).map_err(|_| {
                        parse_err(
                            line,
                            j,
                            &part.header,
                            format!("regression target `{field}` is not a number"),
                        )
                    })?),
                    RawTargets::Names(v) => v.push(if field.is_empty() {
                        String::new()
                    } else {
                        plan.rule
                            .name_of_text(field)
                            .map_err(|m| parse_err(line, j, &part.header, m))?
                    }),
                },
                Col::Id => part.ids.push(field.to_string()),
            }
        }
        part.na.push(na);
        Ok(())
    })?;
    if cols.is_none() {
        // No data rows: plan anyway, so missing columns are still reported.
        part.width = part.header.as_ref().map_or(0, Vec::len);
        let c = plan_columns(path, plan, part.header.as_deref(), part.width)?;
        part.n_inputs = c.iter().filter(|&&c| c == Col::Input).count();
        cols = Some(c);
    }
    part.columns = part.header.clone();
    if let (Some(h), Some(cols)) = (&part.header, &cols) {
        // Keep only the input columns' names.
        part.header = Some(
            h.iter()
                .zip(cols)
                .filter(|(_, &c)| c == Col::Input)
                .map(|(n, _)| n.clone())
                .collect(),
        );
    }
    Ok(part)
}

fn read_csv_table(ds: &Dataset, spec: &TableSpec, located: &Located) -> Result<Raw, DatasetError> {
    let header = spec.header.unwrap_or(false);
    let target_here = spec.target_file.is_none();
    let rows_plan = CsvPlanSpec {
        header,
        target: target_here.then_some(spec.target.as_deref()),
        inputs: true,
        id: spec.row_id.as_deref(),
        drop: &spec.drop,
        task: spec.task,
        rule: spec.label_rule(),
        na: spec.na,
    };
    let mut parts = Vec::new();
    let mut first: Option<(&Path, Option<Vec<String>>, usize)> = None;
    for role in &spec.rows {
        let path = located.path(role)?;
        let part = read_csv_part(path, &rows_plan)?;
        match &first {
            None => first = Some((path, part.columns.clone(), part.width)),
            Some((first_path, first_header, first_width)) => {
                if part.columns != *first_header || part.width != *first_width {
                    return Err(format_err(
                        path,
                        format!(
                            "{} differs from the first rows file's ({})",
                            if header {
                                "header"
                            } else {
                                "number of columns"
                            },
                            first_path.display()
                        ),
                    ));
                }
            }
        }
        parts.push(part);
    }
    let n_inputs = parts[0].n_inputs;
    let file_rows: Vec<usize> = parts.iter().map(|p| p.na.len()).collect();
    let n: usize = file_rows.iter().sum();
    let feature_names = parts[0]
        .header
        .clone()
        .unwrap_or_else(|| (1..=n_inputs).map(|j| format!("x{j}")).collect());
    let mut values = Vec::with_capacity(n * n_inputs);
    let mut y = RawTargets::new(spec.task);
    let mut na = Vec::with_capacity(n);
    let mut ids = Vec::new();
    for p in parts {
        values.extend(p.inputs);
        y.extend(p.targets);
        na.extend(p.na);
        ids.extend(p.ids);
    }
    if let Some(role) = &spec.target_file {
        let path = located.path(role)?;
        let target_plan = CsvPlanSpec {
            header,
            target: Some(spec.target.as_deref()),
            inputs: false,
            id: spec.target_row_id.as_deref(),
            drop: &[],
            task: spec.task,
            rule: spec.label_rule(),
            na: spec.na,
        };
        let t = read_csv_part(path, &target_plan)?;
        if t.na.len() != n {
            return Err(DatasetError::Table {
                dataset: ds.name.clone(),
                message: format!(
                    "target_file {} has {} rows but the rows files have {n}; they are joined \
                     by row order, so they must list the same samples",
                    path.display(),
                    t.na.len()
                ),
            });
        }
        if let Some(i) = (0..ids.len().min(t.ids.len())).find(|&i| ids[i] != t.ids[i]) {
            return Err(DatasetError::Table {
                dataset: ds.name.clone(),
                message: format!(
                    "row {i}: row id `{}` in the rows files but `{}` in target_file {}; the \
                     files must list the same samples in the same order",
                    ids[i],
                    t.ids[i],
                    path.display()
                ),
            });
        }
        y = t.targets;
        for (a, b) in na.iter_mut().zip(t.na) {
            *a |= b;
        }
    }
    let first_path = located.path(&spec.rows[0])?;
    let x = Array2::from_shape_vec((n, n_inputs), values)
        .map_err(|e| format_err(first_path, e.to_string()))?;
    Ok(Raw {
        x: Inputs::Dense(x),
        y,
        feature_names,
        file_rows,
        na,
    })
}

fn read_svmlight_table(spec: &TableSpec, located: &Located) -> Result<Raw, DatasetError> {
    let n_features = spec.n_features;
    let mut xs = Vec::new();
    let mut y = RawTargets::new(spec.task);
    for role in &spec.rows {
        let path = located.path(role)?;
        let (x, labels) = read_svmlight_sparse(path, n_features)?;
        match &mut y {
            RawTargets::Real(v) => v.extend(labels.iter()),
            RawTargets::Names(v) => {
                for (i, &l) in labels.iter().enumerate() {
                    let name = spec
                        .label_rule()
                        .name_of_number(l)
                        .map_err(|m| format_err(path, format!("sample {}: {m}", i + 1)))?;
                    v.push(name);
                }
            }
        }
        xs.push(x);
    }
    let file_rows: Vec<usize> = xs.iter().map(CsrMatrix::n_rows).collect();
    let x = CsrMatrix::vstack(&xs).map_err(|e| {
        format_err(
            located.path(&spec.rows[0]).unwrap_or(Path::new("?")),
            e.to_string(),
        )
    })?;
    let n = x.n_rows();
    Ok(Raw {
        feature_names: (1..=x.n_cols()).map(|j| format!("x{j}")).collect(),
        x: Inputs::Sparse(x),
        y,
        file_rows,
        na: vec![false; n],
    })
}

fn read_idx_table(spec: &TableSpec, located: &Located) -> Result<Raw, DatasetError> {
    let images_path = located.path(&spec.rows[0])?;
    let target_role = spec
        .target_file
        .as_deref()
        .expect("validated: IDX needs target_file");
    let labels_path = located.path(target_role)?;
    let images = read_idx(images_path)?;
    let labels = read_idx(labels_path)?;
    if labels.dims.len() != 1 || images.n_items() != labels.n_items() {
        return Err(format_err(
            labels_path,
            format!(
                "labels {:?} do not match images {:?} (one label per image expected)",
                labels.dims, images.dims
            ),
        ));
    }
    let x = images
        .to_matrix()
        .map_err(|e| format_err(images_path, e.to_string()))?
        .mapv(f64::from);
    let mut y = RawTargets::new(spec.task);
    for (i, &l) in labels.data.iter().enumerate() {
        match &mut y {
            RawTargets::Real(v) => v.push(f64::from(l)),
            RawTargets::Names(v) => v.push(
                spec.label_rule()
                    .name_of_number(f64::from(l))
                    .map_err(|m| format_err(labels_path, format!("item {i}: {m}")))?,
            ),
        }
    }
    let n = x.nrows();
    Ok(Raw {
        feature_names: (1..=x.ncols()).map(|j| format!("x{j}")).collect(),
        x: Inputs::Dense(x),
        y,
        file_rows: vec![n],
        na: vec![false; n],
    })
}

/// The values of a row filter's column, by its label rule, one per row (before any row is left
/// out): read from the table's `target_file` when it has one, else from its rows files.
fn read_filter_column(
    spec: &TableSpec,
    located: &Located,
    filter: &RowFilter,
    n: usize,
) -> Result<Vec<String>, DatasetError> {
    let plan = CsvPlanSpec {
        header: true,
        target: Some(Some(filter.column.as_str())),
        inputs: false,
        id: None,
        drop: &[],
        task: Task::Classification,
        rule: filter.labels,
        na: NaPolicy::DropRows,
    };
    let roles: Vec<&String> = match &spec.target_file {
        Some(role) => vec![role],
        None => spec.rows.iter().collect(),
    };
    let mut values = Vec::with_capacity(n);
    let mut last = None;
    for role in roles {
        let path = located.path(role)?;
        let part = read_csv_part(path, &plan)?;
        let RawTargets::Names(names) = part.targets else {
            unreachable!("a filter reads class names");
        };
        values.extend(names);
        last = Some(path);
    }
    if values.len() != n {
        return Err(format_err(
            last.unwrap_or(Path::new("?")),
            format!(
                "filter column `{}` has {} rows but the table has {n}",
                filter.column,
                values.len()
            ),
        ));
    }
    Ok(values)
}

/// Reads a headerless 0/1 mask file with `n` rows.
fn read_mask(path: &Path, n: usize) -> Result<Array2<bool>, DatasetError> {
    let mask = read_csv(path, &CsvOptions::default())?.values;
    if mask.nrows() != n {
        return Err(format_err(
            path,
            format!(
                "{} mask rows, but the rows files have {n}; a mask file has one line per row",
                mask.nrows()
            ),
        ));
    }
    if let Some(bad) = mask.iter().find(|&&v| v != 0.0 && v != 1.0) {
        return Err(format_err(
            path,
            format!("test mask values must be 0 or 1, found {bad}"),
        ));
    }
    Ok(mask.mapv(|v| v == 1.0))
}

/// A numeric field; an empty one (NA) is NaN.
fn number(field: &str) -> Result<f64, std::num::ParseFloatError> {
    if field.is_empty() {
        Ok(f64::NAN)
    } else {
        field.parse::<f64>()
    }
}
