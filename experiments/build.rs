//! Embeds, for run manifests, the locked versions of the workspace's key dependencies. (The
//! code fingerprint of the cell cache is computed from embedded sources instead: see
//! `src/fingerprint.rs`.)

fn main() {
    // The package root of this build, read when the script runs: a script binary compiled in
    // another checkout that shares the build folder (cargo reuses it) must not read that
    // checkout's Cargo.lock, or none at all.
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let lock = std::path::Path::new(&root).join("../Cargo.lock");
    // Relative to the package root, so that any checkout sharing the build folder is watched.
    println!("cargo:rerun-if-changed=../Cargo.lock");
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
