//! On RocksDB: a full compaction's history cutoff stays below records still in the memtable.
//!
//! The value `k` expires at 2 s, a PERSIST written at 1.5 s keeps it, and the PERSIST is
//! still in the memtable when a background compaction merges every file (a full compaction)
//! at a cutoff past 2 s. Without the cap, that compaction drops the value as expired and
//! the PERSIST is left restating nothing: `k` is lost.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use docdb::clock::{HybridClock, PhysicalClock};
use docdb::db::{DocDb, DocDbOptions, GcPolicy};
use docdb::reader::ReadOptions;
use docdb::subdoc::SubDocument;
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, Ttl, Value};
use dockv::{HybridTime, KeyEntryValue};
use engine::Engine;
use engine_rocks::{RocksConfig, RocksEngine};

struct TestClock(Arc<AtomicU64>);

impl PhysicalClock for TestClock {
    fn now_micros(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn path(doc: &str) -> SubDocKey {
    SubDocKey::new(DocKey::from_range(vec![KeyEntryValue::string(doc)]), vec![])
}

fn set(db: &DocDb<RocksEngine>, doc: &str, micros: u64, ttl: Option<Ttl>) {
    let mut batch = db.batch(HybridTime::from_micros(micros));
    batch
        .set(&path(doc), Value::with_ttl(PrimitiveValue::Int64(1), ttl))
        .expect("set");
    batch.commit().expect("commit");
}

fn get(db: &DocDb<RocksEngine>, doc: &str, micros: u64) -> Option<SubDocument> {
    let opts = ReadOptions {
        read_ht: HybridTime::from_micros(micros),
        table_ttl: None,
        projection: None,
    };
    db.get(&path(doc), &opts).expect("get")
}

/// A database with no history retention (the cutoff is "now"), background compactions off,
/// on a clock the test sets.
fn open(dir: &std::path::Path, physical: &Arc<AtomicU64>) -> DocDb<RocksEngine> {
    let clock = Arc::new(HybridClock::new(Box::new(TestClock(physical.clone()))));
    let policy = GcPolicy::new(clock);
    let engine = RocksEngine::open(RocksConfig {
        compaction_filter_factory: Some(policy.clone()),
        ..RocksConfig::new(dir)
    })
    .expect("open rocksdb");
    engine
        .set_auto_compactions(false)
        .expect("pause compactions");
    let options = DocDbOptions {
        history_retention: Duration::ZERO,
        sync_writes: false,
        ..DocDbOptions::default()
    };
    DocDb::open(engine, policy, options).expect("open")
}

/// Writes three small documents, each flushed into a file of its own by the engine (as its
/// own flushes of a full memtable would, unseen by DocDB).
fn three_more_files(db: &DocDb<RocksEngine>, micros: u64) {
    for i in 0..3u64 {
        set(db, &format!("filler{i}"), micros + i, None);
        db.engine().flush().expect("engine flush");
    }
}

#[test]
fn a_persist_still_in_the_memtable_keeps_its_value_through_a_full_compaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let physical = Arc::new(AtomicU64::new(1_000_000));
    let db = open(dir.path(), &physical);

    // 1 s: k and gone, each with a TTL of 1 s, in a file.
    set(&db, "k", 1_000_000, Some(Ttl(1000)));
    set(&db, "gone", 1_000_000, Some(Ttl(1000)));
    db.engine().flush().expect("engine flush");
    three_more_files(&db, 1_100_000);
    // 1.5 s: PERSIST k, in the memtable only.
    physical.store(1_500_000, Ordering::SeqCst);
    let mut batch = db.batch(HybridTime::from_micros(1_500_000));
    batch.expire(&path("k"), None).expect("persist");
    batch.commit().expect("commit");

    // 10 s: the four files merge in the background at a cutoff of "now".
    physical.store(10_000_000, Ordering::SeqCst);
    let before = db.gc_policy().stats();
    db.engine().set_auto_compactions(true).expect("resume");
    db.engine().wait_for_background_work().expect("wait");
    let gc = db.gc_policy().stats().since(&before);
    assert!(gc.keys_seen >= 5, "a background compaction ran: {gc:?}");
    assert!(
        get(&db, "k", 10_000_000).is_some(),
        "k was persisted at 1.5 s, before it expired; GC {gc:?}"
    );
    assert_eq!(get(&db, "gone", 10_000_000), None);

    // Once the PERSIST is in a file, a full compaction collects what expired (gone).
    db.flush().expect("flush");
    physical.store(30_000_000, Ordering::SeqCst);
    let gc = db
        .compact(HybridTime::from_micros(30_000_000))
        .expect("compact");
    assert_eq!(gc.expired_dropped, 1, "gone is collected: {gc:?}");
    assert!(get(&db, "k", 30_000_000).is_some());
}

#[test]
fn upkeep_flushes_once_the_oldest_unflushed_write_is_half_the_retention_old() {
    let dir = tempfile::tempdir().expect("tempdir");
    let physical = Arc::new(AtomicU64::new(1_000_000));
    let db = open(dir.path(), &physical);
    db.set_options(DocDbOptions {
        history_retention: Duration::from_secs(60),
        ..db.options()
    });
    assert!(!db.maintain().expect("maintain"), "nothing written");

    set(&db, "k", 1_000_000, None);
    let in_memtable = || {
        db.engine()
            .property_int("rocksdb.num-entries-active-mem-table")
            .expect("property")
    };
    assert!(in_memtable() > Some(0), "k is in the memtable");
    physical.store(30_999_999, Ordering::SeqCst);
    assert!(!db.maintain().expect("maintain"), "29.999 s old: not yet");
    physical.store(31_000_000, Ordering::SeqCst);
    assert!(db.maintain().expect("maintain"), "30 s old: flushed");
    assert_eq!(in_memtable(), Some(0));
    assert!(!db.maintain().expect("maintain"), "nothing written since");
}

/// Point reads leave the engine's iterator kept for the next one; upkeep lets it go once a
/// second passed without a read, so it does not pin a memtable the database flushed.
#[test]
fn upkeep_releases_the_iterator_reads_kept_once_they_stop() {
    let dir = tempfile::tempdir().expect("tempdir");
    let physical = Arc::new(AtomicU64::new(1_000_000));
    let db = open(dir.path(), &physical);
    let versions = || {
        db.engine()
            .property_int("rocksdb.num-live-versions")
            .expect("property")
            .expect("known property")
    };
    set(&db, "k", 1_000_000, None);
    db.flush().expect("flush");
    assert!(get(&db, "k", 1_000_001).is_some());
    set(&db, "j", 1_000_002, None);
    db.flush().expect("flush");
    assert_eq!(
        versions(),
        2,
        "the read's kept iterator pins the first flush's version"
    );
    db.maintain().expect("maintain");
    assert_eq!(versions(), 2, "read since the last upkeep: still kept");
    db.maintain().expect("maintain");
    assert_eq!(versions(), 1, "no read since: released");
    assert!(
        get(&db, "j", 1_000_003).is_some(),
        "a read after the release sees the latest"
    );
}
