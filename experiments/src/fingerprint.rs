//! The code fingerprint: a hash of every source file that can change a cell's numbers (the
//! algorithm crates, the datasets crate and its registry, the experiment kinds, cell planning,
//! data loading, and the locked dependency versions). It is part of every cell's cache key, so
//! a cached cell computed by other code is never reused, and it is recorded in every manifest.
//!
//! The files are embedded with `include_bytes!`, so the compiler tracks them: any edit rebuilds
//! the harness with a new fingerprint, whichever checkout shares the build folder. (A build
//! script hashing them proved fragile: cargo could judge it fresh after an edit when another
//! clone had last run it.) A test checks that the list names every such file.

use std::sync::OnceLock;

macro_rules! numeric_sources {
    ($($path:literal),* $(,)?) => {
        /// (path from the project root, content) of every numeric source.
        pub const NUMERIC_SOURCES: &[(&str, &[u8])] =
            &[$(($path, include_bytes!(concat!("../../", $path)))),*];
    };
}

numeric_sources!(
    "Cargo.lock",
    "algorithms/core/Cargo.toml",
    "algorithms/mondrian/Cargo.toml",
    "algorithms/random-features/Cargo.toml",
    "datasets/Cargo.toml",
    "datasets/registry.toml",
    "algorithms/core/src/approximation.rs",
    "algorithms/core/src/cg.rs",
    "algorithms/core/src/error.rs",
    "algorithms/core/src/gp.rs",
    "algorithms/core/src/kernel.rs",
    "algorithms/core/src/lib.rs",
    "algorithms/core/src/metrics.rs",
    "algorithms/core/src/one_hot.rs",
    "algorithms/core/src/ridge.rs",
    "algorithms/core/src/sgd.rs",
    "algorithms/core/src/width_search.rs",
    "algorithms/mondrian/src/error.rs",
    "algorithms/mondrian/src/forest.rs",
    "algorithms/mondrian/src/learners.rs",
    "algorithms/mondrian/src/lib.rs",
    "algorithms/mondrian/src/process.rs",
    "algorithms/mondrian/src/sweep.rs",
    "algorithms/mondrian/src/tree.rs",
    "algorithms/random-features/src/binning.rs",
    "algorithms/random-features/src/error.rs",
    "algorithms/random-features/src/fourier.rs",
    "algorithms/random-features/src/lib.rs",
    "datasets/src/digest.rs",
    "datasets/src/error.rs",
    "datasets/src/fetch.rs",
    "datasets/src/gz.rs",
    "datasets/src/lib.rs",
    "datasets/src/loaders/csv.rs",
    "datasets/src/loaders/idx.rs",
    "datasets/src/loaders/mod.rs",
    "datasets/src/loaders/svmlight.rs",
    "datasets/src/locate.rs",
    "datasets/src/registry.rs",
    "datasets/src/sets.rs",
    "datasets/src/synthetic.rs",
    "experiments/src/kinds/feature_ridge.rs",
    "experiments/src/kinds/kernel_approximation.rs",
    "experiments/src/kinds/lifetime_sweep.rs",
    "experiments/src/kinds/mod.rs",
    "experiments/src/kinds/width_selection.rs",
    "experiments/src/cell.rs",
    "experiments/src/data.rs",
);

/// FNV-1a, 64 bits: stable across compilers and platforms.
fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// The fingerprint of [`NUMERIC_SOURCES`], 16 hex digits.
pub fn code_fingerprint() -> &'static str {
    static FINGERPRINT: OnceLock<String> = OnceLock::new();
    FINGERPRINT.get_or_init(|| {
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        for (path, content) in NUMERIC_SOURCES {
            fnv1a(&mut hash, path.as_bytes());
            fnv1a(&mut hash, content);
        }
        format!("{hash:016x}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "tests" && name != "benches" && name != "target" {
                    rust_files(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn every_numeric_source_is_listed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let mut found = Vec::new();
        for dir in ["algorithms", "datasets/src", "experiments/src/kinds"] {
            rust_files(&root.join(dir), &mut found);
        }
        for entry in std::fs::read_dir(root.join("algorithms"))
            .unwrap()
            .flatten()
        {
            found.push(entry.path().join("Cargo.toml"));
        }
        let mut found: Vec<String> = found
            .iter()
            .map(|p| {
                p.strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        found.extend(
            [
                "Cargo.lock",
                "datasets/Cargo.toml",
                "datasets/registry.toml",
                "experiments/src/cell.rs",
                "experiments/src/data.rs",
            ]
            .map(String::from),
        );
        found.sort();
        let mut listed: Vec<String> = NUMERIC_SOURCES.iter().map(|(p, _)| p.to_string()).collect();
        listed.sort();
        assert_eq!(
            listed, found,
            "experiments/src/fingerprint.rs must list exactly the numeric sources"
        );
    }

    #[test]
    fn fingerprint_is_sixteen_hex_digits_and_stable() {
        let f = code_fingerprint();
        assert_eq!(f.len(), 16);
        assert!(f.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(f, code_fingerprint());
    }
}
