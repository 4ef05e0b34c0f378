//! A `write_now`'s pairs handed to another thread to land, while the next `write_now` runs
//! (see [`crate::DocDb::write_now_staged`]).
//!
//! A server that gathers many connections' commands into one `write_now` spends much of it
//! in the engine's write: the log append and the memtable insert. Staging lets that write
//! run on a second thread while the writer runs the next group's commands, which read the
//! staged pairs through their overlay as if they had landed.
//!
//! What keeps that sound:
//! - At most one write is staged. A `write_now` that ends, staged or not, first waits for
//!   the staged one to land, so writes land in the order of their times.
//! - Until it lands, reads at or after its time wait ([`crate::DocDb::safe_time`]), as for
//!   the write in flight.
//! - A `write_now` that began over a staged write that then failed to land read what was
//!   never stored: it fails too, and nothing it read is kept in the root cache.

use std::ops::Range;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use dockv::HybridTime;
use engine::{Engine, Overlay, WriteBatch, WriteOp};

use crate::db::DocDb;
use crate::error::Result;

/// The pairs of a staged `write_now`, shared by its landing and the `write_now` after it.
pub(crate) struct StagedWrite {
    /// Puts only, in commit order.
    pub(crate) pairs: WriteBatch,
    pub(crate) ht: HybridTime,
    /// Its batches' numbers in the log of recent writes.
    pub(crate) log: Range<u64>,
    /// Its pairs by key, made for the first `write_now` that reads over them.
    index: OnceLock<Arc<Overlay>>,
    /// Set if it failed to land, before the root cache forgets what it learned.
    failed: AtomicBool,
}

impl StagedWrite {
    pub(crate) fn new(pairs: WriteBatch, ht: HybridTime, log: Range<u64>) -> Self {
        StagedWrite {
            pairs,
            ht,
            log,
            index: OnceLock::new(),
            failed: AtomicBool::new(false),
        }
    }

    /// Its pairs by key.
    pub(crate) fn overlay(&self) -> Arc<Overlay> {
        self.index
            .get_or_init(|| {
                let puts = self.pairs.iter().filter_map(|op| match op {
                    WriteOp::Put(key, value) => Some((key.to_vec(), value.to_vec())),
                    WriteOp::Delete(_) => None,
                });
                Arc::new(puts.collect())
            })
            .clone()
    }

    pub(crate) fn mark_failed(&self) {
        self.failed.store(true, Ordering::SeqCst);
    }

    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }
}

/// A staged write to land: [`Self::land`] it on any thread. Dropped without landing (a
/// panic on the landing thread), it counts as failed, so nothing waits for it for ever.
#[must_use = "a staged write holds back reads and writes until it lands"]
pub struct Staged<'a, E: Engine> {
    db: &'a DocDb<E>,
    write: Option<Arc<StagedWrite>>,
}

impl<'a, E: Engine> Staged<'a, E> {
    pub(crate) fn new(db: &'a DocDb<E>, write: Arc<StagedWrite>) -> Self {
        Staged {
            db,
            write: Some(write),
        }
    }

    /// The hybrid time it writes at.
    pub fn time(&self) -> HybridTime {
        self.write.as_ref().map_or(HybridTime::MIN, |w| w.ht)
    }

    /// Writes the pairs to the engine in one write; if that fails, the `write_now` that
    /// read over them fails too.
    pub fn land(mut self) -> Result<()> {
        match self.write.take() {
            Some(write) => self.db.land_staged(&write),
            None => Ok(()),
        }
    }
}

impl<E: Engine> Drop for Staged<'_, E> {
    fn drop(&mut self) {
        if let Some(write) = self.write.take() {
            let dropped = engine::Error::Engine("a staged write was dropped unlanded".into());
            self.db.finish_staged(&write, Err(dropped)).ok();
        }
    }
}
