//! Validation of the KDD 2018 result the Isolation Kernel paper builds on (spec §2, §15.1;
//! Ting, Zhu, Zhou, KDD 2018, Figs. 1-2): under uniform density, IK_i approximates the
//! Laplacian L_ψ(x, y) = ψ^{−‖x−y‖₁/d}.
//!
//! One cell: IK_i with t partitionings is drawn from the data's points restricted to their
//! first `dim` coordinates (uniform data on [−1, 1]^D projected on d ≤ D coordinates are uniform
//! on [−1, 1]^d, so one data set serves every d); `pairs` query pairs are drawn uniformly from
//! the inner cube [−1/2, 1/2]^d (away from the boundary, where the density changes), and the
//! estimate K̂(x, y) = (1/t)·#{i : φ_i(x) = φ_i(y)} is compared with L_ψ(x, y).

use anyhow::{bail, Result};
use isolation_kernel::{paper_height_limit, IsolationKernel, Partitioner, Rows};
use ndarray::{s, Array2};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::context::CellContext;
use crate::data::synthetic::uniform_box::UniformBox;
use crate::data::DataSpec;
use crate::data::DataView;
use crate::kinds::{ColumnDoc, Kind, Params};
use crate::table::{row, Row, Value};

pub struct LaplacianAgreement;

/// `[params]` of a validation config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgreementParams {
    /// d: the first d coordinates of the points.
    pub dim: usize,
    pub psi: usize,
    pub t: usize,
    /// Query pairs.
    pub pairs: usize,
    /// `true`: IK_i trees stop at depth ⌈log₂ ψ⌉ (KDD 2018, the authors' code; spec D2);
    /// `false`: full isolation (the DMKD paper's text).
    pub height_limit: bool,
}

impl Params for AgreementParams {
    fn check(&self) -> Result<(), String> {
        if self.dim == 0 {
            return Err("dim = 0: at least 1".into());
        }
        // ψ's domain is the crate's; 65536 is this kind's size limit.
        isolation_kernel::check_psi("psi", self.psi).map_err(|e| e.to_string())?;
        if self.psi > 1 << 16 {
            return Err(format!("psi = {}: at most 65536", self.psi));
        }
        if !(1..=100_000).contains(&self.t) {
            return Err(format!("t = {}: expected 1 ..= 100000", self.t));
        }
        if !(1..=1_000_000).contains(&self.pairs) {
            return Err(format!("pairs = {}: expected 1 ..= 1000000", self.pairs));
        }
        if 2 * self.pairs * self.t > 1 << 28 {
            return Err(format!(
                "pairs x t = {} x {}: the cell ids of the pairs would exceed 2^28 entries (1 GiB)",
                self.pairs, self.t
            ));
        }
        Ok(())
    }
}

const COLUMNS: &[ColumnDoc] = &[
    ColumnDoc {
        name: "mean_difference",
        doc: "mean over the pairs of K_IK(x, y) - L_psi(x, y)",
    },
    ColumnDoc {
        name: "rmse",
        doc: "root mean square of K_IK(x, y) - L_psi(x, y) over the pairs",
    },
    ColumnDoc {
        name: "mean_laplacian",
        doc: "mean of L_psi(x, y) over the pairs (the scale of the differences)",
    },
];

crate::register_kind!(LaplacianAgreement);

impl Kind for LaplacianAgreement {
    type Params = AgreementParams;
    type Shared = Array2<f64>;
    const NAME: &'static str = "laplacian_agreement";
    const SUMMARY: &'static str = "IK_i vs the Laplacian L_psi under uniform density: mean difference and RMSE over random pairs (KDD 2018 result, Isolation Kernel spec V1)";
    const COLUMNS: &'static [ColumnDoc] = COLUMNS;
    const CODE_VERSION: u32 = 1;

    fn check_data(data: &DataSpec) -> Result<(), String> {
        match data.generated_by::<UniformBox>() {
            Some(b) if b.low == -1.0 && b.high == 1.0 => Ok(()),
            _ => Err(format!(
                "{} needs uniform_box data on [-1, 1] (low = -1, high = 1)",
                Self::NAME
            )),
        }
    }

    fn prepare(data: &DataView) -> Result<Array2<f64>> {
        data.points()
    }

    fn run_cell(x: &Array2<f64>, p: &AgreementParams, ctx: &CellContext) -> Result<Vec<Row>> {
        if p.dim > x.ncols() {
            bail!(
                "dim = {} exceeds the data's {} coordinates",
                p.dim,
                x.ncols()
            );
        }
        let points = x.slice(s![.., ..p.dim]);
        let partitioner = Partitioner::IForest {
            height_limit: p.height_limit.then(|| paper_height_limit(p.psi).max(1)),
        };
        let kernel = IsolationKernel::fit(
            Rows::Dense(points),
            p.psi,
            p.t,
            partitioner,
            &mut ctx.rng("partitionings"),
        )?;
        let mut rng = ctx.rng("pairs");
        let queries = Array2::from_shape_fn((2 * p.pairs, p.dim), |_| rng.random_range(-0.5..0.5));
        let phi = kernel.index_rows(Rows::Dense(queries.view()))?;
        let (t, d, psi) = (p.t, p.dim as f64, p.psi as f64);
        let (mut sum, mut sum_sq, mut sum_l) = (0.0, 0.0, 0.0);
        for k in 0..p.pairs {
            let a = &phi[2 * k * t..(2 * k + 1) * t];
            let b = &phi[(2 * k + 1) * t..(2 * k + 2) * t];
            let estimate = a.iter().zip(b).filter(|(u, v)| u == v).count() as f64 / t as f64;
            let l1 = kernel_core::kernel::l1_distance(queries.row(2 * k), queries.row(2 * k + 1));
            let laplacian = psi.powf(-l1 / d);
            sum += estimate - laplacian;
            sum_sq += (estimate - laplacian).powi(2);
            sum_l += laplacian;
        }
        let n = p.pairs as f64;
        Ok(vec![row([
            ("mean_difference", Value::from(sum / n)),
            ("rmse", Value::from((sum_sq / n).sqrt())),
            ("mean_laplacian", Value::from(sum_l / n)),
        ])])
    }
}
