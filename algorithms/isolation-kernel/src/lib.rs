//! Isolation Kernel feature maps (Ting, Wells, Washio, *Isolation Kernel: The X Factor in
//! Efficient and Effective Large Scale Online Kernel Learning*, DMKD 35, 2021; Ting, Zhu, Zhou,
//! KDD 2018). Spec: `specs/isolation-kernel.md` §2–§5.
//!
//! * [`iforest`]: IK_i, a partitioning is an isolation tree on ψ points (random axis-parallel
//!   splits until every point is isolated, optional height limit);
//! * [`anne`]: IK_a, a partitioning is the Voronoi diagram of ψ points (nearest centre);
//! * [`kernel`]: [`IsolationKernel`], t partitionings, the index map φ(x) ∈ [0, ψ)^t, the
//!   one-hot map Φ(x) ∈ {0,1}^{tψ} (a [`kernel_core::FeatureMap`]) and the t-look-up dot product
//!   ⟨w, Φ(x)⟩ = `Σ_i w[i·ψ + φ_i(x)]` next to the naive tψ one;
//! * [`input`]: dense rows and sparse (CSR) rows, never densified;
//! * [`learners`]: the online classifiers IK-OGD (primal, naive, dual) and kernel OGD with
//!   the Laplacian L_ψ (spec §6, §7.1), with operation counters;
//! * [`chi2`]: the χ² additive kernel and its explicit map (the comparator of Table 9);
//! * [`nogd`]: Nyström OGD with b landmarks and rank r (spec §7.2, D7–D9).

pub mod anne;
pub mod chi2;
pub mod iforest;
pub mod input;
pub mod kernel;
pub mod learners;
pub mod nogd;

mod error;
mod ogd_kernel;
mod ranked;
mod store;
pub use error::IsolationError;
pub use input::{CsrRows, Row, Rows, SparseRow};
pub use kernel::{
    check_psi, dot, dot_naive, paper_height_limit, IsolationKernel, Partitioner, Partitionings,
    Subsampling,
};
pub use learners::{label, IkOgd, IkOgdDual, IkOgdNaive, KernelOgd, OgdKernel, PAPER_ETA};
pub use nogd::{Nogd, NogdParams};
