//! The `write_now` writer keeps the collection roots it reads (so a server's HSET after HSET
//! on one hash seeks the root once). Whatever it keeps, every later write to the root must
//! show: replacement, tombstone, TTL, recreation as another type. Reads at other times never
//! see what the writer kept.

use std::sync::Arc;

use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, GcPolicy, ReadOptions};
use dockv::doc_key::DocKey;
use dockv::value::{PrimitiveValue, Ttl, Value};
use dockv::{HybridTime, KeyEntryValue};
use engine::MemEngine;

fn open() -> DocDb<MemEngine> {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    let engine = MemEngine::with_compaction_filter(Some(policy.clone()));
    DocDb::open(engine, policy, DocDbOptions::default()).expect("open")
}

fn doc_key(name: &str) -> Vec<u8> {
    let slot = dockv::hash::redis_hash_slot(name.as_bytes());
    DocKey::with_hash(slot, vec![KeyEntryValue::string(name)], vec![]).encode()
}

fn child(doc_key: &[u8], field: &str) -> Vec<u8> {
    let mut path = doc_key.to_vec();
    KeyEntryValue::string(field).encode_to(&mut path);
    path
}

/// Writes `(path, value)` pairs in one `write_now` batch; returns its time.
fn write(db: &DocDb<MemEngine>, pairs: &[(&[u8], Value)]) -> HybridTime {
    db.write_now(|ht| {
        let mut batch = db.batch(ht);
        for (path, value) in pairs {
            batch.set_encoded_path(path.to_vec(), value.clone())?;
        }
        batch.commit()?;
        Ok(ht)
    })
    .expect("write")
}

/// What the writer sees at the root of `doc_key` and at its child `field`, twice through one
/// view (the second root lookup is the view's own), as a live payload or `None`.
fn writer_reads(
    db: &DocDb<MemEngine>,
    doc_key: &[u8],
    field: &str,
) -> (Option<PrimitiveValue>, Option<PrimitiveValue>) {
    db.write_now(|ht| {
        let mut view = db.view(doc_key, ReadOptions::at(ht))?;
        let live = |r: Option<docdb::VisibleRecord>| r.filter(|r| r.is_live()).map(|r| r.payload);
        let root = live(view.record(doc_key)?);
        let field = live(view.record(&child(doc_key, field))?);
        assert_eq!(
            live(view.record(doc_key)?),
            root,
            "the view's second root lookup"
        );
        Ok((root, field))
    })
    .expect("writer read")
}

fn string(s: &str) -> PrimitiveValue {
    PrimitiveValue::String(s.as_bytes().to_vec())
}

#[test]
fn the_writer_sees_every_change_to_a_root_it_read() {
    let db = open();
    let h = doc_key("h");
    let f = child(&h, "f");
    let created = write(
        &db,
        &[
            (&h, Value::new(PrimitiveValue::Object)),
            (&f, Value::new(string("1"))),
        ],
    );
    let hash = (Some(PrimitiveValue::Object), Some(string("1")));
    // Read twice: the second time the root may come from the writer's cache.
    assert_eq!(writer_reads(&db, &h, "f"), hash);
    assert_eq!(writer_reads(&db, &h, "f"), hash);

    // A field write leaves the root as it was.
    write(&db, &[(&f, Value::new(string("2")))]);
    assert_eq!(
        writer_reads(&db, &h, "f"),
        (Some(PrimitiveValue::Object), Some(string("2")))
    );

    // A tombstone at the root hides it and every older child.
    write(&db, &[(&h, Value::tombstone())]);
    assert_eq!(writer_reads(&db, &h, "f"), (None, None));

    // Recreated as a set: the old field stays hidden under the newer marker.
    write(&db, &[(&h, Value::new(PrimitiveValue::RedisSet))]);
    assert_eq!(
        writer_reads(&db, &h, "f"),
        (Some(PrimitiveValue::RedisSet), None)
    );
    assert_eq!(
        writer_reads(&db, &h, "f"),
        (Some(PrimitiveValue::RedisSet), None)
    );

    // Replaced by a marker with a 1 ms TTL: gone once it lapses.
    write(
        &db,
        &[(&h, Value::with_ttl(PrimitiveValue::Object, Some(Ttl(1))))],
    );
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(writer_reads(&db, &h, "f"), (None, None));
    assert_eq!(writer_reads(&db, &h, "f"), (None, None));

    // Readers at the time of the first write, not the writer, see the hash as it was then.
    let mut past = db.view(&h, ReadOptions::at(created)).expect("view");
    let payload = past.record(&h).expect("past root").map(|r| r.payload);
    assert_eq!(payload, Some(PrimitiveValue::Object));
}

#[test]
fn roots_of_other_documents_stay_apart() {
    let db = open();
    let (a, b) = (doc_key("a"), doc_key("b"));
    write(
        &db,
        &[
            (&a, Value::new(PrimitiveValue::Object)),
            (&b, Value::new(PrimitiveValue::RedisList)),
        ],
    );
    assert_eq!(writer_reads(&db, &a, "x").0, Some(PrimitiveValue::Object));
    assert_eq!(
        writer_reads(&db, &b, "x").0,
        Some(PrimitiveValue::RedisList)
    );
    write(&db, &[(&a, Value::tombstone())]);
    assert_eq!(writer_reads(&db, &a, "x").0, None);
    assert_eq!(
        writer_reads(&db, &b, "x").0,
        Some(PrimitiveValue::RedisList)
    );
}

/// A batch committed outside `write_now` while the writer reads (a caller mixing both) must
/// not leave the writer a root older than that batch.
#[test]
fn a_root_read_during_another_commit_is_not_kept() {
    let db = open();
    let h = doc_key("h");
    write(&db, &[(&h, Value::new(PrimitiveValue::Object))]);
    db.write_now(|ht| {
        // The view's iterator predates the tombstone below.
        let mut view = db.view(&h, ReadOptions::at(ht))?;
        let mut other = db.batch(db.clock().now());
        other.set_encoded_path(h.clone(), Value::tombstone())?;
        other.commit()?;
        let seen = view.record(&h)?.map(|r| r.payload);
        assert_eq!(
            seen,
            Some(PrimitiveValue::Object),
            "the view's own snapshot"
        );
        Ok(())
    })
    .expect("writer");
    assert_eq!(writer_reads(&db, &h, "f"), (None, None));
}

/// The counter path of `doc_key` (`%`, a list's or sorted set's length).
fn counter(doc_key: &[u8]) -> Vec<u8> {
    let mut path = doc_key.to_vec();
    KeyEntryValue::Counter.encode_to(&mut path);
    path
}

/// What the writer sees at the root and then the counter of `doc_key`, twice.
fn writer_counter(db: &DocDb<MemEngine>, doc_key: &[u8]) -> Option<PrimitiveValue> {
    let read = || {
        db.write_now(|ht| {
            let mut view = db.view(doc_key, ReadOptions::at(ht))?;
            view.record(doc_key)?;
            Ok(view
                .record(&counter(doc_key))?
                .filter(|r| r.is_live())
                .map(|r| r.payload))
        })
        .expect("writer read")
    };
    let first = read();
    assert_eq!(read(), first, "a second read of the counter");
    first
}

#[test]
fn the_writer_sees_every_change_to_a_counter_it_read() {
    let db = open();
    let l = doc_key("l");
    let c = counter(&l);
    let n = |v: i64| Value::new(PrimitiveValue::Int64(v));
    write(
        &db,
        &[(&l, Value::new(PrimitiveValue::RedisList)), (&c, n(1))],
    );
    assert_eq!(writer_counter(&db, &l), Some(PrimitiveValue::Int64(1)));

    // Newer values replace it, as a push or pop writes them.
    for v in 2..5 {
        write(&db, &[(&c, n(v))]);
        assert_eq!(writer_counter(&db, &l), Some(PrimitiveValue::Int64(v)));
    }

    // Two values in one batch: the later write id wins.
    write(&db, &[(&c, n(10)), (&c, n(11))]);
    assert_eq!(writer_counter(&db, &l), Some(PrimitiveValue::Int64(11)));

    // A value with a TTL is not kept: it lapses.
    write(
        &db,
        &[(&c, Value::with_ttl(PrimitiveValue::Int64(12), Some(Ttl(1))))],
    );
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(writer_counter(&db, &l), None);

    write(&db, &[(&c, n(20))]);
    assert_eq!(writer_counter(&db, &l), Some(PrimitiveValue::Int64(20)));
    // A tombstone there.
    write(&db, &[(&c, Value::tombstone())]);
    assert_eq!(writer_counter(&db, &l), None);

    write(&db, &[(&c, n(30))]);
    assert_eq!(writer_counter(&db, &l), Some(PrimitiveValue::Int64(30)));
    // A version written in the past (outside `write_now`) hides nothing newer.
    let mut past = db.batch(HybridTime::from_micros(1));
    past.set_encoded_path(c.clone(), n(99)).expect("set");
    past.commit().expect("commit");
    assert_eq!(writer_counter(&db, &l), Some(PrimitiveValue::Int64(30)));

    // The root replaced: the old counter is hidden under the new marker.
    write(&db, &[(&l, Value::new(PrimitiveValue::RedisList))]);
    assert_eq!(writer_counter(&db, &l), None);
    write(&db, &[(&c, n(1))]);
    assert_eq!(writer_counter(&db, &l), Some(PrimitiveValue::Int64(1)));
}
