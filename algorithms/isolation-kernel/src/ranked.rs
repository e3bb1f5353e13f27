//! φ of blocks of rows through a forest of isolation trees by bit vectors of candidate
//! leaves (QuickScorer, Lucchese et al., SIGIR 2015) whose comparisons are made on the ranks of
//! the values among the forest's splits, 16 rows in one comparison of 16-bit lanes.
//!
//! **Ranks.** With S_a the sorted distinct splits of the forest on attribute a and, for a value
//! x, rank_a(x) = #{s ∈ S_a : s ≤ x}: x < s ⟺ rank_a(x) ≤ pos(s), where pos(s) = #{s' ∈ S_a :
//! s' < s} is the place of s in S_a (if x < s, every split ≤ x is below s; if x ≥ s, the
//! splits ≤ x are s and all those below it, pos(s) + 1 of them at least). So a row's ranks,
//! found once per attribute, decide every split node of every tree exactly as its values do:
//! the same leaves as the walk. Values must not be NaN (rows are checked as they come in).
//!
//! **Finding a rank.** The splits of an attribute are cut into buckets by a monotone function
//! of the value (subtract, scale, clamp, truncate: each step keeps the order), and each bucket
//! knows how many splits lie in the buckets before it: a split in a later bucket than x's is
//! above x, one in an earlier bucket below it, so the rank is that count plus the splits of
//! x's own bucket that are ≤ x: one comparison where the bucket holds at most one split (most
//! do), a scan where it holds more.
//!
//! **Bit vectors.** A tree of at most [`MAX_LEAVES`] leaves keeps, per row, the set of leaves
//! the row can still reach, in 16-bit chunks; a split node whose left test fails clears the
//! leaves of its left subtree. The row's leaf is the lowest leaf left (see
//! [`IsolationTree::top`]). A node clears leaves in one to four chunks; the nodes of a tree are
//! kept in runs by the chunks they touch, so each run's loop updates only those (the order of
//! the ANDs does not change the result).
//!
//! **Larger trees.** A tree of more than [`MAX_LEAVES`] leaves is cut at depth [`TOP_DEPTH`]:
//! its top (at most 31 split nodes) finds each row's exit, a node at that depth or a leaf above
//! it, by the same bit vectors, and the row walks on from there ([`IsolationTree::walk_group`]
//! on its values): [`TOP_DEPTH`] fewer levels of walk (ψ = 256 with the height limit ⌈log₂ ψ⌉:
//! 3 of 8), and only the tops' splits are ranked.

use crate::iforest::{densify_block, IsolationTree, Top, TopSplit, LANES};
use crate::input::{Rows, DENSIFY_LIMIT};

/// Trees of at most this many leaves are mapped by bit vectors alone (four 16-bit chunks a row).
pub(crate) const MAX_LEAVES: usize = 64;

/// Larger trees: the depth of the top found by bit vectors (at most 2^5 = 32 exits, two chunks),
/// the walk going on below. On the Zen 3 (criterion `mapping_block`, 10,000 rows × 100 trees,
/// the authors' trees, runs of the two builds alternated): ψ = 256 9.5-14 → 7.5-10 ms, ψ = 1024
/// 12.6-15 → 10-12 ms (dense 22-d); depths 4 and 6 measured the same as 5.
const TOP_DEPTH: usize = 5;

/// The most distinct splits one attribute may have: ranks are compared as `i16`.
const MAX_SPLITS: usize = i16::MAX as usize;

/// Buckets per split of an attribute (rounded up to a power of two), so that few buckets hold
/// more than one split.
const BUCKETS_PER_SPLIT: usize = 8;

/// Bytes of ranks of a block of rows mapped through every tree before the next block: the
/// block stays in L1 (32 KiB on the Zen 3 and Zen 4 measured) beside the tree being read.
const BLOCK_BYTES: usize = 16 * 1024;

/// Sixteen 16-bit lanes, aligned for one vector load: a group's ranks of one attribute, or one
/// node's rank limit or leaf chunk repeated in every lane.
#[repr(C, align(32))]
#[derive(Debug, Clone, Copy)]
struct Lanes([i16; LANES]);

/// The sorted distinct splits on one attribute and the bucket index into them.
#[derive(Debug, Clone)]
struct AttributeRanks {
    /// S_a in increasing order, then one NaN (no value is ≤ NaN, so a rank stops there).
    splits: Vec<f64>,
    /// The bucket of x is `(x − lo)·scale` clamped to `[0, last]`, truncated.
    lo: f64,
    scale: f64,
    last: f64,
    /// Per bucket b, the splits in the buckets before b, and [`OVERFULL`] where b holds more
    /// than one split.
    starts: Vec<u16>,
}

/// The flag of a bucket of more than one split in [`AttributeRanks::starts`].
const OVERFULL: u16 = 1 << 15;

impl AttributeRanks {
    /// The ranks of the splits `splits` (any order, repeats allowed, none NaN; at most
    /// [`MAX_SPLITS`] distinct).
    fn new(mut splits: Vec<f64>) -> Self {
        splits.sort_by(f64::total_cmp);
        splits.dedup();
        let n = splits.len();
        let (lo, hi) = (splits[0], splits[n - 1]);
        let buckets = (BUCKETS_PER_SPLIT * n).next_power_of_two();
        let scale = buckets as f64 / (hi - lo);
        let mut ranks = AttributeRanks {
            splits,
            lo,
            scale: if scale.is_finite() { scale } else { 0.0 },
            last: (buckets - 1) as f64,
            starts: vec![0; buckets],
        };
        // Occupancy per bucket, then the counts before each.
        let mut counts = vec![0usize; buckets];
        for &s in &ranks.splits {
            counts[ranks.bucket(s)] += 1;
        }
        let mut before = 0;
        for (start, &count) in ranks.starts.iter_mut().zip(&counts) {
            *start = before as u16 | if count > 1 { OVERFULL } else { 0 };
            before += count;
        }
        ranks.splits.push(f64::NAN);
        ranks
    }

    /// The bucket of `x`: non-decreasing in `x` (each operation is monotone; a NaN product, which
    /// only a zero scale times an infinite difference gives, goes to bucket 0 as every other
    /// value does then).
    #[inline(always)]
    fn bucket(&self, x: f64) -> usize {
        let b = ((x - self.lo) * self.scale).max(0.0).min(self.last);
        // SAFETY: b is in [0, last] (not NaN: max(NaN, 0) is 0), and last < 2^31.
        unsafe { b.to_int_unchecked::<u32>() as usize }
    }

    /// rank_a(x) = #{s ∈ S_a : s ≤ x}, for `x` not NaN.
    #[inline(always)]
    fn rank(&self, x: f64) -> i16 {
        // SAFETY: the bucket is at most `last`, the index of the last of `starts`; a bucket's
        // start counts splits, at most all n of them, and `splits` holds n + 1 values.
        let start = unsafe { *self.starts.get_unchecked(self.bucket(x)) };
        let r = usize::from(start & !OVERFULL);
        // A bucket of one split at most: that split, or a later bucket's (above x), or the NaN.
        let one = r + usize::from(unsafe { *self.splits.get_unchecked(r) } <= x);
        if start & OVERFULL == 0 {
            return one as i16;
        }
        // The NaN at index n stops the scan.
        let mut r = r;
        while self.splits[r] <= x {
            r += 1;
        }
        r as i16
    }

    /// pos(s) = #{s' ∈ S_a : s' < s} of a split `s` of the attribute.
    fn position(&self, s: f64) -> i16 {
        self.splits[..self.splits.len() - 1].partition_point(|&v| v < s) as i16
    }
}

/// The split nodes of one tree whose left subtrees lie in the same chunks of leaves.
#[derive(Debug, Clone)]
struct Run {
    /// The first and last chunk of 16 leaves the run's nodes clear leaves in.
    first: usize,
    last: usize,
    /// Per node, its attribute.
    attrs: Vec<u32>,
    /// Per node, `2 + last − first` vectors: its pos(s) in every lane, then the leaves of its
    /// left subtree in chunk first, …, last (the bits of each chunk in every lane).
    vectors: Vec<Lanes>,
}

/// One tree in the form the bit vectors read.
#[derive(Debug, Clone)]
struct RankedTree {
    runs: Vec<Run>,
    /// A tree cut at [`TOP_DEPTH`]: the node of each exit, where the walk goes on, and the
    /// steps of that walk (the tree's depth below the cut); `None`: the exits are the leaves.
    exits: Option<(Vec<u32>, usize)>,
}

/// A forest of isolation trees in the form the bit vectors read (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct RankedForest {
    dim: usize,
    /// Per attribute, the ranks of its splits (`None`: no node splits on it).
    attributes: Vec<Option<AttributeRanks>>,
    /// Per attribute, rank_a(0) in every lane (the absent entries of sparse rows).
    zero_ranks: Vec<Lanes>,
    /// Chunks of 16 exits a row: 2 (at most 32 exits a tree) or 4.
    chunks: usize,
    trees: Vec<RankedTree>,
}

impl RankedForest {
    /// The ranked form of `trees` for rows of `dim` columns, or `None` where the bit vectors do
    /// not apply: rows of more than `DENSIFY_LIMIT` columns (mapped row by row, so no table of
    /// `dim` entries is made for them), an attribute of more than 32,767 distinct splits (in the
    /// trees' tops), or an attribute at or above `dim`.
    pub(crate) fn new(trees: &[IsolationTree], dim: usize) -> Option<Self> {
        if dim > DENSIFY_LIMIT {
            return None;
        }
        // Each tree's top, and for a cut tree the steps of the walk below it.
        let tops: Vec<(Top, Option<usize>)> = trees
            .iter()
            .map(|tree| {
                if tree.n_leaves() <= MAX_LEAVES {
                    (tree.top(usize::MAX), None)
                } else {
                    (tree.top(TOP_DEPTH), Some(tree.depth() - TOP_DEPTH))
                }
            })
            .collect();
        let exits = tops
            .iter()
            .map(|(top, _)| top.exits.len())
            .max()
            .unwrap_or(1);
        let mut splits_of: Vec<Vec<f64>> = vec![Vec::new(); dim];
        for split in tops.iter().flat_map(|(top, _)| &top.splits) {
            splits_of.get_mut(split.attr as usize)?.push(split.split);
        }
        let attributes: Vec<Option<AttributeRanks>> = splits_of
            .into_iter()
            .map(|s| (!s.is_empty()).then(|| AttributeRanks::new(s)))
            .collect();
        if attributes
            .iter()
            .flatten()
            .any(|a| a.splits.len() - 1 > MAX_SPLITS)
        {
            return None;
        }
        let zero_ranks = attributes
            .iter()
            .map(|a| Lanes([a.as_ref().map_or(0, |a| a.rank(0.0)); LANES]))
            .collect();
        let trees = tops
            .into_iter()
            .map(|(top, steps)| {
                let mut runs: Vec<Run> = Vec::new();
                for TopSplit {
                    attr: a,
                    split: s,
                    lo,
                    hi,
                } in top.splits
                {
                    let (first, last) = (lo as usize / LANES, (hi as usize - 1) / LANES);
                    let run = match runs.iter().position(|r| (r.first, r.last) == (first, last)) {
                        Some(k) => &mut runs[k],
                        None => {
                            runs.push(Run {
                                first,
                                last,
                                attrs: Vec::new(),
                                vectors: Vec::new(),
                            });
                            runs.last_mut().unwrap()
                        }
                    };
                    let left = ((1u64 << (hi - lo)) - 1) << lo;
                    let ranks = attributes[a as usize].as_ref().unwrap();
                    run.attrs.push(a);
                    run.vectors.push(Lanes([ranks.position(s); LANES]));
                    for c in first..=last {
                        run.vectors
                            .push(Lanes([(left >> (LANES * c)) as u16 as i16; LANES]));
                    }
                }
                RankedTree {
                    runs,
                    exits: steps.map(|steps| (top.exits, steps)),
                }
            })
            .collect();
        Some(RankedForest {
            dim,
            attributes,
            zero_ranks,
            chunks: if exits <= 2 * LANES { 2 } else { 4 },
            trees,
        })
    }

    /// What `sink` asks for of the rows `ids` of `rows` through `trees` (those the forest was
    /// made from): their φ(x) (`ids.len()` × t, row-major) or their weights' sums; `false`
    /// (nothing written) where the processor lacks the vectors the route needs (AVX2; AVX-512
    /// for sums with ψ ≤ [`SMALL_PSI`]). `rows` must be valid, of the forest's dimension, every id
    /// below its row count, the sink's buffers of the right lengths and every leaf of a tree
    /// below the sink's ψ.
    pub(crate) fn leaves_of_rows(
        &self,
        trees: &[IsolationTree],
        rows: Rows,
        ids: &[usize],
        sink: &mut Sink,
    ) -> bool {
        let t = self.trees.len();
        assert!(
            rows.dim() == self.dim
                && trees.len() == t
                && match sink {
                    Sink::Leaves(out) => out.len() == ids.len() * t,
                    Sink::Sums { w, psi, out } => w.len() == t * *psi && out.len() == ids.len(),
                }
        );
        let mut mapped = true;
        match sink {
            Sink::Leaves(_) => map_block(self, trees, rows, ids, sink, &mut mapped),
            Sink::Sums { psi, .. } if *psi <= SMALL_PSI => {
                sum_small_block(self, trees, rows, ids, sink, &mut mapped)
            }
            Sink::Sums { .. } => sum_block(self, trees, rows, ids, sink, &mut mapped),
        }
        mapped
    }

    /// The ranks of the rows `ids` (at most whole groups of [`LANES`]) into `block`: row p's
    /// rank of attribute a at `block[p / LANES · dim + a][p % LANES]` (attributes without
    /// splits are left as they are: no node reads them).
    fn rank_rows(&self, rows: Rows, ids: &[usize], block: &mut [Lanes]) {
        let dim = self.dim;
        match rows {
            // A group's rows attribute by attribute (one attribute's buckets at a time).
            Rows::Dense(x) if x.is_standard_layout() => {
                let values = x.as_slice().expect("a standard layout");
                for (ids, group) in ids.chunks(LANES).zip(block.chunks_exact_mut(dim)) {
                    let mut rows = [&values[..0]; LANES];
                    for (row, &i) in rows.iter_mut().zip(ids) {
                        *row = &values[i * dim..][..dim];
                    }
                    for (a, (lanes, ranks)) in group.iter_mut().zip(&self.attributes).enumerate() {
                        if let Some(ranks) = ranks {
                            for (lane, row) in lanes.0.iter_mut().zip(&rows[..ids.len()]) {
                                *lane = ranks.rank(row[a]);
                            }
                        }
                    }
                }
            }
            Rows::Dense(x) => {
                for (p, &i) in ids.iter().enumerate() {
                    let group = &mut block[p / LANES * dim..][..dim];
                    for ((lanes, ranks), &v) in group.iter_mut().zip(&self.attributes).zip(x.row(i))
                    {
                        if let Some(ranks) = ranks {
                            lanes.0[p % LANES] = ranks.rank(v);
                        }
                    }
                }
            }
            // rank_a(0) first, then each row's non-zeros only (a9a: 14 of 123).
            Rows::Sparse(x) => {
                for group in block.chunks_exact_mut(dim) {
                    group.copy_from_slice(&self.zero_ranks);
                }
                debug_assert_eq!(self.attributes.len(), dim);
                for (p, &i) in ids.iter().enumerate() {
                    let group = &mut block[p / LANES * dim..][..dim];
                    let row = x.row(i);
                    for (&a, &v) in row.indices().iter().zip(row.values()) {
                        // SAFETY: a < dim, the length of `group` and of `attributes` (a valid
                        // CSR row of the forest's dimension, asserted by the caller).
                        let (lanes, ranks) = unsafe {
                            (
                                group.get_unchecked_mut(a as usize),
                                self.attributes.get_unchecked(a as usize),
                            )
                        };
                        if let Some(ranks) = ranks {
                            lanes.0[p % LANES] = ranks.rank(v);
                        }
                    }
                }
            }
        }
    }

    /// [`Self::leaves_of_rows`] by AVX2 intrinsics: the rows' ranks a block at a time (and
    /// their values, where trees are cut), then every tree over the whole block, two groups of
    /// 16 rows at a time (each node's vectors read once for both), the rows of a cut tree
    /// walking on from their exits, the leaves kept a group and a tree to a cache line and
    /// written out row by row at the end of the block (`MODE` [`LEAVES`], [`Sink::Leaves`]); or
    /// ([`SUMS`], [`Sink::Sums`]) each row's weight in a tree added to its sum as soon as the
    /// tree has found the group's leaves, while the tree's ψ weights are in L1, by loads, or
    /// ([`SMALL_SUMS`], ψ ≤ [`SMALL_PSI`]) by permutes of the weights held in registers
    /// ([`add_small_weights`]), and the sums written out at the end of the block. Inlined, with
    /// the functions below it, into each tier of [`map_block`], [`sum_block`] and
    /// [`sum_small_block`], so compiled for that tier's instruction set; call only from one of
    /// them.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn leaves_of_rows_simd<const MODE: u8>(
        &self,
        trees: &[IsolationTree],
        rows: Rows,
        ids: &[usize],
        sink: &mut Sink,
    ) {
        let (t, dim) = (self.trees.len(), self.dim);
        // Whether some tree is cut: its rows' values are then needed for the walks.
        let walks = self.trees.iter().any(|tree| tree.exits.is_some());
        let groups = (BLOCK_BYTES / (dim * std::mem::size_of::<Lanes>())).max(2);
        let mut scratch = SCRATCH.take();
        let Scratch {
            block,
            values,
            leaves,
            sums,
        } = &mut scratch;
        block.resize(groups * dim, Lanes([0; LANES]));
        // The rows' values for the walks below the cut trees' tops.
        values.resize(if walks { groups * LANES * dim } else { 0 }, 0.0);
        // leaves[g · t + b]: the leaves of group g's rows in tree b.
        leaves.resize(groups * t, Leaves([0; LANES]));
        let per_block = groups * LANES;
        let (w_all, psi): (&[f64], usize) = match sink {
            Sink::Sums { w, psi, .. } => (w, *psi),
            Sink::Leaves(_) => (&[], 0),
        };
        let mut table = SmallTable([0.0; SMALL_PSI]);
        for (first, ids) in ids.chunks(per_block).enumerate() {
            let first = first * per_block;
            let n_groups = ids.len().div_ceil(LANES);
            if MODE != LEAVES {
                sums.clear();
                sums.resize(n_groups * LANES, 0.0);
            }
            let block = &mut block[..n_groups * dim];
            self.rank_rows(rows, ids, block);
            if walks {
                densify_block(rows, ids, &mut values[..n_groups * LANES * dim]);
            }
            for (b, (tree, ranked)) in trees.iter().zip(&self.trees).enumerate() {
                // Small sums: the tree's ψ ≤ 32 weights (zeros after them, never overwritten).
                if MODE == SMALL_SUMS {
                    table.0[..psi].copy_from_slice(&w_all[b * psi..][..psi]);
                }
                let mut g = 0;
                while g < n_groups {
                    let pair = usize::from(g + 1 < n_groups) + 1;
                    // SAFETY: AVX2 (the entry point's target); every run's attributes are below
                    // dim (checked when the forest was made), the length of each group.
                    let exits = unsafe {
                        if pair == 2 {
                            let groups = [&block[g * dim..][..dim], &block[(g + 1) * dim..][..dim]];
                            match self.chunks {
                                2 => exit_leaves::<2, 2>(&ranked.runs, groups),
                                _ => exit_leaves::<4, 2>(&ranked.runs, groups),
                            }
                        } else {
                            let groups = [&block[g * dim..][..dim]];
                            let [one] = match self.chunks {
                                2 => exit_leaves::<2, 1>(&ranked.runs, groups),
                                _ => exit_leaves::<4, 1>(&ranked.runs, groups),
                            };
                            [one, one]
                        }
                    };
                    for (h, exits) in exits.iter().take(pair).enumerate() {
                        let found = match &ranked.exits {
                            None => *exits,
                            Some((nodes, steps)) => {
                                let mut k = [0usize; LANES];
                                for (k, &e) in k.iter_mut().zip(&exits.0) {
                                    // An exit past the last only in padding lanes (stale ranks).
                                    *k = nodes.get(e as usize).map_or(0, |&k| k as usize);
                                }
                                let group = &values[(g + h) * LANES * dim..][..LANES * dim];
                                tree.walk_group(group, &mut k, Some(*steps));
                                let mut leaves = Leaves([0; LANES]);
                                for (leaf, &k) in leaves.0.iter_mut().zip(&k) {
                                    *leaf = tree.leaf_id(k);
                                }
                                leaves
                            }
                        };
                        if MODE == SMALL_SUMS {
                            // SAFETY: AVX-512 (the only tier that instantiates this mode).
                            unsafe {
                                add_small_weights(
                                    &found,
                                    &table,
                                    &mut sums[(g + h) * LANES..][..LANES],
                                )
                            };
                        } else if MODE == SUMS {
                            let w = &w_all[b * psi..][..psi];
                            let sums = &mut sums[(g + h) * LANES..][..LANES];
                            for (sum, &leaf) in sums.iter_mut().zip(&found.0) {
                                // Every leaf is below ψ (a padding lane's too: a leaf of
                                // stale ranks); the minimum only spares a bounds check.
                                *sum += w[(leaf as usize).min(psi - 1)];
                            }
                        } else {
                            leaves[(g + h) * t + b] = found;
                        }
                    }
                    g += pair;
                }
            }
            match sink {
                Sink::Leaves(out) => {
                    let out = &mut out[first * t..][..ids.len() * t];
                    for (group, out) in leaves.chunks_exact(t).zip(out.chunks_mut(LANES * t)) {
                        // SAFETY: AVX2 (the entry point's target).
                        unsafe { write_rows(group, out, t) };
                    }
                }
                Sink::Sums { out, .. } => {
                    out[first..][..ids.len()].copy_from_slice(&sums[..ids.len()]);
                }
            }
        }
        SCRATCH.set(scratch);
    }
}

/// [`RankedForest::leaves_of_rows_simd`] making `MODE`'s output, as the body of the tiers of
/// [`map_block`] ([`LEAVES`]), [`sum_block`] ([`SUMS`]) and [`sum_small_block`] ([`SMALL_SUMS`]).
///
/// # Safety
/// Only through a tier compiled for AVX2 or wider (AVX-512 F, VL, BW for [`SMALL_SUMS`], with
/// ψ ≤ [`SMALL_PSI`]), with the arguments `leaves_of_rows` checks.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn block_simd<const MODE: u8>(
    forest: &RankedForest,
    trees: &[IsolationTree],
    rows: Rows<'_>,
    ids: &[usize],
    sink: &mut Sink<'_>,
    _mapped: &mut bool,
) {
    // SAFETY: the caller's promise.
    unsafe { forest.leaves_of_rows_simd::<MODE>(trees, rows, ids, sink) }
}

/// What [`RankedForest::leaves_of_rows_simd`] makes: leaves, sums, sums from a small table.
#[cfg(target_arch = "x86_64")]
const LEAVES: u8 = 0;
#[cfg(target_arch = "x86_64")]
const SUMS: u8 = 1;
#[cfg(target_arch = "x86_64")]
const SMALL_SUMS: u8 = 2;

/// The most weights a tree may have for [`sum_small_block`]: four AVX-512 registers.
pub(crate) const SMALL_PSI: usize = 32;

/// One tree's weights for [`add_small_weights`], zeros past ψ.
#[cfg(target_arch = "x86_64")]
#[repr(C, align(64))]
struct SmallTable([f64; SMALL_PSI]);

/// Adds to `sums` (16 rows') each row's weight in `table` at its leaf in `found` (each below
/// 32; only the low five bits are read), by two-table permutes instead of sixteen loads.
///
/// # Safety
/// AVX-512 F (the caller's target).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn add_small_weights(found: &Leaves, table: &SmallTable, sums: &mut [f64]) {
    use std::arch::x86_64::*;
    debug_assert_eq!(sums.len(), LANES);
    // SAFETY: aligned 64-byte loads of the table's four lines and the leaves' one; sums holds
    // 16 values (two unaligned 8-value loads and stores).
    unsafe {
        let t = table.0.as_ptr();
        let (t0, t1, t2, t3) = (
            _mm512_load_pd(t),
            _mm512_load_pd(t.add(8)),
            _mm512_load_pd(t.add(16)),
            _mm512_load_pd(t.add(24)),
        );
        let leaves = _mm512_load_si512(found.0.as_ptr().cast());
        let halves = [
            _mm512_cvtepu32_epi64(_mm512_castsi512_si256(leaves)),
            _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64::<1>(leaves)),
        ];
        for (k, ix) in halves.into_iter().enumerate() {
            let low = _mm512_permutex2var_pd(t0, ix, t1);
            let high = _mm512_permutex2var_pd(t2, ix, t3);
            let upper = _mm512_test_epi64_mask(ix, _mm512_set1_epi64(16));
            let w = _mm512_mask_blend_pd(upper, low, high);
            let s = sums.as_mut_ptr().add(8 * k);
            _mm512_storeu_pd(s, _mm512_add_pd(_mm512_loadu_pd(s), w));
        }
    }
}

/// No vector unit to map with: nothing written, `mapped` false.
fn map_block_none(
    _forest: &RankedForest,
    _trees: &[IsolationTree],
    _rows: Rows<'_>,
    _ids: &[usize],
    _sink: &mut Sink<'_>,
    mapped: &mut bool,
) {
    *mapped = false;
}

/// The entry points of [`block_simd`]: one `widest_vectors!` dispatch per mode, each with the
/// signature of [`map_block_none`], its fallback.
macro_rules! block_entry {
    ($(#[$meta:meta])* $name:ident = $mode:ident; $(tier $tier:ident = $feature:literal if $($detect:tt),+;)+) => {
        #[cfg(target_arch = "x86_64")]
        kernel_core::widest_vectors! {
            $(#[$meta])*
            fn $name(
                forest: &RankedForest,
                trees: &[IsolationTree],
                rows: Rows<'_>,
                ids: &[usize],
                sink: &mut Sink<'_>,
                mapped: &mut bool,
            );
            body block_simd::<$mode>;
            $(tier $tier = $feature if $($detect),+;)+
            fallback map_block_none;
        }
    };
}

block_entry! {
    /// The block map of [`RankedForest::leaves_of_rows`] with AVX-512 (F, VL, BW: the same AVX2
    /// intrinsics, each node's `andnot(and)` then fused into one `vpternlog`) or AVX2, else
    /// nothing (`mapped` set false).
    map_block = LEAVES;
    tier map_block_avx512 = "avx2,avx512f,avx512vl,avx512bw" if "avx2", "avx512f", "avx512vl", "avx512bw";
    tier map_block_avx2 = "avx2" if "avx2";
}

block_entry! {
    /// [`map_block`] summing weights ([`Sink::Sums`]).
    sum_block = SUMS;
    tier sum_block_avx512 = "avx2,avx512f,avx512vl,avx512bw" if "avx2", "avx512f", "avx512vl", "avx512bw";
    tier sum_block_avx2 = "avx2" if "avx2";
}

block_entry! {
    /// [`sum_block`] with each tree's at most [`SMALL_PSI`] weights in registers: AVX-512 only,
    /// else nothing (`mapped` set false).
    sum_small_block = SMALL_SUMS;
    tier sum_small_block_avx512 = "avx2,avx512f,avx512vl,avx512bw" if "avx2", "avx512f", "avx512vl", "avx512bw";
}

/// Elsewhere: no vector map.
#[cfg(not(target_arch = "x86_64"))]
use {map_block_none as map_block, map_block_none as sum_block, map_block_none as sum_small_block};

/// The buffers of [`RankedForest::leaves_of_rows`], kept by each thread between calls (a
/// stream is mapped a thousand rows at a time: without them each call would allocate and
/// clear some 150 KiB). Every entry a call reads it has written first, except the ranks of a
/// partial group's padding lanes (stale ranks of earlier rows, or zeros: a valid path through
/// every tree, whose leaves and sums are computed and never written out).
#[derive(Default)]
struct Scratch {
    block: Vec<Lanes>,
    values: Vec<f64>,
    leaves: Vec<Leaves>,
    sums: Vec<f64>,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

/// The leaves of a group's rows, `group[b]` those in tree b, into `out` row by row (`t` a row;
/// `out` holds the group's first `out.len() / t` rows): eight trees of eight rows at a time by
/// an 8 × 8 transpose in registers, the rest one by one. Call only from an entry point compiled for
/// AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn write_rows(group: &[Leaves], out: &mut [u32], t: usize) {
    use std::arch::x86_64::*;
    let rows = out.len() / t;
    let whole = t / 8 * 8;
    for first in (0..rows).step_by(8) {
        if first + 8 > rows {
            break;
        }
        for b in (0..whole).step_by(8) {
            // SAFETY: 8 u32 at lanes first..first + 8 of lines b..b + 8 (b + 8 <= t).
            let r: [__m256i; 8] = std::array::from_fn(|k| unsafe {
                _mm256_loadu_si256(group[b + k].0.as_ptr().add(first).cast())
            });
            // r[k] = tree b + k, rows first..first + 8; transposed: c[j] = row first + j.
            let t0 = _mm256_unpacklo_epi32(r[0], r[1]);
            let t1 = _mm256_unpackhi_epi32(r[0], r[1]);
            let t2 = _mm256_unpacklo_epi32(r[2], r[3]);
            let t3 = _mm256_unpackhi_epi32(r[2], r[3]);
            let t4 = _mm256_unpacklo_epi32(r[4], r[5]);
            let t5 = _mm256_unpackhi_epi32(r[4], r[5]);
            let t6 = _mm256_unpacklo_epi32(r[6], r[7]);
            let t7 = _mm256_unpackhi_epi32(r[6], r[7]);
            let u0 = _mm256_unpacklo_epi64(t0, t2);
            let u1 = _mm256_unpackhi_epi64(t0, t2);
            let u2 = _mm256_unpacklo_epi64(t1, t3);
            let u3 = _mm256_unpackhi_epi64(t1, t3);
            let u4 = _mm256_unpacklo_epi64(t4, t6);
            let u5 = _mm256_unpackhi_epi64(t4, t6);
            let u6 = _mm256_unpacklo_epi64(t5, t7);
            let u7 = _mm256_unpackhi_epi64(t5, t7);
            let c = [
                _mm256_permute2x128_si256::<0x20>(u0, u4),
                _mm256_permute2x128_si256::<0x20>(u1, u5),
                _mm256_permute2x128_si256::<0x20>(u2, u6),
                _mm256_permute2x128_si256::<0x20>(u3, u7),
                _mm256_permute2x128_si256::<0x31>(u0, u4),
                _mm256_permute2x128_si256::<0x31>(u1, u5),
                _mm256_permute2x128_si256::<0x31>(u2, u6),
                _mm256_permute2x128_si256::<0x31>(u3, u7),
            ];
            for (j, c) in c.iter().enumerate() {
                let row = &mut out[(first + j) * t + b..][..8];
                // SAFETY: 8 u32 in `row`.
                unsafe { _mm256_storeu_si256(row.as_mut_ptr().cast(), *c) };
            }
        }
    }
    // The trees past the last eight, and the rows past the last eight.
    for (p, row) in out.chunks_exact_mut(t).enumerate() {
        let from = if p < rows / 8 * 8 { whole } else { 0 };
        for (o, l) in row[from..].iter_mut().zip(&group[from..]) {
            *o = l.0[p];
        }
    }
}

/// The leaves of the 16 rows of a group in one tree (a cache line).
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy)]
struct Leaves([u32; LANES]);

/// Where [`RankedForest`] puts what it finds of a block of rows.
pub(crate) enum Sink<'a> {
    /// φ(x) of each row, `ids.len()` × t row-major.
    Leaves(&'a mut [u32]),
    /// ⟨w, Φ(x)⟩ = Σ_b w[b·ψ + φ_b(x)] of each row, summed in tree order from 0.0 (`w` of
    /// length t·ψ, `out` of length `ids.len()`): each row's leaves are added as each tree
    /// finds them, while the tree's ψ weights are in cache, and never written out.
    Sums {
        w: &'a [f64],
        psi: usize,
        out: &'a mut [f64],
    },
}

/// The exit leaves of the rows of `G` groups of 16 (their ranks `groups`, one [`Lanes`] per
/// attribute each) in the tree of runs `runs`. `K` chunks of candidate leaves a row (2 or 4).
/// Call only from an entry point compiled for AVX2, with every attribute of `runs` below the length of
/// each group.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn exit_leaves<const K: usize, const G: usize>(
    runs: &[Run],
    groups: [&[Lanes]; G],
) -> [Leaves; G] {
    use std::arch::x86_64::*;
    let mut sets = [[_mm256_set1_epi32(-1); 4]; G];
    for run in runs {
        // SAFETY: as this function's.
        unsafe {
            match (run.first, run.last) {
                (0, 0) => clear::<0, 0, G>(&mut sets, run, groups),
                (1, 1) => clear::<1, 1, G>(&mut sets, run, groups),
                (0, 1) => clear::<0, 1, G>(&mut sets, run, groups),
                (2, 2) => clear::<2, 2, G>(&mut sets, run, groups),
                (3, 3) => clear::<3, 3, G>(&mut sets, run, groups),
                (1, 2) => clear::<1, 2, G>(&mut sets, run, groups),
                (2, 3) => clear::<2, 3, G>(&mut sets, run, groups),
                (0, 2) => clear::<0, 2, G>(&mut sets, run, groups),
                (1, 3) => clear::<1, 3, G>(&mut sets, run, groups),
                _ => clear::<0, 3, G>(&mut sets, run, groups),
            }
        }
    }
    // A loop, not `map`: a closure would not be inlined into this AVX2 function.
    let mut leaves = [Leaves([0; LANES]); G];
    for (leaves, sets) in leaves.iter_mut().zip(sets) {
        // SAFETY: AVX2, as this function's.
        *leaves = unsafe { lowest_leaves::<K>(sets) };
    }
    leaves
}

/// The lowest leaf left in each row's candidate sets (`K` chunks of 16 leaves, 2 or 4): chunks
/// 0 and 1 as 32-bit lanes (rows 0-3 and 8-11, then 4-7 and 12-15), their lowest bit by the
/// exponent of its value as a float; with four chunks, 32 + that of chunks 2 and 3 where 0 and
/// 1 are empty. Call only from an entry point compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn lowest_leaves<const K: usize>(sets: [std::arch::x86_64::__m256i; 4]) -> Leaves {
    use std::arch::x86_64::*;
    // Functions, not closures: a closure is not always inlined, and its intrinsics would then
    // be calls (measured: the whole map three times slower where that happened).
    #[inline(always)]
    unsafe fn lowest(x: __m256i) -> __m256i {
        let bit = _mm256_and_si256(x, _mm256_sub_epi32(_mm256_setzero_si256(), x));
        let exponent = _mm256_srli_epi32::<23>(_mm256_castps_si256(_mm256_cvtepi32_ps(bit)));
        // The sign of bit 31's value (-2^31) masked off; an empty set gives -127.
        _mm256_sub_epi32(
            _mm256_and_si256(exponent, _mm256_set1_epi32(0xff)),
            _mm256_set1_epi32(127),
        )
    }
    #[inline(always)]
    unsafe fn high(lo: __m256i, hi: __m256i, leaf: __m256i) -> __m256i {
        let upper = _mm256_add_epi32(lowest(hi), _mm256_set1_epi32(32));
        _mm256_blendv_epi8(leaf, upper, _mm256_cmpeq_epi32(lo, _mm256_setzero_si256()))
    }
    let (lo03, lo47) = (
        _mm256_unpacklo_epi16(sets[0], sets[1]),
        _mm256_unpackhi_epi16(sets[0], sets[1]),
    );
    let (mut first, mut second) = (lowest(lo03), lowest(lo47));
    if K == 4 {
        let (hi03, hi47) = (
            _mm256_unpacklo_epi16(sets[2], sets[3]),
            _mm256_unpackhi_epi16(sets[2], sets[3]),
        );
        first = high(lo03, hi03, first);
        second = high(lo47, hi47, second);
    }
    let mut leaves = Leaves([0; LANES]);
    // SAFETY: 16 u32 in `leaves`, two stores of 8 (aligned: the line is).
    unsafe {
        let p = leaves.0.as_mut_ptr();
        _mm256_store_si256(p.cast(), _mm256_permute2x128_si256::<0x20>(first, second));
        _mm256_store_si256(
            p.add(8).cast(),
            _mm256_permute2x128_si256::<0x31>(first, second),
        );
    }
    leaves
}

/// The nodes of `run` (whose left subtrees lie in chunks `F..=L`) applied to the candidate sets
/// of the rows of `G` groups: where a row's rank is above the node's pos(s) (its left test
/// fails), the node's left leaves are cleared. Call only from an entry point compiled for AVX2, with
/// every attribute of `run` below the length of each group.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn clear<const F: usize, const L: usize, const G: usize>(
    sets: &mut [[std::arch::x86_64::__m256i; 4]; G],
    run: &Run,
    groups: [&[Lanes]; G],
) {
    use std::arch::x86_64::*;
    let per_node = 2 + L - F;
    debug_assert_eq!(run.vectors.len(), run.attrs.len() * per_node);
    let groups = groups.map(|g| g.as_ptr());
    for (&a, v) in run.attrs.iter().zip(run.vectors.chunks_exact(per_node)) {
        // SAFETY: aligned Lanes, 2 + L − F of them in `v`.
        let pos = unsafe { _mm256_load_si256(v.as_ptr().cast()) };
        let mut left = [pos; 4];
        // Constant bounds: unrolled, `left` and the sets kept in registers (an iterator here
        // measured twice as slow).
        #[allow(clippy::needless_range_loop)]
        for c in F..=L {
            // SAFETY: as above.
            left[c] = unsafe { _mm256_load_si256(v.as_ptr().add(1 + c - F).cast()) };
        }
        for (sets, group) in sets.iter_mut().zip(groups) {
            // SAFETY: a < the group's length (the caller's promise); aligned Lanes.
            let rank = unsafe { _mm256_load_si256(group.add(a as usize).cast()) };
            let right = _mm256_cmpgt_epi16(rank, pos);
            for c in F..=L {
                sets[c] = _mm256_andnot_si256(_mm256_and_si256(right, left[c]), sets[c]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iforest::leaves_of_rows;
    use ndarray::{Array2, ArrayView1};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The bit vectors on ranks, and the block walks, give each tree's walk of each row alone
    /// (`leaf_of`, itself tested against a reference walk) at their edges: trees of 1, 16, 17,
    /// 32, 33, 63 and 64 leaves (full isolation of distinct points: 2 and 4 chunks of
    /// leaves), and trees of 65 to 300 leaves cut at their top (bit vectors down to depth 5,
    /// then walks) beside small ones; dense and sparse rows (±0 among the values), rows exactly
    /// on the splits, a count of rows that leaves a partial group and a partial block.
    #[test]
    fn bit_vectors_on_ranks_agree_with_the_reference_walk() {
        use crate::input::CsrRows;
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let d = 5;
        // Values on a coarse grid, so that many rows sit exactly on a split; zeros of both signs.
        let x = Array2::from_shape_fn((1500, d), |_| match rng.random_range(0..16u8) {
            0 => -0.0,
            v => f64::from(v - 4) / 4.0,
        });
        let tree_of = |psi: usize, seed: u64| {
            let mut sample = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for i in 0..x.nrows() {
                let key: Vec<u64> = x.row(i).iter().map(|v| (v + 0.0).to_bits()).collect();
                if sample.len() < psi && seen.insert(key) {
                    sample.push(i);
                }
            }
            let points: Vec<ArrayView1<f64>> = sample.iter().map(|&i| x.row(i)).collect();
            let tree =
                IsolationTree::build(&points, sample, None, &mut ChaCha8Rng::seed_from_u64(seed));
            assert_eq!(tree.n_leaves(), psi);
            tree
        };
        // 4 + 15 and 5 + 7 trees: whole sets of eight trees and some more.
        let small: Vec<IsolationTree> = [1, 16, 17, 32]
            .into_iter()
            .chain(2..17)
            .map(|p| tree_of(p, p as u64))
            .collect();
        let large: Vec<IsolationTree> = [33, 63, 64, 5, 1]
            .into_iter()
            .chain(40..47)
            .map(|p| tree_of(p, p as u64))
            .collect();
        let cut: Vec<IsolationTree> = [65, 300, 1, 20, 128, 64, 200, 97, 3]
            .into_iter()
            .map(|p| tree_of(p, p as u64 + 1000))
            .collect();
        assert!(cut.iter().any(|t| t.depth() > 10));
        // Splits are drawn in (min, max]: put some rows exactly on them.
        let mut x = x.clone();
        let on_splits = [
            &large[2], &large[0], &small[3], &small[2], &small[18], &cut[1], &cut[4],
        ]
        .into_iter()
        .flat_map(|t| t.top(usize::MAX).splits);
        for (i, split) in on_splits.enumerate() {
            x[[i, split.attr as usize]] = split.split;
        }
        // Stored: the non-zeros and every third explicit zero.
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for (i, row) in x.rows().into_iter().enumerate() {
            for (a, &v) in row.iter().enumerate() {
                if v != 0.0 || (i + a) % 3 == 0 {
                    indices.push(a as u32);
                    values.push(v);
                }
            }
            indptr.push(indices.len());
        }
        let csr = CsrRows::new(d, &indptr, &indices, &values).unwrap();
        // Row counts leaving a group of one row, and of 13 (8 + 5); `long` past one block (at
        // d = 5, 102 groups of 16: 1,632 rows), so that a second block's offsets are read.
        let long: Vec<usize> = (0..x.nrows())
            .rev()
            .chain(0..x.nrows())
            .chain(0..37)
            .collect();
        let short: Vec<usize> = (100..145).collect();
        for (trees, ids) in [
            (&small, &long),
            (&large, &long),
            (&cut, &long),
            (&small, &short),
            (&large, &short),
            (&cut, &short),
        ] {
            let ranked = RankedForest::new(trees, d).expect("few splits an attribute");
            // Rows too wide to densify are mapped row by row: no ranked form for them.
            assert!(RankedForest::new(trees, DENSIFY_LIMIT + 1).is_none());
            for rows in [Rows::Dense(x.view()), Rows::Sparse(csr)] {
                let mut walked = vec![u32::MAX; ids.len() * trees.len()];
                leaves_of_rows(trees, rows, ids, &mut walked);
                let mut out = vec![u32::MAX; ids.len() * trees.len()];
                if !ranked.leaves_of_rows(trees, rows, ids, &mut Sink::Leaves(&mut out)) {
                    // No AVX2 here: only the walks are tested.
                    out.clone_from(&walked);
                }
                // The AVX2 build too where the dispatch took the AVX-512 one.
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut avx2 = vec![u32::MAX; out.len()];
                    // SAFETY: AVX2 (detected); the arguments are those of the call above.
                    let mut sink = Sink::Leaves(&mut avx2);
                    unsafe { map_block_avx2(&ranked, trees, rows, ids, &mut sink, &mut true) };
                    assert_eq!(avx2, out);
                }
                // Weights summed as the trees go: φ's weights in tree order, bit for bit
                // (arbitrary doubles), by the dispatch and by the AVX2 build.
                let psi = trees.iter().map(|t| t.n_leaves()).max().unwrap();
                let w: Vec<f64> = (0..trees.len() * psi)
                    .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-8..8)))
                    .collect();
                let want: Vec<u64> = walked
                    .chunks_exact(trees.len())
                    .map(|phi| crate::kernel::dot(&w, psi, phi).to_bits())
                    .collect();
                let mut sums = vec![f64::NAN; ids.len()];
                let mut sink = Sink::Sums {
                    w: &w,
                    psi,
                    out: &mut sums,
                };
                if ranked.leaves_of_rows(trees, rows, ids, &mut sink) {
                    assert_eq!(sums.iter().map(|s| s.to_bits()).collect::<Vec<_>>(), want);
                }
                // Each route whatever ψ (the small one while ψ allows): the widest builds.
                for small in [false, true] {
                    if small && psi > SMALL_PSI {
                        continue;
                    }
                    let mut sums = vec![f64::NAN; ids.len()];
                    let mut sink = Sink::Sums {
                        w: &w,
                        psi,
                        out: &mut sums,
                    };
                    let mut mapped = true;
                    if small {
                        sum_small_block(&ranked, trees, rows, ids, &mut sink, &mut mapped);
                    } else {
                        sum_block(&ranked, trees, rows, ids, &mut sink, &mut mapped);
                    }
                    if mapped {
                        assert_eq!(sums.iter().map(|s| s.to_bits()).collect::<Vec<_>>(), want);
                    }
                }
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut sums = vec![f64::NAN; ids.len()];
                    let mut sink = Sink::Sums {
                        w: &w,
                        psi,
                        out: &mut sums,
                    };
                    // SAFETY: AVX2 (detected); the arguments are those of the call above.
                    unsafe { sum_block_avx2(&ranked, trees, rows, ids, &mut sink, &mut true) };
                    assert_eq!(sums.iter().map(|s| s.to_bits()).collect::<Vec<_>>(), want);
                }
                for ((o, w), &i) in out
                    .chunks_exact(trees.len())
                    .zip(walked.chunks_exact(trees.len()))
                    .zip(ids)
                {
                    let expected: Vec<u32> = trees.iter().map(|t| t.leaf_of(&x.row(i))).collect();
                    assert_eq!((o, w), (&expected[..], &expected[..]), "row {i}");
                }
            }
        }
    }

    /// rank_a(x) = #{s ≤ x} by counting, on splits spread evenly, clustered (many in one
    /// bucket), one split, huge and tiny values, at and between the splits.
    #[test]
    fn ranks_are_the_counts_of_splits_at_or_below() {
        let sets: Vec<Vec<f64>> = vec![
            (0..100).map(|k| k as f64 * 0.37 - 5.0).collect(),
            vec![
                1.0,
                1.0 + 1e-12,
                1.0 + 2e-12,
                1.0 + 3e-12,
                7.0,
                -3.0,
                1.0,
                7.0,
            ],
            vec![0.25],
            vec![-1e300, 1e300, 0.0, -0.0, 5e-324],
            vec![3.0, 3.0, 3.0],
        ];
        for splits in sets {
            let ranks = AttributeRanks::new(splits.clone());
            let mut distinct = splits.clone();
            distinct.sort_by(f64::total_cmp);
            distinct.dedup();
            let mut xs: Vec<f64> = vec![f64::MAX, f64::MIN, 0.0, -0.0, 1e-300, -1e-300];
            for &s in &distinct {
                xs.extend([s, s.next_down(), s.next_up(), s + 0.5, s - 0.5]);
            }
            for x in xs {
                let count = distinct.iter().filter(|&&s| s <= x).count();
                assert_eq!(
                    ranks.rank(x) as usize,
                    count,
                    "x = {x:e}, splits {splits:?}"
                );
                for &s in &distinct {
                    assert_eq!(
                        x < s,
                        ranks.rank(x) <= ranks.position(s),
                        "x = {x:e}, s = {s:e}"
                    );
                }
            }
        }
    }
}
