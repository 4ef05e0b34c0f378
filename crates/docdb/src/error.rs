//! The crate's error type.

/// Errors of the document layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Stored bytes could not be decoded.
    #[error("corruption: {0}")]
    Corruption(String),
    /// The caller asked for something impossible (bad path, missing list element, …).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The storage engine failed.
    #[error("engine: {0}")]
    Engine(#[from] engine::Error),
}

impl From<dockv::Error> for Error {
    fn from(e: dockv::Error) -> Self {
        match e {
            dockv::Error::Corruption(m) => Error::Corruption(m),
            dockv::Error::InvalidArgument(m) => Error::InvalidArgument(m),
        }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;
