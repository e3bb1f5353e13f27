//! Checked parameters whose domain is the same wherever they appear: each is validated once,
//! when it is made (by [`TryFrom`] or, with the `serde` feature, when a config is read), so
//! code that takes one needs no check of its own.

use crate::error::non_negative;
use crate::CoreError;

/// The lifetime (inverse width) λ of the Laplace kernel `exp(−λ‖x − x'‖₁)` that the Mondrian
/// kernel, random binning and Laplace random Fourier features approximate: a finite λ ≥ 0
/// (λ = 0 is the constant kernel; a Mondrian tree of lifetime 0 is its root). Random binning
/// needs λ > 0 besides (its bin widths are Gamma(2, 1/λ)) and says so when it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "f64", into = "f64")
)]
pub struct Lifetime(f64);

impl Lifetime {
    /// λ, checked: finite and ≥ 0.
    pub fn new(lifetime: f64) -> Result<Self, CoreError> {
        non_negative("lifetime", lifetime).map(Self)
    }

    /// λ as a number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Lifetime {
    type Error = CoreError;
    fn try_from(lifetime: f64) -> Result<Self, CoreError> {
        Self::new(lifetime)
    }
}

impl From<Lifetime> for f64 {
    fn from(lifetime: Lifetime) -> f64 {
        lifetime.0
    }
}

impl std::fmt::Display for Lifetime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_are_finite_and_non_negative() {
        assert_eq!(Lifetime::new(0.0).map(Lifetime::get), Ok(0.0));
        assert_eq!(Lifetime::try_from(2.5).map(f64::from), Ok(2.5));
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let e = Lifetime::new(bad).unwrap_err().to_string();
            assert!(e.contains("lifetime"), "{e}");
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn a_config_value_is_checked_when_read_and_written_as_the_number() {
        let l: Lifetime = serde_json::from_str("3").unwrap();
        assert_eq!(l.get(), 3.0);
        assert_eq!(serde_json::to_string(&l).unwrap(), "3.0");
        let e = serde_json::from_str::<Lifetime>("-1.5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("lifetime = -1.5"), "{e}");
    }
}
