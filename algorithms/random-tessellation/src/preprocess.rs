//! Preprocessing of a train/test split, fitted on the training split (spec §8 and decision D4).
//!
//! The paper does not state how its gene-expression sets were reduced; spec §8 recommends, in
//! this order, each step optional in [`Preprocessing`]:
//!
//! 1. **top variance** (`top_variance = Some(k)`): keep the k columns (probes) of largest
//!    *training* variance; ties → the lower column index; the kept columns stay in their input
//!    order ([`Prepared::selected`]). `k` larger than the number of columns keeps them all.
//! 2. **PCA** (`pca = Some(k)`): centre the selected columns by their training means and
//!    project train and test on the first k principal axes of the training data. The axes come
//!    from the thin SVD `X_c = U S Vᵀ` of the centred training matrix (LAPACK `gesdd` through
//!    ndarray-linalg; no p × p covariance is formed, which matters for n ≪ p, e.g. 53 rows ×
//!    1,000 probes). **Sign convention**: each axis is flipped so that its loading of largest
//!    absolute value (the first such on ties) is positive, so the scores do not depend on the
//!    LAPACK build. **Effective k** = min(k, n − 1, p, numerical rank of `X_c`) — centred data
//!    have rank ≤ n − 1, and an axis of zero singular value would be an arbitrary direction —
//!    with the numerical rank the number of singular values above `max(n, p)·ε·s₁`. The clamp
//!    is silent: the number of output columns is the effective k. Explained variance of axis j:
//!    `s_j²/(n − 1)`; [`Prepared::explained_variance_ratio`] is `s_j² / Σ_i s_i²` over *all*
//!    axes, so the kept ratios are sorted descending and sum to at most 1.
//! 3. **scaling** ([`Scaling`]): min-max per output column to [0, 1], with the training minimum
//!    and maximum by default (test values may fall outside [0, 1]), or over train and test
//!    together as tess19 does ([`Scaling::MinMaxAll`], the transductive option of D4). A column
//!    whose range is zero is mapped to 0 everywhere (train and test): it carries no training
//!    information, and no NaN is produced.
//!
//! **Prior weights** ω of the weighted RTPs ([`WeightRule`], normalised to sum 1, one per
//! output column): uniform; the variance explained by each kept principal component (spec §8's
//! recommendation; needs PCA); or the training ANOVA F statistic of each output column
//! ([`anova_f`], the recommended fallback without PCA). The degenerate cases of F are ruled in
//! [`anova_f`] and [`WeightRule::AnovaF`]; no rule produces NaN or infinite weights.
//!
//! Every statistic (variances, means, axes, minima, maxima, F) uses the training rows only,
//! except the min-max range of [`Scaling::MinMaxAll`].

use std::collections::BTreeMap;

use ndarray::{Array1, Array2, ArrayView2, Axis};
use ndarray_linalg::{JobSvd, SVDDC};

use kernel_core::CoreError;

use crate::error::{invalid, RtfError};
use crate::input::{check_labelled, Columns};

/// The preprocessing steps; `Default` is min-max scaling with training statistics only.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Preprocessing {
    /// Keep the k columns of largest training variance (k ≥ 1; more than the number of
    /// columns keeps all).
    pub top_variance: Option<usize>,
    /// Project on the first k principal components of the (selected, training-centred)
    /// training data (k ≥ 1; clamped as described in the module docs).
    pub pca: Option<usize>,
    /// Final per-column scaling.
    pub scaling: Scaling,
}

/// Per-column scaling of the prepared data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Scaling {
    /// Min-max to [0, 1] with the training minimum and maximum (spec D4's default).
    #[default]
    MinMaxTrain,
    /// Min-max over train and test together (tess19; transductive).
    MinMaxAll,
    /// No scaling.
    None,
}

/// How the prior weights ω of the weighted RTPs are set (normalised to sum 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum WeightRule {
    /// ω_j = 1/d.
    #[default]
    Uniform,
    /// ω_j ∝ the variance explained by principal component j; requires `pca`.
    ExplainedVariance,
    /// ω_j ∝ the training ANOVA F statistic of output column j ([`anova_f`]). If some columns
    /// have F = +∞ (zero within-class variance, classes apart), they share the weight equally
    /// and the others get 0 (the limit of ω ∝ F); if every F is 0 (constant columns, or a
    /// design where F is undefined: fewer than two classes present, or no within-class degrees
    /// of freedom), the weights are uniform.
    AnovaF,
}

/// The prepared split.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// Training rows × output columns.
    pub train: Array2<f64>,
    /// Test rows × output columns.
    pub test: Array2<f64>,
    /// One prior weight per output column, summing to 1.
    pub weights: Vec<f64>,
    /// `s_j² / Σ_i s_i²` of each kept principal component, descending; empty without PCA.
    pub explained_variance_ratio: Vec<f64>,
    /// The input columns kept by `top_variance`, ascending (all columns without it).
    pub selected: Vec<usize>,
}

/// Prepares `(train, test)` as set by `pre` (statistics from the training split; see the
/// module docs) and computes the prior weights by `weights`. `labels` (in `0..n_classes`, one
/// per training row) are used by [`WeightRule::AnovaF`] and validated always.
pub fn prepare(
    train: ArrayView2<f64>,
    labels: &[u32],
    n_classes: usize,
    test: ArrayView2<f64>,
    pre: &Preprocessing,
    weights: WeightRule,
) -> Result<Prepared, RtfError> {
    check_labelled(train, labels, n_classes, Some(test), Columns::AtLeastOne)?;
    for (name, k) in [("top_variance", pre.top_variance), ("pca", pre.pca)] {
        if k == Some(0) {
            return Err(invalid(name, 0, "at least 1"));
        }
    }
    if weights == WeightRule::ExplainedVariance && pre.pca.is_none() {
        return Err(RtfError::ExplainedVarianceWithoutPca);
    }

    // 1. Top-variance selection.
    let selected = match pre.top_variance {
        Some(k) => top_variance_columns(train, k),
        None => (0..train.ncols()).collect(),
    };
    let (mut x_train, mut x_test) = if selected.len() == train.ncols() {
        (train.to_owned(), test.to_owned())
    } else {
        (
            train.select(Axis(1), &selected),
            test.select(Axis(1), &selected),
        )
    };

    // 2. PCA.
    let mut explained = Vec::new();
    let mut component_variance = Vec::new();
    if let Some(k) = pre.pca {
        let pca = Pca::fit(x_train.view(), k)?;
        x_train = pca.transform(x_train.view());
        x_test = pca.transform(x_test.view());
        explained = pca.explained_variance_ratio;
        component_variance = pca.explained_variance;
    }

    // 3. Scaling.
    match pre.scaling {
        Scaling::MinMaxTrain => min_max(&mut x_train, &mut x_test, false),
        Scaling::MinMaxAll => min_max(&mut x_train, &mut x_test, true),
        Scaling::None => {}
    }

    // 4. Weights.
    let d = x_train.ncols();
    let raw = match weights {
        WeightRule::Uniform => vec![1.0; d],
        WeightRule::ExplainedVariance => component_variance,
        WeightRule::AnovaF => {
            let f = anova_f(x_train.view(), labels, n_classes)?;
            if f.iter().any(|v| v.is_infinite()) {
                f.iter()
                    .map(|v| if v.is_infinite() { 1.0 } else { 0.0 })
                    .collect()
            } else {
                f
            }
        }
    };
    let weights = normalise(raw);
    let finite = |v: &f64| v.is_finite();
    if !(x_train.iter().all(finite)
        && x_test.iter().all(finite)
        && weights.iter().all(finite)
        && explained.iter().all(finite))
    {
        return Err(RtfError::NonFiniteOutput);
    }
    Ok(Prepared {
        train: x_train,
        test: x_test,
        weights,
        explained_variance_ratio: explained,
        selected,
    })
}

/// The indices of the `k` columns of `x` with the largest variance (ties → the lower index),
/// ascending; all columns when `k` ≥ the number of columns.
pub fn top_variance_columns(x: ArrayView2<f64>, k: usize) -> Vec<usize> {
    let var = column_variances(x);
    let mut order: Vec<usize> = (0..x.ncols()).collect();
    // Stable sort: equal variances keep the lower index first.
    order.sort_by(|&a, &b| var[b].total_cmp(&var[a]));
    order.truncate(k);
    order.sort_unstable();
    order
}

/// One-way ANOVA F statistic of each column of `x` for the groups given by `labels` (in
/// `0..n_classes`): `F = [SSB/(K − 1)] / [SSW/(N − K)]` with K the number of classes present
/// and N the rows. Rules for the degenerate cases (no NaN): a constant column has F = 0; a
/// column with zero within-class variance (SSW ≤ 1e-12·SST) and classes apart has F = +∞; if
/// F is undefined for the design (K < 2, or N − K < 1), every F is 0.
pub fn anova_f(x: ArrayView2<f64>, labels: &[u32], n_classes: usize) -> Result<Vec<f64>, RtfError> {
    check_labelled(x, labels, n_classes, None, Columns::AtLeastOne)?;
    let n = x.nrows();
    // Groups: the labels present, in a map so that a huge `n_classes` costs nothing.
    let mut group_of = BTreeMap::<u32, usize>::new();
    for &l in labels {
        let next = group_of.len();
        group_of.entry(l).or_insert(next);
    }
    let group: Vec<usize> = labels.iter().map(|l| group_of[l]).collect();
    let k = group_of.len();
    let mut counts = vec![0usize; k];
    for &g in &group {
        counts[g] += 1;
    }
    if k < 2 || n <= k {
        return Ok(vec![0.0; x.ncols()]);
    }
    let mut f = Vec::with_capacity(x.ncols());
    for col in x.columns() {
        let (lo, hi) = col
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        if lo == hi {
            f.push(0.0);
            continue;
        }
        let mean = col.sum() / n as f64;
        let mut sums = vec![0.0; k];
        for (&v, &g) in col.iter().zip(&group) {
            sums[g] += v;
        }
        let means: Vec<f64> = sums
            .iter()
            .zip(&counts)
            .map(|(&s, &c)| s / c as f64)
            .collect();
        let ssb: f64 = means
            .iter()
            .zip(&counts)
            .map(|(&m, &c)| c as f64 * (m - mean) * (m - mean))
            .sum();
        let ssw: f64 = col
            .iter()
            .zip(&group)
            .map(|(&v, &g)| {
                let r = v - means[g];
                r * r
            })
            .sum();
        let sst = ssb + ssw;
        if ssw <= 1e-12 * sst {
            f.push(f64::INFINITY);
        } else {
            f.push((ssb / (k - 1) as f64) / (ssw / (n - k) as f64));
        }
    }
    Ok(f)
}

/// A PCA fitted on training rows.
struct Pca {
    mean: Array1<f64>,
    /// Kept axes, one per row (k × p), sign-fixed.
    axes: Array2<f64>,
    explained_variance: Vec<f64>,
    explained_variance_ratio: Vec<f64>,
}

impl Pca {
    fn fit(x: ArrayView2<f64>, k: usize) -> Result<Self, RtfError> {
        let (n, p) = x.dim();
        if n < 2 {
            return Err(RtfError::PcaTooFewRows { rows: n });
        }
        // n >= 2, so the mean exists.
        let mean = x
            .mean_axis(Axis(0))
            .ok_or(RtfError::PcaTooFewRows { rows: n })?;
        let centred = &x - &mean;
        // Inputs near f64::MAX can overflow the mean; LAPACK must not see inf or NaN.
        if !centred.iter().all(|v| v.is_finite()) {
            return Err(RtfError::NonFiniteOutput);
        }
        let (_, s, vt) = centred
            .svddc(JobSvd::Some)
            .map_err(|e| svd_failed(e.to_string()))?;
        let vt = vt.ok_or_else(|| svd_failed("no right singular vectors".into()))?;
        if !(s.iter().all(|v| v.is_finite()) && vt.iter().all(|v| v.is_finite())) {
            return Err(RtfError::NonFiniteOutput);
        }
        let s_max = s.iter().copied().fold(0.0, f64::max);
        let tol = s_max * n.max(p) as f64 * f64::EPSILON;
        let rank = s.iter().filter(|&&v| v > tol).count();
        if rank == 0 {
            return Err(RtfError::PcaNoVariance);
        }
        let keep = k.min(n - 1).min(p).min(rank);
        let total: f64 = s.iter().map(|v| v * v).sum();
        let mut axes = vt.slice(ndarray::s![0..keep, ..]).to_owned();
        for mut axis in axes.rows_mut() {
            let mut best = 0;
            for (j, v) in axis.iter().enumerate() {
                if v.abs() > axis[best].abs() {
                    best = j;
                }
            }
            if axis[best] < 0.0 {
                axis.mapv_inplace(|v| -v);
            }
        }
        let explained_variance = s
            .iter()
            .take(keep)
            .map(|v| v * v / (n - 1) as f64)
            .collect();
        let explained_variance_ratio = s.iter().take(keep).map(|v| v * v / total).collect();
        Ok(Pca {
            mean,
            axes,
            explained_variance,
            explained_variance_ratio,
        })
    }

    fn transform(&self, x: ArrayView2<f64>) -> Array2<f64> {
        (&x - &self.mean).dot(&self.axes.t())
    }
}

fn svd_failed(message: String) -> RtfError {
    RtfError::Core(CoreError::Solve {
        what: "PCA's SVD (LAPACK gesdd)",
        message,
    })
}

/// Per-column variances (divisor n; only their order is used).
fn column_variances(x: ArrayView2<f64>) -> Vec<f64> {
    let n = x.nrows().max(1) as f64;
    x.columns()
        .into_iter()
        .map(|c| {
            let m = c.sum() / n;
            c.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n
        })
        .collect()
}

/// Min-max scaling of each column with the training range (`all = false`) or the range of
/// train and test together; a zero range maps the column to 0. Computed on halves so that a
/// range beyond `f64::MAX` cannot overflow.
fn min_max(train: &mut Array2<f64>, test: &mut Array2<f64>, all: bool) {
    for j in 0..train.ncols() {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        let mut see = |v: f64| {
            lo = lo.min(v);
            hi = hi.max(v);
        };
        train.column(j).iter().for_each(|&v| see(v));
        if all {
            test.column(j).iter().for_each(|&v| see(v));
        }
        let half_range = 0.5 * hi - 0.5 * lo;
        let map = |v: f64| {
            if half_range > 0.0 {
                (0.5 * v - 0.5 * lo) / half_range
            } else {
                0.0
            }
        };
        train.column_mut(j).mapv_inplace(map);
        test.column_mut(j).mapv_inplace(map);
    }
}

/// Normalises non-negative finite weights to sum 1; uniform when they sum to 0.
fn normalise(raw: Vec<f64>) -> Vec<f64> {
    let d = raw.len();
    let sum: f64 = raw.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        raw.into_iter().map(|v| v / sum).collect()
    } else {
        vec![1.0 / d as f64; d]
    }
}
