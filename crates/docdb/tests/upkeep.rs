//! The background upkeep thread (`docdb::upkeep`): it sweeps a mass delete without the
//! caller's help, so that the first scan after it skips each run of deleted documents with
//! one seek, and it ends when its handle or the database is dropped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, GcPolicy, ReadOptions, ScanOptions, UpkeepOptions, UpkeepStats};
use dockv::KeyEntryValue;
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, Value};
use engine::MemEngine;

/// Rounds run only when woken: a test decides when the thread works.
const NEVER: Duration = Duration::from_secs(3600);

fn open() -> Arc<DocDb<MemEngine>> {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    let engine = MemEngine::with_compaction_filter(Some(policy.clone()));
    Arc::new(DocDb::open(engine, policy, DocDbOptions::default()).expect("open"))
}

fn root(i: i64) -> SubDocKey {
    SubDocKey::new(DocKey::from_range(vec![KeyEntryValue::int64(i)]), vec![])
}

fn write(db: &DocDb<MemEngine>, i: i64, value: Option<i64>) {
    db.write_now(|ht| {
        let mut batch = db.batch(ht);
        match value {
            Some(v) => batch.set(&root(i), Value::new(PrimitiveValue::Int64(v)))?,
            None => batch.delete(&root(i))?,
        }
        batch.commit()
    })
    .expect("write");
}

fn scan(db: &DocDb<MemEngine>) -> (usize, docdb::ReadStats) {
    let opts = ScanOptions {
        read: ReadOptions::at(db.safe_time()),
        ..ScanOptions::default()
    };
    let (docs, stats) = db.scan(&opts).expect("scan");
    (docs.len(), stats)
}

/// Polls `stats` until `done` holds; fails after a minute rather than hanging.
fn wait_for(stats: impl Fn() -> UpkeepStats, done: impl Fn(&UpkeepStats) -> bool) -> UpkeepStats {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = stats();
        if done(&now) {
            return now;
        }
        assert!(Instant::now() < deadline, "upkeep never got there: {now:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_thread_sweeps_a_mass_delete_for_the_next_scan() {
    let db = open();
    for i in 0..200 {
        write(&db, i, Some(i));
    }
    // A scan has run, so the sweep keeps runs for scans of documents.
    assert_eq!(scan(&db).0, 200);
    for i in (0..200).filter(|i| i % 20 != 0) {
        write(&db, i, None);
    }
    assert_eq!(db.sweep_queue(), (190, 0));

    let options = UpkeepOptions {
        every: NEVER,
        ..UpkeepOptions::default()
    };
    let upkeep = db.start_upkeep(options).expect("start");
    upkeep.wake();
    let stats = wait_for(|| upkeep.stats(), |s| s.rounds >= 1);
    assert_eq!(
        (stats.swept, stats.left, stats.failures),
        (190, 0, 0),
        "{stats:?}"
    );
    assert_eq!(db.sweep_queue(), (0, 0));

    // The first scan since the delete skips each of the 10 runs with a seek.
    let (found, read) = scan(&db);
    assert_eq!(found, 10);
    assert_eq!(read.spans_skipped, 10, "{read:?}");
    assert_eq!(read.invisible_stepped, 0, "{read:?}");
}

#[test]
fn rounds_follow_the_interval() {
    let db = open();
    let options = UpkeepOptions {
        every: Duration::from_millis(1),
        ..UpkeepOptions::default()
    };
    let upkeep = db.start_upkeep(options).expect("start");
    let stats = wait_for(|| upkeep.stats(), |s| s.rounds >= 3);
    assert_eq!((stats.swept, stats.failures), (0, 0), "{stats:?}");
}

#[test]
fn dropping_the_handle_stops_the_thread() {
    let db = open();
    let upkeep = db.start_upkeep(UpkeepOptions::default()).expect("start");
    assert_eq!(Arc::weak_count(&db), 1, "the thread holds a weak reference");
    assert!(!upkeep.is_finished());
    drop(upkeep);
    assert_eq!(Arc::weak_count(&db), 0, "the thread has ended");
}

#[test]
fn dropping_the_database_ends_the_thread_at_its_next_round() {
    let db = open();
    let options = UpkeepOptions {
        every: NEVER,
        ..UpkeepOptions::default()
    };
    let upkeep = db.start_upkeep(options).expect("start");
    drop(db);
    upkeep.wake();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !upkeep.is_finished() {
        assert!(
            Instant::now() < deadline,
            "the thread outlived its database"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(upkeep.stats().rounds, 0, "no round ran without a database");
}
