//! Running a resolved config: plan cells, reuse cached ones, compute the rest in parallel,
//! assemble the tidy table, write it with its manifest.

use std::io::IsTerminal;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::cell::{self, Cell, STATUS_COLUMN};
use crate::config::ResolvedConfig;
use crate::context::CellContext;
use crate::kinds;
use crate::store::{
    self, CachedCell, CellCounts, Failure, Manifest, RunPaths, RunStatus, TableInfo,
};
use crate::table::{self, Row, Value};

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Worker threads (default: all cores).
    pub jobs: Option<usize>,
    /// Recompute cells even when cached.
    pub force: bool,
    /// Stop starting new cells after the first failure.
    pub fail_fast: bool,
    /// Run only this shard's cells into the cell cache (no table; see [`Shard`]).
    pub shard: Option<Shard>,
    /// Write the table from cached cells only (after the shards): fail if any cell is missing.
    pub merge: bool,
    /// A cell that cannot run the authors' code fails the run (default: it is skipped with the
    /// reason, and the table holds every other cell).
    pub require_upstream: bool,
    /// Seconds one upstream command of a cell may run (default
    /// [`crate::upstream::DEFAULT_TIMEOUT_SECONDS`]).
    pub upstream_timeout_seconds: Option<f64>,
}

/// One of `count` shards of a run's cells (`--shard index/count`, 1-based). Cells are assigned
/// by their kind's cost estimate, largest first, each to the shard with the least cost so far
/// (ties to the lower shard; cells in plan order): deterministic, and the same for every shard
/// process, so the shards partition the cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parsed = s
            .split_once('/')
            .and_then(|(i, n)| Some((i.trim().parse().ok()?, n.trim().parse().ok()?)));
        match parsed {
            Some((index, count)) if (1..=count).contains(&index) && count <= 100_000 => {
                Ok(Shard { index, count })
            }
            _ => Err(format!(
                "--shard {s}: expected I/N with 1 <= I <= N <= 100000, e.g. 2/8"
            )),
        }
    }
}

impl Shard {
    /// The run name of this shard's manifest and lock.
    pub fn run_name(&self, run: &str) -> String {
        format!("{run}.shard-{}-of-{}", self.index, self.count)
    }
}

/// The shard (0-based) of every cell, balancing the summed cost.
pub fn assign_shards(costs: &[f64], count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    let mut load = vec![0.0f64; count];
    let mut shard_of = vec![0; costs.len()];
    for i in order {
        let least = (0..count)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        load[least] += costs[i].max(0.0);
        shard_of[i] = least;
    }
    shard_of
}

/// Most worker threads `--jobs` may ask for.
pub const MAX_JOBS: usize = 1024;

impl RunOptions {
    /// Worker threads: `--jobs`, else every core; 0 or more than [`MAX_JOBS`] is an error.
    pub fn threads(&self) -> Result<usize> {
        match self.jobs {
            Some(0) => anyhow::bail!("--jobs 0: need at least one worker thread"),
            Some(n) if n > MAX_JOBS => anyhow::bail!(
                "--jobs {n}: at most {MAX_JOBS} worker threads (this machine has {} cores)",
                std::thread::available_parallelism().map_or(1, |n| n.get())
            ),
            Some(n) => Ok(n),
            None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        }
    }
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub manifest: Manifest,
    pub paths: RunPaths,
}

impl RunOutcome {
    pub fn ok(&self) -> bool {
        self.manifest.status == RunStatus::Complete
    }
}

/// Progress reporting: a bar on a terminal, plain log lines otherwise. Cells count 1000 units
/// each on the bar, so long cells that report progress move it while they run.
struct Progress {
    bar: Option<ProgressBar>,
    done: AtomicUsize,
    total: usize,
    label: String,
    /// Least time between two log lines of one running cell (`REPRO_PROGRESS_SECONDS`).
    every: Duration,
}

const UNITS: u64 = 1000;

impl Progress {
    fn new(label: &str, total: usize) -> Self {
        let bar = (std::io::stderr().is_terminal() && total > 0).then(|| {
            // Hidden until styled and labelled, so no first frame reads "0% of  cells".
            let bar = ProgressBar::with_draw_target(
                Some(total as u64 * UNITS),
                indicatif::ProgressDrawTarget::hidden(),
            );
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix} [{elapsed_precise}] {bar:30} {percent:>3}% of {msg} cells (eta {remaining})",
                )
                .expect("valid template")
                // The remaining time at the mean rate since the start (indicatif's own eta
                // follows the recent rate, which a burst of cached or short cells makes
                // optimistic).
                .with_key(
                    "remaining",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let f = state.fraction() as f64;
                        let elapsed = state.elapsed().as_secs_f64();
                        let _ = if f <= 0.0 {
                            write!(w, "?")
                        } else {
                            let left = elapsed * (1.0 - f) / f;
                            write!(w, "{}", indicatif::HumanDuration(Duration::from_secs_f64(left)))
                        };
                    },
                ),
            );
            bar.set_prefix(label.to_string());
            bar.set_message(total.to_string());
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar
        });
        let every = std::env::var("REPRO_PROGRESS_SECONDS")
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map_or(Duration::from_secs(10), Duration::from_secs_f64);
        Self {
            bar,
            done: AtomicUsize::new(0),
            total,
            label: label.to_string(),
            every,
        }
    }

    /// The progress callback of one running cell, and the units it has reported.
    fn cell<'a>(&'a self, what: &'a str, reported: &'a AtomicU64) -> impl Fn(f64) + Sync + 'a {
        let started = Instant::now();
        let last_line = Mutex::new(started);
        move |fraction: f64| {
            let units = (fraction * UNITS as f64) as u64;
            let before = reported.fetch_max(units, Ordering::SeqCst);
            match &self.bar {
                Some(bar) if units > before => bar.inc(units - before),
                Some(_) => {}
                None => {
                    let mut last = last_line.lock().unwrap_or_else(|e| e.into_inner());
                    if last.elapsed() >= self.every && units > before {
                        *last = Instant::now();
                        eprintln!(
                            "[{}] running {what}: {:.0}% ({:.1} s)",
                            self.label,
                            fraction * 100.0,
                            started.elapsed().as_secs_f64()
                        );
                    }
                }
            }
        }
    }

    fn finished(&self, what: &str, seconds: f64, reported: &AtomicU64) {
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        match &self.bar {
            Some(bar) => bar.inc(UNITS.saturating_sub(reported.load(Ordering::SeqCst))),
            None => eprintln!(
                "[{}] cell {done}/{} {what} ({seconds:.2} s)",
                self.label, self.total
            ),
        }
    }

    fn say(&self, message: &str) {
        match &self.bar {
            Some(bar) => bar.println(message),
            None => eprintln!("{message}"),
        }
    }

    fn close(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A short description of a cell for logs: the parameters that vary over the grid (`swept`)
/// and the repetition, e.g. `method=mondrian lifetime=30 rep=2`.
fn describe(cell: &Cell, swept: &[String]) -> String {
    let mut parts: Vec<String> = cell
        .params
        .canonical
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, _)| swept.contains(k))
                .map(|(k, v)| format!("{k}={}", Value::from_json(v)))
                .collect()
        })
        .unwrap_or_default();
    parts.push(format!("rep={}", cell.rep));
    parts.join(" ")
}

/// The parameters taking more than one value over the grid's points.
fn swept_parameters(grid: &[kinds::PointParams]) -> Vec<String> {
    crate::cell::parameter_columns(grid)
        .into_iter()
        .filter(|k| {
            let mut values = grid.iter().map(|p| {
                p.canonical
                    .get(k)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            });
            let first = values.next();
            values.any(|v| Some(v) != first)
        })
        .collect()
}

/// Runs one resolved config. Errors before any cell runs (data missing, ...) write nothing.
pub fn run(root: &Path, resolved: &ResolvedConfig, options: &RunOptions) -> Result<RunOutcome> {
    let config = &resolved.config;
    crate::provenance::check_sources(root).map_err(anyhow::Error::msg)?;
    let kind = crate::registry::find(&config.experiment.kind).map_err(anyhow::Error::msg)?;
    let data = crate::data::load(root, &config.data, config.seed, config.repeats)
        .with_context(|| format!("{}: cannot load the data", resolved.path.display()))?;
    let cells = crate::plan::plan(resolved, kind).map_err(anyhow::Error::msg)?;
    let swept = swept_parameters(&resolved.grid);
    // The shared data of the first cell's split are built now, so that a kind that cannot use
    // the data fails before any cell runs; those of other splits just before their cells.
    let prepare = |rep: usize| -> Result<kinds::Shared> {
        data.view(rep)
            .and_then(|view| kind.prepare(&view))
            .with_context(|| format!("cannot prepare the data of repetition {rep}"))
    };
    let mut first_shared = match cells.first() {
        Some(c) => Some((data.split_group(c.rep), prepare(c.rep)?)),
        None => None,
    };
    let budget = config.cell_budget_seconds;
    let columns = cell::all_columns(kind, &resolved.grid, budget.is_some());
    let run = match options.shard {
        Some(shard) => shard.run_name(&resolved.run_name()),
        None => resolved.run_name(),
    };
    let paths = RunPaths::new(root, &config.experiment.name, &run);
    // One process per run at a time: a second one waits, then finds the first one's cells
    // cached, instead of racing it for the table and manifest.
    let _lock = store::RunLock::acquire(&paths, |lock| {
        eprintln!(
            "[{} ({run})] another process is running it (it holds {}); waiting for it to finish",
            config.experiment.name,
            lock.strip_prefix(root).unwrap_or(lock).display()
        )
    })?;
    let threads = options.threads()?;
    let mut upstream = crate::upstream::Settings::from_env(root);
    if let Some(t) = options.upstream_timeout_seconds {
        if !(t > 0.0 && t.is_finite()) {
            bail!("--upstream-timeout {t}: need a positive number of seconds");
        }
        upstream.timeout_seconds = t;
    }
    crate::upstream::configure(upstream);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start the worker threads")?;

    let started = Instant::now();
    let mut manifest = Manifest {
        status: RunStatus::Running,
        experiment: config.experiment.name.clone(),
        kind: config.experiment.kind.clone(),
        paper: config.experiment.paper.clone(),
        figure: config.experiment.figure.clone(),
        config: resolved.path.display().to_string(),
        profile: resolved.profile.clone(),
        run: run.clone(),
        overrides: resolved.overrides.clone(),
        base_seed: config.seed,
        resolved_config: resolved.resolved_toml.clone(),
        provenance: crate::provenance::Provenance::collect(
            root,
            crate::fingerprint::run_fingerprint(
                kind.name(),
                kind.type_path(),
                config.data.sources(),
            )
            .map_err(anyhow::Error::msg)?,
        ),
        datasets: data.digests.clone(),
        data_notes: data.notes.clone(),
        threads,
        started: crate::provenance::now(),
        finished: None,
        wall_seconds: None,
        cells: CellCounts {
            total: cells.len(),
            ..Default::default()
        },
        failures: Vec::new(),
        unavailable: Vec::new(),
        table: None,
        shards: Vec::new(),
    };

    crate::files::remove_stale_temporaries(&paths.cells_dir);
    crate::files::remove_stale_temporaries(&paths.results_dir);
    crate::files::remove_stale_temporaries(&paths.runs_dir);
    let label = format!("{} ({run})", config.experiment.name);
    let cached: Vec<Option<CachedCell>> = cells
        .iter()
        .map(|c| {
            if options.force {
                return None;
            }
            match store::load_cell(&paths.cells_dir, &c.key, &c.identity) {
                // A cell stopped by its budget counts only for a run with the same budget.
                store::CellLoad::Hit(entry) => (entry.budget_seconds.is_none()
                    || entry.budget_seconds == budget)
                    .then_some(entry),
                store::CellLoad::Absent => None,
                store::CellLoad::Discarded(why) => {
                    eprintln!(
                        "[{label}] warning: cached cell {} discarded, recomputing: {why}",
                        &c.key[..16]
                    );
                    None
                }
            }
        })
        .collect();
    // The cells this process is responsible for: all, or its shard's.
    let mine: Vec<bool> = match options.shard {
        Some(shard) => {
            let costs: Vec<f64> = cells.iter().map(|c| c.params.cost).collect();
            assign_shards(&costs, shard.count)
                .into_iter()
                .map(|s| s == shard.index - 1)
                .collect()
        }
        None => vec![true; cells.len()],
    };
    manifest.cells.total = mine.iter().filter(|&&m| m).count();
    let n_cached = (0..cells.len())
        .filter(|&i| mine[i] && cached[i].is_some())
        .count();
    let todo: Vec<usize> = (0..cells.len())
        .filter(|&i| mine[i] && cached[i].is_none())
        .collect();
    if options.merge && !todo.is_empty() {
        bail!(
            "{} of {} cells are not in the cell cache: run the missing shards (or `repro run` \
             without --shard) first",
            todo.len(),
            cells.len()
        );
    }
    // Mark the run in progress before touching the table, so a crash can never leave an old
    // table that a `complete` manifest vouches for.
    manifest.write(&paths.manifest)?;
    if paths.table.exists() {
        std::fs::remove_file(&paths.table)
            .with_context(|| format!("cannot remove the old {}", paths.table.display()))?;
    }
    let progress = Progress::new(&label, todo.len());
    if n_cached > 0 {
        progress.say(&format!(
            "[{label}] {n_cached} of {} cells cached, computing {}",
            manifest.cells.total,
            todo.len()
        ));
    }
    let stop = AtomicBool::new(false);
    let failures = Mutex::new(Vec::new());
    let unavailable = Mutex::new(Vec::<(usize, Failure)>::new());
    let fail = |cell: &Cell, error: String, seconds: f64, reported: &AtomicU64| {
        progress.say(&format!(
            "[{label}] FAILED {}: {error}",
            describe(cell, &swept)
        ));
        failures.lock().expect("lock").push(Failure {
            identity: cell.identity.clone(),
            error,
        });
        if options.fail_fast {
            stop.store(true, Ordering::SeqCst);
        }
        progress.finished("failed", seconds, reported);
    };
    let run_cell = |i: usize, shared: &kinds::Shared| -> (usize, Option<CachedCell>) {
        let cell = &cells[i];
        if stop.load(Ordering::SeqCst) {
            return (i, None);
        }
        let start = Instant::now();
        let what = describe(cell, &swept);
        let reported = AtomicU64::new(0);
        let tick = progress.cell(&what, &reported);
        let ctx = CellContext::new(
            cell.seeds,
            data.stream_seeds(cell.rep),
            &tick,
            budget.map(Duration::from_secs_f64),
        );
        let result = catch_unwind(AssertUnwindSafe(|| {
            kind.run_cell(shared, &cell.params, &ctx)
        }))
        .unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(anyhow::anyhow!("panicked: {message}"))
        });
        let seconds = start.elapsed().as_secs_f64();
        match result {
            Ok(rows) => {
                let entry = CachedCell {
                    identity: cell.identity.clone(),
                    rows,
                    seconds,
                    budget_seconds: ctx.did_not_finish().then_some(budget).flatten(),
                };
                if let Err(e) = store::store_cell(&paths.cells_dir, &cell.key, &entry) {
                    progress.say(&format!("[{label}] warning: cannot cache a cell: {e:#}"));
                }
                let shown = if entry.budget_seconds.is_some() {
                    format!("{what} (did not finish within its budget)")
                } else {
                    what.clone()
                };
                progress.finished(&shown, seconds, &reported);
                (i, Some(entry))
            }
            Err(e) => {
                match skipped_upstream(&e, options.require_upstream) {
                    Some(why) => {
                        progress.say(&format!(
                            "[{label}] SKIPPED {what}: {why} (--require-upstream makes this a \
                             failure)"
                        ));
                        unavailable.lock().expect("lock").push((
                            i,
                            Failure {
                                identity: cell.identity.clone(),
                                error: why.to_string(),
                            },
                        ));
                        progress.finished("skipped", seconds, &reported);
                    }
                    _ => fail(cell, format!("{e:#}"), seconds, &reported),
                }
                (i, None)
            }
        }
    };
    // One split at a time: its shared data are built (outside any cell's clock and budget),
    // its cells run in parallel, then the data are dropped.
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for &i in &todo {
        groups
            .entry(data.split_group(cells[i].rep))
            .or_default()
            .push(i);
    }
    let mut computed: Vec<(usize, Option<CachedCell>)> = Vec::with_capacity(todo.len());
    for (group, members) in groups {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let shared = match first_shared.take() {
            Some((g, shared)) if g == group => Ok(shared),
            _ => pool.install(|| prepare(cells[members[0]].rep)),
        };
        match shared {
            Ok(shared) => computed.extend(pool.install(|| {
                members
                    .par_iter()
                    .map(|&i| run_cell(i, &shared))
                    .collect::<Vec<_>>()
            })),
            Err(e) => {
                for &i in &members {
                    fail(&cells[i], format!("{e:#}"), 0.0, &AtomicU64::new(0));
                }
            }
        }
    }
    progress.close();

    let n_computed = computed.iter().filter(|(_, e)| e.is_some()).count();
    let mut results = cached;
    for (i, entry) in computed {
        results[i] = entry;
    }
    let mut failures = failures.into_inner().expect("lock");
    failures.sort_by(|a, b| a.identity.cmp(&b.identity));
    let mut unavailable = unavailable.into_inner().expect("lock");
    unavailable.sort_by(|a, b| a.1.identity.cmp(&b.1.identity));
    let left_out: std::collections::BTreeSet<usize> = unavailable.iter().map(|(i, _)| *i).collect();
    manifest.cells.cached = n_cached;
    manifest.cells.computed = n_computed;
    manifest.cells.failed = failures.len();
    manifest.cells.upstream_unavailable = unavailable.len();
    manifest.cells.skipped =
        todo.len() - manifest.cells.computed - failures.len() - unavailable.len();
    manifest.unavailable = unavailable.into_iter().map(|(_, f)| f).collect();
    manifest.cells.did_not_finish = results
        .iter()
        .flatten()
        .filter(|e| e.budget_seconds.is_some())
        .count();
    manifest.failures = failures;

    if options.shard.is_some() {
        // A shard writes cells, not a table: complete when all of its own cells are.
        manifest.status = if manifest.cells.failed + manifest.cells.skipped == 0 {
            RunStatus::Complete
        } else {
            RunStatus::Failed
        };
    } else if failures_free(&results, &left_out) {
        if options.merge {
            manifest.shards = store::shard_manifests(&paths.runs_dir, &resolved.run_name());
        }
        let rows: Vec<Row> = cells
            .iter()
            .zip(&results)
            .filter_map(|(cell, entry)| Some((cell, entry.as_ref()?)))
            .flat_map(|(cell, entry)| {
                let run = [
                    config.experiment.name.as_str(),
                    &resolved.run_name(),
                    &resolved.profile,
                ];
                decorate(run, cell, entry, budget.is_some())
            })
            .collect();
        let mut frame = table::to_frame(&columns, &rows).with_context(|| {
            format!(
                "{}: cannot assemble the result table",
                config.experiment.name
            )
        })?;
        table::write_parquet(&paths.table, &mut frame)?;
        manifest.table = Some(TableInfo {
            file: paths
                .table
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default(),
            sha256: crate::keys::file_sha256(&paths.table)?,
            rows: rows.len(),
            columns,
        });
        manifest.status = RunStatus::Complete;
    } else {
        manifest.status = RunStatus::Failed;
    }
    manifest.finished = Some(crate::provenance::now());
    manifest.wall_seconds = Some(started.elapsed().as_secs_f64());
    manifest.write(&paths.manifest)?;
    Ok(RunOutcome { manifest, paths })
}

/// Whether every cell has its rows, but those left out because they could not run the authors'
/// code.
fn failures_free(
    results: &[Option<CachedCell>],
    left_out: &std::collections::BTreeSet<usize>,
) -> bool {
    results
        .iter()
        .enumerate()
        .all(|(i, r)| r.is_some() || left_out.contains(&i))
}

/// The rows of a cell with identity, parameter and timing columns added.
/// `run`: the experiment, the run's name and its profile.
fn decorate(run: [&str; 3], cell: &Cell, entry: &CachedCell, budgeted: bool) -> Vec<Row> {
    let [experiment, name, profile] = run;
    // A cell stopped by its budget before its first row still shows as one row.
    let bare = [Row::new()];
    let rows: &[Row] = if entry.rows.is_empty() && entry.budget_seconds.is_some() {
        &bare
    } else {
        &entry.rows
    };
    rows.iter()
        .map(|measured| {
            let mut row = measured.clone();
            row.insert("experiment".into(), experiment.into());
            row.insert("run".into(), name.into());
            row.insert("profile".into(), profile.into());
            row.insert("cell".into(), cell.key[..16].to_string().into());
            row.insert("rep".into(), cell.rep.into());
            if let Some(params) = cell.params.canonical.as_object() {
                for (k, v) in params {
                    row.insert(k.clone(), Value::from_json(v));
                }
            }
            if budgeted {
                let status = if entry.budget_seconds.is_some() {
                    "did_not_finish"
                } else {
                    "finished"
                };
                row.insert(STATUS_COLUMN.into(), status.into());
            }
            row.insert("cell_seconds".into(), entry.seconds.into());
            row
        })
        .collect()
}

/// The reason a failed cell is skipped rather than failed: its upstream could not run it
/// ([`crate::upstream::Unavailable`]), unless `--require-upstream` or the upstream's driver was
/// given a parameter it does not know (a bug of the project).
fn skipped_upstream(
    e: &anyhow::Error,
    require_upstream: bool,
) -> Option<&crate::upstream::Unavailable> {
    e.downcast_ref::<crate::upstream::Unavailable>()
        .filter(|why| !require_upstream && !why.refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unavailable_upstream_is_skipped_but_a_refused_parameter_fails() {
        use crate::upstream::Unavailable;
        let missing = anyhow::Error::new(Unavailable::new("x", "no Rscript"));
        assert!(skipped_upstream(&missing, false).is_some());
        assert!(skipped_upstream(&missing, true).is_none());
        let refused = anyhow::Error::new(Unavailable::refused("x", "unknown parameter y"));
        assert!(skipped_upstream(&refused, false).is_none());
        assert!(skipped_upstream(&anyhow::anyhow!("a bug"), false).is_none());
    }
}
