//! `write_now`s whose pairs are handed to another thread to land while the next
//! `write_now` runs (see [`crate::DocDb::write_now_staged`]).
//!
//! A server that gathers many connections' commands into one `write_now` spends much of it
//! in the engine's write: the log append and the memtable insert. Staging lets that write
//! run on a second thread while the writer runs the next groups' commands, which read the
//! staged pairs through their overlay as if they had landed.
//!
//! What keeps that sound:
//! - Staged writes land in the order they were staged, which is the order of their times,
//!   and at most [`MAX_STAGED`] wait at once. A `write_now` that lands itself first waits
//!   for every staged one to land.
//! - Until a staged write lands, reads at or after its time wait
//!   ([`crate::DocDb::safe_time`]), as for the write in flight.
//! - A `write_now` that began over staged writes reads what they wrote. If one of them fails
//!   to land, it fails too, whether it lands itself or is staged (then it fails when its
//!   turn to land comes), and nothing it read is kept in the root cache.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use dockv::HybridTime;
use engine::{Engine, Overlay, WriteBatch, WriteOp};

use crate::db::DocDb;
use crate::error::{Error, Result};

/// Staged writes waiting to land at most: one landing while the next waits its turn, so
/// that the landing thread finds it ready without a round trip to the writer.
pub const MAX_STAGED: usize = 2;

/// `StageQueue::oldest_at` while no staged write waits (no hybrid time is 0).
const NONE_STAGED: u64 = 0;

/// Whether one of a write's earlier staged writes failed to land; shared so that a write
/// holds only the flags of those it read, not their pairs.
type FailedFlag = Arc<AtomicBool>;

/// The pairs of a staged `write_now`, shared by its landing and the `write_now`s after it.
pub(crate) struct StagedWrite {
    /// Puts only, in commit order.
    pub(crate) pairs: WriteBatch,
    pub(crate) ht: HybridTime,
    /// Its batches' numbers in the log of recent writes.
    pub(crate) log: Range<u64>,
    /// Its pairs by key, made for the first `write_now` that reads over them.
    index: OnceLock<Arc<Overlay>>,
    /// Set if it failed to land, before the root cache forgets what it learned.
    failed: FailedFlag,
    /// The flags of the staged writes it read over.
    read_over: Vec<FailedFlag>,
}

impl StagedWrite {
    /// `pairs` committed at `ht` by a `write_now` that began over `under`.
    pub(crate) fn new(
        pairs: WriteBatch,
        ht: HybridTime,
        log: Range<u64>,
        under: &[Arc<StagedWrite>],
    ) -> Self {
        StagedWrite {
            pairs,
            ht,
            log,
            index: OnceLock::new(),
            failed: FailedFlag::default(),
            read_over: under.iter().map(|u| u.failed.clone()).collect(),
        }
    }

    /// Its pairs by key.
    fn overlay(&self) -> Arc<Overlay> {
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

    /// Whether a staged write it read over failed to land.
    pub(crate) fn read_over_a_failure(&self) -> bool {
        self.read_over.iter().any(|f| f.load(Ordering::SeqCst))
    }
}

/// The pairs of every staged write in `under` (oldest first) by key, later ones over
/// earlier: what a `write_now` beginning over them reads under its own.
pub(crate) fn overlay_of(under: &[Arc<StagedWrite>]) -> Arc<Overlay> {
    match under {
        [] => Arc::default(),
        [only] => only.overlay(),
        [first, rest @ ..] => {
            let mut merged = Overlay::clone(&first.overlay());
            for staged in rest {
                merged.extend(staged.overlay().iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            Arc::new(merged)
        }
    }
}

/// Whether any staged write in `under` failed to land.
pub(crate) fn any_failed(under: &[Arc<StagedWrite>]) -> bool {
    under.iter().any(|u| u.failed())
}

/// The error of a write that read a staged write which failed to land.
pub(crate) fn earlier_write_failed() -> Error {
    Error::Engine(engine::Error::Engine(
        "an earlier write this one read failed to land".into(),
    ))
}

/// The staged writes not landed yet, oldest first.
#[derive(Default)]
pub(crate) struct StageQueue {
    queue: Mutex<VecDeque<Arc<StagedWrite>>>,
    /// Signalled whenever one leaves the queue.
    changed: Condvar,
    /// The oldest one's hybrid time, or [`NONE_STAGED`]: read without the lock.
    oldest_at: AtomicU64,
}

impl StageQueue {
    fn lock(&self) -> MutexGuard<'_, VecDeque<Arc<StagedWrite>>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until `done` holds for the queue.
    fn wait_until(
        &self,
        mut done: impl FnMut(&VecDeque<Arc<StagedWrite>>) -> bool,
    ) -> MutexGuard<'_, VecDeque<Arc<StagedWrite>>> {
        let mut queue = self.lock();
        while !done(&queue) {
            queue = self.changed.wait(queue).unwrap_or_else(|e| e.into_inner());
        }
        queue
    }

    /// The oldest staged write's time, if one waits.
    pub(crate) fn oldest(&self) -> Option<HybridTime> {
        let at = self.oldest_at.load(Ordering::SeqCst);
        (at != NONE_STAGED).then_some(HybridTime(at))
    }

    /// The writes staged now, oldest first.
    pub(crate) fn snapshot(&self) -> Vec<Arc<StagedWrite>> {
        self.lock().iter().cloned().collect()
    }

    /// Waits until every staged write has landed (or failed).
    pub(crate) fn wait_empty(&self) {
        drop(self.wait_until(VecDeque::is_empty));
    }

    /// Stages `write` once fewer than [`MAX_STAGED`] wait.
    pub(crate) fn push(&self, write: Arc<StagedWrite>) {
        let mut queue = self.wait_until(|q| q.len() < MAX_STAGED);
        if queue.is_empty() {
            self.oldest_at.store(write.ht.0, Ordering::SeqCst);
        }
        queue.push_back(write);
    }

    /// Waits until `write` is the oldest staged write: its turn to land.
    pub(crate) fn wait_turn(&self, write: &Arc<StagedWrite>) {
        drop(self.wait_until(|q| q.front().is_none_or(|f| Arc::ptr_eq(f, write))));
    }

    /// Takes `write` out of the queue (it landed or failed).
    pub(crate) fn remove(&self, write: &Arc<StagedWrite>) {
        let mut queue = self.lock();
        queue.retain(|w| !Arc::ptr_eq(w, write));
        let oldest = queue.front().map_or(NONE_STAGED, |w| w.ht.0);
        self.oldest_at.store(oldest, Ordering::SeqCst);
        drop(queue);
        self.changed.notify_all();
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

    /// Waits for the writes staged before it to land, then writes its pairs to the engine
    /// in one write. If that fails, or one of the earlier ones failed, the `write_now`s that
    /// read over it fail too.
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
            self.db.finish_staged(&write, Err(dropped.into())).ok();
        }
    }
}
