//! Preconditioned conjugate gradient for symmetric positive definite systems `A x = b`.
//!
//! Matrix-free: the caller applies `A`. Reductions are sequential, so the iterates do not depend
//! on the thread count.

/// Outcome of a CG solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CgReport {
    pub iterations: usize,
    /// Final `‖b − A x‖₂`.
    pub residual_norm: f64,
    pub converged: bool,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
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
    let n = b.len();
    let target = rel_tol * dot(b, b).sqrt();
    let mut ax = vec![0.0; n];
    apply(x, &mut ax);
    let mut r: Vec<f64> = b.iter().zip(&ax).map(|(bi, ai)| bi - ai).collect();
    let mut z = vec![0.0; n];
    precondition(&r, &mut z);
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    let mut ap = vec![0.0; n];
    let mut iterations = 0;
    let mut residual_norm = dot(&r, &r).sqrt();
    while residual_norm > target && iterations < max_iter {
        apply(&p, &mut ap);
        let pap = dot(&p, &ap);
        if pap <= 0.0 || !pap.is_finite() {
            break;
        }
        let alpha = rz / pap;
        for i in 0..n {
            x[i] += alpha * p[i];
            r[i] -= alpha * ap[i];
        }
        precondition(&r, &mut z);
        let rz_next = dot(&r, &z);
        let beta = rz_next / rz;
        rz = rz_next;
        for i in 0..n {
            p[i] = z[i] + beta * p[i];
        }
        iterations += 1;
        residual_norm = dot(&r, &r).sqrt();
    }
    CgReport {
        iterations,
        residual_norm,
        converged: residual_norm <= target,
    }
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
}
