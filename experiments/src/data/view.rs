//! The data one repetition sees: points, trajectories, or a labelled set and its split.

use std::sync::Arc;

use anyhow::{bail, Result};
use datasets::{Inputs, LabelledSet, Targets};
use ndarray::{Array1, Array2, Axis};

use super::synthetic::double_pendulum::PendulumTrajectories;

/// Inputs (one per row) and their targets.
#[derive(Debug, Clone)]
pub struct Labelled {
    pub x: Array2<f64>,
    pub y: Array1<f64>,
}

/// The sets of a regression experiment.
#[derive(Debug, Clone)]
pub struct RegressionSets {
    pub train: Labelled,
    /// A validation set (model selection), when the data define one.
    pub validation: Option<Labelled>,
    pub test: Labelled,
}

/// Rows of one repetition's sets (indices into the labelled set).
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    pub train: Vec<usize>,
    /// Empty when the data define no validation set.
    pub validation: Vec<usize>,
    pub test: Vec<usize>,
}

/// The data one repetition sees.
pub enum DataView {
    /// Points (synthetic), one per row.
    Points(Arc<Array2<f64>>),
    /// Simulated pendulum trajectories.
    Trajectories(Arc<PendulumTrajectories>),
    /// A labelled set and this repetition's split of it.
    Sets(SplitSets),
}

/// A labelled set and one repetition's split.
pub struct SplitSets {
    pub set: Arc<LabelledSet>,
    pub parts: Arc<Parts>,
}

impl SplitSets {
    /// Inputs and targets of the given rows.
    pub fn rows(&self, rows: &[usize]) -> (Inputs, Targets) {
        self.set.select(rows)
    }
}

impl DataView {
    /// The points: synthetic points, or the (dense) training inputs of a labelled set.
    pub fn points(&self) -> Result<Array2<f64>> {
        match self {
            DataView::Points(x) => Ok(x.as_ref().clone()),
            DataView::Sets(s) => Ok(dense(&s.set, &s.parts.train)?),
            DataView::Trajectories(_) => bail!("these data are trajectories, not points"),
        }
    }

    /// The labelled set and this repetition's split.
    pub fn sets(&self) -> Result<&SplitSets> {
        match self {
            DataView::Sets(s) => Ok(s),
            DataView::Points(_) => bail!("this experiment needs a labelled dataset, not points"),
            DataView::Trajectories(_) => {
                bail!("this experiment needs a labelled dataset, not trajectories")
            }
        }
    }

    /// The simulated trajectories.
    pub fn trajectories(&self) -> Result<Arc<PendulumTrajectories>> {
        match self {
            DataView::Trajectories(t) => Ok(t.clone()),
            _ => bail!(
                "this experiment needs simulated trajectories (data.source = \"double_pendulum\")"
            ),
        }
    }

    /// The regression sets of this repetition (dense inputs, real targets).
    pub fn regression(&self) -> Result<RegressionSets> {
        let DataView::Sets(s) = self else {
            bail!("this experiment needs a regression dataset");
        };
        let Targets::Real(y) = &s.set.y else {
            bail!(
                "{} is a classification set; this experiment needs regression targets",
                s.set.name
            );
        };
        let part = |rows: &[usize]| -> Result<Labelled> {
            Ok(Labelled {
                x: dense(&s.set, rows)?,
                y: y.select(Axis(0), rows),
            })
        };
        Ok(RegressionSets {
            train: part(&s.parts.train)?,
            validation: (!s.parts.validation.is_empty())
                .then(|| part(&s.parts.validation))
                .transpose()?,
            test: part(&s.parts.test)?,
        })
    }
}

fn dense(set: &LabelledSet, rows: &[usize]) -> Result<Array2<f64>> {
    match &set.x {
        Inputs::Dense(x) => Ok(x.select(Axis(0), rows)),
        Inputs::Sparse(_) => bail!(
            "{} has sparse inputs; this experiment needs dense ones",
            set.name
        ),
    }
}
