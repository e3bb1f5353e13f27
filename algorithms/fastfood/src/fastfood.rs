//! Fastfood blocks (Le, Sarlós, Smola 2013; spec §3): `V_b = (1/√d) S_b H G_b Π_b H B_b`, stacked
//! to m rows, applied to a zero-padded input in O(m log d) time with O(m) parameters, and the
//! backward pass of spec §5 (the same transform, as H is symmetric).
//!
//! A draw holds the random structure: per block the signs B (±1), the permutation Π, the
//! Gaussian diagonal G and the uniforms `u_i` of the radii (D5). The diagonals are passed to
//! [`FastfoodDraw::project`] explicitly, so that a kernel can learn them (FSARD learns S,
//! FSGBARD also G and B) while the draw keeps the initial values. Rows beyond m in the last
//! block are dropped (each row of a block is a valid frequency on its own), so m need not be a
//! multiple of d.

use kernel_core::cache::padded_stride;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_distr::StandardNormal;

use crate::fwht::{fwht, fwht_interleaved, padded_dimension};

/// The random structure of `rows` Fastfood frequencies for inputs of dimension `dim`.
#[derive(Debug, Clone, PartialEq)]
pub struct FastfoodDraw {
    dim: usize,
    pad: usize,
    rows: usize,
    /// Π per block: `u₂[i] = u₁[perm[b·d + i]]`.
    perm: Vec<u32>,
    /// B, `blocks · d` signs ±1.
    pub sign: Vec<f64>,
    /// G, `blocks · d` standard normals.
    pub gauss: Vec<f64>,
    /// The uniforms of the radii, one per row (D5).
    pub uniforms: Vec<f64>,
}

/// Work buffers of one projection (one per thread).
#[derive(Debug, Clone)]
pub struct Work {
    u0: Vec<f64>,
    u2: Vec<f64>,
    u4: Vec<f64>,
    g: Vec<f64>,
    g1: Vec<f64>,
}

/// Work buffers of the batched projection and backward pass ([`FastfoodDraw::project_rows`],
/// [`FastfoodDraw::backward_rows`]): per block, the rows' vectors interleaved (`pad × rows`).
#[derive(Debug, Clone, Default)]
pub struct BatchWork {
    u0: Vec<f64>,
    u2: Vec<f64>,
    u4: Vec<f64>,
    g: Vec<f64>,
    g1: Vec<f64>,
}

impl BatchWork {
    fn fit(&mut self, len: usize, keep_u2: bool) {
        for (v, needed) in [
            (&mut self.u0, true),
            (&mut self.u2, keep_u2),
            (&mut self.u4, true),
            (&mut self.g, true),
            (&mut self.g1, true),
        ] {
            if needed && v.len() < len {
                v.resize(len, 0.0);
            }
        }
    }
}

impl FastfoodDraw {
    /// Draws `rows` frequencies for `dim`-dimensional inputs. Order per block: signs, the
    /// permutation, the Gaussians, then all uniforms.
    pub fn sample<R: Rng + ?Sized>(dim: usize, rows: usize, rng: &mut R) -> Self {
        let pad = padded_dimension(dim);
        let blocks = rows.div_ceil(pad).max(1);
        let mut sign = Vec::with_capacity(blocks * pad);
        let mut perm = Vec::with_capacity(blocks * pad);
        let mut gauss = Vec::with_capacity(blocks * pad);
        for _ in 0..blocks {
            sign.extend((0..pad).map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 }));
            let mut p: Vec<u32> = (0..pad as u32).collect();
            p.shuffle(rng);
            perm.extend(p);
            gauss.extend((0..pad).map(|_| rng.sample::<f64, _>(StandardNormal)));
        }
        let uniforms = (0..rows).map(|_| rng.random::<f64>()).collect();
        Self {
            dim,
            pad,
            rows,
            perm,
            sign,
            gauss,
            uniforms,
        }
    }

    /// Replaces the uniforms of the radii by a stratified set (the paper's §4: "pick m
    /// locations equidistantly at i/m + ξ where ξ ∼ U[0, 1/m]"): u = (k + ξ)/m with one
    /// ξ ~ U(0, 1) and k a random permutation of 0..m, so that each m-quantile of the radial
    /// distribution holds exactly one radius, in an order unrelated to the blocks.
    pub fn stratify_uniforms<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let m = self.uniforms.len();
        let xi: f64 = rng.random();
        let mut k: Vec<usize> = (0..m).collect();
        k.shuffle(rng);
        for (u, k) in self.uniforms.iter_mut().zip(k) {
            *u = (k as f64 + xi) / m as f64;
        }
    }

    /// The input dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// d, the padded dimension (a power of two).
    pub fn pad(&self) -> usize {
        self.pad
    }
    /// m, the number of frequencies (rows of V).
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// k = ⌈m/d⌉.
    pub fn blocks(&self) -> usize {
        self.sign.len() / self.pad
    }

    /// `‖G_b‖_F` of the block holding each row, for the χ_d scale `s_i / ‖G_b‖_F`.
    pub fn gauss_norm_per_row(&self, gauss: &[f64]) -> Vec<f64> {
        let norms: Vec<f64> = gauss
            .chunks_exact(self.pad)
            .map(|g| g.iter().map(|v| v * v).sum::<f64>().sqrt())
            .collect();
        (0..self.rows).map(|j| norms[j / self.pad]).collect()
    }

    /// Work buffers for [`Self::project`] and [`Self::backward`].
    pub fn work(&self) -> Work {
        Work {
            u0: vec![0.0; self.pad],
            u2: vec![0.0; self.pad],
            u4: vec![0.0; self.pad],
            g: vec![0.0; self.pad],
            g1: vec![0.0; self.pad],
        }
    }

    /// `z = V x̃` with `V_b = (1/√d) diag(scale_b) H diag(gauss_b) Π_b H diag(sign_b)`: `xt` has
    /// `dim` values (zero-padded here), `scale` `rows` values, `z` `rows` values.
    pub fn project(
        &self,
        xt: &[f64],
        sign: &[f64],
        gauss: &[f64],
        scale: &[f64],
        z: &mut [f64],
        w: &mut Work,
    ) {
        let d = self.pad;
        let norm = 1.0 / (d as f64).sqrt();
        for b in 0..self.blocks() {
            let off = b * d;
            self.forward_block(b, xt, sign, gauss, w);
            let end = (off + d).min(self.rows);
            for j in off..end {
                z[j] = scale[j] * w.u4[j - off] * norm;
            }
        }
    }

    /// u₀ = B x̃, u₁ = H u₀, u₂ = Π u₁ (kept in `u2`), u₃ = G u₂, u₄ = H u₃ (kept in `u4`).
    fn forward_block(&self, b: usize, xt: &[f64], sign: &[f64], gauss: &[f64], w: &mut Work) {
        let d = self.pad;
        let off = b * d;
        w.u0.fill(0.0);
        for k in 0..self.dim {
            w.u0[k] = sign[off + k] * xt[k];
        }
        fwht(&mut w.u0);
        for i in 0..d {
            w.u2[i] = w.u0[self.perm[off + i] as usize];
            w.u4[i] = gauss[off + i] * w.u2[i];
        }
        fwht(&mut w.u4);
    }

    /// Rows per batch of [`Self::project_rows`] and [`Self::backward_rows`]: enough for the
    /// interleaved butterflies to run over whole vectors, few enough that a block's buffers
    /// stay in cache.
    pub fn batch_rows(&self) -> usize {
        (4096 / self.pad).clamp(4, 64)
    }

    /// The distance between consecutive points' projections in [`Self::project_rows`]'s `z` and
    /// [`Self::backward_rows`]'s `g_z`: the batched passes write (read) one projection of every
    /// point before the next, so the rows are padded ([`padded_stride`]; at 256 rows, 2 KiB
    /// apart, a batch's 64 points fell into two L1 sets and every one missed the cache).
    pub fn z_stride(&self) -> usize {
        padded_stride(self.rows)
    }

    /// [`Self::project`] of `r` points at once, with the same bits: `xt` holds the points
    /// (r × dim, row-major), `z` receives their projections (point q's at `q · z_stride()`, the
    /// values between two points' left as they were).
    #[allow(clippy::too_many_arguments)]
    pub fn project_rows(
        &self,
        xt: &[f64],
        r: usize,
        sign: &[f64],
        gauss: &[f64],
        scale: &[f64],
        z: &mut [f64],
        w: &mut BatchWork,
    ) {
        let d = self.pad;
        let (norm, stride) = (1.0 / (d as f64).sqrt(), self.z_stride());
        w.fit(d * r, false);
        for b in 0..self.blocks() {
            let off = b * d;
            self.forward_block_rows(b, xt, r, sign, gauss, false, w);
            for j in off..self.rows.min(off + d) {
                let s = scale[j];
                for (q, u) in w.u4[(j - off) * r..][..r].iter().enumerate() {
                    z[q * stride + j] = s * u * norm;
                }
            }
        }
    }

    /// [`Self::forward_block`] of `r` points, interleaved: u₄ in `w.u4` (and u₂ in `w.u2` when
    /// `keep_u2`), element i of point q at `i·r + q`.
    #[allow(clippy::too_many_arguments)]
    fn forward_block_rows(
        &self,
        b: usize,
        xt: &[f64],
        r: usize,
        sign: &[f64],
        gauss: &[f64],
        keep_u2: bool,
        w: &mut BatchWork,
    ) {
        let (d, dim) = (self.pad, self.dim);
        let off = b * d;
        let u0 = &mut w.u0[..d * r];
        for k in 0..dim {
            let s = sign[off + k];
            for (q, u) in u0[k * r..][..r].iter_mut().enumerate() {
                *u = s * xt[q * dim + k];
            }
        }
        u0[dim * r..].fill(0.0);
        fwht_interleaved(u0, r);
        let u4 = &mut w.u4[..d * r];
        for i in 0..d {
            let src = &u0[self.perm[off + i] as usize * r..][..r];
            let g = gauss[off + i];
            for (v, u) in u4[i * r..][..r].iter_mut().zip(src) {
                *v = g * u;
            }
            if keep_u2 {
                w.u2[i * r..][..r].copy_from_slice(src);
            }
        }
        fwht_interleaved(u4, r);
    }

    /// [`Self::backward`] of `r` points at once, with the same bits (every accumulator takes
    /// the points' terms in the points' order): `g_z` is r × rows, `d_xt` r × dim (row-major);
    /// the forward transform is recomputed only for `d_scale` or `d_gauss`.
    #[allow(clippy::too_many_arguments)]
    pub fn backward_rows(
        &self,
        xt: &[f64],
        r: usize,
        sign: &[f64],
        gauss: &[f64],
        scale: &[f64],
        g_z: &[f64],
        mut d_scale: Option<&mut [f64]>,
        mut d_gauss: Option<&mut [f64]>,
        mut d_sign: Option<&mut [f64]>,
        d_xt: &mut [f64],
        w: &mut BatchWork,
    ) {
        let (d, dim, rows, stride) = (self.pad, self.dim, self.rows, self.z_stride());
        let norm = 1.0 / (d as f64).sqrt();
        let keep_u2 = d_gauss.is_some();
        w.fit(d * r, keep_u2);
        for b in 0..self.blocks() {
            let off = b * d;
            if d_scale.is_some() || keep_u2 {
                self.forward_block_rows(b, xt, r, sign, gauss, keep_u2, w);
            }
            let end = rows.min(off + d);
            // g_u4 = S g_z / √d (zero for the dropped rows); ∂S_j = g_z,j u₄,j / √d.
            let g = &mut w.g[..d * r];
            for j in off..end {
                let s = scale[j];
                for (q, v) in g[(j - off) * r..][..r].iter_mut().enumerate() {
                    *v = s * g_z[q * stride + j] * norm;
                }
                if let Some(ds) = d_scale.as_deref_mut() {
                    for (q, u) in w.u4[(j - off) * r..][..r].iter().enumerate() {
                        ds[j] += g_z[q * stride + j] * u * norm;
                    }
                }
            }
            g[(end - off) * r..].fill(0.0);
            fwht_interleaved(g, r); // g_u3
            if let Some(dg) = d_gauss.as_deref_mut() {
                for i in 0..d {
                    let gi = &g[i * r..][..r];
                    for (v, u) in gi.iter().zip(&w.u2[i * r..][..r]) {
                        dg[off + i] += v * u;
                    }
                }
            }
            // g_u2 = G g_u3; g_u1 = Πᵀ g_u2; g_u0 = H g_u1.
            let g1 = &mut w.g1[..d * r];
            g1.fill(0.0);
            for i in 0..d {
                let gs = gauss[off + i];
                let dst = &mut g1[self.perm[off + i] as usize * r..][..r];
                for (t, v) in dst.iter_mut().zip(&g[i * r..][..r]) {
                    *t += gs * v;
                }
            }
            fwht_interleaved(g1, r);
            for k in 0..dim {
                let gk = &g1[k * r..][..r];
                if let Some(db) = d_sign.as_deref_mut() {
                    for (q, v) in gk.iter().enumerate() {
                        db[off + k] += v * xt[q * dim + k];
                    }
                }
                let s = sign[off + k];
                for (q, v) in gk.iter().enumerate() {
                    d_xt[q * dim + k] += s * v;
                }
            }
        }
    }

    /// Backward pass of [`Self::project`] for one point: given `g_z = ∂f/∂z`, accumulates
    /// `∂f/∂scale`, `∂f/∂gauss`, `∂f/∂sign` (where asked for) and `∂f/∂x̃` (spec §5).
    #[allow(clippy::too_many_arguments)]
    pub fn backward(
        &self,
        xt: &[f64],
        sign: &[f64],
        gauss: &[f64],
        scale: &[f64],
        g_z: &[f64],
        mut d_scale: Option<&mut [f64]>,
        mut d_gauss: Option<&mut [f64]>,
        mut d_sign: Option<&mut [f64]>,
        d_xt: &mut [f64],
        w: &mut Work,
    ) {
        let d = self.pad;
        let norm = 1.0 / (d as f64).sqrt();
        for b in 0..self.blocks() {
            let off = b * d;
            self.forward_block(b, xt, sign, gauss, w);
            let end = (off + d).min(self.rows);
            // g_u4 = S g_z / √d (zero for the dropped rows); ∂S_j = g_z,j u₄,j / √d.
            w.g.fill(0.0);
            for j in off..end {
                w.g[j - off] = scale[j] * g_z[j] * norm;
                if let Some(ds) = d_scale.as_deref_mut() {
                    ds[j] += g_z[j] * w.u4[j - off] * norm;
                }
            }
            fwht(&mut w.g); // g_u3
            if let Some(dg) = d_gauss.as_deref_mut() {
                for i in 0..d {
                    dg[off + i] += w.g[i] * w.u2[i];
                }
            }
            // g_u2 = G g_u3; g_u1 = Πᵀ g_u2; g_u0 = H g_u1.
            w.g1.fill(0.0);
            for i in 0..d {
                w.g1[self.perm[off + i] as usize] += gauss[off + i] * w.g[i];
            }
            fwht(&mut w.g1);
            for k in 0..self.dim {
                if let Some(db) = d_sign.as_deref_mut() {
                    db[off + k] += w.g1[k] * xt[k];
                }
                d_xt[k] += sign[off + k] * w.g1[k];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Stratified uniforms: one in each [k/m, (k+1)/m), all with the same offset within it,
    /// in an order that is not the strata's; the rest of the draw untouched.
    #[test]
    fn stratified_uniforms_hold_one_per_quantile() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let draw = FastfoodDraw::sample(5, 100, &mut rng);
        let mut s = draw.clone();
        s.stratify_uniforms(&mut rng);
        assert_eq!(
            (&s.sign, &s.gauss, &s.perm),
            (&draw.sign, &draw.gauss, &draw.perm)
        );
        let m = 100.0;
        let mut strata: Vec<usize> = s
            .uniforms
            .iter()
            .map(|u| (u * m).floor() as usize)
            .collect();
        let offsets: Vec<f64> = s.uniforms.iter().map(|u| u * m - (u * m).floor()).collect();
        assert!(
            offsets.iter().all(|o| (o - offsets[0]).abs() < 1e-9),
            "{offsets:?}"
        );
        assert_ne!(strata, (0..100).collect::<Vec<_>>(), "shuffled");
        strata.sort_unstable();
        assert_eq!(strata, (0..100).collect::<Vec<_>>());
    }

    /// The paper's reason for stratifying (§4.4: "substantially reduces the variance when
    /// sampling"): the Monte Carlo estimate of a PWL kernel value, the mean of cos(r_i τ) over
    /// the m radii, varies far less across redraws with stratified uniforms than with iid ones.
    #[test]
    fn stratified_radii_reduce_the_variance_of_the_kernel_estimate() {
        use crate::radial::PiecewiseLinear;
        let (d, m, redraws) = (8, 64, 400);
        let p = PiecewiseLinear::for_dimension(d, 10).unwrap();
        let h = p.chi_heights(d);
        let mut g = vec![0.0; p.n_heights()];
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let variance = |stratified: bool, rng: &mut ChaCha8Rng, g: &mut [f64]| {
            let estimates: Vec<f64> = (0..redraws)
                .map(|_| {
                    let mut draw = FastfoodDraw::sample(d, m, rng);
                    if stratified {
                        draw.stratify_uniforms(rng);
                    }
                    let tau = 0.7;
                    draw.uniforms
                        .iter()
                        .map(|&u| (p.radius(&h, u, g) * tau).cos())
                        .sum::<f64>()
                        / m as f64
                })
                .collect();
            let mean = estimates.iter().sum::<f64>() / redraws as f64;
            estimates.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (redraws - 1) as f64
        };
        let iid = variance(false, &mut rng, &mut g);
        let stratified = variance(true, &mut rng, &mut g);
        assert!(
            stratified < 0.1 * iid,
            "stratified {stratified} vs iid {iid}"
        );
    }

    /// The dense V of a draw, column by column.
    fn dense(f: &FastfoodDraw, scale: &[f64]) -> Vec<Vec<f64>> {
        let mut w = f.work();
        let mut cols = Vec::new();
        for k in 0..f.dim() {
            let mut e = vec![0.0; f.dim()];
            e[k] = 1.0;
            let mut z = vec![0.0; f.rows()];
            f.project(&e, &f.sign, &f.gauss, scale, &mut z, &mut w);
            cols.push(z);
        }
        cols
    }

    #[test]
    fn row_norms_are_the_radii_over_the_gauss_norm_times_sqrt_d() {
        // Spec §10.2: rows of H G Π H B have norm √d ‖G_b‖, so with scale s/‖G_b‖ the rows of V
        // have norm s exactly (the input fills all d coordinates here: dim = pad).
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let f = FastfoodDraw::sample(16, 40, &mut rng);
        let norms = f.gauss_norm_per_row(&f.gauss);
        let s: Vec<f64> = (0..40).map(|j| 0.5 + j as f64 * 0.1).collect();
        let scale: Vec<f64> = s.iter().zip(&norms).map(|(a, b)| a / b).collect();
        let cols = dense(&f, &scale);
        for j in 0..40 {
            let n2: f64 = cols.iter().map(|c| c[j] * c[j]).sum();
            assert!((n2.sqrt() - s[j]).abs() < 1e-12, "row {j}");
        }
    }

    #[test]
    fn projection_is_linear_and_backward_is_its_transpose() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let f = FastfoodDraw::sample(5, 19, &mut rng);
        let scale: Vec<f64> = (0..19).map(|j| 1.0 + 0.01 * j as f64).collect();
        let cols = dense(&f, &scale);
        let x = [0.3, -1.2, 0.5, 2.0, -0.7];
        let mut w = f.work();
        let mut z = vec![0.0; 19];
        f.project(&x, &f.sign, &f.gauss, &scale, &mut z, &mut w);
        for j in 0..19 {
            let lin: f64 = (0..5).map(|k| cols[k][j] * x[k]).sum();
            assert!((lin - z[j]).abs() < 1e-12);
        }
        // ∂(gᵀz)/∂x = Vᵀ g.
        let g: Vec<f64> = (0..19).map(|j| (j as f64 * 0.37).sin()).collect();
        let mut dx = vec![0.0; 5];
        f.backward(
            &x, &f.sign, &f.gauss, &scale, &g, None, None, None, &mut dx, &mut w,
        );
        for k in 0..5 {
            let t: f64 = (0..19).map(|j| cols[k][j] * g[j]).sum();
            assert!((t - dx[k]).abs() < 1e-12);
        }
    }

    #[test]
    fn batched_projection_and_backward_pass_equal_the_single_point_ones_bit_for_bit() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (dim, rows, r) in [
            (5usize, 19usize, 7usize),
            (6, 256, 64),
            (13, 40, 1),
            (70, 300, 4),
        ] {
            let f = FastfoodDraw::sample(dim, rows, &mut rng);
            let scale: Vec<f64> = (0..rows).map(|j| 0.5 + 0.01 * j as f64).collect();
            let xt: Vec<f64> = (0..r * dim).map(|i| (i as f64 * 0.61).sin()).collect();
            let stride = f.z_stride();
            let g_z: Vec<f64> = (0..r * stride).map(|i| (i as f64 * 0.29).cos()).collect();
            let mut z = vec![0.0; r * stride];
            let mut batch = BatchWork::default();
            f.project_rows(&xt, r, &f.sign, &f.gauss, &scale, &mut z, &mut batch);
            let n = f.sign.len();
            let (mut ds, mut dg, mut db) = (vec![0.0; rows], vec![0.0; n], vec![0.0; n]);
            let mut dx = vec![0.0; r * dim];
            f.backward_rows(
                &xt,
                r,
                &f.sign,
                &f.gauss,
                &scale,
                &g_z,
                Some(&mut ds),
                Some(&mut dg),
                Some(&mut db),
                &mut dx,
                &mut batch,
            );
            let mut w = f.work();
            let (mut ds1, mut dg1, mut db1) = (vec![0.0; rows], vec![0.0; n], vec![0.0; n]);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            for q in 0..r {
                let x = &xt[q * dim..][..dim];
                let mut z1 = vec![0.0; rows];
                f.project(x, &f.sign, &f.gauss, &scale, &mut z1, &mut w);
                assert_eq!(bits(&z1), bits(&z[q * stride..][..rows]), "z, point {q}");
                let mut dx1 = vec![0.0; dim];
                f.backward(
                    x,
                    &f.sign,
                    &f.gauss,
                    &scale,
                    &g_z[q * stride..][..rows],
                    Some(&mut ds1),
                    Some(&mut dg1),
                    Some(&mut db1),
                    &mut dx1,
                    &mut w,
                );
                assert_eq!(bits(&dx1), bits(&dx[q * dim..][..dim]), "x̃, point {q}");
            }
            assert_eq!(bits(&ds1), bits(&ds));
            assert_eq!(bits(&dg1), bits(&dg));
            assert_eq!(bits(&db1), bits(&db));
            // Without the diagonals' gradients (no forward recomputation): the same ∂x̃.
            let mut dx2 = vec![0.0; r * dim];
            f.backward_rows(
                &xt, r, &f.sign, &f.gauss, &scale, &g_z, None, None, None, &mut dx2, &mut batch,
            );
            assert_eq!(bits(&dx2), bits(&dx));
        }
    }
}
