//! Level readiness and landmark selection (spec §4): each level's covering fraction cf_l is a
//! running average of "the point passed through a level-l node" (1) and "a new level-l node was
//! created" (0); once cf_l exceeds D_level the level (and every shallower one) is node-covered
//! and queued; the first queued level becomes landmark-ready when it has enough saturated nodes;
//! its landmarks are then m_l = min(⌊δ₀·√|Q_l|⌋, #saturated) saturated centres drawn without
//! replacement.

use kernel_core::error::positive;
use rand::seq::index::sample;
use rand::Rng;

use crate::error::StreamError;

/// The monitor's constants (spec §4 table).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelParams {
    /// ρ_l for levels l < 3.
    pub high_rate: f64,
    /// ρ_l for levels l ≥ 3.
    pub low_rate: f64,
    /// D_level (`thr_PTlevel`).
    pub d_level: f64,
    /// δ₀ (`lmNodeRatioFactor`).
    pub delta0: f64,
}

impl LevelParams {
    /// The authors' defaults: 0.01, 1e-4, 0.9, 20.
    pub fn default_config() -> Self {
        Self {
            high_rate: 0.01,
            low_rate: 1e-4,
            d_level: 0.9,
            delta0: 20.0,
        }
    }

    /// Checks every constant against its domain: the rates and D_level in (0, 1), δ₀ > 0
    /// (named as configs name them: `high_rate`, `low_rate`, `d_level`, `delta0`).
    pub fn check(&self) -> Result<(), StreamError> {
        for (name, v) in [
            ("high_rate", self.high_rate),
            ("low_rate", self.low_rate),
            ("d_level", self.d_level),
        ] {
            if !(v > 0.0 && v < 1.0) {
                return Err(StreamError::invalid(name, v, "a number in (0, 1)"));
            }
        }
        positive("delta0", self.delta0)?;
        Ok(())
    }

    fn rate(&self, level: usize) -> f64 {
        if level < 3 {
            self.high_rate
        } else {
            self.low_rate
        }
    }
}

/// The state of the levels: covering fractions, the queue of node-covered levels, and the
/// levels found landmark-ready (in order).
#[derive(Debug, Clone, PartialEq)]
pub struct LevelMonitor {
    params: LevelParams,
    cf: Vec<f64>,
    covered: Vec<bool>,
    queue: Vec<usize>,
    ready: Vec<usize>,
}

impl LevelMonitor {
    pub fn new(params: LevelParams) -> Self {
        Self {
            params,
            cf: Vec::new(),
            covered: Vec::new(),
            queue: Vec::new(),
            ready: Vec::new(),
        }
    }

    fn grow(&mut self, level: usize) {
        if self.cf.len() <= level {
            self.cf.resize(level + 1, 0.0);
            self.covered.resize(level + 1, false);
        }
    }

    /// cf_l ← (1 − ρ_l)·cf_l + ρ_l·T while level l is not yet node-covered; crossing D_level
    /// queues l and every shallower uncovered level (shallowest first).
    pub fn observe(&mut self, level: usize, hit: bool) {
        self.grow(level);
        if self.covered[level] {
            return;
        }
        let rho = self.params.rate(level);
        self.cf[level] = (1.0 - rho) * self.cf[level] + rho * f64::from(u8::from(hit));
        if self.cf[level] > self.params.d_level {
            for l in 0..=level {
                if !self.covered[l] {
                    self.covered[l] = true;
                    self.queue.push(l);
                }
            }
        }
    }

    /// After a node creation or saturation: checks the first queued level l against the tree's
    /// counts (`nodes[l]`, `saturated[l]`); when one of the three conditions holds, l and every
    /// shallower queued level become landmark-ready. Returns the levels that became ready now.
    pub fn check_sufficiency(&mut self, nodes: &[usize], saturated: &[usize]) -> Vec<usize> {
        let Some(&l) = self.queue.first() else {
            return Vec::new();
        };
        let count = |v: &[usize], l: usize| v.get(l).copied().unwrap_or(0) as f64;
        let (n, s) = (count(nodes, l), count(saturated, l));
        let cond1 = s >= self.params.delta0 * n.sqrt();
        let cond2 = s > 0.4 * n;
        let cond3 = self.queue.contains(&(l + 1)) && 2.0 * n > count(nodes, l + 1);
        if !(cond1 || cond2 || cond3) {
            return Vec::new();
        }
        let now: Vec<usize> = self.queue.iter().copied().filter(|&q| q <= l).collect();
        self.queue.retain(|&q| q > l);
        self.ready.extend(&now);
        now
    }

    /// Covering fraction of level l.
    pub fn covering_fraction(&self, level: usize) -> f64 {
        self.cf.get(level).copied().unwrap_or(0.0)
    }

    /// Whether level l is node-covered.
    pub fn is_covered(&self, level: usize) -> bool {
        self.covered.get(level).copied().unwrap_or(false)
    }

    /// Node-covered levels waiting for enough saturated nodes, in order.
    pub fn queued(&self) -> &[usize] {
        &self.queue
    }

    /// Levels that became landmark-ready, in order.
    pub fn ready(&self) -> &[usize] {
        &self.ready
    }

    /// m_l = min(⌊δ₀·√|Q_l|⌋, #saturated(l)).
    pub fn landmark_count(&self, nodes: usize, saturated: usize) -> usize {
        ((self.params.delta0 * (nodes as f64).sqrt()).floor() as usize).min(saturated)
    }
}

/// m of the `saturated` node ids, uniformly without replacement (in draw order).
pub fn draw_landmarks<R: Rng + ?Sized>(saturated: &[usize], m: usize, rng: &mut R) -> Vec<usize> {
    let m = m.min(saturated.len());
    sample(rng, saturated.len(), m)
        .into_iter()
        .map(|i| saturated[i])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn covering_fractions_follow_their_rates_and_queue_shallower_levels_first() {
        let mut m = LevelMonitor::new(LevelParams {
            high_rate: 0.5,
            low_rate: 0.25,
            d_level: 0.9,
            delta0: 1.0,
        });
        m.observe(4, true);
        assert_eq!(m.covering_fraction(4), 0.25);
        m.observe(4, false);
        assert_eq!(m.covering_fraction(4), 0.1875);
        m.observe(1, true);
        assert_eq!(m.covering_fraction(1), 0.5);
        for _ in 0..3 {
            m.observe(1, true);
        }
        // 1 - 0.5^4 = 0.9375 > 0.9: levels 0 and 1 queue, shallowest first.
        assert_eq!(m.queued(), &[0, 1]);
        let before = m.covering_fraction(1);
        m.observe(1, false);
        assert_eq!(
            m.covering_fraction(1),
            before,
            "a covered level stops updating"
        );
    }

    #[test]
    fn sufficiency_makes_the_first_queued_level_and_shallower_ones_ready() {
        let mut m = LevelMonitor::new(LevelParams {
            high_rate: 1.0,
            low_rate: 1.0,
            d_level: 0.5,
            delta0: 10.0,
        });
        m.observe(2, true); // queues 0, 1, 2
        assert_eq!(m.queued(), &[0, 1, 2]);
        // Level 0: 1 node, no saturated, level 1 queued with 3 nodes: 2 < 3, nothing holds.
        assert!(m.check_sufficiency(&[1, 3, 10], &[0, 0, 0]).is_empty());
        // cond2: 1 saturated of 1 node > 0.4.
        assert_eq!(m.check_sufficiency(&[1, 3, 10], &[1, 0, 0]), vec![0]);
        // Level 1 with level 2 queued and 2 * 3 <= 10: cond3 fails; cond1 needs 10 sqrt 3.
        assert!(m.check_sufficiency(&[1, 3, 10], &[1, 1, 0]).is_empty());
        // 2 * 6 > 10: cond3.
        assert_eq!(m.check_sufficiency(&[1, 6, 10], &[1, 1, 0]), vec![1]);
        assert_eq!(m.ready(), &[0, 1]);
        assert_eq!(m.queued(), &[2]);
    }

    #[test]
    fn landmarks_are_distinct_saturated_nodes_and_their_count_is_capped() {
        let m = LevelMonitor::new(LevelParams::default_config());
        assert_eq!(m.landmark_count(400, 1000), 400); // 20 sqrt 400
        assert_eq!(m.landmark_count(400, 37), 37);
        assert_eq!(m.landmark_count(3, 100), 34); // floor(20 sqrt 3) = 34
        let saturated: Vec<usize> = (100..160).collect();
        let drawn = draw_landmarks(&saturated, 25, &mut ChaCha8Rng::seed_from_u64(4));
        let mut unique = drawn.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!((drawn.len(), unique.len()), (25, 25));
        assert!(drawn.iter().all(|k| saturated.contains(k)));
        assert_eq!(
            draw_landmarks(&saturated, 99, &mut ChaCha8Rng::seed_from_u64(4)).len(),
            60
        );
    }
}
