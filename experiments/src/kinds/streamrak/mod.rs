//! Kinds of StreaMRAK (Oslandsbotn, Kereta, Naumova, Freund, Cloninger, 2022): one kind,
//! `multiresolution_regression`, and the training of its three methods on a stream.

pub mod multiresolution_regression;
pub mod training;
