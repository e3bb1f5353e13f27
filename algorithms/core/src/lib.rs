//! Shared numerics for random-partition and random-feature kernel methods.
//!
//! * [`model`]: the model traits the harness uses: [`FeatureMap`] (new points to [`Features`],
//!   one-hot or dense, in blocks), [`Predictor`] (a fitted model), [`OnlineLearner`] (predict,
//!   then update);
//! * [`kernel`]: exact kernels (the Laplace kernel `exp(-λ‖x − x'‖₁)` that the Mondrian kernel,
//!   random binning and Laplace random Fourier features all approximate);
//! * [`one_hot`]: sparse feature matrices with exactly one non-zero per block and row (Mondrian
//!   and random-binning features);
//! * [`approximation`]: the kernel-approximation error of nested prefixes of a random feature map
//!   (The Mondrian Kernel, Fig. 5);
//! * [`ridge`]: ridge regression by Cholesky (dense features, nested prefixes, kernel ridge);
//! * [`cg`]: preconditioned conjugate gradient for matrix-free SPD systems;
//! * [`gp`]: draws of a Gaussian process with a given kernel matrix (synthetic regression data);
//! * [`sgd`]: scikit-learn 0.17's SGD for L2-penalised least squares (the authors' learner);
//! * [`width_search`]: the authors' search over kernel widths by retraining (Fig. 8);
//! * [`metrics`]: error measures used by the papers.
//!
//! The crate depends on no harness code: every item is usable on its own.

pub mod approximation;
pub mod cg;
pub mod gp;
pub mod kernel;
pub mod metrics;
pub mod model;
pub mod one_hot;
pub mod ridge;
pub mod sgd;
pub mod trig;
pub mod width_search;

mod error;
pub use error::CoreError;
pub use model::{DenseFeatures, FeatureMap, Features, OnlineLearner, Predictor};
