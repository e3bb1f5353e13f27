//! A config's data: the `[data]` table ([`DataSpec`]), loading it (a registered dataset
//! verified by sha256 and typed by the registry, or synthetic data from the run's data seed),
//! and the split of each repetition.
//!
//! Splits (`[data] split`) are drawn per repetition from the run's data seeds, never from a
//! cell's: every method and parameter point of a run sees the same split in repetition `r`
//! (paired comparisons), and the split does not depend on the thread count. A fixed split (the
//! published files, or the rows of generated data) is one split shared by every repetition.

mod load;
mod spec;
pub mod synthetic;
mod view;

pub use load::{check_available, data_seeds, load, DataProblem, LoadedData};
pub use spec::{DataSpec, DataTable, DatasetSpec, FileSpec};
pub use view::{DataView, Labelled, Parts, RegressionSets, SplitSets};

#[cfg(test)]
mod tests {
    //! On the real registered data (`../shared/datasets`); each test says so and returns when
    //! the data are absent.
    use super::*;
    use anyhow::Result;
    use datasets::{GivenSplits, Inputs};
    use std::path::Path;

    fn root() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_path_buf()
    }

    fn spec(text: &str) -> DataSpec {
        toml::from_str(text).unwrap()
    }

    /// The data, or `None` (with a note) when the dataset is not present.
    fn loaded(text: &str, seed: u64, repeats: usize) -> Option<Result<LoadedData>> {
        let spec = spec(text);
        if let Err(e) = check_available(&root(), &spec) {
            eprintln!("skipped: {e}");
            return None;
        }
        Some(load(&root(), &spec, seed, repeats))
    }

    fn parts(data: &LoadedData, rep: usize) -> Parts {
        data.view(rep)
            .unwrap()
            .sets()
            .unwrap()
            .parts
            .as_ref()
            .clone()
    }

    const YACHT_RANDOM: &str =
        "source = 'dataset'\nname = 'uci/yacht'\nsplit = { kind = 'random', test_fraction = 0.3 }";

    #[test]
    fn random_splits_are_reproducible_per_repetition_and_differ_across_repetitions() {
        let Some(a) = loaded(YACHT_RANDOM, 7, 3) else {
            return;
        };
        let a = a.unwrap();
        let b = loaded(YACHT_RANDOM, 7, 3).unwrap().unwrap();
        let other_seed = loaded(YACHT_RANDOM, 8, 3).unwrap().unwrap();
        for rep in 0..3 {
            let p = parts(&a, rep);
            // The same (seed, data, repetition) gives the same split: every method and
            // parameter point of a run sees it, whatever the thread count.
            assert_eq!(p, parts(&b, rep));
            assert_ne!(p, parts(&other_seed, rep));
            assert_eq!(a.split_group(rep), rep);
            assert_eq!(p.test.len(), 92, "round(0.3 * 308)");
            let mut all: Vec<usize> = p.train.iter().chain(&p.test).copied().collect();
            all.sort();
            assert_eq!(all, (0..308).collect::<Vec<_>>());
        }
        assert_ne!(parts(&a, 0), parts(&a, 1));
        assert_ne!(parts(&a, 1), parts(&a, 2));
        let sets = a.view(1).unwrap().regression().unwrap();
        assert_eq!((sets.train.x.dim(), sets.test.y.len()), ((216, 6), 92));
    }

    #[test]
    fn predefined_splits_are_the_shipped_masks_one_per_repetition() {
        let text = "source = 'dataset'\nname = 'uci/yacht'\nsplit = { kind = 'predefined' }";
        let Some(data) = loaded(text, 1, 10) else {
            return;
        };
        let data = data.unwrap();
        let set = datasets::load(&datasets::DataDirs::from_root(root()), "uci/yacht").unwrap();
        let GivenSplits::Masks(masks) = &set.given else {
            panic!("uci/yacht ships test masks");
        };
        for k in 0..10 {
            let expected: Vec<usize> = (0..308).filter(|&i| masks[[i, k]]).collect();
            assert_eq!(parts(&data, k).test, expected, "mask {k}");
        }
        // More repetitions than masks, or no split at all, is a clear error.
        let err = loaded(text, 1, 11).unwrap().err().unwrap().to_string();
        assert!(err.contains("10 masks"), "{err}");
        let err = loaded("source = 'dataset'\nname = 'uci/yacht'", 1, 1)
            .unwrap()
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("predefined") && err.contains("random"),
            "{err}"
        );
    }

    #[test]
    fn the_given_split_is_the_published_files_in_every_repetition() {
        let Some(data) = loaded("source = 'dataset'\nname = 'cpu_rr'", 1, 5) else {
            return;
        };
        let data = data.unwrap();
        assert_eq!(data.split_group(4), 0);
        assert_eq!(parts(&data, 0), parts(&data, 4));
        let sets = data.view(3).unwrap().regression().unwrap();
        // The published files, read on their own.
        let located = datasets::DataDirs::from_root(root())
            .locate_name("cpu_rr")
            .unwrap();
        let (x_train, _) = datasets::load_xy(located.path("train").unwrap(), true).unwrap();
        let (_, y_test) = datasets::load_xy(located.path("test").unwrap(), true).unwrap();
        assert_eq!(sets.train.x, x_train);
        assert_eq!(sets.test.y, y_test);
        assert!(sets.validation.is_none());
        assert!(spec("source = 'dataset'\nname = 'cpu_rr'").fixed_split());
        assert!(!spec(YACHT_RANDOM).fixed_split());
    }

    #[test]
    fn stratified_splits_keep_class_proportions_and_streams_are_shared_per_repetition() {
        let text = "source = 'dataset'\nname = 'classification/sonar'\nsplit = { kind = 'random', test_fraction = 0.25, stratify = true }";
        let Some(data) = loaded(text, 3, 2) else {
            return;
        };
        let data = data.unwrap();
        let view = data.view(0).unwrap();
        let sets = view.sets().unwrap();
        let counts = |rows: &[usize]| sets.rows(rows).1.class_counts().unwrap();
        let (all, test) = (
            counts(&(0..208).collect::<Vec<_>>()),
            counts(&sets.parts.test),
        );
        for (c, t) in all.iter().zip(&test) {
            assert!(
                (*t as f64 - 0.25 * *c as f64).abs() <= 1.0,
                "{all:?} {test:?}"
            );
        }
        // A shuffled stream is a permutation, the same for every cell of the repetition, and
        // another one in the next repetition.
        let tick = |_: f64| {};
        let cell = crate::seeds::Seeds::from_bytes([1; 32]);
        let other_cell = crate::seeds::Seeds::from_bytes([2; 32]);
        let stream = |cell, rep| {
            crate::context::CellContext::new(cell, data.stream_seeds(rep), &tick, None)
                .shuffled(&(0..208).collect::<Vec<_>>())
        };
        let rows: Vec<usize> = (0..208).collect();
        assert_ne!(stream(cell, 0), rows);
        let mut sorted = stream(cell, 0);
        sorted.sort();
        assert_eq!(sorted, rows);
        assert_eq!(stream(cell, 0), stream(other_cell, 0));
        assert_ne!(stream(cell, 0), stream(cell, 1));
        // Classification data are not regression data.
        let err = view.regression().err().unwrap().to_string();
        assert!(err.contains("classification"), "{err}");
    }

    #[test]
    fn sparse_sets_load_sparse() {
        let text = "source = 'dataset'\nname = 'a8a'\nsplit = { kind = 'random', test_fraction = 0.3, stratify = true }";
        let Some(data) = loaded(text, 1, 1) else {
            return;
        };
        let data = data.unwrap();
        let view = data.view(0).unwrap();
        let sets = view.sets().unwrap();
        assert!(matches!(sets.set.x, Inputs::Sparse(_)));
        assert_eq!(sets.set.n_rows(), 22696);
        let err = view.points().err().unwrap().to_string();
        assert!(err.contains("sparse"), "{err}");
    }

    const LAPLACE: &str = "source = 'laplace_gp'\nn_train = 30\nn_validation = 10\nn_test = 10\n\
                           dim = 2\nlifetime = 10.0\nnoise_sd = 0.01";

    fn train_y(data: &LoadedData, rep: usize) -> Vec<f64> {
        data.view(rep)
            .unwrap()
            .regression()
            .unwrap()
            .train
            .y
            .to_vec()
    }

    #[test]
    fn synthetic_data_drawn_per_repetition_start_from_the_single_draw() {
        let once = load(&root(), &spec(LAPLACE), 5, 3).unwrap();
        let per = format!("{LAPLACE}\ndraw = 'per_repetition'");
        let per_spec = spec(&per);
        let per_rep = load(&root(), &per_spec, 5, 3).unwrap();
        // `once` (the default, or written out) keeps its serialisation, so its seeds and keys.
        let written = spec(&format!("{LAPLACE}\ndraw = 'once'"));
        assert_eq!(written, spec(LAPLACE));
        use rand::RngCore;
        assert_eq!(data_seeds(5, &written).rng("x").next_u64(), {
            data_seeds(5, &spec(LAPLACE)).rng("x").next_u64()
        });
        assert!(spec(LAPLACE).fixed_split() && !per_spec.fixed_split());
        assert_eq!(once.split_group(2), 0);
        assert_eq!(per_rep.split_group(2), 2);
        // Every repetition of `once` sees one draw; `per_repetition` draws again from rep 1 on,
        // its rep 0 being the draw `once` makes from the same data seed.
        assert_eq!(train_y(&once, 0), train_y(&once, 2));
        let per_seeds = data_seeds(5, &per_spec);
        let first = match per_spec
            .generator()
            .unwrap()
            .generate(&mut per_seeds.rng("data"))
        {
            Ok(synthetic::Generated::Regression { y, .. }) => y.slice(ndarray::s![..30]).to_vec(),
            _ => panic!("laplace_gp draws a regression sample"),
        };
        assert_eq!(train_y(&per_rep, 0), first);
        assert_eq!(train_y(&per_rep, 0), train_y(&once, 0));
        assert_ne!(train_y(&per_rep, 0), train_y(&per_rep, 1));
        assert_ne!(train_y(&per_rep, 1), train_y(&per_rep, 2));
        assert_eq!(
            train_y(&per_rep, 2),
            train_y(&load(&root(), &per_spec, 5, 3).unwrap(), 2)
        );
        // Clear errors: an unknown value, a repetition past the draws, a generator that
        // already splits per repetition.
        let err = toml::from_str::<DataSpec>(&format!("{LAPLACE}\ndraw = 'twice'"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("data.draw") && err.contains("per_repetition"),
            "{err}"
        );
        let err = per_rep.view(3).err().unwrap().to_string();
        assert!(err.contains("3 repetitions"), "{err}");
        let err = toml::from_str::<DataSpec>(
            "source = 'oblique_boundary'\nn = 100\ndim = 2\ndraw = 'per_repetition'",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("already draws a split per repetition"),
            "{err}"
        );
    }
}
