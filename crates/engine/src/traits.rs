//! The engine traits.

use std::collections::BTreeMap;

use crate::{CompactionOutcome, EngineIterator, IterOptions, Result, WriteBatch, WriteOptions};

/// Reads from a consistent or live view: point lookups and bounded iterators.
///
/// Implemented by every [`Engine`] (reading the latest data) and every [`Snapshot`]
/// (reading the data as of the snapshot), so read-path code can be generic over both.
pub trait KvRead {
    /// The iterator type; borrows the reader.
    type Iter<'a>: EngineIterator + 'a
    where
        Self: 'a;

    /// The value stored under `key`, or `None` if absent.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// An unpositioned iterator over the pairs within `opts`' bounds. The iterator sees a
    /// consistent view as of its creation.
    fn iterator(&self, opts: IterOptions) -> Result<Self::Iter<'_>>;

    /// An iterator within `opts`' bounds, narrowed at once to `[lower, upper)` as
    /// [`EngineIterator::reset`] narrows one. An engine that keeps iterators for reuse
    /// hands out a kept one without moving it to the latest state twice.
    fn iterator_within(
        &self,
        opts: IterOptions,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Result<Self::Iter<'_>> {
        let mut iter = self.iterator(opts)?;
        iter.reset(lower, upper)?;
        Ok(iter)
    }
}

/// A consistent, read-only view of an engine at one point in time. Writes made after the
/// snapshot was taken are not visible through it. Dropping it releases the view.
pub trait Snapshot: KvRead + Send + Sync {}

/// Named counters and a human-readable report from an engine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineStatistics {
    /// Counters by name (for RocksDB: every ticker under its RocksDB name, e.g.
    /// `rocksdb.block.cache.hit`, plus a few DB properties).
    pub counters: BTreeMap<String, u64>,
    /// The backend's own statistics dump, verbatim (may be empty).
    pub text: String,
}

impl EngineStatistics {
    /// The counter called `name`, if the engine reports it.
    pub fn counter(&self, name: &str) -> Option<u64> {
        self.counters.get(name).copied()
    }
}

/// A sorted key/value store: the only storage interface DocDB uses.
///
/// Keys and values are arbitrary byte strings ordered bytewise. All methods take `&self`
/// and may be called from many threads. A compaction filter, if any, is supplied when the
/// engine is opened (see [`crate::compaction`]).
pub trait Engine: KvRead + Send + Sync + 'static {
    /// The snapshot type; borrows the engine.
    type Snapshot<'a>: Snapshot + 'a
    where
        Self: 'a;

    /// A consistent view of the current data.
    fn snapshot(&self) -> Self::Snapshot<'_>;

    /// Applies `batch` atomically: readers see all of it or none of it.
    fn write(&self, batch: &WriteBatch, opts: WriteOptions) -> Result<()>;

    /// Persists in-memory data (the memtable) to storage files. Durability of acknowledged
    /// writes does not depend on this (the write-ahead log provides it).
    fn flush(&self) -> Result<()>;

    /// Writes buffered write-ahead-log records to the log file and, with `sync`, syncs it:
    /// a group commit for writers that do not sync (or, with a manually flushed WAL, do not
    /// even write) each batch's log record themselves. A no-op where there is no log.
    fn flush_wal(&self, sync: bool) -> Result<()>;

    /// Flushes, then compacts the whole key range into the bottommost level, running the
    /// compaction filter (if one was configured) with
    /// [`CompactionContext::can_replace`](crate::CompactionContext::can_replace) set, and
    /// finally writes back honoured `Replace` decisions. Calls are serialised.
    fn compact_all(&self) -> Result<CompactionOutcome>;

    /// Engine statistics.
    fn statistics(&self) -> Result<EngineStatistics>;

    /// The number of the last operation written: each batch advances it by its number of
    /// operations, it never goes back, and it survives a reopen (RocksDB's sequence
    /// number). Equal numbers at two moments mean nothing was written in between.
    fn last_sequence(&self) -> u64;

    /// Releases what the engine keeps for reuse (such as iterators) if it went unused since
    /// the previous call, so an idle engine holds nothing it no longer needs. Long-running
    /// callers call it periodically. The default keeps nothing and does nothing.
    fn trim_idle(&self) {}
}
