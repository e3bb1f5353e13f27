//! The kernel-width search of The Mondrian Kernel's Fig. 8 (authors' `select_width`,
//! `utils.py:97-137`; spec §6.4): a search over `lg = log₂ λ` that steps by ±1 while the best
//! error is above a threshold (alternating down and up, forced down while the best point is the
//! lowest tried) and then bisects towards the better neighbour of the best point. Every
//! evaluation trains a fresh model, so errors are noisy and the search may revisit nearly the
//! same λ.

/// One evaluation of the search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WidthEvaluation {
    /// `log₂ λ`.
    pub lg: f64,
    /// The error at `λ = 2^lg`.
    pub error: f64,
}

/// Runs the search from `lg = 0` for `1 + num_iters` evaluations (the authors: 100 for random
/// Fourier features, 50 for random binning), stepping by ±1 while the best error exceeds
/// `threshold` (the authors: 20 %). Returns the evaluations in the order made. `evaluate(lg)`
/// returns the error at `λ = 2^lg`; its first error stops the search.
pub fn select_width<E>(
    num_iters: usize,
    threshold: f64,
    mut evaluate: impl FnMut(f64) -> Result<f64, E>,
) -> Result<Vec<WidthEvaluation>, E> {
    let first = WidthEvaluation {
        lg: 0.0,
        error: evaluate(0.0)?,
    };
    let mut done = vec![first];
    // Tried points sorted by lg (stable: equal lg keep their evaluation order).
    let mut sorted = vec![first];
    for i in 0..num_iters {
        let a = sorted.iter().enumerate().fold(0, |best, (k, e)| {
            if e.error < sorted[best].error {
                k
            } else {
                best
            }
        });
        let high = sorted[a].error > threshold;
        let last = sorted.len() - 1;
        let lg = if a == 0 || (high && i % 2 == 0) {
            sorted[0].lg - 1.0
        } else if a == last || (high && i % 2 == 1) {
            sorted[last].lg + 1.0
        } else if sorted[a + 1].error < sorted[a - 1].error {
            (sorted[a + 1].lg + sorted[a].lg) / 2.0
        } else {
            (sorted[a - 1].lg + sorted[a].lg) / 2.0
        };
        let e = WidthEvaluation {
            lg,
            error: evaluate(lg)?,
        };
        done.push(e);
        let at = sorted.partition_point(|x| x.lg <= lg);
        sorted.insert(at, e);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_a_hand_trace() {
        // Flat above 20 % near lg = 0 (minimum at 0), a valley with minimum 5 at lg = -5.
        let f = |lg: f64| -> Result<f64, ()> {
            Ok(if lg > -3.5 {
                25.0 + 0.1 * lg.abs()
            } else {
                5.0 + (lg + 5.0).abs()
            })
        };
        let lgs: Vec<f64> = select_width(11, 20.0, f)
            .unwrap()
            .iter()
            .map(|e| e.lg)
            .collect();
        // 0; above 20 %: i = 0 best is the lowest -> down; i = 1 best is the highest -> up;
        // then the best (lg 0) is inside: down on even i, up on odd i; at -4 the error drops
        // below 20 % and the best is the lowest -> down to -5, -6; then bisect towards the
        // better neighbour (ties go to the lower one).
        assert_eq!(
            lgs,
            vec![0.0, -1.0, 1.0, -2.0, 2.0, -3.0, 3.0, -4.0, -5.0, -6.0, -5.5, -5.25]
        );
    }

    #[test]
    fn counts_and_errors() {
        let evals = select_width(5, 20.0, |lg| Ok::<_, ()>(lg * lg)).unwrap();
        assert_eq!(evals.len(), 6);
        assert_eq!(
            evals[0],
            WidthEvaluation {
                lg: 0.0,
                error: 0.0
            }
        );
        let failing = select_width(5, 20.0, |lg| if lg < -1.5 { Err("boom") } else { Ok(30.0) });
        assert_eq!(failing, Err("boom"));
    }
}
