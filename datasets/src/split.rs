//! Train/test splits of a [`LabelledSet`], drawn per repetition.
//!
//! A [`SplitSpec`] (the harness's `[data] split`, e.g. `split = { kind = "random",
//! test_fraction = 0.3, stratify = true }`) names how:
//!
//! * `given`: the published train/test files ([`GivenSplits::TrainTest`]); the same split in
//!   every repetition.
//! * `predefined`: shipped mask column `rep` ([`GivenSplits::Masks`]; repetition `rep` uses
//!   column `rep`, so at most `k` repetitions).
//! * `random`: a permutation drawn from the caller's RNG. The harness seeds that RNG per
//!   repetition, identically for every method, so all methods see the same split (paired
//!   comparisons). The draw is sequential: it does not depend on the thread count.
//!
//! Rounding: the test set has `round(test_fraction * n)` rows (half away from zero), clamped to
//! `1..=n-1` so both sides are non-empty. Unstratified, the test rows are the first of those in
//! [`shuffled_order`]. Stratified, class `c` with `n_c` rows gets `floor(q_c)` or
//! `floor(q_c) + 1` test rows, `q_c = n_test * n_c / n` (largest remainders get the `+ 1`, ties to
//! the lower label; exact integer arithmetic), so the total is still `n_test` and every class is
//! within one row of its proportional share; its test rows are its first `n_test_c` rows in
//! [`shuffled_order`].

use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::DatasetError;
use crate::labelled::{GivenSplits, LabelledSet, Targets};

/// How the train and test rows of a repetition are chosen.
///
/// Serialised with a `kind` tag: `{ kind = "given" }`, `{ kind = "predefined" }`,
/// `{ kind = "random", test_fraction = 0.3, stratify = true }` (`stratify` defaults to false).
/// Unknown fields, and `test_fraction`/`stratify` on `given` or `predefined`, are refused
/// (serde's `deny_unknown_fields` alone would let unit variants ignore them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    deny_unknown_fields,
    try_from = "RawSplitSpec"
)]
pub enum SplitSpec {
    /// The published train/test files.
    Given,
    /// The shipped test mask of the repetition.
    Predefined,
    /// A random split from the caller's RNG.
    Random {
        /// Fraction of rows in the test set, in (0, 1).
        test_fraction: f64,
        /// Draw the test rows per class, keeping the class proportions.
        #[serde(default)]
        stratify: bool,
    },
}

/// The flat form a [`SplitSpec`] is read from, so every variant refuses unknown fields.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSplitSpec {
    kind: RawKind,
    #[serde(default)]
    test_fraction: Option<f64>,
    #[serde(default)]
    stratify: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum RawKind {
    Given,
    Predefined,
    Random,
}

impl TryFrom<RawSplitSpec> for SplitSpec {
    type Error = String;

    fn try_from(raw: RawSplitSpec) -> Result<SplitSpec, String> {
        let fixed = |kind: &str, spec: SplitSpec| {
            if raw.test_fraction.is_some() || raw.stratify.is_some() {
                Err(format!(
                    "split kind `{kind}` takes no test_fraction or stratify (those are for \
                     kind = \"random\")"
                ))
            } else {
                Ok(spec)
            }
        };
        match raw.kind {
            RawKind::Given => fixed("given", SplitSpec::Given),
            RawKind::Predefined => fixed("predefined", SplitSpec::Predefined),
            RawKind::Random => Ok(SplitSpec::Random {
                test_fraction: raw.test_fraction.ok_or(
                    "split kind `random` needs test_fraction (the share of test rows, in (0, 1))",
                )?,
                stratify: raw.stratify.unwrap_or(false),
            }),
        }
    }
}

/// Row indices into a [`LabelledSet`], each list sorted ascending; together they cover every
/// row exactly once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Training rows.
    pub train: Vec<usize>,
    /// Test rows.
    pub test: Vec<usize>,
}

/// `0..n` in a seeded random order (Fisher-Yates via rand's `SliceRandom::shuffle`): the same
/// RNG state gives the same order on every platform.
pub fn shuffled_order<R: Rng + ?Sized>(n: usize, rng: &mut R) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    order
}

impl SplitSpec {
    /// Checks the parameters alone: `0 < test_fraction < 1`.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            SplitSpec::Random { test_fraction, .. }
                if !(test_fraction.is_finite() && *test_fraction > 0.0 && *test_fraction < 1.0) =>
            {
                Err(format!(
                    "split test_fraction must be in (0, 1), got {test_fraction}"
                ))
            }
            _ => Ok(()),
        }
    }

    /// Checks that a set with these given splits and targets supports `repeats` repetitions:
    /// `given` needs the published train/test files, `predefined` needs at least `repeats`
    /// shipped masks, `stratify` needs class targets, `random` needs at least 2 rows.
    pub fn check_set(
        &self,
        given: &GivenSplits,
        targets: &Targets,
        repeats: usize,
    ) -> Result<(), String> {
        self.validate()?;
        match self {
            SplitSpec::Given => match given {
                GivenSplits::TrainTest { .. } => Ok(()),
                _ => Err(format!(
                    "split `given` needs the published train/test files, but the set ships {}; \
                     use `predefined` or `random`",
                    describe(given)
                )),
            },
            SplitSpec::Predefined => match given {
                GivenSplits::Masks(m) if m.ncols() >= repeats => Ok(()),
                GivenSplits::Masks(m) => Err(format!(
                    "split `predefined` uses mask k in repetition k, but the set ships {} \
                     masks for {repeats} repetitions; use at most {} repeats",
                    m.ncols(),
                    m.ncols()
                )),
                _ => Err(format!(
                    "split `predefined` needs shipped test masks, but the set ships {}; use \
                     `given` or `random`",
                    describe(given)
                )),
            },
            SplitSpec::Random { stratify, .. } => {
                if *stratify && targets.n_classes().is_none() {
                    return Err(
                        "split `random` with stratify = true needs class targets, but \
                                the set is a regression set; set stratify = false"
                            .into(),
                    );
                }
                if targets.len() < 2 {
                    return Err(format!(
                        "split `random` needs at least 2 rows, the set has {}",
                        targets.len()
                    ));
                }
                Ok(())
            }
        }
    }

    /// The split of repetition `rep` (0-based). `random` draws from `rng` (and only `random`
    /// uses it); the others are fixed by the data.
    pub fn draw<R: Rng + ?Sized>(
        &self,
        set: &LabelledSet,
        rep: usize,
        rng: &mut R,
    ) -> Result<Split, DatasetError> {
        let err = |message: String| DatasetError::Split {
            dataset: set.name.clone(),
            message,
        };
        self.check_set(&set.given, &set.y, rep + 1).map_err(err)?;
        let n = set.n_rows();
        let split = match (self, &set.given) {
            (SplitSpec::Given, GivenSplits::TrainTest { n_train }) => Split {
                train: (0..*n_train).collect(),
                test: (*n_train..n).collect(),
            },
            (SplitSpec::Predefined, GivenSplits::Masks(m)) => {
                let col = m.column(rep);
                let (test, train): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| col[i]);
                Split { train, test }
            }
            (
                SplitSpec::Random {
                    test_fraction,
                    stratify,
                },
                _,
            ) => {
                let n_test = test_count(*test_fraction, n);
                let order = shuffled_order(n, rng);
                let mut is_test = vec![false; n];
                match (&set.y, stratify) {
                    (Targets::Classes { labels, names }, true) => {
                        let mut counts = vec![0usize; names.len()];
                        for &l in labels {
                            counts[l as usize] += 1;
                        }
                        let mut quota = stratified_quotas(&counts, n_test);
                        for &i in &order {
                            let q = &mut quota[labels[i] as usize];
                            if *q > 0 {
                                *q -= 1;
                                is_test[i] = true;
                            }
                        }
                    }
                    _ => {
                        for &i in &order[..n_test] {
                            is_test[i] = true;
                        }
                    }
                }
                let (test, train): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| is_test[i]);
                Split { train, test }
            }
            _ => unreachable!("check_set matched the spec to the given splits"),
        };
        if split.train.is_empty() || split.test.is_empty() {
            return Err(err(format!(
                "repetition {rep} has {} training and {} test rows; both must be non-empty",
                split.train.len(),
                split.test.len()
            )));
        }
        Ok(split)
    }
}

/// `round(test_fraction * n)` (half away from zero) clamped to `1..=n-1`; `n >= 2`.
pub fn test_count(test_fraction: f64, n: usize) -> usize {
    let t = (test_fraction * n as f64).round();
    (t.max(1.0) as usize).min(n.saturating_sub(1)).max(1)
}

/// Test rows per class: `floor(n_test * n_c / n)`, plus one for the classes with the largest
/// remainders (ties to the lower label) until the total is `n_test`.
pub fn stratified_quotas(counts: &[usize], n_test: usize) -> Vec<usize> {
    let n: usize = counts.iter().sum();
    if n == 0 {
        return vec![0; counts.len()];
    }
    let (n128, t128) = (n as u128, n_test as u128);
    let mut quota: Vec<usize> = counts
        .iter()
        .map(|&c| (t128 * c as u128 / n128) as usize)
        .collect();
    let mut by_remainder: Vec<(u128, usize)> = counts
        .iter()
        .enumerate()
        .map(|(k, &c)| (t128 * c as u128 % n128, k))
        .collect();
    // Largest remainder first, then the lower label.
    by_remainder.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let missing = n_test.saturating_sub(quota.iter().sum());
    for &(_, k) in by_remainder.iter().take(missing) {
        quota[k] += 1;
    }
    quota
}

fn describe(given: &GivenSplits) -> String {
    match given {
        GivenSplits::None => "no splits".into(),
        GivenSplits::TrainTest { n_train } => {
            format!("published train/test files ({n_train} training rows)")
        }
        GivenSplits::Masks(m) => format!("{} test masks", m.ncols()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_sum_and_stay_within_one() {
        for (counts, n_test) in [
            (vec![95, 33], 43),
            (vec![16, 12, 12, 9, 8], 19),
            (vec![1, 1, 1], 1),
            (vec![5, 0, 5], 3),
            (vec![70, 76, 17, 13, 9, 29], 71),
        ] {
            let q = stratified_quotas(&counts, n_test);
            let n: usize = counts.iter().sum();
            assert_eq!(q.iter().sum::<usize>(), n_test, "{counts:?}");
            for (&c, &t) in counts.iter().zip(&q) {
                let share = n_test as f64 * c as f64 / n as f64;
                assert!((t as f64 - share).abs() < 1.0, "{counts:?}: {t} vs {share}");
                assert!(t <= c);
            }
        }
    }

    #[test]
    fn test_count_rounds_and_clamps() {
        assert_eq!(test_count(0.3, 10), 3);
        assert_eq!(test_count(0.25, 10), 3); // 2.5 rounds away from zero
        assert_eq!(test_count(0.01, 10), 1);
        assert_eq!(test_count(0.99, 10), 9);
        assert_eq!(test_count(0.5, 2), 1);
    }

    #[test]
    fn spec_serde_and_validate() {
        #[derive(Deserialize)]
        struct W {
            split: SplitSpec,
        }
        let w: W =
            toml::from_str("split = { kind = \"random\", test_fraction = 0.3, stratify = true }")
                .unwrap();
        assert_eq!(
            w.split,
            SplitSpec::Random {
                test_fraction: 0.3,
                stratify: true
            }
        );
        let w: W = toml::from_str("split = { kind = \"random\", test_fraction = 0.3 }").unwrap();
        assert_eq!(
            w.split,
            SplitSpec::Random {
                test_fraction: 0.3,
                stratify: false
            }
        );
        let w: W = toml::from_str("split = { kind = \"predefined\" }").unwrap();
        assert_eq!(w.split, SplitSpec::Predefined);
        assert!(toml::from_str::<W>("split = { kind = \"given\", x = 1 }").is_err());
        let e = toml::from_str::<W>("split = { kind = \"given\", test_fraction = 0.5 }")
            .err()
            .unwrap();
        assert!(e.to_string().contains("takes no test_fraction"), "{e}");
        assert!(toml::from_str::<W>("split = { kind = \"random\" }").is_err());
        assert!(toml::from_str::<W>(
            "split = { kind = \"random\", test_fraction = 0.3, seed = 1 }"
        )
        .is_err());
        // Serialised with its tag, and read back.
        #[derive(Serialize)]
        struct S {
            split: SplitSpec,
        }
        for spec in [
            SplitSpec::Given,
            SplitSpec::Predefined,
            SplitSpec::Random {
                test_fraction: 0.25,
                stratify: true,
            },
        ] {
            let text = toml::to_string(&S {
                split: spec.clone(),
            })
            .unwrap();
            assert_eq!(toml::from_str::<W>(&text).unwrap().split, spec, "{text}");
        }
        assert!(toml::from_str::<W>("split = { kind = \"shuffle\" }").is_err());
        for f in [0.0, 1.0, -0.1, f64::NAN] {
            let s = SplitSpec::Random {
                test_fraction: f,
                stratify: false,
            };
            assert!(s.validate().is_err(), "{f}");
        }
        assert!(SplitSpec::Given.validate().is_ok());
    }
}
