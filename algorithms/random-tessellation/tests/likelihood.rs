//! The Dirichlet-multinomial likelihood (spec §4, §11 item 4) against an independent formula:
//! B(α + m) / B(α) = Π_k (α_k)^(m_k) / (A)^(n), with (x)^(m) = x (x + 1) ... (x + m − 1) the
//! rising factorial (Γ(x + m) = (x)^(m) Γ(x)), A = Σ α_k, n = Σ m_k. No lgamma involved.

use kernel_core::CoreError;
use random_tessellation::{dirichlet_alpha, log_likelihood, AlphaForm, RtfError};

fn log_rising(x: f64, m: u32) -> f64 {
    (0..m).map(|i| (x + i as f64).ln()).sum()
}

fn independent(cell: &[u32], alpha: &[f64]) -> f64 {
    let total: f64 = alpha.iter().sum();
    let n: u32 = cell.iter().sum();
    cell.iter()
        .zip(alpha)
        .map(|(&m, &a)| log_rising(a, m))
        .sum::<f64>()
        - log_rising(total, n)
}

#[test]
fn one_cell_equals_the_ratio_of_multivariate_beta_functions() {
    let cases: [(&[f64], &[u32]); 6] = [
        (&[1.0, 1.0], &[3, 2]),
        (&[0.5, 2.0, 3.0], &[0, 4, 1]),
        (&[0.04, 0.017], &[40, 17]),
        (&[1e-3, 2e-3, 5e-4], &[1, 0, 0]),
        (&[2.5], &[6]),
        (&[0.3, 0.7, 1.1, 0.2], &[5, 5, 0, 9]),
    ];
    for (alpha, cell) in cases {
        let got = log_likelihood([cell], alpha).unwrap();
        let expect = independent(cell, alpha);
        assert!(
            (got - expect).abs() <= 1e-9 * expect.abs().max(1.0),
            "α {alpha:?}, m {cell:?}: {got} vs {expect}"
        );
    }
    // The empty cell has likelihood 1; a partition's log L is the sum over its cells.
    assert_eq!(log_likelihood([&[0u32, 0][..]], &[0.3, 0.4]).unwrap(), 0.0);
    let alpha = [0.2, 0.5, 0.1];
    let cells: [&[u32]; 3] = [&[3, 0, 1], &[0, 2, 0], &[4, 4, 4]];
    let got = log_likelihood(cells, &alpha).unwrap();
    let expect: f64 = cells.iter().map(|c| independent(c, &alpha)).sum();
    assert!((got - expect).abs() < 1e-9 * expect.abs());
}

#[test]
fn separating_the_classes_raises_the_likelihood_and_splitting_a_pure_cell_lowers_it() {
    let counts = [12u32, 9];
    let alpha = dirichlet_alpha(&counts, 1e-3, AlphaForm::Manual).unwrap();
    let mixed = log_likelihood([&[12u32, 9][..]], &alpha).unwrap();
    let separated = log_likelihood([&[12u32, 0][..], &[0, 9]], &alpha).unwrap();
    assert!(separated > mixed, "{separated} <= {mixed}");
    // A split of a mixed cell that only moves some items but keeps both children mixed is not
    // guaranteed to help; a pure cell split in two costs a factor
    // Π_{i<b} (α_k + i)/(A + i) / Π_{i=a}^{a+b-1} (α_k + i)/(A + i) < 1 since α_k < A.
    let pure = log_likelihood([&[12u32, 0][..]], &alpha).unwrap();
    let pure_split = log_likelihood([&[7u32, 0][..], &[5, 0]], &alpha).unwrap();
    assert!(pure_split < pure);
    // With the tess19 default ALPHA = 1e-3 the first factor dominates: about log(α_k / A).
    let expect =
        independent(&[7, 0], &alpha) + independent(&[5, 0], &alpha) - independent(&[12, 0], &alpha);
    assert!((pure_split - pure - expect).abs() < 1e-9);
}

#[test]
fn alpha_forms_follow_the_manual_and_the_code() {
    let manual = dirichlet_alpha(&[40, 17, 0], 1e-3, AlphaForm::Manual).unwrap();
    assert_eq!(manual, vec![0.04, 0.017, 0.0]);
    let code = dirichlet_alpha(&[40, 17, 0], 1e-3, AlphaForm::Code).unwrap();
    // round(17 / 40, 2) = round(0.425, 2): 0.42 or 0.43 depending on the binary value.
    assert_eq!(code[0], 1e-3);
    assert!((code[1] - 0.42e-3).abs() < 1e-12 || (code[1] - 0.43e-3).abs() < 1e-12);
    assert_eq!(code[2], 0.0);
    // An absent class has α_k = 0 and contributes nothing while its count is 0.
    let with_absent = log_likelihood([&[4u32, 1, 0][..]], &manual).unwrap();
    let without = log_likelihood([&[4u32, 1][..]], &manual[..2]).unwrap();
    assert!((with_absent - without).abs() < 1e-12);
    assert!(matches!(
        dirichlet_alpha(&[500, 1], 1e-3, AlphaForm::Code),
        Err(RtfError::DegenerateAlpha { class: 1, .. })
    ));
    assert!(matches!(
        log_likelihood([&[1u32, 2, 3][..]], &[1.0, 1.0]),
        Err(RtfError::Core(CoreError::ShapeMismatch { .. }))
    ));
    assert!(log_likelihood([&[1u32][..]], &[f64::NAN]).is_err());
    assert!(log_likelihood([&[1u32][..]], &[0.0]).is_err());
}
