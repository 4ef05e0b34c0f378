//! The engine's error type.

/// Errors returned by a storage engine.
///
/// Backends map their own errors onto these variants in one place (for RocksDB:
/// `engine_rocks`'s error conversion), keeping I/O failures, detected corruption and bad
/// arguments distinct so callers can react differently to each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An I/O failure (disk full, permission denied, file vanished, ...).
    #[error("I/O error: {0}")]
    Io(String),
    /// Stored data failed a checksum or could not be parsed.
    #[error("corruption: {0}")]
    Corruption(String),
    /// The caller passed an argument the engine cannot accept.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Any other backend-specific failure (busy, shutdown in progress, ...).
    #[error("engine error: {0}")]
    Engine(String),
}

/// `Result` with the engine's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
