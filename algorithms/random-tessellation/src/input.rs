//! The checks of a labelled fit's inputs, shared by the forests ([`crate::classify`],
//! [`crate::fit_tree`]), the preprocessing ([`crate::prepare`], [`crate::preprocess::anova_f`])
//! and the baselines ([`crate::baselines::fit_predict`], [`crate::baselines::logistic_fit`]).

use ndarray::ArrayView2;

use kernel_core::CoreError;

use crate::error::{invalid, RtfError};

/// Whether a fit needs training columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Columns {
    /// At least one column (forests, preprocessing, a logistic fit).
    AtLeastOne,
    /// Any number, none included (the baselines then predict the training mode).
    Any,
}

/// Checks the inputs of a labelled fit, in this order: `n_classes` >= 1; at least one training
/// row (and column, if `columns` says so); one label per training row; every label below
/// `n_classes`; as many test columns as training columns; finite training, then test values.
/// `test: None` is a fit without test rows.
pub(crate) fn check_labelled(
    train: ArrayView2<f64>,
    labels: &[u32],
    n_classes: usize,
    test: Option<ArrayView2<f64>>,
    columns: Columns,
) -> Result<(), RtfError> {
    if n_classes == 0 {
        return Err(invalid("n_classes", 0, "at least 1 class"));
    }
    let (rows, cols) = train.dim();
    let (empty, needed) = match columns {
        Columns::AtLeastOne => (rows == 0 || cols == 0, "at least one row and one column"),
        Columns::Any => (rows == 0, "at least one row"),
    };
    if empty {
        return Err(RtfError::Core(CoreError::EmptyInput {
            what: "the training split",
            rows,
            columns: cols,
            needed,
        }));
    }
    if labels.len() != rows {
        return Err(RtfError::Core(CoreError::ShapeMismatch {
            what: "number of labels (one per training row)",
            expected: rows,
            got: labels.len(),
        }));
    }
    if let Some((row, &label)) = labels
        .iter()
        .enumerate()
        .find(|(_, &l)| l as usize >= n_classes)
    {
        return Err(RtfError::LabelOutOfRange {
            row,
            label,
            n_classes,
        });
    }
    if let Some(test) = test {
        check_columns(
            "columns of the test split (as many as the training split)",
            cols,
            test,
        )?;
    }
    check_finite("training", train)?;
    if let Some(test) = test {
        check_finite("test", test)?;
    }
    Ok(())
}

/// [`CoreError::ShapeMismatch`] `what` unless `x` has `expected` columns.
pub(crate) fn check_columns(
    what: &'static str,
    expected: usize,
    x: ArrayView2<f64>,
) -> Result<(), RtfError> {
    Ok(kernel_core::error::check_columns(what, x, expected)?)
}

/// [`CoreError::NonFiniteInput`] at the first NaN or infinite value of `x` (row-major order).
pub(crate) fn check_finite(what: &'static str, x: ArrayView2<f64>) -> Result<(), RtfError> {
    Ok(kernel_core::error::check_finite(what, x)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2};

    #[test]
    fn checks_in_order() {
        let x = array![[0.0, 1.0], [1.0, 0.0]];
        let ok = |test| check_labelled(x.view(), &[0, 1], 2, test, Columns::AtLeastOne);
        assert_eq!(ok(None), Ok(()));
        assert_eq!(ok(Some(x.view())), Ok(()));
        assert!(matches!(
            check_labelled(x.view(), &[0, 1], 0, None, Columns::Any),
            Err(RtfError::Core(CoreError::InvalidParameter {
                name: "n_classes",
                ..
            }))
        ));
        let no_cols = Array2::<f64>::zeros((2, 0));
        assert_eq!(
            check_labelled(no_cols.view(), &[0, 1], 2, None, Columns::Any),
            Ok(())
        );
        assert!(matches!(
            check_labelled(no_cols.view(), &[0, 1], 2, None, Columns::AtLeastOne),
            Err(RtfError::Core(CoreError::EmptyInput {
                rows: 2,
                columns: 0,
                ..
            }))
        ));
        let wide = Array2::<f64>::zeros((1, 3));
        assert!(matches!(
            ok(Some(wide.view())),
            Err(RtfError::Core(CoreError::ShapeMismatch {
                expected: 2,
                got: 3,
                ..
            }))
        ));
        // Column-major views are scanned in row-major order.
        let t = array![[0.0, f64::NAN], [f64::INFINITY, 0.0]];
        assert!(matches!(
            check_finite("test", t.t()),
            Err(RtfError::Core(CoreError::NonFiniteInput {
                what: "test",
                row: 0,
                column: 1,
                ..
            }))
        ));
    }
}
