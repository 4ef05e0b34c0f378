//! Scans skip runs of invisible documents that earlier scans found (`docdb::dead_spans`):
//! the second scan over a mass delete seeks once per run, and whatever is written into a run
//! afterwards (a new document, a column of a deleted one, a write at an old time) shows up
//! in the next scan. A randomized test checks every scan against document-by-document reads.

use std::sync::Arc;

use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, GcPolicy, ReadOptions, ScanOptions, SpanSet, SubDocument};
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, Ttl, Value};
use dockv::{HybridTime, KeyEntryValue};
use engine::{Engine, KvRead, MemEngine, Rng, WriteBatch, WriteOptions};
use engine_rocks::{RocksConfig, RocksEngine};

/// Test times start far after the clock's "now" (2041), so that every read in these tests
/// is at or after every time written only when the test means it to be.
const BASE: u64 = 1 << 63;

fn at(offset: u64) -> HybridTime {
    HybridTime(BASE + offset)
}

fn open() -> DocDb<MemEngine> {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    let engine = MemEngine::with_compaction_filter(Some(policy.clone()));
    DocDb::open(engine, policy, DocDbOptions::default()).expect("open")
}

fn doc(i: i64) -> DocKey {
    DocKey::from_range(vec![KeyEntryValue::int64(i)])
}

fn column(i: i64, col: i32) -> SubDocKey {
    SubDocKey::new(doc(i), vec![KeyEntryValue::column_id(col)])
}

/// Writes columns 10 and 11 of document `i` at `ht`.
fn insert<E: Engine>(db: &DocDb<E>, i: i64, ht: HybridTime) {
    let mut batch = db.batch(ht);
    for col in [10, 11] {
        let value = Value::new(PrimitiveValue::Int64(i * 100 + i64::from(col)));
        batch.set(&column(i, col), value).expect("set");
    }
    batch.commit().expect("commit");
}

fn delete<E: Engine>(db: &DocDb<E>, i: i64, ht: HybridTime) {
    let mut batch = db.batch(ht);
    batch
        .delete(&SubDocKey::new(doc(i), vec![]))
        .expect("delete");
    batch.commit().expect("commit");
}

fn scan_at<E: Engine>(
    db: &DocDb<E>,
    read_ht: HybridTime,
    reverse: bool,
) -> (Vec<i64>, docdb::ReadStats) {
    let (docs, stats) = scan_docs(db, read_ht, reverse);
    (docs.into_iter().map(|(key, _)| key).collect(), stats)
}

fn scan_docs<E: Engine>(
    db: &DocDb<E>,
    read_ht: HybridTime,
    reverse: bool,
) -> (Vec<(i64, SubDocument)>, docdb::ReadStats) {
    let opts = ScanOptions {
        read: ReadOptions::at(read_ht),
        reverse,
        ..ScanOptions::default()
    };
    let (docs, stats) = db.scan(&opts).expect("scan");
    let docs = docs
        .into_iter()
        .map(|(key, doc)| (key_of(&key), doc))
        .collect();
    (docs, stats)
}

fn key_of(key: &DocKey) -> i64 {
    match key.range.first() {
        Some(KeyEntryValue::Int64(i, _)) => *i,
        other => panic!("unexpected key {other:?}"),
    }
}

/// 100 documents at time 10, 0..90 deleted at 20 (a delete-from-the-front queue).
fn front_deleted() -> DocDb<MemEngine> {
    let db = open();
    for i in 0..100 {
        insert(&db, i, at(10));
    }
    for i in 0..90 {
        delete(&db, i, at(20));
    }
    db
}

#[test]
fn the_second_scan_skips_the_deleted_run_with_one_seek() {
    let db = front_deleted();
    let live: Vec<i64> = (90..100).collect();
    let (first, first_stats) = scan_at(&db, at(30), false);
    assert_eq!(first, live);
    assert_eq!(first_stats.spans_skipped, 0);
    assert_eq!(
        db.span_stats(SpanSet::Documents).spans,
        1,
        "the run of 90 deleted documents"
    );

    let (second, stats) = scan_at(&db, at(30), false);
    assert_eq!(second, live);
    assert_eq!(stats.spans_skipped, 1);
    assert_eq!(
        db.span_stats(SpanSet::Documents).learned,
        1,
        "a run that is one kept span is not kept again"
    );
    assert!(
        stats.entries_seen * 5 < first_stats.entries_seen,
        "the second scan read {} records, the first {}",
        stats.entries_seen,
        first_stats.entries_seen
    );
    // Reverse scans use the same span.
    let (reverse, stats) = scan_at(&db, at(30), true);
    assert_eq!(reverse, live.iter().rev().copied().collect::<Vec<_>>());
    assert_eq!(stats.spans_skipped, 1);
}

#[test]
fn a_deleted_document_costs_its_records_and_a_long_history_costs_seeks() {
    let db = open();
    // Document 0: 40 versions of its two columns, then deleted; document 1 alive.
    for t in 1..=40 {
        insert(&db, 0, at(t));
    }
    delete(&db, 0, at(50));
    insert(&db, 1, at(50));
    let (found, stats) = scan_at(&db, at(60), false);
    assert_eq!(found, vec![1]);
    // Each column's history is left with a seek after a few steps, not stepped through.
    assert!(stats.seeks >= 2, "{stats:?}");
    assert!(stats.invisible_stepped < 30, "{stats:?}");

    // A plainly deleted document: its tombstone and its two columns, three records, no seek.
    let db = open();
    insert(&db, 0, at(10));
    delete(&db, 0, at(20));
    insert(&db, 1, at(20));
    let (found, stats) = scan_at(&db, at(30), false);
    assert_eq!(found, vec![1]);
    assert_eq!(stats.seeks, 0, "{stats:?}");
    assert_eq!(stats.invisible_stepped, 2, "{stats:?}");

    // Read before the delete, the document is there; a column written after it shows.
    assert_eq!(scan_at(&db, at(15), false).0, vec![0]);
    let mut batch = db.batch(at(25));
    batch
        .set(&column(0, 12), Value::new(PrimitiveValue::Int64(7)))
        .expect("set");
    batch.commit().expect("commit");
    let (docs, _) = scan_docs(&db, at(30), false);
    let expected = db
        .get(&SubDocKey::new(doc(0), vec![]), &ReadOptions::at(at(30)))
        .expect("get")
        .expect("the column written after the delete");
    assert_eq!(docs.first(), Some(&(0, expected)));
    assert_eq!(docs.len(), 2);
}

#[test]
fn a_root_scan_reads_roots_in_place_and_seeks_only_past_large_documents() {
    let db = open();
    for i in 0..10 {
        put_root(&db, i, None, at(10));
    }
    let (found, stats) = scan_live_roots(&db, 10, at(20));
    assert_eq!(found, (0..10).collect::<Vec<_>>());
    assert_eq!(stats.seeks, 0, "roots alone are read in place: {stats:?}");

    // Document 3 gets 20 records below its root, document 4 two: only 3's are sought past.
    let mut batch = db.batch(at(11));
    for col in 0..20 {
        let value = Value::new(PrimitiveValue::Int64(i64::from(col)));
        batch.set(&column(3, col), value).expect("set");
    }
    batch.commit().expect("commit");
    insert(&db, 4, at(11));
    let (found, stats) = scan_live_roots(&db, 10, at(20));
    assert_eq!(found, (0..10).collect::<Vec<_>>());
    assert_eq!(stats.seeks, 1, "{stats:?}");
}

/// 100 documents with a value at the root (Redis strings) at time 10, every one but each
/// tenth deleted at 20: 10 runs of 9.
fn every_tenth_kept() -> DocDb<MemEngine> {
    let db = open();
    for i in 0..100 {
        put_root(&db, i, None, at(10));
    }
    // Scans of both kinds have run: the sweep serves those.
    scan_at(&db, at(15), false);
    scan_live_roots(&db, 100, at(15));
    for i in (0..100).filter(|i| i % 10 != 0) {
        delete(&db, i, at(20));
    }
    db
}

/// A read time after the sweep's (the clock's now, moved on by the writes at `at(..)`).
fn after_sweep() -> HybridTime {
    at(1 << 40)
}

#[test]
fn after_a_sweep_the_first_scan_skips_each_deleted_run() {
    let db = every_tenth_kept();
    assert_eq!(db.sweep_queue(), (90, 0));
    let swept = db.sweep_deleted(None).expect("sweep");
    assert_eq!(swept.taken, 90);
    // One read per run, from its first document; the other 8 are in the run it kept.
    assert_eq!(swept.probes, 10, "{swept:?}");
    assert_eq!(swept.covered, 80, "{swept:?}");
    assert_eq!(swept.learned, 20, "a run per kind of scan: {swept:?}");
    assert_eq!(db.sweep_queue(), (0, 0));

    let live: Vec<i64> = (0..100).step_by(10).collect();
    let (found, stats) = scan_at(&db, after_sweep(), false);
    assert_eq!(found, live);
    assert_eq!(stats.spans_skipped, 10, "{stats:?}");
    assert_eq!(stats.invisible_stepped, 0, "{stats:?}");
    let (roots, stats) = scan_live_roots(&db, 100, after_sweep());
    assert_eq!(roots, live);
    assert_eq!(stats.spans_skipped, 10, "{stats:?}");
    // Reads before the deletes do not use the runs.
    let (before, stats) = scan_at(&db, at(15), false);
    assert_eq!(before, (0..100).collect::<Vec<_>>());
    assert_eq!(stats.spans_skipped, 0);
}

#[test]
fn a_write_after_the_sweep_shows_in_the_next_scan() {
    let db = every_tenth_kept();
    db.sweep_deleted(None).expect("sweep");
    insert(&db, 55, at(1 << 30));
    let (found, _) = scan_at(&db, after_sweep(), false);
    let mut live: Vec<i64> = (0..100).step_by(10).collect();
    live.push(55);
    live.sort_unstable();
    assert_eq!(found, live);
    assert_eq!(read_each(&db, 100, after_sweep()).len(), live.len());
}

#[test]
fn a_sweep_serves_only_the_scans_the_database_has_run() {
    let db = open();
    for i in 0..20 {
        insert(&db, i, at(10));
    }
    for i in 0..10 {
        delete(&db, i, at(20));
    }
    let swept = db.sweep_deleted(None).expect("sweep");
    assert_eq!((swept.taken, swept.probes, swept.learned), (10, 0, 0));
    assert_eq!(db.span_totals().spans, 0);
}

#[test]
fn a_sweep_out_of_time_leaves_the_rest_queued() {
    let db = every_tenth_kept();
    let swept = db
        .sweep_deleted(Some(std::time::Duration::ZERO))
        .expect("sweep");
    // One probe runs (its run of 9 ends before the walk looks at the clock), then the
    // sweep stops.
    assert_eq!((swept.taken, swept.probes, swept.left), (90, 1, 89));
    assert_eq!(db.sweep_queue(), (89, 0));
    let swept = db.sweep_deleted(None).expect("sweep");
    assert_eq!((swept.probes, swept.covered), (9, 80));
}

#[test]
fn a_long_run_is_swept_over_several_sweeps() {
    let db = open();
    for i in 0..400 {
        put_root(&db, i, None, at(10));
    }
    scan_at(&db, at(15), false);
    scan_live_roots(&db, 400, at(15));
    for i in 0..390 {
        delete(&db, i, at(20));
    }
    // Each probe stops within 64 documents; the next sweep goes on from there.
    let mut sweeps = 0;
    while db.sweep_queue().0 > 0 {
        sweeps += 1;
        assert!(sweeps < 100, "the sweeps make no progress");
        db.sweep_deleted(Some(std::time::Duration::ZERO))
            .expect("sweep");
    }
    assert!(
        sweeps >= 6,
        "390 documents in steps of at most 63: {sweeps} sweeps"
    );
    let (found, stats) = scan_at(&db, after_sweep(), false);
    assert_eq!(found, (390..400).collect::<Vec<_>>());
    assert_eq!(stats.invisible_stepped, 0, "{stats:?}");
    assert!(stats.spans_skipped >= 6, "{stats:?}");
    let (roots, stats) = scan_live_roots(&db, 400, after_sweep());
    assert_eq!(roots, (390..400).collect::<Vec<_>>());
    assert_eq!(stats.invisible_stepped, 0, "{stats:?}");
}

#[test]
fn reads_before_the_span_was_learned_do_not_use_it() {
    let db = front_deleted();
    scan_at(&db, at(30), false);
    // At 25 the documents are deleted too, but the span is only known from 30 on.
    let (at_25, stats) = scan_at(&db, at(25), false);
    assert_eq!(at_25, (90..100).collect::<Vec<_>>());
    assert_eq!(stats.spans_skipped, 0);
    // Before the deletes every document is there.
    let (at_15, _) = scan_at(&db, at(15), false);
    assert_eq!(at_15, (0..100).collect::<Vec<_>>());
}

#[test]
fn a_scan_that_cannot_see_every_write_learns_nothing() {
    let db = front_deleted();
    // A column of deleted document 45, written at 40: a scan at 30 finds 45 invisible, but
    // what is stored after its read time may show it later.
    let mut batch = db.batch(at(40));
    batch
        .set(&column(45, 12), Value::new(PrimitiveValue::Int64(7)))
        .expect("set");
    batch.commit().expect("commit");
    assert_eq!(scan_at(&db, at(30), false).0, (90..100).collect::<Vec<_>>());
    assert_eq!(db.span_stats(SpanSet::Documents).spans, 0);
    assert_eq!(scan_at(&db, at(50), false).0[0], 45);
    // Learned at 50 (nothing newer stored): two runs, around document 45.
    assert_eq!(db.span_stats(SpanSet::Documents).spans, 2);
    // A projection may hide live documents (90..100 here, which lack column 12).
    let opts = ScanOptions {
        read: ReadOptions {
            projection: Some(vec![KeyEntryValue::column_id(12)]),
            ..ReadOptions::at(at(50))
        },
        ..ScanOptions::default()
    };
    let (docs, _) = db.scan(&opts).expect("scan");
    assert_eq!(docs.len(), 1, "only document 45 has column 12");
    // Had it kept what it found invisible, 90..100 would be skipped now.
    let mut all = vec![45];
    all.extend(90..100);
    assert_eq!(scan_at(&db, at(50), false).0, all);
}

#[test]
fn writes_into_a_run_show_in_the_next_scan() {
    let db = front_deleted();
    let scan = |db: &DocDb<MemEngine>, t| scan_at(db, at(t), false).0;
    scan(&db, 30);
    assert_eq!(db.span_stats(SpanSet::Documents).spans, 1);

    // A column of a deleted document, written after its tombstone.
    let mut batch = db.batch(at(40));
    batch
        .set(&column(45, 12), Value::new(PrimitiveValue::Int64(7)))
        .expect("set");
    batch.commit().expect("commit");
    // The run is split around document 45; the next scan skips both parts.
    assert_eq!(db.span_stats(SpanSet::Documents).spans, 2);
    let mut expected: Vec<i64> = vec![45];
    expected.extend(90..100);
    let (found, stats) = scan_at(&db, at(50), false);
    assert_eq!(found, expected);
    assert_eq!(stats.spans_skipped, 2);
    assert_eq!(db.span_stats(SpanSet::Documents).spans, 2);
    assert_eq!(scan(&db, 50), expected);

    // A new document between two deleted ones, written at an old time.
    let between = DocKey::from_range(vec![KeyEntryValue::int64(30), KeyEntryValue::int64(1)]);
    let mut batch = db.batch(at(5));
    batch
        .set(
            &SubDocKey::new(between, vec![KeyEntryValue::column_id(10)]),
            Value::new(PrimitiveValue::Int64(1)),
        )
        .expect("set");
    batch.commit().expect("commit");
    let (docs, _) = db
        .scan(&ScanOptions {
            read: ReadOptions::at(at(50)),
            ..ScanOptions::default()
        })
        .expect("scan");
    assert_eq!(docs.len(), 12, "the document written at time 5 is found");
}

#[test]
fn scans_inside_write_now_see_their_own_pending_writes() {
    let db = open();
    for i in 0..20 {
        insert(&db, i, at(10));
    }
    for i in 0..20 {
        delete(&db, i, at(20));
    }
    let now = db.clock().now();
    assert!(scan_at(&db, now, false).0.is_empty());
    assert_eq!(db.span_stats(SpanSet::Documents).spans, 1);
    let found = db
        .write_now(|ht| {
            let mut batch = db.batch(ht);
            batch.set(&column(7, 10), Value::new(PrimitiveValue::Int64(1)))?;
            batch.commit()?;
            Ok(scan_at(&db, ht, false).0)
        })
        .expect("write_now");
    assert_eq!(found, vec![7]);
    assert_eq!(scan_at(&db, db.clock().now(), false).0, vec![7]);
}

/// Every document as a point read sees it, in key order.
fn read_each(db: &DocDb<MemEngine>, keys: i64, read_ht: HybridTime) -> Vec<(i64, SubDocument)> {
    (0..keys)
        .filter_map(|i| {
            let path = SubDocKey::new(doc(i), vec![]);
            let found = db.get(&path, &ReadOptions::at(read_ht)).expect("get")?;
            Some((i, found))
        })
        .collect()
}

/// The documents whose root record is live at `read_ht`, read one by one.
fn live_roots_each(db: &DocDb<MemEngine>, keys: i64, read_ht: HybridTime) -> Vec<i64> {
    (0..keys)
        .filter(|&i| {
            let record = db
                .visible_record(&doc(i).encode(), ReadOptions::at(read_ht))
                .expect("record");
            record.is_some_and(|r| r.is_live())
        })
        .collect()
}

/// The documents [`DocDb::scan_roots`] visits at `read_ht`.
fn scan_live_roots(
    db: &DocDb<MemEngine>,
    keys: i64,
    read_ht: HybridTime,
) -> (Vec<i64>, docdb::ReadStats) {
    let mut found = Vec::new();
    let stats = db
        .scan_roots(&doc(0).encode(), &doc(keys).encode(), read_ht, |key, _| {
            let (key, _) = DocKey::decode(key).expect("doc key");
            found.push(key_of(&key));
            true
        })
        .expect("scan_roots");
    (found, stats)
}

/// Writes a value at the root of document `i` (a Redis string), expiring after `ttl_ms`.
fn put_root(db: &DocDb<MemEngine>, i: i64, ttl_ms: Option<i64>, ht: HybridTime) {
    let mut batch = db.batch(ht);
    let value = Value::with_ttl(PrimitiveValue::Int64(i), ttl_ms.map(Ttl));
    batch
        .set(&SubDocKey::new(doc(i), vec![]), value)
        .expect("set");
    batch.commit().expect("commit");
}

/// The random test's clock: a tick is 250 µs, so TTLs of a few milliseconds expire within
/// a few dozen steps.
fn tick(n: u64) -> HybridTime {
    HybridTime(BASE + ((n * 250) << 12))
}

#[test]
fn random_writes_and_scans_agree_with_point_reads() {
    let seed = Rng::seed_from_env("DOCDB_DEAD_SPANS_SEED");
    let mut rng = Rng::new(seed);
    const KEYS: i64 = 60;
    let (mut skipped, mut invalidated, mut roots_skipped, mut sweep_learned) = (0, 0, 0, 0);
    for round in 0..20 {
        let db = open();
        let mut now = 10;
        for step in 0..400 {
            now += 1 + rng.below(3);
            let ht = tick(now);
            let i = rng.below(KEYS as u64) as i64;
            let op = rng.below(14);
            if std::env::var("TRACE").is_ok() {
                eprintln!("step {step} now {now} i {i} op {op}");
            }
            match op {
                0..=2 => insert(&db, i, ht),
                3..=6 => {
                    // Deletes come in runs, as mass deletes do.
                    for j in i..(i + 1 + rng.below(8) as i64).min(KEYS) {
                        delete(&db, j, ht);
                    }
                }
                7 => {
                    // A write into the past, below some tombstones.
                    insert(&db, i, tick(now - rng.below(20).min(now - 1)));
                }
                8 | 9 => {
                    // A value at the root, sometimes expiring, sometimes in the past.
                    let ttl = (rng.below(2) == 0).then(|| 1 + rng.below(8) as i64);
                    let back = if op == 9 {
                        rng.below(20).min(now - 1)
                    } else {
                        0
                    };
                    put_root(&db, i, ttl, tick(now - back));
                }
                13 => {
                    // A background sweep of the documents deleted since the last one.
                    let swept = db.sweep_deleted(None).expect("sweep");
                    sweep_learned += swept.learned;
                }
                _ => {
                    // Scans at now, and now and then in the past or the future.
                    let read = match rng.below(4) {
                        0 => tick(now.saturating_sub(rng.below(30))),
                        1 => tick(now + rng.below(30)),
                        _ => ht,
                    };
                    let context = format!(
                        "seed {seed} (DOCDB_DEAD_SPANS_SEED), round {round}, step {step}, \
                         read at {read:?}"
                    );
                    let reverse = rng.below(3) == 0;
                    let mut expected = read_each(&db, KEYS, read);
                    if reverse {
                        expected.reverse();
                    }
                    let (found, stats) = scan_docs(&db, read, reverse);
                    skipped += stats.spans_skipped;
                    assert_eq!(found, expected, "{context}, reverse {reverse}");
                    let (roots, stats) = scan_live_roots(&db, KEYS, read);
                    roots_skipped += stats.spans_skipped;
                    assert_eq!(roots, live_roots_each(&db, KEYS, read), "{context}, roots");
                }
            }
        }
        invalidated += db.span_stats(SpanSet::Documents).invalidated;
    }
    // The runs must have been used, and written into, for the test to mean anything.
    assert!(skipped > 100, "seed {seed}: {skipped} spans skipped");
    assert!(
        invalidated > 100,
        "seed {seed}: {invalidated} spans invalidated"
    );
    assert!(
        roots_skipped > 100,
        "seed {seed}: {roots_skipped} root spans skipped"
    );
    assert!(
        sweep_learned > 20,
        "seed {seed}: sweeps kept {sweep_learned} runs"
    );
}

/// Writes columns 10 and 11 of document `i` inside `write_now`, or deletes it.
fn write_now(db: &DocDb<MemEngine>, i: i64, delete: bool) {
    db.write_now(|ht| {
        let mut batch = db.batch(ht);
        if delete {
            batch.delete(&SubDocKey::new(doc(i), vec![]))?;
        } else {
            for col in [10, 11] {
                batch.set(&column(i, col), Value::new(PrimitiveValue::Int64(i)))?;
            }
        }
        batch.commit()
    })
    .expect("write_now");
}

#[test]
fn a_scan_keeps_its_runs_while_a_write_is_in_flight() {
    let db = &open();
    for i in 0..100 {
        write_now(db, i, false);
    }
    for i in 0..90 {
        write_now(db, i, true);
    }
    let (to_scanner, written) = std::sync::mpsc::channel();
    let (to_writer, scanned) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            db.write_now(|ht| {
                let mut batch = db.batch(ht);
                batch.set(&column(45, 12), Value::new(PrimitiveValue::Int64(7)))?;
                batch.commit()?;
                to_scanner.send(()).expect("send");
                scanned.recv().expect("recv");
                Ok(())
            })
            .expect("write_now");
        });
        written.recv().expect("recv");
        // Its iterator cannot see the write in flight, which finds document 45 invisible.
        let (found, _) = scan_at(db, db.clock().now(), false);
        assert_eq!(found, (90..100).collect::<Vec<_>>());
        to_writer.send(()).expect("send");
    });
    // It kept the documents around 45, which the write in flight wrote.
    let stats = db.span_stats(SpanSet::Documents);
    assert_eq!((stats.spans, stats.invalidated), (2, 1));
    let (found, stats) = scan_at(db, db.safe_time(), false);
    let mut expected = vec![45];
    expected.extend(90..100);
    assert_eq!(found, expected);
    assert_eq!(stats.spans_skipped, 2);
}

/// A writer and a scanner at once: every scan, read at a safe time while writes land, must
/// match document-by-document reads at its time afterwards. A run kept with a document the
/// scanner's iterator missed a write to would hide that document from a later scan. The
/// writer works a queue (insert at the tail, delete at the head, as in YugabyteDB #15098),
/// and every fourth write goes to a random document behind the tail.
#[test]
fn scans_racing_writes_agree_with_point_reads() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let seed = Rng::seed_from_env("DOCDB_DEAD_SPANS_SEED");
    const WRITES: usize = 3_000;
    let db = open();
    let done = AtomicBool::new(false);
    let (scans, tail) = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut rng = Rng::new(seed);
            let (mut head, mut tail) = (0, 0);
            for _ in 0..WRITES {
                match rng.below(8) {
                    0 => write_now(&db, rng.below(tail as u64 + 1) as i64, false),
                    1 => write_now(&db, rng.below(tail as u64 + 1) as i64, true),
                    2..=4 => {
                        write_now(&db, tail, false);
                        tail += 1;
                    }
                    _ if head < tail => {
                        write_now(&db, head, true);
                        head += 1;
                    }
                    _ => {}
                }
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
            done.store(true, Ordering::SeqCst);
            tail
        });
        let mut rng = Rng::new(seed ^ 1);
        let mut scans = Vec::new();
        while !done.load(Ordering::SeqCst) {
            let read = db.safe_time();
            let reverse = rng.below(3) == 0;
            let (found, stats) = scan_at(&db, read, reverse);
            scans.push((read, reverse, found, stats.spans_skipped));
            // Fewer scans to check afterwards, each over more writes.
            std::thread::sleep(std::time::Duration::from_micros(500));
        }
        (scans, writer.join().expect("writer"))
    });
    let skipped: u64 = scans.iter().map(|scan| scan.3).sum();
    for (n, (read, reverse, found, _)) in scans.iter().enumerate() {
        let mut expected: Vec<i64> = read_each(&db, tail + 1, *read)
            .iter()
            .map(|d| d.0)
            .collect();
        if *reverse {
            expected.reverse();
        }
        assert_eq!(
            found,
            &expected,
            "seed {seed} (DOCDB_DEAD_SPANS_SEED), scan {n} of {}, read at {read:?}, \
             reverse {reverse}",
            scans.len()
        );
    }
    let invalidated = db.span_stats(SpanSet::Documents).invalidated;
    assert!(
        skipped > 100 && invalidated > 10,
        "seed {seed}: {skipped} spans skipped, {invalidated} invalidated, {tail} documents, \
         {} scans",
        scans.len()
    );
}

/// The engine key a clean close saves the runs under (`docdb::db`'s `SAVED_SPANS_KEY`).
const SAVED_SPANS_KEY: &[u8] = b"\x01docdb.saved_spans";

/// Closes `db` and opens its engine again. (The engine keeps the first policy as its
/// compaction filter; these tests do not compact.)
fn reopen(db: DocDb<MemEngine>) -> DocDb<MemEngine> {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    DocDb::open(db.into_engine(), policy, DocDbOptions::default()).expect("reopen")
}

/// 100 documents at 10, then runs deleted at 20: 0..40 and 50..90; a scan at 30 keeps both.
fn two_runs_learned() -> DocDb<MemEngine> {
    let db = open();
    for i in 0..100 {
        insert(&db, i, at(10));
    }
    for i in (0..40).chain(50..90) {
        delete(&db, i, at(20));
    }
    scan_at(&db, at(30), false);
    assert_eq!(db.span_stats(SpanSet::Documents).spans, 2);
    db
}

fn live_after_two_runs() -> Vec<i64> {
    (40..50).chain(90..100).collect()
}

#[test]
fn runs_saved_at_a_clean_close_are_skipped_after_reopening() {
    let db = two_runs_learned();
    // A write into a run splits it: one of the three runs saved starts past document 20.
    insert(&db, 20, at(25));
    let mut live = live_after_two_runs();
    live.insert(0, 20);
    assert_eq!(db.save_spans().expect("save"), 3);
    let db = reopen(db);
    let stats = db.span_stats(SpanSet::Documents);
    assert_eq!((stats.spans, stats.restored), (3, 3));
    let (docs, scan) = scan_at(&db, at(30), false);
    assert_eq!(docs, live);
    assert_eq!(scan.spans_skipped, 3, "every run skipped with a seek");
    // 2 records per live document, and document 20's tombstone and old versions: nothing
    // of the 80 deleted documents' 240 records.
    assert!(
        (42..=45).contains(&scan.entries_seen),
        "{} records read",
        scan.entries_seen
    );
    // Only reads at or after the scan that learned them use them.
    let (docs, scan) = scan_at(&db, at(15), false);
    assert_eq!(docs, (0..100).collect::<Vec<_>>());
    assert_eq!(scan.spans_skipped, 0);

    // They are as good as learned ones: a write into one splits it.
    insert(&db, 60, at(40));
    let (docs, _) = scan_at(&db, at(50), false);
    let mut expected = live;
    expected.push(60);
    expected.sort_unstable();
    assert_eq!(docs, expected);

    // The record was taken: the next open restores nothing unless saved again.
    let db = reopen(db);
    assert_eq!(db.span_stats(SpanSet::Documents).restored, 0);
    assert_eq!(db.engine().get(SAVED_SPANS_KEY).expect("get"), None);
}

#[test]
fn saved_runs_are_dropped_when_anything_was_written_since() {
    // A write after the save (by this program, or by one that knows nothing of saved runs
    // while the record is in place) makes the record stale, whether it lands in a run or not.
    for written in [60, 200] {
        let db = two_runs_learned();
        assert_eq!(db.save_spans().expect("save"), 2);
        insert(&db, written, at(40));
        let db = reopen(db);
        let stats = db.span_stats(SpanSet::Documents);
        assert_eq!((stats.spans, stats.restored), (0, 0), "written {written}");
        let (docs, scan) = scan_at(&db, at(50), false);
        let mut expected = live_after_two_runs();
        expected.push(written);
        expected.sort_unstable();
        assert_eq!(docs, expected, "written {written}");
        assert_eq!(scan.spans_skipped, 0);
        assert_eq!(db.engine().get(SAVED_SPANS_KEY).expect("get"), None);
    }
}

#[test]
fn a_corrupt_saved_record_is_dropped_and_loses_nothing() {
    let db = two_runs_learned();
    db.save_spans().expect("save");
    let engine = db.into_engine();
    let saved = engine.get(SAVED_SPANS_KEY).expect("get").expect("saved");
    for damaged in [saved[..saved.len() - 1].to_vec(), b"garbage".to_vec()] {
        let mut batch = WriteBatch::default();
        batch.put(SAVED_SPANS_KEY, damaged);
        engine
            .write(&batch, WriteOptions::default())
            .expect("write");
    }
    let db = DocDb::open(
        engine,
        GcPolicy::new(Arc::new(HybridClock::default())),
        DocDbOptions::default(),
    )
    .expect("a damaged record does not stop the open");
    assert_eq!(db.span_stats(SpanSet::Documents).restored, 0);
    assert_eq!(db.engine().get(SAVED_SPANS_KEY).expect("get"), None);
    assert_eq!(scan_at(&db, at(30), false).0, live_after_two_runs());
}

#[test]
fn saved_runs_survive_a_rocksdb_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let open_rocks = || {
        let policy = GcPolicy::new(Arc::new(HybridClock::default()));
        let config = RocksConfig {
            compaction_filter_factory: Some(policy.clone()),
            ..RocksConfig::new(dir.path())
        };
        let engine = RocksEngine::open(config).expect("open rocksdb");
        DocDb::open(engine, policy, DocDbOptions::default()).expect("open docdb")
    };
    let db = open_rocks();
    for i in 0..100 {
        insert(&db, i, at(10));
    }
    for i in (0..40).chain(50..90) {
        delete(&db, i, at(20));
    }
    // Flushed, so the deleted records are in a file, as after any real mass delete.
    db.flush().expect("flush");
    scan_at(&db, at(30), false);
    assert_eq!(db.save_spans().expect("save"), 2);
    // Closed without a flush: the saved record comes back from RocksDB's log.
    drop(db);

    let db = open_rocks();
    assert_eq!(db.span_stats(SpanSet::Documents).restored, 2);
    let (docs, scan) = scan_at(&db, at(30), false);
    assert_eq!(docs, live_after_two_runs());
    assert_eq!(scan.spans_skipped, 2);
    drop(db);

    // Nothing saved at the last close: nothing comes back.
    let db = open_rocks();
    assert_eq!(db.span_stats(SpanSet::Documents).restored, 0);
    assert_eq!(scan_at(&db, at(30), false).0, live_after_two_runs());
}
