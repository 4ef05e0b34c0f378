//! Background upkeep for library callers: a thread that runs a database's periodic work every
//! interval, as `docdb serve` does every second, until its handle is dropped.
//!
//! The work of one round is [`crate::DocDb::upkeep_round`] (or a table database's own): a
//! memtable flush once history retention needs it, then a sweep of the documents deleted
//! since the last round, so that the first scan after a mass delete skips each run of them
//! with one seek. Without it a library caller has to call both now and then itself.
//!
//! The thread holds only a weak reference: dropping the last handle to the database ends it
//! too, at its next round.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::sweep::SweepStats;

/// How often the upkeep thread runs, and how long a sweep may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpkeepOptions {
    /// The pause between rounds. Default one second.
    pub every: Duration,
    /// How long one round's sweep of deleted documents may read before it leaves the rest
    /// for the next round. Default 200 ms: a fifth of the default interval, so reads and
    /// writes on other threads keep most of the machine.
    pub sweep_budget: Duration,
}

impl Default for UpkeepOptions {
    fn default() -> Self {
        UpkeepOptions {
            every: Duration::from_secs(1),
            sweep_budget: Duration::from_millis(200),
        }
    }
}

/// What one upkeep round did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpkeepRound {
    /// Whether it flushed the memtable for the history cutoff.
    pub flushed: bool,
    /// Deleted documents its sweep took from the queue.
    pub swept: u64,
    /// Deleted documents left queued for the next round.
    pub left: u64,
}

impl UpkeepRound {
    /// A round from the outcomes of its two steps, the flush and the sweep, both of which
    /// have run: the first error if either failed.
    pub fn of<E>(flushed: Result<bool, E>, swept: Result<SweepStats, E>) -> Result<Self, E> {
        let (flushed, swept) = (flushed?, swept?);
        Ok(UpkeepRound {
            flushed,
            swept: swept.taken,
            left: swept.left,
        })
    }
}

/// What the upkeep thread has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpkeepStats {
    /// Rounds run, failed ones included.
    pub rounds: u64,
    /// Memtable flushes for the history cutoff.
    pub flushes: u64,
    /// Deleted documents swept.
    pub swept: u64,
    /// Deleted documents queued after the latest round.
    pub left: u64,
    /// Rounds that failed.
    pub failures: u64,
    /// The latest failure's message.
    pub last_error: Option<String>,
}

impl UpkeepStats {
    fn count(&mut self, round: Result<UpkeepRound, String>) {
        self.rounds += 1;
        match round {
            Ok(round) => {
                self.flushes += u64::from(round.flushed);
                self.swept += round.swept;
                self.left = round.left;
            }
            Err(message) => {
                self.failures += 1;
                self.last_error = Some(message);
            }
        }
    }
}

#[derive(Debug, Default)]
struct State {
    stats: UpkeepStats,
    stop: bool,
    wake: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    signal: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The handle of a running upkeep thread; dropping it stops the thread and waits for its
/// round in progress, if any, to end.
#[derive(Debug)]
pub struct Upkeep {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Upkeep {
    /// Starts a thread named `name` that calls `round` on `target` every `every` until the
    /// handle is dropped or `target` is. A failed round is counted and logged, and the next
    /// one runs as usual.
    pub fn spawn<T, E>(
        name: &str,
        target: &Arc<T>,
        every: Duration,
        round: impl Fn(&T) -> Result<UpkeepRound, E> + Send + 'static,
    ) -> crate::Result<Upkeep>
    where
        T: Send + Sync + 'static,
        E: std::fmt::Display,
    {
        let shared = Arc::new(Shared::default());
        let weak = Arc::downgrade(target);
        let thread = std::thread::Builder::new().name(name.to_string()).spawn({
            let shared = shared.clone();
            move || run(&shared, &weak, every, round)
        });
        let thread = thread.map_err(|e| {
            crate::Error::Engine(engine::Error::Io(format!("starting {name}: {e}")))
        })?;
        Ok(Upkeep {
            shared,
            thread: Some(thread),
        })
    }

    /// What the thread has done so far.
    pub fn stats(&self) -> UpkeepStats {
        self.shared.lock().stats.clone()
    }

    /// Runs the next round now rather than at the end of the pause.
    pub fn wake(&self) {
        self.shared.lock().wake = true;
        self.shared.signal.notify_all();
    }

    /// Whether the thread has ended (its target was dropped).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

impl Drop for Upkeep {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.signal.notify_all();
        if let Some(thread) = self.thread.take() {
            // A panicking round ended the thread; there is nothing left to stop.
            let _ = thread.join();
        }
    }
}

/// The thread's loop: a pause (cut short by `wake`), then a round while the target lives.
fn run<T, E: std::fmt::Display>(
    shared: &Shared,
    target: &Weak<T>,
    every: Duration,
    round: impl Fn(&T) -> Result<UpkeepRound, E>,
) {
    loop {
        {
            let state = shared.lock();
            let (mut state, _) = shared
                .signal
                .wait_timeout_while(state, every, |s| !s.stop && !s.wake)
                .unwrap_or_else(|e| e.into_inner());
            if state.stop {
                return;
            }
            state.wake = false;
        }
        let Some(target) = target.upgrade() else {
            return;
        };
        let done = round(&target).map_err(|e| e.to_string());
        drop(target);
        if let Err(message) = &done {
            tracing::warn!(error = %message, "background upkeep round failed");
        }
        shared.lock().stats.count(done);
    }
}
