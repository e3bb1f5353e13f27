//! IDX binary tensors (the MNIST format), optionally gzip (detected by magic bytes).
//!
//! Layout: two zero bytes, a type code (0x08 = unsigned byte), the number of dimensions, each
//! dimension as a big-endian u32, then the values in row-major order.

use std::path::Path;

use ndarray::{Array1, Array2};

use crate::error::DatasetError;
use crate::gz::read_maybe_gz;

/// An IDX tensor of unsigned bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idx {
    /// Dimensions, outermost first (MNIST images: `[10000, 28, 28]`).
    pub dims: Vec<usize>,
    /// Values in row-major order; `data.len()` is the product of `dims`.
    pub data: Vec<u8>,
}

impl Idx {
    /// Number of items (the first dimension).
    pub fn n_items(&self) -> usize {
        self.dims.first().copied().unwrap_or(0)
    }

    /// The tensor as a matrix: one row per item, the remaining dimensions flattened
    /// (MNIST images: 10000 x 784). A one-dimensional tensor gives one column. Fails only if
    /// `data.len()` is not the product of `dims` (never for the output of [`parse_idx`]).
    pub fn to_matrix(&self) -> Result<Array2<u8>, ndarray::ShapeError> {
        let rows = self.n_items();
        let cols = self.dims.iter().skip(1).product::<usize>();
        Array2::from_shape_vec((rows, cols), self.data.clone())
    }

    /// The tensor as a vector (for labels).
    pub fn to_vector(&self) -> Array1<u8> {
        Array1::from(self.data.clone())
    }
}

/// Name of an IDX type code, for error messages.
fn type_name(code: u8) -> Option<&'static str> {
    match code {
        0x08 => Some("unsigned byte"),
        0x09 => Some("signed byte"),
        0x0B => Some("i16"),
        0x0C => Some("i32"),
        0x0D => Some("f32"),
        0x0E => Some("f64"),
        _ => None,
    }
}

/// Reads an IDX file (gzip or not).
pub fn read_idx(path: &Path) -> Result<Idx, DatasetError> {
    parse_idx(&read_maybe_gz(path)?, path)
}

/// Parses IDX bytes; `source` names them in error messages.
pub fn parse_idx(bytes: &[u8], source: &Path) -> Result<Idx, DatasetError> {
    let err = |message: String| DatasetError::Format {
        path: source.to_path_buf(),
        message,
    };
    if bytes.len() < 4 {
        return Err(err(format!(
            "too short for an IDX header ({} bytes); is this an IDX file?",
            bytes.len()
        )));
    }
    if bytes[0] != 0 || bytes[1] != 0 {
        return Err(err(format!(
            "bad IDX magic {:02x} {:02x} {:02x} {:02x}: must start with two zero bytes",
            bytes[0], bytes[1], bytes[2], bytes[3]
        )));
    }
    let code = bytes[2];
    match type_name(code) {
        Some(_) if code == 0x08 => {}
        Some(name) => {
            return Err(err(format!(
                "IDX type 0x{code:02x} ({name}) is not supported; only unsigned bytes (0x08)"
            )))
        }
        None => return Err(err(format!("unknown IDX type code 0x{code:02x}"))),
    }
    let ndims = usize::from(bytes[3]);
    if ndims == 0 {
        return Err(err("IDX header declares 0 dimensions".into()));
    }
    let header_len = 4 + 4 * ndims;
    if bytes.len() < header_len {
        return Err(err(format!(
            "truncated IDX header: {ndims} dimensions need {header_len} bytes, file has {}",
            bytes.len()
        )));
    }
    let dims: Vec<usize> = bytes[4..header_len]
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
        .collect();
    let expected = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| err(format!("IDX dimensions {dims:?} overflow")))?;
    let found = bytes.len() - header_len;
    if found != expected {
        return Err(err(format!(
            "IDX dimensions {dims:?} need {expected} data bytes, file has {found} ({})",
            if found < expected {
                "truncated"
            } else {
                "trailing bytes"
            }
        )));
    }
    Ok(Idx {
        dims,
        data: bytes[header_len..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_small_tensor() {
        let bytes = [0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6];
        let idx = parse_idx(&bytes, Path::new("t")).unwrap();
        assert_eq!(idx.dims, vec![2, 3]);
        assert_eq!(idx.n_items(), 2);
        assert_eq!(
            idx.to_matrix().unwrap(),
            ndarray::array![[1, 2, 3], [4, 5, 6]]
        );
    }

    #[test]
    fn rejects_bad_headers() {
        let p = Path::new("t");
        assert!(parse_idx(&[0, 0, 8], p).is_err());
        assert!(parse_idx(&[1, 0, 8, 1, 0, 0, 0, 0], p).is_err());
        let e = parse_idx(&[0, 0, 0x0D, 1, 0, 0, 0, 0], p).unwrap_err();
        assert!(e.to_string().contains("f32"), "{e}");
        assert!(parse_idx(&[0, 0, 8, 0], p).is_err());
        assert!(parse_idx(&[0, 0, 8, 2, 0, 0, 0, 1], p).is_err());
        let e = parse_idx(&[0, 0, 8, 1, 0, 0, 0, 3, 1, 2], p).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        let e = parse_idx(&[0, 0, 8, 1, 0, 0, 0, 1, 1, 2], p).unwrap_err();
        assert!(e.to_string().contains("trailing"), "{e}");
    }
}
