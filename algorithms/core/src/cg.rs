//! Preconditioned conjugate gradient for symmetric positive definite systems `A x = b`.
//!
//! Matrix-free: the caller applies `A`. Reductions are sequential, so the iterates do not depend
//! on the thread count.

use std::convert::Infallible;

/// Outcome of a CG solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CgReport {
    pub iterations: usize,
    /// Final `‖b − A x‖₂` (of the recurrence's residual).
    pub residual_norm: f64,
    pub converged: bool,
}

/// When CG stops (besides the iteration limit).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CgStop {
    /// `‖r‖ <= tol · ‖b‖` (a NaN residual stops it too).
    Relative(f64),
    /// `‖r‖ < threshold`, an absolute threshold (FALKON's).
    Below(f64),
}

impl CgStop {
    fn reached(self, residual_norm: f64, target: f64) -> bool {
        match self {
            // Not `a <= b`: stop unless the residual is known to be above the target (a NaN
            // residual has always stopped the solve).
            CgStop::Relative(_) => {
                residual_norm.partial_cmp(&target) != Some(std::cmp::Ordering::Greater)
            }
            CgStop::Below(threshold) => residual_norm < threshold,
        }
    }

    fn converged(self, residual_norm: f64, target: f64) -> bool {
        match self {
            CgStop::Relative(_) => residual_norm <= target,
            CgStop::Below(threshold) => residual_norm < threshold,
        }
    }
}

/// The sequential inner product `Σ a_i b_i`, left to right (the iterates then do not depend on
/// the thread count or the vector unit).
pub fn sequential_dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Settings of [`try_conjugate_gradient`].
#[derive(Debug, Clone, Copy)]
pub struct CgOptions {
    pub stop: CgStop,
    pub max_iterations: usize,
    /// The inner product of the recurrence: [`sequential_dot`], or another summation order
    /// (a caller whose solve has always used ndarray's `dot` passes that, for the same bits).
    pub dot: fn(&[f64], &[f64]) -> f64,
    /// The initial guess is 0: the first residual is `b` itself, without applying `A` (the same
    /// numbers when `A` is finite, one application fewer).
    pub zero_start: bool,
}

impl CgOptions {
    /// Stop at `‖r‖ <= rel_tol · ‖b‖` or after `max_iterations`, sequential inner products,
    /// the initial guess as given.
    pub fn relative(rel_tol: f64, max_iterations: usize) -> Self {
        Self {
            stop: CgStop::Relative(rel_tol),
            max_iterations,
            dot: sequential_dot,
            zero_start: false,
        }
    }
}

/// Solves `A x = b` from the initial guess in `x` with the Jacobi preconditioner `diag`
/// (the diagonal of `A`), stopping when `‖r‖ <= rel_tol · ‖b‖` or after `max_iter` iterations.
pub fn conjugate_gradient(
    apply: impl Fn(&[f64], &mut [f64]),
    b: &[f64],
    x: &mut [f64],
    diag: &[f64],
    rel_tol: f64,
    max_iter: usize,
) -> CgReport {
    preconditioned_conjugate_gradient(apply, |r, z| jacobi(r, diag, z), b, x, rel_tol, max_iter)
}

/// The Jacobi preconditioner: `z = r / diag`, elementwise.
pub fn jacobi(r: &[f64], diag: &[f64], z: &mut [f64]) {
    for ((zi, ri), di) in z.iter_mut().zip(r).zip(diag) {
        *zi = ri / di;
    }
}

/// No preconditioner: `z = r`.
pub fn identity(r: &[f64], z: &mut [f64]) {
    z.copy_from_slice(r);
}

/// Solves `A x = b` from the initial guess in `x`; `precondition(r, z)` sets `z = P⁻¹ r` for a
/// symmetric positive definite `P ≈ A`. Stops when `‖r‖ <= rel_tol · ‖b‖` or after `max_iter`
/// iterations.
pub fn preconditioned_conjugate_gradient(
    apply: impl Fn(&[f64], &mut [f64]),
    precondition: impl Fn(&[f64], &mut [f64]),
    b: &[f64],
    x: &mut [f64],
    rel_tol: f64,
    max_iter: usize,
) -> CgReport {
    let report: Result<CgReport, Infallible> = try_conjugate_gradient(
        |v, out| {
            apply(v, out);
            Ok(())
        },
        |r, z| {
            precondition(r, z);
            Ok(())
        },
        b,
        x,
        &CgOptions::relative(rel_tol, max_iter),
    );
    match report {
        Ok(report) => report,
        Err(never) => match never {},
    }
}

/// Preconditioned CG for an operator that may fail (`apply` and `precondition` return the
/// caller's error, which ends the solve). The one CG of the workspace: the Mondrian ridge
/// solves and StreaMRAK's FALKON levels run it. Per iteration: `α = (r·z) / (p·Ap)`,
/// `x += α p`, `r −= α Ap`, `z = P⁻¹ r`, `β = (r·z)_new / (r·z)`, `p = z + β p`; it stops early
/// (without a step) when `p·Ap` is not a positive finite number, i.e. the operator is not
/// positive definite along `p`.
pub fn try_conjugate_gradient<E>(
    mut apply: impl FnMut(&[f64], &mut [f64]) -> Result<(), E>,
    mut precondition: impl FnMut(&[f64], &mut [f64]) -> Result<(), E>,
    b: &[f64],
    x: &mut [f64],
    options: &CgOptions,
) -> Result<CgReport, E> {
    let dot = options.dot;
    let n = b.len();
    let target = match options.stop {
        CgStop::Relative(rel_tol) => rel_tol * dot(b, b).sqrt(),
        CgStop::Below(threshold) => threshold,
    };
    let mut r: Vec<f64> = if options.zero_start {
        b.to_vec()
    } else {
        let mut ax = vec![0.0; n];
        apply(x, &mut ax)?;
        b.iter().zip(&ax).map(|(bi, ai)| bi - ai).collect()
    };
    let mut z = vec![0.0; n];
    precondition(&r, &mut z)?;
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    let mut ap = vec![0.0; n];
    let mut iterations = 0;
    let mut residual_norm = dot(&r, &r).sqrt();
    while !options.stop.reached(residual_norm, target) && iterations < options.max_iterations {
        apply(&p, &mut ap)?;
        let pap = dot(&p, &ap);
        if pap <= 0.0 || !pap.is_finite() {
            break;
        }
        let alpha = rz / pap;
        for i in 0..n {
            x[i] += alpha * p[i];
            r[i] -= alpha * ap[i];
        }
        precondition(&r, &mut z)?;
        let rz_next = dot(&r, &z);
        let beta = rz_next / rz;
        rz = rz_next;
        for i in 0..n {
            p[i] = z[i] + beta * p[i];
        }
        iterations += 1;
        residual_norm = dot(&r, &r).sqrt();
    }
    Ok(CgReport {
        iterations,
        residual_norm,
        converged: options.stop.converged(residual_norm, target),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use ndarray::array;

    #[test]
    fn solves_a_small_spd_system_like_cholesky() {
        let a = array![[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]];
        let b = array![1.0, 2.0, 3.0];
        let direct = crate::ridge::solve_positive_definite(a.clone(), b.clone()).unwrap();
        let mut x = vec![0.0; 3];
        let diag: Vec<f64> = a.diag().to_vec();
        let report = conjugate_gradient(
            |v, out| {
                let y = a.dot(&ndarray::ArrayView1::from(v));
                out.copy_from_slice(y.as_slice().unwrap());
            },
            b.as_slice().unwrap(),
            &mut x,
            &diag,
            1e-12,
            100,
        );
        assert!(report.converged && report.iterations <= 3, "{report:?}");
        for (a, b) in x.iter().zip(direct.iter()) {
            assert_relative_eq!(a, b, epsilon = 1e-10);
        }
    }

    #[test]
    fn exact_start_needs_no_iteration() {
        let mut x = vec![0.5];
        let r = conjugate_gradient(
            |v, out| out[0] = 2.0 * v[0],
            &[1.0],
            &mut x,
            &[2.0],
            1e-12,
            10,
        );
        assert_eq!(r.iterations, 0);
        assert!(r.converged);
    }

    /// FALKON's CG as it was written before it used this solver: no preconditioner, β = 0
    /// start, stop when ‖r‖ < threshold, ndarray's inner products. The generic solver with
    /// [`CgStop::Below`], [`identity`] and a zero start gives the same bits.
    #[test]
    fn absolute_threshold_without_preconditioner_matches_plain_cg_bit_for_bit() {
        use ndarray::{Array1, ArrayView1};
        let a: ndarray::Array2<f64> = array![
            [4.0, 1.0, 0.5, 0.1],
            [1.0, 3.0, 0.2, 0.3],
            [0.5, 0.2, 2.0, 0.7],
            [0.1, 0.3, 0.7, 5.0]
        ];
        let b: Array1<f64> = array![1.0, -2.0, 3.0, 0.25];
        for (max_iterations, threshold) in [(2, 1e-10f64), (3, 1e-10), (10, 1e-10), (10, 0.5)] {
            let mut x = Array1::<f64>::zeros(4);
            let mut r = b.clone();
            let mut d = r.clone();
            let mut rr = r.dot(&r);
            for _ in 0..max_iterations {
                if rr.sqrt() < threshold {
                    break;
                }
                let wd = a.dot(&d);
                let step = rr / d.dot(&wd);
                x.scaled_add(step, &d);
                r.scaled_add(-step, &wd);
                let rr_new = r.dot(&r);
                d = &r + &(&d * (rr_new / rr));
                rr = rr_new;
            }
            let mut y = vec![0.0; 4];
            let options = CgOptions {
                stop: CgStop::Below(threshold),
                max_iterations,
                dot: |u, v| ArrayView1::from(u).dot(&ArrayView1::from(v)),
                zero_start: true,
            };
            let report = try_conjugate_gradient(
                |v, out| {
                    out.copy_from_slice(a.dot(&ArrayView1::from(v)).as_slice().unwrap());
                    Ok::<_, ()>(())
                },
                |r, z| {
                    identity(r, z);
                    Ok(())
                },
                b.as_slice().unwrap(),
                &mut y,
                &options,
            )
            .unwrap();
            let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&y),
                bits(x.as_slice().unwrap()),
                "{max_iterations} {threshold}"
            );
            assert!(report.iterations <= max_iterations);
        }
    }

    #[test]
    fn an_operator_error_ends_the_solve() {
        let mut x = vec![0.0; 2];
        let mut calls = 0;
        let result = try_conjugate_gradient(
            |v, out| {
                calls += 1;
                if calls > 1 {
                    return Err("singular");
                }
                out.copy_from_slice(v);
                Ok(())
            },
            |r, z| {
                identity(r, z);
                Ok(())
            },
            &[1.0, 2.0],
            &mut x,
            &CgOptions::relative(1e-12, 10),
        );
        assert_eq!(result, Err("singular"));
    }
}
