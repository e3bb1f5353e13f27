//! Code fingerprints: for each run, a hash of the sources and locked dependency versions that
//! can change its cells' numbers. A cell's cache key includes it, so a cached cell computed by
//! other code is never reused, and editing one kind (or one paper's algorithm crate) recomputes
//! only the cells that depend on it. It is recorded in every manifest.
//!
//! What a run's numbers depend on is declared, never guessed: the kind's [`Sources`] (the
//! workspace crates it calls, its own file and the `kinds/common` helpers it uses), its data's
//! sources (the synthetic generator's file and crates, or the datasets crate and the dataset's
//! own registry entry), and the harness's numeric core ([`HARNESS`]: cell planning and seeding,
//! the cell context, data loading and splits, the kind adapter). Each workspace crate counts with
//! its sources and those of the workspace crates it depends on, and with the locked versions of
//! its normal dependencies, transitively (Cargo.lock): adding a crate for another paper changes
//! Cargo.lock but not these closures, and registering a kind, a helper module or a dataset
//! changes no other key (`registry.rs` and the `mod.rs` files that only declare modules are not
//! numeric sources).
//!
//! The files are embedded with `include_bytes!`, so the compiler tracks them: any edit rebuilds
//! the harness with new fingerprints, whichever checkout shares the build folder. Tests check
//! that the list names every numeric source, that every kind file is covered, and that each
//! kind declares the crates and helpers its files use.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock};

use crate::data::DataSpec;
use crate::kinds::ExperimentKind;

/// What a kind's (or a data source's) numbers depend on, beyond [`HARNESS`].
#[derive(Debug, Clone, Copy)]
pub struct Sources {
    /// Workspace crates (package names) whose sources and dependency closures count.
    pub crates: &'static [&'static str],
    /// Files, or folders ending in `/`, relative to the project root.
    pub files: &'static [&'static str],
}

/// The harness's numeric core, part of every fingerprint.
pub const HARNESS: Sources = Sources {
    crates: &[],
    files: &[
        "experiments/src/cell.rs",
        "experiments/src/context.rs",
        "experiments/src/data/load.rs",
        "experiments/src/data/mod.rs",
        "experiments/src/data/spec.rs",
        "experiments/src/data/view.rs",
        "experiments/src/kinds/kind.rs",
        "experiments/src/plan.rs",
        "experiments/src/seeds.rs",
        "experiments/src/toml_table.rs",
    ],
};

/// Registry crates the harness's own numeric code uses (seeding, parsing, cached rows).
const HARNESS_DEPENDENCIES: &[&str] = &["rand", "rand_chacha", "sha2", "serde_json", "toml"];

/// Workspace crates and their folders.
pub const WORKSPACE_CRATES: &[(&str, &str)] = &[
    ("kernel-core", "algorithms/core/"),
    ("fastfood", "algorithms/fastfood/"),
    ("isolation-kernel", "algorithms/isolation-kernel/"),
    ("mondrian", "algorithms/mondrian/"),
    ("random-features", "algorithms/random-features/"),
    ("random-tessellation", "algorithms/random-tessellation/"),
    ("streamrak", "algorithms/streamrak/"),
    ("datasets", "datasets/"),
];

/// The registry, hashed per dataset entry instead of as a file.
const REGISTRY_PATH: &str = "datasets/registry.toml";

macro_rules! numeric_sources {
    ($($path:literal),* $(,)?) => {
        /// (path from the project root, content) of every numeric source.
        pub const NUMERIC_SOURCES: &[(&str, &[u8])] =
            &[$(($path, include_bytes!(concat!("../../", $path)))),*];
    };
}

numeric_sources!(
    "algorithms/core/Cargo.toml",
    "algorithms/fastfood/Cargo.toml",
    "algorithms/isolation-kernel/Cargo.toml",
    "algorithms/mondrian/Cargo.toml",
    "algorithms/random-features/Cargo.toml",
    "algorithms/random-tessellation/Cargo.toml",
    "algorithms/streamrak/Cargo.toml",
    "datasets/Cargo.toml",
    "datasets/registry.toml",
    "algorithms/core/src/approximation.rs",
    "algorithms/core/src/cg.rs",
    "algorithms/core/src/error.rs",
    "algorithms/core/src/features.rs",
    "algorithms/core/src/gp.rs",
    "algorithms/core/src/kernel.rs",
    "algorithms/core/src/lib.rs",
    "algorithms/core/src/metrics.rs",
    "algorithms/core/src/model.rs",
    "algorithms/core/src/one_hot.rs",
    "algorithms/core/src/params.rs",
    "algorithms/core/src/ridge.rs",
    "algorithms/core/src/sgd.rs",
    "algorithms/core/src/trig.rs",
    "algorithms/core/src/width_search.rs",
    "algorithms/fastfood/src/blas.rs",
    "algorithms/fastfood/src/error.rs",
    "algorithms/fastfood/src/evidence.rs",
    "algorithms/fastfood/src/exact_gp.rs",
    "algorithms/fastfood/src/fastfood.rs",
    "algorithms/fastfood/src/fit.rs",
    "algorithms/fastfood/src/fwht.rs",
    "algorithms/fastfood/src/kernels.rs",
    "algorithms/fastfood/src/lib.rs",
    "algorithms/fastfood/src/optimise.rs",
    "algorithms/fastfood/src/radial.rs",
    "algorithms/fastfood/src/spectra.rs",
    "algorithms/isolation-kernel/src/anne.rs",
    "algorithms/isolation-kernel/src/error.rs",
    "algorithms/isolation-kernel/src/iforest.rs",
    "algorithms/isolation-kernel/src/input.rs",
    "algorithms/isolation-kernel/src/kernel.rs",
    "algorithms/isolation-kernel/src/learners.rs",
    "algorithms/isolation-kernel/src/lib.rs",
    "algorithms/isolation-kernel/src/nogd.rs",
    "algorithms/isolation-kernel/src/ogd_kernel.rs",
    "algorithms/isolation-kernel/src/store.rs",
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
    "algorithms/random-tessellation/src/baselines.rs",
    "algorithms/random-tessellation/src/cell.rs",
    "algorithms/random-tessellation/src/diameter.rs",
    "algorithms/random-tessellation/src/error.rs",
    "algorithms/random-tessellation/src/forest.rs",
    "algorithms/random-tessellation/src/hyperplane.rs",
    "algorithms/random-tessellation/src/input.rs",
    "algorithms/random-tessellation/src/lib.rs",
    "algorithms/random-tessellation/src/likelihood.rs",
    "algorithms/random-tessellation/src/planar.rs",
    "algorithms/random-tessellation/src/points.rs",
    "algorithms/random-tessellation/src/preprocess.rs",
    "algorithms/random-tessellation/src/prior.rs",
    "algorithms/random-tessellation/src/settings.rs",
    "algorithms/random-tessellation/src/smc.rs",
    "algorithms/random-tessellation/src/tree.rs",
    "algorithms/streamrak/src/baselines.rs",
    "algorithms/streamrak/src/cover_tree.rs",
    "algorithms/streamrak/src/error.rs",
    "algorithms/streamrak/src/falkon.rs",
    "algorithms/streamrak/src/kernel.rs",
    "algorithms/streamrak/src/levels.rs",
    "algorithms/streamrak/src/lib.rs",
    "algorithms/streamrak/src/model.rs",
    "algorithms/streamrak/src/statistics.rs",
    "datasets/src/assemble.rs",
    "datasets/src/digest.rs",
    "datasets/src/double_pendulum.rs",
    "datasets/src/dumbbell.rs",
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
    "datasets/src/varying_sinus.rs",
    "experiments/src/cell.rs",
    "experiments/src/context.rs",
    "experiments/src/data/load.rs",
    "experiments/src/data/mod.rs",
    "experiments/src/data/spec.rs",
    "experiments/src/data/view.rs",
    "experiments/src/plan.rs",
    "experiments/src/seeds.rs",
    "experiments/src/toml_table.rs",
    "experiments/src/data/synthetic/double_pendulum.rs",
    "experiments/src/data/synthetic/dumbbell.rs",
    "experiments/src/data/synthetic/laplace_gp.rs",
    "experiments/src/data/synthetic/mod.rs",
    "experiments/src/data/synthetic/oblique_boundary.rs",
    "experiments/src/data/synthetic/uniform_box.rs",
    "experiments/src/data/synthetic/varying_sinus.rs",
    "experiments/src/kinds/isolation_kernel/binary.rs",
    "experiments/src/kinds/common/clock.rs",
    "experiments/src/kinds/mondrian/feature_maps.rs",
    "experiments/src/kinds/a_la_carte/fastfood_regression.rs",
    "experiments/src/kinds/a_la_carte/fastfood_scaling.rs",
    "experiments/src/kinds/a_la_carte/spectrum_recovery.rs",
    "experiments/src/kinds/a_la_carte/mod.rs",
    "experiments/src/kinds/common/mod.rs",
    "experiments/src/kinds/isolation_kernel/online_classifiers.rs",
    "experiments/src/kinds/common/params.rs",
    "experiments/src/kinds/mondrian/sweep.rs",
    "experiments/src/kinds/mondrian/transductive.rs",
    "experiments/src/kinds/isolation_kernel/batch_classification.rs",
    "experiments/src/kinds/isolation_kernel/laplacian_agreement.rs",
    "experiments/src/kinds/isolation_kernel/mod.rs",
    "experiments/src/kinds/isolation_kernel/online_stream.rs",
    "experiments/src/kinds/kind.rs",
    "experiments/src/kinds/mod.rs",
    "experiments/src/kinds/mondrian/feature_ridge.rs",
    "experiments/src/kinds/mondrian/kernel_approximation.rs",
    "experiments/src/kinds/mondrian/lifetime_sweep.rs",
    "experiments/src/kinds/mondrian/mod.rs",
    "experiments/src/kinds/mondrian/width_selection.rs",
    "experiments/src/kinds/random_tessellation/mod.rs",
    "experiments/src/kinds/random_tessellation/tessellation_classification.rs",
    "experiments/src/kinds/random_tessellation/tessellation_prior.rs",
    "experiments/src/kinds/streamrak/mod.rs",
    "experiments/src/kinds/streamrak/multiresolution_regression.rs",
    "experiments/src/kinds/streamrak/training.rs",
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

#[derive(serde::Deserialize)]
struct Lock {
    package: Vec<LockedPackage>,
}

#[derive(serde::Deserialize)]
struct LockedPackage {
    name: String,
    version: String,
    #[serde(default)]
    dependencies: Vec<String>,
}

/// `name version` of every package in the transitive closure of the registry packages `roots`
/// (every locked version of each), sorted. Registry packages list only the dependencies they
/// are built with, so this follows normal and build dependencies.
pub fn dependency_closure(lock_text: &str, roots: &[&str]) -> Result<Vec<String>, String> {
    let lock: Lock = toml::from_str(lock_text).map_err(|e| format!("Cargo.lock: {e}"))?;
    let mut by_name: BTreeMap<&str, Vec<&LockedPackage>> = BTreeMap::new();
    for p in &lock.package {
        by_name.entry(p.name.as_str()).or_default().push(p);
    }
    let mut stack: Vec<&LockedPackage> = Vec::new();
    for root in roots {
        let (name, version) = root
            .split_once(' ')
            .map_or((*root, None), |(n, v)| (n, Some(v)));
        let found = by_name
            .get(name)
            .ok_or_else(|| format!("Cargo.lock has no package {name}"))?;
        stack.extend(
            found
                .iter()
                .filter(|p| version.is_none_or(|v| p.version == v)),
        );
    }
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
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

/// The workspace crates `roots` and every workspace crate they depend on (normal and build
/// dependencies, from their Cargo.toml), with the locked registry packages they use directly
/// (`name version` as Cargo.lock pins them for that crate).
fn workspace_closure(
    roots: &BTreeSet<&str>,
    files: &[(&str, &[u8])],
    lock_text: &str,
) -> Result<(BTreeSet<&'static str>, Vec<String>), String> {
    let lock: Lock = toml::from_str(lock_text).map_err(|e| format!("Cargo.lock: {e}"))?;
    let folder = |name: &str| {
        WORKSPACE_CRATES
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| format!("unknown workspace crate {name}"))
    };
    let mut crates: BTreeSet<&'static str> = BTreeSet::new();
    let mut registry = Vec::new();
    let mut stack: Vec<&str> = roots.iter().copied().collect();
    while let Some(name) = stack.pop() {
        let &(name, dir) = folder(name)?;
        if !crates.insert(name) {
            continue;
        }
        let manifest_path = format!("{dir}Cargo.toml");
        let manifest = files
            .iter()
            .find(|(p, _)| *p == manifest_path)
            .ok_or_else(|| format!("{manifest_path} is not a numeric source"))?;
        let manifest: toml::Table = toml::from_str(&String::from_utf8_lossy(manifest.1))
            .map_err(|e| format!("{manifest_path}: {e}"))?;
        let direct: BTreeSet<&str> = ["dependencies", "build-dependencies"]
            .iter()
            .filter_map(|t| manifest.get(*t).and_then(|d| d.as_table()))
            .flat_map(|d| d.keys().map(String::as_str))
            .collect();
        let locked = lock
            .package
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| format!("Cargo.lock has no package {name}"))?;
        for dep in &locked.dependencies {
            let dep_name = dep.split_whitespace().next().unwrap_or_default();
            if !direct.contains(dep_name) {
                continue; // a dev-dependency
            }
            if WORKSPACE_CRATES.iter().any(|(n, _)| *n == dep_name) {
                stack.push(folder(dep_name)?.0);
            } else {
                // Keep "name version" when Cargo.lock pins the version for this crate.
                let pinned: Vec<&str> = dep.split_whitespace().take(2).collect();
                registry.push(pinned.join(" "));
            }
        }
    }
    Ok((crates, registry))
}

/// The text of one dataset's `[[dataset]]` entry in the registry.
fn registry_entry<'a>(registry: &'a str, name: &str) -> Result<&'a str, String> {
    let wanted = format!("name = \"{name}\"");
    registry
        .split("\n[[dataset]]\n")
        .skip(1)
        .find(|block| block.lines().next() == Some(wanted.as_str()))
        .ok_or_else(|| format!("dataset {name} has no [[dataset]] entry starting with {wanted}"))
}

/// The fingerprint of a run of `kind` on data with the given sources, from the given files and
/// lock file, 16 hex digits.
pub fn fingerprint_of(
    kind: &str,
    kind_sources: &Sources,
    data: (&Sources, Option<&str>),
    files: &[(&str, &[u8])],
    lock_text: &str,
) -> Result<String, String> {
    let (data_sources, dataset) = data;
    let all = [&HARNESS, kind_sources, data_sources];
    let roots: BTreeSet<&str> = all.iter().flat_map(|s| s.crates.iter().copied()).collect();
    let (crates, mut registry) = workspace_closure(&roots, files, lock_text)?;
    let mut prefixes: Vec<&str> = all.iter().flat_map(|s| s.files.iter().copied()).collect();
    for name in &crates {
        prefixes.extend(
            WORKSPACE_CRATES
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, d)| *d),
        );
    }
    let selected = |path: &str| {
        path != REGISTRY_PATH
            && prefixes
                .iter()
                .any(|p| path == *p || (p.ends_with('/') && path.starts_with(p)))
    };
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    fnv1a(&mut hash, kind.as_bytes());
    for (path, content) in files.iter().filter(|(p, _)| selected(p)) {
        fnv1a(&mut hash, path.as_bytes());
        fnv1a(&mut hash, content);
    }
    if let Some(name) = dataset {
        let registry_text = files
            .iter()
            .find(|(p, _)| *p == REGISTRY_PATH)
            .map(|(_, c)| String::from_utf8_lossy(c))
            .ok_or("the registry is not a numeric source")?;
        fnv1a(&mut hash, registry_entry(&registry_text, name)?.as_bytes());
    }
    registry.extend(HARNESS_DEPENDENCIES.iter().map(|s| s.to_string()));
    let roots: Vec<&str> = registry.iter().map(String::as_str).collect();
    for line in dependency_closure(lock_text, &roots)? {
        fnv1a(&mut hash, line.as_bytes());
        fnv1a(&mut hash, b"\n");
    }
    Ok(format!("{hash:016x}"))
}

/// The fingerprint of a run of a registered kind on the given data (from the embedded sources),
/// computed once per (kind, data sources).
pub fn run_fingerprint(kind: &dyn ExperimentKind, data: &DataSpec) -> Result<&'static str, String> {
    static CACHE: OnceLock<Mutex<BTreeMap<String, &'static str>>> = OnceLock::new();
    let (data_sources, dataset) = data.sources();
    let key = format!("{}|{:?}|{dataset:?}", kind.name(), data_sources);
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(f) = cache.get(&key) {
        return Ok(f);
    }
    let f = fingerprint_of(
        kind.name(),
        kind.sources(),
        (&data_sources, dataset),
        NUMERIC_SOURCES,
        CARGO_LOCK,
    )?;
    let f: &'static str = Box::leak(f.into_boxed_str());
    cache.insert(key, f);
    Ok(f)
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
                if name != "tests" && name != "benches" && name != "examples" && name != "target" {
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
            "experiments/src/plan.rs",
            "experiments/src/seeds.rs",
            "experiments/src/toml_table.rs",
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

    /// Whether a file only declares modules (and re-exports): it changes no number.
    fn declarations_only(text: &str) -> bool {
        text.lines().map(str::trim).all(|l| {
            l.is_empty()
                || l.starts_with("//")
                || l.starts_with("pub mod ")
                || l.starts_with("mod ")
                || l.starts_with("pub use ")
        })
    }

    /// The crates and `kinds/common` helpers a source file names (`common::x`,
    /// `common::{x, y}`, and `super::x` inside a helper).
    fn uses(file: &str, text: &str) -> (BTreeSet<&'static str>, BTreeSet<String>) {
        let crates = WORKSPACE_CRATES
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| text.contains(&format!("{}::", n.replace('-', "_"))))
            .collect();
        let ident = |s: &str| -> String {
            s.trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        // The folder of the file's own paper (or `common`): its helpers are named
        // `kinds::<paper>::x` or `super::x`.
        let folder = file
            .strip_prefix("experiments/src/kinds/")
            .and_then(|rest| rest.split_once('/'))
            .map(|(paper, _)| paper.to_string());
        let mut prefixes = vec![("common::".to_string(), "common".to_string())];
        if let Some(folder) = &folder {
            prefixes.push((format!("kinds::{folder}::"), folder.clone()));
            prefixes.push(("super::".to_string(), folder.clone()));
        }
        let mut helpers = BTreeSet::new();
        for (prefix, folder) in &prefixes {
            let mut names = Vec::new();
            for (i, _) in text.match_indices(prefix.as_str()) {
                let rest = &text[i + prefix.len()..];
                if let Some(group) = rest.strip_prefix('{') {
                    let group = &group[..group.find('}').unwrap_or(group.len())];
                    names.extend(group.split(',').map(ident));
                } else {
                    names.push(ident(rest));
                }
            }
            helpers.extend(
                names
                    .into_iter()
                    .map(|n| format!("experiments/src/kinds/{folder}/{n}.rs"))
                    .filter(|p| p != file && root().join(p).exists()),
            );
        }
        (crates, helpers)
    }

    #[test]
    fn every_kind_declares_what_its_files_use_and_no_kind_imports_another() {
        let root = root();
        let mut covered = BTreeSet::new();
        for kind in crate::registry::all() {
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
                let (crates, helpers) = uses(&file, &text);
                for c in crates {
                    assert!(
                        declared.contains(c),
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
                if !file.contains("/common/") {
                    for other in crate::registry::all() {
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
        // Every other kind file is some kind's source, the harness's, or declarations only.
        for (path, content) in NUMERIC_SOURCES {
            if path.starts_with("experiments/src/kinds/") && !HARNESS.files.contains(path) {
                assert!(
                    covered.contains(*path) || declarations_only(&String::from_utf8_lossy(content)),
                    "{path} is no kind's source and holds more than module declarations"
                );
            }
        }
        let (_, helpers) = uses(
            "experiments/src/kinds/mondrian/y.rs",
            "use crate::kinds::common::{clock, params::X};\nuse crate::kinds::mondrian::sweep;",
        );
        for h in ["common/clock.rs", "common/params.rs", "mondrian/sweep.rs"] {
            assert!(
                helpers.contains(&format!("experiments/src/kinds/{h}")),
                "{h}"
            );
        }
    }

    #[test]
    fn every_generator_declares_its_file_and_the_crates_it_calls() {
        let root = root();
        for text in [
            "source = 'uniform_box'\nn = 10\ndim = 2",
            "source = 'laplace_gp'\nn_train = 5\nn_test = 5\ndim = 1\nlifetime = 1.0\nnoise_sd = 0.1",
        ] {
            let spec: DataSpec = toml::from_str(text).unwrap();
            let (sources, dataset) = spec.sources();
            assert!(dataset.is_none());
            for file in sources.files {
                let content = std::fs::read_to_string(root.join(file)).unwrap();
                let (crates, _) = uses(file, &content);
                for c in crates {
                    assert!(sources.crates.contains(&c), "{file} uses {c}");
                }
            }
            assert!(sources.files.contains(&"experiments/src/data/synthetic/mod.rs"));
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
    fn a_run_fingerprint_covers_its_sources_only() {
        let sweep = crate::registry::find("lifetime_sweep").unwrap();
        let approx = crate::registry::find("kernel_approximation").unwrap();
        let cpu: DataSpec = toml::from_str("source = 'dataset'\nname = 'cpu_rr'").unwrap();
        let points: DataSpec = toml::from_str("source = 'uniform_box'\nn = 10\ndim = 2").unwrap();
        let of = |k: &dyn ExperimentKind, data: &DataSpec, files: &[(&str, &[u8])], lock: &str| {
            let (sources, dataset) = data.sources();
            fingerprint_of(k.name(), k.sources(), (&sources, dataset), files, lock).unwrap()
        };
        let base_sweep = of(sweep, &cpu, NUMERIC_SOURCES, CARGO_LOCK);
        let base_approx = of(approx, &points, NUMERIC_SOURCES, CARGO_LOCK);
        assert_eq!(base_sweep, run_fingerprint(sweep, &cpu).unwrap());
        assert_ne!(base_sweep, of(approx, &cpu, NUMERIC_SOURCES, CARGO_LOCK));
        assert_ne!(base_approx, of(approx, &cpu, NUMERIC_SOURCES, CARGO_LOCK));

        let edit = |path: &str| replaced(NUMERIC_SOURCES, path, b"// edited");
        // Editing the sweep kind changes its key only.
        let edited = edit("experiments/src/kinds/mondrian/lifetime_sweep.rs");
        assert_ne!(of(sweep, &cpu, &edited, CARGO_LOCK), base_sweep);
        assert_eq!(of(approx, &points, &edited, CARGO_LOCK), base_approx);
        // Declaring modules changes nothing; the GP generator is not the box's.
        for path in [
            "experiments/src/kinds/mod.rs",
            "experiments/src/kinds/common/mod.rs",
            "experiments/src/data/synthetic/laplace_gp.rs",
        ] {
            assert_eq!(
                of(approx, &points, &edit(path), CARGO_LOCK),
                base_approx,
                "{path}"
            );
            assert_eq!(
                of(sweep, &cpu, &edit(path), CARGO_LOCK),
                base_sweep,
                "{path}"
            );
        }
        // Editing the Mondrian crate changes both (both sample Mondrian trees).
        let edited = edit("algorithms/mondrian/src/tree.rs");
        assert_ne!(of(sweep, &cpu, &edited, CARGO_LOCK), base_sweep);
        assert_ne!(of(approx, &points, &edited, CARGO_LOCK), base_approx);

        // The registry counts by entry: another dataset's entry, or a new one, changes nothing;
        // cpu_rr's own entry does.
        let registry = String::from_utf8_lossy(
            NUMERIC_SOURCES
                .iter()
                .find(|(p, _)| *p == REGISTRY_PATH)
                .unwrap()
                .1,
        )
        .to_string();
        let other = registry.replace("UCI regression set `yacht`", "UCI set `yacht`");
        let added = format!("{registry}\n[[dataset]]\nname = \"new\"\n");
        let own = registry.replace("6554 training and 819 test rows", "6554 + 819 rows");
        for (text, same) in [(other, true), (added, true), (own, false)] {
            assert_ne!(text, registry);
            let files = replaced(NUMERIC_SOURCES, REGISTRY_PATH, text.as_bytes());
            assert_eq!(of(sweep, &cpu, &files, CARGO_LOCK) == base_sweep, same);
            assert_eq!(of(approx, &points, &files, CARGO_LOCK), base_approx);
        }

        // A new crate in Cargo.lock (another paper's dependency) changes nothing ...
        let added =
            format!("{CARGO_LOCK}\n[[package]]\nname = \"some-new-crate\"\nversion = \"1.0.0\"\n");
        assert_eq!(of(sweep, &cpu, NUMERIC_SOURCES, &added), base_sweep);
        // ... while a new version of a dependency they use does.
        // The rand_distr the sweep's crates use (Cargo.lock may hold several versions).
        let (_, used) =
            workspace_closure(&["mondrian"].into(), NUMERIC_SOURCES, CARGO_LOCK).unwrap();
        let version = used
            .into_iter()
            .find(|l| l.starts_with("rand_distr "))
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .to_string();
        let bumped = CARGO_LOCK
            .replace(
                &format!("name = \"rand_distr\"\nversion = \"{version}\""),
                "name = \"rand_distr\"\nversion = \"99.0.0\"",
            )
            .replace(
                &format!("\"rand_distr {version}\""),
                "\"rand_distr 99.0.0\"",
            );
        assert_ne!(bumped, CARGO_LOCK);
        assert_ne!(of(sweep, &cpu, NUMERIC_SOURCES, &bumped), base_sweep);
    }

    #[test]
    fn closures_follow_normal_dependencies_only() {
        let closure = dependency_closure(CARGO_LOCK, &["ndarray"]).unwrap();
        assert!(closure.iter().any(|l| l.starts_with("ndarray ")));
        assert!(!closure.iter().any(|l| l.starts_with("polars ")));
        assert!(dependency_closure(CARGO_LOCK, &["no-such-crate"]).is_err());
        let roots: BTreeSet<&str> = ["mondrian"].into();
        let (crates, registry) = workspace_closure(&roots, NUMERIC_SOURCES, CARGO_LOCK).unwrap();
        assert_eq!(crates, ["kernel-core", "mondrian"].into());
        let names: Vec<&str> = registry
            .iter()
            .map(|r| r.split(' ').next().unwrap())
            .collect();
        assert!(
            names.contains(&"ndarray") && names.contains(&"rand_chacha"),
            "{names:?}"
        );
        // criterion and approx are dev-dependencies of mondrian.
        assert!(
            !names.contains(&"criterion") && !names.contains(&"approx"),
            "{names:?}"
        );
    }
}
