//! RocksDB-specific behaviour: persistence across reopen, the compaction-filter adapter in
//! automatic and manual compactions, statistics.

use std::sync::{Arc, OnceLock, Weak};

use engine::testing::RecordingFactory;
use engine::{
    CompactionContext, CompactionDecision, CompactionFilter, CompactionFilterFactory, Engine,
    EngineIterator, Error, IterOptions, KvRead, PrefixMode, WriteBatch, WriteOptions,
};
use engine_rocks::{BlockCache, PrefixExtractor, RocksConfig, RocksEngine};

fn config(dir: &tempfile::TempDir) -> RocksConfig {
    RocksConfig {
        block_cache_bytes: 8 << 20,
        ..RocksConfig::new(dir.path().join("db"))
    }
}

fn put(e: &RocksEngine, key: &[u8], value: &[u8]) {
    let mut batch = WriteBatch::new();
    batch.put(key, value);
    e.write(&batch, WriteOptions::default()).expect("write");
}

fn get(e: &impl KvRead, key: &[u8]) -> Option<Vec<u8>> {
    e.get(key).expect("get")
}

#[test]
fn data_survives_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let last_sequence = {
        let e = RocksEngine::open(config(&dir)).expect("open");
        for i in 0..1000u32 {
            put(&e, format!("flushed{i:04}").as_bytes(), &i.to_be_bytes());
        }
        e.flush().expect("flush");
        let mut batch = WriteBatch::new();
        batch.put(&b"synced"[..], &b"yes"[..]);
        batch.delete(&b"flushed0000"[..]);
        e.write(&batch, WriteOptions::sync()).expect("synced write");
        // Left in the memtable: recovered from the write-ahead log.
        put(&e, b"unflushed", b"wal");
        e.last_sequence()
    };
    let reopened = RocksConfig {
        create_if_missing: false,
        ..config(&dir)
    };
    let e = RocksEngine::open(reopened).expect("reopen");
    // 1000 + 2 + 1 operations, the last three recovered from the log.
    assert_eq!(last_sequence, 1003);
    assert_eq!(
        e.last_sequence(),
        last_sequence,
        "the sequence survives a reopen"
    );
    assert_eq!(get(&e, b"flushed0000"), None);
    assert_eq!(get(&e, b"flushed0999"), Some(999u32.to_be_bytes().to_vec()));
    assert_eq!(get(&e, b"synced"), Some(b"yes".to_vec()));
    assert_eq!(get(&e, b"unflushed"), Some(b"wal".to_vec()));
    let mut it = e
        .iterator(IterOptions::new().lower("flushed").upper("flushee"))
        .expect("iterator");
    it.seek_to_first();
    let mut count = 0;
    while it.valid().expect("status") {
        count += 1;
        it.next();
    }
    assert_eq!(count, 999);
    put(&e, b"after-reopen", b"ok");
    assert_eq!(get(&e, b"after-reopen"), Some(b"ok".to_vec()));
}

#[test]
fn opening_a_missing_database_without_create_fails_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let result = RocksEngine::open(RocksConfig {
        create_if_missing: false,
        ..config(&dir)
    });
    assert!(
        matches!(result, Err(Error::InvalidArgument(_))),
        "{result:?}"
    );
}

/// A filter that asks to replace everything, even when it is told it cannot.
fn always_replace(_ctx: &CompactionContext, _key: &[u8], value: &[u8]) -> CompactionDecision {
    let mut new_value = value.to_vec();
    new_value.extend_from_slice(b"+");
    CompactionDecision::Replace(new_value)
}

#[test]
fn automatic_compactions_treat_replace_as_keep() {
    let dir = tempfile::tempdir().expect("tempdir");
    let factory = RecordingFactory::new(always_replace);
    let e = RocksEngine::open(RocksConfig {
        compaction_filter_factory: Some(Arc::clone(&factory) as Arc<dyn CompactionFilterFactory>),
        ..config(&dir)
    })
    .expect("open");
    // Enough flushed files to trigger an automatic compaction (the trigger is 4 files).
    for file in 0..6u32 {
        for i in 0..50u32 {
            put(
                &e,
                format!("k{i:03}").as_bytes(),
                format!("v{file}").as_bytes(),
            );
        }
        e.flush().expect("flush");
    }
    e.wait_for_background_work().expect("wait");
    let log = factory.log();
    assert!(
        log.contexts.iter().any(|c| !c.is_manual),
        "no automatic compaction ran: {:?}",
        log.contexts
    );
    assert!(
        log.contexts.iter().all(|c| !c.can_replace),
        "{:?}",
        log.contexts
    );
    assert_eq!(get(&e, b"k000"), Some(b"v5".to_vec()), "Replace ignored");

    let outcome = e.compact_all().expect("compact");
    assert_eq!(outcome.rewritten, 50, "{outcome:?}");
    assert_eq!(get(&e, b"k000"), Some(b"v5+".to_vec()), "Replace honoured");
    assert_eq!(get(&e, b"k049"), Some(b"v5+".to_vec()));
    assert!(
        factory
            .log()
            .contexts
            .iter()
            .any(|c| c.is_manual && c.can_replace && c.is_full)
    );
}

/// Overwrites each key it sees through the engine, then asks to replace it: simulates a
/// writer racing `compact_all`.
struct RacingFactory {
    engine: OnceLock<Weak<RocksEngine>>,
}

struct RacingFilter {
    engine: Option<Arc<RocksEngine>>,
}

impl CompactionFilterFactory for RacingFactory {
    fn create(&self, _ctx: &CompactionContext) -> Box<dyn CompactionFilter> {
        Box::new(RacingFilter {
            engine: self.engine.get().and_then(Weak::upgrade),
        })
    }
}

impl CompactionFilter for RacingFilter {
    fn filter(&mut self, key: &[u8], value: &[u8]) -> CompactionDecision {
        if let Some(engine) = &self.engine
            && key.starts_with(b"race")
            && value == b"old"
        {
            put(engine, key, b"newer");
        }
        CompactionDecision::Replace(b"replaced".to_vec())
    }
}

#[test]
fn replace_is_not_written_back_over_a_newer_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let factory = Arc::new(RacingFactory {
        engine: OnceLock::new(),
    });
    let e = Arc::new(
        RocksEngine::open(RocksConfig {
            compaction_filter_factory: Some(
                Arc::clone(&factory) as Arc<dyn CompactionFilterFactory>
            ),
            ..config(&dir)
        })
        .expect("open"),
    );
    assert!(factory.engine.set(Arc::downgrade(&e)).is_ok());
    put(&e, b"race", b"old");
    put(&e, b"calm", b"old");
    let outcome = e.compact_all().expect("compact");
    assert_eq!(
        get(&*e, b"race"),
        Some(b"newer".to_vec()),
        "the newer write wins"
    );
    assert_eq!(get(&*e, b"calm"), Some(b"replaced".to_vec()));
    assert_eq!(outcome.rewritten, 1, "{outcome:?}");
    drop(factory);
}

struct PanickingFactory;

struct PanickingFilter;

impl CompactionFilterFactory for PanickingFactory {
    fn create(&self, _ctx: &CompactionContext) -> Box<dyn CompactionFilter> {
        Box::new(PanickingFilter)
    }
}

impl CompactionFilter for PanickingFilter {
    fn filter(&mut self, key: &[u8], _value: &[u8]) -> CompactionDecision {
        assert!(key != b"m-boom", "the filter panics on m-boom");
        CompactionDecision::Remove
    }
}

#[test]
fn a_panicking_filter_keeps_the_rest_of_the_compaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = RocksEngine::open(RocksConfig {
        compaction_filter_factory: Some(Arc::new(PanickingFactory)),
        ..config(&dir)
    })
    .expect("open");
    for key in ["a-removed", "m-boom", "z-kept"] {
        put(&e, key.as_bytes(), b"v");
    }
    e.compact_all().expect("compact");
    assert_eq!(get(&e, b"a-removed"), None, "before the panic: removed");
    assert_eq!(
        get(&e, b"m-boom"),
        Some(b"v".to_vec()),
        "the panicking key is kept"
    );
    assert_eq!(
        get(&e, b"z-kept"),
        Some(b"v".to_vec()),
        "after the panic: kept"
    );
}

#[test]
fn statistics_are_readable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = RocksEngine::open(config(&dir)).expect("open");
    for i in 0..100u32 {
        put(&e, format!("k{i}").as_bytes(), b"v");
    }
    e.flush().expect("flush");
    for i in 0..100u32 {
        assert!(get(&e, format!("k{i}").as_bytes()).is_some());
    }
    let stats = e.statistics().expect("statistics");
    assert_eq!(stats.counter("rocksdb.number.keys.written"), Some(100));
    assert!(stats.counter("rocksdb.number.keys.read") >= Some(100));
    assert!(stats.counter("rocksdb.block.cache.miss").is_some());
    assert!(
        stats
            .counter("rocksdb.estimate-num-keys")
            .is_some_and(|n| n > 0)
    );
    assert!(
        stats
            .counter("rocksdb.total-sst-files-size")
            .is_some_and(|n| n > 0)
    );
    assert!(
        stats.text.contains("rocksdb.block.cache.hit COUNT"),
        "{}",
        stats.text
    );
    assert!(stats.text.contains("Compaction Stats"), "{}", stats.text);

    let dir2 = tempfile::tempdir().expect("tempdir");
    let quiet = RocksEngine::open(RocksConfig {
        statistics: false,
        ..config(&dir2)
    })
    .expect("open");
    let stats = quiet.statistics().expect("statistics");
    assert_eq!(stats.counter("rocksdb.number.keys.written"), None);
    assert!(stats.counter("rocksdb.estimate-num-keys").is_some());
}

#[test]
fn engines_can_share_a_block_cache() {
    let cache = BlockCache::lru(4 << 20);
    let dirs = [
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    ];
    let engines: Vec<RocksEngine> = dirs
        .iter()
        .map(|dir| {
            RocksEngine::open(RocksConfig {
                shared_block_cache: Some(cache.clone()),
                ..config(dir)
            })
            .expect("open")
        })
        .collect();
    for e in &engines {
        for i in 0..100u32 {
            put(e, format!("k{i}").as_bytes(), &[0u8; 100]);
        }
        e.flush().expect("flush");
        assert!(get(e, b"k1").is_some());
    }
    assert!(cache.usage() > 0);
}

fn docdb_like_prefix(key: &[u8]) -> &[u8] {
    // Everything up to and including the first 0x00 separator.
    match key.iter().position(|&b| b == 0) {
        Some(i) => key.get(..=i).unwrap_or(key),
        None => key,
    }
}

fn has_separator(key: &[u8]) -> bool {
    key.contains(&0)
}

/// An engine whose prefix extractor takes everything up to the first 0x00.
fn open_with_separator_prefix(dir: &tempfile::TempDir) -> RocksEngine {
    RocksEngine::open(RocksConfig {
        prefix_extractor: Some(PrefixExtractor::Custom(engine::KeyPrefix {
            name: "test.first-separator",
            transform: docdb_like_prefix,
            in_domain: has_separator,
        })),
        ..config(dir)
    })
    .expect("open")
}

#[test]
fn prefix_iteration_with_a_custom_extractor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open_with_separator_prefix(&dir);
    for doc in ["a", "b", "c"] {
        for col in 0..10u8 {
            put(&e, &[doc.as_bytes(), b"\0", &[col]].concat(), b"v");
        }
    }
    e.flush().expect("flush");
    let mut it = e
        .iterator(
            IterOptions::new()
                .lower(&b"b\0"[..])
                .upper(&b"b\x01"[..])
                .prefix_same_as_start(true),
        )
        .expect("iterator");
    it.seek(b"b\0");
    let mut count = 0;
    while it.valid().expect("status") {
        assert!(it.key().starts_with(b"b\0"));
        count += 1;
        it.next();
    }
    assert_eq!(count, 10);
    // A total-order scan still sees every key.
    let mut it = e.iterator(IterOptions::new()).expect("iterator");
    it.seek(b"a\0\x05");
    let mut count = 0;
    while it.valid().expect("status") {
        count += 1;
        it.next();
    }
    assert_eq!(count, 25);
}

/// Seeks the bloom filters turned away so far.
fn seeks_filtered(e: &RocksEngine) -> u64 {
    let stats = e.statistics().expect("statistics");
    stats
        .counters
        .iter()
        .filter(|(name, _)| name.ends_with("level.seek.filtered"))
        .map(|(_, n)| n)
        .sum()
}

#[test]
fn prefix_seek_mode_filters_only_seeks_in_the_domain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open_with_separator_prefix(&dir);
    // Two files, one document each.
    put(&e, b"a\0x", b"v");
    e.flush().expect("flush");
    put(&e, b"b\0y", b"v");
    e.flush().expect("flush");
    let mut it = e
        .iterator(IterOptions::new().prefix(PrefixMode::Seek))
        .expect("iterator");

    let before = seeks_filtered(&e);
    it.seek(b"c\0");
    assert!(!it.valid().expect("status"), "no document c");
    assert!(
        seeks_filtered(&e) > before,
        "a seek in the domain consults the filters: {:?}",
        e.statistics()
            .expect("statistics")
            .counters
            .iter()
            .filter(|(name, _)| name.contains("seek"))
            .collect::<Vec<_>>()
    );

    it.seek(b"b\0");
    assert_eq!(
        it.valid().expect("status").then(|| it.key()),
        Some(&b"b\0y"[..])
    );

    // Outside the domain (no separator) nothing is filtered and every key is seen.
    let before = seeks_filtered(&e);
    it.seek(b"a");
    let mut keys = Vec::new();
    while it.valid().expect("status") {
        keys.push(it.key().to_vec());
        it.next();
    }
    assert_eq!(keys, [b"a\0x".to_vec(), b"b\0y".to_vec()]);
    assert_eq!(seeks_filtered(&e), before);
}

/// Collects what `iter` yields from its first key on.
fn keys_from_start(iter: &mut impl EngineIterator) -> Vec<Vec<u8>> {
    iter.seek_to_first();
    let mut keys = Vec::new();
    while iter.valid().expect("status") {
        keys.push(iter.key().to_vec());
        iter.next();
    }
    keys
}

#[test]
fn a_reused_iterator_reads_the_latest_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = RocksEngine::open(config(&dir)).expect("open");
    put(&e, b"a", b"1");
    let mut first = e.iterator(IterOptions::new()).expect("iterator");
    assert_eq!(keys_from_start(&mut first), vec![b"a".to_vec()]);
    drop(first);
    // Written after the first iterator went back to the pool: the next one must see it,
    // across a flush (new files) as well as in the memtable.
    put(&e, b"b", b"2");
    let mut second = e.iterator(IterOptions::new()).expect("iterator");
    assert_eq!(
        keys_from_start(&mut second),
        vec![b"a".to_vec(), b"b".to_vec()]
    );
    drop(second);
    e.flush().expect("flush");
    put(&e, b"c", b"3");
    let mut third = e.iterator(IterOptions::new()).expect("iterator");
    assert_eq!(
        keys_from_start(&mut third),
        [b"a", b"b", b"c"].map(|k| k.to_vec())
    );
    // Bounded iterators are never kept, and an open one keeps its own view.
    let mut bounded = e
        .iterator(IterOptions::new().lower("b").upper("c"))
        .expect("iterator");
    put(&e, b"b2", b"4");
    assert_eq!(keys_from_start(&mut bounded), vec![b"b".to_vec()]);
    assert_eq!(
        keys_from_start(&mut third),
        [b"a", b"b", b"c"].map(|k| k.to_vec())
    );
}

/// RocksDB's versions of the file set still referenced (the current one included).
fn live_versions(e: &RocksEngine) -> u64 {
    e.property_int("rocksdb.num-live-versions")
        .expect("property")
        .expect("known property")
}

/// A new engine holding a flushed `a`, with an iterator of that version kept in its pool;
/// then `b` written.
fn engine_keeping_an_old_iterator() -> (tempfile::TempDir, RocksEngine) {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = RocksEngine::open(config(&dir)).expect("open");
    put(&e, b"a", b"1");
    e.flush().expect("flush");
    drop(e.iterator(IterOptions::new()).expect("iterator"));
    put(&e, b"b", b"2");
    (dir, e)
}

#[test]
fn kept_iterators_release_old_files_once_idle() {
    let (_dir, e) = engine_keeping_an_old_iterator();
    // A flush makes a new version; the kept iterator still pins the old one.
    e.flush().expect("flush");
    assert_eq!(live_versions(&e), 2, "the kept iterator pins its version");
    // Used since the last trim: kept.
    e.trim_idle();
    assert_eq!(live_versions(&e), 2);
    // Unused since the last trim: released.
    e.trim_idle();
    assert_eq!(live_versions(&e), 1, "an idle pool releases its iterators");
}

#[test]
fn a_full_compaction_releases_kept_iterators() {
    let (_dir, e) = engine_keeping_an_old_iterator();
    e.compact_all().expect("compact");
    // Without the release the kept iterator would pin the version of the first flush, and
    // with it the file the compaction replaced, until its next use.
    assert_eq!(
        live_versions(&e),
        1,
        "the compaction let the kept iterator go"
    );
    let mut iter = e.iterator(IterOptions::new()).expect("iterator");
    iter.seek_to_first();
    assert_eq!(iter.key(), b"a");
}

#[test]
fn a_kept_iterator_handed_out_narrowed_reads_the_latest_state() {
    let (_dir, e) = engine_keeping_an_old_iterator();
    put(&e, b"c", b"3");
    // The kept iterator was last used before `b` and `c`; handed out again, narrowed at
    // once, it must see them, and nothing outside its bounds.
    let mut iter = e
        .iterator_within(IterOptions::new(), Some(b"b"), Some(b"c"))
        .expect("iterator");
    assert_eq!(keys_from_start(&mut iter), vec![b"b".to_vec()]);
    // Narrower bounds than its own are refused, as a reset refuses them.
    let bounded = IterOptions::new().lower(b"b".to_vec());
    assert!(e.iterator_within(bounded, Some(b"a"), None).is_err());
}

/// Every file of `dir` with its length and modification time.
fn files(dir: &std::path::Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|entry| {
            let entry = entry.expect("entry");
            let meta = entry.metadata().expect("metadata");
            let name = entry.file_name().to_string_lossy().into_owned();
            (name, meta.len(), meta.modified().expect("mtime"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn read_only_open_reads_beside_a_writer_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let writer = RocksEngine::open(config(&dir)).expect("open");
    put(&writer, b"flushed", b"1");
    writer.flush().expect("flush");
    // Only in the writer's log and memtable.
    put(&writer, b"logged", b"2");
    let read_only = || {
        RocksEngine::open(RocksConfig {
            read_only: true,
            ..config(&dir)
        })
    };

    let names = || -> Vec<String> {
        files(&dir.path().join("db"))
            .into_iter()
            .map(|f| f.0)
            .collect()
    };
    let names_before = names();
    let reader = read_only().expect("a read-only open beside a writer");
    assert_eq!(get(&reader, b"flushed"), Some(b"1".to_vec()));
    assert_eq!(
        get(&reader, b"logged"),
        Some(b"2".to_vec()),
        "read from the log"
    );
    // The reader sees the database as it was when it opened.
    put(&writer, b"later", b"3");
    assert_eq!(get(&reader, b"later"), None);
    let mut batch = WriteBatch::new();
    batch.put(&b"refused"[..], &b"x"[..]);
    assert!(reader.write(&batch, WriteOptions::default()).is_err());
    assert!(reader.flush().is_err());
    drop(reader);
    assert_eq!(
        names(),
        names_before,
        "no file made, none renamed (the writer's LOG)"
    );
    assert_eq!(get(&writer, b"refused"), None);
    assert_eq!(get(&writer, b"later"), Some(b"3".to_vec()));
    let sequence = writer.last_sequence();
    drop(writer);

    // Opening and reading a closed database leaves every file as it was.
    let before = files(&dir.path().join("db"));
    let reader = read_only().expect("read-only open");
    assert_eq!(reader.last_sequence(), sequence);
    assert_eq!(get(&reader, b"later"), Some(b"3".to_vec()));
    drop(reader);
    assert_eq!(files(&dir.path().join("db")), before);

    let missing = RocksEngine::open(RocksConfig {
        read_only: true,
        ..RocksConfig::new(dir.path().join("missing"))
    });
    assert!(missing.is_err(), "no database, nothing created");
    assert!(!dir.path().join("missing").exists());
}
