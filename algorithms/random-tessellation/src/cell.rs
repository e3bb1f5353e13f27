//! Cells of a partition of the data (spec §3): a cell is the set of item ids it holds (its
//! training items, and under transductive routing its test items too, D3), identified with the
//! convex hull of its training items (Supp. Alg. 1 line 27). It carries its training-label
//! counts m_j, its term of the Dirichlet–multinomial log-likelihood, its cut rate Λ_a, and the
//! chain of hyperplanes that carved it out of the root (to route new points, D3 inductive).
//!
//! Cut rates (D2): [`CutRate::HalfDiameter`] Λ_a = dist.max / 2 (tess19), dist.max over all the
//! cell's items; [`CutRate::ExactThinning`] Λ_a = r_a, the radius of an enclosing ball of the
//! training items (Ritter), so that Λ([B(r_a)]) = r_a bounds the true rate Λ([a]) for thinning;
//! [`CutRate::EnclosingBall`] Λ_a = r_a of the ball enclosing the cell's items (uniform priors)
//! or the exact Λ of their box, Σ_j ω_j extent_j / 2 (Mondrian priors), over every item the cell
//! holds (under transductive routing the test items too).
//!
//! Pausing (spec §3): a cell can be cut only when Λ_a > 0 and it holds at least two distinct
//! training labels. A paused (pure) cell is never cut, so its rate matters only for tess19's
//! clock, Exp(Σ_a Λ_a) over *all* cells, and only when the budget τ is finite: otherwise it is not
//! computed (the diameter is the hot spot of the whole method).
//!
//! Cells are immutable and shared between particles by `Arc`, so resampling copies pointers.

use std::sync::Arc;

use crate::diameter::{diameter, enclosing_ball, Scratch};
use crate::likelihood::CellLikelihood;
use crate::points::Points;
use crate::prior::{Hyperplane, Prior, PriorKind};
use crate::settings::CutRate;

/// One side of one cut: the cell lies on the `left` (⟨n, x⟩ <= offset) or right side of
/// `hyperplane`, inside the cell described by `parent` (the root when `None`).
#[derive(Debug)]
pub(crate) struct Route {
    pub(crate) parent: Option<Arc<Route>>,
    pub(crate) hyperplane: Arc<Hyperplane>,
    pub(crate) left: bool,
}

#[derive(Debug)]
pub(crate) struct Cell {
    /// Training item ids (rows `0..n_train` of the stacked points) first, then test item ids.
    pub(crate) items: Vec<u32>,
    pub(crate) n_train: usize,
    /// Training-label counts m_jk.
    pub(crate) counts: Vec<u32>,
    /// Λ_a (0 for a paused cell whose rate was not needed).
    pub(crate) rate: f64,
    /// Can be cut: Λ_a > 0 and at least two distinct training labels.
    pub(crate) cuttable: bool,
    /// dist.max and a pair attaining it (tess19 scheme; `None` when not computed).
    pub(crate) diameter: Option<(f64, u32, u32)>,
    /// Enclosing-ball centre of the training items (exact thinning; radius = `rate`), or of the
    /// ball or box of the cell's items (enclosing-ball scheme).
    pub(crate) centre: Vec<f64>,
    /// Per-axis extents of the cell's items (enclosing-ball scheme, Mondrian priors).
    pub(crate) extents: Vec<f64>,
    /// Σ_k lgamma(α_k + m_k) − lgamma(A + n) − [Σ_k lgamma(α_k) − lgamma(A)].
    pub(crate) log_term: f64,
    pub(crate) route: Option<Arc<Route>>,
}

impl Cell {
    pub(crate) fn train(&self) -> &[u32] {
        &self.items[..self.n_train]
    }

    pub(crate) fn test(&self) -> &[u32] {
        &self.items[self.n_train..]
    }
}

/// What every cell of one forest fit shares: the stacked points, labels, prior and settings.
pub(crate) struct Context<'a> {
    pub(crate) points: Points,
    pub(crate) n_train: usize,
    pub(crate) labels: &'a [u32],
    pub(crate) n_classes: usize,
    pub(crate) prior: &'a Prior,
    pub(crate) cut_rate: CutRate,
    pub(crate) likelihood: CellLikelihood,
    /// Rates of paused cells are needed (tess19 clock with a finite budget).
    pub(crate) rate_paused_cells: bool,
}

/// The diameter known for a child: inherited from the parent, or a start point and bound.
#[derive(Clone, Copy)]
enum Hint {
    Inherited((f64, u32, u32)),
    Search { start: Option<u32>, upper: f64 },
}

impl Context<'_> {
    /// A cell over `items` (training ids first, `n_train` of them) with known `counts`.
    fn cell(
        &self,
        items: Vec<u32>,
        n_train: usize,
        counts: Vec<u32>,
        hint: Hint,
        route: Option<Arc<Route>>,
        scratch: &mut Scratch,
    ) -> Cell {
        let distinct = counts.iter().filter(|&&m| m > 0).count();
        let may_cut = distinct >= 2;
        let log_term = self.likelihood.term(&counts);
        let mut cell = Cell {
            items,
            n_train,
            counts,
            rate: 0.0,
            cuttable: false,
            diameter: None,
            centre: Vec::new(),
            extents: Vec::new(),
            log_term,
            route,
        };
        match self.cut_rate {
            CutRate::HalfDiameter if may_cut || self.rate_paused_cells => {
                let d = match hint {
                    Hint::Inherited(d) => d,
                    Hint::Search { start, upper } => {
                        diameter(&self.points, &cell.items, start, upper, scratch)
                    }
                };
                cell.diameter = Some(d);
                cell.rate = d.0 / 2.0;
            }
            CutRate::ExactThinning if may_cut => {
                let mut centre = Vec::with_capacity(self.points.dim());
                cell.rate = enclosing_ball(&self.points, cell.train(), &mut centre);
                cell.centre = centre;
            }
            CutRate::EnclosingBall if may_cut => match self.prior.kind() {
                PriorKind::Uniform => {
                    let mut centre = Vec::with_capacity(self.points.dim());
                    cell.rate = enclosing_ball(&self.points, &cell.items, &mut centre);
                    cell.centre = centre;
                }
                PriorKind::Mondrian => {
                    let (centre, extents) = bounding_box(&self.points, &cell.items);
                    cell.rate = 0.5
                        * extents
                            .iter()
                            .zip(self.prior.weights())
                            .map(|(e, w)| w * e)
                            .sum::<f64>();
                    cell.centre = centre;
                    cell.extents = extents;
                }
            },
            _ => {}
        }
        cell.cuttable = may_cut && cell.rate > 0.0;
        cell
    }

    /// The root cell: every training item, and the test items under transductive routing.
    pub(crate) fn root(&self, n_test_items: usize, scratch: &mut Scratch) -> Cell {
        let mut counts = vec![0u32; self.n_classes];
        for &label in self.labels {
            counts[label as usize] += 1;
        }
        let total = self.n_train + n_test_items;
        let items: Vec<u32> = (0..total as u32).collect();
        let hint = Hint::Search {
            start: None,
            upper: f64::INFINITY,
        };
        self.cell(items, self.n_train, counts, hint, None, scratch)
    }

    /// The two children of `cell` cut by `hyperplane`, given the projections of its training
    /// items (`projections[k]` of `cell.train()[k]`): t <= offset goes left. Test items (if any)
    /// are projected here with the hyperplane's own arithmetic.
    pub(crate) fn split(
        &self,
        cell: &Cell,
        hyperplane: Hyperplane,
        projections: &[f64],
        scratch: &mut Scratch,
    ) -> (Cell, Cell) {
        let offset = hyperplane.offset;
        let n_test = cell.items.len() - cell.n_train;
        let n_left_train = projections.iter().filter(|&&t| t <= offset).count();
        let mut left = Vec::with_capacity(n_left_train + n_test);
        let mut right = Vec::with_capacity(cell.n_train - n_left_train + n_test);
        let mut left_counts = vec![0u32; self.n_classes];
        for (&i, &t) in cell.train().iter().zip(projections) {
            if t <= offset {
                left.push(i);
                left_counts[self.labels[i as usize] as usize] += 1;
            } else {
                right.push(i);
            }
        }
        let (n_left, n_right) = (left.len(), right.len());
        for &i in cell.test() {
            if hyperplane.is_left(self.points.row(i)) {
                left.push(i);
            } else {
                right.push(i);
            }
        }
        let right_counts: Vec<u32> = cell
            .counts
            .iter()
            .zip(&left_counts)
            .map(|(a, b)| a - b)
            .collect();
        let (left_hint, right_hint) = self.child_hints(cell, &hyperplane);
        let hyperplane = Arc::new(hyperplane);
        let route = |is_left: bool| {
            Some(Arc::new(Route {
                parent: cell.route.clone(),
                hyperplane: hyperplane.clone(),
                left: is_left,
            }))
        };
        if n_test > 0 {
            left.shrink_to_fit();
            right.shrink_to_fit();
        }
        let l = self.cell(left, n_left, left_counts, left_hint, route(true), scratch);
        let r = self.cell(
            right,
            n_right,
            right_counts,
            right_hint,
            route(false),
            scratch,
        );
        (l, r)
    }

    /// Diameter hints for the children: a child holding both endpoints of the parent's diameter
    /// pair inherits it; otherwise its search starts from the endpoint it holds, bounded above by
    /// the parent's diameter.
    fn child_hints(&self, cell: &Cell, hyperplane: &Hyperplane) -> (Hint, Hint) {
        let Some((d, p, q)) = cell.diameter else {
            let free = Hint::Search {
                start: None,
                upper: f64::INFINITY,
            };
            return (free, free);
        };
        let p_left = hyperplane.is_left(self.points.row(p));
        let q_left = hyperplane.is_left(self.points.row(q));
        let search = |start| Hint::Search { start, upper: d };
        match (p_left, q_left) {
            (true, true) => (Hint::Inherited((d, p, q)), search(None)),
            (false, false) => (search(None), Hint::Inherited((d, p, q))),
            (true, false) => (search(Some(p)), search(Some(q))),
            (false, true) => (search(Some(q)), search(Some(p))),
        }
    }
}

/// The centre and per-axis extents of the box of `items` (non-empty).
fn bounding_box(points: &Points, items: &[u32]) -> (Vec<f64>, Vec<f64>) {
    let first = points.row(items[0]);
    let (mut lo, mut hi) = (first.to_vec(), first.to_vec());
    for &i in &items[1..] {
        for ((l, h), &x) in lo.iter_mut().zip(hi.iter_mut()).zip(points.row(i)) {
            *l = l.min(x);
            *h = h.max(x);
        }
    }
    let centre = lo.iter().zip(&hi).map(|(l, h)| 0.5 * (l + h)).collect();
    let extents = lo.iter().zip(&hi).map(|(l, h)| h - l).collect();
    (centre, extents)
}
