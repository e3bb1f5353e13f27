//! The module structure, read from the sources: the harness's modules keep the layer order that
//! `experiments/src/lib.rs` writes down (a module imports only modules of lower layers), a kind
//! of one paper never imports another paper's kinds, and the modules of every algorithm crate
//! and of the datasets crate import each other without cycles.
//!
//! An import is a `crate::a::...` path (also inside `use crate::{a, b}`) outside comments and
//! outside the `#[cfg(test)]` module that ends a file; a module is a top-level file of `src/` or
//! a folder with its `mod.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The text of a source file that counts: before its test module, without comments.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The paths after `crate::` in a file's code, each as its components (`crate::a::b::C` gives
/// `["a", "b", "C"]`; `use crate::{a::x, b}` gives `["a", "x"]` and `["b"]`).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        if code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue; // e.g. `mycrate::`
        }
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let parts: Vec<String> = item
                    .trim()
                    .split("::")
                    .map(|p| ident(p.trim()).to_string())
                    .filter(|p| !p.is_empty())
                    .collect();
                if !parts.is_empty() {
                    out.push(parts);
                }
            }
        } else {
            let mut parts = Vec::new();
            let mut s = rest;
            loop {
                let id = ident(s);
                if id.is_empty() {
                    break;
                }
                parts.push(id.to_string());
                match s[id.len()..].strip_prefix("::") {
                    Some(next) => s = next,
                    None => break,
                }
            }
            if !parts.is_empty() {
                out.push(parts);
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every source file under `src` by its module path (`kinds/mondrian/sweep.rs` is
/// `["kinds", "mondrian", "sweep"]`, `kinds/mod.rs` is `["kinds"]`), with its code.
fn modules(src: &Path) -> BTreeMap<Vec<String>, String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().to_string())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                return None;
            }
            Some((parts, code(&std::fs::read_to_string(&f).unwrap())))
        })
        .collect()
}

/// The imports between top-level modules: (importer, imported), self-imports left out.
fn top_level_edges(modules: &BTreeMap<Vec<String>, String>) -> BTreeSet<(String, String)> {
    let names: BTreeSet<&String> = modules.keys().map(|m| &m[0]).collect();
    let mut edges = BTreeSet::new();
    for (module, code) in modules {
        for path in crate_paths(code) {
            if names.contains(&path[0]) && path[0] != module[0] {
                edges.insert((module[0].clone(), path[0].clone()));
            }
        }
    }
    edges
}

/// A cycle of the graph, if it has one.
fn find_cycle(edges: &BTreeSet<(String, String)>) -> Option<Vec<String>> {
    let mut adjacent: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        adjacent.entry(a).or_default().push(b);
    }
    // 0 unvisited, 1 on the current path, 2 done.
    fn visit<'a>(
        node: &'a str,
        adjacent: &BTreeMap<&'a str, Vec<&'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(node, 1);
        path.push(node);
        for &next in adjacent.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|n| *n == next).unwrap();
                    let mut cycle: Vec<String> =
                        path[start..].iter().map(|s| s.to_string()).collect();
                    cycle.push(next.to_string());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(next, adjacent, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(node, 2);
        None
    }
    let mut state = BTreeMap::new();
    let nodes: Vec<&str> = adjacent.keys().copied().collect();
    for node in nodes {
        if state.get(node).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(node, &adjacent, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// The layers written in `lib.rs`'s doc, bottom first: in the text block that follows the line
/// `//! Layers`, each line `N  module module ... | description` (lines without a number continue
/// a description).
fn documented_layers(lib: &str) -> Vec<Vec<String>> {
    let doc: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let start = doc
        .iter()
        .position(|l| l.starts_with("Layers"))
        .expect("lib.rs documents its layers under a line starting with `Layers`");
    let open = start
        + doc[start..]
            .iter()
            .position(|l| l.starts_with("```"))
            .expect("a text block of layers");
    doc[open + 1..]
        .iter()
        .take_while(|l| !l.starts_with("```"))
        // `3  store check ... | what they hold`: a layer number, the modules, a description.
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            l.split('|')
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .skip(1)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The imports that break the layer order: a module importing one of its own or a higher layer.
fn layer_violations(layers: &[Vec<String>], edges: &BTreeSet<(String, String)>) -> Vec<String> {
    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |m| (m.as_str(), i)))
        .collect();
    edges
        .iter()
        .filter_map(|(a, b)| {
            let (la, lb) = (layer_of[a.as_str()], layer_of[b.as_str()]);
            (lb >= la).then(|| format!("{a} (layer {la}) imports {b} (layer {lb})"))
        })
        .collect()
}

#[test]
fn the_harness_keeps_its_documented_layers() {
    let src = project().join("experiments/src");
    let layers = documented_layers(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let modules = modules(&src);
    let names: BTreeSet<String> = modules.keys().map(|m| m[0].clone()).collect();
    let listed: BTreeSet<String> = layers.iter().flatten().cloned().collect();
    assert_eq!(
        listed, names,
        "lib.rs's layers must list every module of experiments/src exactly once"
    );
    assert_eq!(
        listed.len(),
        layers.iter().map(Vec::len).sum::<usize>(),
        "a module is listed twice"
    );
    let edges = top_level_edges(&modules);
    assert!(
        edges.contains(&("runner".into(), "plan".into())),
        "the import reader misses runner -> plan"
    );
    let violations = layer_violations(&layers, &edges);
    assert!(
        violations.is_empty(),
        "imports against the layer order of lib.rs:\n{}",
        violations.join("\n")
    );
}

#[test]
fn a_paper_s_kinds_import_no_other_paper() {
    let src = project().join("experiments/src");
    let modules = modules(&src);
    let papers: BTreeSet<String> = modules
        .keys()
        .filter(|m| m.len() == 3 && m[0] == "kinds")
        .map(|m| m[1].clone())
        .filter(|p| p != "common")
        .collect();
    assert!(papers.contains("mondrian") && papers.contains("a_la_carte"));
    for (module, code) in modules
        .iter()
        .filter(|(m, _)| m.len() >= 2 && m[0] == "kinds")
    {
        let own = &module[1];
        for path in crate_paths(code) {
            if path.len() >= 2 && path[0] == "kinds" && papers.contains(&path[1]) {
                assert!(
                    &path[1] == own,
                    "kinds/{} imports kinds::{}: what two papers share goes to kinds/common",
                    module[1..].join("/"),
                    path[1..].join("::")
                );
            }
        }
    }
}

#[test]
fn crate_modules_import_each_other_without_cycles() {
    let root = project();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("algorithms"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.push(root.join("datasets/src"));
    crates.push(root.join("experiments/src"));
    crates.sort();
    assert!(crates.len() >= 9, "{crates:?}");
    let mut cycles = Vec::new();
    for src in &crates {
        if let Some(cycle) = find_cycle(&top_level_edges(&modules(src))) {
            cycles.push(format!(
                "{}: {}",
                src.strip_prefix(&root).unwrap().display(),
                cycle.join(" -> ")
            ));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_reader_sees_imports_and_the_checks_can_fail() {
    let code = code(
        "use crate::{a::x, b};\n// crate::c in a comment\nfn f() { crate::d::e(); mycrate::z(); }\n#[cfg(test)]\nmod tests { use crate::t; }",
    );
    let firsts: Vec<String> = crate_paths(&code)
        .into_iter()
        .map(|p| p[0].clone())
        .collect();
    assert_eq!(firsts, ["a", "b", "d"]);
    let edges: BTreeSet<(String, String)> = [("a", "b"), ("b", "c"), ("c", "a")]
        .iter()
        .map(|(x, y)| (x.to_string(), y.to_string()))
        .collect();
    assert_eq!(find_cycle(&edges).unwrap().len(), 4);
    let layers = documented_layers(
        "//! Layers, bottom first:\n//!\n//! ```text\n//! 0  c    | the bottom\n//!         | more words\n//! 1  b\n//! 2  a    | the top\n//! ```\n",
    );
    assert_eq!(layers, [["c"], ["b"], ["a"]]);
    // c -> a imports upwards; a -> b and b -> c are fine.
    assert_eq!(
        layer_violations(&layers, &edges),
        ["c (layer 0) imports a (layer 2)"]
    );
}
