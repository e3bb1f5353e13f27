//! The Mondrian Kernel (Balog, Lakshminarayanan, Ghahramani, Roy, Teh; UAI 2016): Figs. 5-10.
//!
//! * [`kernel_approximation`]: Fig. 5, kernel approximation error vs M;
//! * [`feature_ridge`]: Fig. 6, ridge on random features vs M on CPU;
//! * [`lifetime_sweep`]: Figs. 7, 9, 10, one lifetime sweep (kernel vs forest, λ̂, weights);
//! * [`width_selection`]: Fig. 8, kernel-width selection vs CPU time;
//!
//! and the helpers they share:
//!
//! * [`authors`]: the authors' scripts (upstream `mondrian_kernel`) on the same split;
//! * [`transductive`]: a regression split with its inputs stacked `[train; validation; test]`
//!   (transductive feature maps are built on all of them);
//! * [`sweep`]: the Mondrian lifetime sweep with its kernel learner, and its checkpoints;
//! * [`feature_maps`]: random feature maps by their config name.

pub mod authors;
pub mod feature_maps;
pub mod feature_ridge;
pub mod kernel_approximation;
pub mod lifetime_sweep;
pub mod sweep;
pub mod transductive;
pub mod width_selection;
