//! Digests and sort keys (a leaf: imports no other module of the harness).

use std::path::Path;

use anyhow::Result;

/// Lowercase hex sha256 of `bytes`.
pub use datasets::digest::sha256_bytes as sha256_hex;

/// sha256 of a file's bytes.
pub fn file_sha256(path: &Path) -> Result<String> {
    Ok(datasets::file_sha256(path)?)
}

/// A sort key that orders embedded numbers by value: "fig9" < "fig10", "Fig. 9" < "Fig. 10".
pub fn natural_key(text: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut letters = String::new();
    let mut digits = String::new();
    for ch in text.chars() {
        if ch.is_ascii_digit() {
            digits.push(ch);
        } else {
            if !digits.is_empty() {
                key.push((
                    std::mem::take(&mut letters),
                    digits.parse().unwrap_or(u64::MAX),
                ));
                digits.clear();
            }
            letters.push(ch);
        }
    }
    key.push((letters, digits.parse().unwrap_or(0)));
    key
}
