//! Error measures used by the papers.

use ndarray::{ArrayView1, ArrayView2};

use crate::CoreError;

/// Largest absolute entry-wise difference `max_ij |a_ij − b_ij|` (The Mondrian Kernel, Fig. 5).
pub fn max_abs_error(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<f64, CoreError> {
    if a.dim() != b.dim() {
        return Err(CoreError::ShapeMismatch {
            what: "matrix size (rows * cols)",
            expected: a.len(),
            got: b.len(),
        });
    }
    Ok(a.iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max))
}

/// Relative error in percent, `100 · ‖ŷ − y‖₂ / ‖y‖₂`, on raw (uncentred) targets
/// (The Mondrian Kernel, Sec. 6; the authors' `utils.py`).
pub fn relative_error_percent(
    prediction: ArrayView1<f64>,
    target: ArrayView1<f64>,
) -> Result<f64, CoreError> {
    if prediction.len() != target.len() {
        return Err(CoreError::ShapeMismatch {
            what: "number of predictions",
            expected: target.len(),
            got: prediction.len(),
        });
    }
    let residual: f64 = prediction
        .iter()
        .zip(target.iter())
        .map(|(p, t)| (p - t) * (p - t))
        .sum();
    let norm: f64 = target.iter().map(|t| t * t).sum();
    Ok(100.0 * (residual / norm).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use ndarray::array;

    #[test]
    fn max_abs_error_by_hand() {
        let a = array![[1.0, 0.5], [0.2, 1.0]];
        let b = array![[1.0, 0.1], [0.9, 1.0]];
        assert_relative_eq!(
            max_abs_error(a.view(), b.view()).unwrap(),
            0.7,
            epsilon = 1e-15
        );
        assert!(max_abs_error(a.view(), array![[1.0]].view()).is_err());
    }

    #[test]
    fn relative_error_by_hand() {
        let y = array![3.0, 4.0];
        let p = array![3.0, 3.0];
        assert_relative_eq!(relative_error_percent(p.view(), y.view()).unwrap(), 20.0);
        assert!(relative_error_percent(array![1.0].view(), y.view()).is_err());
    }
}
