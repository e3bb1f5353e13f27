//! File-format readers. All of them read gzip transparently (detected by magic bytes).

pub mod csv;
pub mod idx;
pub mod svmlight;

pub use self::csv::{load_xy, parse_csv, read_csv, read_csv_text, CsvOptions, Table, TextTable};
pub use self::idx::{parse_idx, read_idx, Idx};
pub use self::svmlight::{
    parse_svmlight, parse_svmlight_sparse, read_svmlight, read_svmlight_sparse,
};
