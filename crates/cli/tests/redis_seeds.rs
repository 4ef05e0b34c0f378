//! The Redis table of the persistence seed ("Redis Example"), replayed through `docdb serve`
//! and checked in `docdb dump` against the layout of format.md §10: the same records as
//! `crates/docdb/tests/seeds.rs` writes at the DocDB layer, with real hybrid times, which are
//! masked in the comparison and checked for order separately (T1 < T2 < ... < T7).

mod common_serve;

use common_serve::Server;
use dockv::KeyEntryValue;
use dockv::doc_key::DocKey;

/// The Redis DocKey of `name`: the cluster slot as the hash, the key as the hashed component.
fn redis_doc_key(name: &str) -> String {
    let slot = dockv::hash::redis_hash_slot(name.as_bytes());
    DocKey::with_hash(slot, vec![KeyEntryValue::string(name)], vec![]).to_string()
}

/// A hybrid time as (physical micros, logical) from the text inside `HT{ ... }`.
fn parse_ht(inner: &str) -> Option<(u64, u64)> {
    let mut words = inner.split_whitespace();
    let (mut physical, mut logical) = (None, 0);
    while let Some(word) = words.next() {
        match word {
            "physical:" => physical = words.next()?.parse().ok(),
            "logical:" => logical = words.next()?.parse().ok()?,
            _ => {}
        }
    }
    Some((physical?, logical))
}

/// The line with each `HT{ ... }` replaced by `HT`, and the hybrid times it held.
fn mask_hybrid_times(line: &str) -> (String, Vec<(u64, u64)>) {
    let mut out = String::new();
    let mut times = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find("HT{") {
        let (before, after) = rest.split_at(start);
        out.push_str(before);
        out.push_str("HT");
        let Some(end) = after.find('}') else {
            out.push_str(after);
            return (out, times);
        };
        let inner = after.get(3..end).unwrap_or_default();
        times.push(parse_ht(inner).unwrap_or_else(|| panic!("hybrid time in {line}")));
        rest = after.get(end + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    (out, times)
}

#[test]
fn yedis_table_through_the_server() {
    if common_serve::skipped_on_redis_peer("the dump needs docdb, not the Redis peer") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--history-retention", "3600"]);
    let mut c = server.client();
    // T1..T7 of the seed's table.
    c.ok(&["SET", "key1", "value1", "EX", "15"]);
    assert_eq!(c.int(&["HSET", "key2", "subkey1", "value1"]), 1);
    assert_eq!(c.int(&["HSET", "key2", "subkey2", "value2"]), 1);
    assert_eq!(c.int(&["DEL", "key2"]), 1);
    c.ok(&["HMSET", "key2", "subkey1", "new_val1", "subkey3", "value3"]);
    assert_eq!(c.int(&["SADD", "key3", "value4", "value5"]), 2);
    assert_eq!(c.int(&["SADD", "key3", "value6"]), 1);
    drop(c);
    server.stop();

    let dump = common_serve::dump(dir.path());
    eprintln!("{dump}");

    let (k1, k2, k3) = (
        redis_doc_key("key1"),
        redis_doc_key("key2"),
        redis_doc_key("key3"),
    );
    // Each key's 16-bit hash is its Redis cluster slot (crc16 % 16384).
    for name in ["key1", "key2", "key3"] {
        let slot = dockv::hash::redis_hash_slot(name.as_bytes());
        let needle = format!("DocKey(0x{slot:04x}, [\"{name}\"], [])");
        assert!(dump.contains(&needle), "{needle} not in the dump");
    }

    // Expected lines per document (the seed's sorted view, with its two errors corrected:
    // the T5 marker, and value4 < value5 < value6 in byte order), and the seed time (1..=7)
    // each line's hybrid time stands for.
    let mut groups = vec![
        (
            dockv::hash::redis_hash_slot(b"key1"),
            vec![(
                format!("SubDocKey({k1}, [HT]) -> \"value1\"; ttl: 15.000s"),
                1,
            )],
        ),
        (
            dockv::hash::redis_hash_slot(b"key2"),
            vec![
                (format!("SubDocKey({k2}, [HT]) -> {{}}"), 5),
                (format!("SubDocKey({k2}, [HT]) -> DEL"), 4),
                (format!("SubDocKey({k2}, [HT]) -> {{}}"), 2),
                (
                    format!("SubDocKey({k2}, [\"subkey1\"; HT]) -> \"new_val1\""),
                    5,
                ),
                (
                    format!("SubDocKey({k2}, [\"subkey1\"; HT]) -> \"value1\""),
                    2,
                ),
                (
                    format!("SubDocKey({k2}, [\"subkey2\"; HT]) -> \"value2\""),
                    3,
                ),
                (
                    format!("SubDocKey({k2}, [\"subkey3\"; HT]) -> \"value3\""),
                    5,
                ),
            ],
        ),
        (
            dockv::hash::redis_hash_slot(b"key3"),
            vec![
                (format!("SubDocKey({k3}, [HT]) -> ()"), 6),
                (format!("SubDocKey({k3}, [\"value4\"; HT]) -> null"), 6),
                (format!("SubDocKey({k3}, [\"value5\"; HT]) -> null"), 6),
                (format!("SubDocKey({k3}, [\"value6\"; HT]) -> null"), 7),
            ],
        ),
    ];
    // Documents sort by their hash first.
    groups.sort_by_key(|(slot, _)| *slot);
    let expected: Vec<(String, usize)> = groups.into_iter().flat_map(|(_, lines)| lines).collect();

    let actual: Vec<(String, Vec<(u64, u64)>)> = dump.lines().map(mask_hybrid_times).collect();
    let masked: Vec<&str> = actual.iter().map(|(l, _)| l.as_str()).collect();
    let want: Vec<&str> = expected.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(masked, want, "dump (hybrid times masked)");

    // One hybrid time per command: lines of the same command share it, and the commands'
    // times increase T1 < T2 < ... < T7.
    let mut by_seed_time: Vec<Option<(u64, u64)>> = vec![None; 8];
    for ((line, times), (_, t)) in actual.iter().zip(&expected) {
        let [ht] = times.as_slice() else {
            panic!("one hybrid time expected in {line}");
        };
        let slot = by_seed_time.get_mut(*t).expect("seed time");
        match slot {
            Some(prev) => assert_eq!(prev, ht, "T{t} written at two hybrid times: {line}"),
            None => *slot = Some(*ht),
        }
    }
    let times: Vec<(u64, u64)> = by_seed_time.into_iter().flatten().collect();
    assert_eq!(times.len(), 7);
    assert!(
        times.windows(2).all(|w| w.first() < w.get(1)),
        "hybrid times of T1..T7 do not increase: {times:?}"
    );
}
