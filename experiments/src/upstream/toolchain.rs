//! What an upstream needs installed, and preparing it once per kit: extract, verify, patch,
//! make its Python environment, build; under a lock, into a folder that appears only complete.
//!
//! `<cache>/<name>-<commit>-<kit digest>/` holds `src/` (the patched tree), `kit/` (the kit's
//! drivers and requirements), `venv/` (Python upstreams), `build.log` and `ready.json`; a
//! folder without `ready.json` is a failed or interrupted preparation and is redone.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{fetch, Prepared, Requirement, Settings, Unavailable, Upstream};

/// Whether a program is on the PATH (or an existing path).
pub fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// The requirements that are not met, each with why.
pub fn missing(requires: &[Requirement]) -> Vec<String> {
    let mut out = Vec::new();
    for r in requires {
        if let Some(p) = &r.program {
            if !on_path(p) {
                out.push(format!("program {p} (Debian package {})", r.debian));
            }
        }
        if let Some(f) = &r.file {
            if !Path::new(f).exists() {
                out.push(format!("{f} (Debian package {})", r.debian));
            }
        }
        if let Some(pkg) = &r.r_package {
            let ok = on_path("Rscript")
                && Command::new("Rscript")
                    .args([
                        "-e",
                        &format!("quit(status = !requireNamespace('{pkg}', quietly = TRUE))"),
                    ])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
            if !ok {
                out.push(format!("R package {pkg} (Debian package {})", r.debian));
            }
        }
    }
    out
}

/// The message for missing requirements: what is missing and the command that installs it.
fn missing_message(requires: &[Requirement], missing: &[String]) -> String {
    let mut packages: Vec<&str> = requires
        .iter()
        .filter(|r| {
            missing
                .iter()
                .any(|m| m.contains(&format!("package {})", r.debian)))
        })
        .map(|r| r.debian.as_str())
        .collect();
    packages.dedup();
    format!(
        "missing {} (install: apt-get install -y {})",
        missing.join(", "),
        packages.join(" ")
    )
}

/// An exclusive lock on a file, released when dropped.
struct Lock(std::fs::File);

impl Lock {
    fn take(path: &Path) -> Result<Lock, String> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| format!("cannot open the lock {}: {e}", path.display()))?;
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor we own; blocks until the lock is ours.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if r != 0 {
            return Err(format!(
                "cannot lock {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(Lock(file))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: unlocks the descriptor we own.
        unsafe {
            libc::flock(self.0.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

/// Runs one preparation step, appending its command and output to the build log.
fn step(log: &mut std::fs::File, cwd: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    let _ = writeln!(log, "$ {program} {}", args.join(" "));
    let output = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let _ = log.write_all(&output.stdout);
    let _ = log.write_all(&output.stderr);
    if output.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = err.lines().rev().take(4).collect();
        Err(format!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            output.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ))
    }
}

/// Where the prepared pieces are inside an upstream's folder.
fn prepared(upstream: &Upstream, folder: &Path) -> Prepared {
    Prepared {
        name: upstream.name.clone(),
        root: folder.join("src"),
        python: upstream.python.then(|| folder.join("venv/bin/python")),
        scratch: folder.join("cells"),
    }
}

/// Prepares `upstream` in the cache of `settings` (see the module's doc).
pub fn prepare(upstream: &Upstream, settings: &Settings) -> Result<Prepared, Unavailable> {
    let fail = |reason: String| Unavailable::new(&upstream.name, reason);
    let folder = upstream.folder(&settings.cache);
    std::fs::create_dir_all(&settings.cache)
        .map_err(|e| fail(format!("cannot create {}: {e}", settings.cache.display())))?;
    let _lock = Lock::take(&folder.with_extension("lock")).map_err(fail)?;
    let ready = folder.join("ready.json");
    if ready.is_file() {
        let lacking = missing(&upstream.requires);
        if !lacking.is_empty() {
            return Err(fail(missing_message(&upstream.requires, &lacking)));
        }
        return Ok(prepared(upstream, &folder));
    }
    if folder.exists() {
        std::fs::remove_dir_all(&folder)
            .map_err(|e| fail(format!("cannot clear {}: {e}", folder.display())))?;
    }
    // The archive first (a tampered one is reported whatever is installed), then the tools.
    let (bytes, source) = fetch::archive(upstream, settings)?;
    let lacking = missing(&upstream.requires);
    if !lacking.is_empty() {
        return Err(fail(missing_message(&upstream.requires, &lacking)));
    }
    let src = folder.join("src");
    fetch::extract(upstream, &bytes, &src).map_err(|e| fail(format!("{source}: {e}")))?;
    let files = fetch::files_sha256(&src).map_err(&fail)?;
    if files != upstream.files_sha256 {
        return Err(fail(format!(
            "the files of {source} have digest {files}, not the registered {} (a different \
             or tampered tree)",
            upstream.files_sha256
        )));
    }
    let log_path = folder.join("build.log");
    let mut log = std::fs::File::create(&log_path)
        .map_err(|e| fail(format!("cannot create {}: {e}", log_path.display())))?;
    let kit = folder.join("kit");
    std::fs::create_dir_all(&kit).map_err(|e| fail(e.to_string()))?;
    for (name, content) in upstream.kit() {
        std::fs::write(kit.join(name), content).map_err(|e| fail(e.to_string()))?;
    }
    let with_log = |e: String| fail(format!("{e} (log: {})", log_path.display()));
    for (name, _) in upstream.patches() {
        let patch = kit.join(name).display().to_string();
        step(
            &mut log,
            &src,
            "patch",
            &["-p1", "--forward", "--batch", "-i", &patch],
        )
        .map_err(with_log)?;
    }
    if upstream.python {
        let venv = folder.join("venv").display().to_string();
        step(&mut log, &folder, "python3", &["-m", "venv", &venv]).map_err(with_log)?;
        if upstream.kit_file("requirements.txt").is_some() {
            let pip = folder.join("venv/bin/pip").display().to_string();
            let requirements = kit.join("requirements.txt").display().to_string();
            step(
                &mut log,
                &folder,
                &pip,
                &[
                    "install",
                    "--disable-pip-version-check",
                    "-q",
                    "-r",
                    &requirements,
                ],
            )
            .map_err(with_log)?;
        }
    }
    for command in &upstream.build {
        let Some((program, args)) = command.split_first() else {
            continue;
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        step(&mut log, &src, program, &args).map_err(with_log)?;
    }
    let stamp = serde_json::json!({
        "upstream": upstream.name,
        "commit": upstream.commit,
        "source": source,
        "files_sha256": files,
        "kit": upstream.kit_digest(),
    });
    crate::files::write_atomic(&ready, stamp.to_string().as_bytes())
        .map_err(|e| fail(format!("{e:#}")))?;
    Ok(prepared(upstream, &folder))
}

/// A fresh scratch folder for one cell's files, under the prepared upstream's `cells/`, named by
/// the cell (a rerun of the same cell replaces it).
pub fn cell_folder(prepared: &Prepared, cell: &str) -> Result<PathBuf, Unavailable> {
    let dir = prepared.scratch.join(cell);
    let fail = |e: std::io::Error| {
        Unavailable::new(
            &prepared.name,
            format!("cannot create {}: {e}", dir.display()),
        )
    };
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(fail)?;
    }
    std::fs::create_dir_all(&dir).map_err(fail)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_requirements_name_the_package_to_install() {
        let requires = vec![
            Requirement {
                program: Some("sh".into()),
                file: None,
                r_package: None,
                debian: "dash".into(),
            },
            Requirement {
                program: Some("no-such-compiler-xyz".into()),
                file: None,
                r_package: None,
                debian: "xyz-compiler".into(),
            },
            Requirement {
                program: None,
                file: Some("/no/such/header.h".into()),
                r_package: None,
                debian: "libxyz-dev".into(),
            },
        ];
        let lacking = missing(&requires);
        assert_eq!(lacking.len(), 2, "{lacking:?}");
        let message = missing_message(&requires, &lacking);
        assert!(
            message.contains("apt-get install -y xyz-compiler libxyz-dev"),
            "{message}"
        );
    }
}
