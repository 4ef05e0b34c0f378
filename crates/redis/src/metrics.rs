//! Counters for the Prometheus endpoint and INFO: commands, latency, connections.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Upper bounds (µs) of the command latency histogram's buckets.
const BUCKETS_US: [u64; 12] = [
    10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 100_000, 1_000_000,
];

/// Levels of the per-command histogram that LATENCY HISTOGRAM reports. Redis keeps an hdr
/// histogram per command (1 ns to 1 s, two significant figures) and reads it at the
/// power-of-two nanosecond levels 2^10 to 2^30; a counter per level gives the same reply.
pub const LATENCY_LEVELS: usize = 21;

/// The first level, 2^10 ns.
const FIRST_LEVEL_LOG2: u32 = 10;

/// Redis records a command's microseconds × 1000, capped at its histogram's 1 s.
const MAX_RECORDED_NS: u64 = 1_000_000_000;

/// The highest nanosecond value counted at level `i` (2^k ns, k = 10 + i): hdr's bucket at
/// 2^k is 2^(k-7) ns wide with two significant figures, and Redis reports the bucket's top.
/// The last level is where hdr's buckets end (2^30 - 1), not its own top.
fn level_top_ns(i: usize) -> u64 {
    let k = FIRST_LEVEL_LOG2 + i as u32;
    if k >= 30 {
        return (1 << 30) - 1;
    }
    (1 << k) + (1 << (k - 7)) - 1
}

/// The label of level `i` in LATENCY HISTOGRAM's reply: its top in whole microseconds
/// (1, 2, 4, 8, 16, 33, 66, 132, 264, ...).
pub fn latency_level_usec(i: usize) -> u64 {
    level_top_ns(i) / 1000
}

/// The level a command that ran `us` microseconds counts at: the first whose top holds it.
pub fn latency_level(us: u64) -> usize {
    let ns = us.saturating_mul(1000).min(MAX_RECORDED_NS);
    let log2 = 63 - (ns | 1).leading_zeros();
    let mut level = log2.saturating_sub(FIRST_LEVEL_LOG2) as usize;
    // One step at most: 2^k <= ns < 2^(k+1) <= the next level's top.
    if level < LATENCY_LEVELS - 1 && level_top_ns(level) < ns {
        level += 1;
    }
    level.min(LATENCY_LEVELS - 1)
}

/// Calls, errors and time of one command.
#[derive(Debug, Clone, Copy, Default)]
pub struct CommandCounters {
    /// Times it ran.
    pub calls: u64,
    /// Times it replied with an error.
    pub errors: u64,
    /// Total time, µs.
    pub usec: u64,
}

/// One command's counters, on cache lines of their own.
#[derive(Default)]
#[repr(align(64))]
struct CommandStat {
    calls: AtomicU64,
    errors: AtomicU64,
    usec: AtomicU64,
    /// Calls by [`latency_level`] (LATENCY HISTOGRAM).
    levels: [AtomicU64; LATENCY_LEVELS],
}

/// Shards of the command counters. Each thread counts into one (threads beyond that share),
/// so that threads running commands side by side do not pass the same cache lines back and
/// forth on every command; readers add the shards up.
const SHARDS: usize = 8;

/// One shard: every command's counters, and the latency histogram's.
struct Shard {
    commands: Box<[CommandStat]>,
    totals: Totals,
}

/// The server-wide latency histogram's counters of one shard.
#[derive(Default)]
#[repr(align(64))]
struct Totals {
    buckets: [AtomicU64; BUCKETS_US.len()],
    latency_sum_us: AtomicU64,
    latency_count: AtomicU64,
}

/// The shard this thread counts into.
fn shard_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    // A thread whose locals are being torn down counts into the first.
    SHARD.try_with(|shard| *shard).unwrap_or(0)
}

/// Server-wide counters.
pub struct Metrics {
    names: Vec<&'static str>,
    shards: Box<[Shard]>,
    /// Connections accepted since start.
    pub connections_total: AtomicU64,
    /// Connections refused (max clients).
    pub connections_rejected: AtomicU64,
    /// Connections closed for protocol errors or over-limit requests.
    pub protocol_errors: AtomicU64,
    /// Times a connection was judged pipelining (see [`crate::lanes`]).
    pub pipelining_connections: AtomicU64,
    /// Connections moved to the pipelined runtime.
    pub moved_connections: AtomicU64,
    /// Times a pipelining connection stopped pipelining (its writes run in place again).
    pub pipelining_stopped: AtomicU64,
    /// Groups of write runs the main runtime's tick writer landed, one engine write each.
    pub write_groups: AtomicU64,
    /// Write runs in those groups (each one connection's, one request or more).
    pub write_group_runs: AtomicU64,
}

impl Metrics {
    /// Counters for the commands `names` (indexed by command id).
    pub fn new(names: Vec<&'static str>) -> Self {
        let shards = (0..SHARDS)
            .map(|_| Shard {
                commands: names.iter().map(|_| CommandStat::default()).collect(),
                totals: Totals::default(),
            })
            .collect();
        Metrics {
            names,
            shards,
            connections_total: AtomicU64::new(0),
            connections_rejected: AtomicU64::new(0),
            protocol_errors: AtomicU64::new(0),
            pipelining_connections: AtomicU64::new(0),
            moved_connections: AtomicU64::new(0),
            pipelining_stopped: AtomicU64::new(0),
            write_groups: AtomicU64::new(0),
            write_group_runs: AtomicU64::new(0),
        }
    }

    /// Counts one run of command `id`.
    pub fn record(&self, id: usize, elapsed: Duration, error: bool) {
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let shard = &self.shards[shard_index()];
        if let Some(c) = shard.commands.get(id) {
            c.calls.fetch_add(1, Ordering::Relaxed);
            c.errors.fetch_add(u64::from(error), Ordering::Relaxed);
            c.usec.fetch_add(us, Ordering::Relaxed);
            c.levels[latency_level(us)].fetch_add(1, Ordering::Relaxed);
        }
        let totals = &shard.totals;
        if let Some(i) = BUCKETS_US.iter().position(|&b| us <= b) {
            totals.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        totals.latency_sum_us.fetch_add(us, Ordering::Relaxed);
        totals.latency_count.fetch_add(1, Ordering::Relaxed);
    }

    /// `read`'s counter added up over the shards.
    fn sum(&self, read: impl Fn(&Shard) -> &AtomicU64) -> u64 {
        self.shards
            .iter()
            .map(|shard| read(shard).load(Ordering::Relaxed))
            .sum()
    }

    /// Counters of the commands that ran, by name.
    pub fn commands(&self) -> Vec<(&'static str, CommandCounters)> {
        let mut all: Vec<_> = self
            .names
            .iter()
            .enumerate()
            .map(|(id, name)| {
                let counters = CommandCounters {
                    calls: self.sum(|s| &s.commands[id].calls),
                    errors: self.sum(|s| &s.commands[id].errors),
                    usec: self.sum(|s| &s.commands[id].usec),
                };
                (*name, counters)
            })
            .filter(|(_, c)| c.calls > 0)
            .collect();
        all.sort_by_key(|(name, _)| *name);
        all
    }

    /// Calls of command `id` by [`latency_level`] (not cumulative); `None` before its first.
    pub fn latency_histogram(&self, id: usize) -> Option<[u64; LATENCY_LEVELS]> {
        if id >= self.names.len() {
            return None;
        }
        let levels: [u64; LATENCY_LEVELS] =
            std::array::from_fn(|level| self.sum(|s| &s.commands[id].levels[level]));
        levels.iter().any(|&n| n > 0).then_some(levels)
    }

    /// [`Self::latency_histogram`] of every command that ran, by name.
    pub fn latency_histograms(&self) -> Vec<(&'static str, [u64; LATENCY_LEVELS])> {
        let mut all: Vec<_> = (0..self.names.len())
            .filter_map(|id| Some((self.names[id], self.latency_histogram(id)?)))
            .collect();
        all.sort_by_key(|(name, _)| *name);
        all
    }

    /// Commands run since start.
    pub fn total_commands(&self) -> u64 {
        self.sum(|s| &s.totals.latency_count)
    }

    /// The command metrics in Prometheus text format.
    pub fn render_commands(&self, out: &mut String) {
        out.push_str("# HELP docdb_commands_total Commands run, by command.\n");
        out.push_str("# TYPE docdb_commands_total counter\n");
        let commands = self.commands();
        for (name, c) in &commands {
            let _ = writeln!(out, "docdb_commands_total{{cmd=\"{name}\"}} {}", c.calls);
        }
        out.push_str("# HELP docdb_command_errors_total Commands that replied with an error.\n");
        out.push_str("# TYPE docdb_command_errors_total counter\n");
        for (name, c) in &commands {
            let _ = writeln!(
                out,
                "docdb_command_errors_total{{cmd=\"{name}\"}} {}",
                c.errors
            );
        }
        out.push_str("# HELP docdb_command_duration_seconds Command execution time.\n");
        out.push_str("# TYPE docdb_command_duration_seconds histogram\n");
        let mut cumulative = 0;
        for (i, bound) in BUCKETS_US.iter().enumerate() {
            cumulative += self.sum(|s| &s.totals.buckets[i]);
            let _ = writeln!(
                out,
                "docdb_command_duration_seconds_bucket{{le=\"{}\"}} {cumulative}",
                *bound as f64 / 1e6
            );
        }
        let count = self.sum(|s| &s.totals.latency_count);
        let sum = self.sum(|s| &s.totals.latency_sum_us) as f64 / 1e6;
        let _ = writeln!(
            out,
            "docdb_command_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(out, "docdb_command_duration_seconds_sum {sum}");
        let _ = writeln!(out, "docdb_command_duration_seconds_count {count}");
    }
}

/// Appends one metric with its HELP and TYPE lines.
pub fn metric(out: &mut String, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_levels_are_redis_hdr_buckets() {
        let labels: Vec<u64> = (0..LATENCY_LEVELS).map(latency_level_usec).collect();
        assert_eq!(labels[..10], [1, 2, 4, 8, 16, 33, 66, 132, 264, 528]);
        assert_eq!(labels[LATENCY_LEVELS - 1], 1_073_741);
        // Microseconds × 1000 against each level's top (1031 ns, 2063 ns, ...).
        for (us, level) in [(0, 0), (1, 0), (2, 1), (8, 3), (9, 4), (264, 8), (265, 9)] {
            assert_eq!(latency_level(us), level, "{us} µs");
        }
        assert_eq!(latency_level(541_065), 19);
        assert_eq!(latency_level(541_066), 20);
        assert_eq!(latency_level(u64::MAX), LATENCY_LEVELS - 1);
    }

    #[test]
    fn each_call_counts_once_at_its_level() {
        let metrics = Metrics::new(vec!["get", "set"]);
        assert_eq!(metrics.latency_histogram(0), None);
        metrics.record(1, Duration::from_micros(3), false);
        metrics.record(1, Duration::from_micros(3), true);
        metrics.record(1, Duration::from_millis(2), false);
        let set = metrics.latency_histogram(1).expect("set ran");
        assert_eq!(set.iter().sum::<u64>(), 3);
        assert_eq!(set[latency_level(3)], 2);
        assert_eq!(set[latency_level(2000)], 1);
        let all = metrics.latency_histograms();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].0, "set");
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        // More threads than shards, so that some share one.
        let threads = SHARDS * 2 + 1;
        let metrics = Metrics::new(vec!["get", "set"]);
        std::thread::scope(|scope| {
            for t in 0..threads {
                let metrics = &metrics;
                scope.spawn(move || {
                    for _ in 0..100 {
                        metrics.record(t % 2, Duration::from_micros(30), t == 0);
                    }
                });
            }
        });
        let calls = |name: &str| {
            metrics
                .commands()
                .into_iter()
                .find(|(n, _)| *n == name)
                .map(|(_, c)| c)
                .expect("ran")
        };
        let (gets, sets) = (calls("get"), calls("set"));
        assert_eq!(gets.calls, 100 * (threads as u64).div_ceil(2));
        assert_eq!(sets.calls, 100 * (threads as u64 / 2));
        assert_eq!((gets.errors, sets.errors), (100, 0));
        assert_eq!(gets.usec, 30 * gets.calls);
        assert_eq!(metrics.total_commands(), 100 * threads as u64);
        let histogram = metrics.latency_histogram(1).expect("set ran");
        assert_eq!(histogram[latency_level(30)], sets.calls);
        assert_eq!(metrics.latency_histogram(2), None, "no such command");
        let mut text = String::new();
        metrics.render_commands(&mut text);
        let total = 100 * threads;
        assert!(
            text.contains(&format!("le=\"0.00005\"}} {total}\n")),
            "{text}"
        );
        assert!(text.contains(&format!("_count {total}\n")), "{text}");
    }
}
