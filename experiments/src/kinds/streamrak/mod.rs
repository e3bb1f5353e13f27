//! Kinds of StreaMRAK (Oslandsbotn, Kereta, Naumova, Freund, Cloninger, 2022): one kind,
//! `multiresolution_regression`, and the training of its three methods on a stream; the authors'
//! Python run on the same stream (`authors`).

pub mod authors;
pub mod multiresolution_regression;
pub mod training;
