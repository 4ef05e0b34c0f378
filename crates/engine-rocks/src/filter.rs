//! Adapts an [`engine::CompactionFilterFactory`] to RocksDB's compaction-filter API.
//!
//! RocksDB's Rust binding can keep, remove, or change a value to a `&'static [u8]`.
//! [`CompactionDecision::ReplaceWithStatic`] maps to that change. A computed
//! [`CompactionDecision::Replace`] is returned to RocksDB as *keep*; when the compaction is
//! part of [`RocksEngine::compact_all`](crate::RocksEngine) the adapter records
//! `(key, value seen, new value)` in [`ManualCompaction`], and `compact_all` writes the new
//! value back after the compaction if the key still holds the value seen. In any other
//! compaction a `Replace` is just a keep (see `engine::compaction` for the contract).

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use engine::CompactionOutcome;
use engine::{CompactionContext, CompactionDecision, CompactionFilter, CompactionFilterFactory};
use rocksdb::CompactionDecision as RocksDecision;
use rocksdb::compaction_filter_factory::CompactionFilterContext;

/// A computed replacement: the value the filter saw and the one to write instead.
#[derive(Debug)]
pub(crate) struct Replacement {
    pub(crate) seen: Vec<u8>,
    pub(crate) new: Vec<u8>,
}

/// What filters record during [`RocksEngine::compact_all`](crate::RocksEngine).
#[derive(Debug, Default)]
pub(crate) struct ManualRun {
    pub(crate) outcome: CompactionOutcome,
    /// The last `Replace` decision per key. A later non-`Replace` decision on the same key
    /// (in a later compaction of the same run) cancels it.
    pub(crate) replacements: BTreeMap<Vec<u8>, Replacement>,
}

/// State shared between the engine and its filters, for `compact_all`.
#[derive(Debug, Default)]
pub(crate) struct ManualCompaction {
    /// True while `compact_all` runs: manual compactions started now honour `Replace`.
    active: AtomicBool,
    run: Mutex<ManualRun>,
}

impl ManualCompaction {
    fn lock(&self) -> std::sync::MutexGuard<'_, ManualRun> {
        self.run.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts recording for a `compact_all`.
    pub(crate) fn begin(&self) {
        *self.lock() = ManualRun::default();
        self.active.store(true, Ordering::SeqCst);
    }

    /// Stops recording and returns what was recorded.
    pub(crate) fn finish(&self) -> ManualRun {
        self.active.store(false, Ordering::SeqCst);
        std::mem::take(&mut *self.lock())
    }

    fn record(&self, key: &[u8], seen: &[u8], decision: &CompactionDecision) {
        let mut run = self.lock();
        run.outcome.count(decision);
        match decision {
            CompactionDecision::Replace(new) => {
                run.replacements.insert(
                    key.to_vec(),
                    Replacement {
                        seen: seen.to_vec(),
                        new: new.clone(),
                    },
                );
            }
            _ => {
                if !run.replacements.is_empty() {
                    run.replacements.remove(key);
                }
            }
        }
    }
}

/// The factory RocksDB calls; wraps the caller's factory.
pub(crate) struct FactoryAdapter {
    pub(crate) inner: Arc<dyn CompactionFilterFactory>,
    pub(crate) manual: Arc<ManualCompaction>,
}

impl rocksdb::compaction_filter_factory::CompactionFilterFactory for FactoryAdapter {
    type Filter = FilterAdapter;

    fn create(&mut self, context: CompactionFilterContext) -> FilterAdapter {
        let in_compact_all =
            context.is_manual_compaction && self.manual.active.load(Ordering::SeqCst);
        let ctx = CompactionContext {
            is_full: context.is_full_compaction,
            is_manual: context.is_manual_compaction,
            can_replace: in_compact_all,
        };
        let inner = match catch_unwind(AssertUnwindSafe(|| self.inner.create(&ctx))) {
            Ok(filter) => Some(filter),
            Err(_) => {
                tracing::error!(
                    ?ctx,
                    "compaction filter factory panicked; this compaction keeps every pair"
                );
                None
            }
        };
        FilterAdapter {
            inner,
            manual: in_compact_all.then(|| Arc::clone(&self.manual)),
        }
    }

    fn name(&self) -> &CStr {
        c"engine_rocks.CompactionFilterFactory"
    }
}

/// The filter RocksDB calls for each pair of one compaction.
pub(crate) struct FilterAdapter {
    /// `None` after the caller's filter panicked: keep everything (fail safe).
    inner: Option<Box<dyn CompactionFilter>>,
    /// Set when this compaction is part of `compact_all`.
    manual: Option<Arc<ManualCompaction>>,
}

impl rocksdb::compaction_filter::CompactionFilter for FilterAdapter {
    fn filter(&mut self, _level: u32, key: &[u8], value: &[u8]) -> RocksDecision {
        let Some(inner) = self.inner.as_mut() else {
            return RocksDecision::Keep;
        };
        let decision = match catch_unwind(AssertUnwindSafe(|| inner.filter(key, value))) {
            Ok(decision) => decision,
            Err(_) => {
                tracing::error!(
                    "compaction filter panicked; keeping every remaining pair of this compaction"
                );
                self.inner = None;
                if let Some(manual) = &self.manual {
                    manual.record(key, value, &CompactionDecision::Keep);
                }
                return RocksDecision::Keep;
            }
        };
        if let Some(manual) = &self.manual {
            manual.record(key, value, &decision);
        }
        match decision {
            CompactionDecision::Keep | CompactionDecision::Replace(_) => RocksDecision::Keep,
            CompactionDecision::Remove => RocksDecision::Remove,
            CompactionDecision::ReplaceWithStatic(value) => RocksDecision::Change(value),
        }
    }

    fn name(&self) -> &CStr {
        c"engine_rocks.CompactionFilter"
    }
}
