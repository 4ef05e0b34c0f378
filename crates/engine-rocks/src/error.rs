//! The one place where RocksDB errors become engine errors.

use engine::Error;
use rocksdb::ErrorKind;

/// Converts a RocksDB error, keeping I/O failures, corruption and bad arguments distinct.
pub(crate) fn convert(error: rocksdb::Error) -> Error {
    let kind = error.kind();
    let message = error.into_string();
    match kind {
        ErrorKind::IOError => Error::Io(message),
        ErrorKind::Corruption => Error::Corruption(message),
        ErrorKind::InvalidArgument | ErrorKind::NotSupported => Error::InvalidArgument(message),
        _ => Error::Engine(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opening_a_missing_database_without_create_is_invalid_argument() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut opts = rocksdb::Options::default();
        opts.create_if_missing(false);
        let Err(error) = rocksdb::DB::open(&opts, dir.path().join("missing")) else {
            panic!("opening a missing database must fail");
        };
        assert!(
            matches!(convert(error), Error::InvalidArgument(_)),
            "missing database"
        );
    }
}
