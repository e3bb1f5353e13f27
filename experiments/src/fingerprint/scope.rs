//! Which files are numeric sources: found by walking the workspace, never listed by hand. The
//! build script (`experiments/build.rs`, which includes this file) embeds what [`walk`] finds;
//! the harness walks the checkout again to check that a binary was built from its sources.
//! Standard library only (the build script has no dependencies).
//!
//! The numeric sources are, for every workspace member other than the harness
//! ([`HARNESS_PACKAGE`]): its `Cargo.toml`, `build.rs`, the other `*.toml` files at its top
//! (the datasets registry) and every `.rs` file under its `src/`; and, of the harness, every
//! `.rs` file under [`HARNESS_FOLDERS`] (kinds, their helpers, data generators) and the files
//! of [`HARNESS`].

use std::path::Path;

/// The harness's numeric core, part of every fingerprint (paths from the project root): cells,
/// their planning and seeding, typed parameter tables, the cell context, data loading and
/// splits, the kind adapter. This is
/// the one list to edit when these modules are split, moved or renamed; a file under
/// [`HARNESS_FOLDERS`] may be listed too.
pub const HARNESS: &[&str] = &[
    "experiments/src/cell.rs",
    "experiments/src/context.rs",
    "experiments/src/data/load.rs",
    "experiments/src/data/mod.rs",
    "experiments/src/data/spec.rs",
    "experiments/src/data/view.rs",
    "experiments/src/kinds/kind.rs",
    "experiments/src/plan.rs",
    "experiments/src/seeds.rs",
    "experiments/src/toml_table.rs",
];

/// Folders of the harness whose every `.rs` file is a numeric source. A kind or generator
/// counts the files of these folders that it imports (transitively), not all of them.
pub const HARNESS_FOLDERS: &[&str] = &["experiments/src/kinds", "experiments/src/data"];

/// The harness's own package folder: not a workspace crate of any fingerprint (its numeric
/// files are [`HARNESS`] and those under [`HARNESS_FOLDERS`]).
pub const HARNESS_PACKAGE: &str = "experiments";

/// A workspace member: package name and folder from the project root (no trailing `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub folder: String,
}

/// The workspace crates ([`Member`]s other than the harness) and the numeric sources (sorted
/// paths from the project root, `/`-separated), with the folders and files whose changes must
/// rerun the build script (relative to the project root).
#[derive(Debug, Clone, Default)]
pub struct Walk {
    pub crates: Vec<Member>,
    pub files: Vec<String>,
    pub watched: Vec<String>,
}

/// Walks the workspace rooted at `root` (the folder of the workspace `Cargo.toml`).
pub fn walk(root: &Path) -> Result<Walk, String> {
    let mut walk = Walk {
        watched: vec!["Cargo.toml".into()],
        ..Walk::default()
    };
    for folder in member_folders(root)? {
        if folder == HARNESS_PACKAGE {
            continue;
        }
        let member = Member {
            name: package_name(root, &folder)?,
            folder,
        };
        let dir = root.join(&member.folder);
        // Its src/ folder (new files); not the whole member, whose tests and benches do not
        // count. (A new top-level `build.rs` or `*.toml` is found when the script reruns.)
        walk.watched.push(format!("{}/src", member.folder));
        for entry in read_dir(&dir)? {
            let name = entry.to_string_lossy().to_string();
            let path = dir.join(&name);
            let wanted = name == "build.rs" || (name.ends_with(".toml") && !name.starts_with('.'));
            if wanted && path.is_file() {
                walk.files.push(format!("{}/{name}", member.folder));
            }
        }
        rust_files(root, &format!("{}/src", member.folder), &mut walk.files)?;
        walk.crates.push(member);
    }
    for folder in HARNESS_FOLDERS {
        walk.watched.push(folder.to_string());
        rust_files(root, folder, &mut walk.files)?;
    }
    for file in HARNESS {
        if !root.join(file).is_file() {
            return Err(format!("{file} (listed in HARNESS) does not exist"));
        }
        walk.watched.push(file.to_string());
        walk.files.push(file.to_string());
    }
    walk.files.sort();
    walk.files.dedup();
    walk.crates.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(walk)
}

/// The member folders of the workspace `root/Cargo.toml` (a member ending in `/*` stands for
/// every folder below it that holds a `Cargo.toml`).
pub fn member_folders(root: &Path) -> Result<Vec<String>, String> {
    let manifest = read(&root.join("Cargo.toml"))?;
    let section =
        toml_section(&manifest, "workspace").ok_or("Cargo.toml has no [workspace] section")?;
    let array = toml_array(section, "members").ok_or("Cargo.toml: no workspace members")?;
    let mut out = Vec::new();
    for member in array {
        match member.strip_suffix("/*") {
            Some(parent) => {
                let mut found: Vec<String> = read_dir(&root.join(parent))?
                    .into_iter()
                    .map(|n| format!("{parent}/{}", n.to_string_lossy()))
                    .filter(|f| root.join(f).join("Cargo.toml").is_file())
                    .collect();
                found.sort();
                out.extend(found);
            }
            None => out.push(member.trim_end_matches('/').to_string()),
        }
    }
    Ok(out)
}

/// The package name in `root/folder/Cargo.toml`.
pub fn package_name(root: &Path, folder: &str) -> Result<String, String> {
    let cargo = read(&root.join(folder).join("Cargo.toml"))?;
    toml_section(&cargo, "package")
        .and_then(|s| toml_string(s, "name"))
        .ok_or_else(|| format!("{folder}/Cargo.toml: no [package] name"))
}

/// Every `.rs` file under `root/folder` (paths from `root`), hidden entries skipped.
fn rust_files(root: &Path, folder: &str, out: &mut Vec<String>) -> Result<(), String> {
    let dir = root.join(folder);
    if !dir.is_dir() {
        return Ok(());
    }
    for name in read_dir(&dir)? {
        let name = name.to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        let rel = format!("{folder}/{name}");
        if dir.join(&name).is_dir() {
            rust_files(root, &rel, out)?;
        } else if name.ends_with(".rs") {
            out.push(rel);
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn read_dir(dir: &Path) -> Result<Vec<std::ffi::OsString>, String> {
    let mut names = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    names.sort();
    Ok(names)
}

/// The text of the `[name]` section of a TOML text (up to the next section header).
fn toml_section<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let header = format!("[{name}]");
    let mut offset = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some(s) = start {
            if trimmed.starts_with('[') && !trimmed.starts_with("[[") && trimmed.ends_with(']') {
                return Some(&text[s..offset]);
            }
        } else if trimmed == header {
            start = Some(offset + line.len());
        }
        offset += line.len();
    }
    start.map(|s| &text[s..])
}

/// The line `key = value` of a section, without comments.
fn toml_value<'a>(section: &'a str, key: &str) -> Option<&'a str> {
    let mut rest = section;
    while !rest.is_empty() {
        let (line, tail) = rest.split_once('\n').unwrap_or((rest, ""));
        if let Some((k, v)) = line.split_once('=') {
            if k.trim() == key {
                let start = section.len() - rest.len() + line.len() - v.len();
                return Some(&section[start..]);
            }
        }
        rest = tail;
    }
    None
}

/// A string value `key = "..."`.
fn toml_string(section: &str, key: &str) -> Option<String> {
    let value = toml_value(section, key)?.trim_start();
    let value = value.strip_prefix('"')?;
    Some(value[..value.find('"')?].to_string())
}

/// An array of strings `key = ["a", "b"]`, over several lines, `#` comments allowed.
fn toml_array(section: &str, key: &str) -> Option<Vec<String>> {
    let value = toml_value(section, key)?.trim_start().strip_prefix('[')?;
    let mut out = Vec::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            ']' => return Some(out),
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '"' => {
                let s: String = chars.by_ref().take_while(|&c| c != '"').collect();
                out.push(s);
            }
            _ => {}
        }
    }
    None
}
