//! A small storage-engine interface for DocDB, and an in-memory implementation.
//!
//! DocDB stores each document as many key/value pairs in a sorted store. This crate is the
//! whole interface between DocDB and that store:
//!
//! - [`Engine`]: point reads, bounded bidirectional iterators ([`EngineIterator`]),
//!   consistent snapshots ([`Snapshot`]), atomic [`WriteBatch`]es, `flush`, a full manual
//!   compaction ([`Engine::compact_all`]) and statistics. Reads are shared with snapshots
//!   through [`KvRead`], so read-path code can be generic over "live" and "as of a snapshot".
//! - A compaction-filter hook ([`CompactionFilterFactory`], [`CompactionFilter`],
//!   [`CompactionDecision`]), given to a backend when it is opened, through which DocDB's
//!   garbage collection drops or rewrites pairs while they are compacted. See
//!   [`compaction`] for the contract, in particular why a computed
//!   [`CompactionDecision::Replace`] is best effort.
//! - [`MemEngine`]: a multi-version `BTreeMap` engine for fast tests.
//! - [`Layered`]: an engine iterator with pending, not yet written pairs ([`Overlay`])
//!   merged in, for a writer that reads its own writes before it writes them.
//! - [`testing`]: a conformance suite every backend runs, so `MemEngine` and RocksDB are
//!   held to the same semantics.
//!
//! This crate must not depend on RocksDB, directly or transitively, nor on any other crate
//! of this workspace; the RocksDB backend lives in `engine-rocks`. Keep the traits small:
//! add a method only when a caller needs it and every backend can implement it.

#![deny(clippy::unwrap_used, clippy::indexing_slicing)]

mod batch;
pub mod compaction;
mod error;
mod iter;
mod mem;
mod overlay;
mod rng;
pub mod testing;
mod traits;

pub use batch::{Iter as WriteBatchIter, WriteBatch, WriteOp, WriteOptions};
pub use compaction::{
    CompactionContext, CompactionDecision, CompactionFilter, CompactionFilterFactory,
    CompactionOutcome,
};
pub use error::{Error, Result};
pub use iter::{EngineIterator, IterOptions, KeyPrefix, PrefixMode};
pub use mem::{MemEngine, MemIter, MemSnapshot};
pub use overlay::{Layered, Overlay};
pub use rng::Rng;
pub use traits::{Engine, EngineStatistics, KvRead, Snapshot};

#[cfg(test)]
mod tests {
    crate::conformance_tests!(|filter| Box::new(crate::MemEngine::with_compaction_filter(filter)));
}
