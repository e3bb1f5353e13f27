//! Distributions of the frequency radii `s_i = ‖row_i(V)‖` (spec §3, row-norm identity): the
//! χ_d radii of the Gaussian (RBF/ARD) spectrum and the piecewise-linear radial density of the
//! PWL kernel (spec §4.3). Both are sampled by the inverse CDF at uniforms `u_i` drawn once
//! (decision D5), so a radius is a differentiable function of the PWL heights.

use statrs::distribution::{Chi, Continuous, ContinuousCDF};

use crate::error::FastfoodError;

/// Keeps uniforms strictly inside (0, 1), where every inverse CDF is finite.
fn open_unit(u: f64) -> f64 {
    u.clamp(1e-12, 1.0 - 1e-12)
}

/// `s_i = F⁻¹_{χ_d}(u_i)`: χ_d radii by the inverse CDF ([FF]: `sqrt(2·gammaincinv(u, d/2))`).
pub fn chi_radii(d: usize, uniforms: &[f64]) -> Vec<f64> {
    let chi = Chi::new(d as u64).expect("d >= 1 is a valid χ degree");
    uniforms
        .iter()
        .map(|&u| chi.inverse_cdf(open_unit(u)))
        .collect()
}

/// The χ_d density at `r`.
pub fn chi_density(d: usize, r: f64) -> f64 {
    Chi::new(d as u64)
        .expect("d >= 1 is a valid χ degree")
        .pdf(r)
}

/// A density of the radius r = ‖ω‖ that is linear between equally spaced knots
/// `0 = r_0 < r_1 < … < r_K = r_max` with heights `h_0..h_K >= 0` (decision D3: the density of
/// r, not of ρ(‖ω‖)), zero beyond `r_max`.
#[derive(Debug, Clone, PartialEq)]
pub struct PiecewiseLinear {
    r_max: f64,
    intervals: usize,
}

impl PiecewiseLinear {
    /// `intervals` (K) segments on `[0, r_max]`.
    pub fn new(r_max: f64, intervals: usize) -> Result<Self, FastfoodError> {
        if !(r_max.is_finite() && r_max > 0.0) {
            return Err(FastfoodError::InvalidParameter {
                name: "r_max",
                value: r_max.to_string(),
                expected: "a finite number > 0",
            });
        }
        crate::error::at_least_one("knot intervals", intervals)?;
        Ok(Self { r_max, intervals })
    }

    /// The spec's recommended knots for padded dimension d: K intervals on `[0, √d + 4]`.
    pub fn for_dimension(d: usize, intervals: usize) -> Result<Self, FastfoodError> {
        Self::new((d as f64).sqrt() + 4.0, intervals)
    }

    /// K + 1, the number of heights.
    pub fn n_heights(&self) -> usize {
        self.intervals + 1
    }

    fn width(&self) -> f64 {
        self.r_max / self.intervals as f64
    }

    /// Knot `k`.
    pub fn knot(&self, k: usize) -> f64 {
        k as f64 * self.width()
    }

    /// Heights equal to the χ_d density at the knots (floored at 1e-3 of its largest value, so
    /// that log-heights are finite): the initial PWL kernel is close to the Gaussian one.
    pub fn chi_heights(&self, d: usize) -> Vec<f64> {
        let h: Vec<f64> = (0..self.n_heights())
            .map(|k| chi_density(d, self.knot(k)))
            .collect();
        let top = h.iter().cloned().fold(0.0, f64::max);
        h.into_iter().map(|v| v.max(1e-3 * top)).collect()
    }

    /// The total area Z of the unnormalised density.
    fn area(&self, h: &[f64]) -> f64 {
        let w = self.width();
        h.windows(2).map(|p| 0.5 * (p[0] + p[1]) * w).sum()
    }

    /// The normalised density at `r`.
    pub fn density(&self, h: &[f64], r: f64) -> f64 {
        if !(0.0..=self.r_max).contains(&r) {
            return 0.0;
        }
        let w = self.width();
        let k = ((r / w) as usize).min(self.intervals - 1);
        let t = (r - self.knot(k)) / w;
        ((1.0 - t) * h[k] + t * h[k + 1]) / self.area(h)
    }

    /// The radius at uniform `u` (inverse CDF) and its gradient with respect to the heights
    /// (written into `d_heights`, length K + 1). Heights must be > 0.
    pub fn radius(&self, h: &[f64], u: f64, d_heights: &mut [f64]) -> f64 {
        debug_assert_eq!(h.len(), self.n_heights());
        let w = self.width();
        let z = self.area(h);
        let target = open_unit(u) * z;
        // Segment k with cumulative area C_k <= target < C_{k+1}.
        let mut cumulative = 0.0;
        let mut k = 0;
        while k + 1 < self.intervals {
            let a = 0.5 * (h[k] + h[k + 1]) * w;
            if cumulative + a > target {
                break;
            }
            cumulative += a;
            k += 1;
        }
        // Inside the segment: area(x) = h_k x + (h_{k+1} − h_k) x² / (2w) = c.
        let c = (target - cumulative).max(0.0);
        let a2 = (h[k + 1] - h[k]) / (2.0 * w);
        let b = h[k];
        let disc = (b * b + 4.0 * a2 * c).max(0.0);
        let x = (2.0 * c / (b + disc.sqrt())).clamp(0.0, w);
        let r = self.knot(k) + x;
        // Implicit differentiation of F(r; h) = u Z(h): dr/dh_j = (u ∂Z/∂h_j − ∂F/∂h_j) / f̃(r).
        let f_r = (h[k] + (h[k + 1] - h[k]) * x / w).max(1e-300);
        let uu = open_unit(u);
        for (j, g) in d_heights.iter_mut().enumerate() {
            let dz = if j == 0 || j == self.intervals {
                0.5 * w
            } else {
                w
            };
            // Full segments before k: knot j's share of their trapezoids.
            let mut df = 0.0;
            if j < k {
                df += if j == 0 { 0.5 * w } else { w };
            } else if j == k && k > 0 {
                df += 0.5 * w;
            }
            if j == k {
                df += x - x * x / (2.0 * w);
            } else if j == k + 1 {
                df += x * x / (2.0 * w);
            }
            *g = (uu * dz - df) / f_r;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi_radii_match_the_chi_cdf_and_mean() {
        let u: Vec<f64> = (0..2000).map(|i| (i as f64 + 0.5) / 2000.0).collect();
        for d in [1usize, 4, 16, 128] {
            let r = chi_radii(d, &u);
            let mean = r.iter().sum::<f64>() / r.len() as f64;
            // E χ_d = √2 Γ((d+1)/2) / Γ(d/2).
            let exact = std::f64::consts::SQRT_2
                * (statrs::function::gamma::ln_gamma((d as f64 + 1.0) / 2.0)
                    - statrs::function::gamma::ln_gamma(d as f64 / 2.0))
                .exp();
            assert!(
                (mean - exact).abs() < 2e-3 * exact,
                "d = {d}: {mean} vs {exact}"
            );
        }
    }

    #[test]
    fn piecewise_radius_inverts_the_cdf_and_its_gradient_matches_finite_differences() {
        let p = PiecewiseLinear::new(6.0, 5).unwrap();
        let h = [0.2, 1.0, 0.7, 0.3, 0.9, 0.1];
        let mut g = vec![0.0; 6];
        for &u in &[0.03, 0.2, 0.5, 0.77, 0.97] {
            let r = p.radius(&h, u, &mut g);
            // CDF at r by midpoint integration of the density.
            let steps = 200_000;
            let cdf: f64 = (0..steps)
                .map(|i| p.density(&h, (i as f64 + 0.5) * r / steps as f64) * r / steps as f64)
                .sum();
            assert!((cdf - u).abs() < 1e-6, "u = {u}: CDF(r) = {cdf}");
            for j in 0..6 {
                let eps = 1e-6;
                let (mut hp, mut hm) = (h, h);
                hp[j] += eps;
                hm[j] -= eps;
                let mut scratch = vec![0.0; 6];
                let fd =
                    (p.radius(&hp, u, &mut scratch) - p.radius(&hm, u, &mut scratch)) / (2.0 * eps);
                assert!((fd - g[j]).abs() < 1e-6, "u = {u}, h_{j}: {fd} vs {}", g[j]);
            }
        }
    }

    #[test]
    fn piecewise_histogram_matches_the_density() {
        let p = PiecewiseLinear::new(4.0, 4).unwrap();
        let h = [0.0, 2.0, 1.0, 1.0, 0.5];
        let n = 100_000;
        let mut counts = [0usize; 8];
        let mut g = vec![0.0; 5];
        for i in 0..n {
            let r = p.radius(&h, (i as f64 + 0.5) / n as f64, &mut g);
            counts[((r / 0.5) as usize).min(7)] += 1;
        }
        for (b, &c) in counts.iter().enumerate() {
            let mass: f64 = (0..1000)
                .map(|i| p.density(&h, 0.5 * b as f64 + (i as f64 + 0.5) * 0.0005) * 0.0005)
                .sum();
            assert!((c as f64 / n as f64 - mass).abs() < 1e-3, "bin {b}");
        }
    }
}
