//! Code fingerprints: per experiment kind, a hash of the sources and locked dependency versions
//! that can change its numbers. A cell's cache key includes its kind's fingerprint, so a cached
//! cell computed by other code is never reused, and editing one kind (or one paper's algorithm
//! crate) recomputes only the cells that depend on it. The fingerprint is recorded in every
//! manifest.
//!
//! What a kind's numbers depend on is declared by the kind ([`Sources`]): the workspace crates it
//! calls and its own files (the kind and the [`crate::kinds::common`] helpers it uses). Every
//! kind also depends on the harness's numeric core ([`HARNESS`]: cell planning and seeding, the
//! cell context, data loading and generation, the kind adapter). For each crate, the crate's
//! sources count and so do the locked versions of its dependencies, transitively (from
//! Cargo.lock): adding a crate for another paper changes Cargo.lock but not these closures.
//!
//! The files are embedded with `include_bytes!`, so the compiler tracks them: any edit rebuilds
//! the harness with new fingerprints, whichever checkout shares the build folder. Tests check
//! that the list names every numeric source, that every kind file is covered, and that each
//! kind declares the crates and helpers its files use.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::Deserialize;

/// What a kind's numbers depend on, beyond [`HARNESS`].
#[derive(Debug, Clone, Copy)]
pub struct Sources {
    /// Workspace crates (package names) whose sources and dependency closures count.
    pub crates: &'static [&'static str],
    /// Files, or folders ending in `/`, relative to the project root.
    pub files: &'static [&'static str],
}

/// The harness's numeric core, part of every kind's fingerprint.
pub const HARNESS: Sources = Sources {
    // Data loading (datasets) and generation (kernel-core's GP draw).
    crates: &["datasets", "kernel-core"],
    files: &[
        "experiments/src/cell.rs",
        "experiments/src/context.rs",
        "experiments/src/data/",
        "experiments/src/kinds/mod.rs",
        "experiments/src/kinds/common/mod.rs",
    ],
};

/// Registry crates the harness's own numeric code uses (seeding, parsing, cached rows).
const HARNESS_DEPENDENCIES: &[&str] = &["rand", "rand_chacha", "sha2", "serde_json", "toml"];

/// Workspace crates and their folders.
pub const WORKSPACE_CRATES: &[(&str, &str)] = &[
    ("kernel-core", "algorithms/core/"),
    ("mondrian", "algorithms/mondrian/"),
    ("random-features", "algorithms/random-features/"),
    ("datasets", "datasets/"),
];

macro_rules! numeric_sources {
    ($($path:literal),* $(,)?) => {
        /// (path from the project root, content) of every numeric source.
        pub const NUMERIC_SOURCES: &[(&str, &[u8])] =
            &[$(($path, include_bytes!(concat!("../../", $path)))),*];
    };
}

numeric_sources!(
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
    "algorithms/core/src/model.rs",
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
    "datasets/src/assemble.rs",
    "datasets/src/digest.rs",
    "datasets/src/error.rs",
    "datasets/src/fetch.rs",
    "datasets/src/gz.rs",
    "datasets/src/labelled.rs",
    "datasets/src/lib.rs",
    "datasets/src/loaders/csv.rs",
    "datasets/src/loaders/idx.rs",
    "datasets/src/loaders/mod.rs",
    "datasets/src/loaders/svmlight.rs",
    "datasets/src/locate.rs",
    "datasets/src/registry.rs",
    "datasets/src/sets.rs",
    "datasets/src/sparse.rs",
    "datasets/src/split.rs",
    "datasets/src/synthetic.rs",
    "datasets/src/table.rs",
    "experiments/src/cell.rs",
    "experiments/src/context.rs",
    "experiments/src/data/mod.rs",
    "experiments/src/data/synthetic.rs",
    "experiments/src/kinds/common/clock.rs",
    "experiments/src/kinds/common/feature_maps.rs",
    "experiments/src/kinds/common/mod.rs",
    "experiments/src/kinds/common/sweep.rs",
    "experiments/src/kinds/common/transductive.rs",
    "experiments/src/kinds/mod.rs",
    "experiments/src/kinds/mondrian/feature_ridge.rs",
    "experiments/src/kinds/mondrian/kernel_approximation.rs",
    "experiments/src/kinds/mondrian/lifetime_sweep.rs",
    "experiments/src/kinds/mondrian/mod.rs",
    "experiments/src/kinds/mondrian/width_selection.rs",
);

/// The workspace's Cargo.lock, for dependency closures.
const CARGO_LOCK: &str = include_str!("../../Cargo.lock");

/// FNV-1a, 64 bits: stable across compilers and platforms.
fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

#[derive(Deserialize)]
struct Lock {
    package: Vec<LockedPackage>,
}

#[derive(Deserialize)]
struct LockedPackage {
    name: String,
    version: String,
    #[serde(default)]
    dependencies: Vec<String>,
}

/// `name version` of every package in the transitive dependency closure of `roots` (roots
/// included), sorted. A root locked at several versions counts with all of them.
pub fn dependency_closure(lock_text: &str, roots: &[&str]) -> Result<Vec<String>, String> {
    let lock: Lock = toml::from_str(lock_text).map_err(|e| format!("Cargo.lock: {e}"))?;
    let mut by_name: BTreeMap<&str, Vec<&LockedPackage>> = BTreeMap::new();
    for p in &lock.package {
        by_name.entry(p.name.as_str()).or_default().push(p);
    }
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    let mut stack: Vec<&LockedPackage> = Vec::new();
    for root in roots {
        let found = by_name
            .get(root)
            .ok_or_else(|| format!("Cargo.lock has no package {root}"))?;
        stack.extend(found.iter().copied());
    }
    while let Some(p) = stack.pop() {
        if !seen.insert((p.name.clone(), p.version.clone())) {
            continue;
        }
        for dep in &p.dependencies {
            // "name", "name version" or "name version (source)".
            let mut parts = dep.split_whitespace();
            let name = parts.next().unwrap_or_default();
            let version = parts.next();
            let candidates = by_name
                .get(name)
                .ok_or_else(|| format!("Cargo.lock: {} depends on unknown {name}", p.name))?;
            stack.extend(
                candidates
                    .iter()
                    .filter(|c| version.is_none_or(|v| c.version == v))
                    .copied(),
            );
        }
    }
    Ok(seen.into_iter().map(|(n, v)| format!("{n} {v}")).collect())
}

/// The fingerprint of one kind from the given sources and lock file, 16 hex digits.
pub fn fingerprint_of(
    kind: &str,
    sources: &Sources,
    files: &[(&str, &[u8])],
    lock_text: &str,
) -> Result<String, String> {
    let crates: BTreeSet<&str> = HARNESS
        .crates
        .iter()
        .chain(sources.crates)
        .copied()
        .collect();
    let mut prefixes: Vec<&str> = HARNESS.files.iter().chain(sources.files).copied().collect();
    for name in &crates {
        let dir = WORKSPACE_CRATES
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| *d)
            .ok_or_else(|| format!("kind {kind}: unknown workspace crate {name}"))?;
        prefixes.push(dir);
    }
    let selected = |path: &str| {
        prefixes
            .iter()
            .any(|p| path == *p || (p.ends_with('/') && path.starts_with(p)))
    };
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    fnv1a(&mut hash, kind.as_bytes());
    for (path, content) in files.iter().filter(|(p, _)| selected(p)) {
        fnv1a(&mut hash, path.as_bytes());
        fnv1a(&mut hash, content);
    }
    let roots: Vec<&str> = crates
        .iter()
        .copied()
        .chain(HARNESS_DEPENDENCIES.iter().copied())
        .collect();
    for line in dependency_closure(lock_text, &roots)? {
        fnv1a(&mut hash, line.as_bytes());
        fnv1a(&mut hash, b"\n");
    }
    Ok(format!("{hash:016x}"))
}

/// The fingerprint of a registered kind (from the embedded sources), computed once.
pub fn kind_fingerprint(kind: &str, sources: &Sources) -> &'static str {
    static CACHE: OnceLock<std::sync::Mutex<BTreeMap<String, &'static str>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    cache.entry(kind.to_string()).or_insert_with(|| {
        let f = fingerprint_of(kind, sources, NUMERIC_SOURCES, CARGO_LOCK)
            .unwrap_or_else(|e| panic!("embedded sources: {e}"));
        Box::leak(f.into_boxed_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_path_buf()
    }

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

    fn relative(paths: &[PathBuf]) -> Vec<String> {
        let root = root();
        let mut out: Vec<String> = paths
            .iter()
            .map(|p| {
                p.strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn every_numeric_source_is_listed() {
        let root = root();
        let mut found = Vec::new();
        for dir in [
            "algorithms",
            "datasets/src",
            "experiments/src/kinds",
            "experiments/src/data",
        ] {
            rust_files(&root.join(dir), &mut found);
        }
        for entry in std::fs::read_dir(root.join("algorithms"))
            .unwrap()
            .flatten()
        {
            found.push(entry.path().join("Cargo.toml"));
        }
        for f in [
            "datasets/Cargo.toml",
            "datasets/registry.toml",
            "experiments/src/cell.rs",
            "experiments/src/context.rs",
        ] {
            found.push(root.join(f));
        }
        let found = relative(&found);
        let mut listed: Vec<String> = NUMERIC_SOURCES.iter().map(|(p, _)| p.to_string()).collect();
        listed.sort();
        assert_eq!(
            listed, found,
            "experiments/src/fingerprint.rs must list exactly the numeric sources"
        );
    }

    #[test]
    fn workspace_crates_are_mapped_to_their_folders() {
        let root = root();
        let manifest: toml::Table =
            toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
        let members: Vec<String> = manifest["workspace"]["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .filter(|m| m != "experiments")
            .collect();
        assert_eq!(members.len(), WORKSPACE_CRATES.len(), "{members:?}");
        for member in members {
            let cargo: toml::Table = toml::from_str(
                &std::fs::read_to_string(root.join(&member).join("Cargo.toml")).unwrap(),
            )
            .unwrap();
            let name = cargo["package"]["name"].as_str().unwrap();
            let dir = format!("{member}/");
            assert!(
                WORKSPACE_CRATES.contains(&(name, dir.as_str())),
                "{name} at {dir} is not in WORKSPACE_CRATES"
            );
        }
    }

    /// The crates and `common` helpers a source file names.
    fn uses(text: &str) -> (BTreeSet<&'static str>, BTreeSet<String>) {
        let crates = WORKSPACE_CRATES
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| text.contains(&format!("{}::", n.replace('-', "_"))))
            .collect();
        let mut helpers = BTreeSet::new();
        for (i, _) in text.match_indices("common::") {
            let rest = &text[i + "common::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if std::path::Path::new(&root().join(format!("experiments/src/kinds/common/{name}.rs")))
                .exists()
            {
                helpers.insert(format!("experiments/src/kinds/common/{name}.rs"));
            }
        }
        (crates, helpers)
    }

    #[test]
    fn every_kind_declares_what_its_files_use_and_no_kind_imports_another() {
        let root = root();
        let harness_crates: BTreeSet<&str> = HARNESS.crates.iter().copied().collect();
        let mut covered = BTreeSet::new();
        for kind in crate::kinds::all() {
            let sources = kind.sources();
            let declared: BTreeSet<&str> = sources.crates.iter().copied().collect();
            let files: BTreeSet<String> = sources.files.iter().map(|f| f.to_string()).collect();
            let mut todo: Vec<String> = files.iter().cloned().collect();
            let mut seen = BTreeSet::new();
            while let Some(file) = todo.pop() {
                if !seen.insert(file.clone()) {
                    continue;
                }
                covered.insert(file.clone());
                let text = std::fs::read_to_string(root.join(&file))
                    .unwrap_or_else(|e| panic!("{}: {file}: {e}", kind.name()));
                let (crates, helpers) = uses(&text);
                for c in crates {
                    assert!(
                        declared.contains(c) || harness_crates.contains(c),
                        "{}: {file} uses crate {c}, which the kind does not declare",
                        kind.name()
                    );
                }
                for h in helpers {
                    assert!(
                        files.contains(&h),
                        "{}: {file} uses {h}, which the kind does not declare",
                        kind.name()
                    );
                    todo.push(h);
                }
                // A kind file names no other kind's module.
                if file.contains("/kinds/") && !file.contains("/common/") {
                    for other in crate::kinds::all() {
                        let module = format!("{}::", other.name());
                        assert!(
                            other.name() == kind.name() || !text.contains(&module),
                            "{file} imports the kind {}; move what they share to kinds/common",
                            other.name()
                        );
                    }
                }
            }
            let own = format!("/{}.rs", kind.name());
            assert!(
                files.iter().any(|f| f.ends_with(&own)),
                "{} does not list its own file",
                kind.name()
            );
        }
        // Every kind file and helper is some kind's source (or the harness's).
        for (path, _) in NUMERIC_SOURCES {
            if path.starts_with("experiments/src/kinds/")
                && !path.ends_with("/mod.rs")
                && !HARNESS.files.contains(path)
            {
                assert!(covered.contains(*path), "{path} is no kind's source");
            }
        }
    }

    fn replaced<'a>(
        files: &[(&'a str, &'a [u8])],
        path: &str,
        content: &'a [u8],
    ) -> Vec<(&'a str, &'a [u8])> {
        files
            .iter()
            .map(|&(p, c)| if p == path { (p, content) } else { (p, c) })
            .collect()
    }

    #[test]
    fn a_kind_fingerprint_covers_its_sources_only() {
        let sweep = crate::kinds::find("lifetime_sweep").unwrap();
        let approx = crate::kinds::find("kernel_approximation").unwrap();
        let of = |k: &dyn crate::kinds::ExperimentKind, files: &[(&str, &[u8])], lock: &str| {
            fingerprint_of(k.name(), k.sources(), files, lock).unwrap()
        };
        let base_sweep = of(sweep, NUMERIC_SOURCES, CARGO_LOCK);
        let base_approx = of(approx, NUMERIC_SOURCES, CARGO_LOCK);
        assert_eq!(
            base_sweep,
            kind_fingerprint("lifetime_sweep", sweep.sources())
        );
        assert_ne!(base_sweep, base_approx);

        // Editing the sweep kind changes its key only.
        let edited = replaced(
            NUMERIC_SOURCES,
            "experiments/src/kinds/mondrian/lifetime_sweep.rs",
            b"// edited",
        );
        assert_ne!(of(sweep, &edited, CARGO_LOCK), base_sweep);
        assert_eq!(of(approx, &edited, CARGO_LOCK), base_approx);

        // Editing the Mondrian crate changes both (both sample Mondrian trees).
        let edited = replaced(
            NUMERIC_SOURCES,
            "algorithms/mondrian/src/tree.rs",
            b"// edited",
        );
        assert_ne!(of(sweep, &edited, CARGO_LOCK), base_sweep);
        assert_ne!(of(approx, &edited, CARGO_LOCK), base_approx);

        // A new crate in Cargo.lock (another paper's dependency) changes nothing ...
        let added =
            format!("{CARGO_LOCK}\n[[package]]\nname = \"some-new-crate\"\nversion = \"1.0.0\"\n");
        assert_eq!(of(sweep, NUMERIC_SOURCES, &added), base_sweep);
        // ... while a new version of a dependency they use does.
        let rand_version = dependency_closure(CARGO_LOCK, &["rand_distr"])
            .unwrap()
            .into_iter()
            .find(|l| l.starts_with("rand_distr "))
            .unwrap();
        let version = rand_version.split(' ').nth(1).unwrap();
        let bumped = CARGO_LOCK.replace(
            &format!("name = \"rand_distr\"\nversion = \"{version}\""),
            "name = \"rand_distr\"\nversion = \"99.0.0\"",
        );
        let bumped = bumped.replace(
            &format!("\"rand_distr {version}\""),
            "\"rand_distr 99.0.0\"",
        );
        assert_ne!(bumped, CARGO_LOCK);
        assert_ne!(of(sweep, NUMERIC_SOURCES, &bumped), base_sweep);
    }

    #[test]
    fn closure_follows_dependencies() {
        let closure = dependency_closure(CARGO_LOCK, &["mondrian"]).unwrap();
        for name in [
            "mondrian ",
            "kernel-core ",
            "rand ",
            "rand_chacha ",
            "ndarray ",
        ] {
            assert!(closure.iter().any(|l| l.starts_with(name)), "{name}");
        }
        assert!(!closure.iter().any(|l| l.starts_with("polars ")));
        assert!(dependency_closure(CARGO_LOCK, &["no-such-crate"]).is_err());
    }
}
