//! Every committed config, in every profile, draws and tabulates its own grid without pooling a
//! parameter: no figure series, summary row or reference line averages over two values of a
//! parameter it does not name (a `[[case]]` value set per method is fine). An ablation's swept
//! `--set` is split apart by the views (tests in `cli.rs`); this guards the configs themselves,
//! whose figures would otherwise gain split series silently. (Views grouping by a measured
//! column are not judged here: the grid alone does not say what that column determines.)

use std::path::Path;

use experiments::table::{Row, Value};

/// One row per grid point, its parameter columns only (the result table's rows carry the same
/// parameter values, repetitions aside).
fn grid_rows(resolved: &experiments::config::ResolvedConfig) -> Vec<Row> {
    resolved
        .grid
        .iter()
        .filter_map(|p| p.canonical.as_object())
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), Value::from_json(v)))
                .collect()
        })
        .collect()
}

#[test]
fn no_committed_config_pools_a_parameter_in_its_figures_summaries_or_references() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut pooled = Vec::new();
    let configs = experiments::config::discover(root).unwrap();
    assert!(configs.len() > 50);
    for path in configs {
        let raw: toml::Table =
            toml::from_str(&std::fs::read_to_string(root.join(&path)).unwrap()).unwrap();
        let mut profiles = vec!["full".to_string()];
        if let Some(p) = raw.get("profile").and_then(|p| p.as_table()) {
            profiles.extend(p.keys().cloned());
        }
        for profile in profiles {
            let r = experiments::config::load(root, &path, &profile, &[]).unwrap();
            let rows = grid_rows(&r);
            let parameters = experiments::cell::parameter_columns(&r.grid);
            let mut views: Vec<(String, toml::Table, Vec<String>)> = Vec::new();
            for p in &r.config.plot {
                let mut consumed = vec![p.series.clone(), p.x.clone()];
                consumed.extend(p.pair_by.clone());
                views.push((format!("plot {:?}", p.name), p.filter.clone(), consumed));
            }
            for s in &r.config.summary {
                let mut consumed = vec![s.by.clone()];
                consumed.extend(s.pair_by.clone());
                views.push((format!("summary {:?}", s.label), s.select.clone(), consumed));
            }
            for f in &r.config.reference {
                views.push((format!("reference {:?}", f.label), f.select.clone(), vec![]));
            }
            for (what, select, mut consumed) in views {
                consumed.extend(select.keys().cloned());
                // A measured column in the view (e.g. `curve`, `n_inputs`) may determine the
                // parameters in the real rows; the grid alone cannot tell.
                if consumed.iter().any(|c| !parameters.contains(c)) {
                    continue;
                }
                let chosen: Vec<&Row> = experiments::stats::selected(&rows, &select).collect();
                let consumed: Vec<&str> = consumed.iter().map(String::as_str).collect();
                let axes = experiments::stats::pooled_parameters(&chosen, &parameters, &consumed);
                // The speed tables of the scaling configs are by m: one table per method, by
                // design (they show the split as such).
                let by_design = path.to_string_lossy().contains("alacarte/scaling_")
                    && what.starts_with("summary")
                    && axes == ["method"];
                if !axes.is_empty() && !by_design {
                    pooled.push(format!("{} [{profile}] {what}: {axes:?}", path.display()));
                }
            }
        }
    }
    assert!(
        pooled.is_empty(),
        "views pooling parameters:\n{}",
        pooled.join("\n")
    );
}
