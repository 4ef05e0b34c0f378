//! The crate's error type: everything a shell command can fail with.

use crate::parser::ParseError;

/// Why a shell command failed. `Display` is the `<reason>` of the `error: <reason>` line.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The line is not valid shell input.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The document layer refused or failed (missing list element, user timestamp with
    /// required init markers, corruption, engine failure, …).
    #[error(transparent)]
    DocDb(#[from] docdb::Error),
    /// The storage engine could not be opened.
    #[error("engine: {0}")]
    Engine(#[from] engine::Error),
    /// Reading input, writing output or creating a temporary directory failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;
