//! Adaptive threading: connections that pipeline get a second set of worker threads and the
//! writer thread; those that do not stay on the first set and write in place.
//!
//! Without pipelining, each connection has one request in flight, and the client (often
//! on the same machine) needs a core as much as the server: a second worker then competes
//! with it, and a write handed to the writer thread crosses threads twice. With pipelining,
//! one worker is the bottleneck while a core sits idle (BENCHMARKS.md, sessions 24–25).
//! So every connection starts on the *main* runtime and writes on its own worker. One that
//! averages [`PIPELINED_REQUESTS_PER_READ`] requests per read over a window of
//! [`PIPELINE_WINDOW`] reads is judged pipelining: from then on its writes go to the writer
//! thread, and every other such connection moves to the *pipelined* runtime's workers. One
//! that later averages under [`UNPIPELINED_REQUESTS_PER_READ`] over a window has stopped
//! pipelining: its writes run in place again, where it is (it moves at most once), until
//! a later window judges it pipelining again.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::runtime::{Handle, Runtime};

/// Reads over which a connection's requests per read are averaged.
pub const PIPELINE_WINDOW: u32 = 16;

/// Requests per read, averaged over a window, that mark a connection as pipelining.
pub const PIPELINED_REQUESTS_PER_READ: u64 = 4;

/// Requests per read, averaged over a window, under which a pipelining connection has
/// stopped (below the mark above, so that a client near it does not flip every window).
pub const UNPIPELINED_REQUESTS_PER_READ: u64 = 2;

/// A change in a connection's judged way of sending requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// It pipelines now: its writes go to the writer thread.
    Started,
    /// It sends about one request per read again: its writes run in place.
    Stopped,
}

/// Watches one connection's reads for pipelining.
#[derive(Debug, Default)]
pub struct PipelineWatch {
    reads: u32,
    requests_at_window_start: u64,
    pipelining: bool,
}

impl PipelineWatch {
    /// Called after each read with the connection's requests so far; at the end of each
    /// window of [`PIPELINE_WINDOW`] reads, the turn its average makes, if any.
    pub fn observe(&mut self, requests: u64) -> Option<Turn> {
        self.reads += 1;
        if self.reads < PIPELINE_WINDOW {
            return None;
        }
        let in_window = requests.saturating_sub(self.requests_at_window_start);
        self.reads = 0;
        self.requests_at_window_start = requests;
        let window = u64::from(PIPELINE_WINDOW);
        match self.pipelining {
            false if in_window >= PIPELINED_REQUESTS_PER_READ * window => {
                self.pipelining = true;
                Some(Turn::Started)
            }
            true if in_window < UNPIPELINED_REQUESTS_PER_READ * window => {
                self.pipelining = false;
                Some(Turn::Stopped)
            }
            _ => None,
        }
    }
}

/// Starts the pipelined runtime of `threads` workers, or none if `threads` is 0. Its owner
/// stops it with [`Runtime::shutdown_background`] (dropping a runtime on a runtime thread
/// panics).
pub fn pipelined_runtime(threads: usize) -> std::io::Result<Option<Runtime>> {
    if threads == 0 {
        return Ok(None);
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .thread_name("docdb-pipelined")
        .build()
        .map(Some)
}

/// Where connections judged pipelining go: the pipelined runtime, for every other one.
#[derive(Debug, Default)]
pub struct Lanes {
    pipelined: Option<Handle>,
    judged: AtomicU64,
}

impl Lanes {
    /// Lanes onto `runtime`, if there is one (with none, connections are never judged).
    pub fn new(runtime: Option<&Runtime>) -> Self {
        Lanes {
            pipelined: runtime.map(|runtime| runtime.handle().clone()),
            ..Lanes::default()
        }
    }

    /// Whether connections judged pipelining get the writer thread and the second runtime.
    pub fn adaptive(&self) -> bool {
        self.pipelined.is_some()
    }

    /// A connection was judged pipelining: whether it moves to the pipelined runtime
    /// (every other one does, so that the two runtimes share them).
    pub fn should_move(&self) -> bool {
        self.pipelined.is_some()
            && self
                .judged
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(2)
    }

    /// The pipelined runtime, for a connection that moves there.
    pub fn pipelined(&self) -> Option<&Handle> {
        self.pipelined.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `per_read[i]` requests at read `i + 1`; the reads after which the watch
    /// turned, and which way.
    fn turns(per_read: &[u64]) -> Vec<(usize, Turn)> {
        let mut watch = PipelineWatch::default();
        let mut requests = 0;
        let mut turns = Vec::new();
        for (read, count) in per_read.iter().enumerate() {
            requests += count;
            if let Some(turn) = watch.observe(requests) {
                turns.push((read + 1, turn));
            }
        }
        turns
    }

    /// The reads after which the watch said "pipelining".
    fn judged_after(per_read: &[u64]) -> Vec<usize> {
        turns(per_read)
            .into_iter()
            .filter(|(_, turn)| *turn == Turn::Started)
            .map(|(read, _)| read)
            .collect()
    }

    #[test]
    fn a_connection_that_stops_pipelining_is_told_once_and_can_start_again() {
        let mut reads = vec![16; 16];
        reads.extend([1; 48]);
        reads.extend([16; 16]);
        assert_eq!(
            turns(&reads),
            vec![
                (16, Turn::Started),
                (32, Turn::Stopped),
                (80, Turn::Started)
            ]
        );
    }

    #[test]
    fn between_the_marks_nothing_turns() {
        // Three per read: under the mark to start, not under the one to stop.
        let mut reads = vec![16; 16];
        reads.extend([3; 64]);
        assert_eq!(turns(&reads), vec![(16, Turn::Started)]);
        assert!(turns(&[3; 64]).is_empty());
        // Just under two per read stops it.
        let mut reads = vec![16; 16];
        reads.extend([2; 15]);
        reads.push(1);
        assert_eq!(
            turns(&reads),
            vec![(16, Turn::Started), (32, Turn::Stopped)]
        );
    }

    #[test]
    fn one_request_per_read_is_never_pipelining() {
        assert!(judged_after(&[1; 1000]).is_empty());
    }

    #[test]
    fn sixteen_per_read_is_pipelining_after_one_window_and_said_once() {
        assert_eq!(judged_after(&[16; 100]), vec![PIPELINE_WINDOW as usize]);
    }

    #[test]
    fn a_connection_that_starts_pipelining_later_is_judged_then() {
        let mut reads = vec![1; 40];
        reads.extend([16; 40]);
        // Windows end at reads 16, 32, 48 (mixed: 8 × 1 + 8 × 16 = 136 ≥ 64), ...
        assert_eq!(judged_after(&reads), vec![48]);
    }

    #[test]
    fn the_mark_is_an_average_of_four() {
        assert_eq!(judged_after(&[4; 16]), vec![16]);
        assert!(judged_after(&[3; 64]).is_empty());
    }

    #[test]
    fn every_other_judged_connection_moves_and_none_without_a_runtime() {
        let runtime = pipelined_runtime(1).expect("a runtime");
        let lanes = Lanes::new(runtime.as_ref());
        let moves: Vec<bool> = (0..4).map(|_| lanes.should_move()).collect();
        assert_eq!(moves, [true, false, true, false]);
        assert!(lanes.pipelined().is_some());
        let without = Lanes::new(pipelined_runtime(0).expect("no runtime").as_ref());
        assert!(!without.adaptive());
        assert!(!without.should_move());
        assert!(without.pipelined().is_none());
    }
}
