//! Random binning features for the Laplace kernel.
//!
//! Per repetition m and dimension d: width `δ_md ~ Gamma(shape 2, scale 1/λ)` (density
//! `λ² δ e^{−λδ} = δ·k''(δ)`) and shift `u_md ~ U[0, δ_md)`. A point's bin in repetition m is
//! `b_md(x) = ⌈(x_d − u_md)/δ_md⌉` for every d; the feature is the indicator of the D-dimensional
//! bin. Two points share a bin with probability `Π_d E[max(0, 1 − |Δ_d|/δ_d)] = exp(−λ‖Δ‖₁)`.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::HashTable;

use kernel_core::one_hot::{OneHotFeatures, ABSENT};
use kernel_core::{CoreError, FeatureMap, Features};
use ndarray::{Array2, ArrayView2};
use rand::Rng;
use rand_distr::{Distribution, Gamma};

use crate::error::{check_count, check_input, FeatureError};
use kernel_core::Lifetime;

/// The bins of one repetition seen so far: for each, the fitted point that created it and its
/// column, and a hash table of (hash, position). A candidate bin is compared by the creator's
/// key: from the keys of the current fit when the creator is among its points, else recomputed,
/// so D indices per bin are never stored. Nothing is allocated per bin; the hash has a fixed
/// seed, so runs take the same time.
#[derive(Debug, Clone, Default)]
struct BinTable {
    creators: Vec<u32>,
    columns: Vec<u32>,
    index: HashTable<(u64, u32)>,
}

impl PartialEq for BinTable {
    /// The same bins with the same columns (the hash table is derived from them).
    fn eq(&self, other: &Self) -> bool {
        self.creators == other.creators && self.columns == other.columns
    }
}

fn hash_key(key: &[u64]) -> u64 {
    FixedState::default().hash_one(key)
}

/// One repetition's grid and the points its bins were created by.
struct Grid<'a> {
    shifts: &'a [f64],
    widths: &'a [f64],
    /// The fitted points, row-major.
    fitted: &'a [f64],
}

impl Grid<'_> {
    /// The bin of `x` (D coordinates), written to `key`.
    fn bin(&self, x: &[f64], key: &mut [u64]) {
        bin_keys(x, self.shifts, self.widths, key);
    }

    /// The position in `table` of bin `key` (hash `hash`); `scratch` holds D indices. The keys
    /// of the fitted points from `batch_first` on are in `batch` (row-major), so a candidate
    /// created by one of them is compared without recomputing its key.
    fn find(
        &self,
        table: &BinTable,
        key: &[u64],
        hash: u64,
        batch: (&[u64], usize),
        scratch: &mut [u64],
    ) -> Option<usize> {
        let dim = key.len();
        let (batch, batch_first) = batch;
        table
            .index
            .find(hash, |&(h, p)| {
                h == hash && {
                    let row = table.creators[p as usize] as usize;
                    match row.checked_sub(batch_first) {
                        Some(r) if (r + 1) * dim <= batch.len() => {
                            &batch[r * dim..(r + 1) * dim] == key
                        }
                        _ => {
                            self.bin(&self.fitted[row * dim..(row + 1) * dim], scratch);
                            scratch == key
                        }
                    }
                }
            })
            .map(|&(_, p)| p as usize)
    }
}

/// The bin indices `⌈(x_d − u_d)/δ_d⌉` of one point as the bits of the (integral) doubles, `-0`
/// made `+0`: two points share a bin exactly when their bin indices agree, as with integer
/// indices (up to |index| < 2^63, beyond which an integer conversion would saturate).
#[inline(always)]
fn bin_keys_generic(x: &[f64], shifts: &[f64], widths: &[f64], key: &mut [u64]) {
    for (((k, &v), &u), &w) in key.iter_mut().zip(x).zip(shifts).zip(widths) {
        *k = (((v - u) / w).ceil() + 0.0).to_bits();
    }
}

/// [`bin_keys_generic`] compiled for AVX2 (packed division and rounding); the same IEEE
/// operations, so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn bin_keys_avx2(x: &[f64], shifts: &[f64], widths: &[f64], key: &mut [u64]) {
    bin_keys_generic(x, shifts, widths, key)
}

/// [`bin_keys_generic`], with AVX2 when the processor has it (checked once).
fn bin_keys(x: &[f64], shifts: &[f64], widths: &[f64], key: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor supports AVX2.
        return unsafe { bin_keys_avx2(x, shifts, widths, key) };
    }
    bin_keys_generic(x, shifts, widths, key)
}

/// A draw of M random grids and the bins seen so far (the feature columns).
#[derive(Debug, Clone, PartialEq)]
pub struct RandomBinning {
    /// `δ` (M × D).
    widths: Array2<f64>,
    /// `u` (M × D).
    shifts: Array2<f64>,
    /// Column of each (repetition, bin) seen when the features were built.
    columns: Vec<BinTable>,
    /// Every point given to [`Self::fit_transform`], row-major (the creators of the bins).
    fitted: Vec<f64>,
    n_columns: usize,
}

impl RandomBinning {
    /// Draws `n_repetitions` (M) grids for `dim`-dimensional inputs and lifetime λ > 0. Draw
    /// order: all M·D widths (m outer, d inner), then all shifts.
    pub fn sample<R: Rng + ?Sized>(
        dim: usize,
        n_repetitions: usize,
        lifetime: f64,
        rng: &mut R,
    ) -> Result<Self, FeatureError> {
        check_count("dimension", dim)?;
        check_count("n_repetitions", n_repetitions)?;
        // A Laplace-kernel lifetime, and > 0 besides: the widths are Gamma(2, 1/λ).
        let lifetime = Lifetime::new(lifetime)?.get();
        if lifetime == 0.0 {
            return Err(FeatureError::invalid(
                "lifetime",
                lifetime,
                "a lifetime > 0 for random binning (bin widths ~ Gamma(2, 1/lifetime))",
            ));
        }
        let gamma = Gamma::new(2.0, 1.0 / lifetime).map_err(|e| {
            FeatureError::invalid(
                "lifetime",
                format!("{lifetime} ({e})"),
                "a lifetime giving a valid Gamma(2, 1/lifetime)",
            )
        })?;
        let widths = Array2::from_shape_fn((n_repetitions, dim), |_| gamma.sample(rng));
        let shifts = widths.mapv(|w| rng.random::<f64>() * w);
        Ok(Self {
            widths,
            shifts,
            columns: vec![BinTable::default(); n_repetitions],
            fitted: Vec::new(),
            n_columns: 0,
        })
    }

    /// Number of repetitions M.
    pub fn n_repetitions(&self) -> usize {
        self.widths.nrows()
    }

    /// Number of feature columns created so far (distinct bins of the fitted points).
    pub fn n_columns(&self) -> usize {
        self.n_columns
    }

    /// Repetition `m`'s grid.
    fn grid(&self, m: usize) -> Grid<'_> {
        Grid {
            shifts: self.shifts.row(m).to_slice().expect("standard layout"),
            widths: self.widths.row(m).to_slice().expect("standard layout"),
            fitted: &self.fitted,
        }
    }

    /// Builds the features of `x`, creating a column for every new bin (ids on first sight,
    /// looping repetitions, then points). Use this on every point that may create bins.
    pub fn fit_transform(&mut self, x: ArrayView2<f64>) -> Result<OneHotFeatures, FeatureError> {
        check_input(x, self.widths.ncols())?;
        let (n, dim, m_total) = (x.nrows(), x.ncols(), self.n_repetitions());
        let first = (self.fitted.len() / dim) as u32;
        if first as usize + n > u32::MAX as usize {
            return Err(FeatureError::invalid_input(
                "number of fitted points",
                first as usize + n,
                "fewer than 2^32 points in all",
            ));
        }
        self.fitted.extend(x.iter());
        let mut out = vec![ABSENT; n * m_total];
        // One repetition's keys of the points being fitted.
        let (mut keys, mut scratch) = (vec![0u64; n * dim], vec![0u64; dim]);
        let mut tables = std::mem::take(&mut self.columns);
        let mut n_columns = self.n_columns;
        let points = &self.fitted[first as usize * dim..];
        for (m, table) in tables.iter_mut().enumerate() {
            let grid = self.grid(m);
            for i in 0..n {
                // Point i's key, next to those of the points before it (the only ones that can
                // have created a bin of this repetition in this call).
                grid.bin(
                    &points[i * dim..(i + 1) * dim],
                    &mut keys[i * dim..(i + 1) * dim],
                );
                let key = &keys[i * dim..(i + 1) * dim];
                let hash = hash_key(key);
                let batch = (keys.as_slice(), first as usize);
                let column = match grid.find(table, key, hash, batch, &mut scratch) {
                    Some(p) => table.columns[p],
                    None => {
                        let column = n_columns as u32;
                        let position = table.columns.len() as u32;
                        table.creators.push(first + i as u32);
                        table.columns.push(column);
                        table
                            .index
                            .insert_unique(hash, (hash, position), |&(h, _)| h);
                        n_columns += 1;
                        column
                    }
                };
                out[i * m_total + m] = column;
            }
        }
        self.columns = tables;
        self.n_columns = n_columns;
        OneHotFeatures::new(n, m_total, self.n_columns, out)
    }

    /// Features of `x` using only bins seen by [`Self::fit_transform`]: a point in an unseen bin has
    /// no feature for that repetition (fewer than M ones).
    pub fn transform(&self, x: ArrayView2<f64>) -> Result<OneHotFeatures, FeatureError> {
        check_input(x, self.widths.ncols())?;
        let (n, dim, m_total) = (x.nrows(), x.ncols(), self.n_repetitions());
        let mut out = vec![ABSENT; n * m_total];
        let x = x.as_standard_layout();
        let (mut key, mut scratch) = (vec![0u64; dim], vec![0u64; dim]);
        for (m, table) in self.columns.iter().enumerate() {
            let grid = self.grid(m);
            for (i, row) in x.rows().into_iter().enumerate() {
                grid.bin(row.as_slice().expect("standard layout"), &mut key);
                if let Some(p) = grid.find(table, &key, hash_key(&key), (&[], 0), &mut scratch) {
                    out[i * m_total + m] = table.columns[p];
                }
            }
        }
        OneHotFeatures::new(n, m_total, self.n_columns, out)
    }
}

impl FeatureMap for RandomBinning {
    /// The M repetitions (grids).
    fn n_blocks(&self) -> usize {
        self.n_repetitions()
    }

    /// [`RandomBinning::transform`]: only bins seen by [`RandomBinning::fit_transform`] are
    /// features, so call that on the training points first.
    fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError> {
        Ok(Features::OneHot(self.transform(x)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn same_bin_probability_is_laplace_in_one_dimension() {
        // Monte Carlo over many independent grids: P(same bin) = exp(−λ|Δ|).
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let lifetime = 3.0;
        let n_repetitions = 50_000;
        let mut map = RandomBinning::sample(1, n_repetitions, lifetime, &mut rng).unwrap();
        let x = array![[0.1], [0.15], [0.3], [0.6], [1.2]];
        let f = map.fit_transform(x.view()).unwrap();
        for j in 1..x.nrows() {
            let p = f.agreements(0, j, n_repetitions) as f64 / n_repetitions as f64;
            let exact = (-lifetime * (x[[j, 0]] - x[[0, 0]]).abs()).exp();
            let se = (exact * (1.0 - exact) / n_repetitions as f64)
                .sqrt()
                .max(1e-4);
            assert!(
                (p - exact).abs() < 4.0 * se,
                "pair {j}: {p} vs {exact} (se {se})"
            );
        }
    }

    #[test]
    fn unseen_test_bins_give_no_feature() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut map = RandomBinning::sample(1, 20, 50.0, &mut rng).unwrap();
        map.fit_transform(array![[0.0], [0.01]].view()).unwrap();
        let test = map.transform(array![[0.0], [100.0]].view()).unwrap();
        assert_eq!((0..20).filter(|&m| test.column(0, m).is_some()).count(), 20);
        assert_eq!((0..20).filter(|&m| test.column(1, m).is_some()).count(), 0);
    }

    #[test]
    fn feature_map_gives_the_bins_seen_when_fitting() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut map = RandomBinning::sample(2, 7, 2.0, &mut rng).unwrap();
        let train = array![[0.0, 0.0], [0.3, -0.2], [1.0, 2.0]];
        let fitted = map.fit_transform(train.view()).unwrap();
        let map: Box<dyn FeatureMap> = Box::new(map);
        assert_eq!(map.n_blocks(), 7);
        // The training points again: the very columns fit_transform gave them.
        assert_eq!(
            map.features(train.view()).unwrap(),
            Features::OneHot(fitted.clone())
        );
        // A new point: by brute force, its bin in grid m is the bin of a training point exactly
        // when the ceilings agree in every dimension.
        let (widths, shifts) = {
            let mut rng = ChaCha8Rng::seed_from_u64(8);
            let again = RandomBinning::sample(2, 7, 2.0, &mut rng).unwrap();
            (again.widths.clone(), again.shifts.clone())
        };
        let new = array![[0.1, 0.05], [50.0, 50.0]];
        let Features::OneHot(f) = map.features(new.view()).unwrap() else {
            panic!("binning features are one-hot")
        };
        let bin = |m: usize, x: ndarray::ArrayView1<f64>| -> Vec<f64> {
            (0..2)
                .map(|d| ((x[d] - shifts[[m, d]]) / widths[[m, d]]).ceil())
                .collect()
        };
        for i in 0..new.nrows() {
            for m in 0..7 {
                let owner =
                    (0..train.nrows()).find(|&j| bin(m, train.row(j)) == bin(m, new.row(i)));
                assert_eq!(f.column(i, m), owner.map(|j| fitted.row(j)[m]));
            }
        }
        assert!(map.features(array![[1.0]].view()).is_err());
    }

    #[test]
    fn bin_keys_agree_exactly_when_integer_bin_indices_do() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut q = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            -1e-300,
            1e-300,
            2.0_f64.powi(52) + 0.5,
        ];
        q.extend((0..4000).map(|_| ((rng.random::<f64>() - 0.5) * 64.0).round() / 4.0));
        let (n, d) = (q.len(), 1);
        let (shifts, widths) = (vec![0.0; d], vec![1.0; d]);
        let keys: Vec<u64> = q
            .iter()
            .map(|&v| {
                let mut k = [0u64];
                bin_keys(&[v], &shifts, &widths, &mut k);
                let mut g = [0u64];
                bin_keys_generic(&[v], &shifts, &widths, &mut g);
                assert_eq!(k, g, "the dispatched and generic code give the same bits");
                k[0]
            })
            .collect();
        for i in 0..n {
            for j in 0..n {
                let same_integer = q[i].ceil() as i64 == q[j].ceil() as i64;
                assert_eq!(keys[i] == keys[j], same_integer, "{} vs {}", q[i], q[j]);
            }
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert!(RandomBinning::sample(2, 5, 0.0, &mut rng).is_err());
        assert!(RandomBinning::sample(2, 0, 1.0, &mut rng).is_err());
        assert!(RandomBinning::sample(0, 5, 1.0, &mut rng).is_err());
        let mut map = RandomBinning::sample(2, 5, 1.0, &mut rng).unwrap();
        assert!(map.fit_transform(array![[1.0]].view()).is_err());
    }
}
