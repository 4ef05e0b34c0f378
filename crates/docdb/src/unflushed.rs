//! The hybrid times of records that may not be in the engine's files yet.
//!
//! A full compaction decides about the records in its files as if no older record were
//! anywhere else: it drops a value that expired by the history cutoff, although an EXPIRE or
//! PERSIST written while the value was alive may still sit in the memtable and restate its
//! expiry. So a full compaction's cutoff stays below every record that may be unflushed.
//!
//! Writers note their times; a checkpoint takes the times noted so far and flushes the
//! memtable, after which those records are in files. Flushes the engine starts on its own go
//! unnoticed, which only keeps times longer than needed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, TryLockError};

use dockv::HybridTime;

/// How long times flushed by a checkpoint still hold the cutoff back, by default. A
/// compaction chooses its files a moment before it asks for its filter; a flush that
/// finished in between wrote a file that is not among them. That moment is a compaction's
/// setup, milliseconds.
pub const FLUSH_GRACE_MICROS: u64 = 10_000_000;

/// No time noted.
const NONE: u64 = u64::MAX;

/// The times one checkpoint took.
#[derive(Debug, Clone, Copy)]
struct Taken {
    oldest: u64,
    /// Physical µs when its flush finished; `None` while it runs.
    flushed_at: Option<u64>,
}

/// The oldest hybrid times written that may still be in the memtable (see the module docs).
#[derive(Debug)]
pub struct UnflushedWrites {
    /// Shared by a writer from noting its time until its engine write returns; exclusive
    /// while a checkpoint takes the times, so that every write it takes is in the memtable
    /// it then flushes.
    gate: RwLock<()>,
    /// The oldest time noted since the last checkpoint took them ([`NONE`] if none).
    current: AtomicU64,
    /// One checkpoint at a time.
    checkpoint: Mutex<()>,
    /// Checkpoints flushing, or finished less than `grace_micros` ago.
    taken: Mutex<Vec<Taken>>,
    /// [`FLUSH_GRACE_MICROS`] unless set.
    grace_micros: AtomicU64,
}

impl Default for UnflushedWrites {
    fn default() -> Self {
        UnflushedWrites {
            gate: RwLock::new(()),
            current: AtomicU64::new(NONE),
            checkpoint: Mutex::new(()),
            taken: Mutex::new(Vec::new()),
            grace_micros: AtomicU64::new(FLUSH_GRACE_MICROS),
        }
    }
}

impl UnflushedWrites {
    /// Notes `oldest`, the oldest time of records `write` puts into the engine, and runs it.
    pub fn write<R>(&self, oldest: HybridTime, write: impl FnOnce() -> R) -> R {
        let _shared = self.gate.read().unwrap_or_else(PoisonError::into_inner);
        // Holding the gate, nothing raises `current` (a checkpoint takes it exclusively),
        // so a time already at or below `oldest` needs no atomic update.
        if self.current.load(Ordering::SeqCst) > oldest.0 {
            self.note(oldest);
        }
        write()
    }

    /// Notes a time whose records will be written later (through [`Self::write`], which
    /// notes it again): until then they are in no file either.
    pub fn note(&self, ht: HybridTime) {
        self.current.fetch_min(ht.0, Ordering::SeqCst);
    }

    /// Takes the times noted so far and runs `flush`, which must write everything the
    /// engine holds in memory to files before it returns. If it fails, the times stay
    /// noted. `now` is the clock's physical µs.
    pub fn checkpoint<R, Err>(
        &self,
        now: impl FnOnce() -> u64,
        flush: impl FnOnce() -> Result<R, Err>,
    ) -> Result<R, Err> {
        let one = self
            .checkpoint
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.checkpoint_holding(one, now, flush)
    }

    /// [`Self::checkpoint`] unless another one is running (then `None`, at once).
    pub fn try_checkpoint<R, Err>(
        &self,
        now: impl FnOnce() -> u64,
        flush: impl FnOnce() -> Result<R, Err>,
    ) -> Option<Result<R, Err>> {
        let one = match self.checkpoint.try_lock() {
            Ok(one) => one,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(self.checkpoint_holding(one, now, flush))
    }

    fn checkpoint_holding<R, Err>(
        &self,
        _one: MutexGuard<'_, ()>,
        now: impl FnOnce() -> u64,
        flush: impl FnOnce() -> Result<R, Err>,
    ) -> Result<R, Err> {
        let oldest = {
            let _exclusive = self.gate.write().unwrap_or_else(PoisonError::into_inner);
            self.current.swap(NONE, Ordering::SeqCst)
        };
        self.lock_taken().push(Taken {
            oldest,
            flushed_at: None,
        });
        let result = flush();
        let mut taken = self.lock_taken();
        // The checkpoint lock makes this entry the only one still flushing.
        if let Some(pos) = taken.iter().position(|t| t.flushed_at.is_none()) {
            if result.is_ok() {
                if let Some(entry) = taken.get_mut(pos) {
                    entry.flushed_at = Some(now());
                }
            } else {
                taken.remove(pos);
                self.note(HybridTime(oldest));
            }
        }
        result
    }

    /// Sets how long a checkpoint's times hold the cutoff back after its flush.
    pub fn set_grace_micros(&self, micros: u64) {
        self.grace_micros.store(micros, Ordering::SeqCst);
    }

    /// The oldest time noted since the last checkpoint took them.
    pub fn oldest_since_checkpoint(&self) -> Option<HybridTime> {
        let oldest = self.current.load(Ordering::SeqCst);
        (oldest != NONE).then_some(HybridTime(oldest))
    }

    /// The latest cutoff below every record written since the last checkpoint took the
    /// times: for a full compaction that the last checkpoint's flush preceded.
    pub fn cutoff_after_checkpoint(&self) -> HybridTime {
        below(self.current.load(Ordering::SeqCst))
    }

    /// The latest cutoff below every record that may be in no file at physical time `now`,
    /// as a full compaction that chose its files up to the grace period before sees them.
    pub fn cutoff(&self, now: u64) -> HybridTime {
        let grace = self.grace_micros.load(Ordering::SeqCst);
        let mut taken = self.lock_taken();
        taken.retain(|t| t.flushed_at.is_none_or(|at| now.saturating_sub(at) < grace));
        let oldest = taken
            .iter()
            .map(|t| t.oldest)
            .fold(self.current.load(Ordering::SeqCst), u64::min);
        below(oldest)
    }

    fn lock_taken(&self) -> MutexGuard<'_, Vec<Taken>> {
        self.taken.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The hybrid time just before `oldest` ([`HybridTime::MAX`] if nothing is noted).
fn below(oldest: u64) -> HybridTime {
    if oldest == NONE {
        HybridTime::MAX
    } else {
        HybridTime(oldest.saturating_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_000_000_000;

    #[test]
    fn nothing_written_holds_nothing_back() {
        let unflushed = UnflushedWrites::default();
        assert_eq!(unflushed.cutoff(NOW), HybridTime::MAX);
        assert_eq!(unflushed.cutoff_after_checkpoint(), HybridTime::MAX);
        assert_eq!(unflushed.oldest_since_checkpoint(), None);
    }

    #[test]
    fn the_cutoff_stays_below_the_oldest_write() {
        let unflushed = UnflushedWrites::default();
        unflushed.write(HybridTime(500), || ());
        unflushed.write(HybridTime(300), || ());
        unflushed.note(HybridTime(400));
        assert_eq!(unflushed.cutoff(NOW), HybridTime(299));
        assert_eq!(unflushed.cutoff_after_checkpoint(), HybridTime(299));
        assert_eq!(unflushed.oldest_since_checkpoint(), Some(HybridTime(300)));
    }

    #[test]
    fn flushed_times_hold_the_cutoff_back_for_the_grace_period_only() {
        let unflushed = UnflushedWrites::default();
        unflushed.write(HybridTime(300), || ());
        let flushed: Result<(), ()> = unflushed.checkpoint(
            || NOW,
            || {
                // While the flush runs, its times still count; new ones count after it.
                assert_eq!(unflushed.cutoff(NOW), HybridTime(299));
                unflushed.write(HybridTime(700), || ());
                Ok(())
            },
        );
        assert_eq!(flushed, Ok(()));
        assert_eq!(unflushed.cutoff_after_checkpoint(), HybridTime(699));
        assert_eq!(
            unflushed.cutoff(NOW + FLUSH_GRACE_MICROS - 1),
            HybridTime(299)
        );
        assert_eq!(unflushed.cutoff(NOW + FLUSH_GRACE_MICROS), HybridTime(699));
    }

    #[test]
    fn a_failed_flush_keeps_its_times() {
        let unflushed = UnflushedWrites::default();
        unflushed.write(HybridTime(300), || ());
        let failed: Result<(), &str> = unflushed.checkpoint(|| NOW, || Err("disk full"));
        assert_eq!(failed, Err("disk full"));
        assert_eq!(unflushed.oldest_since_checkpoint(), Some(HybridTime(300)));
        assert_eq!(
            unflushed.cutoff(NOW + 10 * FLUSH_GRACE_MICROS),
            HybridTime(299)
        );
    }

    #[test]
    fn a_checkpoint_waits_for_the_write_whose_time_it_takes() {
        use std::sync::Arc;
        use std::sync::atomic::AtomicBool;
        use std::sync::mpsc::channel;
        use std::time::Duration;

        let unflushed = Arc::new(UnflushedWrites::default());
        let (entered_tx, entered) = channel();
        let (release, release_rx) = channel::<()>();
        let writer = {
            let unflushed = unflushed.clone();
            std::thread::spawn(move || {
                unflushed.write(HybridTime(5), || {
                    entered_tx.send(()).expect("send");
                    release_rx.recv().expect("release");
                });
            })
        };
        entered.recv().expect("entered");
        // The write has noted its time but not reached the engine: a flush now would miss it.
        let flushing = Arc::new(AtomicBool::new(false));
        let checkpoint = {
            let (unflushed, flushing) = (unflushed.clone(), flushing.clone());
            std::thread::spawn(move || {
                let _: Result<(), ()> = unflushed.checkpoint(
                    || NOW,
                    || {
                        flushing.store(true, Ordering::SeqCst);
                        Ok(())
                    },
                );
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !flushing.load(Ordering::SeqCst),
            "the checkpoint flushed while a write it took was still on its way"
        );
        release.send(()).expect("release");
        writer.join().expect("writer");
        checkpoint.join().expect("checkpoint");
        assert!(flushing.load(Ordering::SeqCst));
        assert_eq!(unflushed.oldest_since_checkpoint(), None);
        // While a checkpoint runs, another that must not wait gives way.
        let outer: Result<Option<Result<(), ()>>, ()> =
            unflushed.checkpoint(|| NOW, || Ok(unflushed.try_checkpoint(|| NOW, || Ok(()))));
        let nested = outer.expect("outer");
        assert!(nested.is_none(), "a second checkpoint ran inside the first");
        assert_eq!(unflushed.cutoff(NOW), HybridTime(4));
    }
}
