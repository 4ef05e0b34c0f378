//! `write_now` called inside `write_now` (a server's MULTI/EXEC): every batch runs at the
//! outer call's time with write ids numbered on, reads inside see the earlier batches, and
//! `safe_time` inside is that time rather than a wait for the write in flight (itself).
//! The batches land in the engine as one write when the outer call succeeds, and not at all
//! when it fails.
//!
//! A `write_now_staged` hands its writes to another thread to land: reads wait for them,
//! the next writes read them, they land in order, and a failure fails what read it.

use std::sync::Arc;

use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, GcPolicy, ReadOptions, SubDocument};
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, Value};
use dockv::{HybridTime, KeyEntryValue};
use engine::{Engine, EngineIterator, IterOptions, KvRead, MemEngine};

fn open() -> DocDb<MemEngine> {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    DocDb::open(MemEngine::default(), policy, DocDbOptions::default()).expect("open")
}

fn doc() -> DocKey {
    DocKey::with_hash(7, vec![KeyEntryValue::string("h")], vec![])
}

fn field(name: &str) -> SubDocKey {
    SubDocKey::new(doc(), vec![KeyEntryValue::string(name)])
}

/// One nested `write_now` writing `value` at `path` (a tombstone when `None`).
fn nested_write(db: &DocDb<MemEngine>, path: &SubDocKey, value: Option<&str>) -> HybridTime {
    db.write_now(|ht| {
        let mut batch = db.batch(ht);
        let value = match value {
            Some(v) => Value::new(PrimitiveValue::string(v)),
            None => Value::tombstone(),
        };
        batch.set(path, value)?;
        batch.commit()?;
        Ok(ht)
    })
    .expect("nested write")
}

fn read(db: &DocDb<MemEngine>, ht: HybridTime) -> Option<SubDocument> {
    db.get(&SubDocKey::new(doc(), vec![]), &ReadOptions::at(ht))
        .expect("read")
}

#[test]
fn nested_batches_share_the_time_and_number_their_write_ids_on() {
    let db = open();
    let (outer, inner_times, seen_inside) = db
        .write_now(|ht| {
            let first = nested_write(&db, &field("a"), Some("1"));
            let second = nested_write(&db, &field("b"), Some("2"));
            // A later batch's tombstone over the whole document, then a field written again:
            // each must be newer than what came before, though all share one hybrid time.
            let third = nested_write(&db, &SubDocKey::new(doc(), vec![]), None);
            let fourth = nested_write(&db, &field("b"), Some("3"));
            assert_eq!(
                db.safe_time(),
                ht,
                "safe_time inside write_now is its own time"
            );
            Ok((ht, [first, second, third, fourth], read(&db, ht)))
        })
        .expect("outer write");
    assert!(inner_times.iter().all(|&t| t == outer));
    let line = |doc: Option<SubDocument>| doc.map(|d| d.to_one_line());
    let expected = Some(r#"{"b": "3"}"#.to_string());
    assert_eq!(
        line(seen_inside),
        expected,
        "reads inside see every batch so far"
    );
    assert_eq!(line(read(&db, outer)), expected);
    // The four batches' records: write ids 0, 1, 2, 3 at one time (0 is not printed). The
    // second (b at write id 1) is not stored: the fourth rewrote b at the same time, and a
    // read at that time sees every write id of it, so no read could see the second.
    let dump = db.dump().expect("dump");
    for w in [2, 3] {
        assert!(
            dump.contains(&format!("w: {w} }}")),
            "write id {w} missing:\n{dump}"
        );
    }
    assert!(!dump.contains("w: 1 }"), "a hidden version stored:\n{dump}");
}

#[test]
fn separate_write_nows_start_their_write_ids_at_zero() {
    let db = open();
    let a = nested_write(&db, &field("a"), Some("1"));
    let b = nested_write(&db, &field("b"), Some("2"));
    assert!(b > a);
    let dump = db.dump().expect("dump");
    assert!(!dump.contains("w: 1 }"), "{dump}");
}

#[test]
fn a_write_now_of_another_database_inside_leaves_the_outer_one_nested() {
    let (db, other) = (open(), open());
    db.write_now(|ht| {
        nested_write(&db, &field("a"), Some("1"));
        let other_ht = nested_write(&other, &field("x"), Some("1"));
        assert!(other_ht > ht, "the other database takes its own time");
        // Back in the outer write, a batch at its time numbers its write ids on. (Committed
        // directly: were the mark lost, a nested `write_now` would wait on itself.)
        let mut batch = db.batch(ht);
        batch.set(&field("b"), Value::new(PrimitiveValue::string("2")))?;
        batch.commit()?;
        Ok(())
    })
    .expect("outer write");
    let dump = db.dump().expect("dump");
    assert!(
        dump.contains("w: 1 }"),
        "the second batch numbers on:\n{dump}"
    );
}

/// Engine batches written so far.
fn engine_writes(db: &DocDb<MemEngine>) -> u64 {
    db.engine()
        .statistics()
        .expect("statistics")
        .counter("mem.batches_written")
        .expect("batch counter")
}

/// Every document record in the engine itself (not through DocDb's reads; not DocDb's own
/// metadata below them).
fn engine_pairs(db: &DocDb<MemEngine>) -> usize {
    let first = [docdb::FIRST_RECORD_BYTE];
    let mut iter = db
        .engine()
        .iterator(IterOptions::new().lower(first.to_vec()))
        .expect("iterator");
    iter.seek(&first);
    let mut n = 0;
    while iter.valid().expect("valid") {
        n += 1;
        iter.next();
    }
    n
}

#[test]
fn the_batches_of_a_write_now_land_in_one_engine_write_at_its_end() {
    let db = open();
    let before = engine_writes(&db);
    db.write_now(|ht| {
        nested_write(&db, &field("a"), Some("1"));
        nested_write(&db, &field("b"), Some("2"));
        assert_eq!(
            engine_pairs(&db),
            0,
            "nothing reaches the engine before the end"
        );
        let seen = read(&db, ht).map(|d| d.to_one_line());
        assert_eq!(seen.as_deref(), Some(r#"{"a": "1", "b": "2"}"#));
        Ok(())
    })
    .expect("write");
    assert_eq!(engine_writes(&db), before + 1, "one engine write");
    assert_eq!(engine_pairs(&db), 2);
    let after = db.safe_time();
    let seen = read(&db, after).map(|d| d.to_one_line());
    assert_eq!(seen.as_deref(), Some(r#"{"a": "1", "b": "2"}"#));
}

#[test]
fn land_pending_writes_what_is_committed_so_far() {
    let db = open();
    db.write_now(|_| {
        nested_write(&db, &field("a"), Some("1"));
        db.land_pending()?;
        assert_eq!(engine_pairs(&db), 1, "landed inside");
        nested_write(&db, &field("b"), Some("2"));
        Ok(())
    })
    .expect("write");
    assert_eq!(engine_pairs(&db), 2);
}

#[test]
fn a_failed_or_panicking_write_now_writes_nothing() {
    let db = open();
    let failed = db.write_now(|_| {
        nested_write(&db, &field("a"), Some("1"));
        Err::<(), _>(docdb::Error::InvalidArgument("changed my mind".into()))
    });
    assert!(failed.is_err());
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        db.write_now(|_| -> docdb::Result<()> {
            nested_write(&db, &field("b"), Some("2"));
            panic!("a command's bug")
        })
    }));
    assert!(panicked.is_err());
    assert_eq!(engine_pairs(&db), 0);
    // Nor do they linger for the next write to land or read.
    let ht = nested_write(&db, &field("c"), Some("3"));
    assert_eq!(engine_pairs(&db), 1);
    let seen = read(&db, ht).map(|d| d.to_one_line());
    assert_eq!(seen.as_deref(), Some(r#"{"c": "3"}"#));
}

/// The document as a read at `db.safe_time()` sees it, on one line.
fn read_now(db: &DocDb<MemEngine>) -> Option<String> {
    read(db, db.safe_time()).map(|d| d.to_one_line())
}

/// How long a thread is given to show that it is waiting.
const STILL_WAITING: std::time::Duration = std::time::Duration::from_millis(200);

#[test]
fn a_staged_write_holds_reads_back_until_it_lands() {
    let db = open();
    let staged = staged_write(&db, &field("a"), "1");
    assert_eq!(engine_pairs(&db), 0, "staged, not written");
    std::thread::scope(|scope| {
        let (seen_tx, seen_rx) = std::sync::mpsc::channel();
        let db = &db;
        scope.spawn(move || seen_tx.send(read_now(db)).expect("send"));
        assert!(
            seen_rx.recv_timeout(STILL_WAITING).is_err(),
            "a read now waits for the staged write"
        );
        staged.land().expect("land");
        let seen = seen_rx.recv().expect("read after landing");
        assert_eq!(seen.as_deref(), Some(r#"{"a": "1"}"#));
    });
    assert_eq!(engine_pairs(&db), 1);
}

#[test]
fn the_next_write_reads_a_staged_write_and_lands_after_it() {
    let db = open();
    let staged = staged_write(&db, &field("a"), "1");
    let first_time = staged.time();
    let writes_before = engine_writes(&db);
    std::thread::scope(|scope| {
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let lander = scope.spawn(move || {
            go_rx.recv().expect("go");
            staged.land()
        });
        let next_time = db
            .write_now(|ht| {
                let seen = read(&db, ht).map(|d| d.to_one_line());
                assert_eq!(seen.as_deref(), Some(r#"{"a": "1"}"#), "read over it");
                nested_write(&db, &field("b"), Some("2"));
                go_tx.send(()).expect("go");
                Ok(ht)
            })
            .expect("next write");
        // It returned, so the staged write had landed before it: one engine write each.
        assert!(next_time > first_time);
        lander.join().expect("lander").expect("landed");
    });
    assert_eq!(engine_writes(&db), writes_before + 2);
    assert_eq!(engine_pairs(&db), 2);
    assert_eq!(read_now(&db).as_deref(), Some(r#"{"a": "1", "b": "2"}"#));
}

#[test]
fn a_write_over_a_staged_write_that_failed_fails_too() {
    let db = open();
    nested_write(&db, &field("kept"), Some("0"));
    let staged = staged_write(&db, &field("a"), "1");
    let failed = std::thread::scope(|scope| {
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        // A landing thread that panics drops its staged write: it counts as failed.
        scope.spawn(move || {
            go_rx.recv().expect("go");
            drop(staged);
        });
        db.write_now(|ht| {
            let seen = read(&db, ht).map(|d| d.to_one_line());
            assert_eq!(seen.as_deref(), Some(r#"{"a": "1", "kept": "0"}"#));
            go_tx.send(()).expect("go");
            // Read again once it may have failed: nothing it shows may be kept.
            read(&db, ht);
            nested_write(&db, &field("b"), Some("2"));
            Ok(())
        })
    });
    let error = failed.expect_err("it read a write that never landed");
    assert!(error.to_string().contains("failed to land"), "{error}");
    assert_eq!(engine_pairs(&db), 1, "only the first write's record");
    assert_eq!(read_now(&db).as_deref(), Some(r#"{"kept": "0"}"#));
    // Writing goes on.
    nested_write(&db, &field("c"), Some("3"));
    assert_eq!(read_now(&db).as_deref(), Some(r#"{"c": "3", "kept": "0"}"#));
}

#[test]
fn a_write_with_nothing_to_land_stages_nothing() {
    let db = open();
    let (value, staged) = db
        .write_now_staged(|ht| Ok(read(&db, ht).is_none()))
        .expect("write");
    assert!(value);
    assert!(staged.is_none());
    let nested = db.write_now(|_| db.write_now_staged(|_| Ok(())).map(|_| ()));
    assert!(nested.is_err(), "staging inside write_now is refused");
}

/// Stages one `write_now` writing `value` at `path`.
fn staged_write<'a>(
    db: &'a DocDb<MemEngine>,
    path: &SubDocKey,
    value: &str,
) -> docdb::Staged<'a, MemEngine> {
    let ((), staged) = db
        .write_now_staged(|_| {
            nested_write(db, path, Some(value));
            Ok(())
        })
        .expect("staged write");
    staged.expect("something to land")
}

#[test]
fn staged_writes_land_in_their_order_and_the_next_reads_them_all() {
    let db = open();
    let first = staged_write(&db, &field("a"), "1");
    let second = staged_write(&db, &field("b"), "2");
    assert!(second.time() > first.time());
    std::thread::scope(|scope| {
        // Landed out of order, the second waits for the first's turn.
        let second = scope.spawn(move || second.land());
        std::thread::sleep(STILL_WAITING);
        assert_eq!(engine_pairs(&db), 0, "the second waits for the first");
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let first = scope.spawn(move || {
            go_rx.recv().expect("go");
            first.land()
        });
        db.write_now(|ht| {
            let seen = read(&db, ht).map(|d| d.to_one_line());
            assert_eq!(seen.as_deref(), Some(r#"{"a": "1", "b": "2"}"#));
            nested_write(&db, &field("c"), Some("3"));
            go_tx.send(()).expect("go");
            Ok(())
        })
        .expect("third write");
        first.join().expect("first").expect("first landed");
        second.join().expect("second").expect("second landed");
    });
    assert_eq!(engine_pairs(&db), 3);
    let seen = read_now(&db);
    assert_eq!(seen.as_deref(), Some(r#"{"a": "1", "b": "2", "c": "3"}"#));
}

#[test]
fn a_failed_staged_write_fails_every_staged_write_that_read_it() {
    let db = open();
    let first = staged_write(&db, &field("a"), "1");
    // Begun over the first: it reads "a".
    let second = staged_write(&db, &field("b"), "2");
    drop(first);
    let error = second.land().expect_err("read a write that never landed");
    assert!(error.to_string().contains("failed to land"), "{error}");
    assert_eq!(engine_pairs(&db), 0);
    assert_eq!(read_now(&db), None);
    // Writes begun after the failures land.
    staged_write(&db, &field("c"), "3").land().expect("lands");
    assert_eq!(read_now(&db).as_deref(), Some(r#"{"c": "3"}"#));
}

/// The counter at `field("n")` as a read at `ht` sees it (0 if unset).
fn counter(db: &DocDb<MemEngine>, ht: HybridTime) -> u64 {
    let found = db
        .get(&field("n"), &ReadOptions::at(ht))
        .expect("read counter");
    found.map_or(0, |doc| {
        let line = doc.to_one_line();
        line.trim_matches('"').parse().expect("a counter")
    })
}

/// Reads the counter at `ht` and writes it one higher, at `ht` (inside `write_now`).
fn increment(db: &DocDb<MemEngine>, ht: HybridTime) -> docdb::Result<()> {
    let next = (counter(db, ht) + 1).to_string();
    let mut batch = db.batch(ht);
    batch.set(
        &field("n"),
        Value::new(PrimitiveValue::string(next.as_str())),
    )?;
    batch.commit()?;
    Ok(())
}

#[test]
fn increments_through_staged_and_in_place_writes_are_never_lost() {
    const STAGED: u64 = 300;
    const IN_PLACE: u64 = 150;
    let total = STAGED + IN_PLACE;
    let db = open();
    std::thread::scope(|scope| {
        let (to_lander, landings) = std::sync::mpsc::channel::<docdb::Staged<'_, MemEngine>>();
        scope.spawn(move || {
            for staged in landings {
                staged.land().expect("land");
            }
        });
        let db = &db;
        scope.spawn(move || {
            for _ in 0..IN_PLACE {
                db.write_now(|ht| increment(db, ht)).expect("in place");
            }
        });
        let reader = scope.spawn(move || {
            // Every read sees an acknowledged state: the counter never goes back.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            let mut last = 0;
            while last < total && std::time::Instant::now() < deadline {
                let seen = counter(db, db.safe_time());
                assert!(seen >= last, "the counter went from {last} back to {seen}");
                last = seen;
            }
            last
        });
        for _ in 0..STAGED {
            let ((), staged) = db.write_now_staged(|ht| increment(db, ht)).expect("staged");
            to_lander.send(staged.expect("a write")).expect("lander");
        }
        drop(to_lander);
        assert_eq!(reader.join().expect("reader"), total);
    });
    assert_eq!(counter(&db, db.safe_time()), total, "no increment lost");
}
