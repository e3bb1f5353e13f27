//! Sequential Monte Carlo over partitions, one run per tree (spec §5, Algorithm-2 style as in
//! tess19, and §5.1 / §5.2 for the variants).
//!
//! 1. Init: M particles, each the root cell with its own clock; log w = log(1/M);
//!    logL_prev = logL(root).
//! 2. Loop (stopping first if every particle is finished or the highest-weight ("MAP")
//!    particle already has `l.max` cuts):
//!    1. resample multinomially with probabilities W (every iteration after the first) and reset
//!       the weights to 1/M;
//!    2. propagate every unfinished particle by one generative step; after a cut,
//!       log w += logL_new − logL_prev;
//!    3. normalise W = exp(log w − max) / Σ;
//!    4. loop guard: stop once the MAP particle's cut count has been seen in more than 100
//!       iterations.
//!
//! **Generative step, tess19 scheme** ([`CutRate::HalfDiameter`]): choose a cuttable cell with
//! probability ∝ Λ_a, try the rejection sampler; if it gives up, retry (choosing the cell again)
//! up to `retries` more times; after a cut draw the next clock τ_new = τ_prev + Exp(Σ_a Λ_a),
//! the sum over *all* cells of the new partition as in tess19 (spec §3; paused cells included).
//! The root clock is τ₁ ~ Exp(Λ_root). A particle is finished once its clock reaches the budget
//! τ or no cell is cuttable. With τ = ∞ the clocks cannot stop anything and are not drawn.
//!
//! **Generative step, enclosing ball** ([`CutRate::EnclosingBall`], the main text's Algorithm 2
//! with its spherical approximation): as tess19's step (cell ∝ Λ_a, `max_rejections` tries,
//! `retries` more cells, the same clock), with Λ_a the rate of the cell's ball (uniform priors) or
//! the exact rate of its box (Mondrian priors) and proposals from Λ restricted to it, kept when
//! they hit the cell's training items.
//!
//! **Generative step, exact thinning** ([`CutRate::ExactThinning`], Supp. Alg. 1): competing
//! exponential clocks per cuttable cell at rate r_a (enclosing-ball radius) run as one
//! superposed Poisson process of rate Σ_a r_a; each proposal is attributed to a cell ∝ r_a and
//! drawn from Λ restricted to its ball; the first one hitting its cell is the cut (the other
//! clocks are memoryless, so nothing else needs storing). The step finishes the particle when the
//! time passes τ. The pausing rule applies here too (interpretation: paused cells have no clock).
//! A cell that proposals essentially never hit (e.g. zero prior weight on every axis along which
//! its training items differ) would loop for ever with τ = ∞; after [`THINNING_MISSES`]
//! consecutive misses the particle is declared finished.
//!
//! **Likelihood-free variants** (uRTF.i / MRTF.i, §5.2): one particle, drawn from the prior with
//! the pausing rule, no weighting or resampling.

use std::sync::Arc;

use rand::Rng;
use rand_distr::Exp1;

use crate::cell::{Cell, Context};
use crate::diameter::Scratch;
use crate::hyperplane::{propose_ball, propose_box, propose_rejection, DirectionBuffer};
use crate::prior::PriorKind;
use crate::settings::CutRate;

/// The loop guard of spec §5 step 2.4: a MAP cut count seen in more iterations ends the run.
pub(crate) const LOOP_GUARD: u32 = 100;
/// Consecutive thinning proposals that miss their cells after which a particle is finished.
pub const THINNING_MISSES: usize = 100_000;

/// The settings of one SMC run (from [`crate::ForestConfig`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SmcSettings {
    pub(crate) particles: usize,
    pub(crate) budget: f64,
    pub(crate) max_cuts: usize,
    pub(crate) max_rejections: usize,
    pub(crate) retries: usize,
    pub(crate) likelihood: bool,
}

/// A partition with its clock and log-likelihood.
#[derive(Debug)]
pub(crate) struct Particle {
    pub(crate) cells: Vec<Arc<Cell>>,
    /// tess19: the time of the next cut; thinning: the current time.
    pub(crate) tau: f64,
    pub(crate) log_l: f64,
    pub(crate) finished: bool,
    pub(crate) cuts: usize,
}

impl Clone for Particle {
    fn clone(&self) -> Self {
        Self {
            cells: self.cells.clone(),
            tau: self.tau,
            log_l: self.log_l,
            finished: self.finished,
            cuts: self.cuts,
        }
    }

    /// Reuses the cell vector's allocation (resampling copies M partitions per iteration).
    fn clone_from(&mut self, source: &Self) {
        self.cells.clone_from(&source.cells);
        self.tau = source.tau;
        self.log_l = source.log_l;
        self.finished = source.finished;
        self.cuts = source.cuts;
    }
}

/// Buffers and counters reused across the steps of one tree.
#[derive(Debug)]
pub(crate) struct Workspace {
    draw: DirectionBuffer,
    projections: Vec<f64>,
    diameter: Scratch,
    cumulative: Vec<f64>,
    pub(crate) proposals: u64,
    pub(crate) rejections: u64,
    pub(crate) cuts: u64,
}

impl Workspace {
    pub(crate) fn new(dim: usize) -> Self {
        Self {
            draw: DirectionBuffer::new(dim),
            projections: Vec::new(),
            diameter: Scratch::default(),
            cumulative: Vec::new(),
            proposals: 0,
            rejections: 0,
            cuts: 0,
        }
    }
}

/// The particles at the end of one SMC run and their normalised weights.
#[derive(Debug)]
pub(crate) struct SmcRun {
    pub(crate) particles: Vec<Particle>,
    pub(crate) weights: Vec<f64>,
    /// Index of the highest-weight particle (the first of equal ones).
    pub(crate) map: usize,
    pub(crate) iterations: usize,
}

fn exp_time<R: Rng + ?Sized>(rng: &mut R, rate: f64) -> f64 {
    if rate > 0.0 {
        rng.sample::<f64, _>(Exp1) / rate
    } else {
        f64::INFINITY
    }
}

/// Runs the SMC of one tree from the shared `root`.
pub(crate) fn run_smc<R: Rng + ?Sized>(
    ctx: &Context,
    root: &Arc<Cell>,
    settings: &SmcSettings,
    rng: &mut R,
    ws: &mut Workspace,
) -> SmcRun {
    let m = if settings.likelihood {
        settings.particles
    } else {
        1
    };
    let clocked = ctx.cut_rate != CutRate::ExactThinning && settings.budget.is_finite();
    let mut particles: Vec<Particle> = (0..m)
        .map(|_| {
            let tau = if clocked {
                exp_time(rng, root.rate)
            } else {
                0.0
            };
            Particle {
                cells: vec![root.clone()],
                tau,
                log_l: root.log_term,
                finished: !root.cuttable || tau >= settings.budget,
                cuts: 0,
            }
        })
        .collect();
    let uniform_log_w = -(m as f64).ln();
    let mut log_w = vec![uniform_log_w; m];
    let mut weights = vec![1.0 / m as f64; m];
    let mut spare: Vec<Particle> = Vec::with_capacity(m);
    let mut seen: Vec<u32> = Vec::new();
    let mut iterations = 0;
    let mut map = 0;
    loop {
        if particles.iter().all(|p| p.finished) || particles[map].cuts >= settings.max_cuts {
            break;
        }
        if iterations > 0 && m > 1 {
            resample(
                &mut particles,
                &mut spare,
                &weights,
                rng,
                &mut ws.cumulative,
            );
            log_w.fill(uniform_log_w);
        }
        for (p, lw) in particles.iter_mut().zip(log_w.iter_mut()) {
            if p.finished {
                continue;
            }
            let before = p.log_l;
            let cut = match ctx.cut_rate {
                CutRate::HalfDiameter | CutRate::EnclosingBall => {
                    step_clocked(ctx, settings, p, rng, ws)
                }
                CutRate::ExactThinning => step_thinning(ctx, settings, p, rng, ws),
            };
            if cut && settings.likelihood {
                *lw += p.log_l - before;
            }
        }
        iterations += 1;
        normalise(&log_w, &mut weights);
        map = argmax(&weights);
        let count = particles[map].cuts;
        if seen.len() <= count {
            seen.resize(count + 1, 0);
        }
        seen[count] += 1;
        if seen[count] > LOOP_GUARD {
            break;
        }
    }
    SmcRun {
        particles,
        weights,
        map,
        iterations,
    }
}

/// Multinomial resampling: M draws with probabilities `weights`, copied into `spare`, swapped.
fn resample<R: Rng + ?Sized>(
    particles: &mut Vec<Particle>,
    spare: &mut Vec<Particle>,
    weights: &[f64],
    rng: &mut R,
    cumulative: &mut Vec<f64>,
) {
    let m = particles.len();
    cumulative.clear();
    let mut total = 0.0;
    for w in weights {
        total += w;
        cumulative.push(total);
    }
    spare.truncate(m);
    for i in 0..m {
        let u = rng.random::<f64>() * total;
        let j = cumulative.partition_point(|&c| c <= u).min(m - 1);
        if i < spare.len() {
            spare[i].clone_from(&particles[j]);
        } else {
            spare.push(particles[j].clone());
        }
    }
    std::mem::swap(particles, spare);
}

fn normalise(log_w: &[f64], weights: &mut [f64]) {
    let max = log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        let u = 1.0 / weights.len() as f64;
        weights.fill(u);
        return;
    }
    let mut total = 0.0;
    for (w, &lw) in weights.iter_mut().zip(log_w) {
        *w = (lw - max).exp();
        total += *w;
    }
    weights.iter_mut().for_each(|w| *w /= total);
}

/// Index of the largest weight, the first of equal ones.
pub(crate) fn argmax(weights: &[f64]) -> usize {
    let mut best = 0;
    for (k, &w) in weights.iter().enumerate() {
        if w > weights[best] {
            best = k;
        }
    }
    best
}

/// A cuttable cell with probability ∝ Λ_a, given `total` = Σ Λ_a over the cuttable cells.
fn choose_cell<R: Rng + ?Sized>(cells: &[Arc<Cell>], total: f64, rng: &mut R) -> Option<usize> {
    let u = rng.random::<f64>() * total;
    let mut acc = 0.0;
    let mut last = None;
    for (k, c) in cells.iter().enumerate().filter(|(_, c)| c.cuttable) {
        acc += c.rate;
        last = Some(k);
        if u < acc {
            return last;
        }
    }
    last
}

fn cuttable_rate(cells: &[Arc<Cell>]) -> f64 {
    cells.iter().filter(|c| c.cuttable).map(|c| c.rate).sum()
}

/// Cuts cell `a` of `p` (`parent`) by the hyperplane of the current direction `ws.draw` at
/// `offset` (`ws.projections` hold the parent's projections on it): replaces the cell by its
/// children and updates the log-likelihood.
fn apply_cut(
    ctx: &Context,
    p: &mut Particle,
    a: usize,
    parent: &Cell,
    offset: f64,
    ws: &mut Workspace,
) {
    let hyperplane = ws.draw.hyperplane(ctx.prior, offset);
    let (left, right) = ctx.split(parent, hyperplane, &ws.projections, &mut ws.diameter);
    p.log_l += left.log_term + right.log_term - parent.log_term;
    p.cells[a] = Arc::new(left);
    p.cells.push(Arc::new(right));
    p.cuts += 1;
    ws.cuts += 1;
    if !p.cells.iter().any(|c| c.cuttable) {
        p.finished = true;
    }
}

/// One generative step of tess19's scheme or the enclosing-ball scheme; true if a cut happened.
fn step_clocked<R: Rng + ?Sized>(
    ctx: &Context,
    settings: &SmcSettings,
    p: &mut Particle,
    rng: &mut R,
    ws: &mut Workspace,
) -> bool {
    for _ in 0..=settings.retries {
        let total = cuttable_rate(&p.cells);
        let Some(a) = (total > 0.0)
            .then(|| choose_cell(&p.cells, total, rng))
            .flatten()
        else {
            p.finished = true;
            return false;
        };
        let cell = p.cells[a].clone();
        let mut proposals = 0;
        let offset = propose(ctx, settings, &cell, rng, ws, &mut proposals);
        ws.proposals += proposals as u64;
        ws.rejections += (proposals - usize::from(offset.is_some())) as u64;
        if let Some(offset) = offset {
            apply_cut(ctx, p, a, &cell, offset, ws);
            if settings.budget.is_finite() {
                let all: f64 = p.cells.iter().map(|c| c.rate).sum();
                p.tau += exp_time(rng, all);
                if p.tau >= settings.budget {
                    p.finished = true;
                }
            }
            return true;
        }
    }
    false
}

/// Up to `max_rejections` proposals in `cell` by the scheme's sampler: the accepted offset.
fn propose<R: Rng + ?Sized>(
    ctx: &Context,
    settings: &SmcSettings,
    cell: &Cell,
    rng: &mut R,
    ws: &mut Workspace,
    proposals: &mut usize,
) -> Option<f64> {
    let (points, items) = (&ctx.points, cell.train());
    let (draw, projections) = (&mut ws.draw, &mut ws.projections);
    if ctx.cut_rate == CutRate::HalfDiameter {
        return propose_rejection(
            points,
            items,
            2.0 * cell.rate,
            ctx.prior,
            settings.max_rejections,
            rng,
            draw,
            projections,
            proposals,
        );
    }
    for _ in 0..settings.max_rejections {
        *proposals += 1;
        let hit = match ctx.prior.kind() {
            PriorKind::Uniform => propose_ball(
                points,
                items,
                &cell.centre,
                cell.rate,
                ctx.prior,
                rng,
                draw,
                projections,
            ),
            PriorKind::Mondrian => propose_box(
                points,
                items,
                &cell.centre,
                &cell.extents,
                cell.rate,
                ctx.prior,
                rng,
                draw,
                projections,
            ),
        };
        if hit.is_some() {
            return hit;
        }
    }
    None
}

/// One exact-thinning generative step; true if a cut happened.
fn step_thinning<R: Rng + ?Sized>(
    ctx: &Context,
    settings: &SmcSettings,
    p: &mut Particle,
    rng: &mut R,
    ws: &mut Workspace,
) -> bool {
    let total = cuttable_rate(&p.cells);
    if total <= 0.0 {
        p.finished = true;
        return false;
    }
    for _ in 0..THINNING_MISSES {
        p.tau += exp_time(rng, total);
        if p.tau >= settings.budget {
            p.finished = true;
            return false;
        }
        let Some(a) = choose_cell(&p.cells, total, rng) else {
            break;
        };
        let cell = p.cells[a].clone();
        ws.proposals += 1;
        let hit = propose_ball(
            &ctx.points,
            cell.train(),
            &cell.centre,
            cell.rate,
            ctx.prior,
            rng,
            &mut ws.draw,
            &mut ws.projections,
        );
        if let Some(offset) = hit {
            apply_cut(ctx, p, a, &cell, offset, ws);
            return true;
        }
        ws.rejections += 1;
    }
    p.finished = true;
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_and_argmax() {
        let mut w = vec![0.0; 3];
        normalise(&[-1000.0, -1000.0 + 2f64.ln(), -1000.0], &mut w);
        assert!((w[1] - 0.5).abs() < 1e-12 && (w[0] - 0.25).abs() < 1e-12);
        assert_eq!(argmax(&w), 1);
        assert_eq!(argmax(&[0.3, 0.3, 0.1]), 0);
        normalise(&[f64::NEG_INFINITY; 2], &mut w[..2]);
        assert_eq!(&w[..2], &[0.5, 0.5]);
    }
}
