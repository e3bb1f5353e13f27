//! Kinds of A la Carte — Learning Fast Kernels (Yang, Smola, Song, Wilson; AISTATS 2015):
//! `fastfood_regression` (the RMSE table on the UCI regression suite with its shipped splits) and `fastfood_scaling` (speed and memory against m and d) and
//! `spectrum_recovery` (learned vs known spectra on GP draws); revrand, the nearest public
//! implementation (not the authors' code), run on the same splits (`revrand`).

pub mod fastfood_regression;
pub mod fastfood_scaling;
pub mod revrand;
pub mod spectrum_recovery;
