//! OBJECT, MEMORY and LATENCY over the wire, against a real `redis-server`: the same
//! requests go to both, and replies must match exactly where docdb reproduces Redis (errors,
//! HELP, encodings, reference counts, missing keys), and in shape where the figures are
//! docdb's own (memory sizes, idle times, latency histograms and samples).

mod common_redis;

use common_redis::{Frame, RespClient, Server, docdb, render, require_redis};

/// A real Redis and docdb, each with a connection.
struct Pair {
    redis: RespClient,
    docdb: RespClient,
    _servers: [Server; 2],
}

impl Pair {
    fn start() -> Pair {
        let (redis, docdb) = (require_redis(&[]), docdb(&[]));
        Pair {
            redis: redis.client(),
            docdb: docdb.client(),
            _servers: [redis, docdb],
        }
    }

    /// Both replies to `args`: Redis's first.
    fn both(&mut self, args: &[&str]) -> (Frame, Frame) {
        let want = self.redis.call(args).expect("redis reply");
        let got = self.docdb.call(args).expect("docdb reply");
        (want, got)
    }

    /// Sends `args` to both and fails unless the replies are equal; returns the reply.
    fn same(&mut self, args: &[&str]) -> Frame {
        let (want, got) = self.both(args);
        assert_eq!(
            want,
            got,
            "{args:?}\n  redis: {}\n  docdb: {}",
            render(&want),
            render(&got)
        );
        want
    }

    /// Sends `args` to both, for setting up; replies must match too.
    fn run(&mut self, args: &[String]) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.same(&args);
    }
}

/// `command key` followed by `items`.
fn with(command: &str, key: &str, items: impl IntoIterator<Item = String>) -> Vec<String> {
    [command.to_string(), key.to_string()]
        .into_iter()
        .chain(items)
        .collect()
}

fn bulk(text: &str) -> Frame {
    Frame::Bulk(text.as_bytes().to_vec())
}

#[test]
fn object_encoding_matches_redis_at_and_across_each_threshold() {
    let mut pair = Pair::start();
    let x = |n: usize| "x".repeat(n);
    for value in [
        "12345".to_string(),
        "-9223372036854775808".into(),
        "9223372036854775808".into(),
        "01".into(),
        "-0".into(),
        " 5".into(),
        "3.5".into(),
        String::new(),
        x(44),
        x(45),
    ] {
        pair.run(&["SET".into(), "s".into(), value.clone()]);
        pair.same(&["OBJECT", "ENCODING", "s"]);
        pair.same(&["OBJECT", "REFCOUNT", "s"]);
    }
    pair.same(&["INCR", "counter"]);
    pair.same(&["OBJECT", "ENCODING", "counter"]);
    // Lists are always quicklists in Redis 7.0.
    pair.run(&with("RPUSH", "l", (0..300).map(|i| i.to_string())));
    pair.same(&["OBJECT", "ENCODING", "l"]);
    // Sets: up to 512 integers, then one more; a non-integer member; a non-canonical one.
    pair.run(&with(
        "SADD",
        "ints",
        (0..512).map(|i| (i * 7 - 100).to_string()),
    ));
    pair.same(&["OBJECT", "ENCODING", "ints"]);
    pair.same(&["SADD", "ints", "100000"]);
    pair.same(&["OBJECT", "ENCODING", "ints"]);
    pair.same(&["SADD", "words", "1", "a"]);
    pair.same(&["OBJECT", "ENCODING", "words"]);
    pair.same(&["SADD", "padded", "1", "01"]);
    pair.same(&["OBJECT", "ENCODING", "padded"]);
    // Hashes: 512 fields, then 513 (the server's default; redis.conf's example says 128);
    // fields and values of 64 bytes, then 65.
    let fields = (0..512).flat_map(|i| [format!("f{i}"), "v".into()]);
    pair.run(&with("HSET", "h", fields));
    pair.same(&["OBJECT", "ENCODING", "h"]);
    pair.same(&["HSET", "h", "f512", "v"]);
    pair.same(&["OBJECT", "ENCODING", "h"]);
    pair.run(&with("HSET", "hf", [x(64), x(64)]));
    pair.same(&["OBJECT", "ENCODING", "hf"]);
    pair.run(&with("HSET", "hf", [x(65), "v".into()]));
    pair.same(&["OBJECT", "ENCODING", "hf"]);
    pair.run(&with("HSET", "hv", ["f".into(), x(65)]));
    pair.same(&["OBJECT", "ENCODING", "hv"]);
    // Sorted sets: 128 members, then 129; members of 64 bytes, then 65.
    let members = (0..128).flat_map(|i| [i.to_string(), format!("m{i}")]);
    pair.run(&with("ZADD", "z", members));
    pair.same(&["OBJECT", "ENCODING", "z"]);
    pair.same(&["ZADD", "z", "1", "m128"]);
    pair.same(&["OBJECT", "ENCODING", "z"]);
    pair.run(&with("ZADD", "zm", ["1".into(), x(64)]));
    pair.same(&["OBJECT", "ENCODING", "zm"]);
    pair.run(&with("ZADD", "zm", ["2".into(), x(65)]));
    pair.same(&["OBJECT", "ENCODING", "zm"]);
    for key in ["l", "ints", "h", "z"] {
        pair.same(&["OBJECT", "REFCOUNT", key]);
    }
}

#[test]
fn object_refcount_help_errors_and_missing_keys_match_redis() {
    let mut pair = Pair::start();
    for value in ["0", "9999", "10000", "-1", "abc"] {
        pair.same(&["SET", "n", value]);
        pair.same(&["OBJECT", "REFCOUNT", "n"]);
    }
    pair.same(&["SADD", "set", "a"]);
    for args in [
        &["OBJECT", "HELP"][..],
        &["object", "help"],
        &["OBJECT", "HELP", "x"],
        &["OBJECT"],
        &["OBJECT", "nosuch"],
        &["OBJECT", "nosuch", "k"],
        &["OBJECT", "ENCODING"],
        &["OBJECT", "ENCODING", "a", "b"],
        &["OBJECT", "REFCOUNT"],
        &["OBJECT", "IDLETIME", "a", "b"],
        &["OBJECT", "FREQ"],
        &["OBJECT", "ENCODING", "missing"],
        &["OBJECT", "REFCOUNT", "missing"],
        &["OBJECT", "IDLETIME", "missing"],
        &["OBJECT", "FREQ", "missing"],
        &["OBJECT", "FREQ", "n"],
        &["OBJECT", "FREQ", "set"],
    ] {
        pair.same(args);
    }
    // Idle time: whole seconds; docdb's counts from the key's last write.
    let (want, got) = pair.both(&["OBJECT", "IDLETIME", "set"]);
    assert!(matches!(want, Frame::Integer(n) if n >= 0), "{want:?}");
    assert!(matches!(got, Frame::Integer(0..=5)), "{got:?}");
}

#[test]
fn memory_usage_stats_help_and_errors_match_redis() {
    let mut pair = Pair::start();
    for setup in [
        &["SET", "s", "value"][..],
        &["RPUSH", "l", "a", "b"],
        &["SADD", "set", "1", "x"],
        &["HSET", "h", "f", "v"],
        &["ZADD", "z", "1", "m"],
    ] {
        pair.same(setup);
    }
    for key in ["s", "l", "set", "h", "z"] {
        let (want, got) = pair.both(&["MEMORY", "USAGE", key]);
        assert!(
            matches!(want, Frame::Integer(n) if n > 0),
            "redis {key}: {want:?}"
        );
        assert!(
            matches!(got, Frame::Integer(n) if n > 0),
            "docdb {key}: {got:?}"
        );
        let (want, got) = pair.both(&["MEMORY", "USAGE", key, "SAMPLES", "0"]);
        assert!(matches!(
            (want, got),
            (Frame::Integer(_), Frame::Integer(_))
        ));
    }
    for args in [
        &["MEMORY", "USAGE", "missing"][..],
        &["MEMORY", "USAGE", "missing", "SAMPLES", "5"],
        &["MEMORY", "USAGE"],
        &["MEMORY", "USAGE", "s", "SAMPLES"],
        &["MEMORY", "USAGE", "s", "SAMPLES", "x"],
        &["MEMORY", "USAGE", "missing", "SAMPLES", "x"],
        &["MEMORY", "USAGE", "s", "SAMPLES", "-1"],
        &["MEMORY", "USAGE", "s", "SAMPLES", "99999999999999999999"],
        &["MEMORY", "USAGE", "s", "COUNT", "1"],
        &["MEMORY", "USAGE", "s", "SAMPLES", "1", "SAMPLES"],
        &["MEMORY", "HELP"],
        &["MEMORY", "HELP", "x"],
        &["MEMORY"],
        &["MEMORY", "nosuch"],
        &["MEMORY", "STATS", "x"],
        &["MEMORY", "DOCTOR", "x"],
        &["MEMORY", "MALLOC-STATS", "x"],
        &["MEMORY", "PURGE"],
        &["MEMORY", "PURGE", "x"],
    ] {
        pair.same(args);
    }
    for sub in ["DOCTOR", "MALLOC-STATS"] {
        let (want, got) = pair.both(&["MEMORY", sub]);
        assert!(matches!(want, Frame::Bulk(_)), "redis {sub}: {want:?}");
        assert!(matches!(got, Frame::Bulk(_)), "docdb {sub}: {got:?}");
    }
    // STATS: Redis's fields in Redis's order (db.0 included, as both have keys there).
    let (want, got) = pair.both(&["MEMORY", "STATS"]);
    assert_eq!(stat_names(&want), stat_names(&got));
    let docdb_keys = stat(&got, "keys.count");
    assert_eq!(docdb_keys, Some(&Frame::Integer(5)), "{}", render(&got));
    assert!(matches!(stat(&got, "total.allocated"), Some(Frame::Integer(n)) if *n > 0));
    // RESP3: a map, with doubles.
    pair.both(&["HELLO", "3"]);
    let (want, got) = pair.both(&["MEMORY", "STATS"]);
    assert!(matches!(want, Frame::Map(_)) && matches!(got, Frame::Map(_)));
    assert!(matches!(
        stat(&got, "dataset.percentage"),
        Some(Frame::Double(_))
    ));
}

/// A reply's field names, in order: a RESP2 flat array's even entries, or a map's keys.
fn stat_names(reply: &Frame) -> Vec<Frame> {
    match reply {
        Frame::Array(items) => items.iter().step_by(2).cloned().collect(),
        Frame::Map(entries) => entries.iter().map(|(k, _)| k.clone()).collect(),
        other => panic!("not a map: {}", render(other)),
    }
}

/// The value of field `name` in a RESP2 flat array or a RESP3 map.
fn stat<'a>(reply: &'a Frame, name: &str) -> Option<&'a Frame> {
    match reply {
        Frame::Array(items) => items
            .chunks(2)
            .find(|kv| kv[0] == bulk(name))
            .map(|kv| &kv[1]),
        Frame::Map(entries) => entries
            .iter()
            .find(|(k, _)| *k == bulk(name))
            .map(|(_, v)| v),
        _ => None,
    }
}

#[test]
fn latency_help_latest_and_errors_match_redis() {
    let mut pair = Pair::start();
    for args in [
        &["LATENCY", "HELP"][..],
        &["latency", "help"],
        &["LATENCY", "HELP", "x"],
        &["LATENCY"],
        &["LATENCY", "nosuch"],
        &["LATENCY", "LATEST"],
        &["LATENCY", "LATEST", "x"],
        &["LATENCY", "HISTORY"],
        &["LATENCY", "HISTORY", "command"],
        &["LATENCY", "HISTORY", "a", "b"],
        &["LATENCY", "RESET"],
        &["LATENCY", "RESET", "command", "fast-command"],
        &["LATENCY", "GRAPH"],
        &["LATENCY", "GRAPH", "command"],
        &["LATENCY", "GRAPH", "a", "b"],
        &["LATENCY", "DOCTOR"],
        &["LATENCY", "DOCTOR", "x"],
        &["LATENCY", "HISTOGRAM", "nosuch"],
        &["CONFIG", "GET", "latency-monitor-threshold"],
    ] {
        pair.same(args);
    }
}

#[test]
fn latency_histogram_counts_each_call_like_redis() {
    let mut pair = Pair::start();
    for i in 0..5 {
        pair.same(&["SET", "k", &i.to_string()]);
    }
    for _ in 0..3 {
        pair.same(&["GET", "k"]);
    }
    for resp3 in [false, true] {
        let (want, got) = pair.both(&["LATENCY", "HISTOGRAM", "set", "GET", "nosuch"]);
        for (name, reply) in [("redis", &want), ("docdb", &got)] {
            let commands = entries(reply, resp3);
            let names: Vec<&Frame> = commands.iter().map(|(k, _)| k).collect();
            assert_eq!(
                names,
                [&bulk("set"), &bulk("get")],
                "{name}: {}",
                render(reply)
            );
            check_histogram(name, &commands[0].1, 5, resp3);
            check_histogram(name, &commands[1].1, 3, resp3);
        }
        if !resp3 {
            pair.both(&["HELLO", "3"]);
        }
    }
    let (_, all) = pair.both(&["LATENCY", "HISTOGRAM"]);
    let names: Vec<Frame> = entries(&all, true).into_iter().map(|(k, _)| k).collect();
    assert!(names.contains(&bulk("set")) && names.contains(&bulk("get")));
}

/// A map's entries: a RESP3 map, or a RESP2 flat array taken in pairs.
fn entries(reply: &Frame, resp3: bool) -> Vec<(Frame, Frame)> {
    match reply {
        Frame::Map(entries) if resp3 => entries.clone(),
        Frame::Array(items) if !resp3 => items
            .chunks(2)
            .map(|kv| (kv[0].clone(), kv[1].clone()))
            .collect(),
        other => panic!(
            "not a {} map: {}",
            if resp3 { "RESP3" } else { "RESP2" },
            render(other)
        ),
    }
}

/// `calls` is `calls`, and `histogram_usec` rises to it at Redis's power-of-two levels.
fn check_histogram(name: &str, reply: &Frame, calls: i64, resp3: bool) {
    let fields = entries(reply, resp3);
    assert_eq!(fields[0], (bulk("calls"), Frame::Integer(calls)), "{name}");
    assert_eq!(fields[1].0, bulk("histogram_usec"), "{name}");
    // hdr's bucket tops at 2^k ns (2^(k-7) wide), in µs; the last where its buckets end.
    let mut levels: Vec<i64> = (10..30)
        .map(|k| ((1 << k) + (1 << (k - 7)) - 1) / 1000)
        .collect();
    levels.push(((1 << 30) - 1) / 1000);
    let mut previous = 0;
    for (level, count) in entries(&fields[1].1, resp3) {
        let (Frame::Integer(level), Frame::Integer(count)) = (level, count) else {
            panic!("{name}: not integers in {}", render(reply));
        };
        assert!(levels.contains(&level), "{name}: level {level}");
        assert!(
            count > previous,
            "{name}: cumulative counts {}",
            render(reply)
        );
        previous = count;
    }
    assert_eq!(previous, calls, "{name}: {}", render(reply));
}

/// A script that keeps the server busy for `ms` milliseconds.
fn busy_script(ms: u32) -> String {
    format!(
        "local t = redis.call('TIME') local start = t[1] * 1e6 + t[2] \
         while true do local n = redis.call('TIME') \
         if n[1] * 1e6 + n[2] - start > {ms}000 then break end end return 1"
    )
}

#[test]
fn latency_monitor_samples_slow_commands_above_its_threshold() {
    let mut pair = Pair::start();
    pair.same(&["CONFIG", "SET", "latency-monitor-threshold", "10"]);
    pair.same(&["EVAL", &busy_script(1), "0"]);
    pair.same(&["LATENCY", "LATEST"]);
    pair.same(&["EVAL", &busy_script(20), "0"]);
    let (want, got) = pair.both(&["LATENCY", "LATEST"]);
    for (name, reply) in [("redis", &want), ("docdb", &got)] {
        let Frame::Array(events) = reply else {
            panic!("{name}: {}", render(reply));
        };
        let [Frame::Array(event)] = &events[..] else {
            panic!("{name}: {}", render(reply));
        };
        assert_eq!(event[0], bulk("command"), "{name}");
        assert!(
            matches!(event[1], Frame::Integer(t) if t > 1_600_000_000),
            "{name}"
        );
        assert!(matches!(event[2], Frame::Integer(20..)), "{name}");
        assert!(matches!(event[3], Frame::Integer(20..)), "{name}");
        assert_eq!(event.len(), 4, "{name}");
    }
    let (want, got) = pair.both(&["LATENCY", "HISTORY", "command"]);
    for (name, reply) in [("redis", &want), ("docdb", &got)] {
        assert!(
            matches!(reply, Frame::Array(samples) if samples.len() == 1),
            "{name}: {}",
            render(reply)
        );
    }
    let (want, got) = pair.both(&["LATENCY", "GRAPH", "command"]);
    for (name, reply) in [("redis", &want), ("docdb", &got)] {
        let Frame::Bulk(text) = reply else {
            panic!("{name}: {}", render(reply));
        };
        let text = String::from_utf8_lossy(text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("command - high "), "{name}: {text}");
        assert_eq!(lines[1], "-".repeat(80), "{name}");
        // One sample: the lowest mark, then its age ("0s", "1s"...) downwards.
        assert_eq!(lines[2..7], [" ", " ", " ", "_", " "], "{name}: {text}");
        assert_eq!(lines.last(), Some(&"s"), "{name}: {text}");
    }
    let (want, got) = pair.both(&["LATENCY", "DOCTOR"]);
    for (name, reply) in [("redis", &want), ("docdb", &got)] {
        let Frame::Bulk(text) = reply else {
            panic!("{name}: {}", render(reply));
        };
        let text = String::from_utf8_lossy(text);
        assert!(
            text.contains("1. command: 1 latency spikes (average "),
            "{name}: {text}"
        );
    }
    pair.same(&["LATENCY", "RESET", "COMMAND"]);
    pair.same(&["LATENCY", "LATEST"]);
    pair.same(&["CONFIG", "SET", "latency-monitor-threshold", "0"]);
}
