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

use crate::seeds::Seeds;

/// What a cell gets besides its parameters and shared data.
pub struct CellContext<'a> {
    /// Seed material of the cell.
    pub seeds: Seeds,
    /// Seed material of the repetition's data streams (shared by every cell of it).
    stream_seeds: Seeds,
    progress: &'a (dyn Fn(f64) + Sync),
    deadline: Option<Instant>,
    stopped: AtomicBool,
}

impl<'a> CellContext<'a> {
    /// A context with a progress callback (fraction done in [0, 1]) and an optional budget.
    pub fn new(
        seeds: Seeds,
        stream_seeds: Seeds,
        progress: &'a (dyn Fn(f64) + Sync),
        budget: Option<Duration>,
    ) -> Self {
        Self {
            seeds,
            stream_seeds,
            progress,
            // A budget too large to represent is no budget.
            deadline: budget.and_then(|b| Instant::now().checked_add(b)),
            stopped: AtomicBool::new(false),
        }
    }

    /// An independent ChaCha8 stream for one purpose (`"trees"`, `"features"`, ...).
    pub fn rng(&self, purpose: &str) -> ChaCha8Rng {
        self.seeds.rng(purpose)
    }

    /// `rows` in the repetition's seeded random order: the same for every cell (every method)
    /// of the repetition, another in each repetition (an online stream, e.g. the Isolation
    /// Kernel paper's shuffled train+test sequence). A kind that uses it is not deterministic.
    pub fn shuffled(&self, rows: &[usize]) -> Vec<usize> {
        let order = datasets::shuffled_order(rows.len(), &mut self.stream_seeds.rng("stream"));
        order.into_iter().map(|k| rows[k]).collect()
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
