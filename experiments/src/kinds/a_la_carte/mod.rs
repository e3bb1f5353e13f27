//! Kinds of A la Carte — Learning Fast Kernels (Yang, Smola, Song, Wilson; AISTATS 2015):
//! `fastfood_regression` (the RMSE table on the UCI regression suite with its shipped splits).

pub mod fastfood_regression;
