//! The latency monitor (LATENCY LATEST, HISTORY, RESET, GRAPH, DOCTOR): events slower than
//! `latency-monitor-threshold` milliseconds, kept as Redis 7.0 keeps them (latency.c): per
//! event, one sample per second (the second's worst), the last [`HISTORY_LEN`] of them, and
//! the worst ever.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Samples kept per event (Redis's `LATENCY_TS_LEN`).
pub const HISTORY_LEN: usize = 160;

/// Columns of LATENCY GRAPH (Redis's `LATENCY_GRAPH_COLS`).
const GRAPH_COLUMNS: usize = 80;

/// One second's worst latency of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Unix seconds.
    pub time: i64,
    /// Milliseconds.
    pub latency_ms: u64,
}

/// An event's samples and its worst latency.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventSeries {
    /// Up to [`HISTORY_LEN`] samples, oldest first.
    pub samples: VecDeque<Sample>,
    /// The worst latency since the event's first sample (or its last reset), milliseconds.
    pub max_ms: u64,
}

impl EventSeries {
    /// Adds a sample; one in the same second as the newest raises that one instead.
    fn add(&mut self, time: i64, latency_ms: u64) {
        self.max_ms = self.max_ms.max(latency_ms);
        if let Some(last) = self.samples.back_mut()
            && last.time == time
        {
            last.latency_ms = last.latency_ms.max(latency_ms);
            return;
        }
        if self.samples.len() == HISTORY_LEN {
            self.samples.pop_front();
        }
        self.samples.push_back(Sample { time, latency_ms });
    }

    /// The newest sample.
    pub fn latest(&self) -> Option<Sample> {
        self.samples.back().copied()
    }
}

/// Latency events above the threshold, by event name.
#[derive(Debug, Default)]
pub struct LatencyMonitor {
    /// `latency-monitor-threshold` in milliseconds; 0 turns the monitor off.
    threshold_ms: AtomicU64,
    events: Mutex<BTreeMap<String, EventSeries>>,
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

    /// Notes that event `name` (`command`, `fast-command`, ...) took `elapsed`: a sample if
    /// its whole milliseconds reach the threshold, as Redis's `latencyAddSampleIfNeeded`.
    pub fn observe(&self, name: &'static str, elapsed: Duration) {
        // Every command passes here: one load when the monitor is off or the command fast.
        let threshold = self.threshold_ms.load(Ordering::Relaxed);
        if threshold == 0 || elapsed < Duration::from_millis(threshold) {
            return;
        }
        let ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        self.add_sample(name, unix_seconds(), ms);
    }

    /// Records `latency_ms` for event `name` at unix second `time`, whatever the threshold.
    pub fn add_sample(&self, name: &str, time: i64, latency_ms: u64) {
        let mut events = self.lock();
        match events.get_mut(name) {
            Some(series) => series.add(time, latency_ms),
            None => {
                let mut series = EventSeries::default();
                series.add(time, latency_ms);
                events.insert(name.to_string(), series);
            }
        }
    }

    /// Every event, by name.
    pub fn events(&self) -> Vec<(String, EventSeries)> {
        let events = self.lock();
        events.iter().map(|(n, s)| (n.clone(), s.clone())).collect()
    }

    /// The event called exactly `name` (HISTORY and GRAPH match case, as Redis's do).
    pub fn event(&self, name: &[u8]) -> Option<EventSeries> {
        let name = std::str::from_utf8(name).ok()?;
        self.lock().get(name).cloned()
    }

    /// Forgets every event; how many there were.
    pub fn reset_all(&self) -> usize {
        std::mem::take(&mut *self.lock()).len()
    }

    /// Forgets the event called `name` in any case (as Redis's RESET); how many it forgot.
    pub fn reset(&self, name: &[u8]) -> usize {
        let mut events = self.lock();
        let before = events.len();
        events.retain(|event, _| !event.as_bytes().eq_ignore_ascii_case(name));
        before - events.len()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, EventSeries>> {
        self.events.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Seconds since the Unix epoch now.
pub fn unix_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// LATENCY GRAPH's text for event `name` at unix second `now`: Redis's header, a rule, and
/// its sparkline of the samples labelled with how long ago each was.
pub fn graph(name: &str, series: &EventSeries, now: i64) -> String {
    let values: Vec<u64> = series.samples.iter().map(|s| s.latency_ms).collect();
    let high = values.iter().copied().max().unwrap_or(0);
    let low = values.iter().copied().min().unwrap_or(0);
    let mut out = format!(
        "{name} - high {high} ms, low {low} ms (all time high {} ms)\n{}\n",
        series.max_ms,
        "-".repeat(GRAPH_COLUMNS)
    );
    let labels: Vec<String> = series.samples.iter().map(|s| ago(now - s.time)).collect();
    sparkline(&mut out, &values, &labels);
    out
}

/// How long ago, as Redis labels graph columns: `12s`, `5m`, `3h`, `2d`.
fn ago(seconds: i64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

/// Redis's filled sparkline (sparkline.c) in blocks of [`GRAPH_COLUMNS`] samples, four rows
/// high, with each sample's label written downwards under a blank line.
fn sparkline(out: &mut String, values: &[u64], labels: &[String]) {
    let min = values.iter().copied().min().unwrap_or(0) as f64;
    let max = values.iter().copied().max().unwrap_or(0) as f64;
    for (block, start) in (0..values.len()).step_by(GRAPH_COLUMNS).enumerate() {
        if block > 0 {
            out.push('\n');
        }
        let end = (start + GRAPH_COLUMNS).min(values.len());
        sparkline_rows(out, &values[start..end], &labels[start..end], min, max);
    }
}

/// Rows of the graph characters (`_`, `o`, `#`, and `|` below them), then the labels.
fn sparkline_rows(out: &mut String, values: &[u64], labels: &[String], min: f64, max: f64) {
    const ROWS: i64 = 4;
    const FILL: [char; 3] = ['_', 'o', '#'];
    let steps = 3 * ROWS;
    let range = if max - min == 0.0 { 1.0 } else { max - min };
    let levels: Vec<i64> = values
        .iter()
        // As C's `(int)(relval*steps)/relmax`: truncated, divided, truncated again.
        .map(|&v| ((((v as f64 - min) * steps as f64).trunc() / range) as i64).clamp(0, steps - 1))
        .collect();
    for row in 0..ROWS {
        let line: String = levels
            .iter()
            .map(|&level| match level - (ROWS - row - 1) * 3 {
                i @ 0..=2 => FILL[i as usize],
                i if i > 2 => '|',
                _ => ' ',
            })
            .collect();
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "{}", " ".repeat(values.len()));
    let tallest = labels.iter().map(String::len).max().unwrap_or(0);
    for i in 0..tallest {
        let line: String = labels
            .iter()
            .map(|l| l.as_bytes().get(i).map_or(' ', |&b| b as char))
            .collect();
        let _ = writeln!(out, "{line}");
    }
}

/// What LATENCY DOCTOR's advice depends on besides the events.
#[derive(Debug, Clone, Copy)]
pub struct DoctorContext {
    /// `latency-monitor-threshold`, milliseconds.
    pub threshold_ms: u64,
    /// `slowlog-log-slower-than`, microseconds (negative: off).
    pub slowlog_us: i64,
    /// The process has transparent huge pages.
    pub huge_pages: bool,
    /// Unix seconds now.
    pub now: i64,
}

/// LATENCY DOCTOR's report on `events`, in Redis's words (latency.c `createLatencyReport`).
pub fn doctor(events: &[(String, EventSeries)], ctx: DoctorContext) -> String {
    if events.is_empty() && ctx.threshold_ms == 0 {
        return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis \
                instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" \
                in order to enable it. If we weren't in a deep space mission I'd suggest to \
                take a look at https://redis.io/topics/latency-monitor.\n"
            .into();
    }
    let mut out = String::new();
    let mut advice = Advice::default();
    for (n, (name, series)) in events.iter().enumerate() {
        if n == 0 {
            out.push_str(
                "Dave, I have observed latency spikes in this Redis instance. You don't mind \
                 talking about it, do you Dave?\n\n",
            );
        }
        describe(&mut out, n + 1, name, series, ctx.now);
        advice.note(name, ctx);
    }
    advice.huge_pages = ctx.huge_pages;
    match (events.is_empty(), advice.any()) {
        (true, false) => out.push_str(
            "Dave, no latency spike was observed during the lifetime of this Redis instance, \
             not in the slightest bit. I honestly think you ought to sit down calmly, take a \
             stress pill, and think things over.\n",
        ),
        (false, false) => out.push_str(
            "\nWhile there are latency events logged, I'm not able to suggest any easy fix. \
             Please use the Redis community to get some help, providing this report in your \
             help request.\n",
        ),
        _ => advice.write(&mut out, ctx.threshold_ms),
    }
    out
}

/// One event's line: its samples' count, average, mean deviation, period and worst.
fn describe(out: &mut String, n: usize, name: &str, series: &EventSeries, now: i64) {
    let count = series.samples.len() as u64;
    let sum: u64 = series.samples.iter().map(|s| s.latency_ms).sum();
    let avg = sum.checked_div(count).unwrap_or(0);
    let deviation: u64 = series
        .samples
        .iter()
        .map(|s| s.latency_ms.abs_diff(avg))
        .sum();
    let mad = deviation.checked_div(count).unwrap_or(0);
    let oldest = series.samples.iter().map(|s| s.time).min().unwrap_or(now);
    let period = (now - oldest).max(1);
    let _ = writeln!(
        out,
        "{n}. {name}: {count} latency spikes (average {avg}ms, mean deviation {mad}ms, period \
         {:.2} sec). Worst all time event {}ms.",
        period as f64 / count.max(1) as f64,
        series.max_ms
    );
}

/// The advice LATENCY DOCTOR gives, from the events docdb can have.
#[derive(Debug, Default)]
struct Advice {
    slowlog_enable: bool,
    slowlog_tune: bool,
    slowlog_inspect: bool,
    scheduler: bool,
    large_objects: bool,
    huge_pages: bool,
}

impl Advice {
    fn note(&mut self, event: &str, ctx: DoctorContext) {
        if event.eq_ignore_ascii_case("command") {
            if ctx.slowlog_us < 0 {
                self.slowlog_enable = true;
            } else if (ctx.slowlog_us / 1000) as u64 > ctx.threshold_ms {
                self.slowlog_tune = true;
            }
            self.slowlog_inspect = true;
            self.large_objects = true;
        }
        if event.eq_ignore_ascii_case("fast-command") {
            self.scheduler = true;
        }
    }

    fn any(&self) -> bool {
        self.slowlog_enable
            || self.slowlog_tune
            || self.slowlog_inspect
            || self.scheduler
            || self.large_objects
            || self.huge_pages
    }

    /// The advice in Redis's order.
    fn write(&self, out: &mut String, threshold_ms: u64) {
        let slower_than = threshold_ms.saturating_mul(1000);
        out.push_str("\nI have a few advices for you:\n\n");
        if self.slowlog_enable {
            let _ = writeln!(
                out,
                "- There are latency issues with potentially slow commands you are using. Try \
                 to enable the Slow Log Redis feature using the command 'CONFIG SET \
                 slowlog-log-slower-than {slower_than}'. If the Slow log is disabled Redis is \
                 not able to log slow commands execution for you."
            );
        }
        if self.slowlog_tune {
            let _ = writeln!(
                out,
                "- Your current Slow Log configuration only logs events that are slower than \
                 your configured latency monitor threshold. Please use 'CONFIG SET \
                 slowlog-log-slower-than {slower_than}'."
            );
        }
        if self.slowlog_inspect {
            out.push_str(
                "- Check your Slow Log to understand what are the commands you are running \
                 which are too slow to execute. Please check https://redis.io/commands/slowlog \
                 for more information.\n",
            );
        }
        if self.scheduler {
            out.push_str(SCHEDULER_ADVICE);
        }
        if self.large_objects {
            out.push_str(
                "- Deleting, expiring or evicting (because of maxmemory policy) large objects \
                 is a blocking operation. If you have very large objects that are often \
                 deleted, expired, or evicted, try to fragment those objects into multiple \
                 smaller objects.\n",
            );
        }
        if self.huge_pages {
            out.push_str(HUGE_PAGES_ADVICE);
        }
    }
}

const SCHEDULER_ADVICE: &str = "- The system is slow to execute Redis code paths not \
containing system calls. This usually means the system does not provide Redis CPU time to run \
for long periods. You should try to:\n  1) Lower the system load.\n  2) Use a computer / VM \
just for Redis if you are running other software in the same system.\n  3) Check if you have \
a \"noisy neighbour\" problem.\n  4) Check with 'redis-cli --intrinsic-latency 100' what is the \
intrinsic latency in your system.\n  5) Check if the problem is allocator-related by \
recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create \
fragmentation problems.\n";

const HUGE_PAGES_ADVICE: &str = "- I detected a non zero amount of anonymous huge pages used \
by your process. This creates very serious latency events in different conditions, especially \
when Redis is persisting on disk. To disable THP support use the command 'echo never > \
/sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so \
that the command will be executed again after a reboot. Note that even if you have already \
disabled THP, you still need to restart the Redis process to get rid of the huge pages already \
created.\n";

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples at seconds `start`, `start + 1`, ... with these latencies.
    fn series(start: i64, latencies: &[u64]) -> EventSeries {
        let mut series = EventSeries::default();
        for (i, &ms) in latencies.iter().enumerate() {
            series.add(start + i as i64, ms);
        }
        series
    }

    #[test]
    fn nothing_is_sampled_while_off_or_below_the_threshold() {
        let monitor = LatencyMonitor::default();
        monitor.observe("command", Duration::from_secs(1));
        assert!(monitor.events().is_empty());
        monitor.set_threshold_ms(5);
        monitor.observe("command", Duration::from_micros(4999));
        assert!(monitor.events().is_empty());
        monitor.observe("command", Duration::from_micros(5999));
        let events = monitor.events();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].0, "command");
        assert_eq!(events[0].1.latest().map(|s| s.latency_ms), Some(5));
    }

    #[test]
    fn one_sample_per_second_keeps_the_seconds_worst() {
        let monitor = LatencyMonitor::default();
        monitor.add_sample("command", 100, 7);
        monitor.add_sample("command", 100, 3);
        monitor.add_sample("command", 100, 9);
        monitor.add_sample("command", 101, 2);
        let series = monitor.event(b"command").expect("event");
        let samples: Vec<_> = series
            .samples
            .iter()
            .map(|s| (s.time, s.latency_ms))
            .collect();
        assert_eq!(samples, [(100, 9), (101, 2)]);
        assert_eq!(series.max_ms, 9);
        assert_eq!(monitor.event(b"COMMAND"), None, "lookups match case");
    }

    #[test]
    fn history_keeps_the_newest_samples_and_the_all_time_worst() {
        let latencies: Vec<u64> = (0..200).map(|i| if i == 3 { 1000 } else { i }).collect();
        let series = series(1, &latencies);
        assert_eq!(series.samples.len(), HISTORY_LEN);
        assert_eq!(series.samples.front().map(|s| s.time), Some(41));
        assert_eq!(
            series.latest(),
            Some(Sample {
                time: 200,
                latency_ms: 199
            })
        );
        assert_eq!(series.max_ms, 1000);
    }

    #[test]
    fn reset_forgets_named_events_in_any_case_or_all() {
        let monitor = LatencyMonitor::default();
        monitor.add_sample("command", 1, 1);
        monitor.add_sample("fast-command", 1, 1);
        assert_eq!(monitor.reset(b"COMMAND"), 1);
        assert_eq!(monitor.reset(b"command"), 0);
        assert_eq!(monitor.events().len(), 1);
        assert_eq!(monitor.reset_all(), 1);
        assert!(monitor.events().is_empty());
    }

    #[test]
    fn graph_is_redis_sparkline() {
        // LATENCY HISTORY and GRAPH of redis-server 7.0.15 after DEBUG SLEEPs a second apart.
        let series = series(1000, &[5, 12, 3, 30, 7, 21, 2, 9, 15, 6]);
        let want = "command - high 30 ms, low 2 ms (all time high 30 ms)\n".to_string()
            + &"-".repeat(80)
            + "\n   #      \n   | #    \n o | | _# \no|_|#|_||o\n          \n9876543210\nssssssssss\n";
        assert_eq!(graph("command", &series, 1009), want);
    }

    #[test]
    fn graph_labels_age_in_units_and_wraps_at_80_columns() {
        let series = series(0, &[4; 81]);
        let text = graph("e", &series, 80);
        let lines: Vec<&str> = text.lines().collect();
        // Header, rule, 4 rows (flat at the bottom), a blank line, the labels downwards
        // ("1m" for the first 21 columns, then "59s".."1s"), a blank line between blocks,
        // then the 81st column's block.
        assert_eq!(lines[2], " ".repeat(80));
        assert_eq!(lines[5], "_".repeat(80));
        assert_eq!(lines[6], " ".repeat(80));
        let column = |i: usize| -> String { lines[7..10].iter().map(|l| &l[i..=i]).collect() };
        assert_eq!(column(20), "1m ");
        assert_eq!(column(21), "59s");
        assert_eq!(lines[10], "");
        assert_eq!(lines[14], "_");
        assert_eq!(lines[15], " ");
        assert_eq!(lines[16..], ["0", "s"]);
        assert_eq!(ago(59), "59s");
        assert_eq!(ago(60), "1m");
        assert_eq!(ago(7200), "2h");
        assert_eq!(ago(86_400 * 3), "3d");
    }

    #[test]
    fn doctor_reports_as_redis() {
        let off = DoctorContext {
            threshold_ms: 0,
            slowlog_us: 10_000,
            huge_pages: false,
            now: 1009,
        };
        assert!(doctor(&[], off).starts_with("I'm sorry, Dave"));
        let on = DoctorContext {
            threshold_ms: 1,
            ..off
        };
        assert!(doctor(&[], on).starts_with("Dave, no latency spike was observed"));
        // redis-server 7.0.15's report for the samples of `graph_is_redis_sparkline`.
        let events = [(
            "command".to_string(),
            series(1000, &[5, 12, 3, 30, 7, 21, 2, 9, 15, 6]),
        )];
        let report = doctor(&events, on);
        let want = "Dave, I have observed latency spikes in this Redis instance. You don't mind \
                    talking about it, do you Dave?\n\n1. command: 10 latency spikes (average \
                    11ms, mean deviation 6ms, period 0.90 sec). Worst all time event 30ms.\n\n\
                    I have a few advices for you:\n\n- Your current Slow Log configuration only \
                    logs events that are slower than your configured latency monitor threshold. \
                    Please use 'CONFIG SET slowlog-log-slower-than 1000'.\n- Check your Slow Log";
        assert!(report.starts_with(want), "{report}");
        assert!(
            report.ends_with("into multiple smaller objects.\n"),
            "{report}"
        );
    }
}
