//! The kernels of the OGD baselines (spec §7.1, D1) and the support vectors they are
//! evaluated on, shared by [`crate::learners::KernelOgd`], [`crate::nogd::Nogd`] and the row
//! store beneath them.

use kernel_core::error::{at_least_one, positive};

use crate::error::IsolationError;
use crate::input::Row;
use crate::kernel::check_psi;

/// The kernel of the OGD baseline (spec §7.1, D1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OgdKernel {
    /// exp(−γ‖x − y‖₁); the paper's L_ψ has γ = ln ψ / d ([`OgdKernel::laplacian_psi`]).
    Laplacian { gamma: f64 },
    /// exp(−γ‖x − y‖₂²), the kernel of the authors' code (D1 option).
    Gaussian { gamma: f64 },
}

impl OgdKernel {
    /// L_ψ(x, y) = exp(−(ln ψ / d)‖x − y‖₁) = ψ^{−‖x−y‖₁/d} ([KDD18] §2.2; spec §2, §7.1).
    pub fn laplacian_psi(psi: usize, dim: usize) -> Result<Self, IsolationError> {
        check_psi("psi", psi)?;
        at_least_one("dimension", dim)?;
        Ok(OgdKernel::Laplacian {
            gamma: (psi as f64).ln() / dim as f64,
        })
    }

    /// exp(−γ‖x − y‖₂²) with γ > 0 (D1 option).
    pub fn gaussian(gamma: f64) -> Result<Self, IsolationError> {
        let k = OgdKernel::Gaussian { gamma };
        k.check()?;
        Ok(k)
    }

    /// k(x_j, x) of a stored support vector and a (checked) row, by a sparse merge (the
    /// learners evaluate the dense blocks of [`RowStore`] when d is small, with the same bits).
    pub(crate) fn eval(&self, sv: &StoredRow, x: Row) -> f64 {
        match *self {
            OgdKernel::Laplacian { gamma } => (-gamma * sv.distance(x, f64::abs)).exp(),
            OgdKernel::Gaussian { gamma } => (-gamma * sv.distance(x, |z| z * z)).exp(),
        }
    }

    pub(crate) fn check(&self) -> Result<(), IsolationError> {
        let gamma = match *self {
            OgdKernel::Laplacian { gamma } | OgdKernel::Gaussian { gamma } => gamma,
        };
        positive("gamma", gamma)?;
        Ok(())
    }
}

/// A support vector in sparse form (the non-zeros of x_j, strictly increasing columns).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredRow {
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl StoredRow {
    pub(crate) fn from_row(x: Row) -> Self {
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        match x {
            Row::Dense(x) => {
                for (a, &v) in x.iter().enumerate() {
                    if v != 0.0 {
                        indices.push(a as u32);
                        values.push(v);
                    }
                }
            }
            Row::Sparse(x) => {
                for (&a, &v) in x.indices().iter().zip(x.values()) {
                    if v != 0.0 {
                        indices.push(a);
                        values.push(v);
                    }
                }
            }
        }
        Self { indices, values }
    }

    /// Σ_a h(x_a − y_a) over the columns where x or y is non-zero, in column order, so dense
    /// and sparse forms of a row give the same bits (h(0) = 0 adds nothing).
    fn distance(&self, y: Row, h: impl Fn(f64) -> f64) -> f64 {
        let mut s = 0.0;
        match y {
            Row::Dense(y) => {
                let mut k = 0;
                for (a, &ya) in y.iter().enumerate() {
                    let xa = if self.indices.get(k) == Some(&(a as u32)) {
                        k += 1;
                        self.values[k - 1]
                    } else {
                        0.0
                    };
                    if xa != 0.0 || ya != 0.0 {
                        s += h(xa - ya);
                    }
                }
            }
            Row::Sparse(y) => {
                let (yi, yv) = (y.indices(), y.values());
                let (mut p, mut q) = (0, 0);
                while p < self.indices.len() || q < yi.len() {
                    let (xa, ya);
                    match (self.indices.get(p), yi.get(q)) {
                        (Some(&a), Some(&b)) if a == b => {
                            (xa, ya) = (self.values[p], yv[q]);
                            p += 1;
                            q += 1;
                        }
                        (Some(&a), Some(&b)) if a < b => {
                            (xa, ya) = (self.values[p], 0.0);
                            p += 1;
                        }
                        (Some(_), None) => {
                            (xa, ya) = (self.values[p], 0.0);
                            p += 1;
                        }
                        _ => {
                            (xa, ya) = (0.0, yv[q]);
                            q += 1;
                        }
                    }
                    if xa != 0.0 || ya != 0.0 {
                        s += h(xa - ya);
                    }
                }
            }
        }
        s
    }
}
