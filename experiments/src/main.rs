//! `repro`: run, check and plot the reproduced experiments. See `repro --help`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use experiments::commands::{self, Common};
use experiments::runner::RunOptions;

#[derive(Parser)]
#[command(
    name = "repro",
    version,
    about = "Reproduce the experiments of five papers on random-partition and random-feature kernel methods from TOML configs.",
    long_about = None
)]
struct Cli {
    /// Project root (holds configs/, results/, figures/). Default: $REPRO_ROOT, else the nearest
    /// folder above the current one that has configs/ and Cargo.toml.
    #[arg(long, global = true)]
    root: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Execution {
    /// Worker threads for cells (default: all cores). Results do not depend on it.
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// Recompute cells even when a cached result exists.
    #[arg(long)]
    force: bool,
    /// Stop starting new cells after the first failure.
    #[arg(long)]
    fail_fast: bool,
    /// A cell that cannot run the authors' code (missing toolchain, no archive, failed build,
    /// crash, timeout) fails the run; by default it is skipped with the reason.
    #[arg(long)]
    require_upstream: bool,
    /// Seconds one command of the authors' code may run in a cell before it is killed.
    #[arg(long, value_name = "SECONDS", default_value_t = experiments::upstream::DEFAULT_TIMEOUT_SECONDS)]
    upstream_timeout: f64,
}

impl Execution {
    fn options(&self) -> RunOptions {
        RunOptions {
            jobs: self.jobs,
            force: self.force,
            fail_fast: self.fail_fast,
            require_upstream: self.require_upstream,
            upstream_timeout_seconds: Some(self.upstream_timeout),
            ..Default::default()
        }
    }
}

/// Which configs to run, how.
#[derive(Args, Clone)]
struct Selection {
    /// Config files, e.g. configs/mondrian/fig5_kernel_error.toml.
    #[arg(required = true)]
    configs: Vec<PathBuf>,
    /// Profile to apply ([profile.NAME] in the config); `full` is the paper's protocol.
    #[arg(long, default_value = "full")]
    profile: String,
    /// Override a config key, e.g. --set params.lifetime=3 --set repeats=10 (recorded in the manifest).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Name the run (results/<experiment>/NAME.parquet, its manifest and figures), e.g.
    /// --name lifetime-sweep. Default: the profile, plus -set-<digest of the overrides>.
    #[arg(long)]
    name: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Run experiments from config files; writes results/, figures/ and evaluates the checks.
    Run {
        #[command(flatten)]
        selection: Selection,
        #[command(flatten)]
        execution: Execution,
        /// Do not render figures.
        #[arg(long)]
        no_plot: bool,
        /// Run only shard I of N of the cells into the cell cache (no table; `repro merge`
        /// writes it), e.g. --shard 2/8.
        #[arg(long, value_name = "I/N")]
        shard: Option<experiments::runner::Shard>,
    },
    /// Write the table of a sharded run from the cell cache (after every `--shard I/N` run):
    /// the same table a single run writes, with a manifest naming the shards and their hosts.
    Merge {
        /// The configs, profile and overrides the shards ran.
        #[command(flatten)]
        selection: Selection,
        /// Do not render figures.
        #[arg(long)]
        no_plot: bool,
    },
    /// Write (and with --submit, submit) a Slurm array job running a config's cells in N shards,
    /// plus a merge job that depends on it.
    Slurm {
        /// The config file.
        config: PathBuf,
        /// Number of shards (array tasks).
        #[arg(long)]
        shards: usize,
        #[arg(long, default_value = "full")]
        profile: String,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Name the run (as `repro run --name`).
        #[arg(long)]
        name: Option<String>,
        /// sbatch --partition.
        #[arg(long)]
        partition: Option<String>,
        /// sbatch --time of each array task, e.g. 02:00:00.
        #[arg(long)]
        time: Option<String>,
        /// sbatch --cpus-per-task (each shard runs with --jobs $SLURM_CPUS_PER_TASK).
        #[arg(long, default_value_t = 1)]
        cpus_per_task: usize,
        /// Submit with sbatch (the merge job with --dependency=afterok on the array).
        #[arg(long)]
        submit: bool,
    },
    /// Run every config under configs/ whose data is present; exits non-zero if any was skipped or failed.
    ReproduceAll {
        #[arg(long, default_value = "full")]
        profile: String,
        #[command(flatten)]
        execution: Execution,
        /// Do not render figures.
        #[arg(long)]
        no_plot: bool,
    },
    /// Re-render figures from stored results (no recomputation).
    Plot {
        /// Config files (default: all under configs/).
        configs: Vec<PathBuf>,
    },
    /// Run the quick profile of every config (cached cells reused) and evaluate its [[check]]s.
    Check {
        /// Config files (default: all under configs/).
        configs: Vec<PathBuf>,
        /// Profile to check (default: quick; configs without it use full).
        #[arg(long, default_value = "quick")]
        profile: String,
        /// Fail, instead of skipping, when a config's dataset is not present.
        #[arg(long)]
        require_data: bool,
        #[command(flatten)]
        execution: Execution,
    },
    /// Write results/REPORT.md: reproduced vs published numbers of the stored full runs, per paper.
    Report {
        /// Config files (default: all under configs/).
        configs: Vec<PathBuf>,
        /// Which stored run to report (e.g. quick, or full-set-1a2b3c4d for an ablation).
        #[arg(long, default_value = "full")]
        run: String,
        /// Also write the report as static HTML pages (the dashboard, one page per paper with
        /// its SVG figures, configs as resolved and provenance) into DIR (default
        /// results/html, or results/html-<run>); they open from disk.
        #[arg(long, value_name = "DIR")]
        #[allow(clippy::option_option)]
        html: Option<Option<PathBuf>>,
    },
    /// List configs, their experiments, data availability and stored runs.
    List {
        /// List the experiment kinds and their result columns instead.
        #[arg(long)]
        kinds: bool,
    },
    /// Compare two stored result tables: the same numbers, cell keys and *_seconds columns aside?
    /// Exits 0 when they agree bit for bit, 1 when they differ.
    Compare {
        /// A result table (.parquet).
        a: PathBuf,
        /// Another result table (.parquet).
        b: PathBuf,
    },
    /// Inspect, verify and fetch registered datasets.
    Datasets {
        #[command(subcommand)]
        command: DatasetsCommand,
    },
}

#[derive(Subcommand)]
enum DatasetsCommand {
    /// List registered datasets and where each is found.
    List,
    /// Verify the sha256 of every registered file that is present.
    Verify,
    /// Download a dataset from its upstream address into datasets/cache/ and verify it.
    Fetch {
        /// Dataset name (see `repro datasets list`).
        name: String,
    },
}

extern "C" {
    /// OpenBLAS's own setter (libopenblas is linked through ndarray-linalg's openblas-system).
    fn openblas_set_num_threads(num_threads: std::os::raw::c_int);
}

fn main() -> ExitCode {
    // Kernels for this CPU's instruction set when OpenBLAS did not recognise it (see
    // experiments::blas); returns only when there is nothing to do or the restart failed.
    if let Some(warning) = experiments::blas::restart_with_native_kernels() {
        eprintln!("warning: {warning}");
    }
    // One BLAS thread per worker: cells already run in parallel. OpenBLAS reads
    // OPENBLAS_NUM_THREADS when the library is loaded, before main, so the variable is set for
    // child processes and the running library is told directly (unless the user chose).
    if std::env::var_os("OPENBLAS_NUM_THREADS").is_none() {
        std::env::set_var("OPENBLAS_NUM_THREADS", "1");
        // SAFETY: openblas_set_num_threads only stores the thread count for later BLAS calls;
        // no BLAS call is running yet (nothing has been computed).
        unsafe { openblas_set_num_threads(1) };
    }
    let cli = Cli::parse();
    let common = match Common::new(cli.root) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    };
    // Execution options are checked before any config is read.
    let execution = match &cli.command {
        Command::Run { execution, .. }
        | Command::ReproduceAll { execution, .. }
        | Command::Check { execution, .. } => Some(execution.options()),
        _ => None,
    };
    if let Some(Err(e)) = execution.map(|o| o.threads()) {
        eprintln!("error: {e:#}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Run {
            selection: c,
            execution,
            no_plot,
            shard,
        } => commands::run(
            &common,
            &c.configs,
            &c.profile,
            &c.set,
            c.name.as_deref(),
            &RunOptions {
                shard,
                ..execution.options()
            },
            !no_plot,
        ),
        Command::Merge {
            selection: c,
            no_plot,
        } => commands::run(
            &common,
            &c.configs,
            &c.profile,
            &c.set,
            c.name.as_deref(),
            &RunOptions {
                merge: true,
                ..Default::default()
            },
            !no_plot,
        ),
        Command::Slurm {
            config,
            shards,
            profile,
            set,
            name,
            partition,
            time,
            cpus_per_task,
            submit,
        } => commands::slurm(
            &common,
            &commands::SlurmJob {
                config,
                shards,
                profile,
                overrides: set,
                name,
                partition,
                time,
                cpus_per_task,
            },
            submit,
        ),
        Command::ReproduceAll {
            profile,
            execution,
            no_plot,
        } => commands::reproduce_all(&common, &profile, &execution.options(), !no_plot),
        Command::Plot { configs } => commands::plot(&common, &configs),
        Command::Check {
            configs,
            profile,
            require_data,
            execution,
        } => commands::check(
            &common,
            &configs,
            &profile,
            &execution.options(),
            require_data,
        ),
        Command::Report { configs, run, html } => {
            commands::report(&common, &configs, &run, html.as_ref().map(|d| d.as_deref()))
        }
        Command::List { kinds } => commands::list(&common, kinds),
        Command::Compare { a, b } => commands::compare(&a, &b),
        Command::Datasets { command } => match command {
            DatasetsCommand::List => commands::datasets_list(&common),
            DatasetsCommand::Verify => commands::datasets_verify(&common),
            DatasetsCommand::Fetch { name } => commands::datasets_fetch(&common, &name),
        },
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
