//! Fuzzing of the file readers (proptest; `PROPTEST_CASES` sets the number of inputs, 256 by
//! default): arbitrary and near-valid bytes give a value or an error, never a panic or an
//! allocation the input does not justify.

use std::path::Path;

use datasets::loaders::{parse_csv, parse_idx, parse_svmlight, parse_svmlight_sparse};
use datasets::CsvOptions;
use proptest::prelude::*;

fn idx_bytes() -> impl Strategy<Value = Vec<u8>> {
    // A valid-looking header (magic, type, dimensions) followed by too few or enough bytes.
    (
        prop::sample::select(vec![0x08u8, 0x09, 0x0B, 0x0C, 0x0D, 0x0E, 0x07]),
        1u8..5,
        prop::collection::vec(prop_oneof![0u32..6, Just(u32::MAX), any::<u32>()], 4),
        prop::collection::vec(any::<u8>(), 0..200),
    )
        .prop_map(|(kind, ndims, dims, data)| {
            let mut bytes = vec![0, 0, kind, ndims];
            for d in dims.iter().take(ndims as usize) {
                bytes.extend(d.to_be_bytes());
            }
            bytes.extend(data);
            bytes
        })
}

proptest! {
    #[test]
    fn csv_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..400), header: bool) {
        let _ = parse_csv(&bytes[..], Path::new("fuzz.csv"), &CsvOptions::with_header(header));
    }

    #[test]
    fn csv_like_text_never_panics(text in "[0-9a-zA-Z,.\"\n\r +eE-]{0,300}", header: bool) {
        let _ = parse_csv(text.as_bytes(), Path::new("fuzz.csv"), &CsvOptions::with_header(header));
    }

    #[test]
    fn svmlight_never_panics(
        text in "[-+0-9.:eEqid#a-z \t\n]{0,300}",
        n_features in prop::option::of(0usize..300),
    ) {
        let _ = parse_svmlight(text.as_bytes(), Path::new("fuzz.svm"), n_features);
        let _ = parse_svmlight_sparse(text.as_bytes(), Path::new("fuzz.svm"), n_features);
    }

    #[test]
    fn svmlight_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_svmlight_sparse(&bytes[..], Path::new("fuzz.svm"), None);
    }

    #[test]
    fn idx_never_panics(bytes in prop_oneof![prop::collection::vec(any::<u8>(), 0..64), idx_bytes()]) {
        let _ = parse_idx(&bytes, Path::new("fuzz.idx"));
    }
}
