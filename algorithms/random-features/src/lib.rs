//! Random features for the Laplace kernel `exp(−λ‖x − x'‖₁)` (Rahimi & Recht, *Random Features
//! for Large-Scale Kernel Machines*, NIPS 2007), the baselines of The Mondrian Kernel, and
//! orthogonal random features of Gaussian kernels for AdaRaker (the Isolation Kernel paper's).
//!
//! * [`fourier`]: random Fourier features with Cauchy frequencies `Ω = λ·Γ`, `Γ_dr ~ Cauchy(0, 1)`,
//!   `z(x) = [cos(xᵀΩ), sin(xᵀΩ)]`;
//! * [`binning`]: random binning features, per repetition and dimension a grid of width
//!   `δ ~ Gamma(2, 1/λ)` shifted by `u ~ U[0, δ)`; a point's feature is its D-dimensional bin;
//! * [`adaraker`]: Raker and AdaRaker, online multi-kernel learning on orthogonal random
//!   features of Gaussian kernels (the Isolation Kernel paper's comparator).

pub mod adaraker;
pub mod binning;
pub mod fourier;

mod error;
pub use adaraker::{AdaRaker, OrthogonalGaussianFeatures, RakerParams};
pub use binning::RandomBinning;
pub use error::FeatureError;
pub use fourier::{FourierBuffers, RandomFourierFeatures};
