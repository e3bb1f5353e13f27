//! Loading a registered dataset into its typed form ([`LabelledSet`]): locate and verify its
//! files, then assemble them as its `[dataset.table]` section says.

use crate::assemble::assemble;
use crate::error::DatasetError;
use crate::labelled::LabelledSet;
use crate::locate::DataDirs;
use crate::registry::{Dataset, Registry};
use crate::table::DerivedTask;

/// Loads the registered dataset `name` (embedded registry) into its typed form, as its
/// `[dataset.table]` section says. Every file is located and verified first.
///
/// Errors: [`DatasetError::UnknownDataset`], [`DatasetError::NoTable`], the locate errors
/// ([`DatasetError::Missing`], [`DatasetError::DigestMismatch`]), parse errors naming the file,
/// line and column, and [`DatasetError::Table`] when the files do not fit together.
pub fn load(dirs: &DataDirs, name: &str) -> Result<LabelledSet, DatasetError> {
    load_from(dirs, Registry::embedded()?, name)
}

/// As [`load`], from the given registry.
pub fn load_from(
    dirs: &DataDirs,
    registry: &Registry,
    name: &str,
) -> Result<LabelledSet, DatasetError> {
    load_dataset(dirs, registry.get(name)?)
}

/// As [`load`], for a dataset entry.
pub fn load_dataset(dirs: &DataDirs, dataset: &Dataset) -> Result<LabelledSet, DatasetError> {
    load_task(dirs, dataset, None)
}

/// As [`load_dataset`], for a task derived from the dataset's files (another target, a subset
/// of classes, filtered rows; rules in [`DerivedTask`]), or the table's own task with `None`.
pub fn load_task(
    dirs: &DataDirs,
    dataset: &Dataset,
    derived: Option<&DerivedTask>,
) -> Result<LabelledSet, DatasetError> {
    let table = dataset
        .table
        .as_ref()
        .ok_or_else(|| DatasetError::NoTable {
            dataset: dataset.name.clone(),
        })?;
    let derived_table;
    let spec = match derived {
        Some(d) => {
            d.validate(dataset, table)
                .map_err(|message| DatasetError::Table {
                    dataset: dataset.name.clone(),
                    message,
                })?;
            derived_table = d.table(table);
            &derived_table
        }
        None => table,
    };
    let located = dirs.locate(dataset)?;
    let set = assemble(dataset, spec, &located, derived)?;
    set.check().map_err(|message| DatasetError::Table {
        dataset: dataset.name.clone(),
        message,
    })?;
    Ok(set)
}
