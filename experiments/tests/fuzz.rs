//! Fuzzing of config parsing and validation and of `--set` (proptest; `PROPTEST_CASES` sets
//! the number of inputs, 256 by default): every input is a config or an error naming the file,
//! never a panic.

use std::path::{Path, PathBuf};

use experiments::config;
use proptest::prelude::*;

fn project_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The real configs' texts.
fn configs() -> Vec<String> {
    config::discover(&project_dir())
        .unwrap()
        .iter()
        .map(|p| std::fs::read_to_string(project_dir().join(p)).unwrap())
        .collect()
}

/// Values that have broken parsers before: out of range, wrong type, hostile paths.
const ODD: &[&str] = &[
    "-1",
    "0",
    "1e400",
    "nan",
    "inf",
    "-inf",
    "1e300",
    "1e-320",
    "\"x\"",
    "\"\"",
    "[]",
    "[1, 2]",
    "[[1]]",
    "true",
    "{}",
    "{ a = 1 }",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "\"../../x\"",
    "\"/etc\"",
    "0.5",
    "3",
    "\"quick\"",
];

/// Loads `text` as configs/fuzz.toml under a fresh root: must return, never panic.
fn load(text: &str, profile: &str, overrides: &[String]) -> Result<(), String> {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("configs/fuzz.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    match config::load(
        root.path(),
        Path::new("configs/fuzz.toml"),
        profile,
        overrides,
    ) {
        Ok(_) => Ok(()),
        Err(e) => {
            assert_eq!(e.file, "configs/fuzz.toml");
            Err(e.message)
        }
    }
}

proptest! {
    #[test]
    fn mutated_configs_load_or_fail_cleanly(
        which in 0usize..6,
        line in any::<prop::sample::Index>(),
        value in prop::sample::select(ODD),
    ) {
        let texts = configs();
        let text = &texts[which % texts.len()];
        let lines: Vec<&str> = text.lines().collect();
        let k = line.index(lines.len());
        let mutated: Vec<String> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| match (i == k, l.split_once(" = ")) {
                (true, Some((key, _))) => format!("{key} = {value}"),
                _ => l.to_string(),
            })
            .collect();
        let _ = load(&mutated.join("\n"), "full", &[]);
        let _ = load(&mutated.join("\n"), "quick", &[]);
    }

    #[test]
    fn arbitrary_text_loads_or_fails_cleanly(text in "[a-z_\\[\\]={}\"0-9., \n-]{0,200}") {
        let _ = load(&text, "full", &[]);
    }

    #[test]
    fn arbitrary_overrides_load_or_fail_cleanly(
        which in 0usize..6,
        key in prop::sample::select(vec![
            "seed", "repeats", "cell_budget_seconds", "data.n", "data.dim", "data.name",
            "data.split", "params.lifetime", "params.method", "params.max_nonzeros",
            "params.n_mondrians", "params.checkpoints.count", "experiment.kind", "experiment.name",
            "profile.quick.repeats", "plot.x", "check", "a.b.c", "params",
        ]),
        value in prop_oneof![prop::sample::select(ODD).prop_map(String::from), "[ -~]{0,20}"],
    ) {
        let texts = configs();
        let text = &texts[which % texts.len()];
        let _ = load(text, "full", &[format!("{key}={value}")]);
        let mut table: toml::Table = toml::from_str(text).unwrap();
        let _ = config::apply_override(&mut table, &format!("{key}={value}"));
        let _ = config::apply_override(&mut table, &value);
    }
}
