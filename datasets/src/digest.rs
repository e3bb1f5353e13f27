//! sha256 of files (raw and decompressed), memoised per process.
//!
//! Digests are cached in a process-wide map keyed by (absolute path, length, mtime), so a file
//! is hashed once however often its dataset is looked up; touching or rewriting the file changes
//! the key and forces a rehash.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use flate2::read::MultiGzDecoder;
use sha2::{Digest, Sha256};

use crate::error::DatasetError;
use crate::gz::is_gzip;
use crate::registry::DataFile;

/// How a file matched its registry entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// The file's bytes have the registered `sha256`.
    Exact,
    /// The decompressed bytes (or the bytes of an uncompressed copy) have the registered
    /// `content_sha256`: e.g. a download gzipped locally.
    Content,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    path: PathBuf,
    len: u64,
    mtime: SystemTime,
}

#[derive(Clone, Default)]
struct Entry {
    raw: Option<String>,
    /// `Ok(digest)` of the decompressed bytes, or `Err(message)` when they cannot be read.
    content: Option<Result<String, String>>,
}

fn cache() -> &'static Mutex<HashMap<Key, Entry>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Entry>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn key_of(path: &Path) -> Result<Option<Key>, DatasetError> {
    let meta = std::fs::metadata(path).map_err(|e| DatasetError::io(path, e))?;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    Ok(meta.modified().ok().map(|mtime| Key {
        path: abs,
        len: meta.len(),
        mtime,
    }))
}

fn with_entry<T>(key: &Option<Key>, f: impl FnOnce(&mut Entry) -> T) -> Option<T> {
    let key = key.as_ref()?;
    // A poisoned lock only means another thread panicked mid-update of a plain map: keep going.
    let mut map = cache().lock().unwrap_or_else(|p| p.into_inner());
    Some(f(map.entry(key.clone()).or_default()))
}

/// Lower-case hex sha256 of everything `reader` yields.
pub fn sha256_reader(mut reader: impl Read) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(hex(&hasher.finalize()))
}

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// sha256 of the file's bytes (memoised by path, length and mtime).
pub fn file_sha256(path: &Path) -> Result<String, DatasetError> {
    let key = key_of(path)?;
    if let Some(Some(d)) = with_entry(&key, |e| e.raw.clone()) {
        return Ok(d);
    }
    let file = File::open(path).map_err(|e| DatasetError::io(path, e))?;
    let digest = sha256_reader(file).map_err(|e| DatasetError::io(path, e))?;
    with_entry(&key, |e| e.raw = Some(digest.clone()));
    Ok(digest)
}

/// sha256 of the decompressed bytes of a gzip file (memoised). `Err(message)` when the gzip
/// stream is corrupt.
fn content_sha256(path: &Path) -> Result<Result<String, String>, DatasetError> {
    let key = key_of(path)?;
    if let Some(Some(d)) = with_entry(&key, |e| e.content.clone()) {
        return Ok(d);
    }
    let file = File::open(path).map_err(|e| DatasetError::io(path, e))?;
    let digest = sha256_reader(MultiGzDecoder::new(file))
        .map_err(|e| format!("<gzip stream unreadable: {e}>"));
    with_entry(&key, |e| e.content = Some(digest.clone()));
    Ok(digest)
}

/// Checks the file at `path` against its registry entry.
///
/// Accepted when the bytes' sha256 is `sha256`, or, for entries with a `content_sha256`, when
/// the bytes' sha256 equals it (an uncompressed copy) or the file is gzip and its decompressed
/// bytes' sha256 equals it (a re-compressed copy). Otherwise a
/// [`DatasetError::DigestMismatch`] naming the file, the expected and the actual digests.
pub fn verify_file(path: &Path, entry: &DataFile) -> Result<Match, DatasetError> {
    let raw = file_sha256(path)?;
    if raw == entry.sha256 {
        return Ok(Match::Exact);
    }
    let mut actual_content = None;
    if let Some(expected_content) = &entry.content_sha256 {
        if &raw == expected_content {
            return Ok(Match::Content);
        }
        if is_gzip(path)? {
            match content_sha256(path)? {
                Ok(d) if &d == expected_content => return Ok(Match::Content),
                Ok(d) => actual_content = Some(d),
                Err(msg) => actual_content = Some(msg),
            }
        }
    }
    Err(DatasetError::DigestMismatch {
        file: path.display().to_string(),
        expected: entry.sha256.clone(),
        actual: raw,
        expected_content: entry.content_sha256.clone(),
        actual_content,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(sha: &str, content: Option<&str>) -> DataFile {
        DataFile {
            role: "data".into(),
            path: "x".into(),
            sha256: sha.into(),
            content_sha256: content.map(Into::into),
            url: None,
            format: None,
        }
    }

    #[test]
    fn known_digest() {
        assert_eq!(
            sha256_bytes(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn cache_is_keyed_by_len_and_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.csv");
        std::fs::write(&p, b"1,2\n").unwrap();
        let good = sha256_bytes(b"1,2\n");
        let e = entry(&good, None);
        assert_eq!(verify_file(&p, &e).unwrap(), Match::Exact);

        // Same length, restored mtime: the memoised digest is used (no rehash), so the edit
        // goes unseen. This is the documented trade-off of keying by (path, len, mtime).
        let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
        std::fs::write(&p, b"1,3\n").unwrap();
        let f = File::options().write(true).open(&p).unwrap();
        f.set_modified(mtime).unwrap();
        drop(f);
        assert_eq!(verify_file(&p, &e).unwrap(), Match::Exact);

        // A new mtime invalidates the entry: the edit is detected.
        let f = File::options().write(true).open(&p).unwrap();
        f.set_modified(mtime + std::time::Duration::from_secs(5))
            .unwrap();
        drop(f);
        let err = verify_file(&p, &e).unwrap_err();
        assert!(matches!(err, DatasetError::DigestMismatch { .. }), "{err}");
    }

    #[test]
    fn corrupt_gzip_is_a_mismatch_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.gz");
        std::fs::write(&p, [0x1f, 0x8b, 8, 0, 1, 2, 3]).unwrap();
        let e = entry(&"0".repeat(64), Some(&"1".repeat(64)));
        let err = verify_file(&p, &e).unwrap_err().to_string();
        assert!(err.contains("gzip stream unreadable"), "{err}");
        assert!(err.contains(&"0".repeat(64)), "{err}");
    }

    #[test]
    fn uncompressed_copy_matches_content_digest() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.gz");
        std::fs::write(&p, b"plain text").unwrap();
        let e = entry(&"0".repeat(64), Some(&sha256_bytes(b"plain text")));
        assert_eq!(verify_file(&p, &e).unwrap(), Match::Content);
    }
}
