//! The crate's error type.

/// Errors of the table layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller asked for something the schema or the semantics do not allow.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A namespace, table or column does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// A namespace, table or column (or a YSQL row) already exists.
    #[error("already exists: {0}")]
    AlreadyExists(String),
    /// Stored bytes (rows or catalog records) could not be decoded.
    #[error("corruption: {0}")]
    Corruption(String),
    /// The document layer or the engine failed.
    #[error(transparent)]
    Storage(#[from] docdb::Error),
}

impl From<dockv::Error> for Error {
    fn from(e: dockv::Error) -> Self {
        match e {
            dockv::Error::Corruption(m) => Error::Corruption(m),
            dockv::Error::InvalidArgument(m) => Error::InvalidArgument(m),
        }
    }
}

impl From<engine::Error> for Error {
    fn from(e: engine::Error) -> Self {
        Error::Storage(docdb::Error::Engine(e))
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Builds an [`Error::InvalidArgument`] from format arguments.
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::error::Error::InvalidArgument(format!($($arg)*)) };
}
pub(crate) use invalid;

/// Builds an [`Error::Corruption`] from format arguments.
macro_rules! corruption {
    ($($arg:tt)*) => { $crate::error::Error::Corruption(format!($($arg)*)) };
}
pub(crate) use corruption;
