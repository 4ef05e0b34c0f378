//! Crash test: a child process commits batches with sync writes and reports each one it has
//! acknowledged; the parent kills it with SIGKILL at a random moment, reopens the database and
//! checks that every acknowledged batch is present in full and no batch is present in part.
//!
//! `DOCDB_CRASH_ROUNDS` sets the number of kill/reopen rounds (default 20).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, GcPolicy, ReadOptions, SubDocument};
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, Value};
use dockv::{HybridTime, KeyEntryValue};
use engine::Rng;
use engine_rocks::{RocksConfig, RocksEngine};

/// Subkeys written by every batch.
const FIELDS: usize = 5;
const CHILD_ENV: &str = "DOCDB_CRASH_CHILD_DIR";

fn open(dir: &Path) -> DocDb<RocksEngine> {
    let clock = Arc::new(HybridClock::default());
    let policy = GcPolicy::new(clock);
    let config = RocksConfig {
        compaction_filter_factory: Some(policy.clone()),
        ..RocksConfig::new(dir)
    };
    let engine = RocksEngine::open(config).expect("open rocksdb");
    DocDb::open(
        engine,
        policy,
        DocDbOptions {
            sync_writes: true,
            ..DocDbOptions::default()
        },
    )
    .expect("open docdb")
}

fn doc(batch: u64) -> DocKey {
    DocKey::from_range(vec![KeyEntryValue::string(format!("batch-{batch:08}"))])
}

/// Runs only inside the child process: writes batches forever, printing `ack N` after each
/// commit returned (with sync on, that means it is in the WAL on disk).
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let db = open(Path::new(&dir));
    let start = db
        .scan(&docdb::ScanOptions {
            read: ReadOptions::at(HybridTime::MAX),
            ..Default::default()
        })
        .expect("scan")
        .0
        .len() as u64;
    for n in start.. {
        let mut batch = db.batch(db.clock().now());
        for field in 0..FIELDS {
            let path = SubDocKey::new(doc(n), vec![KeyEntryValue::string(format!("f{field}"))]);
            batch
                .set(
                    &path,
                    Value::new(PrimitiveValue::Int64((n * 10 + field as u64) as i64)),
                )
                .expect("set");
        }
        batch.commit().expect("commit");
        println!("ack {n}");
    }
}

/// Kills the child after `delay`, returns the highest acknowledged batch number (if any).
fn run_child(dir: &Path, delay: Duration) -> Option<u64> {
    let exe = std::env::current_exe().expect("test binary");
    let mut child = Command::new(exe)
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut last = None;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(n) = line
                .strip_prefix("ack ")
                .and_then(|n| n.parse::<u64>().ok())
            {
                last = Some(n);
            }
        }
        last
    });
    let started = Instant::now();
    while started.elapsed() < delay {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL child");
    child.wait().expect("reap child");
    reader.join().expect("reader thread")
}

#[test]
fn acknowledged_batches_survive_sigkill_whole() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let rounds: u64 = std::env::var("DOCDB_CRASH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = Rng::seed_from_env("DOCDB_CRASH_SEED");
    eprintln!("crash test seed {seed} (replay with DOCDB_CRASH_SEED={seed}), {rounds} rounds");
    let mut rng = Rng::new(seed);
    let mut acked_total = None;
    for round in 0..rounds {
        // Kill between 50 ms (while opening or at the first batches) and 550 ms in.
        let delay = Duration::from_millis(50 + rng.below(500));
        if let Some(n) = run_child(dir.path(), delay) {
            acked_total = Some(acked_total.map_or(n, |m: u64| m.max(n)));
        }
        let db = open(dir.path());
        let (docs, _) = db
            .scan(&docdb::ScanOptions {
                read: ReadOptions::at(HybridTime::MAX),
                ..Default::default()
            })
            .expect("scan");
        for (key, doc) in &docs {
            let SubDocument::Object { children, .. } = doc else {
                panic!("round {round}: {key} is not an object")
            };
            assert_eq!(
                children.len(),
                FIELDS,
                "round {round}: batch {key} is present in part: {}",
                doc.to_one_line()
            );
        }
        eprintln!(
            "round {round}: killed after {delay:?}, {} batches stored, last acknowledged {acked_total:?}",
            docs.len()
        );
        if let Some(acked) = acked_total {
            assert!(
                docs.len() as u64 > acked,
                "round {round} (seed {seed}): batch {acked} was acknowledged but only {} batches survived",
                docs.len()
            );
        }
        // Batches are numbered consecutively, so whole batches mean keys 0..len.
        for (i, (key, _)) in docs.iter().enumerate() {
            assert_eq!(
                key,
                &doc(i as u64),
                "round {round}: batches are not a prefix"
            );
        }
    }
    assert!(
        acked_total.is_some(),
        "the child never acknowledged a batch"
    );
}
