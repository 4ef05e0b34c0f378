//! Counters for the Prometheus endpoint and INFO: commands, latency, connections.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (µs) of the command latency histogram's buckets.
const BUCKETS_US: [u64; 12] = [
    10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 100_000, 1_000_000,
];

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

/// One command's counters.
#[derive(Default)]
struct CommandStat {
    calls: AtomicU64,
    errors: AtomicU64,
    usec: AtomicU64,
}

/// Server-wide counters.
pub struct Metrics {
    names: Vec<&'static str>,
    commands: Vec<CommandStat>,
    buckets: [AtomicU64; BUCKETS_US.len()],
    latency_sum_us: AtomicU64,
    latency_count: AtomicU64,
    /// Connections accepted since start.
    pub connections_total: AtomicU64,
    /// Connections refused (max clients).
    pub connections_rejected: AtomicU64,
    /// Connections closed for protocol errors or over-limit requests.
    pub protocol_errors: AtomicU64,
}

impl Metrics {
    /// Counters for the commands `names` (indexed by command id).
    pub fn new(names: Vec<&'static str>) -> Self {
        Metrics {
            commands: names.iter().map(|_| CommandStat::default()).collect(),
            names,
            buckets: Default::default(),
            latency_sum_us: AtomicU64::new(0),
            latency_count: AtomicU64::new(0),
            connections_total: AtomicU64::new(0),
            connections_rejected: AtomicU64::new(0),
            protocol_errors: AtomicU64::new(0),
        }
    }

    /// Counts one run of command `id`.
    pub fn record(&self, id: usize, elapsed: Duration, error: bool) {
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        if let Some(c) = self.commands.get(id) {
            c.calls.fetch_add(1, Ordering::Relaxed);
            c.errors.fetch_add(u64::from(error), Ordering::Relaxed);
            c.usec.fetch_add(us, Ordering::Relaxed);
        }
        if let Some(i) = BUCKETS_US.iter().position(|&b| us <= b) {
            self.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        self.latency_sum_us.fetch_add(us, Ordering::Relaxed);
        self.latency_count.fetch_add(1, Ordering::Relaxed);
    }

    /// Counters of the commands that ran, by name.
    pub fn commands(&self) -> Vec<(&'static str, CommandCounters)> {
        let mut all: Vec<_> = self
            .names
            .iter()
            .zip(&self.commands)
            .map(|(name, c)| {
                let counters = CommandCounters {
                    calls: c.calls.load(Ordering::Relaxed),
                    errors: c.errors.load(Ordering::Relaxed),
                    usec: c.usec.load(Ordering::Relaxed),
                };
                (*name, counters)
            })
            .filter(|(_, c)| c.calls > 0)
            .collect();
        all.sort_by_key(|(name, _)| *name);
        all
    }

    /// Commands run since start.
    pub fn total_commands(&self) -> u64 {
        self.latency_count.load(Ordering::Relaxed)
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
        for (bound, count) in BUCKETS_US.iter().zip(&self.buckets) {
            cumulative += count.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "docdb_command_duration_seconds_bucket{{le=\"{}\"}} {cumulative}",
                *bound as f64 / 1e6
            );
        }
        let count = self.latency_count.load(Ordering::Relaxed);
        let sum = self.latency_sum_us.load(Ordering::Relaxed) as f64 / 1e6;
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
