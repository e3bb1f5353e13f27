//! Downloading registered files into the cache directory (`repro datasets fetch NAME`).
//!
//! Each file with a `url` is streamed into a temporary file next to its final place
//! (`<cache>/<path>`), gzipped on the way when the body is not gzip but the path ends in `.gz`,
//! verified against the registry, and only then renamed into place. A failed or mismatching
//! download leaves nothing under the final name and removes its temporary file.
//!
//! For mirrors and tests, `$REPRO_FETCH_BASE` (or the `base` argument of [`fetch_from`])
//! replaces the scheme and host of every url, keeping the path: with
//! `REPRO_FETCH_BASE=http://127.0.0.1:8080/mirror`, `https://host/a/b.gz` is fetched from
//! `http://127.0.0.1:8080/mirror/a/b.gz`.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::digest::{verify_file, Match};
use crate::error::DatasetError;
use crate::gz::is_gzip_bytes;
use crate::locate::DataDirs;
use crate::registry::{DataFile, Dataset};

/// Environment variable replacing the scheme and host of every download url.
pub const FETCH_BASE_ENV: &str = "REPRO_FETCH_BASE";

/// What `fetch` did for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchAction {
    /// A verified copy already existed in a data directory; nothing was downloaded.
    AlreadyPresent,
    /// Downloaded from `url` and verified.
    Downloaded {
        /// The url actually requested (after `REPRO_FETCH_BASE`).
        url: String,
        /// Whether the body was gzipped locally (uncompressed body, `.gz` path).
        gzipped_locally: bool,
    },
}

/// One file handled by `fetch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedFile {
    /// The file's role.
    pub role: String,
    /// Where the verified file now is (absolute).
    pub path: PathBuf,
    /// How it matched the registry.
    pub matched: Match,
    /// What was done.
    pub action: FetchAction,
}

/// Downloads every missing file of `dataset` into `dirs.cache_dir()`, honouring
/// `$REPRO_FETCH_BASE`. See [`fetch_from`].
pub fn fetch(dataset: &Dataset, dirs: &DataDirs) -> Result<Vec<FetchedFile>, DatasetError> {
    let base = std::env::var(FETCH_BASE_ENV)
        .ok()
        .filter(|b| !b.trim().is_empty());
    fetch_from(dataset, dirs, base.as_deref())
}

/// Downloads every file of `dataset` that is not already present and verified in `dirs`, into
/// `<cache>/<path>`; `base`, when given, replaces the scheme and host of each url.
///
/// Fails before downloading anything with [`DatasetError::NoUrl`] when a missing file has no
/// url (the error carries the registry's upstream text). A download whose digest does not match
/// is deleted and reported as [`DatasetError::DigestMismatch`] naming the url.
pub fn fetch_from(
    dataset: &Dataset,
    dirs: &DataDirs,
    base: Option<&str>,
) -> Result<Vec<FetchedFile>, DatasetError> {
    let mut done = Vec::new();
    let mut todo = Vec::new();
    for f in &dataset.files {
        if let Some(found) = dirs.find(f) {
            if let Ok(matched) = verify_file(&found, f) {
                done.push(FetchedFile {
                    role: f.role.clone(),
                    path: found,
                    matched,
                    action: FetchAction::AlreadyPresent,
                });
                continue;
            }
        }
        match &f.url {
            Some(url) => todo.push((f, url)),
            None => {
                return Err(DatasetError::NoUrl {
                    dataset: dataset.name.clone(),
                    file: f.path.clone(),
                    upstream: dataset.upstream.clone(),
                })
            }
        }
    }
    if todo.is_empty() {
        return Ok(done);
    }
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(30)))
            .timeout_recv_response(Some(Duration::from_secs(120)))
            .user_agent(concat!("repro-datasets/", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    for (f, url) in todo {
        let url = match base {
            Some(b) => rebase_url(url, b),
            None => url.clone(),
        };
        let dest = dirs.cache_dir().join(&f.path);
        let (matched, gzipped_locally) = download(&agent, &url, &dest, f)?;
        done.push(FetchedFile {
            role: f.role.clone(),
            path: dest,
            matched,
            action: FetchAction::Downloaded {
                url,
                gzipped_locally,
            },
        });
    }
    Ok(done)
}

/// Replaces the scheme and host of `url` by `base` (which may carry a path prefix).
///
/// `rebase_url("https://h.org/a/b.gz", "http://127.0.0.1:9/m/")` is
/// `"http://127.0.0.1:9/m/a/b.gz"`.
pub fn rebase_url(url: &str, base: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme
        .find('/')
        .map_or("", |i| &after_scheme[i + 1..]);
    format!("{}/{}", base.trim_end_matches('/'), path)
}

/// Copies `body` into `file`, gzipping it on the way when `gzip`; returns the flushed file.
fn write_body(body: &mut impl Read, file: File, gzip: bool) -> io::Result<File> {
    if gzip {
        let mut enc = GzEncoder::new(BufWriter::new(file), Compression::default());
        io::copy(body, &mut enc)?;
        enc.finish()?.into_inner().map_err(|e| e.into_error())
    } else {
        let mut w = BufWriter::new(file);
        io::copy(body, &mut w)?;
        w.into_inner().map_err(|e| e.into_error())
    }
}

/// The response body; remembers whether a read failed, to tell network errors from disk errors.
struct NetReader<R> {
    inner: R,
    failed: bool,
}

impl<R: Read> Read for NetReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let r = self.inner.read(buf);
        if matches!(&r, Err(e) if e.kind() != io::ErrorKind::Interrupted) {
            self.failed = true;
        }
        r
    }
}

/// Deletes the temporary file on drop unless [`TempGuard::keep`] was called.
struct TempGuard(Option<PathBuf>);

impl TempGuard {
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn temp_path(dest: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = dest
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "download".into());
    dest.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

fn download(
    agent: &ureq::Agent,
    url: &str,
    dest: &Path,
    entry: &DataFile,
) -> Result<(Match, bool), DatasetError> {
    let parent = dest.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| DatasetError::io(parent, e))?;
    let tmp = temp_path(dest);
    let guard = TempGuard(Some(tmp.clone()));

    let dl_err = |message: String| DatasetError::Download {
        url: url.to_string(),
        message,
    };
    let response = agent.get(url).call().map_err(|e| dl_err(e.to_string()))?;
    let mut body = BufReader::with_capacity(
        1 << 16,
        NetReader {
            inner: response.into_body().into_reader(),
            failed: false,
        },
    );
    let head = body.fill_buf().map_err(|e| dl_err(e.to_string()))?;
    let gzip_locally = entry.path.ends_with(".gz") && !is_gzip_bytes(head);

    let file = File::create(&tmp).map_err(|e| DatasetError::io(&tmp, e))?;
    let file = write_body(&mut body, file, gzip_locally).map_err(|e| {
        if body.get_ref().failed {
            dl_err(e.to_string())
        } else {
            DatasetError::io(&tmp, e)
        }
    })?;
    file.sync_all().map_err(|e| DatasetError::io(&tmp, e))?;
    drop(file);

    let matched = match verify_file(&tmp, entry) {
        Ok(m) => m,
        Err(DatasetError::DigestMismatch {
            expected,
            actual,
            expected_content,
            actual_content,
            ..
        }) => {
            return Err(DatasetError::DigestMismatch {
                file: format!("download {url} (for {})", entry.path),
                expected,
                actual,
                expected_content,
                actual_content,
            })
        }
        Err(e) => return Err(e),
    };
    std::fs::rename(&tmp, dest).map_err(|e| DatasetError::io(dest, e))?;
    guard.keep();
    Ok((matched, gzip_locally))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebase_keeps_path() {
        assert_eq!(
            rebase_url("https://h.org/a/b.gz", "http://127.0.0.1:9"),
            "http://127.0.0.1:9/a/b.gz"
        );
        assert_eq!(
            rebase_url("http://yann.lecun.com/exdb/mnist/x.gz", "http://m:1/pre/"),
            "http://m:1/pre/exdb/mnist/x.gz"
        );
        assert_eq!(rebase_url("https://h.org", "http://b"), "http://b/");
    }

    #[test]
    fn temp_name_is_hidden_and_distinct() {
        let a = temp_path(Path::new("/c/libsvm/a9a.gz"));
        let b = temp_path(Path::new("/c/libsvm/a9a.gz"));
        assert_ne!(a, b);
        assert_eq!(a.parent(), Some(Path::new("/c/libsvm")));
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(".a9a.gz.") && name.ends_with(".tmp"),
            "{name}"
        );
    }
}
