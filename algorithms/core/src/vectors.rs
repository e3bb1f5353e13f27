//! Runtime dispatch to the widest vector unit: [`widest_vectors!`](crate::widest_vectors)
//! defines a function that runs one `#[inline(always)]` body compiled for each listed tier of
//! target features (AVX-512F, AVX2, ...), picking the first tier the processor has, else a
//! baseline function. The body decides what may differ between tiers: a loop of comparisons,
//! products and sums without fused multiply-adds gives the same bits at every width.

/// Defines `fn NAME(ARGS)` (no return value: the results go to its slices) calling `BODY(ARGS)` compiled with the first tier of target
/// features whose detections all pass (x86-64 only), else `FALLBACK(ARGS)`. Each tier is also an
/// `unsafe fn TIER(ARGS)` of the module (for tests of every path; safe to call only where the
/// processor has its features). `BODY` must be `#[inline(always)]` (a function that is not
/// inlined is compiled without the features).
///
/// ```
/// #[inline(always)]
/// fn add_generic(a: &mut [f64], b: &[f64]) {
///     for (a, b) in a.iter_mut().zip(b) {
///         *a += b;
///     }
/// }
/// kernel_core::widest_vectors! {
///     /// `a += b`, element by element (the same bits at every width).
///     pub fn add(a: &mut [f64], b: &[f64]);
///     body add_generic;
///     tier add_avx512 = "avx512f" if "avx512f";
///     tier add_avx2 = "avx2" if "avx2";
///     fallback add_generic;
/// }
/// let mut a = [1.0, 2.0];
/// add(&mut a, &[0.5, 0.25]);
/// assert_eq!(a, [1.5, 2.25]);
/// ```
#[macro_export]
macro_rules! widest_vectors {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $params:tt;
        body $body:path;
        $(tier $tier:ident = $feature:literal if $($detect:tt),+;)+
        fallback $fallback:path;
    ) => {
        $($crate::widest_vectors!(@tier $tier, $feature, $name, $body, $params);)+

        $(#[$meta])*
        $vis fn $name $params {
            #[cfg(target_arch = "x86_64")]
            {
                $(
                    if $(std::arch::is_x86_feature_detected!($detect))&&+ {
                        // SAFETY: the processor has every feature the tier is compiled with
                        // (detected just above).
                        return unsafe { $crate::widest_vectors!(@call $tier, $params) };
                    }
                )+
            }
            $crate::widest_vectors!(@call $fallback, $params)
        }
    };
    (
        @tier $tier:ident, $feature:literal, $name:ident, $body:path,
        ($($arg:ident: $ty:ty),* $(,)?)
    ) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        #[doc = concat!(
            "`", stringify!($name), "` compiled with `", $feature,
            "` (call only where the processor has it)."
        )]
        unsafe fn $tier($($arg: $ty),*) {
            $body($($arg),*)
        }
    };
    (@call $f:path, ($($arg:ident: $ty:ty),* $(,)?)) => {
        $f($($arg),*)
    };
}
