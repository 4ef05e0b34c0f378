//! The RocksDB backend of the [`engine`] storage trait.
//!
//! This is the only crate of the workspace that depends on `rocksdb`. It provides
//! [`RocksEngine`], opened from one [`RocksConfig`] with documented defaults, and it:
//!
//! - converts `rocksdb::Error` into [`engine::Error`] in exactly one place;
//! - adapts an [`engine::CompactionFilterFactory`] to RocksDB's compaction filters.
//!   RocksDB's Rust binding can only swap a value for a `&'static [u8]`, so
//!   [`engine::CompactionDecision::ReplaceWithStatic`] becomes RocksDB's change decision,
//!   while a computed [`engine::CompactionDecision::Replace`] is kept during the compaction
//!   and, only inside [`engine::Engine::compact_all`], written back afterwards as an ordinary
//!   put of the same key, provided the key still holds the value the filter saw. In
//!   automatic compactions `Replace` is a keep, and filters are told so through
//!   [`engine::CompactionContext::can_replace`];
//! - runs compactions with one sub-compaction, so a filter sees one ordered key stream;
//! - keeps the write-ahead log on, always.
//!
//! A panic in a compaction filter would abort the process (it unwinds into C++), so the
//! adapter catches it, logs it with `tracing`, and keeps every remaining pair of that
//! compaction.
//!
//! The same conformance suite as [`engine::MemEngine`] runs against this engine
//! (`tests/conformance.rs`).

#![deny(clippy::unwrap_used, clippy::indexing_slicing)]

mod config;
mod error;
mod filter;
mod rocks;

pub use config::{
    BlockCache, CompactionStyle, Compression, MIN_HUGE_PAGES_PER_MEMTABLE, PrefixExtractor,
    RocksConfig,
};
pub use rocks::{RocksEngine, RocksIter, RocksSnapshot};
