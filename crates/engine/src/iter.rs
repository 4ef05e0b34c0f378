//! Cursors over sorted key/value pairs and their options.

use crate::{Error, Result};

/// A caller-defined key prefix, for backends with prefix bloom filters: each key of the
/// domain maps to a prefix of itself that the filters remember (see [`PrefixMode`]).
#[derive(Debug, Clone, Copy)]
pub struct KeyPrefix {
    /// Stable name; RocksDB records it in every file and ignores the filters of files
    /// written under another one.
    pub name: &'static str,
    /// The prefix of a key in the domain (a prefix of the key itself).
    pub transform: fn(&[u8]) -> &[u8],
    /// Whether a key has a prefix at all.
    pub in_domain: fn(&[u8]) -> bool,
}

/// How an iterator may use the backend's prefix extractor (RocksDB's `prefix_extractor`),
/// which maps each key of its domain to a prefix that bloom filters remember.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PrefixMode {
    /// Every seek sees every key (RocksDB's `total_order_seek`).
    #[default]
    Total,
    /// A seek whose target lies in the extractor's domain may skip the files and memtables
    /// whose bloom filters lack the target's prefix. After such a seek only the keys sharing
    /// that prefix are exact: the caller must stop reading at the first key without it and
    /// seek again. A target outside the domain sees every key.
    Seek,
    /// As [`PrefixMode::Seek`], and iteration also ends at the first key without the
    /// target's prefix (RocksDB's `prefix_same_as_start`). Results only agree across engines
    /// when (1) every seek target lies inside the prefix (`seek`, `seek_for_prev`, and
    /// `seek_to_first` whose target is `lower`; not `seek_to_last`, whose target is
    /// `upper`), and (2) `lower`/`upper` confine the range to that prefix.
    SameAsStart,
}

/// Options for opening an iterator.
///
/// Bounds are enforced by every engine in both directions: positioning operations clamp to
/// the range, and an iterator that would step outside it becomes invalid. A range with
/// `lower >= upper` is empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IterOptions {
    /// Inclusive lower bound: keys `< lower` are never returned.
    pub lower: Option<Vec<u8>>,
    /// Exclusive upper bound: keys `>= upper` are never returned.
    pub upper: Option<Vec<u8>>,
    /// How the iterator may use a prefix extractor configured on the backend (see
    /// [`PrefixMode`]); a backend without one ignores it. Default [`PrefixMode::Total`].
    pub prefix: PrefixMode,
    /// Whether blocks read by this iterator are added to the block cache. Turn off for large
    /// one-off scans (full dumps, GC passes) so they do not evict the working set.
    /// Default `true`.
    pub fill_cache: bool,
}

impl Default for IterOptions {
    fn default() -> Self {
        Self {
            lower: None,
            upper: None,
            prefix: PrefixMode::Total,
            fill_cache: true,
        }
    }
}

impl IterOptions {
    /// Unbounded iteration with default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the inclusive lower bound.
    pub fn lower(mut self, lower: impl Into<Vec<u8>>) -> Self {
        self.lower = Some(lower.into());
        self
    }

    /// Sets the exclusive upper bound.
    pub fn upper(mut self, upper: impl Into<Vec<u8>>) -> Self {
        self.upper = Some(upper.into());
        self
    }

    /// Sets `fill_cache`.
    pub fn fill_cache(mut self, fill_cache: bool) -> Self {
        self.fill_cache = fill_cache;
        self
    }

    /// Sets [`PrefixMode::SameAsStart`] when `on`, else [`PrefixMode::Total`].
    pub fn prefix_same_as_start(mut self, on: bool) -> Self {
        self.prefix = if on {
            PrefixMode::SameAsStart
        } else {
            PrefixMode::Total
        };
        self
    }

    /// Sets the prefix mode.
    pub fn prefix(mut self, mode: PrefixMode) -> Self {
        self.prefix = mode;
        self
    }

    /// True if `key` lies within `[lower, upper)`.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_none_or(|lower| key >= lower)
            && self.upper.as_deref().is_none_or(|upper| key < upper)
    }

    /// Fails unless `[lower, upper)` lies within these options' bounds: the rule for
    /// [`EngineIterator::reset`].
    pub fn check_within(&self, lower: Option<&[u8]>, upper: Option<&[u8]>) -> Result<()> {
        let lower_ok = match (self.lower.as_deref(), lower) {
            (None, _) => true,
            (Some(outer), Some(inner)) => inner >= outer,
            (Some(_), None) => false,
        };
        let upper_ok = match (self.upper.as_deref(), upper) {
            (None, _) => true,
            (Some(outer), Some(inner)) => inner <= outer,
            (Some(_), None) => false,
        };
        if lower_ok && upper_ok {
            Ok(())
        } else {
            Err(Error::InvalidArgument(
                "an iterator's reset bounds must lie within the bounds it was created with".into(),
            ))
        }
    }
}

/// A bidirectional cursor over key/value pairs in ascending key order, within the bounds
/// given by [`IterOptions`].
///
/// A new iterator is unpositioned (invalid) until one of the seek methods is called. The
/// view is consistent: it reflects the database as of the iterator's creation (or its
/// snapshot) and does not see later writes.
///
/// `next` and `prev` on an invalid iterator do nothing. `key` and `value` may only be
/// called while [`valid`](EngineIterator::valid) returns `Ok(true)`; otherwise they return
/// an empty slice.
pub trait EngineIterator {
    /// Positions at the first key `>= key` (clamped up to the lower bound).
    fn seek(&mut self, key: &[u8]);
    /// Positions at the last key `<= key` (clamped down to below the upper bound).
    fn seek_for_prev(&mut self, key: &[u8]);
    /// Positions at the first key within the bounds.
    fn seek_to_first(&mut self);
    /// Positions at the last key within the bounds.
    fn seek_to_last(&mut self);
    /// Moves to the next key; becomes invalid past the last key or the upper bound.
    fn next(&mut self);
    /// Moves to the previous key; becomes invalid before the first key or the lower bound.
    fn prev(&mut self);
    /// `Ok(true)` if positioned on a pair, `Ok(false)` if exhausted or unpositioned, and
    /// `Err` if the iterator hit an error (I/O, corruption) since the last seek.
    fn valid(&self) -> Result<bool>;
    /// The current key (empty if not valid).
    fn key(&self) -> &[u8];
    /// The current value (empty if not valid).
    fn value(&self) -> &[u8];
    /// Re-aims the iterator at `[lower, upper)`, unpositioned, and at the engine's latest
    /// committed state as a new iterator would see it (an iterator of a snapshot keeps its
    /// snapshot). The new bounds must lie within those the iterator was created with
    /// ([`IterOptions::check_within`]), or this fails and changes nothing.
    ///
    /// Many small reads (point lookups) should reuse one iterator this way: RocksDB then
    /// keeps its iterator tree instead of building and freeing one per read.
    fn reset(&mut self, lower: Option<&[u8]>, upper: Option<&[u8]>) -> Result<()>;
}
