//! Helpers that several kinds use, one concept per module. A kind imports these, never another
//! kind.
//!
//! * [`transductive`]: a regression split with its inputs stacked `[train; validation; test]`
//!   (transductive feature maps are built on all of them);
//! * [`sweep`]: the Mondrian lifetime sweep with its kernel learner, and its checkpoints;
//! * [`clock`]: per-thread CPU time;
//! * [`feature_maps`]: random feature maps by their config name;
//! * [`params`]: checks of parameters and data that several kinds share;
//! * [`binary`]: binary classification examples (labels ±1, inputs dense or sparse);
//! * [`online_classifiers`]: the online classifiers of the Isolation Kernel paper by their
//!   config name, and ψ by cross-validation.

pub mod binary;
pub mod clock;
pub mod feature_maps;
pub mod online_classifiers;
pub mod params;
pub mod sweep;
pub mod transductive;
