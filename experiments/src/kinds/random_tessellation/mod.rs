//! Kinds of Random Tessellation Forests (Ge, Wang, Teh, Wang, Elliott; NeurIPS 2019):
//! `tessellation_classification` (the classification study: Table 1, Supp. Tables 1-3, Supp.
//! Fig. 1) and `tessellation_prior` (draws of the four priors on a rectangle, Figs. 1-2); the
//! authors' tess19 script run on the same splits (`authors`).

pub mod authors;
pub mod tessellation_classification;
pub mod tessellation_prior;
