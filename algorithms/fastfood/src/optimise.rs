//! L-BFGS (argmin, with the Moré-Thuente line search) on an objective that returns its value
//! and gradient together: each point is evaluated once however the solver asks for it, the
//! best finite point seen is kept, and a point where the objective fails (a matrix not
//! positive definite, an overflow) ends the run at the best point so far instead of failing.

use std::sync::Mutex;

use argmin::core::{CostFunction, Executor, Gradient, State, TerminationReason, TerminationStatus};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;

use crate::error::FastfoodError;

/// Settings of the L-BFGS runs (spec §5 recommendations; [REVRAND]'s scipy run uses
/// `maxit = 1000`, `ftol = 1e-5`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LbfgsSettings {
    /// Iterations at most.
    pub max_iterations: usize,
    /// Stored correction pairs.
    pub memory: usize,
    /// Stop when the objective changes by less than this between iterations.
    pub tol_cost: f64,
    /// Stop when the gradient norm is below this.
    pub tol_grad: f64,
}

impl Default for LbfgsSettings {
    fn default() -> Self {
        Self {
            max_iterations: 1000,
            memory: 10,
            tol_cost: 1e-7,
            tol_grad: 1e-6,
        }
    }
}

impl LbfgsSettings {
    pub fn check(&self) -> Result<(), FastfoodError> {
        crate::error::at_least_one("max_iterations", self.max_iterations)?;
        crate::error::at_least_one("L-BFGS memory", self.memory)?;
        for (name, v) in [("tol_cost", self.tol_cost), ("tol_grad", self.tol_grad)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(FastfoodError::InvalidParameter {
                    name,
                    value: v.to_string(),
                    expected: "a finite number >= 0",
                });
            }
        }
        Ok(())
    }
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A tolerance was met.
    Converged,
    /// `max_iterations` reached.
    MaxIterations,
    /// The line search could not make progress, or the objective failed at a trial point.
    LineSearch,
    /// The caller asked to stop (time budget).
    Interrupted,
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Converged => "converged",
            Stop::MaxIterations => "max_iterations",
            Stop::LineSearch => "line_search",
            Stop::Interrupted => "interrupted",
        }
    }
}

/// The result of a run: the best point seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Optimum {
    pub theta: Vec<f64>,
    pub value: f64,
    /// L-BFGS iterations (after a `LineSearch` stop: the evaluations that improved the best).
    pub iterations: usize,
    pub evaluations: usize,
    pub stop: Stop,
}

struct Memo {
    last: Option<(Vec<f64>, f64, Vec<f64>)>,
    best: Option<(Vec<f64>, f64)>,
    evaluations: usize,
    /// Evaluations that improved on the best point (every L-BFGS iteration does).
    improvements: usize,
    interrupted: bool,
}

struct Problem<'a, F> {
    f: &'a F,
    stop: &'a (dyn Fn(usize) -> bool + Sync),
    memo: &'a Mutex<Memo>,
}

impl<F> Problem<'_, F>
where
    F: Fn(&[f64]) -> Result<(f64, Vec<f64>), FastfoodError>,
{
    fn eval(&self, p: &[f64]) -> Result<(f64, Vec<f64>), argmin::core::Error> {
        let mut memo = self.memo.lock().expect("memo lock");
        if let Some((q, v, g)) = &memo.last {
            if q.as_slice() == p {
                return Ok((*v, g.clone()));
            }
        }
        if (self.stop)(memo.evaluations) {
            memo.interrupted = true;
            return Err(argmin::core::Error::msg("interrupted"));
        }
        memo.evaluations += 1;
        let (v, g) = (self.f)(p).map_err(argmin::core::Error::new)?;
        if !v.is_finite() || g.iter().any(|x| !x.is_finite()) {
            return Err(argmin::core::Error::msg("objective not finite"));
        }
        if memo.best.as_ref().is_none_or(|(_, b)| v < *b) {
            memo.best = Some((p.to_vec(), v));
            memo.improvements += 1;
        }
        memo.last = Some((p.to_vec(), v, g.clone()));
        Ok((v, g))
    }
}

impl<F> CostFunction for Problem<'_, F>
where
    F: Fn(&[f64]) -> Result<(f64, Vec<f64>), FastfoodError>,
{
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        Ok(self.eval(p)?.0)
    }
}

impl<F> Gradient for Problem<'_, F>
where
    F: Fn(&[f64]) -> Result<(f64, Vec<f64>), FastfoodError>,
{
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, p: &Vec<f64>) -> Result<Vec<f64>, argmin::core::Error> {
        Ok(self.eval(p)?.1)
    }
}

/// Minimises `f` from `start`. `stop(evaluations)` is polled before each evaluation. Fails only
/// if `f` fails at the start.
pub fn minimise<F>(
    f: &F,
    start: Vec<f64>,
    settings: &LbfgsSettings,
    stop: &(dyn Fn(usize) -> bool + Sync),
) -> Result<Optimum, FastfoodError>
where
    F: Fn(&[f64]) -> Result<(f64, Vec<f64>), FastfoodError>,
{
    settings.check()?;
    let (v0, g0) = f(&start)?;
    if !v0.is_finite() || g0.iter().any(|x| !x.is_finite()) {
        return Err(FastfoodError::solve(
            "L-BFGS",
            "the objective is not finite at the start",
        ));
    }
    let memo = Mutex::new(Memo {
        last: Some((start.clone(), v0, g0)),
        best: Some((start.clone(), v0)),
        evaluations: 1,
        improvements: 0,
        interrupted: false,
    });
    let problem = Problem {
        f,
        stop,
        memo: &memo,
    };
    let linesearch = MoreThuenteLineSearch::new();
    let solver = LBFGS::new(linesearch, settings.memory)
        .with_tolerance_cost(settings.tol_cost)
        .and_then(|s| s.with_tolerance_grad(settings.tol_grad))
        .map_err(|e| FastfoodError::solve("L-BFGS setup", e))?;
    let run = Executor::new(problem, solver)
        .configure(|state| state.param(start).max_iters(settings.max_iterations as u64))
        .run();
    let (iterations, mut stop_reason) = match &run {
        Ok(res) => {
            let st = res.state();
            let reason = match st.get_termination_status() {
                TerminationStatus::Terminated(TerminationReason::MaxItersReached) => {
                    Stop::MaxIterations
                }
                TerminationStatus::Terminated(TerminationReason::SolverConverged)
                | TerminationStatus::Terminated(TerminationReason::TargetCostReached) => {
                    Stop::Converged
                }
                _ => Stop::LineSearch,
            };
            (st.get_iter() as usize, reason)
        }
        Err(_) => (0, Stop::LineSearch),
    };
    let run_ok = run.is_ok();
    drop(run);
    let memo = memo.into_inner().expect("memo lock");
    if memo.interrupted {
        stop_reason = Stop::Interrupted;
    }
    let (theta, value) = memo.best.expect("the start was evaluated");
    Ok(Optimum {
        theta,
        value,
        // When argmin stops with an error its state is gone: count the improving evaluations
        // (an upper bound on the iterations, as line-search trials can improve too).
        iterations: if run_ok {
            iterations
        } else {
            memo.improvements
        },
        evaluations: memo.evaluations,
        stop: stop_reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimises_a_quadratic_and_rosenbrock() {
        let quad = |p: &[f64]| -> Result<(f64, Vec<f64>), FastfoodError> {
            let v = (p[0] - 3.0).powi(2) + 10.0 * (p[1] + 1.0).powi(2);
            Ok((v, vec![2.0 * (p[0] - 3.0), 20.0 * (p[1] + 1.0)]))
        };
        let never = |_: usize| false;
        let o = minimise(&quad, vec![0.0, 0.0], &LbfgsSettings::default(), &never).unwrap();
        assert!((o.theta[0] - 3.0).abs() < 1e-5 && (o.theta[1] + 1.0).abs() < 1e-5);
        let rosen = |p: &[f64]| -> Result<(f64, Vec<f64>), FastfoodError> {
            let (a, b) = (p[0], p[1]);
            let v = (1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2);
            Ok((
                v,
                vec![
                    -2.0 * (1.0 - a) - 400.0 * a * (b - a * a),
                    200.0 * (b - a * a),
                ],
            ))
        };
        let s = LbfgsSettings {
            tol_cost: 0.0,
            tol_grad: 1e-10,
            ..Default::default()
        };
        let o = minimise(&rosen, vec![-1.2, 1.0], &s, &never).unwrap();
        assert!(o.value < 1e-10, "{o:?}");
    }

    #[test]
    fn failures_and_interruptions_keep_the_best_point() {
        // Fails beyond x = 2: the minimum of (x − 5)² restricted to where it is defined.
        let f = |p: &[f64]| -> Result<(f64, Vec<f64>), FastfoodError> {
            if p[0] > 2.0 {
                return Err(FastfoodError::solve("the objective", "outside"));
            }
            Ok(((p[0] - 5.0).powi(2), vec![2.0 * (p[0] - 5.0)]))
        };
        let never = |_: usize| false;
        let o = minimise(&f, vec![0.0], &LbfgsSettings::default(), &never).unwrap();
        assert!(o.theta[0] <= 2.0 && o.value <= 25.0);
        let after_three = |e: usize| e >= 3;
        let quad = |p: &[f64]| -> Result<(f64, Vec<f64>), FastfoodError> {
            Ok((p[0] * p[0], vec![2.0 * p[0]]))
        };
        let o = minimise(&quad, vec![10.0], &LbfgsSettings::default(), &after_three).unwrap();
        assert!(o.evaluations <= 3 && o.value <= 100.0);
    }
}
