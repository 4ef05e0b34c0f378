//! The compaction-filter hook.
//!
//! A caller (DocDB's GC) registers a [`CompactionFilterFactory`] when it opens an engine.
//! For each compaction the engine asks the factory for a fresh [`CompactionFilter`] and
//! feeds it the compaction's key/value pairs **in ascending key order** (backends run
//! compactions without sub-compactions so that one filter sees one ordered stream). The
//! filter answers with a [`CompactionDecision`] per pair.
//!
//! # `Replace` is best effort
//!
//! The RocksDB binding can only swap a value for a `&'static [u8]`
//! ([`CompactionDecision::ReplaceWithStatic`], e.g. a one-byte tombstone, is always
//! honoured). A computed value ([`CompactionDecision::Replace`]) is honoured only when
//! [`CompactionContext::can_replace`] is true, which is the case in a manual full
//! compaction started by [`crate::Engine::compact_all`]. There the engine keeps the old
//! value during the compaction, records the new one, and once the compaction has finished
//! writes it back for the same key **if the key still holds the value the filter saw**. In
//! any other compaction a `Replace` is treated exactly like `Keep`.
//!
//! The contract for filters is therefore: *a `Replace` may silently become a `Keep`, and
//! the caller must be fine with that.* In particular the filter must not remove, in the
//! same or a later compaction, anything the replaced value depends on unless the
//! replacement was honoured.
//!
//! A compaction filter must not panic. `engine_rocks` catches a panic, logs it and keeps
//! every remaining pair of that compaction (fail safe); `MemEngine` lets it propagate.

/// What the engine tells a filter about the compaction it runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionContext {
    /// The compaction reads every file of the database, so nothing older lies below its
    /// output: deletion markers (tombstones) may be dropped.
    pub is_full: bool,
    /// The compaction was requested explicitly (by [`crate::Engine::compact_all`]) rather
    /// than scheduled by the engine.
    pub is_manual: bool,
    /// [`CompactionDecision::Replace`] will be honoured (see the module docs). True only
    /// inside [`crate::Engine::compact_all`].
    pub can_replace: bool,
}

/// A filter's verdict on one key/value pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactionDecision {
    /// Keep the pair unchanged.
    Keep,
    /// Drop the pair.
    Remove,
    /// Replace the value with a computed one. Best effort: honoured only when
    /// [`CompactionContext::can_replace`] is true, otherwise treated as `Keep`.
    Replace(Vec<u8>),
    /// Replace the value with a static one (such as a tombstone byte). Always honoured.
    ReplaceWithStatic(&'static [u8]),
}

/// A stateful filter for one compaction; sees that compaction's pairs in key order.
pub trait CompactionFilter: Send {
    /// Decides what happens to one pair.
    fn filter(&mut self, key: &[u8], value: &[u8]) -> CompactionDecision;
}

/// Creates a [`CompactionFilter`] for each compaction. Given to the engine when it is
/// opened; may be called concurrently from several background threads.
pub trait CompactionFilterFactory: Send + Sync + 'static {
    /// A new filter for a compaction described by `ctx`.
    fn create(&self, ctx: &CompactionContext) -> Box<dyn CompactionFilter>;
}

/// What [`crate::Engine::compact_all`] did.
///
/// Counts are per filter invocation. A backend may pass a key through the filter more than
/// once in one `compact_all` (RocksDB's level style compacts level by level), so the counts
/// can exceed the number of keys; `rewritten` counts distinct keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionOutcome {
    /// Pairs given to the filter.
    pub keys_seen: u64,
    /// `Keep` decisions.
    pub kept: u64,
    /// `Remove` decisions.
    pub removed: u64,
    /// `Replace` and `ReplaceWithStatic` decisions.
    pub replaced: u64,
    /// Computed (`Replace`) values actually written back.
    pub rewritten: u64,
}

impl CompactionOutcome {
    /// Counts one decision.
    pub fn count(&mut self, decision: &CompactionDecision) {
        self.keys_seen += 1;
        match decision {
            CompactionDecision::Keep => self.kept += 1,
            CompactionDecision::Remove => self.removed += 1,
            CompactionDecision::Replace(_) | CompactionDecision::ReplaceWithStatic(_) => {
                self.replaced += 1
            }
        }
    }
}
