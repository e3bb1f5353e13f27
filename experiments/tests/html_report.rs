//! `repro report --html` in a real headless browser (Debian's Chromium through playwright-core,
//! `tests/browser/`): every page loads without a console error or a failed request, every image
//! and every link resolves, and the dashboard's counts in the browser equal REPORT.md's.
//!
//! The report is built in a temporary copy of the project's configs, figures and committed
//! REPORT.md, with one real full run (Mondrian Fig. 5, a fraction of a second) so a verdict is
//! computed from checks, not only kept text. Needs node, Chromium and `npm ci` in tests/browser
//! (`.ci/run` installs them); without them it prints SKIPPED with the reason, unless
//! REPRO_REQUIRE_BROWSER=1 (CI) makes that a failure.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> PathBuf {
    std::env::var_os("REPRO_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

fn browser_kit() -> PathBuf {
    common::project_dir().join("experiments/tests/browser")
}

/// Why the browser check cannot run here, if it cannot.
fn missing() -> Option<String> {
    if Command::new("node").arg("--version").output().is_err() {
        return Some("no `node` on PATH".into());
    }
    if !chromium().is_file() {
        return Some(format!(
            "no Chromium at {} (apt-get install chromium, or set REPRO_CHROMIUM)",
            chromium().display()
        ));
    }
    if !browser_kit().join("node_modules/playwright-core").is_dir() {
        return Some(format!(
            "no playwright-core: run `npm ci` in {}",
            browser_kit().display()
        ));
    }
    None
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The dashboard's counts table in REPORT.md: the first table after the dashboard's heading,
/// as cell texts (the separator line left out).
fn counts_in_markdown(report: &str) -> Vec<Vec<String>> {
    let start = report
        .find("## Dashboard")
        .expect("REPORT.md has a dashboard");
    report[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| !l.starts_with("|---"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn the_html_report_loads_cleanly_in_a_browser_and_agrees_with_report_md() {
    if let Some(why) = missing() {
        if std::env::var("REPRO_REQUIRE_BROWSER").as_deref() == Ok("1") {
            panic!("REPRO_REQUIRE_BROWSER=1 but the browser check cannot run: {why}");
        }
        eprintln!("SKIPPED: the browser check cannot run here: {why}");
        return;
    }
    let project = common::project_dir();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_tree(&project.join("configs"), &root.join("configs"));
    copy_tree(&project.join("figures"), &root.join("figures"));
    std::fs::create_dir_all(root.join("results")).unwrap();
    std::fs::copy(
        project.join("results/REPORT.md"),
        root.join("results/REPORT.md"),
    )
    .unwrap();
    std::fs::write(root.join("Cargo.toml"), "[workspace]\n").unwrap();
    let repro = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_repro"));
        c.arg("--root").arg(root);
        c
    };
    let run = repro()
        .args(["run", common::FIG5, "-j", "1"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", common::text(&run));
    // Most configs have no full run in this root: the report keeps their committed sections
    // (and says so, exiting non-zero); the pages must still be whole.
    let report = repro().args(["report", "--html"]).output().unwrap();
    let said = common::text(&report);
    let html = root.join("results/html");
    assert!(html.join("index.html").is_file(), "{said}");
    let markdown = std::fs::read_to_string(root.join("results/REPORT.md")).unwrap();

    let out = Command::new("node")
        .arg(browser_kit().join("check_pages.mjs"))
        .arg(&html)
        .arg(chromium())
        .current_dir(browser_kit())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::text(&out));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = result["problems"].as_array().unwrap();
    assert!(problems.is_empty(), "{problems:#?}");

    // The dashboard and one page per paper folder with an artefact list, each with figures.
    let pages = result["pages"].as_object().unwrap();
    let papers: Vec<String> = std::fs::read_dir(root.join("configs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("artefacts.toml").is_file())
        .map(|e| format!("{}.html", e.file_name().to_string_lossy()))
        .collect();
    assert!(!papers.is_empty());
    for p in &papers {
        let page = pages
            .get(p)
            .unwrap_or_else(|| panic!("no page {p}: {pages:?}"));
        assert!(page["images"].as_u64().unwrap() > 0, "{p}: no figure");
    }
    assert!(pages.contains_key("index.html"));

    // The counts the browser shows are REPORT.md's.
    let shown: Vec<Vec<String>> = serde_json::from_value(result["counts"].clone()).unwrap();
    let written = counts_in_markdown(&markdown);
    assert_eq!(shown, written);
    assert_eq!(written.last().unwrap()[0], "all");
    // The one full run made here gives its artefact a verdict from its checks.
    let mondrian = std::fs::read_to_string(html.join("mondrian.html")).unwrap();
    assert!(
        mondrian.contains("mondrian_fig5_kernel_error-config"),
        "config details"
    );
    let fig5 = markdown
        .lines()
        .find(|l| l.contains("](#mondrian_fig5_kernel_error)"))
        .expect("a dashboard line for Fig. 5");
    assert!(!fig5.contains("not run"), "{fig5}");
}
