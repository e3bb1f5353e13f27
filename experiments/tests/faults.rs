//! kill -9 at pseudo-random moments of a real run and of a sharded run: never a complete-looking
//! wrong table, nothing finished computed again, and the final table equal to an uninterrupted
//! run's.

mod common;

use common::{project_dir, temp_root, EXPERIMENT, FIG5};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use experiments::store::{load_complete, Manifest, RunPaths, RunStatus};

/// 3 methods x 40 repetitions on 150 points: about 2 s of cells.
const SETS: [&str; 4] = ["--set", "repeats=40", "--set", "data.n=150"];

fn command(root: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_repro"));
    cmd.current_dir(root)
        .arg("--root")
        .arg(root)
        .args(args)
        .args(SETS)
        .arg("--no-plot")
        .args(if args[0] == "run" {
            &["--jobs", "2"][..]
        } else {
            &[]
        })
        .env("REPRO_DATA_DIR", root.join("no-data"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// The run's name (with overrides) once some manifest, of it or of a shard, exists.
fn run_name(root: &Path) -> Option<String> {
    experiments::store::list_runs(root, EXPERIMENT)
        .into_iter()
        .next()
        .map(|r| r.split(".shard-").next().unwrap_or(&r).to_string())
}

fn cached_cells(root: &Path) -> usize {
    std::fs::read_dir(root.join("results/_runs").join(EXPERIMENT).join("cells"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .count()
        })
        .unwrap_or(0)
}

fn compare(a: &Path, b: &Path) -> bool {
    Command::new(env!("CARGO_BIN_EXE_repro"))
        .current_dir(project_dir())
        .args(["compare", a.to_str().unwrap(), b.to_str().unwrap()])
        .output()
        .unwrap()
        .status
        .success()
}

/// Pseudo-random delays (a fixed LCG): the same trials on every machine.
struct Delays(u64);

impl Delays {
    fn next_ms(&mut self, max: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % max
    }
}

/// Whatever a killed run left: a complete manifest must vouch for the reference numbers.
fn check_invariant(root: &Path, reference: &Path) {
    let Some(run) = run_name(root) else { return };
    let paths = RunPaths::new(root, EXPERIMENT, &run);
    if let Ok(m) = Manifest::read(&paths.manifest) {
        if m.status == RunStatus::Complete {
            load_complete(&paths).expect("a complete manifest vouches for its table");
            assert!(
                compare(reference, &paths.table),
                "a complete table with other numbers"
            );
        }
    }
}

fn reference_table() -> (tempfile::TempDir, PathBuf) {
    let root = temp_root();
    let out = command(root.path(), &["run", FIG5]).status().unwrap();
    assert!(out.success());
    let run = run_name(root.path()).unwrap();
    let table = RunPaths::new(root.path(), EXPERIMENT, &run).table;
    (root, table)
}

#[test]
fn kill_9_at_twenty_moments_of_a_run_never_leaves_a_wrong_table() {
    let (_reference_root, reference) = reference_table();
    let root = temp_root();
    let mut delays = Delays(20161231);
    for _ in 0..20 {
        let mut child = command(root.path(), &["run", FIG5]).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delays.next_ms(1500)));
        let _ = child.kill();
        let _ = child.wait();
        check_invariant(root.path(), &reference);
    }
    // Finishing: only the cells not yet cached are computed.
    let before = cached_cells(root.path());
    let status = command(root.path(), &["run", FIG5]).status().unwrap();
    assert!(status.success());
    let run = run_name(root.path()).unwrap();
    let (m, _) = load_complete(&RunPaths::new(root.path(), EXPERIMENT, &run)).unwrap();
    assert_eq!(m.cells.computed, 120 - before, "{:?}", m.cells);
    assert!(compare(
        &reference,
        &RunPaths::new(root.path(), EXPERIMENT, &run).table
    ));
}

#[test]
fn kill_9_during_shards_and_merges_never_leaves_a_wrong_table() {
    let (_reference_root, reference) = reference_table();
    let root = temp_root();
    let mut delays = Delays(42);
    for trial in 0..20 {
        let shard = format!("{}/3", trial % 3 + 1);
        let args: Vec<&str> = if trial % 4 == 3 {
            vec!["merge", FIG5]
        } else {
            vec!["run", FIG5, "--shard", &shard]
        };
        let mut child = command(root.path(), &args).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delays.next_ms(700)));
        let _ = child.kill();
        let _ = child.wait();
        check_invariant(root.path(), &reference);
    }
    let before = cached_cells(root.path());
    let mut computed = 0;
    for i in 1..=3 {
        let shard = format!("{i}/3");
        let status = command(root.path(), &["run", FIG5, "--shard", &shard])
            .status()
            .unwrap();
        assert!(status.success());
        let run = run_name(root.path()).unwrap();
        computed += Manifest::read(
            &RunPaths::new(root.path(), EXPERIMENT, &format!("{run}.shard-{i}-of-3")).manifest,
        )
        .unwrap()
        .cells
        .computed;
    }
    assert_eq!(computed, 120 - before);
    let out = command(root.path(), &["merge", FIG5])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = run_name(root.path()).unwrap();
    assert!(compare(
        &reference,
        &RunPaths::new(root.path(), EXPERIMENT, &run).table
    ));
}
