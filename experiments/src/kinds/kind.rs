//! The typed kind trait, its erased form for the runner, and the one generic adapter between
//! them.

use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

use anyhow::{bail, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::context::CellContext;
use crate::data::{DataSpec, DataView};
use crate::table::Row;

/// A documented result column.
#[derive(Debug, Clone, Copy)]
pub struct ColumnDoc {
    pub name: &'static str,
    pub doc: &'static str,
}

/// Parameters typed by a kind: deserialised with unknown keys rejected, then range-checked.
pub trait Params: DeserializeOwned + Serialize + Send + Sync + 'static {
    fn check(&self) -> Result<(), String>;
}

/// One kind of experiment, typed.
pub trait Kind: Send + Sync + 'static {
    /// One grid point of `[params]`.
    type Params: Params;
    /// What every cell of one data split shares (built by [`Kind::prepare`]).
    type Shared: Send + Sync + 'static;

    /// The `experiment.kind` value that selects it.
    const NAME: &'static str;
    /// One line for `repro list --kinds`.
    const SUMMARY: &'static str;
    /// Columns of the rows [`Kind::run_cell`] returns (checked when each cell finishes).
    const COLUMNS: &'static [ColumnDoc];
    /// Bumped whenever the kind's numbers change for the same inputs and sources. (Which
    /// sources its cells' cache keys cover is read from the file that defines the kind and what
    /// it imports: `crate::fingerprint`.)
    const CODE_VERSION: u32;

    /// Whether this kind can use the given data.
    fn check_data(_data: &DataSpec) -> Result<(), String> {
        Ok(())
    }
    /// Whether every repetition of this grid point gives the same numbers (then only
    /// repetition 0 runs).
    fn deterministic(_params: &Self::Params) -> bool {
        false
    }
    /// The parameters that decide a cell's random draws, by typed field (default: all). Cells
    /// that agree on these, on the data, the seed and the repetition draw the same random
    /// numbers (common random numbers): e.g. a lifetime sweep's trees do not depend on its
    /// terminal lifetime, so a shorter sweep is exactly the beginning of a longer one.
    fn stream(params: &Self::Params) -> serde_json::Value {
        serde_json::to_value(params).expect("parameters serialise")
    }
    /// The authors' code this grid point runs (an [`crate::upstream`] name), if any: its kit
    /// digest joins the cells' cache keys, and a cell that cannot run it is skipped with the
    /// reason.
    fn upstream(_params: &Self::Params) -> Option<&'static str> {
        None
    }
    /// A rough relative cost of one cell (any unit, the same for every cell of the kind), used
    /// to balance shards; default 1.
    fn cost(_params: &Self::Params) -> f64 {
        1.0
    }
    /// Builds what every cell of one data split shares.
    fn prepare(data: &DataView) -> Result<Self::Shared>;
    /// Computes one cell.
    fn run_cell(
        shared: &Self::Shared,
        params: &Self::Params,
        ctx: &CellContext,
    ) -> Result<Vec<Row>>;
}

/// Data shared by the cells of one split, type-erased for the runner.
pub type Shared = Box<dyn Any + Send + Sync>;

/// One grid point's parameters, deserialised and checked once, when the config is planned: the
/// typed value its cells receive, and what planning needs of it (computed then, from the typed
/// value, never parsed again).
#[derive(Clone)]
pub struct PointParams {
    /// Canonical JSON form: part of the cells' identities and the table's parameter columns.
    pub canonical: serde_json::Value,
    /// The parameters that decide the cells' random draws ([`Kind::stream`]).
    pub stream: serde_json::Value,
    /// Whether every repetition gives the same numbers ([`Kind::deterministic`]).
    pub deterministic: bool,
    /// Relative cost of one cell ([`Kind::cost`]).
    pub cost: f64,
    /// The authors' code it runs ([`Kind::upstream`]).
    pub upstream: Option<&'static str>,
    typed: Arc<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for PointParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PointParams({})", self.canonical)
    }
}

/// What the runner needs of a kind: [`Kind`] behind checked parameters and erased shared data.
pub trait ExperimentKind: Sync + Send {
    fn name(&self) -> &'static str;
    fn summary(&self) -> &'static str;
    fn code_version(&self) -> u32;
    fn columns(&self) -> &'static [ColumnDoc];
    /// The path of the kind's type (`std::any::type_name`): its fingerprint derives its
    /// sources from the file that defines it.
    fn type_path(&self) -> &'static str;
    fn check_data(&self, data: &DataSpec) -> Result<(), String>;
    /// Deserialises and checks one grid point of `[params]`.
    fn params(&self, point: toml::Table) -> Result<PointParams, String>;
    fn prepare(&self, data: &DataView) -> Result<Shared>;
    /// Runs one cell and checks its rows' columns against [`Self::columns`].
    fn run_cell(
        &self,
        shared: &Shared,
        params: &PointParams,
        ctx: &CellContext,
    ) -> Result<Vec<Row>>;
}

/// A kind's entry in the registry ([`crate::registry`]), submitted where the kind is defined,
/// with [`crate::register_kind!`]: registering a kind edits no central list.
pub struct Registration {
    pub kind: &'static dyn ExperimentKind,
}

inventory::collect!(Registration);

/// Registers a [`Kind`] where it is defined: `crate::register_kind!(FeatureRidge);` (or, from
/// outside the crate, `experiments::register_kind!(MyKind);`).
#[macro_export]
macro_rules! register_kind {
    ($kind:ty) => {
        $crate::inventory::submit! {
            $crate::kinds::Registration {
                kind: &$crate::kinds::Adapter::<$kind>::new(),
            }
        }
    };
}

/// The one generic adapter from a typed [`Kind`] to [`ExperimentKind`].
pub struct Adapter<K>(PhantomData<K>);

impl<K> Adapter<K> {
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<K> Default for Adapter<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Kind> ExperimentKind for Adapter<K> {
    fn name(&self) -> &'static str {
        K::NAME
    }
    fn summary(&self) -> &'static str {
        K::SUMMARY
    }
    fn code_version(&self) -> u32 {
        K::CODE_VERSION
    }
    fn columns(&self) -> &'static [ColumnDoc] {
        K::COLUMNS
    }
    fn type_path(&self) -> &'static str {
        std::any::type_name::<K>()
    }
    fn check_data(&self, data: &DataSpec) -> Result<(), String> {
        K::check_data(data)
    }
    fn params(&self, point: toml::Table) -> Result<PointParams, String> {
        let typed: K::Params = crate::toml_table::typed_table(point, "params")?;
        typed.check()?;
        Ok(PointParams {
            canonical: serde_json::to_value(&typed).map_err(|e| e.to_string())?,
            stream: K::stream(&typed),
            deterministic: K::deterministic(&typed),
            cost: K::cost(&typed),
            upstream: K::upstream(&typed),
            typed: Arc::new(typed),
        })
    }
    fn prepare(&self, data: &DataView) -> Result<Shared> {
        Ok(Box::new(K::prepare(data)?))
    }
    fn run_cell(
        &self,
        shared: &Shared,
        params: &PointParams,
        ctx: &CellContext,
    ) -> Result<Vec<Row>> {
        let (Some(shared), Some(typed)) = (
            shared.downcast_ref::<K::Shared>(),
            params.typed.downcast_ref::<K::Params>(),
        ) else {
            bail!(
                "internal error: shared data or parameters of the wrong type for {}",
                K::NAME
            );
        };
        let rows = K::run_cell(shared, typed, ctx)?;
        for row in &rows {
            if let Some(extra) = row
                .keys()
                .find(|k| !K::COLUMNS.iter().any(|c| c.name == *k))
            {
                bail!(
                    "internal error: {} returned a column `{extra}` that it does not declare",
                    K::NAME
                );
            }
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::row;
    use serde::Deserialize;

    /// A kind that returns a column it does not declare when asked to.
    struct Sloppy;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct SloppyParams {
        undeclared: bool,
    }

    impl Params for SloppyParams {
        fn check(&self) -> Result<(), String> {
            Ok(())
        }
    }

    impl Kind for Sloppy {
        type Params = SloppyParams;
        type Shared = ();
        const NAME: &'static str = "sloppy";
        const SUMMARY: &'static str = "test kind";
        const COLUMNS: &'static [ColumnDoc] = &[ColumnDoc {
            name: "value",
            doc: "a number",
        }];
        const CODE_VERSION: u32 = 1;
        fn prepare(_data: &DataView) -> Result<()> {
            Ok(())
        }
        fn run_cell(_: &(), p: &SloppyParams, _ctx: &CellContext) -> Result<Vec<Row>> {
            let name = if p.undeclared { "valeu" } else { "value" };
            Ok(vec![row([(name, 1.0.into())])])
        }
    }

    fn run(kind: &dyn ExperimentKind, undeclared: bool) -> Result<Vec<Row>> {
        let mut point = toml::Table::new();
        point.insert("undeclared".into(), undeclared.into());
        let params = kind.params(point).unwrap();
        let data =
            crate::data::DataView::Points(std::sync::Arc::new(ndarray::Array2::zeros((1, 1))));
        let shared = kind.prepare(&data)?;
        let seeds = crate::seeds::Seeds::from_bytes([0; 32]);
        let tick = |_: f64| {};
        kind.run_cell(
            &shared,
            &params,
            &CellContext::new(seeds, seeds, &tick, None),
        )
    }

    #[test]
    fn a_cell_returning_an_undeclared_column_fails_when_it_finishes() {
        let kind = Adapter::<Sloppy>::new();
        assert_eq!(run(&kind, false).unwrap().len(), 1);
        let err = run(&kind, true).unwrap_err().to_string();
        assert!(
            err.contains("`valeu`") && err.contains("does not declare"),
            "{err}"
        );
        let mut bad = toml::Table::new();
        bad.insert("undeclard".into(), true.into());
        assert!(kind.params(bad).unwrap_err().contains("undeclard"));
    }

    #[test]
    fn seeding_parameters_are_typed_fields() {
        // The sweep seeds its trees from M alone: a misspelt field would not compile, and two
        // sweeps that differ elsewhere share their draws.
        let kind = crate::registry::find("lifetime_sweep").unwrap();
        let point = |lifetime: f64| -> toml::Table {
            toml::from_str(&format!(
                "n_mondrians = 7\nterminal_lifetime = {lifetime}\ndelta = 0.1\ncheckpoints = {{ first = 0.5, count = 2 }}"
            ))
            .unwrap()
        };
        let a = kind.params(point(1.0)).unwrap().stream;
        let b = kind.params(point(2.0)).unwrap().stream;
        assert_eq!(a, b);
        assert_eq!(a, serde_json::json!({ "n_mondrians": 7 }));
    }
}
