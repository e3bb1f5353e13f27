//! The children of every node of the damped cover tree, laid out for the descent: a node's
//! children (their ids and centres side by side) fill chunks of whole cache lines in one arena,
//! chained when a node has more children than a chunk holds. A descent step reads one chunk
//! (usually one line) instead of the node's record, its child list and one centre per child,
//! each elsewhere in memory; and the arena plus the per-node heads stay small enough for the
//! last-level cache at the paper's sizes (about 15 MB for E1's 512,000 nodes). The centres are
//! copies of the tree's, so every distance is the same computation on the same values.

/// One cache line of the arena.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// No chunk (a node without children yet).
const NONE: usize = usize::MAX;

/// Words of a chunk before its children: the number of children in it, and the index of the
/// next chunk of the same node plus one (0: the last chunk).
const HEADER: usize = 2;

/// The children of every node, in chunks (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct ChildBlocks {
    dim: usize,
    /// Children per chunk.
    per_chunk: usize,
    /// Cache lines per chunk.
    lines: usize,
    arena: Vec<Line>,
    /// Per node: its first chunk (`NONE`: no children).
    first: Vec<usize>,
    /// Per node: its last chunk (where the next child goes).
    last: Vec<usize>,
}

impl ChildBlocks {
    /// No nodes yet, for centres of `dim` coordinates: chunks of the fewest lines that hold at
    /// least two children (one line for d ≤ 2).
    pub fn new(dim: usize) -> Self {
        let lines = (HEADER + 2 * (1 + dim)).div_ceil(8);
        Self {
            dim,
            per_chunk: (8 * lines - HEADER) / (1 + dim),
            lines,
            arena: Vec::new(),
            first: Vec::new(),
            last: Vec::new(),
        }
    }

    /// A new node without children (nodes are numbered in the order they are added).
    pub fn add_node(&mut self) {
        self.first.push(NONE);
        self.last.push(NONE);
    }

    #[inline]
    fn word(&self, chunk: usize, w: usize) -> u64 {
        self.arena[chunk * self.lines + w / 8].0[w % 8]
    }

    #[inline]
    fn word_mut(&mut self, chunk: usize, w: usize) -> &mut u64 {
        &mut self.arena[chunk * self.lines + w / 8].0[w % 8]
    }

    /// Appends child `id` with centre `centre` to `parent`'s children.
    pub fn push(&mut self, parent: usize, id: usize, centre: &[f64]) {
        debug_assert_eq!(centre.len(), self.dim);
        let mut chunk = self.last[parent];
        if chunk == NONE || self.word(chunk, 0) as usize == self.per_chunk {
            let new = self.arena.len() / self.lines;
            self.arena
                .resize(self.arena.len() + self.lines, Line::default());
            if chunk == NONE {
                self.first[parent] = new;
            } else {
                *self.word_mut(chunk, 1) = new as u64 + 1;
            }
            self.last[parent] = new;
            chunk = new;
        }
        let slot = self.word(chunk, 0) as usize;
        *self.word_mut(chunk, 0) += 1;
        *self.word_mut(chunk, HEADER + slot) = id as u64;
        let base = HEADER + self.per_chunk + slot * self.dim;
        for (j, &c) in centre.iter().enumerate() {
            *self.word_mut(chunk, base + j) = c.to_bits();
        }
    }

    /// The chunks of `node`'s children, in order, into `chunks`; returns the number of
    /// children.
    #[inline]
    pub fn chunks(&self, node: usize, chunks: &mut Vec<usize>) -> usize {
        chunks.clear();
        let (mut chunk, mut count) = (self.first_chunk(node), 0);
        while let Some(c) = chunk {
            chunks.push(c);
            count += self.count(c);
            chunk = self.next_chunk(c);
        }
        count
    }

    /// The first chunk of `node`'s children (`None`: it has none).
    #[inline]
    pub fn first_chunk(&self, node: usize) -> Option<usize> {
        (self.first[node] != NONE).then_some(self.first[node])
    }

    /// The chunk after `chunk` of the same node (`None`: it is the last).
    #[inline]
    pub fn next_chunk(&self, chunk: usize) -> Option<usize> {
        match self.word(chunk, 1) {
            0 => None,
            next => Some(next as usize - 1),
        }
    }

    /// The number of children in `chunk`.
    #[inline]
    pub fn count(&self, chunk: usize) -> usize {
        self.word(chunk, 0) as usize
    }

    /// Asks the processor to start loading the first chunk of each child of `node` (whose
    /// chunks are `chunks`): the next step of a descent reads one of them.
    #[inline]
    pub fn prefetch_grandchildren(&self, chunks: &[usize]) {
        #[cfg(target_arch = "x86_64")]
        for &chunk in chunks {
            for slot in 0..self.count(chunk) {
                let first = self.first[self.id(chunk, slot)];
                if first != NONE {
                    let line: *const Line = &self.arena[first * self.lines];
                    // SAFETY: a prefetch has no effect on memory; the address is in the arena.
                    unsafe {
                        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                            line.cast(),
                        )
                    };
                }
            }
        }
    }

    /// The chunk and slot of child `i` of a node whose chunks are `chunks`.
    #[inline]
    pub fn locate(&self, chunks: &[usize], i: usize) -> (usize, usize) {
        (chunks[i / self.per_chunk], i % self.per_chunk)
    }

    /// The id of the child in `slot` of `chunk`.
    #[inline]
    pub fn id(&self, chunk: usize, slot: usize) -> usize {
        self.word(chunk, HEADER + slot) as usize
    }

    /// The Euclidean distance from `x` to the centre of the child in `slot` of `chunk` (the
    /// sum of squares in coordinate order, as for any other centre of the tree).
    #[inline]
    pub fn distance(&self, chunk: usize, slot: usize, x: &[f64]) -> f64 {
        let base = HEADER + self.per_chunk + slot * self.dim;
        x.iter()
            .enumerate()
            .map(|(j, v)| {
                let c = f64::from_bits(self.word(chunk, base + j));
                (c - v) * (c - v)
            })
            .sum::<f64>()
            .sqrt()
    }

    /// The ids of `node`'s children, in the order they were added.
    pub fn ids(&self, node: usize) -> Vec<usize> {
        let mut chunks = Vec::new();
        let n = self.chunks(node, &mut chunks);
        (0..n)
            .map(|i| {
                let (chunk, slot) = self.locate(&chunks, i);
                self.id(chunk, slot)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids and centres come back as pushed, in order, across chained chunks, for one to five
    /// coordinates; nodes without children have none.
    #[test]
    fn children_come_back_as_pushed_across_chunks() {
        for dim in 1..=5 {
            let mut blocks = ChildBlocks::new(dim);
            for _ in 0..4 {
                blocks.add_node();
            }
            assert!(
                blocks.per_chunk >= 2
                    && (HEADER + blocks.per_chunk * (1 + dim)) <= 8 * blocks.lines
            );
            let centre =
                |id: usize| -> Vec<f64> { (0..dim).map(|j| id as f64 + 0.1 * j as f64).collect() };
            // Interleaved pushes to nodes 0 and 2 (7 and 3 children), none to 1 and 3.
            for id in 10..20 {
                let parent = if id % 3 == 0 { 2 } else { 0 };
                blocks.push(parent, id, &centre(id));
            }
            let want0: Vec<usize> = (10..20).filter(|id| id % 3 != 0).collect();
            let want2: Vec<usize> = (10..20).filter(|id| id % 3 == 0).collect();
            assert_eq!(blocks.ids(0), want0);
            assert_eq!(blocks.ids(2), want2);
            assert!(blocks.ids(1).is_empty() && blocks.ids(3).is_empty());
            let mut chunks = Vec::new();
            assert_eq!(blocks.chunks(0, &mut chunks), want0.len());
            assert_eq!(chunks.len(), want0.len().div_ceil(blocks.per_chunk));
            let x: Vec<f64> = (0..dim).map(|j| 0.3 * j as f64 - 1.0).collect();
            for (i, &id) in want0.iter().enumerate() {
                let (chunk, slot) = blocks.locate(&chunks, i);
                assert_eq!(blocks.id(chunk, slot), id);
                let want = centre(id)
                    .iter()
                    .zip(&x)
                    .map(|(c, v)| (c - v) * (c - v))
                    .sum::<f64>()
                    .sqrt();
                assert_eq!(blocks.distance(chunk, slot, &x).to_bits(), want.to_bits());
            }
        }
    }
}
