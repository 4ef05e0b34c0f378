//! What RocksDB alone does of `redis-benchmark`'s SET and GET: the same key/value bytes
//! `docdb serve` stores and reads, on one thread, with no network, parsing or DocDB work.
//! It bounds what the server can reach (scripts/bench-redis.sh prints it beside Redis).
//!
//! SET is one atomic write of the key's new version, as the server makes per command, with
//! the WAL flushed (not synced) every [`WAL_FLUSH_EVERY`] writes like its group commit. GET
//! re-aims one iterator at the key's document and reads its newest version, as the server
//! does per command.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use clap::Args as ClapArgs;
use docdb::clock::HybridClock;
use docdb_redis::store::redis_doc_key;
use dockv::value::{PrimitiveValue, Value};
use dockv::{DocHybridTime, KeyEntryType};
use engine::{Engine, EngineIterator, IterOptions, KvRead, Rng, WriteBatch, WriteOptions};
use engine_rocks::{RocksConfig, RocksEngine};

/// Writes the WAL covers per flush (the server flushes once per round of ready clients).
const WAL_FLUSH_EVERY: u64 = 64;

/// Options of `docdb-bench redis-floor`.
#[derive(ClapArgs)]
pub struct Args {
    /// Requests per command (as redis-benchmark's `-n`).
    #[arg(short = 'n', long, default_value_t = 1_000_000)]
    requests: u64,
    /// Keys drawn from `key:000000000000` up to this many (as redis-benchmark's `-r`).
    #[arg(short = 'r', long, default_value_t = 1_000_000)]
    keyspace: u64,
    /// SETs per RocksDB write (1: one write per command, as the server makes).
    #[arg(long, default_value_t = 1)]
    batch: u64,
    /// Where the database goes (a temporary directory by default).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

/// Prints `COMMAND,requests per second` lines, as `redis-benchmark --csv` would.
pub fn run(args: &Args) -> Result<()> {
    let temp = tempfile::tempdir()?;
    let dir = args.dir.as_deref().unwrap_or(temp.path());
    let engine = open(dir)?;
    let clock = HybridClock::default();
    let mut keys = Keys::new(args.keyspace);
    // redis-benchmark's default value: three bytes.
    let value = Value::new(PrimitiveValue::String(b"xxx".to_vec())).encode();

    let per_batch = args.batch.max(1);
    let started = Instant::now();
    let mut batch = WriteBatch::with_capacity(per_batch as usize);
    for i in 1..=args.requests {
        let mut key = keys.next_doc_key();
        key.push(KeyEntryType::HybridTime.as_u8());
        DocHybridTime::new(clock.now(), 0).encode_to(&mut key);
        batch.put(key, value.clone());
        if i % per_batch == 0 || i == args.requests {
            engine.write(&batch, WriteOptions { sync: false })?;
            batch = WriteBatch::with_capacity(per_batch as usize);
        }
        if i % WAL_FLUSH_EVERY == 0 {
            engine.flush_wal(false)?;
        }
    }
    engine.flush_wal(false)?;
    println!("SET,{:.2}", per_second(args.requests, started));

    let mut iter = engine.iterator(IterOptions::new().prefix_same_as_start(true))?;
    let mut found = 0u64;
    let started = Instant::now();
    for _ in 0..args.requests {
        let doc_key = keys.next_doc_key();
        let mut upper = doc_key.clone();
        upper.push(0xFF);
        iter.reset(Some(&doc_key), Some(&upper))?;
        iter.seek(&doc_key);
        if iter.valid()? && !iter.value().is_empty() {
            found += 1;
        }
    }
    println!("GET,{:.2}", per_second(args.requests, started));
    anyhow::ensure!(found > 0, "GET found none of the keys SET wrote");
    Ok(())
}

/// RocksDB as `docdb serve` opens it: default options, WAL flushed by the caller, DocKey
/// prefix bloom filters.
fn open(dir: &Path) -> Result<RocksEngine> {
    let mut config = RocksConfig::new(dir);
    config.manual_wal_flush = true;
    config.prefix_extractor = Some(crate::doc_key_extractor());
    Ok(RocksEngine::open(config)?)
}

fn per_second(requests: u64, started: Instant) -> f64 {
    requests as f64 / started.elapsed().as_secs_f64().max(1e-9)
}

/// redis-benchmark's `key:__rand_int__` keys: a 12-digit number below the key space.
struct Keys {
    rng: Rng,
    keyspace: u64,
}

impl Keys {
    /// The same sequence every run. GET draws the keys that follow SET's in it, as
    /// redis-benchmark's GET draws fresh random keys: about `n / r` of them were written.
    fn new(keyspace: u64) -> Self {
        Keys {
            rng: Rng::new(0),
            keyspace: keyspace.max(1),
        }
    }

    /// The encoded DocKey of the next random key.
    fn next_doc_key(&mut self) -> Vec<u8> {
        let name = format!("key:{:012}", self.rng.below(self.keyspace));
        redis_doc_key(0, name.as_bytes())
    }
}
