//! The Dirichlet–multinomial likelihood of a partition (spec §4, [APP Lemma 2]):
//!
//! P(Z | tessellation, V, α) = Π_j B(α + m_j) / B(α),
//!
//! m_jk the number of training items of class k in cell j, B the multivariate Beta function:
//!
//! log L = Σ_j [Σ_k lgamma(α_k + m_jk) − lgamma(Σ_k α_k + n_j)] − J · [Σ_k lgamma(α_k) − lgamma(Σ_k α_k)].
//!
//! The concentration α (decision D1): [`AlphaForm::Manual`] α_k = ALPHA · n_k (the manual's
//! "α_k = n_k / 1000", the default) or [`AlphaForm::Code`] α_k = ALPHA · round(n_k / n_1, 2)
//! (tess19), n_k the training count of class k and n_1 that of the first class present.
//!
//! A class with α_k = 0 (absent from the training labels) contributes the factor
//! Γ(0 + 0)/Γ(0) = 1 to every cell (the limit α_k → 0 with m_jk = 0) and is left out of the sums;
//! with m_jk > 0 the likelihood is 0 (log L = −∞).

use libm::lgamma;

use kernel_core::CoreError;

use crate::error::RtfError;

/// How the Dirichlet concentration α is formed from ALPHA and the training class counts (D1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum AlphaForm {
    /// α_k = ALPHA · n_k (the tess19 manual; default).
    #[default]
    Manual,
    /// α_k = ALPHA · round(n_k / n_1, 2) (the tess19 code), n_1 the count of the first class
    /// present (the lowest label with n_k > 0).
    Code,
}

/// The concentration vector α from the training class counts `class_counts` (n_k, one entry per
/// class), the scale `alpha` (ALPHA, > 0) and the form.
///
/// Errors: `alpha` not finite and > 0; no training items; a present class whose code-form α_k
/// rounds to 0 ([`RtfError::DegenerateAlpha`]).
pub fn dirichlet_alpha(
    class_counts: &[u32],
    alpha: f64,
    form: AlphaForm,
) -> Result<Vec<f64>, RtfError> {
    if !(alpha.is_finite() && alpha > 0.0) {
        return Err(crate::error::invalid("alpha", alpha, "a finite number > 0"));
    }
    let Some(&reference) = class_counts.iter().find(|&&n| n > 0) else {
        return Err(RtfError::Core(CoreError::EmptyInput {
            what: "the training class counts",
            rows: 0,
            columns: class_counts.len(),
            needed: "a class with at least one training row",
        }));
    };
    class_counts
        .iter()
        .enumerate()
        .map(|(class, &count)| match form {
            AlphaForm::Manual => Ok(alpha * count as f64),
            AlphaForm::Code => {
                let ratio = (count as f64 / reference as f64 * 100.0).round() / 100.0;
                if count > 0 && ratio == 0.0 {
                    Err(RtfError::DegenerateAlpha {
                        class,
                        count,
                        reference,
                    })
                } else {
                    Ok(alpha * ratio)
                }
            }
        })
        .collect()
}

/// log P(Z | partition, α) of cells given by their class counts (spec §4; one slice of length K
/// per cell), computed with lgamma.
///
/// Errors: a cell whose length differs from α's; α with a negative or non-finite entry or
/// Σ α = 0.
pub fn log_likelihood<'a>(
    cells: impl IntoIterator<Item = &'a [u32]>,
    alpha: &[f64],
) -> Result<f64, RtfError> {
    check_alpha(alpha)?;
    let total_alpha: f64 = alpha.iter().sum();
    let prior_term = prior_term(alpha, total_alpha);
    let mut log_l = 0.0;
    for counts in cells {
        if counts.len() != alpha.len() {
            return Err(RtfError::Core(CoreError::ShapeMismatch {
                what: "class counts of a cell vs the length of alpha",
                expected: alpha.len(),
                got: counts.len(),
            }));
        }
        let mut n = 0u64;
        for (&m, &a) in counts.iter().zip(alpha) {
            n += m as u64;
            if a > 0.0 {
                log_l += lgamma(a + m as f64);
            } else if m > 0 {
                return Ok(f64::NEG_INFINITY);
            }
        }
        log_l -= lgamma(total_alpha + n as f64) + prior_term;
    }
    Ok(log_l)
}

/// `Σ_k lgamma(α_k) − lgamma(A)` over the α_k > 0, `total_alpha` = A = Σ α: the normaliser
/// subtracted from every cell's term.
fn prior_term(alpha: &[f64], total_alpha: f64) -> f64 {
    alpha
        .iter()
        .filter(|&&a| a > 0.0)
        .map(|&a| lgamma(a))
        .sum::<f64>()
        - lgamma(total_alpha)
}

fn check_alpha(alpha: &[f64]) -> Result<(), RtfError> {
    if let Some(bad) = alpha.iter().find(|a| !a.is_finite() || **a < 0.0) {
        return Err(crate::error::invalid(
            "Dirichlet concentration entry",
            bad,
            "finite values >= 0",
        ));
    }
    let total: f64 = alpha.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return Err(crate::error::invalid(
            "Dirichlet concentration sum",
            total,
            "a positive sum",
        ));
    }
    Ok(())
}

/// The per-cell term of log L from tables (the SMC's hot path): for a cell with counts m and
/// size n, `term = Σ_k lgamma(α_k + m_k) − lgamma(A + n) − [Σ_k lgamma(α_k) − lgamma(A)]`,
/// A = Σ α, so log L = Σ_j term_j. The tables cover every count up to the training totals.
#[derive(Debug, Clone)]
pub(crate) struct CellLikelihood {
    /// `by_class[k][m] = lgamma(α_k + m)` for m = 0..=n_k (empty when α_k = 0).
    by_class: Vec<Vec<f64>>,
    /// `by_size[n] = lgamma(A + n)` for n = 0..=N.
    by_size: Vec<f64>,
    prior_term: f64,
}

impl CellLikelihood {
    /// Tables for α over a training set with class counts `class_counts`.
    pub(crate) fn new(alpha: &[f64], class_counts: &[u32]) -> Result<Self, RtfError> {
        check_alpha(alpha)?;
        let total_alpha: f64 = alpha.iter().sum();
        let total: u32 = class_counts.iter().sum();
        let by_class = alpha
            .iter()
            .zip(class_counts)
            .map(|(&a, &n_k)| {
                if a > 0.0 {
                    (0..=n_k).map(|m| lgamma(a + m as f64)).collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let by_size = (0..=total)
            .map(|n| lgamma(total_alpha + n as f64))
            .collect();
        let prior_term = prior_term(alpha, total_alpha);
        Ok(Self {
            by_class,
            by_size,
            prior_term,
        })
    }

    /// The term of a cell with class counts `counts` (each at most the training count).
    pub(crate) fn term(&self, counts: &[u32]) -> f64 {
        let mut n = 0usize;
        let mut sum = 0.0;
        for (table, &m) in self.by_class.iter().zip(counts) {
            n += m as usize;
            if let Some(v) = table.get(m as usize) {
                sum += v;
            } else if m > 0 {
                return f64::NEG_INFINITY;
            }
        }
        sum - self.by_size[n] - self.prior_term
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_agree_with_the_direct_formula() {
        let class_counts = [7u32, 0, 5];
        let alpha = dirichlet_alpha(&class_counts, 1e-3, AlphaForm::Manual).unwrap();
        assert_eq!(alpha, vec![7e-3, 0.0, 5e-3]);
        let table = CellLikelihood::new(&alpha, &class_counts).unwrap();
        let cells: [&[u32]; 3] = [&[3, 0, 1], &[4, 0, 0], &[0, 0, 4]];
        let direct = log_likelihood(cells, &alpha).unwrap();
        let summed: f64 = cells.iter().map(|c| table.term(c)).sum();
        assert!((direct - summed).abs() < 1e-10, "{direct} vs {summed}");
        assert_eq!(
            log_likelihood([&[1u32, 1, 0][..]], &alpha).unwrap(),
            f64::NEG_INFINITY
        );
    }

    #[test]
    fn code_form_rounds_ratios_to_two_decimals() {
        let alpha = dirichlet_alpha(&[0, 40, 13, 40], 1e-3, AlphaForm::Code).unwrap();
        // n_1 = 40 (the first class present): ratios 0, 1, round(0.325, 2) = 0.33 or 0.32, 1.
        assert!((alpha[2] - 0.33e-3).abs() < 1e-15 || (alpha[2] - 0.32e-3).abs() < 1e-15);
        let alpha3 = dirichlet_alpha(&[30, 7], 1e-3, AlphaForm::Code).unwrap();
        assert!(
            (alpha3[1] - 0.23e-3).abs() < 1e-15,
            "7/30 = 0.2333 rounds to 0.23"
        );
        assert_eq!(alpha[0], 0.0);
        assert_eq!(alpha[1], 1e-3);
        assert!(matches!(
            dirichlet_alpha(&[1000, 2], 1e-3, AlphaForm::Code),
            Err(RtfError::DegenerateAlpha { class: 1, .. })
        ));
        assert!(dirichlet_alpha(&[0, 0], 1e-3, AlphaForm::Manual).is_err());
        assert!(dirichlet_alpha(&[1, 1], 0.0, AlphaForm::Manual).is_err());
        assert!(dirichlet_alpha(&[1, 1], f64::NAN, AlphaForm::Manual).is_err());
        assert!(log_likelihood([&[1u32][..]], &[1.0, 1.0]).is_err());
        assert!(log_likelihood([&[1u32, 1][..]], &[-1.0, 1.0]).is_err());
    }
}
