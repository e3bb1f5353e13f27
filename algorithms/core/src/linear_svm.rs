//! A linear SVM without bias, trained as LIBLINEAR's default solver (`-s 1`, L2-regularised
//! L2-loss support vector classification in the dual) does it: dual coordinate descent with
//! shrinking (Hsieh, Chang, Lin, Keerthi, Sundararajan, *A dual coordinate descent method for
//! large-scale linear SVM*, ICML 2008, Algorithm 1 and §3.2).
//!
//! Primal: `min_w ½‖w‖² + C Σ_i max(0, 1 − y_i wᵀx_i)²`. Dual:
//! `min_α ½ αᵀ(Q + D)α − eᵀα, α ≥ 0`, with `Q_ij = y_i y_j x_iᵀx_j`, `D = I/(2C)`, and
//! `w = Σ_i α_i y_i x_i`. One coordinate step on α_i: the gradient `G = y_i wᵀx_i − 1 + α_i/(2C)`,
//! its projection `PG` (0 where α_i = 0 and G > 0), and `α_i ← max(α_i − G/Q̄_ii, 0)` with
//! `Q̄_ii = x_iᵀx_i + 1/(2C)`; w follows. An outer iteration visits the active coordinates in a
//! random order; a coordinate at 0 whose gradient exceeds the last iteration's largest
//! projected gradient is shrunk (left out) until the active set meets the tolerance
//! `max PG − min PG ≤ eps`, when every coordinate is checked again (LIBLINEAR's
//! `solve_l2r_l1l2_svc`). LIBLINEAR's defaults: C = 1, eps = 0.1, at most 1,000 iterations.
//!
//! The Isolation Kernel paper trains it on IK_a's one-hot features and on the χ² feature map
//! (its Tables 8 and 9).

use rand::seq::SliceRandom;
use rand::Rng;

use crate::error::positive;
use crate::features::Features;
use crate::CoreError;

/// Settings of [`fit_linear_svc`]; the default is LIBLINEAR's (`-c 1 -e 0.1`, 1,000 iterations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearSvcParams {
    /// Cost C of the squared hinge losses, > 0.
    pub c: f64,
    /// Stopping tolerance on the spread of the projected gradients, > 0.
    pub eps: f64,
    /// Outer iterations at most (LIBLINEAR stops there with a warning; see
    /// [`LinearSvc::reached_cap`]).
    pub max_iterations: usize,
}

impl Default for LinearSvcParams {
    fn default() -> Self {
        Self {
            c: 1.0,
            eps: 0.1,
            max_iterations: 1000,
        }
    }
}

/// A trained linear SVM: `f(x) = wᵀx`, label `+1` where f > 0, else −1 (LIBLINEAR's rule).
#[derive(Debug, Clone, PartialEq)]
pub struct LinearSvc {
    w: Vec<f64>,
    iterations: usize,
    reached_cap: bool,
    support_vectors: usize,
}

impl LinearSvc {
    /// The weights w, one per feature column.
    pub fn weights(&self) -> &[f64] {
        &self.w
    }

    /// Outer iterations taken.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// Whether the solve stopped at `max_iterations` before meeting the tolerance.
    pub fn reached_cap(&self) -> bool {
        self.reached_cap
    }

    /// Training examples with α_i > 0.
    pub fn support_vectors(&self) -> usize {
        self.support_vectors
    }

    /// `wᵀx` of every row of `x` (which must have the model's columns).
    pub fn decision(&self, x: &Features) -> Result<Vec<f64>, CoreError> {
        let cols = columns(x);
        if cols != self.w.len() {
            return Err(CoreError::shape(
                "feature columns vs the linear SVM's weights",
                self.w.len(),
                cols,
            ));
        }
        Ok((0..x.n_rows()).map(|i| dot(&self.w, x, i)).collect())
    }
}

/// Number of feature columns of `x`.
fn columns(x: &Features) -> usize {
    match x {
        Features::OneHot(f) => f.n_columns(),
        Features::Dense(f) => f.values().ncols(),
    }
}

/// `wᵀx_i`.
fn dot(w: &[f64], x: &Features, i: usize) -> f64 {
    match x {
        Features::OneHot(f) => f.row(i).iter().map(|&c| w[c as usize]).sum(),
        Features::Dense(f) => f.values().row(i).iter().zip(w).map(|(a, b)| a * b).sum(),
    }
}

/// `w += d·x_i`.
fn add(w: &mut [f64], x: &Features, i: usize, d: f64) {
    match x {
        Features::OneHot(f) => f.row(i).iter().for_each(|&c| w[c as usize] += d),
        Features::Dense(f) => f
            .values()
            .row(i)
            .iter()
            .zip(w.iter_mut())
            .for_each(|(a, w)| *w += d * a),
    }
}

/// `x_iᵀx_i`.
fn squared_norm(x: &Features, i: usize) -> f64 {
    match x {
        Features::OneHot(f) => f.row(i).len() as f64,
        Features::Dense(f) => f.values().row(i).iter().map(|a| a * a).sum(),
    }
}

/// Trains the L2-loss linear SVM on the rows of `x` with labels `y` (each −1 or +1) by dual
/// coordinate descent; `rng` orders the coordinates of each outer iteration (LIBLINEAR draws
/// them from `rand()`).
pub fn fit_linear_svc<R: Rng + ?Sized>(
    x: &Features,
    y: &[f64],
    params: &LinearSvcParams,
    rng: &mut R,
) -> Result<LinearSvc, CoreError> {
    let c = positive("c", params.c)?;
    let eps = positive("eps", params.eps)?;
    let n = x.n_rows();
    if y.len() != n {
        return Err(CoreError::shape("labels vs training rows", n, y.len()));
    }
    if n == 0 {
        return Err(CoreError::EmptyInput {
            what: "linear SVM training set",
            rows: 0,
            columns: columns(x),
            needed: "at least one row",
        });
    }
    if let Some(&bad) = y.iter().find(|&&v| v != 1.0 && v != -1.0) {
        return Err(CoreError::invalid_input("label", bad, "-1 or +1"));
    }
    if let Features::Dense(f) = x {
        crate::error::check_finite("linear SVM training", f.values())?;
    }
    let diag = 0.5 / c;
    let qd: Vec<f64> = (0..n).map(|i| squared_norm(x, i) + diag).collect();
    let mut w = vec![0.0; columns(x)];
    let mut alpha = vec![0.0; n];
    let mut index: Vec<usize> = (0..n).collect();
    let mut active = n;
    // (LIBLINEAR's PGmin_old serves only the upper bound of the L1 loss: none here.)
    let mut pg_max_old = f64::INFINITY;
    let mut iterations = 0;
    let mut reached_cap = true;
    while iterations < params.max_iterations {
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        index[..active].shuffle(rng);
        let mut s = 0;
        while s < active {
            let i = index[s];
            let yi = y[i];
            let g = yi * dot(&w, x, i) - 1.0 + alpha[i] * diag;
            let pg = if alpha[i] == 0.0 {
                if g > pg_max_old {
                    // Shrink: α_i stays 0 while the others converge.
                    active -= 1;
                    index.swap(s, active);
                    continue;
                }
                g.min(0.0)
            } else {
                g
            };
            pg_max = pg_max.max(pg);
            pg_min = pg_min.min(pg);
            if pg.abs() > 1e-12 {
                let old = alpha[i];
                alpha[i] = (old - g / qd[i]).max(0.0);
                add(&mut w, x, i, (alpha[i] - old) * yi);
            }
            s += 1;
        }
        iterations += 1;
        if pg_max - pg_min <= eps {
            if active == n {
                reached_cap = false;
                break;
            }
            // The shrunk coordinates may violate the tolerance: check them all again.
            active = n;
            pg_max_old = f64::INFINITY;
            continue;
        }
        pg_max_old = if pg_max <= 0.0 { f64::INFINITY } else { pg_max };
    }
    Ok(LinearSvc {
        w,
        iterations,
        reached_cap,
        support_vectors: alpha.iter().filter(|&&a| a > 0.0).count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::DenseFeatures;
    use crate::one_hot::OneHotFeatures;
    use ndarray::Array2;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn dense(x: Array2<f64>) -> Features {
        let d = x.ncols();
        Features::Dense(DenseFeatures::new(x, vec![d]).unwrap())
    }

    /// The primal objective ½‖w‖² + C Σ max(0, 1 − y wᵀx)².
    fn primal(w: &[f64], x: &Array2<f64>, y: &[f64], c: f64) -> f64 {
        let reg: f64 = w.iter().map(|v| v * v).sum::<f64>() / 2.0;
        let loss: f64 = x
            .rows()
            .into_iter()
            .zip(y)
            .map(|(r, &yi)| {
                let m = 1.0 - yi * r.iter().zip(w).map(|(a, b)| a * b).sum::<f64>();
                m.max(0.0).powi(2)
            })
            .sum();
        reg + c * loss
    }

    /// The primal minimiser by Newton's method on the smooth, strongly convex primal (the
    /// generalised Hessian I + 2C Σ_{active} x xᵀ), an independent computation.
    fn newton(x: &Array2<f64>, y: &[f64], c: f64) -> Vec<f64> {
        use ndarray_linalg::Solve;
        let d = x.ncols();
        let mut w = ndarray::Array1::<f64>::zeros(d);
        for _ in 0..100 {
            let mut grad = w.clone();
            let mut hess = Array2::<f64>::eye(d);
            for (r, &yi) in x.rows().into_iter().zip(y) {
                let m = 1.0 - yi * r.dot(&w);
                if m > 0.0 {
                    grad.scaled_add(-2.0 * c * m * yi, &r);
                    for a in 0..d {
                        for b in 0..d {
                            hess[[a, b]] += 2.0 * c * r[a] * r[b];
                        }
                    }
                }
            }
            let step = hess.solve(&grad).unwrap();
            w -= &step;
            if step.iter().map(|v| v.abs()).fold(0.0, f64::max) < 1e-13 {
                break;
            }
        }
        w.to_vec()
    }

    fn blobs(n: usize, d: usize, shift: f64, seed: u64) -> (Array2<f64>, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let y: Vec<f64> = (0..n)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let x = Array2::from_shape_fn((n, d), |(i, _)| y[i] * shift + rng.random_range(-1.0..1.0));
        (x, y)
    }

    /// Against an independent solve of the primal (Newton): the same w to the tolerance, and a
    /// primal objective within a hair of the minimum, for overlapping classes and two C.
    #[test]
    fn agrees_with_the_newton_solution_of_the_primal() {
        for (c, seed) in [(1.0, 1), (0.05, 2)] {
            let (x, y) = blobs(120, 4, 0.3, seed);
            let expected = newton(&x, &y, c);
            let params = LinearSvcParams {
                c,
                eps: 1e-9,
                max_iterations: 100_000,
            };
            let svc = fit_linear_svc(
                &dense(x.clone()),
                &y,
                &params,
                &mut ChaCha8Rng::seed_from_u64(3),
            )
            .unwrap();
            assert!(!svc.reached_cap());
            for (a, b) in svc.weights().iter().zip(&expected) {
                assert!((a - b).abs() < 1e-6, "{a} vs {b}");
            }
            let (p, p_star) = (
                primal(svc.weights(), &x, &y, c),
                primal(&expected, &x, &y, c),
            );
            assert!(p >= p_star - 1e-9 && p - p_star < 1e-8 * p_star.max(1.0));
        }
    }

    /// LIBLINEAR's default tolerance (0.1) still lands near the optimum: the primal within 1 %.
    #[test]
    fn the_default_tolerance_is_near_the_optimum() {
        let (x, y) = blobs(300, 5, 0.2, 4);
        let expected = newton(&x, &y, 1.0);
        let svc = fit_linear_svc(
            &dense(x.clone()),
            &y,
            &LinearSvcParams::default(),
            &mut ChaCha8Rng::seed_from_u64(5),
        )
        .unwrap();
        let (p, p_star) = (
            primal(svc.weights(), &x, &y, 1.0),
            primal(&expected, &x, &y, 1.0),
        );
        assert!(p >= p_star - 1e-9 && p < 1.01 * p_star, "{p} vs {p_star}");
    }

    /// One-hot rows train the same model as their dense 0/1 form (same coordinate order).
    #[test]
    fn one_hot_rows_give_the_model_of_their_dense_form() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let (n, blocks, width) = (200, 5, 4);
        let cols: Vec<u32> = (0..n * blocks)
            .map(|k| ((k % blocks) * width) as u32 + rng.random_range(0..width as u32))
            .collect();
        let y: Vec<f64> = (0..n)
            .map(|i| {
                // The label follows the first block's cell, with noise.
                let c = cols[i * blocks] % width as u32;
                if (c < 2) ^ rng.random_bool(0.1) {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let one_hot = OneHotFeatures::new(n, blocks, blocks * width, cols.clone()).unwrap();
        let mut x = Array2::zeros((n, blocks * width));
        for (k, &c) in cols.iter().enumerate() {
            x[[k / blocks, c as usize]] = 1.0;
        }
        let params = LinearSvcParams::default();
        let a = fit_linear_svc(
            &Features::OneHot(one_hot.clone()),
            &y,
            &params,
            &mut ChaCha8Rng::seed_from_u64(7),
        )
        .unwrap();
        let b = fit_linear_svc(
            &dense(x.clone()),
            &y,
            &params,
            &mut ChaCha8Rng::seed_from_u64(7),
        )
        .unwrap();
        for (p, q) in a.weights().iter().zip(b.weights()) {
            assert!((p - q).abs() < 1e-12);
        }
        let fa = a.decision(&Features::OneHot(one_hot)).unwrap();
        let fb = b.decision(&dense(x)).unwrap();
        let accuracy = fa
            .iter()
            .zip(&y)
            .filter(|(f, &y)| (**f > 0.0) == (y > 0.0))
            .count() as f64
            / n as f64;
        assert!(accuracy > 0.8, "{accuracy}");
        for (p, q) in fa.iter().zip(&fb) {
            assert!((p - q).abs() < 1e-10);
        }
    }

    /// Separable classes: every training example classified correctly.
    #[test]
    fn separable_classes_are_separated() {
        let (x, y) = blobs(100, 3, 2.0, 8);
        let svc = fit_linear_svc(
            &dense(x.clone()),
            &y,
            &LinearSvcParams::default(),
            &mut ChaCha8Rng::seed_from_u64(9),
        )
        .unwrap();
        let f = svc.decision(&dense(x)).unwrap();
        assert!(f.iter().zip(&y).all(|(f, y)| f * y > 0.0));
        assert!(svc.support_vectors() > 0 && svc.support_vectors() < 100);
    }

    #[test]
    fn bad_input_is_an_error() {
        let (x, y) = blobs(10, 2, 1.0, 10);
        let f = dense(x.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let p = LinearSvcParams::default();
        assert!(fit_linear_svc(&f, &y[..9], &p, &mut rng).is_err());
        let mut bad = y.clone();
        bad[3] = 0.5;
        assert!(fit_linear_svc(&f, &bad, &p, &mut rng).is_err());
        for c in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(fit_linear_svc(&f, &y, &LinearSvcParams { c, ..p }, &mut rng).is_err());
        }
        assert!(fit_linear_svc(&f, &y, &LinearSvcParams { eps: 0.0, ..p }, &mut rng).is_err());
        let mut nan = x.clone();
        nan[[2, 1]] = f64::NAN;
        assert!(fit_linear_svc(&dense(nan), &y, &p, &mut rng).is_err());
        assert!(fit_linear_svc(&dense(Array2::zeros((0, 2))), &[], &p, &mut rng).is_err());
        let svc = fit_linear_svc(&f, &y, &p, &mut rng).unwrap();
        assert!(svc.decision(&dense(Array2::zeros((2, 3)))).is_err());
    }
}
