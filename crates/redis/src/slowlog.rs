//! The slow log (SLOWLOG GET, LEN, RESET): the last commands slower than
//! `slowlog-log-slower-than` microseconds.

/// Recorded slow commands (filled in by the SLOWLOG change).
#[derive(Debug, Default)]
pub struct SlowLog {}
