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
/// positive definite along `p`. (One system of [`try_conjugate_gradient_lockstep`].)
pub fn try_conjugate_gradient<E>(
    mut apply: impl FnMut(&[f64], &mut [f64]) -> Result<(), E>,
    precondition: impl FnMut(&[f64], &mut [f64]) -> Result<(), E>,
    b: &[f64],
    x: &mut [f64],
    options: &CgOptions,
) -> Result<CgReport, E> {
    let mut xs = [x.to_vec()];
    let reports = try_conjugate_gradient_lockstep(
        |ps, aps| apply(ps[0], &mut *aps[0]),
        precondition,
        &[b],
        &mut xs,
        options,
    )?;
    x.copy_from_slice(&xs[0]);
    Ok(reports[0])
}

/// CG on several systems `A x_c = b_c` with one operator, in lockstep: each iteration applies
/// `A` once to the search directions of every system still running (`apply` gets them together,
/// as a matrix-free operator whose cost is one pass over its data wants), and each system then
/// takes exactly the steps [`try_conjugate_gradient`] takes alone (the same operations in the
/// same order, so the same bits whenever `apply` computes each direction's product as it would
/// alone). A system stops by its own test; the others go on.
pub fn try_conjugate_gradient_lockstep<E>(
    mut apply: impl FnMut(&[&[f64]], &mut [&mut [f64]]) -> Result<(), E>,
    mut precondition: impl FnMut(&[f64], &mut [f64]) -> Result<(), E>,
    b: &[&[f64]],
    x: &mut [Vec<f64>],
    options: &CgOptions,
) -> Result<Vec<CgReport>, E> {
    let dot = options.dot;
    let systems = b.len();
    assert_eq!(
        systems,
        x.len(),
        "internal error: one initial guess per right-hand side"
    );
    let n = b.first().map_or(0, |b| b.len());
    let target: Vec<f64> = b
        .iter()
        .map(|b| match options.stop {
            CgStop::Relative(rel_tol) => rel_tol * dot(b, b).sqrt(),
            CgStop::Below(threshold) => threshold,
        })
        .collect();
    let mut r: Vec<Vec<f64>> = if options.zero_start {
        b.iter().map(|b| b.to_vec()).collect()
    } else {
        let mut ax = vec![vec![0.0; n]; systems];
        {
            let xs: Vec<&[f64]> = x.iter().map(|v| v.as_slice()).collect();
            let mut outs: Vec<&mut [f64]> = ax.iter_mut().map(|v| v.as_mut_slice()).collect();
            apply(&xs, &mut outs)?;
        }
        b.iter()
            .zip(&ax)
            .map(|(b, ax)| b.iter().zip(ax).map(|(bi, ai)| bi - ai).collect())
            .collect()
    };
    let mut z = vec![vec![0.0; n]; systems];
    for (r, z) in r.iter().zip(z.iter_mut()) {
        precondition(r, z)?;
    }
    let mut p = z.clone();
    let mut rz: Vec<f64> = r.iter().zip(&z).map(|(r, z)| dot(r, z)).collect();
    let mut ap = vec![vec![0.0; n]; systems];
    let mut iterations = vec![0; systems];
    let mut residual_norm: Vec<f64> = r.iter().map(|r| dot(r, r).sqrt()).collect();
    // A system leaves when its test is met, its iterations are spent or p·Ap fails.
    let mut running: Vec<bool> = (0..systems)
        .map(|c| !options.stop.reached(residual_norm[c], target[c]) && options.max_iterations > 0)
        .collect();
    loop {
        let active: Vec<usize> = (0..systems).filter(|&c| running[c]).collect();
        if active.is_empty() {
            break;
        }
        {
            let ps: Vec<&[f64]> = active.iter().map(|&c| p[c].as_slice()).collect();
            let mut outs: Vec<&mut [f64]> = ap
                .iter_mut()
                .enumerate()
                .filter(|(c, _)| running[*c])
                .map(|(_, v)| v.as_mut_slice())
                .collect();
            apply(&ps, &mut outs)?;
        }
        for &c in &active {
            let (x, r, z, p, ap) = (&mut x[c], &mut r[c], &mut z[c], &mut p[c], &ap[c]);
            let pap = dot(p, ap);
            if pap <= 0.0 || !pap.is_finite() {
                running[c] = false;
                continue;
            }
            let alpha = rz[c] / pap;
            for i in 0..n {
                x[i] += alpha * p[i];
                r[i] -= alpha * ap[i];
            }
            precondition(r, z)?;
            let rz_next = dot(r, z);
            let beta = rz_next / rz[c];
            rz[c] = rz_next;
            for i in 0..n {
                p[i] = z[i] + beta * p[i];
            }
            iterations[c] += 1;
            residual_norm[c] = dot(r, r).sqrt();
            running[c] = !options.stop.reached(residual_norm[c], target[c])
                && iterations[c] < options.max_iterations;
        }
    }
    Ok((0..systems)
        .map(|c| CgReport {
            iterations: iterations[c],
            residual_norm: residual_norm[c],
            converged: options.stop.converged(residual_norm[c], target[c]),
        })
        .collect())
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

    /// Systems solved in lockstep take the steps each takes alone, bit for bit, each stopping
    /// by its own test (one needs no step at all, one stops at the threshold early).
    #[test]
    fn lockstep_systems_take_the_steps_each_takes_alone() {
        use ndarray::ArrayView1;
        let a: ndarray::Array2<f64> = array![
            [4.0, 1.0, 0.5, 0.1],
            [1.0, 3.0, 0.2, 0.3],
            [0.5, 0.2, 2.0, 0.7],
            [0.1, 0.3, 0.7, 5.0]
        ];
        // The third is solved by the start (A·0.1 up to rounding): no step.
        let rhs: [[f64; 4]; 3] = [[1.0, -2.0, 3.0, 0.25], [0.0; 4], [0.56, 0.45, 0.34, 0.61]];
        let diag: Vec<f64> = a.diag().to_vec();
        let options = CgOptions {
            stop: CgStop::Below(2e-3),
            max_iterations: 10,
            dot: sequential_dot,
            zero_start: false,
        };
        let product = |v: &[f64], out: &mut [f64]| {
            out.copy_from_slice(a.dot(&ArrayView1::from(v)).as_slice().unwrap());
        };
        let mut calls = 0;
        let mut together = vec![vec![0.1; 4]; 3];
        let reports = try_conjugate_gradient_lockstep(
            |ps, outs| {
                calls += 1;
                for (p, out) in ps.iter().zip(outs.iter_mut()) {
                    product(p, out);
                }
                Ok::<_, ()>(())
            },
            |r, z| {
                jacobi(r, &diag, z);
                Ok(())
            },
            &[&rhs[0], &rhs[1], &rhs[2]],
            &mut together,
            &options,
        )
        .unwrap();
        let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        for c in 0..3 {
            let mut alone = vec![0.1; 4];
            let report = try_conjugate_gradient(
                |v, out| {
                    product(v, out);
                    Ok::<_, ()>(())
                },
                |r, z| {
                    jacobi(r, &diag, z);
                    Ok(())
                },
                &rhs[c],
                &mut alone,
                &options,
            )
            .unwrap();
            assert_eq!(bits(&alone), bits(&together[c]), "system {c}");
            assert_eq!(report, reports[c], "system {c}");
        }
        // One pass of the operator for the start and one per lockstep iteration.
        let most = reports.iter().map(|r| r.iterations).max().unwrap();
        assert_eq!(calls, 1 + most);
        assert_eq!(reports[2].iterations, 0);
        assert!(reports[0].iterations > 1);
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
