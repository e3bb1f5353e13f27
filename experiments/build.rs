//! Embeds, for run manifests and the cell cache:
//! * the locked versions of the workspace's key dependencies;
//! * a fingerprint of every source file that can change a cell's numbers (the algorithm crates,
//!   the datasets crate, the experiment kinds, cell planning and data loading), so a cached cell
//!   computed by other code is never reused.

use std::path::{Path, PathBuf};

/// Source trees and files whose content decides the numbers a cell produces.
const NUMERIC_SOURCES: &[&str] = &[
    "../algorithms",
    "../datasets/src",
    "../datasets/registry.toml",
    "src/kinds",
    "src/cell.rs",
    "src/data.rs",
];

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        entries.sort();
        for e in entries {
            if e.file_name()
                .is_some_and(|n| n != "target" && n != "benches" && n != "tests")
            {
                collect(&e, out);
            }
        }
    } else if path.extension().is_some_and(|e| e == "rs" || e == "toml") {
        out.push(path.to_path_buf());
    }
}

/// FNV-1a, 64 bits: stable across compilers and platforms.
fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn main() {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for source in NUMERIC_SOURCES {
        collect(&manifest_dir.join(source), &mut files);
    }
    // Every file and every folder (for added files) is watched on its own: cargo's scan of a
    // watched folder does not reliably notice edits deeper down.
    let mut watched: Vec<PathBuf> = files.clone();
    watched.extend(
        files
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf)),
    );
    watched.sort();
    watched.dedup();
    for path in &watched {
        // Canonical absolute paths: cargo records a path under the package as relative to it,
        // and a `..`-relative record of the sibling crates was never found stale again.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for file in &files {
        let rel = file.strip_prefix(manifest_dir).unwrap_or(file);
        fnv1a(&mut hash, rel.to_string_lossy().as_bytes());
        fnv1a(&mut hash, &std::fs::read(file).unwrap_or_default());
    }
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("code_fingerprint.txt"), format!("{hash:016x}")).unwrap();

    let lock = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let wanted = [
        "polars",
        "ndarray",
        "ndarray-linalg",
        "rand",
        "rand_chacha",
        "rand_distr",
        "rayon",
        "plotters",
        "serde",
        "toml",
    ];
    // A crate locked at several versions is listed as "a, b".
    let mut found = std::collections::BTreeMap::<String, Vec<String>>::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            if wanted.contains(&n.as_str()) {
                found
                    .entry(n)
                    .or_default()
                    .push(v.trim_matches('"').to_string());
            }
        }
    }
    // An empty read (Cargo.lock being rewritten by a concurrent cargo) must not be cached as
    // "no versions": fail, and the next build reruns this script.
    assert!(
        !lock.exists() || !found.is_empty(),
        "could not read the locked versions from {} (rewritten concurrently?); rebuild",
        lock.display()
    );
    let out: String = found
        .iter()
        .map(|(n, v)| format!("{n}={}\n", v.join(", ")))
        .collect();
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("versions.txt");
    std::fs::write(dest, out).unwrap();
}
