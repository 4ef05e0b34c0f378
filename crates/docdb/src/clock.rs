//! A hybrid logical clock: physical microseconds plus a 12-bit logical counter.
//!
//! `now()` never goes backwards and never repeats, even when the wall clock does or when two
//! callers ask within the same microsecond; `update()` pulls it forward past times seen
//! elsewhere (explicit write times, replicas). Lower layers take explicit hybrid times; this
//! is for callers that want "now".

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use dockv::HybridTime;

/// Where physical time comes from; tests substitute a manual clock.
pub trait PhysicalClock: Send + Sync {
    /// Microseconds since the Unix epoch.
    fn now_micros(&self) -> u64;
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct WallClock;

impl PhysicalClock for WallClock {
    fn now_micros(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64)
    }
}

/// A hybrid logical clock over a physical clock.
pub struct HybridClock {
    physical: Box<dyn PhysicalClock>,
    last: AtomicU64,
}

impl std::fmt::Debug for HybridClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HybridClock")
            .field("last", &HybridTime(self.last.load(Ordering::Relaxed)))
            .finish()
    }
}

impl Default for HybridClock {
    fn default() -> Self {
        Self::new(Box::new(WallClock))
    }
}

impl HybridClock {
    /// A clock over `physical`.
    pub fn new(physical: Box<dyn PhysicalClock>) -> Self {
        HybridClock {
            physical,
            last: AtomicU64::new(0),
        }
    }

    /// A new hybrid time, greater than every time this clock returned or was updated with.
    pub fn now(&self) -> HybridTime {
        let wall = HybridTime::from_micros(self.physical.now_micros()).0;
        let mut last = self.last.load(Ordering::Acquire);
        loop {
            let next = wall.max(last + 1);
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return HybridTime(next),
                Err(seen) => last = seen,
            }
        }
    }

    /// The latest time handed out or observed, without advancing.
    pub fn peek(&self) -> HybridTime {
        HybridTime(self.last.load(Ordering::Acquire))
    }

    /// Moves the clock to at least `ht` (a time written or received from elsewhere).
    pub fn update(&self, ht: HybridTime) {
        if ht < HybridTime::INVALID {
            self.last.fetch_max(ht.0, Ordering::AcqRel);
        }
    }

    /// Physical microseconds of the underlying clock.
    pub fn physical_micros(&self) -> u64 {
        self.physical.now_micros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicU64;

    struct Manual(Arc<AtomicU64>);
    impl PhysicalClock for Manual {
        fn now_micros(&self) -> u64 {
            self.0.load(Ordering::SeqCst)
        }
    }

    #[test]
    fn monotonic_with_logical_ticks() {
        let time = Arc::new(AtomicU64::new(1000));
        let clock = HybridClock::new(Box::new(Manual(time.clone())));
        let a = clock.now();
        let b = clock.now();
        assert_eq!(a, HybridTime::from_micros(1000));
        assert_eq!(b, HybridTime::new(1000, 1));
        time.store(500, Ordering::SeqCst); // wall clock goes back
        assert!(clock.now() > b);
        clock.update(HybridTime::from_micros(5000));
        assert!(clock.now() > HybridTime::from_micros(5000));
        time.store(9000, Ordering::SeqCst);
        assert_eq!(clock.now(), HybridTime::from_micros(9000));
    }
}
