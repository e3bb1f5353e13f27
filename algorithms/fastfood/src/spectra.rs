//! Spectral distributions (Bochner: k(τ) = ∫ p(ω) cos(ωᵀτ) dω): the known kernels of the
//! spectrum-recovery study (spec §0 R3) with exact kernel values and samplers, and a sampler of
//! the spectral distribution a fitted kernel family implies (its m → ∞ limit).

use rand::Rng;
use rand_distr::StandardNormal;

use crate::kernels::{Family, FeatureModel};
use crate::radial::PiecewiseLinear;

/// A Gaussian spectral mixture: k(τ) = Σ_q w_q exp(−½ Σ_k σ_qk² τ_k²) cos(μ_qᵀτ).
#[derive(Debug, Clone, PartialEq)]
pub struct SpectralMixture {
    pub weights: Vec<f64>,
    pub means: Vec<Vec<f64>>,
    /// Spectral standard deviations σ_q (per input).
    pub sds: Vec<Vec<f64>>,
}

impl SpectralMixture {
    pub fn kernel(&self, tau: &[f64]) -> f64 {
        self.weights
            .iter()
            .zip(&self.means)
            .zip(&self.sds)
            .map(|((w, mu), sd)| {
                let q: f64 = tau.iter().zip(sd).map(|(t, s)| (t * s).powi(2)).sum();
                let c: f64 = tau.iter().zip(mu).map(|(t, m)| t * m).sum();
                w * (-0.5 * q).exp() * c.cos()
            })
            .sum()
    }

    /// One frequency from the (normalised) spectral distribution.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<f64> {
        let total: f64 = self.weights.iter().sum();
        let mut u = rng.random::<f64>() * total;
        let mut q = 0;
        while q + 1 < self.weights.len() && u >= self.weights[q] {
            u -= self.weights[q];
            q += 1;
        }
        let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
        self.means[q]
            .iter()
            .zip(&self.sds[q])
            .map(|(m, s)| sign * m + s * rng.sample::<f64, _>(StandardNormal))
            .collect()
    }
}

/// `c_d ∫_0^π cos(t cos θ) sin^{d−2} θ dθ`: the characteristic function Ω_d(t) of one coordinate
/// of a uniform direction on S^{d−1} (spec §4.3; Ω_2 = J_0), by the midpoint rule.
pub fn uniform_direction_cf(d: usize, t: f64, nodes: usize) -> f64 {
    let h = std::f64::consts::PI / nodes as f64;
    let (mut num, mut den) = (0.0, 0.0);
    for i in 0..nodes {
        let th = (i as f64 + 0.5) * h;
        let w = th.sin().powi(d as i32 - 2);
        num += (t * th.cos()).cos() * w;
        den += w;
    }
    if d == 1 {
        t.cos()
    } else {
        num / den
    }
}

/// An isotropic kernel whose frequency radius r = ‖ω‖ has a piecewise-linear density:
/// k(τ) = σ_f² E_r[Ω_d(r‖τ‖)], tabulated on a grid of ‖τ‖.
#[derive(Debug, Clone)]
pub struct RadialKernel {
    pub density: PiecewiseLinear,
    pub heights: Vec<f64>,
    pub dim: usize,
    pub signal: f64,
    step: f64,
    table: Vec<f64>,
}

impl RadialKernel {
    /// Tabulates k on `[0, max_distance]`.
    pub fn new(
        density: PiecewiseLinear,
        heights: Vec<f64>,
        dim: usize,
        signal: f64,
        max_distance: f64,
    ) -> Self {
        let points = 4000;
        let step = max_distance.max(1e-9) / (points - 1) as f64;
        // E_r by the midpoint rule on 400 radii; Ω_d tabulated finely in t.
        let r_max = density.knot(density.n_heights() - 1);
        let radii = 400;
        let dr = r_max / radii as f64;
        let rs: Vec<(f64, f64)> = (0..radii)
            .map(|i| {
                let r = (i as f64 + 0.5) * dr;
                (r, density.density(&heights, r) * dr)
            })
            .collect();
        let t_max = r_max * max_distance;
        let t_points = 20_000;
        let dt = t_max.max(1e-9) / (t_points - 1) as f64;
        let omega: Vec<f64> = (0..t_points)
            .map(|i| uniform_direction_cf(dim, i as f64 * dt, 400))
            .collect();
        let cf = |t: f64| {
            let x = t / dt;
            let i = (x as usize).min(t_points - 2);
            let f = x - i as f64;
            omega[i] * (1.0 - f) + omega[i + 1] * f
        };
        let table = (0..points)
            .map(|k| {
                let s = k as f64 * step;
                signal * rs.iter().map(|(r, w)| w * cf(r * s)).sum::<f64>()
            })
            .collect();
        Self {
            density,
            heights,
            dim,
            signal,
            step,
            table,
        }
    }

    /// k at distance `s` (linear interpolation in the table; beyond it, the last value).
    pub fn kernel_at_distance(&self, s: f64) -> f64 {
        let x = s / self.step;
        let i = x as usize;
        if i + 1 >= self.table.len() {
            return *self.table.last().expect("table");
        }
        let f = x - i as f64;
        self.table[i] * (1.0 - f) + self.table[i + 1] * f
    }

    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<f64> {
        radial_frequency(&self.density, &self.heights, self.dim, rng)
    }
}

/// A frequency in R^d with radius from the piecewise-linear density (inverse CDF at one uniform)
/// and a uniform direction (a normalised standard normal), drawn in that order.
fn radial_frequency<R: Rng + ?Sized>(
    density: &PiecewiseLinear,
    heights: &[f64],
    d: usize,
    rng: &mut R,
) -> Vec<f64> {
    let mut scratch = vec![0.0; heights.len()];
    let r = density.radius(heights, rng.random(), &mut scratch);
    let z: Vec<f64> = (0..d).map(|_| rng.sample(StandardNormal)).collect();
    let norm = z.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-300);
    z.into_iter().map(|v| r * v / norm).collect()
}

/// The spectral distribution of a fitted model at θ (its m → ∞ limit where the family has one):
/// RBF/ARD the Gaussian of their lengthscales, GM its mixture, PWL its radial density over the
/// lengthscales; FSARD and FSGBARD (learned S, G, B) and SSGPR the empirical distribution of
/// their m frequencies.
pub enum ModelSpectrum {
    Gaussian(Vec<f64>),
    Mixture(SpectralMixture),
    Radial {
        density: PiecewiseLinear,
        heights: Vec<f64>,
        pad: usize,
        lengths: Vec<f64>,
    },
    Empirical(ndarray::Array2<f64>),
}

impl ModelSpectrum {
    pub fn new(model: &FeatureModel, theta: &[f64]) -> Self {
        let dim = model.dim();
        match model.spec().family {
            Family::Gm => {
                let comps = model.gm_components(theta);
                ModelSpectrum::Mixture(SpectralMixture {
                    weights: comps.iter().map(|c| c.0).collect(),
                    means: comps.iter().map(|c| c.2.clone()).collect(),
                    sds: comps
                        .iter()
                        .map(|c| c.1.iter().map(|l| 1.0 / l).collect())
                        .collect(),
                })
            }
            Family::Pwl => {
                let (p, h) = model.pwl_density(theta).expect("PWL has a density");
                ModelSpectrum::Radial {
                    density: p.clone(),
                    heights: h,
                    pad: model.draws()[0].pad(),
                    lengths: model.lengths(theta),
                }
            }
            Family::Ssgpr => {
                let m = model.spec().m;
                ModelSpectrum::Empirical(
                    ndarray::Array2::from_shape_vec((m, dim), theta[2..2 + m * dim].to_vec())
                        .expect("Ω has m × dim values"),
                )
            }
            Family::Fsard | Family::Fsgbard => {
                ModelSpectrum::Empirical(model.frequencies(theta).expect("a single Fastfood stack"))
            }
            Family::Rbf | Family::Ard => ModelSpectrum::Gaussian(model.lengths(theta)),
        }
    }

    /// One frequency.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<f64> {
        match self {
            ModelSpectrum::Gaussian(lengths) => lengths
                .iter()
                .map(|l| rng.sample::<f64, _>(StandardNormal) / l)
                .collect(),
            ModelSpectrum::Mixture(m) => m.sample(rng),
            ModelSpectrum::Radial {
                density,
                heights,
                pad,
                lengths,
            } => {
                // In the padded space, then the input coordinates over the lengthscales.
                let omega = radial_frequency(density, heights, *pad, rng);
                lengths.iter().zip(&omega).map(|(l, w)| w / l).collect()
            }
            ModelSpectrum::Empirical(rows) => {
                let j = rng.random_range(0..rows.nrows());
                rows.row(j).to_vec()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn the_empirical_spectrum_of_fsard_is_the_features_own() {
        // FSARD at its start equals ARD: the mean of cos(ωᵀτ) over its m rows is φ(x)ᵀφ(x')/σ_f².
        use crate::kernels::{ArdPoint, KernelSpec};
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let spec = KernelSpec {
            family: Family::Fsard,
            m: 40,
            components: 1,
            intervals: 1,
        };
        let model = FeatureModel::new(spec, 3, 1e-6, None, &mut rng).unwrap();
        let theta = model.start(&ArdPoint::default_start(3, 1.0), &mut rng);
        let ModelSpectrum::Empirical(rows) = ModelSpectrum::new(&model, &theta) else {
            panic!("FSARD's spectrum is empirical");
        };
        let x = ndarray::array![[0.2, -0.4, 0.9], [1.0, 0.3, -0.5]];
        let phi = model.features(&theta, x.view()).unwrap();
        let tau = [0.2 - 1.0, -0.4 - 0.3, 0.9 + 0.5];
        let mean: f64 = rows
            .outer_iter()
            .map(|w| (w[0] * tau[0] + w[1] * tau[1] + w[2] * tau[2]).cos())
            .sum::<f64>()
            / 40.0;
        assert!((mean - phi.row(0).dot(&phi.row(1))).abs() < 1e-12);
    }

    #[test]
    fn samplers_reproduce_their_kernels_by_bochner() {
        // E cos(ωᵀτ) over the sampler equals the exact kernel (normalised by k(0)).
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let sm = SpectralMixture {
            weights: vec![0.6, 0.4],
            means: vec![vec![1.0, 0.0], vec![2.0, 1.0]],
            sds: vec![vec![0.3, 0.3], vec![0.5, 0.2]],
        };
        let rk = RadialKernel::new(
            PiecewiseLinear::new(3.0, 3).unwrap(),
            vec![0.0, 1.0, 0.3, 0.5],
            2,
            1.0,
            5.0,
        );
        let n = 200_000;
        for tau in [[0.3, -0.2], [1.0, 0.5], [2.0, -1.5]] {
            let (mut a, mut b) = (0.0, 0.0);
            for _ in 0..n {
                let w = sm.sample(&mut rng);
                a += (w[0] * tau[0] + w[1] * tau[1]).cos() / n as f64;
                let v = rk.sample(&mut rng);
                b += (v[0] * tau[0] + v[1] * tau[1]).cos() / n as f64;
            }
            assert!((a - sm.kernel(&tau) / sm.kernel(&[0.0, 0.0])).abs() < 0.01);
            let s = (tau[0] * tau[0] + tau[1] * tau[1]).sqrt();
            assert!(
                (b - rk.kernel_at_distance(s)).abs() < 0.01,
                "{b} vs {}",
                rk.kernel_at_distance(s)
            );
        }
        // Ω_2 = J_0: J_0(1) = 0.7651976866, J_0(2.4048) ≈ 0.
        assert!((uniform_direction_cf(2, 1.0, 2000) - 0.765_197_686_6).abs() < 1e-6);
        assert!(uniform_direction_cf(2, 2.404_825_557_7, 2000).abs() < 1e-6);
    }
}
