//! CLIENT PAUSE: holding every client's commands, or only those that write, until a
//! deadline or CLIENT UNPAUSE.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio::sync::Notify;

/// The server's pause, if any.
#[derive(Debug, Default)]
pub struct Pause {
    state: Mutex<Option<Paused>>,
    /// `state.is_some()`, read without the lock before every command.
    active: AtomicBool,
    /// Wakes the held connections when the pause is lifted early.
    lifted: Notify,
}

#[derive(Debug, Clone, Copy)]
struct Paused {
    until: Instant,
    all: bool,
}

impl Pause {
    /// Pauses until `until`: every command if `all`, else writes. A pause already on keeps
    /// the later end and the stronger mode, as Redis merges them.
    pub fn pause(&self, until: Instant, all: bool) {
        let mut state = self.lock();
        let merged = match *state {
            Some(p) => Paused {
                until: p.until.max(until),
                all: p.all || all,
            },
            None => Paused { until, all },
        };
        *state = Some(merged);
        self.active.store(true, Ordering::SeqCst);
    }

    /// CLIENT UNPAUSE (and shutdown): lifts the pause and wakes the held connections.
    pub fn unpause(&self) {
        *self.lock() = None;
        self.active.store(false, Ordering::SeqCst);
        self.lifted.notify_waiters();
    }

    /// Whether a pause may be on (one load: the check before every request).
    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Whether a command must wait now: any while all are paused, one that `writes` while
    /// writes are.
    pub fn holds(&self, writes: impl FnOnce() -> bool) -> bool {
        if !self.is_active() {
            return false;
        }
        self.current().is_some_and(|p| p.all || writes())
    }

    /// Returns once the pause ends: at its deadline, or when lifted.
    pub async fn ended(&self) {
        loop {
            let lifted = self.lifted.notified();
            let Some(paused) = self.current() else {
                return;
            };
            tokio::select! {
                () = tokio::time::sleep_until(paused.until.into()) => {}
                () = lifted => {}
            }
        }
    }

    /// The pause in force, clearing one whose deadline has passed.
    fn current(&self) -> Option<Paused> {
        let mut state = self.lock();
        if state.is_some_and(|p| Instant::now() >= p.until) {
            *state = None;
            self.active.store(false, Ordering::SeqCst);
        }
        *state
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Paused>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn pauses_merge_and_end() {
        let pause = Pause::default();
        let (write, read) = (|| true, || false);
        assert!(!pause.holds(write), "no pause at first");
        let now = Instant::now();
        pause.pause(now + Duration::from_secs(60), false);
        assert!(
            pause.holds(write) && !pause.holds(read),
            "WRITE holds writes only"
        );
        pause.pause(now + Duration::from_millis(1), true);
        assert!(pause.holds(read), "ALL is the stronger mode");
        std::thread::sleep(Duration::from_millis(2));
        assert!(pause.holds(read), "the later end is kept");
        pause.unpause();
        assert!(!pause.holds(write), "UNPAUSE lifts it");
        pause.pause(Instant::now(), true);
        assert!(!pause.holds(write), "a pause past its deadline is over");
    }

    #[tokio::test]
    async fn held_connections_wake_when_lifted() {
        let pause = std::sync::Arc::new(Pause::default());
        pause.pause(Instant::now() + Duration::from_secs(600), true);
        let waiting = tokio::spawn({
            let pause = pause.clone();
            async move { pause.ended().await }
        });
        tokio::task::yield_now().await;
        pause.unpause();
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("woken at once")
            .expect("no panic");
    }
}
