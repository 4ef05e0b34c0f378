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
use engine::Rng;

/// The options of these tests: the root cache keeps roots read and roots written.
fn options() -> DocDbOptions {
    DocDbOptions {
        cache_written_roots: true,
        ..DocDbOptions::default()
    }
}

fn open() -> DocDb<MemEngine> {
    open_with(options())
}

fn open_with(options: DocDbOptions) -> DocDb<MemEngine> {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    let engine = MemEngine::with_compaction_filter(Some(policy.clone()));
    DocDb::open(engine, policy, options).expect("open")
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
            batch.set_encoded_path(path, value)?;
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

/// Random writes of list roots, counters and tombstones over lists sharing a small cache
/// (written roots evict one another), and reads of each counter through views, in the
/// writer and at `safe_time`: a counter read (cached or not) is what an uncached read finds.
#[test]
fn cached_counters_match_uncached_reads() {
    let seed = Rng::seed_from_env("DOCDB_CACHE_SEED");
    println!("counter cache test seed {seed} (replay with DOCDB_CACHE_SEED={seed})");
    let mut rng = Rng::new(seed);
    let mut next = move |n: u64| rng.below(n);
    let db = open_with(DocDbOptions {
        root_cache_bytes: 2 * 16 * 2 * 128,
        ..options()
    });
    let lists: Vec<Vec<u8>> = (0..24).map(|i| doc_key(&format!("l{i}"))).collect();
    let counters: Vec<Vec<u8>> = lists.iter().map(|l| counter(l)).collect();
    let counted = |view: &mut docdb::DocView<'_, MemEngine>, l: &[u8], c: &[u8]| {
        view.record(l).expect("root");
        view.record(c).expect("counter")
    };
    // A counter from the cache without a view, where the cache has it, is the same record.
    let mut cached_hits = 0;
    let mut check_cached = |c: &[u8], opts: &ReadOptions, fresh: &Option<_>, what: &str| {
        if let Some(cached) = db.cached_counter(c, opts) {
            cached_hits += 1;
            assert_eq!(
                Some(cached),
                *fresh,
                "seed {seed}: {what}, from the cache alone"
            );
        }
    };
    for step in 0..4000 {
        let i = next(lists.len() as u64) as usize;
        let (l, c) = (&lists[i], &counters[i]);
        let n = Value::new(PrimitiveValue::Int64(step));
        match next(8) {
            0 => drop(write(&db, &[(l, Value::new(PrimitiveValue::RedisList))])),
            1 => drop(write(&db, &[(l, Value::tombstone())])),
            2 => {
                let now = db.safe_time().physical_micros();
                write_at(&db, c, HybridTime::new(now + next(2000) - 1000, 0), n);
            }
            3 => drop(write(
                &db,
                &[(l, Value::new(PrimitiveValue::RedisList)), (c, n)],
            )),
            _ => drop(write(&db, &[(c, n)])),
        }
        let i = next(lists.len() as u64) as usize;
        let (l, c) = (&lists[i], &counters[i]);
        db.write_now(|ht| {
            let fresh = db.visible_record(c, ReadOptions::at(ht))?;
            for _ in 0..2 {
                let mut view = db.view(l, ReadOptions::at(ht))?;
                let read = counted(&mut view, l, c);
                assert_eq!(read, fresh, "seed {seed} step {step}: the writer's counter");
                check_cached(c, &ReadOptions::at(ht), &fresh, "the writer's counter");
            }
            Ok(())
        })
        .expect("writer read");
        let at = db.safe_time();
        let fresh = db.visible_record(c, ReadOptions::at(at)).expect("fresh");
        let mut view = db.view(l, ReadOptions::at(at)).expect("view");
        let read = counted(&mut view, l, c);
        assert_eq!(read, fresh, "seed {seed} step {step}: a reader's counter");
        check_cached(c, &ReadOptions::at(at), &fresh, "a reader's counter");
        // Only a counter's path is answered.
        assert_eq!(db.cached_counter(l, &ReadOptions::at(at)), None);
    }
    assert!(
        cached_hits > 100,
        "seed {seed}: {cached_hits} counters from the cache"
    );
}

/// A database over `engine` (a reopen: the cache starts empty).
fn reopen(engine: MemEngine) -> DocDb<MemEngine> {
    reopen_with(engine, options())
}

fn reopen_with(engine: MemEngine, options: DocDbOptions) -> DocDb<MemEngine> {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    DocDb::open(engine, policy, options).expect("reopen")
}

/// A reopen, then a wait until the clock passes the ceiling stored with the data (from
/// then on, readers keep what they read).
fn reopen_and_wait(db: DocDb<MemEngine>) -> DocDb<MemEngine> {
    reopen_and_wait_with(db, true)
}

fn reopen_and_wait_with(db: DocDb<MemEngine>, cache_written_roots: bool) -> DocDb<MemEngine> {
    let options = DocDbOptions {
        cache_written_roots,
        ..options()
    };
    let db = reopen_with(db.into_engine(), options);
    std::thread::sleep(std::time::Duration::from_millis(150));
    db
}

/// Writes `value` at `path` in a batch at the explicit time `at` (outside `write_now`).
fn write_at(db: &DocDb<MemEngine>, path: &[u8], at: HybridTime, value: Value) {
    let mut batch = db.batch(at);
    batch.set_encoded_path(path, value).expect("set");
    batch.commit().expect("commit");
}

/// The root's live payload as a reader at `ht` sees it, through a view (which may use and
/// fill the cache), checked against an uncached read.
fn reader_root(db: &DocDb<MemEngine>, doc_key: &[u8], ht: HybridTime) -> Option<PrimitiveValue> {
    let opts = ReadOptions::at(ht);
    let fresh = db.visible_record(doc_key, opts.clone()).expect("fresh");
    let viewed = db
        .view(doc_key, opts.clone())
        .expect("view")
        .record(doc_key);
    assert_eq!(viewed.expect("viewed"), fresh, "view at {ht:?}");
    if let Some(cached) = db.cached_root(doc_key, &opts) {
        assert_eq!(Some(cached), fresh, "cached root at {ht:?}");
    }
    fresh.filter(|r| r.is_live()).map(|r| r.payload)
}

/// A reader's view made before a write lands, reading after it, sees its own older
/// snapshot, and must not leave that older root in the cache for later readers (here a
/// write of the past, older than the view's read time, with a TTL so it is not cached).
#[test]
fn a_reader_view_older_than_a_write_leaves_nothing_behind() {
    let db = open();
    let k = doc_key("k");
    write(&db, &[(&k, Value::new(string("1")))]);
    // After a reopen nothing is cached.
    let db = reopen_and_wait(db);
    // Read once: the cache keeps a root from its second read on.
    assert_eq!(reader_root(&db, &k, db.safe_time()), Some(string("1")));
    let read_at = db.safe_time();
    let mut view = db.view(&k, ReadOptions::at(read_at)).expect("view");
    let past = HybridTime::new(read_at.physical_micros() - 1, 0);
    write_at(
        &db,
        &k,
        past,
        Value::with_ttl(string("2"), Some(Ttl(600_000))),
    );
    let seen = view.record(&k).expect("old view").map(|r| r.payload);
    assert_eq!(seen, Some(string("1")), "the view's own snapshot");
    drop(view);
    assert_eq!(reader_root(&db, &k, read_at), Some(string("2")));
    assert_eq!(reader_root(&db, &k, db.safe_time()), Some(string("2")));
}

/// A read of the past finds an older record; it must not be kept as the newest.
#[test]
fn a_read_of_the_past_is_not_kept() {
    let db = open();
    let k = doc_key("k");
    let first = write(&db, &[(&k, Value::new(string("1")))]);
    let db = reopen_and_wait(db);
    write(&db, &[(&k, Value::new(string("2")))]);
    // Twice: the second read is the one the cache would keep.
    for _ in 0..2 {
        assert_eq!(reader_root(&db, &k, first), Some(string("1")));
    }
    assert_eq!(reader_root(&db, &k, db.safe_time()), Some(string("2")));
}

/// Records newer than the clock (written with explicit times, or before a restart with a
/// clock that ran ahead) stay the newest after a reopen: the stored ceiling covers them.
#[test]
fn a_future_record_outlives_a_reopen() {
    let db = open();
    let k = doc_key("k");
    let now = write(&db, &[(&k, Value::new(string("now")))]);
    let future = HybridTime::new(now.physical_micros() + 60_000_000, 0);
    write_at(&db, &k, future, Value::new(string("future")));
    let db = reopen(db.into_engine());
    // A reader now reads the older record (twice, so the cache would keep it); were it kept
    // as the newest, a read after the future time would get it from the cache.
    for _ in 0..2 {
        assert_eq!(reader_root(&db, &k, db.safe_time()), Some(string("now")));
    }
    assert_eq!(reader_root(&db, &k, future), Some(string("future")));
    // A write now is older than the future record: reads after that still see the future.
    write(&db, &[(&k, Value::new(string("later")))]);
    assert_eq!(reader_root(&db, &k, future), Some(string("future")));
}

/// Random root writes (strings, markers, TTLs, tombstones; now, or at explicit past and
/// future times), reopens and reads at random times: cached and view reads always agree
/// with uncached ones.
#[test]
fn cached_roots_match_uncached_reads() {
    cached_roots_match_uncached_reads_with(4, options());
}

/// The same with only roots read more than once kept (the default).
#[test]
fn cached_roots_read_twice_match_uncached_reads() {
    cached_roots_match_uncached_reads_with(4, DocDbOptions::default());
}

/// A cache with two slots of written roots per shard, and more keys than slots: roots
/// written evict one another.
#[test]
fn cached_roots_match_uncached_reads_when_slots_are_shared() {
    let options = DocDbOptions {
        root_cache_bytes: 2 * 16 * 2 * 128,
        ..options()
    };
    cached_roots_match_uncached_reads_with(64, options);
}

/// Random writes to `keys` keys (in `write_now` and at explicit times, one to three records
/// a batch, the same key more than once included), reopens, and reads at random times: a
/// root the cache holds is always what an uncached read finds.
fn cached_roots_match_uncached_reads_with(keys: usize, options: DocDbOptions) {
    let seed = Rng::seed_from_env("DOCDB_CACHE_SEED");
    println!("cache test seed {seed} (replay with DOCDB_CACHE_SEED={seed})");
    let mut rng = Rng::new(seed);
    let mut next = move |n: u64| rng.below(n);
    let keys: Vec<Vec<u8>> = (0..keys).map(|i| doc_key(&format!("k{i}"))).collect();
    let mut db = open_with(options.clone());
    let mut times = vec![db.safe_time()];
    let mut cached = 0;
    for step in 0..3000 {
        let mut records: Vec<(&[u8], Value)> = Vec::new();
        for _ in 0..1 + next(3) {
            let k = keys[next(keys.len() as u64) as usize].as_slice();
            let value = match next(6) {
                0 => Value::tombstone(),
                1 => Value::with_ttl(string("ttl"), Some(Ttl(next(3) as i64))),
                2 => Value::new(PrimitiveValue::Object),
                3 => Value::new(string(&"long".repeat(40))),
                _ => Value::new(string(&format!("v{step}"))),
            };
            records.push((k, value));
        }
        match next(10) {
            0 => {
                // An explicit time around the clock: the past or the near future.
                let now = db.safe_time().physical_micros();
                let at = HybridTime::new(now + next(2000) - 1000, 0);
                let (k, value) = records.into_iter().next().expect("a record");
                write_at(&db, k, at, value);
                times.push(at);
            }
            1 if next(30) == 0 => {
                db = reopen_with(db.into_engine(), options.clone());
                // Past the ceiling stored with the data: from then on the cache fills.
                std::thread::sleep(std::time::Duration::from_millis(110));
            }
            _ => times.push(write(&db, &records)),
        }
        for _ in 0..3 {
            let k = &keys[next(keys.len() as u64) as usize];
            let at = match next(3) {
                0 => times[next(times.len() as u64) as usize],
                _ => db.safe_time(),
            };
            let opts = ReadOptions::at(at);
            let fresh = db.visible_record(k, opts.clone()).expect("fresh");
            if let Some(root) = db.cached_root(k, &opts) {
                assert_eq!(Some(root), fresh, "seed {seed} step {step}: cached root");
                cached += 1;
            }
            let viewed = db.view(k, opts.clone()).expect("view").record(k);
            assert_eq!(
                viewed.expect("viewed"),
                fresh,
                "seed {seed} step {step}: view"
            );
        }
    }
    assert!(
        cached > 100,
        "seed {seed}: only {cached} reads from the cache"
    );
}

/// What a `write_now` writes at a root is read from the cache at its time and after (not
/// before), from the first read on, until a write that is not a lasting value replaces it.
#[test]
fn a_root_written_is_read_from_the_cache_until_replaced() {
    let db = open();
    let k = doc_key("k");
    let before = db.safe_time();
    let written = write(&db, &[(&k, Value::new(string("1")))]);
    let cached = |at: HybridTime| {
        db.cached_root(&k, &ReadOptions::at(at))
            .filter(|r| r.is_live())
            .map(|r| r.payload)
    };
    assert_eq!(cached(written), Some(string("1")));
    assert_eq!(cached(db.safe_time()), Some(string("1")));
    assert_eq!(cached(before), None, "a read of the past");
    // A newer lasting value replaces it; a value with a TTL, a tombstone or one too long
    // for a slot each leave nothing.
    write(&db, &[(&k, Value::new(string("2")))]);
    assert_eq!(cached(db.safe_time()), Some(string("2")));
    let long = string(&"x".repeat(200));
    for (value, expected) in [
        (
            Value::with_ttl(string("3"), Some(Ttl(60_000))),
            Some(string("3")),
        ),
        (Value::new(long.clone()), Some(long)),
        (Value::tombstone(), None),
    ] {
        write(&db, &[(&k, Value::new(string("4")))]);
        assert_eq!(cached(db.safe_time()), Some(string("4")));
        write(&db, &[(&k, value.clone())]);
        assert_eq!(cached(db.safe_time()), None, "after {value:?}");
        assert_eq!(reader_root(&db, &k, db.safe_time()), expected);
    }
}

/// Without `cache_written_roots` (the default) a write adds nothing; a root is kept from its
/// second read.
#[test]
fn roots_written_are_not_cached_when_turned_off() {
    let db = open_with(DocDbOptions::default());
    let k = doc_key("k");
    write(&db, &[(&k, Value::new(string("1")))]);
    let db = reopen_and_wait_with(db, false);
    write(&db, &[(&k, Value::new(string("2")))]);
    let at = db.safe_time();
    assert_eq!(db.cached_root(&k, &ReadOptions::at(at)), None);
    for _ in 0..2 {
        assert_eq!(reader_root(&db, &k, at), Some(string("2")));
    }
    let cached = db.cached_root(&k, &ReadOptions::at(at)).map(|r| r.payload);
    assert_eq!(cached, Some(string("2")), "kept from the second read");
}

/// A write outside `write_now` (which may write the past) adds nothing, but replaces or
/// drops a root written before as its time says.
#[test]
fn an_explicit_time_write_keeps_the_cache_to_the_newest_record() {
    let db = open();
    let k = doc_key("k");
    let written = write(&db, &[(&k, Value::new(string("new")))]);
    let cached = || db.cached_root(&k, &ReadOptions::at(db.safe_time()));
    // Older than the cached root: the cached root stays the newest record.
    write_at(
        &db,
        &k,
        HybridTime(written.0 - 10),
        Value::new(string("old")),
    );
    assert_eq!(cached().map(|r| r.payload), Some(string("new")));
    // Newer: the cache follows.
    let later = HybridTime(db.safe_time().0 + 10);
    write_at(&db, &k, later, Value::new(string("later")));
    let read = db
        .cached_root(&k, &ReadOptions::at(later))
        .map(|r| r.payload);
    assert_eq!(read, Some(string("later")));
    // A newer tombstone drops it.
    let latest = HybridTime(later.0 + 10);
    write_at(&db, &k, latest, Value::tombstone());
    assert_eq!(db.cached_root(&k, &ReadOptions::at(latest)), None);
    // A key not cached stays so after an explicit-time write.
    let other = doc_key("other");
    write_at(
        &db,
        &other,
        HybridTime(latest.0 + 10),
        Value::new(string("x")),
    );
    assert_eq!(
        db.cached_root(&other, &ReadOptions::at(HybridTime(latest.0 + 10))),
        None
    );
}

/// One thread writes increasing numbers to a key while others read it at `safe_time`: no
/// read, cached or not, returns less than a write acknowledged before it began. Every other
/// number has a TTL, so it is not cached, and readers read the engine then.
fn readers_race_a_writer(direct: bool) {
    use std::sync::atomic::{AtomicI64, Ordering};
    const WRITES: i64 = 20_000;
    let db = open();
    let k = doc_key("k");
    let acked = AtomicI64::new(0);
    let value_at = |db: &DocDb<MemEngine>, ht: HybridTime| -> i64 {
        let record = match db.cached_root(&k, &ReadOptions::at(ht)) {
            Some(record) => Some(record),
            None => db
                .view(&k, ReadOptions::at(ht))
                .expect("view")
                .record(&k)
                .expect("read"),
        };
        match record.map(|r| r.payload) {
            Some(PrimitiveValue::Int64(n)) => n,
            None => 0,
            other => panic!("unexpected {other:?}"),
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 1..=WRITES {
                let ttl = (i % 2 == 1).then_some(Ttl(600_000));
                let value = Value::with_ttl(PrimitiveValue::Int64(i), ttl);
                if direct {
                    // Outside `write_now`: nothing holds readers back while it lands.
                    write_at(&db, &k, db.clock().now(), value);
                } else {
                    write(&db, &[(&k, value)]);
                }
                acked.store(i, Ordering::SeqCst);
            }
        });
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let before = acked.load(Ordering::SeqCst);
                    let seen = value_at(&db, db.safe_time());
                    assert!(
                        seen >= before,
                        "read {seen} after write {before} was acknowledged"
                    );
                    if before == WRITES {
                        break;
                    }
                }
            });
        }
    });
}

#[test]
fn readers_racing_a_write_now_writer_never_go_back() {
    readers_race_a_writer(false);
}

#[test]
fn readers_racing_a_direct_writer_never_go_back() {
    readers_race_a_writer(true);
}
