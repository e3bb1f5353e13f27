//! The BLAS kernels every cell's linear algebra runs on (a leaf: imports no other module of the
//! harness).
//!
//! ndarray-linalg links the system's OpenBLAS, which picks its kernels for the CPU when it is
//! loaded, before `main`. An OpenBLAS older than the CPU may not recognise it and fall back to
//! kernels for an older instruction set: Debian's 0.3.21 on a family 6 model 207 Xeon runs its
//! Prescott (SSE3) kernels, one-thread dgemm at 12-13 GFLOP/s instead of 82 with its SkylakeX
//! (AVX-512) kernels. (On an AMD EPYC Zen 4 it picks its AVX-512 Cooperlake kernels by itself;
//! asked for SkylakeX on a CPU with AVX-512 BF16 it also runs Cooperlake's.) [`native_kernels`]
//! names the kernels this CPU can run when the library chose a lesser instruction set, and `repro`
//! then starts itself again with `OPENBLAS_CORETYPE` set (the library reads it only when loaded).
//! A user's own `OPENBLAS_CORETYPE` is always kept.
//!
//! Kernels for different instruction sets sum in different orders, so results agree to rounding,
//! not bits: the kernels' name is part of every cell's cache key and of every manifest. (Shards
//! run on nodes whose OpenBLAS picks other kernels than the merging machine's compute cells under
//! other keys: run a sharded config on one kind of node.)

use std::ffi::CStr;
use std::os::raw::c_char;

extern "C" {
    /// OpenBLAS's name for the kernels it runs (linked through ndarray-linalg's openblas-system).
    fn openblas_get_corename() -> *const c_char;
}

/// The variable OpenBLAS (built with DYNAMIC_ARCH, as Debian's is) reads to choose its kernels.
pub const CORETYPE_VARIABLE: &str = "OPENBLAS_CORETYPE";

/// OpenBLAS's name for the kernels this process runs, e.g. `Prescott`, `Haswell`, `SkylakeX`.
pub fn kernels() -> String {
    // SAFETY: openblas_get_corename returns a pointer to a static NUL-terminated string (or null
    // in a library without the symbol's table, handled below).
    let name = unsafe { openblas_get_corename() };
    if name.is_null() {
        return "unknown".into();
    }
    // SAFETY: non-null, static and NUL-terminated (see above).
    unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned()
}

/// The widest x86 vector instruction set a set of kernels uses, by OpenBLAS's core name:
/// 1 SSE, 2 AVX, 3 AVX2, 4 AVX-512. `None` for names not listed (other architectures, newer
/// names): those are never replaced.
pub fn instruction_set_of(kernels: &str) -> Option<u8> {
    match kernels.to_ascii_lowercase().as_str() {
        "katmai" | "coppermine" | "northwood" | "prescott" | "banias" | "core2" | "penryn"
        | "dunnington" | "nehalem" | "atom" | "opteron" | "barcelona" | "bobcat" => Some(1),
        "sandybridge" | "bulldozer" | "piledriver" | "steamroller" | "excavator" => Some(2),
        "haswell" | "zen" => Some(3),
        "skylakex" | "cooperlake" | "sapphirerapids" => Some(4),
        _ => None,
    }
}

/// The widest instruction set of this CPU in the scale of [`instruction_set_of`], with the
/// OpenBLAS kernels written for it.
fn cpu_instruction_set() -> (u8, Option<&'static str>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512cd")
        {
            return (4, Some("SkylakeX"));
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return (3, Some("Haswell"));
        }
    }
    (0, None)
}

/// The kernels to ask OpenBLAS for: `Some` when the running kernels (`running`, see [`kernels`])
/// use a narrower instruction set than this CPU has; `None` when they match or cannot be
/// compared.
pub fn native_kernels(running: &str) -> Option<&'static str> {
    let (cpu, name) = cpu_instruction_set();
    match instruction_set_of(running) {
        Some(set) if set < cpu => name,
        _ => None,
    }
}

/// Starts this program again with `OPENBLAS_CORETYPE` naming the CPU's kernels when OpenBLAS
/// chose a lesser instruction set and the user did not choose. Returns only when nothing is to be
/// done or the new start failed (then with the reason; the program goes on with the kernels it
/// has). Call it first thing in `main`, before any thread starts.
#[cfg(unix)]
pub fn restart_with_native_kernels() -> Option<String> {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(CORETYPE_VARIABLE).is_some() {
        return None;
    }
    let running = kernels();
    let wanted = native_kernels(&running)?;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Some(format!("cannot find this program to restart it: {e}")),
    };
    let error = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(CORETYPE_VARIABLE, wanted)
        .exec();
    Some(format!(
        "OpenBLAS runs its {running} kernels on a CPU with {wanted}'s instruction set; \
         restarting with {CORETYPE_VARIABLE}={wanted} failed ({error}); going on with {running}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_same_instruction_set_are_never_replaced() {
        // Whatever this CPU is, a running set at least as wide as its own is kept.
        let (cpu, _) = cpu_instruction_set();
        for name in ["Prescott", "Sandybridge", "Haswell", "SkylakeX"] {
            let set = instruction_set_of(name).unwrap();
            assert_eq!(native_kernels(name).is_some(), set < cpu, "{name}");
        }
        assert_eq!(native_kernels("ARMV8"), None);
        assert_eq!(native_kernels("unknown"), None);
    }

    #[test]
    fn core_names_are_matched_without_case() {
        assert_eq!(instruction_set_of("SKYLAKEX"), Some(4));
        assert_eq!(instruction_set_of("prescott"), Some(1));
        assert_eq!(instruction_set_of("Haswell"), Some(3));
        assert_eq!(instruction_set_of("NEOVERSEN1"), None);
    }

    #[test]
    fn the_running_kernels_have_a_name() {
        assert!(!kernels().is_empty());
    }
}
