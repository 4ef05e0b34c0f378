//! Commands run in process against the in-memory engine with a clock the test moves: TTL
//! expiry, DocDB-only commands (DOCDB.ASOF, databases, time series), list pops over
//! tombstones, SCAN completeness, and the key/value layout of format.md §10.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use docdb::clock::{HybridClock, PhysicalClock};
use docdb::{DocDb, DocDbOptions, GcPolicy};
use docdb_redis::cmd::{execute, execute_write_run, joins_write_run};
use docdb_redis::pubsub::Subscriber;
use docdb_redis::session::Session;
use docdb_redis::store::IterSlot;
use docdb_redis::{Core, Frame, RuntimeConfig, Store};
use engine::{Engine, MemEngine};

/// A physical clock the test sets (µs since the epoch).
struct TestClock(Arc<AtomicU64>);

impl PhysicalClock for TestClock {
    fn now_micros(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// 2026-01-01 in µs: a realistic unix time for EXPIREAT arithmetic.
const START_MICROS: u64 = 1_767_225_600_000_000;

struct Fixture {
    core: Core<MemEngine>,
    session: Session,
    now: Arc<AtomicU64>,
}

impl Fixture {
    fn new() -> Self {
        Self::with_config(RuntimeConfig::default())
    }

    fn with_config(config: RuntimeConfig) -> Self {
        let now = Arc::new(AtomicU64::new(START_MICROS));
        let clock = Arc::new(HybridClock::new(Box::new(TestClock(now.clone()))));
        let policy = GcPolicy::new(clock);
        let db = DocDb::open(MemEngine::default(), policy, DocDbOptions::default()).expect("open");
        let core = Core::new(Store::open(db).expect("store"), config);
        let (push, _rx, _) = Subscriber::channel();
        let session = Session::new(1, "127.0.0.1:1".parse().expect("addr"), push);
        let mut fixture = Fixture { core, session, now };
        fixture.session.authenticated = fixture.core.config().requirepass.is_none();
        fixture
    }

    /// Runs `command` and returns its reply as a RESP2 client reads it (maps as flat
    /// arrays, doubles as bulk strings).
    fn run(&mut self, command: &str) -> Frame {
        let words: Vec<&str> = command.split_whitespace().collect();
        self.run_args(&words)
    }

    /// Runs one command whose arguments may hold spaces (a script's body).
    fn run_args(&mut self, words: &[&str]) -> Frame {
        let args: Vec<Vec<u8>> = words.iter().map(|a| a.as_bytes().to_vec()).collect();
        let replies = execute(&self.core, &mut self.session, &args, &IterSlot::new());
        assert_eq!(replies.len(), 1, "{words:?}: {replies:?}");
        let wire = replies[0].encode();
        Frame::parse(&wire).expect("a reply parses").0
    }

    fn advance_ms(&self, ms: u64) {
        self.now.fetch_add(ms * 1000, Ordering::SeqCst);
    }

    fn now_micros(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    fn dump(&self) -> String {
        self.core.store.docdb().dump().expect("dump")
    }
}

fn bulk(s: &str) -> Frame {
    Frame::Bulk(s.as_bytes().to_vec())
}

fn int(n: i64) -> Frame {
    Frame::Integer(n)
}

fn ok() -> Frame {
    Frame::Simple("OK".into())
}

fn array(items: &[&str]) -> Frame {
    Frame::Array(items.iter().map(|s| bulk(s)).collect())
}

/// Masks the hybrid times of dump lines (`HT{ ... }` → `HT`), which depend on the clock.
fn mask_times(dump: &str) -> Vec<String> {
    dump.lines()
        .map(|line| {
            let mut out = String::new();
            let mut rest = line;
            while let Some(start) = rest.find("HT{") {
                out.push_str(&rest[..start]);
                out.push_str("HT");
                let end = rest[start..]
                    .find('}')
                    .map_or(rest.len(), |e| start + e + 1);
                rest = &rest[end..];
            }
            out.push_str(rest);
            out
        })
        .collect()
}

#[test]
fn strings_expire_at_their_ttl_for_every_command() {
    let mut f = Fixture::new();
    assert_eq!(f.run("SET k v PX 1500"), ok());
    assert_eq!(f.run("PTTL k"), int(1500));
    f.advance_ms(1000);
    assert_eq!(f.run("GET k"), bulk("v"));
    assert_eq!(f.run("TTL k"), int(1), "TTL rounds 500 ms up as Redis does");
    // INCR-style rewrites keep the TTL.
    assert_eq!(f.run("APPEND k w"), int(2));
    assert_eq!(f.run("PTTL k"), int(500));
    f.advance_ms(501);
    for command in ["GET k", "STRLEN k", "EXISTS k", "TTL k", "TYPE k"] {
        let expected = match command {
            "GET k" => Frame::Null,
            "STRLEN k" | "EXISTS k" => int(0),
            "TTL k" => int(-2),
            _ => Frame::Simple("none".into()),
        };
        assert_eq!(f.run(command), expected, "{command} after expiry");
    }
    assert_eq!(
        f.run("SETNX k fresh"),
        int(1),
        "an expired key is absent for writes too"
    );
    assert_eq!(f.run("TTL k"), int(-1));
}

/// A TTL restated twice: the second EXPIRE comes after the string's own TTL would have run
/// out, while the first one keeps it alive. Each restatement holds until the next.
#[test]
fn a_string_kept_alive_by_expire_takes_every_later_expire() {
    let mut f = Fixture::new();
    assert_eq!(f.run("SET k v PX 2000"), ok());
    assert_eq!(f.run("EXPIRE k 100"), int(1));
    f.advance_ms(3000);
    assert_eq!(f.run("GET k"), bulk("v"), "the first EXPIRE holds");
    assert_eq!(f.run("EXPIRE k 1000"), int(1));
    assert_eq!(f.run("TTL k"), int(1000));
    assert_eq!(f.run("GET k"), bulk("v"));
    f.advance_ms(500_000);
    assert_eq!(f.run("PERSIST k"), int(1));
    f.advance_ms(5_000_000);
    assert_eq!(f.run("GET k"), bulk("v"), "PERSIST after two EXPIREs");
    assert_eq!(f.run("TTL k"), int(-1));
}

#[test]
fn collections_expire_persist_and_keep_their_ttl_across_writes() {
    let mut f = Fixture::new();
    f.run("HSET h a 1");
    assert_eq!(f.run("EXPIRE h 10"), int(1));
    f.advance_ms(4000);
    assert_eq!(f.run("HSET h b 2"), int(1), "a new field of a live hash");
    assert_eq!(f.run("TTL h"), int(6), "HSET keeps the hash's TTL");
    assert_eq!(f.run("PERSIST h"), int(1));
    assert_eq!(f.run("TTL h"), int(-1));
    f.advance_ms(20_000);
    assert_eq!(f.run("HGETALL h"), array(&["a", "1", "b", "2"]));
    f.run("EXPIRE h 1");
    f.advance_ms(1001);
    assert_eq!(f.run("HGETALL h"), Frame::Array(Vec::new()));
    assert_eq!(f.run("HSET h c 3"), int(1), "a new hash after expiry");
    assert_eq!(f.run("HGETALL h"), array(&["c", "3"]));
    assert_eq!(f.run("TTL h"), int(-1));
}

#[test]
fn expire_at_in_the_past_deletes_and_conditions_apply() {
    let mut f = Fixture::new();
    f.run("SET k v");
    let past = f.now_micros() / 1_000_000 - 10;
    assert_eq!(f.run(&format!("EXPIREAT k {past}")), int(1));
    assert_eq!(f.run("EXISTS k"), int(0));
    f.run("SET k v");
    assert_eq!(f.run("EXPIRE k 100 XX"), int(0), "XX needs a TTL");
    assert_eq!(f.run("EXPIRE k 100 NX"), int(1));
    assert_eq!(f.run("EXPIRE k 50 GT"), int(0));
    assert_eq!(f.run("EXPIRE k 50 LT"), int(1));
    assert_eq!(f.run("TTL k"), int(50));
}

#[test]
fn asof_reads_the_past_and_refuses_writes() {
    let mut f = Fixture::new();
    f.run("SET k one");
    f.run("RPUSH l a b");
    f.advance_ms(10);
    let before = f.now_micros();
    f.advance_ms(10);
    f.run("SET k two");
    f.run("LPOP l");
    f.run("DEL l");
    assert_eq!(f.run(&format!("DOCDB.ASOF {before} GET k")), bulk("one"));
    assert_eq!(
        f.run(&format!("DOCDB.ASOF {before} LRANGE l 0 -1")),
        array(&["a", "b"])
    );
    assert_eq!(f.run(&format!("DOCDB.ASOF {before} EXISTS l")), int(1));
    // A read-only script reads as of that time too, and may not write.
    let before = before.to_string();
    let script = "return {redis.call('get', KEYS[1]), redis.call('llen', KEYS[2])}";
    assert_eq!(
        f.run_args(&["DOCDB.ASOF", &before, "EVAL_RO", script, "2", "k", "l"]),
        Frame::Array(vec![bulk("one"), int(2)])
    );
    let write = "return redis.call('set', 'k', 'x')";
    assert!(matches!(
        f.run_args(&["DOCDB.ASOF", &before, "EVAL_RO", write, "0"]),
        Frame::Error(e) if e.starts_with("ERR Write commands are not allowed from read-only scripts.")
    ));
    assert_eq!(f.run("GET k"), bulk("two"));
    assert!(
        matches!(f.run(&format!("DOCDB.ASOF {before} SET k x")), Frame::Error(e) if e.contains("read-only"))
    );
    let future = f.now_micros() + 60_000_000;
    assert!(
        matches!(f.run(&format!("DOCDB.ASOF {future} GET k")), Frame::Error(e) if e.contains("future"))
    );
    let ancient = START_MICROS - 3_600_000_000;
    assert!(
        matches!(f.run(&format!("DOCDB.ASOF {ancient} GET k")), Frame::Error(e) if e.contains("history"))
    );
}

#[test]
fn list_pops_do_not_walk_over_earlier_pops() {
    let mut f = Fixture::new();
    for i in 0..2000 {
        f.run(&format!("RPUSH l {i}"));
    }
    for i in 0..1990 {
        assert_eq!(f.run("LPOP l"), bulk(&i.to_string()));
    }
    assert_eq!(f.run("LLEN l"), int(10));
    assert_eq!(f.run("LRANGE l 0 2"), array(&["1990", "1991", "1992"]));
    assert_eq!(f.run("LRANGE l -2 -1"), array(&["1998", "1999"]));
    assert_eq!(f.run("LINDEX l -10"), bulk("1990"));
    f.run("LPUSH l x y");
    assert_eq!(f.run("LRANGE l 0 2"), array(&["y", "x", "1990"]));
    assert_eq!(f.run("RPOP l 2"), array(&["1999", "1998"]));
    assert_eq!(f.run("LSET l 1 X"), ok());
    assert_eq!(f.run("LREM l 0 X"), int(1));
    assert_eq!(
        f.run("LRANGE l 0 -1"),
        array(&[
            "y", "1990", "1991", "1992", "1993", "1994", "1995", "1996", "1997"
        ])
    );
    // A renamed list keeps its order; pops on it are exact.
    f.run("RENAME l m");
    assert_eq!(f.run("LPOP m"), bulk("y"));
    assert_eq!(f.run("RPOP m"), bulk("1997"));
    assert_eq!(f.run("EXISTS l"), int(0));
    // The known bounds now point at removed elements: pops look past them.
    assert_eq!(f.run("LREM m 0 1990"), int(1));
    assert_eq!(f.run("LREM m 0 1996"), int(1));
    assert_eq!(f.run("LPOP m"), bulk("1991"));
    assert_eq!(f.run("RPOP m"), bulk("1995"));
    assert_eq!(f.run("LRANGE m 0 -1"), array(&["1992", "1993", "1994"]));
}

/// Pops from a warm end read ahead and answer the next pops from memory
/// (`docdb_redis::list_ends`); every other write to the list must drop what was read.
#[test]
fn pops_read_ahead_and_every_other_write_is_seen() {
    let mut f = Fixture::new();
    for i in 0..100 {
        f.run(&format!("RPUSH l {i}"));
    }
    assert_eq!(f.run("LPOP l"), bulk("0"));
    assert_eq!(f.run("LPOP l"), bulk("1"), "the second pop reads ahead");
    assert_eq!(f.run("LSET l 0 X"), ok());
    assert_eq!(f.run("LPOP l"), bulk("X"));
    assert_eq!(f.run("LPOP l"), bulk("3"));
    assert_eq!(f.run("LREM l 0 4"), int(1));
    assert_eq!(f.run("LPOP l"), bulk("5"));
    assert_eq!(f.run("LINSERT l BEFORE 6 Y"), int(95));
    assert_eq!(f.run("LPOP l"), bulk("Y"));
    // Pushes keep what was read: at the other end, and in front at the popped end.
    f.run("RPUSH l z");
    assert_eq!(f.run("LPOP l"), bulk("6"));
    f.run("LPUSH l a b");
    assert_eq!(f.run("LPOP l 3"), array(&["b", "a", "7"]));
    assert_eq!(f.run("RPOP l"), bulk("z"));
    assert_eq!(f.run("RPOP l"), bulk("99"));
    f.run("LPUSH l c");
    assert_eq!(f.run("RPOP l 2"), array(&["98", "97"]));
    // A transaction's writes.
    f.run("MULTI");
    f.run("LPOP l");
    f.run("LSET l 0 T");
    f.run("LPOP l");
    assert_eq!(
        f.run("EXEC"),
        Frame::Array(vec![bulk("c"), ok(), bulk("T")])
    );
    assert_eq!(f.run("LTRIM l 1 -1"), ok());
    assert_eq!(f.run("LPOP l"), bulk("10"));
    assert_eq!(f.run("LMOVE l l LEFT RIGHT"), bulk("11"));
    assert_eq!(f.run("RPOP l"), bulk("11"));
    assert_eq!(f.run("LPOP l"), bulk("12"));
    f.run("RPUSH d d1 d2 d3 d4");
    assert_eq!(f.run("LPOP d"), bulk("d1"));
    assert_eq!(f.run("LPOP d"), bulk("d2"));
    assert_eq!(f.run("LMOVE l d LEFT LEFT"), bulk("13"));
    assert_eq!(f.run("RPOPLPUSH d d"), bulk("d4"));
    assert_eq!(f.run("LPOP d"), bulk("d4"));
    assert_eq!(f.run("LPOP d"), bulk("13"));
    assert_eq!(f.run("LPOP d"), bulk("d3"));
    assert_eq!(f.run("LPOP l"), bulk("14"));
    // Gone and made again: by DEL, by RENAME, by expiry.
    f.run("DEL l");
    f.run("RPUSH l new1 new2");
    assert_eq!(f.run("LPOP l"), bulk("new1"));
    f.run("RPUSH m m1 m2 m3");
    f.run("RENAME m l");
    assert_eq!(f.run("LPOP l"), bulk("m1"));
    assert_eq!(f.run("LPOP l"), bulk("m2"));
    f.run("PEXPIRE l 10");
    f.advance_ms(20);
    assert_eq!(f.run("LPOP l"), Frame::Null);
    f.run("RPUSH l after");
    assert_eq!(f.run("LPOP l"), bulk("after"));
    // A short list read whole from the front, then popped from the back.
    f.run("RPUSH s a b c d");
    assert_eq!(f.run("LPOP s"), bulk("a"));
    assert_eq!(f.run("LPOP s"), bulk("b"));
    assert_eq!(f.run("RPOP s"), bulk("d"));
    f.run("RPUSH s e");
    assert_eq!(f.run("LPOP s 2"), array(&["c", "e"]));
    assert_eq!(f.run("LPOP s"), Frame::Null);
    assert_eq!(f.run("EXISTS s"), int(0));
    // FLUSHDB, then a new list under the same name.
    f.run("RPUSH q 1 2 3");
    f.run("LPOP q");
    f.run("LPOP q");
    f.run("FLUSHDB");
    f.run("RPUSH q x");
    assert_eq!(f.run("LPOP q"), bulk("x"));
    assert_eq!(f.run("LPOP q"), Frame::Null);
}

#[test]
fn emptied_collections_disappear() {
    let mut f = Fixture::new();
    f.run("SADD s a b");
    f.run("SREM s a b");
    assert_eq!(f.run("EXISTS s"), int(0));
    f.run("HSET h a 1");
    f.run("HDEL h a");
    assert_eq!(f.run("TYPE h"), Frame::Simple("none".into()));
    f.run("ZADD z 1 a");
    f.run("ZPOPMIN z");
    assert_eq!(f.run("EXISTS z"), int(0));
    f.run("RPUSH l a");
    f.run("RPOP l");
    assert_eq!(f.run("EXISTS l"), int(0));
    assert_eq!(f.run("SET s str"), ok(), "the name is free for any type");
}

#[test]
fn sorted_sets_keep_both_indexes_and_the_count() {
    let mut f = Fixture::new();
    assert_eq!(f.run("ZADD z 2 b 1 a 3 c"), int(3));
    assert_eq!(f.run("ZADD z CH 5 a"), int(1));
    assert_eq!(
        f.run("ZRANGE z 0 -1 WITHSCORES"),
        array(&["b", "2", "c", "3", "a", "5"])
    );
    assert_eq!(f.run("ZREVRANGE z 0 0"), array(&["a"]));
    assert_eq!(f.run("ZRANGEBYSCORE z (2 +inf"), array(&["c", "a"]));
    assert_eq!(f.run("ZADD z INCR 1.5 b"), bulk("3.5"));
    assert_eq!(f.run("ZCARD z"), int(3));
    assert_eq!(f.run("ZREM z c nope"), int(1));
    assert_eq!(f.run("ZSCORE z b"), bulk("3.5"));
    let lines = mask_times(&f.dump());
    assert!(
        lines.iter().any(|l| l.contains(", [counter; HT]) -> 2")),
        "{lines:#?}"
    );
}

#[test]
fn time_series_ranges_in_both_directions() {
    let mut f = Fixture::new();
    assert_eq!(f.run("TSADD ts 10 a 30 c 20 b"), ok());
    assert_eq!(f.run("TSGET ts 20"), bulk("b"));
    assert_eq!(
        f.run("TSRANGEBYTIME ts 15 +inf"),
        array(&["20", "b", "30", "c"])
    );
    assert_eq!(
        f.run("TSREVRANGEBYTIME ts -inf +inf LIMIT 2"),
        array(&["30", "c", "20", "b"])
    );
    assert_eq!(f.run("TSRANGEBYTIME ts (10 (30"), array(&["20", "b"]));
    assert_eq!(f.run("TSLASTN ts 2"), array(&["20", "b", "30", "c"]));
    assert_eq!(f.run("TSREM ts 20"), ok());
    assert_eq!(f.run("TSCARD ts"), int(2));
    assert_eq!(f.run("TYPE ts"), Frame::Simple("tskey".into()));
    assert_eq!(f.run("TSADD ts 40 d EXPIRE_IN 5"), ok());
    f.advance_ms(5001);
    assert_eq!(f.run("TSGET ts 40"), Frame::Null);
}

#[test]
fn databases_are_separate_key_spaces() {
    let mut f = Fixture::new();
    f.run("SET k zero");
    assert_eq!(f.run("SELECT 3"), ok());
    assert_eq!(f.run("GET k"), Frame::Null);
    f.run("SET k three");
    assert_eq!(f.run("CREATEDB app"), ok());
    assert!(matches!(f.run("CREATEDB app"), Frame::Error(_)));
    assert_eq!(f.run("SELECT app"), ok());
    f.run("SET k app");
    assert_eq!(f.run("DBSIZE"), int(1));
    assert!(matches!(f.run("SELECT 16"), Frame::Error(e) if e.contains("out of range")));
    f.run("SELECT 3");
    assert_eq!(f.run("FLUSHDB"), ok());
    assert_eq!(f.run("GET k"), Frame::Null);
    f.run("SELECT 0");
    assert_eq!(f.run("GET k"), bulk("zero"));
    assert_eq!(f.run("DELETEDB app"), ok());
    assert!(matches!(f.run("SELECT app"), Frame::Error(_)));
    let listed = f.run("LISTDB");
    assert!(
        matches!(&listed, Frame::Array(items) if items.len() == 16),
        "{listed:?}"
    );
    assert!(
        mask_times(&f.dump())
            .iter()
            .any(|l| l.starts_with("SubDocKey(DocKey(ColocationId=3, 0x"))
    );
}

#[test]
fn scan_visits_every_key_once_across_cursors() {
    let mut f = Fixture::new();
    for i in 0..500 {
        f.run(&format!("SET key:{i} v"));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut cursor = "0".to_string();
    let mut calls = 0;
    loop {
        let Frame::Array(parts) = f.run(&format!("SCAN {cursor} COUNT 20")) else {
            panic!("SCAN reply");
        };
        let (Frame::Bulk(next), Frame::Array(keys)) = (&parts[0], &parts[1]) else {
            panic!("SCAN parts");
        };
        for key in keys {
            let Frame::Bulk(k) = key else { panic!("key") };
            assert!(seen.insert(k.clone()), "duplicate {k:?}");
        }
        cursor = String::from_utf8(next.clone()).expect("cursor");
        calls += 1;
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), 500);
    assert!(calls > 5, "COUNT bounds each call: {calls} calls");
}

#[test]
fn the_seeds_redis_table_has_the_documented_layout() {
    let mut f = Fixture::new();
    for command in [
        "SET key1 value1 EX 15",
        "HSET key2 subkey1 value1",
        "HSET key2 subkey2 value2",
        "DEL key2",
        "HMSET key2 subkey1 new_val1 subkey3 value3",
        "SADD key3 value4 value5",
        "SADD key3 value6",
    ] {
        f.advance_ms(1);
        f.run(command);
    }
    let slot = |key: &str| dockv::hash::redis_hash_slot(key.as_bytes());
    let doc = |key: &str| format!("DocKey(0x{:04x}, [\"{key}\"], [])", slot(key));
    let expected = vec![
        format!(
            "SubDocKey({}, [HT]) -> \"value1\"; ttl: 15.000s",
            doc("key1")
        ),
        format!("SubDocKey({}, [HT]) -> {{}}", doc("key2")),
        format!("SubDocKey({}, [HT]) -> DEL", doc("key2")),
        format!("SubDocKey({}, [HT]) -> {{}}", doc("key2")),
        format!(
            "SubDocKey({}, [\"subkey1\"; HT]) -> \"new_val1\"",
            doc("key2")
        ),
        format!(
            "SubDocKey({}, [\"subkey1\"; HT]) -> \"value1\"",
            doc("key2")
        ),
        format!(
            "SubDocKey({}, [\"subkey2\"; HT]) -> \"value2\"",
            doc("key2")
        ),
        format!(
            "SubDocKey({}, [\"subkey3\"; HT]) -> \"value3\"",
            doc("key2")
        ),
        // YugabyteDB prints the Redis set marker as `()`.
        format!("SubDocKey({}, [HT]) -> ()", doc("key3")),
        format!("SubDocKey({}, [\"value4\"; HT]) -> null", doc("key3")),
        format!("SubDocKey({}, [\"value5\"; HT]) -> null", doc("key3")),
        format!("SubDocKey({}, [\"value6\"; HT]) -> null", doc("key3")),
    ];
    let mut got = mask_times(&f.dump());
    let mut want = expected;
    // Documents sort by slot; compare per document, in stored order within each.
    got.sort_by_key(|l| l.split(", [").next().map(str::to_string));
    want.sort_by_key(|l| l.split(", [").next().map(str::to_string));
    assert_eq!(got, want);
}

#[test]
fn auth_gates_every_command_but_auth_hello_and_quit() {
    let config = RuntimeConfig {
        requirepass: Some("s3cret".into()),
        ..RuntimeConfig::default()
    };
    let mut f = Fixture::with_config(config);
    assert_eq!(
        f.run("GET k"),
        Frame::Error("NOAUTH Authentication required.".into())
    );
    assert_eq!(
        f.run("AUTH wrong"),
        Frame::Error("WRONGPASS invalid username-password pair or user is disabled.".into())
    );
    assert_eq!(f.run("AUTH s3cret"), ok());
    assert_eq!(f.run("GET k"), Frame::Null);
}

#[test]
fn flushdb_removes_more_keys_than_one_batch_and_only_its_own() {
    let mut f = Fixture::new();
    for i in 0..2500 {
        f.run(&format!("SET k{i} v"));
    }
    f.run("SELECT 1");
    f.run("SET other v");
    f.run("SELECT 0");
    assert_eq!(f.run("DBSIZE"), int(2500));
    assert_eq!(f.run("FLUSHDB"), ok());
    assert_eq!(f.run("DBSIZE"), int(0));
    assert_eq!(f.run("GET k1999"), Frame::Null);
    f.run("SELECT 1");
    assert_eq!(
        f.run("GET other"),
        bulk("v"),
        "another database keeps its keys"
    );
    assert_eq!(f.run("FLUSHALL"), ok());
    assert_eq!(f.run("DBSIZE"), int(0));
}

/// The hybrid time of each dump line, without its write id: `HT{ ... }` less any `w: n`.
fn times_without_write_id(dump: &str) -> Vec<String> {
    dump.lines()
        .filter_map(|line| {
            let start = line.find("HT{")?;
            let end = start + line[start..].find('}')?;
            let time = &line[start..=end];
            Some(match time.find(" w: ") {
                Some(w) => {
                    let rest = &time[w + 4..];
                    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
                    format!("{}{}", &time[..w], &rest[digits..])
                }
                None => time.to_string(),
            })
        })
        .collect()
}

#[test]
fn a_pipelines_writes_run_together_at_one_time() {
    let mut f = Fixture::new();
    let requests: Vec<Vec<Vec<u8>>> = [
        "SET k 1",
        "INCR k",
        "SET k 2 EX 100",
        "MSET k 3 j 4",
        "INCRBY j 10",
        "SET x y PX 5000",
        "SETEX e 0 v",
        "SETEX e 50 v",
        "PSETEX p 7000 v",
        "SET k v NX",
        "LPUSH l a",
        "LPUSH l b",
        "RPOP l",
        "HSET h f 1",
        "HINCRBY h f 5",
        "SADD s m",
        "SADD s m",
        "LPUSH k oops",
    ]
    .iter()
    .map(|r| r.split(' ').map(|a| a.as_bytes().to_vec()).collect())
    .collect();
    for r in &requests {
        assert!(joins_write_run(&f.core, &f.session, r), "{r:?}");
    }
    let writes_before = engine_writes(&f);
    let replies = execute_write_run(&f.core, &mut f.session, &requests, &IterSlot::new());
    let invalid = Frame::Error("ERR invalid expire time in 'setex' command".into());
    let wrongtype =
        Frame::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into());
    // Each request sees what the earlier ones wrote, as it would run alone.
    let expected = [
        ok(),
        int(2),
        ok(),
        ok(),
        int(14),
        ok(),
        invalid,
        ok(),
        ok(),
        Frame::Null,
        int(1),
        int(2),
        bulk("a"),
        int(1),
        int(6),
        int(1),
        int(0),
        wrongtype,
    ];
    assert_eq!(replies, expected);
    assert_eq!(engine_writes(&f), writes_before + 1, "one engine write");
    assert_ne!(
        f.session.last_write, 0,
        "the run's write must be counted, or its reply could go out before the WAL flush"
    );
    // Later requests win, as they would one by one; MSET's k has no TTL left.
    assert_eq!(f.run("GET k"), bulk("3"));
    assert_eq!(f.run("TTL k"), int(-1));
    assert_eq!(f.run("GET j"), bulk("14"));
    assert_eq!(f.run("PTTL x"), int(5000));
    assert_eq!(f.run("TTL e"), int(50));
    assert_eq!(f.run("PTTL p"), int(7000));
    assert_eq!(f.run("LRANGE l 0 -1"), Frame::Array(vec![bulk("b")]));
    assert_eq!(f.run("HGET h f"), bulk("6"));
    let dump = f.dump();
    let times = times_without_write_id(&dump);
    assert!(times.len() >= 12, "{dump}");
    assert!(times.iter().all(|t| *t == times[0]), "{dump}");
    // Each path is stored once: the run's other versions of it (k's, j's, the list's length)
    // share the newest one's time, so no read could see them.
    let paths: Vec<&str> = dump
        .lines()
        .filter_map(|line| line.find("HT{").map(|at| &line[..at]))
        .collect();
    let distinct: std::collections::HashSet<&str> = paths.iter().copied().collect();
    assert_eq!(distinct.len(), paths.len(), "{dump}");
    // The same requests one by one: a time each (so the check above can tell).
    let mut alone = Fixture::new();
    for (r, reply) in requests.iter().zip(&expected) {
        let replies = execute(&alone.core, &mut alone.session, r, &IterSlot::new());
        assert_eq!(replies, vec![reply.clone()]);
    }
    let dump = alone.dump();
    let times = times_without_write_id(&dump);
    assert!(times.iter().any(|t| *t != times[0]), "{dump}");

    // Reads, and requests that may block, are administrative or change the connection's
    // state, run alone.
    for r in [
        "GET k",
        "BLPOP l 0",
        "MULTI",
        "EXEC",
        "FLUSHALL",
        "SELECT 1",
        "SUBSCRIBE c",
        "NOSUCHCOMMAND k",
    ] {
        let args: Vec<Vec<u8>> = r.split(' ').map(|a| a.as_bytes().to_vec()).collect();
        assert!(!joins_write_run(&f.core, &f.session, &args), "{r}");
    }
    assert_eq!(f.run("MULTI"), ok());
    let args = vec![b"SET".to_vec(), b"k".to_vec(), b"v".to_vec()];
    assert!(
        !joins_write_run(&f.core, &f.session, &args),
        "queued in a transaction"
    );
}

/// Engine batches written so far.
fn engine_writes(f: &Fixture) -> u64 {
    f.core
        .store
        .docdb()
        .engine()
        .statistics()
        .expect("statistics")
        .counter("mem.batches_written")
        .expect("batch counter")
}

/// EXEC's commands land in one engine write: a transaction is whole on disk too.
#[test]
fn exec_lands_in_one_engine_write() {
    let mut f = Fixture::new();
    assert_eq!(f.run("MULTI"), ok());
    for r in ["SET a 1", "INCR a", "LPUSH l x", "HSET h f v"] {
        assert_eq!(f.run(r), Frame::Simple("QUEUED".into()));
    }
    let before = engine_writes(&f);
    assert_eq!(
        f.run("EXEC"),
        Frame::Array(vec![ok(), int(2), int(1), int(1)])
    );
    assert_eq!(engine_writes(&f), before + 1);
    assert_ne!(
        f.session.last_write, 0,
        "EXEC's writes are counted for the WAL flush"
    );
    assert_eq!(f.run("GET a"), bulk("2"));
}

/// SRANDMEMBER's random picks: members of the set, distinct for a positive count (all of
/// them once the count reaches the size), repeating for a negative one.
#[test]
fn srandmember_picks_members() {
    let mut f = Fixture::new();
    assert_eq!(f.run("SADD s a b c d e"), int(5));
    let members = ["a", "b", "c", "d", "e"].map(bulk);
    let mut seen_single = std::collections::HashSet::new();
    for step in 0..200u64 {
        // A new hybrid time per call: the picks vary.
        f.now.fetch_add(1000 + step, Ordering::SeqCst);
        let one = f.run("SRANDMEMBER s");
        assert!(members.contains(&one), "{one:?}");
        seen_single.insert(format!("{one:?}"));
        let Frame::Array(three) = f.run("SRANDMEMBER s 3") else {
            panic!("array");
        };
        assert_eq!(three.len(), 3);
        let distinct: std::collections::HashSet<String> =
            three.iter().map(|m| format!("{m:?}")).collect();
        assert_eq!(distinct.len(), 3, "{three:?}");
        assert!(three.iter().all(|m| members.contains(m)), "{three:?}");
        let Frame::Array(many) = f.run("SRANDMEMBER s -12") else {
            panic!("array");
        };
        assert_eq!(many.len(), 12);
        assert!(many.iter().all(|m| members.contains(m)), "{many:?}");
    }
    assert_eq!(
        seen_single.len(),
        5,
        "every member gets picked: {seen_single:?}"
    );
    let Frame::Array(all) = f.run("SRANDMEMBER s 9") else {
        panic!("array");
    };
    assert_eq!(all.len(), 5);
    assert_eq!(f.run("SCARD s"), int(5), "SRANDMEMBER removes nothing");
    assert!(matches!(
        f.run("SRANDMEMBER s -99999999999"),
        Frame::Error(e) if e.contains("out of range")
    ));
}

/// LINSERT rewrites the shorter side of the insertion point with fresh indexes: the order,
/// the length and the pops at both ends stay right whichever side moved.
#[test]
fn linsert_keeps_order_on_either_side() {
    let mut f = Fixture::new();
    let mut model: Vec<String> = (1..=100).map(|i| i.to_string()).collect();
    f.run(&format!("RPUSH l {}", model.join(" ")));
    for (command, pivot, element) in [
        ("BEFORE", "30", "x"), // the head is shorter: it moves
        ("AFTER", "80", "y"),  // the tail is shorter: it moves
        ("AFTER", "x", "z"),
        ("BEFORE", "1", "first"),
        ("AFTER", "100", "last"),
    ] {
        let at = model
            .iter()
            .position(|v| v == pivot)
            .expect("pivot in model");
        model.insert(at + usize::from(command == "AFTER"), element.to_string());
        let reply = f.run(&format!("LINSERT l {command} {pivot} {element}"));
        assert_eq!(reply, int(model.len() as i64), "LINSERT {command} {pivot}");
    }
    let expected: Vec<&str> = model.iter().map(String::as_str).collect();
    assert_eq!(f.run("LRANGE l 0 -1"), array(&expected));
    assert_eq!(f.run("LLEN l"), int(model.len() as i64));
    assert_eq!(f.run("LINSERT l BEFORE nope v"), int(-1));
    assert_eq!(f.run("LINSERT missing BEFORE 1 v"), int(0));
    assert_eq!(f.run("LPOP l"), bulk("first"));
    assert_eq!(f.run("RPOP l"), bulk("last"));
}

/// TIME answers the server's clock: Unix seconds and the microseconds within them.
#[test]
fn time_is_the_servers_clock() {
    let mut f = Fixture::new();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let Frame::Array(parts) = f.run("TIME") else {
        panic!("TIME replies with an array");
    };
    let numbers: Vec<u64> = parts
        .iter()
        .map(|part| match part {
            Frame::Bulk(text) => String::from_utf8_lossy(text).parse().expect("a number"),
            other => panic!("TIME's parts are bulk strings, got {other:?}"),
        })
        .collect();
    assert_eq!(numbers.len(), 2);
    assert!(
        numbers[0] >= before && numbers[0] <= before + 5,
        "{numbers:?} vs {before}"
    );
    assert!(numbers[1] < 1_000_000, "{numbers:?}");
}

#[test]
fn config_set_changes_what_every_request_checks() {
    let mut f = Fixture::new();
    let other = || {
        let (push, _rx, _) = Subscriber::channel();
        Session::new(2, "127.0.0.1:2".parse().expect("addr"), push)
    };
    assert!(!f.core.needs_auth(&other()));
    assert_eq!(f.run("CONFIG SET requirepass secret"), ok());
    // A new connection must now authenticate; the one that set it stays in.
    let mut fresh = other();
    fresh.authenticated = false;
    assert!(f.core.needs_auth(&fresh));
    assert!(!f.core.needs_auth(&f.session));
    assert_eq!(f.run_args(&["CONFIG", "SET", "requirepass", ""]), ok());
    assert!(!f.core.needs_auth(&fresh));

    let before = f.core.limits().max_bulk_len;
    assert_eq!(f.run("CONFIG SET proto-max-bulk-len 2097152"), ok());
    assert_ne!(before, 2_097_152);
    assert_eq!(f.core.limits().max_bulk_len, 2_097_152);
    assert!(!f.core.limits().unauthenticated);
}
