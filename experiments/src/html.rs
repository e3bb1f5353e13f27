//! `repro report --html`: the report as static pages under `results/html/` (or a folder given):
//! `index.html` with the dashboard, one page per paper with its sections (figures as SVG copied
//! beside the pages, tables), each config as resolved and its run's provenance. No script, no
//! server, no network: the folder opens from disk and can be moved as a whole.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::config::ResolvedConfig;
use crate::store::RunPaths;

/// The page's frame: a title, a plain stylesheet and the navigation.
fn page(title: &str, nav: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<nav>{nav}</nav>\n<main>\n{body}\n</main>\n</body>\n</html>\n",
        escape(title)
    )
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;line-height:1.45}\
nav{background:#f3f3f3;padding:.5em 1em;border-bottom:1px solid #ccc}nav a{margin-right:1em}\
main{max-width:80em;margin:0 auto;padding:1em}table{border-collapse:collapse;margin:.5em 0 1em}\
td,th{border:1px solid #ccc;padding:.2em .5em;vertical-align:top;font-size:.9em}\
th{background:#f7f7f7}img{max-width:100%;height:auto}pre{background:#f7f7f7;padding:.5em;\
overflow:auto;font-size:.85em}details{margin:.5em 0}";

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn markdown(text: &str) -> String {
    let mut options = pulldown_cmark::Options::empty();
    options.insert(pulldown_cmark::Options::ENABLE_TABLES);
    let parser = pulldown_cmark::Parser::new_ext(text, options);
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, parser);
    html
}

/// A page's file name for a paper folder.
fn page_name(folder: &str) -> String {
    format!("{folder}.html")
}

/// Splits the report's Markdown into its head (title, dashboard) and its papers' sections
/// (`## <paper>` to the next).
fn split(report: &str) -> (String, Vec<(String, String)>) {
    let mut head = String::new();
    let mut papers: Vec<(String, String)> = Vec::new();
    for chunk in report
        .split_inclusive('\n')
        .fold(Vec::<String>::new(), |mut v, line| {
            if line.starts_with("## ") || v.is_empty() {
                v.push(String::new());
            }
            v.last_mut().unwrap().push_str(line);
            v
        })
    {
        match chunk.strip_prefix("## ") {
            Some(rest) if !rest.starts_with("Dashboard") => {
                let title = rest.lines().next().unwrap_or_default().trim().to_string();
                papers.push((title, chunk));
            }
            _ => head.push_str(&chunk),
        }
    }
    (head, papers)
}

/// Writes the pages for `report` (the Markdown of [`crate::report::build`], run `run`) into
/// `out`; returns the files written.
pub fn write(
    root: &Path,
    configs: &[ResolvedConfig],
    report: &str,
    run: &str,
    out: &Path,
) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    // paper title -> folder; experiment -> folder.
    let mut folder_of_paper: BTreeMap<&str, String> = BTreeMap::new();
    let mut folder_of_experiment: BTreeMap<&str, String> = BTreeMap::new();
    for c in configs {
        let folder = crate::artefacts::folder_of(c);
        folder_of_paper
            .entry(c.config.experiment.paper.as_str())
            .or_insert_with(|| folder.clone());
        folder_of_experiment.insert(c.config.experiment.name.as_str(), folder);
    }
    let (head, papers) = split(report);
    let mut nav = String::from("<a href=\"index.html\">Dashboard</a>");
    for (title, _) in &papers {
        if let Some(folder) = folder_of_paper.get(title.as_str()) {
            let _ = write!(
                nav,
                "<a href=\"{}\" title=\"{}\">{}</a>",
                page_name(folder),
                escape(title),
                escape(folder)
            );
        }
    }
    let mut written = Vec::new();
    // The dashboard's links point into the papers' pages.
    let mut index = head.clone();
    for (experiment, folder) in &folder_of_experiment {
        index = index.replace(
            &format!("](#{experiment})"),
            &format!("]({}#{experiment})", page_name(folder)),
        );
    }
    let path = out.join("index.html");
    crate::files::write_atomic(
        &path,
        page("Reproduced vs published numbers", &nav, &markdown(&index)).as_bytes(),
    )?;
    written.push(path);
    for (title, text) in &papers {
        let Some(folder) = folder_of_paper.get(title.as_str()) else {
            continue;
        };
        let text = figures(root, text, out, &mut written)?;
        let mut body = markdown(&text);
        body.push_str(
            "<h2 id=\"configs\">The configs as resolved, and their runs' provenance</h2>\n",
        );
        for c in configs
            .iter()
            .filter(|c| &c.config.experiment.paper == title)
        {
            let name = &c.config.experiment.name;
            let manifest = RunPaths::new(root, name, run).manifest;
            let (resolved, provenance) = match std::fs::read_to_string(&manifest)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            {
                Some(m) => (
                    serde_json::to_string_pretty(&m["resolved_config"]).unwrap_or_default(),
                    serde_json::to_string_pretty(&serde_json::json!({
                        "run": m["run"], "profile": m["profile"], "overrides": m["overrides"],
                        "base_seed": m["base_seed"], "provenance": m["provenance"],
                        "datasets": m["datasets"], "threads": m["threads"],
                        "started": m["started"], "finished": m["finished"],
                        "wall_seconds": m["wall_seconds"], "cells": m["cells"],
                    }))
                    .unwrap_or_default(),
                ),
                None => (
                    format!("no `{run}` run stored"),
                    format!("no `{run}` run stored"),
                ),
            };
            let _ = write!(
                body,
                "<details id=\"{name}-config\"><summary><code>{}</code> ({})</summary>\n\
                 <h4>Config as resolved ({run})</h4><pre>{}</pre>\n<h4>Provenance</h4><pre>{}</pre>\n</details>\n",
                escape(name),
                escape(&c.path.display().to_string()),
                escape(&resolved),
                escape(&provenance)
            );
        }
        let path = out.join(page_name(folder));
        crate::files::write_atomic(&path, page(title, &nav, &body).as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

/// Rewrites the section's figure links (`](../figures/<e>/<run>.png)`) to SVG copies beside the
/// pages (`figures/<e>/<run>.svg`; the PNG where there is no SVG).
fn figures(root: &Path, text: &str, out: &Path, written: &mut Vec<PathBuf>) -> Result<String> {
    let mut result = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("](../figures/") {
        result.push_str(&rest[..i + 2]);
        let after = &rest[i + 2 + "../".len()..];
        let end = after.find(')').unwrap_or(after.len());
        let rel = Path::new(&after[..end]);
        let svg = rel.with_extension("svg");
        let chosen = if root.join(&svg).is_file() {
            svg
        } else {
            rel.to_path_buf()
        };
        let target = out.join(&chosen);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if root.join(&chosen).is_file() {
            std::fs::copy(root.join(&chosen), &target)
                .with_context(|| format!("cannot copy {}", chosen.display()))?;
            written.push(target);
        }
        result.push_str(&chosen.to_string_lossy());
        rest = &after[end..];
    }
    result.push_str(rest);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_splits_into_its_head_and_papers() {
        let text =
            "# R\n\nintro\n\n## Dashboard: x\n\n| a |\n\n## Paper A\n\n### s\n\n## Paper B\n\nb\n";
        let (head, papers) = split(text);
        assert!(
            head.contains("intro") && head.contains("Dashboard"),
            "{head}"
        );
        assert_eq!(papers.len(), 2);
        assert_eq!(papers[0].0, "Paper A");
        assert!(papers[1].1.contains("\nb\n"));
    }

    #[test]
    fn markdown_tables_become_html_tables_and_text_is_escaped() {
        let html = markdown("| a | b |\n|---|---|\n| 1 < 2 & 3 | 2 |\n");
        assert!(
            html.contains("<table>") && html.contains("<td>1 &lt; 2 &amp; 3</td>"),
            "{html}"
        );
        assert_eq!(
            escape("<a href=\"x\">&"),
            "&lt;a href=&quot;x&quot;&gt;&amp;"
        );
    }
}
