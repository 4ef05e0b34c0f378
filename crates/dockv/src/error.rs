//! The crate's error type. Decoders return these instead of panicking on bad bytes.

/// What went wrong while encoding or decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Stored or received bytes do not follow the format; the text names what was wrong.
    #[error("Corruption: {0}")]
    Corruption(String),
    /// A caller passed a value that cannot be encoded.
    #[error("Invalid argument: {0}")]
    InvalidArgument(String),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Builds an [`Error::Corruption`] from format arguments.
macro_rules! corruption {
    ($($arg:tt)*) => { $crate::error::Error::Corruption(format!($($arg)*)) };
}
pub(crate) use corruption;

/// Splits `n` bytes off the front of `input`, or reports what was being read.
pub(crate) fn take<'a>(input: &'a [u8], n: usize, what: &str) -> Result<(&'a [u8], &'a [u8])> {
    if input.len() < n {
        return Err(corruption!(
            "{what}: need {n} bytes, only {} left",
            input.len()
        ));
    }
    Ok(input.split_at(n))
}

/// Reads a fixed-size array off the front of `input`.
pub(crate) fn take_array<'a, const N: usize>(
    input: &'a [u8],
    what: &str,
) -> Result<([u8; N], &'a [u8])> {
    let (head, rest) = take(input, N, what)?;
    let mut out = [0u8; N];
    out.copy_from_slice(head);
    Ok((out, rest))
}
