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

/// `(sin x, cos x)` for |x| < 2^19 by the reduction and kernels above.
#[inline(always)]
fn reduced_sin_cos(x: f64) -> (f64, f64) {
    let n = (x * INV_PIO2).round_ties_even();
    let t = x - n * PIO2_1;
    let w = n * PIO2_2;
    let r = t - w;
    let w = n * PIO2_2T - ((t - r) - w);
    // x − n·π/2 = y0 + y1 (head and tail).
    let y0 = r - w;
    let y1 = (r - y0) - w;
    let z = y0 * y0;
    let zz = z * z;
    let rs = S2 + z * (S3 + z * S4) + z * zz * (S5 + z * S6);
    let v = z * y0;
    let s = y0 - ((z * (0.5 * y1 - v * rs) - y1) - v * S1);
    let rc = z * (C1 + z * (C2 + z * C3)) + zz * zz * (C4 + z * (C5 + z * C6));
    let hz = 0.5 * z;
    let h = 1.0 - hz;
    let c = h + (((1.0 - h) - hz) + (z * rc - y0 * y1));
    // The quadrant n mod 4 (exact for |n| < 2^50).
    let q = n - 4.0 * (n * 0.25).floor();
    if q == 0.0 {
        (s, c)
    } else if q == 1.0 {
        (c, -s)
    } else if q == 2.0 {
        (-s, -c)
    } else {
        (-c, s)
    }
}

#[inline(always)]
fn sin_cos_generic(x: &[f64], sin: &mut [f64], cos: &mut [f64]) {
    for ((&x, s), c) in x.iter().zip(sin.iter_mut()).zip(cos.iter_mut()) {
        (*s, *c) = reduced_sin_cos(x);
    }
    for ((&x, s), c) in x.iter().zip(sin.iter_mut()).zip(cos.iter_mut()) {
        if x.abs() >= LIMIT || x.is_nan() {
            (*s, *c) = (x.sin(), x.cos());
        }
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
