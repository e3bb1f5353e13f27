//! svmlight / LIBSVM text format (optionally gzip, detected by magic bytes).
//!
//! One sample per line: `label idx:val idx:val ...` with 1-based feature indices. Labels are
//! any number (`-1`, `+1`, `-1.0`, `1.0`, ...); `qid:` tokens are ignored; `#` starts a
//! comment; blank lines and trailing spaces are accepted; indices may come in any order but
//! not twice in one row.
//!
//! [`read_svmlight_sparse`] is the reader: it returns a [`CsrMatrix`] whose rows hold their
//! entries in increasing column order. **Explicit zeros (`13:0.0`, `13:-0`) are dropped**:
//! they are parsed and checked like any entry (and count towards the inferred width), but not
//! stored, so `nnz` counts true non-zeros and a file with or without explicit zeros gives the
//! same matrix. [`read_svmlight`] is the dense view of the same parse.
//!
//! Labels and values mean what `str::parse::<f64>` says, bit for bit (`nan`, `inf`, `1e400`
//! included); indices what `usize::from_str` says (decimal digits, an optional `+`). Errors
//! name the line and the token (both 1-based; the label is token 1) and come in file order; a
//! line that is not UTF-8 is an error.
//!
//! The text is read in blocks of about 1 MiB of whole lines and scanned byte by byte, with no
//! allocation per line. The common line (a label, then `index:value` entries after single
//! spaces with increasing indices and short decimals such as `-7.31854e-1`) is read in one
//! pass with an exact fast path for its numbers (Clinger's, see `fast_f64`); any other line is
//! checked for UTF-8 and read by the general rules, its numbers by `str::parse` unless the
//! fast path reads them. When the size of the text is known (a file that is not gzip), the
//! matrix is allocated at once from the density of the first block. The line-by-line reader
//! this replaced is kept in the tests as the reference the fast one must match.

use std::io::BufRead;
use std::path::Path;

use ndarray::{Array1, Array2};

use crate::error::DatasetError;
use crate::gz::{is_gzip, open_maybe_gz};
use crate::sparse::CsrMatrix;

/// Reads an svmlight file into sparse `(x, y)` (explicit zeros dropped; see the module docs).
///
/// `n_features` fixes the number of columns of `x` (so a test file whose largest index is
/// smaller than the training file's gets the same width); an index above it is an error.
/// Without it the width is the largest index seen.
pub fn read_svmlight_sparse(
    path: &Path,
    n_features: Option<usize>,
) -> Result<(CsrMatrix, Array1<f64>), DatasetError> {
    let reader = open_maybe_gz(path)?;
    // The size of the text, when it is that of a regular file that is not gzip, to allocate
    // the matrix at once (a pipe is neither measured nor opened twice).
    let text_len = match std::fs::metadata(path) {
        Ok(m) if m.is_file() && matches!(is_gzip(path), Ok(false)) => Some(m.len()),
        _ => None,
    };
    parse_in_blocks(reader, path, n_features, BLOCK, text_len)
}

/// Reads an svmlight file into dense `(x, y)`: [`read_svmlight_sparse`] then
/// [`CsrMatrix::to_dense`].
pub fn read_svmlight(
    path: &Path,
    n_features: Option<usize>,
) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
    let (x, y) = read_svmlight_sparse(path, n_features)?;
    densify(x, y, path)
}

/// Parses svmlight text from `reader` into dense `(x, y)`; `source` names it in error messages.
pub fn parse_svmlight(
    reader: impl BufRead,
    source: &Path,
    n_features: Option<usize>,
) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
    let (x, y) = parse_svmlight_sparse(reader, source, n_features)?;
    densify(x, y, source)
}

/// The dense form of `x`, unless it has more than `usize::MAX` cells.
fn densify(
    x: CsrMatrix,
    y: Array1<f64>,
    source: &Path,
) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
    if x.n_rows().checked_mul(x.n_cols()).is_none() {
        return Err(DatasetError::Format {
            path: source.to_path_buf(),
            message: format!(
                "{} x {} dense matrix is too large; use read_svmlight_sparse",
                x.n_rows(),
                x.n_cols()
            ),
        });
    }
    Ok((x.to_dense(), y))
}

/// Parses svmlight text from `reader` into sparse `(x, y)`; `source` names it in error
/// messages.
///
/// Errors come in file order: a bad line is reported even when the reader would fail further
/// on; a read error is [`DatasetError::Io`].
pub fn parse_svmlight_sparse(
    reader: impl BufRead,
    source: &Path,
    n_features: Option<usize>,
) -> Result<(CsrMatrix, Array1<f64>), DatasetError> {
    parse_in_blocks(reader, source, n_features, BLOCK, None)
}

/// Bytes asked of the reader at a time (a longer line grows the buffer).
const BLOCK: usize = 1 << 20;

/// Bytes of lines for which `Parser::lines` makes room at a time (see there), at most a block
/// (so that the tests' small blocks cut chunks too).
const CHUNK: usize = 1 << 16;

/// Column indices are stored as `u32`: the largest 1-based index (and width) allowed.
const MAX_ALLOWED: usize = u32::MAX as usize + 1;

/// [`parse_svmlight_sparse`] reading `block` bytes at a time (small blocks in tests).
/// `text_len`, the size of the whole text when known, only serves to reserve memory.
fn parse_in_blocks(
    mut reader: impl BufRead,
    source: &Path,
    n_features: Option<usize>,
    block: usize,
    mut text_len: Option<u64>,
) -> Result<(CsrMatrix, Array1<f64>), DatasetError> {
    if let Some(n) = n_features {
        if n > MAX_ALLOWED {
            return Err(DatasetError::Format {
                path: source.to_path_buf(),
                message: format!("n_features = {n} exceeds the supported {MAX_ALLOWED}"),
            });
        }
    }
    let mut parser = Parser::new(source, n_features, CHUNK.min(block));
    // buf[..filled] is the start of a line that has no '\n' yet.
    let mut buf = vec![0u8; block.max(1)];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            buf.resize(2 * buf.len(), 0);
        }
        let got = match reader.read(&mut buf[filled..]) {
            Ok(got) => got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(DatasetError::io(source, e)),
        };
        if got == 0 {
            // End of input: what is left is the last line (without its '\n').
            parser.lines(&buf[..filled])?;
            break;
        }
        // Only the new bytes can hold a '\n'.
        if let Some(last) = memchr::memrchr(b'\n', &buf[filled..filled + got]) {
            let complete = filled + last + 1;
            parser.lines(&buf[..complete])?;
            if let Some(total) = text_len.take() {
                parser.reserve_for(total, complete);
            }
            buf.copy_within(complete..filled + got, 0);
            filled = filled + got - complete;
        } else {
            filled += got;
        }
    }
    parser.finish()
}

/// The state of one parse: the matrix so far, the current row and the number of lines read.
struct Parser<'a> {
    source: &'a Path,
    /// Bytes of lines given room at a time in [`Self::lines`].
    chunk: usize,
    n_features: Option<usize>,
    /// The largest index allowed: `n_features`, else [`MAX_ALLOWED`].
    limit: usize,
    line_no: usize,
    labels: Vec<f64>,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    max_index: usize,
    /// The 1-based indices of the explicit zeros of the current row (its other indices are
    /// `indices[indptr.last()..]` plus one): with those, the duplicate check.
    zeros: Vec<usize>,
    /// The largest index of the current row so far (0 before its first entry).
    row_max: usize,
    /// Whether the indices of the current row came in increasing order so far.
    sorted: bool,
}

impl<'a> Parser<'a> {
    fn new(source: &'a Path, n_features: Option<usize>, chunk: usize) -> Self {
        Parser {
            source,
            chunk: chunk.max(1),
            n_features,
            limit: n_features.unwrap_or(MAX_ALLOWED),
            line_no: 0,
            labels: Vec::new(),
            indptr: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
            max_index: 0,
            zeros: Vec::new(),
            row_max: 0,
            sorted: true,
        }
    }

    #[cold]
    fn err(&self, column: usize, message: String) -> DatasetError {
        DatasetError::Parse {
            path: self.source.to_path_buf(),
            line: self.line_no,
            column,
            message,
        }
    }

    /// Parses whole lines: every line of `bytes` ends with `\n` except perhaps the last, which
    /// is then the last line of the input. A line of the common form goes through
    /// [`Self::common_line`]; any other through [`Self::line`], after its UTF-8 check.
    fn lines(&mut self, bytes: &[u8]) -> Result<(), DatasetError> {
        // bytes[..complete]: the lines that end with '\n'.
        let complete = match bytes.last() {
            Some(b'\n') => bytes.len(),
            _ => memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1),
        };
        let (whole, last) = bytes.split_at(complete);
        let mut pos = 0;
        while pos < whole.len() {
            // A chunk of whole lines of about `chunk` bytes, and room for every entry it can hold
            // (each takes 4 bytes at least, ` 1:1`), so that the common line writes its entries
            // without a capacity check; it stays enough line after line (a line of L bytes
            // stores at most L / 4 entries). Short chunks, so that the room seldom outgrows the
            // reservation made for the whole text.
            let cut = if whole.len() - pos > self.chunk {
                memchr::memchr(b'\n', &whole[pos + self.chunk..])
                    .map_or(whole.len(), |i| pos + self.chunk + i + 1)
            } else {
                whole.len()
            };
            let chunk = &whole[..cut];
            // `reserve` does nothing where the capacity already holds the room.
            let room = (cut - pos) / 4 + 1;
            self.indices.reserve(room);
            self.values.reserve(room);
            while pos < cut {
                if let Some(next) = self.common_line(chunk, pos) {
                    pos = next;
                    continue;
                }
                // There is a '\n' at the end of `chunk`.
                let end = memchr::memchr(b'\n', &chunk[pos..]).map_or(cut, |i| pos + i);
                self.other_line(&chunk[pos..end])?;
                pos = end + 1;
            }
        }
        if !last.is_empty() {
            self.other_line(last)?;
        }
        Ok(())
    }

    /// A line (without its `\n`) by the general rules: [`Self::line`] if it is UTF-8.
    fn other_line(&mut self, line: &[u8]) -> Result<(), DatasetError> {
        self.line_no += 1;
        match std::str::from_utf8(line) {
            Ok(line) => self.line(line),
            Err(_) => Err(self.err(1, "not valid UTF-8".into())),
        }
    }

    /// The common line at `b[start..]` (`b` ends with `\n`): a label at the start, then
    /// entries `index:value`, each after one space, up to the `\n`; the label and the values
    /// numbers that [`fast_f64`] reads, the indices at most 18 digits and increasing, none
    /// above the limit. Stores the row and returns where the next line starts; for any other
    /// line stores nothing and returns `None` (then [`Self::line`] decides). What it stores is
    /// what [`Self::line`] would: the same numbers (both read them by [`fast_f64`]), and an
    /// increasing row needs none of its other checks. Scanned byte by byte: the branches of
    /// such a scan are predicted, which measured faster than finding the tokens first.
    #[inline(always)]
    fn common_line(&mut self, b: &[u8], start: usize) -> Option<usize> {
        let numbers = Ended(b);
        let (label, len) = clinger(&numbers, start)?;
        // The row's entries go to the spare capacity (enough for every entry of `b`'s lines,
        // made by `lines`), and the lengths are set once the row is read: no capacity check
        // per entry, nothing to take back from a row left to the general rules.
        let (indices, values) = (
            self.indices.spare_capacity_mut(),
            self.values.spare_capacity_mut(),
        );
        let mut stored = 0;
        let mut row_max = 0;
        let mut i = start + len;
        loop {
            // b ends with '\n', and no step below goes past a '\n'.
            match b[i] {
                b' ' => i += 1,
                b'\n' => break,
                _ => return None,
            }
            let digits = i;
            let (idx, end) = digit_run(&numbers, i, 0);
            i = end;
            // At most 18 digits: no wrap, and a usize.
            let idx = idx as usize;
            if (b[i] != b':')
                | (i == digits)
                | (i - digits > 18)
                | (idx <= row_max)
                | (idx > self.limit)
            {
                return None;
            }
            let (val, len) = clinger(&numbers, i + 1)?;
            i += 1 + len;
            row_max = idx;
            // An explicit zero is dropped (its index counts, as in `store`).
            if val != 0.0 {
                // Past the room (only where a general line stored more than it holds): the
                // general rules, which grow the vectors.
                let (Some(index), Some(value)) = (indices.get_mut(stored), values.get_mut(stored))
                else {
                    return None;
                };
                index.write((idx - 1) as u32);
                value.write(val);
                stored += 1;
            }
        }
        // SAFETY: the first `stored` places past the lengths were written just above.
        unsafe {
            self.indices.set_len(self.indices.len() + stored);
            self.values.set_len(self.values.len() + stored);
        }
        self.line_no += 1;
        self.labels.push(label);
        self.indptr.push(self.indices.len());
        self.max_index = self.max_index.max(row_max);
        Some(i + 1)
    }

    /// Parses one line (without its `\n`). Tokens are the runs of bytes that are neither ASCII
    /// whitespace (as in `str::split_ascii_whitespace`) nor `#`, before the first `#`; the
    /// column of a token is its 1-based position among them.
    fn line(&mut self, line: &str) -> Result<(), DatasetError> {
        let b = line.as_bytes();
        let mut pos = skip_space(b, 0);
        if pos == b.len() || b[pos] == b'#' {
            return Ok(());
        }
        let end = token_end(b, pos);
        let label = &line[pos..end];
        let Some(label) = parse_f64(label) else {
            return Err(self.err(1, format!("label `{label}` is not a number")));
        };
        self.labels.push(label);
        self.zeros.clear();
        self.row_max = 0;
        self.sorted = true;
        let mut column = 1;
        pos = end;
        loop {
            pos = skip_space(b, pos);
            if pos == b.len() || b[pos] == b'#' {
                break;
            }
            column += 1;
            if let Some((idx, val, end)) = fast_entry(b, pos) {
                // The common case, a new largest index in 1..=limit, needs no other check.
                if idx > self.row_max && idx <= self.limit {
                    self.row_max = idx;
                } else {
                    self.index(idx, column)?;
                }
                self.store(idx, val);
                pos = end;
            } else {
                let end = token_end(b, pos);
                // pos and end sit next to ASCII bytes (or at the ends): char boundaries.
                self.token(&line[pos..end], column)?;
                pos = end;
            }
        }
        self.max_index = self.max_index.max(self.row_max);
        if !self.sorted {
            let start = self.row_start();
            let mut row: Vec<(u32, f64)> = self.indices[start..]
                .iter()
                .copied()
                .zip(self.values[start..].iter().copied())
                .collect();
            row.sort_unstable_by_key(|&(c, _)| c);
            self.indices.truncate(start);
            self.values.truncate(start);
            for (c, v) in row {
                self.indices.push(c);
                self.values.push(v);
            }
        }
        self.indptr.push(self.indices.len());
        Ok(())
    }

    /// Any token after the label (the general rules; [`fast_entry`] is the common case).
    fn token(&mut self, token: &str, column: usize) -> Result<(), DatasetError> {
        if token.starts_with("qid:") {
            return Ok(());
        }
        let Some((idx, val)) = token.split_once(':') else {
            return Err(self.err(column, format!("expected `index:value`, found `{token}`")));
        };
        let Some(idx) = parse_index(idx.as_bytes()) else {
            return Err(self.err(
                column,
                format!("feature index `{idx}` is not a positive integer"),
            ));
        };
        self.index(idx, column)?;
        let Some(val) = parse_f64(val) else {
            return Err(self.err(
                column,
                format!("value `{val}` of feature {idx} is not a number"),
            ));
        };
        self.store(idx, val);
        Ok(())
    }

    /// Checks the 1-based feature index of an entry of the current row (in range, not seen
    /// before in the row) and updates the row's largest index and order.
    fn index(&mut self, idx: usize, column: usize) -> Result<(), DatasetError> {
        if idx == 0 {
            return Err(self.err(
                column,
                "feature index 0: svmlight indices are 1-based".into(),
            ));
        }
        if let Some(n) = self.n_features {
            if idx > n {
                return Err(self.err(
                    column,
                    format!(
                        "feature index {idx} exceeds n_features = {n}; pass a larger n_features"
                    ),
                ));
            }
        } else if idx > MAX_ALLOWED {
            return Err(self.err(
                column,
                format!("feature index {idx} exceeds the supported {MAX_ALLOWED}"),
            ));
        }
        // Indices are usually increasing; only a step back needs the full duplicate scan.
        if idx <= self.row_max {
            let row_start = self.row_start();
            // 1 <= idx <= MAX_ALLOWED = u32::MAX + 1, so idx - 1 fits.
            if self.indices[row_start..].contains(&((idx - 1) as u32)) || self.zeros.contains(&idx)
            {
                return Err(self.err(
                    column,
                    format!("feature index {idx} appears twice in one row"),
                ));
            }
            self.sorted = false;
        }
        self.row_max = self.row_max.max(idx);
        Ok(())
    }

    /// Where the current row starts in `indices` and `values`.
    fn row_start(&self) -> usize {
        self.indptr.last().copied().unwrap_or(0)
    }

    /// Stores the value of a checked entry, or notes the index of an explicit zero.
    fn store(&mut self, idx: usize, val: f64) {
        if val != 0.0 {
            // 1 <= idx <= MAX_ALLOWED = u32::MAX + 1, so idx - 1 fits.
            self.indices.push((idx - 1) as u32);
            self.values.push(val);
        } else {
            self.zeros.push(idx);
        }
    }

    /// Reserves room for a text of `total` bytes at the density of the `parsed` bytes read so
    /// far (plus 10%), so that a large matrix is not grown, copied and paged in step by step.
    fn reserve_for(&mut self, total: u64, parsed: usize) {
        let scale = total as f64 / parsed as f64;
        // A row takes at least 2 bytes (`1\n`), a stored entry 4 (` 1:1`).
        let total = usize::try_from(total).unwrap_or(usize::MAX);
        let rows = ((self.labels.len() as f64 * scale * 1.1) as usize).min(total / 2);
        let nnz = ((self.indices.len() as f64 * scale * 1.1) as usize).min(total / 4);
        // Only a hint: without the memory, the vectors grow as they go.
        let _ = self
            .labels
            .try_reserve(rows.saturating_sub(self.labels.len()));
        let _ = self
            .indptr
            .try_reserve(rows.saturating_sub(self.indptr.len()));
        let _ = self
            .indices
            .try_reserve(nnz.saturating_sub(self.indices.len()));
        let _ = self
            .values
            .try_reserve(nnz.saturating_sub(self.values.len()));
        advise_huge_pages(&self.indices);
        advise_huge_pages(&self.values);
    }

    fn finish(mut self) -> Result<(CsrMatrix, Array1<f64>), DatasetError> {
        // Give back what the growth or the reservation left over.
        self.labels.shrink_to_fit();
        self.indptr.shrink_to_fit();
        self.indices.shrink_to_fit();
        self.values.shrink_to_fit();
        let width = self.n_features.unwrap_or(self.max_index);
        // The parse holds the matrix's invariants: each row's indices strictly increasing (an
        // index at or below the row's largest is checked for a repeat, then the row sorted),
        // every index below the width (at most `n_features`, else counted in `max_index`), and
        // the width at most MAX_ALLOWED (checked at the start), so its columns fit u32.
        let x = CsrMatrix::from_valid_parts(width, self.indptr, self.indices, self.values);
        Ok((x, Array1::from(self.labels)))
    }
}

/// Asks the kernel to back the whole 2 MiB pages inside the spare capacity of `v` by huge pages
/// (`madvise(MADV_HUGEPAGE)`, Linux with transparent huge pages set to `madvise` or `always`):
/// a matrix of tens of MB is then paged in by a few faults instead of thousands (ijcnn1's two
/// files as the authors' code reads them, 25 MB of matrix: 2.6 ms less of the 35 ms read, on a
/// Zen 4). Only a hint: nothing changes where it is refused or unsupported.
fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let (first, last) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if first < last {
            // SAFETY: [first, last) lies inside the allocation of `v`, which this process owns;
            // MADV_HUGEPAGE changes how its pages are backed, never what they hold.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// The first position from `pos` on that is not ASCII whitespace (or the end).
fn skip_space(b: &[u8], mut pos: usize) -> usize {
    while pos < b.len() && b[pos].is_ascii_whitespace() {
        pos += 1;
    }
    pos
}

/// Whether `c` ends a token: ASCII whitespace or `#`.
fn ends_token(c: u8) -> bool {
    c.is_ascii_whitespace() || c == b'#'
}

/// The end of the token that starts at `pos`.
fn token_end(b: &[u8], mut pos: usize) -> usize {
    while pos < b.len() && !ends_token(b[pos]) {
        pos += 1;
    }
    pos
}

/// The common token `digits:number` at `b[pos..]`, up to the next whitespace, `#` or the end,
/// when its index has at most 19 digits (no sign) and [`fast_f64`] reads all of its value:
/// `(index, value, end of token)`. Such a token means the same to [`Parser::token`].
fn fast_entry(b: &[u8], pos: usize) -> Option<(usize, f64, usize)> {
    // At most 19 digits, below 10^19 < 2^64.
    let (idx, i) = digit_run(&Sliced(b), pos, 0);
    if i == pos || i - pos > 19 || b.get(i) != Some(&b':') {
        return None;
    }
    let idx = usize::try_from(idx).ok()?;
    let (val, len) = fast_f64(&b[i + 1..])?;
    let end = i + 1 + len;
    if end < b.len() && !ends_token(b[end]) {
        return None;
    }
    Some((idx, val, end))
}

/// `usize::from_str` by hand (an optional `+`, then decimal digits; `None` on overflow).
fn parse_index(s: &[u8]) -> Option<usize> {
    let digits = s.strip_prefix(b"+").unwrap_or(s);
    if digits.is_empty() {
        return None;
    }
    let mut n = 0usize;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(usize::from(d))?;
    }
    Some(n)
}

/// `s.parse::<f64>().ok()`: [`fast_f64`] when it reads all of `s`, else the standard library.
fn parse_f64(s: &str) -> Option<f64> {
    match fast_f64(s.as_bytes()) {
        Some((v, len)) if len == s.len() => Some(v),
        _ => s.parse().ok(),
    }
}

/// The exactly representable powers of ten, `1e0 ..= 1e22`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Clinger's fast path for short decimals such as `-7.31854e-1`, `1`, `+0.25` or `3E5` at the
/// start of `s`: `[+-]? digits ['.' digits] [('e'|'E') [+-]? digits]`, with 1 to 19 mantissa
/// digits in all and 1 to 4 exponent digits. When the mantissa digits (without the point)
/// make an integer `m <= 2^53` and the decimal exponent `e` (that of the `e` part minus the
/// number of digits after the point) lies in `-22..=22`, both `m` and `10^|e|` are exact
/// doubles, so the one IEEE multiplication `m * 10^e` (division `m / 10^-e`) is the correctly
/// rounded value: the same bits as `str::parse`, which takes this path itself. Returns the
/// value and the number of bytes read, or `None` when the number at the start is not of this
/// kind (then `str::parse` decides). What follows the number is the caller's business.
fn fast_f64(s: &[u8]) -> Option<(f64, usize)> {
    clinger(&Sliced(s), 0)
}

/// Bytes read one at a time by [`clinger`]: `at(i)` is byte i, or 0 past the end (0 is none of
/// the bytes a number is made of, so a number ends there as at any other such byte).
trait Bytes {
    fn at(&self, i: usize) -> u8;
}

/// A slice, its end checked at every byte.
struct Sliced<'a>(&'a [u8]);

impl Bytes for Sliced<'_> {
    #[inline(always)]
    fn at(&self, i: usize) -> u8 {
        self.0.get(i).copied().unwrap_or(0)
    }
}

/// A slice whose last byte is `\n`, read from a position at or before it: a number stops at
/// the `\n` at the latest, so no read goes past the end.
struct Ended<'a>(&'a [u8]);

impl Bytes for Ended<'_> {
    #[inline(always)]
    fn at(&self, i: usize) -> u8 {
        self.0[i]
    }
}

/// The decimal digits from `b[i..]` appended to `acc` (`10·acc + d`, wrapping: the caller
/// bounds the count of digits) and the position after them.
#[inline(always)]
fn digit_run(b: &impl Bytes, mut i: usize, mut acc: u64) -> (u64, usize) {
    while b.at(i).is_ascii_digit() {
        acc = acc.wrapping_mul(10).wrapping_add(u64::from(b.at(i) - b'0'));
        i += 1;
    }
    (acc, i)
}

/// [`fast_f64`] of the number at `b[start..]`: its value and the position after it. The checks
/// that a number needs no other path are made once each, not digit by digit.
#[inline(always)]
fn clinger(b: &impl Bytes, start: usize) -> Option<(f64, usize)> {
    let sign = b.at(start);
    let negative = sign == b'-';
    let mut i = start + usize::from(sign == b'-' || sign == b'+');
    // Wrapping: more than 19 digits are rejected below, before `m` is used.
    let digits = i;
    let (mut m, end) = digit_run(b, i, 0);
    i = end;
    let mut n_digits = i - digits;
    let mut e = 0i64;
    if b.at(i) == b'.' {
        let fraction = i + 1;
        (m, i) = digit_run(b, fraction, m);
        n_digits += i - fraction;
        e = -((i - fraction) as i64);
    }
    if (n_digits == 0) | (n_digits > 19) | (m > 1 << 53) {
        return None;
    }
    // 'e' or 'E'.
    if b.at(i) | 0x20 == b'e' {
        i += 1;
        let sign = b.at(i);
        let exp_negative = sign == b'-';
        i += usize::from(sign == b'-' || sign == b'+');
        // Wrapping: more than 4 digits are rejected below.
        let digits = i;
        let (exp, end) = digit_run(b, i, 0);
        i = end;
        if (i == digits) | (i - digits > 4) {
            return None;
        }
        let exp = exp as i64;
        e += if exp_negative { -exp } else { exp };
    }
    if !(-22..=22).contains(&e) {
        return None;
    }
    let v = m as f64;
    let v = if e < 0 {
        v / POW10[e.unsigned_abs() as usize]
    } else {
        v * POW10[e as usize]
    };
    // The sign set by its bit, not chosen by a branch: a value's sign is data, which a branch
    // predicts badly (ijcnn1's two files: 30.8 -> 28.2 ms on a Zen 4). v is not negative (nor
    // NaN), so setting the bit is negation, -0.0 included.
    let v = f64::from_bits(v.to_bits() | (u64::from(negative) << 63));
    Some((v, i - start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    fn parse(text: &str, n: Option<usize>) -> Result<(Array2<f64>, Array1<f64>), DatasetError> {
        parse_svmlight(Cursor::new(text.as_bytes().to_vec()), Path::new("t.svm"), n)
    }

    #[test]
    fn hand_written_file() {
        let text = "-1.0 1:0.5 3:0.0 4:-2   \n\
                    1.0 2:1 qid:7 4:1e-1 # comment\n\
                    \n\
                    +1 \n\
                    -1 3:0.0\n";
        let (x, y) = parse(text, None).unwrap();
        assert_eq!(y, ndarray::array![-1.0, 1.0, 1.0, -1.0]);
        assert_eq!(
            x,
            ndarray::array![
                [0.5, 0.0, 0.0, -2.0],
                [0.0, 1.0, 0.0, 0.1],
                [0.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 0.0]
            ]
        );
        let (x, _) = parse(text, Some(6)).unwrap();
        assert_eq!(x.dim(), (4, 6));
    }

    #[test]
    fn errors_name_line_and_token() {
        let e = parse("1 1:1\n1 0:1\n", None).unwrap_err();
        assert!(
            matches!(
                e,
                DatasetError::Parse {
                    line: 2,
                    column: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("1-based"), "{e}");
        let e = parse("x 1:1\n", None).unwrap_err();
        assert!(
            matches!(
                e,
                DatasetError::Parse {
                    line: 1,
                    column: 1,
                    ..
                }
            ),
            "{e}"
        );
        let e = parse("1 1:1 2:abc\n", None).unwrap_err();
        assert!(matches!(e, DatasetError::Parse { column: 3, .. }), "{e}");
        let e = parse("1 5:1\n", Some(4)).unwrap_err();
        assert!(e.to_string().contains("n_features = 4"), "{e}");
        let e = parse("1 3:1 1:1 3:3\n", None).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let e = parse("1 2\n", None).unwrap_err();
        assert!(e.to_string().contains("index:value"), "{e}");
    }

    #[test]
    fn sparse_reader_drops_explicit_zeros_and_sorts_rows() {
        let text = "-1 4:2 1:0.5 3:0.0\n+1 2:-0\n1 5:1\n";
        let (x, y) = parse_svmlight_sparse(
            Cursor::new(text.as_bytes().to_vec()),
            Path::new("t.svm"),
            None,
        )
        .unwrap();
        assert_eq!(y, ndarray::array![-1.0, 1.0, 1.0]);
        assert_eq!((x.n_rows(), x.n_cols(), x.nnz()), (3, 5, 3));
        assert_eq!(x.row(0), (&[0u32, 3][..], &[0.5, 2.0][..]));
        assert_eq!(x.row(1), (&[][..], &[][..]));
        // The dense reader is the same parse.
        let (d, yd) = parse(text, None).unwrap();
        assert_eq!(d, x.to_dense());
        assert_eq!(yd, y);
        // Explicit zeros still count towards the inferred width.
        let (x, _) = parse_svmlight_sparse(
            Cursor::new(b"1 1:1 7:0\n".to_vec()),
            Path::new("t.svm"),
            None,
        )
        .unwrap();
        assert_eq!((x.n_cols(), x.nnz()), (7, 1));
    }

    /// The line-by-line reader this module had before the block reader: the reference the
    /// fast one must match (same matrix and labels, or the same error).
    fn reference_parse(
        mut reader: impl BufRead,
        source: &Path,
        n_features: Option<usize>,
    ) -> Result<(CsrMatrix, Array1<f64>), DatasetError> {
        let err = |line: usize, column: usize, message: String| DatasetError::Parse {
            path: source.to_path_buf(),
            line,
            column,
            message,
        };
        let max_allowed = u32::MAX as usize + 1;
        if let Some(n) = n_features {
            if n > max_allowed {
                return Err(DatasetError::Format {
                    path: source.to_path_buf(),
                    message: format!("n_features = {n} exceeds the supported {max_allowed}"),
                });
            }
        }
        let mut labels = Vec::new();
        let mut indptr = vec![0usize];
        let mut indices: Vec<u32> = Vec::new();
        let mut values: Vec<f64> = Vec::new();
        let mut max_index = 0usize;
        let mut buf = String::new();
        let mut line_no = 0usize;
        let mut seen: Vec<usize> = Vec::new();
        let mut row: Vec<(u32, f64)> = Vec::new();
        loop {
            buf.clear();
            let n = reader.read_line(&mut buf).map_err(|e| {
                if e.kind() == std::io::ErrorKind::InvalidData {
                    err(line_no + 1, 1, "not valid UTF-8".into())
                } else {
                    DatasetError::io(source, e)
                }
            })?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let content = buf.split('#').next().unwrap_or("");
            let mut tokens = content.split_ascii_whitespace();
            let Some(label) = tokens.next() else {
                continue;
            };
            let label: f64 = label
                .parse()
                .map_err(|_| err(line_no, 1, format!("label `{label}` is not a number")))?;
            labels.push(label);
            seen.clear();
            row.clear();
            let mut row_max = 0usize;
            let mut sorted = true;
            for (k, token) in tokens.enumerate() {
                let column = k + 2;
                if token.starts_with("qid:") {
                    continue;
                }
                let Some((idx, val)) = token.split_once(':') else {
                    return Err(err(
                        line_no,
                        column,
                        format!("expected `index:value`, found `{token}`"),
                    ));
                };
                let idx: usize = idx.parse().map_err(|_| {
                    err(
                        line_no,
                        column,
                        format!("feature index `{idx}` is not a positive integer"),
                    )
                })?;
                if idx == 0 {
                    return Err(err(
                        line_no,
                        column,
                        "feature index 0: svmlight indices are 1-based".into(),
                    ));
                }
                if let Some(n) = n_features {
                    if idx > n {
                        return Err(err(
                            line_no,
                            column,
                            format!("feature index {idx} exceeds n_features = {n}; pass a larger n_features"),
                        ));
                    }
                } else if idx > max_allowed {
                    return Err(err(
                        line_no,
                        column,
                        format!("feature index {idx} exceeds the supported {max_allowed}"),
                    ));
                }
                if idx <= row_max {
                    if seen.contains(&idx) {
                        return Err(err(
                            line_no,
                            column,
                            format!("feature index {idx} appears twice in one row"),
                        ));
                    }
                    sorted = false;
                }
                seen.push(idx);
                row_max = row_max.max(idx);
                let val: f64 = val.parse().map_err(|_| {
                    err(
                        line_no,
                        column,
                        format!("value `{val}` of feature {idx} is not a number"),
                    )
                })?;
                max_index = max_index.max(idx);
                if val != 0.0 {
                    row.push(((idx - 1) as u32, val));
                }
            }
            if !sorted {
                row.sort_unstable_by_key(|&(c, _)| c);
            }
            for &(c, v) in &row {
                indices.push(c);
                values.push(v);
            }
            indptr.push(indices.len());
        }
        let width = n_features.unwrap_or(max_index);
        let x = CsrMatrix::from_parts(width, indptr, indices, values).map_err(|e| {
            DatasetError::Format {
                path: source.to_path_buf(),
                message: e.to_string(),
            }
        })?;
        Ok((x, Array1::from(labels)))
    }

    /// A reader that hands out at most `piece` bytes per call, to cut lines across blocks.
    struct Pieces<'a> {
        data: &'a [u8],
        piece: usize,
    }

    impl std::io::Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.piece).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    type Parsed = Result<(CsrMatrix, Array1<f64>), DatasetError>;

    /// The fast reader on `text`, read `piece` bytes at a time into blocks of `block` bytes.
    fn fast(
        text: &[u8],
        n: Option<usize>,
        block: usize,
        piece: usize,
        hint: Option<u64>,
    ) -> Parsed {
        let reader = std::io::BufReader::with_capacity(piece, Pieces { data: text, piece });
        parse_in_blocks(reader, Path::new("t.svm"), n, block, hint)
    }

    fn reference(text: &[u8], n: Option<usize>) -> Parsed {
        reference_parse(Cursor::new(text), Path::new("t.svm"), n)
    }

    /// Same matrix and labels (bit for bit), or the same error.
    fn assert_same(got: &Parsed, want: &Parsed, text: &[u8]) {
        let text = String::from_utf8_lossy(text);
        match (got, want) {
            (Ok((x, y)), Ok((xr, yr))) => {
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(x.n_cols(), xr.n_cols(), "{text:?}");
                assert_eq!(x.indptr(), xr.indptr(), "{text:?}");
                assert_eq!(x.indices(), xr.indices(), "{text:?}");
                assert_eq!(bits(x.values()), bits(xr.values()), "{text:?}");
                assert_eq!(
                    bits(y.as_slice().unwrap()),
                    bits(yr.as_slice().unwrap()),
                    "{text:?}"
                );
            }
            (Err(e), Err(er)) => {
                match (e, er) {
                    (
                        DatasetError::Parse { line, column, .. },
                        DatasetError::Parse {
                            line: line_r,
                            column: column_r,
                            ..
                        },
                    ) => assert_eq!((line, column), (line_r, column_r), "{text:?}"),
                    (DatasetError::Format { .. }, DatasetError::Format { .. }) => {}
                    _ => panic!("{e:?} vs {er:?} on {text:?}"),
                }
                assert_eq!(e.to_string(), er.to_string(), "{text:?}");
            }
            _ => panic!(
                "{:?} vs {:?} on {text:?}",
                got.as_ref().err(),
                want.as_ref().err()
            ),
        }
    }

    fn check(text: &[u8], n: Option<usize>) {
        let want = reference(text, n);
        assert_same(
            &parse_svmlight_sparse(text, Path::new("t.svm"), n),
            &want,
            text,
        );
        for (block, piece) in [(1, 1), (3, 2), (8, 5), (64, 64), (7, 1000)] {
            assert_same(&fast(text, n, block, piece, None), &want, text);
            let hint = Some(text.len() as u64);
            assert_same(&fast(text, n, block, piece, hint), &want, text);
        }
    }

    #[test]
    fn same_as_reference_on_edge_cases() {
        let cases: &[&[u8]] = &[
            b"",
            b"\n\n",
            b"1",
            b"1 2:3",
            b"  -1 1:1\t2:2 \r\n+1 3:-0\r\n",
            b"1 +3:1 003:2\n",
            b"1 1:1:1\n",
            b"1 qid:abc 2:1 qidx:1\n",
            b"1 2:1#c\n1 #2:1\n#1 1:1\n1 3:1 # x 4:y\n",
            b"1 99999999999999999999:1\n",
            b"1 18446744073709551615:1\n",
            b"1 4294967296:1\n",
            b"1 4294967297:1\n",
            b"nan 1:nan 2:inf 3:-inf 4:1e400 5:1e-400 6:-0.0\n",
            b"-0 1:0x1\n",
            b"1 1:1e\n",
            b"1 1:.\n",
            b"1 1:+.5 2:5. 3:1.e3 4:-.5E-3 5:1e0022 6:1e00022\n",
            b"1 1:9007199254740993 2:9007199254740992 3:123456789012345678901\n",
            b"1 1:1e22 2:1e23 3:1e-22 4:1e-23 5:4.9e-324 6:1.7976931348623157e308\n",
            b"1 3:1 1:2 2:0 2:1\n",
            b"1 3:1 2:0 1:2 4:4\n",
            b"1 1:1\n1 0:1\n",
            b"1 1:1\n\xff\n",
            b"1 1:1\n1 1:1 # \xc3\xa9 \xff\n",
            b"1 1:1\n1 \xc3\xa9:1\n",
            b"1 1:\xc3\xa9\n",
            b"1 1:1\n\xc3",
            b"1\x0b1:1\n",
            b"1\x0c1:1\n",
            b"1 :1\n",
            b"1 1:\n",
            b"1 5\n",
            // Lines that start in the common form and leave it: their entries so far are
            // dropped and the general rules read the whole line.
            b"-1 1:1 3:2.5e-1 2:4\n+1 1:1\n",
            b"1 1:1 2:0 2:1\n1 2:1\n",
            b"1 1:1 2:2  3:3\n1 1:1 2:2 \n1 1:1 2:2\t3:3\n",
            b"1 1:1 2:2 3:x\n",
            b"1 1:1 2:2 1234567890123456789:3\n1 1:1 2:1e400\n",
            b"1 1:1 2:2#c\n1 1:1 5:1\n",
            b"1 1:1 2:2 qid:3 4:4\n",
            b"1.5e0 1:1 2:-0 3:0.0 4:1\n2 1:1 2:\xc3\xa9\n",
        ];
        for text in cases {
            for n in [None, Some(0), Some(3), Some(4294967296)] {
                check(text, n);
            }
        }
        check(b"1 1:1\n", Some(4294967297));
    }

    #[test]
    fn io_errors_come_after_earlier_parse_errors() {
        struct Failing(Vec<u8>);
        impl std::io::Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.0.is_empty() {
                    return Err(std::io::Error::other("disk on fire"));
                }
                let n = buf.len().min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0.drain(..n);
                Ok(n)
            }
        }
        let read = |text: &[u8]| {
            parse_svmlight_sparse(
                std::io::BufReader::new(Failing(text.to_vec())),
                Path::new("t.svm"),
                None,
            )
            .unwrap_err()
        };
        let e = read(b"1 1:1\n1 x\n1 2:2");
        assert!(
            matches!(
                e,
                DatasetError::Parse {
                    line: 2,
                    column: 2,
                    ..
                }
            ),
            "{e}"
        );
        let e = read(b"1 1:1\n1 2:2");
        assert!(matches!(e, DatasetError::Io { .. }), "{e}");
        assert!(e.to_string().contains("disk on fire"), "{e}");
    }

    #[test]
    fn files_plain_and_gzip_read_the_same() {
        use std::io::Write;
        // Dense rows first, then sparse ones: the reservation from the first block is too big.
        let mut text = String::new();
        for i in 0..3000 {
            text.push_str(if i % 2 == 0 { "-1" } else { "+1" });
            let width = if i < 1000 { 40 } else { 2 };
            for j in 1..=width {
                text.push_str(&format!(" {}:{}e-{}", j * 3, i % 7, j % 5));
            }
            text.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("t.svm");
        std::fs::write(&plain, &text).unwrap();
        let packed = dir.path().join("t.svm.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text.as_bytes()).unwrap();
        std::fs::write(&packed, enc.finish().unwrap()).unwrap();
        let want = reference(text.as_bytes(), None);
        assert_same(&read_svmlight_sparse(&plain, None), &want, b"plain");
        assert_same(&read_svmlight_sparse(&packed, None), &want, b"gzip");
        let (d, y) = read_svmlight(&plain, Some(200)).unwrap();
        let (xr, yr) = reference(text.as_bytes(), Some(200)).unwrap();
        assert_eq!((d, y), (xr.to_dense(), yr));
    }

    /// Short decimals, the kind [`fast_f64`] reads, and their neighbours it leaves to
    /// `str::parse`.
    fn decimal() -> impl Strategy<Value = String> {
        (
            prop::sample::select(vec!["", "+", "-"]),
            "[0-9]{0,21}",
            prop::option::of("[0-9]{0,21}"),
            prop::option::of((
                "[eE]",
                prop::sample::select(vec!["", "+", "-"]),
                "[0-9]{0,6}",
            )),
            prop::sample::select(vec!["", "", "", " ", ":", ".", "e", "x", "#"]),
        )
            .prop_map(|(sign, int, frac, exp, tail)| {
                let mut s = format!("{sign}{int}");
                if let Some(frac) = frac {
                    s.push('.');
                    s.push_str(&frac);
                }
                if let Some((e, esign, digits)) = exp {
                    s.push_str(&format!("{e}{esign}{digits}"));
                }
                s.push_str(tail);
                s
            })
    }

    /// A value token: mostly well formed, sometimes explicit zeros, specials or junk.
    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => any::<f64>().prop_map(|v| format!("{v}")),
            6 => any::<f64>().prop_map(|v| format!("{v:e}")),
            6 => (-1e3..1e3f64, 0usize..8).prop_map(|(v, p)| format!("{v:.p$e}")),
            3 => (-1e3..1e3f64, 0usize..8).prop_map(|(v, p)| format!("{v:.p$}")),
            4 => prop::sample::select(vec!["0", "-0", "0.0", "0e0", "1", "-1", "1e0", "-7.31854e-1", "+.5", "5.", "1E+5"])
                .prop_map(String::from),
            1 => prop::sample::select(vec!["nan", "inf", "-inf", "infinity", "1e400", "1e-400", "9007199254740993"])
                .prop_map(String::from),
            1 => decimal(),
            1 => prop::sample::select(vec!["", "abc", "1e", "1.2.3", "--1", "0x10", "1:2", "\u{e9}"])
                .prop_map(String::from),
        ]
    }

    /// A valid value token.
    fn good_value() -> impl Strategy<Value = String> {
        prop_oneof![
            2 => any::<f64>().prop_map(|v| format!("{v}")),
            2 => any::<f64>().prop_map(|v| format!("{v:e}")),
            6 => (-1e3..1e3f64, 0usize..8).prop_map(|(v, p)| format!("{v:.p$e}")),
            2 => (-1e3..1e3f64, 0usize..8).prop_map(|(v, p)| format!("{v:.p$}")),
            2 => prop::sample::select(vec!["0", "-0", "0.0", "0e0", "1", "-1", "1e0", "-7.31854e-1", "+.5", "5.", "1E+5", "inf", "1e-400"])
                .prop_map(String::from),
        ]
    }

    /// One line of svmlight-like text, without its line end: `clean` lines are valid
    /// (distinct indices in any order, explicit zeros, `qid:`, comments), the others may hold
    /// any mistake.
    fn line(clean: bool) -> BoxedStrategy<Vec<u8>> {
        let sep = prop::sample::select(vec![" ", " ", " ", "  ", "\t", " \t", "\r", "\x0c"]);
        let indent = prop::sample::select(vec!["", "", "", " ", "\t"]);
        let trailing = prop::sample::select(vec![
            "",
            "",
            "",
            " ",
            "  \t",
            " # comment",
            "#\u{e9}",
            "# 1:1",
        ]);
        if clean {
            let label = prop::sample::select(vec![
                "-1", "+1", "1", "0", "-1.0", "1.0", "2.5e3", "-0", "+.5",
            ]);
            let entries = prop::sample::subsequence((1..=20).collect::<Vec<usize>>(), 0..10)
                .prop_shuffle()
                .prop_flat_map(|indices| {
                    let n = indices.len();
                    (Just(indices), prop::collection::vec(good_value(), n))
                });
            let qid = prop::option::weighted(0.1, 0usize..10);
            (indent, label, entries, sep, qid, trailing)
                .prop_map(|(indent, label, (indices, values), sep, qid, trailing)| {
                    let mut s = format!("{indent}{label}");
                    if let Some(q) = qid {
                        s.push_str(&format!(" qid:{q}"));
                    }
                    for (i, v) in indices.iter().zip(&values) {
                        s.push_str(&format!("{sep}{i}:{v}"));
                    }
                    s.push_str(trailing);
                    s.into_bytes()
                })
                .boxed()
        } else {
            let label = prop_oneof![
                8 => prop::sample::select(vec!["-1", "+1", "1", "0", "-1.0", "1.0", "nan", "+.5"]).prop_map(String::from),
                1 => prop::sample::select(vec!["x", "1..0", "--1", "1e", "3:1", "qid:1", ""]).prop_map(String::from),
            ];
            let index = prop_oneof![
                12 => (1usize..=12).prop_map(|i| i.to_string()),
                1 => prop::sample::select(vec!["0", "+3", "003", "-1", "", "x", "4294967296", "4294967297", "99999999999999999999"])
                    .prop_map(String::from),
            ];
            let entry = prop_oneof![
                16 => (index, value()).prop_map(|(i, v)| format!("{i}:{v}")),
                1 => prop::sample::select(vec!["qid:3", "qid:", "qidx:1", "5", "#c", "1:2#c", "#"]).prop_map(String::from),
            ];
            let junk = prop::option::weighted(
                0.1,
                (
                    any::<prop::sample::Index>(),
                    prop::sample::select(vec![0xffu8, 0xc3, 0x80, 0x0b]),
                ),
            );
            (
                indent,
                label,
                prop::collection::vec((sep, entry), 0..6),
                trailing,
                junk,
            )
                .prop_map(|(indent, label, entries, trailing, junk)| {
                    let mut s = format!("{indent}{label}");
                    for (sep, entry) in entries {
                        s.push_str(sep);
                        s.push_str(&entry);
                    }
                    s.push_str(trailing);
                    let mut bytes = s.into_bytes();
                    if let Some((at, byte)) = junk {
                        bytes.insert(at.index(bytes.len() + 1), byte);
                    }
                    bytes
                })
                .boxed()
        }
    }

    /// Lines joined by random line ends (a line without one joins the next).
    fn text() -> impl Strategy<Value = Vec<u8>> {
        let lines = prop_oneof![
            prop::collection::vec(line(true), 0..12),
            prop::collection::vec(prop_oneof![4 => line(true), 1 => line(false)], 0..12),
        ];
        let ends = prop::collection::vec(
            prop::sample::select(vec!["\n", "\n", "\n", "\r\n", "\n\n", ""]),
            12,
        );
        (lines, ends).prop_map(|(lines, ends)| {
            let mut text = Vec::new();
            for (line, end) in lines.iter().zip(&ends) {
                text.extend_from_slice(line);
                text.extend_from_slice(end.as_bytes());
            }
            text
        })
    }

    /// The common line writes into room `lines` made; without it, it leaves the line to the
    /// general rules (and stores nothing), which grow the vectors.
    #[test]
    fn common_line_without_room_leaves_the_line_to_the_general_rules() {
        let text = b"-1 2:0.5 4:-3e-1\n";
        let mut parser = Parser::new(Path::new("t.svm"), None, 64);
        assert_eq!(parser.indices.capacity(), 0);
        assert_eq!(parser.common_line(text, 0), None);
        assert_eq!((parser.labels.len(), parser.indices.len()), (0, 0));
        parser.indices.reserve_exact(2);
        parser.values.reserve_exact(2);
        assert_eq!(parser.common_line(text, 0), Some(text.len()));
        let mut parser = Parser::new(Path::new("t.svm"), None, 64);
        parser.other_line(&text[..text.len() - 1]).unwrap();
        parser.lines(text).unwrap();
        let (x, y) = parser.finish().unwrap();
        assert_eq!(y.to_vec(), vec![-1.0, -1.0]);
        assert_eq!(x.row(0), (&[1u32, 3][..], &[0.5, -0.3][..]));
        assert_eq!(x.row(1), x.row(0));
    }

    proptest::proptest! {
        #[test]
        fn fast_f64_agrees_with_std(s in decimal()) {
            if let Some((v, len)) = fast_f64(s.as_bytes()) {
                let want: f64 = s[..len].parse().unwrap();
                proptest::prop_assert_eq!(v.to_bits(), want.to_bits(), "{}", s);
            }
            let want = s.parse::<f64>().ok().map(f64::to_bits);
            proptest::prop_assert_eq!(parse_f64(&s).map(f64::to_bits), want, "{}", s);
        }

        #[test]
        fn parse_f64_round_trips(v in any::<f64>(), p in 0usize..20) {
            for s in [format!("{v}"), format!("{v:e}"), format!("{v:?}"), format!("{v:.p$e}"), format!("{v:E}")] {
                let want = s.parse::<f64>().ok().map(f64::to_bits);
                proptest::prop_assert_eq!(parse_f64(&s).map(f64::to_bits), want, "{}", s);
            }
        }

        #[test]
        fn same_as_reference_on_random_text(
            text in text(),
            n in prop::option::weighted(0.3, 0usize..24),
            block in 1usize..40,
            piece in 1usize..50,
            hint in prop::option::of(0u64..400),
        ) {
            let want = reference(&text, n);
            assert_same(&fast(&text, n, block, piece, hint), &want, &text);
            assert_same(&parse_svmlight_sparse(&text[..], Path::new("t.svm"), n), &want, &text);
        }
    }
}
