//! Running one upstream command: its own process group, stdout and stderr to files, a timeout
//! that kills the whole group, and the CPU seconds of the process and its children (from
//! `wait4`, so commands running side by side in other cells are not counted).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a finished command printed and cost.
#[derive(Debug, Clone)]
pub struct Finished {
    pub stdout: String,
    pub stderr: String,
    /// User + system CPU seconds of the command and the children it waited for.
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    /// Peak resident memory of the largest process, in MB.
    pub max_rss_mb: f64,
}

/// Why a command did not finish well: the message names the command, with the end of its
/// stderr (and the paths of its full output); `exit_status` is the status it exited with, if it
/// exited (not on a signal, a timeout or a failure to start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    pub message: String,
    pub exit_status: Option<i32>,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for Failed {
    fn from(message: String) -> Self {
        Self {
            message,
            exit_status: None,
        }
    }
}

impl From<Failed> for String {
    fn from(f: Failed) -> Self {
        f.message
    }
}

/// Runs `program args` in `cwd` with `env` added, for at most `timeout_seconds`. A nonzero exit,
/// a signal or the timeout is an error naming the command, with the end of its stderr (and the
/// paths of its full output, kept in `cwd`).
pub fn run(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[(String, String)],
    timeout_seconds: f64,
) -> Result<Finished, Failed> {
    let out_path = cwd.join("upstream.stdout");
    let err_path = cwd.join("upstream.stderr");
    let open = |p: &PathBuf| {
        std::fs::File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))
    };
    let shown = format!(
        "{} {}",
        program.display(),
        args.iter()
            .map(|a| a.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let started = Instant::now();
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(open(&out_path)?)
        .stderr(open(&err_path)?)
        .process_group(0);
    for (k, v) in env {
        command.env(k, v);
    }
    let child = command
        .spawn()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let pid = child.id() as libc::pid_t;
    let deadline = started + Duration::from_secs_f64(timeout_seconds.max(0.0));
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data, fully written by wait4 when it returns the pid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut timed_out = false;
    loop {
        // SAFETY: waits for our own child only; status and usage are ours.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("waiting for {shown}: {e}").into());
        }
        if !timed_out && Instant::now() >= deadline {
            timed_out = true;
            // SAFETY: signals the process group this command leads (created above).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Whatever the group left behind (a child that outlived its parent) goes too.
    // SAFETY: as above; the group may already be gone.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
    drop(child);
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    let finished = Finished {
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
        cpu_seconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        wall_seconds: started.elapsed().as_secs_f64(),
        max_rss_mb: usage.ru_maxrss as f64 / 1024.0,
    };
    let tail = || {
        let lines: Vec<&str> = finished.stderr.lines().rev().take(6).collect();
        let mut lines: Vec<&str> = lines.into_iter().rev().collect();
        if lines.is_empty() {
            lines = finished.stdout.lines().rev().take(3).collect();
            lines.reverse();
        }
        format!(
            "{}\n(full output: {} and {})",
            lines.join("\n"),
            out_path.display(),
            err_path.display()
        )
    };
    if timed_out {
        return Err(format!(
            "{shown} ran past its timeout of {timeout_seconds} s and was killed; {}",
            tail()
        )
        .into());
    }
    if libc::WIFSIGNALED(status) {
        return Err(format!(
            "{shown} was killed by signal {}: {}",
            libc::WTERMSIG(status),
            tail()
        )
        .into());
    }
    let code = libc::WEXITSTATUS(status);
    if code != 0 {
        return Err(Failed {
            message: format!("{shown} exited with status {code}: {}", tail()),
            exit_status: Some(code),
        });
    }
    Ok(finished)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: f64) -> Result<Finished, Failed> {
        let dir = tempfile::tempdir().unwrap();
        run(
            Path::new("/bin/sh"),
            &["-c".into(), script.into()],
            dir.path(),
            &[("GREETING".into(), "hello".into())],
            timeout,
        )
    }

    #[test]
    fn output_environment_and_cpu_are_captured() {
        let done = sh(
            "echo $GREETING; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done",
            30.0,
        )
        .unwrap();
        assert_eq!(done.stdout.trim(), "hello");
        assert!(done.cpu_seconds > 0.0 && done.cpu_seconds <= done.wall_seconds + 0.05);
    }

    #[test]
    fn a_crash_and_a_hang_are_errors_that_say_which() {
        let crash = sh("echo boom >&2; exit 3", 30.0).unwrap_err();
        assert!(
            crash.message.contains("status 3") && crash.message.contains("boom"),
            "{crash}"
        );
        assert_eq!(crash.exit_status, Some(3));
        let started = Instant::now();
        // A child that would outlive its parent is killed with the group.
        let hang = sh("sleep 30 & sleep 30", 0.3).unwrap_err();
        assert!(hang.message.contains("timeout of 0.3 s"), "{hang}");
        assert_eq!(hang.exit_status, None);
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
