//! The store: the per-cell cache, run locks, run manifests (files written through
//! [`crate::files`]).
//!
//! Layout under the project root:
//! ```text
//! results/<experiment>/<run>.parquet                 the tidy result table of a run
//! results/_runs/<experiment>/<run>.manifest.json     provenance and status of that run
//! results/_runs/<experiment>/<run>.lock              held by the process running it
//! results/_runs/<experiment>/cells/<key>.json        cached rows of one finished cell
//! results/_runs/<experiment>/slurm/                  `repro slurm` job scripts
//! figures/<experiment>/<run>.{png,svg}               rendered from the table only
//! ```
//! `results/<experiment>/` holds the tables and nothing else, so any Parquet reader takes the
//! folder as one dataset (`pd.read_parquet("results/<experiment>/")`, `pl.read_parquet`,
//! `pyarrow.dataset`): every run of the experiment, told apart by the `run` column.
//! Every file is written to a temporary name in the same folder and renamed into place, so a
//! crash never leaves a partial file under a final name. A table counts only when its manifest
//! says `complete` and records the table's sha256; a run in progress first marks its manifest
//! `running` and removes the old table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::files::write_atomic;
use crate::keys::{file_sha256, sha256_hex};
use crate::table::Row;

/// An exclusive lock on one run (`results/<experiment>/<run>.lock`, an advisory `flock`), held
/// until dropped; the kernel releases it when the process dies, however it dies.
pub struct RunLock {
    _file: std::fs::File,
}

impl RunLock {
    /// Takes the lock, first telling (through `waiting`) and then waiting when another process
    /// holds it.
    pub fn acquire(paths: &RunPaths, waiting: impl FnOnce(&Path)) -> Result<RunLock> {
        use std::os::unix::io::AsRawFd;
        std::fs::create_dir_all(&paths.runs_dir)
            .with_context(|| format!("cannot create {}", paths.runs_dir.display()))?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&paths.lock)
            .with_context(|| format!("cannot open the lock {}", paths.lock.display()))?;
        let fd = file.as_raw_fd();
        // SAFETY: flock only reads the descriptor, which `file` keeps open.
        let try_lock = unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) };
        if try_lock != 0 {
            waiting(&paths.lock);
            // SAFETY: as above.
            if unsafe { libc::flock(fd, libc::LOCK_EX) } != 0 {
                bail!(
                    "cannot lock {}: {}",
                    paths.lock.display(),
                    std::io::Error::last_os_error()
                );
            }
        }
        Ok(RunLock { _file: file })
    }

    /// Whether a live process holds the lock of this run.
    pub fn is_held(paths: &RunPaths) -> bool {
        use std::os::unix::io::AsRawFd;
        let Ok(file) = std::fs::File::open(&paths.lock) else {
            return false;
        };
        // SAFETY: flock only reads the descriptor, which `file` keeps open; a lock taken here
        // is released when `file` closes at the end of this function.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) != 0 }
    }
}

/// Paths of one run of one experiment.
#[derive(Debug, Clone)]
pub struct RunPaths {
    /// `results/<experiment>/`: the tables only.
    pub results_dir: PathBuf,
    /// `results/_runs/<experiment>/`: manifests, locks, the cell cache, job scripts.
    pub runs_dir: PathBuf,
    pub cells_dir: PathBuf,
    pub table: PathBuf,
    pub manifest: PathBuf,
    /// Held by the process running it ([`RunLock`]).
    pub lock: PathBuf,
    pub figure_stem: PathBuf,
}

impl RunPaths {
    pub fn new(root: &Path, experiment: &str, run: &str) -> Self {
        let results_dir = root.join("results").join(experiment);
        let runs_dir = runs_dir(root, experiment);
        Self {
            cells_dir: runs_dir.join("cells"),
            table: results_dir.join(format!("{run}.parquet")),
            manifest: runs_dir.join(format!("{run}.manifest.json")),
            lock: runs_dir.join(format!("{run}.lock")),
            figure_stem: root.join("figures").join(experiment).join(run),
            results_dir,
            runs_dir,
        }
    }
}

/// Where everything of an experiment's runs but their tables lives:
/// `results/_runs/<experiment>/` (manifests, locks, the cell cache, job scripts).
pub fn runs_dir(root: &Path, experiment: &str) -> PathBuf {
    root.join("results").join("_runs").join(experiment)
}

/// The cached result of one finished cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CachedCell {
    pub identity: String,
    pub rows: Vec<Row>,
    pub seconds: f64,
    /// Set when the cell stopped for its budget: the budget it ran under, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_seconds: Option<f64>,
}

/// What the cache holds for a cell.
#[derive(Debug, Clone, PartialEq)]
pub enum CellLoad {
    /// A verified entry.
    Hit(CachedCell),
    /// No entry.
    Absent,
    /// An entry that cannot be trusted (the reason): it is recomputed.
    Discarded(String),
}

/// Reads a cached cell. The file is the sha256 of the entry's JSON on the first line, then the
/// JSON: an entry whose checksum does not match (edited, truncated, garbled) or whose identity
/// is another cell's is discarded, never used.
pub fn load_cell(cells_dir: &Path, key: &str, identity: &str) -> CellLoad {
    let path = cells_dir.join(format!("{key}.json"));
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return CellLoad::Absent,
        Err(e) => return CellLoad::Discarded(format!("unreadable ({e})")),
    };
    let Some(newline) = bytes.iter().position(|&b| b == b'\n') else {
        return CellLoad::Discarded("no checksum line".into());
    };
    let (digest, json) = (&bytes[..newline], &bytes[newline + 1..]);
    if digest != sha256_hex(json).as_bytes() {
        return CellLoad::Discarded("checksum mismatch (edited, truncated or garbled)".into());
    }
    match serde_json::from_slice::<CachedCell>(json) {
        Ok(cell) if cell.identity == identity => CellLoad::Hit(cell),
        Ok(_) => CellLoad::Discarded("it belongs to another cell".into()),
        Err(e) => CellLoad::Discarded(format!("not a cached cell ({e})")),
    }
}

/// Stores a finished cell with its checksum.
pub fn store_cell(cells_dir: &Path, key: &str, cell: &CachedCell) -> Result<()> {
    let json = serde_json::to_string(cell)?;
    let text = format!("{}\n{json}", sha256_hex(json.as_bytes()));
    write_atomic(&cells_dir.join(format!("{key}.json")), text.as_bytes())
}

/// Status of a run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Complete,
    Failed,
}

/// Cell counts of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CellCounts {
    pub total: usize,
    pub cached: usize,
    pub computed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Cells that stopped for their budget (their rows are kept, marked `did_not_finish`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub did_not_finish: usize,
    /// Cells that could not run the authors' code (a missing toolchain, no archive, a failed
    /// build, a crash or a timeout): left out of the table, listed in `unavailable`, never
    /// cached, so a later run computes them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub upstream_unavailable: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A failed cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Failure {
    pub identity: String,
    pub error: String,
}

/// The stored table of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableInfo {
    pub file: String,
    pub sha256: String,
    pub rows: usize,
    pub columns: Vec<String>,
}

/// Provenance and status of a run, written next to its table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub status: RunStatus,
    pub experiment: String,
    pub kind: String,
    pub paper: String,
    pub figure: String,
    /// Config path relative to the project root.
    pub config: String,
    pub profile: String,
    pub run: String,
    pub overrides: Vec<String>,
    pub base_seed: u64,
    /// The config as resolved (profile and overrides applied), TOML.
    pub resolved_config: String,
    pub provenance: crate::provenance::Provenance,
    /// sha256 of every dataset file read, by dataset then file.
    pub datasets: BTreeMap<String, BTreeMap<String, String>>,
    /// What generating the data had to do beyond its spec (e.g. a jitter), if anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_notes: Vec<String>,
    pub threads: usize,
    pub started: String,
    pub finished: Option<String>,
    pub wall_seconds: Option<f64>,
    pub cells: CellCounts,
    pub failures: Vec<Failure>,
    /// The cells that could not run the authors' code, each with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<Failure>,
    pub table: Option<TableInfo>,
    /// A merged run: the shard runs whose cells it gathered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardInfo>,
}

/// A shard run gathered by a merge.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ShardInfo {
    pub run: String,
    pub status: RunStatus,
    pub host: String,
    pub threads: usize,
    pub cells: CellCounts,
    pub started: String,
    pub wall_seconds: Option<f64>,
}

/// The shard manifests of `run` in a runs folder (`<run>.shard-I-of-N`), sorted.
pub fn shard_manifests(runs_dir: &Path, run: &str) -> Vec<ShardInfo> {
    let prefix = format!("{run}.shard-");
    let mut out: Vec<ShardInfo> = std::fs::read_dir(runs_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let shard = name.strip_suffix(".manifest.json")?;
            shard.starts_with(&prefix).then(|| e.path())
        })
        .filter_map(|p| Manifest::read(&p).ok())
        .map(|m| ShardInfo {
            run: m.run,
            status: m.status,
            host: m.provenance.host,
            threads: m.threads,
            cells: m.cells,
            started: m.started,
            wall_seconds: m.wall_seconds,
        })
        .collect();
    out.sort_by_cached_key(|s| crate::keys::natural_key(&s.run));
    out
}

impl Manifest {
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        write_atomic(path, text.as_bytes())
    }

    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("corrupt manifest {}", path.display()))
    }
}

/// Loads the table of a complete run, verifying it against its manifest.
pub fn load_complete(paths: &RunPaths) -> Result<(Manifest, Vec<Row>)> {
    let manifest = Manifest::read(&paths.manifest)?;
    if manifest.status != RunStatus::Complete {
        bail!(
            "run {} is {:?}, not complete: rerun it (finished cells are cached)",
            paths.manifest.display(),
            manifest.status
        );
    }
    let info = manifest
        .table
        .as_ref()
        .context("complete manifest without a table")?;
    let digest = file_sha256(&paths.table)?;
    if digest != info.sha256 {
        bail!(
            "{} does not match its manifest (sha256 {digest}, manifest says {}): rerun the experiment",
            paths.table.display(),
            info.sha256
        );
    }
    let rows = crate::table::from_frame(&crate::table::read_parquet(&paths.table)?)?;
    Ok((manifest, rows))
}

/// Runs found under `results/_runs/<experiment>/` (names of `*.manifest.json`), sorted.
pub fn list_runs(root: &Path, experiment: &str) -> Vec<String> {
    let dir = runs_dir(root, experiment);
    let mut runs: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".manifest.json"))
                .map(str::to_string)
        })
        .collect();
    runs.sort();
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_verifies_checksums_and_identities() {
        let dir = tempfile::tempdir().unwrap();
        let cell = CachedCell {
            identity: "a".into(),
            rows: vec![crate::table::row([("x", 0.25.into())])],
            seconds: 0.1,
            budget_seconds: None,
        };
        assert_eq!(load_cell(dir.path(), "k", "a"), CellLoad::Absent);
        store_cell(dir.path(), "k", &cell).unwrap();
        assert_eq!(load_cell(dir.path(), "k", "a"), CellLoad::Hit(cell));
        assert!(matches!(
            load_cell(dir.path(), "k", "b"),
            CellLoad::Discarded(_)
        ));
        let path = dir.path().join("k.json");
        let stored = std::fs::read_to_string(&path).unwrap();
        // A forged value, a truncated file, garbage, the old format without a checksum.
        for bad in [
            stored.replace("0.25", "0.26"),
            stored[..stored.len() - 5].to_string(),
            "{not json".to_string(),
            stored.lines().nth(1).unwrap().to_string(),
        ] {
            std::fs::write(&path, &bad).unwrap();
            assert!(
                matches!(load_cell(dir.path(), "k", "a"), CellLoad::Discarded(_)),
                "{bad}"
            );
        }
    }
}
