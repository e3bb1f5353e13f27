//! Shared numerics for random-partition and random-feature kernel methods, and the model
//! vocabulary of every algorithm crate of the workspace.
//!
//! * [`model`]: the model traits: [`FeatureMap`] (new points to [`Features`], one-hot or dense,
//!   in blocks), [`Predictor`] (a fitted model), [`OnlineLearner`] (predict, then update),
//!   [`StreamingRegressor`] (a predictor fed a stream), [`Classifier`] (fit on
//!   [`LabelledRows`], predict test rows); all fallible;
//! * [`error`]: [`CoreError`], the failures every crate shares, and the checks that raise them;
//! * [`exp`]: `exp` of many arguments at once, vectorised, with the bits of glibc's `exp`;
//! * [`vectors`]: [`widest_vectors!`], one body compiled for the widest vector unit the processor
//!   has (runtime dispatch);
//! * [`params`]: checked parameters, validated once where they are made ([`Lifetime`]);
//! * [`features`]: [`Features`] in blocks, one-hot or [`DenseFeatures`];
//! * [`kernel`]: exact kernels (the Laplace kernel `exp(-λ‖x − x'‖₁)` that the Mondrian kernel,
//!   random binning and Laplace random Fourier features all approximate);
//! * [`kernel_svm`]: LIBSVM's C-SVC (SMO, second-order working sets, LRU cache of kernel rows);
//! * [`one_hot`]: sparse feature matrices with exactly one non-zero per block and row (Mondrian
//!   and random-binning features);
//! * [`approximation`]: the kernel-approximation error of nested prefixes of a random feature map
//!   (The Mondrian Kernel, Fig. 5);
//! * [`ridge`]: ridge regression by Cholesky (dense features, nested prefixes, kernel ridge);
//! * [`cg`]: the workspace's conjugate gradient for matrix-free SPD systems (Mondrian ridge,
//!   FALKON);
//! * [`gp`]: draws of a Gaussian process with a given kernel matrix (synthetic regression data);
//! * [`linear_svm`]: LIBLINEAR's default linear SVM (L2 loss, dual coordinate descent);
//! * [`sgd`]: scikit-learn 0.17's SGD for L2-penalised least squares (the authors' learner);
//! * [`width_search`]: the authors' search over kernel widths by retraining (Fig. 8);
//! * [`metrics`]: error measures used by the papers (relative error, RMSE, MNLP, ...).
//!
//! The crate depends on no harness code: every item is usable on its own. The `serde` feature
//! serialises the checked parameters for configs.

pub mod approximation;
pub mod cache;
pub mod cg;
pub mod error;
pub mod exp;
pub mod features;
pub mod gp;
pub mod kernel;
pub mod kernel_svm;
pub mod linear_svm;
pub mod metrics;
pub mod model;
pub mod one_hot;
pub mod params;
pub mod ridge;
pub mod sgd;
pub mod trig;
pub mod vectors;
pub mod width_search;

pub use error::CoreError;
pub use features::{DenseFeatures, Features};
pub use model::{
    Classifier, FeatureMap, LabelledRows, OnlineLearner, Predictor, StreamingRegressor,
};
pub use params::Lifetime;
