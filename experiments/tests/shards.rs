//! Scale-out: a run split into shards (`--shard I/N`) that share the cell cache, merged into the
//! table a single run writes; and the Slurm array job that runs the shards (its scripts run here
//! as Slurm would run them; submission through a stand-in `sbatch`).

mod common;

use common::{project_dir, temp_root, text, EXPERIMENT, FIG5};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repro(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_repro"))
        .current_dir(root)
        .arg("--root")
        .arg(root)
        .args(args)
        .env("REPRO_DATA_DIR", root.join("no-data"))
        .output()
        .unwrap()
}

fn table(root: &Path, run: &str) -> PathBuf {
    root.join("results")
        .join(EXPERIMENT)
        .join(format!("{run}.parquet"))
}

fn same_tables(a: &Path, b: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_repro"))
        .current_dir(project_dir())
        .args(["compare", a.to_str().unwrap(), b.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn shards_partition_the_cells_and_the_merge_equals_a_single_run() {
    let single = temp_root();
    let out = repro(single.path(), &["run", FIG5, "--no-plot"]);
    assert!(out.status.success(), "{}", text(&out));

    let sharded = temp_root();
    // Merging before the shards ran is an error that says what to do.
    let out = repro(sharded.path(), &["merge", FIG5, "--no-plot"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("run the missing shards"),
        "{}",
        text(&out)
    );

    let mut computed = 0;
    for i in 1..=4 {
        let shard = format!("{i}/4");
        let out = repro(
            sharded.path(),
            &["run", FIG5, "--shard", &shard, "--no-plot"],
        );
        assert!(out.status.success(), "{}", text(&out));
        let m = experiments::store::Manifest::read(&sharded.path().join(format!(
            "results/_runs/{EXPERIMENT}/full.shard-{i}-of-4.manifest.json"
        )))
        .unwrap();
        computed += m.cells.computed;
        // Counts are the shard's own: its cells, none of them cached before.
        assert_eq!(m.cells.cached, 0);
        assert_eq!(m.cells.total, m.cells.computed);
        assert!(m.table.is_none());
        assert!(!table(sharded.path(), "full").exists());
    }
    // 15 cells, each computed by exactly one shard.
    assert_eq!(computed, 15);
    let out = repro(sharded.path(), &["merge", FIG5, "--no-plot"]);
    assert!(out.status.success(), "{}", text(&out));
    let (m, _) = experiments::store::load_complete(&experiments::store::RunPaths::new(
        sharded.path(),
        EXPERIMENT,
        "full",
    ))
    .unwrap();
    assert_eq!((m.cells.cached, m.cells.computed), (15, 0));
    assert_eq!(m.shards.len(), 4);
    assert!(m.shards.iter().all(|s| !s.host.is_empty()));
    same_tables(
        &table(single.path(), "full"),
        &table(sharded.path(), "full"),
    );
}

#[test]
fn bad_shards_are_rejected() {
    let root = temp_root();
    for bad in ["0/4", "5/4", "1/0", "x", "2"] {
        let out = repro(root.path(), &["run", FIG5, "--shard", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out));
    }
}

#[test]
fn the_slurm_array_runs_the_shards_and_its_merge_job_writes_the_table() {
    let single = temp_root();
    let out = repro(
        single.path(),
        &["run", FIG5, "--profile", "quick", "--no-plot"],
    );
    assert!(out.status.success(), "{}", text(&out));

    let root = temp_root();
    let out = repro(
        root.path(),
        &[
            "slurm",
            FIG5,
            "--shards",
            "3",
            "--profile",
            "quick",
            "--cpus-per-task",
            "2",
            "--partition",
            "batch",
            "--time",
            "00:10:00",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let slurm = root
        .path()
        .join(format!("results/_runs/{EXPERIMENT}/slurm"));
    let array = std::fs::read_to_string(slurm.join("quick.array.sbatch")).unwrap();
    for line in [
        "#SBATCH --array=1-3",
        "#SBATCH --cpus-per-task=2",
        "#SBATCH --partition=batch",
        "#SBATCH --time=00:10:00",
        "--shard \"$SLURM_ARRAY_TASK_ID/3\"",
    ] {
        assert!(array.contains(line), "{line}: {array}");
    }
    // Run the scripts as Slurm would: each array task, then the merge.
    for task in 1..=3 {
        let out = Command::new("bash")
            .arg(slurm.join("quick.array.sbatch"))
            .env("SLURM_ARRAY_TASK_ID", task.to_string())
            .env("SLURM_CPUS_PER_TASK", "2")
            .env("REPRO_DATA_DIR", root.path().join("no-data"))
            .output()
            .unwrap();
        assert!(out.status.success(), "task {task}: {}", text(&out));
    }
    let out = Command::new("bash")
        .arg(slurm.join("quick.merge.sbatch"))
        .env("REPRO_DATA_DIR", root.path().join("no-data"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    same_tables(&table(single.path(), "quick"), &table(root.path(), "quick"));

    // Submission: the merge job depends on the array job (a stand-in sbatch records the calls).
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("calls");
    let sbatch = bin.path().join("sbatch");
    std::fs::write(
        &sbatch,
        format!(
            "#!/bin/sh\necho \"$@\" >> {}\nif [ -f {}.n ]; then echo 8; else touch {}.n; echo '7;cluster'; fi\n",
            log.display(),
            log.display(),
            log.display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", sbatch.to_str().unwrap()])
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_repro"))
        .current_dir(root.path())
        .args([
            "slurm",
            FIG5,
            "--shards",
            "3",
            "--profile",
            "quick",
            "--submit",
        ])
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let calls = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines.len(), 2, "{calls}");
    assert!(lines[0].contains("quick.array.sbatch"), "{calls}");
    assert!(
        lines[1].contains("--dependency=afterok:7") && lines[1].contains("quick.merge.sbatch"),
        "{calls}"
    );
    assert!(text(&out).contains("array job 7") && text(&out).contains("merge job 8"));
}
