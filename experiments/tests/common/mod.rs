//! Helpers shared by the integration tests: a temporary project root holding the real Fig. 5
//! config, and the text a command printed.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

pub const FIG5: &str = "configs/mondrian/fig5_kernel_error.toml";
pub const EXPERIMENT: &str = "mondrian_fig5_kernel_error";

pub fn project_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A temporary project root (configs/ and a Cargo.toml) holding the real Fig. 5 config.
pub fn temp_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(project_dir().join(FIG5)).unwrap();
    let path = dir.path().join(FIG5);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[workspace]\n").unwrap();
    dir
}

/// Standard output and error of a command.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The result table a successful `repro run` in `root` wrote (its `results` line), as a path;
/// panics with the command's output if it failed.
pub fn table_written(root: &Path, o: &Output) -> PathBuf {
    assert!(o.status.success(), "{}", text(o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let table = out
        .lines()
        .find_map(|l| l.strip_prefix("results").map(|p| p.trim().to_string()))
        .unwrap_or_else(|| panic!("no `results` line in:\n{out}"));
    root.join(table)
}
