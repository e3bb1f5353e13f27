//! `sin` and `cos` of many arguments at once, vectorised: the random Fourier features
//! `[cos(xᵀΩ), sin(xᵀΩ)]` of the Mondrian kernel paper's baselines (Figs. 5, 6, 8).
//!
//! The argument is reduced by `π/2` in two steps of fdlibm's medium case (Cody-Waite with 33-bit
//! pieces of `π/2`, exact products for |n| < 2^20, about 118 bits of `π/2` in all) and the two
//! fdlibm kernels (`__kernel_sin`, `__kernel_cos` with the reduction's tail) are evaluated for
//! every argument, the quadrant choosing between them without a branch; arguments with
//! |x| ≥ 2^19 (or not finite) go to the standard library's `sin` and `cos`. Each result is
//! within 1 ulp of glibc's (which rounds almost always correctly); on CPU-sized random
//! arguments about 97.5 % are bit-identical to it.
//!
//! The loop is plain IEEE arithmetic (no fused multiply-add), compiled once for the baseline
//! and once with AVX-512 or AVX2 when the processor has them: every path gives the same bits,
//! so results do not depend on the machine's vector width. (Unlike libm, `sin(-0)` is `+0`.)

// fdlibm's constants, with the digits it publishes (each is the nearest double).
#![allow(clippy::excessive_precision)]

const INV_PIO2: f64 = std::f64::consts::FRAC_2_PI;
/// The first 33 bits of π/2, then the next 33, then the tail: `n · PIO2_1` and `n · PIO2_2`
/// are exact for |n| < 2^20.
const PIO2_1: f64 = 1.570_796_326_734_125_614_17;
const PIO2_2: f64 = 6.077_100_506_303_965_976_60e-11;
const PIO2_2T: f64 = 2.022_266_248_795_950_631_54e-21;
const S1: f64 = -1.666_666_666_666_663_243_48e-1;
const S2: f64 = 8.333_333_333_322_489_461_24e-3;
const S3: f64 = -1.984_126_982_985_794_931_34e-4;
const S4: f64 = 2.755_731_370_707_006_767_89e-6;
const S5: f64 = -2.505_076_025_340_686_341_95e-8;
const S6: f64 = 1.589_690_995_211_550_102_21e-10;
const C1: f64 = 4.166_666_666_666_660_190_37e-2;
const C2: f64 = -1.388_888_888_887_410_957_49e-3;
const C3: f64 = 2.480_158_728_947_672_941_78e-5;
const C4: f64 = -2.755_731_435_139_066_330_35e-7;
const C5: f64 = 2.087_572_321_298_174_827_90e-9;
const C6: f64 = -1.135_964_755_778_819_482_65e-11;
/// Arguments at least this large (2^19) are left to the standard library.
const LIMIT: f64 = 524_288.0;

/// `(sin x, cos x)` for |x| < 2^19 by the reduction and kernels above, for `W` arguments at
/// once: each step taken for all of them before the next, `W` independent dependency chains side
/// by side (on a Zen 3 with AVX2, W = 4: 3.0 ns per argument against 3.7 for the same operations
/// one argument after the other, which the compiler also vectorised).
#[inline(always)]
fn reduced_sin_cos<const W: usize>(x: &[f64; W], sin: &mut [f64; W], cos: &mut [f64; W]) {
    let lanes = |f: &dyn Fn(usize) -> f64| -> [f64; W] { std::array::from_fn(f) };
    let n = lanes(&|k| (x[k] * INV_PIO2).round_ties_even());
    let t = lanes(&|k| x[k] - n[k] * PIO2_1);
    let w = lanes(&|k| n[k] * PIO2_2);
    let r = lanes(&|k| t[k] - w[k]);
    let w = lanes(&|k| n[k] * PIO2_2T - ((t[k] - r[k]) - w[k]));
    let y0 = lanes(&|k| r[k] - w[k]);
    let y1 = lanes(&|k| (r[k] - y0[k]) - w[k]);
    let z = lanes(&|k| y0[k] * y0[k]);
    let zz = lanes(&|k| z[k] * z[k]);
    let rs = lanes(&|k| S2 + z[k] * (S3 + z[k] * S4) + z[k] * zz[k] * (S5 + z[k] * S6));
    let v = lanes(&|k| z[k] * y0[k]);
    let s = lanes(&|k| y0[k] - ((z[k] * (0.5 * y1[k] - v[k] * rs[k]) - y1[k]) - v[k] * S1));
    let rc = lanes(&|k| {
        z[k] * (C1 + z[k] * (C2 + z[k] * C3)) + zz[k] * zz[k] * (C4 + z[k] * (C5 + z[k] * C6))
    });
    let hz = lanes(&|k| 0.5 * z[k]);
    let h = lanes(&|k| 1.0 - hz[k]);
    let c = lanes(&|k| h[k] + (((1.0 - h[k]) - hz[k]) + (z[k] * rc[k] - y0[k] * y1[k])));
    let q = lanes(&|k| n[k] - 4.0 * (n[k] * 0.25).floor());
    for k in 0..W {
        (sin[k], cos[k]) = if q[k] == 0.0 {
            (s[k], c[k])
        } else if q[k] == 1.0 {
            (c[k], -s[k])
        } else if q[k] == 2.0 {
            (-s[k], -c[k])
        } else {
            (-c[k], s[k])
        };
    }
}

#[inline(always)]
fn sin_cos_generic(x: &[f64], sin: &mut [f64], cos: &mut [f64]) {
    const W: usize = 4;
    let n = x.len().min(sin.len()).min(cos.len());
    let (x, sin, cos) = (&x[..n], &mut sin[..n], &mut cos[..n]);
    let body = n - n % W;
    for ((xb, sb), cb) in x[..body]
        .chunks_exact(W)
        .zip(sin[..body].chunks_exact_mut(W))
        .zip(cos[..body].chunks_exact_mut(W))
    {
        reduced_sin_cos::<W>(
            xb.try_into().expect("W"),
            sb.try_into().expect("W"),
            cb.try_into().expect("W"),
        );
    }
    let rest = n - body;
    if rest > 0 {
        let (mut xb, mut sb, mut cb) = ([0.0; W], [0.0; W], [0.0; W]);
        xb[..rest].copy_from_slice(&x[body..]);
        reduced_sin_cos::<W>(&xb, &mut sb, &mut cb);
        sin[body..].copy_from_slice(&sb[..rest]);
        cos[body..].copy_from_slice(&cb[..rest]);
    }
    // Arguments out of the reduction's range (or NaN): found a block at a time without a branch
    // per argument, then given the standard library's values.
    let outside = |x: f64| x.abs() >= LIMIT || x.is_nan();
    let mut block = 0;
    for xb in x.chunks(64) {
        if xb.iter().fold(false, |any, &v| any | outside(v)) {
            for (k, &v) in xb.iter().enumerate().filter(|(_, &v)| outside(v)) {
                (sin[block + k], cos[block + k]) = (v.sin(), v.cos());
            }
        }
        block += xb.len();
    }
}

crate::widest_vectors! {
    /// `sin[k] = sin(x[k])`, `cos[k] = cos(x[k])` (each within 1 ulp of glibc's) for
    /// `k < min(len)`.
    pub fn sin_cos(x: &[f64], sin: &mut [f64], cos: &mut [f64]);
    body sin_cos_generic;
    tier sin_cos_avx512 = "avx512f" if "avx512f";
    tier sin_cos_avx2 = "avx2" if "avx2";
    fallback sin_cos_generic;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            0
        } else {
            (a.to_bits() as i64).abs_diff(b.to_bits() as i64)
        }
    }

    /// Arguments over many scales, Cauchy-tailed (as `λ·Cauchy · x`), and edge cases.
    fn arguments(n: usize) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut x: Vec<f64> = (0..n)
            .map(|k| match k % 10 {
                9 => (std::f64::consts::PI * (rng.random::<f64>() - 0.5)).tan() * 100.0,
                s => (rng.random::<f64>() - 0.5) * 2.0 * 10f64.powi(s as i32 - 3),
            })
            .collect();
        x.extend([
            0.0,
            -0.0,
            1e-300,
            -5e-324,
            std::f64::consts::FRAC_PI_2,
            std::f64::consts::PI,
            355.0,
            103_993.0,
            LIMIT - 0.1,
            LIMIT,
            -LIMIT,
            1e6,
            1e22,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ]);
        x
    }

    #[test]
    fn within_one_ulp_of_the_standard_library_and_mostly_identical() {
        let x = arguments(400_000);
        let (mut s, mut c) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        sin_cos(&x, &mut s, &mut c);
        let mut identical = 0;
        for (k, &v) in x.iter().enumerate() {
            for (got, want) in [(s[k], v.sin()), (c[k], v.cos())] {
                if want.is_nan() {
                    assert!(got.is_nan(), "{v}");
                    continue;
                }
                let u = ulps(got, want);
                assert!(u <= 1, "x = {v}: {got} vs {want} ({u} ulps)");
                identical += usize::from(u == 0);
            }
        }
        assert!(
            identical as f64 > 0.95 * 2.0 * x.len() as f64,
            "{identical}"
        );
    }

    #[test]
    fn every_code_path_gives_the_same_bits() {
        let x = arguments(50_000);
        let n = x.len();
        let (mut s0, mut c0) = (vec![0.0; n], vec![0.0; n]);
        sin_cos_generic(&x, &mut s0, &mut c0);
        let mut paths = vec![];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                let (mut s, mut c) = (vec![0.0; n], vec![0.0; n]);
                unsafe { sin_cos_avx2(&x, &mut s, &mut c) };
                paths.push((s, c));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                let (mut s, mut c) = (vec![0.0; n], vec![0.0; n]);
                unsafe { sin_cos_avx512(&x, &mut s, &mut c) };
                paths.push((s, c));
            }
        }
        let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
        for (s, c) in paths {
            assert_eq!(bits(&s), bits(&s0));
            assert_eq!(bits(&c), bits(&c0));
        }
    }

    #[test]
    fn pythagoras_and_symmetry() {
        let x = arguments(20_000);
        let n = x.len();
        let (mut s, mut c) = (vec![0.0; n], vec![0.0; n]);
        sin_cos(&x, &mut s, &mut c);
        let neg: Vec<f64> = x.iter().map(|v| -v).collect();
        let (mut sn, mut cn) = (vec![0.0; n], vec![0.0; n]);
        sin_cos(&neg, &mut sn, &mut cn);
        for k in (0..n).filter(|&k| x[k].is_finite()) {
            assert!((s[k] * s[k] + c[k] * c[k] - 1.0).abs() < 5e-16, "{}", x[k]);
            // Exactly (the sign of a zero aside: sin(-0) is +0 here).
            assert!(sn[k] == -s[k], "sin is odd at {}", x[k]);
            assert_eq!(cn[k].to_bits(), c[k].to_bits(), "cos is even at {}", x[k]);
        }
    }
}
