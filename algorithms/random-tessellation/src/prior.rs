//! The four RTP priors (spec §2.1): the direction measure λ_d on the sphere S^{d−1}, and the
//! hyperplanes φ(n, u) = {x : ⟨n, x⟩ = u} it generates (spec §2).
//!
//! * **uRTP / wuRTP** ([`PriorKind::Uniform`]): g ~ N(0, I_d), n = ω ⊙ g / ‖ω ⊙ g‖. With the
//!   default ω_j = 1/d this is the uniform law on the sphere; with user weights it is the
//!   Gaussian N(0, diag(ω²)) projected to the sphere.
//! * **MRTP / wMRTP** ([`PriorKind::Mondrian`]): n = e_j with j ~ Categorical(ω), the
//!   axis-aligned (Mondrian) special case.
//!
//! Both laws are symmetric (n and −n equally likely: for MRTP read e_j as ±e_j, which gives the
//! same hyperplanes), so the hyperplane measure Λ∘φ = λ_d × λ_+ is translation invariant
//! [APP Lemma 1] and, λ_d being a probability measure, Λ([B(x, r)]) = r for every ball
//! [APP Lemma 3]. Weights are normalised to Σ ω = 1 (spec §2.1, D7).

use rand::Rng;
use rand_distr::StandardNormal;

use kernel_core::CoreError;

use crate::error::RtfError;
use crate::points::dot;

/// Which direction measure λ_d: uniform-type (uRTP, wuRTP) or axis-aligned (MRTP, wMRTP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum PriorKind {
    /// uRTP (default weights) or wuRTP (user weights): n ∝ ω ⊙ g, g ~ N(0, I_d).
    Uniform,
    /// MRTP (default weights) or wMRTP (user weights): n = e_j, j ~ Categorical(ω).
    Mondrian,
}

/// An RTP prior: the kind of direction measure and its weights ω (Σ ω = 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Prior {
    kind: PriorKind,
    weights: Vec<f64>,
    /// Running sums of ω (MRTP's categorical draw by bisection).
    cumulative: Vec<f64>,
}

impl Prior {
    /// The prior of `kind` on R^`dim` with weights ω = `weights` normalised to sum 1, or the
    /// default ω_j = 1/d when `None`.
    ///
    /// Errors: `dim == 0`; weights of the wrong length, negative, non-finite, or all zero.
    pub fn new(kind: PriorKind, dim: usize, weights: Option<&[f64]>) -> Result<Self, RtfError> {
        if dim == 0 {
            return Err(RtfError::Core(CoreError::InvalidParameter {
                name: "prior dimension",
                value: "0".into(),
                expected: "at least 1",
            }));
        }
        let weights = match weights {
            None => vec![1.0 / dim as f64; dim],
            Some(w) => {
                if w.len() != dim {
                    return Err(RtfError::InvalidWeights(format!(
                        "{} weights for {dim} dimensions",
                        w.len()
                    )));
                }
                if let Some((j, &bad)) = w
                    .iter()
                    .enumerate()
                    .find(|(_, v)| !v.is_finite() || **v < 0.0)
                {
                    return Err(RtfError::InvalidWeights(format!("weight {j} is {bad}")));
                }
                let total: f64 = w.iter().sum();
                if !(total > 0.0 && total.is_finite()) {
                    return Err(RtfError::InvalidWeights(format!(
                        "the weights sum to {total}"
                    )));
                }
                w.iter().map(|v| v / total).collect()
            }
        };
        let mut cumulative = Vec::with_capacity(dim);
        let mut running = 0.0;
        for w in &weights {
            running += w;
            cumulative.push(running);
        }
        Ok(Self {
            kind,
            weights,
            cumulative,
        })
    }

    /// The kind of direction measure.
    pub fn kind(&self) -> PriorKind {
        self.kind
    }

    /// The weights ω, normalised to sum 1.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The dimension d of the space.
    pub fn dim(&self) -> usize {
        self.weights.len()
    }

    /// Draws a unit normal n ~ λ_d.
    pub fn sample_direction<R: Rng + ?Sized>(&self, rng: &mut R) -> Direction {
        match self.kind {
            PriorKind::Mondrian => Direction::Axis(self.sample_axis(rng)),
            PriorKind::Uniform => {
                let mut n = vec![0.0; self.dim()];
                self.sample_unit_into(rng, &mut n);
                Direction::Unit(n)
            }
        }
    }

    /// MRTP: j ~ Categorical(ω).
    pub(crate) fn sample_axis<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        let u = rng.random::<f64>() * self.cumulative[self.dim() - 1];
        // First j with cumulative[j] > u; a zero weight has cumulative[j] == cumulative[j-1]
        // and can never be the first to exceed u.
        let j = self.cumulative.partition_point(|&c| c <= u);
        j.min(self.dim() - 1)
    }

    /// uRTP: n = ω ⊙ g / ‖ω ⊙ g‖ written into `n` (length d).
    pub(crate) fn sample_unit_into<R: Rng + ?Sized>(&self, rng: &mut R, n: &mut [f64]) {
        loop {
            let mut norm2 = 0.0;
            for (v, w) in n.iter_mut().zip(&self.weights) {
                let g: f64 = rng.sample(StandardNormal);
                *v = w * g;
                norm2 += *v * *v;
            }
            // ‖ω ⊙ g‖ = 0 has probability 0 (some ω_j > 0); redraw rather than divide by it.
            if norm2 > 0.0 {
                let inv = 1.0 / norm2.sqrt();
                n.iter_mut().for_each(|v| *v *= inv);
                return;
            }
        }
    }
}

/// A unit normal n of a hyperplane.
#[derive(Debug, Clone, PartialEq)]
pub enum Direction {
    /// n = e_j (MRTP). Unoriented: as a draw from λ_d it stands for ±e_j with equal
    /// probability (the symmetric measure; the hyperplane {x_j = offset} is the same for both).
    Axis(usize),
    /// A unit vector of R^d (uRTP).
    Unit(Vec<f64>),
}

impl Direction {
    /// ⟨n, x⟩.
    #[inline]
    pub fn project(&self, x: &[f64]) -> f64 {
        match self {
            Direction::Axis(j) => x[*j],
            Direction::Unit(n) => dot(n, x),
        }
    }
}

/// The hyperplane {x : ⟨n, x⟩ = offset}. A cut sends x to the left child when
/// ⟨n, x⟩ <= offset and to the right child otherwise (spec §3 step 3).
#[derive(Debug, Clone, PartialEq)]
pub struct Hyperplane {
    pub direction: Direction,
    pub offset: f64,
}

impl Hyperplane {
    /// ⟨n, x⟩.
    #[inline]
    pub fn project(&self, x: &[f64]) -> f64 {
        self.direction.project(x)
    }

    /// Whether x lies on the left side, ⟨n, x⟩ <= offset.
    #[inline]
    pub fn is_left(&self, x: &[f64]) -> bool {
        self.project(x) <= self.offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn new_normalises_and_rejects_bad_weights() {
        let p = Prior::new(PriorKind::Mondrian, 3, Some(&[1.0, 3.0, 0.0])).unwrap();
        assert_eq!(p.weights(), &[0.25, 0.75, 0.0]);
        assert_eq!(p.dim(), 3);
        assert_eq!(p.kind(), PriorKind::Mondrian);
        let d = Prior::new(PriorKind::Uniform, 4, None).unwrap();
        assert_eq!(d.weights(), &[0.25; 4]);
        assert!(Prior::new(PriorKind::Uniform, 0, None).is_err());
        for bad in [
            &[1.0, 2.0][..],
            &[1.0, -1.0, 1.0],
            &[1.0, f64::NAN, 1.0],
            &[f64::INFINITY, 1.0, 1.0],
            &[0.0, 0.0, 0.0],
        ] {
            assert!(
                matches!(
                    Prior::new(PriorKind::Uniform, 3, Some(bad)),
                    Err(RtfError::InvalidWeights(_))
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn zero_weight_axes_are_never_drawn_and_units_have_norm_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let p = Prior::new(PriorKind::Mondrian, 4, Some(&[0.0, 1.0, 0.0, 1.0])).unwrap();
        for _ in 0..2000 {
            let j = p.sample_axis(&mut rng);
            assert!(j == 1 || j == 3);
        }
        let u = Prior::new(PriorKind::Uniform, 3, Some(&[1.0, 0.0, 2.0])).unwrap();
        for _ in 0..200 {
            let Direction::Unit(n) = u.sample_direction(&mut rng) else {
                panic!("uniform prior gives unit vectors")
            };
            assert_eq!(n[1], 0.0);
            assert!((n.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }
}
