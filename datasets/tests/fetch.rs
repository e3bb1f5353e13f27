//! `fetch` against a tiny HTTP/1.1 server on 127.0.0.1 started by the test.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use flate2::write::GzEncoder;
use flate2::Compression;

use datasets::digest::sha256_bytes;
use datasets::{
    fetch, fetch_from, is_gzip, read_maybe_gz, DataDirs, DatasetError, FetchAction, Match, Registry,
};

/// Serves `routes` (path -> body) over HTTP/1.1, one request per connection, 404 otherwise.
/// Returns the base url and a request counter.
fn serve(routes: HashMap<String, Vec<u8>>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            counter.fetch_add(1, Ordering::SeqCst);
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" || h == "\n" {
                    break;
                }
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or("/");
            let (status, body) = match routes.get(path) {
                Some(b) => ("200 OK", b.clone()),
                None => ("404 Not Found", b"not found".to_vec()),
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
            let _ = stream.flush();
        }
    });
    (base, hits)
}

fn gzip(data: &[u8], level: u32) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::new(level));
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

const CONTENT: &[u8] = b"-1 3:1 11:1\n+1 2:0.5 4:0.0\n";

/// A one-dataset registry whose file `tiny/data.gz` has the digests of `gzip(CONTENT, 9)`.
fn tiny_registry(url: Option<&str>) -> Registry {
    let url = url.map(|u| format!("url = \"{u}\"\n")).unwrap_or_default();
    let text = format!(
        r#"
[[dataset]]
name = "tiny"
description = "test"
papers = []
format = "svmlight_gz"
upstream = "made up in the test; ask the test author"

[[dataset.file]]
role = "train"
path = "tiny/data.gz"
sha256 = "{}"
content_sha256 = "{}"
{url}"#,
        sha256_bytes(&gzip(CONTENT, 9)),
        sha256_bytes(CONTENT)
    );
    Registry::parse(&text).unwrap()
}

fn cache_dirs() -> (tempfile::TempDir, DataDirs) {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = DataDirs::custom(vec![], tmp.path().join("cache"));
    (tmp, dirs)
}

#[test]
fn good_uncompressed_body_is_gzipped_and_lands_in_cache() {
    let (base, _) = serve(HashMap::from([(
        "/files/data".to_string(),
        CONTENT.to_vec(),
    )]));
    let reg = tiny_registry(Some("https://upstream.invalid/files/data"));
    let ds = reg.get("tiny").unwrap();
    let (_tmp, dirs) = cache_dirs();

    let got = fetch_from(ds, &dirs, Some(&base)).unwrap();
    assert_eq!(got.len(), 1);
    let dest = dirs.cache_dir().join("tiny/data.gz");
    assert_eq!(got[0].path, dest);
    assert_eq!(got[0].matched, Match::Content);
    assert_eq!(
        got[0].action,
        FetchAction::Downloaded {
            url: format!("{base}/files/data"),
            gzipped_locally: true
        }
    );
    assert!(is_gzip(&dest).unwrap());
    assert_eq!(read_maybe_gz(&dest).unwrap(), CONTENT);
    assert_eq!(common::files_under(dirs.cache_dir()), vec![dest.clone()]);
    // And locate now finds it.
    let located = dirs.locate(ds).unwrap();
    assert_eq!(located.path("train").unwrap(), dest);
}

#[test]
fn byte_identical_gz_body_matches_exactly_and_second_fetch_is_a_no_op() {
    let (base, hits) = serve(HashMap::from([(
        "/d/data.gz".to_string(),
        gzip(CONTENT, 9),
    )]));
    let reg = tiny_registry(Some("http://upstream.invalid/d/data.gz"));
    let ds = reg.get("tiny").unwrap();
    let (_tmp, dirs) = cache_dirs();

    let got = fetch_from(ds, &dirs, Some(&base)).unwrap();
    assert_eq!(got[0].matched, Match::Exact);
    assert!(matches!(
        got[0].action,
        FetchAction::Downloaded {
            gzipped_locally: false,
            ..
        }
    ));
    let before = hits.load(Ordering::SeqCst);
    let again = fetch_from(ds, &dirs, Some(&base)).unwrap();
    assert_eq!(again[0].action, FetchAction::AlreadyPresent);
    assert_eq!(hits.load(Ordering::SeqCst), before, "no second request");
}

#[test]
fn recompressed_body_is_accepted_via_content_sha256() {
    let other = gzip(CONTENT, 1);
    assert_ne!(sha256_bytes(&other), sha256_bytes(&gzip(CONTENT, 9)));
    let (base, _) = serve(HashMap::from([("/d/data.gz".to_string(), other.clone())]));
    let reg = tiny_registry(Some("http://upstream.invalid/d/data.gz"));
    let ds = reg.get("tiny").unwrap();
    let (_tmp, dirs) = cache_dirs();

    let got = fetch_from(ds, &dirs, Some(&base)).unwrap();
    assert_eq!(got[0].matched, Match::Content);
    // Kept as downloaded (not re-compressed).
    assert_eq!(std::fs::read(&got[0].path).unwrap(), other);
}

#[test]
fn bad_body_is_rejected_and_nothing_is_left_behind() {
    let (base, _) = serve(HashMap::from([(
        "/d/data.gz".to_string(),
        b"-1 3:1 11:1\n+1 2:0.5 4:9.9\n".to_vec(),
    )]));
    let reg = tiny_registry(Some("http://upstream.invalid/d/data.gz"));
    let ds = reg.get("tiny").unwrap();
    let (_tmp, dirs) = cache_dirs();

    let err = fetch_from(ds, &dirs, Some(&base)).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, DatasetError::DigestMismatch { .. }), "{msg}");
    assert!(msg.contains(&format!("{base}/d/data.gz")), "{msg}");
    assert!(msg.contains(&sha256_bytes(CONTENT)), "{msg}");
    assert_eq!(
        common::files_under(dirs.cache_dir()),
        Vec::<std::path::PathBuf>::new()
    );
    assert!(matches!(dirs.locate(ds), Err(DatasetError::Missing { .. })));
}

#[test]
fn http_error_is_a_download_error_and_leaves_nothing() {
    let (base, _) = serve(HashMap::new());
    let reg = tiny_registry(Some("http://upstream.invalid/d/data.gz"));
    let ds = reg.get("tiny").unwrap();
    let (_tmp, dirs) = cache_dirs();

    let err = fetch_from(ds, &dirs, Some(&base)).unwrap_err();
    assert!(matches!(err, DatasetError::Download { .. }), "{err}");
    assert!(err.to_string().contains("404"), "{err}");
    assert!(common::files_under(dirs.cache_dir()).is_empty());
}

#[test]
fn dataset_without_url_explains_how_to_get_it() {
    let reg = tiny_registry(None);
    let ds = reg.get("tiny").unwrap();
    let (_tmp, dirs) = cache_dirs();
    let err = fetch_from(ds, &dirs, None).unwrap_err();
    assert!(matches!(err, DatasetError::NoUrl { .. }), "{err}");
    assert!(err.to_string().contains("ask the test author"), "{err}");
}

#[test]
fn fetch_honours_repro_fetch_base() {
    // The only test in this binary that reads or sets REPRO_FETCH_BASE.
    let (base, _) = serve(HashMap::from([(
        "/files/data".to_string(),
        CONTENT.to_vec(),
    )]));
    let reg = tiny_registry(Some("https://upstream.invalid/files/data"));
    let ds = reg.get("tiny").unwrap();
    let (_tmp, dirs) = cache_dirs();
    std::env::set_var(datasets::FETCH_BASE_ENV, &base);
    let got = fetch(ds, &dirs);
    std::env::remove_var(datasets::FETCH_BASE_ENV);
    assert_eq!(got.unwrap()[0].matched, Match::Content);
}

#[test]
fn real_registry_entries_fetch_from_a_mirror() {
    // a9a is served uncompressed upstream; MNIST byte-identical. Mirror both locally from the
    // real files and check that the embedded registry accepts what fetch produces.
    let Some(shared) = common::shared_dir("real_registry_entries_fetch_from_a_mirror") else {
        return;
    };
    let mut routes = HashMap::new();
    let lib = "/~cjlin/libsvmtools/datasets/binary";
    for (name, file) in [("a9a", "a9a.gz"), ("a9a.t", "a9a.t.gz")] {
        let raw = read_maybe_gz(&shared.join("libsvm").join(file)).unwrap();
        routes.insert(format!("{lib}/{name}"), raw);
    }
    for file in ["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"] {
        let bytes = std::fs::read(shared.join("mnist").join(file)).unwrap();
        routes.insert(format!("/exdb/mnist/{file}"), bytes);
    }
    let (base, _) = serve(routes);
    let (_tmp, dirs) = cache_dirs();
    let reg = Registry::embedded().unwrap();

    let got = fetch_from(reg.get("a9a").unwrap(), &dirs, Some(&base)).unwrap();
    assert!(got.iter().all(|f| f.matched == Match::Content));
    let got = fetch_from(reg.get("mnist_test").unwrap(), &dirs, Some(&base)).unwrap();
    assert!(got.iter().all(|f| f.matched == Match::Exact));
    assert_eq!(common::files_under(dirs.cache_dir()).len(), 4);
    let m = datasets::load(&dirs, "mnist_test").unwrap();
    assert_eq!(m.y.len(), 10000);
}
