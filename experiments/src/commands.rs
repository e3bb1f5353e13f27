//! The `repro` subcommands.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::check::{format_results, CheckResult};
use crate::config::{self, ResolvedConfig, FULL_PROFILE};
use crate::runner::{self, RunOptions, RunOutcome};
use crate::store::{self, RunPaths};

/// What every command needs: the project root.
pub struct Common {
    pub root: PathBuf,
}

impl Common {
    /// `--root`, else `$REPRO_ROOT`, else the nearest folder above the current one holding
    /// `configs/` and `Cargo.toml`; outside a project, an error (results are never written into
    /// an arbitrary folder).
    pub fn new(root: Option<PathBuf>) -> Result<Self> {
        let root = match root.or_else(|| std::env::var_os("REPRO_ROOT").map(PathBuf::from)) {
            Some(r) => r,
            None => {
                let cwd = std::env::current_dir().context("cannot read the current folder")?;
                cwd.ancestors()
                    .find(|d| d.join("configs").is_dir() && d.join("Cargo.toml").is_file())
                    .map(Path::to_path_buf)
                    .with_context(|| {
                        format!(
                            "{} is not inside a project (no folder above it holds configs/ and \
                             Cargo.toml): run repro in a checkout, or pass --root DIR or set \
                             REPRO_ROOT",
                            cwd.display()
                        )
                    })?
            }
        };
        if !root.is_dir() {
            bail!("project root {} is not a folder", root.display());
        }
        Ok(Self { root })
    }

    /// A config path as given on the command line: relative to the current folder when it
    /// exists there, else to the project root; returned relative to the root when inside it.
    fn locate_config(&self, path: &Path) -> PathBuf {
        let from_cwd = std::env::current_dir()
            .ok()
            .map(|c| c.join(path))
            .filter(|p| !path.is_absolute() && p.is_file());
        let full = match from_cwd {
            Some(p) => p,
            None if path.is_absolute() => path.to_path_buf(),
            None => self.root.join(path),
        };
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let (full, root) = (canonical(&full), canonical(&self.root));
        full.strip_prefix(&root)
            .map(Path::to_path_buf)
            .unwrap_or(full)
    }

    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// Loads and validates every config before any work starts.
fn load_all(
    common: &Common,
    paths: &[PathBuf],
    profile: &str,
    overrides: &[String],
    fall_back_to_full: bool,
) -> Result<Vec<ResolvedConfig>> {
    let mut resolved = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        let located = common.locate_config(path);
        let rel = located.as_path();
        let attempt = config::load(&common.root, rel, profile, overrides);
        let attempt = match attempt {
            Err(e)
                if fall_back_to_full
                    && e.message.starts_with(&format!("no [profile.{profile}]")) =>
            {
                config::load(&common.root, rel, FULL_PROFILE, overrides)
            }
            other => other,
        };
        match attempt {
            Ok(r) => resolved.push(r),
            Err(e) => errors.push(e.to_string()),
        }
    }
    let mut names: Vec<(&str, &Path)> = resolved
        .iter()
        .map(|r| (r.config.experiment.name.as_str(), r.path.as_path()))
        .collect();
    names.sort();
    for pair in names.windows(2) {
        if pair[0].0 == pair[1].0 {
            errors.push(format!(
                "{} and {} both name the experiment {:?}; names must be unique",
                pair[0].1.display(),
                pair[1].1.display(),
                pair[0].0
            ));
        }
    }
    if !errors.is_empty() {
        bail!(
            "invalid config; nothing was run:\n  {}",
            errors.join("\n  ")
        );
    }
    Ok(resolved)
}

/// The runs named `--name` (each config's run takes the name in its own experiment's folder).
fn named(resolved: Vec<ResolvedConfig>, name: Option<&str>) -> Result<Vec<ResolvedConfig>> {
    let Some(name) = name else {
        return Ok(resolved);
    };
    resolved
        .into_iter()
        .map(|r| r.named(name).map_err(anyhow::Error::from))
        .collect()
}

fn discover_or(common: &Common, configs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if !configs.is_empty() {
        // A shell glob over a paper folder also names its artefact list: not a config.
        return Ok(configs
            .iter()
            .filter(|p| p.is_dir() || config::is_config(p) || p.extension().is_none())
            .cloned()
            .collect());
    }
    let found = config::discover(&common.root)
        .with_context(|| format!("cannot list {}", common.root.join("configs").display()))?;
    if found.is_empty() {
        bail!("no configs under {}", common.root.join("configs").display());
    }
    Ok(found)
}

/// Runs one config and prints where everything went; returns whether the run and its checks
/// passed.
fn run_one(
    common: &Common,
    resolved: &ResolvedConfig,
    options: &RunOptions,
    plot: bool,
) -> Result<bool> {
    let outcome = runner::run(&common.root, resolved, options)?;
    let m = &outcome.manifest;
    let name = &resolved.config.experiment.name;
    eprintln!(
        "[{name} ({})] {:?}: {} cells ({} cached, {} computed, {} failed, {} skipped) in {:.2} s",
        m.run,
        m.status,
        m.cells.total,
        m.cells.cached,
        m.cells.computed,
        m.cells.failed,
        m.cells.skipped,
        m.wall_seconds.unwrap_or(0.0)
    );
    for f in &m.unavailable {
        eprintln!("  skipped cell {}: {}", f.identity, f.error);
    }
    for f in &m.failures {
        eprintln!("  failed cell {}: {}", f.identity, f.error);
    }
    println!("manifest  {}", common.shown(&outcome.paths.manifest));
    if !outcome.ok() || options.shard.is_some() {
        // A shard leaves its cells in the cache; `repro merge` writes the table.
        return Ok(outcome.ok());
    }
    println!("results   {}", common.shown(&outcome.paths.table));
    let (_, rows) = store::load_complete(&outcome.paths)?;
    if plot {
        for path in crate::plot::render_all(
            &resolved.config.plot,
            &resolved.config.experiment.figure,
            named_in_titles(&m.run),
            &rows,
            &crate::cell::parameter_columns(&resolved.grid),
            &outcome.paths.figure_stem,
        )? {
            println!("figure    {}", common.shown(&path));
        }
    }
    let results = evaluate_checks(resolved, &outcome, &rows);
    if !results.is_empty() {
        print!("{}", format_results(name, &results));
    }
    let hypotheses = crate::check::evaluate_all(
        &resolved.config.hypothesis,
        &rows,
        &outcome.manifest.profile,
        &outcome.manifest.overrides,
    );
    if !hypotheses.is_empty() {
        println!("hypotheses (reported, never a failure):");
        print!("{}", crate::check::format_hypotheses(name, &hypotheses));
    }
    Ok(results.iter().all(|r| r.ok()))
}

fn evaluate_checks(
    resolved: &ResolvedConfig,
    outcome: &RunOutcome,
    rows: &[crate::table::Row],
) -> Vec<CheckResult> {
    crate::check::evaluate_all(
        &resolved.config.check,
        rows,
        &outcome.manifest.profile,
        &outcome.manifest.overrides,
    )
}

/// `repro run`.
pub fn run(
    common: &Common,
    configs: &[PathBuf],
    profile: &str,
    overrides: &[String],
    name: Option<&str>,
    options: &RunOptions,
    plot: bool,
) -> Result<bool> {
    let resolved = named(load_all(common, configs, profile, overrides, false)?, name)?;
    for r in &resolved {
        crate::data::check_available(&common.root, &r.config.data)
            .map_err(|e| anyhow::anyhow!("{}: {e}", r.path.display()))?;
    }
    let mut ok = true;
    for r in &resolved {
        ok &= run_one(common, r, options, plot)?;
        if !ok && options.fail_fast {
            break;
        }
    }
    Ok(ok)
}

/// `repro reproduce-all`.
pub fn reproduce_all(
    common: &Common,
    profile: &str,
    options: &RunOptions,
    plot: bool,
) -> Result<bool> {
    let paths = discover_or(common, &[])?;
    // A config without the named profile runs its full protocol (and says so).
    let resolved = load_all(common, &paths, profile, &[], true)?;
    for r in resolved.iter().filter(|r| r.profile != profile) {
        eprintln!(
            "[{}] has no [profile.{profile}]: running its {} protocol",
            r.config.experiment.name, r.profile
        );
    }
    let mut ok = true;
    let mut skipped = Vec::new();
    let mut failed = Vec::new();
    for r in &resolved {
        if let Err(missing) = crate::data::check_available(&common.root, &r.config.data) {
            eprintln!(
                "[{}] SKIPPED: data not available: {missing}",
                r.config.experiment.name
            );
            skipped.push(r.config.experiment.name.clone());
            continue;
        }
        match run_one(common, r, options, plot) {
            Ok(true) => {}
            Ok(false) => failed.push(r.config.experiment.name.clone()),
            Err(e) => {
                eprintln!("[{}] ERROR: {e:#}", r.config.experiment.name);
                failed.push(r.config.experiment.name.clone());
            }
        }
        if !failed.is_empty() && options.fail_fast {
            break;
        }
    }
    println!(
        "reproduce-all: {} experiments, {} ok, {} failed{}, {} skipped{}",
        resolved.len(),
        resolved.len() - failed.len() - skipped.len(),
        failed.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!(" ({})", failed.join(", "))
        },
        skipped.len(),
        if skipped.is_empty() {
            String::new()
        } else {
            format!(" ({})", skipped.join(", "))
        },
    );
    println!("results in results/<experiment>/, figures in figures/<experiment>/");
    ok &= failed.is_empty() && skipped.is_empty();
    Ok(ok)
}

/// `repro plot`: re-render every complete stored run of the given configs.
pub fn plot(common: &Common, configs: &[PathBuf]) -> Result<bool> {
    let paths = discover_or(common, configs)?;
    let resolved = load_all(common, &paths, FULL_PROFILE, &[], false)?;
    let mut ok = true;
    let mut rendered = 0;
    for r in &resolved {
        let name = &r.config.experiment.name;
        if r.config.plot.is_empty() {
            continue;
        }
        for run in store::list_runs(&common.root, name) {
            let paths = RunPaths::new(&common.root, name, &run);
            match store::load_complete(&paths) {
                Ok((_, rows)) => {
                    for path in crate::plot::render_all(
                        &r.config.plot,
                        &r.config.experiment.figure,
                        named_in_titles(&run),
                        &rows,
                        &crate::cell::parameter_columns(&r.grid),
                        &paths.figure_stem,
                    )? {
                        println!("figure    {}", common.shown(&path));
                        rendered += 1;
                    }
                }
                Err(e) => {
                    eprintln!("[{name} ({run})] not plotted: {e:#}");
                    ok = false;
                }
            }
        }
    }
    if rendered == 0 {
        eprintln!(
            "no stored results to plot: run `repro run CONFIG` or `make reproduce-all` first"
        );
    }
    Ok(ok)
}

/// `repro check`: run the quick profile (cached cells reused) and evaluate the checks.
pub fn check(
    common: &Common,
    configs: &[PathBuf],
    profile: &str,
    options: &RunOptions,
    require_data: bool,
) -> Result<bool> {
    let paths = discover_or(common, configs)?;
    let resolved = load_all(common, &paths, profile, &[], true)?;
    let mut all = Vec::new();
    let mut skipped = Vec::new();
    // Configs whose cells of the authors' code were skipped, with the first reason.
    let mut unavailable = Vec::new();
    let mut ok = true;
    for r in &resolved {
        let name = r.config.experiment.name.clone();
        if let Err(problem) = crate::data::check_available(&common.root, &r.config.data) {
            if problem.missing && !require_data {
                eprintln!("[{name}] SKIPPED (data not present; --require-data makes this a failure): {problem}");
                skipped.push(name);
            } else {
                eprintln!("[{name}] FAILED: data not usable: {problem}");
                ok = false;
            }
            continue;
        }
        let outcome = runner::run(&common.root, r, options)?;
        if !outcome.ok() {
            for f in &outcome.manifest.failures {
                eprintln!("[{name}] failed cell {}: {}", f.identity, f.error);
            }
            ok = false;
            continue;
        }
        if let Some(first) = outcome.manifest.unavailable.first() {
            unavailable.push(format!(
                "{name} ({} cells; the first: {})",
                outcome.manifest.unavailable.len(),
                first.error
            ));
        }
        let (_, rows) = store::load_complete(&outcome.paths)?;
        let results = evaluate_checks(r, &outcome, &rows);
        if results.is_empty() {
            eprintln!(
                "[{name}] warning: no [[check]] applies to profile {}",
                r.profile
            );
        }
        ok &= results.iter().all(|c| c.ok());
        all.push((name, results));
    }
    println!("checks ({profile} profile):");
    for (name, results) in &all {
        print!("{}", format_results(name, results));
    }
    let failed: usize = all
        .iter()
        .map(|(_, r)| r.iter().filter(|c| !c.ok()).count())
        .sum();
    let total: usize = all.iter().map(|(_, r)| r.len()).sum();
    let flat: Vec<&CheckResult> = all.iter().flat_map(|(_, r)| r).collect();
    print!("{}", crate::check::format_counts(&flat));
    println!(
        "{} of {total} checks did not fail ({} of them published numbers reproduced)",
        total - failed,
        flat.iter().filter(|c| c.verdict() == "reproduced").count()
    );
    if !skipped.is_empty() {
        println!(
            "NOT CHECKED (data not present): {}. Get the data (repro datasets list) to check them.",
            skipped.join(", ")
        );
    }
    if !unavailable.is_empty() {
        println!("NOT RUN (the authors' code; --require-upstream makes this a failure):");
        for line in &unavailable {
            println!("  {line}");
        }
    }
    Ok(ok && failed == 0)
}

/// `repro report`: prints the report of the stored runs; for every config (none named), also
/// writes results/REPORT.md (or REPORT-<run>.md). Fails when a run is missing or corrupt or a
/// check fails.
pub fn report(
    common: &Common,
    configs: &[PathBuf],
    run: &str,
    html: Option<Option<&Path>>,
) -> Result<bool> {
    let paths = discover_or(common, configs)?;
    let resolved = load_all(common, &paths, FULL_PROFILE, &[], false)?;
    let file = if run == FULL_PROFILE {
        "REPORT.md".to_string()
    } else {
        format!("REPORT-{run}.md")
    };
    let path = common.root.join("results").join(file);
    let previous = std::fs::read_to_string(&path).ok();
    let report = crate::report::build(
        &common.root,
        &resolved,
        run,
        previous.as_deref(),
        configs.is_empty(),
    );
    println!("{}", report.text);
    if report.kept > 0 {
        eprintln!(
            "{} section(s) kept from {} (no complete `{run}` run of theirs here)",
            report.kept,
            common.shown(&path)
        );
    }
    if configs.is_empty() {
        crate::files::write_atomic(&path, report.text.as_bytes())?;
        eprintln!("report written to {}", common.shown(&path));
    } else {
        eprintln!(
            "report of the named configs printed only (results/REPORT.md covers all configs)"
        );
    }
    if report.missing > 0 {
        eprintln!(
            "{} config(s) without a complete `{run}` run",
            report.missing
        );
    }
    if report.failed_checks > 0 {
        eprintln!("{} check(s) failed", report.failed_checks);
    }
    for problem in &report.artefact_problems {
        eprintln!("artefact list: {problem}");
    }
    if let Some(dir) = html {
        let dir = match dir {
            Some(dir) => dir.to_path_buf(),
            None => common.root.join("results").join(if run == FULL_PROFILE {
                "html".to_string()
            } else {
                format!("html-{run}")
            }),
        };
        let written = crate::html::write(&common.root, &resolved, &report.text, run, &dir)?;
        eprintln!(
            "html report: {} ({} files; open index.html from disk)",
            common.shown(&dir.join("index.html")),
            written.len()
        );
    }
    Ok(report.ok())
}

/// What a stored run is: complete (its table verified), corrupt, running (its lock is held),
/// interrupted, failed or unreadable.
fn run_status(paths: &RunPaths) -> String {
    let Ok(manifest) = store::Manifest::read(&paths.manifest) else {
        return "unreadable manifest".into();
    };
    match manifest.status {
        store::RunStatus::Complete => {
            let intact = manifest.table.as_ref().is_some_and(|t| {
                crate::keys::file_sha256(&paths.table).is_ok_and(|digest| digest == t.sha256)
            });
            if intact {
                "complete".into()
            } else {
                "CORRUPT (the table does not match its manifest: rerun)".into()
            }
        }
        store::RunStatus::Running if store::RunLock::is_held(paths) => "running".into(),
        store::RunStatus::Running => "interrupted (rerun to resume)".into(),
        store::RunStatus::Failed => "failed".into(),
    }
}

/// `repro list`.
pub fn list(common: &Common, kinds: bool) -> Result<bool> {
    if kinds {
        for k in crate::registry::all() {
            println!("{}: {}", k.name(), k.summary());
            match crate::fingerprint::kind_sources(k.type_path()) {
                Ok(sources) => println!(
                    "    sources (cache key, besides the harness): crates {}; files {}",
                    sources.crates.into_iter().collect::<Vec<_>>().join(", "),
                    sources.files.into_iter().collect::<Vec<_>>().join(", ")
                ),
                Err(e) => println!("    sources: {e}"),
            }
            for c in k.columns() {
                println!("    {:<18} {}", c.name, c.doc);
            }
        }
        return Ok(true);
    }
    let paths = discover_or(common, &[])?;
    let mut ok = true;
    for path in paths {
        match config::load(&common.root, &path, FULL_PROFILE, &[]) {
            Ok(r) => {
                let c = &r.config;
                let data = match crate::data::check_available(&common.root, &c.data) {
                    Ok(()) => "data ok".to_string(),
                    Err(p) if p.missing => "data MISSING (repro datasets list)".to_string(),
                    Err(_) => "data CORRUPT (repro datasets verify)".to_string(),
                };
                let runs: Vec<String> = store::list_runs(&common.root, &c.experiment.name)
                    .into_iter()
                    .map(|run| {
                        let paths = RunPaths::new(&common.root, &c.experiment.name, &run);
                        // An ablation's run is named by a digest: show what it set.
                        let set = store::Manifest::read(&paths.manifest)
                            .ok()
                            .filter(|m| !m.overrides.is_empty())
                            .map(|m| format!(" (--set {})", m.overrides.join(" --set ")))
                            .unwrap_or_default();
                        format!("{run}{set}: {}", run_status(&paths))
                    })
                    .collect();
                let cells = crate::registry::find(&c.experiment.kind)
                    .and_then(|kind| crate::plan::plan(&r, kind))
                    .map_or_else(|e| format!("? ({e})"), |cells| cells.len().to_string());
                println!(
                    "{}\n    {} | {} | kind {} | {} cells | {} | runs: {}",
                    path.display(),
                    c.experiment.name,
                    c.experiment.figure,
                    c.experiment.kind,
                    cells,
                    data,
                    if runs.is_empty() {
                        "none".into()
                    } else {
                        runs.join(", ")
                    }
                );
            }
            Err(e) => {
                println!("{e}");
                ok = false;
            }
        }
    }
    Ok(ok)
}

/// `repro datasets list`.
pub fn datasets_list(common: &Common) -> Result<bool> {
    let dirs = datasets::DataDirs::from_root(&common.root);
    let registry = datasets::Registry::embedded()?;
    for ds in registry.datasets() {
        let found = ds.files.iter().filter(|f| dirs.find(f).is_some()).count();
        println!(
            "{:<22} {}/{} files present{}  {}",
            ds.name,
            found,
            ds.files.len(),
            if ds.fetchable() { ", fetchable" } else { "" },
            ds.description
        );
    }
    println!(
        "searched: {}",
        dirs.search_dirs()
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(true)
}

/// `repro datasets verify`: present files must match; missing ones are listed, not failures.
pub fn datasets_verify(common: &Common) -> Result<bool> {
    let dirs = datasets::DataDirs::from_root(&common.root);
    let reports = datasets::verify_all(&dirs)?;
    let mut bad = 0;
    let mut missing = 0;
    for r in &reports {
        println!("{r}");
        match r.status {
            datasets::FileStatus::Verified { .. } => {}
            datasets::FileStatus::Missing { .. } => missing += 1,
            _ => bad += 1,
        }
    }
    println!(
        "{} files: {} verified, {missing} missing, {bad} corrupt or unreadable",
        reports.len(),
        reports.len() - missing - bad
    );
    Ok(bad == 0)
}

/// `repro datasets fetch NAME`.
pub fn datasets_fetch(common: &Common, name: &str) -> Result<bool> {
    let dirs = datasets::DataDirs::from_root(&common.root);
    let dataset = datasets::Registry::embedded()?.get(name)?;
    for f in datasets::fetch(dataset, &dirs)? {
        let what = match &f.action {
            datasets::FetchAction::AlreadyPresent => "already present".to_string(),
            datasets::FetchAction::Downloaded { url, .. } => format!("downloaded from {url}"),
        };
        println!("{} [{}] {} ({what})", name, f.role, f.path.display());
    }
    Ok(true)
}

/// Whether a column is a timing or a throughput measured from one (its values differ run to
/// run), the run's name, or the cell key (which covers the code fingerprint): `cell`, `run`,
/// and every column named as a timing: ending in `_seconds`, `_per_second` (StreaMRAK's
/// `points_per_second`, A la Carte's `features_per_second`) or `_gflops` (A la Carte's
/// `gemm_gflops`, `solve_gflops`). A kind names its measured rates so (a unit test holds every
/// kind to it).
pub fn is_timing_or_key(column: &str) -> bool {
    column == "cell"
        || column == "run"
        || ["_seconds", "_per_second", "_gflops"]
            .iter()
            .any(|s| column.ends_with(s))
}

/// `repro compare A B`: whether two stored tables hold the same numbers, timing columns and
/// cell keys aside (`is_timing_or_key`). Values must be equal bit for bit.
pub fn compare(a: &Path, b: &Path) -> Result<bool> {
    let read = |p: &Path| -> Result<(Vec<String>, Vec<crate::table::Row>)> {
        let frame = crate::table::read_parquet(p)?;
        let columns = frame
            .get_column_names()
            .iter()
            .map(|c| c.to_string())
            .filter(|c| !is_timing_or_key(c))
            .collect();
        let mut rows = crate::table::from_frame(&frame)?;
        for row in &mut rows {
            row.retain(|k, _| !is_timing_or_key(k));
        }
        Ok((columns, rows))
    };
    let (columns_a, rows_a) = read(a)?;
    let (columns_b, rows_b) = read(b)?;
    let mut same = true;
    if columns_a != columns_b {
        println!(
            "columns differ:\n  {}\n  {}",
            columns_a.join(", "),
            columns_b.join(", ")
        );
        same = false;
    }
    if rows_a.len() != rows_b.len() {
        println!("{} rows vs {} rows", rows_a.len(), rows_b.len());
        same = false;
    }
    // Bit for bit: NaN equals NaN, -0.0 differs from 0.0.
    let same_value = |a: &crate::table::Value, b: &crate::table::Value| match (a, b) {
        (crate::table::Value::Float(x), crate::table::Value::Float(y)) => {
            x.to_bits() == y.to_bits()
        }
        _ => a == b,
    };
    let same_row = |a: &crate::table::Row, b: &crate::table::Row| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|((ka, va), (kb, vb))| ka == kb && same_value(va, vb))
    };
    let differing: Vec<usize> = (0..rows_a.len().min(rows_b.len()))
        .filter(|&i| !same_row(&rows_a[i], &rows_b[i]))
        .collect();
    // Per column: how many rows differ, and the first example.
    let mut by_column: std::collections::BTreeMap<&str, (usize, String)> = Default::default();
    for &i in &differing {
        let (a, b) = (&rows_a[i], &rows_b[i]);
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for key in keys {
            let (va, vb) = (a.get(key), b.get(key));
            let same = match (va, vb) {
                (Some(x), Some(y)) => same_value(x, y),
                (None, None) => true,
                _ => false,
            };
            if !same {
                let entry = by_column
                    .entry(key.as_str())
                    .or_insert_with(|| (0, format!("row {i}: {va:?} vs {vb:?}")));
                entry.0 += 1;
            }
        }
    }
    for (column, (n, example)) in &by_column {
        println!("column `{column}` differs in {n} rows (first: {example})");
    }
    if !differing.is_empty() {
        println!("{} rows differ", differing.len());
        same = false;
    }
    println!(
        "{}: {} and {} ({} rows, {} columns compared; cell keys and *_seconds columns ignored)",
        if same { "SAME" } else { "DIFFERENT" },
        a.display(),
        b.display(),
        rows_a.len(),
        columns_a.len()
    );
    Ok(same)
}

/// A Slurm array job for one config (`repro slurm`).
pub struct SlurmJob {
    pub config: PathBuf,
    pub shards: usize,
    pub profile: String,
    pub overrides: Vec<String>,
    /// The run's name (`--name`), if any.
    pub name: Option<String>,
    pub partition: Option<String>,
    pub time: Option<String>,
    pub cpus_per_task: usize,
}

/// Single-quotes a word for bash.
fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// `repro slurm`: writes `results/_runs/<experiment>/slurm/<run>.array.sbatch` (one array task per
/// shard, each `repro run --shard $SLURM_ARRAY_TASK_ID/N --jobs $SLURM_CPUS_PER_TASK`) and
/// `<run>.merge.sbatch` (`repro merge`), and with `submit` submits both, the merge with
/// `--dependency=afterok` on the array. A checkout on a filesystem all nodes share is the only
/// coordination: the shards meet in its cell cache.
pub fn slurm(common: &Common, job: &SlurmJob, submit: bool) -> Result<bool> {
    let resolved = named(
        load_all(
            common,
            std::slice::from_ref(&job.config),
            &job.profile,
            &job.overrides,
            false,
        )?,
        job.name.as_deref(),
    )?
    .remove(0);
    if !(1..=100_000).contains(&job.shards) {
        bail!("--shards {}: need 1 to 100000", job.shards);
    }
    if !(1..=runner::MAX_JOBS).contains(&job.cpus_per_task) {
        bail!(
            "--cpus-per-task {}: need 1 to {}",
            job.cpus_per_task,
            runner::MAX_JOBS
        );
    }
    let exe = std::env::current_exe().context("cannot find the repro binary")?;
    let root = common
        .root
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", common.root.display()))?;
    let experiment = &resolved.config.experiment.name;
    let run = resolved.run_name();
    let dir = store::runs_dir(&root, experiment).join("slurm");
    let mut args = vec![
        shell_quote(&exe.to_string_lossy()),
        "--root".into(),
        shell_quote(&root.to_string_lossy()),
    ];
    let mut config_args = vec![
        shell_quote(&resolved.path.to_string_lossy()),
        "--profile".into(),
        shell_quote(&resolved.profile),
    ];
    for o in &job.overrides {
        config_args.extend(["--set".to_string(), shell_quote(o)]);
    }
    if let Some(name) = &job.name {
        config_args.extend(["--name".to_string(), shell_quote(name)]);
    }
    config_args.push("--no-plot".into());
    let header = |name: &str, output: &str| {
        let mut h = format!(
            "#!/bin/bash\n# Written by `repro slurm` for {experiment} ({run}).\n#SBATCH --job-name={name}\n#SBATCH --output={}\n",
            dir.join(output).display()
        );
        if let Some(p) = &job.partition {
            h.push_str(&format!("#SBATCH --partition={p}\n"));
        }
        h
    };
    let mut array = header(&format!("repro-{experiment}"), &format!("{run}-%A_%a.out"));
    array.push_str(&format!(
        "#SBATCH --array=1-{}\n#SBATCH --cpus-per-task={}\n",
        job.shards, job.cpus_per_task
    ));
    if let Some(t) = &job.time {
        array.push_str(&format!("#SBATCH --time={t}\n"));
    }
    args.push("run".into());
    array.push_str(&format!(
        "set -euo pipefail\nexec {} {} --shard \"$SLURM_ARRAY_TASK_ID/{}\" --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\"\n",
        args.join(" "),
        config_args.join(" "),
        job.shards
    ));
    args.pop();
    args.push("merge".into());
    let mut merge = header(
        &format!("repro-{experiment}-merge"),
        &format!("{run}-merge-%j.out"),
    );
    merge.push_str("#SBATCH --cpus-per-task=1\n");
    merge.push_str(&format!(
        "set -euo pipefail\nexec {} {}\n",
        args.join(" "),
        config_args.join(" ")
    ));
    let array_path = dir.join(format!("{run}.array.sbatch"));
    let merge_path = dir.join(format!("{run}.merge.sbatch"));
    crate::files::write_atomic(&array_path, array.as_bytes())?;
    crate::files::write_atomic(&merge_path, merge.as_bytes())?;
    println!("array job  {}", common.shown(&array_path));
    println!("merge job  {}", common.shown(&merge_path));
    if !submit {
        println!(
            "submit with: id=$(sbatch --parsable {}) && sbatch --dependency=afterok:${{id%%;*}} {}",
            array_path.display(),
            merge_path.display()
        );
        return Ok(true);
    }
    let sbatch = |extra: &[String], script: &Path| -> Result<String> {
        let out = std::process::Command::new("sbatch")
            .arg("--parsable")
            .args(extra)
            .arg(script)
            .output()
            .context("cannot run sbatch: submit from a Slurm login node, or submit the scripts above yourself")?;
        if !out.status.success() {
            bail!(
                "sbatch {} failed: {}",
                script.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        // `--parsable` prints `id` or `id;cluster`.
        Ok(id.split(';').next().unwrap_or_default().to_string())
    };
    let array_id = sbatch(&[], &array_path)?;
    let merge_id = sbatch(&[format!("--dependency=afterok:{array_id}")], &merge_path)?;
    println!(
        "submitted array job {array_id} ({} shards) and merge job {merge_id}",
        job.shards
    );
    Ok(true)
}

/// The run a figure's title names: every run but the full profile's (the reference figures), so
/// a quick figure is never taken for one.
fn named_in_titles(run: &str) -> Option<&str> {
    (run != FULL_PROFILE).then_some(run)
}

#[cfg(test)]
mod tests {
    use super::is_timing_or_key;

    /// A column a kind documents as a timing, or as a rate measured from one, is named as one,
    /// so `repro compare` and the thread-count tests set it aside (a rate named otherwise would
    /// make two runs of the same numbers differ).
    #[test]
    fn every_measured_timing_or_rate_is_named_as_one() {
        let mut timings = 0;
        for kind in crate::registry::all() {
            for column in kind.columns() {
                let doc = column.doc.to_lowercase();
                let measured = ["cpu seconds", "wall seconds", "per second", "throughput"]
                    .iter()
                    .any(|w| doc.contains(w));
                if measured {
                    timings += 1;
                    assert!(
                        is_timing_or_key(column.name),
                        "{}: column {} ({}) is a timing but not named as one",
                        kind.name(),
                        column.name,
                        column.doc
                    );
                }
            }
        }
        assert!(timings >= 5, "{timings}");
        for name in [
            "cell",
            "run",
            "fit_seconds",
            "points_per_second",
            "gemm_gflops",
        ] {
            assert!(is_timing_or_key(name), "{name}");
        }
        for name in ["test_error", "profile", "seconds_budget", "m"] {
            assert!(!is_timing_or_key(name), "{name}");
        }
    }
}
