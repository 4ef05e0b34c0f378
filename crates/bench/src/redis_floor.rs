//! What RocksDB alone does of `redis-benchmark`'s commands: the RocksDB work `docdb serve`
//! cannot avoid for each of them in its format, on one thread, with no network, parsing or
//! DocDB work. It bounds what the server can reach (scripts/bench-redis.sh prints it beside
//! Redis).
//!
//! Each command is its seeks and its puts, as the server makes them once its root cache holds
//! the roots and lengths of the one-key collections redis-benchmark writes (so none of those
//! is read here):
//!
//! | command | seeks | puts |
//! |---|---|---|
//! | SET | - | the key's value |
//! | GET | the key's value | - |
//! | INCR | the counter's value | its new value |
//! | LPUSH, RPUSH | - | the element, the list's length |
//! | LPOP | the first element | its tombstone, the list's length |
//! | SADD | the member | the member |
//! | HSET | the field | the field |
//! | ZADD | the member's score | the member by score, its score, the set's length |
//! | MSET | - | ten values |
//!
//! Seeks re-aim one iterator at the path's versions (`prefix_same_as_start`, the path's
//! bloom filters), as the server's lookups do. `--batch 1` makes one atomic write per
//! command, as the server does without pipelining; `--batch 256` groups commands per write,
//! as its writer thread does with `-P 16`. The WAL is flushed (not synced) every
//! [`WAL_FLUSH_EVERY`] writes like the server's group commit. The commands run in the order
//! given on one database, as redis-benchmark runs them on one server.

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, bail};
use clap::Args as ClapArgs;
use docdb::clock::HybridClock;
use docdb_redis::store::{path, redis_doc_key};
use dockv::hybrid_time::MAX_WRITE_ID;
use dockv::value::{PrimitiveValue, Value};
use dockv::{DocHybridTime, KeyEntryType, KeyEntryValue};
use engine::{Engine, EngineIterator, IterOptions, KvRead, Rng, WriteBatch, WriteOptions};
use engine_rocks::{RocksConfig, RocksEngine, RocksIter};

/// Writes the WAL covers per flush (the server flushes once per round of ready clients).
const WAL_FLUSH_EVERY: u64 = 64;

/// The commands of the run, in redis-benchmark's order.
const ALL_TESTS: &str = "set,get,incr,lpush,rpush,lpop,sadd,hset,zadd,mset";

/// Options of `docdb-bench redis-floor`.
#[derive(ClapArgs)]
pub struct Args {
    /// Requests per command (as redis-benchmark's `-n`).
    #[arg(short = 'n', long, default_value_t = 1_000_000)]
    requests: u64,
    /// Keys drawn from `key:000000000000` up to this many (as redis-benchmark's `-r`).
    #[arg(short = 'r', long, default_value_t = 1_000_000)]
    keyspace: u64,
    /// Commands per RocksDB write (1: one write per command, as the server makes without
    /// pipelining; 256: as its writer thread groups them with `-P 16`).
    #[arg(long, default_value_t = 1)]
    batch: u64,
    /// Commands to run, comma-separated (as redis-benchmark's `-t`), from
    /// set,get,incr,lpush,rpush,lpop,sadd,hset,zadd,mset.
    #[arg(short = 't', long, default_value = ALL_TESTS)]
    tests: String,
    /// Where the database goes (a temporary directory by default).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

/// A command of redis-benchmark's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Test {
    Set,
    Get,
    Incr,
    Lpush,
    Rpush,
    Lpop,
    Sadd,
    Hset,
    Zadd,
    Mset,
}

impl Test {
    fn parse(name: &str) -> Result<Self> {
        Ok(match name.trim().to_ascii_lowercase().as_str() {
            "set" => Test::Set,
            "get" => Test::Get,
            "incr" => Test::Incr,
            "lpush" => Test::Lpush,
            "rpush" => Test::Rpush,
            "lpop" => Test::Lpop,
            "sadd" => Test::Sadd,
            "hset" => Test::Hset,
            "zadd" => Test::Zadd,
            "mset" => Test::Mset,
            other => bail!("unknown test {other:?} (known: {ALL_TESTS})"),
        })
    }

    /// The name redis-benchmark prints.
    fn label(self) -> &'static str {
        match self {
            Test::Set => "SET",
            Test::Get => "GET",
            Test::Incr => "INCR",
            Test::Lpush => "LPUSH",
            Test::Rpush => "RPUSH",
            Test::Lpop => "LPOP",
            Test::Sadd => "SADD",
            Test::Hset => "HSET",
            Test::Zadd => "ZADD",
            Test::Mset => "MSET (10 keys)",
        }
    }
}

/// Prints `COMMAND,requests per second` lines, as `redis-benchmark --csv` would.
pub fn run(args: &Args) -> Result<()> {
    let tests = args
        .tests
        .split(',')
        .map(Test::parse)
        .collect::<Result<Vec<_>>>()?;
    let temp = tempfile::tempdir()?;
    let dir = args.dir.as_deref().unwrap_or(temp.path());
    let engine = open(dir)?;
    let mut floor = Floor::new(&engine, args)?;
    for test in tests {
        let started = Instant::now();
        let found = floor.run(test)?;
        println!("{},{:.2}", test.label(), per_second(args.requests, started));
        // GET after SET, LPOP after a push: seeks that find nothing would measure nothing.
        anyhow::ensure!(
            found > 0 || !matches!(test, Test::Get | Test::Lpop),
            "{}: no seek found a record",
            test.label()
        );
    }
    Ok(())
}

/// RocksDB as `docdb serve` opens it: default options, WAL flushed by the caller, path
/// prefix bloom filters.
fn open(dir: &Path) -> Result<RocksEngine> {
    let mut config = RocksConfig::new(dir);
    config.manual_wal_flush = true;
    config.prefix_extractor = Some(engine_rocks::PrefixExtractor::Custom(docdb::PATH_PREFIX));
    Ok(RocksEngine::open(config)?)
}

fn per_second(requests: u64, started: Instant) -> f64 {
    requests as f64 / started.elapsed().as_secs_f64().max(1e-9)
}

/// The database, its one iterator, and the state the commands share.
struct Floor<'a> {
    engine: &'a RocksEngine,
    iter: RocksIter<'a>,
    clock: HybridClock,
    rng: Rng,
    keyspace: u64,
    requests: u64,
    batch_size: u64,
    batch: WriteBatch,
    writes: u64,
    /// Array indexes handed out to list pushes (LPUSH writes at minus the index).
    list_indexes: i64,
    /// The list's length, and the index of its first element (for LPOP).
    list_len: i64,
    list_front: i64,
    /// Sorted-set members added (the set's length).
    zset_len: i64,
    /// Seeks that found a record, in the current command's run.
    found: u64,
}

impl<'a> Floor<'a> {
    fn new(engine: &'a RocksEngine, args: &Args) -> Result<Self> {
        Ok(Floor {
            engine,
            iter: engine.iterator(IterOptions::new().prefix_same_as_start(true))?,
            clock: HybridClock::default(),
            rng: Rng::new(0),
            keyspace: args.keyspace.max(1),
            requests: args.requests,
            batch_size: args.batch.max(1),
            batch: WriteBatch::default(),
            writes: 0,
            list_indexes: 0,
            list_len: 0,
            list_front: 0,
            zset_len: 0,
            found: 0,
        })
    }

    /// `self.requests` commands of `test`, then the last partial batch written; returns how
    /// many of their seeks found a record.
    fn run(&mut self, test: Test) -> Result<u64> {
        self.found = 0;
        for i in 1..=self.requests {
            self.command(test)?;
            if i % self.batch_size == 0 {
                self.write()?;
            }
        }
        if !self.batch.is_empty() {
            self.write()?;
        }
        self.engine.flush_wal(false)?;
        Ok(self.found)
    }

    fn command(&mut self, test: Test) -> Result<()> {
        let xxx = || PrimitiveValue::String(b"xxx".to_vec());
        match test {
            Test::Set => {
                let key = self.random_root("key");
                self.put(key, xxx());
            }
            Test::Get => {
                let key = self.random_root("key");
                self.seek(&key)?;
            }
            Test::Incr => {
                let key = self.random_root("counter");
                self.seek(&key)?;
                self.put(key, PrimitiveValue::String(b"1".to_vec()));
            }
            Test::Lpush | Test::Rpush => {
                self.list_indexes += 1;
                let index = if test == Test::Lpush {
                    self.list_front = -self.list_indexes;
                    -self.list_indexes
                } else {
                    self.list_indexes
                };
                let list = redis_doc_key(0, b"mylist");
                self.put(path(&list, &[KeyEntryValue::ArrayIndex(index)]), xxx());
                self.list_len += 1;
                self.put(
                    path(&list, &[KeyEntryValue::Counter]),
                    PrimitiveValue::Int64(self.list_len),
                );
            }
            Test::Lpop => {
                let list = redis_doc_key(0, b"mylist");
                let element = path(&list, &[KeyEntryValue::ArrayIndex(self.list_front)]);
                self.seek(&element)?;
                if self.list_len > 0 {
                    self.put(element, PrimitiveValue::Tombstone);
                    self.list_len -= 1;
                    self.list_front += 1;
                    self.put(
                        path(&list, &[KeyEntryValue::Counter]),
                        PrimitiveValue::Int64(self.list_len),
                    );
                }
            }
            Test::Sadd | Test::Hset => {
                let (name, value) = match test {
                    Test::Sadd => (&b"myset"[..], PrimitiveValue::Null),
                    _ => (&b"myhash"[..], xxx()),
                };
                let member = self.random_member();
                let key = path(&redis_doc_key(0, name), &[KeyEntryValue::string(member)]);
                self.seek(&key)?;
                self.put(key, value);
            }
            Test::Zadd => {
                let zset = redis_doc_key(0, b"myzset");
                let member = self.random_member();
                let score = self.rng.below(self.keyspace) as f64;
                let reverse = path(
                    &zset,
                    &[KeyEntryValue::SsReverse, KeyEntryValue::string(&member[..])],
                );
                self.seek(&reverse)?;
                let forward = [
                    KeyEntryValue::SsForward,
                    KeyEntryValue::double(score),
                    KeyEntryValue::string(member),
                ];
                self.put(path(&zset, &forward), PrimitiveValue::Null);
                self.put(reverse, PrimitiveValue::Double(score));
                self.zset_len += 1;
                self.put(
                    path(&zset, &[KeyEntryValue::Counter]),
                    PrimitiveValue::Int64(self.zset_len),
                );
            }
            Test::Mset => {
                for _ in 0..10 {
                    let key = self.random_root("key");
                    self.put(key, xxx());
                }
            }
        }
        Ok(())
    }

    /// The encoded DocKey of redis-benchmark's `<prefix>:__rand_int__`.
    fn random_root(&mut self, prefix: &str) -> Vec<u8> {
        let name = format!("{prefix}:{:012}", self.rng.below(self.keyspace));
        redis_doc_key(0, name.as_bytes())
    }

    /// redis-benchmark's `element:__rand_int__`.
    fn random_member(&mut self) -> Vec<u8> {
        format!("element:{:012}", self.rng.below(self.keyspace)).into_bytes()
    }

    /// Adds a new version of `path` to the batch.
    fn put(&mut self, mut key: Vec<u8>, value: PrimitiveValue) {
        key.push(KeyEntryType::HybridTime.as_u8());
        DocHybridTime::new(self.clock.now(), 0).encode_to(&mut key);
        self.batch.put(key, Value::new(value).encode());
    }

    /// Reads the newest version of `path`, as a lookup at the current time does: the
    /// iterator re-aimed at the path's versions, then one seek inside its bloom filters'
    /// domain (the read time with the largest write id).
    fn seek(&mut self, path: &[u8]) -> Result<()> {
        let mut upper = path.to_vec();
        upper.push(KeyEntryType::HybridTime.as_u8() + 1);
        self.iter.reset(Some(path), Some(&upper))?;
        let mut target = path.to_vec();
        target.push(KeyEntryType::HybridTime.as_u8());
        DocHybridTime::new(self.clock.now(), MAX_WRITE_ID).encode_to(&mut target);
        self.iter.seek(&target);
        if self.iter.valid()? && !self.iter.value().is_empty() {
            self.found += 1;
        }
        Ok(())
    }

    fn write(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.batch);
        self.engine.write(&batch, WriteOptions { sync: false })?;
        self.writes += 1;
        if self.writes.is_multiple_of(WAL_FLUSH_EVERY) {
            self.engine.flush_wal(false)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floor_args(requests: u64, batch: u64) -> Args {
        Args {
            requests,
            keyspace: 50,
            batch,
            tests: ALL_TESTS.into(),
            dir: None,
        }
    }

    /// Every seek aims inside the bloom filters' domain and finds what the puts before it
    /// wrote: LPOP finds each element LPUSH left at the front, GET and INCR keys SET and
    /// INCR wrote, SADD, HSET and ZADD the members drawn twice.
    #[test]
    fn seeks_find_what_the_puts_wrote() -> Result<()> {
        for batch in [1, 7] {
            let temp = tempfile::tempdir()?;
            let engine = open(temp.path())?;
            let args = floor_args(40, batch);
            let mut floor = Floor::new(&engine, &args)?;
            let mut found = std::collections::HashMap::new();
            for name in ALL_TESTS.split(',') {
                found.insert(name, floor.run(Test::parse(name)?)?);
            }
            // 40 draws from 50 keys: SET wrote most keys GET draws.
            assert!(found["get"] > 10, "batch {batch}: {found:?}");
            // A batch's own puts are not visible to its seeks: only earlier batches'.
            assert!(found["incr"] > 0, "batch {batch}: {found:?}");
            assert_eq!(found["lpop"], 40, "batch {batch}: {found:?}");
            for name in ["sadd", "hset", "zadd"] {
                assert!(found[name] > 0, "batch {batch}, {name}: {found:?}");
            }
            let writes_only = ["set", "lpush", "rpush", "mset"];
            assert!(writes_only.iter().all(|name| found[name] == 0), "{found:?}");
        }
        Ok(())
    }

    #[test]
    fn an_unknown_test_is_refused() {
        match Test::parse("flushall") {
            Ok(test) => panic!("parsed as {test:?}"),
            Err(err) => assert!(
                err.to_string().contains("unknown test \"flushall\""),
                "{err}"
            ),
        }
    }
}
