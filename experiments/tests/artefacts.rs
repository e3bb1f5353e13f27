//! The papers' artefact lists (`configs/<paper>/artefacts.toml`) against the configs: every
//! paper has one, ids are unique, declared statuses give their reason, named experiments exist,
//! every check names a listed artefact, every artefact without a declared status has a published
//! check, every config speaks for some artefact, and every `[[check]]` declares its basis (the
//! configs load).

mod common;

use experiments::artefacts;
use experiments::config;

#[test]
fn every_paper_lists_its_artefacts_and_every_config_speaks_for_one() {
    let root = common::project_dir();
    let paths = config::discover(&root).unwrap();
    assert!(!paths.iter().any(|p| p.ends_with("artefacts.toml")));
    let configs: Vec<_> = paths
        .iter()
        .map(|p| config::load(&root, p, config::FULL_PROFILE, &[]).unwrap())
        .collect();
    let papers = artefacts::load(&root).unwrap();
    let folders: Vec<&str> = papers.iter().map(|p| p.folder.as_str()).collect();
    for c in &configs {
        let folder = artefacts::folder_of(c);
        assert!(
            folders.contains(&folder.as_str()),
            "configs/{folder}/ has no artefacts.toml"
        );
        let paper = papers.iter().find(|p| p.folder == folder).unwrap();
        assert!(
            paper
                .list
                .artefacts
                .iter()
                .any(|a| a.configs.contains(&c.config.experiment.name)),
            "{}: no artefact of configs/{folder}/artefacts.toml names `{}`",
            c.path.display(),
            c.config.experiment.name
        );
    }
    let problems = artefacts::validate(&papers, &configs);
    assert!(problems.is_empty(), "{problems:#?}");
}
