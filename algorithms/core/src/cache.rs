//! Memory layouts for loops that must stay in the L1 cache: buffers that start on a cache line,
//! and row strides that keep a power-of-two row length from mapping every row to the same few
//! cache sets.

/// Bytes in a cache line (x86-64 and most other processors).
pub const LINE_BYTES: usize = 64;

/// `f64` values in a cache line.
const LINE_VALUES: usize = LINE_BYTES / std::mem::size_of::<f64>();

/// The distance, in `f64` values, between consecutive rows of `len` values that a loop reads or
/// writes a column at a time: from 64 values on, `len` plus one cache line. Rows of a power of
/// two of 64 values or more lie a multiple of 512 bytes apart, and the L1 set index repeats every
/// 4 KiB, so a column of such rows falls into a few sets and misses the cache (aNNE's centres at
/// ψ = 1,024: 22 rows fighting over 4 sets; a Fastfood batch's 64 projections of 256 values: two
/// sets). Shorter rows keep their length (a column then spans a few KiB, and the padding would
/// cost up to three times the memory).
pub fn padded_stride(len: usize) -> usize {
    if len >= LINE_VALUES * 8 {
        len + LINE_VALUES
    } else {
        len
    }
}

/// `f64` values that start on a cache line, so that vector loads and stores never straddle two
/// lines (a 32-byte store 16 or 48 bytes into a line is split in two). A clone starts on a line
/// of its own buffer too.
#[derive(Debug, Default)]
pub struct LineAligned {
    buf: Vec<f64>,
    start: usize,
    len: usize,
}

impl LineAligned {
    /// `len` zeros on a cache line (the buffer is reused when it is large enough).
    pub fn zeroed(&mut self, len: usize) -> &mut [f64] {
        self.buf.clear();
        self.buf.resize(len + LINE_VALUES, 0.0);
        // An f64 buffer is 8-byte aligned, so a line boundary is within LINE_VALUES values.
        self.start = self.buf.as_ptr().align_offset(LINE_BYTES).min(LINE_VALUES);
        self.len = len;
        &mut self.buf[self.start..self.start + len]
    }

    /// The values.
    pub fn values(&self) -> &[f64] {
        &self.buf[self.start..self.start + self.len]
    }
}

impl Clone for LineAligned {
    /// The same values, re-aligned in the clone's buffer (a derived clone would keep the
    /// original's offset in a buffer the allocator may have put elsewhere).
    fn clone(&self) -> Self {
        let mut c = Self::default();
        c.zeroed(self.len).copy_from_slice(self.values());
        c
    }
}

impl PartialEq for LineAligned {
    fn eq(&self, other: &Self) -> bool {
        self.values() == other.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_values_start_on_a_cache_line() {
        let mut a = LineAligned::default();
        for len in [1, 7, 32, 33, 1000, 5] {
            let v = a.zeroed(len);
            assert_eq!((v.len(), v.as_ptr() as usize % LINE_BYTES), (len, 0));
            assert!(v.iter().all(|&x| x == 0.0));
            v.fill(1.0);
            assert_eq!(a.values().len(), len);
            let c = a.clone();
            assert_eq!(c.values().as_ptr() as usize % LINE_BYTES, 0);
            assert_eq!(c, a);
        }
    }

    #[test]
    fn rows_of_64_values_or_more_are_padded_by_a_line() {
        assert_eq!([4, 32, 63].map(padded_stride), [4, 32, 63]);
        assert_eq!([64, 256, 1024].map(padded_stride), [72, 264, 1032]);
    }
}
