//! A real one-node Slurm cluster (Debian's slurmctld, slurmd and munge, started and stopped by
//! the test): `repro slurm --submit` runs a config's quick profile as an array of shards and a
//! dependent merge job, whose table must equal a local run's. Skipped, with the reason, only
//! where the daemons cannot run (not root, packages absent, daemons not coming up).

mod common;

use common::{temp_root, text, EXPERIMENT, FIG5};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn run(program: &str, args: &[&str], conf: &Path) -> Option<Output> {
    Command::new(program)
        .args(args)
        .env("SLURM_CONF", conf)
        .output()
        .ok()
}

/// Daemons started by the test, stopped when it ends (even on a failed assertion).
struct Daemons(Vec<Child>);

impl Drop for Daemons {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn skip(reason: &str) {
    eprintln!("slurm test SKIPPED: {reason}");
}

fn found(program: &str) -> bool {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .any(|d| Path::new(d).join(program).is_file())
}

/// A munge daemon answering on the default socket (started as the munge user if none is).
fn ensure_munge(daemons: &mut Daemons) -> Result<(), String> {
    let works = || {
        Command::new("munge")
            .arg("-n")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if works() {
        return Ok(());
    }
    for dir in ["/run/munge", "/var/log/munge", "/var/lib/munge"] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
        Command::new("chown")
            .args(["munge:munge", dir])
            .status()
            .map_err(|e| e.to_string())?;
    }
    if !Path::new("/etc/munge/munge.key").exists() {
        Command::new("runuser")
            .args(["-u", "munge", "--", "mungekey", "--create"])
            .status()
            .map_err(|e| format!("mungekey: {e}"))?;
    }
    // setpriv execs munged itself (runuser would fork), so stopping the child stops munged.
    let child = Command::new("setpriv")
        .args([
            "--reuid=munge",
            "--regid=munge",
            "--clear-groups",
            "munged",
            "--foreground",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("munged: {e}"))?;
    daemons.0.push(child);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if works() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err("munged did not answer within 10 s".into())
}

/// Writes slurm.conf for this host into `dir`.
fn write_conf(dir: &Path) -> PathBuf {
    let host = String::from_utf8_lossy(&Command::new("hostname").output().unwrap().stdout)
        .trim()
        .to_string();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let port = 20000 + (std::process::id() % 5000) * 2;
    for sub in ["spool/ctld", "spool/d", "log"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let d = dir.display();
    let conf = format!(
        "ClusterName=repro\nSlurmctldHost={host}\nAuthType=auth/munge\nCredType=cred/munge\n\
         ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSelectType=select/cons_tres\n\
         SelectTypeParameters=CR_Core\nReturnToService=2\nSlurmUser=root\nSlurmdUser=root\n\
         SlurmctldPort={port}\nSlurmdPort={}\nSlurmctldPidFile={d}/slurmctld.pid\n\
         SlurmdPidFile={d}/slurmd.pid\nSlurmdSpoolDir={d}/spool/d\nStateSaveLocation={d}/spool/ctld\n\
         SlurmctldLogFile={d}/log/slurmctld.log\nSlurmdLogFile={d}/log/slurmd.log\n\
         JobCompType=jobcomp/none\nAccountingStorageType=accounting_storage/none\n\
         JobAcctGatherType=jobacct_gather/none\nMpiDefault=none\nSchedulerParameters=sched_interval=2\n\
         NodeName={host} CPUs={cpus} State=UNKNOWN\n\
         PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
        port + 1
    );
    let path = dir.join("slurm.conf");
    std::fs::write(&path, conf).unwrap();
    path
}

fn log_tail(dir: &Path) -> String {
    ["slurmctld.log", "slurmd.log"]
        .iter()
        .map(|f| {
            let t = std::fs::read_to_string(dir.join("log").join(f)).unwrap_or_default();
            let lines: Vec<&str> = t.lines().collect();
            format!(
                "{f}:\n{}",
                lines[lines.len().saturating_sub(8)..].join("\n")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_sharded_array_on_a_real_slurm_cluster_merges_into_the_local_table() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc_geteuid() } != 0 {
        return skip("the daemons need root");
    }
    for program in [
        "slurmctld",
        "slurmd",
        "munged",
        "sbatch",
        "squeue",
        "sinfo",
        "munge",
    ] {
        if !found(program) {
            return skip(&format!(
                "{program} is not installed (apt-get install slurmctld slurmd munge slurm-client)"
            ));
        }
    }
    let mut daemons = Daemons(Vec::new());
    if let Err(e) = ensure_munge(&mut daemons) {
        return skip(&e);
    }
    let cluster = tempfile::tempdir().unwrap();
    let conf = write_conf(cluster.path());
    for daemon in ["slurmctld", "slurmd"] {
        match Command::new(daemon)
            .args(["-D", "-f", conf.to_str().unwrap()])
            .env("SLURM_CONF", &conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => daemons.0.push(child),
            Err(e) => return skip(&format!("{daemon} does not start: {e}")),
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let start = Instant::now();
    loop {
        let state = run("sinfo", &["-h", "-o", "%t"], &conf).map(|o| text(&o));
        if state.as_deref().is_some_and(|s| s.trim() == "idle") {
            break;
        }
        if start.elapsed() > Duration::from_secs(30) {
            return skip(&format!(
                "the node did not become idle within 30 s ({state:?})\n{}",
                log_tail(cluster.path())
            ));
        }
        std::thread::sleep(Duration::from_millis(300));
    }

    // The reference: a local run of the quick profile.
    let local = temp_root();
    let out = Command::new(env!("CARGO_BIN_EXE_repro"))
        .args(["--root", local.path().to_str().unwrap()])
        .args(["run", FIG5, "--profile", "quick", "--no-plot"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));

    let root = temp_root();
    let submitted = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_repro"))
        .current_dir(root.path())
        .args(["--root", root.path().to_str().unwrap()])
        .args([
            "slurm",
            FIG5,
            "--shards",
            "3",
            "--profile",
            "quick",
            "--submit",
        ])
        .env("SLURM_CONF", &conf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let merged = root
        .path()
        .join("results/_runs")
        .join(EXPERIMENT)
        .join("quick.manifest.json");
    loop {
        let queue = run("squeue", &["-h"], &conf)
            .map(|o| text(&o))
            .unwrap_or_default();
        if queue.trim().is_empty() && merged.exists() {
            break;
        }
        assert!(
            submitted.elapsed() < Duration::from_secs(180),
            "jobs did not finish in 180 s: {queue}\n{}",
            log_tail(cluster.path())
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let manifest = experiments::store::Manifest::read(&merged).unwrap();
    assert_eq!(manifest.status, experiments::store::RunStatus::Complete);
    assert_eq!(manifest.shards.len(), 3, "{:?}", manifest.shards);
    let table = |r: &Path| r.join("results").join(EXPERIMENT).join("quick.parquet");
    let out = Command::new(env!("CARGO_BIN_EXE_repro"))
        .args(["compare"])
        .arg(table(local.path()))
        .arg(table(root.path()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    eprintln!(
        "slurm test: 3 shards + merge on a one-node cluster in {:.1} s",
        submitted.elapsed().as_secs_f64()
    );
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}
