//! Times one marginal-likelihood evaluation (value and gradient: [`fastfood::objective`], the
//! function L-BFGS calls) in process CPU seconds, on one thread (rayon and OpenBLAS), with the
//! protocol of revrand's `experiments/upstream/revrand/time_evaluation.py` so that the two are
//! compared side by side on one machine: synthetic inputs x ~ N(0, I) (n × d), y = sin(x₀) +
//! noise, θ at the spec's start; one warm-up call, then `repeats` repeats of `inner` calls
//! (about `seconds` CPU seconds each); the median, min and max per-evaluation time.
//!
//! ```sh
//! cargo run --release -p fastfood --example evaluation_timing -- \
//!     --family ard --n 278 --d 6 --m 256 [--components 5] [--repeats 5] [--seconds 1]
//! ```
//!
//! `--family` is rbf, ard or gm (Q = `--components`; m frequencies in all, D = 2m features).
//! `--flops` also prints the BLAS flops of one evaluation and the GFLOP/s they run at, and
//! `--bits` prints hashes of the value's, the gradient's and the features' bits instead (to check
//! that a speed change leaves the numbers unchanged); `--phases` also times the three parts (the features, the solve with Φ's gradient, the
//! backward pass to θ) and `--dgemm N` instead times an N × N × N dgemm on one thread (the machine's dgemm peak).

use fastfood::blas::gemm;
use fastfood::evidence::evidence;
use fastfood::{objective, ArdPoint, Family, FeatureModel, KernelSpec};
use ndarray::{Array1, Array2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

extern "C" {
    /// OpenBLAS's own setter (libopenblas is linked through ndarray-linalg).
    fn openblas_set_num_threads(num_threads: std::os::raw::c_int);
}

/// CPU seconds of the whole process.
fn process_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given, which we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

struct Args {
    family: Family,
    n: usize,
    d: usize,
    m: usize,
    components: usize,
    repeats: usize,
    seconds: f64,
    flops: bool,
    phases: bool,
    bits: bool,
    dgemm: Option<usize>,
}

fn parse() -> Args {
    let mut a = Args {
        family: Family::Ard,
        n: 278,
        d: 6,
        m: 256,
        components: 5,
        repeats: 5,
        seconds: 1.0,
        flops: false,
        phases: false,
        bits: false,
        dgemm: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(key) = it.next() {
        if matches!(key.as_str(), "--flops" | "--phases" | "--bits") {
            a.flops |= key == "--flops";
            a.phases |= key == "--phases";
            a.bits |= key == "--bits";
            continue;
        }
        let value = it.next().unwrap_or_else(|| panic!("{key} needs a value"));
        let int = || value.parse::<usize>().expect("an integer");
        match key.as_str() {
            "--family" => {
                a.family = match value.as_str() {
                    "rbf" => Family::Rbf,
                    "ard" => Family::Ard,
                    "gm" => Family::Gm,
                    "fsard" => Family::Fsard,
                    "fsgbard" => Family::Fsgbard,
                    "pwl" => Family::Pwl,
                    "ssgpr" => Family::Ssgpr,
                    other => panic!("--family {other}: rbf, ard, gm, fsard, fsgbard, pwl or ssgpr"),
                }
            }
            "--n" => a.n = int(),
            "--d" => a.d = int(),
            "--m" => a.m = int(),
            "--components" => a.components = int(),
            "--repeats" => a.repeats = int(),
            "--seconds" => a.seconds = value.parse().expect("a number"),
            "--dgemm" => a.dgemm = Some(int()),
            other => panic!("unknown option {other}"),
        }
    }
    a
}

/// Median, min and max of per-evaluation times over repeats of `inner` calls of `f`.
fn time(repeats: usize, seconds: f64, mut f: impl FnMut()) -> (Vec<f64>, usize) {
    let t0 = process_cpu_seconds();
    f(); // warm-up
    let first = process_cpu_seconds() - t0;
    let inner = ((seconds / first.max(1e-6)).ceil() as usize).max(1);
    let per = (0..repeats)
        .map(|r| {
            let t0 = process_cpu_seconds();
            for _ in 0..inner {
                f();
            }
            let t = (process_cpu_seconds() - t0) / inner as f64;
            println!("repeat {r}: {t:.6} s per evaluation ({inner} calls)");
            t
        })
        .collect();
    (per, inner)
}

fn summary(per: &[f64]) -> (f64, f64, f64) {
    let mut s = per.to_vec();
    s.sort_by(f64::total_cmp);
    let k = s.len();
    let median = if k % 2 == 1 {
        s[k / 2]
    } else {
        0.5 * (s[k / 2 - 1] + s[k / 2])
    };
    (median, s[0], s[k - 1])
}

/// BLAS flops of one evaluation of D features on n rows (value and gradient): the primal form
/// (n >= D) nD² (dsyrk) + D³/3 (Cholesky) + 2D³/3 (inverse) + 2nD² (Φ A⁻¹); the dual form
/// n²D + n³/3 + 2n³/3 + 2n²D.
fn evaluation_flops(n: usize, features: usize) -> f64 {
    let (n, d) = (n as f64, features as f64);
    if n >= d {
        3.0 * n * d * d + d * d * d
    } else {
        3.0 * n * n * d + n * n * n
    }
}

fn main() {
    // SAFETY: stores the thread count for later BLAS calls; none is running yet.
    unsafe { openblas_set_num_threads(1) };
    let a = parse();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    if let Some(k) = a.dgemm {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let x = Array2::from_shape_fn((k, k), |_| rng.random::<f64>() - 0.5);
        let y = Array2::from_shape_fn((k, k), |_| rng.random::<f64>() - 0.5);
        let mut c = Array2::<f64>::zeros((k, k));
        let (per, inner) = time(a.repeats, a.seconds, || {
            gemm(1.0, x.view(), y.view(), 0.0, &mut c)
        });
        let (median, min, max) = summary(&per);
        let gf = 2.0 * (k as f64).powi(3) / 1e9;
        println!(
            "dgemm {k}x{k}x{k}, one thread: median {:.2} GFLOP/s (min {:.2}, max {:.2}; {} repeats x {inner} calls)",
            gf / median,
            gf / max,
            gf / min,
            a.repeats
        );
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let x = Array2::from_shape_fn((a.n, a.d), |_| rng.sample::<f64, _>(StandardNormal));
    let y = Array1::from_shape_fn(a.n, |i| {
        x[[i, 0]].sin() + 0.1 * rng.sample::<f64, _>(StandardNormal)
    });
    let spec = KernelSpec {
        family: a.family,
        m: a.m,
        components: a.components,
        intervals: 10,
    };
    let model = FeatureModel::new(spec, a.d, 1e-6, None, &mut rng).expect("model");
    let theta = model.start(&ArdPoint::default_start(a.d, 1.0), &mut rng);
    if a.bits {
        // The evaluation's exact bits (value, gradient, features), to check that a speed
        // change leaves the numbers unchanged: FNV-1a over the f64 bit patterns.
        let fnv = |v: &mut dyn Iterator<Item = f64>| {
            v.fold(0xcbf2_9ce4_8422_2325_u64, |h, x| {
                (h ^ x.to_bits()).wrapping_mul(0x0100_0000_01b3)
            })
        };
        let (value, grad) = objective(&model, &theta, x.view(), y.view()).expect("evaluation");
        // Again, in the memory the first evaluation gave back: the same bits.
        let (again, grad_again) =
            objective(&model, &theta, x.view(), y.view()).expect("evaluation");
        assert_eq!(
            value.to_bits(),
            again.to_bits(),
            "value differs when repeated"
        );
        assert!(
            grad.iter()
                .zip(&grad_again)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "gradient differs when repeated"
        );
        let phi = model.features(&theta, x.view()).expect("features");
        println!(
            "bits {:?} n={} d={} m={}: value {:016x} gradient {:016x} features {:016x}",
            a.family,
            a.n,
            a.d,
            a.m,
            value.to_bits(),
            fnv(&mut grad.iter().copied()),
            fnv(&mut phi.iter().copied())
        );
        return;
    }
    let (per, inner) = pool.install(|| {
        time(a.repeats, a.seconds, || {
            std::hint::black_box(
                objective(&model, &theta, x.view(), y.view()).expect("evaluation"),
            );
        })
    });
    let (median, min, max) = summary(&per);
    let features = model.n_features();
    println!(
        "ours {:?} n={} d={} m={} D={features} params={}: median {median:.6} s per evaluation (min {min:.6}, max {max:.6}, {} repeats x {inner} calls)",
        a.family,
        a.n,
        a.d,
        a.m,
        model.n_params(),
        a.repeats
    );
    if a.phases {
        let (phi, z) = model
            .features_and_projections(&theta, x.view(), true)
            .expect("features");
        let z = z.as_ref().map(|z| z.view());
        let noise = model.noise(&theta);
        let wanted = model.evidence_gradients();
        let e = evidence(phi.view(), y.view(), noise, wanted).expect("evidence");
        let quiet = |per: Vec<f64>| summary(&per).0;
        pool.install(|| {
            let (t, _) = time(a.repeats, a.seconds / 3.0, || {
                std::hint::black_box(
                    model
                        .features_and_projections(&theta, x.view(), true)
                        .expect("features"),
                );
            });
            let f = quiet(t);
            let (t, _) = time(a.repeats, a.seconds / 3.0, || {
                std::hint::black_box(
                    evidence(phi.view(), y.view(), noise, wanted).expect("evidence"),
                );
            });
            let s = quiet(t);
            let (t, _) = time(a.repeats, a.seconds / 3.0, || {
                std::hint::black_box(
                    model
                        .gradient(&theta, x.view(), phi.view(), z, &e)
                        .expect("gradient"),
                );
            });
            let g = quiet(t);
            println!("phases (medians): features {f:.6} s, solve {s:.6} s, to θ {g:.6} s");
        });
    }
    if a.flops {
        let f = evaluation_flops(a.n, features);
        println!(
            "BLAS flops per evaluation {:.3} G: {:.1} GFLOP/s at the median",
            f / 1e9,
            f / 1e9 / median
        );
    }
}
