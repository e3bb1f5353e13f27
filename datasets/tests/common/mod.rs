//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use datasets::DataDirs;

/// The project root (the workspace directory holding `datasets/`).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crate dir has a parent")
        .to_path_buf()
}

/// `<root>/../shared/datasets`, when it exists; prints a note and returns `None` otherwise.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let dir = project_root().join("..").join("shared").join("datasets");
    if dir.join("SHA256SUMS").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "note: {test} skipped: real data not found at {}",
            dir.display()
        );
        None
    }
}

/// Data directories reading only the shared real data (no env override, no cache), so the
/// tests see exactly the files listed in SHA256SUMS.
pub fn shared_dirs(test: &str) -> Option<DataDirs> {
    let shared = shared_dir(test)?;
    // The shared dir doubles as the (never written) cache, so it is the only directory searched.
    Some(DataDirs::custom(vec![shared.clone()], shared))
}

/// Every regular file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}
