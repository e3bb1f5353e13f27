//! The context a cell runs in: its seeds, a progress callback and a time budget.
//!
//! Long cells report progress with [`CellContext::progress`] (the runner's bar or log shows it)
//! and poll [`CellContext::over_budget`] at natural stopping points (a checkpoint, an
//! evaluation, a block of the stream). A cell that stops there returns the rows it has; the
//! runner records it as "did not finish" (as the Isolation Kernel paper reports OGD on its
//! largest sets), never as a failure.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand_chacha::ChaCha8Rng;

use crate::cell::Seeds;

/// What a cell gets besides its parameters and shared data.
pub struct CellContext<'a> {
    /// Seed material of the cell.
    pub seeds: Seeds,
    /// Repetition index.
    pub rep: usize,
    progress: &'a (dyn Fn(f64) + Sync),
    deadline: Option<Instant>,
    stopped: AtomicBool,
}

impl<'a> CellContext<'a> {
    /// A context with a progress callback (fraction done in [0, 1]) and an optional budget.
    pub fn new(
        seeds: Seeds,
        rep: usize,
        progress: &'a (dyn Fn(f64) + Sync),
        budget: Option<Duration>,
    ) -> Self {
        Self {
            seeds,
            rep,
            progress,
            deadline: budget.map(|b| Instant::now() + b),
            stopped: AtomicBool::new(false),
        }
    }

    /// An independent ChaCha8 stream for one purpose (`"trees"`, `"features"`, ...).
    pub fn rng(&self, purpose: &str) -> ChaCha8Rng {
        self.seeds.rng(purpose)
    }

    /// Reports that `done` of `total` steps are finished.
    pub fn progress(&self, done: usize, total: usize) {
        if total > 0 {
            (self.progress)((done as f64 / total as f64).clamp(0.0, 1.0));
        }
    }

    /// Whether the cell's time budget is spent. Once it says yes, the cell is recorded as "did
    /// not finish": stop at once and return the rows computed so far.
    pub fn over_budget(&self) -> bool {
        let over = self.deadline.is_some_and(|d| Instant::now() >= d);
        if over {
            self.stopped.store(true, Ordering::SeqCst);
        }
        over
    }

    /// Whether the cell stopped for its budget.
    pub fn did_not_finish(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
}
