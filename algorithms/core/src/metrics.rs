//! Error measures used by the papers: kernel-approximation error, relative error (The Mondrian
//! Kernel), RMSE and the mean negative log predictive density (A la Carte).

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
        return Err(CoreError::shape(
            "number of predictions",
            target.len(),
            prediction.len(),
        ));
    }
    let residual: f64 = prediction
        .iter()
        .zip(target.iter())
        .map(|(p, t)| (p - t) * (p - t))
        .sum();
    let norm: f64 = target.iter().map(|t| t * t).sum();
    Ok(100.0 * (residual / norm).sqrt())
}

fn check_lengths(
    what: &'static str,
    prediction: usize,
    target: ArrayView1<f64>,
) -> Result<(), CoreError> {
    if prediction != target.len() {
        return Err(CoreError::shape(what, target.len(), prediction));
    }
    Ok(())
}

/// Root mean squared error `√(Σ (ŷ_i − y_i)² / n)` (0 targets: 0).
pub fn rmse(prediction: ArrayView1<f64>, target: ArrayView1<f64>) -> Result<f64, CoreError> {
    check_lengths("number of predictions", prediction.len(), target)?;
    Ok((prediction
        .iter()
        .zip(target)
        .map(|(m, t)| (m - t).powi(2))
        .sum::<f64>()
        / target.len().max(1) as f64)
        .sqrt())
}

/// Mean negative log predictive density of Gaussian predictions N(`mean_i`, `variance_i`):
/// `Σ ½(ln 2π + ln σ²_i + (y_i − μ_i)² / σ²_i) / n` (0 targets: 0).
pub fn mnlp(
    mean: ArrayView1<f64>,
    variance: ArrayView1<f64>,
    target: ArrayView1<f64>,
) -> Result<f64, CoreError> {
    check_lengths("number of predictive means", mean.len(), target)?;
    check_lengths("number of predictive variances", variance.len(), target)?;
    let ln_2pi = (2.0 * std::f64::consts::PI).ln();
    Ok(mean
        .iter()
        .zip(variance)
        .zip(target)
        .map(|((m, v), t)| 0.5 * (ln_2pi + v.ln() + (t - m).powi(2) / v))
        .sum::<f64>()
        / target.len().max(1) as f64)
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

    #[test]
    fn rmse_and_mnlp_by_hand() {
        let y = array![1.0, 2.0, 4.0];
        let p = array![1.0, 3.0, 2.0];
        assert_relative_eq!(rmse(p.view(), y.view()).unwrap(), (5.0f64 / 3.0).sqrt());
        let v = array![1.0, 1.0, 1.0];
        let expected = 0.5 * (2.0 * std::f64::consts::PI).ln() + 0.5 * 5.0 / 3.0;
        assert_relative_eq!(mnlp(p.view(), v.view(), y.view()).unwrap(), expected);
        assert!(rmse(array![1.0].view(), y.view()).is_err());
        assert!(mnlp(p.view(), array![1.0].view(), y.view()).is_err());
        let empty = ndarray::Array1::<f64>::zeros(0);
        assert_eq!(rmse(empty.view(), empty.view()), Ok(0.0));
    }
}
