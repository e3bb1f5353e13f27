//! Transparent gzip: detected by the magic bytes `1f 8b`, never by the file name.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

use crate::error::DatasetError;

/// The two bytes every gzip member starts with.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `bytes` start with the gzip magic.
pub fn is_gzip_bytes(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && bytes[..2] == GZIP_MAGIC
}

/// Whether the file at `path` starts with the gzip magic (an empty or one-byte file is not).
pub fn is_gzip(path: &Path) -> Result<bool, DatasetError> {
    let mut file = File::open(path).map_err(|e| DatasetError::io(path, e))?;
    let mut head = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(DatasetError::io(path, e)),
        }
    }
    Ok(is_gzip_bytes(&head[..got]))
}

/// Wraps `reader` in a gzip decoder when its first bytes are the gzip magic.
///
/// Concatenated gzip members are read as one stream (as `zcat` does).
pub fn maybe_gunzip<R: BufRead + 'static>(mut reader: R) -> io::Result<Box<dyn BufRead>> {
    let head = reader.fill_buf()?;
    if head.len() >= 2 || head.is_empty() {
        return Ok(if is_gzip_bytes(head) {
            Box::new(BufReader::new(MultiGzDecoder::new(reader)))
        } else {
            Box::new(reader)
        });
    }
    // A one-byte first chunk: take two bytes and put them back in front of the rest.
    let mut first = Vec::with_capacity(2);
    reader.by_ref().take(2).read_to_end(&mut first)?;
    let gz = is_gzip_bytes(&first);
    let chained = BufReader::new(io::Cursor::new(first).chain(reader));
    Ok(if gz {
        Box::new(BufReader::new(MultiGzDecoder::new(chained)))
    } else {
        Box::new(chained)
    })
}

/// Opens `path` for buffered reading, decompressing it when it is gzip.
pub fn open_maybe_gz(path: &Path) -> Result<Box<dyn BufRead>, DatasetError> {
    let file = File::open(path).map_err(|e| DatasetError::io(path, e))?;
    maybe_gunzip(BufReader::with_capacity(1 << 16, file)).map_err(|e| DatasetError::io(path, e))
}

/// Reads the whole (decompressed) content of `path`.
pub fn read_maybe_gz(path: &Path) -> Result<Vec<u8>, DatasetError> {
    let mut out = Vec::new();
    open_maybe_gz(path)?
        .read_to_end(&mut out)
        .map_err(|e| DatasetError::io(path, e))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn detects_by_magic_not_name() {
        let dir = tempfile::tempdir().unwrap();
        let plain_gz_name = dir.path().join("plain.gz");
        std::fs::write(&plain_gz_name, b"1,2\n").unwrap();
        let gz_csv_name = dir.path().join("packed.csv");
        std::fs::write(&gz_csv_name, gz(b"1,2\n")).unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();

        assert!(!is_gzip(&plain_gz_name).unwrap());
        assert!(is_gzip(&gz_csv_name).unwrap());
        assert!(!is_gzip(&empty).unwrap());
        assert_eq!(read_maybe_gz(&plain_gz_name).unwrap(), b"1,2\n");
        assert_eq!(read_maybe_gz(&gz_csv_name).unwrap(), b"1,2\n");
        assert_eq!(read_maybe_gz(&empty).unwrap(), b"");
        assert!(is_gzip_bytes(&[0x1f, 0x8b, 8]));
        assert!(!is_gzip_bytes(&[0x1f]));
    }

    #[test]
    fn single_byte_first_chunk() {
        // A reader whose first fill_buf returns one byte.
        struct OneThenRest(Vec<u8>, usize);
        impl Read for OneThenRest {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.1 >= self.0.len() {
                    return Ok(0);
                }
                let n = if self.1 == 0 {
                    1
                } else {
                    buf.len().min(self.0.len() - self.1)
                };
                buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
                self.1 += n;
                Ok(n)
            }
        }
        let packed = gz(b"hello");
        let mut r = maybe_gunzip(BufReader::new(OneThenRest(packed, 0))).unwrap();
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        assert_eq!(s, "hello");

        let mut r = maybe_gunzip(BufReader::new(OneThenRest(vec![0x1f, b'x'], 0))).unwrap();
        let mut v = Vec::new();
        r.read_to_end(&mut v).unwrap();
        assert_eq!(v, vec![0x1f, b'x']);
    }

    #[test]
    fn concatenated_members_are_read() {
        let mut both = gz(b"a\n");
        both.extend(gz(b"b\n"));
        let mut r = maybe_gunzip(io::Cursor::new(both)).unwrap();
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        assert_eq!(s, "a\nb\n");
    }
}
