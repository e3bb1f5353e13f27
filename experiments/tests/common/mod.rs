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
