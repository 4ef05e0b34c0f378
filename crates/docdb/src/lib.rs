//! Documents over a key/value engine: DocDB's write batches, point-in-time reads, tombstones,
//! TTL and compaction GC (format.md §4, §5, §7, §8, §10, §11).
//!
//! A document is stored as many key/value pairs, one per path and version: the key is the
//! encoded path plus the hybrid time of the write, the value a primitive, an init marker or a
//! tombstone. [`DocDb`] writes batches atomically at one hybrid time, reads any document as of
//! any hybrid time, and plugs [`gc::GcFilter`] into the engine's compactions.
//!
//! This crate depends on the `engine` trait only, never on RocksDB.

pub mod clock;
pub mod db;
pub mod dead_spans;
pub mod error;
pub mod expiration;
pub mod gc;
pub mod reader;
pub mod recent_writes;
pub mod repack;
mod root_cache;
pub mod saved_spans;
pub mod staged;
pub mod subdoc;
pub mod sweep;
pub mod unflushed;
pub mod upkeep;
pub mod write_batch;
mod written_roots;

pub use db::{
    DEFAULT_ROOT_CACHE_BYTES, DOC_KEY_PREFIX, DocDb, DocDbOptions, DocView, FIRST_RECORD_BYTE,
    GcPolicy, PATH_PREFIX, ScanOptions, SpanWalk, doc_key_prefix, for_each_record, is_doc_record,
    is_versioned_record, sub_doc_key_prefix,
};
pub use dead_spans::{DeadSpanStats, SpanSet};
pub use error::{Error, Result};
pub use reader::{ChildRange, DeletedDocs, ReadOptions, ReadStats, VisibleRecord};
pub use saved_spans::SavedSpans;
pub use staged::Staged;
pub use subdoc::{ObjectKind, SubDocument};
pub use sweep::{Probed, SweepStats};
pub use upkeep::{Upkeep, UpkeepOptions, UpkeepRound, UpkeepStats};
pub use write_batch::{DocLiteral, DocWriteBatch, InitMarkerBehavior};
