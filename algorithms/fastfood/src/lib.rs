//! Fastfood kernel learning by marginal likelihood: Yang, Smola, Song, Wilson, *A la Carte —
//! Learning Fast Kernels* (AISTATS 2015). Spec: `../shared/specs/a-la-carte.md`.
//!
//! * [`fwht`]: the fast Walsh-Hadamard transform (O(d log d), power-of-two padding);
//! * [`fastfood`]: Fastfood blocks `S H G Π H B`, projection and backward pass (O(m log d));
//! * [`radial`]: χ_d radii by the inverse CDF (D5) and the piecewise-linear radial density;
//! * [`kernels`]: the menu (RBF, ARD, FSARD, FSGBARD, GM, PWL) and SSGPR as feature models with
//!   gradients;
//! * [`evidence`]: the log marginal likelihood of Bayesian linear regression on features,
//!   primal and dual forms, gradients in Φ and σ², the posterior predictive;
//! * [`exact_gp`]: the exact ARD GP (reference on the SMALL sets);
//! * [`optimise`]: L-BFGS (argmin) with one evaluation per point;
//! * [`fit`]: the protocol (restarts, ARD warm starts), the fitted models' posteriors
//!   ([`kernel_core::Predictor`]s of Gaussian predictions), the methods by name ([`Method`]);
//! * [`spectra`]: known spectral kernels (mixture, piecewise radial) and the spectral
//!   distribution a fitted model implies;
//! * [`blas`]: dsyrk and dgemm through OpenBLAS.
//!
//! A fitted model is a [`kernel_core::FeatureMap`] (its features at θ); errors are
//! [`kernel_core::CoreError`]'s ([`FastfoodError`]); RMSE and MNLP are
//! [`kernel_core::metrics`]'. The `serde` feature names [`Family`] and [`Method`] for configs.

pub mod blas;
pub mod error;
pub mod evidence;
pub mod exact_gp;
pub mod fastfood;
pub mod fit;
pub mod fwht;
pub mod kernels;
pub mod optimise;
pub mod radial;
pub mod spectra;

pub use error::FastfoodError;
pub use fastfood::FastfoodDraw;
pub use fit::{
    fit_ard_family, fit_exact_gp, fit_from_ard, objective, ExactPosterior, FeaturePosterior, Fit,
    GaussianPrediction, Method, Protocol, RadiusSampling,
};
pub use kernels::{ArdPoint, Family, FeatureModel, KernelSpec};
pub use optimise::{LbfgsSettings, Stop};
