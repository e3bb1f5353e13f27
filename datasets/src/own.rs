//! Data of one's own: files named by path (a config's `[data] source = "file"`), read by the
//! same table rules as a registered dataset ([`TableSpec`]), with no registry entry and no
//! rebuild. Their sha256 is computed when they are read, not checked against a registered one:
//! the caller records it (manifest, cache keys) so a result still names the exact bytes it came
//! from.

use std::path::{Path, PathBuf};

use crate::assemble::assemble;
use crate::digest::{file_sha256, Match};
use crate::error::DatasetError;
use crate::labelled::LabelledSet;
use crate::locate::{Located, LocatedFile};
use crate::registry::{DataFile, Dataset, Format};
use crate::table::TableSpec;

/// Files of one's own and how to read them.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnFiles {
    /// A name for messages and the manifest.
    pub name: String,
    /// (role, path) of each file: the roles `table.rows` names (e.g. `data`, or `train` and
    /// `test` for a given split).
    pub files: Vec<(String, PathBuf)>,
    /// The files' format.
    pub format: Format,
    /// How the files become a typed set (the rules of a registry's `[dataset.table]`).
    pub table: TableSpec,
}

/// A file of one's own as read: its role, path and sha256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnFile {
    pub role: String,
    pub path: PathBuf,
    pub sha256: String,
}

impl OwnFiles {
    /// The files' sha256, by role (an error names a file that cannot be read).
    pub fn digests(&self) -> Result<Vec<OwnFile>, DatasetError> {
        self.files
            .iter()
            .map(|(role, path)| {
                if !path.is_file() {
                    return Err(DatasetError::Format {
                        path: path.clone(),
                        message: format!(
                            "the {role} file of {} is not there (a path in [data] is relative to \
                             the config's folder, or absolute)",
                            self.name
                        ),
                    });
                }
                Ok(OwnFile {
                    role: role.clone(),
                    path: path.clone(),
                    sha256: file_sha256(path)?,
                })
            })
            .collect()
    }

    /// The files as a dataset entry, with the given digests.
    fn dataset(&self, digests: &[OwnFile]) -> Dataset {
        Dataset {
            name: self.name.clone(),
            description: "data of one's own, named by path in a config".into(),
            papers: Vec::new(),
            format: self.format,
            license: None,
            upstream: "the user's own files".into(),
            files: digests
                .iter()
                .map(|f| DataFile {
                    role: f.role.clone(),
                    path: f.path.display().to_string(),
                    sha256: f.sha256.clone(),
                    content_sha256: None,
                    url: None,
                    format: None,
                })
                .collect(),
            table: Some(self.table.clone()),
        }
    }

    /// Checks the table rules against the files' roles and format, reading nothing.
    pub fn validate(&self) -> Result<(), String> {
        let placeholder: Vec<OwnFile> = self
            .files
            .iter()
            .map(|(role, path)| OwnFile {
                role: role.clone(),
                path: path.clone(),
                sha256: String::new(),
            })
            .collect();
        self.table.validate(&self.dataset(&placeholder))
    }

    /// Reads the files into a typed set; returns it with the files' digests. The digests are
    /// taken before and after reading: a file that changed meanwhile is an error, so the
    /// recorded digest is the digest of the bytes read.
    pub fn load(&self) -> Result<(LabelledSet, Vec<OwnFile>), DatasetError> {
        let table_error = |message: String| DatasetError::Table {
            dataset: self.name.clone(),
            message,
        };
        self.validate().map_err(table_error)?;
        let digests = self.digests()?;
        let dataset = self.dataset(&digests);
        let located = Located {
            dataset: self.name.clone(),
            files: digests
                .iter()
                .map(|f| LocatedFile {
                    role: f.role.clone(),
                    rel_path: f.path.display().to_string(),
                    path: f.path.clone(),
                    matched: Match::Exact,
                })
                .collect(),
        };
        let set = assemble(&dataset, &self.table, &located, None)?;
        set.check().map_err(table_error)?;
        for f in &digests {
            if file_sha256(&f.path)? != f.sha256 {
                return Err(changed(&f.path));
            }
        }
        Ok((set, digests))
    }
}

fn changed(path: &Path) -> DatasetError {
    DatasetError::Format {
        path: path.to_path_buf(),
        message: "the file changed while it was being read; run again".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Task;
    use crate::{GivenSplits, Inputs, Targets};

    fn table(task: Task, rows: &[&str]) -> TableSpec {
        TableSpec {
            task,
            rows: rows.iter().map(|r| r.to_string()).collect(),
            header: Some(true),
            target: Some("y".into()),
            target_file: None,
            row_id: None,
            target_row_id: None,
            drop: vec!["id".into()],
            na: Default::default(),
            n_features: None,
            labels: None,
            classes: None,
            test_mask: None,
        }
    }

    #[test]
    fn a_csv_of_ones_own_reads_as_the_table_rules_say_with_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.csv");
        std::fs::write(&path, "id,a,y,b\n1,0.5,cat,2\n2,1.5,dog,3\n3,2.5,cat,4\n").unwrap();
        let own = OwnFiles {
            name: "mine".into(),
            files: vec![("data".into(), path.clone())],
            format: Format::Csv,
            table: table(Task::Classification, &["data"]),
        };
        let (set, digests) = own.load().unwrap();
        assert_eq!(set.feature_names, ["a", "b"]);
        let Inputs::Dense(x) = &set.x else {
            panic!("dense")
        };
        assert_eq!(x.row(2).to_vec(), [2.5, 4.0]);
        let Targets::Classes { labels, names } = &set.y else {
            panic!("classes")
        };
        assert_eq!(
            (labels.clone(), names.clone()),
            (vec![0, 1, 0], vec!["cat".to_string(), "dog".into()])
        );
        assert!(matches!(set.given, GivenSplits::None));
        // The digest is the sha256 of the bytes (an independent computation).
        use sha2::Digest;
        let expected = format!("{:x}", sha2::Sha256::digest(std::fs::read(&path).unwrap()));
        assert_eq!(digests[0].sha256, expected);
        // Another byte, another digest.
        std::fs::write(&path, "id,a,y,b\n1,0.5,cat,2\n2,1.5,dog,3\n3,2.5,cat,5\n").unwrap();
        assert_ne!(own.load().unwrap().1[0].sha256, expected);
    }

    #[test]
    fn train_and_test_files_are_the_given_split_and_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let train = dir.path().join("train.csv");
        let test = dir.path().join("test.csv");
        std::fs::write(&train, "id,a,y\n1,0.5,1.0\n2,1.5,2.0\n").unwrap();
        std::fs::write(&test, "id,a,y\n3,2.5,3.0\n").unwrap();
        let own = OwnFiles {
            name: "mine".into(),
            files: vec![
                ("train".into(), train.clone()),
                ("test".into(), test.clone()),
            ],
            format: Format::Csv,
            table: table(Task::Regression, &["train", "test"]),
        };
        let (set, digests) = own.load().unwrap();
        assert!(matches!(set.given, GivenSplits::TrainTest { .. }));
        assert_eq!(digests.len(), 2);
        // A missing file, a bad number, a missing column: errors that name the file.
        let missing = OwnFiles {
            files: vec![
                ("train".into(), train.clone()),
                ("test".into(), dir.path().join("nope.csv")),
            ],
            ..own.clone()
        };
        let e = missing.load().unwrap_err().to_string();
        assert!(e.contains("nope.csv") && e.contains("not there"), "{e}");
        std::fs::write(&test, "id,a,y\n3,x,3.0\n").unwrap();
        let e = own.load().unwrap_err().to_string();
        assert!(e.contains("test.csv"), "{e}");
        std::fs::write(&test, "id,a,z\n3,2.5,3.0\n").unwrap();
        assert!(own.load().is_err());
        // Table rules are checked before reading: a regression table with class names.
        let mut bad = own.clone();
        bad.table.classes = Some(vec!["a".into()]);
        assert!(bad.validate().is_err());
    }
}
