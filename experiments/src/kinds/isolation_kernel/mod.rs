//! Isolation Kernel for large-scale online kernel learning (Ting, Wells, Washio; DMKD 2021):
//! Tables 5-6, Figs. 3-7 and §8.1.1.
//!
//! * [`batch_classification`]: Tables 5-6 and Figs. 5-7, one training pass and one test;
//! * [`online_stream`]: Fig. 3 (cumulative accuracy and time), Fig. 4 (runtime vs ψ of the
//!   t-look-up and naive dot products) and §8.1.1 (IK-OGD vs IK-OGD(dual));
//! * [`svm_classification`]: Tables 8-9 (spec R4-R5), kernel and linear SVMs on IK_a, the
//!   Laplacian and the χ² kernel;
//! * [`laplacian_agreement`]: the KDD 2018 result (IK_i ≈ L_ψ under uniform density), spec V1;
//!
//! and the helpers they share:
//!
//! * [`authors`]: the authors' C++ (upstream `ik_ogd`) run on the same split;
//! * [`binary`]: binary classification examples (labels ±1, inputs dense or sparse);
//! * [`online_classifiers`]: the online classifiers by their config name, and ψ by
//!   cross-validation.

pub mod authors;
pub mod batch_classification;
pub mod binary;
pub mod laplacian_agreement;
pub mod online_classifiers;
pub mod online_stream;
pub mod svm_classification;
