//! The kernel menu of A la Carte as feature models with learnable parameters (spec §4, §6):
//! the Fastfood kernels RBF, ARD, FSARD, FSGBARD, GM (spectral mixture) and PWL (piecewise
//! linear radial), and the SSGPR baseline (all m·d frequencies free).
//!
//! A [`FeatureModel`] maps a flat parameter vector θ and inputs X (n × dim) to features Φ
//! (n × D, amplitudes absorbed: K ≈ ΦΦᵀ, decision D6), and maps `∂log p/∂Φ` back to `∂log p/∂θ`
//! through the Fastfood backward pass (spec §5) in O(n m log d) (RBF, whose one lengthscale
//! scales every projection alike, through its projections instead: no backward pass). Positive parameters are stored
//! as logarithms; the noise variance is `σ²_min + exp(θ₀)` with a floor σ²_min > 0.
//!
//! Layout of θ: `[noise, signal, lengths…]` then per family: FSARD `scale (m)`; FSGBARD
//! `scale (m), G (k·d), B (k·d)`; PWL `log heights (K+1)`; SSGPR `Ω (m × dim, row-major)`; GM has
//! no common signal: `[noise, then per component q: log w_q, log ℓ_q (dim), μ_q (dim)]`.

use kernel_core::trig::sin_cos;
use ndarray::{Array2, ArrayView2, Axis};
use rand::Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;

use crate::error::{at_least_one, check_inputs, FastfoodError};
use crate::evidence::{Evidence, Gradients};
use crate::fastfood::{BatchWork, FastfoodDraw};
use crate::fwht::padded_dimension;
use crate::radial::{chi_radii, PiecewiseLinear};

/// A kernel family of the menu (with the `serde` feature, named `rbf`, `ard`, `fsard`,
/// `fsgbard`, `gm`, `pwl`, `ssgpr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Family {
    /// Fastfood, Gaussian spectrum, one lengthscale.
    Rbf,
    /// Fastfood, Gaussian spectrum, one lengthscale per input.
    Ard,
    /// ARD with the m radii S learned.
    Fsard,
    /// FSARD with G and B learned too (no ‖G‖ normalisation, D4).
    Fsgbard,
    /// Gaussian spectral mixture of Q components, ±μ feature pairs (D2).
    Gm,
    /// Piecewise-linear radial spectrum (heights learned), ARD scaling.
    Pwl,
    /// Sparse spectrum GP: all m·d frequencies free.
    Ssgpr,
}

/// What a model is: family, m frequencies, GM components Q, PWL intervals K.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelSpec {
    pub family: Family,
    /// m, frequencies (features D = 2m).
    pub m: usize,
    /// Q of GM.
    pub components: usize,
    /// K of PWL (K + 1 heights).
    pub intervals: usize,
}

/// An ARD solution (or the default start): the point every flexible kernel starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct ArdPoint {
    pub noise: f64,
    pub signal: f64,
    pub lengths: Vec<f64>,
}

impl ArdPoint {
    /// The spec's start for standardised inputs: ℓ_j = √dim, σ_f² = var y, σ² = 0.1 var y.
    pub fn default_start(dim: usize, y_var: f64) -> Self {
        let v = if y_var.is_finite() && y_var > 0.0 {
            y_var
        } else {
            1.0
        };
        Self {
            noise: 0.1 * v,
            signal: v,
            lengths: vec![(dim as f64).sqrt(); dim],
        }
    }
}

/// Where each parameter family sits in θ.
#[derive(Debug, Clone, Default)]
struct Offsets {
    lengths: usize,
    n_lengths: usize,
    scale: usize,
    gauss: usize,
    sign: usize,
    heights: usize,
    omega: usize,
    /// GM: start of component q's `[log w, log ℓ, μ]`.
    comps: Vec<usize>,
    total: usize,
}

/// A kernel family with its random draws, ready to map θ to features.
#[derive(Debug, Clone)]
pub struct FeatureModel {
    spec: KernelSpec,
    dim: usize,
    draws: Vec<FastfoodDraw>,
    /// Per draw, `s_j / ‖G_b‖` at the drawn G (χ_d radii): the fixed scale of RBF/ARD/GM and
    /// the initial one of FSARD/FSGBARD.
    base_scale: Vec<Vec<f64>>,
    /// Per draw, `1/‖G_b‖` per row (PWL scales its radii by it).
    inv_norm: Vec<Vec<f64>>,
    pwl: Option<PiecewiseLinear>,
    /// SSGPR: standard normals of the initial frequencies (m × dim).
    normals: Option<Array2<f64>>,
    noise_floor: f64,
    off: Offsets,
}

/// Columns of component `q` and its row count.
#[derive(Debug, Clone, Copy)]
struct Block {
    col: usize,
    rows: usize,
}

/// Rows per parallel chunk (fixed, so sums do not depend on the thread count).
const CHUNK: usize = 64;

/// Work buffers of [`FeatureModel::features`] for one chunk of rows: the batched projection's,
/// the scaled inputs `xt`, the projections `z` and (GM) the arguments z ± μᵀx.
#[derive(Default)]
struct FeatureScratch {
    work: BatchWork,
    xt: Vec<f64>,
    z: Vec<f64>,
    arg: Vec<f64>,
}

thread_local! {
    /// Each thread's [`FeatureScratch`], kept between chunks and calls (taken out while a chunk
    /// runs, so nothing is borrowed across work that rayon may interleave).
    static FEATURE_SCRATCH: std::cell::Cell<FeatureScratch> = std::cell::Cell::new(FeatureScratch::default());
}

impl FeatureModel {
    /// Draws the model's random structure. `draw` is the Fastfood draw of m rows shared with the
    /// ARD model of the same seed (FSARD, FSGBARD and PWL reuse it, so they start exactly or
    /// nearly at the ARD solution); GM and SSGPR draw their own from `rng`.
    pub fn new<R: Rng + ?Sized>(
        spec: KernelSpec,
        dim: usize,
        noise_floor: f64,
        draw: Option<FastfoodDraw>,
        rng: &mut R,
    ) -> Result<Self, FastfoodError> {
        at_least_one("dimension", dim)?;
        at_least_one("m (frequencies)", spec.m)?;
        if !(noise_floor.is_finite() && noise_floor > 0.0) {
            return Err(FastfoodError::InvalidParameter {
                name: "noise floor",
                value: noise_floor.to_string(),
                expected: "a finite number > 0",
            });
        }
        let pad = padded_dimension(dim);
        let mut off = Offsets {
            lengths: 2,
            ..Offsets::default()
        };
        let (mut draws, mut pwl, mut normals) = (Vec::new(), None, None);
        let take = |rng: &mut R, rows: usize| match &draw {
            Some(d) if d.rows() == rows && d.dim() == dim => d.clone(),
            _ => FastfoodDraw::sample(dim, rows, rng),
        };
        match spec.family {
            Family::Rbf | Family::Ard | Family::Fsard | Family::Fsgbard | Family::Pwl => {
                draws.push(take(rng, spec.m));
                off.n_lengths = if spec.family == Family::Rbf { 1 } else { dim };
                let mut t = off.lengths + off.n_lengths;
                let blocks = draws[0].blocks() * pad;
                match spec.family {
                    Family::Fsard => {
                        off.scale = t;
                        t += spec.m;
                    }
                    Family::Fsgbard => {
                        off.scale = t;
                        off.gauss = t + spec.m;
                        off.sign = t + spec.m + blocks;
                        t += spec.m + 2 * blocks;
                    }
                    Family::Pwl => {
                        at_least_one("PWL knot intervals", spec.intervals)?;
                        let p = PiecewiseLinear::for_dimension(pad, spec.intervals)?;
                        off.heights = t;
                        t += p.n_heights();
                        pwl = Some(p);
                    }
                    _ => {}
                }
                off.total = t;
            }
            Family::Gm => {
                at_least_one("GM components", spec.components)?;
                let half = spec.m / 2;
                if half < spec.components {
                    return Err(FastfoodError::InvalidParameter {
                        name: "m",
                        value: spec.m.to_string(),
                        expected: "at least 2 Q for GM (each component needs a ± frequency pair)",
                    });
                }
                let mut t = 1;
                for q in 0..spec.components {
                    let rows = half / spec.components + usize::from(q < half % spec.components);
                    draws.push(FastfoodDraw::sample(dim, rows, rng));
                    off.comps.push(t);
                    t += 1 + 2 * dim;
                }
                off.n_lengths = dim;
                off.total = t;
            }
            Family::Ssgpr => {
                normals = Some(Array2::from_shape_fn((spec.m, dim), |_| {
                    rng.sample::<f64, _>(StandardNormal)
                }));
                off.omega = 2;
                off.total = 2 + spec.m * dim;
            }
        }
        let mut base_scale = Vec::new();
        let mut inv_norm = Vec::new();
        for d in &draws {
            let norms = d.gauss_norm_per_row(&d.gauss);
            let s = chi_radii(pad, &d.uniforms);
            base_scale.push(s.iter().zip(&norms).map(|(s, n)| s / n).collect());
            inv_norm.push(norms.iter().map(|n| 1.0 / n).collect());
        }
        Ok(Self {
            spec,
            dim,
            draws,
            base_scale,
            inv_norm,
            pwl,
            normals,
            noise_floor,
            off,
        })
    }

    pub fn spec(&self) -> KernelSpec {
        self.spec
    }
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// The number of parameters (|θ|).
    pub fn n_params(&self) -> usize {
        self.off.total
    }
    /// D, the number of features.
    pub fn n_features(&self) -> usize {
        match self.spec.family {
            Family::Gm => self.blocks().iter().map(|b| 4 * b.rows).sum(),
            _ => 2 * self.spec.m,
        }
    }
    /// The Fastfood draws (one; Q for GM; none for SSGPR).
    pub fn draws(&self) -> &[FastfoodDraw] {
        &self.draws
    }
    /// Values the method stores beyond θ to evaluate its features: the fixed random structure
    /// (B, Π, G per block and the radii's uniforms u: O(m)); FSARD learns S in θ (no u),
    /// FSGBARD also G and B (Π only); SSGPR's Ω is all in θ.
    pub fn structure_values(&self) -> usize {
        self.draws
            .iter()
            .map(|d| {
                let kd = d.blocks() * d.pad();
                match self.spec.family {
                    Family::Fsard => 3 * kd,
                    Family::Fsgbard => kd,
                    _ => 3 * kd + d.rows(),
                }
            })
            .sum()
    }

    /// The m frequencies ω_j (rows of V over the lengthscales, m × dim) of a single-stack model
    /// at θ (None for GM and SSGPR): the empirical spectral distribution of FSARD and FSGBARD,
    /// whose learned S, G and B leave no closed form.
    pub fn frequencies(&self, theta: &[f64]) -> Option<Array2<f64>> {
        if matches!(self.spec.family, Family::Gm | Family::Ssgpr) {
            return None;
        }
        let d = &self.draws[0];
        let (scales, _) = self.scales(theta);
        let (sign, gauss) = self.diagonals(theta, 0);
        let lengths = self.lengths(theta);
        let mut w = d.work();
        let mut out = Array2::<f64>::zeros((d.rows(), self.dim));
        let mut z = vec![0.0; d.rows()];
        for k in 0..self.dim {
            let mut e = vec![0.0; self.dim];
            e[k] = 1.0;
            d.project(&e, sign, gauss, &scales[0], &mut z, &mut w);
            for j in 0..d.rows() {
                out[[j, k]] = z[j] / lengths[k];
            }
        }
        Some(out)
    }

    fn blocks(&self) -> Vec<Block> {
        let mut col = 0;
        self.draws
            .iter()
            .map(|d| {
                let b = Block {
                    col,
                    rows: d.rows(),
                };
                col += 4 * d.rows();
                b
            })
            .collect()
    }

    /// σ² of θ.
    pub fn noise(&self, theta: &[f64]) -> f64 {
        self.noise_floor + theta[0].exp()
    }

    /// The lengthscales ℓ (dim values; RBF repeats its one; GM: component 0's; SSGPR: none).
    pub fn lengths(&self, theta: &[f64]) -> Vec<f64> {
        match self.spec.family {
            Family::Ssgpr => Vec::new(),
            Family::Gm => theta[self.off.comps[0] + 1..][..self.dim]
                .iter()
                .map(|v| v.exp())
                .collect(),
            Family::Rbf => vec![theta[2].exp(); self.dim],
            _ => theta[2..2 + self.dim].iter().map(|v| v.exp()).collect(),
        }
    }

    /// PWL: the knots and heights of the radial density at θ.
    pub fn pwl_density(&self, theta: &[f64]) -> Option<(&PiecewiseLinear, Vec<f64>)> {
        let p = self.pwl.as_ref()?;
        let h = theta[self.off.heights..][..p.n_heights()]
            .iter()
            .map(|v| v.exp())
            .collect();
        Some((p, h))
    }

    /// GM: per component (weight w_q, lengthscales ℓ_q, mean μ_q) at θ.
    pub fn gm_components(&self, theta: &[f64]) -> Vec<(f64, Vec<f64>, Vec<f64>)> {
        self.off
            .comps
            .iter()
            .map(|&o| {
                (
                    theta[o].exp(),
                    theta[o + 1..o + 1 + self.dim]
                        .iter()
                        .map(|v| v.exp())
                        .collect(),
                    theta[o + 1 + self.dim..o + 1 + 2 * self.dim].to_vec(),
                )
            })
            .collect()
    }

    /// θ starting at an ARD point (spec §5: flexible kernels start from the fitted ARD
    /// solution). FSARD/FSGBARD then equal ARD at the start; PWL's heights are the χ_d density
    /// (close to ARD); GM splits the signal evenly, component 0 at μ = 0 and the others at
    /// μ_q ~ N(0, diag(1/ℓ²)) (at μ = 0 the ± pair has zero gradient in μ); SSGPR's frequencies
    /// are drawn from the ARD spectrum, Ω_rk = ε_rk / ℓ_k.
    pub fn start<R: Rng + ?Sized>(&self, at: &ArdPoint, rng: &mut R) -> Vec<f64> {
        let mut t = vec![0.0; self.off.total];
        t[0] = (at.noise - self.noise_floor)
            .max(1e-3 * self.noise_floor)
            .ln();
        let log_len: Vec<f64> = at.lengths.iter().map(|l| l.ln()).collect();
        if self.spec.family != Family::Gm {
            t[1] = at.signal.ln();
        }
        match self.spec.family {
            Family::Rbf => t[2] = log_len.iter().sum::<f64>() / self.dim as f64,
            Family::Ard | Family::Fsard | Family::Fsgbard | Family::Pwl => {
                t[2..2 + self.dim].copy_from_slice(&log_len)
            }
            _ => {}
        }
        match self.spec.family {
            Family::Fsard | Family::Fsgbard => {
                t[self.off.scale..self.off.scale + self.spec.m]
                    .copy_from_slice(&self.base_scale[0]);
                if self.spec.family == Family::Fsgbard {
                    let g = &self.draws[0].gauss;
                    t[self.off.gauss..self.off.gauss + g.len()].copy_from_slice(g);
                    let s = &self.draws[0].sign;
                    t[self.off.sign..self.off.sign + s.len()].copy_from_slice(s);
                }
            }
            Family::Pwl => {
                let p = self.pwl.as_ref().expect("PWL has knots");
                let pad = self.draws[0].pad();
                for (k, h) in p.chi_heights(pad).into_iter().enumerate() {
                    t[self.off.heights + k] = h.ln();
                }
            }
            Family::Gm => {
                let q = self.spec.components as f64;
                for (c, &o) in self.off.comps.iter().enumerate() {
                    t[o] = (at.signal / q).ln();
                    t[o + 1..o + 1 + self.dim].copy_from_slice(&log_len);
                    // Component 0 stays at μ = 0 for good (the likelihood is even in μ, so its
                    // gradient there is exactly 0): a deliberate ARD-like component.
                    for k in 0..self.dim {
                        t[o + 1 + self.dim + k] = if c == 0 {
                            0.0
                        } else {
                            rng.sample::<f64, _>(StandardNormal) / at.lengths[k]
                        };
                    }
                }
            }
            Family::Ssgpr => {
                let z = self.normals.as_ref().expect("SSGPR has normals");
                for r in 0..self.spec.m {
                    for k in 0..self.dim {
                        t[self.off.omega + r * self.dim + k] = z[[r, k]] / at.lengths[k];
                    }
                }
            }
            _ => {}
        }
        t
    }

    /// Checks θ's length and the inputs' shape.
    fn check(&self, theta: &[f64], x: ArrayView2<f64>) -> Result<(), FastfoodError> {
        if theta.len() != self.off.total {
            return Err(FastfoodError::ShapeMismatch {
                what: "parameters",
                expected: self.off.total,
                got: theta.len(),
            });
        }
        check_inputs("inputs", x, Some(self.dim))
    }

    /// Per draw, the scale vector at θ, and for PWL `∂s_j/∂log h` (m × (K+1), row-major).
    fn scales(&self, theta: &[f64]) -> (Vec<Vec<f64>>, Vec<f64>) {
        match self.spec.family {
            Family::Fsard | Family::Fsgbard => (
                vec![theta[self.off.scale..self.off.scale + self.spec.m].to_vec()],
                Vec::new(),
            ),
            Family::Pwl => {
                let (p, h) = self.pwl_density(theta).expect("PWL");
                let nh = p.n_heights();
                let d = &self.draws[0];
                let mut ds = vec![0.0; d.rows() * nh];
                let scale = (0..d.rows())
                    .map(|j| {
                        let g = &mut ds[j * nh..(j + 1) * nh];
                        let r = p.radius(&h, d.uniforms[j], g);
                        for (gk, hk) in g.iter_mut().zip(&h) {
                            *gk *= hk * self.inv_norm[0][j];
                        }
                        r * self.inv_norm[0][j]
                    })
                    .collect();
                (vec![scale], ds)
            }
            _ => (self.base_scale.clone(), Vec::new()),
        }
    }

    /// `(sign, gauss)` of draw `c` at θ (FSGBARD learns them).
    fn diagonals<'a>(&'a self, theta: &'a [f64], c: usize) -> (&'a [f64], &'a [f64]) {
        let d = &self.draws[c];
        if self.spec.family == Family::Fsgbard {
            let n = d.sign.len();
            (
                &theta[self.off.sign..self.off.sign + n],
                &theta[self.off.gauss..self.off.gauss + n],
            )
        } else {
            (&d.sign, &d.gauss)
        }
    }

    /// `(amplitude, log-lengthscales, mean)` of component `c` at θ.
    fn component<'a>(&self, theta: &'a [f64], c: usize) -> (f64, &'a [f64], Option<&'a [f64]>) {
        match self.spec.family {
            Family::Gm => {
                let o = self.off.comps[c];
                let rows = self.draws[c].rows() as f64;
                (
                    (theta[o].exp() / (2.0 * rows)).sqrt(),
                    &theta[o + 1..o + 1 + self.dim],
                    Some(&theta[o + 1 + self.dim..o + 1 + 2 * self.dim]),
                )
            }
            _ => (
                (theta[1].exp() / self.spec.m as f64).sqrt(),
                &theta[self.off.lengths..self.off.lengths + self.off.n_lengths],
                None,
            ),
        }
    }

    /// Φ(X) at θ (n × D).
    pub fn features(
        &self,
        theta: &[f64],
        x: ArrayView2<f64>,
    ) -> Result<Array2<f64>, FastfoodError> {
        Ok(self.features_and_projections(theta, x, false)?.0)
    }

    /// Whether [`Self::gradient`] takes the projections Z = V x̃ in place of the backward pass:
    /// RBF, whose one lengthscale scales every projection alike (z = V x / ℓ), so that
    /// `∂log p/∂log ℓ = −Σ ∂log p/∂z ∘ z` (the backward pass's `−Σ_k (Vᵀ g_z)_k x̃_k` summed the
    /// other way round; the same value up to rounding).
    fn gradient_reads_projections(&self) -> bool {
        self.spec.family == Family::Rbf
    }

    /// Φ(X) at θ, and, when `keep` and [`Self::gradient_reads_projections`], the projections Z
    /// (the arguments of Φ's cosines and sines, in the first m columns of each row) for
    /// [`Self::gradient`].
    pub fn features_and_projections(
        &self,
        theta: &[f64],
        x: ArrayView2<f64>,
        keep: bool,
    ) -> Result<(Array2<f64>, Option<Array2<f64>>), FastfoodError> {
        self.check(theta, x)?;
        let (n, dcols) = (x.nrows(), self.n_features());
        // Every value is written below (a test poisons the spare memory to check it).
        let mut phi = crate::blas::scratch(n, dcols);
        if self.spec.family == Family::Ssgpr {
            let omega = ArrayView2::from_shape((self.spec.m, self.dim), &theta[self.off.omega..])
                .expect("Ω has m × dim values");
            let z = x.dot(&omega.t());
            let amp = (theta[1].exp() / self.spec.m as f64).sqrt();
            let m = self.spec.m;
            let (mut sin, mut cos) = (vec![0.0; m], vec![0.0; m]);
            for (mut p, z) in phi.axis_iter_mut(Axis(0)).zip(z.axis_iter(Axis(0))) {
                sin_cos(
                    z.as_slice().expect("a standard-layout product"),
                    &mut sin,
                    &mut cos,
                );
                for j in 0..m {
                    p[j] = amp * cos[j];
                    p[m + j] = amp * sin[j];
                }
            }
            return Ok((phi, None));
        }
        let (scales, _) = self.scales(theta);
        let blocks = self.blocks();
        let dim = self.dim;
        // Z in the layout the batched projection writes (rows z_stride apart), so that it is
        // written there directly; the columns past m are never read, the others all written.
        let mut projections = (keep && self.gradient_reads_projections())
            .then(|| crate::blas::scratch(n, self.draws[0].z_stride()));
        let projection_chunks: Vec<Option<ndarray::ArrayViewMut2<f64>>> = match &mut projections {
            Some(z) => z.axis_chunks_iter_mut(Axis(0), CHUNK).map(Some).collect(),
            None => (0..n.div_ceil(CHUNK)).map(|_| None).collect(),
        };
        phi.axis_chunks_iter_mut(Axis(0), CHUNK)
            .into_par_iter()
            .zip(x.axis_chunks_iter(Axis(0), CHUNK).into_par_iter())
            .zip(projection_chunks.into_par_iter())
            .for_each(|((mut p, xs), mut zs)| {
                // This thread's buffers from its last chunk: freeing them after every chunk gave
                // the allocator's trim (madvise) and the next chunk's page faults, about 12 % of
                // an RBF evaluation at n = 278 (configs/alacarte/README.md).
                let FeatureScratch {
                    mut work,
                    mut xt,
                    mut z,
                    mut arg,
                } = FEATURE_SCRATCH.with(|s| s.take());
                for (c, d) in self.draws.iter().enumerate() {
                    let (amp, loglen, mean) = self.component(theta, c);
                    let (sign, gauss) = self.diagonals(theta, c);
                    let (rows, col, batch) = (d.rows(), blocks[c].col, d.batch_rows());
                    for (b, (mut pb, xb)) in p
                        .axis_chunks_iter_mut(Axis(0), batch)
                        .zip(xs.axis_chunks_iter(Axis(0), batch))
                        .enumerate()
                    {
                        let r = xb.nrows();
                        xt.resize(r * dim, 0.0);
                        let stride = d.z_stride();
                        let len = r * stride;
                        for (q, xrow) in xb.axis_iter(Axis(0)).enumerate() {
                            let xrow = xrow.as_slice().expect("row");
                            scale_inputs(xrow, loglen, &mut xt[q * dim..][..dim]);
                        }
                        // Into the kept projections' rows when there are some, else the buffer.
                        let z: &mut [f64] = match &mut zs {
                            Some(zs) => &mut zs.as_slice_mut().expect("contiguous rows")
                                [b * batch * stride..][..len],
                            None => {
                                z.resize(len, 0.0);
                                &mut z[..len]
                            }
                        };
                        d.project_rows(&xt, r, sign, gauss, &scales[c], z, &mut work);
                        let z = &*z;
                        // amp·cos and amp·sin of the arguments into columns offset.. and
                        // offset + rows.. of the batch's rows (sin and cos written in place).
                        let write =
                            |pb: &mut ndarray::ArrayViewMut2<f64>, args: &[f64], offset: usize| {
                                for (q, mut prow) in pb.axis_iter_mut(Axis(0)).enumerate() {
                                    let prow = prow.as_slice_mut().expect("a row of Φ");
                                    let (co, si) = prow[offset..][..2 * rows].split_at_mut(rows);
                                    sin_cos(&args[q * stride..][..rows], si, co);
                                    co.iter_mut().chain(si.iter_mut()).for_each(|v| *v *= amp);
                                }
                            };
                        match mean {
                            None => write(&mut pb, z, 0),
                            Some(mu) => {
                                let mx: Vec<f64> = xb
                                    .axis_iter(Axis(0))
                                    .map(|xrow| mu.iter().zip(xrow).map(|(a, b)| a * b).sum())
                                    .collect();
                                arg.resize(len, 0.0);
                                for (half, shift) in [(0, 1.0), (2 * rows, -1.0)] {
                                    for (q, &mx) in mx.iter().enumerate() {
                                        let (a, zq) = (
                                            &mut arg[q * stride..][..rows],
                                            &z[q * stride..][..rows],
                                        );
                                        for (a, z) in a.iter_mut().zip(zq) {
                                            *a = z + shift * mx;
                                        }
                                    }
                                    write(&mut pb, &arg, col + half);
                                }
                            }
                        }
                    }
                }
                FEATURE_SCRATCH.with(|s| s.set(FeatureScratch { work, xt, z, arg }));
            });
        Ok((phi, projections))
    }

    /// Which gradients [`Self::gradient`] wants from [`evidence`](crate::evidence::evidence):
    /// RBF contracts `∂log p/∂Φ` row by row, so its rank-one term is kept apart.
    pub fn evidence_gradients(&self) -> Gradients {
        if self.gradient_reads_projections() {
            Gradients::RankOneApart
        } else {
            Gradients::Full
        }
    }

    /// `∂log p/∂θ` from `∂log p/∂Φ` and `∂log p/∂σ²` (`e`), with Φ = Φ(X; θ) and `projections`
    /// the Z that [`Self::features_and_projections`] kept with it (computed here when the family
    /// reads them and none are given; ignored by the families that do not).
    pub fn gradient(
        &self,
        theta: &[f64],
        x: ArrayView2<f64>,
        phi: ArrayView2<f64>,
        projections: Option<ArrayView2<f64>>,
        e: &Evidence,
    ) -> Result<Vec<f64>, FastfoodError> {
        self.check(theta, x)?;
        let d_noise = e.d_noise;
        let computed;
        let projections = match projections {
            // Only RBF reads them; the other families' gradients go through the backward pass.
            _ if !self.gradient_reads_projections() => None,
            Some(z) => Some(z),
            None => {
                computed = self.features_and_projections(theta, x, true)?.1;
                computed.as_ref().map(|z| z.view())
            }
        };
        if let Some(z) = projections {
            if z.nrows() != x.nrows() || z.ncols() < self.draws[0].rows() {
                return Err(FastfoodError::ShapeMismatch {
                    what: "projections",
                    expected: x.nrows() * self.draws[0].z_stride(),
                    got: z.len(),
                });
            }
        }
        // Rows as slices below.
        let projections: Option<ndarray::CowArray<f64, ndarray::Ix2>> = projections.map(|z| {
            if z.is_standard_layout() {
                z.into()
            } else {
                z.as_standard_layout().into_owned().into()
            }
        });
        let x = x.as_standard_layout();
        let x = x.view();
        // The rank-one term of ∂log p/∂Φ is added in RBF's row sums, and to d_phi for the others.
        let (d_phi, rank_one) = match (&projections, &e.rank_one) {
            (Some(_), Some((u, v))) => (
                std::borrow::Cow::Borrowed(&e.d_phi),
                Some((
                    u.as_slice().expect("a vector"),
                    v.as_slice().expect("a vector"),
                )),
            ),
            _ => (e.full_d_phi(), None),
        };
        if d_phi.dim() != phi.dim() {
            return Err(FastfoodError::ShapeMismatch {
                what: "∂log p/∂Φ",
                expected: phi.len(),
                got: d_phi.len(),
            });
        }
        // Rows as slices below (a copy only for a view that is not row-major already).
        let (phi, d_phi) = (phi.as_standard_layout(), d_phi.as_standard_layout());
        let (phi, d_phi) = (phi.view(), d_phi.view());
        let mut grad = vec![0.0; self.off.total];
        grad[0] = d_noise * theta[0].exp();
        if self.spec.family == Family::Ssgpr {
            let m = self.spec.m;
            let n = x.nrows();
            // g_z = −R_cos ∘ Φ_sin + R_sin ∘ Φ_cos; ∂Ω = G_zᵀ X; ∂log σ_f² = ½ Σ R∘Φ.
            let mut gz = Array2::<f64>::zeros((n, m));
            for i in 0..n {
                for j in 0..m {
                    gz[[i, j]] = -d_phi[[i, j]] * phi[[i, m + j]] + d_phi[[i, m + j]] * phi[[i, j]];
                }
            }
            grad[1] = 0.5 * (&d_phi * &phi).sum();
            let d_omega = gz.t().dot(&x);
            grad[self.off.omega..].copy_from_slice(d_omega.as_slice().expect("standard layout"));
            return Ok(grad);
        }
        let (scales, ds_dh) = self.scales(theta);
        let blocks = self.blocks();
        let learn_scale = matches!(
            self.spec.family,
            Family::Fsard | Family::Fsgbard | Family::Pwl
        );
        let fsgb = self.spec.family == Family::Fsgbard;
        let dim = self.dim;
        let projection_chunks: Vec<Option<ArrayView2<f64>>> = match &projections {
            Some(z) => z.axis_chunks_iter(Axis(0), CHUNK).map(Some).collect(),
            None => (0..x.nrows().div_ceil(CHUNK)).map(|_| None).collect(),
        };
        let chunks: Vec<[Vec<f64>; 4]> = x
            .axis_chunks_iter(Axis(0), CHUNK)
            .into_par_iter()
            .zip(phi.axis_chunks_iter(Axis(0), CHUNK).into_par_iter())
            .zip(d_phi.axis_chunks_iter(Axis(0), CHUNK).into_par_iter())
            .zip(projection_chunks.into_par_iter())
            .enumerate()
            .map(|(ci, (((xs, ps), rs), zs))| {
                let mut g = vec![0.0; self.off.total];
                let mut d_scale = vec![0.0; if learn_scale { self.spec.m } else { 0 }];
                let mut d_gauss = vec![0.0; if fsgb { self.draws[0].sign.len() } else { 0 }];
                let mut d_sign = d_gauss.clone();
                let mut work = BatchWork::default();
                let (mut xt, mut d_xt, mut gz) = (Vec::new(), Vec::new(), Vec::new());
                // Component by component, a batch of rows at a time: every accumulator takes
                // the rows' terms in row order (the components' entries are disjoint).
                for (c, d) in self.draws.iter().enumerate() {
                    let (_, loglen, mean) = self.component(theta, c);
                    let (sign, gauss) = self.diagonals(theta, c);
                    let (rows, col, batch) = (d.rows(), blocks[c].col, d.batch_rows());
                    // Amplitude² is σ_f²/m (or w_q/(2 m_q)): ∂Φ/∂log(σ_f²) = Φ/2.
                    let amp_index = if mean.is_some() { self.off.comps[c] } else { 1 };
                    let lo = match mean {
                        Some(_) => self.off.comps[c] + 1,
                        None => self.off.lengths,
                    };
                    let one_length = self.off.n_lengths == 1 && mean.is_none();
                    for (b, ((xb, pb), rb)) in xs
                        .axis_chunks_iter(Axis(0), batch)
                        .zip(ps.axis_chunks_iter(Axis(0), batch))
                        .zip(rs.axis_chunks_iter(Axis(0), batch))
                        .enumerate()
                    {
                        let r = xb.nrows();
                        xt.resize(r * dim, 0.0);
                        let stride = d.z_stride();
                        gz.resize(r * stride, 0.0);
                        d_xt.clear();
                        d_xt.resize(r * dim, 0.0);
                        for (q, ((xrow, prow), rrow)) in xb
                            .axis_iter(Axis(0))
                            .zip(pb.axis_iter(Axis(0)))
                            .zip(rb.axis_iter(Axis(0)))
                            .enumerate()
                        {
                            let xrow = xrow.as_slice().expect("row");
                            scale_inputs(xrow, loglen, &mut xt[q * dim..][..dim]);
                            let gz = &mut gz[q * stride..][..rows];
                            let mut amp_grad = 0.0;
                            match mean {
                                None => {
                                    let p = prow.as_slice().expect("a row-major row");
                                    let r = rrow.as_slice().expect("a row-major row");
                                    let (p_cos, p_sin) = (&p[..rows], &p[rows..2 * rows]);
                                    let (r_cos, r_sin) = (&r[..rows], &r[rows..2 * rows]);
                                    if let Some(zs) = &zs {
                                        let i = b * batch + q;
                                        let zq = zs.row(i);
                                        let zq = &zq.as_slice().expect("a row")[..rows];
                                        // (α_i, the rank-one term's row factors).
                                        let outer = rank_one.map(|(u, v)| {
                                            (u[ci * CHUNK + i], &v[..rows], &v[rows..2 * rows])
                                        });
                                        let (dz, amp) = projection_sums(
                                            [r_cos, r_sin],
                                            [p_cos, p_sin],
                                            zq,
                                            outer,
                                        );
                                        g[lo] -= dz;
                                        amp_grad = amp;
                                    } else {
                                        // Two loops: the first vectorises; the second keeps
                                        // the sum's order (its terms computed as before).
                                        for j in 0..rows {
                                            gz[j] = -r_cos[j] * p_sin[j] + r_sin[j] * p_cos[j];
                                        }
                                        for j in 0..rows {
                                            amp_grad += r_cos[j] * p_cos[j] + r_sin[j] * p_sin[j];
                                        }
                                    }
                                }
                                Some(_) => {
                                    let mut dmx = 0.0;
                                    for j in 0..rows {
                                        let p = |k: usize| prow[col + k * rows + j];
                                        let r = |k: usize| rrow[col + k * rows + j];
                                        let gp = -r(0) * p(1) + r(1) * p(0);
                                        let gm = -r(2) * p(3) + r(3) * p(2);
                                        gz[j] = gp + gm;
                                        dmx += gp - gm;
                                        amp_grad +=
                                            r(0) * p(0) + r(1) * p(1) + r(2) * p(2) + r(3) * p(3);
                                    }
                                    let o = self.off.comps[c];
                                    for k in 0..dim {
                                        g[o + 1 + dim + k] += dmx * xrow[k];
                                    }
                                }
                            }
                            g[amp_index] += 0.5 * amp_grad;
                        }
                        if zs.is_some() {
                            // ∂log p/∂log ℓ summed above (RBF: no backward pass).
                            continue;
                        }
                        d.backward_rows(
                            &xt,
                            r,
                            sign,
                            gauss,
                            &scales[c],
                            &gz,
                            learn_scale.then_some(&mut d_scale[..]),
                            fsgb.then_some(&mut d_gauss[..]),
                            fsgb.then_some(&mut d_sign[..]),
                            &mut d_xt,
                            &mut work,
                        );
                        // x̃ = x ∘ exp(−log ℓ): ∂/∂log ℓ_k = −∂/∂x̃_k · x̃_k.
                        for (dx, xq) in d_xt.chunks_exact(dim).zip(xt.chunks_exact(dim)) {
                            for k in 0..dim {
                                let v = -dx[k] * xq[k];
                                if one_length {
                                    g[lo] += v;
                                } else {
                                    g[lo + k] += v;
                                }
                            }
                        }
                    }
                }
                [g, d_scale, d_gauss, d_sign]
            })
            .collect();
        // Chunk sums in chunk order: the same numbers whatever the thread count.
        let mut d_scale = vec![0.0; if learn_scale { self.spec.m } else { 0 }];
        let mut d_gauss = vec![0.0; if fsgb { self.draws[0].sign.len() } else { 0 }];
        let mut d_sign = d_gauss.clone();
        for [g, ds, dg, db] in chunks {
            grad.iter_mut()
                .skip(1)
                .zip(g.iter().skip(1))
                .for_each(|(a, b)| *a += b);
            for (acc, part) in [(&mut d_scale, ds), (&mut d_gauss, dg), (&mut d_sign, db)] {
                acc.iter_mut().zip(&part).for_each(|(a, b)| *a += b);
            }
        }
        if fsgb {
            grad[self.off.gauss..self.off.gauss + d_gauss.len()].copy_from_slice(&d_gauss);
            grad[self.off.sign..self.off.sign + d_sign.len()].copy_from_slice(&d_sign);
        }
        match self.spec.family {
            Family::Fsard | Family::Fsgbard => {
                grad[self.off.scale..self.off.scale + self.spec.m].copy_from_slice(&d_scale)
            }
            Family::Pwl => {
                let nh = self.pwl.as_ref().expect("PWL").n_heights();
                for (j, dsj) in d_scale.iter().enumerate() {
                    for k in 0..nh {
                        grad[self.off.heights + k] += dsj * ds_dh[j * nh + k];
                    }
                }
            }
            _ => {}
        }
        Ok(grad)
    }
}

/// One row's `(Σ_j g_z,j z_j, Σ_j R_j Φ_j)` with `g_z = −R_cos ∘ Φ_sin + R_sin ∘ Φ_cos`
/// (`∂log p/∂Z` from `∂log p/∂Φ`'s and Φ's cosine and sine halves), R = `r` plus, when
/// `outer = Some((u_i, v_cos, v_sin))`, the row `u_i vᵀ` of the rank-one term kept apart. Each
/// sum in four partial sums added in a fixed order (so that it vectorises; the two forms are
/// written out, as one loop over a closure ran 3-4 % slower at yacht's shape).
fn projection_sums(
    r: [&[f64]; 2],
    p: [&[f64]; 2],
    z: &[f64],
    outer: Option<(f64, &[f64], &[f64])>,
) -> (f64, f64) {
    const W: usize = 4;
    let ([r_cos, r_sin], [p_cos, p_sin]) = (r, p);
    let (mut dz, mut amp) = ([0.0f64; W], [0.0f64; W]);
    let mut add = |l: usize, j: usize, rc: f64, rs: f64| {
        dz[l] += (-rc * p_sin[j] + rs * p_cos[j]) * z[j];
        amp[l] += rc * p_cos[j] + rs * p_sin[j];
    };
    let lanes = z.len() / W * W;
    match outer {
        None => {
            for j0 in (0..lanes).step_by(W) {
                for l in 0..W {
                    let j = j0 + l;
                    add(l, j, r_cos[j], r_sin[j]);
                }
            }
            for j in lanes..z.len() {
                add(0, j, r_cos[j], r_sin[j]);
            }
        }
        Some((u, v_cos, v_sin)) => {
            for j0 in (0..lanes).step_by(W) {
                for l in 0..W {
                    let j = j0 + l;
                    add(l, j, r_cos[j] + u * v_cos[j], r_sin[j] + u * v_sin[j]);
                }
            }
            for j in lanes..z.len() {
                add(0, j, r_cos[j] + u * v_cos[j], r_sin[j] + u * v_sin[j]);
            }
        }
    }
    let total = |a: [f64; W]| (a[0] + a[1]) + (a[2] + a[3]);
    (total(dz), total(amp))
}

/// `x̃ = x ∘ exp(−log ℓ)` (one log-lengthscale broadcasts).
fn scale_inputs(x: &[f64], loglen: &[f64], out: &mut [f64]) {
    for (k, (o, v)) in out.iter_mut().zip(x).enumerate() {
        let l = if loglen.len() == 1 {
            loglen[0]
        } else {
            loglen[k]
        };
        *o = v * (-l).exp();
    }
}
