//! Raker and AdaRaker: online multi-kernel learning with random features (Shen, Chen,
//! Giannakis, *Online Ensemble Multi-kernel Learning Adaptive to Non-stationary and Adversarial
//! Environments*, AISTATS 2018; *Random Feature-based Online Multi-kernel Learning in
//! Environments with Unknown Dynamics*, JMLR 20, 2019), the comparator of the Isolation Kernel
//! paper's Table 5 (16 Gaussian kernels, 50 orthogonal random features each, η = 0.5, λ by
//! cross-validation).
//!
//! **Raker.** Each of P Gaussian kernels `k_p(x, y) = exp(−‖x − y‖² / (2σ_p²))` is approximated by
//! D orthogonal random features ([`OrthogonalGaussianFeatures`]):
//! `z_p(x) = (1/√D)[sin(v_1ᵀx) … sin(v_Dᵀx), cos(v_1ᵀx) … cos(v_Dᵀx)]`, so that
//! `z_p(x)ᵀz_p(y) = (1/D) Σ_j cos(v_jᵀ(x − y)) ≈ k_p(x, y)`. Kernel p learns a linear model
//! `f_p(x) = θ_pᵀ z_p(x)` by online gradient descent on the regularised loss
//! `ℓ(f_p(x_t), y_t) + λ‖θ_p‖²`, and the kernels are combined by exponential weights
//! `w_p ← w_p exp(−η ℓ(f_p(x_t), y_t))`: `f(x) = Σ_p w̄_p f_p(x)`, `w̄ = w / Σ w`. The loss is the
//! hinge `max(0, 1 − y f)` (the Isolation Kernel paper's OGD loss; it does not say which loss it
//! gave AdaRaker).
//!
//! **AdaRaker** runs Raker instances on the intervals of a geometric cover: at time t (1-based)
//! the active intervals are, for every scale k with `2^k ≤ t`, `[i 2^k, (i + 1) 2^k − 1]` with
//! `i = ⌊t / 2^k⌋`; an instance starts afresh (θ = 0, w = 1) when its interval starts. The
//! active instances are combined as sleeping experts with weights
//! `h_I = exp(−η Σ_{τ ∈ I, τ < t} (ℓ(f_I(x_τ), y_τ) − ℓ(f̂(x_τ), y_τ)))` (their loss relative to
//! the ensemble's since they started; a new instance enters at weight 1, as one that matched the
//! ensemble). The papers' exact meta-weight initialisation is not in the available sources; this
//! is the regret form of sleeping experts (Luo & Schapire 2015), named as our choice.
//! Predictions after training (tests) use the instances active at the last training step.

use kernel_core::trig::sin_cos;
use kernel_core::{CoreError, OnlineLearner};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::error::{check_count, FeatureError};

/// D orthogonal random features for each of P Gaussian kernels (Yu et al., *Orthogonal Random
/// Features*, NIPS 2016): per kernel, the directions are orthonormal in blocks of at most `dim`
/// (Gram-Schmidt of Gaussian vectors: the rows of a Haar-random orthogonal matrix), each scaled
/// by an independent χ_dim norm (the length of a `dim`-dimensional Gaussian vector) and by
/// `1/σ_p`, so that each frequency is marginally `N(0, σ_p^{-2} I)`.
#[derive(Debug, Clone, PartialEq)]
pub struct OrthogonalGaussianFeatures {
    dim: usize,
    features: usize,
    sigmas: Vec<f64>,
    /// `v[p][a][j]` at `(p·dim + a)·D + j`: input column a's coefficient in frequency j of
    /// kernel p (column-major per kernel, so a row's zeros are skipped).
    frequencies: Vec<f64>,
}

impl OrthogonalGaussianFeatures {
    /// Draws `features` (D) frequencies per bandwidth in `sigmas` for `dim`-dimensional inputs.
    pub fn sample<R: Rng + ?Sized>(
        dim: usize,
        features: usize,
        sigmas: &[f64],
        rng: &mut R,
    ) -> Result<Self, FeatureError> {
        check_count("dimension", dim)?;
        check_count("features", features)?;
        check_count("kernels", sigmas.len())?;
        for &s in sigmas {
            kernel_core::error::positive("sigma", s)?;
        }
        let mut frequencies = vec![0.0; sigmas.len() * dim * features];
        for (p, &sigma) in sigmas.iter().enumerate() {
            let mut block: Vec<Vec<f64>> = Vec::with_capacity(dim.min(features));
            for j in 0..features {
                if block.len() == dim {
                    block.clear();
                }
                let v = loop {
                    let mut v: Vec<f64> = (0..dim).map(|_| rng.sample(StandardNormal)).collect();
                    for u in &block {
                        let c: f64 = v.iter().zip(u).map(|(a, b)| a * b).sum();
                        v.iter_mut().zip(u).for_each(|(a, b)| *a -= c * b);
                    }
                    let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
                    if norm > 1e-8 {
                        v.iter_mut().for_each(|a| *a /= norm);
                        break v;
                    }
                };
                let chi: f64 = (0..dim)
                    .map(|_| {
                        let g: f64 = StandardNormal.sample(rng);
                        g * g
                    })
                    .sum::<f64>()
                    .sqrt();
                for (a, &va) in v.iter().enumerate() {
                    frequencies[(p * dim + a) * features + j] = va * chi / sigma;
                }
                block.push(v);
            }
        }
        Ok(Self {
            dim,
            features,
            sigmas: sigmas.to_vec(),
            frequencies,
        })
    }

    /// The input dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of kernels P.
    pub fn kernels(&self) -> usize {
        self.sigmas.len()
    }

    /// Features per kernel: 2D (a sine and a cosine per frequency).
    pub fn width(&self) -> usize {
        2 * self.features
    }

    /// `z_p(x)` of every kernel into `out` (P × 2D, kernel p at `p·2D`), `scratch` the
    /// projections (P·D).
    pub fn map_into(&self, x: &[f64], scratch: &mut Vec<f64>, out: &mut [f64]) {
        let (d, p_n) = (self.features, self.kernels());
        scratch.clear();
        scratch.resize(p_n * d, 0.0);
        for p in 0..p_n {
            let proj = &mut scratch[p * d..(p + 1) * d];
            for (a, &xa) in x.iter().enumerate() {
                if xa != 0.0 {
                    let v = &self.frequencies[(p * self.dim + a) * d..(p * self.dim + a + 1) * d];
                    proj.iter_mut().zip(v).for_each(|(s, &v)| *s += xa * v);
                }
            }
        }
        let scale = 1.0 / (d as f64).sqrt();
        for p in 0..p_n {
            let (sin, cos) = out[p * 2 * d..(p + 1) * 2 * d].split_at_mut(d);
            sin_cos(&scratch[p * d..(p + 1) * d], sin, cos);
            sin.iter_mut()
                .chain(cos.iter_mut())
                .for_each(|v| *v *= scale);
        }
    }
}

/// Raker's and AdaRaker's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct RakerParams {
    /// The step size η of the gradient steps and of the exponential weights.
    pub eta: f64,
    /// The regulariser λ of `ℓ + λ‖θ_p‖²`.
    pub lambda: f64,
}

/// One Raker: per kernel a linear model on its features, and the kernels' log-weights.
#[derive(Debug, Clone)]
struct Raker {
    theta: Vec<f64>,
    log_w: Vec<f64>,
    /// The instance's log meta-weight (AdaRaker).
    log_h: f64,
}

fn hinge(f: f64, y: f64) -> f64 {
    (1.0 - y * f).max(0.0)
}

/// `Σ_i exp(l_i − max) v_i / Σ_i exp(l_i − max)`: a weighted mean with log-weights.
fn weighted_mean(
    log_w: impl Iterator<Item = f64> + Clone,
    values: impl Iterator<Item = f64>,
) -> f64 {
    let top = log_w.clone().fold(f64::NEG_INFINITY, f64::max);
    let (mut num, mut den) = (0.0, 0.0);
    for (l, v) in log_w.zip(values) {
        let w = (l - top).exp();
        num += w * v;
        den += w;
    }
    num / den
}

impl Raker {
    fn new(kernels: usize, width: usize) -> Self {
        Self {
            theta: vec![0.0; kernels * width],
            log_w: vec![0.0; kernels],
            log_h: 0.0,
        }
    }

    /// The per-kernel predictions `f_p = θ_pᵀ z_p` into `out`, and their combination.
    fn predict(&self, z: &[f64], width: usize, out: &mut [f64]) -> f64 {
        for ((o, theta), z) in out
            .iter_mut()
            .zip(self.theta.chunks_exact(width))
            .zip(z.chunks_exact(width))
        {
            *o = theta.iter().zip(z).map(|(a, b)| a * b).sum();
        }
        weighted_mean(self.log_w.iter().copied(), out.iter().copied())
    }

    /// One step on `(z, y)` given the per-kernel predictions `f` made before it.
    fn update(&mut self, z: &[f64], y: f64, f: &[f64], width: usize, p: &RakerParams) {
        let shrink = 1.0 - 2.0 * p.eta * p.lambda;
        for (((theta, z), &fp), log_w) in self
            .theta
            .chunks_exact_mut(width)
            .zip(z.chunks_exact(width))
            .zip(f)
            .zip(&mut self.log_w)
        {
            let loss = hinge(fp, y);
            *log_w -= p.eta * loss;
            if loss > 0.0 {
                theta
                    .iter_mut()
                    .zip(z)
                    .for_each(|(t, z)| *t = shrink * *t + p.eta * y * z);
            } else {
                theta.iter_mut().for_each(|t| *t *= shrink);
            }
        }
        // Keep the log-weights near 0 (only their differences matter).
        let top = self.log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        self.log_w.iter_mut().for_each(|l| *l -= top);
    }
}

/// AdaRaker (or Raker alone, with `adaptive = false`: one instance over the whole stream).
#[derive(Debug, Clone)]
pub struct AdaRaker {
    features: OrthogonalGaussianFeatures,
    params: RakerParams,
    adaptive: bool,
    /// The instance of scale k (interval length 2^k) at index k.
    instances: Vec<Raker>,
    /// Samples seen.
    t: u64,
    z: Vec<f64>,
    scratch: Vec<f64>,
    f: Vec<f64>,
    f_instance: Vec<f64>,
}

impl AdaRaker {
    /// A learner on `features` (drawn once, shared by every instance).
    pub fn new(
        features: OrthogonalGaussianFeatures,
        params: RakerParams,
        adaptive: bool,
    ) -> Result<Self, FeatureError> {
        kernel_core::error::positive("eta", params.eta)?;
        kernel_core::error::non_negative("lambda", params.lambda)?;
        if 2.0 * params.eta * params.lambda >= 1.0 {
            return Err(CoreError::invalid(
                "lambda",
                params.lambda,
                "2 eta lambda < 1 (each step shrinks theta by 1 - 2 eta lambda)",
            ));
        }
        let (k, w) = (features.kernels(), features.width());
        Ok(Self {
            z: vec![0.0; k * w],
            f: vec![0.0; k],
            features,
            params,
            adaptive,
            instances: Vec::new(),
            t: 0,
            scratch: Vec::new(),
            f_instance: Vec::new(),
        })
    }

    /// Instances active now (AdaRaker: one per scale k with 2^k ≤ t).
    pub fn active_instances(&self) -> usize {
        self.instances.len()
    }

    fn check_row(&self, x: &[f64]) -> Result<(), FeatureError> {
        if x.len() != self.features.dim() {
            return Err(CoreError::shape(
                "row length vs the features' dimension",
                self.features.dim(),
                x.len(),
            ));
        }
        if let Some((column, &value)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(CoreError::NonFiniteInput {
                what: "input",
                row: 0,
                column,
                value,
            });
        }
        Ok(())
    }
}

/// The ensemble's prediction on the features `z`: the instances' own predictions into
/// `f_instance`, every kernel's of instance i at `f[i·P..]`.
fn combine(
    instances: &[Raker],
    z: &[f64],
    kernels: usize,
    width: usize,
    f: &mut Vec<f64>,
    f_instance: &mut Vec<f64>,
) -> f64 {
    f.resize(instances.len().max(1) * kernels, 0.0);
    f_instance.clear();
    for (i, inst) in instances.iter().enumerate() {
        f_instance.push(inst.predict(z, width, &mut f[i * kernels..(i + 1) * kernels]));
    }
    if instances.is_empty() {
        return 0.0;
    }
    weighted_mean(
        instances.iter().map(|i| i.log_h),
        f_instance.iter().copied(),
    )
}

impl OnlineLearner for AdaRaker {
    type Row = [f64];
    type Error = FeatureError;

    fn predict_one(&self, x: &[f64]) -> Result<f64, FeatureError> {
        self.check_row(x)?;
        let (kernels, width) = (self.features.kernels(), self.features.width());
        let mut z = vec![0.0; kernels * width];
        self.features.map_into(x, &mut Vec::new(), &mut z);
        let (mut f, mut f_instance) = (Vec::new(), Vec::new());
        Ok(combine(
            &self.instances,
            &z,
            kernels,
            width,
            &mut f,
            &mut f_instance,
        ))
    }

    fn update(&mut self, x: &[f64], y: f64) -> Result<f64, FeatureError> {
        self.check_row(x)?;
        if y != 1.0 && y != -1.0 {
            return Err(CoreError::invalid_input("label", y, "-1 or +1"));
        }
        let (kernels, width) = (self.features.kernels(), self.features.width());
        self.t += 1;
        let t = self.t;
        // Start the instances whose interval starts at t (and a new scale when 2^k = t).
        if self.adaptive {
            let scales = (64 - t.leading_zeros()) as usize; // ⌊log₂ t⌋ + 1
            while self.instances.len() < scales {
                self.instances.push(Raker::new(kernels, width));
            }
            for (k, inst) in self.instances.iter_mut().enumerate() {
                if t.is_multiple_of(1u64 << k) {
                    *inst = Raker::new(kernels, width);
                }
            }
        } else if self.instances.is_empty() {
            self.instances.push(Raker::new(kernels, width));
        }
        self.features.map_into(x, &mut self.scratch, &mut self.z);
        let f = combine(
            &self.instances,
            &self.z,
            kernels,
            width,
            &mut self.f,
            &mut self.f_instance,
        );
        let ensemble_loss = hinge(f, y);
        let eta = self.params.eta;
        for (i, inst) in self.instances.iter_mut().enumerate() {
            inst.log_h -= eta * (hinge(self.f_instance[i], y) - ensemble_loss);
            inst.update(
                &self.z,
                y,
                &self.f[i * kernels..(i + 1) * kernels],
                width,
                &self.params,
            );
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The features' inner products approach the Gaussian kernel (the papers' approximation),
    /// and the directions of a block are orthogonal.
    #[test]
    fn features_approximate_the_gaussian_kernel() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (dim, d, sigma) = (5, 4000, 1.5);
        let map = OrthogonalGaussianFeatures::sample(dim, d, &[sigma], &mut rng).unwrap();
        // Orthogonality within the first block of `dim` directions.
        let dir = |j: usize| -> Vec<f64> { (0..dim).map(|a| map.frequencies[a * d + j]).collect() };
        for (i, j) in [(0, 1), (1, 4), (2, 3)] {
            let dot: f64 = dir(i).iter().zip(dir(j)).map(|(a, b)| a * b).sum();
            assert!(dot.abs() < 1e-9, "directions {i}, {j}: {dot}");
        }
        let (mut scratch, mut zx, mut zy) = (Vec::new(), vec![0.0; 2 * d], vec![0.0; 2 * d]);
        for _ in 0..20 {
            let x: Vec<f64> = (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect();
            let y: Vec<f64> = (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect();
            map.map_into(&x, &mut scratch, &mut zx);
            map.map_into(&y, &mut scratch, &mut zy);
            let approx: f64 = zx.iter().zip(&zy).map(|(a, b)| a * b).sum();
            let d2: f64 = x.iter().zip(&y).map(|(a, b)| (a - b) * (a - b)).sum();
            let exact = (-d2 / (2.0 * sigma * sigma)).exp();
            // D = 4,000 frequencies: the error's sd is below 1/sqrt(2D) ~ 0.011.
            assert!((approx - exact).abs() < 0.05, "{approx} vs {exact}");
            let zz: f64 = zx.iter().map(|a| a * a).sum();
            assert!((zz - 1.0).abs() < 1e-12, "z(x).z(x) = 1");
        }
    }

    /// One Raker step against the formulas written out by hand: θ_p ← (1 − 2ηλ)θ_p + η y z_p on
    /// a margin violation, w_p ← w_p e^{−η ℓ_p}, and the prediction the weighted mean.
    #[test]
    fn raker_steps_follow_the_update_rules() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let map = OrthogonalGaussianFeatures::sample(3, 2, &[0.5, 2.0], &mut rng).unwrap();
        let params = RakerParams {
            eta: 0.5,
            lambda: 0.01,
        };
        let mut learner = AdaRaker::new(map.clone(), params, false).unwrap();
        let (x1, x2) = ([0.3, -0.2, 0.9], [-0.5, 0.4, 0.1]);
        assert_eq!(learner.update(&x1, 1.0).unwrap(), 0.0);
        let mut scratch = Vec::new();
        let (mut z1, mut z2) = (vec![0.0; 8], vec![0.0; 8]);
        map.map_into(&x1, &mut scratch, &mut z1);
        map.map_into(&x2, &mut scratch, &mut z2);
        // After step 1: θ_p = η z_p(x1) (θ was 0, the loss 1 > 0); both kernels lost 1 so the
        // weights are equal.
        let f: Vec<f64> = (0..2)
            .map(|p| (0..4).map(|j| 0.5 * z1[p * 4 + j] * z2[p * 4 + j]).sum())
            .collect();
        let expected = (f[0] + f[1]) / 2.0;
        let got = learner.update(&x2, -1.0).unwrap();
        assert!((got - expected).abs() < 1e-12, "{got} vs {expected}");
        // After step 2 the weights differ by the kernels' losses at step 2.
        let (l0, l1) = (hinge(f[0], -1.0), hinge(f[1], -1.0));
        let theta = |p: usize, j: usize| {
            let after1 = 0.5 * z1[p * 4 + j];
            let l = if p == 0 { l0 } else { l1 };
            0.99 * after1 + if l > 0.0 { -0.5 * z2[p * 4 + j] } else { 0.0 }
        };
        let fx: Vec<f64> = (0..2)
            .map(|p| (0..4).map(|j| theta(p, j) * z1[p * 4 + j]).sum())
            .collect();
        let (w0, w1) = ((-0.5 * l0).exp(), (-0.5 * l1).exp());
        let expected = (w0 * fx[0] + w1 * fx[1]) / (w0 + w1);
        let got = learner.predict_one(&x1).unwrap();
        assert!((got - expected).abs() < 1e-12, "{got} vs {expected}");
    }

    /// The geometric cover: ⌊log₂ t⌋ + 1 instances at time t, and the adaptive learner learns a
    /// separable two-class problem (well above chance on fresh points).
    #[test]
    fn adaraker_keeps_one_instance_per_scale_and_learns() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let sigmas: Vec<f64> = (-3..=2).map(|m| 2f64.powi(m)).collect();
        let map = OrthogonalGaussianFeatures::sample(2, 50, &sigmas, &mut rng).unwrap();
        let params = RakerParams {
            eta: 0.5,
            lambda: 0.001,
        };
        let mut learner = AdaRaker::new(map, params, true).unwrap();
        let point = |rng: &mut ChaCha8Rng| {
            let x = [rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)];
            let y = if x[0] * x[0] + x[1] * x[1] < 0.5 {
                1.0
            } else {
                -1.0
            };
            (x, y)
        };
        for t in 1..=3000u64 {
            let (x, y) = point(&mut rng);
            learner.update(&x, y).unwrap();
            assert_eq!(learner.active_instances() as u32, 64 - t.leading_zeros());
        }
        let correct = (0..1000)
            .filter(|_| {
                let (x, y) = point(&mut rng);
                learner.predict_one(&x).unwrap() * y > 0.0
            })
            .count();
        assert!(correct > 850, "{correct} / 1000");
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        assert!(OrthogonalGaussianFeatures::sample(2, 5, &[], &mut rng).is_err());
        assert!(OrthogonalGaussianFeatures::sample(2, 5, &[-1.0], &mut rng).is_err());
        let map = OrthogonalGaussianFeatures::sample(2, 5, &[1.0], &mut rng).unwrap();
        let p = |lambda| RakerParams { eta: 0.5, lambda };
        assert!(AdaRaker::new(map.clone(), p(1.0), true).is_err());
        let mut l = AdaRaker::new(map, p(0.01), true).unwrap();
        assert!(l.update(&[1.0], 1.0).is_err());
        assert!(l.update(&[1.0, f64::NAN], 1.0).is_err());
        assert!(l.update(&[1.0, 0.0], 0.5).is_err());
        assert_eq!(
            l.active_instances(),
            0,
            "a rejected sample leaves the model unchanged"
        );
    }
}
