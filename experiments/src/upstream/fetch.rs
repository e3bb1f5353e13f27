//! Fetching an upstream's archive (from a mirror folder, else its url), verifying its bytes,
//! extracting it with its top folder stripped, and verifying the extracted files.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Settings, Unavailable, Upstream};

/// Environment variable replacing the scheme and host of the download url (a local mirror
/// server, tests), as for datasets.
pub use datasets::fetch::FETCH_BASE_ENV;

/// The archive's bytes, from the first mirror holding it, else downloaded; verified against the
/// registry's sha256. Returns the bytes and where they came from.
pub fn archive(upstream: &Upstream, settings: &Settings) -> Result<(Vec<u8>, String), Unavailable> {
    let fail = |reason: String| Unavailable::new(&upstream.name, reason);
    for mirror in &settings.mirrors {
        let path = mirror.join(&upstream.archive);
        if !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(&path)
            .map_err(|e| fail(format!("cannot read {}: {e}", path.display())))?;
        let got = crate::keys::sha256_hex(&bytes);
        if got != upstream.sha256 {
            return Err(fail(format!(
                "{} has sha256 {got}, not the registered {} (a tampered or different archive: \
                 remove it or fetch the pinned commit {} again)",
                path.display(),
                upstream.sha256,
                upstream.commit
            )));
        }
        return Ok((bytes, path.display().to_string()));
    }
    let searched: Vec<String> = settings
        .mirrors
        .iter()
        .map(|m| m.display().to_string())
        .collect();
    if !settings.download {
        return Err(fail(format!(
            "{} is in no mirror folder ({}), and downloads are off",
            upstream.archive,
            searched.join(", ")
        )));
    }
    let url = match std::env::var(FETCH_BASE_ENV)
        .ok()
        .filter(|b| !b.trim().is_empty())
    {
        Some(base) => datasets::fetch::rebase_url(&upstream.url, &base),
        None => upstream.url.clone(),
    };
    let bytes = download(&url).map_err(|e| {
        fail(format!(
            "{} is in no mirror folder ({}; set ${}) and the download from {url} failed: {e}",
            upstream.archive,
            searched.join(", "),
            super::MIRROR_ENV
        ))
    })?;
    Ok((bytes, url))
}

fn download(url: &str) -> Result<Vec<u8>, String> {
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(20)))
            .timeout_recv_response(Some(Duration::from_secs(120)))
            .user_agent(concat!("repro-upstream/", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    let mut body = agent
        .get(url)
        .call()
        .map_err(|e| e.to_string())?
        .into_body();
    let mut bytes = Vec::new();
    body.as_reader()
        .take(1 << 30)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Whether an extracted path (top folder stripped) belongs to the upstream: everything, or,
/// with a subfolder, the files under it and those at the root (licence, README), which is what
/// the mirror's archive holds.
fn kept(upstream: &Upstream, path: &str) -> bool {
    upstream.subfolder.is_empty()
        || !path.contains('/')
        || path.starts_with(&format!("{}/", upstream.subfolder.trim_end_matches('/')))
}

/// Extracts the gzipped tar `bytes` into `dest` (created; must not exist), stripping the
/// archive's top folder and keeping what [`kept`] keeps. Links, devices and paths leaving the
/// folder are refused.
pub fn extract(upstream: &Upstream, bytes: &[u8], dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let entries = archive
        .entries()
        .map_err(|e| format!("not a tar.gz: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("corrupt archive: {e}"))?;
        let path = entry
            .path()
            .map_err(|e| format!("corrupt archive: {e}"))?
            .into_owned();
        let mut parts = path.components();
        parts.next();
        let inner: PathBuf = parts.collect();
        if inner.as_os_str().is_empty() {
            continue;
        }
        if inner
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(format!("archive path {} leaves its folder", path.display()));
        }
        let text = inner.to_string_lossy().to_string();
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        if !kind.is_file() {
            return Err(format!("archive entry {text} is not a regular file"));
        }
        if !kept(upstream, &text) {
            continue;
        }
        let target = dest.join(&inner);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        entry
            .unpack(&target)
            .map_err(|e| format!("cannot extract {text}: {e}"))?;
    }
    Ok(())
}

/// The digest of the files under `root`: sha256 of the lines `"<sha256>  <path>\n"` sorted by
/// path (bytes), as `sha256sum` prints them (`find . -type f | sort | xargs sha256sum`).
pub fn files_sha256(root: &Path) -> Result<String, String> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| e.to_string())?;
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .map_err(|e| e.to_string())?
                    .to_string_lossy()
                    .to_string();
                files.push((rel, path));
            }
        }
    }
    files.sort();
    let mut text = String::new();
    for (rel, path) in files {
        let digest =
            crate::keys::file_sha256(&path).map_err(|e| format!("{}: {e:#}", path.display()))?;
        text.push_str(&format!("{digest}  {rel}\n"));
    }
    Ok(crate::keys::sha256_hex(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tarball(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        for (path, content) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(content.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, path, *content).unwrap();
        }
        builder.into_inner().unwrap().finish().unwrap()
    }

    fn upstream(subfolder: &str, bytes: &[u8]) -> Upstream {
        let mut u = super::super::find("tess19").unwrap().clone();
        u.subfolder = subfolder.into();
        u.archive = "t.tar.gz".into();
        u.sha256 = crate::keys::sha256_hex(bytes);
        u
    }

    #[test]
    fn extraction_strips_the_top_folder_keeps_the_subfolder_and_digests_like_sha256sum() {
        let bytes = tarball(&[
            ("top/LICENSE", b"licence"),
            ("top/IK/IK_OGD/a.cpp", b"int main(){}"),
            ("top/IK/other/b.cpp", b"other"),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let u = upstream("IK/IK_OGD", &bytes);
        extract(&u, &bytes, &dir.path().join("x")).unwrap();
        assert!(dir.path().join("x/LICENSE").is_file());
        assert!(dir.path().join("x/IK/IK_OGD/a.cpp").is_file());
        assert!(!dir.path().join("x/IK/other").exists());
        // The digest of `sha256sum` lines, sorted by path.
        let lines = format!(
            "{}  IK/IK_OGD/a.cpp\n{}  LICENSE\n",
            crate::keys::sha256_hex(b"int main(){}"),
            crate::keys::sha256_hex(b"licence")
        );
        assert_eq!(
            files_sha256(&dir.path().join("x")).unwrap(),
            crate::keys::sha256_hex(lines.as_bytes())
        );
    }

    #[test]
    fn a_tampered_or_missing_archive_says_so() {
        let bytes = tarball(&[("top/a", b"a")]);
        let dir = tempfile::tempdir().unwrap();
        let mut u = upstream("", &bytes);
        let settings = Settings {
            mirrors: vec![dir.path().to_path_buf()],
            cache: dir.path().join("cache"),
            download: false,
            timeout_seconds: 10.0,
        };
        let missing = archive(&u, &settings).unwrap_err();
        assert!(missing.reason.contains("in no mirror folder"), "{missing}");
        std::fs::write(dir.path().join("t.tar.gz"), &bytes).unwrap();
        assert_eq!(archive(&u, &settings).unwrap().0, bytes);
        u.sha256 = "0".repeat(64);
        let tampered = archive(&u, &settings).unwrap_err();
        assert!(tampered.reason.contains("tampered"), "{tampered}");
    }

    #[test]
    fn paths_leaving_the_folder_are_refused() {
        // tar::Builder refuses `..` itself: write the name into the header by hand.
        let mut header = tar::Header::new_gnu();
        header.set_size(1);
        header.set_mode(0o644);
        header.as_gnu_mut().unwrap().name[..12].copy_from_slice(b"top/../../ev");
        header.set_cksum();
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        builder.append(&header, &b"x"[..]).unwrap();
        let bytes = builder.into_inner().unwrap().finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let err = extract(&upstream("", &bytes), &bytes, &dir.path().join("x")).unwrap_err();
        assert!(err.contains("leaves its folder"), "{err}");
    }
}
