//! OBJECT, MEMORY and LATENCY: what Redis tells about keys, memory and latency events.
//!
//! docdb keeps keys as DocDB documents, not in Redis's in-memory encodings, so these reply
//! in Redis 7.0's shapes with docdb's figures: OBJECT ENCODING names the encoding Redis
//! would pick for the value as it is now, OBJECT IDLETIME counts from the key's last root
//! write (reads are not tracked), MEMORY USAGE is the bytes the key's records take in the
//! engine, and MEMORY STATS reports the process and RocksDB where Redis reports its
//! allocator.

use docdb::reader::ChildRange;
use dockv::KeyEntryValue;
use engine::{Engine, EngineIterator, IterOptions};

use super::hashes::leaf_bytes;
use super::{ADMIN, Ctx, READONLY, Spec, error_text, help_reply, is, ok, spec, subcommand};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::latency::{self, DoctorContext, EventSeries, LatencyMonitor};
use crate::metrics::{LATENCY_LEVELS, latency_level_usec};
use crate::number::{int_arg, parse_i64};
use crate::store::{self, KeyInfo, Reads, RedisType, Store};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("object", -2, READONLY, 0, object),
        spec("memory", -2, 0, 0, memory),
        spec("latency", -2, ADMIN, 0, latency),
    ]
}

/// A subcommand: its name and Redis 7.0 arity (the command's and its own name counted).
type Sub = (&'static str, i32);

const OBJECT_SUBS: &[Sub] = &[
    ("encoding", 3),
    ("freq", 3),
    ("idletime", 3),
    ("refcount", 3),
    ("help", 2),
];

const MEMORY_SUBS: &[Sub] = &[
    ("doctor", 2),
    ("malloc-stats", 2),
    ("purge", 2),
    ("stats", 2),
    ("usage", -3),
    ("help", 2),
];

const LATENCY_SUBS: &[Sub] = &[
    ("doctor", 2),
    ("graph", 3),
    ("histogram", -2),
    ("history", 3),
    ("latest", 2),
    ("reset", -2),
    ("help", 2),
];

// ---- OBJECT ----

/// Redis 7.0's compiled-in defaults (redis.conf's example says 128 for hashes; the server
/// without a file uses 512). Sets of at most this many integers are intsets
/// (`set-max-intset-entries`) ...
const MAX_INTSET_ENTRIES: usize = 512;
/// ... hashes of at most this many fields are listpacks (`hash-max-listpack-entries`) ...
const MAX_HASH_LISTPACK_ENTRIES: usize = 512;
/// ... and sorted sets of at most this many members (`zset-max-listpack-entries`) ...
const MAX_ZSET_LISTPACK_ENTRIES: usize = 128;
/// ... each of at most this many bytes (`hash-max-listpack-value`, `zset-max-listpack-value`).
const MAX_LISTPACK_VALUE: usize = 64;
/// Strings of at most this many bytes are allocated with their object (`embstr`).
const MAX_EMBSTR_LEN: usize = 44;

const FREQ_ERROR: &str = "An LFU maxmemory policy is not selected, access frequency not \
                          tracked. Please note that when switching between policies at \
                          runtime LRU and LFU data will take some time to adjust.";

const OBJECT_HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
];

/// OBJECT ENCODING|REFCOUNT|IDLETIME|FREQ key, OBJECT HELP. A missing key is nil for each.
fn object<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let sub = subcommand("object", OBJECT_SUBS, ctx.arg(1), ctx.args.len())?;
    if sub == "help" {
        return Ok(help_reply(OBJECT_HELP));
    }
    let dk = ctx.key(2);
    let mut r = ctx.reads(ctx.read_time());
    let Some(info) = r.key_info(&dk)? else {
        return Ok(Frame::Null);
    };
    match sub {
        "encoding" => Ok(Frame::Bulk(encoding(&mut r, &dk, &info)?.into())),
        "refcount" => Ok(Frame::Integer(refcount(&info))),
        "idletime" => Ok(Frame::Integer(idle_seconds(&info))),
        // docdb evicts nothing, so no LFU policy is ever selected.
        _ => Err(CmdError::err(FREQ_ERROR)),
    }
}

/// The encoding Redis 7.0 would use for the key's value as it is now (Redis never goes
/// back to a compact encoding once a key outgrew it; docdb does not know a key's past).
fn encoding<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    info: &KeyInfo,
) -> CmdResult<&'static str> {
    Ok(match info.kind {
        RedisType::String => string_encoding(&info.string_value()),
        RedisType::List => "quicklist",
        RedisType::Set => set_encoding(&first_children(r, dk, MAX_INTSET_ENTRIES + 1)?),
        RedisType::Hash => hash_encoding(&first_children(r, dk, MAX_HASH_LISTPACK_ENTRIES + 1)?),
        RedisType::SortedSet => {
            let index = store::path(dk, &[KeyEntryValue::SsReverse]);
            zset_encoding(&first_children(r, &index, MAX_ZSET_LISTPACK_ENTRIES + 1)?)
        }
        // Not a Redis type: a map ordered by timestamp, as a sorted set's skiplist.
        RedisType::TimeSeries => "skiplist",
        RedisType::Stream => "stream",
    })
}

/// Up to `limit` children of `path` with string names: (name, value bytes). Enough to tell
/// whether a collection is over its compact encoding's size without reading all of it.
fn first_children<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    path: &[u8],
    limit: usize,
) -> CmdResult<Vec<(Vec<u8>, Vec<u8>)>> {
    let range = ChildRange {
        limit: Some(limit),
        ..ChildRange::default()
    };
    Ok(r.children(path, &range)?
        .into_iter()
        .filter_map(|(key, value)| match key {
            KeyEntryValue::String(name, _) => Some((name, leaf_bytes(&value))),
            _ => None,
        })
        .collect())
}

/// `int` for a canonical integer in i64 (Redis's `string2l` on at most 20 bytes), `embstr`
/// up to 44 bytes, else `raw`.
fn string_encoding(value: &[u8]) -> &'static str {
    if value.len() <= 20 && parse_i64(value).is_some() {
        "int"
    } else if value.len() <= MAX_EMBSTR_LEN {
        "embstr"
    } else {
        "raw"
    }
}

/// `intset` while every member is a canonical integer and there are at most 512.
fn set_encoding(members: &[(Vec<u8>, Vec<u8>)]) -> &'static str {
    let ints = members.iter().all(|(m, _)| parse_i64(m).is_some());
    if ints && members.len() <= MAX_INTSET_ENTRIES {
        "intset"
    } else {
        "hashtable"
    }
}

/// `listpack` for at most 512 fields, each field and value of at most 64 bytes.
fn hash_encoding(fields: &[(Vec<u8>, Vec<u8>)]) -> &'static str {
    let small = |b: &Vec<u8>| b.len() <= MAX_LISTPACK_VALUE;
    let few = fields.len() <= MAX_HASH_LISTPACK_ENTRIES;
    if few && fields.iter().all(|(f, v)| small(f) && small(v)) {
        "listpack"
    } else {
        "hashtable"
    }
}

/// `listpack` for at most 128 members of at most 64 bytes each (from the member index).
fn zset_encoding(members: &[(Vec<u8>, Vec<u8>)]) -> &'static str {
    let small = members.iter().all(|(m, _)| m.len() <= MAX_LISTPACK_VALUE);
    if small && members.len() <= MAX_ZSET_LISTPACK_ENTRIES {
        "listpack"
    } else {
        "skiplist"
    }
}

/// Redis shares one object among all the strings holding an integer 0..9999, whose count
/// of references it reports as `INT_MAX`; every other value has one.
fn refcount(info: &KeyInfo) -> i64 {
    let shared = info.kind == RedisType::String
        && parse_i64(&info.string_value()).is_some_and(|n| (0..10_000).contains(&n));
    if shared { i64::from(i32::MAX) } else { 1 }
}

/// Seconds since the key's root record was written (docdb does not track reads).
fn idle_seconds(info: &KeyInfo) -> i64 {
    let written = info.record.time.ht.physical_micros() / 1_000_000;
    (latency::unix_seconds() - i64::try_from(written).unwrap_or(i64::MAX)).max(0)
}

// ---- MEMORY ----

const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
];

/// MEMORY USAGE|STATS|DOCTOR|MALLOC-STATS|PURGE|HELP.
fn memory<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    match subcommand("memory", MEMORY_SUBS, ctx.arg(1), ctx.args.len())? {
        "usage" => memory_usage(ctx),
        "stats" => memory_stats(ctx),
        "doctor" => memory_doctor(ctx),
        "malloc-stats" => Ok(Frame::Verbatim(malloc_stats(ctx.store()).into_bytes())),
        // The allocator returns freed memory by itself; nothing to ask it.
        "purge" => Ok(ok()),
        _ => Ok(help_reply(MEMORY_HELP)),
    }
}

/// MEMORY USAGE key [SAMPLES n]: the bytes of the key's records in the engine, nil for a
/// missing key. SAMPLES is checked as Redis checks it; every record is counted.
fn memory_usage<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    for option in ctx.args[3..].chunks(2) {
        let [name, count] = option else {
            return Err(CmdError::Syntax);
        };
        if !is(name, "samples") || int_arg(count)? < 0 {
            return Err(CmdError::Syntax);
        }
    }
    let dk = ctx.key(2);
    if ctx.key_info(&dk, ctx.read_time())?.is_none() {
        return Ok(Frame::Null);
    }
    Ok(integer(stored_bytes(ctx.store(), &dk)?))
}

/// The bytes of the document at `dk` in the engine: every record's key and value,
/// including versions and tombstones that compaction has not dropped yet.
fn stored_bytes<E: Engine>(store: &Store<E>, dk: &[u8]) -> CmdResult<u64> {
    // DocKeys are prefix-free: every record under `dk` is its document's.
    let mut upper = dk.to_vec();
    upper.push(0xFF);
    let options = IterOptions::new().lower(dk).upper(upper).fill_cache(false);
    let mut iter = store
        .docdb()
        .engine()
        .iterator(options)
        .map_err(docdb::Error::from)?;
    iter.seek(dk);
    let mut total = 0u64;
    while iter.valid().map_err(docdb::Error::from)? {
        total += (iter.key().len() + iter.value().len()) as u64;
        iter.next();
    }
    Ok(total)
}

/// What MEMORY STATS and MALLOC-STATS report of the process and the engine, in bytes.
struct MemoryFigures {
    /// Resident set size now.
    rss: u64,
    /// Highest resident set size so far.
    peak_rss: u64,
    /// RocksDB's memtables.
    memtables: u64,
    /// RocksDB's block cache in use.
    block_cache: u64,
}

impl MemoryFigures {
    fn read<E: Engine>(store: &Store<E>) -> Self {
        let rss = proc_kb("/proc/self/status", "VmRSS:").unwrap_or(0);
        let stats = store.docdb().engine().statistics().unwrap_or_default();
        let counter = |name: &str| stats.counter(name).unwrap_or(0);
        MemoryFigures {
            rss,
            peak_rss: proc_kb("/proc/self/status", "VmHWM:").unwrap_or(0).max(rss),
            memtables: counter("rocksdb.cur-size-all-mem-tables"),
            block_cache: counter("rocksdb.block-cache-usage"),
        }
    }
}

/// A `Field:   123 kB` line of a /proc file, in bytes.
fn proc_kb(file: &str, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line[field.len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

fn integer(n: u64) -> Frame {
    Frame::Integer(i64::try_from(n).unwrap_or(i64::MAX))
}

/// MEMORY STATS: Redis's fields in its order. The process's resident memory stands for
/// Redis's allocations, RocksDB's memtables and block cache for its overhead; what docdb
/// has no counterpart of (replication, AOF and client buffers, hash tables) is 0.
fn memory_stats<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let figures = MemoryFigures::read(ctx.store());
    let dbs = keys_per_db(ctx, u64::MAX)?;
    Ok(Frame::Map(
        stats_fields(&figures, &dbs)
            .into_iter()
            .map(|(k, v)| (bulk(&k), v))
            .collect(),
    ))
}

/// MEMORY STATS's fields for `m` and the key counts of the databases that have keys.
fn stats_fields(m: &MemoryFigures, dbs: &[(String, u64)]) -> Vec<(String, Frame)> {
    let mut fields: Vec<(String, Frame)> = [
        ("peak.allocated", m.peak_rss),
        ("total.allocated", m.rss),
        ("startup.allocated", 0),
        ("replication.backlog", 0),
        ("clients.slaves", 0),
        ("clients.normal", 0),
        ("cluster.links", 0),
        ("aof.buffer", 0),
        ("lua.caches", 0),
        ("functions.caches", 0),
    ]
    .into_iter()
    .map(|(name, n)| (name.to_string(), integer(n)))
    .collect();
    for (db, _) in dbs {
        let tables = ["main", "expires", "slot-to-keys"]
            .map(|t| (bulk(&format!("overhead.hashtable.{t}")), Frame::Integer(0)));
        fields.push((format!("db.{db}"), Frame::Map(tables.into())));
    }
    let keys = dbs.iter().map(|(_, n)| n).sum();
    fields.extend(dataset_fields(m, keys));
    fields.extend(allocator_fields(m));
    fields
}

/// From `overhead.total` to `peak.percentage`.
fn dataset_fields(m: &MemoryFigures, keys: u64) -> Vec<(String, Frame)> {
    let overhead = m.memtables + m.block_cache;
    let dataset = m.rss.saturating_sub(overhead);
    // Redis's percentages are C floats.
    let percent =
        |part: u64, whole: u64| Frame::Double(f64::from(part as f32 * 100.0 / whole.max(1) as f32));
    let per_key = m.rss.checked_div(keys).unwrap_or(0);
    vec![
        ("overhead.total".into(), integer(overhead)),
        ("keys.count".into(), integer(keys)),
        ("keys.bytes-per-key".into(), integer(per_key)),
        ("dataset.bytes".into(), integer(dataset)),
        ("dataset.percentage".into(), percent(dataset, m.rss)),
        ("peak.percentage".into(), percent(m.rss, m.peak_rss)),
    ]
}

/// The allocator's figures: the resident memory for all three, no fragmentation.
fn allocator_fields(m: &MemoryFigures) -> Vec<(String, Frame)> {
    let mut fields: Vec<(String, Frame)> = ["allocated", "active", "resident"]
        .into_iter()
        .map(|name| (format!("allocator.{name}"), integer(m.rss)))
        .collect();
    for name in ["allocator-fragmentation", "allocator-rss", "rss-overhead"] {
        fields.push((format!("{name}.ratio"), Frame::Double(1.0)));
        fields.push((format!("{name}.bytes"), Frame::Integer(0)));
    }
    fields.push(("fragmentation".into(), Frame::Double(1.0)));
    fields.push(("fragmentation.bytes".into(), Frame::Integer(0)));
    fields
}

fn bulk(text: &str) -> Frame {
    Frame::Bulk(text.as_bytes().to_vec())
}

/// Keys of each database that has any (as INFO's keyspace), counting at most `limit` per
/// database.
fn keys_per_db<E: Engine>(ctx: &Ctx<'_, '_, E>, limit: u64) -> CmdResult<Vec<(String, u64)>> {
    let store = ctx.store();
    let now = ctx.read_time();
    let mut out = Vec::new();
    for (name, db) in store.db_names().into_iter().zip(store.db_ids()) {
        let mut keys = 0u64;
        store.scan_keys(db, None, now, |_, _, _| {
            keys += 1;
            keys < limit
        })?;
        if keys > 0 {
            out.push((name, keys));
        }
    }
    Ok(out)
}

/// MEMORY DOCTOR: Redis's words for an empty instance, or for one without issues (docdb
/// has none of the allocator and buffer issues Redis looks for).
fn memory_doctor<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let text = if keys_per_db(ctx, 1)?.is_empty() {
        "Hi Sam, this instance is empty or is using very little memory, my issues detector \
         can't be used in these conditions. Please, leave for your mission on Earth and fill \
         it with some data. The new Sam and I will be back to our programming as soon as I \
         finished rebooting.\n"
    } else {
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what \
         occurs on this base.\n"
    };
    Ok(Frame::Verbatim(text.as_bytes().to_vec()))
}

/// MEMORY MALLOC-STATS: docdb's memory figures, framed as jemalloc frames its report.
fn malloc_stats<E: Engine>(store: &Store<E>) -> String {
    let m = MemoryFigures::read(store);
    format!(
        "___ Begin docdb memory statistics ___\nprocess.rss: {}\nprocess.peak_rss: {}\n\
         rocksdb.cur-size-all-mem-tables: {}\nrocksdb.block-cache-usage: {}\n\
         ___ End docdb memory statistics ___\n",
        m.rss, m.peak_rss, m.memtables, m.block_cache
    )
}

// ---- LATENCY ----

const LATENCY_HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the \
     specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
];

/// LATENCY LATEST|HISTORY|RESET|GRAPH|DOCTOR|HISTOGRAM|HELP.
fn latency<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let monitor = &ctx.core.latency;
    match subcommand("latency", LATENCY_SUBS, ctx.arg(1), ctx.args.len())? {
        "latest" => Ok(latest(monitor)),
        "history" => Ok(history(monitor.event(ctx.arg(2)).unwrap_or_default())),
        "reset" if ctx.args.len() == 2 => Ok(integer(monitor.reset_all() as u64)),
        "reset" => {
            let forgot: usize = ctx.args[2..].iter().map(|e| monitor.reset(e)).sum();
            Ok(integer(forgot as u64))
        }
        "graph" => graph(monitor, ctx.arg(2)),
        "doctor" => Ok(doctor(ctx)),
        "histogram" => Ok(histogram(ctx)),
        _ => Ok(help_reply(LATENCY_HELP)),
    }
}

/// LATENCY LATEST: per event, its name, newest sample's time and latency, and worst.
fn latest(monitor: &LatencyMonitor) -> Frame {
    let events = monitor.events().into_iter().filter_map(|(name, series)| {
        let sample = series.latest()?;
        Some(Frame::Array(vec![
            Frame::Bulk(name.into_bytes()),
            Frame::Integer(sample.time),
            integer(sample.latency_ms),
            integer(series.max_ms),
        ]))
    });
    Frame::Array(events.collect())
}

/// LATENCY HISTORY: the event's samples, oldest first, as `[time, latency]` pairs.
fn history(series: EventSeries) -> Frame {
    let samples = series
        .samples
        .iter()
        .map(|s| Frame::Array(vec![Frame::Integer(s.time), integer(s.latency_ms)]));
    Frame::Array(samples.collect())
}

/// LATENCY GRAPH event.
fn graph(monitor: &LatencyMonitor, event: &[u8]) -> CmdResult<Frame> {
    let Some(series) = monitor.event(event) else {
        return Err(CmdError::err(format!(
            "No samples available for event '{}'",
            error_text(event, usize::MAX)
        )));
    };
    let name = String::from_utf8_lossy(event);
    let text = latency::graph(&name, &series, latency::unix_seconds());
    Ok(Frame::Verbatim(text.into_bytes()))
}

/// LATENCY DOCTOR.
fn doctor<E: Engine>(ctx: &Ctx<'_, '_, E>) -> Frame {
    let core = ctx.core;
    let context = DoctorContext {
        threshold_ms: core.latency.threshold_ms(),
        slowlog_us: core.slowlog.slower_than_us(),
        huge_pages: proc_kb("/proc/self/smaps_rollup", "AnonHugePages:").is_some_and(|b| b > 0),
        now: latency::unix_seconds(),
    };
    let report = latency::doctor(&core.latency.events(), context);
    Frame::Verbatim(report.into_bytes())
}

/// LATENCY HISTOGRAM [command ...]: per command that ran (of those named, unknown names
/// skipped), its calls and their cumulative counts by power-of-two microsecond level.
fn histogram<E: Engine>(ctx: &Ctx<'_, '_, E>) -> Frame {
    let metrics = &ctx.core.metrics;
    let histograms = if ctx.args.len() == 2 {
        metrics.latency_histograms()
    } else {
        let table = &ctx.core.table;
        let named = ctx.args[2..].iter().filter_map(|name| table.get(name));
        named
            .filter_map(|spec| Some((spec.name, metrics.latency_histogram(spec.id)?)))
            .collect()
    };
    Frame::Map(
        histograms
            .iter()
            .map(|(name, levels)| (bulk(name), cumulative(levels)))
            .collect(),
    )
}

/// One command's `calls` and `histogram_usec` (level → calls up to it), listing the levels
/// that have calls, as Redis does.
fn cumulative(levels: &[u64; LATENCY_LEVELS]) -> Frame {
    let mut calls = 0;
    let mut buckets = Vec::new();
    for (level, &n) in levels.iter().enumerate() {
        if n > 0 {
            calls += n;
            buckets.push((integer(latency_level_usec(level)), integer(calls)));
        }
    }
    Frame::Map(vec![
        (bulk("calls"), integer(calls)),
        (bulk("histogram_usec"), Frame::Map(buckets)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(names: &[&[u8]]) -> Vec<(Vec<u8>, Vec<u8>)> {
        names.iter().map(|n| (n.to_vec(), Vec::new())).collect()
    }

    #[test]
    fn strings_are_int_embstr_or_raw() {
        for (value, want) in [
            (&b"12345"[..], "int"),
            (b"-9223372036854775808", "int"),
            (b"9223372036854775808", "embstr"),
            (b"01", "embstr"),
            (b"-0", "embstr"),
            (b"+5", "embstr"),
            (b" 5", "embstr"),
            (b"", "embstr"),
        ] {
            assert_eq!(string_encoding(value), want, "{value:?}");
        }
        assert_eq!(string_encoding(&[b'x'; 44]), "embstr");
        assert_eq!(string_encoding(&[b'x'; 45]), "raw");
    }

    #[test]
    fn sets_are_intsets_while_small_and_all_integers() {
        assert_eq!(set_encoding(&named(&[b"1", b"-2", b"300"])), "intset");
        assert_eq!(set_encoding(&named(&[b"1", b"x"])), "hashtable");
        assert_eq!(set_encoding(&named(&[b"1", b"01"])), "hashtable");
        let many: Vec<_> = (0..=512)
            .map(|i| (i.to_string().into_bytes(), vec![]))
            .collect();
        assert_eq!(set_encoding(&many[..512]), "intset");
        assert_eq!(set_encoding(&many), "hashtable");
    }

    #[test]
    fn hashes_and_sorted_sets_are_listpacks_while_small() {
        let field = |f: usize, v: usize| (vec![b'f'; f], vec![b'v'; v]);
        assert_eq!(hash_encoding(&[field(64, 64)]), "listpack");
        assert_eq!(hash_encoding(&[field(65, 1)]), "hashtable");
        assert_eq!(hash_encoding(&[field(1, 65)]), "hashtable");
        let fields: Vec<_> = (0..513)
            .map(|i: u32| (i.to_be_bytes().to_vec(), vec![]))
            .collect();
        assert_eq!(hash_encoding(&fields[..512]), "listpack");
        assert_eq!(hash_encoding(&fields), "hashtable");
        assert_eq!(zset_encoding(&[field(64, 0)]), "listpack");
        assert_eq!(zset_encoding(&[field(65, 0)]), "skiplist");
        assert_eq!(zset_encoding(&fields[..128]), "listpack");
        assert_eq!(zset_encoding(&fields[..129]), "skiplist");
    }

    #[test]
    fn subcommands_are_checked_as_redis_checks_them() {
        let args = |words: &[&str]| -> Vec<Vec<u8>> {
            words.iter().map(|w| w.as_bytes().to_vec()).collect()
        };
        let text = |r: CmdResult<&str>| match r {
            Ok(name) => name.to_string(),
            Err(e) => e.to_string(),
        };
        let check = |words: &[&str]| {
            let args = args(words);
            text(subcommand("memory", MEMORY_SUBS, &args[1], args.len()))
        };
        assert_eq!(check(&["memory", "USAGE", "k"]), "usage");
        assert_eq!(check(&["memory", "usage", "k", "samples", "5"]), "usage");
        assert_eq!(
            check(&["memory", "usage"]),
            "ERR wrong number of arguments for 'memory|usage' command"
        );
        assert_eq!(
            check(&["memory", "stats", "x"]),
            "ERR wrong number of arguments for 'memory|stats' command"
        );
        assert_eq!(
            check(&["memory", "a\r\nb"]),
            "ERR unknown subcommand 'a  b'. Try MEMORY HELP."
        );
    }

    #[test]
    fn memory_stats_has_redis_fields_in_redis_order() {
        let figures = MemoryFigures {
            rss: 1000,
            peak_rss: 2000,
            memtables: 100,
            block_cache: 50,
        };
        let fields = stats_fields(&figures, &[("0".into(), 4), ("7".into(), 1)]);
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        // redis-server 7.0.15's, with keys in databases 0 and 7.
        let redis = "peak.allocated total.allocated startup.allocated replication.backlog \
                     clients.slaves clients.normal cluster.links aof.buffer lua.caches \
                     functions.caches db.0 db.7 overhead.total keys.count keys.bytes-per-key \
                     dataset.bytes dataset.percentage peak.percentage allocator.allocated \
                     allocator.active allocator.resident allocator-fragmentation.ratio \
                     allocator-fragmentation.bytes allocator-rss.ratio allocator-rss.bytes \
                     rss-overhead.ratio rss-overhead.bytes fragmentation fragmentation.bytes";
        assert_eq!(names, redis.split_whitespace().collect::<Vec<_>>());
        let value = |name: &str| {
            fields
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(value("overhead.total"), Some(Frame::Integer(150)));
        assert_eq!(value("keys.count"), Some(Frame::Integer(5)));
        assert_eq!(value("keys.bytes-per-key"), Some(Frame::Integer(200)));
        assert_eq!(value("dataset.bytes"), Some(Frame::Integer(850)));
        assert_eq!(value("dataset.percentage"), Some(Frame::Double(85.0)));
        assert_eq!(value("peak.percentage"), Some(Frame::Double(50.0)));
    }

    #[test]
    fn histogram_lists_levels_with_calls_cumulatively() {
        let mut levels = [0; LATENCY_LEVELS];
        levels[3] = 2;
        levels[8] = 1;
        let want = Frame::Map(vec![
            (bulk("calls"), Frame::Integer(3)),
            (
                bulk("histogram_usec"),
                Frame::Map(vec![
                    (Frame::Integer(8), Frame::Integer(2)),
                    (Frame::Integer(264), Frame::Integer(3)),
                ]),
            ),
        ]);
        assert_eq!(cumulative(&levels), want);
    }
}
