//! Command errors, worded as Redis words them so that client libraries map them.

use crate::frame::Frame;

/// Why a command failed; becomes an error reply.
#[derive(Debug, thiserror::Error)]
pub enum CmdError {
    /// The key holds another type.
    #[error("WRONGTYPE Operation against a key holding the wrong kind of value")]
    WrongType,
    /// Options that do not parse.
    #[error("ERR syntax error")]
    Syntax,
    /// An argument or stored value that should be a 64-bit integer.
    #[error("ERR value is not an integer or out of range")]
    NotInteger,
    /// An argument or stored value that should be a float.
    #[error("ERR value is not a valid float")]
    NotFloat,
    /// Integer arithmetic that would overflow.
    #[error("ERR increment or decrement would overflow")]
    Overflow,
    /// Any other error; the text is the whole reply (`ERR ...`, `NOAUTH ...`).
    #[error("{0}")]
    Err(String),
    /// The storage layer failed.
    #[error("ERR storage error: {0}")]
    Storage(#[from] docdb::Error),
}

impl CmdError {
    /// An `ERR` error with `text`.
    pub fn err(text: impl std::fmt::Display) -> Self {
        CmdError::Err(format!("ERR {text}"))
    }

    /// The error reply.
    pub fn to_frame(&self) -> Frame {
        Frame::Error(self.to_string())
    }
}

/// A command's outcome.
pub type CmdResult<T> = Result<T, CmdError>;
